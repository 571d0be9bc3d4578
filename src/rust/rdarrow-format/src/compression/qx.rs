//! The container of qs2's two formats, read and written side by side:
//! `qs2::qs_save()` (`.qs2`, whose payload is R's own serialization) and
//! `qs2::qd_save()` (`.qdata`, whose payload is qs2's own encoding,
//! `read::qdata`). A 24-byte header (magic, format version, compression
//! 1 = zstd, endianness 1 big / 2 little, shuffle flag, 8 reserved bytes,
//! the XXH3-64 hash of every byte after the header, 0 when not stored),
//! then blocks: a `u32` whose bit 31 says the block was byte-shuffled
//! (element size 8) before compression and whose other bits give the
//! length of the one zstd frame that follows, of at most 1 MiB
//! uncompressed. No trailer.
//!
//! [`QxReader`] reads the frames in order on one thread, hashing them as
//! they pass, and decompresses them on every core, undoing the shuffle as
//! each block is made; a hash that disagrees stops the read before its
//! last block is handed over. A container of one block (every payload
//! under 1 MiB) is read and checked on the calling thread instead: a small
//! call starts no thread. [`compress_blocks`] makes the blocks of one
//! piece of the parallel writer (`compression::blocks`), shuffling a block
//! where that makes it smaller.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

/// The magic of a `.qs2` file (`qs_save()`).
pub const QS2_MAGIC: [u8; 4] = [0x0B, 0x0E, 0x0A, 0xC1];
/// The magic of a `.qdata` file (`qd_save()`).
pub const QDATA_MAGIC: [u8; 4] = [0x0B, 0x0E, 0x0A, 0xCD];
/// The header's length.
pub const HEADER_LEN: usize = 24;
/// Where the header holds the hash.
pub const HASH_AT: usize = 16;
/// The format version qs2 0.2 writes (and the newest read).
pub const FORMAT_VERSION: u8 = 1;
/// The most a block holds uncompressed.
pub const MAX_BLOCK: usize = 1 << 20;
/// The most a block's frame may take: zstd's bound for [`MAX_BLOCK`].
pub const MAX_FRAME: usize = MAX_BLOCK + (MAX_BLOCK >> 8);
/// Bit 31 of a block's length word: the block was shuffled.
const SHUFFLED: u32 = 1 << 31;
/// The element size of the shuffle.
const ELEMENT: usize = 8;

/// Which of qs2's formats a container holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QxFormat {
    /// `qs_save()`: R's serialization.
    Qs2,
    /// `qd_save()`: qs2's own encoding.
    Qdata,
}

impl QxFormat {
    /// The format's magic.
    pub fn magic(self) -> [u8; 4] {
        match self {
            QxFormat::Qs2 => QS2_MAGIC,
            QxFormat::Qdata => QDATA_MAGIC,
        }
    }

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            QxFormat::Qs2 => "qs2",
            QxFormat::Qdata => "qdata",
        }
    }
}

/// A container's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QxHeader {
    /// qs2 or qdata.
    pub format: QxFormat,
    /// Whether the writer's integers are big-endian.
    pub big_endian: bool,
    /// The stored hash (0: not stored).
    pub hash: u64,
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl QxHeader {
    /// A block's length word, in the writer's byte order: its frame's
    /// length and whether the block was shuffled.
    fn block_word(&self, word: [u8; 4]) -> (usize, bool) {
        let raw = if self.big_endian {
            u32::from_be_bytes(word)
        } else {
            u32::from_le_bytes(word)
        };
        ((raw & !SHUFFLED) as usize, raw & SHUFFLED != 0)
    }


    /// The header of `bytes` (the file's first 24).
    pub fn parse(bytes: &[u8]) -> io::Result<QxHeader> {
        if bytes.len() < HEADER_LEN {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the qs2 header is cut short: {} of its 24 bytes",
                    bytes.len()
                ),
            ));
        }
        let format = if bytes.starts_with(&QS2_MAGIC) {
            QxFormat::Qs2
        } else if bytes.starts_with(&QDATA_MAGIC) {
            QxFormat::Qdata
        } else {
            return Err(bad("not a qs2 or qdata file (no magic)".into()));
        };
        let name = format.name();
        if bytes[4] > FORMAT_VERSION {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("the {name} file has format version {}, newer than the version 1 qs2 0.2 writes", bytes[4]),
            ));
        }
        if bytes[5] != 1 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the {name} file is compressed with algorithm {}, not zstd (1)",
                    bytes[5]
                ),
            ));
        }
        let big_endian = match bytes[6] {
            1 => true,
            2 => false,
            other => {
                return Err(bad(format!(
                    "the {name} header's byte order is {other}, neither 1 (big) nor 2 (little)"
                )))
            }
        };
        let word: [u8; 8] = bytes[HASH_AT..HEADER_LEN].try_into().expect("8 bytes");
        let hash = if big_endian {
            u64::from_be_bytes(word)
        } else {
            u64::from_le_bytes(word)
        };
        Ok(QxHeader {
            format,
            big_endian,
            hash,
        })
    }

    /// The header qs2 writes on this machine (a little-endian one), with
    /// the shuffle flag set and no hash yet ([`hash_patch`] gives it).
    pub fn written(format: QxFormat) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(&format.magic());
        h[4] = FORMAT_VERSION;
        h[5] = 1;
        h[6] = if cfg!(target_endian = "big") { 1 } else { 2 };
        h[7] = 1;
        h
    }
}

/// The hash as the header stores it (qs2's digest: 0 is taken to mean
/// "not stored", so a digest of 0 is stored as 1).
pub fn stored_hash(digest: u64) -> [u8; 8] {
    let digest = if digest == 0 { 1 } else { digest };
    digest.to_ne_bytes()
}

/// The running hash of a container's body.
pub type BodyHash = twox_hash::XxHash3_64;

/// `hash`'s digest as a header holds it, to compare with [`QxHeader::hash`].
fn stored_digest(hash: &BodyHash) -> u64 {
    u64::from_ne_bytes(stored_hash(std::hash::Hasher::finish(hash)))
}

/// A new hash of a container's body.
pub fn body_hash() -> BodyHash {
    twox_hash::XxHash3_64::with_seed(0)
}

/// Byte-shuffle `src` into `dst` (same length), as Blosc does for
/// elements of 8 bytes: byte `j` of element `i` goes to `j * n + i`; the
/// bytes after the last whole element stay where they are.
pub fn shuffle(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / ELEMENT;
    for (i, e) in src.chunks_exact(ELEMENT).enumerate() {
        for (j, b) in e.iter().enumerate() {
            dst[j * n + i] = *b;
        }
    }
    let whole = n * ELEMENT;
    dst[whole..].copy_from_slice(&src[whole..]);
}

/// Undo [`shuffle`]: `src` shuffled, `dst` (same length) in element order.
pub fn unshuffle(src: &[u8], dst: &mut [u8]) {
    unshuffle_by(src, dst, ELEMENT)
}

/// Undo Blosc's shuffle of elements of `size` bytes (qs shuffles
/// integers by 4 and doubles by 8): byte `j` of element `i` is read from
/// `j * n + i`; the bytes after the last whole element stay where they are.
pub fn unshuffle_by(src: &[u8], dst: &mut [u8], size: usize) {
    let n = src.len() / size;
    let whole = n * size;
    if n > 0 {
        match size {
            4 => unshuffle_fixed::<4>(&src[..whole], &mut dst[..whole], n),
            8 => unshuffle_fixed::<8>(&src[..whole], &mut dst[..whole], n),
            _ => {
                for (i, e) in dst[..whole].chunks_exact_mut(size).enumerate() {
                    for (j, b) in e.iter_mut().enumerate() {
                        *b = src[j * n + i];
                    }
                }
            }
        }
    }
    dst[whole..].copy_from_slice(&src[whole..]);
}

/// [`unshuffle_by`] for an element size known when compiling.
fn unshuffle_fixed<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    let planes: [&[u8]; W] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    for (i, e) in dst.chunks_exact_mut(W).enumerate() {
        for j in 0..W {
            e[j] = planes[j][i];
        }
    }
}

// ---------------------------------------------------------------- reading

/// One block to decompress, and where its result goes.
struct Job {
    index: u64,
    frame: Vec<u8>,
    shuffled: bool,
    done: SyncSender<io::Result<Vec<u8>>>,
}

/// What the frame-reading thread hands the reader, in the file's order.
enum Event {
    /// A block, being decompressed (its result arrives on the receiver).
    Block(Receiver<io::Result<Vec<u8>>>),
    /// The end of the container: whether the frames were whole and the
    /// hash agreed.
    End(io::Result<()>),
}

/// Buffers of [`MAX_BLOCK`] bytes, handed back once read.
type Pool = Arc<Mutex<Vec<Vec<u8>>>>;

/// The decompressed payload of a qs2 or qdata container (read after its
/// header), its blocks decompressed on `threads` threads.
pub struct QxReader {
    events: Receiver<Event>,
    /// The event after the current block, read ahead to know whether the
    /// current block is the last (whose bytes wait for the hash).
    ahead: Option<Event>,
    current: Vec<u8>,
    pos: usize,
    pool: Pool,
    done: bool,
    /// The frame reader and the workers, joined when the reader goes.
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for QxReader {
    fn drop(&mut self) {
        // the events go first: the threads see their channels closed and
        // end (a thread still running its thread-local destructors after
        // its reader is gone would outlive it)
        let (_, closed) = sync_channel(0);
        drop(std::mem::replace(&mut self.events, closed));
        self.ahead = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl QxReader {
    /// Read the blocks of `body` (the bytes after the header `header`).
    pub fn new(
        mut body: Box<dyn Read + Send>,
        header: QxHeader,
        threads: usize,
    ) -> io::Result<QxReader> {
        // one block, whole and checked: read here; anything else (more
        // blocks, or a damaged one, whose error the frame reader words) on
        // the threads, from the bytes read so far on
        let (seen, block) = one_block(&mut body, header)?;
        if let Some(block) = block {
            let (_, events) = sync_channel(0);
            return Ok(QxReader {
                events,
                ahead: None,
                current: block,
                pos: 0,
                pool: Arc::new(Mutex::new(Vec::new())),
                done: true,
                threads: Vec::new(),
            });
        }
        let body: Box<dyn Read + Send> = Box::new(io::Cursor::new(seen).chain(body));
        let threads = threads.max(1);
        let depth = 2 * threads + 2;
        let (events_tx, events) = sync_channel::<Event>(depth);
        let (jobs_tx, jobs_rx) = sync_channel::<Job>(depth);
        let jobs_rx = Arc::new(Mutex::new(jobs_rx));
        let pool: Pool = Arc::new(Mutex::new(Vec::new()));
        let count = threads;
        let mut threads = Vec::with_capacity(count + 1);
        for i in 0..count {
            let rx = jobs_rx.clone();
            let pool = pool.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("rdarrow-qx-{i}"))
                    .spawn(move || decompress_jobs(rx, pool))?,
            );
        }
        threads.push(
            std::thread::Builder::new()
                .name("rdarrow-qx-frames".into())
                .spawn(move || read_frames(body, header, jobs_tx, events_tx))?,
        );
        Ok(QxReader {
            events,
            ahead: None,
            current: Vec::new(),
            pos: 0,
            pool,
            done: false,
            threads,
        })
    }

    fn next_event(&mut self) -> Event {
        self.ahead
            .take()
            .or_else(|| self.events.recv().ok())
            .unwrap_or_else(|| Event::End(Err(io::Error::other("the qs2 block reader stopped"))))
    }

    /// The next block's bytes, or `None` at the end.
    fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
        match self.next_event() {
            Event::End(r) => r.map(|()| None),
            Event::Block(rx) => {
                let block = rx.recv().unwrap_or_else(|_| {
                    Err(io::Error::other("a qs2 decompression thread stopped"))
                })?;
                // the last block waits for the verdict on the whole file
                let next = self.next_event();
                if let Event::End(Err(e)) = next {
                    return Err(e);
                }
                self.ahead = Some(next);
                Ok(Some(block))
            }
        }
    }
}

impl Read for QxReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.next_block() {
                Ok(Some(block)) => {
                    let used = std::mem::replace(&mut self.current, block);
                    if used.capacity() >= MAX_BLOCK {
                        if let Ok(mut p) = self.pool.lock() {
                            p.push(used);
                        }
                    }
                    self.pos = 0;
                }
                Ok(None) => {
                    self.done = true;
                    return Ok(0);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        let k = out.len().min(self.current.len() - self.pos);
        out[..k].copy_from_slice(&self.current[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

/// The payload of a container of one block (`None` in the second place
/// where the container holds more, or its block is not whole or fails its
/// checks), and the bytes read of `body`.
fn one_block(body: &mut dyn Read, header: QxHeader) -> io::Result<(Vec<u8>, Option<Vec<u8>>)> {
    let mut seen = vec![0u8; 4];
    let got = read_full(body, &mut seen)?;
    seen.truncate(got);
    if got < 4 {
        return Ok((seen, None));
    }
    let (len, shuffled) = header.block_word([seen[0], seen[1], seen[2], seen[3]]);
    if len > MAX_FRAME {
        return Ok((seen, None));
    }
    seen.resize(4 + len + 1, 0);
    let got = read_full(body, &mut seen[4..])?;
    seen.truncate(4 + got);
    // whole, and the last: the byte after it is the end of the file
    if got != len {
        return Ok((seen, None));
    }
    if header.hash != 0 {
        use std::hash::Hasher;
        let mut hash = body_hash();
        hash.write(&seen);
        if stored_digest(&hash) != header.hash {
            return Ok((seen, None));
        }
    }
    let Ok(mut z) = zstd::bulk::Decompressor::new() else {
        return Ok((seen, None));
    };
    let mut scratch = Vec::new();
    let mut out = Vec::with_capacity(MAX_BLOCK.min(zstd_content_size(&seen[4..]).unwrap_or(MAX_BLOCK)));
    match decode_block(&mut z, &seen[4..], shuffled, &mut scratch, &mut out, 1) {
        Ok(()) => Ok((seen, Some(out))),
        Err(_) => Ok((seen, None)),
    }
}

/// The size a zstd frame says it decompresses to, where it says it.
fn zstd_content_size(frame: &[u8]) -> Option<usize> {
    match zstd::zstd_safe::get_frame_content_size(frame) {
        Ok(Some(n)) => usize::try_from(n).ok(),
        _ => None,
    }
}

/// Decompress one block's frame into `out` (empty, with room for what the
/// frame holds), undoing the shuffle through `scratch` where it was
/// shuffled.
fn decode_block(
    z: &mut zstd::bulk::Decompressor<'_>,
    frame: &[u8],
    shuffled: bool,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
    index: u64,
) -> io::Result<()> {
    if !shuffled {
        return decompress_block(z, frame, out, index);
    }
    if scratch.capacity() < MAX_BLOCK {
        *scratch = Vec::with_capacity(MAX_BLOCK);
    }
    scratch.clear();
    decompress_block(z, frame, scratch, index)?;
    out.resize(scratch.len(), 0);
    unshuffle(scratch, out);
    Ok(())
}

/// The frame-reading thread: each block's length and frame, in order,
/// hashed, handed to the workers; then the verdict.
fn read_frames(
    mut body: Box<dyn Read + Send>,
    header: QxHeader,
    jobs: SyncSender<Job>,
    events: SyncSender<Event>,
) {
    let name = header.format.name();
    let mut hash = body_hash();
    let mut index = 0u64;
    let verdict = loop {
        let mut word = [0u8; 4];
        let got = match read_full(&mut body, &mut word) {
            Ok(n) => n,
            Err(e) => break Err(e),
        };
        if got == 0 {
            break Ok(());
        }
        if got < 4 {
            break Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the {name} file is truncated in the length of block {}",
                    index + 1
                ),
            ));
        }
        let (len, shuffled) = header.block_word(word);
        if len > MAX_FRAME {
            break Err(bad(format!(
                "the {name} file is damaged: block {} claims {len} compressed bytes, more than a block of 1 MiB can take",
                index + 1
            )));
        }
        let mut frame = vec![0u8; len];
        match read_full(&mut body, &mut frame) {
            Ok(n) if n == len => {}
            Ok(n) => {
                break Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the {name} file is truncated: block {} claims {len} compressed bytes, the file holds {n}",
                        index + 1
                    ),
                ))
            }
            Err(e) => break Err(e),
        }
        if header.hash != 0 {
            use std::hash::Hasher;
            hash.write(&word);
            hash.write(&frame);
        }
        let (done, result) = sync_channel(1);
        index += 1;
        let job = Job {
            index,
            frame,
            shuffled,
            done,
        };
        if jobs.send(job).is_err() || events.send(Event::Block(result)).is_err() {
            return; // the reader is gone
        }
    };
    let verdict = verdict.and_then(|()| {
        let found = stored_digest(&hash);
        if header.hash != 0 && found != header.hash {
            return Err(bad(format!(
                "the {name} file is damaged: the XXH3-64 hash of its {index} blocks is {found:016x}, its header says {:016x}",
                header.hash
            )));
        }
        Ok(())
    });
    drop(jobs);
    let _ = events.send(Event::End(verdict));
}

/// A worker: decompress blocks until the jobs end.
fn decompress_jobs(jobs: Arc<Mutex<Receiver<Job>>>, pool: Pool) {
    let mut z = match zstd::bulk::Decompressor::new() {
        Ok(z) => z,
        Err(_) => return,
    };
    let mut scratch: Vec<u8> = Vec::new();
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let mut out = pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_else(|| Vec::with_capacity(MAX_BLOCK));
        out.clear();
        let result = decode_block(&mut z, &job.frame, job.shuffled, &mut scratch, &mut out, job.index)
            .map(|()| out);
        if job.done.send(result).is_err() {
            return;
        }
    }
}

/// Decompress one frame into `out` (empty, with room for [`MAX_BLOCK`]
/// bytes: zstd writes no more than that room, whatever the frame claims).
fn decompress_block(
    z: &mut zstd::bulk::Decompressor<'_>,
    frame: &[u8],
    out: &mut Vec<u8>,
    index: u64,
) -> io::Result<()> {
    let damaged = |why: String| {
        bad(format!(
            "the file is damaged: its block {index} does not decompress to at most 1 MiB ({why})"
        ))
    };
    z.decompress_to_buffer(frame, out)
        .map_err(|e| damaged(e.to_string()))?;
    if out.len() > MAX_BLOCK {
        return Err(damaged(format!("{} bytes", out.len())));
    }
    Ok(())
}

/// A `.qs2` payload as the reader takes it: as it is from a little-endian
/// writer; from a big-endian one, its native binary stream (`"B\n"`) is
/// XDR byte for byte (big-endian integers and doubles), so it is read as
/// XDR (`"X\n"`). An XDR payload (`rds_to_qs()`) is XDR either way.
pub fn binary_in_file_order(
    payload: impl Read + Send + 'static,
    big_endian: bool,
) -> impl Read + Send {
    FirstBytes {
        inner: payload,
        seen: 0,
        big_endian,
    }
}

struct FirstBytes<R> {
    inner: R,
    seen: u64,
    big_endian: bool,
}

impl<R: Read> Read for FirstBytes<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        if self.big_endian && self.seen == 0 && n > 0 && out[0] == b'B' {
            out[0] = b'X';
        }
        self.seen += n as u64;
        Ok(n)
    }
}

// ---------------------------------------------------------------- writing

/// Compress `data` (one piece of the parallel writer) into qs2 blocks of
/// at most [`MAX_BLOCK`] bytes each: the length word and the frame of
/// each, little-endian, a block shuffled where that makes it smaller, and
/// compressed at `level` or at a lower level of [`FALLBACK_LEVELS`], where
/// that makes it smaller.
pub fn compress_blocks(data: &[u8], level: i32) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 3 + 64);
    let mut z = zstd::bulk::Compressor::new(level)?;
    let mut lower = FALLBACK_LEVELS
        .iter()
        .filter(|&&l| l < level)
        .map(|&l| zstd::bulk::Compressor::new(l))
        .collect::<io::Result<Vec<_>>>()?;
    let mut probe = zstd::bulk::Compressor::new(-1)?;
    let mut shuffled = Vec::new();
    // room for the largest frame of these blocks (a small object's is
    // small: no megabyte mapped and unmapped for it)
    let bound = zstd::zstd_safe::compress_bound(data.len().min(MAX_BLOCK));
    let mut frame = Vec::with_capacity(bound);
    let mut other = Vec::with_capacity(if lower.is_empty() { 0 } else { bound });
    for block in data.chunks(MAX_BLOCK) {
        let shuffle_it = worth_shuffling(block, &mut probe, &mut shuffled)?;
        let (input, flag) = if shuffle_it {
            shuffled.resize(block.len(), 0);
            shuffle(block, &mut shuffled);
            (&shuffled[..], SHUFFLED)
        } else {
            (block, 0)
        };
        frame.clear();
        z.compress_to_buffer(input, &mut frame)?;
        for c in &mut lower {
            other.clear();
            c.compress_to_buffer(input, &mut other)?;
            if other.len() < frame.len() {
                std::mem::swap(&mut frame, &mut other);
            }
        }
        out.extend_from_slice(&(frame.len() as u32 | flag).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

/// Levels a block given a higher level is also compressed at, the
/// smallest frame kept, so that a level never makes a file larger than
/// these levels below it do (nor than each other: each one's candidates
/// hold those of the ones below it). zstd's strategies change with the
/// level (double fast to 4, greedy at 5, lazy matching from 6, optimal
/// parsing from 16), and on some data the later ones lose to the earlier:
/// R's serialized strings (a length word and a few bytes each, repeating
/// at a fixed distance) come out a half larger at level 7 than at 5, and
/// larger at 19 than at 3; within lazy matching, 12 lost to 9 by bytes.
/// (The cost: levels 3 and 5 are several times faster than 9, and 9 than
/// 12 and up.)
const FALLBACK_LEVELS: [i32; 3] = [3, 5, 9];

/// Bytes of a sample [`worth_shuffling`] compresses both ways.
const PROBE: usize = 32 << 10;

/// Whether shuffling `block` makes it smaller: four samples compressed
/// quickly both ways (as qs2 decides, on samples), shuffled where that
/// saves bytes.
fn worth_shuffling(
    block: &[u8],
    probe: &mut zstd::bulk::Compressor<'_>,
    scratch: &mut Vec<u8>,
) -> io::Result<bool> {
    if block.len() < 8 * PROBE {
        return Ok(false);
    }
    let (mut plain, mut mixed) = (0usize, 0usize);
    scratch.resize(PROBE, 0);
    for i in 0..4 {
        let at = (block.len() / 4) * i;
        let sample = &block[at..at + PROBE];
        plain += probe.compress(sample)?.len();
        shuffle(sample, scratch);
        mixed += probe.compress(&scratch[..])?.len();
    }
    Ok(mixed < plain)
}

/// Read exactly `buf.len()` bytes of `r`, or as many as there are before
/// its end: how many (the containers' block readers).
pub(crate) fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(format: QxFormat, payload: &[u8], level: i32) -> Vec<u8> {
        use std::hash::Hasher;
        let mut file = QxHeader::written(format).to_vec();
        let body = compress_blocks(payload, level).unwrap();
        let mut h = body_hash();
        h.write(&body);
        file[HASH_AT..].copy_from_slice(&stored_hash(h.finish()));
        file.extend(body);
        file
    }

    fn read_all(file: &[u8], threads: usize) -> io::Result<Vec<u8>> {
        let header = QxHeader::parse(&file[..HEADER_LEN.min(file.len())])?;
        let body = io::Cursor::new(file[HEADER_LEN..].to_vec());
        let mut r = QxReader::new(Box::new(body), header, threads)?;
        let mut out = Vec::new();
        r.read_to_end(&mut out)?;
        Ok(out)
    }

    fn payload(n: usize) -> Vec<u8> {
        // doubles that shuffle well, then text
        let mut v: Vec<u8> = (0..n / 16)
            .flat_map(|i| (i as f64 * 0.25).to_le_bytes())
            .collect();
        v.extend((0..n / 2).map(|i| b"abcdefgh"[i % 8]));
        v
    }

    #[test]
    fn shuffle_and_unshuffle_are_inverse_and_leave_the_tail() {
        for n in [0usize, 7, 8, 17, 64, 1001] {
            let src: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            let mut s = vec![0; n];
            shuffle(&src, &mut s);
            let mut back = vec![0; n];
            unshuffle(&s, &mut back);
            assert_eq!(back, src, "{n}");
            assert_eq!(s[n / 8 * 8..], src[n / 8 * 8..]);
        }
    }

    #[test]
    fn blocks_round_trip_on_any_thread_count_and_shuffle_where_it_pays() {
        let data = payload(5 * MAX_BLOCK + 12345);
        let file = container(QxFormat::Qs2, &data, 3);
        // some block of doubles was shuffled
        let first = u32::from_le_bytes(file[HEADER_LEN..HEADER_LEN + 4].try_into().unwrap());
        assert_ne!(first & SHUFFLED, 0);
        for threads in [1, 2, 4] {
            assert_eq!(read_all(&file, threads).unwrap(), data);
        }
        assert!(read_all(&container(QxFormat::Qdata, &[], 1), 2)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn a_higher_level_never_makes_blocks_larger() {
        // R's serialized strings of one letter each (a CHARSXP's flags
        // and length, then the letter), on which zstd's lazy strategies
        // (from level 6) lose to its fast ones
        let mut seed = 7u64;
        let mut data = Vec::new();
        while data.len() < MAX_BLOCK + 4096 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            data.extend_from_slice(&[0, 4, 0, 9, 0, 0, 0, 1, b'a' + (seed >> 33) as u8 % 26]);
        }
        let mut last = usize::MAX;
        for level in [1, 3, 5, 9, 12] {
            let z = compress_blocks(&data, level).unwrap();
            assert!(z.len() <= last, "level {level}: {} bytes, more than {last}", z.len());
            last = z.len();
            let file = container(QxFormat::Qs2, &data, level);
            assert_eq!(read_all(&file, 2).unwrap(), data);
        }
        // zstd alone at level 7 makes these blocks larger than at 5
        let zstd_alone = |l| zstd::bulk::compress(&data[..MAX_BLOCK], l).unwrap().len();
        assert!(zstd_alone(7) > zstd_alone(5));
    }

    #[test]
    fn a_container_of_one_block_is_read_here_and_checked_as_any() {
        // a small payload (one block, shuffled and not) on the calling
        // thread: its bytes, and for every flipped bit and every cut an
        // error, never other bytes
        for data in [payload(5000), vec![7u8; 300]] {
            let file = container(QxFormat::Qs2, &data, 3);
            assert_eq!(read_all(&file, 4).unwrap(), data);
            for at in HEADER_LEN..file.len() {
                for bit in [0x01u8, 0x80] {
                    let mut bad = file.clone();
                    bad[at] ^= bit;
                    if let Ok(got) = read_all(&bad, 2) {
                        assert_eq!(got, data, "byte {at} flipped read as other bytes");
                    }
                }
            }
            for cut in HEADER_LEN..file.len() {
                let e = read_all(&file[..cut], 2).unwrap_err().to_string();
                assert!(e.contains("truncated") || e.contains("damaged"), "cut at {cut}: {e}");
            }
            // a second block after it: read on the threads, whole
            let two = container(QxFormat::Qs2, &payload(MAX_BLOCK + 10), 3);
            assert_eq!(read_all(&two, 2).unwrap(), payload(MAX_BLOCK + 10));
        }
    }

    #[test]
    fn a_damaged_container_says_why() {
        let data = payload(3 * MAX_BLOCK);
        let file = container(QxFormat::Qs2, &data, 1);
        // a flipped byte in a frame: the frame or the hash says so
        let mut flipped = file.clone();
        let at = flipped.len() - 100;
        flipped[at] ^= 0x40;
        let e = read_all(&flipped, 2).unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
        // cut short
        let e = read_all(&file[..file.len() - 10], 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("truncated"), "{e}");
        // a length beyond a block's bound
        let mut long = file.clone();
        long[HEADER_LEN..HEADER_LEN + 4].copy_from_slice(&(MAX_FRAME as u32 + 1).to_le_bytes());
        let e = read_all(&long, 2).unwrap_err().to_string();
        assert!(e.contains("more than a block"), "{e}");
        // the hash alone wrong
        let mut hashed = file.clone();
        hashed[HASH_AT] ^= 1;
        let e = read_all(&hashed, 2).unwrap_err().to_string();
        assert!(e.contains("XXH3-64"), "{e}");
        // no hash stored: not checked
        let mut none = file.clone();
        none[HASH_AT..HEADER_LEN].fill(0);
        assert_eq!(read_all(&none, 2).unwrap(), data);
        // a frame that inflates beyond 1 MiB
        let big = zstd::bulk::compress(&vec![0u8; MAX_BLOCK + 1], 1).unwrap();
        let mut over = QxHeader::written(QxFormat::Qs2).to_vec();
        over.extend((big.len() as u32).to_le_bytes());
        over.extend(big);
        let e = read_all(&over, 1).unwrap_err().to_string();
        assert!(e.contains("at most 1 MiB"), "{e}");
        // header faults
        let mut newer = file.clone();
        newer[4] = 2;
        assert!(read_all(&newer, 1)
            .unwrap_err()
            .to_string()
            .contains("newer"));
        let mut lz = file.clone();
        lz[5] = 2;
        assert!(read_all(&lz, 1)
            .unwrap_err()
            .to_string()
            .contains("not zstd"));
        assert!(read_all(&file[..10], 1)
            .unwrap_err()
            .to_string()
            .contains("cut short"));
    }
}
