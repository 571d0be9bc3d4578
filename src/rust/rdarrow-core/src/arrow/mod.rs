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
//! - [`dataset`]: many R files to one Arrow dataset.
//!
//! Which object of a file converts is the document's rule
//! ([`crate::Document::choose_table_object`]).

pub mod dataset;
pub mod from_arrow;
pub mod ipc;
pub mod metadata;
pub mod parquet;
pub mod rows;
pub mod to_arrow;
pub mod types;

pub use to_arrow::{
    read_table, table_from_object, table_from_owned, ArrowTable, ColumnRef, ConvertedColumn,
    EarlyColumns, TableOptions,
};
