//! R bindings for the rdarrow engine: argument conversion, results and
//! errors only. Each function returns either its result or an
//! `rdarrow_error_value` list that the R wrapper raises as a condition.

use extendr_api::prelude::*;
use rdarrow_core::{Compression, Document, Format, ReadOptions};

mod arrow;
mod dataset;
mod errors;
mod from_arrow;
mod job;
mod save_native;
mod save_r;
mod to_r;

use errors::error_value;
use to_r::{BuildError, RBuilder};

/// Read options from the arguments (pure: callable on worker threads; the
/// memory limit comes from R's options in `job::run`).
pub(crate) fn options(max_depth: i32) -> ReadOptions {
    ReadOptions { max_depth: max_depth.max(1) as usize, ..Default::default() }
}

/// Version of the rdarrow engine
///
/// @return The version of the compiled Rust engine, as a string.
/// @export
#[extendr]
fn rdarrow_engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// List the objects in a file (payloads skipped).
/// @noRd
#[extendr]
fn rdata_list_impl(path: &str, max_depth: i32) -> Robj {
    match job::run("Listing", || rdarrow_core::list_file(path, &options(max_depth))) {
        Err(e) => error_value(&e),
        Ok((doc, infos)) => {
            let na = |x: Option<f64>| x.unwrap_or(f64::NAN);
            let is_rds = !matches!(doc.container, rdarrow_core::Container::RData { .. });
            list!(
                name = infos.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
                class = infos.iter().map(|i| i.class.clone()).collect::<Vec<_>>(),
                type_name = infos.iter().map(|i| i.type_name.clone()).collect::<Vec<_>>(),
                length = infos.iter().map(|i| na(i.length)).collect::<Vec<_>>(),
                nrow = infos.iter().map(|i| na(i.nrow)).collect::<Vec<_>>(),
                ncol = infos.iter().map(|i| na(i.ncol)).collect::<Vec<_>>(),
                bytes = infos.iter().map(|i| i.bytes as f64).collect::<Vec<_>>(),
                is_rds = is_rds
            )
            .into()
        }
    }
}

/// Read the objects of a file. Returns list(values, fallback, names, is_rds).
/// @noRd
#[extendr]
fn rdata_read_impl(path: &str, objects: Robj, max_depth: i32) -> Robj {
    let wanted: Option<Vec<String>> = if objects.is_null() {
        None
    } else {
        Some(objects.as_str_vector().map(|v| v.iter().map(|s| s.to_string()).collect()).unwrap_or_default())
    };
    // an RDS stream's one object comes with an empty name: always decoded
    let mut filter = |name: &[u8]| match &wanted {
        _ if name.is_empty() => true,
        None => true,
        Some(w) => w.iter().any(|n| n.as_bytes() == name),
    };
    // parse, then check that what will be built is safe to hand to R
    let mut doc = match job::run("Reading", || {
        let doc = rdarrow_core::read_file_filtered(path, &options(max_depth), &mut filter)?;
        for (name, obj) in doc.objects() {
            if name.contains(&0) {
                let shown = String::from_utf8_lossy(&name).replace('\0', "\\0");
                return Err(rdarrow_core::Error::corrupt("the object's name holds an embedded NUL byte, which R strings cannot hold").in_object(&shown));
            }
            if name.is_empty() || filter(&name) {
                rdarrow_core::validate::check_for_r(obj, &doc.refs).map_err(|e| e.in_object(&String::from_utf8_lossy(&name)))?;
            }
        }
        Ok::<_, rdarrow_core::Error>(doc)
    }) {
        Ok(d) => d,
        Err(e) => return error_value(&e),
    };
    let is_rds = !matches!(doc.container, rdarrow_core::Container::RData { .. });
    let all_names: Vec<String> = doc.objects().iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect();
    if let Some(w) = &wanted {
        if !is_rds {
            let missing: Vec<&String> = w.iter().filter(|n| !all_names.contains(n)).collect();
            if !missing.is_empty() {
                let e = rdarrow_core::Error::usage(format!(
                    "object(s) {} not found in the file; it holds: {}",
                    missing.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", "),
                    if all_names.is_empty() { "nothing".to_string() } else { all_names.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ") }
                ));
                return error_value(&e);
            }
        }
    }
    let objs = doc.take_objects();
    let builder = RBuilder { refs: &doc.refs, native_encoding: doc.header.native_encoding.as_deref(), header: Some(&doc.header) };
    let mut values: Vec<Robj> = Vec::with_capacity(objs.len());
    let mut fallback: Vec<bool> = Vec::with_capacity(objs.len());
    let mut names: Vec<String> = Vec::with_capacity(objs.len());
    for (name, mut obj) in objs {
        if !is_rds && !filter(&name) {
            continue;
        }
        let name_s = String::from_utf8_lossy(&name).into_owned();
        if builder.plain(&obj) {
            match unsafe { builder.build(&mut obj) } {
                Ok(sexp) => {
                    values.push(unsafe { Robj::from_sexp(sexp) });
                    fallback.push(false);
                }
                Err(BuildError::Fallback) => {
                    return error_value(&rdarrow_core::Error::limit("object too deeply nested to build").in_object(&name_s))
                }
                Err(BuildError::Engine(e)) => return error_value(&e.in_object(&name_s)),
            }
        } else {
            match rdarrow_core::object_to_rds(&doc, &obj) {
                Ok(bytes) => {
                    values.push(Raw::from_bytes(&bytes).into());
                    fallback.push(true);
                }
                Err(e) => return error_value(&e.in_object(&name_s)),
            }
        }
        names.push(name_s);
    }
    list!(values = List::from_values(values), fallback = fallback, names = names, is_rds = is_rds).into()
}

/// Parse a file completely without building R objects; returns the size of
/// the decompressed stream (for benchmarks).
/// @noRd
#[extendr]
fn rdata_parse_impl(path: &str, max_depth: i32) -> Robj {
    match job::run("Parsing", || rdarrow_core::read_file(path, &options(max_depth))) {
        Ok(doc) => (doc.stream_len as f64).into(),
        Err(e) => error_value(&e),
    }
}

/// Decompress a file and discard the bytes; returns their count.
/// @noRd
#[extendr]
fn rdata_decompress_impl(path: &str) -> Robj {
    match job::run("Decompressing", || rdarrow_core::decompressed_len(path)) {
        Ok(n) => (n as f64).into(),
        Err(e) => error_value(&e),
    }
}

/// The decompressed stream of a file, as a raw vector.
/// @noRd
#[extendr]
fn rdata_decompressed_impl(path: &str) -> Robj {
    match std::fs::read(path).map_err(|e| rdarrow_core::Error::io(&e, "cannot read")).and_then(rdarrow_core::decompress_bytes) {
        Ok(b) => Raw::from_bytes(&b).into(),
        Err(e) => error_value(&e),
    }
}

fn read_doc(path: &str, max_depth: i32) -> std::result::Result<Document, Robj> {
    job::run("Reading", || rdarrow_core::read_file(path, &options(max_depth))).map_err(|e| error_value(&e))
}

/// Parse a file and serialize it again, uncompressed, in its own format.
/// @noRd
#[extendr]
fn rdata_reserialize_impl(path: &str, max_depth: i32) -> Robj {
    let doc = match read_doc(path, max_depth) {
        Ok(d) => d,
        Err(e) => return e,
    };
    match rdarrow_core::write_document(&doc, Vec::new()) {
        Ok(b) => Raw::from_bytes(&b).into(),
        Err(e) => error_value(&e),
    }
}

/// Parse a file and write it to `out` in another format, version and
/// compression.
/// @noRd
#[extendr]
fn rdata_rewrite_impl(path: &str, out: &str, format: &str, version: i32, compress: &str, level: i32, max_depth: i32) -> Robj {
    let mut doc = match read_doc(path, max_depth) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let fmt = match format {
        "xdr" => Format::Xdr,
        "ascii" => Format::Ascii,
        "binary" => Format::Binary,
        other => return error_value(&rdarrow_core::Error::usage(format!("unknown format '{other}'"))),
    };
    let Some(comp) = Compression::from_name(compress) else {
        return error_value(&rdarrow_core::Error::usage(format!("unknown compression '{compress}'")));
    };
    let level = if level < 0 { None } else { Some(level as u32) };
    let r = job::run("Writing", || rdarrow_core::convert_document(&mut doc, fmt, version).and_then(|_| rdarrow_core::write_file(&doc, out, comp, level)));
    match r {
        Ok(()) => out.into(),
        Err(e) => error_value(&e),
    }
}

/// Convert an object of a file to an Arrow C stream.
/// @noRd
#[extendr]
fn rdata_to_arrow_impl(path: &str, object: Robj, col_select: Robj, chunk_size: Robj, default_tz: &str, stream_name: &str, max_depth: i32) -> Robj {
    arrow::to_arrow(path, object, col_select, chunk_size, default_tz, stream_name, max_depth)
}

/// Write an object of a file as Arrow IPC.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn rdata_to_ipc_impl(path: &str, sink: &str, object: Robj, col_select: Robj, format: &str, compression: &str, chunk_size: Robj, default_tz: &str, stream_name: &str, max_depth: i32) -> Robj {
    arrow::to_ipc(path, sink, object, col_select, format, compression, chunk_size, default_tz, stream_name, max_depth)
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
fn arrow_to_rdata_impl(x: Robj, file: &str, name: &str, compress: &str, level: i32, version: i32, ascii: bool, threads: i32, rds: bool, writer_version: i32) -> Robj {
    match from_arrow::WriteOpts::new(name, compress, level, version, ascii, threads, rds, writer_version) {
        Ok(o) => {
            let batches = from_arrow::import_stream(&x);
            from_arrow::frame_to_file(file, batches, &o)
        }
        Err(e) => error_value(&e),
    }
}

/// Write an Arrow IPC file or stream as .RData/.rds.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn ipc_to_rdata_impl(path: &str, file: &str, name: &str, compress: &str, level: i32, version: i32, ascii: bool, threads: i32, rds: bool, writer_version: i32) -> Robj {
    match from_arrow::WriteOpts::new(name, compress, level, version, ascii, threads, rds, writer_version) {
        Ok(o) => from_arrow::frame_to_file(file, job::run("Reading Arrow IPC", || from_arrow::read_ipc(path)), &o),
        Err(e) => error_value(&e),
    }
}

/// Write an R object as .RData/.rds through R's own serializer.
/// @noRd
#[extendr]
#[allow(clippy::too_many_arguments)]
fn object_to_rdata_impl(x: Robj, file: &str, name: &str, compress: &str, level: i32, version: i32, ascii: bool, threads: i32, rds: bool, writer_version: i32) -> Robj {
    match from_arrow::WriteOpts::new(name, compress, level, version, ascii, threads, rds, writer_version) {
        Ok(o) => save_r::save_object(x, file, &o),
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
fn rdata_to_dataset_impl(files: Vec<String>, path: &str, partitioning: Vec<String>, format: &str, object: Robj, default_tz: &str, max_depth: i32) -> Robj {
    dataset::to_dataset(files, path, partitioning, format, object, default_tz, max_depth)
}

extendr_module! {
    mod rdarrow;
    fn rdarrow_engine_version;
    fn rdata_list_impl;
    fn rdata_read_impl;
    fn rdata_parse_impl;
    fn rdata_decompress_impl;
    fn rdata_decompressed_impl;
    fn rdata_reserialize_impl;
    fn rdata_rewrite_impl;
    fn rdata_to_arrow_impl;
    fn rdata_to_ipc_impl;
    fn stream_is_live_impl;
    fn xptr_address_impl;
    fn arrow_to_rdata_impl;
    fn ipc_to_rdata_impl;
    fn object_to_rdata_impl;
    fn serialize_native_impl;
    fn stream_to_df_impl;
    fn new_stream_impl;
    fn rdata_to_dataset_impl;
}
