//! A mapping without an FTL: the VET paper's own setting (Suh et al., JSA 2014, section 6),
//! for address spaces too large to model a device for (Fig. 16 goes to 1 TB).
//!
//! Writes land on a log that never wraps: physical pages are handed out in order and a write
//! is split where it crosses an erase block, as the page FTL splits it, but nothing is ever
//! collected, so no extent is split by garbage collection. Reads and trims go to the mapping
//! as they would from the page FTL behind the host: a trim discards only the pages it covers
//! entirely, and a request of no bytes is skipped. What it is not: a flash model; it measures mapping
//! memory only, which depends on the logical extents and the block boundaries alone.

use crate::SimError;
use flashkit_core::{Lpn, PageRange, Ppn};
use flashkit_ftl::Mapping;
use flashkit_trace::{Op, RequestResult};

/// What a mapping-only replay did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MappingOnlyReport {
    /// Write requests applied.
    pub writes: u64,
    /// Read requests translated.
    pub reads: u64,
    /// Pages written.
    pub pages_written: u64,
}

/// Apply `requests` to `mapping` over `logical_pages` pages of `page_bytes`, with physical
/// pages from an endless log of `pages_per_block`-page blocks.
pub fn replay_mapping_only<M: Mapping>(
    mapping: &mut M,
    requests: impl Iterator<Item = RequestResult>,
    logical_pages: u32,
    page_bytes: u32,
    pages_per_block: u32,
) -> Result<MappingOnlyReport, SimError> {
    let mut report = MappingOnlyReport::default();
    let mut next = 0u64;
    for (index, request) in requests.enumerate() {
        let request = request?;
        let first = request.offset / u64::from(page_bytes);
        let end = (request.offset + u64::from(request.size)).div_ceil(u64::from(page_bytes));
        if end > u64::from(logical_pages) {
            return Err(SimError::OutOfRange {
                index: index as u64,
                op: request.op,
                offset: request.offset,
                size: request.size,
                capacity_bytes: u64::from(logical_pages) * u64::from(page_bytes),
            });
        }
        if request.size == 0 {
            // Moves no data: the host counts it and skips it.
            continue;
        }
        let range = PageRange::new(Lpn(first as u32), (end - first) as u32);
        match request.op {
            Op::Write => {
                report.writes += 1;
                report.pages_written += u64::from(range.count);
                let (mut lpn, mut left) = (range.start.0, range.count);
                while left > 0 {
                    let room = pages_per_block - (next % u64::from(pages_per_block)) as u32;
                    let count = left.min(room);
                    let ppn = Ppn((next % (1 << 31)) as u32);
                    mapping.update(Lpn(lpn), ppn, count, &mut |_| {});
                    next += u64::from(count);
                    lpn += count;
                    left -= count;
                }
            }
            Op::Read => {
                report.reads += 1;
                mapping.translate(range, &mut |_| {});
            }
            Op::Trim => {
                // Only pages the trim covers entirely, as the host sends them.
                if let Some(whole) = crate::host::whole_pages(&request, u64::from(page_bytes)) {
                    mapping.remove(whole, &mut |_| {});
                }
            }
            Op::Flush => {}
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::{Emt, InsertScheme, Pf, Vet};
    use flashkit_trace::Request;

    fn write(offset: u64, size: u32) -> RequestResult {
        Ok(Request {
            time_ns: 0,
            op: Op::Write,
            offset,
            size,
            volume: 0,
        })
    }

    #[test]
    fn a_write_across_a_block_boundary_becomes_two_extents() {
        let mut emt = Emt::new(1024);
        let requests = vec![write(0, 4096 * 6), write(4096 * 100, 4096 * 4)];
        let report =
            replay_mapping_only(&mut emt, requests.into_iter(), 1024, 4096, 8).expect("replays");
        assert_eq!(report.pages_written, 10);
        // Pages 0..6 at 0..6; pages 100..102 at 6..8, then 102..104 in the next block.
        assert_eq!(emt.extents(), 3);
        assert_eq!(emt.lookup(Lpn(103)), Some(Ppn(9)));
        let mut vet = Vet::<Pf>::new(1024, InsertScheme::Bis);
        let requests = vec![write(0, 4096 * 6), write(4096 * 100, 4096 * 4)];
        replay_mapping_only(&mut vet, requests.into_iter(), 1024, 4096, 8).expect("replays");
        assert_eq!(vet.lookup(Lpn(103)), Some(Ppn(9)));
    }

    #[test]
    fn a_request_beyond_the_space_is_an_error() {
        let mut emt = Emt::new(16);
        let error = replay_mapping_only(
            &mut emt,
            vec![write(4096 * 15, 8192)].into_iter(),
            16,
            4096,
            8,
        )
        .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "request 0 (write of 8192 B at byte 61440) reaches beyond the device's logical \
             capacity of 65536 B; use a larger --capacity"
        );
    }

    /// A trim discards only the pages it covers entirely, as the host's does; requests of
    /// no bytes are skipped, whatever their kind.
    #[test]
    fn trims_discard_whole_pages_and_empty_requests_are_skipped() {
        let mut emt = Emt::new(16);
        let request = |op, offset, size| {
            Ok(Request {
                op,
                ..write(offset, size).expect("a request")
            })
        };
        let requests = vec![
            write(0, 4096 * 4),
            request(Op::Trim, 2048, 8192),
            request(Op::Trim, 4096 * 3 + 1, 100),
            // Ends on a page boundary, starts inside the page before it: no whole page.
            request(Op::Trim, 4096 * 3 - 100, 100),
            request(Op::Trim, 4096 * 2, 0),
            request(Op::Read, 0, 0),
            write(4096, 0),
        ];
        let report =
            replay_mapping_only(&mut emt, requests.into_iter(), 16, 4096, 8).expect("replays");
        assert_eq!(
            (report.writes, report.reads, report.pages_written),
            (1, 0, 4)
        );
        let mapped: Vec<bool> = (0..4).map(|p| emt.lookup(Lpn(p)).is_some()).collect();
        assert_eq!(
            mapped,
            [true, false, true, true],
            "only page 1 is covered entirely"
        );
    }

    /// Every request counted by kind, pages by writes; a write ending on the last logical
    /// page is inside the space.
    #[test]
    fn requests_and_pages_are_counted_to_the_last_page() {
        let mut emt = Emt::new(16);
        let read = |offset, size| {
            Ok(Request {
                op: Op::Read,
                ..write(offset, size).expect("a request")
            })
        };
        let requests = vec![
            write(0, 4096),
            read(0, 4096),
            write(4096 * 14, 8192),
            read(4096 * 15, 4096),
            write(4096 * 3, 4096 * 3),
        ];
        let report =
            replay_mapping_only(&mut emt, requests.into_iter(), 16, 4096, 8).expect("replays");
        assert_eq!(
            report,
            MappingOnlyReport {
                writes: 3,
                reads: 2,
                pages_written: 6,
            }
        );
        assert_eq!(emt.lookup(Lpn(15)), Some(Ppn(2)));
    }
}
