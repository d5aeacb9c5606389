//! FIU IODedup traces (Koller and Rangaswami, "I/O Deduplication", FAST 2010; SNIA IOTTA):
//! space separated `ts pid process lba size rw major minor md5`.
//!
//! `ts` is nanoseconds on a relative clock; `lba` and `size` are 512-byte sectors; `rw` is
//! `R` or `W`. The device (`major minor`) becomes the volume, numbered in order of first
//! appearance. The fields after the process name are read from the end of the line, so a
//! process name containing spaces is still parsed correctly.

use super::fields::{FieldError, check_end, number, scaled, size_u32, split_ws};
use super::{DeviceMap, Parsed, SECTOR_BYTES};
use crate::{Op, Request};

const MAX_FIELDS: usize = 24;

/// The FIU parser.
#[derive(Default)]
pub struct Fiu {
    pub(crate) devices: DeviceMap,
}

impl Fiu {
    #[inline]
    pub(crate) fn parse(&mut self, line: &[u8]) -> Result<Parsed, FieldError> {
        let mut f = [&b""[..]; MAX_FIELDS];
        let n = split_ws(line, &mut f);
        if !(9..=MAX_FIELDS).contains(&n) {
            return Err(FieldError::new(
                "line",
                format!(
                    "{n} space-separated fields; FIU rows have 9 \
                     (ts pid process lba size rw major minor md5)"
                ),
            ));
        }
        let time_ns = number("ts", f[0])?;
        number("pid", f[1])?;
        let tail = &f[n - 6..n];
        let offset = scaled("lba", number("lba", tail[0])?, SECTOR_BYTES, tail[0])?;
        let sectors = number("size", tail[1])?;
        let size = size_u32(
            "size",
            scaled("size", sectors, SECTOR_BYTES, tail[1])?,
            tail[1],
        )?;
        let op = match tail[2] {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(FieldError::bad("rw", other, "R or W")),
        };
        let major = number("major", tail[3])?;
        let minor = number("minor", tail[4])?;
        check_end(offset, size, tail[0])?;
        let volume = self.devices.volume(major, minor, "major")?;
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
    fn parses_rows_and_numbers_devices_in_order() {
        let mut p = Fiu::default();
        let r = p
            .parse(b"89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba4")
            .expect("valid");
        assert_eq!(
            r,
            Parsed::Request(Request {
                time_ns: 89_966_522_969_723,
                op: Op::Write,
                offset: 18_579_576 * 512,
                size: 4096,
                volume: 0
            })
        );
        let Parsed::Request(r) = p.parse(b"5 1 kworker 0 8 R 8 16 abc").expect("valid") else {
            panic!("a request")
        };
        assert_eq!(r.volume, 1, "a second device");
        let Parsed::Request(r) = p
            .parse(b"6 1 my process name 0 8 R 6 0 abc")
            .expect("spaces in the process name")
        else {
            panic!("a request")
        };
        assert_eq!((r.volume, r.op), (0, Op::Read));
        assert_eq!(
            p.devices.names(),
            vec!["6,0".to_string(), "8,16".to_string()]
        );
    }

    #[test]
    fn refuses_bad_fields() {
        let mut p = Fiu::default();
        assert_eq!(p.parse(b"1 2 p 3 8 X 6 0 m").expect_err("rw").field, "rw");
        assert_eq!(p.parse(b"1 2 p 3 8 R 6").expect_err("short").field, "line");
        assert_eq!(p.parse(b"x 2 p 3 8 R 6 0 m").expect_err("ts").field, "ts");
    }
}
