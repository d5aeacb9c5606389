//! Every NOR index in lock-step with a `BTreeMap`: seeded, swarm-weighted random inserts,
//! updates, deletes, lookups and range queries, invariant checks every K operations, small
//! flashes that force garbage collection, and power cycles followed by boot-up
//! initialization from flash alone. A million operations per `cargo test`.

mod common;

use common::{Run, run, small_nor};
use flashkit_index::nor::{
    FatList, FatListConfig, MuTree, MuTreeConfig, NorIndex, SoftList, SoftListConfig,
};

#[test]
fn fat_list_small_flash_with_gc_and_power_cycles() {
    let mut totals = std::collections::BTreeMap::new();
    for seed in 0..8u64 {
        let cfg = FatListConfig {
            turnstile_blocks: 4,
            slots: 8,
            key_limit: 4,
            ..FatListConfig::with_levels(1 + (seed % 5) as u32)
        };
        let mut list = FatList::create(small_nor(1024, 8), cfg, seed).expect("create");
        run(
            &mut list,
            &Run {
                seed,
                ops: 50_000,
                key_space: 400,
                max_live: 120,
                check_every: 500,
                power_cycle_every: 3_000,
                prefill: 0,
            },
        );
        assert!(
            list.stats().counter("gc_runs") > 0,
            "seed {seed}: no garbage collection happened"
        );
        for (name, count) in list.stats().counters {
            *totals.entry(name).or_insert(0u64) += count;
        }
    }
    // Every structural path of section 0.5 ran somewhere in the swarm.
    for name in [
        "splits",
        "merges",
        "shift_merges",
        "compactions",
        "relocations",
        "gc_objects_moved",
    ] {
        assert!(totals[name] > 0, "no {name}: {totals:?}");
    }
}

#[test]
fn soft_list_small_flash_with_gc_and_power_cycles() {
    for seed in 0..6u64 {
        let cfg = SoftListConfig {
            turnstile_blocks: 4,
            max_levels: 1 + (seed % 5) as u32,
            ..SoftListConfig::default()
        };
        let mut list = SoftList::create(small_nor(512, 8), cfg, seed).expect("create");
        run(
            &mut list,
            &Run {
                seed,
                ops: 50_000,
                key_space: 300,
                max_live: 100,
                check_every: 500,
                power_cycle_every: 3_000,
                prefill: 0,
            },
        );
        assert!(
            list.stats().counter("gc_runs") > 0,
            "seed {seed}: no garbage collection happened"
        );
    }
}

#[test]
fn mu_tree_small_flash_with_gc_and_power_cycles() {
    for seed in 0..6u64 {
        // 256-byte pages (128 words) in 1024-word blocks: 15 entries a leaf, 22 children
        // under a height-2 root; 600 live keys need height 3. 192 pages, three quarters of
        // them live at the peak, so collections move live pages.
        let cfg = MuTreeConfig { page_bytes: 256 };
        let mut tree = MuTree::create(small_nor(1024, 24), cfg).expect("create");
        run(
            &mut tree,
            &Run {
                seed,
                ops: 50_000,
                key_space: 1_500,
                max_live: 600,
                check_every: 500,
                power_cycle_every: 3_000,
                prefill: 500,
            },
        );
        let stats = tree.stats();
        assert!(
            stats.counter("gc_runs") > 0,
            "seed {seed}: no garbage collection happened"
        );
        assert!(
            stats.counter("max_height") >= 3,
            "seed {seed}: {:?}",
            stats.counters
        );
        assert!(
            stats.counter("borrows") > 0,
            "seed {seed}: {:?}",
            stats.counters
        );
        assert!(
            stats.counter("gc_pages_moved") > 0,
            "seed {seed}: {:?}",
            stats.counters
        );
    }
}
