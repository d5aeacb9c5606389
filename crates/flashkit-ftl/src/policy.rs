//! Garbage-collection victim policies: pure choices over a read-only [`BlockView`].
//!
//! - [`Greedy`]: the sealed block with the fewest valid pages (Rosenblum and Ousterhout's
//!   greedy cleaner); constant time through the FTL's valid-count buckets.
//! - [`CostBenefit`]: the block maximising `(1 - u) / (2u) * age`, the LFS cost-benefit rule,
//!   with `u` the valid fraction and `age` the time since the block was sealed, measured in
//!   page programs. At one valid count the score grows with age alone, so the FTL keeps,
//!   for this policy, the oldest sealed block at each count
//!   ([`BlockView::oldest_by_valid`]): a choice is linear in the pages of a block, not in
//!   the blocks of the device. Without that index (a view built by hand) it scans.
//! - [`Fifo`]: the block sealed longest ago, whatever it holds.

use crate::page::blocks::BlockTable;
use flashkit_core::BlockId;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A sealed block as a policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedBlock {
    /// The block.
    pub id: BlockId,
    /// Valid pages it holds.
    pub valid_pages: u32,
    /// FTL clock (page programs) when it was sealed.
    pub sealed_at: u64,
    /// Erases it has had.
    pub erase_count: u32,
}

/// What a victim policy may look at.
pub struct BlockView<'a> {
    blocks: &'a BlockTable,
    now: u64,
}

impl<'a> BlockView<'a> {
    pub(crate) fn new(blocks: &'a BlockTable, now: u64) -> Self {
        BlockView { blocks, now }
    }

    fn describe(&self, id: BlockId) -> SealedBlock {
        SealedBlock {
            id,
            valid_pages: self.blocks.valid(id),
            sealed_at: self.blocks.sealed_at(id),
            erase_count: self.blocks.erase_count(id),
        }
    }

    /// The FTL clock: page programs so far.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Pages in a block.
    pub fn pages_per_block(&self) -> u32 {
        self.blocks.pages_per_block()
    }

    /// The sealed block with the fewest valid pages, in constant time.
    pub fn min_valid(&self) -> Option<SealedBlock> {
        self.blocks.min_valid_sealed().map(|id| self.describe(id))
    }

    /// The sealed block sealed longest ago.
    pub fn oldest(&self) -> Option<SealedBlock> {
        self.blocks.oldest_sealed().map(|id| self.describe(id))
    }

    /// Every sealed block, in block order.
    pub fn sealed(&self) -> impl Iterator<Item = SealedBlock> + '_ {
        self.blocks.sealed_blocks().map(|id| self.describe(id))
    }

    /// For each valid-page count some sealed block has, in ascending count: the block with
    /// that count sealed longest ago, except at count zero, where it is the lowest-numbered
    /// empty block. `None` unless the policy asked the FTL for this index
    /// ([`VictimPolicy::uses_age_index`]).
    pub fn oldest_by_valid(&self) -> Option<impl Iterator<Item = SealedBlock> + '_> {
        Some(self.blocks.oldest_by_valid()?.map(|id| self.describe(id)))
    }
}

/// A garbage-collection victim policy.
pub trait VictimPolicy: Send {
    /// The block to collect next, or `None` if no block is worth collecting.
    fn choose(&self, view: &BlockView<'_>) -> Option<BlockId>;

    /// A cheap guess at the block after the one being collected, so that the FTL can
    /// prefetch its metadata while it moves the current victim. Only a hint: the FTL still
    /// calls [`VictimPolicy::choose`] when the time comes. The default makes no guess;
    /// policies whose choice takes constant time guess by choosing.
    fn predict(&self, _view: &BlockView<'_>) -> Option<BlockId> {
        None
    }

    /// Whether the policy reads [`BlockView::oldest_by_valid`]. The FTL then keeps that
    /// index, which costs a heap push each time a sealed block loses a valid page, so it is
    /// kept only for a policy that says yes.
    fn uses_age_index(&self) -> bool {
        false
    }
}

/// Fewest valid pages first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Greedy;

impl VictimPolicy for Greedy {
    fn choose(&self, view: &BlockView<'_>) -> Option<BlockId> {
        view.min_valid()
            .filter(|b| b.valid_pages < view.pages_per_block())
            .map(|b| b.id)
    }

    fn predict(&self, view: &BlockView<'_>) -> Option<BlockId> {
        self.choose(view)
    }
}

/// The LFS cost-benefit rule.
#[derive(Clone, Copy, Debug, Default)]
pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn choose(&self, view: &BlockView<'_>) -> Option<BlockId> {
        let Some(candidates) = view.oldest_by_valid() else {
            return Self::best(view, view.sealed());
        };
        let chosen = Self::best(view, candidates);
        debug_assert_eq!(
            chosen,
            Self::best(view, view.sealed()),
            "the oldest block at each valid count holds the best score"
        );
        chosen
    }

    fn uses_age_index(&self) -> bool {
        true
    }
}

impl CostBenefit {
    /// The best of `blocks` (which must include the best sealed block): the first empty
    /// block met, else the highest score, ties to the lowest block number.
    fn best(view: &BlockView<'_>, blocks: impl Iterator<Item = SealedBlock>) -> Option<BlockId> {
        let ppb = f64::from(view.pages_per_block());
        let mut best: Option<(f64, BlockId)> = None;
        for block in blocks {
            if block.valid_pages == 0 {
                return Some(block.id);
            }
            if block.valid_pages >= view.pages_per_block() {
                continue;
            }
            let u = f64::from(block.valid_pages) / ppb;
            let age = (view.now() - block.sealed_at + 1) as f64;
            let score = (1.0 - u) / (2.0 * u) * age;
            if best.is_none_or(|(top, id)| score > top || (score == top && block.id < id)) {
                best = Some((score, block.id));
            }
        }
        best.map(|(_, id)| id)
    }
}

/// Oldest sealed block first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fifo;

impl VictimPolicy for Fifo {
    fn choose(&self, view: &BlockView<'_>) -> Option<BlockId> {
        view.oldest().map(|b| b.id)
    }

    fn predict(&self, view: &BlockView<'_>) -> Option<BlockId> {
        self.choose(view)
    }
}

/// The built-in policies by name, for configuration files and the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// [`Greedy`].
    #[default]
    Greedy,
    /// [`CostBenefit`].
    CostBenefit,
    /// [`Fifo`].
    Fifo,
}

impl GcPolicy {
    /// Every built-in policy.
    pub const ALL: [GcPolicy; 3] = [GcPolicy::Greedy, GcPolicy::CostBenefit, GcPolicy::Fifo];

    /// The policy object.
    pub fn build(self) -> Box<dyn VictimPolicy> {
        match self {
            GcPolicy::Greedy => Box::new(Greedy),
            GcPolicy::CostBenefit => Box::new(CostBenefit),
            GcPolicy::Fifo => Box::new(Fifo),
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::Fifo => "fifo",
        }
    }
}

impl fmt::Display for GcPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GcPolicy {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        GcPolicy::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| {
                format!("unknown GC policy {text:?} (expected greedy, cost-benefit or fifo)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::blocks::BlockKind;

    /// Only cost-benefit reads the age index, so only its FTL pays for it (the bookkeeping
    /// heap figure counts the index where it is kept).
    #[test]
    fn only_cost_benefit_keeps_the_age_index() {
        let keeps: Vec<_> = GcPolicy::ALL
            .into_iter()
            .map(|p| (p, p.build().uses_age_index()))
            .collect();
        assert_eq!(
            keeps,
            [
                (GcPolicy::Greedy, false),
                (GcPolicy::CostBenefit, true),
                (GcPolicy::Fifo, false)
            ]
        );
    }

    /// Blocks 0..4 sealed at times 10, 20, 30, 40 with the given valid counts (8 pages each).
    fn table(valid: [u32; 4]) -> BlockTable {
        let mut table = BlockTable::new(6, 8);
        for (b, &v) in valid.iter().enumerate() {
            let id = BlockId(b as u32);
            table.activate(id);
            table.add_valid(id, v);
            table.seal(id, 10 * (b as u64 + 1));
        }
        table
    }

    #[test]
    fn greedy_takes_the_fewest_valid_pages() {
        let t = table([5, 2, 7, 3]);
        assert_eq!(Greedy.choose(&BlockView::new(&t, 50)), Some(BlockId(1)));
        let full = table([8, 8, 8, 8]);
        assert_eq!(
            Greedy.choose(&BlockView::new(&full, 50)),
            None,
            "nothing to gain"
        );
    }

    #[test]
    fn fifo_takes_the_oldest() {
        let mut t = table([5, 2, 7, 3]);
        assert_eq!(Fifo.choose(&BlockView::new(&t, 50)), Some(BlockId(0)));
        t.begin_collect(BlockId(0));
        assert_eq!(Fifo.choose(&BlockView::new(&t, 50)), Some(BlockId(1)));
        t.prune_fifo();
        assert_eq!(Fifo.choose(&BlockView::new(&t, 50)), Some(BlockId(1)));
    }

    #[test]
    fn cost_benefit_weighs_age_against_utilisation() {
        // Block 0: u = 6/8, age 91 -> 0.25/1.5*91 = 15.2; block 3: u = 4/8, age 61 -> 61.
        let t = table([6, 7, 7, 4]);
        assert_eq!(
            CostBenefit.choose(&BlockView::new(&t, 100)),
            Some(BlockId(3))
        );
        // An old block with few invalid pages loses to a young, half-empty one only when
        // the age difference is small: block 0 at u = 2/8 wins.
        let t = table([2, 7, 7, 4]);
        assert_eq!(
            CostBenefit.choose(&BlockView::new(&t, 100)),
            Some(BlockId(0))
        );
        let t = table([3, 0, 7, 4]);
        assert_eq!(
            CostBenefit.choose(&BlockView::new(&t, 100)),
            Some(BlockId(1))
        );
    }

    /// The age is counted from one: a block sealed now still scores by its free space.
    /// Blocks 0 and 3 (1 and 2 are full), now = 40: block 3, u = 1/8, age 0 + 1 ->
    /// 0.875 / 0.25 = 3.5; block 0, u = 7/8, age 31 -> 0.125 / 1.75 * 31 = 2.2.
    #[test]
    fn cost_benefit_counts_a_block_sealed_now_as_one_tick_old() {
        let t = table([7, 8, 8, 1]);
        assert_eq!(
            CostBenefit.choose(&BlockView::new(&t, 40)),
            Some(BlockId(3))
        );
    }

    /// The score is (1 - u) / 2u x age, LFS's: now = 45, block 3 (u = 1/8, age 6) scores
    /// 3.5 x 6 = 21 against block 0's 0.5 x 36 = 18 (with 2 + u below the line it would be
    /// 2.5 against 7.2, the other way).
    #[test]
    fn cost_benefit_divides_by_twice_the_utilisation() {
        let t = table([4, 8, 8, 1]);
        assert_eq!(
            CostBenefit.choose(&BlockView::new(&t, 45)),
            Some(BlockId(3))
        );
    }

    #[test]
    fn policy_names_parse_back() {
        let names: Vec<_> = GcPolicy::ALL.iter().map(|p| p.to_string()).collect();
        assert_eq!(names, ["greedy", "cost-benefit", "fifo"]);
        for p in GcPolicy::ALL {
            assert_eq!(p.to_string().parse::<GcPolicy>(), Ok(p));
        }
        assert!("lru".parse::<GcPolicy>().is_err());
    }

    /// The choice over the cost-benefit index, and the one over a scan of every block.
    fn both_choices(t: &BlockTable, now: u64) -> (Option<BlockId>, Option<BlockId>) {
        let view = BlockView::new(t, now);
        let candidates = view.oldest_by_valid().expect("the index is kept");
        (
            CostBenefit::best(&view, candidates),
            CostBenefit::best(&view, view.sealed()),
        )
    }

    #[test]
    fn cost_benefit_ties_across_counts_go_to_the_lowest_block_either_way() {
        // 8 pages a block, now = 100. Block 0: 4 valid (u = 1/2), sealed at 11, age 90,
        // score 0.5 * 90 = 45. Block 1: 2 valid (u = 1/4), sealed at 71, age 30, score
        // 1.5 * 30 = 45. The index meets block 1 first (lower count); the scan, block 0.
        let mut t = BlockTable::new(4, 8);
        for (b, valid, at) in [(0, 4, 11), (1, 2, 71)] {
            t.activate(BlockId(b));
            t.add_valid(BlockId(b), valid);
            t.seal(BlockId(b), at);
        }
        t.set_age_index(true);
        t.settle_ages();
        assert_eq!(both_choices(&t, 100), (Some(BlockId(0)), Some(BlockId(0))));
    }

    #[test]
    fn cost_benefit_over_the_index_chooses_what_a_scan_chooses() {
        use flashkit_core::{SimRng, SimRngExt};
        use rand::Rng;
        for seed in 0..20 {
            let mut rng = SimRng::for_stream(seed, "cost-benefit-index");
            let (blocks, ppb) = (24u32, 8u32);
            let mut t = BlockTable::new(blocks, ppb);
            // Built from blocks sealed before the index exists, then kept up to date.
            let keep_from = rng.random_range(0..400u64);
            let mut now = 0u64;
            for step in 0..2_000u64 {
                now += 1;
                if step == keep_from {
                    t.set_age_index(true);
                }
                let b = BlockId(rng.random_range(0..blocks));
                match t.kind(b) {
                    BlockKind::Free => {
                        t.activate(b);
                        let valid = rng.random_range(0..=ppb);
                        t.add_valid(b, valid);
                        t.seal(b, now);
                    }
                    BlockKind::Sealed if t.valid(b) > 0 && rng.random_bool(0.8) => {
                        t.remove_valid(b);
                    }
                    BlockKind::Sealed => {
                        t.begin_collect(b);
                        if rng.random_bool(0.2) {
                            t.abort_collect(b);
                        } else {
                            let valid = t.valid(b);
                            t.remove_valid_many(b, valid);
                            t.erased(b);
                        }
                    }
                    _ => unreachable!("only free and sealed blocks here"),
                }
                if step >= keep_from {
                    t.settle_ages();
                    t.check_indexes().expect("indexes agree with the blocks");
                    let (indexed, scanned) = both_choices(&t, now + 50);
                    assert_eq!(indexed, scanned, "seed {seed} step {step}");
                }
            }
        }
    }

    #[test]
    fn policy_names_round_trip() {
        for policy in GcPolicy::ALL {
            assert_eq!(policy.name().parse::<GcPolicy>(), Ok(policy));
        }
        assert!("lru".parse::<GcPolicy>().is_err());
    }
}
