//! Arrow datasets from R data files: argument conversion for
//! `rdata_to_dataset()`; the work is the engine's
//! (`rdarrow_arrow::files::dataset`).

use crate::errors::error_value;
use extendr_api::prelude::*;
use rdarrow_arrow::files::dataset::write_dataset;
use rdarrow_arrow::files::dataset::DatasetFormat;
use rdarrow_arrow::files::dataset::DatasetOptions;
use rdarrow_arrow::Error;
use std::path::PathBuf;

/// Write `files` as a dataset in `path`. Returns list(files, objects, rows,
/// damaged, damage) (files relative to `path`; `damaged`: the positions in
/// `files`, from 1, of the damaged inputs a salvaging read took, `damage`:
/// what each lost, for R's warnings) or an `rdarrow_error_value`.
pub fn to_dataset(
    files: Vec<String>,
    path: &str,
    partitioning: Vec<String>,
    format: &str,
    object: Robj,
    names_to: &str,
    default_tz: &str,
    settings: Robj,
) -> Robj {
    let Some(format) = DatasetFormat::from_name(format) else {
        return error_value(&Error::usage(format!("unknown dataset format '{format}'")));
    };
    let object = if object.is_null() {
        None
    } else {
        object.as_str().map(|s| s.to_string())
    };
    let opts = DatasetOptions {
        partitioning,
        format,
        object,
        names_to: names_to.to_string(),
        compression: None,
        parquet: Default::default(),
        chunk_size: None,
        default_tz: (!default_tz.is_empty()).then(|| default_tz.to_string()),
        read: crate::settings::options(&settings),
        threads: 0,
    };
    let inputs: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let dir = PathBuf::from(path);
    let res = crate::job::run("Writing the dataset", || {
        write_dataset(&inputs, &dir, &opts, &mut |_| {})
    });
    match res {
        Ok(s) => list!(
            files = s
                .files
                .iter()
                .map(|f| f.to_string_lossy().into_owned())
                .collect::<Vec<_>>(),
            objects = s.objects as f64,
            rows = s.rows as f64,
            damaged = s
                .damage
                .iter()
                .map(|(p, _)| inputs.iter().position(|i| i == p).map_or(0, |i| i as i32 + 1))
                .collect::<Vec<_>>(),
            damage = s.damage.iter().map(|(_, d)| d.clone()).collect::<Vec<_>>()
        )
        .into(),
        Err(e) => error_value(&e),
    }
}

/// Write the data frames of R data files as an Arrow dataset directory.
/// @noRd
#[extendr]
fn rdata_to_dataset_impl(
    files: Vec<String>,
    path: &str,
    partitioning: Vec<String>,
    format: &str,
    object: Robj,
    names_to: &str,
    default_tz: &str,
    settings: Robj,
) -> Robj {
    to_dataset(
        files,
        path,
        partitioning,
        format,
        object,
        names_to,
        default_tz,
        settings,
    )
}

extendr_module! {
    mod dataset;
    fn rdata_to_dataset_impl;
}
