//! BFS (Mehlhorn-Meyer) and DFS (textbook) on a generated graph on the simulated device, in
//! one of the I/O modes of the paper's tables, or on an FTL over simulated NAND sized by a
//! dry run on the simulator. Each result is checked against the in-memory algorithm.

use super::ftl::{EmFtl, FtlDevice, FtlReport, FtlSpec, Snapshot, snapshot};
use super::{ModelParams, em_error, gb, kinds};
use crate::repro::LabError;
use flashkit_em::EmError;
use flashkit_em::graph::Graph;
use flashkit_em::graph::bfs::{self, BfsConfig, BfsReport};
use flashkit_em::graph::dfs::{self, DfsReport};
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, PhysicalIo};
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::sort::files::IoMode;
use flashkit_em::tl::TranslationLayer;
use serde::{Deserialize, Serialize};

/// The generated graphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphKind {
    /// A square grid (the largest not above the vertices asked for).
    Grid,
    /// A sparse random graph: 2|V| random edges.
    Random,
}

impl GraphKind {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            GraphKind::Grid => "grid",
            GraphKind::Random => "random",
        }
    }
}

impl std::str::FromStr for GraphKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "grid" => Ok(GraphKind::Grid),
            "random" => Ok(GraphKind::Random),
            other => Err(format!("unknown graph {other:?} (expected grid or random)")),
        }
    }
}

/// A graph algorithm's run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphSpec {
    /// The graph.
    pub graph: GraphKind,
    /// Vertices (4..=2^28; a grid uses the largest square not above it).
    pub vertices: u64,
    /// Block sizes: read-blocks, write-blocks or tl (flash is read as tl: the algorithms
    /// write single pages).
    #[serde(with = "kinds::IoModeDef")]
    pub io: IoMode,
    /// BFS only: the cluster parameter mu (`None`: sqrt(B / log2 |V|), from the model).
    pub mu: Option<u64>,
    /// DFS only: the page cache, bytes (`None`: half of the graph's external size).
    pub cache: Option<u64>,
    /// Seed of the graph and of the BFS masters.
    pub seed: u64,
    /// The model.
    pub params: ModelParams,
    /// Run on this FTL, sized by a dry run on the simulator.
    pub ftl: Option<FtlSpec>,
}

impl Default for GraphSpec {
    fn default() -> Self {
        GraphSpec {
            graph: GraphKind::Grid,
            vertices: 1 << 16,
            io: IoMode::Tl,
            mu: None,
            cache: None,
            seed: 1,
            params: ModelParams::default(),
            ftl: None,
        }
    }
}

impl GraphSpec {
    /// The graph the spec describes.
    pub fn build_graph(&self) -> Result<Graph, LabError> {
        let v = self.vertices;
        if !(4..=1 << 28).contains(&v) {
            return Err(LabError::spec(
                "vertices",
                format!("{v} is outside 4..=2^28"),
            ));
        }
        Ok(match self.graph {
            GraphKind::Grid => Graph::grid((v as f64).sqrt() as u32),
            GraphKind::Random => Graph::random(v as u32, 2 * v, self.seed),
        })
    }

    /// Refuse the other algorithm's option: it would do nothing.
    fn refuse(
        &self,
        given: bool,
        field: &'static str,
        owner: &str,
        this: &str,
    ) -> Result<(), LabError> {
        if given {
            return Err(LabError::spec(
                field,
                format!("is an option for em {owner}, not em {this}: drop it"),
            ));
        }
        Ok(())
    }
}

/// The graph's setting, for the report's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// The graph.
    pub graph: GraphKind,
    /// Its vertices.
    pub vertices: u64,
    /// Its adjacency entries.
    pub edge_entries: u64,
    /// The I/O mode.
    pub mode: IoMode,
    /// "simulated device", or "FTL page/greedy".
    pub device: String,
}

/// A graph algorithm's result: its report (as flashkit-em gives it), the cost of its I/O,
/// and on an FTL the FTL's figures. The JSON is those three; the rest is for the text.
#[derive(Clone, Debug, Serialize)]
pub struct GraphRun<T> {
    /// The algorithm's report.
    #[serde(flatten)]
    pub result: T,
    /// The algorithm's I/O (the graph's upload left out) under both flash models.
    pub cost: Cost,
    /// The FTL's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ftl: Option<FtlReport>,
    /// Where it ran.
    #[serde(skip)]
    pub setting: Setting,
    /// What reached the device, the graph's upload included.
    #[serde(skip)]
    pub physical: IoStats,
    /// The result equals the in-memory algorithm's.
    #[serde(skip)]
    pub matches_in_memory: bool,
    /// On an FTL: the dry run's footprint, and whether the FTL run moved exactly what the
    /// dry run moved.
    #[serde(skip)]
    pub dry_run: Option<(u64, bool)>,
}

/// Mehlhorn-Meyer BFS from vertex 0.
pub fn bfs(spec: &GraphSpec) -> Result<GraphRun<BfsReport>, LabError> {
    spec.refuse(spec.cache.is_some(), "cache", "dfs", "bfs")?;
    let model = spec.params.model()?;
    let graph = spec.build_graph()?;
    let config = BfsConfig {
        memory_bytes: model.memory_bytes,
        mu: spec.mu,
        seed: spec.seed,
    };
    let algorithm = |io: &mut dyn PhysicalIo| bfs::run(io, &graph, 0, &config);
    let ran = on_device(spec, model.sizes, "BFS", algorithm)?;
    let equal = ran.result.level_of == graph.bfs_levels(0);
    let cost = model.cost(&(ran.result.preprocessing + ran.result.bfs));
    Ok(ran.finish(spec, &graph, cost, equal))
}

/// Textbook DFS from vertex 0 with a page cache.
pub fn dfs(spec: &GraphSpec) -> Result<GraphRun<DfsReport>, LabError> {
    spec.refuse(spec.mu.is_some(), "mu", "bfs", "dfs")?;
    let model = spec.params.model()?;
    let graph = spec.build_graph()?;
    let cache = dfs_cache(spec, &model, &graph)?;
    let algorithm = |io: &mut dyn PhysicalIo| dfs::run(io, &graph, 0, cache);
    let ran = on_device(spec, model.sizes, "DFS", algorithm)?;
    let equal = ran.result.order == graph.dfs_order(0);
    let cost = model.cost(&ran.result.io);
    Ok(ran.finish(spec, &graph, cost, equal))
}

/// The DFS's cache: as given (at least two pages), or half the graph's external size.
fn dfs_cache(spec: &GraphSpec, model: &FlashModel, graph: &Graph) -> Result<u64, LabError> {
    let external = graph.vertices() * 16 + graph.edge_entries() * 4;
    let page = spec.io.algorithm_sizes(model.sizes).read_bytes;
    match spec.cache {
        // The default (half the graph) is raised to two pages on a tiny graph; a cache
        // the spec sized is not changed behind its back.
        Some(cache) if cache < 2 * page => Err(LabError::spec(
            "cache",
            format!(
                "{cache} holds fewer than the 2 pages of {page} B the DFS needs (a vertex's \
                 record and its adjacency); give at least {} B",
                2 * page
            ),
        )),
        Some(cache) => Ok(cache),
        None => Ok(external / 2),
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
) -> Result<Box<dyn FtlStack>, LabError> {
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
}

impl BlockIo for UploadMark {
    fn block_sizes(&self) -> BlockSizes {
        self.inner.block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        if self.mark.is_none() {
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
    physical: IoStats,
    device: String,
    ftl: Option<(u64, bool, FtlReport)>,
}

impl<T> Ran<T> {
    fn finish(self, spec: &GraphSpec, graph: &Graph, cost: Cost, equal: bool) -> GraphRun<T> {
        let (dry_run, ftl) = match self.ftl {
            Some((footprint, same, report)) => (Some((footprint, same)), Some(report)),
            None => (None, None),
        };
        GraphRun {
            result: self.result,
            cost,
            ftl,
            setting: Setting {
                graph: spec.graph,
                vertices: graph.vertices(),
                edge_entries: graph.edge_entries(),
                mode: spec.io,
                device: self.device,
            },
            physical: self.physical,
            matches_in_memory: equal,
            dry_run,
        }
    }
}

/// Run `algorithm` on the simulator, or on the spec's FTL sized by a dry run of the same
/// algorithm on the simulator (the highest byte it wrote). `name` names it in messages.
fn on_device<T>(
    spec: &GraphSpec,
    sizes: BlockSizes,
    name: &str,
    algorithm: impl Fn(&mut dyn PhysicalIo) -> Result<T, EmError>,
) -> Result<Ran<T>, LabError> {
    let mut sim = spec.io.simulated_device(sizes);
    let Some(ftl) = &spec.ftl else {
        let result = algorithm(&mut *sim).map_err(em_error)?;
        return Ok(Ran {
            result,
            physical: sim.physical(),
            device: "simulated device".into(),
            ftl: None,
        });
    };
    ftl.check(sizes)?;
    algorithm(&mut *sim).map_err(em_error)?;
    let footprint = sim
        .written_extent_bytes()
        .expect("invariant: the dry run is on the simulator");
    let what = format!("the footprint of the {name}'s dry run on the simulator");
    let device = ftl.sized(footprint, &what)?;
    let mut io = UploadMark {
        inner: ftl_device(spec.io, sizes, &device)?,
        mark: None,
    };
    let start = snapshot(io.inner.ftl());
    let result = algorithm(&mut io).map_err(em_error)?;
    let end = snapshot(io.inner.ftl());
    // An algorithm that never read would have done nothing but its upload.
    let mark = io.mark.clone().unwrap_or_else(|| end.clone());
    let report = device.report(io.inner.ftl(), [&start, &mark, &end])?;
    let physical = io.physical();
    Ok(Ran {
        result,
        physical,
        device: format!("FTL {}", report.label),
        ftl: Some((footprint, physical == sim.physical(), report)),
    })
}

impl<T> GraphRun<T> {
    /// The cost line, the device's I/O with the check (`what` was checked), and the FTL's
    /// figures.
    fn tail(&self, what: &str) -> String {
        let c = &self.cost;
        let mut out = format!(
            "cost of the algorithm's I/O: general model x + c*y = {:.0} ({} reads, {} \
             writes); unit-cost model {} GB moved\n",
            c.general,
            c.read_ios,
            c.write_ios,
            gb(c.unit_bytes)
        );
        out += &format!(
            "device I/O [GB] (graph upload included): read {} write {}; {what}: {}\n",
            gb(self.physical.read_bytes),
            gb(self.physical.write_bytes),
            if self.matches_in_memory {
                "equal"
            } else {
                "DIFFERENT"
            }
        );
        if let (Some((footprint, same)), Some(report)) = (self.dry_run, &self.ftl) {
            out += &format!(
                "dry run on the simulator: footprint {footprint} B; the FTL run moved {} \
                 volumes\n\n",
                if same { "the same" } else { "DIFFERENT" }
            );
            out += &report.render();
        }
        out
    }
}

impl GraphRun<BfsReport> {
    /// The report as `flashkit em bfs` prints it.
    pub fn render(&self) -> String {
        let (r, s) = (&self.result, &self.setting);
        let mut out = format!(
            "Mehlhorn-Meyer BFS on a {} graph: {} vertices, {} adjacency entries; mode {}; {}\n",
            s.graph.name(),
            s.vertices,
            s.edge_entries,
            s.mode.name(),
            s.device
        );
        out += &format!(
            "mu = {}, {} clusters, {} cluster-growing rounds, {} levels, hot pool peak {} KB \
             ({} levels spilled)\n",
            r.mu,
            r.clusters,
            r.rounds,
            r.levels,
            r.peak_pool_bytes / 1000,
            r.spilled_levels
        );
        out += &format!(
            "algorithm I/O [GB]: preprocessing read {} write {}; BFS read {} write {}\n",
            gb(r.preprocessing.read_bytes),
            gb(r.preprocessing.write_bytes),
            gb(r.bfs.read_bytes),
            gb(r.bfs.write_bytes)
        );
        out + &self.tail("checked against an in-memory BFS")
    }
}

impl GraphRun<DfsReport> {
    /// The report as `flashkit em dfs` prints it.
    pub fn render(&self) -> String {
        let (r, s) = (&self.result, &self.setting);
        let mut out = format!(
            "textbook DFS on a {} graph: {} vertices, {} adjacency entries; mode {}; cache of \
             {} pages; {}\n",
            s.graph.name(),
            s.vertices,
            s.edge_entries,
            s.mode.name(),
            r.cache_pages,
            s.device
        );
        out += &format!(
            "algorithm I/O [GB]: read {} write {} ({} cache hits, {} misses, stack depth {})\n",
            gb(r.io.read_bytes),
            gb(r.io.write_bytes),
            r.hits,
            r.misses,
            r.peak_stack
        );
        out + &self.tail("visiting order checked against an in-memory DFS")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::FtlKind;

    fn small() -> GraphSpec {
        GraphSpec {
            vertices: 1 << 10,
            params: ModelParams {
                memory: 64 << 10,
                br: 4 << 10,
                bw: 16 << 10,
                c: 2.0,
            },
            ..GraphSpec::default()
        }
    }

    #[test]
    fn bfs_and_dfs_on_the_simulator_match_the_in_memory_algorithms() {
        let run = bfs(&small()).expect("runs");
        assert!(run.matches_in_memory);
        assert_eq!(run.setting.vertices, 1 << 10);
        assert_eq!(run.setting.device, "simulated device");
        let io = run.result.preprocessing + run.result.bfs;
        assert_eq!(
            run.cost.general,
            io.read_ios as f64 + 2.0 * io.write_ios as f64
        );
        assert!(run.ftl.is_none() && run.dry_run.is_none());
        let json = serde_json::to_value(&run).expect("json");
        assert!(json.get("mu").is_some() && json.get("cost").is_some());
        assert!(json.get("ftl").is_none() && json.get("setting").is_none());
        let random = GraphSpec {
            graph: GraphKind::Random,
            ..small()
        };
        let run = dfs(&random).expect("runs");
        assert!(run.matches_in_memory);
        let graph = random.build_graph().expect("a graph");
        assert_eq!(run.setting.edge_entries, graph.edge_entries());
        assert!(
            graph.edge_entries() > 3 << 10,
            "about 2|V| edges, each in two lists"
        );
        assert!(
            run.render()
                .starts_with("textbook DFS on a random graph: 1024 vertices")
        );
    }

    #[test]
    fn on_an_ftl_the_run_moves_what_the_dry_run_moved() {
        let spec = GraphSpec {
            io: IoMode::ReadBlocks,
            ftl: Some(FtlSpec {
                ftl: FtlKind::Page,
                ..FtlSpec::default()
            }),
            ..small()
        };
        let run = bfs(&spec).expect("runs");
        assert!(run.matches_in_memory);
        let (footprint, same) = run.dry_run.expect("a dry run");
        assert!(same);
        let ftl = run.ftl.as_ref().expect("an FTL report");
        assert_eq!(ftl.footprint_bytes, footprint);
        assert_eq!(ftl.upload.host_pages_read, 0, "the upload only writes");
        assert!(ftl.algorithm.host_pages_read > 0);
        assert_eq!(run.setting.device, "FTL page/greedy");
    }

    /// The BFS's and DFS's text: each line read from the run's own figures, the check's
    /// verdict and, on an FTL, the dry run's.
    #[test]
    fn the_reports_read_their_runs_figures() {
        let mut run = bfs(&small()).expect("runs");
        let (r, c) = (&run.result, &run.cost);
        let text = run.render();
        for line in [
            "Mehlhorn-Meyer BFS on a grid graph: 1024 vertices, 3968 adjacency entries; mode \
             tl; simulated device\n"
                .to_string(),
            format!(
                "mu = {}, {} clusters, {} cluster-growing rounds, {} levels, hot pool peak {} KB \
                 ({} levels spilled)\n",
                r.mu,
                r.clusters,
                r.rounds,
                r.levels,
                r.peak_pool_bytes / 1000,
                r.spilled_levels
            ),
            format!(
                "algorithm I/O [GB]: preprocessing read {} write {}; BFS read {} write {}\n",
                gb(r.preprocessing.read_bytes),
                gb(r.preprocessing.write_bytes),
                gb(r.bfs.read_bytes),
                gb(r.bfs.write_bytes)
            ),
            format!(
                "cost of the algorithm's I/O: general model x + c*y = {:.0} ({} reads, {} \
                 writes); unit-cost model {} GB moved\n",
                c.general,
                c.read_ios,
                c.write_ios,
                gb(c.unit_bytes)
            ),
            format!(
                "device I/O [GB] (graph upload included): read {} write {}; checked against an \
                 in-memory BFS: equal\n",
                gb(run.physical.read_bytes),
                gb(run.physical.write_bytes)
            ),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        assert!(run.physical.write_bytes > 0, "the graph's upload");
        run.matches_in_memory = false;
        assert!(run.render().contains("in-memory BFS: DIFFERENT\n"));
        let run = dfs(&small()).expect("runs");
        let r = &run.result;
        let text = run.render();
        for line in [
            format!(
                "textbook DFS on a grid graph: 1024 vertices, 3968 adjacency entries; mode tl; \
                 cache of {} pages; simulated device\n",
                r.cache_pages
            ),
            format!(
                "algorithm I/O [GB]: read {} write {} ({} cache hits, {} misses, stack depth \
                 {})\n",
                gb(r.io.read_bytes),
                gb(r.io.write_bytes),
                r.hits,
                r.misses,
                r.peak_stack
            ),
            "visiting order checked against an in-memory DFS: equal\n".to_string(),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        // On an FTL through the translation layer: the dry run's line and the FTL's report.
        let spec = GraphSpec {
            ftl: Some(FtlSpec::default()),
            ..small()
        };
        let mut run = dfs(&spec).expect("runs");
        let (footprint, same) = run.dry_run.expect("a dry run");
        assert!(same && run.matches_in_memory);
        let ftl = run.ftl.as_ref().expect("an FTL report");
        let text = run.render();
        assert!(text.contains(&format!(
            "dry run on the simulator: footprint {footprint} B; the FTL run moved the same \
             volumes\n\n{}",
            ftl.render()
        )));
        assert!(ftl.upload.host_pages_written > 0 && ftl.upload.host_pages_read == 0);
        run.dry_run = Some((footprint, false));
        assert!(run.render().contains("the FTL run moved DIFFERENT volumes"));
    }

    /// The graphs the spec describes, at the bounds of their size; the DFS's cache by
    /// default half the graph's external size, and at least two pages when given.
    #[test]
    fn graphs_and_caches_at_their_bounds() {
        let grid = |vertices| {
            GraphSpec {
                vertices,
                ..small()
            }
            .build_graph()
            .map(|g| g.vertices())
        };
        assert_eq!(grid(4).ok(), Some(4));
        assert_eq!(grid(1000).ok(), Some(31 * 31));
        assert!(grid((1 << 28) + 1).is_err());
        let random = GraphSpec {
            graph: GraphKind::Random,
            vertices: 100,
            seed: 7,
            ..small()
        };
        let g = random.build_graph().expect("a graph");
        assert_eq!(g.vertices(), 100);
        assert_eq!(g.edge_entries(), Graph::random(100, 200, 7).edge_entries());
        for (text, kind) in [("grid", GraphKind::Grid), ("random", GraphKind::Random)] {
            assert_eq!(text.parse::<GraphKind>(), Ok(kind));
            assert_eq!(kind.name(), text);
        }
        let spec = small();
        let model = spec.params.model().expect("valid");
        let graph = spec.build_graph().expect("a graph");
        let external = graph.vertices() * 16 + graph.edge_entries() * 4;
        assert_eq!(dfs_cache(&spec, &model, &graph).ok(), Some(external / 2));
        let page = 4 << 10;
        let given = |cache| {
            dfs_cache(
                &GraphSpec {
                    cache: Some(cache),
                    ..small()
                },
                &model,
                &graph,
            )
            .ok()
        };
        assert_eq!(given(2 * page), Some(2 * page));
        assert_eq!(given(2 * page - 1), None);
        let run = dfs(&GraphSpec {
            cache: Some(3 * page),
            ..small()
        })
        .expect("runs");
        assert_eq!(run.result.cache_pages, 3);
    }

    #[test]
    fn the_other_algorithms_options_and_bad_sizes_name_their_field() {
        let cases = [
            (
                bfs(&GraphSpec {
                    cache: Some(1 << 20),
                    ..small()
                })
                .err(),
                "cache",
            ),
            (
                dfs(&GraphSpec {
                    mu: Some(4),
                    ..small()
                })
                .err(),
                "mu",
            ),
            (
                dfs(&GraphSpec {
                    cache: Some(0),
                    ..small()
                })
                .err(),
                "cache",
            ),
            (
                bfs(&GraphSpec {
                    vertices: 3,
                    ..small()
                })
                .err(),
                "vertices",
            ),
        ];
        for (error, field) in cases {
            match error {
                Some(LabError::Spec { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        assert!("tree".parse::<GraphKind>().is_err());
        let spec: GraphSpec =
            serde_json::from_str(r#"{"graph": "random", "io": "bw", "ftl": {"ftl": "emt"}}"#)
                .expect("valid");
        assert_eq!(spec.io, IoMode::WriteBlocks);
        assert_eq!(spec.ftl.map(|f| f.ftl), Some(FtlKind::Emt));
    }
}
