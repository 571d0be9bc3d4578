//! Files being written: atomically (under a temporary name beside the
//! target, made durable with fsync and renamed into place only when
//! complete), in 8 MiB blocks that go to the disk as soon as they are
//! complete. Blocks are staged in an aligned buffer and written around the
//! page cache (direct I/O) where the file system allows it: a large file
//! then costs the disk's speed only (no page cache to fill first, little
//! left for the fsync) and does not push the user's cached files out.
//! Elsewhere the blocks go through the page cache, each handed to the disk
//! as it completes.

use crate::error::{Error, ErrorKind, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Size of the blocks a file is written in.
pub const FILE_BLOCK: usize = 8 << 20;

/// Alignment of direct writes (offsets, lengths and buffers).
pub const DIRECT_ALIGN: usize = 4096;

/// A zeroed buffer aligned for direct writes.
pub struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

impl AlignedBuf {
    /// At least `len` bytes (rounded up to the alignment).
    pub fn new(len: usize) -> Self {
        let len = len.max(DIRECT_ALIGN).next_multiple_of(DIRECT_ALIGN);
        let layout =
            std::alloc::Layout::from_size_align(len, DIRECT_ALIGN).expect("a valid buffer layout");
        // SAFETY: a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `len` initialized bytes owned by this buffer.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe {
            std::alloc::dealloc(
                self.ptr.as_ptr(),
                std::alloc::Layout::from_size_align_unchecked(self.len, DIRECT_ALIGN),
            )
        }
    }
}

// SAFETY: a plain owned allocation.
unsafe impl Send for AlignedBuf {}

/// Switch the file's direct I/O (around the page cache) on or off; false
/// when the system or file system refuses it.
pub fn set_direct(file: &File, on: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on a valid descriptor.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            if flags < 0 {
                return false;
            }
            let flags = if on {
                flags | libc::O_DIRECT
            } else {
                flags & !libc::O_DIRECT
            };
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, on);
        false
    }
}

/// Ask the kernel to start writing a finished range to disk (Linux).
pub fn hand_to_disk(file: &File, start: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // advisory: a failure here leaves the work to fsync
        // SAFETY: a valid descriptor and a range of the file.
        unsafe {
            libc::sync_file_range(
                file.as_raw_fd(),
                start as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, start, len);
}

/// Write `block` at `offset`: directly while `direct` holds (the block
/// padded with zeros to the alignment; `block` must be aligned and have
/// room for the padding), else through the page cache and handed to the
/// disk. A file system that refuses a direct write turns `direct` off.
pub fn write_block(
    file: &File,
    block: &mut [u8],
    len: usize,
    offset: u64,
    direct: &std::sync::atomic::AtomicBool,
) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::Ordering;
    if direct.load(Ordering::Relaxed) {
        let padded = len.next_multiple_of(DIRECT_ALIGN);
        block[len..padded].fill(0);
        match file.write_all_at(&block[..padded], offset) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                direct.store(false, Ordering::SeqCst);
                set_direct(file, false);
            }
            Err(e) => return Err(e),
        }
    }
    file.write_all_at(&block[..len], offset)?;
    hand_to_disk(file, offset, len as u64);
    Ok(())
}

/// A file being written in [`FILE_BLOCK`] blocks (see the module notes).
/// The bytes are staged and written block by block; [`WritebackFile::finish`]
/// writes the last, partial block.
pub struct WritebackFile<'a> {
    file: &'a File,
    staged: Option<AlignedBuf>,
    staged_len: usize,
    /// Bytes of the file written so far (all whole blocks).
    written: u64,
    direct: std::sync::atomic::AtomicBool,
}

impl<'a> WritebackFile<'a> {
    /// Write back pages of `file` as they are written.
    pub fn new(file: &'a File) -> Self {
        WritebackFile {
            file,
            staged: None,
            staged_len: 0,
            written: 0,
            direct: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The file, for writers that place blocks at their own offsets
    /// (they must not also write through this writer).
    pub fn file(&self) -> &File {
        self.file
    }

    fn write_staged(&mut self) -> std::io::Result<()> {
        let Some(buf) = self.staged.as_mut() else {
            return Ok(());
        };
        if self.staged_len == 0 {
            return Ok(());
        }
        write_block(
            self.file,
            buf.as_mut_slice(),
            self.staged_len,
            self.written,
            &self.direct,
        )?;
        self.written += self.staged_len as u64;
        self.staged_len = 0;
        Ok(())
    }

    /// Write what is staged; the file then has exactly the bytes given.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let padded = self.direct.load(std::sync::atomic::Ordering::Relaxed)
            && self.staged_len % DIRECT_ALIGN != 0;
        self.write_staged()?;
        if padded {
            self.file.set_len(self.written)?;
        }
        if self.direct.load(std::sync::atomic::Ordering::Relaxed) {
            set_direct(self.file, false);
        }
        Ok(())
    }
}

impl Write for WritebackFile<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let staged = self
            .staged
            .get_or_insert_with(|| AlignedBuf::new(FILE_BLOCK));
        let k = (FILE_BLOCK - self.staged_len).min(buf.len());
        staged.as_mut_slice()[self.staged_len..self.staged_len + k].copy_from_slice(&buf[..k]);
        self.staged_len += k;
        if self.staged_len == FILE_BLOCK {
            // a file of a block or more: around the page cache from here on
            if self.written == 0 && set_direct(self.file, true) {
                self.direct.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            self.write_staged()?;
        }
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Write `path` through `fill`, which gets a file beside it under a
/// temporary name; the result is made durable (fsync) and renamed into
/// place only when `fill` succeeds, and the temporary file is removed
/// otherwise.
pub fn atomic_write(
    path: &Path,
    fill: impl FnOnce(&mut WritebackFile<'_>) -> Result<()>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.rdarrow-{}.tmp",
        path.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = (|| -> Result<()> {
        let f = File::create(&tmp).map_err(|e| {
            let why = if dir.is_dir() {
                "no file can be created in its folder"
            } else {
                "its folder does not exist"
            };
            Error::io(&e, &format!("cannot write '{}' ({why})", path.display()))
        })?;
        let mut out = WritebackFile::new(&f);
        fill(&mut out)?;
        out.finish().map_err(|e| Error::io(&e, "cannot write"))?;
        f.sync_all()
            .map_err(|e| Error::io(&e, &format!("cannot write '{}'", path.display())))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| Error::io(&e, &format!("cannot rename into '{}'", path.display())))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    // an I/O failure names the file asked for (never the temporary one)
    let shown = path.display().to_string();
    result.map_err(|mut e| {
        if e.kind == ErrorKind::Io && !e.message.contains(&shown) {
            e.message = format!("{} (writing '{shown}')", e.message);
        }
        e
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_any_size_have_exactly_the_bytes_written() {
        let dir = std::env::temp_dir().join(format!("rdarrow-file-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        for size in [
            0usize,
            1,
            4095,
            4096,
            FILE_BLOCK - 1,
            FILE_BLOCK,
            FILE_BLOCK + 1,
            3 * FILE_BLOCK + 12_345,
        ] {
            let data: Vec<u8> = (0..size).map(|i| (i * 131 % 251) as u8).collect();
            atomic_write(&path, |f| {
                // uneven pieces, as a buffered writer above would give
                for piece in data.chunks(777_777) {
                    f.write_all(piece).map_err(|e| Error::io(&e, "write"))?;
                }
                Ok(())
            })
            .unwrap();
            assert!(std::fs::read(&path).unwrap() == data, "{size} bytes");
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "only the file remains"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary_file() {
        let dir =
            std::env::temp_dir().join(format!("rdarrow-file-out-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.bin");
        std::fs::write(&path, b"old").unwrap();
        let err = atomic_write(&path, |f| {
            f.write_all(&vec![7u8; 2 * FILE_BLOCK + 5]).unwrap();
            Err(Error::new(ErrorKind::Usage, "stop"))
        })
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Usage);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
