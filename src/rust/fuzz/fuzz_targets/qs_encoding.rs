//! qs's own encoding without its container: the first byte holds the
//! header's shuffle bits (logical, integer, double, complex), the rest is
//! a decompressed `.qs` stream -> the R serialization the reader makes of
//! it (environments, references, embedded R serializations renumbered)
//! -> parsed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::compression::qs::Algorithm;
use rdarrow_arrow::compression::qs::QsHeader;
use rdarrow_arrow::read::qs::QsTranscoded;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::ReadOptions;
use std::io::Read;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, stream)) = data.split_first() else { return };
    let header = QsHeader {
        version: 3,
        checksum: false,
        algorithm: Algorithm::Uncompressed,
        shuffle_logical: flags & 1 != 0,
        shuffle_integer: flags & 2 != 0,
        shuffle_double: flags & 4 != 0,
        shuffle_complex: flags & 8 != 0,
        length: stream.len() as u64,
        len: 20,
    };
    let Ok(r) = QsTranscoded::new(Box::new(std::io::Cursor::new(stream.to_vec())), header) else { return };
    let mut out = Vec::new();
    if r.take(1 << 28).read_to_end(&mut out).is_err() {
        return;
    }
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let _ = read_bytes(out, &opts);
});
