//! Where the engine's work runs. Long work runs off R's main thread: on a
//! worker thread (with a large stack) while the main thread waits, shows
//! progress in interactive sessions, and lets the engine see R's interrupt
//! flag; the worker never touches R. A read of a small file runs on the
//! main thread itself ([`read`]): starting and waking a thread would cost
//! more than the work. A read into R objects runs on the main thread
//! whatever the file's size ([`read_for_r`]), so that R holds each value
//! as it is read.

use extendr_api::prelude::*;
use rdarrow_arrow::sources::all_cores::WORKER_STACK;
use std::time::{Duration, Instant};

extern "C" {
    static mut R_interrupts_pending: i32;
}

/// Show progress only after this long.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

fn progress_wanted() -> bool {
    eval_string("isTRUE(interactive()) && isTRUE(getOption('rdarrow.progress', TRUE))")
        .ok()
        .and_then(|r| r.as_bool())
        .unwrap_or(false)
}

fn call_r(f: &str, args: &[Robj]) -> Option<Robj> {
    let fun = eval_string(f).ok()?;
    let fun = fun.as_function()?;
    fun.call(Pairlist::from_pairs(args.iter().map(|a| ("", a.clone()))))
        .ok()
}

/// A progress display (cli) for work that has taken more than two
/// seconds, in interactive sessions. Main thread only.
pub struct Progress {
    label: String,
    /// Whether the session wants progress (`None`: not asked yet).
    show: Option<bool>,
    start: Instant,
    last: Instant,
    bar: Option<Robj>,
}

impl Progress {
    /// The session is asked whether it wants progress (see
    /// [`progress_wanted`]) only once the work has taken long enough.
    pub fn new(label: &str) -> Self {
        let now = Instant::now();
        Progress {
            label: label.to_string(),
            show: None,
            start: now,
            last: now,
            bar: None,
        }
    }

    /// `done` bytes so far, of `total` where known (a download's
    /// length); shown at most every 50 ms.
    pub fn tick_of(&mut self, done: f64, total: Option<f64>) {
        if self.show == Some(false)
            || self.start.elapsed() < PROGRESS_AFTER
            || self.last.elapsed() < Duration::from_millis(50)
            || !*self.show.get_or_insert_with(progress_wanted)
        {
            return;
        }
        self.last = Instant::now();
        match &self.bar {
            None => {
                let total: Robj = total.map_or_else(|| Robj::from(f64::NAN), Robj::from);
                self.bar = call_r(
                    "rdarrow:::progress_start",
                    &[self.label.as_str().into(), total],
                )
            }
            Some(id) => {
                call_r("rdarrow:::progress_update", &[id.clone(), done.into()]);
            }
        }
    }

    /// `done` bytes so far (shown at most every 50 ms).
    pub fn tick(&mut self, done: f64) {
        self.tick_of(done, None)
    }

    /// The engine's own count: a download's bytes, else those processed.
    pub fn tick_engine(&mut self) {
        match rdarrow_arrow::base::cancel::download() {
            // a URL: its bytes received, of its length
            Some((got, len)) => self.tick_of(got as f64, len.map(|l| l as f64)),
            None => self.tick(rdarrow_arrow::base::cancel::progress() as f64),
        }
    }

    pub fn done(self) {
        if let Some(id) = self.bar {
            call_r("rdarrow:::progress_done", &[id]);
        }
    }
}

/// Clear R's pending interrupt (the engine has reported it as an error).
/// Main thread only (where the bindings return to R).
pub fn consume_interrupt() {
    // SAFETY: R's own flag, written on the main thread, as R's interrupt
    // handling does.
    unsafe { *std::ptr::addr_of_mut!(R_interrupts_pending) = 0 };
}

/// Point the engine at R's interrupt flag and clear an old cancellation.
pub fn watch_interrupts() {
    rdarrow_arrow::base::cancel::reset();
    // SAFETY: R's interrupt flag is a process-wide int that lives forever.
    unsafe {
        rdarrow_arrow::base::cancel::install_host_flag(std::ptr::addr_of_mut!(R_interrupts_pending))
    };
}

/// Run a read of `path` with `opts`: a small local file on the main thread
/// (as the engine's [`rdarrow_arrow::read_small_here`] rules), anything
/// else on a worker, as [`run_serving`] runs it. Either way the parse runs
/// on that thread, not on one of its own, where the stack allows.
pub fn read<T: Send>(
    label: &str,
    path: &(impl rdarrow_arrow::Origin + ?Sized),
    opts: &rdarrow_arrow::ReadOptions,
    serve: &mut dyn FnMut(),
    work: impl Fn(&rdarrow_arrow::ReadOptions) -> rdarrow_arrow::Result<T> + Send + Sync,
) -> rdarrow_arrow::Result<T> {
    watch_interrupts();
    let here = rdarrow_arrow::read_small_here(path, opts, &work);
    here_or_on_worker(here, label, opts, serve, work)
}

/// The read done here, if it was (`here`), else `work` on a worker (with a
/// deep stack), as [`run_serving`] runs it.
fn here_or_on_worker<T: Send>(
    here: Option<rdarrow_arrow::Result<T>>,
    label: &str,
    opts: &rdarrow_arrow::ReadOptions,
    serve: &mut dyn FnMut(),
    work: impl Fn(&rdarrow_arrow::ReadOptions) -> rdarrow_arrow::Result<T> + Send + Sync,
) -> rdarrow_arrow::Result<T> {
    if let Some(done) = here {
        return done;
    }
    watch_interrupts();
    let on_worker = rdarrow_arrow::sources::all_cores::on_thread_with_stack(opts, WORKER_STACK);
    run_serving(label, serve, || work(&on_worker))
}

/// Run a read into R objects, `work`, whose consumer has R allocate on
/// the main thread (`r_memory`): on this thread, showing progress from the
/// engine's polls, where its stack has room for the object's nesting;
/// otherwise on a worker, as [`run_serving`] runs it.
pub fn read_for_r<T: Send>(
    label: &str,
    opts: &rdarrow_arrow::ReadOptions,
    serve: &mut dyn FnMut(),
    work: impl Fn(&rdarrow_arrow::ReadOptions) -> rdarrow_arrow::Result<T> + Send + Sync,
) -> rdarrow_arrow::Result<T> {
    watch_interrupts();
    let mut progress = Progress::new(label);
    let here = rdarrow_arrow::base::cancel::with_poll(&mut || progress.tick_engine(), || {
        rdarrow_arrow::read_here(opts, &work)
    });
    progress.done();
    here_or_on_worker(here, label, opts, serve, work)
}

/// Run `work` on a worker thread; the main thread polls for its end.
pub fn run<T: Send>(label: &str, work: impl FnOnce() -> T + Send) -> T {
    run_serving(label, &mut || {}, work)
}

/// As [`run`], with the main thread calling `serve` whenever the worker
/// wakes it (to do for the worker what only the main thread may: allocate
/// R vectors, see [`crate::r_memory`]).
pub fn run_serving<T: Send>(
    label: &str,
    serve: &mut dyn FnMut(),
    work: impl FnOnce() -> T + Send,
) -> T {
    watch_interrupts();
    let main = std::thread::current();
    // set as the work ends, before the thread has (`is_finished()` would
    // miss the wake-up and wait a whole poll)
    let finished = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let finished = &finished;
        let handle = std::thread::Builder::new()
            .name("rdarrow-job".into())
            .stack_size(WORKER_STACK)
            .spawn_scoped(scope, move || {
                let out = work();
                finished.store(true, std::sync::atomic::Ordering::SeqCst);
                main.unpark();
                out
            })
            .expect("cannot start a worker thread");
        let mut progress = Progress::new(label);
        while !finished.load(std::sync::atomic::Ordering::SeqCst) && !handle.is_finished() {
            std::thread::park_timeout(Duration::from_millis(50));
            serve();
            progress.tick_engine();
        }
        progress.done();
        match handle.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    })
}
