//! The fat-list paper's figures, drawn from a reproduction's [`Results`].

use super::{
    LEVELS, PAPER_INIT, PAPER_PROBES, PROBE_LEVELS, Results, Run, RunKey, STRUCTURES, TURNSTILES,
};
use crate::repro::{Chart, Figure, line_chart, sweep, thousands};
use flashkit_index::nor::bench::{PhaseTime, Structure};
use flashkit_report::plot::{Axis, BarSeries, GroupedBarChart, Scale, Series};

/// The micro-benchmark's phases: the reports' name, the titles' name, the panel's letter.
const PHASES: [(&str, &str, char); 4] = [
    ("insert", "Insertion", 'a'),
    ("update", "Update", 'b'),
    ("query", "Query", 'c'),
    ("delete", "Deletion", 'd'),
];

/// A part of a phase's time.
type Part = fn(&PhaseTime) -> f64;

/// What a phase's time is made of (normal operation and space reclaiming together).
const KINDS: [(&str, Part); 3] = [
    ("read", PhaseTime::reads),
    ("write", PhaseTime::writes),
    ("erase", PhaseTime::erases),
];

/// A swept setting of the micro-benchmark: its values, each value's group label, and the
/// legend prefix and run of each structure run at it.
struct Sweep<'a> {
    values: &'a [u32],
    group: &'a dyn Fn(u32) -> String,
    structures: &'a [(&'a str, &'a dyn Fn(u32) -> RunKey)],
}

/// A logarithmic axis when the positive values span `decades` or more, else linear.
fn scale_for(values: impl Iterator<Item = f64>, decades: f64) -> Scale {
    let positive: Vec<f64> = values.filter(|&v| v > 0.0 && v.is_finite()).collect();
    let lo = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positive.iter().copied().fold(0.0, f64::max);
    if !positive.is_empty() && hi / lo >= 10f64.powf(decades) {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// Grouped bars with a y axis labelled `y`, scaled by [`scale_for`].
fn bars(
    title: String,
    y: &str,
    decades: f64,
    groups: Vec<String>,
    series: Vec<BarSeries>,
) -> GroupedBarChart {
    let scale = scale_for(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten().copied()),
        decades,
    );
    GroupedBarChart {
        title,
        y: Axis {
            label: y.into(),
            scale,
        },
        groups,
        series,
    }
}

/// `chart` saved as `name`.
fn figure(name: String, chart: Chart) -> Figure {
    Figure { name, chart }
}

/// One chart per micro-benchmark phase (`fig{number}a.svg` to `d`), bars grouped by the
/// swept setting: the read, write and erase time of each structure. Its y axis is
/// logarithmic from one decade on, since a NOR word read costs 700 times less than a write.
/// Then the total time by setting (`fig{number + 1}.svg`), one bar per structure.
fn micro_figures(number: u32, results: &Results, sweep: &Sweep<'_>, against: &str) -> Vec<Figure> {
    let groups: Vec<String> = sweep.values.iter().map(|&x| (sweep.group)(x)).collect();
    let mut figures = Vec::new();
    for (phase, phase_title, letter) in PHASES {
        let mut series = Vec::new();
        for (prefix, key) in sweep.structures {
            for (kind, time) in KINDS {
                series.push(BarSeries {
                    name: format!("{prefix}{kind}"),
                    values: sweep
                        .values
                        .iter()
                        .map(|&x| results.phase_time(key(x), phase).map(|t| time(&t)))
                        .collect(),
                });
            }
        }
        let chart = bars(
            format!("{phase_title} phase by {against} (Fig. {number}{letter})"),
            "simulated time (s)",
            1.0,
            groups.clone(),
            series,
        );
        figures.push(figure(
            format!("fig{number}{letter}.svg"),
            Chart::GroupedBars(chart),
        ));
    }
    let totals = sweep
        .structures
        .iter()
        .map(|(prefix, key)| BarSeries {
            name: prefix.trim_end().into(),
            values: sweep
                .values
                .iter()
                .map(|&x| results.get(key(x)).map(Run::total))
                .collect(),
        })
        .collect();
    let chart = bars(
        format!("Total execution time by {against} (Fig. {})", number + 1),
        "total simulated time (s)",
        2.0,
        groups,
        totals,
    );
    figures.push(figure(
        format!("fig{}.svg", number + 1),
        Chart::GroupedBars(chart),
    ));
    figures
}

/// Figs. 14-19: the micro-benchmark by flash size, maximum level and turnstile size.
fn sweep_figures(results: &Results, wants: &dyn Fn(&str) -> bool) -> Vec<Figure> {
    let mut figures = Vec::new();
    if wants("sizes") {
        let size = |structure| {
            move |mb: u32| RunKey::Size {
                structure,
                megabytes: u64::from(mb),
            }
        };
        let (fat, mu) = (size(STRUCTURES[0].0), size(STRUCTURES[1].0));
        let sweep = Sweep {
            values: &[1, 2, 4, 8],
            group: &|mb| format!("{mb} MB"),
            structures: &[("fat list ", &fat), ("mu-tree ", &mu)],
        };
        figures.extend(micro_figures(14, results, &sweep, "flash size"));
    }
    if wants("levels") {
        let sweep = Sweep {
            values: &LEVELS,
            group: &|l| RunKey::MaxLevel(l).label(),
            structures: &[("fat list ", &RunKey::MaxLevel)],
        };
        figures.extend(micro_figures(
            16,
            results,
            &sweep,
            "maximum level, fat list",
        ));
    }
    if wants("turnstiles") {
        let sweep = Sweep {
            values: &TURNSTILES,
            group: &|t| format!("turnstile of {t} blocks"),
            structures: &[("fat list ", &RunKey::Turnstile)],
        };
        figures.extend(micro_figures(
            18,
            results,
            &sweep,
            "turnstile size, fat list",
        ));
    }
    figures
}

/// Fig. 21: the sensor macro-benchmark's insertion phase (`fig21a.svg`) and its range
/// queries (`fig21b.svg`).
fn sensor_figures(results: &Results) -> Vec<Figure> {
    let time = |s: Structure, phase: &str| results.phase_time(RunKey::Sensor(s), phase);
    let series: Vec<BarSeries> = STRUCTURES
        .iter()
        .map(|&(s, name)| BarSeries {
            name: name.into(),
            values: KINDS
                .iter()
                .map(|(_, kind)| time(s, "insert").map(|t| kind(&t)))
                .collect(),
        })
        .collect();
    let fig21a = bars(
        "Sensor macro-benchmark, insertion phase (Fig. 21a)".into(),
        "simulated time (s)",
        1.0,
        KINDS.iter().map(|k| k.0.to_string()).collect(),
        series,
    );
    let queries: Vec<(String, u64)> = results
        .get(RunKey::Sensor(Structure::FatList))
        .map(|r| {
            r.phases
                .iter()
                .filter(|p| p.name != "insert")
                .map(|p| (p.name.clone(), p.operations))
                .collect()
        })
        .unwrap_or_default();
    let fig21b = bars(
        "Sensor macro-benchmark, range query phase (Fig. 21b)".into(),
        "simulated time (s)",
        2.0,
        queries
            .iter()
            .map(|q| format!("{} range queries", thousands(q.1)))
            .collect(),
        STRUCTURES
            .iter()
            .map(|&(s, name)| BarSeries {
                name: name.into(),
                values: queries
                    .iter()
                    .map(|q| time(s, &q.0).map(|t| t.total()))
                    .collect(),
            })
            .collect(),
    );
    vec![
        figure("fig21a.svg".into(), Chart::GroupedBars(fig21a)),
        figure("fig21b.svg".into(), Chart::GroupedBars(fig21b)),
    ]
}

/// `table-probes.svg`: probes of each kind per pointer visited in the query phase by
/// maximum level, ours beside the paper's.
fn probes_figure(results: &Results) -> Figure {
    let ours = |level: u32| {
        results
            .get(RunKey::MaxLevel(level))?
            .phase("query")
            .map(|p| p.probes)
    };
    // Groups: ours and the paper's for each maximum level; series: the probe kinds, rows
    // 2-6 of the paper's table.
    let mut groups = Vec::new();
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); 5];
    for (column, &level) in PROBE_LEVELS.iter().enumerate() {
        if let Some(s) = ours(level) {
            groups.push(format!("max level {level}, ours"));
            for (kind, count) in [s.successful, s.low, s.over, s.back, s.null]
                .into_iter()
                .enumerate()
            {
                values[kind].push(Some(s.per_pointer(count)));
            }
        }
        groups.push(format!("max level {level}, paper"));
        for (kind, row) in PAPER_PROBES[2..].iter().enumerate() {
            values[kind].push(Some(row.1[column]));
        }
    }
    let chart = GroupedBarChart {
        title: "Probes per pointer visited, query phase (table, section 0.6.3)".into(),
        y: Axis::linear("probes per pointer visited"),
        groups,
        series: PAPER_PROBES[2..]
            .iter()
            .zip(values)
            .map(|(row, values)| BarSeries {
                name: row.0.into(),
                values,
            })
            .collect(),
    };
    figure("table-probes.svg".into(), Chart::GroupedBars(chart))
}

/// `table-init.svg`: a boot-up's time by maximum level, one line per turnstile size, ours
/// and the paper's (in microseconds, as its text reads its table).
fn init_figure(results: &Results) -> Figure {
    let mut series: Vec<Series> = PAPER_INIT
        .iter()
        .map(|&(t, _)| {
            sweep(&format!("ours, turnstile {t}"), &LEVELS, |l| {
                results
                    .init
                    .iter()
                    .find(|r| r.turnstile == t && r.levels == l)
                    .map(|r| r.microseconds)
            })
        })
        .collect();
    series.extend(PAPER_INIT.iter().map(|&(t, paper)| Series {
        name: format!("paper, turnstile {t}"),
        points: LEVELS.iter().map(|&l| f64::from(l)).zip(paper).collect(),
    }));
    let chart = line_chart(
        "Boot-up initialization cost by maximum level (table, section 0.6.3)",
        Axis::linear("maximum level"),
        "microseconds a boot-up (mean)",
        series,
    );
    figure("table-init.svg".into(), Chart::Line(chart))
}

/// The paper's figures, each for an experiment the run made (`only`). The paper publishes
/// no values for its figures, only for its two tables, which are drawn too. The
/// micro-benchmark's settings are few (three or four), so they are bars grouped by setting
/// as in the paper's figures; on a logarithmic axis a time of zero (no erases, say) has no
/// bar.
///
/// - `fig14a.svg` to `fig14d.svg`: the insertion, update, query and deletion phases on 1,
///   2, 4 and 8 MB, read, write and erase time of fat lists and the mu-tree.
/// - `fig15.svg`: the micro-benchmark's total time by flash size, fat lists and mu-tree.
/// - `fig16a.svg` to `fig16d.svg`, `fig17.svg`: the same for fat lists with maximum levels
///   1, 3, 4 and 5 (2 MB).
/// - `fig18a.svg` to `fig18d.svg`, `fig19.svg`: the same for turnstiles of 8, 16 and 32
///   blocks (2 MB).
/// - `fig21a.svg`: the sensor macro-benchmark's insertion phase, read, write and erase
///   time of both structures; `fig21b.svg`: its 1,000 and 10,000 range queries.
/// - `table-probes.svg`: the probe table of section 0.6.3 (`probes_figure`).
/// - `table-init.svg`: the initialization table of section 0.6.3 (`init_figure`).
pub fn figures(results: &Results, wants: &dyn Fn(&str) -> bool) -> Vec<Figure> {
    let mut figures = sweep_figures(results, wants);
    if wants("sensor") {
        figures.extend(sensor_figures(results));
    }
    if wants("probes") {
        figures.push(probes_figure(results));
    }
    if wants("init") {
        figures.push(init_figure(results));
    }
    figures
}
