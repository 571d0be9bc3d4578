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

pub use rdarrow_format::*;

pub mod arrow;
