//! The reader: one place per node type, mirroring the layout R's
//! serializer writes. Builds the [`crate::tree`] with vector payloads in
//! their final buffers; in listing mode it skips payloads without decoding.

pub mod document;
pub mod emit;
pub mod qdata;
pub mod qs;
pub mod spill;
pub mod salvage;
pub mod summary;

use crate::base::error::{Error, LimitKind, Result};
use crate::wire::header::{Container, StreamHeader};
use crate::wire::decode::Input;
pub use crate::base::limits::physical_memory;
use crate::tree::*;
use arrow_buffer::{Buffer, ScalarBuffer};

/// Where the payloads of the columns of top-level lists (a data frame's
/// columns, a list's elements) go, as a [`Consumer`] asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// Decoded once, into the tree's buffers (Arrow buffers, which a
    /// consumer takes without a copy).
    #[default]
    Decode,
    /// The atomic columns' payloads left in the stream
    /// ([`VectorData::Deferred`]), to be read back by element range
    /// (binary and XDR streams; ASCII ones decode).
    Defer,
    /// As `Defer`, and the atomic elements of lists nested in those lists
    /// too, to any depth (the columns of a data frame inside a list, the
    /// vectors of a list of lists), so that one element can be read
    /// without decoding its siblings.
    DeferNested,
}

/// A column of a top-level list, handed to the [`Consumer`] on the parsing
/// thread as soon as it has been read.
pub struct Column<'a> {
    /// The column's node; the consumer may take its payload, leaving
    /// [`VectorData::Consumed`] in its place, or the whole object, leaving
    /// [`RObject::Taken`].
    pub object: &'a mut RObject,
    /// The reference table so far.
    pub refs: &'a RefTable,
    /// The stream's header.
    pub header: &'a StreamHeader,
    /// For a column whose payload stayed in the stream, read by
    /// [`crate::read_file_deferred`]: a store that already holds that
    /// payload, so that other threads can work on the column while the
    /// parse goes on.
    pub store: Option<crate::read::spill::PayloadStore>,
}

/// The one way decoded values reach their consumer (the Arrow bridge, the
/// bindings): the reader asks it where the columns' payloads go
/// ([`Consumer::placement`]) and hands it each column as soon as it is
/// read ([`Consumer::column`]), where it may convert the column and
/// release its payload, or start work on a payload left in the stream.
pub trait Consumer: Send + Sync {
    /// Where the payloads of the columns go.
    fn placement(&self) -> Placement {
        Placement::Decode
    }
    /// Whether it takes the columns at all ([`Consumer::column`]); a
    /// consumer that only places payloads does not.
    fn takes_columns(&self) -> bool {
        true
    }
    /// A column, just read.
    fn column(&self, column: Column<'_>) {
        let _ = column;
    }
    /// Memory for the payload of an atomic vector (logical, integer,
    /// double, complex or raw) of R type `sxptype` and `len` elements,
    /// outside attributes, environments and byte code, where the consumer
    /// wants the result to live (an R vector it allocated): the reader
    /// decodes the payload into it, once, and leaves a
    /// [`VectorData::Consumed`] holding the allocation's value. `None`
    /// (the default): the reader allocates.
    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        let _ = (sxptype, len);
        None
    }
    /// Where the strings of a character vector of `len` elements go, in
    /// the same places as [`Consumer::allocate`]'s payloads, from a stream
    /// whose header is `header`: the reader hands the sink each string as
    /// it is read and leaves the [`Consumed`] the sink ends with. `None`
    /// (the default): the reader keeps the strings in the tree.
    fn strings(&self, len: u64, header: &StreamHeader) -> Option<Box<dyn StringSink>> {
        let _ = (len, header);
        None
    }
}

/// The consumer's destination for one character vector's strings (see
/// [`Consumer::strings`]).
pub trait StringSink {
    /// The next string, as written (`None`: `NA`), with its encoding
    /// levels.
    fn push(&mut self, bytes: Option<&[u8]>, levels: u16);
    /// Every string has been pushed: what the tree keeps in place of the
    /// payload.
    fn finish(self: Box<Self>) -> Consumed;
}

/// Memory a [`Consumer`] gives the reader for one vector's payload (see
/// [`Consumer::allocate`]).
pub struct Allocation {
    ptr: std::ptr::NonNull<u8>,
    bytes: usize,
    owner: std::sync::Arc<dyn arrow_buffer::alloc::Allocation>,
    value: std::sync::Arc<dyn std::any::Any + Send + Sync>,
}

impl Allocation {
    /// `bytes` bytes at `ptr`, held by `value` (the consumer's handle,
    /// which the tree keeps: [`crate::tree::Consumed::value`]).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `bytes` bytes, aligned
    /// to 8 bytes, and stay valid, and be neither read nor written by
    /// anyone else, for as long as `value` (or a clone of the tree's
    /// handle on it) lives.
    pub unsafe fn new<T>(ptr: std::ptr::NonNull<u8>, bytes: usize, value: T) -> Self
    where
        T: std::any::Any + Send + Sync + std::panic::RefUnwindSafe,
    {
        let value = std::sync::Arc::new(value);
        Allocation {
            ptr,
            bytes,
            owner: value.clone(),
            value,
        }
    }

    /// The memory, as `n` elements of `T`, if it has room for them and is
    /// aligned for them.
    fn slice<T: Copy>(&mut self, n: usize) -> Option<&mut [T]> {
        let fits = n.checked_mul(std::mem::size_of::<T>()) == Some(self.bytes)
            && (self.ptr.as_ptr() as usize) % std::mem::align_of::<T>() == 0;
        // SAFETY: valid, exclusive and aligned memory of exactly that size
        // (the contract of `new`); T is a plain number type
        fits.then(|| unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr() as *mut T, n) })
    }

    /// The tree's payload of type `t` and `len` elements decoded into
    /// this memory.
    ///
    /// # Safety
    /// The payload was decoded into the whole of the memory.
    unsafe fn into_consumed(self, t: u8, len: u64) -> Consumed {
        Consumed::placed(t, len, self.value, self.ptr, self.bytes, self.owner)
    }
}

/// An atomic payload of type `t` (logical, integer, double, complex,
/// raw) and `len` elements decoded from `inp` into memory `consumer`
/// gives ([`Consumer::allocate`]): once, where the result lives (the
/// parser's payloads, and those a [`crate::read::spill::PayloadStore`] reads
/// back). `None` where it gives none, or memory of another size: the
/// caller decodes as usual.
pub(crate) fn decode_placed(
    inp: &mut Input,
    consumer: &dyn Consumer,
    t: u8,
    len: u64,
) -> Result<Option<VectorData>> {
    if !matches!(t, sxp::LGL | sxp::INT | sxp::REAL | sxp::CPLX | sxp::RAW) {
        return Ok(None);
    }
    let Ok(n) = usize::try_from(len) else {
        return Ok(None);
    };
    let Some(mut mem) = consumer.allocate(t, len) else {
        return Ok(None);
    };
    let decoded = match t {
        sxp::LGL | sxp::INT => mem.slice::<i32>(n).map(|out| inp.read_ints_into(out)),
        sxp::REAL => mem.slice::<f64>(n).map(|out| inp.read_doubles_into(out)),
        sxp::CPLX => n
            .checked_mul(2)
            .and_then(|n2| mem.slice::<f64>(n2))
            .map(|out| inp.read_doubles_into(out)),
        _ => mem.slice::<u8>(n).map(|out| inp.read_raw_into(out)),
    };
    match decoded {
        None => return Ok(None),
        Some(r) => r?,
    }
    // SAFETY: the payload is decoded into the whole memory, which stays
    // valid while its owner lives (`Allocation::new`)
    Ok(Some(VectorData::Consumed(unsafe {
        mem.into_consumed(t, len)
    })))
}

/// A consumer with its columns' payloads placed as `placement` says.
pub struct Placed {
    /// Where the payloads go.
    pub placement: Placement,
    /// Who takes the columns.
    pub inner: std::sync::Arc<dyn Consumer>,
}

impl Consumer for Placed {
    fn placement(&self) -> Placement {
        self.placement
    }
    fn takes_columns(&self) -> bool {
        self.inner.takes_columns()
    }
    fn column(&self, column: Column<'_>) {
        self.inner.column(column)
    }
    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        self.inner.allocate(sxptype, len)
    }
    fn strings(&self, len: u64, header: &StreamHeader) -> Option<Box<dyn StringSink>> {
        self.inner.strings(len, header)
    }
}

/// The consumer that only says where payloads go.
impl Consumer for Placement {
    fn placement(&self) -> Placement {
        *self
    }
    fn takes_columns(&self) -> bool {
        false
    }
}

/// Limits and modes of one read.
#[derive(Clone)]
pub struct ReadOptions {
    /// Maximum nesting depth of the object tree (protects the stack).
    pub max_depth: usize,
    /// The most bytes of vector data one read may decode (`None`: the
    /// machine's physical memory). Protects against decompression bombs
    /// whose declared vectors are backed by real, but absurd, data.
    pub max_memory: Option<u64>,
    /// Who takes the decoded values: where the columns' payloads go and
    /// what happens to each column once read (`None`: decoded into the
    /// tree).
    pub consumer: Option<std::sync::Arc<dyn Consumer>>,
    /// For a URL: how long connecting, the response and each read of the
    /// body may take ([`crate::io::store::DEFAULT_TIMEOUT`] when `None`).
    pub timeout: Option<std::time::Duration>,
    /// For an object store URL (`s3://`, `gs://`, `az://`): its options
    /// (credentials, region, endpoint) beyond the environment's.
    pub storage: crate::io::store::StorageOptions,
    /// Parse on the calling thread, whose stack has room for `max_depth`
    /// levels of nesting ([`STACK_PER_LEVEL`] bytes each), rather than on
    /// a thread of its own with a deep stack (`false`: the safe choice for
    /// any caller and any depth, at the cost of starting a thread).
    pub parse_here: bool,
    /// What the objects handed on may hold ([`crate::checks::trust`]): checked
    /// when a consumer takes them from the document.
    pub trust: crate::checks::trust::Trust,
    /// Recover what is intact from a damaged file ([`salvage`]) instead of
    /// refusing it: the objects, list elements and data frame columns read
    /// whole before the damage, and the data of a stream whose checksum
    /// fails, each with [`crate::Document::damage`] saying what was lost.
    pub salvage: bool,
}

/// The stack one level of nesting may take while parsing: twice what it
/// takes in a release build, just under 2 KB (the test
/// `nesting_fits_its_stack_budget` checks it).
pub const STACK_PER_LEVEL: usize = 4096;

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_depth: 20_000,
            max_memory: None,
            consumer: None,
            timeout: None,
            storage: Default::default(),
            parse_here: false,
            trust: Default::default(),
            salvage: false,
        }
    }
}

impl ReadOptions {
    /// Where the consumer wants the columns' payloads.
    pub fn placement(&self) -> Placement {
        self.consumer
            .as_ref()
            .map_or(Placement::Decode, |c| c.placement())
    }

    /// The memory limit in force, in bytes.
    pub fn memory_limit(&self) -> u64 {
        self.max_memory.unwrap_or_else(physical_memory)
    }
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("max_depth", &self.max_depth)
            .field("max_memory", &self.max_memory)
            .field("placement", &self.placement())
            .field("consumer", &self.consumer.is_some())
            .field("salvage", &self.salvage)
            .finish()
    }
}

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
            let tail = self.item_with_flags(next)?;
            return Ok(RObject::Pairlist(Box::new(Pairlist { cells, tail })));
        }
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
                    if self.lost.is_some() {
                        // salvaged: its attributes, which follow its
                        // elements in the stream, were never read
                        let data = if t == sxp::VEC {
                            VectorData::List(items)
                        } else {
                            VectorData::Expression(items)
                        };
                        // (nor is it an object: its class went with them)
                        let mut flags = fl;
                        flags.object = false;
                        return Ok(RObject::Vector(Box::new(Vector {
                            flags,
                            data,
                            attributes: None,
                        })));
                    }
                    if t == sxp::VEC {
                        VectorData::List(items)
                    } else {
                        VectorData::Expression(items)
                    }
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
                    self.kept.push(salvage::Kept { whole: i, partial: false, len });
                    return Ok(());
                }
            };
            items.push(item);
            if self.lost.is_some() {
                // element i is itself a list the damage cut short
                self.kept.push(salvage::Kept { whole: i, partial: true, len });
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

/// Read the body of a stream after its header.
///
/// For a `save()` file, each top-level object is offered to `filter`:
/// objects it declines are read with their payloads skipped. Returns the
/// root, the reference table and the span of each top-level object.
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

pub(crate) fn read_body(
    inp: &mut Input,
    container: Container,
    header: &StreamHeader,
    opts: &ReadOptions,
    filter: &mut dyn ObjectFilter,
    class_rule: bool,
) -> Result<(RObject, RefTable, Vec<ObjectSpan>, crate::checks::trust::Seen, Option<salvage::Loss>)> {
    let mut p = Parser::new(inp, opts);
    p.class_rule = class_rule;
    p.consumer = opts
        .consumer
        .clone()
        .filter(|c| c.takes_columns())
        .map(|c| (c, header.clone()));
    if p.allocator.is_some() {
        p.header = Some(header.clone());
    }
    let mut spans = Vec::new();
    let start = p.inp.offset();
    let first = p.inp.read_int()?;
    let t = unpack(first).sxptype;
    let root = if matches!(container, Container::RData { .. }) && t == sxp::LIST {
        // the top-level pairlist of a save() file: one cell per object
        let mut cells = Vec::new();
        let mut flags = first;
        // salvaging: the object the damage is in, and whether it kept part
        let mut cut: Option<(String, bool)> = None;
        let tail = loop {
            let NodeWord {
                sxptype: t,
                flags: fl,
                has_attr,
                has_tag,
            } = unpack(flags);
            p.seen.note(t, fl.levels);
            let head = p.opt_attributes(has_attr).and_then(|a| {
                let tag = if has_tag { Some(p.item()?) } else { None };
                Ok((a, tag))
            });
            let (attributes, tag) = match head {
                Ok(h) => h,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            };
            let name: Vec<u8> = match &tag {
                Some(RObject::Ref(id)) => p.refs.symbol_name(*id).unwrap_or(b"").to_vec(),
                _ => Vec::new(),
            };
            let shown = String::from_utf8_lossy(&name).into_owned();
            let decode = filter.decode(&name);
            p.skipping = !decode;
            p.object = Some(shown.clone());
            let obj_start = p.inp.offset();
            let car = match p.item() {
                Ok(car) => car,
                Err(e) => {
                    p.lose(e.in_object(&shown))?;
                    cut = Some((shown, false));
                    break RObject::Null;
                }
            };
            spans.push(ObjectSpan {
                name,
                start: obj_start,
                end: p.inp.offset(),
                decoded: decode,
            });
            p.skipping = false;
            p.object = None;
            cells.push(Cell {
                sxptype: t,
                flags: fl,
                attributes,
                tag,
                car,
            });
            if let Some(e) = p.lost.take() {
                // a list the damage cut short: kept with its whole part
                p.lost = Some(e.in_object(&shown));
                cut = Some((shown, true));
                break RObject::Null;
            }
            let next = match p.inp.read_int() {
                Ok(next) => next,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            };
            if is_pairlist_type(unpack(next).sxptype) {
                flags = next;
                continue;
            }
            match p.item_with_flags(next) {
                Ok(tail) => break tail,
                Err(e) => {
                    p.lose(e)?;
                    break RObject::Null;
                }
            }
        };
        let root = if cells.is_empty() {
            RObject::Null
        } else {
            RObject::Pairlist(Box::new(Pairlist { cells, tail }))
        };
        let loss = p.lost.take().map(|error| salvage::Loss {
            error,
            whole: spans
                .iter()
                .take(spans.len() - usize::from(matches!(cut, Some((_, true)))))
                .map(|s| String::from_utf8_lossy(&s.name).into_owned())
                .collect(),
            cut,
            kept: std::mem::take(&mut p.kept),
        });
        return Ok((root, p.refs, spans, p.seen, loss));
    } else {
        let decode = filter.decode(b"");
        p.skipping = !decode;
        let root = p.item_with_flags(first)?;
        spans.push(ObjectSpan {
            name: Vec::new(),
            start,
            end: p.inp.offset(),
            decoded: decode,
        });
        root
    };
    // an .rds stream's one object: salvaged when it is a list the damage
    // cut short (an object lost whole is the error itself)
    let loss = p.lost.take().map(|error| salvage::Loss {
        error,
        whole: Vec::new(),
        cut: Some((String::new(), true)),
        kept: std::mem::take(&mut p.kept),
    });
    Ok((root, p.refs, spans, p.seen, loss))
}

// Decoding the payloads a store holds, as the parser decodes them (the
// store itself keeps bytes: crate::read::spill).
use crate::read::spill::PayloadStore;

impl PayloadStore {
    /// Elements `[start, start + n)` of a deferred payload, decoded as the
    /// parser decodes them.
    pub fn read(&self, d: &Deferred, start: u64, n: u64) -> Result<VectorData> {
        if n == 0 {
            return Ok(empty_payload(d.sxptype));
        }
        let end = start
            .checked_add(n)
            .filter(|&e| e <= d.len)
            .ok_or_else(|| Error::internal("rows past the end of a column"))?;
        let width = match d.sxptype {
            crate::tree::sxp::LGL | crate::tree::sxp::INT => 4,
            crate::tree::sxp::REAL => 8,
            crate::tree::sxp::CPLX => 16,
            crate::tree::sxp::RAW => 1,
            _ => 0,
        };
        let data = if width > 0 {
            let mut inp = self.input(d.start + start * width, d.start + end * width);
            match d.sxptype {
                crate::tree::sxp::LGL => VectorData::Logical(ScalarBuffer::from(inp.read_ints(n)?)),
                crate::tree::sxp::INT => VectorData::Integer(ScalarBuffer::from(inp.read_ints(n)?)),
                crate::tree::sxp::REAL => {
                    VectorData::Real(ScalarBuffer::from(inp.read_doubles(n)?))
                }
                crate::tree::sxp::CPLX => {
                    VectorData::Complex(ScalarBuffer::from(inp.read_doubles(n * 2)?))
                }
                _ => VectorData::Raw(Buffer::from_vec(inp.read_raw(n)?)),
            }
        } else {
            let k = (start / Deferred::STRIDE) as usize;
            let from = *d
                .marks
                .get(k)
                .ok_or_else(|| Error::internal("a string column lacks its marks"))?;
            let last = end.div_ceil(Deferred::STRIDE) as usize;
            let to = d.marks.get(last).copied().unwrap_or(d.end);
            let mut inp = self.input(from, to);
            VectorData::Character(strings_at(
                &mut inp,
                start - k as u64 * Deferred::STRIDE,
                n,
            )?)
        };
        Ok(data)
    }

    /// A whole atomic payload decoded into the consumer's memory; `None`
    /// where the consumer gives none (or for strings).
    fn read_placed(
        &self,
        d: &Deferred,
        consumer: &dyn crate::read::Consumer,
    ) -> Result<Option<VectorData>> {
        let Some(width) = crate::tree::sxp::atomic_width(d.sxptype) else {
            return Ok(None);
        };
        let mut inp = self.input(d.start, d.start + d.len.saturating_mul(width));
        decode_placed(&mut inp, consumer, d.sxptype, d.len)
    }

    /// Decode the payloads of `obj` left in the stream: its own, and
    /// those of the elements of its lists, to any depth.
    pub fn materialize(&self, obj: &mut crate::tree::RObject) -> Result<()> {
        self.materialize_into(obj, None)
    }

    /// [`Self::materialize`], each atomic payload decoded into memory the
    /// consumer gives where it gives it ([`crate::read::Consumer::allocate`]):
    /// once, into the memory the result lives in.
    pub fn materialize_into(
        &self,
        obj: &mut crate::tree::RObject,
        consumer: Option<&std::sync::Arc<dyn crate::read::Consumer>>,
    ) -> Result<()> {
        use crate::tree::RObject;
        let mut todo: Vec<&mut RObject> = vec![obj];
        while let Some(o) = todo.pop() {
            // the payloads of elements and of attributes (an S4 object's
            // slots)
            let attrs = match o {
                RObject::Vector(v) => {
                    if let VectorData::Deferred(d) = &v.data {
                        let d = d.clone();
                        v.data = match consumer
                            .and_then(|c| self.read_placed(&d, c.as_ref()).transpose())
                        {
                            Some(placed) => placed?,
                            None => self.read(&d, 0, d.len)?,
                        };
                    }
                    if let VectorData::List(items) | VectorData::Expression(items) = &mut v.data {
                        todo.extend(items.iter_mut());
                    }
                    v.attributes.as_mut()
                }
                RObject::S4(s) => s.attributes.as_mut(),
                RObject::Pairlist(p) => {
                    for c in &mut p.cells {
                        todo.push(&mut c.car);
                        if let Some(a) = c.attributes.as_mut() {
                            todo.push(a);
                        }
                    }
                    todo.push(&mut p.tail);
                    None
                }
                RObject::Altrep(a) => Some(&mut a.attributes),
                _ => None,
            };
            if let Some(a) = attrs {
                todo.push(a);
            }
        }
        Ok(())
    }
}

/// An empty payload of R type `t`.
fn empty_payload(t: u8) -> VectorData {
    use crate::tree::{sxp, StringLevels, StringOffsets, StringVector};
    match t {
        sxp::LGL => VectorData::Logical(ScalarBuffer::from(Vec::new())),
        sxp::INT => VectorData::Integer(ScalarBuffer::from(Vec::new())),
        sxp::REAL => VectorData::Real(ScalarBuffer::from(Vec::new())),
        sxp::CPLX => VectorData::Complex(ScalarBuffer::from(Vec::new())),
        sxp::STR => VectorData::Character(StringVector {
            offsets: StringOffsets::Small(arrow_buffer::OffsetBuffer::new_empty()),
            data: Buffer::from_vec(Vec::<u8>::new()),
            validity: None,
            levels: StringLevels::Uniform(0),
        }),
        _ => VectorData::Raw(Buffer::from_vec(Vec::<u8>::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read_bytes, write_document, ErrorKind, ReadOptions};

    /// An XDR version-3 stream header followed by `body` ints.
    fn xdr_stream(body: &[i32]) -> Vec<u8> {
        let mut out = crate::write::Output::new(Vec::new(), crate::Format::Xdr, false);
        crate::wire::header::write_header(
            &mut out,
            Container::Stream,
            &StreamHeader::utf8_v3(crate::Format::Xdr),
        )
        .unwrap();
        let mut v = out.finish().unwrap();
        for i in body {
            v.extend(i.to_be_bytes());
        }
        v
    }

    fn parse(bytes: Vec<u8>) -> crate::Result<crate::Document> {
        read_bytes(bytes, &ReadOptions::default())
    }

    #[test]
    fn integer_vector_with_attribute_round_trips() {
        // c(a = 1L, b = NA) : INTSXP with a names attribute
        let mut body = vec![13 | (1 << 9), 2, 1, i32::MIN];
        body.extend([2 | (1 << 10), 1, 9 | (64 << 12), 5]); // LISTSXP, tag SYMSXP, CHARSXP "names"
        let mut bytes = xdr_stream(&body);
        bytes.extend(b"names");
        for i in [16, 2, 9 | (64 << 12), 1] {
            bytes.extend((i as i32).to_be_bytes());
        }
        bytes.extend(b"a");
        for i in [9 | (64 << 12), 1] {
            bytes.extend((i as i32).to_be_bytes());
        }
        bytes.extend(b"b");
        bytes.extend(254i32.to_be_bytes());
        let doc = parse(bytes.clone()).unwrap();
        match &doc.root {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) => assert_eq!(&x[..], &[1, i32::MIN]),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let names = doc
            .root
            .attribute(&doc.refs, "names")
            .unwrap()
            .as_strings()
            .unwrap();
        assert_eq!(names.get(1), Some(&b"b"[..]));
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), bytes);
    }

    /// Memory a test consumer gives: a heap block it owns.
    struct Block(#[allow(dead_code)] Vec<u64>);

    /// A consumer that gives its own memory for every payload.
    struct Giver;

    impl Consumer for Giver {
        fn takes_columns(&self) -> bool {
            false
        }
        fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
            let bytes = (len * sxp::atomic_width(sxptype)?) as usize;
            let mut block = vec![0u64; bytes.div_ceil(8).max(1)];
            let ptr = std::ptr::NonNull::new(block.as_mut_ptr() as *mut u8).unwrap();
            // SAFETY: the block is moved into the allocation (its heap
            // memory does not move) and has room for `bytes`
            Some(unsafe { Allocation::new(ptr, bytes, Block(block)) })
        }
    }

    #[test]
    fn payloads_are_decoded_into_the_consumers_memory() {
        // list(1:3, structure(c(1.5, 2.5), dim = 2:1), as.raw(c(7, 9)))
        let mut b = xdr_stream(&[19, 3, 13, 3, 1, 2, 3]);
        let int = |b: &mut Vec<u8>, x: i32| b.extend(x.to_be_bytes());
        int(&mut b, 14 | (1 << 9));
        int(&mut b, 2);
        b.extend(1.5f64.to_be_bytes());
        b.extend(2.5f64.to_be_bytes());
        for x in [2 | (1 << 10), 1, 9 | (64 << 12), 3] {
            int(&mut b, x);
        }
        b.extend(b"dim");
        for x in [13, 2, 2, 1, 254, 24, 2] {
            int(&mut b, x);
        }
        b.extend([7u8, 9]);
        let opts = ReadOptions {
            consumer: Some(std::sync::Arc::new(Giver)),
            ..Default::default()
        };
        let doc = read_bytes(b.clone(), &opts).unwrap();
        let RObject::Vector(list) = &doc.root else {
            panic!()
        };
        let VectorData::List(items) = &list.data else {
            panic!()
        };
        let payload = |i: usize| match &items[i] {
            RObject::Vector(v) => match &v.data {
                VectorData::Consumed(c) => {
                    assert!(c.value::<Block>().is_some());
                    c.payload().unwrap()
                }
                other => panic!("not in the consumer's memory: {other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert!(matches!(payload(0), VectorData::Integer(x) if x[..] == [1, 2, 3]));
        assert!(matches!(payload(1), VectorData::Real(x) if x[..] == [1.5, 2.5]));
        assert!(matches!(payload(2), VectorData::Raw(x) if x[..] == [7, 9]));
        // an attribute's vector stays in the tree's own buffers
        let dim = items[1].attribute(&doc.refs, "dim").unwrap();
        assert!(
            matches!(dim, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x[..] == [2, 1]))
        );
        // a clone reads the memory but is not the consumer's
        let copy = items[0].clone();
        assert!(
            matches!(&copy, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x[..] == [1, 2, 3]))
        );
        // and the tree writes back as it was read
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), b);
    }

    #[test]
    fn reference_past_the_table_is_an_error() {
        let err = parse(xdr_stream(&[255 | (99 << 8)])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt);
        assert!(err.to_string().contains("reference index 99"), "{err}");
        assert!(err.offset.is_some());
    }

    #[test]
    fn huge_declared_length_fails_before_allocating() {
        // a long vector of 2^40 doubles with 8 bytes behind it
        let err = parse(xdr_stream(&[14, -1, 256, 0, 0, 0])).unwrap_err();
        assert!(
            matches!(err.kind, ErrorKind::Truncated | ErrorKind::Limit),
            "{err}"
        );
        // within the memory limit, still refused: the bytes are not there
        let err = parse(xdr_stream(&[14, 1 << 24, 0, 0])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Truncated, "{err}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut body = Vec::new();
        for _ in 0..100 {
            body.extend([19, 1]); // list of one element
        }
        body.push(254);
        let err = read_bytes(
            xdr_stream(&body),
            &ReadOptions {
                max_depth: 50,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Limit);
        assert!(parse(xdr_stream(&body)).is_ok());
    }

    #[test]
    fn nesting_fits_its_stack_budget() {
        // list(pairlist(list(pairlist(...)))): lists and pairlists in
        // turn, the reader's two recursions, on a stack of exactly the
        // budget for their depth (debug builds use far more stack)
        if cfg!(debug_assertions) {
            return;
        }
        let depth = 2000;
        let mut body = Vec::new();
        for _ in 0..depth / 2 {
            body.extend([19, 1, 2]); // a list of one pairlist cell, whose car is next
        }
        body.push(254);
        body.extend(std::iter::repeat_n(254, depth / 2)); // the cells' CDRs
        let bytes = xdr_stream(&body);
        let opts = ReadOptions {
            max_depth: depth + 10,
            parse_here: true,
            ..Default::default()
        };
        let r = std::thread::Builder::new()
            .stack_size(depth * STACK_PER_LEVEL + (64 << 10))
            .spawn(move || read_bytes(bytes, &opts).map(|d| d.root))
            .unwrap()
            .join()
            .unwrap();
        // overflowing the stack would have aborted the process
        let mut root = r.unwrap();
        for _ in 0..depth / 2 {
            let RObject::Vector(v) = root else { panic!() };
            let VectorData::List(mut items) = v.data else {
                panic!()
            };
            let RObject::Pairlist(p) = items.pop().unwrap() else {
                panic!()
            };
            root = p.cells.into_iter().next().unwrap().car;
        }
        assert!(matches!(root, RObject::Null));
    }

    #[test]
    fn environment_cycles_resolve_through_the_table() {
        // e <- new.env(); e$self <- e
        let mut bytes = xdr_stream(&[4, 0, 253, 2 | (1 << 10), 1, 9 | (64 << 12), 4]);
        bytes.extend(b"self");
        for i in [255 | (1 << 8), 254, 254, 254] {
            bytes.extend((i as i32).to_be_bytes());
        }
        let doc = parse(bytes.clone()).unwrap();
        match doc.refs.get(RefId(0)) {
            Some(RefEntry::Environment(e)) => {
                assert!(matches!(
                    e.enclosure,
                    RObject::Special(SpecialValue::GlobalEnv)
                ));
                let frame = crate::tree::pairlist_entries(&e.frame, &doc.refs);
                assert_eq!(frame[0].0, Some(&b"self"[..]));
                assert!(matches!(frame[0].1, RObject::Ref(RefId(0))));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), bytes);
    }

    #[test]
    fn not_r_data_is_recognised() {
        assert_eq!(
            parse(b"a,b\n1,2\n".to_vec()).unwrap_err().kind,
            ErrorKind::NotRData
        );
        assert_eq!(
            parse(b"\x89PNG\r\n\x1a\n".to_vec()).unwrap_err().kind,
            ErrorKind::NotRData
        );
        assert_eq!(parse(Vec::new()).unwrap_err().kind, ErrorKind::NotRData);
    }

    #[test]
    fn truncation_is_reported_with_offset() {
        let mut bytes = xdr_stream(&[13, 4, 1, 2]);
        bytes.truncate(bytes.len() - 2);
        let err = parse(bytes).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Truncated);
        assert!(err.offset.is_some());
    }
}
