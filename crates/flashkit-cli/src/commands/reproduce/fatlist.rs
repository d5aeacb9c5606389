//! `flashkit reproduce fatlist`: the fat-list paper's evaluation (section 0.6) on the
//! K8C1215 NOR model, run by [`flashkit_lab::repro::fatlist`]; this module turns the options
//! into its spec and renders what comes back (`fatlist.json` and each figure as SVG with
//! `--out DIR`).

use super::{Figures, lab_failure, show};
use crate::args::reproduce::FatlistArgs;
use crate::failure::Outcome;
use flashkit_lab::repro::fatlist::{self, FatlistSpec};

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
    let bar = crate::progress::Bar::new("reproduce fatlist");
    let reproduction = fatlist::run(&spec, &bar).map_err(lab_failure)?;
    show(&reproduction, args.json.as_deref(), None, figures.as_mut())
}
