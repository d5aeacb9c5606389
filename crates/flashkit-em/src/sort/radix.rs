//! Run formation's in-memory sort: radix sort on the key, 8 bits a pass, into a scratch
//! buffer and back: one most-significant-digit pass, then least-significant-digit passes
//! inside each cache-sized bucket.
//!
//! One counting pass builds the histograms of every digit at once; a digit whose values all
//! fall into one bucket (the high bytes of small keys, all-equal inputs, presorted runs of a
//! narrow range) is skipped, so its scatter pass costs nothing. LSD radix sort is stable and
//! does `KEY_BYTES` sequential passes whatever the input order, which is why it beats a
//! comparison sort on the random integers of the paper's Table 1.

use crate::record::{Checksum, Record};

const RADIX: usize = 256;

/// Below this many records a whole input is sorted by LSD passes alone.
const MSD_THRESHOLD: usize = 1 << 16;

/// Below this many records a bucket of the MSD recursion (a few KiB, in L1) is finished by
/// a stable comparison sort: cheaper than the remaining digits' passes, each of which costs
/// a histogram and a scatter over the bucket (callgrind: 409 instructions a record for a
/// 16-run sort with LSD-finished buckets).
const SMALL: usize = 256;

/// Sort `data` by key using `scratch` (at least as long). Returns `true` when the sorted
/// records ended up in `scratch` rather than in `data`.
///
/// Large inputs are split by most-significant-digit passes until a bucket holds fewer than
/// [`SMALL`] records, which a stable comparison sort finishes in L1 (digits whose values all
/// fall into one bucket are skipped). The first split runs on two threads (each counts and
/// scatters half the input), and its buckets are then shared between two threads.
pub fn radix_sort<R: Record>(data: &mut [R], scratch: &mut [R]) -> bool {
    sort_inner::<R, false>(data, scratch, &mut Checksum::default())
}

/// [`radix_sort`], also returning the multiset checksum of the records, taken in the first
/// pass over them (the two threads' counting pass), where it costs no extra memory traffic.
pub fn radix_sort_checksummed<R: Record>(data: &mut [R], scratch: &mut [R]) -> (bool, Checksum) {
    let mut sum = Checksum::default();
    let in_scratch = sort_inner::<R, true>(data, scratch, &mut sum);
    (in_scratch, sum)
}

fn sort_inner<R: Record, const SUM: bool>(
    data: &mut [R],
    scratch: &mut [R],
    sum: &mut Checksum,
) -> bool {
    let n = data.len();
    assert!(scratch.len() >= n, "radix sort scratch is too small");
    let scratch = &mut scratch[..n];
    if n < MSD_THRESHOLD {
        if SUM {
            sum.add(data);
        }
        return lsd(data, scratch, R::KEY_BYTES);
    }
    let top = R::KEY_BYTES - 1;
    let (split, halves) = split_first_digit::<R, SUM>(data, scratch, top);
    sum.merge(&halves);
    let Some(count) = split else {
        sort_back(data, scratch, top - 1);
        return false;
    };
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
        scope.spawn(|| sort_buckets_into(scratch_a, data_a, &count[..split_bucket], top - 1));
        sort_buckets_into(scratch_b, data_b, &count[split_bucket..], top - 1);
    });
    false
}

/// The first MSD pass on two threads: each half of `data` is counted, then scattered into
/// its own share of every bucket of `scratch` (the first half's records before the second
/// half's in each bucket, so the pass stays stable). Returns the bucket sizes, or `None`
/// (and nothing moved) when every record falls into one bucket.
fn split_first_digit<R: Record, const SUM: bool>(
    data: &[R],
    scratch: &mut [R],
    digit: usize,
) -> (Option<[usize; RADIX]>, Checksum) {
    let n = data.len();
    let (first, second) = data.split_at(n / 2);
    let ((count_a, mut sum), (count_b, sum_b)) = std::thread::scope(|scope| {
        let a = scope.spawn(|| counted::<R, SUM>(first, digit));
        let b = counted::<R, SUM>(second, digit);
        (a.join().expect("invariant: a histogram does not panic"), b)
    });
    sum.merge(&sum_b);
    let count: [usize; RADIX] = std::array::from_fn(|b| count_a[b] + count_b[b]);
    if count.contains(&n) {
        return (None, sum);
    }
    // Carve scratch into the two halves' regions of every bucket, in bucket order.
    let mut rest = scratch;
    let mut regions_a = Vec::with_capacity(RADIX);
    let mut regions_b = Vec::with_capacity(RADIX);
    for b in 0..RADIX {
        let (a, tail) = std::mem::take(&mut rest).split_at_mut(count_a[b]);
        let (bb, tail) = tail.split_at_mut(count_b[b]);
        regions_a.push(a);
        regions_b.push(bb);
        rest = tail;
    }
    let (mut regions_a, mut regions_b) = (into_array(regions_a), into_array(regions_b));
    std::thread::scope(|scope| {
        scope.spawn(|| scatter_regions(first, &mut regions_a, 8 * digit));
        scatter_regions(second, &mut regions_b, 8 * digit);
    });
    (Some(count), sum)
}

/// The histogram of one digit, and (if `SUM`) the records' checksum, in one pass.
fn counted<R: Record, const SUM: bool>(data: &[R], digit: usize) -> ([usize; RADIX], Checksum) {
    if !SUM {
        return (histogram(data, digit), Checksum::default());
    }
    let mut count = [0usize; RADIX];
    let (mut add, mut xor) = (0u64, 0u64);
    for record in data {
        count[((record.key() >> (8 * digit)) & 0xff) as usize] += 1;
        let f = record.fingerprint();
        add = add.wrapping_add(f);
        xor ^= f;
    }
    let sum = Checksum {
        count: data.len() as u64,
        sum: add,
        xor,
    };
    (count, sum)
}

fn into_array<T>(v: Vec<T>) -> [T; RADIX] {
    v.try_into()
        .unwrap_or_else(|_| unreachable!("invariant: one region per bucket"))
}

/// Scatter `from` by the digit at `shift` into one region per digit value.
fn scatter_regions<R: Record>(from: &[R], regions: &mut [&mut [R]; RADIX], shift: usize) {
    let mut filled = [0usize; RADIX];
    for &record in from {
        let digit = ((record.key() >> shift) & 0xff) as usize;
        let slot = filled[digit];
        regions[digit][slot] = record;
        filled[digit] = slot + 1;
    }
}

/// Finish a small bucket: a stable comparison sort, or an unstable one where the key is the
/// whole record (the same bytes either way; pattern-defeating quicksort is faster here).
#[inline]
fn small_sort<R: Record>(data: &mut [R]) {
    if R::KEY_IS_RECORD {
        data.sort_unstable_by_key(Record::key);
    } else {
        data.sort_by_key(Record::key);
    }
}

fn histogram<R: Record>(data: &[R], digit: usize) -> [usize; RADIX] {
    let mut count = [0usize; RADIX];
    for record in data {
        count[((record.key() >> (8 * digit)) & 0xff) as usize] += 1;
    }
    count
}

fn scatter_by<R: Record>(from: &[R], to: &mut [R], count: &[usize; RADIX], digit: usize) {
    let mut offsets = [0usize; RADIX];
    let mut sum = 0;
    for (offset, &c) in offsets.iter_mut().zip(count.iter()) {
        *offset = sum;
        sum += c;
    }
    scatter(from, to, &mut offsets, 8 * digit);
}

/// Sort each bucket (held in `from`, sizes `counts`) by digits `0..=digit` into `to`.
fn sort_buckets_into<R: Record>(from: &mut [R], to: &mut [R], counts: &[usize], digit: usize) {
    let mut start = 0;
    for &c in counts {
        sort_into(
            &mut from[start..start + c],
            &mut to[start..start + c],
            digit,
        );
        start += c;
    }
}

/// `src` holds records equal above `digit`; sort them by digits `0..=digit` into `dst`
/// (`src` is scratch).
fn sort_into<R: Record>(src: &mut [R], dst: &mut [R], digit: usize) {
    let n = src.len();
    if n < SMALL {
        dst.copy_from_slice(src);
        small_sort(dst);
        return;
    }
    let count = histogram(src, digit);
    if count.contains(&n) {
        if digit == 0 {
            dst.copy_from_slice(src);
        } else {
            sort_into(src, dst, digit - 1);
        }
        return;
    }
    scatter_by(src, dst, &count, digit);
    if digit > 0 {
        let mut start = 0;
        for &c in &count {
            sort_back(
                &mut dst[start..start + c],
                &mut src[start..start + c],
                digit - 1,
            );
            start += c;
        }
    }
}

/// Sort `data` (records equal above `digit`) by digits `0..=digit` in place, `scratch`
/// beside it.
fn sort_back<R: Record>(data: &mut [R], scratch: &mut [R], digit: usize) {
    let n = data.len();
    if n < SMALL {
        small_sort(data);
        return;
    }
    let count = histogram(data, digit);
    if count.contains(&n) {
        if digit > 0 {
            sort_back(data, scratch, digit - 1);
        }
        return;
    }
    scatter_by(data, scratch, &count, digit);
    if digit == 0 {
        data.copy_from_slice(scratch);
        return;
    }
    let mut start = 0;
    for &c in &count {
        sort_into(
            &mut scratch[start..start + c],
            &mut data[start..start + c],
            digit - 1,
        );
        start += c;
    }
}

/// LSD radix sort on the `digits` low bytes; returns `true` when the result is in
/// `scratch`.
fn lsd<R: Record>(data: &mut [R], scratch: &mut [R], digits: usize) -> bool {
    let n = data.len();
    if n < 64 {
        small_sort(data);
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
        // Buckets above the threshold recurse: 2^21 keys in 256 buckets of 2^13... and a
        // skewed input whose top two bytes are constant and whose third splits.
        let huge: Vec<u64> = (0..1 << 21).map(|_| u64::random(&mut rng) >> 4).collect();
        check(huge.clone());
        check(
            huge.iter()
                .map(|k| k & 0xff_ffff_ffff)
                .collect::<Vec<u64>>(),
        );
        check(huge.iter().map(|k| (k & 0x3) << 40).collect::<Vec<u64>>());
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
