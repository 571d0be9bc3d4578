//! Engine errors as Python exceptions: their classes, and the message
//! that says which file or object.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use rdarrow_arrow::Error;
use rdarrow_arrow::ErrorKind;

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
    let msg = rdarrow_arrow::read::salvage::hint_as(&e.to_string(), "salvage=True");
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
pub(crate) fn in_file(path: &std::path::Path, e: Error) -> PyErr {
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

/// A Python error raised while object `name` was made, naming it.
pub(crate) fn in_object_py(py: Python<'_>, name: &str, e: PyErr) -> PyErr {
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
