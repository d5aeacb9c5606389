//! `flashkit sweep` and `flashkit report` end to end.

mod common;
use common::flashkit;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 temporary path")
}

/// 3 GC policies x 5 over-provisioning values on a small device: 15 quick runs.
const SWEEP: &str = r#"
name = "test sweep"
[base.device]
capacity = "64M"
[base.workload]
requests = "4k"
[grid]
"ftl.gc" = ["greedy", "cost-benefit", "fifo"]
[grid.device]
op = [0.07, 0.1, 0.15, 0.2, 0.3]
"#;

/// Write `sweep` to `file` and run it: a usage error (exit 2) naming `needle`, and nothing
/// ran (no results file in the output directory).
fn assert_refused(file: &Path, sweep: &str, needle: &str) {
    std::fs::write(file, sweep).expect("write");
    let out = file.with_file_name("out");
    let output = flashkit(&["sweep", s(file), "--out", s(&out)]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{sweep}: {}",
        text(&output.stderr)
    );
    assert!(
        text(&output.stderr).contains(needle),
        "{needle:?} not in {}",
        text(&output.stderr)
    );
    assert!(!out.join("results.jsonl").exists(), "nothing ran");
}

fn ids(results: &Path) -> Vec<String> {
    std::fs::read_to_string(results)
        .expect("results")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")["id"]
                .as_str()
                .expect("id")
                .to_string()
        })
        .collect()
}

#[test]
fn a_sweep_records_every_cell_and_resume_runs_only_the_missing_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, SWEEP).expect("write");
    let out = dir.path().join("out");
    let first = flashkit(&["sweep", s(&file), "--out", s(&out), "--jobs", "2"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(
        text(&first.stdout).contains("15 cells; ran 15 (15 ok, 0 failed)"),
        "{}",
        text(&first.stdout)
    );
    let results = out.join("results.jsonl");
    let all = ids(&results);
    assert_eq!(all.len(), 15);
    assert_eq!(
        all.iter().collect::<BTreeSet<_>>().len(),
        15,
        "each cell once"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 16, "a header and a row per run");

    // Resuming a finished sweep runs nothing and leaves every byte as it was. Found by an
    // outside bad-input hunt: results were read back with serde_json's fast float parser,
    // 1 ulp off for some values, and rewritten (0.47915742374995507 became
    // 0.479157423749955).
    let (jsonl, csv) = (
        std::fs::read(&results).expect("jsonl"),
        std::fs::read(out.join("results.csv")).expect("csv"),
    );
    let resumed = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(
        std::fs::read(&results).expect("jsonl") == jsonl,
        "results.jsonl changed"
    );
    assert!(
        std::fs::read(out.join("results.csv")).expect("csv") == csv,
        "results.csv changed"
    );

    // Running again without --resume would mix two sweeps: refused.
    let again = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("--resume"),
        "{}",
        text(&again.stderr)
    );

    // Lose four results, the last one torn mid-line as a killed process leaves it.
    let content = std::fs::read_to_string(&results).expect("read");
    let mut lines: Vec<&str> = content.lines().collect();
    lines.truncate(11);
    let torn = &content.lines().nth(11).expect("a 12th line")[..40];
    std::fs::write(&results, format!("{}\n{torn}", lines.join("\n"))).expect("write");
    let resumed = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let stdout = text(&resumed.stdout);
    assert!(
        stdout.contains("ran 4 (4 ok, 0 failed)") && stdout.contains("skipped 11"),
        "{stdout}"
    );
    assert!(
        text(&resumed.stderr).contains("torn last line"),
        "{}",
        text(&resumed.stderr)
    );
    let after = ids(&results);
    assert_eq!(after.len(), 15);
    assert_eq!(
        after.iter().collect::<BTreeSet<_>>(),
        all.iter().collect::<BTreeSet<_>>()
    );
}

#[test]
fn a_killed_sweep_resumes_to_completion() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    // Runs long enough (about a tenth of a second each) that the kill lands mid-sweep.
    std::fs::write(&file, SWEEP.replace("\"4k\"", "\"150k\"")).expect("write");
    let out = dir.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashkit"))
        .args(["sweep", s(&file), "--out", s(&out), "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let results = out.join("results.jsonl");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&results).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "the sweep produced no results");
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let finished_on_its_own = child.try_wait().expect("wait").is_some();
    let _ = child.kill();
    let _ = child.wait();
    let done_before = ids(&results).len();
    assert!(
        !finished_on_its_own && done_before < 15,
        "the sweep ended before it could be interrupted"
    );
    let resumed = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let stdout = text(&resumed.stdout);
    assert!(
        stdout.contains(&format!("skipped {done_before}")),
        "{stdout}"
    );
    let after = ids(&results);
    assert_eq!(after.len(), 15, "every cell exactly once");
    assert_eq!(after.iter().collect::<BTreeSet<_>>().len(), 15);
}

#[test]
fn a_failed_run_is_recorded_and_the_others_finish() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    // Blocks that survive two erases wear out during preconditioning: a runtime failure.
    let sweep = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"2k\"\n[grid]\n\"device.endurance\" = [100000, 2]\n\"ftl.gc\" = [\"greedy\", \"fifo\"]\n";
    std::fs::write(&file, sweep).expect("write");
    let out = dir.path().join("out");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
    assert!(
        text(&output.stderr).contains("2 of 4 runs failed"),
        "{}",
        text(&output.stderr)
    );
    let lines = std::fs::read_to_string(out.join("results.jsonl")).expect("results");
    let failed: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .filter(|v| v["status"] == "failed")
        .collect();
    assert_eq!(failed.len(), 2);
    assert!(
        failed[0]["error"]
            .as_str()
            .expect("error")
            .contains("out of space"),
        "{failed:?}"
    );
    assert!(
        failed
            .iter()
            .all(|f| f["params"]["device.endurance"] == "2")
    );

    // A trace file that does not exist is refused before anything runs.
    std::fs::write(&file, "[grid]\ntrace = [\"missing.fkt\"]\n").expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&dir.path().join("other"))]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("missing.fkt"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn the_report_is_self_contained_with_parseable_figures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, SWEEP).expect("write");
    let out = dir.path().join("out");
    assert!(
        flashkit(&["sweep", s(&file), "--out", s(&out)])
            .status
            .success()
    );
    let html_path = dir.path().join("report.html");
    let svg_dir = dir.path().join("svg");
    let output = flashkit(&[
        "report",
        s(&out),
        "--html",
        s(&html_path),
        "--svg",
        s(&svg_dir),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let html = std::fs::read_to_string(&html_path).expect("html");
    for caption in [
        "Block erases against device.op",
        "Write amplification against device.op",
        "Wear: erase-count distribution",
        "Write latency tail",
    ] {
        assert!(html.contains(caption), "missing figure {caption:?}");
    }
    let svgs: Vec<&str> = html
        .split("<svg ")
        .skip(1)
        .map(|rest| &rest[..rest.find("</svg>").expect("closed") + 6])
        .collect();
    assert!(svgs.len() >= 8, "{} figures", svgs.len());
    for svg in &svgs {
        roxmltree::Document::parse(&format!("<svg {svg}"))
            .expect("every inline figure is valid SVG");
    }
    assert_eq!(
        std::fs::read_dir(&svg_dir).expect("svg dir").count(),
        svgs.len()
    );
    assert!(html.contains("class=\"sortable\""), "the runs table sorts");
    let rows = html.matches("<tr>").count();
    assert_eq!(rows, 16, "a header row and 15 runs");
    let without_svg_namespace = html.replace("http://www.w3.org/2000/svg", "");
    assert!(
        !without_svg_namespace.contains("http"),
        "nothing to fetch from the network"
    );

    let usage = flashkit(&["report", s(&out)]);
    assert_eq!(usage.status.code(), Some(2));
    // A directory without results.jsonl (a `reproduce --out` one, say) is named, with what
    // report reads instead.
    let empty = tempfile::tempdir().expect("tempdir");
    let usage = flashkit(&[
        "report",
        s(empty.path()),
        "--svg",
        s(&empty.path().join("f")),
    ]);
    assert_eq!(usage.status.code(), Some(2));
    let stderr = text(&usage.stderr);
    assert!(
        stderr.contains("has no results.jsonl") && stderr.contains(s(empty.path())),
        "{stderr}"
    );
}

/// Two cells that are one run are refused before anything runs: `seed = [1, 1]` ran the
/// cell twice under one id, and `64M` beside `64MiB` (or `t.csv` beside `./t.csv`) drew one
/// run as two points. (A grid `seed` beside a grid `run.seed` is one setting given twice,
/// refused as such: see `a_grid_setting_given_twice_is_refused_naming_both`.)
#[test]
fn two_cells_that_are_one_run_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(
        dir.path().join("t.csv"),
        "time_ns,op,offset,size\n0,write,0,4096\n1,read,0,4096\n",
    )
    .expect("write");
    let base = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n[grid]\n";
    for grid in [
        "ftl = [\"page\"]\nseed = [1, 1]\n",
        "trace = [\"t.csv\", \"./t.csv\"]\n",
        "\"device.capacity\" = [\"64M\", \"64MiB\"]\n",
    ] {
        assert_refused(&file, &format!("{base}{grid}"), "are the same run");
    }
}

/// A `--json` document whose runs are not run reports is refused naming the run and field
/// (`{"runs": [1]}` was drawn as one run with no figures); runs a compare recorded as
/// failed are shown as failed.
#[test]
fn report_checks_each_run_and_shows_the_failed_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let doc = dir.path().join("r.json");
    let html = dir.path().join("r.html");
    for (json, needle) in [
        (
            "{\"runs\": [1]}",
            "runs[0]: field label: missing or not a string",
        ),
        (
            "{\"runs\": [{\"label\": \"x\"}]}",
            "runs[0]: field flash.programs: missing or not an object",
        ),
    ] {
        std::fs::write(&doc, json).expect("write");
        let output = flashkit(&["report", s(&doc), "--html", s(&html)]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains(needle),
            "{}",
            text(&output.stderr)
        );
        assert!(!html.exists());
    }
    let output = flashkit(&[common::COMPARE_BLOCK_WEARS_OUT, &["--json", s(&doc)]].concat());
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let output = flashkit(&["report", s(&doc), "--html", s(&html)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(
        page.contains("failed: request "),
        "the block run's failure is shown"
    );
}

#[test]
fn zero_workers_are_a_usage_error_not_a_panic() {
    // Found by the bad-input sweep: `--jobs 0` (or `jobs = 0` in the file) indexed an empty
    // list of progress bars and panicked with exit code 101.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    let sweep = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n[grid]\nftl = [\"page\"]\n";
    std::fs::write(&file, sweep).expect("write");
    let out = dir.path().join("out");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--jobs", "0"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("--jobs is 0"),
        "{}",
        text(&output.stderr)
    );
    std::fs::write(&file, format!("jobs = 0\n{sweep}")).expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    // Refused where the file is read, at its line (the message named no line before).
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("sweep.toml: TOML parse error at line 1")
            && stderr.contains("jobs is 0; a sweep needs at least one worker"),
        "{stderr}"
    );
    assert!(!out.join("results.jsonl").exists(), "nothing ran");
}

/// A grid option that its cells would ignore is refused before anything runs: every cell
/// would come out the same, and the sweep would seem to show that the option does nothing.
#[test]
fn a_grid_option_its_cells_ignore_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    let trace = dir.path().join("t.csv");
    std::fs::write(
        &trace,
        "time_ns,op,offset,size\n0,write,0,4096\n1,read,0,4096\n2,write,8192,4096\n",
    )
    .expect("write");
    let base =
        "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\ntheta = 0.5\n";
    for (grid, needle) in [
        (
            "[grid]\n\"workload.theta\" = [0.5, 0.9]\n",
            "--theta applies to --workload zipf, but the workload is hot-cold",
        ),
        (
            "[grid]\n\"trace.asu\" = [1]\n",
            "trace.asu is an option for reading a trace, and the cell runs the built-in workload",
        ),
        (
            "[grid]\ntrace = [\"t.csv\"]\n\"workload.requests\" = [\"1k\", \"2k\"]\n",
            "workload.requests is an option for the built-in workload, and the cell replays a trace",
        ),
        (
            "[grid]\nftl = [\"page\", \"bast\"]\n\"ftl.log_blocks\" = [4, 8]\n",
            "grid cell ftl=page, ftl.log_blocks=4: ftl.log_blocks is an option for bast, fast and \
             ofast, and the cell runs page",
        ),
    ] {
        assert_refused(&file, &format!("{base}{grid}"), needle);
    }
    // The base may hold an option its cells do not use (theta above, for a zipf cell).
    std::fs::write(
        &file,
        format!("{base}[grid]\n\"workload.workload\" = [\"zipf\", \"uniform\"]\n"),
    )
    .expect("write");
    let out = dir.path().join("ok");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(String::from)
        .collect()
}

/// `--resume` reused results made under another `[base]` (the cell id names only the grid
/// values) and mixed them with new ones: now a recorded cell whose run differs from what the
/// file gives it, or that the grid no longer has, is refused saying what differs. A new grid
/// value, or a setting spelt another way, resumes.
#[test]
fn resume_refuses_results_made_under_other_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("r.toml");
    let experiment = "name = \"r\"\n[base.device]\ncapacity = \"64M\"\n[base.workload]\n\
                      requests = \"1k\"\n[grid]\nftl = [\"page\"]\n\"device.op\" = [0.1, 0.2]\n";
    std::fs::write(&file, experiment).expect("write");
    let out = dir.path().join("ro");
    let first = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let results = out.join("results.jsonl");
    let recorded = lines(&results);

    // Another base: refused, naming the cell, the setting and what to do; nothing changes.
    std::fs::write(&file, experiment.replace("\"1k\"", "\"5k\"")).expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    for needle in [
        "holds results made under other settings than",
        "cell device.op=0.1;ftl=page (and 1 other cell)",
        "workload.requests: \"1k\" before, \"5k\" now",
        "use a new --out, or --force instead of --resume",
    ] {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    assert_eq!(
        lines(&results),
        recorded,
        "the results are left as they were"
    );
    assert!(
        out.join("cells.json").exists(),
        "what each cell ran is kept"
    );

    // The same run spelt another way resumes, and so does a new grid value: only the new
    // cell runs.
    std::fs::write(
        &file,
        experiment
            .replace("\"64M\"", "\"64MiB\"")
            .replace("[0.1, 0.2]", "[0.1, 0.2, 0.3]"),
    )
    .expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("3 cells; ran 1 (1 ok, 0 failed)") && stdout.contains("skipped 2"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 4, "{csv}");

    // A grid without some recorded cells: refused rather than left among the results.
    std::fs::write(&file, experiment.replace("[0.1, 0.2]", "[0.1]")).expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stdout));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("holds results of 2 cells that the grid of")
            && stderr.contains("device.op=0.2;ftl=page, device.op=0.3;ftl=page"),
        "{stderr}"
    );

    // A directory written before cells.json was: refused with a reason, not a panic.
    std::fs::remove_file(out.join("cells.json")).expect("remove");
    std::fs::write(&file, experiment.replace("[0.1, 0.2]", "[0.1, 0.2, 0.3]")).expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stdout));
    assert!(
        text(&output.stderr).contains("holds results but no cells.json"),
        "{}",
        text(&output.stderr)
    );
    // --force starts over.
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--force"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(ids(&results).len(), 3);
}

/// A trace file whose content changed since its cells ran is another experiment.
#[test]
fn resume_refuses_results_of_a_trace_that_changed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("t.csv");
    std::fs::write(
        &trace,
        "time_ns,op,offset,size\n0,write,0,4096\n1,read,0,4096\n",
    )
    .expect("write");
    let file = dir.path().join("sweep.toml");
    std::fs::write(
        &file,
        "[base.device]\ncapacity = \"64M\"\n[grid]\ntrace = [\"t.csv\"]\n\"device.op\" = [0.1, 0.2]\n",
    )
    .expect("write");
    let out = dir.path().join("out");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("ran 0"));
    std::fs::write(
        &trace,
        "time_ns,op,offset,size\n0,write,0,4096\n1,write,8192,4096\n",
    )
    .expect("write");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--resume"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stdout));
    assert!(
        text(&output.stderr).contains("trace content: "),
        "{}",
        text(&output.stderr)
    );
}

/// One setting given twice in the grid (`"device.op"` beside `[grid.device] op`, `seed`
/// beside `run.seed`) kept one of them silently, or ran a seed other than the one recorded:
/// refused, naming both spellings and their lines.
#[test]
fn a_grid_setting_given_twice_is_refused_naming_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    let base = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n[grid]\nftl = [\"page\"]\n";
    for (grid, needle) in [
        (
            "\"device.op\" = [0.1]\n[grid.device]\nop = [0.2]\n",
            "line 7 (\"device.op\" in [grid]) and line 9 (op in [grid.device]) both set device.op: \
             keep one",
        ),
        (
            "\"device.op\" = [0.1]\n[grid.device]\nop = [0.2, 0.3]\n",
            "both set device.op",
        ),
        (
            "\"run.seed\" = [1]\nseed = [2]\n",
            "line 7 (\"run.seed\" in [grid]) and line 8 (seed in [grid]) both set run.seed (a \
             grid seed is run.seed): keep one",
        ),
        (
            "seed = [2]\n[grid.run]\nseed = [1]\n",
            "line 7 (seed in [grid]) and line 9 (seed in [grid.run]) both set run.seed",
        ),
    ] {
        assert_refused(&file, &format!("{base}{grid}"), needle);
    }
}

/// The finished results.csv lists the cells in the grid's order, whichever worker finished
/// first: two runs of one sweep on two workers wrote their rows in different orders.
#[test]
fn results_csv_is_in_grid_order_on_any_number_of_workers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(
        &file,
        "name = \"order\"\n[base.device]\ncapacity = \"64M\"\n[base.workload]\n\
         requests = \"2k\"\n[grid]\nftl = [\"page\", \"fast\", \"block\"]\n\
         \"device.op\" = [0.3, 0.1]\n",
    )
    .expect("write");
    let mut files = Vec::new();
    for jobs in ["1", "2", "2"] {
        let out = dir.path().join(format!("out{}", files.len()));
        let output = flashkit(&["sweep", s(&file), "--out", s(&out), "--jobs", jobs]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        files.push(std::fs::read_to_string(out.join("results.csv")).expect("csv"));
    }
    let ids: Vec<&str> = files[0]
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().expect("id"))
        .collect();
    assert_eq!(
        ids,
        [
            "device.op=0.3;ftl=page",
            "device.op=0.3;ftl=fast",
            "device.op=0.3;ftl=block",
            "device.op=0.1;ftl=page",
            "device.op=0.1;ftl=fast",
            "device.op=0.1;ftl=block",
        ],
        "the grid's keys in order, each one's values as listed"
    );
    assert_eq!(files[0], files[1]);
    assert_eq!(files[1], files[2]);
}

/// A cell runs one FTL: a list in one grid value or in the base (`"greedy,fifo"`) ran its
/// first value under an id naming them all.
#[test]
fn a_cell_with_a_list_of_ftl_options_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    let base = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n";
    for (sweep, needle) in [
        (
            format!(
                "{base}[grid]\nftl = [\"vet\"]\n\"ftl.vet_table\" = [\"swiss,std\", \"cuckoo\"]\n"
            ),
            "ftl.vet_table has several values, and a cell runs one FTL",
        ),
        (
            format!("{base}[base.ftl]\ngc = \"greedy,fifo\"\n[grid]\nftl = [\"page\"]\n"),
            "ftl.gc has several values, and a cell runs one FTL",
        ),
    ] {
        assert_refused(&file, &sweep, needle);
    }
}

/// An empty `[grid]` ran one cell with an empty id: refused, as is an empty grid table.
#[test]
fn an_empty_grid_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    let base = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = \"1k\"\n[grid]\n";
    for (grid, needle) in [
        ("", "sweep.toml: [grid] has no keys"),
        (
            "[grid.device]\n",
            "sweep.toml: line 6: [grid.device] has no keys",
        ),
    ] {
        assert_refused(&file, &format!("{base}{grid}"), needle);
    }
}

/// An unknown key or a value of the wrong type in `[base.*]` or `[grid]` is named with its
/// line (it was reported as a "grid cell" error, without one, even for a `[base]` key).
#[test]
fn a_bad_key_or_value_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    for (sweep, needle) in [
        (
            "[base.device]\ncapacity = \"64M\"\nop = \"x\"\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: line 3: base.device.op: invalid type: string \"x\", expected f64",
        ),
        (
            "[base.device]\ncapcity = \"64M\"\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: line 2: base.device.capcity: unknown field `capcity`",
        ),
        (
            "[base.devise]\ncapacity = \"64M\"\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: line 1: base.devise: unknown field `devise`",
        ),
        (
            "[base]\n\"device.op\" = 0.1\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: line 2: base.\"device.op\": unknown field `device.op`",
        ),
        (
            "[grid]\nftl = [\"page\"]\n\"device.op\" = [\n  0.1,\n  \"x\",\n]\n",
            "sweep.toml: line 5: grid key device.op: invalid type: string \"x\", expected f64",
        ),
        (
            "[grid]\nftl = [\"page\"]\n[grid.device]\nopp = [0.1]\n",
            "sweep.toml: line 4: grid key device.opp: unknown field `opp`",
        ),
        (
            "[grid]\nftl = [\"page\", \"pag\"]\n",
            "sweep.toml: line 2: grid ftl: unknown FTL \"pag\"",
        ),
        (
            "[grid]\nftl = [\"page\"]\nfoo = [1]\n",
            "sweep.toml: line 3: grid key \"foo\" is neither ftl, trace, seed nor section.option",
        ),
        // Found by the mutation hunt (tests/hunt.rs): these named the file or the cell but
        // not the line.
        (
            "jobs = 0\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: TOML parse error at line 1",
        ),
        (
            "[base.workload]\nworkload = \"nope\"\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml: line 2: base.workload.workload: unknown workload \"nope\"",
        ),
        (
            "[base.device]\ncapacity = \"1P\"\n[grid]\nftl = [\"page\"]\n",
            "sweep.toml, line 2 ([base.device] capacity = \"1P\"): cell ftl=page: device: ",
        ),
        (
            "[base.device]\ncapacity = \"64M\"\n[grid]\nftl = [\"page\"]\n\"ftl.gc\" = \
             [\"greedy,fifo\"]\n",
            "sweep.toml, line 5 (\"ftl.gc\" in [grid] \"greedy,fifo\"): ",
        ),
        (
            "[base.workload]\nread_fraction = 0.7\ntrim_fraction = 0.5\n[grid]\nftl = [\"page\"]\n",
            "line 2 ([base.workload] read_fraction = 0.7) and line 3 ([base.workload] \
             trim_fraction = 0.5): cell ftl=page: invalid workload: read_fraction + \
             trim_fraction exceeds 1",
        ),
        (
            "[base.device]\ncapacity = \"64M\"\n# caf\u{e9}\n[grid]\nftl = [\"page\"]\n",
            "",
        ),
    ] {
        if needle.is_empty() {
            // A byte that is not UTF-8 (written raw below): its line and column.
            let mut bytes = sweep.as_bytes().to_vec();
            let at = bytes
                .windows(2)
                .position(|w| w == [0xc3, 0xa9])
                .expect("the é");
            bytes.splice(at..at + 2, [0xe9]);
            std::fs::write(&file, bytes).expect("write");
            let output = flashkit(&["sweep", s(&file), "--out", s(&dir.path().join("out"))]);
            assert_eq!(output.status.code(), Some(2));
            assert!(
                text(&output.stderr)
                    .contains("sweep.toml: line 3, column 6: byte 0xe9 is not UTF-8"),
                "{}",
                text(&output.stderr)
            );
            continue;
        }
        assert_refused(&file, sweep, needle);
    }
}

/// Found by an outside bad-input hunt: a `--resume` started while another sweep wrote the
/// same directory interleaved their results (20 lines, 8 ids twice). The directory is locked;
/// a second writer is refused before it writes anything.
#[test]
fn a_second_sweep_writing_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, SWEEP).expect("write");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("mkdir");
    // This process stands for the first sweep: it holds the directory's lock.
    let held = std::fs::File::open(&out).expect("open");
    held.try_lock().expect("lock");
    for extra in [&[][..], &["--resume"]] {
        let mut args = vec!["sweep", s(&file), "--out", s(&out)];
        args.extend_from_slice(extra);
        let output = flashkit(&args);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains("is being written by another flashkit sweep"),
            "{}",
            text(&output.stderr)
        );
        assert_eq!(
            std::fs::read_dir(&out).expect("list").count(),
            0,
            "nothing written"
        );
    }
    drop(held);
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
}

/// `jobs = 100000` started a thread and a progress bar per job, turning a 0.02 s sweep into
/// 10 s: workers are capped at the cells to run.
#[test]
fn workers_are_capped_at_the_cells_to_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, format!("jobs = 100000\n{SWEEP}")).expect("write");
    let out = dir.path().join("out");
    let output = flashkit(&["sweep", s(&file), "--out", s(&out)]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains("ran 15 (15 ok, 0 failed)")
            && text(&output.stdout).contains("with 15 workers"),
        "{}",
        text(&output.stdout)
    );
}

/// Found by the same hunt: on a full disk a sweep left `cells.json.tmp` (0 B) and an empty
/// `results.jsonl`, and report an empty figure directory. A command that fails before it
/// has anything to keep removes what it created.
#[test]
fn a_full_disk_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("sweep.toml");
    std::fs::write(&file, SWEEP).expect("write");
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).expect("mkdir");
    let out = disk.join("out");
    // 4 KiB: a tmpfs page; cells.json for 15 cells needs more.
    let Some(full) = common::on_full_disk(&disk, 4, &["sweep", s(&file), "--out", s(&out)]) else {
        return;
    };
    assert_eq!(
        full.output.status.code(),
        Some(1),
        "{}",
        text(&full.output.stderr)
    );
    assert!(
        text(&full.output.stderr).contains("No space left on device"),
        "{}",
        text(&full.output.stderr)
    );
    assert!(full.left.is_empty(), "left behind: {:?}", full.left);

    // A report's figures: all of them or none.
    let results = dir.path().join("results");
    let first = flashkit(&["sweep", s(&file), "--out", s(&results)]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let figures = disk.join("figures");
    let full = common::on_full_disk(&disk, 4, &["report", s(&results), "--svg", s(&figures)])
        .expect("made once already");
    assert_eq!(
        full.output.status.code(),
        Some(1),
        "{}",
        text(&full.output.stderr)
    );
    assert!(full.left.is_empty(), "left behind: {:?}", full.left);

    // A reproduction's figures too.
    let fast = disk.join("fast");
    let args = ["reproduce", "fast", "--quick", "--out", s(&fast)];
    let full = common::on_full_disk(&disk, 4, &args).expect("made once already");
    assert_eq!(
        full.output.status.code(),
        Some(1),
        "{}",
        text(&full.output.stderr)
    );
    assert!(full.left.is_empty(), "left behind: {:?}", full.left);
}
