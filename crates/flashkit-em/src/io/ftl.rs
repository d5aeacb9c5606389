//! A [`BlockIo`] over any flashkit [`Ftl`] on the NAND model, so that one external-memory
//! algorithm can run on the page-mapped FTL (or any scheme `AnyFtl` offers) and report
//! flash page reads, programs, erases and garbage collection beside its own volumes.
//!
//! The FTL and the device carry stamps, not payload, so the adapter keeps the bytes of each
//! logical page beside the FTL, and numbers every write: when the device keeps stamps, each
//! page the FTL returns must carry the sequence number of the latest write of that page, a
//! live check that the FTL under the algorithm returned the right data.
//!
//! What this is not: a host adapter for traces (that is `flashkit-sim`). Key decision: a
//! transfer maps to one FTL request over whole logical pages, so `B_r` and `B_w` must be
//! multiples of the FTL's page size; a `discard` becomes a TRIM.

use super::{BlockIo, BlockSizes, IoStats, PhysicalIo, check_aligned};
use crate::EmError;
use flashkit_core::{Lpn, PageRange};
use flashkit_ftl::{ReadOutcome, Simulated};

/// An FTL as block I/O.
pub struct FtlIo<F> {
    ftl: F,
    sizes: BlockSizes,
    page_bytes: u64,
    stats: IoStats,
    pages: Vec<Option<Box<[u8]>>>,
    last_seq: Vec<u64>,
    seq: u64,
}

impl<F: Simulated + Send> FtlIo<F> {
    /// The adapter; `B_r` and `B_w` must be multiples of the FTL's page size.
    pub fn new(ftl: F, sizes: BlockSizes) -> Result<Self, EmError> {
        let page_bytes = u64::from(ftl.geometry().page_size_bytes());
        if !sizes.read_bytes.is_multiple_of(page_bytes) {
            return Err(EmError::Config(format!(
                "B_r = {} B is not a multiple of the FTL's {page_bytes} B page",
                sizes.read_bytes
            )));
        }
        let logical = ftl.geometry().logical_pages() as usize;
        Ok(FtlIo {
            ftl,
            sizes,
            page_bytes,
            stats: IoStats::default(),
            pages: vec![None; logical],
            last_seq: vec![0; logical],
            seq: 0,
        })
    }

    /// The FTL (for its device counters and statistics).
    pub fn ftl(&self) -> &F {
        &self.ftl
    }

    /// Logical capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.pages.len() as u64 * self.page_bytes
    }

    fn range(&self, offset: u64, len: u64) -> Result<PageRange, EmError> {
        let end = offset + len;
        if end > self.capacity_bytes() {
            return Err(EmError::Device(format!(
                "bytes {offset}..{end} reach beyond the FTL's logical capacity of {} B",
                self.capacity_bytes()
            )));
        }
        let first = (offset / self.page_bytes) as u32;
        Ok(PageRange::new(Lpn(first), (len / self.page_bytes) as u32))
    }
}

fn ftl_error(error: flashkit_ftl::FtlError) -> EmError {
    EmError::Device(error.to_string())
}

impl<F: Simulated + Send> PhysicalIo for FtlIo<F> {
    fn physical(&self) -> IoStats {
        self.stats()
    }
}

impl<F: Simulated + Send> BlockIo for FtlIo<F> {
    fn block_sizes(&self) -> BlockSizes {
        self.sizes
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        check_aligned("read", offset, buf.len(), self.sizes.read_bytes);
        self.stats
            .count_read(buf.len() as u64, self.sizes.read_bytes);
        let range = self.range(offset, buf.len() as u64)?;
        let mut stale = None;
        let last_seq = &self.last_seq;
        self.ftl
            .read(range, &mut |lpn, outcome| {
                if let ReadOutcome::Mapped(Some(stamp)) = outcome
                    && (stamp.lpn != lpn || stamp.seq != last_seq[lpn.index()])
                {
                    stale.get_or_insert((lpn, stamp.seq, last_seq[lpn.index()]));
                }
            })
            .map_err(ftl_error)?;
        if let Some((lpn, got, want)) = stale {
            return Err(EmError::Verify(format!(
                "the FTL returned write {got} for {lpn}, whose latest write is {want}"
            )));
        }
        let page = self.page_bytes as usize;
        for (i, out) in buf.chunks_mut(page).enumerate() {
            match &self.pages[range.start.index() + i] {
                Some(data) => out.copy_from_slice(data),
                None => out.fill(0),
            }
        }
        Ok(())
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        check_aligned("write", offset, buf.len(), self.sizes.write_bytes);
        self.stats
            .count_write(buf.len() as u64, self.sizes.write_bytes);
        let range = self.range(offset, buf.len() as u64)?;
        self.seq += 1;
        self.ftl.write(range, self.seq).map_err(ftl_error)?;
        let page = self.page_bytes as usize;
        for (i, data) in buf.chunks(page).enumerate() {
            let index = range.start.index() + i;
            self.last_seq[index] = self.seq;
            match &mut self.pages[index] {
                Some(stored) => stored.copy_from_slice(data),
                slot => *slot = Some(data.into()),
            }
        }
        Ok(())
    }

    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        let first = offset.div_ceil(self.page_bytes);
        let end = ((offset + len) / self.page_bytes).min(self.pages.len() as u64);
        if end <= first {
            return Ok(());
        }
        let range = PageRange::new(Lpn(first as u32), (end - first) as u32);
        self.ftl.trim(range).map_err(ftl_error)?;
        for index in first..end {
            self.pages[index as usize] = None;
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), EmError> {
        self.ftl.flush().map_err(ftl_error)
    }

    fn stats(&self) -> IoStats {
        self.stats
    }

    fn describe(&self) -> String {
        let g = self.ftl.geometry();
        format!(
            "FTL on simulated NAND ({} B pages, {} pages a block, {} blocks)",
            g.page_size_bytes(),
            g.pages_per_block(),
            g.blocks()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::Geometry;
    use flashkit_device::{NandDevice, Stamps};
    use flashkit_ftl::{Ftl, Inspect, PageFtl, PageFtlConfig};

    fn page_ftl() -> PageFtl<NandDevice<Stamps>, flashkit_ftl::PageTable> {
        let geometry = Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(16)
            .logical_bytes(4 << 20)
            .over_provisioning(0.25)
            .build()
            .expect("valid");
        PageFtl::with_page_table(
            NandDevice::<Stamps>::new(geometry),
            PageFtlConfig::default(),
        )
        .expect("ftl")
    }

    #[test]
    fn data_round_trips_through_the_page_ftl_and_is_checked_against_stamps() {
        let ftl = page_ftl();
        let mut io = FtlIo::new(ftl, BlockSizes::new(4096, 16384).expect("valid")).expect("io");
        // Overwrite the device several times so that garbage collection runs.
        for round in 0..6u8 {
            for block in 0..(4 << 20) / 16384u64 {
                io.write(block * 16384, &[round.wrapping_add(block as u8); 16384])
                    .expect("write");
            }
        }
        let mut back = vec![0u8; 4096];
        io.read(16384 * 7 + 4096, &mut back).expect("read");
        assert!(back.iter().all(|&b| b == 5u8.wrapping_add(7)));
        assert!(io.ftl().stats().gc_runs > 0);
        io.discard(0, 16384).expect("trim");
        io.read(0, &mut back).expect("read");
        assert!(back.iter().all(|&b| b == 0));
        assert!(io.write(4 << 20, &[0u8; 16384]).is_err());
    }

    #[test]
    fn the_capacity_is_reachable_to_its_last_byte_and_not_beyond() {
        let mut io = FtlIo::new(page_ftl(), BlockSizes::same(4096).expect("valid")).expect("io");
        assert_eq!(io.capacity_bytes(), 4 << 20);
        let last = (4 << 20) - 4096;
        io.write(last, &[9; 4096]).expect("the last page");
        let mut back = [0u8; 4096];
        io.read(last, &mut back).expect("the last page");
        assert_eq!(back, [9; 4096]);
        // The algorithm's requests are what reaches the FTL at the bottom.
        let asked = IoStats {
            read_ios: 1,
            write_ios: 1,
            read_bytes: 4096,
            write_bytes: 4096,
        };
        assert_eq!((io.stats(), io.physical()), (asked, asked));
        let error = io
            .read(4 << 20, &mut back)
            .expect_err("one page past the end");
        assert_eq!(
            error.to_string(),
            "device: bytes 4194304..4198400 reach beyond the FTL's logical capacity of \
             4194304 B"
        );
        assert_eq!(
            io.describe(),
            "FTL on simulated NAND (4096 B pages, 16 pages a block, 80 blocks)"
        );
        // A read block that is not a whole number of the FTL's pages is refused.
        let refused = FtlIo::new(page_ftl(), BlockSizes::same(2048).expect("valid"));
        assert!(
            matches!(&refused, Err(EmError::Config(m)) if m.contains("B_r = 2048 B is not a multiple of the FTL's 4096 B page")),
            "{:?}",
            refused.err()
        );
    }

    #[test]
    fn a_discard_trims_only_the_whole_pages_inside_it() {
        let mut io = FtlIo::new(page_ftl(), BlockSizes::same(4096).expect("valid")).expect("io");
        for page in 0..4u64 {
            io.write(page * 4096, &[page as u8 + 1; 4096])
                .expect("write");
        }
        // From the middle of page 0 to the middle of page 3: pages 1 and 2 only.
        io.discard(2048, 3 * 4096).expect("discard");
        // Inside one page, and past the end: nothing.
        io.discard(4096 * 3 + 1, 100).expect("discard");
        io.discard(4 << 20, 4096).expect("discard past the end");
        let contents: Vec<u8> = (0..4u64)
            .map(|page| {
                let mut back = [0u8; 4096];
                io.read(page * 4096, &mut back).expect("read");
                back[0]
            })
            .collect();
        assert_eq!(contents, [1, 0, 0, 4]);
        // The FTL was told: pages 1 and 2 are unmapped there too.
        let mapped = |io: &mut FtlIo<PageFtl<NandDevice<Stamps>, flashkit_ftl::PageTable>>,
                      first: u32,
                      count: u32| {
            let mut pages = Vec::new();
            io.ftl
                .read(PageRange::new(Lpn(first), count), &mut |_, outcome| {
                    pages.push(matches!(outcome, ReadOutcome::Mapped(_)));
                })
                .expect("read");
            pages
        };
        assert_eq!(mapped(&mut io, 0, 4), [true, false, false, true]);
        // The last page discarded to the end of the space.
        let last = (4 << 20) / 4096 - 1;
        io.write(u64::from(last) * 4096, &[7; 4096]).expect("write");
        assert_eq!(mapped(&mut io, last, 1), [true]);
        io.discard(u64::from(last) * 4096, 1 << 30)
            .expect("discard to the end");
        assert_eq!(mapped(&mut io, last, 1), [false]);
    }

    #[test]
    fn a_page_whose_stamp_is_not_its_latest_write_is_an_error() {
        let mut io = FtlIo::new(page_ftl(), BlockSizes::same(4096).expect("valid")).expect("io");
        io.write(8192, &[1; 4096]).expect("write");
        io.write(8192, &[2; 4096]).expect("write");
        // As if the FTL had returned the first write of page 2 after the second.
        io.last_seq[2] = 3;
        let mut back = [0u8; 4096];
        let error = io.read(8192, &mut back).expect_err("a stale page");
        assert!(
            matches!(&error, EmError::Verify(m)
                if m == "the FTL returned write 2 for lpn 2, whose latest write is 3"),
            "{error}"
        );
        io.last_seq[2] = 2;
        io.read(8192, &mut back).expect("the latest write");
        assert_eq!(back, [2; 4096]);
    }
}
