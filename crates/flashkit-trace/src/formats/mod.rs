//! Public block-trace formats in, as one stream of [`Request`]s.
//!
//! One file per format (`msr`, `spc`, `fiu`, `blkparse`, `fio`, `systor`, `tencent`,
//! `cloudphysics`, `disksim`, and flashkit's generic `csv`), each a small line parser that
//! turns one line's bytes into a request, a counted skip (header, blank line, an event of
//! another kind, ...) or a [`FieldError`]. [`open`] picks the parser (from `--format` or by
//! [`detect`]ing it from the content), streams the file's lines through it (gzip read
//! directly), and yields requests; docs/TRACES.md documents every format and option.
//!
//! What this is not: it does not map addresses onto a device (that is [`layout`]) and it
//! never drops a line silently. A malformed line is an error naming the file, the line
//! number, the field and the offending text; with `skip_bad_lines` it is counted in the
//! [`ParseReport`] instead, with the first one kept for the report.
//!
//! Key decision: parse bytes, not strings. Lines are slices of one read buffer, fields are
//! split with `memchr` and numbers parsed digit by digit (exactly, never through `f64`), so
//! the success path allocates nothing and a non-UTF-8 byte is just a bad character where a
//! number was expected. Units are converted per format: addresses to bytes (512-byte
//! sectors where the format counts sectors), times to nanoseconds on the trace's own clock
//! (epochs are kept: an MSR time is nanoseconds since 1601, a SYSTOR time since 1970).

pub mod blkparse;
pub mod cloudphysics;
pub mod csv;
mod detect;
pub mod disksim;
pub mod fields;
pub mod fio;
pub mod fiu;
pub mod layout;
pub mod lines;
pub mod msr;
pub mod spc;
pub mod systor;
pub mod tencent;

pub use blkparse::BlkparseEvent;
pub use detect::{Detection, Verdict, detect, examine};
pub use fields::FieldError;

use crate::binary::TraceReader;
use crate::{Request, RequestResult, TraceError};
use lines::{LineError, LineReader};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Bytes in the sector unit most formats count in.
pub const SECTOR_BYTES: u64 = 512;

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// flashkit's binary format (`.fkt`).
    Binary,
    /// MSR Cambridge CSV.
    Msr,
    /// UMass Trace Repository / SPC.
    Spc,
    /// FIU IODedup.
    Fiu,
    /// blkparse default text output.
    Blkparse,
    /// fio iolog version 2.
    FioV2,
    /// fio iolog version 3.
    FioV3,
    /// SNIA SYSTOR '17 CSV.
    Systor,
    /// Tencent Cloud Block Storage CSV.
    Tencent,
    /// CloudPhysics CSV (libCacheSim layout).
    #[serde(rename = "cloudphysics")]
    CloudPhysics,
    /// DiskSim ASCII.
    #[serde(rename = "disksim")]
    DiskSim,
    /// flashkit's generic CSV with named columns.
    Csv,
}

impl Format {
    /// Every format, in detection order.
    pub const ALL: [Format; 12] = [
        Format::Binary,
        Format::FioV2,
        Format::FioV3,
        Format::Msr,
        Format::Spc,
        Format::Fiu,
        Format::Blkparse,
        Format::Systor,
        Format::Tencent,
        Format::CloudPhysics,
        Format::DiskSim,
        Format::Csv,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Binary => "binary",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::Fiu => "fiu",
            Format::Blkparse => "blkparse",
            Format::FioV2 => "fio-v2",
            Format::FioV3 => "fio-v3",
            Format::Systor => "systor",
            Format::Tencent => "tencent",
            Format::CloudPhysics => "cloudphysics",
            Format::DiskSim => "disksim",
            Format::Csv => "csv",
        }
    }

    /// A one-line description of the layout.
    pub fn layout(self) -> &'static str {
        match self {
            Format::Binary => "flashkit binary trace (.fkt): 64-byte header, 24-byte records",
            Format::Msr => "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            Format::Spc => "ASU,LBA,Size,Opcode,Timestamp[,...]",
            Format::Fiu => "ts pid process lba size rw major minor md5",
            Format::Blkparse => {
                "maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]"
            }
            Format::FioV2 => "fio version 2 iolog: filename action [offset length]",
            Format::FioV3 => "fio version 3 iolog: timestamp filename action [offset length]",
            Format::Systor => "Timestamp,Response,IOType,LUN,Offset,Size",
            Format::Tencent => "Timestamp,Offset,Size,IOType,VolumeID",
            Format::CloudPhysics => "version,time,op,size,lbn",
            Format::DiskSim => "arrival_time device lsn size_in_sectors flags",
            Format::Csv => "a header naming op, offset, size and optionally time, volume",
        }
    }

    /// Whether the format has a time unit the user chooses (`--time-unit`).
    pub fn takes_time_unit(self) -> bool {
        matches!(self, Format::DiskSim | Format::Csv)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let lower = text.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "fkt" => Some(Format::Binary),
            "umass" => Some(Format::Spc),
            "fio2" => Some(Format::FioV2),
            "fio3" => Some(Format::FioV3),
            "systor17" => Some(Format::Systor),
            _ => None,
        };
        alias
            .or_else(|| Format::ALL.into_iter().find(|f| f.name() == lower))
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown trace format {text:?} (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// A unit of time for formats whose unit varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// Nanoseconds per unit.
    pub fn nanoseconds(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }
}

impl fmt::Display for TimeUnit {
    /// As the flag takes it: `ns`, `us`, `ms`, `s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        })
    }
}

impl FromStr for TimeUnit {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "ns" => Ok(TimeUnit::Ns),
            "us" => Ok(TimeUnit::Us),
            "ms" => Ok(TimeUnit::Ms),
            "s" => Ok(TimeUnit::S),
            _ => Err(format!(
                "unknown time unit {text:?} (expected ns, us, ms or s)"
            )),
        }
    }
}

/// How to read a trace file. Deserializes with every field optional (the defaults: the
/// format detected, every volume kept, requests in file order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceOptions {
    /// The format; detected from the content when `None`.
    pub format: Option<Format>,
    /// Which blkparse events become requests.
    pub blkparse_event: Option<BlkparseEvent>,
    /// The time unit of DiskSim traces (default milliseconds) and of the generic CSV's bare
    /// `time` column (default nanoseconds). Refused for other formats.
    pub time_unit: Option<TimeUnit>,
    /// Count and skip malformed lines instead of stopping at the first.
    pub skip_bad_lines: bool,
    /// Replay in time order (a stable sort, in memory: 24 bytes a request) instead of file
    /// order.
    pub sort_by_time: bool,
    /// Keep only this volume (ASU, LUN, disk); other volumes' requests are counted.
    pub volume: Option<u16>,
}

/// What a line that is not a request was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// An empty line.
    Blank,
    /// A header line.
    Header,
    /// A comment (generic CSV).
    Comment,
    /// A blkparse event of another action.
    OtherEvent,
    /// An event or command that moves no data.
    NoData,
    /// A row without an operation (SYSTOR's empty IOType).
    NoType,
    /// blkparse's summary block.
    Summary,
    /// fio's file actions and waits.
    FileAction,
}

/// One parsed line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A request.
    Request(Request),
    /// Not a request, and why.
    Skip(Skip),
}

/// What reading a trace met, line by line. Nothing is skipped without being counted here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ParseReport {
    /// Lines read (records, for the binary format).
    pub lines: u64,
    /// Requests produced.
    pub requests: u64,
    /// Empty lines.
    pub blank_lines: u64,
    /// Header lines.
    pub header_lines: u64,
    /// Comment lines (generic CSV).
    pub comment_lines: u64,
    /// blkparse events of actions other than the one chosen.
    pub other_events: u64,
    /// Events or commands that move no data (blkparse `N`, non-data SCSI commands).
    pub no_data: u64,
    /// Rows without an operation (SYSTOR's empty IOType).
    pub untyped_rows: u64,
    /// Lines of blkparse's summary block.
    pub summary_lines: u64,
    /// fio file actions (add, open, close) and waits.
    pub file_actions: u64,
    /// Requests of volumes other than the one selected.
    pub other_volumes: u64,
    /// Malformed lines skipped (`skip_bad_lines`).
    pub bad_lines: u64,
    /// The first malformed line skipped, as its error message.
    pub first_bad_line: Option<String>,
}

impl ParseReport {
    fn count(&mut self, skip: Skip) {
        let counter = match skip {
            Skip::Blank => &mut self.blank_lines,
            Skip::Header => &mut self.header_lines,
            Skip::Comment => &mut self.comment_lines,
            Skip::OtherEvent => &mut self.other_events,
            Skip::NoData => &mut self.no_data,
            Skip::NoType => &mut self.untyped_rows,
            Skip::Summary => &mut self.summary_lines,
            Skip::FileAction => &mut self.file_actions,
        };
        *counter += 1;
    }

    /// Lines that were neither requests nor blank, header or comment lines, as
    /// `(what, count)` pairs with a non-zero count: what a user should know was skipped.
    pub fn skipped(&self) -> Vec<(&'static str, u64)> {
        [
            ("events of another action", self.other_events),
            ("events without data", self.no_data),
            ("rows without an operation", self.untyped_rows),
            ("summary lines", self.summary_lines),
            ("file actions and waits", self.file_actions),
            ("requests of other volumes", self.other_volumes),
            ("malformed lines", self.bad_lines),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }
}

/// What a fixed-column CSV format's rows look like, for [`csv_row`].
pub(crate) struct CsvShape {
    /// The header line, lower-case, no spaces (skipped when it is the first line).
    pub header: &'static [u8],
    /// The format's name in messages ("MSR Cambridge").
    pub name: &'static str,
    /// The columns as the format's documentation names them, for messages.
    pub columns: &'static str,
    /// Whether rows may carry more fields than the parser reads (SPC's).
    pub extra_fields: bool,
}

/// The shared front of the fixed-column CSV parsers: on the first line a header is skipped
/// (`Ok(None)`); otherwise the row is split on commas into its `N` fields, and a row with
/// too few (or, unless `shape.extra_fields`, too many) is refused naming the format and its
/// columns. `started` is the parser's own first-line flag.
#[inline]
pub(crate) fn csv_row<'a, const N: usize>(
    started: &mut bool,
    line: &'a [u8],
    shape: &CsvShape,
) -> Result<Option<[&'a [u8]; N]>, fields::FieldError> {
    let first = !std::mem::replace(started, true);
    if first && header_matches(line, shape.header) {
        return Ok(None);
    }
    let mut f = [&b""[..]; N];
    let n = fields::split_sep(line, b',', &mut f);
    if n < N || (n > N && !shape.extra_fields) {
        let at_least = if shape.extra_fields { "at least " } else { "" };
        return Err(fields::FieldError::new(
            "line",
            format!(
                "{n} comma-separated fields; {} rows have {at_least}{N} ({})",
                shape.name, shape.columns
            ),
        ));
    }
    Ok(Some(f))
}

/// Whether `line` is the header `lower` (lower-case, no spaces), compared ignoring case and
/// spaces around fields.
pub(crate) fn header_matches(line: &[u8], lower: &[u8]) -> bool {
    let mut expected = lower.split(|&b| b == b',');
    for field in line.split(|&b| b == b',') {
        match expected.next() {
            Some(name) if fields::trim(field).eq_ignore_ascii_case(name) => {}
            _ => return false,
        }
    }
    expected.next().is_none()
}

/// Device numbers (`major,minor`) to volumes, in order of first appearance.
#[derive(Default)]
pub struct DeviceMap {
    devices: Vec<(u64, u64)>,
    last: usize,
}

impl DeviceMap {
    /// The volume of a device, numbering a new one.
    #[inline]
    pub fn volume(
        &mut self,
        major: u64,
        minor: u64,
        field: &'static str,
    ) -> Result<u16, FieldError> {
        if self.devices.get(self.last) == Some(&(major, minor)) {
            return Ok(self.last as u16);
        }
        let index = match self.devices.iter().position(|&d| d == (major, minor)) {
            Some(index) => index,
            None => {
                if self.devices.len() > usize::from(u16::MAX) {
                    return Err(FieldError::new(
                        field,
                        "more than 65536 devices in one trace",
                    ));
                }
                self.devices.push((major, minor));
                self.devices.len() - 1
            }
        };
        self.last = index;
        Ok(index as u16)
    }

    /// The devices by volume number, as `major,minor`.
    pub fn names(&self) -> Vec<String> {
        self.devices
            .iter()
            .map(|(a, b)| format!("{a},{b}"))
            .collect()
    }
}

/// Names (fio file names) to volumes, in order of first appearance.
#[derive(Default)]
pub struct NameMap {
    names: Vec<Vec<u8>>,
    last: usize,
}

impl NameMap {
    /// The volume of a name, numbering a new one.
    pub fn volume(&mut self, name: &[u8], field: &'static str) -> Result<u16, FieldError> {
        if self.names.get(self.last).is_some_and(|n| n == name) {
            return Ok(self.last as u16);
        }
        let index = match self.names.iter().position(|n| n == name) {
            Some(index) => index,
            None => {
                if self.names.len() > usize::from(u16::MAX) {
                    return Err(FieldError::new(field, "more than 65536 files in one trace"));
                }
                self.names.push(name.to_vec());
                self.names.len() - 1
            }
        };
        self.last = index;
        Ok(index as u16)
    }

    /// The names by volume number (lossy UTF-8).
    pub fn names(&self) -> Vec<String> {
        self.names
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect()
    }
}

/// One text format's parser (the run-time choice; each arm is a small struct).
pub(crate) enum Parser {
    Msr(msr::Msr),
    Spc(spc::Spc),
    Fiu(fiu::Fiu),
    Blkparse(blkparse::Blkparse),
    Fio(fio::Fio),
    Systor(systor::Systor),
    Tencent(tencent::Tencent),
    CloudPhysics(cloudphysics::CloudPhysics),
    DiskSim(disksim::DiskSim),
    Csv(csv::Csv),
}

impl Parser {
    /// The parser of a text format (`None` for the binary format).
    pub(crate) fn new(format: Format, options: &TraceOptions) -> Option<Parser> {
        let unit = |default: TimeUnit| options.time_unit.unwrap_or(default).nanoseconds();
        Some(match format {
            Format::Binary => return None,
            Format::Msr => Parser::Msr(msr::Msr::default()),
            Format::Spc => Parser::Spc(spc::Spc::default()),
            Format::Fiu => Parser::Fiu(fiu::Fiu::default()),
            Format::Blkparse => Parser::Blkparse(blkparse::Blkparse::new(
                options.blkparse_event.unwrap_or_default(),
            )),
            Format::FioV2 => Parser::Fio(fio::Fio::new(2)),
            Format::FioV3 => Parser::Fio(fio::Fio::new(3)),
            Format::Systor => Parser::Systor(systor::Systor::default()),
            Format::Tencent => Parser::Tencent(tencent::Tencent::default()),
            Format::CloudPhysics => Parser::CloudPhysics(cloudphysics::CloudPhysics::default()),
            Format::DiskSim => Parser::DiskSim(disksim::DiskSim::new(unit(TimeUnit::Ms))),
            Format::Csv => Parser::Csv(csv::Csv::new(unit(TimeUnit::Ns))),
        })
    }

    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        match self {
            Parser::Msr(p) => p.parse(line),
            Parser::Spc(p) => p.parse(line),
            Parser::Fiu(p) => p.parse(line),
            Parser::Blkparse(p) => p.parse(line),
            Parser::Fio(p) => p.parse(line),
            Parser::Systor(p) => p.parse(line),
            Parser::Tencent(p) => p.parse(line),
            Parser::CloudPhysics(p) => p.parse(line),
            Parser::DiskSim(p) => p.parse(line),
            Parser::Csv(p) => p.parse(line),
        }
    }

    /// Names of the volumes, for formats that number them from names (devices, files).
    fn volume_names(&self) -> Option<Vec<String>> {
        match self {
            Parser::Fiu(p) => Some(p.devices.names()),
            Parser::Blkparse(p) => Some(p.devices.names()),
            Parser::Fio(p) => Some(p.files.names()),
            _ => None,
        }
    }
}

/// Streams the requests of a text trace.
pub(crate) struct TextReader {
    path: PathBuf,
    format: Format,
    lines: LineReader<Box<dyn Read + Send>>,
    parser: Parser,
    skip_bad_lines: bool,
    volume: Option<u16>,
    report: ParseReport,
    done: bool,
}

impl TextReader {
    pub(crate) fn new(
        path: &Path,
        format: Format,
        parser: Parser,
        options: &TraceOptions,
    ) -> Result<Self, TraceError> {
        let input = lines::open_text(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            error: source,
        })?;
        Ok(TextReader {
            path: path.to_path_buf(),
            format,
            lines: LineReader::new(input),
            parser,
            skip_bad_lines: options.skip_bad_lines,
            volume: options.volume,
            report: ParseReport::default(),
            done: false,
        })
    }

    #[cold]
    fn line_error(&self, error: LineError) -> TraceError {
        let after = self.lines.line_number();
        match error {
            LineError::TooLong => TraceError::Record {
                path: self.path.clone(),
                location: format!("line {}", after + 1),
                field: "line",
                message: format!(
                    "longer than {} bytes: not a text trace, or a corrupt one",
                    lines::MAX_LINE_BYTES
                ),
            },
            LineError::Io(source) => TraceError::Format {
                path: self.path.clone(),
                message: detect::read_failure(after, &source),
            },
        }
    }

    #[cold]
    fn bad_line(&mut self, error: FieldError) -> Option<TraceError> {
        let error = TraceError::Record {
            path: self.path.clone(),
            location: format!("line {}", self.lines.line_number()),
            field: error.field,
            message: error.message,
        };
        if self.skip_bad_lines {
            self.report.bad_lines += 1;
            if self.report.first_bad_line.is_none() {
                self.report.first_bad_line = Some(error.to_string());
            }
            return None;
        }
        Some(error)
    }
}

impl TextReader {
    /// At the end: a file whose every request line was malformed (skipped under
    /// `skip_bad_lines`) read as no trace at all, not as an empty one.
    #[cold]
    fn nothing_read(&self) -> Option<TraceError> {
        let report = &self.report;
        if report.requests > 0 || report.other_volumes > 0 || report.bad_lines == 0 {
            return None;
        }
        Some(TraceError::Format {
            path: self.path.clone(),
            message: format!(
                "no line was read as {}: all {} lines holding requests were malformed (the \
                 first: {}); is --format right?",
                self.format,
                report.bad_lines,
                report.first_bad_line.as_deref().unwrap_or("?")
            ),
        })
    }
}

impl Iterator for TextReader {
    type Item = RequestResult;

    #[inline]
    fn next(&mut self) -> Option<RequestResult> {
        if self.done {
            return None;
        }
        loop {
            let line = match self.lines.next_line() {
                Some(Ok(line)) => line,
                Some(Err(error)) => {
                    self.done = true;
                    return Some(Err(self.line_error(error)));
                }
                None => {
                    self.done = true;
                    return self.nothing_read().map(Err);
                }
            };
            self.report.lines += 1;
            if fields::trim(line).is_empty() {
                self.report.count(Skip::Blank);
                continue;
            }
            match self.parser.parse(line) {
                Ok(Parsed::Request(request)) => {
                    if self.volume.is_some_and(|v| v != request.volume) {
                        self.report.other_volumes += 1;
                        continue;
                    }
                    self.report.requests += 1;
                    return Some(Ok(request));
                }
                Ok(Parsed::Skip(skip)) => self.report.count(skip),
                Err(error) => {
                    if let Some(error) = self.bad_line(error) {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
            }
        }
    }
}

/// Every variant is one pointer, so that telling them apart per request is one compare.
enum Inner {
    Empty,
    Binary(Box<BinaryInner>),
    Text(Box<TextReader>),
    Sorted(Box<SortedInner>),
}

struct BinaryInner {
    reader: TraceReader,
    volume: Option<u16>,
    report: ParseReport,
}

impl BinaryInner {
    #[inline]
    fn next(&mut self) -> Option<RequestResult> {
        let Some(volume) = self.volume else {
            return self.reader.next();
        };
        loop {
            match self.reader.next()? {
                Ok(request) if request.volume != volume => self.report.other_volumes += 1,
                item => return Some(item),
            }
        }
    }
}

struct SortedInner {
    requests: std::vec::IntoIter<Request>,
    report: ParseReport,
    volume_names: Option<Vec<String>>,
}

/// The requests of a trace file in any format, streamed (or sorted by time, if asked).
pub struct TraceStream {
    format: Option<Format>,
    inner: Inner,
}

/// Open `path` as a trace: detect the format unless `options.format` names it, check the
/// options against it, and stream its requests (sorted by time if `options.sort_by_time`).
///
/// An empty file (or one of blank lines only) whose format is not given is an empty trace.
pub fn open(path: &Path, options: &TraceOptions) -> Result<TraceStream, TraceError> {
    crate::check_is_file(path)?;
    let format = match options.format {
        Some(format) => Some(format),
        None => detect(path)?.format,
    };
    let Some(format) = format else {
        return Ok(TraceStream {
            format: None,
            inner: Inner::Empty,
        });
    };
    if options.time_unit.is_some() && !format.takes_time_unit() {
        return Err(TraceError::Options(format!(
            "--time-unit applies to DiskSim traces and the generic CSV's time column; {} \
             fixes its own unit ({})",
            path.display(),
            format
        )));
    }
    if options.time_unit.is_some() && format == Format::Csv {
        // Only a bare `time` column takes the unit; `time_us` and the like fix their own.
        let sample = detect::sample_lines(path)?;
        let header = sample
            .iter()
            .map(|(_, line)| line)
            .find(|l| !l.starts_with(b"#"));
        if let Some(header) = header {
            let column = csv::time_column(header);
            if !column
                .as_deref()
                .is_some_and(|c| c.eq_ignore_ascii_case("time"))
            {
                return Err(TraceError::Options(format!(
                    "--time-unit sets the unit of the generic CSV's bare `time` column; the \
                     header of {} names {}: drop --time-unit",
                    path.display(),
                    match column {
                        Some(name) => format!("{name:?}, which fixes its own unit"),
                        None => "no time column".into(),
                    }
                )));
            }
        }
    }
    if options.blkparse_event.is_some() && format != Format::Blkparse {
        return Err(TraceError::Options(format!(
            "--blkparse-event applies to blkparse traces; {} is {format}",
            path.display()
        )));
    }
    let inner = match Parser::new(format, options) {
        None => Inner::Binary(Box::new(BinaryInner {
            reader: TraceReader::open(path)?,
            volume: options.volume,
            report: ParseReport::default(),
        })),
        Some(parser) => Inner::Text(Box::new(TextReader::new(path, format, parser, options)?)),
    };
    let mut stream = TraceStream {
        format: Some(format),
        inner,
    };
    if options.sort_by_time {
        stream = stream.sorted()?;
    }
    Ok(stream)
}

impl TraceStream {
    /// The format read (`None` for an empty file whose format was not given).
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// What reading has met so far (all of it, once the stream has ended).
    pub fn report(&self) -> ParseReport {
        match &self.inner {
            Inner::Empty => ParseReport::default(),
            Inner::Binary(binary) => {
                // Counted from the reader's position, so the unfiltered path counts nothing.
                let left = binary.reader.size_hint().1.unwrap_or(0) as u64;
                let lines = binary.reader.info().records - left;
                ParseReport {
                    lines,
                    requests: lines - binary.report.other_volumes,
                    ..binary.report.clone()
                }
            }
            Inner::Sorted(sorted) => sorted.report.clone(),
            Inner::Text(reader) => reader.report.clone(),
        }
    }

    /// Names of the volumes seen so far, by volume number, for formats that number volumes
    /// from names (blkparse and FIU devices as `major,minor`, fio file names).
    pub fn volume_names(&self) -> Option<Vec<String>> {
        match &self.inner {
            Inner::Text(reader) => reader.parser.volume_names(),
            Inner::Sorted(sorted) => sorted.volume_names.clone(),
            _ => None,
        }
    }

    /// Read everything and sort it by time (stable: equal times keep file order).
    fn sorted(mut self) -> Result<TraceStream, TraceError> {
        let mut requests = Vec::new();
        for request in self.by_ref() {
            requests.push(request?);
        }
        requests.sort_by_key(|r| r.time_ns);
        let volume_names = self.volume_names();
        Ok(TraceStream {
            format: self.format,
            inner: Inner::Sorted(Box::new(SortedInner {
                requests: requests.into_iter(),
                report: self.report(),
                volume_names,
            })),
        })
    }
}

impl Iterator for TraceStream {
    type Item = RequestResult;

    #[inline]
    fn next(&mut self) -> Option<RequestResult> {
        match &mut self.inner {
            Inner::Empty => None,
            Inner::Text(reader) => reader.next(),
            Inner::Sorted(sorted) => sorted.requests.next().map(Ok),
            Inner::Binary(binary) => binary.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;

    /// Every format's `--format` name reads back as that format, in any case; the short
    /// aliases name the formats they stand for; anything else is refused listing the names.
    #[test]
    fn format_names_and_aliases_parse() {
        for format in Format::ALL {
            assert_eq!(format.name().parse::<Format>(), Ok(format));
            assert_eq!(
                format.name().to_ascii_uppercase().parse::<Format>(),
                Ok(format)
            );
            assert_eq!(format.to_string(), format.name());
        }
        for (alias, format) in [
            ("fkt", Format::Binary),
            ("umass", Format::Spc),
            ("fio2", Format::FioV2),
            ("FIO3", Format::FioV3),
            ("systor17", Format::Systor),
        ] {
            assert_eq!(alias.parse::<Format>(), Ok(format), "{alias}");
        }
        let message = "msr2".parse::<Format>().expect_err("unknown");
        assert_eq!(
            message,
            "unknown trace format \"msr2\" (expected one of: binary, fio-v2, fio-v3, msr, spc, \
             fiu, blkparse, systor, tencent, cloudphysics, disksim, csv)"
        );
    }

    /// The layouts are the formats' columns as docs/TRACES.md and the sample README give
    /// them, one per format.
    #[test]
    fn each_format_describes_its_own_layout() {
        let layouts: Vec<&str> = Format::ALL.iter().map(|f| f.layout()).collect();
        for (i, layout) in layouts.iter().enumerate() {
            assert!(!layout.is_empty());
            assert!(!layouts[..i].contains(layout), "{layout} twice");
        }
        assert_eq!(
            Format::Msr.layout(),
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
        );
        assert_eq!(
            Format::Systor.layout(),
            "Timestamp,Response,IOType,LUN,Offset,Size"
        );
        assert_eq!(
            Format::Tencent.layout(),
            "Timestamp,Offset,Size,IOType,VolumeID"
        );
        assert_eq!(Format::CloudPhysics.layout(), "version,time,op,size,lbn");
        assert_eq!(
            Format::DiskSim.layout(),
            "arrival_time device lsn size_in_sectors flags"
        );
        assert!(
            Format::Binary
                .layout()
                .contains("64-byte header, 24-byte records")
        );
    }

    /// Only DiskSim and the generic CSV take `--time-unit`, and for DiskSim it scales the
    /// arrival time: 1.5 us is 1500 ns.
    #[test]
    fn disksim_and_csv_take_a_time_unit() {
        let takers: Vec<Format> = Format::ALL
            .into_iter()
            .filter(|f| f.takes_time_unit())
            .collect();
        assert_eq!(takers, [Format::DiskSim, Format::Csv]);

        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.trace");
        std::fs::write(&path, "1.5 0 8 8 1\n").expect("write");
        let options = TraceOptions {
            format: Some(Format::DiskSim),
            time_unit: Some(TimeUnit::Us),
            ..TraceOptions::default()
        };
        let requests: Vec<Request> = open(&path, &options)
            .expect("a DiskSim trace takes a time unit")
            .map(|r| r.expect("valid"))
            .collect();
        assert_eq!(
            requests,
            [Request {
                time_ns: 1500,
                op: Op::Read,
                offset: 4096,
                size: 4096,
                volume: 0
            }]
        );
    }

    /// Each time unit's length, and its name as the flag takes and shows it.
    #[test]
    fn time_units_parse_print_and_scale() {
        for (name, unit, ns) in [
            ("ns", TimeUnit::Ns, 1),
            ("us", TimeUnit::Us, 1_000),
            ("ms", TimeUnit::Ms, 1_000_000),
            ("s", TimeUnit::S, 1_000_000_000),
        ] {
            assert_eq!(name.parse::<TimeUnit>(), Ok(unit));
            assert_eq!(unit.to_string(), name);
            assert_eq!(unit.nanoseconds(), ns, "{name}");
        }
        assert_eq!(
            "sec".parse::<TimeUnit>(),
            Err("unknown time unit \"sec\" (expected ns, us, ms or s)".to_string())
        );
    }

    /// `skipped` lists the non-zero counts of what a user should know was skipped, in a
    /// fixed order, and not the blank, header or comment lines.
    #[test]
    fn skipped_lists_the_non_zero_counts() {
        assert_eq!(ParseReport::default().skipped(), []);
        let report = ParseReport {
            blank_lines: 3,
            header_lines: 1,
            comment_lines: 2,
            other_events: 2,
            summary_lines: 5,
            other_volumes: 7,
            bad_lines: 1,
            ..ParseReport::default()
        };
        assert_eq!(
            report.skipped(),
            [
                ("events of another action", 2),
                ("summary lines", 5),
                ("requests of other volumes", 7),
                ("malformed lines", 1),
            ]
        );
        let report = ParseReport {
            no_data: 4,
            untyped_rows: 6,
            file_actions: 8,
            ..ParseReport::default()
        };
        assert_eq!(
            report.skipped(),
            [
                ("events without data", 4),
                ("rows without an operation", 6),
                ("file actions and waits", 8),
            ]
        );
    }

    /// A fixed-column row with a field too many is refused, naming the count and the
    /// columns; with a field too few too. (SPC's rows may carry extra fields.)
    #[test]
    fn a_row_with_the_wrong_number_of_fields_is_refused() {
        let mut msr = msr::Msr::default();
        for (row, n) in [
            ("128166385295514663,hm,0,Write,9056014336,2048,2833,9", 8),
            ("128166385295514663,hm,0,Write,9056014336,2048", 6),
        ] {
            let error = msr.parse(row.as_bytes()).expect_err("refused");
            assert_eq!(error.field, "line");
            assert_eq!(
                error.message,
                format!(
                    "{n} comma-separated fields; MSR Cambridge rows have 7 \
                     (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)"
                )
            );
        }
    }

    /// Volumes are numbered 0 to 65535: the 65536th device gets volume 65535, a 65537th is
    /// refused (the map is filled directly, to keep the test fast).
    #[test]
    fn the_65536th_device_is_numbered_and_the_next_refused() {
        let mut map = DeviceMap {
            devices: (0..65_535).map(|minor| (8, minor)).collect(),
            last: 0,
        };
        assert_eq!(map.volume(8, 7, "maj,min"), Ok(7));
        assert_eq!(map.volume(9, 0, "maj,min"), Ok(65_535));
        assert_eq!(map.volume(9, 0, "maj,min"), Ok(65_535));
        let error = map.volume(9, 1, "maj,min").expect_err("a 65537th device");
        assert_eq!(
            (error.field, error.message.as_str()),
            ("maj,min", "more than 65536 devices in one trace")
        );
        assert_eq!(map.names().len(), 65_536);
        assert_eq!(map.names()[65_535], "9,0");
    }

    /// The same limit for fio's file names.
    #[test]
    fn the_65536th_file_is_numbered_and_the_next_refused() {
        let mut map = NameMap {
            names: (0..65_535u32).map(|i| i.to_le_bytes().to_vec()).collect(),
            last: 0,
        };
        assert_eq!(map.volume(&7u32.to_le_bytes(), "filename"), Ok(7));
        assert_eq!(map.volume(b"last", "filename"), Ok(65_535));
        assert_eq!(map.volume(b"last", "filename"), Ok(65_535));
        let error = map.volume(b"over", "filename").expect_err("a 65537th file");
        assert_eq!(
            (error.field, error.message.as_str()),
            ("filename", "more than 65536 files in one trace")
        );
        assert_eq!(map.names()[65_535], "last");
    }

    /// An FIU trace's volumes are its devices, named `major,minor` in order of first
    /// appearance, in file order and sorted by time alike; an MSR trace numbers its disks
    /// itself and names none.
    #[test]
    fn fiu_volumes_are_named_by_device() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("fiu.blkparse");
        std::fs::write(
            &path,
            "20 4270 rpc.mountd 8 8 W 6 0 d6c75ba4\n10 1 kworker 0 8 R 8 16 abc\n",
        )
        .expect("write");
        for sort_by_time in [false, true] {
            let options = TraceOptions {
                format: Some(Format::Fiu),
                sort_by_time,
                ..TraceOptions::default()
            };
            let mut stream = open(&path, &options).expect("open");
            let volumes: Vec<u16> = stream.by_ref().map(|r| r.expect("valid").volume).collect();
            let expected: &[u16] = if sort_by_time { &[1, 0] } else { &[0, 1] };
            assert_eq!(volumes, expected);
            assert_eq!(
                stream.volume_names(),
                Some(vec!["6,0".to_string(), "8,16".to_string()])
            );
        }
        let blkparse = dir.path().join("blkparse.txt");
        std::fs::write(
            &blkparse,
            "8,33 0 1 0.5 9 D R 8 + 8 [a]\n8,16 0 2 0.6 9 D W 0 + 8 [b]\n",
        )
        .expect("write");
        let mut stream = open(&blkparse, &TraceOptions::default()).expect("open");
        assert_eq!(stream.format(), Some(Format::Blkparse));
        assert_eq!(stream.by_ref().count(), 2);
        assert_eq!(
            stream.volume_names(),
            Some(vec!["8,33".to_string(), "8,16".to_string()])
        );
        let msr = dir.path().join("msr.csv");
        std::fs::write(&msr, "128166385295514663,hm,3,Write,0,512,1\n").expect("write");
        let mut stream = open(&msr, &TraceOptions::default()).expect("open");
        assert_eq!(stream.next().expect("one").expect("valid").volume, 3);
        assert_eq!(stream.volume_names(), None);
    }

    const MIXED_MSR: &str = "128166385295514663,hm,0,Write,0,512,1\n\
                             \n\
                             128166385295514664,hm,3,Read,512,512,1\n\
                             bad,line\n\
                             128166385295514665,hm,0,Write,1024,512,1\n";

    /// A text trace read for one volume: the other volumes' requests are counted, as are
    /// every line, the blank one and the malformed one skipped.
    #[test]
    fn a_text_trace_read_for_one_volume_counts_what_it_skips() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, MIXED_MSR).expect("write");
        let options = TraceOptions {
            format: Some(Format::Msr),
            volume: Some(3),
            skip_bad_lines: true,
            ..TraceOptions::default()
        };
        let mut stream = open(&path, &options).expect("open");
        let requests: Vec<Request> = stream.by_ref().map(|r| r.expect("valid")).collect();
        assert_eq!(
            requests,
            [Request {
                time_ns: 12_816_638_529_551_466_400,
                op: Op::Read,
                offset: 512,
                size: 512,
                volume: 3
            }]
        );
        assert_eq!(
            stream.report(),
            ParseReport {
                lines: 5,
                requests: 1,
                blank_lines: 1,
                other_volumes: 2,
                bad_lines: 1,
                first_bad_line: Some(format!(
                    "{}: line 4: field line: 2 comma-separated fields; MSR Cambridge rows have 7 \
                     (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)",
                    path.display()
                )),
                ..ParseReport::default()
            }
        );
    }

    /// A trace whose requests all belong to other volumes is an empty selection, not a
    /// file of malformed lines, even when a bad line was skipped.
    #[test]
    fn a_selection_of_no_requests_is_not_a_malformed_trace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, MIXED_MSR).expect("write");
        let options = TraceOptions {
            format: Some(Format::Msr),
            volume: Some(5),
            skip_bad_lines: true,
            ..TraceOptions::default()
        };
        let mut stream = open(&path, &options).expect("open");
        assert!(stream.next().is_none(), "no request and no error");
        let report = stream.report();
        assert_eq!(
            (report.requests, report.other_volumes, report.bad_lines),
            (0, 3, 1)
        );
    }

    /// `--time-unit` on the generic CSV scales a bare `time` column (the header found past
    /// comment lines), and is refused for a header whose time column fixes its own unit or
    /// that has none.
    #[test]
    fn a_csv_takes_a_time_unit_only_for_a_bare_time_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = TraceOptions {
            format: Some(Format::Csv),
            time_unit: Some(TimeUnit::Us),
            ..TraceOptions::default()
        };
        let bare = dir.path().join("bare.csv");
        std::fs::write(
            &bare,
            "# made by hand\ntime,op,offset,size\n3,w,8192,4096\n",
        )
        .expect("write");
        let requests: Vec<Request> = open(&bare, &options)
            .expect("a bare time column takes the unit")
            .map(|r| r.expect("valid"))
            .collect();
        assert_eq!(
            requests,
            [Request {
                time_ns: 3000,
                op: Op::Write,
                offset: 8192,
                size: 4096,
                volume: 0
            }]
        );
        for (name, header, names) in [
            (
                "ms.csv",
                "time_ms,op,offset,size",
                "\"time_ms\", which fixes its own unit",
            ),
            ("none.csv", "op,offset,size", "no time column"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, format!("{header}\n")).expect("write");
            let error = open(&path, &options).err().expect("refused");
            assert!(matches!(error, TraceError::Options(_)), "{error:?}");
            assert_eq!(
                error.to_string(),
                format!(
                    "--time-unit sets the unit of the generic CSV's bare `time` column; the \
                     header of {} names {names}: drop --time-unit",
                    path.display()
                )
            );
        }
    }

    /// `--blkparse-event` chooses a blkparse trace's events, and is refused for any other
    /// format.
    #[test]
    fn the_blkparse_event_applies_to_blkparse_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("blkparse.txt");
        std::fs::write(
            &path,
            "8,16 3 4 0.1 3645 Q R 1 + 8 [java]\n8,16 3 5 0.2 3645 D R 1 + 8 [java]\n",
        )
        .expect("write");
        let queued = TraceOptions {
            blkparse_event: Some(BlkparseEvent::Queue),
            ..TraceOptions::default()
        };
        let mut stream = open(&path, &queued).expect("a blkparse trace takes the event");
        let requests: Vec<Request> = stream.by_ref().map(|r| r.expect("valid")).collect();
        assert_eq!(
            requests,
            [Request {
                time_ns: 100_000_000,
                op: Op::Read,
                offset: 512,
                size: 4096,
                volume: 0
            }]
        );
        assert_eq!(stream.report().other_events, 1, "the D event");

        let msr = dir.path().join("msr.csv");
        std::fs::write(&msr, "128166385295514663,hm,0,Write,0,512,1\n").expect("write");
        let error = open(&msr, &queued).err().expect("refused");
        assert!(matches!(error, TraceError::Options(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "--blkparse-event applies to blkparse traces; {} is msr",
                msr.display()
            )
        );
    }

    /// A binary trace's report counts the records handed out so far, mid-stream as at the
    /// end, with or without a volume selection.
    #[test]
    fn a_binary_trace_reports_the_records_read_so_far() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        let mut writer = crate::binary::TraceWriter::create(&path, 1, "t").expect("create");
        for i in 0..10u64 {
            writer
                .push(&Request {
                    time_ns: i,
                    op: Op::Write,
                    offset: i * 4096,
                    size: 4096,
                    volume: (i % 3) as u16,
                })
                .expect("push");
        }
        writer.finish().expect("finish");
        let counts = |report: ParseReport| (report.lines, report.requests, report.other_volumes);

        let mut stream = open(&path, &TraceOptions::default()).expect("open");
        assert_eq!(counts(stream.report()), (0, 0, 0));
        for _ in 0..4 {
            stream.next().expect("a request").expect("valid");
        }
        assert_eq!(counts(stream.report()), (4, 4, 0));

        let options = TraceOptions {
            volume: Some(1),
            ..TraceOptions::default()
        };
        let mut stream = open(&path, &options).expect("open");
        assert_eq!(counts(stream.report()), (0, 0, 0));
        let first = stream.next().expect("a request").expect("valid");
        assert_eq!(first.time_ns, 1);
        assert_eq!(counts(stream.report()), (2, 1, 1), "records 0 and 1 read");
        assert_eq!(stream.by_ref().count(), 2);
        assert_eq!(counts(stream.report()), (10, 3, 7));
    }
}
