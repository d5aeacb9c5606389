//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print its published figures
//! beside ours.

pub mod fatlist;
pub mod grr;

use crate::Outcome;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum Reproduce {
    /// The fat-list paper (NOR flash): micro-benchmark on 1-8 MB, level and turnstile
    /// sweeps, probe table, initialization cost, sensor macro-benchmark.
    Fatlist(fatlist::FatlistArgs),
    /// The GRR paper (B-tree on NAND): In-Page Logging against GRR with k and m varied
    /// (Fig. 6), buffer hit ratios (Fig. 7), read/write ratios from 100/0 to 0/100 (Fig. 8).
    Grr(grr::GrrArgs),
}

pub fn run(command: Reproduce) -> Outcome {
    match command {
        Reproduce::Fatlist(args) => fatlist::run(&args),
        Reproduce::Grr(args) => grr::run(&args),
    }
}
