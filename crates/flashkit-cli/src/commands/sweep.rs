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
//! config file (and of the flags); `[grid.device] op = [...]` is the same as `"device.op"`, and
//! a grid `seed` is `run.seed`: a setting given twice is refused. A grid value overrides the
//! same option in `[base]`. Errors about a key or value name its line of the file.
//!
//! `cells.json` in the output directory records what each cell ran ([`sweep::Setup`]), so that
//! `--resume` refuses a directory whose results were made under other settings.

use crate::Outcome;
use crate::args::SweepArgs;
use crate::progress::WorkerBars;
use crate::{Failure, sim_failure};
use anyhow::{Context, anyhow, bail};
use flashkit_ftl::FtlKind;
use flashkit_lab::Executor;
use flashkit_lab::config::{
    self as settings, ConfigFile, FtlSection, TraceSection, WorkloadSection, line_of,
};
use flashkit_report::Table;
use flashkit_sim::sweep::{self, Cell, CellResult, ResultStore, Setup};
use flashkit_sim::{RunSpec, Source};
use flashkit_trace::formats::layout::PreparedTrace;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    #[serde(default, deserialize_with = "workers")]
    jobs: Option<usize>,
    #[serde(default)]
    base: toml::Table,
    grid: toml::Table,
}

/// `jobs` in a sweep file: at least one worker, refused at its line.
fn workers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    match usize::deserialize(d)? {
        0 => Err(serde::de::Error::custom(
            "jobs is 0; a sweep needs at least one worker",
        )),
        jobs => Ok(Some(jobs)),
    }
}

/// One grid dimension: its name (the cell parameter), how and where the file gives it, and
/// its values, each with its line.
struct Dimension {
    name: String,
    /// How the file spells it: `"device.op" in [grid]`, `op in [grid.device]`.
    spelt: String,
    line: usize,
    values: Vec<(toml::Value, usize)>,
}

/// Grid dimensions in key order.
type Grid = Vec<Dimension>;

/// A key as it would be written in its table: quoted if it holds a dot.
fn key_text(key: &str) -> String {
    if key.contains('.') || key.is_empty() {
        format!("{key:?}")
    } else {
        key.to_string()
    }
}

/// A parsed value without its spans.
fn plain(value: &Spanned<DeValue<'_>>) -> anyhow::Result<toml::Value> {
    toml::Value::deserialize(toml::de::ValueDeserializer::from(value.clone()))
        .map_err(|e| anyhow!("{}", e.message()))
}

/// The setting a grid key names: a grid `seed` is `run.seed`.
fn setting(name: &str) -> &str {
    if name == "seed" { "run.seed" } else { name }
}

/// The grid's dimensions, from the parsed `table` under `[grid]` (`path` the tables between),
/// each checked against the options it sets. A setting given twice (`"device.op"` beside
/// `[grid.device] op`, `seed` beside `run.seed`) is refused naming both.
fn flatten(text: &str, path: &[String], table: &DeTable<'_>, out: &mut Grid) -> anyhow::Result<()> {
    let here = path
        .iter()
        .map(|p| format!(".{}", key_text(p)))
        .collect::<String>();
    for (key, value) in table.iter() {
        let line = line_of(text, key.span());
        let mut inner = path.to_vec();
        inner.push(key.get_ref().to_string());
        let name = inner.join(".");
        let spelt = format!("{} in [grid{here}]", key_text(key.get_ref()));
        let values = match value.get_ref() {
            DeValue::Table(table) if table.is_empty() => {
                bail!(
                    "line {line}: [grid{here}.{}] has no keys",
                    key_text(key.get_ref())
                )
            }
            DeValue::Table(table) => {
                flatten(text, &inner, table, out)?;
                continue;
            }
            DeValue::Array(values) if values.is_empty() => {
                bail!("line {line}: grid key {name} has no values")
            }
            DeValue::Array(values) => values
                .iter()
                .map(|v| Ok((plain(v)?, line_of(text, v.span()))))
                .collect::<anyhow::Result<Vec<_>>>()?,
            _ => vec![(plain(value)?, line_of(text, value.span()))],
        };
        if let Some(first) = out.iter().find(|d| setting(&d.name) == setting(&name)) {
            let (a, b) = if first.line <= line {
                ((&first.spelt, first.line), (&spelt, line))
            } else {
                ((&spelt, line), (&first.spelt, first.line))
            };
            let alias = if first.name == name {
                String::new()
            } else {
                " (a grid seed is run.seed)".to_string()
            };
            bail!(
                "line {} ({}) and line {} ({}) both set {}{alias}: keep one",
                a.1,
                a.0,
                b.1,
                b.0,
                setting(&name)
            );
        }
        let dimension = Dimension {
            name,
            spelt,
            line,
            values,
        };
        check_dimension(&dimension)?;
        out.push(dimension);
    }
    Ok(())
}

/// Refuse a grid key that is no setting, or a value its setting cannot take, naming the
/// line: otherwise the error would come later, naming a cell.
fn check_dimension(dimension: &Dimension) -> anyhow::Result<()> {
    let name = &dimension.name;
    for (value, line) in &dimension.values {
        match name.as_str() {
            "ftl" => {
                value_text(value)
                    .parse::<FtlKind>()
                    .map_err(|e| anyhow!("line {line}: grid ftl: {e}"))?;
            }
            "seed" => {
                seed_of(value).map_err(|e| anyhow!("line {line}: {e}"))?;
            }
            "trace" => {
                if !value.is_str() {
                    bail!(
                        "line {line}: grid trace {value} is neither \"builtin\" nor a file name \
                         (a string)"
                    );
                }
            }
            dotted => {
                let Some((section, option)) = dotted.split_once('.') else {
                    bail!(
                        "line {}: grid key {dotted:?} is neither ftl, trace, seed nor \
                         section.option",
                        dimension.line
                    );
                };
                check_option(section, Some((option, value)))
                    .map_err(|e| anyhow!("line {line}: grid key {dotted}: {e}"))?;
            }
        }
    }
    Ok(())
}

/// Whether a config file with `option = value` in `[section]` (or an empty `[section]`)
/// would be read: the error of the option alone, so that it can be given its line.
fn check_option(section: &str, option: Option<(&str, &toml::Value)>) -> Result<(), String> {
    let mut options = toml::Table::new();
    if let Some((option, value)) = option {
        options.insert(option.to_string(), value.clone());
    }
    let mut file = toml::Table::new();
    file.insert(section.to_string(), toml::Value::Table(options));
    toml::Value::Table(file)
        .try_into::<ConfigFile>()
        .map(drop)
        .map_err(|e| e.message().to_string())
}

/// Refuse a `[base]` section or option that a config file could not hold, naming its line.
fn check_base(text: &str, base: &Spanned<DeValue<'_>>) -> anyhow::Result<()> {
    let DeValue::Table(sections) = base.get_ref() else {
        bail!(
            "line {}: base is not a table of sections",
            line_of(text, base.span())
        );
    };
    for (section, options) in sections.iter() {
        let line = line_of(text, section.span());
        let name = key_text(section.get_ref());
        let DeValue::Table(options) = options.get_ref() else {
            let value = plain(options)?;
            let mut file = toml::Table::new();
            file.insert(section.get_ref().to_string(), value);
            let e = toml::Value::Table(file)
                .try_into::<ConfigFile>()
                .err()
                .map_or_else(|| "not a table".to_string(), |e| e.message().to_string());
            bail!("line {line}: base.{name}: {e}");
        };
        check_option(section.get_ref(), None)
            .map_err(|e| anyhow!("line {line}: base.{name}: {e}"))?;
        for (option, value) in options.iter() {
            let line = line_of(text, option.span());
            let value = plain(value)?;
            check_option(section.get_ref(), Some((option.get_ref(), &value))).map_err(|e| {
                anyhow!(
                    "line {line}: base.{name}.{}: {e}",
                    key_text(option.get_ref())
                )
            })?;
        }
    }
    Ok(())
}

/// A grid seed: a non-negative integer.
fn seed_of(value: &toml::Value) -> anyhow::Result<u64> {
    value
        .as_integer()
        .and_then(|s| u64::try_from(s).ok())
        .ok_or_else(|| anyhow!("grid seed {value} is not a non-negative integer"))
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
    for dimension in grid {
        let mut next = Vec::with_capacity(cells.len() * dimension.values.len());
        for cell in &cells {
            for (value, _) in &dimension.values {
                let mut extended = cell.clone();
                extended.insert(dimension.name.clone(), value.clone());
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
            "seed" => seed = Some(seed_of(value)?),
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
    // What the cell runs, recorded beside its result: the settings it is made from (the
    // base's and the grid's, as the file spells them) and, below, a digest of the run.
    let mut setup = BTreeMap::new();
    for (section, options) in &table {
        match options.as_table() {
            Some(options) => setup.extend(
                options
                    .iter()
                    .map(|(option, value)| (format!("{section}.{option}"), value.to_string())),
            ),
            None => {
                setup.insert(section.clone(), options.to_string());
            }
        }
    }
    setup.insert("ftl".to_string(), kind.to_string());
    setup.insert("trace".to_string(), trace.clone());
    if let Some(seed) = seed {
        setup.insert("seed".to_string(), seed.to_string());
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
    let grid_workload: WorkloadSection = grid_section("workload")
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    let grid_trace: TraceSection = grid_section("trace")
        .try_into()
        .map_err(|e| anyhow!("grid cell {}: {e}", describe(combo)))?;
    let grid_ftl: FtlSection = grid_section("ftl")
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
    // A cell runs one FTL: a list (`"ftl.gc" = ["greedy,fifo"]`, `gc = "greedy,fifo"` in the
    // base) ran its first value under an id naming them all.
    let listed: Vec<String> = settings::listed_ftl_options(&Default::default(), &config.ftl)
        .into_iter()
        .map(|flag| format!("ftl.{}", flag.trim_start_matches("--").replace('-', "_")))
        .collect();
    if !listed.is_empty() {
        return Err(anyhow!(
            "grid cell {}: {} {} several values, and a cell runs one FTL: make them grid \
             values (\"ftl.gc\" = [\"greedy\", \"fifo\"])",
            describe(combo),
            listed.join(", "),
            if listed.len() == 1 { "has" } else { "have" }
        ));
    }
    let (policies, mut options) = settings::ftl_options(&Default::default(), &config.ftl);
    if let Some(&policy) = policies.first() {
        options.page.gc_policy = policy;
    }
    let input;
    let source = if trace == "builtin" {
        let workload =
            settings::workload_spec(&grid_workload, &config.workload, device.capacity_bytes)
                .with_context(|| format!("grid cell {}", describe(combo)))?;
        input = workload.canonical();
        Source::Workload(workload)
    } else {
        // Any trace format, read once per sweep; the device is sized to it unless the cell
        // gives a capacity, as `replay --trace` does.
        let path = dir.join(&trace);
        let (options, mapping) = settings::trace_options(&Default::default(), &config.trace);
        let block = device.block_bytes()?;
        // One file however it is spelt (`t.csv`, `./t.csv`, a link): read once, and its
        // cells compared as one input.
        let file = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let reading = format!("{options:?} {mapping:?}");
        let key = (file, reading.clone(), block);
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
        let digest = format!("{:032x}", prepared.digest);
        input = format!("trace {digest} {reading}");
        setup.insert("trace content".to_string(), digest);
        Source::Trace(prepared)
    };
    let spec = RunSpec {
        label: flashkit_lab::compare::label(kind, &options),
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
    // Everything that decides the run: two cells with one digest run the same, however the
    // file spells their settings.
    Ok(Cell {
        id: Cell::id_of(&params),
        params,
        setup: Setup {
            run: flashkit_lab::sweep::run_digest(&spec, &input),
            settings: setup,
        },
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

/// The grid of a sweep file, its `[base]` checked too: every error about a key or a value
/// names its line.
fn grid_of(text: &str, file: &SweepFile) -> anyhow::Result<Grid> {
    let doc = DeTable::parse(text).map_err(|e| anyhow!("{e}"))?;
    let doc = doc.get_ref();
    let section = |name: &str| doc.iter().find(|(key, _)| key.get_ref() == name);
    if let Some((_, base)) = section("base") {
        check_base(text, base)?;
    }
    let mut grid = Grid::new();
    if let Some((key, table)) = section("grid") {
        let DeValue::Table(table) = table.get_ref() else {
            bail!("line {}: grid is not a table", line_of(text, key.span()));
        };
        flatten(text, &[], table, &mut grid)?;
    }
    // An empty grid would make one cell with an empty id, which nothing could name.
    if file.grid.is_empty() || grid.is_empty() {
        bail!(
            "[grid] has no keys: a sweep needs at least one (for a single run, one value, such \
             as ftl = [\"page\"])"
        );
    }
    Ok(grid)
}

fn load(path: &Path) -> anyhow::Result<(SweepFile, Vec<Cell>)> {
    crate::output::note_input(path);
    let text = settings::read_toml_text(path, "sweep file")?;
    let file: SweepFile =
        toml::from_str(&text).with_context(|| format!("sweep file {}", path.display()))?;
    let grid = grid_of(&text, &file).with_context(|| format!("sweep file {}", path.display()))?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut traces = TraceCache::new();
    let checked = |file: &SweepFile, combo: &BTreeMap<String, toml::Value>, traces: &mut _| {
        let c = cell(file, &dir, combo, traces)?;
        c.spec
            .check_on(&c.source)
            .map_err(|e| anyhow!("cell {}: {e}", c.id))?;
        Ok(c)
    };
    let mut cells = Vec::new();
    for combo in combinations(&grid) {
        match checked(&file, &combo, &mut traces) {
            Ok(c) => cells.push(c),
            Err(error) => {
                let lines = blame(&text, &file, &grid, &combo, &error, |file, combo| {
                    checked(file, combo, &mut traces).map(drop)
                });
                let place = if lines.is_empty() {
                    String::new()
                } else {
                    format!(", {}", lines.join(" and "))
                };
                bail!("sweep file {}{place}: {error:#}", path.display());
            }
        }
    }
    // Two cells that are one run would run twice and be drawn as two points (or, with one
    // id, recorded twice): a value listed twice, two spellings of a value (`64M`, `64MiB`).
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
                 twice, or two spellings of one value): drop one",
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
        // The file's `jobs = 0` is refused where it is read, at its line.
        return Err(Failure::Usage(anyhow!(
            "--jobs is 0; a sweep needs at least one worker"
        )));
    }
    let specs: Vec<flashkit_sim::RunSpec> = cells.iter().map(|c| c.spec.clone()).collect();
    flashkit_sim::check_memory(&specs, jobs.min(cells.len()))
        .map_err(|e| Failure::Usage(anyhow!("sweep file {}: {e}", args.file.display())))?;
    let mut undo = crate::output::Undo::default();
    undo.create_dir_all(&args.out)?;
    let _lock = lock(&args.out)?;
    for name in ["results.jsonl", "results.csv", "cells.json"] {
        undo.note(&args.out.join(name));
    }
    let outcome = run_locked(&args, &file, &cells, jobs, &mut undo);
    // Undone (when it must be) while the directory is still locked.
    drop(undo);
    outcome
}

/// The lines of the sweep file that `error`, of the cell made of `combo`, is about: each
/// `[base]` option and each grid value of the cell is left out in turn, and those whose
/// absence lets the cell build and check are at fault (failing that, those whose absence
/// changes the error). A cell's error named the cell but not the line.
fn blame(
    text: &str,
    file: &SweepFile,
    grid: &Grid,
    combo: &BTreeMap<String, toml::Value>,
    error: &anyhow::Error,
    mut check: impl FnMut(&SweepFile, &BTreeMap<String, toml::Value>) -> anyhow::Result<()>,
) -> Vec<String> {
    let mut verdicts: Vec<(String, Option<anyhow::Error>)> = Vec::new();
    for option in settings::option_lines(text, Some("base")) {
        let mut without = file.clone();
        if let Some(toml::Value::Table(options)) = without.base.get_mut(&option.section) {
            options.remove(&option.key);
        }
        let place = format!(
            "line {} ([base.{}] {})",
            option.line, option.section, option.written
        );
        verdicts.push((place, check(&without, combo).err()));
    }
    for dimension in grid {
        let Some(value) = combo.get(&dimension.name) else {
            continue;
        };
        let line = dimension
            .values
            .iter()
            .find(|(v, _)| v == value)
            .map_or(dimension.line, |&(_, line)| line);
        let mut without = combo.clone();
        without.remove(&dimension.name);
        let place = format!("line {line} ({} {})", dimension.spelt, value);
        verdicts.push((place, check(file, &without).err()));
    }
    let verdicts = verdicts
        .into_iter()
        .map(|(place, error)| (place, error.map(|e| format!("{e:#}"))));
    settings::at_fault(&format!("{error:#}"), verdicts)
}

/// Hold an advisory lock on the output directory itself (not on a file in it, which would be
/// left behind), so that a second sweep writing the same directory (a `--resume` started
/// while the first runs) is refused instead of interleaving its results with the first's.
/// The lock goes with the process.
fn lock(out: &Path) -> Result<std::fs::File, Failure> {
    let directory = std::fs::File::open(out)
        .with_context(|| format!("cannot open {} to lock it", out.display()))?;
    match directory.try_lock() {
        Ok(()) => Ok(directory),
        Err(std::fs::TryLockError::WouldBlock) => Err(Failure::Usage(anyhow!(
            "{} is being written by another flashkit sweep (it holds the directory's lock): \
             wait for it to finish, or give another --out",
            out.display()
        ))),
        Err(std::fs::TryLockError::Error(error)) => Err(Failure::Runtime(
            anyhow::Error::from(error).context(format!("cannot lock {}", out.display())),
        )),
    }
}

/// The sweep, once its directory is locked. What it creates there is removed if it fails
/// before recording a result (a full disk, a trace that cannot be read); from the first
/// result on, everything is kept, for `--resume`.
fn run_locked(
    args: &SweepArgs,
    file: &SweepFile,
    cells: &[Cell],
    jobs: usize,
    undo: &mut crate::output::Undo,
) -> Outcome {
    let name = file
        .name
        .clone()
        .unwrap_or_else(|| args.file.display().to_string());
    let results_path = args.out.join("results.jsonl");
    let has_results = std::fs::metadata(&results_path).is_ok_and(|m| m.len() > 0);
    if has_results && !args.resume && !args.force {
        return Err(Failure::Usage(anyhow!(
            "{} already holds results: add --resume to run only the missing cells, or --force to start over",
            args.out.display()
        )));
    }
    let cells_path = args.out.join("cells.json");
    if has_results && args.resume {
        let recorded = sweep::read_results(&results_path).map_err(sim_failure)?;
        check_resume(args, cells, &recorded.results, &cells_path)?;
    }
    let (mut store, existing) =
        ResultStore::open(&results_path, args.force).map_err(sim_failure)?;
    // Every cell recorded is one of these, with the same run.
    let setups = cells
        .iter()
        .map(|c| (c.id.clone(), c.setup.clone()))
        .collect();
    sweep::write_setups(&cells_path, &setups).map_err(sim_failure)?;
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
    // No more workers than cells to run (100,000 of them turned a 0.02 s sweep into 10 s).
    let jobs = jobs.min(ran).max(1);
    let started = Instant::now();
    let bars = WorkerBars::new("sweep", ran, jobs);
    let csv_path = args.out.join("results.csv");
    let mut write_error = None;
    let mut failed = 0;
    // Each result is saved as it finishes (the callback); the grid order is restored below, over
    // the results recorded before as well.
    flashkit_lab::sweep::run(
        &todo,
        &Executor::new(jobs),
        |worker, cell| bars.worker(worker, &cell.id),
        |worker, result| {
            bars.finished(worker, Some(&finished_line(result)));
            failed += usize::from(!result.is_ok());
            if write_error.is_none() {
                write_error = store.append(result).err();
                if write_error.is_none() {
                    undo.keep();
                }
            }
            results.push(result.clone());
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
    // The finished file in the grid's order, whichever worker finished first (the same
    // sweep wrote its rows in a different order on every run).
    let order: HashMap<&str, usize> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    results.sort_by_key(|r| order.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
    write_csv(&csv_path, &results)?;
    undo.keep();
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

/// A resumed directory must hold results of this experiment only, or the sweep would mix two
/// (a cell id names only its grid values): refuse results of cells the grid no longer has,
/// and results whose run (`cells.json`) differs from what the file now gives their cell,
/// saying what differs.
fn check_resume(
    args: &SweepArgs,
    cells: &[Cell],
    recorded: &[CellResult],
    setups_path: &Path,
) -> Outcome {
    let out = args.out.display();
    let file = args.file.display();
    let instead = "use a new --out, or --force instead of --resume to start over";
    let current: HashMap<&str, &Cell> = cells.iter().map(|c| (c.id.as_str(), c)).collect();
    let ids: BTreeSet<&str> = recorded.iter().map(|r| r.id.as_str()).collect();
    let gone: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !current.contains_key(id))
        .collect();
    if !gone.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "{out} holds results of {} that the grid of {file} no longer has ({}); resuming \
             would leave them among this experiment's results: put their values back in the \
             grid, use a new --out, or --force instead of --resume to start over",
            count(gone.len(), "cell"),
            listed(&gone)
        )));
    }
    let Some(setups) = sweep::read_setups(setups_path).map_err(sim_failure)? else {
        return Err(Failure::Usage(anyhow!(
            "{out} holds results but no cells.json saying what they ran (an older flashkit \
             wrote it), so --resume cannot check that they were made under the settings of \
             {file}: {instead}"
        )));
    };
    let mut changed: Vec<(&str, String)> = Vec::new();
    for id in ids {
        let now = &current[id].setup;
        let why = match setups.get(id) {
            None => format!("{} does not say what it ran", setups_path.display()),
            Some(before) if !before.same_run(now) => {
                let differences = before.differences(now);
                if differences.is_empty() {
                    "its settings are the same, but what this flashkit makes of them is not \
                     (another version of flashkit ran it)"
                        .to_string()
                } else {
                    differences.join("; ")
                }
            }
            Some(_) => continue,
        };
        changed.push((id, why));
    }
    let Some((id, why)) = changed.first() else {
        return Ok(());
    };
    let others = match changed.len() {
        1 => String::new(),
        2 => " (and 1 other cell)".to_string(),
        n => format!(" (and {} other cells)", n - 1),
    };
    Err(Failure::Usage(anyhow!(
        "{out} holds results made under other settings than {file} gives now, and resuming \
         would mix the two: cell {id}{others}: {why}; {instead}"
    )))
}

/// `n` things: "1 cell", "3 cells".
fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// A few ids, and how many more.
fn listed(ids: &[&str]) -> String {
    let shown = ids.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    match ids.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
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
