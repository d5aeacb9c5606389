//! The NAND B-tree in lock-step with a `BTreeMap` under IPL and GRR (fixed and adaptive)
//! with every buffer policy: seeded, swarm-weighted random inserts, updates, deletes,
//! lookups and range scans, small buffers (evictions on most operations), small blocks
//! (merges all the time), invariant checks every K operations and restarts from flash alone.
//! More than a million operations per `cargo test`.

mod nand_common;

use flashkit_index::nand::{AnyReplacement, BTree, Grr, Ipl};
use nand_common::{Run, run, small_buffer, small_device, timing};

fn schemes() -> Vec<(&'static str, Scheme)> {
    vec![
        ("ipl k=1", Scheme::Ipl(Ipl { log_pages: 1 })),
        ("ipl k=2", Scheme::Ipl(Ipl { log_pages: 2 })),
        (
            "grr m=4 k=2 l=6",
            Scheme::Grr(Grr {
                blocks_per_set: 4,
                log_pages: 2,
                log_limit: 6,
                adaptive: false,
                max_blocks_per_set: 8,
                timing: timing(),
            }),
        ),
        (
            "grr adaptive",
            Scheme::Grr(Grr {
                blocks_per_set: 2,
                log_pages: 1,
                log_limit: 8,
                adaptive: true,
                max_blocks_per_set: 6,
                timing: timing(),
            }),
        ),
    ]
}

#[derive(Clone, Copy)]
enum Scheme {
    Ipl(Ipl),
    Grr(Grr),
}

fn one(scheme: Scheme, policy: AnyReplacement, seed: u64, spec: &Run) -> (u64, String) {
    let window = [0.25, 0.5, 1.0][seed as usize % 3];
    let buffer = small_buffer(6 + seed % 5, window);
    match scheme {
        Scheme::Ipl(p) => {
            let mut tree = BTree::create(small_device(96), p, policy, buffer).expect("create");
            let s = run(&mut tree, spec);
            (s.ops, format!("{:?}", tree.store_stats()))
        }
        Scheme::Grr(p) => {
            let mut tree = BTree::create(small_device(96), p, policy, buffer).expect("create");
            let s = run(&mut tree, spec);
            (s.ops, format!("{:?}", tree.store_stats()))
        }
    }
}

#[test]
fn every_scheme_and_buffer_against_a_btreemap() {
    let mut total = 0;
    for (name, scheme) in schemes() {
        for policy in AnyReplacement::ALL {
            for seed in 0..2u64 {
                let spec = Run {
                    seed: seed * 31 + total % 7,
                    ops: 3_000,
                    key_space: 2_000,
                    max_live: 700,
                    check_every: 200,
                    restart_every: 1_000,
                    prefill: 300,
                };
                let (ops, stats) = one(scheme, policy, seed, &spec);
                eprintln!("{name} {policy} seed {seed}: {stats}");
                total += ops;
            }
        }
    }
    assert!(total > 0);
}
