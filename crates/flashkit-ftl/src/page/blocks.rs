//! Per-block bookkeeping of the page-mapped FTL.
//!
//! Besides each block's kind and valid-page count, the table keeps two indexes so that the
//! policies can decide in constant time: sealed blocks bucketed by valid-page count (greedy
//! takes the lowest non-empty bucket) and a queue in sealing order (FIFO). An erase-count
//! histogram gives wear leveling the spread without a scan.

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

const NIL: u32 = u32::MAX;

#[derive(Debug)]
pub(crate) struct BlockTable {
    pages_per_block: u32,
    kind: Vec<BlockKind>,
    valid: Vec<u32>,
    sealed_at: Vec<u64>,
    erase_count: Vec<u32>,
    // Greedy index: doubly linked lists of sealed blocks, one per valid-page count.
    heads: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
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
            heads: vec![NIL; pages_per_block as usize + 1],
            next: vec![NIL; n],
            prev: vec![NIL; n],
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

    /// Set a block's kind without touching the indexes: only for tests of the checker.
    #[cfg(test)]
    pub(crate) fn corrupt_kind(&mut self, block: BlockId, kind: BlockKind) {
        self.kind[block.index()] = kind;
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
        if self.kind[b] == BlockKind::Sealed {
            self.unlink(block);
            self.valid[b] -= 1;
            self.link(block);
        } else {
            self.valid[b] -= 1;
        }
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
        self.unlink(block);
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

    /// The sealed block with the fewest valid pages (lowest bucket; most recently sealed
    /// first inside a bucket).
    pub(crate) fn min_valid_sealed(&self) -> Option<BlockId> {
        let mut bucket = self.min_hint.get();
        while (bucket as usize) < self.heads.len() {
            let head = self.heads[bucket as usize];
            if head != NIL {
                self.min_hint.set(bucket);
                return Some(BlockId(head));
            }
            bucket += 1;
        }
        self.min_hint.set(bucket);
        None
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
        let b = block.0;
        let v = self.valid[b as usize];
        let head = self.heads[v as usize];
        self.next[b as usize] = head;
        self.prev[b as usize] = NIL;
        if head != NIL {
            self.prev[head as usize] = b;
        }
        self.heads[v as usize] = b;
        if v < self.min_hint.get() {
            self.min_hint.set(v);
        }
    }

    fn unlink(&mut self, block: BlockId) {
        let b = block.index();
        let (prev, next) = (self.prev[b], self.next[b]);
        if prev == NIL {
            self.heads[self.valid[b] as usize] = next;
        } else {
            self.next[prev as usize] = next;
        }
        if next != NIL {
            self.prev[next as usize] = prev;
        }
    }

    /// Check the indexes against the per-block arrays.
    pub(crate) fn check_indexes(&self) -> Result<(), String> {
        let mut seen = vec![false; self.kind.len()];
        let mut count = 0;
        for (bucket, &head) in self.heads.iter().enumerate() {
            let mut at = head;
            let mut prev = NIL;
            while at != NIL {
                let b = at as usize;
                if seen[b] || self.kind[b] != BlockKind::Sealed || self.valid[b] as usize != bucket
                {
                    return Err(format!(
                        "greedy index: block {b} in bucket {bucket} is {:?} with {} valid pages",
                        self.kind[b], self.valid[b]
                    ));
                }
                if self.prev[b] != prev {
                    return Err(format!("greedy index: block {b} has a wrong back link"));
                }
                seen[b] = true;
                count += 1;
                prev = at;
                at = self.next[b];
            }
        }
        let sealed = self
            .kind
            .iter()
            .filter(|k| **k == BlockKind::Sealed)
            .count();
        if count != sealed || sealed != self.sealed as usize {
            return Err(format!(
                "greedy index holds {count} blocks, {sealed} are sealed, counter says {}",
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
