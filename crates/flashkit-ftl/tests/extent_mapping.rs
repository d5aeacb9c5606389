//! The Virtual Extent Trie and the Extent Mapping Tree: the paper's worked examples (Suh et
//! al., JSA 2014, Figs. 2, 3, 4, 6 and 7), Lemma 5.4 as a property, and a differential test
//! of every extent mapping against the page table on every translation.

use flashkit_core::{Lpn, PageRange, Ppn, SimRng, SimRngExt};
use flashkit_ftl::extent::canonical_pieces;
use flashkit_ftl::vet::{PfNode, Swiss};
use flashkit_ftl::{
    Canonical, Emt, EmtRun, Extent, InsertScheme, Mapping, PageTable, Pd, Pf, Vet, VetSearch,
};
use proptest::prelude::*;
use rand::Rng;
use std::collections::BTreeMap;

/// The 8-bit binary strings of a canonical decomposition, as the paper writes them.
fn strings(start: u32, len: u32) -> Vec<String> {
    canonical_pieces(start, start + len)
        .map(|c| c.to_binary(8))
        .collect()
}

fn node(vet: &Vet<Pf>, binary: &str) -> Option<Option<Extent>> {
    vet.nodes()
        .into_iter()
        .find(|(c, _)| c.to_binary(8) == binary)
        .map(|(_, leaf)| leaf)
}

fn is_internal(vet: &Vet<Pf>, binary: &str) -> bool {
    node(vet, binary) == Some(None)
}

fn leaf_of(vet: &Vet<Pf>, binary: &str) -> Option<Extent> {
    node(vet, binary).flatten()
}

fn write(vet: &mut impl Mapping, start: u32, len: u32, ppn: u32) -> Vec<Ppn> {
    let mut dropped = Vec::new();
    vet.update(Lpn(start), Ppn(ppn), len, &mut |p| dropped.push(p));
    dropped
}

/// e1, e2 and e3 of Fig. 2 (8-bit addresses, 256 pages).
const E1: (u32, u32) = (0, 144);
const E2: (u32, u32) = (200, 16);
const E3: (u32, u32) = (224, 32);

fn fig2(scheme: InsertScheme) -> Vet<Pf> {
    let mut vet = Vet::<Pf>::new(256, scheme);
    for (i, (start, len)) in [E1, E2, E3].into_iter().enumerate() {
        assert!(write(&mut vet, start, len, 1000 * (i as u32 + 1)).is_empty());
    }
    vet.check().expect("a sound trie");
    vet
}

#[test]
fn fig2_canonical_decompositions_of_e1_e2_e3() {
    assert_eq!(strings(E1.0, E1.1), ["0*******", "1000****"]);
    assert_eq!(strings(E2.0, E2.1), ["11001***", "11010***"]);
    assert_eq!(strings(E3.0, E3.1), ["111*****"]);
}

#[test]
fn fig2_lis_builds_every_ancestor() {
    let vet = fig2(InsertScheme::Lis);
    // Leaves b and g hold e1, k and n hold e2, o holds e3.
    for (binary, extent) in [
        ("0*******", E1),
        ("1000****", E1),
        ("11001***", E2),
        ("11010***", E2),
        ("111*****", E3),
    ] {
        let leaf = leaf_of(&vet, binary).unwrap_or_else(|| panic!("leaf {binary}"));
        assert_eq!((leaf.start, leaf.len), extent, "{binary}");
    }
    // Internal nodes a, c, h, i, j (the ancestors of k the text lists) and the others LIS
    // creates on the way to g and n.
    for binary in [
        "********", "1*******", "11******", "110*****", "1100****", "10******", "100*****",
        "1101****",
    ] {
        assert!(is_internal(&vet, binary), "internal {binary}");
    }
    assert_eq!((vet.leaves(), vet.internals()), (5, 8));
}

#[test]
fn fig6_bis_keeps_only_the_internal_nodes_the_search_visits() {
    let vet = fig2(InsertScheme::Bis);
    assert_eq!(vet.leaves(), 5);
    // "Node j is the first (and only) one to become visited in the process of the binary
    // search against the target leaf node k": a, c and i are not created at all; h is,
    // but only because the search for o = <111*****> visits it (levels 4, then 6, then 5).
    assert!(is_internal(&vet, "1100****"), "j");
    for binary in ["********", "1*******", "110*****"] {
        assert_eq!(
            node(&vet, binary),
            None,
            "{binary} is not on any search path"
        );
    }
    assert!(is_internal(&vet, "11******"), "h, on o's search path");
    assert_eq!(
        vet.internals(),
        3,
        "j, h and m = <1101****> (n's search path)"
    );
    assert!(vet.internals() < fig2(InsertScheme::Lis).internals());
    // Reads still find every page.
    for lpn in 0..256u32 {
        let mapped = (E1.0..E1.0 + E1.1).contains(&lpn)
            || (E2.0..E2.0 + E2.1).contains(&lpn)
            || (E3.0..E3.0 + E3.1).contains(&lpn);
        assert_eq!(vet.lookup(Lpn(lpn)).is_some(), mapped, "page {lpn}");
    }
    assert_eq!(vet.lookup(Lpn(205)), Some(Ppn(2005)));
}

#[test]
fn fig3_e4_partially_invalidates_e2_into_e5() {
    assert_eq!(strings(200, 2), ["1100100*"]);
    assert_eq!(strings(202, 14), ["1100101*", "110011**", "11010***"]);
    let mut vet = fig2(InsertScheme::Lis);
    let dropped = write(&mut vet, 200, 2, 5000);
    assert_eq!(dropped, [Ppn(2000), Ppn(2001)]);
    vet.check().expect("sound");
    // Internal p and leaf q for e4; k switches to internal; r and t are new leaves of e5,
    // and n is kept, now linked to e5.
    let e5 = (202, 14);
    assert!(is_internal(&vet, "110010**"), "p");
    assert!(is_internal(&vet, "11001***"), "k");
    let q = leaf_of(&vet, "1100100*").expect("q");
    assert_eq!((q.start, q.len, q.ppn), (200, 2, 5000));
    for binary in ["1100101*", "110011**", "11010***"] {
        let leaf = leaf_of(&vet, binary).expect("leaf of e5");
        assert_eq!((leaf.start, leaf.len), e5, "{binary}");
        assert_eq!(leaf.ppn, 2002, "e5 keeps its physical run");
    }
    // Footnote 1: under BIS node k would not exist at all.
    let mut bis = fig2(InsertScheme::Bis);
    write(&mut bis, 200, 2, 5000);
    bis.check().expect("sound");
    assert_eq!(node_bis(&bis, "11001***"), None);
    assert_eq!(bis.lookup(Lpn(203)), Some(Ppn(2003)));
    assert_eq!(bis.lookup(Lpn(201)), Some(Ppn(5001)));
}

fn node_bis(vet: &Vet<Pf>, binary: &str) -> Option<Option<Extent>> {
    node(vet, binary)
}

#[test]
fn fig4_e6_deletes_the_subtree_under_h() {
    for scheme in InsertScheme::ALL {
        let mut vet = fig2(scheme);
        let dropped = write(&mut vet, 192, 64, 7000);
        assert_eq!(dropped.len(), 16 + 32, "{scheme}: all of e2 and e3");
        vet.check().expect("sound");
        let h = leaf_of(&vet, "11******").expect("h is now a leaf");
        assert_eq!((h.start, h.len), (192, 64));
        // Nothing is left below h.
        let below: Vec<_> = vet
            .nodes()
            .into_iter()
            .filter(|(c, _)| c.start >= 192 && c.level < 6)
            .collect();
        assert!(below.is_empty(), "{scheme}: {below:?}");
        assert_eq!(vet.leaves(), 3, "{scheme}: b, g and h");
    }
}

#[test]
fn fig7_in_emt() {
    let mut emt = Emt::new(256);
    for (i, (start, len)) in [E1, E2, E3].into_iter().enumerate() {
        write(&mut emt, start, len, 1000 * (i as u32 + 1));
    }
    write(&mut emt, 80, 160, 9000);
    let extents: Vec<_> = emt.iter().map(|e| (e.start, e.len)).collect();
    assert_eq!(extents, [(0, 80), (80, 160), (240, 16)], "e1', e7, e3'");
    assert_eq!(emt.extents(), 3);
}

#[test]
fn pointer_dependent_nodes_share_one_record_per_extent() {
    let mut vet = Vet::<Pd>::new(256, InsertScheme::Bis);
    write(&mut vet, 3, 100, 10);
    write(&mut vet, 50, 10, 500);
    vet.check().expect("sound");
    assert_eq!(vet.lookup(Lpn(49)), Some(Ppn(56)));
    assert_eq!(vet.lookup(Lpn(50)), Some(Ppn(500)));
    assert_eq!(vet.lookup(Lpn(60)), Some(Ppn(67)));
    // Three extents: [3, 50), [50, 60), [60, 103), one record each.
    assert_eq!(
        vet.memory().packed_bytes,
        vet.nodes().len() as u64 * 8 + 3 * 16
    );
}

#[test]
fn a_long_lis_write_keeps_its_internal_counts() {
    // The case the proptest below found: under LIS, this write's internal nodes made a
    // displacement chain of the cuckoo table fail, and the table handed back the wrong node.
    for scheme in InsertScheme::ALL {
        let mut vet = Vet::<Pf>::new(4096, scheme);
        write(&mut vet, 1140, 1308, 0);
        vet.check().expect("sound");
    }
}

proptest! {
    /// Lemma 5.4: at most 2 log |U| canonical extents per extent (at most two per level),
    /// disjoint, in order and covering it exactly.
    #[test]
    fn lemma_5_4_at_most_two_canonical_extents_per_level(
        bits in 1u32..=31,
        a in any::<u32>(),
        b in any::<u32>(),
    ) {
        let universe = 1u64 << bits;
        let (x, y) = (u64::from(a) % universe, u64::from(b) % universe);
        let (start, end) = (x.min(y) as u32, (x.max(y) + 1).min(universe) as u32);
        let pieces: Vec<Canonical> = canonical_pieces(start, end).collect();
        prop_assert!(pieces.len() as u32 <= 2 * bits);
        let mut per_level = vec![0; bits as usize + 1];
        let mut at = u64::from(start);
        for piece in &pieces {
            per_level[piece.level as usize] += 1;
            prop_assert_eq!(u64::from(piece.start), at);
            prop_assert_eq!(piece.start % (1 << piece.level), 0);
            at = piece.end();
        }
        prop_assert_eq!(at, u64::from(end));
        prop_assert!(per_level.iter().all(|&n| n <= 2));
    }

    /// The leaves a VET keeps for one extent are exactly its canonical extents.
    #[test]
    fn a_vet_stores_an_extent_as_its_canonical_extents(start in 0u32..4096, len in 1u32..4096) {
        let len = len.min(4096 - start).max(1);
        if start + len > 4096 { return Ok(()); }
        for scheme in InsertScheme::ALL {
            let mut vet = Vet::<Pf>::new(4096, scheme);
            write(&mut vet, start, len, 0);
            prop_assert_eq!(vet.leaves(), canonical_pieces(start, start + len).count() as u64);
            prop_assert!(vet.leaves() <= 2 * 12);
            vet.check().map_err(TestCaseError::fail)?;
        }
    }
}

/// Every mapping under test, boxed behind one small interface.
trait Subject {
    fn name(&self) -> String;
    fn update(&mut self, start: u32, ppn: u32, len: u32) -> Vec<u32>;
    fn relocate(&mut self, moved: &[(Lpn, Ppn)], to: u32, preceding: Option<Lpn>);
    fn remove(&mut self, start: u32, len: u32) -> Vec<u32>;
    fn pages(&self, start: u32, len: u32) -> Vec<Option<u32>>;
    fn lookup(&self, lpn: u32) -> Option<u32>;
    fn mapped(&self) -> u64;
    fn check(&self) -> Result<(), String>;
}

impl<M: Mapping> Subject for (String, M) {
    fn name(&self) -> String {
        self.0.clone()
    }
    fn update(&mut self, start: u32, ppn: u32, len: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.1
            .update(Lpn(start), Ppn(ppn), len, &mut |p| out.push(p.0));
        out.sort_unstable();
        out
    }
    fn relocate(&mut self, moved: &[(Lpn, Ppn)], to: u32, preceding: Option<Lpn>) {
        self.1.relocate_batch(moved, Ppn(to), preceding);
    }
    fn remove(&mut self, start: u32, len: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.1
            .remove(PageRange::new(Lpn(start), len), &mut |p| out.push(p.0));
        out.sort_unstable();
        out
    }
    fn pages(&self, start: u32, len: u32) -> Vec<Option<u32>> {
        let mut pages = Vec::new();
        let mut next = start;
        self.1
            .translate(PageRange::new(Lpn(start), len), &mut |run| {
                assert_eq!(run.lpn.0, next, "runs in order without gaps");
                assert!(run.len > 0);
                next += run.len;
                for i in 0..run.len {
                    pages.push(run.ppn.map(|p| p.0 + i));
                }
            });
        assert_eq!(next, start + len, "runs cover the range");
        pages
    }
    fn lookup(&self, lpn: u32) -> Option<u32> {
        self.1.lookup(Lpn(lpn)).map(|p| p.0)
    }
    fn mapped(&self) -> u64 {
        self.1.mapped_pages()
    }
    fn check(&self) -> Result<(), String> {
        self.1.check_structure().map_err(|e| e.0)
    }
}

fn subjects(pages: u32) -> Vec<Box<dyn Subject>> {
    vec![
        Box::new(("pmt".to_string(), PageTable::new(pages))),
        Box::new(("emt".to_string(), Emt::new(pages))),
        Box::new((
            "emt/btree".to_string(),
            Emt::<BTreeMap<u32, EmtRun>>::with_index(pages),
        )),
        Box::new((
            "vet/lis/pf".to_string(),
            Vet::<Pf>::new(pages, InsertScheme::Lis),
        )),
        Box::new((
            "vet/bis/pf".to_string(),
            Vet::<Pf>::new(pages, InsertScheme::Bis),
        )),
        Box::new((
            "vet/lis/pd".to_string(),
            Vet::<Pd>::new(pages, InsertScheme::Lis),
        )),
        Box::new((
            "vet/bis/pd".to_string(),
            Vet::<Pd>::new(pages, InsertScheme::Bis),
        )),
        // The SwissTable alternative to the default cuckoo table (vet_tables compares them).
        Box::new((
            "vet/bis/pf/swiss".to_string(),
            Vet::<Pf, Swiss<PfNode>>::new(pages, InsertScheme::Bis),
        )),
        Box::new((
            "vet/lis/pd/swiss".to_string(),
            Vet::<Pd, Swiss<u32>>::new(pages, InsertScheme::Lis),
        )),
        // Our guided search beside Algorithm 2 as published (the default above).
        Box::new((
            "vet/bis/pf/guided".to_string(),
            Vet::<Pf>::new(pages, InsertScheme::Bis).with_search(VetSearch::Guided),
        )),
        Box::new((
            "vet/lis/pd/guided".to_string(),
            Vet::<Pd>::new(pages, InsertScheme::Lis).with_search(VetSearch::Guided),
        )),
        Box::new((
            "vet/bis/pd/swiss/guided".to_string(),
            Vet::<Pd, Swiss<u32>>::new(pages, InsertScheme::Bis).with_search(VetSearch::Guided),
        )),
    ]
}

/// Random writes (short and long, aligned and not), GC-like relocations of scattered and
/// contiguous pages, trims and reads, applied to every mapping: every answer must equal the
/// page table's. Odd universe sizes exercise the edge of the trie.
#[test]
fn every_extent_mapping_agrees_with_the_page_table_on_every_translation() {
    let mut operations = 0u64;
    for (seed, pages) in [(1u64, 1000u32), (2, 4096), (3, 777), (4, 64), (5, 1 << 16)] {
        let mut rng = SimRng::for_stream(seed, "extent-differential");
        let mut all = subjects(pages);
        let mut next_ppn = 0u32;
        // The logical page last written to each physical page (the page FTL's reverse map).
        let mut reverse: Vec<Lpn> = Vec::new();
        for op in 0..6_000u32 {
            let roll = rng.random_range(0..100);
            let len = if rng.random_bool(0.7) {
                rng.random_range(1..=8)
            } else {
                rng.random_range(1..=pages.min(300))
            };
            let start = rng.random_range(0..=pages - len);
            if roll < 55 {
                let expected = all[0].update(start, next_ppn, len);
                for s in &mut all[1..] {
                    assert_eq!(
                        s.update(start, next_ppn, len),
                        expected,
                        "{} op {op}",
                        s.name()
                    );
                }
                reverse.extend((start..start + len).map(Lpn));
                next_ppn += len;
            } else if roll < 70 {
                // A GC batch: some mapped pages, in logical order, to consecutive pages.
                let moved: Vec<(Lpn, Ppn)> = (start..start + len)
                    .filter(|_| rng.random_bool(0.8))
                    .filter_map(|l| all[0].lookup(l).map(|p| (Lpn(l), Ppn(p))))
                    .collect();
                // Every other batch is told what the page before it holds (and may skip
                // the search for a run to continue); the rest search.
                let preceding = (op % 2 == 0).then(|| reverse.last().copied()).flatten();
                for s in &mut all {
                    s.relocate(&moved, next_ppn, preceding);
                }
                reverse.extend(moved.iter().map(|&(lpn, _)| lpn));
                next_ppn += moved.len() as u32;
            } else if roll < 80 {
                let expected = all[0].remove(start, len);
                for s in &mut all[1..] {
                    assert_eq!(s.remove(start, len), expected, "{} op {op}", s.name());
                }
            } else {
                let expected = all[0].pages(start, len);
                for s in &all[1..] {
                    assert_eq!(s.pages(start, len), expected, "{} op {op}", s.name());
                }
            }
            operations += 1;
            if op % 500 == 0 {
                for s in &all[1..] {
                    s.check()
                        .unwrap_or_else(|e| panic!("{} op {op}: {e}", s.name()));
                    assert_eq!(s.mapped(), all[0].mapped(), "{}", s.name());
                }
            }
        }
        let everything = all[0].pages(0, pages);
        for s in &all[1..] {
            assert_eq!(s.pages(0, pages), everything, "{} final", s.name());
            s.check().unwrap_or_else(|e| panic!("{}: {e}", s.name()));
        }
    }
    assert!(operations >= 30_000);
}
