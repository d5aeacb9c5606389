//! Options of `flashkit em` (the experiments are `flashkit_lab::em` and `flashkit_lab::probe`).

use super::{DeviceSection, FtlSection, Size};
use clap::{ArgGroup, Args, Subcommand};
use flashkit_em::record::RecordKind;
use flashkit_em::sort::files::{InputOrder, IoMode};
use flashkit_em::sort::{FanIn, MAX_RESIDENT};
use flashkit_ftl::FtlKind;
use flashkit_lab::probe::DEFAULT_FRACTION;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum EmCommand {
    /// Predict volumes and costs under both flash models from N, M, B_r and B_w.
    Model(ModelArgs),
    /// Write a file of random (or sorted, reversed, equal) fixed-width records.
    Gen(GenArgs),
    /// Sort a file of fixed-width records with external multi-way mergesort (or, with
    /// --records, generated records on the simulator or an FTL).
    Sort(SortArgs),
    /// Mehlhorn-Meyer BFS on a generated graph, on the simulated device or an FTL.
    Bfs(GraphArgs),
    /// Textbook DFS on a generated graph, on the simulated device or an FTL.
    Dfs(GraphArgs),
    /// Measure this machine's disk: throughput against block size for sequential and random
    /// reads and writes (the paper's Fig. 1), and the B_r and B_w its rule picks.
    Probe(ProbeArgs),
}

/// Memory and block sizes shared by the em commands.
#[derive(Args, Debug, Clone)]
pub struct ModelParams {
    /// Internal memory M.
    #[arg(long, default_value = "512M", value_name = "SIZE")]
    pub memory: Size,
    /// Read block size B_r.
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub br: Size,
    /// Write block size B_w.
    #[arg(long, default_value = "16M", value_name = "SIZE")]
    pub bw: Size,
    /// The general model's write penalty c.
    #[arg(long, default_value_t = 1.0, value_name = "C")]
    pub c: f64,
}

impl ModelParams {
    /// The lab's parameters.
    pub fn spec(&self) -> flashkit_lab::em::ModelParams {
        flashkit_lab::em::ModelParams {
            memory: self.memory.0,
            br: self.br.0,
            bw: self.bw.0,
            c: self.c,
        }
    }
}

#[derive(Args, Debug)]
pub struct ModelArgs {
    /// Records to sort: a count (1M, 300k) or a power of two (2^28).
    #[arg(long, default_value = "2^28", value_parser = parse_records, value_name = "N")]
    pub records: u64,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u32", value_name = "TYPE")]
    pub record: RecordKind,
    /// Graph vertices for the BFS and DFS predictions (a count or 2^k).
    #[arg(long, default_value = "2^22", value_parser = parse_records, value_name = "V")]
    pub vertices: u64,
    #[command(flatten)]
    pub params: ModelParams,
}

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Number of records (a count or 2^k).
    #[arg(long, value_parser = parse_records, value_name = "N")]
    pub records: u64,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u64", value_name = "TYPE")]
    pub record: RecordKind,
    /// Order: random, sorted, reversed, equal.
    #[arg(long, default_value = "random", value_name = "ORDER")]
    pub order: InputOrder,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Device and FTL options of `--ftl`: the flags of `flashkit compare`, one FTL at a time.
#[derive(Args, Debug)]
pub struct FtlDeviceArgs {
    #[command(flatten)]
    pub device: DeviceSection,
    #[command(flatten)]
    pub ftl: FtlSection,
}

/// Help texts where `--ftl` on an em command differs from `flashkit compare`.
pub const CAPACITY_HELP: &str = "With --ftl: logical capacity of the FTL's device [default: the \
                                 algorithm's footprint in whole erase blocks]";
pub const OP_HELP: &str = "With --ftl: over-provisioning, a fraction of the logical capacity \
                           [default: 0.07, raised to the fewest spare blocks the FTL accepts]";
pub const GC_HELP: &str = "With --ftl page, vet or emt: the GC victim policy (greedy, \
                           cost-benefit, fifo) [default: greedy]";
pub const VET_INSERT_HELP: &str = "With --ftl vet: the insertion scheme (lis, bis) [default: bis]";
pub const VET_NODES_HELP: &str = "With --ftl vet: the node layout (pd, pf) [default: pf]";
pub const VET_TABLE_HELP: &str =
    "With --ftl vet: the hash table (cuckoo, swiss, std) [default: cuckoo]";
pub const VET_SEARCH_HELP: &str =
    "With --ftl vet: the read search (paper, guided) [default: paper]";

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["input", "records"])))]
#[command(mut_group("DeviceSection", |g| g.requires("ftl")))]
#[command(mut_group("FtlSection", |g| g.requires("ftl")))]
#[command(mut_arg("capacity", |a| a.help(CAPACITY_HELP)))]
#[command(mut_arg("op", |a| a.help(OP_HELP)))]
#[command(mut_arg("gc", |a| a.help(GC_HELP).value_name("POLICY")))]
#[command(mut_arg("vet_insert", |a| a.help(VET_INSERT_HELP).value_name("SCHEME")))]
#[command(mut_arg("vet_nodes", |a| a.help(VET_NODES_HELP).value_name("LAYOUT")))]
#[command(mut_arg("vet_table", |a| a.help(VET_TABLE_HELP).value_name("TABLE")))]
#[command(mut_arg("vet_search", |a| a.help(VET_SEARCH_HELP).value_name("SEARCH")))]
pub struct SortArgs {
    /// Input file of raw little-endian records.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Output file.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["in_memory", "records"])]
    pub output: Option<PathBuf>,
    /// Instead of a file: sort N generated random records (a count or 2^k) on a simulated
    /// device, the counting simulator with data or the FTL of --ftl; serial, and the output is
    /// read back and compared with std's sort.
    #[arg(
        long,
        value_parser = parse_records,
        value_name = "N",
        conflicts_with_all = ["output", "tmp", "buffered", "threads", "in_memory"]
    )]
    pub records: Option<u64>,
    /// With --records: seed of the generated records (the records `em gen --seed` writes)
    /// [default: 1].
    #[arg(long, requires = "records")]
    pub seed: Option<u64>,
    /// With --records: sort on this FTL (page, block, bast, fast, ofast, vet, emt) over
    /// simulated NAND, sized to the sort's footprint, and report its flash operations.
    #[arg(long, value_name = "KIND", requires = "records")]
    pub ftl: Option<FtlKind>,
    #[command(flatten)]
    pub ftl_device: FtlDeviceArgs,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u64", value_name = "TYPE")]
    pub record: RecordKind,
    /// Block sizes to transfer with: flash (read B_r, write B_w), br, bw, tl.
    #[arg(long, default_value = "flash", value_name = "MODE")]
    pub io: IoMode,
    /// Shorthand for --io tl: pages of B_r through the translation layer.
    #[arg(long, conflicts_with = "io")]
    pub tl: bool,
    /// Merge fan-in: model, read (M/B_r), write (M/B_w) or a number.
    #[arg(long, default_value = "model", value_name = "POLICY")]
    pub fan_in: FanIn,
    /// Keep up to N of the last runs in memory for the merge instead of writing them and
    /// reading them back (at most 3, as many as leave the merge its buffers; only when one
    /// merge pass finishes the sort). 0 writes every run, the paper's algorithm.
    #[arg(long, default_value_t = MAX_RESIDENT, value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=MAX_RESIDENT))]
    pub resident_runs: u64,
    /// Directory for the temporary runs [default: the output's directory].
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
    /// Go through the page cache instead of asking for O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Threads each merge splits over by key range [default: every core]; 1 merges
    /// serially. Volumes are the same either way; `--tl` always merges serially.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Benchmark only: load the whole input into memory and time the in-memory radix sort
    /// alone (the in-memory bound of the sorting benchmark); writes nothing.
    #[arg(long, conflicts_with_all = [
        "output", "tmp", "buffered", "threads", "json", "io", "tl", "fan_in", "resident_runs",
        "memory", "br", "bw", "c",
    ])]
    pub in_memory: bool,
    #[command(flatten)]
    pub params: ModelParams,
}

impl SortArgs {
    /// The I/O mode: `--io`, or tl with `--tl`.
    pub fn mode(&self) -> IoMode {
        if self.tl { IoMode::Tl } else { self.io }
    }
}

#[derive(Args, Debug)]
#[command(mut_group("DeviceSection", |g| g.requires("ftl")))]
#[command(mut_group("FtlSection", |g| g.requires("ftl")))]
#[command(mut_arg("capacity", |a| a.help(CAPACITY_HELP)))]
#[command(mut_arg("op", |a| a.help(OP_HELP)))]
#[command(mut_arg("gc", |a| a.help(GC_HELP).value_name("POLICY")))]
#[command(mut_arg("vet_insert", |a| a.help(VET_INSERT_HELP).value_name("SCHEME")))]
#[command(mut_arg("vet_nodes", |a| a.help(VET_NODES_HELP).value_name("LAYOUT")))]
#[command(mut_arg("vet_table", |a| a.help(VET_TABLE_HELP).value_name("TABLE")))]
#[command(mut_arg("vet_search", |a| a.help(VET_SEARCH_HELP).value_name("SEARCH")))]
pub struct GraphArgs {
    /// Graph: grid (square) or random (sparse, 2|V| random edges).
    #[arg(long, default_value = "grid", value_name = "KIND")]
    pub graph: String,
    /// Vertices (a count or 2^k; a grid uses the largest square not above it).
    #[arg(long, default_value = "2^16", value_parser = parse_records, value_name = "V")]
    pub vertices: u64,
    /// Block sizes: br, bw or tl (flash is read as tl: the algorithms write single pages).
    #[arg(long, default_value = "tl", value_name = "MODE")]
    pub io: IoMode,
    /// BFS cluster parameter mu: each vertex starts a cluster with probability 1/mu
    /// [default: sqrt(B / log2 |V|), from the model].
    #[arg(long)]
    pub mu: Option<u64>,
    /// DFS page cache [default: half of the graph's external size].
    #[arg(long, value_name = "SIZE")]
    pub cache: Option<Size>,
    /// Seed of the graph and of the BFS masters.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run on this FTL (page, block, bast, fast, ofast, vet, emt) over simulated NAND,
    /// sized to the footprint of a dry run on the simulator, and report its flash
    /// operations.
    #[arg(long, value_name = "KIND")]
    pub ftl: Option<FtlKind>,
    #[command(flatten)]
    pub ftl_device: FtlDeviceArgs,
    #[command(flatten)]
    pub params: ModelParams,
}

/// Options of `flashkit em probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Directory on the device to measure; a file of --file-size is written there and removed
    /// afterwards [default: the system's temporary directory].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Size of the probe file: larger than the caches in front of the device reads truer.
    #[arg(long, default_value = "1G", value_name = "SIZE")]
    pub file_size: Size,
    /// Smallest block size (a power of two of at least 512 B; O_DIRECT needs 4 KiB).
    #[arg(long, default_value = "4K", value_name = "SIZE")]
    pub min_block: Size,
    /// Largest block size (a power of two; the paper's Fig. 1 goes to 64 MB).
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub max_block: Size,
    /// Time budget of one measurement (a pattern at a block size), seconds.
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub seconds: f64,
    /// Byte budget of one measurement.
    #[arg(long, default_value = "1G", value_name = "SIZE")]
    pub max_bytes: Size,
    /// The fraction of sequential throughput a random pattern must reach for its block size
    /// to count as "optimal" (the paper's rule for B_r and B_w).
    #[arg(long, default_value_t = DEFAULT_FRACTION, value_name = "F")]
    pub fraction: f64,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Transfers in flight at once: this many threads issuing synchronous transfers, each
    /// with a buffer of --max-block. 1 is what the paper's algorithms issue; a modern SSD
    /// shows its parallelism only at 4 to 32.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub depth: u32,
    /// Write every measurement as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Draw the throughput against block size as SVG (the paper's Fig. 1).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

/// A count such as `1M`, `300k` or a power of two such as `2^28`.
pub fn parse_records(text: &str) -> Result<u64, String> {
    if let Some(exponent) = text.strip_prefix("2^") {
        let e: u32 = exponent
            .parse()
            .map_err(|_| format!("{text:?}: the exponent is not a whole number"))?;
        return 1u64
            .checked_shl(e)
            .filter(|_| e < 64)
            .ok_or_else(|| format!("{text:?} does not fit in 64 bits"));
    }
    flashkit_core::units::parse_count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_counts_parse_as_counts_or_powers_of_two() {
        assert_eq!(parse_records("2^28"), Ok(1 << 28));
        assert_eq!(parse_records("10k"), Ok(10_000));
        assert!(parse_records("2^64").is_err());
        assert!(parse_records("2^x").is_err());
    }
}
