//! `flashkit em bfs` and `flashkit em dfs`: the graph algorithms on a generated graph on the
//! simulated device, in one of the I/O modes of the paper's tables, or (`--ftl`) on an FTL
//! over simulated NAND sized by a dry run on the simulator.

use crate::commands::em::{ModelParams, failure, gb, parse_records};
use crate::commands::em_ftl::{
    CAPACITY_HELP, EmFtl, FtlChoice, FtlDevice, FtlDeviceArgs, FtlReport, GC_HELP, OP_HELP,
    Snapshot, VET_INSERT_HELP, VET_NODES_HELP, VET_TABLE_HELP, snapshot,
};
use crate::output::write_json;
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::Args;
use flashkit_em::EmError;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig, BfsReport};
use flashkit_em::graph::dfs::{self, DfsReport};
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, PhysicalIo};
use flashkit_em::model::Cost;
use flashkit_em::sort::files::IoMode;
use flashkit_em::tl::TranslationLayer;
use flashkit_ftl::FtlKind;
use flashkit_lab::config::ConfigFile;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(mut_group("DeviceSection", |g| g.requires("ftl")))]
#[command(mut_group("FtlSection", |g| g.requires("ftl")))]
#[command(mut_arg("capacity", |a| a.help(CAPACITY_HELP)))]
#[command(mut_arg("op", |a| a.help(OP_HELP)))]
#[command(mut_arg("gc", |a| a.help(GC_HELP).value_name("POLICY")))]
#[command(mut_arg("vet_insert", |a| a.help(VET_INSERT_HELP).value_name("SCHEME")))]
#[command(mut_arg("vet_nodes", |a| a.help(VET_NODES_HELP).value_name("LAYOUT")))]
#[command(mut_arg("vet_table", |a| a.help(VET_TABLE_HELP).value_name("TABLE")))]
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
    /// BFS cluster parameter mu: each vertex starts a cluster with probability 1/mu
    /// [default: sqrt(B / log2 |V|), from the model].
    #[arg(long)]
    pub mu: Option<u64>,
    /// DFS page cache [default: half of the graph's external size].
    #[arg(long, value_name = "SIZE")]
    pub cache: Option<flashkit_lab::config::Size>,
    /// Seed of the graph and of the BFS masters.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run on this FTL (page, block, bast, fast, ofast, vet, emt) over simulated NAND,
    /// sized to the footprint of a dry run on the simulator, and report its flash
    /// operations.
    #[arg(long, value_name = "KIND")]
    pub ftl: Option<FtlKind>,
    #[command(flatten)]
    pub ftl_device: FtlDeviceArgs,
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

/// An FTL under an em algorithm, straight or through the translation layer: the adapter
/// at the bottom, for its counters and report.
trait FtlStack: PhysicalIo {
    /// The FTL adapter underneath.
    fn ftl(&self) -> &EmFtl;
}

impl FtlStack for EmFtl {
    fn ftl(&self) -> &EmFtl {
        self
    }
}

impl FtlStack for TranslationLayer<EmFtl> {
    fn ftl(&self) -> &EmFtl {
        self.inner()
    }
}

/// The FTL in `mode`: pages of `B_r` or `B_w` straight onto it, or pages of `B_r` through
/// the translation layer onto `B_w` blocks (as [`IoMode::simulated_device`] does on the
/// simulator).
fn ftl_device(
    mode: IoMode,
    sizes: BlockSizes,
    ftl: &FtlDevice,
) -> Result<Box<dyn FtlStack>, Failure> {
    Ok(match mode {
        IoMode::ReadBlocks | IoMode::WriteBlocks => {
            Box::new(ftl.build(mode.algorithm_sizes(sizes))?)
        }
        IoMode::Tl | IoMode::Flash => Box::new(
            TranslationLayer::new(ftl.build(sizes)?, 2, None)
                .expect("invariant: two buffers and no bound are valid"),
        ),
    })
}

/// The device under a graph algorithm, passing every transfer through. Both algorithms
/// write their graph first and begin by reading it, so the FTL's counters at the first read
/// divide the upload from the algorithm's part.
struct UploadMark {
    inner: Box<dyn FtlStack>,
    mark: Option<Snapshot>,
    read_yet: bool,
}

impl BlockIo for UploadMark {
    fn block_sizes(&self) -> BlockSizes {
        self.inner.block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        if !self.read_yet {
            self.read_yet = true;
            self.mark = Some(snapshot(self.inner.ftl()));
        }
        self.inner.read(offset, buf)
    }
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        self.inner.write(offset, buf)
    }
    fn discard(&mut self, offset: u64, len: u64) -> Result<(), EmError> {
        self.inner.discard(offset, len)
    }
    fn sync(&mut self) -> Result<(), EmError> {
        self.inner.sync()
    }
    fn stats(&self) -> IoStats {
        self.inner.stats()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

impl PhysicalIo for UploadMark {
    fn physical(&self) -> IoStats {
        self.inner.physical()
    }
}

/// What a graph algorithm's run gave, and what its device saw.
struct Ran<T> {
    result: T,
    /// What reached the device, the graph's upload included.
    physical: IoStats,
    device: String,
    /// On an FTL: the dry run's footprint, whether the FTL run moved exactly what the dry
    /// run moved, and the FTL's report.
    ftl: Option<(u64, bool, FtlReport)>,
}

/// The algorithm under its name in messages ("BFS").
type Named<'a, A> = (&'a str, A);

/// Run `algorithm` on the simulator, or with `--ftl` on the FTL sized by a dry run of the
/// same algorithm on the simulator (the highest byte it wrote).
fn on_device<T>(
    args: &GraphArgs,
    config: &ConfigFile,
    sizes: BlockSizes,
    (name, algorithm): Named<impl Fn(&mut dyn PhysicalIo) -> Result<T, EmError>>,
) -> Result<Ran<T>, Failure> {
    let mut sim = args.io.simulated_device(sizes);
    let Some(kind) = args.ftl else {
        let result = algorithm(&mut *sim).map_err(failure)?;
        return Ok(Ran {
            result,
            physical: sim.physical(),
            device: "simulated device".into(),
            ftl: None,
        });
    };
    let choice = FtlChoice::new(kind, &args.ftl_device, config, sizes)?;
    algorithm(&mut *sim).map_err(failure)?;
    let footprint = sim
        .written_extent_bytes()
        .expect("invariant: the dry run is on the simulator");
    let what = format!("the footprint of the {name}'s dry run on the simulator");
    let ftl = choice.sized(footprint, &what)?;
    let (result, physical, report) = on_ftl(args.io, sizes, &ftl, algorithm)?;
    Ok(Ran {
        result,
        physical,
        device: format!("FTL {}", report.label),
        ftl: Some((footprint, physical == sim.physical(), report)),
    })
}

/// Run `algorithm` on a fresh FTL of `device` in `mode`: its result, what reached the FTL,
/// and the FTL's report.
fn on_ftl<T>(
    mode: IoMode,
    sizes: BlockSizes,
    device: &FtlDevice,
    algorithm: impl Fn(&mut dyn PhysicalIo) -> Result<T, EmError>,
) -> Result<(T, IoStats, FtlReport), Failure> {
    let mut io = UploadMark {
        inner: ftl_device(mode, sizes, device)?,
        mark: None,
        read_yet: false,
    };
    let start = snapshot(io.inner.ftl());
    let result = algorithm(&mut io).map_err(failure)?;
    let adapter = io.inner.ftl();
    let end = snapshot(adapter);
    // An algorithm that never read would have done nothing but its upload.
    let mark = io.mark.clone().unwrap_or_else(|| end.clone());
    let report = device.report(adapter, [&start, &mark, &end])?;
    Ok((result, io.physical(), report))
}

/// A graph algorithm's JSON: its report (as without `--ftl`), and the FTL's figures.
#[derive(Serialize)]
struct GraphDocument<'a, T> {
    #[serde(flatten)]
    report: &'a T,
    /// The algorithm's I/O (the graph's upload left out) under both flash models.
    cost: Cost,
    #[serde(skip_serializing_if = "Option::is_none")]
    ftl: Option<&'a FtlReport>,
}

fn save<T: Serialize>(args: &GraphArgs, ran: &Ran<T>, cost: Cost) -> Outcome {
    if let Some(path) = &args.json {
        let document = GraphDocument {
            report: &ran.result,
            cost,
            ftl: ran.ftl.as_ref().map(|(_, _, report)| report),
        };
        write_json(path, &document)?;
    }
    Ok(())
}

/// Refuse the other algorithm's option (`--cache` is DFS's, `--mu` BFS's): it would do nothing.
fn refuse(given: bool, flag: &str, owner: &str, this: &str) -> Outcome {
    if given {
        return Err(Failure::Usage(anyhow!(
            "{flag} is an option for em {owner}, not em {this}: drop it"
        )));
    }
    Ok(())
}

pub fn bfs(args: GraphArgs, config: &ConfigFile) -> Outcome {
    refuse(args.cache.is_some(), "--cache", "dfs", "bfs")?;
    crate::output::check_outputs(&[("--json", args.json.as_deref())]).map_err(Failure::Usage)?;
    let model = args.params.model()?;
    let graph = build_graph(&args.graph, args.vertices, args.seed)?;
    let bfs_config = BfsConfig {
        memory_bytes: model.memory_bytes,
        mu: args.mu,
        seed: args.seed,
    };
    let algorithm = |io: &mut dyn PhysicalIo| bfs::run(io, &graph, 0, &bfs_config);
    let ran = on_device(&args, config, model.sizes, ("BFS", algorithm))?;
    let equal = ran.result.level_of == graph.bfs_levels(0);
    let cost = model.cost(&(ran.result.preprocessing + ran.result.bfs));
    print_bfs(&args, &graph, &ran);
    print_cost(&cost);
    print_check(&ran, "checked against an in-memory BFS", equal);
    save(&args, &ran, cost)
}

/// The algorithm's I/O under both flash models (`--c` prices the general model's writes).
fn print_cost(cost: &Cost) {
    println!(
        "cost of the algorithm's I/O: general model x + c*y = {:.0} ({} reads, {} writes); \
         unit-cost model {} GB moved",
        cost.general,
        cost.read_ios,
        cost.write_ios,
        gb(cost.unit_bytes)
    );
}

fn print_bfs(args: &GraphArgs, graph: &Graph, ran: &Ran<BfsReport>) {
    let r = &ran.result;
    println!(
        "Mehlhorn-Meyer BFS on a {} graph: {} vertices, {} adjacency entries; mode {}; {}",
        args.graph,
        graph.vertices(),
        graph.edge_entries(),
        args.io.name(),
        ran.device
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
}

/// The device line, the result's check, and the FTL's figures.
fn print_check<T>(ran: &Ran<T>, what: &str, equal: bool) {
    println!(
        "device I/O [GB] (graph upload included): read {} write {}; {what}: {}",
        gb(ran.physical.read_bytes),
        gb(ran.physical.write_bytes),
        if equal { "equal" } else { "DIFFERENT" }
    );
    if let Some((footprint, same, report)) = &ran.ftl {
        println!(
            "dry run on the simulator: footprint {footprint} B; the FTL run moved {} volumes",
            if *same { "the same" } else { "DIFFERENT" }
        );
        println!();
        report.print();
    }
}

pub fn dfs(args: GraphArgs, config: &ConfigFile) -> Outcome {
    refuse(args.mu.is_some(), "--mu", "bfs", "dfs")?;
    crate::output::check_outputs(&[("--json", args.json.as_deref())]).map_err(Failure::Usage)?;
    let model = args.params.model()?;
    let graph = build_graph(&args.graph, args.vertices, args.seed)?;
    let external = graph.vertices() * 16 + graph.edge_entries() * 4;
    let page = args.io.algorithm_sizes(model.sizes).read_bytes;
    if let Some(cache) = args.cache
        && cache.0 < 2 * page
    {
        // The default (half the graph) is raised to two pages on a tiny graph; a cache the
        // user sized is not changed behind their back.
        return Err(Failure::Usage(anyhow!(
            "--cache {} holds fewer than the 2 pages of {page} B the DFS needs (a vertex's \
             record and its adjacency); give at least {} B",
            cache.0,
            2 * page
        )));
    }
    let cache = args.cache.map_or(external / 2, |s| s.0);
    let algorithm = |io: &mut dyn PhysicalIo| dfs::run(io, &graph, 0, cache);
    let ran = on_device(&args, config, model.sizes, ("DFS", algorithm))?;
    let equal = ran.result.order == graph.dfs_order(0);
    let cost = model.cost(&ran.result.io);
    print_dfs(&args, &graph, &ran);
    print_cost(&cost);
    print_check(
        &ran,
        "visiting order checked against an in-memory DFS",
        equal,
    );
    save(&args, &ran, cost)
}

fn print_dfs(args: &GraphArgs, graph: &Graph, ran: &Ran<DfsReport>) {
    let r = &ran.result;
    println!(
        "textbook DFS on a {} graph: {} vertices, {} adjacency entries; mode {}; cache of {} \
         pages; {}",
        args.graph,
        graph.vertices(),
        graph.edge_entries(),
        args.io.name(),
        r.cache_pages,
        ran.device
    );
    println!(
        "algorithm I/O [GB]: read {} write {} ({} cache hits, {} misses, stack depth {})",
        gb(r.io.read_bytes),
        gb(r.io.write_bytes),
        r.hits,
        r.misses,
        r.peak_stack
    );
}
