//! Strings kept in the metadata as R holds them: bytes and text that is
//! not valid UTF-8 (the `strings` element of a column's node).

use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;

/// A character vector node of `s`, without attributes.
pub(crate) fn character_vector(s: StringVector) -> RObject {
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::Character(s),
        attributes: None,
    }))
}

/// Strings of a column kept in the metadata as R holds them (bytes and
/// encoding), to be put back on the way back
/// ([`rdarrow_format::tree::encoding::unfaithful_strings`]): the column's node in the
/// `"r"` metadata gets `strings = list(rows = <1-based>, values = <the
/// strings>)`, which arrow R ignores.
#[derive(Debug, Clone)]
pub struct KeptStrings {
    pub found: rdarrow_format::tree::encoding::Unfaithful,
    values: RObject,
}

impl KeptStrings {
    /// Those of `s` (of a stream of native encoding `native`); rows
    /// counted from `first_row` (a part of a column read by row range).
    pub fn of(s: &StringVector, native: Option<&[u8]>, first_row: usize) -> Option<KeptStrings> {
        let mut found = rdarrow_format::tree::encoding::unfaithful_strings(s, native)?;
        let mut b = StringVectorBuilder::new(found.rows.len());
        for &i in &found.rows {
            b.data().extend_from_slice(s.bytes(i));
            b.end(false, s.levels(i));
        }
        for r in &mut found.rows {
            *r += first_row;
        }
        if let Some(f) = found.first_repaired.as_mut() {
            *f += first_row;
        }
        Some(KeptStrings {
            found,
            values: character_vector(b.finish()),
        })
    }

    /// The strings of a character vector, or of a factor's levels (an
    /// ALTREP vector expanded), that need keeping.
    pub(crate) fn of_object(
        obj: &RObject,
        refs: &RefTable,
        native: Option<&[u8]>,
    ) -> Option<KeptStrings> {
        let target = if obj.inherits(refs, "factor") {
            obj.attribute(refs, "levels")?
        } else {
            obj
        };
        match target {
            RObject::Vector(v) => match &v.data {
                VectorData::Character(s) => KeptStrings::of(s, native, 0),
                _ => None,
            },
            RObject::Altrep(a) => match rdarrow_format::tree::altrep::expand(a, refs).ok()? {
                VectorData::Character(s) => KeptStrings::of(&s, native, 0),
                _ => None,
            },
            _ => None,
        }
    }

    /// Join those of the parts of a column read by row range.
    pub fn join(parts: Vec<KeptStrings>) -> Option<KeptStrings> {
        if parts.len() <= 1 {
            return parts.into_iter().next();
        }
        let mut found = rdarrow_format::tree::encoding::Unfaithful::default();
        let total: usize = parts.iter().map(|p| p.found.rows.len()).sum();
        let mut b = StringVectorBuilder::new(total);
        for p in &parts {
            found.rows.extend_from_slice(&p.found.rows);
            found.repaired += p.found.repaired;
            if found.first_repaired.is_none() {
                found.first_repaired = p.found.first_repaired;
            }
            if let Some(s) = p.values.as_strings() {
                for i in 0..s.len() {
                    b.data().extend_from_slice(s.bytes(i));
                    b.end(false, s.levels(i));
                }
            }
        }
        Some(KeptStrings {
            found,
            values: character_vector(b.finish()),
        })
    }

    pub(crate) fn r_node(&self, m: &mut ObjectMaker) -> RObject {
        let rows: Vec<i32> = self.found.rows.iter().map(|&r| (r + 1) as i32).collect();
        m.named_list(
            &["rows", "values"],
            vec![rdarrow_format::tree::make::ints(rows), self.values.clone()],
        )
    }
}
