//! Sweeps: many runs on every core, each result saved the moment it finishes.
//!
//! A sweep is a list of [`Cell`]s, each a complete [`RunSpec`] and [`Source`] with the grid
//! parameters that produced it. [`execute`] runs them on `jobs` worker threads and hands every
//! [`CellResult`] back, in completion order, to the caller's callback (which saves it), so an
//! interrupted sweep loses at most the runs in flight. A run that fails, or panics, becomes a
//! failed result with its error; the others carry on.
//!
//! [`ResultStore`] is the on-disk form: one JSON object per line (`results.jsonl`), appended
//! and flushed per result. Reopening a store reads the finished cell ids so that a resumed
//! sweep runs only what is missing; a torn last line (the process was killed mid-write) is
//! dropped with a note rather than failing the resume.
//!
//! Beside it, `cells.json` says what each cell ran (its [`Setup`]): a resumed sweep compares
//! it with the cells of the experiment file as it is now, so that results made under other
//! settings are refused rather than mixed with new ones.

use crate::metrics::{MetricValue, RunReport, WallClock};
use crate::run::{RunSpec, Source};
use crate::{Progress, SimError, run};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;

/// One run of a sweep.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Stable identifier (the parameters, canonically ordered).
    pub id: String,
    /// Grid parameters of this cell, by name.
    pub params: BTreeMap<String, String>,
    /// What to run.
    pub spec: RunSpec,
    /// On what.
    pub source: Source,
    /// What it runs, as recorded beside its result (see [`Setup`]).
    pub setup: Setup,
}

/// What a cell runs, recorded beside its result so that a resumed sweep can tell a result of
/// this experiment from one made under other settings (another `[base]`, a trace file whose
/// content changed): the cell id names only the grid values.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setup {
    /// A digest of everything that decides the run (the resolved spec and its input): two
    /// setups with one digest are one run, however their settings are spelt.
    pub run: String,
    /// The settings the run was made from, by name, as text: what a difference in `run` is
    /// explained by.
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
}

impl Setup {
    /// Whether `self` and `other` run the same.
    pub fn same_run(&self, other: &Setup) -> bool {
        self.run == other.run
    }

    /// The settings that differ from `self` in `now`, one `name: X before, Y now` each
    /// (`not set` for a setting one of them lacks), in name order.
    pub fn differences(&self, now: &Setup) -> Vec<String> {
        let names: BTreeSet<&String> = self.settings.keys().chain(now.settings.keys()).collect();
        let shown = |value: Option<&String>| value.map_or_else(|| "not set".into(), Clone::clone);
        names
            .into_iter()
            .filter(|name| self.settings.get(*name) != now.settings.get(*name))
            .map(|name| {
                format!(
                    "{name}: {} before, {} now",
                    shown(self.settings.get(name)),
                    shown(now.settings.get(name))
                )
            })
            .collect()
    }
}

/// The file beside a sweep's results that says what each cell ran, by cell id.
#[derive(Debug, Default, Deserialize)]
struct SetupFile {
    cells: BTreeMap<String, Setup>,
}

/// Read what each cell recorded in a sweep directory ran (`cells.json`), by cell id; `None`
/// when there is no such file (a directory written before flashkit recorded it).
pub fn read_setups(path: &Path) -> Result<Option<BTreeMap<String, Setup>>, SimError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(SimError::Io(format!("{}: {e}", path.display()))),
    };
    let file: SetupFile = serde_json::from_str(&text).map_err(|e| {
        SimError::Io(format!(
            "{}: not a record of a sweep's cells: {e}",
            path.display()
        ))
    })?;
    Ok(Some(file.cells))
}

/// Write what each cell runs, by cell id, replacing the file at once (a temporary file
/// renamed over it) so that a kill never leaves half a record.
pub fn write_setups(path: &Path, cells: &BTreeMap<String, Setup>) -> Result<(), SimError> {
    let io = |e: std::io::Error| SimError::Io(format!("{}: {e}", path.display()));
    let file = serde_json::json!({ "cells": cells });
    let mut text = serde_json::to_vec_pretty(&file).map_err(|e| io(std::io::Error::other(e)))?;
    text.push(b'\n');
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut out = File::create(&temporary).map_err(io)?;
    out.write_all(&text)
        .and_then(|()| out.sync_data())
        .map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)
}

impl Cell {
    /// The canonical id of a parameter set: `name=value` pairs in name order, `;`-separated.
    pub fn id_of(params: &BTreeMap<String, String>) -> String {
        params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }
}

/// The outcome of one cell, as stored.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CellResult {
    /// The cell's id.
    pub id: String,
    /// Its parameters.
    pub params: BTreeMap<String, String>,
    /// `"ok"` or `"failed"`.
    pub status: String,
    /// The error of a failed run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// Flat metrics of a finished run (numbers), by key.
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
    /// Run label (scheme name).
    #[serde(default)]
    pub label: String,
    /// The full report of a finished run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub report: Option<serde_json::Value>,
    /// Wall-clock figures of a finished run.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub wall: Option<WallClock>,
}

impl CellResult {
    fn finished(cell: &Cell, report: &RunReport, wall: WallClock) -> CellResult {
        let metrics = report
            .metrics()
            .into_iter()
            .filter_map(|m| match m.value {
                MetricValue::Count(n) => Some((m.key, n as f64)),
                MetricValue::Real(x) => Some((m.key, x)),
                MetricValue::Text(_) | MetricValue::Missing => None,
            })
            .collect();
        CellResult {
            id: cell.id.clone(),
            params: cell.params.clone(),
            status: "ok".into(),
            error: None,
            metrics,
            label: report.label.clone(),
            report: serde_json::to_value(report).ok(),
            wall: Some(wall),
        }
    }

    fn failed(cell: &Cell, error: String) -> CellResult {
        CellResult {
            id: cell.id.clone(),
            params: cell.params.clone(),
            status: "failed".into(),
            error: Some(error),
            metrics: BTreeMap::new(),
            label: cell.spec.label.clone(),
            report: None,
            wall: None,
        }
    }

    /// Whether the run finished.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// Progress of one worker, made per run by the caller.
pub type ProgressFactory<'a> = dyn Fn(usize, &Cell) -> Box<dyn Progress + Send> + Sync + 'a;

/// Run `cells` on `jobs` threads; `done` receives each result as it finishes (on the calling
/// thread) together with the worker that ran it.
pub fn execute(
    cells: Vec<Cell>,
    jobs: usize,
    progress: &ProgressFactory<'_>,
    mut done: impl FnMut(usize, CellResult),
) {
    let queue = Mutex::new(cells.into_iter().collect::<VecDeque<_>>());
    let (sender, receiver) = mpsc::channel();
    std::thread::scope(|scope| {
        for worker in 0..jobs.max(1) {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || {
                loop {
                    let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                    let Some(cell) = next else { break };
                    let result = run_cell(&cell, progress(worker, &cell));
                    if sender.send((worker, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for (worker, result) in receiver {
            done(worker, result);
        }
    });
}

fn run_cell(cell: &Cell, mut progress: Box<dyn Progress + Send>) -> CellResult {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(&cell.spec, &cell.source, progress.as_mut())
    }));
    match outcome {
        Ok(Ok(outcome)) => CellResult::finished(cell, &outcome.report, outcome.wall),
        Ok(Err(error)) => CellResult::failed(cell, error.to_string()),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            CellResult::failed(
                cell,
                format!("the run panicked (a flashkit bug): {message}"),
            )
        }
    }
}

/// The JSON-lines file of a sweep's results.
pub struct ResultStore {
    path: PathBuf,
    file: File,
}

/// What reopening a store found.
#[derive(Debug, Default)]
pub struct Existing {
    /// Results already recorded.
    pub results: Vec<CellResult>,
    /// A torn last line was dropped (the previous run was interrupted mid-write).
    pub dropped_partial_line: bool,
}

impl ResultStore {
    /// Open `path` for appending, reading what it already holds. `fresh` empties it first.
    pub fn open(path: &Path, fresh: bool) -> Result<(ResultStore, Existing), SimError> {
        let io = |e: std::io::Error| SimError::Io(format!("{}: {e}", path.display()));
        let existing = if fresh || !path.exists() {
            Existing::default()
        } else {
            read_results(path)?
        };
        // Rewrite what is valid, so that a torn line never sits before new results.
        let mut file = File::create(path).map_err(io)?;
        for result in &existing.results {
            write_line(&mut file, result).map_err(io)?;
        }
        file.sync_data().map_err(io)?;
        let file = OpenOptions::new().append(true).open(path).map_err(io)?;
        Ok((
            ResultStore {
                path: path.to_path_buf(),
                file,
            },
            existing,
        ))
    }

    /// Append one result and flush it to the file.
    pub fn append(&mut self, result: &CellResult) -> Result<(), SimError> {
        write_line(&mut self.file, result)
            .and_then(|()| self.file.flush())
            .map_err(|e| SimError::Io(format!("{}: {e}", self.path.display())))
    }
}

fn write_line(file: &mut File, result: &CellResult) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(result).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // One write call per line: a kill leaves at most one torn line at the end.
    file.write_all(&line)
}

/// Read every result of a results file. A malformed line other than a torn last one is an
/// error naming the file and line.
pub fn read_results(path: &Path) -> Result<Existing, SimError> {
    let file = File::open(path).map_err(|e| SimError::Io(format!("{}: {e}", path.display())))?;
    let mut lines: Vec<(usize, String)> = Vec::new();
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let line = line
            .map_err(|e| SimError::Io(format!("{}: line {}: {e}", path.display(), number + 1)))?;
        if !line.trim().is_empty() {
            lines.push((number + 1, line));
        }
    }
    let raw = std::fs::read(path).map_err(|e| SimError::Io(format!("{}: {e}", path.display())))?;
    let ends_cleanly = raw.last().is_none_or(|&b| b == b'\n');
    let mut existing = Existing::default();
    let count = lines.len();
    for (i, (number, line)) in lines.into_iter().enumerate() {
        match serde_json::from_str::<CellResult>(&line) {
            Ok(result) => existing.results.push(result),
            Err(_) if i + 1 == count && !ends_cleanly => existing.dropped_partial_line = true,
            Err(e) => {
                return Err(SimError::Io(format!(
                    "{}: line {number}: not a sweep result: {e}",
                    path.display()
                )));
            }
        }
    }
    Ok(existing)
}

/// Ids of the results already recorded (finished or failed).
pub fn recorded_ids(existing: &Existing) -> BTreeSet<String> {
    existing.results.iter().map(|r| r.id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(run: &str, settings: &[(&str, &str)]) -> Setup {
        Setup {
            run: run.into(),
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn setups_compare_by_run_and_explain_by_settings() {
        let before = setup(
            "a",
            &[
                ("device.capacity", "\"64M\""),
                ("workload.requests", "\"1k\""),
            ],
        );
        let respelt = setup(
            "a",
            &[
                ("device.capacity", "\"64MiB\""),
                ("workload.requests", "\"1k\""),
            ],
        );
        assert!(before.same_run(&respelt), "one run however it is spelt");
        let now = setup(
            "b",
            &[
                ("device.capacity", "\"64M\""),
                ("workload.requests", "\"5k\""),
                ("device.op", "0.2"),
            ],
        );
        assert!(!before.same_run(&now));
        assert_eq!(
            before.differences(&now),
            [
                "device.op: not set before, 0.2 now",
                "workload.requests: \"1k\" before, \"5k\" now"
            ]
        );
        assert!(before.differences(&before).is_empty());
    }

    #[test]
    fn setups_are_written_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cells.json");
        assert!(
            read_setups(&path).expect("no file").is_none(),
            "an older directory"
        );
        let cells: BTreeMap<String, Setup> = [
            ("ftl=page".to_string(), setup("a", &[("ftl", "page")])),
            ("ftl=vet".to_string(), setup("b", &[("ftl", "vet")])),
        ]
        .into_iter()
        .collect();
        write_setups(&path, &cells).expect("write");
        assert_eq!(read_setups(&path).expect("read"), Some(cells));
        std::fs::write(&path, "{\"cells\": 3}").expect("write");
        let error = read_setups(&path).expect_err("not a record");
        assert!(
            error
                .to_string()
                .contains("not a record of a sweep's cells"),
            "{error}"
        );
    }
}
