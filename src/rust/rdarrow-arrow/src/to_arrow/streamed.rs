//! A data frame converted row group by row group, its payloads read back
//! from the file (or the spill of its decompressed stream, see
//! [`rdarrow_format::read::spill`]) by row range: memory holds one row group of every
//! column, never the table.
//!
//! The schema is fixed before the first row group: each column converts
//! as the whole column would, because a time column's unit is chosen over
//! all its values first ([`temporal::kept_units`], read through once) and
//! every other type depends only on the column's attributes. A compact
//! sequence (`1:n`) makes each row group from its three numbers. Other
//! columns that are not plain vectors (lists, data-frame columns, other
//! ALTREP) were decoded by the parser and convert whole, once; their row
//! groups are slices.

use crate::mapping::objects::matrix_dims;
use crate::to_arrow::column::Converter;
use crate::to_arrow::table::distinct_positions;
use crate::to_arrow::table::plan_table;
use crate::to_arrow::table::schema_of;
use crate::to_arrow::table::table_from_owned;
use crate::to_arrow::options::TableOptions;
use crate::to_arrow::temporal;
use crate::to_arrow::temporal::TimeChoice;
use crate::metadata::strings::KeptStrings;
use crate::metadata::na_bits::NaBits;
use crate::batches::rows::ColumnSource;
use crate::mapping::types;
use crate::mapping::types::RKind;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::read::spill::PayloadStore;
use rdarrow_format::tree::*;
use rdarrow_format::Document;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, SchemaRef};
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// A column of a [`StreamedTable`].
enum Column {
    /// Converted whole; row groups are slices.
    Whole(ArrayRef),
    /// Read and converted row group by row group.
    Deferred(DeferredColumn),
}

/// A vector whose payload stays in the stream (the node holds its
/// attributes), or a compact sequence, converted to `want` by row range.
struct DeferredColumn {
    node: RObject,
    name: String,
    want: DataType,
    time: Option<TimeChoice>,
}

impl DeferredColumn {
    /// The column `node` named `name`, to convert with `conv` (as the
    /// whole column would): a time column's unit is chosen over all its
    /// values first, read through `rows` at a time.
    fn new(
        conv: Converter<'_>,
        store: &PayloadStore,
        node: RObject,
        name: String,
        rows: usize,
    ) -> Result<DeferredColumn> {
        let refs = conv.refs;
        let kind = RKind::of(&node.class_attr(refs), node.sxptype(refs));
        let time = match kind {
            // one unit for every POSIXct column, as asked: nothing to scan
            Some(RKind::PosixCt) if conv.time_unit.is_some() => {
                conv.time_unit.map(TimeChoice::Unit)
            }
            Some(k @ (RKind::Date | RKind::PosixCt | RKind::Hms | RKind::Difftime)) => {
                Some(time_choice(refs, store, &node, k, rows).map_err(|e| in_column(&name, e))?)
            }
            _ => None,
        };
        // the type: as an empty part of the column converts
        let mut conv = conv;
        conv.time_choice = time;
        let (want, _) = conv
            .column_cow(Cow::Owned(part(store, refs, &node, 0, 0)?), &name)
            .map_err(|e| in_column(&name, e))?;
        Ok(DeferredColumn {
            node,
            name,
            want,
            time,
        })
    }

    /// Where the payload starts in the stream (`None` for a sequence).
    fn payload_start(&self) -> Option<u64> {
        match &self.node {
            RObject::Vector(v) => match &v.data {
                VectorData::Deferred(d) => Some(d.start),
                _ => None,
            },
            _ => None,
        }
    }

    /// Rows `[start, start + len)`, converted by `conv` (as for
    /// [`Self::new`]).
    fn rows(
        &self,
        conv: Converter<'_>,
        store: &PayloadStore,
        start: usize,
        len: usize,
    ) -> Result<ArrayRef> {
        let (name, want) = (&self.name, &self.want);
        let obj = part(store, conv.refs, &self.node, start, len)?;
        let mut conv = conv;
        conv.time_choice = self.time;
        let (dt, arr) = conv
            .column_cow(Cow::Owned(obj), name)
            .map_err(|e| in_column(name, e))?;
        if dt == *want {
            return Ok(arr);
        }
        arrow_cast::cast(&arr, want).map_err(|e| {
            in_column(
                name,
                Error::corrupt(format!("its rows {start}.. became {dt}, not {want}: {e}")),
            )
        })
    }
}

/// A column of a data frame whose file is still being parsed, read by row
/// range from what has been read so far (see [`rdarrow_format::Column::store`]):
/// converted as [`StreamedTable`] will convert it once the parse is done.
pub struct ColumnSoFar {
    col: DeferredColumn,
    refs: RefTable,
    header: rdarrow_format::StreamHeader,
    store: PayloadStore,
    default_tz: Option<String>,
    time_unit: Option<arrow_schema::TimeUnit>,
}

impl ColumnSoFar {
    /// The column `node` (a deferred vector) of a stream with `header`,
    /// its references so far `refs`, its payload in `store`; `opts` and
    /// `rows` as the table's.
    pub fn new(
        node: RObject,
        refs: RefTable,
        header: rdarrow_format::StreamHeader,
        store: PayloadStore,
        opts: &TableOptions,
        rows: usize,
    ) -> Result<ColumnSoFar> {
        let conv =
            Converter::while_reading(&refs, &header, opts.default_tz.as_deref(), opts.time_unit);
        let col = DeferredColumn::new(conv, &store, node, String::new(), rows)?;
        Ok(ColumnSoFar {
            col,
            refs,
            header,
            store,
            default_tz: opts.default_tz.clone(),
            time_unit: opts.time_unit,
        })
    }

    pub fn data_type(&self) -> &DataType {
        &self.col.want
    }

    pub fn payload_start(&self) -> Option<u64> {
        self.col.payload_start()
    }

    pub fn len(&self) -> usize {
        self.col.node.vector_len(&self.refs) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rows `[start, start + len)`.
    pub fn rows(&self, start: usize, len: usize) -> Result<ArrayRef> {
        let conv = Converter::while_reading(
            &self.refs,
            &self.header,
            self.default_tz.as_deref(),
            self.time_unit,
        );
        self.col.rows(conv, &self.store, start, len)
    }
}

/// A data frame whose columns are read by row range.
pub struct StreamedTable {
    doc: Document,
    store: PayloadStore,
    opts: TableOptions,
    schema: SchemaRef,
    nrow: usize,
    /// For each column of the schema, its place in `cols`.
    at: Vec<usize>,
    cols: Vec<Column>,
    warnings: Vec<String>,
    /// Rows per row group the memory budget allows.
    group_rows: usize,
}

/// A table to write row group by row group: streamed where the object
/// allows, else converted in memory.
pub struct OpenedTable {
    pub name: String,
    pub source: Box<dyn ColumnSource + Send>,
    /// Rows per row group: as asked, else what the memory budget allows.
    pub group_rows: usize,
}

/// The rows a row group may hold when about `row_bytes` bytes per row must
/// fit four times (decoded, converted, encoded, compressed) for each of the
/// row groups worked on at once ([`crate::batches::rows::GROUPS_IN_FLIGHT`])
/// in `memory`.
pub fn rows_for(row_bytes: u64, memory: u64) -> usize {
    let copies = 4 * crate::batches::rows::GROUPS_IN_FLIGHT as u64;
    let rows = memory / (copies * row_bytes.max(1));
    (rows as usize).clamp(1024, crate::batches::rows::DEFAULT_ROW_GROUP_ROWS)
}

/// Bytes per element of a payload, strings by their average size.
pub fn element_bytes(obj: &RObject) -> u64 {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::Deferred(d) if d.sxptype == sxp::STR => {
                8 + (d.end - d.start) / d.len.max(1)
            }
            VectorData::Deferred(d) if d.sxptype == sxp::CPLX => 16,
            VectorData::Deferred(d) if d.sxptype == sxp::REAL => 8,
            VectorData::Deferred(d) if d.sxptype == sxp::RAW => 1,
            _ => 4,
        },
        _ => 8,
    }
}

/// Open one object of the file at `path` for conversion by row group (see
/// [`rdarrow_format::Document::choose_table_object`] for which object), spilling a
/// compressed file's stream to `spill_dir`. A data frame streams; other
/// objects (and data frames in ASCII files) convert in memory. `rows` as
/// asked by the caller, else chosen for `memory` bytes.
pub fn open_table(
    path: &(impl rdarrow_format::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    mut opts: TableOptions,
    read: rdarrow_format::ReadOptions,
    spill_dir: &Path,
    rows: Option<usize>,
    memory: u64,
    on_column: Option<Arc<dyn rdarrow_format::Consumer>>,
) -> Result<OpenedTable> {
    // an element of a list streams too: the elements of lists are left
    // in the stream at every depth
    let placement = if object.is_some_and(rdarrow_format::is_path) {
        rdarrow_format::Placement::DeferNested
    } else {
        rdarrow_format::Placement::Defer
    };
    let consumer: Arc<dyn rdarrow_format::Consumer> = match on_column {
        Some(inner) => Arc::new(rdarrow_format::Placed { placement, inner }),
        None => Arc::new(placement),
    };
    let read = rdarrow_format::ReadOptions {
        consumer: Some(consumer),
        ..read
    };
    let (mut doc, store) =
        rdarrow_format::read_file_deferred(path, &read, &mut rdarrow_format::Wanted::one(object), spill_dir)?;
    if opts.one_object {
        if let Some(e) = doc.one_object_unknown(stream_name) {
            return Err(e);
        }
        let names = doc.object_names(stream_name);
        if names.len() != 1 {
            return Err(rdarrow_format::read::document::not_one_object(&names));
        }
    }
    let (name, obj) = doc.take_table_object(object, stream_name, &crate::mapping::objects::converts)?;
    opts.object_name = if name.is_empty() {
        "value".into()
    } else {
        name.clone()
    };
    let in_object = |e: Error| {
        if name.is_empty() {
            e
        } else {
            e.in_object(&name)
        }
    };
    let deferred = match &obj {
        RObject::Vector(v) => {
            matches!(&v.data, VectorData::List(items) if items.iter().any(|c| matches!(c, RObject::Vector(v) if matches!(v.data, VectorData::Deferred(_)))))
        }
        _ => false,
    };
    // what a salvaging read of a damaged file lost, said first
    let damage = doc.damage_for(&name);
    let warnings_of = |mut w: Vec<String>| {
        if !name.is_empty() {
            for s in &mut w {
                *s = format!("object '{name}': {s}");
            }
        }
        w.splice(0..0, damage.iter().cloned());
        w
    };
    if !deferred || !obj.inherits(&doc.refs, "data.frame") {
        // nothing left in the stream, or not a data frame: in memory (a
        // list's elements left in the stream are read back from it)
        let mut obj = obj;
        if deferred {
            store.materialize(&mut obj).map_err(in_object)?;
        }
        drop(store);
        let mut table = table_from_owned(&doc, obj, &opts).map_err(in_object)?;
        table.warnings = warnings_of(std::mem::take(&mut table.warnings));
        let row_bytes = table.schema.fields().len() as u64 * 8;
        let group_rows = rows.unwrap_or_else(|| rows_for(row_bytes, memory));
        return Ok(OpenedTable {
            name,
            source: Box::new(table),
            group_rows,
        });
    }
    let mut t = StreamedTable::new(doc, store, obj, opts, rows, memory).map_err(in_object)?;
    t.warnings = warnings_of(std::mem::take(&mut t.warnings));
    let group_rows = t.group_rows;
    Ok(OpenedTable {
        name,
        source: Box::new(t),
        group_rows,
    })
}

impl StreamedTable {
    fn new(
        doc: Document,
        store: PayloadStore,
        mut obj: RObject,
        opts: TableOptions,
        rows: Option<usize>,
        memory: u64,
    ) -> Result<StreamedTable> {
        let mut plan = plan_table(&doc, &obj, &opts)?;
        let distinct = distinct_positions(&plan.idx);
        let items = match &mut obj {
            RObject::Vector(v) => match &mut v.data {
                VectorData::List(items) => std::mem::take(items),
                _ => return Err(Error::internal("a data frame is not a list")),
            },
            _ => return Err(Error::internal("a data frame is not a list")),
        };
        let mut items: Vec<Option<RObject>> = items.into_iter().map(Some).collect();
        let row_bytes: u64 = distinct
            .iter()
            .filter_map(|&i| items[i].as_ref())
            .map(element_bytes)
            .sum();
        let group_rows = rows.unwrap_or_else(|| rows_for(row_bytes, memory));
        let (names, idx) = (plan.names.clone(), plan.idx.clone());
        let name_of = |i: usize| names[idx.iter().position(|&x| x == i).expect("selected")].clone();
        let mut cols = Vec::with_capacity(distinct.len());
        for &i in &distinct {
            let mut node = items[i].take().unwrap_or(RObject::Null);
            let name = name_of(i);
            if matrix_dims(&node, &doc.refs).is_some() {
                // a matrix column's rows are not runs of its payload: read
                // whole
                store
                    .materialize(&mut node)
                    .map_err(|e| in_column(&name, e))?;
            }
            let is_deferred = match &node {
                RObject::Vector(v) => matches!(v.data, VectorData::Deferred(_)),
                RObject::Altrep(a) => is_sequence(a, &doc.refs),
                _ => false,
            };
            if is_deferred {
                // strings the reader could not vouch for are checked now,
                // so that the metadata keeps those Arrow cannot take as
                // they are
                if let Some(kept) = kept_strings(&doc, &store, &node, group_rows)
                    .map_err(|e| in_column(&name, e))?
                {
                    plan.keep_strings(i, kept);
                }
                // likewise NAs whose bits are not R's NA_real_
                if let Some(bits) = kept_na_bits(&doc, &store, &node, group_rows)
                    .map_err(|e| in_column(&name, e))?
                {
                    plan.keep_na_bits(i, bits);
                }
            }
            let mut conv = Converter::for_table(&doc, &opts, crate::to_arrow::table::table_from_object);
            conv.frame_columns = true;
            if !is_deferred {
                let (_, arr) = conv
                    .column_cow(Cow::Owned(node), &name)
                    .map_err(|e| in_column(&name, e))?;
                // (a damaged file's column of another length is an error
                // here, not a slice past its end later)
                if arr.len() != plan.nrow {
                    return Err(Error::corrupt(format!(
                        "column '{name}' has {} values but the table has {} rows",
                        arr.len(),
                        plan.nrow
                    )));
                }
                cols.push(Column::Whole(arr));
                continue;
            }
            cols.push(Column::Deferred(DeferredColumn::new(
                conv, &store, node, name, group_rows,
            )?));
        }
        let types_of: Vec<DataType> = cols
            .iter()
            .map(|c| match c {
                Column::Whole(a) => a.data_type().clone(),
                Column::Deferred(c) => c.want.clone(),
            })
            .collect();
        let at: Vec<usize> = plan
            .idx
            .iter()
            .map(|i| distinct.iter().position(|d| d == i).expect("selected"))
            .collect();
        let types: Vec<DataType> = at.iter().map(|&k| types_of[k].clone()).collect();
        let schema = schema_of(&plan, &types, &doc.refs)?;
        Ok(StreamedTable {
            doc,
            store,
            opts,
            schema,
            nrow: plan.nrow,
            at,
            cols,
            warnings: plan.warnings,
            group_rows,
        })
    }
}

fn in_column(name: &str, e: Error) -> Error {
    Error {
        message: format!("column '{name}': {}", e.message),
        ..e
    }
}

/// Whether an ALTREP column is a compact sequence (`1:n`, as R makes a
/// data frame's row numbers and `seq_len()` columns): its row groups are
/// made from the sequence's three numbers.
fn is_sequence(a: &Altrep, refs: &RefTable) -> bool {
    rdarrow_format::tree::altrep::class_of(a, refs)
        .0
        .is_some_and(rdarrow_format::tree::altrep::is_compact_sequence)
}

/// The strings of a deferred character column that need keeping in the
/// metadata ([`KeptStrings`]), read `rows` at a time: none are looked at
/// when the reader saw only plain text in a UTF-8 stream.
fn kept_strings(
    doc: &Document,
    store: &PayloadStore,
    node: &RObject,
    rows: usize,
) -> Result<Option<KeptStrings>> {
    let RObject::Vector(v) = node else {
        return Ok(None);
    };
    let VectorData::Deferred(d) = &v.data else {
        return Ok(None);
    };
    let native = doc.header.native_encoding.as_deref();
    if d.sxptype != sxp::STR || (d.plain_text && native.is_none_or(rdarrow_format::tree::encoding::is_utf8_name)) {
        return Ok(None);
    }
    let mut parts = Vec::new();
    read_through(store, d, rows, |data, start| {
        if let VectorData::Character(s) = data {
            parts.extend(KeptStrings::of(&s, native, start));
        }
    })?;
    Ok(KeptStrings::join(parts))
}

/// Read a deferred column `rows` at a time, handing each part and the
/// row it starts at to `f`.
fn read_through(
    store: &PayloadStore,
    d: &Deferred,
    rows: usize,
    mut f: impl FnMut(VectorData, usize),
) -> Result<()> {
    let len = d.len as usize;
    let rows = rows.max(1);
    let mut start = 0;
    while start < len {
        rdarrow_format::base::cancel::check()?;
        let n = rows.min(len - start);
        f(store.read(d, start as u64, n as u64)?, start);
        start += n;
    }
    Ok(())
}

/// The NAs of a deferred double column whose bits are not R's
/// `NA_real_` ([`NaBits`]), read `rows` at a time.
fn kept_na_bits(
    doc: &Document,
    store: &PayloadStore,
    node: &RObject,
    rows: usize,
) -> Result<Option<NaBits>> {
    let RObject::Vector(v) = node else {
        return Ok(None);
    };
    let VectorData::Deferred(d) = &v.data else {
        return Ok(None);
    };
    if d.sxptype != sxp::REAL || node.inherits(&doc.refs, "integer64") {
        return Ok(None);
    }
    let mut parts = Vec::new();
    read_through(store, d, rows, |data, start| {
        if let VectorData::Real(x) = data {
            parts.extend(NaBits::of_rows(&x, start));
        }
    })?;
    Ok(NaBits::join(parts))
}

/// Rows `[start, start + n)` of a deferred column (or a compact
/// sequence), as a vector with the column's attributes.
fn part(
    store: &PayloadStore,
    refs: &RefTable,
    node: &RObject,
    start: usize,
    n: usize,
) -> Result<RObject> {
    let v = match node {
        RObject::Vector(v) => v,
        RObject::Altrep(a) => {
            return Ok(RObject::Vector(Box::new(Vector {
                flags: a.flags,
                data: rdarrow_format::tree::altrep::sequence_part(a, refs, start as u64, n as u64)?,
                attributes: match &a.attributes {
                    RObject::Null => None,
                    other => Some(other.clone()),
                },
            })))
        }
        _ => return Err(Error::internal("a deferred column is not a vector")),
    };
    let VectorData::Deferred(d) = &v.data else {
        return Err(Error::internal("a column is not deferred"));
    };
    let data = store.read(d, start as u64, n as u64)?;
    Ok(RObject::Vector(Box::new(Vector {
        flags: v.flags,
        data,
        attributes: v.attributes.clone(),
    })))
}

/// The type of a time column over all its values, read through once.
fn time_choice(
    refs: &RefTable,
    store: &PayloadStore,
    node: &RObject,
    kind: RKind,
    rows: usize,
) -> Result<TimeChoice> {
    let len = node.vector_len(refs) as usize;
    let to_seconds = match kind {
        RKind::Difftime => {
            let units = crate::mapping::objects::strings_in(node.attribute(refs, "units"), refs)
                .into_iter()
                .next()
                .unwrap_or_else(|| "secs".into());
            types::difftime_seconds(&units).ok_or_else(|| {
                Error::unsupported(format!("difftime units '{units}' are unknown"))
            })?
        }
        _ => 1.0,
    };
    let mut mask = 0b1111u8;
    let mut start = 0;
    while start < len && mask != 0 {
        rdarrow_format::base::cancel::check()?;
        let n = rows.min(len - start);
        if let RObject::Vector(v) = part(store, refs, node, start, n)? {
            mask &= temporal::kept_units(kind, &v.data, to_seconds);
        }
        start += n;
    }
    Ok(temporal::choice_of(mask))
}

impl ColumnSource for StreamedTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn num_rows(&self) -> usize {
        self.nrow
    }
    fn column(&self, j: usize, start: usize, len: usize) -> Result<ArrayRef> {
        match &self.cols[self.at[j]] {
            Column::Whole(a) => Ok(a.slice(start, len)),
            Column::Deferred(c) => c.rows(
                Converter::for_table(&self.doc, &self.opts, crate::to_arrow::table::table_from_object),
                &self.store,
                start,
                len,
            ),
        }
    }
    fn payload_start(&self, j: usize) -> Option<u64> {
        match &self.cols[self.at[j]] {
            Column::Deferred(c) => c.payload_start(),
            Column::Whole(_) => None,
        }
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

#[cfg(test)]
mod tests {
    use crate::to_arrow::table::tests::doc_of;
    use crate::to_arrow::table::tests::wide_doc;
    use crate::to_arrow::table::table_from_object;
    use crate::to_arrow::options::ColumnRef;
    use super::*;
    use crate::batches::rows::batch_of;
    use crate::batches::rows::row_groups;
    use rdarrow_format::tree::make;
    use rdarrow_format::tree::make::ObjectMaker;
    use rdarrow_format::Compression;

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rdarrow-streamed-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The streamed table's row groups, put together.
    fn streamed(
        path: &Path,
        dir: &Path,
        rows: usize,
        opts: TableOptions,
    ) -> (SchemaRef, arrow_array::RecordBatch) {
        let t = open_table(
            path,
            None,
            "x",
            opts,
            rdarrow_format::ReadOptions::default(),
            dir,
            Some(rows),
            1 << 30,
            None,
        )
        .unwrap();
        let schema = t.source.schema();
        let parts: Vec<_> = row_groups(t.source.num_rows(), t.group_rows)
            .into_iter()
            .map(|(s, n)| batch_of(t.source.as_ref(), s, n, 2).unwrap())
            .collect();
        (
            schema.clone(),
            arrow_select::concat::concat_batches(&schema, &parts).unwrap(),
        )
    }

    #[test]
    fn row_groups_read_back_from_the_file_give_the_whole_table() {
        let dir = temp_dir("whole");
        let doc = wide_doc(20_000);
        for (k, comp) in [Compression::Gzip, Compression::None, Compression::Xz]
            .into_iter()
            .enumerate()
        {
            let path = dir.join(format!("f{k}.rds"));
            rdarrow_format::write_file(&doc, &path, comp, None).unwrap();
            for sel in [
                None,
                Some(vec![
                    ColumnRef::Name("word".into()),
                    ColumnRef::Position(1),
                    ColumnRef::Name("word".into()),
                ]),
            ] {
                let opts = TableOptions {
                    col_select: sel,
                    object_name: "x".into(),
                    ..Default::default()
                };
                let want = table_from_object(&doc, &doc.root, &opts).unwrap();
                let want =
                    arrow_select::concat::concat_batches(&want.schema, &want.batches).unwrap();
                for rows in [1000, 4096, 7777, 50_000] {
                    let (schema, got) = streamed(&path, &dir, rows, opts.clone());
                    assert_eq!(schema, want.schema(), "{comp:?} {rows}");
                    assert_eq!(got, want, "{comp:?} {rows}");
                }
            }
        }
        // the spill files are gone
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 3, "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_time_column_takes_the_unit_all_its_row_groups_keep() {
        let dir = temp_dir("unit");
        let n = 3000;
        let mut m = ObjectMaker::default();
        let class = |c: &[&str]| make::strings(c.iter().map(|s| Some(s.as_bytes())));
        // whole seconds in the first row group, milliseconds after it
        let stamp: Vec<f64> = (0..n)
            .map(|i| 1.6e9 + i as f64 + if i < 1000 { 0.0 } else { 0.5 })
            .collect();
        let stamp = m.vector(
            VectorData::Real(stamp.into()),
            vec![
                ("class", class(&["POSIXct", "POSIXt"])),
                ("tzone", class(&["UTC"])),
            ],
        );
        // whole days, then one fractional day at the very end
        let day: Vec<f64> = (0..n)
            .map(|i| if i == n - 1 { 0.5 } else { i as f64 })
            .collect();
        let day = m.vector(
            VectorData::Real(day.into()),
            vec![("class", class(&["Date"]))],
        );
        let names = ["stamp", "day"];
        let mut df = m.named_list(&names, vec![stamp, day]);
        let attrs = m.tagged_pairlist(vec![
            (
                "names",
                make::strings(names.iter().map(|s| Some(s.as_bytes()))),
            ),
            ("class", class(&["data.frame"])),
            ("row.names", make::ints(vec![i32::MIN, -(n as i32)])),
        ]);
        if let RObject::Vector(v) = &mut df {
            v.attributes = attrs;
        }
        let doc = doc_of(m, df);
        let path = dir.join("t.rds");
        rdarrow_format::write_file(&doc, &path, Compression::Gzip, None).unwrap();
        let opts = TableOptions {
            object_name: "x".into(),
            ..Default::default()
        };
        let want = table_from_object(&doc, &doc.root, &opts).unwrap();
        let types: Vec<String> = want
            .schema
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(types, ["Timestamp(ms, \"UTC\")", "Float64"]);
        let (schema, got) = streamed(&path, &dir, 1000, opts.clone());
        assert_eq!(schema, want.schema);
        assert_eq!(got, want.batches[0]);
        // one unit asked for: every POSIXct column takes it, streamed or not
        let us = TableOptions {
            time_unit: Some(arrow_schema::TimeUnit::Microsecond),
            ..opts
        };
        let want = table_from_object(&doc, &doc.root, &us).unwrap();
        assert_eq!(
            want.schema.field(0).data_type().to_string(),
            "Timestamp(µs, \"UTC\")"
        );
        let (schema, got) = streamed(&path, &dir, 1000, us);
        assert_eq!(schema, want.schema);
        assert_eq!(got, want.batches[0]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn compact_sequences_stream_from_their_three_numbers() {
        let dir = temp_dir("seq");
        let n = 10_000;
        let mut m = ObjectMaker::default();
        let seq = crate::to_arrow::during_parse::tests::compact_seq;
        let id = seq(&mut m, "compact_intseq", sxp::INT, n, RObject::Null);
        let class = m
            .tagged_pairlist(vec![("class", make::strings([Some(&b"Date"[..])]))])
            .unwrap();
        let day = seq(&mut m, "compact_realseq", sxp::REAL, n, class);
        let x = make::reals((0..n).map(|i| i as f64 / 3.0).collect());
        let names = ["id", "day", "x"];
        let df = m.vector(
            VectorData::List(vec![id, day, x]),
            vec![
                (
                    "names",
                    make::strings(names.iter().map(|s| Some(s.as_bytes()))),
                ),
                ("class", make::strings([Some(&b"data.frame"[..])])),
                ("row.names", make::ints(vec![na::INTEGER, -(n as i32)])),
            ],
        );
        let doc = doc_of(m, df);
        let path = dir.join("s.rds");
        rdarrow_format::write_file(&doc, &path, Compression::Gzip, None).unwrap();
        let opts = TableOptions {
            object_name: "x".into(),
            ..Default::default()
        };
        let want = table_from_object(&doc, &doc.root, &opts).unwrap();
        for rows in [999, 4096, n] {
            let (schema, got) = streamed(&path, &dir, rows, opts.clone());
            assert_eq!(schema, want.schema);
            assert_eq!(got, want.batches[0], "{rows} rows per group");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parquet_and_ipc_files_become_the_same_rdata_file_written_one_column_at_a_time() {
        use crate::from_arrow::frame::object_from_batches;
        use crate::files::ipc::write_ipc_source_file;
        use crate::files::ipc::IpcCompression;
        use crate::files::ipc::IpcFile;
        use crate::files::ipc::IpcFormat;
        use crate::files::parquet::read_parquet_file;
        use crate::files::parquet::write_parquet_file;
        use crate::files::parquet_layout::ParquetOptions;
        use rdarrow_format::write::write_object_file;
        use rdarrow_format::write::ObjectFileOptions;
        let dir = temp_dir("columns");
        let doc = wide_doc(5000);
        let opts = TableOptions {
            object_name: "x".into(),
            ..Default::default()
        };
        let table = table_from_object(&doc, &doc.root, &opts).unwrap();
        let pq = dir.join("t.parquet");
        let popts = ParquetOptions {
            row_group_rows: Some(1500),
            ..Default::default()
        };
        write_parquet_file(&table, &pq, &popts).unwrap();
        // an IPC file is read one column at a time too; a stream whole
        let ipc_file = dir.join("t.arrow");
        let ipc_stream = dir.join("t.arrows");
        for (path, format) in [
            (&ipc_file, IpcFormat::File),
            (&ipc_stream, IpcFormat::Stream),
        ] {
            write_ipc_source_file(
                &table,
                path,
                format,
                IpcCompression::Zstd,
                1500,
                2,
                &Default::default(),
            )
            .unwrap();
        }
        assert!(IpcFile::open(&ipc_file, u64::MAX).unwrap().is_some());
        assert!(IpcFile::open(&ipc_stream, u64::MAX).unwrap().is_none());
        for (rds, compression) in [(false, Compression::Gzip), (true, Compression::None)] {
            let o = ObjectFileOptions {
                name: "x".into(),
                rds,
                compression,
                threads: 2,
                ..Default::default()
            };
            let streamed = dir.join("streamed");
            let (rows, _) = crate::data_file_to_rdata(&pq, &streamed, &o, u64::MAX).unwrap();
            assert_eq!(rows, 5000);
            let (schema, batches) = read_parquet_file(&pq, u64::MAX).unwrap();
            let f = object_from_batches(&schema, &batches).unwrap();
            let whole = dir.join("whole");
            write_object_file(&whole, f.object, f.refs, &o).unwrap();
            let whole = std::fs::read(&whole).unwrap();
            assert!(std::fs::read(&streamed).unwrap() == whole, "rds {rds}");
            for input in [&ipc_file, &ipc_stream] {
                let (rows, _) =
                    crate::data_file_to_rdata(input, &streamed, &o, u64::MAX).unwrap();
                assert_eq!(rows, 5000);
                assert!(
                    std::fs::read(&streamed).unwrap() == whole,
                    "{}",
                    input.display()
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
