//! The block-mapped FTL (Lee et al., TECS 2007, section 2.1; Kim and Lee's block mapping):
//! a logical block lives in one physical block at fixed page offsets. A write that can go in
//! place does; any other write (an overwrite) copies the block, with the new pages, to a free
//! block and erases the old one: a merge per request and logical block.
//!
//! What it is not: it has no log blocks, so `log_blocks` does not apply. Key decision: the
//! pages of one host request that fall into one logical block are merged together, one copy
//! and one erase for the lot, as a controller serving the request would.

use super::LogScheme;
use super::machinery::{Core, NewRun};
use crate::{FtlError, FtlStats, InvariantViolation};
use flashkit_core::{Lpn, StateHasher};
use flashkit_device::FlashDevice;

/// The block-mapping scheme.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockMapping;

impl LogScheme for BlockMapping {
    fn name(&self) -> &'static str {
        "block"
    }

    fn collide<D: FlashDevice>(
        &mut self,
        core: &mut Core<D>,
        lpn: Lpn,
        seq: u64,
    ) -> Result<(), FtlError> {
        let run = NewRun {
            first: core.offset(lpn.0),
            count: 1,
            seq,
        };
        core.full_merge(core.lbn(lpn.0), Some(run), None)
    }

    fn write_run<D: FlashDevice>(
        &mut self,
        core: &mut Core<D>,
        lbn: u32,
        run: NewRun,
    ) -> Result<(), FtlError> {
        if core.in_place(lbn, run.first) {
            for offset in run.first..run.first + run.count {
                core.write_in_place(lbn * core.ppb + offset, run.seq)?;
            }
            return Ok(());
        }
        core.full_merge(lbn, Some(run), None)
    }

    fn check<D: FlashDevice>(&self, core: &Core<D>) -> Result<(), InvariantViolation> {
        crate::ensure_invariant!(
            core.logs.slots().is_empty(),
            "the block-mapped FTL has log slots"
        );
        Ok(())
    }

    fn hash_state(&self, _hasher: &mut StateHasher) {}

    fn stats(&self, _stats: &mut FtlStats) {}

    fn heap_bytes(&self) -> u64 {
        0
    }
}
