//! Bytes of a file or `serialize()` stream -> parse; on success, write it
//! back, list it, and expand the top-level ALTREP objects.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::tree::altrep;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::read::summary;
use rdarrow_arrow::write_document;
use rdarrow_arrow::RObject;
use rdarrow_arrow::ReadOptions;

fuzz_target!(|data: &[u8]| {
    // a decoding memory limit below libFuzzer's malloc limit
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    let _ = write_document(&doc, Vec::new());
    let _ = summary::describe(&doc);
    for (_, obj) in doc.objects() {
        if let RObject::Altrep(a) = obj {
            let _ = altrep::expand_within(a, &doc.refs, 1 << 30);
        }
    }
});
