//! Payload stores: what a [`crate::NandDevice`] remembers about the data in a page.

use flashkit_core::{Geometry, Lpn, Ppn, Stamp, StateHasher};

/// Keeps (or deliberately forgets) the stamp of every programmed page.
pub trait PayloadStore {
    /// A store for a device of this geometry, every page erased.
    fn for_geometry(geometry: &Geometry) -> Self
    where
        Self: Sized;

    /// Remember the stamp programmed into `ppn`.
    fn store(&mut self, ppn: Ppn, stamp: Stamp);

    /// The stamp of a programmed page, if this store keeps stamps.
    fn load(&self, ppn: Ppn) -> Option<Stamp>;

    /// Copy the payload of `from` to `to`, which now carries `stamp` (the bulk copy of
    /// [`crate::FlashDevice::copy_pages`]). Stores that keep no more than the stamp need not
    /// override it.
    #[inline(always)]
    fn copy(&mut self, from: Ppn, to: Ppn, stamp: Stamp) {
        let _ = from;
        self.store(to, stamp);
    }

    /// Feed what the store keeps of the programmed page `ppn` to `hasher` (by default its
    /// stamp, if the store keeps one).
    fn hash_page(&self, ppn: Ppn, hasher: &mut StateHasher) {
        if let Some(stamp) = self.load(ppn) {
            hasher.u32(stamp.lpn.0);
            hasher.u64(stamp.seq);
        }
    }

    /// Forget the pages `[first, first + pages)` (a block erase).
    fn erase(&mut self, first: Ppn, pages: u32);

    /// Heap bytes held.
    fn heap_bytes(&self) -> usize;

    /// The most heap bytes a store for `geometry` holds (every page programmed), for
    /// estimating a model's memory before it is built.
    fn heap_bytes_for(geometry: &Geometry) -> u64;
}

/// Keeps nothing: the device still counts operations and enforces the physics through its
/// per-block write pointers, at no per-page cost. The fastest store; use it for measurement.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountsOnly;

impl PayloadStore for CountsOnly {
    fn for_geometry(_geometry: &Geometry) -> Self {
        CountsOnly
    }

    #[inline(always)]
    fn store(&mut self, _ppn: Ppn, _stamp: Stamp) {}

    #[inline(always)]
    fn load(&self, _ppn: Ppn) -> Option<Stamp> {
        None
    }

    #[inline(always)]
    fn erase(&mut self, _first: Ppn, _pages: u32) {}

    fn heap_bytes(&self) -> usize {
        0
    }

    fn heap_bytes_for(_geometry: &Geometry) -> u64 {
        0
    }
}

/// Keeps every page's stamp (16 bytes a page), for verification against a reference model.
#[derive(Clone, Debug)]
pub struct Stamps {
    stamps: Vec<Stamp>,
}

/// The stamp an erased page holds: all ones, as erased flash reads.
const ERASED: Stamp = Stamp {
    lpn: Lpn(u32::MAX),
    seq: u64::MAX,
};

impl PayloadStore for Stamps {
    fn for_geometry(geometry: &Geometry) -> Self {
        Stamps {
            stamps: vec![ERASED; geometry.physical_pages() as usize],
        }
    }

    fn store(&mut self, ppn: Ppn, stamp: Stamp) {
        self.stamps[ppn.index()] = stamp;
    }

    fn load(&self, ppn: Ppn) -> Option<Stamp> {
        Some(self.stamps[ppn.index()])
    }

    fn erase(&mut self, first: Ppn, pages: u32) {
        self.stamps[first.index()..first.index() + pages as usize].fill(ERASED);
    }

    fn heap_bytes(&self) -> usize {
        self.stamps.capacity() * std::mem::size_of::<Stamp>()
    }

    fn heap_bytes_for(geometry: &Geometry) -> u64 {
        u64::from(geometry.physical_pages()) * std::mem::size_of::<Stamp>() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::tests::geometry;

    #[test]
    fn counts_only_holds_no_heap() {
        assert_eq!(CountsOnly::for_geometry(&geometry()).heap_bytes(), 0);
        assert_eq!(CountsOnly::heap_bytes_for(&geometry()), 0);
    }

    /// One stamp per physical page, 16 bytes each (a `u32` and a `u64`, aligned to 8),
    /// allocated up front: the estimate from the geometry is what a fresh store holds.
    #[test]
    fn stamps_hold_one_stamp_a_page() {
        assert_eq!(std::mem::size_of::<Stamp>(), 16);
        let store = Stamps::for_geometry(&geometry());
        assert_eq!(store.stamps.capacity(), 16);
        assert_eq!(store.heap_bytes(), 16 * 16);
        assert_eq!(Stamps::heap_bytes_for(&geometry()), 16 * 16);
    }

    /// The store's own contract, which no `NandDevice` read shows (the device answers a
    /// page past a block's write pointer as erased without asking the store): an erase
    /// forgets exactly its pages, which then hold the all-ones stamp of erased flash.
    #[test]
    fn stamps_erase_forgets_exactly_its_pages() {
        let mut store = Stamps::for_geometry(&geometry());
        for page in 3..9 {
            store.store(Ppn(page), Stamp::new(Lpn(page), 1));
        }
        store.erase(Ppn(4), 4);
        for page in 4..8 {
            assert_eq!(store.load(Ppn(page)), Some(ERASED), "page {page}");
        }
        for page in [3, 8] {
            assert_eq!(store.load(Ppn(page)), Some(Stamp::new(Lpn(page), 1)));
        }
    }
}
