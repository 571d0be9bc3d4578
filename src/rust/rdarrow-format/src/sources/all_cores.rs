//! Many inputs in one call: the work of each input (a file's read, its
//! listing) runs on several threads at once, and the results reach the
//! calling thread one by one in the inputs' order, so that a consumer bound
//! to one thread (R's main thread builds R objects) takes each as it comes
//! while the next inputs are being read. At most a few results wait to be
//! taken, so memory stays that of a few inputs, not of all of them.

use crate::read::ReadOptions;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The stack of each worker thread. Reserved address space, committed as
/// used; a parse nests on it as deeply as [`on_thread_with_stack`] allows.
pub const WORKER_STACK: usize = 1 << 30;

/// The options for a parse on a thread with `stack` bytes of stack: the
/// parse runs on that thread itself ([`ReadOptions::parse_here`]) where
/// `opts.max_depth` levels of nesting fit in half of it, on a thread of
/// its own otherwise.
pub fn on_thread_with_stack(opts: &ReadOptions, stack: usize) -> ReadOptions {
    ReadOptions {
        parse_here: opts.max_depth.saturating_mul(crate::read::STACK_PER_LEVEL) <= stack / 2,
        ..opts.clone()
    }
}

/// The threads for `n` inputs: one per core, at most one per input.
pub fn threads_for(n: usize) -> usize {
    crate::base::limits::cores().min(n).max(1)
}

/// Results that may wait to be taken, per thread, whatever their weight.
const AHEAD_PER_THREAD: usize = 2;
/// Results that may wait to be taken at most, per thread.
const MAX_AHEAD_PER_THREAD: usize = 32;
/// The weight (bytes of input) the waiting results may have beyond the
/// first [`AHEAD_PER_THREAD`] per thread.
const AHEAD_BYTES: u64 = 64 << 20;
/// Results ready, per thread, for which a worker wakes the caller (it is
/// also woken when a worker has to wait for room, and at the end).
const WAKE_BATCH_PER_THREAD: usize = 8;
/// No input waits for the caller.
const NOT_WAITING: usize = usize::MAX;

struct Shared<T> {
    /// Results not yet taken, with their weights.
    done: Mutex<BTreeMap<usize, (T, u64)>>,
    /// The index the caller takes next (workers wait to run too far ahead).
    taken: AtomicUsize,
    /// The weight of the inputs started and not yet taken.
    pending: AtomicU64,
    /// The index the caller is parked for ([`NOT_WAITING`]: none).
    waiting_for: AtomicUsize,
    /// Workers waiting for room.
    blocked: AtomicUsize,
    /// Workers not yet done with their inputs.
    running: AtomicUsize,
    room: Condvar,
    stop: AtomicBool,
    /// A panic of `work`, raised on the calling thread.
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, (T, u64)>> {
        self.done.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether input `i` of weight `w` may start: the first few after the
    /// one the caller takes next always may; more while their weight stays
    /// within [`AHEAD_BYTES`].
    fn may_start(&self, i: usize, w: u64, threads: usize) -> bool {
        let taken = self.taken.load(Ordering::SeqCst);
        i < taken + threads * AHEAD_PER_THREAD
            || (i < taken + threads * MAX_AHEAD_PER_THREAD
                && self.pending.load(Ordering::SeqCst) + w <= AHEAD_BYTES)
    }
}

/// Run `work(i, &items[i])` for every input on `threads` worker threads
/// (each with a [`WORKER_STACK`]), and hand each result to `take(i, result)`
/// on the calling thread, in the order of `items`. Inputs are read ahead of
/// the caller as far as their `weight` (a worker's estimate of an input's
/// bytes, such as a file's size) allows, so that many small inputs keep
/// every thread busy and a few large ones do not fill memory. While it
/// waits, the calling thread runs `wait` every 50 ms at most, and whenever
/// a worker wakes it (`std::thread::Thread::unpark`), so that it can do for
/// the workers what only it may do (also after a `Break`, until the
/// workers have ended). `take` returning `Break` stops: the inputs not
/// started are not read. A panic in `work` is raised here once every
/// worker has ended.
pub fn in_order<I: Sync, T: Send>(
    items: &[I],
    threads: usize,
    weight: impl Fn(&I) -> u64 + Sync,
    work: impl Fn(usize, &I) -> T + Sync,
    wait: &mut dyn FnMut(),
    take: &mut dyn FnMut(usize, T) -> ControlFlow<()>,
) {
    let n = items.len();
    if n == 0 {
        return;
    }
    let threads = threads.clamp(1, n);
    let shared = Shared {
        done: Mutex::new(BTreeMap::new()),
        taken: AtomicUsize::new(0),
        pending: AtomicU64::new(0),
        waiting_for: AtomicUsize::new(NOT_WAITING),
        blocked: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        room: Condvar::new(),
        stop: AtomicBool::new(false),
        panic: Mutex::new(None),
    };
    let next = AtomicUsize::new(0);
    let caller = std::thread::current();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for t in 0..threads {
            let (shared, next, work, weight, caller) =
                (&shared, &next, &work, &weight, caller.clone());
            // counted before it starts, so that it cannot end first
            shared.running.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name(format!("rdarrow-input-{t}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    work_on(shared, next, n, items, weight, work, threads, &caller);
                    // the caller may be waiting for the workers to end
                    shared.running.fetch_sub(1, Ordering::SeqCst);
                    caller.unpark();
                });
            match spawned {
                Ok(h) => handles.push(h),
                // no more threads: those started do the work
                Err(_) if !handles.is_empty() => {
                    shared.running.fetch_sub(1, Ordering::SeqCst);
                    break;
                }
                Err(e) => panic!("cannot start a worker thread: {e}"),
            }
        }
        let mut expect = 0;
        while expect < n {
            // all under the lock the workers take to insert a result and
            // to wait for room, so that no wake-up is missed either way
            let got = {
                let mut done = shared.lock();
                let got = done.remove(&expect);
                match &got {
                    Some((_, w)) => {
                        shared.taken.store(expect + 1, Ordering::SeqCst);
                        shared.pending.fetch_sub(*w, Ordering::SeqCst);
                        shared.waiting_for.store(NOT_WAITING, Ordering::SeqCst);
                    }
                    None => shared.waiting_for.store(expect, Ordering::SeqCst),
                }
                got
            };
            match got {
                Some((out, _)) => {
                    if shared.blocked.load(Ordering::SeqCst) > 0 {
                        shared.room.notify_all();
                    }
                    if take(expect, out).is_break() {
                        break;
                    }
                    expect += 1;
                }
                None => {
                    if shared.stop.load(Ordering::SeqCst) || handles.iter().all(|h| h.is_finished())
                    {
                        // a worker panicked: raised below
                        break;
                    }
                    std::thread::park_timeout(Duration::from_millis(50));
                    wait();
                }
            }
        }
        shared.stop.store(true, Ordering::SeqCst);
        shared.room.notify_all();
        // the workers still reading may need the caller until they end
        while shared.running.load(Ordering::SeqCst) > 0 {
            std::thread::park_timeout(Duration::from_millis(10));
            wait();
        }
        let mut panicked = shared
            .panic
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        for h in handles {
            if let Err(p) = h.join() {
                panicked.get_or_insert(p);
            }
        }
        if let Some(p) = panicked {
            std::panic::resume_unwind(p);
        }
    });
}

/// One worker's loop: take the next input, wait for room, read it, hand
/// in the result.
#[allow(clippy::too_many_arguments)]
fn work_on<I, T>(
    shared: &Shared<T>,
    next: &AtomicUsize,
    n: usize,
    items: &[I],
    weight: &(impl Fn(&I) -> u64 + Sync),
    work: &(impl Fn(usize, &I) -> T + Sync),
    threads: usize,
    caller: &std::thread::Thread,
) {
    loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= n {
            break;
        }
        let w = weight(&items[i]);
        if !shared.may_start(i, w, threads) {
            let mut done = shared.lock();
            shared.blocked.fetch_add(1, Ordering::SeqCst);
            // the caller makes room: wake it if it can
            if done.contains_key(&shared.waiting_for.load(Ordering::SeqCst)) {
                caller.unpark();
            }
            while !shared.may_start(i, w, threads) && !shared.stop.load(Ordering::SeqCst) {
                done = shared
                    .room
                    .wait_timeout(done, Duration::from_millis(50))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            shared.blocked.fetch_sub(1, Ordering::SeqCst);
        }
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        shared.pending.fetch_add(w, Ordering::SeqCst);
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i, &items[i])));
        match out {
            Ok(out) => {
                // the caller is woken for a batch of results,
                // not for each: waking a sleeping thread costs
                // more than a small input's read (tens of
                // microseconds on a virtual machine)
                let wake = {
                    let mut done = shared.lock();
                    done.insert(i, (out, w));
                    done.contains_key(&shared.waiting_for.load(Ordering::SeqCst))
                        && (done.len() >= threads * WAKE_BATCH_PER_THREAD
                            || shared.blocked.load(Ordering::SeqCst) > 0
                            || next.load(Ordering::SeqCst) >= n)
                };
                if wake {
                    caller.unpark();
                }
            }
            Err(p) => {
                shared
                    .panic
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(p);
                shared.stop.store(true, Ordering::SeqCst);
                shared.room.notify_all();
                caller.unpark();
            }
        }
    }
}

/// The weight of a file for [`in_order`]: its size (0 where it is not a
/// local file, such as a URL).
pub fn file_weight(path: impl AsRef<std::path::Path>) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_whatever_order_they_finish_in() {
        let items: Vec<u64> = (0..40).collect();
        let mut seen = Vec::new();
        in_order(
            &items,
            3,
            |_| 1,
            |i, x| {
                // later inputs finish first
                std::thread::sleep(Duration::from_millis((40 - x) % 7));
                (i, x * 10)
            },
            &mut || {},
            &mut |i, (j, v)| {
                assert_eq!(i, j);
                seen.push(v);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(seen, items.iter().map(|x| x * 10).collect::<Vec<_>>());
    }

    #[test]
    fn a_break_stops_the_inputs_not_started() {
        let items: Vec<usize> = (0..1000).collect();
        let started = AtomicUsize::new(0);
        let mut taken = 0;
        in_order(
            &items,
            2,
            |_| 1 << 30,
            |_, _| {
                started.fetch_add(1, Ordering::SeqCst);
            },
            &mut || {},
            &mut |i, ()| {
                taken += 1;
                if i == 3 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(taken, 4);
        // at most the ones ahead were started after the break
        assert!(started.load(Ordering::SeqCst) <= 4 + 2 * AHEAD_PER_THREAD + 2);
    }

    #[test]
    fn light_inputs_run_far_ahead_of_a_slow_caller_and_heavy_ones_do_not() {
        for (w, most) in [
            (1u64, 2 * MAX_AHEAD_PER_THREAD),
            (AHEAD_BYTES, 2 * AHEAD_PER_THREAD),
        ] {
            let items: Vec<usize> = (0..500).collect();
            let started = AtomicUsize::new(0);
            let mut ahead = 0;
            in_order(
                &items,
                2,
                |_| w,
                |_, _| started.fetch_add(1, Ordering::SeqCst),
                &mut || {},
                &mut |i, _| {
                    if i == 0 {
                        // the caller is slow on the first: the workers go on
                        std::thread::sleep(Duration::from_millis(200));
                        ahead = started.load(Ordering::SeqCst);
                    }
                    ControlFlow::Continue(())
                },
            );
            // the first, and those started while it was being taken
            assert!(
                ahead <= most + 3,
                "weight {w}: {ahead} started, at most {most}"
            );
            assert!(
                ahead >= most.min(500) - 2,
                "weight {w}: only {ahead} started"
            );
        }
    }

    #[test]
    fn the_caller_is_woken_to_serve_while_it_waits() {
        // a worker that needs the caller: it waits until the caller's
        // `wait` has run (as a read waits for R to allocate)
        let served = AtomicBool::new(false);
        let items = [0u8];
        let mut got = None;
        in_order(
            &items,
            1,
            |_| 0,
            |_, _| {
                while !served.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                7
            },
            &mut || served.store(true, Ordering::SeqCst),
            &mut |_, v| {
                got = Some(v);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(got, Some(7));
    }

    #[test]
    fn after_a_break_the_caller_still_serves_the_workers_until_they_end() {
        // input 0 fails at once; input 1 needs the caller to go on (as a
        // read waits for R to allocate its vector)
        let served = AtomicUsize::new(0);
        let items = [0u8, 1];
        in_order(
            &items,
            2,
            |_| 0,
            |_, &x| {
                if x == 1 {
                    let seen = served.load(Ordering::SeqCst);
                    while served.load(Ordering::SeqCst) < seen + 3 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                x
            },
            &mut || {
                served.fetch_add(1, Ordering::SeqCst);
            },
            &mut |_, _| ControlFlow::Break(()),
        );
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller() {
        let items = [1, 2, 3];
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_order(
                &items,
                2,
                |_| 0,
                |_, &x| {
                    if x == 2 {
                        panic!("boom")
                    }
                    x
                },
                &mut || {},
                &mut |_, _| ControlFlow::Continue(()),
            )
        }));
        assert!(r.is_err());
    }

    #[test]
    fn the_stack_rule_parses_on_the_thread_where_the_nesting_fits() {
        let deep = ReadOptions {
            max_depth: 1 << 20,
            ..ReadOptions::default()
        };
        assert!(!on_thread_with_stack(&deep, WORKER_STACK).parse_here);
        let usual = ReadOptions {
            max_depth: 10_000,
            ..ReadOptions::default()
        };
        assert!(on_thread_with_stack(&usual, WORKER_STACK).parse_here);
    }
}
