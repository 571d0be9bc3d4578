//! One file to another: an Arrow or Parquet file to an R data file, an R
//! object to an Arrow IPC, Parquet or Tensor file row group by row group.

use crate::files::kind::DataFileKind;
use crate::to_arrow::options::TableOptions;
use crate::to_arrow::streamed::open_table;

/// Read an Arrow IPC file or stream or a Parquet file, told apart by its
/// first bytes.
pub fn read_data_file(
    path: &std::path::Path,
    max_memory: u64,
) -> rdarrow_format::Result<(arrow_schema::SchemaRef, Vec<arrow_array::RecordBatch>)> {
    match DataFileKind::of_file(path)? {
        DataFileKind::Parquet => crate::files::parquet::read_parquet_file(path, max_memory),
        DataFileKind::Ipc => crate::files::ipc::read_ipc_file(path, max_memory),
        DataFileKind::Tensor => Err(rdarrow_format::Error::usage(format!(
            "'{}' is an Arrow Tensor message, not a table (read it with tensor_to_rdata())",
            path.display()
        ))),
    }
}

/// Write the table of an Arrow IPC or Parquet file (told apart by their
/// first bytes) as an R data file, as [`crate::from_arrow::frame::object_from_batches`]
/// makes it; a Tensor message's array as [`crate::files::tensor::tensor_file_to_rdata`]
/// makes it (its first dimension the rows, the others' product the
/// columns). Parquet is read and written one column at a time
/// ([`crate::from_arrow::frame::write_columns_file`]), and so is an IPC file; an IPC
/// stream is read whole. Returns the
/// numbers of rows and columns.
pub fn data_file_to_rdata(
    input: &std::path::Path,
    output: &std::path::Path,
    o: &rdarrow_format::write::ObjectFileOptions,
    max_memory: u64,
) -> rdarrow_format::Result<(usize, usize)> {
    match DataFileKind::of_file(input)? {
        DataFileKind::Tensor => {
            let dims = crate::files::tensor::tensor_file_to_rdata(input, output, o, max_memory)?;
            let rows = dims.first().copied().unwrap_or(1);
            Ok((rows, dims.iter().skip(1).product()))
        }
        DataFileKind::Parquet => {
            let f = crate::files::parquet::ParquetFile::open(input, max_memory)?;
            crate::from_arrow::frame::write_columns_file(&f, output, o, || {
                let (schema, batches) = crate::files::parquet::read_parquet_file(input, max_memory)?;
                crate::from_arrow::frame::object_from_batches(&schema, &batches)
            })?;
            Ok((f.num_rows(), f.schema().fields().len()))
        }
        DataFileKind::Ipc => {
            if let Some(f) = crate::files::ipc::IpcFile::open(input, max_memory)? {
                crate::from_arrow::frame::write_columns_file(&f, output, o, || {
                    let (schema, batches) = crate::files::ipc::read_ipc_file(input, max_memory)?;
                    crate::from_arrow::frame::object_from_batches(&schema, &batches)
                })?;
                use crate::from_arrow::frame::ColumnChunks;
                return Ok((f.num_rows(), f.schema().fields().len()));
            }
            let (schema, batches) = crate::files::ipc::read_ipc_file(input, max_memory)?;
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            let f = crate::from_arrow::frame::object_from_batches(&schema, &batches)?;
            drop(batches);
            rdarrow_format::write::write_object_file(output, f.object, f.refs, o)?;
            Ok((rows, schema.fields().len()))
        }
    }
}

/// What to write an object of an R data file as.
#[derive(Debug, Clone)]
pub enum FileOutput {
    Parquet(crate::files::parquet_layout::ParquetOptions),
    /// Arrow IPC, in record batches of `rows` rows (as the memory budget
    /// allows when `None`).
    Ipc {
        format: crate::files::ipc::IpcFormat,
        compression: crate::files::ipc::IpcCompression,
        rows: Option<usize>,
    },
}

/// The default memory budget of a conversion by row group, in bytes.
pub const DEFAULT_MEMORY: u64 = 1 << 30;

/// Convert one object of the R data file at `path` (chosen as
/// [`rdarrow_format::Document::choose_table_object`] says) to `sink`, row group by
/// row group: a data frame's payloads are read back from the file (or
/// from a spill of its decompressed stream beside `sink`), so memory
/// holds about one row group of every column, sized for `memory` bytes.
/// The file appears only complete. Returns the object's name, its rows
/// and the conversion's warnings.
pub fn convert_to_file(
    path: &(impl rdarrow_format::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    opts: TableOptions,
    read: rdarrow_format::ReadOptions,
    sink: &std::path::Path,
    out: &FileOutput,
    memory: u64,
) -> rdarrow_format::Result<(String, usize, Vec<String>)> {
    let rows = match out {
        FileOutput::Parquet(p) => p.row_group_rows,
        FileOutput::Ipc { rows, .. } => *rows,
    };
    // beside the output, or where temporary files go for an object store's
    let temp = std::env::temp_dir();
    let spill_dir = if rdarrow_format::io::store::is_store_path(sink) {
        temp.as_path()
    } else {
        sink.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
    };
    // the output goes where the input's options say
    let storage = read.storage.clone();
    // a Parquet file's chunks are encoded while the file is still being
    // read, where a selection of columns does not change the row groups
    let early = match out {
        FileOutput::Parquet(p) if opts.col_select.is_none() => Some(std::sync::Arc::new(
            crate::files::parquet_during_parse::EarlyChunks::start(p, &opts, rows, memory, spill_dir)?,
        )),
        _ => None,
    };
    let t = open_table(
        path,
        object,
        stream_name,
        opts,
        read,
        spill_dir,
        rows,
        memory,
        early.as_ref().map(|e| e.consumer()),
    )?;
    if let Some(e) = &early {
        e.finish();
    }
    let threads = crate::batches::rows::all_cores();
    match out {
        FileOutput::Parquet(p) => {
            let p = crate::files::parquet_layout::ParquetOptions {
                row_group_rows: Some(t.group_rows),
                storage: if p.storage.is_empty() {
                    storage
                } else {
                    p.storage.clone()
                },
                ..p.clone()
            };
            crate::files::parquet::write_parquet_file_with(t.source.as_ref(), sink, &p, early.as_deref())?
        }
        FileOutput::Ipc {
            format,
            compression,
            ..
        } => crate::files::ipc::write_ipc_source_file(
            t.source.as_ref(),
            sink,
            *format,
            *compression,
            t.group_rows,
            threads,
            &storage,
        )?,
    }
    Ok((t.name, t.source.num_rows(), t.source.warnings()))
}
