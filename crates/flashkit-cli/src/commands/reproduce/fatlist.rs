//! `flashkit reproduce fatlist`: the evaluation of the fat-list paper (section 0.6) on the
//! K8C1215 NOR model, with the paper's published figures and claims beside ours.
//!
//! Experiments: the micro-benchmark on 1, 2, 4 and 8 MB for fat lists and the mu-tree
//! (Figs. 14-15); maximum levels 1, 3, 4, 5 and turnstile sizes 8, 16, 32 (Figs. 16-19); the
//! probe table of section 0.6.3; boot-up initialization cost for the table's settings; the
//! sensor macro-benchmark with 1,000 and 10,000 range queries (Fig. 21). The sweeps and the
//! initialization table run on 2 MB, the part's own capacity (the paper does not say).
//!
//! With `--out DIR` the command writes `fatlist.json` and each figure as SVG there
//! ([`write_figures`]).

use super::{Figures, line_chart, run_all, sweep, thousands};
use crate::args::Count;
use crate::commands::index::{index_failure, phase_table};
use crate::output::write_json;
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::Args;
use flashkit_device::{NorGeometry, NorPreset};
use flashkit_index::nor::FatListConfig;
use flashkit_index::nor::bench::{
    self, IndexSpec, MicroReport, MicroSpec, PhaseReport, PhaseTime, SensorSpec, Structure,
};
use flashkit_lab::claims::Assessment;
use flashkit_lab::claims::fatlist::SizeRun;
use flashkit_report::Table;
use flashkit_report::plot::{Axis, BarSeries, GroupedBarChart, Scale, Series};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

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

const EXPERIMENTS: [&str; 6] = ["sizes", "levels", "turnstiles", "probes", "init", "sensor"];

#[derive(Serialize, Default)]
struct Document {
    micro: MicroSpec,
    sizes: Vec<Labelled>,
    levels: Vec<Labelled>,
    turnstiles: Vec<Labelled>,
    init: Vec<InitRow>,
    sensor: Vec<Labelled>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_seconds: Option<f64>,
}

#[derive(Serialize)]
struct Labelled {
    label: String,
    phases: Vec<PhaseReport>,
    counters: Vec<(&'static str, u64)>,
}

#[derive(Serialize)]
struct InitRow {
    turnstile: u32,
    levels: u32,
    word_reads: f64,
    microseconds: f64,
}

/// The probe table of section 0.6.3 (query phase), columns max levels 5, 4, 3, 1.
const PAPER_PROBES: [(&str, [f64; 4]); 7] = [
    (
        "pointers visited",
        [13_082_578.0, 13_130_214.0, 22_495_212.0, 88_385_632.0],
    ),
    (
        "total probes",
        [34_529_843.0, 28_286_792.0, 35_443_585.0, 106_887_758.0],
    ),
    ("successful", [0.775, 0.837, 0.940, 1.0]),
    ("low", [0.020, 0.017, 0.001, 0.0]),
    ("over", [0.676, 0.487, 0.192, 0.057]),
    ("back", [0.364, 0.233, 0.108, 0.043]),
    ("null", [0.804, 0.580, 0.334, 0.109]),
];

/// The initialization table of section 0.6.3: rows turnstile 8, 16, 32; columns max levels
/// 1, 3, 4, 5. The table says word reads, the text microseconds (15.07 for 8 and 5).
const PAPER_INIT: [(u32, [f64; 4]); 3] = [
    (8, [150.59, 37.95, 30.47, 15.07]),
    (16, [184.03, 58.74, 30.47, 20.13]),
    (32, [266.75, 66.44, 33.22, 25.30]),
];

/// Run the experiments `--only` asks for (all by default), print their tables beside the
/// paper's figures, and write `--json` and `--out` when asked.
pub fn run(args: &FatlistArgs, given: &[String]) -> Outcome {
    for name in &args.only {
        if !EXPERIMENTS.contains(&name.as_str()) {
            return Err(Failure::Usage(anyhow!(
                "--only {name:?} is not an experiment (expected {})",
                EXPERIMENTS.join(", ")
            )));
        }
    }
    let wants = |name: &str| args.only.is_empty() || args.only.iter().any(|n| n == name);
    // An option of an experiment `--only` leaves out would do nothing.
    for (id, experiment) in [
        ("readings", "sensor"),
        ("max_range", "sensor"),
        ("boot_trials", "init"),
    ] {
        if !wants(experiment) && given.iter().any(|g| g == id) {
            return Err(Failure::Usage(anyhow!(
                "--{} is an option for the {experiment} experiment, which --only {} leaves \
                 out: drop it",
                id.replace('_', "-"),
                args.only.join(",")
            )));
        }
    }
    let micro = micro_spec(args);
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let started = Instant::now();
    let mut doc = Document {
        micro,
        ..Document::default()
    };
    println!(
        "fat-list paper reproduction on the K8C1215 NOR model; micro-benchmark: {} sequential inserts, {} Gaussian updates, {} Gaussian queries (sd = keys/6), random deletion of every key; seed {}{}\n",
        micro.keys,
        micro.updates,
        micro.queries,
        args.seed,
        if args.quick {
            " (--quick: a tenth of the paper's workload)"
        } else {
            ""
        }
    );
    if wants("sizes") {
        sizes(&micro, args.seed, &mut doc)?;
    }
    let mut level_reports = Vec::new();
    if wants("levels") || wants("probes") {
        level_reports = levels(&micro, args.seed, &mut doc, wants("levels"))?;
    }
    if wants("probes") {
        probes(&level_reports);
    }
    if wants("turnstiles") {
        turnstiles(&micro, args.seed, &mut doc)?;
    }
    if wants("init") {
        init(args, &micro, &mut doc)?;
    }
    if wants("sensor") {
        sensor(args, &mut doc)?;
    }
    let claims = ledger(&doc.sizes);
    print!("{}", super::render_ledger(&claims));
    let wall_seconds = started.elapsed().as_secs_f64();
    println!("wall clock: {wall_seconds:.1} s");
    doc.wall_seconds = args.wall_clock_in_json.then_some(wall_seconds);
    if let Some(path) = &args.json {
        write_json(path, &doc)?;
    }
    if let Some(figures) = &mut figures {
        write_json(&figures.path("fatlist.json"), &doc)?;
        figures.note("fatlist.json");
        write_json(
            &figures.path("claims.json"),
            &serde_json::json!({ "claims": &claims }),
        )?;
        figures.note("claims.json");
        write_figures(figures, &doc, &wants)?;
        figures.report();
    }
    Ok(())
}

fn micro_spec(args: &FatlistArgs) -> MicroSpec {
    let scale = if args.quick { 10 } else { 1 };
    MicroSpec {
        keys: 25_000 / scale,
        updates: 800_000 / u64::from(scale),
        queries: 800_000 / u64::from(scale),
        seed: args.seed,
        ..MicroSpec::default()
    }
}

fn geometry(megabytes: u64) -> Result<NorGeometry, Failure> {
    NorPreset::K8C1215
        .geometry_with_capacity(megabytes << 20)
        .map_err(|e| Failure::Usage(e.into()))
}

fn run_micro(spec: IndexSpec, megabytes: u64, micro: &MicroSpec) -> Result<MicroReport, Failure> {
    let mut index = spec.build(geometry(megabytes)?).map_err(index_failure)?;
    bench::micro(index.as_mut(), NorPreset::K8C1215.timing, micro).map_err(index_failure)
}

fn fat(seed: u64, cfg: FatListConfig) -> IndexSpec {
    IndexSpec {
        fat: cfg,
        ..IndexSpec::new(Structure::FatList, seed)
    }
}

/// Per phase: read / write / erase seconds (all causes) for each labelled run.
fn rw_table(runs: &[(String, &[PhaseReport])]) -> Table {
    let mut header = vec!["run".to_string()];
    let names: Vec<String> = runs[0].1.iter().map(|p| p.name.clone()).collect();
    for name in &names {
        header.push(format!("{name} r/w/e s"));
    }
    header.push("total s".into());
    let mut table = Table::new(header);
    for (label, phases) in runs {
        let mut row = vec![label.clone()];
        let mut total = 0.0;
        for p in *phases {
            let t = &p.time;
            row.push(format!(
                "{:.1}/{:.1}/{:.1}",
                t.reads(),
                t.writes(),
                t.erases()
            ));
            total += t.total();
        }
        row.push(format!("{total:.1}"));
        table.push(row);
    }
    table
}

fn total(phases: &[PhaseReport]) -> f64 {
    phases.iter().map(|p| p.time.total()).sum()
}

fn sizes(micro: &MicroSpec, seed: u64, doc: &mut Document) -> Outcome {
    println!(
        "== Figs. 14-15: fat lists vs the mu-tree on 1, 2, 4 and 8 MB (simulated seconds: reads/writes/erases per phase)"
    );
    let jobs: Vec<(u64, Structure)> = [1u64, 2, 4, 8]
        .into_iter()
        .flat_map(|mb| [(mb, Structure::FatList), (mb, Structure::MuTree)])
        .collect();
    let reports = run_all("fatlist sizes", jobs.clone(), None, |(mb, structure)| {
        run_micro(IndexSpec::new(structure, seed), mb, micro)
    });
    let mut runs = Vec::new();
    for ((mb, structure), report) in jobs.into_iter().zip(reports) {
        let label = format!("{structure} {mb} MB");
        match report {
            Ok(report) => runs.push(Labelled {
                label,
                phases: report.phases,
                counters: report.counters,
            }),
            Err(Failure::Runtime(e)) => println!("{label}: did not finish: {e:#}"),
            Err(other) => return Err(other),
        }
    }
    let rows: Vec<(String, &[PhaseReport])> = runs
        .iter()
        .map(|r| (r.label.clone(), r.phases.as_slice()))
        .collect();
    print!("{}", rw_table(&rows).render());
    for mb in [1u64, 2, 4, 8] {
        let find = |s: Structure| runs.iter().find(|r| r.label == format!("{s} {mb} MB"));
        if let (Some(f), Some(m)) = (find(Structure::FatList), find(Structure::MuTree)) {
            let q = |r: &Labelled| {
                r.phases
                    .iter()
                    .find(|p| p.name == "query")
                    .map_or(0.0, |p| p.time.total())
            };
            println!(
                "{mb} MB: mu-tree total / fat-list total = {:.2} (paper: about 2); query phase mu-tree {:.1} s vs fat list {:.1} s (paper: the mu-tree is faster on queries)",
                total(&m.phases) / total(&f.phases),
                q(m),
                q(f)
            );
        }
    }
    println!();
    doc.sizes = runs;
    Ok(())
}

fn levels(
    micro: &MicroSpec,
    seed: u64,
    doc: &mut Document,
    print: bool,
) -> Result<Vec<(u32, MicroReport)>, Failure> {
    let levels = [1u32, 3, 4, 5];
    let reports = run_all("fatlist levels", levels.to_vec(), None, |l| {
        run_micro(fat(seed, FatListConfig::with_levels(l)), 2, micro)
    });
    let reports: Vec<(u32, MicroReport)> = levels
        .into_iter()
        .zip(reports)
        .map(|(l, r)| r.map(|r| (l, r)))
        .collect::<Result<_, _>>()?;
    if print {
        println!(
            "== Figs. 16-17: fat lists with maximum levels 1, 3, 4, 5 (2 MB, turnstile 8, pool = levels + 2)"
        );
        let rows: Vec<(String, &[PhaseReport])> = reports
            .iter()
            .map(|(l, r)| (format!("max level {l}"), r.phases.as_slice()))
            .collect();
        print!("{}", rw_table(&rows).render());
        println!(
            "paper: read time in the insertion phase falls as the maximum level grows; best totals at 4 and 5\n"
        );
    }
    doc.levels = reports
        .iter()
        .map(|(l, r)| Labelled {
            label: format!("max level {l}"),
            phases: r.phases.clone(),
            counters: r.counters.clone(),
        })
        .collect();
    Ok(reports)
}

fn probes(reports: &[(u32, MicroReport)]) {
    println!(
        "== Table (section 0.6.3): probes in the query phase, per pointer visited; paper's figure in brackets"
    );
    let order = [5u32, 4, 3, 1];
    let mut header = vec!["".to_string()];
    header.extend(order.iter().map(|l| format!("max level {l}")));
    let mut table = Table::new(header);
    let query = |level: u32| {
        reports
            .iter()
            .find(|(l, _)| *l == level)
            .and_then(|(_, r)| r.phases.iter().find(|p| p.name == "query"))
            .map(|p| p.probes)
    };
    for (row, paper) in PAPER_PROBES {
        let mut cells = vec![row.to_string()];
        for (i, &level) in order.iter().enumerate() {
            let cell = match query(level) {
                Some(s) => {
                    let ours = match row {
                        "pointers visited" => s.pointers_visited as f64,
                        "total probes" => s.probes as f64,
                        "successful" => s.per_pointer(s.successful),
                        "low" => s.per_pointer(s.low),
                        "over" => s.per_pointer(s.over),
                        "back" => s.per_pointer(s.back),
                        _ => s.per_pointer(s.null),
                    };
                    if paper[i] >= 100.0 {
                        format!("{ours:.0} [{:.0}]", paper[i])
                    } else {
                        format!("{ours:.3} [{:.3}]", paper[i])
                    }
                }
                None => "-".into(),
            };
            cells.push(cell);
        }
        table.push(cells);
    }
    print!("{}", table.render());
    println!();
}

fn turnstiles(micro: &MicroSpec, seed: u64, doc: &mut Document) -> Outcome {
    println!("== Figs. 18-19: fat lists with turnstiles of 8, 16, 32 blocks (2 MB, max level 5)");
    let turnstiles = [8u32, 16, 32];
    let reports = run_all("fatlist turnstiles", turnstiles.to_vec(), None, |t| {
        let cfg = FatListConfig {
            turnstile_blocks: t,
            ..FatListConfig::default()
        };
        run_micro(fat(seed, cfg), 2, micro)
    });
    let mut runs = Vec::new();
    for (t, report) in turnstiles.into_iter().zip(reports) {
        let report = report?;
        runs.push(Labelled {
            label: format!("turnstile {t}"),
            phases: report.phases,
            counters: report.counters,
        });
    }
    let rows: Vec<(String, &[PhaseReport])> = runs
        .iter()
        .map(|r| (r.label.clone(), r.phases.as_slice()))
        .collect();
    print!("{}", rw_table(&rows).render());
    println!(
        "paper: read time grows with the turnstile size, write and erase time falls; best totals at 8 and 16\n"
    );
    doc.turnstiles = runs;
    Ok(())
}

fn init(args: &FatlistArgs, micro: &MicroSpec, doc: &mut Document) -> Outcome {
    println!(
        "== Table (section 0.6.3): boot-up initialization after the update phase, mean word reads over {} power cycles (2 MB); paper's figure in brackets",
        args.boot_trials
    );
    let spec = MicroSpec {
        queries: 0,
        boot_trials: args.boot_trials,
        ..*micro
    };
    let levels = [1u32, 3, 4, 5];
    let mut header = vec!["turnstile".to_string()];
    header.extend(levels.iter().map(|l| format!("max level {l}")));
    let mut table = Table::new(header);
    let jobs: Vec<(u32, u32)> = PAPER_INIT
        .iter()
        .flat_map(|&(t, _)| levels.map(|l| (t, l)))
        .collect();
    let mut reports = run_all("fatlist init", jobs, None, |(t, l)| {
        let cfg = FatListConfig {
            turnstile_blocks: t,
            ..FatListConfig::with_levels(l)
        };
        run_micro(fat(args.seed, cfg), 2, &spec)
    })
    .into_iter();
    for (t, paper) in PAPER_INIT {
        let mut row = vec![t.to_string()];
        for (i, &l) in levels.iter().enumerate() {
            let report = reports
                .next()
                .expect("invariant: one report a (turnstile, level)")?;
            let reads = report.boot_word_reads.unwrap_or(0.0);
            row.push(format!(
                "{reads:.1} = {:.1} us [{:.2}]",
                reads * 0.110,
                paper[i]
            ));
            doc.init.push(InitRow {
                turnstile: t,
                levels: l,
                word_reads: reads,
                microseconds: reads * 0.110,
            });
        }
        table.push(row);
    }
    print!("{}", table.render());
    println!(
        "(each count includes the one header word read per block that finds the turnstiles' spare blocks)\n"
    );
    Ok(())
}

fn sensor(args: &FatlistArgs, doc: &mut Document) -> Outcome {
    let readings = args
        .readings
        .map_or(if args.quick { 20_000 } else { 200_000 }, |c| c.0);
    let spec = SensorSpec {
        readings,
        max_range: args.max_range,
        seed: args.seed,
        ..SensorSpec::default()
    };
    println!(
        "== Fig. 21: sensor macro-benchmark, {readings} synthetic temperature readings from 54 motes every 31 s (a repeated value is an update), then 1,000 and 10,000 range queries of up to {} hundredths of a degree (8 MB; fat list: turnstile 8, max level 5, 40 slots, 30 keys, pool 7; mu-tree: 512 B pages)",
        args.max_range
    );
    let mut runs = Vec::new();
    for structure in [Structure::FatList, Structure::MuTree] {
        let mut index_spec = IndexSpec::new(structure, args.seed);
        index_spec.fat.key_limit = 30;
        let mut index = index_spec.build(geometry(8)?).map_err(index_failure)?;
        let report = bench::sensor(
            index.as_mut(),
            NorPreset::K8C1215.timing,
            &spec,
            &[1_000, 10_000],
        )
        .map_err(index_failure)?;
        println!("{structure}: {} distinct keys", report.distinct_keys);
        print!("{}", phase_table(&report.phases).render());
        runs.push(Labelled {
            label: structure.to_string(),
            phases: report.phases,
            counters: index.stats().counters,
        });
    }
    println!(
        "paper: insertion reads lower for the mu-tree, its writes and erases much higher; range queries faster on fat lists\n"
    );
    doc.sensor = runs;
    Ok(())
}

/// The paper's claims about Figs. 14-15 against the sizes experiment's runs
/// ([`flashkit_lab::claims::fatlist`]).
fn ledger(sizes: &[Labelled]) -> Vec<Assessment> {
    let runs: Vec<SizeRun> = [1u64, 2, 4, 8]
        .into_iter()
        .flat_map(|mb| STRUCTURES.map(|(structure, name)| (mb, structure, name)))
        .filter_map(|(mb, structure, name)| {
            let run = labelled(sizes, &format!("{structure} {mb} MB"))?;
            Some(SizeRun {
                megabytes: mb,
                structure: name.to_string(),
                phases: run
                    .phases
                    .iter()
                    .map(|p| (p.name.to_string(), p.time.total()))
                    .collect(),
            })
        })
        .collect();
    flashkit_lab::claims::fatlist::assess_all(&runs)
}

/// The micro-benchmark's phases: the reports' name, the titles' name, the panel's letter.
const PHASES: [(&str, &str, char); 4] = [
    ("insert", "Insertion", 'a'),
    ("update", "Update", 'b'),
    ("query", "Query", 'c'),
    ("delete", "Deletion", 'd'),
];

/// A part of a phase's time.
type Part = fn(&PhaseTime) -> f64;

/// What a phase's time is made of (normal operation and space reclaiming together).
const KINDS: [(&str, Part); 3] = [
    ("read", PhaseTime::reads),
    ("write", PhaseTime::writes),
    ("erase", PhaseTime::erases),
];

/// The structures of Figs. 14, 15 and 21: the runs' label and the legend's.
const STRUCTURES: [(Structure, &str); 2] = [
    (Structure::FatList, "fat list"),
    (Structure::MuTree, "mu-tree"),
];

/// The run labelled `label`, when the run made it.
fn labelled<'a>(runs: &'a [Labelled], label: &str) -> Option<&'a Labelled> {
    runs.iter().find(|r| r.label == label)
}

/// The simulated time of `phase` in the run labelled `label`.
fn phase_time(runs: &[Labelled], label: &str, phase: &str) -> Option<PhaseTime> {
    labelled(runs, label)?
        .phases
        .iter()
        .find(|p| p.name == phase)
        .map(|p| p.time)
}

/// A swept setting of the micro-benchmark: its values, each value's group label, and the
/// legend prefix and run label of each structure run at it.
struct Sweep<'a> {
    values: &'a [u32],
    group: &'a dyn Fn(u32) -> String,
    structures: &'a [(&'a str, &'a dyn Fn(u32) -> String)],
}

/// A logarithmic axis when the positive values span `decades` or more, else linear.
fn scale_for(values: impl Iterator<Item = f64>, decades: f64) -> Scale {
    let positive: Vec<f64> = values.filter(|&v| v > 0.0 && v.is_finite()).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0, f64::max);
    if !positive.is_empty() && hi / lo >= 10f64.powf(decades) {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// Grouped bars with a y axis labelled `y`, scaled by [`scale_for`].
fn bars(
    title: String,
    y: &str,
    decades: f64,
    groups: Vec<String>,
    series: Vec<BarSeries>,
) -> GroupedBarChart {
    let scale = scale_for(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied()),
        decades,
    );
    GroupedBarChart {
        title,
        y: Axis {
            label: y.into(),
            scale,
        },
        groups,
        series,
    }
}

/// One chart per micro-benchmark phase (`fig{number}a.svg` to `d`), bars grouped by the
/// swept setting: the read, write and erase time of each structure. Its y axis is
/// logarithmic from one decade on, since a NOR word read costs 700 times less than a write.
/// Then the total time by setting (`fig{number + 1}.svg`), one bar per structure.
fn micro_figures(
    figures: &mut Figures,
    number: u32,
    runs: &[Labelled],
    sweep: &Sweep<'_>,
    against: &str,
) -> anyhow::Result<()> {
    let groups: Vec<String> = sweep.values.iter().map(|&x| (sweep.group)(x)).collect();
    for (phase, phase_title, letter) in PHASES {
        let mut series = Vec::new();
        for (prefix, label) in sweep.structures {
            for (kind, time) in KINDS {
                series.push(BarSeries {
                    name: format!("{prefix}{kind}"),
                    values: sweep
                        .values
                        .iter()
                        .map(|&x| phase_time(runs, &label(x), phase).map(|t| time(&t)))
                        .collect(),
                });
            }
        }
        let chart = bars(
            format!("{phase_title} phase by {against} (Fig. {number}{letter})"),
            "simulated time (s)",
            1.0,
            groups.clone(),
            series,
        );
        figures.save(&format!("fig{number}{letter}.svg"), chart.svg())?;
    }
    let totals = sweep
        .structures
        .iter()
        .map(|(prefix, label)| BarSeries {
            name: prefix.trim_end().into(),
            values: sweep
                .values
                .iter()
                .map(|&x| labelled(runs, &label(x)).map(|r| total(&r.phases)))
                .collect(),
        })
        .collect();
    let chart = bars(
        format!("Total execution time by {against} (Fig. {})", number + 1),
        "total simulated time (s)",
        2.0,
        groups,
        totals,
    );
    figures.save(&format!("fig{}.svg", number + 1), chart.svg())
}

/// The paper's figures as SVG, each for an experiment the run made (`--only`). The paper
/// publishes no values for its figures, only for its two tables, which are drawn too. The
/// micro-benchmark's settings are few (three or four), so they are bars grouped by setting
/// as in the paper's figures; on a logarithmic axis a time of zero (no erases, say) has no
/// bar.
///
/// - `fig14a.svg` to `fig14d.svg`: the insertion, update, query and deletion phases on 1,
///   2, 4 and 8 MB, read, write and erase time of fat lists and the mu-tree.
/// - `fig15.svg`: the micro-benchmark's total time by flash size, fat lists and mu-tree.
/// - `fig16a.svg` to `fig16d.svg`, `fig17.svg`: the same for fat lists with maximum levels
///   1, 3, 4 and 5 (2 MB).
/// - `fig18a.svg` to `fig18d.svg`, `fig19.svg`: the same for turnstiles of 8, 16 and 32
///   blocks (2 MB).
/// - `fig21a.svg`: the sensor macro-benchmark's insertion phase, read, write and erase
///   time of both structures; `fig21b.svg`: its 1,000 and 10,000 range queries.
/// - `table-probes.svg`: the probe table of section 0.6.3, probes of each kind per pointer
///   visited in the query phase by maximum level, ours beside the paper's.
/// - `table-init.svg`: the initialization table of section 0.6.3, word reads of a boot-up
///   by maximum level, one line per turnstile size, ours and the paper's.
fn write_figures(
    figures: &mut Figures,
    doc: &Document,
    wants: &dyn Fn(&str) -> bool,
) -> anyhow::Result<()> {
    if wants("sizes") {
        let label = |s: Structure| move |mb: u32| format!("{s} {mb} MB");
        let (fat, mu) = (label(STRUCTURES[0].0), label(STRUCTURES[1].0));
        let sweep = Sweep {
            values: &[1, 2, 4, 8],
            group: &|mb| format!("{mb} MB"),
            structures: &[("fat list ", &fat), ("mu-tree ", &mu)],
        };
        micro_figures(figures, 14, &doc.sizes, &sweep, "flash size")?;
    }
    if wants("levels") {
        let label = |l: u32| format!("max level {l}");
        let sweep = Sweep {
            values: &[1, 3, 4, 5],
            group: &label,
            structures: &[("fat list ", &label)],
        };
        micro_figures(figures, 16, &doc.levels, &sweep, "maximum level, fat list")?;
    }
    if wants("turnstiles") {
        let label = |t: u32| format!("turnstile {t}");
        let sweep = Sweep {
            values: &[8, 16, 32],
            group: &|t| format!("turnstile of {t} blocks"),
            structures: &[("fat list ", &label)],
        };
        micro_figures(
            figures,
            18,
            &doc.turnstiles,
            &sweep,
            "turnstile size, fat list",
        )?;
    }
    if wants("sensor") {
        let time = |s: Structure, phase: &str| phase_time(&doc.sensor, &s.to_string(), phase);
        let series: Vec<BarSeries> = STRUCTURES
            .iter()
            .map(|&(s, name)| BarSeries {
                name: name.into(),
                values: KINDS
                    .iter()
                    .map(|(_, kind)| time(s, "insert").map(|t| kind(&t)))
                    .collect(),
            })
            .collect();
        let fig21a = bars(
            "Sensor macro-benchmark, insertion phase (Fig. 21a)".into(),
            "simulated time (s)",
            1.0,
            KINDS.iter().map(|k| k.0.to_string()).collect(),
            series,
        );
        figures.save("fig21a.svg", fig21a.svg())?;
        let queries: Vec<(String, u64)> = labelled(&doc.sensor, &Structure::FatList.to_string())
            .map(|r| {
                r.phases
                    .iter()
                    .filter(|p| p.name != "insert")
                    .map(|p| (p.name.clone(), p.operations))
                    .collect()
            })
            .unwrap_or_default();
        let fig21b = bars(
            "Sensor macro-benchmark, range query phase (Fig. 21b)".into(),
            "simulated time (s)",
            2.0,
            queries
                .iter()
                .map(|q| format!("{} range queries", thousands(q.1)))
                .collect(),
            STRUCTURES
                .iter()
                .map(|&(s, name)| BarSeries {
                    name: name.into(),
                    values: queries
                        .iter()
                        .map(|q| time(s, &q.0).map(|t| t.total()))
                        .collect(),
                })
                .collect(),
        );
        figures.save("fig21b.svg", fig21b.svg())?;
    }
    if wants("probes") {
        let order = [5u32, 4, 3, 1];
        let ours = |level: u32| {
            labelled(&doc.levels, &format!("max level {level}"))?
                .phases
                .iter()
                .find(|p| p.name == "query")
                .map(|p| p.probes)
        };
        // Groups: ours and the paper's for each maximum level; series: the probe kinds,
        // rows 2-6 of the paper's table.
        let mut groups = Vec::new();
        let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); 5];
        for (column, &level) in order.iter().enumerate() {
            if let Some(s) = ours(level) {
                groups.push(format!("max level {level}, ours"));
                for (kind, count) in [s.successful, s.low, s.over, s.back, s.null]
                    .into_iter()
                    .enumerate()
                {
                    values[kind].push(Some(s.per_pointer(count)));
                }
            }
            groups.push(format!("max level {level}, paper"));
            for (kind, row) in PAPER_PROBES[2..].iter().enumerate() {
                values[kind].push(Some(row.1[column]));
            }
        }
        let chart = GroupedBarChart {
            title: "Probes per pointer visited, query phase (table, section 0.6.3)".into(),
            y: Axis::linear("probes per pointer visited"),
            groups,
            series: PAPER_PROBES[2..]
                .iter()
                .zip(values)
                .map(|(row, values)| BarSeries {
                    name: row.0.into(),
                    values,
                })
                .collect(),
        };
        figures.save("table-probes.svg", chart.svg())?;
    }
    if wants("init") {
        let levels = [1u32, 3, 4, 5];
        let mut series: Vec<Series> = PAPER_INIT
            .iter()
            .map(|&(t, _)| {
                sweep(&format!("ours, turnstile {t}"), &levels, |l| {
                    doc.init
                        .iter()
                        .find(|r| r.turnstile == t && r.levels == l)
                        .map(|r| r.word_reads)
                })
            })
            .collect();
        series.extend(PAPER_INIT.iter().map(|&(t, paper)| Series {
            name: format!("paper, turnstile {t}"),
            points: levels.iter().map(|&l| f64::from(l)).zip(paper).collect(),
        }));
        let chart = line_chart(
            "Boot-up initialization cost by maximum level (table, section 0.6.3)",
            Axis::linear("maximum level"),
            "word reads a boot-up (mean)",
            series,
        );
        figures.save("table-init.svg", chart.svg())?;
    }
    Ok(())
}
