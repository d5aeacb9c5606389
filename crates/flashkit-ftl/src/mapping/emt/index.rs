//! The ordered maps an [`Emt`](super::Emt) can keep its extents in: an extent's logical
//! start to its [`Run`] (length and physical start), with predecessor and successor queries
//! (Algorithms 4 and 5 of Suh et al., JSA 2014, need nothing else).
//!
//! Two backends, compared by `cargo run --release -p flashkit-ftl --example vet_tables`:
//! - `std::collections::BTreeMap`: a B-tree of 11 keys a node, kept for comparison.
//! - [`Chunked`]: a sorted array cut into chunks of at most [`CHUNK`] entries, with the
//!   chunks' first keys in one small array of their own. A query is two binary searches over
//!   contiguous memory (the first over an array that stays in cache) instead of a walk down
//!   five or six B-tree levels of pointer-linked nodes; an insert moves at most a chunk.
//!
//! What it is not: a general-purpose map. Keys are extent starts (`u32`), values are copied
//! out, and iteration is a callback that can stop early.

use std::collections::BTreeMap;
use std::fmt;

/// The value stored under an extent's logical start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Pages in the extent (at least one).
    pub len: u32,
    /// Physical page of the extent's first logical page.
    pub ppn: u32,
}

/// The entries either side of a key (see [`ExtentIndex::neighbours`]).
pub type Neighbours = (Option<(u32, Run)>, Option<(u32, Run)>);

/// An ordered map from extent start to [`Run`].
pub trait ExtentIndex: Clone + Default + fmt::Debug {
    /// Entries stored.
    fn len(&self) -> usize;
    /// Whether nothing is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The entry with the greatest start `<= key`.
    fn predecessor(&self, key: u32) -> Option<(u32, Run)>;
    /// The entry with the least start `>= key`.
    fn successor(&self, key: u32) -> Option<(u32, Run)>;
    /// The entries either side of `key`, found by one search: the one with the greatest
    /// start `< key` and the one with the least start `>= key`.
    fn neighbours(&self, key: u32) -> Neighbours;
    /// The run stored under exactly `start`, to change in place (its length must stay what
    /// keeps the entries disjoint).
    fn get_mut(&mut self, start: u32) -> Option<&mut Run>;
    /// Store `run` under `start`; returns the run it replaced.
    fn insert(&mut self, start: u32, run: Run) -> Option<Run>;
    /// Remove the entry under `start`.
    fn remove(&mut self, start: u32) -> Option<Run>;
    /// Call `f` on the entries from the least start `>= from` on, in order, until it
    /// returns `false`.
    fn for_each_from(&self, from: u32, f: impl FnMut(u32, Run) -> bool);
    /// Bytes this process holds for the map (measured or, for std's B-tree, estimated).
    fn heap_bytes(&self) -> u64;
}

/// What one B-tree entry costs in this process, estimated: std's B-tree node holds up to 11
/// entries of 4 + 8 bytes plus a 16-byte header (internal nodes add 12 edge pointers, one
/// node in twelve), and nodes are about 70% full after random inserts (an estimate: std does
/// not expose its nodes' sizes).
const BTREE_HEAP_BYTES_PER_ENTRY: f64 = (11.0 * 12.0 + 16.0 + 96.0 / 12.0) / (11.0 * 0.7);

impl ExtentIndex for BTreeMap<u32, Run> {
    fn len(&self) -> usize {
        BTreeMap::len(self)
    }
    #[inline]
    fn predecessor(&self, key: u32) -> Option<(u32, Run)> {
        self.range(..=key).next_back().map(|(&s, &r)| (s, r))
    }
    #[inline]
    fn successor(&self, key: u32) -> Option<(u32, Run)> {
        self.range(key..).next().map(|(&s, &r)| (s, r))
    }
    #[inline]
    fn neighbours(&self, key: u32) -> Neighbours {
        let before = self.range(..key).next_back().map(|(&s, &r)| (s, r));
        (before, self.successor(key))
    }
    fn get_mut(&mut self, start: u32) -> Option<&mut Run> {
        BTreeMap::get_mut(self, &start)
    }
    fn insert(&mut self, start: u32, run: Run) -> Option<Run> {
        BTreeMap::insert(self, start, run)
    }
    fn remove(&mut self, start: u32) -> Option<Run> {
        BTreeMap::remove(self, &start)
    }
    fn for_each_from(&self, from: u32, mut f: impl FnMut(u32, Run) -> bool) {
        for (&s, &r) in self.range(from..) {
            if !f(s, r) {
                return;
            }
        }
    }
    fn heap_bytes(&self) -> u64 {
        (self.len() as f64 * BTREE_HEAP_BYTES_PER_ENTRY).round() as u64
    }
}

/// Most entries a [`Chunked`] chunk holds; a fuller chunk splits in two.
pub const CHUNK: usize = 128;

/// Fetch the lines of the first four levels of a binary search over `chunk` (see
/// [`Chunked::chunk`]).
#[inline(always)]
fn prefetch_sixteenths(chunk: &[(u32, Run)]) {
    let n = chunk.len();
    if n >= 16 {
        for part in 1..16 {
            flashkit_core::hint::prefetch(chunk, n * part / 16);
        }
    }
}

/// A sorted array of extents in chunks of at most [`CHUNK`] entries; see the module docs.
///
/// Invariants: every chunk is non-empty and sorted; `firsts[c]` is chunk `c`'s first start;
/// the chunks are in order and do not overlap; `len` is the number of entries.
#[derive(Clone, Debug, Default)]
pub struct Chunked {
    firsts: Vec<u32>,
    chunks: Vec<Vec<(u32, Run)>>,
    len: usize,
}

impl Chunked {
    /// The chunk that holds `key` or would: the last one starting at or before it (or the
    /// first chunk for a key before every entry). `None` when empty.
    #[inline]
    fn chunk_of(&self, key: u32) -> Option<usize> {
        if self.chunks.is_empty() {
            return None;
        }
        Some(self.firsts.partition_point(|&f| f <= key).saturating_sub(1))
    }

    /// Chunk `c`, with the lines of the first four levels of a binary search over it (its
    /// sixteenths: 15 of a full chunk's 24 lines) fetched at once. They are independent of
    /// each other, so they arrive in about one memory latency, where a binary search waits
    /// for each probe before it knows the next. Four levels were measured against three and
    /// against every line of the chunk (docs/DECISIONS.md, 2026-11-26).
    #[inline]
    fn chunk(&self, c: usize) -> &[(u32, Run)] {
        let chunk = &self.chunks[c];
        prefetch_sixteenths(chunk);
        chunk
    }

    /// Split chunk `c` in two halves when it is over [`CHUNK`].
    fn split_if_full(&mut self, c: usize) {
        if self.chunks[c].len() <= CHUNK {
            return;
        }
        let upper = self.chunks[c].split_off(CHUNK / 2);
        self.firsts.insert(c + 1, upper[0].0);
        self.chunks.insert(c + 1, upper);
    }

    /// Drop chunk `c` if it is empty, or merge it into its successor when both fit in one.
    fn shrink(&mut self, c: usize) {
        if self.chunks[c].is_empty() {
            self.chunks.remove(c);
            self.firsts.remove(c);
            return;
        }
        self.firsts[c] = self.chunks[c][0].0;
        if c + 1 < self.chunks.len() && self.chunks[c].len() + self.chunks[c + 1].len() <= CHUNK {
            let next = self.chunks.remove(c + 1);
            self.firsts.remove(c + 1);
            self.chunks[c].extend(next);
        }
    }

    /// Check the invariants (for tests).
    pub fn check(&self) -> Result<(), String> {
        let mut previous = None;
        let mut count = 0;
        if self.firsts.len() != self.chunks.len() {
            return Err("firsts and chunks differ in length".into());
        }
        for (c, chunk) in self.chunks.iter().enumerate() {
            if chunk.is_empty() || chunk.len() > CHUNK || chunk[0].0 != self.firsts[c] {
                return Err(format!("chunk {c}: empty, over-full or first key wrong"));
            }
            for &(s, _) in chunk {
                if previous.is_some_and(|p| p >= s) {
                    return Err(format!("chunk {c}: start {s} out of order"));
                }
                previous = Some(s);
            }
            count += chunk.len();
        }
        if count != self.len {
            return Err(format!("{count} entries, {} counted", self.len));
        }
        Ok(())
    }
}

impl ExtentIndex for Chunked {
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn predecessor(&self, key: u32) -> Option<(u32, Run)> {
        let chunk = self.chunk(self.chunk_of(key)?);
        let i = chunk.partition_point(|e| e.0 <= key);
        i.checked_sub(1).map(|i| chunk[i])
    }

    #[inline]
    fn successor(&self, key: u32) -> Option<(u32, Run)> {
        let c = self.chunk_of(key)?;
        let chunk = self.chunk(c);
        let i = chunk.partition_point(|e| e.0 < key);
        chunk
            .get(i)
            .or_else(|| self.chunks.get(c + 1).map(|next| &next[0]))
            .copied()
    }

    #[inline]
    fn neighbours(&self, key: u32) -> Neighbours {
        let Some(c) = self.chunk_of(key) else {
            return (None, None);
        };
        let chunk = self.chunk(c);
        let i = chunk.partition_point(|e| e.0 < key);
        let before = match i {
            0 => c.checked_sub(1).and_then(|b| self.chunks[b].last()),
            _ => chunk.get(i - 1),
        };
        let at = chunk
            .get(i)
            .or_else(|| self.chunks.get(c + 1).map(|next| &next[0]));
        (before.copied(), at.copied())
    }

    #[inline]
    fn get_mut(&mut self, start: u32) -> Option<&mut Run> {
        let c = self.chunk_of(start)?;
        let chunk = &mut self.chunks[c];
        prefetch_sixteenths(chunk);
        let i = chunk.partition_point(|e| e.0 < start);
        chunk.get_mut(i).filter(|e| e.0 == start).map(|e| &mut e.1)
    }

    fn insert(&mut self, start: u32, run: Run) -> Option<Run> {
        let Some(c) = self.chunk_of(start) else {
            self.firsts.push(start);
            self.chunks.push(vec![(start, run)]);
            self.len = 1;
            return None;
        };
        let chunk = &mut self.chunks[c];
        let i = chunk.partition_point(|e| e.0 < start);
        if let Some(entry) = chunk.get_mut(i).filter(|e| e.0 == start) {
            return Some(std::mem::replace(&mut entry.1, run));
        }
        chunk.insert(i, (start, run));
        self.firsts[c] = chunk[0].0;
        self.len += 1;
        self.split_if_full(c);
        None
    }

    fn remove(&mut self, start: u32) -> Option<Run> {
        let c = self.chunk_of(start)?;
        let chunk = &mut self.chunks[c];
        let i = chunk.binary_search_by_key(&start, |e| e.0).ok()?;
        let (_, run) = chunk.remove(i);
        self.len -= 1;
        self.shrink(c);
        Some(run)
    }

    fn for_each_from(&self, from: u32, mut f: impl FnMut(u32, Run) -> bool) {
        let Some(c) = self.chunk_of(from) else {
            return;
        };
        let skip = self.chunks[c].partition_point(|e| e.0 < from);
        let mut entries = self.chunks[c][skip..]
            .iter()
            .chain(self.chunks[c + 1..].iter().flatten());
        entries.all(|&(s, r)| f(s, r));
    }

    fn heap_bytes(&self) -> u64 {
        let entry = std::mem::size_of::<(u32, Run)>();
        let entries: usize = self.chunks.iter().map(|c| c.capacity() * entry).sum();
        let headers = self.chunks.capacity() * std::mem::size_of::<Vec<(u32, Run)>>();
        (entries + headers + self.firsts.capacity() * 4) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;

    /// Chunked against std's B-tree under random inserts, replacements, removals and
    /// queries, with splits and merges of chunks all the time (a key space of 4 chunks' worth
    /// up to 40).
    #[test]
    fn chunked_agrees_with_a_btree_map() {
        for (seed, keys) in [(1u64, 4 * CHUNK as u32), (2, 40 * CHUNK as u32)] {
            let mut rng = SimRng::for_stream(seed, "chunked-index");
            let (mut chunked, mut btree) = (Chunked::default(), BTreeMap::new());
            for step in 0..60_000u32 {
                let key = rng.random_range(0..keys);
                let run = Run {
                    len: step,
                    ppn: key,
                };
                match rng.random_range(0..4) {
                    0 | 1 => assert_eq!(chunked.insert(key, run), btree.insert(key, run)),
                    2 => assert_eq!(
                        ExtentIndex::remove(&mut chunked, key),
                        BTreeMap::remove(&mut btree, &key)
                    ),
                    _ => {
                        assert_eq!(chunked.predecessor(key), btree.predecessor(key));
                        assert_eq!(
                            ExtentIndex::get_mut(&mut chunked, key).copied(),
                            ExtentIndex::get_mut(&mut btree, key).copied()
                        );
                        assert_eq!(chunked.successor(key), btree.successor(key));
                        assert_eq!(chunked.neighbours(key), btree.neighbours(key));
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        chunked.for_each_from(key, |s, r| {
                            a.push((s, r));
                            a.len() < 5
                        });
                        btree.for_each_from(key, |s, r| {
                            b.push((s, r));
                            b.len() < 5
                        });
                        assert_eq!(a, b, "step {step}");
                    }
                }
                if step % 1_000 == 0 {
                    chunked.check().expect("invariants");
                }
                assert_eq!(ExtentIndex::len(&chunked), btree.len());
                assert_eq!(ExtentIndex::len(&btree), btree.len());
            }
        }
    }

    /// Starts far from evenly spread inside a chunk (dense runs with wide gaps, far keys up
    /// to `u32::MAX`): every query must agree with std's B-tree.
    #[test]
    fn skewed_chunks_answer_like_a_btree_map() {
        let (mut chunked, mut btree) = (Chunked::default(), BTreeMap::new());
        let keys = (0..100u32)
            .chain((0..60).map(|i| 5_000 + 3 * i))
            .chain([1 << 30, u32::MAX - 1, u32::MAX])
            .chain((0..300).map(|i| 20_000 + i * i));
        for (i, key) in keys.enumerate() {
            let run = Run {
                len: 1,
                ppn: i as u32,
            };
            assert_eq!(chunked.insert(key, run), btree.insert(key, run));
        }
        chunked.check().expect("invariants");
        let probes =
            (0..6_000u32).chain([19_999, 20_000, 110_000, 1 << 30, (1 << 30) + 1, u32::MAX]);
        for key in probes {
            assert_eq!(
                chunked.predecessor(key),
                btree.predecessor(key),
                "key {key}"
            );
            assert_eq!(chunked.successor(key), btree.successor(key), "key {key}");
            assert_eq!(chunked.neighbours(key), btree.neighbours(key), "key {key}");
            assert_eq!(
                ExtentIndex::get_mut(&mut chunked, key).copied(),
                BTreeMap::get_mut(&mut btree, &key).copied(),
                "key {key}"
            );
        }
    }

    /// The memory a report prints: std's B-tree at its estimate a entry (156 bytes a node
    /// of 11 entries, 70% full: 20.26 bytes an entry); the chunked index from what it holds,
    /// 12 bytes an entry, and a 24-byte vector header and a 4-byte first key a chunk (its
    /// vectors cut to their lengths, so that capacity is content).
    #[test]
    fn heap_bytes_count_what_each_index_holds() {
        let (mut chunked, mut btree) = (Chunked::default(), BTreeMap::new());
        assert!(ExtentIndex::is_empty(&chunked) && ExtentIndex::is_empty(&btree));
        for key in 0..1_000u32 {
            let run = Run { len: 1, ppn: key };
            chunked.insert(key * 3, run);
            btree.insert(key * 3, run);
        }
        assert!(!ExtentIndex::is_empty(&chunked) && !ExtentIndex::is_empty(&btree));
        assert_eq!(ExtentIndex::heap_bytes(&btree), 20_260);
        chunked.firsts.shrink_to_fit();
        chunked.chunks.shrink_to_fit();
        chunked.chunks.iter_mut().for_each(Vec::shrink_to_fit);
        let chunks = chunked.chunks.len() as u64;
        assert!(chunks > 1, "{chunks} chunks");
        assert_eq!(chunked.heap_bytes(), 1_000 * 12 + chunks * (24 + 4));
    }

    /// Removals merge a chunk into its successor when both fit in one, so that an index
    /// that shrinks does not keep a chunk header (and a binary search's first level) per
    /// handful of entries.
    #[test]
    fn removals_merge_chunks_that_fit_in_one() {
        let mut chunked = Chunked::default();
        for key in 0..1_000u32 {
            chunked.insert(key, Run { len: 1, ppn: key });
        }
        let full = chunked.chunks.len();
        assert!(full >= 1_000 / CHUNK, "{full} chunks");
        for key in (0..1_000u32).filter(|key| key % 10 != 0) {
            ExtentIndex::remove(&mut chunked, key);
        }
        chunked.check().expect("invariants");
        assert_eq!(ExtentIndex::len(&chunked), 100);
        assert!(
            chunked.chunks.len() <= 2,
            "{} chunks of {full}",
            chunked.chunks.len()
        );
    }

    /// The checker fires on each invariant broken by hand.
    #[test]
    fn the_checker_fires_on_a_corrupted_index() {
        let mut good = Chunked::default();
        for key in 0..300u32 {
            good.insert(2 * key, Run { len: 1, ppn: key });
        }
        good.check().expect("invariants");
        assert!(good.chunks.len() >= 3);
        let corrupt = |f: fn(&mut Chunked), expected: &str| {
            let mut bad = good.clone();
            f(&mut bad);
            let error = bad.check().expect_err(expected);
            assert!(error.contains(expected), "{error}");
        };
        corrupt(
            |c| {
                c.firsts.pop();
            },
            "differ in length",
        );
        corrupt(|c| c.chunks[1].clear(), "chunk 1: empty");
        corrupt(
            |c| {
                let extra: Vec<_> = (0..CHUNK as u32)
                    .map(|k| (100_000 + k, c.chunks[2][0].1))
                    .collect();
                c.chunks.last_mut().expect("chunks").extend(extra);
            },
            "over-full",
        );
        corrupt(
            |c| c.firsts[1] += 1,
            "chunk 1: empty, over-full or first key wrong",
        );
        corrupt(|c| c.chunks[0].swap(3, 4), "chunk 0: start 6 out of order");
        corrupt(
            |c| {
                let early = c.chunks[0][5];
                c.chunks[1].insert(0, early);
                c.firsts[1] = early.0;
            },
            "chunk 1: start 10 out of order",
        );
        corrupt(|c| c.len += 1, "300 entries, 301 counted");
    }

    #[test]
    fn an_empty_index_answers_nothing() {
        let chunked = Chunked::default();
        assert_eq!(chunked.predecessor(5), None);
        assert_eq!(chunked.successor(0), None);
        assert_eq!(chunked.neighbours(7), (None, None));
        let mut chunked = chunked;
        assert_eq!(ExtentIndex::get_mut(&mut chunked, 0), None);
        chunked.for_each_from(0, |_, _| panic!("nothing to visit"));
    }
}
