//! Wall-clock time of the mapping calls themselves, measured around them (the VET paper's
//! Table 3 and Fig. 14 report it per read and per write request).
//!
//! [`TimedMapping`] decorates any [`Mapping`]: `PageFtl<D, TimedMapping<Vet>>` times exactly
//! the calls the page FTL makes into its mapping, and nothing the FTL does around them. A
//! translation's runs and an update's invalidated pages are collected into buffers while the
//! clock runs and handed to the FTL after it stops, so the device reads and block accounting
//! the FTL does in its callbacks are not counted as mapping time. A host read request and a
//! read-modify-write's read of a partial page are timed apart (`translate` and `merge`): the
//! paper times read requests, and a workload of sub-page writes has several of the second
//! kind for each of the first.
//!
//! What it is not: part of any model. The models never read a clock; this lives in the
//! simulation layer, and its figures never enter a deterministic report.
//!
//! Key decision: `std::time::Instant` (the vDSO clock) around each call, its own cost
//! measured by [`timer_overhead_ns`] and reported beside the figures rather than subtracted,
//! so that every figure is a measurement.

use crate::latency::{LatencyHistogram, LatencySummary};
use flashkit_core::{Lpn, PageRange, Ppn, StateHasher};
use flashkit_ftl::{
    Gauge, InvariantViolation, Mapping, MappingHints, MappingMemory, PhysRun, Purpose,
};
use serde::Serialize;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Instant;

/// Wall-clock nanoseconds per mapping call, by kind of call.
#[derive(Clone, Debug, Default)]
pub struct MappingTimes {
    /// Read translations (`translate`, one per host read request).
    pub translate: LatencyHistogram,
    /// Translations for a read-modify-write (`translate_for` a merge, one per page that a
    /// partial-page write must merge), kept apart from host reads: the paper times read
    /// requests, and a workload of sub-page writes (finance) makes several of these a read.
    pub merge: LatencyHistogram,
    /// Host write updates (`update`, one per run of a write inside one flash block).
    pub update: LatencyHistogram,
    /// Garbage-collection relocations (`relocate_batch`, one per chunk of at most 16 moved
    /// pages that land in one block).
    pub relocate: LatencyHistogram,
    /// Trims (`remove`).
    pub remove: LatencyHistogram,
    /// Prefetch hints (`prefetch_range`, one per request as it enters the replay's
    /// lookahead, [`flashkit_ftl::PREFETCH_PAGES`] pages at most): work a mapping does for
    /// a request before its call, kept apart so that it is counted rather than hidden.
    pub prefetch: LatencyHistogram,
}

/// The summary of [`MappingTimes`] that goes into a table or a JSON file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MappingTimeSummary {
    /// Read translations.
    pub translate: LatencySummary,
    /// Read-modify-write translations.
    pub merge: LatencySummary,
    /// Host write updates.
    pub update: LatencySummary,
    /// GC relocations.
    pub relocate: LatencySummary,
    /// Trims.
    pub remove: LatencySummary,
    /// Prefetch hints, one per request.
    pub prefetch: LatencySummary,
    /// What one empty measurement costs on this machine (two clock reads), median ns.
    pub timer_overhead_ns: f64,
}

impl MappingTimes {
    /// The summary, with the timer's own cost measured now. Read translations and write
    /// updates keep their histograms (the distributions of the paper's Figs. 10 and 11); the
    /// other kinds keep only their figures.
    pub fn summary(&self) -> MappingTimeSummary {
        let strip = |mut s: LatencySummary| {
            s.histogram.clear();
            s
        };
        MappingTimeSummary {
            translate: self.translate.summary(),
            merge: strip(self.merge.summary()),
            update: self.update.summary(),
            relocate: strip(self.relocate.summary()),
            remove: strip(self.remove.summary()),
            prefetch: strip(self.prefetch.summary()),
            timer_overhead_ns: timer_overhead_ns(),
        }
    }
}

/// The median cost of one empty measurement (two `Instant` reads), in nanoseconds.
pub fn timer_overhead_ns() -> f64 {
    let mut samples: Vec<u64> = (0..20_001)
        .map(|_| {
            let start = Instant::now();
            start.elapsed().as_nanos() as u64
        })
        .collect();
    median(&mut samples) as f64
}

/// The middle of `samples` once sorted (the upper middle of an even count); 0 for none.
fn median(samples: &mut [u64]) -> u64 {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or(0)
}

/// A mapping whose calls are timed.
#[derive(Debug)]
pub struct TimedMapping<M> {
    inner: M,
    times: RefCell<MappingTimes>,
    runs: RefCell<Vec<PhysRun>>,
    dropped: Vec<Ppn>,
}

impl<M: Mapping> TimedMapping<M> {
    /// Time the calls into `inner`.
    pub fn new(inner: M) -> Self {
        TimedMapping {
            inner,
            times: RefCell::new(MappingTimes::default()),
            runs: RefCell::new(Vec::with_capacity(64)),
            dropped: Vec::with_capacity(256),
        }
    }

    /// The mapping being timed.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The times so far.
    pub fn times(&self) -> MappingTimes {
        self.times.borrow().clone()
    }

    /// Time `translate`, which collects a translation's runs, into the histogram `kind`
    /// picks; then hand the runs to `out`, with the clock stopped.
    #[inline(always)]
    fn timed_runs(
        &self,
        kind: fn(&mut MappingTimes) -> &mut LatencyHistogram,
        translate: impl FnOnce(&mut Vec<PhysRun>),
        out: &mut impl FnMut(PhysRun),
    ) {
        let mut runs = self.runs.borrow_mut();
        runs.clear();
        let start = Instant::now();
        translate(&mut runs);
        let ns = elapsed_ns(start);
        kind(&mut self.times.borrow_mut()).record(ns);
        for &run in runs.iter() {
            out(run);
        }
    }

    /// Forget the times so far (after preconditioning, say).
    pub fn reset(&self) {
        *self.times.borrow_mut() = MappingTimes::default();
    }
}

#[inline(always)]
fn elapsed_ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

impl<M: Mapping> MappingHints for TimedMapping<M> {
    // Batches for every mapping, so that a relocation is timed per batch whatever the
    // mapping (the page table's default `relocate_batch` loops over its pages).
    const RELOCATES_RUNS: bool = true;
    const LOOKUP_SEARCHES: bool = M::LOOKUP_SEARCHES;

    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.inner.prefetch(lpn);
    }

    fn prefetch_range(&self, range: PageRange) {
        let clock = Instant::now();
        self.inner.prefetch_range(range);
        let ns = elapsed_ns(clock);
        self.times.borrow_mut().prefetch.record(ns);
    }
}

impl<M: Mapping> Mapping for TimedMapping<M> {
    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        self.inner.lookup(lpn)
    }

    #[inline]
    fn maps_to(&self, lpn: Lpn, ppn: Ppn) -> bool {
        self.inner.maps_to(lpn, ppn)
    }

    fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun)) {
        self.timed_runs(
            |times| &mut times.translate,
            |runs| self.inner.translate(range, &mut |run| runs.push(run)),
            out,
        );
    }

    fn translate_for(&self, purpose: Purpose, range: PageRange, out: &mut impl FnMut(PhysRun)) {
        match purpose {
            Purpose::Read => self.translate(range, out),
            Purpose::Merge => self.timed_runs(
                |times| &mut times.merge,
                |runs| {
                    self.inner
                        .translate_for(purpose, range, &mut |run| runs.push(run))
                },
                out,
            ),
        }
    }

    fn update(&mut self, start: Lpn, ppn: Ppn, len: u32, invalidated: &mut impl FnMut(Ppn)) {
        self.dropped.clear();
        let dropped = &mut self.dropped;
        let clock = Instant::now();
        self.inner
            .update(start, ppn, len, &mut |old| dropped.push(old));
        let ns = elapsed_ns(clock);
        self.times.get_mut().update.record(ns);
        for &old in &self.dropped {
            invalidated(old);
        }
    }

    fn relocate(&mut self, lpn: Lpn, from: Ppn, to: Ppn) {
        let clock = Instant::now();
        self.inner.relocate(lpn, from, to);
        let ns = elapsed_ns(clock);
        self.times.get_mut().relocate.record(ns);
    }

    fn relocate_batch(&mut self, moved: &[(Lpn, Ppn)], to: Ppn, preceding: Option<Lpn>) {
        let clock = Instant::now();
        self.inner.relocate_batch(moved, to, preceding);
        let ns = elapsed_ns(clock);
        self.times.get_mut().relocate.record(ns);
    }

    fn remove(&mut self, range: PageRange, invalidated: &mut impl FnMut(Ppn)) {
        self.dropped.clear();
        let dropped = &mut self.dropped;
        let clock = Instant::now();
        self.inner.remove(range, &mut |old| dropped.push(old));
        let ns = elapsed_ns(clock);
        self.times.get_mut().remove.record(ns);
        for &old in &self.dropped {
            invalidated(old);
        }
    }

    fn mapped_pages(&self) -> u64 {
        self.inner.mapped_pages()
    }

    fn memory(&self) -> MappingMemory {
        self.inner.memory()
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        self.inner.hash_state(hasher);
    }

    fn extra_stats(&self, extra: &mut BTreeMap<Gauge, f64>) {
        self.inner.extra_stats(extra);
    }

    fn check_structure(&self) -> Result<(), InvariantViolation> {
        self.inner.check_structure()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::{Emt, PageTable};

    #[test]
    fn timed_calls_pass_results_through_and_count_each_call() {
        let mut plain = PageTable::new(64);
        let mut timed = TimedMapping::new(Emt::new(64));
        for (start, len, ppn) in [(0, 10, 100), (5, 3, 200), (20, 4, 300)] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            plain.update(Lpn(start), Ppn(ppn), len, &mut |p| a.push(p));
            timed.update(Lpn(start), Ppn(ppn), len, &mut |p| b.push(p));
            assert_eq!(a, b);
        }
        let mut pages = Vec::new();
        timed.translate(PageRange::new(Lpn(0), 30), &mut |run| pages.push(run));
        assert_eq!(pages.iter().map(|r| r.len).sum::<u32>(), 30);
        let mut merged = Vec::new();
        timed.translate_for(Purpose::Merge, PageRange::one(Lpn(6)), &mut |run| {
            merged.push(run)
        });
        assert_eq!(
            merged,
            [PhysRun {
                lpn: Lpn(6),
                ppn: Some(Ppn(201)),
                len: 1
            }]
        );
        assert_eq!(timed.lookup(Lpn(6)), plain.lookup(Lpn(6)));
        let times = timed.times();
        assert_eq!(times.update.summary().requests, 3);
        assert_eq!(
            times.translate.summary().requests,
            1,
            "a merge is not a host read"
        );
        assert_eq!(times.merge.summary().requests, 1);
    }

    /// Every call reaches the mapping inside, in lock-step with an untimed twin: the same
    /// pages dropped, the same lookups, counts, memory, state hash and gauges after each
    /// call; each kind of call timed once per call, and a large call's time is a time.
    #[test]
    fn a_timed_mapping_is_the_mapping_inside_call_for_call() {
        let mut plain = Emt::new(512);
        let mut timed = TimedMapping::new(Emt::new(512));
        let mut next_ppn = 0u32;
        let mut relocations = 0;
        let compare = |plain: &Emt, timed: &TimedMapping<Emt>, step: u32| {
            for lpn in (0..512).map(Lpn) {
                assert_eq!(timed.lookup(lpn), plain.lookup(lpn), "step {step}: {lpn}");
            }
            assert_eq!(timed.mapped_pages(), plain.mapped_pages(), "step {step}");
            assert_eq!(timed.memory(), plain.memory(), "step {step}");
            let hash = |m: &dyn Fn(&mut StateHasher)| {
                let mut h = StateHasher::new();
                m(&mut h);
                h.finish()
            };
            assert_eq!(
                hash(&|h| timed.hash_state(h)),
                hash(&|h| plain.hash_state(h)),
                "step {step}"
            );
            let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
            timed.extra_stats(&mut a);
            plain.extra_stats(&mut b);
            assert_eq!(a, b, "step {step}");
            assert!(!a.is_empty());
            timed.check_structure().expect("consistent");
        };
        for step in 0..300u32 {
            let start = Lpn(step.wrapping_mul(7919) % 480);
            let len = 1 + step % 29;
            let (mut a, mut b) = (Vec::new(), Vec::new());
            match step % 4 {
                0 | 1 => {
                    plain.update(start, Ppn(next_ppn), len, &mut |p| a.push(p));
                    timed.update(start, Ppn(next_ppn), len, &mut |p| b.push(p));
                    next_ppn += len;
                }
                2 => {
                    plain.remove(PageRange::new(start, 1 + len % 5), &mut |p| a.push(p));
                    timed.remove(PageRange::new(start, 1 + len % 5), &mut |p| b.push(p));
                }
                _ => {
                    let moved: Vec<(Lpn, Ppn)> = (start.0..start.0 + len)
                        .filter_map(|l| plain.lookup(Lpn(l)).map(|p| (Lpn(l), p)))
                        .collect();
                    if let Some(&(lpn, from)) = moved.first() {
                        plain.relocate(lpn, from, Ppn(next_ppn));
                        timed.relocate(lpn, from, Ppn(next_ppn));
                        next_ppn += 1;
                        relocations += 1;
                    }
                    let rest: Vec<(Lpn, Ppn)> = moved.into_iter().skip(1).collect();
                    plain.relocate_batch(&rest, Ppn(next_ppn), None);
                    timed.relocate_batch(&rest, Ppn(next_ppn), None);
                    next_ppn += rest.len() as u32;
                    relocations += 1;
                }
            }
            assert_eq!(a, b, "step {step}: pages dropped");
            compare(&plain, &timed, step);
        }
        let times = timed.times();
        assert_eq!(times.update.summary().requests, 150);
        assert_eq!(times.remove.summary().requests, 75);
        assert_eq!(times.relocate.summary().requests, relocations);
        // A translation of 100,000 pages, a callback each, takes microseconds at least.
        let mut table = TimedMapping::new(PageTable::new(100_000));
        table.update(Lpn(0), Ppn(0), 100_000, &mut |_| {});
        let mut runs = 0;
        table.translate(PageRange::new(Lpn(0), 100_000), &mut |_| runs += 1);
        assert_eq!(runs, 100_000);
        assert!(table.times().translate.summary().max_ns > 1_000);
    }

    /// A mapping whose checker always refuses: the timed mapping's checker says so too.
    #[test]
    fn a_timed_mapping_checks_the_mapping_inside() {
        #[derive(Debug)]
        struct Broken(PageTable);
        impl MappingHints for Broken {}
        impl Mapping for Broken {
            fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
                self.0.lookup(lpn)
            }
            fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun)) {
                self.0.translate(range, out)
            }
            fn update(&mut self, s: Lpn, p: Ppn, len: u32, out: &mut impl FnMut(Ppn)) {
                self.0.update(s, p, len, out)
            }
            fn relocate(&mut self, lpn: Lpn, from: Ppn, to: Ppn) {
                self.0.relocate(lpn, from, to)
            }
            fn remove(&mut self, range: PageRange, out: &mut impl FnMut(Ppn)) {
                self.0.remove(range, out)
            }
            fn mapped_pages(&self) -> u64 {
                self.0.mapped_pages()
            }
            fn memory(&self) -> MappingMemory {
                self.0.memory()
            }
            fn hash_state(&self, hasher: &mut StateHasher) {
                self.0.hash_state(hasher)
            }
            fn check_structure(&self) -> Result<(), InvariantViolation> {
                Err(InvariantViolation("broken on purpose".into()))
            }
        }
        let timed = TimedMapping::new(Broken(PageTable::new(8)));
        let error = timed.check_structure().expect_err("refused");
        assert_eq!(error.0, "broken on purpose");
    }

    /// The summary carries each kind's own histogram: its count and figures, its buckets for
    /// read translations and write updates only; and a timer cost that was measured.
    #[test]
    fn a_summary_keeps_each_kind_and_the_two_distributions() {
        let mut times = MappingTimes::default();
        let kinds: [fn(&mut MappingTimes) -> &mut LatencyHistogram; 6] = [
            |t| &mut t.translate,
            |t| &mut t.merge,
            |t| &mut t.update,
            |t| &mut t.relocate,
            |t| &mut t.remove,
            |t| &mut t.prefetch,
        ];
        for (i, kind) in kinds.iter().enumerate() {
            for ns in 0..=i as u64 {
                kind(&mut times).record(100 * (ns + 1));
            }
        }
        let s = times.summary();
        let all = [
            &s.translate,
            &s.merge,
            &s.update,
            &s.relocate,
            &s.remove,
            &s.prefetch,
        ];
        for (i, summary) in all.iter().enumerate() {
            let full = kinds[i](&mut times).summary();
            assert_eq!(summary.requests, i as u64 + 1);
            assert_eq!(summary.max_ns, full.max_ns);
            assert_eq!(summary.mean_ns, full.mean_ns);
            let kept = i == 0 || i == 2;
            assert_eq!(
                summary.histogram,
                if kept { full.histogram } else { vec![] }
            );
        }
        assert!(s.timer_overhead_ns >= 0.0 && s.timer_overhead_ns.is_finite());
    }

    #[test]
    fn the_timer_cost_is_the_median_sample() {
        assert_eq!(median(&mut []), 0);
        assert_eq!(median(&mut [7]), 7);
        assert_eq!(median(&mut [9, 1, 5]), 5);
        assert_eq!(median(&mut [9, 1, 5, 3]), 5);
        assert_eq!(median(&mut [40, 30, 20, 10, 0]), 20);
    }
}
