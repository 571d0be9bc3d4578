//! A data frame opened to be read by row range and column (the engine's
//! `open_table`: its payloads stay in the file or its spill until asked
//! for), for the readers that push a projection and a row range down:
//! Polars' lazy scans and Spark's partitions. Only the columns asked for
//! are converted, only their rows decoded.

use crate::given::Given;
use crate::errors::{in_source, py_err};
use crate::options::salvaging;
use arrow_array::ffi::FFI_ArrowSchema;
use arrow_array::{RecordBatch, RecordBatchOptions};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rdarrow_arrow::batches::rows::all_cores;
use rdarrow_arrow::batches::rows::per_column;
use rdarrow_arrow::batches::rows::ColumnSource;
use rdarrow_arrow::open_table as engine_open;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::DEFAULT_MEMORY;
use rdarrow_arrow::Error;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// One data frame of an R data file, opened: its schema and row count
/// known, its columns read by row range on all cores.
#[pyclass(frozen, module = "rdarrow._rdarrow")]
pub struct OpenedTable {
    name: String,
    label: String,
    source: Box<dyn ColumnSource + Send>,
    group_rows: usize,
    /// The columns read so far (positions), for the tests that a query's
    /// projection reached the engine.
    converted: Mutex<BTreeSet<usize>>,
}

#[pymethods]
impl OpenedTable {
    /// The object's name.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.source.num_rows()
    }

    /// Rows a batch should hold for the memory budget.
    #[getter]
    fn group_rows(&self) -> usize {
        self.group_rows
    }

    /// What the conversion changed (for the caller to warn).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.source.warnings()
    }

    /// The positions of the columns read (converted) so far.
    #[getter]
    fn converted(&self) -> Vec<usize> {
        self.converted
            .lock()
            .map(|c| c.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The table's schema (with rdarrow's `"r"` metadata) as an Arrow C
    /// schema capsule.
    fn schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let ffi = FFI_ArrowSchema::try_from(self.source.schema().as_ref())
            .map_err(|e| py_err(Error::internal(format!("the schema does not export: {e}"))))?;
        PyCapsule::new_with_value(py, ffi, c"arrow_schema")
    }

    /// Rows `[start, start + len)` (cut at the end) of the columns at
    /// `columns` (positions in the schema), as an Arrow C stream capsule
    /// of one record batch; the columns convert in parallel.
    fn read<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<usize>,
        start: usize,
        len: usize,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = self.source.schema();
        if let Some(&bad) = columns.iter().find(|&&j| j >= schema.fields().len()) {
            return Err(py_err(Error::usage(format!(
                "column {bad} is past the table's {} columns",
                schema.fields().len()
            ))));
        }
        if let Ok(mut c) = self.converted.lock() {
            c.extend(columns.iter().copied());
        }
        let n = self.source.num_rows();
        let start = start.min(n);
        let len = len.min(n - start);
        let source = &self.source;
        let arrays = py
            .detach(|| {
                per_column(columns.len(), all_cores().min(columns.len().max(1)), |k| {
                    source.column(columns[k], start, len)
                })
            })
            .map_err(|e| in_source(&self.label, e))?;
        let projected = Arc::new(
            schema
                .project(&columns)
                .map_err(|e| py_err(Error::internal(e.to_string())))?,
        );
        let batch = RecordBatch::try_new_with_options(
            projected.clone(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(len)),
        )
        .map_err(|e| py_err(Error::internal(e.to_string())))?;
        crate::streams::stream_capsule(py, vec![batch], projected)
    }
}

/// Open one object of an R data file for reading by row range (see the
/// engine's `open_table`): the object as every reader chooses it,
/// `columns` (names) the only ones planned; salvaging where `salvage`
/// says so (what was lost leads the table's `warnings`).
#[pyfunction]
#[pyo3(signature = (path, object=None, columns=None, storage=None, salvage=false))]
pub fn open_table(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    object: Option<String>,
    columns: Option<Vec<String>>,
    storage: Option<Vec<(String, String)>>,
    salvage: bool,
) -> PyResult<OpenedTable> {
    let path = Given::of(path)?;
    let stream_name = path.stream_name();
    let label = path.label();
    let opts = TableOptions {
        col_select: columns.map(|c| c.into_iter().map(ColumnRef::Name).collect()),
        default_tz: rdarrow_arrow::session_zone(),
        ..Default::default()
    };
    let read = salvaging(&storage, salvage);
    let t = py
        .detach(|| {
            engine_open(
                &path,
                object.as_deref(),
                &stream_name,
                opts,
                read,
                &std::env::temp_dir(),
                None,
                DEFAULT_MEMORY,
                None,
            )
        })
        .map_err(|e| in_source(&label, e))?;
    Ok(OpenedTable {
        name: t.name,
        label,
        source: t.source,
        group_rows: t.group_rows,
        converted: Mutex::new(BTreeSet::new()),
    })
}
