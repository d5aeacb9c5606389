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
    use flashkit_ftl::{Inspect, PageFtl, PageFtlConfig};

    #[test]
    fn data_round_trips_through_the_page_ftl_and_is_checked_against_stamps() {
        let geometry = Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(16)
            .logical_bytes(4 << 20)
            .over_provisioning(0.25)
            .build()
            .expect("valid");
        let ftl = PageFtl::with_page_table(
            NandDevice::<Stamps>::new(geometry),
            PageFtlConfig::default(),
        )
        .expect("ftl");
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
}
