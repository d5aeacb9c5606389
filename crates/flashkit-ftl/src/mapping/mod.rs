//! Logical-to-physical mapping schemes used inside the page-mapped FTL.
//!
//! A [`Mapping`] translates logical ranges to physical runs and records that a logical range
//! now lives in a physical run, reporting every physical page the update invalidated. The
//! page FTL owns allocation, garbage collection and the reverse map; the mapping owns only
//! the forward map, so the page table, the Virtual Extent Trie and the Extent Mapping Tree
//! can be compared under one FTL, one GC and one trace.
//!
//! Implementations: [`PageTable`] (PMT, one entry per logical page), [`Emt`] (the Extent
//! Mapping Tree) and [`Vet`] (the Virtual Extent Trie), the last two after Suh et al.,
//! JSA 2014. All three hash their state the same way (the physical page of every logical
//! page, in order), so a page FTL makes the same decisions and reaches the same state hash
//! whichever of them it uses: the differential tests rely on it.

mod emt;
pub mod extent;
mod page_table;
pub mod vet;

pub use emt::{CHUNK as EMT_CHUNK, Chunked, Emt, ExtentIndex, Run as EmtRun};
pub use extent::{Canonical, Extent};
pub use page_table::PageTable;
pub use vet::{InsertScheme, NodeLayout, Pd, Pf, Vet, VetConfig, VetNodes, VetSearch, VetTable};

use crate::{Gauge, InvariantViolation, MappingMemory};
use flashkit_core::{Lpn, PageRange, Ppn, StateHasher};
use std::collections::BTreeMap;

/// Pages of a request that [`MappingHints::prefetch_range`] hints.
pub const PREFETCH_PAGES: usize = 4;

/// A run of logical pages and where it lives: `[lpn, lpn + len)` at `[ppn, ppn + len)`, or
/// unmapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhysRun {
    /// First logical page.
    pub lpn: Lpn,
    /// First physical page, or `None` for an unmapped hole.
    pub ppn: Option<Ppn>,
    /// Pages in the run.
    pub len: u32,
}

/// A forward map from logical pages to physical pages (its speed hints are
/// [`MappingHints`]).
pub trait Mapping: MappingHints {
    /// The physical page of `lpn`, if mapped.
    fn lookup(&self, lpn: Lpn) -> Option<Ppn>;

    /// Whether `lpn` maps to exactly `ppn` (the page FTL's validity test).
    #[inline(always)]
    fn maps_to(&self, lpn: Lpn, ppn: Ppn) -> bool {
        self.lookup(lpn) == Some(ppn)
    }

    /// Cover `range` with runs, in logical order.
    fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun));

    /// [`Mapping::translate`] for `purpose`: the same answer, whatever the purpose; a
    /// decorator that accounts translations by purpose (the mapping-time measurement) tells
    /// a host read from a read-modify-write's merge.
    #[inline(always)]
    fn translate_for(&self, _purpose: Purpose, range: PageRange, out: &mut impl FnMut(PhysRun)) {
        self.translate(range, out);
    }

    /// Map `[start, start + len)` to `[ppn, ppn + len)`; call `invalidated` with every
    /// physical page that held one of these logical pages before.
    fn update(&mut self, start: Lpn, ppn: Ppn, len: u32, invalidated: &mut impl FnMut(Ppn));

    /// Garbage collection moved `lpn` from `from` to `to`. The caller guarantees that `lpn`
    /// maps to `from`, and accounts for `from` itself, so nothing is reported back.
    fn relocate(&mut self, lpn: Lpn, from: Ppn, to: Ppn);

    /// Garbage collection moved `moved[i].0` from `moved[i].1` to `to + i`, for every `i`.
    /// The default relocates page by page (the page table's behaviour, unchanged); extent
    /// mappings override it to relocate whole runs, which splits an extent once per run
    /// rather than once per page.
    ///
    /// `preceding` is what the caller knows of physical page `to - 1`: `Some(p)` promises
    /// that no logical page but `p` can map to it (the page FTL passes its reverse map's
    /// entry, the logical page last programmed there, which may map elsewhere or nowhere by
    /// now); `None` promises nothing. An extent mapping merges a moved run into the extent
    /// that ends just before it logically and physically, and with the promise it needs no
    /// search to learn that there is none (the usual case).
    #[inline(always)]
    fn relocate_batch(&mut self, moved: &[(Lpn, Ppn)], to: Ppn, _preceding: Option<Lpn>) {
        for (&(lpn, from), to) in moved.iter().zip(to.0..) {
            self.relocate(lpn, from, Ppn(to));
        }
    }

    /// Unmap `range`; call `invalidated` with every physical page it held. An empty range
    /// unmaps nothing.
    fn remove(&mut self, range: PageRange, invalidated: &mut impl FnMut(Ppn));

    /// Pages currently mapped.
    fn mapped_pages(&self) -> u64;

    /// Memory held.
    fn memory(&self) -> MappingMemory;

    /// Feed the mapping's content to `hasher`: the physical page of every logical page in
    /// order, `u32::MAX` for an unmapped one, as little-endian u32s (see [`hash_runs`]).
    fn hash_state(&self, hasher: &mut StateHasher);

    /// Scheme-specific figures (extent counts, canonical-extent statistics) added to the
    /// FTL's statistics; none by default.
    fn extra_stats(&self, _extra: &mut BTreeMap<Gauge, f64>) {}

    /// Check the structure's own invariants (the page FTL's checker calls it); nothing to
    /// check by default.
    fn check_structure(&self) -> Result<(), InvariantViolation> {
        Ok(())
    }
}

/// What a translation is for ([`Mapping::translate_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A host read.
    Read,
    /// The read half of a read-modify-write: the old page merged into a partial-page write.
    Merge,
}

/// How the page FTL should drive a mapping for speed: hints that change no result (a
/// mapping that ignores them, or takes the defaults, gives the same answers and the same
/// state). They are a contract of their own so that [`Mapping`] stays the map itself.
pub trait MappingHints {
    /// Whether the page FTL should hand garbage-collection moves over in batches
    /// ([`Mapping::relocate_batch`]) rather than page by page ([`Mapping::relocate`]). The
    /// page table says no: its per-page loop fused with the reverse-map update is the
    /// benchmark's hot path (0.26% fewer instructions than two passes, by callgrind).
    const RELOCATES_RUNS: bool = false;

    /// Whether [`Mapping::lookup`] is a search (an extent map) rather than one array read.
    /// The page FTL then keeps a validity bitmap of its own, so that garbage collection
    /// learns which pages of a victim are valid without a search a page (most of them cold,
    /// and the invalid ones wasted); it checks the bitmap against [`Mapping::maps_to`] in
    /// debug builds and in its invariant check.
    const LOOKUP_SEARCHES: bool = false;

    /// Hint that `lpn` will be looked up or updated soon (no effect on results).
    #[inline(always)]
    fn prefetch(&self, _lpn: Lpn) {}

    /// Hint that a request over `range` comes soon: [`MappingHints::prefetch`] of its first
    /// [`PREFETCH_PAGES`] pages (a long request's later pages sit next to them). The page
    /// FTL calls this for each request of its lookahead; a timing decorator times it whole.
    #[inline(always)]
    fn prefetch_range(&self, range: PageRange) {
        for lpn in range.iter().take(PREFETCH_PAGES) {
            self.prefetch(lpn);
        }
    }
}

/// Hash a mapping given as runs covering `[0, pages)` in order, exactly as the page table
/// hashes its array, so that every mapping of the same content gives the same hash.
pub fn hash_runs(hasher: &mut StateHasher, runs: impl FnOnce(&mut dyn FnMut(PhysRun))) {
    let mut buffer = [0u32; 1024];
    let mut used = 0;
    runs(&mut |run| {
        for i in 0..run.len {
            buffer[used] = run.ppn.map_or(u32::MAX, |p| p.0 + i);
            used += 1;
            if used == buffer.len() {
                hasher.u32s(&buffer);
                used = 0;
            }
        }
    });
    hasher.u32s(&buffer[..used]);
}
