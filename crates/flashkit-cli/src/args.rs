//! Command-line arguments. Every option group doubles as a section of the TOML config file
//! (`--config`), with the same names: a flag given on the command line wins over the file,
//! the file over the built-in default.

use clap::{Args, Parser, Subcommand};
use flashkit_core::units::{parse_count, parse_size};
use flashkit_ftl::{FtlKind, GcPolicy, InsertScheme, VetNodes, VetTable};
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;
use std::str::FromStr;

pub mod em;
pub mod index;
pub mod reproduce;

/// flashkit: flash translation layers and flash data structures, simulated honestly.
#[derive(Parser, Debug)]
#[command(
    name = "flashkit",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// TOML file giving defaults for the options of compare, replay, trace gen, stats,
    /// convert and bench, and em --ftl (sections: device, ftl, run, workload, trace).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one workload through several FTLs and compare them side by side.
    Compare(CompareArgs),
    /// Replay one trace (or generated workload) through one FTL.
    Replay(ReplayArgs),
    /// Generate, inspect and convert traces.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Measure how fast an FTL replays a trace: requests and host pages a second, mapping
    /// time per call (the page FTL by default; results in bench/RESULTS.md).
    Bench(BenchArgs),
    /// Run a grid of experiments declared in TOML on every core, saving each result.
    Sweep(SweepArgs),
    /// Turn results (a sweep directory, or --json output) into an HTML report and figures.
    Report(ReportArgs),
    /// List the NAND and NOR presets and where their figures come from.
    Presets,
    /// Flash indexes: fat lists, soft lists and the mu-tree on NOR flash; the B-tree on NAND
    /// with In-Page Logging or GRR under a clean-first buffer.
    #[command(subcommand)]
    Index(index::IndexCommand),
    /// External-memory algorithms under the flash models (Ajwani et al., SEA 2009).
    #[command(subcommand)]
    Em(em::EmCommand),
    /// Rerun a paper's evaluation, printing the paper's figures beside flashkit's.
    #[command(subcommand)]
    Reproduce(reproduce::Paper),
    /// Print a completion script for a shell (bash, zsh, fish, elvish, powershell), e.g.
    /// `flashkit completions bash > ~/.local/share/bash-completion/completions/flashkit`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Args, Debug)]
#[command(mut_arg("address_map", |a| a.help(
    "How --paper-trace addresses map onto the device: identity (addresses unchanged; \
     volumes one after another; the default here, as a share of PMT depends on the address \
     space) or compact (touched blocks only)"
)))]
pub struct VetReproArgs {
    /// Scale of the Table-1-shaped workloads: their requests and address space times this.
    #[arg(long, default_value_t = 1.0 / 32.0)]
    pub scale: f64,
    /// Directory holding the public trace excerpts.
    #[arg(long, value_name = "DIR", default_value = "../shared/traces")]
    pub traces: PathBuf,
    /// Write vet.json and the figures (fig10, fig11, fig12, fig14, fig15, fig16 as SVG) here.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write requests of each Fig. 16 workload.
    #[arg(long, default_value_t = 50_000)]
    pub spew_requests: u64,
    /// Largest address space of Fig. 16 in GiB (from 16 GiB, doubling).
    #[arg(long, default_value_t = 1024)]
    pub spew_max_gib: u64,
    /// Seed of the generated workloads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time every replay this many times and report, for each kind of call, the run whose
    /// mean is the median (all the means go into vet.json). Wall-clock figures on a shared
    /// or virtual machine drift between runs; memory and state are checked to be identical.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub runs: u32,
    /// A smoke run in seconds: scale 1/1024, one trace, Fig. 16 to 32 GiB.
    #[arg(long, conflicts_with_all = ["scale", "spew_requests", "spew_max_gib"])]
    pub quick: bool,
    /// Run only these workloads, comma separated: finance, homes, wdev, wsf, or a trace
    /// excerpt by the start of its file name (hm_0, rsrch_0, WebSearch1, ...). Fig. 16 is
    /// skipped when --workload or --scheme is given.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub workload: Vec<String>,
    /// Run only these schemes, comma separated: PMT, "VET BIS PF", "VET BIS PD",
    /// "VET LIS PF", "VET LIS PD", EMT (case does not matter).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub scheme: Vec<String>,
    /// One of the paper's own traces, as NAME=FILE (NAME: finance, homes, wdev or wsf; FILE:
    /// any supported trace format, docs/TRACES.md), replayed whole beside the generated
    /// workloads and compared with that column of the paper; repeat for several. Addresses
    /// are kept (identity mapping) unless --address-map says otherwise; the trace options
    /// below apply to these files only. Always run, whatever --workload says.
    #[arg(long = "paper-trace", value_name = "NAME=FILE", value_parser = parse_named_file)]
    pub paper_trace: Vec<(String, PathBuf)>,
    #[command(flatten, next_help_heading = "Reading --paper-trace files")]
    pub paper_trace_options: TraceArgs,
}

/// `NAME=FILE`, as `--paper-trace` takes it.
fn parse_named_file(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, file)) if !name.trim().is_empty() && !file.is_empty() => {
            Ok((name.trim().to_ascii_lowercase(), PathBuf::from(file)))
        }
        _ => Err(format!(
            "expected NAME=FILE (for example finance=Financial1.spc), got {text:?}"
        )),
    }
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A trace file in any supported format (see docs/TRACES.md); without it, the built-in
    /// workload. Without --capacity the device is sized to the trace's footprint.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub trace_options: TraceArgs,
    /// FTLs to compare, comma separated (default: every FTL flashkit has).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub ftl: Vec<FtlKind>,
    /// Runs at once [default: one a core]. The figures do not depend on it (each run is
    /// seeded on its own); the wall-clock lines do, so time runs with --jobs 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub ftl_options: FtlArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A trace file in any supported format (see docs/TRACES.md); without it, the workload
    /// options below. Without --capacity the device is sized to the trace's footprint.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub trace_options: TraceArgs,
    /// The FTL.
    #[arg(long, default_value = "page", value_name = "NAME")]
    pub ftl: FtlKind,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub ftl_options: FtlArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Generate a workload into a flashkit binary trace.
    Gen(GenArgs),
    /// Summarise traces: requests and bytes by type, sizes, span, footprint, time.
    Stats(StatsArgs),
    /// Convert a trace to flashkit's binary format (parse once, replay fast) or generic CSV.
    Convert(ConvertArgs),
    /// Say which format each file is in, and why.
    Detect(DetectArgs),
    /// Measure parsing speed: requests and lines per second, reading each file fully.
    Bench(TraceBenchArgs),
}

#[derive(Args, Debug)]
// --address-map lays a trace onto a device, which this command has not: refused, so not
// offered in the help.
#[command(mut_arg("address_map", |a| a.hide(true)))]
pub struct ConvertArgs {
    /// The trace to convert (any supported format).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Output format: binary or csv [default: csv if the output name ends in .csv, else
    /// binary].
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<ConvertTo>,
    #[command(flatten)]
    pub trace_options: TraceArgs,
}

/// What `trace convert` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvertTo {
    Binary,
    Csv,
}

impl FromStr for ConvertTo {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "binary" | "fkt" => Ok(ConvertTo::Binary),
            "csv" => Ok(ConvertTo::Csv),
            _ => Err(format!(
                "cannot convert to {text:?} (expected binary or csv)"
            )),
        }
    }
}

#[derive(Args, Debug)]
pub struct DetectArgs {
    /// Trace files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
// --address-map lays a trace onto a device, which this command has not: refused, so not
// offered in the help.
#[command(mut_arg("address_map", |a| a.hide(true)))]
pub struct TraceBenchArgs {
    /// Trace files (any supported format).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Read each file this many times and report the best pass.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    #[command(flatten)]
    pub trace_options: TraceArgs,
}

/// How to read trace files (`[trace]` in the config file).
#[derive(Args, Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceArgs {
    /// Trace format (msr, spc, fiu, blkparse, fio-v2, fio-v3, systor, tencent, cloudphysics,
    /// disksim, csv, binary) [default: detected from the content].
    #[arg(long, value_name = "NAME")]
    #[serde(deserialize_with = "parsed")]
    pub format: Option<flashkit_trace::formats::Format>,
    /// Print how the format was detected (to stderr).
    #[arg(long)]
    pub explain_format: bool,
    /// Keep only this volume: the SPC ASU, SYSTOR LUN, MSR disk, Tencent volume, DiskSim
    /// device (others are counted and dropped) [default: all, laid out one after another].
    #[arg(long, visible_alias = "volume", value_name = "N")]
    pub asu: Option<u16>,
    /// Count and report malformed lines instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// Replay in time order (sorts in memory, 24 B a request) instead of file order.
    #[arg(long)]
    pub sort_by_time: bool,
    /// Time unit of DiskSim traces [default: ms] and of the generic CSV's `time` column
    /// [default: ns]: ns, us, ms or s.
    #[arg(long, value_name = "UNIT")]
    #[serde(deserialize_with = "parsed")]
    pub time_unit: Option<flashkit_trace::formats::TimeUnit>,
    /// blkparse events to replay: D (dispatched to the device) or Q (queued) [default: D].
    #[arg(long, value_name = "D|Q")]
    #[serde(deserialize_with = "parsed")]
    pub blkparse_event: Option<flashkit_trace::formats::BlkparseEvent>,
    /// How trace addresses map onto the device: compact (touched blocks only, the
    /// default) or identity (addresses unchanged; volumes one after another).
    #[arg(long, value_name = "MAPPING")]
    #[serde(deserialize_with = "parsed")]
    pub address_map: Option<flashkit_trace::formats::layout::AddressMapping>,
}

impl TraceArgs {
    /// The options given, by flag name: each reads a trace, so without one they would do
    /// nothing, and `replay` and `compare` refuse them ([`crate::commands::trace_tools::source`]).
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            (self.format.is_some(), "--format"),
            (self.explain_format, "--explain-format"),
            (self.asu.is_some(), "--asu"),
            (self.skip_bad_lines, "--skip-bad-lines"),
            (self.sort_by_time, "--sort-by-time"),
            (self.time_unit.is_some(), "--time-unit"),
            (self.blkparse_event.is_some(), "--blkparse-event"),
            (self.address_map.is_some(), "--address-map"),
        ])
    }
}

/// The options of the subcommand that runs given on the command line (by clap id, the
/// field's name), not filled in from a default: for commands whose options have defaults
/// shown in `--help` and still need to know what the user asked for.
pub fn given_on_command_line(matches: &clap::ArgMatches) -> Vec<String> {
    let mut leaf = matches;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    leaf.ids()
        .filter(|id| leaf.value_source(id.as_str()) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| id.as_str().to_string())
        .collect()
}

/// The names of the flags marked set, in order.
pub fn given(flags: &[(bool, &'static str)]) -> Vec<&'static str> {
    flags
        .iter()
        .filter(|&&(set, _)| set)
        .map(|&(_, name)| name)
        .collect()
}

/// A config-file string parsed as the flag would be.
fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    let text = String::deserialize(d)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Output file (flashkit binary trace).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Seed of the generator.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Address space when --span is not given.
    #[arg(long, value_name = "SIZE")]
    pub capacity: Option<Size>,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

#[derive(Args, Debug)]
// --address-map lays a trace onto a device, which this command has not: refused, so not
// offered in the help.
#[command(mut_arg("address_map", |a| a.hide(true)))]
pub struct StatsArgs {
    /// Trace files (any supported format; see docs/TRACES.md).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Page size for the footprint count.
    #[arg(long, default_value = "4K", value_name = "SIZE")]
    pub page_size: Size,
    /// Also print a table per volume (ASU, LUN, disk, device, file).
    #[arg(long)]
    pub volumes: bool,
    #[command(flatten)]
    pub trace_options: TraceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Host writes to replay.
    #[arg(long, default_value = "10M", value_name = "N")]
    pub requests: Count,
    /// Logical capacity of the device.
    #[arg(long, default_value = "16G", value_name = "SIZE")]
    pub capacity: Size,
    /// Over-provisioning fraction.
    #[arg(long, default_value_t = 0.07, value_name = "FRACTION")]
    pub op: f64,
    /// Replay this binary trace instead of generating one.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["requests", "keep_trace"])]
    pub trace: Option<PathBuf>,
    /// Keep the generated trace at this path (default: a temporary file).
    #[arg(long, value_name = "FILE")]
    pub keep_trace: Option<PathBuf>,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The FTL to measure (page, block, bast, fast, ofast).
    #[arg(long, default_value = "page", value_name = "NAME")]
    pub ftl: FtlKind,
    /// Log blocks of BAST, FAST and O-FAST [default: 8].
    #[arg(long, value_name = "N")]
    pub log_blocks: Option<u32>,
    /// A tiny run (256 MiB, 200k writes) that prints the state hash: for tests.
    #[arg(long, conflicts_with_all = ["requests", "capacity"])]
    pub smoke: bool,
    /// Write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The experiment file (see examples/sweep-gc.toml).
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,
    /// Directory for results.jsonl, results.csv and cells.json (what each cell runs, which
    /// --resume checks against the file).
    #[arg(long, value_name = "DIR")]
    pub out: std::path::PathBuf,
    /// Continue an interrupted sweep: run only the cells without a recorded result.
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// Start over, discarding results already in the directory.
    #[arg(long)]
    pub force: bool,
    /// Worker threads [default: the file's `jobs`, else one per core].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A sweep directory (or its results.jsonl), or a JSON file written by --json.
    #[arg(value_name = "RESULTS")]
    pub results: std::path::PathBuf,
    /// Write the self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Write every figure as SVG into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<std::path::PathBuf>,
    /// Write every figure as PNG (twice the size, for print) into this directory.
    #[arg(long, value_name = "DIR")]
    pub png: Option<std::path::PathBuf>,
    /// Report title [default: "flashkit results: " and the results' directory or file name].
    #[arg(long)]
    pub title: Option<String>,
}

/// Device options (`[device]` in the config file).
#[derive(Args, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceArgs {
    /// NAND preset (fast-paper, grr-paper, mlc-4k, modern-tlc); see `flashkit presets`.
    #[arg(long, value_name = "NAME")]
    #[serde(deserialize_with = "preset")]
    pub preset: Option<String>,
    /// Logical capacity [default: 1G].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "positive_size")]
    pub capacity: Option<Size>,
    /// Over-provisioning, a fraction of the logical capacity [default: 0.07].
    #[arg(long, value_name = "FRACTION")]
    #[serde(deserialize_with = "over_provisioning")]
    pub op: Option<f64>,
    /// Page size, overriding the preset's.
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "page_size")]
    pub page_size: Option<Size>,
    /// Pages per block, overriding the preset's.
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "pages_per_block")]
    pub pages_per_block: Option<u32>,
    /// Erase cycles per block, overriding the preset's.
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "at_least_one")]
    pub endurance: Option<u32>,
}

impl DeviceArgs {
    /// The options given, by flag name.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            (self.preset.is_some(), "--preset"),
            (self.capacity.is_some(), "--capacity"),
            (self.op.is_some(), "--op"),
            (self.page_size.is_some(), "--page-size"),
            (self.pages_per_block.is_some(), "--pages-per-block"),
            (self.endurance.is_some(), "--endurance"),
        ])
    }
}

impl FtlArgs {
    /// The options given, by flag name.
    pub fn given(&self) -> Vec<&'static str> {
        crate::settings::unused_ftl_options(self, &[])
            .into_iter()
            .flat_map(|(names, _)| names)
            .collect()
    }
}

/// FTL options (`[ftl]` in the config file).
#[derive(Args, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FtlArgs {
    /// GC victim policies (greedy, cost-benefit, fifo), comma separated; compare runs each.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    #[serde(deserialize_with = "one_or_many")]
    pub gc: Vec<GcPolicy>,
    /// Collect garbage while fewer blocks than this are free, 2 or more [default: 4].
    #[arg(long, value_name = "BLOCKS", value_parser = clap::value_parser!(u32).range(2..))]
    #[serde(deserialize_with = "gc_threshold")]
    pub gc_threshold: Option<u32>,
    /// Static wear leveling: allowed erase-count spread, or "off" [default: 100].
    #[arg(long, value_name = "SPREAD|off")]
    pub wear_leveling: Option<WearSetting>,
    /// Log blocks of BAST, FAST and O-FAST [default: 8].
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "at_least_one")]
    pub log_blocks: Option<u32>,
    /// FAST and O-FAST: keep one log block for sequential writes ("on", the paper's FAST) or
    /// make every log block random ("off", the fully-associative scheme of its section 3.1)
    /// [default: on].
    #[arg(long, value_name = "on|off")]
    pub sw_log_block: Option<OnOff>,
    /// VET insertion schemes (lis, bis), comma separated; compare runs each [default: bis].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_insert: Vec<InsertScheme>,
    /// VET node layouts (pd, pf), comma separated; compare runs each [default: pf].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_nodes: Vec<VetNodes>,
    /// VET hash tables (cuckoo, swiss, std), comma separated; compare runs each
    /// [default: cuckoo]. swiss is hashbrown's SwissTable with foldhash, std the same table
    /// with SipHash (what std's HashMap is).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_table: Vec<VetTable>,
}

/// Run options (`[run]` in the config file).
#[derive(Args, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunArgs {
    /// Seed of every random choice [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Measure a fresh drive instead of preconditioning it to steady state.
    #[arg(long)]
    #[serde(rename = "no_precondition")]
    pub no_precondition: bool,
    /// Random overwrites after the sequential fill, in logical capacities [default: 1].
    #[arg(long, value_name = "CAPACITIES", conflicts_with = "no_precondition")]
    #[serde(deserialize_with = "non_negative")]
    pub precondition_overwrites: Option<f64>,
}

/// Workload options (`[workload]` in the config file).
#[derive(Args, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadArgs {
    /// Pattern: uniform, sequential, zipf, hot-cold, gaussian, camera [default: hot-cold].
    #[arg(long, value_name = "PATTERN")]
    #[serde(deserialize_with = "pattern")]
    pub workload: Option<String>,
    /// Number of requests [default: 300k].
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "positive_count")]
    pub requests: Option<Count>,
    /// Fixed request size.
    #[arg(long, value_name = "SIZE", conflicts_with = "sizes")]
    #[serde(deserialize_with = "positive_size")]
    pub size: Option<Size>,
    /// Weighted request sizes [default: 4K:70,16K:20,64K:10].
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<SizeList>,
    /// Weighted read sizes where reads differ from writes, e.g. 8K:50,16K:50 [default: the
    /// request sizes].
    #[arg(long, value_name = "LIST")]
    pub read_sizes: Option<SizeList>,
    /// Share of reads, 0 to 1 [default: 0.3].
    #[arg(long, value_name = "FRACTION")]
    pub read_fraction: Option<Fraction>,
    /// Share of trims, 0 to 1 [default: 0.01].
    #[arg(long, value_name = "FRACTION")]
    pub trim_fraction: Option<Fraction>,
    /// Zipf exponent [default: 0.99].
    #[arg(long)]
    #[serde(deserialize_with = "theta")]
    pub theta: Option<f64>,
    /// Hot/cold split as ACCESS/SPACE percentages: ACCESS% of requests go to the first
    /// SPACE% of the span, the others anywhere in it [default: 80/20].
    #[arg(long, value_name = "ACCESS/SPACE")]
    pub hot: Option<HotSplit>,
    /// Gaussian centre, a fraction of the span [default: 0.5].
    #[arg(long)]
    #[serde(deserialize_with = "center")]
    pub center: Option<f64>,
    /// Gaussian standard deviation, a fraction of the span [default: 0.1].
    #[arg(long)]
    #[serde(deserialize_with = "stddev")]
    pub stddev: Option<f64>,
    /// Camera (a FAT16 card, in sectors of --align): photo size, or a range drawn from
    /// uniformly, as SIZE or MIN-MAX [default: 2M-4M, the FAST paper's camera B].
    #[arg(long, value_name = "SIZE|MIN-MAX")]
    pub file_size: Option<SizeRange>,
    /// Camera: bytes per data write, a multiple of the cluster [default: 64K].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "positive_size")]
    pub chunk_size: Option<Size>,
    /// Camera: bytes per FAT cluster, a power-of-two number of sectors [default: 4K].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "positive_size")]
    pub cluster_size: Option<Size>,
    /// Camera: start the data area at a multiple of this many bytes, e.g. the erase block
    /// [default: right after the root directory, unaligned].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "positive_size")]
    pub data_align: Option<Size>,
    /// Address space covered [default: the device's logical capacity].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "positive_size")]
    pub span: Option<Size>,
    /// Offset and size alignment [default: 4K].
    #[arg(long, value_name = "SIZE")]
    #[serde(deserialize_with = "power_of_two")]
    pub align: Option<Size>,
    /// Time between requests in nanoseconds [default: 0].
    #[arg(long, value_name = "NS")]
    pub interarrival_ns: Option<u64>,
}

impl WorkloadArgs {
    /// The options given, by flag name: each describes a generated workload, so with a
    /// trace they would do nothing, and `replay` and `compare` refuse them.
    pub fn given(&self) -> Vec<&'static str> {
        let mut names = given(&[
            (self.workload.is_some(), "--workload"),
            (self.requests.is_some(), "--requests"),
            (self.size.is_some(), "--size"),
            (self.sizes.is_some(), "--sizes"),
            (self.read_sizes.is_some(), "--read-sizes"),
            (self.read_fraction.is_some(), "--read-fraction"),
            (self.trim_fraction.is_some(), "--trim-fraction"),
            (self.span.is_some(), "--span"),
            (self.align.is_some(), "--align"),
            (self.interarrival_ns.is_some(), "--interarrival-ns"),
        ]);
        names.extend(self.pattern_options().into_iter().map(|(name, _)| name));
        names
    }

    /// The pattern-specific options given, by flag name, with the pattern each belongs to.
    pub fn pattern_options(&self) -> Vec<(&'static str, &'static str)> {
        [
            (self.theta.is_some(), "--theta", "zipf"),
            (self.hot.is_some(), "--hot", "hot-cold"),
            (self.center.is_some(), "--center", "gaussian"),
            (self.stddev.is_some(), "--stddev", "gaussian"),
            (self.file_size.is_some(), "--file-size", "camera"),
            (self.chunk_size.is_some(), "--chunk-size", "camera"),
            (self.cluster_size.is_some(), "--cluster-size", "camera"),
            (self.data_align.is_some(), "--data-align", "camera"),
        ]
        .into_iter()
        .filter(|&(set, _, _)| set)
        .map(|(_, name, pattern)| (name, pattern))
        .collect()
    }
}

/// Output options.
#[derive(Args, Debug, Default)]
pub struct OutputArgs {
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the figures as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Include wall-clock times in the JSON (which is otherwise identical for equal seeds).
    #[arg(long, requires = "json")]
    pub wall_clock_in_json: bool,
}

impl OutputArgs {
    /// A usage error if `--json` or `--csv` names an input of the run (checked before the
    /// work; see [`crate::output::check_output`]).
    pub fn check_not_inputs(&self) -> Result<(), crate::Failure> {
        crate::output::check_outputs(&[
            ("--json", self.json.as_deref()),
            ("--csv", self.csv.as_deref()),
        ])
        .map_err(crate::Failure::Usage)
    }
}

/// A byte size: `4096`, `4K`, `16GiB` (in the config file, a string or an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);

impl FromStr for Size {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_size(text).map(Size)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_text(d, parse_size).map(Size)
    }
}

/// A count: `1000`, `10M`, `2.5k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count(pub u64);

impl FromStr for Count {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_count(text).map(Count)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_text(d, parse_count).map(Count)
    }
}

/// A list in a config file may also be written as a single value: `gc = "fifo"`. The value
/// is read first and then each element as a `T`, so that a wrong element gets `T`'s own error
/// ("unknown variant `chained`, expected one of ...") rather than serde's "did not match any
/// variant of untagged enum".
fn one_or_many<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    let one = |value: toml::Value| T::deserialize(value).map_err(serde::de::Error::custom);
    match toml::Value::deserialize(d)? {
        toml::Value::Array(values) => values.into_iter().map(one).collect(),
        // "greedy,fifo", as the flag takes it.
        toml::Value::String(text) => text
            .split(',')
            .map(|item| one(toml::Value::String(item.trim().to_string())))
            .collect(),
        value => Ok(vec![one(value)?]),
    }
}

/// `gc_threshold` in a config file: 2 or more, as `--gc-threshold` (the page FTL needs a
/// block to collect into and one to spare).
fn gc_threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match u32::deserialize(d)? {
        blocks @ 2.. => Ok(Some(blocks)),
        blocks => Err(serde::de::Error::custom(format!(
            "gc_threshold {blocks} is below the minimum of 2 blocks"
        ))),
    }
}

/// A config-file value checked where it is read, so that a bad one is reported at its line
/// with its key (by toml), rather than after the merge with the flags, where the error could
/// name neither. The rules are the ones the libraries apply to the merged value; a rule that
/// involves two options (a size and the alignment) is checked after the merge, and
/// [`crate::settings::ConfigFile::blame`] finds the lines then.
fn checked<'de, D, T>(
    d: D,
    check: impl FnOnce(&T) -> Result<(), String>,
) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let value = T::deserialize(d)?;
    check(&value).map_err(serde::de::Error::custom)?;
    Ok(Some(value))
}

fn preset<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    checked(d, |name: &String| {
        if flashkit_core::NandPreset::by_name(name).is_some() {
            return Ok(());
        }
        let names: Vec<_> = flashkit_core::NandPreset::ALL
            .iter()
            .map(|p| p.name)
            .collect();
        Err(format!(
            "unknown device preset {name:?} (expected one of: {})",
            names.join(", ")
        ))
    })
}

/// The workload patterns `--workload` names.
pub const PATTERNS: [&str; 6] = [
    "uniform",
    "sequential",
    "zipf",
    "hot-cold",
    "gaussian",
    "camera",
];

fn pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    checked(d, |name: &String| {
        if PATTERNS.contains(&name.as_str()) {
            Ok(())
        } else {
            Err(format!(
                "unknown workload {name:?} (expected {})",
                PATTERNS.join(", ")
            ))
        }
    })
}

fn over_provisioning<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    checked(d, |&op: &f64| {
        if op.is_finite() && (0.0..=4.0).contains(&op) {
            Ok(())
        } else {
            Err(flashkit_core::GeometryError::OverProvisioning(op).to_string())
        }
    })
}

fn page_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| match u32::try_from(bytes) {
        Ok(page) if page.is_power_of_two() && (512..=1 << 20).contains(&page) => Ok(()),
        _ => Err(format!(
            "page size {bytes} B is not a power of two between 512 B and 1 MiB"
        )),
    })
}

fn pages_per_block<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    checked(d, |&pages: &u32| match pages {
        2..=65536 => Ok(()),
        _ => Err(flashkit_core::GeometryError::PagesPerBlock(pages).to_string()),
    })
}

fn at_least_one<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    checked(d, |&n: &u32| match n {
        0 => Err("0 is below the minimum of 1".into()),
        _ => Ok(()),
    })
}

fn positive_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Count>, D::Error> {
    checked(d, |&Count(n): &Count| match n {
        0 => Err("0 is below the minimum of 1".into()),
        _ => Ok(()),
    })
}

fn positive_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| match bytes {
        0 => Err("0 B: a size must be above 0".into()),
        _ => Ok(()),
    })
}

fn power_of_two<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| {
        if bytes.is_power_of_two() && bytes <= u64::from(u32::MAX) {
            Ok(())
        } else {
            Err(format!("{bytes} B is not a power of two below 4 GiB"))
        }
    })
}

/// A finite real number in `range`, described as `what` in the error.
fn real_in<'de, D: Deserializer<'de>>(
    d: D,
    range: impl std::ops::RangeBounds<f64>,
    what: &str,
) -> Result<Option<f64>, D::Error> {
    checked(d, |&x: &f64| {
        if x.is_finite() && range.contains(&x) {
            Ok(())
        } else {
            Err(format!("{x} is not {what}"))
        }
    })
}

fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    real_in(d, 0.0.., "a finite number of 0 or more")
}

fn theta<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use std::ops::Bound::{Excluded, Unbounded};
    real_in(d, (Excluded(0.0), Unbounded), "a finite exponent above 0")
}

fn center<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    real_in(d, 0.0..=1.0, "a fraction of the span from 0 to 1")
}

fn stddev<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use std::ops::Bound::{Excluded, Included};
    real_in(
        d,
        (Excluded(0.0), Included(1.0)),
        "a fraction of the span above 0 and at most 1",
    )
}

/// A share from 0 to 1 (`--read-fraction`, `read_fraction` in a config file), checked where
/// it is read, so that a bad one in a file is reported at its line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fraction(pub f64);

impl Fraction {
    fn new(value: f64) -> Result<Fraction, String> {
        if (0.0..=1.0).contains(&value) {
            Ok(Fraction(value))
        } else {
            Err(format!("{value} is not a fraction from 0 to 1"))
        }
    }
}

impl FromStr for Fraction {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let value = text
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not a number"))?;
        Fraction::new(value)
    }
}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Fraction::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// A hot/cold split, `ACCESS/SPACE` percentages such as `80/20`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotSplit {
    /// Share of requests sent to the hot space, percent.
    pub access_percent: f64,
    /// Share of the span that is hot, percent.
    pub space_percent: f64,
}

impl FromStr for HotSplit {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let percent = |part: &str| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
        };
        let split = text.split_once('/').and_then(|(access, space)| {
            Some(HotSplit {
                access_percent: percent(access)?,
                space_percent: percent(space)?,
            })
        });
        split.ok_or_else(|| {
            format!("{text:?} is not ACCESS/SPACE percentages (0 to 100), like 80/20")
        })
    }
}

impl<'de> Deserialize<'de> for HotSplit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A size or a range of sizes, `SIZE` or `MIN-MAX` such as `2M-4M` (in the config file, a
/// string or an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeRange {
    /// The smallest size, bytes.
    pub min: u64,
    /// The largest size, bytes.
    pub max: u64,
}

impl FromStr for SizeRange {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (min, max) = text.split_once('-').unwrap_or((text, text));
        let size = |part: &str| {
            parse_size(part.trim()).map_err(|why| format!("{text:?} is not SIZE or MIN-MAX: {why}"))
        };
        SizeRange::new(size(min)?, size(max)?)
    }
}

impl SizeRange {
    fn new(min: u64, max: u64) -> Result<Self, String> {
        if min == 0 {
            return Err("0 B: a size must be above 0".into());
        }
        if min > max {
            return Err(format!("{min}-{max} B is an empty range: MIN is above MAX"));
        }
        Ok(SizeRange { min, max })
    }
}

impl<'de> Deserialize<'de> for SizeRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => SizeRange::new(n, n),
            Raw::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// Weighted sizes, `SIZE[:WEIGHT],...` such as `4K:70,16K:20,64K:10` (weight 1 if left
/// out).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeList(pub flashkit_trace::workload::SizeDist);

impl FromStr for SizeList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut sizes = Vec::new();
        for item in text.split(',') {
            let (size, weight) = item.split_once(':').unwrap_or((item, "1"));
            let bytes = parse_size(size).map_err(|why| format!("item {item:?}: {why}"))?;
            let bytes = u32::try_from(bytes)
                .map_err(|_| format!("item {item:?}: {bytes} B is not below 4 GiB"))?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("item {item:?}: weight {weight:?} is not a whole number"))?;
            if bytes == 0 {
                return Err(format!("item {item:?}: a size must be above 0 B"));
            }
            sizes.push((bytes, weight));
        }
        if sizes.iter().all(|&(_, weight)| weight == 0) {
            return Err(format!("{text:?} gives no size a positive weight"));
        }
        Ok(SizeList(flashkit_trace::workload::SizeDist::Choice {
            sizes,
        }))
    }
}

impl<'de> Deserialize<'de> for SizeList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

fn number_or_text<'de, D: Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Number(n) => Ok(n),
        Raw::Text(t) => parse(&t).map_err(serde::de::Error::custom),
    }
}

/// Static wear-leveling setting: a spread threshold or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WearSetting(pub Option<u32>);

impl FromStr for WearSetting {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text == "off" {
            return Ok(WearSetting(None));
        }
        text.parse().map(|n| WearSetting(Some(n))).map_err(|_| {
            format!("wear leveling {text:?} is neither an erase-count spread nor \"off\"")
        })
    }
}

impl<'de> Deserialize<'de> for WearSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u32),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Ok(WearSetting(Some(n))),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A switch given as `on` or `off` (in the config file, also `true` or `false`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff(pub bool);

impl FromStr for OnOff {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "on" | "true" => Ok(OnOff(true)),
            "off" | "false" => Ok(OnOff(false)),
            _ => Err(format!("{text:?} is neither \"on\" nor \"off\"")),
        }
    }
}

impl<'de> Deserialize<'de> for OnOff {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Flag(flag) => Ok(OnOff(flag)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}
