//! `flashkit reproduce`: the options of each paper's reproduction
//! ([`flashkit_lab::repro`]).

use super::{Count, Size, VetReproArgs};
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// The papers whose evaluation `flashkit reproduce` reruns.
#[derive(Subcommand, Debug)]
pub enum Paper {
    /// Every paper below in one command, each into its own subdirectory of --out, and an
    /// index.html with every figure drawn.
    All(AllArgs),
    /// Lee et al., "A Log Buffer-Based Flash Translation Layer Using Fully-Associative Sector
    /// Translation" (TECS 2007): BAST, FAST and O-FAST on patterns A-E (Fig. 10, Table II),
    /// the section 3.5 analysis, and the real trace excerpts through all five FTLs.
    Fast(FastArgs),
    /// "Fat lists" (NOR flash, 2011): micro-benchmark on 1-8 MB against the mu-tree (Figs.
    /// 14-15), level and turnstile sweeps (Figs. 16-19), probe table, initialization cost,
    /// sensor macro-benchmark (Fig. 21).
    Fatlist(FatlistArgs),
    /// Ajwani et al., "On Computational Models for Flash Memory Devices" (SEA 2009):
    /// Table 1 (sorting), Table 2 (BFS), Fig. 1 (this disk's throughput against block size)
    /// and a real-disk sort.
    Flashmodel(FlashmodelArgs),
    /// Jin, Cho, Chung, "A Group Round Robin Based B-tree Index Storage Scheme for Flash
    /// Memory Devices" (IMCOM 2014): In-Page Logging against GRR with k and m varied (Fig.
    /// 6), buffer hit ratios (Fig. 7), read/write ratios from 100/0 to 0/100 (Fig. 8).
    Grr(GrrArgs),
    /// Suh et al., "Memory efficient and scalable address mapping for flash storage devices"
    /// (JSA 2014): VET and EMT against page and hybrid mapping (Tables 2-4, Figs. 10-12 and
    /// 14-16).
    Vet(VetReproArgs),
}

/// Options of `flashkit reproduce fast`.
#[derive(Args, Debug)]
pub struct FastArgs {
    /// Fraction of the paper's write counts to generate per pattern (Table I: A 2.2M,
    /// B 3.1M, C 398k, D 405k, E 150k sector writes).
    #[arg(long, default_value_t = 1.0, value_name = "FRACTION")]
    pub scale: f64,
    /// Log-block counts (Fig. 10's axis).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4,8,16,32,64",
        value_name = "LIST"
    )]
    pub log_blocks: Vec<u32>,
    /// Patterns to run.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "A,B,C,D,E",
        value_name = "LIST"
    )]
    pub patterns: Vec<String>,
    /// Logical capacity of the simulated card.
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub capacity: Size,
    /// Over-provisioning (spare blocks hold the log blocks plus one for merges).
    #[arg(long, default_value_t = 0.03, value_name = "FRACTION")]
    pub op: f64,
    /// Where the real trace excerpts are.
    #[arg(long, default_value = "../shared/traces", value_name = "DIR")]
    pub traces: PathBuf,
    /// Skip the real traces.
    #[arg(long, conflicts_with = "traces")]
    pub no_traces: bool,
    /// Seed of the generated patterns.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs at a time [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Write every run's report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one row per run as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Create DIR and write there fast.json (what --json writes) and the paper's figures as
    /// SVG: fig10-A-erases.svg, fig10-A-time.svg ... for each pattern, fig10-no-sw.svg,
    /// table2-A.svg, table2-B.svg, section3.5.svg, traces-1.svg ... (docs/reproduction/fast.md,
    /// "Figures").
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A smoke run in seconds: scale 0.02 and log blocks 4 and 16, every pattern and trace.
    #[arg(long, conflicts_with_all = ["scale", "log_blocks"])]
    pub quick: bool,
}

/// The options of `flashkit reproduce fatlist`.
#[derive(Args, Debug)]
pub struct FatlistArgs {
    /// A tenth of the workload (2,500 keys, 80k updates and queries, 20k readings): minutes
    /// become seconds, the trends stay.
    #[arg(long)]
    pub quick: bool,
    /// Experiments to run, comma separated: sizes, levels, turnstiles, probes, init, sensor
    /// [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Sensor readings for the macro-benchmark [default: 200k; 20k with --quick].
    #[arg(long, value_name = "N")]
    pub readings: Option<Count>,
    /// Widest range query of the macro-benchmark, in hundredths of a degree.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_range: u32,
    /// Power cycles averaged per initialization figure.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub boot_trials: u32,
    /// Seed of every workload and structure.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every figure as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long)]
    pub wall_clock_in_json: bool,
    /// Write fatlist.json (what --json writes) and the paper's figures as SVG into this
    /// directory, created if missing: fig14a-d.svg, fig15.svg, ..., fig21b.svg,
    /// table-probes.svg, table-init.svg (those of the experiments run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

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

/// The options of `flashkit reproduce grr`.
#[derive(Args, Debug)]
pub struct GrrArgs {
    /// A fifth of the workload (1,000 files instead of 5,000): about 2 s instead of 18 s in
    /// a release build; the trends mostly stay (a smaller tree leaves GRR's sets room, so k
    /// matters less).
    #[arg(long)]
    pub quick: bool,
    /// Experiments to run, comma separated: fig6, fig7, fig8 [default: all].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Files created (nfc) [default: 5k; 1k with --quick].
    #[arg(long, value_name = "N")]
    pub files: Option<Count>,
    /// Modifications per file (fmc).
    #[arg(long, default_value_t = 4.0, value_name = "N")]
    pub fmc: f64,
    /// Buffer size.
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub buffer_size: Size,
    /// Cold region of the clean-first buffers (w), outside the window sweep.
    #[arg(long, default_value_t = 0.5, value_name = "FRACTION")]
    pub window: f64,
    /// Flash size (whole 128 KiB blocks).
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub capacity: Size,
    /// Seed of the workload.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every run's figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long)]
    pub wall_clock_in_json: bool,
    /// Write grr.json (what --json writes) and the paper's figures as SVG into this
    /// directory, created if missing: fig6a.svg, fig6b.svg, fig7a-c.svg, fig8a.svg,
    /// fig8b.svg (those of the experiments run).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Options of `flashkit reproduce all`.
#[derive(Args, Debug)]
pub struct AllArgs {
    /// Directory for every paper's output, a subdirectory each (fast/, vet/, ...), and
    /// index.html with every figure; created if missing.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Every paper's --quick smoke run instead of its full evaluation.
    #[arg(long)]
    pub quick: bool,
    /// The papers to run, comma-separated: fast, vet, grr, fatlist, flashmodel [default:
    /// all of them].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Directory for flashmodel's disk probe and real-disk sort [default: the system's
    /// temporary directory].
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
}
