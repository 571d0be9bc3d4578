//! gzip's blocks: a block as raw deflate ended by a sync flush (the last
//! ending the member), the header with its index of block starts (subfield
//! `Rd` of the extra field, which every gzip reader skips), and the reader
//! that inflates an indexed file on every core, each chunk checked against
//! the index and the member's CRC-32 and length checked at its end.

use crate::base::positional::{read_at, read_exact_at};
use crate::compression::piece::{check_interrupt, CompressedBlock, BLOCK_SHIFT, BLOCK_SIZE};
use std::io::{self, Read};

// ---------------------------------------------------------------- gzip

/// A block as raw deflate (libdeflate: about twice zlib's speed, and
/// smaller, at the same level), ended by a sync flush unless it is the
/// last ([`end_without_closing`]).
pub(crate) fn deflate_piece(data: &[u8], level: u32, last: bool) -> io::Result<CompressedBlock> {
    let mut crc = flate2::Crc::new();
    crc.update(data);
    check_interrupt()?;
    let lvl = libdeflater::CompressionLvl::new(level.min(12) as i32)
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
    let mut c = libdeflater::Compressor::new(lvl);
    // room for the sync flush's bytes after the bound
    let mut out = vec![0u8; c.deflate_compress_bound(data.len()) + 8];
    let n = c
        .deflate_compress(data, &mut out)
        .map_err(|e| io::Error::other(format!("cannot compress: {e:?}")))?;
    out.truncate(n);
    if !last {
        end_without_closing(&mut out)?;
    }
    // held until written in order: not at the size of the bound
    out.shrink_to_fit();
    Ok(CompressedBlock {
        bytes: out,
        gz_crc: crc,
        len: data.len() as u64,
        ..CompressedBlock::default()
    })
}

/// Turn a whole raw deflate stream into one that goes on, as zlib's sync
/// flush leaves it: the last block's final bit cleared, and an empty
/// stored block after it (which ends on a byte boundary: `00 00 ff ff`).
/// zlib's inflate, asked to stop at each block boundary, says where the
/// last block starts and where the stream's bits end.
pub(crate) fn end_without_closing(out: &mut Vec<u8>) -> io::Result<()> {
    use libz_rs_sys as z;
    let broken = |what: &str| io::Error::other(format!("deflate stream not understood: {what}"));
    // SAFETY: a zeroed z_stream is the state inflateInit2_ expects; the
    // input and the scratch output outlive every call, with their true
    // lengths; the stream is ended before returning
    let (last_header, end_bits) = unsafe {
        let mut strm: z::z_stream = std::mem::zeroed();
        let rc = z::inflateInit2_(
            &mut strm,
            -15,
            z::zlibVersion(),
            std::mem::size_of::<z::z_stream>() as i32,
        );
        if rc != z::Z_OK {
            return Err(broken("inflate does not start"));
        }
        let mut scratch = vec![0u8; 1 << 16];
        strm.next_in = out.as_ptr();
        strm.avail_in = out.len() as z::uInt;
        // a raw stream's first block starts at its first bit
        let mut last_header = 0u64;
        let mut end = None;
        let result = loop {
            strm.next_out = scratch.as_mut_ptr();
            strm.avail_out = scratch.len() as z::uInt;
            let rc = z::inflate(&mut strm, z::Z_BLOCK);
            if rc == z::Z_STREAM_END {
                break match end {
                    Some(bits) if strm.total_in as usize == out.len() => Ok(bits),
                    Some(_) => Err(broken("bytes after its end")),
                    None => Err(broken("its end not seen")),
                };
            }
            if rc != z::Z_OK && rc != z::Z_BUF_ERROR {
                break Err(broken("inflate fails"));
            }
            if rc == z::Z_BUF_ERROR && strm.avail_in == 0 {
                break Err(broken("it does not end"));
            }
            // stopped at the end of a block (128), of the last block too
            // (64): where the next block's header, or the padding, starts
            // (the low bits: those taken from the input but not yet used)
            if strm.data_type & 128 != 0 {
                let at = strm.total_in as u64 * 8 - (strm.data_type & 63) as u64;
                if strm.data_type & 64 == 0 {
                    last_header = at;
                } else {
                    end = Some(at);
                }
            }
        };
        z::inflateEnd(&mut strm);
        (last_header, result?)
    };
    let (byte, bit) = ((last_header / 8) as usize, last_header % 8);
    if out.get(byte).is_none_or(|b| b >> bit & 1 == 0) {
        return Err(broken("its last block is not marked final"));
    }
    out[byte] &= !(1 << bit);
    // the empty stored block: 3 header bits, zero, in the padding if they
    // fit there, then zero bits to a byte, then LEN 0 and NLEN 0xffff
    let padding = out.len() as u64 * 8 - end_bits;
    if padding < 3 {
        out.push(0);
    }
    out.extend_from_slice(&[0, 0, 0xff, 0xff]);
    Ok(())
}

/// The gzip header's index subfield (`Rd`): where the blocks start, so a
/// reader can inflate them on several cores.
///
/// Its data: a version byte (1), log2 of the block size (23), the stride
/// (`u32`, little-endian: every `stride`-th block start is recorded), how
/// many starts are recorded (`u16`), then that many room for `u64`s (the
/// starts, as offsets from the file's first byte, of blocks `stride`,
/// `2 * stride`, ...), unused room zero. The room is reserved when the
/// first block is written (8 bytes per 2 KiB of it, at most 255 starts)
/// and filled when the file is complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzipIndex {
    /// Blocks per recorded start.
    pub stride: u32,
    /// Offsets of the recorded block starts.
    pub starts: Vec<u64>,
}

pub(crate) const INDEX_ID: [u8; 2] = *b"Rd";
pub(crate) const INDEX_VERSION: u8 = 1;
/// Bytes of the subfield before its offsets.
pub(crate) const INDEX_FIXED: usize = 4 + 1 + 1 + 4 + 2;

/// A gzip header: R's (no name, no time, Unix), with an index subfield of
/// `room` starts when `room > 0`.
pub(crate) fn gzip_header(room: usize, index: Option<&GzipIndex>) -> Vec<u8> {
    let mut h = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    if room == 0 {
        return h;
    }
    h[3] = 4; // FEXTRA
    let sub = INDEX_FIXED - 4 + 8 * room;
    h.extend(((sub + 4) as u16).to_le_bytes());
    h.extend(INDEX_ID);
    h.extend((sub as u16).to_le_bytes());
    h.push(INDEX_VERSION);
    h.push(BLOCK_SHIFT);
    let (stride, starts) = index.map_or((0, &[][..]), |i| (i.stride, &i.starts[..]));
    h.extend(stride.to_le_bytes());
    h.extend((starts.len() as u16).to_le_bytes());
    for k in 0..room {
        h.extend(starts.get(k).copied().unwrap_or(0).to_le_bytes());
    }
    h
}


/// A gzip file's header, parsed: where the deflate data starts, and the
/// index when it has one that is well formed.
#[derive(Debug)]
pub struct GzipHead {
    /// Offset of the first deflate byte.
    pub data_start: u64,
    /// The recorded block starts, when present and well formed.
    pub index: Option<GzipIndex>,
}

/// Parse a gzip member's header from its first bytes (`None` if they do
/// not hold a whole header).
pub fn parse_gzip_head(b: &[u8]) -> Option<GzipHead> {
    if b.len() < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
        return None;
    }
    let flags = b[3];
    let mut pos = 10usize;
    let mut index = None;
    if flags & 4 != 0 {
        let xlen = u16::from_le_bytes(b.get(pos..pos + 2)?.try_into().ok()?) as usize;
        let extra = b.get(pos + 2..pos + 2 + xlen)?;
        pos += 2 + xlen;
        let mut at = 0;
        while at + 4 <= extra.len() {
            let len = u16::from_le_bytes([extra[at + 2], extra[at + 3]]) as usize;
            let data = extra.get(at + 4..at + 4 + len)?;
            if extra[at..at + 2] == INDEX_ID {
                index = parse_index(data);
            }
            at += 4 + len;
        }
    }
    let skip_zero_terminated = |pos: usize| -> Option<usize> {
        Some(pos + b.get(pos..)?.iter().position(|&c| c == 0)? + 1)
    };
    if flags & 8 != 0 {
        pos = skip_zero_terminated(pos)?;
    }
    if flags & 16 != 0 {
        pos = skip_zero_terminated(pos)?;
    }
    if flags & 2 != 0 {
        pos += 2;
    }
    (pos <= b.len()).then_some(GzipHead {
        data_start: pos as u64,
        index,
    })
}

pub(crate) fn parse_index(d: &[u8]) -> Option<GzipIndex> {
    if d.len() < INDEX_FIXED - 4 || d[0] != INDEX_VERSION || d[1] != BLOCK_SHIFT {
        return None;
    }
    let stride = u32::from_le_bytes(d[2..6].try_into().ok()?);
    let count = u16::from_le_bytes(d[6..8].try_into().ok()?) as usize;
    let room = &d[8..];
    if stride == 0 || count == 0 || room.len() < 8 * count {
        return None;
    }
    let starts = room[..8 * count]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Some(GzipIndex { stride, starts })
}


// ---------------------------------------------------------- reading back

/// How many chunks (of `stride` blocks) may be inflated ahead of the
/// reader, per thread.
pub(crate) const AHEAD_PER_THREAD: usize = 2;

/// The window deflate may reach back.
pub(crate) const WINDOW: usize = 32 << 10;

/// A chunk of the file: compressed range, and how many bytes it inflates
/// to (for the last, as the trailer's length gives it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    start: u64,
    end: u64,
    out: usize,
}

pub(crate) type Inflated = io::Result<(Vec<u8>, flate2::Crc)>;

/// A gzip file written with an index (see [`GzipIndex`]), inflated on
/// several cores in chunks of whole blocks, handed over in order.
///
/// Each chunk is checked before it is handed over: it inflates from its
/// recorded start (with no history) exactly to the next recorded start,
/// into exactly the bytes its blocks hold, and ends there between blocks.
/// The first chunk starts where the header ends, so by induction every
/// chunk handed over holds what a serial reader reads there. A chunk that
/// fails the check (offsets that disagree with the content) ends the
/// parallel reading: the rest is inflated serially from the last chunk
/// that passed, with its history. The CRC and length in the trailer are
/// checked at the end, as a serial reader checks them.
pub struct IndexedGzipReader {
    file: std::sync::Arc<std::fs::File>,
    chunks: Vec<Chunk>,
    trailer_crc: u32,
    trailer_len: u32,
    /// Next chunk to hand over, and the results of those inflated.
    next: usize,
    rx: Option<std::sync::mpsc::Receiver<(usize, Inflated)>>,
    ready: std::collections::BTreeMap<usize, Inflated>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Chunks the workers may take: those below this.
    allowed: std::sync::Arc<(std::sync::Mutex<usize>, std::sync::Condvar)>,
    workers: Vec<std::thread::JoinHandle<()>>,
    ahead: usize,
    current: Vec<u8>,
    pos: usize,
    crc: flate2::Crc,
    /// The serial rest, after a chunk failed its check.
    serial: Option<SerialRest>,
    done: bool,
}

/// The serial inflation of the member from a chunk start on.
pub(crate) struct SerialRest {
    input: io::BufReader<FileFrom>,
    inflate: flate2::Decompress,
    crc: flate2::Crc,
    ended: bool,
}

/// A file read from an offset on (positional reads: the workers share it).
pub(crate) struct FileFrom {
    file: std::sync::Arc<std::fs::File>,
    at: u64,
}

impl Read for FileFrom {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_at(&self.file, buf, self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The chunks of an indexed gzip file, when its index is well formed and
/// agrees with the file's layout (increasing starts, each just after a
/// sync flush's mark, inside the member; the trailer at the file's end).
pub(crate) fn plan_chunks(file: &std::fs::File, len: u64) -> Option<(Vec<Chunk>, u32, u32)> {
    let mut head = vec![0u8; (64 << 10).min(len as usize)];
    read_exact_at(file, &mut head, 0).ok()?;
    let parsed = parse_gzip_head(&head)?;
    let index = parsed.index?;
    let data_end = len.checked_sub(8)?;
    let span = (index.stride as usize).checked_mul(BLOCK_SIZE)?;
    let mut bounds = vec![parsed.data_start];
    for &s in &index.starts {
        if s <= *bounds.last()? || s < 4 || s >= data_end {
            return None;
        }
        let mut mark = [0u8; 4];
        read_exact_at(file, &mut mark, s - 4).ok()?;
        if mark != [0, 0, 0xff, 0xff] {
            return None;
        }
        bounds.push(s);
    }
    let mut trailer = [0u8; 8];
    read_exact_at(file, &mut trailer, data_end).ok()?;
    let crc = u32::from_le_bytes(trailer[..4].try_into().ok()?);
    let isize = u32::from_le_bytes(trailer[4..].try_into().ok()?);
    let full = index.starts.len();
    let before_last = (full as u64).checked_mul(span as u64)?;
    let last_out = (isize as u64).wrapping_sub(before_last) & 0xffff_ffff;
    if last_out > span as u64 {
        return None;
    }
    let mut chunks: Vec<Chunk> = bounds
        .windows(2)
        .map(|w| Chunk {
            start: w[0],
            end: w[1],
            out: span,
        })
        .collect();
    chunks.push(Chunk {
        start: *bounds.last()?,
        end: data_end,
        out: last_out as usize,
    });
    Some((chunks, crc, isize))
}

/// Inflate one chunk and check it (see [`IndexedGzipReader`]): with
/// libdeflate, which inflates a whole stream at once, so a chunk that does
/// not end the member is closed by a final empty stored block (valid only
/// where the chunk ends between blocks, on a byte boundary).
pub(crate) fn inflate_chunk(file: &std::fs::File, c: Chunk, last: bool) -> Inflated {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "a block disagrees with the index",
        )
    };
    let len = (c.end - c.start) as usize;
    let mut input = vec![0u8; len + 5];
    read_exact_at(file, &mut input[..len], c.start)?;
    if last {
        input.truncate(len);
    } else {
        input[len..].copy_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    let mut out: Vec<u8> = Vec::with_capacity(c.out);
    let (mut used_in, mut used_out) = (0usize, 0usize);
    // SAFETY: a decompressor of libdeflate's own, freed below; the input
    // and the output's capacity are valid for the lengths given, and
    // libdeflate wrote the `used_out` bytes the length is set to
    let ok = unsafe {
        let d = libdeflate_sys::libdeflate_alloc_decompressor();
        if d.is_null() {
            return Err(io::Error::other("cannot start inflating"));
        }
        let r = libdeflate_sys::libdeflate_deflate_decompress_ex(
            d,
            input.as_ptr().cast(),
            input.len(),
            out.as_mut_ptr().cast(),
            c.out,
            &mut used_in,
            &mut used_out,
        );
        libdeflate_sys::libdeflate_free_decompressor(d);
        let ok = r == libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS
            && used_in == input.len()
            && used_out == c.out;
        if ok {
            out.set_len(used_out);
        }
        ok
    };
    if !ok {
        return Err(bad());
    }
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    Ok((out, crc))
}

impl IndexedGzipReader {
    /// The reader of `file` (`len` bytes), when it is a gzip file with an
    /// index that agrees with its layout; `None` otherwise (read it
    /// serially).
    pub fn open(file: std::fs::File, len: u64, threads: usize) -> Option<IndexedGzipReader> {
        let (chunks, trailer_crc, trailer_len) = plan_chunks(&file, len)?;
        if chunks.len() < 2 {
            return None;
        }
        let threads = threads.clamp(1, chunks.len());
        let ahead = threads * AHEAD_PER_THREAD;
        let file = std::sync::Arc::new(file);
        let (tx, rx) = std::sync::mpsc::channel();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let allowed =
            std::sync::Arc::new((std::sync::Mutex::new(ahead), std::sync::Condvar::new()));
        let next_take = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut workers = Vec::new();
        for i in 0..threads {
            let (file, chunks, tx, stop, allowed, next_take) = (
                file.clone(),
                chunks.clone(),
                tx.clone(),
                stop.clone(),
                allowed.clone(),
                next_take.clone(),
            );
            let spawned = std::thread::Builder::new()
                .name(format!("rdarrow-inflate-{i}"))
                .spawn(move || loop {
                    use std::sync::atomic::Ordering;
                    let j = next_take.fetch_add(1, Ordering::SeqCst);
                    if j >= chunks.len() {
                        return;
                    }
                    {
                        let (lock, cv) = &*allowed;
                        let mut limit = lock.lock().unwrap_or_else(|p| p.into_inner());
                        while j >= *limit && !stop.load(Ordering::SeqCst) {
                            limit = cv.wait(limit).unwrap_or_else(|p| p.into_inner());
                        }
                    }
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let res = inflate_chunk(&file, chunks[j], j + 1 == chunks.len());
                    if tx.send((j, res)).is_err() {
                        return;
                    }
                });
            match spawned {
                Ok(h) => workers.push(h),
                Err(_) => break,
            }
        }
        if workers.is_empty() {
            return None;
        }
        Some(IndexedGzipReader {
            file,
            chunks,
            trailer_crc,
            trailer_len,
            next: 0,
            rx: Some(rx),
            ready: Default::default(),
            stop,
            allowed,
            workers,
            ahead,
            current: Vec::new(),
            pos: 0,
            crc: flate2::Crc::new(),
            serial: None,
            done: false,
        })
    }

    fn stop_workers(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.allowed.1.notify_all();
        self.rx = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }

    /// The next chunk, in order; `false` at the end.
    fn advance(&mut self) -> io::Result<bool> {
        if self.serial.is_some() {
            return self.advance_serial();
        }
        if self.next == self.chunks.len() {
            self.stop_workers();
            return self.check_trailer(self.crc.sum(), self.crc.amount());
        }
        let res = loop {
            if let Some(r) = self.ready.remove(&self.next) {
                break r;
            }
            let got = self.rx.as_ref().and_then(|rx| rx.recv().ok());
            match got {
                Some((j, r)) => {
                    self.ready.insert(j, r);
                }
                None => break Err(io::Error::other("an inflating thread stopped")),
            }
        };
        match res {
            Ok((data, crc)) => {
                self.crc.combine(&crc);
                self.current = data;
                self.pos = 0;
                self.next += 1;
                let (lock, cv) = &*self.allowed;
                *lock.lock().unwrap_or_else(|p| p.into_inner()) = self.next + self.ahead;
                cv.notify_all();
                Ok(true)
            }
            Err(_) => {
                // the index disagrees with the content: serially from here
                self.stop_workers();
                self.start_serial()?;
                self.advance_serial()
            }
        }
    }

    fn start_serial(&mut self) -> io::Result<()> {
        let at = self.chunks[self.next].start;
        let mut inflate = flate2::Decompress::new(false);
        // the history: the last window of what was handed over
        let keep = self.current.len().min(WINDOW);
        if keep > 0 {
            inflate
                .set_dictionary(&self.current[self.current.len() - keep..])
                .map_err(io::Error::other)?;
        }
        self.serial = Some(SerialRest {
            input: io::BufReader::with_capacity(
                1 << 18,
                FileFrom {
                    file: self.file.clone(),
                    at,
                },
            ),
            inflate,
            crc: flate2::Crc::new(),
            ended: false,
        });
        Ok(())
    }

    fn advance_serial(&mut self) -> io::Result<bool> {
        let s = self.serial.as_mut().expect("serial reading");
        if s.ended {
            self.crc.combine(&s.crc);
            return self.check_trailer(self.crc.sum(), self.crc.amount());
        }
        let mut out = vec![0u8; 1 << 20];
        let mut filled = 0;
        while filled < out.len() {
            let input = io::BufRead::fill_buf(&mut s.input)?;
            let eof = input.is_empty();
            let (before_in, before_out) = (s.inflate.total_in(), s.inflate.total_out());
            let status = s
                .inflate
                .decompress(input, &mut out[filled..], flate2::FlushDecompress::None)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let used = (s.inflate.total_in() - before_in) as usize;
            io::BufRead::consume(&mut s.input, used);
            filled += (s.inflate.total_out() - before_out) as usize;
            if status == flate2::Status::StreamEnd {
                s.ended = true;
                break;
            }
            if eof && used == 0 && s.inflate.total_out() == before_out {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the gzip stream ends early",
                ));
            }
        }
        out.truncate(filled);
        s.crc.update(&out);
        self.current = out;
        self.pos = 0;
        if filled == 0 {
            return self.advance_serial();
        }
        Ok(true)
    }

    fn check_trailer(&mut self, sum: u32, amount: u32) -> io::Result<bool> {
        self.done = true;
        if sum != self.trailer_crc || amount != self.trailer_len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the gzip data does not match its CRC or length",
            ));
        }
        Ok(false)
    }
}

impl Read for IndexedGzipReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done || !self.advance()? {
                return Ok(0);
            }
        }
        let k = buf.len().min(self.current.len() - self.pos);
        buf[..k].copy_from_slice(&self.current[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

impl Drop for IndexedGzipReader {
    fn drop(&mut self) {
        self.stop_workers();
    }
}

