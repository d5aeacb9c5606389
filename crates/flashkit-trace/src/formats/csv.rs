//! flashkit's generic CSV: a header line names the columns, in any order; every other line
//! is a request. The format `flashkit trace convert --to csv` writes, and the way to bring a
//! trace in whose layout flashkit does not know: rename its header.
//!
//! Columns (names are case-insensitive; docs/TRACES.md is the reference):
//!
//! | column | meaning |
//! |---|---|
//! | `op` (required) | `read`/`r`, `write`/`w`, `trim`/`t`/`discard`/`d`, `flush`/`f` (any case) |
//! | `offset` or `offset_sectors` (one required) | first byte, or first 512-byte sector |
//! | `size` or `size_sectors` (one required) | bytes, or 512-byte sectors |
//! | `time_ns`, `time_us`, `time_ms`, `time_s` or `time` (optional) | issue time; `time` is in `--time-unit` (default ns); decimals allowed; absent means 0 |
//! | `volume` (optional) | volume number, 0 to 65535 (default 0) |
//! | a name starting with `_` | ignored |
//!
//! Blank lines and lines starting with `#` are skipped (counted). Any other column name is
//! an error, so a misspelt column is caught rather than ignored.

use super::fields::{
    FieldError, check_end, decimal_ns, number, quote, scaled, size_u32, split_sep, trim, volume_u16,
};
use super::{Parsed, SECTOR_BYTES, Skip};
use crate::{Op, Request};
use std::io::Write;

const MAX_COLUMNS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Op,
    Offset { unit: u64 },
    Size { unit: u64 },
    Time { unit_ns: u64 },
    Volume,
    Ignored,
}

/// The generic CSV parser.
pub struct Csv {
    default_time_unit_ns: u64,
    columns: Vec<Column>,
}

impl Csv {
    /// A parser whose bare `time` column is in units of `time_unit_ns`.
    pub fn new(time_unit_ns: u64) -> Self {
        Csv {
            default_time_unit_ns: time_unit_ns,
            columns: Vec::new(),
        }
    }

    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        if line.first() == Some(&b'#') {
            return Ok(Parsed::Skip(Skip::Comment));
        }
        if self.columns.is_empty() {
            self.columns = header(line, self.default_time_unit_ns)?;
            return Ok(Parsed::Skip(Skip::Header));
        }
        let mut f = [&b""[..]; MAX_COLUMNS];
        let n = split_sep(line, b',', &mut f);
        if n != self.columns.len() {
            return Err(FieldError::new(
                "line",
                format!("{n} fields; the header names {}", self.columns.len()),
            ));
        }
        let mut request = Request {
            time_ns: 0,
            op: Op::Read,
            offset: 0,
            size: 0,
            volume: 0,
        };
        let mut offset_text: &[u8] = b"";
        for (column, text) in self.columns.iter().zip(f) {
            match *column {
                Column::Op => request.op = op(text)?,
                Column::Offset { unit } => {
                    request.offset = scaled("offset", number("offset", text)?, unit, text)?;
                    offset_text = text;
                }
                Column::Size { unit } => {
                    let bytes = scaled("size", number("size", text)?, unit, text)?;
                    request.size = size_u32("size", bytes, text)?;
                }
                Column::Time { unit_ns } => request.time_ns = decimal_ns("time", text, unit_ns)?,
                Column::Volume => request.volume = volume_u16("volume", text)?,
                Column::Ignored => {}
            }
        }
        check_end(request.offset, request.size, offset_text)?;
        if request.op == Op::Flush {
            // A flush addresses nothing (`Request::size` is zero for one, as every other
            // format gives it); its row's offset and size were checked all the same.
            request.offset = 0;
            request.size = 0;
        }
        Ok(Parsed::Request(request))
    }
}

fn op(text: &[u8]) -> Result<Op, FieldError> {
    let lower = |names: &[&[u8]]| names.iter().any(|n| text.eq_ignore_ascii_case(n));
    if lower(&[b"read", b"r"]) {
        Ok(Op::Read)
    } else if lower(&[b"write", b"w"]) {
        Ok(Op::Write)
    } else if lower(&[b"trim", b"t", b"discard", b"d"]) {
        Ok(Op::Trim)
    } else if lower(&[b"flush", b"f"]) {
        Ok(Op::Flush)
    } else {
        Err(FieldError::bad("op", text, "read, write, trim or flush"))
    }
}

/// The time column a header names (`time`, `time_us`...), if any, as written.
pub(crate) fn time_column(header: &[u8]) -> Option<String> {
    header
        .split(|&b| b == b',')
        .map(trim)
        .find(|name| {
            let lower = name.to_ascii_lowercase();
            lower == b"time" || lower.starts_with(b"time_")
        })
        .map(|name| String::from_utf8_lossy(name).into_owned())
}

/// The columns a header names, checked: every name known, `op`, an offset and a size
/// present, nothing named twice.
fn header(line: &[u8], time_unit_ns: u64) -> Result<Vec<Column>, FieldError> {
    let mut columns = Vec::new();
    let mut have = [false; 5]; // op, offset, size, time, volume
    for name in line.split(|&b| b == b',').map(trim) {
        let lower = name.to_ascii_lowercase();
        let (column, slot) = match lower.as_slice() {
            b"op" => (Column::Op, 0),
            b"offset" => (Column::Offset { unit: 1 }, 1),
            b"offset_sectors" => (Column::Offset { unit: SECTOR_BYTES }, 1),
            b"size" => (Column::Size { unit: 1 }, 2),
            b"size_sectors" => (Column::Size { unit: SECTOR_BYTES }, 2),
            b"time" => (
                Column::Time {
                    unit_ns: time_unit_ns,
                },
                3,
            ),
            b"time_ns" => (Column::Time { unit_ns: 1 }, 3),
            b"time_us" => (Column::Time { unit_ns: 1_000 }, 3),
            b"time_ms" => (Column::Time { unit_ns: 1_000_000 }, 3),
            b"time_s" => (
                Column::Time {
                    unit_ns: 1_000_000_000,
                },
                3,
            ),
            b"volume" => (Column::Volume, 4),
            [b'_', ..] => (Column::Ignored, usize::MAX),
            _ => {
                return Err(FieldError::new(
                    "header",
                    format!(
                        "unknown column {}; the generic CSV knows op, offset, offset_sectors, \
                         size, size_sectors, time, time_ns, time_us, time_ms, time_s, volume \
                         (and ignores names starting with _)",
                        quote(name)
                    ),
                ));
            }
        };
        if slot != usize::MAX {
            if have[slot] {
                return Err(FieldError::new(
                    "header",
                    format!("column {} is named twice (or with two units)", quote(name)),
                ));
            }
            have[slot] = true;
        }
        columns.push(column);
    }
    if columns.len() > MAX_COLUMNS {
        return Err(FieldError::new(
            "header",
            format!("{} columns; at most {MAX_COLUMNS}", columns.len()),
        ));
    }
    for (slot, name) in [(0, "op"), (1, "offset"), (2, "size")] {
        if !have[slot] {
            return Err(FieldError::new(
                "header",
                format!("no {name} column in {}", quote(line)),
            ));
        }
    }
    Ok(columns)
}

/// The header `write_csv_request` rows follow.
pub const CSV_HEADER: &str = "time_ns,op,offset,size,volume";

/// Write one request as a generic-CSV row (after [`CSV_HEADER`]).
pub fn write_csv_request(out: &mut impl Write, r: &Request) -> std::io::Result<()> {
    writeln!(
        out,
        "{},{},{},{},{}",
        r.time_ns,
        r.op.name(),
        r.offset,
        r.size,
        r.volume
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(p: &mut Csv, line: &[u8]) -> Request {
        match p.parse(line).expect("valid") {
            Parsed::Request(r) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[test]
    fn columns_in_any_order_with_units() {
        let mut p = Csv::new(1);
        assert_eq!(
            p.parse(b"# made by hand").expect("comment"),
            Parsed::Skip(Skip::Comment)
        );
        assert_eq!(
            p.parse(b"Size_Sectors, op, _note, offset, time_us, volume")
                .expect("header"),
            Parsed::Skip(Skip::Header)
        );
        assert_eq!(
            request(&mut p, b"8, W, anything, 4096, 1.5, 3"),
            Request {
                time_ns: 1500,
                op: Op::Write,
                offset: 4096,
                size: 4096,
                volume: 3
            }
        );
        assert_eq!(request(&mut p, b"0,discard,,0,0,0").op, Op::Trim);
    }

    #[test]
    fn the_writer_round_trips() {
        let r = Request {
            time_ns: 7,
            op: Op::Trim,
            offset: 1 << 40,
            size: 512,
            volume: 9,
        };
        let mut text = Vec::new();
        write_csv_request(&mut text, &r).expect("write");
        let mut p = Csv::new(1);
        p.parse(CSV_HEADER.as_bytes()).expect("header");
        assert_eq!(request(&mut p, text.trim_ascii_end()), r);
    }

    #[test]
    fn bad_headers_and_rows_name_the_problem() {
        let e = Csv::new(1).parse(b"op,ofset,size").expect_err("typo");
        assert!(
            e.field == "header" && e.message.contains("\"ofset\""),
            "{e:?}"
        );
        let e = Csv::new(1).parse(b"op,offset").expect_err("no size");
        assert!(e.message.contains("no size column"), "{e:?}");
        let e = Csv::new(1)
            .parse(b"op,offset,size,size")
            .expect_err("twice");
        assert!(e.message.contains("named twice"), "{e:?}");
        let mut p = Csv::new(1);
        p.parse(b"op,offset,size").expect("header");
        assert_eq!(p.parse(b"x,0,512").expect_err("op").field, "op");
        assert_eq!(p.parse(b"r,0").expect_err("short").field, "line");
    }

    /// A flush row's offset and size are checked, then dropped: a flush addresses nothing
    /// (the hunt found them kept, unlike every other format's flush).
    #[test]
    fn a_flush_addresses_nothing() {
        let mut p = Csv::new(1);
        p.parse(b"op,offset,size").expect("header");
        let Parsed::Request(flush) = p.parse(b"flush,4096,512").expect("valid") else {
            panic!("a request");
        };
        assert_eq!((flush.op, flush.offset, flush.size), (Op::Flush, 0, 0));
        assert_eq!(
            p.parse(b"flush,x,512").expect_err("bad offset").field,
            "offset"
        );
    }

    /// Each time column's unit: a bare `time` takes the parser's (here microseconds), the
    /// suffixed ones fix their own; 2 units of each.
    #[test]
    fn every_time_column_has_its_unit() {
        for (column, ns) in [
            ("time", 2_000),
            ("time_ns", 2),
            ("time_us", 2_000),
            ("time_ms", 2_000_000),
            ("time_s", 2_000_000_000),
        ] {
            let mut p = Csv::new(1_000);
            p.parse(format!("op,offset,size,{column}").as_bytes())
                .expect("header");
            assert_eq!(request(&mut p, b"w,0,512,2").time_ns, ns, "{column}");
        }
    }

    /// The time column of a header, as written: `time` or a name starting `time_`, in any
    /// case, spaces around it trimmed; `timestamp` is not one.
    #[test]
    fn the_time_column_is_found_by_name() {
        assert_eq!(
            time_column(b"op, Time_MS ,size"),
            Some("Time_MS".to_string())
        );
        assert_eq!(time_column(b"op,offset,size,time"), Some("time".into()));
        assert_eq!(time_column(b"timestamp,op,offset,size"), None);
        assert_eq!(time_column(b"op,offset,size"), None);
    }

    /// A header may name up to 32 columns (ignored ones included), and rows of 32 fields
    /// are read; a 33rd column is refused.
    #[test]
    fn a_header_holds_at_most_32_columns() {
        let header = |ignored: usize| {
            let mut names = vec!["op".to_string(), "offset".into(), "size".into()];
            names.extend((0..ignored).map(|i| format!("_{i}")));
            names.join(",")
        };
        let mut p = Csv::new(1);
        p.parse(header(29).as_bytes()).expect("32 columns");
        let row = format!("w,4096,512{}", ",x".repeat(29));
        let r = request(&mut p, row.as_bytes());
        assert_eq!((r.op, r.offset, r.size), (Op::Write, 4096, 512));
        let e = Csv::new(1)
            .parse(header(30).as_bytes())
            .expect_err("33 columns");
        assert_eq!(
            (e.field, e.message.as_str()),
            ("header", "33 columns; at most 32")
        );
    }
}
