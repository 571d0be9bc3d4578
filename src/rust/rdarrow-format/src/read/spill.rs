//! Payloads read by element range, so that a data frame larger than
//! memory converts one row group at a time.
//!
//! R's format stores a data frame column after column, and a compressed
//! stream can only be read from its start. The design: one pass parses
//! the file with the columns' payloads left in the stream
//! ([`crate::Placement::Defer`]: each becomes a
//! [`crate::tree::Deferred`] holding where it lies, and for strings a mark every
//! [`crate::tree::Deferred::STRIDE`] elements), while the decompressed bytes go to a
//! *spill file* beside the output ([`Tee`]). Rows `[a, b)` of any column
//! are then read back from there with positioned reads
//! ([`PayloadStore::read`], decoded beside the parser in `read/mod.rs`),
//! on any thread. An uncompressed file needs no
//! spill: its payloads are read from the file itself.
//!
//! The spill file is removed from its folder as soon as it is created
//! (on Linux; elsewhere when the store is dropped), so no error, interrupt
//! or crash leaves it behind; its disk space is freed when the conversion
//! ends. Memory is the parser's buffers plus what the caller reads.

use crate::base::error::{Error, Result};
use crate::base::positional::{read_at, write_all_at};
use crate::wire::decode::{ByteSource, Format, Input};

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where deferred payloads are read from: the spill file or the
/// uncompressed input, in the stream's primitive encoding.
pub struct PayloadStore {
    file: Arc<File>,
    format: Format,
    _remove: RemoveOnDrop,
}

/// A spill file to remove when done, where it could not be removed at
/// once.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Positioned reads of `[pos, end)` of a file, as a stream.
struct RangeReader {
    file: Arc<File>,
    pos: u64,
    end: u64,
}

impl Read for RangeReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = (buf.len() as u64).min(self.end.saturating_sub(self.pos)) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..want], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl PayloadStore {
    /// Payloads read from `file`, an uncompressed stream.
    pub fn in_file(file: File, format: Format) -> PayloadStore {
        PayloadStore {
            file: Arc::new(file),
            format,
            _remove: RemoveOnDrop(None),
        }
    }

    /// A store that holds nothing (for a document whose payloads were all
    /// read): an empty file in `dir`, removed at once.
    pub fn empty(dir: &Path, format: Format) -> Result<PayloadStore> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = dir.join(format!(
            "rdarrow-empty-{}-{:?}-{nanos}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        let file = File::create(&path).map_err(|e| Error::io(&e, "cannot create a spill file"))?;
        let _ = std::fs::remove_file(&path);
        Ok(PayloadStore::in_file(file, format))
    }

    /// Another handle on the same file, its payloads in `format` (the
    /// file stays while any handle does; where removing it was left to
    /// the store, the first one removes it).
    pub fn with_format(&self, format: Format) -> PayloadStore {
        PayloadStore {
            file: self.file.clone(),
            format,
            _remove: RemoveOnDrop(None),
        }
    }

    pub(crate) fn input(&self, from: u64, to: u64) -> Input {
        let mut inp = Input::new(ByteSource::Stream(Box::new(RangeReader {
            file: self.file.clone(),
            pos: from,
            end: to,
        })));
        inp.format = self.format;
        inp
    }

}

/// A spill file in `dir`, removed from the folder at once where the
/// system allows (the open file stays usable).
fn spill_file(dir: &Path, what: &str) -> Result<(File, RemoveOnDrop)> {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".rdarrow-spill-{}-{n}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| {
            Error::io(
                &e,
                &format!(
                    "cannot create a temporary file in '{}' for {what}",
                    dir.display()
                ),
            )
        })?;
    if cfg!(unix) && std::fs::remove_file(&path).is_ok() {
        return Ok((file, RemoveOnDrop(None)));
    }
    Ok((file, RemoveOnDrop(Some(path))))
}

/// Blobs (a Parquet writer's encoded pages) kept in a spill file until
/// they are written out: put from any thread, read back by place. The
/// file goes as [`PayloadStore`]'s spill does.
pub struct BlobSpill {
    file: File,
    end: std::sync::atomic::AtomicU64,
    _remove: RemoveOnDrop,
}

impl BlobSpill {
    /// A new, empty spill file in `dir`.
    pub fn new(dir: &Path) -> Result<BlobSpill> {
        let (file, remove) = spill_file(dir, "encoded data")?;
        Ok(BlobSpill {
            file,
            end: std::sync::atomic::AtomicU64::new(0),
            _remove: remove,
        })
    }

    /// Store `blob`; returns its place.
    pub fn put(&self, blob: &[u8]) -> std::io::Result<u64> {
        let at = self
            .end
            .fetch_add(blob.len() as u64, std::sync::atomic::Ordering::Relaxed);
        write_all_at(&self.file, blob, at)?;
        Ok(at)
    }

    /// The `len` bytes stored at `at`.
    pub fn get(&self, at: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            let n = read_at(&self.file, &mut buf[done..], at + done as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            done += n;
        }
        Ok(buf)
    }
}

/// A reader that copies everything read through it to a spill file. A
/// failed write (a full disk) is kept and reported by
/// [`Spill::into_store`], as an I/O error rather than a decoding one.
pub struct Tee {
    inner: Box<dyn Read + Send>,
    out: Arc<Mutex<TeeOut>>,
}

struct TeeOut {
    /// Taken when the spill is complete.
    writer: Option<std::io::BufWriter<File>>,
    failed: Option<std::io::Error>,
}

/// The spill side of a [`Tee`], kept by the caller.
pub struct Spill {
    out: Arc<Mutex<TeeOut>>,
    /// The spill file, for reads while it is still being written.
    reader: Arc<File>,
    dir: PathBuf,
    remove: RemoveOnDrop,
}

impl Tee {
    /// Copy `inner` to a new spill file in `dir`.
    pub fn new(inner: Box<dyn Read + Send>, dir: &Path) -> Result<(Tee, Spill)> {
        let (file, remove) = spill_file(dir, "the decompressed data")?;
        let reader = Arc::new(
            file.try_clone()
                .map_err(|e| Error::io(&e, "cannot open the temporary file"))?,
        );
        let out = Arc::new(Mutex::new(TeeOut {
            writer: Some(std::io::BufWriter::with_capacity(1 << 20, file)),
            failed: None,
        }));
        Ok((
            Tee {
                inner,
                out: out.clone(),
            },
            Spill {
                out,
                reader,
                dir: dir.to_path_buf(),
                remove,
            },
        ))
    }
}

impl Read for Tee {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let r = match out.writer.as_mut() {
            Some(w) => w.write_all(&buf[..n]),
            None => Err(std::io::Error::other("the spill file is closed")),
        };
        if let Err(e) = r {
            let kind = e.kind();
            out.failed = Some(e);
            return Err(std::io::Error::new(
                kind,
                "cannot write the temporary copy of the decompressed data",
            ));
        }
        Ok(n)
    }
}

impl Spill {
    fn error(&self, e: &std::io::Error) -> Error {
        Error::io(
            e,
            &format!(
                "cannot write the temporary copy of the decompressed data in '{}'",
                self.dir.display()
            ),
        )
    }

    /// The error a failed write to the spill file gave, if any.
    pub fn failure(&self) -> Option<Error> {
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.failed.as_ref().map(|e| self.error(e))
    }

    /// The stream read so far, flushed to the spill file, as a store to
    /// read the payloads already parsed (while the parse goes on).
    pub fn store_so_far(&self, format: Format) -> Result<PayloadStore> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = out.writer.as_mut() {
            if let Err(e) = w.flush() {
                let err = self.error(&e);
                out.failed = Some(e);
                return Err(err);
            }
        }
        Ok(PayloadStore {
            file: self.reader.clone(),
            format,
            _remove: RemoveOnDrop(None),
        })
    }

    /// The spill file, complete, as a store to read payloads from.
    pub fn into_store(self, format: Format) -> Result<PayloadStore> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        let writer = self
            .out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .writer
            .take();
        let writer = writer.ok_or_else(|| Error::internal("the spill file is closed"))?;
        let file = writer.into_inner().map_err(|e| self.error(e.error()))?;
        Ok(PayloadStore {
            file: Arc::new(file),
            format,
            _remove: self.remove,
        })
    }
}
