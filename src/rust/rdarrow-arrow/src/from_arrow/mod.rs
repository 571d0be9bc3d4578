//! Arrow record batches to R objects: one column to one R vector, by the
//! kind [`crate::mapping::types`] maps its Arrow type to ([`mod@column`]);
//! `arrow.fixed_shape_tensor` columns as lists of arrays
//! ([`tensor_columns`]); a data frame, or the object the table was made
//! from, with the `"r"` metadata applied ([`frame`]).

pub mod column;
pub mod frame;
pub mod tensor_columns;
