//! Parquet files, written and read. The Arrow schema, with rdarrow's `"r"`
//! metadata, is stored in the file as arrow writers store it (the
//! `ARROW:schema` key), so `arrow::read_parquet()`, pyarrow and rdarrow
//! itself get the types and R attributes back. Writing takes a
//! [`ColumnSource`] one row group at a time, converting and encoding the
//! columns of a row group on all cores; reading goes one column at a time
//! (Parquet stores each column's chunks apart), so a file is never held
//! whole.

use crate::files::parquet_layout::Chunk;
use crate::files::parquet_layout::ParquetOptions;
use crate::files::parquet_layout::chunk_props;
use crate::files::parquet_layout::dictionary_chunk;
use crate::files::parquet_layout::has_union;
use crate::files::parquet_layout::leaf_count;
use crate::files::parquet_layout::pq_err;
use crate::files::parquet_layout::restored_array;
use crate::files::parquet_layout::restored_type;
use crate::files::parquet_layout::stored_array;
use crate::files::parquet_layout::stored_type;
use crate::files::parquet_layout::unions_as_structs;
use crate::files::parquet_layout::wants_dictionary;
use crate::files::parquet_during_parse::EarlyChunks;
use crate::batches::rows::by_row_group;
use crate::batches::rows::row_groups;
use crate::batches::rows::ColumnSource;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::ErrorKind;
use rdarrow_format::base::error::Result;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::file::metadata::KeyValue;
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The four bytes a Parquet file starts and ends with.
pub const MAGIC: &[u8; 4] = b"PAR1";

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
/// file was read (see [`crate::files::parquet_during_parse`]).
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
    let rows = opts.row_group_rows.unwrap_or(crate::batches::rows::DEFAULT_ROW_GROUP_ROWS);
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
    rdarrow_format::atomic_write(path, &opts.storage, |f| {
        write_parquet_into(src, f, opts, early)
    })
}

/// Write `src` as Parquet into `f`, a file being written (by
/// [`rdarrow_format::atomic_write`] or a [`rdarrow_format::FileBatch`]).
pub fn write_parquet_into(
    src: &dyn ColumnSource,
    f: &mut rdarrow_format::WritebackFile<'_>,
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
    rdarrow_format::base::error::guard_reader(&format!("the Parquet file {what}"), "reader", f)
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
                rdarrow_format::base::error::LimitKind::Memory,
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
                rdarrow_format::base::cancel::check()?;
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

impl crate::from_arrow::frame::ColumnChunks for ParquetFile {
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
        crate::from_arrow::frame::all_chunks(self, j)
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
        .map(|j| crate::from_arrow::frame::ColumnChunks::column(&f, j))
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
    use crate::files::parquet_layout::{mostly_distinct, ParquetCompression};
    use arrow_array::cast::AsArray;
    use bytes::Bytes;
    use arrow_schema::DataType;
    use super::*;
    use crate::from_arrow::frame::ColumnChunks;
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
    fn a_factor_reads_back_whatever_its_codec_width_and_runs() {
        // the dictionary pages' own RLE/bit-packed hybrid and compression
        // (files/parquet_layout.rs), read back by parquet's reader
        let n = 20_003usize;
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for n_levels in [1usize, 2, 3, 200, 300, 70_000] {
            let levels = Arc::new(StringArray::from_iter_values((0..n_levels).map(|i| format!("l{i}"))));
            // long runs, single values and nulls, mixed
            let keys = Int32Array::from_iter((0..n).map(|i| {
                let block = i / 97;
                if block % 5 == 4 && next() % 3 == 0 {
                    None
                } else if block % 2 == 0 {
                    Some((block % n_levels) as i32)
                } else {
                    Some((next() % n_levels) as i32)
                }
            }));
            let factor = DictionaryArray::<Int32Type>::try_new(keys, levels.clone()).unwrap();
            let schema = Arc::new(Schema::new(vec![Field::new("g", factor.data_type().clone(), true)]));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(factor.clone())]).unwrap();
            let table = ArrowTable { schema, batches: vec![batch], warnings: vec![] };
            for compression in [
                ParquetCompression::Zstd,
                ParquetCompression::Snappy,
                ParquetCompression::Gzip,
                ParquetCompression::Lz4,
                ParquetCompression::Uncompressed,
            ] {
                let opts = ParquetOptions { compression, threads: 1, ..Default::default() };
                let bytes = Bytes::from(write_parquet(&table, Vec::new(), &opts).unwrap());
                let back: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(bytes)
                    .unwrap()
                    .with_batch_size(n)
                    .build()
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
                let got = back[0].column(0).as_dictionary::<Int32Type>();
                assert_eq!(got.values().as_ref(), levels.as_ref() as &dyn Array, "{n_levels} levels, {compression:?}");
                assert_eq!(got.keys(), factor.keys(), "{n_levels} levels, {compression:?}");
            }
        }
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
