//! Helpers shared by the binary's end-to-end tests.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Run the `flashkit` binary built for these tests.
pub fn flashkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashkit"))
        .args(args)
        .output()
        .expect("the flashkit binary runs")
}

/// A compare in which one run fails: block mapping wears a 40-cycle part out within 100k
/// requests, page mapping under greedy GC does not. Add `--json FILE` or the like.
pub const COMPARE_BLOCK_WEARS_OUT: &[&str] = &[
    "compare",
    "--ftl",
    "page,block",
    "--gc",
    "greedy",
    "--endurance",
    "40",
    "--capacity",
    "64M",
    "--requests",
    "100k",
    "--no-precondition",
];

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
