//! The buffer unit's state transitions of Fig. 4 (GRR paper section 3.4), each arrow caused
//! on a real pool over a real storage manager, with the pool's own consistency check (flash
//! image + log sector = buffered image, bytes add up) after every step.

use super::*;
use crate::nand::storage::ipl::Ipl;
use flashkit_core::Geometry;
use flashkit_device::{FlashDevice, NandDevice, PageBytes};

const PAGE: u32 = 512;
const SECTOR: u32 = 128;

fn store() -> NodeStore<Ipl> {
    let geometry = Geometry::builder()
        .page_size_bytes(PAGE)
        .pages_per_block(16)
        .oob_bytes(16)
        .blocks(16)
        .build()
        .expect("valid geometry");
    NodeStore::format(NandDevice::<PageBytes>::new(geometry), Ipl::default()).expect("erased")
}

/// Room for two images and two log sectors: the smallest buffer the pool accepts.
fn pool<R: Replacement>(policy: R) -> BufferPool<R> {
    let cfg = BufferConfig {
        capacity_bytes: 2 * u64::from(PAGE + SECTOR),
        window: 1.0,
        sector_bytes: SECTOR,
    };
    BufferPool::new(policy, cfg, PAGE).expect("valid buffer")
}

fn insert(key: u64) -> LogRecord {
    LogRecord::Insert {
        key,
        value: key * 10,
    }
}

fn ok<R: Replacement>(pool: &BufferPool<R>, store: &NodeStore<Ipl>) {
    pool.check(store)
        .unwrap_or_else(|e| panic!("pool check: {e}"));
}

fn programs(store: &NodeStore<Ipl>) -> u64 {
    store.device().counters().programs.total()
}

/// New node -> Dirty; written -> Clean; update -> SemiClean; more updates, a full sector
/// flushed -> still SemiClean; everything flushed -> Clean; a clean unit evicted costs no
/// write; a read miss brings the node back Clean.
#[test]
fn fig4_new_dirty_clean_semiclean_and_back() {
    let (mut store, mut pool) = (store(), pool(CfSemi));
    let a = store.allocate_id();
    pool.create(a, &Node::empty_leaf(), &mut store)
        .expect("create");
    assert_eq!(
        pool.state(a),
        Some(UnitState::Dirty),
        "a new node is all change"
    );
    assert!(!store.is_on_flash(a));
    ok(&pool, &store);

    pool.flush_all(&mut store).expect("flush");
    assert_eq!(
        pool.state(a),
        Some(UnitState::Clean),
        "its image written whole"
    );
    assert_eq!(programs(&store), 1);

    pool.modify(a, insert(1), &mut store).expect("modify");
    assert_eq!(
        pool.state(a),
        Some(UnitState::SemiClean),
        "clean + update = semi-clean"
    );
    assert_eq!(programs(&store), 1, "an update only reaches the log sector");
    ok(&pool, &store);

    // A 128-byte sector holds seven 17-byte inserts; the eighth flushes the full sector to a
    // log page and starts a new one: the unit stays semi-clean.
    for key in 2..=8 {
        pool.modify(a, insert(key), &mut store).expect("modify");
        assert_eq!(pool.state(a), Some(UnitState::SemiClean));
    }
    assert_eq!(pool.stats().full_sector_flushes, 1);
    assert_eq!(programs(&store), 2, "one log page");
    ok(&pool, &store);

    pool.flush_all(&mut store).expect("flush");
    assert_eq!(
        pool.state(a),
        Some(UnitState::Clean),
        "the sector reached flash"
    );
    assert_eq!(programs(&store), 3);
    ok(&pool, &store);

    pool.evict(Victim::Evict(a), NIL, &mut store)
        .expect("evict");
    assert_eq!(pool.state(a), None);
    assert_eq!(programs(&store), 3, "a clean unit leaves without a write");
    assert_eq!(pool.stats().clean_evictions, 1);

    let keys = pool.get(a, &mut store).expect("read").keys.clone();
    assert_eq!(
        keys,
        (1..=8).collect::<Vec<_>>(),
        "image and log page applied"
    );
    assert_eq!(
        pool.state(a),
        Some(UnitState::Clean),
        "a read miss -> clean"
    );
    assert_eq!(pool.stats().misses, 1);
    ok(&pool, &store);
}

/// The semi-clean state's own arrows: its clean part (the image) evicted -> Dirty, holding
/// only the log sector; a reference re-reads the image and applies the sector again ->
/// SemiClean; a dirty unit evicted flushes its sector to a log page and leaves.
#[test]
fn fig4_semiclean_gives_up_its_clean_part_then_comes_back() {
    let (mut store, mut pool) = (store(), pool(CfSemi));
    let a = store.allocate_id();
    pool.create(a, &Node::empty_leaf(), &mut store)
        .expect("create");
    pool.flush_all(&mut store).expect("flush");
    pool.modify(a, insert(5), &mut store).expect("modify");
    assert_eq!(pool.state(a), Some(UnitState::SemiClean));
    let used = pool.used_bytes();

    pool.evict(Victim::DropImage(a), NIL, &mut store)
        .expect("drop");
    assert_eq!(
        pool.state(a),
        Some(UnitState::Dirty),
        "only the changes are left"
    );
    assert!(pool.resident(a).is_none());
    assert_eq!(
        pool.used_bytes(),
        used - u64::from(PAGE),
        "a page freed, changes kept"
    );
    assert_eq!(
        programs(&store),
        1,
        "dropping the clean part writes nothing"
    );
    ok(&pool, &store);

    let before = pool.stats();
    assert_eq!(pool.get(a, &mut store).expect("read").keys, vec![5]);
    assert_eq!(pool.stats().misses, before.misses + 1, "no image: a miss");
    assert_eq!(
        pool.state(a),
        Some(UnitState::SemiClean),
        "image re-read, sector re-applied"
    );
    ok(&pool, &store);

    pool.evict(Victim::DropImage(a), NIL, &mut store)
        .expect("drop");
    pool.evict(Victim::Evict(a), NIL, &mut store)
        .expect("evict");
    assert_eq!(pool.state(a), None);
    assert_eq!(
        programs(&store),
        2,
        "the dirty unit's sector became a log page"
    );
    assert_eq!(pool.stats().dirty_evictions, 1);
    assert_eq!(pool.get(a, &mut store).expect("read").keys, vec![5]);
    assert_eq!(pool.state(a), Some(UnitState::Clean));
    ok(&pool, &store);
}

/// The arrows driven by the policy itself when the buffer is full: the enhanced scheme takes
/// the clean part of the semi-clean unit (Fig. 5's clean list) and keeps its changes, where
/// CFLRU, for which a semi-clean unit is dirty, writes the new node out first.
#[test]
fn a_full_buffer_takes_the_semiclean_units_clean_part_first() {
    for (policy, drops, writes) in [
        (AnyReplacement::CfSemi, 1, 0),
        (AnyReplacement::Cflru, 0, 1),
    ] {
        let (mut store, mut pool) = (store(), pool(policy));
        let a = store.allocate_id();
        pool.create(a, &Node::empty_leaf(), &mut store)
            .expect("create");
        pool.flush_all(&mut store).expect("flush");
        let b = store.allocate_id();
        pool.create(b, &Node::empty_leaf(), &mut store)
            .expect("create");
        pool.modify(a, insert(7), &mut store).expect("modify");
        // LRU order: b (new, dirty), a (semi-clean). A third node does not fit.
        let c = store.allocate_id();
        pool.create(c, &Node::empty_leaf(), &mut store)
            .expect("create");
        let s = pool.stats();
        assert_eq!(
            (s.image_drops, s.new_node_evictions),
            (drops, writes),
            "{policy}"
        );
        if drops == 1 {
            assert_eq!(pool.state(a), Some(UnitState::Dirty), "{policy}");
            assert_eq!(pool.state(b), Some(UnitState::Dirty), "{policy}: b stays");
        } else {
            assert_eq!(
                pool.state(b),
                None,
                "{policy}: the coldest unit, b, was written"
            );
            assert_eq!(pool.state(a), Some(UnitState::SemiClean), "{policy}");
        }
        ok(&pool, &store);
    }
}
