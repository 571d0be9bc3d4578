//! Bytes of a file or stream -> parse -> each top-level object to Arrow,
//! in one batch and in batches of 3 rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_core::arrow::{table_from_object, TableOptions};
use rdarrow_core::{read_bytes, ReadOptions};

fuzz_target!(|data: &[u8]| {
    // the decoding memory limit a user would set (options(rdarrow.max_memory)),
    // below libFuzzer's malloc limit
    rdarrow_core::read::set_max_decoded_bytes(1 << 30);
    let opts = ReadOptions { max_depth: 500, ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    let one = TableOptions::default();
    let chunked = TableOptions { chunk_size: Some(3), ..Default::default() };
    for (_, obj) in doc.objects() {
        let _ = table_from_object(&doc, obj, &one);
        let _ = table_from_object(&doc, obj, &chunked);
    }
});
