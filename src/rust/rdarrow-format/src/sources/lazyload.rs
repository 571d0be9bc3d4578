//! R's lazy-load data bases: where every installed package keeps its data
//! sets (`data/Rdata.rdb`), its code (`R/<pkg>.rdb`) and its system data
//! (`R/sysdata.rdb`). A base is a pair of files:
//!
//! * the index, `<base>.rdx`: an `.rds` stream of `list(variables =, references =,
//!   compressed =)`, where `variables` maps each object's name, and
//!   `references` each environment the objects share (`env::1`, ...), to
//!   the place of its entry, `c(offset, length)` in bytes;
//! * the entries, `<base>.rdb`: each object `serialize()`d and compressed
//!   alone, one after another. As `compressed` says: `FALSE`, stored;
//!   `TRUE`, a zlib stream after the 4-byte (big-endian) length of the
//!   stream it holds; `2` or `3`, that length, then a byte naming the
//!   compression (`Z` raw LZMA2 (xz), `2` bzip2, `1` zlib, `0` stored),
//!   then the data.
//!
//! A base reads as a `save()` file of its variables does: a
//! [`Document`] whose top-level objects are the variables, in the
//! index's order, each entry parsed alone and its references merged into
//! the document's table. Entries of objects that a read does not want are
//! not even decompressed (a listing parses them with payloads skipped).
//! A base is named by its `.rdb`, its `.rdx`, or the path they share
//! without extension.

use crate::read::document::{parse, Document};
use crate::base::error::{Error, Result};
use crate::wire::header::Container;
use crate::wire::decode::{Format, Input};
use crate::read::{ObjectFilter, ObjectSpan, ReadOptions};
use crate::sources::Source;
use crate::tree::*;
use crate::{Compression, StreamHeader};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How the entries of a base are compressed (the index's `compressed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entries {
    Stored,
    /// `compressed = TRUE`: length, then a zlib stream.
    Zlib,
    /// `compressed = 2` or `3`: length, a type byte, then the data.
    Typed,
}

/// Where a shared environment is: its entry, and for some (a source
/// file's) entries of bindings stored apart (`list(eagerKey =, lazyKeys =)`
/// in the index), which `lazyLoad()` binds as promises.
#[derive(Debug, Clone)]
pub struct SharedEnvironment {
    /// Where the variable's entry lies in the `.rdb` (offset, length).
    pub entry: (u64, u64),
    /// The environment keys whose entries are read on demand, and where.
    pub lazy: Vec<(String, (u64, u64))>,
}

/// An opened base: its entries' file and index.
#[derive(Debug)]
pub struct LazyDb {
    rdb: PathBuf,
    /// The `.rdb` in an object store, read by range.
    remote: Option<crate::io::store::Store>,
    entries: Entries,
    /// Each object's name and entry (offset, length).
    pub variables: Vec<(String, (u64, u64))>,
    /// The shared environments' keys (`env::1`, ...) and entries.
    pub references: Vec<(String, SharedEnvironment)>,
    rdb_len: u64,
}

/// The pair of files `path` names, if it names a lazy-load base: an
/// `.rdb` or `.rdx` file, or the path they share without extension.
pub fn files_of(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let (rdb, rdx) = match ext.as_deref() {
        Some("rdb") | Some("rdx") => (path.with_extension("rdb"), path.with_extension("rdx")),
        // an R data file's name is not a base's (asked without a look at
        // the disk: every read of a file asks)
        Some("rda") | Some("rdata") | Some("rds") => return None,
        // in an object store: named by its .rdb or .rdx only (a guess at
        // another name would cost requests)
        _ if crate::io::store::is_store_path(path) => return None,
        _ if !path.exists() => {
            let with = |e: &str| {
                let mut s = path.as_os_str().to_owned();
                s.push(".");
                s.push(e);
                PathBuf::from(s)
            };
            (with("rdb"), with("rdx"))
        }
        _ => return None,
    };
    (crate::io::store::is_store_path(path) || rdb.is_file() || rdx.is_file()).then_some((rdb, rdx))
}

impl LazyDb {
    /// Open the base `path` names (see [`files_of`]).
    pub fn open(path: &Path, opts: &ReadOptions) -> Result<LazyDb> {
        let (rdb, rdx) = files_of(path).ok_or_else(|| {
            Error::usage(format!("'{}' is not a lazy-load data base", path.display()))
        })?;
        let remote = crate::io::store::is_store_path(&rdb);
        // the pair's other half must be there too (in a store, the reads
        // below say which is missing)
        for (there, kind, missing, what) in [
            (&rdb, "data base", &rdx, "index"),
            (&rdx, "index", &rdb, "data base"),
        ] {
            if !remote && !missing.is_file() {
                return Err(Error::new(
                    crate::ErrorKind::NotRData,
                    format!(
                        "the lazy-load {kind} '{}' has no {what} '{}' beside it",
                        there.display(),
                        missing.display()
                    ),
                ));
            }
        }
        let index_source = if remote {
            Source::Object(rdx.to_string_lossy().into_owned())
        } else {
            Source::File(rdx.clone())
        };
        let index = index_source
            .read(&as_is(opts), &mut |_: &[u8]| true)
            .map_err(|e| Error {
                message: format!("the index '{}': {}", rdx.display(), e.message),
                ..e
            })?;
        let bad = |why: &str| {
            Error::corrupt(format!(
                "'{}' is not a lazy-load index: {why}",
                rdx.display()
            ))
        };
        let items = crate::tree::list_entries(&index.root, &index.refs);
        let part = |name: &str| items.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
        let keys_in = |list: &RObject, what: &str| -> Result<Vec<(String, (u64, u64))>> {
            crate::tree::list_entries(list, &index.refs)
                .into_iter()
                .map(|(k, v)| {
                    let key = key_of(v).ok_or_else(|| {
                        bad(&format!("the key of {what} '{k}' is not c(offset, length)"))
                    })?;
                    Ok((k, key))
                })
                .collect()
        };
        let variables = match part("variables") {
            Some(list) => keys_in(list, "variable")?,
            None => return Err(bad("it has no 'variables'")),
        };
        let mut references = Vec::new();
        if let Some(list) = part("references") {
            for (k, v) in crate::tree::list_entries(list, &index.refs) {
                let shared = match key_of(v) {
                    Some(entry) => SharedEnvironment {
                        entry,
                        lazy: Vec::new(),
                    },
                    None => {
                        let parts = crate::tree::list_entries(v, &index.refs);
                        let get = |n: &str| parts.iter().find(|(p, _)| p == n).map(|(_, x)| *x);
                        let entry = get("eagerKey").and_then(key_of).ok_or_else(|| {
                            bad(&format!(
                                "the key of reference '{k}' is not c(offset, length)"
                            ))
                        })?;
                        let lazy = match get("lazyKeys") {
                            Some(l) => keys_in(l, "binding")?,
                            None => Vec::new(),
                        };
                        SharedEnvironment { entry, lazy }
                    }
                };
                references.push((k, shared));
            }
        }
        let entries = match part("compressed").map(|c| scalar(c)) {
            Some(Some(0.0)) => Entries::Stored,
            Some(Some(x)) if x == 2.0 || x == 3.0 => Entries::Typed,
            Some(Some(_)) => Entries::Zlib,
            _ => return Err(bad("its 'compressed' is not TRUE, FALSE, 2 or 3")),
        };
        let (rdb_len, remote) = if remote {
            let store =
                crate::io::store::Store::open(&rdb.to_string_lossy(), &opts.storage, opts.timeout)?;
            (store.len()?, Some(store))
        } else {
            let len = std::fs::metadata(&rdb)
                .map_err(|e| Error::io(&e, &format!("cannot open '{}'", rdb.display())))?
                .len();
            (len, None)
        };
        Ok(LazyDb {
            rdb,
            remote,
            entries,
            variables,
            references,
            rdb_len,
        })
    }

    /// Whether the base is in an object store (its entries are read by
    /// range; there is no file to open).
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The entries' file, open.
    pub fn rdb_file(&self) -> Result<std::fs::File> {
        std::fs::File::open(&self.rdb)
            .map_err(|e| Error::io(&e, &format!("cannot open '{}'", self.rdb.display())))
    }

    /// The serialized stream of the entry at `(offset, length)`, the
    /// object `name`'s; at most `limit` bytes.
    pub fn entry(&self, name: &str, (offset, len): (u64, u64), limit: u64) -> Result<Vec<u8>> {
        let end = offset
            .checked_add(len)
            .filter(|&e| e <= self.rdb_len)
            .ok_or_else(|| {
                Error::corrupt(format!(
                    "the index puts '{name}' at bytes {offset} to {} of '{}', which has {} bytes",
                    offset.saturating_add(len),
                    self.rdb.display(),
                    self.rdb_len
                ))
            })?;
        let raw: Vec<u8> = match &self.remote {
            Some(store) => store.range(offset, end - offset)?.into(),
            None => {
                let mut f = self.rdb_file()?;
                let mut raw = vec![0u8; (end - offset) as usize];
                std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(offset))
                    .and_then(|_| f.read_exact(&mut raw))
                    .map_err(|e| Error::io(&e, &format!("cannot read '{}'", self.rdb.display())))?;
                raw
            }
        };
        let corrupt = |why: String| {
            Error::corrupt(format!(
                "the entry of '{name}' in '{}' {why}",
                self.rdb.display()
            ))
        };
        if self.entries == Entries::Stored {
            return Ok(raw);
        }
        if raw.len() < 4 {
            return Err(corrupt("is too short".into()));
        }
        let out_len = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]) as u64;
        if out_len > limit {
            return Err(Error::limit_of(
                crate::base::error::LimitKind::Memory,
                format!("the entry of '{name}' would take {out_len} bytes, more than the limit of {limit}"),
            ));
        }
        let (kind, data) = match self.entries {
            Entries::Zlib => (b'1', &raw[4..]),
            _ => match raw.get(4) {
                Some(&k) => (k, &raw[5..]),
                None => return Err(corrupt("is too short".into())),
            },
        };
        let reader: Box<dyn Read + '_> = match kind {
            b'0' => Box::new(data),
            b'1' => Box::new(flate2::read::ZlibDecoder::new(data)),
            b'2' => Box::new(bzip2::read::BzDecoder::new(data)),
            b'Z' => {
                // raw LZMA2, as R writes it; its distances stay within the
                // entry, so a dictionary of the entry's size is enough
                let mut lz = liblzma::stream::LzmaOptions::new_preset(6)
                    .map_err(|e| corrupt(format!("cannot be decoded: {e}")))?;
                lz.dict_size((out_len as u32).clamp(4096, 1 << 30));
                let mut filters = liblzma::stream::Filters::new();
                filters.lzma2(&lz);
                let stream = liblzma::stream::Stream::new_raw_decoder(&filters)
                    .map_err(|e| corrupt(format!("cannot be decoded: {e}")))?;
                Box::new(liblzma::read::XzDecoder::new_stream(data, stream))
            }
            k => {
                return Err(corrupt(format!(
                    "has the unknown compression type {:?}",
                    k as char
                )))
            }
        };
        let mut out = Vec::with_capacity(out_len.min(1 << 26) as usize);
        reader
            .take(out_len + 1)
            .read_to_end(&mut out)
            .map_err(|e| corrupt(format!("cannot be decompressed: {e}")))?;
        if out.len() as u64 != out_len {
            return Err(corrupt(format!(
                "holds {} bytes, not the {out_len} its length says",
                out.len()
            )));
        }
        Ok(out)
    }

    /// The base as a document whose top-level objects are its variables;
    /// those `filter` declines are parsed with payloads skipped, or (as
    /// [`ObjectFilter::parse_declined`] says) not at all.
    pub fn read(&self, opts: &ReadOptions, filter: &mut dyn ObjectFilter) -> Result<Document> {
        let mut refs = RefTable::default();
        let mut cells = Vec::with_capacity(self.variables.len());
        let mut spans = Vec::with_capacity(self.variables.len());
        let mut header: Option<StreamHeader> = None;
        let mut at = 0u64;
        for (name, key) in &self.variables {
            crate::base::cancel::check()?;
            let decode = filter.decode(name.as_bytes());
            let (obj, len) = if decode || filter.parse_declined() {
                let (root, entry_header, len) = self.fetch(name, *key, &mut refs, opts, decode)?;
                header.get_or_insert(entry_header);
                (root, len)
            } else {
                (RObject::Null, 0)
            };
            spans.push(ObjectSpan {
                name: name.as_bytes().to_vec(),
                start: at,
                end: at + len,
                decoded: decode,
            });
            at += len;
            cells.push(cell(&mut refs, name.as_bytes(), obj));
        }
        self.resolve_environments(&mut refs, &mut cells, opts)?;
        let header = match header {
            Some(h) => h,
            None => StreamHeader::new(Format::Xdr, 3, 0)?,
        };
        let root = if cells.is_empty() {
            RObject::Null
        } else {
            RObject::Pairlist(Box::new(Pairlist {
                cells,
                tail: RObject::Null,
            }))
        };
        Ok(Document {
            compression: match self.entries {
                Entries::Stored => Compression::None,
                _ => Compression::LazyLoadZlib,
            },
            container: Container::rdata(header.format, header.version),
            header,
            root,
            refs,
            spans,
            stream_len: at,
            trust: opts.trust.clone(),
            seen: None,
            damage: None,
            salvaged: None,
        })
    }
}

impl LazyDb {
    /// The object in the entry at `place` (`what`, for errors), parsed
    /// with `opts` (payloads skipped unless `decode`), its references moved
    /// into `refs`; with the entry's header and size.
    fn fetch(
        &self,
        what: &str,
        place: (u64, u64),
        refs: &mut RefTable,
        opts: &ReadOptions,
        decode: bool,
    ) -> Result<(RObject, StreamHeader, u64)> {
        let bytes = self
            .entry(what, place, opts.memory_limit())
            .map_err(|e| e.in_object(what))?;
        let len = bytes.len() as u64;
        let doc = parse(
            Compression::None,
            Input::from_bytes(bytes),
            opts,
            &mut move |_: &[u8]| decode,
        )
        .map_err(|e| e.in_object(what))?;
        if let Some(damage) = doc.damage {
            // (an entry is one object: what a salvaging parse kept of it
            // would be handed on without its warning)
            return Err(Error::corrupt(damage).in_object(what));
        }
        if doc.container != Container::Stream {
            return Err(Error::corrupt(format!(
                "the entry of '{what}' is a save() file, not a serialized object"
            )));
        }
        let base = refs.append(doc.refs);
        let mut root = doc.root;
        root.for_each_ref_mut(&mut |r| r.0 += base);
        Ok((root, doc.header, len))
    }

    /// The environments the entries share: each persistent reference to
    /// a key of the index's `references` (`env::1`, ...) becomes the
    /// environment its entry describes, `list(bindings =, enclos =,
    /// attributes =, isS4 =, locked =)`, one environment per key however
    /// many entries refer to it (as `lazyLoad()` makes them).
    fn resolve_environments(
        &self,
        refs: &mut RefTable,
        cells: &mut [Cell],
        opts: &ReadOptions,
    ) -> Result<()> {
        use std::collections::HashMap;
        let key_of_entry = |e: &RefEntry| match e {
            RefEntry::Persistent(items) if items.len() == 1 => items[0]
                .bytes
                .as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
            _ => None,
        };
        let mut canonical: HashMap<String, RefId> = HashMap::new();
        let mut remap: HashMap<u32, RefId> = HashMap::new();
        let mut i = 0;
        // entries appended while resolving are looked at too
        while i < refs.entries.len() {
            let Some(key) = key_of_entry(&refs.entries[i]) else {
                i += 1;
                continue;
            };
            let id = RefId(i as u32);
            if let Some(&first) = canonical.get(&key) {
                remap.insert(id.0, first);
                i += 1;
                continue;
            }
            let Some((_, shared)) = self.references.iter().find(|(k, _)| *k == key) else {
                // a reference the index does not know: left as it is
                i += 1;
                continue;
            };
            canonical.insert(key.clone(), id);
            let shared = shared.clone();
            let (root, _, _) = self.fetch(&key, shared.entry, refs, &as_is(opts), true)?;
            let parts = list_entries(&root, refs);
            let part = |n: &str| {
                parts
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| (*v).clone())
            };
            let locked = part("locked")
                .as_ref()
                .and_then(scalar)
                .is_some_and(|x| x != 0.0);
            let mut bindings = named(part("bindings"), refs);
            // bindings stored apart, forced as R forces them when used
            for (name, place) in &shared.lazy {
                let (value, _, _) =
                    self.fetch(&format!("{key}: {name}"), *place, refs, &as_is(opts), true)?;
                bindings.push((name.clone(), value));
            }
            // hashed as lazyLoad() makes it: new.env(TRUE, , 29L), then
            // list2env() of the bindings, then the lazy ones
            let cells: Vec<Cell> = bindings
                .into_iter()
                .map(|(name, value)| cell(refs, name.as_bytes(), value))
                .collect();
            let env = Environment {
                locked,
                // lazyLoad() gives an environment without one the empty one
                enclosure: match part("enclos") {
                    None | Some(RObject::Null) => RObject::Special(SpecialValue::EmptyEnv),
                    Some(e) => e,
                },
                frame: RObject::Null,
                hashtab: crate::tree::envir::hash_table(cells, crate::tree::envir::HASH_MIN_SIZE, refs),
                attributes: tagged(named(part("attributes"), refs), refs),
            };
            refs.entries[i] = RefEntry::Environment(Box::new(env));
            i += 1;
        }
        if !remap.is_empty() {
            let mut redirect = |r: &mut RefId| {
                if let Some(to) = remap.get(&r.0) {
                    *r = *to;
                }
            };
            for c in cells.iter_mut() {
                c.car.for_each_ref_mut(&mut redirect);
            }
            for e in refs.entries.iter_mut() {
                e.for_each_ref_mut(&mut redirect);
            }
        }
        Ok(())
    }
}

/// `opts` for the index and the shared environments, read as they are:
/// no conversion or deferral of their parts.
fn as_is(opts: &ReadOptions) -> ReadOptions {
    ReadOptions {
        consumer: None,
        ..opts.clone()
    }
}

/// A new symbol in `refs`.
fn symbol(refs: &mut RefTable, name: &[u8]) -> RefId {
    refs.push(RefEntry::Symbol(CharItem {
        levels: if name.is_ascii() {
            levels::ASCII
        } else {
            levels::UTF8
        },
        bytes: Some(name.to_vec()),
    }))
}

/// The (name, value) pairs of a named list (none for `NULL`).
fn named(list: Option<RObject>, refs: &RefTable) -> Vec<(String, RObject)> {
    list.map(|l| {
        list_entries(&l, refs)
            .into_iter()
            .map(|(n, v)| (n, v.clone()))
            .collect()
    })
    .unwrap_or_default()
}

/// A pairlist cell tagged `name` (a new symbol in `refs`).
fn cell(refs: &mut RefTable, name: &[u8], car: RObject) -> Cell {
    Cell {
        sxptype: sxp::LIST,
        flags: Flags::default(),
        attributes: None,
        tag: Some(RObject::Ref(symbol(refs, name))),
        car,
    }
}

/// `entries` as the tagged pairlist R keeps a frame or attributes in
/// (`NULL` when empty).
fn tagged(entries: Vec<(String, RObject)>, refs: &mut RefTable) -> RObject {
    if entries.is_empty() {
        return RObject::Null;
    }
    let cells = entries
        .into_iter()
        .map(|(name, value)| cell(refs, name.as_bytes(), value))
        .collect();
    RObject::Pairlist(Box::new(Pairlist {
        cells,
        tail: RObject::Null,
    }))
}

/// `c(offset, length)`, integer or double.
fn key_of(v: &RObject) -> Option<(u64, u64)> {
    let RObject::Vector(v) = v else { return None };
    let (a, b) = match &v.data {
        VectorData::Integer(x) if x.len() == 2 => (x[0] as f64, x[1] as f64),
        VectorData::Real(x) if x.len() == 2 => (x[0], x[1]),
        _ => return None,
    };
    (a >= 0.0 && b >= 0.0 && a.fract() == 0.0 && b.fract() == 0.0).then_some((a as u64, b as u64))
}

/// A logical, integer or double scalar as a number.
fn scalar(v: &RObject) -> Option<f64> {
    let RObject::Vector(v) = v else { return None };
    match &v.data {
        VectorData::Logical(x) if x.len() == 1 && x[0] != na::INTEGER => Some(x[0] as f64),
        VectorData::Integer(x) if x.len() == 1 && x[0] != na::INTEGER => Some(x[0] as f64),
        VectorData::Real(x) if x.len() == 1 => Some(x[0]),
        _ => None,
    }
}
