//! One cell of a sweep's grid: the base config with the cell's grid values set, resolved
//! into a run spec and its input.

use super::error::CellError;
use super::file::{SweepFile, seed_of, value_text};
use crate::config::{
    self, ConfigFile, FtlSection, TraceSection, WorkloadSection, unused_ftl_options, unused_options,
};
use flashkit_ftl::{FtlKind, FtlOptions};
use flashkit_sim::sweep::{Cell, Setup};
use flashkit_sim::{DeviceSpec, RunSpec, Source};
use flashkit_trace::formats::layout::PreparedTrace;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A cell's grid values, by grid key (`ftl`, `device.op`).
pub(super) type Combo = BTreeMap<String, toml::Value>;

/// Traces read once per sweep: (path, reading options, block size) to the prepared trace.
pub(super) type TraceCache = BTreeMap<(PathBuf, String, u64), Arc<PreparedTrace>>;

/// What a combination sets: the config (the base with the combination's options), the FTL,
/// the trace (`builtin` for the workload) and the seed, if the grid gives one.
struct Settings {
    table: toml::Table,
    kind: FtlKind,
    trace: String,
    seed: Option<u64>,
}

/// The cell of one combination: the base config with the combination's options set. `dir`
/// is the sweep file's directory, where its traces are; `traces` reads each one once.
pub(super) fn cell(
    file: &SweepFile,
    dir: &Path,
    combo: &Combo,
    traces: &mut TraceCache,
) -> Result<Cell, CellError> {
    let settings = settings(file, combo)?;
    let mut setup = recorded(&settings);
    let config: ConfigFile = toml::Value::Table(settings.table.clone())
        .try_into()
        .map_err(|e| options_error(combo, e))?;
    let grid_workload = refuse_unused(combo, &settings)?;
    let mut device = config::device_spec(&Default::default(), &config.device)?;
    let options = ftl_options(combo, &config)?;
    let input;
    let source = if settings.trace == "builtin" {
        let workload =
            config::workload_spec(&grid_workload, &config.workload, device.capacity_bytes)
                .map_err(|e| options_error(combo, e))?;
        input = workload.canonical();
        Source::Workload(workload)
    } else {
        let trace = TraceInput {
            path: dir.join(&settings.trace),
            config: &config,
        };
        let (prepared, reading) = trace.read(&mut device, traces)?;
        let digest = format!("{:032x}", prepared.digest);
        input = format!("trace {digest} {reading}");
        setup.insert("trace content".to_string(), digest);
        Source::Trace(prepared)
    };
    let spec = RunSpec {
        label: crate::compare::label(settings.kind, &options),
        ftl: settings.kind,
        options,
        device,
        precondition: config::precondition(&Default::default(), &config.run),
        seed: settings
            .seed
            .unwrap_or_else(|| config::seed(&Default::default(), &config.run)),
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
            run: super::run_digest(&spec, &input),
            settings: setup,
        },
        spec,
        source,
    })
}

/// The cell's grid values, `ftl=page, device.op=0.07`, as errors name a cell.
pub(super) fn describe(combo: &Combo) -> String {
    combo
        .iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A problem with the options of the cell made of `combo`.
fn options_error(combo: &Combo, problem: impl ToString) -> CellError {
    CellError::Options {
        cell: describe(combo),
        problem: problem.to_string(),
    }
}

/// The base config with `combo`'s options set, and the FTL, trace and seed it names.
fn settings(file: &SweepFile, combo: &Combo) -> Result<Settings, CellError> {
    let mut settings = Settings {
        table: file.base.clone(),
        kind: FtlKind::Page,
        trace: "builtin".to_string(),
        seed: None,
    };
    for (name, value) in combo {
        match name.as_str() {
            "ftl" => {
                settings.kind = value_text(value)
                    .parse()
                    .map_err(|e: String| CellError::Grid(format!("grid ftl: {e}")))?
            }
            "trace" => settings.trace = value_text(value),
            "seed" => settings.seed = Some(seed_of(value).map_err(CellError::Grid)?),
            dotted => {
                let (section, option) = dotted.split_once('.').ok_or_else(|| {
                    CellError::Grid(format!(
                        "grid key {dotted:?} is neither ftl, trace, seed nor section.option"
                    ))
                })?;
                let section_table = settings
                    .table
                    .entry(section)
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                    .as_table_mut()
                    .ok_or_else(|| CellError::Grid(format!("base.{section} is not a table")))?;
                section_table.insert(option.to_string(), value.clone());
            }
        }
    }
    Ok(settings)
}

/// What the cell runs, recorded beside its result: the settings it is made from (the base's
/// and the grid's, as the file spells them); the cell adds its trace's content.
fn recorded(settings: &Settings) -> BTreeMap<String, String> {
    let mut setup = BTreeMap::new();
    for (section, options) in &settings.table {
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
    setup.insert("ftl".to_string(), settings.kind.to_string());
    setup.insert("trace".to_string(), settings.trace.clone());
    if let Some(seed) = settings.seed {
        setup.insert("seed".to_string(), seed.to_string());
    }
    setup
}

/// Refuse the grid's own options that would do nothing in this cell, and return its
/// workload options. The grid's workload and trace options play the command line's part:
/// one that would do nothing in its cell (a trace option over the built-in workload,
/// `theta` of a hot/cold workload) is refused, since every cell would come out the same.
/// The base may hold options for several kinds of cell.
fn refuse_unused(combo: &Combo, settings: &Settings) -> Result<WorkloadSection, CellError> {
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
        .map_err(|e| options_error(combo, e))?;
    let grid_trace: TraceSection = grid_section("trace")
        .try_into()
        .map_err(|e| options_error(combo, e))?;
    let grid_ftl: FtlSection = grid_section("ftl")
        .try_into()
        .map_err(|e| options_error(combo, e))?;
    let kind = settings.kind;
    let (unused, section, what) = if settings.trace == "builtin" {
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
        unused_ftl_options(&grid_ftl, &[kind])
            .into_iter()
            .map(|(names, ftls)| (names, "ftl", format!("{ftls}, and the cell runs {kind}"))),
    );
    let problems: Vec<String> = unused
        .filter(|(names, _, _)| !names.is_empty())
        .map(|(names, section, what)| unused_options(&keys(section, &names), &what))
        .collect();
    if !problems.is_empty() {
        return Err(options_error(combo, problems.join("; ")));
    }
    Ok(grid_workload)
}

/// The grid keys of flags: `--log-blocks` of `ftl` is `ftl.log_blocks`.
fn keys(section: &str, flags: &[&str]) -> Vec<String> {
    flags
        .iter()
        .map(|flag| {
            format!(
                "{section}.{}",
                flag.trim_start_matches("--").replace('-', "_")
            )
        })
        .collect()
}

/// The cell's FTL options: one value each, since a cell runs one FTL.
fn ftl_options(combo: &Combo, config: &ConfigFile) -> Result<FtlOptions, CellError> {
    // A list (`"ftl.gc" = ["greedy,fifo"]`, `gc = "greedy,fifo"` in the base) ran its first
    // value under an id naming them all.
    let listed = keys(
        "ftl",
        &config::listed_ftl_options(&Default::default(), &config.ftl),
    );
    if !listed.is_empty() {
        return Err(options_error(
            combo,
            format!(
                "{} {} several values, and a cell runs one FTL: make them grid values \
                 (\"ftl.gc\" = [\"greedy\", \"fifo\"])",
                listed.join(", "),
                if listed.len() == 1 { "has" } else { "have" }
            ),
        ));
    }
    let (policies, mut options) = config::ftl_options(&Default::default(), &config.ftl);
    if let Some(&policy) = policies.first() {
        options.page.gc_policy = policy;
    }
    Ok(options)
}

/// A cell's trace: any trace format, read once per sweep; the device is sized to it unless
/// the cell gives a capacity, as `replay --trace` does.
struct TraceInput<'a> {
    path: PathBuf,
    config: &'a ConfigFile,
}

impl TraceInput<'_> {
    /// The trace prepared for `device` (sized to it unless the config gives a capacity),
    /// and how it was read, as text.
    fn read(
        &self,
        device: &mut DeviceSpec,
        traces: &mut TraceCache,
    ) -> Result<(Arc<PreparedTrace>, String), CellError> {
        let (options, mapping) = config::trace_options(&Default::default(), &self.config.trace);
        let block = device.block_bytes()?;
        // One file however it is spelt (`t.csv`, `./t.csv`, a link): read once, and its
        // cells compared as one input.
        let file = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let reading = format!("{options:?} {mapping:?}");
        let key = (file, reading.clone(), block);
        let prepared = match traces.get(&key) {
            Some(prepared) => prepared.clone(),
            None => {
                let prepared = Arc::new(PreparedTrace::prepare(
                    &self.path, &options, mapping, block,
                )?);
                traces.insert(key, prepared.clone());
                prepared
            }
        };
        if self.config.device.capacity.is_none() {
            *device = device.sized_for(&prepared)?;
        }
        Ok((prepared, reading))
    }
}
