//! Listing: the objects of sources, object paths, what a source is.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use crate::given::Given;
use crate::errors::*;
use crate::options::*;

/// The R data sources one argument names (see the core's
/// `expand_sources`): a glob's matches, a directory's or an object store
/// prefix's R data files, else the argument itself.
#[pyfunction]
#[pyo3(signature = (given, storage=None))]
pub(crate) fn expand_sources(
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

/// The objects of an R data file, without decoding their values: one dict
/// per object (name, class, type, length, rows, columns, bytes); with
/// `recursive`, what lists hold too, named by object path.
#[pyfunction]
#[pyo3(signature = (path, recursive=false, storage=None, salvage=false))]
pub(crate) fn list_objects<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    recursive: bool,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(Bound<'py, PyList>, Option<String>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let (doc, infos) = py
        .detach(|| {
            salvaging_here_or(&path, &storage, salvage, |opts| {
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
    Ok((out, doc.damage))
}

/// The object path (`lst$a[[2]]`) of `parts`: the top-level object's
/// name, then names (str) and positions from 1 (int).
#[pyfunction]
pub(crate) fn object_path(parts: Vec<Bound<'_, PyAny>>) -> PyResult<String> {
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

/// Whether a file written at `path` is an `.rds` (else an `.RData`): the
/// engine's one rule.
#[pyfunction]
pub(crate) fn path_is_rds(path: &str) -> bool {
    rdarrow_arrow::path_is_rds(path)
}

/// The name an object read from, or saved without a name to, `source`
/// takes: the engine's one rule.
#[pyfunction]
pub(crate) fn object_name_of(source: &str) -> String {
    rdarrow_arrow::object_name_of(source)
}

/// Where `given` is: "http", "store" or "local" (the engine's one rule).
#[pyfunction]
pub(crate) fn location_of(given: &str) -> &'static str {
    rdarrow_arrow::location_of(given).name()
}
