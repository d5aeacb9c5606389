//! The log area shared by BAST and FAST: `N` log-block slots and the sector-level mapping
//! table of the pages written into them (Lee et al., TECS 2007, sections 2.2 and 3.2).
//!
//! A slot is a place for one log block; it holds a physical block while the block is in use
//! as a log block. Every page written into a log block gets an entry: the logical page it
//! holds and its state. An entry is *linked* while it may still matter (it is the latest copy
//! of its page, or an older copy that no merge has dealt with yet: FAST's eager merge still
//! reacts to those) and *invalid* once a merge or a trim made it irrelevant (the paper's
//! "-1"). Linked entries of one logical block form a doubly linked list, newest first, so
//! that the latest copy of a page, and every page a merge of the block needs, is found by
//! walking that block's entries only, never by scanning the whole table.
//!
//! What this is not: it issues no flash operations; the FTL programs a page and then records
//! it here. Key decision: entries keep their logical page after invalidation, so that the
//! invariant checker can still see in which order a log block was written.

use flashkit_core::{BlockId, Geometry, Ppn, StateHasher};

/// No entry, no slot, no block.
pub const NONE: u32 = u32::MAX;

/// The state of one log page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Not written since the slot was opened.
    Empty,
    /// Written and still on its logical block's list.
    Linked,
    /// Written, then dealt with by a merge or a trim.
    Invalid,
}

impl Entry {
    fn code(self) -> u32 {
        match self {
            Entry::Empty => 0,
            Entry::Linked => 1,
            Entry::Invalid => 2,
        }
    }
}

/// One log-block slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogSlot {
    /// The physical block in use as this log block, if any.
    pub block: Option<BlockId>,
    /// Pages written into it (its write pointer).
    pub written: u32,
    /// The logical block it is dedicated to (BAST's log blocks, FAST's SW log block).
    pub owner: Option<u32>,
    /// Every page so far was written at the offset it has in its logical block (page `i`
    /// holds offset `i`): the condition for a switch once the block is full.
    pub in_order: bool,
}

impl LogSlot {
    const UNUSED: LogSlot = LogSlot {
        block: None,
        written: 0,
        owner: None,
        in_order: true,
    };
}

/// The log blocks and their sector-level mapping table.
#[derive(Clone, Debug)]
pub struct LogArea {
    ppb: u32,
    slots: Vec<LogSlot>,
    /// Per log page (`slot * ppb + page`): the logical page written there.
    lpn: Vec<u32>,
    state: Vec<Entry>,
    /// Per log page: the next older / newer linked entry of the same logical block.
    older: Vec<u32>,
    newer: Vec<u32>,
    /// Per logical block: its newest linked entry.
    head: Vec<u32>,
    linked: u64,
    /// Scratch: offsets seen while walking a list.
    seen: Vec<bool>,
}

impl LogArea {
    /// `slots` empty slots for blocks of `ppb` pages over `logical_blocks` logical blocks.
    pub fn new(slots: u32, ppb: u32, logical_blocks: u32) -> Self {
        let pages = slots as usize * ppb as usize;
        LogArea {
            ppb,
            slots: vec![LogSlot::UNUSED; slots as usize],
            lpn: vec![NONE; pages],
            state: vec![Entry::Empty; pages],
            older: vec![NONE; pages],
            newer: vec![NONE; pages],
            head: vec![NONE; logical_blocks as usize],
            linked: 0,
            seen: vec![false; ppb as usize],
        }
    }

    /// Every slot.
    pub fn slots(&self) -> &[LogSlot] {
        &self.slots
    }

    /// One slot.
    #[inline]
    pub fn slot(&self, slot: u32) -> &LogSlot {
        &self.slots[slot as usize]
    }

    /// The slot a log page belongs to.
    #[inline]
    pub fn slot_of(&self, page: u32) -> u32 {
        page / self.ppb
    }

    /// The logical page written at log page `page`.
    #[inline]
    pub fn lpn(&self, page: u32) -> u32 {
        self.lpn[page as usize]
    }

    /// The state of log page `page`.
    #[inline]
    pub fn state(&self, page: u32) -> Entry {
        self.state[page as usize]
    }

    /// The physical page of log page `page`.
    #[inline]
    pub fn ppn(&self, page: u32, geometry: &Geometry) -> Ppn {
        let slot = &self.slots[(page / self.ppb) as usize];
        let block = slot
            .block
            .expect("invariant: a log page belongs to a slot holding a block");
        geometry.ppn(block, page % self.ppb)
    }

    /// The newest linked entry of `lbn`, or [`NONE`].
    #[inline]
    pub fn head(&self, lbn: u32) -> u32 {
        self.head[lbn as usize]
    }

    /// The next older linked entry of the same logical block, or [`NONE`].
    #[inline]
    pub fn older(&self, page: u32) -> u32 {
        self.older[page as usize]
    }

    /// The next newer linked entry of the same logical block, or [`NONE`].
    pub fn newer(&self, page: u32) -> u32 {
        self.newer[page as usize]
    }

    /// Linked entries in the whole area.
    pub fn linked(&self) -> u64 {
        self.linked
    }

    /// The first slot holding no block.
    pub fn unused_slot(&self) -> Option<u32> {
        self.slots
            .iter()
            .position(|slot| slot.block.is_none())
            .map(|i| i as u32)
    }

    /// Start using `block` as the log block of `slot`, dedicated to `owner` if given.
    pub fn open(&mut self, slot: u32, block: BlockId, owner: Option<u32>) {
        let entry = &mut self.slots[slot as usize];
        assert!(entry.block.is_none(), "invariant: slot {slot} is unused");
        *entry = LogSlot {
            block: Some(block),
            owner,
            ..LogSlot::UNUSED
        };
    }

    /// Record that the next page of `slot` now holds `lpn` (of logical block `lbn`); the
    /// entry becomes the newest of its block. Returns the log page.
    pub fn append(&mut self, slot: u32, lpn: u32, lbn: u32) -> u32 {
        let ppb = self.ppb;
        let entry = &mut self.slots[slot as usize];
        debug_assert!(entry.block.is_some() && entry.written < ppb);
        let page = slot * ppb + entry.written;
        entry.in_order &= lpn % ppb == entry.written;
        entry.written += 1;
        self.lpn[page as usize] = lpn;
        self.state[page as usize] = Entry::Linked;
        let head = self.head[lbn as usize];
        self.older[page as usize] = head;
        self.newer[page as usize] = NONE;
        if head != NONE {
            self.newer[head as usize] = page;
        }
        self.head[lbn as usize] = page;
        self.linked += 1;
        page
    }

    /// Take a linked entry off its block's list: it is invalid from now on.
    pub fn unlink(&mut self, page: u32) {
        debug_assert_eq!(self.state[page as usize], Entry::Linked);
        let (older, newer) = (self.older[page as usize], self.newer[page as usize]);
        if newer == NONE {
            let lbn = self.lpn[page as usize] / self.ppb;
            self.head[lbn as usize] = older;
        } else {
            self.older[newer as usize] = older;
        }
        if older != NONE {
            self.newer[older as usize] = newer;
        }
        self.state[page as usize] = Entry::Invalid;
        self.older[page as usize] = NONE;
        self.newer[page as usize] = NONE;
        self.linked -= 1;
    }

    /// The log page holding the latest copy of `lpn`, if any.
    #[inline]
    pub fn latest(&self, lpn: u32) -> Option<u32> {
        let mut page = self.head[(lpn / self.ppb) as usize];
        while page != NONE {
            if self.lpn[page as usize] == lpn {
                return Some(page);
            }
            page = self.older[page as usize];
        }
        None
    }

    /// Invalidate every linked entry of `lbn`, except those in slot `keep`.
    pub fn invalidate_block(&mut self, lbn: u32, keep: Option<u32>) {
        let mut page = self.head[lbn as usize];
        while page != NONE {
            let older = self.older[page as usize];
            if keep != Some(page / self.ppb) {
                self.unlink(page);
            }
            page = older;
        }
    }

    /// Invalidate every linked entry of `lbn` whose offset lies in `[first, end)` (a trim).
    pub fn invalidate_offsets(&mut self, lbn: u32, first: u32, end: u32) {
        let mut page = self.head[lbn as usize];
        while page != NONE {
            let older = self.older[page as usize];
            let offset = self.lpn[page as usize] % self.ppb;
            if (first..end).contains(&offset) {
                self.unlink(page);
            }
            page = older;
        }
    }

    /// Whether `slot` holds the latest copy of some page of `lbn` (O-FAST's test: when it
    /// does not, every page of `lbn` in the slot has a newer copy elsewhere in the log).
    pub fn holds_latest(&mut self, slot: u32, lbn: u32) -> bool {
        self.seen.fill(false);
        let mut page = self.head[lbn as usize];
        while page != NONE {
            let offset = (self.lpn[page as usize] % self.ppb) as usize;
            if !self.seen[offset] {
                if page / self.ppb == slot {
                    return true;
                }
                self.seen[offset] = true;
            }
            page = self.older[page as usize];
        }
        false
    }

    /// The distinct logical blocks with linked entries in `slot`, ascending, into `out`.
    pub fn blocks_in(&self, slot: u32, out: &mut Vec<u32>) {
        out.clear();
        let first = slot * self.ppb;
        let written = self.slots[slot as usize].written;
        for page in first..first + written {
            if self.state[page as usize] == Entry::Linked {
                out.push(self.lpn[page as usize] / self.ppb);
            }
        }
        out.sort_unstable();
        out.dedup();
    }

    /// Stop using `slot`: invalidate what is still linked, forget its entries and return the
    /// block it held.
    pub fn close(&mut self, slot: u32) -> Option<BlockId> {
        let first = slot * self.ppb;
        let written = self.slots[slot as usize].written;
        for page in first..first + written {
            if self.state[page as usize] == Entry::Linked {
                self.unlink(page);
            }
            self.state[page as usize] = Entry::Empty;
            self.lpn[page as usize] = NONE;
        }
        let block = self.slots[slot as usize].block;
        self.slots[slot as usize] = LogSlot::UNUSED;
        block
    }

    /// The heap [`LogArea::new`] allocates (and [`LogArea::heap_bytes`] reports: nothing of
    /// it grows).
    pub fn heap_estimate(slots: u32, ppb: u32, logical_blocks: u32) -> u64 {
        let pages = u64::from(slots) * u64::from(ppb);
        u64::from(slots) * std::mem::size_of::<LogSlot>() as u64
            + pages * (4 + std::mem::size_of::<Entry>() as u64 + 4 + 4)
            + u64::from(logical_blocks) * 4
            + u64::from(ppb)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<LogSlot>()
            + self.lpn.capacity() * 4
            + self.state.capacity() * std::mem::size_of::<Entry>()
            + self.older.capacity() * 4
            + self.newer.capacity() * 4
            + self.head.capacity() * 4
            + self.seen.capacity()) as u64
    }

    /// Feed the slots and their entries to `hasher`.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        for slot in &self.slots {
            hasher.u32(slot.block.map_or(NONE, |b| b.0));
            hasher.u32(slot.written);
            hasher.u32(slot.owner.unwrap_or(NONE));
            hasher.u32(u32::from(slot.in_order));
        }
        hasher.u32s(&self.lpn);
        for state in &self.state {
            hasher.u32(state.code());
        }
        hasher.u32s(&self.head);
    }

    /// Point a page's back link nowhere (test corruption).
    #[cfg(test)]
    pub fn corrupt_back_link(&mut self, page: u32) {
        self.newer[page as usize] = NONE;
    }

    /// Give a slot another owner (test corruption).
    #[cfg(test)]
    pub fn corrupt_owner(&mut self, slot: u32, owner: u32) {
        self.slots[slot as usize].owner = Some(owner);
    }

    /// Set a log page's state, leaving its slot and lists alone (test corruption).
    #[cfg(test)]
    pub(crate) fn corrupt_state(&mut self, page: u32, state: Entry) {
        self.state[page as usize] = state;
    }

    /// Flip a slot's in-order flag (test corruption).
    #[cfg(test)]
    pub(crate) fn corrupt_in_order(&mut self, slot: u32) {
        let entry = &mut self.slots[slot as usize];
        entry.in_order = !entry.in_order;
    }

    /// Point a page's link to the next older entry at `older` (test corruption).
    #[cfg(test)]
    pub(crate) fn corrupt_older(&mut self, page: u32, older: u32) {
        self.older[page as usize] = older;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_newest_first_and_unlink_keeps_them_whole() {
        let mut area = LogArea::new(2, 4, 4);
        area.open(0, BlockId(7), None);
        area.open(1, BlockId(9), None);
        let a = area.append(0, 5, 1); // lbn 1 offset 1
        let b = area.append(0, 9, 2);
        let c = area.append(1, 5, 1);
        let d = area.append(1, 6, 1);
        assert_eq!(area.latest(5), Some(c));
        assert_eq!(area.head(1), d);
        assert_eq!(area.older(d), c);
        assert_eq!(area.older(c), a);
        area.unlink(c);
        assert_eq!(area.latest(5), Some(a), "the older copy is still linked");
        assert_eq!(area.older(d), a);
        assert_eq!(area.newer(a), d);
        assert!(area.holds_latest(0, 1));
        assert!(
            area.holds_latest(1, 1),
            "slot 1 holds the latest copy of lpn 6"
        );
        let mut blocks = Vec::new();
        area.blocks_in(0, &mut blocks);
        assert_eq!(blocks, vec![1, 2]);
        area.invalidate_block(1, Some(1));
        assert_eq!(area.head(1), d, "entries in the kept slot stay");
        assert_eq!(area.state(a), Entry::Invalid);
        assert_eq!(area.close(0), Some(BlockId(7)));
        assert_eq!(area.latest(9), None, "closing invalidates what was linked");
        assert_eq!(area.head(2), NONE);
        assert_eq!(area.linked(), 1);
        let _ = b;
    }

    #[test]
    fn in_order_tracks_pages_written_at_their_own_offset() {
        let mut area = LogArea::new(1, 4, 2);
        area.open(0, BlockId(0), Some(1));
        for lpn in [4, 5, 6] {
            area.append(0, lpn, 1);
        }
        assert!(area.slot(0).in_order);
        area.append(0, 4, 1);
        assert!(!area.slot(0).in_order, "page 3 holds offset 0");
    }

    fn hash(area: &LogArea) -> u64 {
        let mut hasher = StateHasher::new();
        area.hash_state(&mut hasher);
        hasher.finish()
    }

    /// Every part of the log area reaches the state hash of the hybrid FTLs: each slot's
    /// block, fill, owner and order, the logical page of each log page, its state, and the
    /// newest entry of each logical block. Each is changed alone on a copy.
    #[test]
    fn every_part_of_the_log_area_reaches_the_state_hash() {
        let mut area = LogArea::new(2, 4, 4);
        area.open(0, BlockId(7), Some(1));
        area.append(0, 5, 1);
        area.append(0, 9, 2);
        let base = hash(&area);
        type Change = (&'static str, fn(&mut LogArea));
        let changes: [Change; 8] = [
            ("slot block", |a| a.slots[0].block = Some(BlockId(8))),
            ("slot fill", |a| a.slots[0].written += 1),
            ("slot owner", |a| a.slots[0].owner = Some(2)),
            ("slot order", |a| a.slots[0].in_order = !a.slots[0].in_order),
            ("log page's logical page", |a| a.lpn[1] = 6),
            ("log page's state", |a| a.state[0] = Entry::Invalid),
            ("an empty page's state", |a| a.state[3] = Entry::Linked),
            ("a logical block's newest entry", |a| a.head[3] = 0),
        ];
        for (part, change) in changes {
            let mut changed = area.clone();
            change(&mut changed);
            assert_ne!(hash(&changed), base, "{part} does not reach the state hash");
        }
    }

    /// The heap figure against the allocations counted one by one, before and after the
    /// area is used (nothing of it grows), and the estimate equal to it: 3 slots of 4 pages
    /// over 16 logical blocks hold the slots, four 12-entry arrays of the log pages (the
    /// lpn, state, older and newer link), a 16-entry head array and 4 scratch flags.
    #[test]
    fn heap_bytes_count_every_allocation_and_the_estimate_is_exact() {
        let mut area = LogArea::new(3, 4, 16);
        assert_eq!(std::mem::size_of::<Entry>(), 1, "a state is a byte");
        let expected = 3 * std::mem::size_of::<LogSlot>()
            + 12 * (4 + std::mem::size_of::<Entry>() + 4 + 4)
            + 16 * 4
            + 4;
        assert_eq!(area.heap_bytes(), expected as u64);
        assert_eq!(LogArea::heap_estimate(3, 4, 16), expected as u64);
        area.open(1, BlockId(7), Some(2));
        for lpn in [8, 9, 8] {
            area.append(1, lpn, 2);
        }
        assert_eq!(area.heap_bytes(), expected as u64, "nothing grows");
    }
}
