//! External BFS and DFS against in-memory references on grids and random sparse graphs,
//! on the simulator and the translation layer.

mod common;

use common::Logged;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig};
use flashkit_em::io::{BlockSizes, SimIo};
use flashkit_em::sort::{FanIn, Plan};
use flashkit_em::tl::TranslationLayer;

/// The preprocessing as the module describes it: the source is a master, and every other
/// vertex in order is one when its draw in `0..mu` from stream "bfs-masters" is 0, masters
/// numbered in vertex order; clusters grow from all masters at once, a round per scan of
/// the vertices in order until a scan adds nobody, a vertex joining the cluster of the
/// first frontier vertex listing it; each vertex no master reaches is a cluster of its own.
/// Returns each vertex's cluster, the clusters and the rounds.
fn clusters_reference(graph: &Graph, source: u32, mu: u64, seed: u64) -> (Vec<u32>, u64, u64) {
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;
    let mut rng = SimRng::for_stream(seed, "bfs-masters");
    let vertices = graph.vertices() as usize;
    let mut cluster = vec![u32::MAX; vertices];
    let mut clusters = 0;
    let mut frontier = vec![false; vertices];
    for v in 0..vertices {
        if v == source as usize || rng.random_range(0..mu) == 0 {
            cluster[v] = clusters;
            clusters += 1;
            frontier[v] = true;
        }
    }
    let mut rounds = 0;
    loop {
        rounds += 1;
        let mut next = vec![false; vertices];
        for v in (0..vertices).filter(|&v| frontier[v]) {
            for &w in graph.neighbours(v as u32) {
                if cluster[w as usize] == u32::MAX {
                    cluster[w as usize] = cluster[v];
                    next[w as usize] = true;
                }
            }
        }
        if !next.contains(&true) {
            break;
        }
        frontier = next;
    }
    for c in cluster.iter_mut().filter(|c| **c == u32::MAX) {
        *c = clusters;
        clusters += 1;
    }
    (cluster, u64::from(clusters), rounds)
}

/// The BFS phase's figures as the module describes them, from the clusters: the cluster
/// file holds a 16-byte record per adjacency entry (one for an isolated vertex), by cluster
/// and vertex; level by level, the clusters of the level's vertices not yet in the pool are
/// loaded in cluster order, each by reading the `B_r` blocks it lies in, which brings in
/// every cluster lying wholly inside them; the pool then holds 8 bytes per entry of the
/// loaded vertices not yet visited, and above half the memory it is read and written back
/// whole; then the level's vertices leave it. Each visited vertex writes an 8-byte record.
/// Returns (peak pool bytes, spilled levels, reads, writes).
fn bfs_phase_reference(
    graph: &Graph,
    source: u32,
    cluster: &[u32],
    clusters: u64,
    memory: u64,
    sizes: BlockSizes,
) -> (u64, u64, u64, u64) {
    let (br, bw) = (sizes.read_bytes, sizes.write_bytes);
    let degree = |v: usize| graph.neighbours(v as u32).len() as u64;
    let mut members = vec![Vec::new(); clusters as usize];
    for (v, &c) in cluster.iter().enumerate() {
        members[c as usize].push(v);
    }
    let mut index = vec![0u64];
    for list in &members {
        let records: u64 = list.iter().map(|&v| degree(v).max(1)).sum();
        index.push(index.last().expect("start") + records);
    }
    let levels = graph.bfs_levels(source);
    let deepest = *levels
        .iter()
        .filter(|&&l| l != u32::MAX)
        .max()
        .expect("source");
    let per_block = br / 16;
    let mut loaded = vec![false; clusters as usize];
    let (mut bytes, mut peak, mut spilled, mut reads, mut writes) = (0u64, 0, 0, 0, 0);
    for level in 0..=deepest {
        let current: Vec<usize> = (0..levels.len()).filter(|&v| levels[v] == level).collect();
        let mut wanted: Vec<usize> = current.iter().map(|&v| cluster[v] as usize).collect();
        wanted.sort_unstable();
        wanted.dedup();
        for c in wanted {
            if loaded[c] {
                continue;
            }
            let (first, end) = (index[c] / per_block, (index[c + 1] * 16).div_ceil(br));
            reads += end - first;
            let (from, to) = (first * per_block, end * per_block);
            for inside in 0..clusters as usize {
                if !loaded[inside] && index[inside] >= from && index[inside + 1] <= to {
                    loaded[inside] = true;
                    bytes += members[inside].iter().map(|&v| 8 * degree(v)).sum::<u64>();
                }
            }
        }
        peak = peak.max(bytes);
        if bytes > memory / 2 {
            spilled += 1;
            reads += bytes.div_ceil(br);
            writes += bytes.div_ceil(bw);
        }
        bytes -= current.iter().map(|&v| 8 * degree(v)).sum::<u64>();
    }
    let visited = levels.iter().filter(|&&l| l != u32::MAX).count() as u64;
    writes += (8 * visited).div_ceil(bw);
    (peak, spilled, reads, writes)
}

/// The offsets of `log`'s reads or writes inside `[from, to)`, cut where one goes back to
/// `from`: the pool's spills, each of which should be `from`, `from + block`, ... in order.
fn spills(log: &[(bool, u64, usize)], write: bool, from: u64, to: u64) -> Vec<Vec<u64>> {
    let mut spills: Vec<Vec<u64>> = Vec::new();
    for &(w, offset, _) in log {
        if w == write && (from..to).contains(&offset) {
            match spills.last_mut() {
                Some(spill) if offset != from => spill.push(offset),
                _ => spills.push(vec![offset]),
            }
        }
    }
    spills
}

/// [`bfs::run`] with every figure of its report against the references above.
fn bfs_figures_match(
    graph: &Graph,
    source: u32,
    config: &BfsConfig,
    sizes: BlockSizes,
) -> bfs::BfsReport {
    let mut io = Logged::with_data(sizes);
    let report = bfs::run(&mut io, graph, source, config).expect("bfs");
    let levels = graph.bfs_levels(source);
    assert_eq!(report.level_of, levels);
    let deepest = levels.iter().filter(|&&l| l != u32::MAX).max().copied();
    assert_eq!(report.levels, u64::from(deepest.expect("the source")) + 1);
    // Without a `mu`, the model's: sqrt(ids of 4 B a B_r block / log2 |V|), rounded.
    let ids = (sizes.read_bytes / 4) as f64;
    let expected_mu = config
        .mu
        .unwrap_or_else(|| ((ids / (graph.vertices() as f64).log2()).sqrt().round() as u64).max(1));
    assert_eq!(report.mu, expected_mu);
    let (cluster, clusters, rounds) = clusters_reference(graph, source, expected_mu, config.seed);
    assert_eq!((report.clusters, report.rounds), (clusters, rounds));
    let (peak, spilled, reads, writes) = bfs_phase_reference(
        graph,
        source,
        &cluster,
        clusters,
        config.memory_bytes,
        sizes,
    );
    assert_eq!(
        (report.peak_pool_bytes, report.spilled_levels),
        (peak, spilled),
        "{report:?}"
    );
    assert_eq!(
        (report.bfs.read_ios, report.bfs.write_ios),
        (reads, writes),
        "{report:?}"
    );
    // The device holds, each region rounded up to whole blocks of the larger size: the
    // offsets and targets, the cluster file's sort (four areas), the pool's place (8 B a
    // record), then the levels written (8 B a vertex reached), the last thing written.
    let align = sizes.align_bytes();
    let region = |bytes: u64| bytes.div_ceil(align).max(1) * align;
    let isolated = (0..graph.vertices() as u32)
        .filter(|&v| graph.neighbours(v).is_empty())
        .count() as u64;
    let records = graph.edge_entries() + isolated;
    let plan = Plan::new(records, 16, sizes, config.memory_bytes, FanIn::Model).expect("plan");
    let reached = levels.iter().filter(|&&l| l != u32::MAX).count() as u64;
    let sort_at = region(8 * (graph.vertices() + 1)) + region(4 * graph.edge_entries());
    let pool_at = sort_at + region(4 * plan.area_bytes());
    let output_at = pool_at + region(8 * records);
    // The BFS phase (a transfer a block) reads the cluster file (the sort's output area) and
    // the pool's place, and writes the pool's place and the output.
    let cluster_file = sort_at + plan.area_bytes()..sort_at + 2 * plan.area_bytes();
    let phase = (report.bfs.read_ios + report.bfs.write_ios) as usize;
    for &(write, offset, _) in &io.log[io.log.len() - phase..] {
        if write {
            assert!(offset >= pool_at, "a write at {offset}");
        } else {
            assert!(
                cluster_file.contains(&offset) || (pool_at..output_at).contains(&offset),
                "a read at {offset}"
            );
        }
    }
    // Each spill reads and writes the pool's place from its start, block after block.
    for (write, block) in [(false, sizes.read_bytes), (true, sizes.write_bytes)] {
        let spills = spills(&io.log, write, pool_at, output_at);
        assert_eq!(spills.len() as u64, report.spilled_levels);
        for spill in spills {
            let expected: Vec<u64> = (0..spill.len() as u64)
                .map(|i| pool_at + i * block)
                .collect();
            assert_eq!(spill, expected);
        }
    }
    assert_eq!(
        io.sim.written_extent_bytes(),
        output_at + (8 * reached).div_ceil(sizes.write_bytes) * sizes.write_bytes
    );
    // The output: `(vertex << 32) | level`, level by level, each level by vertex.
    let mut expected: Vec<u64> = (0..graph.vertices())
        .filter(|&v| levels[v as usize] != u32::MAX)
        .map(|v| (v << 32) | u64::from(levels[v as usize]))
        .collect();
    expected.sort_by_key(|&r| (r & 0xffff_ffff, r >> 32));
    let output: Vec<u64> =
        flashkit_em::sort::read_records(&mut io, output_at, reached).expect("read the output");
    assert_eq!(output, expected);
    report
}

fn bfs_matches(graph: &Graph, source: u32, mu: Option<u64>) {
    let config = BfsConfig {
        memory_bytes: 64 << 10,
        mu,
        seed: 3,
    };
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let report = bfs_figures_match(graph, source, &config, sizes);
    assert!(report.preprocessing.read_bytes > 0 && report.bfs.read_bytes > 0);
    let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
    let mut tl = TranslationLayer::new(sim, 2, None).expect("tl");
    let report = bfs::run(&mut tl, graph, source, &config).expect("bfs on the layer");
    assert_eq!(report.level_of, graph.bfs_levels(source));
}

#[test]
fn bfs_matches_the_in_memory_reference() {
    bfs_matches(&Graph::grid(40), 0, None);
    bfs_matches(&Graph::grid(33), 500, Some(3));
    // Cluster files of one and two blocks, whose tails are past the last record.
    bfs_matches(&Graph::grid(3), 4, Some(2));
    bfs_matches(&Graph::random(20, 25, 9), 3, Some(3));
    bfs_matches(&Graph::random(40, 50, 9), 3, Some(1));
    // One cluster of three blocks: its load reads the last block's zero padding too.
    bfs_matches(&Graph::grid(5), 12, Some(1000));
    for seed in 0..4 {
        let graph = Graph::random(2000, 2600, seed);
        bfs_matches(&graph, seed as u32 * 17, Some(1 + seed));
    }
}

fn dfs_matches(graph: &Graph, source: u32) {
    use flashkit_em::graph::dfs;
    let expected = graph.dfs_order(source);
    let mut io = SimIo::with_data(BlockSizes::same(512).expect("valid"));
    let report = dfs::run(&mut io, graph, source, 8 * 1024).expect("dfs");
    assert_eq!(report.order, expected);
    assert!(report.misses > 0 && report.io.write_bytes > 0);
    let sim = SimIo::with_data(BlockSizes::new(512, 4096).expect("valid"));
    let mut tl = TranslationLayer::new(sim, 2, None).expect("tl");
    let report = dfs::run(&mut tl, graph, source, 8 * 1024).expect("dfs on the layer");
    assert_eq!(report.order, expected);
}

#[test]
fn dfs_matches_the_in_memory_reference() {
    dfs_matches(&Graph::grid(30), 0);
    for seed in 0..4 {
        dfs_matches(&Graph::random(1500, 2500, seed), seed as u32 * 31);
    }
}

#[test]
fn bfs_refuses_mu_zero() {
    let config = BfsConfig {
        memory_bytes: 64 << 10,
        mu: Some(0),
        seed: 3,
    };
    let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
    let error = bfs::run(&mut io, &Graph::grid(8), 0, &config).expect_err("mu 0 is refused");
    assert!(
        error.to_string().contains("mu must be at least 1"),
        "{error}"
    );
}

/// DFS's cache figures from its access sequence: the 16-byte vertex records (first entry,
/// last entry with the visited mark) from 0, the 4-byte adjacency entries from the first
/// page past them; each visit reads both words of a record and writes the second, each
/// edge reads its entry and its target's second word. The cache holds `capacity` pages, a
/// list from least to most recently used; an evicted page is written back if written, and
/// the written pages left are written at the end. Returns (hits, misses, pages written,
/// deepest stack).
fn dfs_reference(graph: &Graph, source: u32, page: u64, capacity: usize) -> (u64, u64, u64, u64) {
    let targets_at = (graph.vertices() * 16).div_ceil(page) * page;
    let mut lru: Vec<(u64, bool)> = Vec::new();
    let (mut hits, mut misses, mut written) = (0, 0, 0);
    let mut touch = |address: u64, write: bool| {
        let number = address / page;
        let dirty = match lru.iter().position(|&(p, _)| p == number) {
            Some(i) => {
                hits += 1;
                lru.remove(i).1
            }
            None => {
                misses += 1;
                if lru.len() == capacity && lru.remove(0).1 {
                    written += 1;
                }
                false
            }
        };
        lru.push((number, dirty || write));
    };
    let mut visited = vec![false; graph.vertices() as usize];
    let visit = |v: u32, visited: &mut [bool], touch: &mut dyn FnMut(u64, bool)| {
        touch(16 * u64::from(v), false);
        touch(16 * u64::from(v) + 8, false);
        touch(16 * u64::from(v) + 8, true);
        visited[v as usize] = true;
    };
    visit(source, &mut visited, &mut touch);
    let mut stack = vec![(source, graph.offsets[source as usize])];
    let mut deepest = 1;
    while let Some(&(v, next)) = stack.last() {
        if next == graph.offsets[v as usize + 1] {
            stack.pop();
            continue;
        }
        stack.last_mut().expect("not empty").1 += 1;
        let w = graph.targets[next as usize];
        touch(targets_at + 4 * next, false);
        touch(16 * u64::from(w) + 8, false);
        if !visited[w as usize] {
            visit(w, &mut visited, &mut touch);
            stack.push((w, graph.offsets[w as usize]));
            deepest = deepest.max(stack.len() as u64);
        }
    }
    let left = lru.iter().filter(|&&(_, dirty)| dirty).count() as u64;
    (hits, misses, written + left, deepest)
}

#[test]
fn dfs_cache_figures_match_a_reference_count() {
    use flashkit_em::graph::dfs;
    let graphs = [
        Graph::grid(12),
        Graph::random(600, 900, 5),
        // A vertex with no neighbours: a stack of one.
        Graph::random(1, 0, 1),
    ];
    for graph in &graphs {
        for cache_bytes in [0, 512, 3 * 512, 7 * 512 + 100, 1 << 20] {
            let mut io = SimIo::with_data(BlockSizes::same(512).expect("valid"));
            let report = dfs::run(&mut io, graph, 0, cache_bytes).expect("dfs");
            // A cache of fewer than two pages holds two.
            let capacity = (cache_bytes / 512).max(2) as usize;
            let (hits, misses, written, deepest) = dfs_reference(graph, 0, 512, capacity);
            let context = format!("{} vertices, {cache_bytes} B", graph.vertices());
            assert_eq!(report.cache_pages, capacity as u64, "{context}");
            assert_eq!((report.hits, report.misses), (hits, misses), "{context}");
            assert_eq!(report.peak_stack, deepest, "{context}");
            assert_eq!(
                (report.io.read_ios, report.io.write_ios),
                (misses, written),
                "{context}"
            );
            assert_eq!(report.io.read_bytes, 512 * misses, "{context}");
            // The vertex records on the device: first and last entry, the last marked
            // visited (the top bit) for every vertex reached, once the cache is written back.
            let records: Vec<u64> =
                flashkit_em::sort::read_records(&mut io, 0, 2 * graph.vertices()).expect("read");
            let reached: std::collections::HashSet<u32> = report.order.iter().copied().collect();
            for v in 0..graph.vertices() as usize {
                let mark = if reached.contains(&(v as u32)) {
                    1 << 63
                } else {
                    0
                };
                assert_eq!(
                    [records[2 * v], records[2 * v + 1]],
                    [graph.offsets[v], graph.offsets[v + 1] | mark],
                    "{context}: vertex {v}"
                );
            }
        }
    }
}

#[test]
fn bfs_phases_are_the_differences_of_the_probes_around_them() {
    use std::cell::RefCell;
    let config = BfsConfig {
        memory_bytes: 64 << 10,
        mu: Some(2),
        seed: 3,
    };
    let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
    // The probe is read before and after preprocessing and before and after the BFS phase.
    let readings = RefCell::new(Vec::new());
    let report = bfs::run_probed(&mut io, &Graph::grid(20), 0, &config, |io: &SimIo| {
        let stats = flashkit_em::io::BlockIo::stats(io);
        readings.borrow_mut().push(stats);
        stats
    })
    .expect("bfs");
    let readings = readings.into_inner();
    assert_eq!(readings.len(), 4);
    // The graph was written before the first reading.
    assert!(readings[0].write_ios > 0);
    assert_eq!(report.preprocessing, readings[1] - readings[0]);
    assert_eq!(report.bfs, readings[3] - readings[2]);
    assert_eq!(readings[3], flashkit_em::io::BlockIo::stats(&io));
}

#[test]
fn a_hot_pool_beyond_half_the_memory_spills_without_changing_the_levels() {
    // 16 KiB of memory: the pool's share is 8 KiB, 1,024 entries of 8 B; a 60 x 60 grid in
    // clusters of about 8 vertices overflows it in its middle levels.
    let config = BfsConfig {
        memory_bytes: 16 << 10,
        mu: Some(8),
        seed: 5,
    };
    let graph = Graph::grid(60);
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let report = bfs_figures_match(&graph, 0, &config, sizes);
    assert!(report.peak_pool_bytes > 8 << 10, "{report:?}");
    assert!(
        report.spilled_levels > 0 && report.spilled_levels < report.levels,
        "{report:?}"
    );
    // A pool exactly at half the memory stays in memory.
    let at_half = BfsConfig {
        memory_bytes: 2 * report.peak_pool_bytes,
        ..config
    };
    let report = bfs_figures_match(&graph, 0, &at_half, sizes);
    assert_eq!(report.spilled_levels, 0);
    // Larger blocks, and a random graph from another source.
    let config = BfsConfig {
        memory_bytes: 32 << 10,
        ..config
    };
    let sizes = BlockSizes::new(1024, 4096).expect("valid");
    let report = bfs_figures_match(&Graph::random(3000, 9000, 2), 77, &config, sizes);
    assert!(report.spilled_levels > 0, "{report:?}");
}
