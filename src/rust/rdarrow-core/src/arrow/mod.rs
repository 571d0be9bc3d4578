//! The bridge between R objects and Apache Arrow.
//!
//! - [`types`]: the type mapping, both directions (its documentation holds
//!   the table);
//! - [`to_arrow`]: R objects to Arrow record batches;
//! - [`from_arrow`]: Arrow record batches to R objects;
//! - [`metadata`]: the schema metadata that carries R's attributes;
//! - [`ipc`]: Arrow IPC files and streams, read and written, and the Arrow
//!   C stream;
//! - [`dataset`]: many R files to one Arrow dataset;
//! - [`pick`]: which object of a file converts.

pub mod dataset;
pub mod from_arrow;
pub mod ipc;
pub mod metadata;
pub mod pick;
pub mod to_arrow;
pub mod types;

pub use pick::{pick_object, pick_object_named, take_object_named};
pub use to_arrow::{table_from_object, table_from_owned, ArrowTable, ColumnRef, ConvertedColumn, EarlyColumns, TableOptions};
