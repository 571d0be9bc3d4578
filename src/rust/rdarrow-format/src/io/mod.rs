//! Bytes in and out of places: http(s) bodies, object stores, files written whole or not at all.

pub mod atomic;
pub mod http;
pub mod store;
