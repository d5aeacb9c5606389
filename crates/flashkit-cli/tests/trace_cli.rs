//! The trace commands end to end, through the `flashkit` binary: compare on every format's
//! sample, convert, stats, detect, and the exit codes and messages of bad input.
//!
//! Samples come from `../shared/traces/`; when one is missing the test fails if `CI=true`
//! and is skipped (with a message) otherwise.

mod common;
use common::flashkit;

use std::path::{Path, PathBuf};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sample(relative: &str) -> Option<String> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/"
    ))
    .join(relative);
    if path.exists() {
        return Some(path.display().to_string());
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI: the shared trace sample {} is missing",
        path.display()
    );
    eprintln!(
        "skipping: shared trace sample {} is not here",
        path.display()
    );
    None
}

#[test]
fn compare_on_the_msr_sample_prints_the_table() {
    let Some(trace) = sample("msr/hm_0.sample1000.csv") else {
        return;
    };
    let out = flashkit(&["compare", "--trace", &trace]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("page/greedy") && stdout.contains("page/fifo"),
        "{stdout}"
    );
    assert!(
        stdout.contains("host requests") && stdout.contains("1,000"),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("(msr), 1000 requests"));
}

#[test]
fn compare_reads_one_sample_of_every_format() {
    let samples = [
        ("spc/WebSearch1.first10.spc", "10"),
        (
            "fiu/cheetah.cs.fiu.edu-110108-113008.2.first9998.blkparse.gz",
            "9,998",
        ),
        ("blkparse/wiscsee_blkparse-output.txt", "673"),
        ("systor/systor17-additional-sample.csv", "999"),
        ("tencent/cloud_storage-sample.csv.gz", "50,000"),
        ("cloudphysics/cloudPhysicsIO.csv.gz", "113,872"),
        ("disksim/tpcc-small.trace", "6,999"),
    ];
    for (relative, requests) in samples {
        let Some(trace) = sample(relative) else {
            return;
        };
        // Fresh drives keep the test quick; the README's command preconditions.
        let out = flashkit(&[
            "compare",
            "--trace",
            &trace,
            "--gc",
            "greedy",
            "--no-precondition",
        ]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{relative}: {}", text(&out.stderr));
        let line = stdout
            .lines()
            .find(|l| l.starts_with("host requests"))
            .unwrap_or_default();
        assert!(line.ends_with(requests), "{relative}: {line}");
    }
}

struct Files(tempfile::TempDir);

impl Files {
    fn new() -> Files {
        Files(tempfile::tempdir().expect("tempdir"))
    }

    fn write(&self, name: &str, contents: &str) -> String {
        let path = self.0.path().join(name);
        std::fs::write(&path, contents).expect("write");
        path.display().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }
}

const MSR: &str = "128166385295514663,hm,0,Write,9056014336,8192,2833\n\
                   128166385295514878,hm,0,Read,11855351808,4096,2617\n\
                   128166385295515175,hm,0,Write,5548077056,4096,2320\n";

/// A pipe is refused, not read: a trace is read more than once, and the second read of a
/// pipe found nothing (`trace stats <(zcat t.gz)` printed 0 requests and exit 0) or, for a
/// FIFO, waited for a writer forever. The same for `em sort --input`.
#[cfg(unix)]
#[test]
fn a_pipe_is_refused_as_an_input() {
    let files = Files::new();
    let fifo = files.path("trace.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for args in [
        vec!["trace", "stats", &fifo],
        vec!["trace", "detect", &fifo],
        vec!["trace", "convert", &fifo, "-o", "/dev/null"],
        vec!["replay", "--trace", &fifo],
        vec!["compare", "--trace", &fifo, "--format", "msr"],
    ] {
        let out = flashkit(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!("{fifo}: is a pipe, not a file"))
                && stderr.contains("save it to a file first"),
            "{args:?}: {stderr}"
        );
    }
    let out = flashkit(&[
        "em",
        "sort",
        "--input",
        &fifo,
        "--output",
        &files.path("out"),
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("is a pipe, not a file"),
        "{}",
        text(&out.stderr)
    );
}

/// `-` reads a trace from standard input (saved to a temporary file, since a trace is read
/// more than once): replayed, it gives the same report as the file but for its name, and
/// its errors and description say "standard input", never the temporary path.
#[test]
fn a_trace_on_standard_input_is_read_as_the_file_is() {
    use std::process::{Command, Stdio};
    let files = Files::new();
    let trace = files.write("t.csv", MSR);
    let run = |args: &[&str], input: &str| {
        Command::new(env!("CARGO_BIN_EXE_flashkit"))
            .args(args)
            .stdin(Stdio::from(std::fs::File::open(input).expect("open")))
            .output()
            .expect("the flashkit binary runs")
    };
    let (piped, file) = (files.path("piped.json"), files.path("file.json"));
    let out = run(&["replay", "--trace", "-", "--json", &piped], &trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = flashkit(&["replay", "--trace", &trace, "--json", &file]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |path: &str| std::fs::read_to_string(path).expect("json");
    assert_eq!(
        read(&piped),
        read(&file).replace(&format!("\"{trace} ("), "\"standard input ("),
        "the same run, the input named standard input"
    );
    let out = run(&["trace", "stats", "-"], &trace);
    assert!(out.status.success() && text(&out.stdout).contains("standard input"));
    let converted = files.path("c.csv");
    let out = run(&["trace", "convert", "-", "-o", &converted], &trace);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&["trace", "detect", "-"], &trace);
    assert!(
        text(&out.stdout).contains("chosen: msr"),
        "{}",
        text(&out.stdout)
    );
    let bad = files.write("bad.csv", &format!("{MSR}1,hm,0,Write,abc,4096,1\n"));
    for args in [
        &["replay", "--trace", "-", "--format", "msr"][..],
        &["trace", "stats", "-", "--format", "msr"],
        &["trace", "convert", "-", "-o", &converted, "--format", "msr"],
    ] {
        let out = run(args, &bad);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: standard input: line ") && !stderr.contains("flashkit-stdin"),
            "{args:?}: {stderr}"
        );
    }
}

/// A reading option for another format is a usage error naming the format, not ignored:
/// `--blkparse-event` on an MSR trace did nothing, and `--time-unit`'s refusal was
/// introduced as "invalid workload". `--address-map` on `trace stats`, `convert` or
/// `bench`, and `trace gen --capacity` beside `--span`, did nothing either.
#[test]
fn an_option_of_another_format_is_a_usage_error() {
    let files = Files::new();
    let trace = files.write("t.csv", MSR);
    for (option, value, needle) in [
        (
            "--blkparse-event",
            "Q",
            "error: --blkparse-event applies to blkparse traces;",
        ),
        (
            "--time-unit",
            "us",
            "error: --time-unit applies to DiskSim traces and the generic CSV's time column;",
        ),
    ] {
        for args in [
            vec!["trace", "stats", &trace, option, value],
            vec!["replay", "--trace", &trace, option, value],
        ] {
            let out = flashkit(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(needle) && (stderr.contains("is msr") || stderr.contains("(msr)")),
                "{args:?}: {stderr}"
            );
            assert!(!stderr.contains("invalid workload"), "{stderr}");
        }
    }
    // In a generic CSV only a bare `time` column takes --time-unit; it did nothing to a
    // `time_us` column or to a file without times.
    for (name, header, needle) in [
        (
            "us.csv",
            "time_us,op,offset,size",
            "names \"time_us\", which fixes its own unit",
        ),
        ("none.csv", "op,offset,size", "names no time column"),
    ] {
        let body = if header.starts_with("time") {
            "30,write,0,4096\n"
        } else {
            "write,0,4096\n"
        };
        let csv = files.write(name, &format!("# a comment\n{header}\n{body}"));
        for args in [
            vec!["trace", "stats", &csv, "--time-unit", "s"],
            vec![
                "replay",
                "--trace",
                &csv,
                "--time-unit",
                "s",
                "--capacity",
                "64M",
            ],
        ] {
            let out = flashkit(&args);
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(
                    "error: --time-unit sets the unit of the generic CSV's bare `time` column"
                ) && stderr.contains(needle),
                "{args:?}: {stderr}"
            );
        }
    }
    let bare = files.write("bare.csv", "time,op,offset,size\n2,write,0,4096\n");
    let out = flashkit(&["trace", "stats", &bare, "--time-unit", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The address map lays a trace onto a device, which only a replay has: stats, convert
    // and bench read the trace's own addresses and ignored it.
    let out_path = files.path("out.fkt");
    let output = out_path.as_str();
    for args in [
        vec!["trace", "stats", &trace, "--address-map", "identity"],
        vec![
            "trace",
            "convert",
            &trace,
            "-o",
            output,
            "--address-map",
            "compact",
        ],
        vec!["trace", "bench", &trace, "--address-map", "identity"],
    ] {
        let out = flashkit(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("reads the trace's own addresses: drop it"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let json = files.path("s.json");
    let out = flashkit(&[
        "trace",
        "stats",
        &trace,
        "--json",
        &json,
        "--wall-clock-in-json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("trace stats times nothing"));
    let out = flashkit(&[
        "trace",
        "gen",
        "-o",
        output,
        "--capacity",
        "1G",
        "--span",
        "512M",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--capacity is the address space when --span is not given"));
}

#[test]
fn a_malformed_line_exits_1_naming_file_line_field_and_text() {
    let files = Files::new();
    let trace = files.write("bad.csv", &format!("{MSR}1,hm,0,Read,12x4,4096,1\n{MSR}"));
    let out = flashkit(&["replay", "--trace", &trace]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{trace}: line 4: field Offset: \"12x4\" is not a whole number"
        )),
        "{stderr}"
    );
    let out = flashkit(&[
        "replay",
        "--trace",
        &trace,
        "--skip-bad-lines",
        "--no-precondition",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("skipped 1 malformed lines") && stderr.contains("line 4"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("host requests"));
}

#[test]
fn a_trace_larger_than_the_device_exits_2_saying_what_to_change() {
    let files = Files::new();
    let trace = files.write("hm.csv", MSR);
    let out = flashkit(&[
        "replay",
        "--trace",
        &trace,
        "--capacity",
        "64M",
        "--address-map",
        "identity",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("raise --capacity to at least") && stderr.contains("--address-map compact"),
        "{stderr}"
    );
    let out = flashkit(&["replay", "--trace", &trace, "--capacity", "64M"]);
    assert!(
        out.status.success(),
        "compact mapping fits: {}",
        text(&out.stderr)
    );
    // On a device too small for the FTL as well, the trace's size is what to say first (the
    // FTL's spare-block error said nothing of the trace); in a sweep, before any cell runs
    // (it failed when its cell ran, exit 1).
    let out = flashkit(&[
        "replay",
        "--trace",
        &trace,
        "--capacity",
        "1M",
        "--address-map",
        "identity",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("raise --capacity to at least"),
        "{}",
        text(&out.stderr)
    );
    let sweep = files.write(
        "s.toml",
        "name = \"small\"\n[base.device]\ncapacity = \"64M\"\n[base.trace]\naddress_map = \
         \"identity\"\n[grid]\nftl = [\"page\"]\ntrace = [\"hm.csv\"]\n",
    );
    let out_dir = files.path("sweep-out");
    let out = flashkit(&["sweep", &sweep, "--out", &out_dir]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cell ftl=page;trace=hm.csv: trace ")
            && text(&out.stderr).contains("hm.csv needs a logical capacity"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !std::path::Path::new(&out_dir)
            .join("results.jsonl")
            .exists()
    );
}

#[test]
fn an_empty_trace_has_nothing_to_size_a_device_for() {
    let files = Files::new();
    let trace = files.write("empty.csv", "");
    let out = flashkit(&["replay", "--trace", &trace]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nothing to size a device for"));
    let out = flashkit(&["trace", "stats", &trace]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("empty"));
}

/// Flushes and zero-length requests are counted and skipped, and said so in the table and
/// the CSV as in the JSON (only the JSON had them).
#[test]
fn skipped_requests_are_in_every_report() {
    let files = Files::new();
    let trace = files.write(
        "z.csv",
        "time_us,op,offset,size\n0,write,0,4096\n20,read,0,4096\n100,flush,0,0\n120,write,8192,0\n",
    );
    let (json, csv) = (files.path("z.json"), files.path("z-out.csv"));
    let out = flashkit(&["replay", "--trace", &trace, "--json", &json, "--csv", &csv]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for row in ["flush requests (skipped)", "zero-length requests (skipped)"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{row}: {stdout}"));
        assert!(line.trim_end().ends_with(" 1"), "{line}");
    }
    let csv = std::fs::read_to_string(&csv).expect("csv");
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).expect("row").split(',').collect();
    for key in ["flush_requests", "zero_length_requests"] {
        let i = header
            .iter()
            .position(|h| *h == key)
            .unwrap_or_else(|| panic!("{key}: {csv}"));
        assert_eq!(row[i], "1", "{key}");
    }
}

#[test]
fn convert_to_binary_and_csv_keeps_every_request() {
    let files = Files::new();
    let trace = files.write("hm.csv", MSR);
    let binary = files.path("hm.fkt");
    let csv = files.path("hm-generic.csv");
    for output in [&binary, &csv] {
        let out = flashkit(&["trace", "convert", &trace, "-o", output]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains("wrote 3 requests"));
    }
    let summary = |file: &str| -> serde_json::Value {
        let json = files.path("stats.json");
        let out = flashkit(&["trace", "stats", file, "--json", &json]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let document: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
        document["traces"][0]["summary"].clone()
    };
    let original = summary(&trace);
    assert_eq!(original["requests"], 3);
    assert_eq!(original["writes"]["bytes"], 12288);
    assert_eq!(summary(&binary), original);
    assert_eq!(summary(&csv), original);
    // A newline in the input's name split the CSV's comment line, and the second half was
    // then read as its header.
    let odd = files.write("hm\nname.csv", MSR);
    let odd_csv = files.path("odd.csv");
    let out = flashkit(&["trace", "convert", &odd, "-o", &odd_csv]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(summary(&odd_csv), original);
}

#[test]
fn detect_explains_and_stats_shows_volumes() {
    let files = Files::new();
    let trace = files.write(
        "asus.spc",
        "0,8,4096,R,0.1\n2,8,4096,w,0.2\n2,16,512,W,0.3\n",
    );
    let out = flashkit(&["trace", "detect", &trace]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("chosen: spc") && stdout.contains("msr"),
        "{stdout}"
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A file no format takes: every file is still explained, and the exit code says so.
    let garbage = files.write("garbage.txt", "not a trace\n");
    let out = flashkit(&["trace", "detect", &garbage, &trace]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("no format matches") && stdout.contains("chosen: spc"),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("no trace format matches")
            && text(&out.stderr).contains("garbage.txt"),
        "{}",
        text(&out.stderr)
    );
    let empty = files.write("empty.txt", "");
    let out = flashkit(&["trace", "detect", &empty]);
    assert!(
        out.status.success(),
        "an empty file is no error: {}",
        text(&out.stderr)
    );
    let out = flashkit(&["trace", "stats", &trace, "--volumes"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("by volume"), "{stdout}");
    let out = flashkit(&["trace", "stats", &trace, "--asu", "2"]);
    assert!(text(&out.stderr).contains("1 requests of other volumes"));
    // A replay of a volume the trace does not have replayed nothing, with only a note.
    let out = flashkit(&[
        "replay",
        "--trace",
        &trace,
        "--asu",
        "9",
        "--capacity",
        "1G",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--asu 9: none of the requests of"),
        "{}",
        text(&out.stderr)
    );
    let out = flashkit(&["trace", "stats", &trace, "--format", "msr"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a forced wrong format fails on line 1"
    );
    assert!(text(&out.stderr).contains("line 1"));
    let out = flashkit(&["trace", "stats", &trace, "--format", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    let unused: &Path = Path::new(&trace);
    assert!(unused.exists());
}
