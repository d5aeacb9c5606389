//! One run: build the device and FTL, precondition, replay, report.

use crate::latency::LatencyHistogram;
use crate::mapping_time::{MappingTimes, TimedMapping};
use crate::metrics::{
    DeviceRecord, EraseSpread, ReadWriteLatency, RunReport, TraceRecord, WallClock,
};
use crate::precondition::{Precondition, precondition};
use crate::{Host, HostCounters, Progress, SimError};
use flashkit_core::units::approximate_size;
use flashkit_core::{BlockId, Geometry, NandPreset, OpCounters, StateHasher, Timing, sub_seed};
use flashkit_device::{CountsOnly, NandDevice, PayloadStore};
use flashkit_ftl::vet::{Fold, PfNode, Sip, Swiss};
use flashkit_ftl::{
    AnyFtl, Emt, FtlKind, FtlOptions, FtlStats, Mapping, PageFtl, PageTable, Pd, Pf, Simulated,
    Vet, VetNodes, VetTable, WithFtl,
};
use flashkit_trace::binary::TraceReader;
use flashkit_trace::formats::layout::{AddressMapping, PreparedTrace};
use flashkit_trace::workload::{Workload, WorkloadSpec};
use flashkit_trace::{Op, Request, RequestResult};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The simulated device: a named part, resized.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeviceSpec {
    /// Preset name (see [`NandPreset::ALL`]).
    pub preset: String,
    /// Logical (host-visible) capacity in bytes.
    pub capacity_bytes: u64,
    /// Spare capacity as a fraction of the logical capacity.
    pub over_provisioning: f64,
    /// Override the preset's page size.
    pub page_size_bytes: Option<u32>,
    /// Override the preset's pages per block.
    pub pages_per_block: Option<u32>,
    /// Override the preset's endurance.
    pub endurance_cycles: Option<u32>,
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec {
            preset: NandPreset::MLC_4K.name.into(),
            capacity_bytes: 1 << 30,
            over_provisioning: 0.07,
            page_size_bytes: None,
            pages_per_block: None,
            endurance_cycles: None,
        }
    }
}

impl RunSpec {
    /// [`RunSpec::check`], and before it, whether a trace fits the device: a trace larger
    /// than the device is the first thing to say (a small device's FTL error said nothing of
    /// the trace), and a sweep's cell learned it only when it ran.
    pub fn check_on(&self, source: &Source) -> Result<(), SimError> {
        match source {
            Source::Trace(prepared) => check_fits(self, prepared)?,
            Source::Workload(workload) => workload.validate()?,
            Source::Binary(_) => {}
        }
        self.check()
    }

    /// The heap the run's model comes to hold, estimated from the geometry before anything
    /// is allocated: the device model's ([`NandDevice::heap_estimate`]) and the FTL's
    /// ([`FtlKind::heap_estimate`]: its tables exactly, what grows with an allowance, an
    /// extent mapping at its worst).
    pub fn memory_estimate(&self) -> Result<u64, SimError> {
        let (_, geometry, _) = self.device.resolve()?;
        Ok(self.memory_estimate_on(&geometry))
    }

    fn memory_estimate_on(&self, geometry: &Geometry) -> u64 {
        NandDevice::<CountsOnly>::heap_estimate(geometry)
            + self.ftl.heap_estimate(geometry, &self.options)
    }

    /// Refuse a run that cannot start (impossible geometry, an FTL that does not fit it)
    /// before anything is allocated or read.
    pub fn check(&self) -> Result<(), SimError> {
        let (_, geometry, _) = self.device.resolve()?;
        self.ftl
            .check(&geometry, &self.options)
            .map_err(|e| SimError::Config(format!("{}: {e}", self.label)))
    }
}

/// Refuse runs whose models would not fit in memory, `concurrent` of them at a time: the
/// largest estimates ([`RunSpec::memory_estimate`]) of that many together against what this
/// machine has available ([`crate::machine::available_memory`]). A model larger than memory
/// died on its allocation (or was killed by the OOM killer) before any output; refused
/// here, the message says what it needs and what there is.
pub fn check_memory(specs: &[RunSpec], concurrent: usize) -> Result<(), SimError> {
    check_memory_within(specs, concurrent, crate::machine::available_memory())
}

/// [`check_memory`] against `available` bytes (and what says so); `None` lets every run
/// through.
pub fn check_memory_within(
    specs: &[RunSpec],
    concurrent: usize,
    available: Option<(u64, &str)>,
) -> Result<(), SimError> {
    let Some((available, source)) = available else {
        return Ok(());
    };
    let mut estimates = specs
        .iter()
        .map(|spec| Ok((spec.memory_estimate()?, spec.label.as_str())))
        .collect::<Result<Vec<_>, SimError>>()?;
    estimates.sort_by_key(|&(bytes, _)| std::cmp::Reverse(bytes));
    estimates.truncate(concurrent.max(1));
    let needed: u64 = estimates.iter().map(|&(bytes, _)| bytes).sum();
    if needed <= available {
        return Ok(());
    }
    let runs: Vec<String> = estimates
        .iter()
        .map(|&(bytes, label)| format!("{label} {}", approximate_size(bytes)))
        .collect();
    let what = if estimates.len() > 1 {
        format!(
            "the models of {} runs side by side need about {} ({}; --jobs 1 runs one at a \
             time)",
            estimates.len(),
            approximate_size(needed),
            runs.join(", ")
        )
    } else {
        format!(
            "the model needs about {} ({})",
            approximate_size(needed),
            runs.join(", ")
        )
    };
    Err(SimError::Config(format!(
        "{what}, and this machine has {} available ({source}): use a smaller --capacity",
        approximate_size(available),
    )))
}

impl DeviceSpec {
    /// The preset, the validated geometry and the endurance.
    pub fn resolve(&self) -> Result<(NandPreset, Geometry, u32), SimError> {
        let preset = NandPreset::by_name(&self.preset).ok_or_else(|| {
            let names: Vec<_> = NandPreset::ALL.iter().map(|p| p.name).collect();
            SimError::Config(format!(
                "unknown device preset {:?} (expected one of: {})",
                self.preset,
                names.join(", ")
            ))
        })?;
        let mut builder = preset.geometry();
        if let Some(bytes) = self.page_size_bytes {
            builder = builder.page_size_bytes(bytes);
        }
        if let Some(pages) = self.pages_per_block {
            builder = builder.pages_per_block(pages);
        }
        let geometry = builder
            .logical_bytes(self.capacity_bytes)
            .over_provisioning(self.over_provisioning)
            .build()
            .map_err(|e| SimError::Config(format!("device: {e}")))?;
        let endurance = self.endurance_cycles.unwrap_or(preset.endurance_cycles);
        if endurance == 0 {
            // Every block would be worn out before its first erase.
            return Err(SimError::Config(
                "device: endurance 0 erase cycles: a block must survive at least one".into(),
            ));
        }
        Ok((preset, geometry, endurance))
    }

    /// Bytes in an erase block (the preset's, with the overrides), whatever the capacity.
    pub fn block_bytes(&self) -> Result<u64, SimError> {
        let preset = NandPreset::by_name(&self.preset)
            .ok_or_else(|| SimError::Config(format!("unknown device preset {:?}", self.preset)))?;
        let page = self.page_size_bytes.unwrap_or(preset.page_size_bytes);
        let pages = self.pages_per_block.unwrap_or(preset.pages_per_block);
        Ok(u64::from(page) * u64::from(pages))
    }

    /// This device with its logical capacity sized to a prepared trace: the blocks the
    /// trace needs under its address mapping (its footprint in blocks, for the compact
    /// mapping), at least [`MIN_TRACE_BLOCKS`] so that the over-provisioning leaves an FTL
    /// spare blocks to work with. Over-provisioning comes on top, as always.
    pub fn sized_for(&self, trace: &PreparedTrace) -> Result<DeviceSpec, SimError> {
        let block = self.block_bytes()?;
        if trace.map.required_bytes() == 0 {
            return Err(SimError::Config(format!(
                "trace {} has no request that reads, writes or trims data: there is nothing \
                 to size a device for (give --capacity to replay it anyway)",
                trace.name.display()
            )));
        }
        let blocks = trace
            .map
            .required_bytes()
            .div_ceil(block)
            .max(MIN_TRACE_BLOCKS);
        Ok(DeviceSpec {
            capacity_bytes: blocks * block,
            ..self.clone()
        })
    }
}

/// The fewest logical blocks a device sized from a trace gets: at 7% over-provisioning,
/// 128 blocks leave 9 spare, enough for the page FTL's GC threshold and frontiers.
pub const MIN_TRACE_BLOCKS: u64 = 128;

/// Everything that defines a run except its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Name in tables.
    pub label: String,
    /// FTL scheme.
    pub ftl: FtlKind,
    /// FTL options.
    pub options: FtlOptions,
    /// Device.
    pub device: DeviceSpec,
    /// Preconditioning before the measured replay.
    pub precondition: Option<Precondition>,
    /// Seed of every random choice (workload generation and preconditioning).
    pub seed: u64,
}

/// Where requests come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A generated workload (seeded by the run's seed).
    Workload(WorkloadSpec),
    /// A flashkit binary trace file, addresses unchanged (the benchmark's input).
    Binary(PathBuf),
    /// A trace file in any format, read once already to map its addresses onto the device
    /// (see `flashkit_trace::formats::layout`); replayed by a second pass.
    Trace(Arc<PreparedTrace>),
}

/// A report and its wall-clock measurement.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// The deterministic report.
    pub report: RunReport,
    /// Wall-clock figures.
    pub wall: WallClock,
}

const PROGRESS_STEP: u64 = 1 << 16;

/// Run `spec` on `source` with a counts-only device (the fast path).
pub fn run(
    spec: &RunSpec,
    source: &Source,
    progress: &dyn Progress,
) -> Result<RunOutcome, SimError> {
    match source {
        Source::Workload(workload) => {
            let canonical = format!("{} seed={}", workload.canonical(), spec.seed);
            let trace = TraceRecord {
                description: format!("generated {} workload", workload.pattern.name()),
                digest: format!(
                    "{:032x}",
                    flashkit_trace::binary::digest(canonical.as_bytes())
                ),
                requests: 0,
            };
            let requests = Workload::new(workload.clone(), sub_seed(spec.seed, "workload"))?;
            run_with::<CountsOnly, _>(spec, requests.map(Ok), trace, progress)
        }
        Source::Binary(path) => {
            let reader = TraceReader::open(path)?;
            let info = reader.info();
            let trace = TraceRecord {
                description: if info.description.is_empty() {
                    path.display().to_string()
                } else {
                    info.description.clone()
                },
                digest: format!("{:032x}", info.source_digest),
                requests: 0,
            };
            run_with::<CountsOnly, _>(spec, reader, trace, progress)
        }
        Source::Trace(prepared) => {
            check_fits(spec, prepared)?;
            let stream = prepared.open()?;
            let trace = TraceRecord {
                description: describe(prepared),
                digest: format!("{:032x}", prepared.digest),
                requests: 0,
            };
            run_with::<CountsOnly, _>(spec, stream, trace, progress)
        }
    }
}

/// What a trace replay records as its input: file, format, reading options, mapping.
fn describe(prepared: &PreparedTrace) -> String {
    let o = &prepared.options;
    let mut text = format!(
        "{} ({}, {} address mapping",
        prepared.name.display(),
        prepared.format.map_or("empty", |f| f.name()),
        prepared.map.mapping()
    );
    if let Some(volume) = o.volume {
        text.push_str(&format!(", volume {volume} only"));
    }
    if o.sort_by_time {
        text.push_str(", sorted by time");
    }
    if prepared.format == Some(flashkit_trace::formats::Format::Blkparse) {
        text.push_str(&format!(
            ", {:?} events",
            o.blkparse_event.unwrap_or_default()
        ));
    }
    if let Some(unit) = o.time_unit {
        text.push_str(&format!(", time unit {unit}"));
    }
    if o.skip_bad_lines {
        text.push_str(&format!(
            ", {} bad lines skipped",
            prepared.report.bad_lines
        ));
    }
    text.push(')');
    text
}

/// A trace larger than the device is an error that says what to change.
fn check_fits(spec: &RunSpec, prepared: &PreparedTrace) -> Result<(), SimError> {
    let (_, geometry, _) = spec.device.resolve()?;
    let needed = prepared.map.required_bytes();
    if needed <= geometry.logical_bytes() {
        return Ok(());
    }
    let what = match prepared.map.mapping() {
        AddressMapping::Compact => format!(
            "its footprint of {} touched blocks of {} B",
            prepared.map.touched_chunks(),
            prepared.map.chunk_bytes()
        ),
        AddressMapping::Identity => format!(
            "its highest addresses, {} volume(s) laid out one after another",
            prepared.map.volumes().len()
        ),
    };
    let mut advice = format!(
        "raise --capacity to at least {needed}, or leave --capacity out to size the device \
         from the trace"
    );
    if prepared.map.mapping() == AddressMapping::Identity {
        advice.push_str(", or use --address-map compact to keep only the blocks it touches");
    }
    Err(SimError::Config(format!(
        "trace {} needs a logical capacity of {needed} B ({what}) but the device holds {} B: \
         {advice}",
        prepared.name.display(),
        geometry.logical_bytes()
    )))
}

/// Run `spec` on `requests` with payload store `S`; `trace` describes the input (its request
/// count is filled in here).
pub fn run_with<S: PayloadStore, I: Iterator<Item = RequestResult>>(
    spec: &RunSpec,
    requests: I,
    trace: TraceRecord,
    progress: &dyn Progress,
) -> Result<RunOutcome, SimError> {
    let (_, geometry, endurance) = spec.device.resolve()?;
    let device = NandDevice::<S>::new(geometry).with_endurance(endurance);
    let ftl = AnyFtl::build(spec.ftl, device, &spec.options)
        .map_err(|e| SimError::Config(format!("{}: {e}", spec.label)))?;
    ftl.with_concrete(Drive {
        spec,
        requests,
        trace,
        progress,
    })
}

/// [`drive`] compiled for each concrete FTL, so the replay loop calls the scheme's `write`
/// directly (see [`WithFtl`]).
struct Drive<'a, I> {
    spec: &'a RunSpec,
    requests: I,
    trace: TraceRecord,
    progress: &'a dyn Progress,
}

impl<I: Iterator<Item = RequestResult>> WithFtl for Drive<'_, I> {
    type Output = Result<RunOutcome, SimError>;

    fn run<F: Simulated>(self, ftl: F) -> Self::Output {
        drive(
            self.spec,
            ftl,
            self.requests,
            self.trace,
            self.progress,
            &|_| {},
        )
        .map(|(outcome, _)| outcome)
    }
}

/// Run `spec` on `source` with the page FTL's mapping (page table, VET or EMT, as
/// `spec.ftl` says) wrapped in a [`TimedMapping`]: the run's report, and the wall-clock time
/// of every mapping call of the measured part (preconditioning excluded). The report is the
/// one [`run`] gives, state hash included: timing changes nothing the FTL decides.
pub fn run_with_mapping_times(
    spec: &RunSpec,
    source: &Source,
    progress: &dyn Progress,
) -> Result<(RunOutcome, MappingTimes), SimError> {
    let (requests, trace) = open_source(spec, source)?;
    let (_, geometry, endurance) = spec.device.resolve()?;
    spec.check()?;
    let device = NandDevice::<CountsOnly>::new(geometry).with_endurance(endurance);
    let pages = geometry.logical_pages();
    let vet_config = &spec.options.vet;
    match spec.ftl {
        FtlKind::Page => timed(
            spec,
            device,
            PageTable::new(pages),
            requests,
            trace,
            progress,
        ),
        FtlKind::Emt => timed(spec, device, Emt::new(pages), requests, trace, progress),
        FtlKind::Vet => {
            let (nodes, table) = (spec.options.vet.nodes, spec.options.vet.table);
            match (nodes, table) {
                (VetNodes::Pf, VetTable::Cuckoo) => {
                    let vet = Vet::<Pf>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
                (VetNodes::Pd, VetTable::Cuckoo) => {
                    let vet = Vet::<Pd>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
                (VetNodes::Pf, VetTable::Swiss) => {
                    let vet = Vet::<Pf, Swiss<PfNode, Fold>>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
                (VetNodes::Pd, VetTable::Swiss) => {
                    let vet = Vet::<Pd, Swiss<u32, Fold>>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
                (VetNodes::Pf, VetTable::Std) => {
                    let vet = Vet::<Pf, Swiss<PfNode, Sip>>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
                (VetNodes::Pd, VetTable::Std) => {
                    let vet = Vet::<Pd, Swiss<u32, Sip>>::with_config(pages, vet_config);
                    timed(spec, device, vet, requests, trace, progress)
                }
            }
        }
        FtlKind::Block | FtlKind::Bast | FtlKind::Fast | FtlKind::OFast => {
            Err(SimError::Config(format!(
                "{}: mapping times are measured for the page-mapped FTLs (page, vet, emt), not {}",
                spec.label, spec.ftl
            )))
        }
    }
}

type Requests = Box<dyn Iterator<Item = RequestResult>>;

fn timed<M: Mapping>(
    spec: &RunSpec,
    device: NandDevice<CountsOnly>,
    mapping: M,
    requests: Requests,
    trace: TraceRecord,
    progress: &dyn Progress,
) -> Result<(RunOutcome, MappingTimes), SimError> {
    let ftl = PageFtl::new(device, TimedMapping::new(mapping), spec.options.page)
        .map_err(|e| SimError::Config(format!("{}: {e}", spec.label)))?;
    let reset = |ftl: &PageFtl<NandDevice<CountsOnly>, TimedMapping<M>>| ftl.mapping().reset();
    let (outcome, host) = drive(spec, ftl, requests, trace, progress, &reset)?;
    let times = host.ftl().mapping().times();
    Ok((outcome, times))
}

/// A source's requests behind one pointer (the timed path does not need the benchmark's
/// static dispatch), and the record of what they are.
fn open_source(spec: &RunSpec, source: &Source) -> Result<(Requests, TraceRecord), SimError> {
    let record = |description: String, digest: String| TraceRecord {
        description,
        digest,
        requests: 0,
    };
    Ok(match source {
        Source::Workload(workload) => {
            let canonical = format!("{} seed={}", workload.canonical(), spec.seed);
            let digest = flashkit_trace::binary::digest(canonical.as_bytes());
            let requests = Workload::new(workload.clone(), sub_seed(spec.seed, "workload"))?;
            (
                Box::new(requests.map(Ok)),
                record(
                    format!("generated {} workload", workload.pattern.name()),
                    format!("{digest:032x}"),
                ),
            )
        }
        Source::Binary(path) => {
            let reader = TraceReader::open(path)?;
            let info = reader.info();
            let description = if info.description.is_empty() {
                path.display().to_string()
            } else {
                info.description.clone()
            };
            let digest = format!("{:032x}", info.source_digest);
            (Box::new(reader), record(description, digest))
        }
        Source::Trace(prepared) => {
            check_fits(spec, prepared)?;
            let stream = prepared.open()?;
            (
                Box::new(stream),
                record(describe(prepared), format!("{:032x}", prepared.digest)),
            )
        }
    })
}

/// Precondition, replay and report, whatever the FTL; `measure_start` is called on the FTL
/// when the measured part begins. Returns the host, FTL inside, for a caller that wants more
/// than the report.
fn drive<F: Simulated, I: Iterator<Item = RequestResult>>(
    spec: &RunSpec,
    ftl: F,
    requests: I,
    mut trace: TraceRecord,
    progress: &dyn Progress,
    measure_start: &dyn Fn(&F),
) -> Result<(RunOutcome, Host<F>), SimError> {
    let (preset, geometry, endurance) = spec.device.resolve()?;
    let mut host = Host::new(ftl);

    let precondition_start = Instant::now();
    if let Some(pre) = &spec.precondition {
        precondition(&mut host, pre, spec.seed, progress)?;
    }
    measure_start(host.ftl());
    let precondition_seconds = precondition_start.elapsed().as_secs_f64();
    let before = Baseline {
        host: *host.counters(),
        flash: *host.ftl().device().counters(),
        stats: host.ftl().stats(),
    };

    let (_, upper) = requests.size_hint();
    progress.start("replay", upper.map(|n| n as u64));
    let start = Instant::now();
    let mut latency = RequestLatency::default();
    let index = replay(&mut host, requests, preset.timing, &mut latency, progress)?;
    let replay_seconds = start.elapsed().as_secs_f64();
    progress.advance(index % PROGRESS_STEP);
    progress.finish();
    trace.requests = index;

    let device = DeviceRecord {
        preset: preset.name.into(),
        geometry,
        timing: preset.timing,
        endurance_cycles: endurance,
    };
    let report = run_report(spec, &host, &before, device, trace, &latency);
    let per_second = |n: u64| {
        if replay_seconds > 0.0 {
            n as f64 / replay_seconds
        } else {
            0.0
        }
    };
    let wall = WallClock {
        replay_seconds,
        precondition_seconds,
        requests_per_second: per_second(index),
        host_pages_written_per_second: per_second(report.host.pages_written),
    };
    Ok((RunOutcome { report, wall }, host))
}

/// The counters when the measured part of a run begins (preconditioning done).
struct Baseline {
    host: HostCounters,
    flash: OpCounters,
    stats: FtlStats,
}

/// The report of the measured part: counts since `before`, and the device and FTL as they
/// are at the end.
fn run_report<F: Simulated>(
    spec: &RunSpec,
    host: &Host<F>,
    before: &Baseline,
    device: DeviceRecord,
    trace: TraceRecord,
    latency: &RequestLatency,
) -> RunReport {
    let host_counts = host.counters().since(&before.host);
    let ftl = host.ftl();
    let flash = ftl.device().counters().since(&before.flash);
    let erase_counts: Vec<u32> = (0..device.geometry.blocks())
        .map(|b| ftl.device().block_status(BlockId(b)).erase_count)
        .collect();
    let mut hasher = StateHasher::new();
    ftl.hash_state(&mut hasher);
    let written = host_counts.pages_written;
    let timing = device.timing;
    let model_memory_estimate_bytes = spec.memory_estimate_on(&device.geometry);
    RunReport {
        flashkit_version: env!("CARGO_PKG_VERSION").into(),
        label: spec.label.clone(),
        ftl: spec.ftl,
        options: spec.options,
        device,
        precondition: spec.precondition,
        seed: spec.seed,
        trace,
        host: host_counts,
        flash,
        write_amplification: (written > 0).then(|| flash.programs.total() as f64 / written as f64),
        erase_spread: EraseSpread::of(&erase_counts),
        erase_histogram: erase_histogram(&erase_counts),
        latency: ReadWriteLatency {
            read: latency.read.summary(),
            write: latency.write.summary(),
        },
        ftl_stats: stats_since(ftl.stats(), &before.stats),
        elapsed_ns: timing.serial_cost_ns(&flash),
        mapping_memory: ftl.mapping_memory(),
        model_memory_estimate_bytes,
        state_hash: format!("{:016x}", hasher.finish()),
    }
}

/// Requests are read this far ahead of the one being submitted, so that the FTL can
/// prefetch their mapping entries: the misses of 16 requests overlap instead of queueing.
const LOOKAHEAD: usize = 16;

/// Submit every request in order; returns how many were submitted. A trace error surfaces
/// after every request before it has been submitted, as if there were no lookahead.
fn replay<F: Simulated, I: Iterator<Item = RequestResult>>(
    host: &mut Host<F>,
    mut requests: I,
    timing: Timing,
    latency: &mut RequestLatency,
    progress: &dyn Progress,
) -> Result<u64, SimError> {
    let mut cost_so_far = timing.serial_cost_ns(host.ftl().device().counters());
    // A ring of the next LOOKAHEAD requests: each is prefetched when it enters.
    let mut ring: [Option<Request>; LOOKAHEAD] = [None; LOOKAHEAD];
    let mut pending_error = None;
    let mut index = 0u64;
    let mut ended = false;
    for slot in &mut ring {
        match requests.next() {
            Some(Ok(request)) => {
                host.prefetch(&request);
                *slot = Some(request);
            }
            Some(Err(error)) => {
                pending_error = Some(error);
                ended = true;
                break;
            }
            None => {
                ended = true;
                break;
            }
        }
    }
    loop {
        let slot = (index % LOOKAHEAD as u64) as usize;
        let Some(request) = ring[slot].take() else {
            break;
        };
        if !ended {
            match requests.next() {
                Some(Ok(next)) => {
                    host.prefetch(&next);
                    ring[slot] = Some(next);
                }
                Some(Err(error)) => {
                    pending_error = Some(error);
                    ended = true;
                }
                None => ended = true,
            }
        }
        host.submit(index, &request)?;
        let cost = timing.serial_cost_ns(host.ftl().device().counters());
        match request.op {
            Op::Read => latency.read.record(cost - cost_so_far),
            Op::Write => latency.write.record(cost - cost_so_far),
            Op::Trim | Op::Flush => {}
        }
        cost_so_far = cost;
        index += 1;
        if index.is_multiple_of(PROGRESS_STEP) {
            progress.advance(PROGRESS_STEP);
        }
    }
    match pending_error {
        Some(error) => Err(error.into()),
        None => Ok(index),
    }
}

/// Latency histograms of the measured requests.
#[derive(Default)]
struct RequestLatency {
    read: LatencyHistogram,
    write: LatencyHistogram,
}

/// (erase count, blocks with it), ascending.
fn erase_histogram(counts: &[u32]) -> Vec<(u32, u32)> {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let mut histogram: Vec<(u32, u32)> = Vec::new();
    for count in sorted {
        match histogram.last_mut() {
            Some((value, blocks)) if *value == count => *blocks += 1,
            _ => histogram.push((count, 1)),
        }
    }
    histogram
}

/// Counters and means of the measured part; gauges (the `extra` map) keep their final values.
fn stats_since(now: FtlStats, before: &FtlStats) -> FtlStats {
    now.since(before)
}

#[cfg(test)]
mod tests;
