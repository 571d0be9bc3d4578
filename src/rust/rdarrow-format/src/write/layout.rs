//! Serialized streams laid out before they are written. A stream is a list
//! of pieces whose sizes are known up front: encoded bytes (magic, header,
//! flags, lengths, short vectors), numeric payloads borrowed in place and
//! written big-endian (XDR), raw bytes, and runs of strings (one CHARSXP
//! each). Any byte range of the stream can then be rendered on its own, so
//! the writers here render fixed-size blocks on all cores: an uncompressed
//! file is filled at each block's offset, a compressed file gets each
//! block compressed on its own and joined into one member or stream
//! ([`crate::compression::blocks`]). The blocks are those of
//! [`crate::compression::parallel::ParallelCompressor`], so the file's bytes depend
//! neither on the thread count nor on which writer made them, and nothing
//! is held whole: each thread holds one block at a time.

use crate::base::cancel;
use crate::compression::Compression;
use crate::base::error::{Error, ErrorKind, Result};
use crate::io::atomic::{set_direct, write_block, AlignedBuf};
use crate::compression::blocks::{compress_piece, Joiner, CompressedBlock as Compressed, BLOCK_SIZE};
use arrow_buffer::{ArrowNativeType, ScalarBuffer};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Strings per run: the unit in which string sizes are measured and from
/// which a block that starts inside a character vector begins rendering.
const STRING_RUN: usize = 4096;

/// Vectors shorter than this are encoded at once rather than borrowed.
const SHORT_VECTOR: usize = 64;

/// The CHARSXP written for one element of a character vector.
#[derive(Debug, Clone, Copy)]
pub struct StringItem<'s> {
    /// The flags word (type 9 with the encoding bits R writes).
    pub flags: i32,
    /// The bytes, or `None` for `NA_character_` (written as length -1).
    pub bytes: Option<&'s [u8]>,
}

impl StringItem<'_> {
    /// Bytes this item takes in an XDR stream.
    #[inline]
    pub fn size(&self) -> u64 {
        8 + self.bytes.map_or(0, |b| b.len() as u64)
    }
}

/// The elements of a character vector, read from any thread.
pub trait StringSource: Sync + Send {
    /// The number of strings.
    fn count(&self) -> usize;
    /// String `i`.
    fn item(&self, i: usize) -> StringItem<'_>;
}

/// A payload borrowed for the life of the layout, or shared with the
/// tree that holds it (reference-counted: never copied).
pub enum Shared<'a, T: ArrowNativeType> {
    /// Borrowed from the tree.
    Borrowed(&'a [T]),
    /// Owned here.
    Owned(ScalarBuffer<T>),
}

impl<T: ArrowNativeType> std::ops::Deref for Shared<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Shared::Borrowed(v) => v,
            Shared::Owned(v) => v,
        }
    }
}

impl<'a, T: ArrowNativeType> From<&'a [T]> for Shared<'a, T> {
    fn from(v: &'a [T]) -> Self {
        Shared::Borrowed(v)
    }
}

impl<T: ArrowNativeType> From<ScalarBuffer<T>> for Shared<'_, T> {
    fn from(v: ScalarBuffer<T>) -> Self {
        Shared::Owned(v)
    }
}

/// One piece of a laid-out stream.
pub enum Piece<'a> {
    /// Bytes already encoded.
    Encoded(Vec<u8>),
    /// Raw bytes written as they are.
    Bytes(Shared<'a, u8>),
    /// 32-bit integers (integer, logical), written big-endian.
    Int32(Shared<'a, i32>),
    /// Doubles (and complex numbers as pairs), written big-endian.
    Float64(Shared<'a, f64>),
    /// Elements `start..end` of a character vector.
    Strings {
        /// Where the strings come from.
        source: Arc<dyn StringSource + 'a>,
        /// The first string.
        start: usize,
        /// The string after the last.
        end: usize,
    },
    /// The integers `first + i * step` for `i` in `0..len` (a compact
    /// sequence written as the vector it stands for).
    IntSequence {
        /// The first value.
        first: i32,
        /// The difference between neighbours.
        step: i32,
        /// How many.
        len: usize,
    },
    /// The doubles `first + i * step` for `i` in `0..len`.
    RealSequence {
        /// The first value.
        first: f64,
        /// The difference between neighbours.
        step: f64,
        /// How many.
        len: usize,
    },
}

impl Piece<'_> {
    /// Size in bytes, for all but strings (measured separately).
    fn fixed_size(&self) -> Option<u64> {
        match self {
            Piece::Encoded(v) => Some(v.len() as u64),
            Piece::Bytes(b) => Some(b.len() as u64),
            Piece::Int32(v) => Some(4 * v.len() as u64),
            Piece::Float64(v) => Some(8 * v.len() as u64),
            Piece::IntSequence { len, .. } => Some(4 * *len as u64),
            Piece::RealSequence { len, .. } => Some(8 * *len as u64),
            Piece::Strings { .. } => None,
        }
    }
}

/// A stream being laid out: pieces in order, measured by [`Layout::finish`].
#[derive(Default)]
pub struct Layout<'a> {
    pieces: Vec<Piece<'a>>,
    /// Start of each piece in the stream (after `finish`).
    starts: Vec<u64>,
    len: u64,
}

impl<'a> Layout<'a> {
    /// An empty layout.
    pub fn new() -> Self {
        Layout::default()
    }

    fn encoded(&mut self) -> &mut Vec<u8> {
        if !matches!(self.pieces.last(), Some(Piece::Encoded(_))) {
            self.pieces.push(Piece::Encoded(Vec::with_capacity(256)));
        }
        match self.pieces.last_mut() {
            Some(Piece::Encoded(v)) => v,
            _ => unreachable!("an encoded piece was just pushed"),
        }
    }

    /// Bytes as they are (copied).
    pub fn put(&mut self, b: &[u8]) {
        self.encoded().extend_from_slice(b);
    }

    /// One integer.
    pub fn int(&mut self, i: i32) {
        self.put(&i.to_be_bytes());
    }

    /// A numeric vector: encoded at once when short, else kept as it is.
    fn numbers<T: ArrowNativeType, const W: usize>(
        &mut self,
        v: Shared<'a, T>,
        encode: fn(T) -> [u8; W],
        piece: fn(Shared<'a, T>) -> Piece<'a>,
    ) {
        if v.len() < SHORT_VECTOR {
            let e = self.encoded();
            v.iter().for_each(|&x| e.extend_from_slice(&encode(x)));
        } else {
            self.pieces.push(piece(v));
        }
    }

    /// Integers, shared.
    pub fn ints(&mut self, v: impl Into<Shared<'a, i32>>) {
        self.numbers(v.into(), i32::to_be_bytes, Piece::Int32);
    }

    /// Doubles, shared.
    pub fn doubles(&mut self, v: impl Into<Shared<'a, f64>>) {
        self.numbers(v.into(), f64::to_be_bytes, Piece::Float64);
    }

    /// The integer sequence `first, first + step, ...` of `len` elements.
    pub fn int_sequence(&mut self, first: i32, step: i32, len: usize) {
        self.pieces.push(Piece::IntSequence { first, step, len });
    }

    /// The double sequence `first, first + step, ...` of `len` elements.
    pub fn real_sequence(&mut self, first: f64, step: f64, len: usize) {
        self.pieces.push(Piece::RealSequence { first, step, len });
    }

    /// Bytes, shared.
    pub fn bytes(&mut self, v: impl Into<Shared<'a, u8>>) {
        let v = v.into();
        if v.len() < SHORT_VECTOR * 8 {
            self.put(&v);
        } else {
            self.pieces.push(Piece::Bytes(v));
        }
    }

    /// One CHARSXP (flags, length, bytes), encoded at once.
    pub fn char_item(&mut self, c: StringItem<'_>) {
        let mut tmp = [0u8; 8];
        encode_char_head(c, &mut tmp);
        self.put(&tmp);
        if let Some(b) = c.bytes {
            self.put(b);
        }
    }

    /// Every element of a character vector, each as a CHARSXP.
    pub fn strings(&mut self, source: Arc<dyn StringSource + 'a>) {
        let n = source.count();
        if n < SHORT_VECTOR {
            for i in 0..n {
                self.char_item(source.item(i));
            }
            return;
        }
        let mut start = 0;
        while start < n {
            let end = (start + STRING_RUN).min(n);
            self.pieces.push(Piece::Strings {
                source: source.clone(),
                start,
                end,
            });
            start = end;
        }
    }

    /// Measure the pieces (string runs on `threads` threads); the layout
    /// can then be rendered.
    pub fn finish(mut self, threads: usize) -> Self {
        let runs: Vec<usize> = (0..self.pieces.len())
            .filter(|&i| self.pieces[i].fixed_size().is_none())
            .collect();
        let mut run_sizes = vec![0u64; runs.len()];
        let next = AtomicUsize::new(0);
        let pieces = &self.pieces;
        let chunk = 64;
        std::thread::scope(|scope| {
            let measure = || {
                let mut out = Vec::new();
                loop {
                    let k = next.fetch_add(chunk, Ordering::Relaxed);
                    if k >= runs.len() {
                        return out;
                    }
                    for (j, &p) in runs.iter().enumerate().skip(k).take(chunk) {
                        if let Piece::Strings { source, start, end } = &pieces[p] {
                            out.push((
                                j,
                                (*start..*end).map(|i| source.item(i).size()).sum::<u64>(),
                            ));
                        }
                    }
                }
            };
            let helpers: Vec<_> = (1..threads.max(1).min(runs.len().div_ceil(chunk).max(1)))
                .map(|_| scope.spawn(measure))
                .collect();
            let mine = measure();
            for (j, s) in helpers
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .chain(mine)
            {
                run_sizes[j] = s;
            }
        });
        let mut run_sizes = run_sizes.into_iter();
        self.starts = Vec::with_capacity(self.pieces.len());
        let mut at = 0u64;
        for p in &self.pieces {
            self.starts.push(at);
            at += p
                .fixed_size()
                .unwrap_or_else(|| run_sizes.next().unwrap_or(0));
        }
        self.len = at;
        self
    }

    /// Total size of the stream in bytes (after [`Layout::finish`]).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing has been laid out.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fill `out` with the stream's bytes from `offset` on.
    pub fn render(&self, offset: u64, out: &mut [u8]) {
        let mut at = offset;
        let mut filled = 0;
        let mut p = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        while filled < out.len() && p < self.pieces.len() {
            let skip = at - self.starts[p];
            let n = render_piece(&self.pieces[p], skip, &mut out[filled..]);
            filled += n;
            at += n as u64;
            p += 1;
        }
        debug_assert_eq!(filled, out.len(), "render past the end of the stream");
    }

    /// The whole stream in memory (for tests and small objects).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len as usize];
        self.render(0, &mut v);
        v
    }
}

#[inline]
fn encode_char_head(c: StringItem<'_>, out: &mut [u8; 8]) {
    out[..4].copy_from_slice(&c.flags.to_be_bytes());
    let len = c.bytes.map_or(-1, |b| b.len() as i32);
    out[4..].copy_from_slice(&len.to_be_bytes());
}

/// Write the bytes of `count` fixed-width elements (element `i` encoded by
/// `encode(i)`) from byte `skip` on into `out`; returns the bytes written.
fn render_elements<const W: usize>(
    count: usize,
    skip: u64,
    out: &mut [u8],
    encode: impl Fn(usize) -> [u8; W],
) -> usize {
    let total = (count * W) as u64;
    let n = ((total - skip) as usize).min(out.len());
    let (mut i, mut done) = ((skip / W as u64) as usize, 0usize);
    let lead = (skip % W as u64) as usize;
    if lead != 0 {
        let e = encode(i);
        let k = (W - lead).min(n);
        out[..k].copy_from_slice(&e[lead..lead + k]);
        done = k;
        i += 1;
    }
    let whole = (n - done) / W;
    for (k, dst) in out[done..done + whole * W].chunks_exact_mut(W).enumerate() {
        dst.copy_from_slice(&encode(i + k));
    }
    done += whole * W;
    if done < n {
        let e = encode(i + whole);
        out[done..n].copy_from_slice(&e[..n - done]);
        done = n;
    }
    done
}

/// Render `piece` from byte `skip` on into `out`; returns the bytes written
/// (all of `out`, or the rest of the piece when shorter).
fn render_piece(piece: &Piece<'_>, skip: u64, out: &mut [u8]) -> usize {
    match piece {
        Piece::Encoded(v) => copy_from(v, skip, out),
        Piece::Bytes(v) => copy_from(v, skip, out),
        Piece::Int32(v) => render_elements::<4>(v.len(), skip, out, |i| v[i].to_be_bytes()),
        Piece::Float64(v) => {
            render_elements::<8>(v.len(), skip, out, |i| v[i].to_bits().to_be_bytes())
        }
        Piece::IntSequence { first, step, len } => render_elements::<4>(*len, skip, out, |i| {
            first
                .wrapping_add((i as i32).wrapping_mul(*step))
                .to_be_bytes()
        }),
        // as R expands a compact double sequence: first + i * step
        Piece::RealSequence { first, step, len } => render_elements::<8>(*len, skip, out, |i| {
            (first + i as f64 * step).to_bits().to_be_bytes()
        }),
        Piece::Strings { source, start, end } => {
            let mut pos = 0u64;
            let mut done = 0usize;
            for i in *start..*end {
                if done == out.len() {
                    break;
                }
                let c = source.item(i);
                let size = c.size();
                if pos + size <= skip {
                    pos += size;
                    continue;
                }
                let from = skip.saturating_sub(pos) as usize;
                let mut head = [0u8; 8];
                encode_char_head(c, &mut head);
                let body = c.bytes.unwrap_or(&[]);
                if from == 0 && out.len() - done >= size as usize {
                    out[done..done + 8].copy_from_slice(&head);
                    out[done + 8..done + 8 + body.len()].copy_from_slice(body);
                    done += size as usize;
                } else {
                    // the item straddles the start or the end of `out`
                    let room = out.len() - done;
                    for b in head.iter().chain(body).skip(from).take(room) {
                        out[done] = *b;
                        done += 1;
                    }
                }
                pos += size;
            }
            done
        }
    }
}

fn copy_from(v: &[u8], skip: u64, out: &mut [u8]) -> usize {
    let rest = &v[skip as usize..];
    let n = rest.len().min(out.len());
    out[..n].copy_from_slice(&rest[..n]);
    n
}

/// Write `layout` to `path` atomically (see [`crate::io::atomic::atomic_write`]):
/// uncompressed, its blocks are rendered on `threads` threads straight into
/// the file at their offsets; compressed, each block is rendered and
/// compressed on a worker and the members are written in order.
/// `on_progress` is called on the calling thread with the bytes done so
/// far, about every 50 ms; the work stops early on an interrupt.
pub fn write_layout_file(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    layout: &Layout<'_>,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
    on_progress: &mut dyn FnMut(u64),
) -> Result<()> {
    compression.check_writable()?;
    let threads = threads.max(1);
    crate::io::atomic::atomic_write(path, storage, |f| {
        if compression == Compression::None {
            write_in_place(f.file(), layout, threads, on_progress)?;
            f.send_file().map_err(|e| Error::io(&e, "cannot write"))
        } else {
            write_compressed(f, layout, compression, level, threads, on_progress)
        }
    })
}

fn interrupted_error() -> Error {
    Error::new(ErrorKind::Interrupted, "interrupted by the user")
}

fn block_count(layout: &Layout<'_>) -> u64 {
    layout.len().div_ceil(BLOCK_SIZE as u64)
}

fn block_range(layout: &Layout<'_>, idx: u64) -> (u64, usize) {
    let start = idx * BLOCK_SIZE as u64;
    (
        start,
        (layout.len() - start).min(BLOCK_SIZE as u64) as usize,
    )
}

/// Uncompressed: workers render blocks and write each at its offset, a
/// file of a block or more around the page cache (see [`crate::io::atomic`];
/// the last block padded, and the file cut to its length after).
fn write_in_place(
    file: &std::fs::File,
    layout: &Layout<'_>,
    threads: usize,
    on_progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let blocks = block_count(layout);
    let next = AtomicU64::new(0);
    let done_bytes = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    let fail = |e: Error| {
        stop.store(true, Ordering::SeqCst);
        let mut f = failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(e);
    };
    // reserve the space at once: fewer allocation rounds for the filesystem
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // advisory; a filesystem without fallocate still gets the writes
        // SAFETY: a valid descriptor and a range from 0.
        unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, layout.len() as libc::off_t) };
    }
    let direct = AtomicBool::new(layout.len() >= BLOCK_SIZE as u64 && set_direct(file, true));
    let main = std::thread::current();
    let n_workers = threads.min(blocks.max(1) as usize);
    // workers still writing (the wake-up at a worker's end comes before
    // its thread has ended, which `is_finished()` would miss)
    let running = AtomicUsize::new(n_workers);
    std::thread::scope(|scope| {
        let work = || {
            let mut buf = AlignedBuf::new(BLOCK_SIZE.min(layout.len() as usize));
            loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if cancel::interrupted() {
                    fail(interrupted_error());
                    break;
                }
                let idx = next.fetch_add(1, Ordering::Relaxed);
                if idx >= blocks {
                    break;
                }
                let (start, len) = block_range(layout, idx);
                let out = buf.as_mut_slice();
                layout.render(start, &mut out[..len]);
                if let Err(e) = write_block(file, out, len, start, &direct) {
                    fail(Error::io(&e, "cannot write"));
                    break;
                }
                done_bytes.fetch_add(len as u64, Ordering::Relaxed);
                cancel::advance(len as u64);
            }
            running.fetch_sub(1, Ordering::SeqCst);
            main.unpark();
        };
        // one block (a small object): written here, no thread started
        let workers: Vec<_> = if blocks <= 1 {
            work();
            Vec::new()
        } else {
            (0..n_workers).map(|_| scope.spawn(work)).collect()
        };
        while running.load(Ordering::SeqCst) > 0 && !workers.iter().all(|w| w.is_finished()) {
            std::thread::park_timeout(Duration::from_millis(20));
            on_progress(done_bytes.load(Ordering::Relaxed));
        }
        for w in workers {
            if w.join().is_err() {
                fail(Error::new(ErrorKind::Io, "a writing thread failed"));
            }
        }
    });
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if direct.load(Ordering::Relaxed) {
        set_direct(file, false);
    }
    // the padding of the last direct block, and the size fallocate set
    file.set_len(layout.len())
        .map_err(|e| Error::io(&e, "cannot write"))
}

/// Blocks rendered and compressed by workers, handed to the writer in order.
struct Pipeline {
    /// Next block a worker may take.
    next_take: u64,
    /// Next block the writer needs.
    next_write: u64,
    finished: BTreeMap<u64, Compressed>,
    failure: Option<Error>,
}

/// Compressed: workers render and compress blocks (at most a window of
/// blocks ahead of the writer); the calling thread joins them in order
/// ([`Joiner`]). The pieces are the full blocks, then the rest (possibly
/// empty), which ends the stream: as [`crate::compression::parallel::ParallelCompressor`]
/// cuts them. A file that can be written again at its start gets the
/// gzip index in its header.
fn write_compressed(
    sink: &mut crate::io::atomic::WritebackFile<'_>,
    layout: &Layout<'_>,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
    on_progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let full = layout.len() / BLOCK_SIZE as u64;
    let pieces = full + 1;
    let window = 2 * threads as u64 + 1;
    let state = Mutex::new(Pipeline {
        next_take: 0,
        next_write: 0,
        finished: BTreeMap::new(),
        failure: None,
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    let fail = |e: Error| {
        let mut s = lock();
        s.failure.get_or_insert(e);
        changed.notify_all();
    };
    let mut joiner = Joiner::new(compression, level, sink.can_patch());
    let result = std::thread::scope(|scope| {
        let work = || {
            let mut buf = Vec::new();
            loop {
                let idx = {
                    let mut s = lock();
                    while s.failure.is_none()
                        && s.next_take < pieces
                        && s.next_take >= s.next_write + window
                    {
                        s = changed.wait(s).unwrap_or_else(|p| p.into_inner());
                    }
                    if s.failure.is_some() || s.next_take >= pieces {
                        return;
                    }
                    s.next_take += 1;
                    s.next_take - 1
                };
                let (start, len) = block_range(layout, idx);
                buf.resize(len, 0);
                layout.render(start, &mut buf);
                match compress_piece(&buf, compression, level, idx == full) {
                    Ok(piece) => {
                        let mut s = lock();
                        s.finished.insert(idx, piece);
                        changed.notify_all();
                    }
                    Err(e) => return fail(Error::io(&e, "cannot compress")),
                }
            }
        };
        // one piece (a small object): made here, no thread started
        let workers: Vec<_> = if pieces <= 1 {
            work();
            Vec::new()
        } else {
            (0..threads.min(pieces as usize))
                .map(|_| scope.spawn(work))
                .collect()
        };
        let mut written = 0u64;
        let out = (|| -> Result<()> {
            for idx in 0..pieces {
                let piece = {
                    let mut s = lock();
                    loop {
                        if let Some(e) = s.failure.take() {
                            return Err(e);
                        }
                        if let Some(m) = s.finished.remove(&idx) {
                            s.next_write = idx + 1;
                            changed.notify_all();
                            break m;
                        }
                        if cancel::interrupted() {
                            return Err(interrupted_error());
                        }
                        s = changed
                            .wait_timeout(s, Duration::from_millis(20))
                            .map(|(g, _)| g)
                            .unwrap_or_else(|p| p.into_inner().0);
                        drop(s);
                        on_progress(written);
                        s = lock();
                    }
                };
                joiner
                    .push(sink, piece, idx == full)
                    .map_err(|e| Error::io(&e, "cannot write"))?;
                let len = block_range(layout, idx).1 as u64;
                written += len;
                cancel::advance(len);
                on_progress(written);
            }
            Ok(())
        })();
        if let Err(e) = &out {
            // stop the workers: they see the failure at their next block
            let mut s = lock();
            s.failure.get_or_insert(e.clone());
            changed.notify_all();
        }
        for w in workers {
            let _ = w.join();
        }
        out
    });
    result?;
    let patch = joiner
        .finish(sink)
        .map_err(|e| Error::io(&e, "cannot write"))?;
    sink.flush().map_err(|e| Error::io(&e, "cannot write"))?;
    if let Some(p) = patch {
        sink.patch(&p).map_err(|e| Error::io(&e, "cannot write"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::atomic::DIRECT_ALIGN;
    use std::io::Read;

    struct Words(Vec<Option<Vec<u8>>>);

    impl StringSource for Words {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn item(&self, i: usize) -> StringItem<'_> {
            StringItem {
                flags: 0x0004_0009,
                bytes: self.0[i].as_deref(),
            }
        }
    }

    /// The stream as a sequential writer would produce it.
    fn reference(ints: &[i32], doubles: &[f64], words: &Words, raw: &[u8]) -> Vec<u8> {
        let mut v = b"RDX3\nX\n".to_vec();
        v.extend_from_slice(&(ints.len() as i32).to_be_bytes());
        ints.iter()
            .for_each(|x| v.extend_from_slice(&x.to_be_bytes()));
        doubles
            .iter()
            .for_each(|x| v.extend_from_slice(&x.to_bits().to_be_bytes()));
        for w in &words.0 {
            v.extend_from_slice(&0x0004_0009i32.to_be_bytes());
            match w {
                None => v.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(b) => {
                    v.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    v.extend_from_slice(b);
                }
            }
        }
        v.extend_from_slice(raw);
        (0..ints.len() as i32).for_each(|i| v.extend_from_slice(&(7 - 2 * i).to_be_bytes()));
        (0..ints.len())
            .for_each(|i| v.extend_from_slice(&(0.5 + i as f64).to_bits().to_be_bytes()));
        v.extend_from_slice(&(crate::tree::sxp::NILVALUE as i32).to_be_bytes());
        v
    }

    fn sample(n: usize) -> (Vec<i32>, Vec<f64>, Arc<Words>, Vec<u8>) {
        let ints: Vec<i32> = (0..n as i32)
            .map(|i| i.wrapping_mul(2_654_435_761u32 as i32))
            .collect();
        let mut doubles: Vec<f64> = (0..n).map(|i| i as f64 / 7.0 - 3.0).collect();
        if n > 3 {
            doubles[3] = crate::tree::na::real();
        }
        let words = Words(
            (0..n)
                .map(|i| {
                    if i % 17 == 5 {
                        None
                    } else {
                        Some(format!("w{}{}", i, "é".repeat(i % 5)).into_bytes())
                    }
                })
                .collect(),
        );
        let raw: Vec<u8> = (0..n).map(|i| (i * 31) as u8).collect();
        (ints, doubles, Arc::new(words), raw)
    }

    fn laid_out<'a>(
        ints: &'a [i32],
        doubles: &'a [f64],
        words: &Arc<Words>,
        raw: &'a [u8],
    ) -> Layout<'a> {
        let mut l = Layout::new();
        l.put(b"RDX3\nX\n");
        crate::write::Emit::length(&mut l, ints.len() as u64).unwrap();
        l.ints(ints);
        l.doubles(doubles);
        l.strings(words.clone());
        l.bytes(raw);
        l.int_sequence(7, -2, ints.len());
        l.real_sequence(0.5, 1.0, ints.len());
        l.int(crate::tree::sxp::NILVALUE as i32);
        l.finish(2)
    }

    #[test]
    fn any_range_renders_as_the_sequential_stream() {
        for n in [0usize, 1, 63, 64, 5000, 20_011] {
            let (ints, doubles, words, raw) = sample(n);
            let expected = reference(&ints, &doubles, &words, &raw);
            let layout = laid_out(&ints, &doubles, &words, &raw);
            assert_eq!(layout.len(), expected.len() as u64);
            assert_eq!(layout.to_vec(), expected);
            // ranges starting and ending at every kind of boundary
            let len = expected.len();
            let mut cuts: Vec<usize> = (0..len).step_by(997).collect();
            cuts.extend([1, 2, 3, 5, 6, 7, 9, 11, len.saturating_sub(1), len]);
            for &a in &cuts {
                for w in [1usize, 3, 7, 8, 13, 4099, 65_537] {
                    let b = (a + w).min(len);
                    if a >= b {
                        continue;
                    }
                    let mut out = vec![0u8; b - a];
                    layout.render(a as u64, &mut out);
                    assert_eq!(out, &expected[a..b], "n={n} range {a}..{b}");
                }
            }
        }
    }

    #[test]
    fn large_uncompressed_files_are_written_exactly() {
        // large enough for direct I/O, with a last block that is not aligned
        let dir =
            std::env::temp_dir().join(format!("rdarrow-layout-direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ints: Vec<i32> = (0..(3 * BLOCK_SIZE / 4 + 12_345))
            .map(|i| i as i32 ^ 0x5a5a)
            .collect();
        let (_, doubles, words, raw) = sample(1001);
        let expected = reference(&ints, &doubles, &words, &raw);
        assert!(expected.len() > 3 * BLOCK_SIZE && expected.len() % DIRECT_ALIGN != 0);
        let layout = laid_out(&ints, &doubles, &words, &raw);
        let path = dir.join("big");
        std::fs::write(&path, b"old").unwrap();
        for threads in [1, 2] {
            write_layout_file(
                &path,
                &Default::default(),
                &layout,
                Compression::None,
                None,
                threads,
                &mut |_| {},
            )
            .unwrap();
            assert!(
                std::fs::read(&path).unwrap() == expected,
                "{threads} threads"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn written_files_match_the_streaming_compressor_for_any_thread_count() {
        let dir = std::env::temp_dir().join(format!("rdarrow-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // more than two blocks, with a string run across a block boundary
        let (ints, doubles, words, raw) = sample(700_000);
        let expected = reference(&ints, &doubles, &words, &raw);
        assert!(expected.len() > 2 * BLOCK_SIZE);
        let layout = laid_out(&ints, &doubles, &words, &raw);
        for kind in [
            Compression::None,
            Compression::Gzip,
            Compression::Bzip2,
            Compression::Xz,
            Compression::Zstd,
        ] {
            // a file gets the gzip index in its header, as the streaming
            // writer's patch puts it there
            let mut streamed =
                crate::compression::parallel::ParallelCompressor::indexed(Vec::new(), kind, Some(1), 2).unwrap();
            streamed.write_all(&expected).unwrap();
            let (mut streamed, patch) = streamed.finish_indexed().unwrap();
            assert_eq!(patch.is_some(), kind == Compression::Gzip);
            if let Some(p) = patch {
                streamed[..p.bytes.len()].copy_from_slice(&p.bytes);
            }
            for threads in [1, 2, 3] {
                let path = dir.join(format!("out-{kind:?}-{threads}"));
                let mut ticks = 0;
                write_layout_file(
                    &path,
                    &Default::default(),
                    &layout,
                    kind,
                    Some(1),
                    threads,
                    &mut |_| ticks += 1,
                )
                .unwrap();
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    bytes == streamed,
                    "{kind:?} with {threads} threads differs from the streaming writer"
                );
                if kind == Compression::Gzip {
                    // one member, read by a single-member reader, and on
                    // several cores through its index
                    let mut back = Vec::new();
                    flate2::read::GzDecoder::new(&bytes[..])
                        .read_to_end(&mut back)
                        .unwrap();
                    assert!(back == expected);
                    let f = std::fs::File::open(&path).unwrap();
                    let mut r = crate::compression::gzip::IndexedGzipReader::open(f, bytes.len() as u64, 2)
                        .expect("an index");
                    let mut back = Vec::new();
                    r.read_to_end(&mut back).unwrap();
                    assert!(back == expected);
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
