//! blkparse's default text output (blktrace, Linux):
//! `maj,min cpu seq sec.nsec pid action RWBS sector + nsectors [process]`.
//!
//! Only one action becomes requests: `D` (issued to the driver, after the scheduler merged
//! and split requests: what the device sees; the default) or `Q` (queued by the block layer,
//! before merging). Every other event (I, C, G, M, P, U, ...) is counted and skipped.
//!
//! The operation comes from the RWBS field as the kernel writes it (`blk_fill_rwbs`): an
//! optional leading `F` (pre-flush), then `W` write, `D` discard, `R` read or `N` no data,
//! then modifiers (`F` FUA, `A` read-ahead, `S` sync, `M` metadata, `E` secure, `B` barrier).
//! A pre-flush with no data (`FN`) is a flush; other no-data events (`N`, e.g. SCSI
//! pass-through commands printed as `0 (00 ..)`) are counted and skipped. Sectors are 512
//! bytes. The device becomes the volume, numbered in order of first appearance.
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
        if f[5] != self.event.action() {
            if !f[5].iter().all(u8::is_ascii_alphabetic) {
                return Err(FieldError::bad("action", f[5], "an event letter"));
            }
            return Ok(Parsed::Skip(Skip::OtherEvent));
        }
        let op = rwbs(f[6])?;
        let volume = self.devices.volume(major, minor, "device")?;
        let has_range = n >= 10 && f[8] == b"+";
        // A line cut after the sector (`R 540656`, `R 540656 +`) is not an event without
        // data, which has no sector, or a command in parentheses after it.
        let cut = !has_range
            && (8..=9).contains(&n)
            && f[7].iter().all(u8::is_ascii_digit)
            && (n == 8 || f[8] == b"+");
        if cut {
            return Err(FieldError::new(
                "sectors",
                "missing: the line ends before `+ nsectors` (truncated?)",
            ));
        }
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

/// The operation of an RWBS field; `None` for an event that moves no data.
fn rwbs(text: &[u8]) -> Result<Option<Op>, FieldError> {
    let bad = || {
        FieldError::bad(
            "RWBS",
            text,
            "an RWBS field (R, W, D or N with F, A, S, M, E, B)",
        )
    };
    if text.is_empty() || !text.iter().all(|b| b"RWDNFASMEB".contains(b)) {
        return Err(bad());
    }
    let preflush = text.len() > 1 && text[0] == b'F' && b"RWDN".contains(&text[1]);
    let letter = if preflush { text[1] } else { text[0] };
    Ok(match letter {
        b'R' => Some(Op::Read),
        b'W' => Some(Op::Write),
        b'D' => Some(Op::Trim),
        b'N' if preflush => Some(Op::Flush),
        b'N' => None,
        b'F' => Some(Op::Flush),
        _ => return Err(bad()),
    })
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
}
