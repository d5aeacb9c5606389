//! The two-level B-tree of section 3.2 of Ajwani et al. (SEA 2009): a primary B-tree whose
//! nodes have fan-out `Theta(B_w)`, each node stored as a B-tree of `B_r` pages, so that a
//! search or update moves `O(B_r log_{B_r} N)` items instead of the `B_w log_{B_w} N` of a
//! B-tree with `B_w` nodes.
//!
//! Layout: a big (primary) node is `G = B_w / B_r` consecutive pages. Page 0 is the node's
//! directory: the smallest key of each of its leaf pages and where the page is; the other
//! pages hold sorted `(key, value)` entries. In a primary leaf the value is the user's; in a
//! primary internal node it is a child node's id and the key the smallest key under it. A
//! search reads two pages per primary level; an update writes the pages it changed. When a
//! page overflows it splits inside its node; when the node has no free page it splits in two
//! and the parent gets a separator.
//!
//! The secondary tree has exactly two levels (directory and pages): it is the full B-tree
//! of fan-out `Theta(B_r)` whenever `B_w / B_r` does not exceed a directory page's fan-out
//! (`B_r / 16 - 1`), true for the paper's 128 KiB / 16 MiB; otherwise a node uses only as
//! many pages as its directory indexes. Deletes are lazy: entries are removed from their page
//! and pages or nodes are never merged.
//!
//! What this is not: a concurrent or crash-safe tree. Key decision: the tree reads and
//! writes single `B_r` pages through any [`BlockIo`] whose two block sizes are equal; put a
//! [`crate::tl::TranslationLayer`] underneath and the device sees only whole `B_w` writes.

use crate::EmError;
use crate::io::{AlignedBuf, BlockIo, IoStats};

/// Words of page header: entry count, node kind.
const HEADER_WORDS: usize = 2;
const LEAF: u64 = 0;
const INTERNAL: u64 = 1;

/// A decoded page: its kind and its sorted `(key, value)` pairs.
#[derive(Clone, Debug, Default)]
struct Page {
    kind: u64,
    entries: Vec<(u64, u64)>,
}

/// The two-level B-tree over a page device `I`.
pub struct TwoLevelBTree<I> {
    io: I,
    page_bytes: usize,
    /// Pages a big node may use besides its directory.
    leaf_pages: usize,
    node_pages: u64,
    capacity: usize,
    root: u64,
    nodes: u64,
    len: u64,
    buf: AlignedBuf,
}

impl<I: BlockIo> TwoLevelBTree<I> {
    /// An empty tree whose big nodes span `node_pages` pages (`B_w / B_r`, at least 3).
    pub fn new(io: I, node_pages: u64) -> Result<Self, EmError> {
        let sizes = io.block_sizes();
        if sizes.read_bytes != sizes.write_bytes {
            return Err(EmError::Config(
                "the two-level B-tree reads and writes single pages: give it a device with \
                 B_r = B_w (a translation layer)"
                    .into(),
            ));
        }
        if node_pages < 3 {
            return Err(EmError::Config(format!(
                "a big node needs at least 3 pages, got {node_pages}"
            )));
        }
        let page_bytes = sizes.read_bytes as usize;
        let capacity = (page_bytes / 8 - HEADER_WORDS) / 2;
        let mut tree = TwoLevelBTree {
            buf: AlignedBuf::new(page_bytes),
            io,
            page_bytes,
            leaf_pages: ((node_pages - 1) as usize).min(capacity),
            node_pages,
            capacity,
            root: 0,
            nodes: 1,
            len: 0,
        };
        tree.write_node(0, LEAF, &[])?;
        Ok(tree)
    }

    /// Entries in the tree.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Big nodes allocated.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The device's counters.
    pub fn io_stats(&self) -> IoStats {
        self.io.stats()
    }

    /// The device.
    pub fn io(&self) -> &I {
        &self.io
    }

    fn address(&self, node: u64, page: u64) -> u64 {
        (node * self.node_pages + page) * self.page_bytes as u64
    }

    fn read_page(&mut self, node: u64, page: u64) -> Result<Page, EmError> {
        let address = self.address(node, page);
        let page_bytes = self.page_bytes;
        self.io
            .read(address, &mut self.buf.bytes_mut()[..page_bytes])?;
        let words = self.buf.records::<u64>();
        let count = words[0] as usize;
        let entries = (0..count)
            .map(|i| (words[HEADER_WORDS + 2 * i], words[HEADER_WORDS + 2 * i + 1]))
            .collect();
        Ok(Page {
            kind: words[1],
            entries,
        })
    }

    fn write_page(&mut self, node: u64, page: u64, content: &Page) -> Result<(), EmError> {
        debug_assert!(content.entries.len() <= self.capacity);
        let words = self.buf.records_mut::<u64>();
        words.fill(0);
        words[0] = content.entries.len() as u64;
        words[1] = content.kind;
        for (i, &(key, value)) in content.entries.iter().enumerate() {
            words[HEADER_WORDS + 2 * i] = key;
            words[HEADER_WORDS + 2 * i + 1] = value;
        }
        let address = self.address(node, page);
        self.io.write(address, &self.buf.bytes()[..self.page_bytes])
    }

    /// Bulk-load `entries` (sorted) into `node`, its pages three-quarters full.
    fn write_node(&mut self, node: u64, kind: u64, entries: &[(u64, u64)]) -> Result<(), EmError> {
        let fill = (self.capacity * 3 / 4).max(1);
        let mut directory = Page {
            kind,
            entries: Vec::new(),
        };
        let chunks: Vec<&[(u64, u64)]> = if entries.is_empty() {
            vec![&[]]
        } else {
            entries.chunks(fill).collect()
        };
        assert!(
            chunks.len() <= self.leaf_pages,
            "invariant: a split half fits its node"
        );
        for (i, chunk) in chunks.iter().enumerate() {
            let page = i as u64 + 1;
            let first = chunk.first().map_or(0, |e| e.0);
            directory.entries.push((first, page));
            self.write_page(
                node,
                page,
                &Page {
                    kind,
                    entries: chunk.to_vec(),
                },
            )?;
        }
        self.write_page(node, 0, &directory)
    }

    /// Index of the entry with the largest key `<= key` (or 0).
    fn slot(entries: &[(u64, u64)], key: u64) -> usize {
        entries.partition_point(|e| e.0 <= key).saturating_sub(1)
    }

    /// The value stored under `key`.
    pub fn get(&mut self, key: u64) -> Result<Option<u64>, EmError> {
        let mut node = self.root;
        loop {
            let directory = self.read_page(node, 0)?;
            let page_no = directory.entries[Self::slot(&directory.entries, key)].1;
            let page = self.read_page(node, page_no)?;
            if directory.kind == LEAF {
                return Ok(page
                    .entries
                    .binary_search_by_key(&key, |e| e.0)
                    .ok()
                    .map(|i| page.entries[i].1));
            }
            node = page.entries[Self::slot(&page.entries, key)].1;
        }
    }

    /// Insert or replace; returns the previous value.
    pub fn insert(&mut self, key: u64, value: u64) -> Result<Option<u64>, EmError> {
        let mut path = Vec::new();
        let mut node = self.root;
        loop {
            let directory = self.read_page(node, 0)?;
            if directory.kind == LEAF {
                break;
            }
            let page_no = directory.entries[Self::slot(&directory.entries, key)].1;
            let page = self.read_page(node, page_no)?;
            path.push(node);
            node = page.entries[Self::slot(&page.entries, key)].1;
        }
        let (previous, mut split) = self.insert_into(node, key, value)?;
        if previous.is_none() {
            self.len += 1;
        }
        while let Some((separator, new_node)) = split {
            match path.pop() {
                Some(parent) => split = self.insert_into(parent, separator, new_node)?.1,
                None => {
                    let root = self.allocate();
                    self.write_node(root, INTERNAL, &[(0, self.root), (separator, new_node)])?;
                    self.root = root;
                    split = None;
                }
            }
        }
        Ok(previous)
    }

    fn allocate(&mut self) -> u64 {
        self.nodes += 1;
        self.nodes - 1
    }

    /// Insert into one big node; returns the previous value and, if the node split, the
    /// separator key and the new node.
    #[allow(clippy::type_complexity)]
    fn insert_into(
        &mut self,
        node: u64,
        key: u64,
        value: u64,
    ) -> Result<(Option<u64>, Option<(u64, u64)>), EmError> {
        let mut directory = self.read_page(node, 0)?;
        let slot = Self::slot(&directory.entries, key);
        let page_no = directory.entries[slot].1;
        let mut page = self.read_page(node, page_no)?;
        match page.entries.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => {
                let previous = std::mem::replace(&mut page.entries[i].1, value);
                self.write_page(node, page_no, &page)?;
                return Ok((Some(previous), None));
            }
            Err(i) => page.entries.insert(i, (key, value)),
        }
        if page.entries.len() <= self.capacity {
            self.write_page(node, page_no, &page)?;
            return Ok((None, None));
        }
        if directory.entries.len() < self.leaf_pages {
            // Split the page inside the node.
            let upper = page.entries.split_off(page.entries.len() / 2);
            let new_page = directory.entries.len() as u64 + 1;
            let first = upper[0].0;
            self.write_page(node, page_no, &page)?;
            self.write_page(
                node,
                new_page,
                &Page {
                    kind: directory.kind,
                    entries: upper,
                },
            )?;
            directory.entries.insert(slot + 1, (first, new_page));
            self.write_page(node, 0, &directory)?;
            return Ok((None, None));
        }
        // Split the big node: gather every entry (the changed page from memory).
        let mut all = Vec::new();
        for &(_, p) in &directory.entries.clone() {
            if p == page_no {
                all.extend_from_slice(&page.entries);
            } else {
                all.extend(self.read_page(node, p)?.entries);
            }
        }
        let upper = all.split_off(all.len() / 2);
        let separator = upper[0].0;
        let new_node = self.allocate();
        self.write_node(node, directory.kind, &all)?;
        self.write_node(new_node, directory.kind, &upper)?;
        Ok((None, Some((separator, new_node))))
    }

    /// Remove `key`; returns its value. Lazy: pages and nodes are never merged.
    pub fn remove(&mut self, key: u64) -> Result<Option<u64>, EmError> {
        let mut node = self.root;
        loop {
            let directory = self.read_page(node, 0)?;
            let page_no = directory.entries[Self::slot(&directory.entries, key)].1;
            let mut page = self.read_page(node, page_no)?;
            if directory.kind == INTERNAL {
                node = page.entries[Self::slot(&page.entries, key)].1;
                continue;
            }
            let Ok(i) = page.entries.binary_search_by_key(&key, |e| e.0) else {
                return Ok(None);
            };
            let (_, value) = page.entries.remove(i);
            self.write_page(node, page_no, &page)?;
            self.len -= 1;
            return Ok(Some(value));
        }
    }

    /// Every entry in key order (a full traversal; for checks).
    pub fn entries(&mut self) -> Result<Vec<(u64, u64)>, EmError> {
        let mut out = Vec::new();
        self.collect(self.root, &mut out)?;
        Ok(out)
    }

    fn collect(&mut self, node: u64, out: &mut Vec<(u64, u64)>) -> Result<(), EmError> {
        let directory = self.read_page(node, 0)?;
        for &(_, p) in &directory.entries {
            let page = self.read_page(node, p)?;
            if directory.kind == LEAF {
                out.extend(page.entries);
            } else {
                for (_, child) in page.entries {
                    self.collect(child, out)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{BlockSizes, SimIo};

    #[test]
    fn a_split_node_is_written_three_quarters_full() {
        // 512-byte pages hold 31 entries; a split writes 23 to a page.
        let io = SimIo::with_data(BlockSizes::same(512).expect("valid"));
        let mut tree = TwoLevelBTree::new(io, 4).expect("tree");
        assert_eq!((tree.capacity, tree.leaf_pages), (31, 3));
        let mut key = 0;
        while tree.nodes() == 1 {
            tree.insert(key, key).expect("insert");
            key += 1;
        }
        // The leaf's three pages overflowed (a page splits at 32 into 16 and 16, so at 16 +
        // 16 + 32 the node splits): 64 entries, halved into nodes of 32 and 32.
        assert_eq!((key, tree.nodes(), tree.root), (64, 3, 2));
        for node in 0..2 {
            let directory = tree.read_page(node, 0).expect("read");
            assert_eq!(directory.kind, LEAF);
            let sizes: Vec<usize> = directory
                .entries
                .iter()
                .map(|&(_, page)| tree.read_page(node, page).expect("read").entries.len())
                .collect();
            assert_eq!(sizes, [23, 9], "node {node}");
        }
        let root = tree.read_page(2, 0).expect("read");
        assert_eq!(root.kind, INTERNAL);
        let children = tree.read_page(2, root.entries[0].1).expect("read");
        assert_eq!(children.entries, [(0, 0), (32, 1)]);
    }

    #[test]
    fn a_search_reads_two_pages_per_primary_level() {
        let io = SimIo::with_data(BlockSizes::same(512).expect("valid"));
        let mut tree = TwoLevelBTree::new(io, 8).expect("tree");
        // An empty tree is one big node: its directory and one empty page, written.
        assert!(tree.is_empty());
        assert_eq!(
            (tree.io_stats().write_ios, tree.io_stats().read_ios),
            (2, 0)
        );
        assert_eq!(tree.get(5).expect("get"), None);
        assert_eq!(tree.io_stats().read_ios, 2);
        tree.insert(5, 1).expect("insert");
        assert!(!tree.is_empty());
        assert_eq!(tree.remove(5).expect("remove"), Some(1));
        assert!(tree.is_empty());
        for key in 0..5000u64 {
            tree.insert(key * 7, key).expect("insert");
        }
        assert!(
            tree.nodes() > 3,
            "the primary tree grew: {} nodes",
            tree.nodes()
        );
        let before = tree.io_stats();
        assert_eq!(tree.get(7 * 4321).expect("get"), Some(4321));
        let reads = tree.io_stats().read_ios - before.read_ios;
        assert_eq!(reads % 2, 0);
        assert!(
            (4..=6).contains(&reads),
            "{reads} page reads for one search"
        );
        assert!(
            TwoLevelBTree::new(
                SimIo::counting(BlockSizes::new(512, 4096).expect("valid")),
                8
            )
            .is_err()
        );
    }
}
