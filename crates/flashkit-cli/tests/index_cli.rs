//! The `flashkit index bench` and `flashkit reproduce fatlist` commands, end to end: figures
//! come out, JSON is the same for the same seed, bad parameters exit with 2.

use std::process::Command;

fn flashkit(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flashkit"))
        .args(args)
        .output()
        .expect("the flashkit binary runs")
}

const SMALL: [&str; 10] = [
    "--capacity",
    "1M",
    "--keys",
    "400",
    "--updates",
    "2000",
    "--queries",
    "2000",
    "--boot-trials",
    "2",
];

#[test]
fn index_bench_reports_each_phase_for_every_structure() {
    for structure in ["fatlist", "softlist", "mutree"] {
        let mut args = vec!["index", "bench", "--structure", structure];
        args.extend(SMALL);
        let out = flashkit(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{structure}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for phase in [
            "insert",
            "update",
            "query",
            "delete",
            "boot-up initialization",
        ] {
            assert!(
                stdout.contains(phase),
                "{structure}: no {phase} in\n{stdout}"
            );
        }
    }
}

#[test]
fn index_bench_json_is_deterministic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut docs = Vec::new();
    for name in ["a.json", "b.json"] {
        let path = dir.path().join(name);
        let path_text = path.to_str().expect("utf-8 path");
        let mut args = vec![
            "index",
            "bench",
            "--structure",
            "fatlist",
            "--json",
            path_text,
        ];
        args.extend(SMALL);
        assert!(flashkit(&args).status.success());
        let text = std::fs::read_to_string(&path).expect("written");
        let mut doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        doc["wall_seconds"] = serde_json::Value::Null;
        docs.push(doc);
    }
    assert_eq!(docs[0], docs[1]);
    assert!(
        docs[0]["phases"][1]["time"]["write_s"]
            .as_f64()
            .expect("a number")
            > 0.0
    );
}

#[test]
fn the_sensor_workload_runs_range_queries() {
    let out = flashkit(&[
        "index",
        "bench",
        "--structure",
        "mutree",
        "--workload",
        "sensor",
        "--readings",
        "3000",
        "--range-queries",
        "100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("range x100"));
}

#[test]
fn bad_parameters_are_usage_errors() {
    let cases: [&[&str]; 4] = [
        &["index", "bench", "--structure", "btree"],
        &["index", "bench", "--capacity", "100K"],
        &["index", "bench", "--capacity", "1M", "--turnstile", "32"],
        &["reproduce", "fatlist", "--only", "everything"],
    ];
    for args in cases {
        let out = flashkit(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn reproduce_fatlist_prints_the_papers_figures_beside_ours() {
    let out = flashkit(&[
        "reproduce",
        "fatlist",
        "--quick",
        "--only",
        "sensor",
        "--readings",
        "3000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Fig. 21"), "{stdout}");
    assert!(stdout.contains("paper:"), "{stdout}");
}
