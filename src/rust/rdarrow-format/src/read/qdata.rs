//! qs2's qdata encoding (`qs2::qd_save()`, `.qdata` files), read: the
//! payload of the container (`compression::qx`) turned into the R
//! serialization `qs2::qd_read()`'s object would have ([`crate::read::emit`]),
//! so that everything above reads `.qdata` files as `.rds` files.
//!
//! The encoding holds NULL and logical, integer, double, complex,
//! character, list and raw vectors with attributes. First the tree: each
//! object's type and length in one to nine bytes, its attributes (names
//! with 1-byte lengths, 253 and 254 escaping 16- and 32-bit ones) before
//! its elements; then the data grouped by type, each group in the order
//! `qd_read()` meets the vectors (an object's attributes before the
//! object): strings (the same length bytes, 255 for `NA`, UTF-8),
//! complex, double, integer and logical, raw. The tree is read first
//! (every length checked against the bytes left before anything is
//! reserved), then where each vector's data lies, then the stream is
//! written in R's order (attributes after elements), large payloads
//! handed over from the decompressed bytes as they lie. An object has the
//! object bit when its class is a character vector of one or more
//! elements, as `qd_read()` sets it.

use crate::tree::{levels, sxp};
use std::io::{self, Read};

use super::emit::Emitter;

/// The tags of the encoding (qdata-cpp's `constants.h`).
mod tag {
    pub const NIL: u8 = 0x00;
    pub const LIST_5: u8 = 0x20;
    pub const NUMERIC_5: u8 = 0x40;
    pub const INTEGER_5: u8 = 0x60;
    pub const LOGICAL_5: u8 = 0x80;
    pub const CHARACTER_5: u8 = 0xA0;
    pub const ATTRIBUTE_5: u8 = 0xE0;
    pub const ATTRIBUTE_8: u8 = 0x1E;
    pub const ATTRIBUTE_32: u8 = 0x1F;
    pub const STRING_16: u8 = 253;
    pub const STRING_32: u8 = 254;
    pub const STRING_NA: u8 = 255;
}

/// An object's kind in the encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Nil,
    Logical,
    Integer,
    Real,
    Complex,
    Character,
    List,
    Raw,
}

impl Kind {
    fn sxptype(self) -> u8 {
        match self {
            Kind::Nil => sxp::NIL,
            Kind::Logical => sxp::LGL,
            Kind::Integer => sxp::INT,
            Kind::Real => sxp::REAL,
            Kind::Complex => sxp::CPLX,
            Kind::Character => sxp::STR,
            Kind::List => sxp::VEC,
            Kind::Raw => sxp::RAW,
        }
    }

    /// Bytes per element of a fixed-width payload.
    fn width(self) -> u64 {
        match self {
            Kind::Logical | Kind::Integer => 4,
            Kind::Real => 8,
            Kind::Complex => 16,
            Kind::Raw => 1,
            _ => 0,
        }
    }
}

/// One object of the tree.
#[derive(Debug, Clone)]
struct Node {
    kind: Kind,
    len: u64,
    /// Its attributes: a range of `Tree::attrs`.
    attrs: (u32, u32),
    /// A list's elements: a range of `Tree::children`.
    children: (u32, u32),
    /// Where its data starts in the payload.
    data: u64,
}

/// An attribute: its name (a range of the payload) and value.
/// Where the data of a vector lies when a salvaged payload lost it.
const MISSING: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Attr {
    name: (u64, u32),
    value: u32,
}

fn damaged(what: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the qdata file is damaged: {what}"),
    )
}

fn short(at: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the qdata file is truncated: its data ends at byte {at} of the payload, inside an object"),
    )
}

/// A cursor over the payload, in the file's byte order.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    big: bool,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> io::Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| short(self.b.len() as u64))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn uint(&mut self, n: usize) -> io::Result<u64> {
        let big = self.big;
        let s = self.take(n)?;
        let mut w = [0u8; 8];
        if big {
            w[8 - n..].copy_from_slice(s);
            Ok(u64::from_be_bytes(w))
        } else {
            w[..n].copy_from_slice(s);
            Ok(u64::from_le_bytes(w))
        }
    }
    fn left(&self) -> u64 {
        (self.b.len() - self.pos) as u64
    }
    /// A string's length (`None`: `NA`).
    fn string_len(&mut self) -> io::Result<Option<u64>> {
        Ok(match self.u8()? {
            tag::STRING_16 => Some(self.uint(2)?),
            tag::STRING_32 => Some(self.uint(4)?),
            tag::STRING_NA => None,
            n => Some(u64::from(n)),
        })
    }
}

/// Read one object header: its kind and length, and the count of
/// attributes before it (0 without).
fn header(c: &mut Cursor<'_>) -> io::Result<(Kind, u64, u64)> {
    let at = c.pos;
    let mut attrs = 0;
    let (mut kind, mut len) = one_header(c)?;
    if kind.is_none() {
        attrs = len;
        let (k, l) = one_header(c)?;
        if k.is_none() {
            return Err(damaged(format!(
                "two attribute headers in a row at byte {at}"
            )));
        }
        (kind, len) = (k, l);
    }
    Ok((kind.expect("a kind"), len, attrs))
}

/// One header byte and its length; `None` for an attribute header.
fn one_header(c: &mut Cursor<'_>) -> io::Result<(Option<Kind>, u64)> {
    let at = c.pos;
    let h = c.u8()?;
    if h & 0xE0 != 0 {
        let len = u64::from(h & 0x1F);
        let kind = match h & 0xE0 {
            tag::LIST_5 => Kind::List,
            tag::NUMERIC_5 => Kind::Real,
            tag::INTEGER_5 => Kind::Integer,
            tag::LOGICAL_5 => Kind::Logical,
            tag::CHARACTER_5 => Kind::Character,
            tag::ATTRIBUTE_5 => return Ok((None, len)),
            _ => {
                return Err(damaged(format!(
                    "unknown object header {h:#04x} at byte {at}"
                )))
            }
        };
        return Ok((Some(kind), len));
    }
    let width = |w: u8| -> usize { 1 << (w - 1) };
    let (kind, w) = match h {
        tag::NIL => return Ok((Some(Kind::Nil), 0)),
        0x01..=0x04 => (Kind::List, width(h)),
        0x05..=0x08 => (Kind::Real, width(h - 4)),
        0x09..=0x0C => (Kind::Integer, width(h - 8)),
        0x0D..=0x10 => (Kind::Logical, width(h - 12)),
        0x11..=0x14 => (Kind::Character, width(h - 16)),
        0x15 => (Kind::Complex, 4),
        0x16 => (Kind::Complex, 8),
        0x17 => (Kind::Raw, 4),
        0x18 => (Kind::Raw, 8),
        tag::ATTRIBUTE_8 => return Ok((None, c.uint(1)?)),
        tag::ATTRIBUTE_32 => return Ok((None, c.uint(4)?)),
        _ => {
            return Err(damaged(format!(
                "unknown object header {h:#04x} at byte {at}"
            )))
        }
    };
    Ok((Some(kind), c.uint(w)?))
}

/// Where an object read goes: the root, an attribute's value, a list's element.
#[derive(Clone, Copy)]
enum Slot {
    Root,
    Attr(usize),
    Child(usize),
}

/// The tree of a payload, and where each vector's data lies.
struct Tree {
    nodes: Vec<Node>,
    attrs: Vec<Attr>,
    children: Vec<u32>,
}

/// What [`Tree::read`] has left to do.
enum Frame {
    Attrs { next: usize, end: usize },
    Children { next: usize, end: usize },
    Payload(u32),
}

impl Tree {
    /// Read the tree from the payload's start, then place each vector's
    /// data in the groups after it.
    /// A `partial` payload (salvaged: its end lost) places only the data
    /// it holds whole; the rest is [`MISSING`].
    fn read(payload: &[u8], big: bool, partial: bool) -> io::Result<Tree> {
        let mut c = Cursor {
            b: payload,
            pos: 0,
            big,
        };
        let mut t = Tree {
            nodes: Vec::new(),
            attrs: Vec::new(),
            children: Vec::new(),
        };
        // the vectors of each group, in the order their data lies
        let mut groups: [Vec<u32>; 5] = Default::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut slot = Slot::Root;
        loop {
            // read the object for `slot`
            let (kind, len, nattrs) = header(&mut c)?;
            // every attribute and element takes a byte of the tree at least
            if nattrs > c.left() || (kind == Kind::List && len > c.left()) {
                return Err(damaged(format!(
                    "an object at byte {} claims {} attributes and {len} elements, more than the {} bytes left",
                    c.pos,
                    nattrs,
                    c.left()
                )));
            }
            if len > i64::MAX as u64 / 16 {
                return Err(damaged(format!("a vector of {len} elements")));
            }
            let id = t.nodes.len() as u32;
            let a0 = t.attrs.len();
            t.attrs.resize(a0 + nattrs as usize, Attr::default());
            let c0 = t.children.len();
            if kind == Kind::List {
                t.children.resize(c0 + len as usize, 0);
            }
            t.nodes.push(Node {
                kind,
                len,
                attrs: (a0 as u32, (a0 + nattrs as usize) as u32),
                children: (c0 as u32, t.children.len() as u32),
                data: 0,
            });
            match slot {
                Slot::Root => {}
                Slot::Attr(i) => t.attrs[i].value = id,
                Slot::Child(i) => t.children[i] = id,
            }
            match kind {
                Kind::List => stack.push(Frame::Children {
                    next: c0,
                    end: c0 + len as usize,
                }),
                Kind::Nil => {}
                _ if len > 0 => stack.push(Frame::Payload(id)),
                _ => {}
            }
            stack.push(Frame::Attrs {
                next: a0,
                end: a0 + nattrs as usize,
            });
            // the next object to read
            let next = loop {
                match stack.pop() {
                    None => break None,
                    Some(Frame::Attrs { next, end }) if next < end => {
                        let n = c.string_len()?.ok_or_else(|| {
                            damaged(format!("an attribute's name is NA at byte {}", c.pos))
                        })?;
                        let start = c.pos as u64;
                        c.take(usize::try_from(n).map_err(|_| short(c.b.len() as u64))?)?;
                        t.attrs[next].name = (start, n as u32);
                        stack.push(Frame::Attrs {
                            next: next + 1,
                            end,
                        });
                        break Some(Slot::Attr(next));
                    }
                    Some(Frame::Children { next, end }) if next < end => {
                        stack.push(Frame::Children {
                            next: next + 1,
                            end,
                        });
                        break Some(Slot::Child(next));
                    }
                    Some(Frame::Payload(id)) => {
                        let g = match t.nodes[id as usize].kind {
                            Kind::Character => 0,
                            Kind::Complex => 1,
                            Kind::Real => 2,
                            Kind::Integer | Kind::Logical => 3,
                            _ => 4,
                        };
                        groups[g].push(id);
                    }
                    Some(_) => {}
                }
            };
            match next {
                Some(s) => slot = s,
                None => break,
            }
        }
        // strings: each vector's elements, length and bytes
        let mut lost = false;
        for &id in &groups[0] {
            let start = c.pos as u64;
            let walked = (|| -> io::Result<()> {
                for _ in 0..t.nodes[id as usize].len {
                    if let Some(n) = c.string_len()? {
                        c.take(usize::try_from(n).map_err(|_| short(c.b.len() as u64))?)?;
                    }
                }
                Ok(())
            })();
            lost |= walked.is_err();
            t.nodes[id as usize].data = match walked {
                Ok(()) if !lost => start,
                Err(e) if !partial => return Err(e),
                _ => MISSING,
            };
        }
        // the fixed-width groups (where the strings end unknown: missing)
        let mut pos = c.pos as u64;
        for group in &groups[1..] {
            for &id in group {
                let node = &mut t.nodes[id as usize];
                let bytes = node.len.saturating_mul(node.kind.width());
                if partial && (lost || pos.saturating_add(bytes) > payload.len() as u64) {
                    lost = true;
                    node.data = MISSING;
                    continue;
                }
                node.data = pos;
                let bytes = node
                    .len
                    .checked_mul(node.kind.width())
                    .ok_or_else(|| short(pos))?;
                pos = pos.checked_add(bytes).filter(|&p| p <= payload.len() as u64).ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "the qdata file is truncated: its vectors need {} bytes more than the payload's {}",
                            pos.saturating_add(bytes) - payload.len() as u64,
                            payload.len()
                        ),
                    )
                })?;
            }
        }
        Ok(t)
    }

    /// Whether node `id` has the object bit: a class of one string or more.
    fn is_object(&self, payload: &[u8], id: u32) -> bool {
        let n = &self.nodes[id as usize];
        self.attrs[n.attrs.0 as usize..n.attrs.1 as usize]
            .iter()
            .any(|a| {
                let name = &payload[a.name.0 as usize..a.name.0 as usize + a.name.1 as usize];
                let v = &self.nodes[a.value as usize];
                name == b"class" && v.kind == Kind::Character && v.len >= 1
            })
    }
}

/// What the writer of the stream has left to do.
enum Task {
    Node(u32),
    Cell(usize),
    Null,
    /// Payload bytes handed over as they lie.
    Bytes {
        start: u64,
        end: u64,
    },
    /// A character vector's elements from `next` on, read at `pos`.
    Strings {
        left: u64,
        pos: u64,
    },
    /// Salvaging, the damage: the end of what is written.
    Lost,
}

/// The R serialization of a qdata payload, written as it is read.
pub struct QdataReader {
    payload: Vec<u8>,
    tree: Tree,
    e: Emitter,
    served: usize,
    tasks: Vec<Task>,
    /// Salvaging, the damage that ended the payload early: the error at
    /// the first vector whose data it lost.
    lost: Option<(io::ErrorKind, String)>,
}

impl QdataReader {
    /// Read the whole payload from `src` (the container's decompressed
    /// bytes), its tree and where its data lies; `big`: the writer's
    /// integers were big-endian.
    /// Salvaging (`salvage`), blocks that end in damage keep what came
    /// before it: the vectors whose data it holds whole are written, and
    /// the stream ends in the damage at the first other one.
    pub fn new(mut src: Box<dyn Read + Send>, big: bool, salvage: bool) -> io::Result<QdataReader> {
        // the payload is held whole (its data lies after its tree): no
        // more than this machine's memory, whatever the blocks inflate to
        let limit = crate::base::limits::physical_memory();
        let mut payload = Vec::new();
        let mut lost = None;
        if let Err(e) = (&mut src).take(limit.saturating_add(1)).read_to_end(&mut payload) {
            let damage = matches!(e.kind(), io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData);
            if !damage {
                return Err(e);
            }
            lost = Some((e.kind(), e.to_string()));
            if !salvage {
                // said where the stream is read, as all damage is
                return Ok(QdataReader {
                    payload,
                    tree: Tree { nodes: Vec::new(), attrs: Vec::new(), children: Vec::new() },
                    e: Emitter::new(big),
                    served: 0,
                    tasks: vec![Task::Lost],
                    lost,
                });
            }
        }
        if payload.len() as u64 > limit {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "the qdata file inflates to more than this machine's {limit} bytes of memory"
                ),
            ));
        }
        if payload.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the qdata file holds no object",
            ));
        }
        let tree = Tree::read(&payload, big, lost.is_some())?;
        Ok(QdataReader {
            payload,
            tree,
            e: Emitter::new(big),
            served: 0,
            tasks: vec![Task::Node(0)],
            lost,
        })
    }

    /// Carry out one task (never one of [`Task::Bytes`], served directly).
    fn step(&mut self, task: Task) -> io::Result<()> {
        let t = &self.tree;
        match task {
            Task::Node(id) => {
                let n = t.nodes[id as usize].clone();
                if n.kind == Kind::Nil {
                    self.e.null();
                    return Ok(());
                }
                if n.data == MISSING && n.len > 0 && n.kind != Kind::List {
                    // salvaging: the damage lost this vector's data
                    let (kind, why) = self.lost.clone().unwrap_or((io::ErrorKind::UnexpectedEof, String::new()));
                    return Err(io::Error::new(kind, why));
                }
                let has_attr = n.attrs.1 > n.attrs.0;
                let object = has_attr && t.is_object(&self.payload, id);
                self.e.flags(n.kind.sxptype(), object, has_attr, false, 0);
                self.e.length(n.len);
                if has_attr {
                    self.tasks.push(Task::Null);
                    for i in (n.attrs.0..n.attrs.1).rev() {
                        self.tasks.push(Task::Node(t.attrs[i as usize].value));
                        self.tasks.push(Task::Cell(i as usize));
                    }
                }
                match n.kind {
                    Kind::List => {
                        for i in (n.children.0..n.children.1).rev() {
                            self.tasks.push(Task::Node(t.children[i as usize]));
                        }
                    }
                    Kind::Character if n.len > 0 => self.tasks.push(Task::Strings {
                        left: n.len,
                        pos: n.data,
                    }),
                    _ if n.len > 0 => self.tasks.push(Task::Bytes {
                        start: n.data,
                        end: n.data + n.len * n.kind.width(),
                    }),
                    _ => {}
                }
            }
            Task::Cell(i) => {
                let (at, len) = t.attrs[i].name;
                let name = &self.payload[at as usize..at as usize + len as usize];
                self.e.tagged_cell(name, levels::UTF8);
            }
            Task::Null => self.e.null(),
            Task::Strings { mut left, pos } => {
                let mut c = Cursor {
                    b: &self.payload,
                    pos: pos as usize,
                    big: self.e.big_endian(),
                };
                while left > 0 && self.e.out.len() < 1 << 16 {
                    // placed and checked when the tree was read
                    let n = c.string_len().expect("string lengths checked");
                    match n {
                        None => self.e.charsxp(None, 0),
                        Some(n) => {
                            let s = c.take(n as usize).expect("string lengths checked");
                            self.e.charsxp(Some(s), levels::UTF8)
                        }
                    }
                    left -= 1;
                }
                if left > 0 {
                    self.tasks.push(Task::Strings {
                        left,
                        pos: c.pos as u64,
                    });
                }
            }
            Task::Lost => {
                let (kind, why) = self.lost.clone().unwrap_or((io::ErrorKind::UnexpectedEof, String::new()));
                return Err(io::Error::new(kind, why));
            }
            Task::Bytes { .. } => unreachable!("served directly"),
        }
        Ok(())
    }
}

impl Read for QdataReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.served < self.e.out.len() {
                let k = out.len().min(self.e.out.len() - self.served);
                out[..k].copy_from_slice(&self.e.out[self.served..self.served + k]);
                self.served += k;
                return Ok(k);
            }
            self.e.out.clear();
            self.served = 0;
            match self.tasks.pop() {
                None => return Ok(0),
                Some(Task::Bytes { start, end }) => {
                    let k = (out.len() as u64).min(end - start) as usize;
                    out[..k].copy_from_slice(&self.payload[start as usize..start as usize + k]);
                    if start + (k as u64) < end {
                        self.tasks.push(Task::Bytes {
                            start: start + k as u64,
                            end,
                        });
                    }
                    return Ok(k);
                }
                Some(task) => {
                    // what was written before the damage is read first
                    let mut step = self.step(task);
                    // gather small tasks into one chunk
                    while step.is_ok()
                        && self.e.out.len() < 1 << 16
                        && !matches!(self.tasks.last(), None | Some(Task::Bytes { .. }))
                    {
                        let t = self.tasks.pop().expect("a task");
                        step = self.step(t);
                    }
                    if let Err(e) = step {
                        if self.e.out.is_empty() {
                            return Err(e);
                        }
                        self.lost = Some((e.kind(), e.to_string()));
                        self.tasks = vec![Task::Lost];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{RObject, VectorData};

    /// The object a payload reads as.
    fn read(payload: Vec<u8>, big: bool) -> crate::Result<RObject> {
        let mut r = QdataReader::new(Box::new(std::io::Cursor::new(payload)), big, false)
            .map_err(|e| crate::Error::corrupt(e.to_string()))?;
        let mut stream = Vec::new();
        r.read_to_end(&mut stream).map_err(|e| crate::Error::corrupt(e.to_string()))?;
        Ok(crate::read_bytes(stream, &Default::default())?.root)
    }

    #[test]
    fn a_big_endian_payload_reads_as_the_little_endian_one() {
        // list(1:2 with NA, 2.5) in both byte orders: a list of 2, an
        // integer vector of 2, a double of 1; then the data, doubles first
        let little = [
            vec![0x22, 0x62, 0x41],
            2.5f64.to_le_bytes().to_vec(),
            1i32.to_le_bytes().to_vec(),
            i32::MIN.to_le_bytes().to_vec(),
        ]
        .concat();
        let big = [
            vec![0x22, 0x62, 0x41],
            2.5f64.to_be_bytes().to_vec(),
            1i32.to_be_bytes().to_vec(),
            i32::MIN.to_be_bytes().to_vec(),
        ]
        .concat();
        for (payload, is_big) in [(little, false), (big, true)] {
            let RObject::Vector(v) = read(payload, is_big).unwrap() else { panic!("a list") };
            let VectorData::List(items) = &v.data else { panic!("a list") };
            match (&items[0], &items[1]) {
                (RObject::Vector(a), RObject::Vector(b)) => {
                    assert!(matches!(&a.data, VectorData::Integer(x) if x[..] == [1, i32::MIN]));
                    assert!(matches!(&b.data, VectorData::Real(x) if x[..] == [2.5]));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn lengths_that_run_past_the_payload_are_refused_before_anything_is_reserved() {
        // a list claiming 2^32 elements in a payload of a few bytes
        let e = read(vec![0x03, 0xff, 0xff, 0xff, 0xff, 0x00], false).unwrap_err();
        assert!(e.message.contains("more than the"), "{}", e.message);
        // a double vector of 2^31 elements with 8 bytes of data
        let mut p = vec![0x07];
        p.extend(0x8000_0000u32.to_le_bytes());
        p.extend([0u8; 8]);
        let e = read(p, false).unwrap_err();
        assert!(e.message.contains("truncated"), "{}", e.message);
        // an unknown header
        assert!(read(vec![0xC5], false).unwrap_err().message.contains("unknown object header"));
        // NA as an attribute's name
        assert!(read(vec![0xE1, 0x41, 0xFF], false).unwrap_err().message.contains("NA"));
    }
}
