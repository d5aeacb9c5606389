//! The paper's figures, drawn from the rows. Each is returned whatever it holds; one with
//! nothing to draw (a run narrowed to some schemes may have neither VET BIS PF nor EMT)
//! renders as [`flashkit_report::plot::PlotError::Empty`], and a front end skips it.
//!
//! - `fig10.svg`, `fig11.svg`: the distribution of VET BIS PF's write and read mapping times
//!   as CDFs, one line a workload. The paper plots every request's time in request order;
//!   a CDF shows the same distribution and stays readable for millions of requests. They
//!   draw the workloads standing for a column of the paper when the run has any, every
//!   workload otherwise.
//! - `fig12.svg`: canonical extents per request, VET BIS PF.
//! - `fig14.svg`: mean write and read times of VET BIS PF and EMT, beside the paper's VET
//!   BIS times (Table 3; its Fig. 14 gives EMT's only as bars).
//! - `fig15.svg`: memory as a share of PMT, VET BIS PF and EMT beside the paper's.
//! - `fig16.svg`: memory over growing address spaces (only when Fig. 16 ran).

use super::paper::{Published, published_for};
use super::{Row, ScaleRow, find, workloads};
use crate::repro::{Chart, Figure};
use flashkit_report::plot::{Axis, BarSeries, GroupedBarChart, Legend, LineChart, Series, cdf};
use flashkit_sim::latency::LatencySummary;

/// Every figure of the run, in the paper's order.
pub(super) fn figures(rows: &[Row], scalability: &[ScaleRow]) -> Vec<Figure> {
    let bars = Bars {
        rows,
        names: workloads(rows),
    };
    let mut figures = cdf_figures(&bars);
    for (name, chart) in [
        ("fig12.svg", fig12(&bars)),
        ("fig14.svg", fig14(&bars)),
        ("fig15.svg", fig15(&bars)),
    ] {
        figures.push(Figure {
            name: name.into(),
            chart: Chart::GroupedBars(chart),
        });
    }
    if !scalability.is_empty() {
        figures.push(Figure {
            name: "fig16.svg".into(),
            chart: Chart::Line(fig16(scalability)),
        });
    }
    figures
}

/// The rows, and the workloads in the tables' order: one group of bars each.
struct Bars<'a> {
    rows: &'a [Row],
    names: Vec<String>,
}

impl Bars<'_> {
    /// A bar a workload, at the value `value` gives it (none where it gives none).
    fn series(&self, name: &str, value: &dyn Fn(&str) -> Option<f64>) -> BarSeries {
        BarSeries {
            name: name.into(),
            values: self.names.iter().map(|w| value(w)).collect(),
        }
    }

    fn row(&self, workload: &str, scheme: &str) -> Option<&Row> {
        find(self.rows, workload, scheme)
    }

    /// The paper's figures for the column `workload` stands for.
    fn paper(&self, workload: &str) -> Option<&'static Published> {
        self.row(workload, "VET BIS PF")
            .or(self.row(workload, "EMT"))
            .and_then(published_for)
    }
}

/// Figs. 10 and 11: VET BIS PF's write and read mapping times as CDFs.
fn cdf_figures(bars: &Bars<'_>) -> Vec<Figure> {
    let papers: Vec<&String> = bars
        .names
        .iter()
        .filter(|w| {
            bars.rows
                .iter()
                .any(|r| &r.workload == *w && r.paper_workload.is_some())
        })
        .collect();
    let drawn: Vec<&String> = if papers.is_empty() {
        bars.names.iter().collect()
    } else {
        papers
    };
    type Pick = fn(&Row) -> &LatencySummary;
    let kinds: [(&str, &str, Pick); 2] = [
        (
            "fig10.svg",
            "VET BIS PF write mapping times (Fig. 10)",
            |r| &r.write,
        ),
        (
            "fig11.svg",
            "VET BIS PF read mapping times (Fig. 11)",
            |r| &r.read,
        ),
    ];
    kinds
        .into_iter()
        .map(|(name, title, pick)| {
            let chart = LineChart {
                title: title.into(),
                x: Axis::log("mapping time a request (ns)"),
                y: Axis::linear("fraction of requests at most"),
                series: drawn
                    .iter()
                    .filter_map(|w| bars.row(w, "VET BIS PF"))
                    .map(|r| Series {
                        name: r.workload.clone(),
                        points: cdf(&pick(r)
                            .histogram
                            .iter()
                            .map(|&(ns, n)| (ns as f64, n))
                            .collect::<Vec<_>>()),
                    })
                    .filter(|s| !s.points.is_empty())
                    .collect(),
                step: true,
                legend: Legend::LowerRight,
            };
            Figure {
                name: name.into(),
                chart: Chart::Line(chart),
            }
        })
        .collect()
}

/// Fig. 12: VET BIS PF's canonical extents per request.
fn fig12(bars: &Bars<'_>) -> GroupedBarChart {
    let vet = |w: &str, f: fn(&Row) -> Option<f64>| bars.row(w, "VET BIS PF").and_then(f);
    GroupedBarChart {
        title: "VET BIS PF canonical extents per request (Fig. 12)".into(),
        y: Axis::linear("canonical extents"),
        groups: bars.names.clone(),
        series: vec![
            bars.series("generated by a write", &|w| {
                vet(w, |r| r.canonical_generated_per_write)
            }),
            bars.series("overlapped by a write", &|w| {
                vet(w, |r| r.canonical_overlapped_per_write)
            }),
            bars.series("returned to a read", &|w| {
                vet(w, |r| r.canonical_returned_per_read)
            }),
        ],
    }
}

/// Fig. 14: mean write and read times of VET BIS PF and EMT beside the paper's.
fn fig14(bars: &Bars<'_>) -> GroupedBarChart {
    let mean_us = |w: &str, scheme: &str, pick: fn(&Row) -> &LatencySummary| {
        bars.row(w, scheme)
            .map(pick)
            .filter(|l| l.requests > 0)
            .map(|l| l.mean_ns / 1000.0)
    };
    GroupedBarChart {
        title: "Mean mapping time a request, VET and EMT (Fig. 14)".into(),
        y: Axis::log("mean time (us)"),
        groups: bars.names.clone(),
        series: vec![
            bars.series("VET BIS PF write", &|w| {
                mean_us(w, "VET BIS PF", |r| &r.write)
            }),
            bars.series("EMT write", &|w| mean_us(w, "EMT", |r| &r.write)),
            bars.series("paper VET BIS write", &|w| {
                bars.paper(w).map(|p| p.times_us.0)
            }),
            bars.series("VET BIS PF read", &|w| {
                mean_us(w, "VET BIS PF", |r| &r.read)
            }),
            bars.series("EMT read", &|w| mean_us(w, "EMT", |r| &r.read)),
            bars.series("paper VET BIS read", &|w| {
                bars.paper(w).map(|p| p.times_us.1)
            }),
        ],
    }
}

/// Fig. 15: VET BIS PF's and EMT's memory as a share of PMT's, beside the paper's.
fn fig15(bars: &Bars<'_>) -> GroupedBarChart {
    let share = |w: &str, scheme: &str| {
        bars.row(w, scheme)
            .map(|r| 100.0 * r.packed_bytes as f64 / r.pmt_bytes as f64)
    };
    GroupedBarChart {
        title: "Mapping memory as a share of PMT (Fig. 15)".into(),
        y: Axis::log("percent of PMT"),
        groups: bars.names.clone(),
        series: vec![
            bars.series("VET BIS PF", &|w| share(w, "VET BIS PF")),
            bars.series("EMT", &|w| share(w, "EMT")),
            bars.series("paper VET", &|w| bars.paper(w).map(|p| p.of_pmt.0)),
            bars.series("paper EMT", &|w| bars.paper(w).map(|p| p.of_pmt.1)),
        ],
    }
}

/// Fig. 16: memory over growing address spaces.
fn fig16(scalability: &[ScaleRow]) -> LineChart {
    let line = |name: &str, f: fn(&ScaleRow) -> u64| Series {
        name: name.into(),
        points: scalability
            .iter()
            .map(|s| ((s.space_bytes >> 30) as f64, f(s) as f64))
            .collect(),
    };
    LineChart {
        title: "Memory over growing address space (Fig. 16)".into(),
        x: Axis::log("address space (GiB)"),
        y: Axis::log("mapping memory (bytes)"),
        series: vec![
            line("PMT", |s| s.pmt_bytes),
            line("HMT", |s| s.hmt_bytes),
            line("VET", |s| s.vet_bytes),
            line("EMT", |s| s.emt_bytes),
        ],
        step: false,
        legend: Legend::UpperLeft,
    }
}
