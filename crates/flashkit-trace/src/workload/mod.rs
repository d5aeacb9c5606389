//! Seeded workload generators.
//!
//! A [`WorkloadSpec`] describes where requests fall ([`Pattern`]), how big they are
//! ([`SizeDist`]), the read/trim mix, alignment and pacing; [`Workload::new`] validates it
//! and yields requests. The same spec and seed always give the same requests.
//!
//! Patterns:
//! - `uniform`: every aligned offset equally likely.
//! - `sequential`: one stream from offset 0, wrapping at the end of the span.
//! - `zipf`: Zipf-distributed popularity with exponent `theta` over aligned offsets; ranks
//!   are scattered over the span by a fixed permutation (YCSB's "scrambled Zipfian"), so
//!   popular pages are not all neighbours.
//! - `hot-cold`: `access_percent` of requests go to the first `space_percent` of the span,
//!   the rest anywhere in the span, hot part included (so 80/20 sends 84% of requests to the
//!   hot fifth).
//! - `gaussian`: offsets normally distributed around `center` (a fraction of the span) with
//!   standard deviation `stddev` (also a fraction); the fat-list paper's skewed keys.
//! - `camera`: a digital camera filling a FAT16 card ([`camera`], the model of the FAST
//!   paper's cameras, patterns A and B): photos written in large sequential chunks, each
//!   chunk followed by single-sector updates of its FAT entries in both FAT copies, a
//!   directory entry per photo, and a format of the card when it is full. Its sectors are
//!   the workload's alignment unit; it only writes.
//!
//! [`fast`] holds the FAST paper's patterns A-E and its section 3.5 hot-block workloads,
//! which `flashkit reproduce fast` runs.

pub mod camera;
pub mod fast;

use self::camera::{CameraModel, FatCamera};
use crate::{Op, Request, TraceError};
use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;
use rand_distr::{Distribution, Normal, Zipf};
use serde::{Deserialize, Serialize};

/// Gaussian draws tried before a start outside the span is clamped to the nearest valid one.
const GAUSSIAN_DRAWS: u32 = 1000;

/// Where requests fall.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Pattern {
    /// Uniformly random aligned offsets.
    Uniform,
    /// One sequential stream that wraps.
    Sequential,
    /// Scrambled Zipf with exponent `theta` (> 0; 0.99 is YCSB's default).
    Zipf {
        /// Skew exponent.
        theta: f64,
    },
    /// `access_percent` of requests to the first `space_percent` of the span; the others
    /// uniformly over the whole span, the hot part included.
    HotCold {
        /// Share of requests that go to the hot region, in percent.
        access_percent: f64,
        /// Size of the hot region, in percent of the span.
        space_percent: f64,
    },
    /// Normally distributed offsets.
    Gaussian {
        /// Mean, as a fraction of the span (0.5 is the middle).
        center: f64,
        /// Standard deviation, as a fraction of the span.
        stddev: f64,
    },
    /// A digital camera filling a FAT16 card, in sectors of the alignment ([`camera`]).
    Camera(CameraModel),
}

impl Pattern {
    /// The pattern's name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Pattern::Uniform => "uniform",
            Pattern::Sequential => "sequential",
            Pattern::Zipf { .. } => "zipf",
            Pattern::HotCold { .. } => "hot-cold",
            Pattern::Gaussian { .. } => "gaussian",
            Pattern::Camera(_) => "camera",
        }
    }
}

/// Request sizes in bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SizeDist {
    /// Every request the same size.
    Fixed {
        /// Bytes.
        bytes: u32,
    },
    /// Uniform over aligned sizes in `[min_bytes, max_bytes]`.
    Uniform {
        /// Smallest size.
        min_bytes: u32,
        /// Largest size.
        max_bytes: u32,
    },
    /// A weighted choice, as `(bytes, weight)` pairs.
    Choice {
        /// Sizes and their relative weights.
        sizes: Vec<(u32, u32)>,
    },
}

/// A complete workload description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Where requests fall.
    pub pattern: Pattern,
    /// How big they are.
    pub size: SizeDist,
    /// How big reads are, where they differ from `size` (which then sizes writes and trims).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_size: Option<SizeDist>,
    /// Number of requests.
    pub requests: u64,
    /// Address space covered, bytes from offset 0.
    pub span_bytes: u64,
    /// Share of requests that are reads, 0 to 1.
    #[serde(default)]
    pub read_fraction: f64,
    /// Share of requests that are trims, 0 to 1.
    #[serde(default)]
    pub trim_fraction: f64,
    /// Offsets and sizes are multiples of this (default 4096).
    #[serde(default = "default_align")]
    pub align_bytes: u32,
    /// Time between consecutive requests, nanoseconds.
    #[serde(default)]
    pub interarrival_ns: u64,
}

fn default_align() -> u32 {
    4096
}

impl WorkloadSpec {
    /// A workload of `requests` fixed-size requests over `span_bytes`, all writes.
    pub fn new(pattern: Pattern, size: SizeDist, requests: u64, span_bytes: u64) -> Self {
        WorkloadSpec {
            pattern,
            size,
            read_size: None,
            requests,
            span_bytes,
            read_fraction: 0.0,
            trim_fraction: 0.0,
            align_bytes: default_align(),
            interarrival_ns: 0,
        }
    }

    /// A canonical text of the spec, for digests. A spec without read sizes reads as it did
    /// before they existed, so the digests of earlier workloads (and reports) stay the same.
    pub fn canonical(&self) -> String {
        let text = format!("{self:?}");
        match self.read_size {
            None => text.replacen(", read_size: None", "", 1),
            Some(_) => text,
        }
    }

    /// Refuse a workload that cannot be generated (what [`Workload::new`] checks first).
    pub fn validate(&self) -> Result<(), TraceError> {
        let fail = |why: String| Err(TraceError::Spec(why));
        if self.requests == 0 {
            // Nothing would run, and every per-request figure would be 0 / 0.
            return fail("0 requests: a workload needs at least one".into());
        }
        let align = u64::from(self.align_bytes);
        if self.align_bytes == 0 || !self.align_bytes.is_power_of_two() {
            return fail(format!(
                "alignment {} B is not a power of two",
                self.align_bytes
            ));
        }
        if self.span_bytes < align || !self.span_bytes.is_multiple_of(align) {
            return fail(format!(
                "span {} B is not a non-zero multiple of the {align} B alignment",
                self.span_bytes
            ));
        }
        for (name, value) in [
            ("read_fraction", self.read_fraction),
            ("trim_fraction", self.trim_fraction),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return fail(format!("{name} {value} is not between 0 and 1"));
            }
        }
        if self.read_fraction + self.trim_fraction > 1.0 {
            return fail("read_fraction + trim_fraction exceeds 1".into());
        }
        // The last request's time must fit a nanosecond count (2^64 ns is 584 years).
        if self
            .requests
            .saturating_sub(1)
            .checked_mul(self.interarrival_ns)
            .is_none()
        {
            return fail(format!(
                "{} requests {} ns apart end past 2^64 ns (584 years)",
                self.requests, self.interarrival_ns
            ));
        }
        // The camera's writes are sized by its model, not by `size`, which then sizes
        // nothing; a camera whose sector (the alignment) is refused should hear so, not that
        // the unused request sizes do not fit it.
        if !matches!(self.pattern, Pattern::Camera(_)) {
            Self::validate_sizes(&self.size, "request", align, self.span_bytes)?;
            if let Some(read_size) = &self.read_size {
                Self::validate_sizes(read_size, "read", align, self.span_bytes)?;
            }
        }
        self.validate_pattern()
    }

    fn validate_sizes(
        dist: &SizeDist,
        what: &str,
        align: u64,
        span_bytes: u64,
    ) -> Result<(), TraceError> {
        let fail = |why: String| Err(TraceError::Spec(why));
        let sizes: Vec<u32> = match dist {
            SizeDist::Fixed { bytes } => vec![*bytes],
            SizeDist::Uniform {
                min_bytes,
                max_bytes,
            } => {
                if min_bytes > max_bytes {
                    return fail(format!(
                        "{what} size range {min_bytes}..{max_bytes} is empty"
                    ));
                }
                vec![*min_bytes, *max_bytes]
            }
            SizeDist::Choice { sizes } => {
                if sizes.is_empty() || sizes.iter().all(|&(_, w)| w == 0) {
                    return fail(format!(
                        "{what} size choice has no sizes with a positive weight"
                    ));
                }
                sizes.iter().map(|&(bytes, _)| bytes).collect()
            }
        };
        for bytes in sizes {
            if bytes == 0 || u64::from(bytes) % align != 0 {
                return fail(format!(
                    "{what} size {bytes} B is not a positive multiple of {align} B"
                ));
            }
            if u64::from(bytes) > span_bytes {
                return fail(format!(
                    "{what} size {bytes} B exceeds the {span_bytes} B span"
                ));
            }
        }
        Ok(())
    }

    fn validate_pattern(&self) -> Result<(), TraceError> {
        let fail = |why: String| Err(TraceError::Spec(why));
        let percent = |name: &str, value: f64| {
            if value.is_finite() && (0.0..=100.0).contains(&value) {
                Ok(())
            } else {
                Err(TraceError::Spec(format!(
                    "{name} {value} is not a percentage"
                )))
            }
        };
        match &self.pattern {
            Pattern::Zipf { theta } if !(theta.is_finite() && *theta > 0.0) => {
                fail(format!("zipf theta {theta} must be positive"))
            }
            Pattern::HotCold {
                access_percent,
                space_percent,
            } => {
                percent("access_percent", *access_percent)?;
                percent("space_percent", *space_percent)?;
                if *space_percent <= 0.0 {
                    return fail("space_percent must be above 0".into());
                }
                Ok(())
            }
            Pattern::Gaussian { center, stddev } => {
                if !((0.0..=1.0).contains(center) && *stddev > 0.0 && *stddev <= 1.0) {
                    return fail(format!(
                        "gaussian center {center} / stddev {stddev} out of range (center in \
                         [0, 1], stddev in (0, 1], fractions of the span)"
                    ));
                }
                Ok(())
            }
            Pattern::Camera(model) => model.validate(u64::from(self.align_bytes), self.span_bytes),
            _ => Ok(()),
        }
    }
}

/// A validated workload, yielding requests.
pub struct Workload {
    spec: WorkloadSpec,
    rng: SimRng,
    emitted: u64,
    units: u64,
    cursor: u64,
    zipf: Option<Zipf<f64>>,
    scramble: u64,
    normal: Option<Normal<f64>>,
    camera: Option<FatCamera>,
}

impl Workload {
    /// Validate `spec` and start generating with `seed`.
    pub fn new(spec: WorkloadSpec, seed: u64) -> Result<Self, TraceError> {
        spec.validate()?;
        let units = spec.span_bytes / u64::from(spec.align_bytes);
        let zipf = match spec.pattern {
            Pattern::Zipf { theta } => Some(
                Zipf::new(units as f64, theta)
                    .map_err(|e| TraceError::Spec(format!("zipf: {e}")))?,
            ),
            _ => None,
        };
        let normal = match spec.pattern {
            Pattern::Gaussian { center, stddev } => Some(
                Normal::new(center * units as f64, stddev * units as f64)
                    .map_err(|e| TraceError::Spec(format!("gaussian: {e}")))?,
            ),
            _ => None,
        };
        let camera = match spec.pattern {
            Pattern::Camera(model) => {
                Some(FatCamera::new(model, u64::from(spec.align_bytes), units)?)
            }
            _ => None,
        };
        Ok(Workload {
            rng: SimRng::for_stream(seed, "workload"),
            emitted: 0,
            units,
            cursor: 0,
            zipf,
            scramble: coprime_multiplier(units),
            normal,
            camera,
            spec,
        })
    }

    /// The specification.
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// A request's length in alignment units, from the read sizes for a read where the
    /// workload has them.
    fn size_units(&mut self, op: Op) -> u64 {
        let align = u64::from(self.spec.align_bytes);
        let dist = match (&self.spec.read_size, op) {
            (Some(read_size), Op::Read) => read_size,
            _ => &self.spec.size,
        };
        let bytes = match dist {
            SizeDist::Fixed { bytes } => u64::from(*bytes),
            SizeDist::Uniform {
                min_bytes,
                max_bytes,
            } => {
                let (lo, hi) = (u64::from(*min_bytes) / align, u64::from(*max_bytes) / align);
                return self.rng.random_range(lo..=hi);
            }
            SizeDist::Choice { sizes } => {
                let total: u64 = sizes.iter().map(|&(_, w)| u64::from(w)).sum();
                let mut pick = self.rng.random_range(0..total);
                let mut chosen = sizes[0].0;
                for &(bytes, weight) in sizes {
                    if pick < u64::from(weight) {
                        chosen = bytes;
                        break;
                    }
                    pick -= u64::from(weight);
                }
                u64::from(chosen)
            }
        };
        bytes / align
    }

    /// The first unit of a request of `len` units.
    fn start_unit(&mut self, len: u64) -> u64 {
        let limit = self.units - len + 1;
        match self.spec.pattern.clone() {
            Pattern::Uniform => self.rng.random_range(0..limit),
            Pattern::Sequential => {
                if self.cursor + len > self.units {
                    self.cursor = 0;
                }
                let start = self.cursor;
                self.cursor += len;
                start
            }
            Pattern::Zipf { .. } => {
                let zipf = self
                    .zipf
                    .as_ref()
                    .expect("invariant: zipf pattern has a distribution");
                let rank = zipf.sample(&mut self.rng) as u64 - 1;
                // A fixed permutation of ranks over the span (multiplication by a unit mod n).
                let unit = ((u128::from(rank) * u128::from(self.scramble)) % u128::from(self.units))
                    as u64;
                unit.min(limit - 1)
            }
            Pattern::HotCold {
                access_percent,
                space_percent,
            } => {
                let hot = ((self.units as f64 * space_percent / 100.0) as u64).clamp(1, self.units);
                let hot_limit = hot.saturating_sub(len - 1).max(1).min(limit);
                if self.rng.random_range(0.0..100.0) < access_percent {
                    self.rng.random_range(0..hot_limit)
                } else {
                    self.rng.random_range(0..limit)
                }
            }
            Pattern::Gaussian { .. } => {
                let normal = self
                    .normal
                    .expect("invariant: gaussian pattern has a distribution");
                // Draws outside the span are drawn again, a bounded number of times: near an
                // end with a tiny deviation (or requests too long to start there) nearly
                // every draw falls outside, and the nearest valid start is taken instead.
                let mut x = 0.0;
                for _ in 0..GAUSSIAN_DRAWS {
                    x = normal.sample(&mut self.rng).round();
                    if x >= 0.0 && (x as u64) < limit {
                        break;
                    }
                }
                (x.max(0.0) as u64).min(limit - 1)
            }
            Pattern::Camera(_) => unreachable!("camera requests are built separately"),
        }
    }
}

/// A multiplier coprime with `n`, near `n * 0.618`, for scattering Zipf ranks.
fn coprime_multiplier(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut a = ((n as f64 * 0.618_033_988_75) as u64).max(1) | 1;
    while gcd(a, n) != 1 {
        a += 2;
    }
    a % n
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Iterator for Workload {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.emitted >= self.spec.requests {
            return None;
        }
        let time_ns = self.emitted * self.spec.interarrival_ns;
        self.emitted += 1;
        let align = u64::from(self.spec.align_bytes);
        let (op, start, len) = if let Some(camera) = &mut self.camera {
            let (start, len) = camera.next_write(&mut self.rng);
            (Op::Write, start, len)
        } else {
            let draw: f64 = self.rng.random();
            let op = if draw < self.spec.read_fraction {
                Op::Read
            } else if draw < self.spec.read_fraction + self.spec.trim_fraction {
                Op::Trim
            } else {
                Op::Write
            };
            let len = self.size_units(op);
            (op, self.start_unit(len), len)
        };
        Some(Request {
            time_ns,
            op,
            offset: start * align,
            size: (len * align) as u32,
            volume: 0,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.spec.requests - self.emitted) as usize;
        (left, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pattern: Pattern) -> WorkloadSpec {
        WorkloadSpec::new(pattern, SizeDist::Fixed { bytes: 4096 }, 20_000, 64 << 20)
    }

    fn all_patterns() -> Vec<Pattern> {
        vec![
            Pattern::Uniform,
            Pattern::Sequential,
            Pattern::Zipf { theta: 0.99 },
            Pattern::HotCold {
                access_percent: 80.0,
                space_percent: 20.0,
            },
            Pattern::Gaussian {
                center: 0.5,
                stddev: 0.05,
            },
            Pattern::Camera(CameraModel::FAST_B),
        ]
    }

    #[test]
    fn every_pattern_stays_in_the_span_aligned_and_reproducible() {
        for pattern in all_patterns() {
            let mut s = spec(pattern.clone());
            s.size = SizeDist::Choice {
                sizes: vec![(4096, 3), (16384, 1)],
            };
            let a: Vec<_> = Workload::new(s.clone(), 7).expect("valid").collect();
            let b: Vec<_> = Workload::new(s.clone(), 7).expect("valid").collect();
            let c: Vec<_> = Workload::new(s.clone(), 8).expect("valid").collect();
            assert_eq!(a, b, "{pattern:?} is not reproducible");
            assert_ne!(a, c, "{pattern:?} ignores the seed");
            assert_eq!(a.len(), 20_000);
            for r in &a {
                assert!(
                    r.end() <= s.span_bytes,
                    "{pattern:?}: {r:?} leaves the span"
                );
                assert_eq!(r.offset % 4096, 0);
                assert_eq!(r.size % 4096, 0);
                assert!(r.size > 0);
            }
        }
    }

    #[test]
    fn hot_cold_sends_the_asked_share_to_the_hot_region() {
        let s = spec(Pattern::HotCold {
            access_percent: 90.0,
            space_percent: 10.0,
        });
        let hot_end = s.span_bytes / 10;
        let hot = Workload::new(s, 1)
            .expect("valid")
            .filter(|r| r.offset < hot_end)
            .count();
        // 90% directly, plus 10% of the uniform rest landing there by chance: 91%.
        assert!(
            (17_800..18_600).contains(&hot),
            "{hot} of 20000 hit the hot region"
        );
    }

    #[test]
    fn zipf_is_skewed_and_scattered() {
        let s = spec(Pattern::Zipf { theta: 0.99 });
        let mut counts = std::collections::HashMap::new();
        for r in Workload::new(s, 3).expect("valid") {
            *counts.entry(r.offset).or_insert(0u32) += 1;
        }
        let mut top: Vec<_> = counts.into_iter().collect();
        top.sort_by_key(|&(offset, n)| (std::cmp::Reverse(n), offset));
        assert!(
            top[0].1 > 500,
            "the most popular page is hit often: {:?}",
            &top[..3]
        );
        assert_ne!(
            top[1].0,
            top[0].0 + 4096,
            "popular pages are not neighbours"
        );
    }

    #[test]
    fn sequential_wraps_and_mix_is_respected() {
        let mut s = spec(Pattern::Sequential);
        s.read_fraction = 0.3;
        s.trim_fraction = 0.1;
        let requests: Vec<_> = Workload::new(s, 1).expect("valid").collect();
        assert_eq!(requests[1].offset, 4096);
        assert_eq!(requests[16384].offset, 0, "wraps at the end of the span");
        let reads = requests.iter().filter(|r| r.op == Op::Read).count();
        let trims = requests.iter().filter(|r| r.op == Op::Trim).count();
        assert!((5_600..6_400).contains(&reads), "{reads}");
        assert!((1_700..2_300).contains(&trims), "{trims}");
    }

    #[test]
    fn reads_draw_from_their_own_sizes_when_given() {
        let mut s = spec(Pattern::Uniform);
        s.read_fraction = 0.5;
        let plain = s.canonical();
        assert!(
            !plain.contains("read_size"),
            "a spec without read sizes keeps its old digest text: {plain}"
        );
        s.read_size = Some(SizeDist::Choice {
            sizes: vec![(8192, 1), (16384, 1)],
        });
        assert!(s.canonical().contains("read_size"));
        let requests: Vec<_> = Workload::new(s, 9).expect("valid").collect();
        let (reads, writes): (Vec<&Request>, Vec<&Request>) =
            requests.iter().partition(|r| r.op == Op::Read);
        assert!(reads.len() > 9_000 && writes.len() > 9_000);
        assert!(reads.iter().all(|r| r.size == 8192 || r.size == 16384));
        assert!(reads.iter().any(|r| r.size == 8192) && reads.iter().any(|r| r.size == 16384));
        assert!(writes.iter().all(|r| r.size == 4096));
    }

    #[test]
    fn invalid_specs_are_refused_with_a_reason() {
        let bad = |f: &dyn Fn(&mut WorkloadSpec)| {
            let mut s = spec(Pattern::Uniform);
            f(&mut s);
            Workload::new(s, 0).err().expect("refused").to_string()
        };
        assert!(bad(&|s| s.span_bytes = 1000).contains("span"));
        assert!(bad(&|s| s.size = SizeDist::Fixed { bytes: 1000 }).contains("size"));
        assert!(bad(&|s| s.size = SizeDist::Fixed { bytes: 1 << 30 }).contains("exceeds"));
        assert!(
            bad(&|s| {
                s.read_fraction = 0.8;
                s.trim_fraction = 0.3
            })
            .contains("exceeds 1")
        );
        assert!(bad(&|s| s.pattern = Pattern::Zipf { theta: -1.0 }).contains("theta"));
        assert!(bad(&|s| s.size = SizeDist::Choice { sizes: vec![] }).contains("no sizes"));
        assert!(
            bad(&|s| s.read_size = Some(SizeDist::Fixed { bytes: 1000 }))
                .contains("read size 1000 B")
        );
        // A deviation far wider than the span would (almost) never draw a start inside it.
        assert!(
            bad(&|s| {
                s.pattern = Pattern::Gaussian {
                    center: 0.5,
                    stddev: 1e300,
                }
            })
            .contains("stddev")
        );
        // Request times used to wrap around past 2^64 ns.
        assert!(
            bad(&|s| {
                s.requests = 100;
                s.interarrival_ns = 200_000_000_000_000_000
            })
            .contains("100 requests 200000000000000000 ns apart end past 2^64 ns")
        );
        let mut fits = spec(Pattern::Uniform);
        (fits.requests, fits.interarrival_ns) = (2, u64::MAX);
        let times: Vec<u64> = Workload::new(fits, 0)
            .expect("the last request starts at 2^64 - 1 ns")
            .map(|r| r.time_ns)
            .collect();
        assert_eq!(times, [0, u64::MAX]);
    }

    #[test]
    fn a_gaussian_at_the_end_of_the_span_ends() {
        // Found by the CLI's bad-input sweep: `--center 1 --stddev 1e-9` drew starts past the
        // last valid one forever; now they are clamped to it after a bounded number of draws.
        let mut s = spec(Pattern::Gaussian {
            center: 1.0,
            stddev: 1e-9,
        });
        s.requests = 100;
        s.size = SizeDist::Fixed { bytes: 64 << 10 };
        let requests: Vec<_> = Workload::new(s.clone(), 1).expect("valid").collect();
        assert_eq!(requests.len(), 100);
        assert!(
            requests.iter().all(|r| r.end() == s.span_bytes),
            "clamped to the end"
        );
    }

    /// The patterns' command-line names, as the module documentation lists them.
    #[test]
    fn patterns_have_their_command_line_names() {
        let names: Vec<&str> = all_patterns().iter().map(Pattern::name).collect();
        assert_eq!(
            names,
            [
                "uniform",
                "sequential",
                "zipf",
                "hot-cold",
                "gaussian",
                "camera"
            ]
        );
    }

    /// The alignment must be a power of two, and the span a non-zero multiple of it; a span
    /// of exactly one alignment unit is allowed.
    #[test]
    fn alignment_and_span_are_checked_exactly() {
        let refused = |s: WorkloadSpec| Workload::new(s, 0).err().expect("refused").to_string();
        let mut s = spec(Pattern::Uniform);
        (s.align_bytes, s.size) = (3000, SizeDist::Fixed { bytes: 6000 });
        assert_eq!(
            refused(s),
            "invalid workload: alignment 3000 B is not a power of two"
        );
        for span in [0, 6144] {
            let mut s = spec(Pattern::Uniform);
            s.span_bytes = span;
            assert_eq!(
                refused(s),
                format!(
                    "invalid workload: span {span} B is not a non-zero multiple of the 4096 B \
                     alignment"
                )
            );
        }
        let mut s = spec(Pattern::Sequential);
        (s.span_bytes, s.requests) = (4096, 3);
        let offsets: Vec<u64> = Workload::new(s, 0)
            .expect("one unit is a span")
            .map(|r| r.offset)
            .collect();
        assert_eq!(offsets, [0, 0, 0]);
    }

    /// Reads and trims may share out every request between them (fractions summing to
    /// exactly 1), leaving no writes.
    #[test]
    fn read_and_trim_fractions_may_sum_to_one() {
        let mut s = spec(Pattern::Uniform);
        (s.read_fraction, s.trim_fraction, s.requests) = (0.5, 0.5, 1000);
        let requests: Vec<Request> = Workload::new(s, 2).expect("a sum of 1 is valid").collect();
        assert!(requests.iter().all(|r| r.op != Op::Write));
        assert!(requests.iter().any(|r| r.op == Op::Read));
        assert!(requests.iter().any(|r| r.op == Op::Trim));
    }

    /// A uniform size range must not be empty; a range of one size is that size.
    #[test]
    fn a_uniform_size_range_of_one_size_is_allowed_and_an_empty_one_refused() {
        let mut s = spec(Pattern::Uniform);
        s.size = SizeDist::Uniform {
            min_bytes: 8192,
            max_bytes: 4096,
        };
        assert_eq!(
            Workload::new(s, 0).err().expect("refused").to_string(),
            "invalid workload: request size range 8192..4096 is empty"
        );
        let mut s = spec(Pattern::Uniform);
        (s.requests, s.size) = (
            100,
            SizeDist::Uniform {
                min_bytes: 8192,
                max_bytes: 8192,
            },
        );
        let workload = Workload::new(s, 0).expect("one size is a range");
        assert!(workload.map(|r| r.size).all(|size| size == 8192));
    }

    /// A size choice needs a size of positive weight; a size may be the whole span but not
    /// more.
    #[test]
    fn size_choices_need_a_weight_and_sizes_fit_the_span() {
        let refused = |s: WorkloadSpec| Workload::new(s, 0).err().expect("refused").to_string();
        let mut s = spec(Pattern::Uniform);
        s.size = SizeDist::Choice {
            sizes: vec![(4096, 0), (8192, 0)],
        };
        assert_eq!(
            refused(s),
            "invalid workload: request size choice has no sizes with a positive weight"
        );
        let mut s = spec(Pattern::Uniform);
        s.size = SizeDist::Fixed {
            bytes: (64 << 20) + 4096,
        };
        assert_eq!(
            refused(s),
            "invalid workload: request size 67112960 B exceeds the 67108864 B span"
        );
        let mut s = spec(Pattern::Uniform);
        (s.requests, s.size) = (2, SizeDist::Fixed { bytes: 64 << 20 });
        let whole: Vec<(u64, u32)> = Workload::new(s, 0)
            .expect("a request may cover the span")
            .map(|r| (r.offset, r.size))
            .collect();
        assert_eq!(whole, [(0, 64 << 20), (0, 64 << 20)]);
    }

    /// Every pattern parameter out of range is refused with its reason; the edges of each
    /// range are allowed.
    #[test]
    fn pattern_parameters_are_checked_at_their_edges() {
        let check = |pattern: Pattern| Workload::new(spec(pattern), 0).err().map(|e| e.to_string());
        let hot_cold = |access_percent: f64, space_percent: f64| Pattern::HotCold {
            access_percent,
            space_percent,
        };
        let gaussian = |center: f64, stddev: f64| Pattern::Gaussian { center, stddev };
        let gaussian_range = |center: &str, stddev: &str| {
            format!(
                "gaussian center {center} / stddev {stddev} out of range \
                 (center in [0, 1], stddev in (0, 1], fractions of the span)"
            )
        };
        let refused = [
            (
                Pattern::Zipf { theta: 0.0 },
                "zipf theta 0 must be positive".to_string(),
            ),
            (
                Pattern::Zipf {
                    theta: f64::INFINITY,
                },
                "zipf theta inf must be positive".into(),
            ),
            (
                hot_cold(150.0, 20.0),
                "access_percent 150 is not a percentage".into(),
            ),
            (
                hot_cold(-1.0, 20.0),
                "access_percent -1 is not a percentage".into(),
            ),
            (
                hot_cold(f64::NAN, 20.0),
                "access_percent NaN is not a percentage".into(),
            ),
            (
                hot_cold(80.0, 100.5),
                "space_percent 100.5 is not a percentage".into(),
            ),
            (hot_cold(80.0, 0.0), "space_percent must be above 0".into()),
            (gaussian(1.5, 0.1), gaussian_range("1.5", "0.1")),
            (gaussian(-0.1, 0.1), gaussian_range("-0.1", "0.1")),
            (gaussian(0.5, 0.0), gaussian_range("0.5", "0")),
            (gaussian(0.5, 1.5), gaussian_range("0.5", "1.5")),
        ];
        for (pattern, why) in refused {
            assert_eq!(
                check(pattern.clone()),
                Some(format!("invalid workload: {why}")),
                "{pattern:?}"
            );
        }
        for pattern in [
            Pattern::Zipf { theta: 1e-3 },
            hot_cold(0.0, 100.0),
            hot_cold(100.0, 0.001),
            gaussian(0.0, 1.0),
            gaussian(1.0, 0.001),
        ] {
            assert_eq!(check(pattern.clone()), None, "{pattern:?}");
        }
    }

    /// Uniform sizes are drawn from every aligned size of the range, ends included, and
    /// no other.
    #[test]
    fn uniform_sizes_cover_the_aligned_range() {
        let mut s = spec(Pattern::Uniform);
        (s.requests, s.size) = (
            2000,
            SizeDist::Uniform {
                min_bytes: 4096,
                max_bytes: 16384,
            },
        );
        let mut seen = std::collections::BTreeMap::new();
        for r in Workload::new(s, 4).expect("valid") {
            *seen.entry(r.size).or_insert(0u32) += 1;
        }
        assert_eq!(
            seen.keys().copied().collect::<Vec<u32>>(),
            [4096, 8192, 12288, 16384]
        );
        assert!(seen.values().all(|&n| n > 400), "{seen:?}");
    }

    /// Zipf ranks are scattered by multiplication with a unit mod the span's 16384 units,
    /// 10125 (the odd number below 0.618 n, coprime with it): the most popular rank is the
    /// first page and the second is page 10125.
    #[test]
    fn zipf_ranks_land_where_the_scramble_puts_them() {
        let mut counts = std::collections::HashMap::new();
        for r in Workload::new(spec(Pattern::Zipf { theta: 0.99 }), 3).expect("valid") {
            *counts.entry(r.offset / 4096).or_insert(0u32) += 1;
        }
        let mut top: Vec<(u64, u32)> = counts.into_iter().collect();
        top.sort_by_key(|&(unit, n)| (std::cmp::Reverse(n), unit));
        assert_eq!([top[0].0, top[1].0], [0, 10125], "{:?}", &top[..3]);
    }

    /// In a span of 8 units, 4-unit Zipf requests start at units 0 to 4 only: the ranks
    /// scattered past the last start are clamped to it.
    #[test]
    fn zipf_requests_end_in_the_span() {
        let mut s = spec(Pattern::Zipf { theta: 0.5 });
        (s.span_bytes, s.size, s.requests) = (8 * 4096, SizeDist::Fixed { bytes: 4 * 4096 }, 2000);
        let starts: std::collections::BTreeSet<u64> = Workload::new(s, 1)
            .expect("valid")
            .map(|r| r.offset / 4096)
            .collect();
        assert_eq!(starts.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    }

    /// The hot region is the asked share of the span, used whole: of 20,000 requests with
    /// 90% to the first 10%, about 45.5% land in its upper half (half of the 90%, plus half
    /// of the 1% the uniform rest puts in it), and 9% beyond it.
    #[test]
    fn hot_cold_uses_the_whole_hot_region() {
        let s = spec(Pattern::HotCold {
            access_percent: 90.0,
            space_percent: 10.0,
        });
        let hot_units = 16384 / 10;
        let (mut upper_half, mut beyond) = (0, 0);
        for r in Workload::new(s, 1).expect("valid") {
            let unit = r.offset / 4096;
            if unit >= hot_units {
                beyond += 1;
            } else if unit >= hot_units / 2 {
                upper_half += 1;
            }
        }
        assert!((8_600..9_600).contains(&upper_half), "{upper_half}");
        assert!((1_600..2_000).contains(&beyond), "{beyond}");
    }

    /// Hot requests start where they end inside the hot region, at every such start: in a
    /// hot region of 4 units, 1-unit requests start at units 0 to 3 and 2-unit ones at 0
    /// to 2.
    #[test]
    fn hot_requests_use_every_start_that_fits_the_hot_region() {
        for (units, expected) in [(1u32, vec![0, 1, 2, 3]), (2, vec![0, 1, 2])] {
            let mut s = spec(Pattern::HotCold {
                access_percent: 100.0,
                space_percent: 25.0,
            });
            (s.span_bytes, s.size, s.requests) = (
                16 * 4096,
                SizeDist::Fixed {
                    bytes: units * 4096,
                },
                400,
            );
            let starts: std::collections::BTreeSet<u64> = Workload::new(s, 6)
                .expect("valid")
                .map(|r| r.offset / 4096)
                .collect();
            assert_eq!(
                starts.into_iter().collect::<Vec<_>>(),
                expected,
                "{units} units"
            );
        }
    }

    /// A request goes to the hot region when its draw in [0, 100) is below
    /// `access_percent`: a draw equal to it does not (so 0% sends none). The first draw is
    /// read from a replica of the workload's generator (the operation's draw, then the
    /// hot-or-cold one), and checked: one step above it the request is hot.
    #[test]
    fn a_draw_equal_to_the_access_percent_is_cold() {
        let mut replica = SimRng::for_stream(12, "workload");
        let _operation: f64 = replica.random();
        let draw: f64 = replica.random_range(0.0..100.0);
        let first_start = |access_percent: f64| {
            let mut s = spec(Pattern::HotCold {
                access_percent,
                space_percent: 0.001,
            });
            s.requests = 1;
            let r = Workload::new(s, 12)
                .expect("valid")
                .next()
                .expect("one request");
            r.offset / 4096
        };
        assert_eq!(first_start(draw.next_up()), 0, "the hot region is unit 0");
        assert_ne!(first_start(draw), 0, "a cold request, anywhere in the span");
    }

    /// Gaussian draws outside the span are drawn again, not clamped: centred on the first
    /// unit with a deviation of 164 units, about 0.5% of requests start at unit 0 (draws
    /// rounding to 0, of the non-negative half), not the half of them below 0.
    #[test]
    fn gaussian_draws_below_the_span_are_drawn_again() {
        let mut s = spec(Pattern::Gaussian {
            center: 0.0,
            stddev: 0.01,
        });
        s.requests = 2000;
        let at_zero = Workload::new(s, 8)
            .expect("valid")
            .filter(|r| r.offset == 0)
            .count();
        assert!(at_zero < 40, "{at_zero} of 2000 at unit 0");
    }

    /// The same past the last start: centred on it (unit 16384 of 16384, 1-unit requests)
    /// with a deviation of 2 units, draws rounding to 16384 or more are drawn again, so
    /// the last start, 16383, takes P(-0.75 < z < -0.25) / P(z < -0.25) = 43.5% of the
    /// requests (62% if draws of 16384 were clamped to it), and starts below 16382 take
    /// P(z < -1.25) / P(z < -0.25) = 26.3%.
    #[test]
    fn gaussian_draws_past_the_last_start_are_drawn_again() {
        let mut s = spec(Pattern::Gaussian {
            center: 1.0,
            stddev: 2.0 / 16384.0,
        });
        s.requests = 4000;
        let starts: Vec<u64> = Workload::new(s, 8)
            .expect("valid")
            .map(|r| r.offset / 4096)
            .collect();
        let last = starts.iter().filter(|&&u| u == 16383).count();
        let below = starts.iter().filter(|&&u| u < 16382).count();
        assert!(
            (1_600..1_880).contains(&last),
            "{last} of 4000 at the last start"
        );
        assert!((900..1_200).contains(&below), "{below} of 4000 below 16382");
    }

    /// The camera workload is the FAT model in sectors of the alignment, over the span: with
    /// pattern B's parameters in 4 KiB sectors on 64 MiB (16,384 sectors, a cluster each),
    /// a FAT takes 16,386 entries x 2 B = 9 sectors, FAT 1 starts at sector 1 and FAT 2 at 10,
    /// the root directory (16 KiB) at 19, and the data area right after it at 23. The first
    /// photo's chunks go there, 16 sectors each, each followed by its FAT sector (2,048
    /// entries a sector, so sector 0) in both copies.
    #[test]
    fn the_camera_workload_is_the_fat_model_in_sectors_of_the_alignment() {
        let mut s = spec(Pattern::Camera(CameraModel::FAST_B));
        s.requests = 7;
        let writes: Vec<(Op, u64, u32)> = Workload::new(s, 5)
            .expect("valid")
            .map(|r| (r.op, r.offset / 4096, r.size / 4096))
            .collect();
        let w = |sector, sectors| (Op::Write, sector, sectors);
        assert_eq!(
            writes,
            [
                w(23, 16),
                w(1, 1),
                w(10, 1),
                w(39, 16),
                w(1, 1),
                w(10, 1),
                w(55, 16)
            ]
        );
    }

    /// A camera spec reads back as it was written, its parameters beside the pattern's kind,
    /// and an unknown parameter is refused (a newtype variant of an internally tagged enum,
    /// which serde handles apart from the struct variants).
    #[test]
    fn a_camera_spec_round_trips_through_json() {
        let s = spec(Pattern::Camera(CameraModel::FAST_A));
        let text = serde_json::to_string(&s.pattern).expect("serializes");
        assert_eq!(
            text,
            "{\"kind\":\"camera\",\"cluster_bytes\":2048,\"chunk_bytes\":32768,\
             \"file_min_bytes\":1048576,\"file_max_bytes\":2097152,\"data_align_bytes\":16384}"
        );
        let back: WorkloadSpec =
            serde_json::from_str(&serde_json::to_string(&s).expect("serializes")).expect("reads");
        assert_eq!(back, s);
        let unknown = text.replace("\"chunk_bytes\"", "\"chunk_size\"");
        let error = serde_json::from_str::<Pattern>(&unknown).expect_err("an unknown field");
        assert!(
            error.to_string().contains("unknown field `chunk_size`"),
            "{error}"
        );
    }

    /// The camera's sector is the alignment, which must be a FAT sector size, and its card
    /// the span, which must hold a FAT, the root directory and the largest photo.
    #[test]
    fn the_camera_workload_refuses_sectors_and_spans_a_fat_cannot_have() {
        let refused = |align_bytes: u32, span_bytes: u64| {
            let mut s = spec(Pattern::Camera(CameraModel::FAST_B));
            (s.align_bytes, s.span_bytes) = (align_bytes, span_bytes);
            // The spec's own check refuses it (before anything is generated), as the
            // workload does.
            let checked = s.validate().err().map(|e| e.to_string());
            let made = Workload::new(s, 0).err().map(|e| e.to_string());
            assert_eq!(checked, made);
            made
        };
        assert_eq!(
            refused(8192, 64 << 20).as_deref(),
            Some(
                "invalid workload: camera sector 8192 B (the workload's alignment) is not a FAT \
                 sector size (512, 1024, 2048 or 4096 B)"
            )
        );
        assert_eq!(refused(512, 64 << 20), None);
        assert_eq!(
            refused(4096, 4 << 20),
            Some(
                "invalid workload: camera file size 4194304 B does not fit the data area of a \
             4194304 B card (after the FATs and root directory): make the span larger or the \
             files smaller"
                    .to_string()
            )
        );
    }

    /// The Zipf scramble multiplies ranks by the odd number at or above 0.618 n that is
    /// coprime with n (n > 2), so workloads place ranks the same from version to version:
    /// for n = 9, 5.56 gives 5; n = 15, 9.27 gives 9, shares 3 with 15, so 11; n = 16384,
    /// 10125.6 gives 10125. Every multiplier is a unit mod n, so the scramble is a
    /// permutation.
    #[test]
    fn the_zipf_scramble_multiplier_is_pinned() {
        let pinned: Vec<u64> = [1, 2, 3, 9, 10, 15, 16384]
            .into_iter()
            .map(coprime_multiplier)
            .collect();
        assert_eq!(pinned, [1, 1, 1, 5, 7, 11, 10125]);
        for n in 3..200 {
            let a = coprime_multiplier(n);
            assert!(a < n && gcd(a, n) == 1, "{n}: {a}");
        }
    }

    /// A request is a read when its draw in [0, 1) is below `read_fraction`, a trim when
    /// below `read_fraction + trim_fraction`, not when equal (the first draw read from a
    /// replica of the generator, and checked one step above).
    #[test]
    fn a_draw_equal_to_a_fraction_falls_in_the_next_operation() {
        let draw: f64 = SimRng::for_stream(21, "workload").random();
        let first_op = |read_fraction: f64, trim_fraction: f64| {
            let mut s = spec(Pattern::Uniform);
            (s.requests, s.read_fraction, s.trim_fraction) = (1, read_fraction, trim_fraction);
            Workload::new(s, 21).expect("valid").next().expect("one").op
        };
        assert_eq!(first_op(draw.next_up(), 0.0), Op::Read);
        assert_eq!(first_op(draw, 0.0), Op::Write);
        assert_eq!(first_op(0.0, draw.next_up()), Op::Trim);
        assert_eq!(first_op(0.0, draw), Op::Write);
    }

    /// The size hint is exact: the requests left.
    #[test]
    fn the_size_hint_is_the_requests_left() {
        let mut s = spec(Pattern::Uniform);
        s.requests = 3;
        let mut workload = Workload::new(s, 0).expect("valid");
        for left in [3, 2, 1] {
            assert_eq!(workload.size_hint(), (left, Some(left)));
            workload.next().expect("a request");
        }
        assert_eq!(workload.size_hint(), (0, Some(0)));
        assert!(workload.next().is_none());
        assert_eq!(workload.size_hint(), (0, Some(0)));
    }
}
