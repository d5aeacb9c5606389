//! A power-off and a cold start: each NOR index gives its device back, and `open` finds the
//! same index on it from flash alone, with the configuration it was given, at a cost counted
//! as metadata reads.

mod common;

use common::small_nor;
use flashkit_device::NorDevice;
use flashkit_index::nor::{
    BootReport, FatList, FatListConfig, MuTree, MuTreeConfig, NorIndex, SoftList, SoftListConfig,
};

const WORDS_PER_BLOCK: u32 = 1024;

fn nor() -> NorDevice {
    small_nor(WORDS_PER_BLOCK, 16)
}

fn fill(index: &mut dyn NorIndex) -> Vec<(u32, u32)> {
    for i in 0..300u32 {
        index.put(i * 7 % 300, i).expect("put");
    }
    for i in (0..300u32).step_by(4) {
        index.remove(i).expect("remove");
    }
    index.contents().expect("contents")
}

/// What a cold start must show: the same pairs, a sound structure, its reads (`before`:
/// the metadata reads the device had counted) counted as metadata and reported.
fn found(index: &mut dyn NorIndex, boot: BootReport, before: u64, want: &[(u32, u32)]) {
    let name = index.name();
    assert_eq!(index.contents().expect("contents"), want, "{name}");
    index.check_invariants().expect("invariants");
    assert!(boot.word_reads > 0 && boot.steps > 0, "{name}: {boot:?}");
    let metadata = index.device().counters().reads.metadata - before;
    assert_eq!(
        metadata, boot.word_reads,
        "{name}: boot reads are metadata reads"
    );
    assert_eq!(index.get(7).expect("get"), Some(1), "{name}");
    assert!(
        index.put(1_000, 5).expect("put"),
        "{name}: the index works on"
    );
}

#[test]
fn a_fat_list_is_found_again_from_flash_alone() {
    let cfg = FatListConfig {
        slots: 16,
        key_limit: 8,
        ..FatListConfig::with_levels(3)
    };
    assert_eq!((cfg.max_levels, cfg.pool), (3, 5), "a pool of levels + 2");
    let mut list = FatList::create(nor(), cfg, 9).expect("create");
    let (frames, words) = list.object_shape();
    assert!(
        frames >= 2 && words > 16,
        "{frames} objects of {words} words"
    );
    assert!(frames * words <= WORDS_PER_BLOCK && (frames + 1) * words > WORDS_PER_BLOCK);
    let want = fill(&mut list);
    let before = list.device().counters().reads.metadata;
    let (mut list, boot) = FatList::open(list.into_device(), cfg, 9).expect("open");
    assert_eq!(*list.config(), cfg);
    assert_eq!(list.object_shape(), (frames, words));
    assert_eq!(list.name(), "fatlist", "the name reports and sweeps key on");
    found(&mut list, boot, before, &want);
}

#[test]
fn a_soft_list_is_found_again_from_flash_alone() {
    let cfg = SoftListConfig {
        max_levels: 4,
        slots_per_level: 3,
        ..SoftListConfig::default()
    };
    assert_ne!(cfg, SoftListConfig::default(), "a configuration of its own");
    let mut list = SoftList::create(nor(), cfg, 9).expect("create");
    let want = fill(&mut list);
    let before = list.device().counters().reads.metadata;
    let (mut list, boot) = SoftList::open(list.into_device(), cfg, 9).expect("open");
    assert_eq!(*list.config(), cfg);
    assert_eq!(
        list.name(),
        "softlist",
        "the name reports and sweeps key on"
    );
    found(&mut list, boot, before, &want);
}

#[test]
fn a_mu_tree_is_found_again_from_flash_alone() {
    let cfg = MuTreeConfig { page_bytes: 256 };
    let mut tree = MuTree::create(nor(), cfg).expect("create");
    let want = fill(&mut tree);
    let before = tree.device().counters().reads.metadata;
    let height = tree.height();
    assert!(height >= 2, "height {height}");
    let (mut tree, boot) = MuTree::open(tree.into_device(), cfg).expect("open");
    assert_eq!(tree.height(), height);
    found(&mut tree, boot, before, &want);
}

#[test]
fn an_erased_device_holds_no_index() {
    let fat = FatList::open(nor(), FatListConfig::default(), 1).err();
    let soft = SoftList::open(nor(), SoftListConfig::default(), 1).err();
    let mu = MuTree::open(nor(), MuTreeConfig::default()).err();
    for error in [fat, soft, mu] {
        let error = error.expect("an erased device is refused");
        assert!(
            matches!(error, flashkit_index::nor::IndexError::Corrupt { .. }),
            "{error:?}"
        );
    }
}

/// Boot looks for the list at random frames and gives up after 64 draws per frame of the
/// flash (a flash with no list). A list holding only its head and tail is found on every
/// boot (each draws its own frames), both when they are two frames of 52,000 in one
/// turnstile of 64 blocks (10-word objects, 819 to a block), where a bound of a few draws
/// per frame would miss them on some boots, and on a flash of 128 small turnstiles.
#[test]
fn an_empty_list_is_found_on_every_boot() {
    let shapes = [(64, 8192, 64), (2, 64, 256)];
    for (turnstile_blocks, words_per_block, blocks) in shapes {
        let cfg = SoftListConfig {
            turnstile_blocks,
            max_levels: 1,
            slots_per_level: 2,
            ..SoftListConfig::default()
        };
        let list = SoftList::create(small_nor(words_per_block, blocks), cfg, 3).expect("create");
        let (mut list, _) = SoftList::open(list.into_device(), cfg, 3).expect("open");
        let mut steps = std::collections::BTreeSet::new();
        for boot in 2..40 {
            let at = format!("turnstiles of {turnstile_blocks} blocks, boot {boot}");
            let report = list.power_cycle().unwrap_or_else(|e| panic!("{at}: {e}"));
            steps.insert(report.steps);
            assert_eq!(list.contents().expect("contents"), [], "{at}");
        }
        // From the tail: one step, to the head; from the head: to the tail, then the head.
        assert_eq!(steps, [1, 2].into(), "steps of the boots' walks");
    }
}

/// On a list of one level in turnstiles of two blocks (so that each pointer names one
/// frame), boot walks object by object from where it lands to the tail: a list of 200
/// objects (eight to a block, 128 blocks) is found on every boot, in at most one step per
/// object and two more.
#[test]
fn a_long_one_level_list_is_found_on_every_boot() {
    let cfg = SoftListConfig {
        turnstile_blocks: 2,
        max_levels: 1,
        slots_per_level: 2,
        ..SoftListConfig::default()
    };
    let mut list = SoftList::create(small_nor(1 + 8 * 10, 128), cfg, 4).expect("create");
    for i in 0..200u32 {
        list.put(i * 7 % 200, i).expect("put");
    }
    let want = list.contents().expect("contents");
    let mut longest = 0;
    for boot in 2..12 {
        let report = list
            .power_cycle()
            .unwrap_or_else(|e| panic!("boot {boot}: {e}"));
        assert!(report.steps <= 202, "boot {boot}: {report:?}");
        longest = longest.max(report.steps);
        assert_eq!(list.contents().expect("contents"), want, "boot {boot}");
    }
    assert!(longest > 100, "the longest walk: {longest} steps");
}
