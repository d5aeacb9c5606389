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
