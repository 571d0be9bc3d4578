//! The ground every layer stands on: errors (what, which object, which byte), cancellation, the machine's limits, reads and writes at a file's offsets on every platform.

pub mod cancel;
pub mod error;
pub mod flag;
pub mod limits;
pub mod positional;
