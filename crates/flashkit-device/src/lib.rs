//! flashkit-device: simulated flash parts.
//!
//! [`FlashDevice`] is the NAND contract every FTL is written against: read a page, program a
//! page (with its out-of-band [`Stamp`]), erase a block, and count all three by [`Cause`].
//! [`NandDevice`] implements it and enforces the physics: programming a page that has not
//! been erased since it was last programmed, or out of order inside its block, is a bug in
//! the caller and panics; a block that has used up its erase cycles is a modelled failure and
//! comes back as [`DeviceError::WornOut`].
//!
//! What this layer is not: it knows nothing of logical addresses, mapping or garbage
//! collection, and it keeps no wall clock. Time is derived from the counters by
//! [`flashkit_core::Timing`].
//!
//! Key decision: the payload is pluggable ([`PayloadStore`]). [`CountsOnly`] keeps nothing but
//! the per-block write pointer and erase count, so a 16 GiB device costs a few hundred KiB
//! and the benchmark runs at memory speed; [`Stamps`] keeps each page's stamp so that the
//! reference model can check every read; [`PageBytes`] keeps each page's bytes too, for the
//! NAND B-tree, which must be found again from what it wrote.
//!
//! Beside it, [`NorDevice`] models NOR flash (word reads, bit-clearing word programs, block
//! erase), the part NOR-flash indexes are built on; it is a type of its own, not a
//! [`FlashDevice`], because NOR has no pages and no out-of-band area.

mod nand;
pub mod nor;
mod page_bytes;
mod store;

pub use nand::NandDevice;
pub use nor::{NorDevice, NorGeometry, NorGeometryError, NorPreset, WordAddr};
pub use page_bytes::{PageBytes, PageData};
pub use store::{CountsOnly, PayloadStore, Stamps};

use flashkit_core::{BlockId, Cause, Geometry, Lpn, OpCounters, Ppn, Stamp};
use thiserror::Error;

/// What a page read returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageRead {
    /// The page has not been programmed since its block was last erased (all ones).
    Erased,
    /// The page holds data; its stamp when the payload store keeps stamps.
    Programmed(Option<Stamp>),
}

impl PageRead {
    /// The stamp, if the page is programmed and the store keeps stamps.
    pub fn stamp(self) -> Option<Stamp> {
        match self {
            PageRead::Programmed(stamp) => stamp,
            PageRead::Erased => None,
        }
    }
}

/// The state of one erase block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockStatus {
    /// Successful erases so far.
    pub erase_count: u32,
    /// Pages programmed since the last erase (the write pointer).
    pub programmed_pages: u32,
    /// The block failed (worn out) and must not be used again.
    pub bad: bool,
}

/// A modelled device failure. Caller bugs are not errors: they panic.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum DeviceError {
    /// The block has used up its erase cycles; it is now bad.
    #[error("{block} wore out after {erase_count} erase cycles")]
    WornOut {
        /// The block.
        block: BlockId,
        /// Its erase count.
        erase_count: u32,
    },
    /// The block was retired earlier and cannot be used.
    #[error("{block} is a bad block")]
    BadBlock {
        /// The block.
        block: BlockId,
    },
}

/// The NAND contract. A read or program addresses a physical page; an erase addresses a
/// block. Every operation names its cause so that write amplification and the cost of
/// garbage collection can be reported separately.
pub trait FlashDevice {
    /// The part's geometry.
    fn geometry(&self) -> &Geometry;

    /// Read a page.
    fn read(&mut self, ppn: Ppn, cause: Cause) -> Result<PageRead, DeviceError>;

    /// Program the next free page of a block with `stamp` in its OOB area.
    ///
    /// # Panics
    /// If the page was programmed since its block's last erase, or is not the next page in
    /// its block (pages inside a block are programmed in order).
    fn program(&mut self, ppn: Ppn, stamp: Stamp, cause: Cause) -> Result<(), DeviceError>;

    /// Copy pages to consecutive free pages of one block, starting at `to`: for each
    /// `(lpn, from)` in order, read `from` and program the next page with its data and stamp.
    /// Counts one read and one program per page under `cause`, exactly as the loop of reads
    /// and programs it replaces; devices override it only to do the checks once per run.
    ///
    /// Returns the number of pages copied; on a modelled failure, the pages copied before it
    /// and the error.
    ///
    /// # Panics
    /// As [`FlashDevice::program`] for the destination pages, if a source page is erased,
    /// or if a source page's stamp (when kept) names another logical page than its `lpn`.
    fn copy_pages(
        &mut self,
        pages: &[(Lpn, Ppn)],
        to: Ppn,
        cause: Cause,
    ) -> Result<u32, (u32, DeviceError)> {
        for (i, &(lpn, from)) in pages.iter().enumerate() {
            let fail = |error| (i as u32, error);
            let stamp = match self.read(from, cause).map_err(fail)? {
                PageRead::Programmed(Some(stamp)) => {
                    assert_eq!(
                        stamp.lpn, lpn,
                        "the OOB of {from} names {} but {lpn} was expected",
                        stamp.lpn
                    );
                    stamp
                }
                PageRead::Programmed(None) => Stamp::new(lpn, 0),
                PageRead::Erased => panic!("copy of {from}, which is erased"),
            };
            self.program(Ppn(to.0 + i as u32), stamp, cause)
                .map_err(fail)?;
        }
        Ok(pages.len() as u32)
    }

    /// Copy the run of `pages` consecutive pages starting at `from` (all in one block, page
    /// `i` holding logical page `first_lpn + i`) to consecutive free pages of one block
    /// starting at `to`: the copy a block-mapped FTL's merge makes of a data block's pages,
    /// which keep their offsets. Counts exactly what [`FlashDevice::copy_pages`] would for
    /// the same pages; devices override it only to check the run once.
    ///
    /// # Panics
    /// As [`FlashDevice::copy_pages`], and if the source run leaves its block.
    fn copy_range(
        &mut self,
        from: Ppn,
        first_lpn: Lpn,
        pages: u32,
        to: Ppn,
        cause: Cause,
    ) -> Result<u32, (u32, DeviceError)> {
        let run: Vec<(Lpn, Ppn)> = (0..pages)
            .map(|i| (Lpn(first_lpn.0 + i), Ppn(from.0 + i)))
            .collect();
        self.copy_pages(&run, to, cause)
    }

    /// Erase a block: every page becomes programmable again.
    fn erase(&mut self, block: BlockId, cause: Cause) -> Result<(), DeviceError>;

    /// Operations so far.
    fn counters(&self) -> &OpCounters;

    /// The state of a block.
    fn block_status(&self, block: BlockId) -> BlockStatus;

    /// What a read of `ppn` would return, without counting an operation. For invariant
    /// checkers and tests that inspect the OOB area.
    fn peek(&self, ppn: Ppn) -> PageRead;

    /// Erase cycles a block survives.
    fn endurance_cycles(&self) -> u32;

    /// Heap bytes held by the model (not part of any FTL's mapping memory).
    fn heap_bytes(&self) -> usize;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The small device the unit tests share: 4 blocks of 4 pages of 512 bytes.
    pub(crate) fn geometry() -> Geometry {
        Geometry::builder()
            .page_size_bytes(512)
            .pages_per_block(4)
            .blocks(4)
            .build()
            .expect("a valid geometry")
    }

    /// Only a programmed page read from a store that keeps stamps has one; an erased page has
    /// none, not a default stamp that would name logical page 0.
    #[test]
    fn a_page_read_has_a_stamp_only_when_programmed_with_one() {
        let stamp = Stamp::new(Lpn(7), 3);
        assert_eq!(PageRead::Programmed(Some(stamp)).stamp(), Some(stamp));
        assert_eq!(PageRead::Programmed(None).stamp(), None);
        assert_eq!(PageRead::Erased.stamp(), None);
    }
}
