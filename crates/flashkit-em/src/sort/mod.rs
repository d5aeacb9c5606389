//! External multi-way mergesort of fixed-width records (section 3.1 and Table 1 of Ajwani
//! et al., SEA 2009).
//!
//! [`Plan`] fixes the schedule from `N`, `M`, `B_r`, `B_w` and a [`FanIn`] policy: runs of
//! `M/4`, then merge passes of fan-in up to `(M - 2 B_w) / (2 B_r)` (`Theta(M/B_r)`, the
//! optimal choice of Lemma 3), `Theta(M/B_w)`, or the model's balanced choice. [`sort`]
//! carries it out over any [`BlockIo`]: radix-sorted runs, a loser-tree merge, every input
//! and output double-buffered through an I/O worker thread, and the output verified (key
//! order across every block, and a multiset checksum equal to the input's).
//! [`sort_parallel`] splits each merge by key range over several threads with exactly the
//! same volumes (see `merge.rs`); the real-file sort uses it.
//! [`replay_plan`] issues the same transfers without data, which makes Table 1's volumes
//! exact at 2^32 records on the counting simulator.
//!
//! What this is not: a distribution sort. The paper's point is that merging suits the flash
//! models (merge `M/B_r` ways) while distribution can only split `M/B_w` ways.

mod exec;
pub mod files;
mod loser;
mod merge;
mod plan;
pub mod radix;

pub use loser::LoserTree;
pub use plan::{FanIn, MAX_RESIDENT, Merge, Plan, Volumes, passes_needed};

use crate::EmError;
use crate::io::{AlignedBuf, BlockIo, IoStats, SimIo};
use crate::record::{Checksum, Record};
use flashkit_core::{NoProgress, Progress};
use serde::Serialize;

/// Where a sort's data lives in the address space: the input's first byte, the output's,
/// and two scratch areas the merge passes alternate between. Every address is a multiple
/// of `B_w`, and the areas must not overlap (each needs the input size rounded up to whole
/// runs and blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// Input address.
    pub input: u64,
    /// Output address.
    pub output: u64,
    /// Scratch areas.
    pub scratch: [u64; 2],
}

impl Layout {
    /// Four consecutive areas, each large enough for `plan`: input at 0.
    pub fn packed(plan: &Plan) -> Layout {
        Layout::packed_at(0, plan)
    }

    /// Four consecutive areas from `base` (a multiple of `B_w`), each large enough for
    /// `plan`: input, output and the two scratch areas, `4 * plan.area_bytes()` in all.
    pub fn packed_at(base: u64, plan: &Plan) -> Layout {
        let area = plan.area_bytes();
        Layout {
            input: base,
            output: base + area,
            scratch: [base + 2 * area, base + 3 * area],
        }
    }
}

impl Plan {
    /// Bytes one area needs: every run rounded up to whole `B_w` blocks, plus one block.
    pub fn area_bytes(&self) -> u64 {
        let run_bytes = self.run_records * self.record_bytes;
        let block = self.sizes.write_bytes;
        (self.runs * run_bytes.div_ceil(block) * block + block).max(block)
    }
}

/// What a sort did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SortOutcome {
    /// The schedule it followed.
    pub plan: Plan,
    /// I/O of run formation.
    pub run_formation: IoStats,
    /// I/O of the whole sort.
    pub total: IoStats,
    /// The input's (and so the output's) multiset checksum.
    pub checksum: Checksum,
    /// Wall-clock seconds of run formation (measurement, not model).
    pub run_formation_seconds: f64,
    /// Wall-clock seconds of the whole sort.
    pub total_seconds: f64,
    /// For each merge pass, the most parts any of its merges split into: 1 when merged
    /// serially, and fewer than the threads asked for where memory does not hold that many
    /// parts' buffers or the keys give fewer distinct splitters.
    pub merge_parts: Vec<usize>,
}

/// Sort the `plan.records` records of type `R` at `layout.input` into `layout.output`.
///
/// The output is checked while it is written: keys in order across every block, and the
/// multiset checksum equal to the input's; a mismatch is [`EmError::Verify`]. Every merge
/// runs on one thread, so the device sees the same sequence of transfers every time (what a
/// simulated FTL or the translation layer needs to give the same figures run after run).
pub fn sort<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
) -> Result<SortOutcome, EmError> {
    exec::execute::<R, I>(io, plan, layout, 1, &NoProgress)
}

/// [`sort`] with each merge split by key range into up to `threads` parts merged in
/// parallel (fewer if memory does not hold that many sets of buffers). The volumes and I/O
/// counts are exactly the serial sort's, but the order in which the parts' transfers reach
/// the device depends on timing: use it where that order does not change the result (real
/// files, the counting simulator).
pub fn sort_parallel<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
    threads: usize,
) -> Result<SortOutcome, EmError> {
    sort_parallel_with_progress::<R, I>(io, plan, layout, threads, &NoProgress)
}

/// [`sort_parallel`], reporting run formation and each merge pass to `progress` (records
/// done of the input's).
pub fn sort_parallel_with_progress<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
    threads: usize,
    progress: &dyn Progress,
) -> Result<SortOutcome, EmError> {
    exec::execute::<R, I>(io, plan, layout, threads.max(1), progress)
}

/// Issue exactly the transfers [`sort`] would for `plan`, without data: on a counting
/// simulator, exact volumes and I/O counts at any input size.
pub fn replay_plan<I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
) -> Result<IoStats, EmError> {
    exec::replay(io, plan, layout)
}

/// Write `records` at `offset` in whole `B_w` blocks (the last one zero-padded).
pub fn write_records<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    offset: u64,
    records: &[R],
) -> Result<(), EmError> {
    let bw = io.block_sizes().write_bytes as usize;
    let mut buf = AlignedBuf::new(bw);
    let per_block = bw / R::BYTES;
    for (i, chunk) in records.chunks(per_block).enumerate() {
        buf.bytes_mut().fill(0);
        buf.records_mut::<R>()[..chunk.len()].copy_from_slice(chunk);
        io.write(offset + (i * bw) as u64, &buf.bytes()[..bw])?;
    }
    Ok(())
}

/// Read `count` records at `offset` (in whole `B_r` blocks).
pub fn read_records<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    offset: u64,
    count: u64,
) -> Result<Vec<R>, EmError> {
    let br = io.block_sizes().read_bytes as usize;
    let mut buf = AlignedBuf::new(br);
    let per_block = (br / R::BYTES) as u64;
    let mut out = Vec::with_capacity(count as usize);
    let mut block = 0u64;
    while (out.len() as u64) < count {
        io.read(offset + block * br as u64, &mut buf.bytes_mut()[..br])?;
        let take = (count - out.len() as u64).min(per_block) as usize;
        out.extend_from_slice(&buf.records::<R>()[..take]);
        block += 1;
    }
    Ok(out)
}

/// Sort `records` on a simulator with data and return the sorted records with the outcome
/// (for tests and small experiments).
pub fn sort_in_simulator<R: Record>(
    records: &[R],
    sizes: crate::io::BlockSizes,
    memory_bytes: u64,
    fan_in: FanIn,
) -> Result<(Vec<R>, SortOutcome), EmError> {
    let plan = Plan::new(
        records.len() as u64,
        R::BYTES as u64,
        sizes,
        memory_bytes,
        fan_in,
    )?;
    let layout = Layout::packed(&plan);
    let mut io = SimIo::with_data(sizes);
    write_records(&mut io, layout.input, records)?;
    let outcome = sort::<R, _>(&mut io, &plan, &layout)?;
    let sorted = read_records(&mut io, layout.output, records.len() as u64)?;
    Ok((sorted, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::BlockSizes;

    #[test]
    fn areas_hold_every_run_in_whole_write_blocks_and_one_more() {
        // M = 32 KiB: runs of M/4 = 8 KiB, four 2 KiB write blocks each.
        let sizes = BlockSizes::new(512, 2048).expect("valid");
        let plan = |records, record_bytes| {
            Plan::new(records, record_bytes, sizes, 32 << 10, FanIn::ReadBlocks).expect("plan")
        };
        assert_eq!(plan(1000, 8).area_bytes(), 8192 + 2048);
        assert_eq!(plan(3000, 8).area_bytes(), 3 * 8192 + 2048);
        // 24-byte records: 341 to a run, 8,184 bytes, padded to 8 KiB.
        let odd = plan(1000, 24);
        assert_eq!((odd.run_records, odd.runs), (341, 3));
        assert_eq!(odd.area_bytes(), 3 * 8192 + 2048);
        assert_eq!(
            Layout::packed(&odd),
            Layout {
                input: 0,
                output: 26_624,
                scratch: [2 * 26_624, 3 * 26_624],
            }
        );
        assert_eq!(
            Layout::packed_at(6144, &odd),
            Layout {
                input: 6144,
                output: 6144 + 26_624,
                scratch: [6144 + 2 * 26_624, 6144 + 3 * 26_624],
            }
        );
    }

    #[test]
    fn records_round_trip_through_whole_blocks() {
        let sizes = BlockSizes::new(512, 2048).expect("valid");
        let mut io = SimIo::with_data(sizes);
        // 600 u32s: two full write blocks of 512 and one of 88, zero-padded.
        let records: Vec<u32> = (0..600).map(|i| i * 7 + 1).collect();
        write_records(&mut io, 4096, &records).expect("write");
        assert_eq!(io.stats().write_ios, 2);
        assert_eq!(io.stats().write_bytes, 4096);
        let back: Vec<u32> = read_records(&mut io, 4096, 600).expect("read");
        assert_eq!(back, records);
        // 600 u32s are 5 read blocks of 128 (the last one partly used).
        assert_eq!(io.stats().read_ios, 5);
        let padded: Vec<u32> = read_records(&mut io, 4096, 1024).expect("read");
        assert_eq!(padded[..600], records[..]);
        assert!(padded[600..].iter().all(|&r| r == 0));
        assert!(
            read_records::<u32, _>(&mut io, 0, 0)
                .expect("read")
                .is_empty()
        );
    }
}
