//! R's hashed environments: the hash table R builds when it binds names
//! in an environment made by `new.env(hash = TRUE)` (`defineVar()` in R's
//! `envir.c`), so that an environment rdarrow makes (a lazy-load data
//! base's, as `lazyLoad()` makes it) is laid out, and serialized, as R's
//! own.
//!
//! R's rules, each reproduced here:
//! - a name's slot is `R_Newhashpjw(name) % size`, the hash over the
//!   name's bytes as C `char`s (signed on the platforms R is built for
//!   here: a byte above 0x7F counts as negative);
//! - a new binding goes first in its slot's chain; binding a name again
//!   replaces its value in place;
//! - R counts one more used slot for every new binding (its `R_HashSet`
//!   counts after walking the chain to its end), and when that count
//!   exceeds 0.85 of the size the table grows to `(int)(size * 1.2)`:
//!   every chain, slot by slot and in chain order, moved to the front of
//!   its new slot, the count then the slots really in use.

use crate::tree::{Cell, Flags, Pairlist, RObject, RefEntry, RefTable, Vector, VectorData};

/// The size of the table `new.env()` and `lazyLoad()` make (R's
/// `HASHMINSIZE`, and `lazyLoad()`'s `new.env(TRUE, baseenv(), 29L)`).
pub const HASH_MIN_SIZE: usize = 29;

/// R's `R_Newhashpjw()`: the P. J. Weinberger hash of a name's bytes, as
/// signed C `char`s.
pub fn hashpjw(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &b in name {
        h = (h << 4).wrapping_add(b as i8 as i32 as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
            h ^= g;
        }
    }
    h
}

/// The hash table (a list of tagged pairlists, one per slot) that R
/// holds after binding `bindings` (cells tagged with symbols of `refs`),
/// in this order, into an empty hashed environment of `size` slots.
/// Cells whose tag is not a symbol are left out.
pub fn hash_table(bindings: Vec<Cell>, size: usize, refs: &RefTable) -> RObject {
    let name = |c: &Cell| -> Option<Vec<u8>> {
        match c.tag.as_ref()? {
            RObject::Ref(id) => match refs.get(*id)? {
                // the name as R installs it in a UTF-8 session
                RefEntry::Symbol(s) => Some(
                    crate::tree::encoding::to_utf8(
                        s.bytes.as_deref().unwrap_or_default(),
                        s.levels,
                        None,
                    )
                    .1
                    .into_owned(),
                ),
                _ => None,
            },
            _ => None,
        }
    };
    let mut size = size.max(1);
    // each slot's chain, first cell first, with the cell's name
    let mut slots: Vec<Vec<(Vec<u8>, Cell)>> = vec![Vec::new(); size];
    let mut used = 0usize;
    for cell in bindings {
        let Some(nm) = name(&cell) else { continue };
        let slot = &mut slots[hashpjw(&nm) as usize % size];
        if let Some(old) = slot.iter_mut().find(|(n, _)| *n == nm) {
            old.1.car = cell.car;
            continue;
        }
        slot.insert(0, (nm, cell));
        used += 1;
        if used as f64 > size as f64 * 0.85 {
            let grown = (size as f64 * 1.2) as usize;
            let mut next: Vec<Vec<(Vec<u8>, Cell)>> = vec![Vec::new(); grown];
            for chain in slots {
                for (nm, c) in chain {
                    next[hashpjw(&nm) as usize % grown].insert(0, (nm, c));
                }
            }
            slots = next;
            size = grown;
            used = slots.iter().filter(|s| !s.is_empty()).count();
        }
    }
    let chains = slots
        .into_iter()
        .map(|chain| {
            if chain.is_empty() {
                RObject::Null
            } else {
                RObject::Pairlist(Box::new(Pairlist {
                    cells: chain.into_iter().map(|(_, c)| c).collect(),
                    tail: RObject::Null,
                }))
            }
        })
        .collect();
    RObject::Vector(Box::new(Vector {
        flags: Flags::default(),
        data: VectorData::List(chains),
        attributes: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_is_r_newhashpjw() {
        // values of R_Newhashpjw() computed by hand from R's C code
        assert_eq!(hashpjw(b""), 0);
        assert_eq!(hashpjw(b"a"), 97);
        assert_eq!(hashpjw(b"ab"), 97 * 16 + 98);
        // long names fold the high nibble back in
        let long = hashpjw(b"abcdefghij");
        assert!(long < 0x1000_0000);
        // bytes above 0x7F are signed chars: "caf" then 0xC3 0xA9 as -61, -87
        assert_eq!(
            hashpjw("caf\u{e9}".as_bytes()),
            ((26998 * 16) - 61) * 16 - 87
        );
    }
}
