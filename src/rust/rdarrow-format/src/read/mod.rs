//! The reader: one place per node type, mirroring the layout R's
//! serializer writes. Builds the [`crate::tree`] with vector payloads in
//! their final buffers; in listing mode it skips payloads without decoding.

pub mod document;
pub mod emit;
pub mod fst;
pub mod qdata;
pub mod qs;
pub mod spill;
pub mod salvage;
pub mod summary;
pub(crate) mod body;
mod consumer;
mod stored;

pub use consumer::*;

use crate::base::error::{Error, ErrorKind, LimitKind, Result};
use crate::wire::header::StreamHeader;
use crate::wire::decode::Input;
pub use crate::base::limits::physical_memory;
use crate::tree::*;
use arrow_buffer::{Buffer, ScalarBuffer};

/// Decide, per top-level object of a `save()` file, whether to decode it
/// fully or to skip its payloads (listing).
pub trait ObjectFilter {
    /// Whether to decode the object `name`.
    fn decode(&mut self, name: &[u8]) -> bool;
    /// Whether the objects not decoded must still be parsed (with their
    /// payloads skipped, as a listing needs them), where a source lets
    /// them be passed over unread (a lazy-load data base's entries).
    fn parse_declined(&self) -> bool {
        true
    }
}

impl<F: FnMut(&[u8]) -> bool> ObjectFilter for F {
    fn decode(&mut self, name: &[u8]) -> bool {
        self(name)
    }
}

/// Where a top-level object sits in the decompressed stream.
#[derive(Debug, Clone)]
pub struct ObjectSpan {
    /// The object's name.
    pub name: Vec<u8>,
    /// Where it starts.
    pub start: u64,
    /// Where it ends.
    pub end: u64,
    /// Whether its payloads were decoded.
    pub decoded: bool,
}

/// Vectors inside attributes up to this length are kept even when skipping,
/// so that listings see classes, dims, levels and compact row names.
const KEEP_IN_ATTR: u64 = 4096;

pub(crate) struct Parser<'a> {
    pub inp: &'a mut Input,
    pub refs: RefTable,
    depth: usize,
    max_depth: usize,
    skipping: bool,
    in_attr: u32,
    in_env: u32,
    object: Option<String>,
    /// Payload bytes decoded so far, and the limit.
    decoded: u64,
    max_decoded: u64,
    consumer: Option<(std::sync::Arc<dyn Consumer>, StreamHeader)>,
    /// The stream's header, for the consumer's string sinks.
    header: Option<StreamHeader>,
    /// Who may give the memory of payloads ([`Consumer::allocate`]).
    allocator: Option<std::sync::Arc<dyn Consumer>>,
    /// Reading byte code (whose vectors stay in the tree's buffers).
    in_code: u32,
    defer_columns: bool,
    defer_nested: bool,
    /// Reading the elements of a top-level list (a data frame's columns),
    /// or with `defer_nested` of a list nested in one, at `list_depth`.
    in_columns: bool,
    list_depth: usize,
    /// Reading an ALTREP node's class or state (kept whole: it expands
    /// from them).
    in_altrep: u32,
    /// The kinds of node the trust rule looks at, met so far.
    seen: crate::checks::trust::Seen,
    /// qs's rule for the object bit ([`class_sets_object`]): a node has it
    /// when its class is a character vector of one string or more, as
    /// `qs::qread()` sets it (a `.qs` file holds the class after the node,
    /// so its stream cannot say it first).
    class_rule: bool,
    /// Salvaging ([`ReadOptions::salvage`]): the first error that ended
    /// the read, once it happened (nothing more is read from the stream),
    /// and what each list it cut short kept, innermost first.
    salvage: bool,
    lost: Option<Error>,
    kept: Vec<salvage::Kept>,
}

fn is_pairlist_type(t: u8) -> bool {
    matches!(t, sxp::LIST | sxp::LANG | sxp::CLO | sxp::PROM | sxp::DOT)
}

/// qs's rule for the object bit (`qs::qread()`): a class attribute that
/// is a character vector of one string or more.
fn class_sets_object(attributes: &Option<RObject>, refs: &RefTable) -> bool {
    let Some(RObject::Pairlist(pl)) = attributes else {
        return false;
    };
    pl.cells.iter().any(|c| {
        let named_class = matches!(&c.tag, Some(RObject::Ref(id)) if refs.symbol_name(*id) == Some(&b"class"[..]));
        named_class
            && matches!(&c.car, RObject::Vector(v) if matches!(&v.data, VectorData::Character(s) if s.len() >= 1))
    })
}

impl<'a> Parser<'a> {
    pub fn new(inp: &'a mut Input, opts: &ReadOptions) -> Self {
        Parser {
            inp,
            refs: RefTable::default(),
            depth: 0,
            max_depth: opts.max_depth,
            skipping: false,
            in_attr: 0,
            in_env: 0,
            object: None,
            decoded: 0,
            max_decoded: opts.memory_limit(),
            consumer: None,
            header: None,
            allocator: opts.consumer.clone(),
            in_code: 0,
            defer_columns: opts.placement() != Placement::Decode,
            defer_nested: opts.placement() == Placement::DeferNested,
            in_columns: false,
            list_depth: 0,
            in_altrep: 0,
            seen: Default::default(),
            class_rule: false,
            salvage: opts.salvage,
            lost: None,
            kept: Vec::new(),
        }
    }

    /// Salvaging, damage `e` (bytes cut short or wrong, a source that
    /// broke off) ends the read here: kept as the damage (the first one,
    /// where an error after it comes back up), so that what was read before
    /// it is kept. Any other error (a limit, a refusal, an interruption),
    /// or any error when not salvaging, is returned.
    fn lose(&mut self, e: Error) -> Result<()> {
        if !(self.salvage && salvage::is_damage(&e)) {
            return Err(e);
        }
        if self.lost.is_none() {
            self.lost = Some(e);
        }
        Ok(())
    }

    fn err(&self, e: Error) -> Error {
        let e = e.at(self.inp.offset());
        match &self.object {
            Some(o) => e.in_object(o),
            None => e,
        }
    }

    fn corrupt(&self, msg: impl Into<String>) -> Error {
        self.err(Error::corrupt(msg))
    }

    fn skip_payload(&self, len: u64) -> bool {
        self.skipping && self.in_env == 0 && (self.in_attr == 0 || len > KEEP_IN_ATTR)
    }

    /// Read one item.
    pub fn item(&mut self) -> Result<RObject> {
        if let Some(e) = &self.lost {
            // salvaging, after the damage: nothing more is read
            return Err(e.clone());
        }
        let flags = self.inp.read_int()?;
        self.item_with_flags(flags)
    }

    fn item_with_flags(&mut self, flags: i32) -> Result<RObject> {
        self.depth += 1;
        if self.depth > self.max_depth {
            let msg = format!(
                "objects are nested more than {} levels deep",
                self.max_depth
            );
            return Err(self.err(Error::limit_of(LimitKind::Depth, msg)));
        }
        let r = self.dispatch(flags);
        self.depth -= 1;
        r
    }

    fn attributes(&mut self) -> Result<RObject> {
        self.in_attr += 1;
        let r = self.item();
        self.in_attr -= 1;
        r
    }

    fn opt_attributes(&mut self, has_attr: bool) -> Result<Option<RObject>> {
        if has_attr {
            Ok(Some(self.attributes()?))
        } else {
            Ok(None)
        }
    }

    fn dispatch(&mut self, flags: i32) -> Result<RObject> {
        let NodeWord {
            sxptype: t,
            flags: fl,
            has_attr,
            has_tag,
        } = unpack(flags);
        if let Some(special) = SpecialValue::from_code(t) {
            return Ok(RObject::Special(special));
        }
        self.seen.note(t, fl.levels);
        match t {
            sxp::NILVALUE => Ok(RObject::Null),
            sxp::REFSXP => {
                let packed = unpack_reference(flags);
                let idx = if packed == 0 { self.inp.read_int()? as i64 } else { packed as i64 };
                if idx < 1 || idx as usize > self.refs.entries.len() {
                    return Err(self.corrupt(format!(
                        "reference index {idx} is outside the reference table (which has {} entries)",
                        self.refs.entries.len()
                    )));
                }
                Ok(RObject::Ref(RefId((idx - 1) as u32)))
            }
            sxp::PERSIST => {
                let s = self.string_list()?;
                Ok(RObject::Ref(self.refs.push(RefEntry::Persistent(s))))
            }
            sxp::SYM => {
                let flags = self.inp.read_int()?;
                let name = self.char_item(flags)?;
                Ok(RObject::Ref(self.refs.push(RefEntry::Symbol(name))))
            }
            sxp::PACKAGE => {
                let s = self.string_list()?;
                Ok(RObject::Ref(self.refs.push(RefEntry::Package(s))))
            }
            sxp::NAMESPACE => {
                let s = self.string_list()?;
                Ok(RObject::Ref(self.refs.push(RefEntry::Namespace(s))))
            }
            sxp::ENV => {
                let locked = self.inp.read_int()? != 0;
                let id = self.refs.push(RefEntry::Pending);
                self.in_env += 1;
                let r = (|| -> Result<Environment> {
                    let enclosure = self.item()?;
                    let frame = self.item()?;
                    let hashtab = self.item()?;
                    let attributes = self.attributes()?;
                    Ok(Environment { locked, enclosure, frame, hashtab, attributes })
                })();
                self.in_env -= 1;
                self.refs.entries[id.0 as usize] = RefEntry::Environment(Box::new(r?));
                Ok(RObject::Ref(id))
            }
            t if is_pairlist_type(t) => self.pairlist(flags),
            sxp::EXTPTR => {
                let id = self.refs.push(RefEntry::Pending);
                self.in_env += 1;
                let r = (|| -> Result<ExternalPointer> {
                    let protected = self.item()?;
                    let tag = self.item()?;
                    let attributes = self.opt_attributes(has_attr)?;
                    Ok(ExternalPointer { flags: fl, protected, tag, attributes })
                })();
                self.in_env -= 1;
                self.refs.entries[id.0 as usize] = RefEntry::ExternalPointer(Box::new(r?));
                Ok(RObject::Ref(id))
            }
            sxp::WEAKREF => {
                let id = self.refs.push(RefEntry::Pending);
                self.in_env += 1;
                let attributes = self.opt_attributes(has_attr);
                self.in_env -= 1;
                self.refs.entries[id.0 as usize] = RefEntry::WeakRef(Box::new(AttrOnly { flags: fl, attributes: attributes? }));
                Ok(RObject::Ref(id))
            }
            sxp::SPECIAL | sxp::BUILTIN => {
                let len = self.inp.read_int()?;
                if !(0..=10_000).contains(&len) {
                    return Err(self.corrupt(format!("invalid primitive name length {len}")));
                }
                let mut name = Vec::new();
                self.inp.read_string_into(len as usize, &mut name)?;
                let attributes = self.opt_attributes(has_attr)?;
                Ok(RObject::Primitive(Box::new(Primitive { sxptype: t, flags: fl, name, attributes })))
            }
            sxp::CHAR => Ok(RObject::Char(Box::new(self.char_item(flags)?))),
            sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::STR | sxp::VEC | sxp::EXPR | sxp::RAW => {
                self.vector(t, fl, has_attr)
            }
            sxp::S4 => {
                let attributes = self.opt_attributes(has_attr)?;
                let flags = self.with_class_rule(fl, &attributes);
                Ok(RObject::S4(Box::new(AttrOnly { flags, attributes })))
            }
            sxp::BCODE => {
                let reps_len = self.inp.read_int()?;
                if reps_len < 0 {
                    return Err(self.corrupt(format!("invalid byte-code sharing table size {reps_len}")));
                }
                let code = self.bytecode()?;
                let attributes = self.opt_attributes(has_attr)?;
                Ok(RObject::Bytecode(Box::new(BytecodeObject { flags: fl, reps_len, code, attributes })))
            }
            sxp::ALTREP => {
                // class info and (small) states are always kept: listing
                // needs them for the type and length
                self.in_attr += 1;
                self.in_altrep += 1;
                let info = self.item();
                let state = info.is_ok().then(|| self.item());
                self.in_attr -= 1;
                self.in_altrep -= 1;
                let info = info?;
                let state = state.unwrap()?;
                let attributes = self.attributes()?;
                Ok(RObject::Altrep(Box::new(Altrep { flags: fl, info, state, attributes })))
            }
            sxp::CLASSREF | sxp::GENERICREF => Err(self.err(Error::unsupported(
                "the stream contains a class or generic reference (type 245/246), which R itself cannot read",
            ))),
            _ => {
                let _ = has_tag;
                Err(self.corrupt(format!("unknown node type {t} (flags 0x{:08x})", flags as u32)))
            }
        }
    }

    /// A vector length: an int, or -1 followed by the two 32-bit halves.
    fn length(&mut self) -> Result<u64> {
        let n = self.inp.read_int()?;
        if n >= 0 {
            return Ok(n as u64);
        }
        if n != -1 {
            return Err(self.corrupt(format!("negative vector length {n}")));
        }
        let hi = self.inp.read_int()?;
        let lo = self.inp.read_int()?;
        if !(0..=65536).contains(&hi) {
            return Err(self.corrupt(format!("invalid upper part {hi} of a long vector length")));
        }
        Ok(((hi as u64) << 32) | (lo as u32 as u64))
    }

    /// A CHARSXP whose flags have been read.
    fn char_item(&mut self, flags: i32) -> Result<CharItem> {
        let NodeWord {
            sxptype: t,
            flags: fl,
            ..
        } = unpack(flags);
        if t != sxp::CHAR {
            return Err(self.corrupt(format!("expected a string (CHARSXP), found node type {t}")));
        }
        let len = self.inp.read_int()?;
        if len == -1 {
            return Ok(CharItem {
                levels: fl.levels,
                bytes: None,
            });
        }
        if len < 0 {
            return Err(self.corrupt(format!("negative string length {len}")));
        }
        let mut bytes = Vec::new();
        self.inp.read_string_into(len as usize, &mut bytes)?;
        Ok(CharItem {
            levels: fl.levels,
            bytes: Some(bytes),
        })
    }

    /// PACKAGESXP / NAMESPACESXP / PERSISTSXP payload.
    fn string_list(&mut self) -> Result<Vec<CharItem>> {
        let names = self.inp.read_int()?;
        if names != 0 {
            return Err(self.corrupt(
                "names in persistent strings are not supported (R cannot read them either)",
            ));
        }
        let n = self.length()?;
        let mut out = Vec::with_capacity(n.min(64) as usize);
        for _ in 0..n {
            let f = self.inp.read_int()?;
            out.push(self.char_item(f)?);
        }
        Ok(out)
    }

    fn pairlist(&mut self, first_flags: i32) -> Result<RObject> {
        let mut cells = Vec::new();
        let tail = self.pairlist_cells(first_flags, &mut cells)?;
        Ok(RObject::Pairlist(Box::new(Pairlist { cells, tail })))
    }

    /// The cells of a pairlist whose first node word is `first_flags`,
    /// pushed onto `cells` as each is read whole; its tail.
    fn pairlist_cells(&mut self, first_flags: i32, cells: &mut Vec<Cell>) -> Result<RObject> {
        let mut flags = first_flags;
        loop {
            let NodeWord {
                sxptype: t,
                flags: fl,
                has_attr,
                has_tag,
            } = unpack(flags);
            self.seen.note(t, fl.levels);
            let attributes = self.opt_attributes(has_attr)?;
            let tag = if has_tag { Some(self.item()?) } else { None };
            let car = self.item()?;
            cells.push(Cell {
                sxptype: t,
                flags: self.with_class_rule(fl, &attributes),
                attributes,
                tag,
                car,
            });
            let next = self.inp.read_int()?;
            if is_pairlist_type(unpack(next).sxptype) {
                flags = next;
                continue;
            }
            return self.item_with_flags(next);
        }
    }

    /// Salvaging, the attributes of a list whose `len` elements were read
    /// whole: `Ok(Ok(attributes))` when they are intact; `Ok(Err(names))`
    /// when damage cut them short (the damage kept, [`Parser::lose`]),
    /// with its `names` attribute where that was read whole before bytes
    /// cut short, and names each element.
    fn list_attributes(&mut self, len: u64) -> Result<std::result::Result<RObject, Option<Cell>>> {
        self.in_attr += 1;
        let mut cells = Vec::new();
        let read = match self.inp.read_int() {
            Ok(flags) if unpack(flags).sxptype == sxp::LIST => {
                self.depth += 1;
                let tail = self.pairlist_cells(flags, &mut cells);
                self.depth -= 1;
                tail.map(|tail| {
                    RObject::Pairlist(Box::new(Pairlist {
                        cells: std::mem::take(&mut cells),
                        tail,
                    }))
                })
            }
            Ok(flags) => self.item_with_flags(flags),
            Err(e) => Err(e),
        };
        self.in_attr -= 1;
        match read {
            Ok(attributes) => Ok(Ok(attributes)),
            Err(e) => {
                self.lose(e)?;
                // bytes cut short leave those before them as written;
                // wrong bytes may have been read as the names before they
                // were noticed (a decompressor may give garbage first)
                if !matches!(self.lost.as_ref().map(|e| e.kind), Some(ErrorKind::Truncated | ErrorKind::Io)) {
                    return Ok(Err(None));
                }
                let names = cells.into_iter().find(|c| {
                    let named = matches!(&c.tag, Some(RObject::Ref(id)) if self.refs.symbol_name(*id) == Some(&b"names"[..]));
                    named && matches!(&c.car, RObject::Vector(v) if matches!(&v.data, VectorData::Character(s) if s.len() as u64 == len))
                });
                Ok(Err(names))
            }
        }
    }

    /// A list the damage cut short, salvaged: its elements `data`, with
    /// the cell of its `names` where they were kept, and no other
    /// attribute (nor is it an object: its class went with them).
    fn salvaged_list(&self, fl: Flags, data: VectorData, names: Option<Cell>) -> RObject {
        let mut flags = fl;
        flags.object = false;
        RObject::Vector(Box::new(Vector {
            flags,
            data,
            attributes: names.map(|c| {
                RObject::Pairlist(Box::new(Pairlist {
                    cells: vec![c],
                    tail: RObject::Null,
                }))
            }),
        }))
    }

    fn vector(&mut self, t: u8, fl: Flags, has_attr: bool) -> Result<RObject> {
        let len = self.length()?;
        let skip = self.skip_payload(len) && !matches!(t, sxp::VEC | sxp::EXPR);
        let atomic = matches!(
            t,
            sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::STR | sxp::RAW
        );
        let column = self.in_columns && self.depth == self.list_depth + 1 && self.in_attr == 0;
        // reading parts of objects by path: any large payload (an S4
        // object's slot, an element deep in lists) stays in the stream
        // until the part that holds it is taken; not the names an object
        // path looks up, nor an ALTREP node's state
        let large_part = self.defer_nested
            && len > KEEP_IN_ATTR
            && self.in_altrep == 0
            && !(t == sxp::STR && self.in_attr > 0);
        let defer = self.defer_columns
            && (column || large_part)
            && self.in_env == 0
            && self.in_code == 0
            && !self.skipping
            && self.inp.format != crate::Format::Ascii
            && atomic;
        if defer {
            let data = self.deferred(t, len)?;
            let attributes = self.opt_attributes(has_attr)?;
            return Ok(RObject::Vector(Box::new(Vector {
                flags: fl,
                data,
                attributes,
            })));
        }
        if !skip {
            let width: u64 = match t {
                sxp::LGL | sxp::INT => 4,
                sxp::REAL => 8,
                sxp::CPLX => 16,
                sxp::STR | sxp::VEC | sxp::EXPR => 8,
                _ => 1,
            };
            self.decoded = self.decoded.saturating_add(len.saturating_mul(width));
            if self.decoded > self.max_decoded {
                return Err(self.err(Error::limit_of(
                    LimitKind::Memory,
                    format!("the data would need more than {} bytes of memory (a vector of {len} elements)", self.max_decoded),
                )));
            }
        }
        let data = if skip {
            match t {
                sxp::LGL | sxp::INT => self.inp.skip_fixed(len, 4, false)?,
                sxp::REAL => self.inp.skip_fixed(len, 8, true)?,
                sxp::CPLX => self.inp.skip_fixed(len.saturating_mul(2), 8, true)?,
                sxp::RAW => self.inp.skip_fixed(len, 1, false)?,
                sxp::STR => self.skip_strings(len)?,
                _ => unreachable!(),
            }
            VectorData::Skipped { sxptype: t, len }
        } else if let Some(data) = self.placed(t, len)? {
            data
        } else {
            match t {
                sxp::LGL => VectorData::Logical(ScalarBuffer::from(
                    self.inp.read_ints(len).map_err(|e| self.err(e))?,
                )),
                sxp::INT => VectorData::Integer(ScalarBuffer::from(
                    self.inp.read_ints(len).map_err(|e| self.err(e))?,
                )),
                sxp::REAL => VectorData::Real(ScalarBuffer::from(
                    self.inp.read_doubles(len).map_err(|e| self.err(e))?,
                )),
                sxp::CPLX => {
                    let n = len
                        .checked_mul(2)
                        .ok_or_else(|| self.corrupt("complex vector length overflows"))?;
                    VectorData::Complex(ScalarBuffer::from(
                        self.inp.read_doubles(n).map_err(|e| self.err(e))?,
                    ))
                }
                sxp::RAW => VectorData::Raw(Buffer::from_vec(
                    self.inp.read_raw(len).map_err(|e| self.err(e))?,
                )),
                sxp::STR => match self.sunk(len)? {
                    Some(data) => data,
                    None => VectorData::Character(self.strings(len)?),
                },
                sxp::VEC | sxp::EXPR => {
                    let mut items = Vec::with_capacity(len.min(1 << 16) as usize);
                    let outer = (self.in_columns, self.list_depth);
                    // a top-level list, or (deferring nested lists) a list
                    // that is itself an element of one
                    let nested =
                        self.defer_nested && self.in_columns && self.depth == self.list_depth + 1;
                    self.in_columns = (self.depth == 1 || nested)
                        && t == sxp::VEC
                        && self.in_attr == 0
                        && self.in_env == 0;
                    self.list_depth = self.depth;
                    let r = self.items(t, len, &mut items);
                    (self.in_columns, self.list_depth) = outer;
                    r?;
                    let data = if t == sxp::VEC {
                        VectorData::List(items)
                    } else {
                        VectorData::Expression(items)
                    };
                    if self.lost.is_some() {
                        // salvaged: its attributes, which follow its
                        // elements in the stream, were never read (what
                        // it kept is said where the damage was met)
                        return Ok(self.salvaged_list(fl, data, None));
                    }
                    if has_attr && self.salvage {
                        // damage in the attributes after its elements
                        // keeps the elements (and names read whole)
                        return Ok(match self.list_attributes(len)? {
                            Ok(attributes) => {
                                let attributes = Some(attributes);
                                RObject::Vector(Box::new(Vector {
                                    flags: self.with_class_rule(fl, &attributes),
                                    data,
                                    attributes,
                                }))
                            }
                            Err(names) => {
                                let kept = salvage::Kept { whole: len, partial: false, len, names: names.is_some() };
                                self.kept.push(kept);
                                self.salvaged_list(fl, data, names)
                            }
                        });
                    }
                    data
                }
                _ => unreachable!(),
            }
        };
        let attributes = self.opt_attributes(has_attr)?;
        Ok(RObject::Vector(Box::new(Vector {
            flags: self.with_class_rule(fl, &attributes),
            data,
            attributes,
        })))
    }

    /// `fl`, with the object bit set by the class in `attributes` where
    /// the stream follows qs's rule ([`class_sets_object`]).
    fn with_class_rule(&self, mut fl: Flags, attributes: &Option<RObject>) -> Flags {
        if self.class_rule && !fl.object {
            fl.object = class_sets_object(attributes, &self.refs);
        }
        fl
    }

    /// Whether a payload read here may go to the consumer's memory: not in
    /// attributes, environments or byte code, and not skipped.
    fn in_consumer_places(&self) -> bool {
        self.in_attr == 0 && self.in_env == 0 && self.in_code == 0 && !self.skipping
    }

    /// An atomic payload decoded into memory the consumer gives, where it
    /// gives it ([`Consumer::allocate`]).
    fn placed(&mut self, t: u8, len: u64) -> Result<Option<VectorData>> {
        let Some(allocator) = &self.allocator else {
            return Ok(None);
        };
        if !self.in_consumer_places() {
            return Ok(None);
        }
        decode_placed(self.inp, allocator.as_ref(), t, len).map_err(|e| self.err(e))
    }

    /// A character vector's strings handed to the consumer's sink as they
    /// are read, where it takes them ([`Consumer::strings`]).
    fn sunk(&mut self, len: u64) -> Result<Option<VectorData>> {
        let (Some(allocator), Some(header)) = (&self.allocator, &self.header) else {
            return Ok(None);
        };
        if !self.in_consumer_places() {
            return Ok(None);
        }
        let Some(mut sink) = allocator.strings(len, header) else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        for i in 0..len {
            bytes.clear();
            let (na, levels) = self.next_string(i, &mut bytes)?;
            // what goes to R is checked for R as it is read
            if bytes.contains(&0) {
                return Err(self.err(crate::checks::validate::embedded_nul()));
            }
            sink.push((!na).then_some(&bytes[..]), levels);
        }
        Ok(Some(VectorData::Consumed(sink.finish())))
    }

    /// The elements of a list or expression vector.
    fn items(&mut self, t: u8, len: u64, items: &mut Vec<RObject>) -> Result<()> {
        for i in 0..len {
            if i & 0xffff == 0xffff {
                crate::base::cancel::check().map_err(|e| self.err(e))?;
            }
            let item = match self.item() {
                Ok(item) => item,
                Err(e) => {
                    // the damage is in element i: the list keeps those before it
                    self.lose(e)?;
                    self.kept.push(salvage::Kept { whole: i, partial: false, len, names: false });
                    return Ok(());
                }
            };
            items.push(item);
            if self.lost.is_some() {
                // element i is itself a list the damage cut short
                self.kept.push(salvage::Kept { whole: i, partial: true, len, names: false });
                return Ok(());
            }
            // a column of a top-level list (data frame), read
            if self.depth == 1
                && !self.skipping
                && self.in_attr == 0
                && self.in_env == 0
                && t == sxp::VEC
            {
                if let (Some((consumer, header)), Some(last)) = (&self.consumer, items.last_mut()) {
                    consumer.column(Column {
                        object: last,
                        refs: &self.refs,
                        header,
                        store: None,
                    });
                }
            }
        }
        Ok(())
    }

    /// A payload left in the stream: its place, and for strings a mark
    /// every [`Deferred::STRIDE`] elements.
    fn deferred(&mut self, t: u8, len: u64) -> Result<VectorData> {
        let start = self.inp.offset();
        let mut marks = Vec::new();
        let mut plain_text = true;
        match t {
            sxp::LGL | sxp::INT => self.inp.skip_fixed(len, 4, false)?,
            sxp::REAL => self.inp.skip_fixed(len, 8, true)?,
            sxp::CPLX => self.inp.skip_fixed(len.saturating_mul(2), 8, true)?,
            sxp::RAW => self.inp.skip_fixed(len, 1, false)?,
            _ => {
                for i in 0..len {
                    if i % Deferred::STRIDE == 0 {
                        marks.push(self.inp.offset());
                    }
                    plain_text &= self.skip_string_text(i)?;
                }
            }
        }
        Ok(VectorData::Deferred(Deferred {
            sxptype: t,
            len,
            start,
            end: self.inp.offset(),
            marks: marks.into(),
            plain_text,
        }))
    }

    /// Skip string `i` of a character vector: whether it is plain text
    /// ([`crate::wire::decode::Input::skip_charsxp_text`]).
    fn skip_string_text(&mut self, i: u64) -> Result<bool> {
        let (f, len, plain) = self.inp.skip_charsxp_text().map_err(|e| self.err(e))?;
        self.check_skipped_string(i, f, len)?;
        Ok(plain)
    }

    /// A skipped element `i` of a character vector (flags `f`, length
    /// `len`) is a string of a possible length.
    fn check_skipped_string(&self, i: u64, f: i32, len: i32) -> Result<()> {
        if (f as u32 & 0xff) as u8 != sxp::CHAR {
            return Err(self.corrupt(format!(
                "element {} of a character vector is not a string",
                i + 1
            )));
        }
        if len < -1 {
            return Err(self.corrupt(format!("negative string length {len}")));
        }
        Ok(())
    }

    fn skip_strings(&mut self, n: u64) -> Result<()> {
        for i in 0..n {
            let (f, len) = self.inp.skip_charsxp().map_err(|e| self.err(e))?;
            self.check_skipped_string(i, f, len)?;
        }
        Ok(())
    }

    /// The next string of a character vector (element `i`), its bytes
    /// appended to `into`: whether it is `NA`, and its encoding levels.
    fn next_string(&mut self, i: u64, into: &mut Vec<u8>) -> Result<(bool, u16)> {
        let (f, len) = self.inp.next_charsxp(into).map_err(|e| self.err(e))?;
        let NodeWord {
            sxptype: t,
            flags: fl,
            ..
        } = unpack(f);
        if t != sxp::CHAR {
            return Err(self.corrupt(format!(
                "element {} of a character vector is not a string (node type {t})",
                i + 1
            )));
        }
        if len < -1 {
            return Err(self.corrupt(format!("negative string length {len}")));
        }
        Ok((len == -1, fl.levels))
    }

    /// A character vector: offsets + bytes + validity + levels.
    fn strings(&mut self, n: u64) -> Result<StringVector> {
        let n =
            usize::try_from(n).map_err(|_| self.err(Error::limit("character vector too long")))?;
        let mut b = StringVectorBuilder::new(n);
        for i in 0..n {
            let (na, levels) = self.next_string(i as u64, b.data())?;
            b.end(na, levels);
        }
        Ok(b.finish())
    }

    fn bytecode(&mut self) -> Result<Bytecode> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.err(Error::limit_of(
                LimitKind::Depth,
                "byte code nested too deeply",
            )));
        }
        self.in_code += 1;
        let code = self.item();
        self.in_code -= 1;
        let code = code?;
        let n = self.inp.read_int()?;
        if n < 0 {
            return Err(self.corrupt(format!("negative byte-code constant count {n}")));
        }
        let mut consts = Vec::with_capacity((n as usize).min(1024));
        for _ in 0..n {
            let type_code = self.inp.read_int()?;
            let c = match type_code {
                x if x == sxp::BCODE as i32 => BcConst::Code(self.bytecode()?),
                x if [
                    sxp::LANG,
                    sxp::LIST,
                    sxp::BCREPDEF,
                    sxp::BCREPREF,
                    sxp::ATTRLANG,
                    sxp::ATTRLIST,
                ]
                .iter()
                .any(|&t| t as i32 == x) =>
                {
                    BcConst::Lang(self.bc_lang(type_code)?)
                }
                _ => BcConst::Item {
                    type_code,
                    value: self.item()?,
                },
            };
            consts.push(c);
        }
        self.depth -= 1;
        Ok(Bytecode { code, consts })
    }

    fn bc_lang(&mut self, type_code: i32) -> Result<BcLang> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(self.err(Error::limit_of(
                LimitKind::Depth,
                "byte-code constants nested too deeply",
            )));
        }
        let r = match type_code {
            x if x == sxp::BCREPREF as i32 => BcLang::Ref(self.inp.read_int()?),
            x if [
                sxp::BCREPDEF,
                sxp::LANG,
                sxp::LIST,
                sxp::ATTRLANG,
                sxp::ATTRLIST,
            ]
            .iter()
            .any(|&t| t as i32 == x) =>
            {
                let (def, t) = if x == sxp::BCREPDEF as i32 {
                    let pos = self.inp.read_int()?;
                    (Some(pos), self.inp.read_int()?)
                } else {
                    (None, x)
                };
                if ![sxp::LANG, sxp::LIST, sxp::ATTRLANG, sxp::ATTRLIST]
                    .iter()
                    .any(|&k| k as i32 == t)
                {
                    return Err(self.corrupt(format!("invalid byte-code cell type {t}")));
                }
                let attributes = if t == sxp::ATTRLANG as i32 || t == sxp::ATTRLIST as i32 {
                    Some(self.attributes()?)
                } else {
                    None
                };
                let tag = self.item()?;
                let car_t = self.inp.read_int()?;
                let car = self.bc_lang(car_t)?;
                let cdr_t = self.inp.read_int()?;
                let cdr = self.bc_lang(cdr_t)?;
                BcLang::Cell(Box::new(BcCell {
                    def,
                    type_code: t,
                    attributes,
                    tag,
                    car,
                    cdr,
                }))
            }
            pad => BcLang::Item {
                pad,
                value: self.item()?,
            },
        };
        self.depth -= 1;
        Ok(r)
    }
}

/// `n` strings of a character vector's payload, after skipping `skip`
/// (a deferred payload read back by range).
pub(crate) fn strings_at(inp: &mut Input, skip: u64, n: u64) -> Result<StringVector> {
    let mut p = Parser::new(inp, &ReadOptions::default());
    p.skip_strings(skip)?;
    p.strings(n)
}

#[cfg(test)]
mod parser_tests;
