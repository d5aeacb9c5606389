//! flashkit-sim: put a request stream through an FTL and measure what happened.
//!
//! - [`Host`] is the host adapter: it turns byte-addressed requests into logical-page
//!   operations (a write that covers part of a page becomes a read-modify-write, counted),
//!   numbers the writes, and counts what the host asked for.
//! - [`precondition`] fills the drive and overwrites it at random until garbage collection
//!   runs, so that measurements start from steady state rather than from a fresh drive.
//! - [`run`] builds a device and an FTL from a [`RunSpec`], optionally preconditions, replays
//!   a [`Source`] and returns a [`RunReport`]: host and flash counters by cause, write
//!   amplification, erase-count spread, GC work, elapsed time under the serial cost model,
//!   mapping memory and a state hash.
//! - [`mapping_time`] times the page FTL's calls into its mapping ([`TimedMapping`]), for
//!   the extent-mapping reproduction; [`run_with_mapping_times`] is `run` with it.
//!   [`machine`] measures what a load from memory costs while those times are taken.
//!
//! What this layer is not: it never prints. Progress goes to a [`Progress`] the caller
//! supplies; wall-clock time is measured here, around the models, and reported apart from
//! the deterministic report so that the same seed gives the same report byte for byte.

mod host;
pub mod latency;
pub mod machine;
mod mapping_only;
pub mod mapping_time;
mod metrics;
mod precondition;
mod run;
pub mod sweep;

pub use host::{Host, HostCounters};
pub use mapping_only::{MappingOnlyReport, replay_mapping_only};
pub use mapping_time::{MappingTimeSummary, MappingTimes, TimedMapping};
pub use metrics::{
    DeviceRecord, EraseSpread, Metric, MetricValue, ReadWriteLatency, RunReport, TraceRecord,
    WallClock,
};
pub use precondition::{Precondition, precondition};
pub use run::{
    DeviceSpec, MIN_TRACE_BLOCKS, RunOutcome, RunSpec, Source, check_memory, check_memory_within,
    run, run_with, run_with_mapping_times,
};

use flashkit_ftl::FtlError;
use flashkit_trace::{Op, TraceError};
use thiserror::Error;

/// Every run takes the one [`Progress`] of the workspace (the binary draws it as a bar).
pub use flashkit_core::{NoProgress, Progress};

/// Why a run failed.
#[derive(Debug, Error)]
pub enum SimError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A request reaches beyond the device.
    #[error(
        "request {index} ({op} of {size} B at byte {offset}) reaches beyond the device's logical \
         capacity of {capacity_bytes} B; use a larger --capacity"
    )]
    OutOfRange {
        /// Zero-based request number.
        index: u64,
        /// Its operation.
        op: Op,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u32,
        /// The device's logical capacity.
        capacity_bytes: u64,
    },
    /// The FTL failed on a request.
    #[error("request {index}: {error}")]
    Ftl {
        /// Zero-based request number (or the preconditioning step).
        index: u64,
        /// The failure: shown in the message, and not also a `source` (which would print it
        /// twice in an error chain).
        error: FtlError,
    },
    /// The FTL failed while the drive was being preconditioned, before the first request.
    #[error("preconditioning ({phase}, page write {write} of {total}): {error}")]
    Precondition {
        /// "sequential fill" or "random overwrites".
        phase: &'static str,
        /// One-based page write of the phase.
        write: u64,
        /// Page writes in the phase.
        total: u64,
        /// The failure: shown in the message, not also a `source`.
        error: FtlError,
    },
    /// The run cannot be set up as asked.
    #[error("{0}")]
    Config(String),
    /// A results file could not be read or written.
    #[error("{0}")]
    Io(String),
}
