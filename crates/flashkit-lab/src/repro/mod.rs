//! The papers' evaluations as experiments: each module takes a spec, runs the paper's grid
//! on the [`Executor`], and returns a [`Reproduction`]: what a reader is shown (text and
//! tables, in order), the figures as charts, the claims ledger with computed verdicts, and
//! the JSON documents of every run.
//!
//! A front end renders a reproduction: the `flashkit` binary prints [`Reproduction::text`]
//! and saves the figures as SVG; `reproduce all` builds its HTML page from the same values
//! ([`index`]).
//! Nothing here prints, and nothing reads a command line: a spec's field at fault is named
//! in a [`LabError::Spec`], and the front end says which of its options that is.

pub mod fast;
pub mod fatlist;
pub mod flashmodel;
pub mod grr;
pub mod index;
pub mod vet;

use crate::Executor;
use crate::claims::{Assessment, Origin, Paper, Tally};
use flashkit_report::Table;
use flashkit_report::plot::{
    Axis, BarChart, GroupedBarChart, Legend, LineChart, PlotError, Scale, Series,
};
use flashkit_sim::{Progress, SimError};
use flashkit_trace::TraceError;
use serde::Serialize;
use serde_json::value::RawValue;
use std::error::Error;
use std::fmt::Write as _;

/// Why a reproduction could not run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A field of the spec is out of range or inconsistent with another. `problem` starts
    /// with the value given ("3M is not a whole number of blocks"), so that a front end can
    /// put its own name for the field in front of it; another field it names is in
    /// backquotes ("16 is below `bfs_min_log` 18"), for the front end to rename too.
    #[error("{field}: {problem}")]
    Spec {
        /// The spec's field, as serde names it (`capacity`, `buffer_size`).
        field: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// A list field of the spec names something the reproduction does not know (a
    /// workload, a scheme).
    #[error("unknown {what} {name:?} in {field}; expected some of: {}", known.join(", "))]
    Unknown {
        /// The spec's field, as serde names it (`workload`).
        field: &'static str,
        /// What its names name (`workload`, `scheme`).
        what: &'static str,
        /// The name given.
        name: String,
        /// The names known, in order.
        known: Vec<String>,
    },
    /// A library refused the configuration the spec expands to (a bad combination of
    /// parameters no single field owns).
    #[error("{0}")]
    Config(#[source] Box<dyn Error + Send + Sync>),
    /// A run failed (an input that cannot be read, a device that filled up).
    #[error("{0}")]
    Run(#[source] Box<dyn Error + Send + Sync>),
}

impl LabError {
    /// A spec error on `field`.
    pub fn spec(field: &'static str, problem: impl Into<String>) -> LabError {
        LabError::Spec {
            field,
            problem: problem.into(),
        }
    }

    /// A simulator error: a configuration it refuses (or a trace's options that do not fit
    /// the file) is [`LabError::Config`], anything else a failed run.
    pub fn from_sim(error: SimError) -> LabError {
        match error {
            SimError::Config(_) => LabError::Config(error.into()),
            SimError::Trace(error) => LabError::from_trace(error),
            other => LabError::Run(other.into()),
        }
    }

    /// A trace error: options that do not fit the file are [`LabError::Config`]; a file
    /// that cannot be read or parsed (the error names the file, line and field) a failed
    /// run.
    pub fn from_trace(error: TraceError) -> LabError {
        match error {
            TraceError::Spec(_) | TraceError::Options(_) => LabError::Config(error.into()),
            other => LabError::Run(other.into()),
        }
    }
}

/// One piece of what a reproduction shows a reader, in order.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Printed {
    /// Text, newlines included.
    Text(String),
    /// A table, rendered as aligned columns.
    Table(Table),
}

/// A chart of one of the paper's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Chart {
    /// Lines through points.
    Line(LineChart),
    /// One bar a label.
    Bars(BarChart),
    /// Groups of bars, one a series.
    GroupedBars(GroupedBarChart),
}

impl Chart {
    /// The chart as SVG; [`PlotError::Empty`] when it has nothing to draw (a run narrowed
    /// to some experiments leaves the others' figures without data).
    pub fn svg(&self) -> Result<String, PlotError> {
        match self {
            Chart::Line(c) => c.svg(),
            Chart::Bars(c) => c.svg(),
            Chart::GroupedBars(c) => c.svg(),
        }
    }
}

/// A figure: the file name it is saved under (the paper's figure: `fig6a.svg`) and its chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// File name, `.svg` included.
    pub name: String,
    /// What to draw.
    pub chart: Chart,
}

/// A JSON document a reproduction's results are saved as (`grr.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Document {
    /// File name, `.json` included.
    pub name: String,
    /// The document, as it is saved.
    pub json: Box<RawValue>,
}

impl Document {
    /// `value` as the pretty-printed JSON document `name` (keys in the order `value`
    /// serializes them).
    ///
    /// # Panics
    /// When `value` cannot be serialized as JSON (a map with non-string keys: a bug here).
    pub fn of(name: &str, value: &impl Serialize) -> Document {
        let json = serde_json::to_string_pretty(value)
            .unwrap_or_else(|e| panic!("{name}: cannot serialize: {e}"));
        Document {
            name: name.into(),
            json: RawValue::from_string(json).expect("serde_json writes valid JSON"),
        }
    }
}

/// The file name of a reproduction's claims ledger.
pub const LEDGER_NAME: &str = "claims.json";

impl Document {
    /// The claims ledger as [`LEDGER_NAME`]: `{"claims": [...]}`.
    pub fn ledger(claims: &[Assessment]) -> Document {
        Document::of(LEDGER_NAME, &serde_json::json!({ "claims": claims }))
    }
}

/// Where a front end saves the claims ledger (`claims.json`) among a reproduction's files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LedgerPlace {
    /// After the documents, before the figures: the runs' results come first.
    #[default]
    AfterDocuments,
    /// After the figures: a paper whose figure and its document are one measurement
    /// (flashmodel's `fig1.json` and `fig1.svg`, this machine's disk).
    AfterFigures,
}

/// What a reproduction returns.
#[derive(Clone, Debug, Serialize)]
pub struct Reproduction {
    /// Whose evaluation this is.
    pub paper: Paper,
    /// The tables and their commentary, in the order a reader is shown them; the claims
    /// ledger and the wall-clock line come last.
    pub printed: Vec<Printed>,
    /// The paper's claims, each with its verdict.
    pub claims: Vec<Assessment>,
    /// The paper's figures, drawn from the runs.
    pub figures: Vec<Figure>,
    /// The runs' figures as JSON documents (what `--json` and `--out` write), in the order
    /// they are written. The claims ledger ([`LEDGER_NAME`]) is written after them unless
    /// one of them is the ledger ([`Document::ledger`]).
    pub documents: Vec<Document>,
    /// One row per run, for a spreadsheet (what `--csv` writes), where the paper's runs
    /// have a common shape.
    pub rows: Option<Table>,
    /// Remarks on the inputs, one a line, for a front end to show apart from the text (an
    /// input missing and skipped, how a trace was read).
    pub notes: Vec<String>,
    /// Where the claims ledger goes among the files saved.
    pub ledger_place: LedgerPlace,
    /// Simulated runs made.
    pub runs: usize,
    /// Wall-clock seconds the reproduction took.
    pub wall_seconds: f64,
}

impl Reproduction {
    /// Everything printed, as one text.
    pub fn text(&self) -> String {
        text_of(&self.printed)
    }
}

/// What `printed` prints: its text, and its tables rendered as aligned columns.
pub fn text_of(printed: &[Printed]) -> String {
    let mut out = String::new();
    for p in printed {
        match p {
            Printed::Text(text) => out.push_str(text),
            Printed::Table(table) => out.push_str(&table.render()),
        }
    }
    out
}

/// Collects what a reproduction prints, in order.
#[derive(Debug, Default)]
pub struct Printer {
    printed: Vec<Printed>,
}

impl Printer {
    /// `text` and a newline (what `println!` would print).
    pub fn line(&mut self, text: impl AsRef<str>) {
        self.text(format!("{}\n", text.as_ref()));
    }

    /// `text` as it is.
    pub fn text(&mut self, text: impl Into<String>) {
        let text = text.into();
        match self.printed.last_mut() {
            Some(Printed::Text(last)) => last.push_str(&text),
            _ => self.printed.push(Printed::Text(text)),
        }
    }

    /// A table.
    pub fn table(&mut self, table: Table) {
        self.printed.push(Printed::Table(table));
    }

    /// What was printed.
    pub fn into_printed(self) -> Vec<Printed> {
        self.printed
    }
}

/// `run` of every job on up to `workers` threads (default: one a core), reporting each
/// finished job to `progress` under `label`; the results in the jobs' order. For a
/// paper's independent simulated runs: each is seeded on its own, so the results are the
/// same bit for bit on any number of threads.
///
/// # Panics
/// When a job panics (a flashkit bug): a paper's runs are all its tables need, so one
/// that panicked leaves nothing to show, and the panic names the experiment.
pub fn run_all<J: Send, R: Send>(
    label: &str,
    jobs: Vec<J>,
    workers: Option<usize>,
    progress: &dyn Progress,
    run: impl Fn(J) -> R + Sync,
) -> Vec<R> {
    if jobs.is_empty() {
        return Vec::new();
    }
    progress.start("runs", Some(jobs.len() as u64));
    let executor = workers.map_or_else(Executor::per_core, Executor::new);
    let results = executor.run(jobs, |_, job| run(job), |_| progress.advance(1));
    progress.finish();
    results
        .into_iter()
        .map(|result| result.unwrap_or_else(|panic| panic!("{label}: a run {panic}")))
        .collect()
}

/// A line through `xs`, at the value `y` gives each (a point without one is left out).
pub fn sweep(name: &str, xs: &[u32], y: impl Fn(u32) -> Option<f64>) -> Series {
    Series {
        name: name.into(),
        points: xs
            .iter()
            .filter_map(|&x| y(x).map(|y| (f64::from(x), y)))
            .collect(),
    }
}

/// A line chart of the series that have points. Its y axis is logarithmic when their
/// values span two decades (and then points at zero, which it cannot draw, are left out);
/// its legend goes where it hides the least of the lines ([`Legend::Auto`]).
pub fn line_chart(title: &str, x: Axis, y: &str, series: Vec<Series>) -> LineChart {
    let scale = Scale::auto(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .filter(|&v| v > 0.0),
    );
    let series: Vec<Series> = series
        .into_iter()
        .map(|s| Series {
            points: s
                .points
                .into_iter()
                .filter(|p| scale == Scale::Linear || p.1 > 0.0)
                .collect(),
            ..s
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    LineChart {
        title: title.into(),
        x,
        y: Axis {
            label: y.into(),
            scale,
        },
        series,
        step: false,
        legend: Legend::Auto,
    }
}

/// A paper's claims ledger as text: each claim's verdict, where the paper makes it, the
/// sentence, and the figures the verdict rests on; the tally first.
pub fn render_ledger(assessments: &[Assessment]) -> String {
    let tally = Tally::of(assessments);
    let mut out = format!(
        "The paper's claims, each against a criterion fixed before our runs \
         (docs/reproduction/claims.md): {} hold, {} in shape only, {} do not hold, {} cannot \
         be checked here\n",
        tally.holds, tally.in_shape, tally.does_not_hold, tally.cannot_check
    );
    for a in assessments {
        let c = &a.claim;
        let whose = match c.origin {
            Origin::Paper => "",
            Origin::Target => " [flashkit's own target, not the paper's claim]",
        };
        let _ = writeln!(
            out,
            "- {}: {} ({}){whose}\n    \"{}\"\n    measured: {}; {}",
            a.verdict.label().to_uppercase(),
            c.id,
            c.location,
            c.quote,
            c.quantity,
            a.measured
        );
    }
    out.push('\n');
    out
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_by_three() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn a_printer_joins_text_and_keeps_tables_in_order() {
        let mut p = Printer::default();
        p.line("a");
        p.text("b");
        let mut t = Table::new(["x"]);
        t.push(["1"]);
        p.table(t.clone());
        p.line("c");
        let printed = p.into_printed();
        assert_eq!(
            printed,
            vec![
                Printed::Text("a\nb".into()),
                Printed::Table(t.clone()),
                Printed::Text("c\n".into())
            ]
        );
        let r = Reproduction {
            paper: Paper::Grr,
            printed,
            claims: Vec::new(),
            figures: Vec::new(),
            documents: Vec::new(),
            rows: None,
            notes: Vec::new(),
            ledger_place: LedgerPlace::default(),
            runs: 0,
            wall_seconds: 0.0,
        };
        assert_eq!(r.text(), format!("a\nb{}c\n", t.render()));
    }

    #[test]
    fn a_line_chart_drops_empty_series_and_zeros_on_a_log_axis() {
        let chart = line_chart(
            "t",
            Axis::linear("x"),
            "y",
            vec![
                sweep("wide", &[1, 2, 3], |x| {
                    Some([0.0, 1.0, 1000.0][x as usize - 1])
                }),
                sweep("none", &[1, 2], |_| None),
            ],
        );
        assert_eq!(chart.y.scale, Scale::Log);
        assert_eq!(chart.series.len(), 1);
        assert_eq!(chart.series[0].points, vec![(2.0, 1.0), (3.0, 1000.0)]);
    }
}
