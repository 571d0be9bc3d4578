//! Parquet files, written and read. The Arrow schema, with rdarrow's `"r"`
//! metadata, is stored in the file as arrow writers store it (the
//! `ARROW:schema` key), so `arrow::read_parquet()`, pyarrow and rdarrow
//! itself get the types and R attributes back. Writing takes a
//! [`ColumnSource`] one row group at a time, converting and encoding the
//! columns of a row group on all cores; reading goes one column at a time
//! (Parquet stores each column's chunks apart), so a file is never held
//! whole.

use super::rows::{per_column, row_groups, ColumnSource};
use crate::error::{Error, ErrorKind, Result};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression as Codec, GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
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

    fn codec(self, level: Option<i32>) -> Result<Codec> {
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
}

impl Default for ParquetOptions {
    fn default() -> Self {
        ParquetOptions {
            compression: ParquetCompression::Zstd,
            level: None,
            row_group_rows: None,
            threads: super::rows::all_cores(),
        }
    }
}

fn pq_err(what: &str) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
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
fn stored_type(dt: &DataType) -> DataType {
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
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// The Parquet leaf columns an Arrow type becomes.
fn leaf_count(dt: &DataType) -> usize {
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

/// Write `src` as Parquet to `sink`: one row group of `row_group_rows`
/// rows at a time, its columns converted and encoded on `threads`
/// threads, then appended in order.
pub fn write_parquet<W: Write + Send>(
    src: &dyn ColumnSource,
    sink: W,
    opts: &ParquetOptions,
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
    let props = WriterProperties::builder()
        .set_key_value_metadata((!kv.is_empty()).then_some(kv))
        .set_compression(opts.compression.codec(opts.level)?)
        .set_created_by(format!("rdarrow version {}", env!("CARGO_PKG_VERSION")))
        .build();
    let writer =
        ArrowWriter::try_new(sink, schema.clone(), Some(props)).map_err(pq_err("schema"))?;
    let (mut file, factory) = writer.into_serialized_writer().map_err(pq_err("schema"))?;
    let fields = schema.fields();
    let rows = opts.row_group_rows.unwrap_or(DEFAULT_ROW_GROUP_ROWS);
    for (g, (start, len)) in row_groups(src.num_rows(), rows).into_iter().enumerate() {
        let mut writers = factory
            .create_column_writers(g)
            .map_err(pq_err("column writers"))?
            .into_iter();
        let per_field: Vec<Mutex<Vec<_>>> = fields
            .iter()
            .map(|f| Mutex::new(writers.by_ref().take(leaf_count(f.data_type())).collect()))
            .collect();
        let chunks: Vec<Vec<ArrowColumnChunk>> = per_column(fields.len(), opts.threads, |j| {
            let mut array = src.column(j, start, len)?;
            let name = fields[j].name();
            if array.data_type() != fields[j].data_type() {
                array = arrow_cast::cast(&array, fields[j].data_type())
                    .map_err(|e| Error::corrupt(format!("column '{name}': {e}")))?;
            }
            let what = format!("column '{name}'");
            let leaves = compute_leaves(&fields[j], &array).map_err(pq_err(&what))?;
            drop(array);
            let ws = std::mem::take(&mut *per_field[j].lock().unwrap_or_else(|e| e.into_inner()));
            ws.into_iter()
                .zip(leaves)
                .map(|(mut w, leaf)| {
                    w.write(&leaf).map_err(pq_err(&what))?;
                    w.close().map_err(pq_err(&what))
                })
                .collect()
        })?;
        let mut group = file.next_row_group().map_err(pq_err("row group"))?;
        for c in chunks.into_iter().flatten() {
            c.append_to_row_group(&mut group)
                .map_err(pq_err("row group"))?;
        }
        group.close().map_err(pq_err("row group"))?;
    }
    file.into_inner().map_err(pq_err("footer"))
}

/// Write `src` as Parquet to `path`; the file appears only complete.
pub fn write_parquet_file(
    src: &dyn ColumnSource,
    path: &Path,
    opts: &ParquetOptions,
) -> Result<()> {
    crate::atomic_write(path, |f| {
        let w = write_parquet(src, std::io::BufWriter::with_capacity(1 << 20, f), opts)?;
        w.into_inner()
            .map_err(|e| Error::io(e.error(), "cannot write"))
            .map(|_| ())
    })
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
    match crate::error::catch_quietly(f) {
        Ok(r) => r,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("malformed data");
            Err(Error::corrupt(format!(
                "cannot read the Parquet file {what}: the reader failed ({detail})"
            )))
        }
    }
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

    pub fn schema(&self) -> SchemaRef {
        self.builder_schema.clone()
    }

    pub fn num_rows(&self) -> usize {
        self.metadata.file_metadata().num_rows().max(0) as usize
    }

    /// Every row of top-level column `j`, as the chunks the reader gives.
    pub fn column(&self, j: usize) -> Result<Vec<ArrayRef>> {
        let what = &self.what;
        // what the column's chunks declare, before decoding them
        let leaves = leaf_range(&self.builder_schema, j);
        let declared: i64 = self
            .metadata
            .row_groups()
            .iter()
            .map(|g| {
                leaves
                    .clone()
                    .map(|l| g.column(l).uncompressed_size().max(0))
                    .sum::<i64>()
            })
            .sum();
        if declared as u64 > self.max_memory {
            return Err(Error::limit_of(
                crate::error::LimitKind::Memory,
                format!("column {} of the Parquet file {what} declares {declared} bytes, more than the memory limit", j + 1),
            ));
        }
        guarded(what, || {
            let f = self
                .file
                .try_clone()
                .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
            let builder =
                ParquetRecordBatchReaderBuilder::try_new_with_options(f, ArrowReaderOptions::new())
                    .map_err(read_err(what))?;
            let mask = ProjectionMask::roots(builder.parquet_schema(), [j]);
            let reader = builder
                .with_projection(mask)
                .with_batch_size(1 << 16)
                .build()
                .map_err(read_err(what))?;
            let mut out = Vec::new();
            for b in reader {
                crate::cancel::check()?;
                let b: RecordBatch = b.map_err(|e| {
                    Error::corrupt(format!("cannot read the Parquet file {what}: {e}"))
                })?;
                out.push(b.column(0).clone());
            }
            Ok(out)
        })
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

/// A whole Parquet file as batches of one column each: for callers that
/// want every column (the columns are read one after another).
pub fn read_parquet_file(path: &Path, max_memory: u64) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let f = ParquetFile::open(path, max_memory)?;
    let schema = f.schema();
    let cols: Vec<ArrayRef> = (0..schema.fields().len())
        .map(|j| {
            let parts = f.column(j)?;
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            if refs.is_empty() {
                return Ok(arrow_array::new_empty_array(schema.field(j).data_type()));
            }
            arrow_select::concat::concat(&refs)
                .map_err(|e| Error::corrupt(format!("cannot assemble a column: {e}")))
        })
        .collect::<Result<_>>()?;
    let batch = RecordBatch::try_new_with_options(
        schema.clone(),
        cols,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(f.num_rows())),
    )
    .map_err(|e| {
        Error::corrupt(format!(
            "cannot read the Parquet file '{}': {e}",
            path.display()
        ))
    })?;
    Ok((schema, vec![batch]))
}
