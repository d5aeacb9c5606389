//! `flashkit reproduce fast` end to end, at a tiny scale: the tables appear with the paper's
//! figures beside ours, the output is the same for the same seed, bad options are usage
//! errors, and the real trace excerpts go through all five FTLs.

mod common;
use common::flashkit;

use std::path::PathBuf;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A tiny reproduction: two patterns, two log-block counts, no traces.
const TINY: &[&str] = &[
    "reproduce",
    "fast",
    "--scale",
    "0.002",
    "--patterns",
    "A,E",
    "--log-blocks",
    "4,8",
    "--capacity",
    "4M",
    "--op",
    "0.1",
    "--no-traces",
    "--jobs",
    "2",
];

#[test]
fn a_tiny_reproduction_prints_the_papers_figures_beside_ours() {
    let output = flashkit(TINY);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    for needle in [
        "Fig. 10, pattern A (digital camera (A company))",
        "Fig. 10, pattern E (uniform random writes)",
        "Table II: switch operations, the paper's and ours",
        "49,213",
        "The paper's claims",
        "Section 3.5",
        "FAST-RW/BAST",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in:\n{out}");
    }
    assert!(
        !out.contains("Fig. 10, pattern B"),
        "only the patterns asked for"
    );
    // The ledger lists every claim; those about patterns not run say so.
    assert!(
        out.contains(
            "CANNOT BE CHECKED HERE: fast.b.bast-approaches (Section 4.2, Fig. 10 (pattern B))"
        ) && out.contains("bast was not run on pattern B"),
        "{out}"
    );
    let again = flashkit(TINY);
    assert_eq!(
        out,
        text(&again.stdout),
        "the same seed gives the same tables"
    );
}

/// `--out DIR` writes fast.json and the paper's figures as SVG, each titled with the figure
/// it stands for and naming the schemes it draws; figures without data in the run (pattern
/// B's Table II, the traces) are not written.
#[test]
fn out_writes_the_json_and_the_papers_figures() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("figures");
    let mut args = TINY.to_vec();
    args.extend(["--out", out.to_str().expect("UTF-8 path")]);
    let output = flashkit(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        text(&output.stdout).contains(&format!("wrote {}/fast.json, ", out.display())),
        "{}",
        text(&output.stdout)
    );
    let fig10 = ["Fig. 10", "BAST", "FAST", "O-FAST"];
    let expected: [(&str, &[&str]); 8] = [
        ("fig10-A-erases.svg", &fig10),
        ("fig10-A-time.svg", &fig10),
        ("fig10-E-erases.svg", &fig10),
        ("fig10-E-time.svg", &fig10),
        (
            "fig10-no-sw.svg",
            &["Fig. 10", "SW log block", "pattern A", "pattern E"],
        ),
        (
            "table2-A.svg",
            &["Table II", "BAST, paper", "BAST, ours", "FAST, ours"],
        ),
        (
            "section3.5.svg",
            &["section 3.5", "FAST-RW", "FAST (SW+RW)", "BAST"],
        ),
        ("fast.json", &["\"runs\""]),
    ];
    for (name, needles) in expected {
        let path = out.join(name);
        let content = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} not written: {e}", path.display()));
        if name.ends_with(".svg") {
            assert!(content.starts_with("<svg"), "{name} is not an SVG document");
        }
        for needle in needles {
            assert!(content.contains(needle), "{name} lacks {needle:?}");
        }
    }
    for (pattern, description) in [("A", "digital camera (A company)"), ("E", "uniform random")] {
        let svg = std::fs::read_to_string(out.join(format!("fig10-{pattern}-erases.svg")))
            .expect("written");
        assert!(svg.contains(&format!("(Fig. 10, pattern {pattern})")));
        assert!(svg.contains(description));
        assert!(svg.contains("block erases"), "the y axis names its unit");
    }
    let time = std::fs::read_to_string(out.join("fig10-A-time.svg")).expect("written");
    assert!(time.contains("elapsed time (s)"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fast.json")).expect("written"))
            .expect("fast.json parses");
    let runs = json["runs"].as_array().expect("a list of runs");
    // Two patterns x two log-block counts x five schemes, four hot-block counts x three
    // (no sweep of what decides Fig. 10: its base patterns, C and D, did not run).
    assert_eq!(runs.len(), 2 * 2 * 5 + 4 * 3);
    // The claims ledger, each verdict computed: pattern E's runs check its claims, pattern
    // B's claims cannot be checked without its runs.
    let claims = json["claims"].as_array().expect("a list of claims");
    assert_eq!(claims.len(), 16);
    let verdict = |id: &str| {
        claims
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no claim {id}"))["verdict"]
            .as_str()
            .expect("a verdict")
            .to_string()
    };
    assert_eq!(verdict("fast.b.bast-approaches"), "cannot-check");
    assert!(["holds", "does-not-hold"].contains(&verdict("fast.e.fast-improves").as_str()));
    assert!(
        claims
            .iter()
            .all(|c| c["quote"].as_str().is_some_and(|q| !q.is_empty()))
    );
    for absent in ["fig10-B-erases.svg", "table2-B.svg", "traces-1.svg"] {
        assert!(!out.join(absent).exists(), "{absent}: no data in this run");
    }
}

#[test]
fn bad_options_are_usage_errors() {
    let output = flashkit(&["reproduce", "fast", "--patterns", "A,Q", "--no-traces"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("unknown pattern \"Q\""));
    let output = flashkit(&["reproduce", "fast", "--scale", "0", "--no-traces"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--scale 0"));
    // 64 log blocks do not fit in the spare blocks of a 4 MiB card at 3%.
    let output = flashkit(&[
        "reproduce",
        "fast",
        "--capacity",
        "4M",
        "--no-traces",
        "--log-blocks",
        "64",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("lower --log-blocks"),
        "{}",
        text(&output.stderr)
    );
    // A traces directory the user named must exist (it was a note, and exit 0); the default
    // one may be missing.
    for paper in ["fast", "vet"] {
        let output = flashkit(&[
            "reproduce",
            paper,
            "--quick",
            "--traces",
            "/nonexistent/traces",
        ]);
        assert_eq!(output.status.code(), Some(2), "{paper}");
        assert!(
            text(&output.stderr).contains("--traces /nonexistent/traces: no such directory"),
            "{}",
            text(&output.stderr)
        );
    }
    for paper in ["grr", "fatlist"] {
        let output = flashkit(&["reproduce", paper, "--quick", "--wall-clock-in-json"]);
        assert_eq!(output.status.code(), Some(2), "{paper}");
        assert!(
            text(&output.stderr).contains("--wall-clock-in-json needs a JSON to write"),
            "{}",
            text(&output.stderr)
        );
    }
}

/// `--quick` chooses the scale and the log blocks itself, so giving either with it is a
/// usage error, not a silent override; the same holds for `reproduce flashmodel --quick`
/// and `reproduce vet --quick`. (So does `--no-traces` a `--traces` directory it would not
/// read.)
#[test]
fn quick_refuses_the_options_it_sets() {
    for args in [
        &["reproduce", "fast", "--quick", "--scale", "0.5"][..],
        &["reproduce", "fast", "--quick", "--log-blocks", "8"],
        &["reproduce", "flashmodel", "--quick", "--bfs-max-log", "18"],
        &["reproduce", "flashmodel", "--quick", "--disk-max-log", "27"],
        &["reproduce", "vet", "--quick", "--scale", "0.5"],
        &["reproduce", "vet", "--quick", "--spew-max-gib", "64"],
        &["reproduce", "fast", "--no-traces", "--traces", "elsewhere"],
    ] {
        let output = flashkit(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            text(&output.stderr).contains("cannot be used with"),
            "{args:?}: {}",
            text(&output.stderr)
        );
    }
    // The real-disk part skipped, its directories would do nothing (--out was made empty and
    // reported as written). Refused before the simulated tables run.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("fm");
    let output = flashkit(&[
        "reproduce",
        "flashmodel",
        "--disk-max-log",
        "0",
        "--bfs-max-log",
        "16",
        "--tmp",
        "/nonexistent",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains(
            "--tmp, --out are options for the real-disk part, which --disk-max-log 0 (below 25) \
             skips: drop them"
        ),
        "{}",
        text(&output.stderr)
    );
    assert!(!out.exists(), "no directory made");
    // Odd grid bounds were rounded down, and bounds the wrong way round dropped Table 2.
    for (args, needle) in [
        (
            &["--bfs-min-log", "15"][..],
            "--bfs-min-log 15: the BFS grids are square, so log2 |V| is even; give 14 or 16",
        ),
        (
            &["--bfs-min-log", "18", "--bfs-max-log", "16"],
            "--bfs-max-log 16 is below --bfs-min-log 18: Table 2 would have no grid",
        ),
    ] {
        let output = flashkit(
            &[
                &["reproduce", "flashmodel", "--disk-max-log", "0"][..],
                args,
            ]
            .concat(),
        );
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).contains(needle),
            "{}",
            text(&output.stderr)
        );
    }
}

/// The MSR excerpts through all five FTLs. Fails loudly in CI when the shared traces are
/// missing; elsewhere it says so and skips.
#[test]
fn the_real_trace_excerpts_go_through_all_five_ftls() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces/msr"
    ));
    if !dir.join("hm_0.sample1000.csv").exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but the shared trace excerpts are missing: {}",
            dir.display()
        );
        println!(
            "skipping: the shared trace excerpts are not at {}",
            dir.display()
        );
        return;
    }
    let dir = dir.to_str().expect("UTF-8 path").to_string();
    let output = flashkit(&[
        "reproduce",
        "fast",
        "--patterns",
        "E",
        "--scale",
        "0.001",
        "--log-blocks",
        "4",
        "--capacity",
        "4M",
        "--op",
        "0.1",
        "--traces",
        &dir,
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    let row = out
        .lines()
        .find(|l| l.starts_with("hm_0.sample1000.csv"))
        .unwrap_or_else(|| panic!("no row for hm_0 in:\n{out}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // trace, requests, sector writes, five erase counts, five elapsed times.
    assert_eq!(cells.len(), 13, "{row}");
    assert_eq!(cells[1], "1,000", "{row}");
    assert!(out.contains("rsrch_0.sample1000.csv"));
}

/// An `--out` directory that cannot be created fails every reproduce command at once,
/// naming the directory, before any run (nothing printed, no long run wasted).
#[test]
fn an_out_directory_that_cannot_be_made_fails_before_the_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let out = file.join("figures");
    let out = out.to_str().expect("utf-8 path");
    for paper in ["fast", "grr", "fatlist", "vet", "flashmodel"] {
        let output = flashkit(&["reproduce", paper, "--quick", "--out", out]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{paper}: {stderr}");
        assert!(
            stderr.contains("cannot create") && stderr.contains(out),
            "{paper}: {stderr}"
        );
        assert!(
            text(&output.stdout).trim().is_empty(),
            "{paper} ran: {}",
            text(&output.stdout)
        );
    }
}

/// `reproduce all` gathers the papers' claims ledgers into claims.json and shows them first
/// in index.html: a tally a paper, then each claim, linked to the figure it is about.
#[test]
fn reproduce_all_writes_the_claims_ledger_and_its_summary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    let output = flashkit(&[
        "reproduce",
        "all",
        "--quick",
        "--only",
        "fast,grr",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let claims: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("claims.json")).expect("claims.json"),
    )
    .expect("claims.json parses");
    let list = claims["claims"].as_array().expect("claims");
    assert_eq!(list.len(), 16 + 11, "the FAST and GRR ledgers");
    for (i, (paper, count)) in [("fast", 16), ("grr", 11)].into_iter().enumerate() {
        let entry = &claims["papers"][i];
        assert_eq!(entry["paper"], paper);
        assert_eq!(entry["ledger"], true);
        let tally: Vec<u64> = ["holds", "in-shape", "does-not-hold", "cannot-check"]
            .iter()
            .map(|k| entry["tally"][k].as_u64().expect("a count"))
            .collect();
        assert_eq!(
            tally.iter().sum::<u64>(),
            count,
            "{paper}: every claim counted once"
        );
        let counted = |verdict: &str| {
            list.iter()
                .filter(|c| c["paper"] == paper && c["verdict"] == verdict)
                .count() as u64
        };
        assert_eq!(tally[0], counted("holds"), "{paper}");
        assert_eq!(tally[2], counted("does-not-hold"), "{paper}");
    }

    let index = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    let summary = index
        .find("<h2>The papers&#39; claims</h2>")
        .or_else(|| index.find("<h2>The papers' claims</h2>"));
    let first_paper = index.find("<h2>fast:").expect("fast's section");
    assert!(
        summary.expect("a claims section") < first_paper,
        "the claims come first"
    );
    assert!(index.contains("<td>grr</td>"), "a row a paper");
    // Each claim about a drawn figure links to it, and the figure carries the anchor.
    assert!(index.contains("<a href=\"#fast-fig10-E-erases.svg\">"));
    assert!(index.contains("<figure id=\"fast-fig10-E-erases.svg\">"));
}

/// `reproduce all` runs each paper asked for into its own subdirectory, as the paper's own
/// `--out` does, and writes one index.html with their figures inline; an unknown paper is a
/// usage error.
#[test]
fn reproduce_all_writes_each_papers_directory_and_one_index() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("results");
    // A figure of an earlier run in a directory used again stays, but is not shown.
    std::fs::create_dir_all(out.join("vet")).expect("mkdir");
    let stale = "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>stale</text></svg>";
    std::fs::write(out.join("vet/old.svg"), stale).expect("write");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let output = flashkit(&[
        "reproduce",
        "all",
        "--quick",
        "--only",
        "vet,grr",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(stdout.contains("=== reproduce vet --out") && stdout.contains("grr: done in"));
    assert!(
        !stdout.contains("reproduce fast"),
        "--only vet,grr ran fast: {stdout}"
    );
    assert!(out.join("vet/vet.json").is_file() && out.join("grr/fig8a.svg").is_file());
    // Each paper's claims ledger, gathered into one file.
    let claims: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("claims.json")).expect("claims.json"),
    )
    .expect("claims.json parses");
    let of = |paper: &str, origin: &str| {
        claims["claims"]
            .as_array()
            .expect("claims")
            .iter()
            .filter(|c| c["paper"] == paper && c["origin"] == origin)
            .count()
    };
    assert_eq!((of("vet", "paper"), of("grr", "paper")), (8, 11));
    assert_eq!((of("vet", "target"), of("grr", "target")), (3, 0));
    let index = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(index.starts_with("<!DOCTYPE html>"));
    assert!(index.contains("vet: Extent mapping") && index.contains("grr: B-tree storage"));
    // Every figure written is inline, in natural order (fig6a before fig8a).
    let svgs = std::fs::read_dir(out.join("grr"))
        .expect("list")
        .chain(std::fs::read_dir(out.join("vet")).expect("list"))
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "svg"))
        })
        .count();
    // (by its path: a figure of our own may end in "...old.svg", as "narrow-cold.svg" does)
    assert!(!index.contains("vet/old.svg") && out.join("vet/old.svg").exists());
    assert_eq!(
        index.matches("<figure id=").count(),
        svgs - 1,
        "{svgs} figures, one of them old"
    );
    let grr = |name: &str| index.find(&format!("grr/{name}")).expect(name);
    assert!(grr("fig6a.svg") < grr("fig8a.svg"));

    // Each paper's printed tables are kept beside its figures and in the index.
    let printed = std::fs::read_to_string(out.join("vet/output.txt")).expect("output.txt");
    assert!(printed.contains("Mapping time per call"), "{printed}");
    assert!(index.contains("<details><summary>printed output"));
    assert!(index.contains("Mapping time per call"));

    // A paper that fails does not stop the others, and the command says which failed.
    let output = flashkit(&[
        "reproduce",
        "all",
        "--quick",
        "--only",
        "flashmodel,vet",
        // A directory (so refused by no check up front) where no file can be made: flashmodel
        // fails when it runs.
        "--tmp",
        "/proc",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("1 of 2 papers failed: flashmodel"));
    assert!(text(&output.stdout).contains("vet: done in"));
    let index = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    assert!(index.contains("vet: Extent mapping") && !index.contains("grr: B-tree"));

    let output = flashkit(&["reproduce", "all", "--only", "vet,nope", "--out", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("unknown paper \"nope\""));
    // --tmp is flashmodel's: without it, it would do nothing.
    let output = flashkit(&[
        "reproduce",
        "all",
        "--only",
        "vet",
        "--tmp",
        "t",
        "--out",
        "x",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--tmp is flashmodel's"));
    assert!(!std::path::Path::new("x").exists(), "nothing was created");
    // A --tmp that is not a directory ran four papers before flashmodel refused it.
    let output = flashkit(&[
        "reproduce",
        "all",
        "--only",
        "fast,flashmodel",
        "--tmp",
        "/nonexistent/tmp",
        "--out",
        "x",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--tmp /nonexistent/tmp is not a directory"),
        "{}",
        text(&output.stderr)
    );
    assert!(!std::path::Path::new("x").exists(), "nothing was created");
}

/// Run flashkit with `args` and `--tmp` a fresh directory, send SIGINT once flashmodel's
/// real-disk sort is writing its input there, and check what an interrupt promises: exit
/// 130, the sort's directory removed and said so.
#[cfg(target_os = "linux")]
fn interrupt_during_the_sort(args: &[&str]) {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut run = Command::new(env!("CARGO_BIN_EXE_flashkit"))
        .args(args)
        .arg("--tmp")
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn flashkit");
    // The sort's directory once its input is being written: held by then.
    let sorting = |dir: &std::path::Path| {
        std::fs::read_dir(dir)
            .expect("read dir")
            .filter_map(Result::ok)
            .any(|e| e.path().join("input").exists())
    };
    let started = Instant::now();
    while !sorting(tmp.path()) {
        assert!(
            run.try_wait().expect("poll").is_none(),
            "the run ended before its sort began"
        );
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "no sort directory"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let done = run.wait_with_output().expect("wait");
    assert_eq!(done.status.code(), Some(130), "{}", text(&done.stderr));
    assert!(text(&done.stderr).contains("interrupted: removed 1 temporary file(s)"));
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("read dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `reproduce all` runs its papers in its own process: Ctrl-C during flashmodel's
/// real-disk sort reaches that sort, removes its temporary directory, and ends the
/// command with 130, papers still to come not run.
#[cfg(target_os = "linux")]
#[test]
fn interrupting_reproduce_all_removes_the_running_papers_temporaries() {
    let out = tempfile::tempdir().expect("tempdir");
    let out_dir = out.path().to_str().expect("a UTF-8 path");
    interrupt_during_the_sort(&[
        "reproduce",
        "all",
        "--quick",
        "--only",
        "flashmodel",
        "--out",
        out_dir,
    ]);
    assert!(
        !out.path().join("index.html").exists(),
        "an interrupted run writes no index"
    );
}

/// Ctrl-C during the real-disk sort of `reproduce flashmodel` removes the sort's temporary
/// directory (the lab holds it through the CLI's interrupt list) and exits 130.
#[cfg(target_os = "linux")]
#[test]
fn interrupting_reproduce_flashmodel_removes_its_sort_directory() {
    interrupt_during_the_sort(&["reproduce", "flashmodel", "--quick"]);
}

/// `reproduce flashmodel` ends with the ledger's verdicts on Table 1, computed from the
/// exact volumes of the replayed sorts (so pinned here): the translation layer reads like
/// B_r; the 2^25 row and B_w's pass count set our volumes apart from the paper's.
#[test]
fn reproduce_flashmodel_checks_table_one_against_the_ledger() {
    let output = flashkit(&[
        "reproduce",
        "flashmodel",
        "--disk-max-log",
        "0",
        "--bfs-max-log",
        "16",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    for line in [
        "DOES NOT HOLD: flashmodel.table1.bw-reads-more",
        "not at: 2 vs 2 at N = 2^28",
        "HOLDS: flashmodel.table1.tl-like-br",
        "DOES NOT HOLD: flashmodel.table1.tl-volumes",
        "not at: 0.125 vs 0.200 at N = 2^25",
        "DOES NOT HOLD: flashmodel.table1.bw-volumes",
        "1 hold, 0 in shape only, 4 do not hold, 0 cannot be checked here",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
}
