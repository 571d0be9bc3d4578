//! R objects (data frames, vectors, factors, matrices) to Arrow record
//! batches, with the types [`crate::mapping::types`] maps each kind of R
//! column to. Integer, double, integer64, raw and UTF-8 string payloads are
//! wrapped, not copied: the arrays share the buffers the reader filled.
//!
//! - `table`: the table made from an object: planning, converting the
//!   columns (on several threads for large tables), assembling;
//! - `column`: one column to one array, by kind (a data-frame column as a
//!   table of its own, by the function the table hands it);
//! - `temporal`: dates, date-times, times of day and durations;
//! - `nulls`: validity bitmaps from R's NAs;
//! - `during_parse`: columns converted while their file is still being
//!   read ([`EarlyColumns`]);
//! - `streamed`: a data frame converted row group by row group, its
//!   payloads read back by row range ([`StreamedTable`]);
//! - `options`: what a conversion is asked for ([`TableOptions`]).

pub(crate) mod column;
pub(crate) mod during_parse;
pub(crate) mod nulls;
pub(crate) mod options;
pub(crate) mod streamed;
pub(crate) mod table;
pub(crate) mod temporal;

pub use during_parse::EarlyColumns;
pub use options::{ColumnRef, TableOptions};
pub use streamed::{element_bytes, open_table, rows_for, ColumnSoFar, OpenedTable, StreamedTable};
pub use table::{read_table, table_from_object, table_from_owned};
