//! Read settings from R: the options a read is given (nesting limit,
//! object store, memory, timeout), asked of R on its main thread.

use extendr_api::prelude::*;
use rdarrow_arrow::ReadOptions;

/// Read options from R's read settings (`read_args()` in R:
/// `list(max_depth, storage)`, the nesting limit and an object store's
/// options as a named character vector; a bare number is the nesting
/// limit) and R's options `rdarrow.max_memory` (bytes of vector data one
/// read may decode; unset = the machine's memory) and `timeout`. Main
/// thread only: it asks R.
pub(crate) fn options(settings: &Robj) -> ReadOptions {
    use rdarrow_arrow::checks::trust::Host;
    use rdarrow_arrow::checks::trust::Trust;
    let mut max_depth = 10_000;
    let mut storage = Vec::new();
    let mut data_only = false;
    let mut salvage = false;
    let mut host = Host::default();
    let strings = |x: &Robj| -> Vec<String> {
        x.as_str_vector()
            .map(|v| v.into_iter().map(str::to_string).collect())
            .unwrap_or_default()
    };
    if let Some(list) = settings.as_list() {
        for (name, value) in list.iter() {
            match name {
                "max_depth" => max_depth = depth_of(&value).unwrap_or(max_depth),
                "storage" => storage = storage_of(&value),
                "trusted" => data_only = value.as_bool() == Some(false),
                "salvage" => salvage = value.as_bool() == Some(true),
                "namespaces" => host.namespaces = strings(&value),
                "attached" => host.attached = strings(&value),
                _ => {}
            }
        }
    } else if let Some(d) = depth_of(settings) {
        max_depth = d;
    }
    ReadOptions {
        max_depth: max_depth.max(1) as usize,
        max_memory: memory_option(),
        timeout: timeout_option(),
        storage: rdarrow_arrow::StorageOptions::new(storage),
        trust: if data_only {
            Trust::DataOnly(host)
        } else {
            Trust::Code
        },
        salvage,
        ..Default::default()
    }
}

pub(crate) fn depth_of(x: &Robj) -> Option<i32> {
    x.as_integer().or_else(|| x.as_real().map(|d| d as i32))
}

/// An object store's options: a named character vector (R's
/// `storage_arg()` made it).
pub(crate) fn storage_of(x: &Robj) -> Vec<(String, String)> {
    let (Some(names), Some(values)) = (x.names(), x.as_str_vector()) else {
        return Vec::new();
    };
    names
        .zip(values)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// R's option `name` (`NULL` when unset). Main thread only. Read without
/// R's parser: reading options is part of every call's fixed cost.
pub(crate) fn option(name: &std::ffi::CStr) -> Robj {
    // SAFETY: main thread; the value is protected while the Robj lives
    unsafe { Robj::from_sexp(Rf_GetOption1(extendr_ffi::Rf_install(name.as_ptr()))) }
}

/// R's option `name` as a number (`None` when unset or not a number).
/// Main thread only.
pub(crate) fn number_option(name: &std::ffi::CStr) -> Option<f64> {
    let value = option(name);
    value
        .as_real()
        .or_else(|| value.as_integer().map(f64::from))
}

/// R's `timeout` option, in seconds (for URLs; R's default is 60).
pub(crate) fn timeout_option() -> Option<std::time::Duration> {
    let secs = number_option(c"timeout").unwrap_or(60.0);
    (secs > 0.0 && secs.is_finite()).then(|| std::time::Duration::from_secs_f64(secs))
}

/// R's `rdarrow.max_memory` option (unset: `None`). Main thread only.
pub(crate) fn memory_option() -> Option<u64> {
    let max_memory = number_option(c"rdarrow.max_memory").unwrap_or(0.0);
    (max_memory > 0.0).then_some(max_memory as u64)
}

#[allow(improper_ctypes)]
extern "C" {
    fn Rf_GetOption1(tag: extendr_ffi::SEXP) -> extendr_ffi::SEXP;
}
