//! SNIA SYSTOR '17 traces (Lee et al., "Understanding storage traffic characteristics on
//! enterprise virtual desktop infrastructure", SYSTOR 2017):
//! header `Timestamp,Response,IOType,LUN,Offset,Size`.
//!
//! Timestamp is Unix seconds with a fraction; Response (seconds) is checked but not used;
//! IOType `R` or `W`; LUN becomes the volume; Offset and Size are bytes.
//!
//! Two properties of the published files are handled explicitly: rows are not in time order
//! (they are replayed in file order unless `--sort-by-time` is given), and some rows have an
//! empty IOType. A row without an operation cannot be replayed; such rows are counted
//! ("rows without an operation") and skipped, never silently dropped and never guessed.

use super::fields::{FieldError, check_end, decimal_ns, number, size_u32, volume_u16};
use super::{CsvShape, Parsed, Skip, csv_row};
use crate::{Op, Request};

const HEADER: &[u8] = b"timestamp,response,iotype,lun,offset,size";

const SHAPE: CsvShape = CsvShape {
    header: HEADER,
    name: "SYSTOR '17",
    columns: "Timestamp,Response,IOType,LUN,Offset,Size",
    extra_fields: false,
};

/// The SYSTOR '17 parser.
#[derive(Default)]
pub struct Systor {
    started: bool,
}

impl Systor {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let Some(f) = csv_row::<6>(&mut self.started, line, &SHAPE)? else {
            return Ok(Parsed::Skip(Skip::Header));
        };
        let time_ns = decimal_ns("Timestamp", f[0], 1_000_000_000)?;
        decimal_ns("Response", f[1], 1_000_000_000)?;
        let op = match f[2] {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            b"" => return Ok(Parsed::Skip(Skip::NoType)),
            other => return Err(FieldError::bad("IOType", other, "R, W or empty")),
        };
        let volume = volume_u16("LUN", f[3])?;
        let offset = number("Offset", f[4])?;
        let size = size_u32("Size", number("Size", f[5])?, f[5])?;
        check_end(offset, size, f[4])?;
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

    #[test]
    fn parses_rows_and_skips_untyped_ones() {
        let mut p = Systor::default();
        assert_eq!(
            p.parse(b"Timestamp,Response,IOType,LUN,Offset,Size")
                .expect("header"),
            Parsed::Skip(Skip::Header)
        );
        assert_eq!(
            p.parse(b"1455591804.310701000,0.006475000,R,0,203468398592,32768")
                .expect("valid"),
            Parsed::Request(Request {
                time_ns: 1_455_591_804_310_701_000,
                op: Op::Read,
                offset: 203_468_398_592,
                size: 32768,
                volume: 0
            })
        );
        assert_eq!(
            p.parse(b"1455591804.3,0.006,,0,2034,512").expect("untyped"),
            Parsed::Skip(Skip::NoType)
        );
        assert_eq!(
            p.parse(b"1.0,0.1,X,0,0,512").expect_err("type").field,
            "IOType"
        );
        assert_eq!(p.parse(b"1.0,0.1,R,0,0").expect_err("short").field, "line");
    }
}
