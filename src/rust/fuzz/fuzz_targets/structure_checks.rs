//! Bytes of a file or stream -> parse -> every object the tree holds (list
//! elements and S4 slots, at any depth) through the structure checks that
//! guard the Python values, scipy matrices and AnnData objects
//! (`rdarrow_arrow::checks::consistency`); where a check passes, its promise is used
//! as those consumers use it: every entry of a sparse matrix through its
//! pointers and indices, each dimension's names, each factor code as an
//! index into its levels. A panic is a check that let a disagreeing
//! structure through.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::checks::consistency;
use rdarrow_arrow::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(data.to_vec(), &opts) else { return };
    for (_, obj) in doc.objects() {
        let _ = consistency::exercise(obj, &doc.refs, 200);
    }
});
