//! An object back from a data frame made from Arrow data: the `"r"`
//! metadata applied, and the shape of the object it was made from.

use crate::metadata::values::bind_columns;
use crate::metadata::document::SHAPE_ELEMENT;
use crate::metadata::values::apply;
use crate::metadata::document::parse_r_metadata;
use crate::metadata::attributes::set_vector_attribute;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::*;

/// Apply arrow R's `"r"` metadata to a data frame made from Arrow data:
/// `attributes(x)[names(a)] <- a` at each level. Returns the frame and
/// rdarrow's shape element ([`crate::metadata::document::Shape`]), when there is one.
pub fn apply_r_metadata(
    m: &mut ObjectMaker,
    mut frame: RObject,
    md: &str,
) -> Result<(RObject, Option<RObject>)> {
    let mut doc = parse_r_metadata(md)?;
    let base = m.refs.append(std::mem::take(&mut doc.refs));
    let mut root = doc.root;
    root.for_each_ref_mut(&mut |id| id.0 += base);
    apply(m, &mut frame, &root);
    let refs = m.refs.clone();
    let shape = list_entries(&root, &refs)
        .into_iter()
        .find(|(k, _)| k == SHAPE_ELEMENT)
        .map(|(_, v)| v.clone());
    Ok((frame, shape))
}

/// Give a data frame made from Arrow data back the shape of the object it
/// was made from (the `rdarrow` element of its `"r"` metadata): a vector
/// (its one column), a matrix (its columns bound), or a data frame whose
/// row names disagree with its columns. A table changed since (columns
/// added or dropped, rows filtered) no longer fits the shape: it stays
/// the data frame.
pub fn restore_shape(m: &mut ObjectMaker, frame: RObject, element: &RObject) -> Result<RObject> {
    let refs = m.refs.clone();
    let parts = list_entries(element, &refs);
    let object = parts
        .iter()
        .find(|(k, _)| k == "object")
        .and_then(|(_, v)| v.as_strings())
        .and_then(|s| s.get(0).map(|b| b.to_vec()));
    let attrs: Vec<(String, RObject)> = parts
        .iter()
        .find(|(k, _)| k == "attributes")
        .map(|(_, v)| {
            list_entries(v, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let cols = match &frame {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => items.len(),
            _ => return Ok(frame),
        },
        _ => return Ok(frame),
    };
    let mut out = match object.as_deref() {
        Some(b"data.frame") => frame,
        Some(b"vector") if cols == 1 => match frame {
            RObject::Vector(v) => match v.data {
                VectorData::List(mut items) => items.pop().unwrap_or(RObject::Null),
                _ => unreachable!("a list, checked above"),
            },
            _ => unreachable!("a vector, checked above"),
        },
        Some(b"sparse") => {
            let storage = parts
                .iter()
                .find(|(k, _)| k == "storage")
                .and_then(|(_, v)| v.as_strings())
                .and_then(|s| s.get(0).and_then(crate::mapping::sparse::Storage::from_letter))
                .ok_or_else(|| {
                    rdarrow_format::Error::corrupt("the sparse matrix's metadata has no storage")
                })?;
            let names = crate::mapping::objects::names_of(&frame, &refs);
            let RObject::Vector(v) = frame else {
                unreachable!("a vector, checked above")
            };
            let VectorData::List(items) = v.data else {
                unreachable!("a list, checked above")
            };
            let columns: Vec<(String, RObject)> = names.into_iter().zip(items).collect();
            return crate::mapping::sparse::rebuild(m, storage, &columns, attrs);
        }
        Some(b"matrix") => {
            let RObject::Vector(v) = &frame else {
                unreachable!("a vector, checked above")
            };
            let VectorData::List(items) = &v.data else {
                unreachable!("a list, checked above")
            };
            match bind_columns(items.clone()) {
                Some(bound) => bound,
                None => return Ok(frame),
            }
        }
        _ => return Ok(frame),
    };
    // dimensions that no longer fit the values (rows were filtered)
    let len = rdarrow_format::read::summary::r_length(&out, &refs);
    if let Some((_, dim)) = attrs.iter().find(|(n, _)| n == "dim") {
        let cells = match dim {
            RObject::Vector(d) => match &d.data {
                VectorData::Integer(x) => x.iter().map(|&i| i.max(0) as u64).product::<u64>(),
                VectorData::Real(x) => x.iter().map(|&f| f.max(0.0) as u64).product::<u64>(),
                _ => u64::MAX,
            },
            _ => u64::MAX,
        };
        if cells != len {
            return Err(rdarrow_format::Error::usage(format!(
                "the table was made from an array of {cells} cells but holds {len} values; convert it as a data frame (as.data.frame())"
            )));
        }
    }
    for (name, value) in attrs {
        set_vector_attribute(m, &mut out, &name, value);
    }
    Ok(out)
}
