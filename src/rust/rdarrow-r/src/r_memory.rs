//! R vectors as the reader's destination. The parse runs on a worker
//! thread, which may not call R, so for each large atomic vector it asks
//! the main thread (waiting in [`crate::job::run_serving`]) to allocate the
//! R vector; the payload is decoded straight into it, and the builder
//! (`to_r`) takes that vector as it is. Small vectors are decoded by the
//! reader and copied: a copy costs less than the round trip between the
//! threads.

use extendr_api::prelude::Robj;
use extendr_ffi::{
    R_NilValue, R_xlen_t, Rf_allocVector, COMPLEX, INTEGER, LOGICAL, RAW, REAL, SEXP, SEXPTYPE,
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
}

/// An R vector the main thread allocated for a payload: the tree's handle
/// on it ([`rdarrow_arrow::tree::Consumed::value`]). The vector stays
/// protected by the [`RVectors`] that made it.
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
/// and takes no columns; it asks the main thread for the memory of each
/// large payload.
pub struct RAllocator {
    requests: mpsc::Sender<Request>,
    main: std::thread::Thread,
}

impl Consumer for RAllocator {
    fn placement(&self) -> Placement {
        Placement::Decode
    }

    fn takes_columns(&self) -> bool {
        false
    }

    fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
        let width: u64 = match sxptype {
            sxp::LGL | sxp::INT => 4,
            sxp::REAL => 8,
            sxp::CPLX => 16,
            sxp::RAW => 1,
            _ => return None,
        };
        let bytes = len.checked_mul(width)?;
        if bytes < MIN_BYTES {
            return None;
        }
        let (reply, answer) = mpsc::sync_channel(1);
        self.requests
            .send(Request {
                sxptype,
                len,
                reply,
            })
            .ok()?;
        self.main.unpark();
        let (ptr, sexp) = answer.recv().ok()??;
        let ptr = NonNull::new(ptr as *mut u8)?;
        // SAFETY: the main thread allocated an R vector of exactly `bytes`
        // bytes at `ptr` (aligned as R aligns vector data, 16 bytes), and
        // keeps it protected, unread and unwritten until the tree is built
        Some(unsafe { Allocation::new(ptr, bytes as usize, RVector(sexp)) })
    }
}

/// The main thread's side: it allocates what the worker asks for and keeps
/// the vectors protected until it is dropped, after the objects are built.
pub struct RVectors {
    requests: mpsc::Receiver<Request>,
    kept: Vec<Robj>,
}

/// The consumer for the worker and the main thread's side that serves it.
/// Made on the main thread.
pub fn pair() -> (RAllocator, RVectors) {
    let (tx, rx) = mpsc::channel();
    (
        RAllocator {
            requests: tx,
            main: std::thread::current(),
        },
        RVectors {
            requests: rx,
            kept: Vec::new(),
        },
    )
}

unsafe extern "C" fn alloc_body(data: *mut std::ffi::c_void) -> SEXP {
    let (t, n) = *(data as *const (SEXPTYPE, R_xlen_t));
    Rf_allocVector(t, n)
}

unsafe extern "C" fn alloc_failed(_cond: SEXP, _data: *mut std::ffi::c_void) -> SEXP {
    R_NilValue
}

impl RVectors {
    /// Allocate what the worker has asked for. Main thread only.
    pub fn serve(&mut self) {
        while let Ok(req) = self.requests.try_recv() {
            let _ = req.reply.send(self.allocate(req.sxptype, req.len));
        }
    }

    fn allocate(&mut self, sxptype: u8, len: u64) -> Option<(usize, usize)> {
        let t = match sxptype {
            sxp::LGL => SEXPTYPE::LGLSXP,
            sxp::INT => SEXPTYPE::INTSXP,
            sxp::REAL => SEXPTYPE::REALSXP,
            sxp::CPLX => SEXPTYPE::CPLXSXP,
            sxp::RAW => SEXPTYPE::RAWSXP,
            _ => return None,
        };
        let n = R_xlen_t::try_from(len).ok()?;
        let mut args = (t, n);
        // SAFETY: main thread; an allocation R cannot make is an R error,
        // caught here (the reader then allocates, and reports the failure)
        unsafe {
            let x = R_tryCatchError(
                alloc_body,
                &mut args as *mut _ as *mut std::ffi::c_void,
                alloc_failed,
                std::ptr::null_mut(),
            );
            if x == R_NilValue {
                return None;
            }
            let robj = Robj::from_sexp(x);
            let ptr = match t {
                SEXPTYPE::LGLSXP => LOGICAL(x) as usize,
                SEXPTYPE::INTSXP => INTEGER(x) as usize,
                SEXPTYPE::REALSXP => REAL(x) as usize,
                SEXPTYPE::CPLXSXP => COMPLEX(x) as usize,
                _ => RAW(x) as usize,
            };
            self.kept.push(robj);
            Some((ptr, x as usize))
        }
    }
}
