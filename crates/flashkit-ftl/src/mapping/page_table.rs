//! The page mapping table (PMT): one entry per logical page.

use super::{Mapping, MappingHints, PhysRun};
use crate::MappingMemory;
use flashkit_core::{Lpn, PageRange, Ppn, StateHasher};

const UNMAPPED: u32 = u32::MAX;

/// A flat array of physical page numbers indexed by logical page. O(1) in both directions of
/// a lookup and an update; memory linear in the logical capacity whatever the workload.
#[derive(Clone, Debug)]
pub struct PageTable {
    table: Vec<u32>,
    mapped: u64,
}

impl PageTable {
    /// A table for `logical_pages` pages, all unmapped.
    pub fn new(logical_pages: u32) -> Self {
        PageTable {
            table: flashkit_core::hint::huge_page_vec(logical_pages as usize, UNMAPPED),
            mapped: 0,
        }
    }
}

impl MappingHints for PageTable {
    #[inline(always)]
    fn prefetch(&self, lpn: Lpn) {
        flashkit_core::hint::prefetch(&self.table, lpn.index());
    }
}

impl Mapping for PageTable {
    #[inline(always)]
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        let entry = self.table[lpn.index()];
        (entry != UNMAPPED).then_some(Ppn(entry))
    }

    #[inline(always)]
    fn maps_to(&self, lpn: Lpn, ppn: Ppn) -> bool {
        // UNMAPPED never equals a page number: Geometry keeps them below u32::MAX - 1.
        self.table[lpn.index()] == ppn.0
    }

    fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun)) {
        for lpn in range.iter() {
            out(PhysRun {
                lpn,
                ppn: self.lookup(lpn),
                len: 1,
            });
        }
    }

    #[inline]
    fn update(&mut self, start: Lpn, ppn: Ppn, len: u32, invalidated: &mut impl FnMut(Ppn)) {
        let slots = &mut self.table[start.index()..start.index() + len as usize];
        for (slot, new) in slots.iter_mut().zip(ppn.0..) {
            let old = std::mem::replace(slot, new);
            if old == UNMAPPED {
                self.mapped += 1;
            } else {
                invalidated(Ppn(old));
            }
        }
    }

    #[inline(always)]
    fn relocate(&mut self, lpn: Lpn, from: Ppn, to: Ppn) {
        let slot = &mut self.table[lpn.index()];
        debug_assert_eq!(*slot, from.0, "invariant: relocated {lpn} was at {from}");
        let _ = from;
        *slot = to.0;
    }

    fn remove(&mut self, range: PageRange, invalidated: &mut impl FnMut(Ppn)) {
        let end = range.start.index() + range.count as usize;
        for slot in &mut self.table[range.start.index()..end] {
            let old = std::mem::replace(slot, UNMAPPED);
            if old != UNMAPPED {
                self.mapped -= 1;
                invalidated(Ppn(old));
            }
        }
    }

    fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    /// Packed size as the VET paper counts a PMT: 4 bytes per logical page (section 7: a
    /// 128 GB SSD of 4 KiB pages needs a 128 MB table).
    fn memory(&self) -> MappingMemory {
        MappingMemory {
            packed_bytes: self.table.len() as u64 * 4,
            heap_bytes: (self.table.capacity() * std::mem::size_of::<u32>()) as u64,
        }
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        hasher.u32s(&self.table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_reports_replaced_pages_and_remove_unmaps() {
        let mut table = PageTable::new(8);
        let mut invalid = Vec::new();
        table.update(Lpn(2), Ppn(10), 3, &mut |ppn| invalid.push(ppn));
        assert!(invalid.is_empty());
        assert_eq!(table.mapped_pages(), 3);
        table.update(Lpn(3), Ppn(20), 2, &mut |ppn| invalid.push(ppn));
        assert_eq!(invalid, vec![Ppn(11), Ppn(12)]);
        assert_eq!(table.lookup(Lpn(2)), Some(Ppn(10)));
        assert_eq!(table.lookup(Lpn(4)), Some(Ppn(21)));
        invalid.clear();
        table.remove(PageRange::new(Lpn(1), 3), &mut |ppn| invalid.push(ppn));
        assert_eq!(invalid, vec![Ppn(10), Ppn(20)]);
        assert_eq!(table.lookup(Lpn(3)), None);
        assert_eq!(table.mapped_pages(), 1);
        let mut runs = Vec::new();
        table.translate(PageRange::new(Lpn(3), 2), &mut |run| runs.push(run));
        assert_eq!(
            runs[1],
            PhysRun {
                lpn: Lpn(4),
                ppn: Some(Ppn(21)),
                len: 1
            }
        );
        assert_eq!(table.memory().packed_bytes, 32);
    }

    /// The memory the reports print (the paper's packed 4 bytes a logical page, and the heap
    /// this process holds), against the table's own size.
    #[test]
    fn memory_is_four_bytes_a_logical_page() {
        let table = PageTable::new(12_345);
        let memory = table.memory();
        assert_eq!(memory.packed_bytes, 12_345 * 4);
        assert_eq!(memory.heap_bytes, (table.table.capacity() * 4) as u64);
        assert!(memory.heap_bytes >= memory.packed_bytes);
    }
}
