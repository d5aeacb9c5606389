//! Two address spaces as one: addresses below a boundary go to one device, the rest (shifted
//! down) to another. The file sort uses it to put its temporary runs, and only those,
//! behind the translation layer, as the paper's layer manages temporary data only.

use super::{BlockIo, BlockSizes, IoStats};
use crate::EmError;

/// `low` below `boundary`, `high` from `boundary` on (at `address - boundary`).
pub struct SplitIo<A, B> {
    /// The device below the boundary.
    pub low: A,
    /// The device from the boundary on.
    pub high: B,
    boundary: u64,
}

impl<A: BlockIo, B: BlockIo> SplitIo<A, B> {
    /// Join two devices with equal block sizes at `boundary`.
    pub fn new(low: A, high: B, boundary: u64) -> Self {
        assert_eq!(
            low.block_sizes(),
            high.block_sizes(),
            "split devices need equal block sizes"
        );
        SplitIo {
            low,
            high,
            boundary,
        }
    }
}

impl<A: BlockIo, B: BlockIo> BlockIo for SplitIo<A, B> {
    fn block_sizes(&self) -> BlockSizes {
        self.low.block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        if offset < self.boundary {
            self.low.read(offset, buf)
        } else {
            self.high.read(offset - self.boundary, buf)
        }
    }
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        if offset < self.boundary {
            self.low.write(offset, buf)
        } else {
            self.high.write(offset - self.boundary, buf)
        }
    }
    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        if offset < self.boundary {
            self.low.discard(offset, len)
        } else {
            self.high.discard(offset - self.boundary, len)
        }
    }
    fn sync(&mut self) -> Result<(), EmError> {
        self.low.sync()?;
        self.high.sync()
    }
    fn stats(&self) -> IoStats {
        self.low.stats() + self.high.stats()
    }
    fn describe(&self) -> String {
        format!(
            "{}; temporary data: {}",
            self.low.describe(),
            self.high.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimIo;

    #[test]
    fn each_side_of_the_boundary_reaches_its_device_at_its_own_address() {
        let sizes = BlockSizes::new(512, 1024).expect("valid");
        let mut split = SplitIo::new(SimIo::with_data(sizes), SimIo::with_data(sizes), 4096);
        split.write(3072, &[1; 1024]).expect("low write");
        split.write(4096, &[2; 2048]).expect("high write");
        // Each device holds its own bytes at its own addresses.
        let mut page = [0u8; 512];
        split.low.read(3072, &mut page).expect("read");
        assert_eq!(page, [1; 512]);
        split.high.read(1024, &mut page).expect("read");
        assert_eq!(page, [2; 512]);
        split.read(4096 + 1536, &mut page).expect("read through");
        assert_eq!(page, [2; 512]);
        split.read(3584, &mut page).expect("read through");
        assert_eq!(page, [1; 512]);
        assert_eq!(split.low.written_extent_bytes(), 4096);
        assert_eq!(split.high.written_extent_bytes(), 2048);
        // A discard on either side drops that side's pages only.
        split.discard(3072, 1024).expect("low discard");
        split.discard(4096, 1024).expect("high discard");
        split.read(3072, &mut page).expect("read");
        assert_eq!(page, [0; 512]);
        split.read(4096, &mut page).expect("read");
        assert_eq!(page, [0; 512]);
        split.read(4096 + 1024, &mut page).expect("read");
        assert_eq!(page, [2; 512]);
        split.sync().expect("sync");
        // The counts are the two devices' added: 1 + 2 writes of 1 KiB, 3 + 4 reads of 512 B.
        let (low, high) = (split.low.stats(), split.high.stats());
        assert_eq!((low.write_ios, high.write_ios), (1, 2));
        assert_eq!((low.read_ios, high.read_ios), (3, 4));
        assert_eq!(
            split.stats(),
            IoStats {
                read_ios: 7,
                write_ios: 3,
                read_bytes: 7 * 512,
                write_bytes: 3 * 1024,
            }
        );
        assert_eq!(
            split.describe(),
            "simulated device (with data); temporary data: simulated device (with data)"
        );
        assert_eq!(split.block_sizes(), sizes);
    }

    /// A device that counts its syncs and refuses them when asked to.
    struct Syncs {
        count: usize,
        refuse: bool,
    }

    impl BlockIo for Syncs {
        fn block_sizes(&self) -> BlockSizes {
            BlockSizes::same(512).expect("valid")
        }
        fn read(&mut self, _: u64, _: &mut [u8]) -> Result<(), EmError> {
            Ok(())
        }
        fn write(&mut self, _: u64, _: &[u8]) -> Result<(), EmError> {
            Ok(())
        }
        fn sync(&mut self) -> Result<(), EmError> {
            self.count += 1;
            if self.refuse {
                return Err(EmError::Device("sync refused".into()));
            }
            Ok(())
        }
        fn stats(&self) -> IoStats {
            IoStats::default()
        }
        fn describe(&self) -> String {
            "syncs".into()
        }
    }

    #[test]
    fn a_sync_reaches_both_devices_and_either_ones_refusal_fails_it() {
        let device = |refuse| Syncs { count: 0, refuse };
        let mut split = SplitIo::new(device(false), device(false), 512);
        split.sync().expect("both sync");
        split.sync().expect("both sync");
        assert_eq!((split.low.count, split.high.count), (2, 2));
        for (low, high) in [(true, false), (false, true)] {
            let mut split = SplitIo::new(device(low), device(high), 512);
            let error = split.sync().expect_err("a refused sync fails");
            assert!(error.to_string().contains("sync refused"), "{error}");
        }
    }
}
