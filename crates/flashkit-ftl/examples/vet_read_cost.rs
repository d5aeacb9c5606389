//! Where the time of a fragmented read goes in VET: cache misses or work.
//!
//! `cargo run --release -p flashkit-ftl --example vet_read_cost`
//!
//! A homes-like state (the homes workload of docs/reproduction/vet.md): 500,000 one-page
//! writes over 4.2 M pages (16 GiB of 4 KiB pages), 90% of them in a hot 5%, then 20,000
//! reads of 2 or 4 pages with the same skew, timed these ways:
//! - *between writes*: 40 writes before each read, as in the homes workload;
//! - *streamed*: the reads back to back, each at a new address;
//! - *clocked, hinted*: streamed, each read's pages hinted 16 reads ahead as the replay
//!   does (`MappingHints::prefetch_range`; the hints are outside the clock, as in the replay);
//! - *clocked, warm*: streamed, each read done once just before it is timed, so that
//!   nothing it touches misses the cache: what a clock around each call costs on its own;
//! - *loop*: the streamed reads again, the loop timed whole (no clock around each read);
//! - *prefetched*: the same loop with each read's pages hinted 16 reads ahead
//!   (`MappingHints::prefetch_range`, as the replay does), the hints' own work included;
//! - *repeated*: each read ten times in a row, so everything it touches is in the cache:
//!   what is left is the work of the walk itself.
//!
//! "VET BIS PF" is the default table (the cuckoo table, whose buckets a hint can fetch);
//! "swiss" is hashbrown's SwissTable, for which a hint does nothing.
//!
//! The page table does the same reads for comparison. Each figure is wall-clock nanoseconds
//! per read; in the first four columns `Instant` around the call is included (about 16-23
//! ns here). "clocked, warm" against "repeated" shows that a clock around each call costs
//! more than the timer's own 23 ns: its fences start every call with an empty pipeline.

use flashkit_core::{Lpn, PageRange, Ppn, SimRng, SimRngExt};
use flashkit_ftl::vet::{Fold, PfNode, Swiss};
use flashkit_ftl::{InsertScheme, Mapping, PageTable, Pf, Vet};
use rand::Rng;
use std::time::Instant;

const PAGES: u32 = 4_200_000;
/// How far ahead the replay hints requests (`flashkit_sim`'s lookahead).
const LOOKAHEAD: usize = 16;

fn address(rng: &mut SimRng) -> u32 {
    if rng.random_bool(0.9) {
        rng.random_range(0..PAGES / 20)
    } else {
        rng.random_range(0..PAGES - 8)
    }
}

/// The writes of the state: one page at a skewed address, at the next physical page.
struct Writer {
    rng: SimRng,
    next: u32,
}

impl Writer {
    fn write<M: Mapping>(&mut self, mapping: &mut M, sink: &mut u64) {
        let lpn = address(&mut self.rng);
        mapping.update(Lpn(lpn), Ppn(self.next), 1, &mut |p| {
            *sink += u64::from(p.0)
        });
        self.next += 1;
    }
}

fn read<M: Mapping>(mapping: &M, (lpn, len): (u32, u32), sink: &mut u64) {
    mapping.translate(PageRange::new(Lpn(lpn), len), &mut |r| {
        *sink += u64::from(r.len)
    });
}

/// Hint the read `LOOKAHEAD` reads after the `i`th, if there is one.
fn hint_ahead<M: Mapping>(mapping: &M, reads: &[(u32, u32)], i: usize) {
    if let Some(&(lpn, len)) = reads.get(i + LOOKAHEAD) {
        mapping.prefetch_range(PageRange::new(Lpn(lpn), len));
    }
}

/// Each read clocked: after 40 writes, streamed, hinted ahead, and warmed by a first read.
fn clocked<M: Mapping>(
    mapping: &mut M,
    writer: &mut Writer,
    reads: &[(u32, u32)],
    sink: &mut u64,
) -> (u128, u128, u128, u128) {
    let mut between = 0u128;
    for &r in reads {
        for _ in 0..40 {
            writer.write(mapping, sink);
        }
        let clock = Instant::now();
        read(mapping, r, sink);
        between += clock.elapsed().as_nanos();
    }
    let mut streamed = 0u128;
    for &r in reads {
        let clock = Instant::now();
        read(mapping, r, sink);
        streamed += clock.elapsed().as_nanos();
    }
    let mut clocked_hinted = 0u128;
    for (i, &r) in reads.iter().enumerate() {
        hint_ahead(mapping, reads, i);
        let clock = Instant::now();
        read(mapping, r, sink);
        clocked_hinted += clock.elapsed().as_nanos();
    }
    let mut clocked_warm = 0u128;
    for &r in reads {
        read(mapping, r, sink);
        let clock = Instant::now();
        read(mapping, r, sink);
        clocked_warm += clock.elapsed().as_nanos();
    }
    (between, streamed, clocked_hinted, clocked_warm)
}

/// The reads timed whole: hinted ahead, plain, then each ten times under one clock.
fn unclocked<M: Mapping>(mapping: &M, reads: &[(u32, u32)], sink: &mut u64) -> (u128, u128, u128) {
    // Each read's pages hinted 16 reads ahead (`prefetch_range`), the loop timed whole,
    // hints included, no clock around each read.
    let clock = Instant::now();
    for (i, &r) in reads.iter().enumerate() {
        hint_ahead(mapping, reads, i);
        read(mapping, r, sink);
    }
    let prefetched = clock.elapsed().as_nanos();
    let clock = Instant::now();
    for &r in reads {
        read(mapping, r, sink);
    }
    let loop_streamed = clock.elapsed().as_nanos();
    let mut repeated = 0u128;
    for &r in reads {
        let clock = Instant::now();
        for _ in 0..10 {
            read(mapping, r, sink);
        }
        repeated += clock.elapsed().as_nanos();
    }
    (prefetched, loop_streamed, repeated)
}

fn run<M: Mapping>(name: &str, mut mapping: M) {
    let mut writer = Writer {
        rng: SimRng::for_stream(1, "vet-read-cost"),
        next: 0,
    };
    let mut sink = 0u64;
    for _ in 0..500_000 {
        writer.write(&mut mapping, &mut sink);
    }
    let reads: Vec<(u32, u32)> = (0..20_000)
        .map(|_| {
            let len = if writer.rng.random_bool(0.5) { 2 } else { 4 };
            (address(&mut writer.rng), len)
        })
        .collect();
    let (between, streamed, clocked_hinted, clocked_warm) =
        clocked(&mut mapping, &mut writer, &reads, &mut sink);
    let (prefetched, loop_streamed, repeated) = unclocked(&mapping, &reads, &mut sink);
    std::hint::black_box(sink);
    let n = reads.len() as f64;
    println!(
        "{name:<18} {:>14.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>12.1} {:>10.1} {:>10.1}",
        between as f64 / n,
        streamed as f64 / n,
        clocked_hinted as f64 / n,
        clocked_warm as f64 / n,
        loop_streamed as f64 / n,
        prefetched as f64 / n,
        repeated as f64 / (10.0 * n),
        mapping.memory().heap_bytes as f64 / f64::from(1 << 20)
    );
}

fn main() {
    println!(
        "{:<18} {:>14} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10} {:>10}",
        "mapping",
        "between [ns]",
        "streamed",
        "clk+hint",
        "clk+warm",
        "loop",
        "prefetched",
        "repeated",
        "heap MiB"
    );
    for _ in 0..2 {
        run("page table", PageTable::new(PAGES));
        run("VET BIS PF", Vet::<Pf>::new(PAGES, InsertScheme::Bis));
        run(
            "VET BIS PF swiss",
            Vet::<Pf, Swiss<PfNode, Fold>>::new(PAGES, InsertScheme::Bis),
        );
    }
}
