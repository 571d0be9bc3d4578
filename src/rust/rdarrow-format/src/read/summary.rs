//! Listing: what each top-level object is (class, type, length, dims, size)
//! computed from a tree whose payloads were skipped.

use crate::tree::altrep;
use crate::read::document::Document;
use crate::tree::*;

/// One row of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectInfo {
    /// The object's name (or path).
    pub name: String,
    /// `class()` collapsed with "/".
    pub class: String,
    /// `typeof()`.
    pub type_name: String,
    /// `length()`; `None` for the session's own environments (global, base,
    /// a namespace or package), whose bindings the file does not hold.
    pub length: Option<f64>,
    /// Rows of a data frame or matrix.
    pub nrow: Option<f64>,
    /// Columns of a data frame or matrix.
    pub ncol: Option<f64>,
    /// Size in the decompressed stream (`None` inside an object).
    pub bytes: Option<u64>,
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
            info(
                String::from_utf8_lossy(name).into_owned(),
                obj,
                &doc.refs,
                Some(bytes),
            )
        })
        .collect()
}

/// [`describe`], and after each list (not a data frame or other classed
/// list) what it holds, to any depth, each named by its object path
/// ([`crate::tree::object_path`]); their sizes in the stream are unknown. The
/// top-level objects are named `names`.
pub fn describe_nested(doc: &Document, names: &[String]) -> Vec<ObjectInfo> {
    let objects = doc.objects();
    let mut out = Vec::new();
    for (k, mut top) in describe(doc).into_iter().enumerate() {
        if let Some(n) = names.get(k) {
            top.name = n.clone();
        }
        let path = crate::tree::object_path::ObjectPath::top(&top.name);
        out.push(top);
        if let Some((_, obj)) = objects.get(k) {
            nested(obj, &doc.refs, path, &mut out);
        }
    }
    out
}

/// The elements of `obj`, if it is a plain list, or its slots, if it is
/// an S4 object, and theirs.
fn nested(
    obj: &RObject,
    refs: &RefTable,
    path: crate::tree::object_path::ObjectPath,
    out: &mut Vec<ObjectInfo>,
) {
    use crate::tree::object_path::Step;
    if let Some(slots) = crate::tree::object_path::slots(obj, refs) {
        for (name, value) in slots {
            let mut p = path.clone();
            p.steps.push(Step::Slot(name));
            out.push(info(p.display(), value, refs, None));
            nested(value, refs, p, out);
        }
        return;
    }
    let RObject::Vector(v) = obj else { return };
    let VectorData::List(items) = &v.data else {
        return;
    };
    if !obj.class(refs).iter().all(|c| c == "list") {
        return;
    }
    let names = obj.attribute(refs, "names").and_then(|n| n.as_strings());
    for (i, item) in items.iter().enumerate() {
        let name = names
            .as_ref()
            .and_then(|ns| ns.get(i))
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned());
        let mut p = path.clone();
        p.steps.push(match name {
            Some(n) => Step::Name(n),
            None => Step::Position(i + 1),
        });
        out.push(info(p.display(), item, refs, None));
        nested(item, refs, p, out);
    }
}

fn info(name: String, obj: &RObject, refs: &RefTable, bytes: Option<u64>) -> ObjectInfo {
    let (nrow, ncol) = dims(obj, refs);
    ObjectInfo {
        name,
        class: obj.class(refs).join("/"),
        type_name: sxp::type_name(obj.sxptype(refs)).to_string(),
        length: listed_length(obj, refs),
        nrow,
        ncol,
        bytes,
    }
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

/// `length()` of an object.
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
/// Rows and columns of a data frame or matrix.
pub fn dims(obj: &RObject, refs: &RefTable) -> (Option<f64>, Option<f64>) {
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
