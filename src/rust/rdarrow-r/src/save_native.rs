//! R objects laid out for the engine's parallel writer, without R's
//! serializer. The walk (main thread) records every node exactly as R's
//! serializer writes it in XDR (flags with the node's levels and object
//! bit, lengths, symbol references numbered in first-written order; in
//! version 3 base R's compact sequences and wrappers as ALTREP nodes, in
//! version 2 as the vectors they stand for) and borrows each vector's
//! payload in place; the engine then renders and writes the bytes on all
//! cores while R waits. Nothing is copied whole.
//!
//! The walk covers data: NULL, symbols, pairlists and calls, every atomic
//! vector, lists, expression vectors, S4 objects, and the global, base and
//! empty environments. Anything else (other environments, closures,
//! external pointers, byte code, other ALTREP classes, ASCII output) makes
//! it return `None`, and the caller uses R's own serializer instead.
//!
//! String elements are read by the writing threads (`CHAR()`, `LENGTH()`
//! and `LEVELS()` of CHARSXPs, which only read memory) while the main
//! thread waits; the only R code it runs meanwhile is the progress
//! display, and R's garbage collector neither frees nor moves the
//! protected object's nodes nor changes their data, lengths or levels.

use extendr_api::prelude::*;
use extendr_ffi::{R_xlen_t, SEXP};
use rdarrow_arrow::tree::altrep;
use rdarrow_arrow::tree::pack;
use rdarrow_arrow::tree::sxp;
use rdarrow_arrow::tree::Flags;
use rdarrow_arrow::tree::SpecialValue;
use rdarrow_arrow::write::layout::Layout;
use rdarrow_arrow::write::layout::StringItem;
use rdarrow_arrow::write::layout::StringSource;
use rdarrow_arrow::write::Emit;
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

#[allow(non_snake_case, improper_ctypes)]
extern "C" {
    #[link_name = "TYPEOF"]
    fn type_of(x: SEXP) -> c_int;
    #[link_name = "LEVELS"]
    fn levels(x: SEXP) -> c_int;
    #[link_name = "OBJECT"]
    fn object_bit(x: SEXP) -> c_int;
    fn ATTRIB(x: SEXP) -> SEXP;
    fn TAG(x: SEXP) -> SEXP;
    fn CAR(x: SEXP) -> SEXP;
    fn CDR(x: SEXP) -> SEXP;
    fn PRINTNAME(x: SEXP) -> SEXP;
    fn ALTREP(x: SEXP) -> c_int;
    fn R_altrep_data1(x: SEXP) -> SEXP;
    fn R_altrep_data2(x: SEXP) -> SEXP;
    fn R_CHAR(x: SEXP) -> *const c_char;
    fn LENGTH(x: SEXP) -> c_int;
    fn XLENGTH(x: SEXP) -> R_xlen_t;
    fn DATAPTR_RO(x: SEXP) -> *const c_void;
    fn STRING_PTR_RO(x: SEXP) -> *const SEXP;
    fn VECTOR_ELT(x: SEXP, i: R_xlen_t) -> SEXP;
    static R_NilValue: SEXP;
    static R_NaString: SEXP;
    static R_GlobalEnv: SEXP;
    static R_EmptyEnv: SEXP;
    static R_BaseEnv: SEXP;
    static R_BaseNamespace: SEXP;
    static R_MissingArg: SEXP;
    static R_UnboundValue: SEXP;
}

/// sxp::CHAR levels R never writes: the cache and hash-set bits (the
/// format crate's rule).
const CHARSXP_UNWRITTEN_LEVELS: c_int =
    rdarrow_arrow::tree::levels::UNWRITTEN_CHARSXP_BITS as c_int;
/// Deeper nesting goes through R's serializer (which checks its stack).
const MAX_DEPTH: usize = 2000;

/// The node type of `x`, as the engine's table (`sxp`) names it.
unsafe fn node_type(x: SEXP) -> u8 {
    type_of(x) as u8
}

/// The flags word R writes before node `kind` (R's levels are the node's
/// 16 general-purpose bits).
fn pack_flags(kind: u8, levs: c_int, is_object: bool, has_attr: bool, has_tag: bool) -> i32 {
    pack(
        kind,
        Flags {
            levels: levs as u16,
            object: is_object,
        },
        has_attr,
        has_tag,
    )
}

/// The flags word R writes for sxp::CHAR `c`.
unsafe fn charsxp_flags(c: SEXP) -> i32 {
    pack_flags(
        sxp::CHAR,
        levels(c) & !CHARSXP_UNWRITTEN_LEVELS,
        false,
        false,
        false,
    )
}

/// The strings of R character vector `x`, copied out as the engine's tree
/// holds them (bytes and levels as R would write them).
///
/// # Safety
/// `x` is a live character vector; main thread, or while it waits.
pub(crate) unsafe fn string_vector_of(x: SEXP) -> rdarrow_arrow::tree::StringVector {
    let n = XLENGTH(x) as usize;
    let strings = RStrings {
        elements: STRING_PTR_RO(x),
        count: n,
        na: R_NaString,
        na_flags: 0,
    };
    let mut b = rdarrow_arrow::tree::StringVectorBuilder::new(n);
    for i in 0..n {
        let it = strings.item(i);
        b.push(it.bytes, rdarrow_arrow::tree::unpack(it.flags).flags.levels);
    }
    b.finish()
}

/// A character vector's elements, read in place.
struct RStrings {
    elements: *const SEXP,
    count: usize,
    na: SEXP,
    na_flags: i32,
}

// SAFETY: the vector and its CHARSXPs stay alive and unchanged while the
// layout is written (the caller holds the object and R runs no code); the
// accessors used only read the nodes' memory.
unsafe impl Send for RStrings {}
unsafe impl Sync for RStrings {}

impl StringSource for RStrings {
    fn count(&self) -> usize {
        self.count
    }

    fn item(&self, i: usize) -> StringItem<'_> {
        // SAFETY: i < count, the elements are CHARSXPs (see above).
        unsafe {
            let c = *self.elements.add(i);
            if c == self.na {
                return StringItem {
                    flags: self.na_flags,
                    bytes: None,
                };
            }
            let n = LENGTH(c) as usize;
            let bytes = if n == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(R_CHAR(c) as *const u8, n)
            };
            StringItem {
                flags: charsxp_flags(c),
                bytes: Some(bytes),
            }
        }
    }
}

/// The walk: the layout being built and R's reference table (symbols).
struct Walk<'a> {
    out: Layout<'a>,
    symbols: HashMap<usize, u32>,
    version: i32,
}

/// The values of a vector as R's serializer reads them, without
/// allocating: borrowed in place, or a compact sequence's rule.
enum Values<'a> {
    Ints(&'a [i32]),
    Doubles(&'a [f64]),
    Bytes(&'a [u8]),
    /// A character vector or list that is not ALTREP (elements read in place).
    Elements(SEXP),
    IntSequence {
        first: i32,
        step: i32,
    },
    RealSequence {
        first: f64,
        step: f64,
    },
}

/// A payload borrowed from R for the life of the object.
unsafe fn borrowed<'a, T>(s: SEXP, n: usize) -> &'a [T] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(DATAPTR_RO(s) as *const T, n)
    }
}

/// A lazily read character vector's strings, taken from the engine's
/// buffers as R would write the CHARSXPs it makes of them
/// ([`crate::lazy_strings`]).
struct BufferStrings {
    strings: rdarrow_arrow::tree::StringVector,
    native: Option<Box<[u8]>>,
    na_flags: i32,
}

impl BufferStrings {
    /// `None` where R would hold other bytes than the buffers' for some
    /// string (a native string it transcodes): R's serializer writes those.
    fn new(
        strings: &rdarrow_arrow::tree::StringVector,
        native: Option<&[u8]>,
        na_flags: i32,
    ) -> Option<Self> {
        use rdarrow_arrow::tree::encoding::is_utf8_name;
        use rdarrow_arrow::tree::encoding::levels_in_r;
        if !native.is_none_or(is_utf8_name)
            && !(0..strings.len())
                .all(|i| levels_in_r(strings.bytes(i), strings.levels(i), native).is_some())
        {
            return None;
        }
        Some(BufferStrings {
            strings: strings.clone(),
            native: native.map(Into::into),
            na_flags,
        })
    }
}

impl StringSource for BufferStrings {
    fn count(&self) -> usize {
        self.strings.len()
    }

    fn item(&self, i: usize) -> StringItem<'_> {
        use rdarrow_arrow::tree::encoding::levels_in_r;
        let Some(bytes) = self.strings.get(i) else {
            return StringItem {
                flags: self.na_flags,
                bytes: None,
            };
        };
        let lv = levels_in_r(bytes, self.strings.levels(i), self.native.as_deref()).unwrap_or(0);
        StringItem {
            flags: pack_flags(sxp::CHAR, lv as c_int, false, false, false),
            bytes: Some(bytes),
        }
    }
}

/// The class and package of an ALTREP object (from its class's
/// serialized-class attribute: class symbol, package symbol, type).
unsafe fn altrep_class(s: SEXP) -> Option<(String, String)> {
    let info = ATTRIB(TAG(s));
    if node_type(info) != sxp::LIST || node_type(CDR(info)) != sxp::LIST {
        return None;
    }
    let name_of = |sym: SEXP| -> Option<String> {
        if node_type(sym) != sxp::SYM {
            return None;
        }
        let p = PRINTNAME(sym);
        let bytes = std::slice::from_raw_parts(R_CHAR(p) as *const u8, LENGTH(p) as usize);
        std::str::from_utf8(bytes).ok().map(str::to_string)
    };
    Some((name_of(CAR(info))?, name_of(CAR(CDR(info)))?))
}

/// A base R wrapper that R serializes as the ordinary vector it stands
/// for: the format crate's one rule (`altrep::wrapper_writes_plain`), asked
/// with what `s` holds.
unsafe fn is_plain_wrapper(s: SEXP) -> bool {
    let Some((class, package)) = altrep_class(s) else {
        return false;
    };
    let meta = R_altrep_data2(s);
    let meta = if node_type(meta) == sxp::INT && XLENGTH(meta) >= 2 {
        borrowed::<i32>(meta, 2)
    } else {
        &[]
    };
    altrep::wrapper_writes_plain(
        class.as_bytes(),
        package.as_bytes(),
        ALTREP(R_altrep_data1(s)) != 0,
        meta,
    )
}

/// One of base R's wrapper classes whose values the walk can read.
fn is_wrapper(class: &str) -> bool {
    altrep::base_class_type(class.as_bytes()).is_some() && altrep::is_wrapper(class.as_bytes())
}

/// The values of vector `s` of type `kind` and length `n`: in place for
/// ordinary vectors; for base R's ALTREP vectors, what their data pointer
/// would give (an expanded compact sequence's buffer, a wrapper's wrapped
/// vector, or an unexpanded compact sequence's rule). `None` for other
/// ALTREP classes, whose data would have to be materialized by R.
unsafe fn values_of<'a>(s: SEXP, kind: u8, n: usize) -> Option<Values<'a>> {
    if ALTREP(s) != 0 {
        let (class, package) = altrep_class(s)?;
        if package != "base" {
            return None;
        }
        if is_wrapper(&class) {
            let wrapped = R_altrep_data1(s);
            if node_type(wrapped) != kind || XLENGTH(wrapped) as usize != n {
                return None;
            }
            return values_of(wrapped, kind, n);
        }
        if !altrep::is_compact_sequence(class.as_bytes()) {
            return None;
        }
        let expanded = R_altrep_data2(s);
        if expanded != R_NilValue {
            return if node_type(expanded) == kind
                && ALTREP(expanded) == 0
                && XLENGTH(expanded) as usize == n
            {
                values_of(expanded, kind, n)
            } else {
                None
            };
        }
        // (length, first, step) as doubles
        let info = R_altrep_data1(s);
        if node_type(info) != sxp::REAL || XLENGTH(info) != 3 {
            return None;
        }
        let v = borrowed::<f64>(info, 3);
        if v[0] != n as f64 {
            return None;
        }
        return match kind {
            sxp::INT => Some(Values::IntSequence {
                first: v[1] as i32,
                step: v[2] as i32,
            }),
            sxp::REAL => Some(Values::RealSequence {
                first: v[1],
                step: v[2],
            }),
            _ => None,
        };
    }
    Some(match kind {
        sxp::LGL | sxp::INT => Values::Ints(borrowed(s, n)),
        sxp::REAL => Values::Doubles(borrowed(s, n)),
        sxp::CPLX => Values::Doubles(borrowed(s, 2 * n)),
        sxp::RAW => Values::Bytes(borrowed(s, n)),
        _ => Values::Elements(s),
    })
}

impl<'a> Walk<'a> {
    /// Special objects R writes as a code of their own.
    unsafe fn special(s: SEXP) -> Option<i32> {
        if s == R_NilValue {
            return Some(sxp::NILVALUE as i32);
        }
        [
            (R_EmptyEnv, SpecialValue::EmptyEnv),
            (R_BaseEnv, SpecialValue::BaseEnv),
            (R_GlobalEnv, SpecialValue::GlobalEnv),
            (R_UnboundValue, SpecialValue::UnboundValue),
            (R_MissingArg, SpecialValue::MissingArg),
            (R_BaseNamespace, SpecialValue::BaseNamespace),
        ]
        .into_iter()
        .find_map(|(object, value)| (object == s).then_some(value.code() as i32))
    }

    /// Write `s` as R's `WriteItem` does; `None` when it holds something
    /// this walk leaves to R's serializer.
    unsafe fn item(&mut self, mut s: SEXP, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        loop {
            if let Some((strings, native)) = crate::lazy_strings::strings_of(s) {
                return self.lazy_strings(s, strings, native, depth);
            }
            if ALTREP(s) != 0 && self.version >= 3 && !is_plain_wrapper(s) {
                return self.altrep(s, depth);
            }
            if let Some(code) = Self::special(s) {
                self.out.int(code);
                return Some(());
            }
            let kind = node_type(s);
            if kind == sxp::SYM {
                if let Some(&index) = self.symbols.get(&(s as usize)) {
                    self.out.reference(index).ok()?;
                } else {
                    let index = self.symbols.len() as u32 + 1;
                    self.symbols.insert(s as usize, index);
                    self.out.int(sxp::SYM as i32);
                    self.item(PRINTNAME(s), depth + 1)?;
                }
                return Some(());
            }
            let has_tag = match kind {
                sxp::LIST | sxp::LANG => TAG(s) != R_NilValue,
                sxp::CHAR
                | sxp::LGL
                | sxp::INT
                | sxp::REAL
                | sxp::CPLX
                | sxp::STR
                | sxp::VEC
                | sxp::EXPR
                | sxp::RAW
                | sxp::S4 => false,
                _ => return None,
            };
            let attrib = ATTRIB(s);
            let has_attr = kind != sxp::CHAR && attrib != R_NilValue;
            let levs = if kind == sxp::CHAR {
                levels(s) & !CHARSXP_UNWRITTEN_LEVELS
            } else {
                levels(s)
            };
            self.out.int(pack_flags(
                kind,
                levs,
                object_bit(s) != 0,
                has_attr,
                has_tag,
            ));
            match kind {
                sxp::LIST | sxp::LANG => {
                    if has_attr {
                        self.item(attrib, depth + 1)?;
                    }
                    if has_tag {
                        self.item(TAG(s), depth + 1)?;
                    }
                    self.item(CAR(s), depth + 1)?;
                    // the rest of the pairlist, as R's tail call
                    s = CDR(s);
                    continue;
                }
                sxp::CHAR => {
                    if s == R_NaString {
                        self.out.int(-1);
                    } else {
                        let n = LENGTH(s) as usize;
                        self.out.int(n as i32);
                        if n > 0 {
                            self.out
                                .put(std::slice::from_raw_parts(R_CHAR(s) as *const u8, n));
                        }
                    }
                }
                sxp::LGL
                | sxp::INT
                | sxp::REAL
                | sxp::CPLX
                | sxp::RAW
                | sxp::STR
                | sxp::VEC
                | sxp::EXPR => {
                    let n = XLENGTH(s) as usize;
                    self.out.length(n as u64).ok()?;
                    self.values(values_of(s, kind, n)?, n, depth)?;
                }
                _ => {} // S4SXP: only its attributes (the slots)
            }
            if has_attr {
                self.item(attrib, depth + 1)?;
            }
            return Some(());
        }
    }

    /// The values of a vector of length `n`.
    unsafe fn values(&mut self, values: Values<'a>, n: usize, depth: usize) -> Option<()> {
        match values {
            Values::Ints(v) => self.out.ints(v),
            Values::Doubles(v) => self.out.doubles(v),
            Values::Bytes(v) => self.out.bytes(v),
            Values::IntSequence { first, step } => self.out.int_sequence(first, step, n),
            Values::RealSequence { first, step } => self.out.real_sequence(first, step, n),
            Values::Elements(v) if node_type(v) == sxp::STR => {
                if n > 0 {
                    let strings = RStrings {
                        elements: STRING_PTR_RO(v),
                        count: n,
                        na: R_NaString,
                        na_flags: charsxp_flags(R_NaString),
                    };
                    self.out.strings(Arc::new(strings));
                }
            }
            Values::Elements(v) => {
                for i in 0..n {
                    self.item(VECTOR_ELT(v, i as R_xlen_t), depth + 1)?;
                }
            }
        }
        Some(())
    }

    /// A lazily read character vector, as R writes the ordinary vector it
    /// stands for, its strings taken from the engine's buffers.
    unsafe fn lazy_strings(
        &mut self,
        s: SEXP,
        strings: &rdarrow_arrow::tree::StringVector,
        native: Option<&[u8]>,
        depth: usize,
    ) -> Option<()> {
        let source = BufferStrings::new(strings, native, charsxp_flags(R_NaString))?;
        let attrib = ATTRIB(s);
        let has_attr = attrib != R_NilValue;
        self.out.int(pack_flags(
            sxp::STR,
            levels(s),
            object_bit(s) != 0,
            has_attr,
            false,
        ));
        self.out.length(strings.len() as u64).ok()?;
        if !strings.is_empty() {
            self.out.strings(Arc::new(source));
        }
        if has_attr {
            self.item(attrib, depth + 1)?;
        }
        Some(())
    }

    /// An ALTREP node in version 3, as R writes it: by its class and
    /// serialized state (base R's compact sequences, expanded or not, and
    /// wrapper objects). `None` for other classes.
    unsafe fn altrep(&mut self, s: SEXP, depth: usize) -> Option<()> {
        let (class, package) = altrep_class(s)?;
        if package != "base" {
            return None;
        }
        let info = ATTRIB(TAG(s));
        let flags = pack_flags(sxp::ALTREP, levels(s), object_bit(s) != 0, false, false);
        if altrep::is_compact_sequence(class.as_bytes()) {
            // state: the (length, start, step) doubles
            self.out.int(flags);
            self.item(info, depth + 1)?;
            self.item(R_altrep_data1(s), depth + 1)?;
        } else if is_wrapper(&class) {
            // state: CONS(wrapped object, metadata)
            self.out.int(flags);
            self.item(info, depth + 1)?;
            self.out.int(pack_flags(sxp::LIST, 0, false, false, false));
            self.item(R_altrep_data1(s), depth + 1)?;
            self.item(R_altrep_data2(s), depth + 1)?;
        } else {
            return None;
        }
        self.item(ATTRIB(s), depth + 1)
    }
}

/// Lay out `object` as an XDR stream after `prefix` (the container magic
/// and R's serialization header). `None` when the object holds something
/// only R's serializer writes.
///
/// # Safety
/// `object` must stay protected and unchanged for as long as the layout is
/// used (its payloads are borrowed from R), and no R code may modify it.
pub unsafe fn layout_object<'a>(
    object: &'a Robj,
    prefix: &[u8],
    version: i32,
    threads: usize,
) -> Option<Layout<'a>> {
    let mut walk = Walk {
        out: Layout::new(),
        symbols: HashMap::new(),
        version,
    };
    walk.out.put(prefix);
    walk.item(object.get(), 0)?;
    Some(walk.out.finish(threads))
}
