//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print the paper's published
//! figures beside flashkit's.

pub mod flashmodel;

use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum Reproduce {
    /// Ajwani et al., "On Computational Models for Flash Memory Devices" (SEA 2009):
    /// Table 1 (sorting), Table 2 (BFS) and a real-disk sort.
    Flashmodel(flashmodel::FlashmodelArgs),
}

pub fn run(command: Reproduce) -> crate::Outcome {
    match command {
        Reproduce::Flashmodel(args) => flashmodel::run(args),
    }
}
