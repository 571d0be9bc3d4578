//! Tables handed over row group by row group: a [`ColumnSource`] gives
//! any column's rows `[start, start + len)` on any thread, so that writers
//! (Parquet, Arrow IPC) hold one row group of every column, never the
//! table, and can convert and encode the columns of a row group in
//! parallel. An [`ArrowTable`] already in memory is one source; a data
//! frame whose payloads stay in its file ([`super::to_arrow::StreamedTable`])
//! is another.

use super::ArrowTable;
use crate::error::{Error, Result};
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
            0 => Ok(arrow_array::new_empty_array(
                self.schema.field(j).data_type(),
            )),
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
            .map(|(k, item)| crate::cancel::check().and_then(|_| f(k, item)))
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
                    let r = crate::cancel::check().and_then(|_| f(k, item));
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

/// One record batch of rows `[start, start + len)`, its columns made on
/// up to `threads` threads.
pub fn batch_of(
    src: &dyn ColumnSource,
    start: usize,
    len: usize,
    threads: usize,
) -> Result<RecordBatch> {
    let schema = src.schema();
    let cols = per_column(schema.fields().len(), threads, |j| {
        src.column(j, start, len)
    })?;
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

/// The machine's cores.
pub fn all_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}
