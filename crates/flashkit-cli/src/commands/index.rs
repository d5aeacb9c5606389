//! `flashkit index bench`: one NOR-flash index (fat list, soft list or mu-tree) through the
//! fat-list paper's micro-benchmark or the sensor macro-benchmark, with the simulated time
//! of each phase split into reads, writes and erases, normal operation and space
//! reclaiming; or the NAND B-tree over In-Page Logging or GRR storage (`--structure
//! ipl|grr`, `--buffer lru|cflru|cfsemi`) through the GRR paper's file workload (Table 4),
//! with page reads, programs, erases, merge copies, the buffer hit ratio and space used.

use crate::commands::reproduce::lab_failure;
use crate::output::{write_csv, write_json};
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::{Args, Subcommand};
use flashkit_core::NandPreset;
use flashkit_core::units::format_size;
use flashkit_device::{NorGeometry, NorPreset};
use flashkit_index::nand::bench::{self as nand_bench, NandReport, NandSpec};
use flashkit_index::nand::workload::FileWorkload;
use flashkit_index::nand::{AnyPlacement, AnyReplacement, BufferConfig, Grr, Ipl, NandIndexError};
use flashkit_index::nor::bench::{self, IndexSpec, MicroSpec, PhaseReport, SensorSpec, Structure};
use flashkit_index::nor::{FatListConfig, IndexError, MuTreeConfig, SoftListConfig};
use flashkit_lab::config::{Count, Size};
use flashkit_report::Table;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum IndexCommand {
    /// Run one flash index through a benchmark and report simulated time by phase.
    Bench(IndexBenchArgs),
}

/// Which workload `index bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// NOR: sequential inserts, Gaussian updates and queries, random deletes (section 0.6.3).
    Micro,
    /// NOR: a synthetic temperature stream, then range queries (section 0.6.4).
    Sensor,
    /// NAND: files created, then read and modified (the GRR paper's Table 4).
    Files,
}

/// The structure `index bench` builds: a NOR index, or the NAND B-tree on a storage scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StructureArg {
    /// A NOR-flash index.
    Nor(Structure),
    /// The NAND B-tree on In-Page Logging.
    Ipl,
    /// The NAND B-tree on GRR.
    Grr,
}

impl FromStr for StructureArg {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "ipl" => Ok(StructureArg::Ipl),
            "grr" => Ok(StructureArg::Grr),
            other => other.parse().map(StructureArg::Nor).map_err(|_| {
                format!(
                    "unknown structure {other:?} (expected fatlist, softlist, mutree, ipl or grr)"
                )
            }),
        }
    }
}

impl fmt::Display for StructureArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StructureArg::Nor(s) => s.fmt(f),
            StructureArg::Ipl => f.write_str("ipl"),
            StructureArg::Grr => f.write_str("grr"),
        }
    }
}

/// A read/write ratio such as `40/60`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadWrite {
    /// Reads, percent.
    pub read_percent: u32,
}

impl FromStr for ReadWrite {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{text:?} is not a read/write ratio such as 40/60 (two percentages summing to 100)"
            )
        };
        let (r, w) = text.split_once('/').ok_or_else(bad)?;
        let r: u32 = r.trim().parse().map_err(|_| bad())?;
        let w: u32 = w.trim().parse().map_err(|_| bad())?;
        if r + w != 100 {
            return Err(bad());
        }
        Ok(ReadWrite { read_percent: r })
    }
}

#[derive(Args, Debug, Clone)]
pub struct IndexBenchArgs {
    /// fatlist, softlist or mutree (NOR flash); ipl or grr (the B-tree on NAND flash).
    #[arg(long, default_value = "fatlist", value_name = "NAME")]
    pub structure: StructureArg,
    /// micro or sensor (NOR structures), files (ipl, grr) [default: micro; files for ipl
    /// and grr].
    #[arg(long, value_enum)]
    pub workload: Option<Workload>,
    /// Flash size: whole 64 KiB blocks of the K8C1215 NOR part, or whole 128 KiB blocks of
    /// the grr-paper NAND part [default: 8M for NOR, 64M for ipl and grr].
    #[arg(long, value_name = "SIZE")]
    pub capacity: Option<Size>,
    /// Micro: keys inserted sequentially.
    #[arg(long, default_value = "25000", value_name = "N")]
    pub keys: Count,
    /// Micro: Gaussian updates.
    #[arg(long, default_value = "800k", value_name = "N")]
    pub updates: Count,
    /// Micro: Gaussian queries.
    #[arg(long, default_value = "800k", value_name = "N")]
    pub queries: Count,
    /// Micro: standard deviation of the key distribution, a fraction of the key count.
    #[arg(long, default_value_t = 1.0 / 6.0, value_name = "FRACTION")]
    pub spread: f64,
    /// Micro: power cycles between updates and queries, to measure initialization.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub boot_trials: u32,
    /// Sensor: readings inserted (54 motes, one reading each every 31 s).
    #[arg(long, default_value = "200k", value_name = "N")]
    pub readings: Count,
    /// Sensor: range queries after insertion.
    #[arg(long, default_value = "1000", value_name = "N")]
    pub range_queries: Count,
    /// Sensor: widest range, in hundredths of a degree.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub max_range: u32,
    /// Lists: blocks per turnstile, the spare included.
    #[arg(long, default_value_t = 8, value_name = "BLOCKS")]
    pub turnstile: u32,
    /// Lists: maximum number of levels.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub levels: u32,
    /// Lists: probability of hooking on the next level.
    #[arg(long, default_value_t = 0.25, value_name = "P")]
    pub p: f64,
    /// Fat list: slots per object (m).
    #[arg(long, default_value_t = 40, value_name = "N")]
    pub slots: u32,
    /// Fat list: distinct keys per object before a split (n).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub key_limit: u32,
    /// Fat list: pointer pool entries [default: levels + 2].
    #[arg(long, value_name = "N")]
    pub pool: Option<u32>,
    /// Soft list: pointer slots per level.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub slots_per_level: u32,
    /// Mu-tree: page size.
    #[arg(long, default_value = "512", value_name = "SIZE")]
    pub page_size: Size,
    /// B-tree: buffer replacement policy, lru, cflru or cfsemi (clean first with a
    /// semi-clean state).
    #[arg(long, default_value = "cfsemi", value_name = "POLICY")]
    pub buffer: AnyReplacement,
    /// B-tree: buffer size (node images of one page and log sectors).
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub buffer_size: Size,
    /// B-tree: cold region of the clean-first buffers, a fraction of the buffer (w).
    #[arg(long, default_value_t = 0.5, value_name = "FRACTION")]
    pub window: f64,
    /// B-tree: in-memory log sector of a node.
    #[arg(long, default_value = "512", value_name = "SIZE")]
    pub sector: Size,
    /// GRR: blocks per index block set (m).
    #[arg(long, default_value_t = 8, value_name = "M")]
    pub set_blocks: u32,
    /// Log pages a block's log area starts with (k) [default: 1 for ipl, 4 for grr].
    #[arg(long, value_name = "K")]
    pub log_pages: Option<u32>,
    /// GRR: most log pages a log area grows to (l).
    #[arg(long, default_value_t = 8, value_name = "L")]
    pub log_limit: u32,
    /// GRR: adapt the log limit and the set size to the workload (docs/DESIGN.md).
    #[arg(long)]
    pub adaptive: bool,
    /// GRR: largest set the adaptive rules build.
    #[arg(long, default_value_t = 16, value_name = "M")]
    pub max_set_blocks: u32,
    /// Files workload: files created (nfc).
    #[arg(long, default_value = "5k", value_name = "N")]
    pub files: Count,
    /// Files workload: modifications per file (fmc); the mixed phase has files x fmc
    /// requests.
    #[arg(long, default_value_t = 4.0, value_name = "N")]
    pub fmc: f64,
    /// Files workload: read/write ratio of the mixed phase (RWR).
    #[arg(long, default_value = "40/60", value_name = "R/W")]
    pub rw: ReadWrite,
    /// Files workload: average write length (AWL), over 2 KiB file pages.
    #[arg(long, default_value = "16K", value_name = "SIZE")]
    pub awl: Size,
    /// Files workload: pages a read looks up (ARL).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub read_pages: u32,
    /// Seed of the workload and of the structure's random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include the wall-clock time in the JSON (which is otherwise identical for equal seeds).
    #[arg(long, requires = "json")]
    pub wall_clock_in_json: bool,
    /// Write the phase table as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl IndexBenchArgs {
    /// The NOR index to build.
    pub fn index_spec(&self, structure: Structure) -> Result<IndexSpec, Failure> {
        let page_bytes = u32::try_from(self.page_size.0).map_err(|_| {
            Failure::Usage(anyhow!("--page-size {} B is too large", self.page_size.0))
        })?;
        Ok(IndexSpec {
            structure,
            fat: FatListConfig {
                turnstile_blocks: self.turnstile,
                max_levels: self.levels,
                p: self.p,
                slots: self.slots,
                key_limit: self.key_limit,
                pool: self.pool.unwrap_or(self.levels + 2),
            },
            soft: SoftListConfig {
                turnstile_blocks: self.turnstile,
                max_levels: self.levels,
                p: self.p,
                slots_per_level: self.slots_per_level,
            },
            mu: MuTreeConfig { page_bytes },
            seed: self.seed,
        })
    }

    fn nor_capacity(&self) -> u64 {
        self.capacity.map_or(8 << 20, |c| c.0)
    }

    /// The NOR flash.
    pub fn geometry(&self) -> Result<NorGeometry, Failure> {
        NorPreset::K8C1215
            .geometry_with_capacity(self.nor_capacity())
            .map_err(|e| Failure::Usage(anyhow!("--capacity: {e}")))
    }

    /// The NAND B-tree to build.
    pub fn nand_spec(&self) -> Result<NandSpec, Failure> {
        let timing = NandPreset::GRR_PAPER.timing;
        let placement = match self.structure {
            StructureArg::Ipl => AnyPlacement::Ipl(Ipl {
                log_pages: self.log_pages.unwrap_or(1),
            }),
            _ => AnyPlacement::Grr(Grr {
                blocks_per_set: self.set_blocks,
                log_pages: self.log_pages.unwrap_or(4),
                log_limit: self.log_limit,
                adaptive: self.adaptive,
                max_blocks_per_set: self.max_set_blocks,
                timing,
            }),
        };
        check_placement(&placement)?;
        let sector = u32::try_from(self.sector.0)
            .map_err(|_| Failure::Usage(anyhow!("--sector {} B is too large", self.sector.0)))?;
        Ok(NandSpec {
            placement,
            replacement: self.buffer,
            buffer: BufferConfig {
                capacity_bytes: self.buffer_size.0,
                window: self.window,
                sector_bytes: sector,
            },
            geometry: nand_geometry(self.capacity.map_or(64 << 20, |c| c.0))?,
            timing,
            endurance_cycles: NandPreset::GRR_PAPER.endurance_cycles,
        })
    }

    /// The file workload of Table 4.
    pub fn file_workload(&self) -> Result<FileWorkload, Failure> {
        let files = u32::try_from(self.files.0)
            .map_err(|_| Failure::Usage(anyhow!("--files {} is too many", self.files.0)))?;
        let workload = FileWorkload {
            files,
            modification_coefficient: self.fmc,
            read_percent: self.rw.read_percent,
            avg_write_bytes: self.awl.0,
            read_pages: self.read_pages,
            seed: self.seed,
            ..FileWorkload::default()
        };
        workload
            .validate()
            .map_err(|e| Failure::Usage(anyhow!("workload: {e}")))?;
        Ok(workload)
    }

    fn key_count(&self) -> Result<u32, Failure> {
        u32::try_from(self.keys.0)
            .ok()
            .filter(|&k| k > 0)
            .ok_or_else(|| {
                Failure::Usage(anyhow!(
                    "--keys {} must be between 1 and 2^32 - 2",
                    self.keys.0
                ))
            })
    }
}

/// The grr-paper NAND part at `capacity` bytes (whole blocks, no over-provisioning: the
/// index manages every block itself).
pub fn nand_geometry(capacity: u64) -> Result<flashkit_core::Geometry, Failure> {
    flashkit_lab::repro::grr::nand_geometry(capacity).map_err(lab_failure)
}

/// Check the storage scheme's parameters: every one names its flag.
pub fn check_placement(placement: &AnyPlacement) -> Result<(), Failure> {
    let ppb = NandPreset::GRR_PAPER.pages_per_block;
    let bad = |what: String| Err(Failure::Usage(anyhow!(what)));
    match placement {
        AnyPlacement::Ipl(p) if p.log_pages == 0 || p.log_pages >= ppb => bad(format!(
            "--log-pages {} must leave room for data in a {ppb}-page block (1..{ppb})",
            p.log_pages
        )),
        AnyPlacement::Grr(g) if g.blocks_per_set == 0 || g.blocks_per_set > 1024 => bad(format!(
            "--set-blocks {} must be 1..=1024",
            g.blocks_per_set
        )),
        AnyPlacement::Grr(g) if g.log_pages == 0 || g.log_pages > g.log_limit => bad(format!(
            "--log-pages {} must be at least 1 and at most --log-limit {}",
            g.log_pages, g.log_limit
        )),
        AnyPlacement::Grr(g) if g.log_limit >= ppb => bad(format!(
            "--log-limit {} must leave room for data in a {ppb}-page block",
            g.log_limit
        )),
        AnyPlacement::Grr(g) if g.adaptive && g.max_blocks_per_set < g.blocks_per_set => {
            bad(format!(
                "--max-set-blocks {} is below --set-blocks {}",
                g.max_blocks_per_set, g.blocks_per_set
            ))
        }
        _ => Ok(()),
    }
}

/// Sort a B-tree error: bad parameters are usage errors, the rest runtime failures.
pub fn nand_failure(error: NandIndexError) -> Failure {
    lab_failure(flashkit_lab::repro::grr::nand_error(error))
}

/// Sort an index error: bad parameters are usage errors, the rest runtime failures.
pub fn index_failure(error: IndexError) -> Failure {
    match error {
        IndexError::Config { .. } | IndexError::KeyReserved { .. } => Failure::Usage(error.into()),
        other => Failure::Runtime(other.into()),
    }
}

#[derive(Serialize)]
struct BenchDocument<'a> {
    structure: Structure,
    spec: &'a IndexSpec,
    capacity_bytes: u64,
    phases: &'a [PhaseReport],
    boot_word_reads: Option<f64>,
    counters: Vec<(&'static str, u64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_seconds: Option<f64>,
}

pub fn run(command: IndexCommand, given: &[String]) -> Outcome {
    match command {
        IndexCommand::Bench(args) => {
            args.check_given(given)?;
            bench_command(&args)
        }
    }
}

impl IndexBenchArgs {
    /// Refuse options given on the command line that the structure, workload or buffer
    /// chosen would not read: `--slots` with the mu-tree, `--keys` with the sensor workload,
    /// `--window` with LRU. `given` holds the options' clap ids (their field names).
    pub fn check_given(&self, given: &[String]) -> Result<(), Failure> {
        let nor = matches!(self.structure, StructureArg::Nor(_));
        let nand = !nor;
        let is = |s: Structure| self.structure == StructureArg::Nor(s);
        let workload = self.workload.unwrap_or(if nor {
            Workload::Micro
        } else {
            Workload::Files
        });
        let structure = format!("--structure {}", self.structure);
        let workload_name = match workload {
            Workload::Micro => "--workload micro",
            Workload::Sensor => "--workload sensor",
            Workload::Files => "--workload files",
        };
        let buffer = format!("--buffer {}", self.buffer);
        // (options, whether they apply, what they are for, what was chosen instead)
        let rules: [(&[&str], bool, &str, &str); 11] = [
            (
                &["keys", "updates", "queries", "spread", "boot_trials"],
                nor && workload == Workload::Micro,
                "the micro workload",
                if nor { workload_name } else { &structure },
            ),
            (
                &["readings", "range_queries", "max_range"],
                nor && workload == Workload::Sensor,
                "the sensor workload",
                if nor { workload_name } else { &structure },
            ),
            (
                &["turnstile", "levels", "p"],
                is(Structure::FatList) || is(Structure::SoftList),
                "fatlist and softlist",
                &structure,
            ),
            (
                &["slots", "key_limit", "pool"],
                is(Structure::FatList),
                "fatlist",
                &structure,
            ),
            (
                &["slots_per_level"],
                is(Structure::SoftList),
                "softlist",
                &structure,
            ),
            (&["page_size"], is(Structure::MuTree), "mutree", &structure),
            (
                &["buffer", "buffer_size", "sector", "log_pages"],
                nand,
                "the NAND B-tree (ipl, grr)",
                &structure,
            ),
            (
                &["files", "fmc", "rw", "awl", "read_pages"],
                nand,
                "the files workload of ipl and grr",
                &structure,
            ),
            (
                &["window"],
                nand && self.buffer != AnyReplacement::Lru,
                "the clean-first buffers (cflru, cfsemi)",
                if nand { &buffer } else { &structure },
            ),
            (
                &["set_blocks", "log_limit", "adaptive"],
                self.structure == StructureArg::Grr,
                "grr",
                &structure,
            ),
            (
                &["max_set_blocks"],
                self.structure == StructureArg::Grr && self.adaptive,
                "grr --adaptive",
                if self.structure == StructureArg::Grr {
                    "grr without --adaptive"
                } else {
                    &structure
                },
            ),
        ];
        let mut problems = Vec::new();
        let mut count = 0;
        for (ids, applies, what, chosen) in rules {
            if applies {
                continue;
            }
            let names: Vec<String> = ids
                .iter()
                .filter(|id| given.iter().any(|g| g == *id))
                .map(|id| format!("--{}", id.replace('_', "-")))
                .collect();
            if !names.is_empty() {
                count += names.len();
                problems.push(flashkit_lab::config::unused_options(
                    &names,
                    &format!("{what}, not {chosen}"),
                ));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        Err(Failure::Usage(anyhow!(
            "{}: drop {}",
            problems.join("; "),
            if count == 1 { "it" } else { "them" }
        )))
    }
}

fn bench_command(args: &IndexBenchArgs) -> Outcome {
    crate::output::check_outputs(&[
        ("--json", args.json.as_deref()),
        ("--csv", args.csv.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    let structure = match args.structure {
        StructureArg::Nor(structure) => structure,
        StructureArg::Ipl | StructureArg::Grr => return nand_command(args),
    };
    let workload = args.workload.unwrap_or(Workload::Micro);
    if workload == Workload::Files {
        return Err(Failure::Usage(anyhow!(
            "--workload files is the NAND B-tree's (--structure ipl or grr), not {structure}'s"
        )));
    }
    let spec = args.index_spec(structure)?;
    let geometry = args.geometry()?;
    let timing = NorPreset::K8C1215.timing;
    let mut index = spec.build(geometry).map_err(index_failure)?;
    let started = Instant::now();
    let (phases, boot) = match workload {
        Workload::Micro => {
            let micro = MicroSpec {
                keys: args.key_count()?,
                updates: args.updates.0,
                queries: args.queries.0,
                spread: args.spread,
                boot_trials: args.boot_trials,
                seed: args.seed,
            };
            let report = bench::micro(index.as_mut(), timing, &micro).map_err(index_failure)?;
            (report.phases, report.boot_word_reads)
        }
        Workload::Sensor => {
            let sensor = SensorSpec {
                readings: args.readings.0,
                max_range: args.max_range,
                seed: args.seed,
                ..SensorSpec::default()
            };
            let report = bench::sensor(index.as_mut(), timing, &sensor, &[args.range_queries.0])
                .map_err(index_failure)?;
            (report.phases, None)
        }
        Workload::Files => unreachable!("refused above"),
    };
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{} on {} of NOR flash (K8C1215 timing: word read 110 ns, word write 80 us, erase 0.6 s), {:?} workload, seed {}",
        structure,
        format_size(args.nor_capacity()),
        workload,
        args.seed
    );
    let table = phase_table(&phases);
    print!("{}", table.render());
    if structure != Structure::MuTree {
        println!();
        print!("{}", probe_table(&phases).render());
    }
    if let Some(reads) = boot {
        println!(
            "\nboot-up initialization: {reads:.1} word reads on average ({:.2} us)",
            reads * 0.110
        );
    }
    let counters = index.stats().counters;
    let line: Vec<String> = counters.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("\nstructure: {}", line.join(", "));
    println!("wall clock: {wall:.2} s (simulation speed, not simulated time)");
    if let Some(path) = &args.json {
        let doc = BenchDocument {
            structure,
            spec: &spec,
            capacity_bytes: args.nor_capacity(),
            phases: &phases,
            boot_word_reads: boot,
            counters,
            wall_seconds: args.wall_clock_in_json.then_some(wall),
        };
        write_json(path, &doc)?;
    }
    if let Some(path) = &args.csv {
        write_csv(path, &table)?;
    }
    Ok(())
}

fn secs(x: f64) -> String {
    format!("{x:.3}")
}

/// Phases as rows: the lab's table, which `reproduce fatlist` prints too.
pub use flashkit_lab::repro::fatlist::phase_table;

/// Probe statistics per phase, per pointer visited as the paper's table gives them.
pub fn probe_table(phases: &[PhaseReport]) -> Table {
    let mut table = Table::new([
        "phase",
        "pointers visited",
        "total probes",
        "successful",
        "low",
        "over",
        "back",
        "null",
    ]);
    for p in phases {
        let s = &p.probes;
        let f = |n| format!("{:.3}", s.per_pointer(n));
        table.push([
            p.name.clone(),
            s.pointers_visited.to_string(),
            s.probes.to_string(),
            f(s.successful),
            f(s.low),
            f(s.over),
            f(s.back),
            f(s.null),
        ]);
    }
    table
}

#[derive(Serialize)]
struct NandDocument<'a> {
    spec: &'a NandSpec,
    workload: &'a FileWorkload,
    report: &'a NandReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_seconds: Option<f64>,
}

/// `index bench --structure ipl|grr`: the B-tree through the file workload.
fn nand_command(args: &IndexBenchArgs) -> Outcome {
    if let Some(w) = args.workload
        && w != Workload::Files
    {
        return Err(Failure::Usage(anyhow!(
            "--workload {} is a NOR benchmark; {} runs the files workload",
            clap::ValueEnum::to_possible_value(&w)
                .map_or_else(String::new, |v| v.get_name().to_string()),
            args.structure
        )));
    }
    let spec = args.nand_spec()?;
    let workload = args.file_workload()?;
    let started = Instant::now();
    let report = nand_bench::run(&spec, &workload).map_err(nand_failure)?;
    let wall = started.elapsed().as_secs_f64();
    println!(
        "B-tree on {} on {} of grr-paper NAND (2 KiB pages, 64 a block; read 80 us, program \
         200 us, erase 1.5 ms), {} buffer of {} ({}{} B log sectors); {} files, fmc {}, \
         R/W {}/{}, AWL {}; seed {}",
        report.scheme,
        format_size(spec.geometry.physical_bytes()),
        spec.replacement,
        format_size(spec.buffer.capacity_bytes),
        // The window is the clean-first buffers' (LRU has none).
        if args.buffer == AnyReplacement::Lru {
            String::new()
        } else {
            format!("w = {}, ", spec.buffer.window)
        },
        spec.buffer.sector_bytes,
        workload.files,
        workload.modification_coefficient,
        workload.read_percent,
        100 - workload.read_percent,
        format_size(workload.avg_write_bytes),
        workload.seed
    );
    let table = nand_phase_table(&report);
    print!("{}", table.render());
    let s = &report.space;
    println!(
        "\nspace: {} blocks in use ({}), peak {}; {} live nodes, {:.1}% of their pages",
        s.blocks_in_use,
        format_size(s.bytes_in_use),
        s.peak_blocks_in_use,
        s.live_nodes,
        100.0 * s.utilization
    );
    let t = &report.tree;
    let st = &report.total.store;
    println!(
        "tree: {} keys, height {}; {} leaf and {} inner splits, {} borrows, {} node merges",
        report.keys, report.height, t.leaf_splits, t.inner_splits, t.borrows, t.node_merges
    );
    println!(
        "storage: {} block merges ({} at the log limit, {} for room, {} spread), {} log areas \
         grown, {} sets opened, {} log pages read by fetches",
        st.merges,
        st.merges_at_limit,
        st.merges_for_room,
        st.spread_merges,
        st.log_area_grows,
        st.sets_opened,
        st.fetch_log_pages
    );
    println!("wall clock: {wall:.2} s (simulation speed, not simulated time)");
    if let Some(path) = &args.json {
        let doc = NandDocument {
            spec: &spec,
            workload: &workload,
            report: &report,
            wall_seconds: args.wall_clock_in_json.then_some(wall),
        };
        write_json(path, &doc)?;
    }
    if let Some(path) = &args.csv {
        write_csv(path, &table)?;
    }
    Ok(())
}

/// The B-tree run's phases as rows.
pub fn nand_phase_table(report: &NandReport) -> Table {
    let mut table = Table::new([
        "phase",
        "requests",
        "gets",
        "puts",
        "page reads",
        "programs",
        "erases",
        "merge copies",
        "hit ratio",
        "read s",
        "write s",
        "erase s",
        "total s",
    ]);
    for p in report.phases.iter().chain(std::iter::once(&report.total)) {
        let c = &p.counters;
        table.push([
            p.name.clone(),
            p.requests.to_string(),
            p.gets.to_string(),
            p.puts.to_string(),
            c.reads.total().to_string(),
            c.programs.total().to_string(),
            c.erases.total().to_string(),
            p.page_copies().to_string(),
            format!("{:.3}", p.hit_ratio()),
            secs(p.time.read_s),
            secs(p.time.write_s),
            secs(p.time.erase_s),
            secs(p.time.total_s()),
        ]);
    }
    table
}
