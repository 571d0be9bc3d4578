//! One block of a stream compressed on its own, and what the codecs'
//! block writers and readers share: the block size, the compressed block,
//! interruption, and the bytes written over a file's start once it is
//! complete.

use std::io;

/// Uncompressed bytes per independently compressed block.
pub const BLOCK_SIZE: usize = 8 << 20;

/// log2 of [`BLOCK_SIZE`], as the gzip index records it.
pub(crate) const BLOCK_SHIFT: u8 = 23;

/// One block, compressed.
#[derive(Debug, Default)]
pub struct CompressedBlock {
    /// The compressed bytes (for bzip2, `bits` bits of them, first bit
    /// first).
    pub bytes: Vec<u8>,
    /// bzip2: how many bits of `bytes` are the blocks'.
    pub(crate) bits: u64,
    /// gzip: CRC-32 of the block's data.
    pub(crate) gz_crc: flate2::Crc,
    /// bzip2: the CRC its blocks combine to.
    pub(crate) crc: u32,
    /// Uncompressed bytes.
    pub(crate) len: u64,
    /// bzip2: how many bzip2 blocks; xz: the block's unpadded size.
    pub(crate) count: u64,
}

pub(crate) fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted by the user")
}

pub(crate) fn check_interrupt() -> io::Result<()> {
    if crate::base::cancel::interrupted() {
        return Err(interrupted());
    }
    Ok(())
}


/// Bytes to write over a file's start once it is complete (the gzip
/// header with its index filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPatch {
    /// Where, from the file's start (a gzip header's index: 0; a qs2
    /// container's hash: 16).
    pub offset: u64,
    /// What.
    pub bytes: Vec<u8>,
}
