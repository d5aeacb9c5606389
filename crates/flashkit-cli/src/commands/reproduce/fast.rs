//! `flashkit reproduce fast`: the FAST paper's evaluation (Lee et al., ACM TECS 2007), run
//! by [`flashkit_lab::repro::fast`]; this module turns the options into its spec and renders
//! what comes back.

use super::{Figures, lab_failure, show};
use crate::args::reproduce::FastArgs;
use crate::failure::Outcome;
use flashkit_lab::repro::fast::{self, FastSpec};

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
    let bar = crate::progress::Bar::new("reproduce fast");
    let reproduction = fast::run(&args.spec(), &bar).map_err(lab_failure)?;
    show(
        &reproduction,
        args.json.as_deref(),
        args.csv.as_deref(),
        figures.as_mut(),
    )
}
