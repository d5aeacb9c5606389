//! The two flash models of section 2 of Ajwani et al. (SEA 2009), as calculators and as the
//! accounting of measured runs.
//!
//! - **General flash model**: memory `M`, reads in blocks of `B_r`, writes in blocks of
//!   `B_w`; an algorithm doing `x` read I/Os and `y` write I/Os costs `x + c*y`.
//! - **Unit-cost model**: the same with equal time per item in both directions; the cost is
//!   the items moved, `x*B_r + y*B_w` (every item of every block, useful or not). Here items
//!   are bytes, so the unit cost of a run is its read volume plus its write volume.
//!
//! The calculators predict from `N`, `M`, `B_r`, `B_w`: the sort's exact volumes (its
//! schedule does not depend on the data, `crate::sort::Plan`), and the paper's bounds for
//! the others (Lemma 3 for sorting, section 3.2 for the B-tree and priority queue, Lemma 4
//! and the choice of `mu` for BFS, section 4 for DFS), evaluated with every constant set to
//! 1: they say how costs scale and compare, not what a run will measure.
//!
//! What this is not: a timing model. Key decision: items are bytes, so a prediction and a
//! measured [`IoStats`] are in the same unit and can sit in one table.

use crate::EmError;
use crate::io::{BlockSizes, IoStats};
use crate::sort::{FanIn, Plan};
use serde::Serialize;

/// A flash model's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FlashModel {
    /// Internal memory `M` in bytes.
    pub memory_bytes: u64,
    /// `B_r` and `B_w`.
    pub sizes: BlockSizes,
    /// The general model's write penalty `c >= 1`.
    pub write_penalty: f64,
}

/// The cost of a run under both models.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cost {
    /// Read I/Os `x`.
    pub read_ios: u64,
    /// Write I/Os `y`.
    pub write_ios: u64,
    /// General flash model: `x + c*y`.
    pub general: f64,
    /// Unit-cost model: bytes moved, `x*B_r + y*B_w`.
    pub unit_bytes: u64,
}

impl FlashModel {
    /// A model; `c` must be at least 1.
    pub fn new(memory_bytes: u64, sizes: BlockSizes, write_penalty: f64) -> Result<Self, EmError> {
        if !(write_penalty >= 1.0 && write_penalty.is_finite()) {
            return Err(EmError::Config(format!(
                "write penalty c = {write_penalty} is not a finite number of at least 1"
            )));
        }
        if memory_bytes <= sizes.write_bytes {
            return Err(EmError::Config(format!(
                "M = {memory_bytes} B is not larger than B_w = {} B",
                sizes.write_bytes
            )));
        }
        Ok(FlashModel {
            memory_bytes,
            sizes,
            write_penalty,
        })
    }

    /// The cost of measured (or predicted) I/O under both models.
    pub fn cost(&self, io: &IoStats) -> Cost {
        Cost {
            read_ios: io.read_ios,
            write_ios: io.write_ios,
            general: io.read_ios as f64 + self.write_penalty * io.write_ios as f64,
            unit_bytes: io.read_bytes + io.write_bytes,
        }
    }

    /// The mergesort schedule for `records` records of `record_bytes` bytes: its volumes are
    /// exact.
    pub fn sort_plan(
        &self,
        records: u64,
        record_bytes: u64,
        fan_in: FanIn,
    ) -> Result<Plan, EmError> {
        Plan::new(records, record_bytes, self.sizes, self.memory_bytes, fan_in)
    }

    /// Lemma 3's optimal sorting cost in bytes, `N log_{M/B_r}(N/B_r)` with `N` in bytes
    /// (at least one pass).
    pub fn sort_bound_bytes(&self, input_bytes: u64) -> f64 {
        let n = input_bytes as f64;
        let br = self.sizes.read_bytes as f64;
        let m = self.memory_bytes as f64;
        n * ((n / br).ln() / (m / br).ln()).max(1.0)
    }

    /// The same with `B_w` in place of `B_r`, what splitting `M/B_w` ways costs.
    pub fn sort_bound_bytes_with_b_w(&self, input_bytes: u64) -> f64 {
        let n = input_bytes as f64;
        let bw = self.sizes.write_bytes as f64;
        let m = self.memory_bytes as f64;
        n * ((n / bw).ln() / (m / bw).ln()).max(1.0)
    }

    /// Section 3.3: the cluster size `mu = sqrt(B / log2 |V|)` with `B` the block size in
    /// items of `item_bytes` (at least 1).
    pub fn bfs_mu(&self, vertices: u64, block_bytes: u64, item_bytes: u64) -> u64 {
        let items = (block_bytes / item_bytes.max(1)) as f64;
        let log_v = (vertices.max(2) as f64).log2();
        ((items / log_v).sqrt().round() as u64).max(1)
    }

    /// Lemma 4's BFS cost in items with constants 1:
    /// `|V| mu log|V| + |V| log_{M/B_r}(|V|/B_r) + |V| B_r / mu`, items of `item_bytes`.
    pub fn bfs_bound_items(&self, vertices: u64, item_bytes: u64) -> f64 {
        let v = vertices.max(2) as f64;
        let br = (self.sizes.read_bytes / item_bytes.max(1)).max(1) as f64;
        let m = (self.memory_bytes / item_bytes.max(1)) as f64;
        let mu = self.bfs_mu(vertices, self.sizes.read_bytes, item_bytes) as f64;
        v * mu * v.log2() + v * ((v / br).ln() / (m / br).ln()).max(1.0) + v * br / mu
    }

    /// Section 4's DFS cost in bytes: `|E|` random reads and `|V|` random writes, with
    /// reads of `B_r` and writes of `B_w` (`(E*B_r + V*B_w)`), and with both of `B_w`.
    pub fn dfs_bytes(&self, vertices: u64, edges: u64) -> (u64, u64) {
        let (br, bw) = (self.sizes.read_bytes, self.sizes.write_bytes);
        (edges * br + vertices * bw, edges * bw + vertices * bw)
    }

    /// Section 3.2: bytes a search in the two-level B-tree moves, `B_r log_{B_r} N` with
    /// the fan-out in entries of `entry_bytes`, and the same for a plain B-tree of `B_w`
    /// nodes, `B_w log_{B_w} N`.
    pub fn btree_search_bytes(&self, entries: u64, entry_bytes: u64) -> (f64, f64) {
        let n = entries.max(2) as f64;
        let fan = |block: u64| ((block / entry_bytes.max(1)).max(2) as f64).ln();
        let (br, bw) = (self.sizes.read_bytes, self.sizes.write_bytes);
        (
            br as f64 * (n.ln() / fan(br)).ceil().max(1.0),
            bw as f64 * (n.ln() / fan(bw)).ceil().max(1.0),
        )
    }

    /// Section 3.2: amortised bytes per priority-queue operation of a merging queue,
    /// `log_{M/B_r}(N/B_r)` items, and of one that distributes, `log_{M/B_w}(N/B_w)`.
    pub fn pq_bytes_per_op(&self, items: u64, item_bytes: u64) -> (f64, f64) {
        let n = (items.max(2) * item_bytes) as f64;
        let m = self.memory_bytes as f64;
        let per = |block: u64| {
            let b = block as f64;
            item_bytes as f64 * ((n / b).ln() / (m / b).ln()).max(1.0)
        };
        (per(self.sizes.read_bytes), per(self.sizes.write_bytes))
    }
}

/// STXXL 1.4.1's `stxxl::sort` schedule (`algo/sort.h`), for comparing with the paper's
/// Table 1, which ran STXXL: with a budget of `m` blocks, runs of `m/2` blocks and merges of
/// `optimal_merge_factor(runs, m) = ceil(runs^(1/ceil(log_m runs)))` runs. Returns the runs
/// and the merge passes.
pub fn stxxl_sort_passes(input_bytes: u64, block_bytes: u64, m_blocks: u64) -> (u64, u64) {
    let blocks = input_bytes.div_ceil(block_bytes);
    let run_blocks = (m_blocks / 2).max(1);
    let runs = blocks.div_ceil(run_blocks);
    if runs <= 1 {
        return (runs, 0);
    }
    let levels = ((runs as f64).ln() / (m_blocks as f64).ln()).ceil();
    let factor = (runs as f64).powf(1.0 / levels).ceil() as u64;
    (runs, crate::sort::passes_needed(runs, factor.max(2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn paper() -> FlashModel {
        FlashModel::new(
            512 * MIB,
            BlockSizes::new(128 << 10, 16 * MIB).expect("valid"),
            2.0,
        )
        .expect("valid")
    }

    #[test]
    fn costs_follow_the_definitions() {
        let io = IoStats {
            read_ios: 10,
            write_ios: 3,
            read_bytes: 10 * (128 << 10),
            write_bytes: 3 * 16 * MIB,
        };
        let cost = paper().cost(&io);
        assert_eq!(cost.general, 16.0);
        assert_eq!(cost.unit_bytes, 10 * (128 << 10) + 48 * MIB);
        assert!(FlashModel::new(MIB, BlockSizes::same(4096).expect("valid"), 0.5).is_err());
    }

    /// `a` and `b` agree to a few units in the last place.
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    #[test]
    fn the_bounds_are_their_formulas_on_worked_examples() {
        // M = 2^29, B_r = 2^17, B_w = 2^24: M/B_r = 2^12, M/B_w = 2^5.
        let m = paper();
        // Lemma 3: N log(N/B) / log(M/B), at least N (one pass).
        assert!(close(
            m.sort_bound_bytes(1 << 34),
            (1u64 << 34) as f64 * 17.0 / 12.0
        ));
        assert_eq!(m.sort_bound_bytes(1 << 20), (1u64 << 20) as f64);
        assert!(close(
            m.sort_bound_bytes_with_b_w(1 << 34),
            (1u64 << 35) as f64
        ));
        assert_eq!(m.sort_bound_bytes_with_b_w(1 << 26), (1u64 << 26) as f64);
        // mu = sqrt(B / log2 V) in items, rounded, at least 1; V counts as 2 at least.
        assert_eq!(m.bfs_mu(1, 128 << 10, 4), 181);
        assert_eq!(m.bfs_mu(1 << 20, 128 << 10, 0), 81);
        assert_eq!(m.bfs_mu(1 << 20, 8, 4), 1);
        // Lemma 4: V mu log2 V + V log(V/B)/log(M/B) (at least V) + V B / mu, in items.
        let v = (1u64 << 20) as f64;
        let expected = v * 40.0 * 20.0 + v + v * 32768.0 / 40.0;
        assert!(close(m.bfs_bound_items(1 << 20, 4), expected));
        let v = (1u64 << 40) as f64;
        let mu = 29.0; // sqrt(32768 / 40) = 28.6
        let expected = v * mu * 40.0 + v * 25.0 / 12.0 + v * 32768.0 / mu;
        assert!(close(m.bfs_bound_items(1 << 40, 4), expected));
        // With no item size, bytes are the items; V counts as 2: mu = sqrt(2^17) = 362.
        let expected = 2.0 * 362.0 * 1.0 + 2.0 + 2.0 * 131072.0 / 362.0;
        assert!(close(m.bfs_bound_items(0, 0), expected));
        // Section 4: E reads of B_r and V writes of B_w, against B_w for both.
        assert_eq!(
            m.dfs_bytes(3, 5),
            (5 * (128 << 10) + 3 * 16 * MIB, 5 * 16 * MIB + 3 * 16 * MIB)
        );
        // Section 3.2: a block read per level, log(N) / log(B / entry) levels, at least one.
        assert_eq!(
            m.btree_search_bytes(1 << 30, 16),
            (3.0 * (128 << 10) as f64, 2.0 * (16 * MIB) as f64)
        );
        assert_eq!(
            m.btree_search_bytes(1, 16),
            ((128 << 10) as f64, (16 * MIB) as f64)
        );
        assert_eq!(m.btree_search_bytes(1 << 30, 0).0, 2.0 * (128 << 10) as f64);
        // Section 3.2: per operation, an item's bytes times log(N/B) / log(M/B), at least one.
        let (read, write) = m.pq_bytes_per_op(1 << 32, 8);
        assert!(close(read, 8.0 * 18.0 / 12.0) && close(write, 8.0 * 11.0 / 5.0));
        assert_eq!(m.pq_bytes_per_op(1, 8), (8.0, 8.0));
    }

    #[test]
    fn a_model_needs_a_penalty_of_one_or_more_and_memory_beyond_a_write_block() {
        let sizes = BlockSizes::new(4096, 1 << 16).expect("valid");
        assert!(FlashModel::new(1 << 20, sizes, 1.0).is_ok());
        for penalty in [0.99, f64::INFINITY, f64::NAN] {
            assert!(
                FlashModel::new(1 << 20, sizes, penalty).is_err(),
                "{penalty}"
            );
        }
        assert!(FlashModel::new(1 << 16, sizes, 2.0).is_err());
        assert!(FlashModel::new((1 << 16) + 1, sizes, 2.0).is_ok());
        let cost = paper().cost(&IoStats {
            read_ios: 4,
            write_ios: 5,
            read_bytes: 6,
            write_bytes: 7,
        });
        assert_eq!(
            cost,
            Cost {
                read_ios: 4,
                write_ios: 5,
                general: 14.0,
                unit_bytes: 13,
            }
        );
    }

    #[test]
    fn merging_m_over_b_r_ways_beats_m_over_b_w_ways() {
        let m = paper();
        let n = 16 << 30;
        assert!(m.sort_bound_bytes(n) < m.sort_bound_bytes_with_b_w(n));
        let (tl, bw) = m.dfs_bytes(1 << 22, 4 << 22);
        assert!(tl < bw);
        let (two_level, plain) = m.btree_search_bytes(1 << 30, 16);
        assert!(two_level < plain);
    }

    #[test]
    fn mu_grows_with_the_block_size() {
        let m = paper();
        let small = m.bfs_mu(1 << 20, 128 << 10, 4);
        let large = m.bfs_mu(1 << 20, 16 * MIB, 4);
        assert_eq!(small, ((32768.0f64 / 20.0).sqrt().round()) as u64);
        assert!(large > 10 * small);
    }

    #[test]
    fn stxxl_schedule_matches_its_source() {
        // 32 blocks of 16 MiB: runs of 256 MiB, a 4-run input merges in one pass.
        assert_eq!(stxxl_sort_passes(1 << 30, 16 * MIB, 32), (4, 1));
        // 8 blocks: runs of 64 MiB; 16 runs need two 4-way passes.
        assert_eq!(stxxl_sort_passes(1 << 30, 16 * MIB, 8), (16, 2));
        // One run, or none, needs no merge.
        assert_eq!(stxxl_sort_passes(16 * MIB, 16 * MIB, 8), (1, 0));
        assert_eq!(stxxl_sort_passes(0, 16 * MIB, 8), (0, 0));
        // Runs of one block when M holds one.
        assert_eq!(stxxl_sort_passes(3 * 16 * MIB, 16 * MIB, 1), (3, 2));
    }

    #[test]
    fn stxxl_with_a_quarter_of_m_has_table_1s_pass_counts() {
        // Table 1's read volume over the input volume is 1 + merge passes. STXXL's schedule
        // with a budget of M/4 = 128 MiB gives exactly those ratios for both block sizes.
        let paper_bw = [
            (25, 2.0),
            (26, 2.0),
            (27, 2.0),
            (28, 3.0),
            (29, 3.0),
            (30, 3.0),
            (31, 4.0),
            (32, 4.0),
        ];
        for (log_n, ratio) in paper_bw {
            let bytes = 4u64 << log_n;
            let (_, passes) = stxxl_sort_passes(bytes, 16 * MIB, 128 * MIB / (16 * MIB));
            assert_eq!(1.0 + passes as f64, ratio, "B_w at 2^{log_n}");
            let (_, passes) = stxxl_sort_passes(bytes, 128 << 10, 128 * MIB / (128 << 10));
            assert_eq!(passes, 1, "B_r at 2^{log_n}");
        }
    }
}
