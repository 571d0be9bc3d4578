//! Engine errors as R values: a list of class `rdarrow_error_value` that
//! the R wrappers turn into conditions of class `rdarrow_error`.

use extendr_api::prelude::*;
use rdarrow_arrow::base::error::LimitKind;
use rdarrow_arrow::Error;
use rdarrow_arrow::ErrorKind;

/// How an R user raises the limit an error ran into.
fn limit_hint(limit: LimitKind) -> &'static str {
    match limit {
        LimitKind::Depth => "raise options(rdarrow.max_depth =) if this file is genuine",
        LimitKind::Memory => "raise options(rdarrow.max_memory =) if this file is genuine",
    }
}

pub fn error_value(e: &Error) -> Robj {
    if e.kind == ErrorKind::Interrupted {
        // the engine stopped on R's interrupt flag and reports it as this
        // error: the interrupt is consumed, so R does not deliver it a
        // second time after the caller has handled the error
        crate::job::consume_interrupt();
    }
    let mut e = e.clone();
    e.message = rdarrow_arrow::read::salvage::hint_as(&e.message, "`salvage = TRUE`");
    if let Some(limit) = e.limit {
        e.message = format!("{} ({})", e.message, limit_hint(limit));
    }
    let offset = e.offset.map(|o| o as f64).unwrap_or(f64::NAN);
    // R strings cannot hold NUL bytes (a corrupt name may contain them)
    let clean = |s: String| s.replace('\0', "\\0");
    let object = clean(e.object.clone().unwrap_or_default());
    let mut v = list!(
        message = clean(e.to_string()),
        kind = e.kind.name(),
        offset = offset,
        object = object
    );
    v.set_class(&["rdarrow_error_value"]).unwrap();
    v.into()
}

/// An error of the file `label` among several: its message says which.
pub(crate) fn in_file(e: &rdarrow_arrow::Error, label: &str) -> Robj {
    let mut e = e.clone();
    e.message = format!("file '{label}': {}", e.message);
    error_value(&e)
}
