//! Python bindings of the rdarrow engine: argument conversion, the Arrow C
//! stream handed over as a PyCapsule (`__arrow_c_stream__`), and engine
//! errors as Python exceptions. Every decision (which object, which type,
//! which limit, what an error says) is the core's; the Python package
//! (`python/rdarrow`) checks arguments and carries the documentation.

use pyo3::prelude::*;

// The verbs, by job (each registered below).
mod cli;
mod files;
mod list;
mod read;
mod scan;
mod tensor;
mod write;

// What they share: errors, read options, Arrow C streams, the sources
// Python gives, Python values both ways.
mod errors;
mod given;
mod make;
mod options;
mod streams;
mod values;

#[pymodule]
fn _rdarrow(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(list::expand_sources, m)?)?;
    m.add_function(wrap_pyfunction!(list::list_objects, m)?)?;
    m.add_function(wrap_pyfunction!(list::object_path, m)?)?;
    m.add_function(wrap_pyfunction!(list::path_is_rds, m)?)?;
    m.add_function(wrap_pyfunction!(write::check_compression, m)?)?;
    m.add_function(wrap_pyfunction!(list::object_name_of, m)?)?;
    m.add_function(wrap_pyfunction!(list::location_of, m)?)?;
    m.add_function(wrap_pyfunction!(read::read_stream, m)?)?;
    m.add_function(wrap_pyfunction!(read::read_objects, m)?)?;
    m.add_function(wrap_pyfunction!(scan::open_table, m)?)?;
    m.add_class::<scan::OpenedTable>()?;
    m.add_function(wrap_pyfunction!(write::write_rdata, m)?)?;
    m.add_function(wrap_pyfunction!(cli::command_line, m)?)?;
    m.add_function(wrap_pyfunction!(files::to_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(files::to_ipc, m)?)?;
    m.add_class::<values::Payload>()?;
    m.add_class::<values::RVector>()?;
    m.add_class::<values::RFrame>()?;
    m.add_class::<values::RS4>()?;
    m.add_class::<values::RTensor>()?;
    m.add_function(wrap_pyfunction!(tensor::to_tensor, m)?)?;
    m.add("RDataError", py.get_type::<errors::RDataError>())?;
    m.add("RDataIOError", py.get_type::<errors::RDataIOError>())?;
    m.add("NotRDataError", py.get_type::<errors::NotRDataError>())?;
    m.add("CorruptError", py.get_type::<errors::CorruptError>())?;
    m.add("UnsupportedError", py.get_type::<errors::UnsupportedError>())?;
    m.add("LimitError", py.get_type::<errors::LimitError>())?;
    m.add("UsageError", py.get_type::<errors::UsageError>())?;
    m.add("UnsafeError", py.get_type::<errors::UnsafeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
