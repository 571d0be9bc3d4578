//! Bytes of a file or stream -> parse -> each top-level object to Arrow,
//! in one batch and in batches of 3 rows; then as `rdata_to_arrow()` does
//! it: read again with columns converted while reading, the first object
//! moved out and converted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::table_from_object;
use rdarrow_arrow::table_from_owned;
use rdarrow_arrow::EarlyColumns;
use rdarrow_arrow::TableOptions;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::ReadOptions;

fuzz_target!(|data: &[u8]| {
    // a decoding memory limit below libFuzzer's malloc limit
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    let one = TableOptions::default();
    let chunked = TableOptions { chunk_size: Some(3), ..Default::default() };
    for (_, obj) in doc.objects() {
        let _ = table_from_object(&doc, obj, &one);
        let _ = table_from_object(&doc, obj, &chunked);
    }
    drop(doc);

    let early = EarlyColumns::new(Some("UTC".into()));
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), consumer: Some(early.consumer()), ..Default::default() };
    let Ok(mut doc) = read_bytes(data.to_vec(), &opts) else { return };
    let names: Vec<String> = doc.objects().iter().map(|(n, _)| String::from_utf8_lossy(n).into_owned()).collect();
    let first = names.first().filter(|n| !n.is_empty()).cloned();
    if let Ok((_, obj)) = doc.take_table_object(first.as_deref(), "value", &rdarrow_arrow::mapping::objects::converts) {
        let _ = table_from_owned(&doc, obj, &TableOptions { chunk_size: Some(3), ..Default::default() });
    }
});
