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
        let (a, b) = (self.low.stats(), self.high.stats());
        IoStats {
            read_ios: a.read_ios + b.read_ios,
            write_ios: a.write_ios + b.write_ios,
            read_bytes: a.read_bytes + b.read_bytes,
            write_bytes: a.write_bytes + b.write_bytes,
        }
    }
    fn describe(&self) -> String {
        format!(
            "{}; temporary data: {}",
            self.low.describe(),
            self.high.describe()
        )
    }
}
