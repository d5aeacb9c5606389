//! The storage manager's checker shown to fire on deliberately corrupted RAM bookkeeping:
//! one corruption per condition it checks.
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
