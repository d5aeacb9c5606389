//! flashkit-ftl: flash translation layers over a [`FlashDevice`].
//!
//! The layer's contract is [`Ftl`]: read, write, trim and flush ranges of logical pages, and
//! report statistics, mapping memory, invariants and a state fingerprint. Implementations:
//!
//! - [`PageFtl`]: log-structured page mapping over any [`Mapping`] (the page table
//!   [`PageTable`], the Extent Mapping Tree [`Emt`] or the Virtual Extent Trie [`Vet`]),
//!   with garbage
//!   collection whose victim is a pure choice of a [`VictimPolicy`] (greedy, cost-benefit,
//!   FIFO), static wear leveling, over-provisioning and TRIM.
//! - [`HybridFtl`]: block mapping and the log-block FTLs of the FAST paper (Lee et al., TECS
//!   2007): [`BlockFtl`], [`BastFtl`], and [`FastFtl`] for FAST and O-FAST.
//!
//! [`reference`](mod@reference) runs any `Ftl` in lock-step with a `BTreeMap` model under seeded,
//! swarm-weighted random workloads; [`AnyFtl`] is the enum the command line picks from.
//!
//! What this layer is not: it does not parse traces, convert bytes to pages, keep time or
//! print. Key decision: policies are separate from mechanism. A policy looks at a read-only
//! view of the block table and returns a block; the FTL carries the decision out, so a new
//! policy never touches the bookkeeping.

/// `Display` and `FromStr` for an option enum with `ALL` and `name()`: its command-line names
/// both ways, a wrong name refused with the right ones listed.
macro_rules! named_enum {
    ($ty:ty, $what:literal) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                <$ty>::ALL
                    .into_iter()
                    .find(|k| k.name() == text)
                    .ok_or_else(|| {
                        let names: Vec<_> = <$ty>::ALL.iter().map(|k| k.name()).collect();
                        format!(
                            "unknown {} {text:?} (expected one of: {})",
                            $what,
                            names.join(", ")
                        )
                    })
            }
        }
    };
}

mod any;
mod hybrid;
pub mod mapping;
mod page;
mod policy;
pub mod reference;
mod stats;
mod wear;

pub use any::{AnyFtl, FtlKind, FtlOptions, WithFtl};
pub use hybrid::{
    Bast, BastFtl, BastVictim, BlockFtl, BlockMapping, Choice, Fast, FastFtl, FullSw, HybridConfig,
    HybridFtl, LogScheme, LogView, RoundRobin, SchemeKind, hmt_memory, hybrid_mapping_bytes,
};
pub use mapping::{
    Canonical, Chunked, EMT_CHUNK, Emt, EmtRun, Extent, ExtentIndex, InsertScheme, Mapping,
    MappingHints, NodeLayout, PREFETCH_PAGES, PageTable, Pd, Pf, PhysRun, Purpose, Vet, VetConfig,
    VetNodes, VetSearch, VetTable, extent, hash_runs, vet,
};
pub use page::{PageFtl, PageFtlConfig};
pub use policy::{BlockView, CostBenefit, Fifo, GcPolicy, Greedy, SealedBlock, VictimPolicy};
pub use stats::{Average, Counter, FtlStats, Gauge, Mean};
pub use wear::{StaticWearLeveling, WearLevelPolicy, WearView};

use flashkit_core::{Geometry, Lpn, PageRange, Stamp, StateHasher};
use flashkit_device::{DeviceError, FlashDevice};
use serde::Serialize;
use thiserror::Error;

/// What a read of one logical page found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The page was never written or was trimmed: no flash read happens.
    Unmapped,
    /// The page is mapped and was read from flash; its stamp if the device keeps stamps.
    Mapped(Option<Stamp>),
}

/// Memory held by an FTL's mapping structures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MappingMemory {
    /// Bytes a controller would need, counted per entry or node the way the papers count
    /// them (4-byte page-table entries, for example).
    pub packed_bytes: u64,
    /// Heap bytes this process holds for the same structures.
    pub heap_bytes: u64,
}

/// Why an FTL operation failed. Caller bugs panic; these are the failures a real drive can
/// report.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum FtlError {
    /// The request reaches beyond the logical capacity.
    #[error("pages {start}..{end} reach beyond the {logical_pages} logical pages of the device")]
    OutOfRange {
        /// First page asked for.
        start: u64,
        /// One past the last page asked for.
        end: u64,
        /// Logical capacity in pages.
        logical_pages: u32,
    },
    /// No free block could be found or made: the device has worn out.
    #[error("out of space: {0}")]
    NoSpace(String),
    /// The device failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The FTL cannot be built with these parameters.
    #[error("invalid FTL configuration: {0}")]
    Config(String),
}

/// An invariant an FTL found broken in its own state: always a bug.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("invariant violated: {0}")]
pub struct InvariantViolation(pub String);

/// Return an [`InvariantViolation`] unless `condition` holds.
#[macro_export]
macro_rules! ensure_invariant {
    ($condition:expr, $($message:tt)+) => {
        if !$condition {
            return Err($crate::InvariantViolation(format!($($message)+)));
        }
    };
}

/// A flash translation layer over logical pages: the data path, all a host (a simulator, a
/// block-device server) needs to read and write through it. Looking inside ([`Inspect`])
/// and checking it ([`Verify`]) are contracts of their own; [`Simulated`] is the three
/// together, what every scheme of this crate implements.
pub trait Ftl {
    /// The device geometry (its logical capacity is what the host may address).
    fn geometry(&self) -> &Geometry;

    /// Read `range`; `sink` receives every page of the range in order.
    fn read(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError>;

    /// [`Ftl::read`] of the pages a partial-page write must merge (its read-modify-write):
    /// the same outcome, told apart from host reads by FTLs whose mapping accounts
    /// translations by purpose. The default is [`Ftl::read`].
    fn read_for_merge(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        self.read(range, sink)
    }

    /// Write `range` with data from host write `seq` (every page gets the stamp
    /// `(lpn, seq)`).
    fn write(&mut self, range: PageRange, seq: u64) -> Result<(), FtlError>;

    /// Discard `range`: its pages read as unmapped until written again.
    fn trim(&mut self, range: PageRange) -> Result<(), FtlError>;

    /// Hint that `range` will be accessed soon, so that mapping entries can be fetched
    /// ahead (no effect on results; a no-op unless the FTL benefits).
    fn prefetch(&self, _range: PageRange) {}

    /// Make every completed write durable (a no-op for FTLs without a write buffer).
    fn flush(&mut self) -> Result<(), FtlError> {
        Ok(())
    }
}

/// What an FTL shows of itself: the device underneath, statistics, mapping memory. Read
/// only; a report is built from it.
pub trait Inspect {
    /// The device underneath, for its counters and block states.
    fn device(&self) -> &dyn FlashDevice;

    /// Statistics beyond the device counters.
    fn stats(&self) -> FtlStats;

    /// Memory held by the mapping structures.
    fn mapping_memory(&self) -> MappingMemory;
}

/// How an FTL is checked: its invariants, and a hash of its logical state that two runs of
/// one seed must agree on bit for bit.
pub trait Verify {
    /// Check every internal invariant; expensive (linear in the device size).
    fn check_invariants(&self) -> Result<(), InvariantViolation>;

    /// Feed the FTL's logical state (mapping, block states, counters) to `hasher`.
    fn hash_state(&self, hasher: &mut StateHasher);
}

/// An FTL a simulator can run, report on and check: [`Ftl`], [`Inspect`] and [`Verify`]
/// together (implemented for every type that has the three).
pub trait Simulated: Ftl + Inspect + Verify {}

impl<T: Ftl + Inspect + Verify + ?Sized> Simulated for T {}

/// Refuse a range that does not fit the logical capacity.
pub(crate) fn check_range(geometry: &Geometry, range: PageRange) -> Result<(), FtlError> {
    if range.end() > u64::from(geometry.logical_pages()) {
        return Err(FtlError::OutOfRange {
            start: u64::from(range.start.0),
            end: range.end(),
            logical_pages: geometry.logical_pages(),
        });
    }
    Ok(())
}
