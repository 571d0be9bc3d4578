//! Compression envelopes: detection from magic bytes (never the file name),
//! streaming decompressors that read concatenated members/streams as R does,
//! and compressors for writing.

pub mod piece;
pub mod gzip;
pub mod bzip2;
pub mod xz;
pub mod blocks;
pub mod parallel;
pub mod qs;
pub mod qx;
pub mod fst;

use std::io::{self, BufRead, Read, Write};

/// The compression of a file, as detected from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (`save()`'s default).
    Gzip,
    /// bzip2.
    Bzip2,
    /// xz.
    Xz,
    /// Legacy `.lzma` ("lzma alone") streams, which R also reads.
    Lzma,
    /// Zstandard (R >= 4.4's `saveRDS(compress = "zstd")`).
    Zstd,
    /// An entry of R's lazy-load database (`.rdb`): a 4-byte big-endian
    /// length, then a zlib stream.
    LazyLoadZlib,
    /// A bare zlib stream (R's `memCompress(type = "gzip")` of a
    /// serialization).
    Zlib,
    /// A `.qs2` file (`qs2::qs_save()`): R's serialization in qs2's
    /// container of zstd blocks ([`qx`]).
    Qs2,
    /// A `.qdata` file (`qs2::qd_save()`): qs2's own encoding in the same
    /// container ([`qx`]).
    Qdata,
    /// A `.qs` file (`qs::qsave()`): qs's own encoding in qs's container
    /// of zstd, lz4 or uncompressed blocks ([`qs`]).
    Qs,
    /// An `.fst` file (`fst::write_fst()`): a table in fst's container of
    /// LZ4 and ZSTD blocks ([`fst`]).
    Fst,
}

impl Compression {
    /// Whether files can be written with this compression: gzip, bzip2,
    /// xz, zstd or none (legacy lzma and lazy-load zlib are read only).
    pub fn check_writable(self) -> crate::Result<()> {
        if matches!(
            self,
            Compression::Lzma | Compression::LazyLoadZlib | Compression::Zlib | Compression::Qs
        ) {
            return Err(crate::Error::usage("write gzip, bzip2, xz, zstd or none"));
        }
        Ok(())
    }

    /// Detect from the first bytes of a file (at least [`DETECT_LEN`]
    /// bytes when available).
    pub fn detect(prefix: &[u8]) -> Compression {
        if fst::is_fst(prefix) {
            Compression::Fst
        } else if prefix.starts_with(&qx::QS2_MAGIC) {
            Compression::Qs2
        } else if prefix.starts_with(&qx::QDATA_MAGIC) {
            Compression::Qdata
        } else if qs::is_qs(prefix) {
            Compression::Qs
        } else if prefix.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if prefix.starts_with(b"BZh") {
            Compression::Bzip2
        } else if prefix.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if prefix.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
            Compression::Zstd
        } else if prefix.len() >= 6
            && prefix[4] == 0x78
            && matches!(prefix[5], 0x01 | 0x5e | 0x9c | 0xda)
        {
            Compression::LazyLoadZlib
        } else if prefix.len() >= 3 && prefix[0] == 0x5D && prefix[1] == 0 && prefix[2] == 0 {
            Compression::Lzma
        } else if prefix.len() >= 2
            && prefix[0] == 0x78
            && matches!(prefix[1], 0x01 | 0x5e | 0x9c | 0xda)
        {
            // no R data starts so: a serialization starts "X\n", "A\n",
            // "B\n" or "RD"
            Compression::Zlib
        } else {
            Compression::None
        }
    }

    /// The name R gives this compression.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Lzma => "lzma",
            Compression::Zstd => "zstd",
            Compression::LazyLoadZlib => "zlib (lazy-load entry)",
            Compression::Zlib => "zlib",
            Compression::Qs2 => "qs2",
            Compression::Qdata => "qdata",
            Compression::Qs => "qs",
            Compression::Fst => "fst",
        }
    }

    /// Whether this is one of the containers of qs, qs2 and fst (read
    /// with their own readers, [`qx`], [`qs`] and [`fst`]), not a stream
    /// codec.
    pub fn is_qs_container(self) -> bool {
        matches!(self, Compression::Qs2 | Compression::Qdata | Compression::Qs | Compression::Fst)
    }

    /// The compression R names `name`.
    pub fn from_name(name: &str) -> Option<Compression> {
        Some(match name {
            "none" => Compression::None,
            "gzip" => Compression::Gzip,
            "bzip2" => Compression::Bzip2,
            "xz" => Compression::Xz,
            "zstd" => Compression::Zstd,
            "qs2" => Compression::Qs2,
            "qdata" => Compression::Qdata,
            "fst" => Compression::Fst,
            _ => return None,
        })
    }

    /// The compression and level a writer of R's files was asked for, by
    /// R's name (`"gzip"`, `"bzip2"`, `"xz"` or `"none"`) and an optional
    /// level: the one rule every front end asks, refusing with one message.
    /// Levels are those R's connections take: gzip 0 to 9 (`gzfile()`),
    /// bzip2 1 to 9 (`bzfile()`), xz 0 to 9 (`xzfile()`); `"none"` ignores
    /// the level, as `save(compress = FALSE)` does.
    pub fn for_writing(name: &str, level: Option<i64>) -> crate::Result<(Compression, Option<u32>)> {
        let kind = WRITTEN
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                crate::Error::usage(format!(
                    "unknown compression '{name}': rdarrow writes {}",
                    written_names()
                ))
            })?;
        let Some(level) = level else {
            return Ok((kind, None));
        };
        let Some(range) = kind.levels() else {
            return Ok((kind, None));
        };
        if !(i64::from(*range.start())..=i64::from(*range.end())).contains(&level) {
            return Err(crate::Error::usage(format!(
                "compression level {level} is out of range: {} takes {} to {}",
                kind.name(),
                range.start(),
                range.end()
            )));
        }
        Ok((kind, Some(level as u32)))
    }

    /// The levels R's connections take for this compression, when it
    /// takes one.
    pub fn levels(self) -> Option<std::ops::RangeInclusive<u32>> {
        match self {
            Compression::Gzip | Compression::Xz => Some(0..=9),
            Compression::Bzip2 => Some(1..=9),
            _ => None,
        }
    }

    /// The default level R uses for this compression.
    pub fn default_level(self) -> u32 {
        match self {
            Compression::Gzip => 6,
            Compression::Bzip2 | Compression::Xz => 9,
            Compression::Zstd | Compression::Qs2 | Compression::Qdata => 3,
            Compression::Fst => fst::DEFAULT_LEVEL,
            _ => 0,
        }
    }
}

/// The compressions rdarrow writes R's files with, in the order messages
/// name them (zstd, which R reads only from 4.4, is not offered).
pub const WRITTEN: [Compression; 4] = [
    Compression::Gzip,
    Compression::Bzip2,
    Compression::Xz,
    Compression::None,
];

/// `"gzip", "bzip2", "xz" or "none"`: the names of [`WRITTEN`] for messages.
pub fn written_names() -> String {
    let names: Vec<String> = WRITTEN.iter().map(|c| format!("\"{}\"", c.name())).collect();
    format!("{} or {}", names[..names.len() - 1].join(", "), names[names.len() - 1])
}

/// How many first bytes [`Compression::detect`] looks at (a `.qs` file
/// from before qs 0.20, which has no magic, is told by its first 12; an
/// `.fst` file by its 48-byte table header).
pub const DETECT_LEN: usize = 48;

/// Memory the xz/lzma decoders may use (R's own limit for xz and lzma
/// connections). The dictionary is allocated from the size a header
/// declares, so without a limit a 13-byte lzma header asks for 4 GiB.
pub const LZMA_MEMLIMIT: u64 = 512 << 20;

/// Wrap a buffered source in the decompressor its first bytes call for.
pub fn decompressor<R: BufRead + Send + 'static>(
    mut src: R,
) -> io::Result<(Compression, Box<dyn Read + Send>)> {
    let prefix = src.fill_buf()?;
    let kind = Compression::detect(prefix);
    let reader: Box<dyn Read + Send> = match kind {
        Compression::None => Box::new(src),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(src)),
        Compression::Bzip2 => Box::new(::bzip2::bufread::MultiBzDecoder::new(src)),
        Compression::Xz => {
            let stream = liblzma::stream::Stream::new_auto_decoder(
                LZMA_MEMLIMIT,
                liblzma::stream::CONCATENATED,
            )
            .map_err(io::Error::other)?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(src, stream))
        }
        Compression::Lzma => {
            let stream = liblzma::stream::Stream::new_lzma_decoder(LZMA_MEMLIMIT)
                .map_err(io::Error::other)?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(src, stream))
        }
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(src)?),
        Compression::LazyLoadZlib => {
            src.consume(4);
            Box::new(flate2::bufread::ZlibDecoder::new(src))
        }
        Compression::Zlib => Box::new(flate2::bufread::ZlibDecoder::new(src)),
        Compression::Qs2 | Compression::Qdata | Compression::Qs | Compression::Fst => {
            return Err(io::Error::other(format!(
                "a {} file is read by its container's reader, not as a stream",
                kind.name()
            )))
        }
    };
    Ok((kind, reader))
}

/// A reader that runs a decompressor on its own thread, handing over
/// chunks through a bounded channel, so decompression and parsing overlap.
/// Chunks go back to the decompressor once read, so the same few buffers
/// are filled again (never zeroed or faulted in anew).
pub struct PipelinedReader {
    rx: std::sync::mpsc::Receiver<io::Result<(Vec<u8>, usize)>>,
    recycle: std::sync::mpsc::SyncSender<Vec<u8>>,
    current: Vec<u8>,
    filled: usize,
    pos: usize,
    done: bool,
}

const PIPE_CHUNK: usize = 1 << 18;
const PIPE_DEPTH: usize = 16;

impl PipelinedReader {
    /// Read `inner` on a thread of its own.
    pub fn new(mut inner: Box<dyn Read + Send>) -> io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(PIPE_DEPTH);
        let (recycle, recycled) = std::sync::mpsc::sync_channel::<Vec<u8>>(PIPE_DEPTH + 2);
        std::thread::Builder::new()
            .name("rdarrow-decompress".into())
            .spawn(move || loop {
                let mut buf = recycled
                    .try_recv()
                    .unwrap_or_else(|_| vec![0u8; PIPE_CHUNK]);
                let mut filled = 0;
                let res = loop {
                    match inner.read(&mut buf[filled..]) {
                        Ok(0) => break Ok(()),
                        Ok(n) => {
                            filled += n;
                            if filled == buf.len() {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                let eof = filled < buf.len();
                if filled > 0 && tx.send(Ok((buf, filled))).is_err() {
                    return; // the reader is gone
                }
                if let Err(e) = res {
                    let _ = tx.send(Err(e));
                    return;
                }
                if eof {
                    return;
                }
            })?;
        Ok(PipelinedReader {
            rx,
            recycle,
            current: Vec::new(),
            filled: 0,
            pos: 0,
            done: false,
        })
    }
}

impl Read for PipelinedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.filled {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok((chunk, filled))) => {
                    let used = std::mem::replace(&mut self.current, chunk);
                    if used.len() == PIPE_CHUNK {
                        let _ = self.recycle.try_send(used);
                    }
                    self.filled = filled;
                    self.pos = 0;
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let k = out.len().min(self.filled - self.pos);
        out[..k].copy_from_slice(&self.current[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

/// Inflate a zlib or gzip buffer (as R's `memCompress(type = "gzip")`
/// writes zlib streams).
pub fn inflate_zlib_or_gzip(b: &[u8]) -> crate::Result<Vec<u8>> {
    let mut out = Vec::new();
    let r = if b.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(b).read_to_end(&mut out)
    } else {
        flate2::read::ZlibDecoder::new(b).read_to_end(&mut out)
    };
    r.map_err(|e| crate::Error::corrupt(format!("cannot inflate compressed metadata: {e}")))?;
    Ok(out)
}

/// A compressing writer; `finish` flushes the trailer and returns the sink.
pub enum Compressor<W: Write> {
    /// Not compressed.
    None(W),
    /// gzip.
    Gzip(flate2::write::GzEncoder<W>),
    /// bzip2.
    Bzip2(::bzip2::write::BzEncoder<W>),
    /// xz.
    Xz(liblzma::write::XzEncoder<W>),
    /// Zstandard.
    Zstd(zstd::stream::write::Encoder<'static, W>),
}

impl<W: Write> Compressor<W> {
    /// A compressor of `kind` writing into `sink` (`level`: the codec's default when `None`).
    pub fn new(sink: W, kind: Compression, level: Option<u32>) -> io::Result<Self> {
        Self::for_input(sink, kind, level, None)
    }

    /// A compressor for at most `input_len` bytes (when known): xz then
    /// sizes its dictionary to the input, not to the preset (64 MiB at level
    /// 9, about 670 MiB of encoder memory), with the same output ratio.
    pub fn for_input(
        sink: W,
        kind: Compression,
        level: Option<u32>,
        input_len: Option<usize>,
    ) -> io::Result<Self> {
        let level = level.unwrap_or(kind.default_level());
        if let (Compression::Xz, Some(len)) = (kind, input_len) {
            let mut opts =
                liblzma::stream::LzmaOptions::new_preset(level.min(9)).map_err(io::Error::other)?;
            // the presets' dictionary sizes (xz(1))
            let preset_dict: u32 = [
                256 << 10,
                1 << 20,
                2 << 20,
                4 << 20,
                4 << 20,
                8 << 20,
                8 << 20,
                16 << 20,
                32 << 20,
                64 << 20,
            ][level.min(9) as usize];
            let dict = u32::try_from(len.max(4096))
                .unwrap_or(u32::MAX)
                .min(preset_dict);
            opts.dict_size(dict);
            let mut filters = liblzma::stream::Filters::new();
            filters.lzma2(&opts);
            let stream = liblzma::stream::Stream::new_stream_encoder(
                &filters,
                liblzma::stream::Check::Crc64,
            )
            .map_err(io::Error::other)?;
            return Ok(Compressor::Xz(liblzma::write::XzEncoder::new_stream(
                sink, stream,
            )));
        }
        Ok(match kind {
            Compression::None => Compressor::None(sink),
            Compression::Gzip => Compressor::Gzip(flate2::write::GzEncoder::new(
                sink,
                flate2::Compression::new(level.min(9)),
            )),
            Compression::Bzip2 => Compressor::Bzip2(::bzip2::write::BzEncoder::new(
                sink,
                ::bzip2::Compression::new(level.clamp(1, 9)),
            )),
            Compression::Xz => Compressor::Xz(liblzma::write::XzEncoder::new(sink, level.min(9))),
            Compression::Zstd => {
                let mut e = zstd::stream::write::Encoder::new(sink, level as i32)?;
                // each frame carries its content checksum, which every
                // reader checks (R's zstd connections too)
                e.include_checksum(true)?;
                Compressor::Zstd(e)
            }
            Compression::Lzma
            | Compression::LazyLoadZlib
            | Compression::Zlib
            | Compression::Qs2
            | Compression::Qdata
            | Compression::Qs
            | Compression::Fst => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "this compression is not a stream to write into; write gzip, bzip2, xz or zstd",
                ))
            }
        })
    }

    /// Finish the compressed stream; the sink.
    pub fn finish(self) -> io::Result<W> {
        match self {
            Compressor::None(w) => Ok(w),
            Compressor::Gzip(e) => e.finish(),
            Compressor::Bzip2(e) => e.finish(),
            Compressor::Xz(e) => e.finish(),
            Compressor::Zstd(e) => e.finish(),
        }
    }
}

impl<W: Write> Write for Compressor<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Compressor::None(w) => w.write(buf),
            Compressor::Gzip(e) => e.write(buf),
            Compressor::Bzip2(e) => e.write(buf),
            Compressor::Xz(e) => e.write(buf),
            Compressor::Zstd(e) => e.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Compressor::None(w) => w.flush(),
            Compressor::Gzip(e) => e.flush(),
            Compressor::Bzip2(e) => e.flush(),
            Compressor::Xz(e) => e.flush(),
            Compressor::Zstd(e) => e.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut c = Compressor::new(Vec::new(), Compression::Gzip, Some(6)).unwrap();
        c.write_all(data).unwrap();
        c.finish().unwrap()
    }

    #[test]
    fn writers_take_r_names_and_the_levels_r_connections_take() {
        assert_eq!(Compression::for_writing("xz", None).unwrap(), (Compression::Xz, None));
        assert_eq!(Compression::for_writing("gzip", Some(0)).unwrap(), (Compression::Gzip, Some(0)));
        assert_eq!(Compression::for_writing("none", Some(42)).unwrap(), (Compression::None, None));
        let e = Compression::for_writing("bzip2", Some(0)).unwrap_err();
        assert_eq!(e.message, "compression level 0 is out of range: bzip2 takes 1 to 9");
        let e = Compression::for_writing("lz4", None).unwrap_err();
        assert_eq!(
            e.message,
            "unknown compression 'lz4': rdarrow writes \"gzip\", \"bzip2\", \"xz\" or \"none\""
        );
        assert!(Compression::for_writing("xz", Some(10)).is_err());
        assert!(Compression::for_writing("gzip", Some(-1)).is_err());
    }

    #[test]
    fn a_whole_gzip_member_inflates_at_once_and_anything_else_is_left_to_the_stream() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let one = gzip(&data);
        assert_eq!(gunzip_whole(&one).as_deref(), Some(&data[..]));
        // two members (as the parallel writer makes): streamed
        let mut two = gzip(&data[..1000]);
        two.extend(gzip(&data[1000..]));
        assert_eq!(gunzip_whole(&two), None);
        // two members whose sizes agree: still streamed, never cut short
        let mut same = gzip(&data[..4000]);
        same.extend(gzip(&data[..4000]));
        assert_eq!(gunzip_whole(&same), None);
        // truncated, flipped, empty: streamed (which says what is wrong)
        assert_eq!(gunzip_whole(&one[..one.len() - 1]), None);
        let mut flipped = one.clone();
        flipped[one.len() / 2] ^= 0x55;
        assert_eq!(gunzip_whole(&flipped), None);
        assert_eq!(gunzip_whole(&[]), None);
        // a trailer that claims more than the limit: not allocated
        let mut huge = one.clone();
        let n = huge.len();
        huge[n - 4..].copy_from_slice(&(WHOLE_MAX as u32 + 1).to_le_bytes());
        assert_eq!(gunzip_whole(&huge), None);
    }

    fn roundtrip(kind: Compression) {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        let mut c = Compressor::new(Vec::new(), kind, None).unwrap();
        c.write_all(&data[..200_000]).unwrap();
        let mut bytes = c.finish().unwrap();
        // a second member/stream concatenated, as R reads them
        let mut c = Compressor::new(Vec::new(), kind, None).unwrap();
        c.write_all(&data[200_000..]).unwrap();
        bytes.extend(c.finish().unwrap());
        let (detected, mut r) = decompressor(io::Cursor::new(bytes)).unwrap();
        assert_eq!(detected, kind);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn lzma_header_declaring_a_huge_dictionary_is_refused() {
        // lzma-alone header: properties 0x5d, a 2.3 GB dictionary, unknown size
        let mut bytes = vec![0x5d, 0x00, 0x00, 0x1f, 0x8b];
        bytes.extend([0xff; 8]);
        bytes.extend([0u8; 32]);
        let (kind, mut r) = decompressor(io::Cursor::new(bytes)).unwrap();
        assert_eq!(kind, Compression::Lzma);
        let err = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(err.to_string().to_lowercase().contains("memory"), "{err}");
    }

    #[test]
    fn concatenated_members_round_trip() {
        for k in [
            Compression::None,
            Compression::Gzip,
            Compression::Bzip2,
            Compression::Xz,
            Compression::Zstd,
        ] {
            roundtrip(k);
        }
    }
}

/// The largest stream [`gunzip_whole`] inflates at once.
pub const WHOLE_MAX: usize = 16 << 20;

/// A gzip file held in memory, inflated at once (libdeflate; about twice
/// the speed of a streaming inflate, which matters on small files): `None`
/// unless it is one gzip member, whole and intact, of at most
/// [`WHOLE_MAX`] bytes inflated (the caller then streams it, and reports
/// what is wrong where it finds it).
pub fn gunzip_whole(data: &[u8]) -> Option<Vec<u8>> {
    // the inflated size, as the member's trailer gives it (checked again
    // by libdeflate against what it inflates)
    let size =
        u32::from_le_bytes(data.get(data.len().checked_sub(4)?..)?.try_into().ok()?) as usize;
    if size > WHOLE_MAX {
        return None;
    }
    let mut out = vec![0u8; size];
    let (mut used_in, mut used_out) = (0usize, 0usize);
    // SAFETY: a decompressor of libdeflate's own, freed below; the input
    // and output buffers are valid for the lengths given
    let result = unsafe {
        let d = libdeflate_sys::libdeflate_alloc_decompressor();
        if d.is_null() {
            return None;
        }
        let r = libdeflate_sys::libdeflate_gzip_decompress_ex(
            d,
            data.as_ptr().cast(),
            data.len(),
            out.as_mut_ptr().cast(),
            out.len(),
            &mut used_in,
            &mut used_out,
        );
        libdeflate_sys::libdeflate_free_decompressor(d);
        r
    };
    (result == libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS
        && used_in == data.len()
        && used_out == size)
        .then_some(out)
}
