//! Conformance over the peer corpus (files written by real R, versions 2.7
//! to 4.6): every file parses, and re-serializing the tree reproduces the
//! decompressed stream byte for byte (ASCII after CR LF -> LF), both
//! written sequentially and laid out for the parallel writer (XDR).
//! Skipped when the corpus folder is absent.

use rdarrow_format::{decompress_bytes, read_bytes, write, write_document, Format, ReadOptions};
use std::path::{Path, PathBuf};

fn peers_dir() -> Option<PathBuf> {
    let dir = match std::env::var("RDARROW_PEERS_DIR") {
        Ok(d) => PathBuf::from(d),
        Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/corpus/peers"),
    };
    dir.is_dir().then_some(dir)
}

fn data_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            data_files(&p, out);
        } else {
            let name = p.file_name().unwrap().to_string_lossy().to_lowercase();
            let skip = name.starts_with("readme")
                || [".md", ".csv", ".txt", "license", "license_librdata"]
                    .iter()
                    .any(|s| name.ends_with(s));
            if !skip {
                out.push(p);
            }
        }
    }
}

#[test]
fn every_peer_file_parses_and_reserializes_exactly() {
    let Some(dir) = peers_dir() else {
        eprintln!("peer corpus not found; skipping");
        return;
    };
    let mut files = Vec::new();
    data_files(&dir, &mut files);
    files.sort();
    assert!(
        files.len() > 500,
        "expected the full corpus, found {} files",
        files.len()
    );
    let mut failures = Vec::new();
    let mut exact = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let doc = match read_bytes(bytes.clone(), &ReadOptions::default()) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{}: parse: {e}", f.display()));
                continue;
            }
        };
        let mut want = decompress_bytes(bytes).unwrap();
        if doc.header.crlf {
            want = String::from_utf8_lossy(&want)
                .replace("\r\n", "\n")
                .into_bytes();
        }
        let got = write_document(&doc, Vec::new()).unwrap();
        if doc.header.format == Format::Xdr {
            // the same stream laid out for the parallel writer
            let laid_out =
                write::layout_stream(doc.container, &doc.header, &doc.root, &doc.refs, 2)
                    .unwrap()
                    .to_vec();
            if laid_out != want {
                let at = laid_out
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(laid_out.len().min(want.len()));
                failures.push(format!(
                    "{}: laid-out stream differs at byte {at}",
                    f.display()
                ));
            }
        }
        if got == want {
            exact += 1;
        } else {
            let at = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            failures.push(format!(
                "{}: re-serialization differs at byte {at} (got {} bytes, want {})",
                f.display(),
                got.len(),
                want.len()
            ));
        }
    }
    eprintln!("peer corpus: {} files, {} byte-exact", files.len(), exact);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
