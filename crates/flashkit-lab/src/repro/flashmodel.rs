//! Ajwani, Beckmann, Jacob, Meyer, Moruz, "On Computational Models for Flash Memory Devices"
//! (SEA 2009), section 4, with the paper's parameters (M = 512 MB, B_r = 128 KB,
//! B_w = 16 MB):
//!
//! - Table 1: sorting 2^25 to 2^32 random 4-byte integers with the translation layer (TL),
//!   with blocks of B_r and with blocks of B_w; read and write volumes on the simulated
//!   device, exact (the mergesort schedule does not depend on the data, so a counting
//!   simulator replays it at any size);
//! - Table 2: Mehlhorn-Meyer BFS on square grids, preprocessing and BFS phase, on the
//!   simulated device, for the grid sizes asked for (the paper's 2^20 to 2^26 took hours);
//! - Fig. 1 on this machine's disk: throughput against block size for sequential and random
//!   reads and writes, and the B_r and B_w the paper's rule picks from it
//!   ([`crate::probe`]);
//! - a real-disk sort on this machine's disk at the sizes asked for, with wall time.
//!
//! The paper's figures are printed beside ours; `docs/reproduction/flashmodel.md` explains
//! where they differ. The real-disk part works in [`FlashmodelSpec::tmp`] and announces
//! its files to the caller's [`Temporaries`], so that a front end can remove them if the
//! process is interrupted.

use super::{Chart, Document, Figure, LabError, LedgerPlace, Printer, Reproduction};
use crate::claims::Paper;
use crate::claims::flashmodel::{self as flashmodel_claims, SortRow};
use crate::probe::{self, em_error};
use crate::temporaries::Temporaries;
use flashkit_core::Progress;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig};
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo, SplitIo};
use flashkit_em::probe::ProbeSpec;
use flashkit_em::sort::files::{FileSortSpec, InputOrder, IoMode, generate_file, sort_file};
use flashkit_em::sort::{FanIn, Layout, Plan, replay_plan};
use flashkit_em::tl::TranslationLayer;
use flashkit_report::Table;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to run: the paper's section 4 and the sizes of its parts. Deserializes from TOML or
/// JSON with every field optional (the defaults are the CLI's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlashmodelSpec {
    /// A smoke run in about 15 s: Table 1, the smallest BFS grid, a short probe of the disk
    /// (Fig. 1) and one real-disk sort of 2^25 integers; `bfs_max_log` and `disk_max_log`
    /// are then ignored.
    pub quick: bool,
    /// Smallest BFS grid, as log2 |V| (even: the grids are square).
    pub bfs_min_log: u32,
    /// Largest BFS grid, as log2 |V| (even; each step of 2 is four times the work).
    pub bfs_max_log: u32,
    /// Largest real-disk sort, as log2 of the number of 4-byte integers (below 25 skips the
    /// real-disk part: Fig. 1 and the sort).
    pub disk_max_log: u32,
    /// Directory for the real-disk part's files (`None`: the system's temporary directory).
    pub tmp: Option<PathBuf>,
    /// Threads each merge of the real-disk sort may use (`None`: one a core).
    pub workers: Option<usize>,
}

impl Default for FlashmodelSpec {
    fn default() -> FlashmodelSpec {
        FlashmodelSpec {
            quick: false,
            bfs_min_log: 16,
            bfs_max_log: 20,
            disk_max_log: 27,
            tmp: None,
            workers: None,
        }
    }
}

impl FlashmodelSpec {
    /// The largest BFS grid and real-disk sort this spec runs (`quick` sets both).
    fn bounds(&self) -> (u32, u32) {
        if self.quick {
            (self.bfs_min_log, DISK_MIN_LOG)
        } else {
            (self.bfs_max_log, self.disk_max_log)
        }
    }

    /// Whether the real-disk part (Fig. 1 and the sort) runs.
    pub fn runs_disk(&self) -> bool {
        self.bounds().1 >= DISK_MIN_LOG
    }
}

/// The smallest real-disk sort, as log2 of the number of integers: the paper's 0.12 GB.
const DISK_MIN_LOG: u32 = 25;

const MIB: u64 = 1 << 20;
const MEMORY: u64 = 512 * MIB;
const GIB: f64 = (1u64 << 30) as f64;

fn paper_sizes() -> BlockSizes {
    BlockSizes {
        read_bytes: 128 << 10,
        write_bytes: 16 * MIB,
    }
}

/// Read volume, write volume (GB) and running time (s) of one cell of Table 1.
type Cell1 = (f64, f64, f64);

/// Table 1 of the paper: log2 N, volume, then (RDV, WRV, RT) for TL, B_r, B_w.
const TABLE1: [(u32, f64, [Cell1; 3]); 8] = [
    (
        25,
        0.12,
        [(0.20, 0.25, 9.10), (0.25, 0.25, 9.35), (0.25, 0.25, 9.13)],
    ),
    (
        26,
        0.25,
        [
            (0.49, 0.50, 16.73),
            (0.50, 0.50, 16.72),
            (0.50, 0.50, 17.10),
        ],
    ),
    (
        27,
        0.50,
        [
            (0.99, 1.00, 32.25),
            (1.00, 1.00, 31.29),
            (1.00, 1.00, 33.58),
        ],
    ),
    (
        28,
        1.00,
        [
            (1.99, 2.00, 62.35),
            (2.00, 2.00, 60.96),
            (3.00, 3.00, 93.46),
        ],
    ),
    (
        29,
        2.00,
        [
            (3.99, 4.00, 120.82),
            (4.00, 4.00, 118.84),
            (6.00, 6.00, 192.98),
        ],
    ),
    (
        30,
        4.00,
        [
            (8.00, 8.00, 240.24),
            (8.00, 8.00, 238.74),
            (12.00, 12.00, 387.16),
        ],
    ),
    (
        31,
        8.00,
        [
            (16.00, 16.00, 478.46),
            (16.00, 16.00, 475.11),
            (32.00, 32.00, 1002.95),
        ],
    ),
    (
        32,
        16.00,
        [
            (32.00, 32.00, 946.88),
            (32.00, 32.00, 950.04),
            (64.00, 64.00, 2029.41),
        ],
    ),
];

/// Table 2 of the paper: log2 |V|, then for TL, B_r, B_w: (pp, bfs) read and write (GB).
#[allow(clippy::type_complexity)]
const TABLE2: [(u32, [((f64, f64), (f64, f64)); 3]); 4] = [
    (
        20,
        [
            ((0.194, 0.000), (0.594, 0.000)),
            ((0.670, 1.924), (0.560, 0.009)),
            ((0.406, 0.094), (0.250, 0.172)),
        ],
    ),
    (
        22,
        [
            ((2.423, 5.968), (2.281, 0.094)),
            ((2.709, 8.080), (2.271, 0.104)),
            ((1.500, 0.188), (1.016, 0.234)),
        ],
    ),
    (
        24,
        [
            ((26.943, 60.406), (9.344, 1.656)),
            ((27.187, 61.660), (9.251, 1.654)),
            ((91.922, 457.750), (22.734, 0.812)),
        ],
    ),
    (
        26,
        [
            ((108.953, 316.341), (36.750, 5.531)),
            ((109.726, 320.881), (36.783, 5.531)),
            ((364.578, 2621.047), (89.938, 1.203)),
        ],
    ),
];

const MODES: [IoMode; 3] = [IoMode::Tl, IoMode::ReadBlocks, IoMode::WriteBlocks];

/// Run the paper's section 4: Tables 1 and 2 on the simulated device, then, unless
/// `disk_max_log` skips it, Fig. 1 and the sort on the disk of `spec.tmp`; the tables, the
/// claims ledger, and Fig. 1 with its measurements (`fig1.json`). The temporary files of
/// the real-disk part are announced to `temporaries` while they exist; the disk probe
/// reports to `progress`.
pub fn run(
    spec: &FlashmodelSpec,
    progress: &dyn Progress,
    temporaries: &dyn Temporaries,
) -> Result<Reproduction, LabError> {
    check(spec)?;
    let started = Instant::now();
    let mut out = Printer::default();
    out.line(
        "Ajwani et al., SEA 2009, section 4: M = 512 MiB, B_r = 128 KiB, B_w = 16 MiB; volumes \
         in GiB (the paper's GB are 2^30 bytes: 2^25 4-byte integers are its 0.12 GB)\n",
    );
    let sorts = table1(&mut out)?;
    let (bfs_max_log, disk_max_log) = spec.bounds();
    let bfs_runs = table2(&mut out, spec.bfs_min_log, bfs_max_log)?;
    let mut figures = Vec::new();
    let mut documents = Vec::new();
    if spec.runs_disk() {
        let dir = spec.tmp.clone().unwrap_or_else(std::env::temp_dir);
        let report = fig1(&mut out, &dir, spec.quick, progress, temporaries)?;
        documents.push(Document::of("fig1.json", &report));
        figures.push(Figure {
            name: "fig1.svg".into(),
            chart: Chart::Line(probe::chart(&report)),
        });
        disk(&mut out, &dir, disk_max_log, spec.workers, temporaries)?;
    }
    let claims = flashmodel_claims::assess_all(&sorts);
    out.text(super::render_ledger(&claims));
    Ok(Reproduction {
        paper: Paper::Flashmodel,
        printed: out.into_printed(),
        claims,
        figures,
        documents,
        rows: None,
        notes: Vec::new(),
        ledger_place: LedgerPlace::AfterFigures,
        runs: sorts.len() * MODES.len() + bfs_runs,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// Refuse grid bounds that leave Table 2 without a grid, a `tmp` the run would not use,
/// and a `tmp` that is not a directory (before the simulated tables, not after).
pub fn check(spec: &FlashmodelSpec) -> Result<(), LabError> {
    let (bfs_max_log, disk_max_log) = spec.bounds();
    // A square grid has an even log2 |V|: an odd bound was rounded down behind the user's
    // back, and bounds the wrong way round left Table 2 out without a word.
    for (field, log) in [
        ("bfs_min_log", spec.bfs_min_log),
        ("bfs_max_log", bfs_max_log),
    ] {
        if log % 2 == 1 {
            return Err(LabError::spec(
                field,
                format!(
                    "{log}: the BFS grids are square, so log2 |V| is even; give {} or {}",
                    log - 1,
                    log + 1
                ),
            ));
        }
    }
    if bfs_max_log < spec.bfs_min_log {
        return Err(LabError::spec(
            "bfs_max_log",
            format!(
                "{bfs_max_log} is below `bfs_min_log` {}: Table 2 would have no grid",
                spec.bfs_min_log
            ),
        ));
    }
    match &spec.tmp {
        Some(_) if !spec.runs_disk() => Err(LabError::spec(
            "tmp",
            format!(
                "is an option for the real-disk part, which `disk_max_log` {disk_max_log} \
                 (below {DISK_MIN_LOG}) skips: drop it"
            ),
        )),
        Some(tmp) if !tmp.is_dir() => Err(LabError::spec(
            "tmp",
            format!("{} is not a directory", tmp.display()),
        )),
        _ => Ok(()),
    }
}

/// Fig. 1 on the disk the real-disk sort runs on: a probe of 1 GiB, half a second a
/// measurement (256 MiB and a twentieth of a second when `quick`).
fn fig1(
    out: &mut Printer,
    dir: &Path,
    quick: bool,
    progress: &dyn Progress,
    temporaries: &dyn Temporaries,
) -> Result<flashkit_em::probe::ProbeReport, LabError> {
    let spec = ProbeSpec {
        file_bytes: if quick { 256 * MIB } else { 1 << 30 },
        min_block: 4 << 10,
        max_block: 64 * MIB,
        seconds: if quick { 0.05 } else { 0.5 },
        max_bytes: 1 << 30,
        seed: 1,
        // The paper's algorithms have one transfer in flight (two, double-buffered).
        depth: 1,
    };
    let report = probe::measure(dir, &spec, temporaries, progress)?;
    out.text(probe::render(&report, probe::DEFAULT_FRACTION));
    Ok(report)
}

fn gib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / GIB)
}

/// Replay the sort of 2^log_n integers in `mode` on a counting simulator; the device's I/O.
fn simulate_sort(log_n: u32, mode: IoMode) -> Result<(Plan, IoStats), LabError> {
    let sizes = mode.algorithm_sizes(paper_sizes());
    let plan = Plan::new(1 << log_n, 4, sizes, MEMORY, FanIn::Model).map_err(em_error)?;
    let layout = Layout::packed(&plan);
    let stats = if mode == IoMode::Tl {
        // As in the file sort: input and output on the device directly, the temporary runs
        // through the layer.
        let tl =
            TranslationLayer::new(SimIo::counting(paper_sizes()), 2, None).map_err(em_error)?;
        let mut io = SplitIo::new(SimIo::counting(sizes), tl, layout.scratch[0]);
        replay_plan(&mut io, &plan, &layout).map_err(em_error)?;
        io.sync().map_err(em_error)?;
        io.low.stats() + io.high.inner().stats()
    } else {
        let mut sim = SimIo::counting(sizes);
        replay_plan(&mut sim, &plan, &layout).map_err(em_error)?
    };
    Ok((plan, stats))
}

/// Table 1, printed; its read volumes for the claims ledger.
fn table1(out: &mut Printer) -> Result<Vec<SortRow>, LabError> {
    out.line("Table 1: sorting N random 4-byte integers, simulated device (exact volumes)");
    let mut table = Table::new([
        "log2 N",
        "GiB",
        "TL RDV",
        "TL WRV",
        "paper",
        "B_r RDV",
        "B_r WRV",
        "paper",
        "B_w RDV",
        "B_w WRV",
        "paper",
        "B_w runs",
        "B_w passes",
        "STXXL M/4 B_w passes",
    ]);
    let mut sorts = Vec::new();
    for (log_n, volume, paper) in TABLE1 {
        let mut row = vec![log_n.to_string(), format!("{volume:.2}")];
        let mut bw_shape = (0, 0);
        let mut sort = SortRow {
            log_n,
            ours: [0.0; 3],
            paper: [paper[0].0, paper[1].0, paper[2].0],
        };
        for (i, mode) in MODES.into_iter().enumerate() {
            let (plan, io) = simulate_sort(log_n, mode)?;
            sort.ours[i] = io.read_bytes as f64 / GIB;
            row.push(gib(io.read_bytes));
            row.push(gib(io.write_bytes));
            row.push(format!("{:.2}/{:.2}", paper[i].0, paper[i].1));
            if mode == IoMode::WriteBlocks {
                bw_shape = (plan.runs, plan.merge_passes());
            }
        }
        row.push(bw_shape.0.to_string());
        row.push(bw_shape.1.to_string());
        let stxxl =
            flashkit_em::model::stxxl_sort_passes(4 << log_n, 16 * MIB, 128 * MIB / (16 * MIB));
        row.push(stxxl.1.to_string());
        table.push(row);
        sorts.push(sort);
    }
    out.table(table);
    out.line(
        "Our runs are M/4 = 128 MiB and a B_w merge is at most (M - 2 B_w) / (2 B_w) = 15-way: \
         the extra pass with B_w comes at 2^29 (16 runs). The last column is STXXL 1.4.1's sort \
         schedule (algo/sort.h, which the paper ran) given M/4: it has every pass count of the \
         paper's table; see docs/reproduction/flashmodel.md.\n",
    );
    Ok(sorts)
}

/// Table 2 on square grids of 2^`min_log` to 2^`max_log` vertices; the BFS runs made.
fn table2(out: &mut Printer, min_log: u32, max_log: u32) -> Result<usize, LabError> {
    out.line(
        "Table 2: Mehlhorn-Meyer BFS on square grids, simulated device; read and write volume \
         [GB, 10^9 B as the paper], preprocessing (pp) and BFS phase",
    );
    let mut table = Table::new([
        "log2 |V|",
        "mode",
        "mu",
        "clusters",
        "pp read",
        "bfs read",
        "pp write",
        "bfs write",
        "paper pp/bfs read",
        "paper pp/bfs write",
        "seconds",
    ]);
    let gb = |bytes: u64| format!("{:.3}", bytes as f64 / 1e9);
    let cell = |p: Option<(f64, f64)>| p.map_or("-".into(), |(a, b)| format!("{a:.3}/{b:.3}"));
    let mut runs = 0;
    for log_v in (min_log..=max_log).step_by(2) {
        for (i, mode) in MODES.into_iter().enumerate() {
            runs += 1;
            let graph = Graph::grid(1 << (log_v / 2));
            let mut io = mode.simulated_device(paper_sizes());
            let config = BfsConfig {
                memory_bytes: MEMORY,
                mu: None,
                seed: 1,
            };
            let started = Instant::now();
            let report = bfs::run_probed(&mut *io, &graph, 0, &config, |io| io.physical())
                .map_err(em_error)?;
            let paper = TABLE2
                .iter()
                .find(|(l, _)| *l == log_v)
                .map(|(_, rows)| rows[i]);
            table.push([
                log_v.to_string(),
                mode.name().to_string(),
                report.mu.to_string(),
                report.clusters.to_string(),
                gb(report.preprocessing.read_bytes),
                gb(report.bfs.read_bytes),
                gb(report.preprocessing.write_bytes),
                gb(report.bfs.write_bytes),
                cell(paper.map(|p| p.0)),
                cell(paper.map(|p| p.1)),
                format!("{:.1}", started.elapsed().as_secs_f64()),
            ]);
        }
    }
    out.table(table);
    out.line("");
    Ok(runs)
}

/// The real-disk sort of 2^25 to 2^`max_log` integers in a temporary directory in `dir`,
/// held by `temporaries` until it is removed.
fn disk(
    out: &mut Printer,
    dir: &Path,
    max_log: u32,
    workers: Option<usize>,
    temporaries: &dyn Temporaries,
) -> Result<(), LabError> {
    let dir = tempfile::tempdir_in(dir).map_err(|e| {
        LabError::Run(
            format!("cannot create a temporary directory for the real-disk sort: {e}").into(),
        )
    })?;
    let _held = temporaries.hold(dir.path());
    out.line(format!(
        "Real-disk sort on this machine ({}): random 4-byte integers, volumes at the files \
         [GiB], wall time [s]",
        dir.path().display()
    ));
    let mut table = Table::new([
        "log2 N",
        "mode",
        "RDV",
        "WRV",
        "predicted RDV/WRV",
        "time",
        "MB/s of input",
        "paper RT",
    ]);
    let input = dir.path().join("input");
    let output = dir.path().join("output");
    for log_n in DISK_MIN_LOG..=max_log.min(32) {
        generate_file::<u32>(&input, 1 << log_n, InputOrder::Random, u64::from(log_n))
            .map_err(em_error)?;
        for (i, mode) in MODES.into_iter().chain([IoMode::Flash]).enumerate() {
            let spec = FileSortSpec {
                input: input.clone(),
                output: output.clone(),
                scratch_dir: dir.path().to_path_buf(),
                memory_bytes: MEMORY,
                sizes: paper_sizes(),
                mode,
                fan_in: FanIn::Model,
                direct: true,
                threads: workers.unwrap_or_else(crate::exec::cores),
                // The paper's algorithm: every run goes to the disk.
                resident_runs: 0,
            };
            let started = Instant::now();
            let report = sort_file::<u32>(&spec).map_err(em_error)?;
            let seconds = started.elapsed().as_secs_f64();
            let predicted = mode.device_prediction(&report.outcome.plan, paper_sizes());
            let paper = TABLE1
                .iter()
                .find(|r| r.0 == log_n)
                .and_then(|r| r.2.get(i));
            table.push([
                log_n.to_string(),
                mode.name().to_string(),
                gib(report.device.read_bytes),
                gib(report.device.write_bytes),
                format!(
                    "{}/{}",
                    gib(predicted.read_bytes),
                    gib(predicted.write_bytes)
                ),
                format!("{seconds:.2}"),
                format!("{:.0}", (4u64 << log_n) as f64 / seconds / 1e6),
                paper.map_or("-".into(), |p| format!("{:.2}", p.2)),
            ]);
        }
        let _ = std::fs::remove_file(&output);
    }
    out.table(table);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporaries::Unwatched;
    use flashkit_core::NoProgress;

    /// Tables 1 and 2 alone, on the smallest grids.
    fn simulated_only() -> FlashmodelSpec {
        FlashmodelSpec {
            bfs_min_log: 6,
            bfs_max_log: 8,
            disk_max_log: 0,
            ..FlashmodelSpec::default()
        }
    }

    #[test]
    fn the_simulated_tables_assess_table_one_without_touching_the_disk() {
        let r = run(&simulated_only(), &NoProgress, &Unwatched).expect("runs");
        assert_eq!(r.paper, Paper::Flashmodel);
        // Table 1: eight sizes in three modes; Table 2: two grids in three modes.
        assert_eq!(r.runs, 8 * 3 + 2 * 3);
        assert_eq!(r.claims.len(), 5);
        assert!(r.figures.is_empty() && r.documents.is_empty());
        assert_eq!(r.ledger_place, LedgerPlace::AfterFigures);
        let text = r.text();
        assert!(text.contains("Table 1: sorting N random"), "{text}");
        let grids: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("6 ") || l.starts_with("8 "))
            .collect();
        assert_eq!(grids.len(), 6, "{text}");
        assert!(!text.contains("Real-disk sort"));
        // Exact volumes: the same spec, the same table and verdicts.
        let again = run(&simulated_only(), &NoProgress, &Unwatched).expect("runs");
        let table1 = |r: &Reproduction| match &r.printed[1] {
            crate::repro::Printed::Table(t) => t.render(),
            other => panic!("{other:?}"),
        };
        assert_eq!(table1(&r), table1(&again));
        assert_eq!(
            serde_json::to_string(&r.claims).expect("json"),
            serde_json::to_string(&again.claims).expect("json")
        );
    }

    #[test]
    fn a_bad_field_is_named() {
        let bad = |spec: FlashmodelSpec| match check(&spec) {
            Err(LabError::Spec { field, problem }) => (field, problem),
            other => panic!("{other:?}"),
        };
        let (field, problem) = bad(FlashmodelSpec {
            bfs_min_log: 15,
            ..simulated_only()
        });
        assert_eq!(field, "bfs_min_log");
        assert!(
            problem.starts_with("15: the BFS grids are square"),
            "{problem}"
        );
        let (field, problem) = bad(FlashmodelSpec {
            bfs_min_log: 10,
            ..simulated_only()
        });
        assert_eq!(field, "bfs_max_log");
        assert!(problem.contains("below `bfs_min_log` 10"), "{problem}");
        let (field, problem) = bad(FlashmodelSpec {
            tmp: Some("/".into()),
            ..simulated_only()
        });
        assert_eq!(field, "tmp");
        assert!(problem.contains("`disk_max_log` 0 (below 25)"), "{problem}");
        let (field, problem) = bad(FlashmodelSpec {
            tmp: Some("/nonexistent/tmp".into()),
            ..FlashmodelSpec::default()
        });
        assert_eq!(field, "tmp");
        assert_eq!(problem, "/nonexistent/tmp is not a directory");
        // Quick runs the smallest grid and sort whatever the bounds say.
        let quick = FlashmodelSpec {
            quick: true,
            bfs_max_log: 99,
            ..FlashmodelSpec::default()
        };
        assert!(check(&quick).is_ok() && quick.runs_disk());
    }

    #[test]
    fn a_spec_reads_from_json_with_the_clis_defaults() {
        let spec: FlashmodelSpec =
            serde_json::from_str(r#"{"disk_max_log": 0}"#).expect("test value");
        assert_eq!(
            spec,
            FlashmodelSpec {
                disk_max_log: 0,
                ..FlashmodelSpec::default()
            }
        );
        assert_eq!((spec.bfs_min_log, spec.bfs_max_log), (16, 20));
        assert!(serde_json::from_str::<FlashmodelSpec>(r#"{"tmpdir": "/"}"#).is_err());
    }
}
