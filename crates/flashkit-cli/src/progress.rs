//! Progress bars on stderr, drawn only when stdout is a terminal.

use flashkit_core::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;

/// One run's bar: a bar per phase, replaced as the next phase starts. Several threads of one
/// parallel merge may report at once (one call per 16 MiB output block or per run; the
/// simulator reports every 65,536 requests), so the bar sits behind a cold lock.
pub struct Bar {
    label: String,
    bar: Mutex<Option<ProgressBar>>,
    enabled: bool,
}

impl Bar {
    pub fn new(label: &str) -> Self {
        Bar {
            label: label.to_string(),
            bar: Mutex::new(None),
            enabled: wanted(),
        }
    }

    fn with_bar(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        if self.enabled {
            // A poisoned lock means a reporting thread panicked; the bar is not worth a
            // second panic.
            if let Ok(mut bar) = self.bar.lock() {
                f(&mut bar);
            }
        }
    }
}

impl Drop for Bar {
    /// A run that failed leaves no half-drawn bar above its error message.
    fn drop(&mut self) {
        self.finish();
    }
}

impl Progress for Bar {
    fn start(&self, phase: &str, total: Option<u64>) {
        self.with_bar(|bar| {
            if let Some(old) = bar.take() {
                old.finish_and_clear();
            }
            *bar = Some(styled(&self.label, phase, total));
        });
    }

    fn advance(&self, units: u64) {
        self.with_bar(|bar| {
            if let Some(bar) = bar {
                bar.inc(units);
            }
        });
    }

    fn finish(&self) {
        self.with_bar(|bar| {
            if let Some(old) = bar.take() {
                old.finish_and_clear();
            }
        });
    }
}

/// A bar with the project's style: `label phase [=====>   ] done/total rate eta`.
/// Set to `1` in a child's environment to have it draw its bars (on standard error) although
/// its standard output is a pipe: `reproduce all` reads its children's output and passes it
/// on to a terminal.
pub const FORCE_BARS: &str = "FLASHKIT_PROGRESS";

/// Whether to draw bars: when standard output is a terminal (a script's or a benchmark's
/// output stays clean), or when [`FORCE_BARS`] asks.
fn wanted() -> bool {
    std::io::stdout().is_terminal() || std::env::var_os(FORCE_BARS).is_some_and(|v| v == "1")
}

fn styled(label: &str, phase: &str, total: Option<u64>) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let template = "{prefix:>28} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}";
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(format!("{label} {phase}"));
    bar
}

/// Bars for runs on several threads (`sweep`, `compare`): an overall bar of runs done and a
/// status bar per worker showing its run's phase. Lines said as runs finish go above the
/// bars on a terminal, else to standard error.
pub struct WorkerBars {
    multi: MultiProgress,
    overall: ProgressBar,
    workers: Vec<ProgressBar>,
    drawn: bool,
}

impl WorkerBars {
    /// `runs` runs on `workers` threads; the overall bar reads `label [====>  ] done/runs`.
    pub fn new(label: &str, runs: usize, workers: usize) -> WorkerBars {
        let drawn = wanted();
        let target = if drawn {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(ProgressBar::new(runs as u64));
        let template =
            format!("{label} [{{bar:30}}] {{pos}}/{{len}} runs, elapsed {{elapsed}}, eta {{eta}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            overall.set_style(style.progress_chars("=> "));
        }
        let workers = (0..workers)
            .map(|_| multi.add(ProgressBar::new(0)))
            .collect();
        WorkerBars {
            multi,
            overall,
            workers,
            drawn,
        }
    }

    /// The progress of the run `worker` starts now, named `name` on its bar.
    pub fn worker(&self, worker: usize, name: &str) -> WorkerBar {
        let bar = self.workers[worker].clone();
        bar.set_message(name.to_string());
        WorkerBar { bar }
    }

    /// A run of `worker` is over; `line`, if any, is said about it.
    pub fn finished(&self, worker: usize, line: Option<&str>) {
        self.overall.inc(1);
        if let Some(line) = line {
            if self.drawn {
                let _ = self.multi.println(line);
            } else {
                eprintln!("{line}");
            }
        }
        self.workers[worker].set_message("idle");
    }

    /// Remove every bar.
    pub fn clear(&self) {
        self.overall.finish_and_clear();
        for bar in &self.workers {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

/// One worker's bar of [`WorkerBars`]: the phase and its progress.
pub struct WorkerBar {
    bar: ProgressBar,
}

impl Progress for WorkerBar {
    fn start(&self, phase: &str, total: Option<u64>) {
        self.bar.set_length(total.unwrap_or(0));
        self.bar.set_position(0);
        if let Ok(style) =
            ProgressStyle::with_template("  {prefix:<28} [{bar:20}] {percent:>3}% {msg}")
        {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_prefix(phase.to_string());
    }
    fn advance(&self, units: u64) {
        self.bar.inc(units);
    }
}
