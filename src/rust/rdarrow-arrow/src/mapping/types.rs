//! The type mapping between R and Arrow, both directions, in one place:
//! [`RKind`] names the kinds of R column, [`arrow_type`] gives the Arrow
//! type of each (R to Arrow) and [`r_kind`] the R kind of each Arrow type
//! (Arrow to R). The converters ([`crate::to_arrow`],
//! [`crate::from_arrow`]) ask these functions which type to make and only
//! convert the values.
//!
//! # R to Arrow
//!
//! | R | Arrow | notes |
//! |---|---|---|
//! | logical | boolean | bit-packed (a copy) |
//! | integer | int32 | zero-copy; `NA` -> null |
//! | double | float64 | zero-copy; `NA_real_` -> null, `NaN` stays NaN |
//! | character | utf8 (large_utf8 beyond 2 GiB) | zero-copy when already UTF-8; latin1 and native encodings transcoded; text that is not valid (see below) repaired |
//! | factor / ordered | dictionary<int8/int16/int32, utf8> | narrowest index that holds the levels; ordered flag on the field |
//! | Date | date32; float64 days when fractional or beyond date32 | the class kept in `"r"` for float64 |
//! | POSIXct | timestamp[s/ms/us/ns, tz]: the coarsest unit at which every value comes back with its bits; float64 seconds when none does | `tzone` as the zone, else the default zone; class and `tzone` kept in `"r"` for float64 |
//! | difftime | duration[s/ms/us/ns], unit chosen as for POSIXct; float64 in its `units` when none does | scaled to seconds by `units` (restored from `"rdarrow"`); class and `units` kept in `"r"` for float64 |
//! | hms | time32[s/ms] or time64[us/ns], unit chosen as for POSIXct; float64 seconds when none does | |
//! | integer64 | int64 | zero-copy |
//! | raw | uint8 | zero-copy |
//! | complex | struct<re: float64, im: float64> | `NA` in either part -> a null slot; the parts keep their bits |
//! | list | list<T> | T the elements' common type (logical < integer < double, as R coerces); NULL -> null |
//! | named list whose elements differ in type | struct of one row, a field per element, each `list<T>` of the element's values | an empty, `NA` or repeated name: `V<position>` ([`struct_field_names`]); the names in `"r"`, whose node says `struct = "list"` |
//! | unnamed list (a list column) whose elements differ in type | dense_union of one `list<T>` child per type, one slot per element | children named by the R kind of their values ([`union_member_names`]); NULL -> a null slot of the first child; the same rule at the top level and in columns; Parquet keeps it as a struct of `__union_type` and the children |
//! | S4 object (S4SXP) | struct of one row, a field per slot | the class (with its package) in `"r"`, whose node says `struct = "S4"` |
//! | S4 object whose type is a vector (contains `"integer"`, ...) | that vector's type | the S4 bit (`s4`) and slots in `"r"` |
//! | list of raw vectors | binary (large_binary beyond 2 GiB) | as arrow R maps it |
//! | data.frame column | struct | |
//! | list (or list column) of integer or double arrays of one `dim` (no other attribute but `dimnames`) | `arrow.fixed_shape_tensor`: fixed_size_list<T>[prod(dim)] | one row per element, its values as R holds them; the extension's shape `rev(dim)`, `permutation` `[n-1, ..., 0]` (R's column-major order), `dim_names` `rev(names(dimnames))` ([`crate::from_arrow::tensor_columns`]); arrow R is handed the storage type |
//! | matrix column (a column with two `dim`) | fixed_size_list<T>[ncol] | one list of the row's values per row (pyarrow FixedSizeList, Polars Array, DuckDB ARRAY); `dim` and `dimnames` in the column's node; a matrix inside a list keeps its values as one vector |
//! | POSIXlt (column or object) | timestamp, as POSIXct | the instants of its times in its zone (`tzone`, else the default zone); the attributes, and the components that do not derive back from the instants as they were, in the column's node ([`crate::mapping::posixlt`]) |
//! | sparse matrix of package Matrix (`*CMatrix`, `*RMatrix`, `*TMatrix`) | a table `i: int32, j: int32, x` | one row per stored entry, `i` and `j` counted from 1 as R counts; the other slots in the `"r"` metadata ([`crate::mapping::sparse`]) |
//! | NULL | null | |
//!
//! Strings that are not valid text (marked UTF-8 holding other bytes,
//! flagged as bytes, or in a native encoding that does not decode) become
//! valid utf8 by one rule ([`rdarrow_format::tree::encoding::repair_text`]): a string
//! whose bytes above 0x7F all stand alone is read as Windows-1252 (Latin-1
//! with the printable 0x80-0x9F; every byte maps); otherwise each invalid
//! sequence becomes U+FFFD. The conversion warns (the object, the column,
//! how many, the first row), and the original strings (bytes and encoding;
//! also those flagged as bytes, which R compares byte for byte) are kept
//! in the column's node of the `"r"` metadata and put back on the way
//! back.
//!
//! Every value keeps its bits: a time is stored at the unit at which each
//! value, scaled to it and rounded, divides back to the same double (the
//! way back divides by the unit, as arrow R does); where arrow R truncates
//! (fractional Dates, sub-second hms and difftime, POSIXct finer than a
//! microsecond) rdarrow takes a finer unit, or float64 with the class kept
//! in the `"r"` metadata so that arrow R restores it. Attributes go into
//! the schema metadata under `"r"`, in arrow R's format, and what that
//! cannot hold under `"rdarrow"` ([`crate::metadata`]).
//!
//! # Arrow to R
//!
//! | Arrow | R | notes |
//! |---|---|---|
//! | null | logical | all `NA` |
//! | boolean | logical | |
//! | int8, int16, int32, uint8, uint16 | integer | int32 without nulls shares Arrow's buffer |
//! | int64 | integer when every value fits, else integer64 | |
//! | uint32, uint64, float16, float32, float64, decimal128, decimal256 | double | float64 without nulls shares Arrow's buffer; decimals scaled |
//! | utf8, large_utf8, utf8_view | character | |
//! | binary, large_binary, binary_view, fixed_size_binary | list of raw vectors | null -> NULL |
//! | date32, date64 | Date (double) | |
//! | timestamp | POSIXct | the zone as `tzone` |
//! | time32, time64 | hms (difftime in secs) | |
//! | duration | difftime in secs | |
//! | dictionary of strings | factor (ordered when the field says so) | the batches' dictionaries unified |
//! | dictionary of other values, run-end encoded | the decoded values, mapped by their own type | |
//! | list, large_list, fixed_size_list, list_view, large_list_view | list | null -> NULL; a fixed_size_list whose node records a matrix: the matrix |
//! | `arrow.fixed_shape_tensor` | list of arrays | each row an array of the logical shape (`dim`), its values put in R's column-major order whatever the permutation; `dim_names` as `names(dimnames)` |
//! | map | list of key/value data frames | |
//! | struct | data.frame column | a struct whose node says `struct`: the named list or S4 object it was |
//! | dense_union, sparse_union | list | each slot's value: a `list<T>` child's element itself, another child's value a vector of length 1 |
//! | union, interval and the rest | an error naming the column | |
//!
//! A table made from a pandas DataFrame (its `"pandas"` metadata) gives
//! its index as the data frame's row names, or its first columns, by the
//! table atop [`crate::mapping::pandas_index`].
//!
//! # R arrays and Arrow tensors
//!
//! | R | Arrow Tensor message ([`crate::files::tensor`]) | notes |
//! |---|---|---|
//! | integer array | int32 | R's column-major strides: no transpose, no copy; `NA` is `-2^31` |
//! | logical array | int32 | R's own 32-bit logicals (`NA` is `-2^31`); the type in the message's `"r"` |
//! | double array | float64 | `NA` keeps R's bit pattern |
//! | integer64 array | int64 | |
//! | complex array | float64, a last dimension of 2 (real, imaginary) | NumPy: `t.to_numpy().view(complex)[..., 0]` |
//! | raw array | uint8 | |
//! | a vector without `dim` | one dimension | |
//!
//! Dimension names are `names(dimnames)`; every attribute (and the R
//! type) travels in the message's custom metadata `"r"`, so the way back is
//! `identical()`. A tensor another writer made maps by [`tensor_r_kind`]:
//! as the table below for columns, strides of any order gathered into R's
//! column-major order; uint64 and float16 (which R cannot hold exactly),
//! booleans and other types are refused.
//!
//! The `"r"` and `"rdarrow"` metadata then restore what the Arrow type
//! alone does not say (an integer64 that fits integers, integer Dates,
//! difftime units, the class of times kept as float64, complex values,
//! list elements' own types, attributes, and the shape of an object that
//! was not a data frame), so that an R object that went to Arrow comes
//! back `identical()`.

use rdarrow_format::tree::sxp;
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use std::sync::Arc;

/// The kinds of R column: the R side of the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RKind {
    /// `NULL`.
    Null,
    Logical,
    Integer,
    /// A double vector of class `integer64` (bit64): each value's 8 bytes
    /// hold an int64, `NA` the smallest one.
    Integer64,
    Double,
    Character,
    /// An integer vector of class `factor` with its `levels`.
    Factor,
    /// A factor of class `c("ordered", "factor")`.
    Ordered,
    /// Class `Date`: days since 1970-01-01, double or integer.
    Date,
    /// Class `POSIXct`: seconds since 1970-01-01 UTC, the zone in `tzone`.
    PosixCt,
    /// Class `difftime`: a duration in its `units`.
    Difftime,
    /// Class `hms` (a difftime in seconds): a time of day.
    Hms,
    Raw,
    Complex,
    /// A generic vector (list).
    List,
    /// A list of class `data.frame`.
    DataFrame,
}

impl RKind {
    /// R to Arrow: the kind of an R value of type `sxptype` whose class
    /// attribute is `classes`; `None` when it has no Arrow equivalent (an
    /// expression vector, a function, an environment, ...). A class decides
    /// first, in this order, then the type.
    pub fn of(classes: &[String], sxptype: u8) -> Option<RKind> {
        let has = |c: &str| classes.iter().any(|x| x == c);
        Some(if has("data.frame") {
            RKind::DataFrame
        } else if has("factor") {
            if has("ordered") {
                RKind::Ordered
            } else {
                RKind::Factor
            }
        } else if has("integer64") && sxptype == sxp::REAL {
            RKind::Integer64
        } else if has("Date") {
            RKind::Date
        } else if has("POSIXct") && matches!(sxptype, sxp::REAL | sxp::INT) {
            RKind::PosixCt
        } else if has("hms") {
            RKind::Hms
        } else if has("difftime") {
            RKind::Difftime
        } else {
            match sxptype {
                sxp::NIL => RKind::Null,
                sxp::LGL => RKind::Logical,
                sxp::INT => RKind::Integer,
                sxp::REAL => RKind::Double,
                sxp::STR => RKind::Character,
                sxp::CPLX => RKind::Complex,
                sxp::RAW => RKind::Raw,
                sxp::VEC => RKind::List,
                _ => return None,
            }
        })
    }

    /// The attributes, in their order, that Arrow to R makes for a
    /// vector of this kind from a type that says it ([`crate::from_arrow`]):
    /// the order R's own constructors give.
    pub fn made_attributes(self) -> &'static [&'static str] {
        match self {
            RKind::Integer64 | RKind::Date => &["class"],
            RKind::PosixCt => &["class", "tzone"],
            RKind::Hms => &["units", "class"],
            RKind::Difftime => &["class", "units"],
            RKind::Factor | RKind::Ordered => &["levels", "class"],
            _ => &[],
        }
    }

    /// The class attribute of an R vector of this kind (empty for the
    /// kinds whose class is implicit).
    pub fn classes(self) -> &'static [&'static str] {
        match self {
            RKind::Integer64 => &["integer64"],
            RKind::Factor => &["factor"],
            RKind::Ordered => &["ordered", "factor"],
            RKind::Date => &["Date"],
            RKind::PosixCt => &["POSIXct", "POSIXt"],
            RKind::Difftime => &["difftime"],
            RKind::Hms => &["hms", "difftime"],
            RKind::DataFrame => &["data.frame"],
            RKind::Null
            | RKind::Logical
            | RKind::Integer
            | RKind::Double
            | RKind::Character
            | RKind::Raw
            | RKind::Complex
            | RKind::List => &[],
        }
    }
}

/// Facts about an R column's values that its Arrow type depends on (R to
/// Arrow). The converter of each kind finds the facts its rule in
/// [`arrow_type`] reads; the others keep their defaults.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Character (and a factor's levels), list of raw vectors: the bytes
    /// need 64-bit offsets (they have them already, or pass 2 GiB).
    pub large: bool,
    /// Factor: the number of levels.
    pub levels: usize,
    /// Date: every value is a whole number of days within date32's range.
    pub whole_days: bool,
    /// POSIXct: the zone (`tzone`, else the default zone).
    pub zone: Option<String>,
    /// POSIXct, difftime, hms: the coarsest of seconds, milliseconds,
    /// microseconds and nanoseconds at which every value round-trips with
    /// its bits (and fits 32 bits, for an hms in seconds or milliseconds);
    /// `None` when none does.
    pub unit: Option<TimeUnit>,
    /// List: every element is a raw vector or NULL, one at least.
    pub raw_items: bool,
    /// List: the elements' common type (`None` when every one is NULL).
    pub item: Option<DataType>,
    /// Data frame: its columns.
    pub fields: Option<Fields>,
}

/// R to Arrow: the Arrow type of an R column of `kind` whose values show
/// `facts`. One rule per kind.
pub fn arrow_type(kind: RKind, facts: &Facts) -> DataType {
    match kind {
        RKind::Null => DataType::Null,
        RKind::Logical => DataType::Boolean,
        RKind::Integer => DataType::Int32,
        RKind::Integer64 => DataType::Int64,
        RKind::Double => DataType::Float64,
        RKind::Character => utf8(facts.large),
        // the narrowest index that holds the levels; the ordered flag is
        // the field's (see `arrow_field`)
        RKind::Factor | RKind::Ordered => {
            let index = if facts.levels <= i8::MAX as usize {
                DataType::Int8
            } else if facts.levels <= i16::MAX as usize {
                DataType::Int16
            } else {
                DataType::Int32
            };
            DataType::Dictionary(Box::new(index), Box::new(utf8(facts.large)))
        }
        // fractional days, which arrow R would truncate, keep their bits
        // (the class travels in the metadata)
        RKind::Date if facts.whole_days => DataType::Date32,
        RKind::Date => DataType::Float64,
        RKind::PosixCt => match facts.unit {
            Some(u) => DataType::Timestamp(u, facts.zone.as_deref().map(Into::into)),
            None => DataType::Float64,
        },
        RKind::Difftime => match facts.unit {
            Some(u) => DataType::Duration(u),
            None => DataType::Float64,
        },
        RKind::Hms => match facts.unit {
            Some(u @ (TimeUnit::Second | TimeUnit::Millisecond)) => DataType::Time32(u),
            Some(u) => DataType::Time64(u),
            None => DataType::Float64,
        },
        RKind::Raw => DataType::UInt8,
        RKind::Complex => DataType::Struct(Fields::from(vec![
            Field::new("re", DataType::Float64, true),
            Field::new("im", DataType::Float64, true),
        ])),
        // a list of raw vectors is binary data (as arrow R maps it)
        RKind::List if facts.raw_items => {
            if facts.large {
                DataType::LargeBinary
            } else {
                DataType::Binary
            }
        }
        RKind::List => DataType::List(Arc::new(Field::new(
            "item",
            facts.item.clone().unwrap_or(DataType::Null),
            true,
        ))),
        RKind::DataFrame => DataType::Struct(facts.fields.clone().unwrap_or_default()),
    }
}

fn utf8(large: bool) -> DataType {
    if large {
        DataType::LargeUtf8
    } else {
        DataType::Utf8
    }
}

/// R to Arrow: whether the Arrow type `dt` made for an R column of `kind`
/// says the kind itself (a timestamp says POSIXct, a duration difftime),
/// so that the attributes arrow R leaves out of its `"r"` metadata for the
/// kind (class, `tzone`, `units`) can be left out; `false` for a time whose
/// values went as plain float64, whose class must travel in the metadata.
pub fn type_says_kind(kind: RKind, dt: &DataType) -> bool {
    !(matches!(
        kind,
        RKind::Date | RKind::PosixCt | RKind::Difftime | RKind::Hms
    ) && *dt == DataType::Float64)
}

/// R to Arrow: the field of a column; an ordered factor's dictionary is
/// flagged ordered.
pub fn arrow_field(name: &str, dt: DataType, ordered: bool) -> Field {
    if ordered && matches!(dt, DataType::Dictionary(..)) {
        #[allow(deprecated)]
        return Field::new_dict(name, dt, true, 0, true);
    }
    Field::new(name, dt, true)
}

/// How a column of an Arrow type becomes an R vector (Arrow to R).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToR {
    /// A vector of this kind.
    Kind(RKind),
    /// int64: integer when every value fits R's integers, else integer64.
    IntegerOrInteger64,
    /// Decoded to its plain values first, which then map by their own
    /// type: a dictionary whose values are not strings, run-end encoded
    /// data.
    Decoded,
}

/// Arrow to R: what a column of type `dt` becomes (`ordered`: the field
/// flags its dictionary ordered); `None` when R has no equivalent. One rule
/// per Arrow type.
pub fn r_kind(dt: &DataType, ordered: bool) -> Option<ToR> {
    use DataType as D;
    Some(match dt {
        D::Null | D::Boolean => ToR::Kind(RKind::Logical),
        D::Int8 | D::Int16 | D::Int32 | D::UInt8 | D::UInt16 => ToR::Kind(RKind::Integer),
        D::Int64 => ToR::IntegerOrInteger64,
        D::UInt32
        | D::UInt64
        | D::Float16
        | D::Float32
        | D::Float64
        | D::Decimal128(..)
        | D::Decimal256(..) => ToR::Kind(RKind::Double),
        D::Utf8 | D::LargeUtf8 | D::Utf8View => ToR::Kind(RKind::Character),
        // a list of raw vectors
        D::Binary | D::LargeBinary | D::BinaryView | D::FixedSizeBinary(_) => {
            ToR::Kind(RKind::List)
        }
        D::Date32 | D::Date64 => ToR::Kind(RKind::Date),
        D::Timestamp(..) => ToR::Kind(RKind::PosixCt),
        D::Time32(_) | D::Time64(_) => ToR::Kind(RKind::Hms),
        D::Duration(_) => ToR::Kind(RKind::Difftime),
        D::Dictionary(_, values)
            if matches!(values.as_ref(), D::Utf8 | D::LargeUtf8 | D::Utf8View) =>
        {
            ToR::Kind(if ordered {
                RKind::Ordered
            } else {
                RKind::Factor
            })
        }
        D::Dictionary(..) | D::RunEndEncoded(..) => ToR::Decoded,
        // a map: a list of key/value data frames
        D::List(_)
        | D::LargeList(_)
        | D::FixedSizeList(..)
        | D::ListView(_)
        | D::LargeListView(_)
        | D::Map(..) => ToR::Kind(RKind::List),
        D::Struct(_) => ToR::Kind(RKind::DataFrame),
        // a list whose elements differ in type, one element per slot
        D::Union(..) => ToR::Kind(RKind::List),
        _ => return None,
    })
}

/// R to a tensor: the element type of an R array of `sxptype`
/// (`integer64`: a double array of class integer64); `None` for types no
/// tensor holds. The table is the module's.
pub fn tensor_element(sxptype: u8, integer64: bool) -> Option<DataType> {
    Some(match sxptype {
        sxp::INT | sxp::LGL => DataType::Int32,
        sxp::REAL if integer64 => DataType::Int64,
        // complex: pairs of doubles, a last dimension of 2
        sxp::REAL | sxp::CPLX => DataType::Float64,
        sxp::RAW => DataType::UInt8,
        _ => return None,
    })
}

/// A tensor to R: what an array of elements `dt` becomes, as
/// [`r_kind`] maps columns; `Err` says why R cannot hold it.
pub fn tensor_r_kind(dt: &DataType) -> Result<ToR, String> {
    match dt {
        DataType::UInt64 => Err("a tensor of uint64: R has no unsigned 64-bit integers, and doubles would round values past 2^53 (convert it to int64 or float64 first)".into()),
        DataType::Float16 => Err("a tensor of float16: R has no half-precision numbers (convert it to float32 or float64 first)".into()),
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::Float32
        | DataType::Float64 => r_kind(dt, false).ok_or_else(|| format!("a tensor of {dt}")),
        other => Err(format!("a tensor of {other}: a tensor of numbers is read")),
    }
}

/// The names of a dense union's children (R to Arrow: a list whose
/// elements differ in type), by the R kind of each child's items (each
/// child is `list<T>`): `double`, `character`, `factor`, `list`,
/// `data.frame`, ...; a name given twice gets its position (`double_2`).
pub fn union_member_names(children: &[DataType]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(children.len());
    for (i, c) in children.iter().enumerate() {
        let item = match c {
            DataType::List(f) | DataType::LargeList(f) => f.data_type(),
            other => other,
        };
        let base = match item {
            DataType::Struct(_) => "struct".to_string(),
            DataType::FixedSizeList(..) => "matrix".to_string(),
            DataType::Union(..) => "union".to_string(),
            DataType::Null => "null".to_string(),
            dt => match r_kind(dt, false) {
                Some(ToR::Kind(k)) => format!("{k:?}").to_lowercase(),
                Some(ToR::IntegerOrInteger64) => "integer64".to_string(),
                _ => format!("t{i}"),
            },
        };
        let name = if out.contains(&base) {
            format!("{base}_{}", i + 1)
        } else {
            base
        };
        out.push(name);
    }
    out
}

/// The field names of a struct made from a named list (R to Arrow): its
/// names, an empty, `NA` or repeated one replaced by `V<position>` (the
/// names themselves travel in the `"r"` metadata).
pub fn struct_field_names(names: &[String], n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(n);
    for j in 0..n {
        let given = names.get(j).map(String::as_str).unwrap_or("");
        let taken = |s: &str| out.iter().any(|o| o == s);
        let name = if given.is_empty() || given == "NA" || taken(given) {
            let mut k = format!("V{}", j + 1);
            while taken(&k) {
                k.push('_');
            }
            k
        } else {
            given.to_string()
        };
        out.push(name);
    }
    out
}

/// Units of `u` in a second: R's seconds are multiplied by it on the way
/// to Arrow and Arrow's values divided by it on the way back (as arrow R
/// does: dividing by 1e6 is exact where multiplying by 1e-6 is not).
pub fn units_per_second(u: TimeUnit) -> f64 {
    match u {
        TimeUnit::Second => 1.0,
        TimeUnit::Millisecond => 1e3,
        TimeUnit::Microsecond => 1e6,
        TimeUnit::Nanosecond => 1e9,
    }
}

/// Seconds in a difftime unit (`units` attribute); `None` for a unit R
/// does not know.
pub fn difftime_seconds(units: &str) -> Option<f64> {
    Some(match units {
        "secs" => 1.0,
        "mins" => 60.0,
        "hours" => 3600.0,
        "days" => 86400.0,
        "weeks" => 604800.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind's Arrow type maps back to the same kind (the metadata
    /// then restores what the type does not say: an integer64 whose
    /// values fit, an integer Date, a list of raw vectors).
    #[test]
    fn the_two_directions_agree() {
        let kinds = [
            RKind::Null,
            RKind::Logical,
            RKind::Integer,
            RKind::Integer64,
            RKind::Double,
            RKind::Character,
            RKind::Factor,
            RKind::Ordered,
            RKind::Date,
            RKind::PosixCt,
            RKind::Difftime,
            RKind::Hms,
            RKind::Raw,
            RKind::Complex,
            RKind::List,
            RKind::DataFrame,
        ];
        for kind in kinds {
            for facts in [
                Facts::default(),
                Facts {
                    whole_days: true,
                    unit: Some(TimeUnit::Millisecond),
                    large: true,
                    ..Default::default()
                },
            ] {
                let dt = arrow_type(kind, &facts);
                let back = r_kind(&dt, kind == RKind::Ordered)
                    .unwrap_or_else(|| panic!("{kind:?} -> {dt} has no way back"));
                let expected = match kind {
                    RKind::Null => ToR::Kind(RKind::Logical),
                    RKind::Integer64 => ToR::IntegerOrInteger64,
                    RKind::Raw => ToR::Kind(RKind::Integer),
                    RKind::Complex => ToR::Kind(RKind::DataFrame),
                    RKind::Date if !facts.whole_days => ToR::Kind(RKind::Double),
                    RKind::PosixCt | RKind::Difftime | RKind::Hms if facts.unit.is_none() => {
                        ToR::Kind(RKind::Double)
                    }
                    k => ToR::Kind(k),
                };
                assert_eq!(back, expected, "{kind:?} -> {dt}");
            }
        }
    }
}
