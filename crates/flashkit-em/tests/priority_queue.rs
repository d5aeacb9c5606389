//! The external priority queue against `std::collections::BinaryHeap` under seeded random
//! mixes of pushes and pops (with many duplicate keys), on the simulator and on the
//! translation layer.

use flashkit_core::{SimRng, SimRngExt};
use flashkit_em::io::{BlockIo, BlockSizes, SimIo};
use flashkit_em::pq::ExternalPq;
use flashkit_em::tl::TranslationLayer;
use rand::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn run<I: BlockIo>(io: I, seed: u64, ops: usize) {
    let mut rng = SimRng::for_stream(seed, "pq-model");
    let heap_capacity = rng.random_range(16..200);
    let fan_in = rng.random_range(2..6);
    let key_range = if seed.is_multiple_of(2) { 50 } else { u64::MAX };
    let push_share = rng.random_range(0.5..0.8);
    let mut pq = ExternalPq::<u64, _>::new(io, heap_capacity, fan_in).expect("pq");
    let mut model = BinaryHeap::new();
    for op in 0..ops {
        if rng.random_bool(push_share) {
            let key = rng.random_range(0..key_range);
            pq.push(key).expect("push");
            model.push(Reverse(key));
        } else {
            let got = pq.pop().expect("pop");
            let want = model.pop().map(|Reverse(k)| k);
            assert_eq!(got, want, "seed {seed} op {op}");
        }
        assert_eq!(pq.len(), model.len() as u64);
    }
    while let Some(Reverse(want)) = model.pop() {
        assert_eq!(pq.pop().expect("pop"), Some(want), "seed {seed} drain");
    }
    assert_eq!(pq.pop().expect("pop"), None);
}

#[test]
fn matches_binary_heap_on_the_simulator() {
    for seed in 0..8 {
        let io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        run(io, seed, 20_000);
    }
}

#[test]
fn matches_binary_heap_on_the_translation_layer() {
    for seed in 100..103 {
        let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
        let tl = TranslationLayer::new(sim, 2, None).expect("tl");
        run(tl, seed, 20_000);
    }
}
