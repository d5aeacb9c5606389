//! `flashkit em`: external-memory algorithms under the flash models of Ajwani et al.
//! (SEA 2009): model calculators, input generation, sorting real files (or generated records on
//! a simulated device or an FTL), BFS and DFS.

use crate::commands::em_ftl;
use crate::output::write_json;
use crate::progress::SharedBar;
use crate::{Failure, Outcome};
use anyhow::Context;
use clap::{ArgGroup, Args, Subcommand};
use flashkit_core::units::format_size;
use flashkit_em::EmError;
use flashkit_em::io::BlockSizes;
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::progress::Progress as _;
use flashkit_em::record::{KeyPayload, RecordKind};
use flashkit_em::sort::files::{
    FileSortReport, FileSortSpec, InputOrder, IoMode, generate_file_with_progress,
    sort_file_with_progress,
};
use flashkit_em::sort::{FanIn, MAX_RESIDENT, Plan};
use flashkit_ftl::FtlKind;
use flashkit_lab::config::ConfigFile;
use flashkit_lab::config::Size;
use flashkit_report::Table;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand, Debug)]
pub enum EmCommand {
    /// Predict volumes and costs under both flash models from N, M, B_r and B_w.
    Model(ModelArgs),
    /// Write a file of random (or sorted, reversed, equal) fixed-width records.
    Gen(GenArgs),
    /// Sort a file of fixed-width records with external multi-way mergesort (or, with
    /// --records, generated records on the simulator or an FTL).
    Sort(SortArgs),
    /// Mehlhorn-Meyer BFS on a generated graph, on the simulated device or an FTL.
    Bfs(crate::commands::em_graph::GraphArgs),
    /// Textbook DFS on a generated graph, on the simulated device or an FTL.
    Dfs(crate::commands::em_graph::GraphArgs),
    /// Measure this machine's disk: throughput against block size for sequential and random
    /// reads and writes (the paper's Fig. 1), and the B_r and B_w its rule picks.
    Probe(crate::commands::em_probe::ProbeArgs),
}

/// Memory and block sizes shared by the em commands.
#[derive(Args, Debug, Clone)]
pub struct ModelParams {
    /// Internal memory M.
    #[arg(long, default_value = "512M", value_name = "SIZE")]
    pub memory: Size,
    /// Read block size B_r.
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub br: Size,
    /// Write block size B_w.
    #[arg(long, default_value = "16M", value_name = "SIZE")]
    pub bw: Size,
    /// The general model's write penalty c.
    #[arg(long, default_value_t = 1.0, value_name = "C")]
    pub c: f64,
}

impl ModelParams {
    pub fn model(&self) -> Result<FlashModel, Failure> {
        let sizes = BlockSizes::new(self.br.0, self.bw.0).map_err(failure)?;
        FlashModel::new(self.memory.0, sizes, self.c).map_err(failure)
    }
}

#[derive(Args, Debug)]
pub struct ModelArgs {
    /// Records to sort: a count (1M, 300k) or a power of two (2^28).
    #[arg(long, default_value = "2^28", value_parser = parse_records, value_name = "N")]
    pub records: u64,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u32", value_name = "TYPE")]
    pub record: RecordKind,
    /// Graph vertices for the BFS and DFS predictions (a count or 2^k).
    #[arg(long, default_value = "2^22", value_parser = parse_records, value_name = "V")]
    pub vertices: u64,
    #[command(flatten)]
    pub params: ModelParams,
}

#[derive(Args, Debug)]
pub struct GenArgs {
    /// Output file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Number of records (a count or 2^k).
    #[arg(long, value_parser = parse_records, value_name = "N")]
    pub records: u64,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u64", value_name = "TYPE")]
    pub record: RecordKind,
    /// Order: random, sorted, reversed, equal.
    #[arg(long, default_value = "random", value_name = "ORDER")]
    pub order: InputOrder,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["input", "records"])))]
#[command(mut_group("DeviceSection", |g| g.requires("ftl")))]
#[command(mut_group("FtlSection", |g| g.requires("ftl")))]
#[command(mut_arg("capacity", |a| a.help(em_ftl::CAPACITY_HELP)))]
#[command(mut_arg("op", |a| a.help(em_ftl::OP_HELP)))]
#[command(mut_arg("gc", |a| a.help(em_ftl::GC_HELP).value_name("POLICY")))]
#[command(mut_arg("vet_insert", |a| a.help(em_ftl::VET_INSERT_HELP).value_name("SCHEME")))]
#[command(mut_arg("vet_nodes", |a| a.help(em_ftl::VET_NODES_HELP).value_name("LAYOUT")))]
#[command(mut_arg("vet_table", |a| a.help(em_ftl::VET_TABLE_HELP).value_name("TABLE")))]
pub struct SortArgs {
    /// Input file of raw little-endian records.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Output file.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["in_memory", "records"])]
    pub output: Option<PathBuf>,
    /// Instead of a file: sort N generated random records (a count or 2^k) on a simulated
    /// device, the counting simulator with data or the FTL of --ftl; serial, and the output is
    /// read back and compared with std's sort.
    #[arg(
        long,
        value_parser = parse_records,
        value_name = "N",
        conflicts_with_all = ["output", "tmp", "buffered", "threads", "in_memory"]
    )]
    pub records: Option<u64>,
    /// With --records: seed of the generated records (the records `em gen --seed` writes)
    /// [default: 1].
    #[arg(long, requires = "records")]
    pub seed: Option<u64>,
    /// With --records: sort on this FTL (page, block, bast, fast, ofast, vet, emt) over
    /// simulated NAND, sized to the sort's footprint, and report its flash operations.
    #[arg(long, value_name = "KIND", requires = "records")]
    pub ftl: Option<FtlKind>,
    #[command(flatten)]
    pub ftl_device: em_ftl::FtlDeviceArgs,
    /// Record type: u32, u64, kv16.
    #[arg(long, default_value = "u64", value_name = "TYPE")]
    pub record: RecordKind,
    /// Block sizes to transfer with: flash (read B_r, write B_w), br, bw, tl.
    #[arg(long, default_value = "flash", value_name = "MODE")]
    pub io: IoMode,
    /// Shorthand for --io tl: pages of B_r through the translation layer.
    #[arg(long, conflicts_with = "io")]
    pub tl: bool,
    /// Merge fan-in: model, read (M/B_r), write (M/B_w) or a number.
    #[arg(long, default_value = "model", value_name = "POLICY")]
    pub fan_in: FanIn,
    /// Keep up to N of the last runs in memory for the merge instead of writing them and
    /// reading them back (at most 3, as many as leave the merge its buffers; only when one
    /// merge pass finishes the sort). 0 writes every run, the paper's algorithm.
    #[arg(long, default_value_t = MAX_RESIDENT, value_name = "N",
          value_parser = clap::value_parser!(u64).range(0..=MAX_RESIDENT))]
    pub resident_runs: u64,
    /// Directory for the temporary runs [default: the output's directory].
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
    /// Go through the page cache instead of asking for O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Threads each merge splits over by key range [default: every core]; 1 merges
    /// serially. Volumes are the same either way; `--tl` always merges serially.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: Option<u64>,
    /// Also write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Benchmark only: load the whole input into memory and time the in-memory radix sort
    /// alone (the in-memory bound of the sorting benchmark); writes nothing.
    #[arg(long, conflicts_with_all = [
        "output", "tmp", "buffered", "threads", "json", "io", "tl", "fan_in", "resident_runs",
        "memory", "br", "bw", "c",
    ])]
    pub in_memory: bool,
    #[command(flatten)]
    pub params: ModelParams,
}

/// A count such as `1M`, `300k` or a power of two such as `2^28`.
pub fn parse_records(text: &str) -> Result<u64, String> {
    if let Some(exponent) = text.strip_prefix("2^") {
        let e: u32 = exponent
            .parse()
            .map_err(|_| format!("{text:?}: the exponent is not a whole number"))?;
        return 1u64
            .checked_shl(e)
            .filter(|_| e < 64)
            .ok_or_else(|| format!("{text:?} does not fit in 64 bits"));
    }
    flashkit_core::units::parse_count(text)
}

/// Sort an em error: bad parameters and bad input files are usage errors (exit 2).
pub fn failure(error: EmError) -> Failure {
    match error {
        EmError::Config(_) | EmError::Input { .. } => Failure::Usage(error.into()),
        other => Failure::Runtime(other.into()),
    }
}

pub fn run(command: EmCommand, config: &ConfigFile) -> Outcome {
    match command {
        EmCommand::Model(args) => model(args),
        EmCommand::Gen(args) => generate(args),
        EmCommand::Sort(args) if args.records.is_some() => {
            crate::commands::em_sim::sort_records(&args, config)
        }
        EmCommand::Sort(args) => sort(args),
        EmCommand::Bfs(args) => crate::commands::em_graph::bfs(args, config),
        EmCommand::Dfs(args) => crate::commands::em_graph::dfs(args, config),
        EmCommand::Probe(args) => crate::commands::em_probe::run(&args),
    }
}

/// Gigabytes with two decimals, as the paper's tables print volumes.
/// Bytes in GB (10^9 B): two decimals from 1 GB up, three significant digits below, so
/// that a small run's volumes do not all read 0.00.
pub fn gb(bytes: u64) -> String {
    let value = bytes as f64 / 1e9;
    if bytes == 0 || value >= 1.0 {
        return format!("{value:.2}");
    }
    let decimals = 2 + (-value.log10().floor()) as usize;
    format!("{value:.decimals$}")
}

fn cost_cells(cost: &Cost) -> [String; 2] {
    [format!("{:.0}", cost.general), gb(cost.unit_bytes)]
}

fn model(args: ModelArgs) -> Outcome {
    let model = args.params.model()?;
    if args.vertices > 1 << 32 {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--vertices {} is more than 4-byte vertex ids can number (2^32)",
            args.vertices
        )));
    }
    if args.vertices == 0 {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--vertices 0: the BFS and DFS predictions need a graph of one vertex or more"
        )));
    }
    let record_bytes = args.record.bytes();
    let input = records_bytes(args.records, args.record)?;
    println!(
        "flash model: M = {}, B_r = {}, B_w = {}, c = {}; sorting {} {} records ({} GB)",
        format_size(model.memory_bytes),
        format_size(model.sizes.read_bytes),
        format_size(model.sizes.write_bytes),
        model.write_penalty,
        args.records,
        args.record.name(),
        gb(input)
    );
    println!("\nmultiway mergesort (exact: the schedule does not depend on the data)");
    let mut table = Table::new([
        "mode",
        "runs",
        "fan-in",
        "passes",
        "RDV [GB]",
        "WRV [GB]",
        "read I/Os",
        "write I/Os",
        "general x+cy",
        "unit [GB]",
    ]);
    for mode in IoMode::ALL {
        let plan = Plan::new(
            args.records,
            record_bytes,
            mode.algorithm_sizes(model.sizes),
            model.memory_bytes,
            FanIn::Model,
        )
        .map_err(failure)?;
        let io = mode.device_prediction(&plan, model.sizes);
        let cost = model.cost(&io);
        let [general, unit] = cost_cells(&cost);
        table.push([
            mode.name().to_string(),
            plan.runs.to_string(),
            plan.fan_in.to_string(),
            plan.merge_passes().to_string(),
            gb(io.read_bytes),
            gb(io.write_bytes),
            io.read_ios.to_string(),
            io.write_ios.to_string(),
            general,
            unit,
        ]);
    }
    print!("{}", table.render());
    println!(
        "Lemma 3 bound N log_(M/B_r)(N/B_r): {} GB; merging M/B_w ways instead: {} GB",
        gb(model.sort_bound_bytes(input) as u64),
        gb(model.sort_bound_bytes_with_b_w(input) as u64)
    );
    print_bounds(&model, &args);
    Ok(())
}

fn print_bounds(model: &FlashModel, args: &ModelArgs) {
    let v = args.vertices;
    println!("\nbounds with every constant 1 (how costs scale, not what a run measures):");
    println!(
        "BFS on {v} vertices (4-byte ids): mu = {} with B_r, {} with B_w; Lemma 4: {} GB",
        model.bfs_mu(v, model.sizes.read_bytes, 4),
        model.bfs_mu(v, model.sizes.write_bytes, 4),
        gb((model.bfs_bound_items(v, 4) * 4.0) as u64)
    );
    let (dfs_flash, dfs_bw) = model.dfs_bytes(v, 2 * v);
    println!(
        "DFS on {v} vertices, {} edges: |E| B_r + |V| B_w = {} GB; with B_w blocks {} GB",
        2 * v,
        gb(dfs_flash),
        gb(dfs_bw)
    );
    let (two_level, plain) = model.btree_search_bytes(args.records, 16);
    println!(
        "B-tree search over {} entries: two-level {} KiB, B_w-node B-tree {} KiB",
        args.records,
        (two_level / 1024.0).round(),
        (plain / 1024.0).round()
    );
    let (merging, distributing) = model.pq_bytes_per_op(args.records, 8);
    println!(
        "priority queue, amortised bytes per operation: merging {merging:.1}, distributing \
         {distributing:.1}"
    );
}

/// The bytes of `records` records of `kind`, or a usage error past 2^64.
fn records_bytes(records: u64, kind: RecordKind) -> Result<u64, Failure> {
    records.checked_mul(kind.bytes()).ok_or_else(|| {
        Failure::Usage(anyhow::anyhow!(
            "--records {records} of {} B each are more than 2^64 bytes",
            kind.bytes()
        ))
    })
}

fn generate(args: GenArgs) -> Outcome {
    // A file past 2^64 bytes cannot exist; it was written until the disk was full.
    records_bytes(args.records, args.record)?;
    let started = Instant::now();
    let bar = SharedBar::new("em gen");
    let staged = crate::output::Staged::new(&args.output).map_err(Failure::Usage)?;
    let backend = match args.record {
        RecordKind::U32 => generate_file_with_progress::<u32>(
            staged.path(),
            args.records,
            args.order,
            args.seed,
            &bar,
        ),
        RecordKind::U64 => generate_file_with_progress::<u64>(
            staged.path(),
            args.records,
            args.order,
            args.seed,
            &bar,
        ),
        RecordKind::KeyPayload => generate_file_with_progress::<KeyPayload>(
            staged.path(),
            args.records,
            args.order,
            args.seed,
            &bar,
        ),
    }
    .map_err(failure)?;
    staged.commit()?;
    bar.finish();
    println!(
        "wrote {} {} records ({}) to {} in {:.2} s ({backend})",
        args.records,
        args.record.name(),
        format_size(args.records * args.record.bytes()),
        args.output.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn sort(args: SortArgs) -> Outcome {
    // Clap's `requires = "records"` is waived once `--output` (which conflicts with
    // `--records`) is present, and `--ftl`'s device and FTL options require only `--ftl`:
    // checked here, or `--input F --output O --ftl page` sorted the file and ignored `--ftl`.
    let mut stray = flashkit_lab::config::given(&[
        (args.seed.is_some(), "--seed"),
        (args.ftl.is_some(), "--ftl"),
    ]);
    stray.extend(args.ftl_device.device.given());
    stray.extend(args.ftl_device.ftl.given());
    if !stray.is_empty() {
        let names: Vec<String> = stray.iter().map(|n| n.to_string()).collect();
        return Err(Failure::Usage(anyhow::anyhow!(
            "{}: drop {}",
            flashkit_lab::config::unused_options(
                &names,
                "sorting generated records (--records), not a file (--input)"
            ),
            if names.len() == 1 { "it" } else { "them" }
        )));
    }
    let input = args
        .input
        .clone()
        .expect("invariant: clap requires --input without --records");
    let mode = if args.tl { IoMode::Tl } else { args.io };
    if mode == IoMode::Tl && args.threads.is_some() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--threads does nothing in mode tl (the translation layer merges serially): drop it"
        )));
    }
    // (A pipe or a directory is refused where the sort opens it.)
    if input.as_os_str() == "-" || !input.exists() {
        // The sort reads its input by offset (O_DIRECT where it can), so a pipe will not do.
        return Err(Failure::Usage(anyhow::anyhow!(
            "--input {}: {}; give a file of raw records",
            input.display(),
            if input.as_os_str() == "-" {
                "the sort reads its input by offset, so not from standard input"
            } else {
                "no such file"
            }
        )));
    }
    crate::output::note_input(&input);
    crate::output::check_outputs(&[
        ("--output", args.output.as_deref()),
        ("--json", args.json.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    if args.in_memory {
        return match args.record {
            RecordKind::U32 => in_memory::<u32>(&input),
            RecordKind::U64 => in_memory::<u64>(&input),
            RecordKind::KeyPayload => in_memory::<KeyPayload>(&input),
        };
    }
    let model = args.params.model()?;
    let output = args
        .output
        .clone()
        .expect("invariant: clap requires --output without --in-memory");
    let scratch_dir = match &args.tmp {
        Some(dir) if !dir.is_dir() => {
            // As `reproduce flashmodel --tmp` says it (this one failed at the scratch file's
            // open, exit 1, naming a file the user never named).
            return Err(Failure::Usage(anyhow::anyhow!(
                "--tmp {} is not a directory",
                dir.display()
            )));
        }
        Some(dir) => dir.clone(),
        None => output
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from),
    };
    let _scratch =
        crate::interrupt::temporary(&flashkit_em::sort::files::scratch_file(&scratch_dir));
    // The sorted records appear at --output only once the sort has checked them.
    let staged = crate::output::Staged::new(&output).map_err(Failure::Usage)?;
    let spec = FileSortSpec {
        input,
        output: staged.path().to_path_buf(),
        scratch_dir,
        memory_bytes: model.memory_bytes,
        sizes: model.sizes,
        mode,
        fan_in: args.fan_in,
        direct: !args.buffered,
        resident_runs: args.resident_runs,
        threads: args
            .threads
            .map_or_else(crate::commands::cores, |t| t as usize),
    };
    let started = Instant::now();
    let bar = SharedBar::new("em sort");
    let report = match args.record {
        RecordKind::U32 => sort_file_with_progress::<u32>(&spec, &bar),
        RecordKind::U64 => sort_file_with_progress::<u64>(&spec, &bar),
        RecordKind::KeyPayload => sort_file_with_progress::<KeyPayload>(&spec, &bar),
    }
    .map_err(failure)?;
    staged.commit()?;
    bar.finish();
    let wall = started.elapsed().as_secs_f64();
    print_sort(&report, &model, args.record, wall);
    if let Some(path) = &args.json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            report: &'a FileSortReport,
            model: &'a FlashModel,
            cost: Cost,
            wall_seconds: f64,
        }
        let cost = model.cost(&report.device);
        write_json(
            path,
            &Doc {
                report: &report,
                model: &model,
                cost,
                wall_seconds: wall,
            },
        )
        .context("writing the JSON report")?;
    }
    Ok(())
}

/// Time the in-memory radix sort of the whole input (its bound in the benchmark).
fn in_memory<R: flashkit_em::record::Record>(input: &std::path::Path) -> Outcome {
    use flashkit_em::io::AlignedBuf;
    use std::io::Read;
    let records = flashkit_em::sort::files::count_records::<R>(input).map_err(failure)?;
    let bytes = records as usize * R::BYTES;
    let mut data = AlignedBuf::new(bytes);
    let mut file =
        std::fs::File::open(input).with_context(|| format!("cannot open {}", input.display()))?;
    file.read_exact(&mut data.bytes_mut()[..bytes])
        .with_context(|| format!("reading {}", input.display()))?;
    let mut scratch = AlignedBuf::new(bytes);
    let n = records as usize;
    let started = Instant::now();
    let in_scratch = flashkit_em::sort::radix::radix_sort(
        &mut data.records_mut::<R>()[..n],
        &mut scratch.records_mut::<R>()[..n],
    );
    let seconds = started.elapsed().as_secs_f64();
    let sorted = if in_scratch { &scratch } else { &data };
    let ok = sorted.records::<R>()[..n]
        .windows(2)
        .all(|w| w[0].key() <= w[1].key());
    if !ok {
        return Err(Failure::Runtime(anyhow::anyhow!(
            "in-memory radix sort left records out of order"
        )));
    }
    println!(
        "in-memory radix sort of {records} {} records ({}): {seconds:.2} s",
        R::KIND.name(),
        format_size(bytes as u64)
    );
    Ok(())
}

fn print_sort(report: &FileSortReport, model: &FlashModel, kind: RecordKind, wall: f64) {
    let o = &report.outcome;
    let plan = &o.plan;
    let input = report.records * kind.bytes();
    println!(
        "sorted {} {} records ({}) in {:.2} s: {:.0} MB/s of input",
        report.records,
        kind.name(),
        format_size(input),
        wall,
        input as f64 / wall / 1e6
    );
    println!(
        "mode {}, M = {}, runs of {} records: {} runs ({} kept in memory), fan-in {}, {} merge \
         pass(es) on up to {} thread(s); {}",
        report.mode.name(),
        format_size(model.memory_bytes),
        plan.run_records,
        plan.runs,
        plan.resident,
        plan.fan_in,
        plan.merge_passes(),
        report.merge_threads,
        report.backend
    );
    let merge = o.total - o.run_formation;
    let mut table = Table::new([
        "phase",
        "RDV [GB]",
        "WRV [GB]",
        "read I/Os",
        "write I/Os",
        "time [s]",
        "MB/s moved",
    ]);
    let merge_seconds = o.total_seconds - o.run_formation_seconds;
    for (name, io, seconds) in [
        ("run formation", o.run_formation, o.run_formation_seconds),
        ("merge", merge, merge_seconds),
        ("total (algorithm)", o.total, o.total_seconds),
        ("device", report.device, o.total_seconds),
    ] {
        table.push([
            name.to_string(),
            gb(io.read_bytes),
            gb(io.write_bytes),
            io.read_ios.to_string(),
            io.write_ios.to_string(),
            format!("{seconds:.2}"),
            format!(
                "{:.0}",
                (io.read_bytes + io.write_bytes) as f64 / seconds.max(1e-9) / 1e6
            ),
        ]);
    }
    print!("{}", table.render());
    let p = report.predicted;
    println!(
        "predicted by the plan: RDV {} GB, WRV {} GB, {} read and {} write I/Os",
        gb(p.read_bytes),
        gb(p.write_bytes),
        p.read_ios,
        p.write_ios
    );
    let cost = model.cost(&report.device);
    println!(
        "cost at the device: general model x + c*y = {:.0}; unit-cost model {} GB moved",
        cost.general,
        gb(cost.unit_bytes)
    );
    if let Some(tl) = report.tl {
        println!(
            "translation layer: {} page reads served from its write buffers, {} B_w blocks at peak",
            tl.buffer_hits, tl.peak_blocks
        );
    }
    println!(
        "verified: keys in order across every block; multiset checksum {:016x} over {} records \
         equals the input's",
        o.checksum.sum, o.checksum.count
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_counts_parse_as_counts_or_powers_of_two() {
        assert_eq!(parse_records("2^28"), Ok(1 << 28));
        assert_eq!(parse_records("10k"), Ok(10_000));
        assert!(parse_records("2^64").is_err());
        assert!(parse_records("2^x").is_err());
    }

    /// A small run's volumes read 0.00 GB, every one of them.
    #[test]
    fn small_volumes_keep_three_significant_digits() {
        let cases = [
            (0, "0.00"),
            (520_000, "0.000520"),
            (15_872, "0.0000159"),
            (50_000_000, "0.0500"),
            (994_000_000, "0.994"),
            (999_500_000, "1.000"),
            (1_000_000_000, "1.00"),
            (1_234_567_890, "1.23"),
            (548_000_000_000, "548.00"),
        ];
        for (bytes, shown) in cases {
            assert_eq!(gb(bytes), shown, "{bytes} B");
        }
    }
}
