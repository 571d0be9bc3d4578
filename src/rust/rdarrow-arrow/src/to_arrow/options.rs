//! What a conversion to Arrow is asked for: the columns, batch size, zone
//! and time unit.

/// A column chosen by name or by 1-based position.
#[derive(Debug, Clone)]
pub enum ColumnRef {
    Name(String),
    Position(usize),
}

#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// Columns to keep, in this order (all when `None`).
    pub col_select: Option<Vec<ColumnRef>>,
    /// Rows per record batch (one batch when `None`).
    pub chunk_size: Option<usize>,
    /// The zone given to POSIXct values without a `tzone` (arrow R uses the
    /// session's zone); `None` leaves them without a zone.
    pub default_tz: Option<String>,
    /// The name of a single column made from a vector.
    pub object_name: String,
    /// One unit for every POSIXct column's timestamps (rounded to it), as
    /// a consumer with one unit needs (DuckDB's microseconds, pandas'
    /// nanoseconds); `None` gives each column the
    /// coarsest unit that keeps its values' bits (see [`crate::mapping::types`]).
    pub time_unit: Option<arrow_schema::TimeUnit>,
    /// The file must hold one object (as `readRDS()` reads): an error
    /// naming its objects otherwise.
    pub one_object: bool,
}

/// The conversion of a data frame to a table, handed to a column's
/// converter for data-frame columns (a table's columns convert below the
/// table, which converts them).
pub(crate) type NestedTable = fn(
    &rdarrow_format::Document,
    &rdarrow_format::RObject,
    &TableOptions,
) -> rdarrow_format::Result<crate::batches::table::ArrowTable>;
