//! Sorting generated records on a simulated device: the counting simulator with data or
//! (with an [`FtlSpec`]) any FTL on the NAND model.
//!
//! The serial sort runs, so that the device sees one deterministic sequence of transfers:
//! the same seed gives the same report byte for byte. The input is written with
//! `write_records` (the upload), then sorted into `Layout::packed`'s four areas (the sort's
//! exact footprint). Besides the sort's own check (key order and the multiset checksum),
//! the output is read back and compared with the input sorted by std's stable sort.

use super::ftl::{EmFtl, FtlDevice, FtlReport, FtlSpec, snapshot};
use super::{ModelParams, em_error, kinds, mib};
use crate::repro::LabError;
use flashkit_core::Progress;
use flashkit_core::units::format_size;
use flashkit_em::io::{BlockIo, BlockSizes, IoStats, SimIo};
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::record::{Checksum, KeyPayload, Record, RecordKind};
use flashkit_em::sort::files::{IoMode, random_records};
use flashkit_em::sort::{
    FanIn, Layout, MAX_RESIDENT, Plan, SortOutcome, Volumes, read_records,
    sort_parallel_with_progress, write_records,
};
use flashkit_report::Table;
use serde::{Deserialize, Serialize};

/// A sort of generated random records (the records `em gen` writes for the same seed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordSortSpec {
    /// Records to sort.
    pub records: u64,
    /// Their type.
    #[serde(with = "kinds::RecordKindDef")]
    pub record: RecordKind,
    /// Seed of the records.
    pub seed: u64,
    /// Block sizes to transfer with: flash, read-blocks or write-blocks (tl sorts real
    /// files only: the layer carries their scratch file).
    #[serde(with = "kinds::IoModeDef")]
    pub io: IoMode,
    /// Merge fan-in.
    #[serde(with = "kinds::FanInDef")]
    pub fan_in: FanIn,
    /// Runs kept in memory for the merge at most (0: the paper's algorithm).
    pub resident_runs: u64,
    /// The model.
    pub params: ModelParams,
    /// Sort on this FTL instead of the counting simulator.
    pub ftl: Option<FtlSpec>,
}

impl Default for RecordSortSpec {
    fn default() -> Self {
        RecordSortSpec {
            records: 1 << 20,
            record: RecordKind::U64,
            seed: 1,
            io: IoMode::Flash,
            fan_in: FanIn::Model,
            resident_runs: MAX_RESIDENT,
            params: ModelParams::default(),
            ftl: None,
        }
    }
}

/// What a simulated sort did (its JSON; no wall-clock figure, so equal seeds give equal
/// files).
#[derive(Clone, Debug, Serialize)]
pub struct RecordSortReport {
    /// Records sorted.
    pub records: u64,
    /// Their type.
    pub record: RecordKind,
    /// Their seed.
    pub seed: u64,
    /// The I/O mode.
    pub mode: IoMode,
    /// The model.
    pub model: FlashModel,
    /// The device's one-line description.
    pub device: String,
    /// The schedule.
    pub plan: Plan,
    /// The plan's volumes.
    pub predicted: Volumes,
    /// Writing the generated input.
    pub upload: IoStats,
    /// Run formation's I/O.
    pub run_formation: IoStats,
    /// The merge passes' I/O.
    pub merge: IoStats,
    /// The sort's I/O (run formation and merge).
    pub total: IoStats,
    /// The models' cost of the sort's I/O.
    pub cost: Cost,
    /// The input's multiset checksum (the output's, verified).
    pub checksum: Checksum,
    /// The output read back equals the input sorted by std (the run fails otherwise).
    pub equals_std_sort: bool,
    /// The FTL's figures, on an FTL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ftl: Option<FtlReport>,
}

/// Sort `spec.records` generated records on the simulator or the FTL, reporting the sort's
/// phases to `progress`.
pub fn sort_records(
    spec: &RecordSortSpec,
    progress: &dyn Progress,
) -> Result<RecordSortReport, LabError> {
    let model = spec.params.model()?;
    if spec.io == IoMode::Tl {
        return Err(LabError::spec(
            "io",
            "tl sorts real files only (the layer carries their scratch file); a simulated \
             sort runs in mode flash, br or bw",
        ));
    }
    let sizes = spec.io.algorithm_sizes(model.sizes);
    let plan = Plan::new(
        spec.records,
        spec.record.bytes(),
        sizes,
        model.memory_bytes,
        spec.fan_in,
    )
    .map_err(em_error)?
    .keep_resident(spec.resident_runs);
    let device = match &spec.ftl {
        Some(ftl) => {
            ftl.check(model.sizes)?;
            Some(ftl.sized(4 * plan.area_bytes(), "the sort's footprint (4 areas)")?)
        }
        None => None,
    };
    let setup = Setup {
        plan,
        sizes,
        seed: spec.seed,
        ftl: device.as_ref(),
        progress,
    };
    let (ran, ftl) = match spec.record {
        RecordKind::U32 => setup.run::<u32>(),
        RecordKind::U64 => setup.run::<u64>(),
        RecordKind::KeyPayload => setup.run::<KeyPayload>(),
    }?;
    let o = ran.outcome;
    Ok(RecordSortReport {
        records: setup.plan.records,
        record: spec.record,
        seed: spec.seed,
        mode: spec.io,
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
    })
}

/// One simulated sort's parameters.
struct Setup<'a> {
    plan: Plan,
    sizes: BlockSizes,
    seed: u64,
    ftl: Option<&'a FtlDevice>,
    progress: &'a dyn Progress,
}

/// What one sort on a device gave.
struct Ran {
    outcome: SortOutcome,
    upload: IoStats,
    device: String,
}

impl Setup<'_> {
    fn run<R: Record>(&self) -> Result<(Ran, Option<FtlReport>), LabError> {
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
    ) -> Result<(Ran, [T; 2]), LabError> {
        let layout = Layout::packed(&self.plan);
        write_records(io, layout.input, input).map_err(em_error)?;
        let upload = io.stats();
        let mark = probe(io);
        let outcome =
            sort_parallel_with_progress::<R, _>(io, &self.plan, &layout, 1, self.progress)
                .map_err(em_error)?;
        let end = probe(io);
        let sorted =
            read_records::<R, _>(io, layout.output, input.len() as u64).map_err(em_error)?;
        let mut expected = input.to_vec();
        expected.sort_by_key(Record::key);
        if let Some(at) = sorted.iter().zip(&expected).position(|(a, b)| a != b) {
            return Err(LabError::Run(
                format!("the output read back differs from the input sorted by std at record {at}")
                    .into(),
            ));
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
fn generate<R: Record>(n: u64, seed: u64) -> Result<Vec<R>, LabError> {
    let mut records = Vec::new();
    usize::try_from(n)
        .ok()
        .and_then(|n| records.try_reserve_exact(n).ok())
        .ok_or_else(|| {
            LabError::Run(
                format!(
                    "cannot hold {n} {} records in memory for a simulated sort",
                    R::KIND.name()
                )
                .into(),
            )
        })?;
    records.extend(random_records::<R>(seed).take(n as usize));
    Ok(records)
}

impl RecordSortReport {
    /// The sort's phases: volumes in MiB and I/Os, the upload first.
    pub fn table(&self) -> Table {
        let mut table = Table::new(["phase", "RDV [MiB]", "WRV [MiB]", "read I/Os", "write I/Os"]);
        for (name, io) in [
            ("input upload", self.upload),
            ("run formation", self.run_formation),
            ("merge", self.merge),
            ("total (algorithm)", self.total),
        ] {
            table.push([
                name.to_string(),
                mib(io.read_bytes),
                mib(io.write_bytes),
                io.read_ios.to_string(),
                io.write_ios.to_string(),
            ]);
        }
        table
    }

    /// The report as `flashkit em sort --records` prints it.
    pub fn render(&self) -> String {
        let plan = &self.plan;
        let mut out = format!(
            "sorted {} {} records ({} MiB) generated with seed {} on the {}\n",
            self.records,
            self.record.name(),
            mib(self.records * self.record.bytes()),
            self.seed,
            self.device
        );
        out += &format!(
            "mode {}, M = {}, B_r = {}, B_w = {}: runs of {} records, {} runs ({} kept in \
             memory), fan-in {}, {} merge pass(es), serial\n",
            self.mode.name(),
            format_size(self.model.memory_bytes),
            format_size(plan.sizes.read_bytes),
            format_size(plan.sizes.write_bytes),
            plan.run_records,
            plan.runs,
            plan.resident,
            plan.fan_in,
            plan.merge_passes()
        );
        out += &self.table().render();
        out += &self.checks();
        if let Some(ftl) = &self.ftl {
            out += "\n";
            out += &ftl.render();
        }
        out
    }

    /// The prediction, the cost, and what was verified.
    fn checks(&self) -> String {
        let p = self.predicted;
        format!(
            "predicted by the plan: RDV {} MiB, WRV {} MiB, {} read and {} write I/Os\n\
             cost of the sort's I/O: general model x + c*y = {:.0}; unit-cost model {} MiB \
             moved\n\
             verified: keys in order across every block; multiset checksum {:016x} over {} \
             records equals the input's\n\
             read back: the output equals the input sorted by std's stable sort ({} records)\n",
            mib(p.read_bytes),
            mib(p.write_bytes),
            p.read_ios,
            p.write_ios,
            self.cost.general,
            mib(self.cost.unit_bytes),
            self.checksum.sum,
            self.checksum.count,
            self.records
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::NoProgress;
    use flashkit_ftl::FtlKind;

    /// 2^14 u64 records (128 KiB) in runs of 32 KiB, merged two at a time.
    fn small() -> RecordSortSpec {
        RecordSortSpec {
            records: 1 << 14,
            fan_in: FanIn::Fixed(2),
            params: ModelParams {
                memory: 64 << 10,
                br: 4 << 10,
                bw: 16 << 10,
                c: 1.0,
            },
            ..RecordSortSpec::default()
        }
    }

    #[test]
    fn the_simulator_moves_what_the_plan_predicts() {
        let report = sort_records(&small(), &NoProgress).expect("sorts");
        let p = report.predicted;
        assert_eq!(
            (report.total.read_bytes, report.total.write_bytes),
            (p.read_bytes, p.write_bytes)
        );
        assert_eq!(report.upload.write_bytes, 128 << 10);
        assert_eq!(report.upload.read_bytes, 0);
        assert_eq!(report.checksum.count, 1 << 14);
        assert!(report.equals_std_sort && report.ftl.is_none());
        assert_eq!(report.table().rows.len(), 4);
        assert!(
            report
                .render()
                .contains("generated with seed 1 on the simulated device")
        );
    }

    /// The phases add up to the sort, its cost is the model's, and the table and text read
    /// them; every record type sorts, with the runs kept in memory the spec asks for.
    #[test]
    fn the_report_reads_its_phases_and_every_record_type_sorts() {
        let spec = small();
        let r = sort_records(&spec, &NoProgress).expect("sorts");
        assert_eq!(r.run_formation + r.merge, r.total);
        assert!(r.merge.read_bytes > 0 && r.run_formation.read_bytes > 0);
        assert_eq!(r.cost, spec.params.model().expect("valid").cost(&r.total));
        let rows = r.table().rows;
        let phases = [
            ("input upload", r.upload),
            ("run formation", r.run_formation),
            ("merge", r.merge),
            ("total (algorithm)", r.total),
        ];
        for (row, (name, io)) in rows.iter().zip(phases) {
            assert_eq!(
                *row,
                [
                    name.to_string(),
                    mib(io.read_bytes),
                    mib(io.write_bytes),
                    io.read_ios.to_string(),
                    io.write_ios.to_string()
                ]
            );
        }
        let p = r.predicted;
        let text = r.render();
        for line in [
            format!(
                "sorted 16384 u64 records (0.12 MiB) generated with seed 1 on the {}\n",
                r.device
            ),
            format!(
                "mode flash, M = 64KiB, B_r = 4KiB, B_w = 16KiB: runs of {} records, {} runs \
                 ({} kept in memory), fan-in 2, {} merge pass(es), serial\n",
                r.plan.run_records,
                r.plan.runs,
                r.plan.resident,
                r.plan.merge_passes()
            ),
            format!(
                "predicted by the plan: RDV {} MiB, WRV {} MiB, {} read and {} write I/Os\n",
                mib(p.read_bytes),
                mib(p.write_bytes),
                p.read_ios,
                p.write_ios
            ),
            format!(
                "general model x + c*y = {:.0}; unit-cost model {} MiB moved\n",
                r.cost.general,
                mib(r.cost.unit_bytes)
            ),
            format!(
                "multiset checksum {:016x} over 16384 records equals the input's\n",
                r.checksum.sum
            ),
            "sorted by std's stable sort (16384 records)\n".to_string(),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        for record in [RecordKind::U32, RecordKind::KeyPayload] {
            let r = sort_records(
                &RecordSortSpec {
                    record,
                    resident_runs: 0,
                    ..small()
                },
                &NoProgress,
            )
            .expect("sorts");
            assert_eq!((r.record, r.checksum.count), (record, 1 << 14));
            assert_eq!(r.upload.write_bytes, (1 << 14) * record.bytes());
            assert_eq!(r.plan.resident, 0);
        }
    }

    #[test]
    fn on_an_ftl_the_figures_split_upload_from_sort_and_repeat_exactly() {
        let spec = RecordSortSpec {
            ftl: Some(FtlSpec {
                ftl: FtlKind::Page,
                ..FtlSpec::default()
            }),
            ..small()
        };
        let a = sort_records(&spec, &NoProgress).expect("sorts");
        let ftl = a.ftl.as_ref().expect("an FTL report");
        // 128 KiB of 4 KiB pages uploaded, nothing read back during the upload.
        assert_eq!(ftl.upload.host_pages_written, 32);
        assert_eq!(ftl.upload.host_pages_read, 0);
        assert_eq!(ftl.algorithm.host_pages_written * 4096, a.total.write_bytes);
        assert_eq!(ftl.footprint_bytes, 4 * a.plan.area_bytes());
        let table = ftl.table();
        let row = |label: &str| {
            table
                .rows
                .iter()
                .find(|r| r[0] == label)
                .unwrap_or_else(|| panic!("no {label:?} row"))
                .clone()
        };
        let written = ftl.algorithm.host_pages_written.to_string();
        assert_eq!(
            row("host pages written"),
            ["host pages written", "32", &written]
        );
        let programs = ftl.algorithm.flash.programs.total() as f64;
        let wa = ftl
            .algorithm
            .write_amplification
            .expect("pages were written");
        assert_eq!(wa, programs / ftl.algorithm.host_pages_written as f64);
        assert!(ftl.render().starts_with("FTL page/greedy on mlc-4k"));
        let b = sort_records(&spec, &NoProgress).expect("sorts");
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            serde_json::to_string(&b).expect("json")
        );
    }

    #[test]
    fn tl_and_a_too_small_capacity_are_the_specs_fault() {
        let tl = RecordSortSpec {
            io: IoMode::Tl,
            ..small()
        };
        assert!(matches!(
            sort_records(&tl, &NoProgress),
            Err(LabError::Spec { field: "io", .. })
        ));
        let tiny = RecordSortSpec {
            ftl: Some(FtlSpec {
                device: flashkit_sim::DeviceSpec {
                    capacity_bytes: 4096,
                    ..Default::default()
                },
                keep_capacity: true,
                ..FtlSpec::default()
            }),
            ..small()
        };
        assert!(matches!(
            sort_records(&tiny, &NoProgress),
            Err(LabError::Spec {
                field: "capacity",
                ..
            })
        ));
    }
}
