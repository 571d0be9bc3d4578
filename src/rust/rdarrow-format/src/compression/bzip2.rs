//! bzip2's blocks, as lbzip2 joins them: a block cut where its run-length
//! encoded size fills one bzip2 block, each part compressed alone, their
//! blocks' bits (and each block's CRC) taken out to be joined bit by bit
//! under one stream header and one end-of-stream mark with the combined CRC.

use crate::compression::piece::{check_interrupt, CompressedBlock};
use std::io;

// --------------------------------------------------------------- bzip2

/// The magic numbers (48 bits) that open a bzip2 block and end a stream.
pub(crate) const BZ_BLOCK_MAGIC: u64 = 0x3141_5926_5359;
pub(crate) const BZ_END_MAGIC: u64 = 0x1772_4538_5090;

/// Bits written first bit first (bzip2's order).
#[derive(Default)]
pub(crate) struct BitWriter {
    pub(crate) out: Vec<u8>,
    pub(crate) acc: u64,
    pub(crate) n: u32,
}

impl BitWriter {
    /// Append the low `count` (<= 32) bits of `bits`.
    pub(crate) fn put(&mut self, bits: u64, count: u32) {
        self.acc = (self.acc << count) | (bits & ((1u64 << count) - 1));
        self.n += count;
        while self.n >= 8 {
            self.n -= 8;
            self.out.push((self.acc >> self.n) as u8);
        }
        self.acc &= (1u64 << self.n) - 1;
    }

    /// Append bits `start..end` of `src`.
    pub(crate) fn put_range(&mut self, src: &[u8], start: u64, end: u64) {
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

    pub(crate) fn bits(&self) -> u64 {
        self.out.len() as u64 * 8 + self.n as u64
    }

    /// The bytes, the last padded with zero bits.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
        self.out
    }
}

pub(crate) fn bit(src: &[u8], pos: u64) -> u64 {
    ((src[(pos / 8) as usize] >> (7 - pos % 8)) & 1) as u64
}

/// Bits `pos..pos + count` (count <= 48) of `src` as a number.
pub(crate) fn bits_at(src: &[u8], pos: u64, count: u32) -> Option<u64> {
    if pos + count as u64 > src.len() as u64 * 8 {
        return None;
    }
    Some((0..count as u64).fold(0u64, |v, k| (v << 1) | bit(src, pos + k)))
}

/// How many leading bytes of `data` run-length encode (bzip2's first
/// stage: runs of 4 to 255 equal bytes take 5) into at most `cap` bytes.
pub(crate) fn rle1_prefix(data: &[u8], cap: usize) -> usize {
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
pub(crate) fn bzip2_piece(data: &[u8], level: u32) -> io::Result<CompressedBlock> {
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
pub(crate) fn bzip2_block_bits(s: &[u8]) -> Option<(u64, u64, u32)> {
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

