//! `flashkit bench`: replay throughput of an FTL (the page FTL unless `--ftl` says otherwise)
//! on uniform random 4 KiB writes, read from the binary format, on a preconditioned (full,
//! garbage-collecting) drive.
//!
//! A benchmark, not a test: it prints figures for bench/RESULTS.md and asserts nothing about
//! speed. `--smoke` runs a tiny instance whose state hash the test suite pins, so that a
//! speed-up which changes behaviour is caught.

use crate::args::BenchArgs;
use crate::failure::{Failure, Outcome, sim_failure};
use crate::output::write_json;
use crate::progress::Bar;
use anyhow::Context;
use flashkit_core::sub_seed;
use flashkit_core::units::format_size;
use flashkit_ftl::{FtlKind, FtlOptions, HybridConfig};
use flashkit_lab::config::{Count, Size};
use flashkit_sim::machine::MemoryLatency;
use flashkit_sim::{DeviceSpec, Precondition, Progress, RunSpec, Source};
use flashkit_trace::binary::{TraceWriter, digest};
use flashkit_trace::workload::{Pattern, SizeDist, Workload, WorkloadSpec};
use serde::Serialize;
use std::time::Instant;

#[derive(Serialize)]
struct BenchFigures {
    ftl: String,
    requests: u64,
    capacity_bytes: u64,
    over_provisioning: f64,
    host_page_writes_per_second: f64,
    replay_seconds: f64,
    precondition_seconds: f64,
    trace_generation_seconds: Option<f64>,
    write_amplification: Option<f64>,
    gc_runs: u64,
    gc_pages_moved: u64,
    peak_rss_bytes: Option<u64>,
    /// The model's heap estimated before it was built (`RunSpec::memory_estimate`).
    model_memory_estimate_bytes: u64,
    state_hash: String,
    /// The machine's load latency just before and just after the run: the replay is mostly
    /// random accesses into tables larger than the caches, so its speed follows these.
    memory_latency: MemoryLatency,
}

/// `flashkit bench`.
pub fn run(mut args: BenchArgs) -> Outcome {
    let (spec, run_spec) = plan(&mut args)?;
    // Keeps a generated trace alive until the run is over, then removes it.
    let mut temp_dir = None;
    let (trace_path, generation_seconds) = match &args.trace {
        Some(path) => (path.clone(), None),
        None => {
            let path = match &args.keep_trace {
                Some(path) => path.clone(),
                None => {
                    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
                    let path = dir.path().join("bench.fkt");
                    // Removed on return by the guard, on Ctrl-C by the handler.
                    temp_dir = Some((crate::interrupt::temporary(dir.path()), dir));
                    path
                }
            };
            let started = Instant::now();
            generate(&spec, args.seed, &path)?;
            (path, Some(started.elapsed().as_secs_f64()))
        }
    };
    let ((outcome, peak_rss), memory_latency) = MemoryLatency::around(|| {
        // The peak from here on: the probe before it chases a 64 MiB buffer, which made
        // every bench report a peak of about 82 MiB whatever the device.
        let reset = reset_peak_rss();
        let outcome = flashkit_sim::run(
            &run_spec,
            &Source::Binary(trace_path.clone()),
            &Bar::new("bench"),
        );
        (outcome, peak_rss_bytes().filter(|_| reset))
    });
    let outcome = outcome.map_err(sim_failure)?;
    let r = &outcome.report;
    let figures = BenchFigures {
        ftl: r.label.clone(),
        requests: r.trace.requests,
        capacity_bytes: args.capacity.0,
        over_provisioning: args.op,
        host_page_writes_per_second: outcome.wall.host_pages_written_per_second,
        replay_seconds: outcome.wall.replay_seconds,
        precondition_seconds: outcome.wall.precondition_seconds,
        trace_generation_seconds: generation_seconds,
        write_amplification: r.write_amplification,
        gc_runs: r.ftl_stats.gc_runs,
        gc_pages_moved: r.ftl_stats.gc_pages_moved,
        peak_rss_bytes: peak_rss,
        model_memory_estimate_bytes: r.model_memory_estimate_bytes,
        state_hash: r.state_hash.clone(),
        memory_latency,
    };
    println!(
        "benchmark: {} FTL, {} uniform random 4 KiB writes",
        figures.ftl, figures.requests
    );
    println!(
        "device: {} logical, {:.0}% over-provisioning, {} preset ({} pages/block), preconditioned",
        format_size(args.capacity.0),
        args.op * 100.0,
        r.device.preset,
        r.device.geometry.pages_per_block()
    );
    println!("trace: {}", trace_path.display());
    print_figures(&figures);
    if let Some(path) = &args.json {
        write_json(path, &figures)?;
    }
    drop(temp_dir);
    Ok(())
}

/// The workload and the run `args` ask for, refused before any work when impossible: an FTL
/// option the FTL does not read, no writes to time, a device that cannot be built or whose
/// model does not fit in this machine's memory, an output that is an input.
fn plan(args: &mut BenchArgs) -> Result<(WorkloadSpec, RunSpec), Failure> {
    let ftl_flags = flashkit_lab::config::FtlSection {
        log_blocks: args.log_blocks,
        ..Default::default()
    };
    flashkit_lab::config::check_ftl_options(
        &ftl_flags,
        &[args.ftl],
        &format!("--ftl {}", args.ftl),
    )
    .map_err(Failure::usage)?;
    if args.smoke {
        args.requests = Count(200_000);
        args.capacity = Size(256 << 20);
    }
    if args.requests.0 == 0 {
        // Nothing to time: it printed 0 writes a second and no write amplification.
        return Err(Failure::Usage(anyhow::anyhow!(
            "--requests 0: the benchmark needs at least one host write to time"
        )));
    }
    let spec = WorkloadSpec::new(
        Pattern::Uniform,
        SizeDist::Fixed { bytes: 4096 },
        args.requests.0,
        args.capacity.0,
    );
    let options = FtlOptions {
        hybrid: HybridConfig {
            log_blocks: args
                .log_blocks
                .unwrap_or(HybridConfig::default().log_blocks),
            ..HybridConfig::default()
        },
        ..FtlOptions::default()
    };
    let label = match args.ftl {
        FtlKind::Page => format!("page/{}", options.page.gc_policy),
        kind if kind.uses_log_blocks() => {
            format!("{kind}/{} log blocks", options.hybrid.log_blocks)
        }
        kind => kind.to_string(),
    };
    let run_spec = RunSpec {
        label,
        ftl: args.ftl,
        options,
        device: DeviceSpec {
            capacity_bytes: args.capacity.0,
            over_provisioning: args.op,
            ..DeviceSpec::default()
        },
        precondition: Some(Precondition::default()),
        seed: args.seed,
    };
    // Refused before the trace is generated: an impossible device, or one whose model does
    // not fit in this machine's memory.
    run_spec.check().map_err(crate::failure::sim_failure)?;
    flashkit_sim::check_memory(std::slice::from_ref(&run_spec), 1)
        .map_err(crate::failure::sim_failure)?;
    crate::output::check_outputs(&[
        ("--keep-trace", args.keep_trace.as_deref()),
        ("--json", args.json.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    Ok((spec, run_spec))
}

/// The figures, a line each, as bench/RESULTS.md records them.
fn print_figures(figures: &BenchFigures) {
    if let Some(seconds) = figures.trace_generation_seconds {
        println!("trace generation:     {seconds:.2} s");
    }
    println!(
        "precondition:         {:.2} s",
        figures.precondition_seconds
    );
    println!("replay:               {:.2} s", figures.replay_seconds);
    println!(
        "host page writes/s:   {:.0}",
        figures.host_page_writes_per_second
    );
    if let Some(wa) = figures.write_amplification {
        println!("write amplification:  {wa:.3}");
    }
    println!(
        "GC runs:              {} ({} pages moved)",
        figures.gc_runs, figures.gc_pages_moved
    );
    match figures.peak_rss_bytes {
        Some(bytes) => println!(
            "peak RSS:             {:.1} MiB",
            bytes as f64 / (1 << 20) as f64
        ),
        None => println!(
            "peak RSS:             unknown (no /proc/self/status, or its peak cannot be reset)"
        ),
    }
    println!(
        "model memory:         {:.1} MiB estimated before the run",
        figures.model_memory_estimate_bytes as f64 / (1 << 20) as f64
    );
    println!("state hash:           {}", figures.state_hash);
    println!(
        "machine:              {}",
        figures.memory_latency.describe()
    );
}

fn generate(spec: &WorkloadSpec, seed: u64, path: &std::path::Path) -> Outcome {
    let canonical = format!("{} seed={seed}", spec.canonical());
    let workload = Workload::new(spec.clone(), sub_seed(seed, "workload"))
        .map_err(|e| Failure::Usage(e.into()))?;
    let description = format!("generated uniform workload: {canonical}");
    let staged = crate::output::Staged::new(path).map_err(Failure::Usage)?;
    let mut writer = TraceWriter::create(staged.path(), digest(canonical.as_bytes()), &description)
        .map_err(|e| Failure::Runtime(e.into()))?;
    let bar = Bar::new("bench");
    bar.start("generating trace", Some(spec.requests));
    for (i, request) in workload.enumerate() {
        writer
            .push(&request)
            .map_err(|e| Failure::Runtime(e.into()))?;
        if (i + 1) % 65536 == 0 {
            bar.advance(65536);
        }
    }
    bar.finish();
    writer.finish().map_err(|e| Failure::Runtime(e.into()))?;
    staged.commit()?;
    Ok(())
}

/// Peak resident set size of this process (Linux).
/// Reset the kernel's peak resident set (`VmHWM`) to the current one (Linux 4.0 and
/// later); whether it was.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
