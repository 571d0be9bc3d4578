//! A column converted while its file was read, with what the metadata
//! keeps of it.

use crate::metadata::na_bits::NaBits;
use crate::metadata::strings::KeptStrings;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::*;
use arrow_array::ArrayRef;
use arrow_schema::DataType;

/// A column's Arrow array made while its file was read, kept in the tree
/// in place of its R payload ([`Consumed`]): the conversion's result (an
/// error surfaces when the table conversion reaches it).
#[derive(Debug, Clone)]
pub struct ConvertedColumn {
    pub result: Result<(DataType, ArrayRef)>,
    /// Its strings that need keeping in the metadata.
    pub strings: Option<KeptStrings>,
    /// Its NAs whose bits are not R's `NA_real_` (Arrow's null keeps no
    /// bits), for the metadata.
    pub na_bits: Option<NaBits>,
}

impl ConvertedColumn {
    /// The column converted while its file was read, if `data` is one.
    pub fn of(data: &VectorData) -> Option<&ConvertedColumn> {
        match data {
            VectorData::Consumed(c) => c.value::<ConvertedColumn>(),
            _ => None,
        }
    }
}
