//! Parquet files, written and read. The Arrow schema, with rdarrow's `"r"`
//! metadata, is stored in the file as arrow writers store it (the
//! `ARROW:schema` key), so `arrow::read_parquet()`, pyarrow and rdarrow
//! itself get the types and R attributes back. Writing takes a
//! [`ColumnSource`] one row group at a time, converting and encoding the
//! columns of a row group on all cores; reading goes one column at a time
//! (Parquet stores each column's chunks apart), so a file is never held
//! whole.

use super::parquet_during_parse::EarlyChunks;
use super::rows::{by_row_group, row_groups, ColumnSource};
use crate::base::error::{Error, ErrorKind, Result};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::EncodingMask;
use parquet::basic::{Compression as Codec, GzipLevel, ZstdLevel};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{ColumnChunkMetaData, KeyValue};
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The four bytes a Parquet file starts and ends with.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// Rows per row group when neither the caller nor the memory budget says
/// otherwise (arrow's own writers' default).
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;

/// Parquet's compression codecs rdarrow writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParquetCompression {
    Zstd,
    Snappy,
    Gzip,
    Lz4,
    Uncompressed,
}

impl ParquetCompression {
    pub const NAMES: [&'static str; 5] = ["zstd", "snappy", "gzip", "lz4", "uncompressed"];

    /// The codec of a name the front ends take, or the error naming them.
    pub fn parse(name: &str) -> Result<Self> {
        Self::from_name(name).ok_or_else(|| {
            Error::usage(format!(
                "unknown Parquet compression '{name}'; use one of {}",
                Self::NAMES.join(", ")
            ))
        })
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "zstd" => Self::Zstd,
            "snappy" => Self::Snappy,
            "gzip" => Self::Gzip,
            "lz4" => Self::Lz4,
            "uncompressed" | "none" => Self::Uncompressed,
            _ => return None,
        })
    }

    pub(super) fn codec(self, level: Option<i32>) -> Result<Codec> {
        let bad =
            |e: parquet::errors::ParquetError| Error::usage(format!("compression level: {e}"));
        Ok(match self {
            Self::Zstd => Codec::ZSTD(match level {
                Some(l) => ZstdLevel::try_new(l).map_err(bad)?,
                None => ZstdLevel::default(),
            }),
            Self::Gzip => Codec::GZIP(match level {
                Some(l) if l >= 0 => GzipLevel::try_new(l as u32).map_err(bad)?,
                Some(l) => {
                    return Err(Error::usage(format!(
                        "compression level: {l} is not a gzip level (0 to 9)"
                    )))
                }
                None => GzipLevel::default(),
            }),
            Self::Snappy | Self::Lz4 | Self::Uncompressed if level.is_some() => {
                return Err(Error::usage(
                    format!("compression level: {self:?} has no levels").to_lowercase(),
                ))
            }
            Self::Snappy => Codec::SNAPPY,
            Self::Lz4 => Codec::LZ4_RAW,
            Self::Uncompressed => Codec::UNCOMPRESSED,
        })
    }
}

#[derive(Debug, Clone)]
pub struct ParquetOptions {
    pub compression: ParquetCompression,
    pub level: Option<i32>,
    /// Rows per row group ([`DEFAULT_ROW_GROUP_ROWS`] when `None`).
    pub row_group_rows: Option<usize>,
    /// Threads converting and encoding a row group's columns.
    pub threads: usize,
    /// For an object store URL: its options beyond the environment's.
    pub storage: crate::StorageOptions,
}

impl Default for ParquetOptions {
    fn default() -> Self {
        ParquetOptions {
            compression: ParquetCompression::Zstd,
            level: None,
            row_group_rows: None,
            threads: super::rows::all_cores(),
            storage: Default::default(),
        }
    }
}

pub(super) fn pq_err(what: &str) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
    move |e| match e {
        parquet::errors::ParquetError::External(inner) => {
            match inner.downcast::<std::io::Error>() {
                Ok(io) => Error::io(&io, &format!("cannot write Parquet ({what})")),
                Err(other) => Error::new(
                    ErrorKind::Io,
                    format!("cannot write Parquet ({what}): {other}"),
                ),
            }
        }
        parquet::errors::ParquetError::NYI(m) => {
            Error::unsupported(format!("Parquet cannot hold this data ({what}): {m}"))
        }
        other => Error::new(
            ErrorKind::Io,
            format!("cannot write Parquet ({what}): {other}"),
        ),
    }
}

/// The type a column is stored with: Parquet has no unit of seconds, and
/// readers (arrow's C++ among them) read a timestamp or time of seconds
/// back as plain integers, so they go in milliseconds (exactly).
pub(super) fn stored_type(dt: &DataType) -> DataType {
    use arrow_schema::{Field, TimeUnit};
    let field = |f: &arrow_schema::FieldRef| {
        std::sync::Arc::new(Field::clone(f).with_data_type(stored_type(f.data_type())))
    };
    match dt {
        DataType::Timestamp(TimeUnit::Second, tz) => {
            DataType::Timestamp(TimeUnit::Millisecond, tz.clone())
        }
        DataType::Time32(TimeUnit::Second) => DataType::Time32(TimeUnit::Millisecond),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        // Parquet has no struct without fields (an S4 object without
        // slots): one placeholder field, all null
        DataType::Struct(fs) if fs.is_empty() => {
            DataType::Struct(vec![Field::new(EMPTY_STRUCT_FIELD, DataType::Boolean, true)].into())
        }
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        // Parquet has no unions: a struct of the type ids and one field
        // per child, null where the slot is another child's
        DataType::Union(fs, _) => {
            let ids: Vec<String> = fs.iter().map(|(t, _)| t.to_string()).collect();
            let tag = Field::new(UNION_TYPE_FIELD, DataType::Int8, false).with_metadata(
                std::collections::HashMap::from([(UNION_IDS_KEY.to_string(), ids.join(","))]),
            );
            DataType::Struct(
                std::iter::once(std::sync::Arc::new(tag))
                    .chain(fs.iter().map(|(_, f)| field(f)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// The first field of the struct a union is stored as in Parquet (which
/// has no unions): each slot's type id; the other fields are the union's
/// children, each as long as the union, valid where the slot is theirs.
/// Lossless: the way back makes the dense union again ([`restored_array`]).
pub const UNION_TYPE_FIELD: &str = "__union_type";

/// The one field of the struct a struct without fields is stored as.
pub const EMPTY_STRUCT_FIELD: &str = "__empty_struct";

/// The type field's metadata key listing the union's type ids in the
/// order of its children (`0,1,2`).
const UNION_IDS_KEY: &str = "rdarrow.union_type_ids";

/// Whether `dt` holds a union (or a struct without fields) at any depth:
/// a type Parquet stores in a layout of its own.
fn has_union(dt: &DataType) -> bool {
    match dt {
        DataType::Union(..) => true,
        DataType::Struct(fs) if fs.is_empty() => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => has_union(f.data_type()),
        DataType::Struct(fs) => fs.iter().any(|f| has_union(f.data_type())),
        _ => false,
    }
}

/// Whether `dt` is a union stored as a struct ([`UNION_TYPE_FIELD`]).
fn is_stored_union(dt: &DataType) -> bool {
    matches!(dt, DataType::Struct(fs) if fs.first().is_some_and(|f| f.name() == UNION_TYPE_FIELD && *f.data_type() == DataType::Int8))
}

/// A column as Parquet keeps it: its unions (at any depth) as structs
/// ([`stored_type`]), a complex column's NA parts as nulls
/// ([`stored_complex`]).
pub(super) fn stored_array(array: ArrayRef) -> Result<ArrayRef> {
    let array = if has_union(array.data_type()) {
        unions_as_structs(array)?
    } else {
        array
    };
    Ok(stored_complex(array))
}

fn nested_err(e: arrow_schema::ArrowError) -> Error {
    Error::corrupt(format!("cannot lay out a union for Parquet: {e}"))
}

/// Rebuild a nested array around new children (a list's values, a
/// struct's columns), each field's type taken from its new child.
fn with_children(a: &ArrayRef, f: &dyn Fn(ArrayRef) -> Result<ArrayRef>) -> Result<ArrayRef> {
    use arrow_array::{FixedSizeListArray, StructArray};
    use std::sync::Arc;
    Ok(match a.data_type() {
        DataType::List(field) => relist(a.as_list::<i32>(), field, f)?,
        DataType::LargeList(field) => relist(a.as_list::<i64>(), field, f)?,
        DataType::FixedSizeList(field, n) => {
            let l = a.as_fixed_size_list();
            let v = f(l.values().clone())?;
            Arc::new(
                FixedSizeListArray::try_new(retyped(field, &v), *n, v, l.nulls().cloned())
                    .map_err(nested_err)?,
            )
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let cols: Vec<ArrayRef> = s
                .columns()
                .iter()
                .map(|c| f(c.clone()))
                .collect::<Result<_>>()?;
            let fields: arrow_schema::Fields = fields
                .iter()
                .zip(&cols)
                .map(|(fd, c)| retyped(fd, c))
                .collect();
            Arc::new(
                StructArray::try_new_with_length(fields, cols, s.nulls().cloned(), s.len())
                    .map_err(nested_err)?,
            )
        }
        _ => a.clone(),
    })
}

/// `field` with the type of its new `child`.
fn retyped(field: &arrow_schema::FieldRef, child: &ArrayRef) -> arrow_schema::FieldRef {
    std::sync::Arc::new(
        field
            .as_ref()
            .clone()
            .with_data_type(child.data_type().clone()),
    )
}

/// A list (of either offset width) around its values made anew by `f`,
/// its field typed by them.
fn relist<O: arrow_array::OffsetSizeTrait>(
    l: &arrow_array::GenericListArray<O>,
    field: &arrow_schema::FieldRef,
    f: &dyn Fn(ArrayRef) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    let v = f(l.values().clone())?;
    Ok(std::sync::Arc::new(
        arrow_array::GenericListArray::<O>::try_new(
            retyped(field, &v),
            l.offsets().clone(),
            v,
            l.nulls().cloned(),
        )
        .map_err(nested_err)?,
    ))
}

/// Every union in `a` as the struct Parquet keeps ([`UNION_TYPE_FIELD`]).
fn unions_as_structs(a: ArrayRef) -> Result<ArrayRef> {
    use arrow_array::{Int8Array, StructArray};
    use std::sync::Arc;
    if !has_union(a.data_type()) {
        return Ok(a);
    }
    if matches!(a.data_type(), DataType::Struct(fs) if fs.is_empty()) {
        let DataType::Struct(fields) = stored_type(a.data_type()) else {
            return Err(Error::internal("a struct is not stored as a struct"));
        };
        let none: ArrayRef = Arc::new(arrow_array::BooleanArray::new_null(a.len()));
        return Ok(Arc::new(
            StructArray::try_new_with_length(fields, vec![none], a.nulls().cloned(), a.len())
                .map_err(nested_err)?,
        ));
    }
    if !matches!(a.data_type(), DataType::Union(..)) {
        return with_children(&a, &unions_as_structs);
    }
    let u = a.as_union();
    let ids: Vec<i8> = (0..a.len()).map(|i| u.type_id(i)).collect();
    let DataType::Struct(stored_fields) = stored_type(a.data_type()) else {
        return Err(Error::internal("a union is not stored as a struct"));
    };
    let mut cols: Vec<ArrayRef> = vec![Arc::new(Int8Array::from(ids))];
    for member in super::union_members(u)? {
        cols.push(unions_as_structs(member)?);
    }
    let fields: arrow_schema::Fields = stored_fields
        .iter()
        .zip(&cols)
        .map(|(f, c)| Arc::new(f.as_ref().clone().with_data_type(c.data_type().clone())))
        .collect();
    Ok(Arc::new(
        StructArray::try_new_with_length(fields, cols, None, a.len()).map_err(nested_err)?,
    ))
}

/// The type a Parquet column read back has: a struct that holds a union
/// ([`UNION_TYPE_FIELD`]) the dense union again, at any depth.
pub(super) fn restored_type(dt: &DataType) -> DataType {
    use arrow_schema::Field;
    let field = |f: &arrow_schema::FieldRef| {
        std::sync::Arc::new(Field::clone(f).with_data_type(restored_type(f.data_type())))
    };
    match dt {
        DataType::Struct(fs) if is_stored_union(dt) => {
            let ids = union_ids(&fs[0], fs.len() - 1);
            let children: Vec<Field> = fs[1..].iter().map(|f| field(f).as_ref().clone()).collect();
            match arrow_schema::UnionFields::try_new(ids, children) {
                Ok(u) => DataType::Union(u, arrow_schema::UnionMode::Dense),
                Err(_) => dt.clone(),
            }
        }
        DataType::Struct(fs) if fs.len() == 1 && fs[0].name() == EMPTY_STRUCT_FIELD => {
            DataType::Struct(arrow_schema::Fields::empty())
        }
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// The type ids a stored union's type field lists (else 0, 1, ...).
fn union_ids(tag: &arrow_schema::Field, n: usize) -> Vec<i8> {
    let listed: Option<Vec<i8>> = tag
        .metadata()
        .get(UNION_IDS_KEY)
        .and_then(|s| s.split(',').map(|x| x.trim().parse().ok()).collect());
    match listed {
        Some(ids) if ids.len() == n => ids,
        _ => (0..n as i8).collect(),
    }
}

/// A Parquet column read back with its unions made again
/// ([`restored_type`]); a type id that names no child is a corrupt file.
pub(super) fn restored_array(a: ArrayRef) -> Result<ArrayRef> {
    use arrow_array::UnionArray;
    use std::sync::Arc;
    let want = restored_type(a.data_type());
    if &want == a.data_type() {
        return Ok(a);
    }
    if matches!(&want, DataType::Struct(fs) if fs.is_empty()) {
        return Ok(Arc::new(arrow_array::StructArray::new_empty_fields(
            a.len(),
            a.nulls().cloned(),
        )));
    }
    let DataType::Union(fields, _) = &want else {
        return with_children(&a, &restored_array);
    };
    let s = a.as_struct();
    let tags = s.column(0).as_primitive::<arrow_array::types::Int8Type>();
    let ids: Vec<i8> = fields.iter().map(|(t, _)| t).collect();
    let mut counts = vec![0i32; ids.len()];
    let mut type_ids = Vec::with_capacity(a.len());
    let mut offsets = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        let t = if tags.is_null(i) {
            ids[0]
        } else {
            tags.value(i)
        };
        let Some(k) = ids.iter().position(|&x| x == t) else {
            return Err(Error::corrupt(format!(
                "a union stored in Parquet names type id {t}, which it does not have"
            )));
        };
        type_ids.push(t);
        offsets.push(counts[k]);
        counts[k] += 1;
    }
    let mut children = Vec::with_capacity(ids.len());
    for (k, &t) in ids.iter().enumerate() {
        let child = restored_array(s.column(k + 1).clone())?;
        let mine = arrow_array::BooleanArray::from(
            type_ids.iter().map(|&x| x == t).collect::<Vec<bool>>(),
        );
        children.push(arrow_select::filter::filter(child.as_ref(), &mine).map_err(nested_err)?);
    }
    let fields: Vec<arrow_schema::Field> = fields
        .iter()
        .zip(&children)
        .map(|((_, f), c)| f.as_ref().clone().with_data_type(c.data_type().clone()))
        .collect();
    let fields = arrow_schema::UnionFields::try_new(ids, fields).map_err(nested_err)?;
    Ok(Arc::new(
        UnionArray::try_new(fields, type_ids.into(), Some(offsets.into()), children)
            .map_err(nested_err)?,
    ))
}

/// A complex column (the struct of its `re` and `im` parts) as Parquet can
/// keep it. In Arrow an element that is NA (either part `NA_real_`) is a
/// null slot whose parts keep their bits; Parquet stores nothing under a
/// null slot, so there the slot stays valid and the part that is
/// `NA_real_` is the null (`1.1+NAi` comes back as itself, not as
/// `NA+NAi`).
pub(super) fn stored_complex(array: ArrayRef) -> ArrayRef {
    use arrow_array::{Float64Array, StructArray};
    if array.null_count() == 0
        || array.data_type()
            != &super::types::arrow_type(super::types::RKind::Complex, &Default::default())
    {
        return array;
    }
    let parts = array.as_struct();
    let part = |k: usize| -> ArrayRef {
        let x = parts
            .column(k)
            .as_primitive::<arrow_array::types::Float64Type>();
        let valid = arrow_buffer::NullBuffer::from_iter(
            x.values().iter().map(|&v| !crate::tree::na::is_na_real(v)),
        );
        std::sync::Arc::new(Float64Array::new(x.values().clone(), Some(valid)))
    };
    let (fields, _, _) = parts.clone().into_parts();
    std::sync::Arc::new(StructArray::new(fields, vec![part(0), part(1)], None))
}

/// The Parquet leaf columns an Arrow type becomes.
pub(super) fn leaf_count(dt: &DataType) -> usize {
    match dt {
        DataType::Struct(fs) => fs.iter().map(|f| leaf_count(f.data_type())).sum(),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::FixedSizeList(f, _)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::Map(f, _) => leaf_count(f.data_type()),
        _ => 1,
    }
}

/// Rows sampled to tell whether a column's values repeat enough for
/// dictionary encoding, and the fewest worth telling from.
const DICTIONARY_SAMPLE: usize = 1 << 16;
const DICTIONARY_SAMPLE_MIN: usize = 1 << 10;

/// Whether more than half of the non-null values of `a` (a primitive or
/// string column) are distinct; `false` for other types.
fn mostly_distinct(a: &dyn Array) -> bool {
    let nulls = a.logical_nulls();
    let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
    let count = a.len() - nulls.as_ref().map_or(0, |n| n.null_count());
    let most = count / 2;
    let over = |mut keys: Box<dyn Iterator<Item = u128> + '_>| {
        let mut seen = std::collections::HashSet::with_capacity(most + 1);
        keys.any(|k| seen.insert(k) && seen.len() > most)
    };
    let dt = a.data_type();
    if dt.is_primitive() {
        let Some(width) = dt.primitive_width().filter(|&w| w <= 16) else {
            return false;
        };
        let data = a.to_data();
        let bytes = &data.buffers()[0].as_slice()[data.offset() * width..];
        return over(Box::new((0..a.len()).filter(|&i| valid(i)).map(|i| {
            let mut k = [0u8; 16];
            k[..width].copy_from_slice(&bytes[i * width..(i + 1) * width]);
            u128::from_le_bytes(k)
        })));
    }
    let state = std::collections::hash_map::RandomState::new();
    let hash = |b: &[u8]| std::hash::BuildHasher::hash_one(&state, b) as u128;
    match dt {
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            over(Box::new(s.iter().flatten().map(|v| hash(v.as_bytes()))))
        }
        DataType::LargeUtf8 => {
            let s = a.as_string::<i64>();
            over(Box::new(s.iter().flatten().map(|v| hash(v.as_bytes()))))
        }
        _ => false,
    }
}

/// The writer properties of every column chunk (the file's key-value
/// metadata aside).
pub(super) fn chunk_props(opts: &ParquetOptions) -> Result<WriterPropertiesBuilder> {
    Ok(WriterProperties::builder()
        .set_compression(opts.compression.codec(opts.level)?)
        .set_created_by(format!("rdarrow version {}", env!("CARGO_PKG_VERSION"))))
}

/// Whether the column `f` (as stored) of `rows` rows is dictionary
/// encoded, `sample(n)` giving its first `n` rows: not where the first
/// rows are mostly distinct (an id, measurements, times), which the writer
/// would encode with a dictionary until the dictionary outgrew its page
/// and then plainly, slower and larger than plainly from the start.
pub(super) fn wants_dictionary(
    f: &arrow_schema::Field,
    rows: usize,
    sample: impl FnOnce(usize) -> Result<ArrayRef>,
) -> Result<bool> {
    let n = rows.min(DICTIONARY_SAMPLE);
    if f.data_type().is_nested() || n < DICTIONARY_SAMPLE_MIN {
        return Ok(true);
    }
    Ok(!mostly_distinct(sample(n)?.as_ref()))
}

/// Write `src` as Parquet to `sink`: one row group of `row_group_rows`
/// rows at a time, its columns converted and encoded on `threads`
/// threads, then appended in order.
pub fn write_parquet<W: Write + Send>(
    src: &dyn ColumnSource,
    sink: W,
    opts: &ParquetOptions,
) -> Result<W> {
    write_parquet_with(src, sink, opts, None)
}

/// [`write_parquet`], splicing in the chunks `early` encoded while `src`'s
/// file was read (see [`super::parquet_during_parse`]).
pub fn write_parquet_with<W: Write + Send>(
    src: &dyn ColumnSource,
    sink: W,
    opts: &ParquetOptions,
    early: Option<&EarlyChunks>,
) -> Result<W> {
    let given = src.schema();
    let fields: Vec<arrow_schema::Field> = given
        .fields()
        .iter()
        .map(|f| {
            f.as_ref()
                .clone()
                .with_data_type(stored_type(f.data_type()))
        })
        .collect();
    let schema = std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        given.metadata().clone(),
    ));
    // the schema's metadata also as the file's own key-value pairs, as
    // arrow's C++ writer stores them (arrow R reads `"r"` from there)
    let kv: Vec<KeyValue> = schema
        .metadata()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let mut props = chunk_props(opts)?.set_key_value_metadata((!kv.is_empty()).then_some(kv));
    for (j, f) in schema.fields().iter().enumerate() {
        if !wants_dictionary(f, src.num_rows(), |n| src.column(j, 0, n))? {
            props =
                props.set_column_dictionary_enabled(ColumnPath::new(vec![f.name().clone()]), false);
        }
    }
    let props = props.build();
    let writer =
        ArrowWriter::try_new(sink, schema.clone(), Some(props)).map_err(pq_err("schema"))?;
    let (mut file, factory) = writer.into_serialized_writer().map_err(pq_err("schema"))?;
    let fields = schema.fields();
    // each field's first leaf column (a factor has just one)
    let leaves: Vec<ColumnDescPtr> = {
        let descr = file.schema_descr();
        let mut first = 0;
        fields
            .iter()
            .map(|f| {
                let d = descr.column(first);
                first += leaf_count(f.data_type());
                d
            })
            .collect()
    };
    let codec = opts.compression.codec(opts.level)?;
    let rows = opts.row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS);
    let groups = row_groups(src.num_rows(), rows);
    // a row group's column writers, each field's leaves taken by the cell
    // that encodes it
    let open = |g: usize| -> Result<Vec<Mutex<Vec<ArrowColumnWriter>>>> {
        let mut writers = factory
            .create_column_writers(g)
            .map_err(pq_err("column writers"))?
            .into_iter();
        Ok(fields
            .iter()
            .map(|f| Mutex::new(writers.by_ref().take(leaf_count(f.data_type())).collect()))
            .collect())
    };
    let encode = |g: usize, j: usize, writers: &Vec<Mutex<Vec<ArrowColumnWriter>>>| {
        let (start, len) = groups[g];
        if let (Some(early), Some(payload)) = (early, src.payload_start(j)) {
            if let Some(chunk) = early.take(payload, groups[g], &fields[j], &leaves[j])? {
                return Ok(vec![chunk]);
            }
        }
        let mut array = src.column(j, start, len)?;
        let name = fields[j].name();
        if has_union(array.data_type()) {
            array = unions_as_structs(array)?;
        }
        if array.data_type() != fields[j].data_type() {
            array = arrow_cast::cast(&array, fields[j].data_type())
                .map_err(|e| Error::corrupt(format!("column '{name}': {e}")))?;
        }
        let array = stored_array(array)?;
        let what = format!("column '{name}'");
        let ws = std::mem::take(&mut *writers[j].lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(chunk) =
            dictionary_chunk(&leaves[j], array.as_ref(), codec).map_err(pq_err(&what))?
        {
            return Ok(vec![chunk]);
        }
        let leaves = compute_leaves(&fields[j], &array).map_err(pq_err(&what))?;
        drop(array);
        ws.into_iter()
            .zip(leaves)
            .map(|(mut w, leaf)| {
                w.write(&leaf).map_err(pq_err(&what))?;
                w.close().map(Chunk::Arrow).map_err(pq_err(&what))
            })
            .collect::<Result<Vec<Chunk>>>()
    };
    let append = |_: usize, chunks: Vec<Vec<Chunk>>| {
        let mut group = file.next_row_group().map_err(pq_err("row group"))?;
        for c in chunks.into_iter().flatten() {
            match c {
                Chunk::Arrow(c) => c.append_to_row_group(&mut group),
                Chunk::Dictionary(bytes, close) => group.append_column(&bytes, close),
            }
            .map_err(pq_err("row group"))?;
        }
        group.close().map_err(pq_err("row group"))?;
        Ok(())
    };
    by_row_group(
        groups.len(),
        fields.len(),
        opts.threads,
        open,
        encode,
        append,
    )?;
    file.into_inner().map_err(pq_err("footer"))
}

/// A row group's column chunk, encoded.
pub(super) enum Chunk {
    /// By arrow-rs's column writer.
    Arrow(ArrowColumnChunk),
    /// By [`dictionary_chunk`]: the chunk's bytes and what describes them.
    Dictionary(Bytes, ColumnCloseResult),
}

/// Values per data page of a [`dictionary_chunk`].
const DICTIONARY_PAGE_VALUES: usize = 1 << 20;

/// A factor's column chunk with the factor's own levels as the dictionary
/// page: all of them, in their order, as arrow's C++ writer stores a
/// dictionary column. (arrow-rs's writer encodes the values again, which
/// gives each row group a dictionary in order of first appearance and
/// drops unused levels, so readers would see other levels.) The keys go in
/// data pages (version 1: definition levels, then the keys, both in the
/// RLE/bit-packed hybrid). `None` for anything but a flat dictionary of
/// non-null strings, which arrow-rs's writer then takes.
pub(super) fn dictionary_chunk(
    descr: &ColumnDescPtr,
    array: &dyn Array,
    codec: Codec,
) -> parquet::errors::Result<Option<Chunk>> {
    use parquet::basic::Encoding;
    use parquet::column::page::{CompressedPage, Page, PageWriter};
    use parquet::encodings::rle::RleEncoder;
    use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
    let Some(dict) = array.as_any_dictionary_opt() else {
        return Ok(None);
    };
    let values = dict.values();
    let levels: Vec<&[u8]> = match values.data_type() {
        DataType::Utf8 => values
            .as_string::<i32>()
            .iter()
            .flatten()
            .map(str::as_bytes)
            .collect(),
        DataType::LargeUtf8 => values
            .as_string::<i64>()
            .iter()
            .flatten()
            .map(str::as_bytes)
            .collect(),
        _ => return Ok(None),
    };
    if descr.max_rep_level() != 0 || levels.is_empty() || levels.len() != values.len() {
        return Ok(None);
    }
    let mut compressor = parquet::compression::create_codec(codec, &Default::default())?;
    let mut compressed = Vec::new();
    let mut compress = |plain: Vec<u8>| -> parquet::errors::Result<(Bytes, usize)> {
        let size = plain.len();
        Ok(match compressor.as_mut() {
            Some(c) => {
                compressed.clear();
                c.compress(&plain, &mut compressed)?;
                (Bytes::copy_from_slice(&compressed), size)
            }
            None => (Bytes::from(plain), size),
        })
    };
    let mut sink = TrackedWrite::new(Vec::new());
    let mut pages = SerializedPageWriter::new(&mut sink);
    let (mut compressed_size, mut uncompressed_size) = (0u64, 0u64);
    let mut count = |spec: parquet::column::page::PageWriteSpec| {
        compressed_size += spec.compressed_size as u64;
        uncompressed_size += spec.uncompressed_size as u64;
        spec.offset
    };

    let mut plain = Vec::with_capacity(levels.iter().map(|l| 4 + l.len()).sum());
    for l in &levels {
        plain.extend_from_slice(&(l.len() as u32).to_le_bytes());
        plain.extend_from_slice(l);
    }
    let (buf, size) = compress(plain)?;
    let page = Page::DictionaryPage {
        buf,
        num_values: levels.len() as u32,
        encoding: Encoding::PLAIN,
        is_sorted: false,
    };
    let dictionary_offset = count(pages.write_page(CompressedPage::new(page, size))?);

    let keys = dict.normalized_keys();
    let nulls = dict.keys().logical_nulls();
    let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
    let nullable = descr.max_def_level() > 0;
    // the chunk's statistics: its smallest and largest value in byte order
    // (as Parquet orders UTF-8), among the levels it uses, and its nulls
    let mut used = vec![false; levels.len()];
    for i in (0..keys.len()).filter(|&i| valid(i)) {
        if let Some(u) = used.get_mut(keys[i]) {
            *u = true;
        }
    }
    let mut in_use = levels
        .iter()
        .zip(&used)
        .filter(|(_, &u)| u)
        .map(|(l, _)| *l);
    let first = in_use.next();
    let (min, max) = in_use.fold((first, first), |(lo, hi), l| {
        (lo.min(Some(l)), hi.max(Some(l)))
    });
    let null_count = nulls.as_ref().map_or(0, |n| n.null_count()) as u64;
    let statistics = parquet::file::statistics::Statistics::ByteArray(
        parquet::file::statistics::ValueStatistics::new(
            min.map(|m| m.to_vec().into()),
            max.map(|m| m.to_vec().into()),
            None,
            Some(null_count),
            false,
        ),
    );
    if !nullable && null_count > 0 {
        return Err(parquet::errors::ParquetError::General(
            "a column declared without nulls holds nulls".into(),
        ));
    }
    let width = (usize::BITS - (levels.len() - 1).leading_zeros()).max(1) as u8;
    let mut data_offset = None;
    for start in (0..keys.len()).step_by(DICTIONARY_PAGE_VALUES) {
        let end = (start + DICTIONARY_PAGE_VALUES).min(keys.len());
        let mut plain = Vec::new();
        if nullable {
            let mut defs = RleEncoder::new(1, 1024);
            (start..end).for_each(|i| defs.put(valid(i) as u64));
            let defs = defs.consume();
            plain.extend_from_slice(&(defs.len() as u32).to_le_bytes());
            plain.extend_from_slice(&defs);
        }
        let mut ids = RleEncoder::new(width, 1024);
        for i in (start..end).filter(|&i| valid(i)) {
            ids.put(keys[i] as u64);
        }
        plain.push(width);
        plain.extend_from_slice(&ids.consume());
        let (buf, size) = compress(plain)?;
        let page = Page::DataPage {
            buf,
            num_values: (end - start) as u32,
            encoding: Encoding::RLE_DICTIONARY,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        let offset = count(pages.write_page(CompressedPage::new(page, size))?);
        data_offset.get_or_insert(offset);
    }
    pages.close()?;
    let encodings = [Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY];
    let metadata = ColumnChunkMetaData::builder(descr.clone())
        .set_compression(codec)
        .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
        .set_total_compressed_size(compressed_size as i64)
        .set_total_uncompressed_size(uncompressed_size as i64)
        .set_num_values(keys.len() as i64)
        .set_data_page_offset(data_offset.unwrap_or(dictionary_offset) as i64)
        .set_dictionary_page_offset(Some(dictionary_offset as i64))
        .set_statistics(statistics)
        .build()?;
    let bytes = Bytes::from(sink.into_inner()?);
    Ok(Some(Chunk::Dictionary(
        bytes.clone(),
        ColumnCloseResult {
            bytes_written: bytes.len() as u64,
            rows_written: keys.len() as u64,
            metadata,
            bloom_filter: None,
            column_index: None,
            offset_index: None,
        },
    )))
}

/// Write `src` as Parquet to `path`; the file appears only complete.
pub fn write_parquet_file(
    src: &dyn ColumnSource,
    path: &Path,
    opts: &ParquetOptions,
) -> Result<()> {
    write_parquet_file_with(src, path, opts, None)
}

/// [`write_parquet_file`] with [`write_parquet_with`]'s `early` chunks.
pub fn write_parquet_file_with(
    src: &dyn ColumnSource,
    path: &Path,
    opts: &ParquetOptions,
    early: Option<&EarlyChunks>,
) -> Result<()> {
    crate::atomic_write(path, &opts.storage, |f| {
        write_parquet_into(src, f, opts, early)
    })
}

/// Write `src` as Parquet into `f`, a file being written (by
/// [`crate::atomic_write`] or a [`crate::FileBatch`]).
pub fn write_parquet_into(
    src: &dyn ColumnSource,
    f: &mut crate::WritebackFile<'_>,
    opts: &ParquetOptions,
    early: Option<&EarlyChunks>,
) -> Result<()> {
    let w = write_parquet_with(
        src,
        std::io::BufWriter::with_capacity(1 << 20, f),
        opts,
        early,
    )?;
    w.into_inner()
        .map_err(|e| Error::io(e.error(), "cannot write"))
        .map(|_| ())
}

// ---------------------------------------------------------------------------
// Reading

/// Whether `prefix` starts a Parquet file.
pub fn is_parquet(prefix: &[u8]) -> bool {
    prefix.starts_with(MAGIC)
}

/// A Parquet file open for reading column by column.
pub struct ParquetFile {
    file: std::fs::File,
    what: String,
    builder_schema: SchemaRef,
    metadata: std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    max_memory: u64,
}

fn read_err(what: &str) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
    move |e| match e {
        parquet::errors::ParquetError::NYI(m) => {
            Error::unsupported(format!("cannot read the Parquet file {what}: {m}"))
        }
        parquet::errors::ParquetError::EOF(m) => Error::new(
            ErrorKind::Truncated,
            format!("the Parquet file {what} is truncated: {m}"),
        ),
        other => Error::corrupt(format!("cannot read the Parquet file {what}: {other}")),
    }
}

/// The Parquet reader can panic on malformed data instead of returning an
/// error: such a panic is a corrupt-file error here.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::base::error::guard_reader(&format!("the Parquet file {what}"), "reader", f)
}

impl ParquetFile {
    /// Open `path`, reading its footer and schema; columns may decode at
    /// most `max_memory` bytes each (the decoding memory limit).
    pub fn open(path: &Path, max_memory: u64) -> Result<ParquetFile> {
        let what = format!("'{}'", path.display());
        let file =
            std::fs::File::open(path).map_err(|e| Error::io(&e, &format!("cannot open {what}")))?;
        let mut head = [0u8; 4];
        use std::io::Read;
        let n = (&file)
            .read(&mut head)
            .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
        if !is_parquet(&head[..n]) {
            return Err(Error::new(
                ErrorKind::NotRData,
                format!("{what} is not a Parquet file (it does not start with PAR1)"),
            ));
        }
        let f2 = file
            .try_clone()
            .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
        let builder = guarded(&what, || {
            ParquetRecordBatchReaderBuilder::try_new_with_options(f2, ArrowReaderOptions::new())
                .map_err(read_err(&what))
        })?;
        let builder_schema = builder.schema().clone();
        let metadata = builder.metadata().clone();
        Ok(ParquetFile {
            file,
            what,
            builder_schema,
            metadata,
            max_memory,
        })
    }

    /// The file's schema, its unions (stored as structs) made again.
    pub fn schema(&self) -> SchemaRef {
        let s = &self.builder_schema;
        if !s
            .fields()
            .iter()
            .any(|f| restored_type(f.data_type()) != *f.data_type())
        {
            return s.clone();
        }
        let fields: Vec<arrow_schema::Field> = s
            .fields()
            .iter()
            .map(|f| {
                f.as_ref()
                    .clone()
                    .with_data_type(restored_type(f.data_type()))
            })
            .collect();
        std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            s.metadata().clone(),
        ))
    }

    pub fn num_rows(&self) -> usize {
        self.metadata.file_metadata().num_rows().max(0) as usize
    }

    /// What the chunks of top-level column `j` in these row groups declare
    /// they take decoded: an error past the memory limit.
    fn check_declared(&self, j: usize, groups: std::ops::Range<usize>) -> Result<()> {
        let leaves = leaf_range(&self.builder_schema, j);
        let declared: i64 = self.metadata.row_groups()[groups.clone()]
            .iter()
            .map(|g| {
                leaves
                    .clone()
                    .map(|l| g.column(l).uncompressed_size().max(0))
                    .sum::<i64>()
            })
            .sum();
        if declared as u64 > self.max_memory {
            let what = &self.what;
            let which = if groups.len() == 1 {
                format!(" in row group {}", groups.start + 1)
            } else {
                String::new()
            };
            return Err(Error::limit_of(
                crate::base::error::LimitKind::Memory,
                format!("column {}{which} of the Parquet file {what} declares {declared} bytes, more than the memory limit", j + 1),
            ));
        }
        Ok(())
    }

    /// Every row of top-level column `j` in the chunks the reader gives,
    /// row group by row group (a batch that spanned two would have its
    /// dictionary encoded again: a factor's levels lost), each handed to
    /// `each` as soon as it is read.
    pub fn chunks(&self, j: usize, each: &mut dyn FnMut(ArrayRef) -> Result<()>) -> Result<()> {
        let what = &self.what;
        let meta = guarded(what, || {
            ArrowReaderMetadata::try_new(self.metadata.clone(), Default::default())
                .map_err(read_err(what))
        })?;
        for g in 0..self.metadata.num_row_groups() {
            self.check_declared(j, g..g + 1)?;
            let f = self
                .file
                .try_clone()
                .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
            let mut reader = guarded(what, || {
                let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(f, meta.clone());
                let mask = ProjectionMask::roots(builder.parquet_schema(), [j]);
                builder
                    .with_projection(mask)
                    .with_row_groups(vec![g])
                    .with_batch_size(1 << 16)
                    .build()
                    .map_err(read_err(what))
            })?;
            loop {
                crate::base::cancel::check()?;
                let Some(b) = guarded(what, || Ok(reader.next()))? else {
                    break;
                };
                let b: RecordBatch = b.map_err(|e| {
                    Error::corrupt(format!("cannot read the Parquet file {what}: {e}"))
                })?;
                each(restored_array(b.column(0).clone())?)?;
            }
        }
        Ok(())
    }
}

impl super::from_arrow::ColumnChunks for ParquetFile {
    fn schema(&self) -> SchemaRef {
        ParquetFile::schema(self)
    }
    fn num_rows(&self) -> usize {
        ParquetFile::num_rows(self)
    }
    fn chunks(&self, j: usize, each: &mut dyn FnMut(ArrayRef) -> Result<()>) -> Result<()> {
        ParquetFile::chunks(self, j, each)
    }
    fn column(&self, j: usize) -> Result<Vec<ArrayRef>> {
        // held whole: within the memory limit as a whole
        self.check_declared(j, 0..self.metadata.num_row_groups())?;
        super::from_arrow::all_chunks(self, j)
    }
}

/// The Parquet leaf columns of top-level field `j`.
fn leaf_range(schema: &SchemaRef, j: usize) -> std::ops::Range<usize> {
    let start: usize = schema
        .fields()
        .iter()
        .take(j)
        .map(|f| leaf_count(f.data_type()))
        .sum();
    start..start + leaf_count(schema.field(j).data_type())
}

/// A whole Parquet file as record batches: the columns are read one after
/// another, row group by row group, and each row group's batches are
/// kept apart (a factor's row groups each hold its levels, which
/// concatenating would repeat).
pub fn read_parquet_file(path: &Path, max_memory: u64) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let f = ParquetFile::open(path, max_memory)?;
    let schema = f.schema();
    let mut cols: Vec<Vec<ArrayRef>> = (0..schema.fields().len())
        .map(|j| super::from_arrow::ColumnChunks::column(&f, j))
        .collect::<Result<_>>()?;
    let lengths = |c: &Vec<ArrayRef>| c.iter().map(|a| a.len()).collect::<Vec<_>>();
    let aligned = cols.windows(2).all(|w| lengths(&w[0]) == lengths(&w[1]));
    if !aligned {
        for (j, c) in cols.iter_mut().enumerate() {
            let refs: Vec<&dyn Array> = c.iter().map(|a| a.as_ref()).collect();
            *c = vec![if refs.is_empty() {
                arrow_array::new_empty_array(schema.field(j).data_type())
            } else {
                arrow_select::concat::concat(&refs)
                    .map_err(|e| Error::corrupt(format!("cannot assemble a column: {e}")))?
            }];
        }
    }
    let batch = |columns: Vec<ArrayRef>, rows: usize| {
        RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| {
            Error::corrupt(format!(
                "cannot read the Parquet file '{}': {e}",
                path.display()
            ))
        })
    };
    if cols.is_empty() {
        return Ok((schema.clone(), vec![batch(Vec::new(), f.num_rows())?]));
    }
    let chunks = cols[0].len();
    let mut columns: Vec<_> = cols.into_iter().map(|c| c.into_iter()).collect();
    let batches = (0..chunks)
        .map(|_| {
            let parts: Vec<ArrayRef> = columns
                .iter_mut()
                .map(|c| c.next().expect("aligned chunks"))
                .collect();
            let rows = parts[0].len();
            batch(parts, rows)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((schema, batches))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_arrow::ColumnChunks;
    use crate::ArrowTable;
    use arrow_array::types::Int32Type;
    use arrow_array::{DictionaryArray, Int32Array, StringArray};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    #[test]
    fn dictionaries_only_where_values_repeat() {
        let n = 5000;
        let unique = Int32Array::from_iter_values(0..n);
        let repeated = Int32Array::from_iter_values((0..n).map(|i| i % 10));
        let words = StringArray::from_iter_values((0..n).map(|i| format!("w{}", i % 7)));
        let names = StringArray::from_iter_values((0..n).map(|i| format!("name {i}")));
        // nulls do not count: half null, the rest distinct
        let sparse = Int32Array::from_iter((0..n).map(|i| (i % 2 == 0).then_some(i)));
        assert!(mostly_distinct(&unique));
        assert!(!mostly_distinct(&repeated));
        assert!(!mostly_distinct(&words));
        assert!(mostly_distinct(&names));
        assert!(mostly_distinct(&sparse));
        let schema = Arc::new(Schema::new(vec![
            Field::new("unique", DataType::Int32, false),
            Field::new("repeated", DataType::Int32, false),
            Field::new("words", DataType::Utf8, false),
            Field::new("names", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(unique),
                Arc::new(repeated),
                Arc::new(words),
                Arc::new(names),
            ],
        )
        .unwrap();
        let table = ArrowTable {
            schema,
            batches: vec![batch.clone()],
            warnings: vec![],
        };
        let bytes = Bytes::from(write_parquet(&table, Vec::new(), &Default::default()).unwrap());
        let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        let rg = builder.metadata().row_group(0).clone();
        let dictionary: Vec<bool> = (0..4)
            .map(|c| rg.column(c).dictionary_page_offset().is_some())
            .collect();
        assert_eq!(dictionary, [false, true, true, false]);
        let back: Vec<RecordBatch> = builder
            .with_batch_size(n as usize)
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].columns(), batch.columns());
    }

    #[test]
    fn a_factor_keeps_its_levels_in_every_row_group() {
        // levels "b", "a", "unused": not in order of appearance, one unused
        let n = 10_000;
        let keys =
            Int32Array::from_iter((0..n).map(|i| (i % 7 != 3).then_some((i % 5 / 3) as i32)));
        let levels = Arc::new(StringArray::from(vec!["b", "a", "unused"]));
        let factor = DictionaryArray::<Int32Type>::try_new(keys, levels.clone()).unwrap();
        let ids = Int32Array::from_iter_values(0..n as i32);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("g", factor.data_type().clone(), true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(ids), Arc::new(factor.clone())],
        )
        .unwrap();
        let table = ArrowTable {
            schema: schema.clone(),
            batches: vec![batch],
            warnings: vec![],
        };
        for compression in [ParquetCompression::Zstd, ParquetCompression::Uncompressed] {
            let opts = ParquetOptions {
                compression,
                row_group_rows: Some(3000),
                threads: 2,
                ..Default::default()
            };
            let bytes = Bytes::from(write_parquet(&table, Vec::new(), &opts).unwrap());
            let reader = ParquetRecordBatchReaderBuilder::try_new(bytes.clone())
                .unwrap()
                .with_batch_size(3000)
                .build()
                .unwrap();
            let mut at = 0;
            for b in reader {
                let b = b.unwrap();
                assert_eq!(b.schema().field(1).data_type(), factor.data_type());
                let got = b.column(1).as_dictionary::<Int32Type>();
                assert_eq!(got.values().as_ref(), levels.as_ref() as &dyn Array);
                let want = factor.slice(at, b.num_rows());
                assert_eq!(got.keys(), want.keys(), "rows from {at}");
                at += b.num_rows();
            }
            assert_eq!(at, n);
            // each chunk's statistics: the levels it uses ("a" < "b"; never
            // "unused") and its nulls
            let meta = ParquetRecordBatchReaderBuilder::try_new(bytes.clone())
                .unwrap()
                .metadata()
                .clone();
            for (g, rg) in meta.row_groups().iter().enumerate() {
                let st = rg.column(1).statistics().expect("statistics");
                let parquet::file::statistics::Statistics::ByteArray(st) = st else {
                    panic!("{st:?}")
                };
                assert_eq!(st.min_opt().unwrap().data(), b"a");
                assert_eq!(st.max_opt().unwrap().data(), b"b");
                let rows = (g * 3000)..((g + 1) * 3000).min(n);
                let nulls = rows.filter(|i| i % 7 == 3).count() as u64;
                assert_eq!(st.null_count_opt(), Some(nulls), "row group {g}");
            }
            // and rdarrow's own reader, row group by row group
            let path = std::env::temp_dir().join(format!(
                "rdarrow-factor-{}-{compression:?}.parquet",
                std::process::id()
            ));
            std::fs::write(&path, &bytes).unwrap();
            let chunks = ParquetFile::open(&path, u64::MAX)
                .unwrap()
                .column(1)
                .unwrap();
            std::fs::remove_file(&path).unwrap();
            assert_eq!(chunks.len(), 4);
            for c in &chunks {
                let c = c.as_dictionary::<Int32Type>();
                assert_eq!(c.values().as_ref(), levels.as_ref() as &dyn Array);
            }
        }
    }
}
