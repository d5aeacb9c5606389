//! In-Page Logging placement (GRR paper section 2.2, after Lee and Moon, SIGMOD 2007).
//!
//! Each erase block holds data pages and a fixed log area of `log_pages` pages (the paper's
//! IPL has one: "IPL's one-log-page-per-block scheme", and its cost model reads a node with
//! two page reads). New nodes fill one block after another ("IPL uses a sequential logging
//! strategy"); a node's log records go to its own block; when a block's log area is full the
//! block merges: its up-to-date nodes go to a fresh block and the old block is erased.
//!
//! What it is not: Lee and Moon's database pages with 512-byte log sectors written by partial
//! page programming. The device model programs a page once, so a flushed log sector takes a
//! whole log page (`docs/DESIGN.md`).
//!
//! Key decision: IPL is the storage manager's mechanism with the simplest choices: sets of
//! one block (so "round robin" is "fill, then take the next block") and a log area that never
//! grows. The test `ipl_is_grr_with_one_block_sets_and_no_growth` holds it to that.

use super::{BlockView, MergeShape, Overflow, Placement, SetShape, SetView, StoreView};
use serde::Serialize;

/// IPL's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Ipl {
    /// Log pages per block.
    pub log_pages: u32,
}

impl Default for Ipl {
    fn default() -> Self {
        Ipl { log_pages: 1 }
    }
}

impl Placement for Ipl {
    fn name(&self) -> &'static str {
        "ipl"
    }

    fn new_set(&self, _view: &StoreView) -> SetShape {
        SetShape {
            blocks: 1,
            log_pages: self.log_pages,
        }
    }

    fn place(&self, set: &SetView<'_>) -> Option<usize> {
        set.blocks.iter().position(|b| b.has_room_for_data())
    }

    fn on_log_full(&self, _block: &BlockView) -> Overflow {
        Overflow::MergeAtLimit
    }

    fn merge_shape(&self, _block: &BlockView, _reason: Overflow, _view: &StoreView) -> MergeShape {
        MergeShape {
            log_pages: self.log_pages,
            spread: false,
        }
    }
}
