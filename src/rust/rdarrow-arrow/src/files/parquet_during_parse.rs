//! Parquet column chunks encoded while their R data file is still being
//! read.
//!
//! Converting a compressed R data file to Parquet has two phases: the
//! parse, whose pace the decompressor sets on one core, and the row
//! groups, converted and encoded on every core once the parse is done
//! ([`crate::to_arrow::streamed::StreamedTable`], [`crate::files::parquet::write_parquet`]).
//! The file stores a data frame column after column, so as soon as a
//! column has been parsed its row groups can be converted and encoded, on
//! the core the parse leaves idle. [`EarlyChunks::hook`] is the parse's
//! [`rdarrow_format::Consumer`]: a worker thread takes each column as it
//! completes and encodes its row groups one after another, their pages
//! kept in a spill file beside the output ([`BlobSpill`]), so memory holds
//! one row group of one column. When the parse ends the worker stops after
//! the chunk at hand ([`EarlyChunks::finish`]), and the Parquet writer
//! splices the chunks it finds into the file in their places, encoding the
//! others as usual.
//!
//! A chunk is used only where it is what the writer would have made:
//! the same payload (by its place in the stream), the same row-group
//! bounds, the same Arrow type and dictionary choice, made by the same
//! conversion and writer properties. R stores a data frame's names after
//! its columns, so a chunk is encoded under a placeholder name, and its
//! description gets the real column when it is spliced; the file is byte
//! for byte the one the writer makes alone.

use crate::files::parquet_layout::chunk_props;
use crate::files::parquet_layout::dictionary_chunk;
use crate::files::parquet_layout::leaf_count;
use crate::files::parquet_layout::pq_err;
use crate::files::parquet_layout::stored_array;
use crate::files::parquet_layout::stored_type;
use crate::files::parquet_layout::wants_dictionary;
use crate::files::parquet_layout::Chunk;
use crate::files::parquet_layout::ParquetOptions;
use crate::batches::rows::row_groups;
use crate::to_arrow::streamed::element_bytes;
use crate::to_arrow::streamed::rows_for;
use crate::to_arrow::streamed::ColumnSoFar;
use crate::to_arrow::options::TableOptions;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::read::spill::BlobSpill;
use rdarrow_format::read::spill::PayloadStore;
use rdarrow_format::tree::RObject;
use rdarrow_format::tree::RefTable;
use arrow_array::ArrayRef;
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowWriterOptions, PageKey, PageStore, PageStoreArgs, PageStoreFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::schema::types::{ColumnDescPtr, ColumnPath};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

/// The name a chunk is encoded under until it is spliced.
const PLACEHOLDER: &str = "column";

/// A chunk encoded early, its pages in the spill.
enum Encoded {
    /// By arrow-rs's column writer, its pages in the spill.
    Arrow(parquet::arrow::arrow_writer::ArrowColumnChunk),
    /// A factor's chunk ([`dictionary_chunk`]): its bytes' place.
    Dictionary {
        at: u64,
        len: usize,
        close: ColumnCloseResult,
    },
}

/// Where a chunk belongs: its column's payload start in the stream, and
/// the row group's first row and rows.
type Key = (u64, usize, usize);

/// Chunks encoded while the file is being read; see the module doc.
pub struct EarlyChunks {
    shared: Arc<Shared>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Shared {
    opts: ParquetOptions,
    table: TableOptions,
    /// Rows per row group as the caller asked.
    rows: Option<usize>,
    memory: u64,
    spill: Arc<BlobSpill>,
    stop: AtomicBool,
    /// Bytes per row of the columns seen so far (the row groups' size
    /// follows from all of them, as [`crate::to_arrow::streamed::StreamedTable`]
    /// sizes them).
    row_bytes: AtomicU64,
    /// The chunk and its stored type.
    done: Mutex<HashMap<Key, (DataType, Encoded)>>,
}

/// A column to encode: what the hook was given.
struct Job {
    node: RObject,
    refs: RefTable,
    header: rdarrow_format::StreamHeader,
    store: PayloadStore,
    rows: usize,
}

impl EarlyChunks {
    /// Ready to encode the columns of a file read with `table`, to be
    /// written with `opts`; row groups of `rows` rows (else sized for
    /// `memory` as [`rows_for`] sizes them); pages spilled to `spill_dir`.
    pub fn start(
        opts: &ParquetOptions,
        table: &TableOptions,
        rows: Option<usize>,
        memory: u64,
        spill_dir: &std::path::Path,
    ) -> Result<EarlyChunks> {
        let shared = Arc::new(Shared {
            opts: opts.clone(),
            table: table.clone(),
            rows,
            memory,
            spill: Arc::new(BlobSpill::new(spill_dir)?),
            stop: AtomicBool::new(false),
            row_bytes: AtomicU64::new(0),
            done: Mutex::new(HashMap::new()),
        });
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("rdarrow-early-parquet".into())
                .spawn(move || {
                    for job in rx {
                        if shared.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        // a column that fails (or panics) here is encoded
                        // by the writer, which reports what is wrong
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            shared.encode(job)
                        }));
                    }
                })
                .map_err(|e| Error::io(&e, "cannot start a thread"))?
        };
        Ok(EarlyChunks {
            shared,
            jobs: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(worker)),
        })
    }

    /// As the reader's consumer: each deferred column goes to the worker.
    pub fn consumer(self: &Arc<Self>) -> Arc<dyn rdarrow_format::Consumer> {
        self.clone()
    }

    fn offer(
        &self,
        obj: &RObject,
        refs: &RefTable,
        header: &rdarrow_format::StreamHeader,
        store: Option<PayloadStore>,
    ) {
        let bytes = element_bytes(obj);
        let row_bytes = self.shared.row_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let rows = self
            .shared
            .rows
            .unwrap_or_else(|| rows_for(row_bytes, self.shared.memory));
        // the hook's store comes with a payload left in the stream; a
        // matrix column is converted whole by the writer
        let Some(store) = store else { return };
        if crate::mapping::objects::matrix_dims(obj, refs).is_some() {
            return;
        }
        if self.shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let job = Job {
            node: obj.clone(),
            refs: refs.clone(),
            header: header.clone(),
            store,
            rows,
        };
        if let Some(tx) = &*self.jobs.lock().unwrap_or_else(|e| e.into_inner()) {
            let _ = tx.send(job);
        }
    }

    /// Stop the worker after the chunk at hand; the chunks made so far stay
    /// for [`Self::take`].
    pub fn finish(&self) {
        self.end(true)
    }

    /// Stop taking columns; with `stop`, stop the one at hand too.
    fn end(&self, stop: bool) {
        if stop {
            self.shared.stop.store(true, Ordering::Relaxed);
        }
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(w) = self.worker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = w.join();
        }
    }

    /// The chunk of the column whose payload starts at `payload`, rows
    /// `[start, start + len)`, if one was made as the writer would make
    /// it for the field `field` (as stored) described by `descr`.
    pub(crate) fn take(
        &self,
        payload: u64,
        (start, len): (usize, usize),
        field: &Field,
        descr: &ColumnDescPtr,
    ) -> Result<Option<Chunk>> {
        let found = self
            .shared
            .done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(payload, start, len));
        let Some((dt, encoded)) = found else {
            return Ok(None);
        };
        if &dt != field.data_type() || !field.is_nullable() {
            return Ok(None);
        }
        let what = format!("column '{}'", field.name());
        Ok(Some(match encoded {
            Encoded::Arrow(mut chunk) => {
                let close = chunk.close_mut();
                close.metadata =
                    with_descriptor(&close.metadata, descr.clone()).map_err(pq_err(&what))?;
                Chunk::Arrow(chunk)
            }
            Encoded::Dictionary { at, len, mut close } => {
                let bytes = self
                    .shared
                    .spill
                    .get(at, len)
                    .map_err(|e| Error::io(&e, "cannot read the temporary file"))?;
                close.metadata =
                    with_descriptor(&close.metadata, descr.clone()).map_err(pq_err(&what))?;
                Chunk::Dictionary(Bytes::from(bytes), close)
            }
        }))
    }
}

impl Drop for EarlyChunks {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Shared {
    /// Encode a column's row groups, one after another, until told to
    /// stop.
    fn encode(&self, job: Job) -> Result<()> {
        let rows = job.rows;
        let col = ColumnSoFar::new(job.node, job.refs, job.header, job.store, &self.table, rows)?;
        let Some(payload) = col.payload_start() else {
            return Ok(());
        };
        let stored = stored_type(col.data_type());
        if leaf_count(&stored) != 1 {
            return Ok(());
        }
        let field = Field::new(PLACEHOLDER, stored.clone(), true);
        let mut props = chunk_props(&self.opts)?;
        if !wants_dictionary(&field, col.len(), |n| col.rows(0, n))? {
            props = props
                .set_column_dictionary_enabled(ColumnPath::new(vec![PLACEHOLDER.into()]), false);
        }
        let schema = Arc::new(Schema::new(vec![field.clone()]));
        let options = ArrowWriterOptions::new()
            .with_properties(props.build())
            .with_page_store_factory(Arc::new(SpilledPages(self.spill.clone())));
        let writer = ArrowWriter::try_new_with_options(std::io::sink(), schema, options)
            .map_err(pq_err("schema"))?;
        let (file, factory) = writer.into_serialized_writer().map_err(pq_err("schema"))?;
        let descr = file.schema_descr().column(0);
        let codec = self.opts.compression.codec(self.opts.level)?;
        for (g, (start, len)) in row_groups(col.len(), rows).into_iter().enumerate() {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let array: ArrayRef = col.rows(start, len)?;
            let array = stored_array(array)?;
            let array = if array.data_type() != &stored {
                arrow_cast::cast(&array, &stored).map_err(|e| Error::corrupt(e.to_string()))?
            } else {
                array
            };
            let encoded =
                match dictionary_chunk(&descr, array.as_ref(), codec).map_err(pq_err("column"))? {
                    Some(Chunk::Dictionary(bytes, close)) => {
                        let at = self
                            .spill
                            .put(&bytes)
                            .map_err(|e| Error::io(&e, "cannot write the temporary file"))?;
                        Encoded::Dictionary {
                            at,
                            len: bytes.len(),
                            close,
                        }
                    }
                    Some(Chunk::Arrow(c)) => Encoded::Arrow(c),
                    None => {
                        let mut w = factory
                            .create_column_writers(g)
                            .map_err(pq_err("column writers"))?
                            .pop()
                            .ok_or_else(|| Error::internal("no column writer"))?;
                        let leaves = compute_leaves(&field, &array).map_err(pq_err("column"))?;
                        drop(array);
                        for leaf in leaves {
                            w.write(&leaf).map_err(pq_err("column"))?;
                        }
                        Encoded::Arrow(w.close().map_err(pq_err("column"))?)
                    }
                };
            self.done
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((payload, start, len), (stored.clone(), encoded));
        }
        Ok(())
    }
}

/// `md` describing the column `descr`: every field the writer keeps when
/// it splices a chunk (see `SerializedRowGroupWriter::append_column`).
fn with_descriptor(
    md: &ColumnChunkMetaData,
    descr: ColumnDescPtr,
) -> parquet::errors::Result<ColumnChunkMetaData> {
    let mut b = ColumnChunkMetaData::builder(descr)
        .set_compression_codec(md.compression_codec())
        .set_encodings_mask(*md.encodings_mask())
        .set_total_compressed_size(md.compressed_size())
        .set_total_uncompressed_size(md.uncompressed_size())
        .set_num_values(md.num_values())
        .set_data_page_offset(md.data_page_offset())
        .set_dictionary_page_offset(md.dictionary_page_offset())
        .set_unencoded_byte_array_data_bytes(md.unencoded_byte_array_data_bytes())
        .set_repetition_level_histogram(md.repetition_level_histogram().cloned())
        .set_definition_level_histogram(md.definition_level_histogram().cloned());
    if let Some(s) = md.statistics() {
        b = b.set_statistics(s.clone());
    }
    if let Some(g) = md.geo_statistics() {
        b = b.set_geo_statistics(Box::new(g.clone()));
    }
    if let Some(p) = md.page_encoding_stats() {
        b = b.set_page_encoding_stats(p.clone());
    }
    b.build()
}

/// Pages kept in the spill file until their chunk is spliced.
struct SpilledPages(Arc<BlobSpill>);

impl std::fmt::Debug for SpilledPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SpilledPages")
    }
}

impl PageStoreFactory for SpilledPages {
    fn create(&self, _: &PageStoreArgs<'_>) -> parquet::errors::Result<Box<dyn PageStore>> {
        Ok(Box::new(ChunkPages {
            spill: self.0.clone(),
            places: Vec::new(),
        }))
    }
}

/// One chunk's pages: their places in the spill.
struct ChunkPages {
    spill: Arc<BlobSpill>,
    places: Vec<(u64, usize)>,
}

impl PageStore for ChunkPages {
    fn put(&mut self, value: Bytes) -> parquet::errors::Result<PageKey> {
        let at = self.spill.put(&value)?;
        self.places.push((at, value.len()));
        Ok(PageKey::new(self.places.len() as u64 - 1))
    }

    fn take(&mut self, key: PageKey) -> parquet::errors::Result<Bytes> {
        let (at, len) = *self
            .places
            .get(key.get() as usize)
            .ok_or_else(|| parquet::errors::ParquetError::General("no such page".into()))?;
        Ok(Bytes::from(self.spill.get(at, len)?))
    }
}

/// The columns' payloads stay in the stream; each column, with the store
/// that already holds its payload, goes to the worker.
impl rdarrow_format::Consumer for EarlyChunks {
    fn placement(&self) -> rdarrow_format::Placement {
        rdarrow_format::Placement::Defer
    }
    fn column(&self, column: rdarrow_format::Column<'_>) {
        self.offer(column.object, column.refs, column.header, column.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::parquet::write_parquet_file;
    use crate::files::parquet::write_parquet_file_with;
    use crate::to_arrow::streamed::open_table;
    use crate::to_arrow::table::table_from_object;
    use rdarrow_format::Compression;

    impl EarlyChunks {
        /// The chunks made and not yet taken.
        fn made(&self) -> usize {
            self.shared.done.lock().unwrap().len()
        }
    }

    #[test]
    fn chunks_encoded_while_reading_give_the_same_file() {
        let dir = std::env::temp_dir().join(format!("rdarrow-early-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let n = 5000;
        let doc = crate::to_arrow::table::tests::wide_doc(n);
        let opts = TableOptions {
            object_name: "x".into(),
            ..Default::default()
        };
        let rows = 1500;
        let popts = ParquetOptions {
            row_group_rows: Some(rows),
            ..Default::default()
        };
        // the file the writer makes from the table in memory
        let table = table_from_object(&doc, &doc.root, &opts).unwrap();
        let whole = dir.join("whole.parquet");
        write_parquet_file(&table, &whole, &popts).unwrap();
        let whole = std::fs::read(&whole).unwrap();
        let deferred = 6; // every column
        for comp in [Compression::Gzip, Compression::None, Compression::Xz] {
            let path = dir.join(format!("f-{}.rds", comp.name()));
            rdarrow_format::write_file(&doc, &path, comp, None).unwrap();
            let early =
                Arc::new(EarlyChunks::start(&popts, &opts, Some(rows), 1 << 30, &dir).unwrap());
            let t = open_table(
                &path,
                None,
                "x",
                opts.clone(),
                rdarrow_format::ReadOptions::default(),
                &dir,
                Some(rows),
                1 << 30,
                Some(early.consumer()),
            )
            .unwrap();
            // every column's chunks, whatever the threads' pace
            early.end(false);
            assert_eq!(early.made(), deferred * n.div_ceil(rows), "{comp:?}");
            let out = dir.join("early.parquet");
            write_parquet_file_with(t.source.as_ref(), &out, &popts, Some(&early)).unwrap();
            // all spliced in, and the file is the one made without them
            assert_eq!(early.made(), 0);
            assert!(std::fs::read(&out).unwrap() == whole, "{comp:?}");
        }
        // only the temporary files' names are gone: nothing left behind
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".rdarrow"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
