//! A merging-based external priority queue (section 3.2 of Ajwani et al., SEA 2009), in the
//! spirit of Sanders' sequence heap: it only ever merges, never distributes, which is why it
//! keeps the `O(log_{M/B_r} N/B_r)` items per operation of the unit-cost model.
//!
//! Inserts go to an in-memory heap of `m` records. When it is full it is emptied, sorted,
//! into a run on the device (written in whole `B_w` blocks) at level 0. When a level holds
//! `k` runs, their remaining records are merged into one run at the next level (inputs read
//! in `B_r` blocks). Each run keeps its current `B_r` block in memory; the minimum is the
//! smaller of the heap's top and the smallest run head.
//!
//! What this is not: a decrease-key queue, or a tuned one (no deletion buffer or group
//! merging of the original sequence heap). Key decision: runs are immutable and allocated
//! by a bump pointer; a merged-away run is discarded, which a translation layer or an FTL
//! turns into free space.

use crate::EmError;
use crate::io::{AlignedBuf, BlockIo, IoStats};
use crate::record::Record;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A sorted run on the device, partly consumed.
struct Run<R> {
    offset: u64,
    records: u64,
    /// Records taken from earlier blocks.
    consumed: u64,
    block: Vec<R>,
    position: usize,
}

impl<R: Record> Run<R> {
    fn head(&self) -> Option<&R> {
        self.block.get(self.position)
    }

    fn remaining(&self) -> u64 {
        self.records - self.consumed - self.position as u64
    }
}

/// The external priority queue over a device `I`.
pub struct ExternalPq<R, I> {
    io: I,
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    heap_records: Vec<R>,
    free_slots: Vec<usize>,
    heap_capacity: usize,
    fan_in: usize,
    levels: Vec<Vec<Run<R>>>,
    next_offset: u64,
    len: u64,
    write_buf: AlignedBuf,
    read_buf: AlignedBuf,
}

impl<R: Record, I: BlockIo> ExternalPq<R, I> {
    /// A queue whose insertion heap holds `heap_capacity` records and whose levels merge
    /// `fan_in` runs (at least 2).
    pub fn new(io: I, heap_capacity: usize, fan_in: usize) -> Result<Self, EmError> {
        if heap_capacity == 0 || fan_in < 2 {
            return Err(EmError::Config(format!(
                "priority queue: heap capacity {heap_capacity} must be positive and fan-in \
                 {fan_in} at least 2"
            )));
        }
        let sizes = io.block_sizes();
        Ok(ExternalPq {
            write_buf: AlignedBuf::new(sizes.write_bytes as usize),
            read_buf: AlignedBuf::new(sizes.read_bytes as usize),
            io,
            heap: BinaryHeap::new(),
            heap_records: Vec::new(),
            free_slots: Vec::new(),
            heap_capacity,
            fan_in,
            levels: Vec::new(),
            next_offset: 0,
            len: 0,
        })
    }

    /// Records in the queue.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device's counters.
    pub fn io_stats(&self) -> IoStats {
        self.io.stats()
    }

    /// Runs on the device now.
    pub fn runs(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Insert a record.
    pub fn push(&mut self, record: R) -> Result<(), EmError> {
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.heap_records[slot] = record;
                slot
            }
            None => {
                self.heap_records.push(record);
                self.heap_records.len() - 1
            }
        };
        self.heap.push(Reverse((record.key(), slot as u64)));
        self.len += 1;
        if self.heap.len() >= self.heap_capacity {
            self.spill()?;
        }
        Ok(())
    }

    /// Remove and return a record with the smallest key. Among records with equal keys,
    /// which comes first is not specified.
    pub fn pop(&mut self) -> Result<Option<R>, EmError> {
        let heap_key = self.heap.peek().map(|Reverse((key, _))| *key);
        let mut best: Option<(u64, usize, usize)> = None;
        for (l, level) in self.levels.iter().enumerate() {
            for (r, run) in level.iter().enumerate() {
                if let Some(head) = run.head() {
                    let key = head.key();
                    if best.is_none_or(|(k, _, _)| key < k) {
                        best = Some((key, l, r));
                    }
                }
            }
        }
        let record = match (heap_key, best) {
            (None, None) => return Ok(None),
            (Some(h), Some((k, l, r))) if k < h => self.take_head(l, r)?,
            (None, Some((_, l, r))) => self.take_head(l, r)?,
            _ => {
                let Reverse((_, slot)) = self.heap.pop().expect("invariant: the heap has a top");
                self.free_slots.push(slot as usize);
                self.heap_records[slot as usize]
            }
        };
        self.len -= 1;
        Ok(Some(record))
    }

    fn take_head(&mut self, level: usize, index: usize) -> Result<R, EmError> {
        let run = &mut self.levels[level][index];
        let record = run.block[run.position];
        run.position += 1;
        if run.position == run.block.len() {
            let (offset, records, consumed) = (run.offset, run.records, run.consumed);
            let consumed = consumed + run.block.len() as u64;
            let block = self.load_block(offset, records, consumed)?;
            let run = &mut self.levels[level][index];
            run.consumed = consumed;
            run.block = block;
            run.position = 0;
            if run.block.is_empty() {
                let run = self.levels[level].remove(index);
                self.discard(&run)?;
            }
        }
        Ok(record)
    }

    /// The `B_r` block holding record `consumed` of a run (empty past its end).
    fn load_block(&mut self, offset: u64, records: u64, consumed: u64) -> Result<Vec<R>, EmError> {
        if consumed >= records {
            return Ok(Vec::new());
        }
        let br = self.io.block_sizes().read_bytes;
        let per_block = br / R::BYTES as u64;
        let block = consumed / per_block;
        self.io.read(
            offset + block * br,
            &mut self.read_buf.bytes_mut()[..br as usize],
        )?;
        let start = (consumed % per_block) as usize;
        let end = per_block.min(records - block * per_block) as usize;
        Ok(self.read_buf.records::<R>()[start..end].to_vec())
    }

    fn discard(&mut self, run: &Run<R>) -> Result<(), EmError> {
        let bw = self.io.block_sizes().write_bytes;
        let bytes = (run.records * R::BYTES as u64).div_ceil(bw) * bw;
        self.io.discard(run.offset, bytes)
    }

    /// Empty the insertion heap into a sorted run at level 0, then merge full levels.
    fn spill(&mut self) -> Result<(), EmError> {
        let mut sorted: Vec<R> = Vec::with_capacity(self.heap.len());
        while let Some(Reverse((_, slot))) = self.heap.pop() {
            sorted.push(self.heap_records[slot as usize]);
        }
        self.heap_records.clear();
        self.free_slots.clear();
        let run = self.write_run(&sorted)?;
        self.add_run(0, run)
    }

    fn add_run(&mut self, level: usize, run: Run<R>) -> Result<(), EmError> {
        if self.levels.len() <= level {
            self.levels.push(Vec::new());
        }
        self.levels[level].push(run);
        if self.levels[level].len() >= self.fan_in {
            let inputs = std::mem::take(&mut self.levels[level]);
            let merged = self.merge(inputs)?;
            self.add_run(level + 1, merged)?;
        }
        Ok(())
    }

    /// Merge the remaining records of `inputs` into one new run, streaming: one `B_r`
    /// block per input and one `B_w` output block in memory.
    fn merge(&mut self, mut inputs: Vec<Run<R>>) -> Result<Run<R>, EmError> {
        let bw = self.io.block_sizes().write_bytes;
        let per_block = (bw / R::BYTES as u64) as usize;
        let total: u64 = inputs.iter().map(Run::remaining).sum();
        let offset = self.next_offset;
        self.next_offset += (total * R::BYTES as u64).div_ceil(bw).max(1) * bw;
        let mut out: Vec<R> = Vec::with_capacity(per_block);
        let mut written = 0u64;
        loop {
            let mut best: Option<(u64, usize)> = None;
            for (i, run) in inputs.iter().enumerate() {
                if let Some(head) = run.head()
                    && best.is_none_or(|(k, _)| head.key() < k)
                {
                    best = Some((head.key(), i));
                }
            }
            let Some((_, i)) = best else { break };
            let run = &mut inputs[i];
            out.push(run.block[run.position]);
            run.position += 1;
            if run.position == run.block.len() {
                let consumed = run.consumed + run.block.len() as u64;
                let (run_offset, records) = (run.offset, run.records);
                let block = self.load_block(run_offset, records, consumed)?;
                let run = &mut inputs[i];
                run.consumed = consumed;
                run.block = block;
                run.position = 0;
            }
            if out.len() == per_block {
                self.write_block(offset + written * R::BYTES as u64, &out)?;
                written += out.len() as u64;
                out.clear();
            }
        }
        if !out.is_empty() {
            self.write_block(offset + written * R::BYTES as u64, &out)?;
        }
        for run in &inputs {
            self.discard(run)?;
        }
        let block = self.load_block(offset, total, 0)?;
        Ok(Run {
            offset,
            records: total,
            consumed: 0,
            block,
            position: 0,
        })
    }

    /// Write up to one `B_w` block of records at `offset`.
    fn write_block(&mut self, offset: u64, records: &[R]) -> Result<(), EmError> {
        let bw = self.io.block_sizes().write_bytes as usize;
        self.write_buf.records_mut::<R>()[..records.len()].copy_from_slice(records);
        self.io.write(offset, &self.write_buf.bytes()[..bw])
    }

    /// Write sorted records as a new run in whole `B_w` blocks, then load its first block.
    fn write_run(&mut self, records: &[R]) -> Result<Run<R>, EmError> {
        let bw = self.io.block_sizes().write_bytes;
        let per_block = (bw / R::BYTES as u64) as usize;
        let offset = self.next_offset;
        for (i, chunk) in records.chunks(per_block).enumerate() {
            self.write_block(offset + i as u64 * bw, chunk)?;
        }
        let count = records.len() as u64;
        self.next_offset += (count * R::BYTES as u64).div_ceil(bw).max(1) * bw;
        let block = self.load_block(offset, count, 0)?;
        Ok(Run {
            offset,
            records: count,
            consumed: 0,
            block,
            position: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{BlockSizes, SimIo};

    /// A device that records the ranges it is told are dead.
    struct Discards {
        inner: SimIo,
        discards: Vec<(u64, u64)>,
    }

    impl Discards {
        /// Over a simulator with 512 B read blocks and 2 KiB write blocks.
        fn new() -> Discards {
            Discards {
                inner: SimIo::with_data(BlockSizes::new(512, 2048).expect("valid")),
                discards: Vec::new(),
            }
        }
    }

    impl BlockIo for Discards {
        fn block_sizes(&self) -> BlockSizes {
            self.inner.block_sizes()
        }
        fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
            self.inner.read(offset, buf)
        }
        fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
            self.inner.write(offset, buf)
        }
        fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
            self.discards.push((offset, len));
            self.inner.discard(offset, len)
        }
        fn stats(&self) -> IoStats {
            self.inner.stats()
        }
        fn describe(&self) -> String {
            self.inner.describe()
        }
    }

    #[test]
    fn a_worked_example_of_spills_merges_and_transfers() {
        // u64 records: 64 to a 512 B read block, 256 to a 2 KiB write block. A heap of 4
        // spills on its 4th record; 2 runs on a level merge into one on the next.
        let io = Discards::new();
        let mut pq = ExternalPq::<u64, _>::new(io, 4, 2).expect("pq");
        assert!(pq.is_empty());
        for key in [40, 10, 30] {
            pq.push(key).expect("push");
        }
        assert_eq!((pq.runs(), pq.io_stats().write_ios), (0, 0));
        assert_eq!(pq.len(), 3);
        assert!(!pq.is_empty());
        // The 4th spills a run: one block written, its first block read back.
        pq.push(20).expect("push");
        let stats = pq.io_stats();
        assert_eq!((pq.runs(), stats.write_ios, stats.read_ios), (1, 1, 1));
        assert_eq!((stats.write_bytes, stats.read_bytes), (2048, 512));
        // The smallest comes from the run, and a key below it from the heap.
        assert_eq!(pq.pop().expect("pop"), Some(10));
        pq.push(5).expect("push");
        assert_eq!(pq.pop().expect("pop"), Some(5));
        // Four more spill a second run, and the two merge: the 3 left of the first and the
        // second's 4, in one block at the next free 2 KiB; the inputs' space is released.
        for key in [35, 25, 15, 45] {
            pq.push(key).expect("push");
        }
        let stats = pq.io_stats();
        assert_eq!((pq.runs(), stats.write_ios, stats.read_ios), (1, 3, 3));
        assert_eq!(pq.levels.len(), 2);
        assert_eq!(pq.levels[0].len(), 0);
        let merged = &pq.levels[1][0];
        assert_eq!(
            (merged.offset, merged.records, merged.remaining()),
            (4096, 7, 7)
        );
        assert_eq!(pq.next_offset, 6144);
        assert_eq!(pq.len(), 7);
        let mut keys = Vec::new();
        while let Some(key) = pq.pop().expect("pop") {
            keys.push(key);
        }
        assert_eq!(keys, [15, 20, 25, 30, 35, 40, 45]);
        // The exhausted run is gone; no more was read.
        assert_eq!((pq.runs(), pq.io_stats().read_ios), (0, 3));
        assert!(pq.is_empty());
        // The merge released its inputs' space, and the last pop the merged run's.
        assert_eq!(pq.io.discards, [(0, 2048), (2048, 2048), (4096, 2048)]);
        assert!(
            ExternalPq::<u64, _>::new(SimIo::counting(BlockSizes::same(512).expect("valid")), 0, 2)
                .is_err()
        );
        assert!(
            ExternalPq::<u64, _>::new(SimIo::counting(BlockSizes::same(512).expect("valid")), 1, 1)
                .is_err()
        );
        assert!(
            ExternalPq::<u64, _>::new(SimIo::counting(BlockSizes::same(512).expect("valid")), 1, 2)
                .is_ok()
        );
    }

    #[test]
    fn runs_longer_than_a_block_are_read_block_by_block() {
        // 300 records: a run of two write blocks (256 + 44), read in blocks of 64.
        let io = Discards::new();
        let mut pq = ExternalPq::<u64, _>::new(io, 300, 8).expect("pq");
        for key in (0..300u64).rev() {
            pq.push(key * 3).expect("push");
        }
        let stats = pq.io_stats();
        assert_eq!((pq.runs(), stats.write_ios, stats.read_ios), (1, 2, 1));
        assert_eq!(pq.next_offset, 4096);
        for key in 0..300u64 {
            assert_eq!(pq.pop().expect("pop"), Some(key * 3));
        }
        // 300 records are 5 read blocks (4 of 64 and one of 44).
        assert_eq!(pq.io_stats().read_ios, 5);
        assert_eq!(pq.pop().expect("pop"), None);
        // Its two write blocks released at once.
        assert_eq!(pq.io.discards, [(0, 4096)]);
    }

    #[test]
    fn spills_merge_into_higher_levels() {
        let io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        let mut pq = ExternalPq::<u64, _>::new(io, 100, 3).expect("pq");
        for key in (0..1000u64).rev() {
            pq.push(key).expect("push");
        }
        assert!(pq.runs() < 10, "levels merge: {} runs", pq.runs());
        for key in 0..1000u64 {
            assert_eq!(pq.pop().expect("pop"), Some(key));
        }
        assert_eq!(pq.pop().expect("pop"), None);
        assert!(pq.io_stats().write_bytes > 0);
    }
}
