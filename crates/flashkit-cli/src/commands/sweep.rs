//! `flashkit sweep`: a grid of runs declared in TOML, on every core, each result saved as it
//! finishes.
//!
//! ```toml
//! name = "GC policy against over-provisioning"
//! jobs = 2                       # optional; default one worker per core
//!
//! [base.device]                  # like a --config file: device, ftl, run, workload
//! capacity = "256M"
//! [base.workload]
//! requests = "100k"
//!
//! [grid]                         # every combination is one run
//! ftl = ["page"]                 # FTL schemes
//! trace = ["builtin"]            # "builtin" (the [workload]) or trace files
//! seed = [1]
//! "device.op" = [0.05, 0.07, 0.1, 0.15, 0.25]
//! "ftl.gc" = ["greedy", "cost-benefit", "fifo"]
//! ```
//!
//! Grid keys other than `ftl`, `trace` and `seed` are `section.option` with the names of the
//! config file (and of the flags); `[grid.device] op = [...]` is the same as `"device.op"`.

use crate::Outcome;
use crate::args::{FtlArgs, SweepArgs, TraceArgs, WorkloadArgs};
use crate::progress::WorkerBars;
use crate::settings::{self, ConfigFile};
use crate::{Failure, sim_failure};
use anyhow::{Context, anyhow};
use flashkit_ftl::FtlKind;
use flashkit_report::Table;
use flashkit_sim::sweep::{self, Cell, CellResult, ResultStore};
use flashkit_sim::{RunSpec, Source};
use flashkit_trace::formats::layout::PreparedTrace;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    jobs: Option<usize>,
    #[serde(default)]
    base: toml::Table,
    grid: toml::Table,
}

/// Grid dimensions in key order: (name, values).
type Grid = Vec<(String, Vec<toml::Value>)>;

fn flatten(prefix: &str, table: &toml::Table, out: &mut Grid) -> anyhow::Result<()> {
    for (key, value) in table {
        let name = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Array(values) if !values.is_empty() => out.push((name, values.clone())),
            toml::Value::Array(_) => return Err(anyhow!("grid key {name} has no values")),
            toml::Value::Table(inner) => flatten(&name, inner, out)?,
            other => out.push((name, vec![other.clone()])),
        }
    }
    Ok(())
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every combination of the grid's values, as parameter maps.
fn combinations(grid: &Grid) -> Vec<BTreeMap<String, toml::Value>> {
    let mut cells = vec![BTreeMap::new()];
    for (name, values) in grid {
        let mut next = Vec::with_capacity(cells.len() * values.len());
        for cell in &cells {
            for value in values {
                let mut extended = cell.clone();
                extended.insert(name.clone(), value.clone());
                next.push(extended);
            }
        }
        cells = next;
    }
    cells
}

/// Traces read once per sweep: (path, reading options, block size) to the prepared trace.
type TraceCache = BTreeMap<(PathBuf, String, u64), Arc<PreparedTrace>>;

/// The cell of one combination: the base config with the combination's options set.
fn cell(
    file: &SweepFile,
    dir: &Path,
    combo: &BTreeMap<String, toml::Value>,
    traces: &mut TraceCache,
) -> anyhow::Result<Cell> {
    let mut table = file.base.clone();
    let mut kind = FtlKind::Page;
    let mut trace = "builtin".to_string();
    let mut seed = None;
    for (name, value) in combo {
        match name.as_str() {
            "ftl" => {
                kind = value_text(value)
                    .parse()
                    .map_err(|e: String| anyhow!("grid ftl: {e}"))?
            }
            "trace" => trace = value_text(value),
            "seed" => {
                seed = Some(
                    value
                        .as_integer()
                        .and_then(|s| u64::try_from(s).ok())
                        .ok_or_else(|| {
                            anyhow!("grid seed {value} is not a non-negative integer")
                        })?,
                )
            }
            dotted => {
                let (section, option) = dotted.split_once('.').ok_or_else(|| {
                    anyhow!("grid key {dotted:?} is neither ftl, trace, seed nor section.option")
                })?;
                let section_table = table
                    .entry(section)
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                    .as_table_mut()
                    .ok_or_else(|| anyhow!("base.{section} is not a table"))?;
                section_table.insert(option.to_string(), value.clone());
            }
        }
    }
    let config: ConfigFile = toml::Value::Table(table)
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    // The grid's own workload and trace options play the command line's part: one that
    // would do nothing in its cell (a trace option over the built-in workload, `theta` of a
    // hot/cold workload) is refused, since every cell would come out the same. The base may
    // hold options for several kinds of cell.
    let grid_section = |section: &str| {
        let prefix = format!("{section}.");
        let table: toml::Table = combo
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?.to_string(), v.clone())))
            .collect();
        toml::Value::Table(table)
    };
    let grid_workload: WorkloadArgs = grid_section("workload")
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    let grid_trace: TraceArgs = grid_section("trace")
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    let grid_ftl: FtlArgs = grid_section("ftl")
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    let (unused, section, what) = if trace == "builtin" {
        (
            grid_trace.given(),
            "trace",
            "reading a trace, and the cell runs the built-in workload".to_string(),
        )
    } else {
        (
            grid_workload.given(),
            "workload",
            "the built-in workload, and the cell replays a trace".to_string(),
        )
    };
    let unused = std::iter::once((unused, section, what)).chain(
        settings::unused_ftl_options(&grid_ftl, &[kind])
            .into_iter()
            .map(|(names, ftls)| (names, "ftl", format!("{ftls}, and the cell runs {kind}"))),
    );
    let mut problems = Vec::new();
    for (names, section, what) in unused.filter(|(names, _, _)| !names.is_empty()) {
        let keys: Vec<String> = names
            .iter()
            .map(|flag| {
                format!(
                    "{section}.{}",
                    flag.trim_start_matches("--").replace('-', "_")
                )
            })
            .collect();
        problems.push(settings::unused_options(&keys, &what));
    }
    if !problems.is_empty() {
        return Err(anyhow!(
            "grid cell {}: {}",
            describe(combo),
            problems.join("; ")
        ));
    }
    let mut device = settings::device_spec(&Default::default(), &config.device)?;
    let (policies, mut options) = settings::ftl_options(&Default::default(), &config.ftl);
    if let Some(&policy) = policies.first() {
        options.page.gc_policy = policy;
    }
    let source = if trace == "builtin" {
        Source::Workload(
            settings::workload_spec(&grid_workload, &config.workload, device.capacity_bytes)
                .with_context(|| format!("grid cell {}", describe(combo)))?,
        )
    } else {
        // Any trace format, read once per sweep; the device is sized to it unless the cell
        // gives a capacity, as `replay --trace` does.
        let path = dir.join(&trace);
        let (options, mapping) = settings::trace_options(&Default::default(), &config.trace);
        let block = device.block_bytes()?;
        // One file however it is spelt (`t.csv`, `./t.csv`, a link): read once, and its
        // cells compared as one input.
        let file = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let key = (file, format!("{options:?} {mapping:?}"), block);
        let prepared = match traces.get(&key) {
            Some(prepared) => prepared.clone(),
            None => {
                let prepared = Arc::new(PreparedTrace::prepare(&path, &options, mapping, block)?);
                traces.insert(key, prepared.clone());
                prepared
            }
        };
        if config.device.capacity.is_none() {
            device = device.sized_for(&prepared)?;
        }
        Source::Trace(prepared)
    };
    let spec = RunSpec {
        label: settings::label(kind, &options),
        ftl: kind,
        options,
        device,
        precondition: settings::precondition(&Default::default(), &config.run),
        seed: seed.unwrap_or_else(|| settings::seed(&Default::default(), &config.run)),
    };
    let params: BTreeMap<String, String> = combo
        .iter()
        .map(|(k, v)| (k.clone(), value_text(v)))
        .collect();
    Ok(Cell {
        id: Cell::id_of(&params),
        params,
        spec,
        source,
    })
}

fn describe(combo: &BTreeMap<String, toml::Value>) -> String {
    combo
        .iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn load(path: &Path) -> anyhow::Result<(SweepFile, Vec<Cell>)> {
    crate::output::note_input(path);
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: SweepFile =
        toml::from_str(&text).with_context(|| format!("sweep file {}", path.display()))?;
    let mut grid = Grid::new();
    flatten("", &file.grid, &mut grid).with_context(|| format!("sweep file {}", path.display()))?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut traces = TraceCache::new();
    let cells = combinations(&grid)
        .iter()
        .map(|combo| cell(&file, &dir, combo, &mut traces))
        .collect::<anyhow::Result<Vec<_>>>()
        .with_context(|| format!("sweep file {}", path.display()))?;
    for c in &cells {
        c.spec
            .check()
            .map_err(|e| anyhow!("sweep file {}: cell {}: {e}", path.display(), c.id))?;
    }
    // Two cells that are one run would run twice and be drawn as two points (or, with one
    // id, recorded twice): a value listed twice, two spellings of a value (`64M`, `64MiB`),
    // a grid `seed` over a grid `run.seed`.
    let mut runs: HashMap<String, &str> = HashMap::new();
    for c in &cells {
        let input = match &c.source {
            Source::Workload(spec) => format!("{spec:?}"),
            Source::Binary(path) => path.display().to_string(),
            // The trace cache hands cells with one file, options and block size one trace.
            Source::Trace(prepared) => format!("{:p}", Arc::as_ptr(prepared)),
        };
        if let Some(first) = runs.insert(format!("{:?} {input}", c.spec), &c.id) {
            return Err(anyhow!(
                "sweep file {}: grid cells {first} and {} are the same run (a value listed \
                 twice, two spellings of one value, or a grid seed over run.seed): drop one",
                path.display(),
                c.id
            ));
        }
    }
    Ok((file, cells))
}

pub fn run(args: SweepArgs) -> Outcome {
    let (file, cells) = load(&args.file).map_err(Failure::Usage)?;
    let jobs = args.jobs.or(file.jobs).unwrap_or_else(super::cores);
    if jobs == 0 {
        let source = if args.jobs.is_some() {
            "--jobs".to_string()
        } else {
            format!("sweep file {}: jobs", args.file.display())
        };
        return Err(Failure::Usage(anyhow!(
            "{source} is 0; a sweep needs at least one worker"
        )));
    }
    let name = file
        .name
        .clone()
        .unwrap_or_else(|| args.file.display().to_string());
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let results_path = args.out.join("results.jsonl");
    let has_results = std::fs::metadata(&results_path).is_ok_and(|m| m.len() > 0);
    if has_results && !args.resume && !args.force {
        return Err(Failure::Usage(anyhow!(
            "{} already holds results: add --resume to run only the missing cells, or --force to start over",
            args.out.display()
        )));
    }
    let (mut store, existing) =
        ResultStore::open(&results_path, args.force).map_err(sim_failure)?;
    if existing.dropped_partial_line {
        eprintln!(
            "note: dropped a torn last line of {} (the previous sweep was interrupted)",
            results_path.display()
        );
    }
    let recorded = sweep::recorded_ids(&existing);
    let mut results = existing.results;
    let todo: Vec<Cell> = cells
        .iter()
        .filter(|c| !recorded.contains(&c.id))
        .cloned()
        .collect();
    let skipped = cells.len() - todo.len();
    let ran = todo.len();
    let started = Instant::now();
    let bars = WorkerBars::new("sweep", ran, jobs);
    let csv_path = args.out.join("results.csv");
    let mut write_error = None;
    let mut failed = 0;
    sweep::execute(
        todo,
        jobs,
        &|worker, cell| Box::new(bars.worker(worker, &cell.id)),
        |worker, result| {
            bars.finished(worker, Some(&finished_line(&result)));
            failed += usize::from(!result.is_ok());
            if write_error.is_none() {
                write_error = store.append(&result).err();
            }
            results.push(result);
            if write_error.is_none() {
                write_error = write_csv(&csv_path, &results)
                    .err()
                    .map(|e| flashkit_sim::SimError::Io(e.to_string()));
            }
        },
    );
    bars.clear();
    if let Some(error) = write_error {
        return Err(sim_failure(error));
    }
    write_csv(&csv_path, &results)?;
    println!(
        "sweep {name:?}: {} cells; ran {ran} ({} ok, {failed} failed) in {:.1} s with {jobs} worker{}; skipped {skipped} already recorded",
        cells.len(),
        ran - failed,
        started.elapsed().as_secs_f64(),
        if jobs == 1 { "" } else { "s" },
    );
    println!(
        "results: {} and {}",
        results_path.display(),
        csv_path.display()
    );
    if failed > 0 {
        return Err(Failure::Runtime(anyhow!(
            "{failed} of {ran} runs failed; their errors are in {}",
            results_path.display()
        )));
    }
    Ok(())
}

/// Every result as one CSV row: id, label, status, error, the parameters, then the metrics.
fn write_csv(path: &Path, results: &[CellResult]) -> anyhow::Result<()> {
    let params: BTreeSet<&String> = results.iter().flat_map(|r| r.params.keys()).collect();
    let mut metrics: Vec<&String> = Vec::new();
    for r in results {
        for key in r.metrics.keys() {
            if !metrics.contains(&key) {
                metrics.push(key);
            }
        }
    }
    let header = ["id", "label", "status", "error"]
        .into_iter()
        .map(String::from)
        .chain(params.iter().map(|p| (*p).clone()))
        .chain(metrics.iter().map(|m| (*m).clone()));
    let mut table = Table::new(header);
    for r in results {
        let mut row = vec![
            r.id.clone(),
            r.label.clone(),
            r.status.clone(),
            r.error.clone().unwrap_or_default(),
        ];
        row.extend(
            params
                .iter()
                .map(|p| r.params.get(*p).cloned().unwrap_or_default()),
        );
        row.extend(
            metrics
                .iter()
                .map(|m| r.metrics.get(*m).map(|v| v.to_string()).unwrap_or_default()),
        );
        table.push(row);
    }
    crate::output::write_csv(path, &table)
}

/// What the sweep says of a finished cell.
fn finished_line(result: &CellResult) -> String {
    match &result.error {
        None => format!(
            "ok      {}  WA {:.3}, {} erases",
            result.id,
            result
                .metrics
                .get("write_amplification")
                .copied()
                .unwrap_or(f64::NAN),
            result.metrics.get("flash_erases").copied().unwrap_or(0.0)
        ),
        Some(error) => format!("FAILED  {}: {error}", result.id),
    }
}
