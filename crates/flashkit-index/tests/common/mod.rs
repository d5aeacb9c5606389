//! The reference-model harness shared by the NOR index tests: seeded, swarm-weighted random
//! inserts, updates, deletes, lookups and range queries in lock-step with a `BTreeMap`,
//! invariant and content checks every K operations, power cycles every P operations.

#![allow(dead_code)]

use flashkit_core::{SimRng, SimRngExt};
use flashkit_device::{NorDevice, NorGeometry};
use flashkit_index::nor::{Key, NorIndex};
use rand::Rng;
use std::collections::BTreeMap;

/// One reference run.
pub struct Run {
    pub seed: u64,
    pub ops: u64,
    /// Keys are drawn from 0..key_space.
    pub key_space: u32,
    /// Live keys are kept at most this many (inserts turn into deletes past it), so that a
    /// small flash stays within its capacity while garbage collection works hard.
    pub max_live: usize,
    pub check_every: u64,
    pub power_cycle_every: u64,
    /// Distinct random keys inserted before the random operations (0: none), so that a
    /// delete-heavy mix still starts from a big structure.
    pub prefill: usize,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Put,
    Get,
    Remove,
    Range,
}

fn weights(rng: &mut SimRng) -> [(Op, u32); 4] {
    // Swarm testing: each seed draws its own mix, so some runs are insert-heavy, some
    // delete-heavy, some mostly updates of few keys.
    [
        (Op::Put, rng.random_range(1..10)),
        (Op::Get, rng.random_range(0..6)),
        (Op::Remove, rng.random_range(0..8)),
        (Op::Range, rng.random_range(0..2)),
    ]
}

fn pick(rng: &mut SimRng, weights: &[(Op, u32); 4]) -> Op {
    let total: u32 = weights.iter().map(|w| w.1).sum();
    let mut r = rng.random_range(0..total.max(1));
    for &(op, w) in weights {
        if r < w {
            return op;
        }
        r -= w;
    }
    Op::Put
}

pub fn run(index: &mut dyn NorIndex, run: &Run) {
    let mut rng = SimRng::for_stream(run.seed, "reference");
    let weights = weights(&mut rng);
    let mut model: BTreeMap<Key, u32> = BTreeMap::new();
    let mut out = Vec::new();
    let name = index.name();
    let fail = |i: u64, what: String| -> ! {
        panic!(
            "{} seed {} op {i}: {what} (reproduce with ops = {})",
            name,
            run.seed,
            i + 1
        )
    };
    while model.len() < run.prefill.min(run.max_live) {
        let key = rng.random_range(0..run.key_space);
        let value: u32 = rng.random();
        index
            .put(key, value)
            .unwrap_or_else(|e| fail(0, format!("prefill put {key}: {e}")));
        model.insert(key, value);
    }
    for i in 0..run.ops {
        let key = rng.random_range(0..run.key_space);
        let mut op = pick(&mut rng, &weights);
        if matches!(op, Op::Put) && model.len() >= run.max_live && !model.contains_key(&key) {
            op = Op::Remove;
        }
        match op {
            Op::Put => {
                let value: u32 = rng.random();
                let new = index
                    .put(key, value)
                    .unwrap_or_else(|e| fail(i, format!("put {key}: {e}")));
                let was = model.insert(key, value);
                if new != was.is_none() {
                    fail(i, format!("put {key} said new={new}, model had {was:?}"));
                }
            }
            Op::Get => {
                let got = index
                    .get(key)
                    .unwrap_or_else(|e| fail(i, format!("get {key}: {e}")));
                if got != model.get(&key).copied() {
                    fail(
                        i,
                        format!("get {key} = {got:?}, model {:?}", model.get(&key)),
                    );
                }
            }
            Op::Remove => {
                let key = if rng.random_bool(0.7) && !model.is_empty() {
                    *model
                        .range(key..)
                        .next()
                        .unwrap_or_else(|| model.iter().next_back().expect("nonempty"))
                        .0
                } else {
                    key
                };
                let got = index
                    .remove(key)
                    .unwrap_or_else(|e| fail(i, format!("remove {key}: {e}")));
                if got != model.remove(&key) {
                    fail(i, format!("remove {key} = {got:?}"));
                }
            }
            Op::Range => {
                let len = rng.random_range(0..run.key_space / 8 + 2);
                let hi = key.saturating_add(len).min(run.key_space);
                out.clear();
                index
                    .range(key, hi, &mut out)
                    .unwrap_or_else(|e| fail(i, format!("range {key}..={hi}: {e}")));
                let want: Vec<(Key, u32)> = model.range(key..=hi).map(|(&k, &v)| (k, v)).collect();
                if out != want {
                    fail(
                        i,
                        format!(
                            "range {key}..={hi}: got {} pairs, model {}",
                            out.len(),
                            want.len()
                        ),
                    );
                }
            }
        }
        if (i + 1) % run.check_every == 0 {
            if let Err(e) = index.check_invariants() {
                fail(i, format!("invariant: {e}"));
            }
            let contents = index.contents().unwrap_or_else(|e| fail(i, e));
            let want: Vec<(Key, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            if contents != want {
                fail(
                    i,
                    format!(
                        "contents differ: {} pairs, model {}",
                        contents.len(),
                        want.len()
                    ),
                );
            }
        }
        if run.power_cycle_every > 0 && (i + 1) % run.power_cycle_every == 0 {
            index
                .power_cycle()
                .unwrap_or_else(|e| fail(i, format!("power cycle: {e}")));
            if let Err(e) = index.check_invariants() {
                fail(i, format!("invariant after boot: {e}"));
            }
        }
    }
    index
        .check_invariants()
        .unwrap_or_else(|e| fail(run.ops, e));
    for (&k, &v) in &model {
        assert_eq!(index.get(k).expect("get"), Some(v), "final sweep, key {k}");
    }
}

pub fn small_nor(words_per_block: u32, blocks: u32) -> NorDevice {
    NorDevice::new(NorGeometry::new(words_per_block, blocks).expect("valid geometry"))
}
