//! The Matrix package's sparse matrices (`dgCMatrix`, `dgRMatrix`,
//! `dgTMatrix`, their logical, pattern, integer, symmetric and triangular
//! kin: any `*CMatrix`, `*RMatrix` or `*TMatrix` of package Matrix) as the
//! table of their stored entries, and back.
//!
//! The table has one row per stored entry: `i` and `j`, its row and column
//! counted from 1 as R counts (as `Matrix::summary()` shows them), and `x`,
//! its value (none for a pattern matrix), in the order the matrix stores
//! them (by column for `C`, by row for `R`, as stored for `T`). Memory is
//! proportional to the entries: nothing is densified. Every other slot
//! (`Dim`, `Dimnames`, `uplo`, `diag`, `factors`, the class) travels in the
//! `"r"` metadata, so that the way back ([`rebuild`]) gives the same
//! matrix, `identical()`.

use crate::error::{Error, Result};
use crate::tree::*;

/// How a sparse matrix stores its entries: the letter of its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Compressed by column: `i`, `p` (`*CMatrix`).
    Column,
    /// Compressed by row: `j`, `p` (`*RMatrix`).
    Row,
    /// Triplets: `i`, `j` (`*TMatrix`).
    Triplet,
}

impl Storage {
    pub fn letter(self) -> &'static str {
        match self {
            Storage::Column => "C",
            Storage::Row => "R",
            Storage::Triplet => "T",
        }
    }

    pub fn from_letter(s: &[u8]) -> Option<Storage> {
        Some(match s {
            b"C" => Storage::Column,
            b"R" => Storage::Row,
            b"T" => Storage::Triplet,
            _ => return None,
        })
    }

    /// The slots that hold the entries (the table's, not the metadata's).
    fn entry_slots(self) -> &'static [&'static str] {
        match self {
            Storage::Column => &["i", "p", "x"],
            Storage::Row => &["j", "p", "x"],
            Storage::Triplet => &["i", "j", "x"],
        }
    }
}

/// The slots of an S4 object (its attributes), in order.
fn slots<'a>(obj: &'a RObject, refs: &'a RefTable) -> Vec<(String, &'a RObject)> {
    match obj {
        RObject::S4(s) => match &s.attributes {
            Some(a) => pairlist_entries(a, refs)
                .into_iter()
                .filter_map(|(n, v)| Some((String::from_utf8_lossy(n?).into_owned(), v)))
                .collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The storage of a sparse matrix of the Matrix package, from its class.
pub fn storage_of(obj: &RObject, refs: &RefTable) -> Option<Storage> {
    let RObject::S4(_) = obj else { return None };
    let class = obj.attribute(refs, "class")?;
    let package = class
        .attribute(refs, "package")
        .and_then(|p| p.as_strings())
        .and_then(|s| s.get(0).map(|b| b.to_vec()));
    if package.as_deref() != Some(b"Matrix") {
        return None;
    }
    let name = class.as_strings()?.get(0)?.to_vec();
    let name = std::str::from_utf8(&name).ok()?;
    let storage = if name.ends_with("CMatrix") {
        Storage::Column
    } else if name.ends_with("RMatrix") {
        Storage::Row
    } else if name.ends_with("TMatrix") {
        Storage::Triplet
    } else {
        return None;
    };
    // the slots of that storage, and the dimensions
    let have: Vec<String> = slots(obj, refs).into_iter().map(|(n, _)| n).collect();
    let needs = storage.entry_slots()[..2].iter().chain(["Dim"].iter());
    needs
        .into_iter()
        .all(|s| have.iter().any(|h| h == s))
        .then_some(storage)
}

/// What a sparse matrix becomes: its table's columns and the slots kept
/// in the metadata (the entry slots as `NULL`, in their places).
pub struct Parts {
    pub storage: Storage,
    pub names: Vec<String>,
    pub columns: Vec<RObject>,
    pub rows: usize,
    pub slots: Vec<(String, RObject)>,
}

fn ints<'a>(slot: Option<&'a RObject>, what: &str) -> Result<&'a [i32]> {
    match slot {
        Some(RObject::Vector(v)) => match &v.data {
            VectorData::Integer(x) => Ok(&x[..]),
            _ => Err(Error::corrupt(format!(
                "the sparse matrix's {what} slot is not integers"
            ))),
        },
        _ => Err(Error::corrupt(format!(
            "the sparse matrix has no {what} slot"
        ))),
    }
}

/// Row or column numbers from 1, from the compressed pointers `p` (one
/// more than the `n` columns or rows) of `len` entries.
fn expand_pointers(p: &[i32], n: usize, len: usize) -> Result<Vec<i32>> {
    let bad = || Error::corrupt("the sparse matrix's p slot does not fit its entries");
    if p.len() != n + 1 || p[0] != 0 || p[n] as usize != len {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(len);
    for k in 0..n {
        let (a, b) = (p[k], p[k + 1]);
        if b < a {
            return Err(bad());
        }
        out.extend(std::iter::repeat_n(k as i32 + 1, (b - a) as usize));
    }
    Ok(out)
}

/// The table of a sparse matrix's stored entries.
pub fn parts(obj: &RObject, refs: &RefTable) -> Result<Option<Parts>> {
    let Some(storage) = storage_of(obj, refs) else {
        return Ok(None);
    };
    let all = slots(obj, refs);
    let get = |n: &str| all.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    let dim = ints(get("Dim"), "Dim")?;
    let [nr, nc] = dim[..] else {
        return Err(Error::corrupt(
            "the sparse matrix's Dim slot is not two numbers",
        ));
    };
    if nr < 0 || nc < 0 {
        return Err(Error::corrupt("the sparse matrix's Dim slot is negative"));
    }
    let one_based = |x: &[i32], limit: i32, what: &str| -> Result<Vec<i32>> {
        x.iter()
            .map(|&v| {
                if v < 0 || v >= limit {
                    Err(Error::corrupt(format!(
                        "the sparse matrix's {what} slot has {v}, outside 0..{limit}"
                    )))
                } else {
                    Ok(v + 1)
                }
            })
            .collect()
    };
    let (i, j) = match storage {
        Storage::Column => {
            let i = ints(get("i"), "i")?;
            let j = expand_pointers(ints(get("p"), "p")?, nc as usize, i.len())?;
            (one_based(i, nr, "i")?, j)
        }
        Storage::Row => {
            let j = ints(get("j"), "j")?;
            let i = expand_pointers(ints(get("p"), "p")?, nr as usize, j.len())?;
            (i, one_based(j, nc, "j")?)
        }
        Storage::Triplet => {
            let (i, j) = (ints(get("i"), "i")?, ints(get("j"), "j")?);
            if i.len() != j.len() {
                return Err(Error::corrupt(
                    "the sparse matrix's i and j slots differ in length",
                ));
            }
            (one_based(i, nr, "i")?, one_based(j, nc, "j")?)
        }
    };
    let rows = i.len();
    let mut names = vec!["i".to_string(), "j".to_string()];
    let mut columns = vec![crate::build::ints(i), crate::build::ints(j)];
    if let Some(x) = get("x") {
        if crate::summary::r_length(x, refs) as usize != rows {
            return Err(Error::corrupt(
                "the sparse matrix's x slot does not fit its entries",
            ));
        }
        names.push("x".into());
        columns.push(x.clone());
    }
    let entry = storage.entry_slots();
    let kept = all
        .iter()
        .map(|(n, v)| {
            let v = if entry.contains(&n.as_str()) {
                RObject::Null
            } else {
                (*v).clone()
            };
            (n.clone(), v)
        })
        .collect();
    Ok(Some(Parts {
        storage,
        names,
        columns,
        rows,
        slots: kept,
    }))
}

/// Compressed pointers (one more than `n`) from 1-based row or column
/// numbers in order.
fn compress(k: &[i32], n: usize, what: &str) -> Result<Vec<i32>> {
    let mut p = vec![0i32; n + 1];
    let mut last = 0;
    for &v in k {
        if v < 1 || v as usize > n || v < last {
            return Err(Error::usage(format!(
                "the table's {what} values are no longer the sparse matrix's (out of range or order): the table was changed"
            )));
        }
        last = v;
        p[v as usize] += 1;
    }
    for t in 0..n {
        p[t + 1] += p[t];
    }
    Ok(p)
}

/// The sparse matrix again from its table's columns (`i`, `j`, maybe
/// `x`, as R values) and the slots of the metadata.
pub fn rebuild(
    m: &mut crate::build::ObjectMaker,
    storage: Storage,
    columns: &[(String, RObject)],
    slots: Vec<(String, RObject)>,
) -> Result<RObject> {
    let col = |n: &str| columns.iter().find(|(k, _)| k == n).map(|(_, v)| v);
    let int_col = |n: &str| -> Result<Vec<i32>> {
        match col(n) {
            Some(RObject::Vector(v)) => match &v.data {
                VectorData::Integer(x) => Ok(x.to_vec()),
                VectorData::Real(x) => Ok(x.iter().map(|&f| f as i32).collect()),
                _ => Err(Error::usage(format!(
                    "the table's column '{n}' is not integers"
                ))),
            },
            _ => Err(Error::usage(format!(
                "the table has no column '{n}' for the sparse matrix"
            ))),
        }
    };
    let (i, j) = (int_col("i")?, int_col("j")?);
    let dim: Vec<i32> = slots
        .iter()
        .find(|(n, _)| n == "Dim")
        .and_then(|(_, d)| match d {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) => Some(x.to_vec()),
                _ => None,
            },
            _ => None,
        })
        .ok_or_else(|| Error::corrupt("the sparse matrix's metadata has no Dim"))?;
    let [nr, nc] = dim[..] else {
        return Err(Error::corrupt("the sparse matrix's Dim is not two numbers"));
    };
    let (nr, nc) = (nr.max(0) as usize, nc.max(0) as usize);
    let zero_based = |k: &[i32], n: usize, what: &str| -> Result<Vec<i32>> {
        k.iter()
            .map(|&v| {
                if v < 1 || v as usize > n {
                    Err(Error::usage(format!(
                        "the table's {what} value {v} is outside 1..{n}: the table was changed"
                    )))
                } else {
                    Ok(v - 1)
                }
            })
            .collect()
    };
    let mut filled: Vec<(String, RObject)> = match storage {
        Storage::Column => vec![
            ("i".into(), crate::build::ints(zero_based(&i, nr, "i")?)),
            ("p".into(), crate::build::ints(compress(&j, nc, "j")?)),
        ],
        Storage::Row => vec![
            ("j".into(), crate::build::ints(zero_based(&j, nc, "j")?)),
            ("p".into(), crate::build::ints(compress(&i, nr, "i")?)),
        ],
        Storage::Triplet => vec![
            ("i".into(), crate::build::ints(zero_based(&i, nr, "i")?)),
            ("j".into(), crate::build::ints(zero_based(&j, nc, "j")?)),
        ],
    };
    if let Some(x) = col("x") {
        filled.push(("x".into(), x.clone()));
    }
    let mut attributes = None;
    for (name, value) in slots {
        let value = match filled.iter().position(|(n, _)| *n == name) {
            Some(k) => filled.swap_remove(k).1,
            None => value,
        };
        let tag = m.symbol(&name);
        set_attribute(&mut attributes, tag, name.as_bytes(), &m.refs, value);
    }
    Ok(RObject::S4(Box::new(AttrOnly {
        flags: Flags {
            levels: levels::S4_OBJECT,
            object: true,
        },
        attributes,
    })))
}
