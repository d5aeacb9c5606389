//! Helpers shared by the integration tests.

#![allow(dead_code)]

use flashkit_em::EmError;
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo};

/// A simulator that logs every transfer: (a write, offset, length).
pub struct Logged {
    pub sim: SimIo,
    pub log: Vec<(bool, u64, usize)>,
}

impl BlockIo for Logged {
    fn block_sizes(&self) -> BlockSizes {
        self.sim.block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        self.log.push((false, offset, buf.len()));
        self.sim.read(offset, buf)
    }
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        self.log.push((true, offset, buf.len()));
        self.sim.write(offset, buf)
    }
    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        self.sim.discard(offset, len)
    }
    fn sync(&mut self) -> Result<(), EmError> {
        self.sim.sync()
    }
    fn stats(&self) -> IoStats {
        self.sim.stats()
    }
    fn describe(&self) -> String {
        self.sim.describe()
    }
}

impl Logged {
    /// A logging simulator that keeps data.
    pub fn with_data(sizes: BlockSizes) -> Logged {
        Logged {
            sim: SimIo::with_data(sizes),
            log: Vec::new(),
        }
    }

    /// The log from entry `from` on, each transfer cut into its blocks (`B_r` for reads,
    /// `B_w` for writes) and sorted: what two runs that move the same blocks in another
    /// order or another grouping both give.
    pub fn blocks_since(&self, from: usize) -> Vec<(bool, u64)> {
        let sizes = self.sim.block_sizes();
        let mut blocks: Vec<(bool, u64)> = self.log[from..]
            .iter()
            .flat_map(|&(write, offset, len)| {
                let block = if write {
                    sizes.write_bytes
                } else {
                    sizes.read_bytes
                };
                (0..len as u64 / block).map(move |b| (write, offset + b * block))
            })
            .collect();
        blocks.sort_unstable();
        blocks
    }
}
