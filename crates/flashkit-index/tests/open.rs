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
