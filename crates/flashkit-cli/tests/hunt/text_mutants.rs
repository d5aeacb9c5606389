//! The five classes of text-trace mutants and the exact outcome each must have, computed
//! from the unmutated input's requests and the line model (`layout.rs`).

use crate::harness::shown;
use crate::layout::{self, Field, Kind, Line, Role, Sep};
use crate::text::{Baseline, Expect, Mutant};
use flashkit_trace::Request;
use flashkit_trace::formats::Format;
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// Blank lines put before the first line: past the 64 KiB detection once looked at.
const MANY_BLANK_LINES: usize = 70_000;

/// Every mutant of one input, class by class.
pub fn all(base: &Baseline, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let mut all = same_mutants(base, rng);
    all.extend(refusal_mutants(base, scale, rng));
    all.extend(change_mutants(base, scale, rng));
    all.extend(duplicate_mutants(base, scale, rng));
    all.extend(noise_mutants(base, scale, rng));
    all
}

// ---- class 1: must read the same ----

fn same_mutants(base: &Baseline, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let text = &base.input.text;
    let mut all_at_once = trailing_blanks(&blank_lines(&crlf(text), rng), rng);
    all_at_once.splice(0..0, *b"\xef\xbb\xbf");
    strip_final_newline(&mut all_at_once);
    let mut unterminated = text.clone();
    strip_final_newline(&mut unterminated);
    let variants = [
        ("CRLF line endings", crlf(text), false),
        ("a UTF-8 byte order mark", bom(text), false),
        (
            "70,000 blank lines first",
            blank_first(text, MANY_BLANK_LINES),
            false,
        ),
        ("blank lines inserted", blank_lines(text, rng), false),
        (
            "trailing spaces and tabs",
            trailing_blanks(text, rng),
            false,
        ),
        ("gzip-compressed", text.clone(), true),
        ("no final newline", unterminated, false),
        ("all of these at once", all_at_once, true),
    ];
    let long = long_unread_field(base)
        .map(|text| ("a 70,000-byte field flashkit does not read", text, false));
    variants
        .into_iter()
        .chain(long)
        .map(|(what, text, gzip)| Mutant {
            class: "1 same",
            subject: what.to_string(),
            what: what.to_string(),
            text,
            gzip,
            expect: Expect::Same,
        })
        .collect()
}

/// The first request line's first field that flashkit does not read (an MSR host name, a
/// FIU process name, blkparse's `[process]`, a generic CSV `_` column) made 70,000 bytes
/// long: a first line longer than the 64 KiB detection once looked at. fio's file names
/// are not used: they number volumes.
fn long_unread_field(base: &Baseline) -> Option<Vec<u8>> {
    if matches!(base.format(), Format::FioV2 | Format::FioV3) {
        return None;
    }
    let (line, index) = base.lines.iter().enumerate().find_map(|(number, l)| {
        let read = |i: usize| l.fields.iter().any(|f| f.index == i);
        let unread = (0..l.spans.len()).find(|&i| !read(i));
        unread
            .filter(|_| l.role == Role::Request)
            .map(|i| (number, i))
    })?;
    let mut long = vec![b'x'; MANY_BLANK_LINES];
    if base.lines[line]
        .text(&base.input.text, index)
        .starts_with(b"[")
    {
        long[0] = b'[';
        long[MANY_BLANK_LINES - 1] = b']';
    }
    Some(replaced(base, line, index, &long))
}

fn crlf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 20);
    for &b in text {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

fn bom(text: &[u8]) -> Vec<u8> {
    let mut out = b"\xef\xbb\xbf".to_vec();
    out.extend_from_slice(text);
    out
}

fn blank_first(text: &[u8], count: usize) -> Vec<u8> {
    let mut out = vec![b'\n'; count];
    out.extend_from_slice(text);
    out
}

fn strip_final_newline(text: &mut Vec<u8>) {
    while text.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        text.pop();
    }
}

/// Cut into lines, each keeping its terminator.
fn split_lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|&b| b == b'\n').collect()
}

/// Up to 20 blank lines (empty, or spaces and tabs only) at random places, the start too.
fn blank_lines(text: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let lines = split_lines(text);
    let mut at: Vec<usize> = (0..rng.random_range(1..=20))
        .map(|_| rng.random_range(0..=lines.len()))
        .collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut next = at.iter().peekable();
    for (i, line) in lines.iter().enumerate() {
        while next.next_if(|&&a| a == i).is_some() {
            out.extend_from_slice(
                [&b"\n"[..], b" \t \n", b"\t\n"]
                    .choose(rng)
                    .copied()
                    .unwrap_or(b"\n"),
            );
        }
        out.extend_from_slice(line);
    }
    for _ in next {
        out.extend_from_slice(b"\n");
    }
    out
}

/// Spaces and tabs at the end of every line (before a `\r`, which ends the line).
fn trailing_blanks(text: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut out = Vec::new();
    for line in split_lines(text) {
        let (body, end) = match line {
            [body @ .., b'\r', b'\n'] => (body, &b"\r\n"[..]),
            [body @ .., b'\n'] => (body, &b"\n"[..]),
            body => (body, &b""[..]),
        };
        out.extend_from_slice(body);
        out.extend_from_slice(
            [&b" "[..], b"\t", b" \t  "]
                .choose(rng)
                .copied()
                .unwrap_or(b" "),
        );
        out.extend_from_slice(end);
    }
    out
}

/// A transformation that must not change what a mutant reads, only (for blank lines
/// first) the number of its lines: put around the mutants of classes 2 to 4, so that line
/// numbers are checked through CRLF, gzip and many blank lines too.
struct Wrapper {
    label: &'static str,
    gzip: bool,
    shift: usize,
}

fn wrap(text: Vec<u8>, rng: &mut ChaCha8Rng) -> (Vec<u8>, Wrapper) {
    let plain = |label| Wrapper {
        label,
        gzip: false,
        shift: 0,
    };
    match rng.random_range(0..12) {
        0 => (crlf(&text), plain(", with CRLF line endings")),
        1 => (bom(&text), plain(", after a byte order mark")),
        2 => (trailing_blanks(&text, rng), plain(", with trailing blanks")),
        3 => (
            text,
            Wrapper {
                label: ", gzip-compressed",
                gzip: true,
                shift: 0,
            },
        ),
        4 => (
            blank_first(&text, 3),
            Wrapper {
                label: ", after 3 blank lines",
                gzip: false,
                shift: 3,
            },
        ),
        5 => (
            blank_first(&text, MANY_BLANK_LINES),
            Wrapper {
                label: ", after 70,000 blank lines",
                gzip: true,
                shift: MANY_BLANK_LINES,
            },
        ),
        _ => (text, plain("")),
    }
}

// ---- class 2: a field the parser reads made garbage, or deleted ----

/// What no field holding a number, an operation or a time may hold.
const GARBAGE: [&str; 9] = [
    "x",
    "12x4",
    "-1",
    "NaN",
    "inf",
    "",
    "18446744073709551616",
    "1180591620717411303424",
    "1e999",
];

/// Replacements a field of `kind` must refuse, with the field names the error may give.
fn garbage_for(format: Format, field: &Field, sep: Sep) -> Vec<(String, Vec<&'static str>)> {
    let mut list: Vec<String> = GARBAGE.iter().map(|g| g.to_string()).collect();
    let past = |max: u128, unit: u64| (max / u128::from(unit) + 1).to_string();
    match field.kind {
        Kind::Time { unit_ns, decimal } => {
            list.push(past(u128::from(u64::MAX), unit_ns));
            if decimal {
                list.extend(["1.2.3".into(), ".".into()]);
            }
        }
        Kind::Offset { unit } if unit > 1 => list.push(past(u128::from(u64::MAX), unit)),
        Kind::Size { unit } => list.push(past(u128::from(u32::MAX), unit)),
        Kind::Volume => list.push("65536".into()),
        Kind::Op => list.extend(layout::bad_ops(format).iter().map(|s| s.to_string())),
        Kind::Decimal => list.extend(["1.2.3".into(), ".".into()]),
        Kind::Device if format == Format::Blkparse => {
            list.extend(["8", "8,", "8;16", ",16", "8,16,1", "-8,16", "8,x"].map(String::from))
        }
        // Not blkparse's actions (A B C D F G I M P Q R S T U X m), alphabetic or not.
        Kind::Action => list.extend(["D1", "+", "WS", "DD"].map(String::from)),
        Kind::Range => list = ["x", "-", "++", "*", "="].map(String::from).to_vec(),
        // A wait past 2^64 ns.
        Kind::Wait => list.push(past(u128::from(u64::MAX), 1000)),
        _ => {}
    }
    // An empty field in a space-separated line is a deleted one (its own mutants); an
    // empty SYSTOR IOType is a row without an operation, which is valid.
    if sep == Sep::Space || (format == Format::Systor && field.kind == Kind::Op) {
        list.retain(|g| !g.is_empty());
    }
    list.sort();
    list.dedup();
    let names = match field.kind {
        // The parser gives no name for `+` yet; any of these says which it is.
        Kind::Range => vec!["+", "sectors", "range", "line"],
        _ => vec![field.name],
    };
    list.into_iter().map(|g| (g, names.clone())).collect()
}

/// Every read field of every request (and fio wait) line, grouped by name and kind.
fn places(base: &Baseline) -> BTreeMap<(&'static str, String), Vec<(usize, Field)>> {
    let mut groups: BTreeMap<(&'static str, String), Vec<(usize, Field)>> = BTreeMap::new();
    for (number, line) in base.lines.iter().enumerate() {
        if line.role == Role::Other {
            continue;
        }
        for f in &line.fields {
            groups
                .entry((f.name, format!("{:?}", f.kind)))
                .or_default()
                .push((number, *f));
        }
    }
    groups
}

fn refusal_mutants(base: &Baseline, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let mut out = Vec::new();
    for group in places(base).values() {
        let (first_line, first) = group[0];
        let sep = base.lines[first_line].sep;
        for (garbage, names) in garbage_for(base.format(), &first, sep) {
            for (line, f) in pick(group, scale, rng) {
                let text = replaced(base, line, f.index, garbage.as_bytes());
                let what = format!("field {} := {garbage:?}", f.name);
                let subject = format!("field {}", f.name);
                let how = (subject, what);
                out.push(refused(base, line, text, how, names.clone(), rng));
            }
        }
        let deletable: Vec<(usize, Field)> = group
            .iter()
            .filter(|(l, _)| deletable(base, *l))
            .copied()
            .collect();
        for (line, f) in pick(&deletable, scale, rng) {
            let text = deleted(base, line, f.index);
            let what = format!("field {} deleted with its separator", f.name);
            let names = deletion_names(&base.lines[line], f.index);
            let subject = format!("field {} deleted", f.name);
            out.push(refused(base, line, text, (subject, what), names, rng));
        }
        let doublable: Vec<(usize, Field)> = group
            .iter()
            .filter(|(_, f)| doublable(base, f))
            .copied()
            .collect();
        for (line, f) in pick(&doublable, scale, rng) {
            let text = doubled(base, line, f.index);
            let what = format!("field {} written twice", f.name);
            let names = deletion_names(&base.lines[line], f.index);
            let subject = format!("field {} twice", f.name);
            out.push(refused(base, line, text, (subject, what), names, rng));
        }
    }
    out
}

/// The first of `places` (the first wait, a device's first line: where state starts) and
/// `scale` more drawn at random.
fn pick(places: &[(usize, Field)], scale: usize, rng: &mut ChaCha8Rng) -> Vec<(usize, Field)> {
    let Some(&first) = places.first() else {
        return Vec::new();
    };
    let mut out = vec![first];
    out.extend((0..scale).filter_map(|_| places.choose(rng).copied()));
    out
}

/// Fields that cannot be written twice and leave a valid line: not in SPC rows (which may
/// have extra fields), FIU rows (the process name may hold spaces), nor blkparse's count
/// (the process name after it is free text).
fn doublable(base: &Baseline, field: &Field) -> bool {
    match base.format() {
        Format::Spc | Format::Fiu => false,
        Format::Blkparse => field.name != "sectors",
        _ => true,
    }
}

/// The text with field `index` of `line` written again after itself (blkparse's
/// `R 584808 584808 + 936`).
fn doubled(base: &Baseline, line: usize, index: usize) -> Vec<u8> {
    let l = &base.lines[line];
    let (a, b) = l.spans[index];
    let at = l.start + b;
    let mut text = base.input.text[..at].to_vec();
    text.push(if l.sep == Sep::Comma { b',' } else { b' ' });
    text.extend_from_slice(&base.input.text[l.start + a..at]);
    text.extend_from_slice(&base.input.text[at..]);
    text
}

/// Lines where deleting a field cannot leave a valid line: SPC rows with extra fields and
/// FIU rows whose process name has spaces would take the next field in its place.
fn deletable(base: &Baseline, line: usize) -> bool {
    let fields = base.lines[line].spans.len();
    match base.format() {
        Format::Spc => fields == 5,
        Format::Fiu => fields == 9,
        _ => true,
    }
}

/// A deleted (or doubled) field shifts the ones after it: the error names the line, the
/// field deleted or one after it (or the end check's `offset`).
fn deletion_names(line: &Line, index: usize) -> Vec<&'static str> {
    let mut names = vec!["line", "offset"];
    for f in line.fields.iter().filter(|f| f.index >= index) {
        names.push(f.name);
        if f.kind == Kind::Range {
            names.extend(["+", "range"]);
        }
    }
    names
}

fn refused(
    base: &Baseline,
    line: usize,
    text: Vec<u8>,
    (subject, what): (String, String),
    fields: Vec<&'static str>,
    rng: &mut ChaCha8Rng,
) -> Mutant {
    let before = base.before[line];
    let mut skipped = base.requests.clone();
    let l = &base.lines[line];
    match l.role {
        Role::Request => {
            skipped.remove(before);
        }
        // A skipped wait does not move the clock of the requests after it.
        _ => {
            let wait = l.fields.iter().find(|f| f.kind == Kind::Wait);
            let us = wait.and_then(|f| layout::whole(l.text(&base.input.text, f.index)));
            let ns = us.unwrap_or(0) * 1000;
            skipped[before..].iter_mut().for_each(|r| r.time_ns -= ns);
        }
    }
    let (text, wrapper) = wrap(text, rng);
    Mutant {
        class: "2 refused",
        subject,
        what: format!(
            "line {}: {what} (was {:?}){}",
            line + 1,
            shown(base.line_bytes(line), 200),
            wrapper.label
        ),
        text,
        gzip: wrapper.gzip,
        expect: Expect::Refused {
            line: line + 1 + wrapper.shift,
            fields,
            before,
            skipped,
        },
    }
}

/// The text with field `index` of `line` replaced by `new`.
fn replaced(base: &Baseline, line: usize, index: usize, new: &[u8]) -> Vec<u8> {
    let l = &base.lines[line];
    let (a, b) = l.spans[index];
    let mut text = base.input.text[..l.start + a].to_vec();
    text.extend_from_slice(new);
    text.extend_from_slice(&base.input.text[l.start + b..]);
    text
}

/// The text with field `index` of `line` removed with one separator beside it.
fn deleted(base: &Baseline, line: usize, index: usize) -> Vec<u8> {
    let l = &base.lines[line];
    let p = &l.pieces;
    let (from, to) = match l.sep {
        // The piece and the comma after it, or the comma before the last piece.
        Sep::Comma if index + 1 < p.len() => (p[index].0, p[index + 1].0),
        Sep::Comma => (p[index - 1].1, p[index].1),
        Sep::Space if index > 0 => (p[index - 1].1, p[index].1),
        Sep::Space => (p[0].0, p.get(1).map_or(p[0].1, |n| n.0)),
    };
    let mut text = base.input.text[..l.start + from].to_vec();
    text.extend_from_slice(&base.input.text[l.start + to..]);
    text
}

// ---- class 3: one value changed to another valid one ----

fn change_mutants(base: &Baseline, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let mut out = Vec::new();
    for group in places(base).values() {
        for _ in 0..4 * scale {
            let &(line, f) = group.choose(rng).expect("a non-empty group");
            let old = base.lines[line].text(&base.input.text, f.index);
            let Some(new) = new_value(base.format(), f.kind, old, rng) else {
                continue;
            };
            let Some(requests) = changed(base, line, &f, old, new.as_bytes()) else {
                continue;
            };
            let (text, wrapper) = wrap(replaced(base, line, f.index, new.as_bytes()), rng);
            out.push(Mutant {
                class: "3 one value",
                subject: format!("field {}", f.name),
                what: format!(
                    "line {}: field {} {:?} -> {new:?}{}",
                    line + 1,
                    f.name,
                    shown(old, 40),
                    wrapper.label
                ),
                text,
                gzip: wrapper.gzip,
                expect: Expect::Requests(requests),
            });
        }
    }
    out
}

/// Another valid value of a field, or `None` for fields whose change is not local (device
/// numbers, blkparse's action and `+`).
fn new_value(format: Format, kind: Kind, old: &[u8], rng: &mut ChaCha8Rng) -> Option<String> {
    let delta = rng.random_range(1..=999u64);
    match kind {
        Kind::Time { decimal: true, .. } | Kind::Decimal => bump_decimal(old, delta),
        Kind::Time { .. } | Kind::Whole | Kind::Offset { .. } | Kind::Wait => {
            Some(layout::whole(old)?.checked_add(delta)?.to_string())
        }
        Kind::Size { .. } => {
            let value = layout::whole(old)?;
            let small = rng.random_range(1..=16u64);
            let new = if value > small && rng.random_bool(0.5) {
                value - small
            } else {
                value + small
            };
            Some(new.to_string())
        }
        Kind::Volume => {
            let value = layout::whole(old)?;
            let new = (value + rng.random_range(1..=65_535u64)) % 65_536;
            Some(new.to_string())
        }
        Kind::Op => {
            let others: Vec<&&str> = layout::spellings(format)
                .iter()
                .filter(|s| s.as_bytes() != old)
                .collect();
            others.choose(rng).map(|s| s.to_string())
        }
        Kind::Flags => {
            let value = layout::whole(old)?;
            Some(
                if rng.random_bool(0.5) {
                    value ^ 1
                } else {
                    value + 2
                }
                .to_string(),
            )
        }
        Kind::Device | Kind::Action | Kind::Range => None,
    }
}

/// `text` as a decimal with `delta` added in its last digit's place (same digits after the
/// point): `0.011413` and 7 give `0.011420`.
fn bump_decimal(text: &[u8], delta: u64) -> Option<String> {
    let text = std::str::from_utf8(text).ok()?;
    let places = text.split_once('.').map_or(0, |(_, f)| f.len());
    let digits: String = text.chars().filter(|&c| c != '.').collect();
    let value: u128 = digits.parse().ok()?;
    let new = (value + u128::from(delta)).to_string();
    let new = format!("{new:0>width$}", width = places + 1);
    if places == 0 {
        return Some(new);
    }
    let (int, frac) = new.split_at(new.len() - places);
    Some(format!("{int}.{frac}"))
}

/// The requests once field `f` of `line` reads `new` instead of `old`, by the model; `None`
/// when the change is not one a single request (or fio v2's clock) carries.
fn changed(
    base: &Baseline,
    line: usize,
    f: &Field,
    old: &[u8],
    new: &[u8],
) -> Option<Vec<Request>> {
    let format = base.format();
    let mut requests = base.requests.clone();
    let k = base.before[line];
    let carried_op =
        || layout::op_of(format, old).is_some_and(|op| op != flashkit_trace::Op::Flush);
    match f.kind {
        Kind::Time { .. } => requests[k].time_ns = layout::time_of(f.kind, new)?,
        Kind::Offset { unit } => requests[k].offset = layout::whole(new)?.checked_mul(unit)?,
        Kind::Size { unit } => {
            requests[k].size = u32::try_from(layout::whole(new)?.checked_mul(unit)?).ok()?
        }
        Kind::Volume => requests[k].volume = u16::try_from(layout::whole(new)?).ok()?,
        // A flush (fio sync, SCSI SYNCHRONIZE CACHE) turned into a read would carry its offset.
        Kind::Op if carried_op() => requests[k].op = layout::op_of(format, new)?,
        Kind::Op => return None,
        Kind::Flags => {
            let read = layout::whole(new)? & 1 == 1;
            requests[k].op = if read {
                flashkit_trace::Op::Read
            } else {
                flashkit_trace::Op::Write
            };
        }
        Kind::Whole | Kind::Decimal => {}
        Kind::Wait => {
            let ns = (layout::whole(new)? - layout::whole(old)?) * 1000;
            requests[k..].iter_mut().for_each(|r| r.time_ns += ns);
        }
        Kind::Device | Kind::Action | Kind::Range => return None,
    }
    let r = requests.get(k)?;
    r.offset.checked_add(u64::from(r.size))?;
    Some(requests)
}

// ---- class 4: a request line duplicated in place ----

fn duplicate_mutants(base: &Baseline, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let candidates: Vec<usize> = (0..base.lines.len())
        .filter(|&l| base.lines[l].role == Role::Request)
        .collect();
    let mut out = Vec::new();
    for _ in 0..6 * scale {
        let Some(&line) = candidates.choose(rng) else {
            break;
        };
        let l = &base.lines[line];
        let end = (l.end + 1).min(base.input.text.len());
        let mut text = base.input.text[..end].to_vec();
        if text.last() != Some(&b'\n') {
            text.push(b'\n');
        }
        text.extend_from_slice(&base.input.text[l.start..]);
        let k = base.before[line];
        let mut requests = base.requests.clone();
        requests.insert(k + 1, requests[k]);
        let (text, wrapper) = wrap(text, rng);
        out.push(Mutant {
            class: "4 duplicated",
            subject: "a request line".into(),
            what: format!("line {} duplicated{}", line + 1, wrapper.label),
            text,
            gzip: wrapper.gzip,
            expect: Expect::Requests(requests),
        });
    }
    out
}

// ---- class 5: random byte noise ----

fn noise_mutants(base: &Baseline, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let mut out = Vec::new();
    for _ in 0..16 * scale {
        let mut text = base.input.text.clone();
        let mut edits = Vec::new();
        for _ in 0..rng.random_range(1..=4) {
            let at = rng.random_range(0..text.len().max(1));
            match rng.random_range(0..3) {
                0 if at < text.len() => {
                    let bit = 1u8 << rng.random_range(0..8);
                    text[at] ^= bit;
                    edits.push(format!("byte {at} ^= {bit:#04x}"));
                }
                1 if at < text.len() => {
                    text.remove(at);
                    edits.push(format!("byte {at} deleted"));
                }
                _ => {
                    let byte: u8 = rng.random();
                    text.insert(at.min(text.len()), byte);
                    edits.push(format!("{byte:#04x} inserted at {at}"));
                }
            }
        }
        out.push(Mutant {
            class: "5 noise",
            subject: "noise".into(),
            what: edits.join(", then "),
            text,
            gzip: false,
            expect: Expect::Anything,
        });
    }
    out
}
