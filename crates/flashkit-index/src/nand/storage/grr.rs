//! GRR, the group round robin storage scheme (Jin, Cho, Chung, IMCOM 2014, section 3).
//!
//! Index blocks are grouped into index block sets of `m` blocks (3.2). New nodes go round
//! robin across the open set (Fig. 3: node 1 to the first page of block 1, node 2 to the
//! first page of block 2, ...), so each block of the set fills `m` times more slowly than
//! under IPL's sequential placement and keeps free pages for its log area. A node's log
//! records go only to its own block (3.3). A block's log area starts at `k` pages and grows
//! a page at a time, while a page is free, up to the limit `l` (3.2, 3.5.2: "GRR dynamically
//! increases the number of log pages, just avoiding frequently erasing data blocks"); only a
//! full log area that cannot grow merges its block.
//!
//! What it is not: the paper gives no rule for changing `m` and `k` as the workload changes
//! ("m increases as the write workload and file size increase", 3.2; "we intend to study a
//! dynamic adaptation technique", 5). With `adaptive` set, these rules, ours, apply:
//!
//! - **The log limit balances merges against reads.** A log area of L pages that fills merges
//!   its block every L log flushes; a merge costs about `d (t_r + t_p) + t_e` for `d` live
//!   nodes (read and rewrite each, erase once), while every node fetch from the block reads
//!   on average L/2 extra log pages (`t_r` each). With `f` fetches per flush (counted per
//!   block since it was last written), the cost per flush `(d (t_r + t_p) + t_e) / L +
//!   f L t_r / 2` is least at `L* = sqrt(2 (d (t_r + t_p) + t_e) / (f t_r))`. A full log area
//!   grows while it is below `L*` (clamped to `[k, l]`): write-heavy blocks get long logs,
//!   read-heavy blocks merge early and are read with few log pages. This is Table 2's trade:
//!   fewer erases for more reads.
//! - **A set grows when its blocks run out of room.** A merge forced because the log area had
//!   no free page to grow into (data filled the block) spreads the block's live nodes over two
//!   fresh blocks of its set, round robin, so the set gains a block (up to
//!   `max_blocks_per_set`) and each half has room for its log area: this is where `m`
//!   increases with the write workload after the tree has been built.
//! - **New sets follow the pressure.** A new set is opened with twice the blocks of the last
//!   one if, since that one opened, more merges were forced for room than log areas grew
//!   (the room round robin left was not enough), with half as many if no log area needed to
//!   grow and none ran out of room (the spreading bought nothing but space, which Table 2
//!   says GRR pays), and with as many otherwise; always within `[1, max_blocks_per_set]`.
//!
//! Key decision: the rules only read counters the storage manager keeps anyway (per-block
//! fetches and flushes since the block was written, overflow outcomes since the last set
//! opened), so a policy stays a pure function of its view.

use super::{BlockView, MergeShape, Overflow, Placement, SetShape, SetView, StoreView};
use flashkit_core::Timing;
use serde::Serialize;

/// GRR's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Grr {
    /// Blocks per index block set (m).
    pub blocks_per_set: u32,
    /// Log pages a block's log area starts with (k).
    pub log_pages: u32,
    /// Most log pages a block's log area grows to (l).
    pub log_limit: u32,
    /// Adapt the log limit and the set size to the workload (the rules above).
    pub adaptive: bool,
    /// Largest set the adaptive rules build.
    pub max_blocks_per_set: u32,
    /// Operation costs, for the adaptive log limit.
    pub timing: Timing,
}

impl Grr {
    /// The paper's typical setting: m = 8, k = 4, l = 8 (Table 4, section 4.5), fixed.
    pub fn paper(timing: Timing) -> Grr {
        Grr {
            blocks_per_set: 8,
            log_pages: 4,
            log_limit: 8,
            adaptive: false,
            max_blocks_per_set: 16,
            timing,
        }
    }

    /// The log area a block may grow to.
    pub fn log_limit_for(&self, block: &BlockView) -> u32 {
        if !self.adaptive {
            return self.log_limit;
        }
        let t = &self.timing;
        let (tr, tp, te) = (t.read_ns as f64, t.program_ns as f64, t.erase_ns as f64);
        let merge = f64::from(block.live) * (tr + tp) + te;
        let f = block.fetches as f64 / block.flushes.max(1) as f64;
        let best = if f <= 0.0 {
            f64::INFINITY
        } else {
            (2.0 * merge / (f * tr)).sqrt()
        };
        let lo = self.log_pages.min(self.log_limit);
        (best.round().min(f64::from(self.log_limit)) as u32).clamp(lo, self.log_limit)
    }
}

impl Placement for Grr {
    fn name(&self) -> &'static str {
        "grr"
    }

    fn new_set(&self, view: &StoreView) -> SetShape {
        let mut blocks = self.blocks_per_set;
        if self.adaptive && view.last_set_blocks > 0 {
            let last = view.last_set_blocks;
            blocks = if view.merges_for_room > view.grows {
                last * 2
            } else if view.merges_for_room == 0 && view.grows == 0 {
                last / 2
            } else {
                last
            };
            blocks = blocks.clamp(1, self.max_blocks_per_set.max(1));
        }
        SetShape {
            blocks,
            log_pages: self.log_pages,
        }
    }

    fn place(&self, set: &SetView<'_>) -> Option<usize> {
        let n = set.blocks.len();
        let start = set.last.map_or(0, |last| last + 1);
        (0..n)
            .map(|i| (start + i) % n)
            .find(|&j| set.blocks[j].has_room_for_data())
    }

    fn on_log_full(&self, block: &BlockView) -> Overflow {
        if block.log_area >= self.log_limit_for(block) {
            Overflow::MergeAtLimit
        } else if block.can_grow_log() {
            Overflow::Grow
        } else {
            Overflow::MergeForRoom
        }
    }

    fn merge_shape(&self, block: &BlockView, reason: Overflow, _view: &StoreView) -> MergeShape {
        MergeShape {
            log_pages: self.log_pages,
            spread: self.adaptive
                && reason == Overflow::MergeForRoom
                && block.set_blocks < self.max_blocks_per_set
                && block.live > 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::NandPreset;

    fn block(data: u32, log_area: u32) -> BlockView {
        BlockView {
            pages_per_block: 64,
            data_pages: data,
            log_pages: log_area,
            log_area,
            base_log_area: 4,
            live: data,
            fetches: 0,
            flushes: 4,
            set_blocks: 8,
        }
    }

    /// Fig. 3: nodes are placed round robin over the set, one block after the other.
    #[test]
    fn placement_is_round_robin_and_skips_full_blocks() {
        let grr = Grr::paper(NandPreset::GRR_PAPER.timing);
        let mut blocks = vec![block(3, 4), block(3, 4), block(60, 4), block(2, 4)];
        let mut order = Vec::new();
        let mut last = None;
        for _ in 0..6 {
            let i = grr
                .place(&SetView {
                    blocks: &blocks,
                    last,
                })
                .expect("room");
            order.push(i);
            blocks[i].data_pages += 1;
            last = Some(i);
        }
        assert_eq!(
            order,
            vec![0, 1, 3, 0, 1, 3],
            "block 2 is full (60 + 4 of 64)"
        );
    }

    #[test]
    fn a_full_log_area_grows_to_the_limit_then_merges() {
        let grr = Grr::paper(NandPreset::GRR_PAPER.timing);
        assert_eq!(grr.on_log_full(&block(20, 4)), Overflow::Grow);
        assert_eq!(grr.on_log_full(&block(20, 8)), Overflow::MergeAtLimit);
        assert_eq!(grr.on_log_full(&block(59, 5)), Overflow::MergeForRoom);
    }

    #[test]
    fn the_adaptive_limit_falls_as_reads_outnumber_flushes() {
        let grr = Grr {
            adaptive: true,
            ..Grr::paper(NandPreset::GRR_PAPER.timing)
        };
        let mut b = block(56, 4);
        b.fetches = 0;
        assert_eq!(grr.log_limit_for(&b), 8, "no reads: grow to l");
        b.fetches = 4;
        assert_eq!(
            grr.log_limit_for(&b),
            8,
            "one fetch a flush: L* = 20.7, clamped"
        );
        b.fetches = 120;
        assert_eq!(
            grr.log_limit_for(&b),
            4,
            "30 fetches a flush: L* = 3.8, at least k"
        );
        b.fetches = 40;
        assert_eq!(grr.log_limit_for(&b), 7, "10 fetches a flush: L* = 6.6");
    }

    #[test]
    fn adaptive_sets_double_under_pressure_and_halve_without_it() {
        let grr = Grr {
            adaptive: true,
            ..Grr::paper(NandPreset::GRR_PAPER.timing)
        };
        let view = |grows, for_room| StoreView {
            free_blocks: 100,
            last_set_blocks: 8,
            grows,
            merges_for_room: for_room,
            merges_at_limit: 0,
        };
        assert_eq!(grr.new_set(&view(1, 5)).blocks, 16);
        assert_eq!(grr.new_set(&view(0, 0)).blocks, 4);
        assert_eq!(grr.new_set(&view(5, 1)).blocks, 8);
        assert_eq!(
            grr.new_set(&view(3, 0)).blocks,
            8,
            "growth alone keeps the size"
        );
        assert_eq!(
            grr.new_set(&view(0, 2)).blocks,
            16,
            "merges alone double it"
        );
        let fixed = Grr::paper(NandPreset::GRR_PAPER.timing);
        assert_eq!(fixed.new_set(&view(1, 5)).blocks, 8);
    }

    /// An adaptive merge for room spreads over two blocks only while the set is below its
    /// largest size and the block has more than one live node to spread.
    #[test]
    fn a_merge_spreads_only_below_the_largest_set_and_with_two_live_nodes() {
        let grr = Grr {
            adaptive: true,
            max_blocks_per_set: 8,
            ..Grr::paper(NandPreset::GRR_PAPER.timing)
        };
        let view = StoreView {
            free_blocks: 100,
            last_set_blocks: 8,
            grows: 0,
            merges_for_room: 0,
            merges_at_limit: 0,
        };
        let spreads = |set_blocks: u32, live: u32, reason: Overflow| {
            let b = BlockView {
                set_blocks,
                live,
                ..block(40, 8)
            };
            let shape = grr.merge_shape(&b, reason, &view);
            assert_eq!(shape.log_pages, grr.log_pages);
            shape.spread
        };
        assert!(spreads(7, 2, Overflow::MergeForRoom));
        assert!(!spreads(8, 2, Overflow::MergeForRoom), "at the largest set");
        assert!(!spreads(7, 1, Overflow::MergeForRoom), "one live node");
        assert!(!spreads(7, 2, Overflow::MergeAtLimit), "not for room");
        let fixed = Grr::paper(NandPreset::GRR_PAPER.timing);
        let b = BlockView {
            set_blocks: 1,
            ..block(40, 8)
        };
        assert!(!fixed.merge_shape(&b, Overflow::MergeForRoom, &view).spread);
    }
}
