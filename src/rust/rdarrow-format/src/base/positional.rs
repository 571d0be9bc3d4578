//! Reads and writes at a file's offsets, without moving its cursor, on
//! every platform R builds on (unix's `read_at`/`write_all_at`, Windows'
//! `seek_read`/`seek_write`): the one place the spill files, gzip's
//! block index and the block writer ask for them.

use std::fs::File;
use std::io;

/// Reads up to `buf.len()` bytes at `at`; the count read (0 at the end).
pub fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, at)
    }
}

/// Fills `buf` from `at`; an end of file before it is full is an error.
pub fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let n = read_at(file, &mut buf[got..], at + got as u64)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got += n;
    }
    Ok(())
}

/// Writes all of `buf` at `at`.
pub fn write_all_at(file: &File, buf: &[u8], at: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, at)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut at) = (buf, at);
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_write(file, buf, at)?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = &buf[n..];
            at += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_reads_at_offsets_leaving_the_cursor() {
        let path = std::env::temp_dir().join(format!("rdarrow-positional-{}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        write_all_at(&file, b"world", 6).unwrap();
        write_all_at(&file, b"hello ", 0).unwrap();
        let mut buf = [0u8; 11];
        read_exact_at(&file, &mut buf, 0).unwrap();
        assert_eq!(&buf, b"hello world");
        let mut tail = [0u8; 4];
        assert_eq!(read_at(&file, &mut tail, 9).unwrap(), 2);
        assert_eq!(&tail[..2], b"ld");
        let err = read_exact_at(&file, &mut tail, 9).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        drop(file);
        std::fs::remove_file(&path).unwrap();
    }
}
