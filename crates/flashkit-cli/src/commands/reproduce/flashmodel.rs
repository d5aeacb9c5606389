//! `flashkit reproduce flashmodel`: Ajwani, Beckmann, Jacob, Meyer, Moruz, "On Computational
//! Models for Flash Memory Devices" (SEA 2009), section 4, run by
//! [`flashkit_lab::repro::flashmodel`]; this module turns the options into its spec, has
//! the real-disk part's temporary files removed on Ctrl-C, and renders what comes back
//! (Fig. 1 as `fig1.svg` and `fig1.json` with `--out DIR`).

use super::{Figures, lab_failure, show};
use crate::interrupt::OnInterrupt;
use crate::{Failure, Outcome};
use clap::Args;
use flashkit_lab::repro::flashmodel::{self, FlashmodelSpec};
use std::path::PathBuf;

/// The options of `flashkit reproduce flashmodel`.
#[derive(Args, Debug)]
pub struct FlashmodelArgs {
    /// Smallest BFS grid, as log2 |V| (even: the grids are square).
    #[arg(long, default_value_t = 16)]
    pub bfs_min_log: u32,
    /// Largest BFS grid, as log2 |V| (even; each step of 2 is four times the work).
    #[arg(long, default_value_t = 20)]
    pub bfs_max_log: u32,
    /// Largest real-disk sort, as log2 of the number of 4-byte integers (below 25 skips it).
    #[arg(long, default_value_t = 27)]
    pub disk_max_log: u32,
    /// Directory for the real-disk sort's files [default: the system's temporary directory].
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
    /// A smoke run in about 15 s: Table 1, the smallest BFS grid, a short probe of the disk
    /// (Fig. 1) and one real-disk sort of 2^25 integers.
    #[arg(long, conflicts_with_all = ["bfs_max_log", "disk_max_log"])]
    pub quick: bool,
    /// Write Fig. 1 there as fig1.svg, and its measurements as fig1.json (the directory is
    /// created if missing; nothing is written when the real-disk part is skipped).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

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
    let bar = crate::progress::SharedBar::new("probe");
    let reproduction = flashmodel::run(&spec, &bar, &OnInterrupt).map_err(lab_failure)?;
    show(&reproduction, None, None, figures.as_mut())
}
