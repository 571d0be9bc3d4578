//! fst's container (`fst::write_fst()`, `.fst` files, format version 1 of
//! fst >= 0.8.0): its headers, each with the XXH64 hash fst stores,
//! checked before anything in it is used; the column names; where each
//! column lies; and each column's blocks read in file order and
//! decompressed (LZ4 or ZSTD, bytes shuffled back, logicals and factor
//! codes unpacked), every block's length checked against what it must
//! hold. What the columns mean to R is [`crate::read::fst`]'s.
//!
//! The layout, all integers little-endian: a 48-byte table header
//! (hash, version, flags, the fst version needed to read it, the column
//! count, where the chunkset header lies, the key count, the magic
//! `PAAP`); the key columns; the chunkset header (row count, each
//! column's attribute, type and scale codes); the column names' header
//! and the names; the chunk index and the data chunk header (where each
//! column starts); then the columns, one after another. fst stores no
//! check of its data blocks: a flipped byte inside one is seen only where
//! it breaks the block's compression or lengths.

use std::io::{self, Read};

mod codecs;
pub use codecs::{decode_block, encode_block, store_block, zstd_level, Codecs};
use codecs::algo;
pub(crate) use codecs::{damaged, u64_at};

/// fst's compression level when none is given (`write_fst()`'s default,
/// on its 0-100 scale).
pub const DEFAULT_LEVEL: u32 = 50;
/// The seed of every hash fst stores.
const HASH_SEED: u64 = 912_824_571;
/// fst's magic number, at bytes 44-47 of the table header.
const MAGIC: [u8; 4] = *b"PAAP";
/// The one format version fst has written since 0.8.0.
const FORMAT_VERSION: u32 = 1;
const TABLE_HEADER_LEN: usize = 48;
const CHUNKSET_HEADER_LEN: usize = 80;
const NAMES_HEADER_LEN: usize = 24;
const CHUNK_INDEX_LEN: usize = 96;
const DATA_HEADER_LEN: usize = 24;
/// A block of a column never decompresses to more than this.
const MAX_BLOCK_BYTES: usize = 1 << 20;
/// Nor is it stored in more (LZ4's bound of fst's 16 KiB blocks is 17 KiB).
const MAX_STORED_BLOCK: u64 = 1 << 21;
/// A string block's characters (fst puts 2,047 strings in a block).
const MAX_STRING_BLOCK_BYTES: u64 = 1 << 31;
/// Annotations (a time zone) are short.
const MAX_ANNOTATION: u32 = 1 << 16;

/// Whether `prefix` (48 bytes or more) starts an fst file: the magic
/// where fst writes it and version 1 (the hash is checked on reading, so
/// that a damaged header is told as damage, not as another kind of file).
pub fn is_fst(prefix: &[u8]) -> bool {
    prefix.len() >= TABLE_HEADER_LEN
        && prefix[44..48] == MAGIC
        && u32::from_le_bytes(prefix[8..12].try_into().expect("4 bytes")) == FORMAT_VERSION
}


/// fst's hash of a header's bytes.
pub fn hash(bytes: &[u8]) -> u64 {
    twox_hash::XxHash64::oneshot(HASH_SEED, bytes)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}


/// A header's stored hash (its first 8 bytes) checked against the rest.
fn check_hash(block: &[u8], what: &str, at: u64) -> io::Result<()> {
    if u64_at(block, 0) != hash(&block[8..]) {
        return Err(damaged(format!(
            "the fst file's {what} (at byte {at}) fails its check: the file is damaged"
        )));
    }
    Ok(())
}

/// The file read in order, its position kept.
pub struct Tracked {
    inner: Box<dyn Read + Send>,
    pos: u64,
}

impl Tracked {
    /// `inner` read from its start.
    pub fn new(inner: Box<dyn Read + Send>) -> Tracked {
        Tracked { inner, pos: 0 }
    }

    /// Bytes read so far.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// The next `n` bytes (growing as they arrive, so that a length a
    /// damaged file claims reserves nothing it does not hold).
    pub fn take(&mut self, n: u64, what: &str) -> io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(n.min(1 << 20) as usize);
        (&mut self.inner).take(n).read_to_end(&mut v)?;
        if (v.len() as u64) < n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the fst file ends at byte {} inside {what}: it was cut short",
                    self.pos + v.len() as u64
                ),
            ));
        }
        self.pos += n;
        Ok(v)
    }

    /// Move ahead to `to`, where the next part lies (fst leaves no gaps;
    /// a part said to lie before what was read is damage).
    pub fn seek_ahead(&mut self, to: u64, what: &str) -> io::Result<()> {
        if to < self.pos {
            return Err(damaged(format!(
                "the fst file places {what} at byte {to}, inside what comes before it (byte {}): the file is damaged",
                self.pos
            )));
        }
        let gap = to - self.pos;
        let skipped = io::copy(&mut (&mut self.inner).take(gap), &mut io::sink())?;
        self.pos += skipped;
        if skipped < gap {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the fst file ends at byte {} before {what}: it was cut short", self.pos),
            ));
        }
        Ok(())
    }
}

/// A string encoding fst stores for a character column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringEncoding {
    /// R's native encoding (no mark).
    Native,
    /// latin1.
    Latin1,
    /// UTF-8.
    Utf8,
}

/// The error of a file named `.fst` without fst's format marker: fst
/// before 0.8.0 wrote another format, which its later versions read only
/// to write it again.
pub fn before_format_marker(file: &str) -> crate::Error {
    crate::Error::unsupported(format!(
        "'{file}' is named .fst but has no fst format marker: an fst file written by fst before 0.8.0 (or not an fst file); read it and write it again with fst 0.8.0 to 0.8.10 (read_fst(old_format = TRUE), then write_fst()), which rdarrow then reads"
    ))
}

/// One column as the headers describe it.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    /// The column's name (`None`: `NA`).
    pub name: Option<Vec<u8>>,
    /// fst's column type: 6 character, 7 factor, 8 integer, 9 double,
    /// 10 logical, 11 integer64, 12 raw (13: byte blocks, not R's).
    pub kind: u16,
    /// fst's column attribute (what the values mean: a date, a time...).
    pub attribute: u16,
    /// A time unit, for durations and times.
    pub scale: u16,
    /// Where the column's data starts.
    pub pos: u64,
}

/// The table the headers describe.
#[derive(Debug, Clone)]
pub struct FstTable {
    /// Rows of every column.
    pub rows: u64,
    /// The columns in file order.
    pub columns: Vec<ColumnInfo>,
    /// The encoding of the column names.
    pub names_encoding: StringEncoding,
    /// The key columns (data.table's `setkey()`), by position.
    pub keys: Vec<usize>,
}

impl FstTable {
    /// Read and check every header, and the column names, leaving `r`
    /// at the first column's data.
    pub fn read(r: &mut Tracked) -> io::Result<FstTable> {
        let head = r.take(TABLE_HEADER_LEN as u64, "its table header")?;
        if head[44..48] != MAGIC {
            return Err(damaged("not an fst file: the magic number is not where fst writes it".into()));
        }
        check_hash(&head, "table header", 0)?;
        let needs = u32_at(&head, 24);
        if u32_at(&head, 8) != FORMAT_VERSION || needs > FORMAT_VERSION {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the fst file is of format version {} (it needs a reader of version {needs}): written by a newer fst than 0.9.8, which writes version 1",
                    u32_at(&head, 8)
                ),
            ));
        }
        let ncol = u32_at(&head, 28);
        if ncol > i32::MAX as u32 {
            return Err(damaged(format!("the fst file's table header says it has {} columns", ncol as i32)));
        }
        let ncol = ncol as usize;
        let nkeys = u32_at(&head, 40);
        if nkeys > ncol as u32 {
            return Err(damaged(format!(
                "the fst file's table header says it has {nkeys} key columns of {ncol}"
            )));
        }
        let mut keys = Vec::new();
        if nkeys > 0 {
            let k = nkeys as u64;
            let len = 8 + 4 * k + 4 * (k % 2);
            let at = r.pos();
            let block = r.take(len, "its key index")?;
            check_hash(&block, "key index", at)?;
            for i in 0..nkeys as usize {
                let c = u32_at(&block, 8 + 4 * i) as usize;
                if c >= ncol {
                    return Err(damaged(format!("the fst file's key {} is column {c} of {ncol}", i + 1)));
                }
                keys.push(c);
            }
        }
        let chunkset_at = u64_at(&head, 32);
        r.seek_ahead(chunkset_at, "its chunkset header")?;
        let len = (CHUNKSET_HEADER_LEN + 8 * ncol) as u64;
        let chunkset = r.take(len, "its chunkset header")?;
        check_hash(&chunkset, "chunkset header", chunkset_at)?;
        let rows = u64_at(&chunkset, 64);
        if u32_at(&chunkset, 72) as usize != ncol {
            return Err(damaged(format!(
                "the fst file's chunkset holds {} columns where its table header says {ncol}",
                u32_at(&chunkset, 72)
            )));
        }
        let codes = |k: usize, c: usize| u16_at(&chunkset, CHUNKSET_HEADER_LEN + 2 * (k * ncol + c));
        let at = r.pos();
        let names_head = r.take(NAMES_HEADER_LEN as u64, "its column names' header")?;
        check_hash(&names_head, "column names' header", at)?;
        let mut names = Vec::with_capacity(ncol.min(1 << 16));
        let mut names_encoding = StringEncoding::Utf8;
        if ncol > 0 {
            let start = r.pos();
            let mut strings = StringColumn::open(r, ncol as u64, start, "the column names")?;
            names_encoding = strings.encoding;
            while let Some(block) = strings.next_block(r)? {
                for i in 0..block.len() {
                    names.push(block.get(i).map(<[u8]>::to_vec));
                }
            }
        }
        let at = r.pos();
        let index = r.take((CHUNK_INDEX_LEN + DATA_HEADER_LEN + 8 * ncol) as u64, "its chunk index")?;
        check_hash(&index[..CHUNK_INDEX_LEN], "chunk index", at)?;
        check_hash(&index[CHUNK_INDEX_LEN..], "data chunk header", at + CHUNK_INDEX_LEN as u64)?;
        if u64_at(&index, 64) != rows {
            return Err(damaged(format!(
                "the fst file's chunk index holds {} rows where its chunkset says {rows}",
                u64_at(&index, 64)
            )));
        }
        let columns = (0..ncol)
            .map(|c| ColumnInfo {
                name: names[c].clone(),
                attribute: codes(0, c),
                kind: codes(1, c),
                scale: codes(3, c),
                pos: u64_at(&index, CHUNK_INDEX_LEN + DATA_HEADER_LEN + 8 * c),
            })
            .collect();
        Ok(FstTable {
            rows,
            columns,
            names_encoding,
            keys,
        })
    }
}

/// How a column of fixed-width values is stored.
enum Layout {
    /// The values as they are.
    Raw,
    /// Packed at a fixed ratio (fst before 0.9 for logicals and factors):
    /// `code`, `per_word` values to each 8-byte word.
    Fixed { code: u16, per_word: u64 },
    /// Blocks of `per_block` values, each with its codec; `ends[k]` is
    /// where block `k` ends (from the start of the column's data).
    Blocks { per_block: u64, starts: Vec<u64>, codes: Vec<u16> },
}

/// A column of fixed-width values (integer, double, logical, integer64,
/// raw, factor codes), read block by block.
pub struct ValueColumn {
    /// The column's annotation (a POSIXct column's time zone), where it has one.
    pub annotation: Option<Vec<u8>>,
    width: u64,
    rows: u64,
    /// Values handed over.
    done: u64,
    layout: Layout,
    /// Where the data (after the annotation) starts.
    base: u64,
    /// Blocks read.
    block: usize,
    what: String,
}

impl ValueColumn {
    /// The column whose data starts at `r`'s position: `rows` values of
    /// `width` bytes; `what` names it in errors.
    pub fn open(r: &mut Tracked, rows: u64, width: u64, what: String) -> io::Result<ValueColumn> {
        let word = u32::from_le_bytes(r.take(4, &what)?.try_into().expect("4 bytes"));
        let len = word & 0x7fff_ffff;
        if len > MAX_ANNOTATION {
            return Err(damaged(format!("{what} has an annotation of {len} bytes: the file is damaged")));
        }
        let text = r.take(u64::from(len), &what)?;
        let annotation = (word >> 31 == 1).then_some(text);
        let base = r.pos();
        let mut col = ValueColumn {
            annotation,
            width,
            rows,
            done: 0,
            layout: Layout::Raw,
            base,
            block: 0,
            what,
        };
        if rows == 0 {
            return Ok(col);
        }
        let meta = r.take(8, &col.what)?;
        let (first, second) = (u32_at(&meta, 0), u32_at(&meta, 4));
        col.layout = if first == 0 && second == 0 {
            Layout::Raw
        } else if first == 0 {
            let code = second as u16;
            let per_word = match code {
                algo::LOGIC64 => 32,
                algo::INT_TO_BYTE => 8,
                algo::INT_TO_SHORT => 4,
                _ => {
                    return Err(damaged(format!(
                        "{} is packed by codec {second}, which fst does not pack with: the file is damaged",
                        col.what
                    )))
                }
            };
            if width != 4 {
                return Err(damaged(format!("{} packs values that are not 4 bytes", col.what)));
            }
            Layout::Fixed { code, per_word }
        } else {
            let per_block = u64::from(second);
            if per_block == 0 || per_block * width > MAX_BLOCK_BYTES as u64 {
                return Err(damaged(format!(
                    "{} has blocks of {per_block} values: the file is damaged",
                    col.what
                )));
            }
            let nblocks = rows.div_ceil(per_block);
            let index = r.take(8 * (nblocks + 1), &col.what)?;
            let mut starts = Vec::with_capacity(nblocks as usize + 1);
            let mut codes = Vec::with_capacity(nblocks as usize);
            for k in 0..=nblocks as usize {
                let v = u64_at(&index, 8 * k);
                starts.push(v & 0x0000_ffff_ffff_ffff);
                if k < nblocks as usize {
                    codes.push((v >> 48) as u16);
                }
            }
            if starts[0] != 8 + 8 * (nblocks + 1) || starts.windows(2).any(|w| w[1] < w[0] || w[1] - w[0] > MAX_STORED_BLOCK) {
                return Err(damaged(format!(
                    "{}'s block index places its blocks out of order: the file is damaged",
                    col.what
                )));
            }
            Layout::Blocks {
                per_block,
                starts,
                codes,
            }
        };
        Ok(col)
    }

    /// The next values (little-endian, as R holds them), or `None` after
    /// the last.
    pub fn next_block(&mut self, r: &mut Tracked) -> io::Result<Option<Vec<u8>>> {
        if self.done == self.rows {
            return Ok(None);
        }
        let left = self.rows - self.done;
        let (n, bytes) = match &self.layout {
            Layout::Raw => {
                let n = left.min((1 << 20) / self.width);
                (n, r.take(n * self.width, &self.what)?)
            }
            Layout::Fixed { code, per_word } => {
                // whole words, so that a block ends where a word does
                let n = left.min(per_word * 4096);
                let src = r.take(8 * n.div_ceil(*per_word), &self.what)?;
                let what = || self.what.clone();
                (n, decode_block(*code, &src, 4 * n as usize, &what)?)
            }
            Layout::Blocks {
                per_block,
                starts,
                codes,
            } => {
                let k = self.block;
                let n = left.min(*per_block);
                r.seek_ahead(self.base + starts[k], &self.what)?;
                let src = r.take(starts[k + 1] - starts[k], &self.what)?;
                let what = || format!("block {} of {} (at byte {})", k + 1, self.what, self.base + starts[k]);
                (n, decode_block(codes[k], &src, (n * self.width) as usize, &what)?)
            }
        };
        self.block += 1;
        self.done += n;
        Ok(Some(bytes))
    }
}

/// One block of a character column: strings and their `NA`s.
pub struct StringBlock {
    /// Where each string ends in `chars`.
    ends: Vec<u32>,
    /// One bit per string (`NA`), and one after the last (any `NA`).
    na: Vec<u32>,
    chars: Vec<u8>,
}

impl StringBlock {
    /// How many strings the block holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the block holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// String `i` (`None`: `NA`).
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let n = self.ends.len();
        let any_na = self.na[n / 32] >> (n % 32) & 1 == 1;
        if any_na && self.na[i / 32] >> (i % 32) & 1 == 1 {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.chars[start..self.ends[i] as usize])
    }
}

/// A character column (and a factor's levels, and the column names),
/// read block by block.
pub struct StringColumn {
    /// The strings' encoding.
    pub encoding: StringEncoding,
    compressed: bool,
    per_block: u64,
    rows: u64,
    /// Per block: where it ends (from the column's start), and, compressed,
    /// the codecs of its string ends and of its characters and the stored
    /// length of its ends.
    ends: Vec<(u64, u16, u16, u32)>,
    start: u64,
    block: usize,
    what: String,
}

impl StringColumn {
    /// The `rows` strings starting at `start` (`r`'s position).
    pub fn open(r: &mut Tracked, rows: u64, start: u64, what: &str) -> io::Result<StringColumn> {
        let what = what.to_string();
        let meta = r.take(8, &what)?;
        let flags = u32_at(&meta, 0);
        let per_block = u64::from(u32_at(&meta, 4));
        let encoding = match (flags >> 1) & 7 {
            1 => StringEncoding::Latin1,
            2 => StringEncoding::Utf8,
            _ => StringEncoding::Native,
        };
        if per_block == 0 || per_block > 1 << 16 {
            return Err(damaged(format!("{what} has blocks of {per_block} strings: the file is damaged")));
        }
        let compressed = flags & 1 == 1;
        let nblocks = rows.div_ceil(per_block);
        let entry = if compressed { 16 } else { 8 };
        let index = r.take(entry * nblocks, &what)?;
        let ends: Vec<(u64, u16, u16, u32)> = index
            .chunks_exact(entry as usize)
            .map(|e| {
                if compressed {
                    (u64_at(e, 0), u16_at(e, 8), u16_at(e, 10), u32_at(e, 12))
                } else {
                    (u64_at(e, 0), 0, 0, 0)
                }
            })
            .collect();
        let first = 8 + entry * nblocks;
        let mut prev = first;
        for e in &ends {
            if e.0 < prev {
                return Err(damaged(format!("{what}'s block index places its blocks out of order: the file is damaged")));
            }
            prev = e.0;
        }
        Ok(StringColumn {
            encoding,
            compressed,
            per_block,
            rows,
            ends,
            start,
            block: 0,
            what,
        })
    }

    /// The next block of strings, or `None` after the last.
    pub fn next_block(&mut self, r: &mut Tracked) -> io::Result<Option<StringBlock>> {
        let k = self.block;
        if k == self.ends.len() {
            return Ok(None);
        }
        let n = (self.rows - k as u64 * self.per_block).min(self.per_block) as usize;
        let begin = if k == 0 {
            8 + self.ends.len() as u64 * if self.compressed { 16 } else { 8 }
        } else {
            self.ends[k - 1].0
        };
        let (end, code_ends, code_chars, ends_len) = self.ends[k];
        let at = self.start + begin;
        r.seek_ahead(at, &self.what)?;
        let size = end - begin;
        if size > MAX_STRING_BLOCK_BYTES {
            return Err(damaged(format!("{}'s block {} claims {size} bytes: the file is damaged", self.what, k + 1)));
        }
        let what = || format!("block {} of {} (at byte {at})", k + 1, self.what);
        let bytes = r.take(size, &self.what)?;
        let na_len = 4 * (1 + n / 32);
        let ends_stored = if code_ends == 0 { 4 * n } else { ends_len as usize };
        if !self.compressed || code_ends == 0 {
            if self.compressed && ends_len as usize != 4 * n {
                return Err(damaged(format!("{} stores {ends_len} bytes of string lengths for {n} strings", what())));
            }
        }
        if bytes.len() < ends_stored + na_len {
            return Err(damaged(format!("{} is too short for its {n} strings: the file is damaged", what())));
        }
        let ends_bytes = decode_block(code_ends, &bytes[..ends_stored], 4 * n, &what)?;
        let ends: Vec<u32> = ends_bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
        let na: Vec<u32> = bytes[ends_stored..ends_stored + na_len]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4")))
            .collect();
        if ends.windows(2).any(|w| w[1] < w[0]) {
            return Err(damaged(format!("{}'s string lengths run backwards: the file is damaged", what())));
        }
        let total = ends.last().copied().unwrap_or(0) as usize;
        let stored = &bytes[ends_stored + na_len..];
        let chars = if self.compressed && code_chars != 0 {
            decode_block(code_chars, stored, total, &what)?
        } else if stored.len() == total {
            stored.to_vec()
        } else {
            return Err(damaged(format!(
                "{} holds {} bytes of characters where its strings take {total}: the file is damaged",
                what(),
                stored.len()
            )));
        };
        self.block += 1;
        Ok(Some(StringBlock { ends, na, chars }))
    }
}

/// The header hashes of an edited fst file made right again, so that what
/// lies behind them is reached: for fuzzing and damage tests, which would
/// otherwise stop at the first hash. `None` where the headers cannot be
/// placed.
#[doc(hidden)]
pub fn restore_header_hashes(b: &mut [u8]) -> Option<()> {
    let fix = |at: usize, len: usize, b: &mut [u8]| -> Option<()> {
        let block = b.get(at..at.checked_add(len)?)?;
        let h = hash(&block[8..]).to_le_bytes();
        b[at..at + 8].copy_from_slice(&h);
        Some(())
    };
    fix(0, 48, b)?;
    let ncol = u32::from_le_bytes(b[28..32].try_into().ok()?) as usize;
    let nkeys = u32::from_le_bytes(b[40..44].try_into().ok()?) as usize;
    if ncol > 1 << 16 || nkeys > ncol {
        return None;
    }
    if nkeys > 0 {
        fix(48, 8 + 4 * nkeys + 4 * (nkeys % 2), b)?;
    }
    let chunkset = usize::try_from(u64::from_le_bytes(b[32..40].try_into().ok()?)).ok()?;
    fix(chunkset, 80 + 8 * ncol, b)?;
    let names = chunkset + 80 + 8 * ncol;
    fix(names, 24, b)?;
    let mut r = Tracked::new(Box::new(std::io::Cursor::new(b.to_vec())));
    r.seek_ahead(names as u64 + 24, "names").ok()?;
    if ncol > 0 {
        let mut s = StringColumn::open(&mut r, ncol as u64, names as u64 + 24, "names").ok()?;
        while s.next_block(&mut r).ok()?.is_some() {}
    }
    let index = r.pos() as usize;
    fix(index, 96, b)?;
    fix(index + 96, 24 + 8 * ncol, b)
}

