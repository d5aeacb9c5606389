//! `flashkit reproduce flashmodel`: Ajwani, Beckmann, Jacob, Meyer, Moruz, "On Computational
//! Models for Flash Memory Devices" (SEA 2009), section 4, run by
//! [`flashkit_lab::repro::flashmodel`]; this module turns the options into its spec, has
//! the real-disk part's temporary files removed on Ctrl-C, and renders what comes back
//! (Fig. 1 as `fig1.svg` and `fig1.json` with `--out DIR`).

use super::{Figures, lab_failure, show};
use crate::args::reproduce::FlashmodelArgs;
use crate::failure::{Failure, Outcome};
use crate::interrupt::OnInterrupt;
use flashkit_lab::repro::flashmodel::{self, FlashmodelSpec};

impl FlashmodelArgs {
    /// The lab's spec of these options.
    pub fn spec(&self) -> FlashmodelSpec {
        FlashmodelSpec {
            quick: self.quick,
            bfs_min_log: self.bfs_min_log,
            bfs_max_log: self.bfs_max_log,
            disk_max_log: self.disk_max_log,
            tmp: self.tmp.clone(),
            workers: None,
        }
    }
}

/// Run the paper's section 4, print its tables beside the paper's, and write Fig. 1 and
/// the ledger into `--out` when asked.
pub fn run(args: &FlashmodelArgs) -> Outcome {
    let spec = args.spec();
    // --out serves the real-disk part only: skipped, it would make an empty directory it
    // then said it wrote. Named with --tmp, the spec's own field for the same part.
    if args.out.is_some() && !spec.runs_disk() {
        let unused: Vec<String> = [(args.tmp.is_some(), "--tmp"), (true, "--out")]
            .into_iter()
            .filter(|&(given, _)| given)
            .map(|(_, flag)| flag.to_string())
            .collect();
        return Err(Failure::Usage(anyhow::anyhow!(
            "{}, which --disk-max-log {} (below 25) skips: drop {}",
            flashkit_lab::config::unused_options(&unused, "the real-disk part"),
            args.disk_max_log,
            if unused.len() == 1 { "it" } else { "them" }
        )));
    }
    // The spec's own check before --out makes a directory.
    flashmodel::check(&spec).map_err(lab_failure)?;
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let bar = crate::progress::Bar::new("probe");
    let reproduction = flashmodel::run(&spec, &bar, &OnInterrupt).map_err(lab_failure)?;
    show(&reproduction, None, None, figures.as_mut())
}
