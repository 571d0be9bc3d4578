//! Valid compressed R data files, damaged as the input says -> read: a
//! read that succeeds must give back exactly the objects of the intact
//! file (a damaged file never reads as different data), and a read of a
//! file cut short must fail. The intact files are made once: a data frame
//! of doubles, integers, strings and a factor as an `.rds` stream, written
//! by zlib (as R's gzfile), by rdarrow's own writer (gzip with its index, bzip2,
//! xz, zstd).
//!
//! Input: byte 0 picks the file; byte 1's low bit says whether the file is
//! also cut short by the next two bytes' count; then edits of 5 bytes each
//! (a position, little-endian u32 taken modulo the length, and a byte XORed
//! in there).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rdarrow_arrow::compression::Compression;
use rdarrow_arrow::{read_bytes, write_document, write_file, ReadOptions};
use std::io::Write;
use std::sync::OnceLock;

/// An `.rds` stream (XDR, version 3) of a data frame with `n` rows.
fn frame_rds(n: i32) -> Vec<u8> {
    let int = |s: &mut Vec<u8>, v: i32| s.extend(v.to_be_bytes());
    let chars = |s: &mut Vec<u8>, t: &str| {
        s.extend(0x0004_0009i32.to_be_bytes());
        s.extend((t.len() as i32).to_be_bytes());
        s.extend(t.as_bytes());
    };
    let mut s = b"X\n".to_vec();
    for v in [3, 0x040202, 0x030500, 5] {
        int(&mut s, v);
    }
    s.extend(b"UTF-8");
    int(&mut s, 0x0000_0313); // VECSXP, object, attributes
    int(&mut s, 4);
    int(&mut s, 14);
    int(&mut s, n);
    for i in 0..n {
        s.extend((f64::from(i) * 0.37).sin().to_be_bytes());
    }
    int(&mut s, 13);
    int(&mut s, n);
    for i in 0..n {
        int(&mut s, i.wrapping_mul(7919) % 1000);
    }
    int(&mut s, 16);
    int(&mut s, n);
    for i in 0..n {
        chars(&mut s, &format!("item {i}"));
    }
    // a factor: codes, then levels and class
    int(&mut s, 0x0000_030d);
    int(&mut s, n);
    for i in 0..n {
        int(&mut s, 1 + i % 3);
    }
    int(&mut s, 0x402);
    int(&mut s, 1);
    chars(&mut s, "levels");
    int(&mut s, 16);
    int(&mut s, 3);
    for l in ["a", "b", "c"] {
        chars(&mut s, l);
    }
    int(&mut s, 0x402);
    int(&mut s, 1);
    chars(&mut s, "class");
    int(&mut s, 16);
    int(&mut s, 1);
    chars(&mut s, "factor");
    int(&mut s, 254);
    // the frame's attributes: names, class, row.names
    int(&mut s, 0x402);
    int(&mut s, 1);
    chars(&mut s, "names");
    int(&mut s, 16);
    int(&mut s, 4);
    for l in ["x", "i", "s", "f"] {
        chars(&mut s, l);
    }
    int(&mut s, 0x402);
    int(&mut s, 0xff + (2 << 8)); // REFSXP to "class"
    int(&mut s, 16);
    int(&mut s, 1);
    chars(&mut s, "data.frame");
    int(&mut s, 0x402);
    int(&mut s, 1);
    chars(&mut s, "row.names");
    int(&mut s, 13);
    int(&mut s, 2);
    int(&mut s, i32::MIN);
    int(&mut s, -n);
    int(&mut s, 254);
    s
}

struct Intact {
    files: Vec<Vec<u8>>,
    want: Vec<u8>,
}

fn intact() -> &'static Intact {
    static FILES: OnceLock<Intact> = OnceLock::new();
    FILES.get_or_init(|| {
        let plain = frame_rds(3000);
        let doc = read_bytes(plain.clone(), &ReadOptions::default()).expect("the intact frame reads");
        let want = write_document(&doc, Vec::new()).expect("the intact frame writes");
        let mut files = Vec::new();
        // zlib's gzip, as R's gzfile() writes it
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        gz.write_all(&plain).unwrap();
        files.push(gz.finish().unwrap());
        let dir = std::env::temp_dir().join(format!("rdarrow-fuzz-damaged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for kind in [Compression::Gzip, Compression::Bzip2, Compression::Xz, Compression::Zstd] {
            let path = dir.join(kind.name());
            write_file(&doc, &path, kind, Some(1)).unwrap();
            files.push(std::fs::read(&path).unwrap());
        }
        let _ = std::fs::remove_dir_all(&dir);
        Intact { files, want }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let it = intact();
    let mut file = it.files[pick as usize % it.files.len()].clone();
    let mut rest = rest;
    let mut cut = false;
    if let Some((&mode, more)) = rest.split_first() {
        rest = more;
        if mode & 1 == 1 && rest.len() >= 2 {
            let by = 1 + u16::from_le_bytes([rest[0], rest[1]]) as usize % file.len().min(4096);
            file.truncate(file.len() - by);
            cut = true;
            rest = &rest[2..];
        }
    }
    if file.len() < 3 {
        return;
    }
    for edit in rest.chunks_exact(5) {
        let at = u32::from_le_bytes([edit[0], edit[1], edit[2], edit[3]]) as usize;
        // past the magic (a flipped magic is another format, refused at once)
        let at = 2 + at % (file.len() - 2);
        file[at] ^= edit[4];
    }
    let opts = ReadOptions { max_depth: 500, max_memory: Some(1 << 30), ..Default::default() };
    if let Ok(doc) = read_bytes(file, &opts) {
        assert!(!cut, "a file cut short read without an error");
        let got = write_document(&doc, Vec::new()).expect("a document read writes");
        assert!(got == it.want, "a damaged file read without an error as different data");
    }
});
