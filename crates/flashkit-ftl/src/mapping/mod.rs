//! Logical-to-physical mapping schemes used inside the page-mapped FTL.
//!
//! A [`Mapping`] translates logical ranges to physical runs and records that a logical range
//! now lives in a physical run, reporting every physical page the update invalidated. The
//! page FTL owns allocation, garbage collection and the reverse map; the mapping owns only
//! the forward map, so the page table, the Virtual Extent Trie and the Extent Mapping Tree
//! can be compared under one FTL, one GC and one trace.

mod page_table;

pub use page_table::PageTable;

use crate::MappingMemory;
use flashkit_core::{Lpn, PageRange, Ppn, StateHasher};

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

/// A forward map from logical pages to physical pages.
pub trait Mapping {
    /// The physical page of `lpn`, if mapped.
    fn lookup(&self, lpn: Lpn) -> Option<Ppn>;

    /// Whether `lpn` maps to exactly `ppn` (the page FTL's validity test).
    #[inline(always)]
    fn maps_to(&self, lpn: Lpn, ppn: Ppn) -> bool {
        self.lookup(lpn) == Some(ppn)
    }

    /// Cover `range` with runs, in logical order.
    fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun));

    /// Map `[start, start + len)` to `[ppn, ppn + len)`; call `invalidated` with every
    /// physical page that held one of these logical pages before.
    fn update(&mut self, start: Lpn, ppn: Ppn, len: u32, invalidated: &mut impl FnMut(Ppn));

    /// Garbage collection moved `lpn` from `from` to `to`. The caller guarantees that `lpn`
    /// maps to `from`, and accounts for `from` itself, so nothing is reported back.
    #[inline]
    fn relocate(&mut self, lpn: Lpn, from: Ppn, to: Ppn) {
        self.update(lpn, to, 1, &mut |old| {
            debug_assert_eq!(old, from, "invariant: relocated {lpn} was at {from}");
        });
    }

    /// Unmap `range`; call `invalidated` with every physical page it held.
    fn remove(&mut self, range: PageRange, invalidated: &mut impl FnMut(Ppn));

    /// Hint that `lpn` will be looked up or updated soon (no effect on results).
    #[inline(always)]
    fn prefetch(&self, _lpn: Lpn) {}

    /// Pages currently mapped.
    fn mapped_pages(&self) -> u64;

    /// Memory held.
    fn memory(&self) -> MappingMemory;

    /// Feed the mapping's content to `hasher`.
    fn hash_state(&self, hasher: &mut StateHasher);
}
