//! `flashkit reproduce fast`: the evaluation of Lee et al., "A Log Buffer-Based Flash
//! Translation Layer Using Fully-Associative Sector Translation" (ACM TECS 6(3), 2007).
//!
//! - Fig. 10 and Table II: patterns A-E ([`flashkit_trace::workload::fast`]) through BAST, FAST and O-FAST with 4,
//!   8, 16, 32 and 64 log blocks, on the paper's NAND (512-byte sectors, 32 to a block, 15 /
//!   200 / 2000 us), a drive whose data blocks are full (sequential fill, as the paper's
//!   examples assume); erase counts, elapsed time under the paper's serial cost model and
//!   switch counts, with the paper's figures and claims beside ours.
//! - Section 3.5: random writes over `nhb` hot blocks with `nlb` log blocks, FAST's erases
//!   against BAST's and against the analysis' approximations.
//! - The real trace excerpts of `../shared/traces/` through all five FTLs.
//!
//! `--out DIR` writes the runs as JSON and draws the paper's figures as SVG (listed in
//! `fast/figures.rs` and docs/reproduction/fast.md).
//!
//! What it is not: the paper's traces A-D are not public, so the patterns are generated
//! from its description of them; docs/reproduction/fast.md compares and explains.

use crate::commands::reproduce::{Figures, run_all};
use crate::output::{write_csv, write_json};
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::Args;
use flashkit_core::NandPreset;
use flashkit_device::CountsOnly;
use flashkit_ftl::{FtlKind, FtlOptions, HybridConfig};
use flashkit_sim::{
    DeviceSpec, NoProgress, Precondition, RunOutcome, RunReport, RunSpec, Source, TraceRecord,
};
use flashkit_trace::TraceError;
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::{AddressMapping, PreparedTrace};
use flashkit_trace::workload::fast::{self, Generator, PatternName, SECTOR};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod figures;
mod report;

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
    pub capacity: crate::args::Size,
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

/// What `--quick` runs: a fiftieth of the paper's writes, two log-block counts.
const QUICK_SCALE: f64 = 0.02;
const QUICK_LOG_BLOCKS: [u32; 2] = [4, 16];

/// What a run replays.
#[derive(Clone, Debug)]
enum Input {
    Pattern(PatternName),
    HotBlocks(u64),
    Trace(Arc<PreparedTrace>),
}

/// The experiment a run belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Experiment {
    /// Fig. 10 / Table II: a pattern.
    Pattern(PatternName),
    /// Section 3.5: this many hot blocks.
    HotBlocks(u64),
    /// A real trace excerpt, by file name.
    Trace(String),
}

/// One run.
#[derive(Clone, Debug)]
pub struct Job {
    /// Its experiment.
    pub experiment: Experiment,
    /// Scheme name in tables ("bast", "fast", "fast-rw", ...).
    pub scheme: &'static str,
    /// Log blocks (0 where they do not apply).
    pub log_blocks: u32,
    spec: RunSpec,
    input: Input,
    budget: u64,
}

/// A finished run.
pub struct Done {
    /// The run.
    pub job: Job,
    /// Its report.
    pub report: RunReport,
}

/// The log blocks of section 3.5's experiments: a practical count ("generally limited to
/// less than 10", section 4).
pub const NLB: u32 = 8;
/// Section 3.5's hot-block counts: one, between one and nlb, nlb, more than nlb.
pub const NHB: [u64; 4] = [1, 4, 8, 32];
/// Writes per section 3.5 experiment (before scaling).
pub const NHB_WRITES: u64 = 100_000;

pub fn run(mut args: FastArgs) -> Outcome {
    if args.quick {
        args.scale = QUICK_SCALE;
        args.log_blocks = QUICK_LOG_BLOCKS.to_vec();
    }
    let patterns = parse_patterns(&args.patterns)?;
    if !(args.scale.is_finite() && args.scale > 0.0) {
        return Err(Failure::Usage(anyhow!(
            "--scale {} must be a positive fraction of the paper's write counts",
            args.scale
        )));
    }
    let device = card(&args);
    let mut jobs = pattern_jobs(&args, &device, &patterns);
    jobs.extend(hot_block_jobs(&args, &device));
    let mut trace_notes = Vec::new();
    if !args.no_traces {
        jobs.extend(trace_jobs(&args, &mut trace_notes)?);
    }
    for job in &jobs {
        job.spec.check().map_err(crate::sim_failure)?;
    }
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let done = execute(jobs, args.jobs)?;
    print!("{}", report::render(&args, &device, &done, &trace_notes));
    // What --json writes, and --out as fast.json.
    let document = || {
        let reports: Vec<&RunReport> = done.iter().map(|d| &d.report).collect();
        serde_json::json!({ "runs": reports, "claims": report::ledger(&done) })
    };
    if let Some(path) = &args.json {
        write_json(path, &document())?;
    }
    if let Some(path) = &args.csv {
        write_csv(path, &report::csv(&done))?;
    }
    if let Some(figures) = &mut figures {
        write_json(&figures.path("fast.json"), &document()).map_err(Failure::Runtime)?;
        figures.note("fast.json");
        let claims = serde_json::json!({ "claims": report::ledger(&done) });
        write_json(&figures.path("claims.json"), &claims).map_err(Failure::Runtime)?;
        figures.note("claims.json");
        self::figures::write(figures, &args, &done).map_err(Failure::Runtime)?;
        figures.report();
    }
    Ok(())
}

fn parse_patterns(names: &[String]) -> Result<Vec<PatternName>, Failure> {
    names
        .iter()
        .map(|name| {
            PatternName::ALL
                .into_iter()
                .find(|p| p.letter().eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| {
                    Failure::Usage(anyhow!(
                        "unknown pattern {name:?} (expected A, B, C, D or E)"
                    ))
                })
        })
        .collect()
}

/// The simulated card: the paper's NAND.
fn card(args: &FastArgs) -> DeviceSpec {
    DeviceSpec {
        preset: NandPreset::FAST_PAPER.name.into(),
        capacity_bytes: args.capacity.0,
        over_provisioning: args.op,
        ..DeviceSpec::default()
    }
}

/// Data blocks full, nothing else: the state the paper's examples assume.
fn filled() -> Option<Precondition> {
    Some(Precondition {
        sequential_fill: true,
        random_overwrites: 0.0,
    })
}

fn spec(
    label: String,
    kind: FtlKind,
    hybrid: HybridConfig,
    device: &DeviceSpec,
    seed: u64,
) -> RunSpec {
    RunSpec {
        label,
        ftl: kind,
        options: FtlOptions {
            hybrid,
            ..FtlOptions::default()
        },
        device: device.clone(),
        precondition: filled(),
        seed,
    }
}

fn scaled(args: &FastArgs, writes: u64) -> u64 {
    ((writes as f64 * args.scale).round() as u64).max(1)
}

fn pattern_jobs(args: &FastArgs, device: &DeviceSpec, patterns: &[PatternName]) -> Vec<Job> {
    // "fast-rw" is not one of the paper's schemes: FAST without its SW log block, run to
    // show what Algorithm 2's SW block costs or saves on each pattern.
    let schemes = [
        ("bast", FtlKind::Bast, true),
        ("fast", FtlKind::Fast, true),
        ("ofast", FtlKind::OFast, true),
        ("fast-rw", FtlKind::Fast, false),
    ];
    let mut jobs = Vec::new();
    for &pattern in patterns {
        for &log_blocks in &args.log_blocks {
            for (scheme, kind, sw_log_block) in schemes {
                let hybrid = HybridConfig {
                    log_blocks,
                    sw_log_block,
                };
                let label = format!("{}/{scheme}/{log_blocks}", pattern.letter());
                jobs.push(Job {
                    experiment: Experiment::Pattern(pattern),
                    scheme,
                    log_blocks,
                    spec: spec(label, kind, hybrid, device, args.seed),
                    input: Input::Pattern(pattern),
                    budget: scaled(args, pattern.paper_writes()),
                });
            }
        }
    }
    jobs
}

/// BAST with nlb log blocks; FAST with nlb RW log blocks and no SW block (the analysis
/// counts RW blocks only); FAST with its SW block on top.
fn hot_block_jobs(args: &FastArgs, device: &DeviceSpec) -> Vec<Job> {
    let schemes = [
        ("bast", FtlKind::Bast, NLB, true),
        ("fast-rw", FtlKind::Fast, NLB, false),
        ("fast", FtlKind::Fast, NLB + 1, true),
    ];
    let mut jobs = Vec::new();
    for nhb in NHB {
        for (scheme, kind, log_blocks, sw_log_block) in schemes {
            let hybrid = HybridConfig {
                log_blocks,
                sw_log_block,
            };
            jobs.push(Job {
                experiment: Experiment::HotBlocks(nhb),
                scheme,
                log_blocks,
                spec: spec(
                    format!("nhb={nhb}/{scheme}"),
                    kind,
                    hybrid,
                    device,
                    args.seed,
                ),
                input: Input::HotBlocks(nhb),
                budget: scaled(args, NHB_WRITES),
            });
        }
    }
    jobs
}

/// Every trace file under the traces directory, in name order, through all five FTLs on
/// the paper's NAND, the device sized to each trace's footprint.
fn trace_jobs(args: &FastArgs, notes: &mut Vec<String>) -> Result<Vec<Job>, Failure> {
    let files = trace_files(&args.traces);
    if files.is_empty() {
        notes.push(format!(
            "no trace excerpts under {} (give --traces DIR, or --no-traces)",
            args.traces.display()
        ));
        return Ok(Vec::new());
    }
    let base = DeviceSpec {
        over_provisioning: 0.10,
        ..card(args)
    };
    let block = base.block_bytes().map_err(crate::sim_failure)?;
    let mut jobs = Vec::new();
    for path in files {
        let name = path
            .strip_prefix(&args.traces)
            .unwrap_or(&path)
            .display()
            .to_string();
        let prepared = match PreparedTrace::prepare(
            &path,
            &TraceOptions::default(),
            AddressMapping::Compact,
            block,
        ) {
            Ok(prepared) => prepared,
            Err(error) => {
                notes.push(format!("{name}: not replayed: {error}"));
                continue;
            }
        };
        let device = base.sized_for(&prepared).map_err(crate::sim_failure)?;
        let prepared = Arc::new(prepared);
        for (scheme, kind) in [
            ("page", FtlKind::Page),
            ("block", FtlKind::Block),
            ("bast", FtlKind::Bast),
            ("fast", FtlKind::Fast),
            ("ofast", FtlKind::OFast),
        ] {
            let hybrid = HybridConfig::default();
            jobs.push(Job {
                experiment: Experiment::Trace(name.clone()),
                scheme,
                log_blocks: if kind.uses_log_blocks() {
                    hybrid.log_blocks
                } else {
                    0
                },
                spec: spec(format!("{name}/{scheme}"), kind, hybrid, &device, args.seed),
                input: Input::Trace(Arc::clone(&prepared)),
                budget: 0,
            });
        }
    }
    Ok(jobs)
}

fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_none_or(|e| e != "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Run every job, `jobs` at a time; results in job order.
fn execute(all: Vec<Job>, jobs: Option<usize>) -> Result<Vec<Done>, Failure> {
    run_all("reproduce fast", all, jobs, |job| {
        run_job(&job).map(|outcome| Done {
            job,
            report: outcome.report,
        })
    })
    .into_iter()
    .map(|r| r.map_err(|error| Failure::Runtime(anyhow!(error))))
    .collect()
}

fn run_job(job: &Job) -> Result<RunOutcome, String> {
    let describe = |e: flashkit_sim::SimError| format!("{}: {e}", job.spec.label);
    let capacity = job.spec.device.capacity_bytes;
    let ppb = NandPreset::FAST_PAPER.pages_per_block;
    let seed = job.spec.seed;
    // A generator is refused only on a device too small for its pattern.
    let generated = |generator: Result<Generator, TraceError>,
                     description: String|
     -> Result<RunOutcome, flashkit_sim::SimError> {
        let generator = generator?;
        let record = TraceRecord {
            digest: format!(
                "{:032x}",
                flashkit_trace::binary::digest(description.as_bytes())
            ),
            description,
            requests: 0,
        };
        flashkit_sim::run_with::<CountsOnly, _>(
            &job.spec,
            generator.map(Ok),
            record,
            &mut NoProgress,
        )
    };
    match &job.input {
        Input::Pattern(name) => generated(
            fast::pattern(*name, capacity, ppb, job.budget, seed),
            format!(
                "FAST paper pattern {} ({}), {} sector writes, seed {seed}",
                name.letter(),
                name.description(),
                job.budget
            ),
        ),
        Input::HotBlocks(n) => generated(
            fast::hot_blocks(*n, capacity, ppb, job.budget, seed),
            format!(
                "{} single-sector writes over {n} hot blocks, seed {seed}",
                job.budget
            ),
        ),
        Input::Trace(prepared) => flashkit_sim::run(
            &job.spec,
            &Source::Trace(Arc::clone(prepared)),
            &mut NoProgress,
        ),
    }
    .map_err(describe)
}

/// Sector writes a run made (its host pages written).
pub fn sector_writes(report: &RunReport) -> u64 {
    report.host.write_bytes / SECTOR
}
