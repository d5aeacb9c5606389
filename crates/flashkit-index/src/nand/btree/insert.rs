//! Insertion: a new key goes into its leaf as one `Insert` record; a full leaf splits into
//! halves, and the new right node's separator goes up, splitting inner nodes on the way and
//! growing a new root when the old one splits.

use super::{BTree, RESIDENT};
use crate::nand::buffer::Replacement;
use crate::nand::log::LogRecord;
use crate::nand::node::Node;
use crate::nand::storage::Placement;
use crate::nand::{Key, NandIndexError, NodeId, Value};

impl<P: Placement, R: Replacement> BTree<P, R> {
    /// Insert `key` or update its value; true when the key is new.
    pub fn put(&mut self, key: Key, value: Value) -> Result<bool, NandIndexError> {
        let leaf = self.descend(key)?;
        let node = self.resident(leaf);
        match node.keys.binary_search(&key) {
            Ok(_) => {
                self.modify(leaf, LogRecord::Update { key, value })?;
                Ok(false)
            }
            Err(pos) => {
                if node.len() < self.layout.leaf_capacity {
                    self.modify(leaf, LogRecord::Insert { key, value })?;
                } else {
                    self.split_leaf(leaf, pos, key, value)?;
                }
                Ok(true)
            }
        }
    }

    /// Split a full leaf around the new entry at `pos`: the left half keeps
    /// ceil((n + 1) / 2) entries, a new right leaf takes the rest.
    fn split_leaf(
        &mut self,
        leaf: NodeId,
        pos: usize,
        key: Key,
        value: Value,
    ) -> Result<(), NandIndexError> {
        let node = self.pool.resident(leaf).expect(RESIDENT);
        let n = node.len();
        let mid = (n + 2) / 2;
        let mut right = std::mem::take(&mut self.scratch);
        reset(&mut right, 0);
        right.next = node.next;
        for j in mid..=n {
            let (k, v) = match j.cmp(&pos) {
                std::cmp::Ordering::Less => (node.keys[j], node.values[j]),
                std::cmp::Ordering::Equal => (key, value),
                std::cmp::Ordering::Greater => (node.keys[j - 1], node.values[j - 1]),
            };
            right.keys.push(k);
            right.values.push(v);
        }
        let separator = right.keys[0];
        let right_id = self.store.allocate_id();
        let created = self.pool.create(right_id, &right, &mut self.store);
        self.scratch = right;
        created?;
        if pos < mid {
            self.modify(
                leaf,
                LogRecord::Truncate {
                    keep: (mid - 1) as u16,
                },
            )?;
            self.modify(leaf, LogRecord::Insert { key, value })?;
        } else {
            self.modify(leaf, LogRecord::Truncate { keep: mid as u16 })?;
        }
        self.modify(leaf, LogRecord::SetNext { next: right_id })?;
        self.stats.leaf_splits += 1;
        self.insert_into_parent(leaf, separator, right_id, 0)
    }

    /// Hook `right` (a new node at `level`, split off `left`) into the parent on the path,
    /// splitting parents that are full.
    fn insert_into_parent(
        &mut self,
        mut left: NodeId,
        mut separator: Key,
        mut right: NodeId,
        mut level: u8,
    ) -> Result<(), NandIndexError> {
        loop {
            let Some((parent, i)) = self.path.pop() else {
                return self.grow_root(left, separator, right, level + 1);
            };
            let node = self.pool.get(parent, &mut self.store)?;
            if node.len() < self.layout.inner_capacity {
                let record = LogRecord::InsertChild {
                    pos: i as u16,
                    key: separator,
                    child: right,
                };
                return self.modify(parent, record);
            }
            let (up, new_right) = self.split_inner(parent, i, separator, right)?;
            left = parent;
            separator = up;
            right = new_right;
            level += 1;
        }
    }

    /// Split a full inner node while inserting `separator` and `right` at `i`: the node keeps
    /// the first (n + 1) / 2 keys of the merged sequence, the next key goes up, a new node
    /// takes the rest. Returns the key that goes up and the new node.
    fn split_inner(
        &mut self,
        parent: NodeId,
        i: usize,
        separator: Key,
        right: NodeId,
    ) -> Result<(Key, NodeId), NandIndexError> {
        let node = self.pool.resident(parent).expect(RESIDENT);
        let n = node.len();
        let level = node.level;
        let mid = n.div_ceil(2);
        let key_at = |j: usize| match j.cmp(&i) {
            std::cmp::Ordering::Less => node.keys[j],
            std::cmp::Ordering::Equal => separator,
            std::cmp::Ordering::Greater => node.keys[j - 1],
        };
        let child_at = |j: usize| match j.cmp(&(i + 1)) {
            std::cmp::Ordering::Less => node.children[j],
            std::cmp::Ordering::Equal => right,
            std::cmp::Ordering::Greater => node.children[j - 1],
        };
        let up = key_at(mid);
        let mut new = std::mem::take(&mut self.scratch);
        reset(&mut new, level);
        new.keys.extend((mid + 1..=n).map(key_at));
        new.children.extend((mid + 1..=n + 1).map(child_at));
        let new_id = self.store.allocate_id();
        let created = self.pool.create(new_id, &new, &mut self.store);
        self.scratch = new;
        created?;
        if i < mid {
            self.modify(
                parent,
                LogRecord::Truncate {
                    keep: (mid - 1) as u16,
                },
            )?;
            let record = LogRecord::InsertChild {
                pos: i as u16,
                key: separator,
                child: right,
            };
            self.modify(parent, record)?;
        } else {
            self.modify(parent, LogRecord::Truncate { keep: mid as u16 })?;
        }
        self.stats.inner_splits += 1;
        Ok((up, new_id))
    }

    /// The root split: a new root over the two halves, with the next epoch.
    fn grow_root(
        &mut self,
        left: NodeId,
        separator: Key,
        right: NodeId,
        level: u8,
    ) -> Result<(), NandIndexError> {
        self.epoch += 1;
        let mut root = std::mem::take(&mut self.scratch);
        reset(&mut root, level);
        root.root_epoch = self.epoch;
        root.keys.push(separator);
        root.children.extend([left, right]);
        let id = self.store.allocate_id();
        let created = self.pool.create(id, &root, &mut self.store);
        self.scratch = root;
        created?;
        self.root = id;
        self.height += 1;
        self.stats.root_splits += 1;
        Ok(())
    }
}

/// Reset `node` to an empty node at `level`, keeping its vectors.
fn reset(node: &mut Node, level: u8) {
    node.level = level;
    node.root_epoch = 0;
    node.next = NodeId::NONE;
    node.keys.clear();
    node.values.clear();
    node.children.clear();
}
