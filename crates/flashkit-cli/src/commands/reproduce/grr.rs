//! `flashkit reproduce grr`: the GRR paper's evaluation (Jin, Cho, Chung, IMCOM 2014),
//! run by [`flashkit_lab::repro::grr`]; this module turns the options into its spec and
//! renders what comes back.

use super::{Figures, lab_failure, show};
use crate::Outcome;
use clap::Args;
use flashkit_lab::config::{Count, Size};
use flashkit_lab::repro::grr::{self, GrrSpec};
use std::path::PathBuf;

/// The options of `flashkit reproduce grr`.
#[derive(Args, Debug)]
pub struct GrrArgs {
    /// A fifth of the workload (1,000 files instead of 5,000): about 2 s instead of 18 s in
    /// a release build; the trends mostly stay (a smaller tree leaves GRR's sets room, so k
    /// matters less).
    #[arg(long)]
    pub quick: bool,
    /// Experiments to run, comma separated: fig6, fig7, fig8 [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Files created (nfc) [default: 5k; 1k with --quick].
    #[arg(long, value_name = "N")]
    pub files: Option<Count>,
    /// Modifications per file (fmc).
    #[arg(long, default_value_t = 4.0, value_name = "N")]
    pub fmc: f64,
    /// Buffer size.
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub buffer_size: Size,
    /// Cold region of the clean-first buffers (w), outside the window sweep.
    #[arg(long, default_value_t = 0.5, value_name = "FRACTION")]
    pub window: f64,
    /// Flash size (whole 128 KiB blocks).
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub capacity: Size,
    /// Seed of the workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every run's figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long)]
    pub wall_clock_in_json: bool,
    /// Write grr.json (what --json writes) and the paper's figures as SVG into this
    /// directory, created if missing: fig6a.svg, fig6b.svg, fig7a-c.svg, fig8a.svg,
    /// fig8b.svg (those of the experiments run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl GrrArgs {
    /// The lab's spec of these options.
    pub fn spec(&self) -> GrrSpec {
        GrrSpec {
            quick: self.quick,
            only: self.only.clone(),
            files: self.files.map(|c| c.0),
            fmc: self.fmc,
            buffer_size: self.buffer_size.0,
            window: self.window,
            capacity: self.capacity.0,
            seed: self.seed,
            wall_clock_in_json: self.wall_clock_in_json,
            workers: None,
        }
    }
}

/// Run the experiments `--only` asks for (all by default), print their tables beside the
/// paper's claims, and write `--json` and `--out` when asked.
pub fn run(args: &GrrArgs) -> Outcome {
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let mut bar = crate::progress::Bar::new("reproduce grr");
    let reproduction = grr::run(&args.spec(), &mut bar).map_err(lab_failure)?;
    show(&reproduction, args.json.as_deref(), None, figures.as_mut())
}
