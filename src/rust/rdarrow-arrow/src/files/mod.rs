//! Files: Arrow IPC ([`ipc`]), Parquet ([`parquet`], its layout
//! [`parquet_layout`] and its writing while an R file is read
//! [`parquet_during_parse`]), datasets ([`dataset`]), Tensor messages
//! ([`tensor`]), many tables read as one ([`union`]), the kind of a file
//! ([`kind`]) and one file converted to another ([`convert`]).

pub mod convert;
pub mod dataset;
pub mod ipc;
pub mod kind;
pub mod parquet;
pub mod parquet_during_parse;
pub mod parquet_layout;
pub mod tensor;
pub mod union;
