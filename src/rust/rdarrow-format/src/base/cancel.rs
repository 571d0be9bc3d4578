//! Interruption and progress, without knowing who asks: a host (such as
//! the R bindings) points the engine at an interrupt flag it owns, and the
//! engine polls it at every buffer refill, flush and conversion step, so
//! long work stops within a fraction of a second. Progress is a byte
//! counter the host may read from another thread, or, where the work runs
//! on the host's own thread, a function of the host's that the same polls
//! call ([`with_poll`]).

use crate::base::error::{Error, ErrorKind, Result};
pub use crate::base::flag::{cancel, install_host_flag, interrupted};
use std::sync::atomic::{AtomicU64, Ordering};

static PROGRESS: AtomicU64 = AtomicU64::new(0);
/// A download's bytes received, and its length (0: unknown), plus one
/// while one runs (0: none).
static DOWNLOADED: AtomicU64 = AtomicU64::new(0);
static DOWNLOAD_LEN: AtomicU64 = AtomicU64::new(0);

/// Clear a previous cancellation before new work starts.
pub fn reset() {
    crate::base::flag::clear();
    PROGRESS.store(0, Ordering::Relaxed);
    DOWNLOADED.store(0, Ordering::Relaxed);
    DOWNLOAD_LEN.store(0, Ordering::Relaxed);
}

thread_local! {
    /// The host's function polled on this thread ([`with_poll`]).
    static POLL: std::cell::Cell<Option<*mut (dyn FnMut() + 'static)>> =
        const { std::cell::Cell::new(None) };
}

/// Run `work` with `poll` called at each of the engine's polls on this
/// thread (at every buffer refill and conversion step), so that a host
/// running work on its own thread can show progress. `poll` must not start
/// engine work itself.
pub fn with_poll<T>(poll: &mut dyn FnMut(), work: impl FnOnce() -> T) -> T {
    struct Restore(Option<*mut (dyn FnMut() + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            POLL.with(|p| p.set(self.0));
        }
    }
    // SAFETY: only the lifetime is erased; the pointer is removed again
    // (by `Restore`, also on a panic) before `poll`'s borrow ends
    let ptr: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(poll) };
    let _restore = Restore(POLL.with(|p| p.replace(Some(ptr))));
    work()
}

fn poll_host() {
    POLL.with(|p| {
        // taken while it runs: a poll inside the poll is not repeated
        if let Some(f) = p.take() {
            // SAFETY: set by `with_poll`, whose borrow outlives this call
            unsafe { (*f)() };
            p.set(Some(f));
        }
    })
}

/// An error if the work should stop.
#[inline]
pub fn check() -> Result<()> {
    poll_host();
    if interrupted() {
        return Err(Error::new(
            ErrorKind::Interrupted,
            "interrupted by the user",
        ));
    }
    Ok(())
}

/// Record that `n` more bytes were processed.
#[inline]
pub fn advance(n: u64) {
    PROGRESS.fetch_add(n, Ordering::Relaxed);
}

/// Bytes processed since the last reset.
pub fn progress() -> u64 {
    PROGRESS.load(Ordering::Relaxed)
}

/// A download of `len` bytes (when known) has started.
pub fn download_started(len: Option<u64>) {
    DOWNLOADED.store(0, Ordering::Relaxed);
    DOWNLOAD_LEN.store(len.map_or(1, |l| l.saturating_add(1)), Ordering::Relaxed);
}

/// Record that `n` more bytes of a download arrived.
#[inline]
pub fn downloaded(n: u64) {
    DOWNLOADED.fetch_add(n, Ordering::Relaxed);
}

/// The running download's bytes received and length (when known), if one
/// has started since the last reset.
pub fn download() -> Option<(u64, Option<u64>)> {
    match DOWNLOAD_LEN.load(Ordering::Relaxed) {
        0 => None,
        1 => Some((DOWNLOADED.load(Ordering::Relaxed), None)),
        l => Some((DOWNLOADED.load(Ordering::Relaxed), Some(l - 1))),
    }
}
