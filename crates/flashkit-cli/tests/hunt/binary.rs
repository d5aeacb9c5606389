//! Binary `.fkt` mutants, read in-process through `formats::open`, once with the format
//! detected and once forced to binary. The expected requests come from this file's own
//! decoding of the layout in docs/DESIGN.md ("The binary trace format"), not from the
//! reader.

use crate::harness::{Hunt, MAX_HANGS, Outcome, Reading, Tally, within};
use flashkit_trace::binary::{HEADER_BYTES, RECORD_BYTES, TraceWriter};
use flashkit_trace::formats::{Format, TraceOptions};
use flashkit_trace::{Op, Request, TraceError};
use rand::Rng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::time::Duration;
use xxhash_rust::xxh3::Xxh3;

const LIMIT: Duration = Duration::from_secs(5);
const DESCRIPTION: &str = "hunt: 20 requests of every operation";

/// Where the header's fields start (docs/DESIGN.md).
const VERSION_AT: usize = 8;
const RECORD_SIZE_AT: usize = 10;
const ADDRESS_UNIT_AT: usize = 12;
const TIME_UNIT_AT: usize = 16;
const FLAGS_AT: usize = 20;
const RECORDS_AT: usize = 24;
const SOURCE_AT: usize = 32;
const DESCRIPTION_LEN_AT: usize = 48;
const RESERVED_AT: usize = 52;
const CHECKSUM_AT: usize = 56;

/// 20 requests of each operation. Every time is past 2^32 ns, so that a time unit of
/// 2^32 - 1 overflows every record; sizes grow to 64 KiB, so that large address units
/// overflow some records and not others.
fn requests() -> Vec<Request> {
    (0..80u64)
        .map(|i| {
            let op = Op::ALL[(i % 4) as usize];
            let (offset, size) = match op {
                Op::Flush => (0, 0),
                _ if i == 37 => (1 << 40, 4096),
                _ => (i * 7 * 4096, [512, 4096, 65536][(i % 3) as usize]),
            };
            Request {
                time_ns: 10_000_000_000 + i * 1500,
                op,
                offset,
                size,
                volume: (i % 3) as u16,
            }
        })
        .collect()
}

/// What a mutant must read as, detected and forced alike.
#[derive(Clone)]
enum Expect {
    /// Refused, with no request read: the header, the signature or the length is wrong.
    Refused,
    /// These requests, then (if `bad`) an error naming that record.
    Records {
        requests: Vec<Request>,
        bad: Option<usize>,
    },
    /// Detected: an empty trace (an empty file); forced to binary: refused.
    Empty,
}

struct Mutant {
    class: &'static str,
    /// The field mutated, to group failures by.
    subject: String,
    what: String,
    bytes: Vec<u8>,
    expect: Expect,
}

pub fn hunt(hunt: &Hunt) {
    let mut tally = Tally::new("binary traces");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let original = dir.path().join("original.fkt");
    let mut writer = TraceWriter::create(&original, 0x5eed, DESCRIPTION).expect("create");
    for request in requests() {
        writer.push(&request).expect("push");
    }
    writer.finish().expect("finish");
    let bytes = std::fs::read(&original).expect("read the written trace");
    let mut rng = hunt.rng(2);
    let mut mutants = truncations(&bytes);
    mutants.extend(header_flips(&bytes));
    mutants.extend(header_fields(&bytes, &mut rng));
    mutants.extend(record_flips(&bytes, hunt.scale, &mut rng));
    for (serial, mutant) in mutants.iter().enumerate() {
        if tally.hangs >= MAX_HANGS {
            eprintln!("hunt: {MAX_HANGS} hung mutants; the binary hunt stops here");
            break;
        }
        let path = dir.path().join(format!("mutant-{serial}.fkt"));
        std::fs::write(&path, &mutant.bytes).expect("write a mutant");
        for (how, format) in [("detected", None), ("forced", Some(Format::Binary))] {
            let outcome = run(&path, mutant, format);
            tally.record(mutant.class, &format!("binary ({how})"), outcome);
        }
        let _ = std::fs::remove_file(&path);
    }
    tally.finish(hunt);
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Where the records start in the unmutated file.
fn body_at() -> usize {
    HEADER_BYTES + DESCRIPTION.len()
}

/// One record by the layout: `None` for an unknown operation, a nonzero reserved byte 21,
/// or a time, offset, size or end that the units make overflow.
fn decode_record(r: &[u8], address_unit: u64, time_unit: u64) -> Option<Request> {
    let op = match r[20] {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        3 => Op::Flush,
        _ => return None,
    };
    if r[21] != 0 {
        return None;
    }
    let offset = u64_at(r, 8).checked_mul(address_unit)?;
    let size = u32::try_from(u64::from(u32_at(r, 16)) * address_unit).ok()?;
    offset.checked_add(u64::from(size))?;
    Some(Request {
        time_ns: u64_at(r, 0).checked_mul(time_unit)?,
        op,
        offset,
        size,
        volume: u16_at(r, 22),
    })
}

/// Every record of a file whose header is valid, to the first bad one.
fn decode(bytes: &[u8], address_unit: u64, time_unit: u64) -> Expect {
    let mut requests = Vec::new();
    for (index, record) in bytes[body_at()..].chunks_exact(RECORD_BYTES).enumerate() {
        match decode_record(record, address_unit, time_unit) {
            Some(request) => requests.push(request),
            None => {
                return Expect::Records {
                    requests,
                    bad: Some(index),
                };
            }
        }
    }
    Expect::Records {
        requests,
        bad: None,
    }
}

/// Recompute the checksum: xxh3-64 of bytes 0..56 and then the description (as long as
/// the header now says, or what the file holds of it).
fn seal(bytes: &mut [u8]) {
    let length = u32_at(bytes, DESCRIPTION_LEN_AT) as usize;
    let end = (HEADER_BYTES + length).min(bytes.len());
    let mut hasher = Xxh3::new();
    hasher.update(&bytes[..CHECKSUM_AT]);
    hasher.update(&bytes[HEADER_BYTES..end]);
    let checksum = hasher.digest();
    bytes[CHECKSUM_AT..HEADER_BYTES].copy_from_slice(&checksum.to_le_bytes());
}

// ---- (a) every truncation ----

fn truncations(bytes: &[u8]) -> Vec<Mutant> {
    (0..bytes.len())
        .map(|len| Mutant {
            class: "a truncated",
            subject: format!("cut in the {}", field_at(len)),
            what: format!("cut to {len} of {} bytes", bytes.len()),
            bytes: bytes[..len].to_vec(),
            expect: if len == 0 {
                Expect::Empty
            } else {
                Expect::Refused
            },
        })
        .collect()
}

// ---- (b) every bit of the header and the description flipped ----

fn header_flips(bytes: &[u8]) -> Vec<Mutant> {
    let mut out = Vec::new();
    for at in 0..body_at() {
        for bit in 0..8 {
            let mut mutated = bytes.to_vec();
            mutated[at] ^= 1 << bit;
            out.push(Mutant {
                class: "b header bit",
                subject: field_at(at).to_string(),
                what: format!("header byte {at} bit {bit} flipped"),
                bytes: mutated,
                expect: Expect::Refused,
            });
        }
    }
    out
}

// ---- (c) header fields changed, checksum recomputed ----

/// One header change: what it is (its first words, to the first number, name the field),
/// the bytes written where, and what the file then reads as (`None`: refused).
struct Change {
    what: String,
    at: usize,
    value: Vec<u8>,
    expect: Option<Expect>,
}

fn change(what: String, at: usize, value: &[u8], expect: Option<Expect>) -> Change {
    Change {
        what,
        at,
        value: value.to_vec(),
        expect,
    }
}

fn header_fields(bytes: &[u8], rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let mut changes = refused_changes(bytes);
    changes.extend(valid_changes(bytes, rng));
    changes
        .into_iter()
        .map(|c| {
            let mut mutated = bytes.to_vec();
            put(&mut mutated, c.at, &c.value);
            seal(&mut mutated);
            let words = c.what.split(' ');
            let subject = words.take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()));
            Mutant {
                class: "c header field",
                subject: subject.collect::<Vec<_>>().join(" "),
                what: format!("{}, checksum recomputed", c.what),
                expect: c.expect.unwrap_or(Expect::Refused),
                bytes: mutated,
            }
        })
        .collect()
}

/// Changes the reader must refuse: a version, record size or zero unit it does not read,
/// flag bits it does not know, a record count or description length the file does not
/// hold, reserved bytes set, a description that is not UTF-8, another signature.
fn refused_changes(bytes: &[u8]) -> Vec<Change> {
    let records = u64_at(bytes, RECORDS_AT);
    let length = DESCRIPTION.len() as u32;
    let mut out = Vec::new();
    for v in [0u16, 2, 0xffff] {
        out.push(change(
            format!("version {v}"),
            VERSION_AT,
            &v.to_le_bytes(),
            None,
        ));
    }
    for v in [0u16, 23, 25, 48, 0xffff] {
        out.push(change(
            format!("record size {v}"),
            RECORD_SIZE_AT,
            &v.to_le_bytes(),
            None,
        ));
    }
    out.push(change(
        "address unit 0".into(),
        ADDRESS_UNIT_AT,
        &[0; 4],
        None,
    ));
    out.push(change("time unit 0".into(), TIME_UNIT_AT, &[0; 4], None));
    for flags in [2u32, 3, 0x8000_0000, u32::MAX] {
        let what = format!("flags {flags:#x} (unknown bits)");
        out.push(change(what, FLAGS_AT, &flags.to_le_bytes(), None));
    }
    for count in [records + 1, records - 1, 0, 1 << 60, u64::MAX] {
        let what = format!("record count {count}");
        out.push(change(what, RECORDS_AT, &count.to_le_bytes(), None));
    }
    for len in [length + 1, length - 1, 0, (1 << 20) + 1, u32::MAX] {
        let what = format!("description length {len}");
        out.push(change(what, DESCRIPTION_LEN_AT, &len.to_le_bytes(), None));
    }
    for at in RESERVED_AT..CHECKSUM_AT {
        out.push(change(
            format!("reserved header byte {at} = 1"),
            at,
            &[1],
            None,
        ));
    }
    out.push(change(
        "a description that is not UTF-8".into(),
        HEADER_BYTES,
        &[0xff],
        None,
    ));
    out.push(change("signature byte 1 'F' -> 'G'".into(), 1, b"G", None));
    out
}

/// Changes the reader must take: other units (scaled as decoded here, overflows refused at
/// their record), flags 0, another source digest or description.
fn valid_changes(bytes: &[u8], rng: &mut ChaCha8Rng) -> Vec<Change> {
    let mut out = Vec::new();
    for unit in [2u32, 512, 4096, 1 << 20, 1 << 24, u32::MAX] {
        let expect = Some(decode(bytes, u64::from(unit), 1));
        out.push(change(
            format!("address unit {unit}"),
            ADDRESS_UNIT_AT,
            &unit.to_le_bytes(),
            expect,
        ));
    }
    for unit in [1000u32, 1_000_000_000, u32::MAX] {
        let expect = Some(decode(bytes, 1, u64::from(unit)));
        out.push(change(
            format!("time unit {unit}"),
            TIME_UNIT_AT,
            &unit.to_le_bytes(),
            expect,
        ));
    }
    let all = || Some(decode(bytes, 1, 1));
    out.push(change(
        "flags 0 (not in time order)".into(),
        FLAGS_AT,
        &[0; 4],
        all(),
    ));
    let source: [u8; 16] = rng.random();
    out.push(change(
        "another source digest".into(),
        SOURCE_AT,
        &source,
        all(),
    ));
    let other: String = DESCRIPTION.chars().rev().collect();
    let what = "another description of the same length".to_string();
    out.push(change(what, HEADER_BYTES, other.as_bytes(), all()));
    out
}

/// The header field, description or record a file offset falls in.
fn field_at(at: usize) -> &'static str {
    match at {
        0..VERSION_AT => "signature",
        VERSION_AT..RECORD_SIZE_AT => "version",
        RECORD_SIZE_AT..ADDRESS_UNIT_AT => "record size",
        ADDRESS_UNIT_AT..TIME_UNIT_AT => "address unit",
        TIME_UNIT_AT..FLAGS_AT => "time unit",
        FLAGS_AT..RECORDS_AT => "flags",
        RECORDS_AT..SOURCE_AT => "record count",
        SOURCE_AT..DESCRIPTION_LEN_AT => "source digest",
        DESCRIPTION_LEN_AT..RESERVED_AT => "description length",
        RESERVED_AT..CHECKSUM_AT => "reserved bytes",
        CHECKSUM_AT..HEADER_BYTES => "checksum",
        _ if at < body_at() => "description",
        _ => "records",
    }
}

fn put(bytes: &mut [u8], at: usize, value: &[u8]) {
    bytes[at..at + value.len()].copy_from_slice(value);
}

// ---- (d) record bits flipped ----

fn record_flips(bytes: &[u8], scale: usize, rng: &mut ChaCha8Rng) -> Vec<Mutant> {
    let records = (bytes.len() - body_at()) / RECORD_BYTES;
    let mut out = Vec::new();
    for record in 0..records {
        for byte in 0..RECORD_BYTES {
            let mut bits: Vec<u8> = (0..8).collect();
            bits.shuffle(rng);
            for &bit in bits.iter().take(scale.min(8)) {
                let at = body_at() + record * RECORD_BYTES + byte;
                let mut mutated = bytes.to_vec();
                mutated[at] ^= 1 << bit;
                let expect = decode(&mutated, 1, 1);
                out.push(Mutant {
                    class: "d record bit",
                    subject: format!("record byte {byte}"),
                    what: format!("record {record} byte {byte} bit {bit} flipped (file byte {at})"),
                    bytes: mutated,
                    expect,
                });
            }
        }
    }
    out
}

// ---- reading and judging ----

fn read(path: &Path, format: Option<Format>) -> Reading {
    let options = TraceOptions {
        format,
        ..TraceOptions::default()
    };
    crate::harness::read(path, &options)
}

fn run(path: &Path, mutant: &Mutant, format: Option<Format>) -> Outcome {
    let owned = path.to_path_buf();
    let reading = match within(LIMIT, move || read(&owned, format)) {
        Ok(reading) => reading,
        Err(why) => {
            let kind = why.split(':').next().unwrap_or("failed");
            let kind = format!("{kind} ({})", mutant.subject);
            return Outcome::failed(kind, format!("{}: {why}", mutant.what));
        }
    };
    let forced = format.is_some();
    let verdict = match &mutant.expect {
        Expect::Empty if !forced => empty(&reading),
        Expect::Refused | Expect::Empty => refused(path, &reading, forced),
        Expect::Records { requests, bad } => records(path, &reading, requests, *bad),
    };
    match verdict {
        Ok(outcome) => outcome,
        Err((kind, why)) => Outcome::failed(
            format!("{kind} ({})", mutant.subject),
            format!("{}: {why}", mutant.what),
        ),
    }
}

type Verdict = Result<Outcome, (&'static str, String)>;

fn empty(reading: &Reading) -> Verdict {
    match (&reading.error, reading.format, reading.requests.len()) {
        (None, None, 0) => Ok(Outcome::Accepted),
        _ => Err((
            "an empty file read as something",
            format!(
                "format {:?}, {} requests, error {:?}",
                reading.format,
                reading.requests.len(),
                reading.error.as_ref().map(|e| e.to_string())
            ),
        )),
    }
}

/// Refused naming the file, nothing read; forced to binary, refused when opened.
fn refused(path: &Path, reading: &Reading, forced: bool) -> Verdict {
    let Some(error) = &reading.error else {
        let detail = format!(
            "read as {:?}: {} requests (first {:?}, last {:?})",
            reading.format,
            reading.requests.len(),
            reading.requests.first(),
            reading.requests.last()
        );
        return Err(("accepted", detail));
    };
    let message = error.to_string();
    if !message.contains(&path.display().to_string()) {
        return Err(("error names no file", message));
    }
    if !reading.requests.is_empty() {
        return Err((
            "read requests before refusing",
            format!("{} requests, then: {message}", reading.requests.len()),
        ));
    }
    if forced && reading.opened {
        return Err(("opened, refused only while reading", message));
    }
    Ok(Outcome::Refused)
}

/// Exactly `expected` as binary, then (if `bad`) an error naming that record.
fn records(path: &Path, reading: &Reading, expected: &[Request], bad: Option<usize>) -> Verdict {
    if reading.format != Some(Format::Binary) {
        let why = reading
            .error
            .as_ref()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return Err((
            "not read as binary",
            format!("format {:?}: {why}", reading.format),
        ));
    }
    if reading.requests != expected {
        let at = expected
            .iter()
            .zip(&reading.requests)
            .position(|(a, b)| a != b);
        let at = at.unwrap_or(expected.len().min(reading.requests.len()));
        let detail = format!(
            "{} requests expected, {} read (error {:?}); first difference at {at}: expected {:?}, read {:?}",
            expected.len(),
            reading.requests.len(),
            reading.error.as_ref().map(|e| e.to_string()),
            expected.get(at),
            reading.requests.get(at)
        );
        let kind = if bad.is_some() && reading.error.is_none() {
            "accepted a bad record"
        } else {
            "read other requests"
        };
        return Err((kind, detail));
    }
    match (bad, &reading.error) {
        (None, None) => Ok(Outcome::Accepted),
        (None, Some(error)) => Err(("refused a valid trace", error.to_string())),
        (Some(index), None) => Err(("accepted a bad record", format!("record {index} was read"))),
        (Some(index), Some(error)) => bad_record(path, error, index, reading.after_error),
    }
}

fn bad_record(path: &Path, error: &TraceError, index: usize, after: usize) -> Verdict {
    let message = error.to_string();
    let TraceError::Record {
        path: named,
        location,
        ..
    } = error
    else {
        return Err(("refused without naming the record", message));
    };
    let record = format!("record {index}");
    let names_record = *location == record || location.starts_with(&format!("{record} "));
    if named != path || !names_record {
        return Err((
            "refused naming another record or file",
            format!("expected {record}: {message}"),
        ));
    }
    if after > 0 {
        return Err(("read on after an error", message));
    }
    Ok(Outcome::Refused)
}
