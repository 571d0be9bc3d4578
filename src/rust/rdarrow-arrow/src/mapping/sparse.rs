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

use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
pub use rdarrow_format::checks::consistency::Storage;
use rdarrow_format::checks::consistency::check_sparse;
use rdarrow_format::checks::consistency::matrix_storage;
use rdarrow_format::tree::*;

/// The storage of a sparse matrix of the Matrix package, from its class.
pub fn storage_of(obj: &RObject, refs: &RefTable) -> Option<Storage> {
    matrix_storage(obj, refs)
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

/// Row or column numbers from 1 of each entry, from checked compressed
/// pointers.
fn expand_pointers(p: &[i32]) -> Vec<i32> {
    let mut out = Vec::with_capacity(p.last().copied().unwrap_or(0) as usize);
    for (k, w) in p.windows(2).enumerate() {
        out.extend(std::iter::repeat_n(k as i32 + 1, (w[1] - w[0]) as usize));
    }
    out
}

/// The table of a sparse matrix's stored entries (its slots checked
/// first: see [`check_sparse`]).
pub fn parts(obj: &RObject, refs: &RefTable) -> Result<Option<Parts>> {
    let Some(storage) = storage_of(obj, refs) else {
        return Ok(None);
    };
    let checked = check_sparse(obj, refs, storage)
        .map_err(|e| Error::corrupt(format!("the sparse matrix's {}", e.message)))?;
    let one_based = |x: &[i32]| x.iter().map(|&v| v + 1).collect::<Vec<i32>>();
    let (i, j) = match storage {
        Storage::Column => (
            one_based(checked.i.as_deref().unwrap_or_default()),
            expand_pointers(checked.p.as_deref().unwrap_or_default()),
        ),
        Storage::Row => (
            expand_pointers(checked.p.as_deref().unwrap_or_default()),
            one_based(checked.j.as_deref().unwrap_or_default()),
        ),
        Storage::Triplet => (
            one_based(checked.i.as_deref().unwrap_or_default()),
            one_based(checked.j.as_deref().unwrap_or_default()),
        ),
    };
    let rows = checked.entries;
    let mut names = vec!["i".to_string(), "j".to_string()];
    let mut columns = vec![rdarrow_format::tree::make::ints(i), rdarrow_format::tree::make::ints(j)];
    if let Some(x) = checked.x {
        names.push("x".into());
        columns.push(x.clone());
    }
    let entry = storage.entry_slots();
    let kept = rdarrow_format::checks::consistency::slots(obj, refs)
        .into_iter()
        .map(|(n, v)| {
            let n = String::from_utf8_lossy(n).into_owned();
            let v = if entry.contains(&n.as_str()) {
                RObject::Null
            } else {
                v.clone()
            };
            (n, v)
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
    m: &mut rdarrow_format::tree::make::ObjectMaker,
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
            ("i".into(), rdarrow_format::tree::make::ints(zero_based(&i, nr, "i")?)),
            ("p".into(), rdarrow_format::tree::make::ints(compress(&j, nc, "j")?)),
        ],
        Storage::Row => vec![
            ("j".into(), rdarrow_format::tree::make::ints(zero_based(&j, nc, "j")?)),
            ("p".into(), rdarrow_format::tree::make::ints(compress(&i, nr, "i")?)),
        ],
        Storage::Triplet => vec![
            ("i".into(), rdarrow_format::tree::make::ints(zero_based(&i, nr, "i")?)),
            ("j".into(), rdarrow_format::tree::make::ints(zero_based(&j, nc, "j")?)),
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
