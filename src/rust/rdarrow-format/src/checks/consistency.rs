//! Structures whose parts must agree with one another before they are
//! handed to a consumer that trusts them (scipy, NumPy, pandas, Arrow):
//! a sparse matrix's pointers, indices and values against its dimensions;
//! a dense matrix's `dim` against its length; `names` and `dimnames`
//! against the dimensions; a factor's codes against its levels.
//!
//! R's `load()` checks none of these (a damaged file loads, and crashes
//! later), and neither does a read into R objects, which builds what
//! `load()` builds. Every conversion into another library's objects asks
//! this module first, once for each object: a violation is a
//! corrupt-input error that says which slot and which value, such as
//! `p[12] > p[13]`; the caller puts the object's path before it.

use crate::base::error::{Error, Result};
use crate::tree::*;
use std::borrow::Cow;

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
    /// The letter of the storage in the Matrix package's class names.
    pub fn letter(self) -> &'static str {
        match self {
            Storage::Column => "C",
            Storage::Row => "R",
            Storage::Triplet => "T",
        }
    }

    /// The storage a class letter names.
    pub fn from_letter(s: &[u8]) -> Option<Storage> {
        Some(match s {
            b"C" => Storage::Column,
            b"R" => Storage::Row,
            b"T" => Storage::Triplet,
            _ => return None,
        })
    }

    /// The slots that hold the entries: the two index slots, then `x`.
    pub fn entry_slots(self) -> &'static [&'static str] {
        match self {
            Storage::Column => &["i", "p", "x"],
            Storage::Row => &["j", "p", "x"],
            Storage::Triplet => &["i", "j", "x"],
        }
    }
}

/// The slots of an S4 object (its attributes) by name, in order.
pub fn slots<'a>(obj: &'a RObject, refs: &'a RefTable) -> Vec<(&'a [u8], &'a RObject)> {
    obj.attributes()
        .map(|a| {
            pairlist_entries(a, refs)
                .into_iter()
                .filter_map(|(n, v)| Some((n?, v)))
                .collect()
        })
        .unwrap_or_default()
}

fn slot<'a>(all: &[(&[u8], &'a RObject)], name: &str) -> Option<&'a RObject> {
    all.iter()
        .find(|(n, _)| *n == name.as_bytes())
        .map(|(_, v)| *v)
}

/// The package of an object's class (the `package` attribute of its
/// `class`), as S4 objects record it.
pub fn class_package(obj: &RObject, refs: &RefTable) -> Option<String> {
    obj.attribute(refs, "class")?
        .attribute(refs, "package")?
        .as_strings()?
        .get(0)
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// The storage of a sparse matrix of the Matrix package (any `*CMatrix`,
/// `*RMatrix` or `*TMatrix` of package Matrix holding the slots of that
/// storage and `Dim`), from its class.
pub fn matrix_storage(obj: &RObject, refs: &RefTable) -> Option<Storage> {
    let RObject::S4(_) = obj else { return None };
    if class_package(obj, refs).as_deref() != Some("Matrix") {
        return None;
    }
    let class = obj.class_attr(refs);
    let name = class.first()?;
    let storage = [Storage::Column, Storage::Row, Storage::Triplet]
        .into_iter()
        .find(|s| name.ends_with(&format!("{}Matrix", s.letter())))?;
    has_storage_slots(obj, refs, storage).then_some(storage)
}

/// The storage of an S4 object that holds a sparse matrix's slots, of the
/// Matrix package or a class extending one (Seurat's `Graph` extends
/// `dgCMatrix`): a Matrix package class by its letter, any other by its
/// slots (`i`, `p` and `Dim`: compressed by column).
pub fn sparse_storage(obj: &RObject, refs: &RefTable) -> Option<Storage> {
    matrix_storage(obj, refs).or_else(|| {
        let RObject::S4(_) = obj else { return None };
        has_storage_slots(obj, refs, Storage::Column).then_some(Storage::Column)
    })
}

fn has_storage_slots(obj: &RObject, refs: &RefTable, storage: Storage) -> bool {
    let all = slots(obj, refs);
    storage.entry_slots()[..2]
        .iter()
        .chain(["Dim"].iter())
        .all(|s| slot(&all, s).is_some())
}

/// A vector's payload, a compact (ALTREP) one expanded; `None` for what is
/// not a vector.
pub fn payload<'o>(obj: &'o RObject, refs: &RefTable) -> Result<Option<Cow<'o, VectorData>>> {
    Ok(match obj {
        RObject::Vector(v) => Some(Cow::Borrowed(&v.data)),
        RObject::Altrep(a) => Some(Cow::Owned(crate::tree::altrep::expand(a, refs)?)),
        _ => None,
    })
}

/// The integers of a slot (a compact sequence expanded).
fn ints<'o>(obj: Option<&'o RObject>, refs: &RefTable, what: &str) -> Result<Cow<'o, [i32]>> {
    let not_ints = || Error::corrupt(format!("{what} is not an integer vector"));
    let Some(obj) = obj else {
        return Err(Error::corrupt(format!("the {what} slot is missing")));
    };
    match payload(obj, refs)?.ok_or_else(not_ints)? {
        Cow::Borrowed(VectorData::Integer(x)) => Ok(Cow::Borrowed(&x[..])),
        Cow::Owned(VectorData::Integer(x)) => Ok(Cow::Owned(x.to_vec())),
        _ => Err(not_ints()),
    }
}

/// A sparse matrix whose slots agree: every pointer and index may be used
/// as it is.
#[derive(Debug)]
pub struct Sparse<'a> {
    /// How it stores its entries.
    pub storage: Storage,
    /// `Dim[1]`.
    pub nrow: usize,
    /// `Dim[2]`.
    pub ncol: usize,
    /// The stored entries' rows from 0 (`Column`, `Triplet`).
    pub i: Option<Cow<'a, [i32]>>,
    /// The stored entries' columns from 0 (`Row`, `Triplet`).
    pub j: Option<Cow<'a, [i32]>>,
    /// The compressed pointers (`Column`, `Row`): one more than the
    /// columns (rows), from 0 to the entries, never decreasing.
    pub p: Option<Cow<'a, [i32]>>,
    /// The values (none for a pattern matrix), one per entry.
    pub x: Option<&'a RObject>,
    /// The number of stored entries.
    pub entries: usize,
}

/// Check a sparse matrix stored as `storage`: `Dim` is two counts; `p`
/// has one more value than the columns (rows), starts at 0, never
/// decreases and ends at the number of entries; every index lies within
/// its dimension; `i`, `j` and `x` have one value per entry.
pub fn check_sparse<'a>(
    obj: &'a RObject,
    refs: &'a RefTable,
    storage: Storage,
) -> Result<Sparse<'a>> {
    let all = slots(obj, refs);
    let dim = ints(slot(&all, "Dim"), refs, "Dim")?;
    let [nr, nc] = dim[..] else {
        return Err(Error::corrupt(format!(
            "Dim has {} values, not 2",
            dim.len()
        )));
    };
    if nr < 0 || nc < 0 {
        return Err(Error::corrupt(format!(
            "Dim is {} x {}: not two counts",
            show_int(nr),
            show_int(nc)
        )));
    }
    let (nr, nc) = (nr as usize, nc as usize);
    let index = |name: &str, bound: usize, what: &str| -> Result<Cow<'a, [i32]>> {
        let v = ints(slot(&all, name), refs, name)?;
        // one comparison per index (a negative one is a large unsigned
        // one), without a branch, so that it vectorizes; the position
        // only when there is one to report
        let outside = |x: i32| (x as u32 as u64) >= bound as u64;
        if any_of(&v, outside) {
            let k = v.iter().position(|&x| outside(x)).unwrap_or_default();
            return Err(Error::corrupt(format!(
                "{name}[{k}] is {}, outside the {bound} {what}",
                show_int(v[k])
            )));
        }
        Ok(v)
    };
    let (i, j, p, entries) = match storage {
        Storage::Column | Storage::Row => {
            let (ix, n, bound, lines, what) = match storage {
                Storage::Column => ("i", nc, nr, "columns", "rows"),
                _ => ("j", nr, nc, "rows", "columns"),
            };
            let idx = index(ix, bound, what)?;
            let p = pointers(ints(slot(&all, "p"), refs, "p")?, n, lines, ix, idx.len())?;
            let entries = idx.len();
            match storage {
                Storage::Column => (Some(idx), None, Some(p), entries),
                _ => (None, Some(idx), Some(p), entries),
            }
        }
        Storage::Triplet => {
            let i = index("i", nr, "rows")?;
            let j = index("j", nc, "columns")?;
            if i.len() != j.len() {
                return Err(Error::corrupt(format!(
                    "i has {} entries but j has {}",
                    i.len(),
                    j.len()
                )));
            }
            let entries = i.len();
            (Some(i), Some(j), None, entries)
        }
    };
    let x = slot(&all, "x");
    if let Some(x) = x {
        let atomic = matches!(x.sxptype(refs), sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX);
        if !atomic {
            return Err(Error::corrupt(format!(
                "x is a {}, not numbers",
                sxp::type_name(x.sxptype(refs))
            )));
        }
        let n = x.vector_len(refs);
        if n != entries as u64 {
            return Err(Error::corrupt(format!(
                "x has {n} values for {entries} entries"
            )));
        }
    }
    Ok(Sparse {
        storage,
        nrow: nr,
        ncol: nc,
        i,
        j,
        p,
        x,
        entries,
    })
}

/// Whether any of `v` is `bad`, without a branch per value (so that it
/// vectorizes), a long slice on every core: the check reads each index
/// once, and memory is its bound.
fn any_of(v: &[i32], bad: impl Fn(i32) -> bool + Sync) -> bool {
    let scan = |part: &[i32]| part.iter().fold(false, |any, &x| any | bad(x));
    let cores = crate::base::limits::cores();
    if v.len() < (1 << 22) || cores < 2 {
        return scan(v);
    }
    let chunk = v.len().div_ceil(cores);
    std::thread::scope(|s| {
        let parts: Vec<_> = v.chunks(chunk).map(|p| s.spawn(move || scan(p))).collect();
        parts.into_iter().any(|h| h.join().unwrap_or(true))
    })
}

/// Compressed pointers of `n` columns (rows) over `entries` entries.
fn pointers<'a>(
    p: Cow<'a, [i32]>,
    n: usize,
    lines: &str,
    index: &str,
    entries: usize,
) -> Result<Cow<'a, [i32]>> {
    if p.len() != n + 1 {
        return Err(Error::corrupt(format!(
            "p has {} values for {n} {lines} (needs {})",
            p.len(),
            n + 1
        )));
    }
    if p[0] != 0 {
        return Err(Error::corrupt(format!("p[0] is {}, not 0", show_int(p[0]))));
    }
    if let Some(k) = p.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::corrupt(format!("p[{k}] > p[{}]", k + 1)));
    }
    if p[n] as usize != entries {
        return Err(Error::corrupt(format!(
            "p[{n}] is {} but {index} has {entries} entries",
            p[n]
        )));
    }
    Ok(p)
}

fn show_int(v: i32) -> String {
    if v == na::INTEGER {
        "NA".into()
    } else {
        v.to_string()
    }
}

/// The dimensions of a vector's `dim` attribute, checked: counts (no `NA`,
/// nothing negative or fractional) whose product is the vector's length.
/// `None` when it has no `dim`.
pub fn dims(obj: &RObject, refs: &RefTable, len: u64) -> Result<Option<Vec<usize>>> {
    let Some(d) = obj.attribute(refs, "dim") else {
        return Ok(None);
    };
    let bad = |why: String| Err(Error::corrupt(format!("dim{why}")));
    let values: Vec<f64> = match payload(d, refs)?.as_deref() {
        Some(VectorData::Integer(x)) => x
            .iter()
            .map(|&v| if v == na::INTEGER { f64::NAN } else { v as f64 })
            .collect(),
        Some(VectorData::Real(x)) => x.to_vec(),
        _ => return bad(" is not a vector of counts".into()),
    };
    if values.is_empty() {
        return bad(" is empty".into());
    }
    let mut out = Vec::with_capacity(values.len());
    for (k, &v) in values.iter().enumerate() {
        if !(v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64) {
            let shown = if v.is_nan() {
                "NA".into()
            } else {
                v.to_string()
            };
            return bad(format!("[{k}] is {shown}, not a count"));
        }
        out.push(v as usize);
    }
    let product = out
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    if product != Some(len) {
        let shape: Vec<String> = out.iter().map(|d| d.to_string()).collect();
        return bad(format!(
            " is {} but the vector has {len} values",
            shape.join(" x ")
        ));
    }
    Ok(Some(out))
}

/// Check an atomic vector or list for a consumer: its `dim` (see
/// [`dims`]), its `dimnames` (one part per dimension, each `NULL` or as
/// long as its dimension), its `names` (one per value), and a factor's
/// codes (each `NA` or within its levels).
pub fn check_vector(obj: &RObject, refs: &RefTable, data: &VectorData) -> Result<()> {
    if matches!(data, VectorData::Skipped { .. } | VectorData::Deferred(_)) {
        return Ok(());
    }
    let len = data.len();
    let dims = dims(obj, refs, len)?;
    if let Some(dn) = obj.attribute(refs, "dimnames") {
        let Some(dims) = &dims else {
            return Err(Error::corrupt("dimnames on a vector without dim"));
        };
        let parts = match payload(dn, refs)?.as_deref() {
            Some(VectorData::List(items)) => items
                .iter()
                .map(|it| match it {
                    RObject::Null => Ok(None),
                    other => Ok(Some(other.vector_len(refs))),
                })
                .collect::<Result<Vec<_>>>()?,
            _ => return Err(Error::corrupt("dimnames is not a list")),
        };
        if parts.len() != dims.len() {
            return Err(Error::corrupt(format!(
                "dimnames has {} parts for {} dimensions",
                parts.len(),
                dims.len()
            )));
        }
        for (k, (part, &d)) in parts.iter().zip(dims.iter()).enumerate() {
            if let Some(n) = part {
                if *n != d as u64 {
                    let what = match k {
                        0 => "rows".to_string(),
                        1 => "columns".to_string(),
                        _ => format!("places of dimension {}", k + 1),
                    };
                    return Err(Error::corrupt(format!(
                        "dimnames[[{}]] has {n} names for {d} {what}",
                        k + 1
                    )));
                }
            }
        }
    }
    if let Some(names) = obj.attribute(refs, "names") {
        let n = names.vector_len(refs);
        if names.sxptype(refs) != sxp::STR {
            return Err(Error::corrupt("names is not a character vector"));
        }
        if n != len {
            return Err(Error::corrupt(format!(
                "names has {n} names for {len} values"
            )));
        }
    }
    if let VectorData::Integer(codes) = data {
        if obj.inherits(refs, "factor") {
            let nlev = obj
                .attribute(refs, "levels")
                .map(|l| l.vector_len(refs))
                .unwrap_or(0);
            // branch-free, as the sparse indices above
            let outside = |c: i32| (c != na::INTEGER) & ((c.wrapping_sub(1) as u32 as u64) >= nlev);
            if codes.iter().fold(false, |any, &c| any | outside(c)) {
                let k = codes.iter().position(|&c| outside(c)).unwrap_or_default();
                return Err(factor_code_outside(codes[k], Some(k), nlev));
            }
        }
    }
    Ok(())
}

/// A factor's code outside its levels (at position `at` from 0, when known).
pub fn factor_code_outside(code: i32, at: Option<usize>, nlev: u64) -> Error {
    let at = at.map(|k| format!(" at [{}]", k + 1)).unwrap_or_default();
    Error::corrupt(format!(
        "factor code {code}{at} is outside its {nlev} levels"
    ))
}

/// `detail` (a check's message) of the object at `place` (an object path
/// as R code writes it), as one corrupt-input error.
pub fn at_place(place: &str, detail: Error) -> Error {
    if place.is_empty() {
        return detail;
    }
    Error {
        message: format!("{place}: {}", detail.message),
        ..detail
    }
}

/// For the fuzz target over these checks and its regression tests: every
/// object `obj` holds (list elements and S4 slots, to `depth` levels)
/// checked, and where a check passes its promise used as a consumer uses
/// it, without bounds checks of its own: each entry of a sparse matrix
/// through its pointers and indices, each dimension's names, each
/// factor code as an index into the levels. A panic here is a check that
/// let a disagreeing structure through. Returns how many structures
/// passed and how many were refused.
#[doc(hidden)]
pub fn exercise(obj: &RObject, refs: &RefTable, depth: usize) -> (usize, usize) {
    let mut tally = (0, 0);
    exercise_into(obj, refs, depth, &mut tally);
    tally
}

fn exercise_into(obj: &RObject, refs: &RefTable, depth: usize, tally: &mut (usize, usize)) {
    if depth == 0 {
        return;
    }
    if let Some(storage) = sparse_storage(obj, refs) {
        match check_sparse(obj, refs, storage) {
            Ok(m) => {
                tally.0 += 1;
                use_sparse(&m, refs);
            }
            Err(_) => tally.1 += 1,
        }
    }
    if let Ok(Some(data)) = payload(obj, refs) {
        match check_vector(obj, refs, &data) {
            Ok(()) => {
                tally.0 += 1;
                use_vector(obj, refs, &data);
            }
            Err(_) => tally.1 += 1,
        }
        if let VectorData::List(items) = data.as_ref() {
            for it in items {
                exercise_into(it, refs, depth - 1, tally);
            }
        }
    }
    if let RObject::S4(_) = obj {
        for (_, v) in slots(obj, refs) {
            exercise_into(v, refs, depth - 1, tally);
        }
    }
}

/// Every entry of a checked sparse matrix, as scipy walks it.
fn use_sparse(m: &Sparse<'_>, refs: &RefTable) {
    let n = |v: &Option<Cow<'_, [i32]>>| v.as_deref().unwrap_or_default().to_vec();
    let (i, j, p) = (n(&m.i), n(&m.j), n(&m.p));
    match m.storage {
        Storage::Column | Storage::Row => {
            let (index, lines, bound) = match m.storage {
                Storage::Column => (&i, m.ncol, m.nrow),
                _ => (&j, m.nrow, m.ncol),
            };
            for k in 0..lines {
                for e in p[k] as usize..p[k + 1] as usize {
                    assert!((index[e] as usize) < bound);
                }
            }
            assert_eq!(p[lines] as usize, m.entries);
        }
        Storage::Triplet => {
            for e in 0..m.entries {
                assert!((i[e] as usize) < m.nrow && (j[e] as usize) < m.ncol);
            }
        }
    }
    if let Some(x) = m.x {
        assert_eq!(x.vector_len(refs), m.entries as u64);
    }
}

/// A checked vector's shape, dimension names and factor codes, as NumPy
/// and pandas use them.
fn use_vector(obj: &RObject, refs: &RefTable, data: &VectorData) {
    let len = data.len();
    let dims = dims(obj, refs, len).expect("checked").unwrap_or_default();
    if !dims.is_empty() {
        assert_eq!(dims.iter().map(|&d| d as u64).product::<u64>(), len);
    }
    if let Some(dn) = obj.attribute(refs, "dimnames") {
        if let Ok(Some(parts)) = payload(dn, refs) {
            if let VectorData::List(items) = parts.as_ref() {
                for (k, it) in items.iter().enumerate() {
                    if !matches!(it, RObject::Null) {
                        assert_eq!(it.vector_len(refs), dims[k] as u64);
                    }
                }
            }
        }
    }
    if let Some(names) = obj.attribute(refs, "names") {
        assert_eq!(names.vector_len(refs), len);
    }
    if let (VectorData::Integer(codes), true) = (data, obj.inherits(refs, "factor")) {
        let nlev = obj
            .attribute(refs, "levels")
            .map(|l| l.vector_len(refs) as usize)
            .unwrap_or(0);
        let levels = vec![(); nlev];
        for &c in codes.iter().filter(|&&c| c != na::INTEGER) {
            let _ = levels[c as usize - 1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::make::ObjectMaker;

    fn ints_obj(v: &[i32]) -> RObject {
        crate::tree::make::ints(v.to_vec())
    }

    fn strs(v: &[&str]) -> RObject {
        crate::tree::make::strings(v.iter().map(|s| Some(s.as_bytes())))
    }

    fn list(items: Vec<RObject>) -> RObject {
        ObjectMaker::default().vector(VectorData::List(items), vec![])
    }

    /// A `dgCMatrix`-like S4 object of package Matrix with these slots.
    fn sparse(class: &str, slots_: &[(&str, RObject)]) -> (RObject, RefTable) {
        let mut m = ObjectMaker::default();
        let mut cls = strs(&[class]);
        if let RObject::Vector(v) = &mut cls {
            v.attributes = m.tagged_pairlist(vec![("package", strs(&["Matrix"]))]);
        }
        let mut items: Vec<(&str, RObject)> = slots_.to_vec();
        items.push(("class", cls));
        let obj = RObject::S4(Box::new(AttrOnly {
            flags: Flags {
                levels: levels::S4_OBJECT,
                object: true,
            },
            attributes: m.tagged_pairlist(items),
        }));
        (obj, m.refs)
    }

    fn doubles(v: &[f64]) -> RObject {
        crate::tree::make::reals(v.to_vec())
    }

    fn csc(i: &[i32], p: &[i32], x: &[f64], dim: &[i32]) -> Result<usize> {
        let (o, refs) = sparse(
            "dgCMatrix",
            &[
                ("i", ints_obj(i)),
                ("p", ints_obj(p)),
                ("Dim", ints_obj(dim)),
                ("x", doubles(x)),
            ],
        );
        assert_eq!(matrix_storage(&o, &refs), Some(Storage::Column));
        let checked = check_sparse(&o, &refs, Storage::Column).map(|s| s.entries);
        // the fuzz target's walk refuses what the check refuses, and uses
        // what it passes without a panic
        let (passed, refused) = exercise(&o, &refs, 10);
        assert_eq!(refused > 0, checked.is_err());
        assert!(passed > 0);
        checked
    }

    fn msg(r: Result<usize>) -> String {
        r.unwrap_err().message
    }

    #[test]
    fn a_valid_csc_matrix_passes() {
        assert_eq!(
            csc(&[0, 2, 1], &[0, 2, 2, 3], &[1.0, 2.0, 3.0], &[3, 3]).unwrap(),
            3
        );
        assert_eq!(csc(&[], &[0], &[], &[0, 0]).unwrap(), 0);
    }

    #[test]
    fn each_field_of_a_csc_matrix_is_checked() {
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 1, 3], &[1.0; 3], &[3, 3])),
            "p[1] > p[2]"
        );
        assert_eq!(
            msg(csc(&[0, 2, 1], &[1, 2, 2, 3], &[1.0; 3], &[3, 3])),
            "p[0] is 1, not 0"
        );
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 2, 4], &[1.0; 3], &[3, 3])),
            "p[3] is 4 but i has 3 entries"
        );
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 3], &[1.0; 3], &[3, 3])),
            "p has 3 values for 3 columns (needs 4)"
        );
        assert_eq!(
            msg(csc(&[0, 7, 1], &[0, 2, 2, 3], &[1.0; 3], &[3, 3])),
            "i[1] is 7, outside the 3 rows"
        );
        assert_eq!(
            msg(csc(&[0, -1, 1], &[0, 2, 2, 3], &[1.0; 3], &[3, 3])),
            "i[1] is -1, outside the 3 rows"
        );
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 2, 3], &[1.0; 2], &[3, 3])),
            "x has 2 values for 3 entries"
        );
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 2, 3], &[1.0; 3], &[3, na::INTEGER])),
            "Dim is 3 x NA: not two counts"
        );
        assert_eq!(
            msg(csc(&[0], &[0, 1], &[1.0], &[3])),
            "Dim has 1 values, not 2"
        );
        // Dim agrees with p: a p of 4 values for 2 columns
        assert_eq!(
            msg(csc(&[0, 2, 1], &[0, 2, 2, 3], &[1.0; 3], &[3, 2])),
            "p has 4 values for 2 columns (needs 3)"
        );
    }

    #[test]
    fn a_long_index_is_checked_on_every_core() {
        // past the length that splits the scan among threads; the one bad
        // index in the last part, then in the first
        let n = (1 << 22) + 3;
        let mut i = vec![0i32; n];
        let p = [0, n as i32];
        let x = vec![1.0; n];
        assert_eq!(csc(&i, &p, &x, &[2, 1]).unwrap(), n);
        i[n - 1] = 2;
        assert_eq!(
            msg(csc(&i, &p, &x, &[2, 1])),
            format!("i[{}] is 2, outside the 2 rows", n - 1)
        );
        i[n - 1] = 0;
        i[1] = -5;
        assert_eq!(
            msg(csc(&i, &p, &x, &[2, 1])),
            "i[1] is -5, outside the 2 rows"
        );
    }

    #[test]
    fn triplets_and_rows_are_checked() {
        let (o, refs) = sparse(
            "dgTMatrix",
            &[
                ("i", ints_obj(&[0, 1])),
                ("j", ints_obj(&[0])),
                ("Dim", ints_obj(&[2, 2])),
            ],
        );
        assert_eq!(
            check_sparse(&o, &refs, Storage::Triplet)
                .unwrap_err()
                .message,
            "i has 2 entries but j has 1"
        );
        let (o, refs) = sparse(
            "dgRMatrix",
            &[
                ("j", ints_obj(&[0, 5])),
                ("p", ints_obj(&[0, 1, 2])),
                ("Dim", ints_obj(&[2, 2])),
            ],
        );
        assert_eq!(matrix_storage(&o, &refs), Some(Storage::Row));
        assert_eq!(
            check_sparse(&o, &refs, Storage::Row).unwrap_err().message,
            "j[1] is 5, outside the 2 columns"
        );
    }

    fn with_attrs(data: RObject, attrs: &[(&str, RObject)]) -> (RObject, RefTable) {
        let mut m = ObjectMaker::default();
        let mut obj = data;
        if let RObject::Vector(v) = &mut obj {
            v.attributes = m.tagged_pairlist(attrs.to_vec());
        }
        (obj, m.refs)
    }

    fn vcheck(data: RObject, attrs: &[(&str, RObject)]) -> std::result::Result<(), String> {
        let (o, refs) = with_attrs(data, attrs);
        let RObject::Vector(v) = &o else {
            unreachable!()
        };
        check_vector(&o, &refs, &v.data).map_err(|e| e.message)
    }

    #[test]
    fn dense_dims_names_and_factors_are_checked() {
        let six = || doubles(&[1.0; 6]);
        assert!(vcheck(six(), &[("dim", ints_obj(&[2, 3]))]).is_ok());
        assert_eq!(
            vcheck(six(), &[("dim", ints_obj(&[2, 4]))]).unwrap_err(),
            "dim is 2 x 4 but the vector has 6 values"
        );
        assert_eq!(
            vcheck(six(), &[("dim", ints_obj(&[-2, -3]))]).unwrap_err(),
            "dim[0] is -2, not a count"
        );
        // a product that overflows is not the length
        assert!(vcheck(six(), &[("dim", doubles(&[4.0e18, 4.0e18]))]).is_err());
        let dn = list;
        assert_eq!(
            vcheck(
                six(),
                &[
                    ("dim", ints_obj(&[2, 3])),
                    ("dimnames", dn(vec![RObject::Null, strs(&["a", "b"])]))
                ]
            )
            .unwrap_err(),
            "dimnames[[2]] has 2 names for 3 columns"
        );
        assert_eq!(
            vcheck(
                six(),
                &[
                    ("dim", ints_obj(&[2, 3])),
                    ("dimnames", dn(vec![RObject::Null]))
                ]
            )
            .unwrap_err(),
            "dimnames has 1 parts for 2 dimensions"
        );
        assert_eq!(
            vcheck(six(), &[("dimnames", dn(vec![RObject::Null]))]).unwrap_err(),
            "dimnames on a vector without dim"
        );
        assert_eq!(
            vcheck(six(), &[("names", strs(&["a"]))]).unwrap_err(),
            "names has 1 names for 6 values"
        );
        let f = || ints_obj(&[1, na::INTEGER, 2, 3]);
        let levels = strs(&["a", "b"]);
        let class = strs(&["factor"]);
        assert_eq!(
            vcheck(f(), &[("levels", levels.clone()), ("class", class.clone())]).unwrap_err(),
            "factor code 3 at [4] is outside its 2 levels"
        );
        assert!(vcheck(
            ints_obj(&[1, na::INTEGER, 2]),
            &[("levels", levels), ("class", class)]
        )
        .is_ok());
    }
}
