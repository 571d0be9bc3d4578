//! Arrow IPC files (the file format, a.k.a. Feather v2) and streams, read
//! and written, and the Arrow C stream that hands a table to another
//! library. Reading checks what a file declares (message lengths,
//! decompressed sizes) before the IPC reader allocates for it.

use crate::batches::rows::assemble;
use crate::batches::rows::by_row_group;
use crate::batches::rows::row_groups;
use crate::batches::rows::ColumnSource;
use crate::ArrowTable;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
use arrow_schema::SchemaRef;
use std::io::Write;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcFormat {
    File,
    Stream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcCompression {
    Uncompressed,
    Lz4,
    Zstd,
}

impl IpcFormat {
    /// The format of a name the front ends take (`"file"`, `"stream"`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "file" => Ok(Self::File),
            "stream" => Ok(Self::Stream),
            other => Err(Error::usage(format!(
                "unknown IPC format '{other}' (use \"file\" or \"stream\")"
            ))),
        }
    }
}

impl IpcCompression {
    /// The codec of a name the front ends take, as Arrow names them.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "uncompressed" | "none" => Ok(Self::Uncompressed),
            "lz4" => Ok(Self::Lz4),
            "zstd" => Ok(Self::Zstd),
            other => Err(Error::usage(format!(
                "unknown IPC compression '{other}' (use \"uncompressed\", \"lz4\" or \"zstd\")"
            ))),
        }
    }
}

fn write_err(e: impl std::fmt::Display) -> Error {
    Error::new(rdarrow_format::ErrorKind::Io, format!("cannot write Arrow IPC: {e}"))
}

/// The IPC writer's options for `compression`.
fn write_options(compression: IpcCompression) -> Result<IpcWriteOptions> {
    let codec = match compression {
        IpcCompression::Uncompressed => None,
        IpcCompression::Lz4 => Some(CompressionType::LZ4_FRAME),
        IpcCompression::Zstd => Some(CompressionType::ZSTD),
    };
    IpcWriteOptions::default()
        .try_with_compression(codec)
        .map_err(write_err)
}

/// Write a table as Arrow IPC to any sink.
pub fn write_ipc<W: Write>(
    table: &ArrowTable,
    sink: W,
    format: IpcFormat,
    compression: IpcCompression,
) -> Result<W> {
    let opts = write_options(compression)?;
    match format {
        IpcFormat::File => {
            let mut w =
                FileWriter::try_new_with_options(sink, &table.schema, opts).map_err(write_err)?;
            for b in &table.batches {
                w.write(b).map_err(write_err)?;
            }
            w.finish().map_err(write_err)?;
            w.into_inner().map_err(write_err)
        }
        IpcFormat::Stream => {
            let mut w =
                StreamWriter::try_new_with_options(sink, &table.schema, opts).map_err(write_err)?;
            for b in &table.batches {
                w.write(b).map_err(write_err)?;
            }
            w.finish().map_err(write_err)?;
            w.into_inner().map_err(write_err)
        }
    }
}

/// Write a [`ColumnSource`] as Arrow IPC to any sink, one record batch of
/// `rows` rows at a time (its columns made on `threads` threads).
pub fn write_ipc_source<W: Write>(
    src: &dyn ColumnSource,
    sink: W,
    format: IpcFormat,
    compression: IpcCompression,
    rows: usize,
    threads: usize,
) -> Result<W> {
    let opts = write_options(compression)?;
    let schema = src.schema();
    let groups = row_groups(src.num_rows(), rows);
    macro_rules! write_all {
        ($w:expr) => {{
            let mut w = $w;
            // the next batch's columns are made while one is written
            by_row_group(
                groups.len(),
                schema.fields().len(),
                threads,
                |_| Ok(()),
                |g, j, _| src.column(j, groups[g].0, groups[g].1),
                |g, cols| {
                    let batch = assemble(schema.clone(), cols, groups[g].1)?;
                    w.write(&batch).map_err(write_err)
                },
            )?;
            w.finish().map_err(write_err)?;
            w.into_inner().map_err(write_err)
        }};
    }
    match format {
        IpcFormat::File => {
            write_all!(FileWriter::try_new_with_options(sink, &schema, opts).map_err(write_err)?)
        }
        IpcFormat::Stream => {
            write_all!(StreamWriter::try_new_with_options(sink, &schema, opts).map_err(write_err)?)
        }
    }
}

/// [`write_ipc_source`] to `path`; the file appears only complete.
pub fn write_ipc_source_file(
    src: &dyn ColumnSource,
    path: &Path,
    format: IpcFormat,
    compression: IpcCompression,
    rows: usize,
    threads: usize,
    storage: &rdarrow_format::StorageOptions,
) -> Result<()> {
    rdarrow_format::atomic_write(path, storage, |f| {
        let w = write_ipc_source(
            src,
            std::io::BufWriter::with_capacity(1 << 20, f),
            format,
            compression,
            rows,
            threads,
        )?;
        w.into_inner()
            .map_err(|e| Error::io(e.error(), "cannot write"))
            .map(|_| ())
    })
}

/// Write a table as Arrow IPC to `path`; the file appears only complete.
pub fn write_ipc_file(
    table: &ArrowTable,
    path: &Path,
    format: IpcFormat,
    compression: IpcCompression,
    storage: &rdarrow_format::StorageOptions,
) -> Result<()> {
    rdarrow_format::atomic_write(path, storage, |f| {
        write_ipc_into(table, f, format, compression)
    })
}

/// Write a table as Arrow IPC into `f`, a file being written (by
/// [`rdarrow_format::atomic_write`] or a [`rdarrow_format::FileBatch`]).
pub fn write_ipc_into(
    table: &ArrowTable,
    f: &mut rdarrow_format::WritebackFile<'_>,
    format: IpcFormat,
    compression: IpcCompression,
) -> Result<()> {
    let w = write_ipc(table, std::io::BufWriter::new(f), format, compression)?;
    w.into_inner()
        .map_err(|e| Error::io(e.error(), "cannot write"))
        .map(|_| ())
}

/// The table as an Arrow C stream. Its callbacks never call into R and may
/// run on any thread; the arrays share the table's buffers.
pub fn into_ffi_stream(table: ArrowTable) -> FFI_ArrowArrayStream {
    let reader = RecordBatchIterator::new(table.batches.into_iter().map(Ok), table.schema);
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(reader);
    FFI_ArrowArrayStream::new(reader)
}

/// A table converted row group by row group (see
/// [`crate::to_arrow::streamed::open_table`]) as an Arrow C stream: each batch of
/// `rows` rows is made when the consumer asks for it, on all cores.
pub fn streamed_ffi_stream(
    source: Box<dyn crate::batches::rows::ColumnSource + Send>,
    rows: usize,
) -> FFI_ArrowArrayStream {
    let reader = crate::batches::rows::RowGroupReader::new(source, rows, crate::batches::rows::all_cores());
    FFI_ArrowArrayStream::new(Box::new(reader))
}

// ---------------------------------------------------------------------------
// Reading

/// Read an Arrow IPC file or stream held in memory; the file format is told
/// apart from the stream format by its leading `ARROW1` magic. `what` names
/// the source in error messages; compressed buffers may declare at most
/// `max_memory` bytes in all (the decoding memory limit).
pub fn read_ipc_bytes(
    bytes: Vec<u8>,
    what: &str,
    max_memory: u64,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    read_ipc_from(std::io::Cursor::new(bytes), what, max_memory)
}

/// Read an Arrow IPC file or stream from `path` (see [`read_ipc_bytes`]).
pub fn read_ipc_file(
    path: &std::path::Path,
    max_memory: u64,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let what = format!("'{}'", path.display());
    let f = std::fs::File::open(path).map_err(|e| Error::io(&e, &format!("cannot open {what}")))?;
    read_ipc_from(
        std::io::BufReader::with_capacity(1 << 20, f),
        &what,
        max_memory,
    )
}

/// The Arrow IPC reader can panic on malformed buffers (a length past the
/// end of the body) instead of returning an error: such a panic is a
/// corrupt-file error here, never an unwinding into the host.
fn read_ipc_from<R: std::io::Read + std::io::Seek>(
    r: R,
    what: &str,
    max_memory: u64,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    rdarrow_format::base::error::guard_reader(&format!("the Arrow data of {what}"), "IPC reader", || {
        read_ipc_unguarded(r, what, max_memory)
    })
}

/// The record batch a record-batch or dictionary message carries.
fn message_batch<'a>(message: &arrow_ipc::Message<'a>) -> Option<arrow_ipc::RecordBatch<'a>> {
    message
        .header_as_record_batch()
        .or_else(|| message.header_as_dictionary_batch().and_then(|d| d.data()))
}

/// Whether a message's buffers are compressed (each then starts with the
/// size it decompresses to).
fn has_compressed_buffers(message: &arrow_ipc::Message<'_>) -> bool {
    message_batch(message).is_some_and(|b| b.compression().is_some())
}

/// A record batch or dictionary message's compressed buffers (lz4/zstd)
/// declare their decompressed sizes in an 8-byte prefix, which the IPC
/// reader allocates before decompressing: their sum must stay within the
/// decoding memory limit, `limit`. `message` is
/// parsed as the reader parses it, `body` the bytes its buffer offsets are
/// relative to.
fn check_compressed_sizes(
    message: &arrow_ipc::Message<'_>,
    body: &[u8],
    what: &str,
    limit: u64,
) -> Result<()> {
    if !has_compressed_buffers(message) {
        return Ok(());
    }
    let Some(buffers) = message_batch(message).and_then(|b| b.buffers()) else {
        return Ok(());
    };
    let mut total: u64 = 0;
    for b in buffers.iter() {
        let (Ok(at), Ok(length)) = (usize::try_from(b.offset()), usize::try_from(b.length()))
        else {
            continue;
        };
        // a buffer outside the body, or too short for its prefix, is
        // rejected by the reader before it allocates
        let Some(prefix) = body
            .get(at..)
            .and_then(|rest| rest.get(..length.min(8)))
            .filter(|p| p.len() == 8)
        else {
            continue;
        };
        let declared = i64::from_le_bytes(prefix.try_into().expect("8 bytes"));
        if declared > 0 {
            total = total.saturating_add(declared as u64);
        }
        if total > limit {
            return Err(Error::limit_of(
                rdarrow_format::base::error::LimitKind::Memory,
                format!("the Arrow data of {what} declares compressed buffers of more than {limit} bytes, the memory limit"),
            ));
        }
    }
    Ok(())
}

/// Every block an IPC file's footer lists, and every message of an IPC
/// stream, must lie within the `len` bytes there are: the IPC reader
/// allocates a message body at the size it declares before reading it, so
/// a few bytes declaring a 24 GB body would otherwise ask for 24 GB. Data
/// the check cannot make sense of is left to the reader to reject.
fn check_ipc_extents<R: std::io::Read + std::io::Seek>(
    r: &mut R,
    is_file: bool,
    what: &str,
    max_memory: u64,
) -> Result<()> {
    use std::io::SeekFrom;
    let io_err = |e: std::io::Error| Error::io(&e, &format!("cannot read {what}"));
    let past_end = |kind: &str, end: i128, len: u64| {
        Error::corrupt(format!("the Arrow data of {what} is malformed: a {kind} ends at byte {end}, past the end of the data ({len} bytes)"))
    };
    let len = r.seek(SeekFrom::End(0)).map_err(io_err)?;
    if is_file {
        if len < 16 {
            return Ok(());
        }
        let mut tail = [0u8; 10];
        r.seek(SeekFrom::Start(len - 10)).map_err(io_err)?;
        r.read_exact(&mut tail).map_err(io_err)?;
        let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        if footer_len <= 0 || footer_len as u64 > len - 10 {
            return Ok(());
        }
        let mut footer = vec![0u8; footer_len as usize];
        r.seek(SeekFrom::Start(len - 10 - footer_len as u64))
            .map_err(io_err)?;
        r.read_exact(&mut footer).map_err(io_err)?;
        let Ok(footer) = arrow_ipc::root_as_footer(&footer) else {
            return Ok(());
        };
        for blocks in [footer.dictionaries(), footer.recordBatches()]
            .into_iter()
            .flatten()
        {
            for b in blocks.iter() {
                let end = b.offset() as i128 + b.metaDataLength() as i128 + b.bodyLength() as i128;
                if b.offset() < 0
                    || b.metaDataLength() < 0
                    || b.bodyLength() < 0
                    || end > len as i128
                {
                    return Err(past_end("record batch or dictionary block", end, len));
                }
                // the block as the IPC reader reads it: the whole block in
                // memory, the message flatbuffer parsed from after its 4- or
                // 8-byte prefix to the end of the block, the body starting
                // metaDataLength bytes into the block (whatever that says).
                // A message that parses within its metadata and has no
                // compressed buffers needs no more reading.
                let block_len = (b.metaDataLength() as i64 + b.bodyLength()) as usize;
                if block_len < 8 {
                    continue;
                }
                let meta_len = (b.metaDataLength() as usize).clamp(8, block_len);
                let mut block = vec![0u8; meta_len];
                r.seek(SeekFrom::Start(b.offset() as u64)).map_err(io_err)?;
                r.read_exact(&mut block).map_err(io_err)?;
                let skip = if block[..4] == [0xff; 4] { 8 } else { 4 };
                if arrow_ipc::root_as_message(&block[skip..])
                    .is_ok_and(|m| !has_compressed_buffers(&m))
                {
                    continue;
                }
                block.resize(block_len, 0);
                r.read_exact(&mut block[meta_len..]).map_err(io_err)?;
                let body = block.get(b.metaDataLength() as usize..).unwrap_or(&[]);
                if let Ok(message) = arrow_ipc::root_as_message(&block[skip..]) {
                    check_compressed_sizes(&message, body, what, max_memory)?;
                }
            }
        }
    } else {
        // until one message has made sense, the data may be anything: then
        // it is not an Arrow stream (and its "lengths" mean nothing)
        let not_arrow = || {
            Error::new(
                rdarrow_format::ErrorKind::NotRData,
                format!("{what} is not an Arrow IPC file or stream"),
            )
        };
        let mut first = true;
        let mut pos = 0u64;
        r.seek(SeekFrom::Start(0)).map_err(io_err)?;
        while pos + 4 <= len {
            let mut word = [0u8; 4];
            r.read_exact(&mut word).map_err(io_err)?;
            pos += 4;
            let mut meta_len = i32::from_le_bytes(word);
            if meta_len == -1 {
                if pos + 4 > len {
                    break;
                }
                r.read_exact(&mut word).map_err(io_err)?;
                pos += 4;
                meta_len = i32::from_le_bytes(word);
            }
            if meta_len <= 0 {
                break; // end of stream marker (or nonsense the reader rejects)
            }
            if pos + meta_len as u64 > len {
                return Err(if first {
                    not_arrow()
                } else {
                    past_end("message header", pos as i128 + meta_len as i128, len)
                });
            }
            let mut meta = vec![0u8; meta_len as usize];
            r.read_exact(&mut meta).map_err(io_err)?;
            pos += meta_len as u64;
            let Ok(message) = arrow_ipc::root_as_message(&meta) else {
                if first {
                    return Err(not_arrow());
                }
                break;
            };
            first = false;
            let body = message.bodyLength();
            if body < 0 || pos as i128 + body as i128 > len as i128 {
                return Err(past_end("message body", pos as i128 + body as i128, len));
            }
            if has_compressed_buffers(&message) {
                let mut body_bytes = vec![0u8; body as usize];
                r.read_exact(&mut body_bytes).map_err(io_err)?;
                check_compressed_sizes(&message, &body_bytes, what, max_memory)?;
            }
            pos += body as u64;
            r.seek(SeekFrom::Start(pos)).map_err(io_err)?;
        }
    }
    r.rewind().map_err(io_err)?;
    Ok(())
}

fn read_ipc_unguarded<R: std::io::Read + std::io::Seek>(
    mut r: R,
    what: &str,
    max_memory: u64,
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let arrow_err = |e: arrow_schema::ArrowError| {
        Error::corrupt(format!("cannot read the Arrow data of {what}: {e}"))
    };
    let mut magic = [0u8; 6];
    let mut got = 0;
    while got < magic.len() {
        let n = r
            .read(&mut magic[got..])
            .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    r.rewind()
        .map_err(|e| Error::io(&e, &format!("cannot seek in {what}")))?;
    let is_file = got == magic.len() && &magic == b"ARROW1";
    check_ipc_extents(&mut r, is_file, what, max_memory)?;
    if is_file {
        let reader = arrow_ipc::reader::FileReader::try_new(r, None).map_err(arrow_err)?;
        let schema = reader.schema();
        let batches = reader
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(arrow_err)?;
        Ok((schema, batches))
    } else {
        let reader = arrow_ipc::reader::StreamReader::try_new(r, None).map_err(|e| {
            Error::new(
                rdarrow_format::ErrorKind::NotRData,
                format!("{what} is not an Arrow IPC file or stream: {e}"),
            )
        })?;
        let schema = reader.schema();
        let batches = reader
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(arrow_err)?;
        Ok((schema, batches))
    }
}

/// An Arrow IPC file (not a stream) read one column at a time: a column's
/// chunks are its record batches, each read with only that column decoded
/// (the IPC reader's projection), one batch in memory at a time. A stream
/// has no footer to find its batches by, so it is read whole.
pub struct IpcFile {
    path: std::path::PathBuf,
    what: String,
    schema: SchemaRef,
    rows: usize,
}

impl IpcFile {
    /// The IPC file at `path`, its extents checked as [`read_ipc_file`]
    /// checks them; `None` when it is an IPC stream.
    pub fn open(path: &Path, max_memory: u64) -> Result<Option<IpcFile>> {
        let what = format!("'{}'", path.display());
        let mut f =
            std::fs::File::open(path).map_err(|e| Error::io(&e, &format!("cannot open {what}")))?;
        let mut magic = [0u8; 6];
        let is_file = std::io::Read::read_exact(&mut f, &mut magic).is_ok() && &magic == b"ARROW1";
        if !is_file {
            return Ok(None);
        }
        let mut r = std::io::BufReader::with_capacity(1 << 20, f);
        rdarrow_format::base::error::guard_reader(&format!("the Arrow data of {what}"), "IPC reader", || {
            check_ipc_extents(&mut r, true, &what, max_memory)?;
            let reader = arrow_ipc::reader::FileReader::try_new(&mut r, None).map_err(|e| {
                Error::corrupt(format!("cannot read the Arrow data of {what}: {e}"))
            })?;
            let schema = reader.schema();
            drop(reader);
            let rows = file_rows(&mut r, &what)?;
            Ok(Some(IpcFile {
                path: path.to_path_buf(),
                what: what.clone(),
                schema,
                rows,
            }))
        })
    }
}

/// The rows of an IPC file: the lengths its record batch messages declare
/// (each message's metadata read, not its body).
fn file_rows<R: std::io::Read + std::io::Seek>(r: &mut R, what: &str) -> Result<usize> {
    use std::io::SeekFrom;
    let io = |e: std::io::Error| Error::io(&e, &format!("cannot read {what}"));
    let bad = || {
        Error::corrupt(format!(
            "the Arrow data of {what} is malformed: its footer does not list its record batches"
        ))
    };
    let len = r.seek(SeekFrom::End(0)).map_err(io)?;
    let mut tail = [0u8; 10];
    r.seek(SeekFrom::Start(len.checked_sub(10).ok_or_else(bad)?))
        .map_err(io)?;
    r.read_exact(&mut tail).map_err(io)?;
    let footer_len = arrow_ipc::reader::read_footer_length(tail).map_err(|_| bad())? as u64;
    let mut footer = vec![0u8; footer_len as usize];
    r.seek(SeekFrom::Start(
        len.checked_sub(10 + footer_len).ok_or_else(bad)?,
    ))
    .map_err(io)?;
    r.read_exact(&mut footer).map_err(io)?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|_| bad())?;
    let mut rows = 0usize;
    for b in footer.recordBatches().into_iter().flatten() {
        let mut meta = vec![0u8; b.metaDataLength().max(8) as usize];
        r.seek(SeekFrom::Start(b.offset() as u64)).map_err(io)?;
        r.read_exact(&mut meta).map_err(io)?;
        let skip = if meta[..4] == [0xff; 4] { 8 } else { 4 };
        let n = arrow_ipc::root_as_message(&meta[skip..])
            .ok()
            .and_then(|m| m.header_as_record_batch())
            .map(|b| b.length())
            .ok_or_else(bad)?;
        rows += usize::try_from(n).map_err(|_| bad())?;
    }
    Ok(rows)
}

impl crate::from_arrow::frame::ColumnChunks for IpcFile {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn num_rows(&self) -> usize {
        self.rows
    }
    fn chunks(&self, j: usize, each: &mut dyn FnMut(ArrayRef) -> Result<()>) -> Result<()> {
        let what = &self.what;
        let arrow_err = |e: arrow_schema::ArrowError| {
            Error::corrupt(format!("cannot read the Arrow data of {what}: {e}"))
        };
        let reader_of = format!("the Arrow data of {what}");
        let f = std::fs::File::open(&self.path)
            .map_err(|e| Error::io(&e, &format!("cannot open {what}")))?;
        let r = std::io::BufReader::with_capacity(1 << 20, f);
        let mut reader = rdarrow_format::base::error::guard_reader(&reader_of, "IPC reader", || {
            arrow_ipc::reader::FileReaderBuilder::new()
                .with_projection(vec![j])
                .build(r)
                .map_err(arrow_err)
        })?;
        loop {
            rdarrow_format::base::cancel::check()?;
            let next = rdarrow_format::base::error::guard_reader(&reader_of, "IPC reader", || Ok(reader.next()))?;
            let Some(b) = next else {
                break;
            };
            each(b.map_err(arrow_err)?.column(0).clone())?;
        }
        Ok(())
    }
}
