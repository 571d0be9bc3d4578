//! fst's block codecs: a block of a column stored raw, by LZ4 or ZSTD,
//! its bytes shuffled (4- and 8-byte values) or its values packed
//! (logicals 32 to a word, factor codes in a byte or two), read and
//! written; and how `fst::write_fst()` spreads its codecs over the blocks
//! of a column at a compression level (0-100).

use std::io;

/// Damage found in the file, said as `what`.
pub(crate) fn damaged(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// The little-endian `u64` at `at`.
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// fst's block codecs by the number it stores (its `CompAlgo`).
pub(super) mod algo {
    pub const RAW: u16 = 0;
    pub const LZ4: u16 = 1;
    pub const LZ4_SHUF4: u16 = 2;
    pub const ZSTD: u16 = 3;
    pub const ZSTD_SHUF4: u16 = 4;
    pub const LZ4_SHUF8: u16 = 5;
    pub const ZSTD_SHUF8: u16 = 6;
    pub const LZ4_LOGIC64: u16 = 7;
    pub const LOGIC64: u16 = 8;
    pub const ZSTD_LOGIC64: u16 = 9;
    pub const LZ4_INT_TO_BYTE: u16 = 10;
    pub const LZ4_INT_TO_SHORT: u16 = 11;
    pub const INT_TO_BYTE: u16 = 12;
    pub const INT_TO_SHORT: u16 = 13;
    pub const ZSTD_INT_TO_BYTE: u16 = 14;
    pub const ZSTD_INT_TO_SHORT: u16 = 15;
}

/// The order in which fst's shuffles and packings place 8 values in a
/// word: byte `j` of a word belongs to value `SHUFFLE_ORDER[j]`.
const SHUFFLE_ORDER: [usize; 8] = [6, 4, 2, 0, 7, 5, 3, 1];

/// Inflate `src` with LZ4 (a raw block) or ZSTD into exactly `len` bytes.
fn inflate(zstd: bool, src: &[u8], len: usize, what: &dyn Fn() -> String) -> io::Result<Vec<u8>> {
    let mut out = vec![0u8; len];
    let got = if zstd {
        zstd::bulk::decompress_to_buffer(src, &mut out[..]).map_err(|_| None::<usize>)
    } else {
        lz4_flex::block::decompress_into(src, &mut out[..]).map_err(|_| None)
    };
    match got {
        Ok(n) if n == len => Ok(out),
        Ok(n) => Err(damaged(format!("{} inflates to {n} bytes, not the {len} it holds: the file is damaged", what()))),
        Err(_) => Err(damaged(format!(
            "{} does not inflate ({}): the file is damaged",
            what(),
            if zstd { "ZSTD" } else { "LZ4" }
        ))),
    }
}

/// 4-byte values whose bytes fst's shuffle grouped (most significant
/// bytes of each 8 values first), back in order; the values after the
/// last whole 8 are stored as they are.
fn unshuffle4(s: &[u8]) -> Vec<u8> {
    let n = s.len() / 4;
    let groups = n / 8;
    let mut out = vec![0u8; s.len()];
    for seg in 0..4 {
        let byte = 3 - seg;
        for g in 0..groups {
            let word = &s[(seg * groups + g) * 8..][..8];
            for (j, &b) in word.iter().enumerate() {
                out[(8 * g + SHUFFLE_ORDER[j]) * 4 + byte] = b;
            }
        }
    }
    out[groups * 32..].copy_from_slice(&s[groups * 32..]);
    out
}

/// 8-byte values shuffled likewise (each word the same byte of 8 values,
/// in reverse order).
fn unshuffle8(s: &[u8]) -> Vec<u8> {
    let n = s.len() / 8;
    let groups = n / 8;
    let mut out = vec![0u8; s.len()];
    for seg in 0..8 {
        let byte = 7 - seg;
        for g in 0..groups {
            let word = &s[(seg * groups + g) * 8..][..8];
            for (j, &b) in word.iter().enumerate() {
                out[(8 * g + 7 - j) * 8 + byte] = b;
            }
        }
    }
    out[groups * 64..].copy_from_slice(&s[groups * 64..]);
    out
}

/// Logicals packed 32 to a word: value `i` of a word has its TRUE bit at
/// `i / 2 + 32 * (i % 2)` and its NA bit at `31 - i / 2 + 32 * (i % 2)`.
fn unpack_logicals(packed: &[u8], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * n);
    for i in 0..n {
        let w = u64_at(packed, 8 * (i / 32));
        let k = i % 32;
        let half = 32 * (k % 2);
        let truth = (w >> (k / 2 + half)) & 1;
        let na = (w >> (31 - k / 2 + half)) & 1;
        out.extend_from_slice(&((na as u32) << 31 | truth as u32).to_le_bytes());
    }
    out
}

/// Factor codes packed a byte each (7 bits and the NA bit), 8 to a word.
fn unpack_bytes(packed: &[u8], n: usize) -> Vec<u8> {
    let mut out = vec![0u8; 4 * n];
    for (w, word) in packed.chunks_exact(8).enumerate() {
        for (j, &b) in word.iter().enumerate() {
            let i = 8 * w + SHUFFLE_ORDER[j];
            if i < n {
                let v = u32::from(b & 0x7f) | (u32::from(b >> 7) << 31);
                out[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// Factor codes packed in 2 bytes each (15 bits and the NA bit), 4 to a
/// word: the shorts of a word hold values 2, 0, 3 and 1.
fn unpack_shorts(packed: &[u8], n: usize) -> Vec<u8> {
    const ORDER: [usize; 4] = [2, 0, 3, 1];
    let mut out = vec![0u8; 4 * n];
    for (w, word) in packed.chunks_exact(8).enumerate() {
        for (j, s) in word.chunks_exact(2).enumerate() {
            let i = 4 * w + ORDER[j];
            if i < n {
                let s = u16::from_le_bytes([s[0], s[1]]);
                let v = u32::from(s & 0x7fff) | (u32::from(s >> 15) << 31);
                out[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// One block stored by codec `code`, decoded to the `len` bytes it holds.
/// `what` names the block in errors.
pub fn decode_block(code: u16, src: &[u8], len: usize, what: &dyn Fn() -> String) -> io::Result<Vec<u8>> {
    use algo::*;
    let ints = len / 4;
    let packed = |per_word: usize| 8 * ints.div_ceil(per_word);
    let exact = |want: usize| -> io::Result<()> {
        if src.len() != want {
            return Err(damaged(format!(
                "{} holds {} bytes where its values take {want}: the file is damaged",
                what(),
                src.len()
            )));
        }
        Ok(())
    };
    let four = || -> io::Result<()> {
        if len % 4 != 0 {
            return Err(damaged(format!("{} uses a codec of 4-byte values for {len} bytes", what())));
        }
        Ok(())
    };
    Ok(match code {
        RAW => {
            exact(len)?;
            src.to_vec()
        }
        LZ4 | ZSTD => inflate(code == ZSTD, src, len, what)?,
        LZ4_SHUF4 | ZSTD_SHUF4 => {
            four()?;
            unshuffle4(&inflate(code == ZSTD_SHUF4, src, len, what)?)
        }
        LZ4_SHUF8 | ZSTD_SHUF8 => {
            if len % 8 != 0 {
                return Err(damaged(format!("{} uses a codec of 8-byte values for {len} bytes", what())));
            }
            unshuffle8(&inflate(code == ZSTD_SHUF8, src, len, what)?)
        }
        LOGIC64 => {
            four()?;
            exact(packed(32))?;
            unpack_logicals(src, ints)
        }
        LZ4_LOGIC64 | ZSTD_LOGIC64 => {
            four()?;
            unpack_logicals(&inflate(code == ZSTD_LOGIC64, src, packed(32), what)?, ints)
        }
        INT_TO_BYTE => {
            four()?;
            exact(packed(8))?;
            unpack_bytes(src, ints)
        }
        LZ4_INT_TO_BYTE | ZSTD_INT_TO_BYTE => {
            four()?;
            unpack_bytes(&inflate(code == ZSTD_INT_TO_BYTE, src, packed(8), what)?, ints)
        }
        INT_TO_SHORT => {
            four()?;
            exact(packed(4))?;
            unpack_shorts(src, ints)
        }
        LZ4_INT_TO_SHORT | ZSTD_INT_TO_SHORT => {
            four()?;
            unpack_shorts(&inflate(code == ZSTD_INT_TO_SHORT, src, packed(4), what)?, ints)
        }
        other => {
            return Err(damaged(format!(
                "{} is stored by codec {other}, which fst does not have: the file is damaged",
                what()
            )))
        }
    })
}

/// 4-byte values shuffled as fst shuffles them ([`unshuffle4`] undoes it).
fn shuffle4(v: &[u8]) -> Vec<u8> {
    let n = v.len() / 4;
    let groups = n / 8;
    let mut out = vec![0u8; v.len()];
    for seg in 0..4 {
        let byte = 3 - seg;
        for g in 0..groups {
            for (j, &i) in SHUFFLE_ORDER.iter().enumerate() {
                out[(seg * groups + g) * 8 + j] = v[(8 * g + i) * 4 + byte];
            }
        }
    }
    out[groups * 32..].copy_from_slice(&v[groups * 32..]);
    out
}

/// 8-byte values shuffled as fst shuffles them ([`unshuffle8`] undoes it).
fn shuffle8(v: &[u8]) -> Vec<u8> {
    let n = v.len() / 8;
    let groups = n / 8;
    let mut out = vec![0u8; v.len()];
    for seg in 0..8 {
        let byte = 7 - seg;
        for g in 0..groups {
            for j in 0..8 {
                out[(seg * groups + g) * 8 + j] = v[(8 * g + 7 - j) * 8 + byte];
            }
        }
    }
    out[groups * 64..].copy_from_slice(&v[groups * 64..]);
    out
}

fn int_at(v: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(v[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

/// R logicals packed 32 to a word ([`unpack_logicals`] undoes it).
fn pack_logicals(v: &[u8]) -> Vec<u8> {
    let n = v.len() / 4;
    let mut out = Vec::with_capacity(8 * n.div_ceil(32));
    for w in 0..n.div_ceil(32) {
        let mut word = 0u64;
        for k in 0..32.min(n - 32 * w) {
            let x = int_at(v, 32 * w + k);
            let half = 32 * (k % 2);
            word |= u64::from(x & 1) << (k / 2 + half);
            word |= u64::from(x >> 31) << (31 - k / 2 + half);
        }
        out.extend_from_slice(&word.to_le_bytes());
    }
    out
}

/// Factor codes (below 128, or NA) packed a byte each ([`unpack_bytes`]).
fn pack_bytes(v: &[u8]) -> Vec<u8> {
    let n = v.len() / 4;
    let mut out = vec![0u8; 8 * n.div_ceil(8)];
    for (j, &i) in SHUFFLE_ORDER.iter().enumerate() {
        for w in 0..n.div_ceil(8) {
            if 8 * w + i < n {
                let x = int_at(v, 8 * w + i);
                out[8 * w + j] = (x & 0x7f) as u8 | ((x >> 31) as u8) << 7;
            }
        }
    }
    out
}

/// Factor codes (below 32768, or NA) packed in 2 bytes ([`unpack_shorts`]).
fn pack_shorts(v: &[u8]) -> Vec<u8> {
    const ORDER: [usize; 4] = [2, 0, 3, 1];
    let n = v.len() / 4;
    let mut out = vec![0u8; 8 * n.div_ceil(4)];
    for w in 0..n.div_ceil(4) {
        for (j, &i) in ORDER.iter().enumerate() {
            if 4 * w + i < n {
                let x = int_at(v, 4 * w + i);
                let s = (x & 0x7fff) as u16 | ((x >> 31) as u16) << 15;
                out[8 * w + 2 * j..8 * w + 2 * j + 2].copy_from_slice(&s.to_le_bytes());
            }
        }
    }
    out
}

/// The values of one block (`v`, as R holds them) stored by codec
/// `code` at ZSTD `level`: what [`decode_block`] reads back.
pub fn encode_block(code: u16, v: &[u8], level: i32) -> io::Result<Vec<u8>> {
    use algo::*;
    let lz4 = |b: &[u8]| lz4_flex::block::compress(b);
    let zstd = |b: &[u8]| zstd::bulk::compress(b, level);
    Ok(match code {
        RAW => v.to_vec(),
        LZ4 => lz4(v),
        ZSTD => zstd(v)?,
        LZ4_SHUF4 => lz4(&shuffle4(v)),
        ZSTD_SHUF4 => zstd(&shuffle4(v))?,
        LZ4_SHUF8 => lz4(&shuffle8(v)),
        ZSTD_SHUF8 => zstd(&shuffle8(v))?,
        LOGIC64 => pack_logicals(v),
        LZ4_LOGIC64 => lz4(&pack_logicals(v)),
        ZSTD_LOGIC64 => zstd(&pack_logicals(v))?,
        INT_TO_BYTE => pack_bytes(v),
        LZ4_INT_TO_BYTE => lz4(&pack_bytes(v)),
        ZSTD_INT_TO_BYTE => zstd(&pack_bytes(v))?,
        INT_TO_SHORT => pack_shorts(v),
        LZ4_INT_TO_SHORT => lz4(&pack_shorts(v)),
        ZSTD_INT_TO_SHORT => zstd(&pack_shorts(v))?,
        other => return Err(io::Error::other(format!("fst has no codec {other}"))),
    })
}

/// The codecs of a kind of column, as fst chooses them at a compression
/// level: `plain` where nothing is compressed, `fast` (LZ4) and `small`
/// (ZSTD).
#[derive(Debug, Clone, Copy)]
pub struct Codecs {
    /// Stored without compression (raw, or packed).
    pub plain: u16,
    /// LZ4.
    pub fast: u16,
    /// ZSTD.
    pub small: u16,
}

impl Codecs {
    /// Integers and dates: shuffled bytes.
    pub const INTEGER: Codecs = Codecs { plain: algo::RAW, fast: algo::LZ4_SHUF4, small: algo::ZSTD_SHUF4 };
    /// Doubles and bytes.
    pub const PLAIN: Codecs = Codecs { plain: algo::RAW, fast: algo::LZ4, small: algo::ZSTD };
    /// 64-bit integers.
    pub const INTEGER64: Codecs = Codecs { plain: algo::RAW, fast: algo::LZ4_SHUF8, small: algo::ZSTD_SHUF8 };
    /// Logicals, always packed.
    pub const LOGICAL: Codecs = Codecs { plain: algo::LOGIC64, fast: algo::LZ4_LOGIC64, small: algo::ZSTD_LOGIC64 };
    /// Factor codes below 128 levels.
    pub const BYTE_CODES: Codecs = Codecs { plain: algo::INT_TO_BYTE, fast: algo::LZ4_INT_TO_BYTE, small: algo::ZSTD_INT_TO_BYTE };
    /// Factor codes below 32,768 levels.
    pub const SHORT_CODES: Codecs = Codecs { plain: algo::INT_TO_SHORT, fast: algo::LZ4_INT_TO_SHORT, small: algo::ZSTD_INT_TO_SHORT };

    /// The codec of block `k` at `level` (0-100), as fst spreads them:
    /// up to 50, 2·level % of the blocks LZ4 and the rest stored plain;
    /// above, 2·(level - 50) % ZSTD and the rest LZ4.
    pub fn for_block(&self, level: u32, k: u64) -> u16 {
        let spread = |pct: u64| (k + 1) * pct / 100 > k * pct / 100;
        if level <= 50 {
            if spread(2 * u64::from(level)) { self.fast } else { self.plain }
        } else if spread(2 * u64::from(level - 50)) {
            self.small
        } else {
            self.fast
        }
    }
}

/// The ZSTD level of fst's level (0-100).
pub fn zstd_level(level: u32) -> i32 {
    (2 * level.saturating_sub(50) as i32 * 22 / 100).max(1)
}

/// One block stored by the codec `codecs` gives it at `level`, or plain
/// where that is no larger: its codec and bytes.
pub fn store_block(codecs: Codecs, level: u32, k: u64, v: &[u8]) -> io::Result<(u16, Vec<u8>)> {
    let code = codecs.for_block(level, k);
    let out = encode_block(code, v, zstd_level(level))?;
    if code != codecs.plain {
        let plain = encode_block(codecs.plain, v, 0)?;
        if plain.len() <= out.len() {
            return Ok((codecs.plain, plain));
        }
    }
    Ok((code, out))
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_logicals_unpack_to_r_logicals() {
        // value 0 TRUE, value 1 NA, value 2 FALSE, value 3 TRUE
        let mut w: u64 = 1; // value 0: bit 0
        w |= 1 << (31 + 32); // value 1: NA bit of the high half
        w |= 1 << (1 + 32); // value 3: TRUE bit, i / 2 = 1, high half
        let out = unpack_logicals(&w.to_le_bytes(), 4);
        let v: Vec<i32> = out.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(v, vec![1, i32::MIN, 0, 1]);
    }

    #[test]
    fn shuffles_undone_give_each_value_its_bytes() {
        // 9 integers: 8 shuffled, the ninth as it is
        let vals: Vec<u32> = (0..9).map(|i| 0x01020304u32.wrapping_mul(i + 1)).collect();
        let mut s = vec![0u8; 36];
        for seg in 0..4 {
            for (j, &v) in SHUFFLE_ORDER.iter().enumerate() {
                s[seg * 8 + j] = vals[v].to_le_bytes()[3 - seg];
            }
        }
        s[32..].copy_from_slice(&vals[8].to_le_bytes());
        let out = unshuffle4(&s);
        let back: Vec<u32> = out.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        assert_eq!(back, vals);
    }

    #[test]
    fn every_codec_reads_back_what_it_stored() {
        let ints: Vec<u8> = (0..4099u32)
            .flat_map(|i| if i % 13 == 0 { 0x8000_0000u32 } else { i % 120 }.to_le_bytes())
            .collect();
        let logicals: Vec<u8> = (0..4099u32)
            .flat_map(|i| [0u32, 1, 0x8000_0000][(i % 3) as usize].to_le_bytes())
            .collect();
        let doubles: Vec<u8> = (0..2051u64).flat_map(|i| (i as f64 * 1.5).to_le_bytes()).collect();
        let what = || "block".to_string();
        for code in 0..16u16 {
            let v = match code {
                algo::LOGIC64 | algo::LZ4_LOGIC64 | algo::ZSTD_LOGIC64 => &logicals,
                algo::LZ4_SHUF8 | algo::ZSTD_SHUF8 | algo::LZ4 | algo::ZSTD => &doubles,
                _ => &ints,
            };
            for len in [4usize, 28, 36, 260, v.len()] {
                let v = &v[..len.min(v.len()) / 8 * 8];
                let stored = encode_block(code, v, 3).unwrap();
                assert_eq!(decode_block(code, &stored, v.len(), &what).unwrap(), v, "codec {code}, {} bytes", v.len());
            }
        }
    }

    #[test]
    fn a_block_that_inflates_short_or_by_an_unknown_codec_is_damage() {
        let what = || "block 1 of column 'x'".to_string();
        let packed = lz4_flex::block::compress(&[7u8; 64]);
        assert!(decode_block(algo::LZ4, &packed, 64, &what).is_ok());
        let e = decode_block(algo::LZ4, &packed, 128, &what).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(decode_block(16, &packed, 64, &what).unwrap_err().to_string().contains("codec 16"));
        assert!(decode_block(algo::RAW, &[1, 2, 3], 4, &what).is_err());
    }
}
