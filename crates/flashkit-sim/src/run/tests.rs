//! Tests of the replay driver: steady-state reports, determinism, device sizing from a trace,
//! mapping timing that changes nothing, and configuration errors.

use super::*;
use crate::NoProgress;
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
    let outcome = run(&spec(), &workload(), &mut NoProgress).expect("runs");
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
    let a = run(&spec(), &workload(), &mut NoProgress)
        .expect("runs")
        .report;
    let b = run(&spec(), &workload(), &mut NoProgress)
        .expect("runs")
        .report;
    let json_a = serde_json::to_string_pretty(&a).expect("json");
    let json_b = serde_json::to_string_pretty(&b).expect("json");
    assert_eq!(json_a, json_b);
    let mut other = spec();
    other.seed = 12;
    let c = run(&other, &workload(), &mut NoProgress)
        .expect("runs")
        .report;
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
    let r = run(&spec, &Source::Trace(trace.clone()), &mut NoProgress)
        .expect("runs")
        .report;
    assert_eq!(r.trace.requests, 450);
    assert_eq!((r.host.write_requests, r.host.read_requests), (300, 150));
    assert_eq!(
        r.host.pages_read_mapped, 300,
        "every read finds the page written before"
    );
    assert!(r.trace.description.contains("msr, compact address mapping"));
    let again = run(&spec, &Source::Trace(trace), &mut NoProgress)
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
    let message = run(&small, &Source::Trace(trace.clone()), &mut NoProgress)
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
    let r = run(&fits, &Source::Trace(trace), &mut NoProgress)
        .expect("runs")
        .report;
    assert_eq!(r.host.pages_read_mapped, 300);
}

#[test]
fn timing_the_mapping_changes_nothing_and_every_mapping_reaches_the_same_state() {
    let plain = run(&spec(), &workload(), &mut NoProgress)
        .expect("runs")
        .report;
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
            run_with_mapping_times(&timed_spec, &workload(), &mut NoProgress).expect("runs");
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
        // Every request is hinted once as it enters the lookahead, and the hint is timed.
        let requests = r.host.read_requests + r.host.write_requests + r.host.trim_requests;
        assert_eq!(times.prefetch.summary().requests, requests, "{ftl} {nodes}");
    }
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
            run_with_mapping_times(&spec, &Source::Workload(w.clone()), &mut NoProgress)
                .expect("runs");
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
    let message = run(&bad, &workload(), &mut NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("unknown device preset \"floppy\""),
        "{message}"
    );
    let mut bad = spec();
    bad.device.capacity_bytes = 1000;
    let message = run(&bad, &workload(), &mut NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(
        message.contains("device: logical capacity 1000"),
        "{message}"
    );
    let mut bad = spec();
    bad.device.over_provisioning = 0.0;
    let message = run(&bad, &workload(), &mut NoProgress)
        .expect_err("refused")
        .to_string();
    assert!(message.contains("raise over-provisioning"), "{message}");
}
