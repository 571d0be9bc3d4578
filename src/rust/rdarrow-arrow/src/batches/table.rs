//! A table as Arrow holds it: a schema and its record batches.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

/// A schema and its record batches.
#[derive(Debug, Clone)]
pub struct ArrowTable {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    /// What the user should be told about the conversion (it went on).
    pub warnings: Vec<String>,
}

impl ArrowTable {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}
