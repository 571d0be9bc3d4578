//! A table from an R object: [`plan_table`] works out the columns, row
//! count and schema metadata before any column converts;
//! [`convert_columns`] converts the selected columns (on several threads
//! for large tables) and [`assemble`] makes the schema and record batches.

use crate::batches::table::ArrowTable;
use crate::to_arrow::options::ColumnRef;
use crate::to_arrow::options::TableOptions;
use crate::mapping::objects::names_of;
use crate::mapping::objects::not_convertible;
use crate::to_arrow::nulls::nulls_from;
use crate::mapping::objects::strings_of;
use crate::mapping::objects::view;
use crate::to_arrow::column::Converter;
use crate::to_arrow::during_parse::EarlyColumns;
use rdarrow_format::tree::altrep;
use crate::metadata;
use crate::mapping::types;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::na;
use rdarrow_format::tree::*;
use rdarrow_format::Document;
use arrow_array::*;
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Schema, SchemaRef};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// What a table is made of, worked out from the object before any column
/// converts: the selected columns' names, the row count, the schema
/// metadata and, for a matrix, its columns as vectors.
pub(crate) struct TablePlan {
    pub is_df: bool,
    pub nrow: usize,
    /// Positions of the selected columns among the object's columns.
    pub idx: Vec<usize>,
    /// The selected columns' names, in selection order.
    pub names: Vec<String>,
    /// Whether each selected column is an ordered factor.
    ordered: Vec<bool>,
    /// What the object was, for the way back.
    shape: metadata::document::Shape,
    /// A data frame's own attributes.
    frame_meta: Option<metadata::columns::ColumnMeta>,
    /// The selected columns' attributes (the metadata are written once
    /// their Arrow types are known).
    col_meta: Vec<metadata::columns::ColumnMeta>,
    /// What the user should be told (the conversion goes on).
    pub warnings: Vec<String>,
    /// A matrix's columns (the object's own columns otherwise).
    matrix_columns: Option<Vec<RObject>>,
    /// The object's one column, converted already (a named list, whose
    /// rows are known once it converts).
    converted: Option<Converted>,
}

impl TablePlan {
    /// Keep the NA bits `bits` of the object's column `i` (found once
    /// it was read).
    pub(crate) fn keep_na_bits(&mut self, i: usize, bits: metadata::na_bits::NaBits) {
        for k in 0..self.idx.len() {
            if self.idx[k] == i {
                self.col_meta[k].set_na_bits(bits.clone());
            }
        }
    }

    /// Keep the strings `kept` of the object's column `i` (found once
    /// they were read), and say so.
    pub(crate) fn keep_strings(&mut self, i: usize, kept: metadata::strings::KeptStrings) {
        let mut told = false;
        for k in 0..self.idx.len() {
            if self.idx[k] == i {
                self.col_meta[k].strings = Some(kept.clone());
                if !told {
                    self.warnings
                        .extend(self.col_meta[k].repair_warning(&self.names[k]));
                    told = true;
                }
            }
        }
    }
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

pub(crate) fn plan_table(doc: &Document, obj: &RObject, opts: &TableOptions) -> Result<TablePlan> {
    let refs = &doc.refs;
    let cx = metadata::columns::MetaContext {
        native: doc.header.native_encoding.as_deref(),
        default_tz: opts.default_tz.as_deref(),
    };
    let (names, nrow, matrix_columns): (Vec<String>, usize, Option<Vec<RObject>>);
    let mut converted = None;
    let mut warnings = Vec::new();
    let shape;
    let is_df = obj.inherits(refs, "data.frame");
    if let Some(sp) = crate::mapping::sparse::parts(obj, refs)? {
        // a sparse matrix: the table of its stored entries
        names = sp.names;
        nrow = sp.rows;
        matrix_columns = Some(sp.columns);
        shape = metadata::document::Shape::Sparse {
            storage: sp.storage,
            slots: sp.slots,
        };
    } else if is_df {
        let items = frame_items(obj, refs)?;
        names = names_of(obj, refs);
        if names.len() != items.len() {
            return Err(Error::corrupt(
                "a data frame's names do not match its columns",
            ));
        }
        let rows = df_nrow(obj, refs, items);
        // row names whose length disagrees with columns of one length: the
        // columns decide (as arrow R does); the row names travel for the
        // way back
        let lengths: Vec<usize> = items.iter().map(|c| column_rows(c, refs)).collect();
        let mut attrs = Vec::new();
        match lengths.first() {
            Some(&len) if len != rows && lengths.iter().all(|&l| l == len) => {
                warnings.push(format!(
                    "the data frame's row names say {rows} rows but its columns hold {len}; converted by its columns"
                ));
                nrow = len;
                attrs.extend(
                    obj.attribute(refs, "row.names")
                        .map(|rn| ("row.names".to_string(), rn.clone())),
                );
            }
            // no columns: the row names travel (a Parquet file of no
            // columns has no rows)
            None if rows > 0 => {
                nrow = rows;
                attrs.extend(
                    obj.attribute(refs, "row.names")
                        .map(|rn| ("row.names".to_string(), rn.clone())),
                );
            }
            _ => nrow = rows,
        }
        // an NA name becomes the field name "NA": the names travel
        if let Some(nm) = obj.attribute(refs, "names").filter(|n| {
            n.as_strings()
                .is_some_and(|s| (0..s.len()).any(|i| s.get(i).is_none()))
        }) {
            attrs.push(("names".to_string(), nm.clone()));
        }
        shape = metadata::document::Shape::Frame { attrs };
        matrix_columns = None;
    } else if obj
        .attribute(refs, "dim")
        .is_some_and(|d| rdarrow_format::read::summary::r_length(d, refs) == 2)
        && obj.attributes().is_some()
    {
        // a matrix: one column per matrix column
        let v = view(obj, refs)?.ok_or_else(|| not_convertible("the object", obj, refs))?;
        let dims = int_values(obj.attribute(refs, "dim").unwrap());
        if dims.len() != 2 || dims.iter().any(|&d| d < 0) {
            return Err(Error::corrupt(
                "a matrix's dim attribute is not two non-negative numbers",
            ));
        }
        let (nr, nc) = (dims[0] as usize, dims[1] as usize);
        if nr.checked_mul(nc) != Some(v.data.len() as usize) {
            return Err(Error::corrupt(format!(
                "a matrix's dimensions {nr} x {nc} do not match its length {}",
                v.data.len()
            )));
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
        matrix_columns = Some(
            (0..nc)
                .map(|j| slice_column(&v.data, j * nr, nr))
                .collect::<Result<_>>()?,
        );
        names = colnames;
        nrow = nr;
        shape = metadata::document::Shape::Matrix {
            attrs: metadata::columns::ColumnMeta::of(obj, refs, cx).take_all(),
        };
    } else {
        let len = match view(obj, refs)? {
            _ if crate::mapping::posixlt::is_posixlt(&obj.class_attr(refs), obj.sxptype(refs)) => {
                crate::mapping::posixlt::length(obj, refs)
            }
            // a struct of its slots
            None if matches!(obj, RObject::S4(_)) => 1,
            // a named list whose elements differ in type is a struct of
            // one row (known once its elements convert: converted here,
            // once)
            Some(v)
                if matches!(*v.data, VectorData::List(_))
                    && obj.attribute(refs, "names").is_some() =>
            {
                let done = Converter::for_table(doc, opts, table_from_object).column(obj, &opts.object_name)?;
                let rows = done.1.len();
                converted = Some(done);
                rows
            }
            Some(v) => v.data.len() as usize,
            None if matches!(obj, RObject::Null) => 0,
            None => return Err(not_convertible("the object", obj, refs)),
        };
        names = vec![opts.object_name.clone()];
        matrix_columns = None;
        nrow = len;
        shape = metadata::document::Shape::Vector { attrs: Vec::new() };
    }

    // column selection
    let mut idx: Vec<usize> = (0..names.len()).collect();
    if let Some(sel) = &opts.col_select {
        idx = sel
            .iter()
            .map(|c| match c {
                ColumnRef::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                    Error::usage(format!(
                        "column '{n}' not found; the columns are: {}",
                        names.join(", ")
                    ))
                }),
                ColumnRef::Position(p) if *p >= 1 && *p <= names.len() => Ok(p - 1),
                ColumnRef::Position(p) => Err(Error::usage(format!(
                    "column position {p} is out of range 1..{}",
                    names.len()
                ))),
            })
            .collect::<Result<_>>()?;
    }

    let all_columns: Vec<&RObject> = match (&matrix_columns, is_df) {
        (Some(m), _) => m.iter().collect(),
        (None, true) => frame_items(obj, refs)?.iter().collect(),
        (None, false) => vec![obj],
    };
    let sel_cols: Vec<&RObject> = idx.iter().map(|&i| all_columns[i]).collect();
    let mut col_meta: Vec<metadata::columns::ColumnMeta> = sel_cols
        .iter()
        .map(|c| metadata::columns::ColumnMeta::of(c, refs, cx))
        .collect();
    for (k, m) in col_meta.iter().enumerate() {
        warnings.extend(m.repair_warning(&names[idx[k]]));
    }
    let mut shape = shape;
    if let metadata::document::Shape::Vector { attrs } = &mut shape {
        // a data frame's column cannot have dimensions (arrow R applies
        // the column's attributes to one): they travel on their own (the
        // vector's one column may be selected more than once)
        for m in &mut col_meta {
            let dims = m.take(&["dim", "dimnames"]);
            if attrs.is_empty() {
                *attrs = dims;
            }
        }
    }
    // the frame's own attributes (its columns' are in `col_meta`)
    let frame_meta = is_df.then(|| metadata::columns::ColumnMeta::own(obj, refs, cx));
    let ordered = sel_cols
        .iter()
        .map(|c| c.inherits(refs, "ordered"))
        .collect();
    let names = idx.iter().map(|&i| names[i].clone()).collect();
    Ok(TablePlan {
        is_df,
        nrow,
        idx,
        names,
        ordered,
        shape,
        frame_meta,
        col_meta,
        warnings,
        matrix_columns,
        converted,
    })
}

/// The rows of a data frame's column: a data frame column's rows, else
/// its length.
fn column_rows(col: &RObject, refs: &RefTable) -> usize {
    if let Some((nr, _)) = crate::mapping::objects::matrix_dims(col, refs) {
        return nr;
    }
    if crate::mapping::posixlt::is_posixlt(&col.class_attr(refs), col.sxptype(refs)) {
        return crate::mapping::posixlt::length(col, refs);
    }
    if col.inherits(refs, "data.frame") {
        if let Ok(items) = frame_items(col, refs) {
            return df_nrow(col, refs, items);
        }
    }
    rdarrow_format::read::summary::r_length(col, refs) as usize
}

/// A converted column: its Arrow type and array.
type Converted = (DataType, ArrayRef);

/// Tables with at least this many rows convert their columns on several
/// threads.
pub(crate) const PARALLEL_ROWS: usize = 100_000;

/// Convert columns, in order, on up to `threads` threads (column `k` is
/// named `plan.names[name_at[k]]`).
/// Each column is dropped as soon as it has converted, so an owned column's
/// R buffers that the Arrow array does not share are freed before the next
/// column starts.
fn convert_columns(
    conv: &Converter,
    plan: &TablePlan,
    name_at: &[usize],
    columns: Vec<Cow<'_, RObject>>,
    threads: usize,
) -> Result<Vec<Converted>> {
    let convert_one = |k: usize, col: Cow<'_, RObject>| -> Result<Converted> {
        let name = &plan.names[name_at[k]];
        let (dt, arr) = conv.column_cow(col, name).map_err(|e| Error {
            message: format!("column '{name}': {}", e.message),
            ..e
        })?;
        if arr.len() != plan.nrow {
            return Err(Error::corrupt(format!(
                "column '{name}' has {} values but the table has {} rows",
                arr.len(),
                plan.nrow
            )));
        }
        Ok((dt, arr))
    };
    let cost = |c: &Cow<'_, RObject>| rdarrow_format::read::summary::r_length(c, conv.refs) * payload_width(c);
    // a small table on this thread: starting threads costs more
    let total: u64 = columns.iter().map(cost).sum();
    let threads = if total < crate::batches::rows::PARALLEL_MIN_CELLS as u64 {
        1
    } else {
        threads
    };
    // largest columns first, so that the threads finish together
    crate::batches::rows::in_parallel(columns, threads, cost, convert_one)
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

/// The schema and batches from converted columns; the schema metadata
/// are written now that the columns' Arrow types are known.
fn assemble(
    plan: TablePlan,
    converted: Vec<Converted>,
    opts: &TableOptions,
    refs: &RefTable,
) -> Result<ArrowTable> {
    let types: Vec<DataType> = converted.iter().map(|(dt, _)| dt.clone()).collect();
    let schema = schema_of(&plan, &types, refs)?;
    let arrays: Vec<ArrayRef> = converted.into_iter().map(|(_, arr)| arr).collect();
    let nrow = plan.nrow;
    let batch = RecordBatch::try_new_with_options(
        schema.clone(),
        arrays,
        &RecordBatchOptions::new().with_row_count(Some(nrow)),
    )
    .map_err(|e| Error::corrupt(format!("cannot assemble the record batch: {e}")))?;
    let batches = match opts.chunk_size {
        Some(n) if n > 0 && nrow > n => (0..nrow)
            .step_by(n)
            .map(|off| batch.slice(off, n.min(nrow - off)))
            .collect(),
        _ => vec![batch],
    };
    Ok(ArrowTable {
        schema,
        batches,
        warnings: plan.warnings,
    })
}

/// The schema of a table whose selected columns have `types`, with the
/// `"r"` metadata and the notes that depend on them.
pub(crate) fn schema_of(
    plan: &TablePlan,
    types: &[DataType],
    refs: &RefTable,
) -> Result<SchemaRef> {
    let names: Vec<&str> = plan.names.iter().map(String::as_str).collect();
    let mut md = HashMap::new();
    if let Some(r) = metadata::document::r_metadata(
        refs,
        &plan.shape,
        plan.frame_meta.as_ref(),
        &names,
        &plan.col_meta,
        types,
    )? {
        md.insert("r".to_string(), r.r);
        if let Some(exact) = r.exact {
            md.insert(metadata::document::EXACT_KEY.to_string(), exact);
        }
    }
    let notes = metadata::fidelity::fidelity_notes(plan.frame_meta.as_ref(), &names, &plan.col_meta, types);
    if !notes.is_empty() {
        md.insert(metadata::fidelity::FIDELITY_KEY.to_string(), notes);
    }
    let fields: Vec<_> = types
        .iter()
        .enumerate()
        .map(|(k, dt)| {
            let f = types::arrow_field(&plan.names[k], dt.clone(), plan.ordered[k]);
            // a list of arrays of one shape: Arrow's tensor extension
            match (&plan.col_meta[k].tensor, dt) {
                (Some(t), DataType::FixedSizeList(..)) => f.with_metadata(t.field_metadata()),
                _ => f,
            }
        })
        .collect();
    Ok(Arc::new(Schema::new_with_metadata(fields, md)))
}

fn threads_for(plan: &TablePlan) -> usize {
    if plan.nrow >= PARALLEL_ROWS && plan.idx.len() > 1 {
        crate::batches::rows::all_cores()
    } else {
        1
    }
}

/// The table made from one R object.
pub fn table_from_object(doc: &Document, obj: &RObject, opts: &TableOptions) -> Result<ArrowTable> {
    let mut conv = Converter::for_table(doc, opts, table_from_object);
    let mut plan = plan_table(doc, obj, opts)?;
    conv.frame_columns = plan.is_df;
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

/// Read one object of the file at `path` and convert it, as
/// `rdata_to_arrow()` and the command line do: only that object is decoded
/// (see [`Document::choose_table_object`] for which), its columns convert
/// on the parsing thread as they are read ([`EarlyColumns`], zone
/// `opts.default_tz`), and the object moves into the table. Returns its
/// name and the table; `opts.object_name` is set from the name.
pub fn read_table(
    path: &(impl rdarrow_format::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    mut opts: TableOptions,
    read: rdarrow_format::ReadOptions,
) -> Result<(String, ArrowTable)> {
    // an element of a list, read alone
    let element = |o: &str| -> Result<(rdarrow_format::Document, (String, RObject))> {
        let (doc, mut taken) = rdarrow_format::read_paths(path, &read, &[o.to_string()], stream_name)?;
        let one = taken
            .pop()
            .ok_or_else(|| rdarrow_format::Error::internal("no object taken"))?;
        Ok((doc, one))
    };
    let (doc, (name, obj)) = match object {
        Some(o) if rdarrow_format::is_path(o) => element(o)?,
        _ => {
            // columns convert as they are read, where a POSIXlt (which
            // converts from its components together) can be read again
            let early = EarlyColumns::with_unit(opts.default_tz.clone(), opts.time_unit);
            let read = rdarrow_format::ReadOptions {
                consumer: path.reopens().then(|| early.consumer()),
                ..read.clone()
            };
            let mut doc = rdarrow_format::read_file_filtered(path, &read, &mut rdarrow_format::Wanted::one(object))?;
            // a name inside an .rds file's one object (its element `b`,
            // see Document::path_of): read alone, as a path is
            let inside = object.filter(|o| doc.locate(o, stream_name).is_ok_and(|(_, p)| p.is_some()));
            if let Some(o) = inside {
                drop(doc);
                element(o)?
            } else {
                let one = doc.take_table_object(object, stream_name, &crate::mapping::objects::converts)?;
                if converted_parts(&one.1, &doc.refs) {
                    // a POSIXlt object converts from its components together,
                    // which its columns' early conversion took: read again
                    let read = rdarrow_format::ReadOptions {
                        consumer: None,
                        ..read
                    };
                    let mut doc =
                        rdarrow_format::read_file_filtered(path, &read, &mut rdarrow_format::Wanted::one(object))?;
                    let one = doc.take_table_object(object, stream_name, &crate::mapping::objects::converts)?;
                    (doc, one)
                } else {
                    (doc, one)
                }
            }
        }
    };
    opts.object_name = if name.is_empty() {
        "value".into()
    } else {
        name.clone()
    };
    let mut table = table_from_owned(&doc, obj, &opts).map_err(|e| {
        if name.is_empty() {
            e
        } else {
            e.in_object(&name)
        }
    })?;
    if !name.is_empty() {
        for w in &mut table.warnings {
            *w = format!("object '{name}': {w}");
        }
    }
    // what a salvaging read of a damaged file lost, said first
    table.warnings.splice(0..0, doc.damage_for(&name));
    Ok((name, table))
}

/// Whether `obj` is a list that converts as a whole (a POSIXlt) whose
/// elements were converted while the file was read.
fn converted_parts(obj: &RObject, refs: &RefTable) -> bool {
    crate::mapping::posixlt::is_posixlt(&obj.class_attr(refs), obj.sxptype(refs))
        && matches!(obj, RObject::Vector(v) if matches!(&v.data, VectorData::List(items)
            if items.iter().any(|c| matches!(c, RObject::Vector(x) if matches!(x.data, VectorData::Consumed(_))))))
}

/// As [`table_from_object`], consuming the object: each column's R buffers
/// that the Arrow arrays do not share (a logical vector's 32-bit values, a
/// Date's doubles, a factor's codes) are freed as soon as the column has
/// converted, and a POSIXct's doubles become its timestamps in place, so
/// the R object and the whole table are never held at once.
pub fn table_from_owned(
    doc: &Document,
    mut obj: RObject,
    opts: &TableOptions,
) -> Result<ArrowTable> {
    let mut conv = Converter::for_table(doc, opts, table_from_object);
    let mut plan = plan_table(doc, &obj, opts)?;
    conv.frame_columns = plan.is_df;
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
pub(crate) fn distinct_positions(idx: &[usize]) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    idx.iter().copied().filter(|i| seen.insert(*i)).collect()
}

/// Convert the distinct columns (`columns[k]` is column `distinct[k]`)
/// and lay them out in the order of the selection.
fn convert_and_assemble(
    conv: &Converter,
    mut plan: TablePlan,
    distinct: &[usize],
    columns: Vec<Cow<'_, RObject>>,
    opts: &TableOptions,
) -> Result<ArrowTable> {
    let threads = threads_for(&plan);
    // names for the distinct columns (errors name the column)
    let first_use: Vec<usize> = distinct
        .iter()
        .map(|d| plan.idx.iter().position(|i| i == d).expect("selected"))
        .collect();
    let converted = match plan.converted.take() {
        // the object's one column, converted while planning
        Some(done) => vec![done; distinct.len()],
        None => convert_columns(conv, &plan, &first_use, columns, threads)?,
    };
    let ordered = plan
        .idx
        .iter()
        .map(|i| converted[distinct.iter().position(|d| d == i).expect("selected")].clone())
        .collect();
    assemble(plan, ordered, opts, conv.refs)
}

/// The columns at the distinct positions `idx` (in that order), moved out
/// of `items`.
fn take_selected(items: &mut [RObject], idx: &[usize]) -> Vec<Cow<'static, RObject>> {
    idx.iter()
        .map(|&i| Cow::Owned(std::mem::replace(&mut items[i], RObject::Null)))
        .collect()
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
            VectorData::Integer(x) if x.len() == 2 && x[0] == na::INTEGER => {
                x[1].unsigned_abs() as usize
            }
            d => d.len() as usize,
        },
        Some(RObject::Altrep(a)) => altrep::length(a, refs).unwrap_or(0) as usize,
        _ => items
            .first()
            .map(|c| rdarrow_format::read::summary::r_length(c, refs) as usize)
            .unwrap_or(0),
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
            let items: Vec<Option<Vec<u8>>> = (off..off + len)
                .map(|i| s.get(i).map(|b| b.to_vec()))
                .collect();
            let lv: Vec<u16> = (off..off + len).map(|i| s.levels(i)).collect();
            VectorData::Character(string_vector(items, lv))
        }
        VectorData::List(l) => VectorData::List(l[off..off + len].to_vec()),
        _ => {
            return Err(Error::unsupported(
                "this matrix type has no Arrow equivalent",
            ))
        }
    };
    Ok(RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: d,
        attributes: None,
    })))
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
        offsets: StringOffsets::Large(unsafe {
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets))
        }),
        data: Buffer::from_vec(data),
        validity,
        levels: StringLevels::PerElement(levels.into()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rdarrow_format::tree::make;
    use rdarrow_format::tree::make::ObjectMaker;
    use rdarrow_format::Compression;
    use rdarrow_format::Container;
    use rdarrow_format::Document;
    use rdarrow_format::ErrorKind;
    use rdarrow_format::StreamHeader;

    /// A document (RDS stream) holding `root`, with the symbols of `m`.
    pub(crate) fn doc_of(m: ObjectMaker, root: RObject) -> Document {
        Document {
            compression: Compression::None,
            container: Container::Stream,
            header: StreamHeader::utf8_v3(rdarrow_format::Format::Xdr),
            root,
            refs: m.refs,
            spans: Vec::new(),
            stream_len: 0,
            trust: Default::default(),
            seen: None,
            damage: None,
            salvaged: None,
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
        let obj = m.vector(data(), vec![("dim", make::ints(vec![3, 4]))]);
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a huge column count (used to make a billion column names)
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", make::reals(vec![0.0, 1e12]))]);
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a character dim of length 2 (used to index an empty vector)
        let mut m = ObjectMaker::default();
        let obj = m.vector(
            data(),
            vec![("dim", make::strings([Some(&b"a"[..]), Some(&b"b"[..])]))],
        );
        assert_eq!(convert(m, obj).unwrap_err().kind, ErrorKind::Corrupt);
        // a genuine 3 x 2 matrix converts
        let mut m = ObjectMaker::default();
        let obj = m.vector(data(), vec![("dim", make::ints(vec![3, 2]))]);
        let t = convert(m, obj).unwrap();
        assert_eq!((t.num_rows(), t.schema.fields().len()), (3, 2));
    }

    /// A data frame with every column kind whose conversion copies, large
    /// enough to convert on several threads.
    fn wide_frame(m: &mut ObjectMaker, n: usize) -> RObject {
        let class = |c: &[&str]| make::strings(c.iter().map(|s| Some(s.as_bytes())));
        let stamp: Vec<f64> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    make::na_real()
                } else {
                    1.5e9 + i as f64 * 0.125
                }
            })
            .collect();
        let stamp = m.vector(
            VectorData::Real(stamp.into()),
            vec![
                ("class", class(&["POSIXct", "POSIXt"])),
                ("tzone", class(&["UTC"])),
            ],
        );
        let day: Vec<f64> = (0..n)
            .map(|i| {
                if i % 11 == 0 {
                    make::na_real()
                } else {
                    (i % 9000) as f64
                }
            })
            .collect();
        let day = m.vector(
            VectorData::Real(day.into()),
            vec![("class", class(&["Date"]))],
        );
        let late: Vec<f64> = (0..n).map(|i| i as f64 + 0.25).collect();
        let late = m.vector(
            VectorData::Real(late.into()),
            vec![("class", class(&["Date"]))],
        );
        let flag: Vec<i32> = (0..n).map(|i| [1, 0, i32::MIN][i % 3]).collect();
        let flag = m.vector(VectorData::Logical(flag.into()), vec![]);
        let codes: Vec<i32> = (0..n)
            .map(|i| {
                if i % 5 == 0 {
                    i32::MIN
                } else {
                    (i % 3) as i32 + 1
                }
            })
            .collect();
        let group = m.vector(
            VectorData::Integer(codes.into()),
            vec![
                ("levels", class(&["a", "b", "c"])),
                ("class", class(&["ordered", "factor"])),
            ],
        );
        let words: Vec<Option<String>> = (0..n)
            .map(|i| (i % 13 != 0).then(|| format!("w{}{}", i % 97, "é".repeat(i % 4))))
            .collect();
        let word = make::strings(words.iter().map(|w| w.as_deref().map(str::as_bytes)));
        let row_names = make::ints(vec![i32::MIN, -(n as i32)]);
        let names = ["stamp", "day", "late", "flag", "group", "word"];
        let mut df = m.named_list(&names, vec![stamp, day, late, flag, group, word]);
        let attrs = m.tagged_pairlist(vec![
            (
                "names",
                make::strings(names.iter().map(|s| Some(s.as_bytes()))),
            ),
            ("class", class(&["data.frame"])),
            ("row.names", row_names),
        ]);
        if let RObject::Vector(v) = &mut df {
            v.attributes = attrs;
        }
        df
    }

    pub(crate) fn wide_doc(n: usize) -> Document {
        let mut m = ObjectMaker::default();
        let df = wide_frame(&mut m, n);
        doc_of(m, df)
    }

    #[test]
    fn owned_conversion_gives_the_same_table_as_borrowed() {
        for n in [10, PARALLEL_ROWS + 3] {
            let doc = wide_doc(n);
            for sel in [
                None,
                Some(vec![
                    ColumnRef::Name("stamp".into()),
                    ColumnRef::Position(1),
                    ColumnRef::Name("group".into()),
                ]),
            ] {
                let opts = TableOptions {
                    col_select: sel.clone(),
                    chunk_size: Some(n / 2 + 1),
                    ..Default::default()
                };
                let borrowed = table_from_object(&doc, &doc.root, &opts).unwrap();
                let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
                assert_eq!(borrowed.schema, owned.schema);
                assert_eq!(borrowed.batches, owned.batches);
                let full =
                    arrow_select::concat::concat_batches(&owned.schema, &owned.batches).unwrap();
                assert_eq!(full.num_rows(), n);
                if sel.is_none() {
                    let types: Vec<String> = owned
                        .schema
                        .fields()
                        .iter()
                        .map(|f| f.data_type().to_string())
                        .collect();
                    // eighths of a second are whole milliseconds; fractional
                    // days keep their doubles
                    assert_eq!(
                        types[..4],
                        ["Timestamp(ms, \"UTC\")", "Date32", "Float64", "Boolean"]
                    );
                    let stamp = full
                        .column(0)
                        .as_any()
                        .downcast_ref::<TimestampMillisecondArray>()
                        .unwrap();
                    assert!(stamp.is_null(0));
                    assert_eq!(stamp.value(1), 1_500_000_000_125);
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
        assert_ne!(
            t.batches[0].column(0).to_data().buffers()[0].as_ptr() as usize,
            stamp_ptr
        );
        // the only holder: converted in place
        let mut doc = doc;
        doc.root = RObject::Null;
        let t2 = table_from_owned(
            &doc,
            obj,
            &TableOptions {
                col_select: Some(vec![ColumnRef::Position(1)]),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            t2.batches[0].column(0).to_data().buffers()[0].as_ptr() as usize,
            stamp_ptr
        );
        assert_eq!(
            t2.batches[0].column(0).as_ref(),
            t.batches[0].column(0).as_ref()
        );
    }

    #[test]
    fn a_column_selected_twice_appears_twice() {
        let mut m = ObjectMaker::default();
        let obj = m.vector(
            VectorData::Integer(ScalarBuffer::from(vec![1, 2, 3])),
            vec![],
        );
        let doc = doc_of(m, obj);
        let opts = TableOptions {
            col_select: Some(vec![ColumnRef::Position(1), ColumnRef::Position(1)]),
            object_name: "v".into(),
            ..Default::default()
        };
        let borrowed = table_from_object(&doc, &doc.root, &opts).unwrap();
        let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
        assert_eq!(borrowed.batches[0].num_columns(), 2);
        assert_eq!(borrowed.batches, owned.batches);
        let doc = wide_doc(5);
        let opts = TableOptions {
            col_select: Some(vec![
                ColumnRef::Name("flag".into()),
                ColumnRef::Name("flag".into()),
            ]),
            ..Default::default()
        };
        let owned = table_from_owned(&doc, doc.root.clone(), &opts).unwrap();
        assert_eq!(owned.batches[0].num_columns(), 2);
        assert_eq!(
            owned.batches[0].column(0).as_ref(),
            owned.batches[0].column(1).as_ref()
        );
    }
}
