//! Formatting a fresh list and boot-up initialization (section 0.4.3): the spare block of
//! each turnstile is the one whose header word is still erased; the dummy head is found by
//! picking a random object, climbing levels rightward to the dummy tail, and stepping once
//! more.

use super::layout::{self, BLOCK_IN_USE, Contents, Kind, Layout, MAX_LEVELS, MAX_SLOTS, State};
use super::search::Bound;
use super::{Counts, Cur, Engine, Frame, ListConfig};
use crate::nor::IndexError;
use crate::nor::stats::{BootReport, ProbeStats};
use flashkit_core::{BlockId, Cause, SimRng, SimRngExt};
use flashkit_device::nor::{ERASED_WORD, NorDevice, NorGeometry};
use rand::Rng;

impl Engine {
    pub(super) fn blank(
        nor: NorDevice,
        cfg: ListConfig,
        structure: &'static str,
        seed: u64,
    ) -> Result<Engine, IndexError> {
        let g = *nor.geometry();
        check_list(&cfg, &g, structure)?;
        let lay = Layout::new(cfg.slots, cfg.pointers, cfg.max_levels);
        check_pointers(&cfg, structure)?;
        let (frames, turnstiles) = check_fit(&cfg, &lay, &g, structure)?;
        let placeholder = Frame {
            block: 0,
            offset: 0,
        };
        Ok(Engine {
            nor,
            cfg,
            structure,
            lay,
            frames_per_block: frames,
            turnstiles,
            spare: vec![cfg.turnstile_blocks - 1; turnstiles as usize],
            moves: Vec::new(),
            head: super::Handle {
                frame: placeholder,
                epoch: 0,
            },
            tail: super::Handle {
                frame: placeholder,
                epoch: 0,
            },
            cause: Cause::Host,
            level_rng: SimRng::for_stream(seed, "nor-list/levels"),
            alloc_rng: SimRng::for_stream(seed, "nor-list/alloc"),
            seed,
            boots: 0,
            probes: ProbeStats::default(),
            counts: Counts::default(),
            merge_queue: Vec::new(),
            deferred_tails: Vec::new(),
            tasks: Vec::new(),
            draining: false,
            buf: Vec::new(),
        })
    }

    /// Format `nor` and write an empty list (dummy head and tail) on it.
    pub fn create(
        nor: NorDevice,
        cfg: ListConfig,
        structure: &'static str,
        seed: u64,
    ) -> Result<Engine, IndexError> {
        let mut e = Engine::blank(nor, cfg, structure, seed)?;
        e.cause = Cause::Metadata;
        let g = *e.nor.geometry();
        for block in 0..g.blocks() {
            let start = g.block_start(BlockId(block));
            if e.nor
                .peek_words(start, g.words_per_block())
                .iter()
                .any(|&w| w != ERASED_WORD)
            {
                e.nor.erase(BlockId(block), Cause::Metadata)?;
            }
            if block % cfg.turnstile_blocks != cfg.turnstile_blocks - 1 {
                e.nor.program(start, BLOCK_IN_USE, Cause::Metadata)?;
            }
        }
        let top = e.top_level();
        let head_frame = e.alloc(top)?;
        e.nor.program(
            e.addr(head_frame),
            layout::encode_state(Kind::Head, top),
            Cause::Metadata,
        )?;
        let head_ptr = e.ptr_of(head_frame);
        let tail = Contents {
            pairs: Vec::new(),
            level: top,
            // The tail's only pointer is its level-0 one, to the head (see `modify`).
            next: vec![head_ptr],
        };
        let tail = e.write_new(Kind::Tail, &tail)?;
        let tail_ptr = e.ptr_of(e.resolve(tail));
        for level in 0..=top {
            let at = e
                .addr(head_frame)
                .offset(e.lay.ptr(e.lay.first_entry(level)));
            e.nor
                .program_words(at, &layout::encode_ptr(level, tail_ptr), Cause::Metadata)?;
        }
        e.head = e.handle(head_frame);
        e.tail = tail;
        e.cause = Cause::Host;
        e.settle();
        Ok(e)
    }

    /// Find a list on `nor` from flash alone.
    pub fn open(
        nor: NorDevice,
        cfg: ListConfig,
        structure: &'static str,
        seed: u64,
        boots: u64,
    ) -> Result<(Engine, BootReport), IndexError> {
        let mut e = Engine::blank(nor, cfg, structure, seed)?;
        let report = e.reboot(boots)?;
        Ok((e, report))
    }

    /// Forget every RAM structure and find the list again from flash (a power cycle).
    pub fn reboot(&mut self, boots: u64) -> Result<BootReport, IndexError> {
        self.boots = boots;
        self.moves.clear();
        self.deferred_tails.clear();
        self.tasks.clear();
        self.merge_queue.clear();
        self.spare.fill(0);
        self.cause = Cause::Metadata;
        let before = self.nor.counters().reads.metadata;
        let found = self.find_spares().and_then(|()| self.climb_to_head());
        self.cause = Cause::Host;
        Ok(BootReport {
            word_reads: self.nor.counters().reads.metadata - before,
            steps: found?,
        })
    }

    fn find_spares(&mut self) -> Result<(), IndexError> {
        let t = self.cfg.turnstile_blocks;
        for turnstile in 0..self.turnstiles {
            let mut spare = None;
            for i in 0..t {
                let start = self.nor.geometry().block_start(BlockId(turnstile * t + i));
                if self.nor.read(start, Cause::Metadata) == ERASED_WORD {
                    if spare.is_some() {
                        return Err(self.corrupt(format!(
                            "turnstile {turnstile} has two blocks with an erased header"
                        )));
                    }
                    spare = Some(i);
                }
            }
            self.spare[turnstile as usize] = spare.ok_or_else(|| {
                self.corrupt(format!(
                    "turnstile {turnstile} has no spare block (no erased header)"
                ))
            })?;
        }
        Ok(())
    }

    /// A live object at a random location.
    fn random_object(&mut self) -> Result<Cur, IndexError> {
        let mut rng = SimRng::for_stream(self.seed, &format!("nor-list/boot/{}", self.boots));
        let tries = 64 * self.turnstiles * self.cfg.turnstile_blocks * self.frames_per_block;
        for _ in 0..tries {
            let t = self.cfg.turnstile_blocks;
            let turnstile = rng.random_range(0..self.turnstiles);
            let mut i = rng.random_range(0..t - 1);
            if i >= self.spare[turnstile as usize] {
                i += 1;
            }
            let frame = Frame {
                block: turnstile * t + i,
                offset: rng.random_range(0..self.frames_per_block) as u16,
            };
            if let State::Live { kind, level } = self.state(frame) {
                self.level_on_flash(frame, level)?;
                return Ok(self.cur_at(frame, kind, level));
            }
        }
        Err(self.corrupt("no live object found: the flash holds no list".into()))
    }

    /// Climb from a random object to the tail, then step to the head; the steps taken.
    fn climb_to_head(&mut self) -> Result<u64, IndexError> {
        let mut cur = self.random_object()?;
        let mut level = cur.level;
        // Every step moves to a larger key (see `classify`), so the walk meets each live
        // object once at most: a bound of a step per frame is a guard, never reached.
        let bound = self.frames_per_block as u64 * u64::from(self.nor.geometry().blocks()) + 2;
        for steps in 0..bound {
            if cur.kind == Kind::Tail {
                let head = self.find_head(&cur)?;
                self.tail = self.handle(cur.frame);
                self.head = self.handle(head);
                self.settle();
                return Ok(steps + 1);
            }
            // Any rightward move is allowed except one that demotes the current level.
            let probes = self.probes;
            let next = self.step(&cur, level, Bound::Le(i64::MAX), None);
            self.probes = probes;
            cur = next.ok_or_else(|| {
                self.corrupt(format!(
                    "object at {:?} has no successor on level {level}",
                    cur.frame
                ))
            })?;
            self.level_on_flash(cur.frame, cur.level)?;
            level = cur.level;
        }
        Err(self.corrupt("boot walk did not reach the tail".into()))
    }

    /// An object's level as its state word on flash gives it, refused when it is above the
    /// list's top level: the object has no pointer there, and the walk would find none.
    fn level_on_flash(&self, frame: Frame, level: u8) -> Result<(), IndexError> {
        if level > self.top_level() {
            return Err(self.corrupt(format!(
                "object at {frame:?} is of level {level}, above the list's top level {}",
                self.top_level()
            )));
        }
        Ok(())
    }

    fn find_head(&mut self, tail: &Cur) -> Result<Frame, IndexError> {
        let ptr = self.read_ptr(tail.frame, 0);
        for block in self.probe_blocks(ptr.turnstile) {
            let frame = Frame {
                block,
                offset: ptr.offset,
            };
            if let State::Live {
                kind: Kind::Head,
                level,
            } = self.state(frame)
            {
                self.level_on_flash(frame, level)?;
                return Ok(frame);
            }
        }
        Err(self.corrupt("the tail's pointer does not lead to the head".into()))
    }
}

/// A configuration error of `structure`: the field at fault and why.
fn config_error(structure: &'static str) -> impl Fn(&'static str, String) -> IndexError {
    move |field, reason| IndexError::Config {
        structure,
        field,
        reason,
    }
}

/// The list's own parameters: turnstiles that divide the flash with a spare each, the
/// levels, `p`, and the slots against the key limit.
fn check_list(
    cfg: &ListConfig,
    g: &NorGeometry,
    structure: &'static str,
) -> Result<(), IndexError> {
    let err = config_error(structure);
    if cfg.turnstile_blocks < 2 {
        return Err(err(
            "turnstile size",
            format!("{} must be at least 2 (one spare)", cfg.turnstile_blocks),
        ));
    }
    if !g.blocks().is_multiple_of(cfg.turnstile_blocks) {
        return Err(err(
            "turnstile size",
            format!(
                "{} does not divide the flash's {} blocks",
                cfg.turnstile_blocks,
                g.blocks()
            ),
        ));
    }
    if !(1..=MAX_LEVELS).contains(&cfg.max_levels) {
        return Err(err(
            "max levels",
            format!("{} is not in 1..={MAX_LEVELS}", cfg.max_levels),
        ));
    }
    if !(cfg.p > 0.0 && cfg.p < 1.0) {
        return Err(err(
            "p",
            format!("{} is not strictly between 0 and 1", cfg.p),
        ));
    }
    if cfg.slots == 0 || cfg.slots > MAX_SLOTS || cfg.key_limit == 0 || cfg.key_limit > cfg.slots {
        return Err(err(
            "slots / key limit",
            format!(
                "need 1 <= key limit ({}) <= slots ({})",
                cfg.key_limit, cfg.slots
            ),
        ));
    }
    if cfg.key_limit > 1 && cfg.key_limit >= cfg.slots {
        return Err(err(
            "key limit",
            format!(
                "{} must be below the slot count {} (0.5.1: n < m)",
                cfg.key_limit, cfg.slots
            ),
        ));
    }
    Ok(())
}

/// The pointer area: a pool with an entry per level and at least two entries, or two
/// slots on every level. Re-pointing an object that has no erased entry left relocates it,
/// which re-points its predecessors in turn; such a chain reaches the tail (the head's
/// predecessor), whose one pointer leaves it a spare entry to absorb the change. Without
/// that spare, re-pointing the head relocates the tail, which re-points the head, and so
/// on: the chain ends only if a relocation happens to keep its soft pointer, and never in
/// turnstiles of two blocks (the first insert does not return).
fn check_pointers(cfg: &ListConfig, structure: &'static str) -> Result<(), IndexError> {
    let err = config_error(structure);
    match cfg.pointers {
        layout::PointerArea::Pool { entries } if entries < cfg.max_levels.max(2) => Err(err(
            "pointer pool",
            format!(
                "{entries} entries: needs one per level ({}) and at least two (the tail's \
                 pointer and a spare)",
                cfg.max_levels
            ),
        )),
        layout::PointerArea::PerLevel { slots } if slots < 2 => Err(err(
            "pointer slots per level",
            format!("{slots}: a level needs its pointer and a spare entry at least"),
        )),
        _ => Ok(()),
    }
}

/// What the layout gives on the flash: objects per block (2 to 65,535) and turnstiles (no
/// more than a pointer encodes).
fn check_fit(
    cfg: &ListConfig,
    lay: &Layout,
    g: &NorGeometry,
    structure: &'static str,
) -> Result<(u32, u32), IndexError> {
    let err = config_error(structure);
    let frames = (g.words_per_block() - layout::BLOCK_HEADER_WORDS) / lay.frame_words;
    if !(2..=u32::from(u16::MAX)).contains(&frames) {
        return Err(err(
            "object size",
            format!(
                "{} words give {frames} objects per {}-word block (need 2..=65535)",
                lay.frame_words,
                g.words_per_block()
            ),
        ));
    }
    let turnstiles = g.blocks() / cfg.turnstile_blocks;
    if turnstiles > 0x1FFF {
        return Err(err(
            "turnstile size",
            format!("{turnstiles} turnstiles exceed the pointer encoding's 8191"),
        ));
    }
    Ok((frames, turnstiles))
}
