//! Sweeps: a grid of runs, each cell a complete run spec and source, run on the
//! [`Executor`] with every result handed over the moment it finishes (so that a front end
//! can save it) and all of them returned in the grid's order.
//!
//! A cell's identity is its grid parameters ([`Cell::id_of`]); what it runs is recorded in
//! its [`Setup`]: a digest of the resolved spec and its input ([`run_digest`]) and the
//! settings it was made from, so that a resumed sweep can refuse results made under other
//! settings. A run that fails, or panics, becomes a failed [`CellResult`] with its error;
//! the other cells carry on.
//!
//! A sweep file ([`plan`]) declares the grid: a `[base]` of config-file sections and a
//! `[grid]` of settings, each with its values; every combination is one cell. Grid keys
//! other than `ftl`, `trace` and `seed` are `section.option` with the config file's names
//! (`"device.op"`, or `op` in `[grid.device]`); a grid `seed` is `run.seed`, and a setting
//! given twice is refused. Every error about a key or a value names its line, and a cell
//! that cannot be made or run names the lines at fault.
//!
//! The on-disk form (`results.jsonl`, `cells.json`) is [`flashkit_sim::sweep`]'s; a
//! resumed directory is checked against the grid by [`Resume::check`].

mod cell;
mod error;
mod file;
mod plan;
mod resume;

pub use error::{CellError, SweepError};
pub use plan::{SweepPlan, plan};
pub use resume::{Resume, ResumeError};

use crate::Executor;
use flashkit_core::StateHasher;
use flashkit_report::Table;
use flashkit_sim::sweep::{self as store, Cell, CellResult, Setup};
use flashkit_sim::{Progress, RunSpec, Source};
use std::collections::{BTreeMap, BTreeSet};

/// A digest of everything that decides a run: the resolved spec and a canonical text of
/// its input (a workload's [`canonical`](flashkit_trace::workload::WorkloadSpec::canonical)
/// form, a trace's content digest). Two cells with one digest run the same, however their
/// settings were spelt.
pub fn run_digest(spec: &RunSpec, input: &str) -> String {
    let mut digest = StateHasher::new();
    digest.bytes(format!("{spec:?} {input}").as_bytes());
    format!("{:016x}", digest.finish())
}

/// The input text [`run_digest`] takes for a source: a workload's canonical form, a
/// prepared trace's content digest, a binary trace's path (its content is not read here).
pub fn input_of(source: &Source) -> String {
    match source {
        Source::Workload(workload) => workload.canonical(),
        Source::Trace(prepared) => format!("trace {:032x}", prepared.digest),
        Source::Binary(path) => format!("binary {}", path.display()),
    }
}

/// A cell of `params` (its grid values, by name) running `spec` on `source`, its setup
/// recorded from `settings` (what it was made from, by name).
pub fn cell(
    params: BTreeMap<String, String>,
    spec: RunSpec,
    source: Source,
    settings: BTreeMap<String, String>,
) -> Cell {
    let run = run_digest(&spec, &input_of(&source));
    Cell {
        id: Cell::id_of(&params),
        params,
        spec,
        source,
        setup: Setup { run, settings },
    }
}

/// Run `cells` on `executor`: `progress` makes each run's progress reporter (given the
/// worker and the cell), `finished` sees each result the moment it is made (in the order
/// the runs finish). The results come back in the cells' order.
pub fn run<P: Progress>(
    cells: &[Cell],
    executor: &Executor,
    progress: impl Fn(usize, &Cell) -> P + Sync,
    mut finished: impl FnMut(usize, &CellResult),
) -> Vec<CellResult> {
    let outcomes = executor.run(
        cells.iter().collect(),
        |worker, cell| store::run_cell(cell, &progress(worker, cell)),
        |done| {
            let result = match done.result {
                Ok(result) => result.clone(),
                Err(panic) => CellResult::failed(&cells[done.index], format!("the run {panic}")),
            };
            finished(done.worker, &result);
        },
    );
    outcomes
        .into_iter()
        .zip(cells)
        .map(|(outcome, cell)| {
            outcome.unwrap_or_else(|panic| CellResult::failed(cell, format!("the run {panic}")))
        })
        .collect()
}

/// Every result as one row of a table: id, label, status, error, the parameters (every
/// cell's, in name order), then the metrics (in the order they first appear).
pub fn results_table(results: &[CellResult]) -> Table {
    let params: BTreeSet<&String> = results.iter().flat_map(|r| r.params.keys()).collect();
    let mut metrics: Vec<&String> = Vec::new();
    for r in results {
        for key in r.metrics.keys() {
            if !metrics.contains(&key) {
                metrics.push(key);
            }
        }
    }
    let header = ["id", "label", "status", "error"]
        .into_iter()
        .map(String::from)
        .chain(params.iter().map(|p| (*p).clone()))
        .chain(metrics.iter().map(|m| (*m).clone()));
    let mut table = Table::new(header);
    for r in results {
        let mut row = vec![
            r.id.clone(),
            r.label.clone(),
            r.status.clone(),
            r.error.clone().unwrap_or_default(),
        ];
        row.extend(
            params
                .iter()
                .map(|p| r.params.get(*p).cloned().unwrap_or_default()),
        );
        row.extend(
            metrics
                .iter()
                .map(|m| r.metrics.get(*m).map(|v| v.to_string()).unwrap_or_default()),
        );
        table.push(row);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::FtlKind;
    use flashkit_sim::{DeviceSpec, NoProgress};
    use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};

    fn spec(kind: FtlKind, op: f64, seed: u64) -> RunSpec {
        RunSpec {
            label: kind.to_string(),
            ftl: kind,
            options: Default::default(),
            device: DeviceSpec {
                capacity_bytes: 64 << 20,
                over_provisioning: op,
                ..DeviceSpec::default()
            },
            precondition: None,
            seed,
        }
    }

    fn workload(requests: u64) -> Source {
        Source::Workload(WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 4096 },
            requests,
            48 << 20,
        ))
    }

    fn grid() -> Vec<Cell> {
        let mut cells = Vec::new();
        for kind in [FtlKind::Page, FtlKind::Fast] {
            for op in [0.07, 0.25] {
                let params = BTreeMap::from([
                    ("ftl".to_string(), kind.to_string()),
                    ("device.op".to_string(), op.to_string()),
                ]);
                cells.push(cell(
                    params,
                    spec(kind, op, 1),
                    workload(30_000),
                    BTreeMap::new(),
                ));
            }
        }
        cells
    }

    #[test]
    fn results_come_back_in_the_grids_order_whatever_the_workers() {
        let cells = grid();
        let mut seen = Vec::new();
        let one = run(
            &cells,
            &Executor::new(1),
            |_, _| NoProgress,
            |_, r| seen.push(r.id.clone()),
        );
        let two = run(&cells, &Executor::new(2), |_, _| NoProgress, |_, _| {});
        assert_eq!(seen.len(), cells.len());
        let ids: Vec<&str> = one.iter().map(|r| r.id.as_str()).collect();
        let want: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, want);
        for (a, b) in one.iter().zip(&two) {
            assert!(a.is_ok(), "{:?}", a.error);
            assert_eq!(a.metrics, b.metrics);
        }
        // The over-provisioning reaches the run: more spare space, fewer erases.
        let erases =
            |id: &str| one.iter().find(|r| r.id == id).expect("cell").metrics["flash_erases"];
        assert!(erases("device.op=0.25;ftl=page") < erases("device.op=0.07;ftl=page"));
    }

    #[test]
    fn a_failing_cell_is_a_failed_result_and_the_others_carry_on() {
        let mut cells = grid();
        // A device too small for the page FTL's spare blocks.
        let mut small = spec(FtlKind::Page, 0.07, 1);
        small.device.capacity_bytes = 1 << 20;
        cells.insert(
            1,
            cell(
                BTreeMap::from([("ftl".to_string(), "tiny".to_string())]),
                small,
                workload(100),
                BTreeMap::new(),
            ),
        );
        let results = run(&cells, &Executor::new(2), |_, _| NoProgress, |_, _| {});
        assert!(!results[1].is_ok());
        assert!(results[1].error.is_some());
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 4);
    }

    #[test]
    fn the_results_table_has_every_parameter_and_metric() {
        let cells = grid();
        let results = run(&cells[..2], &Executor::new(1), |_, _| NoProgress, |_, _| {});
        let mut failed = CellResult::failed(&cells[2], "no".into());
        failed.params.insert("extra".into(), "x".into());
        let table = results_table(&[results[0].clone(), failed, results[1].clone()]);
        let mut csv = Vec::new();
        table.write_csv(&mut csv).expect("in memory");
        let csv = String::from_utf8(csv).expect("UTF-8");
        let mut lines = csv.lines();
        let header = lines.next().expect("header");
        assert!(
            header.starts_with("id,label,status,error,device.op,extra,ftl,"),
            "{header}"
        );
        assert!(header.contains(",write_amplification,"), "{header}");
        let rows: Vec<&str> = lines.collect();
        assert_eq!(rows.len(), 3);
        assert!(rows[1].starts_with("device.op=0.07;ftl=fast,fast,failed,no,0.07,x,fast,"));
        assert!(
            rows[1].ends_with(",,"),
            "a failed run has no metrics: {}",
            rows[1]
        );
    }

    #[test]
    fn the_digest_names_the_run_not_its_spelling() {
        let a = cell(
            BTreeMap::from([("x".into(), "1".into())]),
            spec(FtlKind::Page, 0.07, 1),
            workload(10),
            BTreeMap::new(),
        );
        let b = cell(
            BTreeMap::from([("y".into(), "2".into())]),
            spec(FtlKind::Page, 0.07, 1),
            workload(10),
            BTreeMap::from([("device.op".into(), "0.07".into())]),
        );
        assert!(a.setup.same_run(&b.setup));
        let c = cell(
            BTreeMap::new(),
            spec(FtlKind::Page, 0.07, 2),
            workload(10),
            BTreeMap::new(),
        );
        assert!(!a.setup.same_run(&c.setup));
        let d = cell(
            BTreeMap::new(),
            spec(FtlKind::Page, 0.07, 1),
            workload(11),
            BTreeMap::new(),
        );
        assert!(!a.setup.same_run(&d.setup));
    }
}
