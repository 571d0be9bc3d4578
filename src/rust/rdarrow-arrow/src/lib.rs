//! rdarrow-arrow: the Arrow bridge of rdarrow, above R's format
//! ([`rdarrow_format`], re-exported here whole so that the bindings have
//! one crate to name). Nothing here parses or writes R's bytes: that is the
//! format crate's job, reached through its public API only.
//!
//! The bridge is laid out by layer, one folder each, bottom first; a module
//! uses its own folder and the folders before it, never one after it, and
//! never this file (`tools/layers.py` checks it, and that no two modules
//! import each other, directly or in a loop):
//!
//! - [`mapping`]: the one R <-> Arrow type table ([`mapping::types`], its
//!   documentation holds the table), times and zones, POSIXlt, the Matrix
//!   package's sparse matrices, tensor shapes, what an R object is;
//! - [`batches`]: a table of record batches, handed over row group by row
//!   group on every core ([`batches::rows::ColumnSource`]);
//! - [`metadata`]: the schema metadata that carries R's attributes (the
//!   `"r"` document, columns' nodes, attributes and their order, fidelity
//!   notes, NA bits, values back as R had them);
//! - [`to_arrow`]: R objects to Arrow record batches (columns, tables,
//!   streamed tables, conversion during the parse);
//! - [`from_arrow`]: Arrow record batches to R objects (columns, frames,
//!   tensor columns);
//! - [`files`]: Arrow IPC and the Arrow C stream, Parquet, datasets,
//!   Tensor messages, many tables read as one, one file to another.
//!
//! This file is the crate's API. Which object of a file converts is the
//! document's rule ([`crate::Document::choose_table_object`]).

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
    Streamed, Wanted, WritebackFile, SMALL_FILE,
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
