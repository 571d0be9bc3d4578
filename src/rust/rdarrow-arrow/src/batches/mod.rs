//! Tables of Arrow record batches: the table ([`table`]) and its rows
//! handed over row group by row group, on every core ([`rows`]).

pub mod rows;
pub mod table;
