//! The tree written as qs2's qdata encoding (`.qdata`, which
//! `qs2::qd_read()` reads; its reader is `read::qdata`): NULL, logical,
//! integer, double, complex, character, list and raw vectors with
//! attributes; anything else (environments, functions, S4 objects,
//! pairlists, expression vectors, strings marked as bytes) is refused,
//! naming the first part that cannot be held, before a byte is written.
//! Strings are written in UTF-8 (Latin-1 ones translated, as `qd_save()`
//! does); ALTREP vectors as the vectors they stand for; data.table's
//! pointer to itself is left out, as `qd_save()` leaves it.
//!
//! The payload is cut into blocks as qs2's own writer cuts it (a header
//! never straddles two blocks, data fills them), because `qd_read()`
//! reads headers within one block; the blocks are compressed on every
//! core into qs2's container (`compression::qx`), the hash in its header.

use crate::base::error::{Error, Result};
use crate::compression::qx::{self, QxFormat, QxHeader, MAX_BLOCK};
use crate::tree::{altrep, encoding, levels, sxp, RObject, RefTable, StringLevels, StringVector, VectorData};
use std::io::Write;
use std::path::Path;

/// A stand-in for the data of an ALTREP vector, which is expanded.
static NOTHING: VectorData = VectorData::Skipped { sxptype: 0, len: 0 };

/// A block may be cut before a header once it holds more than this.
const MIN_BLOCK: usize = MAX_BLOCK - 64;

/// The payload, cut into blocks as `qd_save()` cuts it.
struct Blocks<'a> {
    current: Vec<u8>,
    done: &'a mut dyn FnMut(Vec<u8>) -> Result<()>,
}

impl Blocks<'_> {
    fn flush(&mut self) -> Result<()> {
        if !self.current.is_empty() {
            let block = std::mem::take(&mut self.current);
            (self.done)(block)?;
        }
        Ok(())
    }
    /// The first bytes of a header (a new block first when this one is full).
    fn pod(&mut self, b: &[u8]) -> Result<()> {
        if self.current.len() > MIN_BLOCK {
            self.flush()?;
        }
        self.current.extend_from_slice(b);
        Ok(())
    }
    /// The rest of a header, in the same block.
    fn pod_contiguous(&mut self, b: &[u8]) {
        self.current.extend_from_slice(b);
    }
    /// Data, filling blocks.
    fn data(&mut self, mut b: &[u8]) -> Result<()> {
        while !b.is_empty() {
            if self.current.len() >= MAX_BLOCK {
                self.flush()?;
            }
            let k = (MAX_BLOCK - self.current.len()).min(b.len());
            self.current.extend_from_slice(&b[..k]);
            b = &b[k..];
        }
        Ok(())
    }
}

/// What the encoding holds of one object, checked.
enum Item<'a> {
    Nil,
    Vector {
        kind: u8,
        len: u64,
        data: Data<'a>,
        attrs: Vec<(&'a [u8], Item<'a>)>,
    },
}

/// A vector's payload.
enum Data<'a> {
    Fixed(Vec<u8>),
    Borrowed(&'a [u8]),
    Strings(std::borrow::Cow<'a, StringVector>),
    List(Vec<Item<'a>>),
}

fn refuse(path: &str, what: &str) -> Error {
    Error::usage(format!(
        "a .qdata file cannot hold {what} (at {path}): qdata holds NULL and logical, integer, double, complex, character, list and raw vectors with attributes; write a .qs2 file instead"
    ))
}

/// The little-endian bytes of a fixed-width payload (as it lies on this
/// machine).
fn le_bytes(data: &VectorData) -> Option<(u8, u64, Vec<u8>)> {
    fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
        // SAFETY: plain numbers viewed as their bytes
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
            .to_vec()
    }
    Some(match data {
        VectorData::Logical(v) => (sxp::LGL, v.len() as u64, bytes_of(v)),
        VectorData::Integer(v) => (sxp::INT, v.len() as u64, bytes_of(v)),
        VectorData::Real(v) => (sxp::REAL, v.len() as u64, bytes_of(v)),
        VectorData::Complex(v) => (sxp::CPLX, v.len() as u64 / 2, bytes_of(v)),
        VectorData::Raw(b) => (sxp::RAW, b.len() as u64, b.to_vec()),
        _ => return None,
    })
}

/// Check `o` (at object path `path`) and gather what is written of it.
fn item<'a>(
    o: &'a RObject,
    refs: &'a RefTable,
    path: &str,
    depth: usize,
    left_out: &mut Vec<String>,
) -> Result<Item<'a>> {
    if depth > 10_000 {
        return Err(refuse(path, "objects nested this deeply"));
    }
    let (flags, data_owned, data, attributes) = match o {
        RObject::Null => return Ok(Item::Nil),
        RObject::Vector(v) => (v.flags, None, &v.data, v.attributes.as_ref()),
        RObject::Altrep(a) => {
            let expanded = altrep::expand(a, refs)
                .map_err(|_| refuse(path, "an ALTREP vector of a class rdarrow does not expand"))?;
            let attrs = match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            };
            (a.flags, Some(expanded), &NOTHING, attrs)
        }
        RObject::S4(_) => return Err(refuse(path, "an S4 object")),
        RObject::Ref(id) => {
            return Err(refuse(
                path,
                match refs.get(*id) {
                    Some(crate::tree::RefEntry::Environment(_)) => "an environment",
                    Some(crate::tree::RefEntry::Symbol(_)) => "a symbol",
                    _ => "an environment, external pointer or weak reference",
                },
            ))
        }
        RObject::Pairlist(p) => {
            return Err(refuse(
                path,
                match p.cells.first().map(|c| c.sxptype) {
                    Some(sxp::CLO) => "a function",
                    Some(sxp::LANG) => "a call or formula",
                    Some(sxp::PROM) => "a promise",
                    _ => "a pairlist",
                },
            ))
        }
        RObject::Special(_) => return Err(refuse(path, "an environment or special value")),
        RObject::Primitive(_) => return Err(refuse(path, "a primitive function")),
        RObject::Bytecode(_) => return Err(refuse(path, "byte code")),
        RObject::Char(_) | RObject::Taken(_) => {
            return Err(refuse(path, "a part R's vectors do not hold"))
        }
    };
    if flags.levels & levels::S4_OBJECT != 0 {
        return Err(refuse(path, "an S4 object"));
    }
    // a payload made here (an expanded ALTREP vector, a consumer's copy)
    // is owned by what is written; one of the tree's is borrowed
    let owned =
        match (data_owned, data) {
            (Some(d), _) => Some(d),
            (None, VectorData::Deferred(_) | VectorData::Skipped { .. }) => {
                return Err(Error::internal(format!(
                    "the payload of {path} is not at hand for the qdata writer"
                )))
            }
            (None, VectorData::Consumed(c)) => Some(c.payload().ok_or_else(|| {
                Error::internal(format!("the payload of {path} went to a consumer"))
            })?),
            (None, _) => None,
        };
    let check_strings = |s: &StringVector| -> Result<()> {
        for i in 0..s.len() {
            if !s.is_na(i) && level_of(&s.levels, i) & levels::BYTES != 0 {
                return Err(refuse(
                    path,
                    "strings marked as bytes (qdata holds UTF-8 text)",
                ));
            }
        }
        Ok(())
    };
    let (kind, len, body) = match (owned, data) {
        (Some(VectorData::Character(s)), _) => {
            check_strings(&s)?;
            (
                sxp::STR,
                s.len() as u64,
                Data::Strings(std::borrow::Cow::Owned(s)),
            )
        }
        (Some(d), _) => {
            let (k, n, b) =
                le_bytes(&d).ok_or_else(|| Error::internal(format!("the payload of {path}")))?;
            (k, n, Data::Fixed(b))
        }
        (None, VectorData::Character(s)) => {
            check_strings(s)?;
            (
                sxp::STR,
                s.len() as u64,
                Data::Strings(std::borrow::Cow::Borrowed(s)),
            )
        }
        (None, VectorData::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                out.push(item(x, refs, &format!("{path}[[{}]]", i + 1), depth + 1, left_out)?);
            }
            (sxp::VEC, items.len() as u64, Data::List(out))
        }
        (None, VectorData::Expression(_)) => return Err(refuse(path, "an expression vector")),
        (None, VectorData::Raw(b)) => (sxp::RAW, b.len() as u64, Data::Borrowed(b.as_slice())),
        (None, d) => {
            let (k, n, b) =
                le_bytes(d).ok_or_else(|| Error::internal(format!("the payload of {path}")))?;
            (k, n, Data::Fixed(b))
        }
    };
    let mut attrs = Vec::new();
    if let Some(a) = attributes {
        let RObject::Pairlist(p) = a else {
            return Err(refuse(path, "attributes that are not a pairlist"));
        };
        for c in &p.cells {
            let name = match &c.tag {
                Some(RObject::Ref(id)) => refs.symbol_name(*id),
                _ => None,
            }
            .ok_or_else(|| refuse(path, "an attribute without a name"))?;
            // data.table's pointer to itself, which data.table makes anew
            // (qd_save() drops it too)
            if name == b".internal.selfref"
                && matches!(&c.car, RObject::Ref(id) if matches!(refs.get(*id), Some(crate::tree::RefEntry::ExternalPointer(_))))
            {
                left_out.push(format!(
                    "attr({path}, \".internal.selfref\") (data.table's pointer to itself, which data.table makes anew) is left out, as qd_save() leaves it"
                ));
                continue;
            }
            let shown = String::from_utf8_lossy(name);
            let value = item(
                &c.car,
                refs,
                &format!("attr({path}, \"{shown}\")"),
                depth + 1,
                left_out,
            )?;
            if matches!(value, Item::Nil) {
                continue;
            }
            attrs.push((name, value));
        }
    }
    Ok(Item::Vector {
        kind,
        len,
        data: body,
        attrs,
    })
}

fn level_of(l: &StringLevels, i: usize) -> u16 {
    match l {
        StringLevels::Uniform(l) => *l,
        StringLevels::PerElement(v) => v[i],
    }
}

/// The header of one object (`attrs` attributes before it).
fn header(b: &mut Blocks<'_>, kind: u8, len: u64, attrs: usize) -> Result<()> {
    let has = attrs > 0;
    if has {
        if attrs < 32 {
            b.pod(&[0xE0 | attrs as u8])?;
        } else if attrs < 256 {
            b.pod(&[0x1E])?;
            b.pod_contiguous(&[attrs as u8]);
        } else {
            b.pod(&[0x1F])?;
            b.pod_contiguous(&(attrs as u32).to_le_bytes());
        }
    }
    let first = |b: &mut Blocks<'_>, byte: u8| -> Result<()> {
        if has {
            b.pod_contiguous(&[byte]);
            Ok(())
        } else {
            b.pod(&[byte])
        }
    };
    // (5-bit code, 8/16/32/64-bit codes)
    let (short, codes): (Option<u8>, [u8; 4]) = match kind {
        sxp::LGL => (Some(0x80), [0x0D, 0x0E, 0x0F, 0x10]),
        sxp::INT => (Some(0x60), [0x09, 0x0A, 0x0B, 0x0C]),
        sxp::REAL => (Some(0x40), [0x05, 0x06, 0x07, 0x08]),
        sxp::STR => (Some(0xA0), [0x11, 0x12, 0x13, 0x14]),
        sxp::VEC => (Some(0x20), [0x01, 0x02, 0x03, 0x04]),
        sxp::CPLX => (None, [0, 0, 0x15, 0x16]),
        _ => (None, [0, 0, 0x17, 0x18]),
    };
    match short {
        Some(s) if len < 32 => first(b, s | len as u8),
        Some(_) if len < 256 => {
            first(b, codes[0])?;
            b.pod_contiguous(&[len as u8]);
            Ok(())
        }
        Some(_) if len < 65536 => {
            first(b, codes[1])?;
            b.pod_contiguous(&(len as u16).to_le_bytes());
            Ok(())
        }
        _ if len < 1 << 32 => {
            first(b, codes[2])?;
            b.pod_contiguous(&(len as u32).to_le_bytes());
            Ok(())
        }
        _ => {
            first(b, codes[3])?;
            b.pod_contiguous(&len.to_le_bytes());
            Ok(())
        }
    }
}

/// A string's length (`None`: `NA`).
fn string_header(b: &mut Blocks<'_>, len: Option<usize>) -> Result<()> {
    match len {
        None => b.pod(&[255]),
        Some(n) if n < 253 => b.pod(&[n as u8]),
        Some(n) if n < 65536 => {
            b.pod(&[253])?;
            b.pod_contiguous(&(n as u16).to_le_bytes());
            Ok(())
        }
        Some(n) => {
            b.pod(&[254])?;
            b.pod_contiguous(&(n as u32).to_le_bytes());
            Ok(())
        }
    }
}

/// The tree of `it` (headers and attribute names), gathering its
/// payloads by group in the order `qd_read()` meets them.
fn tree<'a, 'b>(
    b: &mut Blocks<'_>,
    it: &'b Item<'a>,
    groups: &mut [Vec<&'b Item<'a>>; 5],
) -> Result<()> {
    match it {
        Item::Nil => b.pod(&[0x00]),
        Item::Vector {
            kind,
            len,
            data,
            attrs,
        } => {
            header(b, *kind, *len, attrs.len())?;
            for (name, value) in attrs {
                string_header(b, Some(name.len()))?;
                b.data(name)?;
                tree(b, value, groups)?;
            }
            match data {
                Data::List(items) => {
                    for x in items {
                        tree(b, x, groups)?;
                    }
                }
                _ if *len > 0 => {
                    let g = match kind {
                        &sxp::STR => 0,
                        &sxp::CPLX => 1,
                        &sxp::REAL => 2,
                        &sxp::LGL | &sxp::INT => 3,
                        _ => 4,
                    };
                    groups[g].push(it);
                }
                _ => {}
            }
            Ok(())
        }
    }
}

/// Write the payload of `root` into blocks, each handed to `done`.
fn encode(root: &Item<'_>, done: &mut dyn FnMut(Vec<u8>) -> Result<()>) -> Result<()> {
    // (a block's room grows as it fills: a small object's stays small)
    let mut b = Blocks {
        current: Vec::new(),
        done,
    };
    let mut groups: [Vec<&Item<'_>>; 5] = Default::default();
    tree(&mut b, root, &mut groups)?;
    for group in &groups {
        for it in group {
            let Item::Vector { data, .. } = it else {
                continue;
            };
            match data {
                Data::Strings(s) => {
                    for i in 0..s.len() {
                        if s.is_na(i) {
                            string_header(&mut b, None)?;
                            continue;
                        }
                        // in UTF-8, as qd_save() writes them (bytes were
                        // refused when the tree was checked)
                        let (_, text) = encoding::to_utf8(s.bytes(i), level_of(&s.levels, i), None);
                        string_header(&mut b, Some(text.len()))?;
                        b.data(&text)?;
                    }
                }
                Data::Fixed(v) => b.data(v)?,
                Data::Borrowed(v) => b.data(v)?,
                Data::List(_) => {}
            }
        }
    }
    b.flush()
}

/// Write `root` as a `.qdata` file at `path` (or an object store URL),
/// its blocks compressed at zstd `level` on `threads` threads; the file
/// appears only when complete, and an object qdata cannot hold leaves
/// nothing behind. Returns what was left out (data.table's pointer to
/// itself), one line each, for the caller to tell, as `qd_save()` does.
pub fn write_qdata_file(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    root: &RObject,
    refs: &RefTable,
    level: Option<u32>,
    threads: usize,
) -> Result<Vec<String>> {
    let mut left_out = Vec::new();
    let it = item(root, refs, "the object", 0, &mut left_out)?;
    let level = level.unwrap_or(3) as i32;
    crate::io::atomic::atomic_write(path, storage, |f| {
        let can_patch = f.can_patch();
        let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut *f);
        let header = QxHeader::written(QxFormat::Qdata);
        out.write_all(&header)
            .map_err(|e| Error::io(&e, "cannot write"))?;
        let mut hash = qx::body_hash();
        compress_in_order(&it, level, threads.max(1), &mut |z: &[u8]| {
            std::hash::Hasher::write(&mut hash, z);
            out.write_all(z).map_err(|e| Error::io(&e, "cannot write"))
        })?;
        out.flush().map_err(|e| Error::io(&e, "cannot write"))?;
        drop(out);
        if can_patch {
            let patch = crate::compression::piece::HeaderPatch {
                offset: qx::HASH_AT as u64,
                bytes: qx::stored_hash(std::hash::Hasher::finish(&hash)).to_vec(),
            };
            f.patch(&patch).map_err(|e| Error::io(&e, "cannot write"))?;
        }
        Ok(())
    })?;
    Ok(left_out)
}

/// At least the bytes `it` encodes to (a string's UTF-8 counted twice
/// its bytes, which covers Latin-1 text translated), stopping once past
/// `limit`.
fn size_bound(it: &Item<'_>, limit: usize) -> usize {
    let Item::Vector { data, attrs, .. } = it else {
        return 1;
    };
    let mut n: usize = 16;
    for (name, value) in attrs {
        n = n.saturating_add(name.len() + 9).saturating_add(size_bound(value, limit));
    }
    n = n.saturating_add(match data {
        Data::Fixed(v) => v.len(),
        Data::Borrowed(v) => v.len(),
        Data::Strings(s) => (0..s.len()).fold(0usize, |a, i| {
            a.saturating_add(if s.is_na(i) { 1 } else { 2 * s.bytes(i).len() + 9 })
        }),
        Data::List(items) => {
            let mut m = 0usize;
            for x in items {
                m = m.saturating_add(size_bound(x, limit));
                if m > limit {
                    break;
                }
            }
            m
        }
    });
    n
}

/// Encode `it`, compress its blocks on `threads` threads, and hand the
/// compressed blocks to `write` in order. An object of one block (a small
/// one) is compressed here, without starting a thread.
fn compress_in_order(
    it: &Item<'_>,
    level: i32,
    threads: usize,
    write: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    if threads <= 1 || size_bound(it, MIN_BLOCK) <= MIN_BLOCK {
        return encode(it, &mut |block| {
            crate::base::cancel::check()?;
            let z = qx::compress_blocks(&block, level).map_err(|e| Error::io(&e, "cannot compress"))?;
            write(&z)
        });
    }
    use std::collections::BTreeMap;
    use std::sync::mpsc::{channel, sync_channel};
    use std::sync::{Arc, Mutex};
    let (jobs_tx, jobs_rx) = sync_channel::<(u64, Vec<u8>)>(threads * 2);
    let jobs_rx = Arc::new(Mutex::new(jobs_rx));
    let (done_tx, done_rx) = channel::<(u64, std::io::Result<Vec<u8>>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let rx = jobs_rx.clone();
            let tx = done_tx.clone();
            scope.spawn(move || loop {
                let job = rx.lock().ok().and_then(|r| r.recv().ok());
                let Some((i, block)) = job else { return };
                if tx.send((i, qx::compress_blocks(&block, level))).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut next_in = 0u64;
        let mut next_out = 0u64;
        let mut pending: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut drain =
            |upto: u64, pending: &mut BTreeMap<u64, Vec<u8>>, next_out: &mut u64| -> Result<()> {
                while *next_out < upto {
                    if let Some(z) = pending.remove(next_out) {
                        write(&z)?;
                        *next_out += 1;
                        continue;
                    }
                    let (i, z) = done_rx
                        .recv()
                        .map_err(|_| Error::internal("a qdata compression thread stopped"))?;
                    pending.insert(i, z.map_err(|e| Error::io(&e, "cannot compress"))?);
                }
                Ok(())
            };
        let result = encode(it, &mut |block| {
            crate::base::cancel::check()?;
            // each thread busy and one block waiting
            if next_in > next_out + threads as u64 {
                drain(next_in - threads as u64, &mut pending, &mut next_out)?;
            }
            jobs_tx
                .send((next_in, block))
                .map_err(|_| Error::internal("the qdata compression threads stopped"))?;
            next_in += 1;
            Ok(())
        });
        let result = result.and_then(|()| drain(next_in, &mut pending, &mut next_out));
        drop(jobs_tx);
        result
    })
}
