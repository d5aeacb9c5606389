//! Properties of the log-block FTLs over random inputs (proptest; failures shrink to a
//! minimal write sequence).
//!
//! - O-FAST never erases more than FAST on the same input (Lee et al., TECS 2007, section
//!   3.6: the lazy merge only skips merges the eager one does).
//! - Every log-block scheme reads back what was written, whatever the write sequence.

use flashkit_core::{Geometry, Lpn, PageRange, Stamp};
use flashkit_device::{NandDevice, Stamps};
use flashkit_ftl::{Ftl, HybridConfig, HybridFtl, ReadOutcome};
use flashkit_ftl::{Inspect, Verify};
use proptest::prelude::*;

/// 24 logical blocks of `ppb` pages, 6 spare blocks.
fn geometry(ppb: u32) -> Geometry {
    Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(ppb)
        .blocks(30)
        .over_provisioning(0.25)
        .build()
        .expect("valid geometry")
}

/// A write sequence: (logical page as a fraction of the hot area, pages in the request).
fn writes() -> impl Strategy<Value = (u32, u32, bool, bool, Vec<(u32, u32)>)> {
    (
        prop::sample::select(vec![4u32, 8]),
        2u32..=5,
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec((0u32..10_000, 1u32..=3), 1..400),
    )
}

/// Erases of FAST or O-FAST on `sequence` after an optional sequential fill; every page is
/// read back against the latest write.
fn erases(lazy: bool, ppb: u32, config: HybridConfig, fill: bool, sequence: &[(u32, u32)]) -> u64 {
    let geometry = geometry(ppb);
    let device = NandDevice::<Stamps>::new(geometry);
    let mut ftl = HybridFtl::fast(device, config, lazy).expect("builds");
    let logical = geometry.logical_pages();
    let mut latest = vec![None; logical as usize];
    let mut seq = 0u64;
    if fill {
        for lpn in 0..logical {
            seq += 1;
            ftl.write(PageRange::one(Lpn(lpn)), seq).expect("fill");
            latest[lpn as usize] = Some(seq);
        }
    }
    let before = ftl.device().counters().erases.total();
    // A third of the logical space takes the writes, so blocks are rewritten often.
    let hot = logical / 3;
    for &(position, count) in sequence {
        let start = position % (hot - count);
        seq += 1;
        ftl.write(PageRange::new(Lpn(start), count), seq)
            .expect("write");
        for lpn in start..start + count {
            latest[lpn as usize] = Some(seq);
        }
    }
    ftl.check_invariants().expect("consistent");
    for lpn in 0..logical {
        let mut got = None;
        ftl.read(PageRange::one(Lpn(lpn)), &mut |_, outcome| {
            got = Some(outcome)
        })
        .expect("read");
        let want = match latest[lpn as usize] {
            Some(seq) => ReadOutcome::Mapped(Some(Stamp::new(Lpn(lpn), seq))),
            None => ReadOutcome::Unmapped,
        };
        assert_eq!(got, Some(want), "lpn {lpn}");
    }
    ftl.device().counters().erases.total() - before
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn o_fast_never_erases_more_than_fast(
        (ppb, log_blocks, sw_log_block, fill, sequence) in writes()
    ) {
        let config = HybridConfig {
            log_blocks,
            sw_log_block,
            ..HybridConfig::default()
        };
        let eager = erases(false, ppb, config, fill, &sequence);
        let lazy = erases(true, ppb, config, fill, &sequence);
        prop_assert!(lazy <= eager, "O-FAST erased {lazy} blocks, FAST {eager}");
    }
}
