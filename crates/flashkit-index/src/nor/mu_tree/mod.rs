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
use crate::nor::{BootReport, IndexError, IndexStats, Key, NorIndex, Value, check_key, join};
use flashkit_core::{BlockId, Cause, StateHasher};
use flashkit_device::NorDevice;
use flashkit_device::nor::{ERASED_WORD, WordAddr};
use smallvec::{SmallVec, smallvec};

mod check;
#[cfg(test)]
mod tests;
mod update;

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
    Leaf(Pairs),
    Inner { children: Children, keys: Keys },
}

/// A leaf's pairs, inline up to a 512-byte page's leaf (31) and the one an insertion adds
/// before the split: every update reads, edits and rewrites a whole path, and heap vectors
/// made allocation a quarter of the tree's simulation time.
type Pairs = SmallVec<[(Key, Value); 32]>;
/// An inner node's children, inline up to a 512-byte page's largest node (the root of a
/// two-level tree, 43) and an insertion's extra one.
type Children = SmallVec<[u16; 48]>;
/// An inner node's separators (one fewer than its children).
type Keys = SmallVec<[Key; 48]>;

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
    counts: [u64; 7],
    buf: Vec<u16>,
}

const C_PAGES: usize = 0;
const C_SPLITS: usize = 1;
const C_BORROWS: usize = 2;
const C_GC_RUNS: usize = 3;
const C_GC_PAGES: usize = 4;
const C_HEIGHT: usize = 5;
const C_MAX_HEIGHT: usize = 6;

impl MuTree {
    fn blank(nor: NorDevice, cfg: MuTreeConfig) -> Result<MuTree, IndexError> {
        let err = |reason: String| IndexError::Config {
            structure: NAME,
            field: "page size",
            reason,
        };
        let g = *nor.geometry();
        let page_words = cfg.page_bytes / 2;
        if !(128..=8192).contains(&cfg.page_bytes) || !cfg.page_bytes.is_power_of_two() {
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
            counts: [0; 7],
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
        t.write_path(&[Node::Leaf(Pairs::new())], &[])?;
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
        join(w[0], w[1])
    }

    /// Decode a whole node (every used word read).
    fn read_node(&mut self, page: u16, level: u32) -> Node {
        let (offset, size) = self.region(level, self.height);
        let base = self.page_addr(page).offset(offset);
        if level == 0 {
            let mut pairs = Pairs::new();
            for i in 0..size / 4 {
                let key = self.read_key(base.offset(4 * i));
                if key == u32::MAX {
                    break;
                }
                pairs.push((key, self.read_key(base.offset(4 * i + 2))));
            }
            return Node::Leaf(pairs);
        }
        let mut children: Children = smallvec![self.read_w(base)];
        let mut keys = Keys::new();
        let capacity = self.inner_capacity(level, self.height) as u32;
        let mut i = 1;
        while i < capacity {
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
            let offset = self.region(level, self.height).0;
            let capacity = self.inner_capacity(level, self.height) as u32;
            let base = self.page_addr(page).offset(offset);
            let mut child = self.read_w(base);
            let mut i = 1;
            while i < capacity {
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

    /// The root-to-leaf path for `key`: its pages and its nodes from the root down, each
    /// path child marked `PATH`.
    fn read_path(&mut self, key: Key) -> (Pages, Vec<Node>) {
        self.walk_down(self.root, self.height - 1, |keys| {
            keys.partition_point(|&k| k <= key)
        })
    }

    /// Read the nodes from `page`'s level-`top` node down to a leaf, following in each
    /// inner node the child `pick` chooses from its separators (and marking it `PATH`).
    fn walk_down(
        &mut self,
        page: u16,
        top: u32,
        pick: impl Fn(&Keys) -> usize,
    ) -> (Pages, Vec<Node>) {
        let mut pages = Pages::new();
        let mut nodes = Vec::with_capacity(top as usize + 1);
        let mut page = page;
        for level in (0..=top).rev() {
            let mut node = self.read_node(page, level);
            pages.push(page);
            if let Node::Inner { children, keys } = &mut node {
                let child = &mut children[pick(keys)];
                page = *child;
                *child = PATH;
            }
            nodes.push(node);
        }
        (pages, nodes)
    }

    /// Write `node` into a page image, each child page passed through `child`.
    fn encode_node(
        &self,
        node: &Node,
        level: u32,
        height: u32,
        out: &mut [u16],
        child: impl Fn(u16) -> u16,
    ) {
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
                out[o] = child(children[0]);
                for (i, (&k, &c)) in keys.iter().zip(&children[1..]).enumerate() {
                    let at = o + 3 * i + 1;
                    out[at..at + 3].copy_from_slice(&[(k >> 16) as u16, k as u16, child(c)]);
                }
            }
        }
    }

    /// A free page: the next of the block being filled, else the first of a free block.
    /// Updates never take the last free block, which a collection needs to write into
    /// before it can erase: `ensure_room` collects before an update until the update's
    /// pages fit without it, and the checker holds every operation to that. A collection
    /// may take it, and frees its victim after.
    fn alloc_page(&mut self) -> Result<u16, IndexError> {
        if self.next_page >= self.pages_per_block {
            self.active = self
                .free_blocks
                .pop()
                .ok_or_else(|| IndexError::OutOfSpace {
                    structure: NAME,
                    detail: "garbage collection found every page of its victim valid".into(),
                })?;
            self.next_page = 0;
        }
        let page = self.active * self.pages_per_block + self.next_page;
        self.next_page += 1;
        Ok(page as u16)
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
                let (_, nodes) = self.read_path(first);
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
        let child = |c: u16| match c {
            PATH => page,
            RIGHT if spec.right == NO_PAGE => page,
            RIGHT => spec.right,
            x if x >= EXTRA_MIN => spec.extra[(EXTRA - x) as usize],
            x => x,
        };
        for (i, node) in nodes.iter().enumerate() {
            if let Node::Inner { children, .. } = node {
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
            self.encode_node(node, spec.top - i as u32, spec.height, &mut buf, child);
        }
        let result = self
            .nor
            .program_image(self.page_addr(page), &buf, self.cause);
        self.buf = buf;
        result?;
        for &old in spec.old {
            let b = self.block_of(old);
            self.valid[b] -= 1;
        }
        let b = self.block_of(page);
        self.valid[b] += 1;
        if spec.root {
            self.root = page;
            self.height = spec.height;
            self.counts[C_MAX_HEIGHT] = self.counts[C_MAX_HEIGHT].max(u64::from(spec.height));
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

    /// The leftmost root-to-leaf path below `page`'s level-`level` node (levels down to 0),
    /// as `read_path` gives it: pages, and nodes with each path child marked `PATH`.
    fn leftmost_below(&mut self, page: u16, level: u32) -> (Pages, Vec<Node>) {
        self.walk_down(page, level, |_| 0)
    }
}

/// The pages of a root-to-leaf path, root first (a tree is at most 12 levels high: one
/// level per halving of an 8 KiB page down to 4 words).
type Pages = SmallVec<[u16; 12]>;

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

impl MuTree {
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
                ("max_height", counts[C_MAX_HEIGHT]),
            ],
        }
    }

    fn contents(&self) -> Result<Vec<(Key, Value)>, String> {
        self.walk()
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.walk()?;
        self.check_space()
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        self.nor.hash_state(hasher);
        hasher.u32(u32::from(self.root));
        hasher.u32(self.height);
        hasher.u32(self.seq);
        hasher.u32(self.active);
        hasher.u32(self.next_page);
        hasher.u64(self.free_blocks.len() as u64);
        hasher.u32s(&self.free_blocks);
        hasher.u32s(&self.valid);
        hasher.u32(self.cause as u32);
        for &n in &self.counts {
            hasher.u64(n);
        }
    }
}
