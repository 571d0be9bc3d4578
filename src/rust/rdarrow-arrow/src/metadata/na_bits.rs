//! NAs whose bits are not R's `NA_real_`: kept as runs in the metadata
//! (Arrow's null keeps no bits) and put back in place.

use rdarrow_format::tree::make::ObjectMaker;
use rdarrow_format::tree::*;

/// The NAs of a double vector whose bits are not R's `NA_real_`: R's
/// arithmetic on NA gives NaNs with NA's payload (`NA_real_ + 1`), which R
/// treats as NA and writes as they are. Arrow's null keeps no bits, so
/// they travel in the metadata (a list's element in its node, a top-level
/// column in the fidelity notes) and go back in their places.
#[derive(Debug, Clone, PartialEq)]
pub struct NaBits(Vec<(usize, u64)>);

impl NaBits {
    /// Those of `data`, the payload of `obj` (none for an integer64, whose
    /// doubles are 64-bit integers).
    pub fn of_object(obj: &RObject, data: &VectorData, refs: &RefTable) -> Option<NaBits> {
        match data {
            VectorData::Real(x) if !obj.inherits(refs, "integer64") => NaBits::of(x),
            _ => None,
        }
    }

    fn of(x: &[f64]) -> Option<NaBits> {
        NaBits::of_rows(x, 0)
    }

    /// Those of rows `first_row..` of a vector, whose values are `x`.
    pub fn of_rows(x: &[f64], first_row: usize) -> Option<NaBits> {
        let found: Vec<(usize, u64)> = x
            .iter()
            .enumerate()
            .filter(|(_, &f)| na::is_na_real(f) && f.to_bits() != na::REAL_BITS)
            .map(|(i, f)| (first_row + i, f.to_bits()))
            .collect();
        (!found.is_empty()).then_some(NaBits(found))
    }

    /// Those of a vector's row ranges, in order, as one.
    pub fn join(parts: Vec<NaBits>) -> Option<NaBits> {
        let all: Vec<(usize, u64)> = parts.into_iter().flat_map(|p| p.0).collect();
        (!all.is_empty()).then_some(NaBits(all))
    }

    /// Runs of consecutive positions with one bit pattern: (first
    /// position, 0-based; length; bits). A column of NAs that all came
    /// from arithmetic is one run.
    fn runs(&self) -> Vec<(usize, usize, u64)> {
        let mut out: Vec<(usize, usize, u64)> = Vec::new();
        for &(i, b) in &self.0 {
            match out.last_mut() {
                Some((start, n, bits)) if *bits == b && *start + *n == i => *n += 1,
                _ => out.push((i, 1, b)),
            }
        }
        out
    }

    /// The node element: `list(at = <1-based first positions>, n = <run
    /// lengths>, bits = <hex>)`, one entry per run.
    pub(crate) fn r_node(&self, m: &mut ObjectMaker) -> RObject {
        let runs = self.runs();
        let at = rdarrow_format::tree::make::ints(runs.iter().map(|&(i, _, _)| i as i32 + 1).collect());
        let n = rdarrow_format::tree::make::ints(runs.iter().map(|&(_, n, _)| n as i32).collect());
        let hex: Vec<String> = runs.iter().map(|&(_, _, b)| format!("{b:016x}")).collect();
        let bits = rdarrow_format::tree::make::strings(hex.iter().map(|h| Some(h.as_bytes())));
        m.named_list(&["at", "n", "bits"], vec![at, n, bits])
    }

    /// The fidelity notes' lines for top-level column `name`: one per bit
    /// pattern, `na\t<col>\t<hex>\t<1-based positions and runs>` (`7,9-12`).
    pub(crate) fn note_lines(&self, name: &str) -> String {
        let runs = self.runs();
        let mut patterns: Vec<u64> = runs.iter().map(|&(_, _, b)| b).collect();
        patterns.sort_unstable();
        patterns.dedup();
        let mut out = String::new();
        for p in patterns {
            let at: Vec<String> = runs
                .iter()
                .filter(|&&(_, _, b)| b == p)
                .map(|&(i, n, _)| match n {
                    1 => (i + 1).to_string(),
                    _ => format!("{}-{}", i + 1, i + n),
                })
                .collect();
            out.push_str(&format!("na\t{name}\t{p:016x}\t{}\n", at.join(",")));
        }
        out
    }

    /// The 1-based positions of a note's `7,9-12` (at most `len`).
    pub(crate) fn positions(text: &str, len: usize) -> impl Iterator<Item = usize> + '_ {
        text.split(',').flat_map(move |part| {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.parse::<usize>().ok(), b.parse::<usize>().ok()),
                None => (part.parse::<usize>().ok(), part.parse::<usize>().ok()),
            };
            match (a, b) {
                (Some(a), Some(b)) if a >= 1 && a <= b => a..b.min(len) + 1,
                _ => 1..1,
            }
        })
    }

    /// Put the bits back: each 1-based position that is NA in `target` (a
    /// double vector) gets its own; anything else is left as it is.
    pub(crate) fn put_back(target: &mut RObject, at: impl Iterator<Item = (usize, u64)>) {
        let RObject::Vector(v) = target else { return };
        let VectorData::Real(x) = &v.data else { return };
        let mut vals: Option<Vec<f64>> = None;
        for (pos, bits) in at {
            let Some(i) = pos.checked_sub(1) else { continue };
            let f = f64::from_bits(bits);
            if i < x.len() && na::is_na_real(x[i]) && na::is_na_real(f) {
                vals.get_or_insert_with(|| x.to_vec())[i] = f;
            }
        }
        if let Some(vals) = vals {
            v.data = VectorData::Real(vals.into());
        }
    }

    /// The length of a double vector (0 for anything else).
    pub(crate) fn len_of(target: &RObject) -> usize {
        match target {
            RObject::Vector(v) => match &v.data {
                VectorData::Real(x) => x.len(),
                _ => 0,
            },
            _ => 0,
        }
    }

    /// [`Self::put_back`] from a node element.
    pub(crate) fn apply_node(target: &mut RObject, part: &RObject, refs: &RefTable) {
        let parts = list_entries(part, refs);
        let get = |n: &str| parts.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        let ints = |n: &str| match get(n) {
            Some(RObject::Vector(v)) => match &v.data {
                VectorData::Integer(x) => x.to_vec(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let (at, n) = (ints("at"), ints("n"));
        let bits: Vec<u64> = crate::mapping::objects::strings_in(get("bits"), refs)
            .iter()
            .filter_map(|h| u64::from_str_radix(h, 16).ok())
            .collect();
        if at.len() != n.len() || at.len() != bits.len() {
            return;
        }
        let len = NaBits::len_of(target);
        let pairs: Vec<(usize, u64)> = at
            .iter()
            .zip(&n)
            .zip(bits)
            .filter(|((&a, &k), _)| a > 0 && k > 0)
            .flat_map(|((&a, &k), b)| {
                let a = a as usize;
                (a..(a + k as usize).min(len + 1)).map(move |p| (p, b))
            })
            .collect();
        NaBits::put_back(target, pairs.into_iter());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn na_bits_travel_as_runs_and_come_back_in_place() {
        let quiet = f64::from_bits(0x7ff8_0000_0000_07a2);
        let na = f64::from_bits(na::REAL_BITS);
        let x = vec![1.0, quiet, quiet, quiet, na, quiet, 2.0];
        let bits = NaBits::of(&x).expect("NAs with other bits");
        assert_eq!(bits.runs(), vec![(1, 3, 0x7ff8_0000_0000_07a2), (5, 1, 0x7ff8_0000_0000_07a2)]);
        let line = bits.note_lines("x");
        assert_eq!(line, "na\tx\t7ff80000000007a2\t2-4,6\n");
        // back: the vector as Arrow gives it, every NA R's NA_real_
        let mut target = RObject::Vector(Box::new(Vector {
            flags: Flags::default(),
            data: VectorData::Real(vec![1.0, na, na, na, na, na, 2.0].into()),
            attributes: None,
        }));
        let at: Vec<usize> = NaBits::positions("2-4,6,9-99,0,x,5-3", 7).collect();
        assert_eq!(at, vec![2, 3, 4, 6]);
        NaBits::put_back(&mut target, at.into_iter().map(|p| (p, 0x7ff8_0000_0000_07a2)));
        let RObject::Vector(v) = &target else { unreachable!() };
        let VectorData::Real(got) = &v.data else { unreachable!() };
        let got: Vec<u64> = got.iter().map(|f| f.to_bits()).collect();
        let want: Vec<u64> = x.iter().map(|f| f.to_bits()).collect();
        assert_eq!(got, want);
        // bits that are not an NA's are never put in
        NaBits::put_back(&mut target, [(1, 1.5f64.to_bits()), (5, 0x7ff8_0000_0000_0000)].into_iter());
        let RObject::Vector(v) = &target else { unreachable!() };
        let VectorData::Real(again) = &v.data else { unreachable!() };
        assert_eq!(again[0], 1.0);
        assert_eq!(again[4].to_bits(), na::REAL_BITS);
    }
}
