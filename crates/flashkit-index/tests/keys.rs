//! The reserved key: `u32::MAX` reads as an erased word on NOR flash, so every NOR index
//! refuses it in each operation, with `IndexError::KeyReserved`, before touching the flash;
//! `KEY_MAX`, the key just below it, is an ordinary key.

mod common;

use common::small_nor;
use flashkit_index::nor::{
    FatList, FatListConfig, IndexError, KEY_MAX, MuTree, MuTreeConfig, NorIndex, SoftList,
    SoftListConfig, state_hash,
};

/// One index of each kind, each holding key 5 and `KEY_MAX`.
fn indexes() -> Vec<Box<dyn NorIndex>> {
    let mut all: Vec<Box<dyn NorIndex>> = vec![
        Box::new(
            FatList::create(small_nor(1024, 16), FatListConfig::default(), 1).expect("fat list"),
        ),
        Box::new(
            SoftList::create(small_nor(1024, 16), SoftListConfig::default(), 1).expect("soft list"),
        ),
        Box::new(
            MuTree::create(small_nor(1024, 16), MuTreeConfig { page_bytes: 256 }).expect("mu-tree"),
        ),
    ];
    for index in &mut all {
        assert!(index.put(5, 50).expect("put 5"));
        assert!(index.put(KEY_MAX, 7).expect("put KEY_MAX"));
    }
    all
}

fn reserved(result: Result<impl std::fmt::Debug, IndexError>, what: &str, name: &str) {
    match result {
        Err(IndexError::KeyReserved { key }) => assert_eq!(key, u32::MAX, "{name} {what}"),
        other => panic!("{name} {what} with the erased key: {other:?}"),
    }
}

#[test]
fn the_largest_key_is_one_below_the_erased_word() {
    assert_eq!(KEY_MAX, u32::MAX - 1);
}

#[test]
fn every_operation_refuses_the_erased_key_and_changes_nothing() {
    for mut index in indexes() {
        let name = index.name();
        let before = state_hash(index.as_ref());
        let mut out = Vec::new();
        reserved(index.get(u32::MAX), "get", name);
        reserved(index.put(u32::MAX, 1), "put", name);
        reserved(index.remove(u32::MAX), "remove", name);
        reserved(
            index.range(u32::MAX, u32::MAX, &mut out),
            "range from",
            name,
        );
        reserved(index.range(0, u32::MAX, &mut out), "range to", name);
        assert!(out.is_empty(), "{name}: a refused range gave {out:?}");
        assert_eq!(
            state_hash(index.as_ref()),
            before,
            "{name}: a refused call changed state"
        );
        assert_eq!(
            index.contents().expect("contents"),
            vec![(5, 50), (KEY_MAX, 7)],
            "{name}"
        );
    }
}

#[test]
fn the_largest_key_is_an_ordinary_key() {
    for mut index in indexes() {
        let name = index.name();
        assert_eq!(index.get(KEY_MAX).expect("get"), Some(7), "{name}");
        let mut out = Vec::new();
        index.range(KEY_MAX, KEY_MAX, &mut out).expect("range");
        assert_eq!(out, vec![(KEY_MAX, 7)], "{name}");
        out.clear();
        index.range(0, KEY_MAX, &mut out).expect("range");
        assert_eq!(out, vec![(5, 50), (KEY_MAX, 7)], "{name}");
        assert!(
            !index.put(KEY_MAX, 8).expect("update"),
            "{name}: an update is not new"
        );
        assert_eq!(index.remove(KEY_MAX).expect("remove"), Some(8), "{name}");
        assert_eq!(index.get(KEY_MAX).expect("get"), None, "{name}");
        index.check_invariants().expect("invariants");
    }
}

#[test]
fn the_refusal_names_the_key_and_the_limit() {
    let error = IndexError::KeyReserved { key: u32::MAX };
    assert_eq!(
        error.to_string(),
        "key 0xffffffff is reserved (an erased key reads as 0xffffffff); keys go up to 0xfffffffe"
    );
}
