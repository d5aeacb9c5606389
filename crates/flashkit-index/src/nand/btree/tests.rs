//! The tree's invariant checker shown to fire on a deliberately corrupted tree: one
//! corruption per condition it checks, each on a healthy three-level tree. A node is
//! corrupted in its buffered image, which the checker reads before flash. And the tree's
//! state hash shown to change with every part of the state it covers.

use super::*;
use crate::nand::buffer::Lru;
use crate::nand::storage::ipl::Ipl;
use flashkit_core::Geometry;

/// A tree over a fresh 256-block IPL device with a buffer of `buffer_pages` pages: 2,000
/// keys inserted in a scrambled order, then every fifth removed (so leaves have borrowed and
/// merged). The storage manager's tests boot from the flash it leaves.
pub(crate) fn scrambled_tree(buffer_pages: u64) -> BTree<Ipl, Lru> {
    let geometry = Geometry::builder()
        .page_size_bytes(512)
        .pages_per_block(16)
        .oob_bytes(16)
        .blocks(256)
        .build()
        .expect("valid geometry");
    let buffer = BufferConfig {
        capacity_bytes: buffer_pages * 512,
        window: 0.5,
        sector_bytes: 128,
    };
    let mut tree =
        BTree::create(NandDevice::new(geometry), Ipl::default(), Lru, buffer).expect("create");
    for i in 0..2000u64 {
        tree.put(i * 7919 % 2000 * 10, i).expect("insert");
    }
    for i in (0..2000u64).step_by(5) {
        tree.remove(i * 10).expect("remove");
    }
    tree
}

/// A healthy tree of three levels ([`scrambled_tree`] with a 64-page buffer).
fn busy_tree() -> BTree<Ipl, Lru> {
    let tree = scrambled_tree(64);
    assert!(tree.height() >= 3, "height {}", tree.height());
    tree.check_invariants().expect("a healthy tree passes");
    tree
}

fn violation(tree: &BTree<Ipl, Lru>) -> String {
    tree.check_invariants()
        .expect_err("the corruption is caught")
}

fn node(tree: &BTree<Ipl, Lru>, id: NodeId) -> Node {
    tree.pool.node_now(id, &tree.store).expect("the node reads")
}

/// The leaves from left to right, by the leaf chain.
fn leaves(tree: &BTree<Ipl, Lru>) -> Vec<NodeId> {
    let mut id = tree.root;
    while !node(tree, id).is_leaf() {
        id = node(tree, id).children[0];
    }
    let mut out = Vec::new();
    while id != NodeId::NONE {
        out.push(id);
        id = node(tree, id).next;
    }
    out
}

/// Change a node's buffered image.
fn corrupt(tree: &mut BTree<Ipl, Lru>, id: NodeId, change: impl FnOnce(&mut Node)) {
    change(tree.pool.image_mut(id, &mut tree.store));
}

/// A leaf in the middle (with leaves on both sides) and its neighbours.
fn middle(tree: &BTree<Ipl, Lru>) -> (NodeId, NodeId, NodeId) {
    let leaves = leaves(tree);
    let i = leaves.len() / 2;
    (leaves[i - 1], leaves[i], leaves[i + 1])
}

fn fails_at(tree: &BTree<Ipl, Lru>, id: NodeId, what: &str) {
    let e = violation(tree);
    assert!(e.starts_with(&format!("{id} (level ")), "{e}");
    assert!(e.contains(what), "{e}");
}

#[test]
fn catches_a_root_whose_epoch_is_not_the_trees() {
    let mut tree = busy_tree();
    let (root, epoch) = (tree.root, tree.epoch);
    corrupt(&mut tree, root, |n| n.root_epoch = epoch + 1);
    let e = violation(&tree);
    assert!(
        e.contains(&format!("has epoch {}, the tree {epoch}", epoch + 1)),
        "{e}"
    );
}

#[test]
fn catches_a_height_that_disagrees_with_the_roots_level() {
    let mut tree = busy_tree();
    tree.height += 1;
    let e = violation(&tree);
    assert!(e.contains("the root is at level"), "{e}");
}

#[test]
fn catches_a_leaf_chain_that_skips_a_leaf() {
    let mut tree = busy_tree();
    let (left, _, right) = middle(&tree);
    corrupt(&mut tree, left, |n| n.next = right);
    let e = violation(&tree);
    assert!(
        e.contains(&format!("leaf chain: a leaf names {right} as next")),
        "{e}"
    );
}

#[test]
fn catches_a_last_leaf_that_names_a_next_leaf() {
    let mut tree = busy_tree();
    let leaves = leaves(&tree);
    let (first, last) = (leaves[0], *leaves.last().expect("a leaf"));
    corrupt(&mut tree, last, |n| n.next = first);
    let e = violation(&tree);
    assert!(
        e.contains(&format!("the last leaf names {first} as next")),
        "{e}"
    );
}

#[test]
fn contents_refuse_a_leaf_chain_that_loops() {
    let mut tree = busy_tree();
    let want = tree.contents().expect("a healthy chain").len();
    assert!(want > 0);
    let leaves = leaves(&tree);
    let (first, last) = (leaves[0], *leaves.last().expect("a leaf"));
    corrupt(&mut tree, last, |n| n.next = first);
    let e = tree.contents().expect_err("the loop is caught");
    assert!(e.contains("the leaf chain loops"), "{e}");
    // A chain that ends early is read as far as it goes, with no error.
    let mut tree = busy_tree();
    corrupt(&mut tree, first, |n| n.next = NodeId::NONE);
    let head = node(&tree, first).len();
    assert_eq!(tree.contents().expect("a short chain").len(), head);
}

#[test]
fn catches_a_stored_node_the_tree_does_not_reach() {
    let mut tree = busy_tree();
    let id = tree.store.allocate_id();
    tree.pool
        .create(id, &Node::empty_leaf(), &mut tree.store)
        .expect("create");
    let e = violation(&tree);
    assert!(e.contains("reachable nodes and stored nodes differ"), "{e}");
    assert!(e.contains(&format!("unreachable [{id}]")), "{e}");
}

#[test]
fn catches_two_keys_swapped_inside_a_leaf() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    corrupt(&mut tree, leaf, |n| n.keys.swap(0, 1));
    fails_at(&tree, leaf, "keys are not strictly increasing");
}

#[test]
fn catches_a_key_twice_inside_a_leaf() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    corrupt(&mut tree, leaf, |n| n.keys[1] = n.keys[0]);
    fails_at(&tree, leaf, "keys are not strictly increasing");
}

#[test]
fn catches_a_leaf_key_below_its_lower_bound() {
    let mut tree = busy_tree();
    let (left, leaf, _) = middle(&tree);
    // The left neighbour's last key is below this leaf's separator.
    let below = *node(&tree, left).keys.last().expect("keys");
    corrupt(&mut tree, leaf, |n| n.keys[0] = below);
    fails_at(&tree, leaf, &format!("key {below} is below the bound"));
}

#[test]
fn catches_a_leaf_key_at_its_upper_bound() {
    let mut tree = busy_tree();
    let (_, leaf, right) = middle(&tree);
    // The right neighbour's first key is at or above this leaf's upper separator.
    let above = node(&tree, right).keys[0];
    corrupt(&mut tree, leaf, |n| {
        *n.keys.last_mut().expect("keys") = above;
    });
    fails_at(&tree, leaf, &format!("key {above} is not below the bound"));
}

#[test]
fn catches_a_leaf_over_capacity() {
    let mut tree = busy_tree();
    let last = *leaves(&tree).last().expect("a leaf");
    let cap = tree.layout.leaf_capacity;
    corrupt(&mut tree, last, |n| {
        // Keys above every other key, so only the count is wrong.
        let mut key = *n.keys.last().expect("keys");
        while n.keys.len() <= cap {
            key += 1;
            n.keys.push(key);
            n.values.push(key);
        }
    });
    fails_at(&tree, last, &format!("{} keys, allowed", cap + 1));
}

#[test]
fn catches_a_leaf_under_half_full() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    let min = tree.layout.leaf_min();
    // Exactly half full is allowed.
    corrupt(&mut tree, leaf, |n| {
        n.keys.truncate(min);
        n.values.truncate(min);
    });
    tree.check_invariants()
        .expect("a leaf with the minimum of keys is sound");
    corrupt(&mut tree, leaf, |n| {
        n.keys.truncate(min - 1);
        n.values.truncate(min - 1);
    });
    fails_at(&tree, leaf, &format!("{} keys, allowed {min}..=", min - 1));
}

#[test]
fn catches_a_root_epoch_on_a_node_that_is_not_the_root() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    let epoch = tree.epoch;
    corrupt(&mut tree, leaf, |n| n.root_epoch = epoch);
    fails_at(&tree, leaf, &format!("root epoch {epoch} but not the root"));
}

#[test]
fn catches_a_leaf_missing_a_value() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    corrupt(&mut tree, leaf, |n| {
        n.values.pop();
    });
    fails_at(
        &tree,
        leaf,
        "a leaf needs one value per key and no children",
    );
}

#[test]
fn catches_a_leaf_with_a_child() {
    let mut tree = busy_tree();
    let (_, leaf, right) = middle(&tree);
    corrupt(&mut tree, leaf, |n| n.children.push(right));
    fails_at(
        &tree,
        leaf,
        "a leaf needs one value per key and no children",
    );
}

#[test]
fn catches_an_inner_root_without_keys() {
    let mut tree = busy_tree();
    let root = tree.root;
    corrupt(&mut tree, root, |n| {
        n.keys.clear();
        n.children.truncate(1);
    });
    fails_at(&tree, root, "1 children for 0 keys");
}

#[test]
fn catches_an_inner_node_missing_a_child() {
    let mut tree = busy_tree();
    let inner = node(&tree, tree.root).children[0];
    let keys = node(&tree, inner).len();
    corrupt(&mut tree, inner, |n| {
        n.children.pop();
    });
    fails_at(&tree, inner, &format!("{keys} children for {keys} keys"));
}

#[test]
fn catches_an_inner_node_with_a_value() {
    let mut tree = busy_tree();
    let inner = node(&tree, tree.root).children[0];
    corrupt(&mut tree, inner, |n| n.values.push(1));
    fails_at(&tree, inner, "an inner node has no values and no next leaf");
}

#[test]
fn catches_an_inner_node_with_a_next_leaf() {
    let mut tree = busy_tree();
    let inner = node(&tree, tree.root).children[0];
    let first = leaves(&tree)[0];
    corrupt(&mut tree, inner, |n| n.next = first);
    fails_at(&tree, inner, "an inner node has no values and no next leaf");
}

#[test]
fn catches_a_child_at_the_wrong_level() {
    let mut tree = busy_tree();
    let (_, leaf, _) = middle(&tree);
    corrupt(&mut tree, leaf, |n| n.level = 1);
    let e = violation(&tree);
    assert!(e.contains(&format!("child {leaf} is at level 1")), "{e}");
}

fn state_hash(tree: &BTree<Ipl, Lru>) -> u64 {
    let mut hasher = StateHasher::new();
    tree.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the tree's state reaches its state hash: each change below, made on top of
/// the ones before it, gives a hash not seen before (a part left out of the hash would give
/// the previous one again). The store's and the pool's own parts have their own tests; here
/// each is shown to be fed at all.
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    let mut tree = scrambled_tree(16);
    assert_eq!(
        state_hash(&tree),
        state_hash(&scrambled_tree(16)),
        "the same writes, the same hash"
    );
    type Change = (&'static str, fn(&mut BTree<Ipl, Lru>));
    let changes: Vec<Change> = vec![
        ("the store", |t| {
            t.store.allocate_id();
        }),
        ("the pool", |t| {
            let root = t.root;
            t.pool.get(root, &mut t.store).expect("the root reads");
        }),
        ("the root", |t| t.root = NodeId(t.root.0 + 1)),
        ("the epoch", |t| t.epoch += 1),
        ("the height", |t| t.height += 1),
        ("leaf splits", |t| t.stats.leaf_splits += 1),
        ("inner splits", |t| t.stats.inner_splits += 1),
        ("root splits", |t| t.stats.root_splits += 1),
        ("borrows", |t| t.stats.borrows += 1),
        ("node merges", |t| t.stats.node_merges += 1),
        ("root collapses", |t| t.stats.root_collapses += 1),
        ("restarts", |t| t.stats.restarts += 1),
    ];
    let mut seen = vec![state_hash(&tree)];
    for (part, change) in changes {
        change(&mut tree);
        let h = state_hash(&tree);
        assert!(
            !seen.contains(&h),
            "{part} does not reach the state hash on its own"
        );
        seen.push(h);
    }
}

fn device(page_bytes: u32) -> NandDevice<PageBytes> {
    let geometry = Geometry::builder()
        .page_size_bytes(page_bytes)
        .pages_per_block(4)
        .oob_bytes(16)
        .blocks(8)
        .build()
        .expect("valid geometry");
    NandDevice::new(geometry)
}

/// Node key counts are 16-bit: a 64 KiB page holds a tree, a larger one is refused by name.
#[test]
fn pages_up_to_64_kib_hold_a_tree() {
    let buffer = |page: u32| BufferConfig {
        capacity_bytes: 4 * u64::from(page),
        window: 0.5,
        sector_bytes: 128,
    };
    let page = 1 << 16;
    let mut tree =
        BTree::create(device(page), Ipl::default(), Lru, buffer(page)).expect("64 KiB pages");
    tree.put(3, 30).expect("put");
    assert_eq!(tree.get(3).expect("get"), Some(30));
    let page = 1 << 17;
    match BTree::create(device(page), Ipl::default(), Lru, buffer(page)) {
        Err(NandIndexError::Config { field, reason }) => {
            assert_eq!(field, "page size");
            assert!(reason.starts_with("131072 B pages"), "{reason}");
        }
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("128 KiB pages accepted"),
    }
}

/// Each restart is counted, and the tree found again is the same tree.
#[test]
fn restarts_are_counted() {
    let mut tree = scrambled_tree(64);
    let before = tree.tree_stats();
    assert_eq!(before.restarts, 0);
    let keys = {
        let mut out = Vec::new();
        tree.range(0, u64::MAX, &mut out).expect("range");
        out
    };
    let root = tree.root();
    for n in 1..=2 {
        let boot = tree.restart().expect("restart");
        assert_eq!(tree.tree_stats().restarts, n);
        // The buffer forgot everything; the root, read to measure the height, is all it
        // holds, and a lookup reads the rest of its path from flash.
        assert_eq!(tree.pool().used_bytes(), 512, "one page: the root");
        let misses = tree.buffer_stats().misses;
        tree.get(10).expect("get");
        assert_eq!(
            tree.buffer_stats().misses - misses,
            u64::from(tree.height() - 1),
            "the path below the root is read from flash"
        );
        assert_eq!(
            (tree.root(), boot.root),
            (root, root),
            "the same root is found"
        );
    }
    let top = node(&tree, root);
    assert_eq!(
        u32::from(top.level) + 1,
        tree.height(),
        "the root is the top level"
    );
    assert_eq!(top.root_epoch, tree.epoch);
    let mut after = Vec::new();
    tree.range(0, u64::MAX, &mut after).expect("range");
    assert_eq!(after, keys);
    assert_eq!(
        TreeStats {
            restarts: 0,
            ..tree.tree_stats()
        },
        before,
        "a restart changes no other counter"
    );
}

/// Every root split and collapse takes the next epoch, the height follows the two counts,
/// and a restart after each collapse finds the new root (the epoch is what tells it from
/// the old root's image still on flash).
#[test]
fn root_collapses_take_the_next_epoch_and_survive_a_restart() {
    let mut tree = busy_tree();
    let mut keys: Vec<u64> = tree
        .contents()
        .expect("contents")
        .into_iter()
        .map(|p| p.0)
        .collect();
    let consistent = |t: &BTree<Ipl, Lru>| {
        let s = t.stats;
        assert_eq!(u64::from(t.height()), 1 + s.root_splits - s.root_collapses);
        assert_eq!(u64::from(t.epoch), 1 + s.root_splits + s.root_collapses);
    };
    consistent(&tree);
    // Remove from both ends towards the middle, so that merges reach the root.
    let mut collapses = 0;
    while let Some(key) = if keys.len().is_multiple_of(2) {
        keys.pop()
    } else {
        (!keys.is_empty()).then(|| keys.remove(0))
    } {
        tree.remove(key).expect("remove");
        consistent(&tree);
        if tree.stats.root_collapses > collapses {
            collapses = tree.stats.root_collapses;
            let (epoch, root) = (tree.epoch, tree.root);
            tree.restart().expect("restart");
            assert_eq!(
                (tree.epoch, tree.root),
                (epoch, root),
                "the root found again"
            );
            tree.check_invariants().expect("invariants");
            let mut remaining = keys.clone();
            remaining.sort_unstable();
            let found: Vec<u64> = tree
                .contents()
                .expect("contents")
                .iter()
                .map(|p| p.0)
                .collect();
            assert_eq!(found, remaining);
        }
    }
    assert_eq!(tree.height(), 1);
    assert!(collapses >= 2, "{collapses} collapses");
    assert!(tree.contents().expect("contents").is_empty());
}

/// Many inner splits, with the new separator landing at every position of the full node
/// (before, at and after its middle): the tree stays sound, holds every key, and its
/// nodes are the ones its splits, merges and collapses made.
#[test]
fn inner_splits_at_every_position_keep_the_tree_sound() {
    let buffer = BufferConfig {
        capacity_bytes: 16 * 512,
        window: 0.5,
        sector_bytes: 128,
    };
    let device = crate::nand::storage::tests::small_device(1024);
    let mut tree = BTree::create(device, Ipl::default(), Lru, buffer).expect("create");
    let n = 60_000u64;
    for i in 0..n {
        tree.put(i * 7919 % n, i).expect("insert");
    }
    tree.check_invariants().expect("invariants");
    let keys: Vec<u64> = tree
        .contents()
        .expect("contents")
        .iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(keys, (0..n).collect::<Vec<_>>());
    let s = tree.tree_stats();
    assert!(s.inner_splits >= 60, "{s:?}");
    tree.flush().expect("flush");
    let made = 1 + s.leaf_splits + s.inner_splits + s.root_splits;
    let gone = s.node_merges + s.root_collapses;
    assert_eq!(tree.store().live_nodes(), made - gone, "{s:?}");
}
