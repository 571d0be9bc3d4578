//! A data frame written as an fst file (`.fst`, which `fst::read_fst()`
//! reads; its reader is `read::fst`): each column as fst stores it, in
//! blocks compressed as `fst::write_fst()` compresses them at the same
//! level (0-100: up to 50 a share of the blocks LZ4, above a share ZSTD),
//! a block stored plain where compression does not make it smaller; the
//! headers with their hashes; data.table's keys.
//!
//! What fst cannot hold is refused, naming the column, before a byte is
//! written: anything but a data frame; list, complex, matrix and
//! data-frame columns; `POSIXlt`; strings marked as bytes; `difftime` in
//! units fst has none for. A column of strings in one encoding keeps it;
//! one that mixes encodings is written in UTF-8 (fst itself would mark
//! them all with the first string's encoding). Row names are not kept,
//! as fst keeps none.

use crate::base::error::{Error, Result};
use crate::compression::fst::{self as container, Codecs};
use crate::tree::{altrep, encoding, levels, RObject, RefTable, StringVector, VectorData};
use std::io::Write;
use std::path::Path;


/// Values per block, as fst cuts them.
const INTS_PER_BLOCK: u64 = 4096;
const DOUBLES_PER_BLOCK: u64 = 2048;
const BYTES_PER_BLOCK: u64 = 16384;
const STRINGS_PER_BLOCK: usize = 2047;

fn refuse(column: &str, what: &str) -> Error {
    Error::usage(format!(
        "an .fst file cannot hold {what} (column {column}): fst holds data frames of logical, integer, double, character, factor, Date, POSIXct, difftime, integer64 and raw columns; write an .rds or .qs2 file instead"
    ))
}

/// One column planned: its codes in the chunkset header and its values.
struct Planned<'a> {
    kind: u16,
    attribute: u16,
    base: u16,
    scale: u16,
    annotation: Option<Vec<u8>>,
    values: Values<'a>,
}

enum Values<'a> {
    /// Fixed-width little-endian values, `width` bytes each, and how they
    /// are compressed.
    Fixed { bytes: std::borrow::Cow<'a, [u8]>, width: u64, per_block: u64, codecs: Codecs },
    Strings(Strings<'a>),
    Factor { codes: std::borrow::Cow<'a, [u8]>, levels: Strings<'a> },
}

/// Strings as they are written, and the column's encoding (fst's code: 0
/// native, 1 latin1, 2 UTF-8).
struct Strings<'a> {
    source: StringSource<'a>,
    encoding: u32,
}

enum StringSource<'a> {
    /// A character vector's strings as they are, or (`true`) in UTF-8.
    Tree(&'a StringVector, bool),
    /// Strings made here (`None`: `NA`).
    Made(Vec<Option<Vec<u8>>>),
}

impl Strings<'_> {
    fn len(&self) -> usize {
        match &self.source {
            StringSource::Tree(s, _) => s.len(),
            StringSource::Made(v) => v.len(),
        }
    }

    /// String `i` as written (`None`: `NA`).
    fn get(&self, i: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        match &self.source {
            StringSource::Tree(s, false) => s.get(i).map(Cow::Borrowed),
            StringSource::Tree(s, true) => s.get(i).map(|b| encoding::to_utf8(b, s.levels(i), None).1),
            StringSource::Made(v) => v[i].as_deref().map(Cow::Borrowed),
        }
    }
}

/// A column's strings in one encoding: their own where all non-ASCII
/// strings share one, else all in UTF-8.
fn strings_of<'a>(s: &'a StringVector, column: &str) -> Result<Strings<'a>> {
    let mut seen = None;
    let mut mixed = false;
    for i in 0..s.len() {
        if s.is_na(i) || s.bytes(i).is_ascii() {
            continue;
        }
        let lv = s.levels(i);
        if lv & levels::BYTES != 0 {
            return Err(refuse(column, "strings marked as bytes"));
        }
        let enc = if lv & levels::UTF8 != 0 {
            2
        } else if lv & levels::LATIN1 != 0 {
            1
        } else {
            0
        };
        match seen {
            None => seen = Some(enc),
            Some(e) if e != enc => mixed = true,
            _ => {}
        }
    }
    Ok(Strings {
        source: StringSource::Tree(s, mixed),
        encoding: if mixed { 2 } else { seen.unwrap_or(0) },
    })
}

/// The little-endian bytes of a fixed-width payload.
fn le<'a>(data: &'a VectorData) -> Option<std::borrow::Cow<'a, [u8]>> {
    use std::borrow::Cow;
    fn bytes<T: arrow_buffer::ArrowNativeType>(v: &[T]) -> &[u8] {
        // SAFETY: plain numbers, read as the bytes they lie in
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
    }
    if cfg!(target_endian = "big") {
        return None;
    }
    Some(match data {
        VectorData::Logical(v) | VectorData::Integer(v) => Cow::Borrowed(bytes(v)),
        VectorData::Real(v) => Cow::Borrowed(bytes(v)),
        VectorData::Raw(v) => Cow::Borrowed(v.as_slice()),
        _ => return None,
    })
}

/// The units fst has a scale for.
fn scale_of_units(units: &[u8]) -> Option<u16> {
    Some(match units {
        b"secs" => 4,
        b"mins" => 5,
        b"hours" => 6,
        b"days" => 7,
        _ => return None,
    })
}

/// Plan column `name` (`x`, expanded where ALTREP into `owned`) of `rows` rows.
fn plan<'a>(name: &[u8], x: &'a RObject, owned: &'a Option<VectorData>, refs: &RefTable, rows: u64) -> Result<Planned<'a>> {
    let shown = format!("'{}'", String::from_utf8_lossy(name));
    let data: &VectorData = match (x, owned) {
        (_, Some(d)) => d,
        (RObject::Vector(v), None) => &v.data,
        _ => return Err(refuse(&shown, "an object that is not a vector")),
    };
    if data.len() != rows {
        return Err(refuse(&shown, &format!("a column of {} values in a frame of {rows} rows", data.len())));
    }
    if x.attribute(refs, "dim").is_some() {
        return Err(refuse(&shown, "a matrix column"));
    }
    let inherits = |c: &str| x.inherits(refs, c);
    let zone = || {
        x.attribute(refs, "tzone")
            .and_then(|z| z.as_strings())
            .and_then(|z| z.get(0).map(<[u8]>::to_vec))
    };
    let units = || -> Result<u16> {
        let u = x.attribute(refs, "units").and_then(|u| u.as_strings()).and_then(|u| u.get(0));
        u.and_then(scale_of_units).ok_or_else(|| {
            refuse(&shown, &format!("a difftime in {}", String::from_utf8_lossy(u.unwrap_or(b"no units"))))
        })
    };
    let mut p = Planned {
        kind: 0,
        attribute: 0,
        base: 0,
        scale: 0,
        annotation: None,
        values: Values::Strings(Strings { source: StringSource::Made(Vec::new()), encoding: 0 }),
    };
    let fixed = |bytes, width, per_block, codecs| Values::Fixed { bytes, width, per_block, codecs };
    match data {
        VectorData::Logical(_) => {
            (p.kind, p.attribute, p.base) = (10, 15, 6);
            p.values = fixed(le(data).expect("logicals"), 4, INTS_PER_BLOCK, Codecs::LOGICAL);
        }
        VectorData::Integer(_) if inherits("factor") => {
            let levels = x
                .attribute(refs, "levels")
                .and_then(|l| l.as_strings())
                .ok_or_else(|| refuse(&shown, "a factor without levels"))?;
            let n = levels.len() as i32;
            if let VectorData::Integer(codes) = data {
                if let Some(bad) = codes.iter().find(|&&c| c != i32::MIN && !(1..=n).contains(&c)) {
                    return Err(refuse(&shown, &format!("a factor code ({bad}) beyond its {n} levels")));
                }
            }
            (p.kind, p.base) = (7, 3);
            p.attribute = if inherits("ordered") { 4 } else { 3 };
            p.values = Values::Factor {
                codes: le(data).expect("integers"),
                levels: strings_of(levels, &format!("{shown}'s levels"))?,
            };
        }
        VectorData::Integer(_) => {
            (p.kind, p.base) = (8, 4);
            p.attribute = if inherits("difftime") {
                p.scale = units()?;
                7
            } else if inherits("Date") {
                8
            } else if inherits("ITime") {
                p.scale = 4;
                9
            } else if inherits("POSIXct") {
                p.annotation = zone();
                6
            } else {
                5
            };
            p.values = fixed(le(data).expect("integers"), 4, INTS_PER_BLOCK, Codecs::INTEGER);
        }
        VectorData::Real(_) if inherits("nanotime") || inherits("integer64") => {
            (p.kind, p.base) = (11, 7);
            p.attribute = if inherits("nanotime") {
                p.scale = 1;
                17
            } else {
                16
            };
            p.values = fixed(le(data).expect("doubles"), 8, DOUBLES_PER_BLOCK, Codecs::INTEGER64);
        }
        VectorData::Real(_) => {
            (p.kind, p.base) = (9, 5);
            p.attribute = if inherits("ITime") {
                p.scale = 4;
                14
            } else if inherits("difftime") {
                p.scale = units()?;
                13
            } else if inherits("Date") {
                11
            } else if inherits("POSIXct") {
                p.annotation = zone();
                12
            } else {
                10
            };
            p.values = fixed(le(data).expect("doubles"), 8, DOUBLES_PER_BLOCK, Codecs::PLAIN);
        }
        VectorData::Raw(_) => {
            (p.kind, p.attribute, p.base) = (12, 18, 8);
            p.values = fixed(le(data).expect("bytes"), 1, BYTES_PER_BLOCK, Codecs::PLAIN);
        }
        VectorData::Character(s) => {
            (p.kind, p.attribute, p.base) = (6, 2, 2);
            p.values = Values::Strings(strings_of(s, &shown)?);
        }
        VectorData::List(_) if inherits("POSIXlt") => return Err(refuse(&shown, "a POSIXlt column")),
        VectorData::List(_) if inherits("data.frame") => return Err(refuse(&shown, "a data frame column")),
        VectorData::List(_) => return Err(refuse(&shown, "a list column")),
        VectorData::Complex(_) => return Err(refuse(&shown, "a complex column")),
        _ => return Err(refuse(&shown, "a column whose values are not at hand")),
    }
    if le(data).is_none() && !matches!(data, VectorData::Character(_)) {
        return Err(Error::unsupported("fst files are written on little-endian machines only"));
    }
    Ok(p)
}

/// `f` of each item, on every core (the items cut into as many runs as
/// there are cores), in order.
fn on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(usize, &T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let cores = crate::base::limits::cores().max(1);
    if cores == 1 || items.len() < 8 {
        return items.iter().enumerate().map(|(k, t)| f(k, t)).collect();
    }
    let run = items.len().div_ceil(cores);
    let parts: Vec<Result<Vec<R>>> = std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = items
            .chunks(run)
            .enumerate()
            .map(|(c, chunk)| {
                scope.spawn(move || chunk.iter().enumerate().map(|(k, t)| f(c * run + k, t)).collect::<Result<Vec<R>>>())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::internal("an fst compression thread failed"))))
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

fn io_err(e: std::io::Error) -> Error {
    Error::io(&e, "cannot compress an fst block")
}

/// A stream of fixed-width values (fst's v2 columns): the annotation,
/// then the values raw (level 0, where fst stores them raw) or in blocks
/// with their index.
fn fixed_stream(out: &mut Vec<u8>, v: &[u8], width: u64, per_block: u64, codecs: Codecs, level: u32, annotation: Option<&[u8]>) -> Result<()> {
    match annotation {
        Some(a) => {
            out.extend_from_slice(&(a.len() as u32 | 0x8000_0000).to_le_bytes());
            out.extend_from_slice(a);
        }
        None => out.extend_from_slice(&0u32.to_le_bytes()),
    }
    let rows = v.len() as u64 / width;
    if rows == 0 {
        return Ok(());
    }
    if level == 0 && codecs.plain == Codecs::PLAIN.plain {
        out.extend_from_slice(&[0u8; 8]);
        out.extend_from_slice(v);
        return Ok(());
    }
    let nblocks = rows.div_ceil(per_block);
    let block_bytes = (per_block * width) as usize;
    let blocks: Vec<&[u8]> = v.chunks(block_bytes).collect();
    let stored = on_all_cores(&blocks, |k, b| container::store_block(codecs, level, k as u64, b).map_err(io_err))?;
    let max = stored.iter().map(|s| s.1.len()).max().unwrap_or(1).max(1) as u32;
    out.extend_from_slice(&max.to_le_bytes());
    out.extend_from_slice(&(per_block as u32).to_le_bytes());
    let mut pos = 8 + 8 * (nblocks + 1);
    for (code, bytes) in &stored {
        out.extend_from_slice(&(pos | u64::from(*code) << 48).to_le_bytes());
        pos += bytes.len() as u64;
    }
    out.extend_from_slice(&pos.to_le_bytes());
    for (_, bytes) in stored {
        out.extend_from_slice(&bytes);
    }
    Ok(())
}

/// One block of strings stored: the codec and bytes of its string ends,
/// its `NA` bits, the codec and bytes of its characters.
type StoredStrings = (u16, Vec<u8>, Vec<u8>, u16, Vec<u8>);

/// Block `k` of `s` (strings `range`) stored at `level`.
fn string_block(k: usize, s: &Strings<'_>, range: std::ops::Range<usize>, level: u32) -> Result<StoredStrings> {
    let compressed = level > 0;
    let m = range.len();
    let mut ends = Vec::with_capacity(4 * m);
    let mut na = vec![0u32; 1 + m / 32];
    let mut chars = Vec::new();
    for (i, j) in range.enumerate() {
        match s.get(j) {
            Some(b) => chars.extend_from_slice(&b),
            None => {
                na[i / 32] |= 1 << (i % 32);
                na[m / 32] |= 1 << (m % 32);
            }
        }
        if chars.len() > u32::MAX as usize {
            return Err(Error::usage("an .fst file holds at most 4 GiB of characters in a block of 2,047 strings"));
        }
        ends.extend_from_slice(&(chars.len() as u32).to_le_bytes());
    }
    let na: Vec<u8> = na.iter().flat_map(|w| w.to_le_bytes()).collect();
    let (code_ends, ends_bytes, code_chars, chars_bytes) = if compressed {
        let (ce, eb) = container::store_block(Codecs::INTEGER, level, k as u64, &ends).map_err(io_err)?;
        let (cc, cb) = container::store_block(Codecs::PLAIN, level, k as u64, &chars).map_err(io_err)?;
        (ce, eb, cc, cb)
    } else {
        (0, ends, 0, chars)
    };
    Ok((code_ends, ends_bytes, na, code_chars, chars_bytes))
}

/// A character vector as fst stores it (its v6 columns): blocks of 2,047
/// strings, each its string ends, `NA` bits and characters; compressed
/// (level above 0) with the codecs of each part in the block index.
fn string_stream(out: &mut Vec<u8>, s: &Strings, level: u32) -> Result<()> {
    let n = s.len();
    if n == 0 {
        return Ok(());
    }
    let start = out.len();
    let nblocks = n.div_ceil(STRINGS_PER_BLOCK);
    let compressed = level > 0;
    out.extend_from_slice(&((s.encoding << 1) | u32::from(compressed)).to_le_bytes());
    out.extend_from_slice(&(STRINGS_PER_BLOCK as u32).to_le_bytes());
    let entry = if compressed { 16 } else { 8 };
    let index_at = out.len();
    out.resize(index_at + entry * nblocks, 0);
    let blocks: Vec<std::ops::Range<usize>> =
        (0..nblocks).map(|k| k * STRINGS_PER_BLOCK..((k + 1) * STRINGS_PER_BLOCK).min(n)).collect();
    let stored = on_all_cores(&blocks, |k, r| string_block(k, s, r.clone(), level))?;
    for (k, (code_ends, ends_bytes, na, code_chars, chars_bytes)) in stored.into_iter().enumerate() {
        out.extend_from_slice(&ends_bytes);
        out.extend_from_slice(&na);
        out.extend_from_slice(&chars_bytes);
        let end = (out.len() - start) as u64;
        let e = &mut out[index_at + entry * k..index_at + entry * (k + 1)];
        e[..8].copy_from_slice(&end.to_le_bytes());
        if compressed {
            e[8..10].copy_from_slice(&code_ends.to_le_bytes());
            e[10..12].copy_from_slice(&code_chars.to_le_bytes());
            e[12..16].copy_from_slice(&(ends_bytes.len() as u32).to_le_bytes());
        }
    }
    Ok(())
}

/// A header block: its XXH64 hash (of what follows it) in its first 8 bytes.
fn hashed(mut block: Vec<u8>) -> Vec<u8> {
    let h = container::hash(&block[8..]);
    block[..8].copy_from_slice(&h.to_le_bytes());
    block
}

/// The bytes of an fst file holding `root` (a data frame) at `level`.
fn encode(root: &RObject, refs: &RefTable, level: u32) -> Result<Vec<u8>> {
    if !root.inherits(refs, "data.frame") {
        return Err(Error::usage(
            "an .fst file holds a data frame (fst's format is a table of columns): write an .rds or .qs2 file for other objects",
        ));
    }
    let RObject::Vector(frame) = root else {
        return Err(Error::usage("an .fst file holds a data frame"));
    };
    let VectorData::List(columns) = &frame.data else {
        return Err(Error::usage("an .fst file holds a data frame"));
    };
    let names: Vec<Vec<u8>> = match root.attribute(refs, "names").and_then(|n| n.as_strings()) {
        Some(n) => (0..n.len()).map(|i| n.get(i).unwrap_or(b"NA").to_vec()).collect(),
        None => (1..=columns.len()).map(|i| format!("V{i}").into_bytes()).collect(),
    };
    let rows = columns.first().map_or(0, |c| c.vector_len(refs));
    // ALTREP columns (compact sequences, wrappers) as the vectors they stand for
    let expanded: Vec<Option<VectorData>> = columns
        .iter()
        .map(|c| match c {
            RObject::Altrep(a) => altrep::expand(a, refs).map(Some),
            _ => Ok(None),
        })
        .collect::<Result<_>>()?;
    let planned: Vec<Planned<'_>> = columns
        .iter()
        .zip(&expanded)
        .zip(&names)
        .map(|((c, owned), name)| plan(name, c, owned, refs, rows))
        .collect::<Result<_>>()?;
    let ncol = planned.len();
    let keys: Vec<u32> = root
        .attribute(refs, "sorted")
        .and_then(|k| k.as_strings())
        .map(|k| {
            (0..k.len())
                .filter_map(|i| names.iter().position(|n| Some(n.as_slice()) == k.get(i)).map(|p| p as u32))
                .collect()
        })
        .unwrap_or_default();
    let nkeys = keys.len() as u64;
    let key_len = if nkeys > 0 { 8 + 4 * nkeys + 4 * (nkeys % 2) } else { 0 };
    // the column names (uncompressed, as fst writes them)
    let mut names_stream = Vec::new();
    let name_strings = match root.attribute(refs, "names").and_then(|n| n.as_strings()) {
        Some(n) => {
            // an NA name written as fst writes it
            let encoding = strings_of(n, "names")?.encoding;
            let made = (0..n.len()).map(|i| Some(n.get(i).unwrap_or(b"NA").to_vec())).collect();
            Strings { source: StringSource::Made(made), encoding }
        }
        None => Strings { source: StringSource::Made(names.iter().cloned().map(Some).collect()), encoding: 0 },
    };
    string_stream(&mut names_stream, &name_strings, 0)?;
    let chunkset_at = 48 + key_len;
    let data_at = chunkset_at + 80 + 8 * ncol as u64 + 24 + names_stream.len() as u64 + 96 + 24 + 8 * ncol as u64;
    // the columns, each placed after the one before
    let mut body = Vec::new();
    let mut positions = Vec::with_capacity(ncol);
    for p in &planned {
        let at = data_at + body.len() as u64;
        positions.push(at);
        match &p.values {
            Values::Fixed { bytes, width, per_block, codecs } => {
                fixed_stream(&mut body, bytes, *width, *per_block, *codecs, level, p.annotation.as_deref())?
            }
            Values::Strings(s) => string_stream(&mut body, s, level)?,
            Values::Factor { codes, levels } => {
                let nlevels = levels.len() as u64;
                body.extend_from_slice(&1u32.to_le_bytes());
                body.extend_from_slice(&(nlevels as u32).to_le_bytes());
                let codes_at_field = body.len();
                body.extend_from_slice(&(at + 16).to_le_bytes());
                if nlevels > 0 {
                    string_stream(&mut body, levels, level)?;
                    let codes_at = data_at + body.len() as u64;
                    body[codes_at_field..codes_at_field + 8].copy_from_slice(&codes_at.to_le_bytes());
                    let codecs = if nlevels < 128 {
                        Codecs::BYTE_CODES
                    } else if nlevels < 32768 {
                        Codecs::SHORT_CODES
                    } else {
                        Codecs::INTEGER
                    };
                    fixed_stream(&mut body, codes, 4, INTS_PER_BLOCK, codecs, level, None)?;
                }
            }
        }
    }
    let mut file = Vec::with_capacity(data_at as usize + body.len());
    let mut head = vec![0u8; 48];
    head[8..12].copy_from_slice(&1u32.to_le_bytes());
    head[12..16].copy_from_slice(&1u32.to_le_bytes());
    head[24..28].copy_from_slice(&1u32.to_le_bytes());
    head[28..32].copy_from_slice(&(ncol as u32).to_le_bytes());
    head[32..40].copy_from_slice(&chunkset_at.to_le_bytes());
    head[40..44].copy_from_slice(&(nkeys as u32).to_le_bytes());
    head[44..48].copy_from_slice(b"PAAP");
    file.extend(hashed(head));
    if nkeys > 0 {
        let mut k = vec![0u8; key_len as usize];
        for (i, c) in keys.iter().enumerate() {
            k[8 + 4 * i..12 + 4 * i].copy_from_slice(&c.to_le_bytes());
        }
        file.extend(hashed(k));
    }
    let mut chunkset = vec![0u8; 80 + 8 * ncol];
    chunkset[8..12].copy_from_slice(&1u32.to_le_bytes());
    chunkset[64..72].copy_from_slice(&rows.to_le_bytes());
    chunkset[72..76].copy_from_slice(&(ncol as u32).to_le_bytes());
    for (c, p) in planned.iter().enumerate() {
        for (k, v) in [p.attribute, p.kind, p.base, p.scale].into_iter().enumerate() {
            let at = 80 + 2 * (k * ncol + c);
            chunkset[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
    }
    file.extend(hashed(chunkset));
    let mut names_head = vec![0u8; 24];
    names_head[8..12].copy_from_slice(&1u32.to_le_bytes());
    file.extend(hashed(names_head));
    file.extend(names_stream);
    let mut index = vec![0u8; 96];
    index[8..12].copy_from_slice(&1u32.to_le_bytes());
    index[24..26].copy_from_slice(&4u16.to_le_bytes());
    let chunk_at = file.len() as u64 + 96;
    index[32..40].copy_from_slice(&chunk_at.to_le_bytes());
    index[64..72].copy_from_slice(&rows.to_le_bytes());
    file.extend(hashed(index));
    let mut chunk = vec![0u8; 24 + 8 * ncol];
    chunk[8..12].copy_from_slice(&1u32.to_le_bytes());
    for (c, at) in positions.iter().enumerate() {
        chunk[24 + 8 * c..32 + 8 * c].copy_from_slice(&at.to_le_bytes());
    }
    file.extend(hashed(chunk));
    debug_assert_eq!(file.len() as u64, data_at);
    file.extend(body);
    Ok(file)
}

/// Write `root`, a data frame, as an `.fst` file at `path` (or an object
/// store URL) at fst's compression `level` (0-100, default 50); the file
/// appears only when complete, and what fst cannot hold leaves nothing
/// behind.
pub fn write_fst_file(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    root: &RObject,
    refs: &RefTable,
    level: Option<u32>,
) -> Result<()> {
    let level = level.unwrap_or(container::DEFAULT_LEVEL);
    if level > 100 {
        return Err(Error::usage(format!("compression level {level} is out of range: an .fst file takes 0 to 100")));
    }
    let bytes = encode(root, refs, level)?;
    crate::io::atomic::atomic_write(path, storage, |f| {
        f.write_all(&bytes).map_err(|e| Error::io(&e, "cannot write"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::fst::Tracked;
    use crate::tree::make::{ints, reals, strings, ObjectMaker};
    use crate::tree::Flags;
    use arrow_buffer::ScalarBuffer;

    /// A data frame of `n` rows: integers with NA, doubles, logicals,
    /// strings with NA, a factor.
    fn frame(n: usize) -> (RObject, RefTable) {
        let mut m = ObjectMaker::default();
        let i: Vec<i32> = (0..n as i32).map(|k| if k % 7 == 0 { i32::MIN } else { k * 3 }).collect();
        let d: Vec<f64> = (0..n).map(|k| k as f64 / 3.0).collect();
        let l = RObject::Vector(Box::new(crate::tree::Vector {
            flags: Flags::default(),
            data: VectorData::Logical(ScalarBuffer::from((0..n as i32).map(|k| [0, 1, i32::MIN][k as usize % 3]).collect::<Vec<_>>())),
            attributes: None,
        }));
        let words: Vec<String> = (0..n).map(|k| format!("w{}", k % 50)).collect();
        let s = strings(words.iter().enumerate().map(|(k, w)| (k % 11 != 0).then_some(w.as_bytes())));
        let codes: Vec<i32> = (0..n as i32).map(|k| if k % 13 == 0 { i32::MIN } else { 1 + k % 3 }).collect();
        let levels = strings([Some(&b"a"[..]), Some(b"b"), Some(b"c")]);
        let class = strings([Some(&b"factor"[..])]);
        let f = m.vector(VectorData::Integer(ScalarBuffer::from(codes)), vec![("levels", levels), ("class", class)]);
        let cols = vec![ints(i), reals(d), l, s, f];
        let names = strings(["i", "d", "l", "s", "f"].iter().map(|x| Some(x.as_bytes())));
        let class = strings([Some(&b"data.frame"[..])]);
        let rn = ints(if n == 0 { vec![] } else { vec![i32::MIN, -(n as i32)] });
        let root = m.vector(VectorData::List(cols), vec![("names", names), ("class", class), ("row.names", rn)]);
        (root, m.refs)
    }

    /// The strings of a character vector (`None`: `NA`).
    fn texts(s: &StringVector) -> Vec<Option<Vec<u8>>> {
        (0..s.len()).map(|i| s.get(i).map(<[u8]>::to_vec)).collect()
    }

    /// Two data frames hold the same columns: values, classes, levels, names.
    fn assert_same(a: &RObject, ra: &RefTable, b: &RObject, rb: &RefTable, what: &str) {
        let cols = |x: &RObject| match x {
            RObject::Vector(v) => match &v.data {
                VectorData::List(c) => c.len(),
                _ => panic!("{what}: not a list"),
            },
            _ => panic!("{what}: not a vector"),
        };
        assert_eq!(cols(a), cols(b), "{what}");
        let strs = |x: &RObject, r: &RefTable, name: &str| x.attribute(r, name).and_then(|v| v.as_strings()).map(texts);
        for name in ["names", "class"] {
            assert_eq!(strs(a, ra, name), strs(b, rb, name), "{what}: {name}");
        }
        let (RObject::Vector(va), RObject::Vector(vb)) = (a, b) else { unreachable!() };
        let (VectorData::List(ca), VectorData::List(cb)) = (&va.data, &vb.data) else { unreachable!() };
        for (j, (x, y)) in ca.iter().zip(cb).enumerate() {
            let (RObject::Vector(vx), RObject::Vector(vy)) = (x, y) else { panic!("{what}: column {j}") };
            match (&vx.data, &vy.data) {
                (VectorData::Integer(p), VectorData::Integer(q)) | (VectorData::Logical(p), VectorData::Logical(q)) => {
                    assert_eq!(p, q, "{what}: column {j}")
                }
                (VectorData::Real(p), VectorData::Real(q)) => {
                    assert!(p.iter().zip(q.iter()).all(|(u, v)| u.to_bits() == v.to_bits()) && p.len() == q.len(), "{what}: column {j}")
                }
                (VectorData::Character(p), VectorData::Character(q)) => assert_eq!(texts(p), texts(q), "{what}: column {j}"),
                (p, q) => panic!("{what}: column {j} is {p:?} and {q:?}"),
            }
            for name in ["class", "levels"] {
                assert_eq!(strs(x, ra, name), strs(y, rb, name), "{what}: column {j}'s {name}");
            }
        }
    }

    #[test]
    fn a_frame_written_reads_back_at_every_level_and_block_boundary() {
        for n in [0usize, 1, 2047, 2048, 4096, 4097, 9000] {
            let (root, refs) = frame(n);
            for level in [0, 1, 30, 50, 51, 80, 100] {
                let bytes = encode(&root, &refs, level).unwrap();
                let doc = crate::read_bytes(bytes, &Default::default()).unwrap();
                assert_same(&root, &refs, &doc.root, &doc.refs, &format!("{n} rows at level {level}"));
            }
        }
    }

    #[test]
    fn a_row_count_no_data_backs_is_refused_before_it_is_made() {
        // a factor without levels stores no codes: only the headers say
        // how many rows it has
        let mut m = ObjectMaker::default();
        let class = strings([Some(&b"factor"[..])]);
        let f = m.vector(VectorData::Integer(ScalarBuffer::from(vec![i32::MIN; 3])), vec![("levels", strings([])), ("class", class)]);
        let names = strings([Some(&b"f"[..])]);
        let class = strings([Some(&b"data.frame"[..])]);
        let root = m.vector(VectorData::List(vec![f]), vec![("names", names), ("class", class), ("row.names", ints(vec![i32::MIN, -3]))]);
        let mut b = encode(&root, &m.refs, 50).unwrap();
        let huge = (1u64 << 40).to_le_bytes();
        // the rows in the chunkset header (at 48 + 64) and the chunk index
        b[48 + 64..48 + 72].copy_from_slice(&huge);
        let mut r = Tracked::new(Box::new(std::io::Cursor::new(b.clone())));
        let _ = container::FstTable::read(&mut r);
        let index = b.len() - 96 - 24 - 8 - 16;
        b[index + 64..index + 72].copy_from_slice(&huge);
        container::restore_header_hashes(&mut b).unwrap();
        let opts = crate::ReadOptions { max_memory: Some(1 << 30), ..Default::default() };
        let e = crate::read_bytes(b, &opts).unwrap_err();
        assert!(e.message.contains("memory"), "{e}");
    }

    #[test]
    fn a_damaged_file_is_an_error_or_reads_never_a_panic() {
        let (root, refs) = frame(5000);
        let intact = encode(&root, &refs, 60).unwrap();
        let data_at = {
            let mut r = Tracked::new(Box::new(std::io::Cursor::new(intact.clone())));
            container::FstTable::read(&mut r).unwrap();
            r.pos() as usize
        };
        // any flip in the headers, hashes as written: an error (the column
        // names between them carry no check in fst: not flipped here)
        let names_at = 48 + 80 + 8 * 5 + 24;
        let names_end = data_at - 96 - 24 - 8 * 5;
        for at in (0..data_at).step_by(3).filter(|at| !(names_at..names_end).contains(at)) {
            let mut b = intact.clone();
            b[at] ^= 0x08;
            assert!(crate::read_bytes(b, &Default::default()).is_err(), "flip at {at}");
        }
        // flips anywhere with the hashes made right again, and cuts:
        // an error or a frame, never a panic or a hang
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for k in 0..1500 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut b = intact.clone();
            let at = (seed % b.len() as u64) as usize;
            b[at] ^= 1 << (seed >> 40) % 8;
            if k % 5 == 0 {
                b[(seed >> 20) as usize % intact.len()] = (seed >> 50) as u8;
            }
            if container::restore_header_hashes(&mut b).is_some() {
                let _ = crate::read_bytes(b, &Default::default());
            }
        }
        for cut in (0..intact.len()).step_by(97) {
            assert!(crate::read_bytes(intact[..cut].to_vec(), &Default::default()).is_err(), "cut at {cut}");
        }
    }
}
