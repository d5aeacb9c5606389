//! `flashkit em sort --records`, `em bfs` and `em dfs` on the simulator and with `--ftl` on
//! the FTLs: verification lines, the FTL's figures, device sizing, usage errors and
//! byte-identical JSON. Every run is small (well under a second in debug builds).

mod common;
use common::{flashkit, stderr, stdout};

use std::process::Output;

/// Run and require success; the standard output.
fn ok(args: &[&str]) -> String {
    let output = flashkit(args);
    assert!(
        output.status.success(),
        "flashkit {args:?} failed: {}",
        stderr(&output)
    );
    stdout(&output)
}

/// A usage or runtime error: the exit code, one `error:` line naming `needle`, no panic.
fn assert_error(output: &Output, code: i32, needle: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(code), "stderr: {err}");
    assert!(
        !err.contains("panicked"),
        "a panic is not an error message: {err}"
    );
    let lines: Vec<_> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "one clear sentence: {err}");
    assert!(lines[0].contains(needle), "expected {needle:?} in: {err}");
}

/// The upload and algorithm columns of a row of the FTL figures table.
fn figure(text: &str, label: &str) -> (f64, f64) {
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} row in:\n{text}"));
    let values: Vec<f64> = line[label.len()..]
        .split_whitespace()
        .map(|v| v.replace(',', "").parse().expect("a number"))
        .collect();
    assert_eq!(values.len(), 2, "upload and algorithm in {line:?}");
    (values[0], values[1])
}

/// 2^18 u64 records (2 MiB), 32 runs of 64 KiB merged two at a time (five passes, 12 MiB
/// written): on a device sized to the sort's four areas, the passes overwrite it and GC
/// must run.
const SORT: &[&str] = &[
    "em",
    "sort",
    "--records",
    "2^18",
    "--memory",
    "256K",
    "--br",
    "4K",
    "--bw",
    "16K",
    "--fan-in",
    "2",
];

fn assert_sort_verified(text: &str) {
    for needle in [
        "verified: keys in order across every block; multiset checksum",
        "read back: the output equals the input sorted by std's stable sort (262144 records)",
        "predicted by the plan: RDV 12.00 MiB, WRV 12.00 MiB",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn sort_on_the_page_ftl_collects_garbage_and_fifo_copies_what_greedy_finds_dead() {
    let greedy = ok(&[SORT, &["--ftl", "page"]].concat());
    assert_sort_verified(&greedy);
    assert!(greedy.contains("FTL page/greedy on mlc-4k"), "{greedy}");
    assert_eq!(figure(&greedy, "host pages written"), (512.0, 3072.0));
    assert!(figure(&greedy, "GC runs").1 > 0.0, "GC must run:\n{greedy}");
    // The sort discards every run it has merged (TRIM), so greedy GC finds whole blocks dead
    // and copies nothing; FIFO takes blocks in age order, the never-trimmed input included.
    assert_eq!(figure(&greedy, "GC pages moved").1, 0.0, "{greedy}");
    assert_eq!(figure(&greedy, "write amplification").1, 1.0, "{greedy}");
    let fifo = ok(&[SORT, &["--ftl", "page", "--gc", "fifo"]].concat());
    assert_sort_verified(&fifo);
    assert!(figure(&fifo, "GC runs").1 > 0.0, "{fifo}");
    assert!(figure(&fifo, "GC pages moved").1 > 0.0, "{fifo}");
    assert!(figure(&fifo, "write amplification").1 > 1.0, "{fifo}");
    assert_eq!(
        figure(&fifo, "write amplification").0,
        1.0,
        "the upload copies nothing"
    );
}

#[test]
fn sort_on_fast_merges_log_blocks_and_writes_more_than_the_host() {
    let text = ok(&[SORT, &["--ftl", "fast"]].concat());
    assert_sort_verified(&text);
    assert!(text.contains("FTL fast on mlc-4k"), "{text}");
    assert!(figure(&text, "GC runs").1 > 0.0, "merges must run:\n{text}");
    assert!(figure(&text, "switch merges").1 > 0.0, "{text}");
    let (_, programs) = figure(&text, "flash page programs");
    let (_, written) = figure(&text, "host pages written");
    let (_, wa) = figure(&text, "write amplification");
    assert!(wa > 1.0, "{text}");
    assert!((wa - programs / written).abs() < 1e-4, "{text}");
}

#[test]
fn records_without_ftl_sort_on_the_counting_simulator() {
    let text = ok(&[SORT, &["--record", "kv16", "--seed", "3"]].concat());
    assert!(
        text.contains("generated with seed 3 on the simulated device (with data)"),
        "{text}"
    );
    assert!(
        text.contains("read back: the output equals the input"),
        "{text}"
    );
    assert!(
        !text.contains("FTL figures"),
        "no FTL without --ftl:\n{text}"
    );
}

#[test]
fn bfs_on_the_page_ftl_finds_the_in_memory_levels() {
    let text = ok(&[
        "em",
        "bfs",
        "--ftl",
        "page",
        "--vertices",
        "2^14",
        "--io",
        "br",
        "--br",
        "4K",
        "--bw",
        "16K",
        "--memory",
        "256K",
    ]);
    assert!(
        text.contains("checked against an in-memory BFS: equal"),
        "{text}"
    );
    assert!(
        text.contains("the FTL run moved the same volumes"),
        "{text}"
    );
    assert!(
        text.contains("in whole erase blocks)"),
        "sized to the footprint:\n{text}"
    );
    assert!(figure(&text, "GC runs").1 > 0.0, "{text}");
    assert!(figure(&text, "write amplification").1 > 1.0, "{text}");
    assert_eq!(
        figure(&text, "host pages read").0,
        0.0,
        "the upload only writes"
    );
}

#[test]
fn dfs_on_the_extent_mapping_tree_finds_the_in_memory_order() {
    let text = ok(&[
        "em",
        "dfs",
        "--ftl",
        "emt",
        "--graph",
        "random",
        "--vertices",
        "2^14",
        "--io",
        "br",
        "--br",
        "4K",
        "--bw",
        "256K",
        "--memory",
        "1M",
        "--cache",
        "32K",
    ]);
    assert!(
        text.contains("visiting order checked against an in-memory DFS: equal"),
        "{text}"
    );
    assert!(text.contains("FTL emt/greedy"), "{text}");
    assert!(figure(&text, "GC runs").1 > 0.0, "{text}");
    assert!(figure(&text, "write amplification").1 > 1.0, "{text}");
}

#[test]
fn the_same_seed_gives_the_same_json_and_report_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut runs = Vec::new();
    for name in ["a", "b"] {
        let json = dir.path().join(format!("{name}.json"));
        let path = json.to_str().expect("UTF-8 path");
        let text = ok(&[SORT, &["--ftl", "fast", "--seed", "9", "--json", path]].concat());
        runs.push((text, std::fs::read(&json).expect("the JSON was written")));
    }
    assert_eq!(runs[0].0, runs[1].0, "the printed reports differ");
    assert_eq!(runs[0].1, runs[1].1, "the JSON files differ");
    let doc: serde_json::Value = serde_json::from_slice(&runs[0].1).expect("valid JSON");
    let algorithm = &doc["ftl"]["algorithm"];
    let programs = &algorithm["flash"]["programs"];
    let total: u64 = ["host", "gc", "wear_leveling", "metadata"]
        .iter()
        .map(|cause| programs[cause].as_u64().expect("a count"))
        .sum();
    let (_, printed) = figure(&runs[0].0, "flash page programs");
    assert_eq!(total as f64, printed, "the JSON has the printed figures");
    let wa = algorithm["write_amplification"].as_f64().expect("a ratio");
    assert!((wa - figure(&runs[0].0, "write amplification").1).abs() < 1e-4);
    assert_eq!(doc["seed"], 9);
    assert_eq!(doc["equals_std_sort"], true);
}

#[test]
fn a_capacity_below_the_footprint_is_refused_before_running() {
    let output = flashkit(&[SORT, &["--ftl", "page", "--capacity", "1M"]].concat());
    assert_error(
        &output,
        2,
        "--capacity 1048576 B is smaller than the sort's footprint",
    );
    let output = flashkit(&[
        "em",
        "dfs",
        "--ftl",
        "page",
        "--vertices",
        "2^12",
        "--io",
        "br",
        "--br",
        "4K",
        "--bw",
        "16K",
        "--memory",
        "256K",
        "--capacity",
        "4K",
    ]);
    assert_error(
        &output,
        2,
        "smaller than the footprint of the DFS's dry run",
    );
}

#[test]
fn file_and_generated_inputs_and_device_options_without_ftl_are_usage_errors() {
    let both = flashkit(&[SORT, &["--input", "keys.u64"]].concat());
    assert_error(&both, 2, "cannot be used with");
    let device_only = flashkit(&[SORT, &["--capacity", "64M"]].concat());
    assert_error(&device_only, 2, "required arguments were not provided");
    assert!(
        stderr(&device_only).contains("--ftl"),
        "{}",
        stderr(&device_only)
    );
    let small_blocks = flashkit(&[
        "em",
        "sort",
        "--records",
        "1000",
        "--memory",
        "256K",
        "--br",
        "2K",
        "--bw",
        "16K",
        "--ftl",
        "page",
    ]);
    assert_error(
        &small_blocks,
        2,
        "B_r = 2KiB and B_w = 16KiB must both be multiples",
    );
    let two_policies = flashkit(&[SORT, &["--ftl", "page", "--gc", "greedy,fifo"]].concat());
    assert_error(
        &two_policies,
        2,
        "an em command runs one FTL: give one value of --gc (compare runs several)",
    );
    let tl = flashkit(&[SORT, &["--io", "tl"]].concat());
    assert_error(&tl, 2, "--io tl sorts real files only");
    // Options the run would not read (each ran before, ignoring it).
    let ftl_option = flashkit(&[SORT, &["--ftl", "page", "--log-blocks", "4"]].concat());
    assert_error(
        &ftl_option,
        2,
        "--log-blocks is an option for bast, fast and ofast, which --ftl page does not run",
    );
    // Clap waives `--ftl`'s `requires = "records"` once `--output` is there: the file sort ran.
    let file_ftl = flashkit(&[
        "em", "sort", "--input", "k", "--output", "o", "--ftl", "page", "--gc", "fifo",
    ]);
    assert_error(
        &file_ftl,
        2,
        "--ftl, --gc are options for sorting generated records (--records), not a file (--input)",
    );
    let file_seed = flashkit(&["em", "sort", "--input", "k", "--output", "o", "--seed", "3"]);
    assert_error(
        &file_seed,
        2,
        "--seed is an option for sorting generated records",
    );
    let in_memory = flashkit(&["em", "sort", "--input", "k", "--in-memory", "--output", "o"]);
    assert_error(&in_memory, 2, "cannot be used with");
    let tl_threads = flashkit(&[
        "em",
        "sort",
        "--input",
        "k",
        "--output",
        "o",
        "--tl",
        "--threads",
        "2",
    ]);
    assert_error(&tl_threads, 2, "--threads does nothing in mode tl");
    let bfs_cache = flashkit(&["em", "bfs", "--vertices", "100", "--cache", "1M"]);
    assert_error(&bfs_cache, 2, "--cache is an option for em dfs, not em bfs");
    let dfs_mu = flashkit(&["em", "dfs", "--vertices", "100", "--mu", "4"]);
    assert_error(&dfs_mu, 2, "--mu is an option for em bfs, not em dfs");
    // A cache below two pages was silently raised to two.
    let dfs_cache = flashkit(&["em", "dfs", "--vertices", "100", "--cache", "0"]);
    assert_error(
        &dfs_cache,
        2,
        "--cache 0 holds fewer than the 2 pages of 131072 B the DFS needs",
    );
    let model = flashkit(&["em", "model", "--vertices", "0"]);
    assert_error(&model, 2, "--vertices 0: the BFS and DFS predictions need");
    // "stat of - at byte 0: No such file or directory" before.
    let stdin = flashkit(&["em", "sort", "--input", "-", "--output", "o"]);
    assert_error(
        &stdin,
        2,
        "--input -: the sort reads its input by offset, so not from standard input",
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let records = dir.path().join("in.u32");
    let input = records.to_str().expect("UTF-8");
    let out = dir.path().join("huge");
    let output = out.to_str().expect("UTF-8");
    assert!(
        flashkit(&["em", "gen", "-o", input, "--records", "1000"])
            .status
            .success()
    );
    // A sort of the records to `output` with `extra` options.
    let sort = |extra: &[&str]| {
        flashkit(&[&["em", "sort", "--input", input, "--output", output], extra].concat())
    };
    assert_error(
        &sort(&["--tmp", "/nonexistent/scratch"]),
        2,
        "--tmp /nonexistent/scratch is not a directory",
    );
    // Buffers no machine has were a panic (exit 101), and left the scratch file behind.
    assert_error(
        &sort(&["--memory", "8P", "--br", "4K", "--bw", "1P"]),
        2,
        "cannot allocate 1125899906842624 B for one of run formation's four buffers",
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
    // A file past 2^64 bytes was written until the disk was full.
    assert_error(
        &flashkit(&["em", "gen", "-o", output, "--records", "2^63"]),
        2,
        "--records 9223372036854775808 of 8 B each are more than 2^64 bytes",
    );
    assert!(!out.exists());
    let probe_dir = dir.path().join("probe");
    std::fs::create_dir(&probe_dir).expect("mkdir");
    let probe = flashkit(&[
        "em",
        "probe",
        "--dir",
        probe_dir.to_str().expect("UTF-8"),
        "--file-size",
        "1P",
        "--max-block",
        "1P",
        "--seconds",
        "0.01",
        "--max-bytes",
        "64K",
    ]);
    assert_error(
        &probe,
        2,
        "cannot allocate 1125899906842624 B for a probe worker's block",
    );
    assert_eq!(
        std::fs::read_dir(&probe_dir).expect("dir").count(),
        0,
        "probe file removed"
    );
}

/// `--c` prices the general model's writes: bfs and dfs printed and saved nothing it
/// changed, so it did nothing there.
#[test]
fn graph_algorithms_price_their_io_with_the_write_penalty() {
    let dir = tempfile::tempdir().expect("tempdir");
    for algorithm in ["bfs", "dfs"] {
        let mut costs = Vec::new();
        for c in ["1", "7"] {
            let json = dir.path().join(format!("{algorithm}-{c}.json"));
            let path = json.to_str().expect("UTF-8 path");
            let text = ok(&[
                "em",
                algorithm,
                "--vertices",
                "2^8",
                "--memory",
                "64K",
                "--br",
                "4K",
                "--bw",
                "16K",
                "--c",
                c,
                "--json",
                path,
            ]);
            let doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&json).expect("written")).expect("JSON");
            let cost = &doc["cost"];
            let (x, y) = (
                cost["read_ios"].as_f64().expect("x"),
                cost["write_ios"].as_f64().expect("y"),
            );
            let general = cost["general"].as_f64().expect("x + c*y");
            assert_eq!(
                general,
                x + c.parse::<f64>().expect("c") * y,
                "{algorithm} c={c}"
            );
            assert!(y > 0.0, "{algorithm} writes");
            assert!(
                text.contains(&format!("cost of the algorithm's I/O: general model x + c*y = {general:.0} ({x} reads, {y} writes)")),
                "{text}"
            );
            costs.push(general);
        }
        assert!(costs[1] > costs[0], "{algorithm}: {costs:?}");
    }
}

/// Sizes past what a plan can hold are usage errors, never a panic or an abort (they were:
/// an overflow in `em model`, an out-of-memory abort in the plan).
#[test]
fn absurd_record_counts_are_usage_errors() {
    for args in [
        &["em", "model", "--records", "2^62"][..],
        &["em", "model", "--vertices", "2^62"],
        &[
            "em",
            "model",
            "--records",
            "2^60",
            "--memory",
            "1M",
            "--br",
            "4K",
            "--bw",
            "64K",
        ],
        &[
            "em",
            "sort",
            "--records",
            "2^62",
            "--memory",
            "1M",
            "--br",
            "4K",
            "--bw",
            "64K",
        ],
    ] {
        let out = flashkit(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}

/// One merge pass: by default the last runs stay in memory (two fit beside the merge's
/// buffers in 256 KiB), which saves writing and reading them; `--resident-runs 0` is the
/// paper's algorithm. Both verify and read back the same sorted output.
#[test]
fn resident_runs_skip_the_device_and_zero_writes_every_run() {
    let one_pass = [
        "em",
        "sort",
        "--records",
        "2^16",
        "--memory",
        "256K",
        "--br",
        "4K",
        "--bw",
        "16K",
    ];
    let kept = ok(&one_pass);
    assert!(kept.contains("8 runs (2 kept in memory)"), "{kept}");
    assert!(
        kept.contains("predicted by the plan: RDV 0.88 MiB, WRV 0.88 MiB, 224 read and 56 write"),
        "{kept}"
    );
    let all = ok(&[&one_pass[..], &["--resident-runs", "0"]].concat());
    assert!(all.contains("8 runs (0 kept in memory)"), "{all}");
    assert!(
        all.contains("predicted by the plan: RDV 1.00 MiB, WRV 1.00 MiB, 256 read and 64 write"),
        "{all}"
    );
    for text in [&kept, &all] {
        assert!(
            text.contains("read back: the output equals the input sorted by std's stable sort"),
            "{text}"
        );
    }
    assert_error(
        &flashkit(&[&one_pass[..], &["--resident-runs", "4"]].concat()),
        2,
        "--resident-runs",
    );
}

/// `em probe` measures a small file in a temporary directory: a row per block size, the
/// four patterns, the block sizes the paper's rule picks, JSON and SVG; the probe file is
/// removed; bad sizes are usage errors.
#[test]
fn probe_measures_the_disk_at_every_block_size_and_cleans_up() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("probe.json");
    let svg = dir.path().join("fig1.svg");
    let data = tempfile::tempdir().expect("temp dir");
    let text = ok(&[
        "em",
        "probe",
        "--dir",
        data.path().to_str().expect("utf-8"),
        "--file-size",
        "4M",
        "--max-block",
        "1M",
        "--seconds",
        "0.01",
        "--json",
        json.to_str().expect("utf-8"),
        "--svg",
        svg.to_str().expect("utf-8"),
    ]);
    assert!(
        text.contains("random write") && text.contains("sequential read"),
        "{text}"
    );
    for block in ["4KiB", "64KiB", "1MiB"] {
        assert!(
            text.lines().any(|l| l.starts_with(block)),
            "no row {block}: {text}"
        );
    }
    assert!(text.contains("B_r; the paper's SSD: 128KiB"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid");
    assert_eq!(doc["points"].as_array().expect("points").len(), 4 * 9);
    assert!(doc["points"][0]["transfers"].as_u64().expect("transfers") >= 4);
    let svg = std::fs::read_to_string(&svg).expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("Fig. 1"));
    assert_eq!(
        std::fs::read_dir(data.path()).expect("list").count(),
        0,
        "the probe file is left behind"
    );
    let bad = flashkit(&["em", "probe", "--min-block", "3000", "--file-size", "4M"]);
    assert_error(&bad, 2, "powers of two");
    let bad = flashkit(&["em", "probe", "--depth", "0", "--file-size", "64M"]);
    assert_error(&bad, 2, "queue depth");
    let bad = flashkit(&[
        "em",
        "probe",
        "--dir",
        "/nonexistent/dir",
        "--file-size",
        "4M",
    ]);
    assert_error(&bad, 2, "not a directory");
}
