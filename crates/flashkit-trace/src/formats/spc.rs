//! UMass Trace Repository / SPC traces (Financial1-2, WebSearch1-3):
//! `ASU,LBA,Size,Opcode,Timestamp[,optional fields...]`.
//!
//! The ASU (application storage unit) is a separate address space: it becomes the request's
//! volume, and the LBA (512-byte blocks) is an offset inside it. Replay lays the ASUs out one
//! after another or selects one (`--asu`); see `layout`. Size is in bytes, Opcode `R`/`r`/`W`/`w`,
//! Timestamp in seconds from the start of the trace. Spaces after commas and extra trailing
//! fields occur in the published files and are accepted.

use super::fields::{FieldError, check_end, decimal_ns, number, scaled, size_u32, volume_u16};
use super::{CsvShape, Parsed, SECTOR_BYTES, Skip, csv_row};
use crate::{Op, Request};

const HEADER: &[u8] = b"asu,lba,size,opcode,timestamp";

const SHAPE: CsvShape = CsvShape {
    header: HEADER,
    name: "SPC",
    columns: "ASU,LBA,Size,Opcode,Timestamp",
    extra_fields: true,
};

/// The UMass / SPC parser.
#[derive(Default)]
pub struct Spc {
    started: bool,
}

impl Spc {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let Some(f) = csv_row::<5>(&mut self.started, line, &SHAPE)? else {
            return Ok(Parsed::Skip(Skip::Header));
        };
        let volume = volume_u16("ASU", f[0])?;
        let offset = scaled("LBA", number("LBA", f[1])?, SECTOR_BYTES, f[1])?;
        let size = size_u32("Size", number("Size", f[2])?, f[2])?;
        let op = match f[3] {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(FieldError::bad("Opcode", other, "R, r, W or w")),
        };
        let time_ns = decimal_ns("Timestamp", f[4], 1_000_000_000)?;
        check_end(offset, size, f[1])?;
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
    fn parses_sectors_seconds_and_asus() {
        let mut p = Spc::default();
        let r = p
            .parse(b"1, 31244784, 32768, r, 0.011565, extra, fields")
            .expect("valid");
        assert_eq!(
            r,
            Parsed::Request(Request {
                time_ns: 11_565_000,
                op: Op::Read,
                offset: 31_244_784 * 512,
                size: 32768,
                volume: 1
            })
        );
    }

    #[test]
    fn refuses_bad_opcodes_and_short_rows() {
        let mut p = Spc::default();
        assert_eq!(p.parse(b"0,1,512,X,0.1").expect_err("op").field, "Opcode");
        assert_eq!(p.parse(b"0,1,512,R").expect_err("short").field, "line");
        assert_eq!(
            p.parse(b"0,1,512,R,-1").expect_err("time").field,
            "Timestamp"
        );
        assert_eq!(
            p.parse(b"0,36028797018963968,512,R,1")
                .expect_err("lba")
                .field,
            "LBA",
            "2^55 sectors overflow 64-bit bytes"
        );
    }
}
