//! rdarrow's DuckDB loadable extension: R data files as DuckDB tables.
//! A thin binding over the engine (the fourth, beside R, Python and the
//! command line): it converts arguments, results and errors, and decides
//! nothing of its own.
//!
//! - [`scan`]: `read_rdata()` and `read_rds()`;
//! - [`objects`]: `rdata_objects()`;
//! - [`replace`]: `FROM 'x.rds'`;
//! - [`types`] and [`vectors`]: Arrow types and arrays in DuckDB's terms;
//! - [`api`]: handles over DuckDB's C API.
//!
//! Built against DuckDB's stable C API (the function table DuckDB hands
//! over at load time), so one build loads in every DuckDB release since
//! [`MIN_DUCKDB`]; `tools/duckdb-extension.sh` appends the metadata footer
//! DuckDB checks.

mod api;
mod objects;
mod replace;
mod scan;
mod types;
mod vectors;

use libduckdb_sys as ffi;

/// The oldest C API whose functions the extension calls.
pub const MIN_DUCKDB: &str = "v1.2.0";

unsafe fn init(
    info: ffi::duckdb_extension_info,
    access: *const ffi::duckdb_extension_access,
) -> Result<bool, String> {
    if !ffi::duckdb_rs_extension_api_init(info, access, MIN_DUCKDB)? {
        return Ok(false);
    }
    let get_database = (*access).get_database.ok_or("DuckDB gave no database")?;
    let db_ptr = get_database(info);
    if db_ptr.is_null() {
        return Ok(false);
    }
    let db = *db_ptr;
    let mut con: ffi::duckdb_connection = std::ptr::null_mut();
    if ffi::duckdb_connect(db, &mut con) != ffi::DuckDBSuccess {
        return Err("cannot connect to the database".into());
    }
    let registered = scan::register(con).and_then(|_| objects::register(con));
    ffi::duckdb_disconnect(&mut con);
    registered?;
    replace::register(db);
    Ok(true)
}

/// The entry point DuckDB calls on `LOAD` (`<file name>_init_c_api`).
///
/// # Safety
/// Called by DuckDB with its extension info and access table.
#[no_mangle]
pub unsafe extern "C" fn rdarrow_init_c_api(
    info: ffi::duckdb_extension_info,
    access: *const ffi::duckdb_extension_access,
) -> bool {
    let mut loaded = false;
    api::guarded(
        || {
            loaded = init(info, access)?;
            Ok(())
        },
        |m| {
            if let Some(set_error) = (*access).set_error {
                set_error(info, api::message(m).as_ptr());
            }
        },
    );
    loaded
}
