//! One gzip member, one bzip2 stream or one xz stream made of blocks
//! compressed independently, on several cores, and read back on several
//! cores: how each block is compressed (a [`CompressedBlock`]), how the pieces are
//! joined into the one member or stream every reader reads (a [`Joiner`]),
//! and, for gzip, where the blocks start (an index in the header's extra
//! field, which every gzip reader skips) and the reader that uses it.
//!
//! The stream is cut into blocks of [`BLOCK_SIZE`] bytes; the last block
//! (possibly empty) is the final one. So the bytes depend on the data and
//! the level only, never on the thread count or on which writer made them.
//!
//! - gzip, as pigz joins blocks: each block is a raw deflate stream of its
//!   own (no back-reference into the block before it), ended by a sync
//!   flush (an empty stored block, so it ends on a byte boundary) except
//!   the last, which ends the member. One CRC-32 (combined from the
//!   blocks') and one length cover the whole. When the output can be
//!   written again at its start (a file, not an upload), the header holds
//!   an index: subfield `Rd` of the extra field, see [`GzipIndex`].
//! - bzip2, as lbzip2 joins blocks: each block is cut where its run-length
//!   encoded size fills one bzip2 block, each part compressed alone, and
//!   the compressed blocks are joined bit by bit under one stream header
//!   and one end-of-stream mark with the combined CRC.
//! - xz, as `xz -T0` writes: each block is an xz block (its sizes in its
//!   header), under one stream header, with one index and footer.
//! - zstd: each block is a frame of its own (R and every zstd reader read
//!   concatenated frames).

use crate::compression::Compression;
use std::io::{self, Read, Write};

/// Uncompressed bytes per independently compressed block.
pub const BLOCK_SIZE: usize = 8 << 20;

/// log2 of [`BLOCK_SIZE`], as the gzip index records it.
const BLOCK_SHIFT: u8 = 23;

/// One block, compressed.
#[derive(Debug, Default)]
pub struct CompressedBlock {
    /// The compressed bytes (for bzip2, `bits` bits of them, first bit
    /// first).
    pub bytes: Vec<u8>,
    /// bzip2: how many bits of `bytes` are the blocks'.
    bits: u64,
    /// gzip: CRC-32 of the block's data.
    gz_crc: flate2::Crc,
    /// bzip2: the CRC its blocks combine to.
    crc: u32,
    /// Uncompressed bytes.
    len: u64,
    /// bzip2: how many bzip2 blocks; xz: the block's unpadded size.
    count: u64,
}

fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted by the user")
}

fn check_interrupt() -> io::Result<()> {
    if crate::base::cancel::interrupted() {
        return Err(interrupted());
    }
    Ok(())
}

/// Compress one block; `last`: it ends the stream (gzip only).
pub fn compress_piece(
    data: &[u8],
    kind: Compression,
    level: Option<u32>,
    last: bool,
) -> io::Result<CompressedBlock> {
    check_interrupt()?;
    let level = level.unwrap_or(kind.default_level());
    match kind {
        Compression::None => Ok(CompressedBlock {
            bytes: data.to_vec(),
            len: data.len() as u64,
            ..CompressedBlock::default()
        }),
        Compression::Gzip => deflate_piece(data, level, last),
        Compression::Bzip2 => bzip2_piece(data, level),
        Compression::Xz => xz_piece(data, level),
        Compression::Zstd => {
            let mut c = crate::compression::Compressor::new(
                Vec::with_capacity(data.len() / 3),
                kind,
                Some(level),
            )?;
            for part in data.chunks(1 << 18) {
                check_interrupt()?;
                c.write_all(part)?;
            }
            Ok(CompressedBlock {
                bytes: c.finish()?,
                len: data.len() as u64,
                ..CompressedBlock::default()
            })
        }
        // (a .qdata file's blocks are cut by its encoding, write::qdata,
        // never from a flat stream)
        Compression::Qs2 => Ok(CompressedBlock {
            bytes: crate::compression::qx::compress_blocks(data, level as i32)?,
            len: data.len() as u64,
            ..CompressedBlock::default()
        }),
        Compression::Lzma | Compression::LazyLoadZlib | Compression::Zlib | Compression::Qs | Compression::Qdata => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this compression is read-only; write gzip, bzip2, xz or zstd",
        )),
    }
}

// ---------------------------------------------------------------- gzip

/// A block as raw deflate (libdeflate: about twice zlib's speed, and
/// smaller, at the same level), ended by a sync flush unless it is the
/// last ([`end_without_closing`]).
fn deflate_piece(data: &[u8], level: u32, last: bool) -> io::Result<CompressedBlock> {
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
fn end_without_closing(out: &mut Vec<u8>) -> io::Result<()> {
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

const INDEX_ID: [u8; 2] = *b"Rd";
const INDEX_VERSION: u8 = 1;
/// Bytes of the subfield before its offsets.
const INDEX_FIXED: usize = 4 + 1 + 1 + 4 + 2;

/// A gzip header: R's (no name, no time, Unix), with an index subfield of
/// `room` starts when `room > 0`.
fn gzip_header(room: usize, index: Option<&GzipIndex>) -> Vec<u8> {
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

/// Bytes to write over a file's start once it is complete (the gzip
/// header with its index filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPatch {
    /// Where, from the file's start (a gzip header's index: 0; a qs2
    /// container's hash: 16).
    pub offset: u64,
    /// What.
    pub bytes: Vec<u8>,
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

fn parse_index(d: &[u8]) -> Option<GzipIndex> {
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

// --------------------------------------------------------------- bzip2

/// The magic numbers (48 bits) that open a bzip2 block and end a stream.
const BZ_BLOCK_MAGIC: u64 = 0x3141_5926_5359;
const BZ_END_MAGIC: u64 = 0x1772_4538_5090;

/// Bits written first bit first (bzip2's order).
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    /// Append the low `count` (<= 32) bits of `bits`.
    fn put(&mut self, bits: u64, count: u32) {
        self.acc = (self.acc << count) | (bits & ((1u64 << count) - 1));
        self.n += count;
        while self.n >= 8 {
            self.n -= 8;
            self.out.push((self.acc >> self.n) as u8);
        }
        self.acc &= (1u64 << self.n) - 1;
    }

    /// Append bits `start..end` of `src`.
    fn put_range(&mut self, src: &[u8], start: u64, end: u64) {
        let mut pos = start;
        while pos < end && pos % 8 != 0 {
            self.put(bit(src, pos), 1);
            pos += 1;
        }
        let whole = ((end - pos) / 8) as usize;
        let first = (pos / 8) as usize;
        if self.n == 0 {
            self.out.extend_from_slice(&src[first..first + whole]);
        } else {
            self.out.reserve(whole);
            for &b in &src[first..first + whole] {
                self.put(b as u64, 8);
            }
        }
        pos += 8 * whole as u64;
        while pos < end {
            self.put(bit(src, pos), 1);
            pos += 1;
        }
    }

    fn bits(&self) -> u64 {
        self.out.len() as u64 * 8 + self.n as u64
    }

    /// The bytes, the last padded with zero bits.
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
        self.out
    }
}

fn bit(src: &[u8], pos: u64) -> u64 {
    ((src[(pos / 8) as usize] >> (7 - pos % 8)) & 1) as u64
}

/// Bits `pos..pos + count` (count <= 48) of `src` as a number.
fn bits_at(src: &[u8], pos: u64, count: u32) -> Option<u64> {
    if pos + count as u64 > src.len() as u64 * 8 {
        return None;
    }
    Some((0..count as u64).fold(0u64, |v, k| (v << 1) | bit(src, pos + k)))
}

/// How many leading bytes of `data` run-length encode (bzip2's first
/// stage: runs of 4 to 255 equal bytes take 5) into at most `cap` bytes.
fn rle1_prefix(data: &[u8], cap: usize) -> usize {
    let (mut size, mut i) = (0usize, 0usize);
    while i < data.len() {
        let b = data[i];
        let mut j = i + 1;
        while j < data.len() && data[j] == b && j - i < 255 {
            j += 1;
        }
        let run = j - i;
        let cost = if run < 4 { run } else { 5 };
        if size + cost > cap {
            return i;
        }
        size += cost;
        i = j;
    }
    data.len()
}

/// A block as bzip2 blocks: cut so that each part fills at most one bzip2
/// block, each part compressed alone, their blocks' bits joined.
fn bzip2_piece(data: &[u8], level: u32) -> io::Result<CompressedBlock> {
    let level = level.clamp(1, 9);
    // libbzip2 closes a block at 100000 * level - 19 encoded bytes; a few
    // bytes short of that, a part is always one block
    let cap = 100_000 * level as usize - 19 - 10;
    let mut w = BitWriter::default();
    let (mut crc, mut count) = (0u32, 0u64);
    let mut rest = data;
    while !rest.is_empty() {
        check_interrupt()?;
        let n = rle1_prefix(rest, cap).max(1);
        let (part, tail) = rest.split_at(n);
        rest = tail;
        let mut c = bzip2::Compress::new(bzip2::Compression::new(level), 30);
        let mut out = Vec::with_capacity(part.len() + part.len() / 100 + 600);
        loop {
            let before = c.total_in() as usize;
            let status = c
                .compress_vec(&part[before..], &mut out, bzip2::Action::Finish)
                .map_err(io::Error::other)?;
            if status == bzip2::Status::StreamEnd {
                break;
            }
            out.reserve(out.capacity().max(1 << 16));
        }
        let (start, end, block_crc) = bzip2_block_bits(&out)
            .ok_or_else(|| io::Error::other("bzip2 made a stream of other than one block"))?;
        w.put_range(&out, start, end);
        crc = crc.rotate_left(1) ^ block_crc;
        count += 1;
    }
    let bits = w.bits();
    Ok(CompressedBlock {
        bytes: w.finish(),
        bits,
        crc,
        len: data.len() as u64,
        count,
        ..CompressedBlock::default()
    })
}

/// In a bzip2 stream of one block: where its block's bits start and end,
/// and the block's CRC (`None` unless the stream is exactly one block).
fn bzip2_block_bits(s: &[u8]) -> Option<(u64, u64, u32)> {
    let total = s.len() as u64 * 8;
    // the stream ends: end magic, combined CRC, zero bits to a byte
    for pad in 0..8u64 {
        let Some(end) = total.checked_sub(pad + 80) else {
            break;
        };
        if bits_at(s, end, 48)? != BZ_END_MAGIC || bits_at(s, end + 80, pad as u32)? != 0 {
            continue;
        }
        let combined = bits_at(s, end + 48, 32)? as u32;
        if end < 32 + 80 || bits_at(s, 32, 48)? != BZ_BLOCK_MAGIC {
            return None;
        }
        let block_crc = bits_at(s, 32 + 48, 32)? as u32;
        // one block: the stream's CRC is the block's, rotated from zero
        return (combined == block_crc).then_some((32, end, block_crc));
    }
    None
}

// ------------------------------------------------------------------ xz

/// R's integrity check for xz files (CRC-32).
const XZ_CHECK: liblzma_sys::lzma_check = liblzma_sys::LZMA_CHECK_CRC32;

/// A block as one xz block (its sizes in its header); empty data is no
/// block at all.
fn xz_piece(data: &[u8], level: u32) -> io::Result<CompressedBlock> {
    if data.is_empty() {
        return Ok(CompressedBlock::default());
    }
    let level = level.min(9);
    // SAFETY: liblzma's single-call block encoder, given options and
    // buffers that live across the call and their true lengths
    unsafe {
        let mut opts: liblzma_sys::lzma_options_lzma = std::mem::zeroed();
        if liblzma_sys::lzma_lzma_preset(&mut opts, level) != 0 {
            return Err(io::Error::other("xz cannot take this level"));
        }
        // a dictionary beyond the block finds nothing more
        opts.dict_size = opts.dict_size.min(data.len().max(4096) as u32);
        let mut filters = [
            liblzma_sys::lzma_filter {
                id: liblzma_sys::LZMA_FILTER_LZMA2,
                options: (&mut opts as *mut liblzma_sys::lzma_options_lzma).cast(),
            },
            liblzma_sys::lzma_filter {
                id: liblzma_sys::LZMA_VLI_UNKNOWN,
                options: std::ptr::null_mut(),
            },
        ];
        let mut block: liblzma_sys::lzma_block = std::mem::zeroed();
        block.version = 1;
        block.check = XZ_CHECK;
        block.filters = filters.as_mut_ptr();
        block.compressed_size = liblzma_sys::LZMA_VLI_UNKNOWN;
        block.uncompressed_size = liblzma_sys::LZMA_VLI_UNKNOWN;
        let bound = liblzma_sys::lzma_block_buffer_bound(data.len());
        let mut out = vec![0u8; bound];
        let mut pos = 0usize;
        let rc = liblzma_sys::lzma_block_buffer_encode(
            &mut block,
            std::ptr::null(),
            data.as_ptr(),
            data.len(),
            out.as_mut_ptr(),
            &mut pos,
            bound,
        );
        if rc != liblzma_sys::LZMA_OK {
            return Err(io::Error::other(format!("xz cannot compress (code {rc})")));
        }
        out.truncate(pos);
        out.shrink_to_fit();
        Ok(CompressedBlock {
            bytes: out,
            len: data.len() as u64,
            count: liblzma_sys::lzma_block_unpadded_size(&block),
            ..CompressedBlock::default()
        })
    }
}

fn xz_stream_flags(backward_size: u64) -> liblzma_sys::lzma_stream_flags {
    // SAFETY: a plain C struct, zero its neutral value
    let mut f: liblzma_sys::lzma_stream_flags = unsafe { std::mem::zeroed() };
    f.version = 0;
    f.check = XZ_CHECK;
    f.backward_size = backward_size;
    f
}

// --------------------------------------------------------------- joiner

/// Joins pieces, in order, into one member or stream.
pub struct Joiner {
    kind: Compression,
    level: u32,
    /// Bytes written so far.
    written: u64,
    /// Pieces joined so far.
    pieces: u64,
    started: bool,
    /// gzip: the whole's CRC and length; whether an index is kept, its
    /// room, and every block's start.
    crc: flate2::Crc,
    indexed: bool,
    room: usize,
    starts: Vec<u64>,
    /// bzip2: bits not yet a whole byte, and the combined CRC.
    bits: BitWriter,
    bz_crc: u32,
    /// xz: each block's unpadded and uncompressed sizes.
    xz_blocks: Vec<(u64, u64)>,
    /// qs2: whether the output can be written again (for the hash in the
    /// header), and the hash of the blocks so far.
    patchable: bool,
    qx_hash: crate::compression::qx::BodyHash,
}

impl Joiner {
    /// A joiner for `kind`; `indexed`: reserve a gzip index (the caller
    /// writes [`Joiner::finish`]'s patch over the file's start).
    pub fn new(kind: Compression, level: Option<u32>, indexed: bool) -> Joiner {
        Joiner {
            kind,
            level: level.unwrap_or(kind.default_level()),
            written: 0,
            pieces: 0,
            started: false,
            crc: flate2::Crc::new(),
            indexed: indexed && kind == Compression::Gzip,
            room: 0,
            starts: Vec::new(),
            bits: BitWriter::default(),
            bz_crc: 0,
            xz_blocks: Vec::new(),
            patchable: indexed,
            qx_hash: crate::compression::qx::body_hash(),
        }
    }

    fn emit(&mut self, out: &mut dyn Write, b: &[u8]) -> io::Result<()> {
        self.written += b.len() as u64;
        out.write_all(b)
    }

    /// The stream's header, before the first piece (`last`: that piece is
    /// the only one).
    fn start(&mut self, out: &mut dyn Write, first: &CompressedBlock, last: bool) -> io::Result<()> {
        self.started = true;
        let head = match self.kind {
            Compression::Gzip => {
                if self.indexed && !last {
                    // 8 bytes per 2 KiB of the first block: at most 0.4 %
                    self.room = (first.bytes.len() / 2048).clamp(1, 255);
                }
                gzip_header(self.room, None)
            }
            Compression::Bzip2 => vec![b'B', b'Z', b'h', b'0' + self.level.clamp(1, 9) as u8],
            Compression::Xz => {
                let mut h = vec![0u8; 12];
                let flags = xz_stream_flags(0);
                // SAFETY: a 12-byte buffer, as liblzma writes
                let rc = unsafe { liblzma_sys::lzma_stream_header_encode(&flags, h.as_mut_ptr()) };
                if rc != liblzma_sys::LZMA_OK {
                    return Err(io::Error::other("xz cannot write its header"));
                }
                h
            }
            Compression::Qs2 => crate::compression::qx::QxHeader::written(crate::compression::qx::QxFormat::Qs2).to_vec(),
            _ => Vec::new(),
        };
        self.emit(out, &head)
    }

    /// Append the next piece (`last`: it ends the stream).
    pub fn push(&mut self, out: &mut dyn Write, piece: CompressedBlock, last: bool) -> io::Result<()> {
        if !self.started {
            self.start(out, &piece, last)?;
        }
        self.pieces += 1;
        match self.kind {
            Compression::Gzip => {
                self.starts.push(self.written);
                self.crc.combine(&piece.gz_crc);
                self.emit(out, &piece.bytes)
            }
            Compression::Bzip2 => {
                self.bits.put_range(&piece.bytes, 0, piece.bits);
                self.bz_crc = self.bz_crc.rotate_left((piece.count % 32) as u32) ^ piece.crc;
                let whole = std::mem::take(&mut self.bits.out);
                self.emit(out, &whole)
            }
            Compression::Xz => {
                if piece.len > 0 {
                    self.xz_blocks.push((piece.count, piece.len));
                }
                self.emit(out, &piece.bytes)
            }
            Compression::Qs2 => {
                std::hash::Hasher::write(&mut self.qx_hash, &piece.bytes);
                self.emit(out, &piece.bytes)
            }
            _ => self.emit(out, &piece.bytes),
        }
    }

    /// End the stream: its trailer, and for an indexed gzip file the
    /// header to write over its start.
    pub fn finish(mut self, out: &mut dyn Write) -> io::Result<Option<HeaderPatch>> {
        if !self.started {
            let empty = compress_piece(&[], self.kind, Some(self.level), true)?;
            self.push(out, empty, true)?;
        }
        match self.kind {
            Compression::Gzip => {
                let mut t = self.crc.sum().to_le_bytes().to_vec();
                t.extend(self.crc.amount().to_le_bytes());
                self.emit(out, &t)?;
                if self.room == 0 {
                    return Ok(None);
                }
                // every `stride`-th start, the room's worth
                let inner = &self.starts[1..];
                let stride = inner.len().div_ceil(self.room).max(1);
                let starts: Vec<u64> = inner
                    .iter()
                    .skip(stride - 1)
                    .step_by(stride)
                    .copied()
                    .collect();
                let index = GzipIndex {
                    stride: stride as u32,
                    starts,
                };
                Ok(Some(HeaderPatch {
                    offset: 0,
                    bytes: gzip_header(self.room, Some(&index)),
                }))
            }
            Compression::Bzip2 => {
                let mut bits = std::mem::take(&mut self.bits);
                bits.put(BZ_END_MAGIC >> 24, 24);
                bits.put(BZ_END_MAGIC & 0xff_ffff, 24);
                bits.put(self.bz_crc as u64, 32);
                let tail = bits.finish();
                self.emit(out, &tail)?;
                Ok(None)
            }
            Compression::Xz => {
                let tail = self.xz_tail()?;
                self.emit(out, &tail)?;
                Ok(None)
            }
            // the hash of every byte after the header, in the header (an
            // upload, which cannot be written again, keeps 0: not stored)
            Compression::Qs2 if self.patchable => Ok(Some(HeaderPatch {
                offset: crate::compression::qx::HASH_AT as u64,
                bytes: crate::compression::qx::stored_hash(std::hash::Hasher::finish(&self.qx_hash)).to_vec(),
            })),
            _ => Ok(None),
        }
    }

    /// The xz index and stream footer.
    fn xz_tail(&self) -> io::Result<Vec<u8>> {
        // SAFETY: liblzma's index, made, encoded into a buffer of its
        // encoded size, and freed here
        unsafe {
            let idx = liblzma_sys::lzma_index_init(std::ptr::null());
            if idx.is_null() {
                return Err(io::Error::other("xz cannot make its index"));
            }
            let mut res = Ok(());
            for &(unpadded, len) in &self.xz_blocks {
                if liblzma_sys::lzma_index_append(idx, std::ptr::null(), unpadded, len)
                    != liblzma_sys::LZMA_OK
                {
                    res = Err(io::Error::other("xz cannot index a block"));
                    break;
                }
            }
            let size = liblzma_sys::lzma_index_size(idx) as usize;
            let mut buf = vec![0u8; size + 12];
            let mut pos = 0usize;
            if res.is_ok()
                && liblzma_sys::lzma_index_buffer_encode(idx, buf.as_mut_ptr(), &mut pos, size)
                    != liblzma_sys::LZMA_OK
            {
                res = Err(io::Error::other("xz cannot write its index"));
            }
            liblzma_sys::lzma_index_end(idx, std::ptr::null());
            res?;
            let flags = xz_stream_flags(size as u64);
            if liblzma_sys::lzma_stream_footer_encode(&flags, buf.as_mut_ptr().add(size))
                != liblzma_sys::LZMA_OK
            {
                return Err(io::Error::other("xz cannot write its footer"));
            }
            Ok(buf)
        }
    }
}

// ---------------------------------------------------------- reading back

/// How many chunks (of `stride` blocks) may be inflated ahead of the
/// reader, per thread.
const AHEAD_PER_THREAD: usize = 2;

/// The window deflate may reach back.
const WINDOW: usize = 32 << 10;

/// A chunk of the file: compressed range, and how many bytes it inflates
/// to (for the last, as the trailer's length gives it).
#[derive(Debug, Clone, Copy)]
struct Chunk {
    start: u64,
    end: u64,
    out: usize,
}

type Inflated = io::Result<(Vec<u8>, flate2::Crc)>;

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
struct SerialRest {
    input: io::BufReader<FileFrom>,
    inflate: flate2::Decompress,
    crc: flate2::Crc,
    ended: bool,
}

/// A file read from an offset on (positional reads: the workers share it).
struct FileFrom {
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

fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, at)
    }
}

fn read_exact_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let n = read_at(file, &mut buf[got..], at + got as u64)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got += n;
    }
    Ok(())
}

/// The chunks of an indexed gzip file, when its index is well formed and
/// agrees with the file's layout (increasing starts, each just after a
/// sync flush's mark, inside the member; the trailer at the file's end).
fn plan_chunks(file: &std::fs::File, len: u64) -> Option<(Vec<Chunk>, u32, u32)> {
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
fn inflate_chunk(file: &std::fs::File, c: Chunk, last: bool) -> Inflated {
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

/// An xz file inflated by liblzma's multithreaded decoder (blocks whose
/// sizes their headers give, as rdarrow and `xz -T` write them, decode on
/// `threads` cores; others on one), concatenated streams read as R reads
/// them.
pub struct XzMtReader<R: io::BufRead> {
    input: R,
    strm: liblzma_sys::lzma_stream,
    ended: bool,
}

// SAFETY: the liblzma stream is owned by this reader alone and used from
// one thread at a time
unsafe impl<R: io::BufRead + Send> Send for XzMtReader<R> {}

impl<R: io::BufRead> XzMtReader<R> {
    /// A decoder of `input` on `threads` threads, within `memlimit`.
    pub fn new(input: R, threads: usize, memlimit: u64) -> io::Result<Self> {
        // SAFETY: a zeroed lzma_stream is LZMA_STREAM_INIT; the options
        // are read during the call only
        unsafe {
            let mut strm: liblzma_sys::lzma_stream = std::mem::zeroed();
            let mut mt: liblzma_sys::lzma_mt = std::mem::zeroed();
            mt.flags = liblzma_sys::LZMA_CONCATENATED;
            mt.threads = threads.clamp(1, 64) as u32;
            mt.memlimit_threading = memlimit;
            mt.memlimit_stop = memlimit;
            let rc = liblzma_sys::lzma_stream_decoder_mt(&mut strm, &mt);
            if rc != liblzma_sys::LZMA_OK {
                return Err(io::Error::other(format!(
                    "xz cannot start its decoder (code {rc})"
                )));
            }
            Ok(XzMtReader {
                input,
                strm,
                ended: false,
            })
        }
    }
}

impl<R: io::BufRead> Read for XzMtReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.input.fill_buf()?;
            let action = if input.is_empty() {
                liblzma_sys::LZMA_FINISH
            } else {
                liblzma_sys::LZMA_RUN
            };
            self.strm.next_in = input.as_ptr();
            self.strm.avail_in = input.len();
            self.strm.next_out = buf.as_mut_ptr();
            self.strm.avail_out = buf.len();
            // SAFETY: the buffers are valid for the lengths given
            let rc = unsafe { liblzma_sys::lzma_code(&mut self.strm, action) };
            let used = input.len() - self.strm.avail_in;
            self.input.consume(used);
            let produced = buf.len() - self.strm.avail_out;
            match rc {
                liblzma_sys::LZMA_OK => {}
                liblzma_sys::LZMA_STREAM_END => {
                    self.ended = true;
                    return Ok(produced);
                }
                liblzma_sys::LZMA_MEMLIMIT_ERROR | liblzma_sys::LZMA_MEM_ERROR => {
                    return Err(io::Error::other(
                        "xz: the stream needs more memory than allowed",
                    ))
                }
                liblzma_sys::LZMA_BUF_ERROR => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the xz stream ends early",
                    ))
                }
                rc => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("corrupt xz data (code {rc})"),
                    ))
                }
            }
            if produced > 0 {
                return Ok(produced);
            }
        }
    }
}

impl<R: io::BufRead> Drop for XzMtReader<R> {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, ended once
        unsafe { liblzma_sys::lzma_end(&mut self.strm) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::parallel::ParallelCompressor;

    fn sample(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i % 251) as u8 ^ (i / 7919) as u8).wrapping_mul((i / 65_536 % 3) as u8 + 1))
            .collect()
    }

    /// `data` compressed as a file would be (the gzip index patched in).
    fn compressed(data: &[u8], kind: Compression) -> Vec<u8> {
        let mut c = ParallelCompressor::indexed(Vec::new(), kind, Some(1), 2).unwrap();
        c.write_all(data).unwrap();
        let (mut out, patch) = c.finish_indexed().unwrap();
        if let Some(p) = patch {
            out[..p.bytes.len()].copy_from_slice(&p.bytes);
        }
        out
    }

    #[test]
    fn one_member_or_stream_read_by_single_stream_readers() {
        for len in [0, 1, 1000, BLOCK_SIZE, 2 * BLOCK_SIZE + 77] {
            let data = sample(len);
            let gz = compressed(&data, Compression::Gzip);
            // a single-member reader reads all of it, and nothing follows
            let mut d = flate2::read::GzDecoder::new(&gz[..]);
            let mut back = Vec::new();
            d.read_to_end(&mut back).unwrap();
            assert!(back == data, "gzip, {len} bytes");
            let bz = compressed(&data, Compression::Bzip2);
            let mut back = Vec::new();
            bzip2::read::BzDecoder::new(&bz[..])
                .read_to_end(&mut back)
                .unwrap();
            assert!(back == data, "bzip2, {len} bytes");
            let xz = compressed(&data, Compression::Xz);
            let mut back = Vec::new();
            liblzma::read::XzDecoder::new(&xz[..])
                .read_to_end(&mut back)
                .unwrap();
            assert!(back == data, "xz, {len} bytes");
        }
    }

    #[test]
    fn gzip_index_records_block_starts_and_small_files_have_none() {
        let small = compressed(&sample(1000), Compression::Gzip);
        assert_eq!(small[3], 0, "one block: R's plain header");
        let data = sample(3 * BLOCK_SIZE + 5);
        let gz = compressed(&data, Compression::Gzip);
        let head = parse_gzip_head(&gz).unwrap();
        let index = head.index.expect("an index");
        assert_eq!(index.stride, 1);
        assert_eq!(index.starts.len(), 3);
        for &s in &index.starts {
            assert_eq!(&gz[s as usize - 4..s as usize], &[0, 0, 0xff, 0xff]);
        }
    }

    fn read_file(bytes: &[u8], name: &str) -> Option<io::Result<Vec<u8>>> {
        let path =
            std::env::temp_dir().join(format!("rdarrow-joined-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let r = IndexedGzipReader::open(f, bytes.len() as u64, 3);
        let _ = std::fs::remove_file(&path);
        r.map(|mut r| {
            let mut out = Vec::new();
            r.read_to_end(&mut out).map(|_| out)
        })
    }

    #[test]
    fn read_on_every_core_as_serially_and_mutated_offsets_never_read_wrongly() {
        let data = sample(4 * BLOCK_SIZE + 1234);
        let gz = compressed(&data, Compression::Gzip);
        assert!(read_file(&gz, "intact").expect("indexed").unwrap() == data);
        let head = parse_gzip_head(&gz).unwrap();
        let index = head.index.unwrap();
        // the offsets' place in the header
        let first = 10 + 2 + INDEX_FIXED;
        let starts = index.starts.clone();
        let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
        for k in 0..starts.len() {
            for v in [
                starts[k] + 1,
                starts[k] - 1,
                starts[(k + 1) % starts.len()],
                0,
                u64::MAX,
                gz.len() as u64 - 8,
                starts[k] + 4,
            ] {
                let mut m = gz.clone();
                m[first + 8 * k..first + 8 * k + 8].copy_from_slice(&v.to_le_bytes());
                cases.push((format!("start {k} = {v}"), m));
            }
        }
        for (what, byte, value) in [
            ("stride", 10 + 2 + 6, 2u8),
            ("count", 10 + 2 + 10, 9u8),
            ("count", 10 + 2 + 10, 1u8),
            ("version", 10 + 2 + 4, 7u8),
        ] {
            let mut m = gz.clone();
            m[byte] = value;
            cases.push((format!("{what} = {value}"), m));
        }
        // offsets that agree with the marks but not with the blocks: a
        // block boundary recorded one stride too early
        let mut m = gz.clone();
        m[first..first + 8].copy_from_slice(&starts[1].to_le_bytes());
        m[first + 8..first + 16].copy_from_slice(&starts[0].to_le_bytes());
        cases.push(("swapped".into(), m));
        for (what, bytes) in cases {
            match read_file(&bytes, "mutated") {
                None => {}
                Some(Ok(out)) => assert!(out == data, "{what}: read wrongly"),
                Some(Err(e)) => panic!("{what}: an intact file refused: {e}"),
            }
        }
        // damaged data (not the index) is an error, never wrong data
        let mut m = gz.clone();
        let mid = starts[1] as usize + 1000;
        m[mid] ^= 0x20;
        if let Some(Ok(out)) = read_file(&m, "damaged") {
            panic!("damaged data read as {} bytes", out.len());
        }
    }

    #[test]
    fn blocks_that_reach_back_are_read_serially_with_their_history() {
        // as pigz writes by default: each block primed with the 32 KiB
        // before it, so a block cannot be inflated on its own
        let data: Vec<u8> = (0..3 * BLOCK_SIZE + 99)
            .map(|i| ((i % 1000) as u8) ^ ((i / 3_000_000) as u8))
            .collect();
        let room = 4;
        let mut body = Vec::new();
        let mut starts = Vec::new();
        let head_len = gzip_header(room, None).len() as u64;
        let mut crc = flate2::Crc::new();
        let pieces: Vec<&[u8]> = data.chunks(BLOCK_SIZE).collect();
        for (k, piece) in pieces.iter().enumerate() {
            if k > 0 {
                starts.push(head_len + body.len() as u64);
            }
            let mut c = flate2::Compress::new(flate2::Compression::new(6), false);
            if k > 0 {
                let prev = pieces[k - 1];
                c.set_dictionary(&prev[prev.len() - WINDOW..]).unwrap();
            }
            let last = k + 1 == pieces.len();
            let mut out = Vec::with_capacity(piece.len() + 1024);
            c.compress_vec(
                piece,
                &mut out,
                if last {
                    flate2::FlushCompress::Finish
                } else {
                    flate2::FlushCompress::Sync
                },
            )
            .unwrap();
            body.extend(out);
            crc.update(piece);
        }
        let index = GzipIndex { stride: 1, starts };
        let mut gz = gzip_header(room, Some(&index));
        gz.extend(body);
        gz.extend(crc.sum().to_le_bytes());
        gz.extend(crc.amount().to_le_bytes());
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == data, "the file is valid gzip");
        // the second block cannot be inflated alone: the reader falls back
        let path = std::env::temp_dir().join(format!("rdarrow-joined-{}-hist", std::process::id()));
        std::fs::write(&path, &gz).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let (chunks, _, _) = plan_chunks(&f, gz.len() as u64).unwrap();
        assert!(inflate_chunk(&f, chunks[0], false).is_ok());
        assert!(inflate_chunk(&f, chunks[1], false).is_err());
        let _ = std::fs::remove_file(&path);
        let got = read_file(&gz, "history").expect("its index agrees with its layout");
        assert!(got.unwrap() == data);
    }

    #[test]
    fn libdeflate_streams_go_on_after_their_last_block() {
        // compressible and random data, every kind of last block (fixed,
        // dynamic, stored), at every level
        let mut seed = 7u64;
        let random: Vec<u8> = (0..200_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        for data in [sample(10), sample(1000), sample(3_000_000), random] {
            for level in [0, 1, 6, 9, 12] {
                let piece = deflate_piece(&data, level, false).unwrap();
                assert!(piece.bytes.ends_with(&[0, 0, 0xff, 0xff]));
                // closed by a final empty stored block, it inflates to the data
                let mut closed = piece.bytes.clone();
                closed.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
                let mut d = flate2::Decompress::new(false);
                let mut out = vec![0u8; data.len() + 16];
                let status = d
                    .decompress(&closed, &mut out, flate2::FlushDecompress::Finish)
                    .unwrap();
                assert_eq!(
                    status,
                    flate2::Status::StreamEnd,
                    "{} bytes, level {level}",
                    data.len()
                );
                assert_eq!(d.total_in() as usize, closed.len());
                assert!(out[..d.total_out() as usize] == data[..]);
            }
        }
    }

    #[test]
    fn bzip2_parts_are_single_blocks_even_for_runs() {
        // runs of 4 bytes expand most under bzip2's run-length stage
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i / 4) as u8).collect();
        let piece = bzip2_piece(&data, 9).unwrap();
        assert!(piece.count >= 4, "{} blocks", piece.count);
        let bz = compressed(&data, Compression::Bzip2);
        let mut back = Vec::new();
        bzip2::read::BzDecoder::new(&bz[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == data);
    }
}
