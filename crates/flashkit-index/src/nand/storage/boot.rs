//! Finding the tree again from flash alone.
//!
//! Boot reads every programmed page of every block (and the first erased page of a block
//! that is not full, which is how a controller finds the end of a block), under
//! [`Cause::Metadata`]. Node images and log pages are matched by node id; each block's log
//! records are applied to its images in program order; the root is the node with the highest
//! root epoch; the nodes reachable from it are live, the rest are the garbage of freed nodes,
//! erased with their block's next merge (or at once when a block holds nothing else). The
//! node map, the sets (from the tag every page repeats), the free list and the id and
//! sequence counters are rebuilt from what was read. No set is open after a boot: the next
//! new node opens one.

use super::{Loc, NodeStore, Placement, Ram, Set};
use crate::nand::log::apply_all;
use crate::nand::node::Node;
use crate::nand::page::{PageHeader, PageKind};
use crate::nand::{NandIndexError, NodeId};
use flashkit_core::{BlockId, Cause};
use flashkit_device::{FlashDevice, NandDevice, PageBytes, PageData};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a boot found and cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BootReport {
    /// The root.
    pub root: NodeId,
    /// The root's epoch.
    pub epoch: u32,
    /// Pages read.
    pub pages_read: u64,
    /// Nodes reachable from the root.
    pub live_nodes: u64,
    /// Node images of freed nodes still on flash.
    pub garbage_nodes: u64,
}

/// Everything the scan read, before it is checked and turned into RAM state.
#[derive(Default)]
struct Scan {
    images: BTreeMap<NodeId, (Loc, Node)>,
    logs: Vec<(NodeId, Loc, Vec<u8>)>,
    max_node: Option<u32>,
    max_seq: u64,
    max_set: Option<u32>,
}

fn corrupt(block: u32, page: u32, detail: String) -> NandIndexError {
    NandIndexError::Corrupt {
        block: BlockId(block),
        page,
        detail,
    }
}

impl<P: Placement> NodeStore<P> {
    /// Find the tree on `dev` from what is on flash, with no other state.
    pub fn open(
        dev: NandDevice<PageBytes>,
        policy: P,
    ) -> Result<(NodeStore<P>, BootReport), NandIndexError> {
        let mut store = NodeStore::empty(dev, policy);
        let report = store.boot()?;
        Ok((store, report))
    }

    /// Forget every RAM structure and find the tree again from flash (the counters, which
    /// measure the run and are no part of the index, are kept).
    pub fn reboot(&mut self) -> Result<BootReport, NandIndexError> {
        self.ram = Ram::new(self.dev.geometry());
        self.boot()
    }

    fn boot(&mut self) -> Result<BootReport, NandIndexError> {
        let store = self;
        store.ram.free.clear();
        let reads_before = store.dev.counters().reads.metadata;
        let mut scan = Scan::default();
        for block in 0..store.ram.blocks.len() as u32 {
            store.scan_block(block, &mut scan)?;
        }
        apply_logs(&mut scan)?;
        let (root, epoch) = find_root(&scan)?;
        let reachable = reachable(&scan, root)?;
        for &id in &reachable {
            let (loc, _) = scan.images[&id];
            store.set_loc(id, loc);
            store.ram.blocks[loc.block as usize].live += 1;
        }
        store.rebuild_sets();
        store.ram.next_node = scan.max_node.map_or(0, |n| n + 1);
        store.ram.seq = scan.max_seq + 1;
        store.ram.next_set = scan.max_set.map_or(0, |s| s + 1);
        let pages_read = store.dev.counters().reads.metadata - reads_before;
        let garbage = (scan.images.len() - reachable.len()) as u64;
        for b in 0..store.ram.blocks.len() {
            let info = &store.ram.blocks[b];
            if info.in_use && info.live == 0 {
                store.reclaim(BlockId(b as u32))?;
            }
        }
        Ok(BootReport {
            root,
            epoch,
            pages_read,
            live_nodes: reachable.len() as u64,
            garbage_nodes: garbage,
        })
    }

    /// Read a block's pages up to the first erased one.
    fn scan_block(&mut self, block: u32, scan: &mut Scan) -> Result<(), NandIndexError> {
        let ppb = self.dev.geometry().pages_per_block();
        for page in 0..ppb {
            let ppn = self.dev.geometry().ppn(BlockId(block), page);
            let bytes = match self.dev.read_page(ppn, Cause::Metadata)? {
                PageData::Erased => break,
                PageData::Programmed { bytes, .. } => bytes,
            };
            let (header, payload) =
                PageHeader::read_page(bytes).map_err(|d| corrupt(block, page, d))?;
            let loc = Loc { block, page };
            let info = &mut self.ram.blocks[block as usize];
            if page == 0 {
                info.in_use = true;
                info.tag = header.tag;
            } else if header.tag != info.tag {
                return Err(corrupt(
                    block,
                    page,
                    format!(
                        "set tag {:?} differs from page 0's {:?}",
                        header.tag, info.tag
                    ),
                ));
            }
            info.pages.push((header.kind, header.node));
            scan.max_node = scan.max_node.max(Some(header.node.0));
            scan.max_seq = scan.max_seq.max(header.seq);
            scan.max_set = scan.max_set.max(Some(header.tag.set));
            match header.kind {
                PageKind::Node => {
                    info.data_pages += 1;
                    let mut node = Node::default();
                    node.decode(payload)
                        .map_err(|d| corrupt(block, page, format!("node image: {d}")))?;
                    if let Some((other, _)) = scan.images.insert(header.node, (loc, node)) {
                        return Err(corrupt(
                            block,
                            page,
                            format!(
                                "{} has a second image (the first is in {} page {})",
                                header.node,
                                BlockId(other.block),
                                other.page
                            ),
                        ));
                    }
                }
                PageKind::Log => {
                    info.log_pages += 1;
                    scan.logs.push((header.node, loc, payload.to_vec()));
                }
            }
        }
        let info = &mut self.ram.blocks[block as usize];
        if info.pages.is_empty() {
            self.ram.free.push_back(BlockId(block));
        } else {
            info.log_area = info.log_pages.max(u32::from(info.tag.base_log_pages));
        }
        Ok(())
    }

    /// Rebuild the sets from the tags of the blocks in use.
    fn rebuild_sets(&mut self) {
        let mut members: BTreeMap<u32, Vec<(u16, BlockId)>> = BTreeMap::new();
        for (b, info) in self.ram.blocks.iter().enumerate() {
            if info.in_use {
                members
                    .entry(info.tag.set)
                    .or_default()
                    .push((info.tag.position, BlockId(b as u32)));
            }
        }
        for (id, mut blocks) in members {
            blocks.sort();
            let tag = self.ram.blocks[blocks[0].1.index()].tag;
            self.ram.sets.insert(
                id,
                Set {
                    blocks: blocks.into_iter().map(|(_, b)| b).collect(),
                    last: None,
                    opened_with: u32::from(tag.set_blocks),
                    log_pages: u32::from(tag.base_log_pages),
                },
            );
        }
    }
}

/// Apply every log page to its node's image, in program order.
fn apply_logs(scan: &mut Scan) -> Result<(), NandIndexError> {
    for (id, loc, bytes) in &scan.logs {
        let Some((image_loc, node)) = scan.images.get_mut(id) else {
            return Err(corrupt(
                loc.block,
                loc.page,
                format!("log page of {id}, which has no image"),
            ));
        };
        if image_loc.block != loc.block {
            return Err(corrupt(
                loc.block,
                loc.page,
                format!(
                    "log page of {id}, whose image is in {}",
                    BlockId(image_loc.block)
                ),
            ));
        }
        apply_all(bytes, node)
            .map_err(|d| corrupt(loc.block, loc.page, format!("log of {id}: {d}")))?;
    }
    Ok(())
}

/// The node with the highest root epoch.
fn find_root(scan: &Scan) -> Result<(NodeId, u32), NandIndexError> {
    scan.images
        .iter()
        .filter(|(_, (_, node))| node.root_epoch > 0)
        .max_by_key(|(_, (_, node))| node.root_epoch)
        .map(|(&id, (_, node))| (id, node.root_epoch))
        .ok_or_else(|| NandIndexError::NoIndex {
            detail: format!(
                "no node on flash is marked as a root ({} node images found)",
                scan.images.len()
            ),
        })
}

/// The nodes reachable from the root, each once.
fn reachable(scan: &Scan, root: NodeId) -> Result<Vec<NodeId>, NandIndexError> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            let (loc, _) = scan.images[&id];
            return Err(corrupt(
                loc.block,
                loc.page,
                format!("{id} is reachable twice from the root"),
            ));
        }
        let (loc, node) = &scan.images[&id];
        for &child in &node.children {
            if !scan.images.contains_key(&child) {
                return Err(corrupt(
                    loc.block,
                    loc.page,
                    format!("{id} names child {child}, which has no image"),
                ));
            }
            stack.push(child);
        }
    }
    Ok(seen.into_iter().collect())
}
