//! Unit tests of the page FTL: the invariant checker catches each kind of corruption, and
//! configuration, range and wear-out errors are reported, not panics.

use super::*;
use crate::Ftl;
use crate::{Inspect, Verify};
use flashkit_core::{SimRng, SimRngExt};
use flashkit_device::{NandDevice, Stamps};
use rand::Rng;

type TestFtl = PageFtl<NandDevice<Stamps>, PageTable>;

fn geometry() -> Geometry {
    Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(8)
        .blocks(16)
        .over_provisioning(0.6)
        .build()
        .expect("valid geometry")
}

/// An FTL that has written every logical page three times (so GC has run).
fn busy_ftl() -> TestFtl {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        ..PageFtlConfig::default()
    };
    let mut ftl =
        PageFtl::with_page_table(NandDevice::<Stamps>::new(geometry()), config).expect("valid FTL");
    let logical = ftl.geometry().logical_pages();
    for round in 0..3u64 {
        for lpn in 0..logical {
            ftl.write(
                PageRange::one(Lpn((lpn * 7 + round as u32) % logical)),
                round * 1000 + u64::from(lpn),
            )
            .expect("write");
        }
    }
    assert!(
        ftl.stats().gc_runs > 0,
        "the fixture must have collected garbage"
    );
    ftl.check_invariants().expect("a healthy FTL passes");
    ftl
}

fn first_valid_page(ftl: &TestFtl) -> Ppn {
    (0..ftl.geometry.physical_pages())
        .map(Ppn)
        .find(|&p| ftl.is_valid(p))
        .expect("a valid page")
}

fn violation(ftl: &TestFtl) -> String {
    ftl.check_invariants()
        .expect_err("the corruption must be caught")
        .0
}

/// A frontier left on a sealed block, shared by two writers, or past its block's end.
#[test]
fn catches_a_frontier_that_is_not_its_own_active_block() {
    let mut ftl = busy_ftl();
    let (host_frontier, gc_frontier, wear_frontier) = (ftl.host, ftl.gc, ftl.wear);
    let host = ftl.host.block.expect("a host block is open");
    let sealed = (0..ftl.geometry.blocks())
        .map(BlockId)
        .find(|&b| ftl.blocks.kind(b) == BlockKind::Sealed)
        .expect("a sealed block");
    let restore = |ftl: &mut TestFtl| {
        (ftl.host, ftl.gc, ftl.wear) = (host_frontier, gc_frontier, wear_frontier)
    };
    ftl.gc = Frontier {
        block: Some(sealed),
        next: 0,
    };
    assert_eq!(
        violation(&ftl),
        format!("the gc frontier is at page 0 of {sealed}, which is Sealed")
    );
    restore(&mut ftl);
    ftl.wear = ftl.host;
    assert_eq!(
        violation(&ftl),
        format!("{host} is the frontier of more than one writer")
    );
    restore(&mut ftl);
    let ppb = ftl.geometry.pages_per_block();
    ftl.host.next = ppb + 1;
    assert_eq!(
        violation(&ftl),
        format!(
            "the host frontier is at page {} of {host}, which is Active",
            ppb + 1
        )
    );
    // A full frontier is allowed: the check passes, or (when the block was not full) the
    // device's count of its pages disagrees.
    ftl.host.next = ppb;
    match ftl.check_invariants() {
        Ok(()) => assert_eq!(host_frontier.next, ppb),
        Err(e) => assert!(e.0.contains("pages programmed"), "{e}"),
    }
    restore(&mut ftl);
    ftl.check_invariants().expect("restored");
}

#[test]
fn catches_a_valid_count_that_disagrees_with_the_reverse_map() {
    let mut ftl = busy_ftl();
    let block = ftl.geometry.block_of(first_valid_page(&ftl));
    ftl.blocks.remove_valid(block);
    assert!(
        violation(&ftl).contains("valid by the reverse map"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_a_valid_page_the_mapping_does_not_point_to() {
    let mut ftl = busy_ftl();
    let ppn = first_valid_page(&ftl);
    ftl.reverse[ppn.index()] = (ftl.reverse[ppn.index()] + 1) % ftl.geometry.logical_pages();
    assert!(
        violation(&ftl).contains("reverse map"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_an_oob_that_names_another_lpn() {
    let mut ftl = busy_ftl();
    let a = first_valid_page(&ftl);
    let b = (a.0 + 1..ftl.geometry.physical_pages())
        .map(Ppn)
        .find(|&p| ftl.is_valid(p))
        .expect("b");
    let (la, lb) = (ftl.reverse[a.index()], ftl.reverse[b.index()]);
    // Swap consistently in the reverse and forward maps: only the OOB now disagrees.
    ftl.reverse.swap(a.index(), b.index());
    ftl.mapping.update(Lpn(la), b, 1, &mut |_| {});
    ftl.mapping.update(Lpn(lb), a, 1, &mut |_| {});
    assert!(
        violation(&ftl).contains("the OOB of"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_a_block_both_free_and_in_use() {
    let mut ftl = busy_ftl();
    let sealed = ftl.blocks.sealed_blocks().next().expect("a sealed block");
    ftl.free.push_back(sealed);
    assert!(violation(&ftl).contains("the free list"));
}

#[test]
fn catches_a_block_on_the_free_list_twice() {
    let mut ftl = busy_ftl();
    let free = *ftl.free.front().expect("a free block");
    ftl.free.push_back(free);
    assert!(violation(&ftl).contains("twice"));
}

#[test]
fn catches_a_broken_greedy_index() {
    let mut ftl = busy_ftl();
    let sealed = ftl.blocks.sealed_blocks().next().expect("a sealed block");
    ftl.blocks.begin_collect(sealed);
    ftl.blocks.abort_collect(sealed);
    ftl.check_invariants()
        .expect("taking a block out and back is harmless");
    // A sealed block that fell out of the index.
    ftl.blocks.forget_bucket_entries(sealed);
    assert!(
        violation(&ftl).contains("greedy index"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_a_broken_cost_benefit_index() {
    let mut ftl = busy_ftl().with_policy(Box::new(crate::CostBenefit));
    ftl.check_invariants()
        .expect("the index is built from the blocks sealed when the policy arrives");
    let logical = ftl.geometry().logical_pages();
    for lpn in 0..logical {
        ftl.write(
            PageRange::one(Lpn((lpn * 5) % logical)),
            9000 + u64::from(lpn),
        )
        .expect("write");
    }
    ftl.check_invariants()
        .expect("collections under cost-benefit keep the index");
    let sealed = ftl.blocks.sealed_blocks().next().expect("a sealed block");
    ftl.blocks.forget_age_entries(sealed);
    assert!(
        violation(&ftl).contains("cost-benefit index"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_a_mapping_change_the_block_counts_missed() {
    let mut ftl = busy_ftl();
    let ppn = first_valid_page(&ftl);
    let lpn = Lpn(ftl.reverse[ppn.index()]);
    // Unmap a page without telling the block table.
    ftl.mapping.remove(PageRange::one(lpn), &mut |_| {});
    assert!(
        violation(&ftl).contains("valid pages counted"),
        "{}",
        violation(&ftl)
    );
}

#[test]
fn catches_a_mapping_into_a_free_block() {
    let mut ftl = busy_ftl();
    let free = *ftl.free.front().expect("a free block");
    let lpn = Lpn(ftl.reverse[first_valid_page(&ftl).index()]);
    let target = ftl.geometry.first_ppn(free);
    ftl.reverse[target.index()] = lpn.0;
    ftl.mapping.update(lpn, target, 1, &mut |_| {});
    let message = violation(&ftl);
    assert!(
        message.contains("Free") || message.contains("valid pages counted"),
        "{message}"
    );
}

#[test]
fn refuses_too_little_spare_space_with_a_clear_message() {
    let tight = Geometry::builder()
        .pages_per_block(8)
        .blocks(16)
        .over_provisioning(0.05)
        .build();
    let device = NandDevice::<Stamps>::new(tight.expect("valid"));
    let error = PageFtl::with_page_table(device, PageFtlConfig::default())
        .err()
        .expect("refused");
    assert!(
        error.to_string().contains("raise over-provisioning"),
        "{error}"
    );
}

#[test]
fn out_of_range_requests_are_errors() {
    let mut ftl = busy_ftl();
    let logical = ftl.geometry().logical_pages();
    let error = ftl
        .write(PageRange::new(Lpn(logical - 1), 2), 1)
        .expect_err("refused");
    assert!(matches!(error, FtlError::OutOfRange { .. }));
    assert!(ftl.trim(PageRange::new(Lpn(logical), 1)).is_err());
    assert!(
        ftl.read(PageRange::new(Lpn(logical), 1), &mut |_, _| {})
            .is_err()
    );
}

/// A device that wears out, during a host write or while garbage collection moves pages:
/// the write fails with no space, the state stays whole, and every write after it fails
/// the same way (a collection that ran out once sealed its full relocation block again on
/// the next write). Over 40 write orders, random and cyclic, both kinds of failure met.
#[test]
fn writes_after_wearing_out_keep_failing_cleanly() {
    let geometry = Geometry::builder()
        .page_size_bytes(4096)
        .pages_per_block(16)
        .blocks(40)
        .over_provisioning(0.3)
        .build()
        .expect("valid");
    let mut places = std::collections::BTreeSet::new();
    for order in 0..40u64 {
        let device = NandDevice::<Stamps>::new(geometry).with_endurance(2);
        let mut ftl = PageFtl::with_page_table(device, PageFtlConfig::default()).expect("valid");
        let logical = u64::from(ftl.geometry().logical_pages());
        let mut rng = SimRng::for_stream(order, "wear out");
        let mut seq = 0u64;
        let mut next = |seq: u64| {
            let page = if order % 2 == 0 {
                rng.random_range(0..logical)
            } else {
                seq * 13 % logical
            };
            Lpn(page as u32)
        };
        let error = loop {
            seq += 1;
            let lpn = next(seq);
            if let Err(error) = ftl.write(PageRange::one(lpn), seq) {
                break error;
            }
            assert!(seq < 1_000_000, "the device must wear out");
        };
        let FtlError::NoSpace(text) = &error else {
            panic!("order {order}: {error}")
        };
        places.insert(text.split(':').next().expect("a place").to_string());
        for _ in 0..3 {
            ftl.check_invariants()
                .unwrap_or_else(|e| panic!("order {order}, after {error}: {e}"));
            seq += 1;
            let lpn = next(seq);
            let again = ftl
                .write(PageRange::one(lpn), seq)
                .expect_err("still worn out");
            assert!(
                matches!(again, FtlError::NoSpace(_)),
                "order {order}: {again}"
            );
        }
    }
    assert_eq!(
        places.into_iter().collect::<Vec<_>>(),
        [
            "no free block is left for garbage collection",
            "no free block is left for host writes"
        ]
    );
}

#[test]
fn a_worn_out_device_reports_no_space_and_keeps_its_data() {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        wear_leveling_spread: None,
        ..PageFtlConfig::default()
    };
    let device = NandDevice::<Stamps>::new(geometry()).with_endurance(5);
    let mut ftl = PageFtl::with_page_table(device, config).expect("valid");
    let logical = ftl.geometry().logical_pages();
    let mut latest = vec![None; logical as usize];
    let mut seq = 0u64;
    let error = loop {
        seq += 1;
        let lpn = (seq * 13 % u64::from(logical)) as u32;
        match ftl.write(PageRange::one(Lpn(lpn)), seq) {
            Ok(()) => latest[lpn as usize] = Some(seq),
            Err(error) => break error,
        }
        assert!(seq < 1_000_000, "the device must wear out");
    };
    assert!(matches!(error, FtlError::NoSpace(_)), "{error}");
    assert!(ftl.stats().retired_blocks > 0);
    ftl.check_invariants()
        .expect("consistent after wearing out");
    for (lpn, expected) in latest.iter().enumerate() {
        let mut got = None;
        ftl.read(PageRange::one(Lpn(lpn as u32)), &mut |_, outcome| {
            got = Some(outcome)
        })
        .expect("read");
        let want = match expected {
            Some(seq) => ReadOutcome::Mapped(Some(Stamp::new(Lpn(lpn as u32), *seq))),
            None => ReadOutcome::Unmapped,
        };
        assert_eq!(got, Some(want), "lpn {lpn}");
    }
}

#[test]
fn wear_leveling_relocates_cold_blocks() {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        wear_leveling_spread: Some(4),
        ..PageFtlConfig::default()
    };
    let mut ftl =
        PageFtl::with_page_table(NandDevice::<Stamps>::new(geometry()), config).expect("valid");
    let logical = ftl.geometry().logical_pages();
    // Fill once (cold data), then hammer a handful of hot pages.
    for lpn in 0..logical {
        ftl.write(PageRange::one(Lpn(lpn)), u64::from(lpn))
            .expect("fill");
    }
    for seq in 0..20_000u64 {
        ftl.write(PageRange::one(Lpn((seq % 4) as u32)), 100_000 + seq)
            .expect("hot write");
    }
    let stats = ftl.stats();
    assert!(
        stats.wear_level_runs > 0,
        "static wear leveling must have acted"
    );
    // The pages it moved are the device's programs for wear leveling, counted apart (found
    // by mutation testing: the figure could be dropped from the stats unnoticed).
    let programs = ftl.device().counters().programs;
    assert_eq!(stats.wear_level_pages_moved, programs.wear_leveling);
    assert_eq!(stats.gc_pages_moved, programs.gc);
    let counts: Vec<u32> = (0..ftl.geometry().blocks())
        .map(|b| ftl.device().block_status(BlockId(b)).erase_count)
        .collect();
    let spread = counts.iter().max().expect("blocks") - counts.iter().min().expect("blocks");
    assert!(
        spread <= 4 + 2,
        "erase spread {spread} stays near the threshold: {counts:?}"
    );
    ftl.check_invariants().expect("consistent");
}

/// An FTL over EMT (a mapping whose lookup is a search, so the FTL keeps a validity bitmap)
/// that has overwritten and trimmed its way through several collections.
fn busy_extent_ftl() -> PageFtl<NandDevice<Stamps>, crate::mapping::Emt> {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        ..PageFtlConfig::default()
    };
    let device = NandDevice::<Stamps>::new(geometry());
    let logical = geometry().logical_pages();
    let mut ftl =
        PageFtl::new(device, crate::mapping::Emt::new(logical), config).expect("valid FTL");
    for round in 0..4u32 {
        for i in 0..logical / 2 {
            let lpn = (i * 7 + round) % (logical - 1);
            ftl.write(PageRange::new(Lpn(lpn), 2), u64::from(round * 1000 + i))
                .expect("write");
            if i % 5 == 0 {
                ftl.trim(PageRange::one(Lpn((lpn + 3) % logical)))
                    .expect("trim");
            }
        }
    }
    assert!(
        ftl.stats().gc_runs > 0,
        "the fixture must have collected garbage"
    );
    ftl
}

#[test]
fn an_extent_mapped_ftl_keeps_its_validity_bitmap_in_step_and_the_checker_reads_it() {
    let mut ftl = busy_extent_ftl();
    ftl.check_invariants().expect("a healthy FTL passes");
    let physical = ftl.geometry.physical_pages();
    for ppn in 0..physical {
        assert_eq!(
            ftl.valid.get(ppn),
            ftl.is_valid_by_mapping(Ppn(ppn)),
            "bit of page {ppn}"
        );
    }
    let invalid = (0..physical)
        .find(|&p| !ftl.valid.get(p))
        .expect("an invalid page");
    ftl.valid.set_run(invalid, 1);
    let message = ftl
        .check_invariants()
        .expect_err("the corrupt bit must be caught")
        .0;
    assert!(message.contains("validity bitmap"), "{message}");
}

/// The page FTL needs its GC threshold plus two spare blocks (the host and GC frontiers):
/// exactly that many is enough, one fewer is refused (found by mutation testing: the
/// boundary was untested, and `<=` passed every test).
#[test]
fn spare_blocks_of_the_threshold_plus_two_are_enough() {
    let config = PageFtlConfig {
        gc_threshold_blocks: 4,
        ..PageFtlConfig::default()
    };
    let geometry = |spare: u32| {
        Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(8)
            .logical_bytes(32 * 8 * 4096)
            .over_provisioning(f64::from(spare) / 32.0)
            .build()
            .expect("a valid geometry")
    };
    assert_eq!(geometry(6).spare_blocks(), 6);
    assert_eq!(check_config(&geometry(6), &config), Ok(()));
    let refused = check_config(&geometry(5), &config).expect_err("one short");
    assert!(
        refused
            .to_string()
            .contains("needs at least 6 spare blocks"),
        "{refused}"
    );
}

/// The bookkeeping heap reports print: the reverse map's 4 bytes a physical page, the
/// validity bits, the block table, each counted from the structure itself.
#[test]
fn bookkeeping_heap_bytes_add_up_their_parts() {
    let ftl = busy_ftl();
    let parts =
        (ftl.reverse.capacity() * 4) as u64 + ftl.valid.heap_bytes() + ftl.blocks.heap_bytes();
    assert_eq!(ftl.bookkeeping_heap_bytes(), parts);
    assert!(ftl.reverse.capacity() as u64 >= u64::from(ftl.geometry().physical_pages()));
    assert!(ftl.blocks.heap_bytes() > 0);
    // Over a searching mapping the validity bits are kept, and count too.
    let ftl = busy_extent_ftl();
    let parts =
        (ftl.reverse.capacity() * 4) as u64 + ftl.valid.heap_bytes() + ftl.blocks.heap_bytes();
    assert!(ftl.valid.heap_bytes() > 0);
    assert_eq!(ftl.bookkeeping_heap_bytes(), parts);
}

/// The bookkeeping estimate memory reports print is the block table's estimate plus what the
/// FTL allocates whole when it is built: the reverse map (as many entries as physical pages)
/// and, over a searching mapping only, the validity bits; each part measured on a built FTL.
#[test]
fn the_bookkeeping_estimate_is_the_block_tables_plus_the_maps_allocated_whole() {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        ..PageFtlConfig::default()
    };
    let g = geometry();
    let age_index = config.gc_policy.build().uses_age_index();
    let blocks = BlockTable::heap_estimate(g.blocks(), g.pages_per_block(), age_index);
    let plain = busy_ftl();
    assert_eq!(
        plain.valid.heap_bytes(),
        0,
        "no validity bits over the page table"
    );
    assert_eq!(
        TestFtl::bookkeeping_heap_estimate(&g, &config),
        blocks + (plain.reverse.capacity() * 4) as u64
    );
    let searching = busy_extent_ftl();
    assert!(searching.valid.heap_bytes() > 0);
    assert_eq!(
        PageFtl::<NandDevice<Stamps>, crate::mapping::Emt>::bookkeeping_heap_estimate(&g, &config),
        blocks + (searching.reverse.capacity() * 4) as u64 + searching.valid.heap_bytes()
    );
}

#[test]
fn the_ftl_keeps_the_configuration_it_was_built_with() {
    let config = PageFtlConfig {
        gc_policy: GcPolicy::CostBenefit,
        gc_threshold_blocks: 3,
        wear_leveling_spread: Some(5),
    };
    let ftl =
        PageFtl::with_page_table(NandDevice::<Stamps>::new(geometry()), config).expect("valid FTL");
    assert_eq!(*ftl.config(), config);
    assert_ne!(
        config,
        PageFtlConfig::default(),
        "a configuration unlike the default"
    );
}

/// Garbage collection runs until the free pool is back at the threshold, and no further:
/// once it has started, the host's block is taken from a pool of exactly the threshold, so
/// the pool holds one block less between collections, never fewer and never more.
#[test]
fn collection_stops_when_the_free_pool_is_back_at_the_threshold() {
    for threshold in [2u32, 3] {
        let config = PageFtlConfig {
            gc_threshold_blocks: threshold,
            wear_leveling_spread: None,
            ..PageFtlConfig::default()
        };
        let mut ftl = PageFtl::with_page_table(NandDevice::<Stamps>::new(geometry()), config)
            .expect("valid FTL");
        let logical = ftl.geometry().logical_pages();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..6 * logical {
            ftl.write(PageRange::one(Lpn((i * 7) % logical)), u64::from(i))
                .expect("write");
            if ftl.stats().gc_runs > 0 {
                seen.insert(ftl.free.len());
            }
        }
        assert!(ftl.stats().gc_runs > 0, "the workload must collect garbage");
        let expected = std::collections::BTreeSet::from([threshold as usize - 1]);
        assert_eq!(
            seen, expected,
            "free blocks seen with threshold {threshold}"
        );
    }
}

/// A victim policy that always chooses the sealed block holding the most valid pages.
struct Fullest;

impl VictimPolicy for Fullest {
    fn choose(&self, view: &BlockView<'_>) -> Option<BlockId> {
        view.sealed()
            .max_by_key(|b| (b.valid_pages, b.id.0))
            .map(|b| b.id)
    }
}

/// Collection that frees nothing (every victim full of valid pages) gives up with a clear
/// error after one round more than there are blocks, rather than looping forever.
#[test]
fn collection_that_makes_no_progress_gives_up_after_more_rounds_than_blocks() {
    let config = PageFtlConfig {
        gc_threshold_blocks: 2,
        wear_leveling_spread: None,
        ..PageFtlConfig::default()
    };
    let mut ftl = PageFtl::with_page_table(NandDevice::<Stamps>::new(geometry()), config)
        .expect("valid FTL")
        .with_policy(Box::new(Fullest));
    let logical = ftl.geometry().logical_pages();
    let (error, runs) = (0..4 * logical)
        .find_map(|i| {
            let before = ftl.stats().gc_runs;
            let result = ftl.write(PageRange::one(Lpn(i % logical)), u64::from(i));
            result
                .err()
                .map(|error| (error, ftl.stats().gc_runs - before))
        })
        .expect("collection must give up");
    assert!(
        error
            .to_string()
            .contains("garbage collection is making no progress"),
        "{error}"
    );
    assert_eq!(
        runs,
        u64::from(ftl.geometry().blocks()) + 1,
        "collections in the call that gave up"
    );
}

/// The read a partial-page write merges with tells the same outcome as a host read, page for
/// page, mapped or not, over the page table and over a searching mapping.
#[test]
fn a_read_for_merge_tells_what_a_host_read_tells() {
    fn outcomes<F: Ftl>(ftl: &mut F, merge: bool) -> Vec<(Lpn, ReadOutcome)> {
        let mut seen = Vec::new();
        let range = PageRange::new(Lpn(0), ftl.geometry().logical_pages());
        let mut sink = |lpn, outcome| seen.push((lpn, outcome));
        if merge {
            ftl.read_for_merge(range, &mut sink).expect("reads");
        } else {
            ftl.read(range, &mut sink).expect("reads");
        }
        seen
    }
    let mut plain = busy_ftl();
    let host = outcomes(&mut plain, false);
    assert!(
        host.iter()
            .any(|(_, o)| matches!(o, ReadOutcome::Mapped(_)))
    );
    assert_eq!(outcomes(&mut plain, true), host);
    let mut searching = busy_extent_ftl();
    let host = outcomes(&mut searching, false);
    assert!(
        host.iter()
            .any(|(_, o)| matches!(o, ReadOutcome::Mapped(_)))
    );
    assert!(host.iter().any(|(_, o)| matches!(o, ReadOutcome::Unmapped)));
    assert_eq!(outcomes(&mut searching, true), host);
}

fn state_hash(ftl: &TestFtl) -> u64 {
    let mut hasher = StateHasher::new();
    ftl.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the page FTL's state reaches its state hash, on which the determinism
/// promise rests: the mapping, each block's kind, valid count and erase count, the free
/// list, the device's counters and the FTL's clock. Each is changed alone, on a
/// fresh copy of the same busy FTL.
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    let base = state_hash(&busy_ftl());
    assert_eq!(
        base,
        state_hash(&busy_ftl()),
        "the same writes, the same hash"
    );
    type Change = (&'static str, fn(&mut TestFtl));
    let changes: [Change; 7] = [
        ("mapping", |ftl| {
            let ppn = first_valid_page(ftl);
            let lpn = Lpn(ftl.reverse[ppn.index()]);
            let other = Lpn((lpn.0 + 1) % ftl.geometry.logical_pages());
            ftl.mapping.update(other, ppn, 1, &mut |_| {});
        }),
        ("block kind", |ftl| {
            let block = *ftl.free.front().expect("a free block");
            ftl.blocks.activate(block);
        }),
        ("valid count", |ftl| {
            let block = ftl.host.block.expect("the host frontier has a block");
            ftl.blocks.add_valid(block, 1);
        }),
        ("erase count", |ftl| {
            let block = *ftl.free.front().expect("a free block");
            ftl.device
                .erase(block, flashkit_core::Cause::Gc)
                .expect("a free block erases");
        }),
        ("free list", |ftl| {
            let sealed = ftl.geometry.block_of(first_valid_page(ftl));
            ftl.free.push_back(sealed);
        }),
        ("device counters", |ftl| {
            ftl.read(PageRange::one(Lpn(0)), &mut |_, _| {})
                .expect("read");
        }),
        ("clock", |ftl| ftl.clock += 1),
    ];
    for (part, change) in changes {
        let mut ftl = busy_ftl();
        change(&mut ftl);
        assert_ne!(
            state_hash(&ftl),
            base,
            "{part} does not reach the state hash"
        );
    }
    // Each block's erase count on its own: the same number of erases (so the same
    // counters) on two different free blocks of a fresh FTL.
    let erased = |nth: usize| {
        let mut ftl = PageFtl::with_page_table(
            NandDevice::<Stamps>::new(geometry()),
            PageFtlConfig::default(),
        )
        .expect("valid FTL");
        let block = ftl.free[nth];
        ftl.device
            .erase(block, flashkit_core::Cause::Gc)
            .expect("a free block erases");
        state_hash(&ftl)
    };
    assert_ne!(
        erased(0),
        erased(1),
        "which block was erased reaches the state hash"
    );
}
