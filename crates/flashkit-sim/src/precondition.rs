//! Preconditioning: bring a drive to steady state before measuring.
//!
//! A fresh drive has every block free, so the first capacity's worth of writes never
//! triggers garbage collection and write amplification reads 1.0: a number no drive in use
//! shows. SNIA's Solid State Storage Performance Test Specification therefore fills the drive
//! and overwrites it before measuring; flashkit does the same: one sequential pass over every
//! logical page, then `random_overwrites` times the logical capacity of uniformly random
//! single-page writes (seeded), after which garbage collection runs on every block.

use crate::{Host, Progress, SimError};
use flashkit_core::{Lpn, PageRange, SimRng, SimRngExt};
use flashkit_ftl::Simulated;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// How to precondition.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Precondition {
    /// Write every logical page once, in order.
    pub sequential_fill: bool,
    /// Then overwrite this many times the logical capacity with random single-page writes.
    pub random_overwrites: f64,
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition {
            sequential_fill: true,
            random_overwrites: 1.0,
        }
    }
}

const PROGRESS_STEP: u64 = 1 << 16;
const LOOKAHEAD: usize = 16;

/// Precondition the drive behind `host` with the random stream of `seed`.
pub fn precondition<F: Simulated>(
    host: &mut Host<F>,
    spec: &Precondition,
    seed: u64,
    progress: &dyn Progress,
) -> Result<(), SimError> {
    if !(spec.random_overwrites.is_finite() && spec.random_overwrites >= 0.0) {
        return Err(SimError::Config(format!(
            "random overwrites {} must be a non-negative number of capacities",
            spec.random_overwrites
        )));
    }
    let logical = host.ftl().geometry().logical_pages();
    let chunk = host.ftl().geometry().pages_per_block();
    if spec.sequential_fill {
        progress.start("precondition: sequential fill", Some(u64::from(logical)));
        let mut lpn = 0;
        while lpn < logical {
            let count = chunk.min(logical - lpn);
            let seq = host.next_seq();
            host.ftl_mut()
                .write(PageRange::new(Lpn(lpn), count), seq)
                .map_err(|error| SimError::Precondition {
                    phase: "sequential fill",
                    write: u64::from(lpn) + 1,
                    total: u64::from(logical),
                    error,
                })?;
            lpn += count;
            progress.advance(u64::from(count));
        }
        progress.finish();
    }
    let writes = (f64::from(logical) * spec.random_overwrites).round() as u64;
    if writes > 0 {
        progress.start("precondition: random overwrite", Some(writes));
        let mut rng = SimRng::for_stream(seed, "precondition");
        // Draw pages a few writes ahead so their mapping entries can be prefetched.
        let mut ahead = [Lpn(0); LOOKAHEAD];
        for slot in &mut ahead {
            *slot = Lpn(rng.random_range(0..logical));
            host.ftl().prefetch(PageRange::one(*slot));
        }
        for done in 0..writes {
            let lpn = ahead[done as usize % LOOKAHEAD];
            let next = Lpn(rng.random_range(0..logical));
            host.ftl().prefetch(PageRange::one(next));
            ahead[done as usize % LOOKAHEAD] = next;
            let seq = host.next_seq();
            host.ftl_mut()
                .write(PageRange::one(lpn), seq)
                .map_err(|error| SimError::Precondition {
                    phase: "random overwrites",
                    write: done + 1,
                    total: writes,
                    error,
                })?;
            if (done + 1) % PROGRESS_STEP == 0 {
                progress.advance(PROGRESS_STEP);
            }
        }
        progress.advance(writes % PROGRESS_STEP);
        progress.finish();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoProgress;
    use flashkit_core::{Geometry, StateHasher};
    use flashkit_core::{PhaseLog, ProgressLog};
    use flashkit_device::{CountsOnly, NandDevice};
    use flashkit_ftl::{Ftl, Inspect, Mapping, PageFtl, PageFtlConfig, PageTable, Verify};

    type Drive = Host<PageFtl<NandDevice<CountsOnly>, PageTable>>;

    /// 40 blocks of 16 pages, 30% over-provisioned: a logical space that does not end on
    /// a block boundary.
    fn drive(endurance: u32) -> Drive {
        let geometry = Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(16)
            .blocks(40)
            .over_provisioning(0.3)
            .build()
            .expect("valid");
        let device = NandDevice::<CountsOnly>::new(geometry).with_endurance(endurance);
        Host::new(PageFtl::with_page_table(device, PageFtlConfig::default()).expect("valid"))
    }

    fn hash(host: &Drive) -> u64 {
        let mut hasher = StateHasher::new();
        host.ftl().hash_state(&mut hasher);
        hasher.finish()
    }

    /// The fill writes every logical page once, a block's worth a write; the overwrites
    /// are `random_overwrites` capacities of single pages, rounded; each phase reports its
    /// total and every unit of it.
    #[test]
    fn a_fill_then_random_overwrites_write_what_they_say() {
        let mut host = drive(100_000);
        let logical = host.ftl().geometry().logical_pages();
        assert_ne!(logical % 16, 0, "{logical}: the last write is short");
        let tally = ProgressLog::default();
        let spec = Precondition {
            sequential_fill: true,
            random_overwrites: 0.75,
        };
        precondition(&mut host, &spec, 5, &tally).expect("preconditions");
        let writes = (f64::from(logical) * 0.75).round() as u64;
        assert_eq!(
            tally.phases(),
            [
                PhaseLog::new(
                    "precondition: sequential fill",
                    Some(u64::from(logical)),
                    u64::from(logical)
                ),
                PhaseLog::new("precondition: random overwrite", Some(writes), writes),
            ]
        );
        let programs = host.ftl().device().counters().programs;
        assert_eq!(programs.host, u64::from(logical) + writes);
        assert_eq!(host.ftl().mapping().mapped_pages(), u64::from(logical));
        // One sequence number a write: the fill's chunks, then each overwrite.
        assert_eq!(
            host.next_seq(),
            u64::from(logical.div_ceil(16)) + writes + 1
        );

        // The overwrites are the seed's: the same seed, the same drive; another, another.
        let again = |seed| {
            let mut host = drive(100_000);
            precondition(&mut host, &spec, seed, &NoProgress).expect("preconditions");
            hash(&host)
        };
        assert_eq!(again(5), hash(&host));
        assert_ne!(again(6), hash(&host));
    }

    /// Only the overwrites, or nothing at all: no fill, and no phase for what is not done.
    #[test]
    fn phases_not_asked_for_are_not_run() {
        let mut host = drive(100_000);
        let tally = ProgressLog::default();
        let none = Precondition {
            sequential_fill: false,
            random_overwrites: 0.0,
        };
        precondition(&mut host, &none, 1, &tally).expect("nothing to do");
        assert!(tally.phases().is_empty());
        assert_eq!(host.ftl().device().counters().programs.host, 0);
        let few = Precondition {
            sequential_fill: false,
            random_overwrites: 0.1,
        };
        precondition(&mut host, &few, 1, &tally).expect("overwrites");
        let logical = host.ftl().geometry().logical_pages();
        let writes = (f64::from(logical) * 0.1).round() as u64;
        assert_eq!(tally.phases().len(), 1);
        assert_eq!(host.ftl().device().counters().programs.host, writes);
    }

    /// A phase longer than a progress step reports every write: the whole steps as they
    /// pass, the rest at its end.
    #[test]
    fn a_long_phase_reports_every_write() {
        let mut host = drive(100_000);
        let logical = host.ftl().geometry().logical_pages();
        let spec = Precondition {
            sequential_fill: false,
            random_overwrites: 300.0,
        };
        let writes = u64::from(logical) * 300;
        assert!(writes > 2 * PROGRESS_STEP, "{writes}");
        let tally = ProgressLog::default();
        precondition(&mut host, &spec, 2, &tally).expect("preconditions");
        assert_eq!(
            tally.phases(),
            [PhaseLog::new(
                "precondition: random overwrite",
                Some(writes),
                writes
            )]
        );
    }

    #[test]
    fn overwrites_must_be_a_non_negative_number() {
        for bad in [-0.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let spec = Precondition {
                sequential_fill: true,
                random_overwrites: bad,
            };
            let mut host = drive(100_000);
            let error = precondition(&mut host, &spec, 1, &NoProgress).expect_err("refused");
            assert_eq!(
                error.to_string(),
                format!("random overwrites {bad} must be a non-negative number of capacities")
            );
            assert_eq!(
                host.ftl().device().counters().programs.host,
                0,
                "nothing written"
            );
        }
    }

    /// A drive that wears out under the overwrites fails with the phase and the write, and
    /// a fill on it afterwards names the chunk it failed at.
    #[test]
    fn a_failed_write_names_its_phase_and_place() {
        let mut host = drive(2);
        let logical = u64::from(host.ftl().geometry().logical_pages());
        let spec = Precondition {
            sequential_fill: false,
            random_overwrites: 100.0,
        };
        let failed = |error: SimError| match error {
            SimError::Precondition {
                phase,
                write,
                total,
                ..
            } => (phase, write, total),
            other => panic!("{other}"),
        };
        let (phase, write, total) =
            failed(precondition(&mut host, &spec, 1, &NoProgress).expect_err("wears out"));
        assert_eq!((phase, total), ("random overwrites", logical * 100));
        assert_eq!(host.ftl().device().counters().programs.host, write - 1);
        let fill = Precondition {
            sequential_fill: true,
            random_overwrites: 0.0,
        };
        let (phase, write, total) =
            failed(precondition(&mut host, &fill, 1, &NoProgress).expect_err("worn out"));
        assert_eq!((phase, total), ("sequential fill", logical));
        assert_eq!((write - 1) % 16, 0, "a chunk's first page: {write}");
    }
}
