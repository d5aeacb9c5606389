//! blkparse's default text output (blktrace, Linux):
//! `maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]`.
//!
//! Only one action becomes requests: `D` (issued to the driver, after the scheduler merged
//! and split requests: what the device sees; the default) or `Q` (queued by the block layer,
//! before merging). Every other event (I, C, G, M, P, U, ...) is counted and skipped.
//!
//! The operation comes from the RWBS field, read by the grammar blkparse (`fill_rwbs`) and
//! the kernel (`blk_fill_rwbs`) print it in (see `rwbs`): an optional leading `F`
//! (pre-flush), then one operation (`W` write, `D` discard, `R` read, `N` no data, `F`
//! flush, a zoned command), then modifiers in a fixed order (`F` FUA, `A` read-ahead, `B`
//! barrier, `S` sync, `M` metadata, `E` secure). A pre-flush with no data (`FN`) is a
//! flush; other no-data events (`N`, e.g. SCSI pass-through commands printed as
//! `0 (00 ..)`) are counted and skipped. What follows the RWBS must have one of the shapes
//! blkparse prints (`sector + nsectors [process]`, `bytes (command) [process]`,
//! `[process]`); any other is a malformed line. Sectors are 512 bytes. The device becomes
//! the volume, numbered in order of first appearance.
//!
//! blkparse ends its output with a summary block (`CPU0 (8,16):`, `Total (8,16):`,
//! `Throughput (R/W): ...`, `Events (8,16): ...`). The first line that starts such a block
//! ends the events: it and everything after it are counted as summary lines and ignored.
//! Any other line that is not an event is an error.

use super::fields::{FieldError, check_end, decimal_ns, number, scaled, size_u32, split_ws};
use super::{DeviceMap, Parsed, SECTOR_BYTES, Skip};
use crate::{Op, Request};
use serde::{Deserialize, Serialize};

/// Which blkparse events become requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BlkparseEvent {
    /// `D`: issued to the device driver (what the device sees).
    #[default]
    Dispatch,
    /// `Q`: queued by the block layer, before merging.
    Queue,
}

impl std::str::FromStr for BlkparseEvent {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "D" | "d" => Ok(BlkparseEvent::Dispatch),
            "Q" | "q" => Ok(BlkparseEvent::Queue),
            _ => Err(format!(
                "blkparse event {text:?} is neither D (dispatch) nor Q (queue)"
            )),
        }
    }
}

impl BlkparseEvent {
    /// The action letter.
    pub fn action(self) -> &'static [u8] {
        match self {
            BlkparseEvent::Dispatch => b"D",
            BlkparseEvent::Queue => b"Q",
        }
    }
}

/// The blkparse parser.
#[derive(Default)]
pub struct Blkparse {
    pub(crate) event: BlkparseEvent,
    pub(crate) devices: DeviceMap,
    in_summary: bool,
}

impl Blkparse {
    /// A parser keeping `event` events.
    pub fn new(event: BlkparseEvent) -> Self {
        Blkparse {
            event,
            ..Blkparse::default()
        }
    }

    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        if self.in_summary {
            return Ok(Parsed::Skip(Skip::Summary));
        }
        let mut f = [&b""[..]; 11];
        let n = split_ws(line, &mut f);
        if n > 0 && starts_summary(f[0]) {
            self.in_summary = true;
            return Ok(Parsed::Skip(Skip::Summary));
        }
        if n < 7 {
            return Err(FieldError::new(
                "line",
                format!(
                    "{n} fields: neither an event (maj,min cpu seq time pid action RWBS ...) \
                     nor the start of blkparse's summary block"
                ),
            ));
        }
        let (major, minor) = device(f[0])?;
        number("cpu", f[1])?;
        number("sequence", f[2])?;
        let time_ns = decimal_ns("time", f[3], 1_000_000_000)?;
        number("pid", f[4])?;
        if !ACTIONS.contains(&f[5]) {
            return Err(FieldError::bad(
                "action",
                f[5],
                "a blkparse action (A, B, C, D, F, G, I, M, P, Q, R, S, T, U, UT, X or m)",
            ));
        }
        if f[5] == b"m" {
            // A message: free text after the action.
            return Ok(Parsed::Skip(Skip::OtherEvent));
        }
        // Every event carries an RWBS field: checked for the skipped ones too, so that a
        // line that lost its action letter (`R 585744 + 960`, read as a requeue) is caught.
        let op = rwbs(f[6])?;
        if f[5] != self.event.action() {
            return Ok(Parsed::Skip(Skip::OtherEvent));
        }
        let volume = self.devices.volume(major, minor, "device")?;
        let has_range = data_range(&f, n)?;
        let Some(op) = op else {
            return Ok(Parsed::Skip(Skip::NoData));
        };
        if !has_range {
            if op == Op::Flush {
                return Ok(Parsed::Request(flush(time_ns, volume)));
            }
            return Ok(Parsed::Skip(Skip::NoData));
        }
        let offset = scaled("sector", number("sector", f[7])?, SECTOR_BYTES, f[7])?;
        let sectors = number("sectors", f[9])?;
        let size = size_u32(
            "sectors",
            scaled("sectors", sectors, SECTOR_BYTES, f[9])?,
            f[9],
        )?;
        check_end(offset, size, f[7])?;
        Ok(Parsed::Request(Request {
            time_ns,
            op,
            offset,
            size,
            volume,
        }))
    }
}

fn flush(time_ns: u64, volume: u16) -> Request {
    Request {
        time_ns,
        op: Op::Flush,
        offset: 0,
        size: 0,
        volume,
    }
}

/// The actions blkparse prints (`blkparse(1)`): remap, bounce, complete, issue (D), front
/// merge, get request, insert, back merge, plug, queue, requeue, sleep, unplug on a timer,
/// unplug, split, and `m` for a message.
const ACTIONS: [&[u8]; 17] = [
    b"A", b"B", b"C", b"D", b"F", b"G", b"I", b"M", b"P", b"Q", b"R", b"S", b"T", b"U", b"UT",
    b"X", b"m",
];

/// Whether a line's first word opens blkparse's summary block.
fn starts_summary(first: &[u8]) -> bool {
    let cpu = first
        .strip_prefix(b"CPU")
        .is_some_and(|rest| !rest.is_empty() && rest.iter().all(u8::is_ascii_digit));
    cpu || matches!(first, b"Total" | b"Throughput" | b"Events" | b"Skips:")
}

fn device(text: &[u8]) -> Result<(u64, u64), FieldError> {
    let bad = || FieldError::bad("device", text, "a major,minor device number");
    let comma = memchr::memchr(b',', text).ok_or_else(bad)?;
    let major = super::fields::u64_of(&text[..comma]).ok_or_else(bad)?;
    let minor = super::fields::u64_of(&text[comma + 1..]).ok_or_else(bad)?;
    Ok((major, minor))
}

/// Whether the fields after the RWBS (`f[7..n]`) hold a data range, checking that they have
/// one of the shapes blkparse prints: `sector + nsectors`, then optionally an elapsed time in
/// parentheses and the process in brackets; `bytes (command)` for a SCSI pass-through
/// command; or only the parenthesised and bracketed parts (or nothing) for an event without
/// data. Any other shape is a malformed line, not an event without data.
fn data_range(f: &[&[u8]; 11], n: usize) -> Result<bool, FieldError> {
    let annotation = |i: usize| i >= n || f[i].first().is_some_and(|b| b"([".contains(b));
    if annotation(7) {
        return Ok(false);
    }
    if !f[7].iter().all(u8::is_ascii_digit) {
        return Err(FieldError::bad(
            "sector",
            f[7],
            "a sector number, or the process in brackets",
        ));
    }
    if n == 8 || (n == 9 && f[8] == b"+") {
        return Err(FieldError::new(
            "sectors",
            "missing: the line ends before `+ nsectors` (truncated?)",
        ));
    }
    if f[8].first() == Some(&b'(') {
        return Ok(false);
    }
    if f[8] != b"+" {
        return Err(FieldError::bad(
            "sectors",
            f[8],
            "`+` and the sector count after the sector",
        ));
    }
    if !f[9].iter().all(u8::is_ascii_digit) {
        return Err(FieldError::bad("sectors", f[9], "a sector count"));
    }
    if !annotation(10) {
        return Err(FieldError::bad(
            "process",
            f[10],
            "the process in brackets (or an elapsed time in parentheses)",
        ));
    }
    Ok(true)
}

/// The operation of an RWBS field; `None` for an event that moves no data.
///
/// The grammar is the union of what blkparse (`fill_rwbs`) and the kernel
/// (`blk_fill_rwbs`) have printed: an optional `F` (pre-flush); exactly one operation, `R`
/// read, `W` write, `D` discard (`DE`: secure erase), `N` no data, `F` flush, or a zoned
/// command (`ZA` zone append, a write; `ZR`, `ZRA`, `ZF`, `ZO`, `ZC` zone management, no
/// data); then modifiers, each at most once and in this order: `F` (FUA), `A`
/// (read-ahead), `B` (barrier, old kernels), `S` (sync), `M` (metadata), `E` (secure,
/// 2.6.36-era kernels). Anything else (`RW`, `NR`, `FFW`, `RRRR`) is refused: taking the
/// first letter would replay a corrupt line as if it were well formed.
fn rwbs(text: &[u8]) -> Result<Option<Op>, FieldError> {
    let bad = || {
        FieldError::bad(
            "RWBS",
            text,
            "an RWBS field: F (pre-flush), then one of R, W, D, N, F or a zoned ZA, ZR, ZRA, \
             ZF, ZO, ZC, then modifiers F, A, B, S, M, E in that order, each at most once",
        )
    };
    let preflush = text.len() > 1 && text[0] == b'F' && b"RWDNFZ".contains(&text[1]);
    let rest = if preflush { &text[1..] } else { text };
    let (op, rest) = match rest {
        [b'R', rest @ ..] => (Some(Op::Read), rest),
        [b'W', rest @ ..] => (Some(Op::Write), rest),
        [b'D', b'E', rest @ ..] | [b'D', rest @ ..] => (Some(Op::Trim), rest),
        [b'N', rest @ ..] => (preflush.then_some(Op::Flush), rest),
        [b'F', rest @ ..] => (Some(Op::Flush), rest),
        [b'Z', b'A', rest @ ..] => (Some(Op::Write), rest),
        [b'Z', b'R', b'A', rest @ ..] | [b'Z', b'R' | b'F' | b'O' | b'C', rest @ ..] => {
            (None, rest)
        }
        _ => return Err(bad()),
    };
    let mut modifiers = &b"FABSME"[..];
    for letter in rest {
        let at = memchr::memchr(*letter, modifiers).ok_or_else(bad)?;
        modifiers = &modifiers[at + 1..];
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(p: &mut Blkparse, line: &[u8]) -> Request {
        match p.parse(line).expect("valid") {
            Parsed::Request(r) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[test]
    fn dispatch_events_become_requests() {
        let mut p = Blkparse::default();
        let r = request(
            &mut p,
            b"  8,33  30        1     0.001368096  5025  D   R 540544 + 8 [systemd-udevd]",
        );
        assert_eq!(
            r,
            Request {
                time_ns: 1_368_096,
                op: Op::Read,
                offset: 540_544 * 512,
                size: 4096,
                volume: 0
            }
        );
        assert_eq!(
            request(&mut p, b"8,16 0 1 1.5 1 D WSM 8 + 16 [x]").op,
            Op::Write
        );
        assert_eq!(
            request(&mut p, b"8,16 0 1 1.5 1 D DS 8 + 16 [x]").op,
            Op::Trim
        );
        assert_eq!(
            request(&mut p, b"8,16 0 1 1.5 1 D FWFS 8 + 8 [x]").op,
            Op::Write
        );
        let f = request(&mut p, b"8,16 0 1 1.5 1 D FN [kworker]");
        assert_eq!((f.op, f.size, f.volume), (Op::Flush, 0, 1));
    }

    #[test]
    fn other_events_no_data_and_the_summary_are_skipped() {
        let mut p = Blkparse::default();
        let skip = |p: &mut Blkparse, line: &[u8]| p.parse(line).expect("valid");
        assert_eq!(
            skip(
                &mut p,
                b"8,16 3 4 0.000011950 3645 I R 4938888 + 256 [java]"
            ),
            Parsed::Skip(Skip::OtherEvent)
        );
        assert_eq!(
            skip(
                &mut p,
                b"  8,33   4        1     0.000000000  3922  D   N 0 (00 ..) [kworker/u65:0]"
            ),
            Parsed::Skip(Skip::NoData)
        );
        assert_eq!(skip(&mut p, b"CPU4 (8,33):"), Parsed::Skip(Skip::Summary));
        assert_eq!(
            skip(&mut p, b"8,16 3 4 0.1 3645 D R 1 + 8 [java]"),
            Parsed::Skip(Skip::Summary),
            "everything after the summary starts is summary"
        );
    }

    #[test]
    fn queue_events_when_asked() {
        let mut p = Blkparse::new(BlkparseEvent::Queue);
        assert_eq!(
            p.parse(b"8,16 3 4 0.1 3645 D R 1 + 8 [java]")
                .expect("valid"),
            Parsed::Skip(Skip::OtherEvent)
        );
        assert_eq!(
            request(&mut p, b"8,16 3 4 0.1 3645 Q R 1 + 8 [java]").offset,
            512
        );
    }

    #[test]
    fn refuses_what_is_not_an_event() {
        let mut p = Blkparse::default();
        assert_eq!(p.parse(b"hello world").expect_err("junk").field, "line");
        assert_eq!(
            p.parse(b"8;16 3 4 0.1 3645 D R 1 + 8 [java]")
                .expect_err("dev")
                .field,
            "device"
        );
        assert_eq!(
            p.parse(b"8,16 3 4 0.1 3645 D X 1 + 8 [java]")
                .expect_err("rwbs")
                .field,
            "RWBS"
        );
        assert_eq!(
            p.parse(b"8,16 3 4 0.1 3645 D R 1 + z [java]")
                .expect_err("n")
                .field,
            "sectors"
        );
        // Found by the CLI's bad-input sweep: lines cut after the sector were counted as
        // events without data and skipped.
        for cut in [
            &b"8,16 3 4 0.1 3645 D R 540656 +"[..],
            b"8,16 3 4 0.1 3645 D W 540656",
            b"8,16 3 4 0.1 3645 D N 540656 +",
        ] {
            assert_eq!(
                p.parse(cut).expect_err("truncated").field,
                "sectors",
                "{}",
                String::from_utf8_lossy(cut)
            );
        }
        assert_eq!(
            p.parse(b"8,16 3 4 0.1 3645 D FWS [kworker]")
                .expect("a write without data"),
            Parsed::Skip(Skip::NoData)
        );
    }

    /// Found by an outside bad-input hunt: RWBS strings no kernel or blkparse prints were
    /// read by their first letter, and malformed `D` lines were skipped as events without
    /// data (a note, exit 0), so corrupt lines changed the replay silently.
    #[test]
    fn follows_blkparse_rwbs_grammar() {
        for (text, op) in [
            ("R", Some(Op::Read)),
            ("RA", Some(Op::Read)),
            ("RM", Some(Op::Read)),
            ("W", Some(Op::Write)),
            ("WS", Some(Op::Write)),
            ("WSM", Some(Op::Write)),
            ("WFS", Some(Op::Write)),
            ("WBS", Some(Op::Write)),
            ("FWFSM", Some(Op::Write)),
            ("D", Some(Op::Trim)),
            ("DS", Some(Op::Trim)),
            ("DE", Some(Op::Trim)),
            ("DSE", Some(Op::Trim)),
            ("F", Some(Op::Flush)),
            ("FF", Some(Op::Flush)),
            ("FN", Some(Op::Flush)),
            ("N", None),
            ("ZA", Some(Op::Write)),
            ("ZR", None),
            ("ZRA", None),
            ("ZC", None),
        ] {
            assert_eq!(rwbs(text.as_bytes()), Ok(op), "{text}");
        }
        for text in [
            "", "RW", "WR", "RD", "DR", "DW", "NR", "FFW", "RRRR", "WWWWW", "WSS", "WMS", "X", "Z",
            "ZX", "FFFF", "r", "AR",
        ] {
            let error = rwbs(text.as_bytes()).expect_err(text);
            assert_eq!(error.field, "RWBS", "{text}");
        }
    }

    #[test]
    fn a_malformed_event_line_is_an_error_not_an_event_without_data() {
        let mut p = Blkparse::default();
        for (line, field) in [
            (&b"8,16 3 4 0.1 3645 D R 584808 584808 + 936"[..], "sectors"),
            (b"8,16 3 4 0.1 3645 D W 584808 936 [kworker]", "sectors"),
            (b"8,16 3 4 0.1 3645 D W 584808 - 936 [kworker]", "sectors"),
            (b"8,16 3 4 0.1 3645 D W x + 8 [kworker]", "sector"),
            (b"8,16 3 4 0.1 3645 D W 8 + 8 kworker", "process"),
            (b"8,16 3 4 0.1 3645 D W 8 + + 8 [kworker]", "sectors"),
            (b"8,16 3 4 0.1 3645 D RW 8 + 8 [kworker]", "RWBS"),
        ] {
            let error = p.parse(line).expect_err("malformed");
            assert_eq!(error.field, field, "{}", String::from_utf8_lossy(line));
        }
        // What blkparse prints is still read: elapsed times (`-t`), pass-through commands,
        // process names with spaces, events without data.
        for line in [
            &b"8,16 3 4 0.1 3645 D W 8 + 8 (   12345) [kworker]"[..],
            b"8,16 3 4 0.1 3645 D R 8 + 8 [Web Content]",
            b"8,16 3 4 0.1 3645 D R 8 + 8",
        ] {
            assert_eq!(request(&mut p, line).size, 4096);
        }
        for line in [
            &b"8,16 3 4 0.1 3645 D N 0 (00 ..) [kworker/u65:0]"[..],
            b"8,16 3 4 0.1 3645 D N 0 (12 00 00 00 24 00) [sg_inq]",
            b"8,16 3 4 0.1 3645 D N [kworker]",
            b"8,16 3 4 0.1 3645 D N",
            b"8,16 3 4 0.1 3645 D WS (   12345) [kworker]",
        ] {
            assert_eq!(p.parse(line), Ok(Parsed::Skip(Skip::NoData)));
        }
    }

    /// Found by a mutation hunt: any alphabetic word in the action column was an event of
    /// another action, so a D line whose action was lost (`R 585744 + 960`, the RWBS in the
    /// action column) or garbled (`x`, `DD`, `NaN`) was skipped with a note.
    #[test]
    fn the_action_is_one_blkparse_prints_and_every_event_has_an_rwbs() {
        let mut p = Blkparse::default();
        for (line, field) in [
            (
                &b"8,16 3 10 0.00004 4528 x R 585744 + 960 [java]"[..],
                "action",
            ),
            (b"8,16 3 10 0.00004 4528 DD R 585744 + 960 [java]", "action"),
            (
                b"8,16 3 10 0.00004 4528 NaN R 585744 + 960 [java]",
                "action",
            ),
            (b"8,16 3 10 0.00004 4528 R 585744 + 960 [java]", "RWBS"),
            (b"8,16 3 10 0.00004 4528 C 585744 + 960 [0]", "RWBS"),
        ] {
            let error = p.parse(line).expect_err("malformed");
            assert_eq!(error.field, field, "{}", String::from_utf8_lossy(line));
        }
        for line in [
            &b"8,16 3 4 0.1 3645 C R 4938888 + 256 [0]"[..],
            b"8,16 3 4 0.1 3645 UT N [kworker] 1",
            b"8,16 3 4 0.1 3645 m N cfq3645 slice expired t=0",
            b"8,16 3 4 0.1 3645 R WS 8 + 8 [0]",
        ] {
            assert_eq!(p.parse(line), Ok(Parsed::Skip(Skip::OtherEvent)));
        }
    }

    /// `--blkparse-event` takes D or Q, in either case.
    #[test]
    fn the_event_option_parses() {
        for (text, event) in [
            ("D", BlkparseEvent::Dispatch),
            ("d", BlkparseEvent::Dispatch),
            ("Q", BlkparseEvent::Queue),
            ("q", BlkparseEvent::Queue),
        ] {
            assert_eq!(text.parse::<BlkparseEvent>(), Ok(event), "{text}");
        }
        assert_eq!(
            "C".parse::<BlkparseEvent>(),
            Err("blkparse event \"C\" is neither D (dispatch) nor Q (queue)".to_string())
        );
    }

    /// Only `CPU` followed by digits opens the summary block: `CPU` alone or `CPUs` is a
    /// malformed line, and events after it are still read.
    #[test]
    fn only_cpu_and_a_number_opens_the_summary() {
        let mut p = Blkparse::default();
        for line in [&b"CPU (8,16):"[..], b"CPUs (8,16):"] {
            let error = p.parse(line).expect_err("not an event");
            assert_eq!(error.field, "line", "{}", String::from_utf8_lossy(line));
        }
        assert_eq!(
            request(&mut p, b"8,16 3 4 0.1 3645 D R 1 + 8 [java]").offset,
            512
        );
        assert_eq!(
            p.parse(b"CPU12 (8,16):").expect("summary"),
            Parsed::Skip(Skip::Summary)
        );
    }
}
