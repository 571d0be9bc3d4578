//! Damaged files never read as different data: files of every
//! compression (R's own from the peer corpus, and rdarrow's, written on
//! several cores), with single bits flipped at many places and cut short
//! by 1, 4, 8 and 100 bytes and at the middle, read from memory and from
//! a file; each read fails with an error or gives back exactly the
//! objects of the intact file (compared as their serialization).

use rdarrow_format::{
    compression::Compression, decompress_bytes, read_bytes, read_file, write_document,
    write_file_threads, ErrorKind, ReadOptions,
};
use std::path::{Path, PathBuf};

fn peers_dir() -> Option<PathBuf> {
    let dir = match std::env::var("RDARROW_PEERS_DIR") {
        Ok(d) => PathBuf::from(d),
        Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/corpus/peers"),
    };
    dir.is_dir().then_some(dir)
}

fn serialized(doc: &rdarrow_format::Document) -> Vec<u8> {
    write_document(doc, Vec::new()).unwrap()
}

/// Where single bits are flipped: `n` places spread over the file, past
/// its first 2 bytes (a flipped magic is another format, told apart at once).
fn flip_places(len: usize, n: usize) -> Vec<usize> {
    (0..n).map(|i| 2 + (len - 2) * i / n).collect()
}

/// The ways a file is damaged: (what, bytes).
fn damaged(bytes: &[u8], flips: usize) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (i, at) in flip_places(bytes.len(), flips).into_iter().enumerate() {
        let mut b = bytes.to_vec();
        b[at] ^= 1 << (i % 8);
        out.push((format!("bit {} of byte {at} flipped", i % 8), b));
    }
    // the last bytes flipped too: the trailers' checksums and lengths
    for back in 1..=8usize.min(bytes.len() - 2) {
        let mut b = bytes.to_vec();
        let at = bytes.len() - back;
        b[at] ^= 0x10;
        out.push((format!("byte {at} (of the trailer) flipped"), b));
    }
    for cut in [1usize, 4, 8, 100, bytes.len() / 2] {
        if cut < bytes.len() {
            out.push((
                format!("cut short by {cut} bytes"),
                bytes[..bytes.len() - cut].to_vec(),
            ));
        }
    }
    out
}

#[derive(Default, Debug)]
struct Tally {
    errors: usize,
    identical: usize,
    truncated_said: usize,
}

/// Read each damaged variant of `bytes` (from memory, and from a file in
/// `dir`) and check it fails or gives back `want`.
fn check(name: &str, bytes: &[u8], want: &[u8], dir: &Path, flips: usize, tally: &mut Tally) {
    for (what, b) in damaged(bytes, flips) {
        let cut = what.starts_with("cut");
        let file = dir.join("damaged");
        std::fs::write(&file, &b).unwrap();
        for (route, got) in [
            ("memory", read_bytes(b.clone(), &ReadOptions::default())),
            ("file", read_file(file.as_path(), &ReadOptions::default())),
        ] {
            match got {
                Err(e) => {
                    tally.errors += 1;
                    if cut {
                        assert!(
                            matches!(e.kind, ErrorKind::Truncated | ErrorKind::Corrupt),
                            "{name}, {what}, {route}: {e}"
                        );
                        if e.kind == ErrorKind::Truncated {
                            tally.truncated_said += 1;
                        }
                    }
                }
                Ok(doc) => {
                    assert!(
                        !cut,
                        "{name}, {what}, {route}: a file cut short read without an error"
                    );
                    assert!(
                        serialized(&doc) == want,
                        "{name}, {what}, {route}: read without an error as different data"
                    );
                    tally.identical += 1;
                }
            }
        }
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rdarrow-damaged-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn damaged_files_of_r_never_read_as_different_data() {
    let Some(peers) = peers_dir() else {
        eprintln!("peer corpus not found; skipping");
        return;
    };
    let dir = temp_dir("peers");
    // per compression, the largest few files of the corpus under 2 MB
    let mut files: Vec<(Compression, u64, PathBuf)> = Vec::new();
    let mut todo = vec![peers];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
                continue;
            }
            let len = e.metadata().unwrap().len();
            if !(1000..2_000_000).contains(&len) {
                continue;
            }
            let head = std::fs::read(&p).unwrap();
            let kind = Compression::detect(&head[..head.len().min(12)]);
            if matches!(
                kind,
                Compression::Gzip | Compression::Bzip2 | Compression::Xz | Compression::Zstd
            ) && read_bytes(head, &ReadOptions::default()).is_ok()
            {
                files.push((kind, len, p));
            }
        }
    }
    files.sort_by(|a, b| (a.0.name(), std::cmp::Reverse(a.1)).cmp(&(b.0.name(), std::cmp::Reverse(b.1))));
    let mut tallies = std::collections::BTreeMap::new();
    let mut per_kind = std::collections::BTreeMap::<&str, usize>::new();
    for (kind, _, path) in &files {
        let n = per_kind.entry(kind.name()).or_default();
        if *n == 3 {
            continue;
        }
        *n += 1;
        let bytes = std::fs::read(path).unwrap();
        let want = serialized(&read_bytes(bytes.clone(), &ReadOptions::default()).unwrap());
        let tally = tallies.entry(kind.name()).or_insert_with(Tally::default);
        check(&path.display().to_string(), &bytes, &want, &dir, 40, tally);
    }
    eprintln!("damaged peer files: {tallies:?}");
    for k in ["gzip", "bzip2", "xz"] {
        assert!(per_kind.get(k).copied().unwrap_or(0) > 0, "no {k} file in the corpus");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An `.rds` stream of one double vector of `n` elements, uncompressed.
fn doubles_rds(n: usize) -> Vec<u8> {
    let mut s = b"X\n".to_vec();
    for v in [3i32, 0x040202, 0x030500, 5] {
        s.extend(v.to_be_bytes());
    }
    s.extend(b"UTF-8");
    s.extend(14i32.to_be_bytes());
    s.extend((n as i32).to_be_bytes());
    for i in 0..n {
        s.extend(((i as f64) * 0.37).sin().to_be_bytes());
    }
    s
}

#[test]
fn damaged_files_rdarrow_wrote_on_several_cores_never_read_as_different_data() {
    let dir = temp_dir("own");
    // 9 MB: two blocks compressed apart (a gzip file with an index,
    // inflated on every core when read from a file)
    let doc = read_bytes(doubles_rds(1_100_000), &ReadOptions::default()).unwrap();
    let want = serialized(&doc);
    let mut tallies = std::collections::BTreeMap::new();
    for kind in [Compression::Gzip, Compression::Bzip2, Compression::Xz, Compression::Zstd] {
        let path = dir.join(format!("own.{}", kind.name()));
        write_file_threads(&doc, &path, kind, Some(1), 2).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let tally = tallies.entry(kind.name()).or_insert_with(Tally::default);
        check(kind.name(), &bytes, &want, &dir, 16, tally);
    }
    // small files, inflated whole in memory
    let doc = read_bytes(doubles_rds(20_000), &ReadOptions::default()).unwrap();
    let want = serialized(&doc);
    for kind in [Compression::Gzip, Compression::Bzip2, Compression::Xz, Compression::Zstd] {
        let path = dir.join(format!("small.{}", kind.name()));
        write_file_threads(&doc, &path, kind, None, 2).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let tally = tallies.entry(kind.name()).or_insert_with(Tally::default);
        check(kind.name(), &bytes, &want, &dir, 40, tally);
    }
    eprintln!("damaged files of rdarrow's: {tallies:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn decompress_bytes_checks_the_trailer_too() {
    let doc = read_bytes(doubles_rds(1000), &ReadOptions::default()).unwrap();
    let dir = temp_dir("whole");
    let path = dir.join("x.rds");
    write_file_threads(&doc, &path, Compression::Gzip, None, 1).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 6] ^= 1; // the CRC-32
    assert!(decompress_bytes(bytes).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- salvage ----------------------------------------------------------

fn int(v: i32) -> [u8; 4] {
    v.to_be_bytes()
}

fn symbol(out: &mut Vec<u8>, name: &str) {
    out.extend(int(1)); // SYMSXP
    out.extend(int(0x0004_0009)); // CHARSXP, ASCII
    out.extend(int(name.len() as i32));
    out.extend(name.as_bytes());
}

fn reals(out: &mut Vec<u8>, n: usize, from: f64) {
    out.extend(int(14));
    out.extend(int(n as i32));
    for i in 0..n {
        out.extend((from + i as f64).to_be_bytes());
    }
}

/// A `save()` file of `a` (1000 doubles), `b` (a named list of three
/// vectors of 1000 doubles) and `c` (10 doubles), uncompressed; with the
/// offsets where `b`'s second element and `c` start.
fn three_objects() -> (Vec<u8>, usize, usize) {
    let mut s = b"RDX3\nX\n".to_vec();
    for v in [3i32, 0x040202, 0x030500, 5] {
        s.extend(int(v));
    }
    s.extend(b"UTF-8");
    s.extend(int(0x402));
    symbol(&mut s, "a");
    reals(&mut s, 1000, 0.0);
    s.extend(int(0x402));
    symbol(&mut s, "b");
    s.extend(int(0x213)); // VECSXP with attributes
    s.extend(int(3));
    reals(&mut s, 1000, 1.0);
    let second = s.len();
    reals(&mut s, 1000, 2.0);
    reals(&mut s, 1000, 3.0);
    s.extend(int(0x402));
    symbol(&mut s, "names");
    s.extend(int(16));
    s.extend(int(3));
    for n in ["x", "y", "z"] {
        s.extend(int(0x0004_0009));
        s.extend(int(1));
        s.extend(n.as_bytes());
    }
    s.extend(int(254));
    s.extend(int(0x402));
    let third = s.len();
    symbol(&mut s, "c");
    reals(&mut s, 10, 4.0);
    s.extend(int(254));
    (s, second, third)
}

fn salvaging() -> ReadOptions {
    ReadOptions {
        salvage: true,
        ..ReadOptions::default()
    }
}

#[test]
fn salvage_keeps_the_objects_and_elements_before_the_damage() {
    let (file, second, third) = three_objects();
    let intact = read_bytes(file.clone(), &ReadOptions::default()).unwrap();
    assert!(intact.damage.is_none());
    let objects = |d: &rdarrow_format::Document| -> Vec<(String, Vec<u8>)> {
        d.objects()
            .into_iter()
            .map(|(n, o)| (String::from_utf8(n).unwrap(), rdarrow_format::object_to_rds(d, o).unwrap()))
            .collect()
    };
    let whole = objects(&intact);
    assert_eq!(whole.len(), 3);

    // cut inside c: a and b whole
    let cut = file[..third + 20].to_vec();
    let e = read_bytes(cut.clone(), &ReadOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
    assert!(e.to_string().contains("read it with salvage to recover what is intact"), "{e}");
    let got = read_bytes(cut, &salvaging()).unwrap();
    assert_eq!(objects(&got), whole[..2].to_vec());
    let warning = got.damage.unwrap();
    assert!(warning.contains("2 objects whole ('a', 'b')"), "{warning}");
    assert!(warning.contains("nothing of object 'c'"), "{warning}");

    // cut inside b's second element: a whole, b's first element kept
    let cut = file[..second + 100].to_vec();
    let got = read_bytes(cut, &salvaging()).unwrap();
    let got_objects = got.objects();
    assert_eq!(got_objects.len(), 2);
    assert_eq!(objects(&got)[0], whole[0]);
    let (name, b) = &got_objects[1];
    assert_eq!(name, b"b");
    let rdarrow_format::RObject::Vector(v) = b else { panic!("b is not a list") };
    assert!(v.attributes.is_none());
    let rdarrow_format::tree::VectorData::List(items) = &v.data else { panic!("b is not a list") };
    assert_eq!(items.len(), 1);
    let warning = got.damage.unwrap();
    assert!(warning.contains("1 object whole ('a')"), "{warning}");
    assert!(warning.contains("the first 1 of the 3 elements of object 'b' whole"), "{warning}");
    assert!(warning.contains("in object 'b'"), "{warning}");

    // a bit flipped where the stream still parses, in a gzip file: the
    // CRC fails; salvage gives the data with a warning
    let doc = read_bytes(file.clone(), &ReadOptions::default()).unwrap();
    let dir = temp_dir("salvage");
    let path = dir.join("x.RData");
    write_file_threads(&doc, &path, Compression::Gzip, None, 1).unwrap();
    let mut gz = std::fs::read(&path).unwrap();
    let n = gz.len();
    gz[n - 7] ^= 4; // the CRC-32
    let e = read_bytes(gz.clone(), &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("salvage"), "{e}");
    let got = read_bytes(gz, &salvaging()).unwrap();
    assert_eq!(objects(&got), whole);
    let warning = got.damage.unwrap();
    assert!(warning.contains("their values may be wrong"), "{warning}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn salvage_keeps_a_list_cut_in_its_attributes_with_the_names_read_whole() {
    let (file, _, third) = three_objects();
    let elements = |d: &rdarrow_format::Document| -> (usize, Option<Vec<Vec<u8>>>) {
        let objects = d.objects();
        assert_eq!(objects.len(), 2);
        let (name, b) = &objects[1];
        assert_eq!(name, b"b");
        let rdarrow_format::RObject::Vector(v) = b else { panic!("b is not a list") };
        let rdarrow_format::tree::VectorData::List(items) = &v.data else { panic!("b is not a list") };
        let names = b
            .attribute(&d.refs, "names")
            .and_then(|n| n.as_strings())
            .map(|s| (0..s.len()).map(|i| s.get(i).unwrap().to_vec()).collect());
        (items.len(), names)
    };
    // cut after b's names, before the end of its attributes
    let got = read_bytes(file[..third - 8].to_vec(), &salvaging()).unwrap();
    assert_eq!(elements(&got), (3, Some(vec![b"x".to_vec(), b"y".to_vec(), b"z".to_vec()])));
    let warning = got.damage.clone().unwrap();
    assert!(warning.contains("1 object whole ('a'); all 3 elements of object 'b' whole, with their names"), "{warning}");
    // cut inside the names: the elements, by position
    let got = read_bytes(file[..third - 10].to_vec(), &salvaging()).unwrap();
    assert_eq!(elements(&got), (3, None));
    let warning = got.damage.clone().unwrap();
    assert!(warning.contains("all 3 elements of object 'b' whole, by position"), "{warning}");
    // which object a table takes: the one named, never another
    let mut doc = read_bytes(file[..third - 8].to_vec(), &salvaging()).unwrap();
    let any = |_: &rdarrow_format::RObject, _: &rdarrow_format::RefTable| true;
    let e = doc.choose_table_object(None, "x", &any).unwrap_err();
    assert!(e.to_string().contains("choose one by name: 'a', 'b'"), "{e}");
    let (name, b) = doc.take_table_object(Some("b"), "x", &any).unwrap();
    assert_eq!(name, "b");
    assert!(b.inherits(&doc.refs, "data.frame"), "the whole columns of b as a table");
    assert!(doc.damage_for("b").unwrap().ends_with("returned: what was kept of object 'b'"));
    let e = doc.take_table_object(Some("c"), "x", &any).unwrap_err();
    assert!(e.to_string().contains("not found in the part of the file read before the damage"), "{e}");
}

#[test]
fn a_dataset_and_a_tensor_take_of_a_salvaged_file_only_what_an_intact_file_gives() {
    let (file, second, third) = three_objects();
    // cut in b's attributes: a whole, b's elements kept
    let cut = file[..third - 8].to_vec();
    // every data frame, unnamed: none was read whole (b lost its attributes)
    let mut doc = read_bytes(cut.clone(), &salvaging()).unwrap();
    let e = doc.take_frames(None, "x").unwrap_err();
    assert!(e.to_string().contains("no data frame was read whole before the damage"), "{e}");
    assert!(e.to_string().contains("it holds 'a', 'b'"), "{e}");
    // intact, the same file says it holds no data frame
    let mut intact = read_bytes(file.clone(), &ReadOptions::default()).unwrap();
    let e = intact.take_frames(None, "x").unwrap_err();
    assert!(e.to_string().contains("the file holds no data frame"), "{e}");
    // b named: what was kept of it, as a table; a named: whole
    let mut doc = read_bytes(cut.clone(), &salvaging()).unwrap();
    let taken = doc.take_frames(Some("b"), "x").unwrap();
    assert_eq!(taken.len(), 1);
    assert!(taken[0].1.inherits(&doc.refs, "data.frame"), "the whole columns of b as a table");
    let said = doc.damage_for_all(&["a", "b"]).unwrap();
    assert!(said.ends_with("returned: object 'a', read whole and what was kept of object 'b'"), "{said}");
    assert!(doc.damage_for_all(&["a"]).unwrap().ends_with("returned: object 'a', read whole"));
    let nothing: [&str; 0] = [];
    assert!(doc.damage_for_all(&nothing).unwrap().ends_with("returned: nothing"));
    // an intact file says nothing
    assert_eq!(intact.damage_for_all(&["a"]), None);
    // a rule taking the file's only object of a kind cannot tell it
    let doc = read_bytes(file[..second + 16].to_vec(), &salvaging()).unwrap();
    let e = doc.choice_lost("x");
    assert!(e.to_string().contains("which object the file would give is not known"), "{e}");
    assert!(e.to_string().contains("choose one by name: 'a'"), "{e}");
}
