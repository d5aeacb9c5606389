//! The storage manager: B+-tree nodes as pages in erase blocks of a NAND part, changes as
//! log pages in the node's own block, merges when a block's log area is full (In-Page
//! Logging, GRR paper section 2.2, after Lee and Moon 2007), and index block sets with
//! round-robin placement and growing log areas (GRR, section 3).
//!
//! What it is not: a buffer. It writes what it is given when it is given it; the buffer
//! manager (`buffer/`) decides when a node's image or its log records reach flash.
//!
//! Key decisions:
//!
//! - **One mechanism, two policies.** [`NodeStore`] owns the node map, the blocks, the sets,
//!   fetches, log flushes and merges; a [`Placement`] policy makes the choices the two schemes
//!   differ in (which block a new node goes to, how big a new set is, whether a full log area
//!   grows or its block merges, how a merge lays its nodes out), each as a pure function of a
//!   read-only view. IPL is then exactly GRR with sets of one block and a log area that never
//!   grows (a test checks the figures are identical).
//! - **In-order programming.** The paper draws the data area growing from the top of a block
//!   and the log area from the bottom. Large-block NAND must be programmed in page order
//!   within a block (the device model enforces it), so both areas are appended at the
//!   block's write pointer, each page's header saying which it is; "growing toward each
//!   other" is a budget: data pages + log area <= pages per block, the log area holds k
//!   pages and may grow to the limit l while a page is free.
//! - **A node's read is its data page and every log page of its block**, as Table 2 of the
//!   paper counts it (IPL: 2 reads; GRR: up to l + 1): which log pages hold a node's records
//!   is only known by reading them.
//! - **Nothing but flash survives a restart** (`boot.rs`): every page carries its node id, a
//!   sequence number and its block's set; boot reads them all, applies the logs, finds the
//!   root by its epoch and rebuilds the node map, the sets and the free list.

mod any;
mod boot;
mod check;
pub mod grr;
pub mod ipl;
mod merge;
#[cfg(test)]
pub(crate) mod tests;

pub use any::AnyPlacement;
pub use boot::BootReport;

use crate::nand::log::apply_all;
use crate::nand::node::Node;
use crate::nand::page::{BlockTag, PageHeader, PageKind};
use crate::nand::{NandIndexError, NodeId};
use flashkit_core::{BlockId, Cause, Geometry, Lpn, Stamp, StateHasher};
use flashkit_device::{FlashDevice, NandDevice, PageBytes, PageData};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// A block as a placement policy sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockView {
    /// Pages in an erase block.
    pub pages_per_block: u32,
    /// Data pages written (node images, live or not).
    pub data_pages: u32,
    /// Log pages written.
    pub log_pages: u32,
    /// Pages the log area may hold now (k, or more after growing).
    pub log_area: u32,
    /// Pages the log area started with.
    pub base_log_area: u32,
    /// Live nodes whose image is in the block.
    pub live: u32,
    /// Node fetches served from this block since it was last written from scratch.
    pub fetches: u64,
    /// Log flushes into this block since it was last written from scratch.
    pub flushes: u64,
    /// Blocks in the block's set now.
    pub set_blocks: u32,
}

impl BlockView {
    /// A new node's image fits without eating into the log area.
    pub fn has_room_for_data(&self) -> bool {
        self.data_pages + self.log_area < self.pages_per_block
    }

    /// The log area can grow by a page.
    pub fn can_grow_log(&self) -> bool {
        self.data_pages + self.log_area < self.pages_per_block
    }
}

/// The open index block set, for [`Placement::place`].
#[derive(Clone, Copy, Debug)]
pub struct SetView<'a> {
    /// The set's blocks, in set order.
    pub blocks: &'a [BlockView],
    /// Position of the block that received the last new node (`None`: none yet).
    pub last: Option<usize>,
}

/// What a policy knows of the store as a whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreView {
    /// Erased blocks available.
    pub free_blocks: u32,
    /// Blocks the last set was opened with (0: no set yet).
    pub last_set_blocks: u32,
    /// Log areas that grew since the last set was opened.
    pub grows: u64,
    /// Merges since the last set was opened because the log area had no page to grow into.
    pub merges_for_room: u64,
    /// Merges since the last set was opened because the log area reached its limit.
    pub merges_at_limit: u64,
}

/// The shape of a new index block set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetShape {
    /// Blocks (m).
    pub blocks: u32,
    /// Log pages each block's log area starts with (k).
    pub log_pages: u32,
}

/// What to do when a log flush finds its block's log area full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Take a free page for the log area (only when one is free).
    Grow,
    /// Merge: there is no page to grow into.
    MergeForRoom,
    /// Merge: the log area is at its limit.
    MergeAtLimit,
}

/// How a merge writes its block's live nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeShape {
    /// Log pages of the rewritten block's log area.
    pub log_pages: u32,
    /// Spread the nodes over two fresh blocks of the set (the set grows by one block).
    pub spread: bool,
}

/// The choices IPL and GRR differ in, each a pure function of a view.
pub trait Placement {
    /// The scheme's name.
    fn name(&self) -> &'static str;
    /// The shape of the next index block set.
    fn new_set(&self, view: &StoreView) -> SetShape;
    /// The block of the open set a new node goes to, or `None` when none has room.
    fn place(&self, set: &SetView<'_>) -> Option<usize>;
    /// A log flush found its block's log area full.
    fn on_log_full(&self, block: &BlockView) -> Overflow;
    /// How a merge of `block`, for the reason given, writes its live nodes.
    fn merge_shape(&self, block: &BlockView, reason: Overflow, view: &StoreView) -> MergeShape;
}

/// Where a node's image is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loc {
    block: u32,
    page: u32,
}

impl Loc {
    const NONE: Loc = Loc {
        block: u32::MAX,
        page: u32::MAX,
    };
}

/// RAM bookkeeping of one block; all of it is rebuilt at boot from the page headers.
#[derive(Clone, Debug, Default)]
struct BlockInfo {
    in_use: bool,
    tag: BlockTag,
    /// Every programmed page in program order: what it is and whose.
    pages: Vec<(PageKind, NodeId)>,
    data_pages: u32,
    log_pages: u32,
    log_area: u32,
    live: u32,
    fetches: u64,
    flushes: u64,
}

/// An index block set.
#[derive(Clone, Debug)]
struct Set {
    blocks: Vec<BlockId>,
    last: Option<usize>,
    opened_with: u32,
    log_pages: u32,
}

/// What the store did, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    /// Nodes read from flash (a data page and its block's log pages).
    pub node_fetches: u64,
    /// Log pages read by node fetches.
    pub fetch_log_pages: u64,
    /// New nodes' first images written.
    pub node_writes: u64,
    /// Log sectors flushed (as log pages, or into a merge).
    pub log_flushes: u64,
    /// Log pages written.
    pub log_pages_written: u64,
    /// Log areas grown by a page.
    pub log_area_grows: u64,
    /// Block merges.
    pub merges: u64,
    /// Merges for lack of a page to grow the log area into.
    pub merges_for_room: u64,
    /// Merges at the log area's limit.
    pub merges_at_limit: u64,
    /// Merges that spread a block's nodes over two blocks.
    pub spread_merges: u64,
    /// Node images rewritten by merges (the page copies of a merge).
    pub merge_page_copies: u64,
    /// Index block sets opened.
    pub sets_opened: u64,
    /// Blocks erased because every node in them was freed.
    pub blocks_reclaimed: u64,
    /// Nodes freed.
    pub nodes_freed: u64,
    /// Most blocks in use at once.
    pub peak_blocks_in_use: u64,
}

/// Everything the store keeps in RAM about the index; a restart replaces all of it with
/// what boot reads from flash (so nothing can survive by accident).
struct Ram {
    map: Vec<Loc>,
    blocks: Vec<BlockInfo>,
    free: VecDeque<BlockId>,
    sets: BTreeMap<u32, Set>,
    open: Option<u32>,
    next_set: u32,
    next_node: u32,
    seq: u64,
    since_set: StoreView,
}

impl Ram {
    fn new(geometry: &Geometry) -> Ram {
        Ram {
            map: Vec::new(),
            blocks: vec![BlockInfo::default(); geometry.blocks() as usize],
            free: (0..geometry.blocks()).map(BlockId).collect(),
            sets: BTreeMap::new(),
            open: None,
            next_set: 0,
            next_node: 0,
            seq: 1,
            since_set: StoreView::default(),
        }
    }
}

/// The storage manager over a NAND part that keeps page bytes.
pub struct NodeStore<P> {
    dev: NandDevice<PageBytes>,
    policy: P,
    ram: Ram,
    stats: StoreStats,
    page: Vec<u8>,
    payload: Vec<u8>,
    scratch: Node,
    merge_logs: Vec<u8>,
    merge_spans: Vec<(NodeId, usize, usize)>,
    set_view: Vec<BlockView>,
}

/// Whether a flush went to a log page or into a merge of the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flushed {
    /// A log page was written.
    LogPage,
    /// The block merged and the records went into the node's new image.
    Merged,
}

impl<P: Placement> NodeStore<P> {
    /// A store on an erased device.
    pub fn format(dev: NandDevice<PageBytes>, policy: P) -> Result<NodeStore<P>, NandIndexError> {
        let geometry = *dev.geometry();
        for b in 0..geometry.blocks() {
            if dev.block_status(BlockId(b)).programmed_pages != 0 {
                return Err(NandIndexError::Config {
                    field: "device",
                    reason: format!("{} is not erased; format needs an erased part", BlockId(b)),
                });
            }
        }
        Ok(Self::empty(dev, policy))
    }

    fn empty(dev: NandDevice<PageBytes>, policy: P) -> NodeStore<P> {
        NodeStore {
            ram: Ram::new(dev.geometry()),
            dev,
            policy,
            stats: StoreStats::default(),
            page: Vec::new(),
            payload: Vec::new(),
            scratch: Node::default(),
            merge_logs: Vec::new(),
            merge_spans: Vec::new(),
            set_view: Vec::new(),
        }
    }

    /// The device, for its counters.
    pub fn device(&self) -> &NandDevice<PageBytes> {
        &self.dev
    }

    /// Give the device back (for a restart: everything else is RAM and is dropped).
    pub fn into_parts(self) -> (NandDevice<PageBytes>, P) {
        (self.dev, self.policy)
    }

    /// The placement policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// Counters.
    pub fn stats(&self) -> StoreStats {
        self.stats
    }

    /// Feed the store's state to `hasher`: the device (every page's bytes, the block
    /// states, the counters), then what RAM keeps: where each node's image is, each block's
    /// bookkeeping, the free list in order, the sets, the counters of the set being opened,
    /// and the store's counters. The policy is configuration, and the scratch buffers hold
    /// nothing between operations.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        self.dev.hash_state(hasher);
        let Ram {
            map,
            blocks,
            free,
            sets,
            open,
            next_set,
            next_node,
            seq,
            since_set,
        } = &self.ram;
        hasher.u64(map.len() as u64);
        for loc in map {
            hasher.u32(loc.block);
            hasher.u32(loc.page);
        }
        for info in blocks {
            let BlockInfo {
                in_use,
                tag,
                pages,
                data_pages,
                log_pages,
                log_area,
                live,
                fetches,
                flushes,
            } = info;
            hasher.u32(u32::from(*in_use));
            hasher.u32(tag.set);
            for x in [tag.set_blocks, tag.position, tag.base_log_pages] {
                hasher.u32(u32::from(x));
            }
            hasher.u64(pages.len() as u64);
            for (kind, node) in pages {
                hasher.u32(*kind as u32);
                hasher.u32(node.0);
            }
            for x in [data_pages, log_pages, log_area, live] {
                hasher.u32(*x);
            }
            hasher.u64(*fetches);
            hasher.u64(*flushes);
        }
        hasher.u64(free.len() as u64);
        for block in free {
            hasher.u32(block.0);
        }
        hasher.u64(sets.len() as u64);
        for (id, set) in sets {
            let Set {
                blocks,
                last,
                opened_with,
                log_pages,
            } = set;
            hasher.u32(*id);
            hasher.u64(blocks.len() as u64);
            for block in blocks {
                hasher.u32(block.0);
            }
            hasher.u32(u32::from(last.is_some()));
            hasher.u64(last.map_or(0, |i| i as u64));
            hasher.u32(*opened_with);
            hasher.u32(*log_pages);
        }
        hasher.u32(u32::from(open.is_some()));
        hasher.u32(open.unwrap_or(0));
        hasher.u32(*next_set);
        hasher.u32(*next_node);
        hasher.u64(*seq);
        let StoreView {
            free_blocks,
            last_set_blocks,
            grows,
            merges_for_room,
            merges_at_limit,
        } = *since_set;
        hasher.u32(free_blocks);
        hasher.u32(last_set_blocks);
        for x in [grows, merges_for_room, merges_at_limit] {
            hasher.u64(x);
        }
        let StoreStats {
            node_fetches,
            fetch_log_pages,
            node_writes,
            log_flushes,
            log_pages_written,
            log_area_grows,
            merges,
            merges_for_room,
            merges_at_limit,
            spread_merges,
            merge_page_copies,
            sets_opened,
            blocks_reclaimed,
            nodes_freed,
            peak_blocks_in_use,
        } = self.stats;
        for x in [
            node_fetches,
            fetch_log_pages,
            node_writes,
            log_flushes,
            log_pages_written,
            log_area_grows,
            merges,
            merges_for_room,
            merges_at_limit,
            spread_merges,
            merge_page_copies,
            sets_opened,
            blocks_reclaimed,
            nodes_freed,
            peak_blocks_in_use,
        ] {
            hasher.u64(x);
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> &Geometry {
        self.dev.geometry()
    }

    /// Blocks holding index data (not free).
    pub fn blocks_in_use(&self) -> u32 {
        self.ram.blocks.len() as u32 - self.ram.free.len() as u32
    }

    /// Live nodes on flash.
    pub fn live_nodes(&self) -> u64 {
        self.ram.blocks.iter().map(|b| u64::from(b.live)).sum()
    }

    /// A fresh node id. Ids are never reused while their node may be on flash.
    pub fn allocate_id(&mut self) -> NodeId {
        let id = NodeId(self.ram.next_node);
        self.ram.next_node = self
            .ram
            .next_node
            .checked_add(1)
            .filter(|&n| n != NodeId::NONE.0)
            .expect("invariant: fewer than 2^32 - 1 nodes are ever created");
        id
    }

    /// Whether the node has an image on flash.
    pub fn is_on_flash(&self, id: NodeId) -> bool {
        self.loc(id) != Loc::NONE
    }

    fn loc(&self, id: NodeId) -> Loc {
        self.ram.map.get(id.index()).copied().unwrap_or(Loc::NONE)
    }

    fn set_loc(&mut self, id: NodeId, loc: Loc) {
        if self.ram.map.len() <= id.index() {
            self.ram.map.resize(id.index() + 1, Loc::NONE);
        }
        self.ram.map[id.index()] = loc;
    }

    fn view(&self, block: u32) -> BlockView {
        let b = &self.ram.blocks[block as usize];
        BlockView {
            pages_per_block: self.dev.geometry().pages_per_block(),
            data_pages: b.data_pages,
            log_pages: b.log_pages,
            log_area: b.log_area,
            base_log_area: u32::from(b.tag.base_log_pages),
            live: b.live,
            fetches: b.fetches,
            flushes: b.flushes,
            set_blocks: self
                .ram
                .sets
                .get(&b.tag.set)
                .map_or(0, |s| s.blocks.len() as u32),
        }
    }

    fn store_view(&self) -> StoreView {
        StoreView {
            free_blocks: self.ram.free.len() as u32,
            ..self.ram.since_set
        }
    }

    /// Program the next page of `block` with a header and `payload`.
    fn program(
        &mut self,
        block: u32,
        kind: PageKind,
        node: NodeId,
        payload: &[u8],
        cause: Cause,
    ) -> Result<u32, NandIndexError> {
        let info = &mut self.ram.blocks[block as usize];
        let page = info.pages.len() as u32;
        let header = PageHeader {
            kind,
            node,
            seq: self.ram.seq,
            tag: info.tag,
        };
        header.write_page(payload, &mut self.page);
        let ppn = self.dev.geometry().ppn(BlockId(block), page);
        let stamp = Stamp::new(Lpn(node.0), self.ram.seq);
        self.dev.program_page(ppn, stamp, &self.page, cause)?;
        self.ram.seq += 1;
        info.pages.push((kind, node));
        match kind {
            PageKind::Node => info.data_pages += 1,
            PageKind::Log => info.log_pages += 1,
        }
        Ok(page)
    }

    /// Read a page and check its header names what RAM says is there.
    fn read_checked(
        &mut self,
        block: u32,
        page: u32,
        cause: Cause,
    ) -> Result<(PageHeader, &[u8]), NandIndexError> {
        let (kind, node) = self.ram.blocks[block as usize].pages[page as usize];
        let ppn = self.dev.geometry().ppn(BlockId(block), page);
        let corrupt = |detail: String| NandIndexError::Corrupt {
            block: BlockId(block),
            page,
            detail,
        };
        let bytes = match self.dev.read_page(ppn, cause)? {
            PageData::Programmed { bytes, .. } => bytes,
            PageData::Erased => return Err(corrupt("erased, a written page was expected".into())),
        };
        let (header, payload) = PageHeader::read_page(bytes).map_err(corrupt)?;
        if (header.kind, header.node) != (kind, node) {
            return Err(corrupt(format!(
                "header names {:?} of {}, RAM expected {kind:?} of {node}",
                header.kind, header.node
            )));
        }
        Ok((header, payload))
    }

    /// Read a node's up-to-date image from flash: its data page, then every log page of its
    /// block, applying the records that are its own.
    pub fn fetch(&mut self, id: NodeId, out: &mut Node) -> Result<(), NandIndexError> {
        let loc = self.loc(id);
        assert!(
            loc != Loc::NONE,
            "fetch of {id}, which has no image on flash"
        );
        let (_, payload) = self.read_checked(loc.block, loc.page, Cause::Host)?;
        out.decode(payload)
            .map_err(|detail| NandIndexError::Corrupt {
                block: BlockId(loc.block),
                page: loc.page,
                detail: format!("node image: {detail}"),
            })?;
        let pages = self.ram.blocks[loc.block as usize].pages.len() as u32;
        let mut log_pages = 0;
        for page in 0..pages {
            if self.ram.blocks[loc.block as usize].pages[page as usize].0 != PageKind::Log {
                continue;
            }
            log_pages += 1;
            let (header, payload) = self.read_checked(loc.block, page, Cause::Host)?;
            if header.node == id {
                apply_all(payload, out).map_err(|detail| NandIndexError::Corrupt {
                    block: BlockId(loc.block),
                    page,
                    detail: format!("log of {id}: {detail}"),
                })?;
            }
        }
        self.ram.blocks[loc.block as usize].fetches += 1;
        self.stats.node_fetches += 1;
        self.stats.fetch_log_pages += log_pages;
        Ok(())
    }

    /// Write a new node's first image into a block of the open set, opening a set when no
    /// block has room.
    pub fn write_new(&mut self, id: NodeId, node: &Node) -> Result<(), NandIndexError> {
        assert!(!self.is_on_flash(id), "{id} already has an image on flash");
        let mut opened = false;
        let block = loop {
            if let Some(choice) = self.place() {
                break choice;
            }
            assert!(
                !opened,
                "invariant: a freshly opened set has room for a node"
            );
            self.open_set()?;
            opened = true;
        };
        let mut payload = std::mem::take(&mut self.payload);
        payload.clear();
        node.encode(&mut payload);
        let page = self.program(block.0, PageKind::Node, id, &payload, Cause::Host);
        self.payload = payload;
        let page = page?;
        self.ram.blocks[block.index()].live += 1;
        self.set_loc(
            id,
            Loc {
                block: block.0,
                page,
            },
        );
        self.stats.node_writes += 1;
        Ok(())
    }

    /// Ask the policy for a block of the open set; records the round-robin position.
    fn place(&mut self) -> Option<BlockId> {
        let set_id = self.ram.open?;
        let mut views = std::mem::take(&mut self.set_view);
        views.clear();
        let set = &self.ram.sets[&set_id];
        views.extend(set.blocks.iter().map(|b| self.view(b.0)));
        let choice = self.policy.place(&SetView {
            blocks: &views,
            last: set.last,
        });
        if let Some(i) = choice {
            assert!(
                views[i].has_room_for_data(),
                "invariant: placement chose a block without room"
            );
        }
        self.set_view = views;
        let i = choice?;
        let set = self.ram.sets.get_mut(&set_id).expect("invariant: open set");
        set.last = Some(i);
        Some(set.blocks[i])
    }

    /// Close the open set and open a new one of the policy's shape.
    fn open_set(&mut self) -> Result<(), NandIndexError> {
        self.close_open_set()?;
        let shape = self.policy.new_set(&self.store_view());
        let free = self.ram.free.len() as u32;
        if shape.blocks == 0 || free < shape.blocks + 1 {
            return Err(NandIndexError::OutOfSpace {
                detail: format!(
                    "a new index block set of {} blocks needs {} free blocks (one stays free \
                     for merges); {free} of {} are free",
                    shape.blocks,
                    shape.blocks + 1,
                    self.ram.blocks.len()
                ),
            });
        }
        let id = self.ram.next_set;
        self.ram.next_set += 1;
        let mut blocks = Vec::with_capacity(shape.blocks as usize);
        for position in 0..shape.blocks {
            let b = self.take_free(BlockTag {
                set: id,
                set_blocks: shape.blocks as u16,
                position: position as u16,
                base_log_pages: shape.log_pages as u16,
            });
            blocks.push(b);
        }
        self.ram.sets.insert(
            id,
            Set {
                blocks,
                last: None,
                opened_with: shape.blocks,
                log_pages: shape.log_pages,
            },
        );
        self.ram.open = Some(id);
        self.ram.since_set = StoreView {
            last_set_blocks: shape.blocks,
            ..StoreView::default()
        };
        self.stats.sets_opened += 1;
        Ok(())
    }

    /// Take an erased block for `tag`'s role.
    fn take_free(&mut self, tag: BlockTag) -> BlockId {
        let b = self
            .ram
            .free
            .pop_front()
            .expect("invariant: callers check the free count");
        let info = &mut self.ram.blocks[b.index()];
        debug_assert!(!info.in_use && info.pages.is_empty());
        info.in_use = true;
        info.tag = tag;
        info.log_area = u32::from(tag.base_log_pages);
        self.stats.peak_blocks_in_use = self
            .stats
            .peak_blocks_in_use
            .max(u64::from(self.blocks_in_use()));
        b
    }

    /// The open set stops taking new nodes: blocks that never received one go back to the
    /// free list, blocks whose nodes were all freed are erased.
    fn close_open_set(&mut self) -> Result<(), NandIndexError> {
        let Some(id) = self.ram.open.take() else {
            return Ok(());
        };
        let blocks = self.ram.sets[&id].blocks.clone();
        for b in blocks {
            let info = &self.ram.blocks[b.index()];
            if info.pages.is_empty() {
                self.release(b);
            } else if info.live == 0 {
                self.reclaim(b)?;
            }
        }
        Ok(())
    }

    /// Forget a block's RAM bookkeeping (it has been erased), keeping its page vector.
    fn reset_block(&mut self, b: BlockId) {
        let info = &mut self.ram.blocks[b.index()];
        let mut pages = std::mem::take(&mut info.pages);
        pages.clear();
        *info = BlockInfo::default();
        info.pages = pages;
    }

    /// Return an erased block to the free list and drop it from its set.
    fn release(&mut self, b: BlockId) {
        let set = self.ram.blocks[b.index()].tag.set;
        self.reset_block(b);
        self.ram.free.push_back(b);
        if let Some(s) = self.ram.sets.get_mut(&set) {
            s.blocks.retain(|&x| x != b);
            if s.blocks.is_empty() && self.ram.open != Some(set) {
                self.ram.sets.remove(&set);
            }
        }
    }

    /// Erase a block none of whose nodes is live and free it.
    fn reclaim(&mut self, b: BlockId) -> Result<(), NandIndexError> {
        debug_assert_eq!(self.ram.blocks[b.index()].live, 0);
        self.dev.erase(b, Cause::Gc)?;
        self.release(b);
        self.stats.blocks_reclaimed += 1;
        Ok(())
    }

    /// Flush a node's log sector: a log page in the node's own block, or, when the block's
    /// log area is full and the policy does not grow it, a merge of the block that puts the
    /// records straight into the node's new image.
    pub fn flush_log(&mut self, id: NodeId, records: &[u8]) -> Result<Flushed, NandIndexError> {
        let loc = self.loc(id);
        assert!(
            loc != Loc::NONE,
            "log flush for {id}, which is not on flash"
        );
        self.stats.log_flushes += 1;
        self.ram.blocks[loc.block as usize].flushes += 1;
        let view = self.view(loc.block);
        if view.log_pages == view.log_area {
            match self.policy.on_log_full(&view) {
                Overflow::Grow => {
                    assert!(view.can_grow_log(), "policy grew a log area without room");
                    self.ram.blocks[loc.block as usize].log_area += 1;
                    self.stats.log_area_grows += 1;
                    self.ram.since_set.grows += 1;
                }
                reason => {
                    self.merge(loc.block, reason, Some((id, records)))?;
                    return Ok(Flushed::Merged);
                }
            }
        }
        self.program(loc.block, PageKind::Log, id, records, Cause::Host)?;
        self.stats.log_pages_written += 1;
        Ok(Flushed::LogPage)
    }

    /// The node is gone from the tree: its image becomes garbage, erased with its block's
    /// next merge, or at once if it was the block's last live node.
    pub fn free(&mut self, id: NodeId) -> Result<(), NandIndexError> {
        let loc = self.loc(id);
        self.stats.nodes_freed += 1;
        if loc == Loc::NONE {
            return Ok(());
        }
        self.ram.map[id.index()] = Loc::NONE;
        let info = &mut self.ram.blocks[loc.block as usize];
        info.live -= 1;
        let open = self
            .ram
            .open
            .is_some_and(|s| self.ram.sets[&s].blocks.contains(&BlockId(loc.block)));
        if info.live == 0 && !open {
            self.reclaim(BlockId(loc.block))?;
        }
        Ok(())
    }

    /// A node's up-to-date image read with uncounted peeks, for checkers.
    pub fn peek(&self, id: NodeId, out: &mut Node) -> Result<(), String> {
        let loc = self.loc(id);
        if loc == Loc::NONE {
            return Err(format!("{id} has no image on flash"));
        }
        let payload = self.peek_payload(loc.block, loc.page)?;
        out.decode(payload)?;
        let info = &self.ram.blocks[loc.block as usize];
        for (page, &(kind, owner)) in info.pages.iter().enumerate() {
            if kind == PageKind::Log && owner == id {
                apply_all(self.peek_payload(loc.block, page as u32)?, out)?;
            }
        }
        Ok(())
    }

    fn peek_payload(&self, block: u32, page: u32) -> Result<&[u8], String> {
        let ppn = self.dev.geometry().ppn(BlockId(block), page);
        let bytes = self
            .dev
            .peek_page(ppn)
            .bytes()
            .ok_or_else(|| format!("{} page {page} is erased", BlockId(block)))?;
        PageHeader::read_page(bytes)
            .map(|(_, payload)| payload)
            .map_err(|e| format!("{} page {page}: {e}", BlockId(block)))
    }

    /// Every live node id on flash, in id order.
    pub fn live_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.ram
            .map
            .iter()
            .enumerate()
            .filter(|(_, loc)| **loc != Loc::NONE)
            .map(|(i, _)| NodeId(i as u32))
    }
}

impl StoreStats {
    /// Counts since an earlier snapshot (the peak is the later one's).
    pub fn since(&self, e: &StoreStats) -> StoreStats {
        StoreStats {
            node_fetches: self.node_fetches - e.node_fetches,
            fetch_log_pages: self.fetch_log_pages - e.fetch_log_pages,
            node_writes: self.node_writes - e.node_writes,
            log_flushes: self.log_flushes - e.log_flushes,
            log_pages_written: self.log_pages_written - e.log_pages_written,
            log_area_grows: self.log_area_grows - e.log_area_grows,
            merges: self.merges - e.merges,
            merges_for_room: self.merges_for_room - e.merges_for_room,
            merges_at_limit: self.merges_at_limit - e.merges_at_limit,
            spread_merges: self.spread_merges - e.spread_merges,
            merge_page_copies: self.merge_page_copies - e.merge_page_copies,
            sets_opened: self.sets_opened - e.sets_opened,
            blocks_reclaimed: self.blocks_reclaimed - e.blocks_reclaimed,
            nodes_freed: self.nodes_freed - e.nodes_freed,
            peak_blocks_in_use: self.peak_blocks_in_use,
        }
    }
}
