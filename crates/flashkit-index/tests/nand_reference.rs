//! The NAND B-tree in lock-step with a `BTreeMap` under IPL and GRR (fixed and adaptive)
//! with every buffer policy: seeded, swarm-weighted random inserts, updates, deletes,
//! lookups and range scans, small buffers (evictions on most operations), small blocks
//! (merges all the time), invariant and content checks every K operations and restarts from
//! flash alone, half of them cold (the tree dropped, a new one opened on the device).
//!
//! One test per storage scheme, so that the test harness runs them side by side; each does
//! 3 policies x 3 seeds x 30,000 operations = 270,000, 1.08 million in all, and asserts that
//! the runs exercised what they claim to (merges, evictions, node merges, both kinds of
//! restart, and the scheme's own paths: log areas that grow, semi-clean images dropped).

mod nand_common;

use flashkit_index::nand::{AnyReplacement, BTree, Grr, Ipl, Placement};
use nand_common::{Run, Summary, run, small_buffer, small_device, timing};

const OPS: u64 = 30_000;
const SEEDS: u64 = 3;

/// The run of one seed: the key space, live-key bound and buffer vary with it, so that the
/// three seeds see a shallow tree in a tight buffer, a deeper one in a roomier buffer, and
/// one in between.
fn spec(seed: u64, salt: u64) -> Run {
    let (key_space, max_live) = [(2_000, 700), (20_000, 2_500), (6_000, 1_500)][seed as usize % 3];
    Run {
        seed: seed * 1_000 + salt,
        ops: OPS,
        key_space,
        max_live,
        check_every: 250,
        restart_every: 2_500,
        prefill: max_live / 2,
    }
}

fn every_policy<P: Placement + Clone>(name: &str, placement: P, salt: u64) -> Summary {
    let mut total = Summary::default();
    for policy in AnyReplacement::ALL {
        let mut per_policy = Summary::default();
        for seed in 0..SEEDS {
            let window = [0.25, 0.5, 1.0][seed as usize % 3];
            let buffer = small_buffer(6 + 3 * seed, window);
            let tree = BTree::create(small_device(160), placement.clone(), policy, buffer)
                .expect("create");
            let s = run(tree, &spec(seed, salt));
            per_policy.add(&s);
        }
        eprintln!("{name} {policy}: {per_policy:?}");
        let s = &per_policy;
        assert_eq!(s.ops, OPS * SEEDS, "{name} {policy}");
        assert!(
            s.cold_restarts > 0 && s.restarts > s.cold_restarts,
            "{name} {policy}: {s:?}"
        );
        assert!(s.block_merges > 100, "{name} {policy}: merges {s:?}");
        assert!(s.dirty_evictions > 100, "{name} {policy}: evictions {s:?}");
        assert!(
            s.node_merges > 0 && s.borrows > 0 && s.splits > 0,
            "{name} {policy}: {s:?}"
        );
        if policy == AnyReplacement::CfSemi {
            assert!(
                s.image_drops > 0,
                "{name} cfsemi drops semi-clean images: {s:?}"
            );
        } else {
            assert_eq!(s.image_drops, 0, "{name} {policy} has no semi-clean state");
        }
        total.add(s);
    }
    total
}

#[test]
fn ipl_one_log_page_against_a_btreemap() {
    let s = every_policy("ipl k=1", Ipl { log_pages: 1 }, 1);
    assert_eq!(s.log_area_grows, 0, "IPL's log area never grows");
}

#[test]
fn ipl_two_log_pages_against_a_btreemap() {
    let s = every_policy("ipl k=2", Ipl { log_pages: 2 }, 2);
    assert_eq!(s.log_area_grows, 0, "IPL's log area never grows");
}

#[test]
fn grr_fixed_against_a_btreemap() {
    let grr = Grr {
        blocks_per_set: 4,
        log_pages: 2,
        log_limit: 6,
        adaptive: false,
        max_blocks_per_set: 8,
        timing: timing(),
    };
    let s = every_policy("grr m=4 k=2 l=6", grr, 3);
    assert!(s.log_area_grows > 0, "GRR grows full log areas: {s:?}");
    assert_eq!(s.spread_merges, 0, "only the adaptive rules spread a block");
}

#[test]
fn grr_adaptive_against_a_btreemap() {
    let grr = Grr {
        blocks_per_set: 2,
        log_pages: 1,
        log_limit: 8,
        adaptive: true,
        max_blocks_per_set: 6,
        timing: timing(),
    };
    let s = every_policy("grr adaptive", grr, 4);
    assert!(s.log_area_grows > 0, "GRR grows full log areas: {s:?}");
    assert!(
        s.spread_merges > 0,
        "the adaptive rules spread full blocks: {s:?}"
    );
}

/// Short runs checked after every single operation, so that a state that is wrong only
/// between two checks of the long runs cannot hide.
#[test]
fn every_scheme_checked_after_every_operation() {
    let grr = Grr {
        blocks_per_set: 2,
        log_pages: 1,
        log_limit: 8,
        adaptive: true,
        max_blocks_per_set: 6,
        timing: timing(),
    };
    for seed in 0..3u64 {
        let policy = AnyReplacement::ALL[seed as usize % 3];
        let buffer = small_buffer(6, 0.5);
        let ipl =
            BTree::create(small_device(96), Ipl { log_pages: 1 }, policy, buffer).expect("create");
        let s = run(ipl, &short(seed));
        assert!(s.block_merges > 0, "ipl {policy} seed {seed}: {s:?}");
        let tree = BTree::create(small_device(96), grr, policy, buffer).expect("create");
        let s = run(tree, &short(seed));
        assert!(s.block_merges > 0, "grr {policy} seed {seed}: {s:?}");
    }
}

fn short(seed: u64) -> Run {
    Run {
        seed: 77 + seed,
        ops: 1_500,
        key_space: 1_500,
        max_live: 500,
        check_every: 1,
        restart_every: 300,
        prefill: 250,
    }
}
