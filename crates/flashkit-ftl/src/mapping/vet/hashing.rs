//! Hashers for the virtual trie's table (section 6.2.1, "Hash table choice").
//!
//! The table is `hashbrown`'s SwissTable (std's `HashMap` is the same table); what varies is
//! the hasher. Node keys are 32-bit canonical-extent codes whose low bits are mostly zero at
//! high levels, so a hasher must mix high bits down: the SwissTable takes the bucket from the
//! low bits of the hash and a 7-bit tag from the top bits. The candidates, compared by
//! `cargo run --release -p flashkit-ftl --example vet_tables`:
//!
//! - [`Sip`]: std's default SipHash-1-3 (with fixed keys, for determinism).
//! - [`Fold`]: foldhash's fast hasher, hashbrown's own default.
//! - [`Fib`]: one multiplication by 2^64 / phi and a fold of the high half onto the low one
//!   (Fibonacci hashing), made for 32-bit integer keys.
//!
//! The choice and the figures are in docs/reproduction/vet.md.

use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

/// SipHash-1-3 with zero keys (std's `DefaultHasher::new()`).
pub type Sip = BuildHasherDefault<std::hash::DefaultHasher>;

/// foldhash's fast hasher with a fixed seed.
pub type Fold = foldhash::fast::FixedState;

/// Fibonacci hashing of one integer key.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fib;

/// The hasher [`Fib`] builds.
#[derive(Clone, Copy, Debug, Default)]
pub struct FibHasher(u64);

impl Hasher for FibHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        let h = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Fold the well-mixed high half onto the low bits the bucket index is taken from;
        // the tag comes from the top bits, which the multiplication already mixed.
        h ^ (h >> 32)
    }

    #[inline(always)]
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8 | u64::from(byte)).rotate_left(5);
        }
    }

    #[inline(always)]
    fn write_u32(&mut self, value: u32) {
        self.0 = u64::from(value);
    }
}

impl BuildHasher for Fib {
    type Hasher = FibHasher;
    #[inline(always)]
    fn build_hasher(&self) -> FibHasher {
        FibHasher(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fibonacci hashing as the module says: the key times 2^64 / phi, the high half folded
    /// onto the low; bytes shifted in eight bits at a time with a rotation of five.
    #[test]
    fn fib_multiplies_by_the_golden_ratio_and_folds() {
        let fib = |key: u64| {
            let h = key.wrapping_mul(11_400_714_819_323_198_485);
            h ^ (h >> 32)
        };
        for key in [0u32, 1, 2, 0x8000_0000, 0xffff_fffe, 12_345_678] {
            let mut hasher = Fib.build_hasher();
            hasher.write_u32(key);
            assert_eq!(hasher.finish(), fib(u64::from(key)), "{key}");
            assert_eq!(Fib.hash_one(key), fib(u64::from(key)), "{key}");
        }
        // Keys whose low bits are all zero still differ in the low bits of their hashes.
        let low = |key: u32| Fib.hash_one(key) & 0xff;
        assert_ne!(low(1 << 24), low(2 << 24));
        let mut hasher = Fib.build_hasher();
        hasher.write(&[1, 2, 3]);
        let state = [1u64, 2, 3]
            .into_iter()
            .fold(0u64, |s, b| (s << 8 | b).rotate_left(5));
        assert_eq!(hasher.finish(), fib(state));
        assert_eq!(state, ((((1u64 << 5) << 8 | 2) << 5) << 8 | 3) << 5);
    }
}
