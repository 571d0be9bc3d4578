//! The DuckDB type of each Arrow type rdarrow makes: the type DuckDB's own
//! Arrow scan gives it, so that `read_rdata()` and a scan of
//! `rdarrow.read_table()` agree. rdarrow's one R -> Arrow mapping
//! (`rdarrow_arrow::mapping::types`) decides the Arrow type; this only
//! names it in DuckDB's terms: factors (dictionaries) are ENUM, Date is
//! DATE, POSIXct with a zone is TIMESTAMP WITH TIME ZONE, difftime
//! (duration) is INTERVAL, integer64 is BIGINT, list columns are LIST,
//! data-frame columns STRUCT and matrix columns ARRAY.

use crate::api::{c_string, LogicalType};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use libduckdb_sys as ffi;
use std::ffi::CString;

/// The DuckDB type of a column of Arrow type `t`; `levels` are a
/// dictionary column's values (ENUM members). `None` for a type rdarrow
/// never makes.
pub fn logical_type(t: &DataType, levels: Option<&ArrayRef>) -> Result<LogicalType, String> {
    use ffi::*;
    let simple = |id: DUCKDB_TYPE| Ok(LogicalType::of_id(id));
    match t {
        DataType::Null => simple(DUCKDB_TYPE_DUCKDB_TYPE_INTEGER),
        DataType::Boolean => simple(DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
        DataType::Int8 => simple(DUCKDB_TYPE_DUCKDB_TYPE_TINYINT),
        DataType::Int16 => simple(DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT),
        DataType::Int32 => simple(DUCKDB_TYPE_DUCKDB_TYPE_INTEGER),
        DataType::Int64 => simple(DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
        DataType::UInt8 => simple(DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT),
        DataType::UInt16 => simple(DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT),
        DataType::UInt32 => simple(DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER),
        DataType::UInt64 => simple(DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT),
        DataType::Float32 => simple(DUCKDB_TYPE_DUCKDB_TYPE_FLOAT),
        DataType::Float64 => simple(DUCKDB_TYPE_DUCKDB_TYPE_DOUBLE),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            simple(DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR)
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            simple(DUCKDB_TYPE_DUCKDB_TYPE_BLOB)
        }
        DataType::Date32 => simple(DUCKDB_TYPE_DUCKDB_TYPE_DATE),
        DataType::Timestamp(_, Some(_)) => simple(DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ),
        DataType::Timestamp(unit, None) => simple(match unit {
            TimeUnit::Second => DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_S,
            TimeUnit::Millisecond => DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_MS,
            TimeUnit::Microsecond => DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP,
            TimeUnit::Nanosecond => DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_NS,
        }),
        DataType::Time32(_) | DataType::Time64(_) => simple(DUCKDB_TYPE_DUCKDB_TYPE_TIME),
        DataType::Duration(_) => simple(DUCKDB_TYPE_DUCKDB_TYPE_INTERVAL),
        DataType::Dictionary(_, values) => match levels.and_then(enum_members) {
            Some(members) => Ok(LogicalType::enumeration(&members)),
            // levels that cannot be ENUM members (repeated, missing):
            // the values themselves
            None => logical_type(values, None),
        },
        DataType::List(f) | DataType::LargeList(f) => {
            let child = logical_type(f.data_type(), None)?;
            // SAFETY: a valid type; the list type copies it
            Ok(LogicalType(unsafe { duckdb_create_list_type(child.0) }))
        }
        DataType::FixedSizeList(f, n) => {
            let child = logical_type(f.data_type(), None)?;
            // SAFETY: as above
            Ok(LogicalType(unsafe {
                duckdb_create_array_type(child.0, *n as idx_t)
            }))
        }
        DataType::Struct(fields) => {
            let fields: Vec<&arrow_schema::Field> = fields.iter().map(|f| f.as_ref()).collect();
            members(&fields, duckdb_create_struct_type)
        }
        // a list whose elements differ in type: a UNION of its children
        DataType::Union(fields, _) => {
            let fields: Vec<&arrow_schema::Field> =
                fields.iter().map(|(_, f)| f.as_ref()).collect();
            members(&fields, duckdb_create_union_type)
        }
        other => Err(format!("no DuckDB type for Arrow type {other}")),
    }
}

/// A STRUCT or UNION (`create`) of `fields`, each member typed by
/// [`logical_type`] and named by [`member_names`].
fn members(
    fields: &[&arrow_schema::Field],
    create: unsafe fn(
        *mut ffi::duckdb_logical_type,
        *mut *const std::os::raw::c_char,
        ffi::idx_t,
    ) -> ffi::duckdb_logical_type,
) -> Result<LogicalType, String> {
    let children = fields
        .iter()
        .map(|f| logical_type(f.data_type(), None))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<CString> = member_names(fields.iter().map(|f| f.name().as_str()))
        .iter()
        .map(|n| c_string(n))
        .collect();
    let mut types: Vec<ffi::duckdb_logical_type> = children.iter().map(|c| c.0).collect();
    let mut name_ptrs: Vec<*const std::os::raw::c_char> =
        names.iter().map(|n| n.as_ptr()).collect();
    // SAFETY: arrays of `children.len()` valid types and names; copied
    Ok(LogicalType(unsafe {
        create(
            types.as_mut_ptr(),
            name_ptrs.as_mut_ptr(),
            children.len() as ffi::idx_t,
        )
    }))
}

/// A STRUCT's or UNION's member names as DuckDB takes them: distinct
/// regardless of case (a name met again gets `_<position>`).
fn member_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .enumerate()
        .map(|(i, n)| {
            let mut name = n.to_string();
            while !seen.insert(name.to_lowercase()) {
                name = format!("{n}_{}", i + 1);
                if seen.contains(&name.to_lowercase()) {
                    name.push('_');
                }
            }
            name
        })
        .collect()
}

/// The members of an ENUM made from a dictionary's values: `None` unless
/// they are distinct non-null strings.
fn enum_members(levels: &ArrayRef) -> Option<Vec<String>> {
    let values = levels.as_string_opt::<i32>()?;
    if values.null_count() > 0 {
        return None;
    }
    let members: Vec<String> = values.iter().map(|v| v.unwrap_or("").to_string()).collect();
    let mut seen = std::collections::HashSet::new();
    members
        .iter()
        .all(|m| seen.insert(m.as_str()))
        .then_some(members)
}
