//! `flashkit em bfs` and `flashkit em dfs`: the graph algorithms on a generated graph on the
//! simulated device, in one of the I/O modes of the paper's tables.

use crate::commands::em::{ModelParams, failure, gb, parse_records};
use crate::output::write_json;
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::Args;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig, BfsReport};
use flashkit_em::graph::dfs::{self, DfsReport};
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo};
use flashkit_em::sort::files::IoMode;
use flashkit_em::tl::TranslationLayer;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GraphArgs {
    /// Graph: grid (square) or random (sparse, 2|V| random edges).
    #[arg(long, default_value = "grid", value_name = "KIND")]
    pub graph: String,
    /// Vertices (a count or 2^k; a grid uses the largest square not above it).
    #[arg(long, default_value = "2^16", value_parser = parse_records, value_name = "V")]
    pub vertices: u64,
    /// Block sizes: br, bw or tl (flash is read as tl: the algorithms write single pages).
    #[arg(long, default_value = "tl", value_name = "MODE")]
    pub io: IoMode,
    /// BFS cluster parameter mu [default: sqrt(B / log2 |V|), from the model].
    #[arg(long)]
    pub mu: Option<u64>,
    /// DFS page cache [default: half of the graph's external size].
    #[arg(long, value_name = "SIZE")]
    pub cache: Option<crate::args::Size>,
    /// Seed of the graph and of the BFS masters.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub params: ModelParams,
}

/// Build the graph the arguments describe.
pub fn build_graph(kind: &str, vertices: u64, seed: u64) -> Result<Graph, Failure> {
    if !(4..=1 << 28).contains(&vertices) {
        return Err(Failure::Usage(anyhow!(
            "--vertices {vertices} is outside 4..=2^28"
        )));
    }
    match kind {
        "grid" => Ok(Graph::grid((vertices as f64).sqrt() as u32)),
        "random" => Ok(Graph::random(vertices as u32, 2 * vertices, seed)),
        other => Err(Failure::Usage(anyhow!(
            "unknown graph {other:?} (expected grid or random)"
        ))),
    }
}

/// A simulated device in `mode`: pages of `B_r` or `B_w`, or pages of `B_r` through the
/// translation layer onto `B_w` blocks. Returns the device and a way to read the physical
/// counters.
pub fn device(mode: IoMode, sizes: BlockSizes) -> Box<dyn PhysicalIo> {
    match mode {
        IoMode::ReadBlocks => Box::new(SimIo::with_data(mode.algorithm_sizes(sizes))),
        IoMode::WriteBlocks => Box::new(SimIo::with_data(mode.algorithm_sizes(sizes))),
        IoMode::Tl | IoMode::Flash => Box::new(
            TranslationLayer::new(SimIo::with_data(sizes), 2, None)
                .expect("invariant: two buffers and no bound are valid"),
        ),
    }
}

/// A device whose physical counters may differ from what the algorithm asked for.
pub trait PhysicalIo: BlockIo {
    /// What reached the simulated flash.
    fn physical(&self) -> IoStats;
}

impl PhysicalIo for SimIo {
    fn physical(&self) -> IoStats {
        self.stats()
    }
}

impl PhysicalIo for TranslationLayer<SimIo> {
    fn physical(&self) -> IoStats {
        self.inner().stats()
    }
}

pub fn bfs(args: GraphArgs) -> Outcome {
    let model = args.params.model()?;
    let graph = build_graph(&args.graph, args.vertices, args.seed)?;
    let mut io = device(args.io, model.sizes);
    let config = BfsConfig {
        memory_bytes: model.memory_bytes,
        mu: args.mu,
        seed: args.seed,
    };
    let before = io.physical();
    let report = bfs::run(&mut *io, &graph, 0, &config).map_err(failure)?;
    let physical = io.physical() - before;
    print_bfs(&args, &graph, &report, physical);
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}

fn print_bfs(args: &GraphArgs, graph: &Graph, r: &BfsReport, physical: IoStats) {
    println!(
        "Mehlhorn-Meyer BFS on a {} graph: {} vertices, {} adjacency entries; mode {}; \
         simulated device",
        args.graph,
        graph.vertices(),
        graph.edge_entries(),
        args.io.name(),
    );
    println!(
        "mu = {}, {} clusters, {} cluster-growing rounds, {} levels, hot pool peak {} KB ({} \
         levels spilled)",
        r.mu,
        r.clusters,
        r.rounds,
        r.levels,
        r.peak_pool_bytes / 1000,
        r.spilled_levels
    );
    println!(
        "algorithm I/O [GB]: preprocessing read {} write {}; BFS read {} write {}",
        gb(r.preprocessing.read_bytes),
        gb(r.preprocessing.write_bytes),
        gb(r.bfs.read_bytes),
        gb(r.bfs.write_bytes)
    );
    println!(
        "device I/O [GB] (graph upload included): read {} write {}; checked against an \
         in-memory BFS: {}",
        gb(physical.read_bytes),
        gb(physical.write_bytes),
        if r.level_of == graph.bfs_levels(0) {
            "equal"
        } else {
            "DIFFERENT"
        }
    );
}

pub fn dfs(args: GraphArgs) -> Outcome {
    let model = args.params.model()?;
    let graph = build_graph(&args.graph, args.vertices, args.seed)?;
    let mut io = device(args.io, model.sizes);
    let external = graph.vertices() * 16 + graph.edge_entries() * 4;
    let cache = args.cache.map_or(external / 2, |s| s.0);
    let report = dfs::run(&mut *io, &graph, 0, cache).map_err(failure)?;
    print_dfs(&args, &graph, &report, io.physical());
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    Ok(())
}

fn print_dfs(args: &GraphArgs, graph: &Graph, r: &DfsReport, physical: IoStats) {
    println!(
        "textbook DFS on a {} graph: {} vertices, {} adjacency entries; mode {}; cache of {} \
         pages",
        args.graph,
        graph.vertices(),
        graph.edge_entries(),
        args.io.name(),
        r.cache_pages
    );
    println!(
        "algorithm I/O [GB]: read {} write {} ({} cache hits, {} misses, stack depth {})",
        gb(r.io.read_bytes),
        gb(r.io.write_bytes),
        r.hits,
        r.misses,
        r.peak_stack
    );
    println!(
        "device I/O [GB] (graph upload included): read {} write {}; visiting order checked \
         against an in-memory DFS: {}",
        gb(physical.read_bytes),
        gb(physical.write_bytes),
        if r.order == graph.dfs_order(0) {
            "equal"
        } else {
            "DIFFERENT"
        }
    );
}
