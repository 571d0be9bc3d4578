//! Validity bitmaps from R's NAs.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};
use rdarrow_format::tree::na;

/// One pass over `n` elements: `f(i)` does the element's work (filling
/// the caller's outputs) and says whether it is valid; the validity bits
/// are gathered as it goes. `None` when every element is valid.
pub(crate) fn fused_validity(n: usize, mut f: impl FnMut(usize) -> bool) -> Option<NullBuffer> {
    let mut words: Vec<u64> = Vec::with_capacity(n.div_ceil(64));
    let mut all_valid = true;
    let mut start = 0;
    while start < n {
        let end = (start + 64).min(n);
        let mut w = 0u64;
        for i in start..end {
            w |= (f(i) as u64) << (i - start);
        }
        let full = if end - start == 64 {
            u64::MAX
        } else {
            (1u64 << (end - start)) - 1
        };
        all_valid &= w == full;
        words.push(w);
        start = end;
    }
    (!all_valid).then(|| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, n)))
}

pub(crate) fn nulls_from(len: usize, valid: impl Fn(usize) -> bool) -> Option<NullBuffer> {
    let b = BooleanBuffer::collect_bool(len, valid);
    let n = NullBuffer::new(b);
    (n.null_count() > 0).then_some(n)
}

pub(crate) fn int_nulls(v: &[i32]) -> Option<NullBuffer> {
    if !v.contains(&na::INTEGER) {
        return None;
    }
    nulls_from(v.len(), |i| v[i] != na::INTEGER)
}
