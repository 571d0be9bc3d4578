//! qs's own encoding (`qs::qsave()`, `.qs` files), read: the decompressed
//! stream of qs's container (`compression::qs`) turned, as it arrives,
//! into the R serialization of the object `qs::qread()` gives
//! ([`crate::read::emit`]), so that everything above reads `.qs` files as
//! `.rds` files.
//!
//! The encoding: each object a tag of one to nine bytes (type and
//! length), an optional S4 flag and attribute count before it, its body
//! (vectors' payloads inline, shuffled as the header's bits say; strings
//! each with its encoding and length; lists' elements; pairlists' tags and
//! values; a call's, function's or promise's tag, car and cdr; an
//! environment's parent, frame and hash table, numbered for later
//! references), then its attributes. What qs cannot encode itself (the
//! global, base, empty, package and namespace environments, the missing
//! argument, primitives, byte code, external pointers, expression vectors)
//! it embeds as an XDR serialization, whose items are copied into the
//! stream with their references renumbered.
//!
//! R writes a node's flags (its object bit among them) before the node,
//! but qs writes the class after: the reader sets the object bit from the
//! class (`qs_class_rule`), as `qread()` does. R writes the attributes of
//! a call, pairlist or function before its parts: those few are held until
//! their attributes are read. A promise becomes `NULL`, as `qread()` makes
//! it.

use crate::compression::qs::QsHeader;
use crate::tree::{levels, sxp, word};
use std::io::{self, BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::emit::Emitter;

/// How deeply objects may nest in a `.qs` file (the transcoding recurses).
pub const MAX_DEPTH: usize = 50_000;

/// Chunks of the stream are handed over at about this size.
const CHUNK: usize = 1 << 18;

fn damaged(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the qs file is damaged: {what}"),
    )
}

/// The stream R would have written, made on a thread of its own from the
/// decompressed `.qs` stream.
pub struct QsTranscoded {
    rx: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
    done: bool,
    /// The transcoding thread, joined when the reader goes.
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for QsTranscoded {
    fn drop(&mut self) {
        // its channel closed first: the thread's next chunk finds no
        // reader and it ends
        let (_, closed) = sync_channel(0);
        drop(std::mem::replace(&mut self.rx, closed));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl QsTranscoded {
    /// Turn `src` (a `.qs` file's decompressed stream, of `header`) into
    /// R's serialization.
    pub fn new(src: Box<dyn Read + Send>, header: QsHeader) -> io::Result<QsTranscoded> {
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(4);
        let thread = std::thread::Builder::new()
            .name("rdarrow-qs".into())
            .stack_size(256 << 20)
            .spawn(move || {
                let mut t = Transcoder {
                    src: io::BufReader::with_capacity(1 << 16, src),
                    header,
                    tx: tx.clone(),
                    envs: std::collections::HashMap::new(),
                    refs: 0,
                    at: 0,
                };
                let mut p = Part {
                    e: Emitter::new(false),
                    segs: Vec::new(),
                    top: true,
                };
                let r = t.object(&mut p, 0).and_then(|()| t.end());
                match r {
                    Ok(()) => {
                        let _ = tx.send(Ok(std::mem::take(&mut p.e.out)));
                    }
                    Err(err) => {
                        let _ = tx.send(Err(err));
                    }
                }
            })?;
        Ok(QsTranscoded {
            rx,
            current: Vec::new(),
            pos: 0,
            done: false,
            thread: Some(thread),
        })
    }
}

impl Read for QsTranscoded {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
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
        let k = out.len().min(self.current.len() - self.pos);
        out[..k].copy_from_slice(&self.current[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

/// What one tag says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Nil,
    Real(u64),
    Integer(u64),
    Logical(u64),
    Complex(u64),
    Raw(u64),
    Character(u64),
    List(u64),
    Sym,
    S4,
    S4Flag,
    Attributes(u64),
    /// A pairlist of this many cells; with each cell's flags.
    Pairlist(u64, bool),
    /// A call, function, promise or `...` (of this type), with its
    /// packed flags when written.
    Node(u8, Option<i32>),
    /// An environment numbered so, locked or not.
    Env(u32, bool),
    Reference(u32),
    Serialized(u64),
}

/// A string's encoding bits and length (`None`: `NA`).
struct QString {
    levels: u16,
    len: Option<u32>,
}

/// What in a part of the stream depends on where the part lands: R's
/// reader numbers its reference table (symbols, environments) in the
/// order it reads, which for a part held back is not the order qs wrote.
enum Seg {
    Bytes(Vec<u8>),
    /// A symbol was written (a new entry).
    Sym,
    /// Environment `id` of qs starts here (a new entry).
    EnvDef(u32),
    /// Environment `id` of qs, held with its content (what follows
    /// `ENVSXP`): R's reader defines it where the stream first names it,
    /// which in a part held back may be a reference qs wrote before it.
    Env(u32, Vec<Seg>),
    /// A reference to environment `id` of qs.
    Ref(u32),
    /// An embedded XDR serialization, copied with its references
    /// renumbered.
    Splice(Vec<u8>),
}

/// Where bytes go: the stream itself (`top`), rendered as they come, or
/// a part held back until it is placed.
struct Part {
    e: Emitter,
    segs: Vec<Seg>,
    top: bool,
}

impl Part {
    fn held() -> Part {
        Part {
            e: Emitter::part(false),
            segs: Vec::new(),
            top: false,
        }
    }

    /// Whether the part is exactly `NULL`.
    fn is_null(&self) -> bool {
        self.segs.is_empty() && {
            let mut n = Emitter::part(false);
            n.null();
            self.e.out == n.out
        }
    }
}

struct Transcoder {
    src: io::BufReader<Box<dyn Read + Send>>,
    header: QsHeader,
    tx: SyncSender<io::Result<Vec<u8>>>,
    /// qs's number of each environment read so far -> its index in R's
    /// reference table.
    envs: std::collections::HashMap<u32, u32>,
    /// Entries R's reader has put in its reference table so far.
    refs: u32,
    /// Bytes of the decompressed stream read so far.
    at: u64,
}

impl Transcoder {
    /// `n` bytes of the stream; memory grows with the bytes that arrive,
    /// never to a length the file only claims.
    fn bytes(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut v = Vec::with_capacity(n.min(1 << 24));
        let got = (&mut self.src).take(n as u64).read_to_end(&mut v)?;
        self.at += got as u64;
        if got < n {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the qs file is truncated: its data ends at byte {} of the stream, inside an object of {n} bytes", self.at),
            ));
        }
        Ok(v)
    }

    fn fill(&mut self, v: &mut [u8]) -> io::Result<()> {
        self.src.read_exact(v).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the qs file is truncated: its data ends at byte {} of the stream, inside an object", self.at),
                )
            } else {
                e
            }
        })?;
        self.at += v.len() as u64;
        Ok(())
    }

    fn u8(&mut self) -> io::Result<u8> {
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }

    fn uint(&mut self, n: usize) -> io::Result<u64> {
        let mut w = [0u8; 8];
        self.fill(&mut w[..n])?;
        Ok(u64::from_le_bytes(w))
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        Ok(self.src.fill_buf()?.first().copied())
    }

    /// A length the rest of the stream could hold, at `width` bytes each.
    fn check_len(&self, len: u64, width: u64) -> io::Result<usize> {
        let bytes = len.checked_mul(width).filter(|&b| b <= 1 << 48);
        match bytes.and_then(|b| usize::try_from(b).ok()) {
            Some(b) => Ok(b),
            None => Err(damaged(format!(
                "a vector of {len} elements at byte {}",
                self.at
            ))),
        }
    }

    fn tag(&mut self) -> io::Result<Tag> {
        let at = self.at;
        let h = self.u8()?;
        let t = match h {
            0x1C => {
                let ext = self.u8()?;
                match ext {
                    0x01 => Tag::S4,
                    0x02 => Tag::S4Flag,
                    0x03 => Tag::Pairlist(self.uint(4)?, false),
                    0x11 => Tag::Pairlist(self.uint(4)?, true),
                    0x04 => Tag::Node(sxp::LANG, None),
                    0x05 => Tag::Node(sxp::CLO, None),
                    0x06 => Tag::Node(sxp::PROM, None),
                    0x07 => Tag::Node(sxp::DOT, None),
                    0x12 => Tag::Node(sxp::LANG, Some(self.uint(4)? as i32)),
                    0x13 => Tag::Node(sxp::CLO, Some(self.uint(4)? as i32)),
                    0x14 => Tag::Node(sxp::PROM, Some(self.uint(4)? as i32)),
                    0x15 => Tag::Node(sxp::DOT, Some(self.uint(4)? as i32)),
                    0x08 => Tag::Env(self.uint(4)? as u32, false),
                    0x09 => Tag::Env(self.uint(4)? as u32, true),
                    0x10 => Tag::Reference(self.uint(4)? as u32),
                    other => {
                        return Err(damaged(format!(
                            "unknown extension tag {other:#04x} at byte {at}"
                        )))
                    }
                }
            }
            0x1D => Tag::Sym,
            0x00 => Tag::Nil,
            0x05 => Tag::Real(self.uint(1)?),
            0x06 => Tag::Real(self.uint(2)?),
            0x07 => Tag::Real(self.uint(4)?),
            0x08 => Tag::Real(self.uint(8)?),
            0x01 => Tag::List(self.uint(1)?),
            0x02 => Tag::List(self.uint(2)?),
            0x03 => Tag::List(self.uint(4)?),
            0x04 => Tag::List(self.uint(8)?),
            0x09 => Tag::Integer(self.uint(1)?),
            0x0A => Tag::Integer(self.uint(2)?),
            0x0B => Tag::Integer(self.uint(4)?),
            0x0C => Tag::Integer(self.uint(8)?),
            0x0D => Tag::Logical(self.uint(1)?),
            0x0E => Tag::Logical(self.uint(2)?),
            0x0F => Tag::Logical(self.uint(4)?),
            0x10 => Tag::Logical(self.uint(8)?),
            0x17 => Tag::Raw(self.uint(4)?),
            0x18 => Tag::Raw(self.uint(8)?),
            0x11 => Tag::Character(self.uint(1)?),
            0x12 => Tag::Character(self.uint(2)?),
            0x13 => Tag::Character(self.uint(4)?),
            0x14 => Tag::Character(self.uint(8)?),
            0x15 => Tag::Complex(self.uint(4)?),
            0x16 => Tag::Complex(self.uint(8)?),
            0x1E => Tag::Attributes(self.uint(1)?),
            0x1F => Tag::Attributes(self.uint(4)?),
            0x19 => Tag::Serialized(self.uint(4)?),
            0x1A => Tag::Serialized(self.uint(8)?),
            _ => {
                let len = u64::from(h & 0x1F);
                match h & 0xE0 {
                    0x40 => Tag::Real(len),
                    0x20 => Tag::List(len),
                    0x60 => Tag::Integer(len),
                    0x80 => Tag::Logical(len),
                    0xA0 => Tag::Character(len),
                    0xE0 => Tag::Attributes(len),
                    _ => return Err(damaged(format!("unknown tag {h:#04x} at byte {at}"))),
                }
            }
        };
        Ok(t)
    }

    fn string_header(&mut self) -> io::Result<QString> {
        let at = self.at;
        let h = self.u8()?;
        let levels = match h & 0xC0 {
            0x00 => 0,
            0x40 => levels::UTF8,
            0x80 => levels::LATIN1,
            _ => levels::BYTES,
        };
        if h & 0x20 != 0 {
            return Ok(QString {
                levels,
                len: Some(u32::from(h & 0x1F)),
            });
        }
        let len = match h & 0x1F {
            0x01 => self.uint(1)? as u32,
            0x02 => self.uint(2)? as u32,
            0x03 => self.uint(4)? as u32,
            0x0F => return Ok(QString { levels, len: None }),
            other => {
                return Err(damaged(format!(
                    "unknown string header {other:#04x} at byte {at}"
                )))
            }
        };
        if len > i32::MAX as u32 {
            return Err(damaged(format!("a string of {len} bytes at byte {at}")));
        }
        Ok(QString {
            levels,
            len: Some(len),
        })
    }

    /// A string's bytes (`None`: `NA`) and encoding bits.
    fn string(&mut self) -> io::Result<(Option<Vec<u8>>, u16)> {
        let s = self.string_header()?;
        Ok(match s.len {
            None => (None, 0),
            Some(n) => (Some(self.bytes(n as usize)?), s.levels),
        })
    }

    fn send(&mut self, chunk: Vec<u8>) -> io::Result<()> {
        self.tx
            .send(Ok(chunk))
            .map_err(|_| io::Error::other("the reader of the qs file stopped"))
    }

    /// Hand the stream's bytes over when they are many.
    fn flush(&mut self, p: &mut Part) -> io::Result<()> {
        if p.top && p.e.out.len() >= CHUNK {
            // the last byte stays until the end of the stream is checked:
            // the reader cannot finish on a damaged file
            let last = p.e.out.pop().expect("a byte");
            let chunk = std::mem::replace(&mut p.e.out, Vec::with_capacity(CHUNK + 1024));
            p.e.out.push(last);
            self.send(chunk)?;
        }
        Ok(())
    }

    /// Put `seg` in `p`: rendered at once in the stream, kept in a part.
    fn mark(&mut self, p: &mut Part, seg: Seg) -> io::Result<()> {
        if p.top {
            return self.render(&mut p.e, seg);
        }
        if !p.e.out.is_empty() {
            p.segs.push(Seg::Bytes(std::mem::take(&mut p.e.out)));
        }
        p.segs.push(seg);
        Ok(())
    }

    /// Write the segments of a part held back where they land: in the
    /// order R reads them, each environment defined where the stream
    /// first names it (its content found among `root`'s segments).
    fn render_all(&mut self, e: &mut Emitter, root: &[Seg], segs: &[Seg]) -> io::Result<()> {
        for seg in segs {
            match seg {
                Seg::Env(id, content) => {
                    if self.envs.contains_key(id) {
                        reference(e, self.envs[id]);
                    } else {
                        self.define(e, root, *id, content)?;
                    }
                }
                Seg::Ref(id) if !self.envs.contains_key(id) => {
                    let content = find_env(root, *id).ok_or_else(|| {
                        damaged(format!(
                            "a reference to environment {id}, which it does not hold"
                        ))
                    })?;
                    self.define(e, root, *id, content)?;
                }
                Seg::Bytes(b) => e.out.extend_from_slice(b),
                Seg::Splice(data) => {
                    let added = splice(data, e, self.refs)?;
                    self.refs += added;
                }
                Seg::Sym => self.refs += 1,
                Seg::EnvDef(id) => {
                    self.refs += 1;
                    self.envs.insert(*id, self.refs);
                }
                Seg::Ref(id) => reference(e, self.envs[id]),
            }
        }
        Ok(())
    }

    /// Environment `id` defined here: `ENVSXP`, then its content.
    fn define(
        &mut self,
        e: &mut Emitter,
        root: &[Seg],
        id: u32,
        content: &[Seg],
    ) -> io::Result<()> {
        e.int(i32::from(sxp::ENV));
        self.refs += 1;
        self.envs.insert(id, self.refs);
        self.render_all(e, root, content)
    }

    /// Write `seg` where it lands, numbering R's reference table.
    fn render(&mut self, e: &mut Emitter, seg: Seg) -> io::Result<()> {
        match seg {
            Seg::Env(id, content) => {
                let root = vec![Seg::Env(id, content)];
                return self.render_all(e, &root, &root);
            }
            Seg::Bytes(b) => e.out.extend_from_slice(&b),
            Seg::Sym => self.refs += 1,
            Seg::EnvDef(id) => {
                self.refs += 1;
                self.envs.insert(id, self.refs);
            }
            Seg::Ref(id) => {
                let idx = *self.envs.get(&id).ok_or_else(|| {
                    damaged(format!(
                        "a reference to environment {id} comes before the environment"
                    ))
                })?;
                reference(e, idx);
            }
            Seg::Splice(data) => {
                let added = splice(&data, e, self.refs)?;
                self.refs += added;
            }
        }
        Ok(())
    }

    /// Place `part` (held back) at the end of `p`.
    fn append(&mut self, p: &mut Part, mut part: Part) -> io::Result<()> {
        if !part.e.out.is_empty() {
            part.segs.push(Seg::Bytes(std::mem::take(&mut part.e.out)));
        }
        if p.top {
            self.render_all(&mut p.e, &part.segs, &part.segs)?;
        } else {
            for seg in part.segs {
                self.mark(p, seg)?;
            }
        }
        self.flush(p)
    }

    /// Place several parts held back, in this order, at the end of `p`
    /// (one rendering: an environment one of them defines may be named
    /// first by another).
    fn append_all(&mut self, p: &mut Part, parts: Vec<Part>) -> io::Result<()> {
        let mut all = Part::held();
        for mut part in parts {
            if !part.e.out.is_empty() {
                part.segs.push(Seg::Bytes(std::mem::take(&mut part.e.out)));
            }
            all.segs.extend(part.segs);
        }
        self.append(p, all)
    }

    /// A payload of `bytes` bytes, unshuffled by `size` when `shuffled`.
    fn payload(&mut self, p: &mut Part, bytes: usize, shuffled: Option<usize>) -> io::Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let data = self.bytes(bytes)?;
        let data = match shuffled {
            Some(size) if bytes >= 4 => {
                let mut out = vec![0u8; bytes];
                crate::compression::qx::unshuffle_by(&data, &mut out, size);
                out
            }
            _ => data,
        };
        if p.top && bytes >= CHUNK / 4 {
            // large: handed over as it is, after what precedes it (its
            // last byte kept, as in `flush`)
            let mut data = data;
            let last = data.pop().expect("a byte");
            let head = std::mem::take(&mut p.e.out);
            self.send(head)?;
            self.send(data)?;
            p.e.out.push(last);
            Ok(())
        } else {
            p.e.out.extend_from_slice(&data);
            Ok(())
        }
    }

    /// A symbol (a new entry in R's reference table, as every symbol R
    /// reads).
    fn symbol(&mut self, p: &mut Part, name: &[u8], lev: u16) -> io::Result<()> {
        p.e.symbol(name, lev);
        self.mark(p, Seg::Sym)
    }

    /// Attributes: `n` names and values, as R's attribute pairlist.
    fn attributes(&mut self, p: &mut Part, n: u64, depth: usize) -> io::Result<()> {
        for _ in 0..n {
            let (name, lev) = self.string()?;
            let name = name
                .ok_or_else(|| damaged(format!("an attribute's name is NA at byte {}", self.at)))?;
            p.e.flags(sxp::LIST, false, false, true, 0);
            self.symbol(p, &name, lev)?;
            self.object(p, depth + 1)?;
        }
        p.e.null();
        Ok(())
    }

    /// Attributes read into a part of their own.
    fn held_attributes(&mut self, n: u64, depth: usize) -> io::Result<Part> {
        let mut a = Part::held();
        self.attributes(&mut a, n, depth)?;
        Ok(a)
    }

    /// One object, written to `p`.
    fn object(&mut self, p: &mut Part, depth: usize) -> io::Result<()> {
        if depth > MAX_DEPTH {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("objects in the qs file are nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        let mut tag = self.tag()?;
        let mut s4 = false;
        let mut nattr = 0;
        if tag == Tag::S4Flag {
            s4 = true;
            tag = self.tag()?;
        }
        if let Tag::Attributes(n) = tag {
            nattr = n;
            tag = self.tag()?;
        }
        let has_attr = nattr > 0;
        let lev = if s4 { levels::S4_OBJECT } else { 0 };
        let sh = self.header;
        match tag {
            Tag::Nil => p.e.null(),
            Tag::Real(n) | Tag::Integer(n) | Tag::Logical(n) | Tag::Complex(n) | Tag::Raw(n) => {
                let (t, width, shuffled) = match tag {
                    Tag::Real(_) => (sxp::REAL, 8, sh.shuffle_double.then_some(8)),
                    Tag::Integer(_) => (sxp::INT, 4, sh.shuffle_integer.then_some(4)),
                    Tag::Logical(_) => (sxp::LGL, 4, sh.shuffle_logical.then_some(4)),
                    Tag::Complex(_) => (sxp::CPLX, 16, sh.shuffle_complex.then_some(8)),
                    _ => (sxp::RAW, 1, None),
                };
                let bytes = self.check_len(n, width)?;
                p.e.flags(t, false, has_attr, false, lev);
                p.e.length(n);
                self.payload(p, bytes, shuffled)?;
                if has_attr {
                    self.attributes(p, nattr, depth)?;
                }
            }
            Tag::Character(n) => {
                self.check_len(n, 1)?;
                p.e.flags(sxp::STR, false, has_attr, false, lev);
                p.e.length(n);
                for _ in 0..n {
                    let (s, l) = self.string()?;
                    p.e.charsxp(s.as_deref(), l);
                    self.flush(p)?;
                }
                if has_attr {
                    self.attributes(p, nattr, depth)?;
                }
            }
            Tag::List(n) => {
                self.check_len(n, 1)?;
                p.e.flags(sxp::VEC, false, has_attr, false, lev);
                p.e.length(n);
                for _ in 0..n {
                    self.object(p, depth + 1)?;
                    self.flush(p)?;
                }
                if has_attr {
                    self.attributes(p, nattr, depth)?;
                }
            }
            Tag::S4 => {
                p.e.flags(sxp::S4, false, has_attr, false, lev);
                if has_attr {
                    self.attributes(p, nattr, depth)?;
                }
            }
            Tag::Sym => {
                let (name, l) = self.string()?;
                let name = name
                    .ok_or_else(|| damaged(format!("a symbol's name is NA at byte {}", self.at)))?;
                self.symbol(p, &name, l)?;
                if has_attr {
                    // symbols hold no attributes in R's serialization
                    self.held_attributes(nattr, depth)?;
                }
            }
            Tag::Pairlist(n, with_flags) => {
                self.check_len(n, 1)?;
                self.pairlist(p, n, with_flags, nattr, depth)?;
            }
            Tag::Node(t, flags) => {
                if t == sxp::PROM {
                    // qread() gives NULL for a promise: its parts are read
                    // and dropped
                    let mut dropped = Part::held();
                    for _ in 0..3 {
                        self.object(&mut dropped, depth + 1)?;
                    }
                    if has_attr {
                        self.attributes(&mut dropped, nattr, depth)?;
                    }
                    p.e.null();
                } else {
                    self.node(p, t, flags, nattr, lev, depth)?;
                }
            }
            Tag::Env(id, locked) => {
                // in the stream: ENVSXP, then its content; in a part held
                // back: the content held with it (see `Seg::Env`)
                let mut held = Part::held();
                let out = if p.top {
                    p.e.int(i32::from(sxp::ENV));
                    self.mark(p, Seg::EnvDef(id))?;
                    &mut *p
                } else {
                    &mut held
                };
                out.e.int(i32::from(locked));
                for _ in 0..3 {
                    // parent, frame, hash table
                    self.object(out, depth + 1)?;
                }
                if has_attr {
                    self.attributes(out, nattr, depth)?;
                } else {
                    out.e.null();
                }
                if !p.top {
                    if !held.e.out.is_empty() {
                        held.segs.push(Seg::Bytes(std::mem::take(&mut held.e.out)));
                    }
                    self.mark(p, Seg::Env(id, held.segs))?;
                }
            }
            Tag::Reference(id) => self.mark(p, Seg::Ref(id))?,
            Tag::Serialized(n) => {
                let len = self.check_len(n, 1)?;
                let data = self.bytes(len)?;
                self.mark(p, Seg::Splice(data))?;
            }
            Tag::S4Flag | Tag::Attributes(_) => {
                return Err(damaged(format!("a misplaced header at byte {}", self.at)));
            }
        }
        self.flush(p)
    }

    /// A call, function or `...` node (`t`): R writes its flags, its
    /// attributes, then tag, car and cdr; qs writes tag, car, cdr, then
    /// the attributes.
    fn node(
        &mut self,
        p: &mut Part,
        t: u8,
        flags: Option<i32>,
        nattr: u64,
        lev: u16,
        depth: usize,
    ) -> io::Result<()> {
        let (levels_of, object) = match flags {
            Some(f) => ((f & 0xFFFF) as u16, f & (1 << 16) != 0),
            None => (0, false),
        };
        let lev = lev | levels_of;
        if nattr == 0 {
            // the tag is NULL when its first byte is qs's NULL
            let has_tag = t == sxp::CLO || self.peek()? != Some(0);
            p.e.flags(t, object, false, has_tag, lev);
            if has_tag {
                self.object(p, depth + 1)?;
            } else {
                self.tag()?;
            }
            self.object(p, depth + 1)?;
            return self.object(p, depth + 1);
        }
        let mut tag = Part::held();
        self.object(&mut tag, depth + 1)?;
        let mut rest = Part::held();
        self.object(&mut rest, depth + 1)?;
        self.object(&mut rest, depth + 1)?;
        let attrs = self.held_attributes(nattr, depth)?;
        let has_tag = t == sxp::CLO || !tag.is_null();
        p.e.flags(t, object, true, has_tag, lev);
        let parts = if has_tag {
            vec![attrs, tag, rest]
        } else {
            vec![attrs, rest]
        };
        self.append_all(p, parts)
    }

    /// A pairlist of `n` cells (each cell's flags first when
    /// `with_flags`), then `nattr` attributes, which R writes with the
    /// first cell.
    fn pairlist(
        &mut self,
        p: &mut Part,
        n: u64,
        with_flags: bool,
        nattr: u64,
        depth: usize,
    ) -> io::Result<()> {
        if n == 0 {
            if nattr > 0 {
                self.held_attributes(nattr, depth)?;
            }
            p.e.null();
            return Ok(());
        }
        let mut first = None;
        let mut held = Part::held();
        for i in 0..n {
            let f = if with_flags { self.uint(4)? as i32 } else { 0 };
            let (name, l) = self.string()?;
            let (object, lev) = (f & (1 << 16) != 0, (f & 0xFFFF) as u16);
            if i == 0 && nattr > 0 {
                // the first cell's tag and value, held until the
                // attributes are read
                first = Some((object, lev, name.is_some()));
                if let Some(name) = name {
                    self.symbol(&mut held, &name, l)?;
                }
                self.object(&mut held, depth + 1)?;
                continue;
            }
            let out = if nattr > 0 { &mut held } else { &mut *p };
            out.e.flags(sxp::LIST, object, false, name.is_some(), lev);
            if let Some(name) = name {
                self.symbol(out, &name, l)?;
            }
            self.object(out, depth + 1)?;
            self.flush(out)?;
        }
        if let Some((object, lev, has_tag)) = first {
            let attrs = self.held_attributes(nattr, depth)?;
            held.e.null();
            p.e.flags(sxp::LIST, object, true, has_tag, lev);
            self.append_all(p, vec![attrs, held])
        } else {
            p.e.null();
            Ok(())
        }
    }

    /// At the end of the object: nothing but the end of the stream (where
    /// the container checks its checksum).
    fn end(&mut self) -> io::Result<()> {
        let mut extra = [0u8; 1];
        match self.src.read(&mut extra)? {
            0 => Ok(()),
            _ => Err(damaged(format!(
                "more data follows the object, from byte {}",
                self.at
            ))),
        }
    }
}

/// The content of environment `id` among `segs` (at any depth).
fn find_env(segs: &[Seg], id: u32) -> Option<&[Seg]> {
    segs.iter().find_map(|s| match s {
        Seg::Env(i, content) if *i == id => Some(&content[..]),
        Seg::Env(_, content) => find_env(content, id),
        _ => None,
    })
}

/// A reference to entry `idx` of R's reference table.
fn reference(e: &mut Emitter, idx: u32) {
    if idx <= word::MAX_PACKED_REF {
        e.int((u32::from(sxp::REFSXP) | (idx << word::REF_INDEX_SHIFT)) as i32);
    } else {
        e.int(i32::from(sxp::REFSXP));
        e.int(idx as i32);
    }
}

/// Copy the items of an embedded XDR serialization (`serialize(x,
/// NULL)`) into `e`, their references renumbered after the `base`
/// entries R's reader already holds: how many entries they add.
fn splice(data: &[u8], e: &mut Emitter, base: u32) -> io::Result<u32> {
    let mut s = Spliced {
        b: data,
        pos: 0,
        base,
        added: 0,
    };
    let bad = |what: &str| damaged(format!("its embedded R serialization {what}"));
    if !data.starts_with(b"X\n") {
        return Err(bad("is not XDR"));
    }
    s.pos = 2;
    let version = s.int()?;
    s.int()?;
    s.int()?;
    if version == 3 {
        let n = s.int()?;
        s.take(usize::try_from(n).map_err(|_| bad("has a bad header"))?)?;
    } else if version != 2 {
        return Err(bad("has an unknown version"));
    }
    s.item(e, 0)?;
    Ok(s.added)
}

/// An embedded XDR serialization being copied.
struct Spliced<'a> {
    b: &'a [u8],
    pos: usize,
    base: u32,
    added: u32,
}

impl Spliced<'_> {
    /// One byte-code object (R's `ReadBC1`): the code, then its constants.
    fn bytecode(&mut self, e: &mut Emitter, depth: usize) -> io::Result<()> {
        if depth > MAX_DEPTH {
            return Err(damaged("its embedded byte code nests too deeply".into()));
        }
        self.item(e, depth + 1)?;
        let n = self.copy_int(e)?;
        for _ in 0..n.max(0) {
            let t = self.copy_int(e)?;
            match t {
                t if t == i32::from(sxp::BCODE) => self.bytecode(e, depth + 1)?,
                _ => self.bytecode_lang(e, t, depth + 1)?,
            }
        }
        Ok(())
    }

    /// A call or pairlist of byte code's constants (R's `ReadBCLang`),
    /// its type already read; anything else is an item after the type.
    fn bytecode_lang(&mut self, e: &mut Emitter, t: i32, depth: usize) -> io::Result<()> {
        if depth > MAX_DEPTH {
            return Err(damaged("its embedded byte code nests too deeply".into()));
        }
        const REPREF: i32 = sxp::BCREPREF as i32;
        const REPDEF: i32 = sxp::BCREPDEF as i32;
        const LANG: i32 = sxp::LANG as i32;
        const LIST: i32 = sxp::LIST as i32;
        const ATTRLANG: i32 = sxp::ATTRLANG as i32;
        const ATTRLIST: i32 = sxp::ATTRLIST as i32;
        match t {
            REPREF => {
                self.copy_int(e)?;
            }
            REPDEF | LANG | LIST | ATTRLANG | ATTRLIST => {
                let mut t = t;
                if t == REPDEF {
                    self.copy_int(e)?;
                    t = self.copy_int(e)?;
                }
                if t == ATTRLANG || t == ATTRLIST {
                    self.item(e, depth + 1)?;
                }
                self.item(e, depth + 1)?;
                let car = self.copy_int(e)?;
                self.bytecode_lang(e, car, depth + 1)?;
                let cdr = self.copy_int(e)?;
                self.bytecode_lang(e, cdr, depth + 1)?;
            }
            _ => self.item(e, depth + 1)?,
        }
        Ok(())
    }

    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| damaged("its embedded R serialization is cut short".into()))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn int(&mut self) -> io::Result<i32> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn copy_int(&mut self, e: &mut Emitter) -> io::Result<i32> {
        let v = self.int()?;
        e.int(v);
        Ok(v)
    }

    fn length(&mut self, e: &mut Emitter) -> io::Result<u64> {
        let n = self.copy_int(e)?;
        if n >= 0 {
            return Ok(n as u64);
        }
        if n != -1 {
            return Err(damaged(
                "its embedded R serialization has a negative length".into(),
            ));
        }
        let hi = self.copy_int(e)? as u32 as u64;
        let lo = self.copy_int(e)? as u32 as u64;
        Ok(hi << 32 | lo)
    }

    /// `n` values of `width` bytes, byte-swapped into the stream's order.
    fn swapped(&mut self, e: &mut Emitter, n: u64, width: usize) -> io::Result<()> {
        let bytes = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_mul(width))
            .ok_or_else(|| damaged("its embedded R serialization has a vector too long".into()))?;
        let src = self.take(bytes)?;
        if e.big_endian() {
            e.out.extend_from_slice(src);
        } else {
            for v in src.chunks_exact(width) {
                e.out.extend(v.iter().rev());
            }
        }
        Ok(())
    }

    fn item(&mut self, e: &mut Emitter, depth: usize) -> io::Result<()> {
        if depth > MAX_DEPTH {
            return Err(damaged(
                "its embedded R serialization nests too deeply".into(),
            ));
        }
        let flags = self.int()?;
        let t = (flags as u32 & word::TYPE_MASK) as u8;
        let has_attr = flags as u32 & word::HAS_ATTR != 0;
        let has_tag = flags as u32 & word::HAS_TAG != 0;
        if t == sxp::REFSXP {
            let mut idx = (flags as u32) >> word::REF_INDEX_SHIFT;
            if idx == 0 {
                idx = self.int()? as u32;
            }
            if idx == 0 || idx > self.added {
                return Err(damaged(
                    "its embedded R serialization refers to an entry it does not have".into(),
                ));
            }
            reference(e, self.base + idx);
            return Ok(());
        }
        e.int(flags);
        match t {
            sxp::NILVALUE | sxp::EMPTYENV | sxp::BASEENV | sxp::GLOBALENV | sxp::UNBOUNDVALUE | sxp::MISSINGARG
            | sxp::BASENAMESPACE => {}
            sxp::PERSIST | sxp::PACKAGE | sxp::NAMESPACE => {
                self.added += 1;
                self.copy_int(e)?;
                let n = self.copy_int(e)?;
                for _ in 0..n.max(0) {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::SYM => {
                self.added += 1;
                self.item(e, depth + 1)?;
            }
            sxp::ENV => {
                self.added += 1;
                self.copy_int(e)?;
                for _ in 0..4 {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::LIST | sxp::LANG | sxp::CLO | sxp::PROM | sxp::DOT => {
                if has_attr {
                    self.item(e, depth + 1)?;
                }
                if has_tag {
                    self.item(e, depth + 1)?;
                }
                self.item(e, depth + 1)?;
                self.item(e, depth + 1)?;
            }
            sxp::EXTPTR => {
                self.added += 1;
                self.item(e, depth + 1)?;
                self.item(e, depth + 1)?;
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::WEAKREF => {
                self.added += 1;
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::SPECIAL | sxp::BUILTIN => {
                let n = self.copy_int(e)?;
                let name = self.take(usize::try_from(n).unwrap_or(usize::MAX))?.to_vec();
                e.out.extend_from_slice(&name);
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::CHAR => {
                let n = self.copy_int(e)?;
                if n >= 0 {
                    let s = self.take(n as usize)?.to_vec();
                    e.out.extend_from_slice(&s);
                }
            }
            sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::RAW | sxp::STR | sxp::VEC | sxp::EXPR => {
                let n = self.length(e)?;
                match t {
                    sxp::LGL | sxp::INT => self.swapped(e, n, 4)?,
                    sxp::REAL => self.swapped(e, n, 8)?,
                    sxp::CPLX => self.swapped(e, n.saturating_mul(2), 8)?,
                    sxp::RAW => {
                        let s = self.take(usize::try_from(n).unwrap_or(usize::MAX))?.to_vec();
                        e.out.extend_from_slice(&s);
                    }
                    _ => {
                        for _ in 0..n {
                            self.item(e, depth + 1)?;
                        }
                    }
                }
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::S4 => {
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            238 => {
                // ALTREP: class info, state, attributes
                for _ in 0..3 {
                    self.item(e, depth + 1)?;
                }
            }
            sxp::BCODE => {
                // the count of repeated cells, the code and its constants
                self.copy_int(e)?;
                self.bytecode(e, depth + 1)?;
                if has_attr {
                    self.item(e, depth + 1)?;
                }
            }
            other => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("the qs file embeds an R serialization of a node of type {other} (byte code), which is not read"),
                ))
            }
        }
        Ok(())
    }
}
