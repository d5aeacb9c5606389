//! The hash table behind the virtual trie (section 6.2.1, "Hash table choice").
//!
//! A VET is a hash table of canonical-extent keys; what table is a choice the paper leaves
//! open (it used a chained one). [`NodeTable`] is the little the trie asks of one, and two
//! implement it, compared by `cargo run --release -p flashkit-ftl --example vet_tables` and
//! by `flashkit reproduce vet` (figures in docs/reproduction/vet.md):
//!
//! - [`Cuckoo`] (the default): bucketized cuckoo hashing, one 64-byte cache line a bucket.
//!   Every key lives in one of two buckets, so a lookup reads one line when the key is in
//!   its first bucket and two otherwise, whatever the load; a deletion clears a slot.
//! - `hashbrown::HashMap` ([`Swiss`]), the SwissTable, with any hasher of
//!   [`super::hashing`]: a lookup reads a group of control bytes, then the bucket (two
//!   dependent lines for a key that is there).
//!
//! Why it matters: a read of fragmented data (the homes workload) ends every binary search on
//! a one-page leaf or a one-page hole at the bottom of the trie, a probe into a random place
//! of a table far larger than the cache. Two dependent misses a probe against one is most of
//! the read's time.

use std::fmt::Debug;
use std::hash::BuildHasher;

/// A map from node keys (never zero: see `Canonical::key`) to trie nodes.
pub trait NodeTable<V: Copy>: Default + Clone + Debug + Send + 'static {
    /// Name in the table benchmark.
    const NAME: &'static str;

    /// The node under `key`.
    fn get(&self, key: u32) -> Option<V>;
    /// The node under `key`, to change in place.
    fn get_mut(&mut self, key: u32) -> Option<&mut V>;
    /// Store `value` under `key`; the node it replaces.
    fn insert(&mut self, key: u32, value: V) -> Option<V>;
    /// Store `value` under `key`, which holds nothing.
    fn insert_absent(&mut self, key: u32, value: V) {
        let previous = self.insert(key, value);
        debug_assert!(previous.is_none(), "invariant: {key} was absent");
    }
    /// The node under `key`, stored as `value` first if there was none.
    fn get_or_insert(&mut self, key: u32, value: V) -> &mut V;
    /// Remove the node under `key`.
    fn remove(&mut self, key: u32) -> Option<V>;
    /// Nodes stored.
    fn len(&self) -> usize;
    /// Whether no node is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Every node, in no particular (but deterministic) order.
    fn for_each(&self, f: impl FnMut(u32, V));
    /// Heap bytes held.
    fn heap_bytes(&self) -> usize;
    /// Hint that `key` is looked up soon: start fetching where it would be. No effect on
    /// results; a table that cannot tell where a key lives does nothing.
    fn prefetch(&self, _key: u32) {}
}

/// hashbrown's SwissTable over hasher `S`.
pub type Swiss<V, S = super::Fold> = hashbrown::HashMap<u32, V, S>;

impl<V, S> NodeTable<V> for hashbrown::HashMap<u32, V, S>
where
    V: Copy + Debug + Send + 'static,
    S: BuildHasher + Default + Clone + Debug + Send + 'static,
{
    const NAME: &'static str = "swiss";

    #[inline]
    fn get(&self, key: u32) -> Option<V> {
        hashbrown::HashMap::get(self, &key).copied()
    }

    #[inline]
    fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        hashbrown::HashMap::get_mut(self, &key)
    }

    #[inline]
    fn insert(&mut self, key: u32, value: V) -> Option<V> {
        hashbrown::HashMap::insert(self, key, value)
    }

    #[inline]
    fn get_or_insert(&mut self, key: u32, value: V) -> &mut V {
        self.entry(key).or_insert(value)
    }

    #[inline]
    fn remove(&mut self, key: u32) -> Option<V> {
        hashbrown::HashMap::remove(self, &key)
    }

    fn len(&self) -> usize {
        hashbrown::HashMap::len(self)
    }

    fn for_each(&self, mut f: impl FnMut(u32, V)) {
        for (&key, &value) in self {
            f(key, value);
        }
    }

    fn heap_bytes(&self) -> usize {
        self.allocation_size()
    }
}

/// One bucket: `N` keys (zero for a free slot), then their nodes; one cache line when the
/// layout picks `N` for its node size (4 pointer-free nodes of 12 bytes, 8 pointer-dependent
/// ones of 4).
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Bucket<V, const N: usize> {
    keys: [u32; N],
    values: [V; N],
}

impl<V: Copy + Default, const N: usize> Bucket<V, N> {
    const EMPTY_KEY: u32 = 0;

    fn empty() -> Self {
        Bucket {
            keys: [Self::EMPTY_KEY; N],
            values: [V::default(); N],
        }
    }

    /// Slots holding `key`, as bits: four keys a compare instruction (the plain loop, a
    /// compare and a flag set a key, stayed scalar on the critical path of every probe).
    /// A bucket holds a multiple of four keys (both layouts' buckets do), checked at compile
    /// time.
    #[inline(always)]
    fn matches(&self, key: u32) -> u32 {
        const { assert!(N.is_multiple_of(4), "a bucket holds whole quads of keys") };
        let mut mask = 0;
        for (i, quad) in self.keys.as_chunks::<4>().0.iter().enumerate() {
            mask |= flashkit_core::hint::equal_lanes(quad, key) << (4 * i);
        }
        mask
    }

    #[inline(always)]
    fn slot_of(&self, key: u32) -> Option<usize> {
        let mask = self.matches(key);
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }
}

/// Bucketized cuckoo hashing: two candidate buckets a key, `N` slots a bucket.
#[derive(Clone, Debug)]
pub struct Cuckoo<V, const N: usize> {
    buckets: Vec<Bucket<V, N>>,
    /// `64 - log2(buckets)`: a bucket index is the top bits of a product.
    shift: u32,
    /// By bucket: how many keys whose first bucket this is live in their second one. Zero
    /// (the usual case below 3/4 load) means a key missing from this bucket is missing
    /// from the table, so an unsuccessful lookup reads one line, not two.
    spilled: Vec<u32>,
    len: usize,
    /// Picks the slot a displacement evicts (deterministic, so same input, same table).
    victim: usize,
}

/// Where [`Cuckoo::place`] put a key.
enum Placed<V> {
    /// In a free slot of one of its buckets.
    At(usize, usize),
    /// After displacing others; it may have moved since.
    Displaced,
    /// Not at all: the displacement chain ran out, and this key (perhaps another one) has
    /// no slot.
    Homeless(u32, V),
}

/// Buckets of an empty table.
const MIN_BUCKETS: usize = 8;
/// Grow beyond this load, in eighths: at 3/4, displacement chains stay short (7/8 made
/// writes slower by their random misses).
const MAX_LOAD_EIGHTHS: usize = 6;
/// Displacements one insertion may make before the table grows instead.
const MAX_KICKS: usize = 128;

impl<V: Copy + Default, const N: usize> Default for Cuckoo<V, N> {
    fn default() -> Self {
        Self::with_buckets(MIN_BUCKETS)
    }
}

impl<V: Copy + Default, const N: usize> Cuckoo<V, N> {
    fn with_buckets(buckets: usize) -> Self {
        debug_assert!(buckets.is_power_of_two() && buckets >= 2);
        Cuckoo {
            // Huge pages where the kernel allows: a table of millions of nodes spans more
            // 4 KiB pages than the TLB holds, and every random probe would add a page walk.
            buckets: flashkit_core::hint::huge_page_vec(buckets, Bucket::empty()),
            shift: 64 - buckets.trailing_zeros(),
            spilled: vec![0; buckets],
            len: 0,
            victim: 0,
        }
    }

    /// The first bucket of `key`.
    #[inline(always)]
    fn first_of(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The second bucket of `key`, whose first is `first` (always different from it).
    #[inline(always)]
    fn second_of(&self, key: u32, first: usize) -> usize {
        let second = ((u64::from(key) ^ 0x5851_F42D_4C95_7F2D).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            >> self.shift) as usize;
        if first == second { first ^ 1 } else { second }
    }

    /// The two buckets of `key` (always different).
    #[inline(always)]
    fn buckets_of(&self, key: u32) -> (usize, usize) {
        let first = self.first_of(key);
        (first, self.second_of(key, first))
    }

    /// (bucket, slot) of `key`.
    #[inline(always)]
    fn find(&self, key: u32) -> Option<(usize, usize)> {
        let first = self.first_of(key);
        // The second line is read only when the first lacks the key, and its address is
        // computed only then. (Reading both before testing either, so that their misses
        // overlap, made fragmented reads 5% slower: most keys sit in their first bucket.)
        if let Some(slot) = self.buckets[first].slot_of(key) {
            return Some((first, slot));
        }
        if self.spilled[first] == 0 {
            return None;
        }
        let second = self.second_of(key, first);
        self.buckets[second].slot_of(key).map(|slot| (second, slot))
    }

    /// Store an absent key, growing the table when it is full or a displacement chain runs
    /// too long. Returns where the key went, when no displacement moved things around
    /// (`None`: look it up).
    fn insert_new(&mut self, key: u32, value: V) -> Option<(usize, usize)> {
        if (self.len + 1) * 8 > self.buckets.len() * N * MAX_LOAD_EIGHTHS {
            self.grow();
        }
        let original = key;
        let (mut key, mut value) = (key, value);
        loop {
            match self.place(key, value) {
                // After a failed chain the key placed here is the one left homeless, not
                // necessarily the one asked for: its position is no answer.
                Placed::At(bucket, slot) => {
                    self.len += 1;
                    return (key == original).then_some((bucket, slot));
                }
                Placed::Displaced => {
                    self.len += 1;
                    return None;
                }
                Placed::Homeless(k, v) => {
                    // Every key but this one is stored; make room and try it again.
                    (key, value) = (k, v);
                    self.grow();
                }
            }
        }
    }

    /// Place an absent key, by cuckoo displacement if both its buckets are full.
    fn place(&mut self, key: u32, value: V) -> Placed<V> {
        let (first, second) = self.buckets_of(key);
        if let Some(slot) = self.buckets[first].slot_of(Bucket::<V, N>::EMPTY_KEY) {
            self.set(first, slot, key, value);
            return Placed::At(first, slot);
        }
        if let Some(slot) = self.buckets[second].slot_of(Bucket::<V, N>::EMPTY_KEY) {
            self.set(second, slot, key, value);
            self.spilled[first] += 1;
            return Placed::At(second, slot);
        }
        let (mut key, mut value, mut bucket) = (key, value, first);
        for _ in 0..MAX_KICKS {
            self.victim = self.victim.wrapping_add(1);
            let slot = self.victim % N;
            let b = &mut self.buckets[bucket];
            let evicted = (b.keys[slot], b.values[slot]);
            b.keys[slot] = key;
            b.values[slot] = value;
            self.arrive(key, bucket);
            (key, value) = evicted;
            self.depart(key, bucket);
            let (a, c) = self.buckets_of(key);
            bucket = if a == bucket { c } else { a };
            if let Some(slot) = self.buckets[bucket].slot_of(Bucket::<V, N>::EMPTY_KEY) {
                self.set(bucket, slot, key, value);
                self.arrive(key, bucket);
                return Placed::Displaced;
            }
        }
        Placed::Homeless(key, value)
    }

    /// `key` now lives in `bucket`: count it if that is its second bucket.
    #[inline(always)]
    fn arrive(&mut self, key: u32, bucket: usize) {
        let first = self.first_of(key);
        if bucket != first {
            self.spilled[first] += 1;
        }
    }

    /// `key` left `bucket`.
    #[inline(always)]
    fn depart(&mut self, key: u32, bucket: usize) {
        let first = self.first_of(key);
        if bucket != first {
            self.spilled[first] -= 1;
        }
    }

    /// Whether every bucket's spill count is what its keys say (for tests).
    #[cfg(test)]
    fn spills_are_counted(&self) -> bool {
        let mut spilled = vec![0; self.buckets.len()];
        for (index, bucket) in self.buckets.iter().enumerate() {
            for &key in &bucket.keys {
                if key != Bucket::<V, N>::EMPTY_KEY {
                    let (first, second) = self.buckets_of(key);
                    assert!(
                        index == first || index == second,
                        "{key} in a foreign bucket"
                    );
                    if index != first {
                        spilled[first] += 1;
                    }
                }
            }
        }
        spilled == self.spilled
    }

    #[inline(always)]
    fn set(&mut self, bucket: usize, slot: usize, key: u32, value: V) {
        let b = &mut self.buckets[bucket];
        b.keys[slot] = key;
        b.values[slot] = value;
    }

    /// Double the buckets and re-place every key.
    fn grow(&mut self) {
        let old = std::mem::replace(self, Self::with_buckets(self.buckets.len() * 2));
        self.victim = old.victim;
        for bucket in &old.buckets {
            for (&key, &value) in bucket.keys.iter().zip(&bucket.values) {
                if key != Bucket::<V, N>::EMPTY_KEY {
                    let _ = self.insert_new(key, value);
                }
            }
        }
    }
}

impl<V, const N: usize> NodeTable<V> for Cuckoo<V, N>
where
    V: Copy + Default + Debug + Send + 'static,
{
    const NAME: &'static str = "cuckoo";

    #[inline(always)]
    fn get(&self, key: u32) -> Option<V> {
        self.find(key)
            .map(|(bucket, slot)| self.buckets[bucket].values[slot])
    }

    #[inline]
    fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        self.find(key)
            .map(|(bucket, slot)| &mut self.buckets[bucket].values[slot])
    }

    fn insert(&mut self, key: u32, value: V) -> Option<V> {
        debug_assert_ne!(
            key,
            Bucket::<V, N>::EMPTY_KEY,
            "invariant: keys are not zero"
        );
        if let Some(old) = NodeTable::get_mut(self, key) {
            return Some(std::mem::replace(old, value));
        }
        let _ = self.insert_new(key, value);
        None
    }

    fn insert_absent(&mut self, key: u32, value: V) {
        debug_assert!(self.find(key).is_none(), "invariant: {key} is absent");
        let _ = self.insert_new(key, value);
    }

    fn get_or_insert(&mut self, key: u32, value: V) -> &mut V {
        debug_assert_ne!(
            key,
            Bucket::<V, N>::EMPTY_KEY,
            "invariant: keys are not zero"
        );
        let (bucket, slot) = match self.find(key) {
            Some(at) => at,
            None => match self.insert_new(key, value) {
                Some(at) => at,
                None => self.find(key).expect("invariant: just inserted"),
            },
        };
        &mut self.buckets[bucket].values[slot]
    }

    #[inline]
    fn remove(&mut self, key: u32) -> Option<V> {
        let (bucket, slot) = self.find(key)?;
        let b = &mut self.buckets[bucket];
        b.keys[slot] = Bucket::<V, N>::EMPTY_KEY;
        let value = b.values[slot];
        self.depart(key, bucket);
        self.len -= 1;
        Some(value)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn for_each(&self, mut f: impl FnMut(u32, V)) {
        for bucket in &self.buckets {
            for (&key, &value) in bucket.keys.iter().zip(&bucket.values) {
                if key != Bucket::<V, N>::EMPTY_KEY {
                    f(key, value);
                }
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<Bucket<V, N>>()
            + self.spilled.capacity() * std::mem::size_of::<u32>()
    }

    #[inline(always)]
    fn prefetch(&self, key: u32) {
        let (first, second) = self.buckets_of(key);
        flashkit_core::hint::prefetch(&self.buckets, first);
        flashkit_core::hint::prefetch(&self.spilled, first);
        flashkit_core::hint::prefetch(&self.buckets, second);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;
    use std::collections::BTreeMap;

    fn against_btreemap<T: NodeTable<u64>>(seed: u64, ops: usize, keys: u32) -> T {
        let mut rng = SimRng::for_stream(seed, "node-table");
        let mut table = T::default();
        let mut reference = BTreeMap::new();
        for step in 0..ops {
            let key = rng.random_range(1..=keys);
            match rng.random_range(0..5) {
                0 | 1 => {
                    let value = rng.random::<u64>();
                    assert_eq!(
                        table.insert(key, value),
                        reference.insert(key, value),
                        "step {step}"
                    );
                }
                2 => assert_eq!(table.remove(key), reference.remove(&key), "step {step}"),
                3 => {
                    let value = rng.random::<u64>();
                    let slot = table.get_or_insert(key, value);
                    *slot = slot.wrapping_add(1);
                    let expected = reference.entry(key).or_insert(value);
                    *expected = expected.wrapping_add(1);
                }
                _ => assert_eq!(table.get(key), reference.get(&key).copied(), "step {step}"),
            }
            assert_eq!(table.len(), reference.len());
        }
        let mut all = BTreeMap::new();
        table.for_each(|key, value| assert!(all.insert(key, value).is_none()));
        assert_eq!(all, reference);
        table
    }

    #[test]
    fn cuckoo_agrees_with_a_btreemap() {
        for (seed, keys) in [(1, 50), (2, 5_000), (3, 200_000), (4, u32::MAX)] {
            let table = against_btreemap::<Cuckoo<u64, 4>>(seed, 200_000, keys);
            assert!(table.spills_are_counted());
            let table = against_btreemap::<Cuckoo<u64, 8>>(seed, 50_000, keys);
            assert!(table.spills_are_counted());
        }
    }

    #[test]
    fn swiss_agrees_with_a_btreemap() {
        let _ = against_btreemap::<Swiss<u64>>(5, 50_000, 5_000);
    }

    #[test]
    fn cuckoo_grows_only_to_its_load_limit() {
        let mut table = Cuckoo::<u64, 4>::default();
        let key = |i: u32| i.wrapping_mul(2_654_435_761);
        // 2^15 buckets of 4 slots hold 98,304 keys at the 6/8 limit: displacement chains
        // find room all the way there (a table that grew on a failed chain, or that sent an
        // evicted key back where it came from, would have doubled before).
        for i in 1..=98_304u32 {
            table.insert(key(i), u64::from(i));
        }
        assert_eq!(table.buckets.len(), 1 << 15);
        assert!(table.spills_are_counted());
        for i in 98_305..=100_000u32 {
            table.insert(key(i), u64::from(i));
        }
        // The next key doubled the table: 100,000 keys at 38% load.
        assert_eq!(table.len(), 100_000);
        assert_eq!(table.buckets.len(), 1 << 16);
    }

    #[test]
    fn get_or_insert_answers_for_its_key_when_a_displacement_chain_fails() {
        // Found by the canonical-extent proptest (one LIS write of 1308 pages): when a chain
        // ran out, the table grew and re-placed the key left homeless, and get_or_insert
        // returned *that* key's slot, so the caller counted a leaf on the wrong node. Nine
        // keys whose two buckets are both 0 and 1 overflow those 8 slots on the ninth.
        let mut table = Cuckoo::<u64, 4>::default();
        let crowded: Vec<u32> = (1..u32::MAX)
            .filter(|&key| {
                let (a, b) = table.buckets_of(key);
                a.max(b) <= 1
            })
            .take(9)
            .collect();
        assert_eq!(crowded.len(), 9);
        for (i, &key) in crowded.iter().enumerate() {
            let slot = table.get_or_insert(key, 0);
            assert_eq!(*slot, 0, "key {i} is new");
            *slot = 100 + i as u64;
        }
        assert!(
            table.buckets.len() > MIN_BUCKETS,
            "the ninth key made it grow"
        );
        for (i, &key) in crowded.iter().enumerate() {
            assert_eq!(table.get(key), Some(100 + i as u64), "key {i}");
        }
        assert!(table.spills_are_counted());
    }

    /// The memory a report prints: a cuckoo table holds its buckets (a cache line each) and
    /// a 4-byte spill count a bucket, and grows by doubling both.
    #[test]
    fn cuckoo_heap_bytes_count_buckets_and_spill_counts() {
        let mut table = Cuckoo::<u64, 4>::default();
        assert!(table.is_empty());
        assert_eq!(table.heap_bytes(), MIN_BUCKETS * (64 + 4));
        // 8 buckets of 4 slots hold 24 keys at the 6/8 load limit; the 25th doubles them.
        for key in 1..=24u32 {
            table.insert(key, u64::from(key));
        }
        assert_eq!(table.heap_bytes(), MIN_BUCKETS * (64 + 4));
        table.insert(25, 25);
        assert!(!table.is_empty());
        assert_eq!(table.heap_bytes(), 2 * MIN_BUCKETS * (64 + 4));
        let pd = Cuckoo::<u32, 8>::default();
        assert_eq!(pd.heap_bytes(), MIN_BUCKETS * (64 + 4));
    }

    /// A key's two buckets differ (in the smallest table too, where a key's two hashes agree
    /// for one key in eight), and its second bucket is a hash of its own: keys in a row,
    /// which share their high bits, reach at least as many second buckets as random keys
    /// would (4,096 of them in 4,096 buckets: about 63%, 2,589).
    #[test]
    fn a_keys_second_bucket_differs_from_its_first_and_spreads() {
        let small = Cuckoo::<u64, 4>::default();
        let mut seconds = [0u32; MIN_BUCKETS];
        for key in 1..=2_000u32 {
            let (first, second) = small.buckets_of(key);
            assert_ne!(first, second, "key {key}");
            seconds[second] += 1;
        }
        assert!(seconds.iter().all(|&n| n > 100), "{seconds:?}");

        let large = Cuckoo::<u64, 4>::with_buckets(4_096);
        let mut reached = vec![false; 4_096];
        for key in 1..=4_096u32 {
            reached[large.buckets_of(key).1] = true;
        }
        let distinct = reached.iter().filter(|&&r| r).count();
        assert!(distinct >= 2_589, "{distinct} second buckets");
    }

    #[test]
    fn a_bucket_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Bucket<u64, 4>>(), 64);
        assert_eq!(std::mem::size_of::<Bucket<u32, 8>>(), 64);
        assert_eq!(std::mem::align_of::<Bucket<u32, 8>>(), 64);
    }
}
