//! The translation layer of section 4 of Ajwani et al. (SEA 2009), after Easy Computing's
//! Managed Flash Technology: the algorithm reads and writes pages of `B_r`; the layer
//! appends written pages to an in-memory `B_w` buffer and writes the buffer whole when it is
//! full, so the device sees only `B_w` writes however random the algorithm's writes are.
//!
//! It keeps in memory the logical-to-physical page map, the reverse map and a valid-page
//! count per physical `B_w` block; a block whose pages are all overwritten or discarded is
//! free again. Reads of pages still in a write buffer (the open one, or the last few written)
//! are served from memory. With a bounded capacity, when no block is free the block with the
//! fewest valid pages is compacted: its valid pages are read back and rewritten at the head
//! of the same block, and writing continues behind them.
//!
//! What this is not: an FTL for a real device (nothing persists, the map lives in memory, as
//! the paper's layer does for temporary data). Key decision: `O(1)` buffers: one open buffer
//! and `write_buffers - 1` recently written ones kept for reads.

use crate::EmError;
use crate::io::{AlignedBuf, BlockIo, BlockSizes, IoStats, PhysicalIo, check_aligned};
use serde::Serialize;
use std::collections::VecDeque;

const UNMAPPED: u32 = u32::MAX;

/// Counters of the layer itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TlStats {
    /// Page reads served from a write buffer.
    pub buffer_hits: u64,
    /// Pages moved by compaction.
    pub pages_moved: u64,
    /// Blocks compacted.
    pub compactions: u64,
    /// Highest physical block count in use.
    pub peak_blocks: u64,
}

/// The translation layer over a device `D` with `B_r < B_w` (or equal).
pub struct TranslationLayer<D> {
    inner: D,
    page: usize,
    per_block: u32,
    stats: IoStats,
    tl: TlStats,
    map: Vec<u32>,
    reverse: Vec<u32>,
    valid: Vec<u32>,
    free: Vec<u32>,
    capacity_blocks: Option<u32>,
    open_block: u32,
    open: AlignedBuf,
    fill: u32,
    recent: VecDeque<(u32, AlignedBuf)>,
    write_buffers: usize,
}

impl<D: BlockIo> TranslationLayer<D> {
    /// A layer over `inner` with `write_buffers` (at least 1) `B_w` buffers and, if given, at
    /// most `capacity_blocks` physical `B_w` blocks.
    pub fn new(
        inner: D,
        write_buffers: usize,
        capacity_blocks: Option<u32>,
    ) -> Result<Self, EmError> {
        let sizes = inner.block_sizes();
        let per_block = (sizes.write_bytes / sizes.read_bytes) as u32;
        if write_buffers == 0 || capacity_blocks == Some(0) {
            return Err(EmError::Config(
                "the translation layer needs at least one write buffer and one block".into(),
            ));
        }
        Ok(TranslationLayer {
            page: sizes.read_bytes as usize,
            per_block,
            stats: IoStats::default(),
            tl: TlStats {
                peak_blocks: 1,
                ..TlStats::default()
            },
            map: Vec::new(),
            reverse: vec![UNMAPPED; per_block as usize],
            valid: vec![0],
            free: Vec::new(),
            capacity_blocks,
            open_block: 0,
            open: AlignedBuf::new(sizes.write_bytes as usize),
            fill: 0,
            recent: VecDeque::new(),
            write_buffers,
            inner,
        })
    }

    /// The device underneath (its counters are the physical I/O).
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The layer's own counters.
    pub fn tl_stats(&self) -> TlStats {
        self.tl
    }

    /// Bytes of the in-memory map, reverse map and block table.
    pub fn memory_bytes(&self) -> u64 {
        4 * (self.map.len() + self.reverse.len() + self.valid.len() + self.free.len()) as u64
    }

    fn block_of(&self, ppn: u32) -> u32 {
        ppn / self.per_block
    }

    /// Where a page's bytes are in memory, if a write buffer holds them.
    fn buffered(&self, ppn: u32) -> Option<&[u8]> {
        let block = self.block_of(ppn);
        let slot = (ppn % self.per_block) as usize * self.page;
        if block == self.open_block {
            return Some(&self.open.bytes()[slot..slot + self.page]);
        }
        self.recent
            .iter()
            .find(|(b, _)| *b == block)
            .map(|(_, buf)| &buf.bytes()[slot..slot + self.page])
    }

    fn read_page(&mut self, lpn: usize, out: &mut [u8]) -> Result<(), EmError> {
        let ppn = self.map.get(lpn).copied().unwrap_or(UNMAPPED);
        if ppn == UNMAPPED {
            out.fill(0);
            return Ok(());
        }
        if let Some(data) = self.buffered(ppn) {
            out.copy_from_slice(data);
            self.tl.buffer_hits += 1;
            return Ok(());
        }
        self.inner.read(u64::from(ppn) * self.page as u64, out)
    }

    /// Forget the current location of `lpn`, freeing its block if it held nothing else
    /// (and telling the device, at the block's physical address, that it is dead).
    fn invalidate(&mut self, lpn: usize) -> Result<(), EmError> {
        let old = self.map[lpn];
        if old == UNMAPPED {
            return Ok(());
        }
        self.map[lpn] = UNMAPPED;
        self.reverse[old as usize] = UNMAPPED;
        let block = self.block_of(old);
        self.valid[block as usize] -= 1;
        if self.valid[block as usize] == 0 && block != self.open_block {
            self.recent.retain(|(b, _)| *b != block);
            self.free.push(block);
            let bytes = self.page as u64 * u64::from(self.per_block);
            self.inner.discard(u64::from(block) * bytes, bytes)?;
        }
        Ok(())
    }

    fn append(&mut self, lpn: usize, data: &[u8]) -> Result<(), EmError> {
        if self.fill == self.per_block {
            self.seal()?;
        }
        let ppn = self.open_block * self.per_block + self.fill;
        let slot = self.fill as usize * self.page;
        self.open.bytes_mut()[slot..slot + self.page].copy_from_slice(data);
        if self.map.len() <= lpn {
            self.map.resize(lpn + 1, UNMAPPED);
        }
        self.map[lpn] = ppn;
        self.reverse[ppn as usize] = lpn as u32;
        self.valid[self.open_block as usize] += 1;
        self.fill += 1;
        Ok(())
    }

    /// Write the full open buffer as one `B_w` block and open another block.
    fn seal(&mut self) -> Result<(), EmError> {
        let len = self.page * self.per_block as usize;
        let offset = u64::from(self.open_block) * len as u64;
        self.inner.write(offset, &self.open.bytes()[..len])?;
        let written = std::mem::replace(&mut self.open, AlignedBuf::new(0));
        // The next open buffer: this one if its block is free again, else the oldest kept
        // for reads once `write_buffers - 1` are (with one write buffer, this one at once).
        let reuse = if self.valid[self.open_block as usize] == 0 {
            // Every page died while the block was open (`invalidate` leaves the open block
            // alone): it is free again, as a sealed block would be.
            self.free.push(self.open_block);
            self.inner.discard(offset, len as u64)?;
            Some(written)
        } else {
            self.recent.push_back((self.open_block, written));
            if self.recent.len() >= self.write_buffers {
                self.recent.pop_front().map(|(_, buf)| buf)
            } else {
                None
            }
        };
        self.open = reuse.unwrap_or_else(|| AlignedBuf::new(len));
        self.fill = 0;
        self.open_block = self.allocate()?;
        Ok(())
    }

    fn allocate(&mut self) -> Result<u32, EmError> {
        if let Some(block) = self.free.pop() {
            return Ok(block);
        }
        let used = self.valid.len() as u32;
        if self.capacity_blocks.is_none_or(|cap| used < cap) {
            self.valid.push(0);
            self.reverse
                .resize(self.reverse.len() + self.per_block as usize, UNMAPPED);
            self.tl.peak_blocks = self.tl.peak_blocks.max(u64::from(used) + 1);
            return Ok(used);
        }
        self.compact()
    }

    /// Compact the block with the fewest valid pages into itself; returns it as the open
    /// block with its survivors already appended.
    fn compact(&mut self) -> Result<u32, EmError> {
        let victim = (0..self.valid.len() as u32)
            .filter(|&b| b != self.open_block)
            .min_by_key(|&b| (self.valid[b as usize], b))
            .expect("invariant: a bounded layer has at least one sealed block here");
        if self.valid[victim as usize] == self.per_block {
            return Err(EmError::Device(format!(
                "the translation layer is full: all {} blocks hold only valid pages",
                self.valid.len()
            )));
        }
        let mut survivors = Vec::new();
        let mut page = vec![0u8; self.page];
        for slot in 0..self.per_block {
            let ppn = victim * self.per_block + slot;
            let lpn = self.reverse[ppn as usize];
            if lpn != UNMAPPED {
                self.read_page(lpn as usize, &mut page)?;
                survivors.push((lpn as usize, page.clone()));
            }
        }
        for &(lpn, _) in &survivors {
            self.invalidate(lpn)?;
        }
        self.free.retain(|&b| b != victim);
        self.recent.retain(|(b, _)| *b != victim);
        self.open_block = victim;
        self.tl.compactions += 1;
        self.tl.pages_moved += survivors.len() as u64;
        for (lpn, data) in survivors {
            self.append(lpn, &data)?;
        }
        Ok(victim)
    }

    /// Check the maps against each other and the valid counts; linear in the size.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut counts = vec![0u32; self.valid.len()];
        for (lpn, &ppn) in self.map.iter().enumerate() {
            if ppn != UNMAPPED {
                if self.reverse[ppn as usize] != lpn as u32 {
                    return Err(format!("page {lpn} maps to {ppn}, which maps elsewhere"));
                }
                counts[self.block_of(ppn) as usize] += 1;
            }
        }
        if counts != self.valid {
            return Err("valid-page counts differ from the map".into());
        }
        for &block in &self.free {
            if self.valid[block as usize] != 0 || block == self.open_block {
                return Err(format!("free block {block} holds valid pages or is open"));
            }
        }
        Ok(())
    }
}

/// The device underneath is the physical one.
impl<D: PhysicalIo> PhysicalIo for TranslationLayer<D> {
    fn physical(&self) -> IoStats {
        self.inner.physical()
    }

    fn written_extent_bytes(&self) -> Option<u64> {
        self.inner.written_extent_bytes()
    }
}

impl<D: BlockIo> BlockIo for TranslationLayer<D> {
    fn block_sizes(&self) -> BlockSizes {
        BlockSizes {
            read_bytes: self.page as u64,
            write_bytes: self.page as u64,
        }
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        check_aligned("read", offset, buf.len(), self.page as u64);
        self.stats.count_read(buf.len() as u64, self.page as u64);
        let first = (offset / self.page as u64) as usize;
        let page = self.page;
        for (i, out) in buf.chunks_mut(page).enumerate() {
            self.read_page(first + i, out)?;
        }
        Ok(())
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        check_aligned("write", offset, buf.len(), self.page as u64);
        self.stats.count_write(buf.len() as u64, self.page as u64);
        let first = (offset / self.page as u64) as usize;
        for (i, data) in buf.chunks(self.page).enumerate() {
            let lpn = first + i;
            if lpn < self.map.len() {
                self.invalidate(lpn)?;
            }
            self.append(lpn, data)?;
        }
        Ok(())
    }

    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        let page = self.page as u64;
        let first = offset.div_ceil(page) as usize;
        let end = (((offset + len) / page) as usize).min(self.map.len());
        for lpn in first..end {
            self.invalidate(lpn)?;
        }
        Ok(())
    }

    /// Write the open buffer (whole, even if partly filled) and sync the device.
    fn sync(&mut self) -> Result<(), EmError> {
        if self.fill > 0 {
            self.seal()?;
        }
        self.inner.sync()
    }

    fn stats(&self) -> IoStats {
        self.stats
    }

    fn describe(&self) -> String {
        format!("translation layer over {}", self.inner.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimIo;

    #[test]
    fn random_writes_reach_the_device_as_whole_b_w_blocks() {
        let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
        let mut tl = TranslationLayer::new(sim, 2, None).expect("tl");
        for i in 0..64u64 {
            let lpn = (i * 37) % 64;
            tl.write(lpn * 512, &[i as u8; 512]).expect("write");
        }
        // The eighth block is full but stays open until a page needs room or a sync.
        assert_eq!(tl.inner().stats().write_ios, 7);
        tl.sync().expect("sync");
        assert_eq!(tl.inner().stats().write_ios, 8);
        // Nothing buffered since: a second sync writes nothing.
        tl.sync().expect("sync");
        assert_eq!(tl.inner().stats().write_ios, 8);
        assert_eq!(tl.inner().stats().write_bytes, 64 * 512);
        let mut page = [0u8; 512];
        tl.read(0, &mut page).expect("read");
        assert_eq!(page[0], 0);
        tl.check_invariants().expect("invariants");
    }

    #[test]
    fn a_bounded_layer_worked_page_by_page() {
        // Blocks of 4 pages of 512 B, at most 3 of them, 2 write buffers.
        let sim = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        let mut tl = TranslationLayer::new(sim, 2, Some(3)).expect("tl");
        let write = |tl: &mut TranslationLayer<SimIo>, lpn: u64, value: u8| {
            tl.write(lpn * 512, &[value; 512]).expect("write");
        };
        let read = |tl: &mut TranslationLayer<SimIo>, lpn: u64| {
            let mut page = [0u8; 512];
            tl.read(lpn * 512, &mut page).expect("read");
            page[0]
        };
        // Pages 0-3 fill block 0, 4-7 block 1 (block 0 sealed and kept in a buffer).
        for lpn in 0..8 {
            write(&mut tl, lpn, lpn as u8);
        }
        assert_eq!(tl.tl_stats().peak_blocks, 2);
        // Rewriting 0-3 seals block 1 into block 2 and empties block 0, which is freed.
        for lpn in 0..4 {
            write(&mut tl, lpn, 100 + lpn as u8);
        }
        assert_eq!(
            (tl.free.clone(), tl.open_block, tl.tl_stats().peak_blocks),
            (vec![0], 2, 3)
        );
        assert_eq!(tl.inner().stats().write_ios, 2);
        // 8 mapped pages, 3 blocks' reverse maps (4 each) and counts, 1 free: 4 bytes each.
        assert_eq!(tl.memory_bytes(), 4 * (8 + 12 + 3 + 1));
        // Page 8 seals block 2 and opens the free block 0.
        write(&mut tl, 8, 8);
        assert_eq!((tl.open_block, tl.recent.len()), (0, 1));
        // Block 1 is on the device only; block 2 in a buffer, block 0 open.
        assert_eq!(
            (read(&mut tl, 4), read(&mut tl, 0), read(&mut tl, 8)),
            (4, 100, 8)
        );
        assert_eq!(tl.tl_stats().buffer_hits, 2);
        assert_eq!(tl.inner().stats().read_ios, 1);
        // Pages 9-11 fill block 0; rewriting page 4 then needs a block, and with 3 in use
        // the one with the fewest valid pages (block 1, 3 of them) is compacted into itself.
        for lpn in 9..12 {
            write(&mut tl, lpn, lpn as u8);
        }
        write(&mut tl, 4, 104);
        let stats = tl.tl_stats();
        assert_eq!(
            stats,
            TlStats {
                buffer_hits: 2,
                pages_moved: 3,
                compactions: 1,
                peak_blocks: 3,
            }
        );
        assert_eq!(tl.open_block, 1);
        assert_eq!(tl.inner().stats().read_ios, 1 + 3);
        assert_eq!(tl.inner().stats().write_ios, 4);
        let values: Vec<u8> = (0..12).map(|lpn| read(&mut tl, lpn)).collect();
        assert_eq!(values, [100, 101, 102, 103, 104, 5, 6, 7, 8, 9, 10, 11]);
        // Pages 0-3 came from the device (block 2); 4-7 from the open block 1, and 8-11 from
        // block 0's buffer, which the compaction of block 1 left alone.
        assert_eq!(tl.tl_stats().buffer_hits, 2 + 8);
        assert_eq!(tl.inner().stats().read_ios, 4 + 4);
        // The physical figures are the device's: blocks 0, 1 and 2 written, 3 blocks of 2 KiB.
        assert_eq!(tl.physical(), tl.inner().stats());
        assert_eq!(tl.written_extent_bytes(), Some(3 * 2048));
        tl.check_invariants().expect("invariants");
        // 12 mapped pages, 3 blocks' reverse maps and counts, no free block: 4 bytes each.
        assert_eq!(tl.memory_bytes(), 4 * (12 + 12 + 3));
        assert_eq!(
            tl.describe(),
            "translation layer over simulated device (with data)"
        );
    }

    #[test]
    fn a_block_whose_pages_all_die_while_open_is_free_once_sealed() {
        // Blocks of 4 pages, 2 write buffers, no bound: pages 0-3 fill block 0 and are
        // discarded while it is still open.
        let sim = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        let mut tl = TranslationLayer::new(sim, 2, None).expect("tl");
        tl.write(0, &[7; 4 * 512]).expect("write");
        tl.discard(0, 4 * 512).expect("discard");
        // Page 4 seals block 0 (written whole, as every full buffer is), which holds nothing
        // alive: it is freed, kept in no buffer, and opened again.
        tl.write(4 * 512, &[4; 512]).expect("write");
        assert_eq!(tl.inner().stats().write_ios, 1);
        assert_eq!((tl.open_block, tl.tl_stats().peak_blocks), (0, 1));
        assert!(tl.recent.is_empty() && tl.free.is_empty());
        let mut page = [9u8; 512];
        tl.read(0, &mut page).expect("read");
        assert_eq!(page, [0; 512]);
        // The device was told: it reads the block's pages as zeros.
        let mut block = [9u8; 2048];
        tl.inner.read(0, &mut block).expect("read");
        assert_eq!(block, [0; 2048]);
        tl.check_invariants().expect("invariants");
    }

    /// A layer with several sealed blocks, an open one and at least one free block: 96
    /// pages written in order, then the first 24 rewritten, which empties the first blocks.
    fn busy_layer() -> TranslationLayer<SimIo> {
        let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
        let mut tl = TranslationLayer::new(sim, 2, None).expect("tl");
        for lpn in (0..96u64).chain(0..24) {
            tl.write(lpn * 512, &[lpn as u8; 512]).expect("write");
        }
        tl.check_invariants().expect("a healthy layer passes");
        assert!(!tl.free.is_empty(), "the rewrites freed a block");
        tl
    }

    #[test]
    fn an_emptied_block_is_discarded_at_its_address_and_the_others_stay_buffered() {
        // Blocks of 8 pages: 96 pages fill blocks 0-11, and rewriting pages 0-23 (into
        // block 12, then the freed blocks 0 and 1) empties blocks 0, 1 and 2 in turn.
        let mut tl = busy_layer();
        assert_eq!((tl.free.clone(), tl.open_block), (vec![2], 1));
        // Block 0, sealed last, is still in a buffer: freeing block 2 left it there.
        let buffered: Vec<u32> = tl.recent.iter().map(|&(b, _)| b).collect();
        assert_eq!(buffered, [0]);
        // The device dropped block 2's pages (it reads them as zeros) and kept block 3's.
        let mut block = [0u8; 4096];
        tl.inner.read(2 * 4096, &mut block).expect("read");
        assert!(block.iter().all(|&b| b == 0));
        tl.inner.read(3 * 4096, &mut block).expect("read");
        assert_eq!(block[0], 24);
    }

    fn violation(tl: &TranslationLayer<SimIo>) -> String {
        tl.check_invariants().expect_err("the corruption is caught")
    }

    #[test]
    fn catches_a_reverse_map_entry_that_names_another_page() {
        let mut tl = busy_layer();
        let ppn = tl.map[40];
        tl.reverse[ppn as usize] = 41;
        let e = violation(&tl);
        assert!(e.contains("page 40 maps to"), "{e}");
        assert!(e.contains("which maps elsewhere"), "{e}");
    }

    #[test]
    fn catches_a_valid_count_that_disagrees_with_the_map() {
        let mut tl = busy_layer();
        let block = tl.block_of(tl.map[40]);
        tl.valid[block as usize] -= 1;
        let e = violation(&tl);
        assert!(e.contains("valid-page counts differ"), "{e}");
    }

    #[test]
    fn catches_a_free_block_that_holds_valid_pages() {
        let mut tl = busy_layer();
        let block = tl.block_of(tl.map[40]);
        assert_ne!(block, tl.open_block);
        tl.free.push(block);
        let e = violation(&tl);
        assert!(
            e.contains(&format!("free block {block} holds valid pages")),
            "{e}"
        );
    }

    #[test]
    fn catches_the_open_block_on_the_free_list() {
        let mut tl = busy_layer();
        // Point the open block at an empty free block: only "it is open" is wrong.
        let free = *tl.free.last().expect("a free block");
        assert_eq!(tl.valid[free as usize], 0);
        tl.open_block = free;
        let e = violation(&tl);
        assert!(e.contains(&format!("free block {free}")), "{e}");
    }
}
