//! The soft-list engine shared by [`crate::nor::SoftList`] and [`crate::nor::FatList`]:
//! turnstiles and soft pointers (section 0.3.1 of the fat-list paper), search by Algorithm 1
//! over several levels (0.3.2, 0.4.1), the two-level space allocation and turnstile garbage
//! collection (0.4.2), boot-up initialization (0.4.3), and the fat-object operations (0.5).
//!
//! What it is not: a structure of its own. A soft list is this engine with one key per
//! object and fixed per-level pointer slots; a fat list is the same engine with m slots, a
//! key limit n and a shared pointer pool, exactly as the paper derives one from the other.
//!
//! Key decisions:
//! - RAM holds the dummy head's and tail's frames, the spare block of each turnstile, the
//!   random streams and counters: nothing that grows with the data. `open` rebuilds the
//!   first two from flash (block header words, then the climb of section 0.4.3).
//! - An object is identified in RAM by a [`Handle`] (block, frame offset, epoch). Garbage
//!   collection and relocations record moves in a per-operation log; a handle replays the
//!   log from its epoch, so a handle taken before an allocation is still right after it.
//! - Structural changes go through one routine, `replace`: a run of consecutive objects is
//!   swapped for new objects, written last to first so every pointer names a written object,
//!   then predecessors are re-pointed (logging into spare pointer entries, or relocating the
//!   predecessor when they are used up), then the run is invalidated.

mod boot;
mod check;
#[cfg(test)]
mod fig4;
mod layout;
mod modify;
#[cfg(test)]
mod paths;
mod search;
mod space;
#[cfg(test)]
mod tests;

pub use layout::PointerArea;
pub use search::Probe;

use crate::nor::stats::ProbeStats;
use crate::nor::{IndexError, Key};
use flashkit_core::{Cause, SimRng, StateHasher};
use flashkit_device::nor::{NorDevice, WordAddr};
use layout::{Kind, Layout, Ptr};
use smallvec::SmallVec;

/// Parameters shared by soft lists and fat lists.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ListConfig {
    /// Blocks per turnstile, the spare included (the paper's default: 8).
    pub turnstile_blocks: u32,
    /// Levels (1 is a simple soft list; the paper's default: 5).
    pub max_levels: u32,
    /// Probability of hooking on the next level up (0.25).
    pub p: f64,
    /// Key slots per object, m (1 for soft lists; the paper's fat-list default: 40).
    pub slots: u32,
    /// Distinct keys an object may hold before it splits, n (1; 20).
    pub key_limit: u32,
    /// Where pointer versions are logged.
    #[serde(skip)]
    pub pointers: PointerArea,
}

/// A frame: block and frame offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Frame {
    pub block: u32,
    pub offset: u16,
}

/// An object in RAM: where it was, and how many moves of the log it has seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle {
    frame: Frame,
    epoch: u32,
}

/// A move recorded while an operation runs.
#[derive(Clone, Copy, Debug)]
enum Move {
    /// Garbage collection shifted every live object of a block to the spare.
    Block { from: u32, to: u32 },
    /// An object was rewritten elsewhere (a relocation).
    Object { from: Frame, to: Frame },
}

/// Counters of structural work.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    objects_written: u64,
    splits: u64,
    merges: u64,
    shift_merges: u64,
    compactions: u64,
    relocations: u64,
    gc_runs: u64,
    gc_objects_moved: u64,
}

/// The engine.
pub(crate) struct Engine {
    nor: NorDevice,
    cfg: ListConfig,
    structure: &'static str,
    lay: Layout,
    frames_per_block: u32,
    turnstiles: u32,
    /// The spare block of each turnstile, as an index inside it.
    spare: Vec<u32>,
    moves: Vec<Move>,
    head: Handle,
    tail: Handle,
    /// The cause charged for reads and writes now (Gc while collecting, Metadata at boot).
    cause: Cause,
    level_rng: SimRng,
    alloc_rng: SimRng,
    seed: u64,
    boots: u64,
    probes: ProbeStats,
    counts: Counts,
    /// Min keys of poorly used objects seen by garbage collection (lazy merge, 0.5.3).
    merge_queue: Vec<Key>,
    /// Old tails whose predecessors still point at them (see `modify`).
    deferred_tails: Vec<Handle>,
    /// Queued structural work and whether a loop is running it (see `modify::Task`).
    tasks: Vec<modify::Task>,
    draining: bool,
    buf: Vec<u16>,
}

/// A search position: a live object and what the search knows of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cur {
    frame: Frame,
    kind: Kind,
    level: u8,
    /// The object's smallest key bound (-1 for the head, i64::MAX for the tail).
    min: i64,
}

/// Slots a [`Full`] holds without allocating: the paper's fat objects have 40 (a larger
/// configuration spills to the heap). Objects are read in full on every update, so this
/// keeps the simulator's hottest path free of allocation.
const FULL_SLOTS: usize = 48;

/// An object read in full.
#[derive(Clone, Debug, Default)]
pub(crate) struct Full {
    kind: Option<Kind>,
    level: u8,
    /// (slot, key, value, valid) of every written slot.
    slots: SmallVec<[(u32, Key, u32, bool); FULL_SLOTS]>,
    /// Slots written from the bottom (the min-max area) and from the top.
    front: u32,
    back: u32,
    bitmap: SmallVec<[u16; FULL_SLOTS / 16]>,
    /// Current pointer of each level 0..=level.
    next: SmallVec<[Ptr; 8]>,
    /// Pointer entries written, per level run (pool: index 0 holds the total).
    ptr_used: SmallVec<[u32; 8]>,
    min_bound: i64,
    max_bound: i64,
}

impl Full {
    fn live_pairs(&self) -> Vec<(Key, u32)> {
        let mut pairs: Vec<(Key, u32)> = self
            .slots
            .iter()
            .filter(|s| s.3)
            .map(|s| (s.1, s.2))
            .collect();
        pairs.sort_unstable();
        pairs
    }

    fn live_count(&self) -> u32 {
        self.slots.iter().filter(|s| s.3).count() as u32
    }

    fn free_slots(&self, slots: u32) -> u32 {
        slots - self.front - self.back
    }
}

impl Engine {
    fn levels(&self) -> u32 {
        self.cfg.max_levels
    }

    fn top_level(&self) -> u8 {
        (self.cfg.max_levels - 1) as u8
    }

    fn words_per_block(&self) -> u32 {
        self.nor.geometry().words_per_block()
    }

    #[inline]
    fn addr(&self, frame: Frame) -> WordAddr {
        WordAddr(
            frame.block * self.words_per_block()
                + layout::BLOCK_HEADER_WORDS
                + u32::from(frame.offset) * self.lay.frame_words,
        )
    }

    #[inline]
    fn ptr_of(&self, frame: Frame) -> Ptr {
        Ptr {
            turnstile: (frame.block / self.cfg.turnstile_blocks) as u16,
            offset: frame.offset,
        }
    }

    fn handle(&self, frame: Frame) -> Handle {
        Handle {
            frame,
            epoch: self.moves.len() as u32,
        }
    }

    /// Feed the engine's state to `hasher`: the flash, then what RAM keeps between
    /// operations (the spares, the head and tail, the random streams, the counters, the
    /// lazy-merge queue) and how much of an operation is open (nothing, between two).
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        self.nor.hash_state(hasher);
        hasher.u32s(&self.spare);
        for handle in [self.head, self.tail] {
            hasher.u32(handle.frame.block);
            hasher.u32(u32::from(handle.frame.offset));
            hasher.u32(handle.epoch);
        }
        hasher.u32(self.cause as u32);
        hasher.rng(&self.level_rng);
        hasher.rng(&self.alloc_rng);
        hasher.u64(self.seed);
        hasher.u64(self.boots);
        self.probes.hash_state(hasher);
        let c = &self.counts;
        for n in [
            c.objects_written,
            c.splits,
            c.merges,
            c.shift_merges,
            c.compactions,
            c.relocations,
            c.gc_runs,
            c.gc_objects_moved,
        ] {
            hasher.u64(n);
        }
        hasher.u64(self.merge_queue.len() as u64);
        hasher.u32s(&self.merge_queue);
        for open in [
            self.moves.len(),
            self.deferred_tails.len(),
            self.tasks.len(),
        ] {
            hasher.u64(open as u64);
        }
        hasher.u32(u32::from(self.draining));
    }

    /// Close the move log: the head and tail handles, the only ones kept between
    /// operations, are brought up to date first.
    fn settle(&mut self) {
        self.head = Handle {
            frame: self.resolve(self.head),
            epoch: 0,
        };
        self.tail = Handle {
            frame: self.resolve(self.tail),
            epoch: 0,
        };
        self.moves.clear();
    }

    /// Where a handle's object is now.
    fn resolve(&self, handle: Handle) -> Frame {
        let mut frame = handle.frame;
        for m in &self.moves[handle.epoch as usize..] {
            match *m {
                Move::Block { from, to } if frame.block == from => frame.block = to,
                Move::Object { from, to } if frame == from => frame = to,
                _ => {}
            }
        }
        frame
    }

    /// The non-spare blocks of a turnstile, in probe order.
    #[inline]
    fn probe_blocks(&self, turnstile: u16) -> impl Iterator<Item = u32> + use<> {
        let t = self.cfg.turnstile_blocks;
        let first = u32::from(turnstile) * t;
        let spare = self.spare[turnstile as usize];
        (0..t).filter(move |&i| i != spare).map(move |i| first + i)
    }

    fn random_level(&mut self) -> u8 {
        use rand::Rng;
        let mut level = 0u8;
        while level < self.top_level() && self.level_rng.random::<f64>() < self.cfg.p {
            level += 1;
        }
        level
    }

    fn corrupt(&self, detail: String) -> IndexError {
        IndexError::Corrupt {
            structure: self.structure,
            detail,
        }
    }

    /// Give the device back.
    pub fn into_device(self) -> NorDevice {
        self.nor
    }

    /// The device.
    pub fn device(&self) -> &NorDevice {
        &self.nor
    }

    /// Probe statistics so far.
    pub fn probe_stats(&self) -> ProbeStats {
        self.probes
    }

    /// Structure counters, by name.
    pub fn counters(&self) -> Vec<(&'static str, u64)> {
        let c = self.counts;
        vec![
            ("objects_written", c.objects_written),
            ("splits", c.splits),
            ("merges", c.merges),
            ("shift_merges", c.shift_merges),
            ("compactions", c.compactions),
            ("relocations", c.relocations),
            ("gc_runs", c.gc_runs),
            ("gc_objects_moved", c.gc_objects_moved),
        ]
    }

    /// Objects that fit in a block.
    pub fn frames_per_block(&self) -> u32 {
        self.frames_per_block
    }

    /// Words per object.
    pub fn frame_words(&self) -> u32 {
        self.lay.frame_words
    }
}

/// An engine behind the [`crate::nor::NorIndex`] calls: key checks, and the error that made
/// the index unusable (a failed boot), returned by every later call.
pub(crate) struct ListIndex {
    pub engine: Engine,
    name: &'static str,
    lost: Option<IndexError>,
}

impl ListIndex {
    pub fn new(engine: Engine, name: &'static str) -> ListIndex {
        ListIndex {
            engine,
            name,
            lost: None,
        }
    }

    fn usable(&mut self) -> Result<&mut Engine, IndexError> {
        match &self.lost {
            Some(error) => Err(error.clone()),
            None => Ok(&mut self.engine),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn get(&mut self, key: Key) -> Result<Option<crate::nor::Value>, IndexError> {
        crate::nor::check_key(key)?;
        Ok(self.usable()?.get(key))
    }

    pub fn put(&mut self, key: Key, value: crate::nor::Value) -> Result<bool, IndexError> {
        crate::nor::check_key(key)?;
        self.usable()?.put(key, value)
    }

    pub fn remove(&mut self, key: Key) -> Result<Option<crate::nor::Value>, IndexError> {
        crate::nor::check_key(key)?;
        self.usable()?.remove(key)
    }

    pub fn range(
        &mut self,
        lo: Key,
        hi: Key,
        out: &mut Vec<(Key, crate::nor::Value)>,
    ) -> Result<(), IndexError> {
        crate::nor::check_key(lo)?;
        crate::nor::check_key(hi)?;
        if lo <= hi {
            self.usable()?.range_query(lo, hi, out);
        }
        Ok(())
    }

    pub fn power_cycle(&mut self) -> Result<crate::nor::BootReport, IndexError> {
        let boots = self.engine.boots + 1;
        match self.engine.reboot(boots) {
            Ok(report) => {
                self.lost = None;
                Ok(report)
            }
            Err(error) => {
                self.lost = Some(error.clone());
                Err(error)
            }
        }
    }

    pub fn stats(&self) -> crate::nor::IndexStats {
        crate::nor::IndexStats {
            probes: self.engine.probe_stats(),
            counters: self.engine.counters(),
        }
    }

    /// The engine's state and whether a failed boot made the index unusable.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        self.engine.hash_state(hasher);
        hasher.u32(u32::from(self.lost.is_some()));
    }
}

/// The [`crate::nor::NorIndex`] methods of a wrapper holding a [`ListIndex`] as `inner`.
macro_rules! forward_list_index {
    () => {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        fn get(&mut self, key: crate::nor::Key) -> Result<Option<crate::nor::Value>, IndexError> {
            self.inner.get(key)
        }
        fn put(
            &mut self,
            key: crate::nor::Key,
            value: crate::nor::Value,
        ) -> Result<bool, IndexError> {
            self.inner.put(key, value)
        }
        fn remove(
            &mut self,
            key: crate::nor::Key,
        ) -> Result<Option<crate::nor::Value>, IndexError> {
            self.inner.remove(key)
        }
        fn range(
            &mut self,
            lo: crate::nor::Key,
            hi: crate::nor::Key,
            out: &mut Vec<(crate::nor::Key, crate::nor::Value)>,
        ) -> Result<(), IndexError> {
            self.inner.range(lo, hi, out)
        }
        fn power_cycle(&mut self) -> Result<BootReport, IndexError> {
            self.inner.power_cycle()
        }
        fn device(&self) -> &flashkit_device::NorDevice {
            self.inner.engine.device()
        }
        fn stats(&self) -> crate::nor::IndexStats {
            self.inner.stats()
        }
        fn contents(&self) -> Result<Vec<(crate::nor::Key, crate::nor::Value)>, String> {
            self.inner.engine.contents()
        }
        fn check_invariants(&self) -> Result<(), String> {
            self.inner.engine.check()
        }
        fn hash_state(&self, hasher: &mut flashkit_core::StateHasher) {
            self.inner.hash_state(hasher)
        }
    };
}
pub(crate) use forward_list_index;
