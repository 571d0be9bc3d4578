//! Reading: an object's table as an Arrow C stream; R objects as Python
//! values.

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use rdarrow_arrow::read_table;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::Error;
use crate::given::Given;
use crate::errors::*;
use crate::options::*;
use crate::streams::*;

/// One object of an R data file as an Arrow C stream in a PyCapsule
/// (`"arrow_array_stream"`), its record batches the buffers the engine
/// decoded (no copy), with the conversion's warnings.
#[pyfunction]
#[pyo3(signature = (path, object=None, columns=None, chunk_size=None, time_unit=None, storage=None, salvage=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_stream<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    object: Option<String>,
    columns: Option<Vec<String>>,
    chunk_size: Option<usize>,
    time_unit: Option<&str>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(
    Bound<'py, PyCapsule>,
    String,
    Vec<String>,
    Vec<Vec<usize>>,
    Py<PyAny>,
    Option<String>,
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
            salvaging_here_or(&path, &storage, salvage, |read| {
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
    // the data frame's own row names (not 1..n) and the name of the pandas
    // index they came from, for a pandas index
    let row_names = crate::values::frame_row_names(py, &table.schema)?;
    let index_name = crate::values::frame_index_name(&table.schema)?;
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
    Ok((capsule, name, warnings, addresses, row_names, index_name))
}

/// The objects of an R data file (all, or those named) as Python values
/// (see `values`: shaped for NumPy and pandas, or `plain`), by name, with
/// the kinds of objects that had no value (they are `None`), and what a
/// salvaging read of a damaged file lost.
#[pyfunction]
#[pyo3(signature = (path, names=None, storage=None, plain=false, tensors=false, salvage=false))]
pub(crate) fn read_objects<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    names: Option<Vec<String>>,
    storage: Option<Vec<(String, String)>>,
    plain: bool,
    tensors: bool,
    salvage: bool,
) -> PyResult<(Bound<'py, PyDict>, Vec<String>, Option<String>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let (doc, objects) = py
        .detach(|| {
            salvaging_here_or(&path, &storage, salvage, |opts| {
                rdarrow_arrow::read_for_r(&path, names.as_deref(), &stream_name, opts)
            })
        })
        .map_err(|e| in_source(&path.label(), e))?;
    let mut conv = crate::values::ToPython {
        refs: &doc.refs,
        native: doc.header.native_encoding.as_deref(),
        dropped: Default::default(),
        shape: if plain {
            crate::values::Shape::Plain
        } else {
            crate::values::Shape::NumPy
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
    Ok((out, conv.dropped.into_iter().collect(), doc.damage.clone()))
}
