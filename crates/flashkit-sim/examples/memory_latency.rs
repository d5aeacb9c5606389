//! The machine's load latency by working-set size: what one cache miss of a mapping costs.
//!
//! `cargo run --release -p flashkit-sim --example memory_latency`
//!
//! A pointer chase through buffers of 256 KiB to 256 MiB ([`flashkit_sim::machine`]): the
//! time per load, once the buffer no longer fits a cache level, is that level's miss
//! latency. docs/reproduction/vet.md uses it to bound what a fragmented VET read can cost;
//! `flashkit reproduce vet` prints three of these points before and after its timed runs.

use flashkit_sim::machine::{load_latency_ns, working_set_name};

const LOADS: usize = 20_000_000;

fn main() {
    println!("{:>12} {:>12}", "working set", "ns a load");
    for log_kib in 8..=18 {
        let bytes = 1usize << (log_kib + 10);
        let ns = load_latency_ns(bytes, LOADS);
        println!("{:>12} {ns:>12.1}", working_set_name(bytes as u64));
    }
}
