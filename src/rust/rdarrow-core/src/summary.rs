//! Listing: what each top-level object is (class, type, length, dims, size)
//! computed from a tree whose payloads were skipped.

use crate::altrep;
use crate::tree::*;
use crate::Document;

/// One row of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectInfo {
    pub name: String,
    /// `class()` collapsed with "/".
    pub class: String,
    /// `typeof()`.
    pub type_name: String,
    /// `length()`; `None` for the session's own environments (global, base,
    /// a namespace or package), whose bindings the file does not hold.
    pub length: Option<f64>,
    pub nrow: Option<f64>,
    pub ncol: Option<f64>,
    /// Size in the decompressed stream.
    pub bytes: u64,
}

/// Describe the top-level objects of a document.
pub fn describe(doc: &Document) -> Vec<ObjectInfo> {
    let objects = doc.objects();
    let spans = &doc.spans;
    objects
        .iter()
        .enumerate()
        .map(|(i, (name, obj))| {
            let bytes = spans.get(i).map(|s| s.end - s.start).unwrap_or(0);
            let (nrow, ncol) = dims(obj, &doc.refs);
            ObjectInfo {
                name: String::from_utf8_lossy(name).into_owned(),
                class: obj.class(&doc.refs).join("/"),
                type_name: sxp::type_name(obj.sxptype(&doc.refs)).to_string(),
                length: listed_length(obj, &doc.refs),
                nrow,
                ncol,
                bytes,
            }
        })
        .collect()
}

/// `length(x)`.
/// The length a listing shows: unknown for environments the file refers
/// to by name only (their contents belong to the reading session).
fn listed_length(obj: &RObject, refs: &RefTable) -> Option<f64> {
    match obj {
        RObject::Special(
            SpecialValue::GlobalEnv | SpecialValue::BaseEnv | SpecialValue::BaseNamespace,
        ) => None,
        RObject::Special(SpecialValue::EmptyEnv) => Some(0.0),
        RObject::Ref(id)
            if matches!(
                refs.get(*id),
                Some(RefEntry::Namespace(_) | RefEntry::Package(_))
            ) =>
        {
            None
        }
        _ => Some(r_length(obj, refs) as f64),
    }
}

pub fn r_length(obj: &RObject, refs: &RefTable) -> u64 {
    match obj {
        RObject::Null => 0,
        RObject::Vector(v) => v.data.len(),
        RObject::Altrep(a) => altrep::length(a, refs).unwrap_or(0),
        // R's length() of a CHARSXP is its byte count (NA_character_ is "NA")
        RObject::Char(c) => c.bytes.as_ref().map_or(2, |b| b.len() as u64),
        RObject::Pairlist(p) => {
            let t = p.cells.first().map(|c| c.sxptype).unwrap_or(sxp::LIST);
            if t == sxp::CLO || t == sxp::PROM {
                1
            } else {
                // a closure's body chain continues in the same flattened list
                // only for closures/promises, handled above
                p.cells.len() as u64
            }
        }
        RObject::Ref(id) => match refs.get(*id) {
            Some(RefEntry::Environment(e)) => env_size(e),
            _ => 1,
        },
        _ => 1,
    }
}

fn env_size(e: &Environment) -> u64 {
    let frame = match &e.frame {
        RObject::Pairlist(p) => p.cells.len() as u64,
        _ => 0,
    };
    let hashed = match &e.hashtab {
        RObject::Vector(v) => match &v.data {
            VectorData::List(b) => b
                .iter()
                .map(|x| match x {
                    RObject::Pairlist(p) => p.cells.len() as u64,
                    _ => 0,
                })
                .sum(),
            _ => 0,
        },
        _ => 0,
    };
    frame + hashed
}

/// (nrow, ncol) of a data frame or matrix.
fn dims(obj: &RObject, refs: &RefTable) -> (Option<f64>, Option<f64>) {
    let is_df = obj.inherits(refs, "data.frame");
    if is_df {
        let ncol = r_length(obj, refs) as f64;
        let nrow = obj.attribute(refs, "row.names").map(|rn| match rn {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) if x.len() == 2 && x[0] == i32::MIN => {
                    x[1].unsigned_abs() as f64
                }
                d => d.len() as f64,
            },
            other => other.vector_len(refs) as f64,
        });
        return (nrow.or(Some(0.0)), Some(ncol));
    }
    if let Some(RObject::Vector(d)) = obj.attribute(refs, "dim") {
        match &d.data {
            VectorData::Integer(x) if x.len() == 2 => {
                return (Some(x[0] as f64), Some(x[1] as f64))
            }
            VectorData::Real(x) if x.len() == 2 => return (Some(x[0]), Some(x[1])),
            _ => {}
        }
    }
    (None, None)
}
