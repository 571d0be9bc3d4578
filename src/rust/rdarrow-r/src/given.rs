//! What an R reader was given, as the engine reads it: a path or URL (a
//! string), or a raw vector's bytes (`serialize()` output, compressed or
//! not, or a file's bytes), read from memory rather than from a
//! temporary file.

use extendr_api::prelude::*;
use rdarrow_arrow::Error;
use rdarrow_arrow::Origin;
use rdarrow_arrow::Source;
use std::path::Path;

/// A reader's `file`.
pub enum Given {
    /// A path or URL.
    Path(String),
    /// A raw vector's bytes.
    Bytes(Vec<u8>),
}

impl Given {
    /// What `x` is: a string, else a raw vector (a usage error for
    /// anything else).
    pub fn of(x: &Robj) -> std::result::Result<Given, Error> {
        if let Some(s) = x.as_str() {
            return Ok(Given::Path(s.to_string()));
        }
        match x.as_raw_slice() {
            Some(bytes) => Ok(Given::Bytes(bytes.to_vec())),
            None => Err(Error::usage(
                "`file` must be a path or URL (a string) or a raw vector",
            )),
        }
    }
}

impl Origin for Given {
    fn source(&self) -> rdarrow_arrow::Result<Source> {
        match self {
            Given::Path(p) => p.source(),
            Given::Bytes(b) => b.source(),
        }
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Given::Path(p) => Some(Path::new(p)),
            Given::Bytes(_) => None,
        }
    }
}
