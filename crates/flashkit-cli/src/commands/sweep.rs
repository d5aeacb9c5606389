//! `flashkit sweep`: a grid of runs declared in TOML (see examples/sweep-gc.toml and
//! [`flashkit_lab::sweep`], which reads the file and makes its cells), on every core, each
//! result saved as it finishes.
//!
//! `cells.json` in the output directory records what each cell ran ([`sweep::Setup`]), so that
//! `--resume` refuses a directory whose results were made under other settings.

use crate::args::SweepArgs;
use crate::failure::Outcome;
use crate::failure::{Failure, sim_failure};
use crate::progress::WorkerBars;
use anyhow::{Context, anyhow};
use flashkit_lab::Executor;
use flashkit_lab::sweep::{Resume, ResumeError, SweepPlan};
use flashkit_sim::sweep::{self, Cell, CellResult, Existing, ResultStore};
use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

pub fn run(args: SweepArgs) -> Outcome {
    crate::output::note_input(&args.file);
    let plan = flashkit_lab::sweep::plan(&args.file).map_err(Failure::usage)?;
    let cells = &plan.cells;
    let jobs = args.jobs.or(plan.jobs).unwrap_or_else(super::cores);
    if jobs == 0 {
        // The file's `jobs = 0` is refused where it is read, at its line.
        return Err(Failure::Usage(anyhow!(
            "--jobs is 0; a sweep needs at least one worker"
        )));
    }
    let specs: Vec<flashkit_sim::RunSpec> = cells.iter().map(|c| c.spec.clone()).collect();
    flashkit_sim::check_memory(&specs, jobs.min(cells.len()))
        .map_err(|e| Failure::Usage(anyhow!("sweep file {}: {e}", args.file.display())))?;
    let mut undo = crate::output::Undo::default();
    undo.create_dir_all(&args.out)?;
    let _lock = lock(&args.out)?;
    for name in ["results.jsonl", "results.csv", "cells.json"] {
        undo.note(&args.out.join(name));
    }
    let outcome = run_locked(&args, &plan, jobs, &mut undo);
    // Undone (when it must be) while the directory is still locked.
    drop(undo);
    outcome
}

/// Hold an advisory lock on the output directory itself (not on a file in it, which would be
/// left behind), so that a second sweep writing the same directory (a `--resume` started
/// while the first runs) is refused instead of interleaving its results with the first's.
/// The lock goes with the process.
fn lock(out: &Path) -> Result<std::fs::File, Failure> {
    let directory = std::fs::File::open(out)
        .with_context(|| format!("cannot open {} to lock it", out.display()))?;
    match directory.try_lock() {
        Ok(()) => Ok(directory),
        Err(std::fs::TryLockError::WouldBlock) => Err(Failure::Usage(anyhow!(
            "{} is being written by another flashkit sweep (it holds the directory's lock): \
             wait for it to finish, or give another --out",
            out.display()
        ))),
        Err(std::fs::TryLockError::Error(error)) => Err(Failure::Runtime(
            anyhow::Error::from(error).context(format!("cannot lock {}", out.display())),
        )),
    }
}

/// The sweep, once its directory is locked. What it creates there is removed if it fails
/// before recording a result (a full disk, a trace that cannot be read); from the first
/// result on, everything is kept, for `--resume`.
fn run_locked(
    args: &SweepArgs,
    plan: &SweepPlan,
    jobs: usize,
    undo: &mut crate::output::Undo,
) -> Outcome {
    let cells = &plan.cells;
    let name = plan
        .name
        .clone()
        .unwrap_or_else(|| args.file.display().to_string());
    let results_path = args.out.join("results.jsonl");
    let (mut store, existing) = open_store(args, cells, &results_path)?;
    let recorded = sweep::recorded_ids(&existing);
    let mut results = existing.results;
    let todo: Vec<Cell> = cells
        .iter()
        .filter(|c| !recorded.contains(&c.id))
        .cloned()
        .collect();
    let skipped = cells.len() - todo.len();
    let ran = todo.len();
    // No more workers than cells to run (100,000 of them turned a 0.02 s sweep into 10 s).
    let jobs = jobs.min(ran).max(1);
    let started = Instant::now();
    let bars = WorkerBars::new("sweep", ran, jobs);
    let csv_path = args.out.join("results.csv");
    let mut write_error = None;
    let mut failed = 0;
    // Each result is saved as it finishes (the callback); the grid order is restored below, over
    // the results recorded before as well.
    flashkit_lab::sweep::run(
        &todo,
        &Executor::new(jobs),
        |worker, cell| bars.worker(worker, &cell.id),
        |worker, result| {
            bars.finished(worker, Some(&finished_line(result)));
            failed += usize::from(!result.is_ok());
            if write_error.is_none() {
                write_error = store.append(result).err();
                if write_error.is_none() {
                    undo.keep();
                }
            }
            results.push(result.clone());
            if write_error.is_none() {
                write_error = write_csv(&csv_path, &results)
                    .err()
                    .map(|e| flashkit_sim::SimError::Io(e.to_string()));
            }
        },
    );
    bars.clear();
    if let Some(error) = write_error {
        return Err(sim_failure(error));
    }
    in_grid_order(cells, &mut results);
    write_csv(&csv_path, &results)?;
    undo.keep();
    println!(
        "sweep {name:?}: {} cells; ran {ran} ({} ok, {failed} failed) in {:.1} s with {jobs} worker{}; skipped {skipped} already recorded",
        cells.len(),
        ran - failed,
        started.elapsed().as_secs_f64(),
        if jobs == 1 { "" } else { "s" },
    );
    println!(
        "results: {} and {}",
        results_path.display(),
        csv_path.display()
    );
    if failed > 0 {
        return Err(Failure::Runtime(anyhow!(
            "{failed} of {ran} runs failed; their errors are in {}",
            results_path.display()
        )));
    }
    Ok(())
}

/// `results` in the grid's order, whichever worker finished first (the same sweep wrote its
/// rows in a different order on every run).
fn in_grid_order(cells: &[Cell], results: &mut [CellResult]) {
    let order: HashMap<&str, usize> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    results.sort_by_key(|r| order.get(r.id.as_str()).copied().unwrap_or(usize::MAX));
}

/// The results file, opened for the sweep: refused if it holds results and neither
/// `--resume` nor `--force` says what to do with them, checked against the grid on
/// `--resume`; `cells.json` beside it written for the cells now.
fn open_store(
    args: &SweepArgs,
    cells: &[Cell],
    results_path: &Path,
) -> Result<(ResultStore, Existing), Failure> {
    let has_results = std::fs::metadata(results_path).is_ok_and(|m| m.len() > 0);
    if has_results && !args.resume && !args.force {
        return Err(Failure::Usage(anyhow!(
            "{} already holds results: add --resume to run only the missing cells, or --force to start over",
            args.out.display()
        )));
    }
    let cells_path = args.out.join("cells.json");
    if has_results && args.resume {
        let recorded = sweep::read_results(results_path).map_err(sim_failure)?;
        let resume = Resume {
            file: &args.file,
            out: &args.out,
            setups: &cells_path,
        };
        resume
            .check(cells, &recorded.results)
            .map_err(|error| match error {
                ResumeError::Store(error) => sim_failure(error),
                error => Failure::usage(error),
            })?;
    }
    let (store, existing) = ResultStore::open(results_path, args.force).map_err(sim_failure)?;
    // Every cell recorded is one of these, with the same run.
    let setups = cells
        .iter()
        .map(|c| (c.id.clone(), c.setup.clone()))
        .collect();
    sweep::write_setups(&cells_path, &setups).map_err(sim_failure)?;
    if existing.dropped_partial_line {
        eprintln!(
            "note: dropped a torn last line of {} (the previous sweep was interrupted)",
            results_path.display()
        );
    }
    Ok((store, existing))
}

/// Every result as one CSV row: id, label, status, error, the parameters, then the metrics.
fn write_csv(path: &Path, results: &[CellResult]) -> anyhow::Result<()> {
    crate::output::write_csv(path, &flashkit_lab::sweep::results_table(results))
}

/// What the sweep says of a finished cell.
fn finished_line(result: &CellResult) -> String {
    match &result.error {
        None => format!(
            "ok      {}  WA {:.3}, {} erases",
            result.id,
            result
                .metrics
                .get("write_amplification")
                .copied()
                .unwrap_or(f64::NAN),
            result.metrics.get("flash_erases").copied().unwrap_or(0.0)
        ),
        Some(error) => format!("FAILED  {}: {error}", result.id),
    }
}
