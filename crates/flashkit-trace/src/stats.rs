//! Summaries of a request stream: counts and bytes by operation, a request-size histogram,
//! address span and footprint (distinct pages touched), time span and per-volume counts.

use crate::{Op, Request};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Requests and bytes of one operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpTotals {
    /// Requests.
    pub requests: u64,
    /// Bytes addressed.
    pub bytes: u64,
}

/// One bar of the size histogram: requests with `size <= upto_bytes` (and above the
/// previous bar); the last bar has no upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Upper bound in bytes, or `None` for the open last bucket.
    pub upto_bytes: Option<u64>,
    /// Requests in the bucket.
    pub requests: u64,
}

/// The summary of a trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSummary {
    /// All requests.
    pub requests: u64,
    /// By operation.
    pub reads: OpTotals,
    /// Writes.
    pub writes: OpTotals,
    /// Trims.
    pub trims: OpTotals,
    /// Flushes.
    pub flushes: OpTotals,
    /// Requests of zero bytes (other than flushes).
    pub zero_length: u64,
    /// Reads among reads and writes, by request count (0 when there are neither).
    pub read_fraction: f64,
    /// Request sizes, in power-of-two buckets from 512 B to 1 MiB.
    pub size_histogram: Vec<SizeBucket>,
    /// Lowest byte addressed.
    pub min_offset: u64,
    /// One past the highest byte addressed.
    pub max_end: u64,
    /// Distinct pages touched by reads, writes and trims.
    pub footprint_pages: u64,
    /// Page size used for the footprint.
    pub footprint_page_bytes: u32,
    /// Earliest timestamp.
    pub first_time_ns: u64,
    /// Latest timestamp.
    pub last_time_ns: u64,
    /// Requests whose timestamp is earlier than the one before.
    pub out_of_order: u64,
    /// Per volume (ASU, LUN, disk, device or file, as the format numbers them).
    pub volumes: BTreeMap<u16, VolumeSummary>,
}

/// The figures of one volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VolumeSummary {
    /// All requests of the volume.
    pub requests: u64,
    /// Reads.
    pub reads: OpTotals,
    /// Writes.
    pub writes: OpTotals,
    /// Trims.
    pub trims: OpTotals,
    /// One past the highest byte addressed.
    pub max_end: u64,
    /// Distinct pages touched.
    pub footprint_pages: u64,
}

impl OpTotals {
    fn add(&mut self, size: u32) {
        self.requests += 1;
        self.bytes += u64::from(size);
    }
}

const FIRST_BUCKET: u64 = 512;
const BUCKETS: usize = 13; // 512 B .. 1 MiB, then "larger"
const CHUNK_PAGES: u64 = 4096;

/// Accumulates a [`TraceSummary`] one request at a time, in memory proportional to the
/// footprint (one bit per page touched, in 512-byte chunks of 4096 pages).
pub struct TraceStats {
    page_bytes: u32,
    totals: [OpTotals; 4],
    zero_length: u64,
    histogram: [u64; BUCKETS],
    min_offset: u64,
    max_end: u64,
    first_time: u64,
    last_time: u64,
    previous_time: u64,
    out_of_order: u64,
    volumes: BTreeMap<u16, VolumeSummary>,
    /// Pages touched, one bit each, in chunks keyed by (volume, page / CHUNK_PAGES).
    touched: HashMap<(u16, u64), Box<[u64; 64]>>,
}

impl TraceStats {
    /// Start a summary that counts the footprint in pages of `page_bytes`.
    pub fn new(page_bytes: u32) -> Self {
        assert!(page_bytes > 0, "page size must be positive");
        TraceStats {
            page_bytes,
            totals: [OpTotals::default(); 4],
            zero_length: 0,
            histogram: [0; BUCKETS],
            min_offset: u64::MAX,
            max_end: 0,
            first_time: u64::MAX,
            last_time: 0,
            previous_time: 0,
            out_of_order: 0,
            volumes: BTreeMap::new(),
            touched: HashMap::new(),
        }
    }

    /// Count one request.
    pub fn add(&mut self, r: &Request) {
        let totals = &mut self.totals[usize::from(r.op.code())];
        totals.requests += 1;
        totals.bytes += u64::from(r.size);
        let volume = self.volumes.entry(r.volume).or_default();
        volume.requests += 1;
        match r.op {
            Op::Read => volume.reads.add(r.size),
            Op::Write => volume.writes.add(r.size),
            Op::Trim => volume.trims.add(r.size),
            Op::Flush => {}
        }
        if r.op != Op::Flush {
            volume.max_end = volume.max_end.max(r.end());
        }
        self.first_time = self.first_time.min(r.time_ns);
        self.last_time = self.last_time.max(r.time_ns);
        if r.time_ns < self.previous_time {
            self.out_of_order += 1;
        }
        self.previous_time = r.time_ns;
        if r.op == Op::Flush {
            return;
        }
        if r.size == 0 {
            self.zero_length += 1;
            return;
        }
        let bucket = (0..BUCKETS - 1)
            .find(|&b| u64::from(r.size) <= FIRST_BUCKET << b)
            .unwrap_or(BUCKETS - 1);
        self.histogram[bucket] += 1;
        self.min_offset = self.min_offset.min(r.offset);
        self.max_end = self.max_end.max(r.end());
        let page = u64::from(self.page_bytes);
        for p in r.offset / page..r.end().div_ceil(page) {
            let chunk = self
                .touched
                .entry((r.volume, p / CHUNK_PAGES))
                .or_insert_with(|| Box::new([0; 64]));
            let bit = p % CHUNK_PAGES;
            chunk[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }

    /// The summary so far.
    pub fn summary(&self) -> TraceSummary {
        let [reads, writes, trims, flushes] = self.totals;
        let rw = reads.requests + writes.requests;
        let size_histogram = self
            .histogram
            .iter()
            .enumerate()
            .map(|(b, &requests)| SizeBucket {
                upto_bytes: (b < BUCKETS - 1).then(|| FIRST_BUCKET << b),
                requests,
            })
            .collect();
        let mut volumes = self.volumes.clone();
        let mut footprint_pages = 0;
        for (&(volume, _), chunk) in &self.touched {
            let pages: u64 = chunk.iter().map(|w| u64::from(w.count_ones())).sum();
            footprint_pages += pages;
            if let Some(v) = volumes.get_mut(&volume) {
                v.footprint_pages += pages;
            }
        }
        let requests = self.totals.iter().map(|t| t.requests).sum();
        TraceSummary {
            requests,
            reads,
            writes,
            trims,
            flushes,
            zero_length: self.zero_length,
            read_fraction: if rw == 0 {
                0.0
            } else {
                reads.requests as f64 / rw as f64
            },
            size_histogram,
            min_offset: if self.max_end == 0 {
                0
            } else {
                self.min_offset
            },
            max_end: self.max_end,
            footprint_pages,
            footprint_page_bytes: self.page_bytes,
            first_time_ns: if requests == 0 { 0 } else { self.first_time },
            last_time_ns: self.last_time,
            out_of_order: self.out_of_order,
            volumes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Op, offset: u64, size: u32, time_ns: u64) -> Request {
        Request {
            time_ns,
            op,
            offset,
            size,
            volume: 0,
        }
    }

    #[test]
    fn counts_bytes_span_footprint_and_order() {
        let mut stats = TraceStats::new(4096);
        stats.add(&req(Op::Write, 0, 8192, 10));
        stats.add(&req(Op::Write, 4096, 4096, 20));
        stats.add(&req(Op::Read, 1 << 20, 512, 15));
        stats.add(&req(Op::Trim, 1 << 30, 4096, 30));
        stats.add(&req(Op::Write, 0, 0, 40));
        stats.add(&req(Op::Flush, 0, 0, 50));
        let s = stats.summary();
        assert_eq!(s.requests, 6);
        assert_eq!(
            s.writes,
            OpTotals {
                requests: 3,
                bytes: 12288
            }
        );
        assert_eq!(s.reads.requests, 1);
        assert_eq!(s.zero_length, 1);
        assert_eq!((s.min_offset, s.max_end), (0, (1 << 30) + 4096));
        assert_eq!(s.footprint_pages, 4, "pages 0, 1, 256 and 262144");
        assert_eq!(s.out_of_order, 1);
        assert_eq!((s.first_time_ns, s.last_time_ns), (10, 50));
        assert_eq!(
            s.size_histogram[0],
            SizeBucket {
                upto_bytes: Some(512),
                requests: 1
            }
        );
        assert_eq!(
            s.size_histogram[3].requests, 2,
            "4 KiB bucket: a write and a trim"
        );
        assert_eq!(s.size_histogram[4].requests, 1, "8 KiB bucket");
        assert!((s.read_fraction - 0.25).abs() < 1e-9);
        assert_eq!(s.volumes[&0].footprint_pages, 4);
        assert_eq!(s.volumes[&0].writes.bytes, 12288);
    }

    #[test]
    fn volumes_are_separate_address_spaces_even_at_absurd_offsets() {
        let mut stats = TraceStats::new(4096);
        let far = 1u64 << 62;
        stats.add(&Request {
            volume: 0,
            ..req(Op::Write, far, 4096, 0)
        });
        stats.add(&Request {
            volume: 1,
            ..req(Op::Write, far, 4096, 0)
        });
        stats.add(&Request {
            volume: 1,
            ..req(Op::Read, 0, 8192, 0)
        });
        let s = stats.summary();
        assert_eq!(
            s.footprint_pages, 4,
            "the same address in two volumes is two pages"
        );
        assert_eq!(s.volumes[&1].footprint_pages, 3);
        assert_eq!(
            s.volumes[&1].reads,
            OpTotals {
                requests: 1,
                bytes: 8192
            }
        );
        assert_eq!(s.volumes[&0].max_end, far + 4096);
    }

    /// Each volume's figures, request count included (flushes count as requests but
    /// address nothing).
    #[test]
    fn each_volume_has_its_own_figures() {
        let mut stats = TraceStats::new(4096);
        let on = |volume: u16, r: Request| Request { volume, ..r };
        stats.add(&on(2, req(Op::Write, 8192, 4096, 0)));
        stats.add(&on(2, req(Op::Read, 0, 512, 1)));
        stats.add(&on(2, req(Op::Flush, 0, 0, 2)));
        stats.add(&on(5, req(Op::Trim, 4096, 8192, 3)));
        let s = stats.summary();
        assert_eq!(s.volumes.keys().copied().collect::<Vec<_>>(), [2, 5]);
        assert_eq!(
            s.volumes[&2],
            VolumeSummary {
                requests: 3,
                reads: OpTotals {
                    requests: 1,
                    bytes: 512
                },
                writes: OpTotals {
                    requests: 1,
                    bytes: 4096
                },
                trims: OpTotals::default(),
                max_end: 12288,
                footprint_pages: 2,
            }
        );
        assert_eq!(
            s.volumes[&5],
            VolumeSummary {
                requests: 1,
                trims: OpTotals {
                    requests: 1,
                    bytes: 8192
                },
                max_end: 12288,
                footprint_pages: 2,
                ..VolumeSummary::default()
            }
        );
    }

    /// Requests at the same time are in order; only a time earlier than the one before
    /// counts.
    #[test]
    fn equal_times_are_in_order() {
        let mut stats = TraceStats::new(4096);
        for time in [5, 5, 7, 7, 6, 6] {
            stats.add(&req(Op::Write, 0, 4096, time));
        }
        assert_eq!(stats.summary().out_of_order, 1);
    }

    /// Size buckets from 512 B to 1 MiB by powers of two, each taking sizes up to and
    /// including its bound, then one open bucket for everything larger.
    #[test]
    fn the_size_histogram_bounds_are_inclusive_and_the_last_is_open() {
        let mut stats = TraceStats::new(4096);
        for size in [512, 513, 1024, 1 << 20, (1 << 20) + 512, 2 << 20, 4 << 20] {
            stats.add(&req(Op::Write, 0, size, 0));
        }
        let histogram = stats.summary().size_histogram;
        let bounds: Vec<Option<u64>> = histogram.iter().map(|b| b.upto_bytes).collect();
        let mut expected: Vec<Option<u64>> = (9..=20).map(|shift| Some(1u64 << shift)).collect();
        expected.push(None);
        assert_eq!(bounds, expected);
        let counts: Vec<u64> = histogram.iter().map(|b| b.requests).collect();
        assert_eq!(counts, [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3]);
    }

    /// Pages far apart are distinct even when their numbers agree in the low bits: with
    /// 1-byte pages, bytes 5 and 5 + 2^52 are two pages.
    #[test]
    fn far_pages_with_equal_low_bits_are_distinct() {
        let mut stats = TraceStats::new(1);
        stats.add(&req(Op::Write, 5, 1, 0));
        stats.add(&req(Op::Write, 5 + (1 << 52), 1, 1));
        stats.add(&req(Op::Write, 5, 1, 2));
        assert_eq!(stats.summary().footprint_pages, 2);
    }

    /// With nothing addressed the span is 0..0 and the times 0; otherwise the span starts
    /// at the lowest offset, not at 0.
    #[test]
    fn the_address_span_starts_at_the_lowest_offset() {
        let empty = TraceStats::new(4096).summary();
        assert_eq!(
            (
                empty.min_offset,
                empty.max_end,
                empty.first_time_ns,
                empty.last_time_ns
            ),
            (0, 0, 0, 0)
        );
        let mut flushes = TraceStats::new(4096);
        flushes.add(&req(Op::Flush, 0, 0, 9));
        let s = flushes.summary();
        assert_eq!((s.min_offset, s.max_end, s.first_time_ns), (0, 0, 9));
        let mut stats = TraceStats::new(4096);
        stats.add(&req(Op::Write, 1 << 20, 4096, 3));
        stats.add(&req(Op::Read, 8192, 512, 4));
        let s = stats.summary();
        assert_eq!((s.min_offset, s.max_end), (8192, (1 << 20) + 4096));
    }
}
