//! The textbook DFS of section 4 of Ajwani et al. (SEA 2009): non-recursive, a stack in
//! memory, each vertex's first unvisited neighbour explored next, the visited mark stored
//! with each vertex on the device (the paper's second setting, which scatters the marks
//! over the external data), and memory caching at most a fraction of the external data.
//!
//! Its cost is `O(|E| B_r + |V| B_w)` in the unit-cost model: every adjacency entry is a
//! random read, every new vertex a random write. Writing whole `B_r` pages at random is what
//! the translation layer bundles into `B_w` blocks.
//!
//! Layout: vertex records of 16 bytes (first adjacency entry; last entry with the visited
//! mark in the top bit) and the adjacency array of 4-byte ids. The cache holds pages of the
//! device's block size (the device must read and write one size: `B_r`, `B_w`, or a
//! translation layer's pages) and evicts the least recently used page, writing it back if
//! it is dirty.
//!
//! What this is not: an external-memory DFS with good I/O bounds (none is known for general
//! graphs); it is the baseline whose random writes the models price.

use super::Graph;
use crate::EmError;
use crate::io::{AlignedBuf, BlockIo, IoStats};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

const VISITED: u64 = 1 << 63;

/// What a DFS run did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DfsReport {
    /// I/O of the traversal (after the graph was written).
    pub io: IoStats,
    /// Page-cache hits.
    pub hits: u64,
    /// Page-cache misses.
    pub misses: u64,
    /// Deepest stack.
    pub peak_stack: u64,
    /// The cache size in pages.
    pub cache_pages: u64,
    /// Vertices in visiting order.
    #[serde(skip)]
    pub order: Vec<u32>,
}

struct CachedPage {
    buf: AlignedBuf,
    dirty: bool,
    stamp: u64,
}

/// An LRU cache of device pages.
struct PageCache {
    page: u64,
    capacity: usize,
    pages: HashMap<u64, CachedPage>,
    lru: BTreeMap<u64, u64>,
    clock: u64,
    hits: u64,
    misses: u64,
}

impl PageCache {
    fn page<I: BlockIo + ?Sized>(
        &mut self,
        io: &mut I,
        number: u64,
    ) -> Result<&mut CachedPage, EmError> {
        self.clock += 1;
        if self.pages.contains_key(&number) {
            self.hits += 1;
        } else {
            self.misses += 1;
            if self.pages.len() >= self.capacity {
                let (_, victim) = self
                    .lru
                    .pop_first()
                    .expect("invariant: a full cache has pages");
                let old = self
                    .pages
                    .remove(&victim)
                    .expect("invariant: the LRU index matches");
                if old.dirty {
                    io.write(victim * self.page, &old.buf.bytes()[..self.page as usize])?;
                }
            }
            let mut buf = AlignedBuf::new(self.page as usize);
            io.read(
                number * self.page,
                &mut buf.bytes_mut()[..self.page as usize],
            )?;
            self.pages.insert(
                number,
                CachedPage {
                    buf,
                    dirty: false,
                    stamp: 0,
                },
            );
        }
        let entry = self
            .pages
            .get_mut(&number)
            .expect("invariant: just inserted");
        self.lru.remove(&entry.stamp);
        entry.stamp = self.clock;
        self.lru.insert(self.clock, number);
        Ok(entry)
    }

    fn read_u64<I: BlockIo + ?Sized>(&mut self, io: &mut I, address: u64) -> Result<u64, EmError> {
        let page = self.page;
        let entry = self.page(io, address / page)?;
        Ok(entry.buf.records::<u64>()[((address % page) / 8) as usize])
    }

    fn read_u32<I: BlockIo + ?Sized>(&mut self, io: &mut I, address: u64) -> Result<u32, EmError> {
        let page = self.page;
        let entry = self.page(io, address / page)?;
        Ok(entry.buf.records::<u32>()[((address % page) / 4) as usize])
    }

    fn write_u64<I: BlockIo + ?Sized>(
        &mut self,
        io: &mut I,
        address: u64,
        value: u64,
    ) -> Result<(), EmError> {
        let page = self.page;
        let entry = self.page(io, address / page)?;
        entry.buf.records_mut::<u64>()[((address % page) / 8) as usize] = value;
        entry.dirty = true;
        Ok(())
    }

    fn flush<I: BlockIo + ?Sized>(&mut self, io: &mut I) -> Result<(), EmError> {
        for (&number, entry) in self.pages.iter_mut().collect::<BTreeMap<_, _>>() {
            if entry.dirty {
                io.write(number * self.page, &entry.buf.bytes()[..self.page as usize])?;
                entry.dirty = false;
            }
        }
        Ok(())
    }
}

/// Write `graph` to the device and run DFS from `source` with a cache of `cache_bytes`.
pub fn run<I: BlockIo + ?Sized>(
    io: &mut I,
    graph: &Graph,
    source: u32,
    cache_bytes: u64,
) -> Result<DfsReport, EmError> {
    let sizes = io.block_sizes();
    if sizes.read_bytes != sizes.write_bytes {
        return Err(EmError::Config(
            "DFS caches single pages: give it a device with B_r = B_w (a translation layer)".into(),
        ));
    }
    let page = sizes.read_bytes;
    let vertices = graph.vertices();
    let records: Vec<u64> = (0..vertices as usize)
        .flat_map(|v| [graph.offsets[v], graph.offsets[v + 1]])
        .collect();
    let nodes_at = 0;
    let targets_at = (vertices * 16).div_ceil(page) * page;
    crate::sort::write_records(io, nodes_at, &records)?;
    crate::sort::write_records(io, targets_at, &graph.targets)?;
    let mut cache = PageCache {
        page,
        capacity: (cache_bytes / page).max(2) as usize,
        pages: HashMap::new(),
        lru: BTreeMap::new(),
        clock: 0,
        hits: 0,
        misses: 0,
    };
    let start = io.stats();
    let mut order = Vec::new();
    let mut stack: Vec<(u32, u64, u64)> = Vec::new();
    let mut peak = 0usize;
    let visit = |io: &mut I, cache: &mut PageCache, v: u32| -> Result<(u64, u64), EmError> {
        let at = nodes_at + 16 * u64::from(v);
        let first = cache.read_u64(io, at)?;
        let end = cache.read_u64(io, at + 8)?;
        cache.write_u64(io, at + 8, end | VISITED)?;
        Ok((first, end))
    };
    let (first, end) = visit(io, &mut cache, source)?;
    order.push(source);
    stack.push((source, first, end));
    while let Some(top) = stack.last_mut() {
        if top.1 == top.2 {
            stack.pop();
            continue;
        }
        let w = cache.read_u32(io, targets_at + 4 * top.1)?;
        top.1 += 1;
        let mark = cache.read_u64(io, nodes_at + 16 * u64::from(w) + 8)?;
        if mark & VISITED == 0 {
            let (first, end) = visit(io, &mut cache, w)?;
            order.push(w);
            stack.push((w, first, end));
            peak = peak.max(stack.len());
        }
    }
    cache.flush(io)?;
    Ok(DfsReport {
        io: io.stats() - start,
        hits: cache.hits,
        misses: cache.misses,
        peak_stack: peak.max(1) as u64,
        cache_pages: cache.capacity as u64,
        order,
    })
}
