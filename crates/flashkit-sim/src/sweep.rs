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
