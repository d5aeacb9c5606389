//! The counting simulator: an in-memory address space that counts every I/O exactly.
//!
//! With data it stores what is written (in chunks of `B_r`, allocated on first write), so
//! an algorithm runs for real and its output can be checked. Without data it only counts
//! (reads return zeros): the volumes of a data-independent I/O schedule, such as the
//! mergesort plan replayed by `crate::sort::replay_plan`, are then exact at any size.

use super::{BlockIo, BlockSizes, IoStats, PhysicalIo, check_aligned};
use crate::EmError;

/// The counting simulator.
pub struct SimIo {
    sizes: BlockSizes,
    stats: IoStats,
    /// Chunks of `B_r` bytes, by chunk number; `None` when never written. Absent when the
    /// simulator only counts.
    chunks: Option<Vec<Option<Box<[u8]>>>>,
    /// One past the highest byte written so far.
    written_end: u64,
}

impl SimIo {
    /// A simulator that keeps the data.
    pub fn with_data(sizes: BlockSizes) -> Self {
        SimIo {
            sizes,
            stats: IoStats::default(),
            chunks: Some(Vec::new()),
            written_end: 0,
        }
    }

    /// A simulator that only counts: reads return zeros.
    pub fn counting(sizes: BlockSizes) -> Self {
        SimIo {
            sizes,
            stats: IoStats::default(),
            chunks: None,
            written_end: 0,
        }
    }

    /// One past the highest byte written so far (0 before the first write), with or
    /// without data: the address space a run of an algorithm needed, so that a device it
    /// runs on next (an FTL) can be sized to it. Discards do not lower it.
    pub fn written_extent_bytes(&self) -> u64 {
        self.written_end
    }

    fn chunk_bytes(&self) -> usize {
        self.sizes.read_bytes as usize
    }
}

impl PhysicalIo for SimIo {
    fn physical(&self) -> IoStats {
        self.stats()
    }

    fn written_extent_bytes(&self) -> Option<u64> {
        Some(SimIo::written_extent_bytes(self))
    }
}

impl BlockIo for SimIo {
    fn block_sizes(&self) -> BlockSizes {
        self.sizes
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        check_aligned("read", offset, buf.len(), self.sizes.read_bytes);
        self.stats
            .count_read(buf.len() as u64, self.sizes.read_bytes);
        let chunk = self.chunk_bytes();
        let first = (offset / chunk as u64) as usize;
        match &self.chunks {
            None => buf.fill(0),
            Some(chunks) => {
                for (i, out) in buf.chunks_mut(chunk).enumerate() {
                    match chunks.get(first + i) {
                        Some(Some(data)) => out.copy_from_slice(data),
                        _ => out.fill(0),
                    }
                }
            }
        }
        Ok(())
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        check_aligned("write", offset, buf.len(), self.sizes.write_bytes);
        self.stats
            .count_write(buf.len() as u64, self.sizes.write_bytes);
        self.written_end = self.written_end.max(offset + buf.len() as u64);
        let chunk = self.chunk_bytes();
        let first = (offset / chunk as u64) as usize;
        if let Some(chunks) = &mut self.chunks {
            let end = first + buf.len() / chunk;
            if chunks.len() < end {
                chunks.resize_with(end, || None);
            }
            for (i, data) in buf.chunks(chunk).enumerate() {
                match &mut chunks[first + i] {
                    Some(stored) => stored.copy_from_slice(data),
                    slot => *slot = Some(data.into()),
                }
            }
        }
        Ok(())
    }

    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        let chunk = self.chunk_bytes() as u64;
        if let Some(chunks) = &mut self.chunks {
            // Only whole chunks inside the range are dropped; the rest keep their bytes,
            // which is allowed (discarded contents are undefined).
            let first = offset.div_ceil(chunk);
            let end = (offset + len) / chunk;
            for index in first..end.min(chunks.len() as u64) {
                chunks[index as usize] = None;
            }
        }
        Ok(())
    }

    fn stats(&self) -> IoStats {
        self.stats
    }

    fn describe(&self) -> String {
        let mode = if self.chunks.is_some() {
            "with data"
        } else {
            "counting only"
        };
        format!("simulated device ({mode})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_round_trips_and_unwritten_bytes_read_as_zero() {
        let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        let data: Vec<u8> = (0..2048).map(|i| (i % 251) as u8).collect();
        io.write(4096, &data).expect("write");
        let mut back = vec![0xffu8; 1024];
        io.read(4096 + 512, &mut back).expect("read");
        assert_eq!(back, data[512..1536]);
        io.read(0, &mut back).expect("read");
        assert!(back.iter().all(|&b| b == 0));
        let stats = io.stats();
        assert_eq!((stats.read_ios, stats.write_ios), (4, 1));
        assert_eq!((stats.read_bytes, stats.write_bytes), (2048, 2048));
    }

    #[test]
    fn the_written_extent_is_the_end_of_the_highest_write_with_or_without_data() {
        let sizes = BlockSizes::new(512, 2048).expect("valid");
        for mut io in [SimIo::with_data(sizes), SimIo::counting(sizes)] {
            assert_eq!(io.written_extent_bytes(), 0);
            let mut back = [0u8; 512];
            io.read(1 << 20, &mut back).expect("read");
            assert_eq!(io.written_extent_bytes(), 0, "reads do not count");
            io.write(4096, &[1u8; 4096]).expect("write");
            assert_eq!(io.written_extent_bytes(), 8192);
            io.write(0, &[2u8; 2048]).expect("write");
            assert_eq!(io.written_extent_bytes(), 8192, "a lower write keeps it");
            io.discard(4096, 4096).expect("discard");
            assert_eq!(io.written_extent_bytes(), 8192, "a discard keeps it");
            io.write(10240, &[3u8; 2048]).expect("write");
            assert_eq!(io.written_extent_bytes(), 12288);
        }
    }

    #[test]
    fn a_discard_drops_only_the_whole_read_blocks_inside_it() {
        let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
        io.write(0, &[7u8; 2048]).expect("write");
        // From the middle of block 0 to the middle of block 3: blocks 1 and 2 only.
        io.discard(256, 1536).expect("discard");
        let mut back = vec![9u8; 2048];
        io.read(0, &mut back).expect("read");
        assert_eq!(back[..512], [7; 512]);
        assert_eq!(back[512..1536], [0; 1024]);
        assert_eq!(back[1536..], [7; 512]);
        // A discard inside one block, or past the end, drops nothing.
        io.discard(1600, 100).expect("discard");
        io.discard(1 << 20, 4096).expect("discard");
        io.read(1536, &mut back[..512]).expect("read");
        assert_eq!(back[..512], [7; 512]);
        assert_eq!(io.describe(), "simulated device (with data)");
        let counting = SimIo::counting(BlockSizes::new(512, 2048).expect("valid"));
        assert_eq!(counting.describe(), "simulated device (counting only)");
    }

    #[test]
    #[should_panic(expected = "not aligned")]
    fn a_misaligned_write_is_a_caller_bug() {
        let mut io = SimIo::counting(BlockSizes::new(512, 2048).expect("valid"));
        let _ = io.write(512, &[0u8; 2048]);
    }
}
