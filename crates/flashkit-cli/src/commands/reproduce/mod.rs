//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print its published figures
//! beside ours. One module per paper.

pub mod vet;

use crate::Outcome;
use crate::args::Reproduce;

/// Run the reproduction asked for.
pub fn run(which: Reproduce) -> Outcome {
    match which {
        Reproduce::Vet(args) => vet::run(args),
    }
}
