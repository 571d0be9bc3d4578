//! `read_rdata(path, object := , columns := , filename := , salvage := )`
//! and `read_rds(path, salvage := )`: the rows of one object of each R
//! data file the path names (a file, a glob, a list of them, a directory,
//! an http(s) URL, a lazy-load data base), as one table (columns matched
//! by name, [`rdarrow_arrow::files::union`]). `salvage := true` reads what
//! is intact of a damaged file as every salvaging reader does, without a
//! warning (DuckDB's table functions have no channel for one).
//!
//! Bind opens every file on all cores (the engine's `open_table`: a data
//! frame's payloads stay in the file, or in a spill of its decompressed
//! stream, and are read back by row range), so memory holds the row groups
//! being converted, not the files. The scan's producer thread converts
//! only the projected columns, row group by row group, a few row groups
//! ahead on all cores, and hands them in order to DuckDB's threads, which
//! write them into DuckDB's vectors (an ordered scan runs on one DuckDB
//! thread; the conversion still uses every core).

use crate::api::{drop_box, guarded, message, on_bind, on_scan, LogicalType, TableFunction, Value};
use crate::api::c_string;
use crate::types::logical_type;
use crate::vectors;
use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, Int64Array, StringArray};
use arrow_schema::{DataType, TimeUnit};
use libduckdb_sys as ffi;
use rdarrow_arrow::batches::rows::ColumnSource;
use rdarrow_arrow::files::union::conform;
use rdarrow_arrow::files::union::union_by_name;
use rdarrow_arrow::files::union::Union;
use rdarrow_arrow::files::union::UnionInput;
use rdarrow_arrow::ColumnRef;
use rdarrow_arrow::TableOptions;
use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Rows a scan thread converts at once: DuckDB's row group.
const UNIT_ROWS: usize = 122_880;

/// One opened file.
struct FileTable {
    label: String,
    source: Box<dyn ColumnSource + Send>,
    rows: usize,
}

/// What bind found: the files and their union.
struct Bind {
    files: Vec<FileTable>,
    union: Union,
    /// The column `filename` is asked for (it follows the union's).
    filename: bool,
}

impl Bind {
    fn columns(&self) -> usize {
        self.union.schema.fields().len()
    }
}

/// A piece of work: rows `[start, start + len)` of file `file`, the
/// `first`-th row of the scan on.
#[derive(Clone, Copy)]
struct Unit {
    file: usize,
    start: usize,
    len: usize,
    first: usize,
}

/// A unit's projected columns, converted, or the error that stopped the
/// scan.
type Converted = Result<(usize, Vec<ArrayRef>), String>;

/// The scan's shared state: the units, converted in order by a producer
/// thread (on all cores, a few units ahead) and taken by DuckDB's threads.
struct Global {
    units: Vec<Unit>,
    taken: Mutex<Option<std::sync::mpsc::Receiver<Converted>>>,
    producer: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Global {
    fn drop(&mut self) {
        // the producer stops at its next hand-over once nobody takes
        drop(self.taken.lock().map(|mut r| r.take()));
        if let Some(p) = self.producer.take() {
            let _ = p.join();
        }
    }
}

/// One thread's state: the converted columns of its current unit and how
/// many of its rows went out.
#[derive(Default)]
struct Local {
    arrays: Vec<ArrayRef>,
    len: usize,
    done: usize,
}

/// The file names `path` names, as the engine expands each.
pub(crate) fn sources_of(
    paths: &[String],
    read: &rdarrow_arrow::ReadOptions,
) -> Result<Vec<(PathBuf, String)>, String> {
    let out: Vec<(PathBuf, String)> = rdarrow_arrow::expand_each(paths, read)
        .map_err(|e| format!("rdarrow: {e}"))?
        .into_iter()
        .map(|p| {
            let label = p.to_string_lossy().into_owned();
            (p, label)
        })
        .collect();
    if out.is_empty() {
        return Err("rdarrow: no file to read".into());
    }
    Ok(out)
}

/// An engine error as the message DuckDB shows: the file first, as the
/// command line's; a damaged file's hint names a reader that salvages
/// (`rdata_objects()` does not: the command's `ls --salvage`).
pub(crate) fn in_file(label: &str, e: rdarrow_arrow::Error) -> String {
    in_file_as(label, e, "the rdarrow command's --salvage")
}

/// [`in_file`] of `read_rdata()` and `read_rds()`, whose hint names their
/// own `salvage := true`.
fn in_scanned_file(label: &str, e: rdarrow_arrow::Error) -> String {
    in_file_as(label, e, "salvage := true")
}

fn in_file_as(label: &str, e: rdarrow_arrow::Error, asked: &str) -> String {
    let m = rdarrow_arrow::read::salvage::hint_as(&e.to_string(), asked);
    if m.contains(label) {
        format!("rdarrow: {m}")
    } else {
        format!("rdarrow: {label}: {m}")
    }
}

fn open_file(
    path: &std::path::Path,
    label: &str,
    object: Option<&str>,
    columns: Option<&[String]>,
    one: bool,
    read: &rdarrow_arrow::ReadOptions,
) -> Result<FileTable, String> {
    let stream_name = rdarrow_arrow::stream_object_name(path);
    let opts = TableOptions {
        col_select: columns.map(|c| c.iter().cloned().map(ColumnRef::Name).collect()),
        default_tz: rdarrow_arrow::session_zone(),
        // DuckDB's timestamps are microseconds
        time_unit: Some(TimeUnit::Microsecond),
        one_object: one,
        ..Default::default()
    };
    let t = rdarrow_arrow::open_table(
        path,
        object,
        &stream_name,
        opts,
        read.clone(),
        &std::env::temp_dir(),
        None,
        rdarrow_arrow::DEFAULT_MEMORY,
        None,
    )
    .map_err(|e| in_scanned_file(label, e))?;
    let rows = t.source.num_rows();
    Ok(FileTable {
        label: label.to_string(),
        source: t.source,
        rows,
    })
}

/// The levels of each dictionary column of `t`.
fn levels_of(t: &FileTable) -> Result<Vec<Option<ArrayRef>>, String> {
    let schema = t.source.schema();
    (0..schema.fields().len())
        .map(|j| match schema.field(j).data_type() {
            DataType::Dictionary(..) => {
                // no rows: the levels, no code converted
                let part = t.source.column(j, 0, 0).map_err(|e| in_scanned_file(&t.label, e))?;
                Ok(part.as_any_dictionary_opt().map(|d| d.values().clone()))
            }
            _ => Ok(None),
        })
        .collect()
}

/// What the function was called with.
struct Call {
    paths: Vec<String>,
    object: Option<String>,
    columns: Option<Vec<String>>,
    filename: bool,
    /// The read options (an object store's `storage_options`; `salvage`:
    /// what is intact of a damaged file, without a word, as DuckDB has no
    /// channel for warnings: the caller asked for it by name).
    read: rdarrow_arrow::ReadOptions,
}

unsafe fn call_of(info: ffi::duckdb_bind_info, named: bool) -> Result<Call, String> {
    let path = Value(ffi::duckdb_bind_get_parameter(info, 0));
    let paths = path.strings("the path")?;
    let get = |name: &str| {
        if !named && name != "storage_options" && name != "salvage" {
            return Value(std::ptr::null_mut());
        }
        let n = c_string(name);
        Value(ffi::duckdb_bind_get_named_parameter(info, n.as_ptr()))
    };
    let read = rdarrow_arrow::ReadOptions {
        salvage: get("salvage").boolean().unwrap_or(false),
        ..crate::api::read_options(get("storage_options").pairs("storage_options")?)
    };
    let object = get("object").text();
    let columns = {
        let v = get("columns");
        if v.is_null() {
            None
        } else {
            Some(v.strings("columns")?)
        }
    };
    let filename = get("filename").boolean().unwrap_or(false);
    Ok(Call {
        paths,
        object,
        columns,
        filename,
        read,
    })
}

unsafe fn bind(info: ffi::duckdb_bind_info, named: bool) -> Result<(), String> {
    let call = call_of(info, named)?;
    let sources = sources_of(&call.paths, &call.read)?;
    let threads = rdarrow_arrow::batches::rows::all_cores();
    let opened: Vec<Result<FileTable, String>> =
        rdarrow_arrow::batches::rows::per_column(sources.len(), threads.min(sources.len()), |i| {
            let (path, label) = &sources[i];
            Ok(open_file(
                path,
                label,
                call.object.as_deref(),
                call.columns.as_deref(),
                // read_rds(): the one object of each file
                !named,
                &call.read,
            ))
        })
        .map_err(|e| e.to_string())?;
    let files = opened.into_iter().collect::<Result<Vec<_>, _>>()?;
    let levels = files.iter().map(levels_of).collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<UnionInput<'_>> = files
        .iter()
        .zip(levels)
        .map(|(f, levels)| UnionInput {
            label: &f.label,
            schema: f.source.schema(),
            levels,
        })
        .collect();
    let union = union_by_name(&inputs).map_err(|e| format!("rdarrow: {e}"))?;
    drop(inputs);
    for (k, f) in union.schema.fields().iter().enumerate() {
        let t = logical_type(f.data_type(), union.levels[k].as_ref())
            .map_err(|e| format!("rdarrow: column '{}': {e}", f.name()))?;
        let name = c_string(f.name());
        ffi::duckdb_bind_add_result_column(info, name.as_ptr(), t.0);
    }
    if call.filename {
        if union.schema.index_of("filename").is_ok() {
            return Err("rdarrow: the data already has a column 'filename'".into());
        }
        let t = LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        ffi::duckdb_bind_add_result_column(info, c"filename".as_ptr(), t.0);
    }
    let rows: usize = files.iter().map(|f| f.rows).sum();
    ffi::duckdb_bind_set_cardinality(info, rows as ffi::idx_t, true);
    let bind = Box::new(Arc::new(Bind {
        files,
        union,
        filename: call.filename,
    }));
    ffi::duckdb_bind_set_bind_data(
        info,
        Box::into_raw(bind) as *mut c_void,
        Some(drop_box::<Arc<Bind>>),
    );
    Ok(())
}

unsafe extern "C" fn bind_read_rdata(info: ffi::duckdb_bind_info) {
    on_bind(info, || bind(info, true));
}

unsafe extern "C" fn bind_read_rds(info: ffi::duckdb_bind_info) {
    on_bind(info, || bind(info, false));
}

unsafe extern "C" fn init(info: ffi::duckdb_init_info) {
    guarded(
        || {
            let bind = &*(ffi::duckdb_init_get_bind_data(info) as *const Arc<Bind>);
            let n = ffi::duckdb_init_get_column_count(info) as usize;
            let projected: Vec<usize> = (0..n)
                .map(|k| ffi::duckdb_init_get_column_index(info, k as ffi::idx_t) as usize)
                .collect();
            let mut units = Vec::new();
            let mut row = 0;
            for (file, f) in bind.files.iter().enumerate() {
                for (start, len) in rdarrow_arrow::batches::rows::row_groups(f.rows, UNIT_ROWS) {
                    units.push(Unit {
                        file,
                        start,
                        len,
                        first: row + start,
                    });
                }
                row += f.rows;
            }
            let threads = rdarrow_arrow::batches::rows::all_cores()
                .min(units.len())
                .max(1);
            ffi::duckdb_init_set_max_threads(info, threads as ffi::idx_t);
            let (to, from) = std::sync::mpsc::sync_channel(1);
            let (b, u) = (bind.clone(), units.clone());
            let producer = std::thread::Builder::new()
                .name("rdarrow-scan".into())
                .spawn(move || produce(b, u, projected, to))
                .map_err(|e| format!("rdarrow: cannot start the scan: {e}"))?;
            let global = Box::new(Global {
                units,
                taken: Mutex::new(Some(from)),
                producer: Some(producer),
            });
            ffi::duckdb_init_set_init_data(
                info,
                Box::into_raw(global) as *mut c_void,
                Some(drop_box::<Global>),
            );
            Ok(())
        },
        |m| ffi::duckdb_init_set_error(info, message(m).as_ptr()),
    );
}

unsafe extern "C" fn local_init(info: ffi::duckdb_init_info) {
    let local = Box::new(Mutex::new(Local::default()));
    ffi::duckdb_init_set_init_data(
        info,
        Box::into_raw(local) as *mut c_void,
        Some(drop_box::<Mutex<Local>>),
    );
}

/// Column `c` (of the union, else `filename` or DuckDB's row id) of
/// `unit`, converted.
fn convert(bind: &Bind, unit: Unit, c: usize) -> Result<ArrayRef, String> {
    let file = &bind.files[unit.file];
    let ncol = bind.columns();
    if c < ncol {
        let want = bind.union.schema.field(c).data_type();
        let column = match bind.union.sources[unit.file][c] {
            Some(j) => Some(
                file.source
                    .column(j, unit.start, unit.len)
                    .map_err(|e| in_scanned_file(&file.label, e))?,
            ),
            None => None,
        };
        conform(column, want, unit.len)
            .map_err(|e| in_scanned_file(&file.label, e.in_object(bind.union.schema.field(c).name())))
    } else if c == ncol && bind.filename {
        Ok(Arc::new(StringArray::from(vec![file.label.as_str(); unit.len])) as ArrayRef)
    } else {
        let first = unit.first as i64;
        Ok(Arc::new(Int64Array::from_iter_values(first..first + unit.len as i64)) as ArrayRef)
    }
}

/// Convert the `projected` columns of `units` in order, a few units ahead
/// on all cores, handing each to `to` until nobody takes them.
fn produce(
    bind: Arc<Bind>,
    units: Vec<Unit>,
    projected: Vec<usize>,
    to: std::sync::mpsc::SyncSender<Converted>,
) {
    let threads = rdarrow_arrow::batches::rows::all_cores();
    let failed = std::cell::Cell::new(false);
    let outcome = rdarrow_arrow::batches::rows::by_row_group(
        units.len(),
        projected.len().max(1),
        threads,
        |_| Ok(()),
        |g, k, _| match projected.get(k) {
            Some(&c) => convert(&bind, units[g], c)
                .map(Some)
                .map_err(rdarrow_arrow::Error::usage),
            None => Ok(None),
        },
        |g, cells| {
            let arrays = cells.into_iter().flatten().collect();
            to.send(Ok((g, arrays))).map_err(|_| {
                failed.set(true);
                rdarrow_arrow::Error::new(
                    rdarrow_arrow::ErrorKind::Interrupted,
                    "the query stopped",
                )
            })
        },
    );
    if let Err(e) = outcome {
        if !failed.get() {
            let _ = to.send(Err(e.message));
        }
    }
}

unsafe fn scan(
    info: ffi::duckdb_function_info,
    output: ffi::duckdb_data_chunk,
) -> Result<(), String> {
    let global = &*(ffi::duckdb_function_get_init_data(info) as *const Global);
    let local = &*(ffi::duckdb_function_get_local_init_data(info) as *const Mutex<Local>);
    let mut local = local.lock().map_err(|_| "rdarrow: a scan thread failed")?;
    while local.done == local.len {
        let next = {
            let taken = global
                .taken
                .lock()
                .map_err(|_| "rdarrow: a scan thread failed")?;
            taken.as_ref().and_then(|r| r.recv().ok())
        };
        let Some(next) = next else {
            ffi::duckdb_data_chunk_set_size(output, 0);
            return Ok(());
        };
        let (u, arrays) = next?;
        local.arrays = arrays;
        local.len = global.units[u].len;
        local.done = 0;
    }
    let m = (local.len - local.done).min(ffi::duckdb_vector_size() as usize);
    for (k, a) in local.arrays.iter().enumerate() {
        let part = a.slice(local.done, m);
        vectors::write(
            part.as_ref(),
            ffi::duckdb_data_chunk_get_vector(output, k as ffi::idx_t),
            0,
        )?;
    }
    local.done += m;
    ffi::duckdb_data_chunk_set_size(output, m as ffi::idx_t);
    Ok(())
}

unsafe extern "C" fn func(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    on_scan(info, || scan(info, output));
}

/// Register `read_rdata` and `read_rds` on `con`.
pub unsafe fn register(con: ffi::duckdb_connection) -> Result<(), String> {
    let text = || LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
    let boolean = || LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN);
    let named = vec![
        (c"object", text()),
        (
            c"columns",
            LogicalType(ffi::duckdb_create_list_type(text().0)),
        ),
        (c"filename", boolean()),
        (c"storage_options", crate::api::storage_options_type()),
        (c"salvage", boolean()),
    ];
    for (name, bind, named) in [
        (
            c"read_rdata",
            bind_read_rdata as unsafe extern "C" fn(_),
            named,
        ),
        (
            c"read_rds",
            bind_read_rds as unsafe extern "C" fn(_),
            vec![(c"storage_options", crate::api::storage_options_type()), (c"salvage", boolean())],
        ),
    ] {
        TableFunction {
            name,
            named,
            bind,
            init,
            local_init: Some(local_init),
            func,
            projection_pushdown: true,
        }
        .register(con)?;
    }
    Ok(())
}
