//! The `"r"` schema metadata of arrow R: an ASCII serialization of
//! `list(attributes = <top-level attributes>, columns = list(<col> = NULL |
//! list(attributes = ..., columns = ...)))`, holding every attribute the
//! Arrow types themselves do not carry, so that arrow R's
//! `as.data.frame()` (and rdarrow's way back) restore them.

use crate::error::Result;
use crate::input::Format;
use crate::header::{Container, StreamHeader};
use crate::tree::*;
use crate::Document;
use crate::build::ObjectMaker;

/// The attributes arrow R keeps for `obj` (name, value), in order.
fn kept_attributes<'a>(obj: &'a RObject, refs: &'a RefTable) -> Vec<(String, &'a RObject)> {
    let classes = obj.class_attr(refs);
    let has = |c: &str| classes.iter().any(|x| x == c);
    let removed: &[&str] = if classes == ["tbl_df", "tbl", "data.frame"] {
        &["class", "row.names", "names"]
    } else if has("data.frame") {
        &["row.names", "names"]
    } else if has("factor") {
        &["class", "levels"]
    } else if has("integer64") || has("Date") {
        &["class"]
    } else if has("difftime") {
        &["class", "units"]
    } else if has("POSIXct") {
        &["class", "tzone"]
    } else {
        &[]
    };
    let attrs = match obj.attributes() {
        Some(a) => pairlist_entries(a, refs),
        None => Vec::new(),
    };
    attrs
        .into_iter()
        .filter_map(|(n, v)| {
            let n = String::from_utf8_lossy(n?).into_owned();
            if removed.contains(&n.as_str()) || n == ".internal.selfref" {
                return None;
            }
            if n == "class" && classes == ["data.frame"] {
                return None;
            }
            if n == "row.names" && has("data.frame") {
                return None;
            }
            Some((n, v))
        })
        .collect()
}

/// Character row names are data: kept (arrow R restores them from here).
fn character_row_names<'a>(obj: &'a RObject, refs: &RefTable) -> Option<&'a RObject> {
    obj.attribute(refs, "row.names").filter(|r| r.as_strings().is_some())
}

/// `arrow_attributes(x)`: None when there is nothing to keep.
fn column_metadata(m: &mut ObjectMaker, obj: &RObject, refs: &RefTable) -> Option<RObject> {
    let mut kept = kept_attributes(obj, refs);
    let is_df = obj.inherits(refs, "data.frame");
    if is_df {
        if let Some(rn) = character_row_names(obj, refs) {
            kept.push(("row.names".into(), rn));
        }
    }
    let columns = if is_df {
        let names = match obj.attribute(refs, "names").and_then(|n| n.as_strings()) {
            Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned()).collect(),
            None => Vec::new(),
        };
        let items: Vec<&RObject> = match obj {
            RObject::Vector(v) => match &v.data {
                VectorData::List(l) => l.iter().collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let cols: Vec<Option<RObject>> = items.iter().map(|c| column_metadata(m, c, refs)).collect();
        if kept.is_empty() && cols.iter().all(|c| c.is_none()) {
            return None;
        }
        let names_ref: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let vals = cols.into_iter().map(|c| c.unwrap_or(RObject::Null)).collect();
        m.named_list(&names_ref, vals)
    } else {
        if kept.is_empty() {
            return None;
        }
        RObject::Null
    };
    let names: Vec<&str> = kept.iter().map(|(n, _)| n.as_str()).collect();
    let vals = kept.iter().map(|(_, v)| (*v).clone()).collect();
    let attributes = m.named_list(&names, vals);
    Some(m.named_list(&["attributes", "columns"], vec![attributes, columns]))
}

/// The `"r"` metadata for a table made from `df` (a data frame, or `None`
/// for a table made from a vector or matrix) with these columns.
pub fn r_metadata(doc: &Document, df: Option<&RObject>, names: &[&str], cols: &[&RObject]) -> Result<Option<String>> {
    let refs = &doc.refs;
    let mut m = ObjectMaker::with_refs(refs.clone());
    let top: Vec<(String, &RObject)> = match df {
        Some(d) => {
            let mut k = kept_attributes(d, refs);
            if let Some(rn) = character_row_names(d, refs) {
                k.push(("row.names".into(), rn));
            }
            k
        }
        None => Vec::new(),
    };
    let col_md: Vec<Option<RObject>> = cols.iter().map(|c| column_metadata(&mut m, c, refs)).collect();
    if top.is_empty() && col_md.iter().all(|c| c.is_none()) {
        return Ok(None);
    }
    let top_names: Vec<&str> = top.iter().map(|(n, _)| n.as_str()).collect();
    let top_vals = top.iter().map(|(_, v)| (*v).clone()).collect();
    let attributes = m.named_list(&top_names, top_vals);
    let columns = m.named_list(names, col_md.into_iter().map(|c| c.unwrap_or(RObject::Null)).collect());
    let root = m.named_list(&["attributes", "columns"], vec![attributes, columns]);
    let header = StreamHeader::utf8_v3(Format::Ascii);
    let bytes = crate::write::write_stream(Vec::new(), Container::Stream, &header, &root, &m.refs)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The elements of a named list as (name, value).
fn list_entries<'a>(obj: &'a RObject, refs: &RefTable) -> Vec<(String, &'a RObject)> {
    let names = match obj.attribute(refs, "names").and_then(|n| n.as_strings()) {
        Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned()).collect(),
        None => Vec::new(),
    };
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => items.iter().enumerate().map(|(i, it)| (names.get(i).cloned().unwrap_or_default(), it)).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Set an attribute on a vector node (setting `class` sets the object bit).
pub(crate) fn set_vector_attribute(m: &mut ObjectMaker, target: &mut RObject, name: &str, value: RObject) {
    let tag = m.symbol(name);
    let (attrs, flags) = match target {
        RObject::Vector(v) => (&mut v.attributes, &mut v.flags),
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

fn apply(m: &mut ObjectMaker, target: &mut RObject, md: &RObject) {
    let refs = m.refs.clone();
    let parts = list_entries(md, &refs);
    for (key, part) in parts {
        match key.as_str() {
            "attributes" => {
                for (name, value) in list_entries(part, &refs) {
                    set_vector_attribute(m, target, &name, value.clone());
                }
            }
            "columns" => {
                let col_names: Vec<String> = match target.attribute(&m.refs, "names").and_then(|n| n.as_strings()) {
                    Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned()).collect(),
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

/// Apply arrow R's `"r"` metadata to a data frame made from Arrow data:
/// `attributes(x)[names(a)] <- a` at each level.
pub fn apply_r_metadata(m: &mut ObjectMaker, mut frame: RObject, md: &str) -> Result<RObject> {
    let mut doc = crate::read_bytes(md.as_bytes().to_vec(), &crate::ReadOptions::default())
        .map_err(|e| crate::Error::corrupt(format!("the \"r\" schema metadata is not a valid R serialization: {e}")))?;
    // arrow R gzips large metadata: serialize(memCompress(x, "gzip"))
    if let RObject::Vector(v) = &doc.root {
        if let VectorData::Raw(b) = &v.data {
            let inner = crate::compression::inflate_zlib_or_gzip(b)?;
            doc = crate::read_bytes(inner, &crate::ReadOptions::default())?;
        }
    }
    let base = m.refs.append(std::mem::take(&mut doc.refs));
    let mut root = doc.root;
    root.for_each_ref_mut(&mut |id| id.0 += base);
    apply(m, &mut frame, &root);
    Ok(frame)
}

/// The schema metadata key for what arrow R's `"r"` metadata cannot hold
/// without changing what arrow R shows: one fact per line,
/// `tzone-missing\t<col>`, `tzone-empty\t<col>`, `units\t<col>\t<unit>`
/// (difftime not in seconds), `integer64\t<col>`, `date-integer\t<col>`.
pub const FIDELITY_KEY: &str = "rdarrow";

/// The facts to record for top-level columns (empty when none).
pub fn fidelity_notes(refs: &RefTable, frame: Option<&RObject>, names: &[&str], cols: &[&RObject]) -> String {
    let mut out = String::new();
    // a tibble's class is implied for arrow R (its tables become tibbles)
    if let Some(f) = frame {
        let classes = f.class_attr(refs);
        if classes == ["tbl_df", "tbl", "data.frame"] {
            out.push_str("frame-class\ttbl_df\ttbl\tdata.frame\n");
        }
    }
    for (name, obj) in names.iter().zip(cols) {
        let classes = obj.class_attr(refs);
        let has = |c: &str| classes.iter().any(|x| x == c);
        let attr_str = |n: &str| obj.attribute(refs, n).and_then(|a| a.as_strings()).map(|s| String::from_utf8_lossy(s.get(0).unwrap_or(b"")).into_owned());
        if has("POSIXct") {
            match attr_str("tzone") {
                None => out.push_str(&format!("tzone-missing\t{name}\n")),
                Some(t) if t.is_empty() => out.push_str(&format!("tzone-empty\t{name}\n")),
                _ => {}
            }
        }
        if has("difftime") && !has("hms") {
            if let Some(u) = attr_str("units").filter(|u| u != "secs") {
                out.push_str(&format!("units\t{name}\t{u}\n"));
            }
        }
        if has("integer64") {
            out.push_str(&format!("integer64\t{name}\n"));
        }
        if has("Date") && obj.sxptype(refs) == sxp::INT {
            out.push_str(&format!("date-integer\t{name}\n"));
        }
    }
    out
}

/// Apply the facts of [`FIDELITY_KEY`] to a data frame made from Arrow.
pub fn apply_fidelity_notes(m: &mut ObjectMaker, frame: &mut RObject, notes: &str) {
    let names: Vec<String> = match frame.attribute(&m.refs, "names").and_then(|n| n.as_strings()) {
        Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned()).collect(),
        None => return,
    };
    for line in notes.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        if parts[0] == "frame-class" && parts.len() > 1 {
            let class = crate::build::strings(parts[1..].iter().map(|s| Some(s.as_bytes())));
            set_vector_attribute(m, frame, "class", class);
            continue;
        }
        let Some(i) = parts.get(1).and_then(|n| names.iter().position(|x| x == n)) else { continue };
        let RObject::Vector(v) = frame else { return };
        let VectorData::List(items) = &mut v.data else { return };
        let col = &mut items[i];
        match parts[0] {
            "tzone-missing" => set_vector_attribute(m, col, "tzone", RObject::Null),
            "tzone-empty" => set_vector_attribute(m, col, "tzone", crate::build::strings([Some(&b""[..])])),
            "units" => {
                let Some(u) = parts.get(2) else { continue };
                let Some(mult) = super::types::difftime_seconds(u) else { continue };
                if let RObject::Vector(cv) = col {
                    if let VectorData::Real(x) = &cv.data {
                        let scaled: Vec<f64> = x.iter().map(|&f| if f.is_nan() { f } else { f / mult }).collect();
                        cv.data = VectorData::Real(scaled.into());
                    }
                }
                set_vector_attribute(m, col, "units", crate::build::strings([Some(u.as_bytes())]));
            }
            "integer64" => {
                if let RObject::Vector(cv) = col {
                    if let VectorData::Integer(x) = &cv.data {
                        let v: Vec<f64> = x.iter().map(|&i| f64::from_bits(if i == i32::MIN { i64::MIN } else { i as i64 } as u64)).collect();
                        cv.data = VectorData::Real(v.into());
                    }
                }
                set_vector_attribute(m, col, "class", crate::build::strings([Some(&b"integer64"[..])]));
            }
            "date-fractional" => {
                // a timestamp came back as POSIXct seconds: days again
                if let RObject::Vector(cv) = col {
                    if let VectorData::Real(x) = &cv.data {
                        let days: Vec<f64> = x.iter().map(|&f| if f.is_nan() { f } else { f / 86400.0 }).collect();
                        cv.data = VectorData::Real(days.into());
                    }
                }
                set_vector_attribute(m, col, "tzone", RObject::Null);
                set_vector_attribute(m, col, "class", crate::build::strings([Some(&b"Date"[..])]));
            }
            "date-integer" => {
                if let RObject::Vector(cv) = col {
                    if let VectorData::Real(x) = &cv.data {
                        let v: Vec<i32> = x.iter().map(|&f| if f.is_nan() { i32::MIN } else { f as i32 }).collect();
                        cv.data = VectorData::Integer(v.into());
                    }
                }
            }
            _ => {}
        }
    }
}
