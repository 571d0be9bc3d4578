//! Bytes of a `.qs2`, `.qdata` or `.qs` file (told by their magic, as
//! every reader tells them) -> read; on success, list it, write it back as
//! an `.rds` stream and read that again: qs2's container (blocks, shuffle,
//! XXH3-64), qs's container (zstd, lz4, stream and plain modes, XXH32),
//! and both encodings as the readers meet them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::read::summary;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::write_document;
use rdarrow_arrow::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    let _ = summary::describe(&doc);
    if let Ok(bytes) = write_document(&doc, Vec::new()) {
        let again = read_bytes(bytes, &opts);
        assert!(again.is_ok(), "a file read and written back does not read again: {:?}", again.err());
    }
});
