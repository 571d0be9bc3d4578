//! R objects (data frames, vectors, factors, matrices) to Arrow record
//! batches, with the types [`super::types`] maps each kind of R column to.
//! Integer, double, integer64, raw and UTF-8 string payloads are wrapped,
//! not copied: the arrays share the buffers the reader filled.
//!
//! - [`table`]: the table made from an object: planning, converting the
//!   columns (on several threads for large tables), assembling;
//! - [`column`]: one column to one array, by kind;
//! - [`temporal`]: dates, date-times, times of day and durations;
//! - [`early`]: columns converted while their file is still being read;
//! - [`streamed`]: a data frame converted row group by row group, its
//!   payloads read back by row range.

mod column;
mod during_parse;
mod streamed;
mod table;
mod temporal;

pub use column::converts;
pub(crate) use column::binary_list;
pub(crate) use column::{has_arrow_value, is_s4, matrix_dims, strings_in};
pub use during_parse::{ConvertedColumn, EarlyColumns};
pub use streamed::{element_bytes, open_table, rows_for, ColumnSoFar, OpenedTable, StreamedTable};
pub(crate) use table::names_of;
pub use table::{
    read_table, table_from_object, table_from_owned, ArrowTable, ColumnRef, TableOptions,
};

#[cfg(test)]
pub(crate) use table::tests::{doc_of, wide_doc};
