//! Which hash table for the Virtual Extent Trie (and how EMT compares): the same seeded
//! stream of extent writes and reads through `Vet<Pf, T>` for each candidate table `T` (the
//! cuckoo table of one-line buckets, and hashbrown's SwissTable under each hasher), both
//! insertion schemes and both node layouts, and through `Emt`.
//!
//! `cargo run --release -p flashkit-ftl --example vet_tables [OPS]`
//!
//! The workload: writes of 1 to 64 pages (three in four of at most 8) at random offsets,
//! half of them in a hot 1% of a 2^26-page (256 GiB) space, and one read in four; physical
//! pages from a log. Times are wall clock over the whole stream; the best of three passes.

use flashkit_core::{Lpn, PageRange, Ppn, SimRng, SimRngExt};
use flashkit_ftl::vet::{Fib, Fold, NodeTable, PfNode, Sip, Swiss};
use flashkit_ftl::{Chunked, Emt, EmtRun, InsertScheme, Mapping, NodeLayout, Pd, Pf, Vet};
use rand::Rng;
use std::collections::BTreeMap;
use std::time::Instant;

const PAGES: u32 = 1 << 26;

#[derive(Clone, Copy)]
enum Op {
    Write(u32, u32),
    Read(u32, u32),
}

fn workload(ops: usize) -> Vec<Op> {
    let mut rng = SimRng::for_stream(7, "vet-tables");
    (0..ops)
        .map(|_| {
            let len = if rng.random_bool(0.75) {
                rng.random_range(1..=8)
            } else {
                rng.random_range(9..=64)
            };
            let start = if rng.random_bool(0.5) {
                rng.random_range(0..PAGES / 100)
            } else {
                rng.random_range(0..PAGES - 64)
            };
            if rng.random_bool(0.25) {
                Op::Read(start, len)
            } else {
                Op::Write(start, len)
            }
        })
        .collect()
}

/// (write ns per op, read ns per op, heap bytes, packed bytes)
fn measure<M: Mapping>(make: impl Fn() -> M, ops: &[Op]) -> (f64, f64, u64, u64) {
    let mut best = (f64::MAX, f64::MAX, 0, 0);
    for _ in 0..3 {
        let mut mapping = make();
        let (mut write_ns, mut read_ns, mut writes, mut reads) = (0u128, 0u128, 0u64, 0u64);
        let mut next = 0u32;
        let mut sink = 0u64;
        for &op in ops {
            match op {
                Op::Write(start, len) => {
                    let clock = Instant::now();
                    mapping.update(Lpn(start), Ppn(next), len, &mut |p| sink += u64::from(p.0));
                    write_ns += clock.elapsed().as_nanos();
                    writes += 1;
                    next = next.wrapping_add(len) % (1 << 30);
                }
                Op::Read(start, len) => {
                    let clock = Instant::now();
                    mapping.translate(PageRange::new(Lpn(start), len), &mut |r| {
                        sink += u64::from(r.len)
                    });
                    read_ns += clock.elapsed().as_nanos();
                    reads += 1;
                }
            }
        }
        std::hint::black_box(sink);
        let memory = mapping.memory();
        let pass = (
            write_ns as f64 / writes as f64,
            read_ns as f64 / reads as f64,
            memory.heap_bytes,
            memory.packed_bytes,
        );
        best = (best.0.min(pass.0), best.1.min(pass.1), pass.2, pass.3);
    }
    best
}

fn vet<L: NodeLayout, T: NodeTable<L::Node>>(scheme: InsertScheme) -> impl Fn() -> Vet<L, T> {
    move || Vet::<L, T>::new(PAGES, scheme)
}

fn main() {
    let ops: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let ops = workload(ops);
    println!(
        "{} operations over {PAGES} pages; best of three passes",
        ops.len()
    );
    println!(
        "{:<28} {:>12} {:>12} {:>12} {:>12}",
        "structure", "write ns", "read ns", "heap MiB", "packed MiB"
    );
    let print = |name: &str, (w, r, heap, packed): (f64, f64, u64, u64)| {
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        println!(
            "{name:<28} {w:>12.1} {r:>12.1} {:>12.2} {:>12.2}",
            mib(heap),
            mib(packed)
        );
    };
    for scheme in InsertScheme::ALL {
        print(
            &format!("vet/{scheme}/pf cuckoo"),
            measure(vet::<Pf, <Pf as NodeLayout>::Table>(scheme), &ops),
        );
        print(
            &format!("vet/{scheme}/pf swiss sip"),
            measure(vet::<Pf, Swiss<PfNode, Sip>>(scheme), &ops),
        );
        print(
            &format!("vet/{scheme}/pf swiss foldhash"),
            measure(vet::<Pf, Swiss<PfNode, Fold>>(scheme), &ops),
        );
        print(
            &format!("vet/{scheme}/pf swiss fibonacci"),
            measure(vet::<Pf, Swiss<PfNode, Fib>>(scheme), &ops),
        );
        print(
            &format!("vet/{scheme}/pd cuckoo"),
            measure(vet::<Pd, <Pd as NodeLayout>::Table>(scheme), &ops),
        );
        print(
            &format!("vet/{scheme}/pd swiss foldhash"),
            measure(vet::<Pd, Swiss<u32, Fold>>(scheme), &ops),
        );
    }
    // Named explicitly: `Emt::new` is the default backend (the chunked array).
    print(
        "emt (std BTreeMap)",
        measure(|| Emt::<BTreeMap<u32, EmtRun>>::with_index(PAGES), &ops),
    );
    print(
        "emt (chunked sorted array)",
        measure(|| Emt::<Chunked>::with_index(PAGES), &ops),
    );
}
