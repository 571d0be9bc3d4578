//! Where a file is written before it takes its name. Where the file system
//! makes one (Linux's `O_TMPFILE`), an unnamed file in the target's
//! folder: a writer killed in the middle leaves nothing, as the file goes
//! with its last descriptor; complete, it is linked in under the target's
//! name (straight to it where the name is free, else through a temporary
//! name renamed over it: the old file or the new one, whole). Elsewhere, a
//! hidden file beside the target, `.NAME.rdarrow-PID.tmp`, renamed into
//! place when complete; what a killed writer leaves under that name is
//! removed by a later write into the folder once the process named by the
//! PID is gone ([`remove_stale`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// What follows the target's name in its temporary name, before the PID.
const MARK: &str = ".rdarrow-";
/// The temporary name's ending.
const ENDING: &str = ".tmp";

/// A file being written for `target`: unnamed, or under its temporary name.
pub struct Staged {
    file: File,
    /// The temporary name, where the file has one (removed on drop unless
    /// the file was given its name).
    named: Option<PathBuf>,
}

impl Staged {
    /// A new, empty file for `target`, unnamed where the file system
    /// allows it, else under [`temporary_name`] (an earlier file under that
    /// name is replaced).
    pub fn create(target: &Path) -> io::Result<Staged> {
        if let Some(file) = unnamed_file(folder_of(target)) {
            return Ok(Staged { file, named: None });
        }
        let tmp = temporary_name(target);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        Ok(Staged {
            file,
            named: Some(tmp),
        })
    }

    /// The file, to write into.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Whether the file has no name (and leaves nothing if the process
    /// dies before it gets one).
    pub fn is_unnamed(&self) -> bool {
        self.named.is_none()
    }

    /// Give the complete file (made durable by the caller) the name
    /// `target`, replacing any file there at once.
    pub fn publish(mut self, target: &Path) -> io::Result<()> {
        if self.named.is_none() {
            match link_unnamed(&self.file, target) {
                Ok(()) => return Ok(()),
                // a file is there: linked in beside it, renamed over it
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    self.give_temporary_name(target)?
                }
                Err(_) => self.name_by_copy(target)?,
            }
        }
        let tmp = self.named.take().expect("a temporary name");
        std::fs::rename(&tmp, target).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    }

    /// Give the complete file its temporary name (closing it): the caller
    /// renames it into place later. Returns that name.
    pub fn into_temporary(mut self, target: &Path) -> io::Result<PathBuf> {
        if self.named.is_none() {
            self.give_temporary_name(target)?;
        }
        Ok(self.named.take().expect("a temporary name"))
    }

    /// Link the unnamed file in under `target`'s temporary name (an
    /// earlier file there, left by a dead process of the same PID, is
    /// replaced).
    fn give_temporary_name(&mut self, target: &Path) -> io::Result<()> {
        let tmp = temporary_name(target);
        match link_unnamed(&self.file, &tmp) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&tmp)?;
                link_unnamed(&self.file, &tmp)?;
            }
            Err(_) => return self.name_by_copy(target),
            Ok(()) => {}
        }
        self.named = Some(tmp);
        Ok(())
    }

    /// Where the unnamed file cannot be linked (no `/proc`): its bytes
    /// copied into a file under the temporary name, made durable.
    fn name_by_copy(&mut self, target: &Path) -> io::Result<()> {
        let tmp = temporary_name(target);
        let mut copy = File::create(&tmp)?;
        self.named = Some(tmp);
        let mut from = &self.file;
        io::Seek::seek(&mut from, io::SeekFrom::Start(0))?;
        io::copy(&mut from, &mut copy)?;
        copy.sync_all()?;
        self.file = copy;
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.named.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// The folder `path` is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The temporary name `target` is written under: `.NAME.rdarrow-PID.tmp`
/// beside it.
pub fn temporary_name(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    folder_of(target).join(format!(".{name}{MARK}{}{ENDING}", std::process::id()))
}

/// The PID in `name` if it is a temporary name of ours
/// (`.NAME.rdarrow-PID.tmp`, NAME not empty), else `None`.
fn writer_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(ENDING)?;
    let at = rest.rfind(MARK)?;
    let pid = &rest[at + MARK.len()..];
    if at == 0 || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// Whether the process `pid` is running (on this system; a process that
/// cannot be asked is taken to be running). Where the system cannot say,
/// every process is taken to be running.
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: signal 0 sends nothing; it only asks whether the
        // process exists.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Remove from `dir` the temporary files (our exact name pattern, plain
/// files only) of writers whose process is gone: what a writer killed
/// before it renamed its file left. Files of running processes, and
/// anything else, are kept. Best effort: a folder that cannot be listed
/// is left as it is.
pub fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(writer_of) else {
            continue;
        };
        if pid == me || process_alive(pid) {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The folder of `target`, cleared of dead writers' temporary files
/// ([`remove_stale`]).
pub fn remove_stale_beside(target: &Path) {
    remove_stale(folder_of(target));
}

/// An unnamed file in `dir` (Linux's `O_TMPFILE`, where the file system
/// has it and `/proc` lets it be linked in later), else `None`.
fn unnamed_file(dir: &Path) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        static PROC_FD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*PROC_FD.get_or_init(|| Path::new("/proc/self/fd").is_dir()) {
            return None;
        }
        let dir = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: a NUL-terminated path; the descriptor returned is owned
        // by the File made of it.
        let fd = unsafe {
            libc::open(
                dir.as_ptr(),
                libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd < 0 {
            return None;
        }
        Some(unsafe { File::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir;
        None
    }
}

/// Link the unnamed `file` in as `name` (which must not exist).
fn link_unnamed(file: &File, name: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .map_err(io::Error::other)?;
        let to = std::ffi::CString::new(name.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: NUL-terminated paths.
        let done = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if done == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, name);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// A scratch file in `dir` that no name reaches: unnamed where the file
/// system allows it, else made under a fresh name and removed at once
/// (the open file stays usable).
pub fn scratch_file(dir: &Path) -> io::Result<File> {
    if let Some(file) = unnamed_file(dir) {
        return Ok(file);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = dir.join(format!(".rdarrow-scratch-{}-{nanos}{ENDING}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn folder(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rdarrow-staging-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[cfg(unix)]
    /// A PID no process has: a child's, once it has been waited for.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!process_alive(pid));
        pid
    }

    #[test]
    fn our_temporary_names_are_told_from_others() {
        assert_eq!(writer_of(".x.rds.rdarrow-123.tmp"), Some(123));
        assert_eq!(writer_of(".a.rdarrow-b.RData.rdarrow-7.tmp"), Some(7));
        for other in [
            "x.rds.rdarrow-123.tmp",
            ".rdarrow-123.tmp",
            ".x.rds.rdarrow-.tmp",
            ".x.rds.rdarrow-12a.tmp",
            ".x.rds.rdarrow-123.tmp2",
            ".x.rds.rdarrow-0.tmp",
            ".x.rds.rdarrow-99999999999999999999.tmp",
            ".x.rds.tmp",
            "x.rds",
        ] {
            assert_eq!(writer_of(other), None, "{other}");
        }
        let name = temporary_name(Path::new("d/x.rds"));
        assert_eq!(
            writer_of(name.file_name().unwrap().to_str().unwrap()),
            Some(std::process::id())
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dead_writers_temporary_file_is_removed_and_the_rest_kept() {
        let dir = folder("stale");
        let dead = dead_pid();
        // a live process: this one's parent (and this one)
        let alive = std::os::unix::process::parent_id();
        let me = std::process::id();
        let files = [
            format!(".x.rds.rdarrow-{dead}.tmp"),
            format!(".y.RData.rdarrow-{dead}.tmp"),
            format!(".x.rds.rdarrow-{alive}.tmp"),
            format!(".z.rds.rdarrow-{me}.tmp"),
            format!("x.rds.rdarrow-{dead}.tmp"),
            format!(".x.rds.rdarrow-{dead}.tmp.keep"),
            format!(".rdarrow-{dead}.tmp"),
            "x.rds".to_string(),
        ];
        for f in &files {
            std::fs::write(dir.join(f), b"bytes").unwrap();
        }
        // a folder under our pattern is not ours to remove
        std::fs::create_dir(dir.join(format!(".w.rdarrow-{dead}.tmp"))).unwrap();
        remove_stale(&dir);
        let mut kept: Vec<String> = files[2..].to_vec();
        kept.push(format!(".w.rdarrow-{dead}.tmp"));
        kept.sort();
        assert_eq!(listing(&dir), kept);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_staged_file_appears_only_when_published_replacing_the_old_one() {
        let dir = folder("publish");
        let target = dir.join("out.bin");
        // a new name, then over an existing file
        for content in [&b"first"[..], &b"second, longer"[..]] {
            let staged = Staged::create(&target).unwrap();
            (&mut &*staged.file()).write_all(content).unwrap();
            if staged.is_unnamed() {
                assert_eq!(listing(&dir).len(), usize::from(content != b"first"));
            }
            staged.publish(&target).unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), content);
            assert_eq!(listing(&dir), vec!["out.bin".to_string()]);
        }
        // dropped unpublished: nothing is left, the old file stays
        let staged = Staged::create(&target).unwrap();
        (&mut &*staged.file()).write_all(b"never").unwrap();
        drop(staged);
        assert_eq!(listing(&dir), vec!["out.bin".to_string()]);
        assert_eq!(std::fs::read(&target).unwrap(), b"second, longer");
        // given its temporary name, for a later rename
        let staged = Staged::create(&target).unwrap();
        (&mut &*staged.file()).write_all(b"later").unwrap();
        let tmp = staged.into_temporary(&target).unwrap();
        assert_eq!(tmp, temporary_name(&target));
        assert_eq!(std::fs::read(&tmp).unwrap(), b"later");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn where_the_file_system_has_unnamed_files_a_staged_file_has_no_name() {
        let dir = folder("unnamed");
        let target = dir.join("out.bin");
        // (a file system without O_TMPFILE: nothing to check here)
        if unnamed_file(&dir).is_none() {
            eprintln!("no O_TMPFILE in {}", dir.display());
            return;
        }
        let staged = Staged::create(&target).unwrap();
        assert!(staged.is_unnamed());
        assert!(listing(&dir).is_empty());
        drop(staged);
        let scratch = scratch_file(&dir).unwrap();
        (&mut &scratch).write_all(b"x").unwrap();
        assert!(listing(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
