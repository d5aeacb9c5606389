//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print its published figures
//! beside ours.

pub mod fatlist;

use crate::Outcome;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum Reproduce {
    /// The fat-list paper (NOR flash): micro-benchmark on 1-8 MB, level and turnstile
    /// sweeps, probe table, initialization cost, sensor macro-benchmark.
    Fatlist(fatlist::FatlistArgs),
}

pub fn run(command: Reproduce) -> Outcome {
    match command {
        Reproduce::Fatlist(args) => fatlist::run(&args),
    }
}
