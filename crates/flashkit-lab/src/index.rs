//! One flash index through a benchmark: a NOR-flash index (fat list, soft list or mu-tree)
//! through the fat-list paper's micro-benchmark or the sensor macro-benchmark, with the
//! simulated time of each phase split into reads, writes and erases; or the NAND B-tree
//! over In-Page Logging or GRR storage through the GRR paper's file workload (Table 4),
//! with page reads, programs, erases, merge copies, the buffer hit ratio and space used.
//!
//! [`IndexBenchSpec`] says what to run (its defaults are the benchmarks' own); [`run`]
//! returns an [`IndexBench`]: the text and tables a front end prints, the phase table it
//! saves as CSV, and the JSON document.

use crate::repro::grr::{nand_error, nand_geometry};
use crate::repro::{Document, LabError, Printed, Printer};
use flashkit_core::NandPreset;
use flashkit_core::units::format_size;
use flashkit_device::{NorGeometry, NorPreset};
use flashkit_index::nand::bench::{self as nand_bench, NandReport, NandSpec};
use flashkit_index::nand::workload::FileWorkload;
use flashkit_index::nand::{AnyPlacement, AnyReplacement, BufferConfig, Grr, Ipl};
use flashkit_index::nor::bench::{self, IndexSpec, MicroSpec, PhaseReport, SensorSpec, Structure};
use flashkit_index::nor::{FatListConfig, IndexError, MuTreeConfig, SoftListConfig};
use flashkit_report::Table;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// The structure a benchmark builds: a NOR index, or the NAND B-tree on a storage scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexStructure {
    /// A NOR-flash index.
    Nor(Structure),
    /// The NAND B-tree on In-Page Logging.
    Ipl,
    /// The NAND B-tree on GRR.
    Grr,
}

impl IndexStructure {
    /// Whether this is the NAND B-tree (ipl or grr).
    pub fn is_nand(self) -> bool {
        !matches!(self, IndexStructure::Nor(_))
    }
}

impl FromStr for IndexStructure {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "ipl" => Ok(IndexStructure::Ipl),
            "grr" => Ok(IndexStructure::Grr),
            other => other.parse().map(IndexStructure::Nor).map_err(|_| {
                format!(
                    "unknown structure {other:?} (expected fatlist, softlist, mutree, ipl or grr)"
                )
            }),
        }
    }
}

impl fmt::Display for IndexStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexStructure::Nor(s) => s.fmt(f),
            IndexStructure::Ipl => f.write_str("ipl"),
            IndexStructure::Grr => f.write_str("grr"),
        }
    }
}

/// Which workload a benchmark runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexWorkload {
    /// NOR: sequential inserts, Gaussian updates and queries, random deletes (section 0.6.3
    /// of the fat-list paper).
    Micro,
    /// NOR: a synthetic temperature stream, then range queries (section 0.6.4).
    Sensor,
    /// NAND: files created, then read and modified (the GRR paper's Table 4).
    Files,
}

impl IndexWorkload {
    /// Its name (`micro`, `sensor`, `files`).
    pub fn name(self) -> &'static str {
        match self {
            IndexWorkload::Micro => "micro",
            IndexWorkload::Sensor => "sensor",
            IndexWorkload::Files => "files",
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

impl fmt::Display for ReadWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.read_percent, 100 - self.read_percent)
    }
}

/// Text-form (de)serialization of the spec's enumerations and ratios.
macro_rules! serde_as_text {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}
serde_as_text!(IndexStructure, ReadWrite);

/// One benchmark run: the structure, its parameters, the workload and its parameters.
/// Each field is named as the option that sets it (`buffer_size`, `--buffer-size`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexBenchSpec {
    /// The structure.
    pub structure: IndexStructure,
    /// The workload [default: micro for NOR structures, files for ipl and grr].
    pub workload: Option<IndexWorkload>,
    /// Flash bytes [default: 8 MiB of NOR, 64 MiB of NAND].
    pub capacity: Option<u64>,
    /// Micro: keys inserted sequentially.
    pub keys: u64,
    /// Micro: Gaussian updates.
    pub updates: u64,
    /// Micro: Gaussian queries.
    pub queries: u64,
    /// Micro: standard deviation of the key distribution, a fraction of the key count.
    pub spread: f64,
    /// Micro: power cycles between updates and queries.
    pub boot_trials: u32,
    /// Sensor: readings inserted.
    pub readings: u64,
    /// Sensor: range queries after insertion.
    pub range_queries: u64,
    /// Sensor: widest range, in hundredths of a degree.
    pub max_range: u32,
    /// Lists: blocks per turnstile, the spare included.
    pub turnstile: u32,
    /// Lists: maximum number of levels.
    pub levels: u32,
    /// Lists: probability of hooking on the next level.
    pub p: f64,
    /// Fat list: slots per object (m).
    pub slots: u32,
    /// Fat list: distinct keys per object before a split (n).
    pub key_limit: u32,
    /// Fat list: pointer pool entries [default: levels + 2].
    pub pool: Option<u32>,
    /// Soft list: pointer slots per level.
    pub slots_per_level: u32,
    /// Mu-tree: page bytes.
    pub page_size: u64,
    /// B-tree: buffer replacement policy.
    pub buffer: AnyReplacement,
    /// B-tree: buffer bytes.
    pub buffer_size: u64,
    /// B-tree: cold region of the clean-first buffers, a fraction of the buffer (w).
    pub window: f64,
    /// B-tree: bytes of a node's in-memory log sector.
    pub sector: u64,
    /// GRR: blocks per index block set (m).
    pub set_blocks: u32,
    /// Log pages a block's log area starts with (k) [default: 1 for ipl, 4 for grr].
    pub log_pages: Option<u32>,
    /// GRR: most log pages a log area grows to (l).
    pub log_limit: u32,
    /// GRR: adapt the log limit and the set size to the workload.
    pub adaptive: bool,
    /// GRR: largest set the adaptive rules build.
    pub max_set_blocks: u32,
    /// Files workload: files created (nfc).
    pub files: u64,
    /// Files workload: modifications per file (fmc).
    pub fmc: f64,
    /// Files workload: read/write ratio of the mixed phase (RWR).
    pub rw: ReadWrite,
    /// Files workload: average write length in bytes (AWL).
    pub awl: u64,
    /// Files workload: pages a read looks up (ARL).
    pub read_pages: u32,
    /// Seed of the workload and of the structure's random choices.
    pub seed: u64,
}

impl Default for IndexBenchSpec {
    fn default() -> Self {
        IndexBenchSpec {
            structure: IndexStructure::Nor(Structure::FatList),
            workload: None,
            capacity: None,
            keys: 25_000,
            updates: 800_000,
            queries: 800_000,
            spread: 1.0 / 6.0,
            boot_trials: 0,
            readings: 200_000,
            range_queries: 1000,
            max_range: 100,
            turnstile: 8,
            levels: 5,
            p: 0.25,
            slots: 40,
            key_limit: 20,
            pool: None,
            slots_per_level: 2,
            page_size: 512,
            buffer: AnyReplacement::CfSemi,
            buffer_size: 128 << 10,
            window: 0.5,
            sector: 512,
            set_blocks: 8,
            log_pages: None,
            log_limit: 8,
            adaptive: false,
            max_set_blocks: 16,
            files: 5000,
            fmc: 4.0,
            rw: ReadWrite { read_percent: 40 },
            awl: 16 << 10,
            read_pages: 1,
            seed: 1,
        }
    }
}

/// The fields a spec sets that its structure, workload or buffer would not read (`slots`
/// with the mu-tree, `keys` with the sensor workload, `window` with LRU): each rule is the
/// fields, whether they apply, what they are for, and what was chosen instead.
type Rule<'a> = (&'static [&'static str], bool, &'static str, String);

impl IndexBenchSpec {
    /// The workload run: the one given, or the structure's own.
    pub fn workload(&self) -> IndexWorkload {
        self.workload.unwrap_or(if self.structure.is_nand() {
            IndexWorkload::Files
        } else {
            IndexWorkload::Micro
        })
    }

    /// The rules of [`IndexBenchSpec::unused`], a declarative table.
    fn rules(&self) -> [Rule<'_>; 11] {
        let nor = !self.structure.is_nand();
        let nand = !nor;
        let is = |s: Structure| self.structure == IndexStructure::Nor(s);
        let workload = self.workload();
        let structure = format!("`structure` {}", self.structure);
        let workload_name = format!("`workload` {}", workload.name());
        let chosen_workload = if nor {
            workload_name.clone()
        } else {
            structure.clone()
        };
        let grr = self.structure == IndexStructure::Grr;
        [
            (
                &["keys", "updates", "queries", "spread", "boot_trials"],
                nor && workload == IndexWorkload::Micro,
                "the micro workload",
                chosen_workload.clone(),
            ),
            (
                &["readings", "range_queries", "max_range"],
                nor && workload == IndexWorkload::Sensor,
                "the sensor workload",
                chosen_workload,
            ),
            (
                &["turnstile", "levels", "p"],
                is(Structure::FatList) || is(Structure::SoftList),
                "fatlist and softlist",
                structure.clone(),
            ),
            (
                &["slots", "key_limit", "pool"],
                is(Structure::FatList),
                "fatlist",
                structure.clone(),
            ),
            (
                &["slots_per_level"],
                is(Structure::SoftList),
                "softlist",
                structure.clone(),
            ),
            (
                &["page_size"],
                is(Structure::MuTree),
                "mutree",
                structure.clone(),
            ),
            (
                &["buffer", "buffer_size", "sector", "log_pages"],
                nand,
                "the NAND B-tree (ipl, grr)",
                structure.clone(),
            ),
            (
                &["files", "fmc", "rw", "awl", "read_pages"],
                nand,
                "the files workload of ipl and grr",
                structure.clone(),
            ),
            (
                &["window"],
                nand && self.buffer != AnyReplacement::Lru,
                "the clean-first buffers (cflru, cfsemi)",
                if nand {
                    format!("`buffer` {}", self.buffer)
                } else {
                    structure.clone()
                },
            ),
            (
                &["set_blocks", "log_limit", "adaptive"],
                grr,
                "grr",
                structure.clone(),
            ),
            (
                &["max_set_blocks"],
                grr && self.adaptive,
                "grr `adaptive`",
                if grr {
                    "grr without `adaptive`".to_string()
                } else {
                    structure
                },
            ),
        ]
    }

    /// Refuse fields that were `given` (set by the user, by field name) but that the
    /// structure, workload or buffer chosen would not read: one [`Unused`] for each rule
    /// broken, in the rules' order.
    pub fn unused(&self, given: &[&str]) -> Vec<Unused> {
        self.rules()
            .into_iter()
            .filter(|(_, applies, _, _)| !applies)
            .filter_map(|(fields, _, what, chosen)| {
                let fields: Vec<&'static str> = fields
                    .iter()
                    .copied()
                    .filter(|f| given.contains(f))
                    .collect();
                (!fields.is_empty()).then_some(Unused {
                    fields,
                    what,
                    chosen,
                })
            })
            .collect()
    }
}

/// Fields given that the run would not read, with what they are for and what was chosen
/// instead (fields in backquotes, as [`LabError::Spec`] names them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unused {
    /// The fields given.
    pub fields: Vec<&'static str>,
    /// What they are for ("the micro workload").
    pub what: &'static str,
    /// What was chosen instead ("`structure` mutree").
    pub chosen: String,
}

/// What a benchmark returns: what a front end prints, the phase table it saves as CSV, and
/// the JSON document's data.
#[derive(Clone, Debug)]
pub struct IndexBench {
    /// The heading, tables and summary lines, in order.
    pub printed: Vec<Printed>,
    /// The phase table (the CSV output).
    pub phases: Table,
    /// Wall-clock seconds of the run (simulation speed, not simulated time).
    pub wall_seconds: f64,
    report: Ran,
}

#[derive(Clone, Debug)]
enum Ran {
    Nor {
        structure: Structure,
        spec: IndexSpec,
        capacity_bytes: u64,
        phases: Vec<PhaseReport>,
        boot_word_reads: Option<f64>,
        counters: Vec<(&'static str, u64)>,
        state_hash: String,
    },
    Nand {
        spec: Box<NandSpec>,
        workload: FileWorkload,
        report: Box<NandReport>,
    },
}

#[derive(Serialize)]
struct NorDocument<'a> {
    structure: Structure,
    spec: &'a IndexSpec,
    capacity_bytes: u64,
    phases: &'a [PhaseReport],
    boot_word_reads: Option<f64>,
    counters: &'a [(&'static str, u64)],
    state_hash: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_seconds: Option<f64>,
}

#[derive(Serialize)]
struct NandDocument<'a> {
    spec: &'a NandSpec,
    workload: &'a FileWorkload,
    report: &'a NandReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_seconds: Option<f64>,
}

impl IndexBench {
    /// The JSON document: the spec, the phases and the counters; the wall-clock time too
    /// when `wall_clock` (otherwise equal seeds give equal documents).
    pub fn document(&self, wall_clock: bool) -> Document {
        let wall_seconds = wall_clock.then_some(self.wall_seconds);
        match &self.report {
            Ran::Nor {
                structure,
                spec,
                capacity_bytes,
                phases,
                boot_word_reads,
                counters,
                state_hash,
            } => Document::of(
                "bench.json",
                &NorDocument {
                    structure: *structure,
                    spec,
                    capacity_bytes: *capacity_bytes,
                    phases,
                    boot_word_reads: *boot_word_reads,
                    counters,
                    state_hash,
                    wall_seconds,
                },
            ),
            Ran::Nand {
                spec,
                workload,
                report,
            } => Document::of(
                "bench.json",
                &NandDocument {
                    spec,
                    workload,
                    report,
                    wall_seconds,
                },
            ),
        }
    }
}

/// Run the benchmark `spec` describes.
pub fn run(spec: &IndexBenchSpec) -> Result<IndexBench, LabError> {
    let workload = spec.workload();
    match spec.structure {
        IndexStructure::Nor(_) if workload == IndexWorkload::Files => Err(LabError::spec(
            "workload",
            format!(
                "files is the NAND B-tree's (`structure` ipl or grr), not {}'s",
                spec.structure
            ),
        )),
        IndexStructure::Nor(structure) => run_nor(spec, structure, workload),
        IndexStructure::Ipl | IndexStructure::Grr if workload != IndexWorkload::Files => {
            Err(LabError::spec(
                "workload",
                format!(
                    "{} is a NOR benchmark; {} runs the files workload",
                    workload.name(),
                    spec.structure
                ),
            ))
        }
        IndexStructure::Ipl | IndexStructure::Grr => run_nand(spec),
    }
}

/// Sort an index error: bad parameters are configuration errors, the rest failed runs.
pub fn index_error(error: IndexError) -> LabError {
    match error {
        IndexError::Config { .. } | IndexError::KeyReserved { .. } => {
            LabError::Config(error.into())
        }
        other => LabError::Run(other.into()),
    }
}

fn nor_capacity(spec: &IndexBenchSpec) -> u64 {
    spec.capacity.unwrap_or(8 << 20)
}

/// The NOR index `spec` builds.
fn index_spec(spec: &IndexBenchSpec, structure: Structure) -> Result<IndexSpec, LabError> {
    let page_bytes = u32::try_from(spec.page_size)
        .map_err(|_| LabError::spec("page_size", format!("{} B is too large", spec.page_size)))?;
    Ok(IndexSpec {
        structure,
        fat: FatListConfig {
            turnstile_blocks: spec.turnstile,
            max_levels: spec.levels,
            p: spec.p,
            slots: spec.slots,
            key_limit: spec.key_limit,
            pool: spec.pool.unwrap_or(spec.levels + 2),
        },
        soft: SoftListConfig {
            turnstile_blocks: spec.turnstile,
            max_levels: spec.levels,
            p: spec.p,
            slots_per_level: spec.slots_per_level,
        },
        mu: MuTreeConfig { page_bytes },
        seed: spec.seed,
    })
}

fn nor_geometry(spec: &IndexBenchSpec) -> Result<NorGeometry, LabError> {
    NorPreset::K8C1215
        .geometry_with_capacity(nor_capacity(spec))
        .map_err(|e| {
            LabError::spec(
                "capacity",
                format!(
                    "{} is not a NOR capacity here ({e})",
                    format_size(nor_capacity(spec))
                ),
            )
        })
}

fn run_nor(
    spec: &IndexBenchSpec,
    structure: Structure,
    workload: IndexWorkload,
) -> Result<IndexBench, LabError> {
    let index_spec = index_spec(spec, structure)?;
    let geometry = nor_geometry(spec)?;
    let timing = NorPreset::K8C1215.timing;
    let mut index = index_spec.build(geometry).map_err(index_error)?;
    let started = Instant::now();
    let (phases, boot_word_reads, state_hash) = if workload == IndexWorkload::Micro {
        let keys = u32::try_from(spec.keys)
            .ok()
            .filter(|&k| k > 0)
            .ok_or_else(|| {
                LabError::spec(
                    "keys",
                    format!("{} must be between 1 and 2^32 - 2", spec.keys),
                )
            })?;
        let micro = MicroSpec {
            keys,
            updates: spec.updates,
            queries: spec.queries,
            spread: spec.spread,
            boot_trials: spec.boot_trials,
            seed: spec.seed,
        };
        let report = bench::micro(index.as_mut(), timing, &micro).map_err(index_error)?;
        (report.phases, report.boot_word_reads, report.state_hash)
    } else {
        let sensor = SensorSpec {
            readings: spec.readings,
            max_range: spec.max_range,
            seed: spec.seed,
            ..SensorSpec::default()
        };
        let report = bench::sensor(index.as_mut(), timing, &sensor, &[spec.range_queries])
            .map_err(index_error)?;
        (report.phases, None, report.state_hash)
    };
    let wall_seconds = started.elapsed().as_secs_f64();
    let counters = index.stats().counters;
    let mut out = Printer::default();
    out.line(format!(
        "{} on {} of NOR flash (K8C1215 timing: word read 110 ns, word write 80 us, erase 0.6 s), {} workload, seed {}",
        structure,
        format_size(nor_capacity(spec)),
        if workload == IndexWorkload::Micro { "Micro" } else { "Sensor" },
        spec.seed
    ));
    let table = crate::repro::fatlist::phase_table(&phases);
    out.table(table.clone());
    if structure != Structure::MuTree {
        out.line("");
        out.table(probe_table(&phases));
    }
    if let Some(reads) = boot_word_reads {
        out.line(format!(
            "\nboot-up initialization: {reads:.1} word reads on average ({:.2} us)",
            reads * 0.110
        ));
    }
    let line: Vec<String> = counters.iter().map(|(k, v)| format!("{k} {v}")).collect();
    out.line(format!("\nstructure: {}", line.join(", ")));
    out.line(format!("state hash: {state_hash}"));
    Ok(IndexBench {
        printed: out.into_printed(),
        phases: table,
        wall_seconds,
        report: Ran::Nor {
            structure,
            spec: index_spec,
            capacity_bytes: nor_capacity(spec),
            phases,
            boot_word_reads,
            counters,
            state_hash,
        },
    })
}

/// Check the storage scheme's parameters: every error names its field.
pub fn check_placement(placement: &AnyPlacement) -> Result<(), LabError> {
    let ppb = NandPreset::GRR_PAPER.pages_per_block;
    let bad = |field, what: String| Err(LabError::spec(field, what));
    match placement {
        AnyPlacement::Ipl(p) if p.log_pages == 0 || p.log_pages >= ppb => bad(
            "log_pages",
            format!(
                "{} must leave room for data in a {ppb}-page block (1..{ppb})",
                p.log_pages
            ),
        ),
        AnyPlacement::Grr(g) if g.blocks_per_set == 0 || g.blocks_per_set > 1024 => bad(
            "set_blocks",
            format!("{} must be 1..=1024", g.blocks_per_set),
        ),
        AnyPlacement::Grr(g) if g.log_pages == 0 || g.log_pages > g.log_limit => bad(
            "log_pages",
            format!(
                "{} must be at least 1 and at most `log_limit` {}",
                g.log_pages, g.log_limit
            ),
        ),
        AnyPlacement::Grr(g) if g.log_limit >= ppb => bad(
            "log_limit",
            format!(
                "{} must leave room for data in a {ppb}-page block",
                g.log_limit
            ),
        ),
        AnyPlacement::Grr(g) if g.adaptive && g.max_blocks_per_set < g.blocks_per_set => bad(
            "max_set_blocks",
            format!(
                "{} is below `set_blocks` {}",
                g.max_blocks_per_set, g.blocks_per_set
            ),
        ),
        _ => Ok(()),
    }
}

/// The NAND B-tree `spec` builds.
fn nand_spec(spec: &IndexBenchSpec) -> Result<NandSpec, LabError> {
    let timing = NandPreset::GRR_PAPER.timing;
    let placement = match spec.structure {
        IndexStructure::Ipl => AnyPlacement::Ipl(Ipl {
            log_pages: spec.log_pages.unwrap_or(1),
        }),
        _ => AnyPlacement::Grr(Grr {
            blocks_per_set: spec.set_blocks,
            log_pages: spec.log_pages.unwrap_or(4),
            log_limit: spec.log_limit,
            adaptive: spec.adaptive,
            max_blocks_per_set: spec.max_set_blocks,
            timing,
        }),
    };
    check_placement(&placement)?;
    let sector = u32::try_from(spec.sector)
        .map_err(|_| LabError::spec("sector", format!("{} B is too large", spec.sector)))?;
    Ok(NandSpec {
        placement,
        replacement: spec.buffer,
        buffer: BufferConfig {
            capacity_bytes: spec.buffer_size,
            window: spec.window,
            sector_bytes: sector,
        },
        geometry: nand_geometry(spec.capacity.unwrap_or(64 << 20))?,
        timing,
        endurance_cycles: NandPreset::GRR_PAPER.endurance_cycles,
    })
}

/// The file workload of the GRR paper's Table 4 `spec` describes.
fn file_workload(spec: &IndexBenchSpec) -> Result<FileWorkload, LabError> {
    let files = u32::try_from(spec.files)
        .map_err(|_| LabError::spec("files", format!("{} is too many", spec.files)))?;
    let workload = FileWorkload {
        files,
        modification_coefficient: spec.fmc,
        read_percent: spec.rw.read_percent,
        avg_write_bytes: spec.awl,
        read_pages: spec.read_pages,
        seed: spec.seed,
        ..FileWorkload::default()
    };
    workload
        .validate()
        .map_err(|e| LabError::Config(format!("workload: {e}").into()))?;
    Ok(workload)
}

fn run_nand(spec: &IndexBenchSpec) -> Result<IndexBench, LabError> {
    let nand = nand_spec(spec)?;
    let workload = file_workload(spec)?;
    let started = Instant::now();
    let report = nand_bench::run(&nand, &workload).map_err(nand_error)?;
    let wall_seconds = started.elapsed().as_secs_f64();
    let mut out = Printer::default();
    out.line(format!(
        "B-tree on {} on {} of grr-paper NAND (2 KiB pages, 64 a block; read 80 us, program \
         200 us, erase 1.5 ms), {} buffer of {} ({}{} B log sectors); {} files, fmc {}, \
         R/W {}/{}, AWL {}; seed {}",
        report.scheme,
        format_size(nand.geometry.physical_bytes()),
        nand.replacement,
        format_size(nand.buffer.capacity_bytes),
        // The window is the clean-first buffers' (LRU has none).
        if spec.buffer == AnyReplacement::Lru {
            String::new()
        } else {
            format!("w = {}, ", nand.buffer.window)
        },
        nand.buffer.sector_bytes,
        workload.files,
        workload.modification_coefficient,
        workload.read_percent,
        100 - workload.read_percent,
        format_size(workload.avg_write_bytes),
        workload.seed
    ));
    let table = nand_phase_table(&report);
    out.table(table.clone());
    nand_summary(&mut out, &report);
    Ok(IndexBench {
        printed: out.into_printed(),
        phases: table,
        wall_seconds,
        report: Ran::Nand {
            spec: Box::new(nand),
            workload,
            report: Box::new(report),
        },
    })
}

/// The B-tree run's space, tree and storage lines.
fn nand_summary(out: &mut Printer, report: &NandReport) {
    let s = &report.space;
    out.line(format!(
        "\nspace: {} blocks in use ({}), peak {}; {} live nodes, {:.1}% of their pages",
        s.blocks_in_use,
        format_size(s.bytes_in_use),
        s.peak_blocks_in_use,
        s.live_nodes,
        100.0 * s.utilization
    ));
    let t = &report.tree;
    let st = &report.total.store;
    out.line(format!(
        "tree: {} keys, height {}; {} leaf and {} inner splits, {} borrows, {} node merges",
        report.keys, report.height, t.leaf_splits, t.inner_splits, t.borrows, t.node_merges
    ));
    out.line(format!(
        "storage: {} block merges ({} at the log limit, {} for room, {} spread), {} log areas \
         grown, {} sets opened, {} log pages read by fetches",
        st.merges,
        st.merges_at_limit,
        st.merges_for_room,
        st.spread_merges,
        st.log_area_grows,
        st.sets_opened,
        st.fetch_log_pages
    ));
    out.line(format!("state hash: {}", report.state_hash));
}

fn secs(x: f64) -> String {
    format!("{x:.3}")
}

/// Probe statistics per phase, per pointer visited as the fat-list paper's table gives
/// them.
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

/// The B-tree run's phases as rows, with the whole run last.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn small_micro() -> IndexBenchSpec {
        IndexBenchSpec {
            capacity: Some(1 << 20),
            keys: 300,
            updates: 600,
            queries: 600,
            ..IndexBenchSpec::default()
        }
    }

    #[test]
    fn a_spec_round_trips_through_json_and_refuses_unknown_fields() {
        let spec = IndexBenchSpec {
            structure: IndexStructure::Grr,
            rw: ReadWrite { read_percent: 70 },
            buffer: AnyReplacement::Lru,
            ..IndexBenchSpec::default()
        };
        let json = serde_json::to_string(&spec).expect("valid");
        assert!(json.contains(r#""structure":"grr""#) && json.contains(r#""rw":"70/30""#));
        let back: IndexBenchSpec = serde_json::from_str(&json).expect("valid");
        assert_eq!(back, spec);
        let error = serde_json::from_str::<IndexBenchSpec>(r#"{"slotz": 3}"#).expect_err("refused");
        assert!(
            error.to_string().contains("unknown field `slotz`"),
            "{error}"
        );
        let error =
            serde_json::from_str::<IndexBenchSpec>(r#"{"rw": "50/60"}"#).expect_err("refused");
        assert!(error.to_string().contains("read/write ratio"), "{error}");
    }

    /// A NOR structure reads the fields of the workload it runs, micro or sensor, and names
    /// that workload when refusing the other's.
    #[test]
    fn a_nor_run_refuses_the_other_workloads_fields_by_name() {
        let names: Vec<&str> = [
            IndexWorkload::Micro,
            IndexWorkload::Sensor,
            IndexWorkload::Files,
        ]
        .into_iter()
        .map(IndexWorkload::name)
        .collect();
        assert_eq!(names, ["micro", "sensor", "files"]);
        let micro = IndexBenchSpec {
            structure: IndexStructure::Nor(Structure::MuTree),
            ..IndexBenchSpec::default()
        };
        let sensor = IndexBenchSpec {
            workload: Some(IndexWorkload::Sensor),
            ..micro.clone()
        };
        let given = ["keys", "readings"];
        let refused = |spec: &IndexBenchSpec| {
            spec.unused(&given)
                .into_iter()
                .map(|u| (u.fields, u.what, u.chosen))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            refused(&micro),
            [(
                vec!["readings"],
                "the sensor workload",
                "`workload` micro".to_string()
            )]
        );
        assert_eq!(
            refused(&sensor),
            [(
                vec!["keys"],
                "the micro workload",
                "`workload` sensor".to_string()
            )]
        );
    }

    #[test]
    fn fields_the_run_would_not_read_are_named_with_what_they_are_for() {
        let spec = IndexBenchSpec {
            structure: IndexStructure::Nor(Structure::MuTree),
            ..IndexBenchSpec::default()
        };
        assert_eq!(spec.unused(&["keys", "page_size", "seed"]), vec![]);
        let unused = spec.unused(&["slots", "turnstile", "window", "pool"]);
        let fields: Vec<_> = unused.iter().map(|u| u.fields.clone()).collect();
        assert_eq!(
            fields,
            vec![vec!["turnstile"], vec!["slots", "pool"], vec!["window"]]
        );
        assert_eq!(unused[1].what, "fatlist");
        assert_eq!(unused[1].chosen, "`structure` mutree");
        let grr = IndexBenchSpec {
            structure: IndexStructure::Grr,
            buffer: AnyReplacement::Lru,
            ..IndexBenchSpec::default()
        };
        let unused = grr.unused(&["window", "max_set_blocks", "keys"]);
        let chosen: Vec<_> = unused.iter().map(|u| u.chosen.as_str()).collect();
        assert_eq!(
            chosen,
            ["`structure` grr", "`buffer` lru", "grr without `adaptive`"]
        );
    }

    /// Every field the rules name is read by exactly the structures, workloads and buffers
    /// the rules say, written out here by hand for each kind of run.
    #[test]
    fn each_kind_of_run_accepts_exactly_its_own_fields() {
        let micro = ["keys", "updates", "queries", "spread", "boot_trials"];
        let sensor = ["readings", "range_queries", "max_range"];
        let lists = ["turnstile", "levels", "p"];
        let fat = ["slots", "key_limit", "pool"];
        let nand = [
            "buffer",
            "buffer_size",
            "sector",
            "log_pages",
            "files",
            "fmc",
            "rw",
            "awl",
            "read_pages",
        ];
        let grr = ["set_blocks", "log_limit", "adaptive"];
        let all: Vec<&str> = [
            &micro[..],
            &sensor,
            &lists,
            &fat,
            &["slots_per_level", "page_size"],
            &nand,
            &["window"],
            &grr,
            &["max_set_blocks"],
        ]
        .concat();
        let nor = |s: Structure, w: IndexWorkload| IndexBenchSpec {
            structure: IndexStructure::Nor(s),
            workload: Some(w),
            ..IndexBenchSpec::default()
        };
        let nand_spec =
            |structure: IndexStructure, buffer: AnyReplacement, adaptive: bool| IndexBenchSpec {
                structure,
                buffer,
                adaptive,
                ..IndexBenchSpec::default()
            };
        let cases: Vec<(IndexBenchSpec, Vec<&str>)> = vec![
            (
                nor(Structure::MuTree, IndexWorkload::Micro),
                [&micro[..], &["page_size"]].concat(),
            ),
            (
                nor(Structure::FatList, IndexWorkload::Micro),
                [&micro[..], &lists, &fat].concat(),
            ),
            (
                nor(Structure::SoftList, IndexWorkload::Sensor),
                [&sensor[..], &lists, &["slots_per_level"]].concat(),
            ),
            (
                nor(Structure::MuTree, IndexWorkload::Sensor),
                [&sensor[..], &["page_size"]].concat(),
            ),
            (
                nand_spec(IndexStructure::Ipl, AnyReplacement::Lru, false),
                nand.to_vec(),
            ),
            (
                nand_spec(IndexStructure::Ipl, AnyReplacement::Cflru, false),
                [&nand[..], &["window"]].concat(),
            ),
            (
                nand_spec(IndexStructure::Grr, AnyReplacement::Lru, false),
                [&nand[..], &grr].concat(),
            ),
            (
                nand_spec(IndexStructure::Grr, AnyReplacement::CfSemi, true),
                [&nand[..], &["window"], &grr, &["max_set_blocks"]].concat(),
            ),
        ];
        for (spec, accepted) in cases {
            let refused: Vec<&str> = spec
                .unused(&all)
                .into_iter()
                .flat_map(|u| u.fields)
                .collect();
            let read: Vec<&str> = all
                .iter()
                .copied()
                .filter(|f| !refused.contains(f))
                .collect();
            let mut accepted = accepted;
            accepted.sort_by_key(|f| all.iter().position(|a| a == f));
            assert_eq!(read, accepted, "{} {:?}", spec.structure, spec.workload);
        }
    }

    /// A sensor run is the benchmark's own run of the spec's readings, range and seed: the
    /// same phases and state hash as the benchmark called directly.
    #[test]
    fn a_sensor_run_is_the_benchmarks_own_with_the_specs_fields() {
        let spec = IndexBenchSpec {
            structure: IndexStructure::Nor(Structure::FatList),
            workload: Some(IndexWorkload::Sensor),
            capacity: Some(1 << 20),
            readings: 700,
            range_queries: 40,
            max_range: 37,
            seed: 9,
            ..IndexBenchSpec::default()
        };
        let Ran::Nor {
            phases, state_hash, ..
        } = run(&spec).expect("valid").report
        else {
            panic!("a NOR run");
        };
        let mut index = index_spec(&spec, Structure::FatList)
            .expect("valid")
            .build(nor_geometry(&spec).expect("valid"))
            .expect("builds");
        let sensor = SensorSpec {
            sensors: 54,
            readings: 700,
            period_s: 31,
            max_range: 37,
            seed: 9,
        };
        let direct =
            bench::sensor(index.as_mut(), NorPreset::K8C1215.timing, &sensor, &[40]).expect("runs");
        assert_eq!(phases, direct.phases);
        assert_eq!(state_hash, direct.state_hash);
    }

    /// The storage schemes' bounds, each side of each: IPL's log pages leave a data page
    /// in the block; GRR's set of at most 1,024 blocks, its log pages up to its limit, its
    /// limit below the block, an adaptive set's maximum at least its start.
    #[test]
    fn placements_are_checked_at_both_sides_of_each_bound() {
        let ppb = NandPreset::GRR_PAPER.pages_per_block;
        let field = |placement: AnyPlacement| match check_placement(&placement) {
            Ok(()) => "ok".to_string(),
            Err(LabError::Spec { field, .. }) => field.to_string(),
            Err(other) => panic!("{other:?}"),
        };
        let ipl = |log_pages| field(AnyPlacement::Ipl(Ipl { log_pages }));
        assert_eq!(
            [ipl(0), ipl(1), ipl(ppb - 1), ipl(ppb)],
            ["log_pages", "ok", "ok", "log_pages"]
        );
        let grr = |f: fn(&mut Grr)| {
            let mut g = Grr {
                blocks_per_set: 4,
                log_pages: 4,
                log_limit: 8,
                adaptive: false,
                max_blocks_per_set: 4,
                timing: NandPreset::GRR_PAPER.timing,
            };
            f(&mut g);
            field(AnyPlacement::Grr(g))
        };
        let cases = [
            (grr(|_| {}), "ok"),
            (grr(|g| g.blocks_per_set = 0), "set_blocks"),
            (grr(|g| g.blocks_per_set = 1), "ok"),
            (grr(|g| g.blocks_per_set = 1024), "ok"),
            (grr(|g| g.blocks_per_set = 1025), "set_blocks"),
            (grr(|g| g.log_pages = 0), "log_pages"),
            (grr(|g| g.log_pages = 8), "ok"),
            (grr(|g| g.log_pages = 9), "log_pages"),
            (
                grr(|g| g.log_limit = NandPreset::GRR_PAPER.pages_per_block - 1),
                "ok",
            ),
            (
                grr(|g| g.log_limit = NandPreset::GRR_PAPER.pages_per_block),
                "log_limit",
            ),
            (
                grr(|g| {
                    g.adaptive = true;
                    g.max_blocks_per_set = 3
                }),
                "max_set_blocks",
            ),
            (
                grr(|g| {
                    g.adaptive = true;
                    g.max_blocks_per_set = 4
                }),
                "ok",
            ),
            (grr(|g| g.max_blocks_per_set = 3), "ok"),
        ];
        for (i, (got, expected)) in cases.into_iter().enumerate() {
            assert_eq!(got, expected, "case {i}");
        }
    }

    /// A NAND run builds the tree and the file workload the spec's fields say, written out
    /// here by hand, and its report is the benchmark's own on them; an IPL run's log pages
    /// default to 1, a GRR run's to 4, the device to 64 MiB.
    #[test]
    fn a_nand_run_is_the_benchmarks_own_with_the_specs_fields() {
        let timing = NandPreset::GRR_PAPER.timing;
        let spec = IndexBenchSpec {
            structure: IndexStructure::Ipl,
            capacity: Some(4 << 20),
            buffer: AnyReplacement::Cflru,
            buffer_size: 16 << 10,
            window: 0.25,
            sector: 256,
            log_pages: Some(2),
            files: 100,
            fmc: 2.0,
            rw: ReadWrite { read_percent: 70 },
            awl: 8 << 10,
            read_pages: 2,
            seed: 5,
            ..IndexBenchSpec::default()
        };
        let tree = NandSpec {
            placement: AnyPlacement::Ipl(Ipl { log_pages: 2 }),
            replacement: AnyReplacement::Cflru,
            buffer: BufferConfig {
                capacity_bytes: 16 << 10,
                window: 0.25,
                sector_bytes: 256,
            },
            geometry: nand_geometry(4 << 20).expect("valid"),
            timing,
            endurance_cycles: NandPreset::GRR_PAPER.endurance_cycles,
        };
        let workload = FileWorkload {
            files: 100,
            modification_coefficient: 2.0,
            read_percent: 70,
            avg_write_bytes: 8 << 10,
            read_pages: 2,
            seed: 5,
            ..FileWorkload::default()
        };
        // Before the run, which on a wrong workload could take long.
        assert_eq!(nand_spec(&spec).expect("valid"), tree);
        assert_eq!(file_workload(&spec).expect("valid"), workload);
        let bench = run(&spec).expect("valid");
        let Ran::Nand {
            spec: built,
            workload: generated,
            report,
        } = &bench.report
        else {
            panic!("a NAND run");
        };
        assert_eq!(**built, tree);
        assert_eq!(*generated, workload);
        assert_eq!(**report, nand_bench::run(&tree, &workload).expect("runs"));
        // The phases table's times, the whole run last, in seconds to three places.
        let phases: Vec<&nand_bench::PhaseReport> =
            report.phases.iter().chain([&report.total]).collect();
        assert_eq!(bench.phases.rows.len(), phases.len());
        for (row, phase) in bench.phases.rows.iter().zip(phases) {
            let t = &phase.time;
            let times = [t.read_s, t.write_s, t.erase_s, t.total_s()].map(|s| format!("{s:.3}"));
            assert_eq!(row[9..], times, "{}", phase.name);
        }
        // The summary's lines, each from the report.
        let text: String = bench
            .printed
            .iter()
            .filter_map(|p| match p {
                Printed::Text(t) => Some(t.as_str()),
                Printed::Table(_) => None,
            })
            .collect();
        for line in [
            format!("\nspace: {} blocks in use", report.space.blocks_in_use),
            format!(
                "tree: {} keys, height {}; {} leaf",
                report.keys, report.height, report.tree.leaf_splits
            ),
            format!("storage: {} block merges", report.total.store.merges),
            format!("state hash: {}", report.state_hash),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        let ipl = nand_spec(&IndexBenchSpec {
            log_pages: None,
            capacity: None,
            ..spec.clone()
        })
        .expect("valid");
        assert_eq!(ipl.placement, AnyPlacement::Ipl(Ipl { log_pages: 1 }));
        assert_eq!(ipl.geometry, nand_geometry(64 << 20).expect("valid"));
        let grr = nand_spec(&IndexBenchSpec {
            structure: IndexStructure::Grr,
            log_pages: None,
            set_blocks: 3,
            log_limit: 9,
            adaptive: true,
            max_set_blocks: 6,
            ..spec
        })
        .expect("valid");
        assert_eq!(
            grr.placement,
            AnyPlacement::Grr(Grr {
                blocks_per_set: 3,
                log_pages: 4,
                log_limit: 9,
                adaptive: true,
                max_blocks_per_set: 6,
                timing,
            })
        );
    }

    /// A fat list's run prints its probes per phase, each per pointer visited, read from the
    /// phases it returns.
    #[test]
    fn the_probe_table_reads_each_phases_probes() {
        let bench = run(&small_micro()).expect("valid");
        let Ran::Nor { phases, .. } = &bench.report else {
            panic!("a NOR run");
        };
        let Some(Printed::Table(probes)) = bench.printed.get(3) else {
            panic!("{:?}", bench.printed);
        };
        assert_eq!(
            probes.header[..3],
            ["phase", "pointers visited", "total probes"]
        );
        assert_eq!(probes.rows.len(), phases.len());
        for (row, phase) in probes.rows.iter().zip(phases) {
            let s = &phase.probes;
            let per = |n| format!("{:.3}", s.per_pointer(n));
            assert_eq!(
                *row,
                [
                    phase.name.clone(),
                    s.pointers_visited.to_string(),
                    s.probes.to_string(),
                    per(s.successful),
                    per(s.low),
                    per(s.over),
                    per(s.back),
                    per(s.null),
                ]
            );
        }
        assert!(phases.iter().any(|p| p.probes.probes > 0));
    }

    /// A fat list's pool is two more than its levels unless given.
    #[test]
    fn the_pool_is_two_more_than_the_levels_unless_given() {
        let spec = IndexBenchSpec {
            levels: 5,
            pool: None,
            ..IndexBenchSpec::default()
        };
        let pool = |spec: &IndexBenchSpec| {
            index_spec(spec, Structure::FatList)
                .expect("valid")
                .fat
                .pool
        };
        assert_eq!(pool(&spec), 7);
        assert_eq!(
            pool(&IndexBenchSpec {
                pool: Some(3),
                ..spec
            }),
            3
        );
    }

    /// A NOR run without a capacity runs on 8 MiB of flash, and says so.
    #[test]
    fn a_nor_run_without_a_capacity_has_eight_mib() {
        let bench = run(&IndexBenchSpec {
            capacity: None,
            ..small_micro()
        })
        .expect("valid");
        let Ran::Nor { capacity_bytes, .. } = bench.report else {
            panic!("a NOR run");
        };
        assert_eq!(capacity_bytes, 8 << 20);
        let Printed::Text(first) = &bench.printed[0] else {
            panic!("{:?}", bench.printed[0]);
        };
        assert!(first.starts_with("fatlist on 8MiB of NOR flash"), "{first}");
    }

    #[test]
    fn a_nor_run_returns_its_phases_tables_and_document() {
        let bench = run(&small_micro()).expect("valid");
        assert_eq!(bench.phases.rows.len(), bench_phases(&bench));
        let tables = bench
            .printed
            .iter()
            .filter(|p| matches!(p, Printed::Table(_)))
            .count();
        assert_eq!(tables, 2, "phases and probes");
        let doc = bench.document(false);
        let value: serde_json::Value = serde_json::from_str(doc.json.get()).expect("valid");
        assert_eq!(value["structure"], "fatlist");
        assert_eq!(value["capacity_bytes"], 1 << 20);
        assert!(value.get("wall_seconds").is_none());
        assert!(
            serde_json::from_str::<serde_json::Value>(bench.document(true).json.get())
                .expect("valid")["wall_seconds"]
                .is_number()
        );
        // Same spec, same document.
        assert_eq!(
            run(&small_micro())
                .expect("valid")
                .document(false)
                .json
                .get(),
            doc.json.get()
        );
    }

    fn bench_phases(bench: &IndexBench) -> usize {
        match &bench.report {
            Ran::Nor { phases, .. } => phases.len(),
            Ran::Nand { report, .. } => report.phases.len() + 1,
        }
    }

    #[test]
    fn a_nand_run_returns_its_phases_with_the_total_last() {
        let spec = IndexBenchSpec {
            structure: IndexStructure::Ipl,
            files: 100,
            capacity: Some(4 << 20),
            buffer_size: 16 << 10,
            ..IndexBenchSpec::default()
        };
        let bench = run(&spec).expect("valid");
        let rows = &bench.phases.rows;
        assert_eq!(rows.len(), bench_phases(&bench));
        assert_eq!(rows.last().expect("valid")[0], "total");
    }

    #[test]
    fn bad_fields_are_named() {
        let field_of = |spec: IndexBenchSpec| match run(&spec) {
            Err(LabError::Spec { field, .. }) => field,
            other => panic!("expected a spec error, got {other:?}"),
        };
        let nand = |f: fn(&mut IndexBenchSpec)| {
            let mut spec = IndexBenchSpec {
                structure: IndexStructure::Grr,
                ..IndexBenchSpec::default()
            };
            f(&mut spec);
            field_of(spec)
        };
        assert_eq!(nand(|s| s.log_pages = Some(9)), "log_pages");
        assert_eq!(nand(|s| s.set_blocks = 0), "set_blocks");
        assert_eq!(nand(|s| s.log_limit = 64), "log_limit");
        assert_eq!(
            nand(|s| {
                s.adaptive = true;
                s.max_set_blocks = 2
            }),
            "max_set_blocks"
        );
        assert_eq!(nand(|s| s.capacity = Some(100 << 10)), "capacity");
        assert_eq!(
            nand(|s| s.workload = Some(IndexWorkload::Micro)),
            "workload"
        );
        assert_eq!(nand(|s| s.sector = 1 << 40), "sector");
        assert_eq!(nand(|s| s.files = 1 << 40), "files");
        let nor = |f: fn(&mut IndexBenchSpec)| {
            let mut spec = small_micro();
            f(&mut spec);
            field_of(spec)
        };
        assert_eq!(nor(|s| s.keys = 0), "keys");
        assert_eq!(nor(|s| s.capacity = Some(100 << 10)), "capacity");
        assert_eq!(nor(|s| s.workload = Some(IndexWorkload::Files)), "workload");
        assert_eq!(
            nor(|s| {
                s.structure = IndexStructure::Nor(Structure::MuTree);
                s.page_size = 1 << 40
            }),
            "page_size"
        );
    }
}
