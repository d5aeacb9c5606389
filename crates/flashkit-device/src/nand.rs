//! The NAND model.

use crate::store::PayloadStore;
use crate::{BlockStatus, DeviceError, FlashDevice, PageRead};
use flashkit_core::{BlockId, Cause, Geometry, OpCounters, Ppn, Stamp};

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

    fn geometry() -> Geometry {
        Geometry::builder()
            .page_size_bytes(512)
            .pages_per_block(4)
            .blocks(4)
            .build()
            .expect("ok")
    }

    fn stamp(lpn: u32, seq: u64) -> Stamp {
        Stamp::new(Lpn(lpn), seq)
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
}
