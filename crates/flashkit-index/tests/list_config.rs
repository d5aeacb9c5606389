//! A soft or fat list's parameters: every value a list cannot work with is refused, at
//! `create` and `open` alike, naming the field at fault, and the values at each limit are
//! accepted.

mod common;

use common::small_nor;
use flashkit_index::nor::{FatList, FatListConfig, IndexError, NorIndex, SoftList, SoftListConfig};

/// The field `create` refuses `cfg` for on a flash of `blocks` blocks of `words` words (the
/// same as `open`'s), or `None` when it accepts it.
fn fat(cfg: FatListConfig, words: u32, blocks: u32) -> Option<&'static str> {
    let created = FatList::create(small_nor(words, blocks), cfg, 1).err();
    let opened = FatList::open(small_nor(words, blocks), cfg, 1).err();
    verdict(created, opened)
}

fn soft(cfg: SoftListConfig, words: u32, blocks: u32) -> Option<&'static str> {
    let created = SoftList::create(small_nor(words, blocks), cfg, 1).err();
    let opened = SoftList::open(small_nor(words, blocks), cfg, 1).err();
    verdict(created, opened)
}

/// `create`'s verdict; `open` on an erased flash fails either way, and must name the same
/// field when the configuration is at fault (and find no list otherwise).
fn verdict(created: Option<IndexError>, opened: Option<IndexError>) -> Option<&'static str> {
    let field = match created {
        None => None,
        Some(IndexError::Config { field, .. }) => Some(field),
        Some(other) => panic!("not a configuration error: {other}"),
    };
    match (field, opened) {
        (Some(want), Some(IndexError::Config { field, .. })) => assert_eq!(field, want),
        (None, Some(IndexError::Corrupt { .. })) => {}
        (_, opened) => panic!("create: {field:?}, open on an erased flash: {opened:?}"),
    }
    field
}

fn fat_with(change: impl FnOnce(&mut FatListConfig)) -> FatListConfig {
    let mut cfg = FatListConfig::default();
    change(&mut cfg);
    cfg
}

#[test]
fn the_defaults_are_accepted() {
    assert_eq!(fat(FatListConfig::default(), 1024, 16), None);
    assert_eq!(soft(SoftListConfig::default(), 1024, 16), None);
}

#[test]
fn a_turnstile_needs_a_spare_and_must_divide_the_flash() {
    let t = |blocks| fat_with(|c| c.turnstile_blocks = blocks);
    assert_eq!(fat(t(0), 1024, 16), Some("turnstile size"));
    assert_eq!(fat(t(1), 1024, 16), Some("turnstile size"));
    assert_eq!(fat(t(2), 1024, 16), None, "one block and its spare");
    assert_eq!(fat(t(3), 1024, 16), Some("turnstile size"));
    assert_eq!(fat(t(16), 1024, 16), None, "one turnstile");
    assert_eq!(fat(t(32), 1024, 16), Some("turnstile size"));
}

#[test]
fn levels_run_from_one_to_seven() {
    let levels = |n: u32| fat_with(|c| (c.max_levels, c.pool) = (n, n.max(1) + 2));
    assert_eq!(fat(levels(0), 1024, 16), Some("max levels"));
    assert_eq!(fat(levels(1), 1024, 16), None);
    assert_eq!(fat(levels(7), 1024, 16), None);
    assert_eq!(fat(levels(8), 1024, 16), Some("max levels"));
}

#[test]
fn p_lies_strictly_between_zero_and_one() {
    for (p, ok) in [
        (0.0, false),
        (1e-9, true),
        (0.5, true),
        (0.999, true),
        (1.0, false),
        (-0.25, false),
        (f64::NAN, false),
    ] {
        let want = if ok { None } else { Some("p") };
        assert_eq!(fat(fat_with(|c| c.p = p), 1024, 16), want, "p = {p}");
    }
}

#[test]
fn slots_and_the_key_limit_are_bounded_and_ordered() {
    let shape = |slots, key_limit| {
        fat_with(|c| {
            c.slots = slots;
            c.key_limit = key_limit;
        })
    };
    let both = Some("slots / key limit");
    // Large objects need large blocks: 128 slots take 535 words with the default pool.
    for (slots, key_limit, want) in [
        (0, 0, both),
        (0, 1, both),
        (8, 0, both),
        (1, 1, None),
        (2, 1, None),
        (8, 7, None),
        (8, 8, Some("key limit")),
        (8, 9, both),
        (128, 20, None),
        (129, 20, both),
    ] {
        let got = fat(shape(slots, key_limit), 4096, 16);
        assert_eq!(got, want, "{slots} slots, key limit {key_limit}");
    }
}

/// Every level needs a pointer entry, and the tail a spare one beside its pointer: without
/// it, re-pointing the head and the tail relocate each other without end.
#[test]
fn every_level_needs_a_pointer_and_the_tail_a_spare() {
    let pool = |levels: u32, entries| {
        fat_with(|c| (c.max_levels, c.pool, c.turnstile_blocks) = (levels, entries, 2))
    };
    assert_eq!(fat(pool(5, 4), 1024, 16), Some("pointer pool"));
    assert_eq!(fat(pool(5, 5), 1024, 16), None);
    assert_eq!(fat(pool(1, 1), 1024, 16), Some("pointer pool"));
    assert_eq!(fat(pool(1, 2), 1024, 16), None);
    let per_level = |slots| SoftListConfig {
        slots_per_level: slots,
        turnstile_blocks: 2,
        ..SoftListConfig::default()
    };
    for slots in [0, 1] {
        let got = soft(per_level(slots), 1024, 16);
        assert_eq!(got, Some("pointer slots per level"), "{slots} slots");
    }
    assert_eq!(soft(per_level(2), 1024, 16), None);
    // The smallest areas accepted work, in turnstiles of two blocks, where a relocation
    // never keeps its soft pointer.
    let mut fat_list = FatList::create(small_nor(1024, 16), pool(1, 2), 1).expect("fat");
    let mut soft_list = SoftList::create(small_nor(1024, 16), per_level(2), 1).expect("soft");
    for list in [&mut fat_list as &mut dyn NorIndex, &mut soft_list] {
        for i in 0..200u32 {
            list.put(i * 7 % 200, i).expect("put");
        }
        let want: std::collections::BTreeMap<u32, u32> =
            (0..200).map(|i| (i * 7 % 200, i)).collect();
        let got = list.contents().expect("contents");
        assert_eq!(got, Vec::from_iter(want), "{}", list.name());
        list.check_invariants().expect("invariants");
    }
}

/// Objects per block must lie in 2..=65,535 (a pointer's offset is 16 bits), and the
/// turnstiles must fit the pointer's 13 bits (8,191).
#[test]
fn the_objects_and_turnstiles_must_fit_a_pointer() {
    // A one-level soft list's object is 10 words; a block has one header word.
    let soft_one = |turnstile_blocks| SoftListConfig {
        turnstile_blocks,
        max_levels: 1,
        slots_per_level: 2,
        ..SoftListConfig::default()
    };
    assert_eq!(
        soft(soft_one(2), 1 + 2 * 10, 16),
        None,
        "two objects a block"
    );
    assert_eq!(soft(soft_one(2), 2 * 10, 16), Some("object size"));
    let most = 1 + 65_535 * 10;
    assert_eq!(soft(soft_one(2), most, 2), None, "65,535 objects a block");
    assert_eq!(soft(soft_one(2), most + 10, 2), Some("object size"));
    assert_eq!(soft(soft_one(2), 32, 2 * 8191), None, "8,191 turnstiles");
    assert_eq!(soft(soft_one(2), 32, 2 * 8192), Some("turnstile size"));
}
