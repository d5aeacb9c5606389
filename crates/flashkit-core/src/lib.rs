//! flashkit-core: the vocabulary every other flashkit crate speaks.
//!
//! This layer holds plain values and nothing that simulates: typed ids ([`Lpn`], [`Ppn`],
//! [`BlockId`]) so that a block number cannot be passed where a page number is expected, the
//! validated [`Geometry`] of a flash part, [`Timing`] and the named [`NandPreset`]s the papers
//! use, operation [`OpCounters`] split by [`Cause`], the seeded random source ([`SimRng`]) and
//! the [`StateHasher`] that fingerprints a run, the [`Progress`] every long run reports to; and [`same_file`], which the tools that read
//! some files and write others use so that no output replaces an input.
//!
//! Key decision: page and block numbers are 32-bit. Every table in flashkit stores them
//! packed, so a 16 GiB device's page map is 16 MiB rather than 32; [`Geometry`] refuses parts
//! with more than `u32::MAX - 1` physical pages (16 TiB at 4 KiB pages).

mod counters;
mod file;
mod geometry;
mod hash;
pub mod hint;
mod ids;
mod progress;
mod rng;
mod timing;
pub mod units;

pub use counters::{ByCause, Cause, OpCounters};
pub use file::{not_a_file, same_file};
pub use geometry::{Geometry, GeometryBuilder, GeometryError};
pub use hash::StateHasher;
pub use ids::{BlockId, Lpn, PageRange, Ppn, Stamp};
pub use progress::{NoProgress, PhaseLog, Progress, ProgressLog};
pub use rng::{SimRng, SimRngExt, sub_seed};
pub use timing::{NandPreset, Timing};
