//! Paths of the engine that the random workloads reach rarely or never, each driven on
//! purpose on a small configuration and checked against a `BTreeMap`, the invariant
//! checker, and the counter that says the path was taken.

use super::{Engine, ListConfig, PointerArea};
use crate::nor::Key;
use flashkit_device::nor::{NorDevice, NorGeometry};
use std::collections::BTreeMap;

fn small(slots: u32, key_limit: u32) -> ListConfig {
    ListConfig {
        turnstile_blocks: 4,
        max_levels: 3,
        p: 0.25,
        slots,
        key_limit,
        pointers: PointerArea::Pool { entries: 5 },
    }
}

fn engine(cfg: ListConfig, seed: u64) -> Engine {
    let nor = NorDevice::new(NorGeometry::new(1024, 16).expect("valid geometry"));
    Engine::create(nor, cfg, "fatlist", seed).expect("create")
}

fn counter(e: &Engine, name: &str) -> u64 {
    e.counters()
        .into_iter()
        .find(|&(n, _)| n == name)
        .map(|(_, v)| v)
        .expect("a known counter")
}

/// Run `ops` (key, Some(value) to put, None to remove) on `e` and a `BTreeMap` side by
/// side; every answer, and the contents and invariants after each operation, agree.
fn lockstep(e: &mut Engine, ops: impl IntoIterator<Item = (Key, Option<u32>)>) {
    let mut model = BTreeMap::new();
    for (i, (key, op)) in ops.into_iter().enumerate() {
        match op {
            Some(value) => {
                let new = e.put(key, value).expect("put");
                assert_eq!(new, model.insert(key, value).is_none(), "op {i}: put {key}");
            }
            None => {
                let got = e.remove(key).expect("remove");
                assert_eq!(got, model.remove(&key), "op {i}: remove {key}");
            }
        }
        e.check().unwrap_or_else(|err| panic!("op {i}: {err}"));
        let want: Vec<(Key, u32)> = model.iter().map(|(&k, &v)| (k, v)).collect();
        assert_eq!(e.contents().expect("contents"), want, "op {i}");
    }
}

/// A poorly used object whose neighbour is poorly used too but has fewer free slots than
/// the object has keys merges both into a new object (0.5.3), never shifts its keys into
/// slots the neighbour does not have. Updates fill a narrow key range with superseded
/// slots, so objects reach their slot count while holding few live keys.
#[test]
fn a_neighbour_without_room_for_a_shift_merge_is_merged_into_a_new_object() {
    use flashkit_core::SimRngExt;
    use rand::Rng;
    let mut e = engine(small(10, 8), 11);
    let mut rng = flashkit_core::SimRng::for_stream(5, "paths/merge");
    let ops: Vec<(Key, Option<u32>)> = (0..3000)
        .map(|i| {
            let key = rng.random_range(0..40u32) * 3;
            let op = if rng.random_range(0..2) == 0 {
                None
            } else {
                Some(i)
            };
            (key, op)
        })
        .collect();
    lockstep(&mut e, ops);
    let (merges, shifts) = (counter(&e, "merges"), counter(&e, "shift_merges"));
    assert!(
        merges > 0 && shifts > 0,
        "{merges} merges, {shifts} shift merges"
    );
}

/// Lazy merges queued by garbage collection run at the end of an operation, eight at most
/// (the newest first); the rest wait for the next operations, so that one collection
/// cannot make a single operation arbitrarily long.
#[test]
fn lazy_merges_run_eight_to_an_operation() {
    let mut e = engine(small(10, 8), 3);
    let keys: Vec<Key> = (0..100).map(|k| k * 10).collect();
    lockstep(&mut e, keys.iter().map(|&k| (k, Some(k))));
    e.merge_queue.extend((0..20).map(|i| keys[i * 5]));
    let mut left = Vec::new();
    for _ in 0..3 {
        // Absent keys: nothing to remove, only the queued work runs.
        assert_eq!(e.remove(5).expect("remove"), None);
        left.push(e.merge_queue.len());
        e.check().expect("invariants");
    }
    assert_eq!(left, [12, 4, 0], "queued merges left after each operation");
    let want: Vec<(Key, u32)> = keys.iter().map(|&k| (k, k)).collect();
    assert_eq!(e.contents().expect("contents"), want);
}

/// Each live data object's frame and live keys, in key order.
fn data_objects(e: &mut Engine) -> Vec<(super::Frame, Vec<Key>)> {
    let mut out = Vec::new();
    for block in 0..e.nor.geometry().blocks() {
        for offset in 0..e.frames_per_block as u16 {
            let frame = super::Frame { block, offset };
            if let super::layout::State::Live {
                kind: super::layout::Kind::Data,
                ..
            } = e.state(frame)
            {
                let keys: Vec<Key> = e
                    .read_full(frame)
                    .live_pairs()
                    .iter()
                    .map(|p| p.0)
                    .collect();
                out.push((frame, keys));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

/// The live keys of each data object, in key order.
fn data_keys(e: &mut Engine) -> Vec<Vec<Key>> {
    data_objects(e).into_iter().map(|o| o.1).collect()
}

/// Two neighbouring objects of a list of 10 slots and a key limit of 8 (so an object is
/// poorly used below 4 live keys): keys 10 to 110 inserted in order fill one object from
/// its min-max end and split it into 10..=50 and 60..=110; then the first keeps its
/// `first` smallest keys and the second its `second` smallest.
fn two_objects(first: usize, second: usize) -> (Engine, BTreeMap<Key, u32>) {
    let mut e = engine(small(10, 8), 2);
    let mut model = BTreeMap::new();
    for k in (10..=110).step_by(10) {
        e.put(k, k).expect("put");
        model.insert(k, k);
    }
    assert_eq!(counter(&e, "splits"), 1);
    let (a, b): (Vec<Key>, Vec<Key>) = model.keys().partition(|&&k| k <= 50);
    for &k in a[first..].iter().chain(&b[second..]) {
        assert_eq!(e.remove(k).expect("remove"), Some(k));
        model.remove(&k);
    }
    let want = vec![a[..first].to_vec(), b[..second].to_vec()];
    assert_eq!(data_keys(&mut e), want, "the two objects");
    (e, model)
}

/// Structural work counted so far: merges, shift merges, compactions, splits.
fn work(e: &Engine) -> [u64; 4] {
    ["merges", "shift_merges", "compactions", "splits"].map(|name| counter(e, name))
}

/// An object whose slots fill up merges with its successor when both hold fewer than n/2
/// live keys (here, into the successor's free slots: a shift merge), and is rewritten
/// compacted when either holds n/2 or more (0.5.3).
#[test]
fn a_full_object_merges_only_when_it_and_its_successor_are_poorly_used() {
    for (first, second, want) in [
        (3, 3, [0, 1, 0, 0]),
        (4, 3, [0, 0, 1, 0]),
        (3, 4, [0, 0, 1, 0]),
        (2, 2, [0, 1, 0, 0]),
    ] {
        let (mut e, mut model) = two_objects(first, second);
        let before = work(&e);
        // Updates of the first key write a slot each, until the object is full.
        let mut value = 0;
        while work(&e) == before && value < 20 {
            value += 1;
            e.put(10, value).expect("update");
            model.insert(10, value);
        }
        let done: Vec<u64> = work(&e).iter().zip(before).map(|(a, b)| a - b).collect();
        assert_eq!(done, want, "{first} and {second} live keys");
        e.check().expect("invariants");
        let pairs: Vec<(Key, u32)> = model.into_iter().collect();
        assert_eq!(e.contents().expect("contents"), pairs);
        let merged = want[1] == 1;
        let objects = data_keys(&mut e).len();
        assert_eq!(objects, if merged { 1 } else { 2 }, "{first}, {second}");
    }
}

/// A merge queued by garbage collection runs at the end of the next operation, on the
/// object holding the queued key, when that object and its successor hold fewer than n/2
/// live keys; a key before every object (the head's range) merges nothing.
#[test]
fn a_queued_merge_runs_only_on_a_poorly_used_object() {
    for (first, second, key, want) in [
        (3, 3, 10, 1),
        (3, 3, 30, 1),
        (2, 1, 20, 1),
        (4, 3, 10, 0),
        (3, 4, 10, 0),
        (3, 3, 5, 0),
    ] {
        let (mut e, model) = two_objects(first, second);
        let before = work(&e);
        e.merge_queue.push(key);
        assert_eq!(e.remove(1).expect("remove"), None);
        let done: Vec<u64> = work(&e).iter().zip(before).map(|(a, b)| a - b).collect();
        let at = format!("{first} and {second} live keys, key {key}");
        assert_eq!(done, [0, want, 0, 0], "{at}");
        e.check().expect("invariants");
        let pairs: Vec<(Key, u32)> = model.into_iter().collect();
        assert_eq!(e.contents().expect("contents"), pairs, "{at}");
    }
}

/// A flash too small for the keys: allocation draws four random blocks per non-spare block
/// (collecting each that is full) and then gives up with an error naming that count; the
/// keys put before are all still found.
#[test]
fn a_full_flash_refuses_an_insert_after_four_draws_per_block() {
    // Two turnstiles of four 128-word blocks; 52-word objects, two to a block.
    let nor = NorDevice::new(NorGeometry::new(128, 8).expect("valid geometry"));
    let mut e = Engine::create(nor, small(10, 8), "fatlist", 1).expect("create");
    assert_eq!((e.frames_per_block(), e.frame_words()), (2, 52));
    let mut stored = Vec::new();
    let error = (0..1000u32)
        .find_map(|i| match e.put(i, i) {
            Ok(_) => {
                stored.push(i);
                None
            }
            Err(error) => Some(error),
        })
        .expect("the flash fills up");
    let text = error.to_string();
    assert!(text.contains("after 24 random blocks"), "{text}");
    assert!(stored.len() > 10, "{} keys stored", stored.len());
    for &k in &stored {
        assert_eq!(e.get(k), Some(k), "key {k}");
    }
}

/// Garbage collection queues for a lazy merge the smallest key of each data object it moves
/// that holds fewer than n/2 live keys, and nothing for the others or the dummies; the
/// queue holds 256 keys at most, and a soft list (n/2 = 0) queues nothing.
#[test]
fn collection_queues_the_poorly_used_objects_it_moves() {
    for (first, second) in [(3, 4), (4, 3), (4, 4), (3, 3), (1, 6)] {
        let (mut e, model) = two_objects(first, second);
        let blocks: std::collections::BTreeSet<u32> = (0..e.nor.geometry().blocks())
            .filter(|&b| {
                e.nor
                    .peek(e.nor.geometry().block_start(flashkit_core::BlockId(b)))
                    == 0
            })
            .collect();
        for block in blocks {
            e.collect(block).expect("collect");
            e.settle();
        }
        let mut queued = e.merge_queue.clone();
        queued.sort();
        let want: Vec<Key> = [(first, 10), (second, 60)]
            .into_iter()
            .filter(|&(live, _)| live < 4)
            .map(|(_, key)| key)
            .collect();
        assert_eq!(queued, want, "{first} and {second} live keys");
        e.check().expect("invariants");
        let pairs: Vec<(Key, u32)> = model.into_iter().collect();
        assert_eq!(e.contents().expect("contents"), pairs);
    }
    let (mut e, _) = two_objects(3, 3);
    e.merge_queue = vec![1; 256];
    let block = data_objects(&mut e)[0].0.block;
    e.collect(block).expect("collect");
    assert_eq!(e.merge_queue, [1; 256], "a full queue takes no more");
    let soft = ListConfig {
        slots: 1,
        key_limit: 1,
        pointers: PointerArea::PerLevel { slots: 2 },
        ..small(1, 1)
    };
    let mut e = engine(soft, 4);
    lockstep(&mut e, (0..50).map(|k| (k, Some(k))));
    let block = data_objects(&mut e)[0].0.block;
    e.collect(block).expect("collect");
    assert!(e.merge_queue.is_empty(), "a soft list queues nothing");
}

/// A lookup and a range query in an object whose slots are all written read its bitmap and
/// each slot's key once (the scans from both ends meet), and the value of each match only:
/// keys 10 to 50 fill the min-max area of a 10-slot object, and an update of each fills the
/// other end.
#[test]
fn a_full_object_is_read_once_by_a_lookup_and_a_range_query() {
    let mut e = engine(small(10, 8), 2);
    let keys = [10, 20, 30, 40, 50];
    for k in keys {
        e.put(k, k).expect("put");
    }
    for k in keys {
        e.put(k, k + 1).expect("update");
    }
    let objects = data_objects(&mut e);
    assert_eq!(objects.len(), 1, "one data object");
    let frame = objects[0].0;
    let full = e.read_full(frame);
    // Full, the slots read as one run from the bottom.
    assert_eq!(full.front + full.back, 10, "every slot written");
    let reads = |e: &Engine| e.nor.counters().reads.total();
    let keys_read = u64::from(e.lay.bitmap_words) + 2 * 10;

    let before = reads(&e);
    assert_eq!(e.lookup_in(frame, 35), None, "an absent key");
    assert_eq!(reads(&e) - before, keys_read, "every key once");
    let before = reads(&e);
    assert_eq!(
        e.lookup_in(frame, 10),
        Some(11),
        "the live copy of an updated key"
    );
    assert_eq!(
        reads(&e) - before,
        keys_read + 2,
        "every key once, one value"
    );

    let before = reads(&e);
    let mut out = Vec::new();
    let max = e.collect_range(frame, 20, 40, &mut out);
    assert_eq!(max, 50, "the largest key bound");
    assert_eq!(out, [(20, 21), (30, 31), (40, 41)]);
    assert_eq!(
        reads(&e) - before,
        keys_read + 3 * 2,
        "every key once, three values"
    );
}

/// A range query stops at an object only when its largest key reaches the end of the
/// range: an object holding key 0 alone ends below 1, so a query of 0..=1 goes on to the
/// next object, which holds 1.
#[test]
fn a_range_query_goes_past_an_object_holding_key_0_alone() {
    let mut e = engine(small(4, 2), 3);
    for k in [0, 2, 1] {
        e.put(k, k + 100).expect("put");
    }
    // Fill the last slot with an update and free one with a removal: the next insert
    // splits the three live keys 0, 1, 3 in two, the left object written with 0 alone.
    e.put(2, 202).expect("update");
    e.remove(2).expect("remove");
    e.put(3, 103).expect("put");
    assert_eq!(data_keys(&mut e), [vec![0], vec![1, 3]]);
    let mut out = Vec::new();
    e.range_query(0, 1, &mut out);
    assert_eq!(out, [(0, 100), (1, 101)]);
    e.check().expect("a healthy list");
}

/// Range queries walk level 0 by the successor flow, which probes every block of the
/// pointer's turnstile, the current object's own frame among them when the next object
/// sits at its offset. Keys inserted in descending order leave the first object's first
/// slot above its smallest key, so that frame, taken for a candidate, would win over the
/// true successor. Over 3-block turnstiles and many seeds, that case is met, and every
/// query agrees with a `BTreeMap`, with the probe counts still adding up.
#[test]
fn range_queries_skip_the_current_object_among_the_successors_probes() {
    let mut met = 0;
    for seed in 0..40 {
        let cfg = ListConfig {
            turnstile_blocks: 3,
            ..small(8, 6)
        };
        let nor = NorDevice::new(NorGeometry::new(1024, 12).expect("valid geometry"));
        let mut e = Engine::create(nor, cfg, "fatlist", seed).expect("create");
        let mut model = BTreeMap::new();
        for k in (1..=60u32).rev() {
            e.put(k * 10, k).expect("put");
            model.insert(k * 10, k);
        }
        let objects = data_objects(&mut e);
        let (frame, _) = objects[0];
        let full = e.read_full(frame);
        let first = full.slots.iter().find(|s| s.0 == 0).expect("slot 0").1;
        let ptr = e.read_ptr(frame, 0);
        if i64::from(first) > full.min_bound
            && ptr.offset == frame.offset
            && u32::from(ptr.turnstile) == frame.block / 3
        {
            met += 1;
        }
        for (lo, hi) in [(0, 700), (5, 95), (10, 10), (15, 305), (250, 600)] {
            let mut out = Vec::new();
            e.range_query(lo, hi, &mut out);
            let want: Vec<(Key, u32)> = model.range(lo..=hi).map(|(&k, &v)| (k, v)).collect();
            assert_eq!(out, want, "seed {seed}: {lo}..={hi}");
        }
        e.check().unwrap_or_else(|err| panic!("seed {seed}: {err}"));
    }
    assert!(
        met > 0,
        "no seed put the first object among its own successor's probes"
    );
}

/// A range query that ends in the gap between two objects reads the first object, then
/// one successor step to learn that the next object starts past the range, and nothing
/// of the next object: exactly what a query ending at the first object's largest key
/// reads, plus that step.
#[test]
fn a_range_query_ending_between_objects_reads_nothing_of_the_next() {
    let (mut e, _) = two_objects(5, 6);
    let reads = |e: &Engine| e.nor.counters().reads.total();
    let query = |e: &mut Engine, hi: Key| {
        let before = reads(e);
        let mut out = Vec::new();
        e.range_query(10, hi, &mut out);
        assert_eq!(out, [10, 20, 30, 40, 50].map(|k| (k, k)), "10..={hi}");
        reads(e) - before
    };
    let to_last_key = query(&mut e, 50);
    let into_gap = query(&mut e, 55);
    let cur = e.search(super::search::Bound::Le(10)).preds[0];
    let before = reads(&e);
    let next = e.successor(&cur);
    assert_eq!(next.min, 60, "the next object");
    let step = reads(&e) - before;
    assert_eq!(into_gap, to_last_key + step);
}
/// On a small flash whose blocks fill past their levels' start offsets, probes meet
/// objects of lower levels too: every outcome is counted, and the counts add up (the
/// checker's rule).
#[test]
fn a_filling_flash_meets_every_probe_outcome() {
    let mut e = engine(small(10, 8), 1);
    lockstep(&mut e, (0..200u32).map(|i| (i * 7919 % 200, Some(i))));
    let p = e.probes;
    for (outcome, n) in [
        ("successful", p.successful),
        ("low", p.low),
        ("over", p.over),
        ("back", p.back),
        ("null", p.null),
    ] {
        assert!(n > 0, "no {outcome} probe: {p:?}");
    }
}
