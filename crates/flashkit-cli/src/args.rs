//! Command-line arguments. The option groups that double as sections of the TOML config
//! file (`--config`) are declared in `flashkit_lab::config` and flattened in here: a flag
//! given on the command line wins over the file, the file over the built-in default.

use clap::{Args, Parser, Subcommand};
use flashkit_ftl::FtlKind;
use flashkit_lab::config::{
    Count, DeviceSection, FtlSection, RunSection, Size, TraceSection, WorkloadSection,
};
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
    pub paper_trace_options: TraceSection,
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
    pub trace_options: TraceSection,
    /// FTLs to compare, comma separated (default: every FTL flashkit has).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub ftl: Vec<FtlKind>,
    /// Runs at once [default: one a core]. The figures do not depend on it (each run is
    /// seeded on its own); the wall-clock lines do, so time runs with --jobs 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub device: DeviceSection,
    #[command(flatten)]
    pub ftl_options: FtlSection,
    #[command(flatten)]
    pub run: RunSection,
    #[command(flatten)]
    pub workload: WorkloadSection,
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
    pub trace_options: TraceSection,
    /// The FTL.
    #[arg(long, default_value = "page", value_name = "NAME")]
    pub ftl: FtlKind,
    #[command(flatten)]
    pub device: DeviceSection,
    #[command(flatten)]
    pub ftl_options: FtlSection,
    #[command(flatten)]
    pub run: RunSection,
    #[command(flatten)]
    pub workload: WorkloadSection,
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
    pub trace_options: TraceSection,
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
    pub trace_options: TraceSection,
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
    pub workload: WorkloadSection,
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
    pub trace_options: TraceSection,
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
    pub fn check_not_inputs(&self) -> Result<(), crate::failure::Failure> {
        crate::output::check_outputs(&[
            ("--json", self.json.as_deref()),
            ("--csv", self.csv.as_deref()),
        ])
        .map_err(crate::failure::Failure::Usage)
    }
}
