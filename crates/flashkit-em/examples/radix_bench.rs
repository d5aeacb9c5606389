//! Run formation's in-memory sort alone: the radix sort of one run of random records, timed
//! over several passes on fresh copies of the same input (the figure behind the external
//! sort's run-formation phase; see bench/RESULTS.md).
//!
//! ```text
//! cargo run --release -p flashkit-em --example radix_bench -- [LOG2_RECORDS] [PASSES]
//! ```
//!
//! Defaults: 2^24 u64 records (128 MiB, one run of a 512 MiB sort), 7 passes. Prints every
//! pass, the best and the median, and the checksum (the same for every pass and build).

use flashkit_core::{SimRng, SimRngExt};
use flashkit_em::record::Record;
use flashkit_em::sort::radix::radix_sort_checksummed;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let log: u32 = args.next().map_or(24, |a| a.parse().expect("LOG2_RECORDS"));
    let passes: usize = args.next().map_or(7, |a| a.parse().expect("PASSES"));
    let n = 1usize << log;
    let mut rng = SimRng::for_stream(1, "radix-bench");
    let input: Vec<u64> = (0..n).map(|_| u64::random(&mut rng)).collect();
    let mut data = input.clone();
    let mut scratch = vec![0u64; n];
    let mut times = Vec::with_capacity(passes);
    let mut checksum = None;
    for pass in 0..passes {
        data.copy_from_slice(&input);
        let clock = Instant::now();
        let result = radix_sort_checksummed(&mut data, &mut scratch);
        let seconds = clock.elapsed().as_secs_f64();
        let sorted = if result.in_scratch { &scratch } else { &data };
        assert!(result.in_order, "the sort's own check failed");
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "not sorted");
        checksum = Some(result.checksum);
        println!(
            "pass {pass}: {:.1} ms ({:.2} ns a record)",
            seconds * 1e3,
            seconds * 1e9 / n as f64
        );
        times.push(seconds);
    }
    times.sort_by(f64::total_cmp);
    let sum = checksum.expect("at least one pass");
    println!(
        "2^{log} u64: best {:.1} ms, median {:.1} ms; checksum {:016x}",
        times[0] * 1e3,
        times[times.len() / 2] * 1e3,
        sum.sum
    );
}
