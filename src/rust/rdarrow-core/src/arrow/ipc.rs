//! Arrow IPC output (file format, a.k.a. Feather v2, and stream format),
//! and the Arrow C stream that hands a table to another library.

use super::ArrowTable;
use crate::error::{Error, Result};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatchIterator, RecordBatchReader};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use arrow_ipc::CompressionType;
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

fn arrow_err(e: impl std::fmt::Display) -> Error {
    Error::new(crate::ErrorKind::Io, format!("cannot write Arrow IPC: {e}"))
}

/// Write a table as Arrow IPC to any sink.
pub fn write_ipc<W: Write>(table: &ArrowTable, sink: W, format: IpcFormat, compression: IpcCompression) -> Result<W> {
    let codec = match compression {
        IpcCompression::Uncompressed => None,
        IpcCompression::Lz4 => Some(CompressionType::LZ4_FRAME),
        IpcCompression::Zstd => Some(CompressionType::ZSTD),
    };
    let opts = IpcWriteOptions::default().try_with_compression(codec).map_err(arrow_err)?;
    match format {
        IpcFormat::File => {
            let mut w = FileWriter::try_new_with_options(sink, &table.schema, opts).map_err(arrow_err)?;
            for b in &table.batches {
                w.write(b).map_err(arrow_err)?;
            }
            w.finish().map_err(arrow_err)?;
            w.into_inner().map_err(arrow_err)
        }
        IpcFormat::Stream => {
            let mut w = StreamWriter::try_new_with_options(sink, &table.schema, opts).map_err(arrow_err)?;
            for b in &table.batches {
                w.write(b).map_err(arrow_err)?;
            }
            w.finish().map_err(arrow_err)?;
            w.into_inner().map_err(arrow_err)
        }
    }
}

/// Write a table as Arrow IPC to `path`; the file appears only complete.
pub fn write_ipc_file(table: &ArrowTable, path: &Path, format: IpcFormat, compression: IpcCompression) -> Result<()> {
    crate::atomic_write(path, |f| {
        let w = write_ipc(table, std::io::BufWriter::new(f), format, compression)?;
        w.into_inner().map_err(|e| Error::io(e.error(), "cannot write")).map(|_| ())
    })
}

/// The table as an Arrow C stream. Its callbacks never call into R and may
/// run on any thread; the arrays share the table's buffers.
pub fn into_ffi_stream(table: ArrowTable) -> FFI_ArrowArrayStream {
    let reader = RecordBatchIterator::new(table.batches.into_iter().map(Ok), table.schema);
    let reader: Box<dyn RecordBatchReader + Send> = Box::new(reader);
    FFI_ArrowArrayStream::new(reader)
}
