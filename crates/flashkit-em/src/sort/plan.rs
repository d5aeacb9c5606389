//! The mergesort plan: run length, fan-in and the merge tree, derived from `N`, `M`, `B_r`
//! and `B_w` alone. The plan is data-independent, so its volumes are exact predictions:
//! a sort on any backend moves exactly what [`Plan::volumes`] says, and a counting-only
//! simulator can replay a plan of 2^32 records in a second (section 3.1; Table 1).
//!
//! Memory budget (all buffers are counted against `M`):
//! - run formation keeps four run buffers: one being read, one being sorted, the radix
//!   sort's scratch and one being written; a run is `M/4` rounded down to whole `B_w`;
//! - a merge of `f` runs keeps two `B_r` buffers per input (one consumed, one being
//!   prefetched) and two `B_w` output buffers: `2*f*B_r + 2*B_w <= M`. Where memory is
//!   left over, the merge spends it (never more than `M`) on parallel parts, each with the
//!   same buffers, and on reading further ahead (up to 8 blocks an input): the plan, and so
//!   the volumes, stay the same.
//!
//! Resident runs ([`Plan::keep_resident`], off unless asked for): when one merge pass
//! finishes the sort, the last runs formed need not go to the device at all. Of run
//! formation's four buffers, three can hold sorted runs when the last run is sorted (the
//! fourth is the radix sort's scratch), so up to [`MAX_RESIDENT`] runs stay in memory and
//! the merge reads them there, with what memory is left for its buffers. That saves writing
//! and reading those runs (3 of the 16 runs of 2^28 u64 in 512 MiB: 19% of the run I/O). The
//! paper's algorithm writes every run; its tables are reproduced with none resident.

use crate::EmError;
use crate::io::BlockSizes;
use serde::Serialize;

/// How many runs one merge combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FanIn {
    /// As many as memory allows with `B_r` input buffers: `Theta(M/B_r)`, the optimal
    /// choice of Lemma 3.
    ReadBlocks,
    /// As many as memory allows if inputs were buffered in `B_w` blocks: `Theta(M/B_w)`,
    /// the choice the paper shows to cost `O(N log_{M/B_w} N/B_w)`.
    WriteBlocks,
    /// The model's choice: the fewest passes the `B_r` bound allows, with the runs spread
    /// evenly over the merges of each pass (fan-in `ceil(runs^(1/passes))`).
    Model,
    /// A fixed fan-in (at least 2, at most what memory allows).
    Fixed(u64),
}

impl std::str::FromStr for FanIn {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "read" | "br" => Ok(FanIn::ReadBlocks),
            "write" | "bw" => Ok(FanIn::WriteBlocks),
            "model" => Ok(FanIn::Model),
            other => other
                .parse()
                .map(FanIn::Fixed)
                .map_err(|_| format!("fan-in {other:?} is not read, write, model or a number")),
        }
    }
}

/// One merge: consecutive runs `first..first + count` of the previous level become one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Merge {
    /// First input run (index into the previous level).
    pub first: u64,
    /// Number of input runs.
    pub count: u64,
}

/// The sort's schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Record size in bytes.
    pub record_bytes: u64,
    /// Records to sort.
    pub records: u64,
    /// Block sizes the sort reads and writes with.
    pub sizes: BlockSizes,
    /// Memory budget in bytes.
    pub memory_bytes: u64,
    /// Records in a full run.
    pub run_records: u64,
    /// Runs formed.
    pub runs: u64,
    /// Largest fan-in memory allows.
    pub max_fan_in: u64,
    /// Fan-in used.
    pub fan_in: u64,
    /// Merge passes: for each, its merges in order (a run left alone is a one-way merge,
    /// a copy).
    pub passes: Vec<Vec<Merge>>,
    /// The last runs formed that stay in memory for the merge instead of being written and
    /// read back (0: every run is written, as in the paper). Only a plan of one merge pass
    /// keeps any ([`Plan::keep_resident`]), so they are always inputs of the first pass.
    pub resident: u64,
}

/// Most runs run formation can keep in memory: three of its four run buffers (the fourth is
/// the radix sort's scratch when the last run is sorted).
pub const MAX_RESIDENT: u64 = 3;

/// Bytes moved and I/Os issued, predicted or measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Volumes {
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Read I/Os (of `B_r`).
    pub read_ios: u64,
    /// Write I/Os (of `B_w`).
    pub write_ios: u64,
}

/// Runs a plan may have: it holds every run's length and every merge, so its size grows with
/// them (2^24 runs take a few hundred MiB). The paper's largest sort, 2^32 integers in
/// 512 MiB, makes 128.
pub const MAX_RUNS: u64 = 1 << 24;

impl Plan {
    /// Plan a sort of `records` records of `record_bytes` bytes in `memory_bytes`.
    pub fn new(
        records: u64,
        record_bytes: u64,
        sizes: BlockSizes,
        memory_bytes: u64,
        fan_in: FanIn,
    ) -> Result<Plan, EmError> {
        let run_bytes = (memory_bytes / 4) / sizes.write_bytes * sizes.write_bytes;
        if run_bytes == 0 || run_bytes < record_bytes {
            return Err(EmError::Config(format!(
                "memory {memory_bytes} B is too small: run formation needs 4 buffers of at \
                 least one B_w = {} B block",
                sizes.write_bytes
            )));
        }
        let max_fan_in =
            (memory_bytes.saturating_sub(2 * sizes.write_bytes)) / (2 * sizes.read_bytes);
        if max_fan_in < 2 {
            return Err(EmError::Config(format!(
                "memory {memory_bytes} B cannot merge two runs: a merge needs 2 B_r buffers \
                 per input and 2 B_w output buffers"
            )));
        }
        if records.checked_mul(record_bytes).is_none() {
            return Err(EmError::Config(format!(
                "{records} records of {record_bytes} B are more than 2^64 bytes"
            )));
        }
        let run_records = run_bytes / record_bytes;
        let runs = records.div_ceil(run_records).max(1);
        if runs > MAX_RUNS {
            return Err(EmError::Config(format!(
                "{records} records make {runs} runs of {run_records} records with memory \
                 {memory_bytes} B, more than the {MAX_RUNS} a plan holds (it lists every run \
                 and merge): give more memory or fewer records"
            )));
        }
        let fan_in = choose_fan_in(fan_in, runs, max_fan_in, sizes, memory_bytes)?;
        let passes = merge_passes(runs, fan_in);
        Ok(Plan {
            record_bytes,
            records,
            sizes,
            memory_bytes,
            run_records,
            runs,
            max_fan_in,
            fan_in,
            passes,
            resident: 0,
        })
    }

    /// Keep up to `wanted` of the last runs in memory for the merge (at most
    /// [`MAX_RESIDENT`], and only as many as leave the merge its buffers for the runs on
    /// the device: `2 B_r` per input and `2 B_w` of output). Only a sort that one merge pass
    /// finishes keeps any: with more passes every run goes through the device anyway.
    pub fn keep_resident(mut self, wanted: u64) -> Plan {
        self.resident = 0;
        if self.passes.len() != 1 {
            return self;
        }
        let (br, bw) = (self.sizes.read_bytes, self.sizes.write_bytes);
        let fits = |k: u64| {
            let merge = 2 * (self.runs - k) * br + 2 * bw;
            k * self.run_buffer_bytes() + merge <= self.memory_bytes
        };
        let most = wanted.min(MAX_RESIDENT).min(self.runs);
        self.resident = (1..=most).rev().find(|&k| fits(k)).unwrap_or(0);
        self
    }

    /// Bytes of one of run formation's four buffers: a full run in whole `B_w` blocks.
    pub fn run_buffer_bytes(&self) -> u64 {
        (self.run_records * self.record_bytes)
            .div_ceil(self.sizes.write_bytes)
            .max(1)
            * self.sizes.write_bytes
    }

    /// Whether run `index` of level 0 stays in memory.
    pub fn is_resident(&self, index: u64) -> bool {
        index + self.resident >= self.runs
    }

    /// Memory the merge may spend on buffers: `M` less the resident runs' buffers.
    pub fn merge_memory(&self) -> u64 {
        self.memory_bytes - self.resident * self.run_buffer_bytes()
    }

    /// Records in run `index` of level 0.
    pub fn run_len(&self, index: u64) -> u64 {
        let start = index * self.run_records;
        self.run_records.min(self.records - start)
    }

    /// Records in each run of every level: level 0 is run formation's output, level `p`
    /// the output of pass `p`.
    pub fn levels(&self) -> Vec<Vec<u64>> {
        let mut levels = vec![(0..self.runs).map(|i| self.run_len(i)).collect::<Vec<_>>()];
        for pass in &self.passes {
            let previous = levels.last().expect("invariant: level 0 exists");
            let next = pass
                .iter()
                .map(|m| {
                    previous[m.first as usize..(m.first + m.count) as usize]
                        .iter()
                        .sum()
                })
                .collect();
            levels.push(next);
        }
        levels
    }

    /// Exact volumes and I/O counts of executing this plan. Run formation reads the input
    /// in whole `B_r` blocks and writes each run in whole `B_w` blocks; each merge reads its
    /// inputs' blocks and writes its output's. A run left alone at the end of a pass is
    /// copied (a one-way merge), so that every level lives in one scratch area. Resident
    /// runs are read from the input but neither written nor read back.
    pub fn volumes(&self) -> Volumes {
        let mut v = Volumes::default();
        let levels = self.levels();
        for (i, &len) in levels[0].iter().enumerate() {
            self.add_read(&mut v, len);
            if !self.is_resident(i as u64) {
                self.add_write(&mut v, len);
            }
        }
        for (pass, merges) in self.passes.iter().enumerate() {
            for m in merges {
                for run in m.first..m.first + m.count {
                    if !self.is_resident(run) {
                        self.add_read(&mut v, levels[pass][run as usize]);
                    }
                }
                let inputs = &levels[pass][m.first as usize..(m.first + m.count) as usize];
                self.add_write(&mut v, inputs.iter().sum());
            }
        }
        v
    }

    fn add_read(&self, v: &mut Volumes, records: u64) {
        let blocks = (records * self.record_bytes).div_ceil(self.sizes.read_bytes);
        v.read_ios += blocks;
        v.read_bytes += blocks * self.sizes.read_bytes;
    }

    fn add_write(&self, v: &mut Volumes, records: u64) {
        let blocks = (records * self.record_bytes).div_ceil(self.sizes.write_bytes);
        v.write_ios += blocks;
        v.write_bytes += blocks * self.sizes.write_bytes;
    }

    /// Merge passes with at least one real merge.
    pub fn merge_passes(&self) -> usize {
        self.passes.len()
    }

    /// The input size in bytes.
    pub fn input_bytes(&self) -> u64 {
        self.records * self.record_bytes
    }
}

fn choose_fan_in(
    policy: FanIn,
    runs: u64,
    max_fan_in: u64,
    sizes: BlockSizes,
    memory_bytes: u64,
) -> Result<u64, EmError> {
    Ok(match policy {
        FanIn::ReadBlocks => max_fan_in,
        FanIn::WriteBlocks => {
            let f = memory_bytes.saturating_sub(2 * sizes.write_bytes) / (2 * sizes.write_bytes);
            f.clamp(2, max_fan_in)
        }
        FanIn::Model => match passes_needed(runs, max_fan_in) {
            // One run or none: nothing to merge.
            0 => max_fan_in,
            // One merge of every run.
            1 => runs,
            // The smallest f whose `passes` levels of f-way merges cover the runs (f =
            // max_fan_in does, by the choice of `passes`): at most 4,096 candidates, as
            // runs are at most 2^24 and there are two passes or more.
            passes => (2..max_fan_in)
                .find(|f| f.saturating_pow(passes as u32) >= runs)
                .unwrap_or(max_fan_in),
        },
        FanIn::Fixed(f) => {
            if f < 2 || f > max_fan_in {
                return Err(EmError::Config(format!(
                    "fan-in {f} is outside 2..={max_fan_in}, what the memory allows"
                )));
            }
            f
        }
    })
}

/// Passes a merge tree of fan-in `f` needs for `runs` runs.
pub fn passes_needed(runs: u64, f: u64) -> u64 {
    let mut passes = 0;
    let mut remaining = runs;
    while remaining > 1 {
        remaining = remaining.div_ceil(f);
        passes += 1;
    }
    passes
}

fn merge_passes(runs: u64, f: u64) -> Vec<Vec<Merge>> {
    let mut passes = Vec::new();
    let mut count = runs;
    while count > 1 {
        let merges: Vec<Merge> = (0..count)
            .step_by(f as usize)
            .map(|first| Merge {
                first,
                count: f.min(count - first),
            })
            .collect();
        count = merges.len() as u64;
        passes.push(merges);
    }
    passes
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn paper(sizes: BlockSizes, log_n: u32) -> Plan {
        Plan::new(1 << log_n, 4, sizes, 512 * MIB, FanIn::ReadBlocks).expect("valid")
    }

    #[test]
    fn the_papers_parameters_give_one_merge_pass_with_b_r() {
        let br = BlockSizes::same(128 << 10).expect("valid");
        for log_n in 25..=32 {
            let plan = paper(br, log_n);
            assert_eq!(plan.run_records * 4, 128 * MIB);
            assert!(plan.merge_passes() <= 1, "2^{log_n}");
            let v = plan.volumes();
            let passes = plan.merge_passes() as u64;
            assert_eq!(v.read_bytes, (1 + passes) * plan.input_bytes(), "2^{log_n}");
            assert_eq!(
                passes,
                u64::from(log_n > 25),
                "2^{log_n}: one run fits 2^25"
            );
        }
    }

    #[test]
    fn b_w_blocks_need_an_extra_pass_once_runs_outnumber_the_fan_in() {
        let bw = BlockSizes::same(16 * MIB).expect("valid");
        let plan = paper(bw, 28);
        assert_eq!(plan.max_fan_in, 15);
        assert_eq!((plan.runs, plan.merge_passes()), (8, 1));
        let plan = paper(bw, 29);
        assert_eq!((plan.runs, plan.merge_passes()), (16, 2));
        assert_eq!(plan.volumes().read_bytes, 3 * plan.input_bytes());
    }

    #[test]
    fn the_model_balances_the_merge_tree() {
        let sizes = BlockSizes::new(4096, 4096).expect("valid");
        // 2 * 11 * 4 KiB + 2 * 4 KiB: at most 11-way; runs of 24 KiB (6144 records).
        let memory = 96 * 1024;
        // 100 runs: two passes of 10-way merges rather than 11-way ones and a 1-way.
        let plan = Plan::new(100 * 6144, 4, sizes, memory, FanIn::Model).expect("valid");
        assert_eq!((plan.runs, plan.max_fan_in), (100, 11));
        assert_eq!(plan.fan_in, 10);
        assert_eq!(plan.merge_passes(), 2);
        let plan = Plan::new(50 * 6144, 4, sizes, memory, FanIn::Model).expect("valid");
        assert_eq!((plan.fan_in, plan.merge_passes()), (8, 2));
    }

    #[test]
    fn too_little_memory_is_refused() {
        let sizes = BlockSizes::new(4096, 1 << 20).expect("valid");
        assert!(Plan::new(1000, 8, sizes, 2 << 20, FanIn::ReadBlocks).is_err());
        assert!(Plan::new(1000, 8, sizes, 64 << 20, FanIn::Fixed(1)).is_err());
    }

    /// Inputs beyond 2^64 bytes, or so many runs that the plan itself would not fit in
    /// memory, are refused with a reason (2^62 records once aborted the process trying to
    /// allocate 21 TB for the plan's list of merges; found by trying huge N on the command
    /// line).
    #[test]
    fn absurd_sizes_are_refused_before_anything_is_allocated() {
        let sizes = BlockSizes::new(4096, 64 << 10).expect("valid");
        let error = Plan::new(1 << 62, 8, sizes, 1 << 20, FanIn::Model).expect_err("too big");
        assert!(error.to_string().contains("2^64 bytes"), "{error}");
        let error = Plan::new(1 << 60, 1, sizes, 1 << 20, FanIn::Model).expect_err("too many");
        assert!(error.to_string().contains("runs"), "{error}");
        let largest = MAX_RUNS * (256 << 10);
        assert!(Plan::new(largest, 1, sizes, 1 << 20, FanIn::Model).is_ok());
    }

    #[test]
    fn resident_runs_fit_beside_the_merge_buffers_and_leave_the_volumes() {
        let flash = BlockSizes::new(128 << 10, 16 * MIB).expect("valid");
        // 2^28 u64 in 512 MiB: 16 runs of 128 MiB, one pass; three stay in memory.
        let plan = Plan::new(1 << 28, 8, flash, 512 * MIB, FanIn::Model).expect("valid");
        let all = plan.volumes();
        let plan = plan.keep_resident(MAX_RESIDENT);
        assert_eq!(plan.resident, 3);
        assert!(plan.is_resident(13) && !plan.is_resident(12));
        let kept = plan.volumes();
        assert_eq!(all.read_bytes - kept.read_bytes, 3 * 128 * MIB);
        assert_eq!(all.write_bytes - kept.write_bytes, 3 * 128 * MIB);
        assert_eq!(plan.merge_memory(), 128 * MIB);
        // One run: written straight to the output, nothing to keep.
        let one = Plan::new(1000, 8, flash, 512 * MIB, FanIn::Model).expect("valid");
        assert_eq!(one.keep_resident(3).resident, 0);
        // Two passes: nothing kept.
        let bw = BlockSizes::same(16 * MIB).expect("valid");
        let two = paper(bw, 29).keep_resident(3);
        assert_eq!((two.merge_passes(), two.resident), (2, 0));
        // Memory that holds a run but not the merge's buffers beside it keeps fewer: runs
        // of 16 KiB, 7-way merges with 2 KiB reads; 4 resident runs would leave nothing.
        let sizes = BlockSizes::new(2048, 4096).expect("valid");
        let plan = Plan::new(7 * 2048, 8, sizes, 64 << 10, FanIn::Model).expect("valid");
        assert_eq!((plan.runs, plan.merge_passes()), (7, 1));
        // 3 * 16 KiB + 2 * 4 * 2 KiB + 8 KiB = 72 KiB > 64; 2 * 16 + 2 * 5 * 2 + 8 = 60.
        assert_eq!(plan.keep_resident(3).resident, 2);
        // At the bound: 16 KiB makes runs of 4 KiB, 7 of them; one resident run leaves
        // 4 + 2 x 6 x 0.5 + 4 = 14 KiB, two would need 8 + 2 x 5 x 0.5 + 4 = 17 KiB.
        let sizes = BlockSizes::new(512, 2048).expect("valid");
        let plan = Plan::new(3584, 8, sizes, 16 << 10, FanIn::Model).expect("valid");
        assert_eq!((plan.runs, plan.run_buffer_bytes()), (7, 4096));
        assert_eq!(plan.clone().keep_resident(3).resident, 1);
        assert_eq!(plan.keep_resident(0).resident, 0);
        // Exactly full: 8 KiB in runs of 2 KiB, 5 of them; two resident runs and the merge's
        // buffers for three take 4 + 2 x 3 x 0.5 + 1 = 8 KiB.
        let sizes = BlockSizes::same(512).expect("valid");
        let plan = Plan::new(1280, 8, sizes, 8 << 10, FanIn::Model).expect("valid");
        assert_eq!((plan.runs, plan.run_buffer_bytes()), (5, 2048));
        assert_eq!(plan.keep_resident(3).resident, 2);
    }

    #[test]
    fn the_model_fan_in_is_the_smallest_that_keeps_the_fewest_passes() {
        let sizes = BlockSizes::new(4096, 16384).expect("valid");
        let model = |runs: u64, max: u64| {
            choose_fan_in(FanIn::Model, runs, max, sizes, 1 << 20).expect("valid")
        };
        // The reference: the fewest passes fan-in `max` allows, then the smallest f >= 2
        // whose f^passes runs cover them, counted up one by one.
        for max in [2, 3, 7, 124] {
            for runs in 2..=3000u64 {
                let passes = passes_needed(runs, max) as u32;
                let f = (2..).find(|f: &u64| f.pow(passes) >= runs).expect("some f");
                assert_eq!(
                    model(runs, max),
                    f.min(max),
                    "{runs} runs, at most {max}-way"
                );
            }
        }
        // Exact powers, where a floating-point root may land just above the integer.
        for (runs, f) in [(1024, 32), (961, 31), (1_000_000, 100), (3u64.pow(20), 3)] {
            let passes = passes_needed(runs, f) as u32;
            assert_eq!(f.pow(passes), runs);
            assert_eq!(model(runs, f), f, "{runs} runs");
        }
        assert_eq!(model(1, 124), 124);
        assert_eq!(model(0, 124), 124);
    }

    #[test]
    fn a_fixed_fan_in_is_taken_from_two_to_what_memory_allows() {
        let sizes = BlockSizes::new(4096, 16384).expect("valid");
        let fixed = |f| choose_fan_in(FanIn::Fixed(f), 100, 124, sizes, 1 << 20);
        assert_eq!(
            (fixed(2).expect("two"), fixed(124).expect("the most")),
            (2, 124)
        );
        for f in [0, 1, 125] {
            let error = fixed(f).expect_err("outside");
            assert_eq!(
                error.to_string(),
                format!(
                    "invalid parameters: fan-in {f} is outside 2..=124, what the memory allows"
                )
            );
        }
    }

    #[test]
    fn the_write_block_fan_in_holds_two_write_blocks_an_input() {
        let sizes = BlockSizes::new(4096, 16384).expect("valid");
        // 1 MiB: (1 MiB - 32 KiB) / 32 KiB = 31 inputs; B_r would allow 124.
        let plan = Plan::new(1 << 24, 8, sizes, 1 << 20, FanIn::WriteBlocks).expect("valid");
        assert_eq!(plan.fan_in, 31);
        let f = |memory| choose_fan_in(FanIn::WriteBlocks, 100, 500, sizes, memory);
        assert_eq!(f(1 << 20).expect("valid"), 31);
        assert_eq!(f((1 << 20) - 1).expect("valid"), 30);
        // Never below a two-way merge, never above what B_r allows.
        assert_eq!(f(64 << 10).expect("valid"), 2);
        assert_eq!(f(16 << 10).expect("valid"), 2);
        assert_eq!(
            choose_fan_in(FanIn::WriteBlocks, 100, 20, sizes, 1 << 20).expect("valid"),
            20
        );
    }

    #[test]
    fn empty_input_is_one_empty_run() {
        let sizes = BlockSizes::same(4096).expect("valid");
        let plan = Plan::new(0, 8, sizes, 1 << 20, FanIn::Model).expect("valid");
        assert_eq!((plan.runs, plan.merge_passes()), (1, 0));
        assert_eq!(plan.volumes(), Volumes::default());
    }
}
