//! What each text format's lines hold, modelled from docs/TRACES.md, the formats' published
//! definitions and the field names the parsers give in their errors, but not from the
//! parsers' code: how a line splits into fields (with byte spans, so that a mutant replaces
//! or deletes exactly one), which fields flashkit reads, what each holds, and which lines
//! are requests. The hunt checks this model against the library on every unmutated input
//! before using it as an oracle, so a wrong model shows up as a "model" failure, not as
//! findings.

use flashkit_trace::formats::Format;
use flashkit_trace::{Op, Request};

pub const SECTOR: u64 = 512;
const NS_PER_S: u64 = 1_000_000_000;

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The request's time: a whole number, or a decimal, in units of `unit_ns`.
    Time { unit_ns: u64, decimal: bool },
    /// The request's offset in units of `unit` bytes.
    Offset { unit: u64 },
    /// The request's size in units of `unit` bytes.
    Size { unit: u64 },
    /// A volume number written as such (0 to 65535).
    Volume,
    /// The operation, spelt as the format spells it.
    Op,
    /// DiskSim's flags: any whole number; bit 0 set is a read.
    Flags,
    /// A whole number that is read and checked but not carried by the request.
    Whole,
    /// A decimal that is read and checked but not carried by the request.
    Decimal,
    /// A device number: devices are numbered in order of appearance, so a changed one
    /// renumbers others.
    Device,
    /// blkparse's action letter.
    Action,
    /// blkparse's `+` between the sector and the count.
    Range,
    /// fio v2's `wait`: microseconds added to the clock of every later request.
    Wait,
}

/// One field flashkit reads: its name in flashkit's errors, its position, what it holds.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub index: usize,
    pub kind: Kind,
}

fn field(name: &'static str, index: usize, kind: Kind) -> Field {
    Field { name, index, kind }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sep {
    Comma,
    Space,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Becomes one request.
    Request,
    /// fio v2's wait: moves the clock.
    Wait,
    /// Anything else: blank, header, comment, summary, another event, a file action.
    Other,
}

/// One line of an input: where it is, its fields, what flashkit reads of it.
#[derive(Clone, Debug)]
pub struct Line {
    /// Bytes `start..end` of the text, without the newline.
    pub start: usize,
    pub end: usize,
    pub sep: Sep,
    /// Every field's bytes (trimmed), relative to `start`.
    pub spans: Vec<(usize, usize)>,
    /// For comma formats, the untrimmed pieces between commas (for deleting a field with
    /// its comma); the spans again for space-separated formats.
    pub pieces: Vec<(usize, usize)>,
    pub fields: Vec<Field>,
    pub role: Role,
}

impl Line {
    pub fn text<'a>(&self, text: &'a [u8], index: usize) -> &'a [u8] {
        let (a, b) = self.spans[index];
        &text[self.start + a..self.start + b]
    }
}

/// What a format's lines look like so far (headers come first, blkparse's summary last).
#[derive(Default)]
struct State {
    started: bool,
    in_summary: bool,
    csv: Vec<Option<(&'static str, Kind)>>,
}

pub fn separator(format: Format) -> Sep {
    match format {
        Format::Fiu | Format::Blkparse | Format::FioV2 | Format::FioV3 | Format::DiskSim => {
            Sep::Space
        }
        _ => Sep::Comma,
    }
}

/// The lines of `text` (a final newline ends the last line; it does not start another).
pub fn lines(format: Format, text: &[u8]) -> Vec<Line> {
    let sep = separator(format);
    let mut state = State::default();
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = memchr(b'\n', &text[start..]).map_or(text.len(), |at| start + at);
        let bytes = &text[start..end];
        let (spans, pieces) = split(bytes, sep);
        let (role, fields) = if trim(bytes).is_empty() {
            (Role::Other, Vec::new())
        } else {
            let view = View {
                bytes,
                spans: &spans,
            };
            let described = describe(format, &mut state, &view);
            state.started = true;
            described
        };
        out.push(Line {
            start,
            end,
            sep,
            spans,
            pieces,
            fields,
            role,
        });
        start = end + 1;
    }
    out
}

fn memchr(byte: u8, bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == byte)
}

pub fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

type Spans = Vec<(usize, usize)>;

fn split(bytes: &[u8], sep: Sep) -> (Spans, Spans) {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    match sep {
        Sep::Comma => {
            let mut pieces = Vec::new();
            let mut from = 0;
            for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == b',') {
                pieces.push((from, at));
                from = at + 1;
            }
            pieces.push((from, bytes.len()));
            let spans = pieces
                .iter()
                .map(|&(a, b)| {
                    let lead = bytes[a..b].iter().take_while(|c| blank(c)).count();
                    let tail = bytes[a + lead..b]
                        .iter()
                        .rev()
                        .take_while(|c| blank(c))
                        .count();
                    (a + lead, b - tail)
                })
                .collect();
            (spans, pieces)
        }
        Sep::Space => {
            let mut spans = Vec::new();
            let mut at = 0;
            while at < bytes.len() {
                if blank(&bytes[at]) {
                    at += 1;
                    continue;
                }
                let from = at;
                while at < bytes.len() && !blank(&bytes[at]) {
                    at += 1;
                }
                spans.push((from, at));
            }
            (spans.clone(), spans)
        }
    }
}

/// A line's fields as text.
struct View<'a> {
    bytes: &'a [u8],
    spans: &'a [(usize, usize)],
}

impl View<'_> {
    fn get(&self, index: usize) -> &[u8] {
        self.spans
            .get(index)
            .map_or(&b""[..], |&(a, b)| &self.bytes[a..b])
    }

    fn len(&self) -> usize {
        self.spans.len()
    }
}

type Described = (Role, Vec<Field>);

fn describe(format: Format, state: &mut State, line: &View) -> Described {
    match format {
        Format::Msr => msr(),
        Format::Spc => spc(),
        Format::Fiu => fiu(line),
        Format::Blkparse => blkparse(state, line),
        Format::FioV2 | Format::FioV3 => fio(format, state, line),
        Format::Systor => systor(state, line),
        Format::Tencent => tencent(),
        Format::CloudPhysics => cloudphysics(state, line),
        Format::DiskSim => disksim(),
        Format::Csv => csv(state, line),
        Format::Binary => (Role::Other, Vec::new()),
    }
}

fn seconds() -> Kind {
    Kind::Time {
        unit_ns: NS_PER_S,
        decimal: true,
    }
}

/// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`; the host is not read.
fn msr() -> Described {
    let ticks = Kind::Time {
        unit_ns: 100,
        decimal: false,
    };
    (
        Role::Request,
        vec![
            field("Timestamp", 0, ticks),
            field("DiskNumber", 2, Kind::Volume),
            field("Type", 3, Kind::Op),
            field("Offset", 4, Kind::Offset { unit: 1 }),
            field("Size", 5, Kind::Size { unit: 1 }),
            field("ResponseTime", 6, Kind::Whole),
        ],
    )
}

/// `ASU,LBA,Size,Opcode,Timestamp[,...]`; the fields after the fifth are not read.
fn spc() -> Described {
    (
        Role::Request,
        vec![
            field("ASU", 0, Kind::Volume),
            field("LBA", 1, Kind::Offset { unit: SECTOR }),
            field("Size", 2, Kind::Size { unit: 1 }),
            field("Opcode", 3, Kind::Op),
            field("Timestamp", 4, seconds()),
        ],
    )
}

/// `ts pid process lba size rw major minor md5`, read from the end after the process name
/// (which is not read, nor is the md5).
fn fiu(line: &View) -> Described {
    let n = line.len();
    if n < 9 {
        return (Role::Other, Vec::new());
    }
    let ns = Kind::Time {
        unit_ns: 1,
        decimal: false,
    };
    (
        Role::Request,
        vec![
            field("ts", 0, ns),
            field("pid", 1, Kind::Whole),
            field("lba", n - 6, Kind::Offset { unit: SECTOR }),
            field("size", n - 5, Kind::Size { unit: SECTOR }),
            field("rw", n - 4, Kind::Op),
            field("major", n - 3, Kind::Device),
            field("minor", n - 2, Kind::Device),
        ],
    )
}

/// Whether a blkparse line's first word opens its summary block.
fn starts_summary(first: &[u8]) -> bool {
    let cpu = first
        .strip_prefix(b"CPU")
        .is_some_and(|rest| !rest.is_empty() && rest.iter().all(u8::is_ascii_digit));
    cpu || matches!(first, b"Total" | b"Throughput" | b"Events" | b"Skips:")
}

/// `maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]`: `D` events
/// with a sector range are requests, and so is a pre-flush without data (`FN`).
fn blkparse(state: &mut State, line: &View) -> Described {
    if state.in_summary || starts_summary(line.get(0)) {
        state.in_summary = true;
        return (Role::Other, Vec::new());
    }
    if line.get(5) != b"D" {
        return (Role::Other, Vec::new());
    }
    let mut fields = vec![
        field("device", 0, Kind::Device),
        field("cpu", 1, Kind::Whole),
        field("sequence", 2, Kind::Whole),
        field("time", 3, seconds()),
        field("pid", 4, Kind::Whole),
        field("action", 5, Kind::Action),
        field("RWBS", 6, Kind::Op),
    ];
    let ranged = line.len() >= 10 && line.get(8) == b"+";
    match rwbs(line.get(6)) {
        Some(Op::Flush) if line.len() == 7 || (line.len() == 8 && is_process(line.get(7))) => {}
        Some(Op::Read | Op::Write | Op::Trim) if ranged => fields.extend([
            field("sector", 7, Kind::Offset { unit: SECTOR }),
            field("+", 8, Kind::Range),
            field("sectors", 9, Kind::Size { unit: SECTOR }),
        ]),
        _ => return (Role::Other, Vec::new()),
    }
    (Role::Request, fields)
}

fn is_process(word: &[u8]) -> bool {
    word.starts_with(b"[")
}

/// The operation of a blkparse RWBS field as the kernel writes it (`blk_fill_rwbs`): an
/// optional pre-flush `F`, one of `W`, `D`, `R`, `N`, then modifiers in their order
/// (`F` FUA, `A` read-ahead, `S` sync, `M` metadata; `E` secure erase, `B` barrier), each
/// at most once. `FN` is a flush; `N` alone moves no data (`None`), as does anything else.
pub fn rwbs(text: &[u8]) -> Option<Op> {
    let (preflush, rest) = match text {
        [b'F', rest @ ..] if !rest.is_empty() => (true, rest),
        _ => (false, text),
    };
    let (&letter, modifiers) = rest.split_first()?;
    let mut order = &b"FEASMB"[..];
    for m in modifiers {
        let at = order.iter().position(|o| o == m)?;
        order = &order[at + 1..];
    }
    match letter {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Trim),
        b'N' if preflush && modifiers.is_empty() => Some(Op::Flush),
        _ => None,
    }
}

/// fio iologs: a header, file actions, `file action offset length`, v3 with a timestamp
/// first. Syncs are flushes whose offset and length are read but not carried; v2 waits
/// move the clock; v3 waits are ignored.
fn fio(format: Format, state: &mut State, line: &View) -> Described {
    if !state.started {
        return (Role::Other, Vec::new());
    }
    let v3 = format == Format::FioV3;
    let first = usize::from(v3);
    let mut fields = Vec::new();
    if v3 {
        let us = Kind::Time {
            unit_ns: 1000,
            decimal: false,
        };
        fields.push(field("timestamp", 0, us));
    }
    if line.len() != first + 4 {
        return (Role::Other, Vec::new());
    }
    let (role, carried) = match line.get(first + 1) {
        b"read" | b"write" | b"trim" => (Role::Request, true),
        b"sync" | b"datasync" | b"sync_file_range" => (Role::Request, false),
        b"wait" if !v3 => (Role::Wait, false),
        _ => return (Role::Other, Vec::new()),
    };
    fields.push(field("action", first + 1, Kind::Op));
    let (offset, length) = match role {
        Role::Wait => (Kind::Wait, Kind::Whole),
        _ if carried => (Kind::Offset { unit: 1 }, Kind::Size { unit: 1 }),
        _ => (Kind::Whole, Kind::Whole),
    };
    fields.push(field("offset", first + 2, offset));
    fields.push(field("length", first + 3, length));
    (role, fields)
}

/// Header `Timestamp,Response,IOType,LUN,Offset,Size`; an empty IOType is no request.
fn systor(state: &mut State, line: &View) -> Described {
    if !state.started || line.get(2).is_empty() {
        return (Role::Other, Vec::new());
    }
    (
        Role::Request,
        vec![
            field("Timestamp", 0, seconds()),
            field("Response", 1, Kind::Decimal),
            field("IOType", 2, Kind::Op),
            field("LUN", 3, Kind::Volume),
            field("Offset", 4, Kind::Offset { unit: 1 }),
            field("Size", 5, Kind::Size { unit: 1 }),
        ],
    )
}

/// `Timestamp,Offset,Size,IOType,VolumeID`, sectors.
fn tencent() -> Described {
    (
        Role::Request,
        vec![
            field("Timestamp", 0, seconds()),
            field("Offset", 1, Kind::Offset { unit: SECTOR }),
            field("Size", 2, Kind::Size { unit: SECTOR }),
            field("IOType", 3, Kind::Op),
            field("VolumeID", 4, Kind::Volume),
        ],
    )
}

/// Header `version,time,op,size,lbn`; data opcodes are requests; a flush's size and lbn
/// are read but not carried; other opcodes move no data.
fn cloudphysics(state: &mut State, line: &View) -> Described {
    if !state.started {
        return (Role::Other, Vec::new());
    }
    let us = Kind::Time {
        unit_ns: 1000,
        decimal: true,
    };
    let mut fields = vec![
        field("version", 0, Kind::Whole),
        field("time", 1, us),
        field("op", 2, Kind::Op),
    ];
    match scsi(line.get(2)) {
        Some(Op::Flush) => {
            fields.extend([field("size", 3, Kind::Whole), field("lbn", 4, Kind::Whole)])
        }
        Some(_) => fields.extend([
            field("size", 3, Kind::Size { unit: 1 }),
            field("lbn", 4, Kind::Offset { unit: SECTOR }),
        ]),
        None => return (Role::Other, Vec::new()),
    }
    (Role::Request, fields)
}

/// The operation of a SCSI opcode in hexadecimal, `None` for one that moves no data.
pub fn scsi(text: &[u8]) -> Option<Op> {
    let text = std::str::from_utf8(text).ok()?;
    match u8::from_str_radix(text, 16).ok()? {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        0x42 | 0x93 => Some(Op::Trim),
        0x35 | 0x91 => Some(Op::Flush),
        _ => None,
    }
}

/// `arrival_time device lsn size_in_sectors flags`, milliseconds by default.
fn disksim() -> Described {
    let ms = Kind::Time {
        unit_ns: 1_000_000,
        decimal: true,
    };
    (
        Role::Request,
        vec![
            field("arrival_time", 0, ms),
            field("device", 1, Kind::Volume),
            field("lsn", 2, Kind::Offset { unit: SECTOR }),
            field("size_in_sectors", 3, Kind::Size { unit: SECTOR }),
            field("flags", 4, Kind::Flags),
        ],
    )
}

/// The generic CSV: `#` comments, a header naming the columns, then requests.
fn csv(state: &mut State, line: &View) -> Described {
    if line.bytes.first() == Some(&b'#') {
        return (Role::Other, Vec::new());
    }
    if state.csv.is_empty() {
        state.csv = (0..line.len()).map(|i| csv_column(line.get(i))).collect();
        return (Role::Other, Vec::new());
    }
    let fields = state
        .csv
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.map(|(name, kind)| field(name, i, kind)))
        .collect();
    (Role::Request, fields)
}

fn csv_column(name: &[u8]) -> Option<(&'static str, Kind)> {
    let time = |unit_ns| Kind::Time {
        unit_ns,
        decimal: true,
    };
    Some(match name.to_ascii_lowercase().as_slice() {
        b"op" => ("op", Kind::Op),
        b"offset" => ("offset", Kind::Offset { unit: 1 }),
        b"offset_sectors" => ("offset", Kind::Offset { unit: SECTOR }),
        b"size" => ("size", Kind::Size { unit: 1 }),
        b"size_sectors" => ("size", Kind::Size { unit: SECTOR }),
        b"time_ns" => ("time", time(1)),
        b"time_us" => ("time", time(1000)),
        b"time_ms" => ("time", time(1_000_000)),
        b"time_s" => ("time", time(NS_PER_S)),
        b"volume" => ("volume", Kind::Volume),
        _ => return None,
    })
}

/// The operation a format's op field spells, as its definition gives it.
pub fn op_of(format: Format, text: &[u8]) -> Option<Op> {
    let is = |names: &[&str]| {
        names
            .iter()
            .any(|n| text.eq_ignore_ascii_case(n.as_bytes()))
    };
    match format {
        Format::Msr if is(&["read"]) => Some(Op::Read),
        Format::Msr if is(&["write"]) => Some(Op::Write),
        Format::Spc | Format::Fiu | Format::Systor => match text {
            b"R" | b"r" => Some(Op::Read),
            b"W" | b"w" => Some(Op::Write),
            _ => None,
        },
        Format::Blkparse => rwbs(text),
        Format::FioV2 | Format::FioV3 => match text {
            b"read" => Some(Op::Read),
            b"write" => Some(Op::Write),
            b"trim" => Some(Op::Trim),
            b"sync" | b"datasync" | b"sync_file_range" => Some(Op::Flush),
            _ => None,
        },
        Format::Tencent => match text {
            b"0" => Some(Op::Read),
            b"1" => Some(Op::Write),
            _ => None,
        },
        Format::CloudPhysics => scsi(text),
        Format::Csv if is(&["read", "r"]) => Some(Op::Read),
        Format::Csv if is(&["write", "w"]) => Some(Op::Write),
        Format::Csv if is(&["trim", "t", "discard", "d"]) => Some(Op::Trim),
        _ => None,
    }
}

/// Valid spellings of a data operation (read, write, trim) in a format, for mutants that
/// change one request's operation and nothing else.
pub fn spellings(format: Format) -> &'static [&'static str] {
    match format {
        Format::Msr => &["Read", "Write", "READ", "write", "rEaD"],
        Format::Spc => &["R", "r", "W", "w"],
        Format::Fiu | Format::Systor => &["R", "W"],
        Format::Blkparse => &[
            "R", "RA", "RS", "RM", "RSM", "W", "WS", "WSM", "WFS", "FWS", "FWFS", "D", "DS",
        ],
        Format::FioV2 | Format::FioV3 => &["read", "write", "trim"],
        Format::Tencent => &["0", "1"],
        Format::CloudPhysics => &[
            "08", "28", "a8", "88", "0a", "2a", "2A", "aa", "8a", "42", "93",
        ],
        Format::Csv => &["read", "r", "WRITE", "w", "trim", "t", "discard", "D"],
        Format::DiskSim | Format::Binary => &[],
    }
}

/// Spellings a format's definition does not allow for its operation, beyond the garbage
/// every field gets: near misses a lenient parser might take.
pub fn bad_ops(format: Format) -> &'static [&'static str] {
    match format {
        Format::Msr => &["R", "W", "Reads", "Writ", "ReadWrite"],
        Format::Spc | Format::Systor => &["Read", "RW", "X", "0"],
        Format::Fiu => &["RW", "Read", "X", "0"],
        Format::Blkparse => &[
            "RW", "WR", "RD", "DR", "DW", "NR", "FFW", "RRRR", "WWWWW", "WX", "S",
        ],
        Format::FioV2 | Format::FioV3 => &["READ", "Read", "rd", "writes"],
        Format::Tencent => &["2", "R", "W", "10"],
        Format::CloudPhysics => &["zz", "100", "1ff", "g2", "0x"],
        Format::Csv => &["rd", "reads", "writes", "wr"],
        Format::DiskSim | Format::Binary => &[],
    }
}

/// A whole number: digits only, fitting 64 bits.
pub fn whole(text: &[u8]) -> Option<u64> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// A non-negative decimal (`12`, `1.5`, `.5`, `7.`) in units of `unit_ns`, as exact
/// nanoseconds, digits past the nanosecond dropped; `None` if it is no such number or does
/// not fit 64 bits.
pub fn decimal(text: &[u8], unit_ns: u64) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    // Thirty digits are past any unit's nanosecond; 10^30 fits a u128.
    let kept = &frac[..frac.len().min(30)];
    let frac_value: u128 = if kept.is_empty() {
        0
    } else {
        kept.parse().ok()?
    };
    let unit = u128::from(unit_ns);
    let ns = int.checked_mul(unit)? + frac_value * unit / 10u128.pow(kept.len() as u32);
    u64::try_from(ns).ok()
}

/// The value a time field gives, in nanoseconds.
pub fn time_of(kind: Kind, text: &[u8]) -> Option<u64> {
    match kind {
        Kind::Time {
            unit_ns,
            decimal: true,
        } => decimal(text, unit_ns),
        Kind::Time { unit_ns, .. } => whole(text)?.checked_mul(unit_ns),
        _ => None,
    }
}

/// The request a line gives by this model (the volume as written where the format writes
/// one, else 0), `clock_ns` being fio v2's clock at the line.
pub fn decode(format: Format, text: &[u8], line: &Line, clock_ns: u64) -> Option<Request> {
    let mut request = Request {
        time_ns: clock_ns,
        op: Op::Flush,
        offset: 0,
        size: 0,
        volume: 0,
    };
    for f in &line.fields {
        let value = line.text(text, f.index);
        match f.kind {
            Kind::Time { .. } => request.time_ns = time_of(f.kind, value)?,
            Kind::Offset { unit } => request.offset = whole(value)?.checked_mul(unit)?,
            Kind::Size { unit } => {
                request.size = u32::try_from(whole(value)?.checked_mul(unit)?).ok()?
            }
            Kind::Volume => request.volume = u16::try_from(whole(value)?).ok()?,
            Kind::Op => request.op = op_of(format, value)?,
            Kind::Flags => {
                request.op = if whole(value)? & 1 == 1 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            _ => {}
        }
    }
    request.offset.checked_add(u64::from(request.size))?;
    Some(request)
}

/// Whether a format numbers volumes itself (devices, files) rather than writing them.
pub fn numbers_volumes(format: Format) -> bool {
    matches!(
        format,
        Format::Fiu | Format::Blkparse | Format::FioV2 | Format::FioV3
    )
}
