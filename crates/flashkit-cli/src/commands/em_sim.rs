//! `flashkit em sort --records N`: sort generated records on a simulated device, the
//! counting simulator with data or (with `--ftl`) any FTL on the NAND model.
//!
//! The serial sort (`flashkit_em::sort::sort`) runs, so that the device sees one
//! deterministic sequence of transfers: the same seed gives the same report byte for byte.
//! The input is written with `write_records` (the upload), then sorted into `Layout::packed`'s
//! four areas (the sort's exact footprint). Besides the sort's own check (key order and the
//! multiset checksum), the output is read back and compared with the input sorted by std's
//! stable sort.

use crate::commands::em::{SortArgs, failure};
use crate::commands::em_ftl::{EmFtl, FtlChoice, FtlDevice, FtlReport, snapshot};
use crate::output::write_json;
use crate::{Failure, Outcome};
use anyhow::{Context, anyhow};
use flashkit_core::units::format_size;
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo};
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::record::{Checksum, KeyPayload, Record, RecordKind};
use flashkit_em::sort::files::IoMode;
use flashkit_em::sort::files::random_records;
use flashkit_em::sort::{Layout, Plan, SortOutcome, Volumes, read_records, sort, write_records};
use flashkit_lab::config::ConfigFile;
use flashkit_report::Table;
use serde::Serialize;

/// What a simulated sort did (its JSON; no wall-clock figure, so equal seeds give equal
/// files).
#[derive(Serialize)]
struct SimSortReport {
    records: u64,
    record: RecordKind,
    seed: u64,
    mode: IoMode,
    model: FlashModel,
    /// The device's one-line description.
    device: String,
    plan: Plan,
    predicted: Volumes,
    /// Writing the generated input.
    upload: IoStats,
    run_formation: IoStats,
    merge: IoStats,
    /// The sort's I/O (run formation and merge).
    total: IoStats,
    /// The models' cost of the sort's I/O.
    cost: Cost,
    checksum: Checksum,
    /// The output read back equals the input sorted by std (the run fails otherwise).
    equals_std_sort: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    ftl: Option<FtlReport>,
}

/// Sort `--records` generated records on the simulator or the FTL.
pub fn sort_records(args: &SortArgs, config: &ConfigFile) -> Outcome {
    let records = args.records.expect("invariant: called only with --records");
    crate::output::check_outputs(&[("--json", args.json.as_deref())]).map_err(Failure::Usage)?;
    let model = args.params.model()?;
    let mode = if args.tl { IoMode::Tl } else { args.io };
    if mode == IoMode::Tl {
        return Err(Failure::Usage(anyhow!(
            "--io tl sorts real files only (the layer carries their scratch file); a simulated \
             sort runs in mode flash, br or bw"
        )));
    }
    let sizes = mode.algorithm_sizes(model.sizes);
    let plan = Plan::new(
        records,
        args.record.bytes(),
        sizes,
        model.memory_bytes,
        args.fan_in,
    )
    .map_err(failure)?
    .keep_resident(args.resident_runs);
    let ftl = match args.ftl {
        Some(kind) => {
            let choice = FtlChoice::new(kind, &args.ftl_device, config, model.sizes)?;
            Some(choice.sized(4 * plan.area_bytes(), "the sort's footprint (4 areas)")?)
        }
        None => None,
    };
    let setup = Setup {
        plan,
        sizes,
        seed: args.seed.unwrap_or(1),
        ftl: ftl.as_ref(),
    };
    let (ran, ftl_report) = match args.record {
        RecordKind::U32 => setup.run::<u32>(),
        RecordKind::U64 => setup.run::<u64>(),
        RecordKind::KeyPayload => setup.run::<KeyPayload>(),
    }?;
    let report = SimSortReport::new((args.record, mode, model), setup, ran, ftl_report);
    print_report(&report);
    if let Some(path) = &args.json {
        write_json(path, &report).context("writing the JSON report")?;
    }
    Ok(())
}

impl SimSortReport {
    fn new(
        (record, mode, model): (RecordKind, IoMode, FlashModel),
        setup: Setup,
        ran: Ran,
        ftl: Option<FtlReport>,
    ) -> Self {
        let o = ran.outcome;
        SimSortReport {
            records: setup.plan.records,
            record,
            seed: setup.seed,
            mode,
            model,
            device: ran.device,
            predicted: setup.plan.volumes(),
            plan: setup.plan,
            upload: ran.upload,
            run_formation: o.run_formation,
            merge: o.total - o.run_formation,
            total: o.total,
            cost: model.cost(&o.total),
            checksum: o.checksum,
            equals_std_sort: true,
            ftl,
        }
    }
}

/// One simulated sort's parameters.
struct Setup<'a> {
    plan: Plan,
    sizes: BlockSizes,
    seed: u64,
    ftl: Option<&'a FtlDevice>,
}

/// What one sort on a device gave.
struct Ran {
    outcome: SortOutcome,
    upload: IoStats,
    device: String,
}

impl Setup<'_> {
    fn run<R: Record>(&self) -> Result<(Ran, Option<FtlReport>), Failure> {
        let input = generate::<R>(self.plan.records, self.seed)?;
        match self.ftl {
            None => {
                let mut io = SimIo::with_data(self.sizes);
                let (ran, _) = self.sort_on(&mut io, &input, |_| ())?;
                Ok((ran, None))
            }
            Some(device) => {
                let mut io: EmFtl = device.build(self.sizes)?;
                let start = snapshot(&io);
                let (ran, [mark, end]) = self.sort_on(&mut io, &input, snapshot)?;
                let report = device.report(&io, [&start, &mark, &end])?;
                Ok((ran, Some(report)))
            }
        }
    }

    /// Upload, sort, read back and compare; `probe` sees the device after the upload and
    /// after the sort (before the read-back).
    fn sort_on<I: BlockIo, R: Record, T>(
        &self,
        io: &mut I,
        input: &[R],
        probe: impl Fn(&I) -> T,
    ) -> Result<(Ran, [T; 2]), Failure> {
        let layout = Layout::packed(&self.plan);
        write_records(io, layout.input, input).map_err(failure)?;
        let upload = io.stats();
        let mark = probe(io);
        let outcome = sort::<R, _>(io, &self.plan, &layout).map_err(failure)?;
        let end = probe(io);
        let sorted =
            read_records::<R, _>(io, layout.output, input.len() as u64).map_err(failure)?;
        let mut expected = input.to_vec();
        expected.sort_by_key(Record::key);
        if let Some(at) = sorted.iter().zip(&expected).position(|(a, b)| a != b) {
            return Err(Failure::Runtime(anyhow!(
                "the output read back differs from the input sorted by std at record {at}"
            )));
        }
        let ran = Ran {
            outcome,
            upload,
            device: io.describe(),
        };
        Ok((ran, [mark, end]))
    }
}

/// `n` random records of seed `seed`: the same records `em gen --seed` writes to a file.
fn generate<R: Record>(n: u64, seed: u64) -> Result<Vec<R>, Failure> {
    let mut records = Vec::new();
    usize::try_from(n)
        .ok()
        .and_then(|n| records.try_reserve_exact(n).ok())
        .ok_or_else(|| {
            Failure::Runtime(anyhow!(
                "cannot hold {n} {} records in memory for a simulated sort",
                R::KIND.name()
            ))
        })?;
    records.extend(random_records::<R>(seed).take(n as usize));
    Ok(records)
}

/// Mebibytes with two decimals (simulated volumes are small).
fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / f64::from(1 << 20))
}

fn print_report(r: &SimSortReport) {
    let plan = &r.plan;
    println!(
        "sorted {} {} records ({} MiB) generated with seed {} on the {}",
        r.records,
        r.record.name(),
        mib(r.records * r.record.bytes()),
        r.seed,
        r.device
    );
    println!(
        "mode {}, M = {}, B_r = {}, B_w = {}: runs of {} records, {} runs ({} kept in memory), \
         fan-in {}, {} merge pass(es), serial",
        r.mode.name(),
        format_size(r.model.memory_bytes),
        format_size(plan.sizes.read_bytes),
        format_size(plan.sizes.write_bytes),
        plan.run_records,
        plan.runs,
        plan.resident,
        plan.fan_in,
        plan.merge_passes()
    );
    let mut table = Table::new(["phase", "RDV [MiB]", "WRV [MiB]", "read I/Os", "write I/Os"]);
    for (name, io) in [
        ("input upload", r.upload),
        ("run formation", r.run_formation),
        ("merge", r.merge),
        ("total (algorithm)", r.total),
    ] {
        table.push([
            name.to_string(),
            mib(io.read_bytes),
            mib(io.write_bytes),
            io.read_ios.to_string(),
            io.write_ios.to_string(),
        ]);
    }
    print!("{}", table.render());
    print_checks(r);
    if let Some(ftl) = &r.ftl {
        println!();
        ftl.print();
    }
}

fn print_checks(r: &SimSortReport) {
    let p = r.predicted;
    println!(
        "predicted by the plan: RDV {} MiB, WRV {} MiB, {} read and {} write I/Os",
        mib(p.read_bytes),
        mib(p.write_bytes),
        p.read_ios,
        p.write_ios
    );
    println!(
        "cost of the sort's I/O: general model x + c*y = {:.0}; unit-cost model {} MiB moved",
        r.cost.general,
        mib(r.cost.unit_bytes)
    );
    println!(
        "verified: keys in order across every block; multiset checksum {:016x} over {} records \
         equals the input's",
        r.checksum.sum, r.checksum.count
    );
    println!(
        "read back: the output equals the input sorted by std's stable sort ({} records)",
        r.records
    );
}
