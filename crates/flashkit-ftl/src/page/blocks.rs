//! Per-block bookkeeping of the page-mapped FTL.
//!
//! Besides each block's kind and valid-page count, the table keeps two indexes so that the
//! policies can decide in constant time: sealed blocks bucketed by valid-page count (greedy
//! takes the lowest non-empty bucket) and a queue in sealing order (FIFO). An erase-count
//! histogram gives wear leveling the spread without a scan.
//!
//! The greedy buckets are stacks with lazy deletion. Every host overwrite lowers some
//! block's valid count; a doubly linked list would unlink the block and relink it, touching
//! two random neighbours per write. Instead the block is pushed onto its new bucket's stack
//! (the stack's top is in cache) and the entry it leaves behind goes stale: an entry is
//! current when its block is sealed and still has that many valid pages. Selection skips
//! stale entries; compaction drops them (and older duplicates) in order, so the choice is
//! exactly that of a linked list with insertion at the head: the most recent arrival in the
//! lowest bucket.

use flashkit_core::BlockId;
use std::cell::Cell;
use std::collections::VecDeque;

/// What a block is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// Erased, on the free list.
    Free,
    /// Being filled by the host or GC frontier.
    Active,
    /// Full; a garbage-collection candidate.
    Sealed,
    /// Being collected: its valid pages are moving out.
    Victim,
    /// Worn out; never used again.
    Retired,
}

impl BlockKind {
    pub(crate) fn code(self) -> u32 {
        self as u32
    }
}

#[derive(Debug)]
pub(crate) struct BlockTable {
    pages_per_block: u32,
    kind: Vec<BlockKind>,
    valid: Vec<u32>,
    sealed_at: Vec<u64>,
    erase_count: Vec<u32>,
    // Greedy index: stacks of sealed blocks, one per valid-page count, with stale entries.
    buckets: Vec<Vec<BlockId>>,
    bucket_entries: usize,
    compact_mark: Vec<u32>,
    compact_epoch: u32,
    min_hint: Cell<u32>,
    sealed: u32,
    // FIFO index: (block, sealed_at) in sealing order; stale entries are skipped and pruned.
    fifo: VecDeque<(BlockId, u64)>,
    // Erase-count histogram over blocks that are not retired.
    erase_hist: Vec<u32>,
    min_erase: u32,
    max_erase: u32,
}

impl BlockTable {
    pub(crate) fn new(blocks: u32, pages_per_block: u32) -> Self {
        let n = blocks as usize;
        BlockTable {
            pages_per_block,
            kind: vec![BlockKind::Free; n],
            valid: vec![0; n],
            sealed_at: vec![0; n],
            erase_count: vec![0; n],
            buckets: vec![Vec::new(); pages_per_block as usize + 1],
            bucket_entries: 0,
            compact_mark: vec![0; n],
            compact_epoch: 0,
            min_hint: Cell::new(0),
            sealed: 0,
            fifo: VecDeque::new(),
            erase_hist: vec![blocks],
            min_erase: 0,
            max_erase: 0,
        }
    }

    pub(crate) fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    pub(crate) fn kind(&self, block: BlockId) -> BlockKind {
        self.kind[block.index()]
    }

    pub(crate) fn valid(&self, block: BlockId) -> u32 {
        self.valid[block.index()]
    }

    pub(crate) fn sealed_at(&self, block: BlockId) -> u64 {
        self.sealed_at[block.index()]
    }

    pub(crate) fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_count[block.index()]
    }

    pub(crate) fn min_erase(&self) -> u32 {
        self.min_erase
    }

    pub(crate) fn max_erase(&self) -> u32 {
        self.max_erase
    }

    /// Drop every index entry of `block`: only for tests of the checker.
    #[cfg(test)]
    pub(crate) fn forget_bucket_entries(&mut self, block: BlockId) {
        for stack in &mut self.buckets {
            stack.retain(|&b| b != block);
        }
        self.bucket_entries = self.buckets.iter().map(Vec::len).sum();
    }

    /// A free block starts being filled.
    pub(crate) fn activate(&mut self, block: BlockId) {
        debug_assert_eq!(self.kind(block), BlockKind::Free);
        self.kind[block.index()] = BlockKind::Active;
    }

    /// `count` pages of an active block were programmed with valid data.
    #[inline(always)]
    pub(crate) fn add_valid(&mut self, block: BlockId, count: u32) {
        debug_assert_eq!(self.kind(block), BlockKind::Active);
        self.valid[block.index()] += count;
    }

    /// One page of `block` stopped being valid.
    #[inline(always)]
    pub(crate) fn remove_valid(&mut self, block: BlockId) {
        let b = block.index();
        self.valid[b] -= 1;
        if self.kind[b] == BlockKind::Sealed {
            self.link(block);
        }
    }

    /// `count` pages of the block being collected were moved out.
    #[inline(always)]
    pub(crate) fn remove_valid_many(&mut self, block: BlockId, count: u32) {
        debug_assert_eq!(self.kind(block), BlockKind::Victim);
        self.valid[block.index()] -= count;
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> u64 {
        let n = self.kind.len() as u64;
        let buckets: usize = self.buckets.iter().map(|b| b.capacity() * 4).sum();
        n * (1 + 4 + 8 + 4)
            + buckets as u64
            + (self.fifo.capacity() * 16) as u64
            + (self.erase_hist.capacity() * 4) as u64
    }

    /// A full active block becomes a garbage-collection candidate.
    pub(crate) fn seal(&mut self, block: BlockId, now: u64) {
        debug_assert_eq!(self.kind(block), BlockKind::Active);
        self.kind[block.index()] = BlockKind::Sealed;
        self.sealed_at[block.index()] = now;
        self.link(block);
        self.sealed += 1;
        self.fifo.push_back((block, now));
        if self.fifo.len() > 2 * self.kind.len() + 16 {
            self.compact_fifo();
        }
    }

    /// A sealed block is chosen for collection.
    pub(crate) fn begin_collect(&mut self, block: BlockId) {
        assert_eq!(
            self.kind(block),
            BlockKind::Sealed,
            "invariant: only sealed blocks are collected"
        );
        // Its bucket entries go stale by themselves: it is no longer sealed.
        self.sealed -= 1;
        self.kind[block.index()] = BlockKind::Victim;
    }

    /// Collection stopped part-way (the FTL ran out of space): the block is sealed again.
    pub(crate) fn abort_collect(&mut self, block: BlockId) {
        debug_assert_eq!(self.kind(block), BlockKind::Victim);
        self.kind[block.index()] = BlockKind::Sealed;
        self.link(block);
        self.sealed += 1;
        self.fifo.push_back((block, self.sealed_at[block.index()]));
    }

    /// A collected block was erased and is free again.
    pub(crate) fn erased(&mut self, block: BlockId) {
        let b = block.index();
        debug_assert_eq!(self.valid[b], 0);
        self.kind[b] = BlockKind::Free;
        let old = self.erase_count[b];
        self.erase_count[b] = old + 1;
        self.erase_hist[old as usize] -= 1;
        if self.erase_hist.len() <= old as usize + 1 {
            self.erase_hist.push(0);
        }
        self.erase_hist[old as usize + 1] += 1;
        self.max_erase = self.max_erase.max(old + 1);
        self.settle_min_erase();
    }

    /// A block wore out: it leaves every index for good.
    pub(crate) fn retire(&mut self, block: BlockId) {
        let b = block.index();
        debug_assert_eq!(self.valid[b], 0);
        self.kind[b] = BlockKind::Retired;
        self.erase_hist[self.erase_count[b] as usize] -= 1;
        while self.max_erase > 0 && self.erase_hist[self.max_erase as usize] == 0 {
            self.max_erase -= 1;
        }
        self.settle_min_erase();
    }

    fn settle_min_erase(&mut self) {
        let top = self.erase_hist.len() as u32;
        while self.min_erase + 1 < top && self.erase_hist[self.min_erase as usize] == 0 {
            self.min_erase += 1;
        }
        if self.erase_hist[self.min_erase as usize] == 0 {
            // Every block retired, or the minimum moved down after a retirement of the max.
            self.min_erase = (0..top)
                .find(|&c| self.erase_hist[c as usize] > 0)
                .unwrap_or(0);
        }
    }

    /// The sealed block with the fewest valid pages (lowest bucket; the most recent arrival
    /// inside a bucket). Call [`BlockTable::settle_greedy`] first.
    pub(crate) fn min_valid_sealed(&self) -> Option<BlockId> {
        let mut bucket = self.min_hint.get();
        while (bucket as usize) < self.buckets.len() {
            if let Some(&top) = self.buckets[bucket as usize].last() {
                debug_assert!(
                    self.is_in_bucket(top, bucket),
                    "settle_greedy leaves current tops"
                );
                self.min_hint.set(bucket);
                return Some(top);
            }
            bucket += 1;
        }
        self.min_hint.set(bucket);
        None
    }

    /// Pop stale entries off the tops of the buckets the greedy choice will look at.
    pub(crate) fn settle_greedy(&mut self) {
        if self.bucket_entries > 4 * (self.kind.len() + self.buckets.len()) {
            self.compact_buckets();
        }
        let mut bucket = self.min_hint.get() as usize;
        while bucket < self.buckets.len() {
            while let Some(&top) = self.buckets[bucket].last() {
                if self.is_in_bucket(top, bucket as u32) {
                    self.min_hint.set(bucket as u32);
                    return;
                }
                self.buckets[bucket].pop();
                self.bucket_entries -= 1;
            }
            bucket += 1;
        }
        self.min_hint.set(bucket as u32);
    }

    fn is_in_bucket(&self, block: BlockId, bucket: u32) -> bool {
        self.kind[block.index()] == BlockKind::Sealed && self.valid[block.index()] == bucket
    }

    /// Drop stale entries and all but the newest duplicate of each current one, keeping the
    /// order of the rest. Runs when the stacks hold four entries per block, so its linear
    /// cost is spread over at least three pushes per block.
    fn compact_buckets(&mut self) {
        self.compact_epoch += 1;
        let epoch = self.compact_epoch;
        let mut buckets = std::mem::take(&mut self.buckets);
        for (bucket, stack) in buckets.iter_mut().enumerate() {
            // Walk from the top so that the newest duplicate is the one kept.
            stack.reverse();
            stack.retain(|&b| {
                let keep =
                    self.compact_mark[b.index()] != epoch && self.is_in_bucket(b, bucket as u32);
                if keep {
                    self.compact_mark[b.index()] = epoch;
                }
                keep
            });
            stack.reverse();
        }
        self.bucket_entries = buckets.iter().map(Vec::len).sum();
        self.buckets = buckets;
    }

    /// The sealed block sealed longest ago.
    pub(crate) fn oldest_sealed(&self) -> Option<BlockId> {
        self.fifo
            .iter()
            .find(|&&(block, at)| self.is_current(block, at))
            .map(|&(block, _)| block)
    }

    /// Drop stale entries from the front of the FIFO index.
    pub(crate) fn prune_fifo(&mut self) {
        while let Some(&(block, at)) = self.fifo.front() {
            if self.is_current(block, at) {
                break;
            }
            self.fifo.pop_front();
        }
    }

    fn is_current(&self, block: BlockId, at: u64) -> bool {
        self.kind[block.index()] == BlockKind::Sealed && self.sealed_at[block.index()] == at
    }

    fn compact_fifo(&mut self) {
        let mut fifo = std::mem::take(&mut self.fifo);
        fifo.retain(|&(block, at)| self.is_current(block, at));
        self.fifo = fifo;
    }

    /// Sealed blocks in block order.
    pub(crate) fn sealed_blocks(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.kind
            .iter()
            .enumerate()
            .filter(|(_, kind)| **kind == BlockKind::Sealed)
            .map(|(b, _)| BlockId(b as u32))
    }

    fn link(&mut self, block: BlockId) {
        let v = self.valid[block.index()];
        self.buckets[v as usize].push(block);
        self.bucket_entries += 1;
        if v < self.min_hint.get() {
            self.min_hint.set(v);
        }
    }

    /// Check the indexes against the per-block arrays.
    pub(crate) fn check_indexes(&self) -> Result<(), String> {
        let mut indexed = vec![false; self.kind.len()];
        for (bucket, stack) in self.buckets.iter().enumerate() {
            for &b in stack {
                indexed[b.index()] |= self.is_in_bucket(b, bucket as u32);
            }
        }
        if self.buckets.iter().map(Vec::len).sum::<usize>() != self.bucket_entries {
            return Err("greedy index: entry count is off".into());
        }
        for (b, kind) in self.kind.iter().enumerate() {
            if (*kind == BlockKind::Sealed) != indexed[b] {
                return Err(format!(
                    "greedy index: block {b} is {kind:?} with {} valid pages but {} in its bucket",
                    self.valid[b],
                    if indexed[b] { "is" } else { "is not" }
                ));
            }
        }
        let top = self.min_hint.get() as usize;
        if let Some((bucket, _)) = self.buckets[..top.min(self.buckets.len())]
            .iter()
            .enumerate()
            .find(|(bucket, stack)| stack.iter().any(|&b| self.is_in_bucket(b, *bucket as u32)))
        {
            return Err(format!(
                "greedy index: bucket {bucket} holds a block below the minimum hint {top}"
            ));
        }
        let sealed = self
            .kind
            .iter()
            .filter(|k| **k == BlockKind::Sealed)
            .count();
        if sealed != self.sealed as usize {
            return Err(format!(
                "{sealed} blocks are sealed but the counter says {}",
                self.sealed
            ));
        }
        let live: u32 = self.erase_hist.iter().sum();
        let not_retired = self
            .kind
            .iter()
            .filter(|k| **k != BlockKind::Retired)
            .count();
        if live as usize != not_retired {
            return Err(format!(
                "erase histogram counts {live} blocks, {not_retired} are in service"
            ));
        }
        if live > 0 && self.erase_hist[self.min_erase as usize] == 0 {
            return Err(format!(
                "erase histogram minimum {} is empty",
                self.min_erase
            ));
        }
        Ok(())
    }
}
