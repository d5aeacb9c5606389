//! `flashkit reproduce flashmodel`: Ajwani, Beckmann, Jacob, Meyer, Moruz, "On Computational
//! Models for Flash Memory Devices" (SEA 2009), section 4, with the paper's parameters
//! (M = 512 MB, B_r = 128 KB, B_w = 16 MB):
//!
//! - Table 1: sorting 2^25 to 2^32 random 4-byte integers with the translation layer (TL),
//!   with blocks of B_r and with blocks of B_w; read and write volumes on the simulated
//!   device, exact (the mergesort schedule does not depend on the data, so a counting
//!   simulator replays it at any size);
//! - Table 2: Mehlhorn-Meyer BFS on square grids, preprocessing and BFS phase, on the
//!   simulated device, for the grid sizes asked for (the paper's 2^20 to 2^26 took hours);
//! - Fig. 1 on this machine's disk: throughput against block size for sequential and random
//!   reads and writes, and the B_r and B_w the paper's rule picks from it (`em probe`);
//! - a real-disk sort on this machine's disk at the sizes asked for, with wall time.
//!
//! The paper's figures are printed beside ours; `docs/reproduction/flashmodel.md` explains
//! where they differ.

use crate::commands::em::failure;
use crate::commands::reproduce::Figures;
use crate::output::write_json;
use crate::{Failure, Outcome};
use anyhow::Context;
use clap::Args;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig};
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo, SplitIo};
use flashkit_em::probe::ProbeSpec;
use flashkit_em::sort::files::{FileSortSpec, InputOrder, IoMode, generate_file, sort_file};
use flashkit_em::sort::{FanIn, Layout, Plan, replay_plan};
use flashkit_em::tl::TranslationLayer;
use flashkit_lab::claims::flashmodel::SortRow;
use flashkit_lab::probe;
use flashkit_report::Table;
use std::path::PathBuf;
use std::time::Instant;

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

pub fn run(mut args: FlashmodelArgs) -> Outcome {
    if args.quick {
        args.bfs_max_log = args.bfs_min_log;
        args.disk_max_log = DISK_MIN_LOG;
    }
    // A square grid has an even log2 |V|: an odd bound was rounded down behind the user's
    // back, and bounds the wrong way round left Table 2 out without a word.
    for (flag, log) in [
        ("--bfs-min-log", args.bfs_min_log),
        ("--bfs-max-log", args.bfs_max_log),
    ] {
        if log % 2 == 1 {
            return Err(Failure::Usage(anyhow::anyhow!(
                "{flag} {log}: the BFS grids are square, so log2 |V| is even; give {} or {}",
                log - 1,
                log + 1
            )));
        }
    }
    if args.bfs_max_log < args.bfs_min_log {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--bfs-max-log {} is below --bfs-min-log {}: Table 2 would have no grid",
            args.bfs_max_log,
            args.bfs_min_log
        )));
    }
    // --tmp and --out serve the real-disk part only: skipped, they would do nothing (and
    // --out made an empty directory it then said it wrote).
    if args.disk_max_log < DISK_MIN_LOG {
        let unused: Vec<String> = [(args.tmp.is_some(), "--tmp"), (args.out.is_some(), "--out")]
            .into_iter()
            .filter(|&(given, _)| given)
            .map(|(_, flag)| flag.to_string())
            .collect();
        if !unused.is_empty() {
            return Err(Failure::Usage(anyhow::anyhow!(
                "{}, which --disk-max-log {} (below {DISK_MIN_LOG}) skips: drop {}",
                crate::settings::unused_options(&unused, "the real-disk part"),
                args.disk_max_log,
                if unused.len() == 1 { "it" } else { "them" }
            )));
        }
    }
    // The real-disk part's directory is checked before the simulated tables, not after.
    if let Some(tmp) = args
        .tmp
        .as_ref()
        .filter(|_| args.disk_max_log >= DISK_MIN_LOG)
        && !tmp.is_dir()
    {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--tmp {} is not a directory",
            tmp.display()
        )));
    }
    let mut figures = Figures::prepare(args.out.as_deref())?;
    println!(
        "Ajwani et al., SEA 2009, section 4: M = 512 MiB, B_r = 128 KiB, B_w = 16 MiB; volumes \
         in GiB (the paper's GB are 2^30 bytes: 2^25 4-byte integers are its 0.12 GB)\n"
    );
    let sorts = table1()?;
    table2(&args)?;
    if args.disk_max_log >= DISK_MIN_LOG {
        fig1(&args, figures.as_mut())?;
        disk(&args)?;
    }
    let claims = flashkit_lab::claims::flashmodel::assess_all(&sorts);
    print!("{}", super::render_ledger(&claims));
    if let Some(figures) = &mut figures {
        crate::output::write_json(
            &figures.path("claims.json"),
            &serde_json::json!({ "claims": claims }),
        )?;
        figures.note("claims.json");
        figures.report();
    }
    Ok(())
}

/// Fig. 1 on the disk the real-disk sort runs on: a probe of 1 GiB, half a second a
/// measurement (256 MiB and a twentieth of a second with `--quick`).
fn fig1(args: &FlashmodelArgs, figures: Option<&mut Figures>) -> Outcome {
    let dir = args.tmp.clone().unwrap_or_else(std::env::temp_dir);
    let spec = ProbeSpec {
        file_bytes: if args.quick { 256 * MIB } else { 1 << 30 },
        min_block: 4 << 10,
        max_block: 64 * MIB,
        seconds: if args.quick { 0.05 } else { 0.5 },
        max_bytes: 1 << 30,
        seed: 1,
        // The paper's algorithms have one transfer in flight (two, double-buffered).
        depth: 1,
    };
    if !dir.is_dir() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let bar = crate::progress::SharedBar::new("probe");
    let report = probe::measure(&dir, &spec, &crate::interrupt::OnInterrupt, &bar)
        .map_err(super::lab_failure)?;
    print!("{}", probe::render(&report, probe::DEFAULT_FRACTION));
    if let Some(figures) = figures {
        write_json(&figures.path("fig1.json"), &report)?;
        figures.note("fig1.json");
        figures
            .save("fig1.svg", probe::chart(&report).svg())
            .map_err(Failure::Runtime)?;
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / GIB)
}

/// Replay the sort of 2^log_n integers in `mode` on a counting simulator; the device's I/O.
fn simulate_sort(log_n: u32, mode: IoMode) -> Result<(Plan, IoStats), Failure> {
    let sizes = mode.algorithm_sizes(paper_sizes());
    let plan = Plan::new(1 << log_n, 4, sizes, MEMORY, FanIn::Model).map_err(failure)?;
    let layout = Layout::packed(&plan);
    let stats = if mode == IoMode::Tl {
        // As in the file sort: input and output on the device directly, the temporary runs
        // through the layer.
        let tl = TranslationLayer::new(SimIo::counting(paper_sizes()), 2, None).map_err(failure)?;
        let mut io = SplitIo::new(SimIo::counting(sizes), tl, layout.scratch[0]);
        replay_plan(&mut io, &plan, &layout).map_err(failure)?;
        io.sync().map_err(failure)?;
        let (a, b) = (io.low.stats(), io.high.inner().stats());
        IoStats {
            read_ios: a.read_ios + b.read_ios,
            write_ios: a.write_ios + b.write_ios,
            read_bytes: a.read_bytes + b.read_bytes,
            write_bytes: a.write_bytes + b.write_bytes,
        }
    } else {
        let mut sim = SimIo::counting(sizes);
        replay_plan(&mut sim, &plan, &layout).map_err(failure)?
    };
    Ok((plan, stats))
}

/// Table 1, printed; its read volumes for the claims ledger.
fn table1() -> Result<Vec<SortRow>, Failure> {
    println!("Table 1: sorting N random 4-byte integers, simulated device (exact volumes)");
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
    print!("{}", table.render());
    println!(
        "Our runs are M/4 = 128 MiB and a B_w merge is at most (M - 2 B_w) / (2 B_w) = 15-way: \
         the extra pass with B_w comes at 2^29 (16 runs). The last column is STXXL 1.4.1's sort \
         schedule (algo/sort.h, which the paper ran) given M/4: it has every pass count of the \
         paper's table; see docs/reproduction/flashmodel.md.\n"
    );
    Ok(sorts)
}

fn table2(args: &FlashmodelArgs) -> Outcome {
    println!(
        "Table 2: Mehlhorn-Meyer BFS on square grids, simulated device; read and write volume \
         [GB, 10^9 B as the paper], preprocessing (pp) and BFS phase"
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
    let mut log_v = args.bfs_min_log;
    while log_v <= args.bfs_max_log {
        for (i, mode) in MODES.into_iter().enumerate() {
            let graph = Graph::grid(1 << (log_v / 2));
            let mut io = mode.simulated_device(paper_sizes());
            let config = BfsConfig {
                memory_bytes: MEMORY,
                mu: None,
                seed: 1,
            };
            let started = Instant::now();
            let report = bfs::run_probed(&mut *io, &graph, 0, &config, |io| io.physical())
                .map_err(failure)?;
            let paper = TABLE2
                .iter()
                .find(|(l, _)| *l == log_v)
                .map(|(_, rows)| rows[i]);
            let cell =
                |p: Option<(f64, f64)>| p.map_or("-".into(), |(a, b)| format!("{a:.3}/{b:.3}"));
            table.push([
                log_v.to_string(),
                mode.name().to_string(),
                report.mu.to_string(),
                report.clusters.to_string(),
                format!("{:.3}", report.preprocessing.read_bytes as f64 / 1e9),
                format!("{:.3}", report.bfs.read_bytes as f64 / 1e9),
                format!("{:.3}", report.preprocessing.write_bytes as f64 / 1e9),
                format!("{:.3}", report.bfs.write_bytes as f64 / 1e9),
                cell(paper.map(|p| p.0)),
                cell(paper.map(|p| p.1)),
                format!("{:.1}", started.elapsed().as_secs_f64()),
            ]);
        }
        log_v += 2;
    }
    print!("{}", table.render());
    println!();
    Ok(())
}

fn disk(args: &FlashmodelArgs) -> Outcome {
    let dir = match &args.tmp {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .context("cannot create a temporary directory for the real-disk sort")?;
    let _dir = crate::interrupt::temporary(dir.path());
    println!(
        "Real-disk sort on this machine ({}): random 4-byte integers, volumes at the files \
         [GiB], wall time [s]",
        dir.path().display()
    );
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
    for log_n in DISK_MIN_LOG..=args.disk_max_log.min(32) {
        generate_file::<u32>(&input, 1 << log_n, InputOrder::Random, u64::from(log_n))
            .map_err(failure)?;
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
                threads: crate::commands::cores(),
                // The paper's algorithm: every run goes to the disk.
                resident_runs: 0,
            };
            let started = Instant::now();
            let report = sort_file::<u32>(&spec).map_err(failure)?;
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
    print!("{}", table.render());
    Ok(())
}
