//! R's serialization format without R: `.RData`/`.rda` files from
//! `save()`, `.rds` files from `saveRDS()`, raw `serialize()` streams and
//! the lazy-load data bases of installed packages, read and written.
//!
//! A source ([`Source`]: a file, an http(s) URL, bytes, a lazy-load base)
//! is recognised once; [`compression`] detects and decompresses it,
//! [`input`] decodes primitives, [`read`] builds the object [`tree`],
//! [`mod@write`] serializes a tree back (byte for byte what R writes),
//! [`altrep`] expands ALTREP objects and [`summary`] lists objects without
//! decoding their payloads. Vector payloads are decoded once, into Arrow
//! buffers (`arrow-buffer`), which a consumer can take without a copy; the
//! crate has no Arrow array, IPC or Parquet dependency. `ARCHITECTURE.md`
//! in the repository gives the layers.
//!
//! Write a data frame, as `save(scores, file = ...)` would:
//!
//! ```
//! use rdarrow_format::tree::make::{self, ObjectMaker};
//! use rdarrow_format::tree::VectorData;
//! use rdarrow_format::write::{write_object_file, ObjectFileOptions};
//!
//! # fn main() -> rdarrow_format::Result<()> {
//! let dir = std::env::temp_dir().join(format!("rdarrow-format-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("scores.RData");
//!
//! // data.frame(id = 1:3, score = c(1.5, NA, 3))
//! let mut m = ObjectMaker::default();
//! let columns = vec![make::ints(vec![1, 2, 3]), make::reals(vec![1.5, make::na_real(), 3.0])];
//! let names = make::strings([Some(&b"id"[..]), Some(&b"score"[..])]);
//! let class = make::strings([Some(&b"data.frame"[..])]);
//! let row_names = make::ints(vec![i32::MIN, -3]); // R's compact 1:3
//! let frame = m.vector(
//!     VectorData::List(columns),
//!     vec![("names", names), ("class", class), ("row.names", row_names)],
//! );
//! let options = ObjectFileOptions { name: "scores".into(), ..Default::default() };
//! write_object_file(&path, frame, m.refs, &options)?;
//! # Ok(()) }
//! ```
//!
//! List what a file holds without decoding the payloads, then read one
//! object (or one element of a list, by its object path such as `lst$a`):
//!
//! ```
//! # use rdarrow_format::tree::make::{self, ObjectMaker};
//! # use rdarrow_format::tree::VectorData;
//! # use rdarrow_format::write::{write_object_file, ObjectFileOptions};
//! use rdarrow_format::tree::VectorData::Real;
//! use rdarrow_format::{list_file, read_paths, ReadOptions, RObject};
//!
//! # fn main() -> rdarrow_format::Result<()> {
//! # let dir = std::env::temp_dir().join(format!("rdarrow-format-doc2-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("scores.RData");
//! # let mut m = ObjectMaker::default();
//! # let frame = m.named_list(&["id", "score"], vec![make::ints(vec![1, 2, 3]), make::reals(vec![1.5, 2.0, 3.0])]);
//! # write_object_file(&path, frame, m.refs, &ObjectFileOptions { name: "scores".into(), ..Default::default() })?;
//! let (_, objects) = list_file(&path, &ReadOptions::default(), "scores", false)?;
//! assert_eq!(objects[0].name, "scores");
//! assert_eq!(objects[0].type_name, "list");
//!
//! let (_, taken) = read_paths(&path, &ReadOptions::default(), &["scores$score".to_string()], "scores")?;
//! let (name, score) = &taken[0];
//! assert_eq!(name, "scores$score");
//! match score {
//!     RObject::Vector(v) => match &v.data {
//!         Real(values) => assert_eq!(&values[..], &[1.5, 2.0, 3.0]),
//!         other => panic!("a double vector, not {other:?}"),
//!     },
//!     other => panic!("a vector, not {other:?}"),
//! }
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod base;
pub mod tree;
pub mod compression;
pub mod io;
pub mod wire;
pub mod checks;
pub mod read;
pub mod write;
pub mod sources;

pub use compression::Compression;
pub use read::document::{object_name_of, stream_object_name, Document, Wanted};
pub use base::error::{Error, ErrorKind, Result};
pub use io::atomic::{atomic_write, FileBatch, WritebackFile};
pub use wire::header::{compression_for_path, container_of_path, looks_like_r_data, path_is_rds, Container, StreamHeader};
pub use wire::decode::Format;
pub use read::{
    Allocation, Column, Consumer, ObjectFilter, ObjectSpan, Placed, Placement, ReadOptions,
};
pub use sources::{data_files_in, is_data_name, expand_each, expand_sources, location_of, Location, Origin, Source, Streamed};
pub use io::store::StorageOptions;
pub use tree::{RObject, RefTable};

use read::document::parse;
use wire::decode::Input;
use sources::Opened;
use std::io::Write;
use std::path::Path;

/// Read a file completely.
pub fn read_file(path: &(impl Origin + ?Sized), opts: &ReadOptions) -> Result<Document> {
    read_file_filtered(path, opts, &mut |_: &[u8]| true)
}

/// Read a file, decoding only the top-level objects `filter` accepts
/// (the others are parsed with their payloads skipped).
pub fn read_file_filtered(
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
) -> Result<Document> {
    path.source()?.read(opts, filter)
}

/// The consumer of [`read_file_deferred`]: the caller's, handed with each
/// deferred column a store that already holds its payload.
struct WithStore<F> {
    inner: Option<std::sync::Arc<dyn Consumer>>,
    placement: Placement,
    store: F,
}

impl<F> Consumer for WithStore<F>
where
    F: Fn(&StreamHeader) -> Option<read::spill::PayloadStore> + Send + Sync,
{
    fn placement(&self) -> Placement {
        self.placement
    }

    fn column(&self, column: Column<'_>) {
        let Some(inner) = &self.inner else { return };
        // a deferred column's payload, as far as the stream has been read
        let deferred = matches!(&*column.object, RObject::Vector(v) if matches!(v.data, tree::VectorData::Deferred(_)));
        let store = if deferred {
            (self.store)(column.header)
        } else {
            None
        };
        inner.column(Column { store, ..column })
    }
}

/// Read a file with the payloads of its data frames' atomic columns left
/// in the stream ([`Placement::Defer`], or the consumer's
/// [`Placement::DeferNested`]), decoding only the top-level objects
/// `filter` accepts. A compressed file's decompressed stream is copied to
/// a spill file in `spill_dir` as it is read (see [`spill`]); the store
/// reads the deferred payloads back by range. The consumer of `opts`, if
/// any, gets each column with a store that already holds its payload.
pub fn read_file_deferred(
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    filter: &mut (dyn ObjectFilter + Send),
    spill_dir: &Path,
) -> Result<(Document, read::spill::PayloadStore)> {
    let source = path.source()?;
    if let Source::LazyLoad(path) = &source {
        // entries are read whole: nothing stays in a stream (each entry is
        // a stream of its own, which the store could not address)
        let opts = ReadOptions {
            consumer: None,
            ..opts.clone()
        };
        let db = sources::lazyload::LazyDb::open(path, &opts)?;
        let doc = db.read(&opts, filter)?;
        let store = if db.is_remote() {
            read::spill::PayloadStore::empty(spill_dir, doc.header.format)?
        } else {
            read::spill::PayloadStore::in_file(db.rdb_file()?, doc.header.format)
        };
        return Ok((doc, store));
    }
    let inner = opts.consumer.clone().filter(|c| c.takes_columns());
    let placement = match opts.placement() {
        Placement::DeferNested => Placement::DeferNested,
        _ => Placement::Defer,
    };
    let mut opts = ReadOptions {
        consumer: Some(std::sync::Arc::new(placement)),
        ..opts.clone()
    };
    let (opened, kind) = source.open(&opts)?;
    if let (Opened::File { file, len }, Compression::None) = (&opened, kind) {
        // read in place: the payloads are read back from the file itself
        let len = *len;
        let store_file = file
            .try_clone()
            .map_err(|e| Error::io(&e, "cannot open the file again"))?;
        let Opened::File { file, .. } = opened else {
            unreachable!()
        };
        let store = read::spill::PayloadStore::in_file(store_file, Format::Xdr);
        if inner.is_some() {
            let whole = store.with_format(Format::Xdr);
            opts.consumer = Some(std::sync::Arc::new(WithStore {
                inner,
                placement,
                store: move |header: &StreamHeader| Some(whole.with_format(header.format)),
            }));
        }
        let doc = parse(
            kind,
            Input::new(wire::decode::ByteSource::File { file, len }),
            &opts,
            filter,
        )?;
        let store = store.with_format(doc.header.format);
        return Ok((doc, store));
    }
    // compressed, or a URL's stream: spilled as it is read
    // the spill is written by the parsing thread, which has time to spare,
    // not by the decompressing ones, which set the pace
    let (tee, spill) = read::spill::Tee::new(opened.decompressed(kind, opts.salvage)?, spill_dir)?;
    let spill = std::sync::Arc::new(spill);
    if inner.is_some() {
        let spill = spill.clone();
        opts.consumer = Some(std::sync::Arc::new(WithStore {
            inner,
            placement,
            store: move |header: &StreamHeader| spill.store_so_far(header.format).ok(),
        }));
    }
    let doc = parse(
        kind,
        Input::new(wire::decode::ByteSource::Stream(Box::new(tee))),
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
    Source::Bytes(bytes).read(opts, &mut |_: &[u8]| true)
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
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    stream_name: &str,
    recursive: bool,
) -> Result<(Document, Vec<read::summary::ObjectInfo>)> {
    let doc = read_file_filtered(path, opts, &mut |_: &[u8]| false)?;
    let mut infos = if recursive {
        read::summary::describe_nested(&doc, &doc.object_names(stream_name))
    } else {
        read::summary::describe(&doc)
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
pub fn is_path(object: &str) -> bool {
    tree::object_path::ObjectPath::nested(object).is_some()
}

/// Read the objects `wanted` (names or object paths) of the file at
/// `path`, each named as asked. An element of a list is read alone: the
/// wanted top-level objects are parsed with the payloads of their lists'
/// elements left in the stream (a compressed stream spilled to the
/// system's temporary folder, see [`spill`]), and only the elements asked
/// for are decoded, never their siblings.
pub fn read_paths(
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    wanted: &[String],
    stream_name: &str,
) -> Result<(Document, Vec<(String, RObject)>)> {
    // the caller's consumer gives the memory of the parts taken
    let given = opts.consumer.clone();
    let opts = ReadOptions {
        consumer: Some(std::sync::Arc::new(Placement::DeferNested)),
        ..opts.clone()
    };
    let (mut doc, store) = read_file_deferred(
        path,
        &opts,
        &mut Wanted(Some(wanted.to_vec())),
        &std::env::temp_dir(),
    )?;
    let mut taken = doc.take_paths(wanted, stream_name)?;
    for (name, obj) in &mut taken {
        store
            .materialize_into(obj, given.as_ref())
            .map_err(|e| e.in_object(name))?;
    }
    Ok((doc, taken))
}

/// Read the objects of a file that R will be handed: all of them, or
/// those named in `wanted` (an error names the missing ones), each
/// checked to be safe for R. An `.rds` stream's one object is named
/// `stream_name`. The document keeps the reference table.
pub fn read_for_r(
    path: &(impl Origin + ?Sized),
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
                    doc.take_objects_at(&all, stream_name)?
                }
            };
            (doc, taken)
        }
    };
    for (name, obj) in &taken {
        check_name_for_r(name)?;
        // the trust rule was checked over the whole file as it was taken
        checks::validate::check_well_formed_within(obj, &doc.refs, opts.memory_limit())
            .map_err(|e| e.in_object(name))?;
    }
    Ok((doc, taken))
}

/// Local files up to this size may be read on the calling thread
/// ([`read_small_here`]).
pub const SMALL_FILE: u64 = 1 << 20;

/// How deeply objects read on the calling thread may nest.
const HERE_MAX_DEPTH: usize = 1000;

/// Stack the calling thread must have left to read there: the parse's and
/// a megabyte for the rest.
const HERE_MIN_STACK: usize = HERE_MAX_DEPTH * read::STACK_PER_LEVEL + (1 << 20);

/// Run the read `work` of a small local file (up to [`SMALL_FILE`] bytes)
/// here, as [`read_here`] does: for a small file, starting a thread costs
/// more than the read. `None` where that does not apply (a larger file, a
/// URL, a lazy-load base, or as [`read_here`] says): the caller then runs
/// `work` as it would have.
pub fn read_small_here<T>(
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    work: impl Fn(&ReadOptions) -> Result<T>,
) -> Option<Result<T>> {
    let small = path
        .path()
        .is_some_and(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= SMALL_FILE));
    if !small {
        return None;
    }
    read_here(opts, work)
}

/// Run the read `work` here, its parse included
/// ([`ReadOptions::parse_here`]), with nesting capped where this thread's
/// stack suffices. `None` where this thread has too little stack left, or
/// where the object nests more deeply than the cap and `opts` allows it:
/// the caller then runs `work` as it would have (on a thread with a deep
/// stack).
pub fn read_here<T>(
    opts: &ReadOptions,
    work: impl Fn(&ReadOptions) -> Result<T>,
) -> Option<Result<T>> {
    let room = base::limits::stack_left().is_some_and(|(left, _)| left >= HERE_MIN_STACK);
    if !room {
        return None;
    }
    let here = ReadOptions {
        max_depth: opts.max_depth.min(HERE_MAX_DEPTH),
        parse_here: true,
        ..opts.clone()
    };
    match work(&here) {
        Err(e) if e.limit == Some(base::error::LimitKind::Depth) && opts.max_depth > HERE_MAX_DEPTH => {
            None
        }
        done => Some(done),
    }
}

/// Run the read `work` of `path`: on this thread where
/// [`read_small_here`] applies, otherwise with `opts` as they are.
pub fn read_small_here_or<T>(
    path: &(impl Origin + ?Sized),
    opts: &ReadOptions,
    work: impl Fn(&ReadOptions) -> Result<T>,
) -> Result<T> {
    read_small_here(path, opts, &work).unwrap_or_else(|| work(opts))
}

/// Decompress a file completely and return the number of bytes (the
/// baseline the parser is measured against).
pub fn decompressed_len(path: impl AsRef<Path>) -> Result<u64> {
    let (_, mut inp) = Source::File(path.as_ref().to_path_buf()).input(&ReadOptions::default())?;
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
    let (_, mut inp) = Source::Bytes(bytes).input(&ReadOptions::default())?;
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


/// Write the objects of an R data file of any kind (`.rds`, `.RData`,
/// `.qs`, `.qs2`, `.qdata`, told by its bytes) as the file `o` describes
/// at `output`: the one object of a single-object file under `o.name`,
/// the objects of a `save()` file under their names (an `.rds`, `.qs2`
/// or `.qdata` output takes one). How a `.qs` file is rescued without qs
/// on any R version. The number of objects written, and what a salvaging
/// read of a damaged input lost ([`Document::damage`]).
pub fn rewrite_file(
    input: &(impl Origin + ?Sized),
    output: &Path,
    o: &write::ObjectFileOptions,
    opts: &ReadOptions,
) -> Result<(usize, Option<String>)> {
    let doc = read_file(input, opts)?;
    let objects: Vec<(String, RObject)> = if doc.is_rds() {
        vec![(o.name.clone(), doc.root.clone())]
    } else {
        match &doc.root {
            RObject::Pairlist(p) => p
                .cells
                .iter()
                .map(|c| {
                    let name = match &c.tag {
                        Some(RObject::Ref(id)) => doc.refs.symbol_name(*id),
                        _ => None,
                    };
                    (String::from_utf8_lossy(name.unwrap_or(b"")).into_owned(), c.car.clone())
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let n = objects.len();
    if o.rds && n != 1 {
        let names: Vec<String> = objects.into_iter().map(|(n, _)| n).collect();
        return Err(read::document::not_one_object(&names));
    }
    write::write_objects_file(output, objects, doc.refs.clone(), o)?;
    Ok((n, doc.damage))
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
        &Default::default(),
        doc.container,
        &doc.header,
        &doc.root,
        &doc.refs,
        compression,
        level,
        threads,
    )
}
