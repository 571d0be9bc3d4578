//! A value back as R had it: what a column's (or a list element's) node
//! says is applied to the value Arrow gave back.

use crate::metadata::na_bits::NaBits;
use crate::metadata::strings::character_vector;
use crate::metadata::attributes::reorder_attributes;
use crate::metadata::attributes::set_vector_attribute;
use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;

pub(crate) fn apply(m: &mut ObjectMaker, target: &mut RObject, md: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(md, &refs);
    for (key, part) in parts {
        match key.as_str() {
            "attributes" => {
                for (name, value) in list_entries(part, &refs) {
                    set_vector_attribute(m, target, &name, value.clone());
                }
            }
            // a struct made of a named list or of an S4 object's slots
            "struct" => struct_back(m, target, part),
            // a data frame's attributes in their order
            "order" => {
                let order = crate::mapping::objects::strings_in(Some(part), &m.refs);
                let order: Vec<&str> = order.iter().map(String::as_str).collect();
                reorder_attributes(target, &order, &m.refs);
            }
            // the vector's general-purpose bits, as R wrote them
            "gp" => {
                if let (RObject::Vector(v), Some(gp)) = (&mut *target, first_int(part)) {
                    v.flags.levels |= gp as u16;
                }
            }
            // an S4 object's levels as R had them (no S4 bit before R 2.4)
            "s4flags" => {
                if let (RObject::S4(s), Some(f)) = (&mut *target, first_int(part)) {
                    s.flags.levels = f as u16;
                }
            }
            // an S4 object whose type is a vector
            "s4" => {
                if let RObject::Vector(v) = target {
                    v.flags.levels |= levels::S4_OBJECT;
                }
            }
            // a list column's elements (an S4 object's slots), by position
            // (arrow R's row-level metadata)
            "columns" if !target.inherits(&m.refs, "data.frame") => {
                let subs: Vec<&RObject> = match part {
                    RObject::Vector(v) => match &v.data {
                        VectorData::List(l) => l.iter().collect(),
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                match target {
                    RObject::Vector(v) => {
                        if let VectorData::List(items) = &mut v.data {
                            for (item, sub) in items.iter_mut().zip(subs) {
                                if !matches!(sub, RObject::Null) {
                                    apply(m, item, sub);
                                }
                            }
                        }
                    }
                    RObject::S4(s) => {
                        if let Some(RObject::Pairlist(p)) = s.attributes.as_mut() {
                            for (cell, sub) in p.cells.iter_mut().zip(subs) {
                                if !matches!(sub, RObject::Null) {
                                    apply(m, &mut cell.car, sub);
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            // a list element without an Arrow value: itself
            "value" => *target = part.clone(),
            // a list's integer64 element that came back as integer
            "integer64" => to_integer64(m, target),
            // a raw element among others, which came back as integer
            "raw" => to_raw(target),
            // a difftime inside a list, in seconds: its own units again
            "units" => {
                if let Some(u) = crate::mapping::objects::strings_in(Some(part), &refs).first() {
                    to_units(m, target, u);
                }
            }
            // a time stored as integers inside a list
            "integer" => to_integer(target),
            // NAs with bits other than R's NA_real_
            "na" => NaBits::apply_node(target, part, &refs),
            // a factor inside a list: its codes recoded to its own levels
            "levels" => recode_factor(m, target, part),
            // a list's logical and integer elements, widened in Arrow
            "types" => {
                let codes: Vec<i32> = match part {
                    RObject::Vector(v) => match &v.data {
                        VectorData::Integer(x) => x.to_vec(),
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                if let RObject::Vector(v) = target {
                    if let VectorData::List(items) = &mut v.data {
                        for (item, code) in items.iter_mut().zip(codes) {
                            if let RObject::Vector(item) = item {
                                narrow_item(item, code as u8);
                            }
                        }
                    }
                }
            }
            // a list element that was complex: from its struct's parts
            "complex" => {
                if let Some(z) = complex_of(target, &m.refs) {
                    *target = m.vector(VectorData::Complex(z.into()), vec![]);
                }
            }
            // strings kept as R held them, put back in their rows
            "strings" => put_back_strings(m, target, part),
            // a matrix column: its rows bound into the matrix
            "matrix" => bind_matrix_rows(m, target, part),
            // a POSIXlt: its components from the times, as they were
            "posixlt" => rebuild_posixlt(m, target, part),
            "columns" => {
                let col_names: Vec<String> = match target
                    .attribute(&m.refs, "names")
                    .and_then(|n| n.as_strings())
                {
                    Some(s) => (0..s.len())
                        .map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned())
                        .collect(),
                    None => Vec::new(),
                };
                for (name, sub) in list_entries(part, &refs) {
                    if matches!(sub, RObject::Null) {
                        continue;
                    }
                    if let Some(i) = col_names.iter().position(|n| *n == name) {
                        if let RObject::Vector(v) = target {
                            if let VectorData::List(items) = &mut v.data {
                                apply(m, &mut items[i], sub);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// The first number of an integer vector.
pub(crate) fn first_int(obj: &RObject) -> Option<i32> {
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.first().copied(),
            _ => None,
        },
        _ => None,
    }
}

/// A struct made of a named list (`what` "list") or of an S4 object's
/// slots (`"S4"`), which came back as a data frame of one row whose
/// columns are lists of one element: the list of those elements (its
/// names and attributes go on next), or the S4 object with them as its
/// slots, in order (its class goes on next).
pub(crate) fn struct_back(m: &mut ObjectMaker, target: &mut RObject, what: &RObject) {
    let refs = m.refs.clone();
    if !target.inherits(&refs, "data.frame") {
        // a named list whose elements had one type: a list already
        return;
    }
    let names: Vec<String> =
        crate::mapping::objects::strings_in(target.attribute(&refs, "names"), &refs);
    let RObject::Vector(v) = target else { return };
    let VectorData::List(cols) = &mut v.data else {
        return;
    };
    let items: Vec<RObject> = std::mem::take(cols)
        .into_iter()
        .map(|c| match c {
            RObject::Vector(mut l) => match &mut l.data {
                VectorData::List(one) if one.len() == 1 => one.pop().unwrap_or(RObject::Null),
                _ => RObject::Vector(l),
            },
            other => other,
        })
        .collect();
    let s4 = what
        .as_strings()
        .is_some_and(|s| s.get(0) == Some(b"S4".as_slice()));
    *target = if s4 {
        let slots: Vec<(&str, RObject)> = names.iter().map(String::as_str).zip(items).collect();
        RObject::S4(Box::new(AttrOnly {
            flags: Flags {
                levels: levels::S4_OBJECT,
                object: true,
            },
            attributes: m.tagged_pairlist(slots),
        }))
    } else {
        m.vector(VectorData::List(items), vec![])
    };
}

/// A list element that was logical or integer (`code`) and came back as
/// a wider type: its values as they were.
pub(crate) fn narrow_item(item: &mut Vector, code: u8) {
    if !matches!(code, sxp::LGL | sxp::INT) {
        return;
    }
    let narrowed: Vec<i32> = match &item.data {
        VectorData::Real(x) => x
            .iter()
            .map(|&f| {
                if na::is_na_real(f) {
                    na::INTEGER
                } else {
                    f as i32
                }
            })
            .collect(),
        VectorData::Integer(x) | VectorData::Logical(x) => x.to_vec(),
        _ => return,
    };
    item.data = if code == sxp::LGL {
        VectorData::Logical(narrowed.into())
    } else {
        VectorData::Integer(narrowed.into())
    };
}

/// The strings of a character vector as text, for matching levels
/// (`None`: `NA`).
pub(crate) fn level_texts(obj: &RObject) -> Vec<Option<String>> {
    let Some(s) = obj.as_strings() else {
        return Vec::new();
    };
    (0..s.len())
        .map(|i| {
            (!s.is_na(i)).then(|| {
                let (_, b) = rdarrow_format::tree::encoding::to_utf8(s.bytes(i), s.levels(i), None);
                String::from_utf8_lossy(&b).into_owned()
            })
        })
        .collect()
}

/// A factor that came back with its list's dictionary as levels: its
/// codes recoded to `levels` (its own, as it had them), matched by text.
pub(crate) fn recode_factor(m: &mut ObjectMaker, target: &mut RObject, levels: &RObject) {
    let refs = m.refs.clone();
    let old = match target.attribute(&refs, "levels") {
        Some(l) => level_texts(l),
        None => return,
    };
    let new = level_texts(levels);
    if old != new {
        let mut at: std::collections::HashMap<&Option<String>, i32> = Default::default();
        for (i, l) in new.iter().enumerate() {
            at.entry(l).or_insert(i as i32 + 1);
        }
        let table: Vec<i32> = old
            .iter()
            .map(|l| at.get(l).copied().unwrap_or(na::INTEGER))
            .collect();
        let RObject::Vector(v) = target else { return };
        let VectorData::Integer(codes) = &v.data else {
            return;
        };
        let recoded: Vec<i32> = codes
            .iter()
            .map(|&c| {
                if c == na::INTEGER || c < 1 {
                    na::INTEGER
                } else {
                    table.get(c as usize - 1).copied().unwrap_or(na::INTEGER)
                }
            })
            .collect();
        v.data = VectorData::Integer(recoded.into());
    }
    set_vector_attribute(m, target, "levels", levels.clone());
}

/// An integer64 (a top-level column's, a list element's) that came back
/// as integer (its values fit): integer64 again.
pub(crate) fn to_integer64(m: &mut ObjectMaker, target: &mut RObject) {
    let RObject::Vector(v) = target else { return };
    if let VectorData::Integer(x) = &v.data {
        v.data = VectorData::Real(rdarrow_format::tree::na::integer64_of_ints(x).into());
    }
    if !target.inherits(&m.refs, "integer64") {
        set_vector_attribute(
            m,
            target,
            "class",
            rdarrow_format::tree::make::strings([Some(&b"integer64"[..])]),
        );
    }
}

/// A POSIXlt made from the timestamps of its instants: its components
/// derived in the zone of its node, those the node keeps put as they
/// were (where they still fit: the table was not filtered), and its
/// attributes.
pub(crate) fn rebuild_posixlt(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(node, &refs);
    let get = |k: &str| parts.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    let secs: Vec<f64> = match target {
        RObject::Vector(v) => match &v.data {
            VectorData::Real(x) => x.to_vec(),
            VectorData::Integer(x) => x
                .iter()
                .map(|&i| {
                    if i == na::INTEGER {
                        f64::from_bits(na::REAL_BITS)
                    } else {
                        i as f64
                    }
                })
                .collect(),
            _ => return,
        },
        _ => return,
    };
    let zone = get("zone")
        .and_then(|z| z.as_strings())
        .and_then(|s| s.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
    let attrs: Vec<(String, RObject)> = get("attributes")
        .map(|a| {
            list_entries(a, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let kept: Vec<(String, RObject)> = get("components")
        .map(|a| {
            list_entries(a, &refs)
                .into_iter()
                .map(|(n, v)| (n, v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let names: Vec<String> = attrs
        .iter()
        .find(|(n, _)| n == "names")
        .and_then(|(_, v)| v.as_strings())
        .map(|s| {
            (0..s.len())
                .map(|i| String::from_utf8_lossy(s.bytes(i)).into_owned())
                .collect()
        })
        .unwrap_or_else(|| {
            // (components without names: R's first `count`)
            let count = get("count").and_then(first_int).map_or(usize::MAX, |c| c.max(0) as usize);
            crate::mapping::posixlt::COMPONENTS
                .iter()
                .take(count)
                .map(|c| c.to_string())
                .collect()
        });
    let tz = crate::mapping::posixlt::time_zone(zone.as_deref());
    let n = secs.len();
    let items: Vec<RObject> = crate::mapping::posixlt::derive(&secs, &tz, &names)
        .into_iter()
        .map(|(name, data)| {
            match kept.iter().find(|(k, v)| {
                *k == name
                    && (rdarrow_format::read::summary::r_length(v, &refs) as usize == n
                        || (n == 0 && rdarrow_format::read::summary::r_length(v, &refs) == 0))
            }) {
                Some((_, v)) => v.clone(),
                None => RObject::Vector(Box::new(Vector {
                    flags: Flags::default(),
                    data,
                    attributes: None,
                })),
            }
        })
        .collect();
    let mut lt = RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::List(items),
        attributes: None,
    }));
    for (name, value) in attrs {
        set_vector_attribute(m, &mut lt, &name, value);
    }
    *target = lt;
}

/// A matrix column made from a fixed-size list (a list of its rows) bound
/// back into the matrix, with the dimensions in `node` (`dim`,
/// `dimnames`); the list's other attributes stay. Left alone when the rows
/// do not fit the dimensions (the table was filtered).
pub(crate) fn bind_matrix_rows(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let attrs: Vec<(String, RObject)> = list_entries(node, &refs)
        .into_iter()
        .map(|(n, v)| (n, v.clone()))
        .collect();
    let Some((_, dim)) = attrs.iter().find(|(n, _)| n == "dim") else {
        return;
    };
    let dims: Vec<usize> = match dim {
        RObject::Vector(v) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&i| i.max(0) as usize).collect(),
            VectorData::Real(x) => x.iter().map(|&f| f.max(0.0) as usize).collect(),
            _ => return,
        },
        _ => return,
    };
    let [nr, nc] = dims[..] else { return };
    let empty_type = attrs
        .iter()
        .find(|(n, _)| n == "type")
        .and_then(|(_, t)| match t {
            RObject::Vector(t) => Some(t.data.clone()),
            _ => None,
        });
    let RObject::Vector(v) = target else { return };
    let VectorData::List(rows) = &v.data else {
        return;
    };
    if rows.len() != nr {
        return;
    }
    let data = if nr == 0 || nc == 0 {
        // no values to say their type: the node says it
        match empty_type {
            Some(t) => t,
            None => VectorData::Logical(Vec::<i32>::new().into()),
        }
    } else {
        let Some(RObject::Vector(bound)) = bind_columns(rows.clone()) else {
            return;
        };
        let Some(data) = bound.data.transposed(nc, nr) else {
            return;
        };
        data
    };
    v.data = data;
    for (name, value) in attrs {
        if name != "type" {
            set_vector_attribute(m, target, &name, value);
        }
    }
}

/// Put the strings of a column's `strings` node ([`KeptStrings`]) back in
/// their rows: of a character vector, or of a factor's levels. Rows that
/// are no longer there (the table was filtered) are left alone.
pub(crate) fn put_back_strings(m: &mut ObjectMaker, target: &mut RObject, node: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(node, &refs);
    let rows: Vec<usize> = match parts.iter().find(|(k, _)| k == "rows").map(|(_, v)| v) {
        Some(RObject::Vector(v)) => match &v.data {
            VectorData::Integer(x) => x.iter().map(|&r| r.max(1) as usize - 1).collect(),
            _ => return,
        },
        _ => return,
    };
    let Some(values) = parts
        .iter()
        .find(|(k, _)| k == "values")
        .and_then(|(_, v)| v.as_strings())
    else {
        return;
    };
    if values.len() != rows.len() {
        return;
    }
    let patched = |s: &StringVector| -> StringVector {
        let mut b = StringVectorBuilder::new(s.len());
        let mut next = 0;
        for i in 0..s.len() {
            while next < rows.len() && rows[next] < i {
                next += 1;
            }
            if next < rows.len() && rows[next] == i {
                b.data().extend_from_slice(values.bytes(next));
                b.end(false, values.levels(next));
            } else {
                b.data().extend_from_slice(s.bytes(i));
                b.end(s.is_na(i), s.levels(i));
            }
        }
        b.finish()
    };
    if target.inherits(&refs, "factor") {
        let Some(levels) = target
            .attribute(&refs, "levels")
            .and_then(|l| l.as_strings())
        else {
            return;
        };
        let new = character_vector(patched(levels));
        set_vector_attribute(m, target, "levels", new);
    } else if let RObject::Vector(v) = target {
        if let VectorData::Character(s) = &v.data {
            v.data = VectorData::Character(patched(s));
        }
    }
}

/// A difftime that came back in seconds (from a duration): in units `u`
/// again (values and attribute; units R does not know, and a difftime
/// that came back as plain doubles, are left as they are).
pub(crate) fn to_units(m: &mut ObjectMaker, target: &mut RObject, u: &str) {
    let Some(mult) = crate::mapping::types::difftime_seconds(u) else {
        return;
    };
    let secs = target
        .attribute(&m.refs, "units")
        .and_then(|a| a.as_strings())
        .is_some_and(|a| a.len() == 1 && a.get(0) == Some(b"secs".as_slice()));
    if !secs {
        return;
    }
    if let RObject::Vector(cv) = target {
        if let VectorData::Real(x) = &cv.data {
            let scaled: Vec<f64> = x
                .iter()
                .map(|&f| if f.is_nan() { f } else { f / mult })
                .collect();
            cv.data = VectorData::Real(scaled.into());
        }
    }
    set_vector_attribute(m, target, "units", rdarrow_format::tree::make::strings([Some(u.as_bytes())]));
}

/// A time stored as integers that came back as doubles: integers again.
pub(crate) fn to_integer(target: &mut RObject) {
    if let RObject::Vector(cv) = target {
        if let VectorData::Real(x) = &cv.data {
            let v: Vec<i32> = x
                .iter()
                .map(|&f| if f.is_nan() { na::INTEGER } else { f as i32 })
                .collect();
            cv.data = VectorData::Integer(v.into());
        }
    }
}

/// A raw vector that came back from Arrow's `uint8` as integer: raw again.
pub(crate) fn to_raw(target: &mut RObject) {
    if let RObject::Vector(v) = target {
        if let VectorData::Integer(x) = &v.data {
            let bytes: Vec<u8> = x.iter().map(|&i| i as u8).collect();
            v.data = VectorData::Raw(arrow_buffer::Buffer::from_vec(bytes));
        }
    }
}

/// A complex vector's values from the data frame of its `re` and `im`
/// parts that Arrow's struct became (the parts' doubles as they are).
pub(crate) fn complex_of(col: &RObject, refs: &RefTable) -> Option<Vec<f64>> {
    let RObject::Vector(v) = col else { return None };
    let VectorData::List(parts) = &v.data else {
        return None;
    };
    let names = col.attribute(refs, "names")?.as_strings()?;
    let part = |n: &[u8]| {
        (0..names.len())
            .position(|i| names.get(i) == Some(n))
            .and_then(|i| match &parts[i] {
                RObject::Vector(p) => match &p.data {
                    VectorData::Real(x) => Some(x.clone()),
                    _ => None,
                },
                _ => None,
            })
    };
    let (re, im) = (part(b"re")?, part(b"im")?);
    Some(
        re.iter()
            .zip(im.iter())
            .flat_map(|(&r, &i)| [r, i])
            .collect(),
    )
}

/// Matrix columns (vectors of one type) bound into one vector, column
/// after column; None when their types differ.
pub(crate) fn bind_columns(cols: Vec<RObject>) -> Option<RObject> {
    let datas: Vec<VectorData> = cols
        .into_iter()
        .map(|c| match c {
            RObject::Vector(v) => Some(v.data),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let Some(first) = datas.first() else {
        // a matrix without columns: its type is lost with them
        return Some(RObject::Vector(Box::new(Vector {
            flags: Flags::default(),
            data: VectorData::Logical(Vec::<i32>::new().into()),
            attributes: None,
        })));
    };
    let t = first.sxptype();
    if datas.iter().any(|d| d.sxptype() != t) {
        return None;
    }
    macro_rules! cat {
        ($var:ident) => {{
            let mut all = Vec::new();
            for d in &datas {
                if let VectorData::$var(x) = d {
                    all.extend_from_slice(&x[..]);
                }
            }
            VectorData::$var(all.into())
        }};
    }
    let data = match first {
        VectorData::Logical(_) => cat!(Logical),
        VectorData::Integer(_) => cat!(Integer),
        VectorData::Real(_) => cat!(Real),
        VectorData::Complex(_) => cat!(Complex),
        VectorData::Raw(_) => {
            let mut all = Vec::new();
            for d in &datas {
                if let VectorData::Raw(x) = d {
                    all.extend_from_slice(x.as_slice());
                }
            }
            VectorData::Raw(arrow_buffer::Buffer::from_vec(all))
        }
        VectorData::Character(_) => {
            // each string keeps its encoding (strings put back from the
            // metadata keep theirs)
            let total = datas.iter().map(|d| d.len() as usize).sum();
            let mut b = StringVectorBuilder::new(total);
            for d in &datas {
                if let VectorData::Character(s) = d {
                    for i in 0..s.len() {
                        b.data().extend_from_slice(s.bytes(i));
                        b.end(s.is_na(i), s.levels(i));
                    }
                }
            }
            VectorData::Character(b.finish())
        }
        VectorData::List(_) => {
            let mut all = Vec::new();
            for d in datas {
                if let VectorData::List(x) = d {
                    all.extend(x);
                }
            }
            VectorData::List(all)
        }
        _ => return None,
    };
    Some(RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data,
        attributes: None,
    })))
}

