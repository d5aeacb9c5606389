//! A B+-tree node in RAM and its on-flash image.
//!
//! A node is one page. Leaves hold sorted keys and their values and name their right
//! sibling; inner nodes hold sorted separator keys and one more child than keys (the keys of
//! `children[i + 1]` are at least `keys[i]`, those of `children[i]` below it). `root_epoch`
//! is how the root is found again from flash: every change of root gives the new root a
//! higher epoch, and boot takes the reachable node with the highest one.
//!
//! Image layout, after the 32-byte page header (`page.rs`), little-endian:
//!
//! ```text
//! 0      u8    level (0 = leaf)
//! 1      u8    reserved (0)
//! 2      u16   key count n
//! 4      u32   next: the right sibling of a leaf (u32::MAX: none)
//! 8      u32   root epoch (0: never the root)
//! 12     u32   reserved (0)
//! 16     n x u64 keys
//! then   leaf: n x u64 values; inner: n + 1 x u32 children
//! ```

use crate::nand::{Key, NodeId, Value};
use flashkit_core::StateHasher;

/// Bytes of the node header inside the page payload.
pub const NODE_HEADER_BYTES: usize = 16;

/// A node decoded into RAM.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// 0 for a leaf; a parent's level is its children's plus one.
    pub level: u8,
    /// The epoch at which this node became the root (0: never).
    pub root_epoch: u32,
    /// A leaf's right sibling ([`NodeId::NONE`] for the last leaf and for inner nodes).
    pub next: NodeId,
    /// Sorted keys (entries of a leaf, separators of an inner node).
    pub keys: Vec<Key>,
    /// A leaf's values, one per key; empty for inner nodes.
    pub values: Vec<Value>,
    /// An inner node's children, one more than keys; empty for leaves.
    pub children: Vec<NodeId>,
}

impl Node {
    /// An empty leaf: the default node, whose `next` is [`NodeId::NONE`] (`NodeId`'s
    /// default).
    pub fn empty_leaf() -> Node {
        Node::default()
    }

    /// True for a leaf.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }

    /// Entries of a leaf, separator keys of an inner node.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No keys.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The child to follow for `key`: the number of separators at or below it.
    pub fn child_index(&self, key: Key) -> usize {
        self.keys.partition_point(|&k| k <= key)
    }

    /// Make this node a copy of `other`, reusing its vectors.
    pub fn copy_from(&mut self, other: &Node) {
        self.level = other.level;
        self.root_epoch = other.root_epoch;
        self.next = other.next;
        self.keys.clone_from(&other.keys);
        self.values.clone_from(&other.values);
        self.children.clone_from(&other.children);
    }

    /// Feed every field to `hasher`, each list after its length.
    pub(crate) fn hash_state(&self, hasher: &mut StateHasher) {
        let Node {
            level,
            root_epoch,
            next,
            keys,
            values,
            children,
        } = self;
        hasher.u32(u32::from(*level));
        hasher.u32(*root_epoch);
        hasher.u32(next.0);
        for list in [keys, values] {
            hasher.u64(list.len() as u64);
            for &x in list {
                hasher.u64(x);
            }
        }
        hasher.u64(children.len() as u64);
        for child in children {
            hasher.u32(child.0);
        }
    }

    /// Bytes of the encoded image.
    pub fn encoded_len(&self) -> usize {
        let n = self.keys.len();
        NODE_HEADER_BYTES + 8 * n + if self.is_leaf() { 8 * n } else { 4 * (n + 1) }
    }

    /// Append the image to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.level);
        out.push(0);
        out.extend_from_slice(&(self.keys.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.next.0.to_le_bytes());
        out.extend_from_slice(&self.root_epoch.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for k in &self.keys {
            out.extend_from_slice(&k.to_le_bytes());
        }
        if self.is_leaf() {
            for v in &self.values {
                out.extend_from_slice(&v.to_le_bytes());
            }
        } else {
            for c in &self.children {
                out.extend_from_slice(&c.0.to_le_bytes());
            }
        }
    }

    /// Decode an image into this node, reusing its vectors. The error names the field.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), String> {
        if bytes.len() < NODE_HEADER_BYTES {
            return Err(format!(
                "node header: {} bytes, {NODE_HEADER_BYTES} needed",
                bytes.len()
            ));
        }
        self.level = bytes[0];
        let n = usize::from(u16::from_le_bytes([bytes[2], bytes[3]]));
        self.next = NodeId(read_u32(bytes, 4));
        self.root_epoch = read_u32(bytes, 8);
        let body = &bytes[NODE_HEADER_BYTES..];
        let children = if self.is_leaf() { 0 } else { n + 1 };
        let need = 8 * n + if self.is_leaf() { 8 * n } else { 4 * children };
        if body.len() != need {
            return Err(format!(
                "key count: {n} keys at level {} need {need} bytes, the page holds {}",
                self.level,
                body.len()
            ));
        }
        self.keys.clear();
        self.values.clear();
        self.children.clear();
        let (keys, rest) = body.split_at(8 * n);
        self.keys.extend(keys.chunks_exact(8).map(read_u64));
        if self.is_leaf() {
            self.values.extend(rest.chunks_exact(8).map(read_u64));
        } else {
            self.children
                .extend(rest.chunks_exact(4).map(|c| NodeId(read_u32(c, 0))));
        }
        Ok(())
    }
}

/// How many entries a page holds, from the page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct NodeLayout {
    /// Page size in bytes.
    pub page_bytes: u32,
    /// Most entries a leaf holds.
    pub leaf_capacity: usize,
    /// Most keys an inner node holds (it has one more child).
    pub inner_capacity: usize,
}

impl NodeLayout {
    /// The layout for pages of `page_bytes` bytes.
    pub fn for_page(page_bytes: u32) -> NodeLayout {
        let room = page_bytes as usize - crate::nand::page::HEADER_BYTES - NODE_HEADER_BYTES;
        NodeLayout {
            page_bytes,
            leaf_capacity: room / 16,
            inner_capacity: (room - 4) / 12,
        }
    }

    /// Fewest entries a leaf other than the root may hold.
    pub fn leaf_min(&self) -> usize {
        self.leaf_capacity / 2
    }

    /// Fewest keys an inner node other than the root may hold.
    pub fn inner_min(&self) -> usize {
        self.inner_capacity / 2
    }

    /// Capacity of a node at `level`.
    pub fn capacity(&self, level: u8) -> usize {
        if level == 0 {
            self.leaf_capacity
        } else {
            self.inner_capacity
        }
    }

    /// Minimum occupancy of a non-root node at `level`.
    pub fn min(&self, level: u8) -> usize {
        if level == 0 {
            self.leaf_min()
        } else {
            self.inner_min()
        }
    }
}

pub(crate) fn read_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(
        bytes[at..at + 4]
            .try_into()
            .expect("invariant: a 4-byte slice"),
    )
}

pub(crate) fn read_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().expect("invariant: an 8-byte slice"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_round_trip() {
        let leaf = Node {
            level: 0,
            root_epoch: 3,
            next: NodeId(9),
            keys: vec![1, 5, 1 << 40],
            values: vec![10, 50, 7],
            children: vec![],
        };
        let inner = Node {
            level: 2,
            root_epoch: 0,
            next: NodeId::NONE,
            keys: vec![100, 200],
            values: vec![],
            children: vec![NodeId(1), NodeId(2), NodeId(3)],
        };
        for node in [leaf, inner, Node::empty_leaf()] {
            let mut bytes = Vec::new();
            node.encode(&mut bytes);
            assert_eq!(bytes.len(), node.encoded_len());
            let mut back = Node::default();
            back.decode(&bytes).expect("decodes");
            assert_eq!(back, node);
        }
    }

    #[test]
    fn a_truncated_image_names_the_field() {
        let mut bytes = Vec::new();
        Node {
            keys: vec![1, 2],
            values: vec![3, 4],
            ..Node::empty_leaf()
        }
        .encode(&mut bytes);
        bytes.pop();
        let err = Node::default().decode(&bytes).expect_err("refused");
        assert!(err.contains("key count"), "{err}");
    }

    #[test]
    fn layouts_fill_the_page() {
        let grr = NodeLayout::for_page(2048);
        assert_eq!((grr.leaf_capacity, grr.inner_capacity), (125, 166));
        let small = NodeLayout::for_page(512);
        assert_eq!((small.leaf_capacity, small.inner_capacity), (29, 38));
        for layout in [grr, small] {
            let full_leaf = Node {
                keys: vec![0; layout.leaf_capacity],
                values: vec![0; layout.leaf_capacity],
                ..Node::empty_leaf()
            };
            let full_inner = Node {
                level: 1,
                keys: vec![0; layout.inner_capacity],
                children: vec![NodeId(0); layout.inner_capacity + 1],
                ..Node::empty_leaf()
            };
            for node in [full_leaf, full_inner] {
                assert!(
                    node.encoded_len() + crate::nand::page::HEADER_BYTES
                        <= layout.page_bytes as usize
                );
            }
        }
    }

    /// Every field of a node reaches its state hash, in a place of its own: keys and values
    /// alike in type, but not interchangeable.
    #[test]
    fn every_field_reaches_the_state_hash() {
        let hash = |node: &Node| {
            let mut hasher = StateHasher::new();
            node.hash_state(&mut hasher);
            hasher.finish()
        };
        let leaf = || Node {
            keys: vec![1, 2],
            values: vec![10, 20],
            ..Node::empty_leaf()
        };
        type Change = (&'static str, fn(&mut Node));
        let changes: [Change; 9] = [
            ("the level", |n| n.level = 1),
            ("the root epoch", |n| n.root_epoch = 3),
            ("the next leaf", |n| n.next = NodeId(4)),
            ("a key", |n| n.keys[1] = 3),
            ("a value", |n| n.values[1] = 30),
            ("a key moved to the values", |n| {
                let key = n.keys.pop().expect("a key");
                n.values.insert(0, key)
            }),
            ("a child", |n| n.children.push(NodeId(1))),
            ("another child", |n| n.children.push(NodeId(2))),
            ("no keys", |n| n.keys.clear()),
        ];
        let mut seen = vec![hash(&leaf())];
        for (part, change) in changes {
            let mut node = leaf();
            change(&mut node);
            let h = hash(&node);
            assert!(
                !seen.contains(&h),
                "{part} does not reach the state hash on its own"
            );
            seen.push(h);
        }
    }

    /// The image byte for byte as the module's table lays it out.
    #[test]
    fn an_image_is_laid_out_as_documented() {
        let mut bytes = Vec::new();
        Node {
            level: 0,
            root_epoch: 0x0102_0304,
            next: NodeId(0x0a0b_0c0d),
            keys: vec![0x11],
            values: vec![0x22],
            children: vec![],
        }
        .encode(&mut bytes);
        let mut want = vec![0, 0, 1, 0, 0x0d, 0x0c, 0x0b, 0x0a, 4, 3, 2, 1, 0, 0, 0, 0];
        want.extend_from_slice(&0x11u64.to_le_bytes());
        want.extend_from_slice(&0x22u64.to_le_bytes());
        assert_eq!(bytes, want);
        bytes.clear();
        Node {
            level: 3,
            keys: vec![7],
            children: vec![NodeId(5), NodeId(6)],
            ..Node::empty_leaf()
        }
        .encode(&mut bytes);
        assert_eq!(&bytes[..4], &[3, 0, 1, 0]);
        assert_eq!(&bytes[24..], &[5, 0, 0, 0, 6, 0, 0, 0]);
        assert_eq!(bytes.len(), 16 + 8 + 8);
        let err = Node::default().decode(&bytes[..15]).expect_err("short");
        assert_eq!(err, "node header: 15 bytes, 16 needed");
        let err = Node::default().decode(&bytes[..31]).expect_err("short");
        assert_eq!(
            err,
            "key count: 1 keys at level 3 need 16 bytes, the page holds 15"
        );
    }

    /// A decode into a used node leaves nothing of it behind, and a copy is equal.
    #[test]
    fn decode_and_copy_reuse_a_node_whole() {
        let inner = Node {
            level: 1,
            root_epoch: 2,
            next: NodeId::NONE,
            keys: vec![4, 8],
            values: vec![],
            children: vec![NodeId(1), NodeId(2), NodeId(3)],
        };
        let leaf = Node {
            root_epoch: 5,
            next: NodeId(6),
            keys: vec![1, 2, 3],
            values: vec![9, 9, 9],
            ..Node::empty_leaf()
        };
        for (from, into) in [(&inner, &leaf), (&leaf, &inner)] {
            let mut bytes = Vec::new();
            from.encode(&mut bytes);
            let mut node = into.clone();
            node.decode(&bytes).expect("decodes");
            assert_eq!(&node, from);
            let mut copy = into.clone();
            copy.copy_from(from);
            assert_eq!(&copy, from);
        }
        assert_eq!((leaf.len(), leaf.is_empty()), (3, false));
        assert!(Node::empty_leaf().is_empty() && Node::empty_leaf().is_leaf());
        assert_eq!(Node::empty_leaf().next, NodeId::NONE);
        assert!(!inner.is_leaf());
    }

    /// A key equal to a separator goes right of it.
    #[test]
    fn the_child_for_a_key_counts_the_separators_at_or_below_it() {
        let inner = Node {
            level: 1,
            keys: vec![10, 20],
            children: vec![NodeId(0), NodeId(1), NodeId(2)],
            ..Node::empty_leaf()
        };
        let got: Vec<usize> = [0, 9, 10, 11, 19, 20, 21, u64::MAX]
            .iter()
            .map(|&k| inner.child_index(k))
            .collect();
        assert_eq!(got, [0, 0, 1, 1, 1, 2, 2, 2]);
    }

    /// Half-full is rounded down, per level.
    #[test]
    fn minimum_occupancy_is_half_the_capacity_per_level() {
        let l = NodeLayout::for_page(2048);
        assert_eq!((l.leaf_min(), l.inner_min()), (62, 83));
        assert_eq!(
            (l.capacity(0), l.capacity(1), l.capacity(5)),
            (125, 166, 166)
        );
        assert_eq!((l.min(0), l.min(1), l.min(5)), (62, 83, 83));
    }
}
