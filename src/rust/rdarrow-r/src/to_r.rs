//! Builds R objects from the engine's tree, as `load()` would: large
//! vectors were decoded into R vectors in the first place (`r_memory`),
//! the others are allocated here and filled from the decoded buffers;
//! strings get the encoding R would give them. Objects R must rebuild itself (closures,
//! environments, promises, byte code, external pointers, namespaces) are
//! reported as `Fallback`: the R side unserializes their stand-alone stream.

use extendr_api::prelude::{Raw, Robj};
use extendr_api::{GetSexp, Operators};
use extendr_ffi::{
    R_BaseEnv, R_BaseNamespace, R_EmptyEnv, R_GlobalEnv, R_MakeExternalPtr, R_MissingArg, R_NilValue, R_UnboundValue, R_xlen_t, Rf_allocVector, Rf_cons, Rf_lcons, Rf_protect, Rf_unprotect, COMPLEX, INTEGER, LOGICAL, RAW, REAL, SETCDR,
    SETLEVELS, SET_ATTRIB, SET_OBJECT, SET_STRING_ELT, SET_TAG, SET_VECTOR_ELT, SEXP, SEXPTYPE,
};
use rdarrow_arrow::tree::*;
use crate::lazy_strings::charsxp;
use rdarrow_arrow::Error;

#[allow(improper_ctypes)]
extern "C" {
    fn Rf_installTrChar(x: SEXP) -> SEXP;
    fn Rf_allocS4Object() -> SEXP;
}

/// True when this thread has used more than `num/den` of its stack.
/// `plain()` (small frames) stops at 1/5, leaving `build()` (larger frames,
/// same depth) well inside its 3/4; deeper objects are left to R's own
/// unserializer, which checks its stack itself. Where the stack's bounds
/// are unknown, the depth limits alone apply.
fn stack_used_over(num: usize, den: usize) -> bool {
    let Some((left, size)) = rdarrow_arrow::base::limits::stack_left() else {
        return false;
    };
    size - left > size / den * num
}

/// Nesting beyond this is built by R's unserializer, not here.
const PLAIN_MAX_DEPTH: usize = 2000;

pub enum BuildError {
    /// The object needs R's own unserializer.
    Fallback,
    Engine(Error),
}

impl From<Error> for BuildError {
    fn from(e: Error) -> Self {
        BuildError::Engine(e)
    }
}

type Result<T> = std::result::Result<T, BuildError>;

/// Unprotects what it protected when dropped, so early returns are safe.
struct Guard(i32);

impl Guard {
    unsafe fn protect(&mut self, s: SEXP) -> SEXP {
        self.0 += 1;
        Rf_protect(s)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0 > 0 {
            unsafe { Rf_unprotect(self.0) };
        }
    }
}

pub struct RBuilder<'d> {
    pub refs: &'d RefTable,
    /// The stream's native encoding (version 3 header), if any.
    pub native_encoding: Option<&'d [u8]>,
    /// The stream's header, for handing ALTREP nodes to R's unserializer
    /// (`None`: ALTREP nodes make the whole object fall back).
    pub header: Option<&'d rdarrow_arrow::StreamHeader>,
    /// The shortest character vector made lazily
    /// ([`crate::lazy_strings`]; `None`: none).
    pub lazy_min: Option<usize>,
}

impl<'d> RBuilder<'d> {
    unsafe fn charsxp(&self, bytes: Option<&[u8]>, lv: u16) -> SEXP {
        charsxp(bytes, lv, self.native_encoding)
    }

    unsafe fn symbol(&self, c: &CharItem) -> SEXP {
        let ch = Rf_protect(self.charsxp(c.bytes.as_deref(), c.levels));
        let s = Rf_installTrChar(ch);
        Rf_unprotect(1);
        s
    }

    /// True when this builder can make the object itself (no closures,
    /// environments, promises, byte code, primitives, ALTREP objects;
    /// external pointers are made as R's unserializer makes them, their
    /// address null).
    pub fn plain(&self, obj: &RObject) -> bool {
        self.plain_at(obj, 0, PLAIN_MAX_DEPTH)
    }

    /// As [`RBuilder::plain`], for an object nesting at most `max_depth`
    /// levels deep (deeper: `false`).
    pub fn plain_within(&self, obj: &RObject, max_depth: usize) -> bool {
        self.plain_at(obj, 0, max_depth.min(PLAIN_MAX_DEPTH))
    }

    fn plain_at(&self, obj: &RObject, depth: usize, max_depth: usize) -> bool {
        // deeper data is left to R (its stack use is checked by R)
        if depth > max_depth || stack_used_over(1, 2) {
            return false;
        }
        let depth = depth + 1;
        let attrs_plain =
            |a: Option<&RObject>| a.is_none_or(|a| self.plain_at(a, depth, max_depth));
        match obj {
            RObject::Null | RObject::Special(_) | RObject::Char(_) | RObject::Taken(_) => true,
            RObject::Ref(id) => match self.refs.get(*id) {
                Some(RefEntry::Symbol(_)) => true,
                // an external pointer is the pointer to nothing `load()`
                // makes of one (a data.table's self reference)
                Some(RefEntry::ExternalPointer(p)) => {
                    self.plain_at(&p.protected, depth, max_depth)
                        && self.plain_at(&p.tag, depth, max_depth)
                        && attrs_plain(p.attributes.as_ref())
                }
                _ => false,
            },
            RObject::Pairlist(p) => {
                p.cells.iter().all(|c| {
                    matches!(c.sxptype, sxp::LIST | sxp::LANG)
                        && attrs_plain(c.attributes.as_ref())
                        && c.tag
                            .as_ref()
                            .is_none_or(|t| self.plain_at(t, depth, max_depth))
                        && self.plain_at(&c.car, depth, max_depth)
                }) && self.plain_at(&p.tail, depth, max_depth)
            }
            RObject::Vector(v) => {
                attrs_plain(v.attributes.as_ref())
                    && match &v.data {
                        VectorData::List(items) | VectorData::Expression(items) => {
                            items.iter().all(|i| self.plain_at(i, depth, max_depth))
                        }
                        _ => true,
                    }
            }
            RObject::S4(s) => attrs_plain(s.attributes.as_ref()),
            // R's own unserializer rebuilds ALTREP nodes (see `altrep`)
            RObject::Altrep(a) => {
                self.header.is_some()
                    && rdarrow_arrow::tree::altrep::class_of(a, self.refs)
                        .0
                        .is_some_and(rdarrow_arrow::tree::altrep::is_base_class)
                    && self.plain_at(&a.state, depth, max_depth)
                    && self.plain_at(&a.attributes, depth, max_depth)
            }
            RObject::Primitive(_) | RObject::Bytecode(_) => false,
        }
    }

    /// Build one object, releasing each vector payload once it is in R
    /// (copied, or decoded into an R vector in the first place). The result is unprotected.
    pub unsafe fn build(&self, obj: &mut RObject) -> Result<SEXP> {
        if stack_used_over(3, 4) {
            return Err(BuildError::Fallback);
        }
        Ok(match obj {
            RObject::Null => R_NilValue,
            // built as it was read (`r_memory`), protected until the
            // objects are built
            RObject::Taken(t) => t.0 as SEXP,
            RObject::Special(s) => match s {
                SpecialValue::GlobalEnv => R_GlobalEnv,
                SpecialValue::BaseEnv => R_BaseEnv,
                SpecialValue::EmptyEnv => R_EmptyEnv,
                SpecialValue::BaseNamespace => R_BaseNamespace,
                SpecialValue::UnboundValue => R_UnboundValue,
                SpecialValue::MissingArg => R_MissingArg,
            },
            RObject::Ref(id) => match self.refs.get(*id) {
                Some(RefEntry::Symbol(c)) => self.symbol(c),
                Some(RefEntry::ExternalPointer(p)) => {
                    // as R's unserializer makes it: its address null
                    let (mut prot, mut tag) = (p.protected.clone(), p.tag.clone());
                    let mut attributes = p.attributes.clone();
                    let mut g = Guard(0);
                    let prot = g.protect(self.build(&mut prot)?);
                    let tag = g.protect(self.build(&mut tag)?);
                    let x = g.protect(R_MakeExternalPtr(std::ptr::null_mut(), tag, prot));
                    self.finish(x, p.flags, attributes.as_mut())?;
                    x
                }
                _ => return Err(BuildError::Fallback),
            },
            RObject::Pairlist(p) => self.pairlist(p)?,
            RObject::Vector(v) => self.vector(v.flags, &mut v.data, v.attributes.as_mut())?,
            RObject::Char(c) => self.charsxp(c.bytes.as_deref(), c.levels),
            RObject::S4(s) => {
                let mut g = Guard(0);
                let x = g.protect(Rf_allocS4Object());
                self.finish(x, s.flags, s.attributes.as_mut())?;
                x
            }
            RObject::Altrep(_) => self.altrep(obj)?,
            RObject::Primitive(_) | RObject::Bytecode(_) => return Err(BuildError::Fallback),
        })
    }

    /// An ALTREP node, rebuilt by R's own unserializer from a stream of
    /// the node alone, so that it comes out in the form load() gives (a
    /// compact sequence stays compact); the rest of the object is built
    /// here. Any failure makes the whole object fall back.
    unsafe fn altrep(&self, node: &RObject) -> Result<SEXP> {
        let header = self.header.ok_or(BuildError::Fallback)?;
        let bytes = rdarrow_arrow::node_to_rds(header, self.refs, node)
            .map_err(|_| BuildError::Fallback)?;
        let raw: Robj = Raw::from_bytes(&bytes).into();
        drop(bytes);
        let value =
            extendr_api::call!("base::unserialize", raw).map_err(|_| BuildError::Fallback)?;
        // unprotected once `value` drops: the caller attaches it to a
        // protected parent (or protects it) before allocating again
        Ok(value.get())
    }

    /// Set attributes, levels and the object bit on a protected object.
    unsafe fn finish(&self, x: SEXP, flags: Flags, attributes: Option<&mut RObject>) -> Result<()> {
        if let Some(a) = attributes {
            let a = self.build(a)?;
            SET_ATTRIB(x, a);
        }
        SETLEVELS(x, flags.levels as i32);
        SET_OBJECT(x, flags.object as i32);
        Ok(())
    }

    unsafe fn pairlist(&self, p: &mut Pairlist) -> Result<SEXP> {
        if p.cells
            .iter()
            .any(|c| !matches!(c.sxptype, sxp::LIST | sxp::LANG))
        {
            return Err(BuildError::Fallback);
        }
        // one protection for the growing list, whatever its length (long
        // pairlists must not fill R's protect stack)
        let mut g = Guard(0);
        let mut head = g.protect(self.build(&mut p.tail)?);
        for c in p.cells.iter_mut().rev() {
            let car = Rf_protect(self.build(&mut c.car)?);
            let cell = if c.sxptype == sxp::LANG {
                Rf_lcons(car, head)
            } else {
                Rf_cons(car, head)
            };
            // drop `car` and the old head (the top two), keep the new head
            Rf_unprotect(2);
            head = Rf_protect(cell);
            if let Some(t) = c.tag.as_mut() {
                SET_TAG(head, self.build(t)?);
            }
            self.finish(head, c.flags, c.attributes.as_mut())?;
        }
        let _ = SETCDR;
        Ok(head)
    }

    unsafe fn vector(
        &self,
        flags: Flags,
        data: &mut VectorData,
        attributes: Option<&mut RObject>,
    ) -> Result<SEXP> {
        rdarrow_arrow::base::cancel::check()?;
        let mut g = Guard(0);
        let n = data.len() as R_xlen_t;
        let x = match data {
            VectorData::Logical(v) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::LGLSXP, n));
                std::ptr::copy_nonoverlapping(v.as_ptr(), LOGICAL(x), v.len());
                x
            }
            VectorData::Integer(v) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::INTSXP, n));
                std::ptr::copy_nonoverlapping(v.as_ptr(), INTEGER(x), v.len());
                x
            }
            VectorData::Real(v) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::REALSXP, n));
                std::ptr::copy_nonoverlapping(v.as_ptr(), REAL(x), v.len());
                x
            }
            VectorData::Complex(v) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::CPLXSXP, n));
                std::ptr::copy_nonoverlapping(v.as_ptr(), COMPLEX(x) as *mut f64, v.len());
                x
            }
            VectorData::Raw(v) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::RAWSXP, n));
                std::ptr::copy_nonoverlapping(v.as_ptr(), RAW(x), v.len());
                x
            }
            VectorData::Character(s) if self.lazy_min.is_some_and(|m| s.len() >= m) => {
                g.protect(crate::lazy_strings::make(s.clone(), self.native_encoding))
            }
            VectorData::Character(s) => {
                let x = g.protect(Rf_allocVector(SEXPTYPE::STRSXP, n));
                for i in 0..s.len() {
                    SET_STRING_ELT(x, i as R_xlen_t, self.charsxp(s.get(i), s.levels(i)));
                }
                x
            }
            VectorData::List(_) | VectorData::Expression(_) => {
                let t = if data.sxptype() == sxp::VEC {
                    SEXPTYPE::VECSXP
                } else {
                    SEXPTYPE::EXPRSXP
                };
                let x = g.protect(Rf_allocVector(t, n));
                let items = match data {
                    VectorData::List(items) | VectorData::Expression(items) => items,
                    _ => unreachable!(),
                };
                for (i, it) in items.iter_mut().enumerate() {
                    SET_VECTOR_ELT(x, i as R_xlen_t, self.build(it)?);
                }
                x
            }
            VectorData::Skipped { .. } | VectorData::Deferred(_) => {
                return Err(BuildError::Engine(Error::internal(
                    "this object's payload was skipped",
                )))
            }
            // decoded straight into an R vector (`r_memory`), protected
            // until the objects are built
            VectorData::Consumed(c) => match c.value::<crate::to_r::RVector>() {
                Some(v) => g.protect(v.sexp()),
                None => {
                    return Err(BuildError::Engine(Error::internal(
                        "this object's payload was converted to Arrow",
                    )))
                }
            },
        };
        // the payload now lives in R: release ours
        *data = VectorData::Skipped {
            sxptype: data.sxptype(),
            len: n as u64,
        };
        self.finish(x, flags, attributes)?;
        Ok(x)
    }
}

/// An R vector allocated for a payload: the tree's handle on it
/// ([`rdarrow_arrow::tree::Consumed::value`]). The vector stays protected
/// by the [`RVectors`] whose allocator made it.
pub struct RVector(pub(crate) usize);

impl RVector {
    /// The vector. Main thread only, while its [`RVectors`] lives.
    pub fn sexp(&self) -> SEXP {
        self.0 as SEXP
    }
}

