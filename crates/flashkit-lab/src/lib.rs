//! flashkit-lab: experiments as a library.
//!
//! An experiment is a plan of independent jobs (the runs of a comparison, the cells of a
//! sweep, a paper's grid), run by one executor ([`exec`]) and returned as structured
//! results in the plan's order, whatever order the jobs finished in. Front ends (the
//! `flashkit` binary today; a Python package or a server tomorrow) turn their arguments
//! into a spec, run it here, and render what comes back.
//!
//! What this layer is not: it prints nothing and parses no command line. Progress reaches
//! the caller through callbacks; errors name the field of the spec at fault, and a front
//! end says which of its own options that is.
//!
//! - [`exec`]: the deterministic parallel executor every experiment runs on.
//! - [`compare`]: one workload through several FTLs: the run list a comparison expands to,
//!   and its results.
//! - [`config`]: the config file's sections (also a command line's flag groups, with the
//!   `clap` feature) and how options resolve into the specs every experiment takes.
//! - [`sweep`]: a sweep file expanded into cells, run in grid order, and resumed.
//! - [`repro`]: the papers' evaluations, each returning a [`repro::Reproduction`];
//!   [`repro::index`], the page and claims document of several papers' reproductions.
//! - [`report`]: results (a sweep's, or a comparison's runs) as figures, a table of runs
//!   and one HTML page.
//! - [`em`]: external-memory algorithms under the flash models (Ajwani et al., SEA 2009):
//!   the model's predictions, sorting files and generated records, BFS and DFS, on the
//!   simulator or an FTL.
//! - [`index`]: one flash index (NOR lists, the mu-tree, the NAND B-tree) through a
//!   benchmark.
//! - [`probe`]: the disk probe (a real device's throughput against block size).
//! - [`temporaries`]: how an experiment on a real disk tells its front end which files to
//!   remove if the process is interrupted.

pub mod claims;
pub mod compare;
pub mod config;
pub mod em;
pub mod exec;
pub mod index;
pub mod probe;
pub mod report;
pub mod repro;
pub mod sweep;
pub mod temporaries;

pub use exec::{Executor, Finished, JobPanic};
