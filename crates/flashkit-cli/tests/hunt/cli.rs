//! Running the `flashkit` binary on a config or sweep mutant, with a deadline, and judging
//! what it did: `flashkit --config FILE compare --ftl F` or `flashkit sweep FILE --out
//! DIR` must exit 0 (still valid) or 2 with a message naming the file, the offending key's
//! line and the key; never panic (101), hang, or fail at run time (1) over a setting a
//! check should have refused. A refused sweep leaves no output directory.

use crate::config::{Case, Want};
use crate::harness::{Outcome, names_line, names_word};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Tiny runs take tens of milliseconds; a run past this is hung.
const LIMIT: Duration = Duration::from_secs(30);

/// Run the binary with standard output and error in files (no pipe to fill), killing it
/// past [`LIMIT`]: `common::flashkit` without a deadline.
fn flashkit(args: &[&str], dir: &Path) -> Result<Output, String> {
    let out_path = dir.join("stdout");
    let out = std::fs::File::create(&out_path).expect("stdout file");
    let err_path = dir.join("stderr");
    let err = std::fs::File::create(&err_path).expect("stderr file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flashkit"))
        .args(args)
        .env_remove("FLASHKIT_PROGRESS")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("the flashkit binary starts");
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for flashkit") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "hung: still running after {} s; killed",
                LIMIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    Ok(Output {
        status,
        stdout: std::fs::read(&out_path).expect("stdout"),
        stderr: std::fs::read(&err_path).expect("stderr"),
    })
}

pub fn run(dir: &Path, serial: usize, case: &Case, sweep: bool) -> Outcome {
    let file = dir.join(if sweep { "sweep.toml" } else { "config.toml" });
    std::fs::write(&file, &case.text).expect("write the mutant");
    let out = dir.join(format!("out-{serial}"));
    let (f, o) = (text(&file), text(&out));
    let args: Vec<&str> = if sweep {
        vec!["sweep", &f, "--out", &o]
    } else {
        vec!["--config", &f, "compare", "--ftl", &case.ftl]
    };
    let say = |why: String| format!("{}: {why}", case.what);
    let group = |kind: &str| format!("{kind} ({})", case.subject);
    let ran = match flashkit(&args, dir) {
        Ok(ran) => ran,
        Err(why) => return Outcome::failed(group("hung"), say(why)),
    };
    let mut verdict = judge(&ran, &case.want, &file);
    if sweep && verdict.is_ok() {
        verdict = leftovers(&out, ran.status.code() == Some(0));
    }
    let _ = std::fs::remove_dir_all(&out);
    match verdict {
        Ok(outcome) => outcome,
        Err((kind, why)) => Outcome::failed(group(kind), say(why)),
    }
}

fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 temporary path").to_string()
}

type Verdict = Result<Outcome, (&'static str, String)>;

fn judge(ran: &Output, want: &Want, file: &Path) -> Verdict {
    let stderr = crate::common::stderr(ran);
    let stderr = stderr.trim_end();
    let code = ran.status.code();
    if code == Some(101) || stderr.contains("panicked") {
        return Err(("panicked", stderr.to_string()));
    }
    match (code, want) {
        // The first alternative met, or the first one's failure.
        (_, Want::OneOf(wants)) => {
            let mut verdicts = wants.iter().map(|w| judge(ran, w, file));
            let first = verdicts.next().expect("alternatives");
            if first.is_ok() {
                return first;
            }
            verdicts.find(Result::is_ok).unwrap_or(first)
        }
        (Some(0), Want::Valid | Want::Either { .. } | Want::Noise) => Ok(Outcome::Accepted),
        (Some(0), Want::Refused { .. }) => Err(("accepted", "exit 0".into())),
        (Some(2), Want::Refused { lines, key } | Want::Either { lines, key }) => {
            names(stderr, file, lines, key.as_deref())
        }
        (Some(2), Want::Noise) => names_a_line(stderr, file),
        (Some(2), Want::Valid) => Err(("refused a valid file", stderr.to_string())),
        (code, _) => Err((
            "exit neither 0 nor 2",
            format!("exit {code:?} ({}): {stderr}", ran.status),
        )),
    }
}

/// The message names the file, one of the lines (if any) and the key (if known).
fn names(stderr: &str, file: &Path, lines: &[usize], key: Option<&str>) -> Verdict {
    let mut missing = Vec::new();
    if !stderr.contains(&text(file)) {
        missing.push("the file".to_string());
    }
    if !lines.is_empty() && !lines.iter().any(|&l| names_line(stderr, l)) {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        missing.push(format!("line {}", lines.join(" or ")));
    }
    if let Some(key) = key.filter(|k| !names_word(stderr, k)) {
        missing.push(format!("the key {key:?}"));
    }
    if missing.is_empty() {
        return Ok(Outcome::Refused);
    }
    let kind = match (missing.len(), missing[0].as_str()) {
        (3, _) => "refused naming neither file, line nor key",
        (_, "the file") => "refused without naming the file",
        (_, m) if m.starts_with("line") => "refused without naming the line",
        _ => "refused without naming the key",
    };
    Err((kind, format!("missing {}: {stderr}", missing.join(", "))))
}

fn names_a_line(stderr: &str, file: &Path) -> Verdict {
    let has_line = stderr
        .match_indices("line ")
        .any(|(at, m)| stderr[at + m.len()..].starts_with(|c: char| c.is_ascii_digit()));
    if stderr.contains(&text(file)) && has_line {
        return Ok(Outcome::Refused);
    }
    Err((
        "noise refused without naming the file and a line",
        stderr.to_string(),
    ))
}

/// A refused sweep leaves no output directory; a finished one, its three files only.
fn leftovers(out: &Path, finished: bool) -> Verdict {
    let mut names: Vec<String> = match std::fs::read_dir(out) {
        Ok(entries) => entries
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect(),
        Err(_) if !finished => return Ok(Outcome::Refused),
        Err(error) => return Err(("finished without an output directory", error.to_string())),
    };
    names.sort();
    let expected = ["cells.json", "results.csv", "results.jsonl"];
    match finished {
        true if names == expected => Ok(Outcome::Accepted),
        true => Err(("finished with other files", format!("{names:?}"))),
        false => Err((
            "refused, leaving files",
            format!("{}: {names:?}", out.display()),
        )),
    }
}
