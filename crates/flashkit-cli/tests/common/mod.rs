//! Helpers shared by the binary's end-to-end tests.
// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use std::path::Path;
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

/// What [`on_full_disk`] found: flashkit's output, and what it left in the directory.
pub struct FullDisk {
    pub output: Output,
    /// Paths left under the directory (relative to it, sorted).
    pub left: Vec<String>,
}

const LEFT_MARKER: &str = "--- left on the full disk ---";

/// Run flashkit with `args` where `dir` is a tmpfs of `kib` KiB, so that writes past that
/// fail with "No space left on device": in a mount namespace of its own (`unshare -Urm`, no
/// privilege needed where user namespaces are allowed), which vanishes with the command.
/// `None` (after saying so) where this machine cannot make one.
pub fn on_full_disk(dir: &Path, kib: u32, args: &[&str]) -> Option<FullDisk> {
    let probe = Command::new("unshare").args(["-Urm", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipping: `unshare -Urm` is not available here, so no full disk can be made");
        return None;
    }
    let script = format!(
        "mount -t tmpfs -o size={kib}k flashkit-full \"$1\" || exit 99; shift; \"$@\"; rc=$?; \
         echo '{LEFT_MARKER}'; find \"$DIR\" -mindepth 1 | sort; exit $rc"
    );
    let output = Command::new("unshare")
        .args(["-Urm", "sh", "-c", &script, "sh"])
        .arg(dir)
        .arg(env!("CARGO_BIN_EXE_flashkit"))
        .args(args)
        .env("DIR", dir)
        .output()
        .expect("unshare runs");
    assert_ne!(output.status.code(), Some(99), "mounting a tmpfs failed");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let (own, left) = stdout.split_once(LEFT_MARKER).expect("the marker");
    let prefix = format!("{}/", dir.display());
    let left = left
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(str::to_string)
        .collect();
    Some(FullDisk {
        output: Output {
            stdout: own.as_bytes().to_vec(),
            ..output
        },
        left,
    })
}
