//! The two node layouts of section 6.2.1 ("Cache-aware implementation").
//!
//! - Pointer-free ([`Pf`]): a leaf embeds its input extent (logical start, length, physical
//!   start); a length of zero marks an internal node, whose start field then holds its
//!   reference count. 16 bytes a node with its 4-byte key.
//! - Pointer-dependent ([`Pd`]): a leaf holds a 32-bit index of a shared extent record (the
//!   paper's pointer; an index into one slab rather than a 64-bit heap pointer per extent).
//!   The top bit tells a leaf from an internal node, whose low bits hold its reference
//!   count. 8 bytes a node with its key, plus a 16-byte record per input extent.
//!
//! The trade-off the paper measured on cache misses shows up here as work: when a write cuts
//! an extent, every remaining leaf of a pointer-free extent is rewritten with the new
//! extent, while a pointer-dependent one edits the shared record once, in place (only the
//! second remainder of an extent cut in the middle needs a record of its own). A read pays
//! the other way: one more random access, into the record.

use super::super::extent::Extent;
use super::table::{Cuckoo, NodeTable};
use std::fmt::Debug;

/// How a virtual-trie node stores its content.
pub trait NodeLayout: Default + Clone + Debug + Send + 'static {
    /// A node as stored in the hash table.
    type Node: Copy + Default + Debug + PartialEq + Send + 'static;
    /// The hash table a trie of these nodes uses unless told otherwise: buckets of one
    /// cache line.
    type Table: NodeTable<Self::Node>;
    /// Name in reports: `pf` or `pd`.
    const NAME: &'static str;
    /// Packed bytes of one hash-table entry, its 4-byte key included.
    const PACKED_NODE_BYTES: u64;

    /// An internal node referenced by `refs` leaves.
    fn internal(refs: u32) -> Self::Node;
    /// The reference count of an internal node; `None` for a leaf.
    fn refs(node: Self::Node) -> Option<u32>;
    /// A leaf node for a new input extent (attached to no leaf yet).
    fn make(&mut self, extent: Extent) -> Self::Node;
    /// The input extent a leaf points to.
    fn extent(&self, node: Self::Node) -> Extent;
    /// One more leaf holds `node`.
    fn attach(&mut self, node: Self::Node);
    /// One leaf fewer holds `node`.
    fn detach(&mut self, node: Self::Node);
    /// Every leaf holding `node` now describes `extent` (a remainder of the old one). `None`
    /// when the layout did that in place; otherwise the node those leaves must be rewritten
    /// with.
    fn retarget(&mut self, node: Self::Node, extent: Extent) -> Option<Self::Node>;
    /// Packed bytes held outside the nodes (extent records).
    fn packed_bytes(&self) -> u64;
    /// Heap bytes held outside the hash table.
    fn heap_bytes(&self) -> u64;
}

/// A pointer-free node: the input extent itself; `len == 0` marks an internal node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfNode {
    start: u32,
    len: u32,
    ppn: u32,
}

/// The pointer-free layout (PF-VET).
#[derive(Clone, Debug, Default)]
pub struct Pf;

impl NodeLayout for Pf {
    type Node = PfNode;
    type Table = Cuckoo<PfNode, 4>;
    const NAME: &'static str = "pf";
    const PACKED_NODE_BYTES: u64 = 16;

    #[inline(always)]
    fn internal(refs: u32) -> PfNode {
        PfNode {
            start: refs,
            len: 0,
            ppn: 0,
        }
    }

    #[inline(always)]
    fn refs(node: PfNode) -> Option<u32> {
        (node.len == 0).then_some(node.start)
    }

    #[inline(always)]
    fn make(&mut self, e: Extent) -> PfNode {
        PfNode {
            start: e.start,
            len: e.len,
            ppn: e.ppn,
        }
    }

    #[inline(always)]
    fn extent(&self, node: PfNode) -> Extent {
        Extent {
            start: node.start,
            len: node.len,
            ppn: node.ppn,
        }
    }

    #[inline(always)]
    fn attach(&mut self, _node: PfNode) {}

    #[inline(always)]
    fn detach(&mut self, _node: PfNode) {}

    #[inline(always)]
    fn retarget(&mut self, _node: PfNode, extent: Extent) -> Option<PfNode> {
        Some(self.make(extent))
    }

    fn packed_bytes(&self) -> u64 {
        0
    }

    fn heap_bytes(&self) -> u64 {
        0
    }
}

const LEAF_BIT: u32 = 1 << 31;

/// A shared extent record of the pointer-dependent layout.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    extent: Extent,
    /// Leaves pointing here; the record is freed when the last one goes.
    leaves: u32,
}

/// The pointer-dependent layout (PD-VET): leaves point into a slab of extent records.
#[derive(Clone, Debug, Default)]
pub struct Pd {
    pub(super) records: Vec<Record>,
    pub(super) free: Vec<u32>,
}

impl Pd {
    #[inline(always)]
    fn index(node: u32) -> usize {
        debug_assert!(node & LEAF_BIT != 0, "invariant: a leaf");
        (node & !LEAF_BIT) as usize
    }
}

impl NodeLayout for Pd {
    type Node = u32;
    type Table = Cuckoo<u32, 8>;
    const NAME: &'static str = "pd";
    const PACKED_NODE_BYTES: u64 = 8;

    #[inline(always)]
    fn internal(refs: u32) -> u32 {
        debug_assert!(refs < LEAF_BIT);
        refs
    }

    #[inline(always)]
    fn refs(node: u32) -> Option<u32> {
        (node & LEAF_BIT == 0).then_some(node)
    }

    fn make(&mut self, extent: Extent) -> u32 {
        let record = Record { extent, leaves: 0 };
        let index = match self.free.pop() {
            Some(index) => {
                self.records[index as usize] = record;
                index
            }
            None => {
                self.records.push(record);
                (self.records.len() - 1) as u32
            }
        };
        index | LEAF_BIT
    }

    #[inline(always)]
    fn extent(&self, node: u32) -> Extent {
        self.records[Self::index(node)].extent
    }

    #[inline(always)]
    fn attach(&mut self, node: u32) {
        self.records[Self::index(node)].leaves += 1;
    }

    #[inline]
    fn detach(&mut self, node: u32) {
        let record = &mut self.records[Self::index(node)];
        record.leaves -= 1;
        if record.leaves == 0 {
            self.free.push(node & !LEAF_BIT);
        }
    }

    #[inline]
    fn retarget(&mut self, node: u32, extent: Extent) -> Option<u32> {
        self.records[Self::index(node)].extent = extent;
        None
    }

    fn packed_bytes(&self) -> u64 {
        (self.records.len() - self.free.len()) as u64 * 16
    }

    fn heap_bytes(&self) -> u64 {
        (self.records.capacity() * std::mem::size_of::<Record>()
            + self.free.capacity() * std::mem::size_of::<u32>()) as u64
    }
}
