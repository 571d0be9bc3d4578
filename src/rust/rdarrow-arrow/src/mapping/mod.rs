//! The mapping between R and Arrow, above R's format only: the one type
//! table both ways ([`types`]), times and zones ([`posixlt`]), the Matrix
//! package's sparse matrices ([`sparse`]), tensor shapes ([`shape`]), what
//! an R object is as the bridge sees it ([`objects`]), and unions' members
//! ([`unions`]), and a pandas index as R's row names ([`pandas_index`]).

pub mod objects;
pub mod pandas_index;
pub mod posixlt;
pub mod shape;
pub mod sparse;
pub mod types;
pub mod unions;
