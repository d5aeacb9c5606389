//! The two-level B-tree against `BTreeMap` under seeded random inserts, replacements,
//! removals and lookups, with pages and nodes small enough that pages and big nodes split
//! at every level; on the simulator and on the translation layer.

use flashkit_core::{SimRng, SimRngExt};
use flashkit_em::btree::TwoLevelBTree;
use flashkit_em::io::{BlockIo, BlockSizes, SimIo};
use flashkit_em::tl::TranslationLayer;
use rand::Rng;
use std::collections::BTreeMap;

fn run<I: BlockIo>(io: I, node_pages: u64, seed: u64, ops: usize) {
    let mut tree = TwoLevelBTree::new(io, node_pages).expect("tree");
    let mut model = BTreeMap::new();
    let mut rng = SimRng::for_stream(seed, "btree-model");
    let key_range = [300u64, 20_000, u64::MAX][seed as usize % 3];
    for op in 0..ops {
        let key = rng.random_range(0..key_range);
        match rng.random_range(0..10) {
            0..=5 => {
                let value = rng.random::<u64>();
                assert_eq!(
                    tree.insert(key, value).expect("insert"),
                    model.insert(key, value),
                    "seed {seed} op {op}"
                );
            }
            6..=7 => assert_eq!(
                tree.remove(key).expect("remove"),
                model.remove(&key),
                "seed {seed} op {op}"
            ),
            _ => {
                let probe = if rng.random_bool(0.5) {
                    model
                        .keys()
                        .nth(rng.random_range(0..model.len().max(1)))
                        .copied()
                        .unwrap_or(key)
                } else {
                    key
                };
                assert_eq!(
                    tree.get(probe).expect("get"),
                    model.get(&probe).copied(),
                    "seed {seed} op {op}"
                );
            }
        }
        assert_eq!(tree.len(), model.len() as u64);
    }
    let all = tree.entries().expect("scan");
    assert_eq!(
        all,
        model.into_iter().collect::<Vec<_>>(),
        "seed {seed} final scan"
    );
}

#[test]
fn matches_btreemap_on_the_simulator() {
    for seed in 0..6 {
        let io = SimIo::with_data(BlockSizes::same(512).expect("valid"));
        run(io, 3 + seed % 6, seed, 8000);
    }
}

#[test]
fn matches_btreemap_on_the_translation_layer() {
    for seed in 10..13 {
        let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
        let tl = TranslationLayer::new(sim, 2, None).expect("tl");
        run(tl, 8, seed, 8000);
    }
}
