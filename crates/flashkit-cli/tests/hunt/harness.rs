//! The hunt's plumbing: the seed and scale, a deadline for every mutant, and the tally that
//! ends each part with a table of counts and, when mutants failed, one assertion listing them.

use flashkit_trace::formats::{Format, ParseReport, TraceOptions, open};
use flashkit_trace::{Request, TraceError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::any::Any;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The seed when `FLASHKIT_HUNT_SEED` is not set: any fixed number, so CI runs one hunt.
pub const DEFAULT_SEED: u64 = 20_250_601;

/// Failing mutants shown in the assertion message (`FLASHKIT_HUNT_SHOW` for more); the
/// rest are counted.
const SHOWN: usize = 50;

/// After this many hung mutants a part stops: each leaves a thread spinning.
pub const MAX_HANGS: usize = 5;

/// What to hunt with: the seed of every random choice and how many mutants to make.
pub struct Hunt {
    pub seed: u64,
    pub scale: usize,
}

impl Hunt {
    pub fn from_env() -> Hunt {
        let seed = env_number("FLASHKIT_HUNT_SEED").unwrap_or(DEFAULT_SEED);
        let scale = env_number("FLASHKIT_HUNT_SCALE").unwrap_or(1).max(1);
        Hunt {
            seed,
            scale: usize::try_from(scale).expect("FLASHKIT_HUNT_SCALE fits a usize"),
        }
    }

    /// The random stream numbered `stream`: each input and part draws from its own, so that
    /// adding mutants to one leaves the others' mutants as they were.
    pub fn rng(&self, stream: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream);
        rng
    }
}

fn env_number(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let value = text
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name}={text:?} is not a whole number"));
    Some(value)
}

/// How one mutant came out.
pub enum Outcome {
    /// Read (or run) as the oracle expected it to be.
    Accepted,
    /// Refused as the oracle expected it to be.
    Refused,
    /// Neither: `kind` groups failures of one cause, `detail` says how to reproduce it.
    Failed { kind: String, detail: String },
}

impl Outcome {
    pub fn failed(kind: impl Into<String>, detail: impl Into<String>) -> Outcome {
        Outcome::Failed {
            kind: kind.into(),
            detail: detail.into(),
        }
    }
}

#[derive(Default)]
struct Counts {
    mutants: u64,
    accepted: u64,
    refused: u64,
    failed: u64,
}

/// Counts per (class, format) and every failure, for one part of the hunt.
pub struct Tally {
    part: &'static str,
    started: Instant,
    counts: BTreeMap<(String, String), Counts>,
    /// (group, detail): the group is "class format: kind".
    failures: Vec<(String, String)>,
    pub hangs: usize,
}

impl Tally {
    pub fn new(part: &'static str) -> Tally {
        Tally {
            part,
            started: Instant::now(),
            counts: BTreeMap::new(),
            failures: Vec::new(),
            hangs: 0,
        }
    }

    pub fn record(&mut self, class: &str, format: &str, outcome: Outcome) {
        let counts = self
            .counts
            .entry((class.to_string(), format.to_string()))
            .or_default();
        counts.mutants += 1;
        match outcome {
            Outcome::Accepted => counts.accepted += 1,
            Outcome::Refused => counts.refused += 1,
            Outcome::Failed { kind, detail } => {
                counts.failed += 1;
                if kind.starts_with("hung") {
                    self.hangs += 1;
                }
                let group = format!("{class} {format}: {kind}");
                self.failures.push((group, detail));
            }
        }
    }

    /// Print the table and the seed, then fail listing the failing mutants if there are any.
    pub fn finish(self, hunt: &Hunt) {
        eprintln!("{}", self.table(hunt));
        if self.failures.is_empty() {
            return;
        }
        panic!("{}", self.failure_report(hunt));
    }

    fn table(&self, hunt: &Hunt) -> String {
        let mut text = format!(
            "hunt: {} (seed {}, scale {}, {:.1} s)\n{:<18} {:<22} {:>8} {:>9} {:>8} {:>7}\n",
            self.part,
            hunt.seed,
            hunt.scale,
            self.started.elapsed().as_secs_f64(),
            "class",
            "format",
            "mutants",
            "accepted",
            "refused",
            "failed"
        );
        let mut total = Counts::default();
        for ((class, format), c) in &self.counts {
            text.push_str(&format!(
                "{class:<18} {format:<22} {:>8} {:>9} {:>8} {:>7}\n",
                c.mutants, c.accepted, c.refused, c.failed
            ));
            total.mutants += c.mutants;
            total.accepted += c.accepted;
            total.refused += c.refused;
            total.failed += c.failed;
        }
        text.push_str(&format!(
            "{:<18} {:<22} {:>8} {:>9} {:>8} {:>7}",
            "total", "", total.mutants, total.accepted, total.refused, total.failed
        ));
        text
    }

    /// The first failure of every group, then the others, up to [`SHOWN`] in all: a cause
    /// that fails many mutants does not hide the others.
    fn failure_report(&self, hunt: &Hunt) -> String {
        let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (group, detail) in &self.failures {
            groups.entry(group).or_default().push(detail);
        }
        let mut shown: Vec<String> = groups
            .iter()
            .map(|(group, details)| format!("[{group}] ({} like it) {}", details.len(), details[0]))
            .collect();
        let rest = groups.iter().flat_map(|(group, details)| {
            details[1..].iter().map(move |d| format!("[{group}] {d}"))
        });
        shown.extend(rest);
        let count = shown.len();
        let limit = env_number("FLASHKIT_HUNT_SHOW").map_or(SHOWN, |n| n as usize);
        shown.truncate(limit);
        format!(
            "hunt {}: {} mutants failed in {} groups (seed {}, scale {}: rerun with \
             FLASHKIT_HUNT_SEED={} FLASHKIT_HUNT_SCALE={}); {} shown, the first of every \
             group first:\n{}",
            self.part,
            count,
            groups.len(),
            hunt.seed,
            hunt.scale,
            hunt.seed,
            hunt.scale,
            shown.len(),
            shown.join("\n")
        )
    }
}

/// Run `work` on its own thread and wait at most `limit` for it: a panic comes back as
/// `Err("panicked: ...")`, no answer in time as `Err("hung: ...")` (the thread is left
/// behind; [`MAX_HANGS`] bounds how many a part leaves).
pub fn within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (send, receive) = mpsc::channel();
    std::thread::Builder::new()
        .name("hunt-mutant".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            // The receiver is gone only after a timeout, which was reported already.
            let _ = send.send(result.map_err(panic_text));
        })
        .expect("a thread for the mutant");
    match receive.recv_timeout(limit) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(format!("panicked: {message}")),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(format!("hung: no answer within {} s", limit.as_secs_f64()))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err("panicked: the thread died".into()),
    }
}

fn panic_text(payload: Box<dyn Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Whether `text` says "line N" for exactly this N (not "line 12" for N = 1).
pub fn names_line(text: &str, line: usize) -> bool {
    let needle = format!("line {line}");
    text.match_indices(&needle).any(|(at, _)| {
        !text[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// Whether `text` holds `word` with no letter, digit or underscore on either side.
pub fn names_word(text: &str, word: &str) -> bool {
    let inner = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !word.is_empty()
        && text.match_indices(word).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(inner) && !after.is_some_and(inner)
        })
}

/// Text for a message: lossy UTF-8, cut to `limit` characters.
pub fn shown(bytes: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(limit).collect();
    if text.chars().count() > limit {
        out.push_str("...");
    }
    out
}

/// Everything a reading gave: the requests up to the first error, and the error.
pub struct Reading {
    /// Whether the trace opened (its header, or detection, was accepted).
    pub opened: bool,
    pub format: Option<Format>,
    pub requests: Vec<Request>,
    pub error: Option<TraceError>,
    /// Items the stream still gave after its error (it should stop).
    pub after_error: usize,
    pub report: ParseReport,
}

pub fn read(path: &Path, options: &TraceOptions) -> Reading {
    let mut reading = Reading {
        opened: false,
        format: None,
        requests: Vec::new(),
        error: None,
        after_error: 0,
        report: ParseReport::default(),
    };
    let mut stream = match open(path, options) {
        Ok(stream) => stream,
        Err(error) => {
            reading.error = Some(error);
            return reading;
        }
    };
    reading.opened = true;
    reading.format = stream.format();
    for item in stream.by_ref() {
        match item {
            Ok(request) => reading.requests.push(request),
            Err(error) => {
                reading.error = Some(error);
                break;
            }
        }
    }
    reading.after_error = stream.by_ref().take(10).count();
    reading.report = stream.report();
    reading
}
