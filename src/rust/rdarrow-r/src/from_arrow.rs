//! Arrow to R: import an Arrow C stream (or read Arrow IPC), turn it into
//! an R data frame tree, and write it as `.RData`/`.rds` or build it in R.

use crate::errors::error_value;
use crate::to_r::{BuildError, RBuilder};
use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::{ArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{Array, ArrayReader, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use extendr_api::prelude::*;
use extendr_ffi::{
    R_ClearExternalPtr, R_ExternalPtrAddr, R_MakeExternalPtr, R_NilValue, R_RegisterCFinalizerEx,
    Rboolean, SEXP,
};
use rdarrow_arrow::from_arrow::frame::frame_from_batches;
use rdarrow_arrow::from_arrow::frame::object_from_batches;
use rdarrow_arrow::from_arrow::frame::vector_from_batches;
use rdarrow_arrow::from_arrow::frame::RFrame;
use rdarrow_arrow::write::write_object_file;
use rdarrow_arrow::write::ObjectFileOptions;
use rdarrow_arrow::Compression;
use rdarrow_arrow::Error;
use std::path::Path;
use std::sync::Arc;

fn arrow_err(e: impl std::fmt::Display) -> Error {
    Error::corrupt(format!("cannot read the Arrow data: {e}"))
}

/// Take the stream out of an external pointer whose address is an
/// ArrowArrayStream (the struct is left released, as consumers do). A
/// stream of a type other than struct (one array, as nanoarrow streams a
/// vector) becomes a table of one column, and the flag says so.
pub fn import_stream(x: &Robj) -> Result<(SchemaRef, Vec<RecordBatch>, bool), Error> {
    let p = unsafe { R_ExternalPtrAddr(x.get()) as *mut FFI_ArrowArrayStream };
    if p.is_null() {
        return Err(Error::usage("the Arrow stream pointer is NULL"));
    }
    // `release` is the 4th pointer of the C struct; NULL = consumed.
    if unsafe { *(p as *const usize).add(3) } == 0 {
        return Err(Error::usage(
            "this Arrow stream was already consumed (streams are single-use)",
        ));
    }
    let reader = unsafe { ArrayStreamReader::from_raw(p) }.map_err(arrow_err)?;
    let field = reader.field().clone();
    if let DataType::Struct(fields) = field.data_type() {
        // a table: the stream's schema metadata is its struct's
        let schema = Arc::new(Schema::new_with_metadata(
            fields.clone(),
            field.metadata().clone(),
        ));
        let mut batches = Vec::new();
        for array in reader {
            let array = array.map_err(arrow_err)?;
            let columns = array.as_struct().columns().to_vec();
            let batch = RecordBatch::try_new_with_options(
                schema.clone(),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(array.len())),
            )
            .map_err(arrow_err)?;
            batches.push(batch);
        }
        return Ok((schema, batches, false));
    }
    let name = if field.name().is_empty() {
        "value".to_string()
    } else {
        field.name().clone()
    };
    let schema = Arc::new(Schema::new(vec![Field::new(
        name,
        field.data_type().clone(),
        true,
    )
    .with_metadata(field.metadata().clone())]));
    let mut batches = Vec::new();
    for array in reader {
        rdarrow_arrow::base::cancel::check()?;
        let array = array.map_err(arrow_err)?;
        batches.push(RecordBatch::try_new(schema.clone(), vec![array]).map_err(arrow_err)?);
    }
    Ok((schema, batches, true))
}

/// How to write the R data file, from the R wrapper's arguments.
#[allow(clippy::too_many_arguments)]
pub fn write_opts(
    name: &str,
    compress: &str,
    level: i32,
    version: i32,
    ascii: bool,
    threads: i32,
    rds: bool,
    writer_version: i32,
    storage: &Robj,
) -> Result<ObjectFileOptions, Error> {
    let compression = Compression::from_name(compress)
        .ok_or_else(|| Error::usage(format!("unknown compression '{compress}'")))?;
    rdarrow_arrow::wire::header::check_version(version)?;
    Ok(ObjectFileOptions {
        name: name.to_string(),
        compression,
        level: (level >= 0).then_some(level as u32),
        version,
        ascii,
        // none given (0): every core, asked of the system once a call
        threads: if threads < 1 {
            rdarrow_arrow::batches::rows::all_cores()
        } else {
            threads as usize
        },
        rds,
        writer_version,
        storage: rdarrow_arrow::StorageOptions::new(crate::settings::storage_of(storage)),
    })
}

/// Write the object of a table as an R data file; `one_array`: the table
/// is one array's (a vector, or a data frame for a struct).
pub fn frame_to_file(
    path: &str,
    batches: Result<(SchemaRef, Vec<RecordBatch>, bool), Error>,
    one_array: bool,
    o: &ObjectFileOptions,
) -> Robj {
    let res = crate::job::run("Writing", || {
        batches
            .and_then(|(schema, batches, array)| {
                if array || one_array {
                    vector_from_batches(&schema, &batches)
                } else {
                    object_from_batches(&schema, &batches)
                }
            })
            .and_then(|f: RFrame| write_object_file(Path::new(path), f.object, f.refs, o))
    });
    match res {
        Ok(()) => path.into(),
        Err(e) => error_value(&e),
    }
}

/// An R data frame built from the stream.
pub fn stream_to_df(x: &Robj) -> Robj {
    let imported = import_stream(x);
    let frame = match crate::job::run("Converting", || {
        imported.and_then(|(s, b, _)| frame_from_batches(&s, &b))
    }) {
        Ok(f) => f,
        Err(e) => return error_value(&e),
    };
    let mut obj = frame.object;
    let builder = RBuilder {
        refs: &frame.refs,
        native_encoding: None,
        header: None,
        lazy_min: crate::lazy_strings::min_len(),
    };
    match unsafe { builder.build(&mut obj) } {
        Ok(sexp) => unsafe { Robj::from_sexp(sexp) },
        Err(BuildError::Engine(e)) => error_value(&e),
        // what only R's unserializer rebuilds (functions, environments)
        // is never handed to it from Arrow data
        Err(BuildError::Fallback) => error_value(&Error::unsupported(
            "the data holds objects that only R's unserializer rebuilds (functions, environments, byte code), or nests too deeply to build",
        )),
    }
}

extern "C" fn free_stream(x: SEXP) {
    unsafe {
        let p = R_ExternalPtrAddr(x) as *mut FFI_ArrowArrayStream;
        if !p.is_null() {
            drop(Box::from_raw(p));
            R_ClearExternalPtr(x);
        }
    }
}

/// An empty (released) ArrowArrayStream struct in an external pointer, for
/// producers that export into a caller's struct (`$export_to_c()`).
pub fn new_stream() -> Robj {
    let b = Box::new(FFI_ArrowArrayStream::empty());
    unsafe {
        let s = R_MakeExternalPtr(Box::into_raw(b) as *mut _, R_NilValue, R_NilValue);
        let robj = Robj::from_sexp(s);
        R_RegisterCFinalizerEx(s, Some(free_stream), Rboolean::TRUE);
        robj
    }
}
