//! What a Python reader is given, as the engine reads it: a path or URL as
//! it is; bytes (any buffer) in memory; a binary file object (an open
//! file, `io.BytesIO`, an fsspec file, a socket's file, ...) read through
//! its own `readinto()`/`read()` into the engine's buffers, never staged
//! in a temporary file. A seekable file object is read by range where
//! uncompressed (what a listing skips is never read) and from where it
//! stood again when a read needs a second pass; a stream that cannot seek
//! is read once.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};
use rdarrow_arrow::base::error::source_failure as failure;
use rdarrow_arrow::Error;
use rdarrow_arrow::Origin;
use rdarrow_arrow::Result;
use rdarrow_arrow::Source;
use rdarrow_arrow::Streamed;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A reader's first argument.
pub enum Given {
    /// A path or URL (the engine's sources, see `Source::of_path`).
    Path(PathBuf),
    /// Bytes: a file's, or `serialize()` output (compressed or not).
    Bytes(Vec<u8>),
    /// A binary file object.
    File(FileObject),
}

impl Given {
    /// What `arg` is: a str or `os.PathLike`, a buffer, or an object with
    /// a `read` method.
    pub fn of(arg: &Bound<'_, PyAny>) -> PyResult<Given> {
        if let Some(bytes) = bytes_of(arg)? {
            return Ok(Given::Bytes(bytes));
        }
        if arg.hasattr("read")? {
            return FileObject::new(arg).map(Given::File);
        }
        Ok(Given::Path(arg.extract()?))
    }

    /// How errors name it.
    pub fn label(&self) -> String {
        match self {
            Given::Path(p) => p.display().to_string(),
            Given::Bytes(_) => "the bytes".into(),
            Given::File(f) => f.label.clone(),
        }
    }

    /// The name of an `.rds` stream's one object: its file's name without
    /// the extension, else `value`.
    pub fn stream_name(&self) -> String {
        match self {
            Given::Path(p) => rdarrow_arrow::stream_object_name(p),
            Given::Bytes(_) => "value".into(),
            Given::File(f) => match &f.name {
                Some(n) => rdarrow_arrow::stream_object_name(Path::new(n)),
                None => "value".into(),
            },
        }
    }
}

impl Origin for Given {
    fn source(&self) -> Result<Source> {
        match self {
            Given::Path(p) => p.source(),
            Given::Bytes(b) => b.source(),
            Given::File(f) => f.source(),
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Given::Path(p) => Some(p),
            _ => None,
        }
    }

    fn reopens(&self) -> bool {
        match self {
            Given::File(f) => f.seekable.is_some(),
            _ => true,
        }
    }
}

/// The bytes of `bytes`, a `bytearray` or a `memoryview`; `None` for
/// anything else.
fn bytes_of(arg: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = arg.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(b) = arg.cast::<PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    if arg.is_instance_of::<PyMemoryView>() {
        let b = arg.call_method0("tobytes")?;
        return Ok(Some(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// `PyBUF_WRITE` of CPython's headers (a memoryview that may be written).
const PYBUF_WRITE: std::os::raw::c_int = 0x200;

/// A binary file object and where it stood when handed over.
pub struct FileObject {
    file: Py<PyAny>,
    label: String,
    /// Its `name`, where it has a str one.
    name: Option<String>,
    /// Where it stood and how many bytes follow, when it can seek.
    seekable: Option<(u64, u64)>,
    /// Whether it was read already.
    opened: AtomicBool,
}

impl FileObject {
    fn new(file: &Bound<'_, PyAny>) -> PyResult<FileObject> {
        // an open file's name, else an fsspec file's path
        let name = ["name", "path"].iter().find_map(|a| {
            file.getattr(*a)
                .ok()
                .and_then(|n| n.extract::<String>().ok())
        });
        let label = match &name {
            Some(n) => format!("the file object '{n}'"),
            None => "the file object".into(),
        };
        let can_seek = file.hasattr("seekable")?
            && file.call_method0("seekable")?.is_truthy()?
            && file.hasattr("tell")?;
        let seekable = if can_seek {
            let start: u64 = file.call_method0("tell")?.extract()?;
            let end: u64 = file.call_method1("seek", (0, 2))?.extract()?;
            file.call_method1("seek", (start,))?;
            Some((start, end.saturating_sub(start)))
        } else {
            None
        };
        Ok(FileObject {
            file: file.clone().unbind(),
            label,
            name,
            seekable,
            opened: AtomicBool::new(false),
        })
    }

    fn source(&self) -> Result<Source> {
        let again = self.opened.swap(true, Ordering::SeqCst);
        let reader = Python::attach(|py| PyReader {
            file: self.file.clone_ref(py),
            into: self.file.bind(py).hasattr("readinto").unwrap_or(false),
            seekable: self.seekable,
        });
        let body = match self.seekable {
            Some((start, _)) => {
                if again {
                    reader
                        .seek(start)
                        .map_err(|e| Error::io(&e, &format!("cannot go back in {}", self.label)))?;
                }
                Streamed::Seekable(Box::new(reader))
            }
            None if again => {
                return Err(Error::usage(format!(
                    "{} cannot be read a second time: it cannot seek (hand over its bytes, or a seekable file)",
                    self.label
                )))
            }
            None => Streamed::Forward(Box::new(reader)),
        };
        Ok(Source::Stream {
            label: self.label.clone(),
            body,
        })
    }
}

/// Reads a file object with the GIL taken for each call (the engine
/// reads with it released).
struct PyReader {
    file: Py<PyAny>,
    /// Whether it has `readinto()` (which fills the engine's buffer
    /// itself).
    into: bool,
    /// Where it started and its length from there, when it can seek.
    seekable: Option<(u64, u64)>,
}

impl PyReader {
    fn seek(&self, to: u64) -> std::io::Result<()> {
        Python::attach(|py| {
            self.file
                .bind(py)
                .call_method1("seek", (to,))
                .map(|_| ())
                .map_err(|e| py_io(py, e))
        })
    }
}

/// A Python exception as an I/O error, with its type and message.
fn py_io(py: Python<'_>, e: PyErr) -> std::io::Error {
    let kind = e
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "error".into());
    failure(
        std::io::ErrorKind::Other,
        format!("{kind}: {}", e.value(py)),
    )
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        Python::attach(|py| -> std::io::Result<usize> {
            let file = self.file.bind(py);
            if self.into {
                // a writable memoryview over `buf`, released before return
                // (the file object must not keep it)
                let view = unsafe {
                    let ptr = pyo3::ffi::PyMemoryView_FromMemory(
                        buf.as_mut_ptr().cast(),
                        buf.len() as pyo3::ffi::Py_ssize_t,
                        PYBUF_WRITE,
                    );
                    Bound::from_owned_ptr_or_err(py, ptr).map_err(|e| py_io(py, e))?
                };
                let got = file.call_method1("readinto", (&view,));
                view.call_method0("release").map_err(|e| py_io(py, e))?;
                let got = got.map_err(|e| py_io(py, e))?;
                if got.is_none() {
                    return Err(failure(
                        std::io::ErrorKind::WouldBlock,
                        "the file object is non-blocking and had no data",
                    ));
                }
                let n: usize = got.extract().map_err(|e| py_io(py, e))?;
                if n > buf.len() {
                    return Err(failure(
                        std::io::ErrorKind::Other,
                        format!("readinto() said it read {n} bytes into {}", buf.len()),
                    ));
                }
                Ok(n)
            } else {
                let got = file
                    .call_method1("read", (buf.len(),))
                    .map_err(|e| py_io(py, e))?;
                let bytes = bytes_of(&got).map_err(|e| py_io(py, e))?.ok_or_else(|| {
                    failure(
                        std::io::ErrorKind::Other,
                        format!(
                            "read() gave {}, not bytes (open the file in binary mode)",
                            got.get_type()
                                .name()
                                .map(|n| n.to_string())
                                .unwrap_or_default()
                        ),
                    )
                })?;
                let n = bytes.len();
                if n > buf.len() {
                    return Err(failure(
                        std::io::ErrorKind::Other,
                        format!("read({}) gave {n} bytes", buf.len()),
                    ));
                }
                buf[..n].copy_from_slice(&bytes);
                Ok(n)
            }
        })
    }
}

impl rdarrow_arrow::wire::decode::Seekable for PyReader {
    fn seek_to(&mut self, pos: u64) -> std::io::Result<()> {
        let (start, _) = self
            .seekable
            .ok_or_else(|| failure(std::io::ErrorKind::Other, "the file object cannot seek"))?;
        self.seek(start + pos)
    }

    fn len(&self) -> u64 {
        self.seekable.map_or(0, |(_, len)| len)
    }
}
