//! Attributes as the metadata keeps them: plain values, their order, and
//! setting one on a vector.

use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;

/// An attribute's value as the metadata keeps it: a compact sequence
/// (`dim = 2:6`) as the plain vector it stands for (`identical()` in R),
/// which every consumer builds.
pub(crate) fn plain_value(v: &RObject, refs: &RefTable) -> RObject {
    if let RObject::Altrep(a) = v {
        let (class, _) = rdarrow_format::tree::altrep::class_of(a, refs);
        if class.is_some_and(rdarrow_format::tree::altrep::is_compact_sequence)
            && matches!(a.attributes, RObject::Null)
        {
            if let Ok(data) = rdarrow_format::tree::altrep::expand_within(a, refs, 1 << 20) {
                return RObject::Vector(Box::new(Vector {
                    flags: a.flags,
                    data,
                    attributes: None,
                }));
            }
        }
    }
    v.clone()
}

/// R's compact form of the row names 1..n, `c(NA_integer_, -n)`: what a
/// data frame made from Arrow has (with the table's row count).
pub(crate) fn is_automatic_row_names(rn: &RObject) -> bool {
    matches!(rn, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x.len() == 2 && x[0] == rdarrow_format::tree::na::INTEGER && x[1] <= 0))
}

pub(crate) fn attr_list(m: &mut ObjectMaker, attrs: Vec<(String, RObject)>) -> RObject {
    let names: Vec<String> = attrs.iter().map(|(n, _)| n.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    m.named_list(&names, attrs.into_iter().map(|(_, v)| v).collect())
}

/// The order of a data frame's attributes `names` to note: `None` when
/// the way back gives it anyway (`names`, `class`, `row.names`, then the
/// others as they were), as `data.frame()` makes them; `$<-` on a data
/// frame, tibbles and data.tables put `class` after `row.names`.
pub(crate) fn frame_order(names: &[&str]) -> Option<String> {
    const FIRST: [&str; 3] = ["names", "class", "row.names"];
    // (a frame made from Arrow always has names, a zero-column one too)
    let usual = FIRST
        .iter()
        .copied()
        .filter(|f| *f == "names" || names.contains(f))
        .chain(names.iter().copied().filter(|n| !FIRST.contains(n)));
    (!usual.eq(names.iter().copied())).then(|| names.join("\t"))
}

/// Put the attributes of a data frame `obj` in the order `order` names
/// (those it does not name after them, as they were); without `names`
/// when the order has none (a frame without columns that had none).
pub(crate) fn reorder_attributes(obj: &mut RObject, order: &[&str], refs: &RefTable) {
    let RObject::Vector(v) = obj else { return };
    let Some(RObject::Pairlist(p)) = v.attributes.as_mut() else {
        return;
    };
    let tag_is = |c: &Cell, name: &str| matches!(&c.tag, Some(RObject::Ref(id)) if refs.symbol_name(*id) == Some(name.as_bytes()));
    if !order.contains(&"names") {
        p.cells.retain(|c| {
            !(tag_is(c, "names") && matches!(&c.car, RObject::Vector(n) if n.data.is_empty()))
        });
    }
    let rank = |c: &Cell| {
        let name = match &c.tag {
            Some(RObject::Ref(id)) => refs.symbol_name(*id),
            _ => None,
        };
        order
            .iter()
            .position(|n| Some(n.as_bytes()) == name)
            .unwrap_or(order.len())
    };
    p.cells.sort_by_key(|c| rank(c));
}

/// Set an attribute on a vector node (setting `class` sets the object bit).
pub(crate) fn set_vector_attribute(
    m: &mut ObjectMaker,
    target: &mut RObject,
    name: &str,
    value: RObject,
) {
    let tag = m.symbol(name);
    let (attrs, flags) = match target {
        RObject::Vector(v) => (&mut v.attributes, &mut v.flags),
        RObject::S4(s) => (&mut s.attributes, &mut s.flags),
        _ => return,
    };
    if matches!(value, RObject::Null) {
        remove_attribute(attrs, name.as_bytes(), &m.refs);
        if name == "class" {
            flags.object = false;
        }
        return;
    }
    if name == "class" {
        flags.object = true;
    }
    set_attribute(attrs, tag, name.as_bytes(), &m.refs, value);
}
