//! The stream header, read and written side by side: what wraps a
//! serialization stream (a `save()` file's magic, or nothing for
//! `saveRDS()`/`serialize()`), the format line, the version rules (which
//! versions exist, which R reads each) and the writer's native encoding.
//! Every other module asks here.

use crate::base::error::{Error, ErrorKind, Result};
use crate::compression::Compression;
use crate::wire::decode::{Format, Input};
use crate::wire::encode::Output;
use std::io::Write;

/// The serialization versions R writes (and rdarrow reads and writes).
pub const VERSIONS: [i32; 2] = [2, 3];

/// The one version check: `version` must be one R writes.
pub fn check_version(version: i32) -> Result<()> {
    if VERSIONS.contains(&version) {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "version must be 2 or 3, not {version}"
        )))
    }
}

/// The oldest R that reads a stream of `version`, as R records it: 2.3.0
/// for version 2, 3.5.0 (the first with ALTREP) for version 3.
pub fn min_reader_version(version: i32) -> i32 {
    if version >= 3 {
        0x0003_0500
    } else {
        0x0002_0300
    }
}

/// An R version packed as R packs it (`R_Version(4, 2, 2)` = 0x040202).
pub const fn r_version(major: i32, minor: i32, patch: i32) -> i32 {
    major * 65536 + minor * 256 + patch
}

/// The writer version recorded when none is given: the R whose output the
/// engine's tests compare against.
pub const DEFAULT_WRITER_VERSION: i32 = r_version(4, 2, 2);

/// The native encoding written in version-3 headers.
pub const UTF8: &[u8] = b"UTF-8";

impl Format {
    /// The letter that names the format in a header line and in a
    /// `save()` file's magic.
    pub fn letter(self) -> u8 {
        match self {
            Format::Xdr => b'X',
            Format::Ascii => b'A',
            Format::Binary => b'B',
        }
    }

    /// The format a header's letter (`X`, `B`, `A`) names.
    pub fn from_letter(letter: u8) -> Option<Format> {
        match letter {
            b'X' => Some(Format::Xdr),
            b'A' => Some(Format::Ascii),
            b'B' => Some(Format::Binary),
            _ => None,
        }
    }
}

/// What wraps the serialization stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// A `save()` file: the 5-byte magic `RD` + format letter + version + `\n`.
    RData {
        /// The format letter (`X`, `B` or `A`).
        format: u8,
        /// The version digit (`2` or `3`).
        version: u8,
    },
    /// A `saveRDS()` / `serialize()` stream (no magic).
    Stream,
}

/// Whether a file written at `path` with no format given is an `.rds` (a
/// `saveRDS()` stream of one object) rather than an `.RData` (a `save()`
/// file of named objects): a name ending in `.rds`, in any case. Any
/// other name (`.RData`, `.rda`, `.bin`, none) is an `.RData`. The one
/// rule of every writer that takes a path: R's `arrow_to_rdata()`,
/// `ipc_to_rdata()` and `parquet_to_rdata()`, Python's single-cell
/// writers, the command line's `to-rdata`.
///
/// A `.qs2`, `.qdata` or `.fst` file ([`container_of_path`]) holds one
/// object too, as an `.rds` file does.
pub fn path_is_rds(path: &str) -> bool {
    ends_with(path, ".rds") || container_of_path(path).is_some()
}

fn ends_with(path: &str, ext: &str) -> bool {
    let (b, e) = (path.as_bytes(), ext.as_bytes());
    b.len() >= e.len() && b[b.len() - e.len()..].eq_ignore_ascii_case(e)
}

/// The container a file written at `path` takes from its name, in any
/// case: a `.qs2` file qs2's (R's serialization in zstd blocks, which
/// `qs2::qs_read()` reads), a `.qdata` file qs2's with qs2's own encoding
/// (`qs2::qd_read()`), an `.fst` file fst's table (`fst::read_fst()`);
/// `None` for R's own files.
pub fn container_of_path(path: &str) -> Option<Compression> {
    if ends_with(path, ".qs2") {
        Some(Compression::Qs2)
    } else if ends_with(path, ".qdata") {
        Some(Compression::Qdata)
    } else if ends_with(path, ".fst") {
        Some(Compression::Fst)
    } else {
        None
    }
}

/// The zstd levels a `.qs2` or `.qdata` file is written at (qs2's).
pub const QS2_LEVELS: std::ops::RangeInclusive<i64> = 1..=22;

/// The compression and level a writer asked for (`compress`, `level`)
/// for a file at `path`: the one rule of every writer.
///
/// - R's files take R's compressions ([`Compression::for_writing`]), gzip
///   when `compress` is not given.
/// - A `.qs2` or `.qdata` file takes its container, compressed with zstd
///   (`compress` not given, `"zstd"` or the container's own name), at
///   `level` (1 to 22, qs2's default 3 when not given); any other
///   compression is an error naming zstd.
/// - An `.fst` file takes fst's compression at `level` 0 to 100 (fst's
///   scale, 50 when not given); `compress` may only name it.
/// - A `.qs` file, which rdarrow reads but does not write, is refused
///   before anything is written, pointing to `.qs2`.
pub fn compression_for_path(
    path: &str,
    compress: Option<&str>,
    level: Option<i64>,
) -> Result<(Compression, Option<u32>)> {
    if ends_with(path, ".qs") {
        return Err(Error::usage(
            "rdarrow reads .qs files (qs's format) but does not write them: name the file .qs2 \
             (qs2::qs_read() reads it, and so does every rdarrow reader) or .rds",
        ));
    }
    let Some(container) = container_of_path(path) else {
        return Compression::for_writing(compress.unwrap_or("gzip"), level);
    };
    if container == Compression::Fst {
        return match (compress, level) {
            (Some(c), _) if !["fst", "lz4", "zstd"].contains(&c) => Err(Error::usage(format!(
                "an .fst file is compressed as fst compresses it (LZ4 and ZSTD by compression_level 0 to 100), not '{c}'"
            ))),
            (_, Some(l)) if !(0..=100).contains(&l) => Err(Error::usage(format!(
                "compression level {l} is out of range: an .fst file takes 0 to 100 (fst's scale; 50 when not given)"
            ))),
            (_, l) => Ok((container, l.map(|l| l as u32))),
        };
    }
    match compress {
        None | Some("zstd" | "qs2" | "qdata") => match level {
            None => Ok((container, None)),
            Some(l) if QS2_LEVELS.contains(&l) => Ok((container, Some(l as u32))),
            Some(l) => Err(Error::usage(format!(
                "compression level {l} is out of range: a .{} file's zstd takes 1 to 22",
                container.name()
            ))),
        },
        Some(other) => Err(Error::usage(format!(
            "a .{} file is compressed with zstd (compress = \"zstd\", or none given), not '{other}'",
            container.name()
        ))),
    }
}

/// Whether `prefix` (a file's first bytes, [`crate::compression::DETECT_LEN`]
/// of them where the file has them) starts an R data file: a compression
/// or container rdarrow reads (gzip, bzip2, xz, zstd, qs, qs2, qdata, fst), a
/// `save()` file's magic or a serialization's format line.
pub fn looks_like_r_data(prefix: &[u8]) -> bool {
    Compression::detect(prefix) != Compression::None
        || prefix.starts_with(b"RD")
        || [&b"X\n"[..], b"A\n", b"B\n"].iter().any(|f| prefix.starts_with(f))
}

#[cfg(test)]
mod writers_rule {
    use super::*;

    #[test]
    fn a_qs2_or_qdata_sink_takes_zstd_and_every_level_given() {
        for path in ["x.qs2", "X.QDATA"] {
            let kind = container_of_path(path).unwrap();
            assert_eq!(compression_for_path(path, None, None).unwrap(), (kind, None));
            assert_eq!(compression_for_path(path, None, Some(19)).unwrap(), (kind, Some(19)));
            assert_eq!(compression_for_path(path, Some("zstd"), Some(1)).unwrap(), (kind, Some(1)));
            for bad in [0, 23, 100, -1] {
                let e = compression_for_path(path, None, Some(bad)).unwrap_err();
                assert!(e.message.contains("out of range"), "{e}");
            }
            for other in ["gzip", "xz", "none"] {
                let e = compression_for_path(path, Some(other), None).unwrap_err();
                assert!(e.message.contains("compressed with zstd"), "{e}");
            }
        }
        assert_eq!(compression_for_path("x.rds", None, Some(9)).unwrap(), (Compression::Gzip, Some(9)));
        assert!(compression_for_path("x.rds", None, Some(10)).is_err());
        for path in ["x.qs", "s3://b/X.QS"] {
            let e = compression_for_path(path, None, None).unwrap_err();
            assert!(e.message.contains(".qs2"), "{e}");
        }
    }
}

impl Container {
    /// A `save()` file of this format and version.
    pub fn rdata(format: Format, version: i32) -> Container {
        Container::RData {
            format: format.letter(),
            version: b'0' + version as u8,
        }
    }

    /// The magic `save()` writes first (`RDX3\n`, `RDA2\n`, ...), or
    /// nothing for a bare stream.
    pub fn magic(self) -> Option<[u8; 5]> {
        match self {
            Container::RData { format, version } => Some([b'R', b'D', format, version, b'\n']),
            Container::Stream => None,
        }
    }

    /// Whether this is a single-object stream (`saveRDS()`/`serialize()`).
    pub fn is_rds(self) -> bool {
        matches!(self, Container::Stream)
    }
}

/// The serialization header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamHeader {
    /// XDR, native binary or ASCII.
    pub format: Format,
    /// True when an ASCII stream's first line ended in CR LF.
    pub crlf: bool,
    /// Whether the ASCII stream began with a stray newline (R tolerates it).
    pub leading_newline: bool,
    /// The serialization version (2 or 3).
    pub version: i32,
    /// The R version that wrote the stream, packed.
    pub writer_version: i32,
    /// The oldest R version that reads it, packed.
    pub min_reader_version: i32,
    /// Version 3: the writer's native encoding (e.g. `UTF-8`, `CP1252`).
    pub native_encoding: Option<Vec<u8>>,
    /// ASCII only: doubles were written in hex (`serialize(ascii = NA)`).
    pub ascii_hex: bool,
}

impl StreamHeader {
    /// The header R writes for `format` and `version` in a UTF-8 session
    /// of R `writer_version`.
    pub fn new(format: Format, version: i32, writer_version: i32) -> Result<Self> {
        check_version(version)?;
        Ok(StreamHeader {
            format,
            crlf: false,
            leading_newline: false,
            version,
            writer_version,
            min_reader_version: min_reader_version(version),
            native_encoding: (version >= 3).then(|| UTF8.to_vec()),
            ascii_hex: false,
        })
    }

    /// A version-3 header as R 4.2.2 writes it in a UTF-8 session.
    pub fn utf8_v3(format: Format) -> Self {
        Self::new(format, 3, DEFAULT_WRITER_VERSION).expect("version 3 exists")
    }

    /// Change the format and version this header announces: the line
    /// layout of the original is dropped; a new version gets its own
    /// oldest reader and (version 3) a native encoding.
    pub fn convert(&mut self, format: Format, version: i32) -> Result<()> {
        check_version(version)?;
        self.format = format;
        self.crlf = false;
        self.leading_newline = false;
        if version != self.version {
            self.version = version;
            self.min_reader_version = min_reader_version(version);
            self.native_encoding = (version >= 3).then(|| UTF8.to_vec());
        }
        Ok(())
    }

    /// The header of a stand-alone XDR stream of the same version (one
    /// object of this stream serialized on its own).
    pub fn standalone_xdr(&self) -> Self {
        let mut h = self.clone();
        h.format = Format::Xdr;
        h.crlf = false;
        h.leading_newline = false;
        h.ascii_hex = false;
        if h.version >= 3 && h.native_encoding.is_none() {
            h.native_encoding = Some(UTF8.to_vec());
        }
        h
    }
}

/// Read the container magic and the serialization header.
pub fn read_header(inp: &mut Input) -> Result<(Container, StreamHeader)> {
    let head = inp.peek(7)?.to_vec();
    if head.is_empty() {
        return Err(Error::new(ErrorKind::NotRData, "the file is empty"));
    }
    let mut container = Container::Stream;
    if head.len() >= 5
        && head.starts_with(b"RD")
        && Format::from_letter(head[2]).is_some()
        && head[4] == b'\n'
    {
        match head[3] {
            v if VERSIONS.iter().any(|&k| v == b'0' + k as u8) => {}
            b'1' => return Err(Error::unsupported(
                "this is a version-1 save file (R < 1.4); re-save it with a current R to read it",
            )),
            v => {
                return Err(Error::new(
                    ErrorKind::NotRData,
                    format!("unknown save() file version '{}'", v as char),
                ))
            }
        }
        container = Container::RData {
            format: head[2],
            version: head[3],
        };
        inp.consume(5);
    }
    let line = inp.peek(3)?.to_vec();
    let partial_line = line.len() < 2
        && line
            .first()
            .is_none_or(|&c| Format::from_letter(c).is_some());
    if partial_line && (container != Container::Stream || !line.is_empty()) {
        return Err(
            Error::new(ErrorKind::Truncated, "the file ends inside its header").at(inp.offset()),
        );
    }
    let mut leading_newline = false;
    let fmt = match line.as_slice() {
        [b'X', b'\n', ..] => Format::Xdr,
        [b'A', b'\n', ..] | [b'A', b'\r', ..] => Format::Ascii,
        [b'B', b'\n', ..] => Format::Binary,
        [b'\n', b'A', b'\n'] => {
            leading_newline = true;
            inp.consume(1);
            Format::Ascii
        }
        _ => {
            let shown: String = head.iter().take(8).map(|b| format!("{b:02x} ")).collect();
            return Err(Error::new(
                ErrorKind::NotRData,
                format!(
                    "not an R data file: no save()/saveRDS()/serialize() header (the file starts with bytes {})",
                    shown.trim_end()
                ),
            )
            .at(0));
        }
    };
    let crlf = line.get(1) == Some(&b'\r');
    inp.consume(if crlf { 3 } else { 2 });
    inp.format = fmt;
    let version = inp.read_int()?;
    let writer_version = inp.read_int()?;
    let min_reader_version = inp.read_int()?;
    if check_version(version).is_err() {
        return Err(Error::unsupported(format!(
            "unsupported serialization format version {version} (R writes versions 2 and 3)"
        ))
        .at(inp.offset()));
    }
    let native_encoding = if version >= 3 {
        let n = inp.read_int()?;
        if !(0..=256).contains(&n) {
            return Err(
                Error::corrupt(format!("invalid native encoding name length {n}")).at(inp.offset()),
            );
        }
        let mut enc = Vec::new();
        inp.read_string_into(n as usize, &mut enc)?;
        Some(enc)
    } else {
        None
    };
    Ok((
        container,
        StreamHeader {
            format: fmt,
            crlf,
            leading_newline,
            version,
            writer_version,
            min_reader_version,
            native_encoding,
            ascii_hex: false,
        },
    ))
}

/// Write the container magic and the serialization header.
pub fn write_header<W: Write>(
    out: &mut Output<W>,
    container: Container,
    h: &StreamHeader,
) -> Result<()> {
    if let Some(magic) = container.magic() {
        out.bytes(&magic)?;
    }
    if h.leading_newline {
        out.bytes(b"\n")?;
    }
    out.bytes(&[h.format.letter(), b'\n'])?;
    out.int(h.version)?;
    out.int(h.writer_version)?;
    out.int(h.min_reader_version)?;
    if h.version >= 3 {
        let enc = h.native_encoding.as_deref().unwrap_or(UTF8);
        out.int(enc.len() as i32)?;
        out.string(enc)?;
    }
    Ok(())
}

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn the_path_says_rds_or_rdata() {
        for p in ["x.rds", "X.RDS", "dir.rdata/x.Rds", "s3://bucket/key.rds"] {
            assert!(path_is_rds(p), "{p}");
        }
        for p in ["x.RData", "x.rda", "x.bin", "x", "rds", "x.rds.gz", "caf\u{e9}.rd", "", "x.qs"] {
            assert!(!path_is_rds(p), "{p}");
        }
        // qs2's files hold one object too, in their own containers
        assert!(path_is_rds("x.qs2") && path_is_rds("X.QDATA"));
        assert_eq!(container_of_path("d/x.Qs2"), Some(Compression::Qs2));
        assert_eq!(container_of_path("x.qdata"), Some(Compression::Qdata));
        assert_eq!(container_of_path("x.rds"), None);
    }

    #[test]
    fn a_qs2_path_takes_zstd_at_qs2s_levels() {
        assert_eq!(compression_for_path("x.qs2", None, None).unwrap(), (Compression::Qs2, None));
        assert_eq!(compression_for_path("x.qs2", Some("zstd"), Some(19)).unwrap(), (Compression::Qs2, Some(19)));
        assert_eq!(compression_for_path("x.qdata", Some("zstd"), None).unwrap(), (Compression::Qdata, None));
        assert_eq!(compression_for_path("x.rds", Some("xz"), Some(6)).unwrap(), (Compression::Xz, Some(6)));
        let e = compression_for_path("x.qs2", Some("xz"), None).unwrap_err();
        assert_eq!(
            e.message,
            "a .qs2 file is compressed with zstd (compress = \"zstd\", or none given), not 'xz'"
        );
        assert!(compression_for_path("x.qs2", Some("gzip"), None).is_err());
        assert!(compression_for_path("x.qs2", Some("zstd"), Some(23)).is_err());
        assert!(compression_for_path("x.RData", Some("zstd"), None).is_err());
    }
}
