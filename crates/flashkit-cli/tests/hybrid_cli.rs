//! The log-block FTLs wherever an FTL is chosen: compare, replay and bench take their names
//! and --log-blocks; an impossible log-block count is a usage error saying what to change.

mod common;
use common::flashkit;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const SMALL: &[&str] = &["--capacity", "64M", "--requests", "5k"];

#[test]
fn compare_runs_every_scheme_by_name_with_the_log_blocks_asked_for() {
    let args = [
        &[
            "compare",
            "--ftl",
            "page,block,bast,fast,ofast",
            "--log-blocks",
            "4",
        ],
        SMALL,
    ]
    .concat();
    let output = flashkit(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let out = text(&output.stdout);
    assert!(out.contains("log-block FTLs: 4 log blocks"), "{out}");
    let header = out
        .lines()
        .find(|l| l.starts_with("metric"))
        .expect("a table");
    for name in ["page/greedy", "block", "bast", "fast", "ofast"] {
        assert!(header.split_whitespace().any(|c| c == name), "{header}");
    }
    for row in ["switch merges", "full merges", "log utilisation percent"] {
        assert!(out.contains(row), "missing {row:?}");
    }
}

#[test]
fn too_many_log_blocks_is_a_usage_error_saying_what_to_change() {
    let args = [&["compare", "--ftl", "fast", "--log-blocks", "500"], SMALL].concat();
    let output = flashkit(&args);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    let err = text(&output.stderr);
    assert!(err.contains("needs at least 501 spare blocks"), "{err}");
    assert!(err.contains("lower --log-blocks"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn replay_and_bench_take_the_log_block_schemes() {
    let args = [&["replay", "--ftl", "ofast", "--log-blocks", "3"], SMALL].concat();
    let output = flashkit(&args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("lazy merges skipped"));
    let output = flashkit(&["bench", "--smoke", "--ftl", "bast"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("bast/8 log blocks FTL"));
}
