//! The worked examples of section 0.3.2 on a hand-built layout of the soft list of
//! Fig. 4(b): keys 10, 15, 40, 41, 55, 70, 200 in three turnstiles of two blocks and a spare
//! (soft-pointer degree 2), placed so that each soft pointer probes exactly the two objects
//! the text names, in the order it names them:
//!
//! ```text
//! turnstile 0, offset 0:  block 0 = 15,  block 1 = 55     (10's and 41's pointer)
//! turnstile 1, offset 0:  block 3 = 40,  block 4 = 70     (15's and 55's pointer)
//! turnstile 2, offset 0:  block 6 = 200, block 7 = 41     (40's and 70's pointer)
//! ```

use super::layout::{BLOCK_IN_USE, Contents, Kind, Ptr};
use super::search::Probe;
use super::{Engine, Frame, ListConfig, PointerArea};
use flashkit_core::{BlockId, Cause};
use flashkit_device::{NorDevice, NorGeometry};

fn frame(block: u32, offset: u16) -> Frame {
    Frame { block, offset }
}

fn ptr(turnstile: u16, offset: u16) -> Ptr {
    Ptr { turnstile, offset }
}

/// The list of Fig. 4(b) with the layout above; the head sits in turnstile 0 at offset 1,
/// 10 in turnstile 2 at offset 1, the tail in turnstile 1 at offset 1.
fn fig4() -> Engine {
    let cfg = ListConfig {
        turnstile_blocks: 3,
        max_levels: 1,
        p: 0.25,
        slots: 1,
        key_limit: 1,
        pointers: PointerArea::PerLevel { slots: 2 },
    };
    let nor = NorDevice::new(NorGeometry::new(64, 9).expect("valid"));
    let mut e = Engine::blank(nor, cfg, "softlist", 1).expect("valid configuration");
    for block in [0, 1, 3, 4, 6, 7] {
        let start = e.nor.geometry().block_start(BlockId(block));
        e.nor
            .program(start, BLOCK_IN_USE, Cause::Metadata)
            .expect("fresh");
    }
    let objects: [(u32, u16, Kind, Option<u32>, Ptr); 9] = [
        (0, 1, Kind::Head, None, ptr(2, 1)),
        (6, 1, Kind::Data, Some(10), ptr(0, 0)),
        (0, 0, Kind::Data, Some(15), ptr(1, 0)),
        (3, 0, Kind::Data, Some(40), ptr(2, 0)),
        (7, 0, Kind::Data, Some(41), ptr(0, 0)),
        (1, 0, Kind::Data, Some(55), ptr(1, 0)),
        (4, 0, Kind::Data, Some(70), ptr(2, 0)),
        (6, 0, Kind::Data, Some(200), ptr(1, 1)),
        (3, 1, Kind::Tail, None, ptr(0, 1)),
    ];
    for (block, offset, kind, key, next) in objects {
        let contents = Contents {
            pairs: key.map(|k| (k, k * 100)).into_iter().collect(),
            level: 0,
            next: vec![next],
        };
        e.program_object(frame(block, offset), kind, &contents)
            .expect("fresh");
    }
    e.head = e.handle(frame(0, 1));
    e.tail = e.handle(frame(3, 1));
    e.check()
        .expect("the hand-built layout is a valid soft list");
    e
}

#[test]
fn searching_200_takes_four_steps() {
    // The text says 10, 15, 70, 200; Algorithm 1 takes the first useful probe, and the text
    // itself says 15's first probe is 40 (search for 16), so the search goes 10, 15, 40,
    // 200: four steps, as the text counts, through 40 rather than 70.
    let mut e = fig4();
    let (visited, probes, found) = e.trace_search(200);
    assert!(found);
    assert_eq!(visited, [10, 15, 40, 200]);
    assert_eq!(
        probes,
        [Probe::Moved(15), Probe::Moved(40), Probe::Moved(200)]
    );
}

#[test]
fn searching_16_stops_at_15_after_probing_40_and_70() {
    let mut e = fig4();
    let (visited, probes, found) = e.trace_search(16);
    assert!(!found);
    assert_eq!(visited, [10, 15]);
    assert_eq!(probes, [Probe::Moved(15), Probe::Over(40), Probe::Over(70)]);
}

/// The text's probes here also fix the order in which a soft pointer probes its turnstile:
/// not its target first (40's target is 41, probed second after 200; 41's is 55, probed
/// second after 15), but the same block order for every pointer into the turnstile.
#[test]
fn searching_55_falls_back_at_40_and_skips_a_backward_probe_at_41() {
    let mut e = fig4();
    let (visited, probes, found) = e.trace_search(55);
    assert!(found);
    assert_eq!(visited, [10, 15, 40, 41, 55]);
    assert_eq!(
        probes,
        [
            Probe::Moved(15),
            Probe::Moved(40),
            Probe::Over(200),
            Probe::Moved(41),
            Probe::Back(15),
            Probe::Moved(55),
        ]
    );
}

#[test]
fn the_hand_built_list_answers_lookups_and_takes_inserts() {
    let mut e = fig4();
    for key in [10, 15, 40, 41, 55, 70, 200] {
        assert_eq!(e.get(key), Some(key * 100), "key {key}");
    }
    assert_eq!(e.get(16), None);
    // Inserting 16 finds its immediate predecessor 15 (section 0.3.3) and links after it.
    assert!(e.put(16, 1).expect("room"));
    e.check().expect("still valid");
    assert_eq!(e.get(16), Some(1));
    assert_eq!(e.get(40), Some(4000));
}
