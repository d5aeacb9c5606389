//! A loser tree (tournament tree) over `k` sorted sequences: the merge's selection step in
//! `ceil(log2 k)` comparisons per record, without the sift-down swaps of a binary heap.
//!
//! Each leaf holds its sequence's current key; an exhausted sequence holds `None`, which
//! loses to every key, so keys may take every `u64` value. Ties go to the lower sequence
//! index, which makes the merge stable.

/// Tournament over `k` keys; `winner()` is the index of the smallest.
pub struct LoserTree {
    /// Internal nodes 1..k hold the loser of their match; node 0 holds the winner.
    nodes: Vec<usize>,
    keys: Vec<Option<u64>>,
    k: usize,
}

#[inline(always)]
fn beats(keys: &[Option<u64>], a: usize, b: usize) -> bool {
    match (keys[a], keys[b]) {
        (Some(x), Some(y)) => x < y || (x == y && a < b),
        (Some(_), None) => true,
        (None, Some(_)) => false,
        (None, None) => a < b,
    }
}

impl LoserTree {
    /// A tree over the first keys of `k` sequences (`None` for an empty one).
    pub fn new(keys: Vec<Option<u64>>) -> Self {
        let k = keys.len().max(1);
        let mut tree = LoserTree {
            nodes: vec![0; k],
            keys,
            k,
        };
        if tree.keys.is_empty() {
            tree.keys.push(None);
        }
        let winner = tree.build(1);
        tree.nodes[0] = winner;
        tree
    }

    /// Play the matches below node `node`; returns its winner and stores losers.
    fn build(&mut self, node: usize) -> usize {
        if node >= self.k {
            return node - self.k;
        }
        let left = self.build(2 * node);
        let right = self.build(2 * node + 1);
        let (winner, loser) = if beats(&self.keys, left, right) {
            (left, right)
        } else {
            (right, left)
        };
        self.nodes[node] = loser;
        winner
    }

    /// The sequence holding the smallest key, or `None` when every sequence is exhausted.
    #[inline(always)]
    pub fn winner(&self) -> Option<usize> {
        let w = self.nodes[0];
        self.keys[w].map(|_| w)
    }

    /// The winner's sequence moved on: its new key is `key` (`None` when exhausted).
    #[inline]
    pub fn replace_winner(&mut self, key: Option<u64>) {
        let mut winner = self.nodes[0];
        self.keys[winner] = key;
        let mut node = (winner + self.k) / 2;
        while node > 0 {
            let loser = self.nodes[node];
            if beats(&self.keys, loser, winner) {
                self.nodes[node] = winner;
                winner = loser;
            }
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
}
