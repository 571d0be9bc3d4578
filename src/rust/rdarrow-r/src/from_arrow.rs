//! Arrow to R: import an Arrow C stream (or read Arrow IPC), turn it into
//! an R data frame tree, and write it as `.RData`/`.rds` or build it in R.

use crate::errors::error_value;
use crate::to_r::{BuildError, RBuilder};
use arrow_array::ffi_stream::{RecordBatchStreamReader, FFI_ArrowArrayStream};
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::SchemaRef;
use extendr_api::prelude::*;
use extendr_ffi::{R_ClearExternalPtr, R_ExternalPtrAddr, R_MakeExternalPtr, R_NilValue, R_RegisterCFinalizerEx, Rboolean, SEXP};
use rdarrow_core::arrow::from_arrow::{frame_from_batches, write_frame_file, FrameFileOptions, RFrame};
use rdarrow_core::tree::RObject;
use rdarrow_core::{Compression, Error};
use std::path::Path;

fn arrow_err(e: impl std::fmt::Display) -> Error {
    Error::corrupt(format!("cannot read the Arrow data: {e}"))
}

/// Take the stream out of an external pointer whose address is an
/// ArrowArrayStream (the struct is left released, as consumers do).
pub fn import_stream(x: &Robj) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
    let p = unsafe { R_ExternalPtrAddr(x.get()) as *mut FFI_ArrowArrayStream };
    if p.is_null() {
        return Err(Error::usage("the Arrow stream pointer is NULL"));
    }
    // `release` is the 4th pointer of the C struct; NULL = consumed.
    if unsafe { *(p as *const usize).add(3) } == 0 {
        return Err(Error::usage("this Arrow stream was already consumed (streams are single-use)"));
    }
    let reader = unsafe { RecordBatchStreamReader::from_raw(p) }.map_err(arrow_err)?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().map_err(arrow_err)?;
    Ok((schema, batches))
}

/// Read an Arrow IPC file or stream (told apart by their first bytes).
pub fn read_ipc(path: &str) -> Result<(SchemaRef, Vec<RecordBatch>), Error> {
    rdarrow_core::arrow::ipc::read_ipc_file(Path::new(path))
}

/// How to write the R data file.
pub struct WriteOpts {
    pub name: String,
    pub compression: Compression,
    pub level: Option<u32>,
    pub version: i32,
    pub ascii: bool,
    pub threads: usize,
    pub rds: bool,
    pub writer_version: i32,
}

impl WriteOpts {
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: &str, compress: &str, level: i32, version: i32, ascii: bool, threads: i32, rds: bool, writer_version: i32) -> Result<Self, Error> {
        let compression = Compression::from_name(compress).ok_or_else(|| Error::usage(format!("unknown compression '{compress}'")))?;
        rdarrow_core::header::check_version(version)?;
        Ok(WriteOpts {
            name: name.to_string(),
            compression,
            level: (level >= 0).then_some(level as u32),
            version,
            ascii,
            threads: threads.max(1) as usize,
            rds,
            writer_version,
        })
    }
}

/// Write an object (with its reference table) as `.RData` or `.rds`.
pub fn write_object(path: &str, object: RObject, refs: rdarrow_core::RefTable, o: &WriteOpts) -> Result<(), Error> {
    let fo = FrameFileOptions {
        name: o.name.clone(),
        compression: o.compression,
        level: o.level,
        version: o.version,
        ascii: o.ascii,
        threads: o.threads,
        rds: o.rds,
        writer_version: o.writer_version,
    };
    write_frame_file(Path::new(path), object, refs, &fo)
}

pub fn frame_to_file(path: &str, batches: Result<(SchemaRef, Vec<RecordBatch>), Error>, o: &WriteOpts) -> Robj {
    let res = crate::job::run("Writing", || {
        batches.and_then(|(schema, batches)| frame_from_batches(&schema, &batches)).and_then(|f: RFrame| write_object(path, f.object, f.refs, o))
    });
    match res {
        Ok(()) => path.into(),
        Err(e) => error_value(&e),
    }
}

/// An R data frame built from the stream.
pub fn stream_to_df(x: &Robj) -> Robj {
    let imported = import_stream(x);
    let frame = match crate::job::run("Converting", || imported.and_then(|(s, b)| frame_from_batches(&s, &b))) {
        Ok(f) => f,
        Err(e) => return error_value(&e),
    };
    let mut obj = frame.object;
    let builder = RBuilder { refs: &frame.refs, native_encoding: None, header: None };
    match unsafe { builder.build(&mut obj) } {
        Ok(sexp) => unsafe { Robj::from_sexp(sexp) },
        Err(BuildError::Engine(e)) => error_value(&e),
        Err(BuildError::Fallback) => error_value(&Error::limit("the data is nested too deeply to build")),
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
