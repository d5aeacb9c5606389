//! The invariant checkers of the hybrid FTLs, each shown to fire: a healthy FTL's state is
//! corrupted in one place and the checker must name that condition. One test per condition,
//! so that a checker disabled or walking the wrong pages fails a test (found by mutation
//! testing: `Core::check_stamp`, `Core::check_log_blocks`, the cycle guard of
//! `Core::check_lists`, BAST's and the block-mapped FTL's checks could all be turned off
//! with every test passing).
//!
//! Several log slots are used, and corruptions are placed in slots 2 and 3, so that a
//! checker that walked the pages of slot 0 or 1 instead, or none at all, misses them.
//!
//! Not tested here: FAST's `check_sw` walks `sw * ppb..sw * ppb + written`, and the SW log
//! block is always slot 0 (`Fast::new`, the only place `sw` is set), so `sw / ppb` there
//! gives the same pages: mutants that swap `*` for `/` in that range are equivalent. The
//! SW block's own checks are exercised in `tests.rs`.

use super::log::{Entry, LogArea, NONE};
use super::*;
use crate::{Ftl, Verify};
use flashkit_core::Stamp;
use flashkit_device::{NandDevice, Stamps};

type Dev = NandDevice<Stamps>;

/// Pages per block of [`geometry`].
const PPB: u32 = 4;

/// 16 logical blocks of 4 pages and 8 spare blocks: room for 7 log blocks.
fn geometry() -> Geometry {
    let geometry = Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(PPB)
        .blocks(24)
        .over_provisioning(0.5)
        .build()
        .expect("valid geometry");
    assert_eq!(geometry.logical_pages(), 64, "16 logical blocks");
    geometry
}

fn config(log_blocks: u32, sw_log_block: bool) -> HybridConfig {
    HybridConfig {
        log_blocks,
        sw_log_block,
        ..HybridConfig::default()
    }
}

/// `ftl` with every logical page written once, in order: every data block is full, so
/// later writes collide and go to the log blocks.
fn filled<F: Ftl>(mut ftl: F) -> F {
    for lpn in 0..ftl.geometry().logical_pages() {
        ftl.write(PageRange::one(Lpn(lpn)), u64::from(lpn) + 1)
            .expect("fill");
    }
    ftl
}

/// Write each of `lpns` alone, sequence numbers from 100.
fn write_each<F: Ftl>(ftl: &mut F, lpns: &[u32]) {
    for (i, &lpn) in lpns.iter().enumerate() {
        ftl.write(PageRange::one(Lpn(lpn)), 100 + i as u64)
            .expect("write");
    }
}

/// FAST without the SW log block, 5 RW log blocks, on a full drive, after nine random
/// overwrites: RW slots 0 and 1 are full, slot 2 holds one page, slots 3 and 4 are unused.
fn fast_three_slots_in_use() -> FastFtl<Dev> {
    let mut ftl = filled(
        HybridFtl::fast(Dev::new(geometry()), config(5, false), false).expect("FAST builds"),
    );
    write_each(&mut ftl, &[5, 9, 13, 17, 21, 25, 29, 33, 37]);
    ftl.check_invariants().expect("healthy");
    let written: Vec<u32> = ftl.core.logs.slots().iter().map(|s| s.written).collect();
    assert_eq!(written, [4, 4, 1, 0, 0], "pages written per slot");
    ftl
}

/// BAST with 4 log blocks on a full drive: slot 0 is lbn 1's log block, slot 1 lbn 2's,
/// slot 2 lbn 3's (two pages, offsets 1 and 2: not in order), slot 3 is unused.
fn bast_three_slots_in_use() -> BastFtl<Dev> {
    let mut ftl =
        filled(HybridFtl::bast(Dev::new(geometry()), config(4, true)).expect("BAST builds"));
    write_each(&mut ftl, &[5, 9, 13, 14]);
    ftl.check_invariants().expect("healthy");
    let owners: Vec<Option<u32>> = ftl.core.logs.slots().iter().map(|s| s.owner).collect();
    assert_eq!(owners, [Some(1), Some(2), Some(3), None], "slot owners");
    assert!(!ftl.core.logs.slot(2).in_order, "offset 1 at page 0");
    ftl
}

/// The violation `ftl`'s checker reports.
fn violation<F: Verify>(ftl: &F) -> String {
    ftl.check_invariants().expect_err("must be caught").0
}

mod core_checks {
    use super::*;

    /// A data page whose OOB names another logical page: lpn 0's bit is set on the page
    /// that was programmed as padding. `check_stamp`, called for data pages, fires.
    #[test]
    fn catches_a_data_page_whose_stamp_names_another_lpn() {
        let mut ftl =
            HybridFtl::fast(Dev::new(geometry()), config(3, true), false).expect("FAST builds");
        // Offset 2 of lbn 0, in place: offsets 0 and 1 are programmed as padding.
        ftl.write(PageRange::one(Lpn(2)), 1).expect("write");
        ftl.check_invariants().expect("healthy");
        ftl.core.flip_data(0);
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!("names lpn {} but the page holds lpn 0", u32::MAX)),
            "{msg}"
        );
    }

    /// A linked log page whose OOB names another logical page: page 1 of RW slot 2 is
    /// programmed with lpn 44's stamp, but the log area records lpn 45 there. The page
    /// walk of `check_log_blocks`, through `check_stamp`, fires.
    #[test]
    fn catches_a_log_page_whose_stamp_names_another_lpn() {
        let mut ftl = fast_three_slots_in_use();
        let block = ftl.core.logs.slot(2).block.expect("slot 2 holds a block");
        let ppn = ftl.core.geometry.ppn(block, 1);
        ftl.core
            .device
            .program(ppn, Stamp::new(Lpn(44), 1000), Cause::Host)
            .expect("program");
        ftl.core.logs.append(2, 45, 45 / PPB);
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!(
                "the OOB of {ppn} names lpn 44 but the page holds lpn 45"
            )),
            "{msg}"
        );
    }

    /// An unused log slot (slot 3) with a page that is not empty: `check_log_blocks`
    /// fires on the unused slot's pages.
    #[test]
    fn catches_an_unused_log_slot_with_a_page() {
        let mut ftl = fast_three_slots_in_use();
        ftl.core.logs.corrupt_state(3 * PPB + 1, Entry::Invalid);
        let msg = violation(&ftl);
        assert!(msg.contains("unused log slot 3 has pages"), "{msg}");
    }

    /// A page beyond a slot's write pointer that is not empty: page 2 of RW slot 2, which
    /// has one page written, marked invalid. `check_log_blocks` fires on the slot's pages.
    #[test]
    fn catches_a_log_page_state_that_disagrees_with_the_write_pointer() {
        let mut ftl = fast_three_slots_in_use();
        ftl.core.logs.corrupt_state(2 * PPB + 2, Entry::Invalid);
        let msg = violation(&ftl);
        assert!(
            msg.contains("log slot 2: page 2 is Invalid with 1 pages written"),
            "{msg}"
        );
    }

    /// A log page marked linked that is on no list: lpn 45's copy in RW slot 2, trimmed
    /// (its entry invalid, lbn 11's list empty), then marked linked again. The page count
    /// of `check_log_blocks` fires; no list walk would meet the page.
    #[test]
    fn catches_a_linked_log_page_on_no_list() {
        let mut ftl = fast_three_slots_in_use();
        let page = 2 * PPB;
        assert_eq!(ftl.core.logs.lpn(page), 37, "slot 2 holds lpn 37");
        ftl.trim(PageRange::one(Lpn(37))).expect("trim");
        ftl.check_invariants().expect("healthy");
        ftl.core.logs.corrupt_state(page, Entry::Linked);
        let msg = violation(&ftl);
        assert!(msg.contains("log pages are marked linked but"), "{msg}");
    }

    /// A written page of a slot marked empty: page 0 of RW slot 2 (an entry linked on
    /// lbn 9's list). `check_log_blocks` fires before the lists are walked.
    #[test]
    fn catches_a_written_log_page_marked_empty() {
        let mut ftl = fast_three_slots_in_use();
        ftl.core.logs.corrupt_state(2 * PPB, Entry::Empty);
        let msg = violation(&ftl);
        assert!(
            msg.contains("log slot 2: page 0 is Empty with 1 pages written"),
            "{msg}"
        );
    }

    /// A log block with a page more programmed than its slot says: the next page of slot
    /// 2's block programmed behind the log area's back. `check_log_blocks` fires.
    #[test]
    fn catches_a_log_block_programmed_beyond_its_slot() {
        let mut ftl = fast_three_slots_in_use();
        let block = ftl.core.logs.slot(2).block.expect("slot 2 holds a block");
        let ppn = ftl.core.geometry.ppn(block, 1);
        ftl.core
            .device
            .program(ppn, Stamp::new(Lpn(45), 1000), Cause::Host)
            .expect("program");
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!(
                "log slot 2: 1 pages written, but {block} has 2 programmed"
            )),
            "{msg}"
        );
    }

    /// Two slots holding one block: unused slot 3 opened on slot 2's block, whose role
    /// says slot 2. The roles check sees slot 2 hold it; `check_log_blocks` fires on
    /// slot 3.
    #[test]
    fn catches_a_log_slot_holding_another_slots_block() {
        let mut ftl = fast_three_slots_in_use();
        let block = ftl.core.logs.slot(2).block.expect("slot 2 holds a block");
        ftl.core.logs.open(3, block, None);
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!("log slot 3 holds {block}, which is Log(2)")),
            "{msg}"
        );
    }

    /// A cycle in a log list is caught where the walk first comes back to a page: that
    /// page's back link cannot name both the page before it on the first pass and the one
    /// before it now. Here lbn 15's list (the last list walked) loops from its tail back to
    /// its head, so the walk returns to the head after every linked entry has been
    /// counted, at the count of linked entries plus one: the back-link check fires there,
    /// and the cycle guard (more entries walked than linked plus one) must not pre-empt it.
    /// With a consistent count of linked entries every cycle is caught this way, before
    /// the guard's limit is passed.
    #[test]
    fn catches_a_cycle_in_a_log_list_at_its_back_link() {
        let mut ftl = filled(
            HybridFtl::fast(Dev::new(geometry()), config(3, false), false).expect("FAST builds"),
        );
        // RW slot 0: lpns 13, 14 (lbn 3), then 61, 62 (lbn 15) at log pages 2 and 3.
        write_each(&mut ftl, &[13, 14, 61, 62]);
        ftl.check_invariants().expect("healthy");
        assert_eq!(ftl.core.logs.linked(), 4);
        assert_eq!(ftl.core.logs.head(15), 3, "newest first");
        assert_eq!(ftl.core.logs.older(3), 2);
        assert_eq!(ftl.core.logs.older(2), NONE);
        ftl.core.logs.corrupt_older(2, 3);
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!(
                "log page 3: back link {NONE} where 2 was expected"
            )),
            "{msg}"
        );
    }
}

mod bast_checks {
    use super::*;

    /// An unused BAST slot with an owner: slot 3 given lbn 5. BAST's check fires (the
    /// shared checks do not look at owners).
    #[test]
    fn catches_an_unused_slot_with_an_owner() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.logs.corrupt_owner(3, 5);
        let msg = violation(&ftl);
        assert!(msg.contains("unused BAST slot 3 has an owner"), "{msg}");
    }

    /// A BAST log block with no owner: unused slot 3 opened on a free block for no
    /// logical block, as the shared machinery allows. BAST's check fires.
    #[test]
    fn catches_a_log_block_without_an_owner() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.open_log(3, None).expect("a free block");
        let msg = violation(&ftl);
        assert!(
            msg.contains("BAST log slot 3 has a block but no owner"),
            "{msg}"
        );
    }

    /// A slot whose owner does not name it back: slot 2 (lbn 3's) said to belong to lbn
    /// 5, which has no log block. BAST's check fires.
    #[test]
    fn catches_a_slot_whose_owner_names_no_slot() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.logs.corrupt_owner(2, 5);
        let msg = violation(&ftl);
        assert!(
            msg.contains(&format!(
                "BAST log slot 2 belongs to lbn 5, whose slot is {NONE}"
            )),
            "{msg}"
        );
    }

    /// A page of another logical block in a BAST log block: lpn 40 (lbn 10, whose data
    /// block is full) appended to slot 2, lbn 3's, through the shared machinery, so the
    /// stamps and lists stay consistent. BAST's check fires.
    #[test]
    fn catches_a_foreign_lpn_in_a_log_block() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.append_log(2, 40, 1000).expect("append");
        let msg = violation(&ftl);
        assert!(
            msg.contains("BAST log slot 2 (lbn 3) holds lpn 40 of another block"),
            "{msg}"
        );
    }

    /// An in-order flag its pages contradict: slot 2 holds offsets 1 and 2 at pages 0 and
    /// 1, but its flag is flipped to in order (a switch would then map them wrongly).
    /// BAST's check fires.
    #[test]
    fn catches_a_wrong_in_order_flag() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.logs.corrupt_in_order(2);
        let msg = violation(&ftl);
        assert!(
            msg.contains("BAST log slot 2: in-order flag true but its pages say false"),
            "{msg}"
        );
    }

    /// A logical block naming a slot it does not own: slot 2 retired by the shared
    /// machinery behind BAST's back (erased, freed, its entries invalidated), so lbn 3
    /// still names it. BAST's check fires.
    #[test]
    fn catches_a_logical_block_naming_a_slot_it_does_not_own() {
        let mut ftl = bast_three_slots_in_use();
        ftl.core.retire_log(2).expect("retire");
        let msg = violation(&ftl);
        assert!(
            msg.contains("lbn 3 names log slot 2, which it does not own"),
            "{msg}"
        );
    }
}

/// The block-mapped FTL given a log slot (an unused one, which the shared checks accept):
/// its own check fires, as it has no log blocks.
#[test]
fn catches_a_block_mapped_ftl_with_a_log_slot() {
    let mut ftl = HybridFtl::block(Dev::new(geometry())).expect("block FTL builds");
    write_each(&mut ftl, &[0, 1, 5, 0]);
    ftl.check_invariants().expect("healthy");
    let logical_blocks = ftl.core.logical_blocks();
    ftl.core.logs = LogArea::new(1, PPB, logical_blocks);
    let msg = violation(&ftl);
    assert!(msg.contains("the block-mapped FTL has log slots"), "{msg}");
}
