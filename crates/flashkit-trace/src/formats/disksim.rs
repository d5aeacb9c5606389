//! DiskSim ASCII traces, as DiskSim, MQSim and SSDsim read them:
//! `arrival_time device lsn size_in_sectors flags`, separated by spaces or tabs.
//!
//! `lsn` and `size_in_sectors` are 512-byte sectors; bit 0 of `flags` is 1 for a read and 0
//! for a write (DiskSim's `DISKSIM_READ`). The device becomes the volume. The time unit
//! differs by tool: DiskSim writes milliseconds (the default here), MQSim's shipped traces
//! use nanoseconds; `--time-unit` chooses. Times may have a fraction.

use super::fields::{
    FieldError, check_end, decimal_ns, number, scaled, size_u32, split_ws, volume_u16,
};
use super::{Parsed, SECTOR_BYTES};
use crate::{Op, Request};

/// The DiskSim ASCII parser.
pub struct DiskSim {
    unit_ns: u64,
}

impl DiskSim {
    /// A parser reading arrival times in units of `unit_ns` nanoseconds.
    pub fn new(unit_ns: u64) -> Self {
        DiskSim { unit_ns }
    }

    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let mut f = [&b""[..]; 5];
        let n = split_ws(line, &mut f);
        if n != 5 {
            return Err(FieldError::new(
                "line",
                format!(
                    "{n} space-separated fields; DiskSim rows have 5 \
                     (arrival_time device lsn size_in_sectors flags)"
                ),
            ));
        }
        let time_ns = decimal_ns("arrival_time", f[0], self.unit_ns)?;
        let volume = volume_u16("device", f[1])?;
        let offset = scaled("lsn", number("lsn", f[2])?, SECTOR_BYTES, f[2])?;
        let sectors = number("size_in_sectors", f[3])?;
        let size = size_u32(
            "size_in_sectors",
            scaled("size_in_sectors", sectors, SECTOR_BYTES, f[3])?,
            f[3],
        )?;
        let flags = number("flags", f[4])?;
        let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
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

    #[test]
    fn parses_rows_in_the_chosen_time_unit() {
        let mut ms = DiskSim::new(1_000_000);
        assert_eq!(
            ms.parse(b"938513.5 4 264719034 16 0").expect("valid"),
            Parsed::Request(Request {
                time_ns: 938_513_500_000,
                op: Op::Write,
                offset: 264_719_034 * 512,
                size: 8192,
                volume: 4
            })
        );
        let mut ns = DiskSim::new(1);
        let Parsed::Request(r) = ns.parse(b"11413000\t0\t657728\t16\t1").expect("valid") else {
            panic!("a request")
        };
        assert_eq!((r.time_ns, r.op), (11_413_000, Op::Read));
        assert_eq!(ns.parse(b"1 0 5 16").expect_err("short").field, "line");
        assert_eq!(ns.parse(b"1 0 5 16 x").expect_err("flags").field, "flags");
    }
}
