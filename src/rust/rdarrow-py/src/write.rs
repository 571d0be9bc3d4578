//! Writing R data files from Python values and Arrow tables.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::path::PathBuf;
use crate::errors::*;
use crate::options::*;
use crate::streams::*;

/// Write Python values as one R data file: each `(name, value)` becomes an
/// R object saved under its name as `save()` would (`rds`: the one object
/// as `saveRDS()` would). A value is an Arrow C stream capsule (a table:
/// a data frame, or what the `"r"` metadata says it was) or a node of the
/// Python package's value table (see [`make`]).
#[pyfunction]
#[pyo3(signature = (objects, path, rds=false, compress=None, level=None, version=3, threads=None, storage=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_rdata(
    py: Python<'_>,
    objects: Vec<(String, Bound<'_, PyAny>)>,
    path: PathBuf,
    rds: bool,
    compress: Option<&str>,
    level: Option<i64>,
    version: i32,
    threads: Option<usize>,
    storage: Option<Vec<(String, String)>>,
) -> PyResult<()> {
    let (compression, level) =
        rdarrow_arrow::compression_for_path(&path.to_string_lossy(), compress, level).map_err(py_err)?;
    rdarrow_arrow::wire::header::check_version(version).map_err(py_err)?;
    enum Given {
        Table(SchemaRef, Vec<RecordBatch>),
        Made(rdarrow_arrow::tree::RObject),
    }
    let mut m = rdarrow_arrow::tree::make::ObjectMaker::default();
    let mut given = Vec::with_capacity(objects.len());
    for (name, value) in &objects {
        let g = match value.cast::<PyCapsule>() {
            Ok(c) => {
                let (schema, batches) = import_stream(c)?;
                Given::Table(schema, batches)
            }
            Err(_) => {
                let obj = crate::make::FromPython::new(&mut m)
                    .object(value, 0)
                    .map_err(|e| in_object_py(py, name, e))?;
                rdarrow_arrow::checks::validate::check_for_r(&obj, &m.refs)
                    .map_err(|e| py_err(e.in_object(name)))?;
                Given::Made(obj)
            }
        };
        given.push((name.clone(), g));
    }
    drop(objects);
    let o = rdarrow_arrow::write::ObjectFileOptions {
        compression,
        level,
        version,
        rds,
        threads: threads.unwrap_or_else(rdarrow_arrow::batches::rows::all_cores),
        storage: storage_of(&storage),
        ..Default::default()
    };
    py.detach(|| {
        let mut made = Vec::with_capacity(given.len());
        for (name, g) in given {
            let obj = match g {
                Given::Table(schema, batches) => {
                    rdarrow_arrow::from_arrow::frame::object_with(&mut m, &schema, &batches)
                        .map_err(|e| e.in_object(&name))?
                }
                Given::Made(obj) => obj,
            };
            made.push((name, obj));
        }
        rdarrow_arrow::write::write_objects_file(&path, made, m.refs, &o)
    })
    .map_err(|e| in_file(&path, e))
}

/// Check a writer's compression name and level for a file at `path` by
/// the engine's one rule (`compression_for_path`: R's compressions, or a
/// .qs2/.qdata file's container), raising its message.
#[pyfunction]
#[pyo3(signature = (compress=None, level=None, path=""))]
pub(crate) fn check_compression(compress: Option<&str>, level: Option<i64>, path: &str) -> PyResult<()> {
    rdarrow_arrow::compression_for_path(path, compress, level).map_err(py_err)?;
    Ok(())
}
