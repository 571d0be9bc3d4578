//! Bytes in and out of places: http(s) bodies, object stores, files written whole or not at all (and where they are staged until then).

pub mod atomic;
pub mod http;
pub mod staging;
pub mod store;
