//! Tencent Cloud Block Storage traces (Zhang et al., "OSCA: An Online-Model Based Cache
//! Allocation Scheme in Cloud Block Storage Systems", USENIX ATC 2020; SNIA IOTTA):
//! `Timestamp,Offset,Size,IOType,VolumeID`, no header.
//!
//! Timestamp is Unix seconds; Offset and Size are 512-byte sectors; IOType `0` is a read and
//! `1` a write; VolumeID becomes the volume (it must fit 16 bits).

use super::fields::{FieldError, check_end, decimal_ns, number, scaled, size_u32, volume_u16};
use super::{CsvShape, Parsed, SECTOR_BYTES, Skip, csv_row};
use crate::{Op, Request};

const HEADER: &[u8] = b"timestamp,offset,size,iotype,volumeid";

const SHAPE: CsvShape = CsvShape {
    header: HEADER,
    name: "Tencent CBS",
    columns: "Timestamp,Offset,Size,IOType,VolumeID",
    extra_fields: false,
};

/// The Tencent CBS parser.
#[derive(Default)]
pub struct Tencent {
    started: bool,
}

impl Tencent {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let Some(f) = csv_row::<5>(&mut self.started, line, &SHAPE)? else {
            return Ok(Parsed::Skip(Skip::Header));
        };
        let time_ns = decimal_ns("Timestamp", f[0], 1_000_000_000)?;
        let offset = scaled("Offset", number("Offset", f[1])?, SECTOR_BYTES, f[1])?;
        let sectors = number("Size", f[2])?;
        let size = size_u32("Size", scaled("Size", sectors, SECTOR_BYTES, f[2])?, f[2])?;
        let op = match f[3] {
            b"0" => Op::Read,
            b"1" => Op::Write,
            other => return Err(FieldError::bad("IOType", other, "0 (read) or 1 (write)")),
        };
        let volume = volume_u16("VolumeID", f[4])?;
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
    fn parses_sectors_and_volumes() {
        let mut p = Tencent::default();
        assert_eq!(
            p.parse(b"1538323199,13896880,128,0,1063").expect("valid"),
            Parsed::Request(Request {
                time_ns: 1_538_323_199_000_000_000,
                op: Op::Read,
                offset: 13_896_880 * 512,
                size: 65536,
                volume: 1063
            })
        );
        assert_eq!(p.parse(b"1,2,3,R,4").expect_err("type").field, "IOType");
        assert_eq!(
            p.parse(b"1,2,3,0,99999").expect_err("volume").field,
            "VolumeID"
        );
        assert_eq!(
            p.parse(b"1,2,8388608,0,1").expect_err("4 GiB").field,
            "Size",
            "2^23 sectors are 4 GiB"
        );
    }
}
