//! Fixed-width records: 4-byte and 8-byte unsigned integers and 16-byte key-plus-payload
//! pairs, stored raw and little-endian, in files and in blocks alike.
//!
//! A record is ordered by its key alone; records with equal keys may come out of a sort in
//! any order. The multiset checksum ([`Checksum`]) lets a sort's output be verified against
//! its input in one pass each, without a copy of either.

use bytemuck::{Pod, Zeroable};
use rand::Rng;
use serde::Serialize;
use std::fmt::Debug;

/// A fixed-width record ordered by an unsigned key.
pub trait Record: Pod + Send + Sync + Debug + PartialEq + 'static {
    /// Size in bytes (a power of two that divides 4 KiB).
    const BYTES: usize = std::mem::size_of::<Self>();
    /// Significant bytes of the key: radix sort skips the rest.
    const KEY_BYTES: usize;
    /// The kind, as named on the command line.
    const KIND: RecordKind;
    /// Whether the key is the whole record: equal keys are then equal records, and an
    /// unstable sort leaves the same bytes as a stable one.
    const KEY_IS_RECORD: bool = false;

    /// The sort key.
    fn key(&self) -> u64;

    /// A uniformly random record.
    fn random(rng: &mut impl Rng) -> Self;

    /// A record with this key (and a payload derived from it), for tests and graphs.
    fn from_key(key: u64) -> Self;

    /// A 64-bit hash of the whole record, for the multiset checksum.
    fn fingerprint(&self) -> u64 {
        mix(self.key())
    }
}

/// The record kinds, by command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecordKind {
    /// `u32`, 4 bytes.
    U32,
    /// `u64`, 8 bytes.
    U64,
    /// [`KeyPayload`], 16 bytes.
    KeyPayload,
}

impl RecordKind {
    /// Every kind.
    pub const ALL: [RecordKind; 3] = [RecordKind::U32, RecordKind::U64, RecordKind::KeyPayload];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::U32 => "u32",
            RecordKind::U64 => "u64",
            RecordKind::KeyPayload => "kv16",
        }
    }

    /// Record size in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            RecordKind::U32 => 4,
            RecordKind::U64 => 8,
            RecordKind::KeyPayload => 16,
        }
    }
}

impl std::str::FromStr for RecordKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        RecordKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| format!("unknown record type {text:?} (expected u32, u64 or kv16)"))
    }
}

/// The splitmix64 finaliser: a bijective 64-bit mixer.
#[inline(always)]
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Record for u32 {
    const KEY_BYTES: usize = 4;
    const KIND: RecordKind = RecordKind::U32;
    const KEY_IS_RECORD: bool = true;
    #[inline(always)]
    fn key(&self) -> u64 {
        u64::from(*self)
    }
    fn random(rng: &mut impl Rng) -> Self {
        rng.random()
    }
    fn from_key(key: u64) -> Self {
        key as u32
    }
}

impl Record for u64 {
    const KEY_BYTES: usize = 8;
    const KIND: RecordKind = RecordKind::U64;
    const KEY_IS_RECORD: bool = true;
    #[inline(always)]
    fn key(&self) -> u64 {
        *self
    }
    fn random(rng: &mut impl Rng) -> Self {
        rng.random()
    }
    fn from_key(key: u64) -> Self {
        key
    }
}

/// A 16-byte record: a 64-bit key and a 64-bit payload that travels with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct KeyPayload {
    /// The sort key.
    pub key: u64,
    /// Carried along, not compared.
    pub payload: u64,
}

impl Record for KeyPayload {
    const KEY_BYTES: usize = 8;
    const KIND: RecordKind = RecordKind::KeyPayload;
    #[inline(always)]
    fn key(&self) -> u64 {
        self.key
    }
    fn random(rng: &mut impl Rng) -> Self {
        KeyPayload {
            key: rng.random(),
            payload: rng.random(),
        }
    }
    fn from_key(key: u64) -> Self {
        KeyPayload { key, payload: !key }
    }
    fn fingerprint(&self) -> u64 {
        mix(self.key ^ mix(self.payload).rotate_left(17))
    }
}

/// An order-independent checksum of a multiset of records: the count and the wrapping sum
/// and xor of their fingerprints. Equal multisets have equal checksums; a lost, duplicated
/// or altered record changes it except with negligible probability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Checksum {
    /// Records seen.
    pub count: u64,
    /// Wrapping sum of fingerprints.
    pub sum: u64,
    /// Xor of fingerprints.
    pub xor: u64,
}

impl Checksum {
    /// Add records.
    #[inline]
    pub fn add<R: Record>(&mut self, records: &[R]) {
        for record in records {
            let f = record.fingerprint();
            self.sum = self.sum.wrapping_add(f);
            self.xor ^= f;
        }
        self.count += records.len() as u64;
    }

    /// Combine two checksums of disjoint multisets.
    pub fn merge(&mut self, other: &Checksum) {
        self.count += other.count;
        self.sum = self.sum.wrapping_add(other.sum);
        self.xor ^= other.xor;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_ignore_order_and_see_changes() {
        let mut a = Checksum::default();
        a.add(&[3u64, 1, 2]);
        let mut b = Checksum::default();
        b.add(&[1u64, 2, 3]);
        assert_eq!(a, b);
        let mut c = Checksum::default();
        c.add(&[1u64, 2, 2]);
        assert_ne!(a, c);
        let kv = |k, p| KeyPayload { key: k, payload: p };
        let mut d = Checksum::default();
        d.add(&[kv(1, 5), kv(1, 6)]);
        let mut e = Checksum::default();
        e.add(&[kv(1, 6), kv(1, 7)]);
        assert_ne!(d, e);
    }

    #[test]
    fn fingerprints_are_their_formulas_and_checksums_merge_field_by_field() {
        // SplitMix64's finalizer.
        assert_eq!(mix(0), 0);
        assert_eq!(mix(1), 0x5692_161d_100b_05e5);
        assert_eq!(mix(0xdead_beef), 0x4e06_2702_ec92_9eea);
        assert_eq!(7u64.fingerprint(), mix(7));
        assert_eq!(7u32.fingerprint(), mix(7));
        let kv = KeyPayload { key: 5, payload: 9 };
        assert_eq!(kv.fingerprint(), 0xc3ed_9c2d_ea2a_5e78);
        let ones = KeyPayload {
            key: u64::MAX,
            payload: 1,
        };
        assert_eq!(ones.fingerprint(), 0xe12d_dcb8_a984_7672);
        let (mut a, mut b) = (Checksum::default(), Checksum::default());
        a.add(&[1u64, 2]);
        b.add(&[3u64]);
        let mut merged = a;
        merged.merge(&b);
        let mut whole = Checksum::default();
        whole.add(&[1u64, 2, 3]);
        assert_eq!(merged, whole);
        assert_eq!(
            whole,
            Checksum {
                count: 3,
                sum: mix(1).wrapping_add(mix(2)).wrapping_add(mix(3)),
                xor: mix(1) ^ mix(2) ^ mix(3),
            }
        );
        // Keys and records from keys.
        assert_eq!((u32::from_key(1 << 33 | 7), 7u32.key()), (7, 7));
        assert_eq!(u64::from_key(9).key(), 9);
        assert_eq!(
            KeyPayload::from_key(9),
            KeyPayload {
                key: 9,
                payload: !9
            }
        );
        assert_eq!(KeyPayload::from_key(9).key(), 9);
    }

    #[test]
    fn random_records_are_drawn_from_the_generator() {
        use flashkit_core::{SimRng, SimRngExt};
        fn distinct<R: Record>() -> usize {
            let mut rng = SimRng::for_stream(1, "records");
            let mut keys: Vec<u64> = (0..100)
                .map(|_| R::random(&mut rng).fingerprint())
                .collect();
            keys.sort_unstable();
            keys.dedup();
            keys.len()
        }
        assert!(distinct::<u32>() >= 99);
        assert!(distinct::<u64>() >= 99);
        assert!(distinct::<KeyPayload>() >= 99);
        let mut rng = SimRng::for_stream(1, "records");
        let record = KeyPayload::random(&mut rng);
        assert_ne!(record.key, record.payload);
    }

    #[test]
    fn kinds_parse_and_have_sizes() {
        for kind in RecordKind::ALL {
            assert_eq!(kind.name().parse::<RecordKind>(), Ok(kind));
        }
        assert_eq!(u32::BYTES, 4);
        assert_eq!(KeyPayload::BYTES, 16);
        assert_eq!(
            RecordKind::ALL.map(RecordKind::bytes),
            [u32::BYTES, u64::BYTES, KeyPayload::BYTES].map(|b| b as u64)
        );
        assert_eq!(
            RecordKind::ALL.map(RecordKind::name),
            ["u32", "u64", "kv16"]
        );
        assert!("u16".parse::<RecordKind>().is_err());
    }
}
