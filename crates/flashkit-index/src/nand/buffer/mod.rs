//! The buffer manager: B+-tree nodes cached in RAM, each with an in-memory log sector that
//! collects its changes as log records (In-Page Logging), a replacement policy choosing
//! what leaves (`policy.rs`).
//!
//! A unit is a node's image, its log sector, or both. Its state (Fig. 4):
//!
//! ```text
//!   read miss ---------------------------> Clean ---update---> SemiClean <--update--+
//!                                            ^                  |   |  |           |
//!                                            +--- sector full, -+   |  +-----------+
//!                                                 flushed           |
//!   new node (split, new root) --> Dirty (image only, never on      | clean part evicted
//!                                  flash; written whole on evict)   v   (cfsemi victim)
//!                                                    Dirty (log sector only) --reference:
//!                                                      | image read, sector   re-read--> SemiClean
//!                                                      | applied again
//!                                                      evicted: sector flushed
//! ```
//!
//! Clean units are dropped on eviction; semi-clean and dirty ones flush their log sector to a
//! log page of the node's block (or write a new node's image); the enhanced scheme can also
//! drop just the image of a semi-clean unit.
//!
//! What it is not: a page cache of flash pages. Units are nodes; the storage manager decides
//! where their bytes go.
//!
//! Key decisions: space is counted in bytes (an image is a page, a log sector is
//! `sector_bytes`), so dropping a semi-clean unit's image frees a page while keeping its
//! changes, which is where the paper's "space utilization" gain comes from. A reference is
//! a hit when the node's image is in the buffer; a dirty unit that holds only its log sector
//! is a miss (its image must be read from flash and the sector applied again). Units live in
//! a slab with an intrusive LRU list; steady state allocates nothing.

mod policy;
#[cfg(test)]
mod tests;

pub use policy::{
    AnyReplacement, BufferView, CfSemi, Cflru, Lru, Replacement, UnitState, UnitView, Victim,
};

use crate::nand::log::{LogRecord, apply_all};
use crate::nand::node::Node;
use crate::nand::storage::{NodeStore, Placement};
use crate::nand::{NandIndexError, NodeId};
use flashkit_core::StateHasher;
use serde::Serialize;

const NIL: u32 = u32::MAX;

/// Buffer size and shape.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BufferConfig {
    /// Bytes of RAM for images and log sectors.
    pub capacity_bytes: u64,
    /// Cold region as a fraction of the buffer (w, Table 4).
    pub window: f64,
    /// Bytes of a node's in-memory log sector.
    pub sector_bytes: u32,
}

impl BufferConfig {
    /// Check the configuration against a page size.
    pub fn validate(&self, page_bytes: u32) -> Result<(), NandIndexError> {
        let fail = |field, reason: String| Err(NandIndexError::Config { field, reason });
        if !(self.window.is_finite() && (0.0..=1.0).contains(&self.window)) {
            return fail(
                "window",
                format!("{} is not a fraction in [0, 1]", self.window),
            );
        }
        let max_sector = page_bytes - crate::nand::page::HEADER_BYTES as u32;
        if !(64..=max_sector).contains(&self.sector_bytes) {
            return fail(
                "sector size",
                format!(
                    "{} B is outside 64 B..={max_sector} B (a log page holds one sector after \
                     its 32-byte header)",
                    self.sector_bytes
                ),
            );
        }
        let least = 2 * u64::from(page_bytes + self.sector_bytes);
        if self.capacity_bytes < least {
            return fail(
                "buffer size",
                format!(
                    "{} B holds fewer than two nodes with their log sectors ({least} B)",
                    self.capacity_bytes
                ),
            );
        }
        Ok(())
    }
}

/// Buffer counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BufferStats {
    /// Node references by the tree.
    pub references: u64,
    /// References that found the node's image in the buffer.
    pub hits: u64,
    /// References that read the node from flash.
    pub misses: u64,
    /// Clean units evicted (no write).
    pub clean_evictions: u64,
    /// Semi-clean or dirty units evicted with a log sector flush.
    pub dirty_evictions: u64,
    /// New nodes evicted: their first image written.
    pub new_node_evictions: u64,
    /// Images dropped from semi-clean units (the enhanced scheme only).
    pub image_drops: u64,
    /// Log sectors flushed because they were full.
    pub full_sector_flushes: u64,
}

impl BufferStats {
    /// Hits over references (0 without references).
    pub fn hit_ratio(&self) -> f64 {
        if self.references == 0 {
            0.0
        } else {
            self.hits as f64 / self.references as f64
        }
    }

    /// Counts since an earlier snapshot.
    pub fn since(&self, e: &BufferStats) -> BufferStats {
        BufferStats {
            references: self.references - e.references,
            hits: self.hits - e.hits,
            misses: self.misses - e.misses,
            clean_evictions: self.clean_evictions - e.clean_evictions,
            dirty_evictions: self.dirty_evictions - e.dirty_evictions,
            new_node_evictions: self.new_node_evictions - e.new_node_evictions,
            image_drops: self.image_drops - e.image_drops,
            full_sector_flushes: self.full_sector_flushes - e.full_sector_flushes,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Unit {
    node: NodeId,
    image: Node,
    has_image: bool,
    on_flash: bool,
    sector: Vec<u8>,
    newer: u32,
    older: u32,
}

impl Unit {
    fn state(&self) -> UnitState {
        if !self.on_flash || !self.has_image {
            UnitState::Dirty
        } else if self.sector.is_empty() {
            UnitState::Clean
        } else {
            UnitState::SemiClean
        }
    }
}

/// The buffer pool with replacement policy `R`.
pub struct BufferPool<R> {
    policy: R,
    cfg: BufferConfig,
    page_bytes: u32,
    units: Vec<Unit>,
    spare: Vec<u32>,
    slot: Vec<u32>,
    mru: u32,
    lru: u32,
    used: u64,
    view: Vec<UnitView>,
    order: Vec<u32>,
    stats: BufferStats,
}

impl<R: Replacement> BufferPool<R> {
    /// An empty pool for nodes of `page_bytes`.
    pub fn new(
        policy: R,
        cfg: BufferConfig,
        page_bytes: u32,
    ) -> Result<BufferPool<R>, NandIndexError> {
        cfg.validate(page_bytes)?;
        Ok(BufferPool {
            policy,
            cfg,
            page_bytes,
            units: Vec::new(),
            spare: Vec::new(),
            slot: Vec::new(),
            mru: NIL,
            lru: NIL,
            used: 0,
            view: Vec::new(),
            order: Vec::new(),
            stats: BufferStats::default(),
        })
    }

    /// Counters.
    pub fn stats(&self) -> BufferStats {
        self.stats
    }

    /// Feed the pool's state to `hasher`: the units from the most to the least recently
    /// used, each with its node, its image (when it holds one), whether that image is on
    /// flash, and its log sector; the bytes in use; the counters. Which slot of the unit
    /// table holds a unit, and the table's spare slots and lookups, follow from the rest.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        let mut u = self.mru;
        while u != NIL {
            let Unit {
                node,
                image,
                has_image,
                on_flash,
                sector,
                newer: _,
                older,
            } = &self.units[u as usize];
            hasher.u32(node.0);
            hasher.u32(u32::from(*has_image));
            if *has_image {
                image.hash_state(hasher);
            }
            hasher.u32(u32::from(*on_flash));
            hasher.u64(sector.len() as u64);
            hasher.bytes(sector);
            u = *older;
        }
        hasher.u32(NIL);
        hasher.u64(self.used);
        let BufferStats {
            references,
            hits,
            misses,
            clean_evictions,
            dirty_evictions,
            new_node_evictions,
            image_drops,
            full_sector_flushes,
        } = self.stats;
        for x in [
            references,
            hits,
            misses,
            clean_evictions,
            dirty_evictions,
            new_node_evictions,
            image_drops,
            full_sector_flushes,
        ] {
            hasher.u64(x);
        }
    }

    /// The configuration.
    pub fn config(&self) -> BufferConfig {
        self.cfg
    }

    /// The policy.
    pub fn policy(&self) -> &R {
        &self.policy
    }

    /// Bytes in use.
    pub fn used_bytes(&self) -> u64 {
        self.used
    }

    fn slot_of(&self, id: NodeId) -> u32 {
        self.slot.get(id.index()).copied().unwrap_or(NIL)
    }

    fn bytes_of(&self, u: &Unit) -> u64 {
        u64::from(if u.has_image { self.page_bytes } else { 0 })
            + u64::from(if u.sector.is_empty() {
                0
            } else {
                self.cfg.sector_bytes
            })
    }

    /// The state of a node's unit, if it has one.
    pub fn state(&self, id: NodeId) -> Option<UnitState> {
        let u = self.slot_of(id);
        (u != NIL).then(|| self.units[u as usize].state())
    }

    /// The node's image if it is in the buffer, without counting a reference: for the tree
    /// to look again at a node it has just referenced.
    pub fn resident(&self, id: NodeId) -> Option<&Node> {
        let u = self.slot_of(id);
        (u != NIL && self.units[u as usize].has_image).then(|| &self.units[u as usize].image)
    }

    /// Reference a node: its image, read from flash on a miss.
    pub fn get<P: Placement>(
        &mut self,
        id: NodeId,
        store: &mut NodeStore<P>,
    ) -> Result<&Node, NandIndexError> {
        self.stats.references += 1;
        let u = self.slot_of(id);
        if u != NIL && self.units[u as usize].has_image {
            self.stats.hits += 1;
            self.touch(u);
            return Ok(&self.units[u as usize].image);
        }
        self.stats.misses += 1;
        self.load(id, u, store)
    }

    /// The node's image: the resident one without counting, or a counted reference that
    /// reads it (when it was evicted since the tree last looked at it).
    pub fn ensure<P: Placement>(
        &mut self,
        id: NodeId,
        store: &mut NodeStore<P>,
    ) -> Result<&Node, NandIndexError> {
        let u = self.slot_of(id);
        if u != NIL && self.units[u as usize].has_image {
            return Ok(&self.units[u as usize].image);
        }
        self.get(id, store)
    }

    /// Read a node's image from flash into its unit (a new unit, or one holding only its
    /// log sector, whose records are applied again).
    fn load<P: Placement>(
        &mut self,
        id: NodeId,
        existing: u32,
        store: &mut NodeStore<P>,
    ) -> Result<&Node, NandIndexError> {
        let u = if existing == NIL {
            self.insert(id, true)
        } else {
            existing
        };
        self.make_room(u64::from(self.page_bytes), u, store)?;
        let unit = &mut self.units[u as usize];
        store.fetch(id, &mut unit.image)?;
        apply_all(&unit.sector, &mut unit.image)
            .unwrap_or_else(|e| panic!("invariant: {id}'s log sector applies to its image: {e}"));
        unit.has_image = true;
        self.used += u64::from(self.page_bytes);
        self.touch(u);
        Ok(&self.units[u as usize].image)
    }

    /// A new unit at the most recently used end, holding nothing yet.
    fn insert(&mut self, id: NodeId, on_flash: bool) -> u32 {
        let u = match self.spare.pop() {
            Some(u) => u,
            None => {
                self.units.push(Unit::default());
                self.units.len() as u32 - 1
            }
        };
        let unit = &mut self.units[u as usize];
        unit.node = id;
        unit.has_image = false;
        unit.on_flash = on_flash;
        unit.sector.clear();
        unit.newer = NIL;
        unit.older = NIL;
        if self.slot.len() <= id.index() {
            self.slot.resize(id.index() + 1, NIL);
        }
        self.slot[id.index()] = u;
        self.link_mru(u);
        u
    }

    fn link_mru(&mut self, u: u32) {
        self.units[u as usize].older = self.mru;
        self.units[u as usize].newer = NIL;
        if self.mru != NIL {
            self.units[self.mru as usize].newer = u;
        } else {
            self.lru = u;
        }
        self.mru = u;
    }

    fn unlink(&mut self, u: u32) {
        let (newer, older) = {
            let unit = &self.units[u as usize];
            (unit.newer, unit.older)
        };
        if newer != NIL {
            self.units[newer as usize].older = older;
        } else {
            self.mru = older;
        }
        if older != NIL {
            self.units[older as usize].newer = newer;
        } else {
            self.lru = newer;
        }
    }

    fn touch(&mut self, u: u32) {
        if self.mru != u {
            self.unlink(u);
            self.link_mru(u);
        }
    }

    /// A new node (from a split or a new root): a dirty unit holding its whole image.
    pub fn create<P: Placement>(
        &mut self,
        id: NodeId,
        node: &Node,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        debug_assert_eq!(self.slot_of(id), NIL, "{id} is already buffered");
        let u = self.insert(id, false);
        self.make_room(u64::from(self.page_bytes), u, store)?;
        let unit = &mut self.units[u as usize];
        unit.image.copy_from(node);
        unit.has_image = true;
        self.used += u64::from(self.page_bytes);
        Ok(())
    }

    /// Change a node: apply the record to its image and, if the node is on flash, append it
    /// to its log sector (flushing the sector first when the record does not fit).
    pub fn modify<P: Placement>(
        &mut self,
        id: NodeId,
        record: LogRecord,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        self.ensure(id, store)?;
        let u = self.slot_of(id);
        self.touch(u);
        let unit = &mut self.units[u as usize];
        record
            .apply(&mut unit.image)
            .unwrap_or_else(|e| panic!("invariant: the tree builds records that apply: {e}"));
        if !unit.on_flash {
            return Ok(());
        }
        let sector = self.cfg.sector_bytes as usize;
        if unit.sector.len() + record.encoded_len() > sector {
            store.flush_log(id, &unit.sector)?;
            unit.sector.clear();
            self.used -= u64::from(self.cfg.sector_bytes);
            self.stats.full_sector_flushes += 1;
        }
        if self.units[u as usize].sector.is_empty() {
            self.make_room(u64::from(self.cfg.sector_bytes), u, store)?;
            self.used += u64::from(self.cfg.sector_bytes);
        }
        record.encode(&mut self.units[u as usize].sector);
        Ok(())
    }

    /// The node left the tree: drop its unit without writing and free it in the store.
    pub fn free<P: Placement>(
        &mut self,
        id: NodeId,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        let u = self.slot_of(id);
        if u != NIL {
            self.remove(u);
        }
        store.free(id)
    }

    fn remove(&mut self, u: u32) {
        self.unlink(u);
        let bytes = self.bytes_of(&self.units[u as usize]);
        self.used -= bytes;
        let unit = &mut self.units[u as usize];
        self.slot[unit.node.index()] = NIL;
        unit.has_image = false;
        unit.sector.clear();
        self.spare.push(u);
    }

    /// Evict until `need` more bytes fit, never the pinned unit.
    fn make_room<P: Placement>(
        &mut self,
        need: u64,
        pinned: u32,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        while self.used + need > self.cfg.capacity_bytes {
            let mut view = std::mem::take(&mut self.view);
            view.clear();
            let mut u = self.lru;
            while u != NIL {
                let unit = &self.units[u as usize];
                view.push(UnitView {
                    node: unit.node,
                    state: unit.state(),
                    bytes: self.bytes_of(unit) as u32,
                    pinned: u == pinned,
                });
                u = unit.newer;
            }
            let victim = self.policy.choose(&BufferView::new(
                &view,
                self.cfg.capacity_bytes,
                self.cfg.window,
            ));
            self.view = view;
            match victim {
                Some(v) => self.evict(v, pinned, store)?,
                None => break,
            }
        }
        Ok(())
    }

    fn evict<P: Placement>(
        &mut self,
        victim: Victim,
        pinned: u32,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        let id = match victim {
            Victim::Evict(id) | Victim::DropImage(id) => id,
        };
        let u = self.slot_of(id);
        assert!(
            u != NIL && u != pinned,
            "invariant: the policy chose {victim:?}, which is absent or pinned"
        );
        let unit = &mut self.units[u as usize];
        match victim {
            Victim::DropImage(_) => {
                assert_eq!(unit.state(), UnitState::SemiClean, "only a semi-clean unit");
                unit.has_image = false;
                self.used -= u64::from(self.page_bytes);
                self.stats.image_drops += 1;
                return Ok(());
            }
            Victim::Evict(_) if !unit.on_flash => {
                store.write_new(id, &unit.image)?;
                self.stats.new_node_evictions += 1;
            }
            Victim::Evict(_) if !unit.sector.is_empty() => {
                store.flush_log(id, &unit.sector)?;
                self.stats.dirty_evictions += 1;
            }
            Victim::Evict(_) => self.stats.clean_evictions += 1,
        }
        self.remove(u);
        Ok(())
    }

    /// Write every change to flash (new nodes' images, log sectors); units stay, clean.
    /// Units that held only a log sector leave the buffer.
    pub fn flush_all<P: Placement>(
        &mut self,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        let mut u = self.lru;
        while u != NIL {
            order.push(u);
            u = self.units[u as usize].newer;
        }
        let mut result = Ok(());
        for &u in &order {
            result = self.flush_unit(u, store);
            if result.is_err() {
                break;
            }
        }
        self.order = order;
        result
    }

    fn flush_unit<P: Placement>(
        &mut self,
        u: u32,
        store: &mut NodeStore<P>,
    ) -> Result<(), NandIndexError> {
        let unit = &mut self.units[u as usize];
        if !unit.on_flash {
            store.write_new(unit.node, &unit.image)?;
            unit.on_flash = true;
        } else if !unit.sector.is_empty() {
            store.flush_log(unit.node, &unit.sector)?;
            unit.sector.clear();
            self.used -= u64::from(self.cfg.sector_bytes);
            if !self.units[u as usize].has_image {
                self.remove(u);
            }
        }
        Ok(())
    }

    /// Drop every unit (after [`BufferPool::flush_all`], for a restart).
    pub fn clear(&mut self) {
        for s in self.slot.iter_mut() {
            *s = NIL;
        }
        self.spare.clear();
        self.spare.extend((0..self.units.len() as u32).rev());
        for unit in &mut self.units {
            unit.has_image = false;
            unit.sector.clear();
        }
        self.mru = NIL;
        self.lru = NIL;
        self.used = 0;
    }

    /// The buffered image of `id`, read in first when it is not resident, for a test to
    /// corrupt: the checkers read a buffered image before flash.
    #[cfg(test)]
    pub(crate) fn image_mut<P: Placement>(
        &mut self,
        id: NodeId,
        store: &mut NodeStore<P>,
    ) -> &mut Node {
        self.ensure(id, store).expect("the node reads");
        let u = self.slot_of(id);
        &mut self.units[u as usize].image
    }

    /// Buffered nodes that have never been written, in id order.
    pub fn unwritten(&self) -> Vec<NodeId> {
        let mut ids: Vec<NodeId> = self
            .lru_order()
            .into_iter()
            .filter(|&u| !self.units[u as usize].on_flash)
            .map(|u| self.units[u as usize].node)
            .collect();
        ids.sort();
        ids
    }

    fn lru_order(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let mut u = self.lru;
        while u != NIL && out.len() <= self.units.len() {
            out.push(u);
            u = self.units[u as usize].newer;
        }
        out
    }

    /// The node as the tree sees it now: the buffered image, or flash (uncounted peeks)
    /// with a buffered log sector applied.
    pub fn node_now<P: Placement>(&self, id: NodeId, store: &NodeStore<P>) -> Result<Node, String> {
        let u = self.slot_of(id);
        if u != NIL && self.units[u as usize].has_image {
            return Ok(self.units[u as usize].image.clone());
        }
        let mut node = Node::default();
        store.peek(id, &mut node)?;
        if u != NIL {
            apply_all(&self.units[u as usize].sector, &mut node)
                .map_err(|e| format!("{id}'s log sector: {e}"))?;
        }
        Ok(node)
    }

    /// The pool's invariants: list and slot map agree, bytes add up within the capacity,
    /// every unit's state is consistent with flash (flash image + sector = buffered image).
    pub fn check<P: Placement>(&self, store: &NodeStore<P>) -> Result<(), String> {
        let order = self.lru_order();
        let live = self.units.len() - self.spare.len();
        if order.len() != live {
            return Err(format!("LRU list has {} units, slab {live}", order.len()));
        }
        let mut bytes = 0;
        for &u in &order {
            let unit = &self.units[u as usize];
            if self.slot_of(unit.node) != u {
                return Err(format!("{} is not mapped to its unit", unit.node));
            }
            bytes += self.bytes_of(unit);
            self.check_unit(unit, store)?;
        }
        if bytes != self.used || self.used > self.cfg.capacity_bytes {
            return Err(format!(
                "units hold {bytes} B, counted {} B, capacity {} B",
                self.used, self.cfg.capacity_bytes
            ));
        }
        Ok(())
    }

    fn check_unit<P: Placement>(&self, unit: &Unit, store: &NodeStore<P>) -> Result<(), String> {
        let id = unit.node;
        if unit.on_flash != store.is_on_flash(id) {
            return Err(format!(
                "{id}: buffer says on flash {}, the store {}",
                unit.on_flash,
                store.is_on_flash(id)
            ));
        }
        if !unit.on_flash {
            return if unit.has_image && unit.sector.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "{id}: a new node needs its image and no log sector"
                ))
            };
        }
        if !unit.has_image {
            return if unit.sector.is_empty() {
                Err(format!("{id}: a unit with neither image nor log sector"))
            } else {
                Ok(())
            };
        }
        let mut flash = Node::default();
        store.peek(id, &mut flash)?;
        apply_all(&unit.sector, &mut flash).map_err(|e| format!("{id}'s log sector: {e}"))?;
        if flash != unit.image {
            return Err(format!(
                "{id}: flash image plus log sector differs from the buffered image"
            ));
        }
        Ok(())
    }
}
