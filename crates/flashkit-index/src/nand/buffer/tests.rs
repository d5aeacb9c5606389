//! The buffer unit's state transitions of Fig. 4 (GRR paper section 3.4), each arrow caused
//! on a real pool over a real storage manager, with the pool's own consistency check (flash
//! image + log sector = buffered image, bytes add up) after every step. And the pool's
//! state hash shown to change with every part of the state it covers.

use super::*;
use crate::nand::storage::ipl::Ipl;
use flashkit_core::StateHasher;
use flashkit_device::FlashDevice;

const PAGE: u32 = 512;
const SECTOR: u32 = 128;

/// An IPL store on 16 erased blocks of sixteen `PAGE`-byte pages.
fn store() -> NodeStore<Ipl> {
    let dev = crate::nand::storage::tests::small_device(16);
    assert_eq!(dev.geometry().page_size_bytes(), PAGE);
    NodeStore::format(dev, Ipl::default()).expect("erased")
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

/// The pool's checker shown to fire on a deliberately corrupted pool: one corruption per
/// condition it checks, each on a healthy pool holding new, clean and semi-clean units.
mod corrupted {
    use super::*;

    /// Twelve nodes with a few keys each, written out and read back through a buffer of six
    /// units, then three of them changed again (semi-clean) and a new one made (dirty).
    fn busy() -> (NodeStore<Ipl>, BufferPool<Lru>) {
        let mut store = store();
        let cfg = BufferConfig {
            capacity_bytes: 6 * u64::from(PAGE + SECTOR),
            window: 1.0,
            sector_bytes: SECTOR,
        };
        let mut pool = BufferPool::new(Lru, cfg, PAGE).expect("valid buffer");
        let ids: Vec<NodeId> = (0..12).map(|_| store.allocate_id()).collect();
        for (i, &id) in ids.iter().enumerate() {
            pool.create(id, &Node::empty_leaf(), &mut store)
                .expect("create");
            for k in 0..4 {
                pool.modify(id, insert(10 * i as u64 + k), &mut store)
                    .expect("modify");
            }
        }
        pool.flush_all(&mut store).expect("flush");
        for (i, &id) in ids.iter().enumerate().skip(9) {
            pool.modify(id, insert(10 * i as u64 + 5), &mut store)
                .expect("modify");
        }
        let new = store.allocate_id();
        pool.create(new, &Node::empty_leaf(), &mut store)
            .expect("create");
        for state in [UnitState::Clean, UnitState::SemiClean, UnitState::Dirty] {
            assert!(
                pool.lru_order()
                    .iter()
                    .any(|&u| pool.units[u as usize].state() == state),
                "a {state:?} unit"
            );
        }
        ok(&pool, &store);
        (store, pool)
    }

    /// A buffered unit in `state` (the least recently used such).
    fn unit_in(pool: &BufferPool<Lru>, state: UnitState) -> usize {
        pool.lru_order()
            .into_iter()
            .find(|&u| pool.units[u as usize].state() == state)
            .expect("a unit in that state") as usize
    }

    fn violation(pool: &BufferPool<Lru>, store: &NodeStore<Ipl>) -> String {
        pool.check(store).expect_err("the corruption is caught")
    }

    #[test]
    fn catches_a_slab_unit_missing_from_the_lru_list() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::Clean);
        // Take the unit off the list but leave it in the slab and the slot map.
        pool.unlink(u as u32);
        let e = violation(&pool, &store);
        assert!(e.contains("LRU list has"), "{e}");
    }

    #[test]
    fn catches_a_node_not_mapped_to_its_unit() {
        let (store, mut pool) = busy();
        let a = pool.units[unit_in(&pool, UnitState::Clean)].node;
        let b = pool.units[unit_in(&pool, UnitState::SemiClean)].node;
        pool.slot.swap(a.index(), b.index());
        let e = violation(&pool, &store);
        assert!(e.contains("is not mapped to its unit"), "{e}");
    }

    #[test]
    fn catches_a_byte_count_that_disagrees_with_the_units() {
        let (store, mut pool) = busy();
        pool.used -= u64::from(SECTOR);
        let e = violation(&pool, &store);
        assert!(e.contains(&format!("counted {} B", pool.used)), "{e}");
    }

    #[test]
    fn catches_a_pool_over_its_capacity() {
        let (store, mut pool) = busy();
        // The bytes add up; only the capacity is exceeded.
        pool.cfg.capacity_bytes = pool.used - 1;
        let e = violation(&pool, &store);
        assert!(e.contains(&format!("capacity {} B", pool.used - 1)), "{e}");
    }

    #[test]
    fn catches_a_unit_that_disagrees_with_the_store_about_flash() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::Clean);
        pool.units[u].on_flash = false;
        let e = violation(&pool, &store);
        assert!(
            e.contains("buffer says on flash false, the store true"),
            "{e}"
        );
    }

    #[test]
    fn catches_a_new_node_without_its_image() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::Dirty);
        assert!(!pool.units[u].on_flash);
        pool.units[u].has_image = false;
        let e = violation(&pool, &store);
        assert!(
            e.contains("a new node needs its image and no log sector"),
            "{e}"
        );
    }

    #[test]
    fn catches_a_new_node_with_a_log_sector() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::Dirty);
        insert(99).encode(&mut pool.units[u].sector);
        let e = violation(&pool, &store);
        assert!(
            e.contains("a new node needs its image and no log sector"),
            "{e}"
        );
    }

    #[test]
    fn catches_a_unit_with_neither_image_nor_log_sector() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::Clean);
        pool.units[u].has_image = false;
        let e = violation(&pool, &store);
        assert!(
            e.contains("a unit with neither image nor log sector"),
            "{e}"
        );
    }

    #[test]
    fn catches_a_log_sector_that_does_not_decode() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::SemiClean);
        pool.units[u].sector.push(0xEE);
        let e = violation(&pool, &store);
        assert!(e.contains("'s log sector: record tag: 238"), "{e}");
    }

    #[test]
    fn catches_a_buffered_image_that_differs_from_flash_plus_log() {
        let (store, mut pool) = busy();
        let u = unit_in(&pool, UnitState::SemiClean);
        pool.units[u].image.values[0] += 1;
        let e = violation(&pool, &store);
        assert!(
            e.contains("flash image plus log sector differs from the buffered image"),
            "{e}"
        );
    }
}

fn state_hash<R: Replacement>(pool: &BufferPool<R>) -> u64 {
    let mut hasher = StateHasher::new();
    pool.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the pool's state reaches its state hash: each change below, made on top of
/// the ones before it, gives a hash not seen before (a part left out of the hash would give
/// the previous one again). The pool holds two units: `a` written and updated (semi-clean,
/// the least recently used), `b` new (dirty, the most recently used).
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    let (mut store, mut pool) = (store(), pool(CfSemi));
    let a = store.allocate_id();
    pool.create(a, &Node::empty_leaf(), &mut store)
        .expect("create");
    pool.flush_all(&mut store).expect("flush");
    pool.modify(a, insert(1), &mut store).expect("modify");
    let b = store.allocate_id();
    pool.create(b, &Node::empty_leaf(), &mut store)
        .expect("create");
    assert_eq!(pool.state(a), Some(UnitState::SemiClean));
    assert_eq!(pool.state(b), Some(UnitState::Dirty));
    let (ua, ub) = (pool.slot[a.index()], pool.slot[b.index()]);
    assert_eq!((pool.mru, pool.lru), (ub, ua));

    let mut seen = vec![state_hash(&pool)];
    let mut step = |part: &str, pool: &BufferPool<CfSemi>| {
        let h = state_hash(pool);
        assert!(
            !seen.contains(&h),
            "{part} does not reach the state hash on its own"
        );
        seen.push(h);
    };
    pool.units[ua as usize].sector.push(0);
    step("a log sector's bytes", &pool);
    let last = pool.units[ua as usize].sector.len() - 1;
    pool.units[ua as usize].sector[last] = 1;
    step("a log sector's last byte", &pool);
    pool.units[ua as usize].on_flash ^= true;
    step("an image on flash", &pool);
    pool.units[ua as usize].image.keys.push(5);
    step("a buffered image", &pool);
    pool.units[ub as usize].image.values.push(5);
    step("the newest unit's image", &pool);
    pool.units[ub as usize].has_image = false;
    step("a unit without its image", &pool);
    let without = state_hash(&pool);
    pool.units[ub as usize].image.values.push(6);
    assert_eq!(
        state_hash(&pool),
        without,
        "an image the unit does not hold is not part of the state"
    );
    pool.units[ub as usize].node = NodeId(99);
    step("a unit's node", &pool);
    // The recency order, reversed.
    pool.units[ua as usize].newer = NIL;
    pool.units[ua as usize].older = ub;
    pool.units[ub as usize].newer = ua;
    pool.units[ub as usize].older = NIL;
    (pool.mru, pool.lru) = (ua, ub);
    step("the recency order", &pool);
    pool.used += 1;
    step("the bytes in use", &pool);
    type Change = (&'static str, fn(&mut BufferStats));
    let counters: [Change; 8] = [
        ("references", |s| s.references += 1),
        ("hits", |s| s.hits += 1),
        ("misses", |s| s.misses += 1),
        ("clean evictions", |s| s.clean_evictions += 1),
        ("dirty evictions", |s| s.dirty_evictions += 1),
        ("new-node evictions", |s| s.new_node_evictions += 1),
        ("image drops", |s| s.image_drops += 1),
        ("full sector flushes", |s| s.full_sector_flushes += 1),
    ];
    for (part, change) in counters {
        change(&mut pool.stats);
        step(part, &pool);
    }
}

/// The buffer's configuration at each bound: the window a fraction in [0, 1], the log
/// sector 64 B up to a page less its header, room for two nodes with their sectors.
#[test]
fn a_buffer_configuration_is_checked_at_each_bound() {
    let good = BufferConfig {
        capacity_bytes: 2 * u64::from(PAGE + SECTOR),
        window: 0.5,
        sector_bytes: SECTOR,
    };
    let field = |cfg: BufferConfig| match cfg.validate(PAGE) {
        Ok(()) => "",
        Err(NandIndexError::Config { field, .. }) => field,
        Err(other) => panic!("{other:?}"),
    };
    assert_eq!(field(good), "");
    for window in [0.0, 1.0] {
        assert_eq!(
            field(BufferConfig { window, ..good }),
            "",
            "window {window}"
        );
    }
    for window in [-0.01, 1.01, f64::NAN, f64::INFINITY] {
        assert_eq!(
            field(BufferConfig { window, ..good }),
            "window",
            "window {window}"
        );
    }
    let max_sector = PAGE - 32;
    let room = |sector_bytes: u32| 2 * u64::from(PAGE + sector_bytes);
    for sector_bytes in [64, max_sector] {
        let cfg = BufferConfig {
            sector_bytes,
            capacity_bytes: room(sector_bytes),
            ..good
        };
        assert_eq!(field(cfg), "", "sector {sector_bytes}");
    }
    for sector_bytes in [63, max_sector + 1] {
        let cfg = BufferConfig {
            sector_bytes,
            capacity_bytes: room(sector_bytes),
            ..good
        };
        assert_eq!(field(cfg), "sector size", "sector {sector_bytes}");
    }
    let short = BufferConfig {
        capacity_bytes: room(SECTOR) - 1,
        ..good
    };
    assert_eq!(field(short), "buffer size");
    let Err(error) = short.validate(PAGE) else {
        panic!("accepted")
    };
    assert_eq!(
        error.to_string(),
        format!(
            "B-tree configuration: buffer size {} B holds fewer than two nodes with their log sectors ({} B)",
            room(SECTOR) - 1,
            room(SECTOR)
        )
    );
}

/// A window of counters subtracts every field.
#[test]
fn buffer_counters_since_a_snapshot_subtract_every_field() {
    let at = |n: u64| BufferStats {
        references: 100 * n,
        hits: 90 * n,
        misses: 10 * n,
        clean_evictions: 7 * n,
        dirty_evictions: 6 * n,
        new_node_evictions: 5 * n,
        image_drops: 4 * n,
        full_sector_flushes: 3 * n,
    };
    assert_eq!(at(5).since(&at(2)), at(3));
    assert_eq!(at(3).hit_ratio(), 0.9);
    assert_eq!(BufferStats::default().hit_ratio(), 0.0);
}

/// A record that fills the log sector exactly stays in it; only one that does not fit
/// flushes the sector first.
#[test]
fn a_record_that_fills_the_sector_exactly_stays_in_it() {
    let (mut store, mut pool) = (store(), pool(CfSemi));
    let a = store.allocate_id();
    pool.create(a, &Node::empty_leaf(), &mut store)
        .expect("create");
    pool.flush_all(&mut store).expect("flush");
    // Seven 17-byte inserts and a 9-byte delete: 128 bytes, the sector's size.
    for key in 1..=7 {
        pool.modify(a, insert(key), &mut store).expect("modify");
    }
    pool.modify(a, LogRecord::Delete { key: 7 }, &mut store)
        .expect("modify");
    assert_eq!(pool.stats().full_sector_flushes, 0, "128 bytes fit");
    assert_eq!(programs(&store), 1, "no log page yet");
    assert_eq!(pool.used_bytes(), u64::from(PAGE + SECTOR));
    ok(&pool, &store);
    pool.modify(a, LogRecord::Delete { key: 6 }, &mut store)
        .expect("modify");
    assert_eq!(
        pool.stats().full_sector_flushes,
        1,
        "the 129th byte does not"
    );
    assert_eq!(programs(&store), 2, "the full sector's log page");
    assert_eq!(pool.used_bytes(), u64::from(PAGE + SECTOR));
    ok(&pool, &store);
}
