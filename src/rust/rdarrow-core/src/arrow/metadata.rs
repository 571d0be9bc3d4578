//! The `"r"` schema metadata of arrow R: an ASCII serialization of
//! `list(attributes = <top-level attributes>, columns = list(<col> = NULL |
//! list(attributes = ..., columns = ...)))`, holding every attribute the
//! Arrow types themselves do not carry, so that arrow R's
//! `as.data.frame()` (and rdarrow's way back) restore them.

use crate::error::Result;
use crate::input::Format;
use crate::read::{Container, StreamHeader};
use crate::tree::*;
use crate::Document;
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};

/// Builds R objects that share the document's reference table.
struct Maker {
    refs: RefTable,
}

impl Maker {
    fn symbol(&mut self, name: &str) -> RObject {
        for (i, e) in self.refs.entries.iter().enumerate() {
            if let RefEntry::Symbol(c) = e {
                if c.bytes.as_deref() == Some(name.as_bytes()) {
                    return RObject::Ref(RefId(i as u32));
                }
            }
        }
        let lv = if name.is_ascii() { levels::ASCII } else { levels::UTF8 };
        RObject::Ref(self.refs.push(RefEntry::Symbol(CharItem { levels: lv, bytes: Some(name.as_bytes().to_vec()) })))
    }

    fn strings(&mut self, items: &[&str]) -> RObject {
        let mut offsets: Vec<i32> = vec![0];
        let mut data = Vec::new();
        let mut lv = Vec::new();
        for s in items {
            data.extend_from_slice(s.as_bytes());
            offsets.push(data.len() as i32);
            lv.push(if s.is_ascii() { levels::ASCII } else { levels::UTF8 });
        }
        let sv = StringVector {
            // SAFETY: non-decreasing offsets ending at data.len().
            offsets: StringOffsets::Small(unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) }),
            data: Buffer::from_vec(data),
            validity: None,
            levels: StringLevels::PerElement(lv),
        };
        RObject::Vector(Box::new(Vector { flags: Flags::default(), data: VectorData::Character(sv), attributes: None }))
    }

    /// `list(name1 = v1, ...)`.
    fn named_list(&mut self, names: &[&str], values: Vec<RObject>) -> RObject {
        let attributes = if names.is_empty() && values.is_empty() {
            None
        } else {
            let nm = self.strings(names);
            let tag = self.symbol("names");
            Some(RObject::Pairlist(Box::new(Pairlist {
                cells: vec![Cell { sxptype: sxp::LIST, flags: Flags::default(), attributes: None, tag: Some(tag), car: nm }],
                tail: RObject::Null,
            })))
        };
        RObject::Vector(Box::new(Vector { flags: Flags::default(), data: VectorData::List(values), attributes }))
    }
}

fn class_list(obj: &RObject, refs: &RefTable) -> Vec<String> {
    match obj.attribute(refs, "class").and_then(|c| c.as_strings()) {
        Some(s) => (0..s.len()).map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned()).collect(),
        None => Vec::new(),
    }
}

/// The attributes arrow R keeps for `obj` (name, value), in order.
fn kept_attributes<'a>(obj: &'a RObject, refs: &'a RefTable) -> Vec<(String, &'a RObject)> {
    let classes = class_list(obj, refs);
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
fn column_metadata(m: &mut Maker, obj: &RObject, refs: &RefTable) -> Option<RObject> {
    let mut kept = kept_attributes(obj, refs);
    let is_df = class_list(obj, refs).iter().any(|c| c == "data.frame");
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
    let mut m = Maker { refs: refs.clone() };
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
    let header = StreamHeader {
        format: Format::Ascii,
        crlf: false,
        leading_newline: false,
        version: 3,
        writer_version: 0x0004_0202,
        min_reader_version: 0x0003_0500,
        native_encoding: Some(b"UTF-8".to_vec()),
        ascii_hex: false,
    };
    let bytes = crate::write::write_stream(Vec::new(), Container::Stream, &header, &root, &m.refs)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
