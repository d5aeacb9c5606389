//! `flashkit reproduce fast`: the FAST paper's evaluation (Lee et al., ACM TECS 2007), run
//! by [`flashkit_lab::repro::fast`]; this module turns the options into its spec and renders
//! what comes back.

use super::{Figures, lab_failure, show};
use crate::Outcome;
use clap::Args;
use flashkit_lab::repro::fast::{self, FastSpec};
use std::path::PathBuf;

/// Options of `flashkit reproduce fast`.
#[derive(Args, Debug)]
pub struct FastArgs {
    /// Fraction of the paper's write counts to generate per pattern (Table I: A 2.2M,
    /// B 3.1M, C 398k, D 405k, E 150k sector writes).
    #[arg(long, default_value_t = 1.0, value_name = "FRACTION")]
    pub scale: f64,
    /// Log-block counts (Fig. 10's axis).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4,8,16,32,64",
        value_name = "LIST"
    )]
    pub log_blocks: Vec<u32>,
    /// Patterns to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "A,B,C,D,E",
        value_name = "LIST"
    )]
    pub patterns: Vec<String>,
    /// Logical capacity of the simulated card.
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub capacity: flashkit_lab::config::Size,
    /// Over-provisioning (spare blocks hold the log blocks plus one for merges).
    #[arg(long, default_value_t = 0.03, value_name = "FRACTION")]
    pub op: f64,
    /// Where the real trace excerpts are.
    #[arg(long, default_value = "../shared/traces", value_name = "DIR")]
    pub traces: PathBuf,
    /// Skip the real traces.
    #[arg(long, conflicts_with = "traces")]
    pub no_traces: bool,
    /// Seed of the generated patterns.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs at a time [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Write every run's report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one row per run as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Create DIR and write there fast.json (what --json writes) and the paper's figures as
    /// SVG: fig10-A-erases.svg, fig10-A-time.svg ... for each pattern, fig10-no-sw.svg,
    /// table2-A.svg, table2-B.svg, section3.5.svg, traces-1.svg ... (docs/reproduction/fast.md,
    /// "Figures").
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A smoke run in seconds: scale 0.02 and log blocks 4 and 16, every pattern and trace.
    #[arg(long, conflicts_with_all = ["scale", "log_blocks"])]
    pub quick: bool,
}

impl FastArgs {
    /// The lab's spec of these options.
    pub fn spec(&self) -> FastSpec {
        FastSpec {
            scale: self.scale,
            log_blocks: self.log_blocks.clone(),
            patterns: self.patterns.clone(),
            capacity: self.capacity.0,
            op: self.op,
            traces: self.traces.clone(),
            no_traces: self.no_traces,
            seed: self.seed,
            jobs: self.jobs,
            quick: self.quick,
        }
    }
}

/// Run the evaluation, print its tables and ledger, and write `--json`, `--csv` and `--out`.
pub fn run(args: FastArgs) -> Outcome {
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let mut bar = crate::progress::Bar::new("reproduce fast");
    let reproduction = fast::run(&args.spec(), &mut bar).map_err(lab_failure)?;
    show(
        &reproduction,
        args.json.as_deref(),
        args.csv.as_deref(),
        figures.as_mut(),
    )
}
