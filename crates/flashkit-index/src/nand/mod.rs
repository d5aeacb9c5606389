//! B-tree index storage on NAND flash after Jin, Cho and Chung, "A Group Round Robin Based
//! B-tree Index Storage Scheme for Flash Memory Devices" (IMCOM 2014): a B+-tree
//! ([`BTree`]) whose nodes are pages owned by a storage manager ([`NodeStore`]) and cached by
//! a buffer manager ([`BufferPool`]), node changes written as log records ([`LogRecord`]);
//! two storage schemes, In-Page Logging ([`Ipl`], section 2.2) and GRR ([`Grr`], section 3);
//! three buffer policies, LRU, CFLRU and the paper's clean-first scheme with a semi-clean
//! state ([`CfSemi`], 3.4); the paper's workload ([`workload`], Table 4) and the phase runner
//! behind `flashkit index bench` and `flashkit reproduce grr` ([`bench`](mod@bench)).
//!
//! What this module is not: an FTL client. The storage manager places pages on the raw part
//! ([`flashkit_device::NandDevice`] with the [`flashkit_device::PageBytes`] store, which keeps
//! each page's bytes under the same physics as every other store) and reclaims its own
//! blocks; the B-tree is found again after a restart from those bytes alone.
//!
//! Key decision: keys and values are 64-bit (the workload's keys are a file number and a
//! page offset, its values data addresses); a node is one page, so a 2 KiB page holds 125
//! leaf entries or 166 separators.

pub mod bench;
pub mod btree;
pub mod buffer;
pub mod log;
pub mod node;
pub mod page;
pub mod storage;
pub mod workload;

pub use btree::{BTree, TreeStats};
pub use buffer::{
    AnyReplacement, BufferConfig, BufferPool, BufferStats, CfSemi, Cflru, Lru, Replacement,
    UnitState,
};
pub use log::LogRecord;
pub use node::{Node, NodeLayout};
pub use storage::grr::Grr;
pub use storage::ipl::Ipl;
pub use storage::{AnyPlacement, BootReport, NodeStore, Placement, StoreStats};

use flashkit_core::BlockId;
use flashkit_device::DeviceError;
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// A key.
pub type Key = u64;
/// A value.
pub type Value = u64;

/// A B+-tree node's name: stable while the node lives, whatever block its image is in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct NodeId(pub u32);

impl NodeId {
    /// No node (an erased word; the last leaf's next).
    pub const NONE: NodeId = NodeId(u32::MAX);

    /// The id as an index into a table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Default for NodeId {
    fn default() -> Self {
        NodeId::NONE
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == NodeId::NONE {
            f.write_str("node none")
        } else {
            write!(f, "node {}", self.0)
        }
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// What can go wrong in the NAND B-tree. Caller bugs (a physics violation, a record that
/// does not fit its node) panic; everything here is a modelled condition or bad input.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum NandIndexError {
    /// A parameter does not fit the structure or the flash.
    #[error("B-tree configuration: {field} {reason}")]
    Config {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// No free block where one is needed.
    #[error("B-tree storage: out of flash space ({detail})")]
    OutOfSpace {
        /// What could not be placed.
        detail: String,
    },
    /// A modelled device failure (a worn-out block).
    #[error("device: {0}")]
    Device(#[from] DeviceError),
    /// A page that breaks the on-flash format or contradicts the rest.
    #[error("{block} page {page}: {detail}")]
    Corrupt {
        /// The block.
        block: BlockId,
        /// The page in the block.
        page: u32,
        /// The field and what is wrong with it.
        detail: String,
    },
    /// A benchmark read back something else than it wrote.
    #[error("benchmark: {detail}")]
    Mismatch {
        /// The key and both values.
        detail: String,
    },
    /// Boot found no tree on the flash.
    #[error("no B-tree on this flash: {detail}")]
    NoIndex {
        /// What was found instead.
        detail: String,
    },
}

#[cfg(test)]
mod tests {
    use super::NodeId;

    /// Checker messages and errors name nodes this way.
    #[test]
    fn a_node_id_prints_its_number_or_none() {
        assert_eq!(format!("{:?}", NodeId(7)), "node 7");
        assert_eq!(NodeId(0).to_string(), "node 0");
        assert_eq!(format!("{:?}", NodeId::NONE), "node none");
        assert_eq!(NodeId::NONE.to_string(), "node none");
        assert_eq!(NodeId::default(), NodeId::NONE);
        assert_eq!(NodeId(7).index(), 7);
    }
}
