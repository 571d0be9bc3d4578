//! Tensors: an R array as an Arrow Tensor message.

use pyo3::prelude::*;
use std::path::PathBuf;
use crate::given::Given;
use crate::errors::*;
use crate::options::*;

/// One R array of an R data file as an Arrow Tensor message at `sink`
/// (the Arrow bridge's `tensor::rdata_to_tensor`), or, without a sink, as
/// an [`crate::values::RTensor`] over the engine's buffer; salvaging
/// where `salvage` says so. Returns the object's name, the tensor (`None`
/// when written) and what a salvaging read of a damaged file lost.
#[pyfunction]
#[pyo3(signature = (path, sink=None, object=None, storage=None, salvage=false))]
pub(crate) fn to_tensor(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    sink: Option<PathBuf>,
    object: Option<String>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<(String, Option<Py<PyAny>>, Option<String>)> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let read = salvaging(&storage, salvage);
    match sink {
        Some(sink) => {
            let t = py
                .detach(|| {
                    rdarrow_arrow::files::tensor::rdata_to_tensor(&path, object.as_deref(), &stream_name, read, &sink)
                })
                .map_err(|e| in_source(&path.label(), e))?;
            Ok((t.name, None, t.damage))
        }
        None => {
            let (name, doc, obj) = py
                .detach(|| {
                    rdarrow_arrow::files::tensor::array_of_file(&path, object.as_deref(), &stream_name, read)
                })
                .map_err(|e| in_source(&path.label(), e))?;
            let t = crate::values::RTensor::of(py, &obj, &doc.refs)?;
            let damage = doc.damage_for(&name);
            Ok((name, Some(pyo3::IntoPyObjectExt::into_py_any(t, py)?), damage))
        }
    }
}
