//! Insertion, update and deletion (sections 0.3.3 and 0.5): spare pointers, out-of-place
//! rewrites when they run out, delayed split, lazy and shift merge.

use super::layout::{self, Contents, Kind, PointerArea, Ptr, encode_ptr, split};
use super::search::Bound;
use super::{Cur, Engine, Frame, Full, Handle, Move};
use crate::nor::{IndexError, Key, Value};

/// Work left by a structural change. Re-pointing a predecessor can relocate it, which
/// re-points its own predecessors, and so on (pointer-update propagation, section 0.3.3),
/// possibly the length of a list: the work is a stack of tasks run last-in first-out, the
/// order of the recursion it replaces, without the recursion's depth.
pub(super) enum Task {
    /// Log pointer changes into an object (relocating it if they do not fit).
    Update {
        handle: Handle,
        changes: Vec<(u8, Ptr)>,
    },
    /// Mark an object obsolete.
    Invalidate(Handle),
    /// Log that an object was rewritten elsewhere, for handles still held.
    Moved { from: Handle, to: Handle },
    /// Searches start from this head now.
    NewHead(Handle),
}

/// A slot's four words.
fn slot_words(key: Key, value: Value) -> [u16; 4] {
    let [a, b] = split(key);
    let [c, d] = split(value);
    [a, b, c, d]
}

/// Lazy merges carried out at the end of one operation, at most: the rest wait for the next.
const MERGES_PER_OPERATION: usize = 8;

impl Engine {
    /// Finish a top-level operation: re-point the predecessors of relocated tails, then run
    /// lazy merges queued by garbage collection, then close the move log (`settle`), so that
    /// no handle but the head's and the tail's outlives the operation. (An operation that
    /// fails leaves its moves logged: the head and tail handles replay them, and the next
    /// operation's handles start after them, until that operation closes the log.)
    fn finish(&mut self) -> Result<(), IndexError> {
        let mut merges = 0;
        loop {
            if let Some(old) = self.deferred_tails.pop() {
                self.retire_tail(old)?;
                continue;
            }
            if merges < MERGES_PER_OPERATION
                && let Some(key) = self.merge_queue.pop()
            {
                merges += 1;
                self.lazy_merge(key)?;
                continue;
            }
            break;
        }
        self.settle();
        Ok(())
    }

    fn handle_of(&self, cur: &Cur) -> Handle {
        self.handle(cur.frame)
    }

    /// The predecessors of an object on every level.
    fn preds_of(&mut self, cur: &Cur) -> Vec<Handle> {
        match cur.kind {
            Kind::Head => vec![self.tail; self.levels() as usize],
            Kind::Tail | Kind::Data => {
                let path = self.search(Bound::Lt(cur.min));
                path.preds.iter().map(|c| self.handle_of(c)).collect()
            }
        }
    }

    /// Insert or update (a soft list: one key per object; a fat list: section 0.5).
    pub(super) fn put(&mut self, key: Key, value: Value) -> Result<bool, IndexError> {
        let path = self.search(Bound::Le(i64::from(key)));
        let is_new = if self.cfg.key_limit == 1 {
            self.put_soft(&path.preds, key, value)?
        } else {
            self.put_fat(&path.preds, key, value)?
        };
        self.finish()?;
        Ok(is_new)
    }

    fn put_soft(&mut self, preds: &[Cur], key: Key, value: Value) -> Result<bool, IndexError> {
        let cur = preds[0];
        if cur.kind == Kind::Data && cur.min == i64::from(key) {
            let full = self.read_full(cur.frame);
            if full.live_pairs() == [(key, value)] {
                return Ok(false);
            }
            let run = [self.handle_of(&cur)];
            let preds = self.preds_of(&cur);
            let contents = Contents {
                pairs: vec![(key, value)],
                level: full.level,
                next: Vec::new(),
            };
            self.replace(&run, &preds, vec![contents], &[], None)?;
            self.counts.compactions += 1;
            return Ok(false);
        }
        let handles: Vec<Handle> = preds.iter().map(|c| self.handle_of(c)).collect();
        let level = self.random_level();
        let contents = Contents {
            pairs: vec![(key, value)],
            level,
            next: Vec::new(),
        };
        self.replace(&[], &handles, vec![contents], &[], None)?;
        Ok(true)
    }

    fn put_fat(&mut self, preds: &[Cur], key: Key, value: Value) -> Result<bool, IndexError> {
        let mut cur = preds[0];
        if cur.kind == Kind::Head {
            let first = self.successor(&cur);
            if first.kind == Kind::Tail {
                let handles: Vec<Handle> = preds.iter().map(|c| self.handle_of(c)).collect();
                let contents = Contents {
                    pairs: vec![(key, value)],
                    level: self.random_level(),
                    next: Vec::new(),
                };
                self.replace(&[], &handles, vec![contents], &[], None)?;
                return Ok(true);
            }
            cur = first;
        }
        let full = self.read_full(cur.frame);
        let existing = full.slots.iter().find(|s| s.3 && s.1 == key).copied();
        if let Some((_, _, old, _)) = existing
            && old == value
        {
            return Ok(false);
        }
        let is_new = existing.is_none();
        if full.free_slots(self.cfg.slots) == 0 {
            self.restructure(&cur, &full, Some((key, value)))?;
            return Ok(is_new);
        }
        let k = i64::from(key);
        let widens = k < full.min_bound || k > full.max_bound;
        let slot = if widens {
            full.front
        } else {
            self.cfg.slots - 1 - full.back
        };
        let at = self.addr(cur.frame).offset(self.lay.slot(slot));
        self.nor
            .program_words(at, &slot_words(key, value), self.cause)?;
        if let Some((old_slot, ..)) = existing {
            self.clear_slot(cur.frame, &full, old_slot)?;
        }
        Ok(is_new)
    }

    fn clear_slot(&mut self, frame: Frame, full: &Full, slot: u32) -> Result<(), IndexError> {
        let w = (slot / 16) as usize;
        let word = full.bitmap[w] & !(1 << (slot % 16));
        let at = self.addr(frame).offset(self.lay.bitmap() + w as u32);
        self.nor.program(at, word, self.cause)?;
        Ok(())
    }

    /// The object's slots are full: split (delayed split, 0.5.2), merge (lazy merge, 0.5.3)
    /// or rewrite it compacted.
    fn restructure(
        &mut self,
        cur: &Cur,
        full: &Full,
        op: Option<(Key, Value)>,
    ) -> Result<(), IndexError> {
        let mut pairs = full.live_pairs();
        if let Some((key, value)) = op {
            match pairs.binary_search_by_key(&key, |p| p.0) {
                Ok(i) => pairs[i].1 = value,
                Err(i) => pairs.insert(i, (key, value)),
            }
        }
        let n = self.cfg.key_limit as usize;
        let run = [self.handle_of(cur)];
        if pairs.len() > n {
            let upper = pairs.split_off(pairs.len() / 2);
            let lower = Contents {
                pairs,
                level: full.level,
                next: Vec::new(),
            };
            let upper = Contents {
                pairs: upper,
                level: self.random_level(),
                next: Vec::new(),
            };
            let preds = self.preds_of(cur);
            self.replace(&run, &preds, vec![lower, upper], &[], None)?;
            self.counts.splits += 1;
            return Ok(());
        }
        if pairs.len() < n / 2 && self.merge(cur, full.level, &pairs)? {
            return Ok(());
        }
        let preds = self.preds_of(cur);
        let contents = Contents {
            pairs,
            level: full.level,
            next: Vec::new(),
        };
        self.replace(&run, &preds, vec![contents], &[], None)?;
        self.counts.compactions += 1;
        Ok(())
    }

    /// Merge a poorly used object holding `pairs` with its successor when that one is poorly
    /// used too: shift merge into its free slots if they suffice, otherwise both into a new
    /// object. False when the neighbour is not poorly used (nothing done).
    fn merge(&mut self, cur: &Cur, level: u8, pairs: &[(Key, Value)]) -> Result<bool, IndexError> {
        let next = self.successor(cur);
        if next.kind != Kind::Data {
            return Ok(false);
        }
        let nfull = self.read_full(next.frame);
        let n = self.cfg.key_limit;
        if nfull.live_count() >= n / 2 {
            return Ok(false);
        }
        let preds = self.preds_of(cur);
        let run = self.handle_of(cur);
        if nfull.free_slots(self.cfg.slots) as usize >= pairs.len() {
            // Every key here is below the neighbour's range: each goes to its min-max area.
            for (i, &(k, v)) in pairs.iter().enumerate() {
                let at = self
                    .addr(next.frame)
                    .offset(self.lay.slot(nfull.front + i as u32));
                self.nor.program_words(at, &slot_words(k, v), self.cause)?;
            }
            self.replace(&[run], &preds, Vec::new(), &[], None)?;
            self.counts.shift_merges += 1;
            return Ok(true);
        }
        let mut merged = pairs.to_vec();
        merged.extend(nfull.live_pairs());
        let contents = Contents {
            pairs: merged,
            level: level.max(nfull.level),
            next: Vec::new(),
        };
        let next_handle = self.handle_of(&next);
        self.replace(&[run, next_handle], &preds, vec![contents], &[], None)?;
        self.counts.merges += 1;
        Ok(true)
    }

    /// A merge queued by garbage collection for the object holding `key`.
    fn lazy_merge(&mut self, key: Key) -> Result<(), IndexError> {
        let path = self.search(Bound::Le(i64::from(key)));
        let cur = path.preds[0];
        if cur.kind != Kind::Data {
            return Ok(());
        }
        let full = self.read_full(cur.frame);
        let pairs = full.live_pairs();
        if !pairs.is_empty() && (pairs.len() as u32) < self.cfg.key_limit / 2 {
            self.merge(&cur, full.level, &pairs)?;
        }
        Ok(())
    }

    /// Remove a key.
    pub(super) fn remove(&mut self, key: Key) -> Result<Option<Value>, IndexError> {
        let path = self.search(Bound::Le(i64::from(key)));
        let cur = path.preds[0];
        if cur.kind != Kind::Data {
            self.finish()?;
            return Ok(None);
        }
        let full = self.read_full(cur.frame);
        let Some(&(slot, _, value, _)) = full.slots.iter().find(|s| s.3 && s.1 == key) else {
            self.finish()?;
            return Ok(None);
        };
        if full.live_count() == 1 {
            let preds = self.preds_of(&cur);
            let run = [self.handle_of(&cur)];
            self.replace(&run, &preds, Vec::new(), &[], None)?;
        } else {
            self.clear_slot(cur.frame, &full, slot)?;
        }
        self.finish()?;
        Ok(Some(value))
    }

    /// Swap the run of consecutive objects `run` (possibly empty) for `new` objects, given
    /// the run's predecessors on every level; `pending` overrides successors (a relocation
    /// carrying pointer changes). Returns the new objects' handles.
    pub(super) fn replace(
        &mut self,
        run: &[Handle],
        preds: &[Handle],
        mut new: Vec<Contents>,
        pending: &[(u8, Ptr)],
        relocated: Option<Handle>,
    ) -> Result<Vec<Handle>, IndexError> {
        let mut top = 0u8;
        let mut run_levels = Vec::with_capacity(run.len());
        for &h in run {
            let frame = self.resolve(h);
            let level = match self.state(frame) {
                layout::State::Live { level, .. } => level,
                other => panic!("invariant: a run object is live ({frame:?} is {other:?})"),
            };
            run_levels.push(level);
            top = top.max(level);
        }
        top = new
            .iter()
            .map(|c| c.level)
            .chain(pending.iter().map(|p| p.0))
            .fold(top, u8::max);
        let mut pred_ptr = Vec::with_capacity(top as usize + 1);
        for l in 0..=top {
            let frame = self.resolve(preds[l as usize]);
            pred_ptr.push(self.read_ptr(frame, l));
        }
        let mut succ = pred_ptr.clone();
        for (&h, &level) in run.iter().zip(&run_levels) {
            let frame = self.resolve(h);
            for l in 0..=level {
                succ[l as usize] = self.read_ptr(frame, l);
            }
        }
        for &(l, ptr) in pending {
            succ[l as usize] = ptr;
        }
        let mut handles = Vec::with_capacity(new.len());
        for contents in new.iter_mut().rev() {
            contents.next = succ[..=contents.level as usize].to_vec();
            let h = self.write_new(Kind::Data, contents)?;
            let ptr = self.ptr_of(self.resolve(h));
            for l in 0..=contents.level {
                succ[l as usize] = ptr;
            }
            handles.push(h);
        }
        handles.reverse();
        // Run last-in first-out: predecessors are re-pointed, then the run is invalidated,
        // then a relocated object's move is logged.
        if let Some(from) = relocated {
            self.tasks.push(Task::Moved {
                from,
                to: handles[0],
            });
        }
        for &h in run.iter().rev() {
            self.tasks.push(Task::Invalidate(h));
        }
        self.repoint(preds, &pred_ptr, &succ);
        self.drain()?;
        Ok(handles)
    }

    /// Run queued work until none is left, unless an outer call is already doing so (then
    /// the new tasks, on top of the stack, are the next it runs: the order of a recursion
    /// without its depth).
    fn drain(&mut self) -> Result<(), IndexError> {
        if self.draining {
            return Ok(());
        }
        self.draining = true;
        let mut result = Ok(());
        while let Some(task) = self.tasks.pop() {
            result = match task {
                Task::Update { handle, changes } => self.update_pointers(handle, &changes),
                Task::Invalidate(handle) => self.invalidate(handle),
                Task::Moved { from, to } => {
                    let from = self.resolve(from);
                    let to = self.resolve(to);
                    self.moves.push(Move::Object { from, to });
                    Ok(())
                }
                Task::NewHead(handle) => {
                    self.head = handle;
                    Ok(())
                }
            };
            if result.is_err() {
                self.tasks.clear();
                break;
            }
        }
        self.draining = false;
        result
    }

    /// Point each level's predecessor at its new successor, one update per distinct
    /// predecessor.
    fn repoint(&mut self, preds: &[Handle], old: &[Ptr], new: &[Ptr]) {
        let mut groups: Vec<(Handle, Vec<(u8, Ptr)>)> = Vec::new();
        for l in 0..old.len() {
            if old[l] == new[l] {
                continue;
            }
            let frame = self.resolve(preds[l]);
            match groups.iter_mut().find(|g| self.resolve(g.0) == frame) {
                Some(group) => group.1.push((l as u8, new[l])),
                None => groups.push((preds[l], vec![(l as u8, new[l])])),
            }
        }
        for (handle, changes) in groups.into_iter().rev() {
            self.tasks.push(Task::Update { handle, changes });
        }
    }

    /// Log pointer changes into an object's spare pointer entries; relocate the object
    /// when they do not fit (section 0.3.3).
    fn update_pointers(&mut self, handle: Handle, changes: &[(u8, Ptr)]) -> Result<(), IndexError> {
        let frame = self.resolve(handle);
        let mut full = Full::default();
        let kind = match self.state(frame) {
            layout::State::Live { kind, level } => {
                full.level = level;
                kind
            }
            other => panic!("invariant: a predecessor is live ({frame:?} is {other:?})"),
        };
        self.read_pointers(frame, &mut full);
        let changes: Vec<(u8, Ptr)> = changes
            .iter()
            .copied()
            .filter(|&(l, p)| full.next[l as usize] != p)
            .collect();
        if changes.is_empty() {
            return Ok(());
        }
        if let Some(entries) = self.free_entries(&full, &changes) {
            for (&(l, ptr), entry) in changes.iter().zip(entries) {
                let at = self.addr(frame).offset(self.lay.ptr(entry));
                self.nor
                    .program_words(at, &encode_ptr(l, ptr), self.cause)?;
            }
            return Ok(());
        }
        self.counts.relocations += 1;
        match kind {
            Kind::Head => self.relocate_head(handle, &full, &changes),
            Kind::Tail => self.relocate_tail(handle, &full, &changes),
            Kind::Data => {
                let data = self.read_full(frame);
                let cur = Cur {
                    frame,
                    kind,
                    level: data.level,
                    min: data.min_bound,
                };
                let preds = self.preds_of(&cur);
                let contents = Contents {
                    pairs: data.live_pairs(),
                    level: data.level,
                    next: Vec::new(),
                };
                self.replace(&[handle], &preds, vec![contents], &changes, Some(handle))?;
                Ok(())
            }
        }
    }

    /// Entries for `changes`, if the object has room for all of them.
    fn free_entries(&self, full: &Full, changes: &[(u8, Ptr)]) -> Option<Vec<u32>> {
        match self.lay.ptr_run {
            PointerArea::Pool { entries } => {
                let used = full.ptr_used[0];
                (used + changes.len() as u32 <= entries)
                    .then(|| (used..used + changes.len() as u32).collect())
            }
            PointerArea::PerLevel { slots } => {
                let mut out = Vec::with_capacity(changes.len());
                for &(l, _) in changes {
                    let used = full.ptr_used[l as usize];
                    if used >= slots {
                        return None;
                    }
                    out.push(self.lay.ptr_entries_of(l).start + used);
                }
                Some(out)
            }
        }
    }

    fn with_changes(full: &Full, changes: &[(u8, Ptr)]) -> Vec<Ptr> {
        let mut next = full.next.to_vec();
        for &(l, p) in changes {
            next[l as usize] = p;
        }
        next
    }

    /// The head's pointers are used up: rewrite it; the tail is re-pointed. The tail keeps
    /// a single pointer to the head (level 0): boot-up initialization needs one step from the
    /// tail to the head, and a pointer per level would make every head rewrite cost the tail
    /// as many entries as there are levels, more than its spares, so head and tail rewrites
    /// would chase each other.
    fn relocate_head(
        &mut self,
        old: Handle,
        full: &Full,
        changes: &[(u8, Ptr)],
    ) -> Result<(), IndexError> {
        let contents = Contents {
            pairs: Vec::new(),
            level: full.level,
            next: Self::with_changes(full, changes),
        };
        let new = self.write_new(Kind::Head, &contents)?;
        let ptr = self.ptr_of(self.resolve(new));
        let tail = self.tail;
        // Last in, first out: re-point the tail, invalidate the old head, log the move, and
        // only then make the new head the one searches start from.
        self.tasks.push(Task::NewHead(new));
        self.tasks.push(Task::Moved { from: old, to: new });
        self.tasks.push(Task::Invalidate(old));
        self.tasks.push(Task::Update {
            handle: tail,
            changes: vec![(0, ptr)],
        });
        self.drain()
    }

    /// The tail's pointers are used up: rewrite it now, and re-point its predecessors when
    /// the operation is over (`retire_tail`). Finding them walks every level to its end,
    /// which must not happen while the operation has old and new objects side by side.
    fn relocate_tail(
        &mut self,
        old: Handle,
        full: &Full,
        changes: &[(u8, Ptr)],
    ) -> Result<(), IndexError> {
        let contents = Contents {
            pairs: Vec::new(),
            level: full.level,
            next: Self::with_changes(full, changes)[..1].to_vec(),
        };
        let new = self.write_new(Kind::Tail, &contents)?;
        self.tail = new;
        // No move is logged: the old tail stays live until `retire_tail`, which needs its
        // own frame. Nothing else holds a handle to a tail.
        let old = self.handle(self.resolve(old));
        if self.ptr_of(self.resolve(new)) == self.ptr_of(self.resolve(old)) {
            return self.invalidate(old);
        }
        self.deferred_tails.push(old);
        Ok(())
    }

    fn retire_tail(&mut self, old: Handle) -> Result<(), IndexError> {
        let path = self.search(Bound::Lt(i64::MAX));
        let preds: Vec<Handle> = path.preds.iter().map(|c| self.handle_of(c)).collect();
        let ptr = self.ptr_of(self.resolve(self.tail));
        let old_ptr = self.ptr_of(self.resolve(old));
        let levels = self.levels() as usize;
        self.tasks.push(Task::Invalidate(old));
        self.repoint(&preds, &vec![old_ptr; levels], &vec![ptr; levels]);
        self.drain()
    }
}
