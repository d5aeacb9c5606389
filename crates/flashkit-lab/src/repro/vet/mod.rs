//! The evaluation of Suh, Moon, Efrat, Kim and Lee, "Memory efficient and scalable address
//! mapping for flash storage devices" (JSA 2014), section 6.
//!
//! - Memory (Tables 2 and 4, Fig. 15), mapping time (Table 3, Fig. 14) and canonical-extent
//!   statistics (Fig. 12) of PMT, VET (LIS/BIS x PD/PF) and EMT inside one page FTL, on a
//!   fresh drive as in the paper: generated workloads shaped after Table 1 (scaled by
//!   [`VetSpec::scale`]) and the public trace excerpts, with the trace's own address space
//!   where it is at most 64 GiB. HMT is counted, not run (docs/reproduction/vet.md says how).
//! - Scalability (Fig. 16): Spew-like workloads of 50 K writes of 8 KiB to 1 MiB over 16 GiB
//!   to 1 TiB, through the mappings alone (no device is modelled at that size).
//!
//! The paper's published figures are shown beside ours; docs/reproduction/vet.md discusses
//! where they differ. Mapping times are wall clock, measured one replay at a time (never
//! in parallel), so they vary from run to run; memory, state and canonical-extent figures do
//! not.
//!
//! [`run`] returns the tables, the figures, the claims ledger, `claims.json` and `vet.json`.

mod figures;
mod inputs;
mod paper;
mod runs;
pub mod sweep;
mod tables;

pub use paper::Column;

use super::{Document, LabError, LedgerPlace, Printer, Reproduction, render_ledger};
use crate::claims::vet::VetRow;
use crate::claims::{Assessment, Paper};
use flashkit_sim::Progress;
use flashkit_sim::latency::LatencySummary;
use flashkit_sim::machine::MemoryLatency;
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::AddressMapping;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

/// What to run: the VET paper's evaluation and its parameters. Deserializes from TOML or
/// JSON with every field optional (the defaults are `flashkit reproduce vet`'s).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VetSpec {
    /// A smoke run in seconds: scale 1/1024, one trace excerpt, Fig. 16 to 32 GiB with 2,000
    /// writes a space (`scale`, `spew_requests` and `spew_max_gib` are then not read).
    pub quick: bool,
    /// Scale of the Table-1-shaped workloads: their requests and address space times this,
    /// in (0, 1].
    pub scale: f64,
    /// Directory holding the public trace excerpts; one missing is skipped with a note.
    pub traces: PathBuf,
    /// Write requests of each Fig. 16 workload.
    pub spew_requests: u64,
    /// Largest address space of Fig. 16 in GiB (from 16 GiB, doubling).
    pub spew_max_gib: u64,
    /// Seed of the generated workloads.
    pub seed: u64,
    /// Timed runs of every replay, 1 to 99: each kind of call is reported from the run
    /// whose mean is the median, and every run's means go into `vet.json`. Memory and state
    /// are checked to be identical across them.
    pub runs: u32,
    /// Run only these workloads: finance, homes, wdev, wsf, or a trace excerpt by the start
    /// of its file name (hm_0, rsrch_0, WebSearch1, ...) (empty: all). Fig. 16 runs only
    /// when neither this nor `scheme` narrows the run.
    pub workload: Vec<String>,
    /// Run only these schemes: PMT, "VET BIS PF", "VET BIS PD", "VET LIS PF", "VET LIS PD",
    /// EMT, "VET BIS PF swiss", "VET BIS PF std", case aside (empty: all).
    pub scheme: Vec<String>,
    /// The paper's own traces, each replayed whole in the column it names, beside the
    /// generated workloads, whatever `workload` says.
    pub paper_trace: Vec<PaperTraceFile>,
    /// How the `paper_trace` files are read (the excerpts are read with the defaults).
    pub trace_options: TraceOptions,
    /// How `paper_trace` addresses map onto the device: identity (the default here, as a
    /// share of PMT depends on the address space) or compact (touched blocks only).
    pub address_map: AddressMapping,
}

impl Default for VetSpec {
    fn default() -> VetSpec {
        VetSpec {
            quick: false,
            scale: 1.0 / 32.0,
            traces: PathBuf::from("../shared/traces"),
            spew_requests: 50_000,
            spew_max_gib: 1024,
            seed: 1,
            runs: 1,
            workload: Vec::new(),
            scheme: Vec::new(),
            paper_trace: Vec::new(),
            trace_options: TraceOptions::default(),
            address_map: AddressMapping::Identity,
        }
    }
}

/// One of the paper's own traces: a file in any supported format (docs/TRACES.md) and the
/// column of the paper it is compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaperTraceFile {
    /// The paper's column.
    pub column: Column,
    /// The trace file.
    pub path: PathBuf,
}

/// One scheme on one workload.
#[derive(Clone, Debug, Default, Serialize)]
struct Row {
    workload: String,
    scheme: String,
    /// The paper's column this row stands for (finance, homes, wdev, wsf): a generated
    /// workload shaped after it, or its own trace ([`VetSpec::paper_trace`]).
    paper_workload: Option<String>,
    logical_bytes: u64,
    packed_bytes: u64,
    heap_bytes: u64,
    pmt_bytes: u64,
    hmt_bytes: u64,
    write: LatencySummary,
    read: LatencySummary,
    relocate: LatencySummary,
    /// Translations of read-modify-writes (the pages a partial-page write merges), apart
    /// from `read`, which holds host read requests only.
    merge: LatencySummary,
    /// Prefetch hints, one per request (work done before the request's call).
    prefetch: LatencySummary,
    canonical_generated_per_write: Option<f64>,
    canonical_overlapped_per_write: Option<f64>,
    canonical_returned_per_read: Option<f64>,
    /// VET: hash-table probes a read's searches made, on average.
    probes_per_read: Option<f64>,
    gc_runs: u64,
    state_hash: String,
    /// Timed runs of the replay ([`VetSpec::runs`]); each summary above is from the median
    /// run.
    runs: usize,
    /// Every run's mean write and read time, in run order.
    write_means_ns: Vec<f64>,
    read_means_ns: Vec<f64>,
}

/// One address space of Fig. 16.
#[derive(Clone, Debug, Serialize)]
struct ScaleRow {
    space_bytes: u64,
    pmt_bytes: u64,
    hmt_bytes: u64,
    vet_bytes: u64,
    emt_bytes: u64,
    mean_write_bytes: f64,
}

/// One of the paper's own traces, as read.
#[derive(Clone, Debug, Serialize)]
struct PaperTrace {
    /// The paper's column: finance, homes, wdev or wsf.
    name: String,
    /// The row name in the tables.
    workload: String,
    path: String,
    format: String,
    requests: u64,
    address_map: String,
    logical_bytes: u64,
    /// xxh3-128 of the file's bytes.
    digest: String,
}

/// `vet.json`.
#[derive(Serialize)]
struct VetDocument<'a> {
    rows: &'a [Row],
    paper_traces: &'a [PaperTrace],
    scalability: &'a [ScaleRow],
    /// What drives Fig. 15's memory ([`sweep`]).
    sweeps: &'a [sweep::SweepRow],
    timer_overhead_ns: f64,
    /// The machine's load latency just before and just after the timed runs: on a shared
    /// machine it moves, and the times move with it.
    memory_latency: &'a MemoryLatency,
    parameters: String,
    claims: &'a [Assessment],
}

/// What the tables, the figures and `vet.json` are made from.
struct Results {
    rows: Vec<Row>,
    paper_traces: Vec<PaperTrace>,
    scalability: Vec<ScaleRow>,
    scale: f64,
    timer_overhead_ns: f64,
    memory_latency: MemoryLatency,
}

/// Run the workloads and schemes `spec` asks for (all by default) and Fig. 16 unless it
/// narrows them: the tables beside the paper's figures, the figures, the claims ledger,
/// `claims.json` and `vet.json`. Inputs skipped or read with remarks are in
/// [`Reproduction::notes`].
pub fn run(spec: &VetSpec, progress: &dyn Progress) -> Result<Reproduction, LabError> {
    let scale = checked_scale(spec)?;
    let schemes = inputs::check_names(spec)?;
    let started = Instant::now();
    let mut notes = Vec::new();
    let (inputs, paper_traces) = inputs::gather(spec, scale, &mut notes)?;
    let timed = runs::time_runs(spec, &inputs, &schemes, progress)?;
    let narrowed = !spec.workload.is_empty() || !spec.scheme.is_empty();
    let (scalability, sweeps) = if narrowed {
        (Vec::new(), Vec::new())
    } else {
        (runs::scalability(spec)?, sweep::run(scale, spec.seed)?)
    };
    let results = Results {
        rows: timed.rows,
        paper_traces,
        scalability,
        scale,
        timer_overhead_ns: timed.timer_overhead_ns,
        memory_latency: timed.memory_latency,
    };
    let mut out = Printer::default();
    tables::print_tables(&mut out, &results);
    out.text(sweep::render(&sweeps));
    let claims = ledger(&results.rows, &results.paper_traces);
    out.text(format!("\n{}", render_ledger(&claims)));
    let mut figures = figures::figures(&results.rows, &results.scalability);
    figures.extend(sweep::figures(&sweeps));
    let document = VetDocument {
        rows: &results.rows,
        paper_traces: &results.paper_traces,
        scalability: &results.scalability,
        sweeps: &sweeps,
        timer_overhead_ns: results.timer_overhead_ns,
        memory_latency: &results.memory_latency,
        parameters: format!(
            "scale {scale}, seed {}, spew requests {}",
            spec.seed, spec.spew_requests
        ),
        claims: &claims,
    };
    let documents = vec![
        Document::ledger(&claims),
        Document::of("vet.json", &document),
    ];
    Ok(Reproduction {
        paper: Paper::Vet,
        printed: out.into_printed(),
        runs: results.rows.iter().map(|r| r.runs).sum(),
        claims,
        figures,
        documents,
        rows: None,
        notes,
        ledger_place: LedgerPlace::AfterDocuments,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The scale of the generated workloads (1/1024 under `quick`), in (0, 1]; and `runs` in
/// 1..=99.
fn checked_scale(spec: &VetSpec) -> Result<f64, LabError> {
    let scale = if spec.quick { 1.0 / 1024.0 } else { spec.scale };
    if !(scale > 0.0 && scale <= 1.0) {
        return Err(LabError::spec("scale", format!("{scale} is not in (0, 1]")));
    }
    if !(1..=99).contains(&spec.runs) {
        return Err(LabError::spec(
            "runs",
            format!("{} is not from 1 to 99", spec.runs),
        ));
    }
    Ok(scale)
}

/// The paper's claims about memory and mapping times against the rows
/// ([`crate::claims::vet`]).
fn ledger(rows: &[Row], paper_traces: &[PaperTrace]) -> Vec<Assessment> {
    let rows: Vec<VetRow> = rows
        .iter()
        .map(|r| VetRow {
            workload: r.workload.clone(),
            scheme: r.scheme.clone(),
            paper_share_of_pmt: paper::published_for(r).map(|p| p.of_pmt),
            packed_bytes: r.packed_bytes,
            pmt_bytes: r.pmt_bytes,
            hmt_bytes: r.hmt_bytes,
            write_mean_ns: r.write.mean_ns,
            read_mean_ns: r.read.mean_ns,
            paper_times_ns: paper::published_times(r).map(|(w, r)| (w * 1000.0, r * 1000.0)),
            on_paper_trace: paper_traces.iter().any(|t| t.workload == r.workload),
        })
        .collect();
    crate::claims::vet::assess_all(&rows)
}

/// The row of `scheme` on `workload`, if it ran.
fn find<'a>(rows: &'a [Row], workload: &str, scheme: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.workload == workload && r.scheme == scheme)
}

/// The workloads of the rows, in their order.
fn workloads(rows: &[Row]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        if !names.contains(&row.workload) {
            names.push(row.workload.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::Chart;
    use flashkit_sim::NoProgress;
    use std::path::Path;

    /// A quick run of three schemes on two generated workloads: no trace excerpt (the
    /// workloads leave them out) and no Fig. 16 (narrowed).
    fn small() -> VetSpec {
        VetSpec {
            quick: true,
            workload: vec!["wdev".into(), "wsf".into()],
            scheme: vec!["pmt".into(), "VET BIS PF".into(), "EMT".into()],
            traces: PathBuf::from("/nonexistent"),
            ..VetSpec::default()
        }
    }

    fn json(r: &Reproduction, name: &str) -> serde_json::Value {
        let document = r
            .documents
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no {name}"));
        serde_json::from_str(document.json.get()).expect("a document is JSON")
    }

    /// What two runs of one spec must agree on: everything but the wall-clock times.
    fn untimed(vet: &serde_json::Value) -> serde_json::Value {
        let mut vet = vet.clone();
        for row in vet["rows"].as_array_mut().expect("rows") {
            let row = row.as_object_mut().expect("a row");
            for timed in [
                "write",
                "read",
                "relocate",
                "merge",
                "prefetch",
                "write_means_ns",
                "read_means_ns",
            ] {
                row.remove(timed);
            }
        }
        let vet = vet.as_object_mut().expect("vet.json");
        for timed in ["timer_overhead_ns", "memory_latency", "claims"] {
            vet.remove(timed);
        }
        serde_json::Value::Object(vet.clone())
    }

    #[test]
    fn a_small_run_returns_its_rows_claims_figures_and_documents() {
        let r = run(&small(), &NoProgress).expect("runs");
        assert_eq!(r.paper, Paper::Vet);
        assert_eq!(r.runs, 6);
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        let names: Vec<&str> = r.documents.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["claims.json", "vet.json"]);
        let vet = json(&r, "vet.json");
        let rows: Vec<(&str, &str)> = vet["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                (
                    r["workload"].as_str().expect("workload"),
                    r["scheme"].as_str().expect("scheme"),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("wdev", "PMT"),
                ("wdev", "VET BIS PF"),
                ("wdev", "EMT"),
                ("wsf", "PMT"),
                ("wsf", "VET BIS PF"),
                ("wsf", "EMT"),
            ]
        );
        for row in vet["rows"].as_array().expect("rows") {
            let bytes = |key: &str| row[key].as_u64().expect("bytes");
            // A page table holds 4 bytes a 4 KiB logical page; PMT's packed memory is it.
            assert_eq!(
                bytes("pmt_bytes"),
                bytes("logical_bytes") / 4096 * 4,
                "{row}"
            );
            if row["scheme"] == "PMT" {
                assert_eq!(bytes("packed_bytes"), bytes("pmt_bytes"), "{row}");
            } else {
                assert!(bytes("packed_bytes") < bytes("pmt_bytes"), "{row}");
            }
            assert_eq!(row["runs"], 1);
            assert_eq!(row["paper_workload"], row["workload"]);
        }
        assert_eq!(vet["scalability"].as_array().map(Vec::len), Some(0));
        // Every claim of the paper is assessed, and the ledger is the one vet.json holds.
        let paper = |a: &&Assessment| a.claim.origin == crate::claims::Origin::Paper;
        assert_eq!(r.claims.iter().filter(paper).count(), 8);
        assert_eq!(r.claims.len(), 11, "and flashkit's three targets");
        assert_eq!(json(&r, "claims.json")["claims"], vet["claims"]);
        let figures: Vec<&str> = r.figures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            figures,
            [
                "fig10.svg",
                "fig11.svg",
                "fig12.svg",
                "fig14.svg",
                "fig15.svg"
            ]
        );
        let Chart::Line(fig10) = &r.figures[0].chart else {
            panic!("fig10 is a line chart")
        };
        let lines: Vec<&str> = fig10.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(lines, ["wdev", "wsf"]);
        let Chart::GroupedBars(fig15) = &r.figures[4].chart else {
            panic!("fig15 is a bar chart")
        };
        assert_eq!(fig15.groups, ["wdev", "wsf"]);
        let paper_vet = fig15
            .series
            .iter()
            .find(|s| s.name == "paper VET")
            .expect("the paper's bars");
        assert_eq!(paper_vet.values, [Some(2.3), Some(27.9)]);
        let text = r.text();
        assert!(text.contains("Scalability (Fig. 16): skipped"), "{text}");
        assert!(!text.contains("Hash tables under VET BIS PF"), "{text}");
    }

    #[test]
    fn the_same_spec_gives_the_same_documents_but_for_times() {
        let one = run(&small(), &NoProgress).expect("runs");
        let two = run(&small(), &NoProgress).expect("runs");
        assert_eq!(
            untimed(&json(&one, "vet.json")),
            untimed(&json(&two, "vet.json"))
        );
        let other = run(&VetSpec { seed: 2, ..small() }, &NoProgress).expect("runs");
        assert_ne!(
            untimed(&json(&one, "vet.json")),
            untimed(&json(&other, "vet.json")),
            "the seed reaches the workloads"
        );
    }

    #[test]
    fn fig16_counts_every_space_from_16_gib() {
        let rows = runs::scalability(&VetSpec {
            quick: true,
            ..VetSpec::default()
        })
        .expect("runs");
        let spaces: Vec<u64> = rows.iter().map(|r| r.space_bytes >> 30).collect();
        assert_eq!(spaces, [16, 32]);
        for row in &rows {
            assert_eq!(row.pmt_bytes, row.space_bytes / 4096 * 4);
            assert!(row.emt_bytes < row.vet_bytes && row.vet_bytes < row.hmt_bytes);
            // Writes of 8 KiB to 1 MiB in 8 KiB steps, uniform: about 516 KiB on average.
            assert!(
                (row.mean_write_bytes - 528_384.0).abs() < 30_000.0,
                "{row:?}"
            );
        }
        let figures = figures::figures(&[], &rows);
        let fig16 = figures.last().expect("fig16");
        assert_eq!(fig16.name, "fig16.svg");
        let Chart::Line(chart) = &fig16.chart else {
            panic!("fig16 is a line chart")
        };
        let lines: Vec<(&str, usize)> = chart
            .series
            .iter()
            .map(|s| (s.name.as_str(), s.points.len()))
            .collect();
        assert_eq!(lines, [("PMT", 2), ("HMT", 2), ("VET", 2), ("EMT", 2)]);
    }

    /// A trace in the MSR Cambridge format: 200 writes and reads of 4 to 16 KiB below 1 GiB.
    fn msr_trace(path: &Path) {
        let mut text = String::new();
        for i in 0..200u64 {
            let op = if i % 5 == 0 { "Read" } else { "Write" };
            let offset = (i * 7919 % (1 << 18)) * 4096;
            let size = 4096 * (1 + i % 4);
            text.push_str(&format!(
                "{},wdev,0,{op},{offset},{size},100\n",
                128_166_372_003_061_629u64 + i * 10_000
            ));
        }
        std::fs::write(path, text).expect("write the trace");
    }

    #[test]
    fn a_papers_own_trace_runs_in_its_column() {
        let dir = std::env::temp_dir().join(format!("flashkit-lab-vet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("wdev.csv");
        msr_trace(&path);
        let spec = VetSpec {
            workload: vec!["wdev".into()],
            scheme: vec!["PMT".into()],
            paper_trace: vec![PaperTraceFile {
                column: Column::Wdev,
                path: path.clone(),
            }],
            ..small()
        };
        let r = run(&spec, &NoProgress);
        std::fs::remove_dir_all(&dir).expect("rm");
        let r = r.expect("runs");
        let vet = json(&r, "vet.json");
        let trace = &vet["paper_traces"][0];
        assert_eq!(trace["name"], "wdev");
        assert_eq!(trace["format"], "msr");
        assert_eq!(trace["requests"], 200);
        assert_eq!(trace["address_map"], "identity");
        let row = &vet["rows"][1];
        assert_eq!(row["workload"], "wdev trace (identity)");
        assert_eq!(row["paper_workload"], "wdev");
        assert!(
            r.notes.iter().any(|n| n.starts_with("trace: ")),
            "{:?}",
            r.notes
        );
        assert!(r.text().contains("wdev trace (identity): "));
    }

    #[test]
    fn a_bad_field_is_named() {
        let field = |spec: VetSpec| match run(&spec, &NoProgress) {
            Err(LabError::Spec { field, .. } | LabError::Unknown { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(VetSpec {
                quick: false,
                scale: 0.0,
                ..small()
            }),
            "scale"
        );
        assert_eq!(field(VetSpec { runs: 0, ..small() }), "runs");
        assert_eq!(
            field(VetSpec {
                workload: vec!["homez".into()],
                ..small()
            }),
            "workload"
        );
        assert_eq!(
            field(VetSpec {
                scheme: vec!["VET".into()],
                ..small()
            }),
            "scheme"
        );
        let twice = |path: &str| PaperTraceFile {
            column: Column::Wdev,
            path: path.into(),
        };
        assert_eq!(
            field(VetSpec {
                paper_trace: vec![twice("a.csv"), twice("b.csv")],
                ..small()
            }),
            "paper_trace"
        );
        let missing = run(
            &VetSpec {
                paper_trace: vec![twice("/nonexistent/wdev.csv")],
                ..small()
            },
            &NoProgress,
        );
        match missing {
            Err(LabError::Run(e)) => assert!(e.to_string().contains("/nonexistent/wdev.csv")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_spec_reads_from_json_with_the_commands_defaults() {
        let spec: VetSpec = serde_json::from_str(
            r#"{"quick": true, "paper_trace": [{"column": "wdev", "path": "w.csv"}],
                "trace_options": {"format": "msr"}}"#,
        )
        .expect("a spec");
        assert_eq!(spec.paper_trace[0].column, Column::Wdev);
        assert_eq!(
            spec.trace_options.format,
            Some(flashkit_trace::formats::Format::Msr)
        );
        assert_eq!(spec.address_map, AddressMapping::Identity);
        assert_eq!(spec.scale, 1.0 / 32.0);
        let err = serde_json::from_str::<VetSpec>(r#"{"scales": 0.5}"#).expect_err("unknown");
        assert!(err.to_string().contains("unknown field `scales`"), "{err}");
    }

    fn timed(read_ns: f64, write_ns: f64) -> Row {
        Row {
            workload: "homes".into(),
            scheme: "VET BIS PF".into(),
            state_hash: "abc".into(),
            read: LatencySummary {
                mean_ns: read_ns,
                p99_ns: read_ns as u64 * 2,
                ..LatencySummary::default()
            },
            write: LatencySummary {
                mean_ns: write_ns,
                ..LatencySummary::default()
            },
            runs: 1,
            read_means_ns: vec![read_ns],
            write_means_ns: vec![write_ns],
            ..Row::default()
        }
    }

    #[test]
    fn each_kind_of_call_comes_from_its_median_run() {
        let row = runs::median_run(vec![
            timed(300.0, 10.0),
            timed(100.0, 30.0),
            timed(200.0, 20.0),
        ])
        .expect("same state");
        assert_eq!(row.runs, 3);
        assert_eq!(row.read.mean_ns, 200.0);
        assert_eq!(row.read.p99_ns, 400, "the whole summary of that run");
        assert_eq!(row.write.mean_ns, 20.0);
        assert_eq!(row.read_means_ns, [300.0, 100.0, 200.0], "in run order");
        let even = runs::median_run(vec![
            timed(4.0, 1.0),
            timed(1.0, 1.0),
            timed(3.0, 1.0),
            timed(2.0, 1.0),
        ])
        .expect("same state");
        assert_eq!(even.read.mean_ns, 2.0, "the lower middle of an even count");
    }

    #[test]
    fn runs_that_end_in_different_states_are_refused() {
        let mut other = timed(1.0, 1.0);
        other.state_hash = "abd".into();
        let error = runs::median_run(vec![timed(1.0, 1.0), other]).expect_err("not deterministic");
        assert!(
            format!("{error:?}").contains("not deterministic"),
            "{error:?}"
        );
    }
}
