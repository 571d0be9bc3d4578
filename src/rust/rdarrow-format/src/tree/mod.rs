//! The object tree: everything an R serialization stream holds, as written.
//!
//! Vector payloads live in Arrow-ready buffers (little-endian, contiguous;
//! strings as offsets + bytes + validity) so that the Arrow bridge can wrap
//! them without a copy. Objects that R keeps in its reference table (symbols,
//! environments, external pointers, weak references, package/namespace/
//! persistent references) live in [`RefTable`] and are pointed at by
//! [`RObject::Ref`], so cycles need no reference counting and the writer can
//! reproduce R's reference numbering exactly.

pub mod altrep;
pub mod encoding;
pub mod envir;
pub mod make;
pub mod object_path;

use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};

/// R's SEXPTYPE codes (regular and the serialization pseudo types).
pub mod sxp {
    /// The bytes one element of an atomic vector of type `t` takes in
    /// memory (logical and integer 4, double 8, complex 16, raw 1); `None`
    /// for other types.
    pub fn atomic_width(t: u8) -> Option<u64> {
        match t {
            LGL | INT => Some(4),
            REAL => Some(8),
            CPLX => Some(16),
            RAW => Some(1),
            _ => None,
        }
    }

    /// `NILSXP`.
    pub const NIL: u8 = 0;
    /// `SYMSXP`.
    pub const SYM: u8 = 1;
    /// `LISTSXP`.
    pub const LIST: u8 = 2;
    /// `CLOSXP`.
    pub const CLO: u8 = 3;
    /// `ENVSXP`.
    pub const ENV: u8 = 4;
    /// `PROMSXP`.
    pub const PROM: u8 = 5;
    /// `LANGSXP`.
    pub const LANG: u8 = 6;
    /// `SPECIALSXP`.
    pub const SPECIAL: u8 = 7;
    /// `BUILTINSXP`.
    pub const BUILTIN: u8 = 8;
    /// `CHARSXP`.
    pub const CHAR: u8 = 9;
    /// `LGLSXP`.
    pub const LGL: u8 = 10;
    /// `INTSXP`.
    pub const INT: u8 = 13;
    /// `REALSXP`.
    pub const REAL: u8 = 14;
    /// `CPLXSXP`.
    pub const CPLX: u8 = 15;
    /// `STRSXP`.
    pub const STR: u8 = 16;
    /// `DOTSXP`.
    pub const DOT: u8 = 17;
    /// `VECSXP`.
    pub const VEC: u8 = 19;
    /// `EXPRSXP`.
    pub const EXPR: u8 = 20;
    /// `BCODESXP`.
    pub const BCODE: u8 = 21;
    /// `EXTPTRSXP`.
    pub const EXTPTR: u8 = 22;
    /// `WEAKREFSXP`.
    pub const WEAKREF: u8 = 23;
    /// `RAWSXP`.
    pub const RAW: u8 = 24;
    /// `S4SXP`.
    pub const S4: u8 = 25;

    /// `REFSXP`.
    pub const REFSXP: u8 = 255;
    /// `NILVALUE_SXP`.
    pub const NILVALUE: u8 = 254;
    /// `GLOBALENV_SXP`.
    pub const GLOBALENV: u8 = 253;
    /// `UNBOUNDVALUE_SXP`.
    pub const UNBOUNDVALUE: u8 = 252;
    /// `MISSINGARG_SXP`.
    pub const MISSINGARG: u8 = 251;
    /// `BASENAMESPACE_SXP`.
    pub const BASENAMESPACE: u8 = 250;
    /// `NAMESPACESXP`.
    pub const NAMESPACE: u8 = 249;
    /// `PACKAGESXP`.
    pub const PACKAGE: u8 = 248;
    /// `PERSISTSXP`.
    pub const PERSIST: u8 = 247;
    /// `CLASSREFSXP`.
    pub const CLASSREF: u8 = 246;
    /// `GENERICREFSXP`.
    pub const GENERICREF: u8 = 245;
    /// `BCREPDEF`.
    pub const BCREPDEF: u8 = 244;
    /// `BCREPREF`.
    pub const BCREPREF: u8 = 243;
    /// `EMPTYENV_SXP`.
    pub const EMPTYENV: u8 = 242;
    /// `BASEENV_SXP`.
    pub const BASEENV: u8 = 241;
    /// `ATTRLANGSXP`.
    pub const ATTRLANG: u8 = 240;
    /// `ATTRLISTSXP`.
    pub const ATTRLIST: u8 = 239;
    /// `ALTREP_SXP`.
    pub const ALTREP: u8 = 238;

    /// Every code with the name R's sources give it (`Rinternals.h` for the
    /// types, `serialize.c` for the pseudo types), for tests and listings.
    pub const ALL: [(&str, u8); 41] = [
        ("NILSXP", NIL),
        ("SYMSXP", SYM),
        ("LISTSXP", LIST),
        ("CLOSXP", CLO),
        ("ENVSXP", ENV),
        ("PROMSXP", PROM),
        ("LANGSXP", LANG),
        ("SPECIALSXP", SPECIAL),
        ("BUILTINSXP", BUILTIN),
        ("CHARSXP", CHAR),
        ("LGLSXP", LGL),
        ("INTSXP", INT),
        ("REALSXP", REAL),
        ("CPLXSXP", CPLX),
        ("STRSXP", STR),
        ("DOTSXP", DOT),
        ("VECSXP", VEC),
        ("EXPRSXP", EXPR),
        ("BCODESXP", BCODE),
        ("EXTPTRSXP", EXTPTR),
        ("WEAKREFSXP", WEAKREF),
        ("RAWSXP", RAW),
        ("S4SXP", S4),
        ("REFSXP", REFSXP),
        ("NILVALUE_SXP", NILVALUE),
        ("GLOBALENV_SXP", GLOBALENV),
        ("UNBOUNDVALUE_SXP", UNBOUNDVALUE),
        ("MISSINGARG_SXP", MISSINGARG),
        ("BASENAMESPACE_SXP", BASENAMESPACE),
        ("NAMESPACESXP", NAMESPACE),
        ("PACKAGESXP", PACKAGE),
        ("PERSISTSXP", PERSIST),
        ("CLASSREFSXP", CLASSREF),
        ("GENERICREFSXP", GENERICREF),
        ("BCREPDEF", BCREPDEF),
        ("BCREPREF", BCREPREF),
        ("EMPTYENV_SXP", EMPTYENV),
        ("BASEENV_SXP", BASEENV),
        ("ATTRLANGSXP", ATTRLANG),
        ("ATTRLISTSXP", ATTRLIST),
        ("ALTREP_SXP", ALTREP),
    ];

    /// The R name of a type, as `typeof()` prints it.
    pub fn type_name(t: u8) -> &'static str {
        match t {
            NIL => "NULL",
            SYM => "symbol",
            LIST => "pairlist",
            CLO => "closure",
            ENV => "environment",
            PROM => "promise",
            LANG => "language",
            SPECIAL => "special",
            BUILTIN => "builtin",
            CHAR => "char",
            LGL => "logical",
            INT => "integer",
            REAL => "double",
            CPLX => "complex",
            STR => "character",
            DOT => "...",
            VEC => "list",
            EXPR => "expression",
            BCODE => "bytecode",
            EXTPTR => "externalptr",
            WEAKREF => "weakref",
            RAW => "raw",
            S4 => "S4",
            _ => "unknown",
        }
    }
}

/// The symbol R stores in an S4 object's slot whose value is `NULL`
/// (attributes cannot hold `NULL`; `methods:::.pseudoNULL`).
pub const S4_NULL: &[u8] = b"\x01NULL\x01";

/// R's missing-value patterns, named once.
pub mod na {
    /// `NA_integer_` and `NA` (logical): the smallest 32-bit integer.
    pub const INTEGER: i32 = i32::MIN;
    /// The bit pattern of `NA_real_` (a NaN whose low word is 1954).
    pub const REAL_BITS: u64 = 0x7FF0_0000_0000_07A2;
    /// The bit pattern R uses for `NaN` (`R_NaN`, the default quiet NaN).
    pub const NAN_BITS: u64 = 0x7FF8_0000_0000_0000;

    /// `NA_real_` as a value.
    #[inline]
    pub fn real() -> f64 {
        f64::from_bits(REAL_BITS)
    }

    /// `NA_integer64_` of the bit64 package: the smallest 64-bit integer.
    pub const INTEGER64: i64 = i64::MIN;

    /// An integer64 value as bit64 holds it (the int64's 8 bytes in a
    /// double); `None` is `NA`.
    #[inline]
    pub fn integer64(x: Option<i64>) -> f64 {
        f64::from_bits(x.unwrap_or(INTEGER64) as u64)
    }

    /// R integers as integer64 values, `NA` kept.
    pub fn integer64_of_ints(x: &[i32]) -> Vec<f64> {
        x.iter()
            .map(|&i| integer64((i != INTEGER).then_some(i as i64)))
            .collect()
    }

    /// Whether `x` is `NA_real_` rather than another NaN, as R's
    /// `R_IsNA` tells them apart (by the low word only: arithmetic may
    /// set the quiet bit).
    #[inline]
    pub fn is_na_real(x: f64) -> bool {
        x.is_nan() && (x.to_bits() & 0xffff_ffff) == (REAL_BITS & 0xffff_ffff)
    }
}

/// CHARSXP encoding levels as written in the flags.
pub mod levels {
    /// Bytes, no encoding.
    pub const BYTES: u16 = 2;
    /// Latin-1.
    pub const LATIN1: u16 = 4;
    /// UTF-8.
    pub const UTF8: u16 = 8;
    /// ASCII (every byte below 128).
    pub const ASCII: u16 = 64;
    /// CHARSXP bits of R's string cache (`CACHED_MASK`, `HASHASH_MASK`),
    /// which R's serializer masks out: never written.
    pub const UNWRITTEN_CHARSXP_BITS: u16 = (1 << 5) | 1;
    /// The S4 object bit in the gp field of any object.
    pub const S4_OBJECT: u16 = 16;
    /// Binding cell flags on environment frames.
    pub const ACTIVE_BINDING: u16 = 1 << 15;
    /// A locked binding.
    pub const LOCKED_BINDING: u16 = 1 << 14;
}

/// The part of a node's flags that is data: gp levels and the object bit.
/// (Attribute and tag bits are derived from the node itself.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// The node's 16 general-purpose bits (`gp`, R's levels).
    pub levels: u16,
    /// The object bit (set when the node has a class).
    pub object: bool,
}

/// The flags word R writes before every node (`PackFlags` in R's
/// `serialize.c`): the type in the low byte, then the object bit, the
/// has-attributes and has-tag bits, and the node's 16 general-purpose
/// bits (its levels) from bit 12. A reference (`REFSXP`) packs its index
/// into the bits above the type instead.
pub mod word {
    /// The type, in the low byte.
    pub const TYPE_MASK: u32 = 0xff;
    /// The object bit.
    pub const IS_OBJECT: u32 = 1 << 8;
    /// Attributes follow.
    pub const HAS_ATTR: u32 = 1 << 9;
    /// A tag follows.
    pub const HAS_TAG: u32 = 1 << 10;
    /// Where the levels start.
    pub const LEVELS_SHIFT: u32 = 12;
    /// Where a reference's index starts.
    pub const REF_INDEX_SHIFT: u32 = 8;
    /// The largest reference index packed into the word; larger ones
    /// follow it as an integer of their own.
    pub const MAX_PACKED_REF: u32 = (i32::MAX >> REF_INDEX_SHIFT) as u32;
}

/// A node's flags word, unpacked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeWord {
    /// The node's type (an [`sxp`] code).
    pub sxptype: u8,
    /// Its levels and object bit.
    pub flags: Flags,
    /// Whether an attribute pairlist follows.
    pub has_attr: bool,
    /// Whether a tag follows.
    pub has_tag: bool,
}

/// The flags word R writes before a node: its type, levels (the node's
/// general-purpose bits), object bit, and whether attributes and a tag follow.
#[inline]
pub fn pack(t: u8, fl: Flags, has_attr: bool, has_tag: bool) -> i32 {
    let mut v = t as u32 | ((fl.levels as u32) << word::LEVELS_SHIFT);
    if fl.object {
        v |= word::IS_OBJECT;
    }
    if has_attr {
        v |= word::HAS_ATTR;
    }
    if has_tag {
        v |= word::HAS_TAG;
    }
    v as i32
}

/// The parts of a flags word (the inverse of [`pack`]).
#[inline]
pub fn unpack(w: i32) -> NodeWord {
    let f = w as u32;
    NodeWord {
        sxptype: (f & word::TYPE_MASK) as u8,
        flags: Flags {
            levels: (f >> word::LEVELS_SHIFT) as u16,
            object: f & word::IS_OBJECT != 0,
        },
        has_attr: f & word::HAS_ATTR != 0,
        has_tag: f & word::HAS_TAG != 0,
    }
}

/// A reference to the `index`-th (from 1) object of the reference table,
/// as R packs it: `Some(word)` when the index fits in the word, `None`
/// when R writes a bare `REFSXP` word followed by the index.
#[inline]
pub fn pack_reference(index: u32) -> Option<i32> {
    (index <= word::MAX_PACKED_REF)
        .then(|| ((index << word::REF_INDEX_SHIFT) | sxp::REFSXP as u32) as i32)
}

/// The index packed into a `REFSXP` word (0: the index follows).
#[inline]
pub fn unpack_reference(w: i32) -> u32 {
    (w as u32) >> word::REF_INDEX_SHIFT
}

/// Index into the [`RefTable`] (0-based; R's reference numbers are 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RefId(pub u32);

/// One node of the tree.
#[derive(Debug, Clone)]
pub enum RObject {
    /// `NULL` (NILVALUE_SXP).
    Null,
    /// A well-known environment or marker written as a pseudo type.
    Special(SpecialValue),
    /// A symbol, environment, external pointer, weak reference or
    /// package/namespace/persistent reference; the object is in the ref table.
    Ref(RefId),
    /// A chain of pairlist-like cells (pairlist, call, closure, promise, `...`).
    Pairlist(Box<Pairlist>),
    /// An atomic vector, character vector, list or expression vector.
    Vector(Box<Vector>),
    /// A CHARSXP outside a character vector.
    Char(Box<CharItem>),
    /// A builtin or special primitive, written by name.
    Primitive(Box<Primitive>),
    /// An S4 object without a data part (S4SXP).
    S4(Box<AttrOnly>),
    /// Byte-compiled code.
    Bytecode(Box<BytecodeObject>),
    /// An ALTREP object, kept as written; see [`crate::tree::altrep`].
    Altrep(Box<Altrep>),
    /// An object a consumer took whole while the file was read (see
    /// [`crate::read::Consumer::column`]): its handle on what it made.
    Taken(Taken),
}

/// A consumer's handle on an object it made itself while the file was
/// read (an R object, for the R binding), standing in the tree where the
/// object was. Opaque to the format: nothing below the consumer reads or
/// writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken(pub u64);

/// Objects R writes as a pseudo type code with no payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialValue {
    /// `.GlobalEnv`.
    GlobalEnv,
    /// `baseenv()`.
    BaseEnv,
    /// `emptyenv()`.
    EmptyEnv,
    /// The base namespace.
    BaseNamespace,
    /// The unbound value (`R_UnboundValue`).
    UnboundValue,
    /// The missing argument (`R_MissingArg`).
    MissingArg,
}

impl SpecialValue {
    /// Every special value.
    pub const ALL: [SpecialValue; 6] = [
        SpecialValue::GlobalEnv,
        SpecialValue::BaseEnv,
        SpecialValue::EmptyEnv,
        SpecialValue::BaseNamespace,
        SpecialValue::UnboundValue,
        SpecialValue::MissingArg,
    ];

    /// The pseudo type code R writes for this value.
    pub fn code(self) -> u8 {
        match self {
            SpecialValue::GlobalEnv => sxp::GLOBALENV,
            SpecialValue::BaseEnv => sxp::BASEENV,
            SpecialValue::EmptyEnv => sxp::EMPTYENV,
            SpecialValue::BaseNamespace => sxp::BASENAMESPACE,
            SpecialValue::UnboundValue => sxp::UNBOUNDVALUE,
            SpecialValue::MissingArg => sxp::MISSINGARG,
        }
    }
    /// The value a pseudo type code stands for.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }
}

/// Pairlist-like cells linked by their CDR, flattened so that long lists
/// need no recursion. `tail` is the CDR of the last cell (usually `Null`).
#[derive(Debug, Clone)]
pub struct Pairlist {
    /// The cells, in order.
    pub cells: Vec<Cell>,
    /// What ends the chain (`NULL` for a proper pairlist).
    pub tail: RObject,
}

/// One pairlist-like cell. For a closure, `tag` is the environment, `car`
/// the formals and the CDR the body; for a promise, `tag` the environment,
/// `car` the value and the CDR the code.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The cell's type: a pairlist, call, closure, promise or `...` cell.
    pub sxptype: u8,
    /// The cell's flags.
    pub flags: Flags,
    /// The cell's attribute pairlist, if any.
    pub attributes: Option<RObject>,
    /// The cell's tag (a symbol, or a closure's environment), if any.
    pub tag: Option<RObject>,
    /// The cell's value.
    pub car: RObject,
}

/// A vector node.
#[derive(Debug, Clone)]
pub struct Vector {
    /// The vector's flags.
    pub flags: Flags,
    /// The payload.
    pub data: VectorData,
    /// The attribute pairlist, if any.
    pub attributes: Option<RObject>,
}

/// Vector payloads, in Arrow-ready buffers.
#[derive(Debug)]
pub enum VectorData {
    /// R logicals as 32-bit ints (NA = i32::MIN).
    Logical(ScalarBuffer<i32>),
    /// NA = i32::MIN.
    Integer(ScalarBuffer<i32>),
    /// NA is the NaN with payload 1954; compare bits, not values.
    Real(ScalarBuffer<f64>),
    /// Interleaved (re, im) pairs; length is half the buffer.
    Complex(ScalarBuffer<f64>),
    /// Bytes.
    Raw(Buffer),
    /// Strings, as written.
    Character(StringVector),
    /// A generic vector's elements.
    List(Vec<RObject>),
    /// An expression vector's elements.
    Expression(Vec<RObject>),
    /// The payload was skipped (listing only): its type and length.
    Skipped {
        /// The vector's type.
        sxptype: u8,
        /// Its length.
        len: u64,
    },
    /// The payload was left in the stream, to be read by element range
    /// later (see [`crate::read::spill`]).
    Deferred(Deferred),
    /// The payload went to a consumer while the file was read (a
    /// [`crate::read::Consumer`]), which left its own result here.
    Consumed(Consumed),
}

impl VectorData {
    /// The values of a `rows` x `cols` matrix (stored column by column, as
    /// R stores it) stored row by row instead, which is the transpose
    /// stored column by column: applied to a row-by-row matrix with
    /// `rows` and `cols` swapped it gives R's order back. `None` when the
    /// length is not `rows * cols` or the payload is not at hand.
    pub fn transposed(&self, rows: usize, cols: usize) -> Option<VectorData> {
        if rows.checked_mul(cols)? != self.len() as usize {
            return None;
        }
        let order = move || (0..rows).flat_map(move |i| (0..cols).map(move |j| j * rows + i));
        Some(match self {
            VectorData::Logical(x) => VectorData::Logical(order().map(|k| x[k]).collect()),
            VectorData::Integer(x) => VectorData::Integer(order().map(|k| x[k]).collect()),
            VectorData::Real(x) => VectorData::Real(order().map(|k| x[k]).collect()),
            VectorData::Complex(x) => {
                VectorData::Complex(order().flat_map(|k| [x[2 * k], x[2 * k + 1]]).collect())
            }
            VectorData::Raw(x) => {
                VectorData::Raw(Buffer::from_vec(order().map(|k| x[k]).collect::<Vec<u8>>()))
            }
            VectorData::Character(s) => {
                let mut b = StringVectorBuilder::new(s.len());
                for k in order() {
                    b.data().extend_from_slice(s.bytes(k));
                    b.end(s.is_na(k), s.levels(k));
                }
                VectorData::Character(b.finish())
            }
            VectorData::List(items) => {
                VectorData::List(order().map(|k| items[k].clone()).collect())
            }
            VectorData::Expression(items) => {
                VectorData::Expression(order().map(|k| items[k].clone()).collect())
            }
            _ => return None,
        })
    }
}

/// A clone of a payload decoded into a consumer's memory
/// ([`Consumed::payload`]) reads that memory, but is not the consumer's
/// value: one vector has one owner (an R vector is not put in two places).
impl Clone for VectorData {
    fn clone(&self) -> Self {
        match self {
            VectorData::Logical(x) => VectorData::Logical(x.clone()),
            VectorData::Integer(x) => VectorData::Integer(x.clone()),
            VectorData::Real(x) => VectorData::Real(x.clone()),
            VectorData::Complex(x) => VectorData::Complex(x.clone()),
            VectorData::Raw(x) => VectorData::Raw(x.clone()),
            VectorData::Character(x) => VectorData::Character(x.clone()),
            VectorData::List(x) => VectorData::List(x.clone()),
            VectorData::Expression(x) => VectorData::Expression(x.clone()),
            VectorData::Skipped { sxptype, len } => VectorData::Skipped {
                sxptype: *sxptype,
                len: *len,
            },
            VectorData::Deferred(d) => VectorData::Deferred(d.clone()),
            VectorData::Consumed(c) => match c.payload() {
                Some(payload) => payload,
                None => VectorData::Consumed(c.clone()),
            },
        }
    }
}

/// What a consumer made of a vector's payload while the file was read
/// (the Arrow bridge: the column's array), in place of the payload, with
/// the R type and length it stood for. The format knows nothing of the
/// value; its consumer takes it back with [`Consumed::value`].
///
/// A payload decoded into memory the consumer gave the reader (an R
/// vector; see [`crate::read::Allocation`]) is a `Consumed` too: its value
/// is the consumer's handle on that memory, and [`Consumed::payload`] reads
/// the payload where it lies (for the writer, when such an object is
/// written back).
#[derive(Clone)]
pub struct Consumed {
    /// The R type the payload had.
    pub sxptype: u8,
    /// Its length.
    pub len: u64,
    value: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    payload: Payload,
}

/// How a [`Consumed`] payload is read back, where it can be.
#[derive(Clone)]
enum Payload {
    /// The consumer made something else of it.
    Gone,
    /// Decoded into the consumer's memory, at this address (held by
    /// `owner`).
    Memory {
        ptr: std::ptr::NonNull<u8>,
        bytes: usize,
        owner: std::sync::Arc<dyn arrow_buffer::alloc::Allocation>,
    },
    /// Copied back out of the consumer's own form by this function.
    ReadBack(std::sync::Arc<dyn Fn() -> VectorData + Send + Sync>),
}

// SAFETY: `Memory` points into memory its `owner` keeps valid, written
// once while the file was read and only read since (the contract of
// `read::Allocation::new`)
unsafe impl Send for Payload {}
unsafe impl Sync for Payload {}

impl Consumed {
    /// The payload of R type `sxptype` and length `len` became `value`.
    pub fn new<T: std::any::Any + Send + Sync>(sxptype: u8, len: u64, value: T) -> Self {
        Consumed {
            sxptype,
            len,
            value: std::sync::Arc::new(value),
            payload: Payload::Gone,
        }
    }

    /// The payload of R type `sxptype` and length `len` became `value`, in
    /// a form of the consumer's from which `read_back` copies it out again
    /// (for the writer, when such an object is written back). `read_back`
    /// runs wherever the tree is written or cloned; the consumer says
    /// where that may be.
    pub fn read_back<T: std::any::Any + Send + Sync>(
        sxptype: u8,
        len: u64,
        value: T,
        read_back: impl Fn() -> VectorData + Send + Sync + 'static,
    ) -> Self {
        Consumed {
            sxptype,
            len,
            value: std::sync::Arc::new(value),
            payload: Payload::ReadBack(std::sync::Arc::new(read_back)),
        }
    }

    /// A payload of R type `sxptype` and length `len` decoded into the
    /// consumer's memory: `bytes` bytes at `ptr`, kept valid by `owner`;
    /// `value` is the consumer's handle on it.
    ///
    /// # Safety
    /// The memory holds the decoded payload and stays valid, and unwritten,
    /// while `owner` lives.
    pub(crate) unsafe fn placed(
        sxptype: u8,
        len: u64,
        value: std::sync::Arc<dyn std::any::Any + Send + Sync>,
        ptr: std::ptr::NonNull<u8>,
        bytes: usize,
        owner: std::sync::Arc<dyn arrow_buffer::alloc::Allocation>,
    ) -> Self {
        Consumed {
            sxptype,
            len,
            value,
            payload: Payload::Memory { ptr, bytes, owner },
        }
    }

    /// The consumer's value, if it is a `T`.
    pub fn value<T: std::any::Any>(&self) -> Option<&T> {
        self.value.downcast_ref()
    }

    /// The payload itself, where the consumer kept it readable: a view of
    /// its memory (no copy), or a copy out of its own form; `None` where
    /// the consumer made something else of it.
    pub fn payload(&self) -> Option<VectorData> {
        match &self.payload {
            Payload::Gone => None,
            Payload::ReadBack(f) => Some(f()),
            Payload::Memory { ptr, bytes, owner } => {
                // SAFETY: valid while `owner` lives (`placed`)
                let buffer = unsafe { Buffer::from_custom_allocation(*ptr, *bytes, owner.clone()) };
                let n = self.len as usize;
                Some(match self.sxptype {
                    sxp::LGL => VectorData::Logical(ScalarBuffer::new(buffer, 0, n)),
                    sxp::INT => VectorData::Integer(ScalarBuffer::new(buffer, 0, n)),
                    sxp::REAL => VectorData::Real(ScalarBuffer::new(buffer, 0, n)),
                    sxp::CPLX => VectorData::Complex(ScalarBuffer::new(buffer, 0, 2 * n)),
                    _ => VectorData::Raw(buffer),
                })
            }
        }
    }
}

impl std::fmt::Debug for Consumed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumed")
            .field("sxptype", &self.sxptype)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// A vector payload left in the decompressed stream: where its elements
/// start and end and, for strings (whose elements vary in size), where
/// every [`Deferred::STRIDE`]th element starts.
#[derive(Debug, Clone)]
pub struct Deferred {
    /// The vector's type.
    pub sxptype: u8,
    /// Its length.
    pub len: u64,
    /// Stream offsets of the first element and of the byte after the last.
    pub start: u64,
    /// See `start`.
    pub end: u64,
    /// Strings: the offset of element `k * STRIDE` at `marks[k]`.
    pub marks: std::sync::Arc<[u64]>,
    /// Strings: every one is plain text (ASCII, or valid UTF-8 flagged
    /// neither as bytes nor as Latin-1), as the reader saw while skipping
    /// them; false when it could not tell.
    pub plain_text: bool,
}

impl Deferred {
    /// Elements between two string marks.
    pub const STRIDE: u64 = 4096;
}

impl VectorData {
    /// The R type of the payload.
    pub fn sxptype(&self) -> u8 {
        match self {
            VectorData::Logical(_) => sxp::LGL,
            VectorData::Integer(_) => sxp::INT,
            VectorData::Real(_) => sxp::REAL,
            VectorData::Complex(_) => sxp::CPLX,
            VectorData::Raw(_) => sxp::RAW,
            VectorData::Character(_) => sxp::STR,
            VectorData::List(_) => sxp::VEC,
            VectorData::Expression(_) => sxp::EXPR,
            VectorData::Skipped { sxptype, .. } => *sxptype,
            VectorData::Deferred(d) => d.sxptype,
            VectorData::Consumed(c) => c.sxptype,
        }
    }
    /// The R length of the payload.
    pub fn len(&self) -> u64 {
        match self {
            VectorData::Logical(v) | VectorData::Integer(v) => v.len() as u64,
            VectorData::Real(v) => v.len() as u64,
            VectorData::Complex(v) => v.len() as u64 / 2,
            VectorData::Raw(v) => v.len() as u64,
            VectorData::Character(v) => v.len() as u64,
            VectorData::List(v) | VectorData::Expression(v) => v.len() as u64,
            VectorData::Skipped { len, .. } => *len,
            VectorData::Deferred(d) => d.len,
            VectorData::Consumed(c) => c.len,
        }
    }
    /// Whether the payload has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// String offsets: 32-bit while the bytes fit, 64-bit beyond 2 GiB.
#[derive(Debug, Clone)]
pub enum StringOffsets {
    /// 32-bit offsets.
    Small(OffsetBuffer<i32>),
    /// 64-bit offsets.
    Large(OffsetBuffer<i64>),
}

/// How the strings of a character vector are encoded, from the CHARSXP levels.
#[derive(Debug, Clone)]
pub enum StringLevels {
    /// Every element has these levels.
    Uniform(u16),
    /// One entry per element (shared, so a copy of the vector is cheap).
    PerElement(ScalarBuffer<u16>),
}

/// A character vector: the bytes of each string exactly as written (not
/// transcoded, so that re-serialization is exact), offsets, a validity map
/// (`None` = no NA) and the encoding levels of each element.
#[derive(Debug, Clone)]
pub struct StringVector {
    /// Where each string starts and ends in `data`.
    pub offsets: StringOffsets,
    /// The strings' bytes, one after another.
    pub data: Buffer,
    /// Which strings are not `NA` (`None`: all).
    pub validity: Option<NullBuffer>,
    /// The encoding levels of the strings.
    pub levels: StringLevels,
}

impl StringVector {
    /// The number of strings.
    pub fn len(&self) -> usize {
        match &self.offsets {
            StringOffsets::Small(o) => o.len() - 1,
            StringOffsets::Large(o) => o.len() - 1,
        }
    }
    /// Whether there are no strings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Whether string `i` is `NA`.
    pub fn is_na(&self, i: usize) -> bool {
        self.validity.as_ref().is_some_and(|v| v.is_null(i))
    }
    /// The bytes of element `i` (empty for NA).
    pub fn bytes(&self, i: usize) -> &[u8] {
        let (a, b) = match &self.offsets {
            StringOffsets::Small(o) => (o[i] as usize, o[i + 1] as usize),
            StringOffsets::Large(o) => (o[i] as usize, o[i + 1] as usize),
        };
        &self.data[a..b]
    }
    /// The bytes of string `i` (`None` for `NA`, and past the end).
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len() || self.is_na(i) {
            None
        } else {
            Some(self.bytes(i))
        }
    }
    /// The encoding levels of string `i`.
    pub fn levels(&self, i: usize) -> u16 {
        match &self.levels {
            StringLevels::Uniform(l) => *l,
            StringLevels::PerElement(v) => v[i],
        }
    }
}

/// Builds a [`StringVector`] one string at a time: each string's bytes
/// are appended to [`StringVectorBuilder::data`], then
/// [`StringVectorBuilder::end`] closes it.
pub struct StringVectorBuilder {
    n: usize,
    offsets: Vec<i32>,
    large: Option<Vec<i64>>,
    data: Vec<u8>,
    validity: Option<arrow_buffer::BooleanBufferBuilder>,
    first_levels: Option<u16>,
    per_element: Option<Vec<u16>>,
}

impl StringVectorBuilder {
    /// For `n` strings, as the file declares (memory is reserved as they
    /// arrive, not up front).
    pub fn new(n: usize) -> Self {
        let mut offsets = Vec::with_capacity(n.min(1 << 16) + 1);
        offsets.push(0);
        StringVectorBuilder {
            n,
            offsets,
            large: None,
            data: Vec::new(),
            validity: None,
            first_levels: None,
            per_element: None,
        }
    }

    /// The strings so far: append the next one's bytes here.
    pub fn data(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// How many strings have ended.
    fn count(&self) -> usize {
        match &self.large {
            Some(l) => l.len() - 1,
            None => self.offsets.len() - 1,
        }
    }

    /// End the next string (`na`: it is `NA`, with no bytes), of encoding
    /// levels `levels`.
    pub fn end(&mut self, na: bool, levels: u16) {
        let i = self.count();
        let n = self.n;
        let grow = move |i: usize| n.min(i.max(1 << 16));
        if i == self.offsets.capacity() - 1 && self.large.is_none() {
            // no further than the declared length
            self.offsets.reserve_exact(n.saturating_sub(i).min(grow(i)));
        }
        match self.first_levels {
            None => self.first_levels = Some(levels),
            Some(l) if l != levels && self.per_element.is_none() => {
                // grown as elements arrive: `n` is only what the file declares
                let mut v = Vec::with_capacity(grow(i));
                v.resize(i, l);
                self.per_element = Some(v);
            }
            _ => {}
        }
        if let Some(v) = self.per_element.as_mut() {
            v.push(levels);
        }
        if na {
            let b = self.validity.get_or_insert_with(|| {
                let mut b = arrow_buffer::BooleanBufferBuilder::new(grow(i));
                b.append_n(i, true);
                b
            });
            b.append(false);
        } else if let Some(b) = self.validity.as_mut() {
            b.append(true);
        }
        let end = self.data.len();
        match self.large.as_mut() {
            Some(l) => l.push(end as i64),
            None if end <= i32::MAX as usize => self.offsets.push(end as i32),
            None => {
                let mut l: Vec<i64> = self.offsets.iter().map(|&o| o as i64).collect();
                l.push(end as i64);
                self.offsets = Vec::new();
                self.large = Some(l);
            }
        }
    }

    /// Append a whole string (`None`: `NA`).
    pub fn push(&mut self, bytes: Option<&[u8]>, levels: u16) {
        if let Some(b) = bytes {
            self.data.extend_from_slice(b);
        }
        self.end(bytes.is_none(), levels)
    }

    /// The vector.
    pub fn finish(self) -> StringVector {
        let data = Buffer::from_vec(self.data);
        let offsets = match self.large {
            // SAFETY: offsets start at 0 and never decrease; they end at data.len().
            Some(l) => {
                StringOffsets::Large(unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(l)) })
            }
            None => StringOffsets::Small(unsafe {
                OffsetBuffer::new_unchecked(ScalarBuffer::from(self.offsets))
            }),
        };
        let levels = match self.per_element {
            Some(v) => StringLevels::PerElement(v.into()),
            None => StringLevels::Uniform(self.first_levels.unwrap_or(0)),
        };
        let validity = self.validity.map(|mut b| NullBuffer::new(b.finish()));
        StringVector {
            offsets,
            data,
            validity,
            levels,
        }
    }
}

/// A CHARSXP: bytes as written (None = `NA_character_`) and its levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharItem {
    /// The CHARSXP's levels (its encoding bits).
    pub levels: u16,
    /// Its bytes (`None` for `NA_character_`).
    pub bytes: Option<Vec<u8>>,
}

/// A builtin or special function, written by its name.
#[derive(Debug, Clone)]
pub struct Primitive {
    /// `sxp::BUILTIN` or `sxp::SPECIAL`.
    pub sxptype: u8,
    /// The node's flags.
    pub flags: Flags,
    /// The function's name, as `.Primitive()` takes it.
    pub name: Vec<u8>,
    /// The attribute pairlist, if any.
    pub attributes: Option<RObject>,
}

/// A node whose only content is its attributes (S4SXP).
#[derive(Debug, Clone)]
pub struct AttrOnly {
    /// The node's flags.
    pub flags: Flags,
    /// The attribute pairlist, if any.
    pub attributes: Option<RObject>,
}

/// An ALTREP node: class info (pairlist of class symbol, package symbol,
/// base type), the class's serialized state, and the attributes.
#[derive(Debug, Clone)]
pub struct Altrep {
    /// The node's flags.
    pub flags: Flags,
    /// The class info: class symbol, package symbol, base type.
    pub info: RObject,
    /// The class's serialized state.
    pub state: RObject,
    /// The attributes (`NULL` when none).
    pub attributes: RObject,
}

/// A BCODESXP item: its flags, the size of the repeated-cell table that
/// R writes before the code, the code, and the attributes.
#[derive(Debug, Clone)]
pub struct BytecodeObject {
    /// The node's flags.
    pub flags: Flags,
    /// The size of the repeated-cell table.
    pub reps_len: i32,
    /// The code and its constants.
    pub code: Bytecode,
    /// The attribute pairlist, if any.
    pub attributes: Option<RObject>,
}

/// Byte code: the code vector and its constant pool.
#[derive(Debug, Clone)]
pub struct Bytecode {
    /// The integer code vector (first element is the byte-code version).
    pub code: RObject,
    /// The constant pool.
    pub consts: Vec<BcConst>,
}

/// A constant of a byte-code constant pool.
#[derive(Debug, Clone)]
pub enum BcConst {
    /// Nested byte code.
    Code(Bytecode),
    /// A language object or pairlist, written with sharing markers.
    Lang(BcLang),
    /// Any other constant: the type code R wrote before it, then the item.
    Item {
        /// The type code.
        type_code: i32,
        /// The item.
        value: RObject,
    },
}

/// A language/pairlist cell inside byte-code constants.
#[derive(Debug, Clone)]
pub enum BcLang {
    /// BCREPREF: a cell defined earlier with BCREPDEF.
    Ref(i32),
    /// A cell, written in full.
    Cell(Box<BcCell>),
    /// A non-cell item preceded by its type word (R writes 0).
    Item {
        /// The type word (0).
        pad: i32,
        /// The item.
        value: RObject,
    },
}

/// A language or pairlist cell of byte-code constants.
#[derive(Debug, Clone)]
pub struct BcCell {
    /// Set when the cell is written as BCREPDEF (it is referenced again).
    pub def: Option<i32>,
    /// LANGSXP, LISTSXP, ATTRLANGSXP or ATTRLISTSXP as written.
    pub type_code: i32,
    /// The cell's attribute pairlist, if any.
    pub attributes: Option<RObject>,
    /// The cell's tag (`NULL` when none).
    pub tag: RObject,
    /// The cell's value.
    pub car: BcLang,
    /// The rest of the chain.
    pub cdr: BcLang,
}

/// The objects of the reference table.
#[derive(Debug, Clone)]
pub enum RefEntry {
    /// A symbol and its print name.
    Symbol(CharItem),
    /// An environment.
    Environment(Box<Environment>),
    /// PACKAGESXP: the package environment's name, e.g. `"package:stats"`.
    Package(Vec<CharItem>),
    /// NAMESPACESXP: `c(name, version)`.
    Namespace(Vec<CharItem>),
    /// PERSISTSXP: the strings a persistence hook wrote.
    Persistent(Vec<CharItem>),
    /// An external pointer (the address itself is never written).
    ExternalPointer(Box<ExternalPointer>),
    /// A weak reference (its key, value and finalizer in the attributes' place).
    WeakRef(Box<AttrOnly>),
    /// An environment whose contents are still being read (only during parsing).
    Pending,
}

/// An environment as written: its enclosure, frame, hash table and attributes.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Whether it is locked.
    pub locked: bool,
    /// The enclosing environment.
    pub enclosure: RObject,
    /// The frame: a tagged pairlist of bindings (unhashed environments).
    pub frame: RObject,
    /// The hash table: a list of tagged pairlists (hashed environments).
    pub hashtab: RObject,
    /// The attributes (`NULL` when none).
    pub attributes: RObject,
}

/// An external pointer: its protected value, tag and attributes.
#[derive(Debug, Clone)]
pub struct ExternalPointer {
    /// The node's flags.
    pub flags: Flags,
    /// The protected value.
    pub protected: RObject,
    /// The tag.
    pub tag: RObject,
    /// The attribute pairlist, if any.
    pub attributes: Option<RObject>,
}

/// The reference table of one stream.
#[derive(Debug, Clone, Default)]
pub struct RefTable {
    /// The entries, in the order R numbered them (from 1 in the stream).
    pub entries: Vec<RefEntry>,
}

impl RefTable {
    /// The entry `id` points at.
    pub fn get(&self, id: RefId) -> Option<&RefEntry> {
        self.entries.get(id.0 as usize)
    }
    /// The print name of a symbol reference.
    pub fn symbol_name(&self, id: RefId) -> Option<&[u8]> {
        match self.get(id)? {
            RefEntry::Symbol(c) => c.bytes.as_deref(),
            _ => None,
        }
    }
    /// Add an entry; its id.
    pub fn push(&mut self, e: RefEntry) -> RefId {
        self.entries.push(e);
        RefId((self.entries.len() - 1) as u32)
    }
}

impl RObject {

    /// Whether this object, with what it references (`refs`), nests more
    /// than `limit` levels deep as the writer and builders recurse: into
    /// attributes, tags, list elements, the contents of an environment
    /// (once) and the like; a pairlist's cells are one level (R writes
    /// them one after another). Walks without recursing.
    pub fn nests_deeper_than<'s>(&'s self, refs: &'s RefTable, limit: usize) -> bool {
        let mut todo: Vec<(&'s RObject, usize)> = vec![(self, 0)];
        let mut seen = std::collections::HashSet::new();
        while let Some((o, d)) = todo.pop() {
            if d > limit {
                return true;
            }
            let d = d + 1;
            let mut push = |c: &'s RObject| todo.push((c, d));
            match o {
                RObject::Pairlist(p) => {
                    for c in &p.cells {
                        c.attributes.iter().chain(c.tag.iter()).for_each(&mut push);
                        push(&c.car);
                    }
                    push(&p.tail);
                }
                RObject::Vector(v) => {
                    if let VectorData::List(items) | VectorData::Expression(items) = &v.data {
                        items.iter().for_each(&mut push);
                    }
                    v.attributes.iter().for_each(&mut push);
                }
                RObject::Primitive(p) => p.attributes.iter().for_each(&mut push),
                RObject::S4(s) => s.attributes.iter().for_each(&mut push),
                RObject::Bytecode(b) => b.attributes.iter().for_each(&mut push),
                RObject::Altrep(a) => [&a.info, &a.state, &a.attributes]
                    .into_iter()
                    .for_each(&mut push),
                RObject::Ref(id) if seen.insert(*id) => match refs.get(*id) {
                    Some(RefEntry::Environment(e)) => {
                        [&e.enclosure, &e.frame, &e.hashtab, &e.attributes]
                            .into_iter()
                            .for_each(&mut push)
                    }
                    Some(RefEntry::ExternalPointer(p)) => {
                        [&p.protected, &p.tag].into_iter().for_each(&mut push);
                        p.attributes.iter().for_each(&mut push);
                    }
                    Some(RefEntry::WeakRef(w)) => w.attributes.iter().for_each(&mut push),
                    _ => {}
                },
                _ => {}
            }
        }
        false
    }

    /// The attribute pairlist of this node, if any.
    pub fn attributes(&self) -> Option<&RObject> {
        match self {
            RObject::Vector(v) => v.attributes.as_ref(),
            RObject::Pairlist(p) => p.cells.first().and_then(|c| c.attributes.as_ref()),
            RObject::Primitive(p) => p.attributes.as_ref(),
            RObject::S4(s) => s.attributes.as_ref(),
            RObject::Bytecode(b) => b.attributes.as_ref(),
            RObject::Altrep(a) => match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            },
            _ => None,
        }
    }

    /// Look up one attribute by name.
    pub fn attribute<'a>(&'a self, refs: &RefTable, name: &str) -> Option<&'a RObject> {
        let attrs = self.attributes()?;
        pairlist_get(attrs, refs, name.as_bytes())
    }

    /// The strings of a character vector (or `None`).
    pub fn as_strings(&self) -> Option<&StringVector> {
        match self {
            RObject::Vector(v) => match &v.data {
                VectorData::Character(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The class vocabulary: `oldClass()`, `inherits()` and `class()`, the one
/// place the reader, the listing and the Arrow bridge ask.
impl RObject {

    /// `inherits(x, what)`: whether the explicit class holds `what`.
    pub fn inherits(&self, refs: &RefTable, what: &str) -> bool {
        self.class_attr(refs).iter().any(|c| c == what)
    }

    /// `class(x)`: the explicit class, or the implicit one R derives from
    /// the dimensions and the type.
    pub fn class(&self, refs: &RefTable) -> Vec<String> {
        let explicit = self.class_attr(refs);
        if !explicit.is_empty() {
            return explicit;
        }
        let dim_len = self
            .attribute(refs, "dim")
            .map(|d| d.vector_len(refs))
            .unwrap_or(0);
        if dim_len == 2 {
            return vec!["matrix".to_string(), "array".to_string()];
        } else if dim_len > 0 {
            return vec!["array".to_string()];
        }
        let base = match self.sxptype(refs) {
            sxp::INT => "integer",
            sxp::REAL => "numeric",
            sxp::CLO | sxp::BUILTIN | sxp::SPECIAL => "function",
            sxp::SYM => "name",
            sxp::LANG => self.call_class(refs),
            sxp::LIST => "pairlist",
            sxp::VEC => "list",
            sxp::S4 => "S4",
            other => sxp::type_name(other),
        };
        vec![base.to_string()]
    }

    /// The implicit class of a call: its function's name for the
    /// syntactic forms R gives a class of their own.
    fn call_class(&self, refs: &RefTable) -> &'static str {
        if let RObject::Pairlist(p) = self {
            if let Some(RObject::Ref(id)) = p.cells.first().map(|c| &c.car) {
                return match refs.symbol_name(*id) {
                    Some(b"if") => "if",
                    Some(b"while") => "while",
                    Some(b"for") => "for",
                    Some(b"=") => "=",
                    Some(b"<-") => "<-",
                    Some(b"(") => "(",
                    Some(b"{") => "{",
                    _ => "call",
                };
            }
        }
        "call"
    }

}

/// Look up a tagged element of a pairlist by its tag's name.
pub fn pairlist_get<'a>(list: &'a RObject, refs: &RefTable, name: &[u8]) -> Option<&'a RObject> {
    match list {
        RObject::Pairlist(p) => p.cells.iter().find_map(|c| match &c.tag {
            Some(RObject::Ref(id)) if refs.symbol_name(*id) == Some(name) => Some(&c.car),
            _ => None,
        }),
        _ => None,
    }
}

/// The elements of a named list as (name, value).
pub fn list_entries<'a>(obj: &'a RObject, refs: &RefTable) -> Vec<(String, &'a RObject)> {
    let names = match obj.attribute(refs, "names").and_then(|n| n.as_strings()) {
        Some(s) => (0..s.len())
            .map(|i| String::from_utf8_lossy(s.get(i).unwrap_or(b"")).into_owned())
            .collect(),
        None => Vec::new(),
    };
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => items
                .iter()
                .enumerate()
                .map(|(i, it)| (names.get(i).cloned().unwrap_or_default(), it))
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The (name, value) pairs of a tagged pairlist; untagged cells have no name.
pub fn pairlist_entries<'a>(
    list: &'a RObject,
    refs: &'a RefTable,
) -> Vec<(Option<&'a [u8]>, &'a RObject)> {
    match list {
        RObject::Pairlist(p) => p
            .cells
            .iter()
            .map(|c| {
                let name = match &c.tag {
                    Some(RObject::Ref(id)) => refs.symbol_name(*id),
                    _ => None,
                };
                (name, &c.car)
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl RObject {
    /// Visit every reference in this object (not following references).
    pub fn for_each_ref_mut(&mut self, f: &mut dyn FnMut(&mut RefId)) {
        fn opt(o: &mut Option<RObject>, f: &mut dyn FnMut(&mut RefId)) {
            if let Some(o) = o {
                o.for_each_ref_mut(f);
            }
        }
        fn bc(b: &mut Bytecode, f: &mut dyn FnMut(&mut RefId)) {
            b.code.for_each_ref_mut(f);
            for c in &mut b.consts {
                match c {
                    BcConst::Code(inner) => bc(inner, f),
                    BcConst::Lang(l) => lang(l, f),
                    BcConst::Item { value, .. } => value.for_each_ref_mut(f),
                }
            }
        }
        fn lang(l: &mut BcLang, f: &mut dyn FnMut(&mut RefId)) {
            match l {
                BcLang::Ref(_) => {}
                BcLang::Item { value, .. } => value.for_each_ref_mut(f),
                BcLang::Cell(c) => {
                    opt(&mut c.attributes, f);
                    c.tag.for_each_ref_mut(f);
                    lang(&mut c.car, f);
                    lang(&mut c.cdr, f);
                }
            }
        }
        match self {
            RObject::Ref(id) => f(id),
            RObject::Pairlist(p) => {
                for c in &mut p.cells {
                    opt(&mut c.attributes, f);
                    opt(&mut c.tag, f);
                    c.car.for_each_ref_mut(f);
                }
                p.tail.for_each_ref_mut(f);
            }
            RObject::Vector(v) => {
                if let VectorData::List(items) | VectorData::Expression(items) = &mut v.data {
                    for it in items {
                        it.for_each_ref_mut(f);
                    }
                }
                opt(&mut v.attributes, f);
            }
            RObject::Primitive(p) => opt(&mut p.attributes, f),
            RObject::S4(s) => opt(&mut s.attributes, f),
            RObject::Bytecode(b) => {
                bc(&mut b.code, f);
                opt(&mut b.attributes, f);
            }
            RObject::Altrep(a) => {
                a.info.for_each_ref_mut(f);
                a.state.for_each_ref_mut(f);
                a.attributes.for_each_ref_mut(f);
            }
            RObject::Null | RObject::Special(_) | RObject::Char(_) | RObject::Taken(_) => {}
        }
    }
}

impl RefEntry {
    /// Visit every reference held by this entry.
    pub fn for_each_ref_mut(&mut self, f: &mut dyn FnMut(&mut RefId)) {
        match self {
            RefEntry::Environment(e) => {
                e.enclosure.for_each_ref_mut(f);
                e.frame.for_each_ref_mut(f);
                e.hashtab.for_each_ref_mut(f);
                e.attributes.for_each_ref_mut(f);
            }
            RefEntry::ExternalPointer(p) => {
                p.protected.for_each_ref_mut(f);
                p.tag.for_each_ref_mut(f);
                if let Some(a) = &mut p.attributes {
                    a.for_each_ref_mut(f);
                }
            }
            RefEntry::WeakRef(w) => {
                if let Some(a) = &mut w.attributes {
                    a.for_each_ref_mut(f);
                }
            }
            _ => {}
        }
    }
}

impl RefTable {
    /// Append another table's entries, returning the shift to apply to
    /// references into `other`.
    pub fn append(&mut self, other: RefTable) -> u32 {
        let base = self.entries.len() as u32;
        for mut e in other.entries {
            e.for_each_ref_mut(&mut |id| id.0 += base);
            self.entries.push(e);
        }
        base
    }
}

/// Set (replace or append) a named attribute in an attribute pairlist.
pub fn set_attribute(
    attrs: &mut Option<RObject>,
    tag: RObject,
    name: &[u8],
    refs: &RefTable,
    value: RObject,
) {
    if let Some(RObject::Pairlist(p)) = attrs {
        for c in &mut p.cells {
            if let Some(RObject::Ref(id)) = &c.tag {
                if refs.symbol_name(*id) == Some(name) {
                    c.car = value;
                    return;
                }
            }
        }
        p.cells.push(Cell {
            sxptype: sxp::LIST,
            flags: Flags::default(),
            attributes: None,
            tag: Some(tag),
            car: value,
        });
        return;
    }
    *attrs = Some(RObject::Pairlist(Box::new(Pairlist {
        cells: vec![Cell {
            sxptype: sxp::LIST,
            flags: Flags::default(),
            attributes: None,
            tag: Some(tag),
            car: value,
        }],
        tail: RObject::Null,
    })));
}

/// Remove a named attribute.
pub fn remove_attribute(attrs: &mut Option<RObject>, name: &[u8], refs: &RefTable) {
    if let Some(RObject::Pairlist(p)) = attrs {
        p.cells.retain(
            |c| !matches!(&c.tag, Some(RObject::Ref(id)) if refs.symbol_name(*id) == Some(name)),
        );
        if p.cells.is_empty() {
            *attrs = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_without_recursing() {
        let list = |items: Vec<RObject>| {
            RObject::Vector(Box::new(Vector {
                flags: Flags::default(),
                data: VectorData::List(items),
                attributes: None,
            }))
        };
        let refs = RefTable::default();
        let mut deep = RObject::Null;
        for _ in 0..3000 {
            deep = list(vec![deep]);
        }
        assert!(deep.nests_deeper_than(&refs, 2999));
        assert!(!deep.nests_deeper_than(&refs, 3000));
        // a long pairlist is one level: R writes its cells one after another
        let cells = (0..10_000)
            .map(|_| Cell {
                sxptype: sxp::LIST,
                flags: Flags::default(),
                attributes: None,
                tag: None,
                car: list(vec![]),
            })
            .collect();
        let long = RObject::Pairlist(Box::new(Pairlist {
            cells,
            tail: RObject::Null,
        }));
        assert!(!long.nests_deeper_than(&refs, 2));
        assert!(long.nests_deeper_than(&refs, 0));
    }

    #[test]
    fn every_code_is_named_once() {
        let mut codes: Vec<u8> = sxp::ALL.iter().map(|&(_, c)| c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), sxp::ALL.len());
        for s in SpecialValue::ALL {
            assert_eq!(SpecialValue::from_code(s.code()), Some(s));
            assert!(sxp::ALL.iter().any(|&(_, c)| c == s.code()));
        }
    }

    #[test]
    fn flags_words_unpack_to_what_was_packed() {
        for (t, levels, object, has_attr, has_tag) in [
            (sxp::INT, 0, false, true, false),
            (sxp::CHAR, levels::UTF8, false, false, false),
            (sxp::LIST, 0xffff, true, true, true),
        ] {
            let w = pack(t, Flags { levels, object }, has_attr, has_tag);
            assert_eq!(
                unpack(w),
                NodeWord {
                    sxptype: t,
                    flags: Flags { levels, object },
                    has_attr,
                    has_tag
                }
            );
        }
        // a factor (INTSXP, object bit, attributes) as R writes it: 0x30d
        assert_eq!(
            pack(
                sxp::INT,
                Flags {
                    levels: 0,
                    object: true
                },
                true,
                false
            ),
            0x30d
        );
        // an ASCII CHARSXP: 0x40009
        assert_eq!(
            pack(
                sxp::CHAR,
                Flags {
                    levels: levels::ASCII,
                    object: false
                },
                false,
                false
            ),
            0x40009
        );
    }

    #[test]
    fn references_pack_while_their_index_fits() {
        assert_eq!(pack_reference(1), Some(0x1ff));
        assert_eq!(unpack_reference(0x1ff), 1);
        assert_eq!(
            pack_reference(word::MAX_PACKED_REF).map(unpack_reference),
            Some(word::MAX_PACKED_REF)
        );
        assert_eq!(pack_reference(word::MAX_PACKED_REF + 1), None);
    }

    #[test]
    fn na_patterns_are_told_apart_from_nan() {
        assert!(na::is_na_real(na::real()));
        assert!(!na::is_na_real(f64::from_bits(na::NAN_BITS)));
        assert!(!na::is_na_real(1.0));
    }
}
