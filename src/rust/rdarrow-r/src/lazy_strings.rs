//! Character vectors read lazily: an ALTREP class (`rdarrow_strings`)
//! whose strings stay in the engine's buffers (bytes, offsets, NA map and
//! encoding levels, as the reader decoded them) until R asks for one.
//!
//! - `Elt` makes the one CHARSXP asked for and keeps it in a STRSXP cache
//!   (`data2`), so a second use costs no second `mkCharLenCE`.
//! - `Dataptr` (R asking for the whole vector's memory) and `Set_elt` make
//!   every CHARSXP; the engine's buffers are then released, and the vector
//!   is the ordinary STRSXP in `data2`.
//! - `Extract_subset` (`x[i]` of many) copies the strings taken into a new
//!   lazy vector, without making them.
//! - `Duplicate` shares the buffers (they never change); `Serialized_state`
//!   is R's default (none), so `serialize()` and `saveRDS()` write the
//!   ordinary vector, which any R reads.
//! - The writer ([`crate::save_native`]) takes the bytes from the buffers
//!   ([`strings_of`]) without making a CHARSXP.
//!
//! R's C API is used directly: extendr's string ALTREP support hands its
//! methods neither the vector (for the cache) nor a data pointer for
//! strings, and unwinds through R on a panic.

use extendr_ffi::{
    R_ClearExternalPtr, R_ExternalPtrAddr, R_MakeExternalPtr, R_NaString, R_NilValue,
    R_RegisterCFinalizerEx, R_altrep_class_t, R_altrep_data1, R_altrep_data2, R_altrep_inherits,
    R_make_altstring_class, R_new_altrep, R_set_altrep_Duplicate_method,
    R_set_altrep_Inspect_method, R_set_altrep_Length_method, R_set_altrep_data2,
    R_set_altstring_Elt_method, R_set_altstring_No_NA_method, R_set_altstring_Set_elt_method,
    R_set_altvec_Dataptr_method, R_set_altvec_Dataptr_or_null_method, R_xlen_t, Rboolean,
    Rf_allocVector, Rf_protect, Rf_unprotect, ALTREP, DATAPTR, MARK_NOT_MUTABLE, SET_STRING_ELT,
    SEXP, SEXPTYPE, STRING_ELT, XLENGTH,
};
use rdarrow_arrow::tree::StringVector;
use rdarrow_arrow::tree::encoding::{to_utf8, CharEncoding};
use extendr_ffi::{cetype_t, Rf_mkCharLenCE};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Character vectors shorter than this are made whole as they are read:
/// below it, the ALTREP object and its cache cost more than the strings
/// (measured in `bench/strings.R`; see `bench/README.md`).
pub const MIN_LEN: usize = 1024;

/// The R option that sets the laziness: `FALSE` turns it off, a number is
/// the shortest vector read lazily, anything else is the default.
const OPTION: &std::ffi::CStr = c"rdarrow.lazy_strings";

/// The registered class (its `R_altrep_class_t` pointer; 0 before the
/// package's init has run).
static CLASS: AtomicUsize = AtomicUsize::new(0);
/// Lazy vectors whose buffers are alive (for the tests of their lifetime).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// One lazy vector's strings, behind `data1`'s external pointer.
struct Lazy {
    strings: StringVector,
    /// The stream's native encoding (version 3 header).
    native: Option<Box<[u8]>>,
    /// Which elements the cache holds (one bit each; empty until the
    /// cache is made).
    made: Vec<u64>,
    /// Elements not in the cache yet.
    left: usize,
}

impl Drop for Lazy {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The shortest character vector read lazily, as the session's option
/// says (`None`: not at all). Main thread only.
pub fn min_len() -> Option<usize> {
    if CLASS.load(Ordering::Relaxed) == 0 {
        return None;
    }
    // (main thread: the builders that ask are made there)
    let v = crate::settings::option(OPTION);
    if let Some(on) = v.as_bool() {
        return on.then_some(MIN_LEN);
    }
    match v.as_real().or_else(|| v.as_integer().map(f64::from)) {
        Some(m) if m >= 0.0 => Some(m as usize),
        _ => Some(MIN_LEN),
    }
}

/// The number of lazy vectors whose buffers are alive.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

fn class() -> R_altrep_class_t {
    R_altrep_class_t {
        ptr: CLASS.load(Ordering::Relaxed) as SEXP,
    }
}

/// `x`'s strings while they are still the engine's buffers.
unsafe fn state<'a>(x: SEXP) -> Option<&'a mut Lazy> {
    let p = R_ExternalPtrAddr(R_altrep_data1(x)) as *mut Lazy;
    p.as_mut()
}

/// The strings of `x` and its stream's native encoding, where `x` is a
/// lazy vector whose strings are still the engine's buffers.
///
/// # Safety
/// Main thread; `x` is a live R object.
pub unsafe fn strings_of<'a>(x: SEXP) -> Option<(&'a StringVector, Option<&'a [u8]>)> {
    if CLASS.load(Ordering::Relaxed) == 0
        || ALTREP(x) == 0
        || R_altrep_inherits(x, class()) == Rboolean::FALSE
    {
        return None;
    }
    state(x).map(|s| (&s.strings, s.native.as_deref()))
}

/// A lazy character vector of `strings`. The strings' offsets and lengths
/// were checked when the reader built them.
///
/// # Safety
/// Main thread, with the class registered (as [`min_len`] being `Some`
/// says).
pub unsafe fn make(strings: StringVector, native: Option<&[u8]>) -> SEXP {
    let left = strings.len() - strings.validity.as_ref().map_or(0, |v| v.null_count());
    LIVE.fetch_add(1, Ordering::Relaxed);
    let lazy = Box::new(Lazy {
        strings,
        native: native.map(Into::into),
        made: Vec::new(),
        left,
    });
    let p = Box::into_raw(lazy);
    let ptr = Rf_protect(R_MakeExternalPtr(p as *mut c_void, R_NilValue, R_NilValue));
    R_RegisterCFinalizerEx(ptr, Some(finalize), Rboolean::FALSE);
    let x = R_new_altrep(class(), ptr, R_NilValue);
    // modified only through a copy, as R's own shared vectors are
    MARK_NOT_MUTABLE(x);
    Rf_unprotect(1);
    x
}

unsafe extern "C" fn finalize(ptr: SEXP) {
    let p = R_ExternalPtrAddr(ptr) as *mut Lazy;
    if !p.is_null() {
        R_ClearExternalPtr(ptr);
        drop(Box::from_raw(p));
    }
}

/// Release the buffers of `x`, whose cache now holds every element.
unsafe fn release(x: SEXP) {
    finalize(R_altrep_data1(x));
}

/// The cache of `x` (made on first use), protected by `x`.
unsafe fn cache(x: SEXP, s: &mut Lazy) -> SEXP {
    let c = R_altrep_data2(x);
    if c != R_NilValue {
        return c;
    }
    let n = s.strings.len();
    let c = Rf_protect(Rf_allocVector(SEXPTYPE::STRSXP, n as R_xlen_t));
    R_set_altrep_data2(x, c);
    Rf_unprotect(1);
    s.made = vec![0; n.div_ceil(64)];
    // NA elements are in the cache from the start (`left` counts the rest)
    if let Some(v) = s.strings.validity.as_ref().filter(|v| v.null_count() > 0) {
        for i in (0..n).filter(|&i| v.is_null(i)) {
            SET_STRING_ELT(c, i as R_xlen_t, R_NaString);
            s.made[i / 64] |= 1 << (i % 64);
        }
    }
    c
}

/// Make every element not in the cache yet, and release the buffers.
unsafe fn materialize(x: SEXP) -> SEXP {
    let Some(s) = state(x) else {
        return R_altrep_data2(x);
    };
    let c = cache(x, s);
    let native = s.native.as_deref();
    for i in 0..s.strings.len() {
        if s.made[i / 64] & (1 << (i % 64)) == 0 {
            let e = charsxp(s.strings.get(i), s.strings.levels(i), native);
            SET_STRING_ELT(c, i as R_xlen_t, e);
        }
    }
    release(x);
    c
}

unsafe extern "C" fn length(x: SEXP) -> R_xlen_t {
    match state(x) {
        Some(s) => s.strings.len() as R_xlen_t,
        None => XLENGTH(R_altrep_data2(x)),
    }
}

unsafe extern "C" fn elt(x: SEXP, i: R_xlen_t) -> SEXP {
    let Some(s) = state(x) else {
        return STRING_ELT(R_altrep_data2(x), i);
    };
    let i = i as usize;
    let c = cache(x, s);
    let (word, bit) = (i / 64, 1u64 << (i % 64));
    if s.made[word] & bit != 0 {
        return STRING_ELT(c, i as R_xlen_t);
    }
    let e = charsxp(s.strings.get(i), s.strings.levels(i), s.native.as_deref());
    SET_STRING_ELT(c, i as R_xlen_t, e);
    s.made[word] |= bit;
    s.left -= 1;
    if s.left == 0 {
        release(x);
    }
    e
}

unsafe extern "C" fn set_elt(x: SEXP, i: R_xlen_t, v: SEXP) {
    let c = materialize(x);
    SET_STRING_ELT(c, i, v);
}

unsafe extern "C" fn dataptr(x: SEXP, _writeable: Rboolean) -> *mut c_void {
    DATAPTR(materialize(x))
}

unsafe extern "C" fn dataptr_or_null(x: SEXP) -> *const c_void {
    match state(x) {
        Some(_) => std::ptr::null(),
        None => DATAPTR(R_altrep_data2(x)),
    }
}

unsafe extern "C" fn no_na(x: SEXP) -> c_int {
    match state(x) {
        Some(s) => c_int::from(
            s.strings
                .validity
                .as_ref()
                .is_none_or(|v| v.null_count() == 0),
        ),
        None => 0,
    }
}

/// `x[indx]` (R's positive indices from 1, or NA; past the end is NA) as
/// a new lazy vector of the strings taken, copied from the buffers without
/// making a CHARSXP; `NULL` (R then takes the elements one by one) for a
/// short subset, or once the vector is made.
unsafe extern "C" fn extract_subset(x: SEXP, indx: SEXP, _call: SEXP) -> SEXP {
    let Some(s) = state(x) else {
        return std::ptr::null_mut();
    };
    let n = XLENGTH(indx) as usize;
    if n < MIN_LEN {
        return std::ptr::null_mut();
    }
    let len = s.strings.len();
    // R's index from 1 at `k`, as a position from 0 (`None`: NA, or past
    // the end)
    let at: Box<dyn Fn(usize) -> Option<usize>> = match extendr_ffi::TYPEOF(indx) {
        SEXPTYPE::INTSXP => {
            let v = std::slice::from_raw_parts(extendr_ffi::INTEGER(indx), n);
            Box::new(move |k| {
                let i = v[k];
                (i != extendr_ffi::R_NaInt && i >= 1 && i as usize <= len).then(|| i as usize - 1)
            })
        }
        SEXPTYPE::REALSXP => {
            let v = std::slice::from_raw_parts(extendr_ffi::REAL(indx), n);
            Box::new(move |k| {
                let i = v[k];
                (i >= 1.0 && i <= len as f64).then(|| i as usize - 1)
            })
        }
        _ => return std::ptr::null_mut(),
    };
    let mut b = rdarrow_arrow::tree::StringVectorBuilder::new(n);
    for k in 0..n {
        match at(k) {
            Some(i) => b.push(s.strings.get(i), s.strings.levels(i)),
            None => b.push(None, 0),
        }
    }
    let native = s.native.clone();
    make(b.finish(), native.as_deref())
}

/// A copy shares the buffers, which never change (a changed vector has
/// released them); R duplicates the attributes.
unsafe extern "C" fn duplicate(x: SEXP, _deep: Rboolean) -> SEXP {
    match state(x) {
        Some(s) => {
            let native = s.native.clone();
            make(s.strings.clone(), native.as_deref())
        }
        // R copies the ordinary vector itself
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn inspect(
    x: SEXP,
    _pre: c_int,
    _deep: c_int,
    _pvec: c_int,
    _subtree: Option<unsafe extern "C" fn(SEXP, c_int, c_int, c_int)>,
) -> Rboolean {
    let text = match state(x) {
        Some(s) => {
            let n = s.strings.len();
            let na = s.strings.validity.as_ref().map_or(0, |v| v.null_count());
            format!(
                " rdarrow_strings (len={n}, lazy: {} of them made)\n",
                n - na - s.left
            )
        }
        None => format!(
            " rdarrow_strings (len={}, made)\n",
            XLENGTH(R_altrep_data2(x))
        ),
    };
    if let Ok(t) = std::ffi::CString::new(text) {
        extendr_ffi::Rprintf(c"%s".as_ptr(), t.as_ptr());
    }
    // (R inspecting the elements would make them)
    Rboolean::TRUE
}

/// Register the class with R: the package's init (`entrypoint.c`).
///
/// # Safety
/// Called by R, once, with the package's `DllInfo`.
#[no_mangle]
pub unsafe extern "C" fn rdarrow_register_lazy_strings(dll: *mut c_void) {
    let cls = R_make_altstring_class(
        c"rdarrow_strings".as_ptr(),
        c"rdarrow".as_ptr(),
        dll as *mut extendr_ffi::DllInfo,
    );
    R_set_altrep_Length_method(cls, Some(length));
    R_set_altrep_Inspect_method(cls, Some(inspect));
    R_set_altrep_Duplicate_method(cls, Some(duplicate));
    R_set_altvec_Dataptr_method(cls, Some(dataptr));
    R_set_altvec_Dataptr_or_null_method(cls, Some(dataptr_or_null));
    extendr_ffi::R_set_altvec_Extract_subset_method(cls, Some(extract_subset));
    R_set_altstring_Elt_method(cls, Some(elt));
    R_set_altstring_Set_elt_method(cls, Some(set_elt));
    R_set_altstring_No_NA_method(cls, Some(no_na));
    CLASS.store(cls.ptr as usize, Ordering::Relaxed);
}

/// A CHARSXP with the encoding R's reader would give it: `bytes` as
/// written (`None`: `NA`), of encoding levels `lv`, from a stream whose
/// native encoding is `native`. The bytes hold no NUL (the reader and the
/// validator refuse those).
///
/// # Safety
/// Main thread only.
pub unsafe fn charsxp(bytes: Option<&[u8]>, lv: u16, native: Option<&[u8]>) -> SEXP {
    let Some(bytes) = bytes else {
        return R_NaString;
    };
    let (enc, b) = to_utf8(bytes, lv, native);
    let ce = match enc {
        CharEncoding::Utf8 => cetype_t::CE_UTF8,
        // keep latin1 strings in latin1, as R does
        CharEncoding::Latin1 => {
            return Rf_mkCharLenCE(
                bytes.as_ptr() as *const _,
                bytes.len() as i32,
                cetype_t::CE_LATIN1,
            )
        }
        CharEncoding::Bytes => cetype_t::CE_BYTES,
        CharEncoding::Native => cetype_t::CE_NATIVE,
    };
    Rf_mkCharLenCE(b.as_ptr() as *const _, b.len() as i32, ce)
}

