//! Log-block victim policies: pure choices over a read-only view of the log slots.
//!
//! - [`BastVictim`]: the paper's reading of BAST's unstated policy (Lee et al., TECS 2007,
//!   section 3.7): (1) a write whose dedicated log block is full replaces that block (the
//!   scheme handles this case before asking); (2) otherwise a log block that can be switched
//!   (full and written in order); (3) otherwise round robin over the slots.
//! - [`RoundRobin`]: FAST's RW log blocks are replaced in the order they were filled
//!   (section 3.4, "the first block of the RW log block list"), which the scheme keeps as a
//!   queue; the policy takes its front.

use super::log::LogSlot;

/// What a log-block victim policy may look at.
pub struct LogView<'a> {
    slots: &'a [LogSlot],
    pages_per_block: u32,
}

impl<'a> LogView<'a> {
    /// A view of `slots`, whose blocks have `pages_per_block` pages.
    pub fn new(slots: &'a [LogSlot], pages_per_block: u32) -> Self {
        LogView {
            slots,
            pages_per_block,
        }
    }

    /// Whether slot `i` holds a block that a switch could replace: full and written in order.
    pub fn switchable(&self, i: usize) -> bool {
        let slot = &self.slots[i];
        slot.block.is_some() && slot.written == self.pages_per_block && slot.in_order
    }

    /// Number of slots.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }
}

/// BAST's victim when the incoming page's logical block has no log block and every slot is
/// in use: the first switchable slot from the round-robin position, else the slot at that
/// position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BastVictim {
    /// The next slot in round-robin order.
    pub next: u32,
}

/// A victim choice and whether it used the round-robin rule (which then advances).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The slot to replace.
    pub slot: u32,
    /// Chosen by the round-robin rule.
    pub round_robin: bool,
}

impl BastVictim {
    /// Choose among the slots of `view` (all in use).
    pub fn choose(&self, view: &LogView<'_>) -> Choice {
        let n = view.slot_count();
        let start = self.next as usize % n;
        let switchable = (0..n)
            .map(|i| (start + i) % n)
            .find(|&i| view.switchable(i));
        match switchable {
            Some(slot) => Choice {
                slot: slot as u32,
                round_robin: false,
            },
            None => Choice {
                slot: start as u32,
                round_robin: true,
            },
        }
    }

    /// The policy after `choice` was carried out.
    pub fn after(self, choice: Choice, slots: u32) -> BastVictim {
        if choice.round_robin {
            BastVictim {
                next: (choice.slot + 1) % slots,
            }
        } else {
            self
        }
    }
}

/// FAST's RW victim: the block filled longest ago.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundRobin;

impl RoundRobin {
    /// The front of the fill-order queue.
    pub fn choose(&self, fill_order: &std::collections::VecDeque<u32>) -> Option<u32> {
        fill_order.front().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::BlockId;

    fn slot(written: u32, in_order: bool) -> LogSlot {
        LogSlot {
            block: Some(BlockId(1)),
            written,
            owner: Some(0),
            in_order,
        }
    }

    #[test]
    fn bast_prefers_a_switchable_block_then_round_robin() {
        let slots = [slot(4, false), slot(2, true), slot(4, true)];
        let view = LogView::new(&slots, 4);
        let policy = BastVictim { next: 0 };
        let choice = policy.choose(&view);
        assert_eq!(
            choice,
            Choice {
                slot: 2,
                round_robin: false
            }
        );
        assert_eq!(policy.after(choice, 3), policy, "rule 2 does not advance");
        let slots = [slot(4, false), slot(2, true), slot(3, true)];
        let view = LogView::new(&slots, 4);
        let choice = BastVictim { next: 1 }.choose(&view);
        assert_eq!(
            choice,
            Choice {
                slot: 1,
                round_robin: true
            }
        );
        assert_eq!(BastVictim { next: 1 }.after(choice, 3).next, 2);
    }
}
