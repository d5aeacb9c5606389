//! `flashkit report`: results in, one self-contained HTML page and figures out.
//!
//! Input: a sweep directory (or its `results.jsonl`), or the JSON that `compare` and `replay`
//! write with `--json`. Figures:
//! - every numeric swept parameter against the key metrics, a line per scheme (the other
//!   swept parameters, seeds averaged), log axes where the data spans decades;
//! - when nothing numeric was swept, the key metrics as bars per run;
//! - mapping memory against address space (log-log) when the capacity was swept;
//! - the erase-count distribution (wear) and the write-latency distribution as CDFs, one line
//!   per scheme (its run at the middle of each swept parameter);
//! - a sortable table of every run, failed ones with their error.

use crate::Outcome;
use crate::args::ReportArgs;
use crate::{Failure, sim_failure};
use anyhow::{Context, anyhow};
use flashkit_core::units::parse_size;
use flashkit_report::Table;
use flashkit_report::html::{Block, HtmlReport, Section};
use flashkit_report::plot::{Axis, BarChart, Legend, LineChart, Scale, Series, ccdf, cdf};
use flashkit_sim::sweep::{CellResult, read_results};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Metrics plotted by default, with axis labels and units.
const KEY_METRICS: [(&str, &str); 6] = [
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

/// A figure: caption, chart (as SVG) and a file name stem.
struct Figure {
    caption: String,
    svg: String,
    stem: String,
}

pub fn run(args: ReportArgs) -> Outcome {
    if args.html.is_none() && args.svg.is_none() && args.png.is_none() {
        return Err(Failure::Usage(anyhow!(
            "say what to write: --html FILE, --svg DIR and/or --png DIR"
        )));
    }
    let (results, source_name) = load(&args.results)?;
    crate::output::check_outputs(&[("--html", args.html.as_deref())]).map_err(Failure::Usage)?;
    // The figure directories too, before anything is drawn: `--html P --svg P` wrote the
    // figures into a directory P and then failed to write the page.
    for (flag, dir) in [
        ("--svg", args.svg.as_deref()),
        ("--png", args.png.as_deref()),
    ] {
        let Some(dir) = dir else { continue };
        if dir.exists() && !dir.is_dir() {
            return Err(Failure::Usage(anyhow!(
                "{flag} {}: a file is there; give a directory for the figures",
                dir.display()
            )));
        }
        if let Some(html) = &args.html
            && crate::output::same_output(html, dir)
        {
            return Err(Failure::Usage(anyhow!(
                "--html and {flag} both name {}: the page is a file and the figures go in a \
                 directory; give each its own path",
                dir.display()
            )));
        }
    }
    if results.is_empty() {
        return Err(Failure::Runtime(anyhow!(
            "{} holds no results",
            args.results.display()
        )));
    }
    let ok: Vec<&CellResult> = results.iter().filter(|r| r.is_ok()).collect();
    let dims = swept_dimensions(&results);
    let mut figures = Vec::new();
    let numeric: Vec<&String> = dims.iter().filter(|d| is_numeric_dim(&ok, d)).collect();
    for dim in &numeric {
        for (metric, label) in KEY_METRICS {
            if let Some(figure) = metric_against(&ok, &dims, dim, metric, label) {
                figures.push(figure);
            }
        }
    }
    if numeric.is_empty() {
        figures.extend(bars_per_run(&ok));
    }
    figures.extend(distribution_figures(&ok, &numeric));
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("flashkit results: {source_name}"));
    if let Some(dir) = &args.svg {
        write_figures(dir, &figures, "svg", |f| Ok(f.svg.clone().into_bytes()))?;
    }
    if let Some(dir) = &args.png {
        write_figures(dir, &figures, "png", |f| {
            flashkit_report::png::svg_to_png(&f.svg, 2.0).map_err(|e| anyhow!("{}: {e}", f.stem))
        })?;
    }
    if let Some(path) = &args.html {
        let html = page(&title, &results, &dims, figures.iter()).render();
        crate::output::write_file(path, html)?;
        let failed = results.iter().filter(|r| r.status != "ok").count();
        println!(
            "wrote {} ({} runs{}, {} figures)",
            path.display(),
            results.len(),
            if failed > 0 {
                format!(", {failed} of them failed")
            } else {
                String::new()
            },
            figures.len()
        );
    }
    Ok(())
}

fn load(path: &Path) -> Result<(Vec<CellResult>, String), Failure> {
    let jsonl = if path.is_dir() {
        let jsonl = path.join("results.jsonl");
        if !jsonl.exists() {
            // A `reproduce --out` directory, say: its figures are drawn already.
            return Err(Failure::Usage(anyhow!(
                "{} has no results.jsonl: report reads a sweep's directory or results.jsonl, \
                 or the --json of compare or replay (a `reproduce --out` directory holds its \
                 paper's figures already)",
                path.display()
            )));
        }
        // The sweep's other files are inputs too: an --html over them would break a resume.
        for name in ["results.csv", "cells.json"] {
            crate::output::note_input(&path.join(name));
        }
        jsonl
    } else {
        path.to_path_buf()
    };
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    crate::output::note_input(&jsonl);
    if jsonl.extension().is_some_and(|e| e == "jsonl") {
        let existing = read_results(&jsonl).map_err(sim_failure)?;
        if existing.dropped_partial_line {
            eprintln!(
                "note: left out the torn last line of {} (a sweep still writing it, or one \
                 interrupted mid-write: `flashkit sweep --resume` runs that cell again)",
                jsonl.display()
            );
        }
        // In id order: the file holds them in the order the workers finished.
        let mut results = existing.results;
        results.sort_by(|a, b| a.id.cmp(&b.id));
        return Ok((results, name));
    }
    let text = std::fs::read_to_string(&jsonl)
        .with_context(|| format!("cannot read {}", jsonl.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", jsonl.display()))?;
    let runs = doc["runs"].as_array().ok_or_else(|| {
        Failure::Usage(anyhow!(
            "{}: neither a sweep's results.jsonl nor a --json document with \"runs\"",
            jsonl.display()
        ))
    })?;
    let mut results = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            result_of_run(run).map_err(|e| anyhow!("{}: runs[{i}]: {e}", jsonl.display()))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::Usage)?;
    // Runs that failed (`compare` records them beside the others) are shown as failed cells.
    if let Some(failed) = doc.get("failed") {
        let failed = failed.as_array().ok_or_else(|| {
            Failure::Usage(anyhow!("{}: \"failed\" is not a list", jsonl.display()))
        })?;
        for (i, run) in failed.iter().enumerate() {
            let (Some(label), Some(error)) = (run["label"].as_str(), run["error"].as_str()) else {
                return Err(Failure::Usage(anyhow!(
                    "{}: failed[{i}]: not a {{\"label\", \"error\"}} object",
                    jsonl.display()
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
    Ok((results, name))
}

/// A run of a `--json` document as a result whose only parameter is its label; a value that
/// is not a run report (a hand-edited file, another tool's JSON) is refused naming the field,
/// rather than drawn as a run with no figures.
fn result_of_run(run: &serde_json::Value) -> anyhow::Result<CellResult> {
    let label = run["label"]
        .as_str()
        .ok_or_else(|| anyhow!("field label: missing or not a string (is this a run report?)"))?
        .to_string();
    for field in ["programs", "erases"] {
        if !run["flash"][field].is_object() {
            return Err(anyhow!("field flash.{field}: missing or not an object"));
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
    let svg = chart.svg().ok()?;
    Some(Figure {
        caption: chart.title.clone(),
        svg,
        stem: slug(&format!("{metric}-vs-{x}")),
    })
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
        if let Ok(svg) = chart.svg() {
            figures.push(Figure {
                caption: chart.title.clone(),
                svg,
                stem: slug(metric),
            });
        }
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
        if let Ok(svg) = chart.svg() {
            figures.push(Figure {
                caption: format!("{title} (one run per scheme)"),
                svg,
                stem: stem.into(),
            });
        }
    }
    figures
}

fn page<'a>(
    title: &str,
    results: &[CellResult],
    dims: &[String],
    figures: impl Iterator<Item = &'a Figure>,
) -> HtmlReport {
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let mut intro = vec![format!(
        "{} runs ({ok} finished, {} failed). Swept parameters: {}.",
        results.len(),
        results.len() - ok,
        if dims.is_empty() {
            "none".to_string()
        } else {
            dims.join(", ")
        }
    )];
    intro.push("Simulated time and latency follow the serial cost model (reads, programs and erases times their latencies). Click a column header to sort.".into());
    let figure_blocks = figures
        .map(|f| Block::Figure {
            caption: f.caption.clone(),
            svg: f.svg.clone(),
            id: None,
        })
        .collect();
    HtmlReport {
        title: title.to_string(),
        intro,
        sections: vec![
            Section {
                heading: "Figures".into(),
                blocks: figure_blocks,
            },
            Section {
                heading: "Runs".into(),
                blocks: vec![Block::Table(runs_table(results))],
            },
        ],
    }
}

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

fn write_figures(
    dir: &Path,
    figures: &[Figure],
    extension: &str,
    encode: impl Fn(&Figure) -> anyhow::Result<Vec<u8>>,
) -> Outcome {
    // All the figures or none of them: a full disk left an empty directory, or some of the
    // figures.
    let mut undo = crate::output::Undo::default();
    undo.create_dir_all(dir)?;
    for (i, figure) in figures.iter().enumerate() {
        let path = dir.join(format!("{:02}-{}.{extension}", i + 1, figure.stem));
        let bytes = encode(figure)?;
        undo.note(&path);
        crate::output::write_file(&path, bytes)?;
    }
    undo.keep();
    println!(
        "wrote {} {extension} figures to {}",
        figures.len(),
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::byte_unit;

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
}
