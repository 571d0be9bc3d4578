//! rdarrow-arrow: the Arrow bridge of rdarrow, above R's format
//! ([`rdarrow_format`], re-exported here whole so that the bindings have
//! one crate to name).
//!
//! [`arrow`] holds the one R <-> Arrow type mapping ([`arrow::types`]),
//! the conversion both ways ([`arrow::to_arrow`], [`arrow::from_arrow`]),
//! the schema metadata that carries R's attributes ([`arrow::metadata`]),
//! Arrow IPC ([`arrow::ipc`]), Parquet ([`arrow::parquet`]) and datasets
//! ([`arrow::dataset`]). Nothing here parses or writes R's bytes: that is
//! the format crate's job, reached through its public API only.
//!
//! The bridge between R objects and Apache Arrow.
//!
//! - [`types`]: the type mapping, both directions (its documentation holds
//!   the table);
//! - [`to_arrow`]: R objects to Arrow record batches;
//! - [`from_arrow`]: Arrow record batches to R objects;
//! - [`metadata`]: the schema metadata that carries R's attributes;
//! - [`ipc`]: Arrow IPC files and streams, read and written, and the Arrow
//!   C stream;
//! - [`parquet`]: Parquet files, written row group by row group and read
//!   column by column;
//! - [`rows`]: tables handed over by row range ([`rows::ColumnSource`]);
//! - [`dataset`]: many R files to one Arrow dataset;
//! - [`tensor`]: R arrays as Arrow Tensor messages, both ways;
//! - [`fixed_shape`]: lists of equal-shape arrays as
//!   `arrow.fixed_shape_tensor` columns.
//!
//! Which object of a file converts is the document's rule
//! ([`crate::Document::choose_table_object`]).

// The format crate, on purpose: its layers by name, and the reading,
// listing and writing API the bridge and the bindings call.
pub use rdarrow_format::{base, checks, compression, io, read, sources, tree, wire, write};
pub use rdarrow_format::{
    atomic_write, convert_document, decompress_bytes, decompressed_len, expand_each, expand_sources, is_data_name, is_path,
    compression_for_path, container_of_path, list_file, location_of, looks_like_r_data, rewrite_file, node_to_rds, object_name_of, object_to_rds, path_is_rds, read_bytes,
    read_file, read_file_deferred, read_file_filtered, read_for_r, read_here, read_paths,
    read_small_here, read_small_here_or, stream_object_name, write_document, write_file, Column,
    Compression, Consumer, Container, Document, Error, ErrorKind, FileBatch, Format, Origin,
    Placed, Placement, RObject, ReadOptions, Result, Source, StorageOptions, StreamHeader,
    Streamed, Wanted, WritebackFile,
};

pub mod dataset;
pub mod fixed_shape;
pub mod from_arrow;
pub mod ipc;
pub mod metadata;
pub mod parquet;
pub mod parquet_during_parse;
pub mod posixlt;
pub mod rows;
pub mod sparse;
pub mod tensor;
pub mod to_arrow;
pub mod types;
pub mod union;

pub use to_arrow::{
    open_table, read_table, table_from_object, table_from_owned, ArrowTable, ColumnRef,
    ConvertedColumn, EarlyColumns, OpenedTable, TableOptions,
};

/// Each child of a union as long as the union, valid in the slots that
/// are its (a sparse layout of a dense union): how consumers without
/// dense unions take one (Parquet's stored struct, DuckDB's UNION).
pub fn union_members(a: &arrow_array::UnionArray) -> crate::Result<Vec<arrow_array::ArrayRef>> {
    use arrow_array::Array;
    let arrow_schema::DataType::Union(fields, _) = a.data_type() else {
        return Err(crate::Error::internal("not a union"));
    };
    let n = a.len();
    fields
        .iter()
        .map(|(t, _)| {
            let at: arrow_array::UInt32Array = (0..n)
                .map(|i| (a.type_id(i) == t).then(|| a.value_offset(i) as u32))
                .collect();
            arrow_select::take::take(a.child(t).as_ref(), &at, None).map_err(|e| {
                crate::Error::corrupt(format!("cannot lay out a union's members: {e}"))
            })
        })
        .collect()
}

/// The kinds of file rdarrow reads and writes besides R's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFileKind {
    /// Arrow IPC (file or stream format; Feather version 2).
    Ipc,
    Parquet,
    /// One Arrow Tensor message ([`tensor`]).
    Tensor,
}

impl DataFileKind {
    /// The kind a file name's extension names, if any.
    pub fn of_name(path: &std::path::Path) -> Option<DataFileKind> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(DataFileKind::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(DataFileKind::Ipc),
            _ => None,
        }
    }

    /// The kind a file's first bytes say (IPC when not Parquet).
    pub fn of_bytes(prefix: &[u8]) -> DataFileKind {
        if parquet::is_parquet(prefix) {
            DataFileKind::Parquet
        } else {
            DataFileKind::Ipc
        }
    }

    /// The kind of the file at `path`, by its first bytes (an IPC
    /// message's header tells a Tensor from a stream's Schema).
    pub fn of_file(path: &std::path::Path) -> crate::Result<DataFileKind> {
        use std::io::Read;
        let mut head = [0u8; 4];
        let f = std::fs::File::open(path)
            .map_err(|e| crate::Error::io(&e, &format!("cannot read '{}'", path.display())))?;
        let n = (&f)
            .read(&mut head)
            .map_err(|e| crate::Error::io(&e, &format!("cannot read '{}'", path.display())))?;
        Ok(match DataFileKind::of_bytes(&head[..n]) {
            DataFileKind::Ipc if tensor::is_tensor_message(&f) => DataFileKind::Tensor,
            k => k,
        })
    }

    /// Check by its first bytes that the file at `path` (`label`: as the
    /// user named it) is of kind `want`; else an error naming
    /// `right_function`, the caller's function for the kind it is.
    pub fn expect_file(
        path: &std::path::Path,
        label: &str,
        want: DataFileKind,
        right_function: &str,
    ) -> crate::Result<()> {
        let found = DataFileKind::of_file(path)?;
        if found == want {
            return Ok(());
        }
        Err(crate::Error::usage(format!(
            "'{label}' is not a {} file (its first bytes are not {}'s); use {right_function} for {} files",
            want.name(),
            want.name(),
            found.name()
        )))
    }

    /// The kind by its name: `"parquet"` or `"ipc"`.
    pub fn from_name(name: &str) -> Option<DataFileKind> {
        match name {
            "parquet" => Some(DataFileKind::Parquet),
            "ipc" => Some(DataFileKind::Ipc),
            "tensor" => Some(DataFileKind::Tensor),
            _ => None,
        }
    }

    /// The kind's name for people.
    pub fn name(self) -> &'static str {
        match self {
            DataFileKind::Ipc => "Arrow IPC",
            DataFileKind::Parquet => "Parquet",
            DataFileKind::Tensor => "Arrow Tensor",
        }
    }
}

/// The rule for a sink's name: writing `writing` to a file whose
/// extension names the other kind is an error that names `right_function`
/// (the caller's function for the kind the name asks for), never a file of
/// the wrong format under a misleading name.
pub fn check_sink_name(
    sink: &std::path::Path,
    writing: DataFileKind,
    right_function: &str,
) -> crate::Result<()> {
    match DataFileKind::of_name(sink) {
        Some(k) if k != writing => Err(crate::Error::usage(format!(
            "'{}' names a {} file but this writes {}; use {right_function} to write {}",
            sink.display(),
            k.name(),
            writing.name(),
            k.name()
        ))),
        _ => Ok(()),
    }
}

/// Read an Arrow IPC file or stream or a Parquet file, told apart by its
/// first bytes.
pub fn read_data_file(
    path: &std::path::Path,
    max_memory: u64,
) -> crate::Result<(arrow_schema::SchemaRef, Vec<arrow_array::RecordBatch>)> {
    match DataFileKind::of_file(path)? {
        DataFileKind::Parquet => parquet::read_parquet_file(path, max_memory),
        DataFileKind::Ipc => ipc::read_ipc_file(path, max_memory),
        DataFileKind::Tensor => Err(crate::Error::usage(format!(
            "'{}' is an Arrow Tensor message, not a table (read it with tensor_to_rdata())",
            path.display()
        ))),
    }
}

/// Write the table of an Arrow IPC or Parquet file (told apart by their
/// first bytes) as an R data file, as [`from_arrow::object_from_batches`]
/// makes it; a Tensor message's array as [`tensor::tensor_file_to_rdata`]
/// makes it (its first dimension the rows, the others' product the
/// columns). Parquet is read and written one column at a time
/// ([`from_arrow::write_columns_file`]), and so is an IPC file; an IPC
/// stream is read whole. Returns the
/// numbers of rows and columns.
pub fn data_file_to_rdata(
    input: &std::path::Path,
    output: &std::path::Path,
    o: &crate::write::ObjectFileOptions,
    max_memory: u64,
) -> crate::Result<(usize, usize)> {
    match DataFileKind::of_file(input)? {
        DataFileKind::Tensor => {
            let dims = tensor::tensor_file_to_rdata(input, output, o, max_memory)?;
            let rows = dims.first().copied().unwrap_or(1);
            Ok((rows, dims.iter().skip(1).product()))
        }
        DataFileKind::Parquet => {
            let f = parquet::ParquetFile::open(input, max_memory)?;
            from_arrow::write_columns_file(&f, output, o, || {
                let (schema, batches) = parquet::read_parquet_file(input, max_memory)?;
                from_arrow::object_from_batches(&schema, &batches)
            })?;
            Ok((f.num_rows(), f.schema().fields().len()))
        }
        DataFileKind::Ipc => {
            if let Some(f) = ipc::IpcFile::open(input, max_memory)? {
                from_arrow::write_columns_file(&f, output, o, || {
                    let (schema, batches) = ipc::read_ipc_file(input, max_memory)?;
                    from_arrow::object_from_batches(&schema, &batches)
                })?;
                use from_arrow::ColumnChunks;
                return Ok((f.num_rows(), f.schema().fields().len()));
            }
            let (schema, batches) = ipc::read_ipc_file(input, max_memory)?;
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            let f = from_arrow::object_from_batches(&schema, &batches)?;
            drop(batches);
            crate::write::write_object_file(output, f.object, f.refs, o)?;
            Ok((rows, schema.fields().len()))
        }
    }
}

/// The zone arrow R would give POSIXct values without a `tzone`: the
/// session's (TZ, else the system's zone). For front ends outside R (the
/// command line, Python), where there is no R session to ask.
pub fn session_zone() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim_start_matches(':').to_string();
        if !tz.is_empty() {
            return Some(tz);
        }
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime") {
        let s = target.to_string_lossy().into_owned();
        if let Some(i) = s.find("zoneinfo/") {
            return Some(s[i + "zoneinfo/".len()..].to_string());
        }
    }
    std::fs::read_to_string("/etc/timezone")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// What to write an object of an R data file as.
#[derive(Debug, Clone)]
pub enum FileOutput {
    Parquet(parquet::ParquetOptions),
    /// Arrow IPC, in record batches of `rows` rows (as the memory budget
    /// allows when `None`).
    Ipc {
        format: ipc::IpcFormat,
        compression: ipc::IpcCompression,
        rows: Option<usize>,
    },
}

/// The default memory budget of a conversion by row group, in bytes.
pub const DEFAULT_MEMORY: u64 = 1 << 30;

/// Convert one object of the R data file at `path` (chosen as
/// [`crate::Document::choose_table_object`] says) to `sink`, row group by
/// row group: a data frame's payloads are read back from the file (or
/// from a spill of its decompressed stream beside `sink`), so memory
/// holds about one row group of every column, sized for `memory` bytes.
/// The file appears only complete. Returns the object's name, its rows
/// and the conversion's warnings.
pub fn convert_to_file(
    path: &(impl crate::Origin + ?Sized),
    object: Option<&str>,
    stream_name: &str,
    opts: TableOptions,
    read: crate::ReadOptions,
    sink: &std::path::Path,
    out: &FileOutput,
    memory: u64,
) -> crate::Result<(String, usize, Vec<String>)> {
    let rows = match out {
        FileOutput::Parquet(p) => p.row_group_rows,
        FileOutput::Ipc { rows, .. } => *rows,
    };
    // beside the output, or where temporary files go for an object store's
    let temp = std::env::temp_dir();
    let spill_dir = if crate::io::store::is_store_path(sink) {
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
            parquet_during_parse::EarlyChunks::start(p, &opts, rows, memory, spill_dir)?,
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
    let threads = rows::all_cores();
    match out {
        FileOutput::Parquet(p) => {
            let p = parquet::ParquetOptions {
                row_group_rows: Some(t.group_rows),
                storage: if p.storage.is_empty() {
                    storage
                } else {
                    p.storage.clone()
                },
                ..p.clone()
            };
            parquet::write_parquet_file_with(t.source.as_ref(), sink, &p, early.as_deref())?
        }
        FileOutput::Ipc {
            format,
            compression,
            ..
        } => ipc::write_ipc_source_file(
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
