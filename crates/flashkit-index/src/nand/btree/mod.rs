//! The B+-tree: search, insert with splits, delete with redistribution or merge, range
//! scans, over nodes owned by the storage manager and cached by the buffer manager; every
//! change of a node is a log record (GRR paper 2.3, 3.5; the IPL B+-tree of Na, Lee and
//! Moon 2009 that it builds on).
//!
//! What it is not: crash-consistent in the middle of an operation. A restart is modelled
//! between operations after the buffer has been flushed (a clean shutdown): the tree is then
//! found again from flash alone ([`BTree::restart`]).
//!
//! Key decisions: nodes are named by [`NodeId`], not by flash address, so a merge that
//! moves a node's image changes nothing in its parent (the storage manager's node map does
//! what IPL's logical-to-physical block map does). Leaves are linked left to right for range
//! scans. Separator `keys[i]` of an inner node is the smallest key allowed in
//! `children[i + 1]`. A leaf splits into halves (the left one takes the extra entry), an inner
//! node around its middle key; a node under half full borrows one entry from a sibling with
//! more than half, else merges into its left sibling (or takes in its right one). Every tree
//! access of a node is a buffer reference (and is what the hit ratio counts); a second look
//! at a node just referenced is not.

mod check;
mod delete;
mod insert;
#[cfg(test)]
pub(crate) mod tests;

use crate::nand::buffer::{BufferConfig, BufferPool, BufferStats, Replacement};
use crate::nand::log::LogRecord;
use crate::nand::node::{Node, NodeLayout};
use crate::nand::storage::{BootReport, NodeStore, Placement, StoreStats};
use crate::nand::{Key, NandIndexError, NodeId, Value};
use flashkit_core::StateHasher;
use flashkit_device::{NandDevice, PageBytes};
use serde::Serialize;

const RESIDENT: &str = "invariant: the node was referenced just before, with no buffer activity";

/// Structural counters of the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TreeStats {
    /// Leaf splits.
    pub leaf_splits: u64,
    /// Inner node splits.
    pub inner_splits: u64,
    /// Root splits (the tree grew a level).
    pub root_splits: u64,
    /// Entries borrowed from a sibling.
    pub borrows: u64,
    /// Nodes merged into a sibling.
    pub node_merges: u64,
    /// Root collapses (the tree lost a level).
    pub root_collapses: u64,
    /// Restarts.
    pub restarts: u64,
}

/// A B+-tree on NAND with placement policy `P` and buffer replacement policy `R`.
pub struct BTree<P, R> {
    store: NodeStore<P>,
    pool: BufferPool<R>,
    layout: NodeLayout,
    root: NodeId,
    epoch: u32,
    height: u32,
    path: Vec<(NodeId, usize)>,
    scratch: Node,
    stats: TreeStats,
}

impl<P: Placement, R: Replacement> BTree<P, R> {
    /// An empty tree on an erased device.
    pub fn create(
        dev: NandDevice<PageBytes>,
        placement: P,
        replacement: R,
        buffer: BufferConfig,
    ) -> Result<BTree<P, R>, NandIndexError> {
        let layout = Self::layout_for(&dev)?;
        let mut store = NodeStore::format(dev, placement)?;
        let mut pool = BufferPool::new(replacement, buffer, layout.page_bytes)?;
        let root = store.allocate_id();
        let leaf = Node {
            root_epoch: 1,
            ..Node::empty_leaf()
        };
        pool.create(root, &leaf, &mut store)?;
        Ok(BTree {
            store,
            pool,
            layout,
            root,
            epoch: 1,
            height: 1,
            path: Vec::new(),
            scratch: Node::default(),
            stats: TreeStats::default(),
        })
    }

    /// The tree on `dev`, found from flash alone.
    pub fn open(
        dev: NandDevice<PageBytes>,
        placement: P,
        replacement: R,
        buffer: BufferConfig,
    ) -> Result<(BTree<P, R>, BootReport), NandIndexError> {
        let layout = Self::layout_for(&dev)?;
        let (store, boot) = NodeStore::open(dev, placement)?;
        let pool = BufferPool::new(replacement, buffer, layout.page_bytes)?;
        let mut tree = BTree {
            store,
            pool,
            layout,
            root: boot.root,
            epoch: boot.epoch,
            height: 0,
            path: Vec::new(),
            scratch: Node::default(),
            stats: TreeStats::default(),
        };
        tree.height = tree.measure_height()?;
        Ok((tree, boot))
    }

    fn layout_for(dev: &NandDevice<PageBytes>) -> Result<NodeLayout, NandIndexError> {
        use flashkit_device::FlashDevice;
        let page = dev.geometry().page_size_bytes();
        if page > 1 << 16 {
            return Err(NandIndexError::Config {
                field: "page size",
                reason: format!("{page} B pages: node key counts are 16-bit (64 KiB at most)"),
            });
        }
        Ok(NodeLayout::for_page(page))
    }

    fn measure_height(&mut self) -> Result<u32, NandIndexError> {
        let node = self.pool.get(self.root, &mut self.store)?;
        Ok(u32::from(node.level) + 1)
    }

    /// Flush the buffer, forget every RAM structure (buffer, node map, sets, root), and find
    /// the tree again from flash alone.
    pub fn restart(&mut self) -> Result<BootReport, NandIndexError> {
        self.pool.flush_all(&mut self.store)?;
        self.pool.clear();
        let boot = self.store.reboot()?;
        self.root = boot.root;
        self.epoch = boot.epoch;
        self.height = self.measure_height()?;
        self.stats.restarts += 1;
        Ok(boot)
    }

    /// Flush the buffer and give the device back: a clean shutdown. Everything else (buffer,
    /// node map, sets, root) is RAM and is dropped; [`BTree::open`] finds the tree again.
    pub fn close(mut self) -> Result<NandDevice<PageBytes>, NandIndexError> {
        self.pool.flush_all(&mut self.store)?;
        Ok(self.store.into_parts().0)
    }

    /// Write every buffered change to flash (the buffer keeps its now clean units).
    pub fn flush(&mut self) -> Result<(), NandIndexError> {
        self.pool.flush_all(&mut self.store)
    }

    /// Walk from the root to the leaf for `key`, recording (inner node, child index).
    fn descend(&mut self, key: Key) -> Result<NodeId, NandIndexError> {
        self.path.clear();
        let mut id = self.root;
        loop {
            let node = self.pool.get(id, &mut self.store)?;
            if node.is_leaf() {
                return Ok(id);
            }
            let i = node.child_index(key);
            let child = node.children[i];
            self.path.push((id, i));
            id = child;
        }
    }

    /// The node just referenced.
    fn resident(&self, id: NodeId) -> &Node {
        self.pool.resident(id).expect(RESIDENT)
    }

    fn modify(&mut self, id: NodeId, record: LogRecord) -> Result<(), NandIndexError> {
        self.pool.modify(id, record, &mut self.store)
    }

    /// The value of `key`.
    pub fn get(&mut self, key: Key) -> Result<Option<Value>, NandIndexError> {
        let leaf = self.descend(key)?;
        let node = self.resident(leaf);
        Ok(node.keys.binary_search(&key).ok().map(|i| node.values[i]))
    }

    /// Append every pair with `lo <= key <= hi` to `out`, in key order.
    pub fn range(
        &mut self,
        lo: Key,
        hi: Key,
        out: &mut Vec<(Key, Value)>,
    ) -> Result<(), NandIndexError> {
        if lo > hi {
            return Ok(());
        }
        let mut id = self.descend(lo)?;
        let mut first = true;
        loop {
            let node = if first {
                self.resident(id)
            } else {
                self.pool.get(id, &mut self.store)?
            };
            first = false;
            let start = node.keys.partition_point(|&k| k < lo);
            for (&k, &v) in node.keys[start..].iter().zip(&node.values[start..]) {
                if k > hi {
                    return Ok(());
                }
                out.push((k, v));
            }
            if node.next == NodeId::NONE {
                return Ok(());
            }
            id = node.next;
        }
    }

    /// Counters of the tree's structure.
    pub fn tree_stats(&self) -> TreeStats {
        self.stats
    }

    /// Counters of the buffer.
    pub fn buffer_stats(&self) -> BufferStats {
        self.pool.stats()
    }

    /// Counters of the storage manager.
    pub fn store_stats(&self) -> StoreStats {
        self.store.stats()
    }

    /// The storage manager.
    pub fn store(&self) -> &NodeStore<P> {
        &self.store
    }

    /// The buffer.
    pub fn pool(&self) -> &BufferPool<R> {
        &self.pool
    }

    /// Levels, the leaves included.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Node capacities.
    pub fn layout(&self) -> NodeLayout {
        self.layout
    }

    /// The root.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// Feed the tree's whole state to `hasher`: the storage manager (the flash and its RAM
    /// bookkeeping), the buffer pool, the root, its epoch, the height and the tree's
    /// counters. Two runs with the same inputs hash alike; the reports print it. The search
    /// path and the scratch node hold nothing between operations.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        self.store.hash_state(hasher);
        self.pool.hash_state(hasher);
        hasher.u32(self.root.0);
        hasher.u32(self.epoch);
        hasher.u32(self.height);
        let TreeStats {
            leaf_splits,
            inner_splits,
            root_splits,
            borrows,
            node_merges,
            root_collapses,
            restarts,
        } = self.stats;
        for x in [
            leaf_splits,
            inner_splits,
            root_splits,
            borrows,
            node_merges,
            root_collapses,
            restarts,
        ] {
            hasher.u64(x);
        }
    }
}
