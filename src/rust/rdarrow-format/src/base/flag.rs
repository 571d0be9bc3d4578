//! The interrupt flag: a host's flag (such as R's) and rdarrow's own
//! cancellation, below the errors that report an interruption.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

static HOST_FLAG: AtomicPtr<i32> = AtomicPtr::new(std::ptr::null_mut());
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Point the engine at an `int` the host sets to non-zero on interrupt.
///
/// # Safety
/// `flag` must stay valid for the life of the process.
pub unsafe fn install_host_flag(flag: *mut i32) {
    HOST_FLAG.store(flag, Ordering::SeqCst);
}

/// Ask running work to stop (from any thread).
pub fn cancel() {
    CANCELLED.store(true, Ordering::SeqCst);
}

/// True when the work should stop.
pub fn interrupted() -> bool {
    if CANCELLED.load(Ordering::Relaxed) {
        return true;
    }
    let p = HOST_FLAG.load(Ordering::Relaxed);
    // SAFETY: the host guarantees the pointer stays valid; a racy read of an
    // int flag is what the host's own signal handler protocol expects.
    !p.is_null() && unsafe { std::ptr::read_volatile(p) } != 0
}

/// Clear a previous cancellation.
pub(crate) fn clear() {
    CANCELLED.store(false, Ordering::SeqCst);
}
