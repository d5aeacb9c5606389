//! Updates of the mu-tree: insertion with splits up to the root (Fig. 13(b)), deletion with
//! borrowing, and the page writes they need.

use super::{
    C_BORROWS, C_SPLITS, Children, EXTRA, IndexError, Key, Keys, MuTree, NAME, NO_PAGE, Node, PATH,
    PageSpec, Pairs, RIGHT, Value,
};
use smallvec::smallvec;

impl MuTree {
    /// Collect garbage until `pages` pages can be written without another collection, so
    /// that no collection rewrites the tree under an operation's path read into RAM.
    pub(super) fn ensure_room(&mut self, pages: u32) -> Result<(), IndexError> {
        // A collection rewrites each valid page of its victim once at most and refuses a
        // victim whose pages are all valid, so each one frees a page net at least:
        // `pages` collections always suffice.
        for _ in 0..=pages {
            let spare_blocks = self.free_blocks.len().saturating_sub(1) as u32;
            if self.pages_per_block - self.next_page.min(self.pages_per_block)
                + spare_blocks * self.pages_per_block
                >= pages
            {
                return Ok(());
            }
            self.collect()?;
        }
        Err(IndexError::OutOfSpace {
            structure: NAME,
            detail: format!("garbage collection cannot free {pages} pages"),
        })
    }

    /// Pages one update may write at most: the path, the right chain, loose pieces.
    pub(super) fn pages_per_update(&self) -> u32 {
        2 * self.height + 4
    }

    pub(super) fn insert(&mut self, key: Key, value: Value) -> Result<bool, IndexError> {
        self.ensure_room(self.pages_per_update())?;
        let (pages, mut nodes) = self.read_path(key);
        let height = self.height;
        let leaf_page = pages[pages.len() - 1];
        let Some(Node::Leaf(pairs)) = nodes.last_mut() else {
            unreachable!("invariant: a path ends in a leaf")
        };
        let is_new = match pairs.binary_search_by_key(&key, |p| p.0) {
            Ok(i) if pairs[i].1 == value => return Ok(false),
            Ok(i) => {
                pairs[i].1 = value;
                false
            }
            Err(i) => {
                pairs.insert(i, (key, value));
                true
            }
        };
        if pairs.len() <= self.leaf_capacity() {
            self.write_path(&nodes, &[leaf_page])?;
            return Ok(is_new);
        }
        self.split(nodes, height, leaf_page)?;
        Ok(is_new)
    }

    /// Split an overfull leaf and every ancestor that overflows (section 0.6.2, Fig. 13(b)).
    /// The right leaf's chain of new nodes goes in one page, nodes that hold neither path
    /// in pages of their own (with a copy of their leftmost path), then the left leaf's path.
    pub(super) fn split(
        &mut self,
        mut nodes: Vec<Node>,
        height: u32,
        leaf_page: u16,
    ) -> Result<(), IndexError> {
        self.counts[C_SPLITS] += 1;
        let n = nodes.len();
        let Node::Leaf(pairs) = &mut nodes[n - 1] else {
            unreachable!("invariant: a path ends in a leaf")
        };
        let right_pairs: Pairs = pairs.drain(pairs.len() / 2..).collect();
        let mut sep = right_pairs[0].0;
        let mut right_chain = vec![Node::Leaf(right_pairs)];
        let mut loose: Vec<(u32, Node)> = Vec::new();
        let mut promote = true;
        let mut level = 1;
        while promote && level < height {
            let idx = n - 1 - level as usize;
            let cap = self.inner_capacity(level, height);
            let Node::Inner { children, keys } = &mut nodes[idx] else {
                unreachable!("invariant: inner levels hold inner nodes")
            };
            let ci = children
                .iter()
                .position(|&c| c == PATH)
                .expect("invariant: the path child is marked");
            keys.insert(ci, sep);
            children.insert(ci + 1, RIGHT);
            if children.len() <= cap {
                promote = false;
                break;
            }
            // Split between the two paths: each half holds one of them and both fit.
            let right_children: Children = children.drain(ci + 1..).collect();
            let right_keys: Keys = keys.drain(ci + 1..).collect();
            sep = keys
                .pop()
                .expect("invariant: a split inner node has a separator");
            let mut rc = right_children;
            rc[0] = RIGHT;
            right_chain.push(Node::Inner {
                children: rc,
                keys: right_keys,
            });
            level += 1;
        }
        let new_root = if promote {
            Some(self.split_root(&mut nodes, &mut right_chain, &mut loose, sep, height)?)
        } else {
            None
        };
        self.write_split(nodes, right_chain, loose, new_root, height, leaf_page)
    }
}

/// Cut an inner node's children and keys into nodes of at most `cap` children; the pieces
/// and the separators between them.
fn chunk(children: &[u16], keys: &[Key], cap: usize) -> (Vec<Node>, Keys) {
    let pieces = children.len().div_ceil(cap);
    let per = children.len().div_ceil(pieces);
    let mut nodes = Vec::new();
    let mut seps = Keys::new();
    let mut start = 0;
    while start < children.len() {
        let end = (start + per).min(children.len());
        let node_keys = Keys::from_slice(&keys[start..end - 1]);
        if end < children.len() {
            seps.push(keys[end - 1]);
        }
        nodes.push(Node::Inner {
            children: Children::from_slice(&children[start..end]),
            keys: node_keys,
        });
        start = end;
    }
    (nodes, seps)
}

fn has(node: &Node, marker: u16) -> bool {
    matches!(node, Node::Inner { children, .. } if children.contains(&marker))
}

impl MuTree {
    pub(super) fn max_height(&self) -> u32 {
        let mut h = 1;
        while self.page_words >> h >= 4 {
            h += 1;
        }
        h
    }

    /// The root split: a new root above the old root's halves, which shrink to the size of
    /// a non-root node of their level (cut into more pieces if they no longer fit).
    pub(super) fn split_root(
        &mut self,
        nodes: &mut [Node],
        right_chain: &mut [Node],
        loose: &mut Vec<(u32, Node)>,
        sep: Key,
        height: u32,
    ) -> Result<Node, IndexError> {
        let new_height = height + 1;
        if new_height > self.max_height() {
            return Err(IndexError::OutOfSpace {
                structure: NAME,
                detail: format!(
                    "a {new_height}-level path no longer fits a {}-byte page",
                    self.cfg.page_bytes
                ),
            });
        }
        if height == 1 {
            return Ok(Node::Inner {
                children: smallvec![PATH, RIGHT],
                keys: smallvec![sep],
            });
        }
        let cap = self.inner_capacity(height - 1, new_height);
        let last = right_chain.len() - 1;
        let split_parts = |node: &Node| match node {
            Node::Inner { children, keys } => chunk(children, keys, cap),
            Node::Leaf(_) => unreachable!("invariant: the old root is an inner node"),
        };
        let (left, left_seps) = split_parts(&nodes[0]);
        let (right, right_seps) = split_parts(&right_chain[last]);
        let mut children = Children::new();
        let mut keys = left_seps;
        keys.push(sep);
        keys.extend(right_seps);
        for piece in left.into_iter().chain(right) {
            let marker = if has(&piece, PATH) {
                nodes[0] = piece;
                PATH
            } else if has(&piece, RIGHT) {
                right_chain[last] = piece;
                RIGHT
            } else {
                loose.push((height - 1, piece));
                EXTRA - (loose.len() as u16 - 1)
            };
            children.push(marker);
        }
        if children.len() > self.inner_capacity(height, new_height) {
            return Err(IndexError::OutOfSpace {
                structure: NAME,
                detail: format!(
                    "the root split into {} nodes, more than a {new_height}-level root holds in a {}-byte page",
                    children.len(),
                    self.cfg.page_bytes
                ),
            });
        }
        Ok(Node::Inner { children, keys })
    }

    pub(super) fn write_split(
        &mut self,
        nodes: Vec<Node>,
        right_chain: Vec<Node>,
        loose: Vec<(u32, Node)>,
        new_root: Option<Node>,
        height: u32,
        leaf_page: u16,
    ) -> Result<(), IndexError> {
        let new_height = height + u32::from(new_root.is_some());
        let mut extra = Vec::new();
        for (level, node) in loose {
            let Node::Inner { mut children, keys } = node else {
                unreachable!("invariant: loose nodes are inner nodes")
            };
            let (below_pages, below) = self.leftmost_below(children[0], level - 1);
            children[0] = PATH;
            let mut page_nodes = vec![Node::Inner { children, keys }];
            page_nodes.extend(below);
            let old = [below_pages[below_pages.len() - 1]];
            let spec = PageSpec {
                top: level,
                height: new_height,
                root: false,
                right: NO_PAGE,
                extra: &[],
                old: &old,
            };
            extra.push(self.write_page(&page_nodes, spec)?);
        }
        let mut chain = right_chain;
        chain.reverse();
        let spec = PageSpec {
            top: chain.len() as u32 - 1,
            height: new_height,
            root: false,
            right: NO_PAGE,
            extra: &extra,
            old: &[],
        };
        let right = self.write_page(&chain, spec)?;
        let mut path: Vec<Node> = new_root.into_iter().collect();
        path.extend(nodes);
        let spec = PageSpec {
            top: new_height - 1,
            height: new_height,
            root: true,
            right,
            extra: &extra,
            old: &[leaf_page],
        };
        self.write_page(&path, spec)?;
        Ok(())
    }
}

impl MuTree {
    pub(super) fn delete(&mut self, key: Key) -> Result<Option<Value>, IndexError> {
        self.ensure_room(self.pages_per_update())?;
        let (pages, mut nodes) = self.read_path(key);
        let leaf_page = pages[pages.len() - 1];
        let n = nodes.len();
        let Node::Leaf(pairs) = &mut nodes[n - 1] else {
            unreachable!("invariant: a path ends in a leaf")
        };
        let Ok(i) = pairs.binary_search_by_key(&key, |p| p.0) else {
            return Ok(None);
        };
        let value = pairs.remove(i).1;
        if !pairs.is_empty() || n == 1 {
            self.write_path(&nodes, &[leaf_page])?;
            return Ok(Some(value));
        }
        if self.borrow(&mut nodes, leaf_page)? {
            return Ok(Some(value));
        }
        self.drop_leaf(nodes, leaf_page)?;
        Ok(Some(value))
    }

    /// The leaf emptied: borrow the nearest key of an adjacent leaf under the same parent
    /// that can spare one (section 0.6.2). False when none can.
    pub(super) fn borrow(
        &mut self,
        nodes: &mut [Node],
        leaf_page: u16,
    ) -> Result<bool, IndexError> {
        let n = nodes.len();
        let Node::Inner { children, keys } = &nodes[n - 2] else {
            unreachable!("invariant: a leaf's parent is an inner node")
        };
        let ci = children
            .iter()
            .position(|&c| c == PATH)
            .expect("invariant: the path is marked");
        let mut candidates = Vec::new();
        if ci + 1 < children.len() {
            candidates.push(ci + 1);
        }
        if ci > 0 {
            candidates.push(ci - 1);
        }
        let (children, mut keys) = (children.clone(), keys.clone());
        for si in candidates {
            let Node::Leaf(mut sibling) = self.read_node(children[si], 0) else {
                unreachable!("invariant: level 0 holds leaves")
            };
            if sibling.len() < 2 {
                continue;
            }
            let moved = if si > ci {
                let moved = sibling.remove(0);
                keys[ci] = sibling[0].0;
                moved
            } else {
                let moved = sibling.pop().expect("invariant: two keys or more");
                keys[ci - 1] = moved.0;
                moved
            };
            let spec = PageSpec {
                top: 0,
                height: self.height,
                root: false,
                right: NO_PAGE,
                extra: &[],
                old: &[children[si]],
            };
            let sibling_page = self.write_page(&[Node::Leaf(sibling)], spec)?;
            let mut new_children = children.clone();
            new_children[si] = sibling_page;
            nodes[n - 2] = Node::Inner {
                children: new_children,
                keys,
            };
            nodes[n - 1] = Node::Leaf(smallvec![moved]);
            self.write_path(nodes, &[leaf_page])?;
            self.counts[C_BORROWS] += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// No neighbour can lend: unhook the empty leaf (and ancestors left without children)
    /// and write the remaining tree's new upper nodes on the path of an adjacent leaf.
    pub(super) fn drop_leaf(
        &mut self,
        mut nodes: Vec<Node>,
        leaf_page: u16,
    ) -> Result<(), IndexError> {
        let n = nodes.len();
        // The lowest ancestor with another child keeps the tree; everything below goes.
        let mut keep = None;
        for idx in (0..n - 1).rev() {
            if let Node::Inner { children, .. } = &nodes[idx]
                && children.len() > 1
            {
                keep = Some(idx);
                break;
            }
        }
        let Some(idx) = keep else {
            // The tree held a single leaf: it becomes an empty root leaf.
            self.write_path(&[Node::Leaf(Pairs::new())], &[leaf_page])?;
            return Ok(());
        };
        let level = (n - 1 - idx) as u32;
        let Node::Inner { children, keys } = &mut nodes[idx] else {
            unreachable!("invariant: checked above")
        };
        let ci = children
            .iter()
            .position(|&c| c == PATH)
            .expect("invariant: the path is marked");
        // The separator left of the removed child goes (the first one when that child was
        // the first): the node kept more than one child, so it has that key.
        children.remove(ci);
        keys.remove(ci.saturating_sub(1));
        let ni = ci.min(children.len() - 1);
        let (below_pages, below) = self.leftmost_below(children[ni], level - 1);
        children[ni] = PATH;
        nodes.truncate(idx + 1);
        let mut path = nodes;
        let old = [leaf_page, below_pages[below_pages.len() - 1]];
        path.extend(below);
        // A root left with one child gives way to it (an inner node has the path below it,
        // so the leaf is never removed).
        while matches!(&path[0], Node::Inner { children, .. } if children.len() == 1) {
            path.remove(0);
        }
        self.write_path(&path, &old)?;
        Ok(())
    }
}
