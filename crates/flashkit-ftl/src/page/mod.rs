//! The log-structured page-mapped FTL.
//!
//! Host writes append to a host frontier block; garbage collection appends the pages it
//! moves to a separate GC frontier, so data that survived a collection (colder) is not mixed
//! back with fresh host data. When the free pool falls below `gc_threshold_blocks`, the
//! victim policy picks a sealed block, its valid pages move to the GC frontier and it is
//! erased. One block is always held back for garbage collection, so collection can never
//! deadlock: with at least `gc_threshold_blocks + 2` spare blocks a sealed block with an
//! invalid page always exists when collection is needed (see docs/DESIGN.md).

pub(crate) mod blocks;

mod check;
mod valid;

use self::blocks::{BlockKind, BlockTable};
use self::valid::ValidBits;
use crate::mapping::{Mapping, PageTable, PhysRun, Purpose};
use crate::policy::{BlockView, GcPolicy, VictimPolicy};
use crate::wear::{StaticWearLeveling, WearLevelPolicy, WearView};
use crate::{
    FtlError, FtlStats, Gauge, InvariantViolation, MappingMemory, ReadOutcome, check_range,
    ensure_invariant,
};
use flashkit_core::{BlockId, Cause, Geometry, Lpn, PageRange, Ppn, Stamp, StateHasher};
use flashkit_device::{DeviceError, FlashDevice, PageRead};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Options of the page-mapped FTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PageFtlConfig {
    /// Victim policy.
    pub gc_policy: GcPolicy,
    /// Collect while fewer than this many blocks are free (at least 2).
    pub gc_threshold_blocks: u32,
    /// Static wear leveling: allowed erase-count spread; `None` turns it off.
    pub wear_leveling_spread: Option<u32>,
}

impl Default for PageFtlConfig {
    fn default() -> Self {
        PageFtlConfig {
            gc_policy: GcPolicy::Greedy,
            gc_threshold_blocks: 4,
            wear_leveling_spread: Some(100),
        }
    }
}

/// Whether a page FTL with `config` can run on `geometry`: without allocating anything, so
/// that a command can refuse an impossible configuration before it starts.
pub fn check_config(geometry: &Geometry, config: &PageFtlConfig) -> Result<(), FtlError> {
    if config.gc_threshold_blocks < 2 {
        return Err(FtlError::Config(format!(
            "gc threshold of {} blocks is below the minimum of 2",
            config.gc_threshold_blocks
        )));
    }
    let needed = config.gc_threshold_blocks + 2;
    if geometry.spare_blocks() < needed {
        return Err(FtlError::Config(format!(
            "the page FTL needs at least {needed} spare blocks (GC threshold {} plus the host \
             and GC frontiers), but the geometry has {} ({} blocks for {} logical pages of \
             {} per block): raise over-provisioning",
            config.gc_threshold_blocks,
            geometry.spare_blocks(),
            geometry.blocks(),
            geometry.logical_pages(),
            geometry.pages_per_block()
        )));
    }
    Ok(())
}

/// The block being filled by one stream of writes.
#[derive(Clone, Copy, Debug, Default)]
struct Frontier {
    block: Option<BlockId>,
    next: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    gc_runs: u64,
    gc_pages_moved: u64,
    wear_level_runs: u64,
    wear_level_pages_moved: u64,
    retired_blocks: u64,
}

const NO_LPN: u32 = u32::MAX;

/// Pages copied between two rounds of prefetches for the next victim.
const RELOCATION_CHUNK: usize = 16;

/// A page-mapped FTL over device `D` with forward mapping `M`.
pub struct PageFtl<D, M> {
    device: D,
    mapping: M,
    geometry: Geometry,
    config: PageFtlConfig,
    policy: Box<dyn VictimPolicy>,
    wear_policy: Option<Box<dyn WearLevelPolicy>>,
    blocks: BlockTable,
    /// Reverse map: the logical page each physical page was last programmed with. A real FTL
    /// reads this from the OOB area; keeping it in memory saves a device read per GC check.
    /// Validity is derived from it: a page is valid when the mapping sends its logical page
    /// back to it, so no validity bitmap has to be kept in step (see [`PageFtl::is_valid`]),
    /// unless the mapping's lookup is a search (`valid`).
    reverse: Vec<u32>,
    /// One bit a physical page, kept only when [`MappingHints::LOOKUP_SEARCHES`] (empty otherwise):
    /// set when a page is programmed, cleared when the mapping reports it invalidated or
    /// garbage collection moves it.
    valid: ValidBits,
    free: VecDeque<BlockId>,
    host: Frontier,
    gc: Frontier,
    /// Wear leveling parks cold data on the most-worn free block, so that block rests.
    wear: Frontier,
    /// Page programs so far: the clock of the cost-benefit policy.
    clock: u64,
    counters: Counters,
    /// The valid pages of the block being collected, as (lpn, ppn); kept to avoid an
    /// allocation per collection.
    moving: Vec<(Lpn, Ppn)>,
    /// The policy's guess at the next victim, whose mapping entries are being prefetched
    /// while the current victim moves, and how many of them have been.
    ahead: Option<(BlockId, u32)>,
}

impl<D: FlashDevice> PageFtl<D, PageTable> {
    /// A page FTL with a flat page table.
    pub fn with_page_table(device: D, config: PageFtlConfig) -> Result<Self, FtlError> {
        let table = PageTable::new(device.geometry().logical_pages());
        Self::new(device, table, config)
    }
}

impl<D: FlashDevice, M: Mapping> PageFtl<D, M> {
    /// An FTL over a freshly erased device.
    pub fn new(device: D, mapping: M, config: PageFtlConfig) -> Result<Self, FtlError> {
        let geometry = *device.geometry();
        check_config(&geometry, &config)?;
        for b in 0..geometry.blocks() {
            let status = device.block_status(BlockId(b));
            if status.programmed_pages != 0 || status.bad {
                return Err(FtlError::Config(format!(
                    "the device is not freshly erased: block {b} has programmed pages or is bad"
                )));
            }
        }
        let physical = geometry.physical_pages() as usize;
        let policy = config.gc_policy.build();
        let mut blocks = BlockTable::new(geometry.blocks(), geometry.pages_per_block());
        blocks.set_age_index(policy.uses_age_index());
        Ok(PageFtl {
            device,
            mapping,
            geometry,
            config,
            policy,
            wear_policy: config.wear_leveling_spread.map(|spread| {
                Box::new(StaticWearLeveling {
                    spread_threshold: spread,
                }) as Box<dyn WearLevelPolicy>
            }),
            blocks,
            reverse: flashkit_core::hint::huge_page_vec(physical, NO_LPN),
            valid: ValidBits::new(physical, M::LOOKUP_SEARCHES),
            free: (0..geometry.blocks()).map(BlockId).collect(),
            host: Frontier::default(),
            gc: Frontier::default(),
            wear: Frontier::default(),
            clock: 0,
            counters: Counters::default(),
            moving: Vec::with_capacity(geometry.pages_per_block() as usize),
            ahead: None,
        })
    }

    /// The configuration the FTL was built with.
    pub fn config(&self) -> &PageFtlConfig {
        &self.config
    }

    /// Replace the victim policy with a custom one.
    pub fn with_policy(mut self, policy: Box<dyn VictimPolicy>) -> Self {
        self.blocks.set_age_index(policy.uses_age_index());
        self.policy = policy;
        self
    }

    /// The forward mapping.
    pub fn mapping(&self) -> &M {
        &self.mapping
    }

    /// The most heap [`PageFtl::bookkeeping_heap_bytes`] reaches on `geometry` under
    /// `config`, for a mapping whose lookups search (`M::LOOKUP_SEARCHES`) or not.
    pub fn bookkeeping_heap_estimate(geometry: &Geometry, config: &PageFtlConfig) -> u64 {
        let physical = u64::from(geometry.physical_pages());
        let valid_bits = if M::LOOKUP_SEARCHES {
            physical.div_ceil(64) * 8
        } else {
            0
        };
        let age_index = config.gc_policy.build().uses_age_index();
        let blocks =
            BlockTable::heap_estimate(geometry.blocks(), geometry.pages_per_block(), age_index);
        physical * 4 + valid_bits + blocks
    }

    /// Heap bytes held by the FTL's own bookkeeping (reverse map, block table), beyond the
    /// mapping and the device model.
    pub fn bookkeeping_heap_bytes(&self) -> u64 {
        (self.reverse.capacity() * 4) as u64 + self.valid.heap_bytes() + self.blocks.heap_bytes()
    }

    /// Whether `ppn` holds the current copy of its logical page.
    ///
    /// Derived rather than stored: the reverse map names the page's logical page and the
    /// forward map must send that page back here. A page overwritten, trimmed or moved fails
    /// the test; so does a page of an erased block, because a block is erased only after
    /// every page it held was moved. Keeping a validity bitmap instead would cost a random
    /// access into a structure larger than L2 on every host overwrite; only where the
    /// mapping's lookup is a search does the bitmap pay ([`MappingHints::LOOKUP_SEARCHES`]).
    #[inline(always)]
    fn is_valid(&self, ppn: Ppn) -> bool {
        if M::LOOKUP_SEARCHES {
            let valid = self.valid.get(ppn.0);
            debug_assert_eq!(valid, self.is_valid_by_mapping(ppn), "validity of {ppn}");
            return valid;
        }
        self.is_valid_by_mapping(ppn)
    }

    /// [`Self::is_valid`] as the mapping says it: the reverse map names a logical page that
    /// the mapping sends back to `ppn`.
    #[inline(always)]
    fn is_valid_by_mapping(&self, ppn: Ppn) -> bool {
        let lpn = self.reverse[ppn.index()];
        lpn != NO_LPN && self.mapping.maps_to(Lpn(lpn), ppn)
    }

    /// Record that `count` pages from `first` in `block` now hold `lpn..lpn + count`.
    #[inline(always)]
    fn note_programmed(&mut self, block: BlockId, first: Ppn, lpn: u32, count: u32) {
        for i in 0..count {
            self.reverse[(first.0 + i) as usize] = lpn + i;
        }
        if M::LOOKUP_SEARCHES {
            self.valid.set_run(first.0, count);
        }
        self.blocks.add_valid(block, count);
        self.clock += u64::from(count);
    }

    /// The next host page, opening a new host block (and collecting garbage) if needed.
    fn host_page(&mut self) -> Result<(BlockId, u32), FtlError> {
        if let Some(block) = self.host.block {
            if self.host.next < self.geometry.pages_per_block() {
                return Ok((block, self.host.next));
            }
            self.blocks.seal(block, self.clock);
            self.host.block = None;
        }
        self.make_free_blocks()?;
        // The last free block is kept for garbage collection.
        if self.free.len() < 2 {
            return Err(self.no_space("no free block is left for host writes"));
        }
        let block = self.take_free();
        self.host = Frontier {
            block: Some(block),
            next: 0,
        };
        Ok((block, 0))
    }

    /// The next page to move data to for `cause`, opening a new block if needed: garbage
    /// collection takes the oldest free block, wear leveling the most worn.
    fn relocation_page(&mut self, cause: Cause) -> Result<(BlockId, u32), FtlError> {
        let ppb = self.geometry.pages_per_block();
        let frontier = if cause == Cause::WearLeveling {
            self.wear
        } else {
            self.gc
        };
        if let Some(block) = frontier.block {
            if frontier.next < ppb {
                return Ok((block, frontier.next));
            }
            // Sealed, the block leaves its frontier at once: should no free block be left
            // below, the frontier must not still hold it for the next write to seal again.
            self.blocks.seal(block, self.clock);
            let closed = Frontier {
                block: None,
                next: 0,
            };
            if cause == Cause::WearLeveling {
                self.wear = closed
            } else {
                self.gc = closed
            }
        }
        if self.free.is_empty() {
            return Err(self.no_space("no free block is left for garbage collection"));
        }
        let block = if cause == Cause::WearLeveling {
            let most_worn = (0..self.free.len())
                .max_by_key(|&i| (self.blocks.erase_count(self.free[i]), std::cmp::Reverse(i)))
                .expect("invariant: the free pool is not empty");
            let block = self
                .free
                .remove(most_worn)
                .expect("invariant: index in range");
            self.blocks.activate(block);
            block
        } else {
            self.take_free()
        };
        let opened = Frontier {
            block: Some(block),
            next: 0,
        };
        if cause == Cause::WearLeveling {
            self.wear = opened
        } else {
            self.gc = opened
        }
        Ok((block, 0))
    }

    fn advance_relocation(&mut self, cause: Cause, pages: u32) {
        if cause == Cause::WearLeveling {
            self.wear.next += pages
        } else {
            self.gc.next += pages
        }
    }

    fn take_free(&mut self) -> BlockId {
        let block = self
            .free
            .pop_front()
            .expect("invariant: caller checked the free pool");
        self.blocks.activate(block);
        block
    }

    fn no_space(&self, what: &str) -> FtlError {
        FtlError::NoSpace(format!(
            "{what}: {} of {} blocks retired after wearing out, {} free",
            self.counters.retired_blocks,
            self.geometry.blocks(),
            self.free.len()
        ))
    }

    /// Collect garbage until the free pool is back at the threshold, then give wear leveling
    /// one chance to act.
    fn make_free_blocks(&mut self) -> Result<(), FtlError> {
        let mut rounds = 0u32;
        while self.free.len() < self.config.gc_threshold_blocks as usize {
            self.blocks.prune_fifo();
            self.blocks.settle_greedy();
            self.blocks.settle_ages();
            let victim = self
                .policy
                .choose(&BlockView::new(&self.blocks, self.clock));
            let Some(victim) = victim else {
                // Nothing is worth collecting; carry on while a block remains for the host.
                return Ok(());
            };
            let moved = self.collect(victim, Cause::Gc)?;
            self.counters.gc_runs += 1;
            self.counters.gc_pages_moved += u64::from(moved);
            rounds += 1;
            if rounds > self.geometry.blocks() {
                return Err(self.no_space("garbage collection is making no progress"));
            }
        }
        let cold = self
            .wear_policy
            .as_ref()
            .and_then(|wear| wear.choose(&WearView::new(&self.blocks)));
        // Wear leveling may take a free block of its own, but never the last one.
        if let Some(cold) = cold.filter(|_| self.free.len() >= 2) {
            let moved = self.collect(cold, Cause::WearLeveling)?;
            self.counters.wear_level_runs += 1;
            self.counters.wear_level_pages_moved += u64::from(moved);
        }
        Ok(())
    }

    /// Move every valid page of `victim` to the GC frontier and erase it. Returns the pages
    /// moved.
    fn collect(&mut self, victim: BlockId, cause: Cause) -> Result<u32, FtlError> {
        let predicted = self.ahead.take().filter(|&(block, _)| block == victim);
        self.blocks.begin_collect(victim);
        self.predict_next_victim();
        if predicted.is_none() {
            self.prefetch_mapping_of(victim);
        }
        match self.move_valid_pages(victim, cause) {
            Ok(moved) => {
                self.erase(victim, cause)?;
                Ok(moved)
            }
            Err(error) => {
                self.blocks.abort_collect(victim);
                Err(error)
            }
        }
    }

    /// Guess the victim after the one now being collected and start fetching its reverse
    /// entries; its mapping entries follow while the current victim's pages move.
    fn predict_next_victim(&mut self) {
        self.blocks.settle_greedy();
        let guess = self
            .policy
            .predict(&BlockView::new(&self.blocks, self.clock));
        if let Some(block) = guess {
            let first = self.geometry.first_ppn(block).index();
            for offset in (0..self.geometry.pages_per_block() as usize).step_by(16) {
                flashkit_core::hint::prefetch(&self.reverse, first + offset);
            }
        }
        self.ahead = guess.map(|block| (block, 0));
    }

    /// Prefetch the mapping entries of up to `count` more pages of the guessed next victim.
    #[inline(always)]
    fn prefetch_ahead(&mut self, count: u32) {
        if let Some((block, done)) = &mut self.ahead {
            let ppb = self.geometry.pages_per_block();
            let first = self.geometry.first_ppn(*block).0;
            let end = (*done + count).min(ppb);
            for ppn in first + *done..first + end {
                let lpn = self.reverse[ppn as usize];
                // With a validity bitmap an invalid page's entry is never read.
                if lpn != NO_LPN && (!M::LOOKUP_SEARCHES || self.valid.get(ppn)) {
                    self.mapping.prefetch(Lpn(lpn));
                }
            }
            *done = end;
        }
    }

    /// Prefetch the mapping entries of every page of `block` (when it was not guessed).
    fn prefetch_mapping_of(&self, block: BlockId) {
        let first = self.geometry.first_ppn(block);
        let ppb = self.geometry.pages_per_block() as usize;
        for (&lpn, ppn) in self.reverse[first.index()..first.index() + ppb]
            .iter()
            .zip(first.0..)
        {
            if lpn != NO_LPN && (!M::LOOKUP_SEARCHES || self.valid.get(ppn)) {
                self.mapping.prefetch(Lpn(lpn));
            }
        }
    }

    fn move_valid_pages(&mut self, victim: BlockId, cause: Cause) -> Result<u32, FtlError> {
        let first = self.geometry.first_ppn(victim);
        let ppb = self.geometry.pages_per_block() as usize;
        // The buffer keeps ppb entries for good; `count` says how many are in use.
        let mut moving = std::mem::take(&mut self.moving);
        moving.resize(ppb, (Lpn(0), Ppn(0)));
        // Branch-free gather: write every page's entry and advance only past valid ones, so
        // that the one invalid page in eight costs no mispredicted branch.
        let mut count = 0;
        let reverse = &self.reverse[first.index()..first.index() + ppb];
        for (&lpn, ppn) in reverse.iter().zip(first.0..) {
            let valid = if M::LOOKUP_SEARCHES {
                self.is_valid(Ppn(ppn))
            } else {
                lpn != NO_LPN && self.mapping.maps_to(Lpn(lpn), Ppn(ppn))
            };
            if let Some(slot) = moving.get_mut(count) {
                *slot = (Lpn(lpn), Ppn(ppn));
            }
            count += usize::from(valid);
        }
        debug_assert_eq!(
            count as u32,
            self.blocks.valid(victim),
            "valid count of {victim}"
        );
        let result = self.move_pages(victim, &moving[..count], cause);
        self.prefetch_ahead(self.geometry.pages_per_block());
        self.moving = moving;
        result
    }

    /// Move `moving` (the valid pages of `victim`) to the relocation frontier of `cause`.
    /// Runs of pages landing in one destination block are copied and accounted in bulk.
    fn move_pages(
        &mut self,
        victim: BlockId,
        moving: &[(Lpn, Ppn)],
        cause: Cause,
    ) -> Result<u32, FtlError> {
        let mut done = 0;
        while done < moving.len() {
            let (block, offset) = self.relocation_page(cause)?;
            let room = (self.geometry.pages_per_block() - offset) as usize;
            // Chunks of 16 pages, with the next victim's prefetches between them: issued all
            // at once, those prefetches overflow the miss buffers and arrive too late.
            let run = &moving[done..moving.len().min(done + room.min(RELOCATION_CHUNK))];
            let first = self.geometry.ppn(block, offset);
            let copied = self.device.copy_pages(run, first, cause);
            let count = match copied {
                Ok(count) | Err((count, _)) => count,
            };
            // Account for what was copied, even if the device failed part-way.
            let targets = &mut self.reverse[first.index()..first.index() + count as usize];
            if M::LOOKUP_SEARCHES {
                for &(_, from) in &run[..count as usize] {
                    self.valid.clear(from.0);
                }
                self.valid.set_run(first.0, count);
            }
            if M::RELOCATES_RUNS {
                for (target, &(lpn, _)) in targets.iter_mut().zip(run) {
                    *target = lpn.0;
                }
                // The page before `first` holds, if anything, what was last programmed
                // there (every program records its page here).
                let preceding = first
                    .index()
                    .checked_sub(1)
                    .map(|before| Lpn(self.reverse[before]));
                self.mapping
                    .relocate_batch(&run[..count as usize], first, preceding);
            } else {
                // One pass per page, as before extent mappings: the page table's hot path.
                for (target, (&(lpn, from), to)) in
                    targets.iter_mut().zip(run.iter().zip(first.0..))
                {
                    *target = lpn.0;
                    self.mapping.relocate(lpn, from, Ppn(to));
                }
            }
            self.blocks.add_valid(block, count);
            self.blocks.remove_valid_many(victim, count);
            self.clock += u64::from(count);
            self.advance_relocation(cause, count);
            // Two of the next victim's entries per page moved: all of them by the end.
            self.prefetch_ahead(2 * count);
            done += count as usize;
            if let Err((_, error)) = copied {
                return Err(error.into());
            }
        }
        Ok(done as u32)
    }

    fn erase(&mut self, block: BlockId, cause: Cause) -> Result<(), FtlError> {
        match self.device.erase(block, cause) {
            Ok(()) => {
                self.blocks.erased(block);
                self.free.push_back(block);
                Ok(())
            }
            Err(DeviceError::WornOut { .. }) => {
                self.blocks.retire(block);
                self.counters.retired_blocks += 1;
                Ok(())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// A host read, or with `MERGE` the read of a partial-page write's read-modify-write
    /// (the mapping is told which, so that its translations can be accounted apart). A
    /// constant, so that each kind of read is compiled on its own, as the host read alone
    /// was before.
    fn read_pages<const MERGE: bool>(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        check_range(&self.geometry, range)?;
        let device = &mut self.device;
        let mut failure = None;
        let mut read_run = |run: PhysRun| {
            for i in 0..run.len {
                let lpn = Lpn(run.lpn.0 + i);
                let Some(ppn) = run.ppn else {
                    sink(lpn, ReadOutcome::Unmapped);
                    continue;
                };
                if failure.is_some() {
                    return;
                }
                match device.read(Ppn(ppn.0 + i), Cause::Host) {
                    Ok(PageRead::Programmed(stamp)) => sink(lpn, ReadOutcome::Mapped(stamp)),
                    Ok(PageRead::Erased) => panic!("invariant: mapped {lpn} reads as erased"),
                    Err(error) => failure = Some(error),
                }
            }
        };
        if MERGE {
            self.mapping
                .translate_for(Purpose::Merge, range, &mut read_run);
        } else {
            self.mapping.translate(range, &mut read_run);
        }
        match failure {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    }
}

/// A physical page stopped holding the current copy of its logical page (`valid` is kept
/// when [`MappingHints::LOOKUP_SEARCHES`]).
#[inline(always)]
fn invalidate<M: Mapping>(
    blocks: &mut BlockTable,
    valid: &mut ValidBits,
    geometry: &Geometry,
    ppn: Ppn,
) {
    blocks.remove_valid(geometry.block_of(ppn));
    if M::LOOKUP_SEARCHES {
        valid.clear(ppn.0);
    }
}

impl<D: FlashDevice, M: Mapping> crate::Ftl for PageFtl<D, M> {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn read(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        self.read_pages::<false>(range, sink)
    }

    fn read_for_merge(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        self.read_pages::<true>(range, sink)
    }

    fn write(&mut self, range: PageRange, seq: u64) -> Result<(), FtlError> {
        check_range(&self.geometry, range)?;
        let ppb = self.geometry.pages_per_block();
        let (mut lpn, mut left) = (range.start.0, range.count);
        while left > 0 {
            let (block, offset) = self.host_page()?;
            let count = left.min(ppb - offset);
            let first = self.geometry.ppn(block, offset);
            let mut done = 0;
            let mut failure = None;
            while done < count {
                let stamp = Stamp::new(Lpn(lpn + done), seq);
                if let Err(error) = self.device.program(Ppn(first.0 + done), stamp, Cause::Host) {
                    failure = Some(error);
                    break;
                }
                done += 1;
            }
            self.note_programmed(block, first, lpn, done);
            self.host.next += done;
            let (blocks, valid, geometry) = (&mut self.blocks, &mut self.valid, &self.geometry);
            self.mapping.update(Lpn(lpn), first, done, &mut |old| {
                invalidate::<M>(blocks, valid, geometry, old)
            });
            if let Some(error) = failure {
                return Err(error.into());
            }
            lpn += count;
            left -= count;
        }
        Ok(())
    }

    #[inline]
    fn prefetch(&self, range: PageRange) {
        self.mapping.prefetch_range(range);
    }

    fn trim(&mut self, range: PageRange) -> Result<(), FtlError> {
        check_range(&self.geometry, range)?;
        if range.count == 0 {
            // The extent mappings' `remove` needs a page to remove.
            return Ok(());
        }
        let (blocks, valid, geometry) = (&mut self.blocks, &mut self.valid, &self.geometry);
        self.mapping.remove(range, &mut |old| {
            invalidate::<M>(blocks, valid, geometry, old)
        });
        Ok(())
    }
}

impl<D: FlashDevice, M: Mapping> crate::Inspect for PageFtl<D, M> {
    fn device(&self) -> &dyn FlashDevice {
        &self.device
    }

    fn stats(&self) -> FtlStats {
        let c = self.counters;
        let mut stats = FtlStats {
            gc_runs: c.gc_runs,
            gc_pages_moved: c.gc_pages_moved,
            wear_level_runs: c.wear_level_runs,
            wear_level_pages_moved: c.wear_level_pages_moved,
            retired_blocks: c.retired_blocks,
            ..FtlStats::default()
        };
        self.mapping.extra_stats(&mut stats.extra);
        let mapped = self.mapping.mapped_pages() as f64;
        stats.extra.insert(Gauge::MappedPages, mapped);
        stats
            .extra
            .insert(Gauge::FreeBlocks, self.free.len() as f64);
        stats.extra.insert(
            Gauge::BookkeepingHeapBytes,
            self.bookkeeping_heap_bytes() as f64,
        );
        stats
    }

    fn mapping_memory(&self) -> MappingMemory {
        self.mapping.memory()
    }
}

impl<D: FlashDevice, M: Mapping> crate::Verify for PageFtl<D, M> {
    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.mapping
            .check_structure()
            .map_err(|e| InvariantViolation(format!("mapping: {}", e.0)))?;
        self.check_blocks()?;
        self.check_pages()?;
        self.blocks.check_indexes().map_err(InvariantViolation)
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        self.mapping.hash_state(hasher);
        for b in 0..self.geometry.blocks() {
            let block = BlockId(b);
            hasher.u32(self.blocks.kind(block).code());
            hasher.u32(self.blocks.valid(block));
            hasher.u32(self.device.block_status(block).erase_count);
        }
        for block in &self.free {
            hasher.u32(block.0);
        }
        hasher.counters(self.device.counters());
        hasher.u64(self.clock);
    }
}

#[cfg(test)]
mod tests;
