//! External BFS and DFS against in-memory references on grids and random sparse graphs,
//! on the simulator and the translation layer.

use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig};
use flashkit_em::io::{BlockSizes, SimIo};
use flashkit_em::tl::TranslationLayer;

/// The preprocessing's clusters and rounds as the module describes them: the source is a
/// master, and every other vertex in order is one when its draw in `0..mu` from stream
/// "bfs-masters" is 0;
/// clusters grow from all masters at once, a round per scan until a scan adds nobody; each
/// vertex no master reaches is a cluster of its own.
fn clusters_reference(graph: &Graph, source: u32, mu: u64, seed: u64) -> (u64, u64) {
    use flashkit_core::{SimRng, SimRngExt};
    use rand::Rng;
    let mut rng = SimRng::for_stream(seed, "bfs-masters");
    let vertices = graph.vertices() as usize;
    let mut reached = vec![false; vertices];
    let mut frontier: Vec<u32> = Vec::new();
    for (v, reached) in reached.iter_mut().enumerate() {
        if v == source as usize || rng.random_range(0..mu) == 0 {
            *reached = true;
            frontier.push(v as u32);
        }
    }
    let masters = frontier.len() as u64;
    let mut rounds = 0;
    while !frontier.is_empty() {
        rounds += 1;
        let mut next = Vec::new();
        for &v in &frontier {
            for &w in graph.neighbours(v) {
                if !reached[w as usize] {
                    reached[w as usize] = true;
                    next.push(w);
                }
            }
        }
        frontier = next;
    }
    let alone = reached.iter().filter(|&&r| !r).count() as u64;
    (masters + alone, rounds)
}

fn bfs_matches(graph: &Graph, source: u32, mu: Option<u64>) {
    let config = BfsConfig {
        memory_bytes: 64 << 10,
        mu,
        seed: 3,
    };
    let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
    let report = bfs::run(&mut io, graph, source, &config).expect("bfs");
    let levels = graph.bfs_levels(source);
    assert_eq!(report.level_of, levels);
    let deepest = levels.iter().filter(|&&l| l != u32::MAX).max().copied();
    assert_eq!(report.levels, u64::from(deepest.expect("the source")) + 1);
    // Without a `mu`, the model's: sqrt(128 ids of 4 B a 512 B block / log2 |V|), rounded.
    let expected_mu = mu.unwrap_or_else(|| {
        ((128.0 / (graph.vertices() as f64).log2()).sqrt().round() as u64).max(1)
    });
    assert_eq!(report.mu, expected_mu);
    assert_eq!(
        (report.clusters, report.rounds),
        clusters_reference(graph, source, expected_mu, config.seed)
    );
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
    let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
    let report = bfs::run(&mut io, &graph, 0, &config).expect("bfs");
    assert_eq!(report.level_of, graph.bfs_levels(0));
    assert!(report.peak_pool_bytes > 8 << 10, "{report:?}");
    assert!(
        report.spilled_levels > 0 && report.spilled_levels < report.levels,
        "{report:?}"
    );
}
