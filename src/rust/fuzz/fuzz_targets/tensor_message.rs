//! Bytes of an Arrow Tensor message -> its header checked against the
//! bytes -> the R array (strides gathered into R's order) -> the array laid
//! out as a tensor again, written, and read back: what is read once must
//! read again, the same values, bit for bit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::files::tensor::read_tensor;
use rdarrow_arrow::files::tensor::TensorParts;

fuzz_target!(|data: &[u8]| {
    // (1 GiB of values at most, below libFuzzer's allocation limit, as a
    // user sets options(rdarrow.max_memory))
    let Ok((obj, refs)) = read_tensor(&data, "the input", 1 << 30) else { return };
    let parts = TensorParts::of(&obj, &refs).expect("an array read from a tensor lays out as one");
    let mut out = Vec::new();
    parts.write(&mut out).expect("writing to memory");
    let (again, refs2) = read_tensor(&out.as_slice(), "the tensor written", 1 << 30).expect("the tensor written reads back");
    let parts2 = TensorParts::of(&again, &refs2).expect("and lays out again");
    assert_eq!(parts.data.as_slice(), parts2.data.as_slice(), "the values changed on the way");
    assert_eq!(parts.shape, parts2.shape);
});
