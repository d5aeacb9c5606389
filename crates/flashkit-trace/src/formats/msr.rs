//! MSR Cambridge block traces (Narayanan, Donnelly, Rowstron: "Write off-loading", FAST
//! 2008; SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no
//! header. Timestamps are Windows FILETIME ticks of 100 ns; offsets and sizes are bytes.
//!
//! Time stays on FILETIME's epoch (1601-01-01), only scaled to nanoseconds: flashkit keeps
//! every trace's own clock and converts units, never epochs. `DiskNumber` is the volume;
//! `Hostname` and `ResponseTime` are not used (the latter is still checked to be a number,
//! so a shifted column is caught).

use super::fields::{FieldError, check_end, number, size_u32, volume_u16};
use super::{CsvShape, Parsed, Skip, csv_row};
use crate::{Op, Request};

const HEADER: &[u8] = b"timestamp,hostname,disknumber,type,offset,size,responsetime";

const SHAPE: CsvShape = CsvShape {
    header: HEADER,
    name: "MSR Cambridge",
    columns: "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
    extra_fields: false,
};

/// The MSR Cambridge CSV parser.
#[derive(Default)]
pub struct Msr {
    started: bool,
}

impl Msr {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let Some(f) = csv_row::<7>(&mut self.started, line, &SHAPE)? else {
            return Ok(Parsed::Skip(Skip::Header));
        };
        let ticks = number("Timestamp", f[0])?;
        let time_ns = ticks.checked_mul(100).ok_or_else(|| {
            FieldError::bad("Timestamp", f[0], "a FILETIME that fits 64-bit nanoseconds")
        })?;
        let volume = volume_u16("DiskNumber", f[2])?;
        let op = if f[3].eq_ignore_ascii_case(b"Read") {
            Op::Read
        } else if f[3].eq_ignore_ascii_case(b"Write") {
            Op::Write
        } else {
            return Err(FieldError::bad("Type", f[3], "Read or Write"));
        };
        let offset = number("Offset", f[4])?;
        let size = size_u32("Size", number("Size", f[5])?, f[5])?;
        check_end(offset, size, f[4])?;
        number("ResponseTime", f[6])?;
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
    fn parses_a_row_and_scales_ticks_to_nanoseconds() {
        let mut p = Msr::default();
        let r = p
            .parse(b"128166385295514663,hm,0,Write,9056014336,2048,2833")
            .expect("valid");
        assert_eq!(
            r,
            Parsed::Request(Request {
                time_ns: 12_816_638_529_551_466_300,
                op: Op::Write,
                offset: 9_056_014_336,
                size: 2048,
                volume: 0
            })
        );
    }

    #[test]
    fn names_the_field_at_fault() {
        let mut p = Msr { started: true };
        let e = p.parse(b"1,hm,0,Wrote,0,512,1").expect_err("bad type");
        assert_eq!(e.field, "Type");
        assert!(e.message.contains("\"Wrote\""), "{}", e.message);
        let e = p.parse(b"1,hm,0,Read,0,512").expect_err("short");
        assert_eq!(e.field, "line");
        let e = p.parse(b"1,hm,0,Read,0,5x2,1").expect_err("size");
        assert_eq!(e.field, "Size");
        let e = p
            .parse(b"1,hm,0,Read,18446744073709551615,512,1")
            .expect_err("end");
        assert_eq!(e.field, "offset");
        let e = p.parse(b"1,hm,70000,Read,0,512,1").expect_err("disk");
        assert_eq!(e.field, "DiskNumber");
    }

    #[test]
    fn a_header_is_accepted_only_first() {
        let mut p = Msr::default();
        let header = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";
        assert_eq!(p.parse(header).expect("header"), Parsed::Skip(Skip::Header));
        assert!(p.parse(header).is_err(), "a second header is a bad row");
    }
}
