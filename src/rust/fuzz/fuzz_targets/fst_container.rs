//! Bytes of an `.fst` file, its header hashes made right again (so that
//! the fuzzer reaches what lies behind them: fst's hashes would stop every
//! edit at the first header) -> read; on success, list it, write it back
//! as an `.fst` file and read that again: fst's container (headers, the
//! column names, block indexes, LZ4/ZSTD blocks, shuffles and packings)
//! and its columns turned into R's serialization.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::compression::fst::restore_header_hashes;
use rdarrow_arrow::read::summary;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::ReadOptions;

fuzz_target!(|data: &[u8]| {
    let mut b = data.to_vec();
    if restore_header_hashes(&mut b).is_none() {
        return;
    }
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    let Ok(doc) = read_bytes(b, &opts) else { return };
    let _ = summary::describe(&doc);
    let out = std::env::temp_dir().join(format!("fst-fuzz-{}.fst", std::process::id()));
    if rdarrow_arrow::write::fst::write_fst_file(&out, &Default::default(), &doc.root, &doc.refs, Some(60)).is_ok() {
        let again = std::fs::read(&out).map(|bytes| read_bytes(bytes, &opts));
        assert!(matches!(again, Ok(Ok(_))), "an fst file read and written back does not read again");
    }
    let _ = std::fs::remove_file(&out);
});
