//! Where one R data file comes from: a path or URL, bytes, a stream.

use crate::wire::decode;
use std::io::Read;
use std::path::PathBuf;

/// The body of a [`Source::Stream`].
pub enum Streamed {
    /// Read from start to end.
    Forward(Box<dyn Read + Send>),
    /// Able to continue from a later byte without reading those between.
    Seekable(Box<dyn decode::Seekable>),
}

/// One source of R data.
pub enum Source {
    /// A local file, read as R data whatever its name says.
    File(PathBuf),
    /// An http(s) URL, read as a stream.
    Url(String),
    /// An object in an object store (`s3://`, `gs://`, `az://`), read as a
    /// stream.
    Object(String),
    /// A file's bytes or `serialize()` output, compressed or not.
    Bytes(Vec<u8>),
    /// A lazy-load data base: the `.rdb`, the `.rdx` or the path they share.
    LazyLoad(PathBuf),
    /// A stream a host hands over (a Python file object), from where it
    /// is; one that can move ahead ([`decode::Seekable`]) is read by range
    /// where uncompressed.
    Stream {
        /// What names it in errors (quoted as it should appear).
        label: String,
        /// Its bytes.
        body: Streamed,
    },
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File(p) => f.debug_tuple("File").field(p).finish(),
            Source::Url(u) => f.debug_tuple("Url").field(u).finish(),
            Source::Object(u) => f.debug_tuple("Object").field(u).finish(),
            Source::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            Source::LazyLoad(p) => f.debug_tuple("LazyLoad").field(p).finish(),
            Source::Stream { label, .. } => f.debug_tuple("Stream").field(label).finish(),
        }
    }
}
