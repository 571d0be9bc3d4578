//! Small safe handles over DuckDB's C API: logical types that destroy
//! themselves, parameter values read into Rust, and errors handed back to
//! DuckDB. Every callback DuckDB makes into the extension runs through
//! [`guarded`], so no panic ever crosses into DuckDB.

use libduckdb_sys as ffi;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

/// A DuckDB logical type, destroyed when dropped.
pub struct LogicalType(pub ffi::duckdb_logical_type);

impl LogicalType {
    pub fn of_id(id: ffi::DUCKDB_TYPE) -> LogicalType {
        // SAFETY: any DUCKDB_TYPE id of a simple type
        LogicalType(unsafe { ffi::duckdb_create_logical_type(id) })
    }

    pub fn enumeration(members: &[String]) -> LogicalType {
        let names: Vec<CString> = members.iter().map(|m| c_string(m)).collect();
        let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: `members.len()` valid strings, copied by DuckDB
        LogicalType(unsafe {
            ffi::duckdb_create_enum_type(ptrs.as_mut_ptr(), ptrs.len() as ffi::idx_t)
        })
    }
}

impl Drop for LogicalType {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: made by DuckDB, destroyed once
            unsafe { ffi::duckdb_destroy_logical_type(&mut self.0) };
        }
    }
}

/// A DuckDB value, destroyed when dropped.
pub struct Value(pub ffi::duckdb_value);

impl Drop for Value {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: owned by us, destroyed once
            unsafe { ffi::duckdb_destroy_value(&mut self.0) };
        }
    }
}

impl Value {
    pub fn is_null(&self) -> bool {
        // SAFETY: a valid value
        self.0.is_null() || unsafe { ffi::duckdb_is_null_value(self.0) }
    }

    fn type_id(&self) -> ffi::DUCKDB_TYPE {
        // SAFETY: the type belongs to the value and is not destroyed
        unsafe { ffi::duckdb_get_type_id(ffi::duckdb_get_value_type(self.0)) }
    }

    /// The value as text (`None` for NULL).
    pub fn text(&self) -> Option<String> {
        if self.is_null() {
            return None;
        }
        // SAFETY: a valid value; the string is ours to free
        unsafe {
            let p = ffi::duckdb_get_varchar(self.0);
            if p.is_null() {
                return None;
            }
            let s = CStr::from_ptr(p).to_string_lossy().into_owned();
            ffi::duckdb_free(p as *mut std::ffi::c_void);
            Some(s)
        }
    }

    pub fn boolean(&self) -> Option<bool> {
        // SAFETY: a valid value
        (!self.is_null()).then(|| unsafe { ffi::duckdb_get_bool(self.0) })
    }

    /// A VARCHAR, or a LIST of them, as strings (`what` names the
    /// parameter in errors).
    pub fn strings(&self, what: &str) -> Result<Vec<String>, String> {
        if self.is_null() {
            return Err(format!("{what} is NULL"));
        }
        if self.type_id() != ffi::DUCKDB_TYPE_DUCKDB_TYPE_LIST {
            return Ok(vec![self.text().unwrap_or_default()]);
        }
        // SAFETY: a LIST value; each child is ours to destroy
        let n = unsafe { ffi::duckdb_get_list_size(self.0) };
        (0..n)
            .map(|i| {
                let child = Value(unsafe { ffi::duckdb_get_list_child(self.0, i) });
                child.text().ok_or_else(|| format!("{what} holds a NULL"))
            })
            .collect()
    }
}

impl Value {
    /// A MAP of VARCHAR to VARCHAR as (key, value) pairs (none for NULL;
    /// `what` names the parameter in errors).
    pub fn pairs(&self, what: &str) -> Result<Vec<(String, String)>, String> {
        if self.is_null() {
            return Ok(Vec::new());
        }
        if self.type_id() != ffi::DUCKDB_TYPE_DUCKDB_TYPE_MAP {
            return Err(format!("{what} must be a MAP of names to values"));
        }
        // SAFETY: a MAP value; each key and value is ours to destroy
        let n = unsafe { ffi::duckdb_get_map_size(self.0) };
        (0..n)
            .map(|i| {
                let k = Value(unsafe { ffi::duckdb_get_map_key(self.0, i) });
                let v = Value(unsafe { ffi::duckdb_get_map_value(self.0, i) });
                match (k.text(), v.text()) {
                    (Some(k), Some(v)) => Ok((k, v)),
                    _ => Err(format!("{what} holds a NULL")),
                }
            })
            .collect()
    }
}

/// The named parameter `storage_options`: MAP(VARCHAR, VARCHAR).
pub fn storage_options_type() -> LogicalType {
    let text = || LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
    // SAFETY: the key and value types are copied into the map type
    LogicalType(unsafe { ffi::duckdb_create_map_type(text().0, text().0) })
}

/// The read options of a call with `storage_options` (an object store's
/// options beyond the environment's).
pub fn read_options(storage: Vec<(String, String)>) -> rdarrow_arrow::ReadOptions {
    rdarrow_arrow::ReadOptions {
        storage: rdarrow_arrow::StorageOptions::new(storage),
        ..Default::default()
    }
}

/// Run a callback's `work`, turning its error or panic into the message
/// `fail` hands to DuckDB.
pub fn guarded(work: impl FnOnce() -> Result<(), String>, fail: impl FnOnce(&str)) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
    let message = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(m)) => m,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            format!("rdarrow: internal error ({what}); please report it")
        }
    };
    fail(&message);
}

/// A message as DuckDB takes it.
pub fn message(m: &str) -> CString {
    c_string(m)
}

/// Run a bind callback's `work`, its error becoming the bind's.
pub unsafe fn on_bind(info: ffi::duckdb_bind_info, work: impl FnOnce() -> Result<(), String>) {
    guarded(work, |m| {
        ffi::duckdb_bind_set_error(info, message(m).as_ptr())
    });
}

/// Run a scan callback's `work`, its error becoming the query's.
pub unsafe fn on_scan(info: ffi::duckdb_function_info, work: impl FnOnce() -> Result<(), String>) {
    guarded(work, |m| {
        ffi::duckdb_function_set_error(info, message(m).as_ptr())
    });
}

/// Drop the `Box<T>` behind a state pointer handed to DuckDB.
pub unsafe extern "C" fn drop_box<T>(p: *mut std::ffi::c_void) {
    if !p.is_null() {
        drop(Box::from_raw(p as *mut T));
    }
}

/// What a table function is: its name, its named parameters (after the
/// one positional parameter, a path or a list of them) and its callbacks.
pub struct TableFunction<'a> {
    pub name: &'a CStr,
    pub named: Vec<(&'a CStr, LogicalType)>,
    pub bind: unsafe extern "C" fn(ffi::duckdb_bind_info),
    pub init: unsafe extern "C" fn(ffi::duckdb_init_info),
    pub local_init: Option<unsafe extern "C" fn(ffi::duckdb_init_info)>,
    pub func: unsafe extern "C" fn(ffi::duckdb_function_info, ffi::duckdb_data_chunk),
    pub projection_pushdown: bool,
}

impl TableFunction<'_> {
    /// Register the function on `con`.
    pub unsafe fn register(&self, con: ffi::duckdb_connection) -> Result<(), String> {
        let mut f = ffi::duckdb_create_table_function();
        ffi::duckdb_table_function_set_name(f, self.name.as_ptr());
        let any = LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_ANY);
        ffi::duckdb_table_function_add_parameter(f, any.0);
        for (name, t) in &self.named {
            ffi::duckdb_table_function_add_named_parameter(f, name.as_ptr(), t.0);
        }
        ffi::duckdb_table_function_set_bind(f, Some(self.bind));
        ffi::duckdb_table_function_set_init(f, Some(self.init));
        if let Some(local) = self.local_init {
            ffi::duckdb_table_function_set_local_init(f, Some(local));
        }
        ffi::duckdb_table_function_set_function(f, Some(self.func));
        ffi::duckdb_table_function_supports_projection_pushdown(f, self.projection_pushdown);
        let rc = ffi::duckdb_register_table_function(con, f);
        ffi::duckdb_destroy_table_function(&mut f);
        if rc != ffi::DuckDBSuccess {
            return Err(format!("cannot register {}", self.name.to_string_lossy()));
        }
        Ok(())
    }
}

/// A name as DuckDB takes it (an interior NUL, which R names cannot hold
/// either, is dropped).
pub fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "")).expect("no NUL left")
}
