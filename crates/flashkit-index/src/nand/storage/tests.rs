//! The storage manager's checker shown to fire on deliberately corrupted RAM bookkeeping:
//! one corruption per condition it checks. And its state hash shown to change with every
//! part of the state it covers.
//!
//! Not covered: a listed page that reads erased, and a page header that does not decode.
//! Both need a page rewritten on flash, which the simulated NAND device does not allow (a
//! page is programmed once per erase), and the page count is checked against the device
//! before them.

use super::*;
use crate::nand::storage::ipl::Ipl;

/// A store found at boot on the flash a B-tree left: 2,000 keys inserted in a scrambled
/// order, every fifth removed, the tree closed cleanly.
fn busy_store() -> NodeStore<Ipl> {
    let tree = crate::nand::btree::tests::scrambled_tree(16);
    let dev = tree.close().expect("close");
    let (store, _) = NodeStore::open(dev, Ipl::default()).expect("boot");
    store.check().expect("a healthy store passes");
    store
}

fn violation(store: &NodeStore<Ipl>) -> String {
    store.check().expect_err("the corruption is caught")
}

/// The first block in use that holds a log page.
fn block_with_logs(store: &NodeStore<Ipl>) -> usize {
    store
        .ram
        .blocks
        .iter()
        .position(|b| b.in_use && b.log_pages > 0)
        .expect("a block with log pages")
}

/// The first page holding a node image that is the node's current one: (block, page, node).
fn live_image(store: &NodeStore<Ipl>) -> (usize, usize, NodeId) {
    for (b, info) in store.ram.blocks.iter().enumerate() {
        for (p, &(kind, node)) in info.pages.iter().enumerate() {
            let here = Loc {
                block: b as u32,
                page: p as u32,
            };
            if info.in_use && kind == PageKind::Node && store.loc(node) == here {
                return (b, p, node);
            }
        }
    }
    panic!("a live image");
}

#[test]
fn catches_a_block_twice_in_the_free_list() {
    let mut store = busy_store();
    let b = *store.ram.free.front().expect("a free block");
    store.ram.free.push_back(b);
    let e = violation(&store);
    assert!(e.contains(&format!("{b} is twice in the free list")), "{e}");
}

#[test]
fn catches_a_block_in_use_on_the_free_list() {
    let mut store = busy_store();
    let (b, ..) = live_image(&store);
    store.ram.free.push_back(BlockId(b as u32));
    let e = violation(&store);
    assert!(e.contains("in use true but free-listed true"), "{e}");
}

#[test]
fn catches_a_block_neither_in_use_nor_free() {
    let mut store = busy_store();
    store.ram.free.pop_front().expect("a free block");
    let e = violation(&store);
    assert!(e.contains("in use false but free-listed false"), "{e}");
}

#[test]
fn catches_a_page_count_that_disagrees_with_flash() {
    let mut store = busy_store();
    let (b, ..) = live_image(&store);
    store.ram.blocks[b].pages.pop();
    let e = violation(&store);
    assert!(e.contains("pages programmed, RAM says"), "{e}");
}

#[test]
fn catches_data_and_log_counts_that_disagree_with_the_pages() {
    let mut store = busy_store();
    let (b, ..) = live_image(&store);
    store.ram.blocks[b].data_pages += 1;
    let e = violation(&store);
    assert!(e.contains("log pages, counted"), "{e}");
}

#[test]
fn catches_more_log_pages_than_the_log_area() {
    let mut store = busy_store();
    let b = block_with_logs(&store);
    let info = &mut store.ram.blocks[b];
    info.log_area = info.log_pages - 1;
    let e = violation(&store);
    assert!(e.contains("and a log area of"), "{e}");
}

#[test]
fn catches_a_log_area_that_does_not_fit_beside_the_data() {
    let mut store = busy_store();
    let (b, ..) = live_image(&store);
    let ppb = store.dev.geometry().pages_per_block();
    let info = &mut store.ram.blocks[b];
    // Still room for every log page written; only the block is overfilled.
    info.log_area = ppb - info.data_pages + 1;
    assert!(info.log_pages <= info.log_area);
    let e = violation(&store);
    assert!(e.contains(&format!("in {ppb} pages")), "{e}");
}

#[test]
fn catches_a_page_whose_header_names_another_node() {
    let mut store = busy_store();
    let (b, p, node) = live_image(&store);
    store.ram.blocks[b].pages[p].1 = NodeId(node.0 + 1);
    let e = violation(&store);
    assert!(e.contains(&format!("page {p}: header")), "{e}");
}

#[test]
fn catches_a_live_count_that_disagrees_with_the_map() {
    let mut store = busy_store();
    let (b, ..) = live_image(&store);
    store.ram.blocks[b].live += 1;
    let e = violation(&store);
    assert!(e.contains("live images, counted"), "{e}");
}

#[test]
fn catches_a_node_mapped_to_a_page_without_its_image() {
    let mut store = busy_store();
    let (b, p, _) = live_image(&store);
    // A node with no image so far, mapped to another node's page: no block's live
    // count changes, only the map is wrong.
    let id = NodeId(store.ram.map.len() as u32);
    store.ram.map.push(Loc {
        block: b as u32,
        page: p as u32,
    });
    let e = violation(&store);
    assert!(
        e.contains(&format!("{id} maps to")) && e.contains("which does not hold its image"),
        "{e}"
    );
}

#[test]
fn catches_a_set_listing_a_block_not_in_use() {
    let mut store = busy_store();
    let free = *store.ram.free.front().expect("a free block");
    let set = store.ram.sets.values_mut().next().expect("a set");
    set.blocks[0] = free;
    let e = violation(&store);
    assert!(e.contains(&format!("lists {free}, tagged")), "{e}");
}

#[test]
fn catches_a_block_in_use_in_no_set() {
    let mut store = busy_store();
    let set = store.ram.sets.values_mut().next().expect("a set");
    set.blocks.pop();
    let e = violation(&store);
    assert!(e.contains("blocks in use but"), "{e}");
}

#[test]
fn catches_an_open_set_that_does_not_exist() {
    let mut store = busy_store();
    store.ram.open = Some(u32::MAX);
    let e = violation(&store);
    assert!(
        e.contains(&format!("the open set {} does not exist", u32::MAX)),
        "{e}"
    );
}

fn state_hash(store: &NodeStore<Ipl>) -> u64 {
    let mut hasher = StateHasher::new();
    store.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the store's state reaches its state hash: each change below, made on top
/// of the ones before it, gives a hash not seen before (a part left out of the hash would
/// give the previous one again).
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    type Change = (&'static str, fn(&mut NodeStore<Ipl>));
    let changes: Vec<Change> = vec![
        ("the flash", |s| {
            use flashkit_device::FlashDevice;
            s.dev
                .read(flashkit_core::Ppn(0), Cause::Host)
                .expect("read");
        }),
        ("a node's block", |s| s.ram.map[0].block += 1),
        ("a node's page", |s| s.ram.map[0].page += 1),
        ("one more node", |s| s.ram.map.push(Loc::NONE)),
        ("a block in use", |s| s.ram.blocks[0].in_use ^= true),
        ("a block's set", |s| s.ram.blocks[0].tag.set += 1),
        ("its set's size", |s| s.ram.blocks[0].tag.set_blocks += 1),
        ("its place in the set", |s| {
            s.ram.blocks[0].tag.position += 1
        }),
        ("its first log area", |s| {
            s.ram.blocks[0].tag.base_log_pages += 1
        }),
        ("one more page", |s| {
            s.ram.blocks[0].pages.push((PageKind::Node, NodeId(0)))
        }),
        ("a page's kind", |s| {
            let last = s.ram.blocks[0].pages.len() - 1;
            s.ram.blocks[0].pages[last].0 = PageKind::Log
        }),
        ("a page's node", |s| {
            let last = s.ram.blocks[0].pages.len() - 1;
            s.ram.blocks[0].pages[last].1 = NodeId(1)
        }),
        ("data pages", |s| s.ram.blocks[0].data_pages += 1),
        ("log pages", |s| s.ram.blocks[0].log_pages += 1),
        ("the log area", |s| s.ram.blocks[0].log_area += 1),
        ("live nodes", |s| s.ram.blocks[0].live += 1),
        ("fetches", |s| s.ram.blocks[0].fetches += 1),
        ("flushes", |s| s.ram.blocks[0].flushes += 1),
        ("the last block's bookkeeping", |s| {
            let last = s.ram.blocks.len() - 1;
            s.ram.blocks[last].live += 1
        }),
        ("the free list's order", |s| {
            let first = s.ram.free.pop_front().expect("a free block");
            s.ram.free.push_back(first)
        }),
        ("a free block taken", |s| {
            s.ram.free.pop_back();
        }),
        ("a set's blocks", |s| {
            let set = s.ram.sets.values_mut().next().expect("a set");
            set.blocks.push(BlockId(0))
        }),
        ("a set's last block", |s| {
            let set = s.ram.sets.values_mut().next().expect("a set");
            set.last = Some(set.last.map_or(0, |i| i + 1))
        }),
        ("a set's opening size", |s| {
            s.ram.sets.values_mut().next().expect("a set").opened_with += 1
        }),
        ("a set's log pages", |s| {
            s.ram.sets.values_mut().next().expect("a set").log_pages += 1
        }),
        ("a set's number", |s| {
            let (&id, _) = s.ram.sets.iter().next().expect("a set");
            let set = s.ram.sets.remove(&id).expect("the set");
            s.ram.sets.insert(id + 1000, set);
        }),
        ("one more set", |s| {
            let set = s.ram.sets.values().next().expect("a set").clone();
            s.ram.sets.insert(5000, set);
        }),
        ("the open set", |s| s.ram.open = Some(77)),
        ("another open set", |s| s.ram.open = Some(78)),
        ("the next set's number", |s| s.ram.next_set += 1),
        ("the next node's number", |s| s.ram.next_node += 1),
        ("the page sequence", |s| s.ram.seq += 1),
        ("since the set: free blocks", |s| {
            s.ram.since_set.free_blocks += 1
        }),
        ("since the set: its size", |s| {
            s.ram.since_set.last_set_blocks += 1
        }),
        ("since the set: grows", |s| s.ram.since_set.grows += 1),
        ("since the set: merges for room", |s| {
            s.ram.since_set.merges_for_room += 1
        }),
        ("since the set: merges at the limit", |s| {
            s.ram.since_set.merges_at_limit += 1
        }),
        ("node fetches", |s| s.stats.node_fetches += 1),
        ("log pages fetched", |s| s.stats.fetch_log_pages += 1),
        ("node writes", |s| s.stats.node_writes += 1),
        ("log flushes", |s| s.stats.log_flushes += 1),
        ("log pages written", |s| s.stats.log_pages_written += 1),
        ("log area grows", |s| s.stats.log_area_grows += 1),
        ("merges", |s| s.stats.merges += 1),
        ("merges for room", |s| s.stats.merges_for_room += 1),
        ("merges at the limit", |s| s.stats.merges_at_limit += 1),
        ("spread merges", |s| s.stats.spread_merges += 1),
        ("pages copied by merges", |s| s.stats.merge_page_copies += 1),
        ("sets opened", |s| s.stats.sets_opened += 1),
        ("blocks reclaimed", |s| s.stats.blocks_reclaimed += 1),
        ("nodes freed", |s| s.stats.nodes_freed += 1),
        ("peak blocks in use", |s| s.stats.peak_blocks_in_use += 1),
    ];
    let mut store = busy_store();
    let mut seen = vec![state_hash(&store)];
    for (part, change) in changes {
        change(&mut store);
        let h = state_hash(&store);
        assert!(
            !seen.contains(&h),
            "{part} does not reach the state hash on its own"
        );
        seen.push(h);
    }
}

/// A window of the storage manager's counters subtracts every count; the peak is a
/// maximum, so the window keeps the later one.
#[test]
fn store_counters_since_a_snapshot_subtract_every_count() {
    let at = |n: u64| StoreStats {
        node_fetches: 30 * n,
        fetch_log_pages: 29 * n,
        node_writes: 28 * n,
        log_flushes: 27 * n,
        log_pages_written: 26 * n,
        log_area_grows: 25 * n,
        merges: 24 * n,
        merges_for_room: 23 * n,
        merges_at_limit: 22 * n,
        spread_merges: 21 * n,
        merge_page_copies: 20 * n,
        sets_opened: 19 * n,
        blocks_reclaimed: 18 * n,
        nodes_freed: 17 * n,
        peak_blocks_in_use: 16 * n,
    };
    assert_eq!(
        at(5).since(&at(2)),
        StoreStats {
            peak_blocks_in_use: 16 * 5,
            ..at(3)
        }
    );
}

/// Formatting needs an erased part: a device with a programmed page is refused, naming
/// the first such block.
#[test]
fn format_refuses_a_device_that_is_not_erased() {
    let tree = crate::nand::btree::tests::scrambled_tree(16);
    let dev = tree.close().expect("close");
    let first = (0..dev.geometry().blocks())
        .find(|&b| dev.block_status(BlockId(b)).programmed_pages != 0)
        .expect("a written block");
    match NodeStore::format(dev, Ipl::default()) {
        Err(NandIndexError::Config { field, reason }) => {
            assert_eq!(field, "device");
            assert_eq!(
                reason,
                format!(
                    "{} is not erased; format needs an erased part",
                    BlockId(first)
                )
            );
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a written device formatted"),
    }
}

/// An erased part of `blocks` blocks of sixteen 512-byte pages.
pub(crate) fn small_device(blocks: u32) -> NandDevice<PageBytes> {
    let geometry = flashkit_core::Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(16)
        .oob_bytes(16)
        .blocks(blocks)
        .build()
        .expect("valid geometry");
    NandDevice::new(geometry)
}

fn grr_store(blocks: u32) -> NodeStore<crate::nand::storage::grr::Grr> {
    let grr = crate::nand::storage::grr::Grr::paper(flashkit_core::NandPreset::GRR_PAPER.timing);
    NodeStore::format(small_device(blocks), grr).expect("erased")
}

/// A set of m blocks opens only with m + 1 blocks free (one stays free for merges); short
/// of that the write is refused as out of space, saying how many are free.
#[test]
fn a_set_opens_only_with_one_block_to_spare() {
    let mut store = grr_store(8);
    let id = store.allocate_id();
    match store.write_new(id, &Node::empty_leaf()) {
        Err(NandIndexError::OutOfSpace { detail }) => assert_eq!(
            detail,
            "a new index block set of 8 blocks needs 9 free blocks (one stays free for \
             merges); 8 of 8 are free"
        ),
        other => panic!("{other:?}"),
    }
    let mut store = grr_store(9);
    let id = store.allocate_id();
    store
        .write_new(id, &Node::empty_leaf())
        .expect("9 blocks hold a set of 8");
    assert_eq!(store.blocks_in_use(), 8);
    assert_eq!(store.stats().sets_opened, 1);
}

/// What the placement policy is shown: the erased blocks available, and the last set's
/// size (none before the first set, and none again after a boot).
#[test]
fn the_policy_sees_the_free_blocks_and_the_last_sets_size() {
    let mut store = grr_store(20);
    let view = store.store_view();
    assert_eq!((view.free_blocks, view.last_set_blocks), (20, 0));
    let id = store.allocate_id();
    store.write_new(id, &Node::empty_leaf()).expect("write");
    let view = store.store_view();
    assert_eq!((view.free_blocks, view.last_set_blocks), (12, 8));
    let busy = busy_store();
    let g = *busy.geometry();
    let view = busy.store_view();
    assert_eq!(view.free_blocks, g.blocks() - busy.blocks_in_use());
    assert_eq!(
        view.last_set_blocks, 0,
        "a store found at boot starts its set history over"
    );
}

/// A block of the open set whose nodes are all freed stays until the set closes (it may
/// still take nodes); when the next set opens it is erased, freed and dropped from its set.
#[test]
fn the_open_sets_emptied_block_is_reclaimed_when_the_set_closes() {
    let mut store = NodeStore::format(small_device(16), Ipl::default()).expect("erased");
    // IPL keeps one log page a block: 15 node images fill a block's data pages.
    let ids: Vec<NodeId> = (0..15).map(|_| store.allocate_id()).collect();
    for &id in &ids {
        store.write_new(id, &Node::empty_leaf()).expect("write");
    }
    let first = store.loc(ids[0]).block;
    assert!(ids.iter().all(|&id| store.loc(id).block == first));
    for &id in &ids {
        store.free(id).expect("free");
    }
    assert_eq!(
        store.stats().blocks_reclaimed,
        0,
        "the open set's block waits"
    );
    assert_eq!(store.blocks_in_use(), 1);
    store.check().expect("consistent");
    let next = store.allocate_id();
    store.write_new(next, &Node::empty_leaf()).expect("write");
    assert_ne!(store.loc(next).block, first, "a new set");
    assert_eq!(store.stats().blocks_reclaimed, 1);
    assert_eq!(store.stats().sets_opened, 2);
    assert_eq!(store.device().counters().erases.gc, 1);
    let status = store.device().block_status(BlockId(first));
    assert_eq!(status.programmed_pages, 0, "erased");
    assert!(store.ram.free.contains(&BlockId(first)));
    assert_eq!(store.ram.sets.len(), 1, "the emptied set is dropped");
    assert_eq!(store.blocks_in_use(), 1);
    store.check().expect("consistent");
    // A block outside the open set is erased as soon as its last node is freed.
    let second = store.loc(next).block;
    let more: Vec<NodeId> = (0..15).map(|_| store.allocate_id()).collect();
    for &id in &more {
        store.write_new(id, &Node::empty_leaf()).expect("write");
    }
    let third = store.loc(more[14]).block;
    assert_ne!(
        third, second,
        "the second block filled and a third set opened"
    );
    let in_second: Vec<NodeId> = std::iter::once(next)
        .chain(more.iter().copied())
        .filter(|&id| store.loc(id).block == second)
        .collect();
    assert_eq!(in_second.len(), 15);
    for &id in &in_second {
        store.free(id).expect("free");
    }
    assert_eq!(store.stats().nodes_freed, 30);
    assert_eq!(store.stats().blocks_reclaimed, 2, "erased at once");
    assert_eq!(
        store
            .device()
            .block_status(BlockId(second))
            .programmed_pages,
        0
    );
    assert_eq!(store.blocks_in_use(), 1);
    store.check().expect("consistent");
}

/// A boot's report against what the flash holds, read page by page with uncounted peeks:
/// it reads every programmed page and the first erased one of each block that has one,
/// finds as garbage every node with an image that the tree does not reach, and carries on
/// numbering writes after the highest sequence number on flash. Checked on a second boot,
/// so that the device has counted reads before it.
#[test]
fn a_boot_reports_what_the_flash_holds() {
    let mut tree = crate::nand::btree::tests::scrambled_tree(16);
    for key in (0..20_000u64).step_by(30) {
        tree.remove(key).expect("remove");
    }
    let dev = tree.close().expect("close");
    let (mut store, _) = NodeStore::open(dev, Ipl::default()).expect("boot");
    let g = store.dev.geometry();
    let (mut pages, mut max_seq, mut max_node, mut max_set) = (0u64, 0u64, 0u32, 0u32);
    let mut imaged = std::collections::BTreeSet::new();
    for b in 0..g.blocks() {
        let programmed = store.dev.block_status(BlockId(b)).programmed_pages;
        pages += u64::from((programmed + 1).min(g.pages_per_block()));
        for page in 0..programmed {
            let bytes = store.dev.peek_page(g.ppn(BlockId(b), page));
            let (header, _) =
                PageHeader::read_page(bytes.bytes().expect("programmed")).expect("header");
            max_seq = max_seq.max(header.seq);
            max_node = max_node.max(header.node.0);
            max_set = max_set.max(header.tag.set);
            if header.kind == PageKind::Node {
                imaged.insert(header.node);
            }
        }
    }
    assert!(store.dev.counters().reads.metadata > 0);
    let boot = store.reboot().expect("boot again");
    let live = store.live_ids().count() as u64;
    assert_eq!(boot.pages_read, pages);
    assert_eq!(boot.live_nodes, live);
    assert_eq!(boot.garbage_nodes, imaged.len() as u64 - live);
    assert!(boot.garbage_nodes > 0, "the removes freed nodes");
    assert_eq!(store.ram.seq, max_seq + 1);
    assert_eq!(store.ram.next_node, max_node + 1, "node ids carry on");
    assert_eq!(store.ram.next_set, max_set + 1, "set ids carry on");
    assert!(max_set > 0);
}

fn no_index(dev: NandDevice<PageBytes>) -> String {
    match NodeStore::open(dev, Ipl::default()) {
        Err(NandIndexError::NoIndex { detail }) => detail,
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a tree found"),
    }
}

/// A boot finds a root only in a node image marked with a root epoch (1 or more): an
/// erased part, or one whose only node image is not marked, holds no tree.
#[test]
fn a_boot_without_a_marked_root_finds_no_tree() {
    assert_eq!(
        no_index(small_device(4)),
        "no node on flash is marked as a root (0 node images found)"
    );
    let mut dev = small_device(4);
    let leaf = Node::empty_leaf();
    assert_eq!(leaf.root_epoch, 0);
    let mut payload = Vec::new();
    leaf.encode(&mut payload);
    let header = PageHeader {
        kind: PageKind::Node,
        node: NodeId(0),
        seq: 1,
        tag: BlockTag {
            set: 0,
            set_blocks: 1,
            position: 0,
            base_log_pages: 0,
        },
    };
    let mut page = Vec::new();
    header.write_page(&payload, &mut page);
    let ppn = dev.geometry().ppn(BlockId(0), 0);
    dev.program_page(ppn, Stamp::default(), &page, Cause::Metadata)
        .expect("an erased page");
    assert_eq!(
        no_index(dev),
        "no node on flash is marked as a root (1 node images found)"
    );
}

/// A placement for the merge tests: sets of two blocks with one log page; a full log area
/// merges for `reason`, and the merge writes blocks with `merge_log_pages` log pages,
/// spread over two blocks or not. A merge shape unlike the set's is what shows that the new
/// blocks take the merge's shape, not their old block's.
struct Shaped {
    reason: Overflow,
    merge_log_pages: u32,
    spread: bool,
}

impl Placement for Shaped {
    fn name(&self) -> &'static str {
        "shaped"
    }
    fn new_set(&self, _view: &StoreView) -> SetShape {
        SetShape {
            blocks: 2,
            log_pages: 1,
        }
    }
    fn place(&self, set: &SetView<'_>) -> Option<usize> {
        set.blocks.iter().position(|b| b.has_room_for_data())
    }
    fn on_log_full(&self, _block: &BlockView) -> Overflow {
        self.reason
    }
    fn merge_shape(&self, _block: &BlockView, _reason: Overflow, _view: &StoreView) -> MergeShape {
        MergeShape {
            log_pages: self.merge_log_pages,
            spread: self.spread,
        }
    }
}

/// A two-level tree of three nodes (two leaves, then their root) in a set's first block,
/// then two log flushes of the first leaf: the second finds the one-page log area full and
/// merges.
fn merged(policy: Shaped) -> (NodeStore<Shaped>, [NodeId; 3]) {
    let mut store = NodeStore::format(small_device(16), policy).expect("erased");
    let ids = [
        store.allocate_id(),
        store.allocate_id(),
        store.allocate_id(),
    ];
    for (i, &id) in ids[..2].iter().enumerate() {
        let mut leaf = Node::empty_leaf();
        leaf.keys.push(i as u64 * 10);
        leaf.values.push(1);
        leaf.next = if i == 0 { ids[1] } else { NodeId::NONE };
        store.write_new(id, &leaf).expect("write");
    }
    let root = Node {
        level: 1,
        root_epoch: 1,
        keys: vec![10],
        children: vec![ids[0], ids[1]],
        ..Node::default()
    };
    store.write_new(ids[2], &root).expect("write");
    assert!(
        ids.iter()
            .all(|&id| store.loc(id).block == store.loc(ids[0]).block)
    );
    let mut records = Vec::new();
    crate::nand::log::LogRecord::Insert { key: 7, value: 70 }.encode(&mut records);
    assert_eq!(
        store.flush_log(ids[0], &records).expect("flush"),
        Flushed::LogPage
    );
    records.clear();
    crate::nand::log::LogRecord::Insert { key: 8, value: 80 }.encode(&mut records);
    assert_eq!(
        store.flush_log(ids[0], &records).expect("flush"),
        Flushed::Merged
    );
    store.check().expect("consistent after the merge");
    (store, ids)
}

/// The run's merges, for room, at the limit and spread, then the set's for room and at the
/// limit.
fn merge_counts(store: &NodeStore<Shaped>) -> [u64; 6] {
    let (s, view) = (store.stats(), store.store_view());
    [
        s.merges,
        s.merges_for_room,
        s.merges_at_limit,
        s.spread_merges,
        view.merges_for_room,
        view.merges_at_limit,
    ]
}

/// The blocks of the store's (first) set, in order.
fn only_set(store: &NodeStore<Shaped>) -> Vec<BlockId> {
    let set = store.ram.sets.values().next().expect("one set");
    set.blocks.clone()
}

/// A merge for room that spreads: counted by its reason in the run's and the set's
/// counts, its two new blocks tagged with the merge's log area, the second placed at the
/// end of the set; the set found again the same at boot.
#[test]
fn a_merge_is_counted_by_its_reason_and_tags_its_blocks_with_its_shape() {
    let (mut store, ids) = merged(Shaped {
        reason: Overflow::MergeForRoom,
        merge_log_pages: 3,
        spread: true,
    });
    assert_eq!(merge_counts(&store), [1, 1, 0, 1, 1, 0]);
    let set = only_set(&store);
    assert_eq!(set.len(), 3, "the spread added a block");
    let tags: Vec<BlockTag> = set
        .iter()
        .map(|b| store.ram.blocks[b.index()].tag)
        .collect();
    assert_eq!(
        tags.iter().map(|t| t.position).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(
        tags.iter().map(|t| t.base_log_pages).collect::<Vec<_>>(),
        [3, 1, 3],
        "the merged blocks take the merge's log area"
    );
    let targets = [set[0], set[2]];
    for b in targets {
        assert_eq!(store.ram.blocks[b.index()].log_area, 3);
    }
    let mut node = Node::default();
    store.peek(ids[0], &mut node).expect("peek");
    assert_eq!(
        node.keys,
        [0, 7, 8],
        "the flushed records reached the new image"
    );
    store.reboot().expect("boot");
    assert_eq!(
        only_set(&store),
        targets,
        "the set found again from the tags: its blocks that hold pages, in order"
    );
    for b in targets {
        assert_eq!(store.ram.blocks[b.index()].log_area, 3);
    }
}

#[test]
fn a_merge_at_the_limit_is_counted_as_such_and_keeps_the_set_size() {
    let (store, _) = merged(Shaped {
        reason: Overflow::MergeAtLimit,
        merge_log_pages: 1,
        spread: false,
    });
    assert_eq!(merge_counts(&store), [1, 0, 1, 0, 0, 1]);
    assert_eq!(only_set(&store).len(), 2);
}
