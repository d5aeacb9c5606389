//! The invariant checker (`walk`) shown to fire on a deliberately corrupted tree: one
//! corruption per condition it checks, each on a healthy three-level tree. And the state
//! hash shown to change with every part of the state it covers.
//!
//! Not covered: "over capacity". `peek_node` decodes at most `inner_capacity` children of
//! an inner node (all its region holds), so no flash content makes the check fire.

use super::*;
use flashkit_device::nor::NorGeometry;

/// A healthy tree of three levels: 1,500 keys inserted in a scrambled order, then every
/// seventh updated.
fn busy_tree() -> MuTree {
    let nor = NorDevice::new(NorGeometry::new(4096, 16).expect("valid geometry"));
    let mut t = MuTree::create(nor, MuTreeConfig::default()).expect("create");
    for i in 0..1500u32 {
        t.put(i * 7919 % 1500 * 10, i).expect("insert");
    }
    for i in (0..1500u32).step_by(7) {
        t.put(i * 10, i + 1).expect("update");
    }
    assert!(t.height() >= 3, "height {}", t.height());
    t.check_invariants().expect("a healthy tree passes");
    t
}

fn violation(t: &MuTree) -> String {
    t.check_invariants().expect_err("the corruption is caught")
}

/// Overwrite words on flash with any values, as a fault would: the block is read, erased and
/// programmed again with `words` at `addr` (a program alone can only clear bits).
fn overwrite(t: &mut MuTree, addr: WordAddr, words: &[u16]) {
    let g = *t.nor.geometry();
    let block = g.block_of(addr);
    let start = g.block_start(block);
    let mut image = t.nor.peek_words(start, g.words_per_block()).to_vec();
    let at = (addr.0 - start.0) as usize;
    image[at..at + words.len()].copy_from_slice(words);
    t.nor.erase(block, Cause::Metadata).expect("erase");
    t.nor
        .program_image(start, &image, Cause::Metadata)
        .expect("program");
}

/// Overwrite the leaf in `page` from its pair `i` on with `words` (4 words a pair).
fn overwrite_pairs(t: &mut MuTree, page: u16, i: u32, words: &[u16]) {
    let (offset, _) = t.region(0, t.height);
    let addr = t.page_addr(page).offset(offset + 4 * i);
    overwrite(t, addr, words);
}

fn pair_words(key: Key, value: Value) -> [u16; 4] {
    [
        (key >> 16) as u16,
        key as u16,
        (value >> 16) as u16,
        value as u16,
    ]
}

/// A leaf in the middle of the tree: its page, pairs and upper bound (the next leaf's
/// first key), and the last key of the leaf before it.
fn middle_leaf(t: &mut MuTree) -> (u16, Pairs, Key, Key) {
    let (page, upper) = t.descend(7500);
    let Node::Leaf(pairs) = t.peek_node(page, 0) else {
        panic!("level 0 is a leaf");
    };
    let first = pairs
        .first()
        .expect("a leaf in a tree of height 3 holds keys")
        .0;
    let contents = t.walk().expect("healthy");
    let before = contents.partition_point(|p| p.0 < first);
    let previous = contents[before - 1].0;
    assert!(pairs.len() >= 2);
    (page, pairs, upper.expect("not the last leaf"), previous)
}

#[test]
fn catches_a_valid_count_that_disagrees_with_the_tree() {
    let mut t = busy_tree();
    let (page, ..) = middle_leaf(&mut t);
    let b = t.block_of(page);
    t.valid[b] += 1;
    let e = violation(&t);
    assert!(e.contains("valid-page counts"), "{e}");
}

#[test]
fn catches_two_keys_swapped_inside_a_leaf() {
    let mut t = busy_tree();
    let (page, pairs, ..) = middle_leaf(&mut t);
    // Both keys stay within the leaf's bounds: only their order is wrong.
    let (a, b) = (pairs[0], pairs[1]);
    overwrite_pairs(&mut t, page, 0, &pair_words(b.0, b.1));
    overwrite_pairs(&mut t, page, 1, &pair_words(a.0, a.1));
    let e = violation(&t);
    assert!(e.contains("keys are not strictly increasing"), "{e}");
}

#[test]
fn catches_a_leaf_key_at_its_upper_separator() {
    let mut t = busy_tree();
    let (page, pairs, upper, _) = middle_leaf(&mut t);
    let last = pairs.len() as u32 - 1;
    overwrite_pairs(&mut t, page, last, &pair_words(upper, 0));
    let e = violation(&t);
    assert!(
        e.contains(&format!("leaf in page {page} holds a key outside")),
        "{e}"
    );
}

#[test]
fn catches_a_leaf_key_below_its_lower_separator() {
    let mut t = busy_tree();
    let (page, _, _, previous) = middle_leaf(&mut t);
    // The previous leaf's last key is below this leaf's lower separator.
    overwrite_pairs(&mut t, page, 0, &pair_words(previous, 0));
    let e = violation(&t);
    assert!(
        e.contains(&format!("leaf in page {page} holds a key outside")),
        "{e}"
    );
}

#[test]
fn catches_an_empty_leaf_below_the_root() {
    let mut t = busy_tree();
    let (page, pairs, ..) = middle_leaf(&mut t);
    let erased = vec![ERASED_WORD; 4 * pairs.len()];
    overwrite_pairs(&mut t, page, 0, &erased);
    let e = violation(&t);
    assert!(e.contains(&format!("leaf in page {page} is empty")), "{e}");
}

#[test]
fn catches_no_free_block_kept_for_collection() {
    let mut t = busy_tree();
    t.free_blocks.clear();
    let e = violation(&t);
    assert_eq!(e, "no free block is kept for garbage collection");
}

#[test]
fn catches_the_active_block_or_a_block_twice_on_the_free_list() {
    let mut t = busy_tree();
    let active = t.active;
    t.free_blocks.push(active);
    let e = violation(&t);
    assert!(
        e.starts_with(&format!("free block {active} is the active block")),
        "{e}"
    );
    let mut t = busy_tree();
    let free = t.free_blocks[0];
    t.free_blocks.push(free);
    let e = violation(&t);
    assert!(e.contains("listed twice"), "{e}");
}

#[test]
fn catches_a_free_block_with_a_written_page() {
    let mut t = busy_tree();
    let used = (0..t.valid.len() as u32)
        .find(|&b| t.valid[b as usize] > 0 && b != t.active)
        .expect("a sealed block");
    t.free_blocks.push(used);
    let e = violation(&t);
    assert!(e.starts_with(&format!("free block {used} has page")), "{e}");
}

fn state_hash(t: &MuTree) -> u64 {
    let mut hasher = StateHasher::new();
    t.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the mu-tree's state reaches its state hash, each in a place of its own:
/// the flash (through the device's own hash, here its counters), and each field RAM keeps.
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    let base = state_hash(&busy_tree());
    type Change = (&'static str, fn(&mut MuTree));
    let changes: Vec<Change> = vec![
        ("the flash", |t| {
            t.nor.read(WordAddr(0), Cause::Host);
        }),
        ("the root", |t| t.root += 1),
        ("the height", |t| t.height += 1),
        ("the sequence", |t| t.seq += 1),
        ("the active block", |t| t.active += 1),
        ("the next page", |t| t.next_page += 1),
        ("a free block taken", |t| {
            t.free_blocks.pop();
        }),
        ("which blocks are free", |t| t.free_blocks[0] += 1),
        ("a block's valid pages", |t| t.valid[1] += 1),
        ("the cause charged", |t| t.cause = Cause::Gc),
        ("pages written", |t| t.counts[C_PAGES] += 1),
        ("splits", |t| t.counts[C_SPLITS] += 1),
        ("borrows", |t| t.counts[C_BORROWS] += 1),
        ("collections", |t| t.counts[C_GC_RUNS] += 1),
        ("pages collected", |t| t.counts[C_GC_PAGES] += 1),
        ("the height counter", |t| t.counts[C_HEIGHT] += 1),
        ("the greatest height", |t| t.counts[C_MAX_HEIGHT] += 1),
    ];
    let mut seen = vec![base];
    for (part, change) in changes {
        let mut t = busy_tree();
        assert_eq!(state_hash(&t), base, "the same writes, the same hash");
        change(&mut t);
        let h = state_hash(&t);
        assert!(
            !seen.contains(&h),
            "{part} does not reach the state hash on its own"
        );
        seen.push(h);
    }
}

fn nor(words_per_block: u32, blocks: u32) -> NorDevice {
    NorDevice::new(NorGeometry::new(words_per_block, blocks).expect("valid geometry"))
}

/// The page size is a power of two from 128 B to 8 KiB that tiles the blocks, on three
/// blocks or more, with page numbers that fit 16 bits; each refusal says which.
#[test]
fn the_page_size_is_checked_at_each_bound() {
    let refusal =
        |nor: NorDevice, page_bytes: u32| match MuTree::create(nor, MuTreeConfig { page_bytes }) {
            Ok(_) => String::new(),
            Err(IndexError::Config { field, reason, .. }) => {
                assert_eq!(field, "page size");
                reason
            }
            Err(other) => panic!("{other:?}"),
        };
    for page in [128, 8192] {
        assert_eq!(refusal(nor(4096, 3), page), "", "{page} B");
    }
    for page in [64, 16384, 384] {
        assert_eq!(
            refusal(nor(4096, 3), page),
            format!("{page} B must be a power of two from 128 B to 8 KiB")
        );
    }
    let untiled = "1024 B pages must tile 256-word blocks, and the flash needs 3 blocks or more";
    assert_eq!(refusal(nor(256, 8), 1024), untiled);
    let few = "512 B pages must tile 4096-word blocks, and the flash needs 3 blocks or more";
    assert_eq!(refusal(nor(4096, 2), 512), few);
    // 65,535 is the erased word, no page: 65,534 pages of 64 words are the most.
    assert_eq!(refusal(nor(64 * 2, 32_767), 128), "");
    assert_eq!(
        refusal(nor(64 * 3, 21_845), 128),
        "65535 pages exceed 16-bit page numbers"
    );
}

/// Node sizes as the paper's page layout gives them: on a 512-byte page a leaf holds 31
/// pairs; a two-level tree's root takes half the page (43 children), a three-level tree's
/// upper levels a quarter each (22).
#[test]
fn node_capacities_follow_the_page_layout() {
    let t = MuTree::create(nor(4096, 3), MuTreeConfig::default()).expect("create");
    assert_eq!(t.leaf_capacity(), 31);
    assert_eq!(t.region(0, 1), (3, 125));
    assert_eq!(t.region(1, 2), (128, 128));
    assert_eq!(t.inner_capacity(1, 2), 43);
    assert_eq!((t.region(1, 3), t.region(2, 3)), ((128, 64), (192, 64)));
    assert_eq!((t.inner_capacity(1, 3), t.inner_capacity(2, 3)), (22, 22));
    assert_eq!(t.region(3, 4), (224, 32));
    assert_eq!(t.inner_capacity(2, 4), 11);
}

/// Creating a tree erases whatever the flash held (as metadata work) and starts empty.
#[test]
fn create_erases_a_used_flash() {
    let old = busy_tree().into_device();
    let used = (0..old.geometry().blocks())
        .filter(|&b| {
            let g = old.geometry();
            old.peek_words(g.block_start(BlockId(b)), g.words_per_block())
                .iter()
                .any(|&w| w != ERASED_WORD)
        })
        .count() as u64;
    let before = old.counters().erases.metadata;
    let mut t = MuTree::create(old, MuTreeConfig::default()).expect("create");
    assert_eq!(t.device().counters().erases.metadata - before, used);
    assert_eq!(t.contents().expect("walk"), vec![]);
    assert_eq!(t.height(), 1);
    assert_eq!(t.get(10).expect("get"), None);
}

/// Updates on a small flash, the invariants checked after each: collection keeps its block
/// (a host write never takes the last free block) and moves live pages when it must.
#[test]
fn collection_always_finds_its_reserved_block() {
    let mut t = MuTree::create(nor(1024, 8), MuTreeConfig { page_bytes: 256 }).expect("create");
    for i in 0..6_000u32 {
        let key = i * 7919 % 300;
        t.put(key, i).expect("put");
        t.check_invariants()
            .unwrap_or_else(|e| panic!("after put {i}: {e}"));
    }
    let stats = t.stats();
    assert!(stats.counter("gc_runs") > 100, "{:?}", stats.counters);
    assert!(stats.counter("gc_pages_moved") > 0, "{:?}", stats.counters);
}

/// A lookup reads the descent (nothing, in a one-leaf tree) and then the leaf's keys in
/// order, two words each, up to the first key at or above the one sought, plus the value
/// if it is found: the word reads are the cost the NOR benchmarks report.
#[test]
fn a_lookup_reads_the_leaf_up_to_the_first_key_not_below_its_own() {
    let mut t = MuTree::create(nor(1024, 8), MuTreeConfig { page_bytes: 256 }).expect("create");
    let cap = t.leaf_capacity() as u32;
    assert_eq!(cap, 15, "(64 - 3) words of 4-word pairs");
    for k in 1..=cap {
        t.put(k * 10, k).expect("put");
    }
    assert_eq!(t.height(), 1, "one full leaf");
    let reads = |t: &mut MuTree, key: u32, want: Option<u32>| {
        let before = t.nor.counters().reads.total();
        assert_eq!(t.get(key).expect("get"), want, "{key}");
        t.nor.counters().reads.total() - before
    };
    assert_eq!(reads(&mut t, 5, None), 2, "the first key is above");
    assert_eq!(reads(&mut t, 25, None), 6, "10, 20 and 30 read");
    assert_eq!(reads(&mut t, 30, Some(3)), 8, "10, 20, 30 and the value");
    assert_eq!(reads(&mut t, 150, Some(15)), 32, "every key and the value");
    assert_eq!(
        reads(&mut t, 1000, None),
        30,
        "every key, then the leaf ends"
    );
}

/// Page sequence numbers take two words: past 65,535 writes a cold start still finds the
/// newest root and carries the numbering on.
#[test]
fn sequence_numbers_past_sixteen_bits_survive_a_cold_start() {
    let mut t = MuTree::create(nor(1024, 8), MuTreeConfig { page_bytes: 256 }).expect("create");
    let mut i = 0u32;
    while t.seq <= 70_000 {
        t.put(i * 7919 % 200, i).expect("put");
        i += 1;
    }
    let (seq, want) = (t.seq, t.contents().expect("contents"));
    let (mut t, _) = MuTree::open(t.into_device(), MuTreeConfig { page_bytes: 256 }).expect("open");
    assert_eq!(t.seq, seq);
    assert_eq!(t.contents().expect("contents"), want);
    t.put(7, 7).expect("put");
    assert!(t.seq > seq, "numbering carries on");
}

/// A range query reads each leaf it needs, keys and values two words each, stopping at the
/// first key past the range or the leaf's end, and descends to the next leaf only when that
/// leaf's first key is in the range.
#[test]
fn a_range_query_reads_only_the_leaves_it_needs() {
    let cfg = MuTreeConfig { page_bytes: 256 };
    let reads = |t: &mut MuTree, f: &mut dyn FnMut(&mut MuTree)| {
        let before = t.nor.counters().reads.total();
        f(t);
        t.nor.counters().reads.total() - before
    };
    // One full leaf: every key and value, and no word past the leaf.
    let mut t = MuTree::create(nor(1024, 8), cfg).expect("create");
    for k in 1..=15u32 {
        t.put(k * 10, k).expect("put");
    }
    let mut out = Vec::new();
    let n = reads(&mut t, &mut |t| t.range(0, 1000, &mut out).expect("range"));
    assert_eq!(out.len(), 15);
    assert_eq!(n, 60, "15 keys and 15 values");
    // Two leaves (10..=80 and 90..=160): a range inside the first reads nothing of the second.
    t.put(160, 16).expect("put");
    assert_eq!(t.height(), 2);
    let get = reads(&mut t, &mut |t| {
        assert_eq!(t.get(10).expect("get"), Some(1))
    });
    let descent = get - 4;
    out.clear();
    let n = reads(&mut t, &mut |t| t.range(10, 30, &mut out).expect("range"));
    assert_eq!(out, [(10, 1), (20, 2), (30, 3)]);
    assert_eq!(n, descent + 14, "keys 10 to 40, values 10 to 30");
    out.clear();
    t.range(10, 90, &mut out).expect("range");
    assert_eq!(out.len(), 9, "the second leaf's first key is in range");
    assert_eq!(t.name(), "mutree");
}

/// An update writes the root's page last: a power cut after a split wrote a piece but before
/// the new root leaves a newer page that names no root, and a cold start finds the tree as
/// it was before the update.
#[test]
fn a_cold_start_ignores_a_newer_page_that_is_not_a_root() {
    let mut t = busy_tree();
    let (root, height, want) = (t.root, t.height, t.contents().expect("contents"));
    let piece = Node::Leaf(smallvec::smallvec![(5, 50), (6, 60)]);
    let spec = PageSpec {
        top: 0,
        height,
        root: false,
        right: NO_PAGE,
        extra: &[],
        old: &[],
    };
    let orphan = t.write_page(&[piece], spec).expect("a free page");
    let (t, _) = MuTree::open(t.into_device(), MuTreeConfig::default()).expect("open");
    assert_eq!(
        (t.root, t.height),
        (root, height),
        "the root before the cut"
    );
    assert_ne!(t.root, orphan);
    assert_eq!(t.contents().expect("contents"), want);
}

/// Keys past 16 bits keep both words at every level: separators in inner nodes included.
#[test]
fn wide_keys_route_through_every_level() {
    let nor = NorDevice::new(NorGeometry::new(4096, 16).expect("valid geometry"));
    let mut t = MuTree::create(nor, MuTreeConfig::default()).expect("create");
    let key = |i: u32| i * 2_000_003 % 1_500 * 2_000_003;
    for i in 0..1500u32 {
        t.put(key(i), i).expect("insert");
    }
    assert!(t.height() >= 3, "height {}", t.height());
    t.check_invariants().expect("invariants");
    for i in (0..1500u32).step_by(37) {
        assert_eq!(t.get(key(i)).expect("get"), Some(i), "{}", key(i));
    }
    let mut want: Vec<(u32, u32)> = (0..1500).map(|i| (key(i), i)).collect();
    want.sort_unstable();
    assert_eq!(t.contents().expect("contents"), want);
}
/// Putting a key's current value again writes nothing (it reads the path only): no page,
/// no word programmed; a new value writes the leaf's path once.
#[test]
fn putting_the_same_value_again_writes_nothing() {
    let mut t = busy_tree();
    let programs = |t: &MuTree| t.nor.counters().programs.total();
    let value = t.get(70).expect("get").expect("key 70 is in the tree");
    let (before, seq) = (programs(&t), t.seq);
    assert!(!t.put(70, value).expect("put"), "not a new key");
    assert_eq!((programs(&t), t.seq), (before, seq), "nothing programmed");
    assert!(!t.put(70, value + 1).expect("put"), "an update");
    assert_eq!(t.seq, seq + 1, "one page written");
    assert_eq!(t.get(70).expect("get"), Some(value + 1));
}

/// The room reserved before an update covers what it writes: inserts that grow a tree of
/// 256-byte pages to four levels or more, then removals that empty it, each write no more pages
/// than `pages_per_update` (on a flash large enough that no collection runs at all).
#[test]
fn no_update_writes_more_pages_than_it_reserves() {
    let nor = nor(4096, 256);
    let mut t = MuTree::create(nor, MuTreeConfig { page_bytes: 256 }).expect("create");
    let mut worst = 0;
    let mut step = |t: &mut MuTree, insert: bool, key: Key| {
        let (reserved, seq) = (t.pages_per_update(), t.seq);
        if insert {
            t.put(key, key).expect("put");
        } else {
            assert_eq!(t.remove(key).expect("remove"), Some(key));
        }
        let written = t.seq - seq;
        assert!(
            written <= reserved,
            "{written} pages written, {reserved} reserved"
        );
        worst = worst.max(written);
    };
    for i in 0..1_500u32 {
        step(&mut t, true, i * 7919 % 1_500);
    }
    assert!(t.height() >= 4, "height {}", t.height());
    for i in 0..1_500u32 {
        step(&mut t, false, i * 7919 % 1_500);
    }
    assert_eq!(t.height(), 1);
    assert_eq!(t.stats().counter("gc_runs"), 0);
    assert!(worst >= 3, "splits write their pages: {worst}");
}
/// Collection runs before an update exactly when fewer pages are free than the update
/// may write, two per level and four more: the rest of the active block, and every free
/// block but the one kept for collection.
#[test]
fn collection_runs_exactly_when_an_update_lacks_its_reserved_pages() {
    let mut t = MuTree::create(nor(1024, 8), MuTreeConfig { page_bytes: 256 }).expect("create");
    let mut runs = [0u32; 2];
    for i in 0..3_000u32 {
        let free = t.pages_per_block - t.next_page.min(t.pages_per_block)
            + (t.free_blocks.len() as u32 - 1) * t.pages_per_block;
        let short = free < 2 * t.height() + 4;
        let before = t.counts[C_GC_RUNS];
        t.put(i * 7919 % 400, i).expect("put");
        let collected = t.counts[C_GC_RUNS] > before;
        assert_eq!(
            collected,
            short,
            "put {i}: {free} pages free, height {}",
            t.height()
        );
        runs[usize::from(collected)] += 1;
    }
    assert!(t.height() >= 3, "height {}", t.height());
    assert!(runs[1] > 50, "updates that collected: {runs:?}");
}

/// A tree of 128-byte pages holds paths of five levels at most (a level's node takes half
/// the words of the one above, down to 4): the insert that would split a five-level root
/// is refused, and the tree keeps every key inserted before it, intact.
#[test]
fn a_root_split_past_the_highest_path_a_page_holds_is_refused() {
    let mut t = MuTree::create(nor(4096, 16), MuTreeConfig { page_bytes: 128 }).expect("create");
    assert_eq!(t.max_height(), 5);
    let mut model = std::collections::BTreeMap::new();
    let error = (0..20_000u32)
        .find_map(|i| {
            let key = i * 7919 % 20_000;
            match t.put(key, i) {
                Ok(_) => {
                    model.insert(key, i);
                    None
                }
                Err(e) => Some(e.to_string()),
            }
        })
        .expect("the tree fills");
    assert!(
        error.contains("a 6-level path no longer fits a 128-byte page"),
        "{error}"
    );
    assert_eq!(t.height(), 5);
    t.check_invariants().expect("intact");
    let want: Vec<(Key, Value)> = model.into_iter().collect();
    assert_eq!(t.contents().expect("walk"), want);
}

/// Keys inserted in ascending order split the root at its right edge; when its halves,
/// cut to the size of a node one level lower, make more pieces than a root one level
/// higher holds, the insert is refused (128-byte pages: the root of a 4-level tree
/// splitting into 3 pieces), and the tree keeps every key inserted before it.
#[test]
fn a_root_split_into_more_pieces_than_a_root_holds_is_refused() {
    let mut t = MuTree::create(nor(4096, 16), MuTreeConfig { page_bytes: 128 }).expect("create");
    let mut inserted = 0;
    let error = loop {
        match t.put(inserted, inserted) {
            Ok(_) => inserted += 1,
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        error.contains(
            "the root split into 3 nodes, more than a 5-level root holds in a 128-byte page"
        ),
        "{error}"
    );
    assert_eq!((inserted, t.height()), (215, 4));
    t.check_invariants().expect("intact");
    let want: Vec<(Key, Value)> = (0..inserted).map(|k| (k, k)).collect();
    assert_eq!(t.contents().expect("walk"), want);
}
