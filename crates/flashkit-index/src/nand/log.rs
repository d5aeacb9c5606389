//! Log records: a node change as In-Page Logging writes it (Lee and Moon 2007; GRR paper
//! section 2.2), the change and not the page.
//!
//! Leaf records name keys (an insert of a key already present, or an update or delete of an
//! absent one, is refused when applied, so a record applied to the wrong version of a node
//! is caught); inner-node records name positions, because separators move between nodes in
//! splits and merges. Every structural change of the B+-tree is a short sequence of these.
//!
//! Encoding: a tag byte, then the fields little-endian; a log sector is records back to back.
//!
//! ```text
//! tag  record        fields                       bytes
//! 1    Insert        key u64, value u64            17
//! 2    Update        key u64, value u64            17
//! 3    Delete        key u64                        9
//! 4    InsertChild   pos u16, key u64, child u32   15   keys[pos] = key, children[pos+1] = child
//! 5    DeleteChild   pos u16                        3   removes keys[pos] and children[pos+1]
//! 6    SetKey        pos u16, key u64              11
//! 7    Truncate      keep u16                       3   keeps keep keys (and keep+1 children)
//! 8    PopFront      count u16                      3   drops the first count keys (and children)
//! 9    PushFront     key u64, child u32            13   inner: a new first child and key
//! 10   Append        key u64, child u32            13   inner: a new last key and child
//! 11   SetNext       next u32                       5
//! 12   SetRoot       epoch u32                      5
//! ```

use crate::nand::node::{Node, read_u32, read_u64};
use crate::nand::{Key, NodeId, Value};

/// One change of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogRecord {
    /// Leaf: a new key.
    Insert {
        /// The key.
        key: Key,
        /// Its value.
        value: Value,
    },
    /// Leaf: a new value for a present key.
    Update {
        /// The key.
        key: Key,
        /// Its new value.
        value: Value,
    },
    /// Leaf: a key removed.
    Delete {
        /// The key.
        key: Key,
    },
    /// Inner: a separator and the child to its right, inserted at `pos`.
    InsertChild {
        /// Position of the new key.
        pos: u16,
        /// The separator.
        key: Key,
        /// The child right of it.
        child: NodeId,
    },
    /// Inner: the separator at `pos` and the child to its right removed.
    DeleteChild {
        /// Position of the separator.
        pos: u16,
    },
    /// Inner: the separator at `pos` replaced.
    SetKey {
        /// Position.
        pos: u16,
        /// New separator.
        key: Key,
    },
    /// Keep the first `keep` keys (leaf: entries; inner: keys and `keep + 1` children).
    Truncate {
        /// Keys kept.
        keep: u16,
    },
    /// Drop the first `count` keys (leaf: entries; inner: keys and as many children).
    PopFront {
        /// Keys dropped.
        count: u16,
    },
    /// Inner: a new first child, with `key` separating it from the old first child.
    PushFront {
        /// The separator.
        key: Key,
        /// The child.
        child: NodeId,
    },
    /// Inner: a new last separator and child.
    Append {
        /// The separator.
        key: Key,
        /// The child.
        child: NodeId,
    },
    /// Leaf: a new right sibling.
    SetNext {
        /// The sibling.
        next: NodeId,
    },
    /// The node became the root at `epoch`.
    SetRoot {
        /// The epoch.
        epoch: u32,
    },
}

impl LogRecord {
    /// Encoded size in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            LogRecord::Insert { .. } | LogRecord::Update { .. } => 17,
            LogRecord::Delete { .. } => 9,
            LogRecord::InsertChild { .. } => 15,
            LogRecord::DeleteChild { .. }
            | LogRecord::Truncate { .. }
            | LogRecord::PopFront { .. } => 3,
            LogRecord::SetKey { .. } => 11,
            LogRecord::PushFront { .. } | LogRecord::Append { .. } => 13,
            LogRecord::SetNext { .. } | LogRecord::SetRoot { .. } => 5,
        }
    }

    /// Append the encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let key_child = |out: &mut Vec<u8>, key: &Key, child: &NodeId| {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&child.0.to_le_bytes());
        };
        match self {
            LogRecord::Insert { key, value } | LogRecord::Update { key, value } => {
                out.push(if matches!(self, LogRecord::Insert { .. }) {
                    1
                } else {
                    2
                });
                out.extend_from_slice(&key.to_le_bytes());
                out.extend_from_slice(&value.to_le_bytes());
            }
            LogRecord::Delete { key } => {
                out.push(3);
                out.extend_from_slice(&key.to_le_bytes());
            }
            LogRecord::InsertChild { pos, key, child } => {
                out.push(4);
                out.extend_from_slice(&pos.to_le_bytes());
                key_child(out, key, child);
            }
            LogRecord::DeleteChild { pos } => {
                out.push(5);
                out.extend_from_slice(&pos.to_le_bytes());
            }
            LogRecord::SetKey { pos, key } => {
                out.push(6);
                out.extend_from_slice(&pos.to_le_bytes());
                out.extend_from_slice(&key.to_le_bytes());
            }
            LogRecord::Truncate { keep } => {
                out.push(7);
                out.extend_from_slice(&keep.to_le_bytes());
            }
            LogRecord::PopFront { count } => {
                out.push(8);
                out.extend_from_slice(&count.to_le_bytes());
            }
            LogRecord::PushFront { key, child } => {
                out.push(9);
                key_child(out, key, child);
            }
            LogRecord::Append { key, child } => {
                out.push(10);
                key_child(out, key, child);
            }
            LogRecord::SetNext { next } => {
                out.push(11);
                out.extend_from_slice(&next.0.to_le_bytes());
            }
            LogRecord::SetRoot { epoch } => {
                out.push(12);
                out.extend_from_slice(&epoch.to_le_bytes());
            }
        }
    }

    /// Decode the record at the start of `bytes`; the record and its length.
    pub fn decode(bytes: &[u8]) -> Result<(LogRecord, usize), String> {
        let tag = *bytes.first().ok_or("empty record")?;
        let need = match tag {
            1 | 2 => 17,
            3 => 9,
            4 => 15,
            5 | 7 | 8 => 3,
            6 => 11,
            9 | 10 => 13,
            11 | 12 => 5,
            _ => return Err(format!("record tag: {tag} is not a record type")),
        };
        if bytes.len() < need {
            return Err(format!(
                "record tag {tag}: {} bytes left, {need} needed",
                bytes.len()
            ));
        }
        let b = &bytes[1..need];
        let pos = || u16::from_le_bytes([b[0], b[1]]);
        let record = match tag {
            1 => LogRecord::Insert {
                key: read_u64(b),
                value: read_u64(&b[8..]),
            },
            2 => LogRecord::Update {
                key: read_u64(b),
                value: read_u64(&b[8..]),
            },
            3 => LogRecord::Delete { key: read_u64(b) },
            4 => LogRecord::InsertChild {
                pos: pos(),
                key: read_u64(&b[2..]),
                child: NodeId(read_u32(b, 10)),
            },
            5 => LogRecord::DeleteChild { pos: pos() },
            6 => LogRecord::SetKey {
                pos: pos(),
                key: read_u64(&b[2..]),
            },
            7 => LogRecord::Truncate { keep: pos() },
            8 => LogRecord::PopFront { count: pos() },
            9 => LogRecord::PushFront {
                key: read_u64(b),
                child: NodeId(read_u32(b, 8)),
            },
            10 => LogRecord::Append {
                key: read_u64(b),
                child: NodeId(read_u32(b, 8)),
            },
            11 => LogRecord::SetNext {
                next: NodeId(read_u32(b, 0)),
            },
            _ => LogRecord::SetRoot {
                epoch: read_u32(b, 0),
            },
        };
        Ok((record, need))
    }

    /// Apply the change to `node`. A record that does not fit the node (a key already
    /// present for an insert, a position out of range, a leaf record on an inner node) is
    /// refused with what is wrong: the node and its log disagree.
    pub fn apply(&self, node: &mut Node) -> Result<(), String> {
        let len = node.len();
        self.change(node)
            .map_err(|what| format!("{self:?} on a node of {len} keys: {what}"))
    }

    /// The change [`LogRecord::apply`] makes, or what is wrong with it.
    #[inline]
    fn change(&self, node: &mut Node) -> Result<(), &'static str> {
        let leaf = node.is_leaf();
        match *self {
            LogRecord::Insert { key, value } if leaf => match node.keys.binary_search(&key) {
                Ok(_) => return Err("the key is present"),
                Err(i) => {
                    node.keys.insert(i, key);
                    node.values.insert(i, value);
                }
            },
            LogRecord::Update { key, value } if leaf => match node.keys.binary_search(&key) {
                Ok(i) => node.values[i] = value,
                Err(_) => return Err("the key is absent"),
            },
            LogRecord::Delete { key } if leaf => match node.keys.binary_search(&key) {
                Ok(i) => {
                    node.keys.remove(i);
                    node.values.remove(i);
                }
                Err(_) => return Err("the key is absent"),
            },
            LogRecord::InsertChild { pos, key, child } if !leaf => {
                let pos = usize::from(pos);
                if pos > node.keys.len() {
                    return Err("position out of range");
                }
                node.keys.insert(pos, key);
                node.children.insert(pos + 1, child);
            }
            LogRecord::DeleteChild { pos } if !leaf => {
                let pos = usize::from(pos);
                if pos >= node.keys.len() {
                    return Err("position out of range");
                }
                node.keys.remove(pos);
                node.children.remove(pos + 1);
            }
            LogRecord::SetKey { pos, key } if !leaf => match node.keys.get_mut(usize::from(pos)) {
                Some(k) => *k = key,
                None => return Err("position out of range"),
            },
            LogRecord::Truncate { keep } => return truncate(node, usize::from(keep), leaf),
            LogRecord::PopFront { count } => return pop_front(node, usize::from(count), leaf),
            LogRecord::PushFront { key, child } if !leaf => {
                node.keys.insert(0, key);
                node.children.insert(0, child);
            }
            LogRecord::Append { key, child } if !leaf => {
                node.keys.push(key);
                node.children.push(child);
            }
            LogRecord::SetNext { next } if leaf => node.next = next,
            LogRecord::SetRoot { epoch } => node.root_epoch = epoch,
            _ => return Err("wrong kind of node"),
        }
        Ok(())
    }
}

/// [`LogRecord::Truncate`]: keep the first `keep` keys of `node` (a `leaf` or not), with
/// their values or the children around them.
#[inline]
fn truncate(node: &mut Node, keep: usize, leaf: bool) -> Result<(), &'static str> {
    if keep > node.keys.len() {
        return Err("keeps more keys than the node has");
    }
    node.keys.truncate(keep);
    if leaf {
        node.values.truncate(keep);
    } else {
        node.children.truncate(keep + 1);
    }
    Ok(())
}

/// [`LogRecord::PopFront`]: drop the first `count` keys of `node` (a `leaf` or not), with
/// their values or the children before them.
#[inline]
fn pop_front(node: &mut Node, count: usize, leaf: bool) -> Result<(), &'static str> {
    if count > node.keys.len() {
        return Err("drops more keys than the node has");
    }
    node.keys.drain(..count);
    if leaf {
        node.values.drain(..count);
    } else {
        node.children.drain(..count);
    }
    Ok(())
}

/// Apply every record of an encoded sector to `node`.
pub fn apply_all(mut bytes: &[u8], node: &mut Node) -> Result<(), String> {
    while !bytes.is_empty() {
        let (record, len) = LogRecord::decode(bytes)?;
        record.apply(node)?;
        bytes = &bytes[len..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_record() -> Vec<LogRecord> {
        vec![
            LogRecord::Insert { key: 1, value: 2 },
            LogRecord::Update {
                key: u64::MAX,
                value: 0,
            },
            LogRecord::Delete { key: 7 },
            LogRecord::InsertChild {
                pos: 3,
                key: 9,
                child: NodeId(4),
            },
            LogRecord::DeleteChild { pos: 65535 },
            LogRecord::SetKey { pos: 2, key: 8 },
            LogRecord::Truncate { keep: 5 },
            LogRecord::PopFront { count: 1 },
            LogRecord::PushFront {
                key: 3,
                child: NodeId(6),
            },
            LogRecord::Append {
                key: 11,
                child: NodeId(12),
            },
            LogRecord::SetNext { next: NodeId::NONE },
            LogRecord::SetRoot { epoch: 77 },
        ]
    }

    #[test]
    fn records_round_trip_at_their_stated_sizes() {
        let mut bytes = Vec::new();
        for r in every_record() {
            let before = bytes.len();
            r.encode(&mut bytes);
            assert_eq!(bytes.len() - before, r.encoded_len(), "{r:?}");
        }
        let mut rest = &bytes[..];
        for r in every_record() {
            let (back, len) = LogRecord::decode(rest).expect("decodes");
            assert_eq!(back, r);
            rest = &rest[len..];
        }
        assert!(rest.is_empty());
        assert!(LogRecord::decode(&[99]).is_err());
        assert!(LogRecord::decode(&[1, 0, 0]).is_err());
    }

    #[test]
    fn leaf_records_check_the_key() {
        let mut leaf = Node::empty_leaf();
        for r in [
            LogRecord::Insert { key: 5, value: 50 },
            LogRecord::Insert { key: 1, value: 10 },
            LogRecord::Insert { key: 9, value: 90 },
            LogRecord::Update { key: 5, value: 55 },
            LogRecord::Delete { key: 1 },
            LogRecord::SetNext { next: NodeId(3) },
        ] {
            r.apply(&mut leaf).expect("applies");
        }
        assert_eq!(
            (leaf.keys.clone(), leaf.values.clone()),
            (vec![5, 9], vec![55, 90])
        );
        assert_eq!(leaf.next, NodeId(3));
        assert!(
            LogRecord::Insert { key: 5, value: 0 }
                .apply(&mut leaf)
                .is_err()
        );
        assert!(LogRecord::Delete { key: 6 }.apply(&mut leaf).is_err());
        assert!(
            LogRecord::SetKey { pos: 0, key: 1 }
                .apply(&mut leaf)
                .is_err()
        );
    }

    #[test]
    fn inner_records_move_keys_and_children_together() {
        let mut inner = Node {
            level: 1,
            keys: vec![10, 20],
            children: vec![NodeId(0), NodeId(1), NodeId(2)],
            ..Node::empty_leaf()
        };
        let steps = [
            LogRecord::InsertChild {
                pos: 1,
                key: 15,
                child: NodeId(9),
            },
            LogRecord::PushFront {
                key: 5,
                child: NodeId(8),
            },
            LogRecord::Append {
                key: 30,
                child: NodeId(7),
            },
            LogRecord::SetKey { pos: 0, key: 4 },
            LogRecord::DeleteChild { pos: 2 },
            LogRecord::PopFront { count: 1 },
            LogRecord::Truncate { keep: 2 },
        ];
        for r in steps {
            r.apply(&mut inner).expect("applies");
        }
        // [8] 4 [0] 10 [1] 15 [9] 20 [2] 30 [7] -> drop key 15 and child 9 -> pop front
        // -> [0] 10 [1] 20 [2] 30 [7] -> keep 2 keys.
        assert_eq!(inner.keys, vec![10, 20]);
        assert_eq!(inner.children, vec![NodeId(0), NodeId(1), NodeId(2)]);
        assert!(LogRecord::DeleteChild { pos: 2 }.apply(&mut inner).is_err());
    }

    fn inner() -> Node {
        Node {
            level: 1,
            keys: vec![10, 20],
            children: vec![NodeId(0), NodeId(1), NodeId(2)],
            ..Node::empty_leaf()
        }
    }

    fn leaf() -> Node {
        Node {
            keys: vec![1, 2, 3],
            values: vec![10, 20, 30],
            ..Node::empty_leaf()
        }
    }

    fn refusal(r: LogRecord, mut node: Node) -> String {
        let before = node.clone();
        let e = r.apply(&mut node).expect_err("refused");
        assert_eq!(node, before, "{r:?}: a refused record changed the node");
        e
    }

    /// Positions and counts at their last valid value apply; one past it is refused, the
    /// node unchanged, and the refusal says which record met which node.
    #[test]
    fn positions_are_checked_at_their_bounds() {
        let last = |r: LogRecord, mut node: Node| {
            r.apply(&mut node).expect("the bound applies");
            node
        };
        let n = last(
            LogRecord::InsertChild {
                pos: 2,
                key: 30,
                child: NodeId(3),
            },
            inner(),
        );
        assert_eq!((n.keys, n.children.len()), (vec![10, 20, 30], 4));
        let e = refusal(
            LogRecord::InsertChild {
                pos: 3,
                key: 30,
                child: NodeId(3),
            },
            inner(),
        );
        assert_eq!(
            e,
            "InsertChild { pos: 3, key: 30, child: node 3 } on a node of 2 keys: position \
             out of range"
        );
        let n = last(LogRecord::DeleteChild { pos: 1 }, inner());
        assert_eq!((n.keys, n.children), (vec![10], vec![NodeId(0), NodeId(1)]));
        refusal(LogRecord::DeleteChild { pos: 2 }, inner());
        let n = last(LogRecord::SetKey { pos: 1, key: 25 }, inner());
        assert_eq!(n.keys, vec![10, 25]);
        refusal(LogRecord::SetKey { pos: 2, key: 25 }, inner());
        for node in [inner(), leaf()] {
            let len = node.keys.len() as u16;
            let n = last(LogRecord::Truncate { keep: len }, node.clone());
            assert_eq!(n, node, "keeping every key changes nothing");
            let n = last(LogRecord::PopFront { count: len }, node.clone());
            assert!(n.keys.is_empty() && n.values.is_empty());
            assert_eq!(n.children.len(), usize::from(!node.is_leaf()));
            let e = refusal(LogRecord::Truncate { keep: len + 1 }, node.clone());
            assert!(e.ends_with("keeps more keys than the node has"), "{e}");
            let e = refusal(LogRecord::PopFront { count: len + 1 }, node.clone());
            assert!(e.ends_with("drops more keys than the node has"), "{e}");
        }
        let n = last(LogRecord::Truncate { keep: 1 }, leaf());
        assert_eq!((n.keys, n.values), (vec![1], vec![10]));
        let n = last(LogRecord::PopFront { count: 1 }, leaf());
        assert_eq!((n.keys, n.values), (vec![2, 3], vec![20, 30]));
        let n = last(LogRecord::Truncate { keep: 1 }, inner());
        assert_eq!((n.keys, n.children), (vec![10], vec![NodeId(0), NodeId(1)]));
        let n = last(LogRecord::PopFront { count: 1 }, inner());
        assert_eq!((n.keys, n.children), (vec![20], vec![NodeId(1), NodeId(2)]));
    }

    /// Leaf records are refused on an inner node and inner records on a leaf; the root
    /// mark, truncation and popping apply to both.
    #[test]
    fn each_record_applies_to_its_kind_of_node_only() {
        let leaf_only = [
            LogRecord::Insert { key: 5, value: 1 },
            LogRecord::Update { key: 10, value: 1 },
            LogRecord::Delete { key: 10 },
            LogRecord::SetNext { next: NodeId(4) },
        ];
        let inner_only = [
            LogRecord::InsertChild {
                pos: 0,
                key: 0,
                child: NodeId(4),
            },
            LogRecord::DeleteChild { pos: 0 },
            LogRecord::SetKey { pos: 0, key: 0 },
            LogRecord::PushFront {
                key: 0,
                child: NodeId(4),
            },
            LogRecord::Append {
                key: 0,
                child: NodeId(4),
            },
        ];
        for r in leaf_only {
            let e = refusal(r, inner());
            assert!(e.ends_with(": wrong kind of node"), "{e}");
        }
        for r in inner_only {
            let e = refusal(r, leaf());
            assert!(e.ends_with(": wrong kind of node"), "{e}");
        }
        for mut node in [inner(), leaf()] {
            LogRecord::SetRoot { epoch: 9 }
                .apply(&mut node)
                .expect("applies");
            assert_eq!(node.root_epoch, 9);
        }
        let e = refusal(LogRecord::Update { key: 4, value: 1 }, leaf());
        assert!(e.ends_with("the key is absent"), "{e}");
    }

    /// A record cut short names its tag and the bytes it needs; an empty slice and an
    /// unknown tag are refused by name.
    #[test]
    fn a_short_or_unknown_record_is_refused_by_name() {
        for r in every_record() {
            let mut bytes = Vec::new();
            r.encode(&mut bytes);
            let need = bytes.len();
            let e = LogRecord::decode(&bytes[..need - 1]).expect_err("short");
            assert_eq!(
                e,
                format!(
                    "record tag {}: {} bytes left, {need} needed",
                    bytes[0],
                    need - 1
                )
            );
            bytes.push(0xAB);
            assert_eq!(LogRecord::decode(&bytes).expect("decodes"), (r, need));
        }
        assert_eq!(LogRecord::decode(&[]).expect_err("empty"), "empty record");
        for tag in [0, 13, 255] {
            assert_eq!(
                LogRecord::decode(&[tag; 20]).expect_err("unknown"),
                format!("record tag: {tag} is not a record type")
            );
        }
        let mut node = leaf();
        let mut sector = Vec::new();
        LogRecord::Delete { key: 2 }.encode(&mut sector);
        LogRecord::Update { key: 3, value: 33 }.encode(&mut sector);
        apply_all(&sector, &mut node).expect("applies");
        assert_eq!((node.keys, node.values), (vec![1, 3], vec![10, 33]));
    }
}
