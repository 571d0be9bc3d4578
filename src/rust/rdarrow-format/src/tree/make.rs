//! Constructors for R object trees made in Rust (Arrow data, metadata),
//! sharing one reference table for their symbols.

use crate::tree::*;
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use std::collections::HashMap;

/// Makes R objects; symbols are interned in `refs`.
#[derive(Debug, Default)]
pub struct ObjectMaker {
    /// The reference table the objects' symbols live in.
    pub refs: RefTable,
    symbols: HashMap<String, RefId>,
}

/// `NA_real_`.
pub fn na_real() -> f64 {
    crate::tree::na::real()
}

impl ObjectMaker {
    /// A maker whose table starts as a copy of `refs` (so objects taken
    /// from a parsed document keep their references).
    pub fn with_refs(refs: RefTable) -> Self {
        let mut symbols = HashMap::new();
        for (i, e) in refs.entries.iter().enumerate() {
            if let RefEntry::Symbol(CharItem { bytes: Some(b), .. }) = e {
                symbols
                    .entry(String::from_utf8_lossy(b).into_owned())
                    .or_insert(RefId(i as u32));
            }
        }
        ObjectMaker { refs, symbols }
    }

    /// The symbol `name`, interned in the table.
    pub fn symbol(&mut self, name: &str) -> RObject {
        if let Some(id) = self.symbols.get(name) {
            return RObject::Ref(*id);
        }
        let lv = if name.is_ascii() {
            levels::ASCII
        } else {
            levels::UTF8
        };
        let id = self.refs.push(RefEntry::Symbol(CharItem {
            levels: lv,
            bytes: Some(name.as_bytes().to_vec()),
        }));
        self.symbols.insert(name.to_string(), id);
        RObject::Ref(id)
    }

    /// A pairlist of tagged values (an attribute list).
    pub fn tagged_pairlist(&mut self, items: Vec<(&str, RObject)>) -> Option<RObject> {
        if items.is_empty() {
            return None;
        }
        let cells = items
            .into_iter()
            .map(|(n, v)| Cell {
                sxptype: sxp::LIST,
                flags: Flags::default(),
                attributes: None,
                tag: Some(self.symbol(n)),
                car: v,
            })
            .collect();
        Some(RObject::Pairlist(Box::new(Pairlist {
            cells,
            tail: RObject::Null,
        })))
    }

    /// A vector with these attributes; the object bit is set when there is
    /// a class, as R does.
    pub fn vector(&mut self, data: VectorData, attrs: Vec<(&str, RObject)>) -> RObject {
        let object = attrs.iter().any(|(n, _)| *n == "class");
        let attributes = self.tagged_pairlist(attrs);
        RObject::Vector(Box::new(Vector {
            flags: Flags { levels: 0, object },
            data,
            attributes,
        }))
    }

    /// `list(name1 = v1, ...)`.
    pub fn named_list(&mut self, names: &[&str], values: Vec<RObject>) -> RObject {
        if names.is_empty() && values.is_empty() {
            return self.vector(VectorData::List(values), vec![]);
        }
        let nm = strings(names.iter().map(|s| Some(s.as_bytes())));
        self.vector(VectorData::List(values), vec![("names", nm)])
    }
}

/// A character vector from UTF-8 strings (None = NA), flagged as R flags
/// them: ASCII or UTF-8.
pub fn strings<'a>(items: impl IntoIterator<Item = Option<&'a [u8]>>) -> RObject {
    let mut offsets: Vec<i64> = vec![0];
    let mut data = Vec::new();
    let mut valid = Vec::new();
    for s in items {
        if let Some(b) = s {
            data.extend_from_slice(b);
        }
        valid.push(s.is_some());
        offsets.push(data.len() as i64);
    }
    let offsets = if data.len() <= i32::MAX as usize {
        // SAFETY: non-decreasing offsets ending at data.len().
        StringOffsets::Small(unsafe {
            OffsetBuffer::new_unchecked(ScalarBuffer::from(
                offsets.iter().map(|&o| o as i32).collect::<Vec<_>>(),
            ))
        })
    } else {
        StringOffsets::Large(unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) })
    };
    strings_over(
        offsets,
        Buffer::from_vec(data),
        Some(NullBuffer::from(valid)),
    )
}

/// A character vector over UTF-8 strings already laid out as Arrow lays
/// them out (`offsets` starting at 0 into `data`, `validity`): the buffers
/// are shared, not copied; each string's levels are R's (ASCII or UTF-8;
/// 0 for NA). [`strings`] lays its strings out and ends here.
pub fn strings_over(offsets: StringOffsets, data: Buffer, validity: Option<NullBuffer>) -> RObject {
    let validity = validity.filter(|v| v.null_count() > 0);
    let mut s = StringVector {
        offsets,
        data,
        validity,
        levels: StringLevels::Uniform(levels::ASCII),
    };
    // (every string ASCII, none NA: the levels without a pass over them)
    if s.validity.is_some() || s.is_empty() || !s.data.is_ascii() {
        let lv: Vec<u16> = (0..s.len())
            .map(|i| match s.get(i) {
                None => 0,
                Some(b) if b.is_ascii() => levels::ASCII,
                Some(_) => levels::UTF8,
            })
            .collect();
        s.levels = match lv.first() {
            Some(&f) if lv.iter().all(|&l| l == f) => StringLevels::Uniform(f),
            None => StringLevels::Uniform(0),
            _ => StringLevels::PerElement(lv.into()),
        };
    }
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Character(s),
        attributes: None,
    }))
}

/// An integer vector.
pub fn ints(v: Vec<i32>) -> RObject {
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Integer(ScalarBuffer::from(v)),
        attributes: None,
    }))
}

/// A double vector.
pub fn reals(v: Vec<f64>) -> RObject {
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Real(ScalarBuffer::from(v)),
        attributes: None,
    }))
}
