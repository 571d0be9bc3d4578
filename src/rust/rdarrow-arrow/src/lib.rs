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
//! ([`rdarrow_format::Document::choose_table_object`]).

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

// The bridge's layers, one folder each, bottom first: a module uses its
// own folder and the folders before it, never one after it, and never
// this file (tools/layers.py).
pub mod mapping;
pub mod batches;
pub mod metadata;
pub mod to_arrow;
pub mod from_arrow;
pub mod files;

// The API the bindings call most.
pub use batches::table::ArrowTable;
pub use files::convert::{convert_to_file, data_file_to_rdata, read_data_file, FileOutput, DEFAULT_MEMORY};
pub use files::kind::{check_sink_name, DataFileKind};
pub use mapping::posixlt::session_zone;
pub use mapping::unions::union_members;
pub use metadata::converted::ConvertedColumn;
pub use to_arrow::{
    open_table, read_table, table_from_object, table_from_owned, ColumnRef, EarlyColumns,
    OpenedTable, TableOptions,
};
