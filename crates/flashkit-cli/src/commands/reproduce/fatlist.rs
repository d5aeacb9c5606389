//! `flashkit reproduce fatlist`: the fat-list paper's evaluation (section 0.6) on the
//! K8C1215 NOR model, run by [`flashkit_lab::repro::fatlist`]; this module turns the options
//! into its spec and renders what comes back (`fatlist.json` and each figure as SVG with
//! `--out DIR`).

use super::{Figures, lab_failure, show};
use crate::Outcome;
use clap::Args;
use flashkit_lab::config::Count;
use flashkit_lab::repro::fatlist::{self, FatlistSpec};
use std::path::PathBuf;

/// The options of `flashkit reproduce fatlist`.
#[derive(Args, Debug)]
pub struct FatlistArgs {
    /// A tenth of the workload (2,500 keys, 80k updates and queries, 20k readings): minutes
    /// become seconds, the trends stay.
    #[arg(long)]
    pub quick: bool,
    /// Experiments to run, comma separated: sizes, levels, turnstiles, probes, init, sensor
    /// [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Sensor readings for the macro-benchmark [default: 200k; 20k with --quick].
    #[arg(long, value_name = "N")]
    pub readings: Option<Count>,
    /// Widest range query of the macro-benchmark, in hundredths of a degree.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_range: u32,
    /// Power cycles averaged per initialization figure.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub boot_trials: u32,
    /// Seed of every workload and structure.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every figure as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long)]
    pub wall_clock_in_json: bool,
    /// Write fatlist.json (what --json writes) and the paper's figures as SVG into this
    /// directory, created if missing: fig14a-d.svg, fig15.svg, ..., fig21b.svg,
    /// table-probes.svg, table-init.svg (those of the experiments run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

impl FatlistArgs {
    /// The lab's spec of these options; `given` holds the options given on the command line
    /// (clap ids), so that one set to its default but given for an experiment `--only`
    /// leaves out is still refused.
    pub fn spec(&self, given: &[String]) -> FatlistSpec {
        let given = |id: &str| given.iter().any(|g| g == id);
        FatlistSpec {
            quick: self.quick,
            only: self.only.clone(),
            readings: self.readings.map(|c| c.0),
            max_range: given("max_range").then_some(self.max_range),
            boot_trials: given("boot_trials").then_some(self.boot_trials),
            seed: self.seed,
            wall_clock_in_json: self.wall_clock_in_json,
            workers: None,
        }
    }
}

/// Run the experiments `--only` asks for (all by default), print their tables beside the
/// paper's figures, and write `--json` and `--out` when asked.
pub fn run(args: &FatlistArgs, given: &[String]) -> Outcome {
    let spec = args.spec(given);
    // The spec's own check first: a bad --only fails before --out makes a directory.
    fatlist::check(&spec).map_err(lab_failure)?;
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let mut bar = crate::progress::Bar::new("reproduce fatlist");
    let reproduction = fatlist::run(&spec, &mut bar).map_err(lab_failure)?;
    show(&reproduction, args.json.as_deref(), None, figures.as_mut())
}
