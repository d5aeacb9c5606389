//! `flashkit index bench`: one NOR-flash index (fat list, soft list or mu-tree) through the
//! fat-list paper's micro-benchmark or the sensor macro-benchmark, with the simulated time
//! of each phase split into reads, writes and erases, normal operation and space
//! reclaiming.

use crate::args::{Count, Size};
use crate::output::{write_csv, write_json};
use crate::{Failure, Outcome};
use anyhow::anyhow;
use clap::{Args, Subcommand};
use flashkit_core::units::format_size;
use flashkit_device::{NorGeometry, NorPreset};
use flashkit_index::nor::bench::{self, IndexSpec, MicroSpec, PhaseReport, SensorSpec, Structure};
use flashkit_index::nor::{FatListConfig, IndexError, MuTreeConfig, SoftListConfig};
use flashkit_report::Table;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum IndexCommand {
    /// Run one NOR index through a benchmark and report simulated time by phase.
    Bench(IndexBenchArgs),
}

/// Which workload `index bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Sequential inserts, Gaussian updates and queries, random deletes (section 0.6.3).
    Micro,
    /// A synthetic temperature stream, then range queries (section 0.6.4).
    Sensor,
}

#[derive(Args, Debug, Clone)]
pub struct IndexBenchArgs {
    /// fatlist, softlist or mutree.
    #[arg(long, default_value = "fatlist", value_name = "NAME")]
    pub structure: Structure,
    /// micro or sensor.
    #[arg(long, value_enum, default_value = "micro")]
    pub workload: Workload,
    /// NOR flash size (whole 64 KiB blocks of the K8C1215 part).
    #[arg(long, default_value = "8M", value_name = "SIZE")]
    pub capacity: Size,
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
    /// Seed of the workload and of the structure's random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the phase table as CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

impl IndexBenchArgs {
    /// The index to build.
    pub fn index_spec(&self) -> Result<IndexSpec, Failure> {
        let page_bytes = u32::try_from(self.page_size.0).map_err(|_| {
            Failure::Usage(anyhow!("--page-size {} B is too large", self.page_size.0))
        })?;
        Ok(IndexSpec {
            structure: self.structure,
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

    /// The flash.
    pub fn geometry(&self) -> Result<NorGeometry, Failure> {
        NorPreset::K8C1215
            .geometry_with_capacity(self.capacity.0)
            .map_err(|e| Failure::Usage(anyhow!("--capacity: {e}")))
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
    wall_seconds: f64,
}

pub fn run(command: IndexCommand) -> Outcome {
    match command {
        IndexCommand::Bench(args) => bench_command(&args),
    }
}

fn bench_command(args: &IndexBenchArgs) -> Outcome {
    let spec = args.index_spec()?;
    let geometry = args.geometry()?;
    let timing = NorPreset::K8C1215.timing;
    let mut index = spec.build(geometry).map_err(index_failure)?;
    let started = Instant::now();
    let (phases, boot) = match args.workload {
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
    };
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{} on {} of NOR flash (K8C1215 timing: word read 110 ns, word write 80 us, erase 0.6 s), {:?} workload, seed {}",
        args.structure,
        format_size(args.capacity.0),
        args.workload,
        args.seed
    );
    let table = phase_table(&phases);
    print!("{}", table.render());
    if args.structure != Structure::MuTree {
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
            structure: args.structure,
            spec: &spec,
            capacity_bytes: args.capacity.0,
            phases: &phases,
            boot_word_reads: boot,
            counters,
            wall_seconds: wall,
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

/// Phases as rows: simulated seconds of reads, writes and erases, normal and reclaiming.
pub fn phase_table(phases: &[PhaseReport]) -> Table {
    let mut table = Table::new([
        "phase",
        "operations",
        "read s",
        "write s",
        "erase s",
        "gc read s",
        "gc write s",
        "gc erase s",
        "total s",
    ]);
    for p in phases {
        let t = &p.time;
        table.push([
            p.name.clone(),
            p.operations.to_string(),
            secs(t.read_s),
            secs(t.write_s),
            secs(t.erase_s),
            secs(t.gc_read_s),
            secs(t.gc_write_s),
            secs(t.gc_erase_s),
            secs(t.total()),
        ]);
    }
    table
}

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
