//! Per-request latency under the serial cost model.
//!
//! A request's service time is the cost of the flash operations it caused, garbage
//! collection included, at the device's read, program and erase latencies: the serial model
//! the papers use, applied to one request. This is what makes a host write that triggers a
//! collection slow, and so what tail latency shows; queueing and parallelism are not modelled.
//!
//! Latencies are kept in a log-linear histogram: eight buckets per power of two (12.5%
//! resolution), no allocation per request, exact count, sum and maximum.

use serde::Serialize;

const SUB_BUCKETS: u32 = 8;
const BUCKETS: usize = 64 * SUB_BUCKETS as usize;

/// A histogram of nanosecond latencies.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    counts: Box<[u64; BUCKETS]>,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

/// The bucket of `ns`: values below 8 have their own bucket; above, the exponent and the
/// three bits after the leading one.
fn bucket(ns: u64) -> usize {
    if ns < u64::from(SUB_BUCKETS) {
        return ns as usize;
    }
    let exponent = 63 - ns.leading_zeros();
    let mantissa = (ns >> (exponent - 3)) & u64::from(SUB_BUCKETS - 1);
    ((exponent - 2) * SUB_BUCKETS) as usize + mantissa as usize
}

/// The largest value that falls in bucket `index`.
fn upper_bound(index: usize) -> u64 {
    if index < SUB_BUCKETS as usize {
        return index as u64;
    }
    let exponent = index as u32 / SUB_BUCKETS + 2;
    let mantissa = index as u64 % u64::from(SUB_BUCKETS);
    let base = (u64::from(SUB_BUCKETS) + mantissa) << (exponent - 3);
    base + (1u64 << (exponent - 3)) - 1
}

impl LatencyHistogram {
    /// Count one request of `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket(ns)] += 1;
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// The smallest bucket bound at or below which `fraction` of the requests fall.
    fn quantile(&self, fraction: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let target = ((self.count as f64 * fraction).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= target {
                return upper_bound(index).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// The summary that goes into a report.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            requests: self.count,
            mean_ns: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64
            },
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            p999_ns: self.quantile(0.999),
            max_ns: self.max_ns,
            histogram: self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(index, &n)| (upper_bound(index).min(self.max_ns), n))
                .collect(),
        }
    }
}

/// Latency figures of one kind of request. Quantiles are bucket bounds (at most 12.5% above
/// the true value); the mean and maximum are exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    /// Requests counted.
    pub requests: u64,
    /// Mean service time.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// Non-empty buckets as (upper bound in ns, requests), ascending: a CDF's points.
    pub histogram: Vec<(u64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_with_bounded_error() {
        for ns in [
            0u64,
            1,
            7,
            8,
            9,
            15,
            16,
            100,
            999,
            200_000,
            2_000_000,
            u64::MAX / 3,
        ] {
            let index = bucket(ns);
            assert!(upper_bound(index) >= ns, "{ns}");
            assert!(
                index == 0 || upper_bound(index - 1) < ns,
                "{ns} belongs to an earlier bucket"
            );
            assert!(upper_bound(index) as f64 <= ns as f64 * 1.125 + 1.0, "{ns}");
        }
    }

    #[test]
    fn quantiles_mean_and_max() {
        let mut h = LatencyHistogram::default();
        for _ in 0..98 {
            h.record(200_000);
        }
        h.record(5_000_000);
        h.record(9_000_000);
        let s = h.summary();
        assert_eq!(s.requests, 100);
        assert_eq!(s.max_ns, 9_000_000);
        assert!((200_000..=225_000).contains(&s.p50_ns), "{}", s.p50_ns);
        assert!((5_000_000..=5_625_000).contains(&s.p99_ns), "{}", s.p99_ns);
        assert!((s.mean_ns - 336_000.0).abs() < 1.0);
        assert_eq!(s.histogram.iter().map(|h| h.1).sum::<u64>(), 100);
        assert_eq!(LatencyHistogram::default().summary().p99_ns, 0);
    }

    /// The bucket bound of `ns` computed another way: below 8 the value itself; above, the
    /// value with every bit below its leading four set (eight buckets per power of two).
    fn reference_bound(ns: u64) -> u64 {
        if ns < 8 {
            return ns;
        }
        let exponent = 63 - ns.leading_zeros();
        ns | ((1u64 << (exponent - 3)) - 1)
    }

    #[test]
    fn every_figure_matches_a_reference_computed_from_the_sorted_values() {
        use flashkit_core::{SimRng, SimRngExt};
        use rand::Rng;
        for seed in 0..40u64 {
            let mut rng = SimRng::for_stream(seed, "latency");
            let n = rng.random_range(1..400usize);
            let top = rng.random_range(1..64u32);
            let values: Vec<u64> = (0..n)
                .map(|_| {
                    let bits = rng.random_range(0..=top);
                    rng.random::<u64>() >> (64 - bits.max(1)) >> u32::from(bits == 0)
                })
                .collect();
            let mut h = LatencyHistogram::default();
            for &v in &values {
                h.record(v);
            }
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let max = *sorted.last().expect("not empty");
            let quantile = |fraction: f64| {
                let target = ((n as f64 * fraction).ceil() as usize).max(1);
                reference_bound(sorted[target - 1]).min(max)
            };
            let mut histogram: Vec<(u64, u64)> = Vec::new();
            for &v in &sorted {
                let bound = reference_bound(v).min(max);
                match histogram.last_mut() {
                    Some(last) if last.0 == bound => last.1 += 1,
                    _ => histogram.push((bound, 1)),
                }
            }
            let sum: u128 = values.iter().map(|&v| u128::from(v)).sum();
            let want = LatencySummary {
                requests: n as u64,
                mean_ns: sum as f64 / n as f64,
                p50_ns: quantile(0.50),
                p90_ns: quantile(0.90),
                p99_ns: quantile(0.99),
                p999_ns: quantile(0.999),
                max_ns: max,
                histogram,
            };
            assert_eq!(h.summary(), want, "seed {seed}");
        }
    }
}
