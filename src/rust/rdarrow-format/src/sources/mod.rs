//! Where R data comes from, recognised once: every reader turns its
//! argument into one [`Source`] (a local file, an http(s) URL, bytes in
//! memory, a lazy-load data base) and everything after works on that
//! value. A plain source opens into its bytes from the start and the
//! compression their first bytes say; a lazy-load base is read entry by
//! entry ([`crate::sources::lazyload`]). A host's own stream (a Python file
//! object) is a source too; what a read is given is an [`Origin`], opened
//! anew for each pass the read makes.

pub mod all_cores;
pub mod lazyload;
pub mod source;

pub use source::{Source, Streamed};

use crate::compression::{self, Compression};
use crate::read::document::{parse, Document};
use crate::base::error::{Error, ErrorKind, Result};
use crate::wire::decode::{self, Input};
use crate::read::{ObjectFilter, ReadOptions};
use crate::io::http;
use crate::io::store::{self, Store};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// What a read is given: a path or URL (a [`Path`], `str` or
/// [`PathBuf`], see [`Source::of_path`]), or a host's stream. A read opens
/// it as often as it reads it (a conversion may read a file twice); an
/// origin that cannot start again says so in the error of its second
/// [`Origin::source`].
pub trait Origin: Sync {
    /// The source, from its start.
    fn source(&self) -> Result<Source>;
    /// The local path it names, if it is one (small local files are read
    /// on the calling thread, see [`crate::read_small_here`]).
    fn path(&self) -> Option<&Path> {
        None
    }
    /// Whether it can be read more than once (a stream that cannot seek
    /// is read once: a read then makes one pass).
    fn reopens(&self) -> bool {
        true
    }
}

impl Origin for Path {
    fn source(&self) -> Result<Source> {
        Ok(Source::of_path(self))
    }
    fn path(&self) -> Option<&Path> {
        Some(self)
    }
}

impl Origin for PathBuf {
    fn source(&self) -> Result<Source> {
        self.as_path().source()
    }
    fn path(&self) -> Option<&Path> {
        Some(self)
    }
}

impl Origin for str {
    fn source(&self) -> Result<Source> {
        Path::new(self).source()
    }
    fn path(&self) -> Option<&Path> {
        Some(Path::new(self))
    }
}

impl Origin for Vec<u8> {
    /// Bytes in memory (a file's, or `serialize()` output).
    fn source(&self) -> Result<Source> {
        Ok(Source::Bytes(self.clone()))
    }
}

impl Origin for String {
    fn source(&self) -> Result<Source> {
        self.as_str().source()
    }
    fn path(&self) -> Option<&Path> {
        Some(Path::new(self))
    }
}

impl Source {
    /// What `path` names: a URL, a lazy-load data base (an `.rdb`/`.rdx`
    /// pair on disk), else a file.
    pub fn of_path(path: &Path) -> Source {
        if http::is_url(path) {
            Source::Url(path.to_string_lossy().into_owned())
        } else {
            // (asked once: it looks at the disk)
            let lazy = lazyload::files_of(path).is_some();
            if store::is_store_path(path) && !lazy {
                Source::Object(path.to_string_lossy().into_owned())
            } else if lazy {
                Source::LazyLoad(path.to_path_buf())
            } else {
                Source::File(path.to_path_buf())
            }
        }
    }

    /// Where `given` (a path as a user typed it) names an existing local
    /// file that is not a lazy-load base or URL: its full path (links
    /// resolved) and the name of its object were it an `.rds` file. `None`
    /// for anything else (including a path starting with `~`, which the
    /// host expands by its own rules): the caller's general path applies.
    pub fn local_file(given: &str) -> Option<(PathBuf, String)> {
        let path = Path::new(given);
        if given.is_empty()
            || given.starts_with('~')
            || http::is_url(path)
            || store::is_store_url(given)
        {
            return None;
        }
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        // in full without touching the file system again (the working
        // folder joined, no link resolved: one stat above is the call's)
        let full = std::path::absolute(path).ok()?;
        Some((full, crate::read::document::stream_object_name(path)))
    }

    /// Read the source, decoding only the top-level objects `filter`
    /// accepts (the others are parsed with their payloads skipped).
    pub fn read(
        self,
        opts: &ReadOptions,
        filter: &mut (dyn ObjectFilter + Send),
    ) -> Result<Document> {
        if let Source::LazyLoad(path) = &self {
            return lazyload::LazyDb::open(path, opts)?.read(opts, filter);
        }
        let (kind, inp) = self.input(opts)?;
        parse(kind, inp, opts, filter)
    }

    /// The source's bytes from their start, and the compression their
    /// first bytes say (empty is not R data).
    pub(crate) fn open(self, opts: &ReadOptions) -> Result<(Opened, Compression)> {
        match self {
            Source::File(path) => open_file(&path),
            Source::Url(url) => open_url(&url, opts),
            Source::Object(url) => open_object(&url, opts),
            Source::Bytes(bytes) => {
                let kind = Compression::detect(&bytes);
                Ok((Opened::Bytes(bytes), kind))
            }
            Source::LazyLoad(path) => Err(Error::internal(format!(
                "'{}' is a lazy-load data base, read entry by entry",
                path.display()
            ))),
            Source::Stream { label, body } => match body {
                Streamed::Forward(r) => stream_of(&label, r),
                Streamed::Seekable(r) => open_seekable(&label, r),
            },
        }
    }

    /// The source's decompressed stream, ready to parse, and its
    /// compression.
    pub(crate) fn input(self, opts: &ReadOptions) -> Result<(Compression, Input)> {
        let (opened, kind) = self.open(opts)?;
        Ok(match (opened, kind) {
            (opened, kind) if kind.is_qs_container() => {
                (kind, Input::new(crate::wire::decode::ByteSource::Stream(opened.decompressed(kind, opts.salvage)?)))
            }
            (Opened::File { file, len }, Compression::None) => {
                (kind, Input::sized(crate::wire::decode::ByteSource::File { file, len }, len))
            }
            (Opened::Bytes(bytes), Compression::None) => (kind, Input::from_bytes(bytes)),
            (Opened::Ranged(r), _) => {
                let len = r.len();
                (kind, Input::sized(crate::wire::decode::ByteSource::Ranged(r), len))
            }
            (Opened::Bytes(bytes), _) => {
                if kind == Compression::Gzip && bytes.len() as u64 <= INLINE_MAX {
                    if let Some(inflated) = compression::gunzip_whole(&bytes) {
                        return Ok((kind, Input::from_bytes(inflated)));
                    }
                }
                let len = bytes.len() as u64;
                let (_, r) = compression::decompressor(std::io::Cursor::new(bytes))
                    .map_err(|e| Error::io(&e, "cannot start decompression"))?;
                (kind, Input::sized(crate::wire::decode::ByteSource::Stream(r), len * 4))
            }
            (Opened::File { mut file, len }, Compression::Gzip) if len <= INLINE_MAX => {
                // a small gzip file (R's default): read and inflated at once
                // where it is one intact member, else streamed on this thread
                let mut data = Vec::with_capacity(len as usize);
                file.read_to_end(&mut data)
                    .map_err(|e| Error::io(&e, "cannot read the file"))?;
                match compression::gunzip_whole(&data) {
                    Some(inflated) => (kind, Input::from_bytes(inflated)),
                    None => {
                        let (_, r) = compression::decompressor(std::io::Cursor::new(data))
                            .map_err(|e| Error::io(&e, "cannot start decompression"))?;
                        (kind, Input::sized(crate::wire::decode::ByteSource::Stream(r), len * 4))
                    }
                }
            }
            (Opened::File { file, len }, _) if len <= INLINE_MAX => {
                // a small file: inflated as it is parsed, on this thread
                let opened = Opened::File { file, len };
                let (_, r) = compression::decompressor(opened.buffered())
                    .map_err(|e| Error::io(&e, "cannot start decompression"))?;
                (kind, Input::sized(crate::wire::decode::ByteSource::Stream(r), len * 4))
            }
            (opened, _) => {
                let r = opened.decompressed(kind, opts.salvage)?;
                (kind, Input::new(crate::wire::decode::ByteSource::Stream(r)))
            }
        })
    }
}

/// The R data files a directory holds, as every reader takes a directory:
/// its `.rda`, `.RData` and `.rds` files, the `.qs`, `.qs2` and
/// `.qdata` files of qs and qs2 and the `.fst` files of fst (the
/// extension in any case), in
/// its subdirectories too (not following links to directories), as paths
/// relative to `dir`, sorted by their bytes (a host may order them by its
/// own collation). `label` names the directory in errors (as the user gave
/// it); one that holds none is a usage error.
pub fn data_files_in(dir: &Path, label: &str) -> Result<Vec<PathBuf>> {
    let is_data = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(is_data_name);
    let listing = format!("cannot list directory '{label}'");
    let mut found = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let entries = std::fs::read_dir(dir.join(&rel)).map_err(|e| Error::io(&e, &listing))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&e, &listing))?;
            let path = rel.join(entry.file_name());
            let kind = entry.file_type().map_err(|e| Error::io(&e, &listing))?;
            if kind.is_dir() {
                todo.push(path);
            } else if is_data(&path)
                && std::fs::metadata(dir.join(&path)).is_ok_and(|m| m.is_file())
            {
                found.push(path);
            }
        }
    }
    if found.is_empty() {
        return Err(Error::usage(format!(
            "directory '{label}' holds no .rda, .RData or .rds file (nor .qs, .qs2, .qdata or .fst)"
        )));
    }
    found.sort();
    Ok(found)
}

/// Where a source a user names is, by the one rule every front end asks
/// ([`location_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// An `http://` or `https://` URL, which the engine streams.
    Http,
    /// An object store URL (`s3://`, `gs://`, `az://`, ...), which the
    /// engine reads and writes.
    Store,
    /// Anything else: a local path (or a URL of another scheme, which a
    /// front end may open itself: Python's fsspec).
    Local,
}

impl Location {
    /// `"http"`, `"store"` or `"local"`, as the bindings report it.
    pub fn name(self) -> &'static str {
        match self {
            Location::Http => "http",
            Location::Store => "store",
            Location::Local => "local",
        }
    }
}

/// Where `given` is: an http(s) URL, an object store URL or a local path.
pub fn location_of(given: &str) -> Location {
    if store::is_store_url(given) {
        Location::Store
    } else if http::is_url(Path::new(given)) {
        Location::Http
    } else {
        Location::Local
    }
}

/// The R data sources one argument names, as `read_parquet()` takes its
/// argument: a URL or a lazy-load data base as it is; a glob pattern
/// (`*`, `?`, `[...]`, `**` across directories) as the files it matches,
/// sorted; a directory as its R data files ([`data_files_in`]); anything
/// else as the path it is. In an object store (`opts.storage`), a pattern
/// is matched against the keys the store lists under the pattern's fixed
/// start, and a URL ending in `/` names a folder: its R data files. A
/// pattern that matches nothing is a usage error naming it.
pub fn expand_sources(given: &str, opts: &ReadOptions) -> Result<Vec<PathBuf>> {
    let path = Path::new(given);
    if store::is_store_url(given) {
        return expand_in_store(given, opts);
    }
    if path.is_file() {
        // a file names itself (the common case: one stat)
        return Ok(vec![path.to_path_buf()]);
    }
    if http::is_url(path) || lazyload::files_of(path).is_some() {
        return Ok(vec![path.to_path_buf()]);
    }
    if path.is_dir() {
        return Ok(data_files_in(path, given)?
            .into_iter()
            .map(|p| path.join(p))
            .collect());
    }
    let is_pattern = given.contains(['*', '?', '[']) && !path.exists();
    if !is_pattern {
        return Ok(vec![path.to_path_buf()]);
    }
    let bad = |e: &dyn std::fmt::Display| Error::usage(format!("pattern '{given}': {e}"));
    let mut found = Vec::new();
    for entry in glob::glob(given).map_err(|e| bad(&e))? {
        let p = entry.map_err(|e| bad(&e))?;
        if p.is_file() {
            found.push(p);
        }
    }
    if found.is_empty() {
        return Err(Error::usage(format!("no file matches '{given}'")));
    }
    found.sort();
    Ok(found)
}

/// The sources several arguments name, each by [`expand_sources`], in the
/// order given.
pub fn expand_each<S: AsRef<str>>(given: &[S], opts: &ReadOptions) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(given.len());
    for g in given {
        out.extend(expand_sources(g.as_ref(), opts)?);
    }
    Ok(out)
}

/// The extensions of R data files, in lower case: R's own, then qs's,
/// qs2's and fst's.
const DATA_EXTENSIONS: [&str; 7] = ["rda", "rdata", "rds", "qs", "qs2", "qdata", "fst"];

/// Whether a file name is an R data file's ([`DATA_EXTENSIONS`], in any
/// case): the one rule of directories, store folders and DuckDB's
/// replacement scan (`FROM 'x.qs2'`).
pub fn is_data_name(name: &str) -> bool {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    ext.is_some_and(|e| DATA_EXTENSIONS.contains(&e.as_str()))
}

/// [`expand_sources`] in an object store.
fn expand_in_store(given: &str, opts: &ReadOptions) -> Result<Vec<PathBuf>> {
    let (scheme_end, _) = given.split_once("://").unwrap_or((given, ""));
    let after = &given[scheme_end.len() + 3..];
    let key_start = scheme_end.len() + 3 + after.find('/').unwrap_or(after.len());
    let key = given.get(key_start + 1..).unwrap_or("");
    let wild = key.find(['*', '?', '[']);
    let folder = wild.is_none() && (key.is_empty() || key.ends_with('/'));
    if wild.is_none() && !folder {
        return Ok(vec![PathBuf::from(given)]);
    }
    // list under the fixed start of the pattern (up to its last '/')
    let fixed = &key[..wild.unwrap_or(key.len())];
    let prefix = &fixed[..fixed.rfind('/').map_or(0, |i| i + 1)];
    let listed_at = format!("{}/{prefix}", &given[..key_start]);
    let store = Store::open(&listed_at, &opts.storage, opts.timeout)?;
    let found = if folder {
        store.list(&|k: &str| is_data_name(k))?
    } else {
        let pattern =
            glob::Pattern::new(key).map_err(|e| Error::usage(format!("pattern '{given}': {e}")))?;
        let how = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        store.list(&|k: &str| pattern.matches_with(k, how))?
    };
    if found.is_empty() {
        return Err(Error::usage(if folder {
            format!("'{given}' holds no .rda, .RData or .rds object (nor .qs, .qs2, .qdata or .fst)")
        } else {
            format!("no object matches '{given}'")
        }));
    }
    Ok(found.into_iter().map(PathBuf::from).collect())
}

fn empty(what: &str) -> Error {
    Error::new(ErrorKind::NotRData, format!("{what} is empty"))
}

/// An opened plain source.
pub(crate) enum Opened {
    /// A local file, at its start, and its length.
    File { file: File, len: u64 },
    /// The body of a URL.
    Stream(Box<dyn Read + Send>),
    /// An uncompressed object in a store, read by range.
    Ranged(Box<dyn decode::Seekable>),
    /// Bytes in memory.
    Bytes(Vec<u8>),
}

impl Opened {
    /// A reader of the bytes, buffered.
    pub(crate) fn buffered(self) -> BufReader<Box<dyn Read + Send>> {
        let (r, len): (Box<dyn Read + Send>, u64) = match self {
            Opened::File { file, len } => (Box::new(file), len),
            Opened::Stream(s) => (s, u64::MAX),
            Opened::Ranged(s) => (Box::new(s), u64::MAX),
            Opened::Bytes(b) => {
                let len = b.len() as u64;
                (Box::new(std::io::Cursor::new(b)), len)
            }
        };
        BufReader::with_capacity(len.clamp(64, 1 << 16) as usize, r)
    }

    /// The decompressed bytes of a large source of compression `kind`,
    /// decompressed while they are parsed: a gzip file with an index (as
    /// rdarrow writes them) inflated on every core, an xz stream of many
    /// blocks decoded on every core, anything else on a thread of its own;
    /// a `.qdata` file's blocks before damage kept where `salvage` says so.
    pub(crate) fn decompressed(self, kind: Compression, salvage: bool) -> Result<Box<dyn Read + Send>> {
        let cores = crate::base::limits::cores();
        if kind.is_qs_container() {
            return self.unpacked(kind, cores, salvage);
        }
        if let (Opened::File { file, len }, Compression::Gzip, true) = (&self, kind, cores > 1) {
            let reader = file
                .try_clone()
                .ok()
                .and_then(|f| crate::compression::gzip::IndexedGzipReader::open(f, *len, cores));
            if let Some(r) = reader {
                return Ok(Box::new(r));
            }
        }
        let r: Box<dyn Read + Send> = if kind == Compression::Xz && cores > 1 {
            Box::new(
                crate::compression::xz::XzMtReader::new(self.buffered(), cores, compression::LZMA_MEMLIMIT)
                    .map_err(|e| Error::io(&e, "cannot start decompression"))?,
            )
        } else {
            compression::decompressor(self.buffered())
                .map_err(|e| Error::io(&e, "cannot start decompression"))?
                .1
        };
        let piped = compression::PipelinedReader::new(r)
            .map_err(|e| Error::io(&e, "cannot start the decompression thread"))?;
        Ok(Box::new(piped))
    }
}

impl Opened {
    /// The R serialization a file of qs or qs2 holds: a `.qs2` file's
    /// payload as it is, a `.qdata` or `.qs` file's encoding turned into
    /// it (`read::qdata`, `read::qs`); the blocks of qs2's container
    /// decompressed on `cores` threads, qs's on the thread that turns them.
    fn unpacked(self, kind: Compression, cores: usize, salvage: bool) -> Result<Box<dyn Read + Send>> {
        use crate::compression::qx::{QxHeader, QxReader, HEADER_LEN};
        let unreadable = |e: std::io::Error| {
            let kind = match e.kind() {
                std::io::ErrorKind::UnexpectedEof => ErrorKind::Truncated,
                std::io::ErrorKind::Unsupported => ErrorKind::Unsupported,
                std::io::ErrorKind::InvalidData => ErrorKind::Corrupt,
                std::io::ErrorKind::OutOfMemory => ErrorKind::Limit,
                _ => return Error::io(&e, "cannot read the file"),
            };
            Error::new(kind, e.to_string())
        };
        let mut src = self.buffered();
        match kind {
            Compression::Qs2 | Compression::Qdata => {
                let mut head = [0u8; HEADER_LEN];
                let got = read_prefix_of(&mut src, &mut head).map_err(unreadable)?;
                let header = QxHeader::parse(&head[..got]).map_err(unreadable)?;
                let blocks = QxReader::new(Box::new(src), header, cores)
                    .map_err(|e| Error::io(&e, "cannot start the qs2 block readers"))?;
                if kind == Compression::Qs2 {
                    Ok(Box::new(crate::compression::qx::binary_in_file_order(blocks, header.big_endian)))
                } else {
                    let r = crate::read::qdata::QdataReader::new(Box::new(blocks), header.big_endian, salvage)
                        .map_err(unreadable)?;
                    Ok(Box::new(r))
                }
            }
            Compression::Fst => {
                // the headers read and checked here; the columns turned
                // into R's serialization on a thread of its own
                let r = crate::read::fst::FstReader::new(Box::new(src)).map_err(unreadable)?;
                let piped = compression::PipelinedReader::new(Box::new(r))
                    .map_err(|e| Error::io(&e, "cannot start the fst reader"))?;
                Ok(Box::new(piped))
            }
            _ => {
                let blocks = crate::compression::qs::QsReader::open(Box::new(src)).map_err(unreadable)?;
                let header = blocks.header();
                // decompressed and turned into R's serialization on a
                // thread of its own, while the stream is parsed
                let r = crate::read::qs::QsTranscoded::new(Box::new(blocks), header)
                    .map_err(|e| Error::io(&e, "cannot start the qs reader"))?;
                Ok(Box::new(r))
            }
        }
    }
}

/// Read the first bytes of `r` (fewer at its end); how many.
fn read_prefix_of(r: &mut dyn Read, prefix: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < prefix.len() {
        match r.read(&mut prefix[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Compressed files up to this size are decompressed on the parsing
/// thread: a thread of its own costs more than it saves on them.
const INLINE_MAX: u64 = 1 << 18;

fn open_url(url: &str, opts: &ReadOptions) -> Result<(Opened, Compression)> {
    let (body, _) = http::open(url, opts.timeout)?;
    stream_of(&format!("'{}'", http::shown(url)), body)
}

/// A body received on a thread of its own, ahead of its reader, and the
/// compression its first bytes say; `what` names it in errors.
fn stream_of(what: &str, mut body: Box<dyn Read + Send>) -> Result<(Opened, Compression)> {
    let (prefix, kind) = first_bytes(what, &mut body)?;
    Ok((ahead(prefix, body)?, kind))
}

/// `prefix` then `body`, received on a thread of its own, ahead of the
/// decompressor.
fn ahead(prefix: Vec<u8>, body: Box<dyn Read + Send>) -> Result<Opened> {
    let whole = std::io::Cursor::new(prefix).chain(body);
    let piped = compression::PipelinedReader::new(Box::new(whole))
        .map_err(|e| Error::io(&e, "cannot start the reading thread"))?;
    Ok(Opened::Stream(Box::new(piped)))
}

/// The first bytes of a stream (an empty one is not R data) and the
/// compression they say.
fn first_bytes(what: &str, body: &mut dyn Read) -> Result<(Vec<u8>, Compression)> {
    let mut prefix = Vec::with_capacity(compression::DETECT_LEN);
    body.take(compression::DETECT_LEN as u64)
        .read_to_end(&mut prefix)
        .map_err(|e| Error::io(&e, &format!("cannot read {what}")))?;
    if prefix.is_empty() {
        return Err(empty(what));
    }
    let kind = Compression::detect(&prefix);
    Ok((prefix, kind))
}

/// An object's bytes, from a first range that tells its size and version
/// (see [`open_seekable`]).
fn open_object(url: &str, opts: &ReadOptions) -> Result<(Opened, Compression)> {
    let store = Store::open(url, &opts.storage, opts.timeout)?;
    open_seekable(&format!("'{url}'"), Box::new(store.ranged_reader()?))
}

/// A stream that can move ahead (an object in a store, a host's seekable
/// file): read by range where uncompressed (the bytes a reader skips, a
/// listing's payloads, are never read), else as a stream of all the rest,
/// received ahead of the decompressor.
fn open_seekable(what: &str, mut body: Box<dyn decode::Seekable>) -> Result<(Opened, Compression)> {
    let (prefix, kind) = first_bytes(what, &mut body)?;
    if kind == Compression::None {
        return Ok((
            Opened::Ranged(Box::new(Peeked {
                prefix,
                pos: 0,
                body,
            })),
            kind,
        ));
    }
    body.whole_rest();
    Ok((ahead(prefix, Box::new(body))?, kind))
}

/// A seekable stream whose first bytes were read to learn its
/// compression: those bytes, then the rest.
struct Peeked {
    prefix: Vec<u8>,
    /// Bytes of `prefix` handed out.
    pos: usize,
    body: Box<dyn decode::Seekable>,
}

impl Read for Peeked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.prefix.len() {
            let n = buf.len().min(self.prefix.len() - self.pos);
            buf[..n].copy_from_slice(&self.prefix[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        self.body.read(buf)
    }
}

impl decode::Seekable for Peeked {
    fn seek_to(&mut self, pos: u64) -> std::io::Result<()> {
        let held = self.prefix.len() as u64;
        if pos < held {
            self.pos = pos as usize;
            return Ok(());
        }
        self.pos = self.prefix.len();
        if pos > held {
            self.body.seek_to(pos)?;
        }
        Ok(())
    }
    fn len(&self) -> u64 {
        self.body.len()
    }
    fn whole_rest(&mut self) {
        self.body.whole_rest()
    }
}

fn open_file(path: &Path) -> Result<(Opened, Compression)> {
    let mut file = File::open(path)
        .map_err(|e| Error::io(&e, &format!("cannot open '{}'", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(&e, "cannot stat the file"))?
        .len();
    // a small file (the usual one) is read whole at once, its kind told
    // from its bytes: one open, one stat, one read (a special file, of
    // length 0, is read as a stream); else its first bytes
    let small = len > 0 && len <= INLINE_MAX;
    let mut data = vec![0u8; if small { len as usize } else { compression::DETECT_LEN }];
    let got = read_prefix(&mut file, &mut data)?;
    if got == 0 {
        return Err(empty(&format!("'{}'", path.display())));
    }
    data.truncate(got);
    let kind = Compression::detect(&data);
    if kind == Compression::None
        && !crate::wire::header::looks_like_r_data(&data)
        && crate::wire::header::container_of_path(&path.to_string_lossy()) == Some(Compression::Fst)
    {
        return Err(crate::compression::fst::before_format_marker(&path.display().to_string()));
    }
    if small && kind != Compression::None {
        return Ok((Opened::Bytes(data), kind));
    }
    // read from the file itself (an uncompressed one in place: the parser
    // knows its length, and payloads are read back from it)
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0))
        .map_err(|e| Error::io(&e, "cannot seek"))?;
    Ok((Opened::File { file, len }, kind))
}

/// Read the first bytes of a file (fewer at its end); how many.
fn read_prefix(file: &mut File, prefix: &mut [u8]) -> Result<usize> {
    let mut got = 0;
    while got < prefix.len() {
        let n = file
            .read(&mut prefix[got..])
            .map_err(|e| Error::io(&e, "cannot read the file"))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_holds_its_r_data_files_in_subdirectories_too() {
        let dir = std::env::temp_dir().join(format!("rdarrow-dir-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.RData", "a.rds", "sub/c.RDA", "notes.txt", "sub/d.csv"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let got = data_files_in(&dir, "the dir").unwrap();
        let want: Vec<PathBuf> = ["a.rds", "b.RData", "sub/c.RDA"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(got, want);
        let empty = dir.join("sub").join("none");
        std::fs::create_dir_all(&empty).unwrap();
        std::fs::write(empty.join("x.txt"), b"x").unwrap();
        let err = data_files_in(&empty, "none").unwrap_err();
        assert!(
            err.to_string()
                .contains("directory 'none' holds no .rda, .RData or .rds file"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
