//! Tables on stdout, JSON and CSV files.

use anyhow::{Context, Result};
use flashkit_report::Table;
use flashkit_sim::{MetricValue, RunOutcome};
use serde::Serialize;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

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

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value)
        .with_context(|| format!("writing {}", path.display()))?;
    use std::io::Write;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .with_context(|| format!("writing {}", path.display()))
}

pub fn write_csv(path: &Path, table: &Table) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
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
