//! Tables on stdout, JSON and CSV files.

use anyhow::{Context, Result, anyhow};
use flashkit_core::same_file;
use flashkit_report::Table;
use flashkit_sim::{MetricValue, RunOutcome};
use serde::Serialize;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// Runs as rows (CSV layout): one column per metric key, in first-seen order.
pub fn runs_table(outcomes: &[RunOutcome], human: bool) -> Table {
    let mut keys: Vec<(String, String)> = Vec::new();
    for outcome in outcomes {
        for metric in outcome.report.metrics() {
            if !keys.iter().any(|(key, _)| *key == metric.key) {
                keys.push((metric.key, metric.label));
            }
        }
    }
    let header = std::iter::once(if human {
        "metric".to_string()
    } else {
        "run".to_string()
    })
    .chain(
        keys.iter()
            .map(|(key, label)| if human { label.clone() } else { key.clone() }),
    );
    let mut table = Table::new(header);
    for outcome in outcomes {
        let metrics = outcome.report.metrics();
        let mut row = vec![outcome.report.label.clone()];
        for (key, _) in &keys {
            let value = metrics
                .iter()
                .find(|m| m.key == *key)
                .map_or(MetricValue::Missing, |m| m.value.clone());
            row.push(value.render());
        }
        table.push(row);
    }
    table
}

/// The files this process reads as input (traces, configuration, records, results), so
/// that no output replaces one: an output is created empty before it is written, and a
/// `--csv` or `-o` that names the trace would otherwise lose it.
static INPUTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Remember `path` as an input of this run (see [`check_output`]).
pub fn note_input(path: &Path) {
    let mut inputs = INPUTS.lock().unwrap_or_else(PoisonError::into_inner);
    if !inputs.iter().any(|input| input == path) {
        inputs.push(path.to_path_buf());
    }
}

/// Refuse an output path that is one of the run's inputs (the same path, or a link to
/// it). Commands call it before their work, so that the mistake costs nothing, and every
/// writer here calls it again before it creates the file.
pub fn check_output(path: &Path) -> Result<()> {
    let inputs = INPUTS.lock().unwrap_or_else(PoisonError::into_inner);
    match inputs.iter().find(|input| same_file(input, path)) {
        Some(input) if input.as_path() == path => Err(anyhow!(
            "{} is an input of this run: writing it would replace it; give the output another path",
            path.display()
        )),
        Some(input) => Err(anyhow!(
            "{} is the input {} (a link or another spelling of its path): writing it would \
             replace it; give the output another path",
            path.display(),
            input.display()
        )),
        None => Ok(()),
    }
}

/// [`check_output`] for each path given.
pub fn check_outputs<'a>(paths: impl IntoIterator<Item = Option<&'a Path>>) -> Result<()> {
    paths.into_iter().flatten().try_for_each(check_output)
}

/// Create (or truncate) an output file, unless it is an input.
pub fn create(path: &Path) -> Result<File> {
    check_output(path)?;
    File::create(path).with_context(|| format!("cannot create {}", path.display()))
}

/// Write a whole output file, unless it is an input.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    check_output(path)?;
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let file = create(path)?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value)
        .with_context(|| format!("writing {}", path.display()))?;
    use std::io::Write;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .with_context(|| format!("writing {}", path.display()))
}

pub fn write_csv(path: &Path, table: &Table) -> Result<()> {
    let file = create(path)?;
    table
        .write_csv(BufWriter::new(file))
        .with_context(|| format!("writing {}", path.display()))
}

/// The JSON document of a set of runs.
#[derive(Serialize)]
pub struct RunsDocument<'a> {
    pub runs: Vec<&'a flashkit_sim::RunReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_clock: Option<Vec<(&'a str, flashkit_sim::WallClock)>>,
}

pub fn runs_document(outcomes: &[RunOutcome], wall_clock: bool) -> RunsDocument<'_> {
    RunsDocument {
        runs: outcomes.iter().map(|o| &o.report).collect(),
        wall_clock: wall_clock.then(|| {
            outcomes
                .iter()
                .map(|o| (o.report.label.as_str(), o.wall))
                .collect()
        }),
    }
}

/// One line per run: how long the replay took on this machine.
pub fn wall_clock_lines(outcomes: &[RunOutcome]) -> String {
    let mut text = String::new();
    for o in outcomes {
        text.push_str(&format!(
            "wall clock {}: replay {:.2} s ({:.0} requests/s, {:.0} host pages written/s), precondition {:.2} s\n",
            o.report.label,
            o.wall.replay_seconds,
            o.wall.requests_per_second,
            o.wall.host_pages_written_per_second,
            o.wall.precondition_seconds
        ));
    }
    text
}
