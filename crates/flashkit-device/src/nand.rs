//! The NAND model.

use crate::store::PayloadStore;
use crate::{BlockStatus, DeviceError, FlashDevice, PageRead};
use flashkit_core::{BlockId, Cause, Geometry, Lpn, OpCounters, Ppn, Stamp, StateHasher};

/// Per-block physical state: 8 bytes a block.
#[derive(Clone, Copy, Debug, Default)]
struct BlockState {
    erase_count: u32,
    /// Pages programmed since the last erase; `BAD` once the block has failed.
    write_pointer: u32,
}

const BAD: u32 = u32::MAX;

/// A NAND flash device with payload store `S`.
///
/// Erase-before-write and in-order programming are enforced with the per-block write
/// pointer alone: a page is programmed exactly when its offset is below the pointer, and the
/// only page that may be programmed is the one at the pointer.
#[derive(Clone, Debug)]
pub struct NandDevice<S> {
    geometry: Geometry,
    blocks: Vec<BlockState>,
    counters: OpCounters,
    endurance_cycles: u32,
    store: S,
}

impl<S: PayloadStore> NandDevice<S> {
    /// A fresh device, every block erased, with unlimited endurance.
    pub fn new(geometry: Geometry) -> Self {
        NandDevice {
            geometry,
            blocks: vec![BlockState::default(); geometry.blocks() as usize],
            counters: OpCounters::default(),
            endurance_cycles: u32::MAX,
            store: S::for_geometry(&geometry),
        }
    }

    /// The most heap bytes a device of `geometry` holds (its block states and a store with
    /// every page programmed): [`FlashDevice::heap_bytes`] never exceeds it.
    pub fn heap_estimate(geometry: &Geometry) -> u64 {
        u64::from(geometry.blocks()) * std::mem::size_of::<BlockState>() as u64
            + S::heap_bytes_for(geometry)
    }

    /// The payload store, for store-specific accessors in this crate.
    pub(crate) fn store(&self) -> &S {
        &self.store
    }

    /// The payload store, mutably: only for stores that record more than the stamp after the
    /// physics of a program have been checked (`page_bytes.rs`).
    pub(crate) fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Feed the device's whole state to `hasher`: each block's erase count and write
    /// pointer (or that it is bad), what the store keeps of every programmed page, and the
    /// operation counters. Two devices that hash alike read alike.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        for (b, state) in self.blocks.iter().enumerate() {
            hasher.u32(state.erase_count);
            hasher.u32(state.write_pointer);
            if state.write_pointer != BAD {
                for offset in 0..state.write_pointer {
                    let ppn = self.geometry.ppn(BlockId(b as u32), offset);
                    self.store.hash_page(ppn, hasher);
                }
            }
        }
        hasher.u32(self.endurance_cycles);
        hasher.counters(&self.counters);
    }

    /// Account for `pages` pages copied into `dest`: as many reads and programs.
    fn finish_copy(&mut self, dest: BlockId, pages: u32, cause: Cause) {
        self.blocks[dest.index()].write_pointer += pages;
        self.counters.reads[cause] += u64::from(pages);
        self.counters.programs[cause] += u64::from(pages);
    }

    /// Limit every block to `cycles` erases; the erase after the last allowed one fails with
    /// [`DeviceError::WornOut`] and the block goes bad.
    pub fn with_endurance(mut self, cycles: u32) -> Self {
        self.endurance_cycles = cycles;
        self
    }

    #[inline(always)]
    fn locate(&self, ppn: Ppn) -> (BlockId, u32) {
        assert!(
            ppn.0 < self.geometry.physical_pages(),
            "{ppn} is beyond the device's {} pages",
            self.geometry.physical_pages()
        );
        (self.geometry.block_of(ppn), self.geometry.page_offset(ppn))
    }
}

impl<S: PayloadStore> FlashDevice for NandDevice<S> {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    #[inline]
    fn read(&mut self, ppn: Ppn, cause: Cause) -> Result<PageRead, DeviceError> {
        let (block, offset) = self.locate(ppn);
        let state = self.blocks[block.index()];
        if state.write_pointer == BAD {
            return Err(DeviceError::BadBlock { block });
        }
        self.counters.reads[cause] += 1;
        Ok(if offset < state.write_pointer {
            PageRead::Programmed(self.store.load(ppn))
        } else {
            PageRead::Erased
        })
    }

    #[inline]
    fn program(&mut self, ppn: Ppn, stamp: Stamp, cause: Cause) -> Result<(), DeviceError> {
        let (block, offset) = self.locate(ppn);
        let state = &mut self.blocks[block.index()];
        if state.write_pointer == BAD {
            return Err(DeviceError::BadBlock { block });
        }
        if offset != state.write_pointer {
            program_violation(ppn, block, offset, state.write_pointer);
        }
        state.write_pointer += 1;
        self.counters.programs[cause] += 1;
        self.store.store(ppn, stamp);
        Ok(())
    }

    fn copy_pages(
        &mut self,
        pages: &[(Lpn, Ppn)],
        to: Ppn,
        cause: Cause,
    ) -> Result<u32, (u32, DeviceError)> {
        if pages.is_empty() {
            return Ok(0);
        }
        let (dest, offset) = self.locate(to);
        let n = pages.len() as u32;
        assert!(
            offset + n <= self.geometry.pages_per_block(),
            "copy of {n} pages from {to} runs past the end of {dest}"
        );
        let dest_state = self.blocks[dest.index()];
        if dest_state.write_pointer == BAD {
            return Err((0, DeviceError::BadBlock { block: dest }));
        }
        if offset != dest_state.write_pointer {
            program_violation(to, dest, offset, dest_state.write_pointer);
        }
        // Sources usually all lie in one victim block: check each source block once, and
        // find a source's offset by subtraction while it stays inside that block.
        let ppb = self.geometry.pages_per_block();
        // (first page of the checked block, its write pointer); `checked` is false until the
        // first source has been located.
        let mut current = (0u32, 0u32);
        let mut checked = false;
        for (i, &(lpn, from)) in pages.iter().enumerate() {
            let mut page = from.0.wrapping_sub(current.0);
            if !checked || page >= ppb {
                checked = true;
                let (block, offset) = self.locate(from);
                let write_pointer = self.blocks[block.index()].write_pointer;
                if write_pointer == BAD {
                    self.finish_copy(dest, i as u32, cause);
                    return Err((i as u32, DeviceError::BadBlock { block }));
                }
                current = (from.0 - offset, write_pointer);
                page = offset;
            }
            assert!(page < current.1, "copy of {from}, which is erased");
            let stamp = match self.store.load(from) {
                Some(stamp) => {
                    assert_eq!(
                        stamp.lpn, lpn,
                        "the OOB of {from} names {} but {lpn} was expected",
                        stamp.lpn
                    );
                    stamp
                }
                None => Stamp::new(lpn, 0),
            };
            self.store.copy(from, Ppn(to.0 + i as u32), stamp);
        }
        self.finish_copy(dest, n, cause);
        Ok(n)
    }

    fn copy_range(
        &mut self,
        from: Ppn,
        first_lpn: Lpn,
        pages: u32,
        to: Ppn,
        cause: Cause,
    ) -> Result<u32, (u32, DeviceError)> {
        if pages == 0 {
            return Ok(0);
        }
        let (dest, offset) = self.locate(to);
        let (source, first) = self.locate(from);
        let ppb = self.geometry.pages_per_block();
        assert!(
            offset + pages <= ppb && first + pages <= ppb,
            "copy of {pages} pages from {from} to {to} runs past the end of a block"
        );
        let dest_state = self.blocks[dest.index()];
        if dest_state.write_pointer == BAD {
            return Err((0, DeviceError::BadBlock { block: dest }));
        }
        if offset != dest_state.write_pointer {
            program_violation(to, dest, offset, dest_state.write_pointer);
        }
        let source_pointer = self.blocks[source.index()].write_pointer;
        if source_pointer == BAD {
            return Err((0, DeviceError::BadBlock { block: source }));
        }
        // The whole run is checked at once: every source page must be programmed.
        assert!(
            first + pages <= source_pointer,
            "copy of {}, which is erased",
            Ppn(from.0 + source_pointer.max(first) - first)
        );
        // Without stamps the loop does nothing and compiles away.
        for i in 0..pages {
            let (lpn, page) = (Lpn(first_lpn.0 + i), Ppn(from.0 + i));
            let stamp = match self.store.load(page) {
                Some(stamp) => {
                    assert_eq!(
                        stamp.lpn, lpn,
                        "the OOB of {page} names {} but {lpn} was expected",
                        stamp.lpn
                    );
                    stamp
                }
                None => Stamp::new(lpn, 0),
            };
            // `copy`, not `store`: a store that keeps the page's bytes copies them too.
            self.store.copy(page, Ppn(to.0 + i), stamp);
        }
        self.finish_copy(dest, pages, cause);
        Ok(pages)
    }

    fn erase(&mut self, block: BlockId, cause: Cause) -> Result<(), DeviceError> {
        assert!(
            block.0 < self.geometry.blocks(),
            "{block} is beyond the device's blocks"
        );
        let state = &mut self.blocks[block.index()];
        if state.write_pointer == BAD {
            return Err(DeviceError::BadBlock { block });
        }
        if state.erase_count >= self.endurance_cycles {
            state.write_pointer = BAD;
            return Err(DeviceError::WornOut {
                block,
                erase_count: state.erase_count,
            });
        }
        state.erase_count += 1;
        state.write_pointer = 0;
        self.counters.erases[cause] += 1;
        let ppb = self.geometry.pages_per_block();
        self.store.erase(self.geometry.first_ppn(block), ppb);
        Ok(())
    }

    fn counters(&self) -> &OpCounters {
        &self.counters
    }

    fn block_status(&self, block: BlockId) -> BlockStatus {
        let state = self.blocks[block.index()];
        BlockStatus {
            erase_count: state.erase_count,
            programmed_pages: if state.write_pointer == BAD {
                0
            } else {
                state.write_pointer
            },
            bad: state.write_pointer == BAD,
        }
    }

    fn peek(&self, ppn: Ppn) -> PageRead {
        let (block, offset) = self.locate(ppn);
        let state = self.blocks[block.index()];
        if state.write_pointer != BAD && offset < state.write_pointer {
            PageRead::Programmed(self.store.load(ppn))
        } else {
            PageRead::Erased
        }
    }

    fn endurance_cycles(&self) -> u32 {
        self.endurance_cycles
    }

    fn heap_bytes(&self) -> usize {
        self.blocks.capacity() * std::mem::size_of::<BlockState>() + self.store.heap_bytes()
    }
}

#[cold]
#[inline(never)]
fn program_violation(ppn: Ppn, block: BlockId, offset: u32, write_pointer: u32) -> ! {
    if offset < write_pointer {
        panic!(
            "erase-before-write violated: program of {ppn} (page {offset} of {block}), which \
             was already programmed since the block's last erase"
        );
    }
    panic!(
        "out-of-order program: {ppn} is page {offset} of {block}, but the next page to \
         program there is {write_pointer}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CountsOnly, Stamps};
    use flashkit_core::Lpn;

    use crate::tests::geometry;

    fn stamp(lpn: u32, seq: u64) -> Stamp {
        Stamp::new(Lpn(lpn), seq)
    }

    fn hash<S: PayloadStore>(dev: &NandDevice<S>) -> u64 {
        let mut hasher = StateHasher::new();
        dev.hash_state(&mut hasher);
        hasher.finish()
    }

    /// Every part of a device's state reaches its state hash, each in a place of its own:
    /// each block's erase count and write pointer, a bad block, the endurance, the counters,
    /// and the stamps a store keeps (a store that keeps none hashes none).
    #[test]
    fn every_part_of_the_state_reaches_the_state_hash() {
        let written = || {
            let mut dev = NandDevice::<Stamps>::new(geometry());
            dev.program(Ppn(4), stamp(9, 1), Cause::Host)
                .expect("program");
            dev
        };
        // Page 4 programmed again with `stamp`, its erase taken back out of the counts.
        fn restamp(dev: &mut NandDevice<Stamps>, stamp: Stamp) {
            dev.erase(BlockId(1), Cause::Host).expect("erase");
            dev.program(Ppn(4), stamp, Cause::Host).expect("program");
            dev.counters.erases.host = 0;
            dev.blocks[1].erase_count = 0;
        }
        let base = hash(&written());
        assert_eq!(hash(&written()), base, "the same writes, the same hash");
        type Change = (&'static str, fn(&mut NandDevice<Stamps>));
        let changes: [Change; 8] = [
            ("a stamp's page", |dev| restamp(dev, stamp(8, 1))),
            ("a stamp's sequence", |dev| restamp(dev, stamp(9, 2))),
            ("a write pointer", |dev| dev.blocks[2].write_pointer = 1),
            ("an erase count", |dev| dev.blocks[0].erase_count = 5),
            ("which block's erase count", |dev| {
                dev.blocks[2].erase_count = 5
            }),
            ("a bad block", |dev| dev.blocks[1].write_pointer = BAD),
            ("the endurance", |dev| dev.endurance_cycles = 10),
            ("the counters", |dev| dev.counters.erases.metadata = 1),
        ];
        let mut seen = vec![base];
        for (part, change) in changes {
            let mut dev = written();
            change(&mut dev);
            let h = hash(&dev);
            assert!(
                !seen.contains(&h),
                "{part} does not reach the state hash on its own"
            );
            seen.push(h);
        }
        let mut counts_only = NandDevice::<CountsOnly>::new(geometry());
        let blank = hash(&counts_only);
        counts_only
            .program(Ppn(4), stamp(9, 1), Cause::Host)
            .expect("program");
        counts_only.counters = OpCounters::default();
        assert_ne!(hash(&counts_only), blank, "the write pointer moved");
    }

    #[test]
    fn program_read_erase_round_trip_keeps_stamps() {
        let mut dev = NandDevice::<Stamps>::new(geometry());
        assert_eq!(dev.read(Ppn(4), Cause::Host), Ok(PageRead::Erased));
        dev.program(Ppn(4), stamp(9, 1), Cause::Host)
            .expect("program");
        dev.program(Ppn(5), stamp(3, 2), Cause::Gc)
            .expect("program");
        assert_eq!(
            dev.read(Ppn(4), Cause::Host),
            Ok(PageRead::Programmed(Some(stamp(9, 1))))
        );
        assert_eq!(dev.peek(Ppn(5)), PageRead::Programmed(Some(stamp(3, 2))));
        assert_eq!(dev.peek(Ppn(6)), PageRead::Erased);
        dev.erase(BlockId(1), Cause::Gc).expect("erase");
        assert_eq!(dev.peek(Ppn(4)), PageRead::Erased);
        let counters = dev.counters();
        assert_eq!(
            (
                counters.reads.host,
                counters.programs.host,
                counters.programs.gc
            ),
            (2, 1, 1)
        );
        assert_eq!(counters.erases.gc, 1);
        assert_eq!(dev.block_status(BlockId(1)).erase_count, 1);
        assert_eq!(dev.block_status(BlockId(1)).programmed_pages, 0);
    }

    #[test]
    fn counts_only_store_reads_back_no_stamp() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        dev.program(Ppn(0), stamp(1, 1), Cause::Host)
            .expect("program");
        assert_eq!(
            dev.read(Ppn(0), Cause::Host),
            Ok(PageRead::Programmed(None))
        );
        assert_eq!(dev.read(Ppn(1), Cause::Host), Ok(PageRead::Erased));
    }

    #[test]
    #[should_panic(expected = "erase-before-write violated")]
    fn programming_a_written_page_panics() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        dev.program(Ppn(0), stamp(1, 1), Cause::Host)
            .expect("program");
        dev.program(Ppn(1), stamp(1, 2), Cause::Host)
            .expect("program");
        let _ = dev.program(Ppn(0), stamp(1, 3), Cause::Host);
    }

    #[test]
    #[should_panic(expected = "out-of-order program")]
    fn programming_out_of_order_panics() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        dev.program(Ppn(0), stamp(1, 1), Cause::Host)
            .expect("program");
        let _ = dev.program(Ppn(2), stamp(1, 2), Cause::Host);
    }

    #[test]
    #[should_panic(expected = "beyond the device")]
    fn programming_beyond_the_device_panics() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        let _ = dev.program(Ppn(16), stamp(1, 1), Cause::Host);
    }

    #[test]
    fn erase_makes_every_page_programmable_again_in_order() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        for offset in 0..4 {
            dev.program(Ppn(offset), stamp(offset, 1), Cause::Host)
                .expect("program");
        }
        dev.erase(BlockId(0), Cause::Gc).expect("erase");
        dev.program(Ppn(0), stamp(0, 2), Cause::Host)
            .expect("program after erase");
    }

    #[test]
    fn a_block_wears_out_after_its_endurance_and_stays_bad() {
        let mut dev = NandDevice::<Stamps>::new(geometry()).with_endurance(3);
        for _ in 0..3 {
            dev.erase(BlockId(2), Cause::Gc).expect("within endurance");
        }
        assert_eq!(
            dev.erase(BlockId(2), Cause::Gc),
            Err(DeviceError::WornOut {
                block: BlockId(2),
                erase_count: 3
            })
        );
        assert!(dev.block_status(BlockId(2)).bad);
        assert_eq!(
            dev.erase(BlockId(2), Cause::Gc),
            Err(DeviceError::BadBlock { block: BlockId(2) })
        );
        assert_eq!(
            dev.program(Ppn(8), stamp(0, 1), Cause::Host),
            Err(DeviceError::BadBlock { block: BlockId(2) })
        );
        assert_eq!(
            dev.read(Ppn(8), Cause::Host),
            Err(DeviceError::BadBlock { block: BlockId(2) })
        );
        assert_eq!(
            dev.counters().erases.gc,
            3,
            "the failed erase is not counted as done"
        );
        // Other blocks are unaffected.
        dev.erase(BlockId(1), Cause::Gc).expect("healthy block");
    }

    /// The endurance a device reports is the limit it was given and the one it enforces:
    /// the erase after that many fails, and the worn-out block's erase count equals it.
    #[test]
    fn endurance_cycles_is_the_limit_that_wears_blocks_out() {
        let unlimited = NandDevice::<CountsOnly>::new(geometry());
        assert_eq!(
            unlimited.endurance_cycles(),
            u32::MAX,
            "unlimited by default"
        );
        let mut dev = NandDevice::<CountsOnly>::new(geometry()).with_endurance(2);
        assert_eq!(dev.endurance_cycles(), 2);
        // A bounded loop: a mutant whose erases never fail must not hang the test.
        for _ in 0..2 {
            dev.erase(BlockId(3), Cause::Gc).expect("within endurance");
        }
        assert!(dev.erase(BlockId(3), Cause::Gc).is_err(), "the third erase");
        let status = dev.block_status(BlockId(3));
        assert!(status.bad);
        assert_eq!(status.erase_count, dev.endurance_cycles());
    }

    /// The model's heap, counted allocation by allocation: the block-state vector (a block
    /// state is two `u32`s, the "8 bytes a block" of its doc) and the store's stamps (16
    /// bytes a page: a `u32` and a `u64`, aligned to 8). `CountsOnly` allocates nothing.
    #[test]
    fn heap_bytes_count_the_block_states_and_the_store() {
        assert_eq!(std::mem::size_of::<BlockState>(), 8);
        assert_eq!(std::mem::size_of::<Stamp>(), 16);
        let counts = NandDevice::<CountsOnly>::new(geometry());
        assert_eq!(counts.heap_bytes(), counts.blocks.capacity() * 8);
        let stamps = NandDevice::<Stamps>::new(geometry());
        let pages = geometry().physical_pages() as usize;
        assert_eq!(
            stamps.heap_bytes(),
            stamps.blocks.capacity() * 8 + pages * 16
        );
    }

    /// The estimate made from the geometry alone, before a device is built: 4 blocks of 8
    /// bytes, and for `Stamps` 16 pages of 16 bytes (allocated up front, so a fresh device
    /// already holds all of it).
    #[test]
    fn heap_estimate_from_the_geometry() {
        assert_eq!(NandDevice::<CountsOnly>::heap_estimate(&geometry()), 4 * 8);
        assert_eq!(
            NandDevice::<Stamps>::heap_estimate(&geometry()),
            4 * 8 + 16 * 16
        );
        let fresh = NandDevice::<Stamps>::new(geometry());
        assert_eq!(fresh.heap_bytes() as u64, 4 * 8 + 16 * 16);
    }
}

#[cfg(test)]
mod copy_tests {
    use super::*;
    use crate::{CountsOnly, PayloadStore, Stamps};

    use crate::tests::geometry;

    /// A device that keeps the trait's default `copy_pages` and `copy_range` (the read and
    /// program loop) and delegates everything else to a `NandDevice`, whose overrides must
    /// be indistinguishable from those defaults.
    struct Plain(NandDevice<Stamps>);

    impl FlashDevice for Plain {
        fn geometry(&self) -> &Geometry {
            self.0.geometry()
        }
        fn read(&mut self, p: Ppn, c: Cause) -> Result<PageRead, DeviceError> {
            self.0.read(p, c)
        }
        fn program(&mut self, p: Ppn, s: Stamp, c: Cause) -> Result<(), DeviceError> {
            self.0.program(p, s, c)
        }
        fn erase(&mut self, b: BlockId, c: Cause) -> Result<(), DeviceError> {
            self.0.erase(b, c)
        }
        fn counters(&self) -> &OpCounters {
            self.0.counters()
        }
        fn block_status(&self, b: BlockId) -> crate::BlockStatus {
            self.0.block_status(b)
        }
        fn peek(&self, p: Ppn) -> PageRead {
            self.0.peek(p)
        }
        fn endurance_cycles(&self) -> u32 {
            self.0.endurance_cycles()
        }
        fn heap_bytes(&self) -> usize {
            self.0.heap_bytes()
        }
    }

    /// The batched copy must be indistinguishable from the read/program loop it replaces.
    #[test]
    fn copy_pages_matches_reads_and_programs() {
        let mut fast = NandDevice::<Stamps>::new(geometry());
        let mut plain = Plain(NandDevice::<Stamps>::new(geometry()));
        for dev in [&mut fast as &mut dyn FlashDevice, &mut plain] {
            for p in 0..4 {
                dev.program(Ppn(p), Stamp::new(Lpn(10 + p), 1), Cause::Host)
                    .expect("program");
            }
            dev.program(Ppn(4), Stamp::new(Lpn(99), 2), Cause::Host)
                .expect("program");
            let pages = [(Lpn(11), Ppn(1)), (Lpn(13), Ppn(3))];
            assert_eq!(dev.copy_pages(&pages, Ppn(5), Cause::Gc), Ok(2));
        }
        assert_eq!(fast.counters(), plain.counters());
        for p in 0..8 {
            assert_eq!(fast.peek(Ppn(p)), plain.peek(Ppn(p)), "page {p}");
        }
        assert_eq!(
            fast.peek(Ppn(6)),
            PageRead::Programmed(Some(Stamp::new(Lpn(13), 1)))
        );
    }

    /// The trait's default run copy (what a device without its own `copy_range` does) must
    /// copy exactly the pages an explicit `copy_pages` list names: the run starts at a page
    /// and a logical page other than 0, so an offset that is not added to both is caught by
    /// the OOB check or by the pages it lands on.
    #[test]
    fn default_copy_range_matches_copy_pages() {
        fn prepare(dev: &mut dyn FlashDevice) {
            for p in 0..4 {
                dev.program(Ppn(4 + p), Stamp::new(Lpn(20 + p), 7), Cause::Host)
                    .expect("program");
            }
            dev.program(Ppn(8), Stamp::new(Lpn(99), 1), Cause::Host)
                .expect("program");
        }
        let mut plain = Plain(NandDevice::<Stamps>::new(geometry()));
        prepare(&mut plain);
        assert_eq!(
            plain.copy_range(Ppn(5), Lpn(21), 3, Ppn(9), Cause::Gc),
            Ok(3)
        );
        let mut listed = NandDevice::<Stamps>::new(geometry());
        prepare(&mut listed);
        let pages = [(Lpn(21), Ppn(5)), (Lpn(22), Ppn(6)), (Lpn(23), Ppn(7))];
        assert_eq!(listed.copy_pages(&pages, Ppn(9), Cause::Gc), Ok(3));
        assert_eq!(plain.counters(), listed.counters());
        for p in 0..16 {
            assert_eq!(plain.peek(Ppn(p)), listed.peek(Ppn(p)), "page {p}");
        }
        assert_eq!(
            plain.peek(Ppn(11)),
            PageRead::Programmed(Some(Stamp::new(Lpn(23), 7)))
        );
        assert_eq!(plain.block_status(BlockId(2)).programmed_pages, 4);
    }

    /// The run copy must be indistinguishable from the per-page copy it replaces, on every
    /// counter and every page, with and without stamps.
    #[test]
    fn copy_range_matches_copy_pages() {
        fn run<S: PayloadStore>(ranged: bool) -> NandDevice<S> {
            let mut dev = NandDevice::<S>::new(geometry());
            for p in 0..4 {
                dev.program(Ppn(4 + p), Stamp::new(Lpn(20 + p), 7), Cause::Host)
                    .expect("program");
            }
            dev.program(Ppn(8), Stamp::new(Lpn(99), 1), Cause::Host)
                .expect("program");
            let copied = if ranged {
                dev.copy_range(Ppn(5), Lpn(21), 3, Ppn(9), Cause::Gc)
            } else {
                let pages: Vec<_> = (0..3).map(|i| (Lpn(21 + i), Ppn(5 + i))).collect();
                dev.copy_pages(&pages, Ppn(9), Cause::Gc)
            };
            assert_eq!(copied, Ok(3));
            dev
        }
        let (a, b) = (run::<Stamps>(true), run::<Stamps>(false));
        assert_eq!(a.counters(), b.counters());
        for p in 0..16 {
            assert_eq!(a.peek(Ppn(p)), b.peek(Ppn(p)), "page {p}");
        }
        assert_eq!(
            a.peek(Ppn(11)),
            PageRead::Programmed(Some(Stamp::new(Lpn(23), 7)))
        );
        let (a, b) = (run::<CountsOnly>(true), run::<CountsOnly>(false));
        assert_eq!(a.counters(), b.counters());
        assert_eq!(a.block_status(BlockId(2)), b.block_status(BlockId(2)));
    }

    #[test]
    #[should_panic(expected = "which is erased")]
    fn copy_range_refuses_erased_sources() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        dev.program(Ppn(0), Stamp::new(Lpn(1), 1), Cause::Host)
            .expect("program");
        let _ = dev.copy_range(Ppn(0), Lpn(1), 2, Ppn(4), Cause::Gc);
    }

    /// An erased source after the first, in the same block: found by subtraction from the
    /// block's first page. Found by mutation testing: the first page was computed by
    /// addition, which only a first source at offset 0 gets right, and a later erased source
    /// passed as programmed.
    #[test]
    #[should_panic(expected = "copy of ppn 7, which is erased")]
    fn copy_pages_refuses_an_erased_source_past_the_first() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        for page in [4, 5] {
            dev.program(Ppn(page), Stamp::new(Lpn(page), 1), Cause::Host)
                .expect("program");
        }
        let _ = dev.copy_pages(&[(Lpn(5), Ppn(5)), (Lpn(7), Ppn(7))], Ppn(8), Cause::Gc);
    }

    #[test]
    #[should_panic(expected = "names lpn 1 but lpn 2 was expected")]
    fn copy_range_checks_the_oob() {
        let mut dev = NandDevice::<Stamps>::new(geometry());
        dev.program(Ppn(0), Stamp::new(Lpn(1), 1), Cause::Host)
            .expect("program");
        let _ = dev.copy_range(Ppn(0), Lpn(2), 1, Ppn(4), Cause::Gc);
    }

    /// Regression: the first version's "no block yet" sentinel wrapped around, so a copy of
    /// page 0 from a block holding one page was refused as erased. Found by the benchmark.
    #[test]
    fn copy_pages_from_the_first_pages_of_the_device() {
        let mut dev = NandDevice::<Stamps>::new(geometry());
        dev.program(Ppn(0), Stamp::new(Lpn(7), 1), Cause::Host)
            .expect("program");
        assert_eq!(
            dev.copy_pages(&[(Lpn(7), Ppn(0))], Ppn(4), Cause::Gc),
            Ok(1)
        );
        assert_eq!(
            dev.peek(Ppn(4)),
            PageRead::Programmed(Some(Stamp::new(Lpn(7), 1)))
        );
    }

    #[test]
    #[should_panic(expected = "names lpn 10 but lpn 11 was expected")]
    fn copy_pages_checks_the_oob() {
        let mut dev = NandDevice::<Stamps>::new(geometry());
        dev.program(Ppn(0), Stamp::new(Lpn(10), 1), Cause::Host)
            .expect("program");
        let _ = dev.copy_pages(&[(Lpn(11), Ppn(0))], Ppn(4), Cause::Gc);
    }

    #[test]
    #[should_panic(expected = "erase-before-write violated")]
    fn copy_pages_enforces_erase_before_write() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry());
        dev.program(Ppn(0), Stamp::new(Lpn(10), 1), Cause::Host)
            .expect("program");
        dev.program(Ppn(4), Stamp::new(Lpn(11), 1), Cause::Host)
            .expect("program");
        let _ = dev.copy_pages(&[(Lpn(10), Ppn(0))], Ppn(4), Cause::Gc);
    }

    #[test]
    fn copy_pages_from_a_bad_block_is_an_error_after_the_good_ones() {
        let mut dev = NandDevice::<CountsOnly>::new(geometry()).with_endurance(0);
        dev.program(Ppn(0), Stamp::new(Lpn(1), 1), Cause::Host)
            .expect("program");
        assert!(
            dev.erase(BlockId(2), Cause::Gc).is_err(),
            "block 2 goes bad"
        );
        let pages = [(Lpn(1), Ppn(0)), (Lpn(2), Ppn(8))];
        assert_eq!(
            dev.copy_pages(&pages, Ppn(4), Cause::Gc),
            Err((1, DeviceError::BadBlock { block: BlockId(2) }))
        );
        assert_eq!(dev.counters().programs.gc, 1);
        assert_eq!(dev.block_status(BlockId(1)).programmed_pages, 1);
    }
}
