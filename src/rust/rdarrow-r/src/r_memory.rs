//! R vectors as the reader's destination. For each large atomic vector the
//! reader meets, R allocates the vector and the payload is decoded straight
//! into it; the builder (`to_r`) then takes that vector as it is. A parse
//! on a worker thread (which may not call R) asks the main thread, waiting
//! in [`crate::job::run_serving`], to allocate; a parse on the main thread
//! allocates itself. Small vectors are decoded by the reader and copied: a
//! copy costs less than the round trip between the threads.

use extendr_ffi::{
    R_NilValue, R_PreserveObject, R_ReleaseObject, R_xlen_t, Rf_allocVector, COMPLEX, INTEGER,
    LOGICAL, RAW, REAL, SEXP, SEXPTYPE,
};
use rdarrow_arrow::read::{Allocation, Consumer, Placement};
use rdarrow_arrow::tree::sxp;
use std::ptr::NonNull;
use std::sync::mpsc;

/// Payloads of at least this many bytes are decoded into R vectors.
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
}

/// An R vector allocated for a payload: the tree's handle on it
/// ([`rdarrow_arrow::tree::Consumed::value`]). The vector stays protected
/// by the [`RVectors`] whose allocator made it.
pub struct RVector(usize);

impl RVector {
    /// The vector. Main thread only, while its [`RVectors`] lives.
    pub fn sexp(&self) -> SEXP {
        self.0 as SEXP
    }
}

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
}

impl Consumer for RAllocator {
    fn placement(&self) -> Placement {
        Placement::Decode
    }

    fn takes_columns(&self) -> bool {
        false
    }

    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        let bytes = len.checked_mul(sxp::atomic_width(sxptype)?)?;
        if bytes < MIN_BYTES {
            return None;
        }
        let (ptr, sexp) = if std::thread::current().id() == self.main.id() {
            // SAFETY: on the main thread; `kept` lives as long as this
            unsafe { allocate_in(self.kept as SEXP, sxptype, len)? }
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

/// A new R vector of type `sxptype` and `len` elements, protected in
/// `kept`: its data pointer and itself, or `None` where R cannot allocate
/// it (the reader then allocates, and reports the failure).
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
        _ => return None,
    };
    let mut args = (t, R_xlen_t::try_from(len).ok()?);
    // an allocation R cannot make is an R error, caught here
    let x = R_tryCatchError(
        alloc_body,
        &mut args as *mut _ as *mut std::ffi::c_void,
        alloc_failed,
        std::ptr::null_mut(),
    );
    if x == R_NilValue {
        return None;
    }
    R_PreserveInMSet(x, kept);
    let ptr = match t {
        SEXPTYPE::LGLSXP => LOGICAL(x) as usize,
        SEXPTYPE::INTSXP => INTEGER(x) as usize,
        SEXPTYPE::REALSXP => REAL(x) as usize,
        SEXPTYPE::CPLXSXP => COMPLEX(x) as usize,
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
