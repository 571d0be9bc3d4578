//! The ground every layer stands on: errors (what, which object, which byte), cancellation, the machine's limits.

pub mod cancel;
pub mod error;
pub mod flag;
pub mod limits;
