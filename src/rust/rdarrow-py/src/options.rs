//! Read options from the Python arguments: an object store's options, and
//! small sources read on the calling thread.

use rdarrow_arrow::ReadOptions;
use crate::given::Given;

/// Run the read `work` of `path` with the default options: a small file's
/// on this thread, as the engine rules ([`rdarrow_arrow::read_small_here`]),
/// recovering what is intact in a damaged file where `salvage` says so
/// ([`ReadOptions::salvage`]).
pub(crate) fn salvaging_here_or<T>(
    path: &Given,
    storage: &Option<Vec<(String, String)>>,
    salvage: bool,
    work: impl Fn(&ReadOptions) -> rdarrow_arrow::Result<T>,
) -> rdarrow_arrow::Result<T> {
    rdarrow_arrow::read_small_here_or(path, &salvaging(storage, salvage), work)
}

/// The default read options with `storage` (see [`read_options`]),
/// salvaging where `salvage` says so.
pub(crate) fn salvaging(storage: &Option<Vec<(String, String)>>, salvage: bool) -> ReadOptions {
    ReadOptions {
        salvage,
        ..read_options(storage)
    }
}

/// The default read options, with an object store's `storage` options
/// (credentials, endpoint, region, ... as `object_store` names them).
pub(crate) fn read_options(storage: &Option<Vec<(String, String)>>) -> ReadOptions {
    ReadOptions {
        storage: storage_of(storage),
        ..Default::default()
    }
}

pub(crate) fn storage_of(storage: &Option<Vec<(String, String)>>) -> rdarrow_arrow::StorageOptions {
    rdarrow_arrow::StorageOptions::new(storage.clone().unwrap_or_default())
}
