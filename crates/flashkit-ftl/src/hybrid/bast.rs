//! BAST, block-associative sector translation (Kim et al., IEEE TCE 2002, as described by
//! Lee et al., TECS 2007, section 2.2): a block-level map plus up to `N` log blocks, each
//! dedicated to one logical block. An overwrite goes to its block's log block; a full log
//! block written in order from offset 0 is *switched* with its data block; any other
//! replacement is a full merge (two erases: the data block and the log block). Victims follow
//! the policy the FAST paper assumes in section 3.7 ([`BastVictim`]).
//!
//! What it is not: BAST has no partial merge (the FAST paper introduces it, section 3.4).
//! Key decision: a write whose own log block is full replaces that block and then starts a
//! fresh log block for the write, so a merge happens every `pages_per_block` writes to one
//! hot block (section 2.4).

use super::LogScheme;
use super::log::NONE;
use super::machinery::Core;
use super::victim::{BastVictim, LogView};
use crate::{FtlError, FtlStats, InvariantViolation, ensure_invariant};
use flashkit_core::{Lpn, StateHasher};
use flashkit_device::FlashDevice;

/// The BAST scheme's own state.
#[derive(Clone, Debug)]
pub struct Bast {
    /// Per logical block: its log slot, or [`NONE`].
    slot_of: Vec<u32>,
    policy: BastVictim,
}

impl Bast {
    /// BAST over `logical_blocks` logical blocks.
    pub fn new(logical_blocks: u32) -> Self {
        Bast {
            slot_of: vec![NONE; logical_blocks as usize],
            policy: BastVictim::default(),
        }
    }

    /// Replace log block `slot`: switch it if it can be, else merge its owner.
    fn replace<D: FlashDevice>(&mut self, core: &mut Core<D>, slot: u32) -> Result<(), FtlError> {
        let entry = *core.logs.slot(slot);
        let owner = entry
            .owner
            .expect("invariant: every BAST log block has an owner");
        if entry.written == core.ppb && entry.in_order {
            core.promote(slot, None)?;
        } else {
            core.full_merge(owner, None, None)?;
            core.retire_log(slot)?;
        }
        self.slot_of[owner as usize] = NONE;
        Ok(())
    }
}

impl LogScheme for Bast {
    fn name(&self) -> &'static str {
        "bast"
    }

    fn collide<D: FlashDevice>(
        &mut self,
        core: &mut Core<D>,
        lpn: Lpn,
        seq: u64,
    ) -> Result<(), FtlError> {
        let lbn = core.lbn(lpn.0);
        let own = self.slot_of[lbn as usize];
        let slot = if own != NONE {
            if core.logs.slot(own).written < core.ppb {
                return core.append_log(own, lpn.0, seq);
            }
            // Rule (1): the dedicated log block is full.
            self.replace(core, own)?;
            // The merge may have left a shorter data block (its last pages trimmed), beyond
            // which the page no longer collides (Algorithm 1).
            if core.in_place(lbn, core.offset(lpn.0)) {
                core.counters.in_place_after_merge += 1;
                return core.write_in_place(lpn.0, seq);
            }
            own
        } else if let Some(unused) = core.logs.unused_slot() {
            unused
        } else {
            let slots = core.logs.slots().len() as u32;
            let choice = self
                .policy
                .choose(&LogView::new(core.logs.slots(), core.ppb));
            self.replace(core, choice.slot)?;
            self.policy = self.policy.after(choice, slots);
            choice.slot
        };
        core.open_log(slot, Some(lbn))?;
        self.slot_of[lbn as usize] = slot;
        core.append_log(slot, lpn.0, seq)
    }

    fn check<D: FlashDevice>(&self, core: &Core<D>) -> Result<(), InvariantViolation> {
        let ppb = core.ppb;
        for (i, slot) in core.logs.slots().iter().enumerate() {
            let i = i as u32;
            let Some(_) = slot.block else {
                ensure_invariant!(slot.owner.is_none(), "unused BAST slot {i} has an owner");
                continue;
            };
            let owner = slot.owner.ok_or_else(|| {
                InvariantViolation(format!("BAST log slot {i} has a block but no owner"))
            })?;
            ensure_invariant!(
                self.slot_of[owner as usize] == i,
                "BAST log slot {i} belongs to lbn {owner}, whose slot is {}",
                self.slot_of[owner as usize]
            );
            let mut in_order = true;
            for page in i * ppb..i * ppb + slot.written {
                let lpn = core.logs.lpn(page);
                ensure_invariant!(
                    lpn / ppb == owner,
                    "BAST log slot {i} (lbn {owner}) holds lpn {lpn} of another block"
                );
                in_order &= lpn % ppb == page - i * ppb;
            }
            ensure_invariant!(
                in_order == slot.in_order,
                "BAST log slot {i}: in-order flag {} but its pages say {in_order}",
                slot.in_order
            );
        }
        for (lbn, &slot) in self.slot_of.iter().enumerate() {
            if slot != NONE {
                ensure_invariant!(
                    core.logs.slot(slot).owner == Some(lbn as u32),
                    "lbn {lbn} names log slot {slot}, which it does not own"
                );
            }
        }
        Ok(())
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u32(self.policy.next);
    }

    fn stats(&self, _stats: &mut FtlStats) {}

    fn heap_bytes(&self) -> u64 {
        self.slot_of.capacity() as u64 * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BAST's own state in the hash is its round-robin pointer (which slot it evicts
    /// next): two BASTs that differ only there hash differently.
    #[test]
    fn the_round_robin_pointer_reaches_the_state_hash() {
        let hash = |bast: &Bast| {
            let mut hasher = StateHasher::new();
            bast.hash_state(&mut hasher);
            hasher.finish()
        };
        let base = Bast::new(8);
        let mut moved = Bast::new(8);
        moved.policy.next = 3;
        assert_ne!(hash(&base), hash(&moved));
    }
}
