//! Static wear leveling: when the erase-count spread between the most and least worn blocks
//! in service exceeds a threshold, relocate the data of the least-worn sealed block (cold
//! data that would otherwise pin it) so that the block rejoins the free pool.

use crate::page::blocks::BlockTable;
use flashkit_core::BlockId;

/// What a wear-leveling policy may look at.
pub struct WearView<'a> {
    blocks: &'a BlockTable,
}

impl<'a> WearView<'a> {
    pub(crate) fn new(blocks: &'a BlockTable) -> Self {
        WearView { blocks }
    }

    /// Lowest erase count among blocks in service.
    pub fn min_erase_count(&self) -> u32 {
        self.blocks.min_erase()
    }

    /// Highest erase count among blocks in service.
    pub fn max_erase_count(&self) -> u32 {
        self.blocks.max_erase()
    }

    /// Erases `block` has had.
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.blocks.erase_count(block)
    }

    /// The sealed block with the lowest erase count (lowest block number on ties). Linear in
    /// the number of blocks: call it only once the spread says to act.
    pub fn coldest_sealed(&self) -> Option<BlockId> {
        self.blocks
            .sealed_blocks()
            .min_by_key(|&b| (self.blocks.erase_count(b), b))
    }
}

/// A wear-leveling policy: a block whose data should move, or `None`.
pub trait WearLevelPolicy: Send {
    /// The block to relocate, if any.
    fn choose(&self, view: &WearView<'_>) -> Option<BlockId>;
}

/// Relocate the coldest sealed block when `max - min` erase counts exceeds `spread_threshold`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticWearLeveling {
    /// Allowed erase-count spread.
    pub spread_threshold: u32,
}

impl WearLevelPolicy for StaticWearLeveling {
    fn choose(&self, view: &WearView<'_>) -> Option<BlockId> {
        let max = view.max_erase_count();
        if max - view.min_erase_count() <= self.spread_threshold {
            return None;
        }
        // Only a block that is itself cold is worth moving: if the least-worn blocks are
        // free, they will take writes soon anyway.
        view.coldest_sealed()
            .filter(|&b| max - view.erase_count(b) > self.spread_threshold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Erase `block` `times` times (it holds no data meanwhile).
    fn wear(table: &mut BlockTable, block: u32, times: u32) {
        for t in 0..times {
            table.activate(BlockId(block));
            table.seal(BlockId(block), u64::from(t));
            table.begin_collect(BlockId(block));
            table.erased(BlockId(block));
        }
    }

    /// Blocks erased 5, 5, 3 and 2 times; block 2 holds data (sealed), block 3 is free.
    fn table() -> BlockTable {
        let mut table = BlockTable::new(4, 8);
        for (block, times) in [(0, 5), (1, 5), (2, 3), (3, 2)] {
            wear(&mut table, block, times);
        }
        table.activate(BlockId(2));
        table.add_valid(BlockId(2), 8);
        table.seal(BlockId(2), 100);
        table
    }

    #[test]
    fn the_view_reports_the_erase_counts() {
        let t = table();
        let view = WearView::new(&t);
        assert_eq!((view.min_erase_count(), view.max_erase_count()), (2, 5));
        assert_eq!(view.erase_count(BlockId(2)), 3);
        assert_eq!(view.coldest_sealed(), Some(BlockId(2)));
    }

    /// The spread is 3 (5 - 2), but the only sealed block is 3 erases old, 2 below the
    /// most worn: it moves when its own gap exceeds the threshold, not the spread alone.
    #[test]
    fn the_coldest_sealed_block_moves_only_past_the_threshold() {
        let t = table();
        let view = WearView::new(&t);
        let choose = |spread_threshold| StaticWearLeveling { spread_threshold }.choose(&view);
        assert_eq!(choose(3), None, "spread 3 is within 3");
        assert_eq!(choose(2), None, "block 2's gap is 2, not past 2");
        assert_eq!(choose(1), Some(BlockId(2)));
    }
}
