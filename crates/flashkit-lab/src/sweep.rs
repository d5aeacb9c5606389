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
//! The on-disk form (`results.jsonl`, `cells.json`) is [`flashkit_sim::sweep`]'s.

use crate::Executor;
use flashkit_core::StateHasher;
use flashkit_sim::sweep::{self as store, Cell, CellResult, Setup};
use flashkit_sim::{Progress, RunSpec, Source};
use std::collections::BTreeMap;

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
        |worker, cell| store::run_cell(cell, &mut progress(worker, cell)),
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
