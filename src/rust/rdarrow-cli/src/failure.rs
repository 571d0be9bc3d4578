//! What a command's failure is: a data error (exit 1) or a usage error
//! (exit 2); the files a command's arguments name.

use rdarrow_arrow::Error;
use rdarrow_arrow::ReadOptions;
use std::path::{Path, PathBuf};

/// A failure: a data error (exit 1) or a usage error found after parsing (exit 2).
pub(crate) enum Failure {
    Data(String),
    Usage(String),
}

pub(crate) type Outcome = std::result::Result<(), Failure>;

/// A data error about `file`, unless the engine's message names it already.
pub(crate) fn data_error(file: &Path, e: Error) -> Failure {
    let label = file.display().to_string();
    let msg = message_of(&e);
    if msg.contains(&label) {
        Failure::Data(msg)
    } else {
        Failure::Data(format!("{label}: {msg}"))
    }
}

/// Say on standard error what a salvaging read of `file` lost (the work
/// went on).
pub(crate) fn warn(file: &Path, damage: &str) {
    eprintln!("rdarrow: warning: {}: {damage}", file.display());
}

/// An engine error's message, its hint naming `--salvage`.
pub(crate) fn message_of(e: &Error) -> String {
    rdarrow_arrow::read::salvage::hint_as(&e.to_string(), "--salvage")
}

/// The files `given` names, each argument through the engine's one rule
/// (`expand_each`: a glob's matches, a directory's R data files, a store
/// prefix's objects), in order.
pub(crate) fn expand_all(given: &[PathBuf], read: &ReadOptions) -> Result<Vec<PathBuf>, Failure> {
    let given: Vec<String> = given.iter().map(|f| f.to_string_lossy().into_owned()).collect();
    rdarrow_arrow::expand_each(&given, read).map_err(|e| Failure::Usage(e.message))
}

/// The name of an `.rds` file's one object: the file's name without its
/// extension (as `rdata_objects()` and `rdata_to_arrow()` in R name it).
pub(crate) fn stream_name(file: &Path) -> String {
    rdarrow_arrow::stream_object_name(file)
}
