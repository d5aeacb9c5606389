//! The tree's invariants and contents, read without counting: a buffered node as the buffer
//! holds it, any other from flash with uncounted peeks (plus a buffered log sector).

use super::BTree;
use crate::nand::buffer::Replacement;
use crate::nand::node::Node;
use crate::nand::storage::Placement;
use crate::nand::{Key, NodeId, Value};

impl<P: Placement, R: Replacement> BTree<P, R> {
    fn node_now(&self, id: NodeId) -> Result<Node, String> {
        self.pool.node_now(id, &self.store)
    }

    /// Every pair, in key order, following the leaf chain from the leftmost leaf.
    pub fn contents(&self) -> Result<Vec<(Key, Value)>, String> {
        let mut id = self.root;
        loop {
            let node = self.node_now(id)?;
            if node.is_leaf() {
                break;
            }
            id = node.children[0];
        }
        // A chain longer than the nodes that exist (on flash or only buffered) loops.
        let nodes = self.store.live_ids().count() + self.pool.unwritten().len();
        let mut out = Vec::new();
        let mut steps = 0usize;
        while id != NodeId::NONE {
            if steps == nodes {
                return Err(format!("the leaf chain loops: more than {nodes} leaves"));
            }
            let node = self.node_now(id)?;
            out.extend(node.keys.iter().copied().zip(node.values.iter().copied()));
            id = node.next;
            steps += 1;
        }
        Ok(out)
    }

    /// Check the tree, the buffer and the storage manager; the first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut walk = Walk::default();
        let root = self.node_now(self.root)?;
        if root.root_epoch != self.epoch {
            return Err(format!(
                "the root {} has epoch {}, the tree {}",
                self.root, root.root_epoch, self.epoch
            ));
        }
        if u32::from(root.level) + 1 != self.height {
            return Err(format!(
                "the root is at level {}, the height is {}",
                root.level, self.height
            ));
        }
        self.check_node(self.root, root, None, None, true, &mut walk)?;
        for pair in walk.leaves.windows(2) {
            if pair[0].1 != pair[1].0 {
                return Err(format!(
                    "leaf chain: a leaf names {} as next, the next leaf is {}",
                    pair[0].1, pair[1].0
                ));
            }
        }
        if let Some(last) = walk.leaves.last()
            && last.1 != NodeId::NONE
        {
            return Err(format!("the last leaf names {} as next", last.1));
        }
        self.check_nodes_accounted(&mut walk.ids)?;
        self.pool.check(&self.store)?;
        self.store.check()
    }

    /// Every node reachable from the root is on flash or buffered as new, and every node
    /// on flash is reachable (no leaked node images).
    fn check_nodes_accounted(&self, reachable: &mut Vec<NodeId>) -> Result<(), String> {
        reachable.sort();
        let mut known: Vec<NodeId> = self.store.live_ids().collect();
        known.extend(self.pool.unwritten());
        known.sort();
        if *reachable != known {
            let missing: Vec<_> = reachable
                .iter()
                .filter(|id| known.binary_search(id).is_err())
                .collect();
            let leaked: Vec<_> = known
                .iter()
                .filter(|id| reachable.binary_search(id).is_err())
                .collect();
            return Err(format!(
                "reachable nodes and stored nodes differ: unknown {missing:?}, unreachable {leaked:?}"
            ));
        }
        Ok(())
    }

    fn check_node(
        &self,
        id: NodeId,
        node: Node,
        lo: Option<Key>,
        hi: Option<Key>,
        is_root: bool,
        walk: &mut Walk,
    ) -> Result<(), String> {
        walk.ids.push(id);
        let fail = |what: String| Err(format!("{id} (level {}): {what}", node.level));
        if !node.keys.windows(2).all(|w| w[0] < w[1]) {
            return fail("keys are not strictly increasing".into());
        }
        if let (Some(lo), Some(&first)) = (lo, node.keys.first())
            && first < lo
        {
            return fail(format!("key {first} is below the bound {lo}"));
        }
        if let (Some(hi), Some(&last)) = (hi, node.keys.last())
            && last >= hi
        {
            return fail(format!("key {last} is not below the bound {hi}"));
        }
        let (cap, min) = (
            self.layout.capacity(node.level),
            self.layout.min(node.level),
        );
        if node.len() > cap || (!is_root && node.len() < min) {
            return fail(format!("{} keys, allowed {min}..={cap}", node.len()));
        }
        if !is_root && node.root_epoch >= self.epoch {
            return fail(format!("root epoch {} but not the root", node.root_epoch));
        }
        if node.is_leaf() {
            if node.values.len() != node.len() || !node.children.is_empty() {
                return fail("a leaf needs one value per key and no children".into());
            }
            walk.leaves.push((id, node.next));
            return Ok(());
        }
        if (is_root && node.is_empty()) || node.children.len() != node.len() + 1 {
            return fail(format!(
                "{} children for {} keys",
                node.children.len(),
                node.len()
            ));
        }
        if !node.values.is_empty() || node.next != NodeId::NONE {
            return fail("an inner node has no values and no next leaf".into());
        }
        for (i, &child) in node.children.iter().enumerate() {
            let sub = self.node_now(child)?;
            if sub.level + 1 != node.level {
                return fail(format!("child {child} is at level {}", sub.level));
            }
            let c_lo = if i == 0 { lo } else { Some(node.keys[i - 1]) };
            let c_hi = node.keys.get(i).copied().or(hi);
            self.check_node(child, sub, c_lo, c_hi, false, walk)?;
        }
        Ok(())
    }
}

#[derive(Default)]
struct Walk {
    ids: Vec<NodeId>,
    /// Leaves in key order with the next leaf each names.
    leaves: Vec<(NodeId, NodeId)>,
}
