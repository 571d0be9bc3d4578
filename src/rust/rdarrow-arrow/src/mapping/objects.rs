//! What an R object is, as the bridge sees it: its strings, names and
//! matrix dimensions, whether it is an S4 object or has an Arrow value,
//! and the rule for which objects convert.

use crate::mapping::types::RKind;
use rdarrow_format::base::error::{Error, Result};
use rdarrow_format::tree::altrep;
use rdarrow_format::tree::*;
use std::borrow::Cow;

/// A vector's data and attributes, with ALTREP expanded.
pub(crate) struct View<'a> {
    pub data: Cow<'a, VectorData>,
    pub attrs: Option<&'a RObject>,
}

pub(crate) fn view<'a>(obj: &'a RObject, refs: &RefTable) -> Result<Option<View<'a>>> {
    Ok(match obj {
        RObject::Vector(v) => Some(View {
            data: Cow::Borrowed(&v.data),
            attrs: v.attributes.as_ref(),
        }),
        RObject::Altrep(a) => Some(View {
            data: Cow::Owned(altrep::expand(a, refs)?),
            attrs: match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            },
        }),
        _ => None,
    })
}

/// The strings of a character vector, expanding an ALTREP one (whose class
/// names resolve through `refs`).
pub(crate) fn strings_in(obj: Option<&RObject>, refs: &RefTable) -> Vec<String> {
    let owned;
    let s = match obj {
        Some(RObject::Altrep(a)) => {
            // e.g. names kept in an ALTREP wrapper
            owned = altrep::expand(a, refs).ok();
            match &owned {
                Some(VectorData::Character(s)) => Some(s),
                _ => None,
            }
        }
        Some(o) => o.as_strings(),
        None => None,
    };
    match s {
        Some(s) => (0..s.len())
            .map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"NA")).into_owned())
            .collect(),
        None => Vec::new(),
    }
}

/// The strings of a character vector (an ALTREP one is not expanded).
pub(crate) fn strings_of(obj: Option<&RObject>) -> Vec<String> {
    strings_in(obj, &RefTable::default())
}

/// Whether a list element has an Arrow value: a vector (not an expression
/// vector; an S4 object whose type is a vector as that vector), an S4
/// object (a struct of its slots). Others (calls, functions, environments)
/// are null in Arrow, their R serialization in the metadata
/// ([`crate::metadata`]).
pub(crate) fn has_arrow_value(obj: &RObject) -> bool {
    match obj {
        RObject::Null | RObject::Altrep(_) | RObject::S4(_) => true,
        RObject::Vector(v) => !matches!(v.data, VectorData::Expression(_)),
        _ => false,
    }
}

/// The dimensions of a matrix (a vector whose `dim` has two numbers).
pub(crate) fn matrix_dims(obj: &RObject, refs: &RefTable) -> Option<(usize, usize)> {
    let d = obj.attribute(refs, "dim")?;
    let dims: Vec<i64> = match d {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&i| i as i64).collect(),
            VectorData::Real(x) => x.iter().map(|&f| f as i64).collect(),
            _ => return None,
        },
        _ => return None,
    };
    match dims[..] {
        [r, c] if r >= 0 && c >= 0 => Some((r as usize, c as usize)),
        _ => None,
    }
}

/// Whether `obj` is an S4 object whose type is a vector (it converts as
/// the vector, its S4 bit kept in the metadata).
pub(crate) fn is_s4(obj: &RObject) -> bool {
    matches!(obj, RObject::Vector(v) if v.flags.levels & levels::S4_OBJECT != 0)
}

/// Whether a file's object is one to convert when none is named: a kind
/// the type mapping knows ([`RKind`]), `NULL` and S4 objects aside, or a
/// sparse matrix. (Any object named converts; an S4 object as a struct of
/// its slots.) The Arrow bridge's rule for
/// [`rdarrow_format::Document::choose_table_object`].
pub fn converts(obj: &RObject, refs: &RefTable) -> bool {
    (!is_s4(obj)
        && matches!(RKind::of(&obj.class_attr(refs), obj.sxptype(refs)), Some(k) if k != RKind::Null))
        || crate::mapping::sparse::storage_of(obj, refs).is_some()
}

/// The error for an R value with no Arrow equivalent.
pub(crate) fn not_convertible(what: &str, obj: &RObject, refs: &RefTable) -> Error {
    if obj.sxptype(refs) == sxp::PROM {
        // the one rule's words (a promise is code, not a value to convert)
        return Error::new(
            rdarrow_format::ErrorKind::Unsafe,
            rdarrow_format::checks::trust::promise_message(what),
        );
    }
    Error::unsupported(format!(
        "{what} is {} (type {}), which has no Arrow equivalent (it is not data: functions, calls, formulas and environments stay in R); data frames, atomic vectors, factors, dates, times, matrices, lists and S4 objects of those convert",
        obj.class(refs).join("/"),
        sxp::type_name(obj.sxptype(refs))
    ))
}

/// The names of a data frame's (or list's) elements.
pub(crate) fn names_of(obj: &RObject, refs: &RefTable) -> Vec<String> {
    strings_in(obj.attribute(refs, "names"), refs)
}

/// A vector of R type `t` without elements.
pub(crate) fn empty_of(t: u8) -> Option<VectorData> {
    Some(match t {
        sxp::LGL => VectorData::Logical(Vec::<i32>::new().into()),
        sxp::INT => VectorData::Integer(Vec::<i32>::new().into()),
        sxp::REAL => VectorData::Real(Vec::<f64>::new().into()),
        sxp::CPLX => VectorData::Complex(Vec::<f64>::new().into()),
        sxp::STR => VectorData::Character(StringVectorBuilder::new(0).finish()),
        sxp::RAW => VectorData::Raw(arrow_buffer::Buffer::from_vec(Vec::<u8>::new())),
        sxp::VEC => VectorData::List(Vec::new()),
        _ => return None,
    })
}

/// The levels of a factor (ALTREP levels expanded) as a character vector
/// without attributes, each string as R held it.
pub(crate) fn factor_levels(obj: &RObject, refs: &RefTable) -> RObject {
    let data = match obj.attribute(refs, "levels") {
        Some(RObject::Vector(v)) => v.data.clone(),
        Some(RObject::Altrep(a)) => rdarrow_format::tree::altrep::expand(a, refs)
            .unwrap_or(VectorData::Character(StringVectorBuilder::new(0).finish())),
        _ => VectorData::Character(StringVectorBuilder::new(0).finish()),
    };
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data,
        attributes: None,
    }))
}

