//! What must hold before a consumer trusts a tree: R's rules for what R can build, the rule for code inside a file, structures checked for consumers.

pub mod consistency;
pub mod trust;
pub mod validate;
