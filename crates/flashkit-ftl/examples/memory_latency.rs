//! The machine's load latency by working-set size: what one cache miss of a mapping costs.
//!
//! `cargo run --release -p flashkit-ftl --example memory_latency`
//!
//! A pointer chase: one 4-byte link per 64-byte line, the lines of a buffer visited in one
//! random cycle, so every load depends on the one before and no prefetcher can guess the
//! next. The time per load, once the buffer no longer fits a cache level, is that level's
//! miss latency (translation misses included: a buffer above the TLB's reach pays page
//! walks too). docs/reproduction/vet.md uses it to bound what a fragmented VET read can cost.

use flashkit_core::{SimRng, SimRngExt};
use rand::seq::SliceRandom;
use std::time::Instant;

const LINE_WORDS: usize = 16;
const LOADS: usize = 20_000_000;

fn main() {
    println!("{:>12} {:>12}", "working set", "ns a load");
    let mut rng = SimRng::for_stream(1, "memory-latency");
    for log_kib in 8..=18 {
        let kib = 1usize << log_kib;
        let lines = kib * 1024 / 64;
        let mut order: Vec<u32> = (0..lines as u32).collect();
        order.shuffle(&mut rng);
        let mut links = vec![0u32; lines * LINE_WORDS];
        for pair in 0..lines {
            let (from, to) = (order[pair], order[(pair + 1) % lines]);
            links[from as usize * LINE_WORDS] = to;
        }
        let mut at = order[0];
        for _ in 0..lines {
            at = links[at as usize * LINE_WORDS];
        }
        let clock = Instant::now();
        for _ in 0..LOADS {
            at = links[at as usize * LINE_WORDS];
        }
        let ns = clock.elapsed().as_nanos() as f64 / LOADS as f64;
        std::hint::black_box(at);
        let size = if kib >= 1024 {
            format!("{} MiB", kib / 1024)
        } else {
            format!("{kib} KiB")
        };
        println!("{size:>12} {ns:>12.1}");
    }
}
