//! Arrow files: an R object's table written as Parquet or Arrow IPC.

use pyo3::prelude::*;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use std::path::PathBuf;
use crate::given::Given;
use crate::errors::*;
use crate::options::*;

/// Convert one object of an R data file to a Parquet or Arrow IPC file,
/// row group by row group within `memory` bytes (see the core's
/// `convert_to_file`): the object's name, its rows and the warnings.
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    sink: PathBuf,
    object: Option<String>,
    columns: Option<Vec<String>>,
    out: rdarrow_arrow::FileOutput,
    kind: rdarrow_arrow::DataFileKind,
    other_function: &str,
    memory: Option<u64>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(String, usize, Vec<String>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let opts = TableOptions {
        col_select: columns.map(|c| c.into_iter().map(ColumnRef::Name).collect()),
        default_tz: rdarrow_arrow::session_zone(),
        ..Default::default()
    };
    py.detach(|| {
        rdarrow_arrow::check_sink_name(&sink, kind, other_function)?;
        rdarrow_arrow::convert_to_file(
            &path,
            object.as_deref(),
            &stream_name,
            opts,
            salvaging(&storage, salvage),
            &sink,
            &out,
            memory.unwrap_or(rdarrow_arrow::DEFAULT_MEMORY),
        )
    })
    .map_err(|e| in_source(&path.label(), e))
}

/// One object of an R data file as a Parquet file.
#[pyfunction]
#[pyo3(signature = (path, sink, object=None, columns=None, compression="zstd", level=None, row_group_size=None, memory=None, storage=None, salvage=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn to_parquet(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    sink: PathBuf,
    object: Option<String>,
    columns: Option<Vec<String>>,
    compression: &str,
    level: Option<i32>,
    row_group_size: Option<usize>,
    memory: Option<u64>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(String, usize, Vec<String>)> {
    use rdarrow_arrow::files::parquet_layout::ParquetCompression;
    use rdarrow_arrow::files::parquet_layout::ParquetOptions;
    let compression = ParquetCompression::parse(compression).map_err(py_err)?;
    let out = rdarrow_arrow::FileOutput::Parquet(ParquetOptions {
        compression,
        level,
        row_group_rows: row_group_size,
        ..Default::default()
    });
    let kind = rdarrow_arrow::DataFileKind::Parquet;
    convert(
        py, path, sink, object, columns, out, kind, "to_ipc()", memory, storage, salvage,
    )
}

/// One object of an R data file as an Arrow IPC file or stream.
#[pyfunction]
#[pyo3(signature = (path, sink, object=None, columns=None, format="file", compression="uncompressed", chunk_size=None, memory=None, storage=None, salvage=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn to_ipc(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    sink: PathBuf,
    object: Option<String>,
    columns: Option<Vec<String>>,
    format: &str,
    compression: &str,
    chunk_size: Option<usize>,
    memory: Option<u64>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(String, usize, Vec<String>)> {
    use rdarrow_arrow::files::ipc::IpcCompression;
    use rdarrow_arrow::files::ipc::IpcFormat;
    let out = rdarrow_arrow::FileOutput::Ipc {
        format: IpcFormat::from_name(format).map_err(py_err)?,
        compression: IpcCompression::from_name(compression).map_err(py_err)?,
        rows: chunk_size,
    };
    let kind = rdarrow_arrow::DataFileKind::Ipc;
    convert(
        py,
        path,
        sink,
        object,
        columns,
        out,
        kind,
        "to_parquet()",
        memory,
        storage,
        salvage,
    )
}
