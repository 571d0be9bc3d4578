//! R vectors as the reader's destination. A parse on R's main thread (the
//! usual read, [`crate::job::read_for_r`]) has R allocate every atomic
//! vector it meets outside attributes, and decodes the payload straight
//! into it; each string of a character vector becomes its CHARSXP as it is
//! read. The builder (`to_r`) then takes those vectors as they are.
//!
//! Each element of a top-level list (a data frame's column, a list's
//! item) that the builder can make is built as soon as it is read, and
//! its place in the tree holds just the R object ([`RObject::Taken`]): a
//! list of many small vectors never holds the engine's nodes for all of
//! them at once.
//!
//! A parse on a worker thread (which may not call R; several files read at
//! once) asks the main thread, waiting in [`crate::job::run_serving`], to
//! allocate its large vectors. Its small vectors, and its strings, are
//! decoded by the reader and copied: a copy costs less than the round trip
//! between the threads.

use extendr_ffi::{
    R_NilValue, R_PreserveObject, R_ReleaseObject, R_xlen_t, Rf_allocVector, COMPLEX, INTEGER,
    LOGICAL, RAW, REAL, SET_STRING_ELT, SEXP, SEXPTYPE,
};
use rdarrow_arrow::read::Allocation;
use rdarrow_arrow::read::Column;
use rdarrow_arrow::read::Consumer;
use rdarrow_arrow::read::Placement;
use rdarrow_arrow::read::StringSink;
use rdarrow_arrow::tree::sxp;
use rdarrow_arrow::tree::Consumed;
use rdarrow_arrow::tree::RObject;
use rdarrow_arrow::tree::Taken;
use rdarrow_arrow::tree::VectorData;
use rdarrow_arrow::StreamHeader;
use std::ptr::NonNull;
use crate::to_r::RVector;
use std::sync::mpsc;

/// A worker's payloads of at least this many bytes are decoded into R
/// vectors (on the main thread: all of them).
const MIN_BYTES: u64 = 1 << 16;

#[allow(improper_ctypes)]
extern "C" {
    fn R_tryCatchError(
        body: unsafe extern "C" fn(*mut std::ffi::c_void) -> SEXP,
        bdata: *mut std::ffi::c_void,
        handler: unsafe extern "C" fn(SEXP, *mut std::ffi::c_void) -> SEXP,
        hdata: *mut std::ffi::c_void,
    ) -> SEXP;
    fn R_NewPreciousMSet(initial_size: std::ffi::c_int) -> SEXP;
    fn R_PreserveInMSet(x: SEXP, mset: SEXP);
    fn R_ReleaseMSet(mset: SEXP, keep_size: std::ffi::c_int);
    fn R_ToplevelExec(
        fun: Option<unsafe extern "C" fn(*mut std::ffi::c_void)>,
        data: *mut std::ffi::c_void,
    ) -> extendr_ffi::Rboolean;
}

/// Columns nesting deeper than this are built with their object, once
/// read (the checks and the build recurse; here they would run on top of
/// the parse).
const EARLY_MAX_DEPTH: usize = 64;

/// Vectors shorter than this are allocated in R's top-level context
/// rather than with a condition handler.
const SMALL_LEN: u64 = 1 << 12;

/// One allocation asked of the main thread: the data pointer and the
/// vector, or `None` where R could not allocate it.
struct Request {
    sxptype: u8,
    len: u64,
    reply: mpsc::SyncSender<Option<(usize, usize)>>,
}

/// The reader's consumer when it reads for R: it places nothing elsewhere
/// and takes no columns; it has R allocate the memory of each large
/// payload.
pub struct RAllocator {
    requests: mpsc::Sender<Request>,
    main: std::thread::Thread,
    /// The multi-set that protects the vectors (an `SEXP`).
    kept: usize,
    /// The shortest character vector left in the engine's buffers, for
    /// the builder to make lazily ([`crate::lazy_strings`]).
    lazy_min: Option<usize>,
}

impl Consumer for RAllocator {
    fn placement(&self) -> Placement {
        Placement::Decode
    }

    fn takes_columns(&self) -> bool {
        true
    }

    fn column(&self, column: Column<'_>) {
        // read on the main thread, and whole (not one column of a store)
        if !self.on_main() || column.store.is_some() {
            return;
        }
        let builder = crate::to_r::RBuilder {
            refs: column.refs,
            native_encoding: column.header.native_encoding.as_deref(),
            header: Some(column.header),
            lazy_min: self.lazy_min,
        };
        // only what the builder makes itself, nesting a little, and what R
        // can build (the whole object is checked again once read, and an
        // error reported then): the rest is built with its object, or by
        // R's unserializer
        if !builder.plain_within(column.object, EARLY_MAX_DEPTH)
            // (plain objects hold no promise: the trust rule is the
            // document's, checked over the whole file when it is taken)
            || rdarrow_arrow::checks::validate::check_well_formed_within(
                column.object,
                column.refs,
                rdarrow_arrow::base::limits::physical_memory(),
            )
            .is_err()
        {
            return;
        }
        // SAFETY: main thread; the object is kept in `kept` at once
        unsafe {
            if let Ok(x) = builder.build(column.object) {
                R_PreserveInMSet(x, self.kept as SEXP);
                *column.object = RObject::Taken(Taken(x as u64));
            }
        }
    }

    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        let bytes = len.checked_mul(sxp::atomic_width(sxptype)?)?;
        let (ptr, sexp) = if self.on_main() {
            // SAFETY: on the main thread; `kept` lives as long as this
            unsafe { allocate_in(self.kept as SEXP, sxptype, len)? }
        } else if bytes < MIN_BYTES {
            return None;
        } else {
            let (reply, answer) = mpsc::sync_channel(1);
            self.requests
                .send(Request {
                    sxptype,
                    len,
                    reply,
                })
                .ok()?;
            self.main.unpark();
            answer.recv().ok()??
        };
        let ptr = NonNull::new(ptr as *mut u8)?;
        // SAFETY: R allocated a vector of exactly `bytes` bytes at `ptr`
        // (aligned as R aligns vector data, to 16 bytes), which stays
        // protected, and neither read nor written by R, until the tree is
        // built
        Some(unsafe { Allocation::new(ptr, bytes as usize, RVector(sexp)) })
    }

    fn strings(&self, len: u64, header: &StreamHeader) -> Option<Box<dyn StringSink>> {
        if !self.on_main() || self.lazy_min.is_some_and(|m| len >= m as u64) {
            return None;
        }
        // SAFETY: on the main thread; `kept` lives as long as this
        let (_, x) = unsafe { allocate_in(self.kept as SEXP, sxp::STR, len)? };
        Some(Box::new(RStringSink {
            x,
            next: 0,
            native: header.native_encoding.clone(),
        }))
    }
}

impl RAllocator {
    fn on_main(&self) -> bool {
        std::thread::current().id() == self.main.id()
    }
}

/// A character vector being read on the main thread: each string becomes
/// its CHARSXP in the R vector as it arrives.
struct RStringSink {
    /// The vector (an `SEXP`, protected by the allocator's set).
    x: usize,
    next: R_xlen_t,
    /// The stream's native encoding.
    native: Option<Vec<u8>>,
}

impl StringSink for RStringSink {
    fn push(&mut self, bytes: Option<&[u8]>, levels: u16) {
        // SAFETY: main thread (`strings` makes this only there); the reader
        // pushes exactly the vector's length, and no string with a NUL
        unsafe {
            let c = crate::lazy_strings::charsxp(bytes, levels, self.native.as_deref());
            SET_STRING_ELT(self.x as SEXP, self.next, c);
        }
        self.next += 1;
    }

    fn finish(self: Box<Self>) -> Consumed {
        let x = self.x;
        // read back (for the writer, which R's main thread runs for the
        // objects R rebuilds itself) from the vector, which lives as long
        // as the tree
        Consumed::read_back(sxp::STR, self.next as u64, RVector(x), move || {
            // SAFETY: see above
            VectorData::Character(unsafe { crate::save_native::string_vector_of(x as SEXP) })
        })
    }
}

/// The main thread's side: it allocates what a worker asks for, and keeps
/// every vector its allocator made protected until it is dropped, after
/// the objects are built.
pub struct RVectors {
    requests: mpsc::Receiver<Request>,
    kept: SEXP,
}

/// The consumer for the reader and the main thread's side that serves it.
/// Made on the main thread.
pub fn pair() -> (RAllocator, RVectors) {
    let (tx, rx) = mpsc::channel();
    // SAFETY: main thread; the set is protected until `RVectors` drops
    let kept = unsafe {
        let set = R_NewPreciousMSet(16);
        R_PreserveObject(set);
        set
    };
    (
        RAllocator {
            requests: tx,
            main: std::thread::current(),
            kept: kept as usize,
            lazy_min: crate::lazy_strings::min_len(),
        },
        RVectors { requests: rx, kept },
    )
}

unsafe extern "C" fn alloc_body(data: *mut std::ffi::c_void) -> SEXP {
    let (t, n) = *(data as *const (SEXPTYPE, R_xlen_t));
    Rf_allocVector(t, n)
}

unsafe extern "C" fn alloc_failed(_cond: SEXP, _data: *mut std::ffi::c_void) -> SEXP {
    R_NilValue
}

/// A small vector, made in R's own cheap error context (an allocation of
/// this size fails only when R has no memory left at all).
unsafe extern "C" fn alloc_small(data: *mut std::ffi::c_void) {
    let a = &mut *(data as *mut (SEXPTYPE, R_xlen_t, SEXP));
    a.2 = Rf_allocVector(a.0, a.1);
}

/// A new R vector of type `sxptype` and `len` elements, protected in
/// `kept`: its data pointer (0 for a character vector) and itself, or
/// `None` where R cannot allocate it (the reader then allocates, and
/// reports the failure).
///
/// # Safety
/// Main thread only; `kept` is a live precious multi-set.
unsafe fn allocate_in(kept: SEXP, sxptype: u8, len: u64) -> Option<(usize, usize)> {
    let t = match sxptype {
        sxp::LGL => SEXPTYPE::LGLSXP,
        sxp::INT => SEXPTYPE::INTSXP,
        sxp::REAL => SEXPTYPE::REALSXP,
        sxp::CPLX => SEXPTYPE::CPLXSXP,
        sxp::RAW => SEXPTYPE::RAWSXP,
        sxp::STR => SEXPTYPE::STRSXP,
        _ => return None,
    };
    let n = R_xlen_t::try_from(len).ok()?;
    // an allocation R cannot make is an R error, caught here: a large one
    // as a condition (its message is ours to give), a small one in R's
    // cheaper top-level context
    let x = if len < SMALL_LEN {
        let mut args = (t, n, R_NilValue);
        let done = R_ToplevelExec(
            Some(alloc_small),
            &mut args as *mut _ as *mut std::ffi::c_void,
        );
        if done == extendr_ffi::Rboolean::FALSE {
            return None;
        }
        args.2
    } else {
        let mut args = (t, n);
        R_tryCatchError(
            alloc_body,
            &mut args as *mut _ as *mut std::ffi::c_void,
            alloc_failed,
            std::ptr::null_mut(),
        )
    };
    if x == R_NilValue {
        return None;
    }
    R_PreserveInMSet(x, kept);
    let ptr = match t {
        SEXPTYPE::LGLSXP => LOGICAL(x) as usize,
        SEXPTYPE::INTSXP => INTEGER(x) as usize,
        SEXPTYPE::REALSXP => REAL(x) as usize,
        SEXPTYPE::CPLXSXP => COMPLEX(x) as usize,
        SEXPTYPE::STRSXP => 0,
        _ => RAW(x) as usize,
    };
    Some((ptr, x as usize))
}

impl RVectors {
    /// Allocate what a worker has asked for. Main thread only.
    pub fn serve(&mut self) {
        while let Ok(req) = self.requests.try_recv() {
            // SAFETY: main thread (where `RVectors` is made and used)
            let made = unsafe { allocate_in(self.kept, req.sxptype, req.len) };
            let _ = req.reply.send(made);
        }
    }
}

impl Drop for RVectors {
    fn drop(&mut self) {
        // SAFETY: main thread; the vectors are in the objects built by now,
        // or garbage
        unsafe {
            R_ReleaseMSet(self.kept, 0);
            R_ReleaseObject(self.kept);
        }
    }
}
