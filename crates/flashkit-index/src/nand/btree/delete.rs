//! Deletion: a key leaves its leaf as one `Delete` record; a node left under half full
//! borrows one entry from a sibling that has more than half (redistribution), or else the
//! right one of the pair is merged into the left one and its separator leaves the parent,
//! which may underflow in turn; a root left with one child hands the root to it.

use super::BTree;
use crate::nand::buffer::Replacement;
use crate::nand::log::LogRecord;
use crate::nand::storage::Placement;
use crate::nand::{Key, NandIndexError, NodeId, Value};

/// An underflowing node, its sibling and their parent.
#[derive(Clone, Copy, Debug)]
struct Pair {
    parent: NodeId,
    left: NodeId,
    right: NodeId,
    /// Position of the separator between them in the parent.
    sep_pos: usize,
    separator: Key,
    level: u8,
    /// The underflowing node is the left one.
    left_underflows: bool,
}

impl<P: Placement, R: Replacement> BTree<P, R> {
    /// Remove `key`; its value if it was present.
    pub fn remove(&mut self, key: Key) -> Result<Option<Value>, NandIndexError> {
        let leaf = self.descend(key)?;
        let node = self.resident(leaf);
        let Ok(pos) = node.keys.binary_search(&key) else {
            return Ok(None);
        };
        let value = node.values[pos];
        self.modify(leaf, LogRecord::Delete { key })?;
        self.rebalance(leaf)?;
        Ok(Some(value))
    }

    /// Restore the occupancy of `id` and its ancestors on the path.
    fn rebalance(&mut self, mut id: NodeId) -> Result<(), NandIndexError> {
        loop {
            let node = self.pool.ensure(id, &mut self.store)?;
            let (level, len) = (node.level, node.len());
            let Some(&(parent, i)) = self.path.last() else {
                return self.shrink_root(id, level, len);
            };
            if len >= self.layout.min(level) {
                return Ok(());
            }
            let p = self.pool.get(parent, &mut self.store)?;
            let (left, right, sep_pos) = if i + 1 < p.children.len() {
                (id, p.children[i + 1], i)
            } else {
                (p.children[i - 1], id, i - 1)
            };
            let pair = Pair {
                parent,
                left,
                right,
                sep_pos,
                separator: p.keys[sep_pos],
                level,
                left_underflows: left == id,
            };
            let sibling = if pair.left_underflows { right } else { left };
            let sibling_len = self.pool.get(sibling, &mut self.store)?.len();
            if sibling_len > self.layout.min(level) {
                return self.borrow(pair);
            }
            self.merge_pair(pair)?;
            self.path.pop();
            id = parent;
        }
    }

    /// Move one entry from the sibling through the parent's separator.
    fn borrow(&mut self, pair: Pair) -> Result<(), NandIndexError> {
        let records = if pair.left_underflows {
            self.borrow_from_right(pair)?
        } else {
            self.borrow_from_left(pair)?
        };
        for (id, record) in records {
            self.modify(id, record)?;
        }
        self.stats.borrows += 1;
        Ok(())
    }

    /// The records that move the right node's first entry into the underflowing left one:
    /// a leaf's first key and value (the parent's separator becomes the right node's second
    /// key), or an inner node's first child under the separator (which becomes the right
    /// node's first key).
    fn borrow_from_right(
        &mut self,
        pair: Pair,
    ) -> Result<[(NodeId, LogRecord); 3], NandIndexError> {
        let Pair {
            parent,
            left,
            right,
            sep_pos,
            separator,
            ..
        } = pair;
        let pos = sep_pos as u16;
        let r = self.pool.ensure(right, &mut self.store)?;
        Ok(if pair.level == 0 {
            let (k, v) = (r.keys[0], r.values[0]);
            [
                (left, LogRecord::Insert { key: k, value: v }),
                (right, LogRecord::PopFront { count: 1 }),
                (
                    parent,
                    LogRecord::SetKey {
                        pos,
                        key: r.keys[1],
                    },
                ),
            ]
        } else {
            [
                (
                    left,
                    LogRecord::Append {
                        key: separator,
                        child: r.children[0],
                    },
                ),
                (
                    parent,
                    LogRecord::SetKey {
                        pos,
                        key: r.keys[0],
                    },
                ),
                (right, LogRecord::PopFront { count: 1 }),
            ]
        })
    }

    /// The records that move the left node's last entry into the underflowing right one: a
    /// leaf's last key and value (which becomes the separator), or an inner node's last
    /// child under the separator (the left node's last key becomes the separator).
    fn borrow_from_left(&mut self, pair: Pair) -> Result<[(NodeId, LogRecord); 3], NandIndexError> {
        let Pair {
            parent,
            left,
            right,
            sep_pos,
            separator,
            ..
        } = pair;
        let pos = sep_pos as u16;
        let l = self.pool.ensure(left, &mut self.store)?;
        let n = l.len();
        let keep = LogRecord::Truncate {
            keep: (n - 1) as u16,
        };
        Ok(if pair.level == 0 {
            let (k, v) = (l.keys[n - 1], l.values[n - 1]);
            [
                (right, LogRecord::Insert { key: k, value: v }),
                (left, keep),
                (parent, LogRecord::SetKey { pos, key: k }),
            ]
        } else {
            let front = LogRecord::PushFront {
                key: separator,
                child: l.children[n],
            };
            [
                (right, front),
                (
                    parent,
                    LogRecord::SetKey {
                        pos,
                        key: l.keys[n - 1],
                    },
                ),
                (left, keep),
            ]
        })
    }

    /// Merge the right node into the left one and drop it from the parent.
    fn merge_pair(&mut self, pair: Pair) -> Result<(), NandIndexError> {
        let right = self.pool.ensure(pair.right, &mut self.store)?;
        let mut moved = std::mem::take(&mut self.scratch);
        moved.copy_from(right);
        let result = self.absorb(pair, &moved);
        self.scratch = moved;
        result?;
        self.modify(
            pair.parent,
            LogRecord::DeleteChild {
                pos: pair.sep_pos as u16,
            },
        )?;
        self.pool.free(pair.right, &mut self.store)?;
        self.stats.node_merges += 1;
        Ok(())
    }

    fn absorb(
        &mut self,
        pair: Pair,
        moved: &crate::nand::node::Node,
    ) -> Result<(), NandIndexError> {
        let left = pair.left;
        if pair.level == 0 {
            for (&key, &value) in moved.keys.iter().zip(&moved.values) {
                self.modify(left, LogRecord::Insert { key, value })?;
            }
            return self.modify(left, LogRecord::SetNext { next: moved.next });
        }
        let first = LogRecord::Append {
            key: pair.separator,
            child: moved.children[0],
        };
        self.modify(left, first)?;
        for (&key, &child) in moved.keys.iter().zip(&moved.children[1..]) {
            self.modify(left, LogRecord::Append { key, child })?;
        }
        Ok(())
    }

    /// A root inner node with no separator left hands the root to its only child.
    fn shrink_root(&mut self, id: NodeId, level: u8, len: usize) -> Result<(), NandIndexError> {
        if level == 0 || len > 0 {
            return Ok(());
        }
        let child = self.resident(id).children[0];
        self.epoch += 1;
        self.modify(child, LogRecord::SetRoot { epoch: self.epoch })?;
        self.pool.free(id, &mut self.store)?;
        self.root = child;
        self.height -= 1;
        self.stats.root_collapses += 1;
        Ok(())
    }
}
