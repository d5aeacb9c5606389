//! `flashkit index`: the options of one flash index through a benchmark
//! ([`flashkit_lab::index`]).

use super::{Count, Size};
use clap::{Args, Subcommand};
use flashkit_index::nand::AnyReplacement;
use flashkit_lab::index::{IndexBenchSpec, IndexStructure, IndexWorkload, ReadWrite};
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum IndexCommand {
    /// Run one flash index through a benchmark and report simulated time by phase.
    Bench(IndexBenchArgs),
}

/// Which workload `index bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// NOR: sequential inserts, Gaussian updates and queries, random deletes (section 0.6.3).
    Micro,
    /// NOR: a synthetic temperature stream, then range queries (section 0.6.4).
    Sensor,
    /// NAND: files created, then read and modified (the GRR paper's Table 4).
    Files,
}

#[derive(Args, Debug, Clone)]
pub struct IndexBenchArgs {
    /// fatlist, softlist or mutree (NOR flash); ipl or grr (the B-tree on NAND flash).
    #[arg(long, default_value = "fatlist", value_name = "NAME")]
    pub structure: IndexStructure,
    /// micro or sensor (NOR structures), files (ipl, grr) [default: micro; files for ipl
    /// and grr].
    #[arg(long, value_enum)]
    pub workload: Option<Workload>,
    /// Flash size: whole 64 KiB blocks of the K8C1215 NOR part, or whole 128 KiB blocks of
    /// the grr-paper NAND part [default: 8M for NOR, 64M for ipl and grr].
    #[arg(long, value_name = "SIZE")]
    pub capacity: Option<Size>,
    /// Micro: keys inserted sequentially.
    #[arg(long, default_value = "25000", value_name = "N")]
    pub keys: Count,
    /// Micro: Gaussian updates.
    #[arg(long, default_value = "800k", value_name = "N")]
    pub updates: Count,
    /// Micro: Gaussian queries.
    #[arg(long, default_value = "800k", value_name = "N")]
    pub queries: Count,
    /// Micro: standard deviation of the key distribution, a fraction of the key count.
    #[arg(long, default_value_t = 1.0 / 6.0, value_name = "FRACTION")]
    pub spread: f64,
    /// Micro: power cycles between updates and queries, to measure initialization.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub boot_trials: u32,
    /// Sensor: readings inserted (54 motes, one reading each every 31 s).
    #[arg(long, default_value = "200k", value_name = "N")]
    pub readings: Count,
    /// Sensor: range queries after insertion.
    #[arg(long, default_value = "1000", value_name = "N")]
    pub range_queries: Count,
    /// Sensor: widest range, in hundredths of a degree.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_range: u32,
    /// Lists: blocks per turnstile, the spare included.
    #[arg(long, default_value_t = 8, value_name = "BLOCKS")]
    pub turnstile: u32,
    /// Lists: maximum number of levels.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub levels: u32,
    /// Lists: probability of hooking on the next level.
    #[arg(long, default_value_t = 0.25, value_name = "P")]
    pub p: f64,
    /// Fat list: slots per object (m).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub slots: u32,
    /// Fat list: distinct keys per object before a split (n).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub key_limit: u32,
    /// Fat list: pointer pool entries [default: levels + 2].
    #[arg(long, value_name = "N")]
    pub pool: Option<u32>,
    /// Soft list: pointer slots per level.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub slots_per_level: u32,
    /// Mu-tree: page size.
    #[arg(long, default_value = "512", value_name = "SIZE")]
    pub page_size: Size,
    /// B-tree: buffer replacement policy, lru, cflru or cfsemi (clean first with a
    /// semi-clean state).
    #[arg(long, default_value = "cfsemi", value_name = "POLICY")]
    pub buffer: AnyReplacement,
    /// B-tree: buffer size (node images of one page and log sectors).
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub buffer_size: Size,
    /// B-tree: cold region of the clean-first buffers, a fraction of the buffer (w).
    #[arg(long, default_value_t = 0.5, value_name = "FRACTION")]
    pub window: f64,
    /// B-tree: in-memory log sector of a node.
    #[arg(long, default_value = "512", value_name = "SIZE")]
    pub sector: Size,
    /// GRR: blocks per index block set (m).
    #[arg(long, default_value_t = 8, value_name = "M")]
    pub set_blocks: u32,
    /// Log pages a block's log area starts with (k) [default: 1 for ipl, 4 for grr].
    #[arg(long, value_name = "K")]
    pub log_pages: Option<u32>,
    /// GRR: most log pages a log area grows to (l).
    #[arg(long, default_value_t = 8, value_name = "L")]
    pub log_limit: u32,
    /// GRR: adapt the log limit and the set size to the workload (docs/DESIGN.md).
    #[arg(long)]
    pub adaptive: bool,
    /// GRR: largest set the adaptive rules build.
    #[arg(long, default_value_t = 16, value_name = "M")]
    pub max_set_blocks: u32,
    /// Files workload: files created (nfc).
    #[arg(long, default_value = "5k", value_name = "N")]
    pub files: Count,
    /// Files workload: modifications per file (fmc); the mixed phase has files x fmc
    /// requests.
    #[arg(long, default_value_t = 4.0, value_name = "N")]
    pub fmc: f64,
    /// Files workload: read/write ratio of the mixed phase (RWR).
    #[arg(long, default_value = "40/60", value_name = "R/W")]
    pub rw: ReadWrite,
    /// Files workload: average write length (AWL), over 2 KiB file pages.
    #[arg(long, default_value = "16K", value_name = "SIZE")]
    pub awl: Size,
    /// Files workload: pages a read looks up (ARL).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub read_pages: u32,
    /// Seed of the workload and of the structure's random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long, requires = "json")]
    pub wall_clock_in_json: bool,
    /// Write the phase table as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl IndexBenchArgs {
    /// The lab's spec of the run.
    pub fn spec(&self) -> IndexBenchSpec {
        IndexBenchSpec {
            structure: self.structure,
            workload: self.workload.map(|w| match w {
                Workload::Micro => IndexWorkload::Micro,
                Workload::Sensor => IndexWorkload::Sensor,
                Workload::Files => IndexWorkload::Files,
            }),
            capacity: self.capacity.map(|c| c.0),
            keys: self.keys.0,
            updates: self.updates.0,
            queries: self.queries.0,
            spread: self.spread,
            boot_trials: self.boot_trials,
            readings: self.readings.0,
            range_queries: self.range_queries.0,
            max_range: self.max_range,
            turnstile: self.turnstile,
            levels: self.levels,
            p: self.p,
            slots: self.slots,
            key_limit: self.key_limit,
            pool: self.pool,
            slots_per_level: self.slots_per_level,
            page_size: self.page_size.0,
            buffer: self.buffer,
            buffer_size: self.buffer_size.0,
            window: self.window,
            sector: self.sector.0,
            set_blocks: self.set_blocks,
            log_pages: self.log_pages,
            log_limit: self.log_limit,
            adaptive: self.adaptive,
            max_set_blocks: self.max_set_blocks,
            files: self.files.0,
            fmc: self.fmc,
            rw: self.rw,
            awl: self.awl.0,
            read_pages: self.read_pages,
            seed: self.seed,
        }
    }
}
