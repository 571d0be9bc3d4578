//! Files being written: atomically (under a temporary name beside the
//! target, made durable with fsync and renamed into place only when
//! complete), in 8 MiB blocks that go to the disk as soon as they are
//! complete. Blocks are staged in an aligned buffer and written around the
//! page cache (direct I/O) where the file system allows it: a large file
//! then costs the disk's speed only (no page cache to fill first, little
//! left for the fsync) and does not push the user's cached files out.
//! Elsewhere the blocks go through the page cache, each handed to the disk
//! as it completes.

use crate::base::error::{Error, ErrorKind, Result};
use crate::base::positional::write_all_at;
use crate::io::staging;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Size of the blocks a file is written in.
pub const FILE_BLOCK: usize = 8 << 20;

/// The first staging buffer of a [`WritebackFile`] (it grows to a block).
const STAGE_MIN: usize = 64 << 10;

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
    use std::sync::atomic::Ordering;
    if direct.load(Ordering::Relaxed) {
        let padded = len.next_multiple_of(DIRECT_ALIGN);
        block[len..padded].fill(0);
        match write_all_at(file, &block[..padded], offset) {
            Ok(()) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                direct.store(false, Ordering::SeqCst);
                set_direct(file, false);
            }
            Err(e) => return Err(e),
        }
    }
    write_all_at(file, &block[..len], offset)?;
    // a whole block goes to the disk now, while the next is made; a file's
    // last, partial one (a small file's only one) is left to the fsync
    // that follows at once
    if len >= FILE_BLOCK {
        hand_to_disk(file, offset, len as u64);
    }
    Ok(())
}

/// A file being written in [`FILE_BLOCK`] blocks (see the module notes).
/// The bytes are staged and written block by block; [`WritebackFile::finish`]
/// writes the last, partial block.
pub struct WritebackFile<'a> {
    file: &'a File,
    /// Where the bytes go instead of `file` (an object store's upload);
    /// `file` is then a scratch file for writers that place blocks at
    /// their own offsets ([`WritebackFile::send_file`]).
    upload: Option<&'a mut (dyn Write + Send)>,
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
            upload: None,
            staged: None,
            staged_len: 0,
            written: 0,
            direct: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The bytes written go to `upload`; `scratch` is the file of
    /// writers that place blocks at their own offsets.
    fn to_upload(scratch: &'a File, upload: &'a mut (dyn Write + Send)) -> Self {
        WritebackFile {
            upload: Some(upload),
            ..WritebackFile::new(scratch)
        }
    }

    /// The file, for writers that place blocks at their own offsets
    /// (they must not also write through this writer, and must call
    /// [`WritebackFile::send_file`] when done).
    pub fn file(&self) -> &File {
        self.file
    }

    /// After a writer placed the bytes in [`WritebackFile::file`] at their
    /// offsets: where the output is an upload, send the file's bytes to it
    /// (nothing to do for a file on disk).
    pub fn send_file(&mut self) -> std::io::Result<()> {
        let Some(upload) = self.upload.as_mut() else {
            return Ok(());
        };
        let mut f = self.file;
        std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(0))?;
        std::io::copy(&mut f, upload).map(|_| ())
    }

    /// Whether bytes already written can be written again
    /// ([`WritebackFile::patch`]): a file on disk, not an upload.
    pub fn can_patch(&self) -> bool {
        self.upload.is_none()
    }

    /// Write `patch` over bytes already written (a gzip header's index,
    /// once the file is complete): all staged bytes are written first.
    pub fn patch(&mut self, patch: &crate::compression::piece::HeaderPatch) -> std::io::Result<()> {
        if !self.can_patch() {
            return Err(std::io::Error::other("an upload cannot be written again"));
        }
        self.finish()?;
        let end = patch.offset + patch.bytes.len() as u64;
        if end > self.written {
            return Err(std::io::Error::other("a patch past the end of the file"));
        }
        write_all_at(self.file, &patch.bytes, patch.offset)
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
        if let Some(upload) = self.upload.as_mut() {
            return upload.flush();
        }
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
        if let Some(upload) = self.upload.as_mut() {
            return upload.write(buf);
        }
        // the staging buffer grows with the file up to a block: a small
        // file costs no more than its own bytes (a zeroed block would cost
        // more than writing it)
        let want = (self.staged_len + buf.len()).min(FILE_BLOCK);
        let have = self.staged.as_ref().map_or(0, |b| b.len);
        if want > have {
            let mut grown = AlignedBuf::new(want.max(2 * have).clamp(STAGE_MIN, FILE_BLOCK));
            if let Some(old) = self.staged.as_mut() {
                grown.as_mut_slice()[..self.staged_len]
                    .copy_from_slice(&old.as_mut_slice()[..self.staged_len]);
            }
            self.staged = Some(grown);
        }
        let staged = self.staged.as_mut().expect("a staging buffer");
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

/// Write `path` through `fill`, which gets a new file in its folder
/// (unnamed where the file system allows it, else under a temporary name:
/// [`crate::io::staging`]); the result is made durable (fsync) and takes
/// the name `path` only when `fill` succeeds: the old file or the new one,
/// whole, even if the process is killed. Nothing is left otherwise, and
/// temporary files that killed writers left in the folder are removed. An
/// object store URL (`s3://...`, with `storage`'s options) is written into
/// a temporary file first, then uploaded
/// ([`crate::io::store::Store::upload`]: it appears only complete).
pub fn atomic_write(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    fill: impl FnOnce(&mut WritebackFile<'_>) -> Result<()>,
) -> Result<()> {
    if crate::io::store::is_store_path(path) {
        return write_to_store(path, storage, fill);
    }
    staging::remove_stale_beside(path);
    let result = (|| -> Result<()> {
        let staged = create_staged(path)?;
        let mut out = WritebackFile::new(staged.file());
        fill(&mut out)?;
        out.finish().map_err(|e| Error::io(&e, "cannot write"))?;
        staged
            .file()
            .sync_all()
            .map_err(|e| Error::io(&e, &format!("cannot write '{}'", path.display())))?;
        staged
            .publish(path)
            .map_err(|e| Error::io(&e, &format!("cannot rename into '{}'", path.display())))
    })();
    // an I/O failure names the file asked for (never the temporary one)
    let shown = path.display().to_string();
    result.map_err(|mut e| {
        if e.kind == ErrorKind::Io && !e.message.contains(&shown) {
            e.message = format!("{} (writing '{shown}')", e.message);
        }
        e
    })
}

/// The new file `path` is written into ([`staging::Staged`]), or the error
/// that says why none can be made.
fn create_staged(path: &Path) -> Result<staging::Staged> {
    staging::Staged::create(path).map_err(|e| {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let why = if dir.is_dir() {
            "no file can be created in its folder"
        } else {
            "its folder does not exist"
        };
        Error::io(&e, &format!("cannot write '{}' ({why})", path.display()))
    })
}

/// [`atomic_write`] of an object: its bytes uploaded in parts as they are
/// written, the object appearing only when `fill` succeeds and the upload
/// completes (otherwise the upload is aborted: nothing appears).
fn write_to_store(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    fill: impl FnOnce(&mut WritebackFile<'_>) -> Result<()>,
) -> Result<()> {
    let url = path.to_string_lossy();
    let store = crate::io::store::Store::open(&url, storage, None)?;
    // a scratch file, for the writers that place blocks at offsets
    let scratch = staging::scratch_file(&std::env::temp_dir())
        .map_err(|e| Error::io(&e, "cannot create a temporary file"))?;
    let mut upload = store.upload_writer();
    let filled = {
        let mut out = WritebackFile::to_upload(&scratch, &mut upload);
        fill(&mut out).and_then(|()| out.finish().map_err(|e| Error::io(&e, "cannot write")))
    };
    // an error names the URL (never the scratch file)
    filled.and_then(|()| upload.complete()).map_err(|mut e| {
        if e.kind == ErrorKind::Io && !e.message.contains(url.as_ref()) {
            e.message = format!("{} (writing '{url}')", e.message);
        }
        e
    })
}

/// Files written as one (the files of a dataset): each is written as
/// [`atomic_write`] writes a file (unnamed while it is written, where the
/// file system allows it), then kept under its temporary name until the
/// batch's commit; they are made durable
/// together, by one sync of their file system where the system has one
/// (Linux), and renamed into place together by [`FileBatch::commit`]: a
/// thousand small files then cost one sync, not a thousand. A batch
/// dropped before its commit removes its temporary files; none of its
/// files appears.
///
/// Objects in a store (a dataset under a prefix) are uploaded as they are
/// written, each appearing complete ([`atomic_write`]); a batch dropped
/// before its commit removes the objects it uploaded.
#[derive(Default)]
pub struct FileBatch {
    /// (temporary, final) paths of the files written.
    pending: std::sync::Mutex<Vec<(std::path::PathBuf, std::path::PathBuf)>>,
    /// The objects uploaded to a store.
    uploaded: std::sync::Mutex<Vec<std::path::PathBuf>>,
    /// The store's options, for objects.
    storage: crate::io::store::StorageOptions,
    /// The folders cleared of dead writers' temporary files.
    cleared: std::sync::Mutex<Vec<std::path::PathBuf>>,
}

impl FileBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch whose objects go to a store with these options.
    pub fn with_storage(storage: crate::io::store::StorageOptions) -> Self {
        FileBatch {
            pending: Default::default(),
            uploaded: Default::default(),
            storage,
            cleared: Default::default(),
        }
    }

    /// Write `path` through `fill` (under its temporary name until the
    /// commit; an object in a store is uploaded as it is written). May be
    /// called from several threads at once.
    pub fn write(
        &self,
        path: &Path,
        fill: impl FnOnce(&mut WritebackFile<'_>) -> Result<()>,
    ) -> Result<()> {
        if crate::io::store::is_store_path(path) {
            atomic_write(path, &self.storage, fill)?;
            self.uploaded
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(path.to_path_buf());
            return Ok(());
        }
        self.clear_folder_of(path);
        let result = (|| -> Result<std::path::PathBuf> {
            let staged = create_staged(path)?;
            let mut out = WritebackFile::new(staged.file());
            fill(&mut out)?;
            out.finish()
                .map_err(|e| Error::io(&e, &format!("cannot write '{}'", path.display())))?;
            // complete: under its temporary name until the commit (no file
            // held open per file of the batch)
            staged
                .into_temporary(path)
                .map_err(|e| Error::io(&e, &format!("cannot write '{}'", path.display())))
        })();
        let tmp = result?;
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Remove what killed writers left in `path`'s folder, once per folder
    /// of the batch.
    fn clear_folder_of(&self, path: &Path) {
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut cleared = self.cleared.lock().unwrap_or_else(|p| p.into_inner());
        if !cleared.contains(&folder) {
            staging::remove_stale_beside(path);
            cleared.push(folder);
        }
    }

    /// Make every file durable, then rename each into place. On an error,
    /// the files already renamed are removed again, with the rest.
    pub fn commit(self) -> Result<()> {
        // the objects uploaded stay
        std::mem::take(&mut *self.uploaded.lock().unwrap_or_else(|p| p.into_inner()));
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        // the files renamed so far, and the temporary files of the rest
        let remove = |renamed: usize| {
            for (i, (tmp, fin)) in pending.iter().enumerate() {
                let _ = std::fs::remove_file(if i < renamed { fin } else { tmp });
            }
        };
        if let Err(e) = sync_all_of(&pending) {
            remove(0);
            return Err(e);
        }
        for (i, (tmp, fin)) in pending.iter().enumerate() {
            if let Err(e) = std::fs::rename(tmp, fin) {
                remove(i);
                return Err(Error::io(
                    &e,
                    &format!("cannot rename into '{}'", fin.display()),
                ));
            }
        }
        Ok(())
    }
}

impl Drop for FileBatch {
    fn drop(&mut self) {
        for (tmp, _) in self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = std::fs::remove_file(tmp);
        }
        for url in self
            .uploaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let url = url.to_string_lossy();
            if let Ok(store) = crate::io::store::Store::open(&url, &self.storage, None) {
                let _ = store.delete();
            }
        }
    }
}

/// Make the files written durable: one `syncfs` per file system (Linux),
/// else an fsync of each file.
fn sync_all_of(pending: &[(std::path::PathBuf, std::path::PathBuf)]) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        // one sync per device the files are on (a dataset's are on one)
        let mut devices: Vec<u64> = Vec::new();
        for (tmp, fin) in pending {
            let f = File::open(tmp)
                .map_err(|e| Error::io(&e, &format!("cannot write '{}'", fin.display())))?;
            let dev = f
                .metadata()
                .map_err(|e| Error::io(&e, &format!("cannot write '{}'", fin.display())))?
                .dev();
            if devices.contains(&dev) {
                continue;
            }
            devices.push(dev);
            // SAFETY: a valid descriptor.
            if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(Error::io(&e, &format!("cannot write '{}'", fin.display())));
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        for (tmp, fin) in pending {
            File::open(tmp)
                .and_then(|f| f.sync_all())
                .map_err(|e| Error::io(&e, &format!("cannot write '{}'", fin.display())))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_appears_whole_at_its_commit_and_not_at_all_without() {
        let dir = std::env::temp_dir().join(format!("rdarrow-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let names: Vec<_> = (0..5).map(|i| dir.join(format!("part-{i}.bin"))).collect();
        let listing = || {
            let mut v: Vec<_> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        // dropped before its commit: nothing is left
        let batch = FileBatch::new();
        for n in &names[..3] {
            batch
                .write(n, |f| f.write_all(b"abc").map_err(|e| Error::io(&e, "w")))
                .unwrap();
        }
        assert_eq!(listing().len(), 3);
        assert!(names.iter().all(|n| !n.exists()));
        drop(batch);
        assert!(listing().is_empty());
        // a failed file leaves no temporary file; the commit shows the others
        let batch = FileBatch::new();
        for (i, n) in names.iter().enumerate() {
            let r = batch.write(n, |f| {
                f.write_all(&vec![i as u8; 1000 * i])
                    .map_err(|e| Error::io(&e, "w"))?;
                if i == 2 {
                    return Err(Error::usage("no"));
                }
                Ok(())
            });
            assert_eq!(r.is_ok(), i != 2);
        }
        batch.commit().unwrap();
        let want: Vec<String> = [0, 1, 3, 4]
            .iter()
            .map(|i| format!("part-{i}.bin"))
            .collect();
        assert_eq!(listing(), want);
        assert_eq!(std::fs::read(&names[3]).unwrap(), vec![3u8; 3000]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
            atomic_write(&path, &Default::default(), |f| {
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
        let err = atomic_write(&path, &Default::default(), |f| {
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
