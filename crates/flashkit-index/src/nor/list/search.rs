//! Reading objects, de-referencing soft pointers (Fig. 8, Fig. 12) and searching
//! (Algorithm 1 over levels, section 0.4.1).

use super::layout::{Kind, Ptr, State, decode_ptr, decode_state, join};
use super::{Cur, Engine, Frame, Full};
use crate::nor::{Key, Value};
use smallvec::SmallVec;

/// How far a search may move: to objects whose smallest key is at most the target
/// (`Le`, a lookup) or below it (`Lt`, the predecessors of an object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    Le(i64),
    Lt(i64),
}

impl Bound {
    #[inline]
    fn admits(self, min: i64) -> bool {
        match self {
            Bound::Le(t) => min <= t,
            Bound::Lt(t) => min < t,
        }
    }
}

/// What a search found: the last object passed on each level, lowest first.
pub(crate) struct Path {
    pub preds: Vec<Cur>,
}

/// One step of a traced search (for the paper's worked examples).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A probe that moved the search to this key.
    Moved(Key),
    /// A probe of an object past the searched key.
    Over(Key),
    /// A probe of an object before the current one.
    Back(Key),
    /// A probe of an object that does not hook on the level.
    Low,
    /// A probe of free space or an invalid object.
    Null,
}

impl Engine {
    #[inline]
    pub(super) fn read_word(&mut self, frame: Frame, word: u32) -> u16 {
        let addr = self.addr(frame).offset(word);
        self.nor.read(addr, self.cause)
    }

    #[inline]
    pub(super) fn read2(&mut self, frame: Frame, word: u32) -> u32 {
        let addr = self.addr(frame).offset(word);
        let w = self.nor.read_words(addr, 2, self.cause);
        join(w[0], w[1])
    }

    #[inline]
    pub(super) fn state(&mut self, frame: Frame) -> State {
        decode_state(self.read_word(frame, 0))
    }

    /// The current pointer of `level`: the last entry of its run with that level, reading
    /// entries until the first erased one.
    pub(super) fn read_ptr(&mut self, frame: Frame, level: u8) -> Ptr {
        let run = self.lay.ptr_entries_of(level);
        let mut found = None;
        for entry in run {
            let at = self.lay.ptr(entry);
            let addr = self.addr(frame).offset(at);
            let w = self.nor.read_words(addr, 2, self.cause);
            match decode_ptr([w[0], w[1]]) {
                None => break,
                Some((l, ptr)) if l == level => found = Some(ptr),
                Some(_) => {}
            }
        }
        found.unwrap_or_else(|| {
            panic!(
                "invariant: every live object has a pointer on each of its levels ({:?}, level {level})",
                frame
            )
        })
    }

    /// The min-max area: the first key, then the rest of the area until an erased key.
    /// Returns (first key, smallest key, largest key).
    fn read_bounds(&mut self, frame: Frame) -> (i64, i64, i64) {
        let first = i64::from(self.read2(frame, self.lay.slot(0)));
        let (min, max) = self.read_bounds_after(frame, first);
        (first, min, max)
    }

    fn read_bounds_after(&mut self, frame: Frame, first: i64) -> (i64, i64) {
        let (mut min, mut max) = (first, first);
        for slot in 1..self.lay.slots {
            let key = self.read2(frame, self.lay.slot(slot));
            if key == u32::MAX {
                break;
            }
            min = min.min(i64::from(key));
            max = max.max(i64::from(key));
        }
        (min, max)
    }

    /// A search position for the live object at `frame` whose state is known.
    pub(super) fn cur_at(&mut self, frame: Frame, kind: Kind, level: u8) -> Cur {
        let min = match kind {
            Kind::Head => -1,
            Kind::Tail => i64::MAX,
            Kind::Data => self.read_bounds(frame).1,
        };
        Cur {
            frame,
            kind,
            level,
            min,
        }
    }

    /// The head as a search position.
    pub(super) fn head_cur(&mut self) -> Cur {
        let frame = self.resolve(self.head);
        Cur {
            frame,
            kind: Kind::Head,
            level: self.top_level(),
            min: -1,
        }
    }

    /// De-reference `cur`'s level-`level` soft pointer (Fig. 8): the first probe that is
    /// live, hooks on the level, lies after `cur` and within `bound`.
    pub(super) fn step(
        &mut self,
        cur: &Cur,
        level: u8,
        bound: Bound,
        mut trace: Option<&mut Vec<Probe>>,
    ) -> Option<Cur> {
        let ptr = self.read_ptr(cur.frame, level);
        self.probes.pointers_visited += 1;
        for block in self.probe_blocks(ptr.turnstile) {
            let frame = Frame {
                block,
                offset: ptr.offset,
            };
            self.probes.probes += 1;
            let outcome = self.classify(cur, frame, level, bound);
            if let Some(t) = trace.as_deref_mut() {
                t.push(outcome.1.clone());
            }
            if let Some(next) = outcome.0 {
                self.probes.successful += 1;
                return Some(next);
            }
        }
        None
    }

    fn classify(
        &mut self,
        cur: &Cur,
        frame: Frame,
        level: u8,
        bound: Bound,
    ) -> (Option<Cur>, Probe) {
        let (kind, obj_level) = match self.state(frame) {
            State::Free | State::Obsolete => {
                self.probes.null += 1;
                return (None, Probe::Null);
            }
            State::Live { kind, level } => (kind, level),
        };
        if obj_level < level {
            self.probes.low += 1;
            return (None, Probe::Low);
        }
        match kind {
            Kind::Head => {
                self.probes.back += 1;
                return (None, Probe::Back(0));
            }
            Kind::Tail if bound.admits(i64::MAX) => {
                // Only boot-up initialization searches this far: the tail is its goal.
                let next = Cur {
                    frame,
                    kind,
                    level: obj_level,
                    min: i64::MAX,
                };
                return (Some(next), Probe::Moved(u32::MAX));
            }
            Kind::Tail => {
                self.probes.over += 1;
                return (None, Probe::Over(u32::MAX));
            }
            Kind::Data => {}
        }
        if frame == cur.frame {
            self.probes.back += 1;
            return (None, Probe::Back(cur.min as Key));
        }
        // A first key below the current object's smallest puts the object before it
        // without reading the rest of its min-max area.
        let first = i64::from(self.read2(frame, self.lay.slot(0)));
        let min = if first < cur.min {
            first
        } else {
            self.read_bounds_after(frame, first).0
        };
        if min <= cur.min {
            self.probes.back += 1;
            return (None, Probe::Back(min as Key));
        }
        if !bound.admits(min) {
            self.probes.over += 1;
            return (None, Probe::Over(min as Key));
        }
        let next = Cur {
            frame,
            kind,
            level: obj_level,
            min,
        };
        (Some(next), Probe::Moved(min as Key))
    }

    /// Search from the head's top level down (section 0.4.1).
    pub(super) fn search(&mut self, bound: Bound) -> Path {
        let mut cur = self.head_cur();
        let mut preds = vec![cur; self.levels() as usize];
        for level in (0..=self.top_level()).rev() {
            while let Some(next) = self.step(&cur, level, bound, None) {
                cur = next;
            }
            preds[level as usize] = cur;
        }
        Path { preds }
    }

    /// Algorithm 1 on one level from the head, recording every probe (for the worked
    /// examples of section 0.3.2): the keys visited and the probes made.
    pub fn trace_search(&mut self, key: Key) -> (Vec<Key>, Vec<Probe>, bool) {
        let mut cur = self.head_cur();
        let mut visited = Vec::new();
        let mut probes = Vec::new();
        let bound = Bound::Le(i64::from(key));
        // The head's pointer leads to the first key: the paper's searches begin there.
        if let Some(first) = self.step(&cur, 0, bound, None) {
            cur = first;
            visited.push(cur.min as Key);
        }
        while cur.min != i64::from(key) {
            match self.step(&cur, 0, bound, Some(&mut probes)) {
                Some(next) => {
                    cur = next;
                    visited.push(cur.min as Key);
                }
                None => return (visited, probes, false),
            }
        }
        (visited, probes, true)
    }

    /// Look a key up in one object: bitmap, keys until the ends of both areas, and the
    /// value of the live match.
    pub(super) fn lookup_in(&mut self, frame: Frame, key: Key) -> Option<Value> {
        let bw = self.lay.bitmap_words;
        let at = self.addr(frame).offset(self.lay.bitmap());
        let mut bitmap = [0u16; 8];
        bitmap[..bw as usize].copy_from_slice(self.nor.read_words(at, bw, self.cause));
        let live = |slot: u32| bitmap[(slot / 16) as usize] & (1 << (slot % 16)) != 0;
        let m = self.lay.slots;
        let mut front = 0;
        while front < m {
            let k = self.read2(frame, self.lay.slot(front));
            if k == u32::MAX {
                break;
            }
            if k == key && live(front) {
                return Some(self.read2(frame, self.lay.slot(front) + 2));
            }
            front += 1;
        }
        let mut slot = m;
        while slot > front {
            slot -= 1;
            let k = self.read2(frame, self.lay.slot(slot));
            if k == u32::MAX {
                break;
            }
            if k == key && live(slot) {
                return Some(self.read2(frame, self.lay.slot(slot) + 2));
            }
        }
        None
    }

    /// Read an object in full: state, bitmap, written slots and pointer entries.
    pub(super) fn read_full(&mut self, frame: Frame) -> Full {
        let mut full = Full::default();
        let level = match self.state(frame) {
            State::Live { kind, level } => {
                full.kind = Some(kind);
                level
            }
            _ => return full,
        };
        full.level = level;
        let lay = self.lay;
        full.bitmap = SmallVec::from_slice(self.nor.read_words(
            self.addr(frame).offset(lay.bitmap()),
            lay.bitmap_words,
            self.cause,
        ));
        let live =
            |bitmap: &[u16], slot: u32| bitmap[(slot / 16) as usize] & (1 << (slot % 16)) != 0;
        let read_slot = |engine: &mut Engine, slot: u32| -> Option<(Key, u32)> {
            let w =
                engine
                    .nor
                    .read_words(engine.addr(frame).offset(lay.slot(slot)), 4, engine.cause);
            let key = join(w[0], w[1]);
            (key != u32::MAX).then(|| (key, join(w[2], w[3])))
        };
        while full.front < lay.slots {
            match read_slot(self, full.front) {
                Some((k, v)) => {
                    let ok = live(&full.bitmap, full.front);
                    full.slots.push((full.front, k, v, ok));
                    full.front += 1;
                }
                None => break,
            }
        }
        while full.front + full.back < lay.slots {
            let slot = lay.slots - 1 - full.back;
            match read_slot(self, slot) {
                Some((k, v)) => {
                    let ok = live(&full.bitmap, slot);
                    full.slots.push((slot, k, v, ok));
                    full.back += 1;
                }
                None => break,
            }
        }
        full.min_bound = i64::MAX;
        full.max_bound = -1;
        for &(slot, key, _, _) in &full.slots {
            if slot < full.front {
                full.min_bound = full.min_bound.min(i64::from(key));
                full.max_bound = full.max_bound.max(i64::from(key));
            }
        }
        self.read_pointers(frame, &mut full);
        full
    }

    pub(super) fn read_pointers(&mut self, frame: Frame, full: &mut Full) {
        let lay = self.lay;
        full.next = SmallVec::from_elem(
            Ptr {
                turnstile: 0,
                offset: 0,
            },
            full.level as usize + 1,
        );
        let runs = lay.ptr_runs(full.level);
        for run in runs {
            let mut used = 0;
            for entry in run {
                let w = self
                    .nor
                    .read_words(self.addr(frame).offset(lay.ptr(entry)), 2, self.cause);
                match decode_ptr([w[0], w[1]]) {
                    None => break,
                    Some((l, ptr)) => {
                        if l <= full.level {
                            full.next[l as usize] = ptr;
                        }
                        used += 1;
                    }
                }
            }
            full.ptr_used.push(used);
        }
    }

    /// The object after `cur` on level 0, by the range-query flow of Fig. 12: every live
    /// probe's first key is read, and the smallest one after `cur` wins.
    pub(super) fn successor(&mut self, cur: &Cur) -> Cur {
        let ptr = self.read_ptr(cur.frame, 0);
        self.probes.pointers_visited += 1;
        let mut best: Option<(i64, Frame, Kind, u8)> = None;
        let mut candidates = 0u64;
        for block in self.probe_blocks(ptr.turnstile) {
            let frame = Frame {
                block,
                offset: ptr.offset,
            };
            self.probes.probes += 1;
            let (kind, level) = match self.state(frame) {
                State::Live { kind, level } => (kind, level),
                _ => {
                    self.probes.null += 1;
                    continue;
                }
            };
            let first = match kind {
                Kind::Head => -1,
                Kind::Tail => i64::MAX,
                Kind::Data if frame == cur.frame => -1,
                Kind::Data => i64::from(self.read2(frame, self.lay.slot(0))),
            };
            if first <= cur.min || (first == -1) {
                self.probes.back += 1;
                continue;
            }
            candidates += 1;
            if best.is_none_or(|b| first < b.0) {
                best = Some((first, frame, kind, level));
            }
        }
        let (_, frame, kind, level) = best.unwrap_or_else(|| {
            panic!(
                "invariant: the level-0 successor of {:?} is among its probes",
                cur.frame
            )
        });
        self.probes.successful += 1;
        self.probes.over += candidates - 1;
        self.cur_at(frame, kind, level)
    }

    /// Append the live pairs of `lo..=hi` in one object, in key order; the largest key bound.
    pub(super) fn collect_range(
        &mut self,
        frame: Frame,
        lo: Key,
        hi: Key,
        out: &mut Vec<(Key, Value)>,
    ) -> i64 {
        // Keys of both areas, then the value of each live key in range: the pointer pool
        // and the other values are not needed.
        let bw = self.lay.bitmap_words;
        let at = self.addr(frame).offset(self.lay.bitmap());
        let mut bitmap = [0u16; 8];
        bitmap[..bw as usize].copy_from_slice(self.nor.read_words(at, bw, self.cause));
        let m = self.lay.slots;
        let start = out.len();
        let mut max = -1i64;
        let mut visit = |e: &mut Engine, slot: u32| -> bool {
            let key = e.read2(frame, e.lay.slot(slot));
            if key == u32::MAX {
                return false;
            }
            max = max.max(i64::from(key));
            let live = bitmap[(slot / 16) as usize] & (1 << (slot % 16)) != 0;
            if live && lo <= key && key <= hi {
                out.push((key, e.read2(frame, e.lay.slot(slot) + 2)));
            }
            true
        };
        let mut front = 0;
        while front < m && visit(self, front) {
            front += 1;
        }
        let mut slot = m;
        while slot > front {
            slot -= 1;
            if !visit(self, slot) {
                break;
            }
        }
        out[start..].sort_unstable();
        max
    }

    /// A range query (section 0.5.4): find the first object, then walk level 0.
    pub(super) fn range_query(&mut self, lo: Key, hi: Key, out: &mut Vec<(Key, Value)>) {
        let path = self.search(Bound::Le(i64::from(lo)));
        let mut cur = path.preds[0];
        if cur.kind == Kind::Head {
            cur = self.successor(&cur);
        }
        while cur.kind == Kind::Data {
            let max = self.collect_range(cur.frame, lo, hi, out);
            if max >= i64::from(hi) {
                break;
            }
            let next = self.successor(&cur);
            if next.kind != Kind::Data || next.min > i64::from(hi) {
                break;
            }
            cur = next;
        }
    }

    /// A lookup.
    pub(super) fn get(&mut self, key: Key) -> Option<Value> {
        let path = self.search(Bound::Le(i64::from(key)));
        let cur = path.preds[0];
        if cur.kind != Kind::Data {
            return None;
        }
        self.lookup_in(cur.frame, key)
    }
}
