//! xz's blocks, as `xz -T0` writes them: each block an xz block (its
//! sizes in its header, its CRC-32 check after it) under one stream header,
//! with one index and footer; and the reader that decodes an xz file on
//! every core with liblzma's multithreaded decoder, which checks every
//! block, the index and the footer.

use crate::compression::piece::CompressedBlock;
use std::io::{self, Read};

// ------------------------------------------------------------------ xz

/// R's integrity check for xz files (CRC-32).
pub(crate) const XZ_CHECK: liblzma_sys::lzma_check = liblzma_sys::LZMA_CHECK_CRC32;

/// A block as one xz block (its sizes in its header); empty data is no
/// block at all.
pub(crate) fn xz_piece(data: &[u8], level: u32) -> io::Result<CompressedBlock> {
    if data.is_empty() {
        return Ok(CompressedBlock::default());
    }
    let level = level.min(9);
    // SAFETY: liblzma's single-call block encoder, given options and
    // buffers that live across the call and their true lengths
    unsafe {
        let mut opts: liblzma_sys::lzma_options_lzma = std::mem::zeroed();
        if liblzma_sys::lzma_lzma_preset(&mut opts, level) != 0 {
            return Err(io::Error::other("xz cannot take this level"));
        }
        // a dictionary beyond the block finds nothing more
        opts.dict_size = opts.dict_size.min(data.len().max(4096) as u32);
        let mut filters = [
            liblzma_sys::lzma_filter {
                id: liblzma_sys::LZMA_FILTER_LZMA2,
                options: (&mut opts as *mut liblzma_sys::lzma_options_lzma).cast(),
            },
            liblzma_sys::lzma_filter {
                id: liblzma_sys::LZMA_VLI_UNKNOWN,
                options: std::ptr::null_mut(),
            },
        ];
        let mut block: liblzma_sys::lzma_block = std::mem::zeroed();
        block.version = 1;
        block.check = XZ_CHECK;
        block.filters = filters.as_mut_ptr();
        block.compressed_size = liblzma_sys::LZMA_VLI_UNKNOWN;
        block.uncompressed_size = liblzma_sys::LZMA_VLI_UNKNOWN;
        let bound = liblzma_sys::lzma_block_buffer_bound(data.len());
        let mut out = vec![0u8; bound];
        let mut pos = 0usize;
        let rc = liblzma_sys::lzma_block_buffer_encode(
            &mut block,
            std::ptr::null(),
            data.as_ptr(),
            data.len(),
            out.as_mut_ptr(),
            &mut pos,
            bound,
        );
        if rc != liblzma_sys::LZMA_OK {
            return Err(io::Error::other(format!("xz cannot compress (code {rc})")));
        }
        out.truncate(pos);
        out.shrink_to_fit();
        Ok(CompressedBlock {
            bytes: out,
            len: data.len() as u64,
            count: liblzma_sys::lzma_block_unpadded_size(&block),
            ..CompressedBlock::default()
        })
    }
}

pub(crate) fn xz_stream_flags(backward_size: u64) -> liblzma_sys::lzma_stream_flags {
    // SAFETY: a plain C struct, zero its neutral value
    let mut f: liblzma_sys::lzma_stream_flags = unsafe { std::mem::zeroed() };
    f.version = 0;
    f.check = XZ_CHECK;
    f.backward_size = backward_size;
    f
}


/// An xz file inflated by liblzma's multithreaded decoder (blocks whose
/// sizes their headers give, as rdarrow and `xz -T` write them, decode on
/// `threads` cores; others on one), concatenated streams read as R reads
/// them.
pub struct XzMtReader<R: io::BufRead> {
    input: R,
    strm: liblzma_sys::lzma_stream,
    ended: bool,
}

// SAFETY: the liblzma stream is owned by this reader alone and used from
// one thread at a time
unsafe impl<R: io::BufRead + Send> Send for XzMtReader<R> {}

impl<R: io::BufRead> XzMtReader<R> {
    /// A decoder of `input` on `threads` threads, within `memlimit`.
    pub fn new(input: R, threads: usize, memlimit: u64) -> io::Result<Self> {
        // SAFETY: a zeroed lzma_stream is LZMA_STREAM_INIT; the options
        // are read during the call only
        unsafe {
            let mut strm: liblzma_sys::lzma_stream = std::mem::zeroed();
            let mut mt: liblzma_sys::lzma_mt = std::mem::zeroed();
            mt.flags = liblzma_sys::LZMA_CONCATENATED;
            mt.threads = threads.clamp(1, 64) as u32;
            mt.memlimit_threading = memlimit;
            mt.memlimit_stop = memlimit;
            let rc = liblzma_sys::lzma_stream_decoder_mt(&mut strm, &mt);
            if rc != liblzma_sys::LZMA_OK {
                return Err(io::Error::other(format!(
                    "xz cannot start its decoder (code {rc})"
                )));
            }
            Ok(XzMtReader {
                input,
                strm,
                ended: false,
            })
        }
    }
}

impl<R: io::BufRead> Read for XzMtReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.input.fill_buf()?;
            let action = if input.is_empty() {
                liblzma_sys::LZMA_FINISH
            } else {
                liblzma_sys::LZMA_RUN
            };
            self.strm.next_in = input.as_ptr();
            self.strm.avail_in = input.len();
            self.strm.next_out = buf.as_mut_ptr();
            self.strm.avail_out = buf.len();
            // SAFETY: the buffers are valid for the lengths given
            let rc = unsafe { liblzma_sys::lzma_code(&mut self.strm, action) };
            let used = input.len() - self.strm.avail_in;
            self.input.consume(used);
            let produced = buf.len() - self.strm.avail_out;
            match rc {
                liblzma_sys::LZMA_OK => {}
                liblzma_sys::LZMA_STREAM_END => {
                    self.ended = true;
                    return Ok(produced);
                }
                liblzma_sys::LZMA_MEMLIMIT_ERROR | liblzma_sys::LZMA_MEM_ERROR => {
                    return Err(io::Error::other(
                        "xz: the stream needs more memory than allowed",
                    ))
                }
                liblzma_sys::LZMA_BUF_ERROR => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the xz stream ends early",
                    ))
                }
                rc => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("corrupt xz data (code {rc})"),
                    ))
                }
            }
            if produced > 0 {
                return Ok(produced);
            }
        }
    }
}

impl<R: io::BufRead> Drop for XzMtReader<R> {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, ended once
        unsafe { liblzma_sys::lzma_end(&mut self.strm) }
    }
}

