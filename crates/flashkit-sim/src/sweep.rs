//! Sweeps: many runs on every core, each result saved the moment it finishes.
//!
//! A sweep is a list of [`Cell`]s, each a complete [`RunSpec`] and [`Source`] with the grid
//! parameters that produced it. [`run_cell`] runs one into a [`CellResult`]; the caller runs
//! them on its workers (flashkit-lab's executor) and saves each result as it finishes, so an
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
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    let written = File::create(&temporary)
        .and_then(|mut out| out.write_all(&text).and_then(|()| out.sync_data()))
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(error) = written {
        // A full disk must not leave the temporary behind.
        let _ = std::fs::remove_file(&temporary);
        return Err(io(error));
    }
    Ok(())
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

    /// The result of a cell that failed with `error`.
    pub fn failed(cell: &Cell, error: String) -> CellResult {
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

/// Run one cell: its result, finished or failed (the run's error as its message).
pub fn run_cell(cell: &Cell, progress: &dyn Progress) -> CellResult {
    match run(&cell.spec, &cell.source, progress) {
        Ok(outcome) => CellResult::finished(cell, &outcome.report, outcome.wall),
        Err(error) => CellResult::failed(cell, error.to_string()),
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
    /// Bytes of the file up to the end of its last whole line (all of it, unless a torn
    /// line was dropped).
    pub whole_bytes: u64,
}

impl ResultStore {
    /// Open `path` for appending, reading what it already holds. `fresh` empties it first.
    ///
    /// What is recorded is never rewritten: a torn last line is cut off (which needs no
    /// space, so a full disk cannot lose a result here), and the rest stays byte for byte.
    pub fn open(path: &Path, fresh: bool) -> Result<(ResultStore, Existing), SimError> {
        let io = |e: std::io::Error| SimError::Io(format!("{}: {e}", path.display()));
        let existing = if fresh || !path.exists() {
            Existing::default()
        } else {
            read_results(path)?
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        // Cut a torn line off, so that it never sits before new results (`fresh` empties
        // the file: nothing of it is whole).
        if file.metadata().map_err(io)?.len() != existing.whole_bytes {
            file.set_len(existing.whole_bytes).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
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

/// Read every result of a results file. A line without its newline at the end is torn (a
/// result is written with its newline in one write; what a killed process left may parse
/// all the same, and the next result would be glued onto it): it is dropped, and
/// [`Existing::whole_bytes`] says where it starts. Any other malformed line is an error
/// naming the file and line.
pub fn read_results(path: &Path) -> Result<Existing, SimError> {
    let raw = std::fs::read(path).map_err(|e| SimError::Io(format!("{}: {e}", path.display())))?;
    let whole = raw.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
    let mut existing = Existing {
        whole_bytes: whole as u64,
        dropped_partial_line: !raw[whole..].trim_ascii().is_empty(),
        ..Existing::default()
    };
    for (number, line) in raw[..whole].split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        let result = std::str::from_utf8(line)
            .map_err(|e| e.to_string())
            .and_then(|line| serde_json::from_str::<CellResult>(line).map_err(|e| e.to_string()))
            .map_err(|e| {
                SimError::Io(format!(
                    "{}: line {}: not a sweep result: {e}",
                    path.display(),
                    number + 1
                ))
            })?;
        existing.results.push(result);
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
        // A record that cannot be read is an error, not an older directory.
        let error = read_setups(dir.path()).expect_err("a directory");
        assert!(
            error
                .to_string()
                .starts_with(&dir.path().display().to_string()),
            "{error}"
        );
    }

    /// A cell that runs becomes a finished result: its id, parameters and label, every
    /// number of its report's table by key (text left out), the report itself and its wall
    /// clock. One that cannot run becomes a failed result with the run's error.
    #[test]
    fn a_cell_runs_into_a_finished_or_a_failed_result() {
        use crate::run::DeviceSpec;
        use flashkit_ftl::{FtlKind, FtlOptions};
        use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};
        let params: BTreeMap<String, String> = [("ftl".to_string(), "page".to_string())].into();
        let spec = RunSpec {
            label: "page/greedy".into(),
            ftl: FtlKind::Page,
            options: FtlOptions::default(),
            device: DeviceSpec {
                capacity_bytes: 64 << 20,
                ..DeviceSpec::default()
            },
            precondition: None,
            seed: 3,
        };
        let workload = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 4096 },
            300,
            64 << 20,
        );
        let cell = Cell {
            id: Cell::id_of(&params),
            params: params.clone(),
            spec: spec.clone(),
            source: Source::Workload(workload),
            setup: Setup::default(),
        };
        let done = run_cell(&cell, &crate::NoProgress);
        assert!(done.is_ok(), "{:?}", done.error);
        assert_eq!(
            (
                done.id.as_str(),
                &done.params,
                done.status.as_str(),
                &done.error
            ),
            ("ftl=page", &params, "ok", &None)
        );
        assert_eq!(done.label, "page/greedy");
        let report = run(&spec, &cell.source, &crate::NoProgress)
            .expect("runs")
            .report;
        let numbers: Vec<(String, f64)> = report
            .metrics()
            .into_iter()
            .filter_map(|m| match m.value {
                MetricValue::Count(n) => Some((m.key, n as f64)),
                MetricValue::Real(x) => Some((m.key, x)),
                _ => None,
            })
            .collect();
        assert_eq!(done.metrics, numbers.into_iter().collect());
        assert_eq!(done.metrics["requests"], 300.0);
        assert!(!done.metrics.contains_key("state_hash"));
        assert_eq!(
            done.report,
            Some(serde_json::to_value(&report).expect("json"))
        );
        assert!(done.wall.is_some());

        let mut bad = cell.clone();
        bad.spec.device.preset = "floppy".into();
        let failed = run_cell(&bad, &crate::NoProgress);
        assert!(!failed.is_ok());
        assert_eq!(failed.status, "failed");
        assert!(
            failed
                .error
                .as_deref()
                .is_some_and(|e| e.contains("floppy")),
            "{failed:?}"
        );
        assert_eq!(
            (failed.label.as_str(), failed.id.as_str()),
            ("page/greedy", "ftl=page")
        );
        assert!(failed.metrics.is_empty() && failed.report.is_none() && failed.wall.is_none());
    }

    /// A cell's id: its parameters in name order, `name=value` joined by `;`.
    #[test]
    fn a_cell_id_lists_its_parameters_in_name_order() {
        let params: BTreeMap<String, String> = [("op", "0.07"), ("ftl", "page"), ("b", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(Cell::id_of(&params), "b=;ftl=page;op=0.07");
        assert_eq!(Cell::id_of(&BTreeMap::new()), "");
    }

    /// Every finite float goes through a results line and back to the same bits, and the
    /// line is rewritten byte for byte (a resumed sweep rewrites what it read). Found by an
    /// outside bad-input hunt: without serde_json's `float_roundtrip`, parsing was up to 1
    /// ulp off (0.47915742374995507 read back as 0.479157423749955).
    #[test]
    fn every_float_survives_a_write_and_a_read() {
        use flashkit_core::{SimRng, SimRngExt};
        use rand::Rng;
        let mut rng = SimRng::for_stream(1, "float round trip");
        let mut values = vec![
            0.47915742374995507,
            0.1,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            -0.0,
            5e-324,
        ];
        while values.len() < 20_000 {
            let x = f64::from_bits(rng.random());
            if x.is_finite() {
                values.push(x);
            }
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("results.jsonl");
        let mut file = File::create(&path).expect("create");
        let results: Vec<CellResult> = values
            .chunks(1000)
            .enumerate()
            .map(|(i, chunk)| CellResult {
                id: i.to_string(),
                params: BTreeMap::new(),
                status: "ok".into(),
                error: None,
                metrics: chunk
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| (k.to_string(), x))
                    .collect(),
                label: "page".into(),
                report: Some(serde_json::json!({ "values": chunk })),
                wall: None,
            })
            .collect();
        for result in &results {
            write_line(&mut file, result).expect("write");
        }
        drop(file);
        let read = read_results(&path).expect("read").results;
        let bits = |r: &CellResult| -> Vec<u64> {
            let metrics = r.metrics.values().map(|x| x.to_bits());
            let report = r.report.as_ref().expect("report")["values"]
                .as_array()
                .expect("array")
                .iter()
                .map(|v| v.as_f64().expect("a number").to_bits());
            metrics.chain(report).collect()
        };
        for (written, read) in results.iter().zip(&read) {
            assert_eq!(bits(written), bits(read), "cell {}", written.id);
        }
        let again = dir.path().join("again.jsonl");
        let mut file = File::create(&again).expect("create");
        for result in &read {
            write_line(&mut file, result).expect("write");
        }
        drop(file);
        assert!(std::fs::read(&path).expect("a") == std::fs::read(&again).expect("b"));
    }

    fn result(id: &str) -> CellResult {
        CellResult {
            id: id.into(),
            params: BTreeMap::new(),
            status: "ok".into(),
            error: None,
            metrics: BTreeMap::from([("wa".to_string(), 0.47915742374995507)]),
            label: "page".into(),
            report: None,
            wall: None,
        }
    }

    /// Reopening a results file keeps every whole line byte for byte and cuts a torn one
    /// (it rewrote the file, which a full disk turned into a lost file of results); a last
    /// line that parses but lacks its newline is torn too (the next result was glued on).
    #[test]
    fn reopening_keeps_whole_lines_and_cuts_a_torn_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("results.jsonl");
        let whole = format!(
            "{}\n\n{}\n",
            serde_json::to_string(&result("a")).expect("json"),
            serde_json::to_string(&result("b")).expect("json")
        );
        let c = serde_json::to_string(&result("c")).expect("json");
        for torn in ["", "  ", &c[..20], &c] {
            std::fs::write(&path, format!("{whole}{torn}")).expect("write");
            let (mut store, existing) = ResultStore::open(&path, false).expect("open");
            let ids: Vec<&str> = existing.results.iter().map(|r| r.id.as_str()).collect();
            assert_eq!(ids, ["a", "b"], "{torn:?}");
            let recorded: Vec<String> = recorded_ids(&existing).into_iter().collect();
            assert_eq!(recorded, ["a", "b"]);
            assert_eq!(existing.dropped_partial_line, !torn.trim().is_empty());
            store.append(&result("d")).expect("append");
            let expected = format!(
                "{whole}{}\n",
                serde_json::to_string(&result("d")).expect("json")
            );
            assert_eq!(std::fs::read_to_string(&path).expect("read"), expected);
        }
        let (_, existing) = ResultStore::open(&path, true).expect("fresh");
        assert!(existing.results.is_empty());
        assert_eq!(std::fs::read(&path).expect("read"), b"");
        std::fs::write(&path, format!("{whole}not json\n{whole}")).expect("write");
        let error = read_results(&path).expect_err("malformed").to_string();
        assert!(error.contains("line 4: not a sweep result"), "{error}");
    }
}
