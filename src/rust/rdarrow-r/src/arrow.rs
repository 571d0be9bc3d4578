//! Arrow entry points: a table handed to R as an Arrow C stream in an
//! external pointer (its address is the ArrowArrayStream struct, as arrow
//! R and nanoarrow expect), and Arrow IPC output.

use crate::errors::error_value;
use crate::given::Given;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::Array;
use extendr_api::prelude::*;
use extendr_ffi::{
    R_ClearExternalPtr, R_ExternalPtrAddr, R_MakeExternalPtr, R_NilValue, R_RegisterCFinalizerEx,
    Rboolean, SEXP,
};
use rdarrow_arrow::files::ipc::into_ffi_stream;
use rdarrow_arrow::files::ipc::IpcCompression;
use rdarrow_arrow::files::ipc::IpcFormat;
use rdarrow_arrow::files::parquet_layout::ParquetCompression;
use rdarrow_arrow::files::parquet_layout::ParquetOptions;
use rdarrow_arrow::check_sink_name;
use rdarrow_arrow::convert_to_file;
use rdarrow_arrow::DataFileKind;
use rdarrow_arrow::FileOutput;
use rdarrow_arrow::read_table;
use rdarrow_arrow::ArrowTable;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ReadOptions;

/// Finalizer: release the stream if no consumer took it, then free it.
extern "C" fn release_stream(x: SEXP) {
    unsafe {
        let p = R_ExternalPtrAddr(x) as *mut FFI_ArrowArrayStream;
        if !p.is_null() {
            // Drop calls `release` only if it is still set (not moved out).
            drop(Box::from_raw(p));
            R_ClearExternalPtr(x);
        }
    }
}

pub struct Request {
    pub object: Option<String>,
    pub col_select: Option<Vec<ColumnRef>>,
    pub chunk_size: Option<usize>,
    pub default_tz: Option<String>,
    /// The name of an RDS stream's one object (the file's base name).
    pub stream_name: String,
}

pub fn request(
    object: &Robj,
    col_select: &Robj,
    chunk_size: &Robj,
    default_tz: &str,
    stream_name: &str,
) -> std::result::Result<Request, Error> {
    let object = if object.is_null() {
        None
    } else {
        object.as_str().map(|s| s.to_string())
    };
    let col_select = if col_select.is_null() {
        None
    } else if let Some(v) = col_select.as_str_vector() {
        Some(v.iter().map(|s| ColumnRef::Name(s.to_string())).collect())
    } else if let Some(v) = col_select.as_real_vector() {
        Some(v.iter().map(|&p| ColumnRef::Position(p as usize)).collect())
    } else if let Some(v) = col_select.as_integer_vector() {
        Some(
            v.iter()
                .map(|&p| ColumnRef::Position(p.max(0) as usize))
                .collect(),
        )
    } else {
        return Err(Error::usage(
            "`col_select` must be column names or positions",
        ));
    };
    let chunk_size = if chunk_size.is_null() {
        None
    } else {
        chunk_size.as_real().map(|c| c as usize)
    };
    let default_tz = (!default_tz.is_empty()).then(|| default_tz.to_string());
    Ok(Request {
        object,
        col_select,
        chunk_size,
        default_tz,
        stream_name: stream_name.to_string(),
    })
}

pub fn make_table(
    path: &Given,
    req: &Request,
    read: ReadOptions,
) -> std::result::Result<(String, ArrowTable), Error> {
    let opts = TableOptions {
        col_select: req.col_select.clone(),
        chunk_size: req.chunk_size,
        default_tz: req.default_tz.clone(),
        ..Default::default()
    };
    read_table(path, req.object.as_deref(), &req.stream_name, opts, read)
}

/// The addresses of the first data buffer of each column (for checking
/// that consumers see the producer's memory).
fn buffer_addresses(table: &ArrowTable) -> Vec<f64> {
    match table.batches.first() {
        Some(b) => b
            .columns()
            .iter()
            .map(|c| {
                let d = c.to_data();
                let i = if d.buffers().len() > 1 { 1 } else { 0 };
                d.buffers()
                    .get(i)
                    .map(|b| b.as_ptr() as usize as f64)
                    .unwrap_or(f64::NAN)
            })
            .collect(),
        None => Vec::new(),
    }
}

/// Convert an object of a file to an Arrow C stream in an external pointer.
/// Returns list(stream, object, nrow, schema, addresses) or an error value.
pub fn to_arrow(
    path: &Given,
    object: Robj,
    col_select: Robj,
    chunk_size: Robj,
    default_tz: &str,
    stream_name: &str,
    settings: Robj,
) -> Robj {
    let req = match request(&object, &col_select, &chunk_size, default_tz, stream_name) {
        Ok(r) => r,
        Err(e) => return error_value(&e),
    };
    let read = crate::settings::options(&settings);
    if let Some(rows) = req.chunk_size {
        return to_arrow_streamed(path, &req, rows, read);
    }
    let res = crate::job::read("Converting", path, &read, &mut || {}, |read| {
        make_table(path, &req, read.clone())
    });
    let (name, table) = match res {
        Ok(x) => x,
        Err(e) => return error_value(&e),
    };
    let nrow = table.num_rows() as f64;
    let schema: Vec<String> = table
        .schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    let addresses = buffer_addresses(&table);
    let warnings = table.warnings.clone();
    let shape = rdarrow_arrow::metadata::document::object_shape(&table.schema);
    let stream = Box::new(into_ffi_stream(table));
    list!(
        stream = stream_xptr(stream),
        object = name,
        nrow = nrow,
        schema = schema,
        addresses = addresses,
        warnings = warnings,
        shape = shape
    )
    .into()
}

/// As [`to_arrow`], the stream made batch by batch (`rows` rows each) as
/// the consumer reads it: a data frame's values are read back from the
/// file for each batch (a compressed file's stream spilled to the
/// temporary folder, removed at once), so memory holds about one batch.
fn to_arrow_streamed(path: &Given, req: &Request, rows: usize, read: ReadOptions) -> Robj {
    if rows == 0 {
        return error_value(&Error::usage("`chunk_size` must be at least 1"));
    }
    let opts = TableOptions {
        col_select: req.col_select.clone(),
        default_tz: req.default_tz.clone(),
        ..Default::default()
    };
    let res = crate::job::run("Converting", || {
        rdarrow_arrow::open_table(
            path,
            req.object.as_deref(),
            &req.stream_name,
            opts,
            read,
            &std::env::temp_dir(),
            Some(rows),
            rdarrow_arrow::DEFAULT_MEMORY,
            None,
        )
    });
    let t = match res {
        Ok(t) => t,
        Err(e) => return error_value(&e),
    };
    let schema: Vec<String> = t
        .source
        .schema()
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    let nrow = t.source.num_rows() as f64;
    let warnings = t.source.warnings();
    let shape = rdarrow_arrow::metadata::document::object_shape(&t.source.schema());
    let stream = Box::new(rdarrow_arrow::files::ipc::streamed_ffi_stream(
        t.source,
        t.group_rows,
    ));
    list!(
        stream = stream_xptr(stream),
        object = t.name,
        nrow = nrow,
        schema = schema,
        addresses = Vec::<f64>::new(),
        warnings = warnings,
        shape = shape
    )
    .into()
}

/// The stream `x` (an external pointer, consumed) with its tensor columns
/// as their storage, for arrow R ([`rdarrow_arrow::mapping::shape::storage_schema`]):
/// the same arrays, no copy.
pub fn storage_types(x: &Robj) -> Robj {
    use arrow_array::ffi_stream::RecordBatchStreamReader;
    use arrow_array::RecordBatchReader;
    let p = unsafe { R_ExternalPtrAddr(x.get()) as *mut FFI_ArrowArrayStream };
    if p.is_null() {
        return error_value(&Error::usage("the Arrow stream pointer is NULL"));
    }
    let reader = match unsafe { RecordBatchStreamReader::from_raw(p) } {
        Ok(r) => r,
        Err(e) => return error_value(&Error::corrupt(format!("cannot read the Arrow stream: {e}"))),
    };
    let schema = rdarrow_arrow::mapping::shape::storage_schema(&reader.schema());
    let out = schema.clone();
    let batches = reader.map(move |b| {
        b.and_then(|b| {
            arrow_array::RecordBatch::try_new_with_options(
                out.clone(),
                b.columns().to_vec(),
                &arrow_array::RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
            )
        })
    });
    let reader = arrow_array::RecordBatchIterator::new(batches, schema);
    stream_xptr(Box::new(FFI_ArrowArrayStream::new(Box::new(reader))))
}

/// The stream in an external pointer that releases it when R frees it.
fn stream_xptr(stream: Box<FFI_ArrowArrayStream>) -> Robj {
    unsafe {
        let s = R_MakeExternalPtr(Box::into_raw(stream) as *mut _, R_NilValue, R_NilValue);
        let robj = Robj::from_sexp(s);
        R_RegisterCFinalizerEx(s, Some(release_stream), Rboolean::TRUE);
        robj
    }
}

/// Write an object of a file as an Arrow IPC file or stream; returns the
/// conversion's warnings (a character vector) or an error value.
#[allow(clippy::too_many_arguments)]
pub fn to_ipc(
    path: &Given,
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
    let (fmt, comp) = match (
        IpcFormat::from_name(format),
        IpcCompression::from_name(compression),
    ) {
        (Ok(f), Ok(c)) => (f, c),
        (Err(e), _) | (_, Err(e)) => return error_value(&e),
    };
    let req = request(&object, &col_select, &chunk_size, default_tz, stream_name);
    let out = req
        .as_ref()
        .map(|r| FileOutput::Ipc {
            format: fmt,
            compression: comp,
            rows: r.chunk_size,
        })
        .map_err(Clone::clone);
    write_file(
        path,
        sink,
        req,
        out,
        DataFileKind::Ipc,
        "rdata_to_parquet()",
        memory,
        settings,
        "Writing Arrow IPC",
    )
}

/// Write an object of a file as Parquet; returns the conversion's
/// warnings or an error value.
#[allow(clippy::too_many_arguments)]
pub fn to_parquet(
    path: &Given,
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
    let req = request(
        &object,
        &col_select,
        &row_group_size,
        default_tz,
        stream_name,
    );
    let out = (|| {
        let compression = ParquetCompression::parse(compression)?;
        let level = if level.is_null() {
            None
        } else {
            level.as_real().map(|l| l as i32)
        };
        let rows = req.as_ref().map_err(Clone::clone)?.chunk_size;
        Ok(FileOutput::Parquet(ParquetOptions {
            compression,
            level,
            row_group_rows: rows,
            ..Default::default()
        }))
    })();
    write_file(
        path,
        sink,
        req,
        out,
        DataFileKind::Parquet,
        "rdata_to_ipc()",
        memory,
        settings,
        "Writing Parquet",
    )
}

/// Convert one object of `path` into `sink` as `out` says, row group by
/// row group within `memory` bytes.
#[allow(clippy::too_many_arguments)]
fn write_file(
    path: &Given,
    sink: &str,
    req: Result<Request, Error>,
    out: Result<FileOutput, Error>,
    kind: DataFileKind,
    other_function: &str,
    memory: f64,
    settings: Robj,
    what: &str,
) -> Robj {
    let read = crate::settings::options(&settings);
    let sink = std::path::Path::new(sink);
    let memory = if memory > 0.0 {
        memory as u64
    } else {
        rdarrow_arrow::DEFAULT_MEMORY
    };
    let res = crate::job::run(what, || {
        check_sink_name(sink, kind, other_function)?;
        let (req, out) = (req?, out?);
        let opts = TableOptions {
            col_select: req.col_select.clone(),
            default_tz: req.default_tz.clone(),
            ..Default::default()
        };
        convert_to_file(
            path,
            req.object.as_deref(),
            &req.stream_name,
            opts,
            read,
            sink,
            &out,
            memory,
        )
        .map(|(_, _, w)| w)
    });
    match res {
        Ok(warnings) => warnings.into(),
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
    let path = match crate::given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    to_arrow(
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
    storage_types(&x)
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
    let path = match crate::given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    to_ipc(
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
    let path = match crate::given::Given::of(&path) {
        Ok(g) => g,
        Err(e) => return error_value(&e),
    };
    to_parquet(
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

/// Build an R data frame from an Arrow C stream.
/// @noRd
#[extendr]
fn stream_to_df_impl(x: Robj) -> Robj {
    crate::from_arrow::stream_to_df(&x)
}

/// An empty ArrowArrayStream struct for producers to export into.
/// @noRd
#[extendr]
fn new_stream_impl() -> Robj {
    crate::from_arrow::new_stream()
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

extendr_module! {
    mod arrow;
    fn rdata_to_arrow_impl;
    fn stream_storage_types_impl;
    fn rdata_to_ipc_impl;
    fn rdata_to_parquet_impl;
    fn stream_is_live_impl;
    fn stream_to_df_impl;
    fn new_stream_impl;
    fn expect_file_kind_impl;
}
