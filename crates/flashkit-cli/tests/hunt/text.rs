//! Text-trace mutants, read in-process through `flashkit_trace::formats::open` with the
//! format detected (detection is under test too). The oracles come from the unmutated
//! input's requests and the line model in `layout.rs`; see the top of `hunt.rs` for the
//! classes.

use crate::harness::{Hunt, MAX_HANGS, Outcome, Reading, Tally, read, shown, within};
use crate::inputs::{self, Input};
use crate::layout::{self, Line, Role};
use flashkit_trace::formats::{Format, TraceOptions};
use flashkit_trace::{Request, TraceError};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// A mutant of a few hundred lines reads in milliseconds; this is a hang.
const LIMIT: Duration = Duration::from_secs(5);

pub fn hunt(hunt: &Hunt) {
    let mut tally = Tally::new("text traces");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut all = inputs::shared();
    all.extend(inputs::synthetic(&mut hunt.rng(1)));
    let mut serial = 0usize;
    for (number, input) in all.iter().enumerate() {
        if tally.hangs >= MAX_HANGS {
            eprintln!("hunt: {MAX_HANGS} hung mutants; the text hunt stops here");
            break;
        }
        let mut rng = hunt.rng(100 + number as u64);
        let Some(base) = Baseline::new(dir.path(), input, &mut tally) else {
            continue;
        };
        for mutant in crate::text_mutants::all(&base, hunt.scale, &mut rng) {
            serial += 1;
            let path = dir.path().join(format!("mutant-{serial}.trace"));
            let outcome = run(&path, &base, &mutant);
            // A hung reader may still hold it; the directory goes at the end anyway.
            let _ = std::fs::remove_file(&path);
            tally.record(mutant.class, input.format.name(), outcome);
        }
    }
    tally.finish(hunt);
}

/// An input as read unmutated, with the model of its lines checked against that reading.
pub struct Baseline<'a> {
    pub input: &'a Input,
    pub lines: Vec<Line>,
    pub requests: Vec<Request>,
    /// Requests before each line.
    pub before: Vec<usize>,
}

impl<'a> Baseline<'a> {
    fn new(dir: &Path, input: &'a Input, tally: &mut Tally) -> Option<Baseline<'a>> {
        let path = dir.join("baseline.trace");
        std::fs::write(&path, &input.text).expect("write the baseline");
        let format = input.format.name();
        let reading = match read_within(&path, &TraceOptions::default()) {
            Ok(reading) => reading,
            Err((kind, detail)) => {
                tally.record("baseline", format, Outcome::failed(kind, detail));
                return None;
            }
        };
        let lines = layout::lines(input.format, &input.text);
        let mut before = Vec::with_capacity(lines.len());
        let mut count = 0;
        for line in &lines {
            before.push(count);
            count += usize::from(line.role == Role::Request);
        }
        let base = Baseline {
            input,
            lines,
            requests: reading.requests.clone(),
            before,
        };
        let outcome = base.check(&reading);
        let ok = matches!(outcome, Outcome::Accepted);
        tally.record("baseline", format, outcome);
        ok.then_some(base)
    }

    /// The unmutated input reads without error as its format, and the model decodes every
    /// request line to the request the library gives: otherwise the oracles are void.
    fn check(&self, reading: &Reading) -> Outcome {
        let name = &self.input.name;
        if let Some(error) = &reading.error {
            return Outcome::failed("unmutated input refused", format!("{name}: {error}"));
        }
        if reading.format != Some(self.input.format) {
            let detail = format!("{name}: detected as {:?}", reading.format);
            return Outcome::failed("unmutated input detected wrongly", detail);
        }
        let modelled = self.modelled();
        if modelled.len() != self.requests.len() {
            let detail = format!(
                "{name}: the model sees {} requests, flashkit reads {}",
                modelled.len(),
                self.requests.len()
            );
            return Outcome::failed("model", detail);
        }
        for ((line, model), real) in modelled.iter().zip(&self.requests) {
            let mut real = *real;
            if layout::numbers_volumes(self.input.format) {
                real.volume = 0;
            }
            if model.as_ref() != Some(&real) {
                let text = shown(self.line_bytes(*line), 120);
                let detail = format!(
                    "{name}: line {}: {text:?}: model {model:?}, flashkit {real:?}",
                    line + 1
                );
                return Outcome::failed("model", detail);
            }
        }
        Outcome::Accepted
    }

    /// The model's request for every request line, with fio v2's clock run from its waits.
    fn modelled(&self) -> Vec<(usize, Option<Request>)> {
        let text = &self.input.text;
        let mut clock_ns = 0u64;
        let mut out = Vec::new();
        for (number, line) in self.lines.iter().enumerate() {
            match line.role {
                Role::Request => out.push((
                    number,
                    layout::decode(self.input.format, text, line, clock_ns),
                )),
                Role::Wait => {
                    let wait = line.fields.iter().find(|f| f.kind == layout::Kind::Wait);
                    let us = wait.and_then(|f| layout::whole(line.text(text, f.index)));
                    clock_ns = clock_ns.saturating_add(us.unwrap_or(0).saturating_mul(1000));
                }
                Role::Other => {}
            }
        }
        out
    }

    pub fn line_bytes(&self, line: usize) -> &[u8] {
        let l = &self.lines[line];
        &self.input.text[l.start..l.end]
    }

    pub fn format(&self) -> Format {
        self.input.format
    }
}

/// What a mutant must read as.
pub enum Expect {
    /// As the unmutated input.
    Same,
    /// As exactly these requests.
    Requests(Vec<Request>),
    /// Refused at `line`, naming one of `fields`, after the `before` requests ahead of it;
    /// with bad lines skipped, read as `skipped` with one bad line counted.
    Refused {
        line: usize,
        fields: Vec<&'static str>,
        before: usize,
        skipped: Vec<Request>,
    },
    /// Noise: anything but a panic, a hang, or an error that names no file and line.
    Anything,
}

pub struct Mutant {
    pub class: &'static str,
    /// What was mutated (a field, a transformation), to group failures by.
    pub subject: String,
    /// What was done, enough to redo it by hand.
    pub what: String,
    pub text: Vec<u8>,
    pub gzip: bool,
    pub expect: Expect,
}

// ---- reading a mutant and judging it ----

/// [`read`] on a thread with a deadline: `Err((kind, detail))` for a panic or a hang.
fn read_within(path: &Path, options: &TraceOptions) -> Result<Reading, (String, String)> {
    let (owned, options) = (path.to_path_buf(), options.clone());
    within(LIMIT, move || read(&owned, &options)).map_err(|why| {
        let kind = why.split(':').next().unwrap_or("failed").to_string();
        (kind, why)
    })
}

fn write_mutant(path: &Path, mutant: &Mutant) {
    let bytes = if mutant.gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&mutant.text).expect("gzip in memory");
        encoder.finish().expect("gzip in memory")
    } else {
        mutant.text.clone()
    };
    std::fs::write(path, bytes).expect("write a mutant");
}

fn run(path: &Path, base: &Baseline, mutant: &Mutant) -> Outcome {
    write_mutant(path, mutant);
    let say = |why: String| format!("{}: {}: {why}", base.input.name, mutant.what);
    let group = |kind: &str| format!("{kind} ({})", mutant.subject);
    let strict = match read_within(path, &TraceOptions::default()) {
        Ok(reading) => reading,
        Err((kind, why)) => return Outcome::failed(group(&kind), say(why)),
    };
    let verdict = match &mutant.expect {
        Expect::Same => same(base, &strict, &base.requests),
        Expect::Requests(expected) => same(base, &strict, expected),
        Expect::Refused {
            line,
            fields,
            before,
            ..
        } => refusal(path, base, &strict, *line, fields, *before),
        Expect::Anything => anything(
            path,
            &strict,
            mutant.text.iter().filter(|&&b| b == b'\n').count() + 1,
        ),
    };
    let verdict = match (verdict, &mutant.expect) {
        (Ok(()), Expect::Refused { line, skipped, .. }) => skipping(path, *line, skipped),
        (Ok(()), Expect::Anything) if strict.error.is_some() => Ok(Outcome::Refused),
        (verdict, _) => verdict.map(|()| Outcome::Accepted),
    };
    match verdict {
        Ok(outcome) => outcome,
        Err((kind, why)) => Outcome::failed(group(kind), say(why)),
    }
}

type Verdict<T = ()> = Result<T, (&'static str, String)>;

/// Read without error, as the input's format, giving exactly `expected`.
fn same(base: &Baseline, reading: &Reading, expected: &[Request]) -> Verdict {
    if let Some(error) = &reading.error {
        return Err((
            "refused a valid mutant",
            format!(
                "expected {} requests; got the error {error}",
                expected.len()
            ),
        ));
    }
    if reading.format != Some(base.format()) {
        return Err((
            "detected another format",
            format!("detected as {:?}", reading.format),
        ));
    }
    compare(expected, &reading.requests).map_err(|why| ("read other requests", why))
}

fn compare(expected: &[Request], got: &[Request]) -> Result<(), String> {
    if expected == got {
        return Ok(());
    }
    let at = expected
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(got.len()));
    Err(format!(
        "{} requests expected, {} read; first difference at request {at}: expected {:?}, read {:?}",
        expected.len(),
        got.len(),
        expected.get(at),
        got.get(at)
    ))
}

/// Refused at `line` naming one of `fields`, after exactly the requests ahead of it.
fn refusal(
    path: &Path,
    base: &Baseline,
    reading: &Reading,
    line: usize,
    fields: &[&str],
    before: usize,
) -> Verdict {
    let Some(error) = &reading.error else {
        return Err((
            "accepted",
            format!(
                "expected line {line} refused (field {}); read {} requests, report {:?}",
                fields.join(" or "),
                reading.requests.len(),
                reading.report.skipped()
            ),
        ));
    };
    names_the_line(path, error, line, fields)?;
    let message = error.to_string();
    if reading.format.is_some_and(|f| f != base.format()) {
        return Err((
            "detected another format",
            format!("{:?}: {message}", reading.format),
        ));
    }
    if reading.after_error > 0 {
        return Err(("read on after an error", message));
    }
    compare(&base.requests[..before], &reading.requests)
        .map_err(|why| ("read other requests before the bad line", why))
}

/// A bad-line error naming the file, `line N` and one of `fields`.
fn names_the_line(path: &Path, error: &TraceError, line: usize, fields: &[&str]) -> Verdict {
    let message = error.to_string();
    let TraceError::Record {
        path: named,
        location,
        field,
        ..
    } = error
    else {
        return Err(("refused, but not as a bad line", message));
    };
    if named != path || !message.contains(&path.display().to_string()) {
        return Err(("error names another file", message));
    }
    if *location != format!("line {line}") {
        let detail = format!("expected line {line}: {message}");
        return Err(("refused at another line", detail));
    }
    if !fields.contains(field) {
        let detail = format!("expected field {}: {message}", fields.join(" or "));
        return Err(("refused naming another field", detail));
    }
    Ok(())
}

/// With bad lines skipped: the requests without the bad line's, one bad line counted.
fn skipping(path: &Path, line: usize, expected: &[Request]) -> Verdict<Outcome> {
    let options = TraceOptions {
        skip_bad_lines: true,
        ..TraceOptions::default()
    };
    let reading =
        read_within(path, &options).map_err(|(_, why)| ("skipping: panicked or hung", why))?;
    if let Some(error) = &reading.error {
        return Err(("skipping: refused", error.to_string()));
    }
    compare(expected, &reading.requests).map_err(|why| ("skipping: read other requests", why))?;
    let report = &reading.report;
    let first = report.first_bad_line.as_deref().unwrap_or("");
    if report.bad_lines != 1 || !crate::harness::names_line(first, line) {
        return Err((
            "skipping: wrong bad-line count",
            format!(
                "expected 1 bad line, line {line}; got {} ({first})",
                report.bad_lines
            ),
        ));
    }
    Ok(Outcome::Refused)
}

/// Noise: an error names the file and a line (of the text, or just past it); requests read
/// fit 64 bits.
fn anything(path: &Path, reading: &Reading, lines: usize) -> Verdict {
    if let Some(r) = reading
        .requests
        .iter()
        .find(|r| r.offset.checked_add(u64::from(r.size)).is_none())
    {
        return Err(("a request past 2^64", format!("{r:?}")));
    }
    let Some(error) = &reading.error else {
        return Ok(());
    };
    let message = error.to_string();
    if !message.contains(&path.display().to_string()) {
        return Err(("error names no file", message));
    }
    let numbers = line_numbers(&message);
    if numbers.is_empty() || numbers.iter().any(|&n| n > lines + 1) {
        return Err((
            "error names no line of the file",
            format!("{lines} lines: {message}"),
        ));
    }
    Ok(())
}

/// Every N of "line N" in a message.
fn line_numbers(message: &str) -> Vec<usize> {
    message
        .match_indices("line ")
        .filter_map(|(at, m)| {
            let digits: String = message[at + m.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}
