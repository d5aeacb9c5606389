//! A fingerprint of simulator state. Two runs with the same inputs must produce the same
//! hash; a change that alters behaviour changes it. xxh3 is used because it is fast enough
//! to hash a 16 MiB page table in a few milliseconds and is stable across platforms.

use crate::{Cause, OpCounters, SimRng};
use xxhash_rust::xxh3::Xxh3;

/// Streaming hasher over little-endian encodings of the values fed to it.
#[derive(Clone, Default)]
pub struct StateHasher {
    inner: Xxh3,
}

impl StateHasher {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed a u32.
    pub fn u32(&mut self, value: u32) {
        self.inner.update(&value.to_le_bytes());
    }

    /// Feed a u64.
    pub fn u64(&mut self, value: u64) {
        self.inner.update(&value.to_le_bytes());
    }

    /// Feed a slice of u32, as little-endian bytes.
    pub fn u32s(&mut self, values: &[u32]) {
        // Hash in chunks to avoid one big allocation while staying endian-independent.
        let mut buffer = [0u8; 4096];
        for chunk in values.chunks(buffer.len() / 4) {
            for (slot, value) in buffer.chunks_exact_mut(4).zip(chunk) {
                slot.copy_from_slice(&value.to_le_bytes());
            }
            self.inner.update(&buffer[..chunk.len() * 4]);
        }
    }

    /// Feed raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.inner.update(bytes);
    }

    /// Feed every counter of `counters`: reads, programs, erases, each by cause in
    /// [`Cause::ALL`] order.
    pub fn counters(&mut self, counters: &OpCounters) {
        for by_cause in [&counters.reads, &counters.programs, &counters.erases] {
            for cause in Cause::ALL {
                self.u64(by_cause[cause]);
            }
        }
    }

    /// Feed where a random stream stands: its seed, stream and word position, which
    /// decide every value it draws next.
    pub fn rng(&mut self, rng: &SimRng) {
        self.bytes(&rng.get_seed());
        self.u64(rng.get_stream());
        self.bytes(&rng.get_word_pos().to_le_bytes());
    }

    /// The 64-bit digest so far.
    pub fn finish(&self) -> u64 {
        self.inner.digest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_every_value() {
        let mut a = StateHasher::new();
        a.u32s(&[1, 2, 3]);
        let mut b = StateHasher::new();
        b.u32s(&[1, 2, 4]);
        let mut c = StateHasher::new();
        c.u32s(&[1, 2, 3]);
        assert_ne!(a.finish(), b.finish());
        assert_eq!(a.finish(), c.finish());
    }

    /// Each way of feeding a value changes the digest, and `u32s` hashes exactly the
    /// little-endian bytes of its values, across its 4 KiB buffer's chunks (found by
    /// mutation testing: `u32`, `u64` and `bytes` could do nothing unnoticed).
    #[test]
    fn every_feed_reaches_the_digest() {
        let empty = StateHasher::new().finish();
        let fed = |feed: &dyn Fn(&mut StateHasher)| {
            let mut hasher = StateHasher::new();
            feed(&mut hasher);
            hasher.finish()
        };
        assert_ne!(fed(&|h| h.u32(7)), empty);
        assert_ne!(fed(&|h| h.u64(7)), empty);
        assert_ne!(fed(&|h| h.bytes(b"x")), empty);
        assert_ne!(fed(&|h| h.u32(7)), fed(&|h| h.u32(8)));
        let values: Vec<u32> = (0..5000u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(fed(&|h| h.u32s(&values)), fed(&|h| h.bytes(&bytes)));
        assert_eq!(
            fed(&|h| h.u32s(&values)),
            xxhash_rust::xxh3::xxh3_64(&bytes),
            "xxh3 of the little-endian bytes"
        );
    }

    /// Every counter of every cause reaches the digest, each in a place of its own.
    #[test]
    fn every_counter_reaches_the_digest() {
        let hash = |c: &OpCounters| {
            let mut hasher = StateHasher::new();
            hasher.counters(c);
            hasher.finish()
        };
        let base = hash(&OpCounters::default());
        let mut seen = vec![base];
        for op in 0..3 {
            for cause in Cause::ALL {
                let mut c = OpCounters::default();
                let by_cause = [&mut c.reads, &mut c.programs, &mut c.erases];
                let counter = by_cause.into_iter().nth(op).expect("three operations");
                counter[cause] = 1;
                let h = hash(&c);
                assert!(
                    !seen.contains(&h),
                    "operation {op} {cause:?} hashes like another"
                );
                seen.push(h);
            }
        }
    }

    /// A random stream's seed, stream and position each reach the digest: two streams that
    /// would draw different values next hash differently.
    #[test]
    fn where_a_random_stream_stands_reaches_the_digest() {
        use rand::{RngCore, SeedableRng};
        let hash = |rng: &SimRng| {
            let mut hasher = StateHasher::new();
            hasher.rng(rng);
            hasher.finish()
        };
        let fresh = SimRng::seed_from_u64(1);
        assert_eq!(hash(&fresh), hash(&SimRng::seed_from_u64(1)));
        assert_ne!(hash(&fresh), hash(&SimRng::seed_from_u64(2)), "seed");
        let mut drawn = fresh.clone();
        drawn.next_u32();
        assert_ne!(hash(&fresh), hash(&drawn), "position");
        let mut other_stream = fresh.clone();
        other_stream.set_stream(1);
        assert_ne!(hash(&fresh), hash(&other_stream), "stream");
    }
}
