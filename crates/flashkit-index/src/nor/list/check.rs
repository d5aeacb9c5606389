//! The invariant checker and content dump, with uncounted peeks.
//!
//! Checked: each turnstile has exactly one spare, wholly erased, and every other block's
//! header is in use; exactly one live head and one live tail, where RAM says; data objects
//! have disjoint, ordered key ranges and hold their live keys inside their min-max bounds,
//! one live slot per key, slots written from both ends with nothing between; on every level
//! each object's current pointer names the next object of that level (in key order) and the
//! tail's single (level-0) pointer names the head; the probe counts add up (each probe has
//! one outcome, and no pointer moves a search twice).

use super::layout::{Kind, Ptr, State, decode_ptr, decode_state, join};
use super::{Engine, Frame};
use crate::nor::{Key, Value};
use flashkit_device::nor::ERASED_WORD;

/// An object as the checker sees it.
struct Seen {
    frame: Frame,
    kind: Kind,
    level: u8,
    min: i64,
    max: i64,
    pairs: Vec<(Key, Value)>,
    next: Vec<Option<Ptr>>,
}

impl Engine {
    fn peek2(&self, frame: Frame, word: u32) -> u32 {
        let w = self.nor.peek_words(self.addr(frame).offset(word), 2);
        join(w[0], w[1])
    }

    fn see(&self, frame: Frame, kind: Kind, level: u8) -> Result<Seen, String> {
        if level > self.top_level() {
            return Err(format!(
                "{frame:?}: level {level} above the list's top level {}",
                self.top_level()
            ));
        }
        let lay = self.lay;
        let bitmap = self
            .nor
            .peek_words(self.addr(frame).offset(lay.bitmap()), lay.bitmap_words);
        let written: Vec<bool> = (0..lay.slots)
            .map(|s| self.peek2(frame, lay.slot(s)) != u32::MAX)
            .collect();
        let front = written.iter().take_while(|&&w| w).count();
        let back = written.iter().rev().take_while(|&&w| w).count();
        if front + back < written.len() && written.iter().filter(|&&w| w).count() != front + back {
            return Err(format!("{frame:?}: slots are not written from both ends"));
        }
        let (mut min, mut max) = (i64::MAX, -1i64);
        let mut pairs = Vec::new();
        for s in 0..lay.slots {
            if !written[s as usize] {
                continue;
            }
            let key = self.peek2(frame, lay.slot(s));
            if (s as usize) < front {
                min = min.min(i64::from(key));
                max = max.max(i64::from(key));
            }
            if bitmap[(s / 16) as usize] & (1 << (s % 16)) != 0 {
                pairs.push((key, self.peek2(frame, lay.slot(s) + 2)));
            }
        }
        pairs.sort_unstable();
        if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(format!("{frame:?}: a key has two live slots"));
        }
        let mut next = vec![None; level as usize + 1];
        let runs = lay.ptr_runs(level);
        for run in runs {
            let mut ended = false;
            for e in run {
                let w = self.nor.peek_words(self.addr(frame).offset(lay.ptr(e)), 2);
                match decode_ptr([w[0], w[1]]) {
                    None => ended = true,
                    Some(_) if ended => {
                        return Err(format!("{frame:?}: pointer entries have a gap"));
                    }
                    Some((l, p)) if l <= level => next[l as usize] = Some(p),
                    Some((l, _)) => {
                        return Err(format!(
                            "{frame:?}: pointer of level {l} above its level {level}"
                        ));
                    }
                }
            }
        }
        if kind == Kind::Data {
            if pairs.is_empty() {
                return Err(format!("{frame:?}: a live data object holds no key"));
            }
            if let Some(&(k, _)) = pairs
                .iter()
                .find(|&&(k, _)| i64::from(k) < min || i64::from(k) > max)
            {
                return Err(format!(
                    "{frame:?}: key {k} lies outside its min-max bounds {min}..={max}"
                ));
            }
        }
        Ok(Seen {
            frame,
            kind,
            level,
            min,
            max,
            pairs,
            next,
        })
    }

    /// Every live object, sorted: head, data by range, tail.
    fn live_objects(&self) -> Result<Vec<Seen>, String> {
        let mut seen = Vec::new();
        for block in 0..self.nor.geometry().blocks() {
            for offset in 0..self.frames_per_block as u16 {
                let frame = Frame { block, offset };
                let word = self.nor.peek(self.addr(frame));
                if let State::Live { kind, level } = decode_state(word) {
                    seen.push(self.see(frame, kind, level)?);
                }
            }
        }
        let rank = |s: &Seen| match s.kind {
            Kind::Head => (0, 0),
            Kind::Data => (1, s.min),
            Kind::Tail => (2, 0),
        };
        seen.sort_by_key(rank);
        Ok(seen)
    }

    fn check_blocks(&self) -> Result<(), String> {
        let t = self.cfg.turnstile_blocks;
        let g = self.nor.geometry();
        for turnstile in 0..self.turnstiles {
            for i in 0..t {
                let block = turnstile * t + i;
                let start = g.block_start(flashkit_core::BlockId(block));
                let header = self.nor.peek(start);
                if i == self.spare[turnstile as usize] {
                    if self
                        .nor
                        .peek_words(start, g.words_per_block())
                        .iter()
                        .any(|&w| w != ERASED_WORD)
                    {
                        return Err(format!(
                            "spare block {block} of turnstile {turnstile} is not erased"
                        ));
                    }
                } else if header != super::layout::BLOCK_IN_USE {
                    return Err(format!(
                        "block {block} is not the spare but its header reads {header:#x}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Check every invariant.
    pub fn check(&self) -> Result<(), String> {
        if !self.moves.is_empty() || !self.deferred_tails.is_empty() || !self.tasks.is_empty() {
            return Err("an operation is still open".into());
        }
        // Each probe ends in exactly one outcome, and a pointer moves a search at most once.
        let p = &self.probes;
        let outcomes = p.successful + p.low + p.over + p.back + p.null;
        if outcomes != p.probes || p.successful > p.pointers_visited {
            return Err(format!(
                "probe counts do not add up: {} probes, {outcomes} outcomes \
                 (successful, low, over, back, null), {} successful of {} pointers visited",
                p.probes, p.successful, p.pointers_visited
            ));
        }
        self.check_blocks()?;
        let objects = self.live_objects()?;
        let heads = objects.iter().filter(|o| o.kind == Kind::Head).count();
        let tails = objects.iter().filter(|o| o.kind == Kind::Tail).count();
        if heads != 1 || tails != 1 {
            return Err(format!("{heads} live heads and {tails} live tails"));
        }
        if objects[0].frame != self.head.frame
            || objects[objects.len() - 1].frame != self.tail.frame
        {
            return Err("RAM's head or tail is not the live one".into());
        }
        for w in objects.windows(2) {
            if w[0].kind == Kind::Data && w[1].kind == Kind::Data && w[0].max >= w[1].min {
                return Err(format!(
                    "ranges of {:?} and {:?} overlap",
                    w[0].frame, w[1].frame
                ));
            }
        }
        for level in 0..self.cfg.max_levels as u8 {
            let chain: Vec<&Seen> = objects.iter().filter(|o| o.level >= level).collect();
            for (i, o) in chain.iter().enumerate() {
                if o.kind == Kind::Tail && level > 0 {
                    continue;
                }
                let want = chain
                    .get(i + 1)
                    .map_or(self.ptr_of(chain[0].frame), |n| self.ptr_of(n.frame));
                if o.next[level as usize] != Some(want) {
                    return Err(format!(
                        "{:?} ({:?}, min {}) points to {:?} on level {level}, expected {want:?}",
                        o.frame, o.kind, o.min, o.next[level as usize]
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every live pair, in key order.
    pub fn contents(&self) -> Result<Vec<(Key, Value)>, String> {
        let objects = self.live_objects()?;
        Ok(objects.into_iter().flat_map(|o| o.pairs).collect())
    }
}
