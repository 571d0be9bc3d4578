//! Arrow C streams as PyCapsules, both ways.

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rdarrow_arrow::Error;
use crate::errors::*;

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
