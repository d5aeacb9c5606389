//! A payload store that keeps the bytes of every programmed page, for structures that must
//! be found again from what they wrote (the NAND B-tree of `flashkit-index::nand`).
//!
//! What it is not: a new device. [`PageBytes`] plugs into the same [`NandDevice`], so the
//! write pointer still enforces erase-before-write and in-order programming, wear-out is still
//! [`DeviceError::WornOut`], and every read, program and erase is counted exactly as for the
//! other stores. [`NandDevice::program_page`] is [`FlashDevice::program`] followed by the
//! bytes; a page programmed through the plain trait method holds its stamp and no bytes.
//!
//! Key decision: memory is allocated per block on the first program into it and kept across
//! erases, so a 64 MiB part of which a B-tree uses thirty blocks costs a few MiB, and the
//! steady state allocates nothing.

use crate::nand::NandDevice;
use crate::store::PayloadStore;
use crate::{DeviceError, FlashDevice};
use flashkit_core::{Cause, Geometry, Lpn, Ppn, Stamp, StateHasher};

/// The stamp an erased page holds: all ones, as erased flash reads.
const ERASED: Stamp = Stamp {
    lpn: Lpn(u32::MAX),
    seq: u64::MAX,
};

/// One block's pages: bytes, byte lengths and OOB stamps.
#[derive(Clone, Debug)]
struct BlockBytes {
    data: Box<[u8]>,
    lens: Box<[u32]>,
    stamps: Box<[Stamp]>,
}

/// Keeps each programmed page's bytes (up to the page size) and its OOB stamp.
#[derive(Clone, Debug)]
pub struct PageBytes {
    page_size: usize,
    pages_per_block: u32,
    blocks: Vec<Option<BlockBytes>>,
}

impl PageBytes {
    fn split(&self, ppn: Ppn) -> (usize, usize) {
        let ppb = self.pages_per_block as usize;
        (ppn.index() / ppb, ppn.index() % ppb)
    }

    fn block_mut(&mut self, block: usize) -> &mut BlockBytes {
        let ppb = self.pages_per_block as usize;
        let page_size = self.page_size;
        self.blocks[block].get_or_insert_with(|| BlockBytes {
            data: vec![0xFF; ppb * page_size].into_boxed_slice(),
            lens: vec![0; ppb].into_boxed_slice(),
            stamps: vec![ERASED; ppb].into_boxed_slice(),
        })
    }

    /// Record the bytes of a page that has just been programmed.
    fn write_bytes(&mut self, ppn: Ppn, bytes: &[u8]) {
        assert!(
            bytes.len() <= self.page_size,
            "{} bytes do not fit a {} B page ({ppn})",
            bytes.len(),
            self.page_size
        );
        let (block, page) = self.split(ppn);
        let page_size = self.page_size;
        let b = self.block_mut(block);
        b.data[page * page_size..page * page_size + bytes.len()].copy_from_slice(bytes);
        b.lens[page] = bytes.len() as u32;
    }

    /// The bytes programmed into `ppn` (empty if it was programmed without bytes).
    fn bytes(&self, ppn: Ppn) -> &[u8] {
        let (block, page) = self.split(ppn);
        match &self.blocks[block] {
            Some(b) => {
                let start = page * self.page_size;
                &b.data[start..start + b.lens[page] as usize]
            }
            None => &[],
        }
    }
}

impl PayloadStore for PageBytes {
    fn for_geometry(geometry: &Geometry) -> Self {
        PageBytes {
            page_size: geometry.page_size_bytes() as usize,
            pages_per_block: geometry.pages_per_block(),
            blocks: vec![None; geometry.blocks() as usize],
        }
    }

    fn store(&mut self, ppn: Ppn, stamp: Stamp) {
        let (block, page) = self.split(ppn);
        let b = self.block_mut(block);
        b.stamps[page] = stamp;
        b.lens[page] = 0;
    }

    fn load(&self, ppn: Ppn) -> Option<Stamp> {
        let (block, page) = self.split(ppn);
        Some(
            self.blocks[block]
                .as_ref()
                .map_or(ERASED, |b| b.stamps[page]),
        )
    }

    fn copy(&mut self, from: Ppn, to: Ppn, stamp: Stamp) {
        self.store(to, stamp);
        let (block, page) = self.split(from);
        let Some(source) = self.blocks[block].as_ref() else {
            return;
        };
        let len = source.lens[page] as usize;
        let start = page * self.page_size;
        // Pages of one block may copy within it; take the bytes out first.
        let bytes = source.data[start..start + len].to_vec();
        self.write_bytes(to, &bytes);
    }

    fn hash_page(&self, ppn: Ppn, hasher: &mut StateHasher) {
        let stamp = self.load(ppn).unwrap_or(ERASED);
        hasher.u32(stamp.lpn.0);
        hasher.u64(stamp.seq);
        let bytes = self.bytes(ppn);
        hasher.u32(bytes.len() as u32);
        hasher.bytes(bytes);
    }

    fn erase(&mut self, first: Ppn, pages: u32) {
        let (block, page) = self.split(first);
        debug_assert_eq!(
            (page, pages),
            (0, self.pages_per_block),
            "erases are whole blocks"
        );
        if let Some(b) = self.blocks[block].as_mut() {
            b.lens.fill(0);
            b.stamps.fill(ERASED);
        }
    }

    fn heap_bytes(&self) -> usize {
        let per_block =
            self.pages_per_block as usize * (self.page_size + 4 + std::mem::size_of::<Stamp>());
        self.blocks.capacity() * std::mem::size_of::<Option<BlockBytes>>()
            + self.blocks.iter().filter(|b| b.is_some()).count() * per_block
    }

    fn heap_bytes_for(geometry: &Geometry) -> u64 {
        let per_page =
            u64::from(geometry.page_size_bytes()) + 4 + std::mem::size_of::<Stamp>() as u64;
        u64::from(geometry.blocks()) * std::mem::size_of::<Option<BlockBytes>>() as u64
            + u64::from(geometry.physical_pages()) * per_page
    }
}

/// What [`NandDevice::read_page`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageData<'a> {
    /// The page has not been programmed since its block was last erased.
    Erased,
    /// The page's OOB stamp and the bytes programmed into it.
    Programmed {
        /// The OOB stamp.
        stamp: Stamp,
        /// The bytes (at most a page).
        bytes: &'a [u8],
    },
}

impl<'a> PageData<'a> {
    /// The bytes, if the page is programmed.
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            PageData::Programmed { bytes, .. } => Some(bytes),
            PageData::Erased => None,
        }
    }
}

impl NandDevice<PageBytes> {
    /// Program the next free page of a block with `stamp` in its OOB area and `bytes` (at
    /// most a page) in its data area: [`FlashDevice::program`], with its physics and its
    /// count, then the bytes.
    ///
    /// # Panics
    /// As [`FlashDevice::program`], or if `bytes` is longer than a page.
    pub fn program_page(
        &mut self,
        ppn: Ppn,
        stamp: Stamp,
        bytes: &[u8],
        cause: Cause,
    ) -> Result<(), DeviceError> {
        assert!(
            bytes.len() <= self.geometry().page_size_bytes() as usize,
            "{} bytes do not fit a {} B page ({ppn})",
            bytes.len(),
            self.geometry().page_size_bytes()
        );
        self.program(ppn, stamp, cause)?;
        self.store_mut().write_bytes(ppn, bytes);
        Ok(())
    }

    /// Read a page: counted as one read under `cause`, as [`FlashDevice::read`].
    pub fn read_page(&mut self, ppn: Ppn, cause: Cause) -> Result<PageData<'_>, DeviceError> {
        Ok(match self.read(ppn, cause)? {
            crate::PageRead::Erased => PageData::Erased,
            crate::PageRead::Programmed(stamp) => PageData::Programmed {
                stamp: stamp.unwrap_or(ERASED),
                bytes: self.store().bytes(ppn),
            },
        })
    }

    /// What [`NandDevice::read_page`] would return, without counting a read. For invariant
    /// checkers and tests.
    pub fn peek_page(&self, ppn: Ppn) -> PageData<'_> {
        match self.peek(ppn) {
            crate::PageRead::Erased => PageData::Erased,
            crate::PageRead::Programmed(stamp) => PageData::Programmed {
                stamp: stamp.unwrap_or(ERASED),
                bytes: self.store().bytes(ppn),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::BlockId;

    use crate::tests::geometry;

    fn device() -> NandDevice<PageBytes> {
        NandDevice::new(geometry())
    }

    fn hash(dev: &NandDevice<PageBytes>) -> u64 {
        let mut hasher = StateHasher::new();
        dev.hash_state(&mut hasher);
        hasher.finish()
    }

    /// A device with two pages programmed in block 1.
    fn written() -> NandDevice<PageBytes> {
        let mut dev = device();
        let first = dev.geometry().first_ppn(BlockId(1));
        dev.program_page(first, Stamp::new(Lpn(1), 1), b"ab", Cause::Host)
            .expect("program");
        dev.program_page(Ppn(first.0 + 1), Stamp::new(Lpn(2), 2), b"cd", Cause::Host)
            .expect("program");
        dev
    }

    /// Every part of a device's state reaches its state hash, each in a place of its own:
    /// the block states, every programmed page's stamp and bytes (what boot reads back),
    /// and the counters. The NAND B-tree's state hash rests on it.
    #[test]
    fn every_part_of_the_state_reaches_the_state_hash() {
        let base = hash(&written());
        assert_eq!(hash(&written()), base, "the same writes, the same hash");
        let first = geometry().first_ppn(BlockId(1));
        // Block 1 erased and written again, its first page with this stamp and these bytes.
        let rewritten = |lpn: u32, seq: u64, bytes: &[u8]| {
            let mut dev = written();
            dev.erase(BlockId(1), Cause::Host).expect("erase");
            dev.program_page(first, Stamp::new(Lpn(lpn), seq), bytes, Cause::Host)
                .expect("program");
            dev.program_page(Ppn(first.0 + 1), Stamp::new(Lpn(2), 2), b"cd", Cause::Host)
                .expect("program");
            hash(&dev)
        };
        let erased_again = rewritten(1, 1, b"ab");
        assert_ne!(erased_again, base, "an erase and its count reach the hash");
        let mut seen = vec![base, erased_again];
        let rewrites: [(&str, u32, u64, &[u8]); 4] = [
            ("a page's bytes", 1, 1, b"ax"),
            (
                "a page's length (erased bytes past it read alike)",
                1,
                1,
                b"ab\xFF",
            ),
            ("a stamp's page", 9, 1, b"ab"),
            ("a stamp's sequence", 1, 9, b"ab"),
        ];
        for (part, lpn, seq, bytes) in rewrites {
            let h = rewritten(lpn, seq, bytes);
            assert!(
                !seen.contains(&h),
                "{part} does not reach the state hash on its own"
            );
            seen.push(h);
        }
        let mut dev = written();
        let third = Ppn(first.0 + 2);
        dev.program_page(third, Stamp::new(Lpn(3), 3), b"", Cause::Host)
            .expect("program");
        assert!(!seen.contains(&hash(&dev)), "one more page programmed");
    }

    #[test]
    fn bytes_round_trip_and_are_counted_like_any_page() {
        let mut dev = device();
        assert_eq!(dev.read_page(Ppn(4), Cause::Host), Ok(PageData::Erased));
        dev.program_page(Ppn(4), Stamp::new(Lpn(1), 1), b"node one", Cause::Host)
            .expect("program");
        dev.program_page(Ppn(5), Stamp::new(Lpn(2), 2), &[7; 512], Cause::Gc)
            .expect("program");
        assert_eq!(
            dev.read_page(Ppn(4), Cause::Host).expect("read").bytes(),
            Some(&b"node one"[..])
        );
        assert_eq!(dev.peek_page(Ppn(5)).bytes(), Some(&[7u8; 512][..]));
        assert_eq!(dev.peek_page(Ppn(6)), PageData::Erased);
        let c = dev.counters();
        assert_eq!((c.reads.host, c.programs.host, c.programs.gc), (2, 1, 1));
    }

    #[test]
    fn erase_forgets_the_bytes_and_the_block_is_reused() {
        let mut dev = device();
        dev.program_page(Ppn(0), Stamp::new(Lpn(1), 1), b"old", Cause::Host)
            .expect("program");
        dev.erase(BlockId(0), Cause::Gc).expect("erase");
        assert_eq!(dev.peek_page(Ppn(0)), PageData::Erased);
        dev.program_page(Ppn(0), Stamp::new(Lpn(1), 2), b"new!", Cause::Host)
            .expect("program");
        assert_eq!(dev.peek_page(Ppn(0)).bytes(), Some(&b"new!"[..]));
    }

    #[test]
    #[should_panic(expected = "erase-before-write violated")]
    fn the_physics_are_the_nand_models() {
        let mut dev = device();
        dev.program_page(Ppn(0), Stamp::default(), b"a", Cause::Host)
            .expect("program");
        let _ = dev.program_page(Ppn(0), Stamp::default(), b"b", Cause::Host);
    }

    #[test]
    #[should_panic(expected = "out-of-order program")]
    fn pages_inside_a_block_are_programmed_in_order() {
        let mut dev = device();
        let _ = dev.program_page(Ppn(1), Stamp::default(), b"b", Cause::Host);
    }

    #[test]
    #[should_panic(expected = "do not fit")]
    fn more_than_a_page_is_refused() {
        let mut dev = device();
        let _ = dev.program_page(Ppn(0), Stamp::default(), &[0; 513], Cause::Host);
    }

    #[test]
    fn copy_pages_copies_the_bytes_too() {
        let mut dev = device();
        dev.program_page(Ppn(0), Stamp::new(Lpn(3), 1), b"three", Cause::Host)
            .expect("program");
        assert_eq!(
            dev.copy_pages(&[(Lpn(3), Ppn(0))], Ppn(8), Cause::Gc),
            Ok(1)
        );
        assert_eq!(dev.peek_page(Ppn(8)).bytes(), Some(&b"three"[..]));
    }

    #[test]
    fn a_worn_out_block_refuses_byte_programs() {
        let mut dev = device().with_endurance(0);
        assert!(dev.erase(BlockId(1), Cause::Gc).is_err());
        assert_eq!(
            dev.program_page(Ppn(4), Stamp::default(), b"x", Cause::Host),
            Err(DeviceError::BadBlock { block: BlockId(1) })
        );
    }

    /// The OOB stamp comes back with the bytes, through every read path: a program with
    /// bytes keeps the stamp beside them.
    #[test]
    fn the_stamp_is_read_back_with_the_bytes() {
        let mut dev = device();
        let stamp = Stamp::new(Lpn(6), 9);
        dev.program_page(Ppn(4), stamp, b"six", Cause::Host)
            .expect("program");
        let expected = PageData::Programmed {
            stamp,
            bytes: b"six",
        };
        assert_eq!(dev.read_page(Ppn(4), Cause::Host), Ok(expected));
        assert_eq!(dev.peek_page(Ppn(4)), expected);
        assert_eq!(dev.peek(Ppn(4)), crate::PageRead::Programmed(Some(stamp)));
    }

    /// A copy takes the bytes of its own source page, not of the block's first page: the
    /// source is page 1 of its block, copied both to another block and within its own.
    #[test]
    fn copy_pages_takes_the_bytes_of_a_page_past_the_first() {
        let mut dev = device();
        dev.program_page(Ppn(0), Stamp::new(Lpn(1), 1), b"aaa", Cause::Host)
            .expect("program");
        dev.program_page(Ppn(1), Stamp::new(Lpn(2), 2), b"bbbb", Cause::Host)
            .expect("program");
        let source = [(Lpn(2), Ppn(1))];
        assert_eq!(dev.copy_pages(&source, Ppn(8), Cause::Gc), Ok(1));
        assert_eq!(dev.copy_pages(&source, Ppn(2), Cause::Gc), Ok(1));
        for to in [Ppn(8), Ppn(2)] {
            assert_eq!(
                dev.peek_page(to),
                PageData::Programmed {
                    stamp: Stamp::new(Lpn(2), 2),
                    bytes: b"bbbb"
                },
                "{to}"
            );
        }
    }

    /// A run copy keeps the bytes as a page-by-page copy does: a block-mapped FTL's merge
    /// copies with `copy_range`, and a page that loses its bytes there loses its data.
    /// Regression: `NandDevice::copy_range` stored only the stamps, so the copies read back
    /// empty. Found reading the code while testing the device crate's mutants.
    #[test]
    fn copy_range_copies_the_bytes_too() {
        let mut dev = device();
        dev.program_page(Ppn(0), Stamp::new(Lpn(3), 1), b"three", Cause::Host)
            .expect("program");
        dev.program_page(Ppn(1), Stamp::new(Lpn(4), 1), b"four", Cause::Host)
            .expect("program");
        assert_eq!(dev.copy_range(Ppn(0), Lpn(3), 2, Ppn(8), Cause::Gc), Ok(2));
        assert_eq!(dev.peek_page(Ppn(8)).bytes(), Some(&b"three"[..]));
        assert_eq!(dev.peek_page(Ppn(9)).bytes(), Some(&b"four"[..]));
    }

    /// The store's own contract, which no `NandDevice` read shows (the device answers a
    /// page past a block's write pointer as erased without asking the store, and every
    /// program rewrites the stamp and the length): an erase forgets the stamps and bytes of
    /// its block and of no other.
    #[test]
    fn the_store_erase_forgets_its_block_only() {
        let mut store = PageBytes::for_geometry(&geometry());
        for page in [4, 5, 8] {
            store.store(Ppn(page), Stamp::new(Lpn(page), 1));
            store.write_bytes(Ppn(page), b"data");
        }
        store.erase(Ppn(4), 4);
        for page in [4, 5] {
            assert_eq!(store.load(Ppn(page)), Some(ERASED), "page {page}");
            assert_eq!(store.bytes(Ppn(page)), b"", "page {page}");
        }
        assert_eq!(store.load(Ppn(8)), Some(Stamp::new(Lpn(8), 1)));
        assert_eq!(store.bytes(Ppn(8)), b"data");
    }

    /// Heap bytes counted allocation by allocation from what the store holds: its vector of
    /// block slots, and each allocated block's bytes, lengths and stamps.
    fn counted_heap(store: &PageBytes) -> usize {
        let slots = store.blocks.capacity() * std::mem::size_of::<Option<BlockBytes>>();
        let blocks: usize = store
            .blocks
            .iter()
            .flatten()
            .map(|b| {
                b.data.len()
                    + b.lens.len() * std::mem::size_of::<u32>()
                    + b.stamps.len() * std::mem::size_of::<Stamp>()
            })
            .sum();
        slots + blocks
    }

    /// Blocks are allocated on their first program only: two of four here.
    #[test]
    fn heap_bytes_count_the_allocated_blocks() {
        let mut dev = device();
        assert_eq!(dev.store().heap_bytes(), counted_heap(dev.store()));
        for page in [0, 1, 12] {
            dev.program_page(Ppn(page), Stamp::new(Lpn(page), 1), b"x", Cause::Host)
                .expect("program");
        }
        let store = dev.store();
        assert_eq!(store.blocks.iter().flatten().count(), 2);
        assert_eq!(store.heap_bytes(), counted_heap(store));
    }

    /// The estimate from the geometry is what a store (and a device) holds once every
    /// block has been programmed; a device adds its block states, two `u32`s a block.
    #[test]
    fn heap_bytes_for_is_the_heap_of_a_store_with_every_block_programmed() {
        let geometry = geometry();
        let mut dev = device();
        for block in 0..4 {
            dev.program_page(Ppn(block * 4), Stamp::new(Lpn(block), 1), b"", Cause::Host)
                .expect("program");
        }
        let counted = counted_heap(dev.store());
        assert_eq!(PageBytes::heap_bytes_for(&geometry), counted as u64);
        assert_eq!(dev.heap_bytes(), 4 * 8 + counted);
        assert_eq!(
            NandDevice::<PageBytes>::heap_estimate(&geometry),
            dev.heap_bytes() as u64
        );
    }
}
