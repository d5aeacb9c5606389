//! Tests of the replay driver: steady-state reports, determinism, device sizing from a trace,
//! mapping timing that changes nothing, and configuration errors.

use super::*;
use crate::NoProgress;
use flashkit_ftl::{Gauge, Inspect, Verify, VetSearch};
use flashkit_trace::workload::{Pattern, SizeDist};

fn spec() -> RunSpec {
    RunSpec {
        label: "page/greedy".into(),
        ftl: FtlKind::Page,
        options: FtlOptions::default(),
        device: DeviceSpec {
            capacity_bytes: 64 << 20,
            ..DeviceSpec::default()
        },
        precondition: Some(Precondition::default()),
        seed: 11,
    }
}

fn workload() -> Source {
    Source::Workload(uniform(4096, 50_000))
}

/// Uniform requests of `bytes` over the 64 MiB device of [`spec`], a fifth of them reads.
fn uniform(bytes: u32, requests: u64) -> WorkloadSpec {
    let mut w = WorkloadSpec::new(
        Pattern::Uniform,
        SizeDist::Fixed { bytes },
        requests,
        64 << 20,
    );
    w.read_fraction = 0.2;
    w
}

#[test]
fn a_preconditioned_run_reports_steady_state_figures() {
    let outcome = run(&spec(), &workload(), &NoProgress).expect("runs");
    let r = &outcome.report;
    assert_eq!(r.trace.requests, 50_000);
    assert_eq!(r.host.write_requests + r.host.read_requests, 50_000);
    assert_eq!(
        r.flash.programs.host, r.host.pages_written,
        "every host page is one program"
    );
    let wa = r.write_amplification.expect("writes happened");
    assert!(wa > 1.5, "GC runs in steady state at 7% OP: WA {wa}");
    assert!(r.ftl_stats.gc_runs > 0);
    assert_eq!(
        r.elapsed_ns,
        r.flash.reads.total() * 60_000
            + r.flash.programs.total() * 800_000
            + r.flash.erases.total() * 2_500_000
    );
    assert_eq!(r.mapping_memory.packed_bytes, (64 << 20) / 4096 * 4);
}

#[test]
fn the_same_seed_gives_the_same_report_byte_for_byte() {
    let a = run(&spec(), &workload(), &NoProgress).expect("runs").report;
    let b = run(&spec(), &workload(), &NoProgress).expect("runs").report;
    let json_a = serde_json::to_string_pretty(&a).expect("json");
    let json_b = serde_json::to_string_pretty(&b).expect("json");
    assert_eq!(json_a, json_b);
    let mut other = spec();
    other.seed = 12;
    let c = run(&other, &workload(), &NoProgress).expect("runs").report;
    assert_ne!(
        a.state_hash, c.state_hash,
        "a different seed changes the state"
    );
}

fn msr_trace(dir: &std::path::Path) -> PathBuf {
    // 300 writes of 8 KiB spread over 12 GiB, then reads of half of them.
    let mut text = String::new();
    for i in 0..300u64 {
        text.push_str(&format!(
            "{},hm,0,Write,{},8192,1\n",
            1000 + i,
            i * 40_000_000 * 1024 % (12 << 30)
        ));
    }
    for i in (0..300u64).step_by(2) {
        text.push_str(&format!(
            "{},hm,0,Read,{},8192,1\n",
            5000 + i,
            i * 40_000_000 * 1024 % (12 << 30)
        ));
    }
    let path = dir.join("hm.csv");
    std::fs::write(&path, text).expect("write");
    path
}

fn prepared(path: &std::path::Path, mapping: AddressMapping) -> Arc<PreparedTrace> {
    let block = DeviceSpec::default().block_bytes().expect("preset");
    Arc::new(PreparedTrace::prepare(path, &Default::default(), mapping, block).expect("prepares"))
}

#[test]
fn a_text_trace_replays_on_a_device_sized_to_its_footprint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = prepared(&msr_trace(dir.path()), AddressMapping::Compact);
    let mut spec = spec();
    spec.device = DeviceSpec::default().sized_for(&trace).expect("sized");
    let block = DeviceSpec::default().block_bytes().expect("preset");
    assert_eq!(
        spec.device.capacity_bytes,
        trace.map.touched_chunks().max(MIN_TRACE_BLOCKS) * block
    );
    let r = run(&spec, &Source::Trace(trace.clone()), &NoProgress)
        .expect("runs")
        .report;
    assert_eq!(r.trace.requests, 450);
    assert_eq!((r.host.write_requests, r.host.read_requests), (300, 150));
    assert_eq!(
        r.host.pages_read_mapped, 300,
        "every read finds the page written before"
    );
    assert!(r.trace.description.contains("msr, compact address mapping"));
    let again = run(&spec, &Source::Trace(trace), &NoProgress)
        .expect("runs")
        .report;
    assert_eq!(
        again.state_hash, r.state_hash,
        "the same trace, the same state"
    );
}

#[test]
fn a_trace_larger_than_the_device_says_what_to_change() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = prepared(&msr_trace(dir.path()), AddressMapping::Identity);
    let mut small = spec();
    small.device.capacity_bytes = 64 << 20;
    let message = run(&small, &Source::Trace(trace.clone()), &NoProgress)
        .expect_err("too large")
        .to_string();
    assert!(
        message.contains("raise --capacity to at least")
            && message.contains("leave --capacity out")
            && message.contains("--address-map compact"),
        "{message}"
    );
    let mut fits = spec();
    fits.device = DeviceSpec::default().sized_for(&trace).expect("sized");
    let max_end = (0..300u64)
        .map(|i| i * 40_000_000 * 1024 % (12 << 30) + 8192)
        .max()
        .expect("some");
    let block = DeviceSpec::default().block_bytes().expect("preset");
    assert_eq!(
        fits.device.capacity_bytes,
        max_end.div_ceil(block) * block,
        "identity keeps the trace's addresses: the device spans the highest"
    );
    fits.precondition = None;
    let r = run(&fits, &Source::Trace(trace), &NoProgress)
        .expect("runs")
        .report;
    assert_eq!(r.host.pages_read_mapped, 300);
}

#[test]
fn timing_the_mapping_changes_nothing_and_every_mapping_reaches_the_same_state() {
    let plain = run(&spec(), &workload(), &NoProgress).expect("runs").report;
    for (ftl, nodes) in [
        (FtlKind::Page, VetNodes::Pf),
        (FtlKind::Emt, VetNodes::Pf),
        (FtlKind::Vet, VetNodes::Pf),
        (FtlKind::Vet, VetNodes::Pd),
    ] {
        let mut timed_spec = spec();
        timed_spec.ftl = ftl;
        timed_spec.options.vet.nodes = nodes;
        let (outcome, times) =
            run_with_mapping_times(&timed_spec, &workload(), &NoProgress).expect("runs");
        assert_eq!(outcome.report.state_hash, plain.state_hash, "{ftl} {nodes}");
        let r = &outcome.report;
        assert_eq!(times.translate.summary().requests, r.host.read_requests);
        assert_eq!(
            times.merge.summary().requests,
            0,
            "4 KiB-aligned writes merge nothing"
        );
        assert!(times.update.summary().requests >= r.host.write_requests);
        assert!(
            times.relocate.summary().requests > 0,
            "GC ran and was timed"
        );
        // Every read and write is hinted once as it enters the lookahead, and the hint is
        // timed (the workload has no trims, flushes or empty requests, which are not).
        assert_eq!(r.host.trim_requests + r.host.flush_requests, 0);
        let requests = r.host.read_requests + r.host.write_requests;
        assert_eq!(times.prefetch.summary().requests, requests, "{ftl} {nodes}");
    }
}

/// The timed run builds its own mapping (its type is a parameter of the timing wrapper):
/// it must build the VET the options name. Each read search probes as many times a read in
/// the timed run as in the plain one, and the two searches differ (single-page reads: the
/// guided search's first probe is at the last leaf's level, the published one's at the
/// middle level).
#[test]
fn the_timed_run_builds_the_vet_its_options_name() {
    let mut probes = Vec::new();
    for search in VetSearch::ALL {
        let mut s = spec();
        s.ftl = FtlKind::Vet;
        s.options.vet.search = search;
        let plain = run(&s, &workload(), &NoProgress).expect("runs").report;
        let (timed, _) = run_with_mapping_times(&s, &workload(), &NoProgress).expect("runs");
        let per_read = |r: &RunReport| r.ftl_stats.extra[&Gauge::VetProbesPerRead];
        assert_eq!(per_read(&timed.report), per_read(&plain), "{search}");
        assert_eq!(timed.report.state_hash, plain.state_hash, "{search}");
        probes.push(per_read(&plain));
    }
    assert!(probes[1] < probes[0], "guided probes fewer: {probes:?}");
}

#[test]
fn read_modify_write_translations_are_timed_apart_from_host_reads() {
    // 2 KiB writes at 512-byte alignment: most start or end inside a 4 KiB page, whose old
    // content the host reads first. Those translations are not read requests.
    let mut w = uniform(2048, 20_000);
    w.align_bytes = 512;
    let mut spec = spec();
    spec.precondition = None;
    for ftl in [FtlKind::Page, FtlKind::Vet, FtlKind::Emt] {
        spec.ftl = ftl;
        let (outcome, times) =
            run_with_mapping_times(&spec, &Source::Workload(w.clone()), &NoProgress).expect("runs");
        let host = &outcome.report.host;
        assert_eq!(
            times.translate.summary().requests,
            host.read_requests,
            "{ftl}"
        );
        let merges = times.merge.summary().requests;
        assert!(host.rmw_reads > 0, "{ftl}: some partial pages held data");
        assert!(
            merges >= host.rmw_reads,
            "{ftl}: {merges} < {}",
            host.rmw_reads
        );
        assert!(
            merges <= 2 * host.write_requests,
            "{ftl}: at most two a write"
        );
    }
}

#[test]
fn a_bad_device_spec_is_a_clear_error() {
    let mut bad = spec();
    bad.device.preset = "floppy".into();
    let message = run(&bad, &workload(), &NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("unknown device preset \"floppy\""),
        "{message}"
    );
    let mut bad = spec();
    bad.device.capacity_bytes = 1000;
    let message = run(&bad, &workload(), &NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("device: logical capacity 1000"),
        "{message}"
    );
    let mut bad = spec();
    bad.device.over_provisioning = 0.0;
    let message = run(&bad, &workload(), &NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(message.contains("raise over-provisioning"), "{message}");
}

/// What an independent replay of the same requests saw: per-request service times computed
/// from the operation counts by hand, and the host's page counts from the requests' bytes.
struct Reference {
    read_ns: Vec<u64>,
    write_ns: Vec<u64>,
    other_ns: u64,
    pages_written: u64,
    pages_read: u64,
    pages_trimmed: u64,
    flash: flashkit_core::OpCounters,
    erase_counts: Vec<u32>,
    stats: FtlStats,
    state_hash: String,
}

/// Replay `spec` on `workload` step by step, outside the driver, measuring each request
/// from the device's counters before and after it.
fn reference(spec: &RunSpec, workload: &WorkloadSpec) -> Reference {
    let (preset, geometry, endurance) = spec.device.resolve().expect("device");
    let device = NandDevice::<CountsOnly>::new(geometry).with_endurance(endurance);
    let ftl = AnyFtl::build(spec.ftl, device, &spec.options).expect("builds");
    let mut host = Host::new(ftl);
    if let Some(pre) = &spec.precondition {
        precondition(&mut host, pre, spec.seed, &NoProgress).expect("preconditions");
    }
    let flash_start = *host.ftl().device().counters();
    let stats_start = host.ftl().stats();
    let t = preset.timing;
    let cost = |c: &flashkit_core::OpCounters| {
        let ops = |b: &flashkit_core::ByCause| b.host + b.gc + b.wear_leveling + b.metadata;
        ops(&c.reads) * t.read_ns + ops(&c.programs) * t.program_ns + ops(&c.erases) * t.erase_ns
    };
    let page = u64::from(geometry.page_size_bytes());
    let mut r = Reference {
        read_ns: Vec::new(),
        write_ns: Vec::new(),
        other_ns: 0,
        pages_written: 0,
        pages_read: 0,
        pages_trimmed: 0,
        flash: Default::default(),
        erase_counts: Vec::new(),
        stats: FtlStats::default(),
        state_hash: String::new(),
    };
    let requests = Workload::new(workload.clone(), sub_seed(spec.seed, "workload")).expect("ok");
    for (index, request) in requests.enumerate() {
        let before = cost(host.ftl().device().counters());
        host.submit(index as u64, &request).expect("submits");
        let ns = cost(host.ftl().device().counters()) - before;
        let (first, end) = (request.offset / page, request.end().div_ceil(page));
        match request.op {
            Op::Read => {
                r.read_ns.push(ns);
                r.pages_read += end - first;
            }
            Op::Write => {
                r.write_ns.push(ns);
                r.pages_written += end - first;
            }
            Op::Trim => {
                r.other_ns += ns;
                r.pages_trimmed +=
                    (request.end() / page).saturating_sub(request.offset.div_ceil(page));
            }
            Op::Flush => r.other_ns += ns,
        }
    }
    let ftl = host.ftl();
    r.flash = ftl.device().counters().since(&flash_start);
    r.erase_counts = (0..geometry.blocks())
        .map(|b| ftl.device().block_status(BlockId(b)).erase_count)
        .collect();
    r.stats = ftl.stats().since(&stats_start);
    let mut hasher = StateHasher::new();
    ftl.hash_state(&mut hasher);
    r.state_hash = format!("{:016x}", hasher.finish());
    r
}

/// A latency summary against the exact service times: count, mean and maximum exactly,
/// each quantile at or above the exact one and within the histogram's 12.5% resolution,
/// and each histogram bucket holding exactly the times between its bound and the one before.
fn check_latency(what: &str, summary: &crate::latency::LatencySummary, times: &[u64]) {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    assert_eq!(summary.requests, n, "{what}");
    if n == 0 {
        assert_eq!((summary.p99_ns, summary.max_ns), (0, 0), "{what}");
        return;
    }
    let sum: u64 = sorted.iter().sum();
    assert!(
        (summary.mean_ns - sum as f64 / n as f64).abs() < 1e-6,
        "{what} mean"
    );
    assert_eq!(summary.max_ns, *sorted.last().expect("some"), "{what} max");
    for (fraction, got) in [
        (0.50, summary.p50_ns),
        (0.90, summary.p90_ns),
        (0.99, summary.p99_ns),
        (0.999, summary.p999_ns),
    ] {
        let rank = ((n as f64 * fraction).ceil() as u64).max(1);
        let exact = sorted[rank as usize - 1];
        assert!(
            exact <= got && got as f64 <= exact as f64 * 1.125 + 1.0 && got <= summary.max_ns,
            "{what} p{}: {got} against exact {exact}",
            fraction * 100.0
        );
    }
    let mut below = 0;
    let mut last_bound = None;
    for &(bound, count) in &summary.histogram {
        assert!(last_bound < Some(bound), "{what}: bounds ascend");
        let within = sorted
            .iter()
            .filter(|&&t| t <= bound && last_bound.is_none_or(|b| t > b))
            .count() as u64;
        assert_eq!(count, within, "{what}: bucket up to {bound}");
        below += count;
        last_bound = Some(bound);
    }
    assert_eq!(below, n, "{what}: the buckets hold every request");
}

/// Every figure a run report prints, against a computation of its own on a small run:
/// counters, write amplification, erase statistics and histogram, latency summaries,
/// simulated time, FTL statistics of the measured window, the state hash, and the flat
/// metric list that tables and CSV files are made from.
#[test]
fn every_figure_of_a_report_matches_a_reference_computation() {
    for (label, ftl) in [("page/greedy", FtlKind::Page), ("fast", FtlKind::Fast)] {
        let mut spec = spec();
        spec.label = label.into();
        spec.ftl = ftl;
        spec.device.pages_per_block = Some(32);
        spec.device.over_provisioning = 0.1;
        spec.precondition = Some(Precondition {
            sequential_fill: true,
            random_overwrites: 0.5,
        });
        let mut workload = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Uniform {
                min_bytes: 512,
                max_bytes: 12 * 1024,
            },
            6_000,
            16 << 20,
        );
        workload.align_bytes = 512;
        workload.read_fraction = 0.3;
        workload.trim_fraction = 0.05;
        let report = run(&spec, &Source::Workload(workload.clone()), &NoProgress)
            .expect("runs")
            .report;
        let r = reference(&spec, &workload);

        let h = &report.host;
        assert_eq!(report.trace.requests, 6_000, "{label}");
        assert_eq!(
            h.read_requests + h.write_requests + h.trim_requests,
            6_000,
            "{label}"
        );
        assert_eq!(h.read_requests, r.read_ns.len() as u64, "{label}");
        assert_eq!(h.write_requests, r.write_ns.len() as u64, "{label}");
        assert_eq!(
            (h.pages_written, h.pages_read, h.pages_trimmed),
            (r.pages_written, r.pages_read, r.pages_trimmed),
            "{label}"
        );
        assert!(h.rmw_reads > 0, "{label}: unaligned writes merge pages");
        assert_eq!(report.flash, r.flash, "{label}");
        assert!(report.flash.erases.total() > 0, "{label}: the run collects");
        let wa = r.flash.programs.total() as f64 / r.pages_written as f64;
        assert_eq!(report.write_amplification, Some(wa), "{label}");

        let blocks = r.erase_counts.len() as f64;
        let mean = r.erase_counts.iter().map(|&c| f64::from(c)).sum::<f64>() / blocks;
        let square = r
            .erase_counts
            .iter()
            .map(|&c| f64::from(c).powi(2))
            .sum::<f64>()
            / blocks;
        let s = &report.erase_spread;
        assert_eq!(
            s.min,
            *r.erase_counts.iter().min().expect("blocks"),
            "{label}"
        );
        assert_eq!(
            s.max,
            *r.erase_counts.iter().max().expect("blocks"),
            "{label}"
        );
        assert!((s.mean - mean).abs() < 1e-9, "{label}");
        assert!(
            (s.stddev - (square - mean * mean).sqrt()).abs() < 1e-6,
            "{label}"
        );
        assert!(s.stddev > 0.0, "{label}: wear is uneven");
        let mut histogram = std::collections::BTreeMap::new();
        for &c in &r.erase_counts {
            *histogram.entry(c).or_insert(0u32) += 1;
        }
        let histogram: Vec<(u32, u32)> = histogram.into_iter().collect();
        assert_eq!(report.erase_histogram, histogram, "{label}");

        check_latency(label, &report.latency.read, &r.read_ns);
        check_latency(label, &report.latency.write, &r.write_ns);
        let all: u64 = r.read_ns.iter().chain(&r.write_ns).sum::<u64>() + r.other_ns;
        assert_eq!(report.elapsed_ns, all, "{label}: simulated time");
        assert_eq!(report.ftl_stats, r.stats, "{label}");
        assert!(report.ftl_stats.gc_runs > 0, "{label}");
        assert_eq!(report.state_hash, r.state_hash, "{label}");

        // The flat list tables and CSV files print, figure by figure.
        let metrics = report.metrics();
        let value = |key: &str| {
            metrics
                .iter()
                .find(|m| m.key == key)
                .unwrap_or_else(|| panic!("{label}: no metric {key}"))
                .value
                .clone()
        };
        use crate::metrics::MetricValue::{Count, Real, Text};
        let f = &report.flash;
        for (key, expected) in [
            ("requests", 6_000),
            ("host_pages_written", h.pages_written),
            ("host_pages_read", h.pages_read),
            ("host_pages_trimmed", h.pages_trimmed),
            ("rmw_reads", h.rmw_reads),
            ("flash_reads", f.reads.total()),
            ("flash_reads_gc", f.reads.gc),
            ("flash_programs", f.programs.total()),
            ("flash_programs_host", f.programs.host),
            ("flash_programs_gc", f.programs.gc),
            ("flash_programs_wl", f.programs.wear_leveling),
            ("flash_erases", f.erases.total()),
            ("flash_erases_gc", f.erases.gc),
            ("flash_erases_wl", f.erases.wear_leveling),
            ("gc_runs", r.stats.gc_runs),
            ("gc_pages_moved", r.stats.gc_pages_moved),
            ("wl_runs", r.stats.wear_level_runs),
            ("retired_blocks", r.stats.retired_blocks),
            ("erase_min", u64::from(s.min)),
            ("erase_max", u64::from(s.max)),
            ("mapping_packed_bytes", report.mapping_memory.packed_bytes),
            ("mapping_heap_bytes", report.mapping_memory.heap_bytes),
            (
                "model_memory_estimate_bytes",
                spec.memory_estimate().expect("estimates"),
            ),
        ] {
            assert_eq!(value(key), Count(expected), "{label}: {key}");
        }
        let latency = &report.latency;
        for (key, expected) in [
            ("write_amplification", wa),
            ("erase_mean", mean),
            ("erase_stddev", s.stddev),
            ("elapsed_s", all as f64 / 1e9),
            ("read_p99_us", latency.read.p99_ns as f64 / 1000.0),
            ("write_mean_us", latency.write.mean_ns / 1000.0),
            ("write_p99_us", latency.write.p99_ns as f64 / 1000.0),
            ("write_max_us", latency.write.max_ns as f64 / 1000.0),
        ] {
            let Real(got) = value(key) else {
                panic!("{label}: {key} is not a real")
            };
            assert!(
                (got - expected).abs() <= expected.abs() * 1e-12,
                "{label}: {key}"
            );
        }
        assert_eq!(value("state_hash"), Text(r.state_hash.clone()), "{label}");
        for (name, count) in &r.stats.counters {
            assert_eq!(
                value(&format!("ftl_{name}")),
                Count(*count),
                "{label}: {name}"
            );
        }
        for (name, mean) in &r.stats.means {
            let expected = mean
                .value()
                .map_or(crate::metrics::MetricValue::Missing, Real);
            assert_eq!(value(&format!("ftl_{name}")), expected, "{label}: {name}");
        }
        assert!(
            metrics.iter().all(|m| m.key != "flush_requests"),
            "{label}: no flushes, no flush row"
        );
    }
}

/// Runs are let through while the largest `concurrent` estimates together fit what is
/// available, to the byte; past it the message names each run's need, the sum and the
/// source; with nothing known about the machine every run goes.
#[test]
fn memory_is_checked_for_the_largest_runs_side_by_side() {
    let sized = |label: &str, mib: u64| RunSpec {
        label: label.into(),
        device: DeviceSpec {
            capacity_bytes: mib << 20,
            ..DeviceSpec::default()
        },
        ..spec()
    };
    let specs = [
        sized("small", 64),
        sized("large", 512),
        sized("middle", 256),
    ];
    let bytes: Vec<u64> = specs
        .iter()
        .map(|s| s.memory_estimate().expect("estimates"))
        .collect();
    assert!(bytes[0] < bytes[2] && bytes[2] < bytes[1], "{bytes:?}");
    let within = |concurrent, available| {
        check_memory_within(&specs, concurrent, Some((available, "the test's budget")))
    };
    // One at a time (0 is taken as 1): the largest alone.
    for concurrent in [0, 1] {
        within(concurrent, bytes[1]).expect("the largest fits exactly");
        let error = within(concurrent, bytes[1] - 1).expect_err("one byte short");
        let text = error.to_string();
        assert!(text.contains("the model needs about"), "{text}");
        assert!(
            text.contains(&format!("(large {})", approximate_size(bytes[1]))),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "this machine has {} available (the test's budget)",
                approximate_size(bytes[1] - 1)
            )),
            "{text}"
        );
    }
    // Two at a time: the two largest together.
    let two = bytes[1] + bytes[2];
    within(2, two).expect("the two largest fit exactly");
    let text = within(2, two - 1).expect_err("one byte short").to_string();
    assert!(
        text.contains(&format!(
            "the models of 2 runs side by side need about {} (large {}, middle {}; --jobs 1",
            approximate_size(two),
            approximate_size(bytes[1]),
            approximate_size(bytes[2])
        )),
        "{text}"
    );
    // Three at a time and more: all of them.
    within(5, bytes.iter().sum()).expect("all fit exactly");
    within(5, bytes.iter().sum::<u64>() - 1).expect_err("one byte short");
    check_memory_within(&specs, 3, None).expect("nothing known: every run goes");
    check_memory_within(&specs, 3, Some((0, "none"))).expect_err("nothing available");
}

/// The rows a report's figures become beyond those every run has: the skipped flushes and
/// empty requests only when there were some; each FTL gauge as a count when it is a whole
/// number a count holds, else as a quantity.
#[test]
fn optional_rows_and_gauges_become_the_right_cells() {
    use crate::metrics::MetricValue::{Count, Real};
    let mut spec = spec();
    spec.precondition = None;
    let mut report = run(&spec, &Source::Workload(uniform(4096, 500)), &NoProgress)
        .expect("runs")
        .report;
    let value = |report: &RunReport, key: &str| {
        report
            .metrics()
            .into_iter()
            .find(|m| m.key == key)
            .map(|m| m.value)
    };
    for (flushes, empty) in [(0, 0), (1, 0), (0, 1), (3, 2)] {
        report.host.flush_requests = flushes;
        report.host.zero_length_requests = empty;
        let row = |n: u64| (n > 0).then_some(Count(n));
        assert_eq!(value(&report, "flush_requests"), row(flushes));
        assert_eq!(value(&report, "zero_length_requests"), row(empty));
    }
    report.ftl_stats.extra.clear();
    for (gauge, v) in [
        (Gauge::FreeBlocks, 0.0),
        (Gauge::MappedPages, 4096.0),
        (Gauge::EmtOverlappedPerWrite, 1.25),
        (Gauge::EmtExtents, 1e16),
        (Gauge::EmtRelocationRuns, -1.0),
        (Gauge::LogBlocksInUse, 9e15),
        (Gauge::MappedBlocks, 8_999_999_999_999_999.0),
    ] {
        report.ftl_stats.extra.insert(gauge, v);
    }
    let metric = |key: &str| value(&report, key).unwrap_or_else(|| panic!("no {key}"));
    assert_eq!(metric("ftl_free_blocks"), Count(0));
    assert_eq!(metric("ftl_mapped_pages"), Count(4096));
    assert_eq!(metric("ftl_emt_overlapped_per_write"), Real(1.25));
    assert_eq!(metric("ftl_emt_extents"), Real(1e16));
    assert_eq!(metric("ftl_emt_relocation_runs"), Real(-1.0));
    assert_eq!(metric("ftl_log_blocks_in_use"), Real(9e15));
    assert_eq!(metric("ftl_mapped_blocks"), Count(8_999_999_999_999_999));
    let names: Vec<String> = report
        .metrics()
        .into_iter()
        .filter(|m| m.key == "ftl_emt_overlapped_per_write")
        .map(|m| m.label)
        .collect();
    assert_eq!(names, ["emt overlapped per write"]);
}

/// A spec is refused before anything is allocated: an FTL that does not fit its device
/// (named by the run's label), a workload that cannot be generated, a trace larger than the
/// device.
#[test]
fn a_spec_is_checked_before_it_runs() {
    let good = spec();
    good.check().expect("fits");
    good.check_on(&workload()).expect("fits");
    let mut tight = spec();
    tight.device.over_provisioning = 0.0;
    let message = tight.check().expect_err("refused").to_string();
    assert!(
        message.starts_with("page/greedy: invalid FTL configuration: the page FTL needs"),
        "{message}"
    );
    assert_eq!(
        tight
            .check_on(&workload())
            .expect_err("refused")
            .to_string(),
        message
    );
    let mut empty = uniform(4096, 10);
    empty.requests = 0;
    let message = good
        .check_on(&Source::Workload(empty))
        .expect_err("refused")
        .to_string();
    assert!(message.contains("0 requests"), "{message}");
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = prepared(&msr_trace(dir.path()), AddressMapping::Identity);
    let message = good
        .check_on(&Source::Trace(trace))
        .expect_err("refused")
        .to_string();
    assert!(message.contains("needs a logical capacity of"), "{message}");
}

/// The estimate is the device model's and the FTL's together; models larger than this
/// machine are refused by the check every command makes.
#[test]
fn the_memory_estimate_adds_the_device_and_the_ftl() {
    let spec = spec();
    let (_, geometry, _) = spec.device.resolve().expect("resolves");
    let device = NandDevice::<CountsOnly>::heap_estimate(&geometry);
    let ftl = spec.ftl.heap_estimate(&geometry, &spec.options);
    assert!(device > 1 && ftl > 1);
    assert_eq!(spec.memory_estimate().expect("estimates"), device + ftl);
    let mut huge = spec.clone();
    huge.device.capacity_bytes = 14 << 40;
    // 64 models of 39 GiB side by side: more than any machine this runs on has.
    assert!(huge.memory_estimate().expect("estimates") > 32 << 30);
    let message = check_memory(&vec![huge; 64], 64)
        .expect_err("2.5 TiB of models")
        .to_string();
    assert!(message.contains("use a smaller --capacity"), "{message}");
    check_memory(&[spec], 1).expect("a 64 MiB model fits");
}

/// What a trace replay records as its input, word for word.
#[test]
fn a_trace_is_described_by_its_file_format_and_mapping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = msr_trace(dir.path());
    let trace = prepared(&path, AddressMapping::Compact);
    assert_eq!(
        describe(&trace),
        format!("{} (msr, compact address mapping)", path.display())
    );
}

/// Every request of a replay longer than a progress step is reported, and each phase
/// says its total; a run that writes nothing has no write amplification; the wall-clock
/// rate is the requests over the replay's seconds.
#[test]
fn progress_rates_and_a_run_without_writes() {
    let mut spec = spec();
    spec.precondition = None;
    let requests = 2 * PROGRESS_STEP + 123;
    let tally = flashkit_core::ProgressLog::default();
    let outcome = run(&spec, &Source::Workload(uniform(4096, requests)), &tally).expect("runs");
    let phases = tally.phases();
    let replay = phases.last().expect("a replay phase");
    assert_eq!((replay.name.as_str(), replay.done), ("replay", requests));
    let wall = &outcome.wall;
    assert!(wall.replay_seconds > 0.0);
    let rate = requests as f64 / wall.replay_seconds;
    assert!(
        (wall.requests_per_second - rate).abs() <= rate * 1e-9,
        "{wall:?}"
    );
    let pages = outcome.report.host.pages_written as f64 / wall.replay_seconds;
    assert!((wall.host_pages_written_per_second - pages).abs() <= pages * 1e-9);

    let mut reads = uniform(4096, 1_000);
    reads.read_fraction = 1.0;
    let report = run(&spec, &Source::Workload(reads), &NoProgress)
        .expect("runs")
        .report;
    assert_eq!(report.host.pages_written, 0);
    assert_eq!(report.write_amplification, None);
}
