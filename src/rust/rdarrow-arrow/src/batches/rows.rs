//! Tables handed over row group by row group: a [`ColumnSource`] gives
//! any column's rows `[start, start + len)` on any thread, so that writers
//! (Parquet, Arrow IPC) hold one row group of every column, never the
//! table, and can convert and encode the columns of a row group in
//! parallel. An [`ArrowTable`] already in memory is one source; a data
//! frame whose payloads stay in its file ([`crate::to_arrow::streamed::StreamedTable`])
//! is another.

use crate::ArrowTable;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::SchemaRef;

/// A table whose columns can be read by row range, from several threads.
pub trait ColumnSource: Sync {
    fn schema(&self) -> SchemaRef;
    fn num_rows(&self) -> usize;
    /// Rows `[start, start + len)` of column `j`.
    fn column(&self, j: usize, start: usize, len: usize) -> Result<ArrayRef>;
    /// What the user should be told about the conversion.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Where column `j`'s payload starts in its R data stream, for a
    /// column read back from there (see [`rdarrow_format::Column::store`]).
    fn payload_start(&self, _j: usize) -> Option<u64> {
        None
    }
}

impl ColumnSource for ArrowTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn num_rows(&self) -> usize {
        ArrowTable::num_rows(self)
    }
    fn column(&self, j: usize, start: usize, len: usize) -> Result<ArrayRef> {
        let mut parts: Vec<ArrayRef> = Vec::new();
        let mut at = 0;
        for b in &self.batches {
            let n = b.num_rows();
            let (lo, hi) = (start.max(at), (start + len).min(at + n));
            if lo < hi {
                parts.push(b.column(j).slice(lo - at, hi - lo));
            }
            at += n;
        }
        match parts.len() {
            // no rows, but what the column's type does not say (a
            // dictionary's values) as the column has it
            0 => Ok(match self.batches.first() {
                Some(b) => b.column(j).slice(0, 0),
                None => arrow_array::new_empty_array(self.schema.field(j).data_type()),
            }),
            1 => Ok(parts.pop().expect("one part")),
            _ => {
                let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
                arrow_select::concat::concat(&refs)
                    .map_err(|e| Error::corrupt(format!("cannot assemble a column: {e}")))
            }
        }
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// Rows per row group when neither the caller nor the memory budget says
/// otherwise (arrow's own writers' default).
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;

/// The row groups of `rows` rows at most: `(start, len)`.
pub fn row_groups(total: usize, rows: usize) -> Vec<(usize, usize)> {
    let rows = rows.max(1);
    if total == 0 {
        return vec![(0, 0)];
    }
    (0..total)
        .step_by(rows)
        .map(|s| (s, rows.min(total - s)))
        .collect()
}

/// Run `f(j)` for every column `j < n` on up to `threads` threads, the
/// results in column order; the first error wins and stops the others.
pub fn per_column<T: Send>(
    n: usize,
    threads: usize,
    f: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    in_parallel((0..n).collect(), threads, |_| 0, |j, _| f(j))
}

/// Run `f(k, item)` for every item on up to `threads` threads, the results
/// in the items' order. The costliest items (by `cost`; ties in order)
/// start first, so that the threads finish together; each item is
/// dropped as soon as its work ends. An error stops the work not yet
/// started; the first error in the items' order is returned.
pub fn in_parallel<I: Send, T: Send>(
    items: Vec<I>,
    threads: usize,
    cost: impl Fn(&I) -> u64,
    f: impl Fn(usize, I) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let n = items.len();
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return items
            .into_iter()
            .enumerate()
            .map(|(k, item)| rdarrow_format::base::cancel::check().and_then(|_| f(k, item)))
            .collect();
    }
    // popped from the end: cheapest first in the queue, later items
    // before earlier ones of the same cost
    let mut queue: Vec<(usize, I)> = items.into_iter().enumerate().collect();
    queue.reverse();
    queue.sort_by_key(|(_, item)| cost(item));
    let queue = std::sync::Mutex::new(queue);
    let failed = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<std::sync::Mutex<Option<Result<T>>>> =
        (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| loop {
                    if failed.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let Some((k, item)) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop()
                    else {
                        break;
                    };
                    let r = rdarrow_format::base::cancel::check().and_then(|_| f(k, item));
                    if r.is_err() {
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                })
            })
            .collect();
        // joined here, so each thread has fully ended (its thread-local
        // destructors run) before the work returns
        for w in workers {
            let _ = w.join();
        }
    });
    let mut out = Vec::with_capacity(n);
    let mut first_err = None;
    for r in results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(x)) => out.push(x),
            Some(Err(e)) => {
                first_err.get_or_insert(e);
            }
            None => {}
        }
    }
    match first_err {
        Some(e) => Err(e),
        None if out.len() == n => Ok(out),
        None => Err(Error::internal("a column was not converted")),
    }
}

/// Row groups a [`by_row_group`] works on at once: the one being handed
/// over and the next.
pub const GROUPS_IN_FLIGHT: usize = 2;

/// Work on every cell `(g, j)` of `groups` row groups by `cols` columns on
/// up to `threads` threads, and hand each row group's results, in column
/// order, to `take(g, cells)` on the calling thread, row group after row
/// group. While a row group is handed over (written), the threads go on
/// with the next: there is no pause between row groups, and at most
/// [`GROUPS_IN_FLIGHT`] row groups are worked on or waiting at a time.
/// `open(g)` makes what the cells of row group `g` share (say their column
/// writers), on the calling thread, before any of its cells starts. The
/// first error stops the work not yet started and is returned.
pub fn by_row_group<P: Sync + Send, T: Send>(
    groups: usize,
    cols: usize,
    threads: usize,
    mut open: impl FnMut(usize) -> Result<P>,
    work: impl Fn(usize, usize, &P) -> Result<T> + Sync,
    mut take: impl FnMut(usize, Vec<T>) -> Result<()>,
) -> Result<()> {
    use std::sync::{Arc, Condvar, Mutex};
    const W: usize = GROUPS_IN_FLIGHT;
    struct State<P, T> {
        /// The next cell to start, as `g * cols + j`.
        next: usize,
        /// Row groups opened so far.
        opened: usize,
        /// For each row group in flight (at `g % W`): what it shares,
        /// its cells' results and how many are in.
        shared: Vec<Option<Arc<P>>>,
        cells: Vec<Option<T>>,
        done: Vec<usize>,
        error: Option<Error>,
        stop: bool,
    }
    if groups == 0 || cols == 0 {
        for g in 0..groups {
            take(g, Vec::new())?;
        }
        return Ok(());
    }
    let threads = threads.clamp(1, groups * cols);
    let state = Mutex::new(State::<P, T> {
        next: 0,
        opened: 0,
        shared: (0..W).map(|_| None).collect(),
        cells: (0..W * cols).map(|_| None).collect(),
        done: vec![0; W],
        error: None,
        stop: false,
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    // open the first row groups before any thread starts
    {
        let mut s = lock();
        while s.opened < groups.min(W) {
            let g = s.opened;
            s.shared[g % W] = Some(Arc::new(open(g)?));
            s.opened += 1;
        }
    }
    let worker = || loop {
        let (g, j, shared) = {
            let mut s = lock();
            loop {
                if s.stop || s.next >= groups * cols {
                    return;
                }
                if s.next / cols < s.opened {
                    break;
                }
                s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            let (g, j) = (s.next / cols, s.next % cols);
            s.next += 1;
            let shared = s.shared[g % W].clone().expect("an opened row group");
            (g, j, shared)
        };
        let r = rdarrow_format::base::cancel::check().and_then(|_| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(g, j, &shared)))
                .unwrap_or_else(|_| Err(Error::internal("a row group's column panicked")))
        });
        drop(shared);
        let mut s = lock();
        match r {
            Ok(v) => {
                s.cells[(g % W) * cols + j] = Some(v);
                s.done[g % W] += 1;
            }
            Err(e) => {
                s.error.get_or_insert(e);
                s.stop = true;
            }
        }
        changed.notify_all();
    };
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
        let mut result = Ok(());
        for g in 0..groups {
            let cells = {
                let mut s = lock();
                while !s.stop && s.done[g % W] < cols {
                    s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                if s.stop {
                    result = Err(s
                        .error
                        .take()
                        .unwrap_or_else(|| Error::internal("the row groups stopped")));
                    break;
                }
                s.done[g % W] = 0;
                s.shared[g % W] = None;
                let at = (g % W) * cols;
                let cells: Vec<T> = s.cells[at..at + cols]
                    .iter_mut()
                    .map(|c| c.take().expect("a finished cell"))
                    .collect();
                cells
            };
            // handed over while the threads go on with the next row
            // group; then the one after it opens
            let next = g + W;
            let r = take(g, cells).and_then(|_| (next < groups).then(|| open(next)).transpose());
            let mut s = lock();
            match r {
                Ok(p) => {
                    if let Some(p) = p {
                        s.shared[next % W] = Some(Arc::new(p));
                        s.opened += 1;
                    }
                }
                Err(e) => {
                    s.stop = true;
                    result = Err(e);
                }
            }
            changed.notify_all();
            if result.is_err() {
                break;
            }
        }
        // joined here, so each thread has fully ended before the work
        // returns
        for w in workers {
            let _ = w.join();
        }
        result
    })
}

/// One record batch of rows `[start, start + len)`, its columns made on
/// up to `threads` threads.
pub fn batch_of(
    src: &dyn ColumnSource,
    start: usize,
    len: usize,
    threads: usize,
) -> Result<RecordBatch> {
    let schema = src.schema();
    let ncols = schema.fields().len();
    // a small batch on this thread: starting threads costs more
    let threads = if len.saturating_mul(ncols) < PARALLEL_MIN_CELLS {
        1
    } else {
        threads
    };
    let cols = per_column(ncols, threads, |j| src.column(j, start, len))?;
    assemble(schema, cols, len)
}

/// Work below this many values (rows times columns, or payload bytes) is
/// done on the calling thread: starting threads would cost more than it.
pub const PARALLEL_MIN_CELLS: usize = 1 << 16;

/// The record batch of `len` rows of these columns.
pub fn assemble(schema: SchemaRef, cols: Vec<ArrayRef>, len: usize) -> Result<RecordBatch> {
    RecordBatch::try_new_with_options(
        schema,
        cols,
        &RecordBatchOptions::new().with_row_count(Some(len)),
    )
    .map_err(|e| Error::corrupt(format!("cannot assemble the record batch: {e}")))
}

/// A source read as record batches of `rows` rows, each made when asked
/// for (an Arrow `RecordBatchReader`): memory holds the batch being read.
pub struct RowGroupReader {
    source: Box<dyn ColumnSource + Send>,
    groups: std::vec::IntoIter<(usize, usize)>,
    threads: usize,
}

impl RowGroupReader {
    pub fn new(source: Box<dyn ColumnSource + Send>, rows: usize, threads: usize) -> Self {
        let groups = row_groups(source.num_rows(), rows).into_iter();
        RowGroupReader {
            source,
            groups,
            threads,
        }
    }
}

impl Iterator for RowGroupReader {
    type Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        let (start, len) = self.groups.next()?;
        Some(
            batch_of(self.source.as_ref(), start, len, self.threads)
                .map_err(|e| arrow_schema::ArrowError::ExternalError(Box::new(e))),
        )
    }
}

impl arrow_array::RecordBatchReader for RowGroupReader {
    fn schema(&self) -> SchemaRef {
        self.source.schema()
    }
}

/// The machine's cores (asked once per process).
pub fn all_cores() -> usize {
    rdarrow_format::base::limits::cores()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    #[test]
    fn row_groups_are_handed_over_in_order_with_two_in_flight() {
        let (groups, cols) = (7, 5);
        let started = Mutex::new(Vec::new());
        let taken = AtomicUsize::new(0);
        let mut seen = Vec::new();
        by_row_group(
            groups,
            cols,
            3,
            |g| Ok(g * 100),
            |g, j, shared: &usize| {
                assert_eq!(*shared, g * 100);
                // never more than two row groups ahead of the handing over
                assert!(g < taken.load(Ordering::SeqCst) + GROUPS_IN_FLIGHT);
                started.lock().unwrap().push((g, j));
                Ok(g * cols + j)
            },
            |g, cells| {
                assert_eq!(cells, (0..cols).map(|j| g * cols + j).collect::<Vec<_>>());
                seen.push(g);
                taken.store(g + 1, Ordering::SeqCst);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen, (0..groups).collect::<Vec<_>>());
        assert_eq!(started.into_inner().unwrap().len(), groups * cols);
    }

    #[test]
    fn the_first_error_stops_the_row_groups() {
        let done = AtomicUsize::new(0);
        let err = by_row_group(
            50,
            4,
            2,
            |_| Ok(()),
            |g, j, _| {
                done.fetch_add(1, Ordering::SeqCst);
                if g == 3 && j == 2 {
                    Err(Error::corrupt("bad cell"))
                } else {
                    Ok(())
                }
            },
            |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(err.to_string().contains("bad cell"), "{err}");
        assert!(done.load(Ordering::SeqCst) < 50 * 4);
        // an error handing over stops the work too
        let err = by_row_group(
            50,
            4,
            2,
            |_| Ok(()),
            |_, _, _| Ok(()),
            |g, _| {
                if g == 1 {
                    Err(Error::corrupt("disk full"))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
    }
}
