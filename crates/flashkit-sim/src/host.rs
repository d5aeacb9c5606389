//! The host adapter: byte requests to page operations.

use crate::SimError;
use flashkit_core::{Lpn, PageRange};
use flashkit_ftl::{ReadOutcome, Simulated};
use flashkit_trace::{Op, Request};
use serde::Serialize;

/// What the host asked for and what it cost at the page interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostCounters {
    /// Read requests.
    pub read_requests: u64,
    /// Write requests.
    pub write_requests: u64,
    /// Trim requests.
    pub trim_requests: u64,
    /// Flush requests.
    pub flush_requests: u64,
    /// Requests of zero bytes, skipped (counted, never silently dropped).
    pub zero_length_requests: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes trimmed.
    pub trim_bytes: u64,
    /// Logical pages read (a partial page counts whole).
    pub pages_read: u64,
    /// Of those, pages that were mapped (and so read from flash).
    pub pages_read_mapped: u64,
    /// Logical pages written (a partial page counts whole).
    pub pages_written: u64,
    /// Logical pages trimmed (only pages a trim covers entirely).
    pub pages_trimmed: u64,
    /// Partial-page writes that read the old page first (read-modify-write).
    pub rmw_reads: u64,
}

impl HostCounters {
    /// Counts since an earlier snapshot.
    pub fn since(&self, earlier: &HostCounters) -> HostCounters {
        HostCounters {
            read_requests: self.read_requests - earlier.read_requests,
            write_requests: self.write_requests - earlier.write_requests,
            trim_requests: self.trim_requests - earlier.trim_requests,
            flush_requests: self.flush_requests - earlier.flush_requests,
            zero_length_requests: self.zero_length_requests - earlier.zero_length_requests,
            read_bytes: self.read_bytes - earlier.read_bytes,
            write_bytes: self.write_bytes - earlier.write_bytes,
            trim_bytes: self.trim_bytes - earlier.trim_bytes,
            pages_read: self.pages_read - earlier.pages_read,
            pages_read_mapped: self.pages_read_mapped - earlier.pages_read_mapped,
            pages_written: self.pages_written - earlier.pages_written,
            pages_trimmed: self.pages_trimmed - earlier.pages_trimmed,
            rmw_reads: self.rmw_reads - earlier.rmw_reads,
        }
    }
}

/// Drives an FTL with byte-addressed requests.
pub struct Host<F> {
    ftl: F,
    page_bytes: u64,
    /// log2 of the page size (a power of two): byte offsets become pages by shifting.
    page_shift: u32,
    capacity_bytes: u64,
    next_seq: u64,
    counters: HostCounters,
}

impl<F: Simulated> Host<F> {
    /// A host in front of `ftl`.
    pub fn new(ftl: F) -> Self {
        let geometry = *ftl.geometry();
        Host {
            ftl,
            page_bytes: u64::from(geometry.page_size_bytes()),
            page_shift: geometry.page_size_bytes().trailing_zeros(),
            capacity_bytes: geometry.logical_bytes(),
            next_seq: 1,
            counters: HostCounters::default(),
        }
    }

    /// The FTL.
    pub fn ftl(&self) -> &F {
        &self.ftl
    }

    /// The FTL, mutably (preconditioning writes through it directly).
    pub fn ftl_mut(&mut self) -> &mut F {
        &mut self.ftl
    }

    /// Take the FTL back.
    pub fn into_ftl(self) -> F {
        self.ftl
    }

    /// Counts so far.
    pub fn counters(&self) -> &HostCounters {
        &self.counters
    }

    /// Number the next host write.
    pub fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Hint that `request` comes soon: lets the FTL fetch its mapping entries ahead.
    #[inline]
    pub fn prefetch(&self, request: &Request) {
        if matches!(request.op, Op::Read | Op::Write)
            && request.size > 0
            && request.end() <= self.capacity_bytes
        {
            self.ftl.prefetch(self.pages_of(request));
        }
    }

    /// Submit request number `index`.
    #[inline]
    pub fn submit(&mut self, index: u64, request: &Request) -> Result<(), SimError> {
        if request.op == Op::Flush {
            self.counters.flush_requests += 1;
            return self
                .ftl
                .flush()
                .map_err(|error| SimError::Ftl { index, error });
        }
        if request.size == 0 {
            self.counters.zero_length_requests += 1;
            return Ok(());
        }
        if request.end() > self.capacity_bytes {
            return Err(SimError::OutOfRange {
                index,
                op: request.op,
                offset: request.offset,
                size: request.size,
                capacity_bytes: self.capacity_bytes,
            });
        }
        let range = self.pages_of(request);
        let wrap = |error| SimError::Ftl { index, error };
        match request.op {
            Op::Read => {
                self.counters.read_requests += 1;
                self.counters.read_bytes += u64::from(request.size);
                self.counters.pages_read += u64::from(range.count);
                let mut mapped = 0;
                self.ftl
                    .read(range, &mut |_, outcome| {
                        mapped += u64::from(outcome != ReadOutcome::Unmapped)
                    })
                    .map_err(wrap)?;
                self.counters.pages_read_mapped += mapped;
            }
            Op::Write => {
                self.counters.write_requests += 1;
                self.counters.write_bytes += u64::from(request.size);
                self.counters.pages_written += u64::from(range.count);
                self.read_partial_pages(request, range).map_err(wrap)?;
                let seq = self.next_seq();
                self.ftl.write(range, seq).map_err(wrap)?;
            }
            Op::Trim => {
                self.counters.trim_requests += 1;
                self.counters.trim_bytes += u64::from(request.size);
                // Only pages the trim covers entirely are discarded, as drives do.
                if let Some(whole) = whole_pages(request, self.page_bytes) {
                    self.counters.pages_trimmed += u64::from(whole.count);
                    self.ftl.trim(whole).map_err(wrap)?;
                }
            }
            Op::Flush => unreachable!("handled above"),
        }
        Ok(())
    }

    /// The pages a request touches, partial pages included. The request must fit the device.
    #[inline(always)]
    fn pages_of(&self, request: &Request) -> PageRange {
        let first = request.offset >> self.page_shift;
        let end = (request.end() + self.page_bytes - 1) >> self.page_shift;
        PageRange::new(Lpn(first as u32), (end - first) as u32)
    }

    /// A write that starts or ends inside a page must read that page first to merge the
    /// bytes it does not overwrite (only if the page holds data).
    fn read_partial_pages(
        &mut self,
        request: &Request,
        range: PageRange,
    ) -> Result<(), flashkit_ftl::FtlError> {
        let mask = self.page_bytes - 1;
        let head_partial = request.offset & mask != 0;
        let tail_partial = request.end() & mask != 0;
        if !head_partial && !tail_partial {
            return Ok(());
        }
        let last = Lpn(range.start.0 + range.count - 1);
        let mut partial = [None, None];
        if head_partial {
            partial[0] = Some(range.start);
        }
        if tail_partial && !(head_partial && last == range.start) {
            partial[1] = Some(last);
        }
        for lpn in partial.into_iter().flatten() {
            let mut mapped = false;
            self.ftl
                .read_for_merge(PageRange::one(lpn), &mut |_, outcome| {
                    mapped = outcome != ReadOutcome::Unmapped
                })?;
            self.counters.rmw_reads += u64::from(mapped);
        }
        Ok(())
    }
}

/// The pages `request` covers entirely, from the first page boundary at or after its start
/// to the last at or before its end; `None` when it covers no whole page. What a trim
/// discards, on the host and in a mapping-only replay alike.
pub(crate) fn whole_pages(request: &Request, page_bytes: u64) -> Option<PageRange> {
    let first = request.offset.div_ceil(page_bytes);
    let end = request.end() / page_bytes;
    (end > first).then(|| PageRange::new(Lpn(first as u32), (end - first) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::Geometry;
    use flashkit_device::{NandDevice, Stamps};
    use flashkit_ftl::{Ftl, Inspect, PageFtl, PageFtlConfig};

    /// 32 blocks of 16 pages of 4 KiB, 30% over-provisioned.
    fn geometry() -> Geometry {
        Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(16)
            .blocks(32)
            .over_provisioning(0.3)
            .build()
            .expect("valid")
    }

    fn host() -> Host<PageFtl<NandDevice<Stamps>, flashkit_ftl::PageTable>> {
        let device = NandDevice::<Stamps>::new(geometry());
        Host::new(PageFtl::with_page_table(device, PageFtlConfig::default()).expect("valid"))
    }

    fn req(op: Op, offset: u64, size: u32) -> Request {
        Request {
            time_ns: 0,
            op,
            offset,
            size,
            volume: 0,
        }
    }

    /// A measurement window subtracts every counter: each field of the earlier snapshot is
    /// taken off its own field (distinct values, so that a field subtracted from another, or
    /// added, shows).
    #[test]
    fn counters_since_an_earlier_snapshot_subtract_field_by_field() {
        let counts = |base: u64| HostCounters {
            read_requests: base + 1,
            write_requests: base + 2,
            trim_requests: base + 3,
            flush_requests: base + 4,
            zero_length_requests: base + 5,
            read_bytes: base + 6,
            write_bytes: base + 7,
            trim_bytes: base + 8,
            pages_read: base + 9,
            pages_read_mapped: base + 10,
            pages_written: base + 11,
            pages_trimmed: base + 12,
            rmw_reads: base + 13,
        };
        let earlier = counts(100);
        let now = HostCounters {
            read_requests: 201,
            write_requests: 302,
            trim_requests: 403,
            flush_requests: 504,
            zero_length_requests: 605,
            read_bytes: 706,
            write_bytes: 807,
            trim_bytes: 908,
            pages_read: 1009,
            pages_read_mapped: 1110,
            pages_written: 1211,
            pages_trimmed: 1312,
            rmw_reads: 1413,
        };
        let window = now.since(&earlier);
        assert_eq!(
            window,
            HostCounters {
                read_requests: 100,
                write_requests: 200,
                trim_requests: 300,
                flush_requests: 400,
                zero_length_requests: 500,
                read_bytes: 600,
                write_bytes: 700,
                trim_bytes: 800,
                pages_read: 900,
                pages_read_mapped: 1000,
                pages_written: 1100,
                pages_trimmed: 1200,
                rmw_reads: 1300,
            }
        );
        assert_eq!(now.since(&now), HostCounters::default());
    }

    #[test]
    fn flushes_and_empty_requests_are_counted_and_do_nothing_else() {
        let mut host = host();
        host.submit(0, &req(Op::Flush, 0, 0)).expect("flush");
        host.submit(1, &req(Op::Flush, 0, 0)).expect("flush");
        host.submit(2, &req(Op::Write, 0, 0)).expect("empty write");
        let c = *host.counters();
        assert_eq!((c.flush_requests, c.zero_length_requests), (2, 1));
        assert_eq!(
            HostCounters {
                flush_requests: 0,
                zero_length_requests: 0,
                ..c
            },
            HostCounters::default()
        );
    }

    #[test]
    fn partial_page_writes_read_modify_write_only_mapped_pages() {
        let mut host = host();
        host.submit(0, &req(Op::Write, 1024, 1024)).expect("write");
        assert_eq!(host.counters().pages_written, 1);
        assert_eq!(
            host.counters().rmw_reads,
            0,
            "the page held nothing to merge"
        );
        host.submit(1, &req(Op::Write, 2048, 8192)).expect("write");
        assert_eq!(host.counters().pages_written, 4);
        assert_eq!(
            host.counters().rmw_reads,
            1,
            "head page 0 was mapped; tail page 2 was not"
        );
        host.submit(2, &req(Op::Write, 4096, 4096))
            .expect("aligned write");
        assert_eq!(host.counters().rmw_reads, 1);
        let programs = host.ftl().device().counters().programs.host;
        assert_eq!(programs, 5);
        // A partial head alone, then a partial tail alone: each page merged.
        host.submit(3, &req(Op::Write, 4096 + 1024, 3072))
            .expect("head partial");
        assert_eq!(host.counters().rmw_reads, 2);
        host.submit(4, &req(Op::Write, 8192, 1024))
            .expect("tail partial");
        assert_eq!(host.counters().rmw_reads, 3);
    }

    /// Over mapped pages, every partial page a write touches is read once to merge: a
    /// page partial at both ends once, a head or a tail alone, both ends of a longer write,
    /// nothing for an aligned one.
    #[test]
    fn each_partial_page_of_a_write_is_merged_once() {
        for (offset, size, merges) in [
            (1024, 1024, 1),
            (1024, 2 * 4096, 2),
            (1024, 2 * 4096 - 1024, 1),
            (4096, 4096 + 100, 1),
            (4096, 2 * 4096, 0),
            (4095, 2, 2),
        ] {
            let mut host = host();
            host.submit(0, &req(Op::Write, 0, 8 * 4096)).expect("fill");
            host.submit(1, &req(Op::Write, offset, size))
                .expect("write");
            assert_eq!(
                host.counters().rmw_reads,
                merges,
                "{size} bytes at {offset}"
            );
        }
    }

    #[test]
    fn trims_discard_only_whole_pages_and_reads_count_mapped_pages() {
        let mut host = host();
        host.submit(0, &req(Op::Write, 0, 4 * 4096)).expect("write");
        host.submit(1, &req(Op::Trim, 2048, 8192)).expect("trim");
        assert_eq!(
            host.counters().pages_trimmed,
            1,
            "only page 1 is covered entirely"
        );
        host.submit(2, &req(Op::Read, 0, 4 * 4096)).expect("read");
        assert_eq!(host.counters().pages_read, 4);
        assert_eq!(host.counters().pages_read_mapped, 3);
        host.submit(3, &req(Op::Write, 0, 0)).expect("zero length");
        assert_eq!(host.counters().zero_length_requests, 1);
        // A trim inside one page discards nothing.
        host.submit(4, &req(Op::Trim, 4096 + 512, 1024))
            .expect("trim");
        assert_eq!(host.counters().pages_trimmed, 1);
        assert_eq!(host.counters().trim_requests, 2);
        // Bytes are counted as asked, partial pages and all.
        host.submit(5, &req(Op::Write, 100, 5000)).expect("write");
        host.submit(6, &req(Op::Read, 3, 7)).expect("read");
        let c = host.counters();
        assert_eq!(
            (c.write_bytes, c.read_bytes, c.trim_bytes),
            (4 * 4096 + 5000, 4 * 4096 + 7, 8192 + 1024)
        );
    }

    #[test]
    fn requests_beyond_the_device_are_errors_naming_the_request() {
        let mut host = host();
        let capacity = host.ftl().geometry().logical_bytes();
        let error = host
            .submit(41, &req(Op::Write, capacity - 4096, 8192))
            .expect_err("refused");
        let message = error.to_string();
        assert!(
            message.contains("request 41") && message.contains("capacity"),
            "{message}"
        );
    }

    /// Only reads and writes of at least a byte, inside the device, are hinted, one hint a
    /// request: the count is a figure `--mapping-times` reports.
    #[test]
    fn only_non_empty_reads_and_writes_inside_the_device_are_prefetched() {
        use crate::mapping_time::TimedMapping;
        let geometry = geometry();
        let mapping = TimedMapping::new(flashkit_ftl::PageTable::new(geometry.logical_pages()));
        let device = NandDevice::<Stamps>::new(geometry);
        let host =
            Host::new(PageFtl::new(device, mapping, PageFtlConfig::default()).expect("valid"));
        let capacity = host.capacity_bytes;
        let hinted = |host: &Host<_>| {
            let ftl: &PageFtl<NandDevice<Stamps>, TimedMapping<flashkit_ftl::PageTable>> =
                host.ftl();
            ftl.mapping().times().prefetch.summary().requests
        };
        for (request, hints) in [
            (req(Op::Write, 0, 8192), 1),
            (req(Op::Read, 4096, 512), 1),
            (req(Op::Read, capacity - 4096, 4096), 1),
            (req(Op::Trim, 0, 4096), 0),
            (req(Op::Flush, 0, 0), 0),
            (req(Op::Write, 4096, 0), 0),
            (req(Op::Read, 0, 0), 0),
            (req(Op::Write, capacity - 4096, 8192), 0),
            (req(Op::Read, capacity, 4096), 0),
        ] {
            let before = hinted(&host);
            host.prefetch(&request);
            assert_eq!(hinted(&host) - before, hints, "{request:?}");
        }
    }

    /// Host writes are numbered 1, 2, 3, ... (0 is no write): the numbers are the stamps
    /// reads check.
    #[test]
    fn host_writes_are_numbered_from_one_in_order() {
        let mut host = host();
        let numbers: Vec<u64> = (0..4).map(|_| host.next_seq()).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
    }
}
