//! The reference-model harness of the NAND B-tree tests: seeded, swarm-weighted random
//! inserts, updates, deletes, lookups and range scans in lock-step with a `BTreeMap`,
//! invariant and content checks every K operations, restarts (flush, forget all RAM, boot
//! from flash) every R operations.

#![allow(dead_code)]

use flashkit_core::{Geometry, NandPreset, SimRng, SimRngExt};
use flashkit_device::{NandDevice, PageBytes};
use flashkit_index::nand::{BTree, BufferConfig, Key, Placement, Replacement, Value};
use rand::Rng;
use std::collections::BTreeMap;

/// One reference run.
pub struct Run {
    pub seed: u64,
    pub ops: u64,
    /// Keys are drawn from 0..key_space.
    pub key_space: u64,
    /// Live keys are kept at most this many (inserts turn into deletes past it).
    pub max_live: usize,
    pub check_every: u64,
    pub restart_every: u64,
    /// Distinct random keys inserted first (0: none).
    pub prefill: usize,
}

/// What a run did, for assertions that it exercised what it should (counters of every
/// incarnation of the tree, summed over cold restarts, which start the counters afresh).
#[derive(Debug, Default, Clone, Copy)]
pub struct Summary {
    pub ops: u64,
    /// Restarts of either kind.
    pub restarts: u64,
    /// Restarts that dropped the tree and opened a new one on the device.
    pub cold_restarts: u64,
    pub block_merges: u64,
    pub log_area_grows: u64,
    pub spread_merges: u64,
    pub blocks_reclaimed: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub image_drops: u64,
    pub splits: u64,
    pub node_merges: u64,
    pub borrows: u64,
}

impl Summary {
    /// Add the counters of a tree about to be dropped (or at the end of a run).
    fn absorb<P: Placement, R: Replacement>(&mut self, tree: &BTree<P, R>) {
        let (s, b, t) = (tree.store_stats(), tree.buffer_stats(), tree.tree_stats());
        self.block_merges += s.merges;
        self.log_area_grows += s.log_area_grows;
        self.spread_merges += s.spread_merges;
        self.blocks_reclaimed += s.blocks_reclaimed;
        self.evictions += b.clean_evictions + b.dirty_evictions + b.new_node_evictions;
        self.dirty_evictions += b.dirty_evictions;
        self.image_drops += b.image_drops;
        self.splits += t.leaf_splits + t.inner_splits;
        self.node_merges += t.node_merges;
        self.borrows += t.borrows;
    }

    /// Add another run's summary.
    pub fn add(&mut self, o: &Summary) {
        self.ops += o.ops;
        self.restarts += o.restarts;
        self.cold_restarts += o.cold_restarts;
        self.block_merges += o.block_merges;
        self.log_area_grows += o.log_area_grows;
        self.spread_merges += o.spread_merges;
        self.blocks_reclaimed += o.blocks_reclaimed;
        self.evictions += o.evictions;
        self.dirty_evictions += o.dirty_evictions;
        self.image_drops += o.image_drops;
        self.splits += o.splits;
        self.node_merges += o.node_merges;
        self.borrows += o.borrows;
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Put,
    Get,
    Remove,
    Range,
}

fn weights(rng: &mut SimRng) -> [(Op, u32); 4] {
    [
        (Op::Put, rng.random_range(2..10)),
        (Op::Get, rng.random_range(0..6)),
        (Op::Remove, rng.random_range(1..8)),
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

/// Small pages and blocks so that a few hundred keys make a tree of height 3 and merges
/// run all the time.
pub fn small_device(blocks: u32) -> NandDevice<PageBytes> {
    let geometry = Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(16)
        .oob_bytes(16)
        .blocks(blocks)
        .build()
        .expect("valid geometry");
    NandDevice::new(geometry)
}

/// A buffer of `nodes` page-sized units with 128-byte log sectors.
pub fn small_buffer(nodes: u64, window: f64) -> BufferConfig {
    BufferConfig {
        capacity_bytes: nodes * 512,
        window,
        sector_bytes: 128,
    }
}

pub fn timing() -> flashkit_core::Timing {
    NandPreset::GRR_PAPER.timing
}

/// Restart the tree: odd restarts are warm ([`BTree::restart`]: flush, forget the RAM
/// structures, boot), even ones cold (close the tree, drop it, open a new one on the device
/// with nothing but the flash and the configuration).
fn restart<P: Placement + Clone, R: Replacement + Clone>(
    tree: BTree<P, R>,
    summary: &mut Summary,
) -> Result<(BTree<P, R>, u64), String> {
    summary.restarts += 1;
    if summary.restarts % 2 == 1 {
        let mut tree = tree;
        let boot = tree.restart().map_err(|e| format!("restart: {e}"))?;
        return Ok((tree, boot.pages_read));
    }
    summary.cold_restarts += 1;
    summary.absorb(&tree);
    let placement = tree.store().policy().clone();
    let replacement = tree.pool().policy().clone();
    let buffer = tree.pool().config();
    let dev = tree.close().map_err(|e| format!("close: {e}"))?;
    let (tree, boot) =
        BTree::open(dev, placement, replacement, buffer).map_err(|e| format!("open: {e}"))?;
    Ok((tree, boot.pages_read))
}

pub fn run<P: Placement + Clone, R: Replacement + Clone>(
    mut tree: BTree<P, R>,
    run: &Run,
) -> Summary {
    let mut rng = SimRng::for_stream(run.seed, "nand-reference");
    let weights = weights(&mut rng);
    let mut model: BTreeMap<Key, Value> = BTreeMap::new();
    let mut out = Vec::new();
    let label = format!(
        "{}+{}",
        tree.store().policy().name(),
        tree.pool().policy().name()
    );
    let fail = |i: u64, what: String| -> ! {
        panic!(
            "{label} seed {} op {i}: {what} (reproduce with ops = {})",
            run.seed,
            i + 1
        )
    };
    let mut summary = Summary::default();
    while model.len() < run.prefill.min(run.max_live) {
        let key = rng.random_range(0..run.key_space);
        let value: u64 = rng.random();
        tree.put(key, value)
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
                let value: u64 = rng.random();
                let new = tree
                    .put(key, value)
                    .unwrap_or_else(|e| fail(i, format!("put {key}: {e}")));
                let was = model.insert(key, value);
                if new != was.is_none() {
                    fail(i, format!("put {key} said new={new}, model had {was:?}"));
                }
            }
            Op::Get => {
                let got = tree
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
                let got = tree
                    .remove(key)
                    .unwrap_or_else(|e| fail(i, format!("remove {key}: {e}")));
                if got != model.remove(&key) {
                    fail(i, format!("remove {key} = {got:?}"));
                }
            }
            Op::Range => {
                let len = rng.random_range(0..run.key_space / 8 + 2);
                let hi = key.saturating_add(len);
                out.clear();
                tree.range(key, hi, &mut out)
                    .unwrap_or_else(|e| fail(i, format!("range {key}..={hi}: {e}")));
                let want: Vec<(Key, Value)> =
                    model.range(key..=hi).map(|(&k, &v)| (k, v)).collect();
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
        summary.ops += 1;
        if (i + 1) % run.check_every == 0 {
            check(&tree, &model, |what| fail(i, what));
        }
        if run.restart_every > 0 && (i + 1) % run.restart_every == 0 {
            let (t, pages_read) = restart(tree, &mut summary).unwrap_or_else(|e| fail(i, e));
            tree = t;
            if pages_read == 0 {
                fail(i, "a boot that read nothing".into());
            }
            check(&tree, &model, |what| {
                fail(i, format!("after restart: {what}"))
            });
        }
    }
    check(&tree, &model, |what| fail(run.ops, what));
    for (&k, &v) in &model {
        assert_eq!(
            tree.get(k).expect("get"),
            Some(v),
            "{label}: final sweep, key {k}"
        );
    }
    summary.absorb(&tree);
    summary
}

fn check<P: Placement, R: Replacement>(
    tree: &BTree<P, R>,
    model: &BTreeMap<Key, Value>,
    fail: impl Fn(String),
) {
    if let Err(e) = tree.check_invariants() {
        fail(format!("invariant: {e}"));
    }
    match tree.contents() {
        Ok(contents) => {
            let want: Vec<(Key, Value)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            if contents != want {
                let first = contents
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(contents.len().min(want.len()));
                fail(format!(
                    "contents differ: {} pairs, model {}, first difference at {first}",
                    contents.len(),
                    want.len()
                ));
            }
        }
        Err(e) => fail(format!("contents: {e}")),
    }
}
