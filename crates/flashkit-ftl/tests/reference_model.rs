//! Every FTL in lock-step with the reference model under swarm-weighted random workloads.
//!
//! Together these tests run more than a million operations on every `cargo test`, across
//! geometries (tiny, power-of-two and odd block sizes, tight and generous spare space) and
//! every GC policy, with and without wear leveling, and the block-mapped and log-block FTLs
//! with few and many log blocks, with and without FAST's SW log block. Adding an FTL is one
//! line in `schemes()`.

use flashkit_core::{Geometry, Lpn, PageRange, StateHasher};
use flashkit_device::{NandDevice, Stamps};
use flashkit_ftl::reference::{self, HarnessConfig, HarnessFailure};
use flashkit_ftl::{
    AnyFtl, Ftl, FtlKind, FtlOptions, FullSw, GcPolicy, HybridConfig, InsertScheme, Inspect,
    PageFtlConfig, Simulated, Verify, VetConfig, VetNodes, VetSearch,
};

/// Every scheme under test, with the option variants worth covering.
fn schemes() -> Vec<(String, FtlKind, FtlOptions)> {
    let mut schemes = Vec::new();
    for gc_policy in GcPolicy::ALL {
        for wear_leveling_spread in [None, Some(3)] {
            let page = PageFtlConfig {
                gc_policy,
                gc_threshold_blocks: 2,
                wear_leveling_spread,
            };
            let name = format!("page/{gc_policy}/wl={wear_leveling_spread:?}");
            schemes.push((
                name,
                FtlKind::Page,
                FtlOptions {
                    page,
                    ..FtlOptions::default()
                },
            ));
        }
    }
    // The extent mappings under the same page FTL: one GC policy with wear leveling (the
    // mapping, not the policy, is what differs; tests/extent_ftl.rs covers the rest).
    let page = PageFtlConfig {
        gc_policy: GcPolicy::Greedy,
        gc_threshold_blocks: 2,
        wear_leveling_spread: Some(3),
    };
    schemes.push((
        "emt".into(),
        FtlKind::Emt,
        FtlOptions {
            page,
            ..FtlOptions::default()
        },
    ));
    for insert in InsertScheme::ALL {
        for nodes in VetNodes::ALL {
            let vet = VetConfig {
                insert,
                nodes,
                ..VetConfig::default()
            };
            schemes.push((
                format!("vet/{insert}/{nodes}"),
                FtlKind::Vet,
                FtlOptions {
                    page,
                    vet,
                    ..FtlOptions::default()
                },
            ));
        }
    }
    // Our guided search beside Algorithm 2 as published (the default above).
    schemes.push((
        "vet/bis/pf/guided".into(),
        FtlKind::Vet,
        FtlOptions {
            page,
            vet: VetConfig {
                search: VetSearch::Guided,
                ..VetConfig::default()
            },
            ..FtlOptions::default()
        },
    ));
    schemes.push(("block".into(), FtlKind::Block, FtlOptions::default()));
    // Log-block schemes: every test geometry has at least 6 spare blocks, room for up to 5
    // log blocks plus the merge block. Few log blocks make replacements frequent.
    // FAST's full SW block: merged as Algorithm 2 publishes (the default), and switched.
    let (merge, switch) = (FullSw::Merge, FullSw::Switch);
    let hybrid = [
        (FtlKind::Bast, 2, true, merge),
        (FtlKind::Bast, 5, true, merge),
        (FtlKind::Fast, 2, true, merge),
        (FtlKind::Fast, 4, true, merge),
        (FtlKind::Fast, 3, true, switch),
        (FtlKind::Fast, 3, false, merge),
        (FtlKind::OFast, 3, true, merge),
        (FtlKind::OFast, 2, true, switch),
        (FtlKind::OFast, 2, false, merge),
    ];
    for (kind, log_blocks, sw_log_block, full_sw) in hybrid {
        let options = FtlOptions {
            hybrid: HybridConfig {
                log_blocks,
                sw_log_block,
                full_sw,
            },
            ..FtlOptions::default()
        };
        let policy = if sw_log_block && kind != FtlKind::Bast {
            format!("/full-sw={full_sw}")
        } else {
            String::new()
        };
        schemes.push((
            format!("{kind}/lb={log_blocks}/sw={sw_log_block}{policy}"),
            kind,
            options,
        ));
    }
    schemes
}

fn geometries() -> Vec<(&'static str, Geometry)> {
    let build = |page: u32, ppb: u32, blocks: u32, op: f64| {
        Geometry::builder()
            .page_size_bytes(page)
            .pages_per_block(ppb)
            .blocks(blocks)
            .over_provisioning(op)
            .build()
            .expect("valid test geometry")
    };
    vec![
        ("tiny-4ppb", build(512, 4, 24, 0.35)),
        ("small-32ppb", build(4096, 32, 64, 0.15)),
        ("odd-24ppb", build(2048, 24, 40, 0.25)),
        ("tight-128ppb", build(4096, 128, 96, 0.07)),
    ]
}

fn run_one(
    kind: FtlKind,
    options: &FtlOptions,
    geometry: Geometry,
    seed: u64,
    config: &HarnessConfig,
) -> Result<reference::HarnessReport, HarnessFailure> {
    let device = NandDevice::<Stamps>::new(geometry);
    let mut ftl = AnyFtl::build(kind, device, options).expect("scheme builds on the test geometry");
    reference::run(&mut ftl, seed, config)
}

/// Whether to run the quick suite (`FLASHKIT_QUICK_TESTS=1`): the first seeds of each
/// cell only, a prefix of the full suite, so that whatever it catches the full suite
/// catches too. Mutation runs use it (scripts/mutants.sh); `cargo test` runs the full one.
fn quick() -> bool {
    std::env::var_os("FLASHKIT_QUICK_TESTS").is_some_and(|v| v == "1")
}

/// Runs every scheme `family` selects in lock-step with the reference model: 8 seeds on each
/// geometry (2 in the quick suite), 6,000 operations a run. Seeds are the outer loop, so that a scheme that goes
/// wrong fails on its first seed, not after every other scheme's eight.
fn lock_step(family: fn(FtlKind) -> bool) {
    let config = HarnessConfig {
        ops: 6_000,
        check_every: 500,
        allow_no_space: false,
    };
    let seeds_per_cell = if quick() { 2 } else { 8 };
    let schemes: Vec<_> = schemes()
        .into_iter()
        .filter(|(_, kind, _)| family(*kind))
        .collect();
    assert!(!schemes.is_empty(), "the family names no scheme");
    let mut total_ops = 0;
    let mut total_verified = 0;
    for seed in 0..seeds_per_cell {
        for (scheme, kind, options) in &schemes {
            for (geometry_name, geometry) in geometries() {
                let report = run_one(*kind, options, geometry, seed, &config)
                    .unwrap_or_else(|failure| panic!("{scheme} on {geometry_name}: {failure}"));
                total_ops += report.ops;
                total_verified += report.pages_verified;
            }
        }
    }
    println!(
        "reference model: {total_ops} operations, {total_verified} pages verified, 0 mismatches"
    );
    let cells = schemes.len() as u64 * geometries().len() as u64 * seeds_per_cell;
    assert_eq!(
        total_ops,
        cells * config.ops,
        "every run must reach its operation count (the three families together run more than a \
         million operations on every `cargo test`)"
    );
}

// Three tests, not one, so that the test harness runs them on every core.

#[test]
fn every_page_mapped_scheme_matches_the_reference_model() {
    lock_step(|kind| kind == FtlKind::Page);
}

#[test]
fn every_extent_mapping_matches_the_reference_model() {
    lock_step(|kind| matches!(kind, FtlKind::Emt | FtlKind::Vet));
}

#[test]
fn every_block_and_log_block_scheme_matches_the_reference_model() {
    lock_step(|kind| {
        matches!(
            kind,
            FtlKind::Block | FtlKind::Bast | FtlKind::Fast | FtlKind::OFast
        )
    });
}

#[test]
fn devices_that_wear_out_fail_cleanly_and_lose_nothing() {
    let config = HarnessConfig {
        ops: 200_000,
        check_every: 2_000,
        allow_no_space: true,
    };
    let geometry = geometries()[0].1;
    let (mut ran_out, mut failures_after) = (0, 0);
    for (scheme, kind, options) in schemes() {
        for seed in 0..4 {
            let device = NandDevice::<Stamps>::new(geometry).with_endurance(20);
            let mut ftl = AnyFtl::build(kind, device, &options).expect("builds");
            let report = reference::run(&mut ftl, seed, &config)
                .unwrap_or_else(|failure| panic!("{scheme}: {failure}"));
            ran_out += u32::from(report.ran_out_of_space);
            failures_after += report.no_space_failures.saturating_sub(1);
        }
    }
    assert!(ran_out > 0, "some runs must have worn the device out");
    assert!(
        failures_after > 0,
        "some ops after wearing out must have failed again"
    );
}

#[test]
fn the_same_seed_gives_the_same_state() {
    let config = HarnessConfig {
        ops: 3_000,
        check_every: 1_000,
        allow_no_space: false,
    };
    let (_, geometry) = geometries()[1];
    for (_, kind, options) in schemes() {
        let mut hashes = Vec::new();
        for _ in 0..2 {
            let mut ftl =
                AnyFtl::build(kind, NandDevice::<Stamps>::new(geometry), &options).expect("builds");
            reference::run(&mut ftl, 42, &config).expect("passes");
            let mut hasher = StateHasher::new();
            ftl.hash_state(&mut hasher);
            hashes.push(hasher.finish());
        }
        assert_eq!(hashes[0], hashes[1]);
    }
}

/// The harness must catch a wrong FTL: this one silently drops every write to one page.
#[test]
fn the_harness_catches_a_lost_write() {
    struct LosesWrites<F>(F);
    impl<F: Simulated> Ftl for LosesWrites<F> {
        fn geometry(&self) -> &Geometry {
            self.0.geometry()
        }
        fn read(
            &mut self,
            range: flashkit_core::PageRange,
            sink: &mut dyn FnMut(flashkit_core::Lpn, flashkit_ftl::ReadOutcome),
        ) -> Result<(), flashkit_ftl::FtlError> {
            self.0.read(range, sink)
        }
        fn write(
            &mut self,
            range: flashkit_core::PageRange,
            seq: u64,
        ) -> Result<(), flashkit_ftl::FtlError> {
            if range.start.0 == 3 && range.count == 1 && seq > 10 {
                return Ok(());
            }
            self.0.write(range, seq)
        }
        fn trim(&mut self, range: flashkit_core::PageRange) -> Result<(), flashkit_ftl::FtlError> {
            self.0.trim(range)
        }
    }

    impl<F: Simulated> Inspect for LosesWrites<F> {
        fn device(&self) -> &dyn flashkit_device::FlashDevice {
            self.0.device()
        }

        fn stats(&self) -> flashkit_ftl::FtlStats {
            self.0.stats()
        }

        fn mapping_memory(&self) -> flashkit_ftl::MappingMemory {
            self.0.mapping_memory()
        }
    }

    impl<F: Simulated> Verify for LosesWrites<F> {
        fn check_invariants(&self) -> Result<(), flashkit_ftl::InvariantViolation> {
            self.0.check_invariants()
        }

        fn hash_state(&self, hasher: &mut StateHasher) {
            self.0.hash_state(hasher)
        }
    }
    let (_, geometry) = geometries()[0];
    let config = HarnessConfig {
        ops: 20_000,
        check_every: 1_000,
        allow_no_space: false,
    };
    let caught = (0..20)
        .filter(|&seed| {
            let inner = AnyFtl::build(
                FtlKind::Page,
                NandDevice::<Stamps>::new(geometry),
                &FtlOptions::default().with_threshold(2),
            )
            .expect("builds");
            let mut ftl = LosesWrites(inner);
            match reference::run(&mut ftl, seed, &config) {
                Ok(_) => false,
                Err(failure) => {
                    assert!(
                        failure.to_string().contains("reproduce with seed"),
                        "{failure}"
                    );
                    true
                }
            }
        })
        .count();
    assert!(caught > 0, "no seed caught the lost write");
}

/// The harness must catch an erase count that goes down (wear forgotten, as a device model
/// that resets its counters on a remount would): this FTL is correct, but the device it
/// reports wears its first block on every write and, half way through, is replaced by a
/// fresh one.
#[test]
fn the_harness_catches_an_erase_count_going_down() {
    use flashkit_core::{BlockId, Cause};
    use flashkit_device::FlashDevice;
    struct ForgetsWear<F> {
        inner: F,
        shown: NandDevice<Stamps>,
        writes: u64,
    }
    impl<F: Simulated> Ftl for ForgetsWear<F> {
        fn geometry(&self) -> &Geometry {
            self.inner.geometry()
        }
        fn read(
            &mut self,
            range: flashkit_core::PageRange,
            sink: &mut dyn FnMut(flashkit_core::Lpn, flashkit_ftl::ReadOutcome),
        ) -> Result<(), flashkit_ftl::FtlError> {
            self.inner.read(range, sink)
        }
        fn write(
            &mut self,
            range: flashkit_core::PageRange,
            seq: u64,
        ) -> Result<(), flashkit_ftl::FtlError> {
            self.writes += 1;
            if self.writes == 2_000 {
                self.shown = NandDevice::new(*self.inner.geometry());
            } else if self.writes < 2_000 {
                self.shown
                    .erase(BlockId(0), Cause::Host)
                    .expect("the shown device does not wear out here");
            }
            self.inner.write(range, seq)
        }
        fn trim(&mut self, range: flashkit_core::PageRange) -> Result<(), flashkit_ftl::FtlError> {
            self.inner.trim(range)
        }
    }

    impl<F: Simulated> Inspect for ForgetsWear<F> {
        fn device(&self) -> &dyn FlashDevice {
            &self.shown
        }

        fn stats(&self) -> flashkit_ftl::FtlStats {
            self.inner.stats()
        }

        fn mapping_memory(&self) -> flashkit_ftl::MappingMemory {
            self.inner.mapping_memory()
        }
    }

    impl<F: Simulated> Verify for ForgetsWear<F> {
        fn check_invariants(&self) -> Result<(), flashkit_ftl::InvariantViolation> {
            self.inner.check_invariants()
        }

        fn hash_state(&self, hasher: &mut StateHasher) {
            self.inner.hash_state(hasher)
        }
    }
    let (_, geometry) = geometries()[1];
    let config = HarnessConfig {
        ops: 10_000,
        check_every: 500,
        allow_no_space: false,
    };
    let inner = AnyFtl::build(
        FtlKind::Page,
        NandDevice::<Stamps>::new(geometry),
        &FtlOptions::default().with_threshold(2),
    )
    .expect("builds");
    let mut ftl = ForgetsWear {
        inner,
        shown: NandDevice::new(geometry),
        writes: 0,
    };
    let failure = reference::run(&mut ftl, 3, &config).expect_err("the harness must notice");
    assert!(ftl.writes >= 2_000, "the test never reset the device");
    assert!(
        failure.message.contains("erase count of block 0 went down"),
        "{failure}"
    );
}

trait WithThreshold {
    fn with_threshold(self, blocks: u32) -> Self;
}
impl WithThreshold for FtlOptions {
    fn with_threshold(mut self, blocks: u32) -> Self {
        self.page.gc_threshold_blocks = blocks;
        self
    }
}

/// A trim, a write or a read of no pages changes nothing in any scheme, on a fresh drive
/// and on one holding data (an empty range is a caller's edge case, never a panic).
#[test]
fn an_empty_trim_changes_nothing() {
    let (_, geometry) = geometries()[0];
    let hash = |ftl: &AnyFtl<Stamps>| {
        let mut hasher = StateHasher::new();
        ftl.hash_state(&mut hasher);
        hasher.finish()
    };
    for (scheme, kind, options) in schemes() {
        let mut ftl =
            AnyFtl::build(kind, NandDevice::<Stamps>::new(geometry), &options).expect("builds");
        for written in [false, true] {
            if written {
                let pages = geometry.logical_pages().min(100);
                ftl.write(PageRange::new(Lpn(0), pages), 1).expect("write");
            }
            let before = (hash(&ftl), *ftl.device().counters(), ftl.stats());
            for lpn in [0, 5, geometry.logical_pages() - 1] {
                let empty = PageRange::new(Lpn(lpn), 0);
                ftl.trim(empty).unwrap_or_else(|e| panic!("{scheme}: {e}"));
                ftl.write(empty, 7)
                    .unwrap_or_else(|e| panic!("{scheme}: {e}"));
                let mut pages = 0;
                ftl.read(empty, &mut |_, _| pages += 1)
                    .unwrap_or_else(|e| panic!("{scheme}: {e}"));
                assert_eq!(pages, 0, "{scheme}");
            }
            let after = (hash(&ftl), *ftl.device().counters(), ftl.stats());
            assert_eq!(before, after, "{scheme}, written {written}");
        }
    }
}
