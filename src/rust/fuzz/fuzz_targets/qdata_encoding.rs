//! qs2's qdata encoding without its container: the first byte says the
//! byte order (bit 0: big-endian), the rest is a decompressed `.qdata`
//! payload (tree, then data grouped by type) -> the R serialization the
//! reader makes of it -> parsed. Every length is checked against the
//! bytes before anything is reserved.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::read::qdata::QdataReader;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::ReadOptions;
use std::io::Read;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, payload)) = data.split_first() else { return };
    let Ok(r) = QdataReader::new(Box::new(std::io::Cursor::new(payload.to_vec())), flags & 1 == 1) else {
        return;
    };
    let mut stream = Vec::new();
    if r.take(1 << 28).read_to_end(&mut stream).is_err() {
        return;
    }
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let _ = read_bytes(stream, &opts);
});
