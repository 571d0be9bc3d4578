//! The engine itself: its version, the lazy strings it holds, and the
//! format's codes and flags for the R side and its tests.

use extendr_api::prelude::*;

/// Version of the rdarrow engine
///
/// @return The version of the compiled Rust engine, as a string.
/// @export
#[extendr]
fn rdarrow_engine_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The number of lazily read character vectors whose strings the engine
/// still holds (for the tests of their lifetime).
/// @noRd
#[extendr]
fn lazy_strings_live_impl() -> i32 {
    crate::lazy_strings::live() as i32
}

/// The engine's node-type table: every code, named as R's sources name it.
/// @noRd
#[extendr]
fn sxp_codes_impl() -> Robj {
    let codes: Vec<i32> = rdarrow_arrow::tree::sxp::ALL
        .iter()
        .map(|&(_, c)| c as i32)
        .collect();
    let names: Vec<&str> = rdarrow_arrow::tree::sxp::ALL
        .iter()
        .map(|&(n, _)| n)
        .collect();
    let mut v: Robj = codes.into();
    let _ = v.set_names(names);
    v
}

/// The flags word the engine packs for a node.
/// @noRd
#[extendr]
fn pack_flags_impl(sxptype: i32, levels: i32, object: bool, attr: bool, tag: bool) -> i32 {
    let flags = rdarrow_arrow::tree::Flags {
        levels: levels as u16,
        object,
    };
    rdarrow_arrow::tree::pack(sxptype as u8, flags, attr, tag)
}

/// Put `value` in place as element `element` (1-based) of list `x`, which
/// was just made and is referenced nowhere else (a patch of
/// [`rdata_read_impl`]'s).
/// @noRd
#[extendr]
fn set_element_impl(x: Robj, element: i32, value: Robj) {
    let i = element as isize - 1;
    if x.is_list() && i >= 0 && (i as usize) < x.len() {
        // SAFETY: main thread; a list and an index within it
        unsafe { extendr_ffi::SET_VECTOR_ELT(x.get(), i, value.get()) };
    }
}

/// The address held by an external pointer, in decimal (for consumers that
/// take a stream by address, such as pyarrow's `_import_from_c`).
/// @noRd
#[extendr]
fn xptr_address_impl(x: Robj) -> String {
    unsafe { (extendr_ffi::R_ExternalPtrAddr(x.get()) as usize).to_string() }
}

/// The session's time zone ("" when none is set): the engine's one rule
/// (session_zone() of the Arrow bridge), which every front end asks.
/// @noRd
#[extendr]
fn session_zone_impl() -> String {
    rdarrow_arrow::session_zone().unwrap_or_default()
}

extendr_module! {
    mod engine;
    fn rdarrow_engine_version;
    fn lazy_strings_live_impl;
    fn sxp_codes_impl;
    fn pack_flags_impl;
    fn set_element_impl;
    fn xptr_address_impl;
    fn session_zone_impl;
}
