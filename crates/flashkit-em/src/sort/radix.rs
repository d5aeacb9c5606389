//! Run formation's in-memory sort: a radix sort on the key, 8 bits a digit, into a scratch
//! buffer and back.
//!
//! One most-significant-digit pass over the whole input (on two threads, fused with the
//! multiset checksum) splits it into 256 buckets in the scratch buffer; each bucket that
//! fits in the cache is then finished back into the input buffer by least-significant-digit
//! passes over just enough digits that records still equal in every sorted digit are rare,
//! and an insertion sort puts those few in order, and is checked for order while it is
//! still in the cache. For 16 M random 64-bit keys that is buckets of 64 K records, three
//! LSD passes inside L2 and an insertion sort that hardly moves anything: 8.6 ns a record on
//! two threads (145 ms), where finishing buckets by further MSD passes and a comparison sort
//! of the last few hundred records took 12.9 (217 ms; bench/RESULTS.md, "Run formation's
//! sort").
//!
//! Robust against any input: a digit whose values all fall into one bucket is skipped, and
//! when the insertion sort has moved records more places in all than the bucket has
//! records (many keys equal in the sorted digits), it stops and the groups of equal prefix
//! are finished by the same procedure on the digits below, so the cost stays O(n) per
//! digit. Every pass is stable, so records with equal keys keep their input order.

use crate::record::{Checksum, Record};

const RADIX: usize = 256;

/// Below this many records a whole input is sorted by LSD passes alone.
const MSD_THRESHOLD: usize = 1 << 16;

/// A bucket of at most this many bytes is finished by LSD passes (it and its scratch stay
/// in a core's 2 MiB L2); a larger one is split by another MSD pass first.
const FINISH_BYTES: usize = 1 << 20;

/// At most this many records: insertion sort, nothing else.
const INSERTION: usize = 32;

/// LSD digits of one finish at most: a bucket of `FINISH_BYTES` needs 3 (4-byte records,
/// 2^18 of them, and [`SLACK_BITS`] = 4), and `finish` dispatches up to this many.
const MAX_LSD: usize = 4;

/// An LSD finish sorts enough digits that `256^digits >= n * 2^SLACK_BITS`: the records
/// still equal in every sorted digit then number about `n / 2^SLACK_BITS` pairs at most,
/// and the insertion sort's branch is well predicted.
const SLACK_BITS: u32 = 4;

/// Sort `data` by key using `scratch` (at least as long). Returns `true` when the sorted
/// records ended up in `scratch` rather than in `data`.
pub fn radix_sort<R: Record>(data: &mut [R], scratch: &mut [R]) -> bool {
    sort_inner::<R, false>(data, scratch).in_scratch
}

/// What [`radix_sort_checksummed`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sorted {
    /// The sorted records are in `scratch` rather than in `data`.
    pub in_scratch: bool,
    /// The multiset checksum of the records.
    pub checksum: Checksum,
    /// The result was checked, bucket by bucket while each was still in the cache and
    /// across every boundary between buckets, and found in key order. `false` means a bug.
    pub in_order: bool,
}

/// [`radix_sort`], also returning the multiset checksum of the records, taken in the first
/// pass over them (the two threads' counting pass), where it costs no extra memory traffic,
/// and the verdict of a check of the whole result's order.
pub fn radix_sort_checksummed<R: Record>(data: &mut [R], scratch: &mut [R]) -> Sorted {
    sort_inner::<R, true>(data, scratch)
}

fn sort_inner<R: Record, const SUM: bool>(data: &mut [R], scratch: &mut [R]) -> Sorted {
    let n = data.len();
    assert!(scratch.len() >= n, "radix sort scratch is too small");
    let scratch = &mut scratch[..n];
    let mut sum = Checksum::default();
    if n < MSD_THRESHOLD {
        if SUM {
            sum.add(data);
        }
        let in_scratch = lsd(data, scratch, R::KEY_BYTES);
        let result = if in_scratch { &*scratch } else { &*data };
        return Sorted {
            in_scratch,
            checksum: sum,
            in_order: in_order(result, 0),
        };
    }
    let mut digit = R::KEY_BYTES - 1;
    let (first, second) = data.split_at(n / 2);
    let mut halves = count_halves::<R, SUM>(first, second, digit);
    sum.merge(&halves.checksum);
    if halves.total().contains(&n) {
        // The top digit is the same everywhere: split on the highest digit that varies.
        if halves.varying == 0 {
            // Every key is equal: sorted as it is.
            return Sorted {
                in_scratch: false,
                checksum: sum,
                in_order: in_order(data, 0),
            };
        }
        digit = (63 - halves.varying.leading_zeros()) as usize / 8;
        halves = count_halves::<R, false>(first, second, digit);
    }
    let count = halves.total();
    scatter_halves(first, second, scratch, &halves, digit);
    if digit == 0 {
        // Only the lowest digit varies: the scatter sorted everything.
        return Sorted {
            in_scratch: true,
            checksum: sum,
            in_order: in_order(scratch, 0),
        };
    }
    Sorted {
        in_scratch: false,
        checksum: sum,
        in_order: finish_on_two_threads(data, scratch, &count, digit - 1),
    }
}

/// Finish the buckets (sizes `count`, in `scratch`) by digits `digit..=0` back into `data`,
/// in two groups of whole buckets of about equal size, one per thread. Returns whether all
/// of `data` came out in order.
fn finish_on_two_threads<R: Record>(
    data: &mut [R],
    scratch: &mut [R],
    count: &[usize; RADIX],
    digit: usize,
) -> bool {
    let n = data.len();
    let (split_bucket, left) = halfway(count, n);
    let (scratch_a, scratch_b) = scratch.split_at_mut(left);
    let (data_a, data_b) = data.split_at_mut(left);
    let (ordered_a, ordered_b) = std::thread::scope(|scope| {
        let a =
            scope.spawn(|| finish_buckets_into(scratch_a, data_a, &count[..split_bucket], digit));
        let b = finish_buckets_into(scratch_b, data_b, &count[split_bucket..], digit);
        (
            a.join().expect("invariant: a sort thread does not panic"),
            b,
        )
    });
    // `left` is at most half of `n`: when it is not 0, a record follows it.
    let boundary = left == 0 || data[left - 1].key() <= data[left].key();
    ordered_a && ordered_b && boundary
}

/// Where the buckets (sizes `count`, `n` records in all) split into two groups of whole
/// buckets for two threads: the first group is the longest prefix of buckets holding at most
/// half of the records. Returns the first bucket of the second group and the records before
/// it.
fn halfway(count: &[usize; RADIX], n: usize) -> (usize, usize) {
    let mut split_bucket = 0;
    let mut left = 0;
    while split_bucket < RADIX && left + count[split_bucket] <= n / 2 {
        left += count[split_bucket];
        split_bucket += 1;
    }
    (split_bucket, left)
}

/// Whether `records` are in key order and none is below `previous`.
#[inline]
fn in_order<R: Record>(records: &[R], previous: u64) -> bool {
    let mut last = previous;
    let mut ordered = true;
    for record in records {
        let key = record.key();
        ordered &= last <= key;
        last = key;
    }
    ordered
}

/// The histograms of one digit over the two halves of the input, with the checksum (if
/// asked for) and the key bits that vary, all from one pass on two threads.
struct Halves {
    a: [usize; RADIX],
    b: [usize; RADIX],
    checksum: Checksum,
    /// Bits set in some key and clear in another.
    varying: u64,
}

impl Halves {
    fn total(&self) -> [usize; RADIX] {
        std::array::from_fn(|d| self.a[d] + self.b[d])
    }
}

fn count_halves<R: Record, const SUM: bool>(first: &[R], second: &[R], digit: usize) -> Halves {
    let ((a, mut checksum, or_a, and_a), (b, sum_b, or_b, and_b)) = std::thread::scope(|scope| {
        let a = scope.spawn(|| counted::<R, SUM>(first, digit));
        let b = counted::<R, SUM>(second, digit);
        (a.join().expect("invariant: a histogram does not panic"), b)
    });
    checksum.merge(&sum_b);
    Halves {
        a,
        b,
        checksum,
        varying: (or_a | or_b) ^ (and_a & and_b),
    }
}

/// The histogram of one digit, the records' checksum (if `SUM`), and the OR and AND of
/// every key, in one pass.
fn counted<R: Record, const SUM: bool>(
    data: &[R],
    digit: usize,
) -> ([usize; RADIX], Checksum, u64, u64) {
    let mut count = [0usize; RADIX];
    let (mut add, mut xor) = (0u64, 0u64);
    let (mut or, mut and) = (0u64, u64::MAX);
    for record in data {
        let key = record.key();
        count[((key >> (8 * digit)) & 0xff) as usize] += 1;
        or |= key;
        and &= key;
        if SUM {
            let f = record.fingerprint();
            add = add.wrapping_add(f);
            xor ^= f;
        }
    }
    let sum = if SUM {
        Checksum {
            count: data.len() as u64,
            sum: add,
            xor,
        }
    } else {
        Checksum::default()
    };
    (count, sum, or, and)
}

/// Scatter both halves by `digit` into `scratch` on two threads, each into its own share of
/// every bucket (the first half's records before the second half's, so the pass is stable).
fn scatter_halves<R: Record>(
    first: &[R],
    second: &[R],
    scratch: &mut [R],
    halves: &Halves,
    digit: usize,
) {
    let mut rest = scratch;
    let mut regions_a = Vec::with_capacity(RADIX);
    let mut regions_b = Vec::with_capacity(RADIX);
    for b in 0..RADIX {
        let (a, tail) = std::mem::take(&mut rest).split_at_mut(halves.a[b]);
        let (bb, tail) = tail.split_at_mut(halves.b[b]);
        regions_a.push(a);
        regions_b.push(bb);
        rest = tail;
    }
    let (mut regions_a, mut regions_b) = (into_array(regions_a), into_array(regions_b));
    std::thread::scope(|scope| {
        scope.spawn(|| scatter_regions(first, &mut regions_a, 8 * digit));
        scatter_regions(second, &mut regions_b, 8 * digit);
    });
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

/// Sort each bucket of `src` (sizes `counts`, each bucket's records equal above `digit`)
/// by digits `digit..=0` into the same place in `dst`, and check each right after it is
/// finished (while it is in the cache) and against the bucket before. Returns whether all
/// of `dst` came out in order.
fn finish_buckets_into<R: Record>(
    src: &mut [R],
    dst: &mut [R],
    counts: &[usize],
    digit: usize,
) -> bool {
    let mut start = 0;
    let mut ordered = true;
    let mut previous = 0;
    for &c in counts {
        if c == 0 {
            continue;
        }
        let out = &mut dst[start..start + c];
        finish_into(&mut src[start..start + c], out, digit);
        ordered &= in_order(out, previous);
        previous = out[c - 1].key();
        start += c;
    }
    ordered
}

/// Sort `src` (records equal above `digit`) stably by digits `digit..=0` into `dst` (as
/// long); `src` is left in any order.
fn finish_into<R: Record>(src: &mut [R], dst: &mut [R], digit: usize) {
    let n = src.len();
    match finish_plan(n, R::BYTES, digit) {
        Finish::Insertion => {
            dst.copy_from_slice(src);
            insertion_sort(dst);
        }
        Finish::Split => split_into(src, dst, digit),
        Finish::Lsd { digits, low } => {
            match digits {
                1 => lsd_passes_into::<R, 1>(src, dst, low),
                2 => lsd_passes_into::<R, 2>(src, dst, low),
                3 => lsd_passes_into::<R, 3>(src, dst, low),
                _ => lsd_passes_into::<R, MAX_LSD>(src, dst, low),
            }
            if low > 0 && !insertion_sort_bounded(dst, n) {
                finish_groups(dst, src, low);
            }
        }
    }
}

/// How [`finish_into`] finishes a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Finish {
    /// An insertion sort alone.
    Insertion,
    /// Too large for the cache: split by another MSD pass first.
    Split,
    /// LSD passes over `digits` digits from `low` up, then an insertion sort (when digits
    /// below `low` are left).
    Lsd { digits: usize, low: usize },
}

/// How to finish `n` records of `record_bytes` bytes each, equal above `digit`.
fn finish_plan(n: usize, record_bytes: usize, digit: usize) -> Finish {
    if n <= INSERTION {
        Finish::Insertion
    } else if n * record_bytes > FINISH_BYTES {
        Finish::Split
    } else {
        let digits = lsd_digits(n).min(digit + 1);
        Finish::Lsd {
            digits,
            low: digit + 1 - digits,
        }
    }
}

/// [`finish_into`] that leaves the result where it started.
fn finish_in_place<R: Record>(data: &mut [R], scratch: &mut [R], digit: usize) {
    finish_into(data, scratch, digit);
    data.copy_from_slice(scratch);
}

/// A bucket too large for the cache: one MSD pass by `digit` into `dst`, then each bucket
/// finished there in place.
fn split_into<R: Record>(src: &mut [R], dst: &mut [R], digit: usize) {
    let n = src.len();
    let count = histogram(src, digit);
    let below = digit.checked_sub(1);
    if count.contains(&n) {
        match below {
            Some(below) => finish_into(src, dst, below),
            None => dst.copy_from_slice(src),
        }
        return;
    }
    let mut offsets = [0usize; RADIX];
    let mut sum = 0;
    for (offset, &c) in offsets.iter_mut().zip(count.iter()) {
        *offset = sum;
        sum += c;
    }
    scatter(src, dst, &mut offsets, 8 * digit);
    if let Some(below) = below {
        let mut start = 0;
        for &c in &count {
            if c > 1 {
                finish_in_place(
                    &mut dst[start..start + c],
                    &mut src[start..start + c],
                    below,
                );
            }
            start += c;
        }
    }
}

/// Digits an LSD finish of `n` records sorts (see [`SLACK_BITS`]), at most [`MAX_LSD`].
fn lsd_digits(n: usize) -> usize {
    let bits = usize::BITS - (n - 1).leading_zeros() + SLACK_BITS;
    (bits.div_ceil(8) as usize).clamp(1, MAX_LSD)
}

/// Sort `src` stably by the `D` digits from `low` up into `dst` (a digit whose values all
/// fall into one bucket is skipped). The passes alternate between the two buffers starting
/// from `src`, so an odd number of them (three, for the 64 K-record buckets of a random
/// run) ends in `dst` with no copy.
fn lsd_passes_into<R: Record, const D: usize>(src: &mut [R], dst: &mut [R], low: usize) {
    let n = src.len();
    let mut counts = [[0u32; RADIX]; D];
    for record in src.iter() {
        let key = record.key() >> (8 * low);
        for (d, count) in counts.iter_mut().enumerate() {
            count[((key >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    let mut in_dst = false;
    for (d, count) in counts.iter().enumerate() {
        if count.contains(&(n as u32)) {
            continue;
        }
        let mut offsets = [0usize; RADIX];
        let mut sum = 0;
        for (offset, &c) in offsets.iter_mut().zip(count.iter()) {
            *offset = sum;
            sum += c as usize;
        }
        let shift = 8 * (low + d);
        if in_dst {
            scatter(dst, src, &mut offsets, shift);
        } else {
            scatter(src, dst, &mut offsets, shift);
        }
        in_dst = !in_dst;
    }
    if !in_dst {
        dst.copy_from_slice(src);
    }
}

/// `data` is sorted by the digits from `low` up; sort each run of records equal in those
/// digits by the digits below.
fn finish_groups<R: Record>(data: &mut [R], scratch: &mut [R], low: usize) {
    let shift = 8 * low;
    let digit = low - 1;
    let n = data.len();
    let mut start = 0;
    while start < n {
        let prefix = data[start].key() >> shift;
        let mut end = start + 1;
        while end < n && data[end].key() >> shift == prefix {
            end += 1;
        }
        if end - start > 1 {
            finish_in_place(&mut data[start..end], &mut scratch[start..end], digit);
        }
        start = end;
    }
}

/// Stable insertion sort by key.
fn insertion_sort<R: Record>(data: &mut [R]) {
    insertion_sort_bounded(data, usize::MAX);
}

/// Stable insertion sort by key that gives up (returning `false`, every record still
/// present and no two records of different prefix reordered) once it has moved records
/// more than `budget` places in all.
#[inline]
fn insertion_sort_bounded<R: Record>(data: &mut [R], budget: usize) -> bool {
    let mut moved = 0usize;
    for i in 1..data.len() {
        let record = data[i];
        let key = record.key();
        if key >= data[i - 1].key() {
            continue;
        }
        let mut j = i - 1;
        while j > 0 && data[j - 1].key() > key {
            j -= 1;
        }
        data.copy_within(j..i, j + 1);
        data[j] = record;
        moved += i - j;
        if moved > budget {
            return false;
        }
    }
    true
}

fn histogram<R: Record>(data: &[R], digit: usize) -> [usize; RADIX] {
    let mut count = [0usize; RADIX];
    for record in data {
        count[((record.key() >> (8 * digit)) & 0xff) as usize] += 1;
    }
    count
}

/// LSD radix sort on the `digits` low bytes; returns `true` when the result is in
/// `scratch`.
fn lsd<R: Record>(data: &mut [R], scratch: &mut [R], digits: usize) -> bool {
    let n = data.len();
    if n < 64 {
        insertion_sort(data);
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
        // Not `assert_eq!`: printing a million keys makes a failure look like a hang.
        assert!(
            data.iter()
                .map(Record::key)
                .eq(expected.iter().map(Record::key)),
            "{} records not sorted",
            data.len()
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

    /// Every path of the sort, checked against std's stable sort on whole records (so a
    /// key+payload record with its index as payload also checks stability): LSD finishes
    /// whose insertion sort has nothing to do, buckets whose sorted digits are constant or
    /// nearly so (the insertion sort's budget runs out and groups are finished by the digits
    /// below), buckets too large for the cache, and inputs whose top digits never vary.
    #[test]
    fn every_path_agrees_with_a_stable_comparison_sort() {
        let mut rng = SimRng::for_stream(2, "radix-paths");
        let n = 1 << 18;
        let random: Vec<u64> = (0..n).map(|_| u64::random(&mut rng)).collect();
        type Shape = Box<dyn Fn(u64, usize) -> u64>;
        let shapes: Vec<(&str, Shape)> = vec![
            ("random", Box::new(|r, _| r)),
            // Bytes 6..4 constant: the LSD digits are all skipped and the insertion sort
            // would be quadratic on the random low half.
            ("hollow middle", Box::new(|r, _| r & 0xff00_0000_ffff_ffff)),
            // Bytes 6..4 take 16 values: groups of thousands below them.
            ("few middles", Box::new(|r, _| r & 0xff00_000f_ffff_ffff)),
            // 90% of the keys in one top bucket, far larger than the cache.
            (
                "one huge bucket",
                Box::new(|r, i| if i % 10 == 0 { r } else { r >> 8 }),
            ),
            // 90% of the keys in one top bucket, equal in every digit but the lowest two
            // and in the second lowest too: bucket splits meet digits that do not vary.
            (
                "one huge bucket, one middle",
                Box::new(|r, i| if i % 10 == 0 { r } else { 0x4200 | (r & 0xff) }),
            ),
            (
                "one huge bucket, one key",
                Box::new(|r, i| if i % 10 == 0 { r } else { 0x4200 }),
            ),
            // The top three bytes never vary.
            ("narrow", Box::new(|r, _| r >> 24)),
            // Many duplicates.
            ("duplicates", Box::new(|r, _| (r % 1000) << 40)),
            ("all equal", Box::new(|_, _| 42)),
            ("sorted", Box::new(|_, i| i as u64 * 3)),
            ("reversed", Box::new(|_, i| u64::MAX - i as u64)),
        ];
        for (name, shape) in &shapes {
            let records: Vec<KeyPayload> = random
                .iter()
                .enumerate()
                .map(|(i, &r)| KeyPayload {
                    key: shape(r, i),
                    payload: i as u64,
                })
                .collect();
            let mut expected = records.clone();
            expected.sort_by_key(|r| r.key);
            let mut data = records.clone();
            let mut scratch = vec![KeyPayload::default(); n];
            let result = radix_sort_checksummed(&mut data, &mut scratch);
            assert!(result.in_order, "{name}: the sort's own check failed");
            let sum = result.checksum;
            let sorted = if result.in_scratch { &scratch } else { &data };
            assert!(*sorted == expected, "{name}: not the stable order");
            let mut input_sum = Checksum::default();
            input_sum.add(&records);
            assert_eq!(sum, input_sum, "{name}: checksum");
            let mut keys: Vec<u64> = records.iter().map(|r| r.key).collect();
            let mut expected_keys = keys.clone();
            expected_keys.sort_unstable();
            radix_sort_in_place(&mut keys, &mut vec![0; n]);
            assert!(keys == expected_keys, "{name}: u64");
        }
    }

    /// Inputs of every size around the thresholds (the LSD-only small sort, the insertion
    /// sort, the MSD split).
    #[test]
    fn sizes_around_every_threshold() {
        let mut rng = SimRng::for_stream(3, "radix-sizes");
        for n in [
            0,
            1,
            2,
            INSERTION,
            INSERTION + 1,
            63,
            64,
            MSD_THRESHOLD - 1,
            MSD_THRESHOLD,
            MSD_THRESHOLD + 1,
            FINISH_BYTES / 8 * 256 + 1,
        ] {
            check((0..n).map(|_| u64::random(&mut rng)).collect::<Vec<u64>>());
            check((0..n).map(|_| u32::random(&mut rng)).collect::<Vec<u32>>());
        }
    }

    #[test]
    fn in_order_sees_any_descent_and_the_previous_key() {
        assert!(in_order::<u64>(&[], 5));
        assert!(in_order(&[1u64, 1, 2, 9], 0));
        assert!(in_order(&[1u64, 1, 2, 9], 1));
        assert!(!in_order(&[1u64, 1, 2, 9], 2));
        assert!(!in_order(&[1u64, 3, 2, 9], 0));
        assert!(!in_order(&[1u64, 2, 9, 8], 0));
    }

    #[test]
    fn the_two_threads_take_whole_buckets_up_to_half_the_records() {
        let mut count = [0usize; RADIX];
        count[..3].copy_from_slice(&[3, 2, 5]);
        assert_eq!(halfway(&count, 10), (2, 5), "exactly half");
        count[1] = 3;
        assert_eq!(
            halfway(&count, 11),
            (1, 3),
            "the next bucket would pass half"
        );
        let mut late = [0usize; RADIX];
        late[7] = 10;
        late[8] = 1;
        assert_eq!(
            halfway(&late, 11),
            (7, 0),
            "a bucket over half: empty ones before it"
        );
        late[7] = 0;
        late[255] = 10;
        assert_eq!(halfway(&late, 11), (255, 1));
        assert_eq!(halfway(&[0; RADIX], 0), (RADIX, 0), "nothing to split");
        assert_eq!(halfway(&[1; RADIX], RADIX), (RADIX / 2, RADIX / 2));
    }

    /// The sort checks its own result; the check fires when buckets come out of order (as
    /// they would if the scatter misplaced records), within either thread's group or across
    /// the two, and accepts equal keys on each side of a boundary.
    #[test]
    fn the_order_check_fires_on_buckets_out_of_order() {
        // Buckets given as (smallest key, records), each record a distinct key from the
        // smallest up, reversed; 16-bit keys finished by digits 1 and 0.
        let finish = |buckets: &[(u64, usize)]| {
            let mut scratch: Vec<u64> = buckets
                .iter()
                .flat_map(|&(base, len)| (0..len as u64).rev().map(move |i| base + i))
                .collect();
            let n = scratch.len();
            let mut data = vec![0u64; n];
            let mut count = [0usize; RADIX];
            for (c, &(_, len)) in count.iter_mut().zip(buckets) {
                *c = len;
            }
            let ordered = finish_on_two_threads(&mut data, &mut scratch, &count, 1);
            let mut start = 0;
            for &(base, len) in buckets {
                let bucket = &data[start..start + len];
                assert!(bucket.iter().zip(base..).all(|(&k, want)| k == want));
                start += len;
            }
            ordered
        };
        let four = |bases: [u64; 4]| finish(&bases.map(|b| (b, 100)));
        assert!(four([0, 1000, 2000, 3000]));
        assert!(!four([1000, 0, 2000, 3000]), "the first group out of order");
        assert!(
            !four([0, 1000, 3000, 2000]),
            "the second group out of order"
        );
        assert!(!four([2000, 3000, 0, 1000]), "the groups out of order");
        assert!(four([0, 99, 198, 297]), "equal keys at every boundary");
        // A first bucket over half: one group, empty, and no boundary to check.
        assert!(finish(&[(0, 300), (300, 100)]));
        assert!(!finish(&[(100, 300), (0, 100)]));
    }

    /// An LSD finish sorts the fewest digits with `256^digits >= n * 2^SLACK_BITS`, one at
    /// least and `MAX_LSD` at most.
    #[test]
    fn lsd_finishes_sort_enough_digits_to_leave_few_ties() {
        for n in (1..=1usize << 22)
            .step_by(997)
            .chain([1, 2, 16, 17, 4096, 4097, 1 << 20])
        {
            let need = (n as u128) << SLACK_BITS;
            let want = (1..=MAX_LSD)
                .find(|&d| 256u128.pow(d as u32) >= need)
                .unwrap_or(MAX_LSD);
            assert_eq!(lsd_digits(n), want, "{n} records");
        }
        assert_eq!(
            lsd_digits(1 << 18),
            3,
            "a bucket of FINISH_BYTES in 4-byte records"
        );
        assert_eq!(lsd_digits(1 << 28), MAX_LSD);
    }

    /// Each bucket's path: an insertion sort up to `INSERTION` records, LSD passes up to
    /// `FINISH_BYTES` (3 digits for 2^18 4-byte records, never more than the digits left),
    /// another MSD split above.
    #[test]
    fn buckets_are_finished_by_their_size() {
        use Finish::*;
        assert_eq!(finish_plan(0, 8, 7), Insertion);
        assert_eq!(finish_plan(INSERTION, 8, 7), Insertion);
        assert_eq!(finish_plan(INSERTION + 1, 8, 7), Lsd { digits: 2, low: 6 });
        assert_eq!(finish_plan(INSERTION + 1, 8, 0), Lsd { digits: 1, low: 0 });
        assert_eq!(finish_plan(1 << 18, 4, 3), Lsd { digits: 3, low: 1 });
        assert_eq!(finish_plan(1 << 18, 4, 1), Lsd { digits: 2, low: 0 });
        assert_eq!(finish_plan((1 << 18) + 1, 4, 3), Split);
        assert_eq!(
            finish_plan(FINISH_BYTES / 16, 16, 7),
            Lsd { digits: 3, low: 5 }
        );
        assert_eq!(finish_plan(FINISH_BYTES / 16 + 1, 16, 7), Split);
    }

    /// Below `MSD_THRESHOLD` records the sort is LSD passes alone: over keys whose three low
    /// digits vary, three of them, ending in the scratch buffer; from the threshold on, an
    /// MSD pass into the scratch buffer and buckets finished back; below 64 records an
    /// insertion sort in place.
    #[test]
    fn small_inputs_are_sorted_by_lsd_passes_alone() {
        let mut rng = SimRng::for_stream(4, "radix-small");
        for n in [63, 64, MSD_THRESHOLD - 1, MSD_THRESHOLD] {
            let mut data: Vec<u64> = (0..n).map(|_| u64::random(&mut rng) & 0xff_ffff).collect();
            let mut expected = data.clone();
            expected.sort_unstable();
            let mut scratch = vec![0; n];
            let in_scratch = radix_sort(&mut data, &mut scratch);
            // Below 64 records an insertion sort in place.
            assert_eq!(in_scratch, (64..MSD_THRESHOLD).contains(&n), "{n} records");
            assert!(if in_scratch {
                scratch == expected
            } else {
                data == expected
            });
        }
    }

    /// The bounded insertion sort counts the places it moves records and gives up once they
    /// pass the budget, every record still there.
    #[test]
    fn the_insertion_sort_gives_up_past_its_budget() {
        let run = |keys: &[u64], budget: usize| {
            let mut data = keys.to_vec();
            let done = insertion_sort_bounded(&mut data, budget);
            let mut sorted = data.clone();
            sorted.sort_unstable();
            let mut expected = keys.to_vec();
            expected.sort_unstable();
            assert_eq!(sorted, expected, "a record lost");
            if done {
                assert_eq!(data, expected);
            }
            done
        };
        // 3, 2, 1: one place for the 2, two for the 1.
        assert!(!run(&[3, 2, 1], 2));
        assert!(run(&[3, 2, 1], 3));
        // 1, 3, 2: one place for the 2, which stops at the 1.
        assert!(run(&[1, 3, 2], 1));
        assert!(!run(&[1, 3, 2], 0));
        assert!(run(&[5, 5, 5], 0), "equal keys do not move");
        assert!(run(&[], 0));
    }

    /// One pass on two threads gives each half's histogram of the digit, and the key bits
    /// that vary across both halves (set in one key and clear in another).
    #[test]
    fn the_counting_pass_finds_each_halfs_histogram_and_the_varying_bits() {
        let first = [0x0100_0000_0000_00f0u64, 0x0100_0000_0000_0af0];
        // The halves' ANDs differ (in bit 0), so joining them by anything but `&` shows.
        let second = [
            0x0100_0000_0000_00f1u64,
            0x0100_0000_0001_00f1,
            0x0100_0000_0000_0af1,
        ];
        let halves = count_halves::<u64, true>(&first, &second, 1);
        let (mut a, mut b) = ([0; RADIX], [0; RADIX]);
        a[0x00] = 1;
        a[0x0a] = 1;
        b[0x00] = 2;
        b[0x0a] = 1;
        assert_eq!((halves.a, halves.b), (a, b));
        assert_eq!(halves.varying, 0x0001_0a01);
        let mut sum = Checksum::default();
        sum.add(&first);
        sum.add(&second);
        assert_eq!(halves.checksum, sum);
        assert_eq!(
            count_halves::<u64, false>(&first, &second, 1).checksum,
            Checksum::default()
        );
        let same = count_halves::<u64, false>(&first[..1], &first[..1], 7);
        assert_eq!((same.varying, same.a[1], same.b[1]), (0, 1, 1));
        let one_side = count_halves::<u64, false>(&first, &[], 0);
        assert_eq!(one_side.varying, 0x0a00);
        let other_side = count_halves::<u64, false>(&[], &first, 0);
        assert_eq!(other_side.varying, 0x0a00);
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
