//! Python bindings of the rdarrow engine: argument conversion, the Arrow C
//! stream handed over as a PyCapsule (`__arrow_c_stream__`), and engine
//! errors as Python exceptions. Every decision (which object, which type,
//! which limit, what an error says) is the core's; the Python package
//! (`python/rdarrow`) checks arguments and carries the documentation.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::SchemaRef;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyList};
use rdarrow_arrow::read_table;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::Error;
use rdarrow_arrow::ErrorKind;
use rdarrow_arrow::ReadOptions;
use std::path::PathBuf;

mod given;
mod make;
mod scan;
mod values;

use given::Given;

create_exception!(
    _rdarrow,
    RDataError,
    PyException,
    "An R data file could not be read or written."
);
create_exception!(
    _rdarrow,
    RDataIOError,
    RDataError,
    "The file could not be opened, read or written."
);
create_exception!(
    _rdarrow,
    NotRDataError,
    RDataError,
    "The bytes are not R data."
);
create_exception!(
    _rdarrow,
    CorruptError,
    RDataError,
    "The file is truncated or malformed."
);
create_exception!(
    _rdarrow,
    UnsupportedError,
    RDataError,
    "Valid R data that this operation cannot provide."
);
create_exception!(
    _rdarrow,
    LimitError,
    RDataError,
    "A limit that protects the process was reached."
);
create_exception!(
    _rdarrow,
    UsageError,
    RDataError,
    "The call asked for something that is not there."
);
create_exception!(
    _rdarrow,
    UnsafeError,
    RDataError,
    "The file holds code where R keeps none (a promise outside an environment's frame)."
);

/// The Python exception of an engine error: its class says what kind of
/// failure it is, its message what went wrong and where.
pub(crate) fn py_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e.kind {
        ErrorKind::Io => RDataIOError::new_err(msg),
        ErrorKind::NotRData => NotRDataError::new_err(msg),
        ErrorKind::Truncated | ErrorKind::Corrupt => CorruptError::new_err(msg),
        ErrorKind::Unsupported => UnsupportedError::new_err(msg),
        ErrorKind::Limit => LimitError::new_err(msg),
        ErrorKind::Usage => UsageError::new_err(msg),
        ErrorKind::Unsafe => UnsafeError::new_err(msg),
        ErrorKind::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
        ErrorKind::Internal => RDataError::new_err(msg),
    }
}

/// An error message that names the file, as the command line's do.
fn in_file(path: &std::path::Path, e: Error) -> PyErr {
    in_source(&path.display().to_string(), e)
}

/// An error message that names what was read (`label`).
pub(crate) fn in_source(label: &str, e: Error) -> PyErr {
    if e.message.contains(label) {
        py_err(e)
    } else {
        py_err(Error {
            message: format!("{label}: {}", e.message),
            ..e
        })
    }
}

/// Whether a file written at `path` is an `.rds` (else an `.RData`): the
/// engine's one rule.
#[pyfunction]
fn path_is_rds(path: &str) -> bool {
    rdarrow_arrow::path_is_rds(path)
}

/// The name an object read from, or saved without a name to, `source`
/// takes: the engine's one rule.
#[pyfunction]
fn object_name_of(source: &str) -> String {
    rdarrow_arrow::object_name_of(source)
}

/// Where `given` is: "http", "store" or "local" (the engine's one rule).
#[pyfunction]
fn location_of(given: &str) -> &'static str {
    rdarrow_arrow::location_of(given).name()
}

/// Check a writer's compression name and level for a file at `path` by
/// the engine's one rule (`compression_for_path`: R's compressions, or a
/// .qs2/.qdata file's container), raising its message.
#[pyfunction]
#[pyo3(signature = (compress, level=None, path=""))]
fn check_compression(compress: &str, level: Option<i64>, path: &str) -> PyResult<()> {
    rdarrow_arrow::compression_for_path(path, compress, level).map_err(py_err)?;
    Ok(())
}

/// The object path (`lst$a[[2]]`) of `parts`: the top-level object's
/// name, then names (str) and positions from 1 (int).
#[pyfunction]
fn object_path(parts: Vec<Bound<'_, PyAny>>) -> PyResult<String> {
    use rdarrow_arrow::tree::object_path::ObjectPath;
    use rdarrow_arrow::tree::object_path::Step;
    let mut it = parts.iter();
    let top: String = it
        .next()
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("an object path needs a name"))?
        .extract()
        .map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("an object path starts with a name (str)")
        })?;
    let mut steps = Vec::new();
    for p in it {
        if let Ok(n) = p.extract::<String>() {
            steps.push(Step::Name(n));
        } else if let Ok(i) = p.extract::<i64>() {
            if i < 1 || p.is_instance_of::<pyo3::types::PyBool>() {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "positions in an object path count from 1",
                ));
            }
            steps.push(Step::Position(i as usize));
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "an object path's parts are names (str) and positions (int)",
            ));
        }
    }
    Ok(ObjectPath { top, steps }.display())
}

/// Run the read `work` of `path` with the default options: a small file's
/// on this thread, as the engine rules ([`rdarrow_arrow::read_small_here`]).
fn small_here_or<T>(
    path: &Given,
    storage: &Option<Vec<(String, String)>>,
    work: impl Fn(&ReadOptions) -> rdarrow_arrow::Result<T>,
) -> rdarrow_arrow::Result<T> {
    rdarrow_arrow::read_small_here_or(path, &read_options(storage), work)
}

/// The default read options, with an object store's `storage` options
/// (credentials, endpoint, region, ... as `object_store` names them).
pub(crate) fn read_options(storage: &Option<Vec<(String, String)>>) -> ReadOptions {
    ReadOptions {
        storage: storage_of(storage),
        ..Default::default()
    }
}

fn storage_of(storage: &Option<Vec<(String, String)>>) -> rdarrow_arrow::StorageOptions {
    rdarrow_arrow::StorageOptions::new(storage.clone().unwrap_or_default())
}

/// The objects of an R data file, without decoding their values: one dict
/// per object (name, class, type, length, rows, columns, bytes); with
/// `recursive`, what lists hold too, named by object path.
#[pyfunction]
#[pyo3(signature = (path, recursive=false, storage=None))]
fn list_objects<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    recursive: bool,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<Bound<'py, PyList>> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let (_, infos) = py
        .detach(|| {
            small_here_or(&path, &storage, |opts| {
                rdarrow_arrow::list_file(&path, opts, &stream_name, recursive)
            })
        })
        .map_err(|e| in_source(&path.label(), e))?;
    let out = PyList::empty(py);
    for i in infos {
        let d = PyDict::new(py);
        d.set_item("name", i.name)?;
        d.set_item("class", i.class.split('/').collect::<Vec<_>>())?;
        d.set_item("type", i.type_name)?;
        let whole = |x: Option<f64>| x.map(|v| v as i64);
        d.set_item("length", whole(i.length))?;
        d.set_item("rows", whole(i.nrow))?;
        d.set_item("columns", whole(i.ncol))?;
        d.set_item("bytes", i.bytes)?;
        out.append(d)?;
    }
    Ok(out)
}

/// One object of an R data file as an Arrow C stream in a PyCapsule
/// (`"arrow_array_stream"`), its record batches the buffers the engine
/// decoded (no copy), with the conversion's warnings.
#[pyfunction]
#[pyo3(signature = (path, object=None, columns=None, chunk_size=None, time_unit=None, storage=None))]
fn read_stream<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    object: Option<String>,
    columns: Option<Vec<String>>,
    chunk_size: Option<usize>,
    time_unit: Option<&str>,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<(
    Bound<'py, PyCapsule>,
    String,
    Vec<String>,
    Vec<Vec<usize>>,
    Py<PyAny>,
)> {
    use arrow_schema::TimeUnit;
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let time_unit = match time_unit {
        None => None,
        Some("s") => Some(TimeUnit::Second),
        Some("ms") => Some(TimeUnit::Millisecond),
        Some("us") => Some(TimeUnit::Microsecond),
        Some("ns") => Some(TimeUnit::Nanosecond),
        Some(other) => {
            return Err(py_err(Error::usage(format!(
                "unknown time unit '{other}' (use \"s\", \"ms\", \"us\" or \"ns\")"
            ))))
        }
    };
    let opts = TableOptions {
        col_select: columns.map(|c| c.into_iter().map(ColumnRef::Name).collect()),
        chunk_size: chunk_size.filter(|&n| n > 0),
        default_tz: rdarrow_arrow::session_zone(),
        time_unit,
        ..Default::default()
    };
    let (name, table) = py
        .detach(|| {
            small_here_or(&path, &storage, |read| {
                read_table(
                    &path,
                    object.as_deref(),
                    &stream_name,
                    opts.clone(),
                    read.clone(),
                )
            })
        })
        .map_err(|e| in_source(&path.label(), e))?;
    let warnings = table.warnings.clone();
    // the data frame's own row names (not 1..n), for a pandas index
    let row_names = values::frame_row_names(py, &table.schema)?;
    // where the first batch's buffers lie, for the test that the consumer
    // sees these very buffers (no copy)
    let addresses: Vec<Vec<usize>> = table
        .batches
        .first()
        .map(|b| {
            b.columns()
                .iter()
                .map(|c| {
                    c.to_data()
                        .buffers()
                        .iter()
                        .map(|x| x.as_ptr() as usize)
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default();
    let capsule = stream_capsule(py, table.batches, table.schema)?;
    Ok((capsule, name, warnings, addresses, row_names))
}

/// Record batches as an Arrow C stream in a PyCapsule
/// (`"arrow_array_stream"`), handed over without a copy.
pub(crate) fn stream_capsule(
    py: Python<'_>,
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
) -> PyResult<Bound<'_, PyCapsule>> {
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(RecordBatchIterator::new(
        batches.into_iter().map(Ok),
        schema,
    ));
    PyCapsule::new_with_value(py, FFI_ArrowArrayStream::new(reader), c"arrow_array_stream")
}

/// The record batches of an Arrow C stream capsule (`__arrow_c_stream__`
/// of pyarrow, Polars, DuckDB, ...), moved out of the capsule; read with
/// the GIL held, as a stream made in Python may call back into it.
pub(crate) fn import_stream(
    capsule: &Bound<'_, PyCapsule>,
) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let name = capsule.name()?;
    // SAFETY: the name, when set, is a NUL-terminated string of the capsule's
    let named = name.is_some_and(|n| unsafe { n.as_cstr() } == c"arrow_array_stream");
    if !named {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "expected an Arrow C stream (a PyCapsule named 'arrow_array_stream')",
        ));
    }
    let ptr = capsule
        .pointer_checked(Some(c"arrow_array_stream"))?
        .as_ptr() as *mut FFI_ArrowArrayStream;
    // SAFETY: a live ArrowArrayStream, moved out (its release left empty)
    let reader = unsafe { RecordBatchStreamReader::from_raw(ptr) }
        .map_err(|e| py_err(Error::usage(format!("cannot read the Arrow stream: {e}"))))?;
    let schema = reader.schema();
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| py_err(Error::corrupt(format!("cannot read the Arrow stream: {e}"))))?;
    Ok((schema, batches))
}

/// Write Python values as one R data file: each `(name, value)` becomes an
/// R object saved under its name as `save()` would (`rds`: the one object
/// as `saveRDS()` would). A value is an Arrow C stream capsule (a table:
/// a data frame, or what the `"r"` metadata says it was) or a node of the
/// Python package's value table (see [`make`]).
#[pyfunction]
#[pyo3(signature = (objects, path, rds=false, compress="gzip", level=None, version=3, threads=None, storage=None))]
#[allow(clippy::too_many_arguments)]
fn write_rdata(
    py: Python<'_>,
    objects: Vec<(String, Bound<'_, PyAny>)>,
    path: PathBuf,
    rds: bool,
    compress: &str,
    level: Option<i64>,
    version: i32,
    threads: Option<usize>,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<()> {
    let (compression, level) =
        rdarrow_arrow::compression_for_path(&path.to_string_lossy(), compress, level).map_err(py_err)?;
    rdarrow_arrow::wire::header::check_version(version).map_err(py_err)?;
    enum Given {
        Table(SchemaRef, Vec<RecordBatch>),
        Made(rdarrow_arrow::tree::RObject),
    }
    let mut m = rdarrow_arrow::tree::make::ObjectMaker::default();
    let mut given = Vec::with_capacity(objects.len());
    for (name, value) in &objects {
        let g = match value.cast::<PyCapsule>() {
            Ok(c) => {
                let (schema, batches) = import_stream(c)?;
                Given::Table(schema, batches)
            }
            Err(_) => {
                let obj = make::FromPython::new(&mut m)
                    .object(value, 0)
                    .map_err(|e| in_object_py(py, name, e))?;
                rdarrow_arrow::checks::validate::check_for_r(&obj, &m.refs)
                    .map_err(|e| py_err(e.in_object(name)))?;
                Given::Made(obj)
            }
        };
        given.push((name.clone(), g));
    }
    drop(objects);
    let o = rdarrow_arrow::write::ObjectFileOptions {
        compression,
        level,
        version,
        rds,
        threads: threads.unwrap_or_else(rdarrow_arrow::batches::rows::all_cores),
        storage: storage_of(&storage),
        ..Default::default()
    };
    py.detach(|| {
        let mut made = Vec::with_capacity(given.len());
        for (name, g) in given {
            let obj = match g {
                Given::Table(schema, batches) => {
                    rdarrow_arrow::from_arrow::frame::object_with(&mut m, &schema, &batches)
                        .map_err(|e| e.in_object(&name))?
                }
                Given::Made(obj) => obj,
            };
            made.push((name, obj));
        }
        rdarrow_arrow::write::write_objects_file(&path, made, m.refs, &o)
    })
    .map_err(|e| in_file(&path, e))
}

/// The command line (the `rdarrow` program of the `rdarrow-cli` crate) run
/// on `argv`, with the interpreter free: its exit status, or the name of a
/// command of the Python package's (`host`: name and help line) for
/// Python to run.
#[pyfunction]
fn command_line(
    py: Python<'_>,
    argv: Vec<String>,
    host: Vec<(String, String)>,
) -> (u8, Option<String>) {
    // the help's lines live as long as the program (a handful, once per run)
    let host: Vec<rdarrow_cli::HostCommand> = host
        .into_iter()
        .map(|(n, a)| rdarrow_cli::HostCommand {
            name: Box::leak(n.into_boxed_str()),
            about: Box::leak(a.into_boxed_str()),
        })
        .collect();
    let args = argv.into_iter().map(std::ffi::OsString::from).collect();
    match py.detach(|| rdarrow_cli::run(args, &host)) {
        rdarrow_cli::Ran::Exit(code) => (code, None),
        rdarrow_cli::Ran::Host(name) => (0, Some(name)),
    }
}

/// A Python error raised while object `name` was made, naming it.
fn in_object_py(py: Python<'_>, name: &str, e: PyErr) -> PyErr {
    if name.is_empty() {
        return e;
    }
    let msg = format!("object '{name}': {}", e.value(py));
    let kind = e.get_type(py);
    match kind.call1((msg,)) {
        Ok(v) => PyErr::from_value(v),
        Err(_) => e,
    }
}

/// Convert one object of an R data file to a Parquet or Arrow IPC file,
/// row group by row group within `memory` bytes (see the core's
/// `convert_to_file`): the object's name, its rows and the warnings.
#[allow(clippy::too_many_arguments)]
fn convert(
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
            read_options(&storage),
            &sink,
            &out,
            memory.unwrap_or(rdarrow_arrow::DEFAULT_MEMORY),
        )
    })
    .map_err(|e| in_source(&path.label(), e))
}

/// One object of an R data file as a Parquet file.
#[pyfunction]
#[pyo3(signature = (path, sink, object=None, columns=None, compression="zstd", level=None, row_group_size=None, memory=None, storage=None))]
#[allow(clippy::too_many_arguments)]
fn to_parquet(
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
        py, path, sink, object, columns, out, kind, "to_ipc()", memory, storage,
    )
}

/// One object of an R data file as an Arrow IPC file or stream.
#[pyfunction]
#[pyo3(signature = (path, sink, object=None, columns=None, format="file", compression="uncompressed", chunk_size=None, memory=None, storage=None))]
#[allow(clippy::too_many_arguments)]
fn to_ipc(
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
    )
}

/// One R array of an R data file as an Arrow Tensor message at `sink`
/// (the Arrow bridge's `tensor::rdata_to_tensor`), or, without a sink, as
/// an [`values::RTensor`] over the engine's buffer. Returns the object's
/// name and the tensor (`None` when written).
#[pyfunction]
#[pyo3(signature = (path, sink=None, object=None, storage=None))]
fn to_tensor(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    sink: Option<PathBuf>,
    object: Option<String>,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<(String, Option<Py<PyAny>>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let read = read_options(&storage);
    match sink {
        Some(sink) => {
            let (name, _) = py
                .detach(|| {
                    rdarrow_arrow::files::tensor::rdata_to_tensor(&path, object.as_deref(), &stream_name, read, &sink)
                })
                .map_err(|e| in_source(&path.label(), e))?;
            Ok((name, None))
        }
        None => {
            let (name, doc, obj) = py
                .detach(|| {
                    rdarrow_arrow::files::tensor::array_of_file(&path, object.as_deref(), &stream_name, read)
                })
                .map_err(|e| in_source(&path.label(), e))?;
            let t = values::RTensor::of(py, &obj, &doc.refs)?;
            Ok((name, Some(pyo3::IntoPyObjectExt::into_py_any(t, py)?)))
        }
    }
}

/// The R data sources one argument names (see the core's
/// `expand_sources`): a glob's matches, a directory's or an object store
/// prefix's R data files, else the argument itself.
#[pyfunction]
#[pyo3(signature = (given, storage=None))]
fn expand_sources(
    py: Python<'_>,
    given: &str,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<Vec<String>> {
    let read = read_options(&storage);
    py.detach(|| rdarrow_arrow::expand_sources(given, &read))
        .map(|v| {
            v.into_iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        })
        .map_err(py_err)
}

/// The objects of an R data file (all, or those named) as Python values
/// (see `values`: shaped for NumPy and pandas, or `plain`), by name, with
/// the kinds of objects that had no value (they are `None`).
#[pyfunction]
#[pyo3(signature = (path, names=None, storage=None, plain=false, tensors=false))]
fn read_objects<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    names: Option<Vec<String>>,
    storage: Option<Vec<(String, String)>>,
    plain: bool,
    tensors: bool,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let (doc, objects) = py
        .detach(|| {
            small_here_or(&path, &storage, |opts| {
                rdarrow_arrow::read_for_r(&path, names.as_deref(), &stream_name, opts)
            })
        })
        .map_err(|e| in_source(&path.label(), e))?;
    let mut conv = values::ToPython {
        refs: &doc.refs,
        native: doc.header.native_encoding.as_deref(),
        dropped: Default::default(),
        shape: if plain {
            values::Shape::Plain
        } else {
            values::Shape::NumPy
        },
        doc: Some(&doc),
        path: String::new(),
        tensors,
    };
    let out = PyDict::new(py);
    for (name, obj) in &objects {
        conv.path = rdarrow_arrow::tree::object_path::ObjectPath::top(name).display();
        out.set_item(name, conv.value(py, obj, 0)?)?;
    }
    Ok((out, conv.dropped.into_iter().collect()))
}

#[pymodule]
fn _rdarrow(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(expand_sources, m)?)?;
    m.add_function(wrap_pyfunction!(list_objects, m)?)?;
    m.add_function(wrap_pyfunction!(object_path, m)?)?;
    m.add_function(wrap_pyfunction!(path_is_rds, m)?)?;
    m.add_function(wrap_pyfunction!(check_compression, m)?)?;
    m.add_function(wrap_pyfunction!(object_name_of, m)?)?;
    m.add_function(wrap_pyfunction!(location_of, m)?)?;
    m.add_function(wrap_pyfunction!(read_stream, m)?)?;
    m.add_function(wrap_pyfunction!(read_objects, m)?)?;
    m.add_function(wrap_pyfunction!(scan::open_table, m)?)?;
    m.add_class::<scan::OpenedTable>()?;
    m.add_function(wrap_pyfunction!(write_rdata, m)?)?;
    m.add_function(wrap_pyfunction!(command_line, m)?)?;
    m.add_function(wrap_pyfunction!(to_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(to_ipc, m)?)?;
    m.add_class::<values::Payload>()?;
    m.add_class::<values::RVector>()?;
    m.add_class::<values::RFrame>()?;
    m.add_class::<values::RS4>()?;
    m.add_class::<values::RTensor>()?;
    m.add_function(wrap_pyfunction!(to_tensor, m)?)?;
    m.add("RDataError", py.get_type::<RDataError>())?;
    m.add("RDataIOError", py.get_type::<RDataIOError>())?;
    m.add("NotRDataError", py.get_type::<NotRDataError>())?;
    m.add("CorruptError", py.get_type::<CorruptError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    m.add("UnsafeError", py.get_type::<UnsafeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
