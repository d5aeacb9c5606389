//! `flashkit compare`: one workload, several FTLs, one table.

use crate::args::CompareArgs;
use crate::failure::{Failure, Outcome, sim_failure};
use crate::output::{write_csv, write_json};
use crate::progress::WorkerBars;
use flashkit_ftl::FtlKind;
use flashkit_lab::Executor;
use flashkit_lab::compare::{
    self, CompareSpec, FailedRun, RunError, runs_document, runs_table, wall_clock_lines,
};
use flashkit_lab::config::{self as settings, ConfigFile};

/// `flashkit compare`.
pub fn run(args: CompareArgs, config: &ConfigFile) -> Outcome {
    let kinds = kinds(&args, config)?;
    let mut device = settings::device_spec(&args.device, &config.device).map_err(Failure::usage)?;
    // Refuse an impossible device before anything else is built or read.
    device.resolve().map_err(sim_failure)?;
    let capacity_given = args.device.capacity.or(config.device.capacity).is_some();
    let (policies, options) = settings::ftl_options(&args.ftl_options, &config.ftl);
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    settings::check_ftl_options(
        &args.ftl_options,
        &kinds,
        &format!("--ftl {}", names.join(",")),
    )
    .map_err(Failure::usage)?;
    let seed = settings::seed(&args.run, &config.run);
    // `_stdin`: a trace read from standard input, kept in its temporary file until the end.
    let (source, _stdin) = super::trace_tools::source(
        args.trace.as_deref(),
        &args.trace_options,
        &args.workload,
        config,
        &mut device,
        capacity_given,
    )?;
    args.output.check_not_inputs()?;
    let plan = CompareSpec {
        ftls: kinds,
        gc_policies: policies,
        vet_variants: settings::vet_variants(&args.ftl_options, &config.ftl),
        options,
        device,
        precondition: settings::precondition(&args.run, &config.run),
        seed,
    }
    .plan();
    if !plan.repeated.is_empty() {
        eprintln!(
            "note: asked for more than once, run once: {}",
            plan.repeated.join(", ")
        );
    }
    let specs = plan.runs;
    for spec in &specs {
        spec.check_on(&source).map_err(sim_failure)?;
    }
    // The runs share nothing but the source, so they run side by side; the results come
    // back in the table's order and are the same on any number of threads.
    let executor = args
        .jobs
        .map_or_else(Executor::per_core, |jobs| Executor::new(jobs.into()));
    let workers = executor.workers_for(specs.len());
    flashkit_sim::check_memory(&specs, workers).map_err(sim_failure)?;
    let bars = WorkerBars::new("compare", specs.len(), workers);
    let results = compare::run(
        &specs,
        &source,
        &executor,
        |worker, spec| bars.worker(worker, &spec.label),
        |worker, _| bars.finished(worker, None),
    );
    bars.clear();
    let failed = report(&specs, results, &args.output, workers)?;
    if failed.is_empty() {
        return Ok(());
    }
    Err(failures(failed, specs.len()))
}

/// The FTLs to run (every one unless `--ftl` names some), once the options and the config
/// file are checked against each other and against them.
fn kinds(args: &CompareArgs, config: &ConfigFile) -> Result<Vec<FtlKind>, Failure> {
    let kinds = if args.ftl.is_empty() {
        FtlKind::ALL.to_vec()
    } else {
        args.ftl.clone()
    };
    settings::check_runs_blamed(
        &settings::RunFlags {
            device: &args.device,
            ftl: &args.ftl_options,
            workload: &args.workload,
            kinds: &kinds,
            trace: args.trace.is_some(),
        },
        config,
    )
    .map_err(Failure::usage)?;
    Ok(kinds)
}

/// Print and save the runs that finished; the ones that failed, by label, to report after.
fn report(
    specs: &[flashkit_sim::RunSpec],
    results: Vec<Result<flashkit_sim::RunOutcome, RunError>>,
    output: &crate::args::OutputArgs,
    workers: usize,
) -> Result<Vec<(String, RunError)>, Failure> {
    let mut finished = Vec::new();
    let mut failed: Vec<(String, RunError)> = Vec::new();
    for (spec, result) in specs.iter().zip(results) {
        match result {
            Ok(outcome) => finished.push(outcome),
            Err(error) => failed.push((spec.label.clone(), error)),
        }
    }
    // A run that fails (an FTL worn out, out of space) does not take the others' results
    // with it: they are printed and saved, and the failures are reported after them.
    let recorded: Vec<FailedRun> = failed
        .iter()
        .map(|(label, error)| FailedRun {
            label: label.clone(),
            error: error.to_string(),
        })
        .collect();
    if !finished.is_empty() {
        print_and_save(&finished, output, workers, &recorded)?;
    } else {
        // Every run failed: the JSON still says which and why; the CSV, a row a finished
        // run, would be a header alone, so it is not written, and that is said.
        if let Some(path) = &output.json {
            let wall_clock = output.wall_clock_in_json;
            write_json(path, &runs_document(&[], wall_clock, workers, &recorded))?;
        }
        if let Some(path) = &output.csv {
            eprintln!("note: {} not written: no run finished", path.display());
        }
    }
    Ok(failed)
}

/// One error for the runs that failed, each named by its label; runs that failed the same
/// way (a malformed trace line fails them all) are named together. The exit status is the
/// first failure's.
fn failures(failed: Vec<(String, RunError)>, runs: usize) -> Failure {
    let count = failed.len();
    let mut grouped: Vec<(Vec<String>, RunError)> = Vec::new();
    for (label, error) in failed {
        match grouped
            .iter_mut()
            .find(|(_, e)| e.to_string() == error.to_string())
        {
            Some((labels, _)) => labels.push(label),
            None => grouped.push((vec![label], error)),
        }
    }
    let mut grouped = grouped.into_iter();
    let Some((labels, first)) = grouped.next() else {
        return Failure::Runtime(anyhow::anyhow!("no run failed"));
    };
    let mut text = format!("{}: {first}", labels.join(", "));
    for (labels, error) in grouped {
        text.push_str(&format!("\n  {}: {error}", labels.join(", ")));
    }
    if count < runs {
        text.push_str(&format!(
            "\n  ({count} of {runs} runs failed; the table above holds the others)"
        ));
    }
    match first {
        RunError::Sim(error) => match sim_failure(error) {
            Failure::Usage(_) => Failure::Usage(anyhow::anyhow!(text)),
            Failure::Runtime(_) => Failure::Runtime(anyhow::anyhow!(text)),
        },
        RunError::Panic(_) => Failure::Runtime(anyhow::anyhow!(text)),
    }
}

/// Print the comparison table (metrics as rows, runs as columns) and write the files asked for.
/// `concurrent`: how many of the runs went at once (said beside their wall clocks).
/// `failed`: runs that failed, recorded in the JSON beside the others.
pub fn print_and_save(
    outcomes: &[flashkit_sim::RunOutcome],
    output: &crate::args::OutputArgs,
    concurrent: usize,
    failed: &[FailedRun],
) -> Outcome {
    let first = &outcomes[0].report;
    let g = &first.device.geometry;
    println!(
        "device: {} ({} B pages, {} pages/block, {} blocks, {:.1}% over-provisioning, {} B logical), seed {}",
        first.device.preset,
        g.page_size_bytes(),
        g.pages_per_block(),
        g.blocks(),
        g.over_provisioning() * 100.0,
        g.logical_bytes(),
        first.seed
    );
    println!(
        "trace: {} (digest {}), {}\n",
        first.trace.description,
        &first.trace.digest[..16],
        match &first.precondition {
            Some(p) => format!(
                "preconditioned: fill + {} random overwrites",
                p.random_overwrites
            ),
            None => "fresh drive (no preconditioning)".into(),
        }
    );
    if let Some(hybrid) = outcomes
        .iter()
        .find(|o| o.report.ftl.uses_log_blocks())
        .map(|o| o.report.options.hybrid)
    {
        println!(
            "log-block FTLs: {} log blocks, SW log block {}{}\n",
            hybrid.log_blocks,
            if hybrid.sw_log_block { "on" } else { "off" },
            if hybrid.sw_log_block {
                format!(" (a full one: {})", hybrid.full_sw)
            } else {
                String::new()
            }
        );
    }
    print!("{}", runs_table(outcomes, true).transposed().render());
    println!();
    print!("{}", wall_clock_lines(outcomes));
    if concurrent > 1 {
        println!(
            "({concurrent} runs at a time: their wall clocks share the machine; --jobs 1 times \
             each alone)"
        );
    }
    if let Some(path) = &output.json {
        write_json(
            path,
            &runs_document(outcomes, output.wall_clock_in_json, concurrent, failed),
        )?;
    }
    if let Some(path) = &output.csv {
        write_csv(path, &runs_table(outcomes, false))?;
    }
    Ok(())
}
