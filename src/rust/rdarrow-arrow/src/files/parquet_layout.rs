//! How rdarrow lays Arrow columns out in Parquet: the options, the stored
//! types (unions and empty structs as structs, complex as a struct), and
//! dictionary-encoded chunks.

use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::ErrorKind;
use rdarrow_format::base::error::Result;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::arrow::arrow_writer::ArrowColumnChunk;
use parquet::basic::EncodingMask;
use parquet::basic::{Compression as Codec, GzipLevel, ZstdLevel};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder};
use parquet::schema::types::ColumnDescPtr;

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

    pub(crate) fn codec(self, level: Option<i32>) -> Result<Codec> {
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
    /// Rows per row group ([`crate::batches::rows::DEFAULT_ROW_GROUP_ROWS`] when `None`).
    pub row_group_rows: Option<usize>,
    /// Threads converting and encoding a row group's columns.
    pub threads: usize,
    /// For an object store URL: its options beyond the environment's.
    pub storage: rdarrow_format::StorageOptions,
}

impl Default for ParquetOptions {
    fn default() -> Self {
        ParquetOptions {
            compression: ParquetCompression::Zstd,
            level: None,
            row_group_rows: None,
            threads: crate::batches::rows::all_cores(),
            storage: Default::default(),
        }
    }
}

pub(crate) fn pq_err(what: &str) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
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
pub(crate) fn stored_type(dt: &DataType) -> DataType {
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
pub(crate) const UNION_IDS_KEY: &str = "rdarrow.union_type_ids";

/// Whether `dt` holds a union (or a struct without fields) at any depth:
/// a type Parquet stores in a layout of its own.
pub(crate) fn has_union(dt: &DataType) -> bool {
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
pub(crate) fn is_stored_union(dt: &DataType) -> bool {
    matches!(dt, DataType::Struct(fs) if fs.first().is_some_and(|f| f.name() == UNION_TYPE_FIELD && *f.data_type() == DataType::Int8))
}

/// A column as Parquet keeps it: its unions (at any depth) as structs
/// ([`stored_type`]), a complex column's NA parts as nulls
/// ([`stored_complex`]).
pub(crate) fn stored_array(array: ArrayRef) -> Result<ArrayRef> {
    let array = if has_union(array.data_type()) {
        unions_as_structs(array)?
    } else {
        array
    };
    Ok(stored_complex(array))
}

pub(crate) fn nested_err(e: arrow_schema::ArrowError) -> Error {
    Error::corrupt(format!("cannot lay out a union for Parquet: {e}"))
}

/// Rebuild a nested array around new children (a list's values, a
/// struct's columns), each field's type taken from its new child.
pub(crate) fn with_children(a: &ArrayRef, f: &dyn Fn(ArrayRef) -> Result<ArrayRef>) -> Result<ArrayRef> {
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
pub(crate) fn retyped(field: &arrow_schema::FieldRef, child: &ArrayRef) -> arrow_schema::FieldRef {
    std::sync::Arc::new(
        field
            .as_ref()
            .clone()
            .with_data_type(child.data_type().clone()),
    )
}

/// A list (of either offset width) around its values made anew by `f`,
/// its field typed by them.
pub(crate) fn relist<O: arrow_array::OffsetSizeTrait>(
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
pub(crate) fn unions_as_structs(a: ArrayRef) -> Result<ArrayRef> {
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
    for member in crate::union_members(u)? {
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
pub(crate) fn restored_type(dt: &DataType) -> DataType {
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
pub(crate) fn union_ids(tag: &arrow_schema::Field, n: usize) -> Vec<i8> {
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
pub(crate) fn restored_array(a: ArrayRef) -> Result<ArrayRef> {
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
pub(crate) fn stored_complex(array: ArrayRef) -> ArrayRef {
    use arrow_array::{Float64Array, StructArray};
    if array.null_count() == 0
        || array.data_type()
            != &crate::mapping::types::arrow_type(crate::mapping::types::RKind::Complex, &Default::default())
    {
        return array;
    }
    let parts = array.as_struct();
    let part = |k: usize| -> ArrayRef {
        let x = parts
            .column(k)
            .as_primitive::<arrow_array::types::Float64Type>();
        let valid = arrow_buffer::NullBuffer::from_iter(
            x.values().iter().map(|&v| !rdarrow_format::tree::na::is_na_real(v)),
        );
        std::sync::Arc::new(Float64Array::new(x.values().clone(), Some(valid)))
    };
    let (fields, _, _) = parts.clone().into_parts();
    std::sync::Arc::new(StructArray::new(fields, vec![part(0), part(1)], None))
}

/// The Parquet leaf columns an Arrow type becomes.
pub(crate) fn leaf_count(dt: &DataType) -> usize {
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
pub(crate) const DICTIONARY_SAMPLE: usize = 1 << 16;

pub(crate) const DICTIONARY_SAMPLE_MIN: usize = 1 << 10;

/// Whether more than half of the non-null values of `a` (a primitive or
/// string column) are distinct; `false` for other types.
pub(crate) fn mostly_distinct(a: &dyn Array) -> bool {
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
pub(crate) fn chunk_props(opts: &ParquetOptions) -> Result<WriterPropertiesBuilder> {
    Ok(WriterProperties::builder()
        .set_compression(opts.compression.codec(opts.level)?)
        .set_created_by(format!("rdarrow version {}", env!("CARGO_PKG_VERSION"))))
}

/// Whether the column `f` (as stored) of `rows` rows is dictionary
/// encoded, `sample(n)` giving its first `n` rows: not where the first
/// rows are mostly distinct (an id, measurements, times), which the writer
/// would encode with a dictionary until the dictionary outgrew its page
/// and then plainly, slower and larger than plainly from the start.
pub(crate) fn wants_dictionary(
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

/// A row group's column chunk, encoded.
pub(crate) enum Chunk {
    /// By arrow-rs's column writer.
    Arrow(ArrowColumnChunk),
    /// By [`dictionary_chunk`]: the chunk's bytes and what describes them.
    Dictionary(Bytes, ColumnCloseResult),
}

/// Values per data page of a [`dictionary_chunk`].
pub(crate) const DICTIONARY_PAGE_VALUES: usize = 1 << 20;

/// `values` (each under 2^`width`) in Parquet's RLE/bit-packed hybrid
/// encoding, without its length prefix: a run of 8 or more equal values
/// as an RLE run (ULEB128 header `len << 1`, the value in whole bytes),
/// the rest bit-packed (header `groups << 1 | 1`, groups of 8 values,
/// least significant bit first, the last group padded with zeros).
fn rle_hybrid(values: &[u64], width: u8) -> Vec<u8> {
    fn uleb(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }
    // whether a run of at least 8 equal values starts at `i`
    let run8 = |i: usize| i + 8 <= values.len() && values[i + 1..i + 8].iter().all(|&v| v == values[i]);
    let value_bytes = (width as usize).div_ceil(8);
    let mut out = Vec::with_capacity(values.len() * width as usize / 8 + 16);
    let mut i = 0;
    while i < values.len() {
        if run8(i) {
            let mut end = i + 8;
            while end < values.len() && values[end] == values[i] {
                end += 1;
            }
            uleb(&mut out, ((end - i) as u64) << 1);
            out.extend_from_slice(&values[i].to_le_bytes()[..value_bytes]);
            i = end;
            continue;
        }
        // groups of 8 until a run begins at a group's start (or 63 groups,
        // whose count fits the header's one byte)
        let start = i;
        let mut groups = 0usize;
        loop {
            groups += 1;
            i = start + groups * 8;
            if i >= values.len() || groups == 63 || run8(i) {
                break;
            }
        }
        uleb(&mut out, ((groups as u64) << 1) | 1);
        let mut acc = 0u128;
        let mut bits = 0u32;
        for k in start..start + groups * 8 {
            acc |= (values.get(k).copied().unwrap_or(0) as u128) << bits;
            bits += width as u32;
            while bits >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(acc as u8);
        }
        i = i.min(values.len());
    }
    out
}

/// A page's bytes compressed as Parquet's `codec` says (`None`: stored as
/// they are): zstd and gzip at the codec's level, Snappy's raw format,
/// LZ4's block format (LZ4_RAW).
fn compress_page(codec: Codec, plain: &[u8]) -> parquet::errors::Result<Option<Vec<u8>>> {
    use parquet::errors::ParquetError;
    let external = |e: std::io::Error| ParquetError::External(Box::new(e));
    Ok(Some(match codec {
        Codec::UNCOMPRESSED => return Ok(None),
        Codec::ZSTD(level) => zstd::bulk::compress(plain, level.compression_level()).map_err(external)?,
        Codec::GZIP(level) => {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level.compression_level()));
            e.write_all(plain).map_err(external)?;
            e.finish().map_err(external)?
        }
        Codec::SNAPPY => snap::raw::Encoder::new()
            .compress_vec(plain)
            .map_err(|e| ParquetError::External(Box::new(e)))?,
        Codec::LZ4_RAW => lz4_flex::block::compress(plain),
        other => {
            return Err(ParquetError::General(format!(
                "rdarrow does not write Parquet pages compressed with {other}"
            )))
        }
    }))
}

/// A factor's column chunk with the factor's own levels as the dictionary
/// page: all of them, in their order, as arrow's C++ writer stores a
/// dictionary column. (arrow-rs's writer encodes the values again, which
/// gives each row group a dictionary in order of first appearance and
/// drops unused levels, so readers would see other levels.) The keys go in
/// data pages (version 1: definition levels, then the keys, both in the
/// RLE/bit-packed hybrid). `None` for anything but a flat dictionary of
/// non-null strings, which arrow-rs's writer then takes.
pub(crate) fn dictionary_chunk(
    descr: &ColumnDescPtr,
    array: &dyn Array,
    codec: Codec,
) -> parquet::errors::Result<Option<Chunk>> {
    use parquet::basic::Encoding;
    use parquet::column::page::{CompressedPage, Page, PageWriter};
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
    let compress = |plain: Vec<u8>| -> parquet::errors::Result<(Bytes, usize)> {
        let size = plain.len();
        Ok(match compress_page(codec, &plain)? {
            Some(compressed) => (Bytes::from(compressed), size),
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
            let defs: Vec<u64> = (start..end).map(|i| valid(i) as u64).collect();
            let defs = rle_hybrid(&defs, 1);
            plain.extend_from_slice(&(defs.len() as u32).to_le_bytes());
            plain.extend_from_slice(&defs);
        }
        let ids: Vec<u64> = (start..end).filter(|&i| valid(i)).map(|i| keys[i] as u64).collect();
        plain.push(width);
        plain.extend_from_slice(&rle_hybrid(&ids, width));
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
