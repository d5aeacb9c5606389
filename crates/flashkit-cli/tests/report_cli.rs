//! `flashkit report` on inputs it should question: foreign JSON, an output that is a
//! directory, a results file whose last line is torn.

mod common;
use common::flashkit;

use std::path::Path;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

/// A small replay's `--json` in `dir`: a run document to report on.
fn replay_json(dir: &Path) -> std::path::PathBuf {
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
    assert!(output.status.success(), "{}", text(&output.stderr));
    json
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
    let output = flashkit(&["report", s(&doc), "--html", s(&html)]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr)
            .contains("neither a sweep's results.jsonl nor a --json document with \"runs\""),
        "{}",
        text(&output.stderr)
    );
    let json = replay_json(dir.path());
    let output = flashkit(&["report", s(&json), "--html", s(dir.path())]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("is a directory: give a file's path"),
        "{}",
        text(&output.stderr)
    );
}

/// A torn last line (a sweep still writing, or killed mid-write) is left out with a note; it
/// was left out silently.
#[test]
fn a_torn_last_line_is_left_out_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let grid = dir.path().join("g.toml");
    std::fs::write(
        &grid,
        "name = \"torn\"\n[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n\
         [grid]\nftl = [\"page\"]\n\"device.op\" = [0.1, 0.2, 0.3]\n",
    )
    .expect("write");
    let out = dir.path().join("out");
    let output = flashkit(&["sweep", s(&grid), "--out", s(&out), "--jobs", "1"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
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
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("note: left out the torn last line of"),
        "{}",
        text(&output.stderr)
    );
    assert!(
        text(&output.stdout).contains("(2 runs, "),
        "{}",
        text(&output.stdout)
    );
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
        let output = flashkit(&["report", s(&json), "--html", s(&page), flag, s(&page)]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains(&format!("--html and {flag} both name")),
            "{}",
            text(&output.stderr)
        );
        assert!(!page.exists(), "nothing written");
    }
    let output = flashkit(&["report", s(&json), "--svg", s(&json)]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("a file is there; give a directory"));

    let grid = dir.path().join("g.toml");
    std::fs::write(
        &grid,
        "name = \"own\"\n[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n\
         [grid]\nftl = [\"page\"]\n",
    )
    .expect("write");
    let out = dir.path().join("sweep");
    let output = flashkit(&["sweep", s(&grid), "--out", s(&out)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    for own in ["cells.json", "results.csv"] {
        let target = out.join(own);
        let before = std::fs::read(&target).expect("the sweep wrote it");
        let output = flashkit(&["report", s(&out), "--html", s(&target)]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains("is an input of this run"),
            "{}",
            text(&output.stderr)
        );
        assert_eq!(std::fs::read(&target).expect("kept"), before);
    }
}
