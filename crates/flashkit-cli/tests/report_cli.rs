//! `flashkit report` on inputs it should question: foreign JSON, an output that is a
//! directory, a results file whose last line is torn.

mod common;
use common::{flashkit, stderr, stdout};

use std::path::{Path, PathBuf};
use std::process::Output;

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

/// A usage error (exit 2) whose message holds `needle`.
fn assert_usage(output: &Output, needle: &str) {
    assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
    assert!(stderr(output).contains(needle), "{}", stderr(output));
}

/// A small replay's `--json` in `dir`: a run document to report on.
fn replay_json(dir: &Path) -> PathBuf {
    let json = dir.join("r.json");
    let output = flashkit(&[
        "replay",
        "--no-precondition",
        "--capacity",
        "64M",
        "--requests",
        "500",
        "--json",
        s(&json),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    json
}

/// A sweep of the page FTL on a 64 MiB device, 1,000 requests a cell, over `grid` (extra
/// `[grid]` lines), run into `dir/out` on one worker: the output directory.
fn small_sweep(dir: &Path, grid: &str) -> PathBuf {
    let file = dir.join("g.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"small\"\n[base.device]\ncapacity = \"64M\"\n[base.workload]\n\
             requests = \"1k\"\n[grid]\nftl = [\"page\"]\n{grid}"
        ),
    )
    .expect("write");
    let out = dir.join("out");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--jobs", "1"]);
    assert!(output.status.success(), "{}", stderr(&output));
    out
}

/// A JSON that is not a run document is a usage error, whoever wrote it (a `trace stats`
/// JSON exited 1 where a malformed run exited 2); so is an HTML path that is a directory
/// (found only when writing, exit 1).
#[test]
fn foreign_documents_and_directory_outputs_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let doc = dir.path().join("stats.json");
    std::fs::write(&doc, "{\"requests\": 3}").expect("write");
    let html = dir.path().join("r.html");
    assert_usage(
        &flashkit(&["report", s(&doc), "--html", s(&html)]),
        "neither a sweep's results.jsonl nor a --json document with \"runs\"",
    );
    let json = replay_json(dir.path());
    assert_usage(
        &flashkit(&["report", s(&json), "--html", s(dir.path())]),
        "is a directory: give a file's path",
    );
}

/// A torn last line (a sweep still writing, or killed mid-write) is left out with a note; it
/// was left out silently.
#[test]
fn a_torn_last_line_is_left_out_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = small_sweep(dir.path(), "\"device.op\" = [0.1, 0.2, 0.3]\n");
    let jsonl = out.join("results.jsonl");
    let whole = std::fs::read_to_string(&jsonl).expect("results");
    let lines: Vec<&str> = whole.lines().collect();
    assert_eq!(lines.len(), 3);
    let torn = format!(
        "{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 2]
    );
    std::fs::write(&jsonl, torn).expect("write");
    let html = dir.path().join("r.html");
    let output = flashkit(&["report", s(&out), "--html", s(&html)]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("note: left out the torn last line of"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("(2 runs, "), "{}", stdout(&output));
}

/// `--html P --svg P` drew the figures into a directory P and then failed to write the page;
/// an `--html` over a sweep's own `cells.json` broke its resume. Both are refused before
/// anything is written.
#[test]
fn outputs_that_collide_are_refused_before_drawing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = replay_json(dir.path());
    let page = dir.path().join("out.html");
    for flag in ["--svg", "--png"] {
        assert_usage(
            &flashkit(&["report", s(&json), "--html", s(&page), flag, s(&page)]),
            &format!("--html and {flag} both name"),
        );
        assert!(!page.exists(), "nothing written");
    }
    assert_usage(
        &flashkit(&["report", s(&json), "--svg", s(&json)]),
        "a file is there; give a directory",
    );

    let out = small_sweep(dir.path(), "");
    for own in ["cells.json", "results.csv"] {
        let target = out.join(own);
        let before = std::fs::read(&target).expect("the sweep wrote it");
        assert_usage(
            &flashkit(&["report", s(&out), "--html", s(&target)]),
            "is an input of this run",
        );
        assert_eq!(std::fs::read(&target).expect("kept"), before);
    }
}

/// The figures are written in the page's order under numbered names: a swept parameter
/// against each key metric, then the wear and latency distributions; a run document
/// (nothing numeric swept) gets the metrics as bars instead. The page says what it holds.
#[test]
fn figures_are_written_in_the_pages_order_under_numbered_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let names = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("figures")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let metrics = [
        "flash-erases",
        "write-amplification",
        "elapsed-s",
        "gc-pages-moved",
        "write-p99-us",
        "mapping-packed-bytes",
    ];
    let out = small_sweep(dir.path(), "\"device.op\" = [0.1, 0.2, 0.3]\n");
    let (html, svg) = (dir.path().join("s.html"), dir.path().join("s"));
    let output = flashkit(&["report", s(&out), "--html", s(&html), "--svg", s(&svg)]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("(3 runs, 8 figures)"),
        "{}",
        stdout(&output)
    );
    let mut expected: Vec<String> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{:02}-{m}-vs-device-op.svg", i + 1))
        .collect();
    expected.extend(["07-wear-cdf.svg".into(), "08-write-latency-ccdf.svg".into()]);
    assert_eq!(names(&svg), expected);
    let page = std::fs::read_to_string(&html).expect("page");
    assert!(
        page.contains("<title>flashkit results: out</title>"),
        "{page}"
    );
    assert!(page.contains("3 runs (3 finished, 0 failed). Swept parameters: device.op."));
    assert_eq!(page.matches("<figure>").count(), 8, "every figure inline");

    let json = replay_json(dir.path());
    let svg = dir.path().join("r");
    let output = flashkit(&["report", s(&json), "--svg", s(&svg)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let mut expected: Vec<String> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{:02}-{m}.svg", i + 1))
        .collect();
    expected.extend(["07-wear-cdf.svg".into(), "08-write-latency-ccdf.svg".into()]);
    assert_eq!(names(&svg), expected);
}
