//! Machinery shared by the block-mapped FTL, BAST and FAST: the block map, the data pages,
//! the free-block pool, the log area and the three ways a log block is replaced (Lee et al.,
//! TECS 2007, sections 2.2 and 3.4): a *switch* (a full log block written in order becomes
//! the data block), a *partial merge* (Fig. 7a: the missing pages are copied into the log
//! block, which then becomes the data block) and a *full merge* (the latest copy of every
//! page is copied to a free block, which becomes the data block).
//!
//! What this is not: it chooses nothing. Which log block to replace and when is the scheme's
//! decision (`bast.rs`, `fast.rs`); this module carries the decision out and keeps the
//! books.
//!
//! Key decision (in-order programming): the modelled NAND programs the pages of a block in
//! order, with no gaps, where the paper's 2005 small-block parts could program any erased
//! page. So a data page can be written in place only at or beyond its data block's write
//! pointer; pages skipped on the way are programmed as *padding* (no data), and a merge that
//! leaves a hole below its last page pads it too. On a drive whose data blocks are full, as
//! in the paper's examples, no padding happens; trims empty data blocks, so a workload with
//! trims pads. A padding program counts under the cause of the write that needed it (a
//! merge's as GC, an in-place write's as host), and `padding_programs` counts them all.
//!
//! Free blocks are taken least worn first ([`FreePool`]). The paper leaves wear leveling out
//! of scope (section 2.1); a first-in, first-out free list is not neutral here: BAST takes
//! two blocks and returns two per merge, so blocks settled into alternating roles and half
//! the free pool cycled as one-page log blocks (3,436 erases against a median of 124 after
//! preconditioning the default 1 GiB comparison), wearing blocks out.

use super::log::{LogArea, NONE};
use super::plan::{NEW, Plan, extract_bits, or_bits};
use crate::{FtlError, Mean};
use flashkit_core::{BlockId, Cause, Geometry, Lpn, PageRange, Ppn, Stamp};
use flashkit_device::{DeviceError, FlashDevice};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a padding page carries: no logical page.
pub const PADDING: Stamp = Stamp {
    lpn: Lpn(u32::MAX),
    seq: 0,
};

/// The erased blocks, taken least worn first (ties: lowest block number), so that merges
/// spread erases over the pool. Deterministic: the order depends on erase counts and block
/// numbers only.
#[derive(Clone, Debug, Default)]
pub struct FreePool {
    heap: BinaryHeap<Reverse<(u32, u32)>>,
}

impl FreePool {
    /// Add an erased block with its erase count.
    pub fn push(&mut self, block: BlockId, erase_count: u32) {
        self.heap.push(Reverse((erase_count, block.0)));
    }

    /// Take the least-worn block.
    pub fn pop(&mut self) -> Option<BlockId> {
        self.heap.pop().map(|Reverse((_, block))| BlockId(block))
    }

    /// Blocks in the pool.
    pub fn count(&self) -> usize {
        self.heap.len()
    }

    /// The blocks with the erase counts they were added with, least worn first.
    pub fn sorted(&self) -> Vec<(u32, BlockId)> {
        let mut all: Vec<_> = self
            .heap
            .iter()
            .map(|Reverse((count, block))| (*count, BlockId(*block)))
            .collect();
        all.sort_unstable();
        all
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.heap.capacity() * 8
    }
}

/// The most heap [`Core::heap_bytes`] reaches on `geometry` with `log_slots` slots: the
/// arrays [`Core::new`] allocates, the free pool at twice the blocks (a heap's growth by
/// doubling) and the merge scratch.
pub fn core_heap_estimate(geometry: &Geometry, log_slots: u32) -> u64 {
    let ppb = geometry.pages_per_block();
    let lbns = u64::from(geometry.logical_pages().div_ceil(ppb));
    let blocks = u64::from(geometry.blocks());
    let bits = (lbns * u64::from(ppb)).div_ceil(64) * 8;
    let plan = u64::from(ppb).div_ceil(64) * 16 + u64::from(ppb) * 4;
    lbns * 8
        + bits
        + blocks * std::mem::size_of::<Role>() as u64
        + 2 * blocks * 8
        + plan
        + u64::from(ppb) * 8
        + LogArea::heap_estimate(log_slots, ppb, lbns as u32)
}

/// The role of a physical block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Erased, on the free list.
    Free,
    /// The data block of a logical block.
    Data(u32),
    /// The log block of a slot.
    Log(u32),
    /// Worn out.
    Retired,
}

impl Role {
    /// A number for the state hash.
    pub fn code(self) -> u64 {
        match self {
            Role::Free => 0,
            Role::Data(lbn) => 1 << 32 | u64::from(lbn),
            Role::Log(slot) => 2 << 32 | u64::from(slot),
            Role::Retired => 3 << 32,
        }
    }
}

/// Pages of one host write that land in one logical block: offsets `first..first + count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewRun {
    /// First offset.
    pub first: u32,
    /// Pages.
    pub count: u32,
    /// Host write sequence number.
    pub seq: u64,
}

/// Event counts of the schemes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Switches: a full log block written in order became the data block.
    pub switches: u64,
    /// Partial merges (Fig. 7a).
    pub partial_merges: u64,
    /// Full merges (one per data block merged).
    pub full_merges: u64,
    /// Erases of data blocks caused by switches and merges.
    pub data_erases: u64,
    /// Erases of log blocks caused by merges.
    pub log_erases: u64,
    /// Pages copied by merges.
    pub pages_copied: u64,
    /// Padding pages programmed (see the module documentation).
    pub padding_programs: u64,
    /// Blocks retired after wearing out.
    pub retired: u64,
    /// Pages that collided, then, after the merge made for them had rewritten their block
    /// shorter (its last pages trimmed or never written), lay past its last page and were
    /// written in place. Algorithm 1 checks for a collision once, before the merge; in the
    /// paper's model a page collides only when it holds data, so such a page would not have
    /// collided at all: the check again keeps the two the same.
    pub in_place_after_merge: u64,
    /// Log blocks replaced, and the percentage of their pages written when replaced.
    pub utilisation: Mean,
}

/// The shared state of a block-mapped or log-block FTL.
pub struct Core<D> {
    /// The device.
    pub device: D,
    /// Its geometry.
    pub geometry: Geometry,
    /// Pages per block.
    pub ppb: u32,
    ppb_shift: Option<u32>,
    /// Per logical block: its data block, or [`NONE`].
    pub block_map: Vec<u32>,
    /// Per logical block: the next programmable offset of its data block.
    pub data_next: Vec<u32>,
    /// Per logical page: its data block's page holds its data (possibly superseded by a log
    /// copy). Cleared by a trim and for padding.
    bits: Vec<u64>,
    /// Per physical block: its role.
    pub roles: Vec<Role>,
    /// Erased blocks.
    pub free: FreePool,
    /// The log blocks (none for the block-mapped FTL).
    pub logs: LogArea,
    /// Event counts.
    pub counters: Counters,
    plan: Plan,
    moves: Vec<(Lpn, Ppn)>,
}

impl<D: FlashDevice> Core<D> {
    /// The state over a freshly erased `device` with `log_slots` log-block slots.
    pub fn new(device: D, log_slots: u32) -> Result<Self, FtlError> {
        let geometry = *device.geometry();
        let ppb = geometry.pages_per_block();
        for b in 0..geometry.blocks() {
            let status = device.block_status(BlockId(b));
            if status.programmed_pages != 0 || status.bad {
                return Err(FtlError::Config(format!(
                    "the device is not freshly erased: block {b} has programmed pages or is bad"
                )));
            }
        }
        let lbns = geometry.logical_pages().div_ceil(ppb);
        Ok(Core {
            ppb,
            ppb_shift: ppb.is_power_of_two().then(|| ppb.trailing_zeros()),
            block_map: vec![NONE; lbns as usize],
            data_next: vec![0; lbns as usize],
            bits: vec![0; (lbns as usize * ppb as usize).div_ceil(64)],
            roles: vec![Role::Free; geometry.blocks() as usize],
            free: {
                let mut pool = FreePool::default();
                for b in 0..geometry.blocks() {
                    pool.push(BlockId(b), 0);
                }
                pool
            },
            logs: LogArea::new(log_slots, ppb, lbns),
            counters: Counters::default(),
            plan: Plan::new(ppb),
            moves: Vec::with_capacity(ppb as usize),
            device,
            geometry,
        })
    }

    /// Logical blocks.
    pub fn logical_blocks(&self) -> u32 {
        self.block_map.len() as u32
    }

    /// The logical block of a logical page.
    #[inline(always)]
    pub fn lbn(&self, lpn: u32) -> u32 {
        match self.ppb_shift {
            Some(shift) => lpn >> shift,
            None => lpn / self.ppb,
        }
    }

    /// The offset of a logical page in its logical block.
    #[inline(always)]
    pub fn offset(&self, lpn: u32) -> u32 {
        match self.ppb_shift {
            Some(shift) => lpn & ((1 << shift) - 1),
            None => lpn % self.ppb,
        }
    }

    /// Whether the data block's page of `lpn` holds its data.
    #[inline(always)]
    pub fn has_data(&self, lpn: u32) -> bool {
        self.bits[(lpn >> 6) as usize] >> (lpn & 63) & 1 == 1
    }

    #[inline(always)]
    fn set_data(&mut self, lpn: u32, value: bool) {
        let word = &mut self.bits[(lpn >> 6) as usize];
        let mask = 1u64 << (lpn & 63);
        if value {
            *word |= mask;
        } else {
            *word &= !mask;
        }
    }

    /// The data bits, for the state hash.
    pub fn data_words(&self) -> &[u64] {
        &self.bits
    }

    /// Whether a page at `offset` of `lbn` can be programmed in place: the logical block has
    /// no data block yet, or the offset is at or beyond its write pointer.
    #[inline(always)]
    pub fn in_place(&self, lbn: u32, offset: u32) -> bool {
        self.block_map[lbn as usize] == NONE || offset >= self.data_next[lbn as usize]
    }

    /// The physical page holding the latest copy of `lpn`, if it has data.
    #[inline]
    pub fn locate(&self, lpn: u32) -> Option<Ppn> {
        let lbn = self.lbn(lpn);
        if self.logs.head(lbn) != NONE
            && let Some(page) = self.logs.latest(lpn)
        {
            return Some(self.logs.ppn(page, &self.geometry));
        }
        self.has_data(lpn).then(|| {
            let block = BlockId(self.block_map[lbn as usize]);
            self.geometry.ppn(block, self.offset(lpn))
        })
    }

    /// Take an erased block for `role`.
    pub fn take_free(&mut self, role: Role) -> Result<BlockId, FtlError> {
        let Some(block) = self.free.pop() else {
            return Err(FtlError::NoSpace(format!(
                "no free block is left for a merge or a new log block: {} of {} blocks retired \
                 after wearing out",
                self.counters.retired,
                self.geometry.blocks()
            )));
        };
        self.roles[block.index()] = role;
        Ok(block)
    }

    /// Erase a block a merge has emptied; a block that wears out is retired.
    pub fn erase(&mut self, block: BlockId, log: bool) -> Result<(), FtlError> {
        match self.device.erase(block, Cause::Gc) {
            Ok(()) => {
                self.roles[block.index()] = Role::Free;
                let erase_count = self.device.block_status(block).erase_count;
                self.free.push(block, erase_count);
                if log {
                    self.counters.log_erases += 1;
                } else {
                    self.counters.data_erases += 1;
                }
                Ok(())
            }
            Err(DeviceError::WornOut { .. }) => {
                self.roles[block.index()] = Role::Retired;
                self.counters.retired += 1;
                Ok(())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Program `lpn` in place in its data block (which the caller checked with
    /// [`Core::in_place`]), opening the data block and padding skipped pages as needed.
    pub fn write_in_place(&mut self, lpn: u32, seq: u64) -> Result<(), FtlError> {
        let (lbn, offset) = (self.lbn(lpn), self.offset(lpn));
        if self.block_map[lbn as usize] == NONE {
            let block = self.take_free(Role::Data(lbn))?;
            self.block_map[lbn as usize] = block.0;
            self.data_next[lbn as usize] = 0;
        }
        let block = BlockId(self.block_map[lbn as usize]);
        while self.data_next[lbn as usize] < offset {
            let ppn = self.geometry.ppn(block, self.data_next[lbn as usize]);
            self.device.program(ppn, PADDING, Cause::Host)?;
            self.counters.padding_programs += 1;
            self.data_next[lbn as usize] += 1;
        }
        let ppn = self.geometry.ppn(block, offset);
        self.device
            .program(ppn, Stamp::new(Lpn(lpn), seq), Cause::Host)?;
        self.set_data(lpn, true);
        self.data_next[lbn as usize] = offset + 1;
        Ok(())
    }

    /// Open `slot` with a free block, dedicated to `owner` if given.
    pub fn open_log(&mut self, slot: u32, owner: Option<u32>) -> Result<(), FtlError> {
        let block = self.take_free(Role::Log(slot))?;
        self.logs.open(slot, block, owner);
        Ok(())
    }

    /// Program `lpn` into the next page of log block `slot`.
    pub fn append_log(&mut self, slot: u32, lpn: u32, seq: u64) -> Result<(), FtlError> {
        let entry = self.logs.slot(slot);
        let block = entry
            .block
            .expect("invariant: appending to a slot that holds a block");
        let ppn = self.geometry.ppn(block, entry.written);
        self.device
            .program(ppn, Stamp::new(Lpn(lpn), seq), Cause::Host)?;
        let lbn = self.lbn(lpn);
        self.logs.append(slot, lpn, lbn);
        Ok(())
    }

    /// Replace log block `slot` after a merge has dealt with its pages: whatever is still
    /// linked is invalidated, the block erased.
    pub fn retire_log(&mut self, slot: u32) -> Result<(), FtlError> {
        let written = self.logs.slot(slot).written;
        self.note_replaced(written);
        let block = self
            .logs
            .close(slot)
            .expect("invariant: retiring a slot that holds a block");
        self.erase(block, true)
    }

    fn note_replaced(&mut self, written: u32) {
        let percent = 100.0 * f64::from(written) / f64::from(self.ppb);
        self.counters.utilisation.add(percent);
    }

    /// Unmap `range`: its log entries are invalidated and its data pages forgotten.
    pub fn trim(&mut self, range: PageRange) {
        let mut lpn = range.start.0;
        let end = range.start.0 + range.count;
        while lpn < end {
            let (lbn, first) = (self.lbn(lpn), self.offset(lpn));
            let count = (self.ppb - first).min(end - lpn);
            if self.logs.head(lbn) != NONE {
                self.logs.invalidate_offsets(lbn, first, first + count);
            }
            for page in lpn..lpn + count {
                self.set_data(page, false);
            }
            lpn += count;
        }
    }

    /// Plan the block of `lbn`: each page from the newest linked log copy outside slot
    /// `exclude`, else from the data block if its page holds data; `new` overrides both.
    fn gather(&mut self, lbn: u32, exclude: Option<u32>, new: Option<NewRun>) {
        let ppb = self.ppb;
        let plan = &mut self.plan;
        plan.over.fill(0);
        plan.new = new;
        extract_bits(&self.bits, lbn * ppb, ppb, &mut plan.data);
        let mut page = self.logs.head(lbn);
        while page != NONE {
            if exclude != Some(self.logs.slot_of(page)) {
                let offset = self.logs.lpn(page) % ppb;
                // Newest first: the first copy seen of a page is its latest.
                if !Plan::has(&plan.over, offset) {
                    Plan::set(&mut plan.over, offset);
                    plan.src[offset as usize] = page;
                }
            }
            page = self.logs.older(page);
        }
        if let Some(run) = new {
            for offset in run.first..run.first + run.count {
                Plan::set(&mut plan.over, offset);
                plan.src[offset as usize] = NEW;
            }
        }
    }

    /// Program pages `start..` of `dest` as planned, up to the last page with content and
    /// at least up to `min_end`; holes are padded. Returns the end offset.
    fn emit(&mut self, lbn: u32, dest: BlockId, start: u32, min_end: u32) -> Result<u32, FtlError> {
        let plan = std::mem::replace(&mut self.plan, Plan::new(0));
        let mut moves = std::mem::take(&mut self.moves);
        let result = self.emit_from(&plan, &mut moves, lbn, dest, (start, min_end));
        self.plan = plan;
        self.moves = moves;
        result
    }

    fn emit_from(
        &mut self,
        plan: &Plan,
        moves: &mut Vec<(Lpn, Ppn)>,
        lbn: u32,
        dest: BlockId,
        (start, min_end): (u32, u32),
    ) -> Result<u32, FtlError> {
        let end = plan.content_end().max(start).max(min_end);
        let old_first = self.block_map[lbn as usize].wrapping_mul(self.ppb);
        let lpn_first = lbn * self.ppb;
        moves.clear();
        let mut run_start = start;
        let mut offset = start;
        while offset < end {
            let lpn = Lpn(lpn_first + offset);
            if Plan::has(&plan.over, offset) && plan.src[offset as usize] != NEW {
                moves.push((
                    lpn,
                    self.logs.ppn(plan.src[offset as usize], &self.geometry),
                ));
                offset += 1;
                continue;
            }
            self.copy_run(moves, dest, run_start)?;
            if Plan::has(&plan.over, offset) {
                let ppn = self.geometry.ppn(dest, offset);
                let seq = plan.new.expect("invariant: a new page has its write").seq;
                self.device
                    .program(ppn, Stamp::new(lpn, seq), Cause::Host)?;
                offset += 1;
            } else if Plan::has(&plan.data, offset) {
                // Pages from the data block come in runs that keep their offsets: one
                // device call copies a run.
                let run = plan.data_run(offset, end);
                let (from, to) = (Ppn(old_first + offset), self.geometry.ppn(dest, offset));
                let copied = self
                    .device
                    .copy_range(from, lpn, run - offset, to, Cause::Gc);
                self.counters.pages_copied += u64::from(match copied {
                    Ok(count) | Err((count, _)) => count,
                });
                copied.map_err(|(_, error)| FtlError::from(error))?;
                offset = run;
            } else {
                let ppn = self.geometry.ppn(dest, offset);
                self.device.program(ppn, PADDING, Cause::Gc)?;
                self.counters.padding_programs += 1;
                offset += 1;
            }
            run_start = offset;
        }
        self.copy_run(moves, dest, run_start)?;
        Ok(end)
    }

    fn copy_run(
        &mut self,
        moves: &mut Vec<(Lpn, Ppn)>,
        dest: BlockId,
        start: u32,
    ) -> Result<(), FtlError> {
        if moves.is_empty() {
            return Ok(());
        }
        let to = self.geometry.ppn(dest, start);
        let copied = self.device.copy_pages(moves, to, Cause::Gc);
        self.counters.pages_copied += u64::from(match copied {
            Ok(count) | Err((count, _)) => count,
        });
        moves.clear();
        copied.map(|_| ()).map_err(|(_, error)| error.into())
    }

    /// Set the data bits of `lbn` for the block built as planned: the pages that held data
    /// still do, and the pages served from the log or by the host write now do too.
    fn settle_bits(&mut self, lbn: u32) {
        or_bits(&mut self.bits, lbn * self.ppb, self.ppb, &self.plan.over);
    }

    /// Full merge of `lbn`: copy the latest copy of each of its pages (from the log blocks
    /// except slot `keep`, else from the data block), and `new` if given, to a free block
    /// that becomes its data block; invalidate its log entries outside `keep`; erase the old
    /// data block. With nothing left to copy, the logical block is simply unmapped.
    pub fn full_merge(
        &mut self,
        lbn: u32,
        new: Option<NewRun>,
        keep: Option<u32>,
    ) -> Result<(), FtlError> {
        self.gather(lbn, keep, new);
        // Entries kept in `keep` must stay below the new data block's write pointer, so that
        // no later in-place write can overtake them.
        let min_end = keep
            .map(|slot| self.logs.slot(slot))
            .filter(|slot| slot.owner == Some(lbn))
            .map_or(0, |slot| slot.written);
        let old = self.block_map[lbn as usize];
        let has_content = !self.plan.is_empty();
        let dest = if has_content || min_end > 0 {
            let dest = self.take_free(Role::Data(lbn))?;
            let end = self.emit(lbn, dest, 0, min_end)?;
            self.data_next[lbn as usize] = end;
            self.block_map[lbn as usize] = dest.0;
            dest.0
        } else {
            self.data_next[lbn as usize] = 0;
            self.block_map[lbn as usize] = NONE;
            NONE
        };
        self.settle_bits(lbn);
        self.logs.invalidate_block(lbn, keep);
        self.counters.full_merges += 1;
        debug_assert!(dest != old || dest == NONE);
        if old != NONE {
            self.erase(BlockId(old), false)?;
        }
        Ok(())
    }

    /// Make log block `slot` (dedicated to its owner and written in order from offset 0) the
    /// owner's data block: a switch when it is full and `new` is `None`, else a partial merge
    /// that copies the latest copy of every later page into it (and `new`, whose offsets lie
    /// beyond the pages written). Every log entry of the owner is invalidated and the old
    /// data block erased.
    pub fn promote(&mut self, slot: u32, new: Option<NewRun>) -> Result<(), FtlError> {
        let entry = *self.logs.slot(slot);
        let lbn = entry
            .owner
            .expect("invariant: a promoted log block has an owner");
        let block = entry
            .block
            .expect("invariant: a promoted slot holds a block");
        assert!(
            entry.in_order,
            "invariant: only a log block written in order can become a data block"
        );
        let written = entry.written;
        self.gather(lbn, None, new);
        for offset in 0..written {
            let own = slot * self.ppb + offset;
            let plan = &self.plan;
            let ok = if Plan::has(&plan.over, offset) {
                plan.src[offset as usize] == own
            } else {
                !Plan::has(&plan.data, offset)
            };
            assert!(
                ok,
                "invariant: page {offset} of log slot {slot} holds the latest copy of its page"
            );
        }
        let end = self.emit(lbn, block, written, 0)?;
        let switched = written == self.ppb && new.is_none();
        self.note_replaced(written);
        self.settle_bits(lbn);
        let old = self.block_map[lbn as usize];
        self.block_map[lbn as usize] = block.0;
        self.data_next[lbn as usize] = end.max(written);
        self.roles[block.index()] = Role::Data(lbn);
        self.logs.invalidate_block(lbn, None);
        self.logs.close(slot);
        if switched {
            self.counters.switches += 1;
        } else {
            self.counters.partial_merges += 1;
        }
        if old != NONE {
            self.erase(BlockId(old), false)?;
        }
        Ok(())
    }

    /// Heap bytes held by the shared state.
    pub fn heap_bytes(&self) -> u64 {
        (self.block_map.capacity() * 4
            + self.data_next.capacity() * 4
            + self.bits.capacity() * 8
            + self.roles.capacity() * std::mem::size_of::<Role>()
            + self.free.heap_bytes()
            + self.plan.heap_bytes()
            + self.moves.capacity() * 8) as u64
            + self.logs.heap_bytes()
    }

    /// Corrupt a data bit (tests of the invariant checker).
    #[cfg(test)]
    pub fn flip_data(&mut self, lpn: u32) {
        let has = self.has_data(lpn);
        self.set_data(lpn, !has);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The free pool's heap figure is its heap's allocation, 8 bytes an entry (an erase
    /// count and a block number), whatever it holds.
    #[test]
    fn the_free_pools_heap_figure_is_its_allocation() {
        let mut pool = FreePool::default();
        assert_eq!(pool.heap_bytes(), 0);
        for b in 0..5 {
            pool.push(BlockId(b), 7 - b);
        }
        assert_eq!(std::mem::size_of::<Reverse<(u32, u32)>>(), 8);
        assert!(pool.heap.capacity() >= 5);
        assert_eq!(pool.heap_bytes(), pool.heap.capacity() * 8);
        assert_eq!(pool.count(), 5);
        assert_eq!(pool.pop(), Some(BlockId(4)), "least worn first");
    }

    /// Every role reaches the state hash with a code of its own: a data block's logical
    /// block and a log block's slot included, and a data block never coded as the log
    /// block of the same number.
    #[test]
    fn roles_have_distinct_codes() {
        let roles = [
            Role::Free,
            Role::Data(0),
            Role::Data(1),
            Role::Data(u32::MAX),
            Role::Log(0),
            Role::Log(1),
            Role::Retired,
        ];
        let codes: std::collections::BTreeSet<u64> = roles.iter().map(|r| r.code()).collect();
        assert_eq!(codes.len(), roles.len(), "{codes:?}");
    }

    /// The shared state's heap figure against its allocations counted one by one, on a
    /// FAST FTL whose merges have used the move buffer: the block map and write pointers (4
    /// bytes a logical block each), the data bits (8 bytes a word), a role a block, the
    /// free pool, the merge plan (two bitmaps of 8-byte words, a 4-byte source a page), the
    /// moves (8 bytes each) and the log area.
    #[test]
    fn the_shared_states_heap_figure_counts_every_allocation() {
        use crate::Ftl;
        use flashkit_core::PageRange;
        let geometry = Geometry::builder()
            .page_size_bytes(512)
            .pages_per_block(4)
            .blocks(20)
            .over_provisioning(0.25)
            .build()
            .expect("valid geometry");
        let device = flashkit_device::NandDevice::<flashkit_device::Stamps>::new(geometry);
        let config = super::super::HybridConfig {
            log_blocks: 3,
            sw_log_block: true,
            ..super::super::HybridConfig::default()
        };
        let mut ftl = super::super::HybridFtl::fast(device, config, false).expect("builds");
        for i in 0..200u32 {
            let lpn = i * 7 % 64;
            ftl.write(PageRange::one(Lpn(lpn)), u64::from(i) + 1)
                .expect("write");
        }
        let core = &ftl.core;
        assert!(core.moves.capacity() > 0, "merges used the move buffer");
        let plan = &core.plan;
        let expected = core.block_map.capacity() * 4
            + core.data_next.capacity() * 4
            + core.bits.capacity() * 8
            + core.roles.capacity() * std::mem::size_of::<Role>()
            + core.free.heap.capacity() * 8
            + (plan.data.capacity() + plan.over.capacity()) * 8
            + plan.src.capacity() * 4
            + core.moves.capacity() * 8;
        assert_eq!(core.heap_bytes(), expected as u64 + core.logs.heap_bytes());
        assert!(core.block_map.capacity() >= 16 && core.bits.capacity() >= 1);
    }
}
