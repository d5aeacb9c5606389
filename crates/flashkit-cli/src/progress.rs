//! Progress bars on stderr, drawn only when stdout is a terminal.

use flashkit_sim::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Bar {
    label: String,
    bar: Option<ProgressBar>,
    enabled: bool,
}

impl Bar {
    pub fn new(label: &str) -> Self {
        Bar {
            label: label.to_string(),
            bar: None,
            enabled: std::io::stdout().is_terminal(),
        }
    }
}

impl Progress for Bar {
    fn start(&mut self, phase: &str, total: Option<u64>) {
        if !self.enabled {
            return;
        }
        let bar = match total {
            Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = "{prefix:>28} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}";
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(format!("{} {phase}", self.label));
        self.bar = Some(bar);
    }

    fn advance(&mut self, units: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(units);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
