//! The runs: every scheme on every workload through the page FTL, each replay timed
//! `spec.runs` times, and Fig. 16's growing address spaces through the mappings alone.

use super::inputs::{Input, Scheme};
use super::paper::HMT_LOG_SHARE;
use super::{Row, ScaleRow, VetSpec};
use crate::repro::LabError;
use flashkit_ftl::{Emt, FtlKind, FtlOptions, Gauge, InsertScheme, Mapping, Pf, Vet, hmt_memory};
use flashkit_sim::latency::LatencySummary;
use flashkit_sim::machine::MemoryLatency;
use flashkit_sim::{Progress, RunSpec, replay_mapping_only, run_with_mapping_times};
use flashkit_trace::workload::{Pattern, SizeDist, Workload, WorkloadSpec};

/// The timed runs: a row a scheme and workload, the timer's own cost, and the machine's
/// load latency around them.
pub(super) struct Timed {
    pub(super) rows: Vec<Row>,
    pub(super) timer_overhead_ns: f64,
    pub(super) memory_latency: MemoryLatency,
}

/// Every scheme on every input, `spec.runs` times each, in the tables' order. The hash
/// tables only Table 4 compares run on the paper's columns alone, unless `spec.scheme`
/// names them.
pub(super) fn time_runs(
    spec: &VetSpec,
    inputs: &[Input],
    schemes: &[Scheme],
    progress: &dyn Progress,
) -> Result<Timed, LabError> {
    let mut rows = Vec::new();
    let mut timer_overhead_ns = 0.0;
    let (timed, memory_latency) = MemoryLatency::around(|| -> Result<(), LabError> {
        for input in inputs {
            for scheme in schemes {
                if scheme.paper_columns_only() && spec.scheme.is_empty() && input.paper.is_none() {
                    continue;
                }
                let mut runs = Vec::new();
                for _ in 0..spec.runs {
                    let (row, overhead) = run_one(input, scheme, spec.seed, progress)?;
                    timer_overhead_ns = overhead;
                    runs.push(row);
                }
                rows.push(median_run(runs)?);
            }
        }
        Ok(())
    });
    timed?;
    Ok(Timed {
        rows,
        timer_overhead_ns,
        memory_latency,
    })
}

/// One replay of `input` through `scheme`, timed: its row and the timer's cost a
/// measurement.
fn run_one(
    input: &Input,
    scheme: &Scheme,
    seed: u64,
    progress: &dyn Progress,
) -> Result<(Row, f64), LabError> {
    let Input {
        name: workload,
        paper,
        device,
        source,
    } = input;
    let (label, kind) = (scheme.label, scheme.kind);
    let spec = RunSpec {
        label: format!("{workload} {label}"),
        ftl: kind,
        options: FtlOptions {
            vet: scheme.vet,
            ..FtlOptions::default()
        },
        device: device.clone(),
        precondition: None,
        seed,
    };
    let (outcome, times) =
        run_with_mapping_times(&spec, source, progress).map_err(LabError::from_sim)?;
    let r = &outcome.report;
    let g = r.device.geometry;
    let pages = u64::from(g.logical_pages());
    let log_blocks = (f64::from(g.logical_pages() / g.pages_per_block()) * HMT_LOG_SHARE).ceil();
    let times = times.summary();
    // The canonical-extent figures: VET's, or EMT's own (which generates none).
    let extra = |vet: Gauge, emt: Option<Gauge>| {
        let gauge = if kind == FtlKind::Emt { emt? } else { vet };
        r.ftl_stats.extra.get(&gauge).copied()
    };
    let (write_mean, read_mean) = (times.update.mean_ns, times.translate.mean_ns);
    let row = Row {
        workload: workload.clone(),
        scheme: label.into(),
        paper_workload: paper.map(str::to_string),
        logical_bytes: g.logical_bytes(),
        packed_bytes: r.mapping_memory.packed_bytes,
        heap_bytes: r.mapping_memory.heap_bytes,
        pmt_bytes: pages * 4,
        hmt_bytes: hmt_memory(pages, g.pages_per_block(), log_blocks as u32),
        write: times.update,
        read: times.translate,
        relocate: times.relocate,
        merge: times.merge,
        prefetch: times.prefetch,
        canonical_generated_per_write: extra(Gauge::VetCanonicalGeneratedPerWrite, None),
        canonical_overlapped_per_write: extra(
            Gauge::VetCanonicalOverlappedPerWrite,
            Some(Gauge::EmtOverlappedPerWrite),
        ),
        canonical_returned_per_read: extra(
            Gauge::VetCanonicalReturnedPerRead,
            Some(Gauge::EmtReturnedPerRead),
        ),
        probes_per_read: extra(Gauge::VetProbesPerRead, None),
        gc_runs: r.ftl_stats.gc_runs,
        state_hash: r.state_hash.clone(),
        runs: 1,
        write_means_ns: vec![write_mean],
        read_means_ns: vec![read_mean],
    };
    Ok((row, times.timer_overhead_ns))
}

/// One row from repeated runs of the same replay: each kind of call's summary from the run
/// whose mean for it is the median (the lower middle one of an even count), every run's
/// means kept. Refuses runs that differ in anything but time: the replay is deterministic.
pub(super) fn median_run(runs: Vec<Row>) -> Result<Row, LabError> {
    let first = runs
        .first()
        .expect("invariant: spec.runs is at least 1")
        .clone();
    for other in &runs[1..] {
        if (
            other.state_hash.as_str(),
            other.packed_bytes,
            other.heap_bytes,
        ) != (
            first.state_hash.as_str(),
            first.packed_bytes,
            first.heap_bytes,
        ) {
            return Err(LabError::Run(
                format!(
                    "{} {}: two runs of one replay ended in different states ({} and {}): \
                     the replay is not deterministic, which is a bug",
                    first.workload, first.scheme, first.state_hash, other.state_hash
                )
                .into(),
            ));
        }
    }
    let median = |pick: fn(&Row) -> &LatencySummary| {
        let mut order: Vec<&Row> = runs.iter().collect();
        order.sort_by(|a, b| pick(a).mean_ns.total_cmp(&pick(b).mean_ns));
        pick(order[(order.len() - 1) / 2]).clone()
    };
    let means = |pick: fn(&Row) -> &LatencySummary| runs.iter().map(|r| pick(r).mean_ns).collect();
    Ok(Row {
        write: median(|r| &r.write),
        read: median(|r| &r.read),
        relocate: median(|r| &r.relocate),
        merge: median(|r| &r.merge),
        prefetch: median(|r| &r.prefetch),
        runs: runs.len(),
        write_means_ns: means(|r| &r.write),
        read_means_ns: means(|r| &r.read),
        ..first
    })
}

/// Fig. 16: Spew-like writes over growing address spaces, mappings alone.
pub(super) fn scalability(spec: &VetSpec) -> Result<Vec<ScaleRow>, LabError> {
    let (requests, max_gib) = if spec.quick {
        (2_000, 32)
    } else {
        (spec.spew_requests, spec.spew_max_gib)
    };
    let mut rows = Vec::new();
    let mut gib = 16u64;
    while gib <= max_gib {
        let space = gib << 30;
        let mut spew = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Uniform {
                min_bytes: 8 << 10,
                max_bytes: 1 << 20,
            },
            requests,
            space,
        );
        spew.align_bytes = 8 << 10;
        let pages = (space / 4096) as u32;
        let workload = || {
            Workload::new(spew.clone(), flashkit_core::sub_seed(spec.seed, "spew"))
                .map_err(|e| LabError::Config(e.into()))
        };
        let mut vet = Vet::<Pf>::new(pages, InsertScheme::Bis);
        let report = replay_mapping_only(&mut vet, workload()?.map(Ok), pages, 4096, 128)
            .map_err(LabError::from_sim)?;
        let mut emt = Emt::new(pages);
        replay_mapping_only(&mut emt, workload()?.map(Ok), pages, 4096, 128)
            .map_err(LabError::from_sim)?;
        let blocks = u64::from(pages) / 128;
        rows.push(ScaleRow {
            space_bytes: space,
            pmt_bytes: u64::from(pages) * 4,
            hmt_bytes: hmt_memory(
                u64::from(pages),
                128,
                (blocks as f64 * HMT_LOG_SHARE).ceil() as u32,
            ),
            vet_bytes: vet.memory().packed_bytes,
            emt_bytes: emt.memory().packed_bytes,
            mean_write_bytes: report.pages_written as f64 * 4096.0 / report.writes.max(1) as f64,
        });
        gib *= 2;
    }
    Ok(rows)
}
