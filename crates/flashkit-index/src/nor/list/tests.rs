//! The invariant checker (`check`) shown to fire on a deliberately corrupted fat list: one
//! corruption per condition it checks, each on a healthy list spread over several
//! turnstiles. Flash is corrupted by rewriting words in place; RAM by editing the engine.
//! And the state hash shown to change with every part of the state it covers.
//!
//! Not caught (an ignored test at the end): an object whose level is above the list's top
//! level, which the checker accepts and boot can panic on.

use super::layout::{
    HEAD, Kind, LEVEL_MASK, LIVE, Ptr, State, TAIL, decode_ptr, decode_state, encode_ptr, join,
};
use super::modify::Task;
use super::{Engine, Frame, ListConfig, Move, PointerArea};
use crate::nor::Key;
use flashkit_core::{BlockId, Cause};
use flashkit_device::nor::{ERASED_WORD, NorDevice, NorGeometry, WordAddr};

/// The fat list's default shape (m = 40, n = 20, five levels, a pool of seven pointers).
fn fat_config() -> ListConfig {
    ListConfig {
        turnstile_blocks: 8,
        max_levels: 5,
        p: 0.25,
        slots: 40,
        key_limit: 20,
        pointers: PointerArea::Pool { entries: 7 },
    }
}

/// A healthy fat list on four turnstiles: 400 keys inserted in a scrambled order, every
/// fifth updated, every seventh removed.
fn busy_list() -> Engine {
    let nor = NorDevice::new(NorGeometry::new(2048, 32).expect("valid geometry"));
    let mut e = Engine::create(nor, fat_config(), "fatlist", 7).expect("create");
    for i in 0..400u32 {
        e.put(i * 7919 % 400 * 10, i).expect("insert");
    }
    for i in (0..400u32).step_by(5) {
        e.put(i * 10, i + 1).expect("update");
    }
    for i in (0..400u32).step_by(7) {
        e.remove(i * 10).expect("remove");
    }
    let data = data_objects(&e);
    let blocks: std::collections::BTreeSet<u32> = data.iter().map(|o| o.frame.block).collect();
    assert!(blocks.len() >= 3, "data in blocks {blocks:?}");
    e.check().expect("a healthy list passes");
    e
}

fn violation(e: &Engine) -> String {
    e.check().expect_err("the corruption is caught")
}

/// Overwrite words on flash with any values, as a fault would: the block is read, erased and
/// programmed again with `words` at `addr` (a program alone can only clear bits).
fn overwrite(e: &mut Engine, addr: WordAddr, words: &[u16]) {
    let g = *e.nor.geometry();
    let block = g.block_of(addr);
    let start = g.block_start(block);
    let mut image = e.nor.peek_words(start, g.words_per_block()).to_vec();
    let at = (addr.0 - start.0) as usize;
    image[at..at + words.len()].copy_from_slice(words);
    e.nor.erase(block, Cause::Metadata).expect("erase");
    e.nor
        .program_image(start, &image, Cause::Metadata)
        .expect("program");
}

/// A live object as these tests read it from flash.
struct Object {
    frame: Frame,
    kind: Kind,
    level: u8,
    /// The key in each slot, `None` where the slot is erased.
    keys: Vec<Option<Key>>,
    /// Whether each slot's validity bit is still set.
    valid: Vec<bool>,
    /// Each pointer entry, `None` where it is erased.
    ptrs: Vec<Option<(u8, Ptr)>>,
}

impl Object {
    /// Slots written from the bottom (the min-max area) and from the top.
    fn front(&self) -> usize {
        self.keys.iter().take_while(|k| k.is_some()).count()
    }
    fn back(&self) -> usize {
        self.keys.iter().rev().take_while(|k| k.is_some()).count()
    }
    /// The smallest and largest key of the min-max area.
    fn bounds(&self) -> (Key, Key) {
        let area = self.keys[..self.front()].iter().flatten();
        let min = area
            .clone()
            .min()
            .expect("a data object has a min-max area");
        (*min, *area.max().expect("and a largest key"))
    }
    /// The pointer entry holding the current pointer of level 0.
    fn current_level_0_entry(&self) -> u32 {
        let i = self
            .ptrs
            .iter()
            .rposition(|p| matches!(p, Some((0, _))))
            .expect("every object has a level-0 pointer");
        i as u32
    }
}

/// Every live object on flash, in frame order.
fn objects(e: &Engine) -> Vec<Object> {
    let lay = e.lay;
    let mut out = Vec::new();
    for block in 0..e.nor.geometry().blocks() {
        for offset in 0..e.frames_per_block as u16 {
            let frame = Frame { block, offset };
            let at = e.addr(frame);
            let State::Live { kind, level } = decode_state(e.nor.peek(at)) else {
                continue;
            };
            let word = |i: u32| e.nor.peek(at.offset(i));
            let keys = (0..lay.slots)
                .map(|s| Some(join(word(lay.slot(s)), word(lay.slot(s) + 1))))
                .map(|k| k.filter(|&k| k != u32::MAX))
                .collect();
            let valid = (0..lay.slots)
                .map(|s| word(lay.bitmap() + s / 16) & (1 << (s % 16)) != 0)
                .collect();
            let ptrs = (0..lay.ptr_entries)
                .map(|i| decode_ptr([word(lay.ptr(i)), word(lay.ptr(i) + 1)]))
                .collect();
            out.push(Object {
                frame,
                kind,
                level,
                keys,
                valid,
                ptrs,
            });
        }
    }
    out
}

/// The live data objects, in key order.
fn data_objects(e: &Engine) -> Vec<Object> {
    let mut data: Vec<Object> = objects(e)
        .into_iter()
        .filter(|o| o.kind == Kind::Data)
        .collect();
    data.sort_by_key(|o| o.bounds().0);
    data
}

/// The first data object with at least `free` erased slots between its two ends, and the
/// data object after it in key order.
fn roomy_data_object(e: &Engine, free: usize) -> (Object, Object) {
    let mut data = data_objects(e);
    let i = data
        .windows(2)
        .position(|w| w[0].keys.len() - w[0].front() - w[0].back() >= free)
        .unwrap_or_else(|| panic!("a data object with {free} free slots, not the last"));
    let next = data.swap_remove(i + 1);
    (data.swap_remove(i), next)
}

/// The only live object of a kind.
fn the(e: &Engine, kind: Kind) -> Object {
    objects(e)
        .into_iter()
        .find(|o| o.kind == kind)
        .expect("one live object of each dummy kind")
}

fn key_words(key: Key) -> [u16; 2] {
    [(key >> 16) as u16, key as u16]
}

/// Write `key` (value 0) into an erased slot of an object.
fn write_slot(e: &mut Engine, frame: Frame, slot: usize, key: Key) {
    let at = e.addr(frame).offset(e.lay.slot(slot as u32));
    let [hi, lo] = key_words(key);
    overwrite(e, at, &[hi, lo, 0, 0]);
}

/// Overwrite pointer entry `i` of an object.
fn write_ptr(e: &mut Engine, frame: Frame, i: u32, words: [u16; 2]) {
    let at = e.addr(frame).offset(e.lay.ptr(i));
    overwrite(e, at, &words);
}

fn ptr_of(e: &Engine, o: &Object) -> Ptr {
    e.ptr_of(o.frame)
}

#[test]
fn catches_a_move_log_left_open() {
    let mut e = busy_list();
    e.moves.push(Move::Block { from: 0, to: 7 });
    let e = violation(&e);
    assert!(e.contains("an operation is still open"), "{e}");
}

#[test]
fn catches_an_old_tail_left_waiting_for_its_predecessors() {
    let mut e = busy_list();
    e.deferred_tails.push(e.tail);
    let e = violation(&e);
    assert!(e.contains("an operation is still open"), "{e}");
}

#[test]
fn catches_structural_work_left_queued() {
    let mut e = busy_list();
    e.tasks.push(Task::NewHead(e.head));
    let e = violation(&e);
    assert!(e.contains("an operation is still open"), "{e}");
}

#[test]
fn catches_a_written_word_in_a_spare_block() {
    let mut e = busy_list();
    let spare = e.cfg.turnstile_blocks + e.spare[1];
    let g = *e.nor.geometry();
    let last = g
        .block_start(BlockId(spare))
        .offset(g.words_per_block() - 1);
    overwrite(&mut e, last, &[0x1234]);
    let e = violation(&e);
    assert!(
        e.contains(&format!("spare block {spare} of turnstile 1 is not erased")),
        "{e}"
    );
}

#[test]
fn catches_a_block_in_use_whose_header_reads_erased() {
    let mut e = busy_list();
    let block = data_objects(&e)[0].frame.block;
    let start = e.nor.geometry().block_start(BlockId(block));
    overwrite(&mut e, start, &[ERASED_WORD]);
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "block {block} is not the spare but its header reads"
        )),
        "{e}"
    );
}

#[test]
fn catches_a_slot_written_in_the_middle_of_the_free_ones() {
    let mut e = busy_list();
    let (o, _) = roomy_data_object(&e, 3);
    // A key inside the object's bounds that it does not hold, written with one free slot
    // left on either side of it.
    let (min, max) = o.bounds();
    let fresh = (min + 1..max)
        .find(|k| !o.keys.contains(&Some(*k)))
        .expect("room between the bounds");
    write_slot(&mut e, o.frame, o.front() + 1, fresh);
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "{:?}: slots are not written from both ends",
            o.frame
        )),
        "{e}"
    );
}

#[test]
fn catches_a_key_with_two_live_slots() {
    let mut e = busy_list();
    let (o, _) = roomy_data_object(&e, 1);
    let live = (0..o.keys.len())
        .find_map(|s| o.keys[s].filter(|_| o.valid[s]))
        .expect("a live key");
    // Written again, live, at the next free slot from the top.
    let back = o.keys.len() - o.back() - 1;
    write_slot(&mut e, o.frame, back, live);
    let e = violation(&e);
    assert!(
        e.contains(&format!("{:?}: a key has two live slots", o.frame)),
        "{e}"
    );
}

#[test]
fn catches_an_erased_pointer_entry_before_a_written_one() {
    let mut e = busy_list();
    let head = the(&e, Kind::Head);
    assert!(head.level > 0 && head.ptrs[1].is_some());
    write_ptr(&mut e, head.frame, 0, [ERASED_WORD, ERASED_WORD]);
    let e = violation(&e);
    assert!(
        e.contains(&format!("{:?}: pointer entries have a gap", head.frame)),
        "{e}"
    );
}

#[test]
fn catches_a_pointer_tagged_above_its_objects_level() {
    let mut e = busy_list();
    let o = data_objects(&e)
        .into_iter()
        .find(|o| o.level == 0)
        .expect("a data object of level 0");
    let (_, target) = o.ptrs[0].expect("the first entry holds a pointer");
    write_ptr(&mut e, o.frame, 0, encode_ptr(1, target));
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "{:?}: pointer of level 1 above its level 0",
            o.frame
        )),
        "{e}"
    );
}

#[test]
fn catches_a_live_data_object_with_every_slot_invalidated() {
    let mut e = busy_list();
    let data = data_objects(&e);
    let o = &data[1];
    let at = e.addr(o.frame).offset(e.lay.bitmap());
    let zeros = vec![0; e.lay.bitmap_words as usize];
    overwrite(&mut e, at, &zeros);
    let e = violation(&e);
    assert!(
        e.contains(&format!("{:?}: a live data object holds no key", o.frame)),
        "{e}"
    );
}

#[test]
fn catches_a_live_key_above_its_objects_max_bound() {
    let mut e = busy_list();
    let (o, _) = roomy_data_object(&e, 1);
    let (min, max) = o.bounds();
    // Written from the top, a key does not widen the min-max area.
    let back = o.keys.len() - o.back() - 1;
    write_slot(&mut e, o.frame, back, max + 1);
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "{:?}: key {} lies outside its min-max bounds {min}..={max}",
            o.frame,
            max + 1
        )),
        "{e}"
    );
}

#[test]
fn catches_a_data_object_turned_into_a_second_head() {
    let mut e = busy_list();
    let data = data_objects(&e);
    let o = &data[2];
    let at = e.addr(o.frame);
    let state = e.nor.peek(at);
    overwrite(&mut e, at, &[state & !HEAD]);
    let e = violation(&e);
    assert!(e.contains("2 live heads and 1 live tails"), "{e}");
}

#[test]
fn catches_a_data_object_turned_into_a_second_tail() {
    let mut e = busy_list();
    let data = data_objects(&e);
    let o = &data[2];
    let at = e.addr(o.frame);
    let state = e.nor.peek(at);
    overwrite(&mut e, at, &[state & !TAIL]);
    let e = violation(&e);
    assert!(e.contains("1 live heads and 2 live tails"), "{e}");
}

#[test]
fn catches_a_head_marked_obsolete() {
    let mut e = busy_list();
    let head = the(&e, Kind::Head);
    let at = e.addr(head.frame);
    let state = e.nor.peek(at);
    overwrite(&mut e, at, &[state & !LIVE]);
    let e = violation(&e);
    assert!(e.contains("0 live heads and 1 live tails"), "{e}");
}

#[test]
fn catches_ram_holding_the_wrong_head() {
    let mut e = busy_list();
    e.head.frame = data_objects(&e)[0].frame;
    let e = violation(&e);
    assert!(e.contains("RAM's head or tail is not the live one"), "{e}");
}

#[test]
fn catches_ram_holding_the_wrong_tail() {
    let mut e = busy_list();
    e.tail.frame = data_objects(&e)[0].frame;
    let e = violation(&e);
    assert!(e.contains("RAM's head or tail is not the live one"), "{e}");
}

/// Probe counts that do not add up: each probe must end in exactly one outcome, and a
/// pointer moves a search at most once. The busy list's own counts add up, with every
/// outcome seen but `low`: objects start at their level's offset in a block, so a probe
/// meets a lower object only where a block filled past that offset.
#[test]
fn catches_probe_counts_that_do_not_add_up() {
    let healthy = busy_list();
    let p = healthy.probes;
    for (outcome, n) in [
        ("successful", p.successful),
        ("over", p.over),
        ("back", p.back),
        ("null", p.null),
    ] {
        assert!(n > 0, "no {outcome} probe in the busy list: {p:?}");
    }
    type Change = (&'static str, fn(&mut Engine));
    let changes: [Change; 7] = [
        ("probes", |e| e.probes.probes += 1),
        ("successful", |e| e.probes.successful += 1),
        ("low", |e| e.probes.low += 1),
        ("over", |e| e.probes.over += 1),
        ("back", |e| e.probes.back += 1),
        ("null", |e| e.probes.null += 1),
        ("pointers visited", |e| {
            e.probes.pointers_visited = e.probes.successful - 1
        }),
    ];
    for (what, change) in changes {
        let mut e = busy_list();
        change(&mut e);
        let e = violation(&e);
        assert!(e.contains("probe counts do not add up"), "{what}: {e}");
    }
    // Every pointer visited moving the search once is the bound, not past it.
    let mut e = busy_list();
    e.probes.pointers_visited = e.probes.successful;
    e.check()
        .expect("as many successful probes as pointers visited");
}

#[test]
fn catches_an_object_whose_bounds_reach_into_the_next_ones_range() {
    let mut e = busy_list();
    let (o, next) = roomy_data_object(&e, 1);
    let (next_min, _) = next.bounds();
    // The next object's smallest key, logged into this object's min-max area.
    write_slot(&mut e, o.frame, o.front(), next_min);
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "ranges of {:?} and {:?} overlap",
            o.frame, next.frame
        )),
        "{e}"
    );
}

#[test]
fn catches_a_level_0_pointer_that_skips_an_object() {
    let mut e = busy_list();
    let data = data_objects(&e);
    let (o, skipped, after) = (&data[0], &data[1], &data[2]);
    let entry = o.current_level_0_entry();
    let (after_ptr, skipped_ptr) = (ptr_of(&e, after), ptr_of(&e, skipped));
    assert_ne!(after_ptr, skipped_ptr);
    write_ptr(&mut e, o.frame, entry, encode_ptr(0, after_ptr));
    let e = violation(&e);
    assert!(
        e.contains(&format!(
            "{:?} (Data, min {}) points to {:?} on level 0, expected {skipped_ptr:?}",
            o.frame,
            o.bounds().0,
            Some(after_ptr),
        )),
        "{e}"
    );
}

#[test]
fn catches_a_tail_that_does_not_point_back_to_the_head() {
    let mut e = busy_list();
    let tail = the(&e, Kind::Tail);
    let head = ptr_of(&e, &the(&e, Kind::Head));
    let first = ptr_of(&e, &data_objects(&e)[0]);
    let entry = tail.current_level_0_entry();
    write_ptr(&mut e, tail.frame, entry, encode_ptr(0, first));
    let e = violation(&e);
    // The tail holds no key: its min is the checker's starting value.
    assert!(
        e.contains(&format!(
            "{:?} (Tail, min {}) points to {:?} on level 0, expected {head:?}",
            tail.frame,
            i64::MAX,
            Some(first),
        )),
        "{e}"
    );
}

/// A live object whose level is above the list's top level: every chain the checker walks
/// (levels 0 to top) would still hold, so the level itself is checked. Boot, which climbs
/// from a random object on that object's own level (on this list the eighth reboot starts at
/// the head), refuses it as corrupt rather than looking for a pointer that is not there.
#[test]
fn catches_a_head_whose_level_is_above_the_lists_top_level() {
    let mut e = busy_list();
    let head = the(&e, Kind::Head);
    let at = e.addr(head.frame);
    let state = e.nor.peek(at);
    assert_eq!(
        decode_state(state),
        State::Live {
            kind: Kind::Head,
            level: 4
        }
    );
    overwrite(&mut e, at, &[(state & !LEVEL_MASK) | 5]);
    let message = violation(&e);
    assert!(
        message.contains("level 5 above the list's top level 4"),
        "{message}"
    );
    for boots in 1..=12 {
        match e.reboot(boots) {
            Ok(_) => {}
            Err(error) => {
                let text = error.to_string();
                assert!(text.contains("above the list's top level 4"), "{text}");
                return;
            }
        }
    }
    panic!("no reboot met the head, whose level is above the top");
}

fn state_hash(index: &super::ListIndex) -> u64 {
    let mut hasher = flashkit_core::StateHasher::new();
    index.hash_state(&mut hasher);
    hasher.finish()
}

/// Every part of the fat list's state reaches its state hash, each in a place of its own:
/// the flash (through the device's own hash, here its counters), and each field RAM keeps.
#[test]
fn every_part_of_the_state_reaches_the_state_hash() {
    use rand::RngCore;
    let busy = super::ListIndex::new(busy_list(), "fatlist");
    let base = state_hash(&busy);
    type Change = (&'static str, fn(&mut super::ListIndex));
    let changes: Vec<Change> = vec![
        ("the flash", |l| {
            l.engine.nor.read(WordAddr(0), Cause::Host);
        }),
        ("a spare block", |l| l.engine.spare[1] += 1),
        ("the head's frame", |l| l.engine.head.frame.offset += 1),
        ("the head's block", |l| l.engine.head.frame.block += 1),
        ("the head's epoch", |l| l.engine.head.epoch += 1),
        ("the tail's frame", |l| l.engine.tail.frame.offset += 1),
        ("the tail's epoch", |l| l.engine.tail.epoch += 1),
        ("the cause charged", |l| l.engine.cause = Cause::Gc),
        ("the level stream", |l| {
            l.engine.level_rng.next_u32();
        }),
        ("the allocation stream", |l| {
            l.engine.alloc_rng.next_u32();
        }),
        ("the seed", |l| l.engine.seed += 1),
        ("the boots", |l| l.engine.boots += 1),
        ("probes: pointers visited", |l| {
            l.engine.probes.pointers_visited += 1
        }),
        ("probes: probes", |l| l.engine.probes.probes += 1),
        ("probes: successful", |l| l.engine.probes.successful += 1),
        ("probes: low", |l| l.engine.probes.low += 1),
        ("probes: over", |l| l.engine.probes.over += 1),
        ("probes: back", |l| l.engine.probes.back += 1),
        ("probes: null", |l| l.engine.probes.null += 1),
        ("objects written", |l| l.engine.counts.objects_written += 1),
        ("splits", |l| l.engine.counts.splits += 1),
        ("merges", |l| l.engine.counts.merges += 1),
        ("shift merges", |l| l.engine.counts.shift_merges += 1),
        ("compactions", |l| l.engine.counts.compactions += 1),
        ("relocations", |l| l.engine.counts.relocations += 1),
        ("collections", |l| l.engine.counts.gc_runs += 1),
        ("objects collected", |l| {
            l.engine.counts.gc_objects_moved += 1
        }),
        ("a queued merge", |l| l.engine.merge_queue.push(30)),
        ("which merge is queued", |l| l.engine.merge_queue.push(40)),
        ("an open move log", |l| {
            l.engine.moves.push(Move::Block { from: 0, to: 7 })
        }),
        ("a deferred tail", |l| {
            let tail = l.engine.tail;
            l.engine.deferred_tails.push(tail)
        }),
        ("queued work", |l| {
            let head = l.engine.head;
            l.engine.tasks.push(Task::NewHead(head))
        }),
        ("a loop draining it", |l| l.engine.draining = true),
        ("a lost index", |l| {
            l.lost = Some(crate::nor::IndexError::KeyReserved { key: 0 })
        }),
    ];
    let mut seen = vec![base];
    for (part, change) in changes {
        let mut index = super::ListIndex::new(busy_list(), "fatlist");
        assert_eq!(state_hash(&index), base, "the same writes, the same hash");
        change(&mut index);
        let h = state_hash(&index);
        assert!(
            !seen.contains(&h),
            "{part} does not reach the state hash on its own"
        );
        seen.push(h);
    }
}

/// A one-level list whose last object points back to its first, a circle that misses the
/// tail (in turnstiles of two blocks, so that each pointer names one frame): boot's walk
/// moves only to larger keys, so it stops at the last object with an error rather than
/// going round. A boot that lands on the tail itself steps to the head as usual, and the
/// checker refuses the list.
#[test]
fn boot_refuses_a_list_whose_pointers_run_in_a_circle() {
    let cfg = ListConfig {
        turnstile_blocks: 2,
        max_levels: 1,
        pointers: PointerArea::Pool { entries: 3 },
        ..fat_config()
    };
    let nor = NorDevice::new(NorGeometry::new(2048, 32).expect("valid geometry"));
    let mut e = Engine::create(nor, cfg, "fatlist", 7).expect("create");
    for i in 0..400u32 {
        e.put(i * 7919 % 400 * 10, i).expect("insert");
    }
    let data = data_objects(&e);
    let last = &data[data.len() - 1];
    let first = ptr_of(&e, &data[0]);
    write_ptr(
        &mut e,
        last.frame,
        last.current_level_0_entry(),
        encode_ptr(0, first),
    );
    let mut refused = 0;
    for boots in 1..=10 {
        match e.reboot(boots) {
            Err(error) => {
                let text = error.to_string();
                let want = format!("object at {:?} has no successor on level 0", last.frame);
                assert!(text.contains(&want), "{text}");
                refused += 1;
            }
            Ok(_) => {
                let message = violation(&e);
                assert!(message.contains("on level 0, expected"), "{message}");
            }
        }
    }
    assert!(refused > 0, "every boot landed on the tail");
}
