//! Sorting real files, and writing inputs for it.
//!
//! The input file is raw little-endian records; the output is the same records in key
//! order, cut to the input's exact length. Temporary runs live in one scratch file that is
//! removed afterwards. Four I/O modes follow the paper's Table 1 and the model: `flash`
//! (reads of `B_r`, writes of `B_w`), `br` and `bw` (one block size for both, as STXXL was
//! run), and `tl` (pages of `B_r`, temporary data through the translation layer, so the
//! scratch file sees only `B_w` writes).

use super::{Layout, Plan, SortOutcome, Volumes, exec};
use crate::EmError;
use crate::io::{
    AlignedBuf, BlockIo, BlockSizes, FileIo, IoStats, PhysicalIo, Segment, SimIo, SplitIo,
};
use crate::record::Record;
use crate::tl::{TlStats, TranslationLayer};
use flashkit_core::{NoProgress, Progress};
use flashkit_core::{SimRng, SimRngExt, same_file};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Which block sizes the sort transfers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoMode {
    /// Reads of `B_r`, writes of `B_w`: the unit-cost model's algorithm.
    Flash,
    /// `B_r` for both (Table 1's "B_r" column).
    ReadBlocks,
    /// `B_w` for both (Table 1's "B_w" column).
    WriteBlocks,
    /// Pages of `B_r`; temporary data through the translation layer (Table 1's "TL").
    Tl,
}

impl IoMode {
    /// Every mode.
    pub const ALL: [IoMode; 4] = [
        IoMode::Tl,
        IoMode::ReadBlocks,
        IoMode::WriteBlocks,
        IoMode::Flash,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Flash => "flash",
            IoMode::ReadBlocks => "br",
            IoMode::WriteBlocks => "bw",
            IoMode::Tl => "tl",
        }
    }

    /// The block sizes the algorithm sees.
    pub fn algorithm_sizes(self, device: BlockSizes) -> BlockSizes {
        let (br, bw) = (device.read_bytes, device.write_bytes);
        match self {
            IoMode::Flash => device,
            IoMode::ReadBlocks | IoMode::Tl => BlockSizes {
                read_bytes: br,
                write_bytes: br,
            },
            IoMode::WriteBlocks => BlockSizes {
                read_bytes: bw,
                write_bytes: bw,
            },
        }
    }

    /// A simulated device (with data) in this mode over a device of `sizes`: pages of
    /// `B_r` or `B_w`, or pages of `B_r` through the translation layer onto `B_w` blocks
    /// (flash is read as tl: the graph algorithms write single pages).
    pub fn simulated_device(self, sizes: BlockSizes) -> Box<dyn PhysicalIo> {
        match self {
            IoMode::ReadBlocks | IoMode::WriteBlocks => {
                Box::new(SimIo::with_data(self.algorithm_sizes(sizes)))
            }
            IoMode::Tl | IoMode::Flash => Box::new(
                TranslationLayer::new(SimIo::with_data(sizes), 2, None)
                    .expect("invariant: two buffers and no bound are valid"),
            ),
        }
    }

    /// A sort plan's predicted I/O as it reaches a device of `sizes` in this mode (under
    /// the translation layer, writes arrive as whole `B_w` blocks).
    pub fn device_prediction(self, plan: &Plan, sizes: BlockSizes) -> IoStats {
        let v = plan.volumes();
        let mut io = IoStats {
            read_ios: v.read_ios,
            write_ios: v.write_ios,
            read_bytes: v.read_bytes,
            write_bytes: v.write_bytes,
        };
        if self == IoMode::Tl {
            io.write_ios = v.write_bytes.div_ceil(sizes.write_bytes);
        }
        io
    }
}

impl std::str::FromStr for IoMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        IoMode::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| format!("unknown I/O mode {text:?} (expected flash, br, bw or tl)"))
    }
}

/// A file sort's parameters.
#[derive(Clone, Debug)]
pub struct FileSortSpec {
    /// Input file.
    pub input: PathBuf,
    /// Output file (created or truncated).
    pub output: PathBuf,
    /// Directory of the scratch file.
    pub scratch_dir: PathBuf,
    /// Memory `M`.
    pub memory_bytes: u64,
    /// The device's `B_r` and `B_w`.
    pub sizes: BlockSizes,
    /// Block sizes the algorithm uses.
    pub mode: IoMode,
    /// Fan-in policy.
    pub fan_in: super::FanIn,
    /// Ask for `O_DIRECT`.
    pub direct: bool,
    /// Runs to keep in memory for the merge at most (see [`Plan::keep_resident`]; 0 writes
    /// every run, as the paper's algorithm does).
    pub resident_runs: u64,
    /// Threads each merge may split over (1: serial). The translation-layer mode always
    /// merges serially: the layer's placement, and so its counts, depend on the order of
    /// the transfers.
    pub threads: usize,
}

/// What a file sort did.
#[derive(Clone, Debug, Serialize)]
pub struct FileSortReport {
    /// Records sorted.
    pub records: u64,
    /// The mode.
    pub mode: IoMode,
    /// The sort's own outcome (its I/O as the algorithm saw it).
    pub outcome: SortOutcome,
    /// The predicted volumes of the plan.
    pub predicted: Volumes,
    /// What reached the files (differs from the algorithm's I/O under the layer).
    pub device: IoStats,
    /// The translation layer's counters, in `tl` mode.
    pub tl: Option<TlStats>,
    /// The backend, and whether `O_DIRECT` was used.
    pub backend: String,
    /// Threads a merge could split over (1 in `tl` mode; fewer parts than this when memory
    /// or the keys do not allow them).
    pub merge_threads: usize,
}

const OUTPUT_BASE: u64 = 1 << 52;
const SCRATCH_BASE: u64 = 2 << 52;

/// Count the records of `path`, refusing a length that is not a whole number of them.
pub fn count_records<R: Record>(path: &Path) -> Result<u64, EmError> {
    if let Some(kind) = flashkit_core::not_a_file(path) {
        // Its length says nothing of what it holds, and a sort reads its input twice.
        return Err(EmError::Input {
            path: path.to_path_buf(),
            detail: format!(
                "is {kind}, not a file: the sort sizes its runs from the input's length and \
                 reads it more than once, so save the records to a file first"
            ),
        });
    }
    let len = std::fs::metadata(path)
        .map_err(|source| EmError::Io {
            path: path.to_path_buf(),
            op: "stat",
            offset: 0,
            source,
        })?
        .len();
    if !len.is_multiple_of(R::BYTES as u64) {
        return Err(EmError::Input {
            path: path.to_path_buf(),
            detail: format!(
                "length {len} B is not a whole number of {}-byte {} records (record {} is cut \
                 short after {} B)",
                R::BYTES,
                R::KIND.name(),
                len / R::BYTES as u64,
                len % R::BYTES as u64
            ),
        });
    }
    Ok(len / R::BYTES as u64)
}

/// The file that holds a sort's temporary runs in `dir` (one per process), removed when
/// [`sort_file`] returns; a caller that can be interrupted removes it itself then.
pub fn scratch_file(dir: &Path) -> PathBuf {
    dir.join(format!("flashkit-sort-{}.tmp", std::process::id()))
}

/// Sort the file `spec.input` into `spec.output`.
pub fn sort_file<R: Record>(spec: &FileSortSpec) -> Result<FileSortReport, EmError> {
    sort_file_with_progress::<R>(spec, &NoProgress)
}

/// [`sort_file`], reporting run formation and each merge pass to `progress`.
pub fn sort_file_with_progress<R: Record>(
    spec: &FileSortSpec,
    progress: &dyn Progress,
) -> Result<FileSortReport, EmError> {
    let records = count_records::<R>(&spec.input)?;
    if same_file(&spec.input, &spec.output) {
        // The output is created empty before the input is read: the records would be lost,
        // and the check would compare the empty output with the emptied input.
        return Err(EmError::Input {
            path: spec.output.clone(),
            detail: format!(
                "is the input file ({}); the sort writes its output while it still reads \
                 the input, so give the output another path",
                spec.input.display()
            ),
        });
    }
    let sizes = spec.mode.algorithm_sizes(spec.sizes);
    let plan = Plan::new(
        records,
        R::BYTES as u64,
        sizes,
        spec.memory_bytes,
        spec.fan_in,
    )?
    .keep_resident(spec.resident_runs);
    let area = plan.area_bytes();
    let layout = Layout {
        input: 0,
        output: OUTPUT_BASE,
        scratch: [SCRATCH_BASE, SCRATCH_BASE + area],
    };
    let scratch_path = scratch_file(&spec.scratch_dir);
    let result = run::<R>(spec, &plan, &layout, &scratch_path, progress);
    let _ = std::fs::remove_file(&scratch_path);
    let (outcome, device, tl, backend) = result?;
    Ok(FileSortReport {
        records,
        mode: spec.mode,
        predicted: plan.volumes(),
        outcome,
        device,
        tl,
        backend,
        merge_threads: if spec.mode == IoMode::Tl {
            1
        } else {
            spec.threads.max(1)
        },
    })
}

type RunResult = (SortOutcome, IoStats, Option<TlStats>, String);

fn run<R: Record>(
    spec: &FileSortSpec,
    plan: &Plan,
    layout: &Layout,
    scratch: &Path,
    progress: &dyn Progress,
) -> Result<RunResult, EmError> {
    let outer = vec![
        Segment::existing(&spec.input, 0),
        Segment::create(&spec.output, OUTPUT_BASE),
    ];
    let exact = plan.input_bytes();
    if spec.mode == IoMode::Tl {
        let files = FileIo::open(plan.sizes, outer, spec.direct)?;
        let physical = FileIo::open(spec.sizes, vec![Segment::create(scratch, 0)], spec.direct)?;
        let layer = TranslationLayer::new(physical, 2, None)?;
        let mut io = SplitIo::new(files, layer, SCRATCH_BASE);
        // Serial: the layer's placement depends on the order of the transfers.
        let outcome = exec::execute::<R, _>(&mut io, plan, layout, 1, progress)?;
        io.low.set_len(OUTPUT_BASE, exact)?;
        io.sync()?;
        let device = io.low.stats() + io.high.inner().stats();
        let backend = io.describe();
        Ok((outcome, device, Some(io.high.tl_stats()), backend))
    } else {
        let mut segments = outer;
        segments.push(Segment::create(scratch, SCRATCH_BASE));
        let mut io = FileIo::open(plan.sizes, segments, spec.direct)?;
        let outcome = exec::execute::<R, _>(&mut io, plan, layout, spec.threads.max(1), progress)?;
        io.set_len(OUTPUT_BASE, exact)?;
        io.sync()?;
        let backend = io.describe();
        Ok((outcome, io.stats(), None, backend))
    }
}

/// The order of a generated input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputOrder {
    /// Uniformly random keys.
    Random,
    /// Increasing keys.
    Sorted,
    /// Decreasing keys.
    Reversed,
    /// One key repeated.
    Equal,
}

impl std::str::FromStr for InputOrder {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "random" => Ok(InputOrder::Random),
            "sorted" => Ok(InputOrder::Sorted),
            "reversed" => Ok(InputOrder::Reversed),
            "equal" => Ok(InputOrder::Equal),
            other => Err(format!(
                "unknown input order {other:?} (expected random, sorted, reversed or equal)"
            )),
        }
    }
}

/// The random records of seed `seed`, in order: what [`generate_file`] writes for
/// [`InputOrder::Random`], so a file and a simulated sort of the same seed hold the same keys.
pub fn random_records<R: Record>(seed: u64) -> impl Iterator<Item = R> {
    let mut rng = SimRng::for_stream(seed, "em-gen");
    std::iter::repeat_with(move || R::random(&mut rng))
}

/// Write `records` records of type `R` to `path` (seeded), with `O_DIRECT` if allowed.
/// Returns the backend description.
pub fn generate_file<R: Record>(
    path: &Path,
    records: u64,
    order: InputOrder,
    seed: u64,
) -> Result<String, EmError> {
    generate_file_with_progress::<R>(path, records, order, seed, &NoProgress)
}

/// [`generate_file`], reporting the records written to `progress`.
pub fn generate_file_with_progress<R: Record>(
    path: &Path,
    records: u64,
    order: InputOrder,
    seed: u64,
    progress: &dyn Progress,
) -> Result<String, EmError> {
    progress.start("writing", Some(records));
    const CHUNK: u64 = 16 << 20;
    let sizes = BlockSizes::same(CHUNK)?;
    let mut io = FileIo::open(sizes, vec![Segment::create(path, 0)], true)?;
    let mut random = random_records::<R>(seed);
    let mut buf = AlignedBuf::new(CHUNK as usize);
    let per_chunk = CHUNK / R::BYTES as u64;
    let stride = (u64::MAX >> (64 - 8 * R::KEY_BYTES as u32)) / records.max(1);
    let mut written = 0u64;
    while written < records {
        let take = per_chunk.min(records - written) as usize;
        for (i, slot) in buf.records_mut::<R>()[..take].iter_mut().enumerate() {
            let index = written + i as u64;
            *slot = match order {
                InputOrder::Random => random
                    .next()
                    .expect("invariant: the random stream is endless"),
                InputOrder::Sorted => R::from_key(index * stride),
                InputOrder::Reversed => R::from_key((records - 1 - index) * stride),
                InputOrder::Equal => R::from_key(0x5eed),
            };
        }
        io.write(written * R::BYTES as u64, buf.bytes())?;
        progress.advance(take as u64);
        written += take as u64;
    }
    io.set_len(0, records * R::BYTES as u64)?;
    io.sync()?;
    Ok(io.describe())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::FanIn;

    fn sort_with<R: Record>(mode: IoMode, order: InputOrder, records: u64, threads: usize) {
        sort_keeping::<R>(mode, order, records, threads, 0);
    }

    fn sort_keeping<R: Record>(
        mode: IoMode,
        order: InputOrder,
        records: u64,
        threads: usize,
        resident_runs: u64,
    ) -> FileSortReport {
        let dir = tempfile::tempdir().expect("temp dir");
        let input = dir.path().join("in");
        let output = dir.path().join("out");
        generate_file::<R>(&input, records, order, 7).expect("generate");
        let spec = FileSortSpec {
            input: input.clone(),
            output: output.clone(),
            scratch_dir: dir.path().to_path_buf(),
            memory_bytes: 256 << 10,
            sizes: BlockSizes::new(4096, 16384).expect("valid"),
            mode,
            fan_in: FanIn::Model,
            direct: true,
            threads,
            resident_runs,
        };
        let report = sort_file::<R>(&spec).expect("sort");
        assert_eq!(report.records, records);
        let bytes = std::fs::read(&output).expect("output");
        assert_eq!(bytes.len() as u64, records * R::BYTES as u64);
        let sorted: &[R] = bytemuck::cast_slice(&bytes);
        assert!(sorted.windows(2).all(|w| w[0].key() <= w[1].key()));
        let (done, plan) = (report.outcome.total, report.predicted);
        assert_eq!(
            (
                done.read_bytes,
                done.write_bytes,
                done.read_ios,
                done.write_ios
            ),
            (
                plan.read_bytes,
                plan.write_bytes,
                plan.read_ios,
                plan.write_ios
            ),
            "{mode:?} on {threads} threads moved other volumes than the plan"
        );
        assert!(!scratch_file(dir.path()).exists());
        // The translation layer's placement depends on the order of the transfers: its
        // merges run serially whatever was asked.
        let threads = if mode == IoMode::Tl { 1 } else { threads };
        assert_eq!(report.merge_threads, threads, "{mode:?}");
        assert!(report.outcome.merge_parts.iter().all(|&p| p <= threads));
        report
    }

    #[test]
    fn modes_parse_from_their_names_and_predict_what_reaches_the_device() {
        let names: Vec<&str> = IoMode::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["tl", "br", "bw", "flash"]);
        for mode in IoMode::ALL {
            assert_eq!(mode.name().parse::<IoMode>(), Ok(mode));
        }
        assert_eq!(
            "b_r".parse::<IoMode>(),
            Err("unknown I/O mode \"b_r\" (expected flash, br, bw or tl)".to_string())
        );
        // 100,000 u64 in runs of 64 KiB, one pass: 800,000 B read and written twice.
        let device = BlockSizes::new(512, 2048).expect("valid");
        for mode in IoMode::ALL {
            let sizes = mode.algorithm_sizes(device);
            let plan = Plan::new(100_000, 8, sizes, 256 << 10, FanIn::Model).expect("plan");
            let v = plan.volumes();
            let predicted = mode.device_prediction(&plan, device);
            assert_eq!(
                (
                    predicted.read_bytes,
                    predicted.write_bytes,
                    predicted.read_ios
                ),
                (v.read_bytes, v.write_bytes, v.read_ios),
                "{mode:?}"
            );
            // Under the translation layer the pages of B_r reach the device as whole B_w
            // blocks: the 3,126 pages of 512 B written (1,600,512 B, each run padded to a
            // page) in 782 blocks of 2 KiB.
            if mode == IoMode::Tl {
                assert_eq!((v.write_bytes, v.write_ios), (1_600_512, 3126));
                assert_eq!(predicted.write_ios, 782);
            } else {
                assert_eq!(predicted.write_ios, v.write_ios, "{mode:?}");
            }
        }
    }

    #[test]
    fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let input = dir.path().join("in");
        generate_file::<u64>(&input, 4096, InputOrder::Random, 7).expect("generate");
        let before = std::fs::read(&input).expect("input");
        let link = dir.path().join("link");
        std::fs::hard_link(&input, &link).expect("hard link");
        let relative = dir.path().join(".").join("in");
        for output in [input.clone(), link, relative] {
            let spec = FileSortSpec {
                input: input.clone(),
                output: output.clone(),
                scratch_dir: dir.path().to_path_buf(),
                memory_bytes: 256 << 10,
                sizes: BlockSizes::new(4096, 16384).expect("valid"),
                mode: IoMode::Flash,
                fan_in: FanIn::Model,
                direct: false,
                threads: 1,
                resident_runs: 0,
            };
            let error = sort_file::<u64>(&spec).expect_err("the input is the output");
            assert!(
                matches!(&error, EmError::Input { path, .. } if *path == output),
                "{error}"
            );
            assert!(error.to_string().contains("is the input file"), "{error}");
            assert!(!error.to_string().contains("  "), "{error}");
            assert_eq!(std::fs::read(&input).expect("input"), before);
        }
    }

    /// Sorted and reversed inputs are the keys `0, s, 2s, ...` with the stride `s` that
    /// spreads them over the whole key space; equal inputs one key.
    #[test]
    fn generated_orders_spread_over_the_key_space() {
        fn keys<R: Record>(order: InputOrder, records: u64) -> Vec<u64> {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("in");
            generate_file::<R>(&path, records, order, 5).expect("generate");
            let bytes = std::fs::read(&path).expect("read");
            let records: &[R] = bytemuck::cast_slice(&bytes);
            records.iter().map(Record::key).collect()
        }
        let stride32 = u64::from(u32::MAX) / 1000;
        let sorted: Vec<u64> = (0..1000).map(|i| i * stride32).collect();
        assert_eq!(keys::<u32>(InputOrder::Sorted, 1000), sorted);
        let reversed: Vec<u64> = sorted.iter().rev().copied().collect();
        assert_eq!(keys::<u32>(InputOrder::Reversed, 1000), reversed);
        let stride64 = u64::MAX / 3;
        assert_eq!(
            keys::<u64>(InputOrder::Sorted, 3),
            [0, stride64, 2 * stride64]
        );
        assert_eq!(keys::<u64>(InputOrder::Equal, 3), [0x5eed; 3]);
        // Two 16 MiB chunks, the second holding one record: every key in place, progress
        // counted record by record.
        let records = (16 << 20) / 8 + 1;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("in");
        let log = flashkit_core::ProgressLog::default();
        generate_file_with_progress::<u64>(&path, records, InputOrder::Reversed, 5, &log)
            .expect("generate");
        let phases = log.phases();
        assert_eq!(
            phases,
            [flashkit_core::PhaseLog::new(
                "writing",
                Some(records),
                records
            )]
        );
        let bytes = std::fs::read(&path).expect("read");
        let written: &[u64] = bytemuck::cast_slice(&bytes);
        let stride = u64::MAX / records;
        assert!(
            written.len() as u64 == records
                && written.iter().rev().zip(0..).all(|(&k, i)| k == i * stride)
        );
        let random = keys::<u64>(InputOrder::Random, 1000);
        assert!(random.windows(2).any(|w| w[0] > w[1]) && random.windows(2).any(|w| w[0] < w[1]));
    }

    #[test]
    fn files_sort_in_every_mode() {
        for mode in IoMode::ALL {
            sort_with::<u64>(mode, InputOrder::Random, 100_000, 1);
            sort_with::<u64>(mode, InputOrder::Random, 100_000, 2);
        }
        sort_with::<u32>(IoMode::Tl, InputOrder::Reversed, 50_001, 1);
        sort_with::<u32>(IoMode::Flash, InputOrder::Reversed, 50_001, 3);
        sort_with::<crate::record::KeyPayload>(IoMode::Flash, InputOrder::Equal, 20_000, 2);
    }

    /// Runs kept in memory are merged from there: the output is the same sorted file, the
    /// volumes are still exactly the plan's, and smaller by the runs kept (100,000 u64 make
    /// 13 runs of 8192; with 256 KiB two fit beside the merge's buffers).
    #[test]
    fn files_sort_with_resident_runs_in_every_mode() {
        for mode in IoMode::ALL {
            for threads in [1, 2] {
                let all = sort_keeping::<u64>(mode, InputOrder::Random, 100_000, threads, 0);
                let kept = sort_keeping::<u64>(mode, InputOrder::Random, 100_000, threads, 3);
                assert_eq!(all.outcome.plan.resident, 0);
                let resident = kept.outcome.plan.resident;
                if kept.outcome.plan.merge_passes() > 1 {
                    // Mode bw: 16 KiB reads allow 7-way merges, two passes; nothing kept.
                    assert_eq!((mode, resident), (IoMode::WriteBlocks, 0));
                    assert_eq!(all.predicted, kept.predicted);
                    continue;
                }
                assert!(resident > 0, "{mode:?}: no run kept");
                let plan = &kept.outcome.plan;
                let block = plan.sizes.write_bytes;
                let saved: u64 = (plan.runs - resident..plan.runs)
                    .map(|i| (plan.run_len(i) * 8).div_ceil(block) * block)
                    .sum();
                assert_eq!(
                    all.predicted.write_bytes - kept.predicted.write_bytes,
                    saved,
                    "{mode:?}"
                );
                assert_eq!(all.outcome.checksum, kept.outcome.checksum);
            }
        }
        // Every run resident: an input of two runs never touches the scratch area.
        let two = sort_keeping::<u32>(IoMode::Flash, InputOrder::Reversed, 30_000, 2, 3);
        assert_eq!(two.outcome.plan.resident, two.outcome.plan.runs);
        // Reads: the input only, each run in 4 KiB blocks (16 + 14); writes: the output
        // only, 120,000 B in 16 KiB blocks.
        assert_eq!(two.predicted.read_bytes, (16 + 14) * 4096);
        assert_eq!(two.predicted.write_bytes, 8 * 16384);
        sort_keeping::<crate::record::KeyPayload>(IoMode::Flash, InputOrder::Equal, 20_000, 2, 3);
    }

    #[test]
    fn a_file_cut_mid_record_is_refused_with_its_length_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bad");
        std::fs::write(&path, [0u8; 13]).expect("write");
        let error = count_records::<u64>(&path).expect_err("13 bytes");
        let text = error.to_string();
        assert!(text.contains("13 B") && text.contains("record 1"), "{text}");
    }
}
