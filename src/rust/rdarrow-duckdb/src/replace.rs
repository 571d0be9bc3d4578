//! Replacement scans: `FROM 'survey.rds'`, `FROM 'archive/*.RData'` and
//! `FROM 'x.qs2'` read as `read_rdata(...)`, as DuckDB reads a Parquet or
//! CSV file named in FROM. A name is taken when it is an R data file's by
//! the engine's rule (`.rds`, `.rda`, `.RData`, `.qs`, `.qs2`, `.qdata`,
//! in any case).

use libduckdb_sys as ffi;
use std::ffi::{c_void, CStr};

/// Whether a name in FROM is an R data file's (the engine's rule).
pub fn is_rdata_name(name: &str) -> bool {
    rdarrow_arrow::is_data_name(name)
}

unsafe extern "C" fn replace(
    info: ffi::duckdb_replacement_scan_info,
    table_name: *const std::os::raw::c_char,
    _data: *mut c_void,
) {
    let name = CStr::from_ptr(table_name).to_string_lossy();
    if !is_rdata_name(&name) {
        return;
    }
    ffi::duckdb_replacement_scan_set_function_name(info, c"read_rdata".as_ptr());
    let text = crate::api::c_string(&name);
    let mut value = ffi::duckdb_create_varchar(text.as_ptr());
    ffi::duckdb_replacement_scan_add_parameter(info, value);
    ffi::duckdb_destroy_value(&mut value);
}

/// Register the replacement scan on `db`.
pub unsafe fn register(db: ffi::duckdb_database) {
    ffi::duckdb_add_replacement_scan(db, Some(replace), std::ptr::null_mut(), None);
}
