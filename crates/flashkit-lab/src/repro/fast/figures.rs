//! The paper's evaluation figures as SVG, for `--out DIR`.
//!
//! The paper's section 4 has one figure, Fig. 10 ("Performance evaluation: results": erases
//! and elapsed time of BAST, FAST and O-FAST against 4-64 log blocks, patterns A-E), and
//! Table II (switch operations). Its Figs. 8 and 9 are the worked examples of section 3.7,
//! whose write sequence the text does not give, so they have no counterpart here. Every
//! chart is saved only when the run has data for it (`--patterns`, `--no-traces`).
//!
//! - `fig10-<P>-erases.svg`, `fig10-<P>-time.svg` for each pattern P run: block erases and
//!   elapsed seconds (the paper's cost model) against log blocks, one line per scheme.
//! - `fig10-no-sw.svg`: FAST without its SW log block (not one of the paper's schemes) as a
//!   multiple of FAST's erases, one line per pattern; kept off the Fig. 10 charts, where
//!   its twice-as-many erases would flatten the paper's three schemes into one line.
//! - `table2-A.svg`, `table2-B.svg`: Table II's switch operations, the paper's and ours,
//!   grouped by log blocks.
//! - `section3.5.svg`: section 3.5's experiments, FAST's erases as a fraction of BAST's per
//!   hot-block count, measured and predicted.
//! - `traces-1.svg`, `traces-2.svg`, ...: the real trace excerpts' erases through all five
//!   FTLs, five excerpts a chart, from the fewest erases to the most (not in the paper).
//! - `fig10-sweep-scattered-C.svg`, `fig10-sweep-scattered-D.svg`,
//!   `fig10-sweep-offset0-C.svg`: what decides Fig. 10 (not in the paper; [`super::sweep`]):
//!   FAST's erases as a multiple of BAST's against the swept share, a line per log-block
//!   count.

use super::report::{TABLE_II, counter, erases, find, predicted, seconds};
use super::{Done, Experiment, FastSpec, NHB, NLB};
use crate::repro::{Chart, Figure, line_chart};
use flashkit_ftl::Counter;
use flashkit_report::plot::{Axis, BarSeries, GroupedBarChart, LineChart, Scale, Series};
use flashkit_sim::RunReport;
use flashkit_trace::workload::fast::PatternName;

/// The paper's schemes in Fig. 10: our scheme name and the legend's.
const SCHEMES: [(&str, &str); 3] = [("bast", "BAST"), ("fast", "FAST"), ("ofast", "O-FAST")];

/// The FTLs the trace excerpts go through, and their legend names.
const TRACE_FTLS: [(&str, &str); 5] = [
    ("page", "page-mapped"),
    ("block", "block-mapped"),
    ("bast", "BAST"),
    ("fast", "FAST"),
    ("ofast", "O-FAST"),
];

/// Trace excerpts a chart: five of them, five bars each.
const TRACES_A_CHART: usize = 5;

/// Every figure of the paper's evaluation, drawn from the runs (a figure without data, of a
/// pattern not run, comes back empty and is not saved).
pub fn all(args: &FastSpec, done: &[Done]) -> Vec<Figure> {
    let mut figures = Vec::new();
    let mut add = |name: String, chart: Chart| figures.push(Figure { name, chart });
    let mut log_blocks = args.log_blocks.clone();
    log_blocks.sort_unstable();
    log_blocks.dedup();
    for pattern in PatternName::ALL {
        let [erases_chart, time_chart] = fig_10(pattern, &log_blocks, done);
        add(
            format!("fig10-{}-erases.svg", pattern.letter()),
            Chart::Line(erases_chart),
        );
        add(
            format!("fig10-{}-time.svg", pattern.letter()),
            Chart::Line(time_chart),
        );
    }
    add(
        "fig10-no-sw.svg".into(),
        Chart::Line(no_sw(&log_blocks, done)),
    );
    for (index, pattern) in [PatternName::A, PatternName::B].into_iter().enumerate() {
        add(
            format!("table2-{}.svg", pattern.letter()),
            Chart::GroupedBars(table_ii(pattern, index, args.scale, &log_blocks, done)),
        );
    }
    add(
        "section3.5.svg".into(),
        Chart::GroupedBars(section_3_5(done)),
    );
    let traces = traces(done);
    let charts = traces.len().div_ceil(TRACES_A_CHART);
    for (chart, chunk) in traces.chunks(TRACES_A_CHART).enumerate() {
        add(
            format!("traces-{}.svg", chart + 1),
            Chart::GroupedBars(traces_chart(chunk, done, chart + 1, charts)),
        );
    }
    figures.extend(super::sweep::figures(args, done));
    figures
}

/// `(log blocks, value)` of a scheme's runs on a pattern, in log-block order.
fn points(
    pattern: PatternName,
    scheme: &str,
    log_blocks: &[u32],
    done: &[Done],
    value: fn(&RunReport) -> f64,
) -> Vec<(f64, f64)> {
    log_blocks
        .iter()
        .filter_map(|&n| {
            find(done, &Experiment::Pattern(pattern), scheme, n).map(|r| (f64::from(n), value(r)))
        })
        .collect()
}

/// The log-block axis: log blocks double from one count to the next, so they are spaced
/// evenly on a log axis (labelled at the counts run); over less than a factor 8 a linear
/// axis reads as well.
fn log_block_axis(log_blocks: &[u32]) -> Axis {
    let (min, max) = (
        log_blocks.iter().copied().min().unwrap_or(1).max(1),
        log_blocks.iter().copied().max().unwrap_or(1),
    );
    if max >= 8 * min {
        Axis::log("log blocks (log scale)")
    } else {
        Axis::linear("log blocks")
    }
}

/// Fig. 10 for one pattern: erases, then elapsed time, against log blocks.
fn fig_10(pattern: PatternName, log_blocks: &[u32], done: &[Done]) -> [LineChart; 2] {
    let chart = |metric: &str, unit: &str, value: fn(&RunReport) -> f64| {
        let series: Vec<Series> = SCHEMES
            .iter()
            .map(|&(scheme, name)| Series {
                name: name.into(),
                points: points(pattern, scheme, log_blocks, done, value),
            })
            .collect();
        line_chart(
            &format!(
                "{metric}, {} (Fig. 10, pattern {})",
                pattern.description(),
                pattern.letter()
            ),
            log_block_axis(log_blocks),
            unit,
            series,
        )
    };
    [
        chart("Block erases", "block erases", |r| erases(r) as f64),
        chart("Elapsed time", "elapsed time (s)", seconds),
    ]
}

/// FAST without its SW log block, as a multiple of FAST's erases, one line per pattern.
fn no_sw(log_blocks: &[u32], done: &[Done]) -> LineChart {
    let series: Vec<Series> = PatternName::ALL
        .into_iter()
        .map(|pattern| {
            let experiment = Experiment::Pattern(pattern);
            Series {
                name: format!("pattern {}", pattern.letter()),
                points: log_blocks
                    .iter()
                    .filter_map(|&n| {
                        let fast = find(done, &experiment, "fast", n)?;
                        let no_sw = find(done, &experiment, "fast-rw", n)?;
                        Some((
                            f64::from(n),
                            erases(no_sw) as f64 / erases(fast).max(1) as f64,
                        ))
                    })
                    .collect(),
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    line_chart(
        "FAST without its SW log block (not the paper's; Fig. 10's patterns)",
        log_block_axis(log_blocks),
        "erases as a multiple of FAST's (ratio)",
        series,
    )
}

/// Table II for one camera pattern (`index` 0 is A, 1 is B in the paper's table): BAST's
/// and FAST's switch operations, the paper's and ours, grouped by log blocks. A run at a
/// fraction of the paper's writes (`--scale`, `--quick`) makes as many times fewer
/// switches, so the paper's counts are scaled with it, and say so. Empty when the run did
/// not include the pattern.
fn table_ii(
    pattern: PatternName,
    index: usize,
    scale: f64,
    log_blocks: &[u32],
    done: &[Done],
) -> GroupedBarChart {
    let experiment = Experiment::Pattern(pattern);
    let ran = done.iter().any(|d| d.job.experiment == experiment);
    let counts: Vec<u32> = if ran { log_blocks.to_vec() } else { Vec::new() };
    let paper = |n: u32, scheme: usize| {
        TABLE_II
            .iter()
            .find(|(blocks, _)| *blocks == n)
            .map(|(_, figures)| {
                let (bast, fast) = figures[index];
                (if scheme == 0 { bast } else { fast }) as f64 * scale
            })
    };
    let paper_name = if scale == 1.0 {
        "paper".to_string()
    } else {
        format!("paper x {scale}")
    };
    let ours = |n: u32, scheme: &str| {
        find(done, &experiment, scheme, n).map(|r| counter(r, Counter::SwitchMerges) as f64)
    };
    let mut series = Vec::new();
    for (i, (scheme, name)) in SCHEMES[..2].iter().enumerate() {
        series.push(BarSeries {
            name: format!("{name}, {paper_name}"),
            values: counts.iter().map(|&n| paper(n, i)).collect(),
        });
        series.push(BarSeries {
            name: format!("{name}, ours"),
            values: counts.iter().map(|&n| ours(n, scheme)).collect(),
        });
    }
    GroupedBarChart {
        title: format!(
            "Switch operations, pattern {}: paper vs ours (Table II)",
            pattern.letter()
        ),
        y: Axis::linear("switch operations"),
        groups: counts.iter().map(|n| format!("{n} log blocks")).collect(),
        series,
    }
}

/// Section 3.5's experiments: FAST's erases as a fraction of BAST's, measured and as the
/// analysis predicts, per hot-block count.
fn section_3_5(done: &[Done]) -> GroupedBarChart {
    let nhbs: Vec<u64> = NHB
        .into_iter()
        .filter(|&nhb| find(done, &Experiment::HotBlocks(nhb), "bast", 0).is_some())
        .collect();
    let ratio = |nhb: u64, scheme: &str| {
        let experiment = Experiment::HotBlocks(nhb);
        let bast = find(done, &experiment, "bast", 0)?;
        let other = find(done, &experiment, scheme, 0)?;
        Some(erases(other) as f64 / erases(bast).max(1) as f64)
    };
    let series = vec![
        BarSeries {
            name: "FAST-RW, measured".into(),
            values: nhbs.iter().map(|&n| ratio(n, "fast-rw")).collect(),
        },
        BarSeries {
            name: "FAST-RW, predicted (BAST's worst case if nhb > nlb)".into(),
            values: nhbs
                .iter()
                .map(|&n| {
                    let p = predicted(n);
                    Some(p.fast_rw / p.bast)
                })
                .collect(),
        },
        BarSeries {
            name: "FAST (SW+RW), measured".into(),
            values: nhbs.iter().map(|&n| ratio(n, "fast")).collect(),
        },
    ];
    GroupedBarChart {
        title: format!("FAST's erases relative to BAST's, nlb = {NLB} (section 3.5)"),
        y: Axis::linear("erases / BAST's erases (ratio)"),
        groups: nhbs
            .iter()
            .map(|&n| {
                if predicted(n).worst_case {
                    format!("nhb = {n} (> nlb)")
                } else {
                    format!("nhb = {n}")
                }
            })
            .collect(),
        series,
    }
}

/// The trace excerpts run, each with a short name, from the fewest erases to the most (so
/// that a chart of a few of them draws bars of like heights); excerpts no FTL erased for
/// are left out (nothing to draw).
fn traces(done: &[Done]) -> Vec<(String, String)> {
    let mut names: Vec<&str> = Vec::new();
    for d in done {
        if let Experiment::Trace(name) = &d.job.experiment
            && !names.contains(&name.as_str())
        {
            names.push(name);
        }
    }
    let most = |name: &str| {
        let experiment = Experiment::Trace(name.to_string());
        done.iter()
            .filter(|d| d.job.experiment == experiment)
            .map(|d| erases(&d.report))
            .max()
            .unwrap_or(0)
    };
    let mut traces: Vec<(u64, String, String)> = names
        .iter()
        .zip(short_names(&names))
        .map(|(name, short)| (most(name), name.to_string(), short))
        .filter(|(most, _, _)| *most > 0)
        .collect();
    traces.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    traces
        .into_iter()
        .map(|(_, name, short)| (name, short))
        .collect()
}

/// Trace file names short enough to label a group: the file name without its directory,
/// up to the first dot (`hm_0`), or up to the second where two would read the same
/// (`WebSearch1.first10`).
fn short_names(names: &[&str]) -> Vec<String> {
    let short = |name: &str, parts: usize| {
        let file = name.rsplit('/').next().unwrap_or(name);
        file.split('.').take(parts).collect::<Vec<_>>().join(".")
    };
    names
        .iter()
        .map(|name| {
            let first = short(name, 1);
            let clashes = names
                .iter()
                .filter(|other| short(other, 1) == first)
                .count();
            if clashes > 1 { short(name, 2) } else { first }
        })
        .collect()
}

/// Erases of some trace excerpts (`(file, short name)`) through all five FTLs, chart
/// `part` of `parts`; a log axis when the erases span two decades (a zero draws no bar
/// there).
fn traces_chart(
    traces: &[(String, String)],
    done: &[Done],
    part: usize,
    parts: usize,
) -> GroupedBarChart {
    let series: Vec<BarSeries> = TRACE_FTLS
        .iter()
        .map(|&(scheme, name)| BarSeries {
            name: name.into(),
            values: traces
                .iter()
                .map(|(trace, _)| {
                    find(done, &Experiment::Trace(trace.clone()), scheme, 0)
                        .map(|r| erases(r) as f64)
                })
                .collect(),
        })
        .collect();
    let positive = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .filter(|&v| v > 0.0);
    let of = if parts > 1 {
        format!(", {part} of {parts}")
    } else {
        String::new()
    };
    GroupedBarChart {
        title: format!("Real trace excerpts through five FTLs (not in the paper{of})"),
        y: Axis {
            label: "block erases".into(),
            scale: Scale::auto(positive),
        },
        groups: traces.iter().map(|(_, short)| short.clone()).collect(),
        series,
    }
}
