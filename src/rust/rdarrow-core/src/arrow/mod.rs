//! The bridge between R objects and Apache Arrow.
//!
//! # The type mapping (one table, both directions)
//!
//! | R | Arrow | notes |
//! |---|---|---|
//! | logical | boolean | bit-packed (a copy) |
//! | integer | int32 | zero-copy; `NA` -> null |
//! | double | float64 | zero-copy; `NA_real_` -> null, `NaN` stays NaN |
//! | character | utf8 (large_utf8 beyond 2 GiB) | zero-copy when already UTF-8; latin1 and native encodings transcoded |
//! | factor / ordered | dictionary<int8/int16/int32, utf8> | narrowest index that holds the levels; ordered flag |
//! | Date | date32 (timestamp[us] when days are fractional) | |
//! | POSIXct | timestamp[us, tz] | `tzone` as the zone |
//! | difftime | duration[s] (finer when fractional) | scaled by `units` |
//! | hms | time32[s] (time32[ms], time64[us/ns] when fractional) | |
//! | integer64 | int64 | zero-copy |
//! | raw | uint8 | zero-copy |
//! | complex | struct<re: float64, im: float64> | |
//! | list | list<T> | T the elements' common type; NULL -> null |
//! | data.frame column | struct | |
//!
//! Where arrow R truncates (fractional Dates, sub-second hms and difftime)
//! rdarrow keeps the values with a finer unit. Attributes go into the
//! schema metadata under `"r"`, in arrow R's format ([`metadata`]).

pub mod dataset;
pub mod from_arrow;
pub mod ipc;
pub mod metadata;
pub mod to_arrow;

pub use to_arrow::{pick_object, pick_object_named, table_from_object, table_from_owned, take_object_named, ArrowTable, EarlyColumns, ColumnRef, TableOptions};
