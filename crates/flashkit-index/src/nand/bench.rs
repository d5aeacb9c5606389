//! The GRR paper's evaluation run (section 4): a B+-tree on a fresh NAND part, the Table 4
//! workload through it, and what each phase cost: page reads, programs and erases, page
//! copies during merges, the buffer hit ratio, space used, and simulated time under the
//! serial cost model (the paper's 80 us / 200 us / 1.5 ms with the `grr-paper` preset).
//!
//! What it is not: a wall-clock benchmark. Every figure is simulated and deterministic for a
//! seed; how fast the simulator runs is the caller's to measure.
//!
//! Key decision: every read is checked against what was written (a model of every file's
//! pages), so a benchmark run is also a correctness run; the last phase flushes the buffer
//! so that every scheme ends with everything on flash and the totals are comparable.

use crate::nand::workload::{FileOp, FilePhase, FileWorkload, key};
use crate::nand::{
    AnyPlacement, AnyReplacement, BTree, BufferConfig, BufferStats, NandIndexError, StoreStats,
    TreeStats,
};
use flashkit_core::{Geometry, OpCounters, Timing};
use flashkit_device::{FlashDevice, NandDevice, PageBytes};
use serde::Serialize;

/// Everything needed to build the tree.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NandSpec {
    /// Storage scheme.
    pub placement: AnyPlacement,
    /// Buffer replacement policy.
    pub replacement: AnyReplacement,
    /// Buffer size and shape.
    pub buffer: BufferConfig,
    /// The flash.
    pub geometry: Geometry,
    /// Operation costs.
    pub timing: Timing,
    /// Erase cycles a block survives.
    pub endurance_cycles: u32,
}

/// Simulated time of a phase, by operation kind (every cause).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PhaseTime {
    /// Page reads, seconds.
    pub read_s: f64,
    /// Page programs, seconds.
    pub write_s: f64,
    /// Block erases, seconds.
    pub erase_s: f64,
}

impl PhaseTime {
    fn of(c: &OpCounters, t: &Timing) -> PhaseTime {
        let s = |n: u64, ns: u64| n as f64 * ns as f64 * 1e-9;
        PhaseTime {
            read_s: s(c.reads.total(), t.read_ns),
            write_s: s(c.programs.total(), t.program_ns),
            erase_s: s(c.erases.total(), t.erase_ns),
        }
    }

    /// All of it.
    pub fn total_s(&self) -> f64 {
        self.read_s + self.write_s + self.erase_s
    }
}

/// What one phase did and cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseReport {
    /// `create`, `mixed`, `flush` or `total`.
    pub name: String,
    /// File-system requests.
    pub requests: u64,
    /// Tree lookups.
    pub gets: u64,
    /// Tree puts (inserts and updates).
    pub puts: u64,
    /// Puts that inserted a new key.
    pub inserts: u64,
    /// Page reads, programs and erases (host = the tree's own I/O, gc = merges and block
    /// reclaiming).
    pub counters: OpCounters,
    /// Buffer counters.
    pub buffer: BufferStats,
    /// Storage manager counters.
    pub store: StoreStats,
    /// Simulated time.
    pub time: PhaseTime,
}

impl PhaseReport {
    /// The buffer hit ratio.
    pub fn hit_ratio(&self) -> f64 {
        self.buffer.hit_ratio()
    }

    /// Page copies during merges.
    pub fn page_copies(&self) -> u64 {
        self.store.merge_page_copies
    }
}

/// Space the index holds at the end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SpaceReport {
    /// Blocks holding index data.
    pub blocks_in_use: u64,
    /// Most blocks held at once.
    pub peak_blocks_in_use: u64,
    /// Bytes of the blocks in use.
    pub bytes_in_use: u64,
    /// Live nodes.
    pub live_nodes: u64,
    /// Live nodes per page of the blocks in use.
    pub utilization: f64,
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NandReport {
    /// Scheme and parameters, e.g. `grr m=8 k=4 l=8`.
    pub scheme: String,
    /// Buffer policy.
    pub buffer_policy: AnyReplacement,
    /// `create`, `mixed`, `flush`.
    pub phases: Vec<PhaseReport>,
    /// The phases summed.
    pub total: PhaseReport,
    /// Space at the end.
    pub space: SpaceReport,
    /// Structural counters.
    pub tree: TreeStats,
    /// Tree height at the end.
    pub height: u32,
    /// Keys at the end.
    pub keys: u64,
    /// The tree's state hash at the end ([`BTree::hash_state`], 16 hex digits).
    pub state_hash: String,
}

type Tree = BTree<AnyPlacement, AnyReplacement>;

/// Snapshot of every counter at the start of a phase.
struct Mark {
    counters: OpCounters,
    buffer: BufferStats,
    store: StoreStats,
    requests: u64,
    gets: u64,
    puts: u64,
    inserts: u64,
}

/// Applies the workload's requests to the tree and checks every read.
struct Driver {
    files: Vec<Vec<u64>>,
    next_address: u64,
    data_pages: u64,
    requests: u64,
    gets: u64,
    puts: u64,
    inserts: u64,
}

impl Driver {
    fn mark(&self, tree: &Tree) -> Mark {
        Mark {
            counters: *tree.store().device().counters(),
            buffer: tree.buffer_stats(),
            store: tree.store_stats(),
            requests: self.requests,
            gets: self.gets,
            puts: self.puts,
            inserts: self.inserts,
        }
    }

    fn phase(&self, name: &str, tree: &Tree, from: &Mark, timing: &Timing) -> PhaseReport {
        let counters = tree.store().device().counters().since(&from.counters);
        PhaseReport {
            name: name.to_string(),
            requests: self.requests - from.requests,
            gets: self.gets - from.gets,
            puts: self.puts - from.puts,
            inserts: self.inserts - from.inserts,
            counters,
            buffer: tree.buffer_stats().since(&from.buffer),
            store: tree.store_stats().since(&from.store),
            time: PhaseTime::of(&counters, timing),
        }
    }

    fn write(
        &mut self,
        tree: &mut Tree,
        file: u32,
        offset: u32,
        pages: u32,
    ) -> Result<(), NandIndexError> {
        for page in offset..offset + pages {
            let address = self.next_address;
            self.next_address = (self.next_address + 1) % self.data_pages;
            let values = &mut self.files[file as usize];
            let extends = page as usize == values.len();
            let inserted = tree.put(key(file, page), address)?;
            if inserted != extends {
                return Err(NandIndexError::Mismatch {
                    detail: format!(
                        "put of file {file} page {page} said new = {inserted}, the file has {} \
                         pages",
                        values.len()
                    ),
                });
            }
            if extends {
                values.push(address);
            } else {
                values[page as usize] = address;
            }
            self.puts += 1;
            self.inserts += u64::from(inserted);
        }
        Ok(())
    }

    fn apply(&mut self, tree: &mut Tree, op: FileOp) -> Result<(), NandIndexError> {
        self.requests += 1;
        match op {
            FileOp::Create { file, pages } => {
                self.files.push(Vec::with_capacity(pages as usize));
                self.write(tree, file, 0, pages)
            }
            FileOp::Write {
                file,
                offset,
                pages,
            } => self.write(tree, file, offset, pages),
            FileOp::Read {
                file,
                offset,
                pages,
            } => {
                for page in offset..offset + pages {
                    let got = tree.get(key(file, page))?;
                    self.gets += 1;
                    let want = self.files[file as usize][page as usize];
                    if got != Some(want) {
                        return Err(NandIndexError::Mismatch {
                            detail: format!(
                                "file {file} page {page} read back as {got:?}, {want} was written"
                            ),
                        });
                    }
                }
                Ok(())
            }
        }
    }
}

/// Run the workload on a fresh tree built as `spec` says.
pub fn run(spec: &NandSpec, workload: &FileWorkload) -> Result<NandReport, NandIndexError> {
    workload
        .validate()
        .map_err(|reason| NandIndexError::Config {
            field: "workload",
            reason,
        })?;
    let dev = NandDevice::<PageBytes>::new(spec.geometry).with_endurance(spec.endurance_cycles);
    let mut tree = Tree::create(dev, spec.placement, spec.replacement, spec.buffer)?;
    let mut driver = Driver {
        files: Vec::with_capacity(workload.files as usize),
        next_address: 0,
        data_pages: workload.data_pages,
        requests: 0,
        gets: 0,
        puts: 0,
        inserts: 0,
    };
    let mut phases = Vec::new();
    let mut stream = workload.stream();
    let mut mark = driver.mark(&tree);
    let mut current = FilePhase::Create;
    while let Some((phase, op)) = stream.next_op() {
        if phase != current {
            phases.push(driver.phase("create", &tree, &mark, &spec.timing));
            mark = driver.mark(&tree);
            current = phase;
        }
        driver.apply(&mut tree, op)?;
    }
    let name = match current {
        FilePhase::Create => "create",
        FilePhase::Mixed => "mixed",
    };
    phases.push(driver.phase(name, &tree, &mark, &spec.timing));
    if current == FilePhase::Create {
        phases.push(driver.phase("mixed", &tree, &driver.mark(&tree), &spec.timing));
    }
    let mark = driver.mark(&tree);
    tree.flush()?;
    phases.push(driver.phase("flush", &tree, &mark, &spec.timing));
    let zero = Mark {
        counters: OpCounters::default(),
        buffer: BufferStats::default(),
        store: StoreStats::default(),
        requests: 0,
        gets: 0,
        puts: 0,
        inserts: 0,
    };
    let total = driver.phase("total", &tree, &zero, &spec.timing);
    Ok(NandReport {
        scheme: spec.placement.describe(),
        buffer_policy: spec.replacement,
        phases,
        total,
        space: space(&tree),
        tree: tree.tree_stats(),
        height: tree.height(),
        keys: driver.files.iter().map(|f| f.len() as u64).sum(),
        state_hash: {
            let mut hasher = flashkit_core::StateHasher::new();
            tree.hash_state(&mut hasher);
            format!("{:016x}", hasher.finish())
        },
    })
}

fn space(tree: &Tree) -> SpaceReport {
    let store = tree.store();
    let geometry = store.geometry();
    let blocks = u64::from(store.blocks_in_use());
    let live = store.live_nodes();
    let pages = blocks * u64::from(geometry.pages_per_block());
    SpaceReport {
        blocks_in_use: blocks,
        peak_blocks_in_use: store.stats().peak_blocks_in_use,
        bytes_in_use: blocks * geometry.block_bytes(),
        live_nodes: live,
        utilization: if pages == 0 {
            0.0
        } else {
            live as f64 / pages as f64
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nand::{Grr, Ipl};
    use flashkit_core::NandPreset;

    fn spec(placement: AnyPlacement, replacement: AnyReplacement) -> NandSpec {
        let preset = NandPreset::GRR_PAPER;
        NandSpec {
            placement,
            replacement,
            buffer: BufferConfig {
                capacity_bytes: 32 * 1024,
                window: 0.5,
                sector_bytes: 512,
            },
            geometry: preset.geometry().blocks(64).build().expect("valid"),
            timing: preset.timing,
            endurance_cycles: preset.endurance_cycles,
        }
    }

    fn tiny() -> FileWorkload {
        FileWorkload {
            files: 300,
            modification_coefficient: 4.0,
            read_percent: 40,
            ..FileWorkload::default()
        }
    }

    fn schemes() -> [AnyPlacement; 3] {
        let timing = NandPreset::GRR_PAPER.timing;
        [
            AnyPlacement::Ipl(Ipl::default()),
            AnyPlacement::Grr(Grr::paper(timing)),
            AnyPlacement::Grr(Grr {
                adaptive: true,
                ..Grr::paper(timing)
            }),
        ]
    }

    #[test]
    fn a_tiny_run_works_on_every_scheme_and_buffer_and_is_deterministic() {
        for placement in schemes() {
            for replacement in AnyReplacement::ALL {
                let s = spec(placement, replacement);
                let (a, b) = (
                    run(&s, &tiny()).expect("runs"),
                    run(&s, &tiny()).expect("runs"),
                );
                assert_eq!(a, b, "{} {replacement}: same seed, same figures", a.scheme);
                let names: Vec<&str> = a.phases.iter().map(|p| p.name.as_str()).collect();
                assert_eq!(names, ["create", "mixed", "flush"]);
                assert_eq!(a.phases[0].requests, 300);
                assert_eq!(a.phases[1].requests, 1_200);
                assert!(a.phases[1].gets > 0 && a.phases[1].puts > 0);
                assert!(a.total.time.total_s() > 0.0);
                assert!(a.total.hit_ratio() > 0.0 && a.total.hit_ratio() < 1.0);
                assert_eq!(a.keys, a.total.inserts);
            }
        }
    }

    #[test]
    fn an_all_read_mix_writes_nothing_after_the_create_phase() {
        let s = spec(schemes()[1], AnyReplacement::CfSemi);
        let report = run(
            &s,
            &FileWorkload {
                read_percent: 100,
                ..tiny()
            },
        )
        .expect("runs");
        let mixed = &report.phases[1];
        assert_eq!(mixed.puts, 0);
        assert_eq!(mixed.buffer.full_sector_flushes, 0, "nothing is modified");
        // Only what the create phase left dirty in the buffer is written: at most one page
        // per unit of the 32 KiB buffer.
        assert!(mixed.counters.programs.total() <= 32 * 1024 / 512);
        assert!(mixed.buffer.clean_evictions > 0);
    }

    /// Every integer a phase reports, by its path in the report's JSON.
    fn integers(phase: &PhaseReport) -> Vec<(String, u64)> {
        fn walk(path: String, v: &serde_json::Value, out: &mut Vec<(String, u64)>) {
            match v {
                serde_json::Value::Object(fields) => {
                    for (name, field) in fields {
                        walk(format!("{path}.{name}"), field, out);
                    }
                }
                v => {
                    if let Some(n) = v.as_u64() {
                        out.push((path, n));
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(
            String::new(),
            &serde_json::to_value(phase).expect("json"),
            &mut out,
        );
        out
    }

    /// The figures a report prints, each against its own computation: the phases add up to
    /// the total (every counter, by path; the peak of blocks in use is a maximum, not a sum),
    /// each phase's time is its operations at the preset's costs, the space at the end is
    /// its blocks at the geometry's sizes, and the live nodes are the nodes the tree's
    /// splits made and its merges removed.
    #[test]
    fn every_figure_is_computed_from_what_the_run_did() {
        let names = ["ipl k=1", "grr m=8 k=4 l=8", "grr m=8 k=4 l=8 adaptive"];
        for (placement, name) in schemes().into_iter().zip(names) {
            let s = spec(placement, AnyReplacement::CfSemi);
            let r = run(&s, &tiny()).expect("runs");
            assert_eq!(r.scheme, name);
            assert_eq!(crate::nand::Placement::name(&placement), &name[..3]);
            let total = integers(&r.total);
            assert!(total.len() >= 39, "{} integers in a phase", total.len());
            let mut peak = 0;
            for (i, (path, value)) in total.iter().enumerate() {
                let each: Vec<u64> = r.phases.iter().map(|p| integers(p)[i].1).collect();
                assert!(r.phases.iter().all(|p| integers(p)[i].0 == *path));
                if path.ends_with("peak_blocks_in_use") {
                    peak = *value;
                    assert_eq!(
                        *value,
                        *each.iter().max().expect("phases"),
                        "{} {path}",
                        r.scheme
                    );
                } else {
                    assert_eq!(*value, each.iter().sum::<u64>(), "{} {path}", r.scheme);
                }
            }
            assert!(
                r.total.counters.erases.total() > 0,
                "{}: merges erase",
                r.scheme
            );
            for p in r.phases.iter().chain([&r.total]) {
                let c = &p.counters;
                let t = &s.timing;
                let want = [
                    c.reads.total() as f64 * t.read_ns as f64 / 1e9,
                    c.programs.total() as f64 * t.program_ns as f64 / 1e9,
                    c.erases.total() as f64 * t.erase_ns as f64 / 1e9,
                ];
                let got = [p.time.read_s, p.time.write_s, p.time.erase_s];
                for (g, w) in got.iter().zip(want) {
                    assert!(
                        (g - w).abs() <= 1e-12 * w,
                        "{} {}: {got:?} {want:?}",
                        r.scheme,
                        p.name
                    );
                }
                let sum: f64 = want.iter().sum();
                assert!((p.time.total_s() - sum).abs() <= 1e-12 * sum);
                assert_eq!(p.page_copies(), p.store.merge_page_copies);
                let b = &p.buffer;
                let ratio = match b.references {
                    0 => 0.0,
                    n => b.hits as f64 / n as f64,
                };
                assert_eq!(p.hit_ratio(), ratio, "{} {}", r.scheme, p.name);
            }
            let space = &r.space;
            let g = &s.geometry;
            assert!(space.blocks_in_use > 0 && space.blocks_in_use <= peak);
            assert_eq!(space.peak_blocks_in_use, peak);
            assert_eq!(space.bytes_in_use, space.blocks_in_use * g.block_bytes());
            let pages = space.blocks_in_use * u64::from(g.pages_per_block());
            assert_eq!(space.utilization, space.live_nodes as f64 / pages as f64);
            let t = &r.tree;
            let made = 1 + t.leaf_splits + t.inner_splits + t.root_splits;
            let removed = t.node_merges + t.root_collapses;
            assert_eq!(space.live_nodes, made - removed, "{}: {t:?}", r.scheme);
            assert!(r.height >= 2 && u64::from(r.height) == 1 + t.root_splits - t.root_collapses);
        }
    }

    /// Without modifications the mixed phase is reported empty, and a workload that breaks
    /// its rules is refused before the flash is touched, naming it.
    #[test]
    fn a_run_without_modifications_reports_an_empty_mixed_phase() {
        let s = spec(schemes()[0], AnyReplacement::CfSemi);
        let none = FileWorkload {
            modification_coefficient: 0.0,
            ..tiny()
        };
        let r = run(&s, &none).expect("runs");
        let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["create", "mixed", "flush"]);
        assert_eq!(r.phases[0].requests, 300);
        assert_eq!(r.phases[0].inserts, r.keys);
        let mixed = &r.phases[1];
        assert_eq!((mixed.requests, mixed.gets, mixed.puts), (0, 0, 0));
        assert_eq!(mixed.counters, OpCounters::default());
        assert!(
            r.phases[2].counters.programs.total() > 0,
            "the flush writes"
        );
        let bad = FileWorkload { files: 0, ..tiny() };
        match run(&s, &bad) {
            Err(NandIndexError::Config { field, reason }) => {
                assert_eq!(field, "workload");
                assert!(reason.starts_with("files:"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// A fingerprint of every counter of every phase.
    fn fingerprint(report: &NandReport) -> u64 {
        let mut h = flashkit_core::StateHasher::new();
        for p in &report.phases {
            h.counters(&p.counters);
            h.u64(p.buffer.hits);
            h.u64(p.buffer.references);
            h.u64(p.store.merge_page_copies);
        }
        h.u64(report.space.blocks_in_use);
        h.finish()
    }

    /// The smoke run's figures are pinned: a change that makes the simulator faster must not
    /// change what it simulates. A deliberate change of behaviour updates the constants (the
    /// failure message prints the new ones).
    #[test]
    fn smoke_figures_are_pinned() {
        let pinned: [u64; 3] = [
            0xc1d4_eec5_bfb1_11d0,
            0x135b_7476_cbb3_9bd6,
            0x7e31_2a40_798f_edd3,
        ];
        let reports: Vec<NandReport> = schemes()
            .into_iter()
            .map(|p| run(&spec(p, AnyReplacement::CfSemi), &tiny()).expect("runs"))
            .collect();
        let got: Vec<u64> = reports.iter().map(fingerprint).collect();
        assert_eq!(
            got, pinned,
            "new fingerprints (ipl, grr, grr adaptive): {got:#x?}"
        );
        // The state at the end: every page on flash, the store's and the buffer's RAM.
        let hashes: Vec<&str> = reports.iter().map(|r| r.state_hash.as_str()).collect();
        assert_eq!(
            hashes,
            ["0794622be06dd47d", "c8f9f268b935aad7", "15a4eab89f4469bb"],
            "new state hashes (ipl, grr, grr adaptive)"
        );
    }
}
