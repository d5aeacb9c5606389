//! `flashkit reproduce grr`: the GRR paper's evaluation (Jin, Cho, Chung, IMCOM 2014),
//! run by [`flashkit_lab::repro::grr`]; this module turns the options into its spec and
//! renders what comes back.

use super::{Figures, lab_failure, show};
use crate::args::reproduce::GrrArgs;
use crate::failure::Outcome;
use flashkit_lab::repro::grr::{self, GrrSpec};

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
    let bar = crate::progress::Bar::new("reproduce grr");
    let reproduction = grr::run(&args.spec(), &bar).map_err(lab_failure)?;
    show(&reproduction, args.json.as_deref(), None, figures.as_mut())
}
