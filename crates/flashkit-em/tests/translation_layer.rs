//! The translation layer against a plain map of page contents, under seeded random writes,
//! reads and discards, with and without a capacity bound (which forces compaction).

use flashkit_core::{SimRng, SimRngExt};
use flashkit_em::io::{BlockIo, BlockSizes, SimIo};
use flashkit_em::tl::TranslationLayer;
use rand::Rng;
use std::collections::BTreeMap;

const PAGE: usize = 512;

fn run(seed: u64, buffers: usize, capacity: Option<u32>, pages: u64, ops: usize) -> u64 {
    let sim = SimIo::with_data(BlockSizes::new(PAGE as u64, 4096).expect("valid"));
    let mut tl = TranslationLayer::new(sim, buffers, capacity).expect("tl");
    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    let mut rng = SimRng::for_stream(seed, "tl-model");
    for op in 0..ops {
        let start = rng.random_range(0..pages);
        let len = rng.random_range(1..=4u64).min(pages - start);
        match rng.random_range(0..10) {
            0..=4 => {
                let mut data = vec![0u8; len as usize * PAGE];
                rng.fill(&mut data[..]);
                tl.write(start * PAGE as u64, &data).expect("write");
                for (i, page) in data.chunks(PAGE).enumerate() {
                    model.insert(start + i as u64, page.to_vec());
                }
            }
            5..=8 => {
                let mut data = vec![0xAAu8; len as usize * PAGE];
                tl.read(start * PAGE as u64, &mut data).expect("read");
                for (i, page) in data.chunks(PAGE).enumerate() {
                    let lpn = start + i as u64;
                    match model.get(&lpn) {
                        Some(expected) => {
                            assert_eq!(page, &expected[..], "seed {seed} op {op} page {lpn}")
                        }
                        None => assert!(page.iter().all(|&b| b == 0), "seed {seed} op {op}"),
                    }
                }
            }
            _ => {
                tl.discard(start * PAGE as u64, len * PAGE as u64)
                    .expect("discard");
                for lpn in start..start + len {
                    model.remove(&lpn);
                }
            }
        }
        if op % 97 == 0 {
            tl.check_invariants()
                .unwrap_or_else(|e| panic!("seed {seed} op {op}: {e}"));
        }
    }
    tl.check_invariants().expect("final invariants");
    let device = tl.inner().stats();
    assert_eq!(
        device.write_bytes % 4096,
        0,
        "only whole B_w blocks reach the device"
    );
    tl.tl_stats().compactions
}

#[test]
fn unbounded_layer_matches_a_plain_map() {
    for seed in 0..6 {
        assert_eq!(run(seed, 1 + seed as usize % 3, None, 200, 3000), 0);
    }
}

#[test]
fn bounded_layer_compacts_and_still_matches() {
    // 64 logical pages in at most 12 blocks of 8: the layer must compact to keep going.
    for seed in 10..16 {
        assert!(
            run(seed, 2, Some(12), 64, 4000) > 0,
            "seed {seed} never compacted"
        );
    }
}
