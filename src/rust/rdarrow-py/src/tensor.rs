//! Tensors: an R array as an Arrow Tensor message.

use pyo3::prelude::*;
use std::path::PathBuf;
use crate::given::Given;
use crate::errors::*;
use crate::options::*;

/// One R array of an R data file as an Arrow Tensor message at `sink`
/// (the Arrow bridge's `tensor::rdata_to_tensor`), or, without a sink, as
/// an [`crate::values::RTensor`] over the engine's buffer. Returns the object's
/// name and the tensor (`None` when written).
#[pyfunction]
#[pyo3(signature = (path, sink=None, object=None, storage=None))]
pub(crate) fn to_tensor(
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
            let t = crate::values::RTensor::of(py, &obj, &doc.refs)?;
            Ok((name, Some(pyo3::IntoPyObjectExt::into_py_any(t, py)?)))
        }
    }
}
