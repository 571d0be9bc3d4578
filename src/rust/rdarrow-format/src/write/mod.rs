//! The writer: the same tree back to R's serialization format, in XDR,
//! ASCII or native binary, version 2 or 3. Reference numbers are assigned in
//! the order objects are first written, as R's serializer does, so a parsed
//! stream re-serializes byte for byte.

pub mod layout;
pub mod qdata;
pub mod fst;

use crate::compression::Compression;
use crate::base::error::{Error, Result};
use crate::wire::header::{write_header, Container, StreamHeader};
use crate::wire::decode::Format;
use crate::write::layout::{Layout, StringItem, StringSource};
pub use crate::wire::encode::{ascii_double, Output};
use crate::tree::*;
use arrow_buffer::{Buffer, ScalarBuffer};
use std::io::Write;
use std::path::Path;

/// Where the serializer's items go: a byte stream ([`Output`], every
/// format) or a [`Layout`] (XDR), which keeps the tree's vectors as they
/// are (shared, never copied) for the parallel writer.
pub trait Emit {
    /// One integer.
    fn int(&mut self, i: i32) -> Result<()>;
    /// String bytes (CHARSXP payload, primitive names).
    fn string(&mut self, s: &[u8]) -> Result<()>;
    /// Integers.
    fn ints(&mut self, v: &ScalarBuffer<i32>) -> Result<()>;
    /// Doubles.
    fn doubles(&mut self, v: &ScalarBuffer<f64>) -> Result<()>;
    /// Bytes.
    fn raw(&mut self, v: &Buffer) -> Result<()>;
    /// Every element of a character vector, each as a CHARSXP.
    fn strings(&mut self, s: &StringVector) -> Result<()>;

    /// A vector length as R writes it (-1 and two words when long).
    fn length(&mut self, n: u64) -> Result<()> {
        if n > i32::MAX as u64 {
            self.int(-1)?;
            self.int((n >> 32) as i32)?;
            self.int((n & 0xffff_ffff) as u32 as i32)
        } else {
            self.int(n as i32)
        }
    }

    /// One CHARSXP: flags, then length and bytes (-1 for `NA_character_`).
    fn charsxp(&mut self, levels: u16, bytes: Option<&[u8]>) -> Result<()> {
        self.int(charsxp_flags(levels))?;
        match bytes {
            None => self.int(-1),
            Some(b) => {
                self.int(b.len() as i32)?;
                self.string(b)
            }
        }
    }

    /// A reference to the `index`-th (from 1) hashed object written,
    /// packed into the flags word while it fits, as R writes it.
    fn reference(&mut self, index: u32) -> Result<()> {
        match pack_reference(index) {
            Some(w) => self.int(w),
            None => {
                self.int(sxp::REFSXP as i32)?;
                self.int(index as i32)
            }
        }
    }
}

/// The flags word of a CHARSXP with these levels.
fn charsxp_flags(levels: u16) -> i32 {
    pack(
        sxp::CHAR,
        Flags {
            levels,
            object: false,
        },
        false,
        false,
    )
}

impl<W: Write> Emit for Output<W> {
    fn int(&mut self, i: i32) -> Result<()> {
        Output::int(self, i)
    }
    fn string(&mut self, s: &[u8]) -> Result<()> {
        Output::string(self, s)
    }
    fn ints(&mut self, v: &ScalarBuffer<i32>) -> Result<()> {
        self.int_slice(v)
    }
    fn doubles(&mut self, v: &ScalarBuffer<f64>) -> Result<()> {
        self.double_slice(v)
    }
    fn raw(&mut self, v: &Buffer) -> Result<()> {
        self.raw_slice(v)
    }
    fn strings(&mut self, s: &StringVector) -> Result<()> {
        (0..s.len()).try_for_each(|i| self.charsxp(s.levels(i), s.get(i)))
    }
}

impl StringSource for StringVector {
    fn count(&self) -> usize {
        self.len()
    }
    fn item(&self, i: usize) -> StringItem<'_> {
        StringItem {
            flags: charsxp_flags(self.levels(i)),
            bytes: self.get(i),
        }
    }
}

impl Emit for Layout<'_> {
    fn int(&mut self, i: i32) -> Result<()> {
        Layout::int(self, i);
        Ok(())
    }
    fn string(&mut self, s: &[u8]) -> Result<()> {
        self.put(s);
        Ok(())
    }
    fn ints(&mut self, v: &ScalarBuffer<i32>) -> Result<()> {
        Layout::ints(self, v.clone());
        Ok(())
    }
    fn doubles(&mut self, v: &ScalarBuffer<f64>) -> Result<()> {
        Layout::doubles(self, v.clone());
        Ok(())
    }
    fn raw(&mut self, v: &Buffer) -> Result<()> {
        self.bytes(ScalarBuffer::<u8>::new(v.clone(), 0, v.len()));
        Ok(())
    }
    fn strings(&mut self, s: &StringVector) -> Result<()> {
        Layout::strings(self, std::sync::Arc::new(s.clone()));
        Ok(())
    }
}

/// Writes items, numbering references as R does.
pub struct Serializer<'r, E: Emit> {
    /// Where the items go.
    pub out: E,
    refs: &'r RefTable,
    out_index: Vec<u32>,
    count: u32,
    /// Version 2 streams cannot hold ALTREP: write those expanded.
    expand_altrep: bool,
}

impl<'r, E: Emit> Serializer<'r, E> {
    /// A serializer into `out`, numbering references after `refs`.
    pub fn new(out: E, refs: &'r RefTable) -> Self {
        Serializer {
            out,
            refs,
            out_index: vec![0; refs.entries.len()],
            count: 0,
            expand_altrep: false,
        }
    }

    fn attrs(&mut self, a: &Option<RObject>) -> Result<()> {
        match a {
            Some(a) => self.item(a),
            None => Ok(()),
        }
    }

    fn char_item(&mut self, c: &CharItem) -> Result<()> {
        self.out.charsxp(c.levels, c.bytes.as_deref())
    }

    fn string_list(&mut self, code: u8, s: &[CharItem]) -> Result<()> {
        self.out.int(code as i32)?;
        self.out.int(0)?;
        self.out.length(s.len() as u64)?;
        s.iter().try_for_each(|c| self.char_item(c))
    }

    fn reference(&mut self, id: RefId) -> Result<()> {
        let slot = id.0 as usize;
        let entry = self.refs.get(id).ok_or_else(|| {
            Error::internal(format!(
                "reference {} has no entry in the reference table",
                id.0 + 1
            ))
        })?;
        if self.out_index[slot] != 0 {
            return self.out.reference(self.out_index[slot]);
        }
        self.count += 1;
        self.out_index[slot] = self.count;
        match entry {
            RefEntry::Symbol(c) => {
                self.out.int(sxp::SYM as i32)?;
                self.char_item(c)
            }
            RefEntry::Environment(e) => {
                self.out.int(sxp::ENV as i32)?;
                self.out.int(e.locked as i32)?;
                self.item(&e.enclosure)?;
                self.item(&e.frame)?;
                self.item(&e.hashtab)?;
                self.item(&e.attributes)
            }
            RefEntry::Package(s) => self.string_list(sxp::PACKAGE, s),
            RefEntry::Namespace(s) => self.string_list(sxp::NAMESPACE, s),
            RefEntry::Persistent(s) => self.string_list(sxp::PERSIST, s),
            RefEntry::ExternalPointer(p) => {
                self.out
                    .int(pack(sxp::EXTPTR, p.flags, p.attributes.is_some(), false))?;
                self.item(&p.protected)?;
                self.item(&p.tag)?;
                self.attrs(&p.attributes)
            }
            RefEntry::WeakRef(w) => {
                self.out
                    .int(pack(sxp::WEAKREF, w.flags, w.attributes.is_some(), false))?;
                self.attrs(&w.attributes)
            }
            RefEntry::Pending => Err(Error::internal(
                "an environment in the reference table was never completed",
            )),
        }
    }

    /// Write one item.
    pub fn item(&mut self, obj: &RObject) -> Result<()> {
        match obj {
            RObject::Null => self.out.int(sxp::NILVALUE as i32),
            RObject::Taken(_) => Err(Error::usage(
                "cannot write an object that a consumer took while the file was read",
            )),
            RObject::Special(s) => self.out.int(s.code() as i32),
            RObject::Ref(id) => self.reference(*id),
            RObject::Pairlist(p) => {
                for c in &p.cells {
                    self.out.int(pack(
                        c.sxptype,
                        c.flags,
                        c.attributes.is_some(),
                        c.tag.is_some(),
                    ))?;
                    self.attrs(&c.attributes)?;
                    if let Some(t) = &c.tag {
                        self.item(t)?;
                    }
                    self.item(&c.car)?;
                }
                self.item(&p.tail)
            }
            RObject::Vector(v) => self.vector(v),
            RObject::Char(c) => self.char_item(c),
            RObject::Primitive(p) => {
                self.out
                    .int(pack(p.sxptype, p.flags, p.attributes.is_some(), false))?;
                self.out.int(p.name.len() as i32)?;
                self.out.string(&p.name)?;
                self.attrs(&p.attributes)
            }
            RObject::S4(s) => {
                self.out
                    .int(pack(sxp::S4, s.flags, s.attributes.is_some(), false))?;
                self.attrs(&s.attributes)
            }
            RObject::Bytecode(b) => {
                self.out
                    .int(pack(sxp::BCODE, b.flags, b.attributes.is_some(), false))?;
                self.out.int(b.reps_len)?;
                self.bytecode(&b.code)?;
                self.attrs(&b.attributes)
            }
            RObject::Altrep(a) if self.expand_altrep => {
                let data = crate::tree::altrep::expand(a, self.refs)?;
                let attributes = match &a.attributes {
                    RObject::Null => None,
                    other => Some(other.clone()),
                };
                self.vector(&Vector {
                    flags: a.flags,
                    data,
                    attributes,
                })
            }
            RObject::Altrep(a) => {
                self.out.int(pack(sxp::ALTREP, a.flags, false, false))?;
                self.item(&a.info)?;
                self.item(&a.state)?;
                self.item(&a.attributes)
            }
        }
    }

    fn vector(&mut self, v: &Vector) -> Result<()> {
        let t = v.data.sxptype();
        if let VectorData::Skipped { .. } | VectorData::Deferred(_) = v.data {
            return Err(Error::internal(
                "cannot write an object whose payload was skipped",
            ));
        }
        self.vector_head(t, v, v.data.len())?;
        self.elements(&v.data)?;
        self.attrs(&v.attributes)
    }

    /// A vector's flags and length: what comes before its elements.
    fn vector_head(&mut self, t: u8, v: &Vector, len: u64) -> Result<()> {
        self.out
            .int(pack(t, v.flags, v.attributes.is_some(), false))?;
        self.out.length(len)
    }

    /// A vector's elements (all of them, or a part written in turn).
    fn elements(&mut self, data: &VectorData) -> Result<()> {
        match data {
            VectorData::Logical(x) | VectorData::Integer(x) => self.out.ints(x),
            VectorData::Real(x) | VectorData::Complex(x) => self.out.doubles(x),
            VectorData::Raw(x) => self.out.raw(x),
            VectorData::Character(s) => self.out.strings(s),
            VectorData::List(items) | VectorData::Expression(items) => {
                items.iter().try_for_each(|it| self.item(it))
            }
            VectorData::Skipped { .. } | VectorData::Deferred(_) => Err(Error::internal(
                "cannot write an object whose payload was skipped",
            )),
            VectorData::Consumed(c) => self.consumed(c),
        }
    }

    /// A payload a consumer holds, read back where it can be. Apart, so
    /// that the payload it reads back is no part of the frames the writer
    /// nests (deep objects are written on whatever stack the caller has).
    #[inline(never)]
    fn consumed(&mut self, c: &crate::tree::Consumed) -> Result<()> {
        match c.payload() {
            Some(payload) => self.elements(&payload),
            None => Err(Error::usage(
                "cannot write a column whose payload went to a consumer",
            )),
        }
    }

    /// A vector whose elements come in parts: `parts` hands each part to
    /// the function it is given, in order; together they must be `skeleton`'s
    /// type and length (its payload is [`VectorData::Skipped`]).
    fn vector_in_parts(
        &mut self,
        skeleton: &Vector,
        parts: &mut dyn FnMut(&mut dyn FnMut(VectorData) -> Result<()>) -> Result<()>,
    ) -> Result<()> {
        let (t, len) = (skeleton.data.sxptype(), skeleton.data.len());
        self.vector_head(t, skeleton, len)?;
        let mut written = 0u64;
        parts(&mut |part: VectorData| {
            written += part.len();
            if part.sxptype() != t || written > len {
                return Err(Error::internal(
                    "a column's part came back as another type or past its length",
                ));
            }
            self.elements(&part)
        })?;
        if written != len {
            return Err(Error::internal("a column's parts fell short of its length"));
        }
        self.attrs(&skeleton.attributes)
    }

    fn bytecode(&mut self, b: &Bytecode) -> Result<()> {
        self.item(&b.code)?;
        self.out.int(b.consts.len() as i32)?;
        for c in &b.consts {
            match c {
                BcConst::Code(inner) => {
                    self.out.int(sxp::BCODE as i32)?;
                    self.bytecode(inner)?;
                }
                BcConst::Lang(l) => self.bc_lang(l)?,
                BcConst::Item { type_code, value } => {
                    self.out.int(*type_code)?;
                    self.item(value)?;
                }
            }
        }
        Ok(())
    }

    fn bc_lang(&mut self, l: &BcLang) -> Result<()> {
        match l {
            BcLang::Ref(i) => {
                self.out.int(sxp::BCREPREF as i32)?;
                self.out.int(*i)
            }
            BcLang::Item { pad, value } => {
                self.out.int(*pad)?;
                self.item(value)
            }
            BcLang::Cell(c) => {
                if let Some(pos) = c.def {
                    self.out.int(sxp::BCREPDEF as i32)?;
                    self.out.int(pos)?;
                }
                self.out.int(c.type_code)?;
                self.attrs(&c.attributes)?;
                self.item(&c.tag)?;
                self.bc_lang(&c.car)?;
                self.bc_lang(&c.cdr)
            }
        }
    }
}

/// Serialize `root` (with its reference table) to `sink`, uncompressed.
pub fn write_stream<W: Write>(
    sink: W,
    container: Container,
    header: &StreamHeader,
    root: &RObject,
    refs: &RefTable,
) -> Result<W> {
    let mut out = Output::new(sink, header.format, header.ascii_hex);
    write_header(&mut out, container, header)?;
    let mut s = Serializer::new(out, refs);
    s.expand_altrep = header.version < 3;
    s.item(root)?;
    s.out.finish()
}

/// [`write_stream`] in memory, and whether the stream keeps every
/// double's bits (an ASCII stream keeps no NaN payload other than
/// `NA_real_`'s and `NaN`'s: R's arithmetic on NA makes others).
pub fn write_stream_exact(
    container: Container,
    header: &StreamHeader,
    root: &RObject,
    refs: &RefTable,
) -> Result<(Vec<u8>, bool)> {
    let mut out = Output::new(Vec::new(), header.format, header.ascii_hex);
    write_header(&mut out, container, header)?;
    let mut s = Serializer::new(out, refs);
    s.expand_altrep = header.version < 3;
    s.item(root)?;
    let exact = s.out.inexact() == 0;
    Ok((s.out.finish()?, exact))
}

/// The stream laid out for the parallel writer (XDR only): container
/// magic, header and items, the tree's vectors shared, never copied.
pub fn layout_stream(
    container: Container,
    header: &StreamHeader,
    root: &RObject,
    refs: &RefTable,
    threads: usize,
) -> Result<Layout<'static>> {
    if header.format != Format::Xdr {
        return Err(Error::internal("only XDR streams are laid out"));
    }
    let mut head = Output::new(Vec::new(), header.format, false);
    write_header(&mut head, container, header)?;
    let mut layout = Layout::new();
    layout.put(&head.finish()?);
    let mut s = Serializer::new(layout, refs);
    s.expand_altrep = header.version < 3;
    s.item(root)?;
    Ok(s.out.finish(threads))
}

/// Serialize `root` into a compressed file at `path`, atomically.
#[allow(clippy::too_many_arguments)]
pub fn write_tree_file(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    container: Container,
    header: &StreamHeader,
    root: &RObject,
    refs: &RefTable,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
) -> Result<()> {
    compression.check_writable()?;
    if compression.is_qs_container() && !container.is_rds() {
        return Err(one_object(compression));
    }
    if compression == Compression::Qdata {
        return qdata::write_qdata_file(path, storage, root, refs, level, threads).map(drop);
    }
    if compression == Compression::Fst {
        return fst::write_fst_file(path, storage, root, refs, level);
    }
    if header.format == Format::Xdr {
        // laid out, then rendered and written on all cores
        let layout = layout_stream(container, header, root, refs, threads)?;
        return crate::write::layout::write_layout_file(
            path,
            storage,
            &layout,
            compression,
            level,
            threads,
            &mut |_| {},
        );
    }
    compressed_file(path, storage, compression, level, threads, |c| {
        write_stream(c, container, header, root, refs)
    })
}

/// The error of a `.qs2` or `.qdata` file asked to hold named objects, as
/// a `save()` file does.
pub fn one_object(compression: Compression) -> Error {
    Error::usage(format!(
        "a .{} file holds one object, as an .rds file does, not objects by name",
        compression.name()
    ))
}

/// The compressor of a file being written atomically at `path`, its
/// blocks compressed on `threads` threads (the bytes are those of any other
/// writer here); `fill` writes the stream and hands the compressor back.
fn compressed_file(
    path: &Path,
    storage: &crate::io::store::StorageOptions,
    compression: Compression,
    level: Option<u32>,
    threads: usize,
    fill: impl for<'a> FnOnce(FileCompressor<'a>) -> Result<FileCompressor<'a>>,
) -> Result<()> {
    crate::io::atomic::atomic_write(path, storage, |f| {
        // a file (not an upload) gets the gzip index, written at the end
        let indexed = f.can_patch();
        let c = crate::compression::parallel::ParallelCompressor::indexed_if(
            std::io::BufWriter::with_capacity(1 << 20, f as &mut dyn Write),
            compression,
            level,
            threads,
            indexed,
        )
        .map_err(|e| Error::io(&e, "cannot start compression"))?;
        let (w, patch) = fill(c)?.finish_indexed().map_err(|e| {
            if e.kind() == std::io::ErrorKind::Interrupted {
                Error::new(crate::ErrorKind::Interrupted, "interrupted by the user")
            } else {
                Error::io(&e, "cannot compress")
            }
        })?;
        w.into_inner()
            .map_err(|e| Error::io(e.error(), "cannot write"))?;
        match patch {
            Some(p) => f.patch(&p).map_err(|e| Error::io(&e, "cannot write")),
            None => Ok(()),
        }
    })
}

/// What [`compressed_file`] hands to the code that fills the file.
type FileCompressor<'a> =
    crate::compression::parallel::ParallelCompressor<std::io::BufWriter<&'a mut dyn Write>>;

/// Write `frame`, a data frame whose columns may have skipped payloads
/// (`VectorData::Skipped`), as an R data file: each skipped column's
/// elements are made by `fill(j, part)` when column `j` is written, handed
/// to `part` a part at a time and each dropped once written, so the file
/// holds the data frame while memory holds one part of one column. The
/// file's bytes are those [`write_object_file`] writes for the whole
/// frame.
pub fn write_frame_file(
    path: &Path,
    frame: &RObject,
    mut refs: RefTable,
    o: &ObjectFileOptions,
    fill: &mut dyn FnMut(usize, &mut dyn FnMut(VectorData) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let header = StreamHeader::new(o.format(), o.version, o.writer_version)?;
    o.compression.check_writable()?;
    if o.compression.is_qs_container() && !o.rds {
        return Err(one_object(o.compression));
    }
    if o.compression == Compression::Qdata {
        // qdata groups the data by type after the whole tree: the frame
        // is made whole first
        let whole = whole_frame(frame, fill)?;
        return qdata::write_qdata_file(path, &o.storage, &whole, &refs, o.level, o.threads.max(1))
            .map(drop);
    }
    if o.compression == Compression::Fst {
        let whole = whole_frame(frame, fill)?;
        return fst::write_fst_file(path, &o.storage, &whole, &refs, o.level);
    }
    let RObject::Vector(v) = frame else {
        return Err(Error::internal("a data frame to write is not a vector"));
    };
    let VectorData::List(columns) = &v.data else {
        return Err(Error::internal("a data frame to write is not a list"));
    };
    let name = (!o.rds).then(|| name_symbol(&mut refs, &o.name));
    compressed_file(
        path,
        &o.storage,
        o.compression,
        o.effective_level(),
        o.threads.max(1),
        |c| {
            let mut out = Output::new(c, header.format, header.ascii_hex);
            write_header(&mut out, o.container(), &header)?;
            let mut s = Serializer::new(out, &refs);
            s.expand_altrep = header.version < 3;
            if let Some(sym) = name {
                // the one cell of save()'s pairlist, tagged with the name
                s.out.int(pack(sxp::LIST, Flags::default(), false, true))?;
                s.item(&RObject::Ref(sym))?;
            }
            s.out
                .int(pack(sxp::VEC, v.flags, v.attributes.is_some(), false))?;
            s.out.length(columns.len() as u64)?;
            for (j, col) in columns.iter().enumerate() {
                crate::base::cancel::check()?;
                match col {
                    RObject::Vector(c) if matches!(c.data, VectorData::Skipped { .. }) => {
                        s.vector_in_parts(c, &mut |part| fill(j, part))?
                    }
                    other => s.item(other)?,
                }
            }
            s.attrs(&v.attributes)?;
            if name.is_some() {
                s.item(&RObject::Null)?;
            }
            s.out.finish()
        },
    )
}

/// `frame` with each skipped column made whole by `fill` (see
/// [`write_frame_file`]).
fn whole_frame(
    frame: &RObject,
    fill: &mut dyn FnMut(usize, &mut dyn FnMut(VectorData) -> Result<()>) -> Result<()>,
) -> Result<RObject> {
    let RObject::Vector(v) = frame else {
        return Err(Error::internal("a data frame to write is not a vector"));
    };
    let VectorData::List(columns) = &v.data else {
        return Err(Error::internal("a data frame to write is not a list"));
    };
    let mut out = Vec::with_capacity(columns.len());
    for (j, col) in columns.iter().enumerate() {
        match col {
            RObject::Vector(c) if matches!(c.data, VectorData::Skipped { .. }) => {
                let mut parts = Vec::new();
                fill(j, &mut |part| {
                    parts.push(part);
                    Ok(())
                })?;
                out.push(RObject::Vector(Box::new(Vector {
                    flags: c.flags,
                    data: concat_parts(parts)?,
                    attributes: c.attributes.clone(),
                })));
            }
            other => out.push(other.clone()),
        }
    }
    Ok(RObject::Vector(Box::new(Vector {
        flags: v.flags,
        data: VectorData::List(out),
        attributes: v.attributes.clone(),
    })))
}

/// The parts of one vector, one after another.
fn concat_parts(parts: Vec<VectorData>) -> Result<VectorData> {
    fn ints(parts: &[VectorData], f: fn(&VectorData) -> Option<&ScalarBuffer<i32>>) -> Option<ScalarBuffer<i32>> {
        let mut v = Vec::new();
        for p in parts {
            v.extend_from_slice(f(p)?);
        }
        Some(ScalarBuffer::from(v))
    }
    let Some(first) = parts.first() else {
        return Err(Error::internal("a column of no parts"));
    };
    let bad = || Error::internal("the parts of a column differ in type");
    Ok(match first {
        VectorData::Logical(_) => VectorData::Logical(
            ints(&parts, |p| if let VectorData::Logical(v) = p { Some(v) } else { None }).ok_or_else(bad)?,
        ),
        VectorData::Integer(_) => VectorData::Integer(
            ints(&parts, |p| if let VectorData::Integer(v) = p { Some(v) } else { None }).ok_or_else(bad)?,
        ),
        VectorData::Real(_) | VectorData::Complex(_) => {
            let mut v: Vec<f64> = Vec::new();
            for p in &parts {
                match (first, p) {
                    (VectorData::Real(_), VectorData::Real(x)) | (VectorData::Complex(_), VectorData::Complex(x)) => {
                        v.extend_from_slice(x)
                    }
                    _ => return Err(bad()),
                }
            }
            if matches!(first, VectorData::Real(_)) {
                VectorData::Real(ScalarBuffer::from(v))
            } else {
                VectorData::Complex(ScalarBuffer::from(v))
            }
        }
        VectorData::Raw(_) => {
            let mut v = Vec::new();
            for p in &parts {
                let VectorData::Raw(b) = p else { return Err(bad()) };
                v.extend_from_slice(b.as_slice());
            }
            VectorData::Raw(Buffer::from_vec(v))
        }
        VectorData::Character(_) => {
            let n: usize = parts.iter().map(|p| p.len() as usize).sum();
            let mut b = StringVectorBuilder::new(n);
            for p in &parts {
                let VectorData::Character(s) = p else { return Err(bad()) };
                for i in 0..s.len() {
                    let lev = match &s.levels {
                        StringLevels::Uniform(l) => *l,
                        StringLevels::PerElement(v) => v[i],
                    };
                    b.push(s.get(i), lev);
                }
            }
            VectorData::Character(b.finish())
        }
        _ if parts.len() == 1 => parts.into_iter().next().expect("one part"),
        _ => return Err(Error::internal("a column whose parts cannot be joined")),
    })
}

/// The symbol of an object's name in a `save()` file, added to `refs`.
fn name_symbol(refs: &mut RefTable, name: &str) -> RefId {
    let levels = if name.is_ascii() {
        levels::ASCII
    } else {
        levels::UTF8
    };
    refs.push(RefEntry::Symbol(CharItem {
        levels,
        bytes: Some(name.as_bytes().to_vec()),
    }))
}

/// How [`write_object_file`] writes an R data file.
#[derive(Debug, Clone)]
pub struct ObjectFileOptions {
    /// The object's name in a `save()` file (unused for `.rds`).
    pub name: String,
    /// The compression.
    pub compression: Compression,
    /// Compression level; `None` for the method's default.
    pub level: Option<u32>,
    /// Serialization format version: 2 or 3.
    pub version: i32,
    /// ASCII instead of XDR.
    pub ascii: bool,
    /// Threads compressing independent blocks (the bytes do not depend on it).
    pub threads: usize,
    /// A single-object `.rds` stream instead of a `save()` file.
    pub rds: bool,
    /// The R version recorded as the writer, as R packs it (4.2.2 = 0x040202).
    pub writer_version: i32,
    /// For an object store URL: its options beyond the environment's.
    pub storage: crate::io::store::StorageOptions,
}

impl Default for ObjectFileOptions {
    fn default() -> Self {
        ObjectFileOptions {
            name: "data".to_string(),
            compression: Compression::Gzip,
            level: None,
            version: 3,
            ascii: false,
            threads: 1,
            rds: false,
            writer_version: crate::wire::header::DEFAULT_WRITER_VERSION,
            storage: Default::default(),
        }
    }
}

impl ObjectFileOptions {
    /// The compression level: the one asked for, else R's default for
    /// the file: `saveRDS()` writes xz at level 6 (`xzfile()`'s default),
    /// `save()` at 9; gzip 6 and bzip2 9 for both.
    pub fn effective_level(&self) -> Option<u32> {
        self.level.or_else(|| match (self.compression, self.rds) {
            (Compression::Xz, true) => Some(6),
            (c, _) => Some(c.default_level()),
        })
    }

    /// The serialization format these options write.
    pub fn format(&self) -> Format {
        if self.ascii {
            Format::Ascii
        } else {
            Format::Xdr
        }
    }

    /// What wraps the stream: a `save()` file's magic, or nothing for `.rds`.
    pub fn container(&self) -> Container {
        if self.rds {
            Container::Stream
        } else {
            Container::rdata(self.format(), self.version)
        }
    }
}

/// Write an object (with its reference table), such as the data frame
/// made from Arrow data, as `.RData` (one object named `o.name`) or
/// `.rds`; the file appears only when complete.
pub fn write_object_file(
    path: &Path,
    object: RObject,
    refs: RefTable,
    o: &ObjectFileOptions,
) -> Result<()> {
    write_objects_file(path, vec![(o.name.clone(), object)], refs, o)
}

/// Write objects sharing one reference table as one `.RData` file, each
/// under its name, in this order, as `save()` writes several objects (or,
/// with `o.rds`, the one object as `.rds`); the file appears only when
/// complete.
pub fn write_objects_file(
    path: &Path,
    objects: Vec<(String, RObject)>,
    mut refs: RefTable,
    o: &ObjectFileOptions,
) -> Result<()> {
    let header = StreamHeader::new(o.format(), o.version, o.writer_version)?;
    let root = if o.rds {
        let mut objects = objects;
        match (objects.pop(), objects.is_empty()) {
            (Some((_, object)), true) => object,
            _ => return Err(Error::usage("an .rds file holds exactly one object")),
        }
    } else {
        let mut seen = std::collections::HashSet::new();
        let cells = objects
            .into_iter()
            .map(|(name, car)| {
                if name.is_empty() || name.contains('\0') {
                    return Err(Error::usage(format!(
                        "'{}' cannot name an object in an .RData file",
                        name.replace('\0', "\\0")
                    )));
                }
                if !seen.insert(name.clone()) {
                    return Err(Error::usage(format!("two objects are named '{name}'")));
                }
                let sym = name_symbol(&mut refs, &name);
                Ok(Cell {
                    sxptype: sxp::LIST,
                    flags: Flags::default(),
                    attributes: None,
                    tag: Some(RObject::Ref(sym)),
                    car,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if cells.is_empty() {
            return Err(Error::usage("nothing to save: no objects"));
        }
        RObject::Pairlist(Box::new(Pairlist {
            cells,
            tail: RObject::Null,
        }))
    };
    write_tree_file(
        path,
        &o.storage,
        o.container(),
        &header,
        &root,
        &refs,
        o.compression,
        o.effective_level(),
        o.threads.max(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_doubles_match_c() {
        assert_eq!(ascii_double(0.1, false), "0.1\n");
        assert_eq!(
            ascii_double(1e-5, false),
            "1.000000000000000e-05\n".replace("1.000000000000000e-05", "1e-05")
        );
        assert_eq!(ascii_double(3.0, true), "0x1.8p+1\n");
        assert_eq!(
            ascii_double(f64::from_bits(crate::tree::na::REAL_BITS), false),
            "NA\n"
        );
        assert_eq!(ascii_double(f64::NAN, false), "NaN\n");
    }
}
