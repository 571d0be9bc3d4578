//! rdarrow-core: R's serialization format (`.RData`/`.rda` from `save()`,
//! `.rds` from `saveRDS()`, raw `serialize()` streams) without R.
//!
//! Pipeline: [`compression`] detects and decompresses, [`input`] decodes
//! primitives, [`read`] builds the [`tree`], [`write`] serializes it back,
//! [`altrep`] expands ALTREP objects, [`summary`] lists objects without
//! decoding their payloads.

pub mod altrep;
pub mod arrow;
pub mod build;
pub mod cancel;
pub mod compression;
pub mod encoding;
pub mod error;
pub mod file_out;
pub mod header;
pub mod input;
pub mod layout;
pub mod lazyload;
pub mod object_path;
pub mod parallel;
pub mod read;
pub mod remote;
pub mod spill;
pub mod summary;
pub mod tree;
pub mod validate;
pub mod write;

pub use compression::Compression;
pub use error::{Error, ErrorKind, Result};
pub use file_out::{atomic_write, WritebackFile};
pub use header::{Container, StreamHeader};
pub use input::Format;
pub use read::{ColumnHook, DeferredHook, ObjectFilter, ObjectSpan, ReadOptions};
pub use tree::{RObject, RefTable};

use input::{Input, Source};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

/// A parsed file or stream.
#[derive(Debug, Clone)]
pub struct Document {
    pub compression: Compression,
    pub container: Container,
    pub header: StreamHeader,
    /// For a `save()` file, the pairlist of objects; otherwise the object.
    pub root: RObject,
    pub refs: RefTable,
    /// Where each top-level object lies in the decompressed stream.
    pub spans: Vec<ObjectSpan>,
    /// Size of the decompressed stream in bytes.
    pub stream_len: u64,
}

impl Document {
    /// The named top-level objects: the cells of a `save()` file, the
    /// elements of a named list at the top of a `save()` file, or the one
    /// object of an RDS stream (with an empty name).
    pub fn objects(&self) -> Vec<(Vec<u8>, &RObject)> {
        match (self.container, &self.root) {
            (Container::RData { .. }, RObject::Pairlist(_)) => {
                tree::pairlist_entries(&self.root, &self.refs)
                    .into_iter()
                    .map(|(n, v)| (n.unwrap_or(b"").to_vec(), v))
                    .collect()
            }
            (Container::RData { .. }, RObject::Vector(v)) => {
                let names = self
                    .root
                    .attribute(&self.refs, "names")
                    .and_then(|n| n.as_strings());
                match (&v.data, names) {
                    (tree::VectorData::List(items), Some(names)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, it)| (names.get(i).unwrap_or(b"").to_vec(), it))
                        .collect(),
                    _ => vec![(Vec::new(), &self.root)],
                }
            }
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![(Vec::new(), &self.root)],
        }
    }
    /// Move the top-level objects out of the document (for building them
    /// elsewhere without holding two copies). The reference table stays.
    pub fn take_objects(&mut self) -> Vec<(Vec<u8>, RObject)> {
        let names: Vec<Vec<u8>> = self.objects().into_iter().map(|(n, _)| n).collect();
        let named_list = matches!(&self.root, RObject::Vector(v) if matches!(v.data, tree::VectorData::List(_)))
            && self
                .root
                .attribute(&self.refs, "names")
                .and_then(|n| n.as_strings())
                .is_some();
        let values: Vec<RObject> = match (self.container, &mut self.root) {
            (Container::RData { .. }, RObject::Pairlist(p)) => p
                .cells
                .iter_mut()
                .map(|c| std::mem::replace(&mut c.car, RObject::Null))
                .collect(),
            (Container::RData { .. }, RObject::Vector(v)) if named_list => match &mut v.data {
                tree::VectorData::List(items) => std::mem::take(items),
                _ => unreachable!(),
            },
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![std::mem::replace(&mut self.root, RObject::Null)],
        };
        names.into_iter().zip(values).collect()
    }

    /// Whether this is a single-object stream (`saveRDS()`/`serialize()`).
    pub fn is_rds(&self) -> bool {
        self.container.is_rds()
    }

    /// The names of the top-level objects as users see them: an `.rds`
    /// stream's one object is named `stream_name` (see
    /// [`stream_object_name`]), as R users name it after the file.
    pub fn object_names(&self, stream_name: &str) -> Vec<String> {
        if self.is_rds() {
            return vec![stream_name.to_string()];
        }
        self.objects()
            .iter()
            .map(|(n, _)| String::from_utf8_lossy(n).into_owned())
            .collect()
    }

    /// The positions of the objects named `wanted`, in the order asked;
    /// an error naming the missing ones and listing what the file holds.
    pub fn find_objects(&self, wanted: &[String], stream_name: &str) -> Result<Vec<usize>> {
        let names = self.object_names(stream_name);
        let missing: Vec<&String> = wanted.iter().filter(|w| !names.contains(w)).collect();
        if !missing.is_empty() {
            let what = if missing.len() == 1 {
                "object"
            } else {
                "objects"
            };
            return Err(Error::usage(format!(
                "{what} {} not found in the file; {}",
                quoted(&missing),
                holds(&names)
            )));
        }
        Ok(wanted
            .iter()
            .filter_map(|w| names.iter().position(|n| n == w))
            .collect())
    }

    /// Where `object` is: the top-level object of that name, else the
    /// place an object path ([`object_path`]) leads to inside one.
    pub fn locate(
        &self,
        object: &str,
        stream_name: &str,
    ) -> Result<(usize, Option<object_path::ObjectPath>)> {
        let names = self.object_names(stream_name);
        if let Some(i) = names.iter().position(|n| n == object) {
            return Ok((i, None));
        }
        let Some(path) = object_path::ObjectPath::nested(object) else {
            return Err(self
                .find_objects(&[object.to_string()], stream_name)
                .unwrap_err());
        };
        let i = self.find_objects(&[path.top.clone()], stream_name)?[0];
        path.find(self.objects()[i].1, &self.refs)?;
        Ok((i, Some(path)))
    }

    /// Move the objects `wanted` (names or object paths, see
    /// [`Document::locate`]) out of the document, in the order asked,
    /// each with its name as asked; the rest are dropped (the reference
    /// table stays). An element inside an object shares its payloads'
    /// buffers with it.
    pub fn take_paths(
        &mut self,
        wanted: &[String],
        stream_name: &str,
    ) -> Result<Vec<(String, RObject)>> {
        let names = self.object_names(stream_name);
        // every missing top-level object at once, as find_objects tells them
        let unknown: Vec<String> = wanted
            .iter()
            .filter(|w| !names.contains(w))
            .map(|w| object_path::ObjectPath::nested(w).map_or_else(|| w.clone(), |p| p.top))
            .filter(|top| !names.contains(top))
            .collect();
        if !unknown.is_empty() {
            return Err(self.find_objects(&unknown, stream_name).unwrap_err());
        }
        let located = wanted
            .iter()
            .map(|w| self.locate(w, stream_name))
            .collect::<Result<Vec<_>>>()?;
        let refs = self.refs.clone();
        let mut objs: Vec<Option<RObject>> = self
            .take_objects()
            .into_iter()
            .map(|(_, o)| Some(o))
            .collect();
        let mut out = Vec::with_capacity(located.len());
        for (k, (i, path)) in located.iter().enumerate() {
            let label = match path {
                None => names[*i].clone(),
                Some(_) => wanted[k].clone(),
            };
            let used_again = located[k + 1..].iter().any(|(j, _)| j == i);
            let obj = match (path, &mut objs[*i]) {
                (_, None) => RObject::Null,
                (None, slot) if !used_again => slot.take().unwrap_or(RObject::Null),
                (None, Some(o)) => o.clone(),
                (Some(p), Some(o)) => p.find(o, &refs)?.clone(),
            };
            out.push((label, obj));
        }
        Ok(out)
    }

    /// The object to turn into one table: the one named `object`, else
    /// the file's only data frame, else its only object that converts
    /// ([`Document::convertible`]); an `.rds` stream's one object.
    pub fn choose_table_object(
        &self,
        object: Option<&str>,
        stream_name: &str,
    ) -> Result<(String, usize)> {
        if let Some(name) = object {
            let at = self.locate(name, stream_name)?.0;
            return Ok((name.to_string(), at));
        }
        if self.is_rds() {
            return Ok((stream_name.to_string(), 0));
        }
        let names = self.object_names(stream_name);
        let frames = self.data_frames();
        match frames.len() {
            1 => Ok((names[frames[0]].clone(), frames[0])),
            0 => {
                let conv = self.convertible();
                match conv.len() {
                    1 => Ok((names[conv[0]].clone(), conv[0])),
                    0 => Err(Error::usage(format!("the file holds no object that converts to Arrow (data frames, vectors, factors, dates, times, matrices, arrays and lists of those do); {}", holds(&names)))),
                    n => {
                        let cands: Vec<&String> = conv.iter().map(|&i| &names[i]).collect();
                        Err(Error::usage(format!("the file holds no data frame and {n} objects that convert; choose one by name: {}", quoted(&cands))))
                    }
                }
            }
            n => {
                let cands: Vec<&String> = frames.iter().map(|&i| &names[i]).collect();
                Err(Error::usage(format!(
                    "the file holds {n} data frames; choose one by name: {}",
                    quoted(&cands)
                )))
            }
        }
    }

    /// As [`Document::choose_table_object`], moving the object out (the
    /// document keeps its reference table; its other objects are dropped).
    pub fn take_table_object(
        &mut self,
        object: Option<&str>,
        stream_name: &str,
    ) -> Result<(String, RObject)> {
        if let Some(o) = object {
            let (name, obj) = self
                .take_paths(&[o.to_string()], stream_name)?
                .pop()
                .ok_or_else(|| Error::internal("no object taken"))?;
            return Ok((name, obj));
        }
        let (name, at) = self.choose_table_object(object, stream_name)?;
        let obj = self
            .take_objects_at(&[at], stream_name)
            .pop()
            .map(|(_, o)| o)
            .unwrap_or(RObject::Null);
        Ok((name, obj))
    }

    /// The objects a dataset takes from this file: an `.rds` stream's one
    /// object (whatever `object` says: a dataset's files are named
    /// after their contents), the one named `object`, else every data frame.
    pub fn choose_frames(&self, object: Option<&str>, stream_name: &str) -> Result<Vec<usize>> {
        if self.is_rds() {
            return Ok(vec![0]);
        }
        if let Some(name) = object {
            return self.find_objects(&[name.to_string()], stream_name);
        }
        let frames = self.data_frames();
        if frames.is_empty() {
            return Err(no_data_frame(&self.object_names(stream_name)));
        }
        Ok(frames)
    }

    /// The positions of the top-level objects that convert to a table:
    /// those of a kind the type mapping knows ([`arrow::types::RKind`]),
    /// `NULL` aside.
    pub fn convertible(&self) -> Vec<usize> {
        let objs = self.objects();
        (0..objs.len())
            .filter(|&i| {
                let o = objs[i].1;
                !arrow::to_arrow::is_s4(o)
                    && matches!(arrow::types::RKind::of(&o.class_attr(&self.refs), o.sxptype(&self.refs)), Some(k) if k != arrow::types::RKind::Null)
            })
            .collect()
    }

    /// The positions of the top-level data frames.
    fn data_frames(&self) -> Vec<usize> {
        let objs = self.objects();
        (0..objs.len())
            .filter(|&i| objs[i].1.inherits(&self.refs, "data.frame"))
            .collect()
    }

    /// Move the objects at `positions` out of the document (the others
    /// are dropped; the reference table stays), with their names as
    /// [`Document::object_names`] gives them.
    pub fn take_objects_at(
        &mut self,
        positions: &[usize],
        stream_name: &str,
    ) -> Vec<(String, RObject)> {
        let names = self.object_names(stream_name);
        let mut objs: Vec<Option<RObject>> = self
            .take_objects()
            .into_iter()
            .map(|(_, o)| Some(o))
            .collect();
        positions
            .iter()
            .filter_map(|&i| {
                Some((
                    names.get(i)?.clone(),
                    objs.get_mut(i)?.take().unwrap_or(RObject::Null),
                ))
            })
            .collect()
    }
}

/// The name R users give the one object of an `.rds` file: the file's
/// base name without its extension.
pub fn stream_object_name(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `'a', 'b'`
fn quoted<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|s| format!("'{}'", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The error when a file holds no data frame and none was named.
fn no_data_frame(names: &[String]) -> Error {
    Error::usage(format!(
        "the file holds no data frame; choose an object by name: {}",
        holds(names)
    ))
}

/// What a file holds, for error messages.
fn holds(names: &[String]) -> String {
    if names.is_empty() {
        "it holds no objects".to_string()
    } else {
        format!("it holds {}", quoted(names))
    }
}

/// Which top-level objects a read decodes: all of them, or those named.
/// An `.rds` stream offers its one object with an empty name: it is
/// always decoded (its name is the file's, checked after reading).
#[derive(Debug, Clone, Default)]
pub struct Wanted(pub Option<Vec<String>>);

impl Wanted {
    pub fn one(name: Option<&str>) -> Self {
        Wanted(name.map(|n| vec![n.to_string()]))
    }
}

impl ObjectFilter for Wanted {
    fn decode(&mut self, name: &[u8]) -> bool {
        // an object named as asked, or the top of an object path
        let top = |n: &str| object_path::ObjectPath::parse(n).map(|p| p.top).ok();
        name.is_empty()
            || self.0.as_ref().is_none_or(|w| {
                w.iter()
                    .any(|n| n.as_bytes() == name || top(n).is_some_and(|t| t.as_bytes() == name))
            })
    }
}

/// Read the first bytes of a file (fewer at its end); how many.
fn read_prefix(file: &mut File, prefix: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < prefix.len() {
        let n = file
            .read(&mut prefix[got..])
            .map_err(|e| Error::io(&e, "cannot read the file"))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

/// Where a file's bytes come from.
enum Opened {
    /// A local file, at its start, and its length.
    File { file: File, len: u64 },
    /// The body of a URL.
    Stream(Box<dyn Read + Send>),
}

/// The file (or URL) at `path`, at its start, and the compression its
/// first bytes say (an empty file is not R data).
fn open_detected(path: &Path, opts: &ReadOptions) -> Result<(Opened, Compression)> {
    let empty = || {
        Error::new(
            ErrorKind::NotRData,
            format!("'{}' is empty", path.display()),
        )
    };
    if remote::is_url(path) {
        let url = path.to_string_lossy();
        let (mut body, _) = remote::open(&url, opts.timeout)?;
        let mut prefix = Vec::with_capacity(6);
        (&mut body)
            .take(6)
            .read_to_end(&mut prefix)
            .map_err(|e| Error::io(&e, &format!("cannot read '{url}'")))?;
        if prefix.is_empty() {
            return Err(empty());
        }
        let kind = Compression::detect(&prefix);
        let whole = std::io::Cursor::new(prefix).chain(body);
        // received on a thread of its own, ahead of the decompressor
        let ahead = compression::PipelinedReader::new(Box::new(whole))
            .map_err(|e| Error::io(&e, "cannot start the download thread"))?;
        return Ok((Opened::Stream(Box::new(ahead)), kind));
    }
    let mut file = File::open(path)
        .map_err(|e| Error::io(&e, &format!("cannot open '{}'", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(&e, "cannot stat the file"))?
        .len();
    let mut prefix = [0u8; 6];
    let got = read_prefix(&mut file, &mut prefix)?;
    if got == 0 {
        return Err(empty());
    }
    let kind = Compression::detect(&prefix[..got]);
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| Error::io(&e, "cannot seek"))?;
    Ok((Opened::File { file, len }, kind))
}

/// A reader of `opened`'s bytes, buffered.
fn buffered(opened: Opened) -> BufReader<Box<dyn Read + Send>> {
    let r: Box<dyn Read + Send> = match opened {
        Opened::File { file, .. } => Box::new(file),
        Opened::Stream(s) => s,
    };
    BufReader::with_capacity(1 << 16, r)
}

fn open_input(path: &Path, opts: &ReadOptions) -> Result<(Compression, Input)> {
    let (opened, kind) = open_detected(path, opts)?;
    let src = match (opened, kind) {
        (Opened::File { file, len }, Compression::None) => Source::File { file, len },
        (opened, _) => {
            let (_, r) = compression::decompressor(buffered(opened))
                .map_err(|e| Error::io(&e, "cannot start decompression"))?;
            let piped = compression::PipelinedReader::new(r)
                .map_err(|e| Error::io(&e, "cannot start the decompression thread"))?;
            Source::Stream(Box::new(piped))
        }
    };
    Ok((kind, Input::new(src)))
}

fn input_from_bytes(bytes: Vec<u8>) -> Result<(Compression, Input)> {
    let kind = Compression::detect(&bytes);
    if kind == Compression::None {
        return Ok((kind, Input::from_bytes(bytes)));
    }
    let (_, r) = compression::decompressor(std::io::Cursor::new(bytes))
        .map_err(|e| Error::io(&e, "cannot start decompression"))?;
    Ok((kind, Input::new(Source::Stream(r))))
}

/// Stack for the parsing thread: deep (but bounded) nesting recurses.
const PARSE_STACK: usize = 1 << 30;

pub(crate) fn parse(
    kind: Compression,
    inp: Input,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("rdarrow-parse".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, move || parse_here(kind, inp, opts, filter));
        match handle {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err(Error::internal("the parser panicked"))),
            Err(e) => Err(Error::io(&e, "cannot start the parsing thread")),
        }
    })
}

fn parse_here(
    kind: Compression,
    mut inp: Input,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    let (container, mut header) = header::read_header(&mut inp)?;
    let (root, refs, spans) = read::read_body(&mut inp, container, &header, opts, filter)?;
    header.ascii_hex = inp.saw_hex_double;
    if header.format == Format::Ascii {
        // the line end after the last token belongs to the stream
        inp.skip_ascii_whitespace()?;
    }
    let stream_len = inp.offset();
    Ok(Document {
        compression: kind,
        container,
        header,
        root,
        refs,
        spans,
        stream_len,
    })
}

/// Read a file completely.
pub fn read_file(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Document> {
    read_file_filtered(path, opts, &mut |_: &[u8]| true)
}

/// Read a file, decoding only the top-level objects `filter` accepts
/// (the others are parsed with their payloads skipped).
pub fn read_file_filtered(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    if lazyload::files_of(path.as_ref()).is_some() {
        return lazyload::LazyDb::open(path.as_ref(), opts)?.read(opts, filter);
    }
    read_file_plain_filtered(path.as_ref(), opts, filter)
}

/// A file as R data, whatever its name says (not as a lazy-load base).
pub(crate) fn read_file_plain(path: &Path, opts: &ReadOptions) -> Result<Document> {
    read_file_plain_filtered(path, opts, &mut |_: &[u8]| true)
}

fn read_file_plain_filtered(
    path: &Path,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    let (kind, inp) = open_input(path, opts)?;
    parse(kind, inp, opts, filter)
}

/// Read a file with the payloads of its data frames' atomic columns left
/// in the stream ([`ReadOptions::defer_columns`]), decoding only the
/// top-level objects `filter` accepts. A compressed file's decompressed
/// stream is copied to a spill file in `spill_dir` as it is read (see
/// [`spill`]); the store reads the deferred payloads back by range.
pub fn read_file_deferred(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
    spill_dir: &Path,
    on_column: Option<DeferredHook>,
) -> Result<(Document, spill::PayloadStore)> {
    let path = path.as_ref();
    if lazyload::files_of(path).is_some() {
        // entries are read whole: nothing stays in a stream
        let db = lazyload::LazyDb::open(path, opts)?;
        let doc = db.read(opts, filter)?;
        let store = spill::PayloadStore::in_file(db.rdb_file()?, doc.header.format);
        return Ok((doc, store));
    }
    let mut opts = ReadOptions {
        defer_columns: true,
        column_hook: None,
        ..opts.clone()
    };
    let (opened, kind) = open_detected(path, &opts)?;
    // a deferred column's payload, as far as the stream has been read
    let so_far = |obj: &RObject| matches!(obj, RObject::Vector(v) if matches!(v.data, tree::VectorData::Deferred(_)));
    if let (Opened::File { file, len }, Compression::None) = (&opened, kind) {
        // read in place: the payloads are read back from the file itself
        let len = *len;
        let store_file = file
            .try_clone()
            .map_err(|e| Error::io(&e, &format!("cannot open '{}'", path.display())))?;
        let Opened::File { file, .. } = opened else {
            unreachable!()
        };
        let store = spill::PayloadStore::in_file(store_file, Format::Xdr);
        if let Some(hook) = on_column {
            let whole = store.with_format(Format::Xdr);
            opts.column_hook = Some(std::sync::Arc::new(
                move |obj: &mut RObject, refs: &RefTable, header: &StreamHeader| {
                    let at = so_far(obj).then(|| whole.with_format(header.format));
                    hook(obj, refs, header, at)
                },
            ));
        }
        let doc = parse(kind, Input::new(Source::File { file, len }), &opts, filter)?;
        let store = store.with_format(doc.header.format);
        return Ok((doc, store));
    }
    // compressed, or a URL's stream: spilled as it is read
    let (_, r) = compression::decompressor(buffered(opened))
        .map_err(|e| Error::io(&e, "cannot start decompression"))?;
    // the spill is written by the parsing thread, which has time to spare,
    // not by the decompressing one, which sets the pace
    let piped = compression::PipelinedReader::new(r)
        .map_err(|e| Error::io(&e, "cannot start the decompression thread"))?;
    let (tee, spill) = spill::Tee::new(Box::new(piped), spill_dir)?;
    let spill = std::sync::Arc::new(spill);
    if let Some(hook) = on_column {
        let spill = spill.clone();
        opts.column_hook = Some(std::sync::Arc::new(
            move |obj: &mut RObject, refs: &RefTable, header: &StreamHeader| {
                let at = so_far(obj)
                    .then(|| spill.store_so_far(header.format).ok())
                    .flatten();
                hook(obj, refs, header, at)
            },
        ));
    }
    let doc = parse(
        kind,
        Input::new(Source::Stream(Box::new(tee))),
        &opts,
        filter,
    )
    .map_err(|e| spill.failure().unwrap_or(e))?;
    // the hook (and its hold on the spill) went with the parse
    drop(opts);
    let spill = std::sync::Arc::into_inner(spill)
        .ok_or_else(|| Error::internal("the spill is still shared"))?;
    let store = spill.into_store(doc.header.format)?;
    Ok((doc, store))
}

/// Read an in-memory file or `serialize()` result (compressed or not).
pub fn read_bytes(bytes: Vec<u8>, opts: &ReadOptions) -> Result<Document> {
    let (kind, inp) = input_from_bytes(bytes)?;
    parse(kind, inp, opts, &mut |_: &[u8]| true)
}

/// The rule for names handed to R: R strings end at a NUL byte (R's own
/// reader refuses such names), so an object name holding one is an error.
fn check_name_for_r(name: &str) -> Result<()> {
    if name.contains('\0') {
        return Err(Error::corrupt(
            "the object's name holds an embedded NUL byte, which R strings cannot hold",
        )
        .in_object(&name.replace('\0', "\\0")));
    }
    Ok(())
}

/// List the objects of a file without decoding payloads; an `.rds`
/// stream's one object is named `stream_name`; `recursive` lists what
/// lists hold too (see [`summary::describe_nested`]).
pub fn list_file(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
    stream_name: &str,
    recursive: bool,
) -> Result<(Document, Vec<summary::ObjectInfo>)> {
    let doc = read_file_filtered(path, opts, &mut |_: &[u8]| false)?;
    let mut infos = if recursive {
        summary::describe_nested(&doc, &doc.object_names(stream_name))
    } else {
        summary::describe(&doc)
    };
    if doc.is_rds() && !recursive {
        for i in &mut infos {
            i.name = stream_name.to_string();
        }
    }
    for i in &infos {
        check_name_for_r(&i.name)?;
        if i.class.contains('\0') {
            return Err(Error::corrupt(
                "the object's class holds an embedded NUL byte, which R strings cannot hold",
            )
            .in_object(&i.name));
        }
    }
    Ok((doc, infos))
}

/// Whether `object` is an object path into a list (`lst$a`), not a name.
pub(crate) fn is_path(object: &str) -> bool {
    object_path::ObjectPath::nested(object).is_some()
}

/// Read the objects `wanted` (names or object paths) of the file at
/// `path`, each named as asked. An element of a list is read alone: the
/// wanted top-level objects are parsed with the payloads of their lists'
/// elements left in the stream (a compressed stream spilled to the
/// system's temporary folder, see [`spill`]), and only the elements asked
/// for are decoded, never their siblings.
pub fn read_paths(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
    wanted: &[String],
    stream_name: &str,
) -> Result<(Document, Vec<(String, RObject)>)> {
    let opts = ReadOptions {
        defer_nested: true,
        ..opts.clone()
    };
    let (mut doc, store) = read_file_deferred(
        path,
        &opts,
        &mut Wanted(Some(wanted.to_vec())),
        &std::env::temp_dir(),
        None,
    )?;
    let mut taken = doc.take_paths(wanted, stream_name)?;
    for (name, obj) in &mut taken {
        store.materialize(obj).map_err(|e| e.in_object(name))?;
    }
    Ok((doc, taken))
}

/// Read the objects of a file that R will be handed: all of them, or
/// those named in `wanted` (an error names the missing ones), each
/// checked to be safe for R. An `.rds` stream's one object is named
/// `stream_name`. The document keeps the reference table.
pub fn read_for_r(
    path: impl AsRef<Path>,
    wanted: Option<&[String]>,
    stream_name: &str,
    opts: &ReadOptions,
) -> Result<(Document, Vec<(String, RObject)>)> {
    let (doc, taken) = match wanted {
        Some(w) if w.iter().any(|o| is_path(o)) => read_paths(path, opts, w, stream_name)?,
        _ => {
            let mut doc =
                read_file_filtered(path, opts, &mut Wanted(wanted.map(<[String]>::to_vec)))?;
            let taken = match wanted {
                Some(w) => doc.take_paths(w, stream_name)?,
                None => {
                    let all: Vec<usize> = (0..doc.objects().len()).collect();
                    doc.take_objects_at(&all, stream_name)
                }
            };
            (doc, taken)
        }
    };
    for (name, obj) in &taken {
        check_name_for_r(name)?;
        validate::check_for_r_within(obj, &doc.refs, opts.memory_limit())
            .map_err(|e| e.in_object(name))?;
    }
    Ok((doc, taken))
}

/// Decompress a file completely and return the number of bytes (the
/// baseline the parser is measured against).
pub fn decompressed_len(path: impl AsRef<Path>) -> Result<u64> {
    let (_, mut inp) = open_input(path.as_ref(), &ReadOptions::default())?;
    let mut n = 0u64;
    while !inp.at_end()? {
        let chunk = inp.peek(1 << 17)?.len();
        inp.consume(chunk);
        n += chunk as u64;
    }
    Ok(n)
}

/// Decompress a whole file or byte vector into memory.
pub fn decompress_bytes(bytes: Vec<u8>) -> Result<Vec<u8>> {
    let (_, mut inp) = input_from_bytes(bytes)?;
    let mut out = Vec::new();
    while !inp.at_end()? {
        let chunk = inp.peek(1 << 17)?;
        out.extend_from_slice(chunk);
        let k = chunk.len();
        inp.consume(k);
    }
    Ok(out)
}

/// Serialize a document back, uncompressed, in its own format and version.
pub fn write_document<W: Write>(doc: &Document, sink: W) -> Result<W> {
    write::write_stream(sink, doc.container, &doc.header, &doc.root, &doc.refs)
}

/// Serialize one object of a document as a stand-alone RDS stream
/// (XDR, the document's version), sharing its reference table.
pub fn object_to_rds(doc: &Document, obj: &RObject) -> Result<Vec<u8>> {
    node_to_rds(&doc.header, &doc.refs, obj)
}

/// As [`object_to_rds`], for any node of a stream with this header and
/// reference table.
pub fn node_to_rds(header: &StreamHeader, refs: &tree::RefTable, obj: &RObject) -> Result<Vec<u8>> {
    write::write_stream(
        Vec::new(),
        Container::Stream,
        &header.standalone_xdr(),
        obj,
        refs,
    )
}

/// Change the format and/or version a document will be written in.
/// Version 2 has no ALTREP (those are written expanded) and no native
/// encoding in its header.
pub fn convert_document(doc: &mut Document, format: Format, version: i32) -> Result<()> {
    doc.header.convert(format, version)?;
    if !doc.container.is_rds() {
        doc.container = Container::rdata(format, version);
    }
    Ok(())
}

/// Write a document to `path` with compression; the file appears only when
/// complete (written beside it under a temporary name, then renamed).
pub fn write_file(
    doc: &Document,
    path: impl AsRef<Path>,
    compression: Compression,
    level: Option<u32>,
) -> Result<()> {
    write_file_threads(doc, path, compression, level, 1)
}

/// As [`write_file`], compressing independent blocks on `threads` threads
/// (the bytes written do not depend on `threads`).
pub fn write_file_threads(
    doc: &Document,
    path: impl AsRef<Path>,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
) -> Result<()> {
    write::write_tree_file(
        path.as_ref(),
        doc.container,
        &doc.header,
        &doc.root,
        &doc.refs,
        compression,
        level,
        threads,
    )
}
