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
