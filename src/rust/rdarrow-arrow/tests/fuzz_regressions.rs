//! Inputs the fuzz campaigns (src/rust/fuzz) found, kept as regression
//! tests. Each must end in a value or an error, and no single allocation may
//! exceed what the input justifies: this test binary counts the largest
//! allocation request (a file's declared lengths must never be allocated
//! up front).

use rdarrow_arrow::table_from_object;

use rdarrow_arrow::TableOptions;
use rdarrow_arrow::tree::altrep;
use rdarrow_arrow::read_bytes;
use rdarrow_arrow::checks::validate;
use rdarrow_arrow::ErrorKind;
use rdarrow_arrow::RObject;
use rdarrow_arrow::ReadOptions;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LARGEST.fetch_max(new, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MAX_ALLOCATION: usize = 64 << 20;

/// Parse, and on success convert every top-level object to Arrow.
fn exercise(bytes: &[u8]) -> Option<ErrorKind> {
    let opts = ReadOptions {
        max_depth: 500,
        ..Default::default()
    };
    let doc = match read_bytes(bytes.to_vec(), &opts) {
        Ok(d) => d,
        Err(e) => return Some(e.kind),
    };
    let mut last = None;
    for (_, obj) in doc.objects() {
        let _ = validate::check_for_r(obj, &doc.refs);
        if let Err(e) = table_from_object(&doc, obj, &TableOptions::default()) {
            last = Some(e.kind);
        }
    }
    last
}

#[test]
fn fuzz_findings_end_in_errors_without_huge_allocations() {
    // A native-binary stream whose character vector declares 2^31-ish
    // elements and mixes encodings at element 2: the per-element encoding
    // list was sized by the declared count (4 GB).
    let declared_strings: &[u8] = &[
        0x42, 0x0a, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x03, 0x02, 0x00, 0x10,
        0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x7a, 0x09, 0x00, 0x04, 0x00, 0x03, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x04, 0x00, 0x02, 0x00,
        0x00, 0x00, 0x32, 0x33,
    ];
    LARGEST.store(0, Ordering::Relaxed);
    assert!(exercise(declared_strings).is_some());
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < MAX_ALLOCATION,
        "largest allocation {largest} bytes"
    );

    // serialize(1:1e12): a compact real sequence of 10^12 elements (8 TB
    // expanded) in 134 bytes. It parses and is well formed for R (which
    // keeps it compact); expanding it (for Arrow) is a limit error.
    let huge_sequence: &[u8] = &[
        0x58, 0x0a, 0x00, 0x00, 0x00, 0x03, 0x00, 0x04, 0x02, 0x02, 0x00, 0x03, 0x05, 0x00, 0x00,
        0x00, 0x00, 0x05, 0x55, 0x54, 0x46, 0x2d, 0x38, 0x00, 0x00, 0x00, 0xee, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x04, 0x00, 0x09, 0x00, 0x00, 0x00, 0x0f, 0x63, 0x6f,
        0x6d, 0x70, 0x61, 0x63, 0x74, 0x5f, 0x72, 0x65, 0x61, 0x6c, 0x73, 0x65, 0x71, 0x00, 0x00,
        0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x04, 0x00, 0x09, 0x00, 0x00, 0x00, 0x04, 0x62,
        0x61, 0x73, 0x65, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0xfe, 0x00, 0x00, 0x00, 0x0e, 0x00, 0x00, 0x00,
        0x03, 0x42, 0x6d, 0x1a, 0x94, 0xa2, 0x00, 0x00, 0x00, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x3f, 0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfe,
    ];
    LARGEST.store(0, Ordering::Relaxed);
    let doc =
        read_bytes(huge_sequence.to_vec(), &ReadOptions::default()).expect("R's own stream parses");
    let RObject::Altrep(a) = &doc.root else {
        panic!("not an ALTREP node")
    };
    validate::check_for_r(&doc.root, &doc.refs).expect("well formed for R without expanding");
    assert_eq!(
        altrep::expand(a, &doc.refs).unwrap_err().kind,
        ErrorKind::Limit
    );
    assert_eq!(exercise(huge_sequence), Some(ErrorKind::Limit));
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(
        largest < MAX_ALLOCATION,
        "largest allocation {largest} bytes"
    );

    // The same sequence with an increment of 2, which R refuses to read.
    let mut bad_increment = huge_sequence.to_vec();
    let at = bad_increment.len() - 12; // the increment's first byte: 0x3f 0xf0 (1.0) -> 0x40 0x00 (2.0)
    bad_increment[at] = 0x40;
    bad_increment[at + 1] = 0x00;
    let doc = read_bytes(bad_increment, &ReadOptions::default()).unwrap();
    assert!(validate::check_for_r(&doc.root, &doc.refs).is_err());
}

/// Arrow IPC streams whose buffers point past the message body (the IPC
/// reader panics on them), a file whose footer lists a 24 GB block and a
/// file whose lz4 buffer declares 17 TB (the reader would allocate them):
/// the engine reports a corrupt file, or one over the memory limit.
#[test]
fn ipc_findings_are_corrupt_errors() {
    // as a user would limit decoding (options(rdarrow.max_memory)); the
    // fuzz targets run with the same limit
    let limit = 1 << 30;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let reader_finding = !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("frame-"));
        if reader_finding
            && path
                .extension()
                .is_some_and(|e| e == "arrows" || e == "arrow")
        {
            LARGEST.store(0, Ordering::Relaxed);
            let bytes = std::fs::read(&path).unwrap();
            // a compressed buffer declaring a huge size is over the memory
            // limit; the others are malformed
            let want = if path.to_string_lossy().contains("declares") {
                ErrorKind::Limit
            } else {
                ErrorKind::Corrupt
            };
            // (the zstd one declares 12 GB: over the 1 GiB limit)
            let err =
                rdarrow_arrow::files::ipc::read_ipc_bytes(bytes, "the input", limit).unwrap_err();
            assert_eq!(err.kind, want, "{}: {err}", path.display());
            let err = rdarrow_arrow::files::ipc::read_ipc_file(&path, limit).unwrap_err();
            assert_eq!(err.kind, want, "{}: {err}", path.display());
            let largest = LARGEST.load(Ordering::Relaxed);
            assert!(
                largest < MAX_ALLOCATION,
                "{}: largest allocation {largest} bytes",
                path.display()
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 8);
}

/// An IPC stream with no batches whose schema has a map column without
/// entry fields: arrow panics making an empty array of that type; the
/// engine reports a corrupt file.
#[test]
fn map_type_without_entry_fields_is_a_corrupt_error() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-findings/frame-map-without-entry-fields.arrows");
    let (schema, batches) = rdarrow_arrow::files::ipc::read_ipc_file(&path, 1 << 30).unwrap();
    let err = rdarrow_arrow::from_arrow::frame::frame_from_batches(&schema, &batches)
        .err()
        .unwrap();
    assert_eq!(err.kind, ErrorKind::Corrupt, "{err}");
}

/// Structures whose parts disagree (`structure-*.rds`: a sparse matrix
/// whose pointers decrease, as in the damaged single-cell files that
/// crashed scipy; an index past its rows; a factor code past its levels),
/// and the inputs the `structure_checks` campaigns found
/// (`structure-crash-*`: an S4 class whose `package` attribute is
/// `character(0)`, whose first string was taken without a bounds check):
/// the checks refuse each structure that disagrees, and what they pass is
/// used by `structure::exercise` without a panic.
#[test]
fn structure_findings_are_refused_by_the_checks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("structure-"))
        {
            continue;
        }
        let doc = read_bytes(std::fs::read(&path).unwrap(), &ReadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut refused = 0;
        for (_, obj) in doc.objects() {
            refused += rdarrow_arrow::checks::consistency::exercise(obj, &doc.refs, 200).1;
            // and the Arrow bridge refuses it as corrupt, never panics
            let err = table_from_object(&doc, obj, &TableOptions::default()).err();
            if let Some(e) = err {
                assert_ne!(e.kind, ErrorKind::Internal, "{}: {e}", path.display());
            }
        }
        // a campaign's crash input (`structure-crash-*`) must only end
        // without a panic; the others are structures to refuse
        let crash = path.to_string_lossy().contains("structure-crash-");
        assert!(crash || refused >= 1, "{}: nothing refused", path.display());
        seen += 1;
    }
    assert!(seen >= 4, "{seen} structure findings");
}

/// Tensor messages the tensor_message campaign found: each is refused as
/// what it is, or reads as an array whose tensor, written again, reads
/// back the same.
#[test]
fn tensor_findings_are_refused_or_read_back() {
    use rdarrow_arrow::files::tensor::read_tensor;
    use rdarrow_arrow::files::tensor::TensorParts;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with("tensor-") {
            continue;
        }
        seen += 1;
        let bytes = std::fs::read(&path).unwrap();
        match read_tensor(&bytes.as_slice(), "x", 1 << 30) {
            // a dimension named with an embedded NUL: R cannot hold it
            Err(e) => assert!(e.message.contains("NUL") || e.kind == ErrorKind::Corrupt, "{}: {}", path.display(), e.message),
            Ok((obj, refs)) => {
                let mut out = Vec::new();
                TensorParts::of(&obj, &refs).unwrap().write(&mut out).unwrap();
                read_tensor(&out.as_slice(), "again", 1 << 30).unwrap();
            }
        }
    }
    assert!(seen > 0);
    assert!(LARGEST.load(Ordering::Relaxed) < MAX_ALLOCATION);
}

/// Files of qs and qs2 the qs_formats campaign found: a damaged `.qdata`
/// file whose reader's threads ran their thread-local destructors after
/// the read had returned (now joined). Each ends in an error, with no
/// allocation its bytes do not justify.
#[test]
fn qs_findings_end_in_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-findings");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with("qs-") {
            continue;
        }
        seen += 1;
        let bytes = std::fs::read(&path).unwrap();
        assert!(exercise(&bytes).is_some(), "{} read without an error", path.display());
    }
    assert!(seen > 0);
    assert!(LARGEST.load(Ordering::Relaxed) < MAX_ALLOCATION);
}
