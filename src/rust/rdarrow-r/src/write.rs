//! Writing R data files: rewriting, re-serializing, R objects and Arrow
//! tables written as `.RData`/`.rds` (and `.qs2`/`.qdata`).

use crate::read::read_doc;
use extendr_api::prelude::*;
use rdarrow_arrow::Compression;
use rdarrow_arrow::Format;
use rdarrow_arrow::ReadOptions;
use crate::errors::error_value;
use crate::settings::*;

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
    let r = crate::job::run("Writing", || {
        rdarrow_arrow::convert_document(&mut doc, fmt, version)
            .and_then(|_| rdarrow_arrow::write_file(&doc, out, comp, level))
    });
    match r {
        Ok(()) => out.into(),
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
fn write_compression_impl(file: &str, compress: Robj, level: Robj) -> Robj {
    // NULL: none given (the file's default)
    let compress = compress.as_str();
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

/// The message when a file read for its one object holds `names`.
/// @noRd
#[extendr]
fn not_one_object_impl(names: Vec<String>) -> String {
    rdarrow_arrow::read::document::not_one_object(&names).message
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
    match crate::from_arrow::write_opts(
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
            let batches = crate::from_arrow::import_stream(&x);
            crate::from_arrow::frame_to_file(file, batches, one_array, &o)
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
    match crate::from_arrow::write_opts(
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
            let res = crate::job::run("Writing", || {
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
    match crate::from_arrow::write_opts(
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
        Ok(o) => crate::save_r::save_object(x, file, &o),
        Err(e) => error_value(&e),
    }
}

/// `write_rds(x, file)` with every argument its default, in one call (a
/// small object's write costs little more than the calls around it): the
/// file's own compression at its default level (the engine's rule for the
/// path), version 3, every core. `NULL` where `file` is not a local path
/// in an existing folder (the general path says why); else as
/// [`object_to_rdata_impl`].
/// @noRd
#[extendr]
fn write_rds_default_impl(x: Robj, file: &str, writer_version: i32) -> Robj {
    let path = std::path::Path::new(file);
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if rdarrow_arrow::location_of(file) != rdarrow_arrow::sources::Location::Local || !folder.is_dir() {
        return ().into();
    }
    let (compression, level) = match rdarrow_arrow::compression_for_path(file, None, None) {
        Ok(c) => c,
        Err(e) => return error_value(&e),
    };
    let o = rdarrow_arrow::write::ObjectFileOptions {
        name: "object".to_string(),
        compression,
        level,
        version: 3,
        ascii: false,
        threads: rdarrow_arrow::batches::rows::all_cores(),
        rds: true,
        writer_version,
        storage: rdarrow_arrow::StorageOptions::new(Vec::new()),
    };
    crate::save_r::save_object(x, file, &o)
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
    match crate::from_arrow::write_opts(
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
        Ok(o) => crate::save_r::save_stream(objects, file, &o),
        Err(e) => error_value(&e),
    }
}

/// The stream `arrow_to_rdata()` writes for `x` without R's serializer
/// (header included), or NULL when it would use R's serializer.
/// @noRd
#[extendr]
fn serialize_native_impl(x: Robj, version: i32) -> Robj {
    crate::save_r::serialize_native(x, version)
}

extendr_module! {
    mod write;
    fn rdata_reserialize_impl;
    fn rdata_rewrite_impl;
    fn write_compression_impl;
    fn not_one_object_impl;
    fn arrow_to_rdata_impl;
    fn ipc_to_rdata_impl;
    fn object_to_rdata_impl;
    fn write_rds_default_impl;
    fn objects_to_rdata_impl;
    fn serialize_native_impl;
}
