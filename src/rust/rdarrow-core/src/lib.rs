//! rdarrow-core: R's serialization format (`.RData`/`.rda` from `save()`,
//! `.rds` from `saveRDS()`, raw `serialize()` streams) without R.
//!
//! Pipeline: [`compression`] detects and decompresses, [`input`] decodes
//! primitives, [`read`] builds the [`tree`], [`write`] serializes it back,
//! [`altrep`] expands ALTREP objects, [`summary`] lists objects without
//! decoding their payloads.

pub mod altrep;
pub mod arrow;
pub mod build;
pub mod cancel;
pub mod compression;
pub mod encoding;
pub mod error;
pub mod file_out;
pub mod input;
pub mod layout;
pub mod parallel;
pub mod read;
pub mod summary;
pub mod tree;
pub mod validate;
pub mod write;

pub use compression::Compression;
pub use error::{Error, ErrorKind, Result};
pub use file_out::{atomic_write, WritebackFile};
pub use input::Format;
pub use read::{ColumnHook, Container, ObjectFilter, ObjectSpan, ReadOptions, StreamHeader};
pub use tree::{RObject, RefTable};

use input::{Input, Source};
use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

/// A parsed file or stream.
#[derive(Debug, Clone)]
pub struct Document {
    pub compression: Compression,
    pub container: Container,
    pub header: StreamHeader,
    /// For a `save()` file, the pairlist of objects; otherwise the object.
    pub root: RObject,
    pub refs: RefTable,
    /// Where each top-level object lies in the decompressed stream.
    pub spans: Vec<ObjectSpan>,
    /// Size of the decompressed stream in bytes.
    pub stream_len: u64,
}

impl Document {
    /// The named top-level objects: the cells of a `save()` file, the
    /// elements of a named list at the top of a `save()` file, or the one
    /// object of an RDS stream (with an empty name).
    pub fn objects(&self) -> Vec<(Vec<u8>, &RObject)> {
        match (self.container, &self.root) {
            (Container::RData { .. }, RObject::Pairlist(_)) => tree::pairlist_entries(&self.root, &self.refs)
                .into_iter()
                .map(|(n, v)| (n.unwrap_or(b"").to_vec(), v))
                .collect(),
            (Container::RData { .. }, RObject::Vector(v)) => {
                let names = self.root.attribute(&self.refs, "names").and_then(|n| n.as_strings());
                match (&v.data, names) {
                    (tree::VectorData::List(items), Some(names)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, it)| (names.get(i).unwrap_or(b"").to_vec(), it))
                        .collect(),
                    _ => vec![(Vec::new(), &self.root)],
                }
            }
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![(Vec::new(), &self.root)],
        }
    }
}

impl Document {
    /// Move the top-level objects out of the document (for building them
    /// elsewhere without holding two copies). The reference table stays.
    pub fn take_objects(&mut self) -> Vec<(Vec<u8>, RObject)> {
        let names: Vec<Vec<u8>> = self.objects().into_iter().map(|(n, _)| n).collect();
        let named_list = matches!(&self.root, RObject::Vector(v) if matches!(v.data, tree::VectorData::List(_)))
            && self.root.attribute(&self.refs, "names").and_then(|n| n.as_strings()).is_some();
        let values: Vec<RObject> = match (self.container, &mut self.root) {
            (Container::RData { .. }, RObject::Pairlist(p)) => {
                p.cells.iter_mut().map(|c| std::mem::replace(&mut c.car, RObject::Null)).collect()
            }
            (Container::RData { .. }, RObject::Vector(v)) if named_list => match &mut v.data {
                tree::VectorData::List(items) => std::mem::take(items),
                _ => unreachable!(),
            },
            (Container::RData { .. }, RObject::Null) => Vec::new(),
            _ => vec![std::mem::replace(&mut self.root, RObject::Null)],
        };
        names.into_iter().zip(values).collect()
    }
}

fn open_input(path: &Path) -> Result<(Compression, Input)> {
    let mut file = File::open(path).map_err(|e| Error::io(&e, &format!("cannot open '{}'", path.display())))?;
    let len = file.metadata().map_err(|e| Error::io(&e, "cannot stat the file"))?.len();
    let mut prefix = [0u8; 6];
    let mut got = 0;
    while got < prefix.len() {
        let n = file.read(&mut prefix[got..]).map_err(|e| Error::io(&e, "cannot read the file"))?;
        if n == 0 {
            break;
        }
        got += n;
    }
    if got == 0 {
        return Err(Error::new(ErrorKind::NotRData, format!("'{}' is empty", path.display())));
    }
    let kind = Compression::detect(&prefix[..got]);
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0)).map_err(|e| Error::io(&e, "cannot seek"))?;
    let src = if kind == Compression::None {
        Source::File { file, len }
    } else {
        let (_, r) = compression::decompressor(BufReader::with_capacity(1 << 16, file))
            .map_err(|e| Error::io(&e, "cannot start decompression"))?;
        let piped = compression::PipelinedReader::new(r).map_err(|e| Error::io(&e, "cannot start the decompression thread"))?;
        Source::Stream(Box::new(piped))
    };
    Ok((kind, Input::new(src)))
}

fn input_from_bytes(bytes: Vec<u8>) -> Result<(Compression, Input)> {
    let kind = Compression::detect(&bytes);
    if kind == Compression::None {
        return Ok((kind, Input::from_bytes(bytes)));
    }
    let (_, r) = compression::decompressor(std::io::Cursor::new(bytes)).map_err(|e| Error::io(&e, "cannot start decompression"))?;
    Ok((kind, Input::new(Source::Stream(r))))
}

/// Stack for the parsing thread: deep (but bounded) nesting recurses.
const PARSE_STACK: usize = 1 << 30;

fn parse(kind: Compression, inp: Input, opts: &ReadOptions, filter: &mut (dyn ObjectFilter + Send)) -> Result<Document> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("rdarrow-parse".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(scope, move || parse_here(kind, inp, opts, filter));
        match handle {
            Ok(h) => h.join().unwrap_or_else(|_| Err(Error::corrupt("internal error: the parser panicked"))),
            Err(e) => Err(Error::io(&e, "cannot start the parsing thread")),
        }
    })
}

fn parse_here(kind: Compression, mut inp: Input, opts: &ReadOptions, filter: &mut (dyn ObjectFilter + Send)) -> Result<Document> {
    let (container, mut header) = read::read_header(&mut inp)?;
    let (root, refs, spans) = read::read_body(&mut inp, container, &header, opts, filter)?;
    header.ascii_hex = inp.saw_hex_double;
    if header.format == Format::Ascii {
        // the line end after the last token belongs to the stream
        inp.skip_ascii_whitespace()?;
    }
    let stream_len = inp.offset();
    Ok(Document { compression: kind, container, header, root, refs, spans, stream_len })
}

/// Read a file completely.
pub fn read_file(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<Document> {
    read_file_filtered(path, opts, &mut |_: &[u8]| true)
}

/// Read a file, decoding only the top-level objects `filter` accepts
/// (the others are parsed with their payloads skipped).
pub fn read_file_filtered(path: impl AsRef<Path>, opts: &ReadOptions, filter: &mut (dyn ObjectFilter + Send)) -> Result<Document> {
    let (kind, inp) = open_input(path.as_ref())?;
    parse(kind, inp, opts, filter)
}

/// Read an in-memory file or `serialize()` result (compressed or not).
pub fn read_bytes(bytes: Vec<u8>, opts: &ReadOptions) -> Result<Document> {
    let (kind, inp) = input_from_bytes(bytes)?;
    parse(kind, inp, opts, &mut |_: &[u8]| true)
}

/// List the objects of a file without decoding payloads.
pub fn list_file(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<(Document, Vec<summary::ObjectInfo>)> {
    let doc = read_file_filtered(path, opts, &mut |_: &[u8]| false)?;
    let infos = summary::describe(&doc);
    // R cannot hold these names (its reader refuses the file), so neither
    // can a listing handed to R
    if let Some(bad) = infos.iter().find(|i| i.name.contains('\0') || i.class.contains('\0')) {
        let what = if bad.name.contains('\0') { "the object's name" } else { "the object's class" };
        return Err(Error::corrupt(format!("{what} holds an embedded NUL byte, which R strings cannot hold")).in_object(&bad.name.replace('\0', "\\0")));
    }
    Ok((doc, infos))
}

/// Decompress a file completely and return the number of bytes (the
/// baseline the parser is measured against).
pub fn decompressed_len(path: impl AsRef<Path>) -> Result<u64> {
    let (_, mut inp) = open_input(path.as_ref())?;
    let mut n = 0u64;
    while !inp.at_end()? {
        let chunk = inp.peek(1 << 17)?.len();
        inp.consume(chunk);
        n += chunk as u64;
    }
    Ok(n)
}

/// Decompress a whole file or byte vector into memory.
pub fn decompress_bytes(bytes: Vec<u8>) -> Result<Vec<u8>> {
    let (_, mut inp) = input_from_bytes(bytes)?;
    let mut out = Vec::new();
    while !inp.at_end()? {
        let chunk = inp.peek(1 << 17)?;
        out.extend_from_slice(chunk);
        let k = chunk.len();
        inp.consume(k);
    }
    Ok(out)
}

/// Serialize a document back, uncompressed, in its own format and version.
pub fn write_document<W: Write>(doc: &Document, sink: W) -> Result<W> {
    write::write_stream(sink, doc.container, &doc.header, &doc.root, &doc.refs)
}

/// Serialize one object of a document as a stand-alone RDS stream
/// (XDR, the document's version), sharing its reference table.
pub fn object_to_rds(doc: &Document, obj: &RObject) -> Result<Vec<u8>> {
    node_to_rds(&doc.header, &doc.refs, obj)
}

/// As [`object_to_rds`], for any node of a stream with this header and
/// reference table.
pub fn node_to_rds(header: &StreamHeader, refs: &tree::RefTable, obj: &RObject) -> Result<Vec<u8>> {
    let mut header = header.clone();
    header.format = Format::Xdr;
    header.crlf = false;
    header.leading_newline = false;
    header.ascii_hex = false;
    if header.version == 3 && header.native_encoding.is_none() {
        header.native_encoding = Some(b"UTF-8".to_vec());
    }
    write::write_stream(Vec::new(), Container::Stream, &header, obj, refs)
}

/// Change the format and/or version a document will be written in.
/// Version 2 has no ALTREP (those are written expanded) and no native
/// encoding in its header.
pub fn convert_document(doc: &mut Document, format: Format, version: i32) -> Result<()> {
    if version != 2 && version != 3 {
        return Err(Error::usage(format!("version must be 2 or 3, not {version}")));
    }
    let h = &mut doc.header;
    h.format = format;
    h.crlf = false;
    h.leading_newline = false;
    if version != h.version {
        h.version = version;
        if version == 2 {
            h.min_reader_version = 0x0002_0300;
            h.native_encoding = None;
        } else {
            h.min_reader_version = 0x0003_0500;
            h.native_encoding = Some(b"UTF-8".to_vec());
        }
    }
    if let Container::RData { .. } = doc.container {
        let letter = match format {
            Format::Xdr => b'X',
            Format::Ascii => b'A',
            Format::Binary => b'B',
        };
        doc.container = Container::RData { format: letter, version: b'0' + version as u8 };
    }
    Ok(())
}

/// Write a document to `path` with compression; the file appears only when
/// complete (written beside it under a temporary name, then renamed).
pub fn write_file(doc: &Document, path: impl AsRef<Path>, compression: Compression, level: Option<u32>) -> Result<()> {
    write_file_threads(doc, path, compression, level, 1)
}

/// As [`write_file`], compressing independent blocks on `threads` threads
/// (the bytes written do not depend on `threads`).
pub fn write_file_threads(doc: &Document, path: impl AsRef<Path>, compression: Compression, level: Option<u32>, threads: usize) -> Result<()> {
    write_tree_file(path.as_ref(), doc.container, &doc.header, &doc.root, &doc.refs, compression, level, threads)
}

/// Serialize `root` into a compressed file at `path`, atomically.
#[allow(clippy::too_many_arguments)]
pub fn write_tree_file(
    path: &Path,
    container: Container,
    header: &StreamHeader,
    root: &RObject,
    refs: &RefTable,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
) -> Result<()> {
    if matches!(compression, Compression::Lzma | Compression::LazyLoadZlib) {
        return Err(Error::usage("write gzip, bzip2, xz, zstd or none"));
    }
    if header.format == Format::Xdr {
        // laid out, then rendered and written on all cores
        let layout = write::layout_stream(container, header, root, refs, threads)?;
        return layout::write_layout_file(path, &layout, compression, level, threads, &mut |_| {});
    }
    atomic_write(path, |f| {
        let c = parallel::ParallelCompressor::new(std::io::BufWriter::with_capacity(1 << 20, f), compression, level, threads)
            .map_err(|e| Error::io(&e, "cannot start compression"))?;
        let c = write::write_stream(c, container, header, root, refs)?;
        let w = c.finish().map_err(|e| {
            if e.kind() == std::io::ErrorKind::Interrupted {
                Error::new(ErrorKind::Interrupted, "interrupted by the user")
            } else {
                Error::io(&e, "cannot compress")
            }
        })?;
        w.into_inner().map_err(|e| Error::io(e.error(), "cannot write")).map(|_| ())
    })
}
