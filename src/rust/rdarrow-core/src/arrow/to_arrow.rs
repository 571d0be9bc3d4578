//! R objects (data frames, vectors, factors, matrices) to Arrow record
//! batches. Integer, double, integer64, raw and UTF-8 string payloads are
//! wrapped, not copied: the arrays share the buffers the reader filled.

use super::metadata;
use crate::altrep;
use crate::encoding;
use crate::error::{Error, Result};
use crate::tree::na::is_na_real;
use crate::tree::*;
use crate::Document;
use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// A column chosen by name or by 1-based position.
#[derive(Debug, Clone)]
pub enum ColumnRef {
    Name(String),
    Position(usize),
}

#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// Columns to keep, in this order (all when `None`).
    pub col_select: Option<Vec<ColumnRef>>,
    /// Rows per record batch (one batch when `None`).
    pub chunk_size: Option<usize>,
    /// The zone given to POSIXct values without a `tzone` (arrow R uses the
    /// session's zone); `None` leaves them without a zone.
    pub default_tz: Option<String>,
    /// The name of a single column made from a vector.
    pub object_name: String,
    /// Columns already converted while the file was read (see
    /// [`EarlyColumns`]).
    pub early_columns: Option<Arc<EarlyColumns>>,
}

/// Columns converted while their file is still being read. The parser
/// hands each column of a top-level list (a data frame's columns) to the
/// hook from [`EarlyColumns::hook`], on the parsing thread, which otherwise
/// waits for the decompressor: the column becomes its Arrow array at once
/// and its R payload is released (a logical vector's 32-bit values, a
/// Date's doubles, a factor's codes are never all held beside the table).
/// The table conversion then takes the array instead of converting again.
pub struct EarlyColumns {
    default_tz: Option<String>,
    done: std::sync::Mutex<HashMap<usize, Result<(DataType, ArrayRef)>>>,
}

impl std::fmt::Debug for EarlyColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EarlyColumns").field("default_tz", &self.default_tz).finish()
    }
}

impl EarlyColumns {
    /// `default_tz` as in [`TableOptions::default_tz`].
    pub fn new(default_tz: Option<String>) -> Arc<Self> {
        Arc::new(EarlyColumns { default_tz, done: std::sync::Mutex::new(HashMap::new()) })
    }

    /// The parser's hook ([`crate::ReadOptions::column_hook`]).
    pub fn hook(self: &Arc<Self>) -> crate::ColumnHook {
        let me = self.clone();
        Arc::new(move |obj: &mut RObject, refs: &RefTable, header: &crate::StreamHeader| me.convert(obj, refs, header))
    }

    fn convert(&self, obj: &mut RObject, refs: &RefTable, header: &crate::StreamHeader) {
        let conv = Converter { refs, native: header.native_encoding.as_deref(), doc: None, default_tz: self.default_tz.as_deref(), early: None };
        if let RObject::Altrep(a) = obj {
            // a compact sequence or wrapper: expanded and converted now (its
            // node stays, for the table's row count and metadata)
            let attrs = match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            };
            if class_attr_of(attrs, refs).iter().any(|c| c == "data.frame") {
                return;
            }
            let result = conv.column(obj, "");
            self.done.lock().unwrap_or_else(|e| e.into_inner()).insert(object_key(obj), result);
            return;
        }
        let RObject::Vector(v) = obj else { return };
        if class_attr_of(v.attributes.as_ref(), refs).iter().any(|c| c == "data.frame") {
            return;
        }
        // list and data-frame columns convert with their parent
        let Some(payload) = take_payload(obj) else { return };
        let result = conv.column_with(obj, Some(payload), "");
        self.done.lock().unwrap_or_else(|e| e.into_inner()).insert(object_key(obj), result);
    }

    /// The array made from this column while reading, if any.
    fn take(&self, obj: &RObject) -> Option<Result<(DataType, ArrayRef)>> {
        self.done.lock().unwrap_or_else(|e| e.into_inner()).remove(&object_key(obj))
    }
}

/// Where a vector or ALTREP node lives (it stays there while the object
/// moves); 0 for anything else.
fn object_key(obj: &RObject) -> usize {
    match obj {
        RObject::Vector(v) => &**v as *const Vector as usize,
        RObject::Altrep(a) => &**a as *const Altrep as usize,
        _ => 0,
    }
}

/// Move an atomic vector's payload out of its node (which keeps its
/// attributes and a skipped payload of the same type and length), so the
/// conversion owns the only reference to its buffers.
fn take_payload(obj: &mut RObject) -> Option<VectorData> {
    let RObject::Vector(v) = obj else { return None };
    if matches!(v.data, VectorData::List(_) | VectorData::Expression(_) | VectorData::Skipped { .. }) {
        return None;
    }
    let (sxptype, len) = (v.data.sxptype(), v.data.len());
    Some(std::mem::replace(&mut v.data, VectorData::Skipped { sxptype, len }))
}

/// A schema and its record batches.
#[derive(Debug, Clone)]
pub struct ArrowTable {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
}

impl ArrowTable {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// A vector's data and attributes, with ALTREP expanded.
struct View<'a> {
    data: Cow<'a, VectorData>,
    attrs: Option<&'a RObject>,
}

fn view<'a>(obj: &'a RObject, refs: &RefTable) -> Result<Option<View<'a>>> {
    Ok(match obj {
        RObject::Vector(v) => Some(View { data: Cow::Borrowed(&v.data), attrs: v.attributes.as_ref() }),
        RObject::Altrep(a) => Some(View {
            data: Cow::Owned(altrep::expand(a, refs)?),
            attrs: match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            },
        }),
        RObject::Null => None,
        _ => None,
    })
}

fn attr<'a>(attrs: Option<&'a RObject>, refs: &RefTable, name: &str) -> Option<&'a RObject> {
    attrs.and_then(|a| pairlist_get(a, refs, name.as_bytes()))
}

fn strings_of(obj: Option<&RObject>) -> Vec<String> {
    strings_in(obj, &RefTable::default())
}

/// The strings of a character vector, expanding an ALTREP one (whose class
/// names resolve through `refs`).
fn strings_in(obj: Option<&RObject>, refs: &RefTable) -> Vec<String> {
    let owned;
    let s = match obj {
        Some(RObject::Altrep(a)) => {
            // e.g. names kept in an ALTREP wrapper
            owned = altrep::expand(a, refs).ok();
            match &owned {
                Some(VectorData::Character(s)) => Some(s),
                _ => None,
            }
        }
        Some(o) => o.as_strings(),
        None => None,
    };
    match s {
        Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"NA")).into_owned()).collect(),
        None => Vec::new(),
    }
}

/// What an R object is, for conversion.
fn describe(obj: &RObject, refs: &RefTable) -> String {
    let classes = obj.class(refs);
    format!("{} (type {})", classes.join("/"), sxp::type_name(obj.sxptype(refs)))
}

fn not_convertible(what: &str, obj: &RObject, refs: &RefTable) -> Error {
    Error::unsupported(format!(
        "{what} is {}, which has no Arrow equivalent; data frames, atomic vectors, factors, dates, times, matrices and lists of those convert",
        describe(obj, refs)
    ))
}


/// One pass over `n` elements: `f(i)` does the element's work (filling
/// the caller's outputs) and says whether it is valid; the validity bits
/// are gathered as it goes. `None` when every element is valid.
fn fused_validity(n: usize, mut f: impl FnMut(usize) -> bool) -> Option<NullBuffer> {
    let mut words: Vec<u64> = Vec::with_capacity(n.div_ceil(64));
    let mut all_valid = true;
    let mut start = 0;
    while start < n {
        let end = (start + 64).min(n);
        let mut w = 0u64;
        for i in start..end {
            w |= (f(i) as u64) << (i - start);
        }
        let full = if end - start == 64 { u64::MAX } else { (1u64 << (end - start)) - 1 };
        all_valid &= w == full;
        words.push(w);
        start = end;
    }
    (!all_valid).then(|| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, n)))
}

/// R logicals as Arrow booleans, values and validity in one pass.
fn logical_array(x: &[i32]) -> BooleanArray {
    let mut values: Vec<u64> = vec![0; x.len().div_ceil(64)];
    let nulls = fused_validity(x.len(), |i| {
        let b = x[i];
        values[i / 64] |= ((b != 0 && b != i32::MIN) as u64) << (i % 64);
        b != i32::MIN
    });
    BooleanArray::new(BooleanBuffer::new(Buffer::from_vec(values), 0, x.len()), nulls)
}

fn nulls_from(len: usize, valid: impl Fn(usize) -> bool) -> Option<NullBuffer> {
    let b = BooleanBuffer::collect_bool(len, valid);
    let n = NullBuffer::new(b);
    (n.null_count() > 0).then_some(n)
}

fn int_nulls(v: &[i32]) -> Option<NullBuffer> {
    if !v.contains(&i32::MIN) {
        return None;
    }
    nulls_from(v.len(), |i| v[i] != i32::MIN)
}

fn real_nulls(v: &[f64]) -> Option<NullBuffer> {
    if !v.iter().any(|&x| is_na_real(x)) {
        return None;
    }
    nulls_from(v.len(), |i| !is_na_real(v[i]))
}

/// What a table is made of, worked out from the object before any column
/// converts: the selected columns' names, the row count, the schema
/// metadata and, for a matrix, its columns as vectors.
struct TablePlan {
    is_df: bool,
    nrow: usize,
    /// Positions of the selected columns among the object's columns.
    idx: Vec<usize>,
    /// The selected columns' names, in selection order.
    names: Vec<String>,
    /// Whether each selected column is an ordered factor.
    ordered: Vec<bool>,
    /// Whether each selected column is a double Date (which becomes a
    /// timestamp when its days are fractional: noted in the metadata).
    real_date: Vec<bool>,
    metadata: HashMap<String, String>,
    /// A matrix's columns (the object's own columns otherwise).
    matrix_columns: Option<Vec<RObject>>,
}

/// A data frame's columns.
fn frame_items<'a>(obj: &'a RObject, refs: &RefTable) -> Result<&'a [RObject]> {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => Ok(items),
            _ => Err(not_convertible("the object", obj, refs)),
        },
        _ => Err(not_convertible("the object", obj, refs)),
    }
}

fn plan_table(doc: &Document, obj: &RObject, opts: &TableOptions) -> Result<TablePlan> {
    let refs = &doc.refs;
    let (names, nrow, matrix_columns): (Vec<String>, usize, Option<Vec<RObject>>);
    let is_df = obj.inherits(refs, "data.frame");
    if is_df {
        let items = frame_items(obj, refs)?;
        names = strings_in(obj.attribute(refs, "names"), refs);
        if names.len() != items.len() {
            return Err(Error::corrupt("a data frame's names do not match its columns"));
        }
        nrow = df_nrow(obj, refs, items);
        matrix_columns = None;
    } else if obj.attribute(refs, "dim").is_some_and(|d| crate::summary::r_length(d, refs) == 2) && obj.attributes().is_some() {
        // a matrix: one column per matrix column
        let v = view(obj, refs)?.ok_or_else(|| not_convertible("the object", obj, refs))?;
        let dims = int_values(obj.attribute(refs, "dim").unwrap());
        if dims.len() != 2 || dims.iter().any(|&d| d < 0) {
            return Err(Error::corrupt("a matrix's dim attribute is not two non-negative numbers"));
        }
        let (nr, nc) = (dims[0] as usize, dims[1] as usize);
        if nr.checked_mul(nc) != Some(v.data.len() as usize) {
            return Err(Error::corrupt(format!("a matrix's dimensions {nr} x {nc} do not match its length {}", v.data.len())));
        }
        let colnames = obj
            .attribute(refs, "dimnames")
            .and_then(|d| match d {
                RObject::Vector(v) => match &v.data {
                    VectorData::List(l) if l.len() == 2 => Some(strings_of(Some(&l[1]))),
                    _ => None,
                },
                _ => None,
            })
            .filter(|n| n.len() == nc)
            .unwrap_or_else(|| (1..=nc).map(|i| format!("V{i}")).collect());
        matrix_columns = Some((0..nc).map(|j| slice_column(&v.data, j * nr, nr)).collect::<Result<_>>()?);
        names = colnames;
        nrow = nr;
    } else {
        let len = match view(obj, refs)? {
            Some(v) => v.data.len() as usize,
            None => return Err(not_convertible("the object", obj, refs)),
        };
        names = vec![opts.object_name.clone()];
        matrix_columns = None;
        nrow = len;
    }

    // column selection
    let mut idx: Vec<usize> = (0..names.len()).collect();
    if let Some(sel) = &opts.col_select {
        idx = sel
            .iter()
            .map(|c| match c {
                ColumnRef::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                    Error::usage(format!("column '{n}' not found; the columns are: {}", names.join(", ")))
                }),
                ColumnRef::Position(p) if *p >= 1 && *p <= names.len() => Ok(p - 1),
                ColumnRef::Position(p) => Err(Error::usage(format!("column position {p} is out of range 1..{}", names.len()))),
            })
            .collect::<Result<_>>()?;
    }

    let all_columns: Vec<&RObject> = match (&matrix_columns, is_df) {
        (Some(m), _) => m.iter().collect(),
        (None, true) => frame_items(obj, refs)?.iter().collect(),
        (None, false) => vec![obj],
    };
    let sel_names: Vec<&str> = idx.iter().map(|&i| names[i].as_str()).collect();
    let sel_cols: Vec<&RObject> = idx.iter().map(|&i| all_columns[i]).collect();
    let mut metadata = HashMap::new();
    let frame = if is_df { Some(obj) } else { None };
    if let Some(r) = metadata::r_metadata(doc, frame, &sel_names, &sel_cols)? {
        metadata.insert("r".to_string(), r);
    }
    let notes = metadata::fidelity_notes(refs, frame, &sel_names, &sel_cols);
    if !notes.is_empty() {
        metadata.insert(metadata::FIDELITY_KEY.to_string(), notes);
    }
    let ordered = sel_cols.iter().map(|c| c.inherits(refs, "ordered")).collect();
    let real_date = sel_cols.iter().map(|c| c.sxptype(refs) == sxp::REAL && c.inherits(refs, "Date")).collect();
    let names = sel_names.iter().map(|s| s.to_string()).collect();
    Ok(TablePlan { is_df, nrow, idx, names, ordered, real_date, metadata, matrix_columns })
}

/// Tables with at least this many rows convert their columns on several
/// threads.
const PARALLEL_ROWS: usize = 100_000;

/// Convert columns, in order, on up to `threads` threads (column `k` is
/// named `plan.names[name_at[k]]`).
/// Each column is dropped as soon as it has converted, so an owned column's
/// R buffers that the Arrow array does not share are freed before the next
/// column starts.
fn convert_columns(conv: &Converter, plan: &TablePlan, name_at: &[usize], columns: Vec<Cow<'_, RObject>>, threads: usize) -> Result<Vec<(DataType, ArrayRef)>> {
    let convert_one = |k: usize, col: Cow<'_, RObject>| -> Result<(DataType, ArrayRef)> {
        crate::cancel::check()?;
        let name = &plan.names[name_at[k]];
        let (dt, arr) = conv.column_cow(col, name).map_err(|e| Error { message: format!("column '{name}': {}", e.message), ..e })?;
        if arr.len() != plan.nrow {
            return Err(Error::corrupt(format!("column '{name}' has {} values but the table has {} rows", arr.len(), plan.nrow)));
        }
        Ok((dt, arr))
    };
    let n = columns.len();
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return columns.into_iter().enumerate().map(|(k, c)| convert_one(k, c)).collect();
    }
    // largest columns first, so that the threads finish together
    let mut queue: Vec<(usize, Cow<'_, RObject>)> = columns.into_iter().enumerate().collect();
    queue.sort_by_key(|(_, c)| crate::summary::r_length(c, conv.refs) as u64 * payload_width(c));
    let queue = std::sync::Mutex::new(queue);
    let results: Vec<std::sync::Mutex<Option<Result<(DataType, ArrayRef)>>>> = (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| loop {
                    if failed.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let Some((k, col)) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop() else { break };
                    let r = convert_one(k, col);
                    if r.is_err() {
                        failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                })
            })
            .collect();
        // joined here, so each thread has fully ended (its thread-local
        // destructors run) before the conversion returns
        for w in workers {
            let _ = w.join();
        }
    });
    let mut out = Vec::with_capacity(n);
    let mut first_err = None;
    for r in results {
        match r.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(x)) => out.push(x),
            Some(Err(e)) => {
                first_err.get_or_insert(e);
            }
            None => {}
        }
    }
    match first_err {
        Some(e) => Err(e),
        None if out.len() == n => Ok(out),
        None => Err(Error::usage("internal: a column was not converted")),
    }
}

/// Bytes per element of a vector's payload (for ordering work).
fn payload_width(obj: &RObject) -> u64 {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::Logical(_) | VectorData::Integer(_) => 4,
            VectorData::Real(_) => 8,
            VectorData::Complex(_) => 16,
            VectorData::Character(_) => 12,
            VectorData::List(_) => 64,
            _ => 1,
        },
        _ => 8,
    }
}

/// The schema and batches from converted columns.
fn assemble(mut plan: TablePlan, converted: Vec<(DataType, ArrayRef)>, opts: &TableOptions) -> Result<ArrowTable> {
    for (k, (dt, _)) in converted.iter().enumerate() {
        if plan.real_date[k] && matches!(dt, DataType::Timestamp(..)) {
            plan.metadata.entry(metadata::FIDELITY_KEY.to_string()).or_default().push_str(&format!("date-fractional\t{}\n", plan.names[k]));
        }
    }
    let mut fields = Vec::with_capacity(converted.len());
    let mut arrays = Vec::with_capacity(converted.len());
    for (k, (dt, arr)) in converted.into_iter().enumerate() {
        fields.push(field_for(&plan.names[k], dt, plan.ordered[k]));
        arrays.push(arr);
    }
    let nrow = plan.nrow;
    let schema = Arc::new(Schema::new_with_metadata(fields, plan.metadata));
    let batch = RecordBatch::try_new_with_options(schema.clone(), arrays, &RecordBatchOptions::new().with_row_count(Some(nrow)))
        .map_err(|e| Error::corrupt(format!("cannot assemble the record batch: {e}")))?;
    let batches = match opts.chunk_size {
        Some(n) if n > 0 && nrow > n => (0..nrow).step_by(n).map(|off| batch.slice(off, n.min(nrow - off))).collect(),
        _ => vec![batch],
    };
    Ok(ArrowTable { schema, batches })
}

fn threads_for(plan: &TablePlan) -> usize {
    if plan.nrow >= PARALLEL_ROWS && plan.idx.len() > 1 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        1
    }
}

/// The table made from one R object.
pub fn table_from_object(doc: &Document, obj: &RObject, opts: &TableOptions) -> Result<ArrowTable> {
    let conv = Converter::for_table(doc, opts);
    let mut plan = plan_table(doc, obj, opts)?;
    let matrix_columns = plan.matrix_columns.take();
    let distinct = distinct_positions(&plan.idx);
    let columns: Vec<Cow<'_, RObject>> = match (&matrix_columns, plan.is_df) {
        (Some(m), _) => distinct.iter().map(|&i| Cow::Borrowed(&m[i])).collect(),
        (None, true) => {
            let items = frame_items(obj, &doc.refs)?;
            distinct.iter().map(|&i| Cow::Borrowed(&items[i])).collect()
        }
        (None, false) => distinct.iter().map(|_| Cow::Borrowed(obj)).collect(),
    };
    convert_and_assemble(&conv, plan, &distinct, columns, opts)
}

/// As [`table_from_object`], consuming the object: each column's R buffers
/// that the Arrow arrays do not share (a logical vector's 32-bit values, a
/// Date's doubles, a factor's codes) are freed as soon as the column has
/// converted, and a POSIXct's doubles become its timestamps in place, so
/// the R object and the whole table are never held at once.
pub fn table_from_owned(doc: &Document, mut obj: RObject, opts: &TableOptions) -> Result<ArrowTable> {
    let conv = Converter::for_table(doc, opts);
    let mut plan = plan_table(doc, &obj, opts)?;
    let distinct = distinct_positions(&plan.idx);
    let columns: Vec<Cow<'_, RObject>> = match (plan.matrix_columns.take(), plan.is_df, &mut obj) {
        (Some(mut m), _, _) => take_selected(&mut m, &distinct),
        (None, true, RObject::Vector(v)) => match &mut v.data {
            VectorData::List(items) => take_selected(items, &distinct),
            _ => return Err(not_convertible("the object", &obj, &doc.refs)),
        },
        (None, _, _) if distinct.is_empty() => Vec::new(),
        (None, _, _) => vec![Cow::Owned(obj)],
    };
    convert_and_assemble(&conv, plan, &distinct, columns, opts)
}

/// The distinct column positions of a selection, in first-use order (a
/// column selected twice converts once).
fn distinct_positions(idx: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    idx.iter().copied().filter(|i| seen.insert(*i)).collect()
}

/// Convert the distinct columns (`columns[k]` is column `distinct[k]`)
/// and lay them out in the order of the selection.
fn convert_and_assemble(conv: &Converter, plan: TablePlan, distinct: &[usize], columns: Vec<Cow<'_, RObject>>, opts: &TableOptions) -> Result<ArrowTable> {
    let threads = threads_for(&plan);
    // names for the distinct columns (errors name the column)
    let first_use: Vec<usize> = distinct.iter().map(|d| plan.idx.iter().position(|i| i == d).expect("selected")).collect();
    let converted = convert_columns(conv, &plan, &first_use, columns, threads)?;
    let ordered = plan
        .idx
        .iter()
        .map(|i| converted[distinct.iter().position(|d| d == i).expect("selected")].clone())
        .collect();
    assemble(plan, ordered, opts)
}

/// The columns at the distinct positions `idx` (in that order), moved out
/// of `items`.
fn take_selected(items: &mut [RObject], idx: &[usize]) -> Vec<Cow<'static, RObject>> {
    idx.iter().map(|&i| Cow::Owned(std::mem::replace(&mut items[i], RObject::Null))).collect()
}

/// The field of a column: ordered factors carry the ordered flag.
fn field_for(name: &str, dt: DataType, ordered: bool) -> Field {
    if ordered && matches!(dt, DataType::Dictionary(..)) {
        #[allow(deprecated)]
        return Field::new_dict(name, dt, true, 0, true);
    }
    Field::new(name, dt, true)
}

/// `y.round() as i64` (halves away from zero, saturating), without the
/// library call that `f64::round` compiles to on baseline x86-64.
#[inline]
pub(crate) fn round_to_i64(y: f64) -> i64 {
    if !(y.abs() < 9.0e18) {
        return y as i64; // saturates; NaN gives 0
    }
    let t = y as i64; // toward zero
    let frac = y - t as f64; // exact: y and t share their leading bits
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// Whether `y` is a whole number that fits an i64 (the test `fract() == 0`
/// makes, without its library call).
#[inline]
pub(crate) fn is_whole(y: f64) -> bool {
    y.abs() < 9.0e18 && (y as i64) as f64 == y
}

fn int_values(obj: &RObject) -> Vec<i64> {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&i| i as i64).collect(),
            VectorData::Real(x) => x.iter().map(|&f| f as i64).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn df_nrow(obj: &RObject, refs: &RefTable, items: &[RObject]) -> usize {
    match obj.attribute(refs, "row.names") {
        Some(RObject::Vector(v)) => match &v.data {
            VectorData::Integer(x) if x.len() == 2 && x[0] == i32::MIN => x[1].unsigned_abs() as usize,
            d => d.len() as usize,
        },
        Some(RObject::Altrep(a)) => altrep::length(a, refs).unwrap_or(0) as usize,
        _ => items.first().map(|c| crate::summary::r_length(c, refs) as usize).unwrap_or(0),
    }
}

/// Column `j` of a matrix, as a plain vector (zero-copy for numbers).
fn slice_column(data: &VectorData, off: usize, len: usize) -> Result<RObject> {
    let d = match data {
        VectorData::Logical(x) => VectorData::Logical(x.slice(off, len)),
        VectorData::Integer(x) => VectorData::Integer(x.slice(off, len)),
        VectorData::Real(x) => VectorData::Real(x.slice(off, len)),
        VectorData::Complex(x) => VectorData::Complex(x.slice(off * 2, len * 2)),
        VectorData::Raw(x) => VectorData::Raw(x.slice_with_length(off, len)),
        VectorData::Character(s) => {
            let items: Vec<Option<Vec<u8>>> = (off..off + len).map(|i| s.get(i).map(|b| b.to_vec())).collect();
            let lv: Vec<u16> = (off..off + len).map(|i| s.levels(i)).collect();
            VectorData::Character(string_vector(items, lv))
        }
        VectorData::List(l) => VectorData::List(l[off..off + len].to_vec()),
        _ => return Err(Error::unsupported("this matrix type has no Arrow equivalent")),
    };
    Ok(RObject::Vector(Box::new(Vector { flags: Flags::default(), data: d, attributes: None })))
}

fn string_vector(items: Vec<Option<Vec<u8>>>, levels: Vec<u16>) -> StringVector {
    let mut offsets: Vec<i64> = vec![0];
    let mut data = Vec::new();
    for s in items.iter() {
        if let Some(b) = s {
            data.extend_from_slice(b);
        }
        offsets.push(data.len() as i64);
    }
    let validity = nulls_from(items.len(), |i| items[i].is_some());
    StringVector {
        // SAFETY: non-decreasing, ending at data.len().
        offsets: StringOffsets::Large(unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) }),
        data: Buffer::from_vec(data),
        validity,
        levels: StringLevels::PerElement(levels.into()),
    }
}

struct Converter<'d> {
    refs: &'d RefTable,
    /// The stream's native encoding.
    native: Option<&'d [u8]>,
    /// The document, for data-frame columns (absent while reading).
    doc: Option<&'d Document>,
    default_tz: Option<&'d str>,
    early: Option<&'d EarlyColumns>,
}

impl<'d> Converter<'d> {
    fn for_table(doc: &'d Document, opts: &'d TableOptions) -> Self {
        Converter {
            refs: &doc.refs,
            native: doc.header.native_encoding.as_deref(),
            doc: Some(doc),
            default_tz: opts.default_tz.as_deref(),
            early: opts.early_columns.as_deref(),
        }
    }

    fn refs(&self) -> &RefTable {
        self.refs
    }

    /// [`Self::column`] for a column that may be owned: an owned vector's
    /// payload moves into the conversion (a POSIXct's doubles become its
    /// timestamps in their own buffer).
    fn column_cow(&self, col: Cow<'_, RObject>, name: &str) -> Result<(DataType, ArrayRef)> {
        match col {
            Cow::Owned(mut obj) => {
                let payload = take_payload(&mut obj);
                self.column_with(&obj, payload, name)
            }
            Cow::Borrowed(obj) => self.column(obj, name),
        }
    }

    /// The zone of a POSIXct column: its `tzone`, else the default zone.
    fn zone_of(&self, attrs: Option<&RObject>) -> Option<String> {
        let tz = strings_of(attr(attrs, self.refs(), "tzone")).into_iter().next().filter(|s| !s.is_empty());
        tz.or_else(|| self.default_tz.map(|s| s.to_string()))
    }

    fn column(&self, obj: &RObject, name: &str) -> Result<(DataType, ArrayRef)> {
        self.column_with(obj, None, name)
    }

    /// [`Self::column`], the vector's payload given (moved out of `obj`
    /// by [`take_payload`]) or else read from `obj`.
    fn column_with(&self, obj: &RObject, payload: Option<VectorData>, name: &str) -> Result<(DataType, ArrayRef)> {
        if let Some(done) = self.early.and_then(|early| early.take(obj)) {
            return done;
        }
        let refs = self.refs();
        let classes = obj.class_attr(refs);
        let has = |c: &str| classes.iter().any(|x| x == c);
        if has("data.frame") {
            return self.struct_column(obj, name);
        }
        let v = match (payload, obj) {
            (Some(data), RObject::Vector(v)) => Some(View { data: Cow::Owned(data), attrs: v.attributes.as_ref() }),
            _ => view(obj, refs)?,
        };
        let v = match v {
            Some(v) => v,
            None => {
                if matches!(obj, RObject::Null) {
                    return Ok((DataType::Null, Arc::new(NullArray::new(0))));
                }
                return Err(not_convertible("the value", obj, refs));
            }
        };
        let data: &VectorData = &v.data;
        if has("factor") {
            return self.factor(data, v.attrs, has("ordered"));
        }
        if has("integer64") {
            if let VectorData::Real(x) = data {
                let ints: ScalarBuffer<i64> = ScalarBuffer::new(x.inner().clone(), 0, x.len());
                let nulls = if ints.contains(&i64::MIN) { nulls_from(ints.len(), |i| ints[i] != i64::MIN) } else { None };
                return Ok((DataType::Int64, Arc::new(Int64Array::new(ints, nulls))));
            }
        }
        if has("Date") {
            return date(data);
        }
        if has("POSIXct") {
            if let VectorData::Real(_) | VectorData::Integer(_) = data {
                let tz = self.zone_of(v.attrs);
                let micros = to_scaled_i64(v.data, 1e6);
                let arr = TimestampMicrosecondArray::new(micros.0, micros.1).with_timezone_opt(tz.clone());
                return Ok((DataType::Timestamp(TimeUnit::Microsecond, tz.map(Into::into)), Arc::new(arr)));
            }
        }
        if has("hms") {
            return time_of_day(data);
        }
        if has("difftime") {
            let units = strings_of(attr(v.attrs, refs, "units")).into_iter().next().unwrap_or_else(|| "secs".into());
            let mult = match units.as_str() {
                "secs" => 1.0,
                "mins" => 60.0,
                "hours" => 3600.0,
                "days" => 86400.0,
                "weeks" => 604800.0,
                other => return Err(Error::unsupported(format!("difftime units '{other}' are unknown"))),
            };
            return duration(data, mult);
        }
        self.plain(data, name)
    }

    fn plain(&self, data: &VectorData, name: &str) -> Result<(DataType, ArrayRef)> {
        Ok(match data {
            VectorData::Logical(x) => (DataType::Boolean, Arc::new(logical_array(x))),
            VectorData::Integer(x) => (DataType::Int32, Arc::new(Int32Array::new(x.clone(), int_nulls(x)))),
            VectorData::Real(x) => (DataType::Float64, Arc::new(Float64Array::new(x.clone(), real_nulls(x)))),
            VectorData::Raw(b) => {
                (DataType::UInt8, Arc::new(UInt8Array::new(ScalarBuffer::new(b.clone(), 0, b.len()), None)))
            }
            VectorData::Character(s) => self.strings(s)?,
            VectorData::Complex(x) => {
                let n = x.len() / 2;
                let re: Vec<f64> = (0..n).map(|i| x[2 * i]).collect();
                let im: Vec<f64> = (0..n).map(|i| x[2 * i + 1]).collect();
                let fields = Fields::from(vec![Field::new("re", DataType::Float64, true), Field::new("im", DataType::Float64, true)]);
                // R's complex NA (either part NA_real_) is a null slot
                let nulls = nulls_from(n, |i| !is_na_real(re[i]) && !is_na_real(im[i]));
                let arr = StructArray::new(
                    fields.clone(),
                    vec![Arc::new(Float64Array::new(re.into(), nulls.clone())) as ArrayRef, Arc::new(Float64Array::new(im.into(), nulls.clone()))],
                    nulls,
                );
                (DataType::Struct(fields), Arc::new(arr))
            }
            VectorData::List(items) => self.list(items, name)?,
            VectorData::Expression(_) => return Err(Error::unsupported("an expression vector has no Arrow equivalent")),
            VectorData::Skipped { .. } => return Err(Error::usage("internal: payload skipped")),
        })
    }

    /// A character vector as utf8, wrapping the buffers when they are
    /// UTF-8 already.
    fn strings(&self, s: &StringVector) -> Result<(DataType, ArrayRef)> {
        let native = self.native;
        let native_utf8 = native.is_none_or(encoding::is_utf8_name);
        let zero_copy = match &s.levels {
            StringLevels::Uniform(l) => l & (levels::LATIN1 | levels::BYTES) == 0 && (l & (levels::UTF8 | levels::ASCII) != 0 || native_utf8),
            StringLevels::PerElement(v) => v.iter().all(|l| l & (levels::LATIN1 | levels::BYTES) == 0 && (l & (levels::UTF8 | levels::ASCII) != 0 || native_utf8)),
        } && std::str::from_utf8(&s.data).is_ok();
        if zero_copy {
            // Each string is valid UTF-8 on its own: they were written as
            // whole strings and the concatenation validated.
            return Ok(match &s.offsets {
                StringOffsets::Small(o) => (
                    DataType::Utf8,
                    // SAFETY: offsets are monotonic within data; data is valid UTF-8 and
                    // every offset falls on a string boundary, hence a char boundary.
                    Arc::new(unsafe { StringArray::new_unchecked(o.clone(), s.data.clone(), s.validity.clone()) }),
                ),
                StringOffsets::Large(o) => (
                    DataType::LargeUtf8,
                    Arc::new(unsafe { LargeStringArray::new_unchecked(o.clone(), s.data.clone(), s.validity.clone()) }),
                ),
            });
        }
        // transcode
        let mut out: Vec<Option<String>> = Vec::with_capacity(s.len());
        for i in 0..s.len() {
            match s.get(i) {
                None => out.push(None),
                Some(b) => {
                    let (enc, u) = encoding::to_utf8(b, s.levels(i), native);
                    match String::from_utf8(u.into_owned()) {
                        Ok(st) => out.push(Some(st)),
                        Err(_) => {
                            return Err(Error::unsupported(format!(
                                "string {} is not valid text ({} encoding) and cannot become Arrow utf8",
                                i + 1,
                                match enc {
                                    encoding::CharEncoding::Bytes => "\"bytes\"",
                                    _ => "unknown",
                                }
                            )))
                        }
                    }
                }
            }
        }
        let total: usize = out.iter().map(|s| s.as_ref().map_or(0, |x| x.len())).sum();
        if total > i32::MAX as usize {
            Ok((DataType::LargeUtf8, Arc::new(LargeStringArray::from(out))))
        } else {
            Ok((DataType::Utf8, Arc::new(StringArray::from(out))))
        }
    }

    fn factor(&self, data: &VectorData, attrs: Option<&RObject>, ordered: bool) -> Result<(DataType, ArrayRef)> {
        let refs = self.refs();
        let codes = match data {
            VectorData::Integer(x) => x,
            _ => return Err(Error::corrupt("a factor's codes are not integers")),
        };
        let levels_obj = attr(attrs, refs, "levels");
        let (_, values) = match levels_obj.and_then(|l| l.as_strings()) {
            Some(s) => self.strings(s)?,
            None => (DataType::Utf8, Arc::new(StringArray::from(Vec::<String>::new())) as ArrayRef),
        };
        let nlev = values.len();
        // keys (codes - 1), validity and the range check in one pass
        let mut bad: Option<i32> = None;
        macro_rules! dict {
            ($t:ty, $k:ty, $dt:expr) => {{
                let mut keys: Vec<$k> = Vec::with_capacity(codes.len());
                let nulls = fused_validity(codes.len(), |i| {
                    let c = codes[i];
                    if c == i32::MIN {
                        keys.push(0);
                        return false;
                    }
                    if c < 1 || c as usize > nlev {
                        bad.get_or_insert(c);
                        keys.push(0);
                    } else {
                        keys.push((c - 1) as $k);
                    }
                    true
                });
                if let Some(bad) = bad {
                    return Err(Error::corrupt(format!("factor code {bad} is outside its {nlev} levels")));
                }
                let keys = PrimitiveArray::<$t>::new(ScalarBuffer::from(keys), nulls);
                // SAFETY: every valid key was checked to be below the
                // number of values just above.
                let arr = unsafe { DictionaryArray::<$t>::new_unchecked(keys, values.clone()) };
                let dt = DataType::Dictionary(Box::new($dt), Box::new(values.data_type().clone()));
                (dt, Arc::new(arr) as ArrayRef)
            }};
        }
        let (dt, arr) = if nlev <= i8::MAX as usize {
            dict!(Int8Type, i8, DataType::Int8)
        } else if nlev <= i16::MAX as usize {
            dict!(Int16Type, i16, DataType::Int16)
        } else {
            dict!(Int32Type, i32, DataType::Int32)
        };
        let _ = ordered; // the ordered flag lives on the field (see `ordered_field`)
        Ok((dt, arr))
    }

    fn struct_column(&self, obj: &RObject, name: &str) -> Result<(DataType, ArrayRef)> {
        let doc = self.doc.ok_or_else(|| Error::usage("internal: a data-frame column converts with its document"))?;
        let t = table_from_object(doc, obj, &TableOptions { default_tz: self.default_tz.map(Into::into), object_name: name.into(), ..Default::default() })?;
        let batch = arrow_select::concat::concat_batches(&t.schema, &t.batches)
            .map_err(|e| Error::corrupt(format!("cannot assemble a data-frame column: {e}")))?;
        let arr = StructArray::from(batch);
        Ok((arr.data_type().clone(), Arc::new(arr)))
    }

    fn list(&self, items: &[RObject], name: &str) -> Result<(DataType, ArrayRef)> {
        // a list of raw vectors is binary data (as arrow R maps it)
        let is_raw = |o: &RObject| matches!(o, RObject::Vector(v) if matches!(v.data, VectorData::Raw(_)) && v.attributes.is_none());
        if !items.is_empty() && items.iter().all(|o| matches!(o, RObject::Null) || is_raw(o)) && items.iter().any(is_raw) {
            let vals: Vec<Option<&[u8]>> = items
                .iter()
                .map(|o| match o {
                    RObject::Vector(v) => match &v.data {
                        VectorData::Raw(b) => Some(b.as_slice()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let total: usize = vals.iter().map(|v| v.map_or(0, |b| b.len())).sum();
            return Ok(if total > i32::MAX as usize {
                (DataType::LargeBinary, Arc::new(LargeBinaryArray::from_opt_vec(vals)))
            } else {
                (DataType::Binary, Arc::new(BinaryArray::from_opt_vec(vals)))
            });
        }
        let mut children: Vec<ArrayRef> = Vec::new();
        let mut child_type: Option<DataType> = None;
        let mut offsets: Vec<i32> = vec![0];
        let mut valid = Vec::with_capacity(items.len());
        for (i, it) in items.iter().enumerate() {
            if matches!(it, RObject::Null) {
                valid.push(false);
                offsets.push(*offsets.last().unwrap());
                continue;
            }
            let (dt, arr) = self.column(it, name).map_err(|e| Error { message: format!("element {}: {}", i + 1, e.message), ..e })?;
            match &child_type {
                None => child_type = Some(dt),
                Some(t) if *t == dt => {}
                Some(t) => {
                    return Err(Error::unsupported(format!(
                        "list elements have different types ({t} and, at element {}, {dt}); a list column needs one element type",
                        i + 1
                    )))
                }
            }
            let end = *offsets.last().unwrap() as i64 + arr.len() as i64;
            if end > i32::MAX as i64 {
                return Err(Error::limit("a list column holds more than 2^31 values"));
            }
            offsets.push(end as i32);
            valid.push(true);
            children.push(arr);
        }
        let child_type = child_type.unwrap_or(DataType::Null);
        let values: ArrayRef = if children.is_empty() {
            arrow_array::new_empty_array(&child_type)
        } else {
            let refs: Vec<&dyn Array> = children.iter().map(|a| a.as_ref()).collect();
            arrow_select::concat::concat(&refs).map_err(|e| Error::corrupt(format!("cannot assemble a list column: {e}")))?
        };
        let field = Arc::new(Field::new("item", child_type, true));
        let nulls = nulls_from(valid.len(), |i| valid[i]);
        let arr = ListArray::try_new(field.clone(), OffsetBuffer::new(ScalarBuffer::from(offsets)), values, nulls)
            .map_err(|e| Error::corrupt(format!("cannot assemble a list column: {e}")))?;
        Ok((DataType::List(field), Arc::new(arr)))
    }
}

/// Values scaled by `mult` and rounded to i64, with R's NA as null. Owned
/// doubles that nothing else shares are scaled in their own buffer.
fn to_scaled_i64(data: Cow<'_, VectorData>, mult: f64) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let scale = |f: f64| if f.is_finite() { round_to_i64(f * mult) } else { 0 };
    let x = match data {
        Cow::Owned(VectorData::Real(x)) => match x.into_inner().into_vec::<f64>() {
            Ok(mut values) => {
                let nulls = fused_validity(values.len(), |i| {
                    let f = values[i];
                    values[i] = f64::from_bits(scale(f) as u64);
                    f.is_finite()
                });
                let n = values.len();
                return (ScalarBuffer::new(Buffer::from_vec(values), 0, n), nulls);
            }
            Err(shared) => {
                let n = shared.len() / 8;
                ScalarBuffer::<f64>::new(shared, 0, n)
            }
        },
        Cow::Owned(VectorData::Integer(x)) => return scaled_ints(&x, mult),
        Cow::Borrowed(VectorData::Integer(x)) => return scaled_ints(x, mult),
        Cow::Borrowed(VectorData::Real(x)) => x.clone(),
        _ => return (ScalarBuffer::from(Vec::<i64>::new()), None),
    };
    let mut v: Vec<i64> = Vec::with_capacity(x.len());
    let nulls = fused_validity(x.len(), |i| {
        v.push(scale(x[i]));
        x[i].is_finite()
    });
    (ScalarBuffer::from(v), nulls)
}

fn scaled_ints(x: &[i32], mult: f64) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let v: Vec<i64> = x.iter().map(|&i| if i == i32::MIN { 0 } else { round_to_i64(i as f64 * mult) }).collect();
    (ScalarBuffer::from(v), int_nulls(x))
}

fn all_integral(x: &[f64], mult: f64) -> bool {
    x.iter().all(|&f| !f.is_finite() || is_whole(f * mult))
}

fn date(data: &VectorData) -> Result<(DataType, ArrayRef)> {
    match data {
        VectorData::Integer(x) => Ok((DataType::Date32, Arc::new(Date32Array::new(x.clone(), int_nulls(x))))),
        VectorData::Real(x) => {
            // whole days within date32's range, and validity, in one pass;
            // else (fractional or out of range) below
            let mut days: Vec<i32> = Vec::with_capacity(x.len());
            let mut whole = true;
            let nulls = fused_validity(x.len(), |i| {
                let f = x[i];
                if !f.is_finite() {
                    days.push(0);
                    return false;
                }
                if f.abs() < i32::MAX as f64 && (f as i32) as f64 == f {
                    days.push(f as i32);
                } else {
                    whole = false;
                    days.push(0);
                }
                true
            });
            if whole {
                return Ok((DataType::Date32, Arc::new(Date32Array::new(ScalarBuffer::from(days), nulls))));
            }
            drop(days);
            // fractional days, which arrow R would truncate: a timestamp
            // (microseconds, no zone) keeps them; noted for the way back
            let (v, n) = to_scaled_i64(Cow::Borrowed(data), 86_400_000_000.0);
            Ok((DataType::Timestamp(TimeUnit::Microsecond, None), Arc::new(TimestampMicrosecondArray::new(v, n))))
        }
        _ => Err(Error::corrupt("a Date is neither double nor integer")),
    }
}

fn time_of_day(data: &VectorData) -> Result<(DataType, ArrayRef)> {
    let x: Vec<f64> = match data {
        VectorData::Real(x) => x.to_vec(),
        VectorData::Integer(x) => x.iter().map(|&i| if i == i32::MIN { f64::NAN } else { i as f64 }).collect(),
        _ => return Err(Error::corrupt("an hms value is neither double nor integer")),
    };
    let nulls = nulls_from(x.len(), |i| x[i].is_finite());
    let fits32 = |m: f64| x.iter().all(|&f| !f.is_finite() || (f * m).abs() <= i32::MAX as f64);
    let r = |m: f64| -> Vec<i64> { x.iter().map(|&f| if f.is_finite() { round_to_i64(f * m) } else { 0 }).collect() };
    Ok(if all_integral(&x, 1.0) && fits32(1.0) {
        let v = r(1.0).into_iter().map(|i| i as i32).collect::<Vec<_>>();
        (DataType::Time32(TimeUnit::Second), Arc::new(Time32SecondArray::new(ScalarBuffer::from(v), nulls)))
    } else if all_integral(&x, 1e3) && fits32(1e3) {
        let v = r(1e3).into_iter().map(|i| i as i32).collect::<Vec<_>>();
        (DataType::Time32(TimeUnit::Millisecond), Arc::new(Time32MillisecondArray::new(ScalarBuffer::from(v), nulls)))
    } else if all_integral(&x, 1e6) {
        (DataType::Time64(TimeUnit::Microsecond), Arc::new(Time64MicrosecondArray::new(ScalarBuffer::from(r(1e6)), nulls)))
    } else {
        (DataType::Time64(TimeUnit::Nanosecond), Arc::new(Time64NanosecondArray::new(ScalarBuffer::from(r(1e9)), nulls)))
    })
}

fn duration(data: &VectorData, mult: f64) -> Result<(DataType, ArrayRef)> {
    let x: Vec<f64> = match data {
        VectorData::Real(x) => x.iter().map(|&f| f * mult).collect(),
        VectorData::Integer(x) => x.iter().map(|&i| if i == i32::MIN { f64::NAN } else { i as f64 * mult }).collect(),
        _ => return Err(Error::corrupt("a difftime is neither double nor integer")),
    };
    let nulls = nulls_from(x.len(), |i| x[i].is_finite());
    let r = |m: f64| -> ScalarBuffer<i64> { x.iter().map(|&f| if f.is_finite() { round_to_i64(f * m) } else { 0 }).collect::<Vec<_>>().into() };
    Ok(if all_integral(&x, 1.0) {
        (DataType::Duration(TimeUnit::Second), Arc::new(DurationSecondArray::new(r(1.0), nulls)))
    } else if all_integral(&x, 1e3) {
        (DataType::Duration(TimeUnit::Millisecond), Arc::new(DurationMillisecondArray::new(r(1e3), nulls)))
    } else if all_integral(&x, 1e6) {
        (DataType::Duration(TimeUnit::Microsecond), Arc::new(DurationMicrosecondArray::new(r(1e6), nulls)))
    } else {
        (DataType::Duration(TimeUnit::Nanosecond), Arc::new(DurationNanosecondArray::new(r(1e9), nulls)))
    })
}

/// Choose the object to convert: the named one, or else the file's only
/// data frame (an RDS stream's one object).
pub fn pick_object<'d>(doc: &'d Document, object: Option<&str>) -> Result<(String, &'d RObject)> {
    pick_object_named(doc, object, "")
}

/// As [`pick_object`]; an RDS stream's one object is called `stream_name`
/// (R users name it after the file), and asking for another name is an error.
pub fn pick_object_named<'d>(doc: &'d Document, object: Option<&str>, stream_name: &str) -> Result<(String, &'d RObject)> {
    let objs = doc.objects();
    let is_rds = !matches!(doc.container, crate::Container::RData { .. });
    let names: Vec<String> = objs.iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect();
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ") };
    if let Some(name) = object {
        if is_rds {
            if !stream_name.is_empty() && name != stream_name {
                return Err(Error::usage(format!("object '{name}' not found in the file; it holds: '{stream_name}'")));
            }
            return Ok((name.to_string(), objs[0].1));
        }
        return match names.iter().position(|n| n == name) {
            Some(i) => Ok((name.to_string(), objs[i].1)),
            None => Err(Error::usage(format!("object '{name}' not found in the file; it holds: {}", list(&names)))),
        };
    }
    if is_rds {
        return Ok((stream_name.to_string(), objs[0].1));
    }
    let frames: Vec<usize> = (0..objs.len()).filter(|&i| objs[i].1.inherits(&doc.refs, "data.frame")).collect();
    match frames.len() {
        1 => Ok((names[frames[0]].clone(), objs[frames[0]].1)),
        0 => Err(Error::usage(format!("the file holds no data frame; choose an object with `object =` among: {}", list(&names)))),
        _ => {
            let cands: Vec<String> = frames.iter().map(|&i| names[i].clone()).collect();
            Err(Error::usage(format!("the file holds {} data frames; choose one with `object =`: {}", cands.len(), list(&cands))))
        }
    }
}

/// As [`pick_object_named`], moving the object out of the document (the
/// document keeps its reference table; its other objects are dropped), for
/// [`table_from_owned`].
pub fn take_object_named(doc: &mut Document, object: Option<&str>, stream_name: &str) -> Result<(String, RObject)> {
    let (name, picked) = pick_object_named(doc, object, stream_name)?;
    let picked: *const RObject = picked;
    let at = doc.objects().iter().position(|(_, o)| std::ptr::eq(*o, picked)).expect("the picked object is one of the document's");
    let obj = doc.take_objects().swap_remove(at).1;
    Ok((name, obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{self, ObjectMaker};
    use crate::{Compression, Container, Document, ErrorKind, StreamHeader};

    /// A document (RDS stream) holding `root`, with the symbols of `m`.
    pub(crate) fn doc_of(m: ObjectMaker, root: RObject) -> Document {
        Document {
            compression: Compression::None,
            container: Container::Stream,
            header: StreamHeader::utf8_v3(crate::Format::Xdr),
            root,
            refs: m.refs,
            spans: Vec::new(),
            stream_len: 0,
        }
    }

    fn convert(m: ObjectMaker, obj: RObject) -> Result<ArrowTable> {
        let doc = doc_of(m, obj);
        table_from_object(&doc, &doc.root, &TableOptions::default())
    }

    #[test]
    fn matrix_dims_must_match_the_data() {
        let data = || VectorData::Integer(ScalarBuffer::from(vec![1, 2, 3, 4, 5, 6]));
        // more cells than values (used to slice past the end)
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", build::ints(vec![3, 4]))]);
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a huge column count (used to make a billion column names)
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", build::reals(vec![0.0, 1e12]))]);
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a character dim of length 2 (used to index an empty vector)
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", build::strings([Some(&b"a"[..]), Some(&b"b"[..])]))]);
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a genuine 3 x 2 matrix converts
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", build::ints(vec![3, 2]))]);
        let t = convert(m, obj).unwrap();
        assert_eq!((t.num_rows(), t.schema.fields().len()), (3, 2));
    }

    #[test]
    fn rounding_without_the_library_call_matches_f64_round() {
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5];
        cases.extend([9.0e18, -9.0e18, 1e19, -1e19, f64::MAX, f64::MIN, 1.7e9 * 1e6 + 0.5, 123456.789e6]);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as i64 as f64) / (1u64 << (x % 60)) as f64);
        }
        for y in cases {
            assert_eq!(round_to_i64(y), y.round() as i64, "{y:e}");
            assert_eq!(is_whole(y), y.fract() == 0.0 && y.abs() < 9.0e18, "{y:e}");
        }
        assert_eq!(round_to_i64(f64::NAN), 0);
    }

    /// A data frame with every column kind whose conversion copies, large
    /// enough to convert on several threads.
    fn wide_frame(m: &mut ObjectMaker, n: usize) -> RObject {
        let class = |c: &[&str]| build::strings(c.iter().map(|s| Some(s.as_bytes())));
        let stamp: Vec<f64> = (0..n).map(|i| if i % 7 == 0 { build::na_real() } else { 1.5e9 + i as f64 * 0.123457 }).collect();
        let stamp = m.vector(VectorData::Real(stamp.into()), vec![("class", class(&["POSIXct", "POSIXt"])), ("tzone", class(&["UTC"]))]);
        let day: Vec<f64> = (0..n).map(|i| if i % 11 == 0 { build::na_real() } else { (i % 9000) as f64 }).collect();
        let day = m.vector(VectorData::Real(day.into()), vec![("class", class(&["Date"]))]);
        let late: Vec<f64> = (0..n).map(|i| i as f64 + 0.25).collect();
        let late = m.vector(VectorData::Real(late.into()), vec![("class", class(&["Date"]))]);
        let flag: Vec<i32> = (0..n).map(|i| [1, 0, i32::MIN][i % 3]).collect();
        let flag = m.vector(VectorData::Logical(flag.into()), vec![]);
        let codes: Vec<i32> = (0..n).map(|i| if i % 5 == 0 { i32::MIN } else { (i % 3) as i32 + 1 }).collect();
        let group = m.vector(VectorData::Integer(codes.into()), vec![("levels", class(&["a", "b", "c"])), ("class", class(&["ordered", "factor"]))]);
        let row_names = build::ints(vec![i32::MIN, -(n as i32)]);
        let names = ["stamp", "day", "late", "flag", "group"];
        let mut df = m.named_list(&names, vec![stamp, day, late, flag, group]);
        let attrs = m.tagged_pairlist(vec![("names", build::strings(names.iter().map(|s| Some(s.as_bytes())))), ("class", class(&["data.frame"])), ("row.names", row_names)]);
        if let RObject::Vector(v) = &mut df {
            v.attributes = attrs;
        }
        df
    }

    fn wide_doc(n: usize) -> Document {
        let mut m = ObjectMaker::default();
        let df = wide_frame(&mut m, n);
        doc_of(m, df)
    }

    #[test]
    fn owned_conversion_gives_the_same_table_as_borrowed() {
        for n in [10, PARALLEL_ROWS + 3] {
            let doc = wide_doc(n);
            for sel in [None, Some(vec![ColumnRef::Name("stamp".into()), ColumnRef::Position(1), ColumnRef::Name("group".into())])] {
                let opts = TableOptions { col_select: sel.clone(), chunk_size: Some(n / 2 + 1), ..Default::default() };
                let borrowed = table_from_object(&doc, &doc.root, &opts).unwrap();
                let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
                assert_eq!(borrowed.schema, owned.schema);
                assert_eq!(borrowed.batches, owned.batches);
                let full = arrow_select::concat::concat_batches(&owned.schema, &owned.batches).unwrap();
                assert_eq!(full.num_rows(), n);
                if sel.is_none() {
                    let types: Vec<String> = owned.schema.fields().iter().map(|f| f.data_type().to_string()).collect();
                    assert_eq!(types[..4], ["Timestamp(µs, \"UTC\")", "Date32", "Timestamp(µs)", "Boolean"]);
                    let stamp = full.column(0).as_any().downcast_ref::<TimestampMicrosecondArray>().unwrap();
                    assert!(stamp.is_null(0));
                    assert_eq!(stamp.value(1), round_to_i64((1.5e9 + 0.123457) * 1e6));
                    assert!(owned.schema.field(4).dict_is_ordered().unwrap());
                }
            }
        }
    }

    #[test]
    fn a_moved_posixct_converts_in_its_own_buffer() {
        let doc = wide_doc(1000);
        let obj = doc.root.clone();
        let stamp_ptr = match &obj {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => match &items[0] {
                    RObject::Vector(s) => match &s.data {
                        VectorData::Real(x) => x.as_ptr() as usize,
                        _ => unreachable!(),
                    },
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        // the document still shares the buffer: converted by copy
        let t = table_from_owned(&doc, obj.clone(), &TableOptions::default()).unwrap();
        assert_ne!(t.batches[0].column(0).to_data().buffers()[0].as_ptr() as usize, stamp_ptr);
        // the only holder: converted in place
        let mut doc = doc;
        doc.root = RObject::Null;
        let t2 = table_from_owned(&doc, obj, &TableOptions { col_select: Some(vec![ColumnRef::Position(1)]), ..Default::default() }).unwrap();
        assert_eq!(t2.batches[0].column(0).to_data().buffers()[0].as_ptr() as usize, stamp_ptr);
        assert_eq!(t2.batches[0].column(0).as_ref(), t.batches[0].column(0).as_ref());
    }

    #[test]
    fn a_column_selected_twice_appears_twice() {
        let mut m = ObjectMaker::default();
        let obj = m.vector(VectorData::Integer(ScalarBuffer::from(vec![1, 2, 3])), vec![]);
        let doc = doc_of(m, obj);
        let opts = TableOptions { col_select: Some(vec![ColumnRef::Position(1), ColumnRef::Position(1)]), object_name: "v".into(), ..Default::default() };
        let borrowed = table_from_object(&doc, &doc.root, &opts).unwrap();
        let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
        assert_eq!(borrowed.batches[0].num_columns(), 2);
        assert_eq!(borrowed.batches, owned.batches);
        let doc = wide_doc(5);
        let opts = TableOptions { col_select: Some(vec![ColumnRef::Name("flag".into()), ColumnRef::Name("flag".into())]), ..Default::default() };
        let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
        assert_eq!(owned.batches[0].num_columns(), 2);
        assert_eq!(owned.batches[0].column(0).as_ref(), owned.batches[0].column(1).as_ref());
    }

    #[test]
    fn columns_converted_while_reading_give_the_same_table() {
        for n in [7, PARALLEL_ROWS + 1] {
            let doc = wide_doc(n);
            let bytes = crate::write_document(&doc, Vec::new()).unwrap();
            let expected = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();

            let early = EarlyColumns::new(None);
            let read_opts = crate::ReadOptions { column_hook: Some(early.hook()), ..Default::default() };
            let mut read = crate::read_bytes(bytes, &read_opts).unwrap();
            // every column was converted and its payload released while reading
            match &read.root {
                RObject::Vector(v) => match &v.data {
                    VectorData::List(items) => assert!(items.iter().all(|c| matches!(c, RObject::Vector(v) if matches!(v.data, VectorData::Skipped { .. })))),
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            }
            // the object moves (as take_object_named moves it): its columns
            // are found by where they live
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let opts = TableOptions { early_columns: Some(early.clone()), ..Default::default() };
            let got = table_from_owned(&read, root, &opts).unwrap();
            assert_eq!(got.schema, expected.schema);
            assert_eq!(got.batches, expected.batches);

            // a selection that repeats a column, on a read with the hook
            let early = EarlyColumns::new(None);
            let read_opts = crate::ReadOptions { column_hook: Some(early.hook()), ..Default::default() };
            let mut read = crate::read_bytes(crate::write_document(&doc, Vec::new()).unwrap(), &read_opts).unwrap();
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let col_select = Some(vec![ColumnRef::Name("group".into()), ColumnRef::Position(1), ColumnRef::Name("group".into())]);
            let want = table_from_object(&doc, &doc.root, &TableOptions { col_select: col_select.clone(), ..Default::default() }).unwrap();
            let got = table_from_owned(&read, root, &TableOptions { col_select, early_columns: Some(early), ..Default::default() }).unwrap();
            assert_eq!(got.batches, want.batches);
        }
    }
}
