//! CloudPhysics block traces in libCacheSim's CSV layout (Waldspurger et al., "Efficient
//! MRC construction with SHARDS", FAST 2015; converted from VMware VSCSI traces):
//! header `version,time,op,size,lbn`.
//!
//! `time` is microseconds; `op` is the SCSI opcode in hexadecimal; `size` is bytes; `lbn` is
//! the first 512-byte sector. Opcodes: READ(6/10/12/16) = 08, 28, a8, 88 are reads;
//! WRITE(6/10/12/16) = 0a, 2a, aa, 8a are writes; UNMAP (42) and WRITE SAME(16) with unmap
//! (93) are trims; SYNCHRONIZE CACHE(10/16) = 35, 91 are flushes. Any other opcode is a
//! command that moves no data for an FTL (INQUIRY, TEST UNIT READY, ...): counted, skipped.

use super::fields::{FieldError, check_end, decimal_ns, hex, number, scaled, size_u32};
use super::{CsvShape, Parsed, SECTOR_BYTES, Skip, csv_row};
use crate::{Op, Request};

const HEADER: &[u8] = b"version,time,op,size,lbn";

const SHAPE: CsvShape = CsvShape {
    header: HEADER,
    name: "CloudPhysics",
    columns: "version,time,op,size,lbn",
    extra_fields: false,
};

/// The CloudPhysics (libCacheSim CSV) parser.
#[derive(Default)]
pub struct CloudPhysics {
    started: bool,
}

impl CloudPhysics {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let Some(f) = csv_row::<5>(&mut self.started, line, &SHAPE)? else {
            return Ok(Parsed::Skip(Skip::Header));
        };
        number("version", f[0])?;
        let time_ns = decimal_ns("time", f[1], 1_000)?;
        let opcode = hex("op", f[2])?;
        // Every field is read, also of a command that moves no data: a malformed row is
        // malformed whatever its opcode (a mutation hunt found rows of another format read
        // as commands without data, their garbage unseen).
        let size = size_u32("size", number("size", f[3])?, f[3])?;
        let offset = scaled("lbn", number("lbn", f[4])?, SECTOR_BYTES, f[4])?;
        let op = match opcode {
            0x08 | 0x28 | 0xa8 | 0x88 => Op::Read,
            0x0a | 0x2a | 0xaa | 0x8a => Op::Write,
            0x42 | 0x93 => Op::Trim,
            0x35 | 0x91 => Op::Flush,
            0x100.. => return Err(FieldError::bad("op", f[2], "a SCSI opcode (00 to ff)")),
            _ => return Ok(Parsed::Skip(Skip::NoData)),
        };
        if op == Op::Flush {
            return Ok(Parsed::Request(Request {
                time_ns,
                op,
                offset: 0,
                size: 0,
                volume: 0,
            }));
        }
        check_end(offset, size, f[4])?;
        Ok(Parsed::Request(Request {
            time_ns,
            op,
            offset,
            size,
            volume: 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_opcodes_and_units() {
        let mut p = CloudPhysics::default();
        assert_eq!(
            p.parse(b"version,time,op,size,lbn").expect("header"),
            Parsed::Skip(Skip::Header)
        );
        assert_eq!(
            p.parse(b"1,5633898,2a,6656,40409911").expect("valid"),
            Parsed::Request(Request {
                time_ns: 5_633_898_000,
                op: Op::Write,
                offset: 40_409_911 * 512,
                size: 6656,
                volume: 0
            })
        );
        let Parsed::Request(r) = p.parse(b"1,5,28,512,0").expect("read") else {
            panic!("a request")
        };
        assert_eq!(r.op, Op::Read);
        assert_eq!(
            p.parse(b"1,5,12,0,0").expect("inquiry"),
            Parsed::Skip(Skip::NoData)
        );
        assert_eq!(p.parse(b"1,5,zz,512,0").expect_err("op").field, "op");
        assert_eq!(p.parse(b"1,5,1ff,512,0").expect_err("op").field, "op");
    }

    /// Found by a mutation hunt: the size and sector of a command without data were never
    /// read, so rows of another format (Tencent's size column read as an opcode) passed as
    /// commands without data, garbage included.
    #[test]
    fn a_command_without_data_is_checked_field_by_field() {
        let mut p = CloudPhysics::default();
        assert_eq!(
            p.parse(b"1,5,12,0,0").expect("INQUIRY"),
            Parsed::Skip(Skip::NoData)
        );
        for (row, field) in [(&b"1,5,12,x,0"[..], "size"), (b"1,5,12,0,x", "lbn")] {
            assert_eq!(p.parse(row).expect_err("malformed").field, field);
        }
    }

    /// Every opcode the module names, as the SCSI standard numbers them: READ and WRITE
    /// (6/10/12/16), UNMAP and WRITE SAME(16) as trims, SYNCHRONIZE CACHE(10/16) as flushes
    /// (addressing nothing); TEST UNIT READY (00) moves no data.
    #[test]
    fn every_data_opcode_has_its_operation() {
        let mut p = CloudPhysics::default();
        for (code, op) in [
            ("08", Op::Read),
            ("28", Op::Read),
            ("a8", Op::Read),
            ("88", Op::Read),
            ("0a", Op::Write),
            ("2a", Op::Write),
            ("aa", Op::Write),
            ("8a", Op::Write),
            ("42", Op::Trim),
            ("93", Op::Trim),
        ] {
            let row = format!("1,7,{code},4096,8");
            assert_eq!(
                p.parse(row.as_bytes()).expect("valid"),
                Parsed::Request(Request {
                    time_ns: 7000,
                    op,
                    offset: 4096,
                    size: 4096,
                    volume: 0
                }),
                "{code}"
            );
        }
        for code in ["35", "91"] {
            let row = format!("1,7,{code},4096,8");
            assert_eq!(
                p.parse(row.as_bytes()).expect("valid"),
                Parsed::Request(Request {
                    time_ns: 7000,
                    op: Op::Flush,
                    offset: 0,
                    size: 0,
                    volume: 0
                }),
                "{code}"
            );
        }
        assert_eq!(
            p.parse(b"1,7,00,0,0").expect("TEST UNIT READY"),
            Parsed::Skip(Skip::NoData)
        );
    }
}
