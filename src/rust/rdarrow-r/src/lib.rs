//! R bindings for the rdarrow engine: argument conversion, results and
//! errors only. Each function returns either its result or an
//! `rdarrow_error_value` list that the R wrapper raises as a condition.

use extendr_api::prelude::*;
use rdarrow_arrow::base::error::LimitKind;
use rdarrow_arrow::Compression;
use rdarrow_arrow::Document;
use rdarrow_arrow::Format;
use rdarrow_arrow::ReadOptions;

mod arrow;
mod dataset;
mod errors;
mod from_arrow;
mod given;
mod job;
mod lazy_strings;
mod r_memory;
mod save_native;
mod save_r;
mod to_r;

use errors::error_value;
use to_r::{BuildError, RBuilder};

/// Read options from R's read settings (`read_args()` in R:
/// `list(max_depth, storage)`, the nesting limit and an object store's
/// options as a named character vector; a bare number is the nesting
/// limit) and R's options `rdarrow.max_memory` (bytes of vector data one
/// read may decode; unset = the machine's memory) and `timeout`. Main
/// thread only: it asks R.
pub(crate) fn options(settings: &Robj) -> ReadOptions {
    use rdarrow_arrow::checks::trust::Host;
    use rdarrow_arrow::checks::trust::Trust;
    let mut max_depth = 10_000;
    let mut storage = Vec::new();
    let mut data_only = false;
    let mut host = Host::default();
    let strings = |x: &Robj| -> Vec<String> {
        x.as_str_vector()
            .map(|v| v.into_iter().map(str::to_string).collect())
            .unwrap_or_default()
    };
    if let Some(list) = settings.as_list() {
        for (name, value) in list.iter() {
            match name {
                "max_depth" => max_depth = depth_of(&value).unwrap_or(max_depth),
                "storage" => storage = storage_of(&value),
                "trusted" => data_only = value.as_bool() == Some(false),
                "namespaces" => host.namespaces = strings(&value),
                "attached" => host.attached = strings(&value),
                _ => {}
            }
        }
    } else if let Some(d) = depth_of(settings) {
        max_depth = d;
    }
    ReadOptions {
        max_depth: max_depth.max(1) as usize,
        max_memory: memory_option(),
        timeout: timeout_option(),
        storage: rdarrow_arrow::StorageOptions::new(storage),
        trust: if data_only {
            Trust::DataOnly(host)
        } else {
            Trust::Code
        },
        ..Default::default()
    }
}

fn depth_of(x: &Robj) -> Option<i32> {
    x.as_integer().or_else(|| x.as_real().map(|d| d as i32))
}

/// An object store's options: a named character vector (R's
/// `storage_arg()` made it).
pub(crate) fn storage_of(x: &Robj) -> Vec<(String, String)> {
    let (Some(names), Some(values)) = (x.names(), x.as_str_vector()) else {
        return Vec::new();
    };
    names
        .zip(values)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[allow(improper_ctypes)]
extern "C" {
    fn Rf_GetOption1(tag: extendr_ffi::SEXP) -> extendr_ffi::SEXP;
}

/// R's option `name` (`NULL` when unset). Main thread only. Read without
/// R's parser: reading options is part of every call's fixed cost.
pub(crate) fn option(name: &std::ffi::CStr) -> Robj {
    // SAFETY: main thread; the value is protected while the Robj lives
    unsafe { Robj::from_sexp(Rf_GetOption1(extendr_ffi::Rf_install(name.as_ptr()))) }
}

/// R's option `name` as a number (`None` when unset or not a number).
/// Main thread only.
fn number_option(name: &std::ffi::CStr) -> Option<f64> {
    let value = option(name);
    value
        .as_real()
        .or_else(|| value.as_integer().map(f64::from))
}

/// R's `timeout` option, in seconds (for URLs; R's default is 60).
fn timeout_option() -> Option<std::time::Duration> {
    let secs = number_option(c"timeout").unwrap_or(60.0);
    (secs > 0.0 && secs.is_finite()).then(|| std::time::Duration::from_secs_f64(secs))
}

/// R's `rdarrow.max_memory` option (unset: `None`). Main thread only.
fn memory_option() -> Option<u64> {
    let max_memory = number_option(c"rdarrow.max_memory").unwrap_or(0.0);
    (max_memory > 0.0).then_some(max_memory as u64)
}

/// Version of the rdarrow engine
///
/// @return The version of the compiled Rust engine, as a string.
/// @export
#[extendr]
fn rdarrow_engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The number of lazily read character vectors whose strings the engine
/// still holds (for the tests of their lifetime).
/// @noRd
#[extendr]
fn lazy_strings_live_impl() -> i32 {
    lazy_strings::live() as i32
}

/// List the objects in a file (payloads skipped): the listing data frame.
/// @noRd
#[extendr]
fn rdata_list_impl(path: Robj, stream_name: &str, settings: Robj, recursive: bool) -> Robj {
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    let opts = options(&settings);
    match job::read("Listing", &path, &opts, &mut || {}, |opts| {
        rdarrow_arrow::list_file(&path, opts, stream_name, recursive)
    }) {
        Err(e) => error_value(&e),
        Ok((_, infos)) => listing_value(&infos, None),
    }
}

/// A listing as the data frame `rdata_objects()` returns, with (where
/// given) a first column `file`: the file each row comes from.
fn listing_value(
    infos: &[rdarrow_arrow::read::summary::ObjectInfo],
    file: Option<Vec<String>>,
) -> Robj {
    // R's NA where a listing has no value
    let na = |x: Option<f64>| x.unwrap_or_else(rdarrow_arrow::tree::na::real);
    let mut names: Vec<&str> = Vec::with_capacity(8);
    let mut columns: Vec<Robj> = Vec::with_capacity(8);
    if let Some(file) = file {
        names.push("file");
        columns.push(file.into());
    }
    names.extend(["name", "class", "type", "length", "nrow", "ncol", "bytes"]);
    columns.extend([
        infos
            .iter()
            .map(|i| i.name.clone())
            .collect::<Vec<_>>()
            .into(),
        infos
            .iter()
            .map(|i| i.class.clone())
            .collect::<Vec<_>>()
            .into(),
        infos
            .iter()
            .map(|i| i.type_name.clone())
            .collect::<Vec<_>>()
            .into(),
        infos
            .iter()
            .map(|i| na(i.length))
            .collect::<Vec<_>>()
            .into(),
        infos.iter().map(|i| na(i.nrow)).collect::<Vec<_>>().into(),
        infos.iter().map(|i| na(i.ncol)).collect::<Vec<_>>().into(),
        infos
            .iter()
            .map(|i| i.bytes.map_or(f64::NAN, |b| b as f64))
            .collect::<Vec<_>>()
            .into(),
    ]);
    let frame = List::from_names_and_values(names, columns).map(Robj::from);
    // a data frame's compact row names, as .set_row_names() makes them
    let n = infos.len() as i32;
    let row_names: Robj = if n == 0 {
        Vec::<i32>::new().into()
    } else {
        vec![i32::MIN, -n].into()
    };
    match frame.and_then(|mut f| {
        f.set_attrib(row_names_symbol(), row_names)?;
        f.set_class(["data.frame"])?;
        Ok(f)
    }) {
        Ok(f) => f,
        Err(e) => error_value(&rdarrow_arrow::Error::internal(format!(
            "cannot make the listing: {e}"
        ))),
    }
}

/// An error of the file `label` among several: its message says which.
fn in_file(e: &rdarrow_arrow::Error, label: &str) -> Robj {
    let mut e = e.clone();
    e.message = format!("file '{label}': {}", e.message);
    error_value(&e)
}

/// List the objects of several files (`labels`: the files as the user
/// named them, for errors), read on several threads at once: one listing
/// with a first column `file`, each row's file as the user named it.
/// @noRd
#[extendr]
fn rdata_list_files_impl(
    paths: Vec<String>,
    labels: Vec<String>,
    stream_names: Vec<String>,
    settings: Robj,
    recursive: bool,
) -> Robj {
    use rdarrow_arrow::sources::all_cores;
    let opts = all_cores::on_thread_with_stack(&options(&settings), all_cores::WORKER_STACK);
    job::watch_interrupts();
    let mut infos = Vec::new();
    let mut file = Vec::new();
    let mut failed = None;
    all_cores::in_order(
        &paths,
        all_cores::threads_for(paths.len()),
        |path| all_cores::file_weight(path),
        // (the file's document freed by the worker that made it: freed on
        // this thread, its memory would wait on the worker's allocator)
        |i, path| {
            rdarrow_arrow::list_file(path, &opts, &stream_names[i], recursive)
                .map(|(_, found)| found)
        },
        &mut || {},
        &mut |i, listed: rdarrow_arrow::Result<Vec<_>>| match listed {
            Ok(found) => {
                file.extend(std::iter::repeat_n(labels[i].clone(), found.len()));
                infos.extend(found);
                std::ops::ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(in_file(&e, &labels[i]));
                std::ops::ControlFlow::Break(())
            }
        },
    );
    failed.unwrap_or_else(|| listing_value(&infos, Some(file)))
}

/// The object path (`lst$a[[2]]`) of `parts`, each a name or (where
/// `position`) a position from 1.
/// @noRd
#[extendr]
fn object_path_impl(parts: Vec<String>, position: Logicals) -> Robj {
    use rdarrow_arrow::tree::object_path::ObjectPath;
    use rdarrow_arrow::tree::object_path::Step;
    let position: Vec<bool> = position.iter().map(|b| b.is_true()).collect();
    let mut steps = Vec::new();
    for (p, &pos) in parts.iter().zip(&position).skip(1) {
        steps.push(if pos {
            match p.parse::<usize>() {
                Ok(n) if n >= 1 => Step::Position(n),
                _ => {
                    return error_value(&rdarrow_arrow::Error::usage(format!(
                        "'{p}' is not a position (from 1)"
                    )))
                }
            }
        } else {
            Step::Name(p.clone())
        });
    }
    let top = parts.first().cloned().unwrap_or_default();
    ObjectPath { top, steps }.display().into()
}

/// The objects asked for, the options of a read for R and the main
/// thread's side of its allocator: large payloads are decoded straight
/// into R vectors, which the returned `RVectors` keeps protected until the
/// objects are built (drop it last), and allocates for a worker that asks.
fn read_for_r_setup(
    objects: Nullable<Vec<String>>,
    settings: &Robj,
) -> (Option<Vec<String>>, ReadOptions, r_memory::RVectors) {
    let wanted = match objects {
        Nullable::NotNull(v) => Some(v),
        Nullable::Null => None,
    };
    let (allocator, vectors) = r_memory::pair();
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
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    let (wanted, opts, mut vectors) = read_for_r_setup(objects, &settings);
    let read = job::read_for_r("Reading", &opts, &mut || vectors.serve(), |opts| {
        rdarrow_arrow::read_for_r(&path, wanted.as_deref(), stream_name, opts)
    });
    drop(opts);
    let (doc, objs) = match read {
        Ok(d) => d,
        Err(e) => return error_value(&e),
    };
    read_value(&doc, objs).unwrap_or_else(|e| error_value(&e))
}

/// Objects R rebuilds that nest at most this deep are serialized for it on
/// the main thread (deeper: on a worker's deep stack).
const WRITE_HERE_MAX_DEPTH: usize = 1000;

/// The result of a read for R: list(values, fallback, names, rebuild), or
/// an error value. Main thread only.
fn read_value(
    doc: &Document,
    objs: Vec<(String, rdarrow_arrow::RObject)>,
) -> rdarrow_arrow::Result<Robj> {
    let builder = RBuilder {
        refs: &doc.refs,
        native_encoding: doc.header.native_encoding.as_deref(),
        header: Some(&doc.header),
        lazy_min: crate::lazy_strings::min_len(),
    };
    let mut values: Vec<Robj> = Vec::with_capacity(objs.len());
    let mut fallback: Vec<bool> = Vec::with_capacity(objs.len());
    let mut names: Vec<String> = Vec::with_capacity(objs.len());
    let mut rebuild: Vec<rdarrow_arrow::RObject> = Vec::new();
    let mut patches: Vec<List> = Vec::new();
    for (name, mut obj) in objs {
        let built = if builder.plain(&obj) {
            match unsafe { builder.build(&mut obj) } {
                Ok(sexp) => Ok((unsafe { Robj::from_sexp(sexp) }, false)),
                Err(BuildError::Fallback) => Err(rdarrow_arrow::Error::limit_of(
                    LimitKind::Depth,
                    "object too deeply nested to build",
                )),
                Err(BuildError::Engine(e)) => Err(e),
            }
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
            job::run("Writing", write)?
        } else {
            write()?
        };
        Raw::from_bytes(&bytes).into()
    };
    Ok(list!(
        values = List::from_values(values),
        fallback = fallback,
        names = names,
        rebuild = rebuild,
        patches = List::from_values(patches)
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
    job::watch_interrupts();
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
    match job::run("Parsing", || rdarrow_arrow::read_file(path, &opts)) {
        Ok(doc) => (doc.stream_len as f64).into(),
        Err(e) => error_value(&e),
    }
}

/// Decompress a file and discard the bytes; returns their count.
/// @noRd
#[extendr]
fn rdata_decompress_impl(path: &str) -> Robj {
    match job::run("Decompressing", || rdarrow_arrow::decompressed_len(path)) {
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

fn read_doc(path: &str, settings: Robj) -> std::result::Result<Document, Robj> {
    let opts = options(&settings);
    job::run("Reading", || rdarrow_arrow::read_file(path, &opts)).map_err(|e| error_value(&e))
}

/// Parse a file and serialize it again, uncompressed, in its own format.
/// @noRd
#[extendr]
fn rdata_reserialize_impl(path: &str, settings: Robj) -> Robj {
    let doc = match read_doc(path, settings) {
        Ok(d) => d,
        Err(e) => return e,
    };
    match rdarrow_arrow::write_document(&doc, Vec::new()) {
        Ok(b) => Raw::from_bytes(&b).into(),
        Err(e) => error_value(&e),
    }
}

/// Parse a file and write it to `out` in another format, version and
/// compression.
/// @noRd
#[extendr]
fn rdata_rewrite_impl(
    path: &str,
    out: &str,
    format: &str,
    version: i32,
    compress: &str,
    level: i32,
    settings: Robj,
) -> Robj {
    let mut doc = match read_doc(path, settings) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let fmt = match format {
        "xdr" => Format::Xdr,
        "ascii" => Format::Ascii,
        "binary" => Format::Binary,
        other => {
            return error_value(&rdarrow_arrow::Error::usage(format!(
                "unknown format '{other}'"
            )))
        }
    };
    let Some(comp) = Compression::from_name(compress) else {
        return error_value(&rdarrow_arrow::Error::usage(format!(
            "unknown compression '{compress}'"
        )));
    };
    let level = if level < 0 { None } else { Some(level as u32) };
    let r = job::run("Writing", || {
        rdarrow_arrow::convert_document(&mut doc, fmt, version)
            .and_then(|_| rdarrow_arrow::write_file(&doc, out, comp, level))
    });
    match r {
        Ok(()) => out.into(),
        Err(e) => error_value(&e),
    }
}

/// Convert an object of a file to an Arrow C stream.
/// @noRd
#[extendr]
fn rdata_to_arrow_impl(
    path: Robj,
    object: Robj,
    col_select: Robj,
    chunk_size: Robj,
    default_tz: &str,
    stream_name: &str,
    settings: Robj,
) -> Robj {
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    arrow::to_arrow(
        &path,
        object,
        col_select,
        chunk_size,
        default_tz,
        stream_name,
        settings,
    )
}

/// The stream `x` (consumed) with its tensor columns as their storage,
/// for arrow R.
/// @noRd
#[extendr]
fn stream_storage_types_impl(x: Robj) -> Robj {
    arrow::storage_types(&x)
}

/// Write an object of a file as Arrow IPC.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn rdata_to_ipc_impl(
    path: Robj,
    sink: &str,
    object: Robj,
    col_select: Robj,
    format: &str,
    compression: &str,
    chunk_size: Robj,
    memory: f64,
    default_tz: &str,
    stream_name: &str,
    settings: Robj,
) -> Robj {
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    arrow::to_ipc(
        &path,
        sink,
        object,
        col_select,
        format,
        compression,
        chunk_size,
        memory,
        default_tz,
        stream_name,
        settings,
    )
}

/// Write an object of a file as Parquet.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn rdata_to_parquet_impl(
    path: Robj,
    sink: &str,
    object: Robj,
    col_select: Robj,
    compression: &str,
    level: Robj,
    row_group_size: Robj,
    memory: f64,
    default_tz: &str,
    stream_name: &str,
    settings: Robj,
) -> Robj {
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    arrow::to_parquet(
        &path,
        sink,
        object,
        col_select,
        compression,
        level,
        row_group_size,
        memory,
        default_tz,
        stream_name,
        settings,
    )
}

/// Write one array of a file as an Arrow Tensor message; returns its
/// shape, or an error value.
/// @noRd
#[extendr]
fn rdata_to_tensor_impl(path: Robj, sink: &str, object: Nullable<String>, stream_name: &str, settings: Robj) -> Robj {
    let path = match given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    let read = options(&settings);
    let object = match object {
        Nullable::NotNull(o) => Some(o),
        Nullable::Null => None,
    };
    let res = job::run("Writing the tensor", || {
        rdarrow_arrow::files::tensor::rdata_to_tensor(
            &path,
            object.as_deref(),
            stream_name,
            read,
            std::path::Path::new(sink),
        )
    });
    match res {
        Ok((_, shape)) => shape.iter().map(|&d| d as f64).collect::<Vec<f64>>().into(),
        Err(e) => error_value(&e),
    }
}

/// Whether a file written at `path` is an `.rds` (else an `.RData`): the
/// engine's one rule (path_is_rds() of the format crate).
/// @noRd
#[extendr]
fn path_is_rds_impl(path: &str) -> bool {
    rdarrow_arrow::path_is_rds(path)
}

/// The names objects of `sources` (paths or URLs) take: the engine's one
/// rule (object_name_of() of the format crate).
/// @noRd
#[extendr]
fn object_name_impl(sources: Vec<String>) -> Vec<String> {
    sources
        .iter()
        .map(|s| rdarrow_arrow::object_name_of(s))
        .collect()
}

/// Where each of `given` is: "http", "store" or "local" (the engine's
/// one rule, location_of() of the format crate).
/// @noRd
#[extendr]
fn location_impl(given: Vec<String>) -> Vec<String> {
    given
        .iter()
        .map(|g| rdarrow_arrow::location_of(g).name().to_string())
        .collect()
}

/// The session's time zone ("" when none is set): the engine's one rule
/// (session_zone() of the Arrow bridge), which every front end asks.
/// @noRd
#[extendr]
fn session_zone_impl() -> String {
    rdarrow_arrow::session_zone().unwrap_or_default()
}

/// Check by its first bytes that the file at `path` is of `kind`
/// ("parquet" or "ipc"); NULL, or an error value naming `right_function`.
/// @noRd
#[extendr]
fn expect_file_kind_impl(path: &str, label: &str, kind: &str, right_function: &str) -> Robj {
    use rdarrow_arrow::DataFileKind;
    let Some(want) = DataFileKind::from_name(kind) else {
        return error_value(&rdarrow_arrow::Error::internal(format!(
            "no file kind '{kind}'"
        )));
    };
    match DataFileKind::expect_file(std::path::Path::new(path), label, want, right_function) {
        Ok(()) => Robj::from(()),
        Err(e) => error_value(&e),
    }
}

/// Check a writer's compression name and level (NULL: none given) for a
/// file at `file` by the engine's one rule (compression_for_path() of the
/// format crate: R's compressions, or a .qs2/.qdata file's container):
/// list(compress = the name the writers pass on, level = the level, -1
/// for the default), or an error value.
/// @noRd
#[extendr]
fn write_compression_impl(file: &str, compress: &str, level: Robj) -> Robj {
    let level = if level.is_null() {
        None
    } else if let Some(level) = level
        .as_real()
        .filter(|l| l.fract() == 0.0 && l.abs() <= 1e9)
    {
        Some(level as i64)
    } else {
        return error_value(&rdarrow_arrow::Error::usage(
            "the compression level must be a whole number",
        ));
    };
    match rdarrow_arrow::compression_for_path(file, compress, level) {
        Ok((kind, level)) => list!(compress = kind.name(), level = level.map_or(-1, |l| l as i32)).into(),
        Err(e) => error_value(&e),
    }
}

/// A path that names an existing local file: list(path (in full), name
/// (of its object were it an `.rds` file)), else `NULL` (R's general path
/// then applies: URLs, lazy-load bases, directories, `~`, errors).
/// @noRd
#[extendr]
fn local_file_impl(file: &str) -> Robj {
    match rdarrow_arrow::Source::local_file(file) {
        Some((path, name)) => list!(path = path.to_string_lossy().into_owned(), name = name).into(),
        None => ().into(),
    }
}

/// The message when a file read for its one object holds `names`.
/// @noRd
#[extendr]
fn not_one_object_impl(names: Vec<String>) -> String {
    rdarrow_arrow::read::document::not_one_object(&names).message
}

/// The sources an object store URL names (a glob's matches, a prefix's R
/// data files, listed from the store), or an error value.
/// @noRd
#[extendr]
fn expand_sources_impl(given: Vec<String>, full: Vec<String>, settings: Robj) -> Robj {
    // each of `full` (the paths of `given`, expanded by R: `~`) by the
    // engine's rule; one that names only itself keeps the user's words
    let read = options(&settings);
    let mut out: Vec<String> = Vec::with_capacity(given.len());
    for (g, f) in given.iter().zip(&full) {
        match rdarrow_arrow::expand_sources(f, &read) {
            Ok(found) if found.len() == 1 && found[0].as_os_str() == f.as_str() => {
                out.push(g.clone())
            }
            Ok(found) => out.extend(found.iter().map(|p| p.to_string_lossy().into_owned())),
            Err(e) => return error_value(&e),
        }
    }
    out.into()
}

/// Put `value` in place as element `element` (1-based) of list `x`, which
/// was just made and is referenced nowhere else (a patch of
/// [`rdata_read_impl`]'s).
/// @noRd
#[extendr]
fn set_element_impl(x: Robj, element: i32, value: Robj) {
    let i = element as isize - 1;
    if x.is_list() && i >= 0 && (i as usize) < x.len() {
        // SAFETY: main thread; a list and an index within it
        unsafe { extendr_ffi::SET_VECTOR_ELT(x.get(), i, value.get()) };
    }
}

/// Whether a stream external pointer still holds an unreleased stream.
/// @noRd
#[extendr]
fn stream_is_live_impl(x: Robj) -> bool {
    // The C struct ArrowArrayStream is get_schema, get_next,
    // get_last_error, release, private_data: `release` is the 4th pointer,
    // NULL once the stream was released or moved to a consumer.
    unsafe {
        let p = extendr_ffi::R_ExternalPtrAddr(x.get()) as *const usize;
        !p.is_null() && *p.add(3) != 0
    }
}

/// The address held by an external pointer, in decimal (for consumers that
/// take a stream by address, such as pyarrow's `_import_from_c`).
/// @noRd
#[extendr]
fn xptr_address_impl(x: Robj) -> String {
    unsafe { (extendr_ffi::R_ExternalPtrAddr(x.get()) as usize).to_string() }
}

/// Write an Arrow C stream as .RData/.rds.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn arrow_to_rdata_impl(
    x: Robj,
    file: &str,
    name: &str,
    compress: &str,
    level: i32,
    version: i32,
    ascii: bool,
    threads: i32,
    rds: bool,
    writer_version: i32,
    one_array: bool,
    storage: Robj,
) -> Robj {
    match from_arrow::write_opts(
        name,
        compress,
        level,
        version,
        ascii,
        threads,
        rds,
        writer_version,
        &storage,
    ) {
        Ok(o) => {
            let batches = from_arrow::import_stream(&x);
            from_arrow::frame_to_file(file, batches, one_array, &o)
        }
        Err(e) => error_value(&e),
    }
}

/// Write an Arrow IPC file or stream (or Parquet file, or Tensor
/// message) as .RData/.rds; `tensor`: the file must be a Tensor message.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn ipc_to_rdata_impl(
    path: &str,
    tensor: bool,
    file: &str,
    name: &str,
    compress: &str,
    level: i32,
    version: i32,
    ascii: bool,
    threads: i32,
    rds: bool,
    writer_version: i32,
    storage: Robj,
) -> Robj {
    match from_arrow::write_opts(
        name,
        compress,
        level,
        version,
        ascii,
        threads,
        rds,
        writer_version,
        &storage,
    ) {
        Ok(o) => {
            let max_memory = ReadOptions {
                max_memory: memory_option(),
                ..Default::default()
            }
            .memory_limit();
            let (input, output) = (std::path::Path::new(path), std::path::Path::new(file));
            let res = job::run("Writing", || {
                if tensor {
                    rdarrow_arrow::files::tensor::tensor_file_to_rdata(input, output, &o, max_memory)
                        .map(|_| ())
                } else {
                    rdarrow_arrow::data_file_to_rdata(input, output, &o, max_memory).map(|_| ())
                }
            });
            match res {
                Ok(_) => file.into(),
                Err(e) => error_value(&e),
            }
        }
        Err(e) => error_value(&e),
    }
}

/// Write an R object as .RData/.rds through R's own serializer.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn object_to_rdata_impl(
    x: Robj,
    file: &str,
    name: &str,
    compress: &str,
    level: i32,
    version: i32,
    ascii: bool,
    threads: i32,
    rds: bool,
    writer_version: i32,
    storage: Robj,
) -> Robj {
    match from_arrow::write_opts(
        name,
        compress,
        level,
        version,
        ascii,
        threads,
        rds,
        writer_version,
        &storage,
    ) {
        Ok(o) => save_r::save_object(x, file, &o),
        Err(e) => error_value(&e),
    }
}

/// `write_rdata()`: the tagged pairlist `objects` (as `save()` makes it,
/// or NULL for none) written as an `.RData` file.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn objects_to_rdata_impl(
    objects: Robj,
    file: &str,
    compress: &str,
    level: i32,
    version: i32,
    ascii: bool,
    threads: i32,
    writer_version: i32,
    storage: Robj,
) -> Robj {
    if !objects.is_null() && !objects.is_pairlist() {
        return error_value(&rdarrow_arrow::Error::internal(
            "write_rdata() hands over a pairlist",
        ));
    }
    match from_arrow::write_opts(
        "data",
        compress,
        level,
        version,
        ascii,
        threads,
        false,
        writer_version,
        &storage,
    ) {
        Ok(o) => save_r::save_stream(objects, file, &o),
        Err(e) => error_value(&e),
    }
}

/// The stream `arrow_to_rdata()` writes for `x` without R's serializer
/// (header included), or NULL when it would use R's serializer.
/// @noRd
#[extendr]
fn serialize_native_impl(x: Robj, version: i32) -> Robj {
    save_r::serialize_native(x, version)
}

/// Build an R data frame from an Arrow C stream.
/// @noRd
#[extendr]
fn stream_to_df_impl(x: Robj) -> Robj {
    from_arrow::stream_to_df(&x)
}

/// An empty ArrowArrayStream struct for producers to export into.
/// @noRd
#[extendr]
fn new_stream_impl() -> Robj {
    from_arrow::new_stream()
}

/// Write the data frames of R data files as an Arrow dataset directory.
/// @noRd
#[extendr]
fn rdata_to_dataset_impl(
    files: Vec<String>,
    path: &str,
    partitioning: Vec<String>,
    format: &str,
    object: Robj,
    names_to: &str,
    default_tz: &str,
    settings: Robj,
) -> Robj {
    dataset::to_dataset(
        files,
        path,
        partitioning,
        format,
        object,
        names_to,
        default_tz,
        settings,
    )
}

/// The engine's node-type table: every code, named as R's sources name it.
/// @noRd
#[extendr]
fn sxp_codes_impl() -> Robj {
    let codes: Vec<i32> = rdarrow_arrow::tree::sxp::ALL
        .iter()
        .map(|&(_, c)| c as i32)
        .collect();
    let names: Vec<&str> = rdarrow_arrow::tree::sxp::ALL
        .iter()
        .map(|&(n, _)| n)
        .collect();
    let mut v: Robj = codes.into();
    let _ = v.set_names(names);
    v
}

/// The flags word the engine packs for a node.
/// @noRd
#[extendr]
fn pack_flags_impl(sxptype: i32, levels: i32, object: bool, attr: bool, tag: bool) -> i32 {
    let flags = rdarrow_arrow::tree::Flags {
        levels: levels as u16,
        object,
    };
    rdarrow_arrow::tree::pack(sxptype as u8, flags, attr, tag)
}

extendr_module! {
    mod rdarrow;
    fn rdarrow_engine_version;
    fn lazy_strings_live_impl;
    fn rdata_list_impl;
    fn rdata_list_files_impl;
    fn rdata_read_impl;
    fn rdata_read_files_impl;
    fn object_path_impl;
    fn rdata_parse_impl;
    fn rdata_decompress_impl;
    fn rdata_decompressed_impl;
    fn rdata_reserialize_impl;
    fn rdata_rewrite_impl;
    fn rdata_to_arrow_impl;
    fn rdata_to_ipc_impl;
    fn rdata_to_tensor_impl;
    fn stream_storage_types_impl;
    fn rdata_to_parquet_impl;
    fn stream_is_live_impl;
    fn set_element_impl;
    fn path_is_rds_impl;
    fn write_compression_impl;
    fn object_name_impl;
    fn location_impl;
    fn session_zone_impl;
    fn expect_file_kind_impl;
    fn local_file_impl;
    fn not_one_object_impl;
    fn expand_sources_impl;
    fn xptr_address_impl;
    fn arrow_to_rdata_impl;
    fn ipc_to_rdata_impl;
    fn object_to_rdata_impl;
    fn objects_to_rdata_impl;
    fn serialize_native_impl;
    fn stream_to_df_impl;
    fn new_stream_impl;
    fn rdata_to_dataset_impl;
    fn sxp_codes_impl;
    fn pack_flags_impl;
}
