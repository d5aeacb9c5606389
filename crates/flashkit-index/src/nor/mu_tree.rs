//! The mu-tree on NOR flash, as the fat-list paper simulates it (section 0.6.2): a B+-tree
//! whose root-to-leaf path is packed into one page and rewritten out of place on every
//! update, with node sizes halving by level, no spare pointers, no rebalancing on delete
//! except borrowing a key when a leaf empties.
//!
//! What it is not: Kang et al.'s NAND implementation. Pages here are 512-byte runs of NOR
//! words, written word by word (only words that are not all ones cost a write), and garbage
//! collection erases 64 KiB NOR blocks.
//!
//! Page layout (words; page = 256 words for 512 bytes):
//!
//! ```text
//! 0          state: bit 15 written (0), bits 0-3 the tree height when written
//! 1..3       sequence number (high, low): the highest is the newest page, the root's
//! 3..P/2     leaf: entries of key (2 words) and value (2 words) until an erased key
//! P - P/2^i  level-i node (i >= 1), P/2^(i+1) words; the root (level h-1) takes
//!            P/2^(h-1) words, as much as its child level (Fig. 13)
//! inner node child page (1 word), key (2 words), child, key, ..., child; erased after
//! ```
//!
//! Key decisions: a node's place in a page depends only on its level, so a child pointer is
//! just a page number; the leaf keeps half a page at every height (also at height 1, where
//! Fig. 13(b) gives the lone node the whole page) so that splitting never has to shrink it.
//! RAM holds the root's page, the height, the allocator's position and a valid-page count per
//! block (a page is valid while its leaf is current); all are rebuilt at boot by scanning
//! page headers and walking the tree, the scan the paper's soft pointers avoid.

use crate::nor::stats::ProbeStats;
use crate::nor::{BootReport, IndexError, IndexStats, Key, NorIndex, Value, check_key};
use flashkit_core::{BlockId, Cause};
use flashkit_device::NorDevice;
use flashkit_device::nor::{ERASED_WORD, WordAddr};

const NAME: &str = "mutree";
const HEADER_WORDS: u32 = 3;
const NO_PAGE: u16 = ERASED_WORD;

/// Mu-tree parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MuTreeConfig {
    /// Page size in bytes (512, the paper's).
    pub page_bytes: u32,
}

impl Default for MuTreeConfig {
    fn default() -> Self {
        MuTreeConfig { page_bytes: 512 }
    }
}

/// A node decoded into RAM.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Leaf(Vec<(Key, Value)>),
    Inner { children: Vec<u16>, keys: Vec<Key> },
}

/// A mu-tree on a NOR device.
pub struct MuTree {
    nor: NorDevice,
    cfg: MuTreeConfig,
    page_words: u32,
    pages_per_block: u32,
    root: u16,
    height: u32,
    seq: u32,
    active: u32,
    next_page: u32,
    free_blocks: Vec<u32>,
    valid: Vec<u32>,
    cause: Cause,
    counts: [u64; 6],
    buf: Vec<u16>,
}

const C_PAGES: usize = 0;
const C_SPLITS: usize = 1;
const C_BORROWS: usize = 2;
const C_GC_RUNS: usize = 3;
const C_GC_PAGES: usize = 4;
const C_HEIGHT: usize = 5;

impl MuTree {
    fn blank(nor: NorDevice, cfg: MuTreeConfig) -> Result<MuTree, IndexError> {
        let err = |reason: String| IndexError::Config {
            structure: NAME,
            field: "page size",
            reason,
        };
        let g = *nor.geometry();
        let page_words = cfg.page_bytes / 2;
        if !(64..=4096).contains(&page_words) || !page_words.is_power_of_two() {
            return Err(err(format!(
                "{} B must be a power of two from 128 B to 8 KiB",
                cfg.page_bytes
            )));
        }
        if !g.words_per_block().is_multiple_of(page_words) || g.blocks() < 3 {
            return Err(err(format!(
                "{} B pages must tile {}-word blocks, and the flash needs 3 blocks or more",
                cfg.page_bytes,
                g.words_per_block()
            )));
        }
        if u64::from(g.words() / page_words) >= u64::from(NO_PAGE) {
            return Err(err(format!(
                "{} pages exceed 16-bit page numbers",
                g.words() / page_words
            )));
        }
        Ok(MuTree {
            nor,
            cfg,
            page_words,
            pages_per_block: g.words_per_block() / page_words,
            root: 0,
            height: 1,
            seq: 0,
            active: 0,
            next_page: 0,
            free_blocks: (1..g.blocks()).rev().collect(),
            valid: vec![0; g.blocks() as usize],
            cause: Cause::Host,
            counts: [0; 6],
            buf: Vec::new(),
        })
    }

    /// Format `nor` and write an empty tree (one empty leaf) on it.
    pub fn create(nor: NorDevice, cfg: MuTreeConfig) -> Result<MuTree, IndexError> {
        let mut t = MuTree::blank(nor, cfg)?;
        let g = *t.nor.geometry();
        for block in 0..g.blocks() {
            let start = g.block_start(BlockId(block));
            if t.nor
                .peek_words(start, g.words_per_block())
                .iter()
                .any(|&w| w != ERASED_WORD)
            {
                t.nor.erase(BlockId(block), Cause::Metadata)?;
            }
        }
        t.write_path(&[Node::Leaf(Vec::new())], &[])?;
        Ok(t)
    }

    /// Find a tree on `nor` by scanning page headers, then walking it.
    pub fn open(nor: NorDevice, cfg: MuTreeConfig) -> Result<(MuTree, BootReport), IndexError> {
        let mut t = MuTree::blank(nor, cfg)?;
        let report = t.boot()?;
        Ok((t, report))
    }

    /// Give the device back (a power-off).
    pub fn into_device(self) -> NorDevice {
        self.nor
    }

    /// The tree's height.
    pub fn height(&self) -> u32 {
        self.height
    }

    fn page_addr(&self, page: u16) -> WordAddr {
        WordAddr(u32::from(page) * self.page_words)
    }

    fn block_of(&self, page: u16) -> usize {
        (u32::from(page) / self.pages_per_block) as usize
    }

    /// Word offset and size of the level-`level` node in a page of a height-`height` tree.
    fn region(&self, level: u32, height: u32) -> (u32, u32) {
        let p = self.page_words;
        if level == 0 {
            return (HEADER_WORDS, p / 2 - HEADER_WORDS);
        }
        let offset = p - p / (1 << level);
        let size = if level == height - 1 {
            p / (1 << level)
        } else {
            p / (1 << (level + 1))
        };
        (offset, size)
    }

    fn leaf_capacity(&self) -> usize {
        (self.region(0, 1).1 / 4) as usize
    }

    fn inner_capacity(&self, level: u32, height: u32) -> usize {
        let size = self.region(level, height).1;
        // c children and c - 1 keys take 3c - 2 words.
        (size + 2) as usize / 3
    }

    fn read_w(&mut self, addr: WordAddr) -> u16 {
        self.nor.read(addr, self.cause)
    }

    fn read_key(&mut self, addr: WordAddr) -> u32 {
        let w = self.nor.read_words(addr, 2, self.cause);
        (u32::from(w[0]) << 16) | u32::from(w[1])
    }

    /// Decode a whole node (every used word read).
    fn read_node(&mut self, page: u16, level: u32) -> Node {
        let (offset, size) = self.region(level, self.height);
        let base = self.page_addr(page).offset(offset);
        if level == 0 {
            let mut pairs = Vec::new();
            for i in 0..size / 4 {
                let key = self.read_key(base.offset(4 * i));
                if key == u32::MAX {
                    break;
                }
                pairs.push((key, self.read_key(base.offset(4 * i + 2))));
            }
            return Node::Leaf(pairs);
        }
        let mut children = vec![self.read_w(base)];
        let mut keys = Vec::new();
        let mut i = 1;
        while 3 * i < size + 1 {
            let child = self.read_w(base.offset(3 * i));
            if child == NO_PAGE {
                break;
            }
            keys.push(self.read_key(base.offset(3 * i - 2)));
            children.push(child);
            i += 1;
        }
        Node::Inner { children, keys }
    }

    /// Descend from the root for `key`, reading only what a search reads: the child page of
    /// each level and the smallest separator above `key` (the next leaf's first key).
    fn descend(&mut self, key: Key) -> (u16, Option<Key>) {
        let mut page = self.root;
        let mut upper = None;
        for level in (1..self.height).rev() {
            let (offset, size) = self.region(level, self.height);
            let base = self.page_addr(page).offset(offset);
            let mut child = self.read_w(base);
            let mut i = 1;
            while 3 * i < size + 1 {
                let next = self.read_w(base.offset(3 * i));
                if next == NO_PAGE {
                    break;
                }
                let sep = self.read_key(base.offset(3 * i - 2));
                if key < sep {
                    upper = Some(upper.map_or(sep, |u: Key| u.min(sep)));
                    break;
                }
                child = next;
                i += 1;
            }
            page = child;
        }
        (page, upper)
    }

    /// The root-to-leaf path for `key`: (page, node) from the root down.
    fn read_path(&mut self, key: Key) -> Vec<(u16, Node)> {
        let mut path = Vec::with_capacity(self.height as usize);
        let mut page = self.root;
        for level in (0..self.height).rev() {
            let node = self.read_node(page, level);
            let next = match &node {
                Node::Inner { children, keys } => {
                    Some(children[keys.partition_point(|&k| k <= key)])
                }
                Node::Leaf(_) => None,
            };
            path.push((page, node));
            if let Some(next) = next {
                page = next;
            }
        }
        path
    }

    fn encode_node(&self, node: &Node, level: u32, height: u32, out: &mut [u16]) {
        let (offset, _) = self.region(level, height);
        let o = offset as usize;
        match node {
            Node::Leaf(pairs) => {
                for (i, &(k, v)) in pairs.iter().enumerate() {
                    let at = o + 4 * i;
                    out[at..at + 4].copy_from_slice(&[
                        (k >> 16) as u16,
                        k as u16,
                        (v >> 16) as u16,
                        v as u16,
                    ]);
                }
            }
            Node::Inner { children, keys } => {
                out[o] = children[0];
                for (i, (&k, &c)) in keys.iter().zip(&children[1..]).enumerate() {
                    let at = o + 3 * i + 1;
                    out[at..at + 3].copy_from_slice(&[(k >> 16) as u16, k as u16, c]);
                }
            }
        }
    }

    /// A free page, collecting garbage when only the reserved block is left.
    fn alloc_page(&mut self) -> Result<u16, IndexError> {
        loop {
            if self.next_page < self.pages_per_block {
                let page = self.active * self.pages_per_block + self.next_page;
                self.next_page += 1;
                return Ok(page as u16);
            }
            if self.free_blocks.len() > 1 || self.cause == Cause::Gc {
                let block = self
                    .free_blocks
                    .pop()
                    .ok_or_else(|| IndexError::OutOfSpace {
                        structure: NAME,
                        detail: "garbage collection found every page of its victim valid".into(),
                    })?;
                self.active = block;
                self.next_page = 0;
                continue;
            }
            self.collect()?;
        }
    }

    /// Greedy collection: the sealed block with the fewest valid pages; each valid page's
    /// path is rewritten (the only way to move a node that physical pointers name).
    fn collect(&mut self) -> Result<(), IndexError> {
        let victim = (0..self.valid.len() as u32)
            .filter(|&b| b != self.active && !self.free_blocks.contains(&b))
            .min_by_key(|&b| (self.valid[b as usize], b))
            .ok_or_else(|| IndexError::OutOfSpace {
                structure: NAME,
                detail: "no block to collect".into(),
            })?;
        if self.valid[victim as usize] >= self.pages_per_block {
            return Err(IndexError::OutOfSpace {
                structure: NAME,
                detail: format!("every page of the emptiest block ({victim}) is valid"),
            });
        }
        let before = self.cause;
        self.cause = Cause::Gc;
        let result = self.collect_block(victim);
        self.cause = before;
        result
    }

    fn collect_block(&mut self, victim: u32) -> Result<(), IndexError> {
        for i in 0..self.pages_per_block {
            if self.valid[victim as usize] == 0 {
                break;
            }
            let page = (victim * self.pages_per_block + i) as u16;
            if self.read_w(self.page_addr(page)) == ERASED_WORD {
                continue;
            }
            let first = self.read_key(self.page_addr(page).offset(HEADER_WORDS));
            let current = if self.height == 1 {
                page == self.root
            } else {
                first != u32::MAX && self.descend(first).0 == page
            };
            if current {
                let path = self.read_path(first);
                let nodes = Self::mark_path(&path);
                self.write_path(&nodes, &[page])?;
                self.counts[C_GC_PAGES] += 1;
            }
        }
        self.nor.erase(BlockId(victim), Cause::Gc)?;
        self.free_blocks.insert(0, victim);
        self.counts[C_GC_RUNS] += 1;
        Ok(())
    }

    /// Write a page holding `nodes`, the top one at level `top` and each next one level
    /// lower. Child entries equal to `PATH` become this page; `RIGHT` becomes `right`;
    /// placeholders `EXTRA - k` become `extra[k]`. `old` pages lose a valid leaf, this page
    /// gains one. A page whose top node is the root (`root`) becomes the tree's root.
    fn write_page(&mut self, nodes: &[Node], spec: PageSpec<'_>) -> Result<u16, IndexError> {
        let page = self.alloc_page()?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        buf.resize(self.page_words as usize, ERASED_WORD);
        self.seq += 1;
        let stated_height = if spec.root { spec.height } else { 0 };
        buf[0] = !(1u16 << 15) & !0xF | stated_height as u16;
        buf[1] = (self.seq >> 16) as u16;
        buf[2] = self.seq as u16;
        for (i, node) in nodes.iter().enumerate() {
            let mut node = node.clone();
            if let Node::Inner { children, .. } = &mut node {
                for c in children.iter_mut() {
                    *c = match *c {
                        PATH => page,
                        RIGHT if spec.right == NO_PAGE => page,
                        RIGHT => spec.right,
                        x if x >= EXTRA_MIN => spec.extra[(EXTRA - x) as usize],
                        x => x,
                    };
                }
            }
            if let Node::Inner { children, .. } = &node {
                let level = spec.top - i as u32;
                assert!(
                    children.len() <= self.inner_capacity(level, spec.height),
                    "invariant: a level-{level} node of {} children fits its region (height {}, top {}, root {})",
                    children.len(),
                    spec.height,
                    spec.top,
                    spec.root
                );
            }
            self.encode_node(&node, spec.top - i as u32, spec.height, &mut buf);
        }
        let base = self.page_addr(page);
        let mut i = 0;
        while i < buf.len() {
            if buf[i] == ERASED_WORD {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < buf.len() && buf[j] != ERASED_WORD {
                j += 1;
            }
            self.nor
                .program_words(base.offset(i as u32), &buf[i..j], self.cause)?;
            i = j;
        }
        self.buf = buf;
        for &old in spec.old {
            let b = self.block_of(old);
            self.valid[b] -= 1;
        }
        let b = self.block_of(page);
        self.valid[b] += 1;
        if spec.root {
            self.root = page;
            self.height = spec.height;
        }
        self.counts[C_PAGES] += 1;
        Ok(page)
    }

    /// Write a whole root-to-leaf path (children on the path marked `PATH`).
    fn write_path(&mut self, nodes: &[Node], old: &[u16]) -> Result<u16, IndexError> {
        let height = nodes.len() as u32;
        self.write_page(
            nodes,
            PageSpec {
                top: height - 1,
                height,
                root: true,
                right: NO_PAGE,
                extra: &[],
                old,
            },
        )
    }

    /// The path read by `read_path`, with each path child marked `PATH`.
    fn mark_path(path: &[(u16, Node)]) -> Vec<Node> {
        let mut nodes: Vec<Node> = path.iter().map(|(_, n)| n.clone()).collect();
        for i in 0..nodes.len().saturating_sub(1) {
            let next = path[i + 1].0;
            if let Node::Inner { children, .. } = &mut nodes[i]
                && let Some(c) = children.iter_mut().find(|c| **c == next)
            {
                *c = PATH;
            }
        }
        nodes
    }

    /// The leftmost root-to-leaf path below `page`'s level-`level` node (levels down to 0).
    fn leftmost_below(&mut self, page: u16, level: u32) -> Vec<(u16, Node)> {
        let mut out = Vec::new();
        let mut page = page;
        for l in (0..=level).rev() {
            let node = self.read_node(page, l);
            let next = match &node {
                Node::Inner { children, .. } => Some(children[0]),
                Node::Leaf(_) => None,
            };
            out.push((page, node));
            if let Some(n) = next {
                page = n;
            }
        }
        out
    }

    /// Collect garbage until `pages` pages can be written without another collection, so
    /// that no collection rewrites the tree under an operation's path read into RAM.
    fn ensure_room(&mut self, pages: u32) -> Result<(), IndexError> {
        for _ in 0..=2 * self.valid.len() {
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
    fn pages_per_update(&self) -> u32 {
        2 * self.height + 4
    }

    fn insert(&mut self, key: Key, value: Value) -> Result<bool, IndexError> {
        self.ensure_room(self.pages_per_update())?;
        let path = self.read_path(key);
        let height = self.height;
        let leaf_page = path[path.len() - 1].0;
        let mut nodes = Self::mark_path(&path);
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
    fn split(
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
        let right_pairs = pairs.split_off(pairs.len() / 2);
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
            let right_children = children.split_off(ci + 1);
            let right_keys = keys.split_off(ci + 1);
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

/// Child marker: this page.
const PATH: u16 = NO_PAGE;
/// Child marker: the page of the right chain.
const RIGHT: u16 = 0xFFFE;
/// Child markers `EXTRA - k`: the k-th page of loose nodes.
const EXTRA: u16 = 0xFFFD;
const EXTRA_MIN: u16 = 0xFF00;

/// How to place and link a page's nodes.
struct PageSpec<'a> {
    top: u32,
    height: u32,
    root: bool,
    right: u16,
    extra: &'a [u16],
    old: &'a [u16],
}

/// Cut an inner node's children and keys into nodes of at most `cap` children; the pieces
/// and the separators between them.
fn chunk(children: Vec<u16>, keys: Vec<Key>, cap: usize) -> (Vec<Node>, Vec<Key>) {
    let pieces = children.len().div_ceil(cap);
    let per = children.len().div_ceil(pieces);
    let mut nodes = Vec::new();
    let mut seps = Vec::new();
    let mut start = 0;
    while start < children.len() {
        let end = (start + per).min(children.len());
        let node_keys = keys[start..end - 1].to_vec();
        if end < children.len() {
            seps.push(keys[end - 1]);
        }
        nodes.push(Node::Inner {
            children: children[start..end].to_vec(),
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
    fn max_height(&self) -> u32 {
        let mut h = 1;
        while self.page_words >> h >= 4 {
            h += 1;
        }
        h
    }

    /// The root split: a new root above the old root's halves, which shrink to the size of
    /// a non-root node of their level (cut into more pieces if they no longer fit).
    fn split_root(
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
                children: vec![PATH, RIGHT],
                keys: vec![sep],
            });
        }
        let cap = self.inner_capacity(height - 1, new_height);
        let last = right_chain.len() - 1;
        let split_parts = |node: &Node| match node {
            Node::Inner { children, keys } => chunk(children.clone(), keys.clone(), cap),
            Node::Leaf(_) => unreachable!("invariant: the old root is an inner node"),
        };
        let (left, left_seps) = split_parts(&nodes[0]);
        let (right, right_seps) = split_parts(&right_chain[last]);
        let mut children = Vec::new();
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

    fn write_split(
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
            let below = self.leftmost_below(children[0], level - 1);
            children[0] = PATH;
            let mut page_nodes = vec![Node::Inner { children, keys }];
            page_nodes.extend(Self::mark_path(&below));
            let old = [below[below.len() - 1].0];
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
    fn delete(&mut self, key: Key) -> Result<Option<Value>, IndexError> {
        self.ensure_room(self.pages_per_update())?;
        let path = self.read_path(key);
        let leaf_page = path[path.len() - 1].0;
        let mut nodes = Self::mark_path(&path);
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
    fn borrow(&mut self, nodes: &mut [Node], leaf_page: u16) -> Result<bool, IndexError> {
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
            nodes[n - 1] = Node::Leaf(vec![moved]);
            self.write_path(nodes, &[leaf_page])?;
            self.counts[C_BORROWS] += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// No neighbour can lend: unhook the empty leaf (and ancestors left without children)
    /// and write the remaining tree's new upper nodes on the path of an adjacent leaf.
    fn drop_leaf(&mut self, mut nodes: Vec<Node>, leaf_page: u16) -> Result<(), IndexError> {
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
            self.write_path(&[Node::Leaf(Vec::new())], &[leaf_page])?;
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
        children.remove(ci);
        keys.remove(ci.saturating_sub(1).min(keys.len() - 1));
        let ni = ci.min(children.len() - 1);
        let below = self.leftmost_below(children[ni], level - 1);
        children[ni] = PATH;
        let mut path: Vec<Node> = nodes[..=idx].to_vec();
        let old = [leaf_page, below[below.len() - 1].0];
        path.extend(Self::mark_path(&below));
        // A root left with one child gives way to it.
        while path.len() > 1
            && matches!(&path[0], Node::Inner { children, .. } if children.len() == 1)
        {
            path.remove(0);
        }
        self.write_path(&path, &old)?;
        Ok(())
    }

    fn lookup(&mut self, key: Key) -> Option<Value> {
        let (page, _) = self.descend(key);
        let (offset, size) = self.region(0, self.height);
        let base = self.page_addr(page).offset(offset);
        for i in 0..size / 4 {
            let k = self.read_key(base.offset(4 * i));
            if k == u32::MAX || k > key {
                return None;
            }
            if k == key {
                return Some(self.read_key(base.offset(4 * i + 2)));
            }
        }
        None
    }

    /// A range query: each leaf is reached by a search from the root (the mu-tree has no
    /// sibling links), as the paper's macro-benchmark describes.
    fn range_query(&mut self, lo: Key, hi: Key, out: &mut Vec<(Key, Value)>) {
        let mut cursor = lo;
        loop {
            let (page, upper) = self.descend(cursor);
            let (offset, size) = self.region(0, self.height);
            let base = self.page_addr(page).offset(offset);
            for i in 0..size / 4 {
                let k = self.read_key(base.offset(4 * i));
                if k == u32::MAX || k > hi {
                    break;
                }
                if k >= cursor {
                    out.push((k, self.read_key(base.offset(4 * i + 2))));
                }
            }
            match upper {
                Some(next) if next <= hi => cursor = next,
                _ => return,
            }
        }
    }

    fn boot(&mut self) -> Result<BootReport, IndexError> {
        self.cause = Cause::Metadata;
        let before = self.nor.counters().reads.metadata;
        let pages = self.nor.geometry().words() / self.page_words;
        let mut newest: Option<(u32, u16, u32)> = None;
        let mut used = vec![false; self.valid.len()];
        let mut last_written = vec![None; self.valid.len()];
        for page in 0..pages as u16 {
            let state = self.read_w(self.page_addr(page));
            if state == ERASED_WORD {
                continue;
            }
            let seq = self.read_key(self.page_addr(page).offset(1));
            let b = self.block_of(page);
            used[b] = true;
            last_written[b] = Some(page);
            let height = u32::from(state & 0xF);
            if height > 0 && newest.is_none_or(|n| seq > n.0) {
                newest = Some((seq, page, height));
            }
        }
        let (seq, root, height) = newest.ok_or_else(|| IndexError::Corrupt {
            structure: NAME,
            detail: "no page holds a root: the flash holds no mu-tree".into(),
        })?;
        self.seq = seq.max(self.seq);
        self.root = root;
        self.height = height;
        // Pages are written in order: every block but the root's is sealed or free.
        let active = self.block_of(root);
        self.active = active as u32;
        self.next_page =
            last_written[active].map_or(0, |p| u32::from(p) % self.pages_per_block + 1);
        self.free_blocks = (0..used.len() as u32)
            .rev()
            .filter(|&b| !used[b as usize])
            .collect();
        self.valid.fill(0);
        let mut stack = vec![(root, height - 1)];
        let mut steps = 0;
        while let Some((page, level)) = stack.pop() {
            steps += 1;
            if level == 0 {
                let b = self.block_of(page);
                self.valid[b] += 1;
                continue;
            }
            if let Node::Inner { children, .. } = self.read_node(page, level) {
                stack.extend(children.into_iter().map(|c| (c, level - 1)));
            }
        }
        self.cause = Cause::Host;
        Ok(BootReport {
            word_reads: self.nor.counters().reads.metadata - before,
            steps,
        })
    }

    fn peek_node(&self, page: u16, level: u32) -> Node {
        let (offset, size) = self.region(level, self.height);
        let base = self.page_addr(page).offset(offset);
        let words = self.nor.peek_words(base, size);
        let key = |i: usize| (u32::from(words[i]) << 16) | u32::from(words[i + 1]);
        if level == 0 {
            let pairs = (0..size as usize / 4)
                .map(|i| (key(4 * i), key(4 * i + 2)))
                .take_while(|p| p.0 != u32::MAX)
                .collect();
            return Node::Leaf(pairs);
        }
        let mut children = vec![words[0]];
        let mut keys = Vec::new();
        let mut i = 1usize;
        while 3 * i < size as usize + 1 && words[3 * i] != NO_PAGE {
            keys.push(key(3 * i - 2));
            children.push(words[3 * i]);
            i += 1;
        }
        Node::Inner { children, keys }
    }

    /// Walk the tree with peeks: pairs in order; checks node capacities, key order and
    /// separators, and the per-block valid counts.
    fn walk(&self) -> Result<Vec<(Key, Value)>, String> {
        let mut out = Vec::new();
        let mut valid = vec![0u32; self.valid.len()];
        self.walk_node(self.root, self.height - 1, None, None, &mut out, &mut valid)?;
        if valid != self.valid {
            return Err(format!(
                "valid-page counts {:?} differ from the tree's {valid:?}",
                self.valid
            ));
        }
        if out.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err("keys are not strictly increasing".into());
        }
        Ok(out)
    }

    fn walk_node(
        &self,
        page: u16,
        level: u32,
        lo: Option<Key>,
        hi: Option<Key>,
        out: &mut Vec<(Key, Value)>,
        valid: &mut [u32],
    ) -> Result<(), String> {
        match self.peek_node(page, level) {
            Node::Leaf(pairs) => {
                valid[self.block_of(page)] += 1;
                if pairs
                    .iter()
                    .any(|&(k, _)| lo.is_some_and(|l| k < l) || hi.is_some_and(|h| k >= h))
                {
                    return Err(format!(
                        "leaf in page {page} holds a key outside {lo:?}..{hi:?}"
                    ));
                }
                if pairs.is_empty() && self.height > 1 {
                    return Err(format!("leaf in page {page} is empty"));
                }
                out.extend(pairs);
            }
            Node::Inner { children, keys } => {
                if children.len() > self.inner_capacity(level, self.height) {
                    return Err(format!(
                        "level-{level} node in page {page} is over capacity"
                    ));
                }
                for (i, &child) in children.iter().enumerate() {
                    let clo = if i == 0 { lo } else { Some(keys[i - 1]) };
                    let chi = keys.get(i).copied().or(hi);
                    self.walk_node(child, level - 1, clo, chi, out, valid)?;
                }
            }
        }
        Ok(())
    }
}

impl NorIndex for MuTree {
    fn name(&self) -> &'static str {
        NAME
    }

    fn get(&mut self, key: Key) -> Result<Option<Value>, IndexError> {
        check_key(key)?;
        Ok(self.lookup(key))
    }

    fn put(&mut self, key: Key, value: Value) -> Result<bool, IndexError> {
        check_key(key)?;
        self.insert(key, value)
    }

    fn remove(&mut self, key: Key) -> Result<Option<Value>, IndexError> {
        check_key(key)?;
        self.delete(key)
    }

    fn range(&mut self, lo: Key, hi: Key, out: &mut Vec<(Key, Value)>) -> Result<(), IndexError> {
        check_key(lo)?;
        check_key(hi)?;
        if lo <= hi {
            self.range_query(lo, hi, out);
        }
        Ok(())
    }

    fn power_cycle(&mut self) -> Result<BootReport, IndexError> {
        self.boot()
    }

    fn device(&self) -> &NorDevice {
        &self.nor
    }

    fn stats(&self) -> IndexStats {
        let mut counts = self.counts;
        counts[C_HEIGHT] = u64::from(self.height);
        IndexStats {
            probes: ProbeStats::default(),
            counters: vec![
                ("pages_written", counts[C_PAGES]),
                ("splits", counts[C_SPLITS]),
                ("borrows", counts[C_BORROWS]),
                ("gc_runs", counts[C_GC_RUNS]),
                ("gc_pages_moved", counts[C_GC_PAGES]),
                ("height", counts[C_HEIGHT]),
            ],
        }
    }

    fn contents(&self) -> Result<Vec<(Key, Value)>, String> {
        self.walk()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.walk().map(|_| ())
    }
}
