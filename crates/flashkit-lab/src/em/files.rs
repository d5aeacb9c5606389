//! Real files of fixed-width records: generating one ([`generate`]), sorting one with the
//! external multi-way mergesort ([`sort`]), and timing the in-memory radix sort of one
//! ([`sort_in_memory`], the in-memory bound of the sorting benchmark).

use super::{ModelParams, em_error, gb, kinds, records_bytes};
use crate::repro::LabError;
use crate::temporaries::Temporaries;
use flashkit_core::Progress;
use flashkit_core::units::format_size;
use flashkit_em::io::AlignedBuf;
use flashkit_em::model::{Cost, FlashModel};
use flashkit_em::record::{KeyPayload, Record, RecordKind};
use flashkit_em::sort::files::{
    FileSortReport, FileSortSpec, InputOrder, IoMode, count_records, generate_file_with_progress,
    scratch_file, sort_file_with_progress,
};
use flashkit_em::sort::{FanIn, MAX_RESIDENT};
use flashkit_report::Table;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A file of records to generate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenSpec {
    /// Number of records.
    pub records: u64,
    /// Their type.
    #[serde(with = "kinds::RecordKindDef")]
    pub record: RecordKind,
    /// Their order.
    #[serde(with = "kinds::InputOrderDef")]
    pub order: InputOrder,
    /// Seed.
    pub seed: u64,
}

impl Default for GenSpec {
    fn default() -> Self {
        GenSpec {
            records: 1 << 20,
            record: RecordKind::U64,
            order: InputOrder::Random,
            seed: 1,
        }
    }
}

/// What [`generate`] wrote.
#[derive(Clone, Debug, Serialize)]
pub struct GenReport {
    /// The spec.
    #[serde(flatten)]
    pub spec: GenSpec,
    /// Bytes written.
    pub bytes: u64,
    /// The backend, and whether `O_DIRECT` was used.
    pub backend: String,
    /// Wall-clock seconds.
    pub seconds: f64,
}

impl GenReport {
    /// One line: what was written to `output` (the path as the user named it).
    pub fn render(&self, output: &Path) -> String {
        format!(
            "wrote {} {} records ({}) to {} in {:.2} s ({})\n",
            self.spec.records,
            self.spec.record.name(),
            format_size(self.bytes),
            output.display(),
            self.seconds,
            self.backend
        )
    }
}

/// Write the records of `spec` to `path`, reporting to `progress`.
pub fn generate(
    path: &Path,
    spec: &GenSpec,
    progress: &dyn Progress,
) -> Result<GenReport, LabError> {
    // A file past 2^64 bytes cannot exist; it was written until the disk was full.
    let bytes = records_bytes(spec.records, spec.record)?;
    let started = Instant::now();
    let (n, order, seed) = (spec.records, spec.order, spec.seed);
    let backend = match spec.record {
        RecordKind::U32 => generate_file_with_progress::<u32>(path, n, order, seed, progress),
        RecordKind::U64 => generate_file_with_progress::<u64>(path, n, order, seed, progress),
        RecordKind::KeyPayload => {
            generate_file_with_progress::<KeyPayload>(path, n, order, seed, progress)
        }
    }
    .map_err(em_error)?;
    Ok(GenReport {
        spec: *spec,
        bytes,
        backend,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A file to sort with the external multi-way mergesort.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SortSpec {
    /// Input file of raw little-endian records.
    pub input: PathBuf,
    /// Output file (created or replaced).
    pub output: PathBuf,
    /// Directory of the scratch file (`None`: the output's).
    pub tmp: Option<PathBuf>,
    /// Record type.
    #[serde(with = "kinds::RecordKindDef")]
    pub record: RecordKind,
    /// Block sizes to transfer with.
    #[serde(with = "kinds::IoModeDef")]
    pub io: IoMode,
    /// Merge fan-in.
    #[serde(with = "kinds::FanInDef")]
    pub fan_in: FanIn,
    /// Runs kept in memory for the merge at most (0: the paper's algorithm).
    pub resident_runs: u64,
    /// Ask for `O_DIRECT` (otherwise: through the page cache).
    pub direct: bool,
    /// Threads each merge splits over by key range (`None`: every core; tl merges
    /// serially, and refuses a number).
    pub threads: Option<usize>,
    /// The model.
    pub params: ModelParams,
}

impl Default for SortSpec {
    fn default() -> Self {
        SortSpec {
            input: PathBuf::new(),
            output: PathBuf::new(),
            tmp: None,
            record: RecordKind::U64,
            io: IoMode::Flash,
            fan_in: FanIn::Model,
            resident_runs: MAX_RESIDENT,
            direct: true,
            threads: None,
            params: ModelParams::default(),
        }
    }
}

/// A file sort's figures (its JSON: the sort's report, the model, the cost at the device,
/// and the wall-clock time).
#[derive(Clone, Debug, Serialize)]
pub struct SortReport {
    /// What the sort did.
    pub report: FileSortReport,
    /// The model.
    pub model: FlashModel,
    /// The device's I/O under both models.
    pub cost: Cost,
    /// Wall-clock seconds of the sort.
    pub wall_seconds: f64,
    /// The record type.
    #[serde(skip)]
    pub record: RecordKind,
}

/// Refuse a spec the sort cannot run, before anything is written: threads in mode tl, a
/// missing input, bad model parameters, a scratch directory that is not one. Returns the
/// model and the scratch directory.
fn check(spec: &SortSpec) -> Result<(FlashModel, PathBuf), LabError> {
    if spec.io == IoMode::Tl && spec.threads.is_some() {
        return Err(LabError::spec(
            "threads",
            "does nothing in mode tl (the translation layer merges serially): drop it",
        ));
    }
    check_input(&spec.input)?;
    let model = spec.params.model()?;
    let scratch_dir = match &spec.tmp {
        Some(dir) if !dir.is_dir() => {
            return Err(LabError::spec(
                "tmp",
                format!("{} is not a directory", dir.display()),
            ));
        }
        Some(dir) => dir.clone(),
        None => spec
            .output
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from),
    };
    Ok((model, scratch_dir))
}

/// Refuse an input that does not exist (a pipe or a directory is refused where the sort
/// opens it).
fn check_input(input: &Path) -> Result<(), LabError> {
    if input.exists() {
        return Ok(());
    }
    Err(LabError::spec(
        "input",
        format!(
            "{}: no such file; give a file of raw records",
            input.display()
        ),
    ))
}

/// Sort `spec.input` into `spec.output`, the scratch file held by `temporaries` while it
/// exists, run formation and each merge pass reported to `progress`. The output is checked
/// as it is written (key order, the multiset checksum).
pub fn sort(
    spec: &SortSpec,
    temporaries: &dyn Temporaries,
    progress: &dyn Progress,
) -> Result<SortReport, LabError> {
    let (model, scratch_dir) = check(spec)?;
    let _scratch = temporaries.hold(&scratch_file(&scratch_dir));
    let job = FileSortSpec {
        input: spec.input.clone(),
        output: spec.output.clone(),
        scratch_dir,
        memory_bytes: model.memory_bytes,
        sizes: model.sizes,
        mode: spec.io,
        fan_in: spec.fan_in,
        direct: spec.direct,
        resident_runs: spec.resident_runs,
        threads: spec.threads.unwrap_or_else(crate::exec::cores),
    };
    let started = Instant::now();
    let report = match spec.record {
        RecordKind::U32 => sort_file_with_progress::<u32>(&job, progress),
        RecordKind::U64 => sort_file_with_progress::<u64>(&job, progress),
        RecordKind::KeyPayload => sort_file_with_progress::<KeyPayload>(&job, progress),
    }
    .map_err(em_error)?;
    Ok(SortReport {
        cost: model.cost(&report.device),
        report,
        model,
        wall_seconds: started.elapsed().as_secs_f64(),
        record: spec.record,
    })
}

/// ` (parts per pass: 4, 3)`: how many parts each merge pass split into, when any.
fn parts_per_pass(parts: &[usize]) -> String {
    if parts.is_empty() {
        return String::new();
    }
    let list: Vec<String> = parts.iter().map(usize::to_string).collect();
    format!(" (parts per pass: {})", list.join(", "))
}

impl SortReport {
    /// The phases' volumes in GB, I/Os, times and rates, and the device's.
    pub fn table(&self) -> Table {
        let o = &self.report.outcome;
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
            ("device", self.report.device, o.total_seconds),
        ] {
            let moved = (io.read_bytes + io.write_bytes) as f64;
            table.push([
                name.to_string(),
                gb(io.read_bytes),
                gb(io.write_bytes),
                io.read_ios.to_string(),
                io.write_ios.to_string(),
                format!("{seconds:.2}"),
                format!("{:.0}", moved / seconds.max(1e-9) / 1e6),
            ]);
        }
        table
    }

    /// The report as `flashkit em sort` prints it.
    pub fn render(&self) -> String {
        let (r, kind, wall) = (&self.report, self.record, self.wall_seconds);
        let (o, plan) = (&r.outcome, &r.outcome.plan);
        let input = r.records * kind.bytes();
        let mut out = format!(
            "sorted {} {} records ({}) in {:.2} s: {:.0} MB/s of input\n",
            r.records,
            kind.name(),
            format_size(input),
            wall,
            input as f64 / wall / 1e6
        );
        out += &format!(
            "mode {}, M = {}, runs of {} records: {} runs ({} kept in memory), fan-in {}, {} \
             merge pass(es) on up to {} thread(s){}; {}\n",
            r.mode.name(),
            format_size(self.model.memory_bytes),
            plan.run_records,
            plan.runs,
            plan.resident,
            plan.fan_in,
            plan.merge_passes(),
            r.merge_threads,
            parts_per_pass(&o.merge_parts),
            r.backend
        );
        out += &self.table().render();
        let p = r.predicted;
        out += &format!(
            "predicted by the plan: RDV {} GB, WRV {} GB, {} read and {} write I/Os\n",
            gb(p.read_bytes),
            gb(p.write_bytes),
            p.read_ios,
            p.write_ios
        );
        out += &format!(
            "cost at the device: general model x + c*y = {:.0}; unit-cost model {} GB moved\n",
            self.cost.general,
            gb(self.cost.unit_bytes)
        );
        if let Some(tl) = r.tl {
            out += &format!(
                "translation layer: {} page reads served from its write buffers, {} B_w \
                 blocks at peak\n",
                tl.buffer_hits, tl.peak_blocks
            );
        }
        out += &format!(
            "verified: keys in order across every block; multiset checksum {:016x} over {} \
             records equals the input's\n",
            o.checksum.sum, o.checksum.count
        );
        out
    }
}

/// The in-memory radix sort of a whole file, timed.
#[derive(Clone, Debug, Serialize)]
pub struct InMemoryReport {
    /// Records sorted.
    pub records: u64,
    /// Their type.
    pub record: RecordKind,
    /// Bytes sorted.
    pub bytes: u64,
    /// Wall-clock seconds of the radix sort alone (not the loading).
    pub seconds: f64,
}

impl InMemoryReport {
    /// One line.
    pub fn render(&self) -> String {
        format!(
            "in-memory radix sort of {} {} records ({}): {:.2} s\n",
            self.records,
            self.record.name(),
            format_size(self.bytes),
            self.seconds
        )
    }
}

/// Load the whole of `input` (records of `record`) into memory and time the in-memory radix
/// sort alone (the in-memory bound of the sorting benchmark); writes nothing.
pub fn sort_in_memory(input: &Path, record: RecordKind) -> Result<InMemoryReport, LabError> {
    check_input(input)?;
    match record {
        RecordKind::U32 => in_memory::<u32>(input),
        RecordKind::U64 => in_memory::<u64>(input),
        RecordKind::KeyPayload => in_memory::<KeyPayload>(input),
    }
}

fn in_memory<R: Record>(input: &Path) -> Result<InMemoryReport, LabError> {
    use std::io::Read;
    let records = count_records::<R>(input).map_err(em_error)?;
    let bytes = records as usize * R::BYTES;
    let mut data = AlignedBuf::new(bytes);
    let failed = |what: &str, e: std::io::Error| {
        LabError::Run(format!("{what} {}: {e}", input.display()).into())
    };
    let mut file = std::fs::File::open(input).map_err(|e| failed("cannot open", e))?;
    file.read_exact(&mut data.bytes_mut()[..bytes])
        .map_err(|e| failed("reading", e))?;
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
        return Err(LabError::Run(
            "in-memory radix sort left records out of order".into(),
        ));
    }
    Ok(InMemoryReport {
        records,
        record: R::KIND,
        bytes: bytes as u64,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporaries::Unwatched;
    use flashkit_core::NoProgress;

    fn params() -> ModelParams {
        ModelParams {
            memory: 64 << 10,
            br: 4 << 10,
            bw: 16 << 10,
            c: 1.0,
        }
    }

    fn read_u32(path: &Path) -> Vec<u32> {
        std::fs::read(path)
            .expect("read")
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn a_generated_file_sorts_to_its_records_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (input, output) = (dir.path().join("in.u32"), dir.path().join("out.u32"));
        let gen_spec = GenSpec {
            records: 20_000,
            record: RecordKind::U32,
            order: InputOrder::Reversed,
            seed: 3,
        };
        let generated = generate(&input, &gen_spec, &NoProgress).expect("generates");
        assert_eq!(generated.bytes, 80_000);
        assert!(
            generated
                .render(&input)
                .starts_with("wrote 20000 u32 records")
        );
        let spec = SortSpec {
            input: input.clone(),
            output: output.clone(),
            record: RecordKind::U32,
            direct: false,
            resident_runs: 0,
            threads: Some(1),
            params: params(),
            ..SortSpec::default()
        };
        let sorted = sort(&spec, &Unwatched, &NoProgress).expect("sorts");
        let r = &sorted.report;
        assert_eq!(r.records, 20_000);
        assert_eq!(r.outcome.checksum.count, 20_000);
        assert_eq!(sorted.cost, sorted.model.cost(&r.device));
        assert_eq!(
            (r.outcome.total.read_bytes, r.outcome.total.write_bytes),
            (r.predicted.read_bytes, r.predicted.write_bytes)
        );
        let mut expected = read_u32(&input);
        expected.sort_unstable();
        assert_eq!(read_u32(&output), expected);
        assert_eq!(sorted.table().rows.len(), 4);
        // Serial: every merge pass in one part.
        let passes = r.outcome.plan.merge_passes();
        assert!(passes >= 1 && r.outcome.merge_parts == vec![1; passes]);
        let serial = format!("(parts per pass: {}); ", vec!["1"; passes].join(", "));
        assert!(sorted.render().contains(&serial), "{}", sorted.render());
        assert_eq!(parts_per_pass(&[4, 3]), " (parts per pass: 4, 3)");
        assert_eq!(parts_per_pass(&[]), "");
        let json = serde_json::to_string(&sorted).expect("json");
        let at = |key: &str| json.find(&format!("\"{key}\":")).expect(key);
        assert!(json.starts_with("{\"report\":"), "{json}");
        assert!(
            at("model") < at("cost") && at("cost") < at("wall_seconds"),
            "{json}"
        );
        assert!(
            !json.contains("\"record\":"),
            "the record type is the text's only"
        );
        let in_memory = sort_in_memory(&input, RecordKind::U32).expect("sorts");
        assert_eq!((in_memory.records, in_memory.bytes), (20_000, 80_000));
        assert!(matches!(
            sort_in_memory(&dir.path().join("missing"), RecordKind::U32),
            Err(LabError::Spec { field: "input", .. })
        ));
        // No scratch file left behind.
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        left.sort();
        assert_eq!(left, ["in.u32", "out.u32"]);
    }

    /// The sort's table and text, each figure read from its report; in mode tl, the
    /// translation layer's line; the scratch file's directory by default the output's.
    #[test]
    fn a_sorts_table_and_text_read_its_report() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (input, output) = (dir.path().join("in.kv"), dir.path().join("out.kv"));
        let gen_spec = GenSpec {
            records: 5_000,
            record: RecordKind::KeyPayload,
            ..GenSpec::default()
        };
        let generated = generate(&input, &gen_spec, &NoProgress).expect("generates");
        assert_eq!(
            generated.render(Path::new("in.kv")),
            format!(
                "wrote 5000 kv16 records (80000B) to in.kv in {:.2} s ({})\n",
                generated.seconds, generated.backend
            )
        );
        let spec = SortSpec {
            input: input.clone(),
            output,
            record: RecordKind::KeyPayload,
            io: IoMode::Tl,
            direct: false,
            params: params(),
            ..SortSpec::default()
        };
        let sorted = sort(&spec, &Unwatched, &NoProgress).expect("sorts");
        let (r, o) = (&sorted.report, &sorted.report.outcome);
        let rows = sorted.table().rows;
        let merge_seconds = o.total_seconds - o.run_formation_seconds;
        for (row, (name, io, seconds)) in rows.iter().zip([
            ("run formation", o.run_formation, o.run_formation_seconds),
            ("merge", o.total - o.run_formation, merge_seconds),
            ("total (algorithm)", o.total, o.total_seconds),
            ("device", r.device, o.total_seconds),
        ]) {
            let moved = (io.read_bytes + io.write_bytes) as f64;
            assert_eq!(
                *row,
                [
                    name.to_string(),
                    gb(io.read_bytes),
                    gb(io.write_bytes),
                    io.read_ios.to_string(),
                    io.write_ios.to_string(),
                    format!("{seconds:.2}"),
                    format!("{:.0}", moved / seconds.max(1e-9) / 1e6),
                ]
            );
        }
        let text = sorted.render();
        let tl = r.tl.expect("the translation layer's figures");
        let p = r.predicted;
        let plan = &o.plan;
        for line in [
            format!(
                "sorted 5000 kv16 records (80000B) in {:.2} s: {:.0} MB/s of input\n",
                sorted.wall_seconds,
                80_000.0 / sorted.wall_seconds / 1e6
            ),
            format!(
                "mode tl, M = 64KiB, runs of {} records: {} runs ({} kept in memory), fan-in {}, \
                 {} merge pass(es) on up to {} thread(s){}; {}\n",
                plan.run_records,
                plan.runs,
                plan.resident,
                plan.fan_in,
                plan.merge_passes(),
                r.merge_threads,
                parts_per_pass(&o.merge_parts),
                r.backend
            ),
            format!(
                "predicted by the plan: RDV {} GB, WRV {} GB, {} read and {} write I/Os\n",
                gb(p.read_bytes),
                gb(p.write_bytes),
                p.read_ios,
                p.write_ios
            ),
            format!(
                "cost at the device: general model x + c*y = {:.0}; unit-cost model {} GB \
                 moved\n",
                sorted.cost.general,
                gb(sorted.cost.unit_bytes)
            ),
            format!(
                "translation layer: {} page reads served from its write buffers, {} B_w blocks \
                 at peak\n",
                tl.buffer_hits, tl.peak_blocks
            ),
            format!(
                "multiset checksum {:016x} over 5000 records equals the input's\n",
                o.checksum.sum
            ),
        ] {
            assert!(text.contains(&line), "{line:?} in {text}");
        }
        let in_memory = sort_in_memory(&input, RecordKind::KeyPayload).expect("sorts");
        assert_eq!(
            in_memory.render(),
            format!(
                "in-memory radix sort of 5000 kv16 records (80000B): {:.2} s\n",
                in_memory.seconds
            )
        );
        // The scratch file goes beside the output, or where `tmp` says.
        let scratch = |output: &str, tmp: Option<PathBuf>| {
            check(&SortSpec {
                output: PathBuf::from(output),
                tmp,
                ..spec.clone()
            })
            .map(|(_, dir)| dir)
            .expect("valid")
        };
        assert_eq!(scratch("out", None), PathBuf::from("."));
        assert_eq!(scratch("/a/b/out", None), PathBuf::from("/a/b"));
        assert_eq!(
            scratch("out", Some(dir.path().to_path_buf())),
            dir.path().to_path_buf()
        );
    }

    #[test]
    fn what_the_sort_cannot_run_names_its_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("in.u64");
        generate(&input, &GenSpec::default(), &NoProgress).expect("generates");
        let base = SortSpec {
            input,
            output: dir.path().join("out"),
            params: params(),
            ..SortSpec::default()
        };
        for (spec, field) in [
            (
                SortSpec {
                    io: IoMode::Tl,
                    threads: Some(2),
                    ..base.clone()
                },
                "threads",
            ),
            (
                SortSpec {
                    input: dir.path().join("missing"),
                    ..base.clone()
                },
                "input",
            ),
            (
                SortSpec {
                    tmp: Some(dir.path().join("nowhere")),
                    ..base.clone()
                },
                "tmp",
            ),
        ] {
            match sort(&spec, &Unwatched, &NoProgress) {
                Err(LabError::Spec { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        let spec: SortSpec =
            serde_json::from_str(r#"{"io": "br", "fan_in": {"fixed": 4}, "record": "kv16"}"#)
                .expect("valid");
        assert_eq!(
            (spec.io, spec.fan_in, spec.record),
            (IoMode::ReadBlocks, FanIn::Fixed(4), RecordKind::KeyPayload)
        );
    }
}
