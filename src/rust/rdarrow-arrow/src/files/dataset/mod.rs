//! Arrow datasets: the data frames of many `.RData`/`.rds` files (or many
//! data frames of one file) with the same columns, written as one directory
//! of Arrow IPC files that arrow (`open_dataset(format = "arrow")`),
//! pyarrow (`pyarrow.dataset.dataset(format = "ipc")`) and polars read as
//! a single table.
//!
//! Layout, as arrow writes it:
//!
//! * without partitioning, `DIR/part-0.arrow`, `DIR/part-1.arrow`, ...: one
//!   file per input object, in the order of the inputs;
//! * with hive partitioning by columns `a, b`, `DIR/a=x/b=y/part-0.arrow`:
//!   the rows of each object are split by the values of the partition
//!   columns, which are not stored in the files (they are in the paths).
//!   Each directory numbers its files from `part-0`. Values are rendered as
//!   arrow renders them (factor levels and strings as they are, integers in
//!   decimal, `NA` as `__HIVE_DEFAULT_PARTITION__`) and percent-encoded
//!   except for `A-Z a-z 0-9 - _ . ~`, which arrow's `"uri"` segment
//!   encoding (its default) decodes when reading.
//!
//! The `feather` format writes the same bytes (Feather version 2 is the
//! Arrow IPC file format) with the `.feather` extension.
//!
//! All objects must have the same columns with the same Arrow types; the
//! columns of later inputs are reordered by name to the first input's
//! order. Factors are normalised to `dictionary<int32, utf8>` (rdarrow
//! picks the narrowest index per file, so the index type could otherwise
//! differ between files). Character row names are dropped: the rows of a
//! dataset have no names.
//!
//! Files are read one after another (only one input is held in memory at a
//! time); the partitions of an input are written in parallel. Each output
//! file is written under a temporary name; once all are written, they are
//! made durable together (one sync of the file system, not one per file)
//! and renamed into place. Under an object store prefix (which must hold
//! nothing yet), each file is uploaded as it is written and appears
//! complete. On an error, nothing this call wrote is left.
//!
//! A damaged input is an error naming it, or, salvaging
//! ([`ReadOptions::salvage`]), gives what salvage keeps of the objects an
//! intact file gives ([`Document::take_frames`]), and what it lost is
//! noted in the summary ([`DatasetSummary::damage`]) for the host to warn.

mod partition;
mod schema;

pub use partition::{hive_escape, HIVE_NULL};
use partition::partition_rows;
use schema::{check_fields, fit_times, normalise, one_batch, time_targets, Fit, Reference};
use crate::files::ipc::write_ipc_into;
use crate::files::ipc::IpcCompression;
use crate::files::ipc::IpcFormat;
use crate::table_from_object;
use crate::ArrowTable;
use crate::ColumnRef;
use crate::TableOptions;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::set_attribute;
use rdarrow_format::tree::RObject;
use rdarrow_format::Document;
use rdarrow_format::ReadOptions;
use arrow_array::{RecordBatch, UInt32Array};
use arrow_schema::{DataType, FieldRef, Schema, SchemaRef};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The partition column holding the names of a list's data frames
/// ([`DatasetOptions::names_to`]) unless told otherwise.
pub const DEFAULT_NAMES_TO: &str = "name";


/// The file format of a dataset's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatasetFormat {
    /// Parquet files, `.parquet` (as `arrow::write_dataset()`'s default).
    #[default]
    Parquet,
    /// Arrow IPC files, `.arrow`.
    Arrow,
    /// The same bytes (Feather version 2), `.feather`.
    Feather,
}

impl DatasetFormat {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "parquet" => Some(DatasetFormat::Parquet),
            "arrow" | "ipc" => Some(DatasetFormat::Arrow),
            "feather" => Some(DatasetFormat::Feather),
            _ => None,
        }
    }

    /// The extension of the files, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            DatasetFormat::Parquet => "parquet",
            DatasetFormat::Arrow => "arrow",
            DatasetFormat::Feather => "feather",
        }
    }
}

/// What to write.
#[derive(Debug, Clone, Default)]
pub struct DatasetOptions {
    /// Columns to partition by (hive style), outermost first; empty for none.
    pub partitioning: Vec<String>,
    pub format: DatasetFormat,
    /// The object to take from each `.RData` file; `None` takes every data
    /// frame of each file (an `.rds` file holds one object).
    pub object: Option<String>,
    /// Where the object taken is a list of data frames, each of them is
    /// written, and this partition column (outermost) holds its name in
    /// the list (its position where it has none).
    pub names_to: String,
    pub compression: Option<IpcCompression>,
    /// How Parquet files are compressed.
    pub parquet: crate::files::parquet_layout::ParquetOptions,
    /// Rows per record batch in each file (one batch when `None`).
    pub chunk_size: Option<usize>,
    /// The zone given to POSIXct columns without a `tzone` attribute.
    pub default_tz: Option<String>,
    pub read: ReadOptions,
    /// Threads writing partitions; 0 for the number of cores.
    pub threads: usize,
}

/// Progress of [`write_dataset`], reported from the calling thread.
#[derive(Debug)]
pub enum DatasetEvent<'a> {
    /// Input `index` (0-based) of `count` is being read.
    Input {
        index: usize,
        count: usize,
        path: &'a Path,
    },
    /// An object was converted and is being written.
    Object {
        path: &'a Path,
        name: &'a str,
        rows: usize,
    },
    /// Input `index` is done; `files` output files were written for it.
    InputDone {
        index: usize,
        files: usize,
        rows: u64,
    },
}

/// What [`write_dataset`] wrote.
#[derive(Debug, Clone)]
pub struct DatasetSummary {
    /// The files written, relative to the dataset directory, in order.
    pub files: Vec<PathBuf>,
    /// Objects converted.
    pub objects: usize,
    /// Rows written.
    pub rows: u64,
    /// The columns of the dataset's files (without the partition columns);
    /// `None` when there was no input object.
    pub schema: Option<SchemaRef>,
    /// The partition columns' fields, in partitioning order.
    pub partition_fields: Vec<FieldRef>,
    /// Salvaging ([`ReadOptions::salvage`]), what each damaged input lost
    /// and what of it was written: (the input, [`Document::damage_for_all`]),
    /// in the order of the inputs, for the host to warn of.
    pub damage: Vec<(PathBuf, String)>,
}

/// Write the objects of `inputs` as an Arrow dataset in `dir`, which must
/// not exist or be empty. `progress` hears about each input.
pub fn write_dataset(
    inputs: &[PathBuf],
    dir: &Path,
    opts: &DatasetOptions,
    progress: &mut dyn FnMut(DatasetEvent),
) -> Result<DatasetSummary> {
    check_options(inputs, opts)?;
    // time columns widened to a finer unit a later input needs: the
    // dataset is written again with them (each attempt widens a column,
    // so there are at most a few)
    let mut widened: HashMap<String, DataType> = HashMap::new();
    loop {
        let mut out = Output::new(dir, opts)?;
        let res = write_all(inputs, opts, &widened, &mut out, progress);
        if let Ok(Err((name, to))) = &res {
            out.roll_back();
            widened.insert(name.clone(), to.clone());
            continue;
        }
        let res = res.and_then(|written| {
            let summary = written.unwrap_or_else(|_| unreachable!("widened above"));
            std::mem::take(&mut out.batch).commit().map(|()| summary)
        });
        return out.finish(dir, res);
    }
}

impl Output {
    /// The summary of a dataset written (its files relative to `dir`), or
    /// the error, with what this attempt wrote removed.
    fn finish(mut self, dir: &Path, res: Result<DatasetSummary>) -> Result<DatasetSummary> {
        let out = &mut self;
    match res {
        Ok(mut summary) => {
            summary.files = out
                .written
                .iter()
                .map(|p| p.strip_prefix(dir).unwrap_or(p).to_path_buf())
                .collect();
            Ok(summary)
        }
        Err(e) => {
            out.roll_back();
            Err(e)
        }
    }
    }
}

fn check_options(inputs: &[PathBuf], opts: &DatasetOptions) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::usage("no input files"));
    }
    for (i, p) in opts.partitioning.iter().enumerate() {
        if p.is_empty() {
            return Err(Error::usage("a partition column name is empty"));
        }
        if opts.partitioning[..i].contains(p) {
            return Err(Error::usage(format!(
                "partition column '{p}' is given twice"
            )));
        }
    }
    if opts.chunk_size == Some(0) {
        return Err(Error::usage("the chunk size must be at least 1 row"));
    }
    Ok(())
}

/// The batch of a dataset under an object store prefix, which must hold
/// nothing yet: each file is uploaded as it is written, and removed again
/// on a failure.
fn store_batch(dir: &Path, opts: &DatasetOptions) -> Result<rdarrow_format::FileBatch> {
    let prefix = dir.to_string_lossy();
    let prefix = prefix.trim_end_matches('/');
    let there =
        rdarrow_format::io::store::Store::open(&format!("{prefix}/"), &opts.read.storage, opts.read.timeout)?;
    if !there.list(&|_| true)?.is_empty() {
        return Err(Error::usage(format!(
            "'{prefix}/' is not empty: write a dataset under a new or empty prefix"
        )));
    }
    Ok(rdarrow_format::FileBatch::with_storage(opts.read.storage.clone()))
}

/// Make sure `dir` is an empty directory: an error where it is a file or
/// holds anything; created where missing. The directories created,
/// outermost first (for roll-back).
fn empty_dir(dir: &Path) -> Result<Vec<PathBuf>> {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Err(Error::usage(format!(
            "'{}' exists and is not a directory",
            dir.display()
        ))),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir)
                .map_err(|e| Error::io(&e, &format!("cannot list '{}'", dir.display())))?;
            if entries.next().is_some() {
                return Err(Error::usage(format!(
                    "'{}' is not empty: write a dataset into a new or empty directory",
                    dir.display()
                )));
            }
            Ok(Vec::new())
        }
        Err(_) => create_missing(dir),
    }
}

/// Create `dir` with the levels above it that are missing; those created,
/// outermost first.
fn create_missing(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut p = Some(dir);
    while let Some(d) = p.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        missing.push(d.to_path_buf());
        p = d.parent();
    }
    if missing.is_empty() {
        return Ok(missing);
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(
            &e,
            &format!("cannot create the directory '{}'", dir.display()),
        )
    })?;
    missing.reverse();
    Ok(missing)
}

/// The output directory and what this call wrote in it.
struct Output {
    dir: PathBuf,
    ext: &'static str,
    /// Files written, for the summary and for removal after an error.
    written: Vec<PathBuf>,
    /// The files, under temporary names until they all appear at the end
    /// (made durable together: one sync, not one per file).
    batch: rdarrow_format::FileBatch,
    /// Directories this call created, outermost first.
    created: Vec<PathBuf>,
    /// The next part number of each directory.
    counters: HashMap<PathBuf, usize>,
    threads: usize,
    compression: IpcCompression,
    parquet: Option<crate::files::parquet_layout::ParquetOptions>,
    chunk_size: Option<usize>,
}

impl Output {
    fn new(dir: &Path, opts: &DatasetOptions) -> Result<Self> {
        let (batch, created) = if rdarrow_format::io::store::is_store_path(dir) {
            (store_batch(dir, opts)?, Vec::new())
        } else {
            (rdarrow_format::FileBatch::new(), empty_dir(dir)?)
        };
        let threads = if opts.threads > 0 {
            opts.threads
        } else {
            crate::batches::rows::all_cores()
        };
        Ok(Output {
            dir: dir.to_path_buf(),
            ext: opts.format.extension(),
            written: Vec::new(),
            batch,
            created,
            counters: HashMap::new(),
            threads,
            compression: opts.compression.unwrap_or(IpcCompression::Uncompressed),
            // partitions are written on threads of their own
            parquet: (opts.format == DatasetFormat::Parquet).then(|| {
                crate::files::parquet_layout::ParquetOptions {
                    threads: 1,
                    row_group_rows: opts.chunk_size,
                    ..opts.parquet.clone()
                }
            }),
            chunk_size: opts.chunk_size,
        })
    }

    /// The path of the next file in `sub` (relative to the dataset
    /// directory), creating the directories it needs.
    fn next_file(&mut self, sub: &Path) -> Result<PathBuf> {
        let d = self.dir.join(sub);
        if !rdarrow_format::io::store::is_store_path(&d) {
            let made = create_missing(&d)?;
            self.created.extend(made);
        }
        let n = self.counters.entry(d.clone()).or_insert(0);
        let f = d.join(format!("part-{n}.{}", self.ext));
        *n += 1;
        Ok(f)
    }

    fn roll_back(&mut self) {
        // the files not yet in place go with the batch
        drop(std::mem::take(&mut self.batch));
        for f in self.written.drain(..) {
            let _ = std::fs::remove_file(f);
        }
        for d in self.created.drain(..).rev() {
            let _ = std::fs::remove_dir(d);
        }
    }

    /// Write `batch` (sliced into chunks) to `path`.
    fn write_batch(&self, schema: &SchemaRef, batch: RecordBatch, path: &Path) -> Result<()> {
        if let Some(p) = &self.parquet {
            let table = ArrowTable {
                schema: schema.clone(),
                batches: vec![batch],
                warnings: Vec::new(),
            };
            return self.batch.write(path, |f| {
                crate::files::parquet::write_parquet_into(&table, f, p, None)
            });
        }
        let n = batch.num_rows();
        let batches = match self.chunk_size {
            Some(c) if c > 0 && n > c => (0..n)
                .step_by(c)
                .map(|off| batch.slice(off, c.min(n - off)))
                .collect(),
            _ => vec![batch],
        };
        let table = ArrowTable {
            schema: schema.clone(),
            batches,
            warnings: Vec::new(),
        };
        self.batch.write(path, |f| {
            write_ipc_into(&table, f, IpcFormat::File, self.compression)
        })
    }
}

/// Write every input's objects into `out`: what was written, or the
/// column (and the type) a dataset must be written again with.
fn write_all(
    inputs: &[PathBuf],
    opts: &DatasetOptions,
    widened: &HashMap<String, DataType>,
    out: &mut Output,
    progress: &mut dyn FnMut(DatasetEvent),
) -> Result<std::result::Result<DatasetSummary, (String, DataType)>> {
    let mut reference: Option<Reference> = None;
    let mut damage = Vec::new();
    let mut objects = 0usize;
    let mut rows = 0u64;
    for (index, path) in inputs.iter().enumerate() {
        rdarrow_format::base::cancel::check()?;
        progress(DatasetEvent::Input {
            index,
            count: inputs.len(),
            path,
        });
        let label = path.display().to_string();
        let before = out.written.len();
        let mut file_rows = 0u64;
        let mut doc = read_input(path, opts).map_err(|e| in_file(e, &label))?;
        let stem = rdarrow_format::stream_object_name(path);
        let selected = doc.take_frames(opts.object.as_deref(), &stem).map_err(|e| in_file(e, &label))?;
        let names: Vec<&str> = selected.iter().map(|(n, _)| n.as_str()).collect();
        if let Some(lost) = doc.damage_for_all(&names) {
            damage.push((path.clone(), lost));
        }
        let (selected, split) =
            split_frame_lists(selected, &doc, &opts.names_to).map_err(|e| in_file(e, &label))?;
        let split_opts;
        let opts = if split {
            split_opts = DatasetOptions {
                partitioning: std::iter::once(opts.names_to.clone())
                    .chain(opts.partitioning.iter().cloned())
                    .collect(),
                ..opts.clone()
            };
            &split_opts
        } else {
            opts
        };
        for (name, mut obj) in selected {
            let at = |e: Error| {
                if name.is_empty() {
                    e
                } else {
                    e.in_object(&name)
                }
            };
            drop_row_names(&mut obj, &doc);
            let fitted = object_tables(&doc, &obj, &name, opts, widened, reference.as_ref())
                .map_err(|e| at(in_file(e, &label)))?;
            let (data, keys) = match fitted {
                Ok(tables) => tables,
                Err(widen) => return Ok(Err(widen)),
            };
            drop(obj);
            if reference.is_none() {
                reference = Some(Reference {
                    file: label.clone(),
                    data: data.schema.fields().iter().cloned().collect(),
                    keys: keys
                        .as_ref()
                        .map(|k| k.schema.fields().iter().cloned().collect())
                        .unwrap_or_default(),
                });
            }
            let n = data.num_rows();
            progress(DatasetEvent::Object {
                path,
                name: &name,
                rows: n,
            });
            write_object(out, data, keys, &opts.partitioning)
                .map_err(|e| at(in_file(e, &label)))?;
            objects += 1;
            file_rows += n as u64;
        }
        drop(doc);
        rows += file_rows;
        progress(DatasetEvent::InputDone {
            index,
            files: out.written.len() - before,
            rows: file_rows,
        });
    }
    let (schema, partition_fields) = match reference {
        Some(r) => (Some(Arc::new(Schema::new(r.data))), r.keys),
        None => (None, Vec::new()),
    };
    Ok(Ok(DatasetSummary {
        files: Vec::new(),
        objects,
        rows,
        schema,
        partition_fields,
        damage,
    }))
}

/// Name the input in an error, unless the message names it already.
fn in_file(mut e: Error, label: &str) -> Error {
    if !e.message.contains(label) {
        e.message = format!("'{label}': {}", e.message);
    }
    e
}

/// An input read (salvaged where `opts.read` says so: what was lost goes
/// to [`DatasetSummary::damage`]).
fn read_input(path: &Path, opts: &DatasetOptions) -> Result<Document> {
    rdarrow_format::read_file_filtered(path, &opts.read, &mut rdarrow_format::Wanted::one(opts.object.as_deref()))
}

fn is_data_frame(obj: &RObject, doc: &Document) -> bool {
    obj.inherits(&doc.refs, "data.frame")
}

/// A list of data frames (not itself a data frame) taken as one object
/// becomes its data frames, each with a column `names_to` of its name in
/// the list (its position where it has none); other objects stay. Says
/// whether any list was split.
fn split_frame_lists(
    selected: Vec<(String, RObject)>,
    doc: &Document,
    names_to: &str,
) -> Result<(Vec<(String, RObject)>, bool)> {
    use rdarrow_format::tree::object_path::ObjectPath;
    use rdarrow_format::tree::object_path::Step;
    let is_frame_list = |obj: &RObject| match obj {
        RObject::Vector(v) => match &v.data {
            rdarrow_format::tree::VectorData::List(items) => {
                !is_data_frame(obj, doc)
                    && !items.is_empty()
                    && items.iter().all(|i| is_data_frame(i, doc))
            }
            _ => false,
        },
        _ => false,
    };
    if !selected.iter().any(|(_, o)| is_frame_list(o)) {
        return Ok((selected, false));
    }
    if names_to.is_empty() {
        return Err(Error::usage(
            "the name of the column of a list's names (names_to) is empty",
        ));
    }
    let mut out = Vec::new();
    for (name, obj) in selected {
        if !is_frame_list(&obj) {
            out.push((name, obj));
            continue;
        }
        let labels: Vec<Option<Vec<u8>>> = match obj
            .attribute(&doc.refs, "names")
            .and_then(|n| n.as_strings())
        {
            Some(ns) => (0..ns.len())
                .map(|i| ns.get(i).filter(|n| !n.is_empty()).map(<[u8]>::to_vec))
                .collect(),
            None => Vec::new(),
        };
        let base = ObjectPath::parse(&name).unwrap_or_else(|_| ObjectPath::top(&name));
        let RObject::Vector(v) = obj else {
            unreachable!()
        };
        let rdarrow_format::tree::VectorData::List(items) = v.data else {
            unreachable!()
        };
        for (i, mut frame) in items.into_iter().enumerate() {
            let label = labels.get(i).cloned().flatten();
            let mut path = base.clone();
            path.steps.push(match &label {
                Some(l) => Step::Name(String::from_utf8_lossy(l).into_owned()),
                None => Step::Position(i + 1),
            });
            let value = label.unwrap_or_else(|| (i + 1).to_string().into_bytes());
            let rows = rdarrow_format::read::summary::dims(&frame, &doc.refs).0.unwrap_or(0.0) as usize;
            let col_names = frame_names(&frame, doc).unwrap_or_default();
            if col_names.iter().any(|c| c == names_to.as_bytes()) {
                return Err(Error::usage(format!(
                    "'{}' has a column '{names_to}' already: name the column of the list's names otherwise (names_to)",
                    path.display()
                ))
                .in_object(&name));
            }
            let RObject::Vector(fv) = &mut frame else {
                unreachable!()
            };
            if let rdarrow_format::tree::VectorData::List(fcols) = &mut fv.data {
                fcols.push(rdarrow_format::tree::make::strings(std::iter::repeat_n(
                    Some(&value[..]),
                    rows,
                )));
            }
            let new_names = rdarrow_format::tree::make::strings(
                col_names
                    .iter()
                    .map(|c| Some(&c[..]))
                    .chain(std::iter::once(Some(names_to.as_bytes()))),
            );
            // a data frame has names: they are replaced
            set_attribute(
                &mut fv.attributes,
                RObject::Null,
                b"names",
                &doc.refs,
                new_names,
            );
            out.push((path.display(), frame));
        }
    }
    Ok((out, true))
}

/// A data frame's column names (`NA` as "NA"), if it has them.
fn frame_names(frame: &RObject, doc: &Document) -> Option<Vec<Vec<u8>>> {
    let s = frame
        .attribute(&doc.refs, "names")
        .and_then(|n| n.as_strings())?;
    Some(
        (0..s.len())
            .map(|i| s.get(i).unwrap_or(b"NA").to_vec())
            .collect(),
    )
}

/// Replace character row names by compact ones (a dataset's rows have no
/// names, and split rows could not keep them).
fn drop_row_names(obj: &mut RObject, doc: &Document) {
    if !is_data_frame(obj, doc) {
        return;
    }
    let n = match obj
        .attribute(&doc.refs, "row.names")
        .and_then(|r| r.as_strings())
    {
        Some(s) => s.len(),
        None => return,
    };
    if let RObject::Vector(v) = obj {
        let compact = rdarrow_format::tree::make::ints(vec![i32::MIN, -(n as i32)]);
        set_attribute(
            &mut v.attributes,
            RObject::Null,
            b"row.names",
            &doc.refs,
            compact,
        );
    }
}

/// The column names of an object as a table.
fn column_names(
    doc: &Document,
    obj: &RObject,
    name: &str,
    opts: &DatasetOptions,
) -> Result<Vec<String>> {
    if is_data_frame(obj, doc) {
        if let Some(names) = frame_names(obj, doc) {
            return Ok(names
                .iter()
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect());
        }
    }
    // a vector or matrix: convert to learn its columns
    let t = table_from_object(doc, obj, &table_options(name, opts, None))?;
    Ok(t.schema.fields().iter().map(|f| f.name().clone()).collect())
}

fn table_options(name: &str, opts: &DatasetOptions, cols: Option<Vec<ColumnRef>>) -> TableOptions {
    TableOptions {
        col_select: cols,
        chunk_size: None,
        default_tz: opts.default_tz.clone(),
        object_name: if name.is_empty() {
            "value".to_string()
        } else {
            name.to_string()
        },
        // the unit rdata_to_parquet() gives (one rule); the files agree
        // through schema::fit_times
        time_unit: None,
        one_object: false,
    }
}

/// The data table (partition columns removed, columns in the reference
/// order) and the partition columns of one object, with normalised types
/// (time columns in the units `widened` or the reference gives them)
/// checked against the reference; or a time column that needs a finer
/// unit than that, and the type it needs.
fn object_tables(
    doc: &Document,
    obj: &RObject,
    name: &str,
    opts: &DatasetOptions,
    widened: &HashMap<String, DataType>,
    reference: Option<&Reference>,
) -> Result<std::result::Result<(ArrowTable, Option<ArrowTable>), (String, DataType)>> {
    let names = column_names(doc, obj, name, opts)?;
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(Error::usage(format!(
                "column name '{n}' is used twice; a dataset's columns need distinct names"
            )));
        }
    }
    let pos = |n: &str| names.iter().position(|x| x == n);
    for p in &opts.partitioning {
        if pos(p).is_none() {
            return Err(Error::usage(format!(
                "there is no column '{p}' to partition by; the columns are: {}",
                names.join(", ")
            )));
        }
    }
    let data_names: Vec<String> = match reference {
        None => names
            .iter()
            .filter(|n| !opts.partitioning.contains(n))
            .cloned()
            .collect(),
        Some(r) => {
            let ref_names: Vec<&String> = r.data.iter().map(|f| f.name()).collect();
            if let Some(missing) = ref_names.iter().find(|n| pos(n).is_none()) {
                return Err(Error::usage(format!(
                    "column '{missing}' is missing (it is in '{}'); all inputs of a dataset need the same columns",
                    r.file
                )));
            }
            if let Some(extra) = names
                .iter()
                .find(|n| !opts.partitioning.contains(n) && !ref_names.contains(n))
            {
                return Err(Error::usage(format!(
                    "column '{extra}' is not in '{}'; all inputs of a dataset need the same columns",
                    r.file
                )));
            }
            ref_names.into_iter().cloned().collect()
        }
    };
    let select = |cols: &[String]| -> Vec<ColumnRef> {
        cols.iter()
            .map(|n| ColumnRef::Position(pos(n).unwrap() + 1))
            .collect()
    };
    let data = table_from_object(
        doc,
        obj,
        &table_options(name, opts, Some(select(&data_names))),
    )?;
    let data = match fit_times(normalise(data)?, &time_targets(widened, reference))? {
        Fit::Fitted(t) => t,
        Fit::Widen { name, to } => return Ok(Err((name, to))),
    };
    let keys = if opts.partitioning.is_empty() {
        None
    } else {
        let k = table_from_object(
            doc,
            obj,
            &table_options(name, opts, Some(select(&opts.partitioning))),
        )?;
        Some(normalise(k)?)
    };
    if let Some(r) = reference {
        check_fields(data.schema.fields(), &r.data, &r.file)?;
        if let Some(k) = &keys {
            check_fields(k.schema.fields(), &r.keys, &r.file)?;
        }
    }
    Ok(Ok((data, keys)))
}

/// Write one object: one file, or one file per partition.
fn write_object(
    out: &mut Output,
    data: ArrowTable,
    keys: Option<ArrowTable>,
    partitioning: &[String],
) -> Result<()> {
    let schema = data.schema.clone();
    let batch_all = one_batch(&data)?;
    drop(data);
    let Some(keys) = keys else {
        let path = out.next_file(Path::new(""))?;
        out.write_batch(&schema, batch_all, &path)?;
        out.written.push(path);
        return Ok(());
    };
    let key_batch = one_batch(&keys)?;
    let groups = partition_rows(&key_batch, partitioning)?;
    drop(key_batch);
    let mut jobs: Vec<(PathBuf, Option<Vec<u32>>)> = Vec::with_capacity(groups.len());
    let single = groups.len() == 1;
    for (dir, rows) in groups {
        let path = out.next_file(&dir)?;
        jobs.push((path, if single { None } else { Some(rows) }));
    }
    let threads = out.threads.min(jobs.len()).max(1);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let done: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= jobs.len() || failed.load(Ordering::Relaxed) {
            break;
        }
        let (path, rows) = &jobs[i];
        let res = rdarrow_format::base::cancel::check().and_then(|_| {
            let b = match rows {
                None => batch_all.clone(),
                Some(r) => {
                    arrow_select::take::take_record_batch(&batch_all, &UInt32Array::from(r.clone()))
                        .map_err(|e| {
                            Error::corrupt(format!("cannot split the rows by partition: {e}"))
                        })?
                }
            };
            out.write_batch(&schema, b, path)
        });
        match res {
            Ok(()) => done.lock().unwrap().push(i),
            Err(e) => {
                failed.store(true, Ordering::Relaxed);
                first_error.lock().unwrap().get_or_insert(e);
            }
        }
    };
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let mut done = done.into_inner().unwrap();
    done.sort_unstable();
    for i in done {
        out.written.push(jobs[i].0.clone());
    }
    match first_error.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
