//! The evaluation of Lee et al., "A Log Buffer-Based Flash
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
//! [`run`] returns the tables, the runs as JSON (`fast.json`) and as CSV rows, the claims
//! ledger, and the paper's figures (listed in `fast/figures.rs` and
//! docs/reproduction/fast.md).
//!
//! What it is not: the paper's traces A-D are not public, so the patterns are generated
//! from its description of them; docs/reproduction/fast.md compares and explains.

use super::{Document, LabError, LedgerPlace, Printer, Reproduction, run_all};
use crate::claims::Paper;
use flashkit_core::NandPreset;
use flashkit_device::CountsOnly;
use flashkit_ftl::{FtlKind, FtlOptions, FullSw, HybridConfig};
use flashkit_sim::{
    DeviceSpec, NoProgress, Precondition, Progress, RunOutcome, RunReport, RunSpec, Source,
    TraceRecord,
};
use flashkit_trace::TraceError;
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::{AddressMapping, PreparedTrace};
use flashkit_trace::workload::fast::{self, Generator, PatternName, SECTOR};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod figures;
mod report;
pub mod sweep;

/// What to run: the FAST paper's evaluation and its parameters. Deserializes from TOML or
/// JSON with every field optional (the defaults are the paper's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FastSpec {
    /// Fraction of the paper's write counts to generate per pattern (Table I: A 2.2M,
    /// B 3.1M, C 398k, D 405k, E 150k sector writes).
    pub scale: f64,
    /// Log-block counts (Fig. 10's axis).
    pub log_blocks: Vec<u32>,
    /// Patterns to run, by letter.
    pub patterns: Vec<String>,
    /// Logical capacity of the simulated card, in bytes.
    pub capacity: u64,
    /// Over-provisioning (spare blocks hold the log blocks plus one for merges).
    pub op: f64,
    /// Where the real trace excerpts are (a missing directory is noted, not an error).
    pub traces: PathBuf,
    /// Skip the real traces.
    pub no_traces: bool,
    /// Seed of the generated patterns.
    pub seed: u64,
    /// Runs at a time (`None`: one a core); the results do not depend on it.
    pub jobs: Option<usize>,
    /// A smoke run in seconds: scale 0.02 and log blocks 4 and 16, every pattern and trace.
    pub quick: bool,
}

impl Default for FastSpec {
    fn default() -> FastSpec {
        FastSpec {
            scale: 1.0,
            log_blocks: vec![4, 8, 16, 32, 64],
            patterns: ["A", "B", "C", "D", "E"].map(String::from).to_vec(),
            capacity: 64 << 20,
            op: 0.03,
            traces: PathBuf::from("../shared/traces"),
            no_traces: false,
            seed: 1,
            jobs: None,
            quick: false,
        }
    }
}

/// What `--quick` runs: a fiftieth of the paper's writes, two log-block counts.
const QUICK_SCALE: f64 = 0.02;
const QUICK_LOG_BLOCKS: [u32; 2] = [4, 16];

/// What a run replays.
#[derive(Clone, Debug)]
enum Input {
    Pattern(PatternName),
    HotBlocks(u64),
    HotSet(sweep::SweepPoint),
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
    /// A point of the sweeps of what decides Fig. 10 ([`sweep`]).
    Sweep(sweep::SweepPoint),
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

/// Run the paper's evaluation: its tables, figures, ledger, `fast.json` and CSV rows.
pub fn run(spec: &FastSpec, progress: &dyn Progress) -> Result<Reproduction, LabError> {
    let mut args = spec.clone();
    if args.quick {
        args.scale = QUICK_SCALE;
        args.log_blocks = QUICK_LOG_BLOCKS.to_vec();
    }
    let patterns = parse_patterns(&args.patterns)?;
    if !(args.scale.is_finite() && args.scale > 0.0) {
        return Err(LabError::spec(
            "scale",
            format!(
                "{} must be a positive fraction of the paper's write counts",
                args.scale
            ),
        ));
    }
    let started = Instant::now();
    let device = card(&args);
    let mut jobs = pattern_jobs(&args, &device, &patterns);
    jobs.extend(hot_block_jobs(&args, &device));
    jobs.extend(sweep::jobs(&args, &patterns));
    let mut trace_notes = Vec::new();
    if !args.no_traces {
        jobs.extend(trace_jobs(&args, &mut trace_notes)?);
    }
    for job in &jobs {
        job.spec.check().map_err(LabError::from_sim)?;
    }
    let done = execute(jobs, args.jobs, progress)?;
    let mut out = Printer::default();
    out.text(report::render(&args, &device, &done, &trace_notes));
    let claims = report::ledger(&done);
    let reports: Vec<&RunReport> = done.iter().map(|d| &d.report).collect();
    let document = serde_json::json!({ "runs": reports, "claims": &claims });
    Ok(Reproduction {
        paper: Paper::Fast,
        printed: out.into_printed(),
        figures: figures::all(&args, &done),
        documents: vec![Document::of("fast.json", &document)],
        rows: Some(report::csv(&done)),
        notes: Vec::new(),
        ledger_place: LedgerPlace::AfterDocuments,
        claims,
        runs: done.len(),
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

fn parse_patterns(names: &[String]) -> Result<Vec<PatternName>, LabError> {
    names
        .iter()
        .map(|name| {
            PatternName::ALL
                .into_iter()
                .find(|p| p.letter().eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| {
                    LabError::spec(
                        "patterns",
                        format!("unknown pattern {name:?} (expected A, B, C, D or E)"),
                    )
                })
        })
        .collect()
}

/// The simulated card: the paper's NAND.
fn card(args: &FastSpec) -> DeviceSpec {
    DeviceSpec {
        preset: NandPreset::FAST_PAPER.name.into(),
        capacity_bytes: args.capacity,
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

fn scaled(args: &FastSpec, writes: u64) -> u64 {
    ((writes as f64 * args.scale).round() as u64).max(1)
}

fn pattern_jobs(args: &FastSpec, device: &DeviceSpec, patterns: &[PatternName]) -> Vec<Job> {
    // Not the paper's schemes: "fast-rw" is FAST without its SW log block, run to show what
    // Algorithm 2's SW block costs or saves on each pattern; "fast-switch" is FAST with ours
    // for a full SW block (switched, the page sent to the RW blocks) beside the paper's merge.
    let schemes = [
        ("bast", FtlKind::Bast, true, FullSw::Merge),
        ("fast", FtlKind::Fast, true, FullSw::Merge),
        ("ofast", FtlKind::OFast, true, FullSw::Merge),
        ("fast-rw", FtlKind::Fast, false, FullSw::Merge),
        ("fast-switch", FtlKind::Fast, true, FullSw::Switch),
    ];
    let mut jobs = Vec::new();
    for &pattern in patterns {
        for &log_blocks in &args.log_blocks {
            for (scheme, kind, sw_log_block, full_sw) in schemes {
                let hybrid = HybridConfig {
                    log_blocks,
                    sw_log_block,
                    full_sw,
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
fn hot_block_jobs(args: &FastSpec, device: &DeviceSpec) -> Vec<Job> {
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
                ..HybridConfig::default()
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
fn trace_jobs(args: &FastSpec, notes: &mut Vec<String>) -> Result<Vec<Job>, LabError> {
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
    let block = base.block_bytes().map_err(LabError::from_sim)?;
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
        let device = base.sized_for(&prepared).map_err(LabError::from_sim)?;
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
fn execute(
    all: Vec<Job>,
    jobs: Option<usize>,
    progress: &dyn Progress,
) -> Result<Vec<Done>, LabError> {
    run_all("reproduce fast", all, jobs, progress, |job| {
        run_job(&job).map(|outcome| Done {
            job,
            report: outcome.report,
        })
    })
    .into_iter()
    .map(|r| r.map_err(|error| LabError::Run(error.into())))
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
        flashkit_sim::run_with::<CountsOnly, _>(&job.spec, generator.map(Ok), record, &NoProgress)
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
        Input::HotSet(point) => generated(
            fast::hot_set(
                point.shape(),
                capacity,
                ppb,
                job.budget,
                seed,
                &format!("reproduce-fast/sweep/{}", point.label()),
            ),
            format!(
                "pattern {}'s shape, {}, {} sector writes, seed {seed}",
                point.base.letter(),
                point.label(),
                job.budget
            ),
        ),
        Input::Trace(prepared) => {
            flashkit_sim::run(&job.spec, &Source::Trace(Arc::clone(prepared)), &NoProgress)
        }
    }
    .map_err(describe)
}

/// Sector writes a run made (its host pages written).
pub fn sector_writes(report: &RunReport) -> u64 {
    report.host.write_bytes / SECTOR
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::Chart;

    fn small() -> FastSpec {
        FastSpec {
            scale: 0.002,
            log_blocks: vec![4, 16],
            patterns: vec!["A".into(), "e".into()],
            no_traces: true,
            jobs: Some(2),
            ..FastSpec::default()
        }
    }

    #[test]
    fn a_small_run_returns_every_part_of_the_evaluation() {
        let r = run(&small(), &NoProgress).expect("runs");
        assert_eq!(r.paper, Paper::Fast);
        // 2 patterns x 2 log-block counts x 5 schemes, and 4 hot-block counts x 3 schemes
        // (no sweep: its base patterns, C and D, did not run).
        assert_eq!(r.runs, 20 + 12);
        let rows = r.rows.as_ref().expect("rows");
        assert_eq!(rows.rows.len(), r.runs);
        let doc: serde_json::Value =
            serde_json::from_str(r.documents[0].json.get()).expect("fast.json");
        assert_eq!(r.documents[0].name, "fast.json");
        assert_eq!(doc["runs"].as_array().expect("runs").len(), r.runs);
        assert_eq!(
            doc["claims"].as_array().expect("claims").len(),
            r.claims.len()
        );
        assert_eq!(r.claims.len(), 16);
        let erases = r
            .figures
            .iter()
            .find(|f| f.name == "fig10-A-erases.svg")
            .expect("Fig. 10 for A");
        let Chart::Line(chart) = &erases.chart else {
            panic!("Fig. 10 is a line chart")
        };
        // BAST, FAST and O-FAST at both log-block counts.
        assert_eq!(chart.series.len(), 3);
        assert!(chart.series.iter().all(|s| s.points.len() == 2));
        // Pattern B did not run: its figure has nothing to draw.
        let b = r.figures.iter().find(|f| f.name == "fig10-B-erases.svg");
        assert!(b.is_none_or(|f| f.chart.svg().is_err()));
        let text = r.text();
        assert!(text.starts_with("FAST paper reproduction"), "{text}");
        assert!(text.contains("The paper's claims"));
    }

    #[test]
    fn the_same_spec_gives_the_same_runs_on_any_number_of_threads() {
        let one = run(
            &FastSpec {
                jobs: Some(1),
                ..small()
            },
            &NoProgress,
        )
        .expect("one");
        let two = run(&small(), &NoProgress).expect("two");
        assert_eq!(one.documents[0].json.get(), two.documents[0].json.get());
        assert_eq!(one.text(), two.text());
    }

    #[test]
    fn bad_fields_are_named() {
        let field = |spec: FastSpec| match run(&spec, &NoProgress) {
            Err(LabError::Spec { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(FastSpec {
                patterns: vec!["F".into()],
                ..small()
            }),
            "patterns"
        );
        assert_eq!(
            field(FastSpec {
                scale: 0.0,
                ..small()
            }),
            "scale"
        );
        assert_eq!(
            field(FastSpec {
                scale: f64::NAN,
                ..small()
            }),
            "scale"
        );
    }
}
