//! Block I/O with separate read and write block sizes (section 2 of Ajwani et al., SEA 2009).
//!
//! [`BlockIo`] is a linear byte address space that is read in whole blocks of `B_r` bytes
//! and written in whole blocks of `B_w` bytes. Every call is counted in [`IoStats`]: one
//! read I/O per `B_r` bytes, one write I/O per `B_w` bytes, and the bytes moved, so the cost
//! of a run under both flash models is read off the counters (`crate::model`).
//!
//! Backends: [`SimIo`] (a counting simulator, with or without data), [`FileIo`] (real files,
//! `O_DIRECT` where the filesystem allows it), `FtlIo` (behind the `ftl` feature: any
//! flashkit FTL on the NAND model), and [`crate::tl::TranslationLayer`], which is itself a
//! `BlockIo` over another one.
//!
//! What this is not: a cache or a file system. Key decision: a misaligned call is a caller
//! bug and panics (as the NAND model panics on a physics violation); what the outside world
//! can do wrong (a missing file, a full disk) comes back as [`crate::EmError`].

mod buffer;
mod file;
#[cfg(feature = "ftl")]
mod ftl;
mod sim;
mod split;
pub mod stream;
pub mod worker;

pub use buffer::{AlignedBuf, DIRECT_ALIGN};
pub(crate) use file::open_path;
pub use file::{FileIo, Segment};
#[cfg(feature = "ftl")]
pub use ftl::FtlIo;
pub use sim::SimIo;
pub use split::SplitIo;

use crate::EmError;
use serde::Serialize;
use std::ops::{Add, Sub};

/// The block sizes an algorithm uses: `B_r` for reads and `B_w` for writes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BlockSizes {
    /// Read block size `B_r` in bytes.
    pub read_bytes: u64,
    /// Write block size `B_w` in bytes.
    pub write_bytes: u64,
}

impl BlockSizes {
    /// Validated block sizes: powers of two of at least 512 B, with `B_r <= B_w`.
    pub fn new(read_bytes: u64, write_bytes: u64) -> Result<Self, EmError> {
        for (name, value) in [("B_r", read_bytes), ("B_w", write_bytes)] {
            if !value.is_power_of_two() || value < 512 {
                return Err(EmError::Config(format!(
                    "{name} = {value} B is not a power of two of at least 512 B"
                )));
            }
        }
        if read_bytes > write_bytes {
            return Err(EmError::Config(format!(
                "B_r = {read_bytes} B is larger than B_w = {write_bytes} B; the flash models \
                 assume B_r <= B_w"
            )));
        }
        Ok(BlockSizes {
            read_bytes,
            write_bytes,
        })
    }

    /// One block size for both directions (the I/O model with `B`).
    pub fn same(bytes: u64) -> Result<Self, EmError> {
        Self::new(bytes, bytes)
    }

    /// The larger of the two (every region is aligned to it).
    pub fn align_bytes(&self) -> u64 {
        self.write_bytes.max(self.read_bytes)
    }
}

/// What a twin handle did (see [`BlockIo::twin`]), for [`BlockIo::absorb`].
#[derive(Clone, Debug, Default)]
pub struct TwinReport {
    /// Its transfers.
    pub stats: IoStats,
    /// Its [`BlockIo::describe`] at the end (which names any fallback it took).
    pub description: String,
}

/// What crossed the interface: I/O counts and bytes, in each direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IoStats {
    /// Read I/Os (one per `B_r` bytes read).
    pub read_ios: u64,
    /// Write I/Os (one per `B_w` bytes written).
    pub write_ios: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

impl Sub for IoStats {
    type Output = IoStats;
    fn sub(self, earlier: IoStats) -> IoStats {
        IoStats {
            read_ios: self.read_ios - earlier.read_ios,
            write_ios: self.write_ios - earlier.write_ios,
            read_bytes: self.read_bytes - earlier.read_bytes,
            write_bytes: self.write_bytes - earlier.write_bytes,
        }
    }
}

impl Add for IoStats {
    type Output = IoStats;
    fn add(self, other: IoStats) -> IoStats {
        IoStats {
            read_ios: self.read_ios + other.read_ios,
            write_ios: self.write_ios + other.write_ios,
            read_bytes: self.read_bytes + other.read_bytes,
            write_bytes: self.write_bytes + other.write_bytes,
        }
    }
}

impl IoStats {
    /// Count a read of `bytes` in blocks of `block`.
    #[inline]
    pub fn count_read(&mut self, bytes: u64, block: u64) {
        self.read_ios += bytes / block;
        self.read_bytes += bytes;
    }

    /// Count a write of `bytes` in blocks of `block`.
    #[inline]
    pub fn count_write(&mut self, bytes: u64, block: u64) {
        self.write_ios += bytes / block;
        self.write_bytes += bytes;
    }
}

/// A linear address space read in blocks of `B_r` and written in blocks of `B_w`.
///
/// # Panics
/// `read` and `write` panic when the offset or length is not a multiple of the block size of
/// their direction: that is a bug in the algorithm, not a modelled event.
pub trait BlockIo: Send {
    /// `B_r` and `B_w`.
    fn block_sizes(&self) -> BlockSizes;

    /// Read `buf.len()` bytes at `offset` (both multiples of `B_r`). Never-written bytes read
    /// as zeros.
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError>;

    /// Write `buf` at `offset` (both multiples of `B_w`).
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError>;

    /// The bytes `[offset, offset + len)` are dead (a run that was merged away). A hint that
    /// lets a translation layer or an FTL reclaim space; the contents become undefined.
    fn discard(&mut self, _offset: u64, _len: u64) -> Result<(), EmError> {
        Ok(())
    }

    /// Make every completed write durable.
    fn sync(&mut self) -> Result<(), EmError> {
        Ok(())
    }

    /// What crossed this interface so far.
    fn stats(&self) -> IoStats;

    /// A second handle on the same storage whose transfers may run on another thread at the
    /// same time as this one's, or `None` (the default) where transfers must be served one at
    /// a time (a simulator or FTL whose state depends on their order). The I/O worker uses a
    /// twin to write while it reads; its caller never touches the same bytes from both at
    /// once, and hands the twin back with [`BlockIo::absorb`].
    fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
        Ok(None)
    }

    /// Take back a twin made by [`BlockIo::twin`]: add its counts to this handle's (and
    /// anything it noted, such as a fallback it took).
    fn absorb(&mut self, _twin: TwinReport) {}

    /// A one-line description of the backend (and of any fallback it took).
    fn describe(&self) -> String;
}

/// A device whose physical counters may differ from what the algorithm asked for: under a
/// translation layer, pages of `B_r` reach the device as whole `B_w` blocks. The counters
/// of [`BlockIo::stats`] are what the algorithm asked for; [`PhysicalIo::physical`] is what
/// reached the (simulated or FTL) device at the bottom.
pub trait PhysicalIo: BlockIo {
    /// What reached the device at the bottom.
    fn physical(&self) -> IoStats;

    /// One past the highest byte written to the simulator at the bottom, where there is one
    /// (the footprint of a dry run).
    fn written_extent_bytes(&self) -> Option<u64> {
        None
    }
}

impl<T: BlockIo + ?Sized> BlockIo for Box<T> {
    fn block_sizes(&self) -> BlockSizes {
        (**self).block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        (**self).read(offset, buf)
    }
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        (**self).write(offset, buf)
    }
    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        (**self).discard(offset, len)
    }
    fn sync(&mut self) -> Result<(), EmError> {
        (**self).sync()
    }
    fn stats(&self) -> IoStats {
        (**self).stats()
    }

    fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
        (**self).twin()
    }

    fn absorb(&mut self, twin: TwinReport) {
        (**self).absorb(twin)
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// Panic unless `offset` and `len` are multiples of `block` (a caller bug).
#[inline]
pub(crate) fn check_aligned(direction: &str, offset: u64, len: usize, block: u64) {
    assert!(
        offset.is_multiple_of(block) && (len as u64).is_multiple_of(block),
        "{direction} of {len} B at byte {offset} is not aligned to the {block} B block"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sizes_are_validated() {
        assert!(BlockSizes::new(128 << 10, 16 << 20).is_ok());
        assert!(BlockSizes::new(1000, 4096).is_err());
        assert!(BlockSizes::new(256, 4096).is_err());
        assert!(BlockSizes::new(8192, 4096).is_err());
        assert_eq!(BlockSizes::same(4096).expect("valid").align_bytes(), 4096);
    }

    #[test]
    fn stats_count_blocks_and_bytes() {
        let mut stats = IoStats::default();
        stats.count_read(3 * 4096, 4096);
        stats.count_write(1 << 20, 1 << 20);
        let earlier = stats;
        stats.count_read(4096, 4096);
        assert_eq!(stats.read_ios, 4);
        assert_eq!(stats.write_ios, 1);
        assert_eq!((stats - earlier).read_bytes, 4096);
    }

    #[test]
    fn stats_add_and_subtract_field_by_field() {
        let a = IoStats {
            read_ios: 10,
            write_ios: 20,
            read_bytes: 30,
            write_bytes: 40,
        };
        let b = IoStats {
            read_ios: 1,
            write_ios: 2,
            read_bytes: 3,
            write_bytes: 4,
        };
        let sum = IoStats {
            read_ios: 11,
            write_ios: 22,
            read_bytes: 33,
            write_bytes: 44,
        };
        assert_eq!(a + b, sum);
        assert_eq!(sum - b, a);
        let sizes = BlockSizes::new(512, 2048).expect("the smallest block is 512 B");
        assert_eq!(sizes.align_bytes(), 2048);
        assert!(BlockSizes::same(512).is_ok());
    }

    /// A device that records the calls that reach it.
    #[derive(Default)]
    struct Recorder {
        calls: Vec<String>,
    }

    impl BlockIo for Recorder {
        fn block_sizes(&self) -> BlockSizes {
            BlockSizes::new(512, 1024).expect("valid")
        }
        fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
            self.calls.push(format!("read {offset} {}", buf.len()));
            Ok(())
        }
        fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
            self.calls.push(format!("write {offset} {}", buf.len()));
            Ok(())
        }
        fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
            self.calls.push(format!("discard {offset} {len}"));
            Ok(())
        }
        fn sync(&mut self) -> Result<(), EmError> {
            self.calls.push("sync".into());
            Err(EmError::Config("sync refused".into()))
        }
        fn stats(&self) -> IoStats {
            IoStats {
                read_ios: self.calls.len() as u64,
                ..IoStats::default()
            }
        }
        fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
            Ok(Some(Box::new(Recorder::default())))
        }
        fn absorb(&mut self, twin: TwinReport) {
            self.calls.push(format!("absorb {}", twin.description));
        }
        fn describe(&self) -> String {
            format!("recorder of {} calls", self.calls.len())
        }
    }

    #[test]
    fn a_boxed_device_forwards_every_call() {
        let mut boxed: Box<dyn BlockIo> = Box::new(Recorder::default());
        assert_eq!(
            boxed.block_sizes(),
            BlockSizes::new(512, 1024).expect("valid")
        );
        boxed.read(512, &mut [0; 512]).expect("read");
        boxed.write(1024, &[0; 1024]).expect("write");
        boxed.discard(2048, 4096).expect("discard");
        assert!(boxed.sync().is_err());
        boxed.absorb(TwinReport {
            stats: IoStats::default(),
            description: "twin".into(),
        });
        assert!(boxed.twin().expect("twin").is_some());
        assert_eq!(boxed.stats().read_ios, 5);
        assert_eq!(boxed.describe(), "recorder of 5 calls");
        // The trait's defaults: nothing to discard or sync, no twin, nothing to absorb.
        struct Plain;
        impl BlockIo for Plain {
            fn block_sizes(&self) -> BlockSizes {
                BlockSizes::same(512).expect("valid")
            }
            fn read(&mut self, _: u64, _: &mut [u8]) -> Result<(), EmError> {
                Ok(())
            }
            fn write(&mut self, _: u64, _: &[u8]) -> Result<(), EmError> {
                Ok(())
            }
            fn stats(&self) -> IoStats {
                IoStats::default()
            }
            fn describe(&self) -> String {
                "plain".into()
            }
        }
        impl PhysicalIo for Plain {
            fn physical(&self) -> IoStats {
                IoStats::default()
            }
        }
        let mut plain = Plain;
        assert!(plain.discard(0, 512).is_ok() && plain.sync().is_ok());
        assert!(plain.twin().expect("no twin").is_none());
        // No simulator at the bottom, no footprint.
        assert_eq!(plain.written_extent_bytes(), None);
    }

    #[test]
    #[should_panic(expected = "read of 100 B at byte 512 is not aligned to the 512 B block")]
    fn a_misaligned_length_is_a_bug() {
        check_aligned("read", 512, 100, 512);
    }

    #[test]
    #[should_panic(expected = "write of 512 B at byte 100 is not aligned to the 512 B block")]
    fn a_misaligned_offset_is_a_bug() {
        check_aligned("write", 100, 512, 512);
    }
}
