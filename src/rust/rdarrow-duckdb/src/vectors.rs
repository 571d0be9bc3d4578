//! Arrow arrays written into DuckDB vectors: the values of the arrays the
//! engine converted go into the output chunk's vectors once (numbers
//! copied as they lie, strings into DuckDB's string storage), with Arrow's
//! validity as DuckDB's. The type of each vector is what
//! [`crate::types::logical_type`] named for the array's type.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrowPrimitiveType};
use arrow_schema::{DataType, TimeUnit};
use libduckdb_sys as ffi;

/// Microseconds in one `unit`, or (negative) how many `unit`s make one.
fn micros_per(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1,
        TimeUnit::Nanosecond => -1_000,
    }
}

fn to_micros(v: i64, per: i64) -> i64 {
    if per > 0 {
        v.saturating_mul(per)
    } else {
        v.div_euclid(-per)
    }
}

/// Write `arr` into rows `[at, at + arr.len())` of `vec`.
///
/// # Safety
/// `vec` is a writable vector of the type [`crate::types::logical_type`]
/// gives `arr`'s type, with room for those rows.
pub unsafe fn write(arr: &dyn Array, vec: ffi::duckdb_vector, at: usize) -> Result<(), String> {
    let n = arr.len();
    if n == 0 {
        return Ok(());
    }
    set_nulls(arr, vec, at);
    let data = ffi::duckdb_vector_get_data(vec);
    match arr.data_type() {
        DataType::Null => {}
        DataType::Boolean => {
            let out = std::slice::from_raw_parts_mut((data as *mut bool).add(at), n);
            let values = arr.as_boolean().values();
            for (i, o) in out.iter_mut().enumerate() {
                *o = values.value(i);
            }
        }
        DataType::Int8 => copy::<Int8Type>(arr, data, at),
        DataType::Int16 => copy::<Int16Type>(arr, data, at),
        DataType::Int32 => copy::<Int32Type>(arr, data, at),
        DataType::Int64 => copy::<Int64Type>(arr, data, at),
        DataType::UInt8 => copy::<UInt8Type>(arr, data, at),
        DataType::UInt16 => copy::<UInt16Type>(arr, data, at),
        DataType::UInt32 => copy::<UInt32Type>(arr, data, at),
        DataType::UInt64 => copy::<UInt64Type>(arr, data, at),
        DataType::Float32 => copy::<Float32Type>(arr, data, at),
        DataType::Float64 => copy::<Float64Type>(arr, data, at),
        DataType::Date32 => copy::<Date32Type>(arr, data, at),
        DataType::Timestamp(unit, tz) => {
            let values: &[i64] = match unit {
                TimeUnit::Second => arr.as_primitive::<TimestampSecondType>().values(),
                TimeUnit::Millisecond => arr.as_primitive::<TimestampMillisecondType>().values(),
                TimeUnit::Microsecond => arr.as_primitive::<TimestampMicrosecondType>().values(),
                TimeUnit::Nanosecond => arr.as_primitive::<TimestampNanosecondType>().values(),
            };
            // TIMESTAMP WITH TIME ZONE is in microseconds; plain
            // timestamps keep their unit (TIMESTAMP_S, _MS, _NS)
            let per = if tz.is_some() { micros_per(unit) } else { 1 };
            micros(values, per, data, at);
        }
        DataType::Time32(unit) => {
            let values: Vec<i64> = match unit {
                TimeUnit::Second => arr
                    .as_primitive::<Time32SecondType>()
                    .values()
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
                _ => arr
                    .as_primitive::<Time32MillisecondType>()
                    .values()
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
            };
            micros(&values, micros_per(unit), data, at);
        }
        DataType::Time64(unit) => {
            let values: &[i64] = match unit {
                TimeUnit::Nanosecond => arr.as_primitive::<Time64NanosecondType>().values(),
                _ => arr.as_primitive::<Time64MicrosecondType>().values(),
            };
            micros(values, micros_per(unit), data, at);
        }
        DataType::Duration(unit) => {
            let values: &[i64] = match unit {
                TimeUnit::Second => arr.as_primitive::<DurationSecondType>().values(),
                TimeUnit::Millisecond => arr.as_primitive::<DurationMillisecondType>().values(),
                TimeUnit::Microsecond => arr.as_primitive::<DurationMicrosecondType>().values(),
                TimeUnit::Nanosecond => arr.as_primitive::<DurationNanosecondType>().values(),
            };
            let per = micros_per(unit);
            let out =
                std::slice::from_raw_parts_mut((data as *mut ffi::duckdb_interval).add(at), n);
            for (o, &v) in out.iter_mut().zip(values) {
                *o = ffi::duckdb_interval {
                    months: 0,
                    days: 0,
                    micros: to_micros(v, per),
                };
            }
        }
        DataType::Utf8 => strings(
            vec,
            at,
            arr.as_string::<i32>().iter().map(|s| s.map(str::as_bytes)),
        ),
        DataType::LargeUtf8 => strings(
            vec,
            at,
            arr.as_string::<i64>().iter().map(|s| s.map(str::as_bytes)),
        ),
        DataType::Utf8View => strings(
            vec,
            at,
            arr.as_string_view().iter().map(|s| s.map(str::as_bytes)),
        ),
        DataType::Binary => strings(vec, at, arr.as_binary::<i32>().iter()),
        DataType::LargeBinary => strings(vec, at, arr.as_binary::<i64>().iter()),
        DataType::BinaryView => strings(vec, at, arr.as_binary_view().iter()),
        DataType::Dictionary(key, _) => {
            let column_type = crate::api::LogicalType(ffi::duckdb_vector_get_column_type(vec));
            let is_enum =
                ffi::duckdb_get_type_id(column_type.0) == ffi::DUCKDB_TYPE_DUCKDB_TYPE_ENUM;
            if is_enum {
                let width = ffi::duckdb_enum_internal_type(column_type.0);
                match key.as_ref() {
                    DataType::Int8 => enum_codes(
                        arr.as_dictionary::<Int8Type>().keys().values(),
                        width,
                        data,
                        at,
                    ),
                    DataType::Int16 => enum_codes(
                        arr.as_dictionary::<Int16Type>().keys().values(),
                        width,
                        data,
                        at,
                    ),
                    DataType::Int32 => enum_codes(
                        arr.as_dictionary::<Int32Type>().keys().values(),
                        width,
                        data,
                        at,
                    ),
                    other => return Err(format!("factor codes of type {other}")),
                }
            } else {
                let text = arrow_cast::cast(arr, &DataType::Utf8).map_err(|e| e.to_string())?;
                return write(text.as_ref(), vec, at);
            }
        }
        DataType::List(_) => list(
            arr.as_list::<i32>().offsets().iter().map(|&o| o as usize),
            arr.as_list::<i32>().values().as_ref(),
            vec,
            at,
        )?,
        DataType::LargeList(_) => list(
            arr.as_list::<i64>().offsets().iter().map(|&o| o as usize),
            arr.as_list::<i64>().values().as_ref(),
            vec,
            at,
        )?,
        DataType::FixedSizeList(_, size) => {
            let a = arr.as_fixed_size_list();
            let size = *size as usize;
            let first = a.value_offset_at(0);
            let values = a.values().slice(first, n * size);
            write(
                values.as_ref(),
                ffi::duckdb_array_vector_get_child(vec),
                at * size,
            )?;
        }
        DataType::Struct(_) => {
            let a = arr.as_struct();
            for (k, child) in a.columns().iter().enumerate() {
                write(
                    child.as_ref(),
                    ffi::duckdb_struct_vector_get_child(vec, k as ffi::idx_t),
                    at,
                )?;
            }
        }
        // a UNION vector is a struct: the tag (the member's position),
        // then each member, valid in the rows that are its
        DataType::Union(fields, _) => {
            let u = arr.as_union();
            let ids: Vec<i8> = fields.iter().map(|(t, _)| t).collect();
            let tags: Vec<u8> = (0..n)
                .map(|i| ids.iter().position(|&t| t == u.type_id(i)).unwrap_or(0) as u8)
                .collect();
            let tag = arrow_array::UInt8Array::from(tags.clone());
            write(&tag, ffi::duckdb_struct_vector_get_child(vec, 0), at)?;
            let members = rdarrow_arrow::union_members(u).map_err(|e| e.message)?;
            for (k, member) in members.iter().enumerate() {
                write(
                    member.as_ref(),
                    ffi::duckdb_struct_vector_get_child(vec, (k + 1) as ffi::idx_t),
                    at,
                )?;
            }
        }
        other => return Err(format!("no DuckDB vector for Arrow type {other}")),
    }
    Ok(())
}

/// Mark the null rows of `arr` invalid in `vec`.
unsafe fn set_nulls(arr: &dyn Array, vec: ffi::duckdb_vector, at: usize) {
    let nulls = match arr.data_type() {
        // a union's slots are valid; its members say their own nulls
        DataType::Null | DataType::Union(..) => None,
        _ => arr.logical_nulls(),
    };
    let all_null = matches!(arr.data_type(), DataType::Null);
    if matches!(arr.data_type(), DataType::Union(..)) {
        return;
    }
    if !all_null && nulls.as_ref().is_none_or(|b| b.null_count() == 0) {
        return;
    }
    ffi::duckdb_vector_ensure_validity_writable(vec);
    let mask = ffi::duckdb_vector_get_validity(vec);
    for i in 0..arr.len() {
        if all_null || nulls.as_ref().is_some_and(|b| b.is_null(i)) {
            let row = at + i;
            *mask.add(row / 64) &= !(1u64 << (row % 64));
        }
    }
}

unsafe fn copy<T: ArrowPrimitiveType>(arr: &dyn Array, data: *mut std::ffi::c_void, at: usize) {
    let values = arr.as_primitive::<T>().values();
    std::ptr::copy_nonoverlapping(
        values.as_ptr(),
        (data as *mut T::Native).add(at),
        values.len(),
    );
}

unsafe fn micros(values: &[i64], per: i64, data: *mut std::ffi::c_void, at: usize) {
    let out = std::slice::from_raw_parts_mut((data as *mut i64).add(at), values.len());
    if per == 1 {
        out.copy_from_slice(values);
    } else {
        for (o, &v) in out.iter_mut().zip(values) {
            *o = to_micros(v, per);
        }
    }
}

unsafe fn strings<'a>(
    vec: ffi::duckdb_vector,
    at: usize,
    values: impl Iterator<Item = Option<&'a [u8]>>,
) {
    for (i, v) in values.enumerate() {
        if let Some(b) = v {
            ffi::duckdb_vector_assign_string_element_len(
                vec,
                (at + i) as ffi::idx_t,
                b.as_ptr() as *const std::os::raw::c_char,
                b.len() as ffi::idx_t,
            );
        }
    }
}

/// Factor codes (counted from 0, as Arrow's) as ENUM codes of `width`.
unsafe fn enum_codes<K: Copy + TryInto<u32>>(
    keys: &[K],
    width: ffi::DUCKDB_TYPE,
    data: *mut std::ffi::c_void,
    at: usize,
) {
    let code = |k: K| k.try_into().unwrap_or(0);
    match width {
        ffi::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT => {
            let out = std::slice::from_raw_parts_mut((data as *mut u8).add(at), keys.len());
            for (o, &k) in out.iter_mut().zip(keys) {
                *o = code(k) as u8;
            }
        }
        ffi::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT => {
            let out = std::slice::from_raw_parts_mut((data as *mut u16).add(at), keys.len());
            for (o, &k) in out.iter_mut().zip(keys) {
                *o = code(k) as u16;
            }
        }
        _ => {
            let out = std::slice::from_raw_parts_mut((data as *mut u32).add(at), keys.len());
            for (o, &k) in out.iter_mut().zip(keys) {
                *o = code(k);
            }
        }
    }
}

/// A list array (its `offsets`, `len + 1` of them, into `values`) into a
/// LIST vector: the elements go after what the child already holds.
unsafe fn list(
    offsets: impl Iterator<Item = usize>,
    values: &dyn Array,
    vec: ffi::duckdb_vector,
    at: usize,
) -> Result<(), String> {
    let offsets: Vec<usize> = offsets.collect();
    let (first, last) = (offsets[0], offsets[offsets.len() - 1]);
    let base = ffi::duckdb_list_vector_get_size(vec) as usize;
    let total = last - first;
    if ffi::duckdb_list_vector_reserve(vec, (base + total) as ffi::idx_t) != ffi::DuckDBSuccess {
        return Err(format!(
            "DuckDB could not make room for {total} list elements"
        ));
    }
    let entries = ffi::duckdb_vector_get_data(vec) as *mut ffi::duckdb_list_entry;
    for (i, w) in offsets.windows(2).enumerate() {
        *entries.add(at + i) = ffi::duckdb_list_entry {
            offset: (base + w[0] - first) as u64,
            length: (w[1] - w[0]) as u64,
        };
    }
    let child = values.slice(first, total);
    write(child.as_ref(), ffi::duckdb_list_vector_get_child(vec), base)?;
    ffi::duckdb_list_vector_set_size(vec, (base + total) as ffi::idx_t);
    Ok(())
}
