//! A loser tree (tournament tree) over `k` sorted sequences: the merge's selection step in
//! `ceil(log2 k)` comparisons per record, without the sift-down swaps of a binary heap.
//!
//! Each entry packs a sequence's current key and its index into one `u128`: key in the high
//! 64 bits, then an "exhausted" bit, then the index. Comparing two entries compares keys,
//! puts an exhausted sequence after every key (so keys may take every `u64` value) and
//! breaks ties by the lower index (so the merge is stable), in one comparison the compiler
//! turns into conditional moves: on random keys a branch per level would be mispredicted
//! half the time.

const EXHAUSTED: u128 = 1 << 32;

#[inline(always)]
fn entry(index: usize, key: Option<u64>) -> u128 {
    match key {
        Some(key) => (u128::from(key) << 64) | index as u128,
        None => (u128::from(u64::MAX) << 64) | EXHAUSTED | index as u128,
    }
}

/// `if choose { a } else { b }` as conditional moves: the two 64-bit halves are selected
/// separately, because a 128-bit select (even through `select_unpredictable`) compiles to a
/// jump on x86-64.
#[inline(always)]
fn select(choose: bool, a: u128, b: u128) -> u128 {
    let high = std::hint::select_unpredictable(choose, (a >> 64) as u64, (b >> 64) as u64);
    let low = std::hint::select_unpredictable(choose, a as u64, b as u64);
    (u128::from(high) << 64) | u128::from(low)
}

/// Tournament over `k` keys; `winner()` is the index of the smallest.
pub struct LoserTree {
    /// Internal nodes 1..k hold the loser of their match; node 0 holds the winner.
    nodes: Vec<u128>,
    k: usize,
}

impl LoserTree {
    /// A tree over the first keys of `k` sequences (`None` for an empty one).
    pub fn new(keys: Vec<Option<u64>>) -> Self {
        let k = keys.len().max(1);
        let leaves: Vec<u128> = (0..k)
            .map(|i| entry(i, keys.get(i).copied().flatten()))
            .collect();
        let mut tree = LoserTree {
            nodes: vec![0; k],
            k,
        };
        let winner = tree.build(1, &leaves);
        tree.nodes[0] = winner;
        tree
    }

    /// Play the matches below node `node`; returns its winner and stores losers.
    fn build(&mut self, node: usize, leaves: &[u128]) -> u128 {
        if node >= self.k {
            return leaves[node - self.k];
        }
        let left = self.build(2 * node, leaves);
        let right = self.build(2 * node + 1, leaves);
        self.nodes[node] = left.max(right);
        left.min(right)
    }

    /// The sequence holding the smallest key, or `None` when every sequence is exhausted.
    #[inline(always)]
    pub fn winner(&self) -> Option<usize> {
        let w = self.nodes[0];
        (w & EXHAUSTED == 0).then_some((w & 0xffff_ffff) as usize)
    }

    /// The winner's index, when the caller knows some sequence is not exhausted.
    #[inline(always)]
    pub fn winner_index(&self) -> usize {
        debug_assert!(
            self.nodes[0] & EXHAUSTED == 0,
            "every sequence is exhausted"
        );
        (self.nodes[0] & 0xffff_ffff) as usize
    }

    /// The winner's sequence moved on to `key` (it is not exhausted).
    #[inline(always)]
    pub fn replace_winner_key(&mut self, key: u64) {
        let index = (self.nodes[0] & 0xffff_ffff) as usize;
        self.replay(index, entry(index, Some(key)));
    }

    /// The winner's sequence moved on: its new key is `key` (`None` when exhausted).
    #[inline]
    pub fn replace_winner(&mut self, key: Option<u64>) {
        let index = (self.nodes[0] & 0xffff_ffff) as usize;
        self.replay(index, entry(index, key));
    }

    /// Replay the matches from leaf `index`, whose new entry is `winner`.
    #[inline(always)]
    fn replay(&mut self, index: usize, mut winner: u128) {
        let mut node = (index + self.k) / 2;
        while node > 0 {
            // Entries are distinct (their index bits differ), so the match's loser is the
            // larger and the winner the smaller. The choice must compile to conditional
            // moves: an `if`, `u128::min`/`max` and even a hand-written mask select became a
            // jump (the mask once this loop was inlined into the merge's batch loop), which
            // random keys mispredict half the time: half of the merge's cycles in a perf
            // profile. `select_unpredictable` tells the compiler so.
            let loser = self.nodes[node];
            let swap = loser < winner;
            self.nodes[node] = select(swap, winner, loser);
            winner = select(swap, loser, winner);
            node /= 2;
        }
        self.nodes[0] = winner;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;

    #[test]
    fn merges_any_number_of_sequences_stably() {
        let mut rng = SimRng::for_stream(3, "loser");
        for k in [1usize, 2, 3, 5, 8, 13] {
            let mut seqs: Vec<Vec<u64>> = (0..k)
                .map(|_| {
                    let mut s: Vec<u64> = (0..rng.random_range(0..40))
                        .map(|_| rng.random_range(0..20u64) * (u64::MAX / 20))
                        .collect();
                    s.sort_unstable();
                    s
                })
                .collect();
            let mut expected: Vec<u64> = seqs.concat();
            expected.sort_unstable();
            let mut positions = vec![0usize; k];
            let mut tree = LoserTree::new(seqs.iter().map(|s| s.first().copied()).collect());
            let mut out = Vec::new();
            let mut last_source = (0u64, 0usize);
            while let Some(w) = tree.winner() {
                let key = seqs[w][positions[w]];
                if out.last() == Some(&key) {
                    assert!(w >= last_source.1, "ties must go to the lower sequence");
                }
                last_source = (key, w);
                out.push(key);
                positions[w] += 1;
                tree.replace_winner(seqs[w].get(positions[w]).copied());
            }
            assert_eq!(out, expected, "k = {k}");
            seqs.clear();
        }
    }

    #[test]
    fn keys_at_both_ends_of_u64_merge_in_order_and_ties_by_sequence() {
        // Sequence 0 ends on u64::MAX, like sequence 2; sequence 1 starts at 0 like 3.
        let seqs: [&[u64]; 4] = [&[5, u64::MAX], &[0, 5], &[u64::MAX], &[0, 0, 7]];
        let mut positions = [0usize; 4];
        let mut tree = LoserTree::new(seqs.iter().map(|s| s.first().copied()).collect());
        let mut out = Vec::new();
        while let Some(w) = tree.winner() {
            assert_eq!(tree.winner_index(), w);
            out.push((seqs[w][positions[w]], w));
            positions[w] += 1;
            match seqs[w].get(positions[w]) {
                Some(&key) => tree.replace_winner_key(key),
                None => tree.replace_winner(None),
            }
        }
        assert_eq!(
            out,
            [
                (0, 1),
                (0, 3),
                (0, 3),
                (5, 0),
                (5, 1),
                (7, 3),
                (u64::MAX, 0),
                (u64::MAX, 2),
            ]
        );
        // No sequence at all: a tree of one exhausted sequence.
        assert_eq!(LoserTree::new(Vec::new()).winner(), None);
        assert_eq!(LoserTree::new(vec![None, None]).winner(), None);
    }
}
