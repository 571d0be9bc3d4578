//! `rdata_objects(path, recursive := false)`: the listing of R data files
//! without decoding their values, one row per object, as `rdata_objects()`
//! gives it in R (columns `name`, `class`, `type`, `length`, `nrow`,
//! `ncol`, `bytes`, the counts BIGINT; for several files a first column
//! `file`).

use crate::api::{drop_box, on_bind, on_scan, LogicalType, TableFunction, Value};
use libduckdb_sys as ffi;
use rdarrow_arrow::read::summary::ObjectInfo;
use std::ffi::c_void;
use std::sync::Mutex;

struct Listing {
    /// The file of each row, when several were listed.
    files: Option<Vec<String>>,
    rows: Vec<ObjectInfo>,
    next: Mutex<usize>,
}

const COLUMNS: [(&std::ffi::CStr, ffi::DUCKDB_TYPE); 7] = [
    (c"name", ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR),
    (c"class", ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR),
    (c"type", ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR),
    (c"length", ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
    (c"nrow", ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
    (c"ncol", ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
    (c"bytes", ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT),
];

unsafe fn bind(info: ffi::duckdb_bind_info) -> Result<(), String> {
    let paths = Value(ffi::duckdb_bind_get_parameter(info, 0)).strings("the path")?;
    let recursive = Value(ffi::duckdb_bind_get_named_parameter(
        info,
        c"recursive".as_ptr(),
    ))
    .boolean()
    .unwrap_or(false);
    let read = crate::api::read_options(
        Value(ffi::duckdb_bind_get_named_parameter(
            info,
            c"storage_options".as_ptr(),
        ))
        .pairs("storage_options")?,
    );
    let sources = crate::scan::sources_of(&paths, &read)?;
    let listed = rdarrow_arrow::batches::rows::per_column(
        sources.len(),
        rdarrow_arrow::batches::rows::all_cores()
            .min(sources.len())
            .max(1),
        |i| {
            let (path, label) = &sources[i];
            let name = rdarrow_arrow::stream_object_name(path);
            Ok(rdarrow_arrow::list_file(path, &read, &name, recursive)
                .map(|(_, infos)| infos)
                .map_err(|e| crate::scan::in_file(label, e)))
        },
    )
    .map_err(|e| format!("rdarrow: {e}"))?
    .into_iter()
    .collect::<Result<Vec<_>, String>>()?;
    let several = sources.len() > 1;
    if several {
        let t = LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        ffi::duckdb_bind_add_result_column(info, c"file".as_ptr(), t.0);
    }
    for (name, id) in COLUMNS {
        let t = LogicalType::of_id(id);
        ffi::duckdb_bind_add_result_column(info, name.as_ptr(), t.0);
    }
    let mut files = Vec::new();
    let mut rows = Vec::new();
    for ((_, label), infos) in sources.iter().zip(listed) {
        for i in infos {
            files.push(label.clone());
            rows.push(i);
        }
    }
    let listing = Box::new(Listing {
        files: several.then_some(files),
        rows,
        next: Mutex::new(0),
    });
    ffi::duckdb_bind_set_bind_data(
        info,
        Box::into_raw(listing) as *mut c_void,
        Some(drop_box::<Listing>),
    );
    Ok(())
}

unsafe extern "C" fn bind_c(info: ffi::duckdb_bind_info) {
    on_bind(info, || bind(info));
}

unsafe extern "C" fn init(_info: ffi::duckdb_init_info) {}

unsafe fn text(vec: ffi::duckdb_vector, row: usize, s: &str) {
    ffi::duckdb_vector_assign_string_element_len(
        vec,
        row as ffi::idx_t,
        s.as_ptr() as *const _,
        s.len() as ffi::idx_t,
    );
}

unsafe fn number<T>(vec: ffi::duckdb_vector, row: usize, v: Option<T>) {
    match v {
        Some(v) => *(ffi::duckdb_vector_get_data(vec) as *mut T).add(row) = v,
        None => {
            ffi::duckdb_vector_ensure_validity_writable(vec);
            ffi::duckdb_validity_set_row_invalid(
                ffi::duckdb_vector_get_validity(vec),
                row as ffi::idx_t,
            );
        }
    }
}

unsafe fn scan(
    info: ffi::duckdb_function_info,
    output: ffi::duckdb_data_chunk,
) -> Result<(), String> {
    let listing = &*(ffi::duckdb_function_get_bind_data(info) as *const Listing);
    let mut next = listing
        .next
        .lock()
        .map_err(|_| "rdarrow: the listing failed")?;
    let start = *next;
    let m = (listing.rows.len() - start).min(ffi::duckdb_vector_size() as usize);
    let vec = |k: usize| ffi::duckdb_data_chunk_get_vector(output, k as ffi::idx_t);
    let shift = usize::from(listing.files.is_some());
    for r in 0..m {
        let i = &listing.rows[start + r];
        if let Some(files) = &listing.files {
            text(vec(0), r, &files[start + r]);
        }
        text(vec(shift), r, &i.name);
        text(vec(shift + 1), r, &i.class);
        text(vec(shift + 2), r, &i.type_name);
        // counts as integers, as R's rdata_objects() gives them (the
        // listing holds them as doubles, whole numbers up to 2^53)
        number(vec(shift + 3), r, i.length.map(|v| v as i64));
        number(vec(shift + 4), r, i.nrow.map(|v| v as i64));
        number(vec(shift + 5), r, i.ncol.map(|v| v as i64));
        number(vec(shift + 6), r, i.bytes.map(|b| b as i64));
    }
    *next += m;
    ffi::duckdb_data_chunk_set_size(output, m as ffi::idx_t);
    Ok(())
}

unsafe extern "C" fn func(info: ffi::duckdb_function_info, output: ffi::duckdb_data_chunk) {
    on_scan(info, || scan(info, output));
}

/// Register `rdata_objects` on `con`.
pub unsafe fn register(con: ffi::duckdb_connection) -> Result<(), String> {
    TableFunction {
        name: c"rdata_objects",
        named: vec![
            (
                c"recursive",
                LogicalType::of_id(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN),
            ),
            (c"storage_options", crate::api::storage_options_type()),
        ],
        bind: bind_c,
        init,
        local_init: None,
        func,
        projection_pushdown: false,
    }
    .register(con)
}
