//! Reading R data into R: one file or many, parsed, decompressed.

use crate::errors::in_file;
use extendr_api::prelude::*;
use rdarrow_arrow::base::error::LimitKind;
use rdarrow_arrow::Document;
use rdarrow_arrow::ReadOptions;
use crate::errors::error_value;
use crate::to_r::{BuildError, RBuilder};
use crate::settings::*;

/// Objects R rebuilds that nest at most this deep are serialized for it on
/// the main thread (deeper: on a worker's deep stack).
pub(crate) const WRITE_HERE_MAX_DEPTH: usize = 1000;

/// The objects asked for, the options of a read for R and the main
/// thread's side of its allocator: large payloads are decoded straight
/// into R vectors, which the returned `RVectors` keeps protected until the
/// objects are built (drop it last), and allocates for a worker that asks.
fn read_for_r_setup(
    objects: Nullable<Vec<String>>,
    settings: &Robj,
) -> (Option<Vec<String>>, ReadOptions, crate::r_memory::RVectors) {
    let wanted = match objects {
        Nullable::NotNull(v) => Some(v),
        Nullable::Null => None,
    };
    let (allocator, vectors) = crate::r_memory::pair();
    let opts = ReadOptions {
        consumer: Some(std::sync::Arc::new(allocator)),
        ..options(&settings)
    };
    (wanted, opts, vectors)
}

/// Read the objects of a file. Returns list(values, fallback, names,
/// rebuild, patches): values built here, or (where `fallback`) `NULL` and,
/// in `rebuild`, one serialized list of all such objects for R's
/// unserializer, so that what they share (an environment two closures
/// enclose) stays shared, as `load()` keeps it; `patches`: elements of
/// those objects built here as they were read (list(object, element,
/// value): `rebuild`'s object and its element, `NULL` in the stream).
/// @noRd
#[extendr]
fn rdata_read_impl(
    path: Robj,
    objects: Nullable<Vec<String>>,
    stream_name: &str,
    settings: Robj,
) -> Robj {
    match read_doc_for_r(&path, objects, stream_name, &settings).and_then(ReadForR::value) {
        Ok(value) => value,
        Err(e) => error_value(&e),
    }
}

/// A read for R: the document, the objects asked for and the set that
/// keeps every R vector the reader allocated protected. The objects are
/// built from those vectors, so the set must outlive their build: build
/// them through [`ReadForR::value`] (or before the `ReadForR` drops).
struct ReadForR {
    doc: Document,
    objs: Vec<(String, rdarrow_arrow::RObject)>,
    /// Dropped last (fields drop in order): it releases the vectors.
    vectors: crate::r_memory::RVectors,
}

impl ReadForR {
    /// The result of the read for R (see [`read_value`]), built while the
    /// reader's vectors are still protected.
    fn value(self) -> rdarrow_arrow::Result<Robj> {
        let ReadForR { doc, objs, vectors } = self;
        let value = read_value(&doc, objs);
        // the built value holds the vectors now (and is protected itself)
        drop(vectors);
        value
    }
}

/// The document of `path` and the objects `objects` names (all if NULL),
/// read for R (vectors allocated by R on this thread, protected until the
/// returned read drops).
fn read_doc_for_r(
    path: &Robj,
    objects: Nullable<Vec<String>>,
    stream_name: &str,
    settings: &Robj,
) -> rdarrow_arrow::Result<ReadForR> {
    let path = crate::given::Given::of(path)?;
    let (wanted, opts, mut vectors) = read_for_r_setup(objects, settings);
    let read = crate::job::read_for_r("Reading", &opts, &mut || vectors.serve(), |opts| {
        rdarrow_arrow::read_for_r(&path, wanted.as_deref(), stream_name, opts)
    });
    drop(opts);
    let (doc, objs) = read?;
    Ok(ReadForR { doc, objs, vectors })
}

/// One object the builder builds whole (`builder.plain()`), as R's value.
fn build_plain(builder: &RBuilder<'_>, obj: &mut rdarrow_arrow::RObject) -> rdarrow_arrow::Result<Robj> {
    match unsafe { builder.build(obj) } {
        Ok(sexp) => Ok(unsafe { Robj::from_sexp(sexp) }),
        Err(BuildError::Fallback) => Err(rdarrow_arrow::Error::limit_of(
            LimitKind::Depth,
            "object too deeply nested to build",
        )),
        Err(BuildError::Engine(e)) => Err(e),
    }
}

/// `read_rds()` of one local file with the default arguments, in one call
/// (a small file's read costs little more than the calls around it):
/// `list(value)` where the file's one object is built here; what
/// [`rdata_read_impl`] returns where R has more to do (several objects,
/// objects only R rebuilds, a damaged file's warnings); `NULL` where `file`
/// is not a local file; an error value.
/// @noRd
#[extendr]
fn read_local_rds_impl(file: &str, settings: Robj) -> Robj {
    let Some((path, name)) = rdarrow_arrow::Source::local_file(file) else {
        return ().into();
    };
    let path: Robj = path.to_string_lossy().into_owned().into();
    let mut read = match read_doc_for_r(&path, Nullable::Null, &name, &settings) {
        Ok(r) => r,
        Err(e) => return error_value(&e),
    };
    let builder = builder_of(&read.doc);
    if read.objs.len() == 1 && read.doc.damage.is_none() && builder.plain(&read.objs[0].1) {
        let (name, mut obj) = read.objs.pop().expect("one object");
        // built while `read` (its vectors) lives
        let value = build_plain(&builder, &mut obj);
        drop(obj);
        drop(read);
        return match value {
            Ok(value) => List::from_values([value]).into(),
            Err(e) => error_value(&e.in_object(&name)),
        };
    }
    drop(builder);
    read.value().unwrap_or_else(|e| error_value(&e))
}

/// What builds a read's R objects. Main thread only.
fn builder_of(doc: &Document) -> RBuilder<'_> {
    RBuilder {
        refs: &doc.refs,
        native_encoding: doc.header.native_encoding.as_deref(),
        header: Some(&doc.header),
        lazy_min: crate::lazy_strings::min_len(),
    }
}

/// The result of a read for R: list(values, fallback, names, rebuild), or
/// an error value. Main thread only.
fn read_value(
    doc: &Document,
    objs: Vec<(String, rdarrow_arrow::RObject)>,
) -> rdarrow_arrow::Result<Robj> {
    let builder = builder_of(doc);
    let mut values: Vec<Robj> = Vec::with_capacity(objs.len());
    let mut fallback: Vec<bool> = Vec::with_capacity(objs.len());
    let mut names: Vec<String> = Vec::with_capacity(objs.len());
    let mut rebuild: Vec<rdarrow_arrow::RObject> = Vec::new();
    let mut patches: Vec<List> = Vec::new();
    for (name, mut obj) in objs {
        let built = if builder.plain(&obj) {
            build_plain(&builder, &mut obj).map(|value| (value, false))
        } else {
            // elements built as they were read go back in once R has
            // rebuilt the rest: NULL in their place meanwhile
            if let rdarrow_arrow::RObject::Vector(v) = &mut obj {
                if let rdarrow_arrow::tree::VectorData::List(items) = &mut v.data {
                    for (i, it) in items.iter_mut().enumerate() {
                        if let rdarrow_arrow::RObject::Taken(t) = it {
                            // SAFETY: kept by the read's allocator until its
                            // values are returned
                            let value = unsafe { Robj::from_sexp(t.0 as extendr_ffi::SEXP) };
                            patches.push(list!(
                                object = (rebuild.len() + 1) as i32,
                                element = (i + 1) as i32,
                                value = value
                            ));
                            *it = rdarrow_arrow::RObject::Null;
                        }
                    }
                }
            }
            rebuild.push(obj);
            Ok((Robj::from(()), true))
        };
        match built {
            Ok((value, fell_back)) => {
                values.push(value);
                fallback.push(fell_back);
                names.push(name);
            }
            Err(e) => return Err(e.in_object(&name)),
        }
    }
    let rebuild: Robj = if rebuild.is_empty() {
        ().into()
    } else {
        let all = rdarrow_arrow::RObject::Vector(Box::new(rdarrow_arrow::tree::Vector {
            flags: Default::default(),
            data: rdarrow_arrow::tree::VectorData::List(rebuild),
            attributes: None,
        }));
        // an object nesting deeply is written on a worker's deep stack
        // (the writer only reads the R vectors the tree holds), the others
        // here
        let write = || rdarrow_arrow::object_to_rds(doc, &all);
        let bytes = if all.nests_deeper_than(&doc.refs, WRITE_HERE_MAX_DEPTH) {
            crate::job::run("Writing", write)?
        } else {
            write()?
        };
        Raw::from_bytes(&bytes).into()
    };
    // a salvaging read of a damaged file: what was lost (R warns)
    let damage: Robj = doc.damage.clone().map_or_else(|| ().into(), Robj::from);
    // (a damaged save() file is not read as one object: the error to give;
    // a save() file's objects are named by the file, not the stream)
    let not_one: Robj = doc
        .one_object_unknown("")
        .map_or_else(|| ().into(), |e| Robj::from(e.message));
    Ok(list!(
        values = List::from_values(values),
        fallback = fallback,
        names = names,
        rebuild = rebuild,
        patches = List::from_values(patches),
        damage = damage,
        not_one = not_one
    )
    .into())
}

/// Read the objects of several files (`labels`: the files as the user
/// named them, for errors; `stream_names`: each `.rds` object's name),
/// parsed on several threads at once while this thread builds each file's
/// objects as its parse ends: a list of what [`rdata_read_impl`] returns
/// for each file, or the first file's error.
/// @noRd
#[extendr]
fn rdata_read_files_impl(
    paths: Vec<String>,
    labels: Vec<String>,
    objects: Nullable<Vec<String>>,
    stream_names: Vec<String>,
    settings: Robj,
) -> Robj {
    use rdarrow_arrow::sources::all_cores;
    let (wanted, opts, mut vectors) = read_for_r_setup(objects, &settings);
    let opts = all_cores::on_thread_with_stack(&opts, all_cores::WORKER_STACK);
    crate::job::watch_interrupts();
    let mut values: Vec<Robj> = Vec::with_capacity(paths.len());
    let mut failed = None;
    all_cores::in_order(
        &paths,
        all_cores::threads_for(paths.len()),
        |path| all_cores::file_weight(path),
        |i, path| rdarrow_arrow::read_for_r(path, wanted.as_deref(), &stream_names[i], &opts),
        &mut || vectors.serve(),
        &mut |i, read: rdarrow_arrow::Result<(Document, Vec<_>)>| match read
            .and_then(|(doc, objs)| read_value(&doc, objs))
        {
            Ok(value) => {
                values.push(value);
                std::ops::ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(in_file(&e, &labels[i]));
                std::ops::ControlFlow::Break(())
            }
        },
    );
    drop(opts);
    failed.unwrap_or_else(|| List::from_values(values).into())
}

/// Parse a file completely without building R objects; returns the size of
/// the decompressed stream (for benchmarks).
/// @noRd
#[extendr]
fn rdata_parse_impl(path: &str, settings: Robj) -> Robj {
    let opts = options(&settings);
    match crate::job::run("Parsing", || rdarrow_arrow::read_file(path, &opts)) {
        Ok(doc) => (doc.stream_len as f64).into(),
        Err(e) => error_value(&e),
    }
}

/// Decompress a file and discard the bytes; returns their count.
/// @noRd
#[extendr]
fn rdata_decompress_impl(path: &str) -> Robj {
    match crate::job::run("Decompressing", || rdarrow_arrow::decompressed_len(path)) {
        Ok(n) => (n as f64).into(),
        Err(e) => error_value(&e),
    }
}

/// The decompressed stream of a file, as a raw vector.
/// @noRd
#[extendr]
fn rdata_decompressed_impl(path: &str) -> Robj {
    match std::fs::read(path)
        .map_err(|e| rdarrow_arrow::Error::io(&e, "cannot read"))
        .and_then(rdarrow_arrow::decompress_bytes)
    {
        Ok(b) => Raw::from_bytes(&b).into(),
        Err(e) => error_value(&e),
    }
}

pub(crate) fn read_doc(path: &str, settings: Robj) -> std::result::Result<Document, Robj> {
    let opts = options(&settings);
    crate::job::run("Reading", || rdarrow_arrow::read_file(path, &opts)).map_err(|e| error_value(&e))
}

extendr_module! {
    mod read;
    fn rdata_read_impl;
    fn read_local_rds_impl;
    fn rdata_read_files_impl;
    fn rdata_parse_impl;
    fn rdata_decompress_impl;
    fn rdata_decompressed_impl;
}
