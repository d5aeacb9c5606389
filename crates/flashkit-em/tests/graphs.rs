//! External BFS and DFS against in-memory references on grids and random sparse graphs,
//! on the simulator and the translation layer.

use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig};
use flashkit_em::io::{BlockSizes, SimIo};
use flashkit_em::tl::TranslationLayer;

fn bfs_matches(graph: &Graph, source: u32, mu: Option<u64>) {
    let config = BfsConfig {
        memory_bytes: 64 << 10,
        mu,
        seed: 3,
    };
    let mut io = SimIo::with_data(BlockSizes::new(512, 2048).expect("valid"));
    let report = bfs::run(&mut io, graph, source, &config).expect("bfs");
    assert_eq!(report.level_of, graph.bfs_levels(source));
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
