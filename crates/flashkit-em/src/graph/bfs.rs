//! Mehlhorn-Meyer external BFS with randomized preprocessing (section 3.3 of Ajwani et al.,
//! SEA 2009; Mehlhorn and Meyer, ESA 2002), the algorithm of Table 2.
//!
//! **Preprocessing.** Every vertex becomes a master with probability `1/mu` (the source
//! always). Clusters grow from all masters at once, one BFS round per scan of the adjacency
//! arrays, so the rounds cost `O(scan(|V|) mu log|V|)` whp.; vertices no master reaches
//! become clusters of their own. Then every adjacency entry `(v, w)` becomes a record keyed
//! by `(cluster(v), v)` carrying `(w, cluster(w))`, and the external mergesort lays the
//! records out cluster by cluster: the cluster file, with an index of where each cluster
//! starts.
//!
//! **BFS phase.** Level by level: the clusters of the frontier's vertices that are not yet
//! loaded are read from the cluster file (one random read, plus sequential blocks for a
//! large cluster) into the hot pool; the frontier's neighbours are collected from the pool,
//! sorted, deduplicated, and the vertices of the two previous levels removed. When the hot
//! pool outgrows its share of memory it lives on the device: every level then reads it and
//! writes it back (the transfers are issued for its full size; its contents stay in this
//! process for simplicity).
//!
//! Simplification, stated: the cluster assignment during preprocessing (4 bytes a vertex)
//! and the per-vertex levels of the result are kept in memory; the paper's implementation
//! keeps them external. Neither changes the transfers the algorithm's phases are measured by
//! beyond what those arrays would add as scans.

use super::Graph;
use crate::EmError;
use crate::io::stream::{RecordReader, RecordWriter};
use crate::io::{BlockIo, IoStats};
use crate::model::FlashModel;
use crate::record::KeyPayload;
use crate::sort::{FanIn, Layout, Plan, sort};
use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;
use serde::Serialize;
use std::collections::HashMap;

const NO_CLUSTER: u32 = u32::MAX;

/// BFS parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BfsConfig {
    /// Memory `M` (for the sort, and half of it for the hot pool).
    pub memory_bytes: u64,
    /// Cluster parameter; `None` takes the model's `sqrt(B / log2 |V|)`.
    pub mu: Option<u64>,
    /// Seed of the master choice.
    pub seed: u64,
}

/// What a BFS run did.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BfsReport {
    /// The `mu` used.
    pub mu: u64,
    /// Clusters formed.
    pub clusters: u64,
    /// Cluster-growing rounds (scans of the graph).
    pub rounds: u64,
    /// BFS levels.
    pub levels: u64,
    /// Largest hot pool in bytes.
    pub peak_pool_bytes: u64,
    /// Levels during which the pool lived on the device.
    pub spilled_levels: u64,
    /// Preprocessing I/O.
    pub preprocessing: IoStats,
    /// BFS-phase I/O.
    pub bfs: IoStats,
    /// The level of every vertex (`u32::MAX` if unreachable).
    #[serde(skip)]
    pub level_of: Vec<u32>,
}

/// Where the graph and the algorithm's data live.
struct Regions {
    next: u64,
    align: u64,
}

impl Regions {
    fn take(&mut self, bytes: u64) -> u64 {
        let at = self.next;
        self.next += bytes.div_ceil(self.align).max(1) * self.align;
        at
    }
}

/// Write `graph` to the device and run BFS from `source`.
pub fn run<I: BlockIo + ?Sized>(
    io: &mut I,
    graph: &Graph,
    source: u32,
    config: &BfsConfig,
) -> Result<BfsReport, EmError> {
    run_probed(io, graph, source, config, |io| io.stats())
}

/// [`run`], with the phases' I/O measured by `probe` (for a translation layer, the
/// physical counters underneath instead of the layer's own).
pub fn run_probed<I: BlockIo + ?Sized>(
    io: &mut I,
    graph: &Graph,
    source: u32,
    config: &BfsConfig,
    probe: impl Fn(&I) -> IoStats,
) -> Result<BfsReport, EmError> {
    if config.mu == Some(0) {
        return Err(EmError::Config(
            "mu 0: every vertex starts a cluster with probability 1/mu, so mu must be at least 1"
                .into(),
        ));
    }
    let sizes = io.block_sizes();
    let mut regions = Regions {
        next: 0,
        align: sizes.align_bytes(),
    };
    let offsets_at = regions.take(graph.offsets.len() as u64 * 8);
    let targets_at = regions.take(graph.targets.len() as u64 * 4);
    crate::sort::write_records(io, offsets_at, &graph.offsets)?;
    crate::sort::write_records(io, targets_at, &graph.targets)?;
    let vertices = graph.vertices();
    let model = FlashModel::new(config.memory_bytes, sizes, 1.0)?;
    let mu = config
        .mu
        .unwrap_or_else(|| model.bfs_mu(vertices, sizes.read_bytes, 4));
    let start = probe(io);
    let isolated = (0..vertices as usize)
        .filter(|&v| graph.offsets[v] == graph.offsets[v + 1])
        .count() as u64;
    let csr = Csr {
        offsets_at,
        targets_at,
        vertices,
        records: graph.edge_entries() + isolated,
    };
    let (cluster, clusters, rounds) = grow_clusters(io, &csr, source, mu, config.seed)?;
    let (file, index) = build_cluster_file(io, &csr, &cluster, clusters, config, &mut regions)?;
    let preprocessing = probe(io) - start;
    let start = probe(io);
    let mut report = bfs_phase(
        io,
        &file,
        &index,
        cluster[source as usize],
        source,
        vertices,
        config,
        &mut regions,
    )?;
    report.mu = mu;
    report.clusters = clusters;
    report.rounds = rounds;
    report.preprocessing = preprocessing;
    report.bfs = probe(io) - start;
    Ok(report)
}

struct Csr {
    offsets_at: u64,
    targets_at: u64,
    vertices: u64,
    /// Records of the cluster file: one per adjacency entry, one per isolated vertex.
    records: u64,
}

impl Csr {
    /// A cursor for one sequential scan of the adjacency arrays.
    fn cursor(&self, block_bytes: u64) -> Cursor {
        Cursor {
            offsets: RecordReader::new(block_bytes, self.offsets_at, self.vertices + 1),
            // The targets array ends where the last list ends; the reader is never asked
            // for more.
            targets: RecordReader::new(block_bytes, self.targets_at, u64::MAX),
            first: None,
            vertex: 0,
            vertices: self.vertices,
        }
    }
}

/// One pass over the vertices and their neighbour lists, in vertex order.
struct Cursor {
    offsets: RecordReader<u64>,
    targets: RecordReader<u32>,
    first: Option<u64>,
    vertex: u64,
    vertices: u64,
}

impl Cursor {
    /// The next vertex, its neighbours in `list`.
    fn next<I: BlockIo + ?Sized>(
        &mut self,
        io: &mut I,
        list: &mut Vec<u32>,
    ) -> Result<Option<u32>, EmError> {
        if self.vertex == self.vertices {
            return Ok(None);
        }
        let first = match self.first {
            Some(first) => first,
            None => self
                .offsets
                .next(io)?
                .expect("invariant: vertices + 1 offsets"),
        };
        let end = self
            .offsets
            .next(io)?
            .expect("invariant: vertices + 1 offsets");
        list.clear();
        for _ in first..end {
            list.push(
                self.targets
                    .next(io)?
                    .expect("invariant: the lists fill the array"),
            );
        }
        self.first = Some(end);
        self.vertex += 1;
        Ok(Some(self.vertex as u32 - 1))
    }
}

/// Grow clusters from random masters, one scan of the graph per round.
fn grow_clusters<I: BlockIo + ?Sized>(
    io: &mut I,
    csr: &Csr,
    source: u32,
    mu: u64,
    seed: u64,
) -> Result<(Vec<u32>, u64, u64), EmError> {
    let mut rng = SimRng::for_stream(seed, "bfs-masters");
    let mut cluster = vec![NO_CLUSTER; csr.vertices as usize];
    let mut clusters = 0u32;
    let mut frontier = vec![false; csr.vertices as usize];
    let mut active = 0u64;
    for v in 0..csr.vertices as usize {
        if v == source as usize || rng.random_range(0..mu.max(1)) == 0 {
            cluster[v] = clusters;
            clusters += 1;
            frontier[v] = true;
            active += 1;
        }
    }
    let mut rounds = 0;
    while active > 0 {
        rounds += 1;
        let mut next = vec![false; csr.vertices as usize];
        active = 0;
        let mut cursor = csr.cursor(io.block_sizes().read_bytes);
        let mut list = Vec::new();
        while let Some(v) = cursor.next(io, &mut list)? {
            if frontier[v as usize] {
                for &w in &list {
                    if cluster[w as usize] == NO_CLUSTER {
                        cluster[w as usize] = cluster[v as usize];
                        next[w as usize] = true;
                        active += 1;
                    }
                }
            }
        }
        frontier = next;
    }
    for c in cluster.iter_mut().filter(|c| **c == NO_CLUSTER) {
        *c = clusters;
        clusters += 1;
    }
    Ok((cluster, u64::from(clusters), rounds))
}

/// The cluster file's place and, per cluster, its first record.
struct ClusterFile {
    at: u64,
}

fn build_cluster_file<I: BlockIo + ?Sized>(
    io: &mut I,
    csr: &Csr,
    cluster: &[u32],
    clusters: u64,
    config: &BfsConfig,
    regions: &mut Regions,
) -> Result<(ClusterFile, Vec<u64>), EmError> {
    let sizes = io.block_sizes();
    let mut counts = vec![0u64; clusters as usize + 1];
    let plan = Plan::new(csr.records, 16, sizes, config.memory_bytes, FanIn::Model)?;
    let layout = Layout::packed_at(regions.take(4 * plan.area_bytes()), &plan);
    let mut writer = RecordWriter::<KeyPayload>::new(sizes.write_bytes, layout.input);
    let mut cursor = csr.cursor(sizes.read_bytes);
    let mut list = Vec::new();
    while let Some(v) = cursor.next(io, &mut list)? {
        let c = cluster[v as usize];
        let key = (u64::from(c) << 32) | u64::from(v);
        if list.is_empty() {
            writer.push(
                io,
                KeyPayload {
                    key,
                    payload: u64::MAX,
                },
            )?;
        }
        for &w in &list {
            let payload = (u64::from(w) << 32) | u64::from(cluster[w as usize]);
            writer.push(io, KeyPayload { key, payload })?;
        }
        counts[c as usize + 1] += list.len().max(1) as u64;
    }
    let written = writer.finish(io)?;
    debug_assert_eq!(written, csr.records);
    sort::<KeyPayload, _>(io, &plan, &layout)?;
    for c in 1..counts.len() {
        counts[c] += counts[c - 1];
    }
    Ok((ClusterFile { at: layout.output }, counts))
}

#[allow(clippy::too_many_arguments)]
fn bfs_phase<I: BlockIo + ?Sized>(
    io: &mut I,
    file: &ClusterFile,
    index: &[u64],
    source_cluster: u32,
    source: u32,
    vertices: u64,
    config: &BfsConfig,
    regions: &mut Regions,
) -> Result<BfsReport, EmError> {
    let sizes = io.block_sizes();
    let (br, bw) = (sizes.read_bytes, sizes.write_bytes);
    let pool_budget = config.memory_bytes / 2;
    // The pool holds at most every record of the cluster file, at 8 bytes each.
    let records = *index.last().expect("invariant: the index has an end");
    let pool_at = regions.take(8 * records);
    let output_at = regions.take(vertices * 8);
    let mut output = RecordWriter::<u64>::new(bw, output_at);
    let mut level_of = vec![u32::MAX; vertices as usize];
    let mut pool = HotPool {
        loaded: vec![false; index.len()],
        lists: HashMap::new(),
        bytes: 0,
    };
    let (mut peak, mut spilled) = (0u64, 0u64);
    let mut previous: Vec<u32> = Vec::new();
    let mut current: Vec<(u32, u32)> = vec![(source, source_cluster)];
    let mut level = 0u32;
    let mut buf = crate::io::AlignedBuf::new(br as usize);
    while !current.is_empty() {
        pool.load_frontier(io, file, index, &current, &mut buf, br)?;
        peak = peak.max(pool.bytes);
        if pool.bytes > pool_budget {
            spilled += 1;
            spill(io, pool_at, pool.bytes)?;
        }
        let mut next: Vec<(u32, u32)> = Vec::new();
        for &(v, _) in &current {
            level_of[v as usize] = level;
            output.push(io, (u64::from(v) << 32) | u64::from(level))?;
            if let Some(list) = pool.lists.remove(&v) {
                pool.bytes -= 8 * list.len() as u64;
                next.extend(list);
            }
        }
        current = next_frontier(next, &current, &mut previous);
        level += 1;
    }
    output.finish(io)?;
    Ok(BfsReport {
        mu: 0,
        clusters: 0,
        rounds: 0,
        levels: u64::from(level),
        peak_pool_bytes: peak,
        spilled_levels: spilled,
        preprocessing: IoStats::default(),
        bfs: IoStats::default(),
        level_of,
    })
}

/// The hot pool: which clusters are loaded, and the adjacency lists of their vertices not
/// yet visited, `(neighbour, its cluster)`, at 8 bytes an entry.
struct HotPool {
    loaded: Vec<bool>,
    lists: HashMap<u32, Vec<(u32, u32)>>,
    bytes: u64,
}

impl HotPool {
    /// Load the clusters of the frontier `current` not loaded yet, in cluster order, through
    /// `buf`, one `br`-byte block at a time.
    #[inline]
    fn load_frontier<I: BlockIo + ?Sized>(
        &mut self,
        io: &mut I,
        file: &ClusterFile,
        index: &[u64],
        current: &[(u32, u32)],
        buf: &mut crate::io::AlignedBuf,
        br: u64,
    ) -> Result<(), EmError> {
        let mut wanted: Vec<u32> = current
            .iter()
            .map(|&(_, c)| c)
            .filter(|&c| !self.loaded[c as usize])
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        for c in wanted {
            if self.loaded[c as usize] {
                continue;
            }
            self.load_cluster(io, file, index, c, buf, br)?;
        }
        Ok(())
    }

    /// Read the blocks cluster `c` lies in. Every cluster that lies wholly inside them comes
    /// into the pool: with large blocks one read brings many small clusters.
    #[inline]
    fn load_cluster<I: BlockIo + ?Sized>(
        &mut self,
        io: &mut I,
        file: &ClusterFile,
        index: &[u64],
        c: u32,
        buf: &mut crate::io::AlignedBuf,
        br: u64,
    ) -> Result<(), EmError> {
        let per_block = br / 16;
        let first_block = index[c as usize] / per_block;
        let end_block = (index[c as usize + 1] * 16).div_ceil(br);
        let (span_start, span_end) = (first_block * per_block, end_block * per_block);
        for block in first_block..end_block {
            io.read(file.at + block * br, &mut buf.bytes_mut()[..br as usize])?;
            for (i, r) in buf.records::<KeyPayload>()[..per_block as usize]
                .iter()
                .enumerate()
            {
                let at = block * per_block + i as u64;
                if at >= *index.last().expect("invariant: the index has an end") {
                    break;
                }
                let rc = (r.key >> 32) as usize;
                if self.loaded[rc] || index[rc] < span_start || index[rc + 1] > span_end {
                    continue;
                }
                let list = self.lists.entry(r.key as u32).or_default();
                if r.payload != u64::MAX {
                    list.push(((r.payload >> 32) as u32, r.payload as u32));
                    self.bytes += 8;
                }
            }
        }
        for rc in clusters_in(index, span_start, span_end) {
            self.loaded[rc] = true;
        }
        Ok(())
    }
}

/// The next level from the neighbours `next` of the current level's vertices: sorted,
/// without repeats, without the vertices of the current level and of the one before
/// (`previous`, which becomes the current level's).
#[inline]
fn next_frontier(
    mut next: Vec<(u32, u32)>,
    current: &[(u32, u32)],
    previous: &mut Vec<u32>,
) -> Vec<(u32, u32)> {
    next.sort_unstable_by_key(|&(w, _)| w);
    next.dedup_by_key(|&mut (w, _)| w);
    let current_nodes: Vec<u32> = current.iter().map(|&(v, _)| v).collect();
    next.retain(|&(w, _)| {
        current_nodes.binary_search(&w).is_err() && previous.binary_search(&w).is_err()
    });
    *previous = current_nodes;
    next
}

/// The clusters whose records all lie in `[start, end)`.
fn clusters_in(index: &[u64], start: u64, end: u64) -> impl Iterator<Item = usize> + '_ {
    let first = index.partition_point(|&at| at < start);
    (first..index.len() - 1).take_while(move |&c| index[c + 1] <= end)
}

/// The pool lives on the device this level: read it and write it back, in whole blocks.
fn spill<I: BlockIo + ?Sized>(io: &mut I, at: u64, bytes: u64) -> Result<(), EmError> {
    let sizes = io.block_sizes();
    let mut buf = crate::io::AlignedBuf::new(sizes.align_bytes() as usize);
    for block in 0..bytes.div_ceil(sizes.read_bytes) {
        io.read(
            at + block * sizes.read_bytes,
            &mut buf.bytes_mut()[..sizes.read_bytes as usize],
        )?;
    }
    for block in 0..bytes.div_ceil(sizes.write_bytes) {
        io.write(
            at + block * sizes.write_bytes,
            &buf.bytes()[..sizes.write_bytes as usize],
        )?;
    }
    Ok(())
}
