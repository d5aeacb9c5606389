//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print the paper's published
//! figures beside flashkit's. One subcommand per paper; each lives in its own module.

pub mod fast;
pub mod fatlist;
pub mod flashmodel;
pub mod grr;
pub mod vet;

use crate::Outcome;
use clap::Subcommand;

/// The papers whose evaluation `flashkit reproduce` reruns.
#[derive(Subcommand, Debug)]
pub enum Paper {
    /// Lee et al., "A Log Buffer-Based Flash Translation Layer Using Fully-Associative Sector
    /// Translation" (TECS 2007): BAST, FAST and O-FAST on patterns A-E (Fig. 10, Table II),
    /// the section 3.5 analysis, and the real trace excerpts through all five FTLs.
    Fast(fast::FastArgs),
    /// The fat-list paper (NOR flash): micro-benchmark on 1-8 MB, level and turnstile
    /// sweeps, probe table, initialization cost, sensor macro-benchmark.
    Fatlist(fatlist::FatlistArgs),
    /// Ajwani et al., "On Computational Models for Flash Memory Devices" (SEA 2009):
    /// Table 1 (sorting), Table 2 (BFS) and a real-disk sort.
    Flashmodel(flashmodel::FlashmodelArgs),
    /// The GRR paper (B-tree on NAND): In-Page Logging against GRR with k and m varied
    /// (Fig. 6), buffer hit ratios (Fig. 7), read/write ratios from 100/0 to 0/100 (Fig. 8).
    Grr(grr::GrrArgs),
    /// Extent mapping (Suh et al., JSA 2014): VET and EMT against page and hybrid mapping
    /// (Tables 2-4, Figs. 12 and 14-16).
    Vet(crate::args::VetReproArgs),
}

pub fn run(paper: Paper) -> Outcome {
    match paper {
        Paper::Fast(args) => fast::run(args),
        Paper::Fatlist(args) => fatlist::run(&args),
        Paper::Flashmodel(args) => flashmodel::run(args),
        Paper::Grr(args) => grr::run(&args),
        Paper::Vet(args) => vet::run(args),
    }
}
