//! The container of `qs::qsave()` (`.qs` files, qs 0.27 and before),
//! read: the magic `0B 0E 0A 0C` and 4 zero bytes (files of qs before
//! 0.20 have neither), then four flag bytes (format version, whether a
//! checksum follows, the algorithm in the high nibble with the shuffle
//! bits of logical, integer, double and complex vectors in the low one,
//! the byte order: 0 little, 1 big) and a `u64`: the number of blocks, or
//! for the stream modes the bytes of the stream. The algorithms: zstd,
//! lz4 and lz4hc (blocks of at most 512 KiB, each a `u32` length and the
//! compressed bytes), zstd as one stream, or no compression. With the
//! checksum, the XXH32 (seed 12345) of the decompressed stream follows
//! the last block, and is checked at the end of the stream.
//!
//! The decompressed stream is qs's own encoding, which `read::qs` turns
//! into R's serialization; the shuffle bits go with it ([`QsHeader`]).

use std::hash::Hasher;
use super::qx::read_full;
use std::io::{self, BufRead, Read};

/// The magic of a `.qs` file (qs 0.20 and later).
pub const QS_MAGIC: [u8; 4] = [0x0B, 0x0E, 0x0A, 0x0C];
/// The most a block holds uncompressed.
pub const BLOCK: usize = 512 << 10;
/// The newest format version (qs 0.27's).
pub const FORMAT_VERSION: u8 = 3;
/// The seed of qs's checksum.
const SEED: u32 = 12345;

/// How a `.qs` file's stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// zstd blocks (presets "high", and custom).
    Zstd,
    /// lz4 blocks (presets "fast" and "balanced").
    Lz4,
    /// lz4hc blocks (custom).
    Lz4hc,
    /// one zstd stream (preset "archive").
    ZstdStream,
    /// no compression (preset "uncompressed").
    Uncompressed,
}

impl Algorithm {
    /// qs's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Zstd => "zstd",
            Algorithm::Lz4 => "lz4",
            Algorithm::Lz4hc => "lz4hc",
            Algorithm::ZstdStream => "zstd_stream",
            Algorithm::Uncompressed => "uncompressed",
        }
    }
}

/// A `.qs` file's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QsHeader {
    /// The format version (0 for files before qs 0.20).
    pub version: u8,
    /// Whether the XXH32 of the stream follows it.
    pub checksum: bool,
    /// The compression.
    pub algorithm: Algorithm,
    /// Whether logical vectors' bytes were shuffled (element size 4).
    pub shuffle_logical: bool,
    /// Whether integer vectors' bytes were shuffled (element size 4).
    pub shuffle_integer: bool,
    /// Whether double vectors' bytes were shuffled (element size 8).
    pub shuffle_double: bool,
    /// Whether complex vectors' bytes were shuffled (element size 8).
    pub shuffle_complex: bool,
    /// The blocks (block algorithms) or bytes (stream ones) that follow;
    /// 0 when the writer did not record it.
    pub length: u64,
    /// The header's length in the file (20, or 12 without the magic).
    pub len: usize,
}

/// Whether `prefix` (the file's first 12 bytes or more) starts a `.qs`
/// file: its magic, or the flags and length of a file from before qs
/// 0.20, which start with a zero byte (no R data starts so).
pub fn is_qs(prefix: &[u8]) -> bool {
    if prefix.starts_with(&QS_MAGIC) {
        return true;
    }
    if prefix.len() < 12 {
        return false;
    }
    let flags_ok = prefix[0] == 0 && prefix[1] <= 1 && prefix[2] >> 4 <= 4 && prefix[3] <= 1;
    let len = if prefix[3] == 1 {
        u64::from_be_bytes(prefix[4..12].try_into().expect("8 bytes"))
    } else {
        u64::from_le_bytes(prefix[4..12].try_into().expect("8 bytes"))
    };
    flags_ok && len < 1 << 40
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl QsHeader {
    /// Read the header from the start of `src`.
    pub fn read(src: &mut dyn Read) -> io::Result<QsHeader> {
        let mut first = [0u8; 4];
        src.read_exact(&mut first).map_err(cut_short)?;
        let (flags, len) = if first == QS_MAGIC {
            let mut rest = [0u8; 8];
            src.read_exact(&mut rest).map_err(cut_short)?;
            let flags: [u8; 4] = rest[4..].try_into().expect("4 bytes");
            (flags, 20)
        } else if first[0] == 0 {
            (first, 12)
        } else {
            return Err(bad("not a qs file (no magic)".into()));
        };
        let mut word = [0u8; 8];
        src.read_exact(&mut word).map_err(cut_short)?;
        let big = match flags[3] {
            0 => false,
            1 => true,
            other => {
                return Err(bad(format!(
                    "the qs header's byte order is {other}, neither 0 (little) nor 1 (big)"
                )))
            }
        };
        if big != cfg!(target_endian = "big") {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the qs file was written on a machine of the other byte order (big-endian), whose integers qs's encoding holds as they lay in memory; qs itself reads it only on such a machine",
            ));
        }
        if flags[0] > FORMAT_VERSION {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "the qs file has format version {}, newer than the version 3 of qs 0.27",
                    flags[0]
                ),
            ));
        }
        let algorithm = match flags[2] >> 4 {
            0 => Algorithm::Zstd,
            1 => Algorithm::Lz4,
            2 => Algorithm::Lz4hc,
            3 => Algorithm::ZstdStream,
            4 => Algorithm::Uncompressed,
            other => {
                return Err(bad(format!(
                    "the qs file names compression algorithm {other}, which qs does not have"
                )))
            }
        };
        let checksum = match flags[1] {
            0 => false,
            1 => true,
            other => {
                return Err(bad(format!(
                    "the qs header's checksum flag is {other}, neither 0 nor 1"
                )))
            }
        };
        Ok(QsHeader {
            version: flags[0],
            checksum,
            algorithm,
            shuffle_logical: flags[2] & 1 != 0,
            shuffle_integer: flags[2] & 2 != 0,
            shuffle_double: flags[2] & 4 != 0,
            shuffle_complex: flags[2] & 8 != 0,
            length: u64::from_ne_bytes(word),
            len,
        })
    }
}

fn cut_short(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(io::ErrorKind::UnexpectedEof, "the qs header is cut short")
    } else {
        e
    }
}

/// A reader that keeps the last `keep` bytes of its source back: they are
/// the trailer (qs's checksum), handed over by [`HoldBack::trailer`] once
/// the rest is read.
struct HoldBack<R> {
    inner: R,
    keep: usize,
    held: Vec<u8>,
    eof: bool,
}

impl<R: Read> HoldBack<R> {
    fn new(inner: R, keep: usize) -> Self {
        HoldBack {
            inner,
            keep,
            held: Vec::new(),
            eof: false,
        }
    }

    /// The held-back bytes (fewer than `keep` when the source was short).
    fn trailer(&self) -> &[u8] {
        &self.held
    }
}

impl<R: Read> Read for HoldBack<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.keep == 0 {
            return self.inner.read(out);
        }
        // hold `keep` bytes more than we hand out
        while !self.eof && self.held.len() < self.keep + out.len().min(1 << 16) {
            let mut buf = [0u8; 1 << 16];
            let want = (self.keep + out.len().min(1 << 16) - self.held.len()).min(buf.len());
            match self.inner.read(&mut buf[..want]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.held.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let avail = self.held.len().saturating_sub(self.keep);
        let k = avail.min(out.len());
        out[..k].copy_from_slice(&self.held[..k]);
        self.held.drain(..k);
        Ok(k)
    }
}

/// The decompressed stream of a `.qs` file, its checksum checked at its
/// end.
pub struct QsReader {
    body: Body,
    hash: twox_hash::XxHash32,
    header: QsHeader,
    /// Bytes handed out.
    out: u64,
    /// Blocks read (block algorithms).
    blocks: u64,
    current: Vec<u8>,
    pos: usize,
    frame: Vec<u8>,
    done: bool,
}

type Held = HoldBack<Box<dyn BufRead + Send>>;

enum Body {
    Blocks(Held, BlockCodec),
    Stream(Box<zstd::stream::read::Decoder<'static, io::BufReader<Held>>>),
    Plain(Held),
}

enum BlockCodec {
    Zstd(zstd::bulk::Decompressor<'static>),
    Lz4,
}

/// The most a compressed block may take: the larger of zstd's and lz4's
/// bounds for [`BLOCK`].
const MAX_FRAME: usize = BLOCK + BLOCK / 255 + 16 + (BLOCK >> 8);

impl QsReader {
    /// Read the header from `src`, then its decompressed stream.
    pub fn open(mut src: Box<dyn BufRead + Send>) -> io::Result<QsReader> {
        let header = QsHeader::read(&mut src)?;
        let keep = if header.checksum { 4 } else { 0 };
        let body = match header.algorithm {
            Algorithm::Zstd => Body::Blocks(
                HoldBack::new(src, keep),
                BlockCodec::Zstd(zstd::bulk::Decompressor::new()?),
            ),
            Algorithm::Lz4 | Algorithm::Lz4hc => {
                Body::Blocks(HoldBack::new(src, keep), BlockCodec::Lz4)
            }
            Algorithm::ZstdStream => {
                // qs ends the stream with a flush, not a frame's end: the
                // length in the header says where it ends
                let held = HoldBack::new(src, keep);
                Body::Stream(Box::new(zstd::stream::read::Decoder::new(held)?))
            }
            Algorithm::Uncompressed => Body::Plain(HoldBack::new(src, keep)),
        };
        Ok(QsReader {
            body,
            hash: twox_hash::XxHash32::with_seed(SEED),
            header,
            out: 0,
            blocks: 0,
            current: Vec::new(),
            pos: 0,
            frame: Vec::new(),
            done: false,
        })
    }

    /// The header.
    pub fn header(&self) -> QsHeader {
        self.header
    }

    /// The next block of a block algorithm, or `false` at the end.
    fn next_block(&mut self) -> io::Result<bool> {
        let Body::Blocks(src, codec) = &mut self.body else {
            return Ok(false);
        };
        if self.header.length != 0 && self.blocks == self.header.length {
            return Ok(false);
        }
        let mut word = [0u8; 4];
        let got = read_full(src, &mut word)?;
        if got == 0 && self.header.length == 0 {
            return Ok(false);
        }
        let index = self.blocks + 1;
        if got < 4 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the qs file is truncated: its header says {} blocks, it holds {}",
                    self.header.length, self.blocks
                ),
            ));
        }
        let len = u32::from_ne_bytes(word) as usize;
        if len > MAX_FRAME {
            return Err(bad(format!(
                "the qs file is damaged: block {index} claims {len} compressed bytes, more than a block of 512 KiB can take"
            )));
        }
        self.frame.resize(len, 0);
        let n = read_full(src, &mut self.frame)?;
        if n < len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the qs file is truncated: block {index} claims {len} compressed bytes, the file holds {n}"),
            ));
        }
        if self.current.capacity() < BLOCK {
            self.current = Vec::with_capacity(BLOCK);
        }
        self.current.clear();
        let damaged = |why: String| {
            bad(format!("the qs file is damaged: block {index} does not decompress to at most 512 KiB ({why})"))
        };
        match codec {
            BlockCodec::Zstd(z) => {
                z.decompress_to_buffer(&self.frame, &mut self.current)
                    .map_err(|e| damaged(e.to_string()))?;
            }
            BlockCodec::Lz4 => {
                self.current.resize(BLOCK, 0);
                let n = lz4_flex::block::decompress_into(&self.frame, &mut self.current)
                    .map_err(|e| damaged(e.to_string()))?;
                self.current.truncate(n);
            }
        }
        if self.current.len() > BLOCK {
            return Err(damaged(format!("{} bytes", self.current.len())));
        }
        self.blocks += 1;
        self.pos = 0;
        Ok(true)
    }

    /// At the end of the stream: the block count and the checksum.
    fn finish(&mut self) -> io::Result<()> {
        let trailer = match &mut self.body {
            Body::Blocks(src, _) | Body::Plain(src) => {
                // nothing may follow the last block but the checksum
                let mut extra = [0u8; 1];
                if read_full(src, &mut extra)? > 0 {
                    return Err(bad(format!(
                        "the qs file is damaged: more follows its {} blocks than the checksum",
                        self.blocks
                    )));
                }
                src.trailer().to_vec()
            }
            Body::Stream(r) => {
                // what the decoder left of the stream (the end of qs's
                // last flush), then the checksum
                let held = r.get_mut().get_mut();
                io::copy(held, &mut io::sink())?;
                held.trailer().to_vec()
            }
        };
        if self.header.checksum {
            if trailer.len() < 4 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the qs file is truncated: its checksum is missing",
                ));
            }
            let stored = u32::from_ne_bytes(trailer[..4].try_into().expect("4 bytes"));
            let found = self.hash.finish() as u32;
            if stored != found {
                return Err(bad(format!(
                    "the qs file is damaged: the XXH32 checksum of its data is {found:08x}, the file says {stored:08x}"
                )));
            }
        }
        Ok(())
    }
}

impl Read for QsReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.done {
            return Ok(0);
        }
        let n = match &mut self.body {
            Body::Blocks(..) => {
                if self.pos == self.current.len() && !self.next_block()? {
                    0
                } else {
                    let k = out.len().min(self.current.len() - self.pos);
                    out[..k].copy_from_slice(&self.current[self.pos..self.pos + k]);
                    self.pos += k;
                    k
                }
            }
            Body::Plain(_) | Body::Stream(_)
                if self.header.length != 0 && self.out == self.header.length =>
            {
                0
            }
            Body::Plain(_) | Body::Stream(_) => {
                // the stream modes: as many bytes as the header records
                let want = if self.header.length != 0 {
                    out.len().min((self.header.length - self.out) as usize)
                } else {
                    out.len()
                };
                let n = match &mut self.body {
                    Body::Plain(src) => src.read(&mut out[..want])?,
                    Body::Stream(r) => r.read(&mut out[..want])?,
                    Body::Blocks(..) => unreachable!("matched above"),
                };
                if n == 0 && self.header.length != 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the qs file is truncated: its header says {} bytes, it holds {}",
                            self.header.length, self.out
                        ),
                    ));
                }
                n
            }
        };
        if n == 0 {
            self.done = true;
            self.finish()?;
            return Ok(0);
        }
        self.hash.write(&out[..n]);
        self.out += n as u64;
        Ok(n)
    }
}
