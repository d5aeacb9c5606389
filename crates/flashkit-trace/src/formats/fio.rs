//! fio I/O logs (`fio --write_iolog`, replayed with `--read_iolog`), versions 2 and 3.
//!
//! Version 2 starts with `fio version 2 iolog`; then `filename add|open|close` lines and
//! `filename action offset length` lines, action one of `read`, `write`, `trim`, `sync`,
//! `datasync`, `sync_file_range` or `wait`, offset and length in bytes. `wait` carries a
//! delay in microseconds in the offset column (fio's HOWTO: relative to the previous wait);
//! version 2 has no other clock, so a request's time is the sum of the waits before it.
//! (Recent fio source compares a wait with milliseconds since the job started; flashkit
//! follows the documented meaning.)
//!
//! Version 3 (fio 3.31 and later, what `--write_iolog` writes) starts with
//! `fio version 3 iolog` and prefixes every line with a timestamp in microseconds from the
//! start of the run; `wait` is not allowed and, as fio does, is ignored (counted).
//!
//! Syncs become flushes. Files become volumes, numbered in order of first appearance.
//! File actions and waits are counted and skipped.

use super::fields::{FieldError, check_end, number, size_u32, split_ws};
use super::{NameMap, Parsed, Skip};
use crate::{Op, Request};

/// The fio iolog parser.
pub struct Fio {
    version: u8,
    started: bool,
    /// Version 2's clock: the sum of the waits so far.
    clock_ns: u64,
    pub(crate) files: NameMap,
}

impl Fio {
    /// A parser for iolog `version` (2 or 3).
    pub fn new(version: u8) -> Self {
        Fio {
            version,
            started: false,
            clock_ns: 0,
            files: NameMap::default(),
        }
    }

    fn header(&self) -> &'static [u8] {
        if self.version == 2 {
            b"fio version 2 iolog"
        } else {
            b"fio version 3 iolog"
        }
    }

    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        if !std::mem::replace(&mut self.started, true) {
            if super::fields::trim(line) == self.header() {
                return Ok(Parsed::Skip(Skip::Header));
            }
            return Err(FieldError::new(
                "header",
                format!(
                    "{} is not {:?}, the first line of a version {} iolog",
                    super::fields::quote(line),
                    String::from_utf8_lossy(self.header()),
                    self.version
                ),
            ));
        }
        let mut f = [&b""[..]; 6];
        let n = split_ws(line, &mut f);
        let (time_ns, rest, count) = if self.version == 3 {
            if n == 0 {
                return Err(FieldError::new("line", "empty"));
            }
            let us = number("timestamp", f[0])?;
            let ns = us.checked_mul(1000).ok_or_else(|| {
                FieldError::bad(
                    "timestamp",
                    f[0],
                    "microseconds that fit 64-bit nanoseconds",
                )
            })?;
            (ns, &f[1..], n - 1)
        } else {
            (self.clock_ns, &f[..], n)
        };
        match count {
            2 => self.file_action(rest[0], rest[1]),
            4 => self.io_action(time_ns, rest),
            _ => Err(FieldError::new(
                "line",
                format!(
                    "{count} fields{}; iolog lines are `filename action` or \
                     `filename action offset length`",
                    if self.version == 3 {
                        " after the timestamp"
                    } else {
                        ""
                    }
                ),
            )),
        }
    }

    fn file_action(&mut self, file: &[u8], action: &[u8]) -> Result<Parsed, FieldError> {
        match action {
            b"add" => {
                self.files.volume(file, "filename")?;
            }
            b"open" | b"close" => {}
            other => return Err(FieldError::bad("action", other, "add, open or close")),
        }
        Ok(Parsed::Skip(Skip::FileAction))
    }

    fn io_action(&mut self, time_ns: u64, f: &[&[u8]]) -> Result<Parsed, FieldError> {
        let op = match f[1] {
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Trim,
            b"sync" | b"datasync" | b"sync_file_range" => Op::Flush,
            b"wait" => {
                let us = number("offset", f[2])?;
                number("length", f[3])?;
                if self.version == 2 {
                    // Checked, not saturated: a wait past 2^64 ns left the clock at 2^64-1
                    // and every later request there, without an error (a mutation hunt).
                    self.clock_ns = us
                        .checked_mul(1000)
                        .and_then(|ns| self.clock_ns.checked_add(ns))
                        .ok_or_else(|| {
                            FieldError::bad(
                                "offset",
                                f[2],
                                "a wait that keeps the clock in 64 bits",
                            )
                        })?;
                }
                return Ok(Parsed::Skip(Skip::FileAction));
            }
            other => {
                return Err(FieldError::bad(
                    "action",
                    other,
                    "read, write, trim, sync, datasync, sync_file_range or wait",
                ));
            }
        };
        let offset = number("offset", f[2])?;
        let size = size_u32("length", number("length", f[3])?, f[3])?;
        let volume = self.files.volume(f[0], "filename")?;
        if op == Op::Flush {
            return Ok(Parsed::Request(Request {
                time_ns,
                op,
                offset: 0,
                size: 0,
                volume,
            }));
        }
        check_end(offset, size, f[2])?;
        Ok(Parsed::Request(Request {
            time_ns,
            op,
            offset,
            size,
            volume,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(version: u8, text: &str) -> Vec<Result<Parsed, FieldError>> {
        let mut p = Fio::new(version);
        text.lines().map(|l| p.parse(l.as_bytes())).collect()
    }

    #[test]
    fn version_2_clocks_requests_by_the_waits_before_them() {
        let out = all(
            2,
            "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n\
             /dev/sdb wait 250 0\n/dev/sdb read 8192 512\n/dev/sdb sync 0 0\n/dev/sdb close",
        );
        let requests: Vec<Request> = out
            .into_iter()
            .filter_map(|p| match p.expect("valid") {
                Parsed::Request(r) => Some(r),
                Parsed::Skip(_) => None,
            })
            .collect();
        assert_eq!(requests.len(), 3);
        assert_eq!((requests[0].op, requests[0].time_ns), (Op::Write, 0));
        assert_eq!(
            (requests[1].op, requests[1].offset, requests[1].time_ns),
            (Op::Read, 8192, 250_000)
        );
        assert_eq!(requests[2].op, Op::Flush);
    }

    #[test]
    fn version_3_reads_microsecond_timestamps() {
        let out = all(
            3,
            "fio version 3 iolog\n21 /tmp/f add\n156 /tmp/f trim 61440 8192",
        );
        assert_eq!(
            out[2].clone().expect("valid"),
            Parsed::Request(Request {
                time_ns: 156_000,
                op: Op::Trim,
                offset: 61440,
                size: 8192,
                volume: 0
            })
        );
    }

    #[test]
    fn refuses_a_missing_header_and_unknown_actions() {
        let out = all(2, "/dev/sdb write 0 4096");
        assert_eq!(out[0].clone().expect_err("no header").field, "header");
        let out = all(
            2,
            "fio version 2 iolog\n/dev/sdb scribble 0 4096\n/dev/sdb write 0",
        );
        assert_eq!(out[1].clone().expect_err("action").field, "action");
        assert_eq!(out[2].clone().expect_err("fields").field, "line");
        let out = all(3, "fio version 2 iolog");
        assert_eq!(out[0].clone().expect_err("wrong version").field, "header");
    }

    /// Found by a mutation hunt: the first wait past 2^64 ns saturated the clock, and every
    /// later request was timed 2^64-1 ns without an error.
    #[test]
    fn a_wait_past_64_bit_nanoseconds_is_refused_at_its_line() {
        let mut p = Fio::new(2);
        p.parse(b"fio version 2 iolog").expect("header");
        let error = p
            .parse(b"/dev/sdb wait 18446744073709552 0")
            .expect_err("overflows once in nanoseconds");
        assert_eq!(error.field, "offset");
        assert!(
            error.message.contains("keeps the clock in 64 bits"),
            "{}",
            error.message
        );
    }
}
