//! An interrupted layout write leaves the old file and no temporary file.
//! (Its own test binary: cancellation is process-wide.)

use rdarrow_format::write::layout::{write_layout_file, Layout, StringItem, StringSource};
use rdarrow_format::{Compression, ErrorKind};
use std::sync::Arc;

struct Words(Vec<String>);

impl StringSource for Words {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn item(&self, i: usize) -> StringItem<'_> {
        StringItem {
            flags: 0x0004_0009,
            bytes: Some(self.0[i].as_bytes()),
        }
    }
}

#[test]
fn a_cancelled_write_leaves_the_old_file_and_no_temporary_file() {
    let dir = std::env::temp_dir().join(format!("rdarrow-layout-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ints: Vec<i32> = (0..3_000_000).collect();
    let words = Arc::new(Words((0..100_000).map(|i| format!("word{i}")).collect()));
    let mut layout = Layout::new();
    layout.put(b"RDX3\nX\n");
    layout.ints(&ints[..]);
    layout.strings(words);
    let layout = layout.finish(2);
    let path = dir.join("old.RData");
    std::fs::write(&path, b"old contents").unwrap();
    for kind in [Compression::None, Compression::Gzip, Compression::Xz] {
        rdarrow_format::base::cancel::cancel();
        let err = write_layout_file(
            &path,
            &Default::default(),
            &layout,
            kind,
            None,
            2,
            &mut |_| {},
        )
        .unwrap_err();
        rdarrow_format::base::cancel::reset();
        assert_eq!(
            err.kind,
            ErrorKind::Interrupted,
            "{kind:?}: {}",
            err.message
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "a temporary file remains"
        );
    }
    // and the same layout written without interruption replaces it
    write_layout_file(
        &path,
        &Default::default(),
        &layout,
        Compression::Gzip,
        None,
        2,
        &mut |_| {},
    )
    .unwrap();
    assert_ne!(std::fs::read(&path).unwrap(), b"old contents");
    std::fs::remove_dir_all(&dir).unwrap();
}
