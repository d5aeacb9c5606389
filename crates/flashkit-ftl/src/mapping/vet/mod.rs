//! The Virtual Extent Trie (VET): Suh et al., JSA 2014, sections 2.2, 3 and 6.2.1.
//!
//! Every write is an extent, stored as its canonical extents (Definition 1): binary keys with
//! trailing don't-care bits, kept in a hash table. The trie is virtual: a node's children
//! are found by unfolding its most significant don't-care bit, never through a pointer.
//! Leaves hold (or point to) their input extent; internal nodes only guide the search.
//!
//! - **Read translation** (Algorithm 2) is a binary search on the levels of the path to an
//!   address: a leaf ends it, an internal node sends it down, a missing node up. A leaf
//!   gives the whole input extent, so the search starts over after its end. The paper keeps
//!   the next search key on a stack; it never holds more than one key, so `SearchKey` is
//!   a variable here. [`VetSearch::Paper`], the default, is Algorithm 2 as published: every
//!   search starts at the middle level. [`VetSearch::Guided`] is ours (the same answers in
//!   fewer probes): a walk probes first the level of the last leaf found, and its later
//!   addresses look low in the trie first (`Vet::search_next`). `vet_probes_per_read`
//!   counts the hash-table probes a read makes under either.
//! - **Insertion**: LIS (Algorithm 1) creates every ancestor of a leaf; BIS (Algorithm 3)
//!   only those the binary search for the leaf visits ([`InsertScheme::vital_levels`]).
//! - **Partial invalidation** (Fig. 3): a write that covers part of an extent removes the
//!   canonical extents it touches and re-inserts the parts left over; the extent's other
//!   leaves are re-pointed to the remainder (rewritten in place by the pointer-free layout,
//!   untouched by the pointer-dependent one, which edits the shared record).
//! - **Subtree deletion** (Fig. 4): internal nodes carry a reference count, the number of
//!   leaves whose search path they are on. Removing a leaf releases its path, so when a
//!   write covers a subtree, removing the leaves it overwrites (which the FTL must visit
//!   anyway, to learn which physical pages died) removes the whole subtree with them.
//!   *Departure:* Algorithm 1 deletes a subtree by walking it; under BIS a subtree cannot be
//!   walked through child keys, because BIS skips levels, so counting is what makes the
//!   deletion complete. The count lives in the field that tells an internal node from a leaf,
//!   so it costs no byte.
//!
//! Where an address is unmapped the search fails; the first missing node the search met
//! certifies that its whole canonical extent is unmapped (any leaf below it would have put
//! that node on its search path), so a read skips the hole in one step per missing node.
//!
//! What it is not: a y-fast trie or a routing table (section 7); extents never overlap.
//! Key decision: a node key is a 32-bit code (`2 * start + 2^level`), so a VET addresses up
//! to 2^31 logical pages (8 TiB of 4 KiB pages).

mod hashing;
mod layout;
mod table;

pub use hashing::{Fib, FibHasher, Fold, Sip};
pub use layout::{NodeLayout, Pd, Pf, PfNode};
pub use table::{Cuckoo, NodeTable, Swiss};

use super::emt::{contiguous_runs, may_continue};
use super::extent::{Canonical, Extent, canonical_pieces, universe_bits};
use super::{Mapping, MappingHints, PREFETCH_PAGES, PhysRun, hash_runs};
use crate::{FtlError, Gauge, InvariantViolation, MappingMemory};
use flashkit_core::{Lpn, PageRange, Ppn, StateHasher};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

/// A walk's later addresses whose leaf can only be this many levels or fewer from the
/// bottom are looked up by probing those levels directly ([`Vet::search_next`]): at most as
/// many probes as a binary search over the trie's 20-odd levels takes.
const DIRECT_LEVELS: u32 = 3;

/// How a read searches the trie for an address.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VetSearch {
    /// Algorithm 2 as published: a binary search on levels from the middle level for every
    /// address (after a leaf, the search starts over at the address past its end).
    #[default]
    Paper,
    /// Ours: a search first probes the level where the last one found its leaf, and a walk's
    /// later addresses probe their few possible levels bottom-up before falling back to the
    /// binary search. The same leaves and holes in fewer probes where neighbouring extents
    /// are the same size (a fragmented map's one-page leaves: one probe, not four or five).
    Guided,
}

impl VetSearch {
    /// Both searches.
    pub const ALL: [VetSearch; 2] = [VetSearch::Paper, VetSearch::Guided];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            VetSearch::Paper => "paper",
            VetSearch::Guided => "guided",
        }
    }
}

/// How internal nodes are created for a new leaf.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InsertScheme {
    /// Linear Insertion Scheme (Algorithm 1): every ancestor.
    Lis,
    /// Binary Insertion Scheme (Algorithm 3): the ancestors the binary search visits.
    #[default]
    Bis,
}

impl InsertScheme {
    /// Both schemes.
    pub const ALL: [InsertScheme; 2] = [InsertScheme::Lis, InsertScheme::Bis];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            InsertScheme::Lis => "lis",
            InsertScheme::Bis => "bis",
        }
    }

    /// The levels above `level` at which a leaf of `level` needs an internal node, as a bit
    /// mask, in a trie of levels `0..=bits`.
    pub fn vital_levels(self, level: u32, bits: u32) -> u64 {
        match self {
            InsertScheme::Lis => ((1u64 << (bits + 1)) - 1) & !((2u64 << level) - 1),
            InsertScheme::Bis => {
                let (mut lo, mut hi, mut mask) = (0i64, i64::from(bits), 0u64);
                while lo <= hi {
                    let mid = (lo + hi) / 2;
                    match mid.cmp(&i64::from(level)) {
                        std::cmp::Ordering::Greater => {
                            mask |= 1 << mid;
                            hi = mid - 1;
                        }
                        std::cmp::Ordering::Equal => break,
                        std::cmp::Ordering::Less => lo = mid + 1,
                    }
                }
                mask
            }
        }
    }
}

/// The node layout, chosen at run time (the mapping type is generic over [`NodeLayout`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VetNodes {
    /// Pointer-dependent: leaves point to shared extent records.
    Pd,
    /// Pointer-free: leaves embed their extent.
    #[default]
    Pf,
}

impl VetNodes {
    /// Both layouts.
    pub const ALL: [VetNodes; 2] = [VetNodes::Pd, VetNodes::Pf];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            VetNodes::Pd => "pd",
            VetNodes::Pf => "pf",
        }
    }
}

/// The hash table under the trie, chosen at run time (the paper's Table 4 compares three;
/// [`NodeTable`] says what the trie asks of ours).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VetTable {
    /// [`Cuckoo`]: bucketized cuckoo hashing, a bucket one cache line (the default).
    #[default]
    Cuckoo,
    /// [`Swiss`]: hashbrown's SwissTable with foldhash.
    Swiss,
    /// hashbrown's SwissTable with SipHash-1-3: what `std::collections::HashMap` is, a
    /// general-purpose table (the part uthash plays in the paper).
    Std,
}

impl VetTable {
    /// Every table.
    pub const ALL: [VetTable; 3] = [VetTable::Cuckoo, VetTable::Swiss, VetTable::Std];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            VetTable::Cuckoo => "cuckoo",
            VetTable::Swiss => "swiss",
            VetTable::Std => "std",
        }
    }
}

named_enum!(InsertScheme, "VET insertion scheme");
named_enum!(VetNodes, "VET node layout");
named_enum!(VetTable, "VET hash table");
named_enum!(VetSearch, "VET read search");

/// Options of the Virtual Extent Trie.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VetConfig {
    /// LIS or BIS.
    pub insert: InsertScheme,
    /// Pointer-dependent or pointer-free nodes.
    pub nodes: VetNodes,
    /// The hash table under the trie.
    pub table: VetTable,
    /// How reads search the trie.
    pub search: VetSearch,
}

impl VetConfig {
    /// Whether a VET can address `logical_pages` pages (its keys are 32-bit).
    pub fn check(&self, logical_pages: u32) -> Result<(), FtlError> {
        if logical_pages > 1 << 31 {
            return Err(FtlError::Config(format!(
                "VET keys are 32-bit and address at most 2^31 logical pages; the device has \
                 {logical_pages}: use larger pages or emt"
            )));
        }
        Ok(())
    }
}

/// The key of the next probe of a binary search on levels: an address and the levels still
/// possible (Algorithm 2's stack holds one of these at a time).
#[derive(Clone, Copy, Debug)]
struct SearchKey {
    lpn: u32,
    lo: i32,
    hi: i32,
}

/// What a search for one address found.
enum Found<N> {
    /// The leaf holding the address, and its level.
    Leaf(N, u32),
    /// No leaf holds it; the canonical extent of this level around it is unmapped.
    Hole(u32),
}

/// Operation counts behind Fig. 12 and the node census.
#[derive(Clone, Debug, Default)]
struct VetCounts {
    writes: u64,
    generated: u64,
    overlapped: u64,
    reads: Cell<u64>,
    returned: Cell<u64>,
    /// Hash-table probes made by searches, reads' and writes' alike.
    probes: Cell<u64>,
    /// Of those, the probes reads made.
    read_probes: Cell<u64>,
    relocation_runs: u64,
    relocation_merges: u64,
}

/// The Virtual Extent Trie with node layout `L` in hash table `T`.
#[derive(Clone)]
pub struct Vet<L: NodeLayout = Pf, T: NodeTable<L::Node> = <L as NodeLayout>::Table> {
    table: T,
    layout: L,
    scheme: InsertScheme,
    search: VetSearch,
    bits: u32,
    logical_pages: u32,
    /// The vital internal levels of a leaf, by the leaf's level.
    vital: Vec<u64>,
    /// The levels a binary search for a one-page leaf probes, level 0 included (BIS's vital
    /// levels of level 0 whichever scheme built the trie: LIS has more internal nodes, not
    /// a different search); what [`MappingHints::prefetch_range`] fetches for a request's first
    /// page, and whose lowest level above 0 [`MappingHints::prefetch`] fetches with level 0.
    search_path: u64,
    leaves: u64,
    extents: u64,
    mapped: u64,
    counts: VetCounts,
    /// The level where the last search of any walk found a leaf: where the next walk's
    /// first search looks first ([`Self::step`]). Only a guess: it changes how many probes
    /// a search makes, never what it finds.
    last_leaf_level: Cell<u32>,
    /// Extents a write overlaps, gathered before any is cut; kept to avoid an allocation.
    scratch: Vec<(Extent, L::Node)>,
}

impl<L: NodeLayout, T: NodeTable<L::Node>> fmt::Debug for Vet<L, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Vet")
            .field("layout", &L::NAME)
            .field("scheme", &self.scheme)
            .field("nodes", &self.table.len())
            .field("leaves", &self.leaves)
            .finish()
    }
}

impl<L: NodeLayout, T: NodeTable<L::Node>> Vet<L, T> {
    /// An empty trie over `logical_pages` pages (at most 2^31, see [`VetConfig::check`]).
    pub fn new(logical_pages: u32, scheme: InsertScheme) -> Self {
        assert!(
            logical_pages <= 1 << 31,
            "invariant: VetConfig::check refused larger devices"
        );
        let bits = universe_bits(logical_pages);
        Vet {
            table: T::default(),
            layout: L::default(),
            scheme,
            search: VetSearch::default(),
            bits,
            logical_pages,
            vital: (0..=bits).map(|l| scheme.vital_levels(l, bits)).collect(),
            search_path: InsertScheme::Bis.vital_levels(0, bits) | 1,
            leaves: 0,
            extents: 0,
            mapped: 0,
            counts: VetCounts::default(),
            last_leaf_level: Cell::new(0),
            scratch: Vec::new(),
        }
    }

    /// An empty trie with `config`'s insertion scheme and search (its node layout and
    /// table are the type's).
    pub fn with_config(logical_pages: u32, config: &VetConfig) -> Self {
        Self::new(logical_pages, config.insert).with_search(config.search)
    }

    /// The same trie searched by `search` ([`VetSearch::Paper`] unless set).
    pub fn with_search(mut self, search: VetSearch) -> Self {
        self.search = search;
        self
    }

    /// Hash-table probes made by searches so far, and of those the probes reads made.
    pub fn probes(&self) -> (u64, u64) {
        (self.counts.probes.get(), self.counts.read_probes.get())
    }

    /// A search's probe: the node of `lpn`'s canonical extent at `level`, counted.
    #[inline(always)]
    fn probe(&self, lpn: u32, level: u32) -> Option<L::Node> {
        let c = &self.counts;
        c.probes.set(c.probes.get() + 1);
        self.table.get(Canonical::containing(lpn, level).key())
    }

    /// Address bits of the trie (its levels are `0..=bits`).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Every node, as (canonical extent, `Some(input extent)` for a leaf or `None` for an
    /// internal node), sorted by key: for tests and figures.
    pub fn nodes(&self) -> Vec<(Canonical, Option<Extent>)> {
        let mut nodes = Vec::with_capacity(self.table.len());
        self.table.for_each(|key, node| {
            let leaf = L::refs(node).is_none().then(|| self.layout.extent(node));
            nodes.push((Canonical::from_key(key), leaf));
        });
        nodes.sort_by_key(|(c, _)| (c.start, std::cmp::Reverse(c.level)));
        nodes
    }

    /// Leaf nodes.
    pub fn leaves(&self) -> u64 {
        self.leaves
    }

    /// Internal nodes.
    pub fn internals(&self) -> u64 {
        self.table.len() as u64 - self.leaves
    }

    /// Algorithm 2 for one address: binary search on the levels of its path.
    #[inline]
    fn search(&self, lpn: u32) -> Found<L::Node> {
        self.search_in(lpn, 0, self.bits as i32, None)
    }

    /// One address's search outside a walk (a page lookup, a GC move): Algorithm 2, or
    /// under [`VetSearch::Guided`] [`Self::search_near`] at the level where the last walk
    /// found its last leaf (where leaves are one page long, as on a map that GC has
    /// fragmented, the first probe is the answer).
    #[inline]
    fn search_guessed(&self, lpn: u32) -> Found<L::Node> {
        match self.search {
            VetSearch::Paper => self.search(lpn),
            VetSearch::Guided => self.search_near(lpn, Some(self.last_leaf_level.get())),
        }
    }

    /// Algorithm 2 from one of its states: the levels `lo..=hi` left to search, and the
    /// first level found missing so far (whose canonical extent is unmapped if the search
    /// ends in a hole).
    #[inline]
    fn search_in(&self, lpn: u32, lo: i32, hi: i32, hole: Option<u32>) -> Found<L::Node> {
        let mut key = SearchKey { lpn, lo, hi };
        let mut hole = hole;
        loop {
            if key.lo > key.hi {
                return Found::Hole(hole.unwrap_or(0));
            }
            let mid = (key.lo + key.hi) / 2;
            match self.probe(key.lpn, mid as u32) {
                Some(node) => match L::refs(node) {
                    None => return Found::Leaf(node, mid as u32),
                    Some(_) => key.hi = mid - 1,
                },
                None => {
                    hole.get_or_insert(mid as u32);
                    key.lo = mid + 1;
                }
            }
        }
    }

    /// [`Self::search`], trying first the level where a previous search found its leaf
    /// (of the same walk, or of the last one): neighbouring extents are often the same
    /// size, and a leaf found there is the answer in one probe (leaves are disjoint, so a
    /// leaf holding `lpn` is *the* leaf wherever it is found). When that level is on the
    /// search path of a one-page leaf, what the probe found there continues the search
    /// ([`Self::search_up`]); otherwise a missing or internal node proves nothing (under
    /// BIS it may be off every search path), and the binary search follows.
    #[inline]
    fn search_near(&self, lpn: u32, level: Option<u32>) -> Found<L::Node> {
        if let Some(level) = level {
            let found = self.probe(lpn, level);
            if let Some(node) = found
                && L::refs(node).is_none()
            {
                return Found::Leaf(node, level);
            }
            if self.search_path & (1 << level) != 0 {
                return self.search_up(lpn, level, found.is_some());
            }
        }
        self.search(lpn)
    }

    /// Algorithm 2 resumed from the bottom of the left-most search path, the path of a
    /// one-page leaf (`search_path`: the levels where the search goes down every time,
    /// 11, 5, 2 and 0 in a 2^22-page trie), given what `level`, one of those levels, holds
    /// for `lpn`: an internal node, or nothing.
    ///
    /// - An internal node at such a level `m` holding `lpn` has a leaf below it, whose own
    ///   search went down through every level of the path above `m` (the leaf is below all
    ///   of them), so those hold internal nodes too: Algorithm 2 for `lpn` would have gone
    ///   down at each of them and at `m`, and continues at levels `0..m`.
    /// - Nothing at `m`: the next level of the path above `m` is probed. A leaf there is
    ///   the answer; an internal node means Algorithm 2 goes down there, reaches `m` and
    ///   goes up (`m` is the first missing level on its path), continuing between the two;
    ///   nothing, and the next one up is probed. Nothing at the top level: the search
    ///   continues above it.
    ///
    /// Where the map is fragmented (homes), a one-page hole among one-page leaves costs
    /// three probes this way (levels 0, 2 and 1) rather than the six of a guess and a
    /// binary search from the top; a hole far from any leaf costs one or two more.
    /// *Departure:* the same levels as Algorithm 2 decide the answer, probed bottom-up.
    fn search_up(&self, lpn: u32, level: u32, internal: bool) -> Found<L::Node> {
        if internal {
            return self.search_in(lpn, 0, level as i32 - 1, None);
        }
        let mut below = level;
        let mut above = self.search_path & !((2u64 << level) - 1);
        while above != 0 {
            let m = above.trailing_zeros();
            above &= above - 1;
            match self.probe(lpn, m) {
                Some(node) => {
                    if L::refs(node).is_none() {
                        return Found::Leaf(node, m);
                    }
                    return self.search_in(lpn, below as i32 + 1, m as i32 - 1, Some(below));
                }
                None => below = m,
            }
        }
        self.search_in(lpn, below as i32 + 1, self.bits as i32, Some(below))
    }

    /// The leaf holding `lpn` when the page before it is known not to share a leaf with it
    /// (a walk's every address after its first: the walk has just covered `lpn - 1` with a
    /// leaf that ends there, or proved it unmapped). A canonical extent above level
    /// `tz(lpn)` (the trailing zeros of `lpn`) that holds `lpn` also holds `lpn - 1`, so
    /// the leaf, if there is one, is at or below that level; when those are few levels
    /// each is probed directly (a leaf found is trusted wherever it is found), and none
    /// holding a leaf proves `lpn` unmapped: one page, `Found::Hole(0)`. Otherwise
    /// [`Self::search_near`]. Exact under LIS and BIS alike: it relies on leaves being
    /// disjoint, not on which internal nodes exist.
    #[inline]
    fn search_next(&self, lpn: u32, hint: Option<u32>) -> Found<L::Node> {
        if let Some(top) = self.direct_top(lpn) {
            for level in 0..=top {
                if let Some(node) = self.probe(lpn, level)
                    && L::refs(node).is_none()
                {
                    return Found::Leaf(node, level);
                }
            }
            return Found::Hole(0);
        }
        self.search_near(lpn, hint)
    }

    /// The highest level [`Self::search_next`] probes directly for `lpn`, when it does:
    /// `tz(lpn)`, if that is below [`DIRECT_LEVELS`].
    #[inline(always)]
    fn direct_top(&self, lpn: u32) -> Option<u32> {
        let top = lpn.trailing_zeros().min(self.bits);
        (top < DIRECT_LEVELS).then_some(top)
    }

    /// One search of a walk from `start`: [`Self::search_near`] at the level where the last
    /// walk found its last leaf for the first address, [`Self::search_next`] for the later
    /// ones; `leaf_level` carries the level of the walk's last leaf from one search to the
    /// next. *Departure:* Algorithm 2 starts every search at the middle level. Where the
    /// map is fragmented (homes), most leaves are one page long and the first probe at
    /// level 0 is the answer, instead of the three or four of a binary search; a wrong
    /// guess costs one probe.
    /// Under [`VetSearch::Paper`], Algorithm 2 for every address.
    #[inline]
    fn step(&self, at: u32, start: u32, leaf_level: &mut Option<u32>) -> Found<L::Node> {
        if self.search == VetSearch::Paper {
            return self.search(at);
        }
        let found = if at == start {
            self.search_near(at, Some(self.last_leaf_level.get()))
        } else {
            self.search_next(at, *leaf_level)
        };
        if let Found::Leaf(_, level) = found {
            *leaf_level = Some(level);
            self.last_leaf_level.set(level);
        }
        found
    }

    /// Cover `[start, end)` with runs, holes included; returns the leaves found. Generic over
    /// the sink, so that each caller gets its own copy with the sink inlined (a `dyn` sink
    /// kept one shared copy out of line, a call and an indirect call a run).
    fn walk(&self, start: u32, end: u32, out: &mut (impl FnMut(PhysRun) + ?Sized)) -> u64 {
        let (mut at, mut hole_from, mut returned) = (start, None, 0);
        let mut leaf_level = None;
        while at < end {
            match self.step(at, start, &mut leaf_level) {
                Found::Leaf(node, _) => {
                    let part = self
                        .layout
                        .extent(node)
                        .clip(at, end)
                        .expect("invariant: the leaf found holds the address");
                    if let Some(from) = hole_from.take() {
                        out(hole(from, at));
                    }
                    out(PhysRun {
                        lpn: Lpn(at),
                        ppn: Some(Ppn(part.ppn)),
                        len: part.len,
                    });
                    returned += 1;
                    at = part.end();
                }
                Found::Hole(level) => {
                    hole_from.get_or_insert(at);
                    at = Canonical::containing(at, level).end().min(u64::from(end)) as u32;
                }
            }
        }
        if let Some(from) = hole_from {
            out(hole(from, end));
        }
        returned
    }

    /// The input extents overlapping `[start, end)`, with their nodes, into `found`.
    fn overlapping(&self, start: u32, end: u32, found: &mut Vec<(Extent, L::Node)>) {
        let (mut at, mut leaf_level) = (start, None);
        while at < end {
            match self.step(at, start, &mut leaf_level) {
                Found::Leaf(node, _) => {
                    let extent = self.layout.extent(node);
                    found.push((extent, node));
                    at = extent.end();
                }
                Found::Hole(level) => {
                    at = Canonical::containing(at, level).end().min(u64::from(end)) as u32;
                }
            }
        }
    }

    /// Store `extent` (Algorithm 1 or 3 for each canonical extent, after the extents it
    /// overlaps were cut); report the physical pages it invalidated. Returns (canonical
    /// extents generated, existing canonical extents overlapped).
    fn write(&mut self, extent: Extent, dropped: &mut impl FnMut(Ppn)) -> (u64, u64) {
        if extent.len == 0 {
            return (0, 0);
        }
        let mut found = std::mem::take(&mut self.scratch);
        found.clear();
        self.overlapping(extent.start, extent.end(), &mut found);
        if let [(old, node)] = found[..]
            && old.start == extent.start
            && old.len == extent.len
        {
            // An overwrite of exactly one input extent: its canonical extents, and so its
            // leaves and their search paths, are the new one's. Cutting it and inserting
            // the new one would remove and re-create the same nodes; the leaves are told
            // where the data now lives instead. The counts are what that would have counted.
            self.scratch = found;
            for ppn in old.ppn..old.ppn + old.len {
                dropped(Ppn(ppn));
            }
            let pieces = canonical_pieces(extent.start, extent.end()).count() as u64;
            self.repoint(node, extent);
            return (pieces, pieces);
        }
        let mut overlapped = 0;
        for &(old, node) in &found {
            overlapped += self.cut(old, node, extent.start, extent.end(), dropped);
        }
        self.scratch = found;
        let node = self.layout.make(extent);
        let mut generated = 0;
        for piece in canonical_pieces(extent.start, extent.end()) {
            self.insert_leaf(piece, node);
            generated += 1;
        }
        self.extents += 1;
        self.mapped += u64::from(extent.len);
        (generated, overlapped)
    }

    /// Cut logical `[from, to)` out of input extent `old` held by leaves `node` (partial
    /// invalidation, Fig. 3, or removal of the whole extent). Returns the canonical extents
    /// of `old` that overlapped the cut.
    fn cut(
        &mut self,
        old: Extent,
        node: L::Node,
        from: u32,
        to: u32,
        dropped: &mut impl FnMut(Ppn),
    ) -> u64 {
        let left = old.clip(old.start, from);
        let right = old.clip(to, old.end());
        // Pinned, so that a pointer-dependent record outlives the removal of its last leaf
        // while its remainder is re-inserted.
        self.layout.attach(node);
        let left_node = left.map(|l| self.layout.retarget(node, l).unwrap_or(node));
        let right_node = right.map(|r| match left_node {
            None => self.layout.retarget(node, r).unwrap_or(node),
            Some(_) => self.layout.make(r),
        });
        self.extents = self.extents + u64::from(left.is_some()) + u64::from(right.is_some()) - 1;
        let mut overlapped = 0;
        for piece in canonical_pieces(old.start, old.end()) {
            if piece.end() <= u64::from(from) || piece.start >= to {
                let side = if piece.start < from {
                    left_node
                } else {
                    right_node
                };
                let side = side.expect("invariant: a piece outside the cut is in a remainder");
                if side != node {
                    self.set_leaf(piece, side);
                }
                continue;
            }
            overlapped += 1;
            self.remove_leaf(piece);
            if piece.start < from {
                let side = left_node.expect("invariant: left remainder");
                for rest in canonical_pieces(piece.start, from) {
                    self.insert_leaf(rest, side);
                }
            }
            if piece.end() > u64::from(to) {
                let side = right_node.expect("invariant: right remainder");
                for rest in canonical_pieces(to, piece.end() as u32) {
                    self.insert_leaf(rest, side);
                }
            }
        }
        let gone = old
            .clip(from, to)
            .expect("invariant: the extent overlaps the cut");
        for ppn in gone.ppn..gone.ppn + gone.len {
            dropped(Ppn(ppn));
        }
        self.mapped -= u64::from(gone.len);
        self.layout.detach(node);
        overlapped
    }

    /// Add a leaf and the internal nodes on its search path (or count one more leaf on
    /// those that exist).
    fn insert_leaf(&mut self, piece: Canonical, node: L::Node) {
        let mut levels = self.vital[piece.level as usize];
        while levels != 0 {
            let level = levels.trailing_zeros();
            levels &= levels - 1;
            let key = Canonical::containing(piece.start, level).key();
            let slot = self.table.get_or_insert(key, L::internal(0));
            let refs = L::refs(*slot).expect("invariant: no leaf above a new leaf");
            *slot = L::internal(refs + 1);
        }
        self.layout.attach(node);
        self.table.insert_absent(piece.key(), node);
        self.leaves += 1;
    }

    /// Remove a leaf and release its search path: internal nodes no other leaf needs go.
    fn remove_leaf(&mut self, piece: Canonical) {
        let node = self
            .table
            .remove(piece.key())
            .expect("invariant: the leaf exists");
        self.layout.detach(node);
        self.leaves -= 1;
        let mut levels = self.vital[piece.level as usize];
        while levels != 0 {
            let level = levels.trailing_zeros();
            levels &= levels - 1;
            let key = Canonical::containing(piece.start, level).key();
            let slot = self
                .table
                .get_mut(key)
                .expect("invariant: a leaf's path exists");
            let refs = L::refs(*slot).expect("invariant: internal");
            if refs == 1 {
                self.table.remove(key);
            } else {
                *slot = L::internal(refs - 1);
            }
        }
    }

    /// The input extent held by leaves `node` now lives at `extent`'s physical start (same
    /// logical range): edit its record, or rewrite its leaves, in place.
    fn repoint(&mut self, node: L::Node, extent: Extent) {
        if let Some(moved) = self.layout.retarget(node, extent) {
            for piece in canonical_pieces(extent.start, extent.end()) {
                self.set_leaf(piece, moved);
            }
        }
    }

    /// Point an existing leaf at another node.
    fn set_leaf(&mut self, piece: Canonical, node: L::Node) {
        let slot = self
            .table
            .get_mut(piece.key())
            .expect("invariant: the leaf exists");
        let old = std::mem::replace(slot, node);
        self.layout.detach(old);
        self.layout.attach(node);
    }

    /// The input extent that a run moved to logical `lpn` and physical `to` continues (it
    /// ends just before both), if any.
    fn continued_by(&self, lpn: u32, to: u32) -> Option<Extent> {
        let Found::Leaf(node, _) = self.search_guessed(lpn.checked_sub(1)?) else {
            return None;
        };
        let before = self.layout.extent(node);
        (before.end() == lpn && before.ppn + before.len == to).then_some(before)
    }

    /// Garbage collection moved logical `[lpn, lpn + len)` to physical `[to, to + len)`; a
    /// run that continues its logical predecessor physically joins it. `preceding` is
    /// [`Mapping::relocate_batch`]'s promise about physical page `to - 1`: when the only
    /// logical page that can map there is not `lpn - 1`, nothing can be continued and the
    /// search for `lpn - 1` (a cache miss of its own, on a fragmented map) is skipped.
    fn relocate_run(&mut self, lpn: u32, to: u32, len: u32, preceding: Option<Lpn>) {
        self.counts.relocation_runs += 1;
        let mut extent = Extent {
            start: lpn,
            len,
            ppn: to,
        };
        let may_continue = may_continue(lpn, preceding);
        debug_assert!(
            may_continue || self.continued_by(lpn, to).is_none(),
            "invariant: page {to} - 1 holds no logical page but {preceding:?}"
        );
        if let Some(before) = may_continue.then(|| self.continued_by(lpn, to)).flatten() {
            self.counts.relocation_merges += 1;
            extent = Extent {
                start: before.start,
                len: before.len + len,
                ppn: before.ppn,
            };
        } else if let Found::Leaf(node, _) = self.search_guessed(lpn)
            && let current = self.layout.extent(node)
            && current.start == lpn
            && current.len == len
        {
            // The run is a whole input extent (a fragmented map's usual case: one page, one
            // extent): its leaves keep their places and only say where it now lives.
            self.repoint(node, extent);
            return;
        }
        self.write(extent, &mut |_| {});
    }

    /// Check the trie's structure: leaves disjoint, each within its input extent and
    /// reachable by the search, every internal node's count equal to the leaves whose path
    /// it is on, the leaf count right.
    pub fn check(&self) -> Result<(), String> {
        let mut all = Vec::with_capacity(self.table.len());
        self.table.for_each(|key, node| all.push((key, node)));
        // Disjoint first: two leaves that overlap nest (canonical extents do), and the
        // search can reach only one of them, so this is the error to name.
        let mut pieces: Vec<Canonical> = all
            .iter()
            .filter(|&&(_, node)| L::refs(node).is_none())
            .map(|&(key, _)| Canonical::from_key(key))
            .collect();
        pieces.sort();
        for pair in pieces.windows(2) {
            if pair[0].end() > u64::from(pair[1].start) {
                return Err(format!("leaves {:?} and {:?} overlap", pair[0], pair[1]));
            }
        }
        if pieces.len() as u64 != self.leaves {
            return Err(format!(
                "{} leaves counted, {} in the table",
                self.leaves,
                pieces.len()
            ));
        }
        let mut refs: BTreeMap<u32, u32> = BTreeMap::new();
        for &(key, node) in &all {
            if L::refs(node).is_some() {
                continue;
            }
            let piece = Canonical::from_key(key);
            let extent = self.layout.extent(node);
            if u64::from(extent.start) > u64::from(piece.start)
                || u64::from(extent.end()) < piece.end()
            {
                return Err(format!("leaf {piece:?} outside its extent {extent:?}"));
            }
            // Leaves are disjoint (above), so a leaf the search finds at either end of this
            // one is this one.
            for lpn in [piece.start, (piece.end() - 1) as u32] {
                if let Found::Hole(_) = self.search(lpn) {
                    return Err(format!(
                        "the search for {lpn} misses leaf at level {}",
                        piece.level
                    ));
                }
            }
            let mut levels = self.vital[piece.level as usize];
            while levels != 0 {
                let level = levels.trailing_zeros();
                levels &= levels - 1;
                *refs
                    .entry(Canonical::containing(piece.start, level).key())
                    .or_default() += 1;
            }
        }
        for &(key, node) in &all {
            if let Some(count) = L::refs(node) {
                let expected = refs.get(&key).copied().unwrap_or(0);
                if count != expected {
                    return Err(format!(
                        "internal {:?} counts {count} leaves, {expected} use it",
                        Canonical::from_key(key)
                    ));
                }
            }
        }
        Ok(())
    }
}

fn hole(from: u32, to: u32) -> PhysRun {
    PhysRun {
        lpn: Lpn(from),
        ppn: None,
        len: to - from,
    }
}

impl<L: NodeLayout, T: NodeTable<L::Node>> MappingHints for Vet<L, T> {
    const RELOCATES_RUNS: bool = true;
    const LOOKUP_SEARCHES: bool = true;

    /// Fetch the lines of the last two probes of a search that ends on a one-page leaf:
    /// the leaf (or the proof of a one-page hole) and the internal node just above it on the
    /// search path. Those are where a fragmented map's searches miss the cache; the probes
    /// above them are shared by many addresses and mostly cached.
    #[inline]
    fn prefetch(&self, lpn: Lpn) {
        self.table.prefetch(Canonical::containing(lpn.0, 0).key());
        let above = self.search_path & !1;
        if above != 0 {
            let level = above.trailing_zeros();
            self.table
                .prefetch(Canonical::containing(lpn.0, level).key());
        }
    }

    /// The probes a walk over `range` makes when its leaves are one page long, the case
    /// whose probes miss the cache (a fragmented map): the first page's binary search
    /// (every level it visits on its way to level 0) and, for each later page, the levels
    /// `search_next` probes directly.
    #[inline]
    fn prefetch_range(&self, range: PageRange) {
        let start = range.start.0;
        let mut levels = self.search_path;
        while levels != 0 {
            let level = levels.trailing_zeros();
            levels &= levels - 1;
            self.table
                .prefetch(Canonical::containing(start, level).key());
        }
        let end = start + range.count.min(PREFETCH_PAGES as u32);
        if self.search == VetSearch::Paper {
            // Each later page's binary search takes the same path down to a one-page leaf.
            for lpn in start + 1..end {
                let mut levels = self.search_path;
                while levels != 0 {
                    let level = levels.trailing_zeros();
                    levels &= levels - 1;
                    self.table.prefetch(Canonical::containing(lpn, level).key());
                }
            }
            return;
        }
        for lpn in start + 1..end {
            // Where search_next falls back to a binary search, its leaf level is a guess;
            // level 0 is the one a fragmented map needs.
            for level in 0..=self.direct_top(lpn).unwrap_or(0) {
                self.table.prefetch(Canonical::containing(lpn, level).key());
            }
        }
    }
}

impl<L: NodeLayout, T: NodeTable<L::Node>> Mapping for Vet<L, T> {
    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<Ppn> {
        match self.search_guessed(lpn.0) {
            Found::Leaf(node, _) => Some(self.layout.extent(node).ppn_of(lpn.0)),
            Found::Hole(_) => None,
        }
    }

    fn translate(&self, range: PageRange, out: &mut impl FnMut(PhysRun)) {
        let c = &self.counts;
        let before = c.probes.get();
        let returned = self.walk(range.start.0, range.end() as u32, out);
        c.reads.set(c.reads.get() + 1);
        c.returned.set(c.returned.get() + returned);
        c.read_probes
            .set(c.read_probes.get() + c.probes.get() - before);
    }

    fn update(&mut self, start: Lpn, ppn: Ppn, len: u32, invalidated: &mut impl FnMut(Ppn)) {
        let extent = Extent {
            start: start.0,
            len,
            ppn: ppn.0,
        };
        let (generated, overlapped) = self.write(extent, invalidated);
        self.counts.writes += 1;
        self.counts.generated += generated;
        self.counts.overlapped += overlapped;
    }

    fn relocate(&mut self, lpn: Lpn, _from: Ppn, to: Ppn) {
        self.relocate_run(lpn.0, to.0, 1, None);
    }

    fn relocate_batch(&mut self, moved: &[(Lpn, Ppn)], to: Ppn, preceding: Option<Lpn>) {
        for (offset, len, preceding) in contiguous_runs(moved, preceding) {
            self.relocate_run(moved[offset].0.0, to.0 + offset as u32, len, preceding);
        }
    }

    fn remove(&mut self, range: PageRange, invalidated: &mut impl FnMut(Ppn)) {
        let (start, end) = (range.start.0, range.end() as u32);
        let mut found = std::mem::take(&mut self.scratch);
        found.clear();
        self.overlapping(start, end, &mut found);
        for &(old, node) in &found {
            self.cut(old, node, start, end, invalidated);
        }
        self.scratch = found;
    }

    fn mapped_pages(&self) -> u64 {
        self.mapped
    }

    fn memory(&self) -> MappingMemory {
        MappingMemory {
            packed_bytes: self.table.len() as u64 * L::PACKED_NODE_BYTES
                + self.layout.packed_bytes(),
            heap_bytes: (self.table.heap_bytes()
                + self.scratch.capacity() * std::mem::size_of::<(Extent, L::Node)>())
                as u64
                + self.layout.heap_bytes(),
        }
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        hash_runs(hasher, |out| {
            self.walk(0, self.logical_pages, out);
        });
    }

    fn check_structure(&self) -> Result<(), InvariantViolation> {
        self.check().map_err(InvariantViolation)
    }

    fn extra_stats(&self, extra: &mut BTreeMap<Gauge, f64>) {
        let c = &self.counts;
        let per = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        extra.insert(Gauge::VetLeaves, self.leaves as f64);
        extra.insert(Gauge::VetInternalNodes, self.internals() as f64);
        extra.insert(Gauge::VetExtents, self.extents as f64);
        extra.insert(
            Gauge::VetCanonicalGeneratedPerWrite,
            per(c.generated, c.writes),
        );
        extra.insert(
            Gauge::VetCanonicalOverlappedPerWrite,
            per(c.overlapped, c.writes),
        );
        extra.insert(
            Gauge::VetCanonicalReturnedPerRead,
            per(c.returned.get(), c.reads.get()),
        );
        extra.insert(
            Gauge::VetProbesPerRead,
            per(c.read_probes.get(), c.reads.get()),
        );
        extra.insert(Gauge::VetRelocationRuns, c.relocation_runs as f64);
        extra.insert(Gauge::VetRelocationMerges, c.relocation_merges as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;

    /// The memory a report prints, from the trie's contents: 16 bytes a node (key and
    /// extent) in the pointer-free layout; 8 a node and 16 an extent record in the
    /// pointer-dependent one, one record per input extent; the heap, the table's and the
    /// scratch buffer's, and the records' slab and free list.
    #[test]
    fn memory_counts_nodes_and_records() {
        fn fill<L: NodeLayout>(vet: &mut Vet<L>) {
            let mut rng = SimRng::for_stream(3, "vet memory");
            for _ in 0..400 {
                let start = rng.random_range(0..1000);
                let len = rng.random_range(1..=24);
                let ppn = rng.random_range(0..1 << 20);
                vet.update(Lpn(start), Ppn(ppn), len, &mut |_| {});
            }
        }
        let mut pf = Vet::<Pf>::new(1024, InsertScheme::Bis);
        fill(&mut pf);
        let nodes = pf.leaves() + pf.internals();
        assert_eq!(nodes, pf.table.len() as u64);
        let memory = pf.memory();
        assert_eq!(memory.packed_bytes, nodes * 16);
        let scratch = pf.scratch.capacity() * std::mem::size_of::<(Extent, PfNode)>();
        assert_eq!(memory.heap_bytes, (pf.table.heap_bytes() + scratch) as u64);

        let mut pd = Vet::<Pd>::new(1024, InsertScheme::Bis);
        fill(&mut pd);
        let nodes = pd.leaves() + pd.internals();
        let memory = pd.memory();
        assert_eq!(memory.packed_bytes, nodes * 8 + pd.extents * 16);
        assert_eq!(
            pd.extents,
            (pd.layout.records.len() - pd.layout.free.len()) as u64
        );
        let scratch = pd.scratch.capacity() * std::mem::size_of::<(Extent, u32)>();
        let records = pd.layout.records.capacity() * 16 + pd.layout.free.capacity() * 4;
        assert_eq!(
            memory.heap_bytes,
            (pd.table.heap_bytes() + scratch + records) as u64
        );
    }

    /// The figures a report prints, counted by hand on a small trie: writes and the
    /// canonical extents they generate and overlap, reads and the leaves they return, the
    /// node census, relocated runs and the runs that joined their predecessor.
    #[test]
    fn extra_stats_count_by_hand() {
        let mut vet = Vet::<Pf>::new(64, InsertScheme::Bis);
        let stats = |vet: &Vet<Pf>| {
            let mut extra = BTreeMap::new();
            vet.extra_stats(&mut extra);
            extra
        };
        let empty = stats(&vet);
        assert_eq!(empty.len(), 9);
        assert!(empty.values().all(|&v| v == 0.0), "{empty:?}");
        vet.update(Lpn(5), Ppn(100), 7, &mut |_| {}); // <5,0> <6,1> <8,2>: 3 generated
        vet.update(Lpn(20), Ppn(200), 1, &mut |_| {}); // <20,0>
        vet.update(Lpn(12), Ppn(50), 1, &mut |_| {}); // <12,0>
        vet.update(Lpn(6), Ppn(300), 2, &mut |_| {}); // cuts <6,1> out of [5, 12)
        let mut runs = Vec::new();
        vet.translate(PageRange::new(Lpn(4), 10), &mut |r| runs.push(r));
        // A hole, three leaves ([5, 6), [6, 8), [8, 12)) and one more ([12, 13)), a hole.
        assert_eq!(runs.len(), 6);
        vet.translate(PageRange::new(Lpn(20), 1), &mut |_| {});
        // Page 12 moves to 107, just past [8, 12) at 103..107: it joins it. Page 20 moves
        // alone.
        vet.relocate_batch(&[(Lpn(12), Ppn(50))], Ppn(107), None);
        vet.relocate_batch(&[(Lpn(20), Ppn(200))], Ppn(400), None);
        let extra = stats(&vet);
        let internal = vet
            .nodes()
            .iter()
            .filter(|(_, leaf)| leaf.is_none())
            .count();
        let (_, read_probes) = vet.probes();
        assert!(read_probes > 0);
        let expected = [
            // <5,0> <6,1> <8,2> <12,0> from the join, <20,0>
            (Gauge::VetLeaves, 5.0),
            (Gauge::VetInternalNodes, internal as f64),
            // [5, 6), [6, 8), [8, 13), [20, 21)
            (Gauge::VetExtents, 4.0),
            (Gauge::VetCanonicalGeneratedPerWrite, 6.0 / 4.0),
            (Gauge::VetCanonicalOverlappedPerWrite, 1.0 / 4.0),
            (Gauge::VetCanonicalReturnedPerRead, 5.0 / 2.0),
            (Gauge::VetProbesPerRead, read_probes as f64 / 2.0),
            (Gauge::VetRelocationRuns, 2.0),
            (Gauge::VetRelocationMerges, 1.0),
        ];
        assert_eq!(extra, BTreeMap::from(expected));
        assert!(internal > 0);
        assert_eq!(vet.leaves() + vet.internals(), vet.table.len() as u64);
        assert_eq!(vet.mapped_pages(), 9);
        vet.check().expect("a consistent trie");
    }

    /// The checker fires on each invariant broken by hand: a leaf outside its extent, a
    /// leaf the search cannot reach (an internal node on its path gone), the leaf count,
    /// two leaves that overlap, an internal node's count.
    #[test]
    fn the_checker_fires_on_a_corrupted_trie() {
        let mut good = Vet::<Pf>::new(64, InsertScheme::Bis);
        good.update(Lpn(5), Ppn(100), 7, &mut |_| {}); // <5,0> <6,1> <8,2>
        good.update(Lpn(40), Ppn(200), 3, &mut |_| {}); // <40,1> <42,0>
        good.check().expect("a consistent trie");
        let key = |start, level| Canonical { start, level }.key();
        let corrupt = |f: &dyn Fn(&mut Vet<Pf>), expected: &str| {
            let mut bad = good.clone();
            f(&mut bad);
            let error = bad.check().expect_err(expected);
            assert!(error.contains(expected), "{error}");
            // What the page FTL's checker calls.
            assert_eq!(bad.check_structure(), Err(InvariantViolation(error)));
        };
        // The leaf <8,2> (pages 8-11) given an extent that misses its first page, then one
        // that misses its last.
        for (start, ppn, expected) in [
            (
                9,
                104,
                "leaf Canonical { start: 8, level: 2 } outside its extent",
            ),
            (8, 103, "outside its extent"),
        ] {
            corrupt(
                &|vet| {
                    let node = vet.layout.make(Extent { start, len: 3, ppn });
                    vet.table.insert(key(8, 2), node);
                },
                expected,
            );
        }
        // Under BIS, a one-page leaf of a 64-page trie is found through levels 3 and 1.
        corrupt(
            &|vet| {
                vet.table.remove(key(40, 3));
            },
            "the search for 42 misses leaf at level 0",
        );
        corrupt(&|vet| vet.leaves += 1, "6 leaves counted, 5 in the table");
        corrupt(
            &|vet| {
                let node = vet.layout.make(Extent {
                    start: 9,
                    len: 1,
                    ppn: 500,
                });
                vet.table.insert(key(9, 0), node);
                vet.leaves += 1;
            },
            "leaves Canonical { start: 8, level: 2 } and Canonical { start: 9, level: 0 } overlap",
        );
        corrupt(
            &|vet| {
                let refs =
                    Pf::refs(vet.table.get(key(40, 3)).expect("internal")).expect("internal");
                vet.table.insert(key(40, 3), Pf::internal(refs + 1));
            },
            "counts",
        );
    }

    /// The options' command-line names, each parsed back, and an unknown one refused with
    /// the names it could have been.
    #[test]
    fn options_are_named_as_the_command_line_spells_them() {
        fn names<
            T: Copy + fmt::Display + std::str::FromStr<Err = String> + PartialEq + fmt::Debug,
        >(
            all: &[T],
            expected: &[&str],
            what: &str,
        ) {
            let shown: Vec<String> = all.iter().map(T::to_string).collect();
            assert_eq!(shown, expected);
            for (&option, name) in all.iter().zip(expected) {
                assert_eq!(name.parse::<T>(), Ok(option));
            }
            let error = "nope".parse::<T>().expect_err("unknown");
            assert_eq!(
                error,
                format!(
                    "unknown {what} \"nope\" (expected one of: {})",
                    expected.join(", ")
                )
            );
        }
        names(&VetSearch::ALL, &["paper", "guided"], "VET read search");
        names(&InsertScheme::ALL, &["lis", "bis"], "VET insertion scheme");
        names(&VetNodes::ALL, &["pd", "pf"], "VET node layout");
        names(
            &VetTable::ALL,
            &["cuckoo", "swiss", "std"],
            "VET hash table",
        );
    }

    /// Keys are 32-bit codes `2 * start + 2^level`: 2^31 logical pages at most.
    #[test]
    fn a_vet_addresses_at_most_two_to_the_31_pages() {
        let config = VetConfig::default();
        assert!(config.check(1 << 31).is_ok());
        let error = config.check((1 << 31) + 1).expect_err("too large");
        assert!(error.to_string().contains("2147483649"), "{error}");
        let vet = Vet::<Pf>::new(1 << 31, InsertScheme::Bis);
        assert_eq!(vet.bits(), 31);
        assert_eq!(
            format!("{vet:?}"),
            "Vet { layout: \"pf\", scheme: Bis, nodes: 0, leaves: 0 }"
        );
    }

    /// The guided search's probes, counted by hand on a 1,024-page trie (levels 0-10; a
    /// one-page leaf's search path, under BIS, is levels 5, 2 and 0) holding one-page leaves
    /// at 0-9 but 5, a two-page leaf at 10, a four-page one at 12, eight-page ones at 16 and
    /// 24, and a 64-page one at 64 (whose one internal node is at level 8).
    #[test]
    fn the_guided_search_probes_the_levels_it_promises() {
        let mut vet = Vet::<Pf>::new(1 << 10, InsertScheme::Bis).with_search(VetSearch::Guided);
        for lpn in 0..10 {
            vet.update(Lpn(lpn), Ppn(2 * lpn), 1, &mut |_| {});
        }
        vet.update(Lpn(10), Ppn(100), 2, &mut |_| {});
        vet.update(Lpn(12), Ppn(200), 4, &mut |_| {});
        vet.update(Lpn(16), Ppn(400), 8, &mut |_| {});
        vet.update(Lpn(24), Ppn(500), 8, &mut |_| {});
        vet.update(Lpn(64), Ppn(300), 64, &mut |_| {});
        vet.remove(PageRange::new(Lpn(5), 1), &mut |_| {});
        let probes = |vet: &Vet<Pf>, guess: u32, f: &dyn Fn(&Vet<Pf>)| {
            vet.last_leaf_level.set(guess);
            let before = vet.probes().0;
            f(vet);
            vet.probes().0 - before
        };
        let lookup = |lpn, expected| {
            move |vet: &Vet<Pf>| assert_eq!(vet.lookup(Lpn(lpn)), expected, "page {lpn}")
        };
        // An internal node at the guessed level 2, on the search path: levels 0-1 are left,
        // and level 0 holds the leaf.
        assert_eq!(probes(&vet, 2, &lookup(3, Some(Ppn(6)))), 2);
        // A one-page hole among one-page leaves: nothing at level 0, an internal node at 2,
        // nothing at 1.
        assert_eq!(probes(&vet, 0, &lookup(5, None)), 3);
        // Nothing at level 0 or at the path's levels above it (2 and 5), so the search goes
        // on above level 5: level 8 sends it down, 6 and 7 are empty: a hole.
        assert_eq!(probes(&vet, 0, &lookup(200, None)), 6);
        // The same from a guess at level 2: levels 5, 8, 6 and 7 after it.
        assert_eq!(probes(&vet, 2, &lookup(200, None)), 5);
        // Inside the 64-page leaf: levels 0, 2 and 5 are empty, 8 sends the search down and
        // 6 holds the leaf.
        assert_eq!(probes(&vet, 0, &lookup(100, Some(Ppn(336)))), 5);
        // A walk over 8-16: the first page's guess at level 0 is right (1); later pages
        // probe their few possible levels bottom-up: 9 at level 0 (1), 10 at levels 0 and 1
        // (2), 12 at levels 0, 1 and 2 (3).
        let walk = |vet: &Vet<Pf>| {
            let mut runs = Vec::new();
            vet.translate(PageRange::new(Lpn(8), 8), &mut |r| runs.push(r.len));
            assert_eq!(runs, [1, 1, 2, 4]);
        };
        assert_eq!(probes(&vet, 0, &walk), 7);
        // A walk over 16-32, two eight-page leaves: the first found through levels 0, 2, 5
        // and 3; page 24, a multiple of 8, could start a leaf as high as level 3, too many
        // levels to probe one by one, so the guess (level 3, the last leaf's) comes first.
        let walk = |vet: &Vet<Pf>| {
            let mut runs = Vec::new();
            vet.translate(PageRange::new(Lpn(16), 16), &mut |r| runs.push(r.len));
            assert_eq!(runs, [8, 8]);
        };
        assert_eq!(probes(&vet, 0, &walk), 5);
    }

    /// A trie over one page has one level: nothing above a one-page leaf to hint, and the
    /// hints and the map work there too.
    #[test]
    fn a_one_page_trie_maps_and_hints() {
        let mut vet = Vet::<Pf>::new(1, InsertScheme::Bis);
        assert_eq!(vet.bits(), 0);
        vet.prefetch(Lpn(0));
        vet.prefetch_range(PageRange::new(Lpn(0), 1));
        vet.update(Lpn(0), Ppn(9), 1, &mut |_| {});
        vet.prefetch(Lpn(0));
        assert_eq!(vet.lookup(Lpn(0)), Some(Ppn(9)));
        vet.check().expect("a consistent trie");
    }

    /// The hints of a request end and change nothing, under either search, from the first
    /// page to the last.
    #[test]
    fn prefetching_a_range_changes_nothing() {
        for search in VetSearch::ALL {
            let mut vet = Vet::<Pf>::new(1 << 10, InsertScheme::Bis).with_search(search);
            for lpn in (0..64).step_by(3) {
                vet.update(Lpn(lpn), Ppn(1000 + lpn), 2, &mut |_| {});
            }
            let mut before = StateHasher::new();
            vet.hash_state(&mut before);
            for (start, count) in [(0, 1), (0, 4), (1, 16), (8, 9), (1020, 4), (1023, 1)] {
                vet.prefetch_range(PageRange::new(Lpn(start), count));
                vet.prefetch(Lpn(start));
            }
            let mut after = StateHasher::new();
            vet.hash_state(&mut after);
            assert_eq!(before.finish(), after.finish(), "{search:?}");
            // The last pages of the largest trie: no page number past them is computed.
            let vet = Vet::<Pf>::new(1 << 31, InsertScheme::Bis).with_search(search);
            vet.prefetch_range(PageRange::new(Lpn((1 << 31) - 4), 4));
        }
    }

    /// What a search found, comparably: the leaf's level and extent, or the hole's level.
    fn outcome<L: NodeLayout, T: NodeTable<L::Node>>(
        vet: &Vet<L, T>,
        found: Found<L::Node>,
    ) -> (bool, u32, Option<Extent>) {
        match found {
            Found::Leaf(node, level) => (true, level, Some(vet.layout.extent(node))),
            Found::Hole(level) => (false, level, None),
        }
    }

    /// Every guess, right or wrong, on or off the one-page leaf's search path, gives what
    /// Algorithm 2 gives: the same leaf, or a hole certified at the same level. Tries of
    /// one-page leaves (homes), of mixed lengths (wdev), sparse and dense, with holes cut
    /// by trims, under both schemes and both layouts.
    fn guesses_agree<L: NodeLayout, T: NodeTable<L::Node>>(scheme: InsertScheme) {
        for (pages, writes, max_len, seed) in [
            (1 << 10, 300, 1, 1),
            (1 << 10, 100, 1, 2),
            (1000, 200, 9, 3),
            (1 << 12, 150, 40, 4),
            (777, 60, 3, 5),
        ] {
            let mut vet = Vet::<L, T>::new(pages, scheme);
            let mut rng = SimRng::for_stream(seed, "vet-guess");
            let mut ppn = 0;
            for i in 0..writes {
                let len = rng.random_range(1..=max_len).min(pages);
                let start = rng.random_range(0..=pages - len);
                if i % 7 == 6 {
                    vet.remove(PageRange::new(Lpn(start), len), &mut |_| {});
                } else {
                    vet.update(Lpn(start), Ppn(ppn), len, &mut |_| {});
                    ppn += len;
                }
            }
            vet.check().expect("a consistent trie");
            for lpn in 0..pages {
                let expected = outcome(&vet, vet.search(lpn));
                for guess in 0..=vet.bits() {
                    let got = outcome(&vet, vet.search_near(lpn, Some(guess)));
                    assert_eq!(
                        got, expected,
                        "{scheme:?} {pages} pages, seed {seed}: lpn {lpn}, guess {guess}"
                    );
                }
            }
        }
    }

    /// A relocated run that is a whole input extent keeps its leaves (and internal nodes,
    /// and extent record) where they are; a run that is part of one, or continues its
    /// predecessor, goes through the general write.
    fn whole_extent_moves_in_place<L: NodeLayout, T: NodeTable<L::Node>>(scheme: InsertScheme) {
        let mut vet = Vet::<L, T>::new(64, scheme);
        vet.update(Lpn(5), Ppn(100), 7, &mut |_| {}); // <5,0>, <6,1>, <8,2>
        vet.update(Lpn(20), Ppn(200), 1, &mut |_| {});
        vet.update(Lpn(30), Ppn(300), 4, &mut |_| {});
        let shape = (vet.leaves(), vet.internals(), vet.memory().packed_bytes);
        let moved: Vec<_> = (5..12).map(|l| (Lpn(l), Ppn(95 + l))).collect();
        vet.relocate_batch(&moved, Ppn(400), None);
        vet.relocate_batch(&[(Lpn(20), Ppn(200))], Ppn(500), None);
        assert_eq!(
            (vet.leaves(), vet.internals(), vet.memory().packed_bytes),
            shape
        );
        assert_eq!(vet.extents, 3);
        vet.check().expect("a consistent trie");
        for l in 5..12 {
            assert_eq!(vet.lookup(Lpn(l)), Some(Ppn(400 + l - 5)), "lpn {l}");
        }
        assert_eq!(vet.lookup(Lpn(20)), Some(Ppn(500)));
        // Part of an extent: it splits, as before.
        vet.relocate_batch(&[(Lpn(31), Ppn(301)), (Lpn(32), Ppn(302))], Ppn(600), None);
        assert_eq!(vet.extents, 5);
        vet.check().expect("a consistent trie");
        let pages: Vec<_> = (30..34).map(|l| vet.lookup(Lpn(l))).collect();
        assert_eq!(
            pages,
            vec![
                Some(Ppn(300)),
                Some(Ppn(600)),
                Some(Ppn(601)),
                Some(Ppn(303))
            ]
        );
        assert_eq!(vet.mapped_pages(), 12);
    }

    /// An overwrite of exactly one input extent leaves the trie's shape alone and counts
    /// what a cut and an insertion would; an overwrite that is not exact goes the long way.
    fn exact_overwrite_in_place<L: NodeLayout, T: NodeTable<L::Node>>(scheme: InsertScheme) {
        let mut vet = Vet::<L, T>::new(64, scheme);
        vet.update(Lpn(5), Ppn(100), 7, &mut |_| {}); // <5,0>, <6,1>, <8,2>
        vet.update(Lpn(30), Ppn(300), 4, &mut |_| {});
        let shape = (vet.leaves(), vet.internals(), vet.memory().packed_bytes);
        let counts = (vet.counts.generated, vet.counts.overlapped);
        let mut dropped = Vec::new();
        vet.update(Lpn(5), Ppn(400), 7, &mut |p| dropped.push(p.0));
        assert_eq!(dropped, (100..107).collect::<Vec<_>>());
        assert_eq!(
            (vet.leaves(), vet.internals(), vet.memory().packed_bytes),
            shape
        );
        assert_eq!(
            (vet.counts.generated, vet.counts.overlapped),
            (counts.0 + 3, counts.1 + 3)
        );
        assert_eq!((vet.extents, vet.mapped_pages()), (2, 11));
        vet.check().expect("a consistent trie");
        for l in 5..12 {
            assert_eq!(vet.lookup(Lpn(l)), Some(Ppn(400 + l - 5)), "lpn {l}");
        }
        // Same start, shorter: the extent is cut and its rest kept.
        let mut dropped = Vec::new();
        vet.update(Lpn(30), Ppn(500), 2, &mut |p| dropped.push(p.0));
        assert_eq!(dropped, vec![300, 301]);
        assert_eq!((vet.extents, vet.mapped_pages()), (3, 11));
        vet.check().expect("a consistent trie");
        let pages: Vec<_> = (30..34).map(|l| vet.lookup(Lpn(l))).collect();
        assert_eq!(
            pages,
            vec![
                Some(Ppn(500)),
                Some(Ppn(501)),
                Some(Ppn(302)),
                Some(Ppn(303))
            ]
        );
    }

    #[test]
    fn an_exact_overwrite_keeps_the_nodes_it_would_recreate() {
        for scheme in InsertScheme::ALL {
            exact_overwrite_in_place::<Pf, Cuckoo<PfNode, 4>>(scheme);
            exact_overwrite_in_place::<Pd, Cuckoo<u32, 8>>(scheme);
            exact_overwrite_in_place::<Pf, Swiss<PfNode>>(scheme);
        }
    }

    #[test]
    fn relocating_a_whole_extent_rewrites_only_where_it_lives() {
        for scheme in InsertScheme::ALL {
            whole_extent_moves_in_place::<Pf, Cuckoo<PfNode, 4>>(scheme);
            whole_extent_moves_in_place::<Pd, Cuckoo<u32, 8>>(scheme);
            whole_extent_moves_in_place::<Pf, Swiss<PfNode>>(scheme);
        }
    }

    #[test]
    fn a_guessed_level_never_changes_what_a_search_finds() {
        for scheme in InsertScheme::ALL {
            guesses_agree::<Pf, Cuckoo<PfNode, 4>>(scheme);
            guesses_agree::<Pd, Cuckoo<u32, 8>>(scheme);
            guesses_agree::<Pf, Swiss<PfNode>>(scheme);
        }
    }

    /// The published search probes the levels of a binary search for every page: on a trie
    /// of one-page leaves, a read of `n` pages probes the search path to level 0 `n` times
    /// (over levels 0..=10, levels 5, 2 and 0: an internal node at 5 and at 2 sends the
    /// search down; LIS's extra ancestors change nothing). The guided search finds each leaf in one
    /// probe once it has seen the level. Both find the same runs, and a write's searches
    /// are not counted as a read's.
    #[test]
    fn the_published_search_probes_every_level_of_the_binary_search() {
        for scheme in InsertScheme::ALL {
            let paper = |search| {
                let mut vet = Vet::<Pf>::new(1 << 10, scheme).with_search(search);
                for lpn in 0..64u32 {
                    // One-page extents: every other physical page, so none continues another.
                    vet.update(Lpn(lpn), Ppn(2 * lpn), 1, &mut |_| {});
                }
                let writes = vet.probes();
                assert_eq!(writes.1, 0, "{search:?}: no read yet");
                assert!(writes.0 > 0, "{search:?}: writes search too");
                let mut runs = Vec::new();
                vet.translate(PageRange::new(Lpn(8), 16), &mut |r| runs.push(r));
                let (all, reads) = vet.probes();
                assert_eq!(all - writes.0, reads, "{search:?}");
                (runs, reads, vet.search_path)
            };
            let (paper_runs, paper_probes, path) = paper(VetSearch::Paper);
            let (guided_runs, guided_probes, _) = paper(VetSearch::Guided);
            assert_eq!(paper_runs, guided_runs, "{scheme:?}");
            assert_eq!(paper_runs.len(), 16);
            assert_eq!(path.count_ones(), 3, "levels 5, 2 and 0");
            assert_eq!(paper_probes, 16 * 3, "{scheme:?}");
            assert_eq!(guided_probes, 16, "{scheme:?}");
        }
    }
}
