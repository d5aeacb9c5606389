//! Run formation's in-memory sort: radix sort on the key, 8 bits a pass, into a scratch
//! buffer and back: one most-significant-digit pass, then least-significant-digit passes
//! inside each cache-sized bucket.
//!
//! One counting pass builds the histograms of every digit at once; a digit whose values all
//! fall into one bucket (the high bytes of small keys, all-equal inputs, presorted runs of a
//! narrow range) is skipped, so its scatter pass costs nothing. LSD radix sort is stable and
//! does `KEY_BYTES` sequential passes whatever the input order, which is why it beats a
//! comparison sort on the random integers of the paper's Table 1.

use crate::record::Record;

const RADIX: usize = 256;

/// Below this many records a bucket is sorted by LSD passes alone.
const MSD_THRESHOLD: usize = 1 << 16;

/// Sort `data` by key using `scratch` (at least as long). Returns `true` when the sorted
/// records ended up in `scratch` rather than in `data`.
///
/// Large inputs take one most-significant-digit pass into 256 buckets first; each bucket,
/// a 256th of a run (512 KiB of a 128 MiB run), then fits in the L2 cache for its LSD
/// passes, and the buckets are shared between two threads.
pub fn radix_sort<R: Record>(data: &mut [R], scratch: &mut [R]) -> bool {
    let n = data.len();
    assert!(scratch.len() >= n, "radix sort scratch is too small");
    let scratch = &mut scratch[..n];
    if n < MSD_THRESHOLD {
        return lsd(data, scratch, R::KEY_BYTES);
    }
    let top = 8 * (R::KEY_BYTES - 1);
    let mut count = [0usize; RADIX];
    for record in data.iter() {
        count[((record.key() >> top) & 0xff) as usize] += 1;
    }
    if count.contains(&n) {
        return lsd(data, scratch, R::KEY_BYTES - 1);
    }
    let mut offsets = [0usize; RADIX];
    let mut sum = 0;
    for (offset, &c) in offsets.iter_mut().zip(count.iter()) {
        *offset = sum;
        sum += c;
    }
    scatter(data, scratch, &mut offsets, top);
    // Two groups of whole buckets of about equal size, one per thread.
    let mut split_bucket = 0;
    let mut left = 0;
    while split_bucket < RADIX && left + count[split_bucket] <= n / 2 {
        left += count[split_bucket];
        split_bucket += 1;
    }
    let (data_a, data_b) = data.split_at_mut(left);
    let (scratch_a, scratch_b) = scratch.split_at_mut(left);
    std::thread::scope(|scope| {
        scope.spawn(|| sort_buckets(scratch_a, data_a, &count[..split_bucket]));
        sort_buckets(scratch_b, data_b, &count[split_bucket..]);
    });
    false
}

/// Sort each bucket (held in `from`, sizes `counts`) by the lower digits into `to`.
fn sort_buckets<R: Record>(from: &mut [R], to: &mut [R], counts: &[usize]) {
    let mut start = 0;
    for &c in counts {
        let (bucket, bucket_to) = (&mut from[start..start + c], &mut to[start..start + c]);
        // The bucket is in `from`; LSD passes ping-pong between the two, and the result
        // must end in `to`.
        if !lsd(bucket, bucket_to, R::KEY_BYTES - 1) {
            bucket_to.copy_from_slice(bucket);
        }
        start += c;
    }
}

/// LSD radix sort on the `digits` low bytes; returns `true` when the result is in
/// `scratch`.
fn lsd<R: Record>(data: &mut [R], scratch: &mut [R], digits: usize) -> bool {
    let n = data.len();
    if n < 64 {
        data.sort_by_key(Record::key);
        return false;
    }
    let mut counts = vec![[0usize; RADIX]; digits];
    for record in data.iter() {
        let key = record.key();
        for (d, count) in counts.iter_mut().enumerate() {
            count[((key >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut in_scratch = false;
    for (d, count) in counts.iter().enumerate() {
        if count.contains(&n) {
            continue;
        }
        let mut offsets = [0usize; RADIX];
        let mut sum = 0;
        for (offset, &c) in offsets.iter_mut().zip(count.iter()) {
            *offset = sum;
            sum += c;
        }
        let shift = 8 * d;
        if in_scratch {
            scatter(scratch, data, &mut offsets, shift);
        } else {
            scatter(data, scratch, &mut offsets, shift);
        }
        in_scratch = !in_scratch;
    }
    in_scratch
}

#[inline]
fn scatter<R: Record>(from: &[R], to: &mut [R], offsets: &mut [usize; RADIX], shift: usize) {
    for &record in from {
        let digit = ((record.key() >> shift) & 0xff) as usize;
        let slot = offsets[digit];
        to[slot] = record;
        offsets[digit] = slot + 1;
    }
}

/// Sort `data` in place (copying back from the scratch buffer when needed).
pub fn radix_sort_in_place<R: Record>(data: &mut [R], scratch: &mut [R]) {
    if radix_sort(data, scratch) {
        data.copy_from_slice(&scratch[..data.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::KeyPayload;
    use flashkit_core::{SimRng, SimRngExt};

    fn check<R: Record + Ord>(mut data: Vec<R>) {
        let mut expected = data.clone();
        expected.sort_by_key(Record::key);
        let mut scratch = data.clone();
        radix_sort_in_place(&mut data, &mut scratch);
        assert_eq!(
            data.iter().map(Record::key).collect::<Vec<_>>(),
            expected.iter().map(Record::key).collect::<Vec<_>>()
        );
    }

    #[test]
    fn sorts_random_sorted_reversed_and_equal_inputs() {
        let mut rng = SimRng::for_stream(1, "radix");
        let random: Vec<u64> = (0..5000).map(|_| u64::random(&mut rng)).collect();
        check(random.clone());
        let mut sorted = random.clone();
        sorted.sort_unstable();
        check(sorted.clone());
        sorted.reverse();
        check(sorted);
        check(vec![7u32; 1000]);
        check((0..3000u32).map(|i| i % 17).collect());
        check(Vec::<u64>::new());
        // Past the MSD threshold: random, one top byte, and skewed buckets.
        let big: Vec<u64> = (0..200_000).map(|_| u64::random(&mut rng)).collect();
        check(big.clone());
        check(big.iter().map(|k| k >> 8).collect::<Vec<u64>>());
        check(
            big.iter()
                .map(|k| k % 1000 + (k >> 63 << 63))
                .collect::<Vec<u64>>(),
        );
        let big32: Vec<u32> = (0..100_000).map(|_| u32::random(&mut rng)).collect();
        check(big32);
    }

    #[test]
    fn radix_sort_is_stable_on_payloads() {
        let mut data: Vec<KeyPayload> = (0..100_000)
            .map(|i| KeyPayload {
                key: (i % 10) << 60 | (i % 7),
                payload: i,
            })
            .collect();
        let mut scratch = data.clone();
        radix_sort_in_place(&mut data, &mut scratch);
        for pair in data.windows(2) {
            assert!(
                (pair[0].key, pair[0].payload) < (pair[1].key, pair[1].payload),
                "{pair:?}"
            );
        }
    }
}
