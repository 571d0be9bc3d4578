//! Progress on standard error, only when it is a terminal: a spinner per
//! file showing the bytes the engine has decoded, and a bar over files.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Progress {
    multi: Option<MultiProgress>,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        Progress {
            multi: enabled.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr())),
        }
    }

    /// A spinner with `message`, counting the bytes the engine processes.
    pub fn spinner(&self, message: String) -> Spinner {
        let Some(multi) = &self.multi else {
            return Spinner {
                pb: ProgressBar::hidden(),
                stop: Arc::new(AtomicBool::new(true)),
                ticker: None,
            };
        };
        let pb = multi.add(ProgressBar::new_spinner());
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner:.green} {msg} {bytes} ({binary_bytes_per_sec}, {elapsed})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        pb.set_message(message);
        pb.enable_steady_tick(Duration::from_millis(100));
        let stop = Arc::new(AtomicBool::new(false));
        let base = rdarrow_arrow::base::cancel::progress();
        let ticker = {
            let (pb, stop) = (pb.clone(), stop.clone());
            std::thread::Builder::new()
                .name("rdarrow-progress".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        pb.set_position(rdarrow_arrow::base::cancel::progress().saturating_sub(base));
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
                .ok()
        };
        Spinner { pb, stop, ticker }
    }

    /// A bar over `len` items.
    pub fn bar(&self, len: u64, unit: &str) -> ProgressBar {
        let Some(multi) = &self.multi else {
            return ProgressBar::hidden();
        };
        let pb = multi.add(ProgressBar::new(len));
        pb.set_style(
            ProgressStyle::with_template(&format!(
                "[{{bar:30.cyan/blue}}] {{pos}}/{{len}} {unit} ({{elapsed}})"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        pb
    }

    /// A closing line (only on a terminal).
    pub fn note(&self, message: String) {
        if let Some(multi) = &self.multi {
            let _ = multi.println(message);
        }
    }
}

pub struct Spinner {
    pb: ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Spinner {
    pub fn set_message(&self, message: String) {
        self.pb.set_message(message);
    }

    /// Stop and remove the spinner.
    pub fn clear(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.pb.finish_and_clear();
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.pb.finish_and_clear();
    }
}
