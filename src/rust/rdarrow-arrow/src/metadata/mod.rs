//! The schema metadata that carries what Arrow types do not say, split by
//! concept:
//!
//! - `"r"`: arrow R's key, an ASCII serialization of `list(attributes =
//!   <top-level attributes>, columns = list(<col> = NULL | list(attributes
//!   = ..., columns = ...)))`, holding every attribute the Arrow types
//!   themselves do not carry, so that arrow R's `as.data.frame()` (and
//!   rdarrow's way back) restore them. rdarrow adds one element arrow R
//!   ignores, `rdarrow = list(object = <"data.frame" | "vector" |
//!   "matrix" | "sparse">, attributes = list(...))`: what the object was
//!   ([`document`]: the document, written and read).
//!   A column's node ([`columns`]: taken from the R object before its
//!   columns convert) may hold elements arrow R ignores, applied on
//!   rdarrow's way back ([`values`]): `complex`, `strings` (strings that
//!   are not valid text, as R held them: [`strings`]), `matrix`, `posixlt`;
//!   a value inside a list also says what Arrow does not give back as R
//!   had it: `raw`, `complex`, `integer64`, `integer`, `units`, `types`,
//!   `levels`, `order` (its attributes' order: [`attributes`]) and `na`
//!   (NAs whose bits are not `NA_real_`'s: [`na_bits`]).
//! - `"rdarrow"` ([`fidelity::FIDELITY_KEY`]): one fact per line about
//!   top-level columns that arrow R's `"r"` cannot say without changing
//!   what arrow R shows ([`fidelity`]).
//! - `"rdarrow.r"` ([`document::EXACT_KEY`]): the `"r"` list again, in XDR,
//!   when its ASCII text cannot hold a kept value's NaN payloads.
//!
//! [`restore`] gives a data frame made from Arrow data back the object it
//! was made from; [`converted`] is a column converted while its file was
//! read, with what the metadata keeps of it.

pub mod attributes;
pub mod columns;
pub mod converted;
pub mod document;
pub mod fidelity;
pub mod na_bits;
pub mod restore;
pub mod strings;
pub mod values;
