//! Results in, a report out: the figures and the table of a sweep's results, or of the runs of
//! a `compare` or `replay` JSON document, and the self-contained HTML page that shows them.
//!
//! [`Results::load`] reads a sweep directory (or its `results.jsonl`) or a run document;
//! [`Report::of`] chooses what to draw and builds the [`Report`]: its figures (each a
//! [`Chart`] and its SVG), the table of every run and the page. A front end writes the
//! files ([`Report::html`], [`Figure::svg`] under [`Figure::file_name`]). Figures:
//! - every numeric swept parameter against the key metrics, a line per scheme (the other
//!   swept parameters, seeds averaged), log axes where the data spans decades;
//! - when nothing numeric was swept, the key metrics as bars per run;
//! - the erase-count distribution (wear) and the write-latency distribution as CDFs, one line
//!   per scheme (its run at the middle of each swept parameter);
//!
//! and a sortable table of every run, failed ones with their error.

use crate::repro::Chart;
use flashkit_core::units::parse_size;
use flashkit_report::Table;
use flashkit_report::html::{Block, HtmlReport, Section};
use flashkit_report::plot::{Axis, BarChart, Legend, LineChart, Scale, Series, ccdf, cdf};
use flashkit_sim::SimError;
use flashkit_sim::sweep::{CellResult, read_results};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::path::{Path, PathBuf};

/// Metrics plotted by default, with axis labels and units.
pub const KEY_METRICS: [(&str, &str); 6] = [
    ("flash_erases", "block erases"),
    (
        "write_amplification",
        "write amplification (flash programs per host page)",
    ),
    ("elapsed_s", "simulated time (s)"),
    ("gc_pages_moved", "pages moved by GC"),
    ("write_p99_us", "write latency p99 (us)"),
    ("mapping_packed_bytes", "mapping memory, packed (bytes)"),
];

/// Why results could not be loaded or reported on.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// What was given is not results this module reads (a `reproduce --out` directory,
    /// another tool's JSON, a run document with a field missing): the caller's mistake.
    #[error("{0}")]
    NotResults(String),
    /// A file could not be read, or is not JSON.
    #[error("{what}")]
    Read {
        /// The file, and what went wrong with it (`cannot read r.json`).
        what: String,
        /// The cause.
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// A sweep's results file could not be read, or holds a line that is not a result.
    #[error(transparent)]
    Sweep(SimError),
    /// The results hold no run: the path as given.
    #[error("{} holds no results", .0.display())]
    Empty(PathBuf),
}

/// Results as loaded: a sweep's cells, or a run document's runs as cells.
#[derive(Clone, Debug)]
pub struct Results {
    /// The results: a sweep's in id order; a document's runs in its order, then the runs it
    /// records as failed.
    pub results: Vec<CellResult>,
    /// The path as given.
    pub path: PathBuf,
    /// The name of the directory or file, which a report's title names by default.
    pub name: String,
    /// The files the results are made of (a sweep directory's `results.csv` and
    /// `cells.json` beside the `results.jsonl` read): a front end should write none of its
    /// outputs over one (an `--html` over `cells.json` would break a resume).
    pub files: Vec<PathBuf>,
    /// Remarks on the input, one a line, for a front end to show (a torn last line left
    /// out).
    pub notes: Vec<String>,
}

impl Results {
    /// Read `path`: a sweep's directory or its `results.jsonl`, or the JSON document that
    /// `compare` and `replay` write with `--json`.
    pub fn load(path: &Path) -> Result<Results, ReportError> {
        let mut files = Vec::new();
        let jsonl = if path.is_dir() {
            let jsonl = path.join("results.jsonl");
            if !jsonl.exists() {
                // A `reproduce --out` directory, say: its figures are drawn already.
                return Err(ReportError::NotResults(format!(
                    "{} has no results.jsonl: report reads a sweep's directory or \
                     results.jsonl, or the --json of compare or replay (a `reproduce --out` \
                     directory holds its paper's figures already)",
                    path.display()
                )));
            }
            // The sweep's other files are inputs too: an --html over them would break a resume.
            files.extend(["results.csv", "cells.json"].map(|name| path.join(name)));
            jsonl
        } else {
            path.to_path_buf()
        };
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        files.push(jsonl.clone());
        let mut notes = Vec::new();
        let results = if jsonl.extension().is_some_and(|e| e == "jsonl") {
            let existing = read_results(&jsonl).map_err(ReportError::Sweep)?;
            if existing.dropped_partial_line {
                notes.push(format!(
                    "left out the torn last line of {} (a sweep still writing it, or one \
                     interrupted mid-write: `flashkit sweep --resume` runs that cell again)",
                    jsonl.display()
                ));
            }
            // In id order: the file holds them in the order the workers finished.
            let mut results = existing.results;
            results.sort_by(|a, b| a.id.cmp(&b.id));
            results
        } else {
            read_document(&jsonl)?
        };
        Ok(Results {
            results,
            path: path.to_path_buf(),
            name,
            files,
            notes,
        })
    }
}

/// The runs of a `--json` document of `compare` or `replay`, failed ones last.
fn read_document(path: &Path) -> Result<Vec<CellResult>, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportError::Read {
        what: format!("cannot read {}", path.display()),
        source: e.into(),
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| ReportError::Read {
        what: format!("{}: not JSON", path.display()),
        source: e.into(),
    })?;
    let runs = doc["runs"].as_array().ok_or_else(|| {
        ReportError::NotResults(format!(
            "{}: neither a sweep's results.jsonl nor a --json document with \"runs\"",
            path.display()
        ))
    })?;
    let mut results = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            result_of_run(run)
                .map_err(|e| ReportError::NotResults(format!("{}: runs[{i}]: {e}", path.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Runs that failed (`compare` records them beside the others) are shown as failed cells.
    if let Some(failed) = doc.get("failed") {
        let failed = failed.as_array().ok_or_else(|| {
            ReportError::NotResults(format!("{}: \"failed\" is not a list", path.display()))
        })?;
        for (i, run) in failed.iter().enumerate() {
            let (Some(label), Some(error)) = (run["label"].as_str(), run["error"].as_str()) else {
                return Err(ReportError::NotResults(format!(
                    "{}: failed[{i}]: not a {{\"label\", \"error\"}} object",
                    path.display()
                )));
            };
            results.push(CellResult {
                id: label.to_string(),
                params: BTreeMap::from([("run".to_string(), label.to_string())]),
                status: "failed".into(),
                error: Some(error.to_string()),
                metrics: BTreeMap::new(),
                label: label.to_string(),
                report: None,
                wall: None,
            });
        }
    }
    Ok(results)
}

/// A run of a `--json` document as a result whose only parameter is its label; a value that
/// is not a run report (a hand-edited file, another tool's JSON) is refused naming the field,
/// rather than drawn as a run with no figures.
fn result_of_run(run: &serde_json::Value) -> Result<CellResult, String> {
    let label = run["label"]
        .as_str()
        .ok_or("field label: missing or not a string (is this a run report?)")?
        .to_string();
    for field in ["programs", "erases"] {
        if !run["flash"][field].is_object() {
            return Err(format!("field flash.{field}: missing or not an object"));
        }
    }
    let mut metrics = BTreeMap::new();
    let total = |field: &str| -> f64 {
        ["host", "gc", "wear_leveling", "metadata"]
            .iter()
            .filter_map(|c| run["flash"][field][c].as_f64())
            .sum()
    };
    metrics.insert("flash_erases".into(), total("erases"));
    metrics.insert("flash_programs".into(), total("programs"));
    let numbers = [
        ("write_amplification", &run["write_amplification"]),
        ("gc_pages_moved", &run["ftl_stats"]["gc_pages_moved"]),
        (
            "mapping_packed_bytes",
            &run["mapping_memory"]["packed_bytes"],
        ),
    ];
    for (key, value) in numbers {
        if let Some(v) = value.as_f64() {
            metrics.insert(key.into(), v);
        }
    }
    if let Some(ns) = run["elapsed_ns"].as_f64() {
        metrics.insert("elapsed_s".into(), ns / 1e9);
    }
    if let Some(ns) = run["latency"]["write"]["p99_ns"].as_f64() {
        metrics.insert("write_p99_us".into(), ns / 1e3);
    }
    let params = BTreeMap::from([("run".to_string(), label.clone())]);
    Ok(CellResult {
        id: label.clone(),
        params,
        status: "ok".into(),
        error: None,
        metrics,
        label,
        report: Some(run.clone()),
        wall: None,
    })
}

/// A figure of a report: its caption, what it draws, and the chart drawn.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// The caption under it on the page.
    pub caption: String,
    /// The stem of its file name (`write-amplification-vs-device-op`).
    pub stem: String,
    /// What it draws.
    pub chart: Chart,
    /// The chart as SVG (a figure is in a report only when its chart draws).
    #[serde(skip)]
    pub svg: String,
}

impl Figure {
    /// The chart's figure, or `None` when it has nothing to draw.
    fn drawn(caption: String, stem: String, chart: Chart) -> Option<Figure> {
        let svg = chart.svg().ok()?;
        Some(Figure {
            caption,
            stem,
            chart,
            svg,
        })
    }

    /// The file name of the report's figure number `index` (from 0) with `extension`:
    /// `01-flash-erases-vs-device-op.svg`, so that the files list in the page's order.
    pub fn file_name(&self, index: usize, extension: &str) -> String {
        format!("{:02}-{}.{extension}", index + 1, self.stem)
    }
}

/// A report on some results: what the page says, its figures and its table of runs.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The page's title.
    pub title: String,
    /// Runs reported, failed ones included.
    pub runs: usize,
    /// Runs that failed.
    pub failed: usize,
    /// The parameters that take more than one value, seeds excluded.
    pub swept: Vec<String>,
    /// The figures, in the page's order.
    pub figures: Vec<Figure>,
    /// Every run: label, parameters, status, key metrics.
    pub table: Table,
}

impl Report {
    /// The report on `results`, titled `title` (by default "flashkit results: " and the
    /// results' name); [`ReportError::Empty`] when they hold no run.
    pub fn of(results: &Results, title: Option<&str>) -> Result<Report, ReportError> {
        if results.results.is_empty() {
            return Err(ReportError::Empty(results.path.clone()));
        }
        let title = title.map_or_else(
            || format!("flashkit results: {}", results.name),
            str::to_string,
        );
        Ok(Report::of_results(&results.results, title))
    }

    /// The report on `results`, titled `title`.
    pub fn of_results(results: &[CellResult], title: String) -> Report {
        let ok: Vec<&CellResult> = results.iter().filter(|r| r.is_ok()).collect();
        let swept = swept_dimensions(results);
        let mut figures = Vec::new();
        let numeric: Vec<&String> = swept.iter().filter(|d| is_numeric_dim(&ok, d)).collect();
        for dim in &numeric {
            for (metric, label) in KEY_METRICS {
                figures.extend(metric_against(&ok, &swept, dim, metric, label));
            }
        }
        if numeric.is_empty() {
            figures.extend(bars_per_run(&ok));
        }
        figures.extend(distribution_figures(&ok, &numeric));
        Report {
            title,
            runs: results.len(),
            failed: results.len() - ok.len(),
            swept,
            figures,
            table: runs_table(results),
        }
    }

    /// The page: a summary, the figures, the table of runs.
    pub fn page(&self) -> HtmlReport {
        let ok = self.runs - self.failed;
        let mut intro = vec![format!(
            "{} runs ({ok} finished, {} failed). Swept parameters: {}.",
            self.runs,
            self.failed,
            if self.swept.is_empty() {
                "none".to_string()
            } else {
                self.swept.join(", ")
            }
        )];
        intro.push("Simulated time and latency follow the serial cost model (reads, programs and erases times their latencies). Click a column header to sort.".into());
        let figure_blocks = self
            .figures
            .iter()
            .map(|f| Block::Figure {
                caption: f.caption.clone(),
                svg: f.svg.clone(),
                id: None,
            })
            .collect();
        HtmlReport {
            title: self.title.clone(),
            intro,
            sections: vec![
                Section {
                    heading: "Figures".into(),
                    blocks: figure_blocks,
                },
                Section {
                    heading: "Runs".into(),
                    blocks: vec![Block::Table(self.table.clone())],
                },
            ],
        }
    }

    /// The page as one self-contained HTML file.
    pub fn html(&self) -> String {
        self.page().render()
    }
}

/// Parameters that take more than one value, seeds excluded.
fn swept_dimensions(results: &[CellResult]) -> Vec<String> {
    let mut values: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for r in results {
        for (k, v) in &r.params {
            values.entry(k).or_default().insert(v);
        }
    }
    values
        .into_iter()
        .filter(|(k, v)| v.len() > 1 && k.as_str() != "seed")
        .map(|(k, _)| k.clone())
        .collect()
}

fn numeric_value(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .or_else(|| parse_size(text).ok().map(|b| b as f64))
}

/// For a parameter that is a size in bytes (`device.capacity`, `workload.span`, ...): the
/// divisor and axis label that write it in KiB, MiB or GiB, whichever its smallest value
/// reaches; any other parameter is drawn as it is.
fn byte_unit(dim: &str, values: impl Iterator<Item = f64>) -> (f64, String) {
    let option = dim.rsplit('.').next().unwrap_or(dim);
    if ![
        "capacity",
        "span",
        "size",
        "align",
        "file_size",
        "chunk_size",
        "cluster_size",
        "data_align",
    ]
    .contains(&option)
    {
        return (1.0, dim.to_string());
    }
    let smallest = values.fold(f64::INFINITY, f64::min);
    let (unit, name) = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        .into_iter()
        .find(|&(unit, _)| smallest >= unit as f64)
        .unwrap_or((1, "bytes"));
    (unit as f64, format!("{dim} ({name})"))
}

fn is_numeric_dim(results: &[&CellResult], dim: &str) -> bool {
    results.iter().all(|r| {
        r.params
            .get(dim)
            .is_some_and(|v| numeric_value(v).is_some())
    })
}

/// The name of a result's line in a chart: its scheme and the other swept parameters.
fn series_name(result: &CellResult, dims: &[String], x: &str) -> String {
    let mut name = result.label.clone();
    for dim in dims
        .iter()
        .filter(|d| d.as_str() != x && d.as_str() != "ftl.gc" && d.as_str() != "ftl")
    {
        if let Some(v) = result.params.get(dim) {
            name.push_str(&format!(", {dim}={v}"));
        }
    }
    name
}

fn metric_against(
    results: &[&CellResult],
    dims: &[String],
    x: &str,
    metric: &str,
    label: &str,
) -> Option<Figure> {
    // series name -> x -> (sum, count), to average over seeds.
    let mut lines: BTreeMap<String, BTreeMap<u64, (f64, f64, u32)>> = BTreeMap::new();
    for r in results {
        let (Some(xv), Some(&yv)) = (
            r.params.get(x).and_then(|v| numeric_value(v)),
            r.metrics.get(metric),
        ) else {
            continue;
        };
        let point = lines
            .entry(series_name(r, dims, x))
            .or_default()
            .entry(xv.to_bits())
            .or_insert((xv, 0.0, 0));
        point.1 += yv;
        point.2 += 1;
    }
    if lines.is_empty() {
        return None;
    }
    // A size in bytes is drawn in the binary unit its smallest value reaches (32 MiB read
    // "33.55M" on an axis of bytes).
    let (unit, x_label) = byte_unit(x, lines.values().flat_map(|p| p.values().map(|v| v.0)));
    let series: Vec<Series> = lines
        .into_iter()
        .map(|(name, points)| {
            let mut points: Vec<(f64, f64)> = points
                .into_values()
                .map(|(x, sum, n)| (x / unit, sum / f64::from(n)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name, points }
        })
        .collect();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let chart = LineChart {
        title: format!(
            "{} against {x}",
            first_upper(label.split(" (").next().unwrap_or(label))
        ),
        x: Axis {
            label: x_label,
            scale: Scale::auto(xs),
        },
        y: Axis {
            label: label.to_string(),
            scale: Scale::auto(ys),
        },
        series,
        step: false,
        legend: Legend::Auto,
    };
    Figure::drawn(
        chart.title.clone(),
        slug(&format!("{metric}-vs-{x}")),
        Chart::Line(chart),
    )
}

fn bars_per_run(results: &[&CellResult]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for (metric, label) in KEY_METRICS {
        let bars: Vec<(String, f64)> = results
            .iter()
            .filter_map(|r| r.metrics.get(metric).map(|v| (r.label.clone(), *v)))
            .collect();
        if bars.is_empty() {
            continue;
        }
        let chart = BarChart {
            title: first_upper(label.split(" (").next().unwrap_or(label)),
            y: Axis::linear(label),
            bars,
        };
        figures.extend(Figure::drawn(
            chart.title.clone(),
            slug(metric),
            Chart::Bars(chart),
        ));
    }
    figures
}

/// One run per scheme: the one at the middle value of every numeric swept parameter.
fn representatives<'a>(results: &[&'a CellResult], numeric: &[&String]) -> Vec<&'a CellResult> {
    let mut middle: BTreeMap<&String, String> = BTreeMap::new();
    for dim in numeric {
        let mut values: Vec<(f64, &String)> = results
            .iter()
            .filter_map(|r| {
                r.params
                    .get(*dim)
                    .and_then(|v| numeric_value(v).map(|n| (n, v)))
            })
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        values.dedup_by(|a, b| a.0 == b.0);
        if let Some((_, v)) = values.get(values.len() / 2) {
            middle.insert(dim, (*v).clone());
        }
    }
    let mut chosen: BTreeMap<String, &CellResult> = BTreeMap::new();
    for r in results {
        if middle.iter().all(|(dim, v)| r.params.get(*dim) == Some(v)) {
            chosen.entry(r.label.clone()).or_insert(r);
        }
    }
    chosen.into_values().take(10).collect()
}

fn distribution_figures(results: &[&CellResult], numeric: &[&String]) -> Vec<Figure> {
    let runs = representatives(results, numeric);
    let mut figures = Vec::new();
    let wear: Vec<Series> = runs
        .iter()
        .filter_map(|r| {
            let histogram: Vec<(f64, u64)> = r.report.as_ref()?["erase_histogram"]
                .as_array()?
                .iter()
                .filter_map(|pair| Some((pair[0].as_f64()?, pair[1].as_u64()?)))
                .collect();
            Some(Series {
                name: r.label.clone(),
                points: cdf(&histogram),
            })
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let latency: Vec<Series> = runs
        .iter()
        .filter_map(|r| {
            let histogram: Vec<(f64, u64)> = r.report.as_ref()?["latency"]["write"]["histogram"]
                .as_array()?
                .iter()
                .filter_map(|pair| Some((pair[0].as_f64()? / 1000.0, pair[1].as_u64()?)))
                .collect();
            Some(Series {
                name: r.label.clone(),
                points: ccdf(&histogram),
            })
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let charts = [
        (
            wear,
            "Wear: erase-count distribution (CDF)",
            Axis::linear("erase count of a block"),
            Axis::linear("fraction of blocks at or below"),
            Legend::UpperLeft,
            "wear-cdf",
        ),
        (
            latency,
            "Write latency tail (fraction of writes slower than x)",
            Axis::log("write service time (us)"),
            Axis::log("fraction of writes slower"),
            Legend::LowerLeft,
            "write-latency-ccdf",
        ),
    ];
    for (series, title, x, y, legend, stem) in charts {
        if series.is_empty() {
            continue;
        }
        let x =
            if x.scale == Scale::Log && series.iter().flat_map(|s| &s.points).any(|p| p.0 <= 0.0) {
                Axis::linear(x.label)
            } else {
                x
            };
        let chart = LineChart {
            title: title.into(),
            x,
            y,
            series,
            step: true,
            legend,
        };
        figures.extend(Figure::drawn(
            format!("{title} (one run per scheme)"),
            stem.into(),
            Chart::Line(chart),
        ));
    }
    figures
}

/// Every run as a row: label, parameters, status (a failed run's error), key metrics.
fn runs_table(results: &[CellResult]) -> Table {
    let params: BTreeSet<&String> = results.iter().flat_map(|r| r.params.keys()).collect();
    let header = std::iter::once("label".to_string())
        .chain(params.iter().map(|p| (*p).clone()))
        .chain(["status".into()])
        .chain(KEY_METRICS.iter().map(|(k, _)| (*k).to_string()));
    let mut table = Table::new(header);
    for r in results {
        let mut row = vec![r.label.clone()];
        row.extend(
            params
                .iter()
                .map(|p| r.params.get(*p).cloned().unwrap_or_default()),
        );
        row.push(match &r.error {
            None => "ok".into(),
            Some(error) => format!("failed: {error}"),
        });
        row.extend(KEY_METRICS.iter().map(|(k, _)| {
            r.metrics
                .get(*k)
                .map(|v| format_number(*v))
                .unwrap_or_default()
        }));
        table.push(row);
    }
    table
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

fn first_upper(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_sim::sweep::Cell;

    fn cell(label: &str, op: &str, erases: Option<f64>) -> CellResult {
        let params = BTreeMap::from([
            ("device.op".to_string(), op.to_string()),
            ("ftl".to_string(), label.to_string()),
        ]);
        CellResult {
            id: Cell::id_of(&params),
            params,
            status: if erases.is_some() { "ok" } else { "failed" }.into(),
            error: erases.is_none().then(|| "worn out".to_string()),
            metrics: erases
                .map(|e| BTreeMap::from([("flash_erases".to_string(), e)]))
                .unwrap_or_default(),
            label: label.into(),
            report: None,
            wall: None,
        }
    }

    /// A numeric swept parameter is drawn against each metric the runs have, a line per
    /// scheme; a failed run is counted and listed with its error, and drawn nowhere.
    #[test]
    fn a_swept_parameter_is_drawn_against_the_metrics_and_failures_listed() {
        let results = vec![
            cell("page", "0.1", Some(10.0)),
            cell("page", "0.2", Some(5.0)),
            cell("fast", "0.1", Some(20.0)),
            cell("fast", "0.2", Some(8.0)),
            cell("fast", "0.3", None),
        ];
        let report = Report::of_results(&results, "t".into());
        assert_eq!((report.runs, report.failed), (5, 1));
        assert_eq!(report.swept, ["device.op", "ftl"]);
        assert_eq!(
            report.figures.len(),
            1,
            "erases only: no other metric, no histogram"
        );
        let figure = &report.figures[0];
        assert_eq!(figure.caption, "Block erases against device.op");
        assert_eq!(
            figure.file_name(0, "svg"),
            "01-flash-erases-vs-device-op.svg"
        );
        let Chart::Line(chart) = &figure.chart else {
            panic!("a line chart: {:?}", figure.chart);
        };
        let lines: Vec<(&str, &[(f64, f64)])> = chart
            .series
            .iter()
            .map(|s| (s.name.as_str(), s.points.as_slice()))
            .collect();
        assert_eq!(
            lines,
            [
                ("fast", &[(0.1, 20.0), (0.2, 8.0)][..]),
                ("page", &[(0.1, 10.0), (0.2, 5.0)][..])
            ]
        );
        assert!(figure.svg.starts_with("<svg"), "{}", figure.svg);
        assert_eq!(report.table.rows.len(), 5);
        let failed = &report.table.rows[4];
        assert_eq!(failed[..4], ["fast", "0.3", "fast", "failed: worn out"]);
        assert!(
            failed[4..].iter().all(String::is_empty),
            "no metric: {failed:?}"
        );
        let html = report.html();
        assert!(
            html.contains("5 runs (4 finished, 1 failed). Swept parameters: device.op, ftl."),
            "{html}"
        );
    }

    /// Nothing numeric swept: the metrics as bars, one a run that finished.
    #[test]
    fn without_a_numeric_parameter_the_metrics_are_bars_per_run() {
        let results = vec![cell("page", "x", Some(3.0)), cell("fast", "y", Some(4.0))];
        let report = Report::of_results(&results, "t".into());
        assert_eq!(report.figures.len(), 1);
        assert_eq!(report.figures[0].stem, "flash-erases");
        let Chart::Bars(chart) = &report.figures[0].chart else {
            panic!("bars: {:?}", report.figures[0].chart);
        };
        assert_eq!(
            chart.bars,
            [("page".to_string(), 3.0), ("fast".to_string(), 4.0)]
        );
    }

    /// Results with no run are an error naming the path given, not an empty page.
    #[test]
    fn results_without_a_run_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.jsonl");
        std::fs::write(&path, "").expect("write");
        let results = Results::load(&path).expect("an empty results file reads");
        let error = Report::of(&results, None).expect_err("no runs");
        assert!(
            matches!(&error, ReportError::Empty(p) if *p == path),
            "{error}"
        );
        let dir_error = Results::load(dir.path()).expect_err("no results.jsonl");
        assert!(
            matches!(dir_error, ReportError::NotResults(_)),
            "{dir_error}"
        );
    }

    /// Sizes in bytes are drawn in the binary unit their smallest value reaches: 32 MiB read
    /// "33.55M" on an axis of bytes.
    #[test]
    fn byte_sizes_are_drawn_in_binary_units() {
        let mib = f64::from(1u32 << 20);
        assert_eq!(
            byte_unit("device.capacity", [32.0 * mib, 4096.0 * mib].into_iter()),
            (mib, "device.capacity (MiB)".to_string())
        );
        assert_eq!(
            byte_unit("workload.span", [4096.0 * mib].into_iter()).1,
            "workload.span (GiB)"
        );
        assert_eq!(
            byte_unit("workload.align", [512.0, 4096.0].into_iter()),
            (1.0, "workload.align (bytes)".to_string())
        );
        assert_eq!(
            byte_unit("device.op", [0.07, 0.2].into_iter()),
            (1.0, "device.op".to_string())
        );
    }

    fn line_points(figure: &Figure) -> Vec<(String, Vec<(f64, f64)>)> {
        let Chart::Line(chart) = &figure.chart else {
            panic!("a line chart: {:?}", figure.chart);
        };
        chart
            .series
            .iter()
            .map(|s| (s.name.clone(), s.points.clone()))
            .collect()
    }

    /// A run report as `compare --json` writes it, trimmed to what a report reads.
    fn run_json(label: &str, base: f64) -> serde_json::Value {
        serde_json::json!({
            "label": label,
            "flash": {
                "erases": {"host": base, "gc": 2.0 * base, "wear_leveling": 4.0, "metadata": 8.0},
                "programs": {"host": 100.0, "gc": 10.0, "wear_leveling": 1.0, "metadata": 0.5},
            },
            "write_amplification": 1.25,
            "ftl_stats": {"gc_pages_moved": 77},
            "mapping_memory": {"packed_bytes": 4096},
            "elapsed_ns": 2_500_000_000u64,
            "latency": {"write": {"p99_ns": 1500}},
        })
    }

    /// A run document's runs are results whose only parameter is their label, with every
    /// metric read from its report (erases and programs summed over their causes, time in
    /// seconds, the write p99 in microseconds), and its failed runs last as failed cells.
    #[test]
    fn a_run_document_reads_as_runs_with_their_metrics_and_its_failures() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("runs.json");
        let doc = serde_json::json!({
            "runs": [run_json("page", 1.0), run_json("fast", 16.0)],
            "failed": [{"label": "bast", "error": "worn out"}],
        });
        std::fs::write(&path, doc.to_string()).expect("write");
        let results = Results::load(&path).expect("a run document reads");
        assert_eq!(results.name, "runs.json");
        assert_eq!(results.files, std::slice::from_ref(&path));
        assert!(results.notes.is_empty());
        let got: Vec<(&str, &str, Option<&str>)> = results
            .results
            .iter()
            .map(|r| (r.label.as_str(), r.status.as_str(), r.error.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("page", "ok", None),
                ("fast", "ok", None),
                ("bast", "failed", Some("worn out"))
            ]
        );
        let fast = &results.results[1];
        assert_eq!(fast.id, "fast");
        assert_eq!(
            fast.params,
            BTreeMap::from([("run".to_string(), "fast".to_string())])
        );
        let expected = BTreeMap::from(
            [
                ("flash_erases", 16.0 + 32.0 + 4.0 + 8.0),
                ("flash_programs", 111.5),
                ("write_amplification", 1.25),
                ("gc_pages_moved", 77.0),
                ("mapping_packed_bytes", 4096.0),
                ("elapsed_s", 2.5),
                ("write_p99_us", 1.5),
            ]
            .map(|(k, v)| (k.to_string(), v)),
        );
        assert_eq!(fast.metrics, expected);
        assert_eq!(fast.report.as_ref(), Some(&run_json("fast", 16.0)));
        let bast = &results.results[2];
        assert_eq!((bast.id.as_str(), bast.label.as_str()), ("bast", "bast"));
        assert_eq!(bast.params["run"], "bast");
        assert!(bast.metrics.is_empty() && bast.report.is_none());
        // Nothing numeric was swept: one bar chart a metric the runs have.
        let report = Report::of(&results, None).expect("report");
        assert_eq!(report.title, "flashkit results: runs.json");
        assert_eq!((report.runs, report.failed), (3, 1));
        assert_eq!(report.swept, ["run"]);
        let stems: Vec<&str> = report.figures.iter().map(|f| f.stem.as_str()).collect();
        assert_eq!(
            stems,
            [
                "flash-erases",
                "write-amplification",
                "elapsed-s",
                "gc-pages-moved",
                "write-p99-us",
                "mapping-packed-bytes"
            ]
        );
        let captions: Vec<&str> = report.figures.iter().map(|f| f.caption.as_str()).collect();
        assert_eq!(captions[4], "Write latency p99");
        assert_eq!(
            Report::of(&results, Some("mine")).expect("report").title,
            "mine"
        );
    }

    /// What is not a run document is refused naming the file and the field.
    #[test]
    fn a_document_that_is_not_runs_is_refused_naming_the_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("d.json");
        let refusal = |text: &str| {
            std::fs::write(&path, text).expect("write");
            match Results::load(&path) {
                Err(ReportError::NotResults(message)) => message,
                Err(ReportError::Read { what, .. }) => format!("read: {what}"),
                other => panic!("{other:?}"),
            }
        };
        let at = path.display().to_string();
        assert_eq!(refusal("{"), format!("read: {at}: not JSON"));
        assert!(refusal("{}").starts_with(&format!("{at}: neither")));
        let no_label = serde_json::json!({"runs": [run_json("a", 1.0), {"flash": {}}]});
        assert_eq!(
            refusal(&no_label.to_string()),
            format!("{at}: runs[1]: field label: missing or not a string (is this a run report?)")
        );
        for field in ["programs", "erases"] {
            let mut run = run_json("a", 1.0);
            run["flash"][field] = serde_json::json!(3);
            let doc = serde_json::json!({ "runs": [run] });
            assert_eq!(
                refusal(&doc.to_string()),
                format!("{at}: runs[0]: field flash.{field}: missing or not an object")
            );
        }
        let doc = serde_json::json!({"runs": [], "failed": 1});
        assert_eq!(
            refusal(&doc.to_string()),
            format!("{at}: \"failed\" is not a list")
        );
        let doc = serde_json::json!({"runs": [], "failed": [{"label": "x"}]});
        assert_eq!(
            refusal(&doc.to_string()),
            format!("{at}: failed[0]: not a {{\"label\", \"error\"}} object")
        );
        let missing = dir.path().join("none.json");
        assert!(matches!(
            Results::load(&missing),
            Err(ReportError::Read { what, .. }) if what == format!("cannot read {}", missing.display())
        ));
    }

    /// A sweep's directory reads its `results.jsonl` in id order, names the sweep's files as
    /// inputs and says when it left out a torn last line.
    #[test]
    fn a_sweep_directory_reads_in_id_order_and_notes_a_torn_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sweep = dir.path().join("my-sweep");
        std::fs::create_dir(&sweep).expect("mkdir");
        let jsonl = sweep.join("results.jsonl");
        // Written out of id order, as workers finish them.
        let (a, b) = (
            cell("page", "0.2", Some(1.0)),
            cell("page", "0.1", Some(2.0)),
        );
        let mut ids = [a.id.clone(), b.id.clone()];
        ids.sort();
        let (first, second) = if a.id < b.id { (b, a) } else { (a, b) };
        let text = format!(
            "{}\n{}\n",
            serde_json::to_string(&first).expect("json"),
            serde_json::to_string(&second).expect("json")
        );
        std::fs::write(&jsonl, &text).expect("write");
        let results = Results::load(&sweep).expect("a sweep reads");
        assert_eq!(results.name, "my-sweep");
        assert_eq!(
            results.files,
            [
                sweep.join("results.csv"),
                sweep.join("cells.json"),
                jsonl.clone()
            ]
        );
        let got: Vec<&String> = results.results.iter().map(|r| &r.id).collect();
        assert_eq!(got, [&ids[0], &ids[1]]);
        assert!(results.notes.is_empty());
        std::fs::write(&jsonl, format!("{text}{{\"id\": \"tor")).expect("write");
        let torn = Results::load(&jsonl).expect("a torn line is left out");
        assert_eq!(torn.results.len(), 2);
        assert_eq!(torn.files, std::slice::from_ref(&jsonl));
        assert_eq!(torn.notes.len(), 1);
        assert!(
            torn.notes[0].starts_with(&format!(
                "left out the torn last line of {}",
                jsonl.display()
            )),
            "{:?}",
            torn.notes
        );
    }

    /// Seeds are averaged into one point and are not a swept parameter; the other swept
    /// parameters name a scheme's lines, but for the scheme itself and the x axis.
    #[test]
    fn seeds_are_averaged_and_the_other_parameters_name_the_lines() {
        let run = |op: &str, span: &str, seed: &str, erases: f64| {
            let mut r = cell("page", op, Some(erases));
            r.params.insert("seed".into(), seed.into());
            r.params.insert("workload.span".into(), span.into());
            r.params.insert("ftl.gc".into(), "greedy".into());
            r.id = Cell::id_of(&r.params);
            r
        };
        let results = vec![
            run("0.1", "1MiB", "1", 10.0),
            run("0.1", "1MiB", "2", 20.0),
            run("0.2", "1MiB", "1", 6.0),
            run("0.1", "2MiB", "1", 1.0),
            run("0.2", "2MiB", "1", 3.0),
        ];
        let report = Report::of_results(&results, "t".into());
        assert_eq!(report.swept, ["device.op", "workload.span"]);
        let by_op = &report.figures[0];
        assert_eq!(by_op.stem, "flash-erases-vs-device-op");
        assert_eq!(
            line_points(by_op),
            [
                (
                    "page, workload.span=1MiB".to_string(),
                    vec![(0.1, 15.0), (0.2, 6.0)]
                ),
                (
                    "page, workload.span=2MiB".to_string(),
                    vec![(0.1, 1.0), (0.2, 3.0)]
                ),
            ]
        );
        // Sizes given as text are numbers too, drawn in the unit they reach.
        let by_span = &report.figures[1];
        assert_eq!(by_span.stem, "flash-erases-vs-workload-span");
        assert_eq!(
            line_points(by_span),
            [
                (
                    "page, device.op=0.1".to_string(),
                    vec![(1.0, 15.0), (2.0, 1.0)]
                ),
                (
                    "page, device.op=0.2".to_string(),
                    vec![(1.0, 6.0), (2.0, 3.0)]
                ),
            ]
        );
        let Chart::Line(chart) = &by_span.chart else {
            unreachable!()
        };
        assert_eq!(chart.x.label, "workload.span (MiB)");
        assert_eq!(chart.title, "Block erases against workload.span");
        assert_eq!(report.figures.len(), 2);
    }

    /// A parameter numeric in some runs only is not drawn as an axis.
    #[test]
    fn a_parameter_numeric_in_some_runs_only_is_not_an_axis() {
        let results = vec![
            cell("page", "0.1", Some(3.0)),
            cell("fast", "big", Some(4.0)),
        ];
        let report = Report::of_results(&results, "t".into());
        assert_eq!(report.swept, ["device.op", "ftl"]);
        assert!(matches!(report.figures[0].chart, Chart::Bars(_)));
    }

    /// The wear and write-latency distributions of the run at the middle value of each
    /// numeric swept parameter, one line a scheme: the erase counts as a CDF, the latency in
    /// microseconds as the fraction slower, on a linear axis where a value is not positive.
    #[test]
    fn distributions_are_drawn_for_the_middle_run_of_each_scheme() {
        let run = |label: &str, op: &str, k: u64, latency: (f64, f64)| {
            let mut r = cell(label, op, Some(1.0));
            r.report = Some(serde_json::json!({
                "erase_histogram": [[0, k], [op.len() as u64, 2]],
                "latency": {"write": {"histogram": [[latency.0, 3], [latency.1, 1]]}},
            }));
            r
        };
        let results = vec![
            run("page", "0.1", 1, (1000.0, 2000.0)),
            run("page", "0.25", 2, (1000.0, 4000.0)),
            run("page", "0.3", 3, (1000.0, 8000.0)),
            run("fast", "0.1", 5, (0.0, 1000.0)),
            run("fast", "0.25", 6, (0.0, 3000.0)),
            run("fast", "0.3", 7, (0.0, 5000.0)),
        ];
        let report = Report::of_results(&results, "t".into());
        let stems: Vec<&str> = report.figures.iter().map(|f| f.stem.as_str()).collect();
        assert_eq!(
            stems,
            [
                "flash-erases-vs-device-op",
                "wear-cdf",
                "write-latency-ccdf"
            ]
        );
        let wear = &report.figures[1];
        assert_eq!(
            wear.caption,
            "Wear: erase-count distribution (CDF) (one run per scheme)"
        );
        assert_eq!(
            line_points(wear),
            [
                ("fast".to_string(), cdf(&[(0.0, 6), (4.0, 2)])),
                ("page".to_string(), cdf(&[(0.0, 2), (4.0, 2)])),
            ]
        );
        let latency = &report.figures[2];
        assert_eq!(
            line_points(latency),
            [
                ("fast".to_string(), ccdf(&[(0.0, 3), (3.0, 1)])),
                ("page".to_string(), ccdf(&[(1.0, 3), (4.0, 1)])),
            ]
        );
        let Chart::Line(chart) = &latency.chart else {
            unreachable!()
        };
        assert_eq!(chart.x.scale, Scale::Linear, "a latency of 0 us");
        assert_eq!(chart.y.scale, Scale::Log);
        assert!(chart.step);
        // Without the run at 0 us, the latency's axis is logarithmic.
        let positive: Vec<CellResult> = results[..3].to_vec();
        let report = Report::of_results(&positive, "t".into());
        let Chart::Line(chart) = &report.figures[2].chart else {
            unreachable!()
        };
        assert_eq!(chart.x.scale, Scale::Log);
    }

    /// Of an even number of values, the middle run is the upper of the two in the middle;
    /// of one value, that one.
    #[test]
    fn the_middle_run_is_the_upper_middle_value() {
        let results: Vec<CellResult> = ["0.4", "0.1", "0.3", "0.2", "0.2"]
            .into_iter()
            .map(|op| cell("page", op, Some(1.0)))
            .collect();
        let ok: Vec<&CellResult> = results.iter().collect();
        let dim = "device.op".to_string();
        let chosen = representatives(&ok, &[&dim]);
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0].params["device.op"], "0.3");
        let chosen = representatives(&ok[..1], &[&dim]);
        assert_eq!(chosen[0].params["device.op"], "0.4");
    }

    /// At most ten schemes' distributions are drawn, the first ten by name.
    #[test]
    fn at_most_ten_schemes_are_drawn_in_a_distribution() {
        let results: Vec<CellResult> = (0..12)
            .map(|i| {
                let mut r = cell(&format!("s{i:02}"), "0.1", Some(1.0));
                r.report = Some(serde_json::json!({"erase_histogram": [[1, 1]]}));
                r
            })
            .collect();
        let report = Report::of_results(&results, "t".into());
        let wear = report
            .figures
            .iter()
            .find(|f| f.stem == "wear-cdf")
            .expect("wear");
        let names: Vec<String> = line_points(wear).into_iter().map(|l| l.0).collect();
        assert_eq!(
            names,
            (0..10).map(|i| format!("s{i:02}")).collect::<Vec<_>>()
        );
    }

    /// The table of runs: label, every parameter, status, then the key metrics, whole
    /// numbers without decimals and others to four places.
    #[test]
    fn the_runs_table_writes_every_metric_as_a_number() {
        let mut r = cell("page", "0.1", Some(3.0));
        r.metrics.insert("write_amplification".into(), 2.5);
        r.metrics.insert("elapsed_s".into(), 1e15);
        r.metrics
            .insert("gc_pages_moved".into(), 999_999_999_999_999.0);
        r.metrics.insert("write_p99_us".into(), -2.0);
        let table = runs_table(&[r]);
        assert_eq!(
            table.header,
            [
                "label",
                "device.op",
                "ftl",
                "status",
                "flash_erases",
                "write_amplification",
                "elapsed_s",
                "gc_pages_moved",
                "write_p99_us",
                "mapping_packed_bytes"
            ]
        );
        assert_eq!(
            table.rows[0],
            [
                "page",
                "0.1",
                "page",
                "ok",
                "3",
                "2.5000",
                "1000000000000000.0000",
                "999999999999999",
                "-2",
                ""
            ]
        );
    }

    /// The page's summary with nothing swept, and the helpers that name things.
    #[test]
    fn the_page_says_when_nothing_was_swept() {
        let report = Report::of_results(&[cell("page", "0.1", Some(1.0))], "t".into());
        assert!(report.swept.is_empty());
        assert!(
            report
                .html()
                .contains("1 runs (1 finished, 0 failed). Swept parameters: none."),
            "{}",
            report.html()
        );
        assert_eq!(first_upper(""), "");
        assert_eq!(first_upper("écrit"), "Écrit");
        assert_eq!(slug("Write p99 (us)"), "write-p99--us-");
        assert_eq!(numeric_value("4KiB"), Some(4096.0));
        assert_eq!(numeric_value("0.5"), Some(0.5));
        assert_eq!(numeric_value("big"), None);
        let gib = f64::from(1u32 << 30);
        assert_eq!(
            byte_unit("device.capacity", [gib].into_iter()).1,
            "device.capacity (GiB)"
        );
        assert_eq!(
            byte_unit("trace.chunk_size", [1024.0].into_iter()),
            (1024.0, "trace.chunk_size (KiB)".to_string())
        );
    }
}
