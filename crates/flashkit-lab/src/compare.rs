//! One workload through several FTLs: the runs a comparison expands to, run side by side.
//!
//! A [`CompareSpec`] names the FTLs, the GC policies and VET variants to try, and what the
//! runs share (device, options, preconditioning, seed). [`CompareSpec::plan`] expands it to
//! one [`RunSpec`] a table column; [`run`] runs a plan on an [`Executor`] and returns each
//! run's outcome or failure in the plan's order.

use crate::exec::{Executor, Finished, JobPanic};
use flashkit_ftl::{FtlKind, FtlOptions, GcPolicy, VetConfig, VetSearch, VetTable};
use flashkit_report::Table;
use flashkit_sim::{
    DeviceSpec, MetricValue, Precondition, Progress, RunOutcome, RunSpec, SimError, Source,
};
use serde::{Deserialize, Serialize};

/// A comparison: which FTLs and variants to run, and what their runs share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareSpec {
    /// FTLs to compare, in table order; empty for every one ([`FtlKind::ALL`]).
    #[serde(default)]
    pub ftls: Vec<FtlKind>,
    /// GC policies. Empty: the page-table FTL runs under every policy and the other FTLs
    /// that collect (the extent mappings share its GC) under the default one, instead of
    /// tripling the slowest runs. Given: every FTL that collects runs under each.
    #[serde(default)]
    pub gc_policies: Vec<GcPolicy>,
    /// VET variants (insertion scheme, node layout, table); empty for `options.vet` alone.
    #[serde(default)]
    pub vet_variants: Vec<VetConfig>,
    /// Options every run shares (the GC policy and VET variant are set per run).
    #[serde(default)]
    pub options: FtlOptions,
    /// The device every run uses.
    #[serde(default)]
    pub device: DeviceSpec,
    /// Preconditioning, or `None` for a fresh drive.
    #[serde(default)]
    pub precondition: Option<Precondition>,
    /// The seed of every run.
    pub seed: u64,
}

/// The runs a comparison expands to.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparePlan {
    /// One run a table column, in table order.
    pub runs: Vec<RunSpec>,
    /// Labels asked for more than once (`ftls: [page, page]`), each run once.
    pub repeated: Vec<String>,
}

impl CompareSpec {
    /// The runs, in table order: each FTL, under each GC policy it runs under, in each VET
    /// variant; a run asked for twice is planned once and named in
    /// [`ComparePlan::repeated`].
    pub fn plan(&self) -> ComparePlan {
        let kinds = if self.ftls.is_empty() {
            FtlKind::ALL.to_vec()
        } else {
            self.ftls.clone()
        };
        let gc_given = !self.gc_policies.is_empty();
        let policies = if gc_given {
            self.gc_policies.clone()
        } else {
            GcPolicy::ALL.to_vec()
        };
        let mut runs: Vec<RunSpec> = Vec::new();
        let mut repeated: Vec<String> = Vec::new();
        for kind in kinds {
            let variants: Vec<Option<GcPolicy>> = if !kind.uses_gc_policy() {
                vec![None]
            } else if kind == FtlKind::Page || gc_given {
                policies.iter().copied().map(Some).collect()
            } else {
                vec![Some(self.options.page.gc_policy)]
            };
            let vets = if kind == FtlKind::Vet && !self.vet_variants.is_empty() {
                self.vet_variants.clone()
            } else {
                vec![self.options.vet]
            };
            for vet in vets {
                for &policy in &variants {
                    let mut options = self.options;
                    options.vet = vet;
                    if let Some(policy) = policy {
                        options.page.gc_policy = policy;
                    }
                    let label = label(kind, &options);
                    if runs.iter().any(|r| r.label == label) {
                        if !repeated.contains(&label) {
                            repeated.push(label);
                        }
                        continue;
                    }
                    runs.push(RunSpec {
                        label,
                        ftl: kind,
                        options,
                        device: self.device.clone(),
                        precondition: self.precondition,
                        seed: self.seed,
                    });
                }
            }
        }
        ComparePlan { runs, repeated }
    }
}

/// A run's name in tables and results: the FTL, with the GC policy of the FTLs that
/// collect and the variant of VET ("page/greedy", "vet/bulk/pf/greedy", "bast").
pub fn label(kind: FtlKind, options: &FtlOptions) -> String {
    if kind == FtlKind::Vet {
        let table = match options.vet.table {
            VetTable::Cuckoo => String::new(),
            other => format!("/{other}"),
        };
        let search = match options.vet.search {
            VetSearch::Paper => String::new(),
            other => format!("/{other}"),
        };
        format!(
            "vet/{}/{}{table}{search}/{}",
            options.vet.insert, options.vet.nodes, options.page.gc_policy
        )
    } else if kind.uses_gc_policy() {
        format!("{kind}/{}", options.page.gc_policy)
    } else {
        kind.to_string()
    }
}

/// Why a run gave no report.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The simulation refused or failed it (an FTL out of space, a bad trace line).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// It panicked: a bug in flashkit.
    #[error("the run {0}")]
    Panic(#[from] JobPanic),
}

/// `runs` on `source`, side by side on `executor`'s workers; each run's outcome or error
/// in the plan's order, the same on any number of workers. The extent-mapped FTLs, which
/// take several times as long as the others, start first, so they do not run alone at the
/// end. `progress(worker, run)` makes the progress of a run as it starts; `done` hears of
/// each run as it ends.
pub fn run<P: Progress>(
    runs: &[RunSpec],
    source: &Source,
    executor: &Executor,
    progress: impl Fn(usize, &RunSpec) -> P + Sync,
    mut done: impl FnMut(usize, &RunSpec),
) -> Vec<Result<RunOutcome, RunError>> {
    let jobs: Vec<&RunSpec> = runs.iter().collect();
    executor
        .run_by_key(
            jobs,
            |spec| !matches!(spec.ftl, FtlKind::Vet | FtlKind::Emt),
            |worker, spec| flashkit_sim::run(spec, source, &progress(worker, spec)),
            |f: Finished<'_, _>| done(f.worker, &runs[f.index]),
        )
        .into_iter()
        .map(|result| match result {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(error)) => Err(RunError::Sim(error)),
            Err(panic) => Err(RunError::Panic(panic)),
        })
        .collect()
}

/// Runs as rows (CSV layout): one column per metric key, in first-seen order.
pub fn runs_table(outcomes: &[RunOutcome], human: bool) -> Table {
    let mut keys: Vec<(String, String)> = Vec::new();
    for outcome in outcomes {
        for metric in outcome.report.metrics() {
            if !keys.iter().any(|(key, _)| *key == metric.key) {
                keys.push((metric.key, metric.label));
            }
        }
    }
    let header = std::iter::once(if human {
        "metric".to_string()
    } else {
        "run".to_string()
    })
    .chain(
        keys.iter()
            .map(|(key, label)| if human { label.clone() } else { key.clone() }),
    );
    let mut table = Table::new(header);
    for outcome in outcomes {
        let metrics = outcome.report.metrics();
        let mut row = vec![outcome.report.label.clone()];
        for (key, _) in &keys {
            let value = metrics
                .iter()
                .find(|m| m.key == *key)
                .map_or(MetricValue::Missing, |m| m.value.clone());
            row.push(value.render());
        }
        table.push(row);
    }
    table
}

/// The JSON document of a set of runs.
#[derive(Serialize)]
pub struct RunsDocument<'a> {
    /// The runs' reports, in the plan's order.
    pub runs: Vec<&'a flashkit_sim::RunReport>,
    /// Each run's wall clock, when asked for (they differ between equal runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_clock: Option<Vec<(&'a str, flashkit_sim::WallClock)>>,
    /// With the wall clocks: how many runs went at once (their clocks shared the machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrent_runs: Option<usize>,
    /// Runs that failed (an FTL worn out, out of space): not in `runs`, and said here so that
    /// the file does not read as if they had never been asked for.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub failed: &'a [FailedRun],
}

/// A run that failed, in a results document.
#[derive(Serialize, Debug, Clone)]
pub struct FailedRun {
    /// The run's label (`block`, `page/greedy`).
    pub label: String,
    /// Why it failed.
    pub error: String,
}

/// The JSON of `outcomes`, with their wall clocks if `wall_clock`, measured `concurrent` runs
/// at a time.
pub fn runs_document<'a>(
    outcomes: &'a [RunOutcome],
    wall_clock: bool,
    concurrent: usize,
    failed: &'a [FailedRun],
) -> RunsDocument<'a> {
    RunsDocument {
        failed,
        runs: outcomes.iter().map(|o| &o.report).collect(),
        wall_clock: wall_clock.then(|| {
            outcomes
                .iter()
                .map(|o| (o.report.label.as_str(), o.wall))
                .collect()
        }),
        concurrent_runs: wall_clock.then_some(concurrent),
    }
}

/// One line per run: how long the replay took on this machine.
pub fn wall_clock_lines(outcomes: &[RunOutcome]) -> String {
    let mut text = String::new();
    for o in outcomes {
        text.push_str(&format!(
            "wall clock {}: replay {:.2} s ({:.0} requests/s, {:.0} host pages written/s), precondition {:.2} s\n",
            o.report.label,
            o.wall.replay_seconds,
            o.wall.requests_per_second,
            o.wall.host_pages_written_per_second,
            o.wall.precondition_seconds
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::VetNodes;
    use flashkit_sim::NoProgress;
    use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};

    fn spec() -> CompareSpec {
        CompareSpec {
            ftls: Vec::new(),
            gc_policies: Vec::new(),
            vet_variants: Vec::new(),
            options: FtlOptions::default(),
            device: DeviceSpec {
                capacity_bytes: 16 << 20,
                pages_per_block: Some(32),
                over_provisioning: 0.1,
                ..DeviceSpec::default()
            },
            precondition: None,
            seed: 3,
        }
    }

    fn labels(plan: &ComparePlan) -> Vec<&str> {
        plan.runs.iter().map(|r| r.label.as_str()).collect()
    }

    #[test]
    fn the_default_plan_runs_the_page_ftl_under_every_policy() {
        let plan = spec().plan();
        assert_eq!(
            labels(&plan),
            [
                "page/greedy",
                "page/cost-benefit",
                "page/fifo",
                "block",
                "bast",
                "fast",
                "ofast",
                "vet/bis/pf/greedy",
                "emt/greedy"
            ]
        );
        assert!(plan.repeated.is_empty());
        assert!(
            plan.runs
                .iter()
                .all(|r| r.seed == 3 && r.precondition.is_none())
        );
    }

    #[test]
    fn given_policies_apply_to_every_ftl_that_collects_and_repeats_run_once() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Emt, FtlKind::Bast, FtlKind::Emt];
        s.gc_policies = vec![GcPolicy::Fifo, GcPolicy::Greedy];
        let plan = s.plan();
        assert_eq!(labels(&plan), ["emt/fifo", "emt/greedy", "bast"]);
        assert_eq!(plan.repeated, ["emt/fifo", "emt/greedy"]);
        assert_eq!(plan.runs[0].options.page.gc_policy, GcPolicy::Fifo);
    }

    #[test]
    fn vet_variants_multiply_the_vet_runs_only() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Vet, FtlKind::Page];
        s.gc_policies = vec![GcPolicy::Greedy];
        s.vet_variants = [VetNodes::Pf, VetNodes::Pd]
            .into_iter()
            .map(|nodes| VetConfig {
                nodes,
                table: VetTable::Swiss,
                ..VetConfig::default()
            })
            .collect();
        let plan = s.plan();
        assert_eq!(
            labels(&plan),
            [
                "vet/bis/pf/swiss/greedy",
                "vet/bis/pd/swiss/greedy",
                "page/greedy"
            ]
        );
        assert_eq!(plan.runs[1].options.vet.nodes, VetNodes::Pd);
    }

    /// The results of a comparison are each run's own, in the plan's order, on one worker
    /// or several: the same reports as running each alone.
    #[test]
    fn results_are_each_runs_own_in_plan_order() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Page, FtlKind::Emt, FtlKind::Fast];
        s.gc_policies = vec![GcPolicy::Greedy];
        let plan = s.plan();
        let source = small_source();
        let alone: Vec<String> = plan
            .runs
            .iter()
            .map(|r| {
                let outcome = flashkit_sim::run(r, &source, &NoProgress).expect("runs");
                serde_json::to_string(&outcome.report).expect("json")
            })
            .collect();
        for workers in [1, 3] {
            let mut ended = 0;
            let results = run(
                &plan.runs,
                &source,
                &Executor::new(workers),
                |_, _| NoProgress,
                |_, _| ended += 1,
            );
            assert_eq!(ended, 3);
            let reports: Vec<String> = results
                .into_iter()
                .map(|r| serde_json::to_string(&r.expect("runs").report).expect("json"))
                .collect();
            assert_eq!(reports, alone, "{workers} workers");
        }
    }

    /// A small workload of writes and reads.
    fn small_source() -> Source {
        let mut workload = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 4096 },
            2_000,
            16 << 20,
        );
        workload.read_fraction = 0.2;
        Source::Workload(workload)
    }

    /// The extent-mapped runs start first (on one worker, the order the runs start in),
    /// the others after them in plan order.
    #[test]
    fn extent_mapped_runs_start_first() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Page, FtlKind::Emt, FtlKind::Fast, FtlKind::Vet];
        s.gc_policies = vec![GcPolicy::Greedy];
        let plan = s.plan();
        let started = std::sync::Mutex::new(Vec::new());
        let results = run(
            &plan.runs,
            &small_source(),
            &Executor::new(1),
            |_, spec| {
                started.lock().expect("lock").push(spec.label.clone());
                NoProgress
            },
            |_, _| {},
        );
        assert!(results.iter().all(Result::is_ok));
        assert_eq!(
            started.into_inner().expect("lock"),
            ["emt/greedy", "vet/bis/pf/greedy", "page/greedy", "fast"]
        );
    }

    /// One column a metric, in the order first seen, each once; a run without a metric
    /// shows a dash; the header names the metrics by key (CSV) or label (for people).
    #[test]
    fn the_runs_table_has_a_column_a_metric_and_a_dash_where_a_run_has_none() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Page, FtlKind::Emt];
        s.gc_policies = vec![GcPolicy::Greedy];
        let plan = s.plan();
        let outcomes: Vec<RunOutcome> = plan
            .runs
            .iter()
            .map(|r| flashkit_sim::run(r, &small_source(), &NoProgress).expect("runs"))
            .collect();
        // The reference: keys in order of first sight, each run's cells by key.
        let mut keys: Vec<String> = Vec::new();
        let mut labels: Vec<String> = Vec::new();
        let mut cells: Vec<std::collections::HashMap<String, String>> = Vec::new();
        for outcome in &outcomes {
            let mut mine = std::collections::HashMap::new();
            for metric in outcome.report.metrics() {
                if !keys.contains(&metric.key) {
                    keys.push(metric.key.clone());
                    labels.push(metric.label.clone());
                }
                mine.insert(metric.key, metric.value.render());
            }
            cells.push(mine);
        }
        let csv = |table: &Table| {
            let mut out = Vec::new();
            table.write_csv(&mut out).expect("csv");
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(out.as_slice());
            reader
                .records()
                .map(|r| r.expect("row").iter().map(str::to_string).collect())
                .collect::<Vec<Vec<String>>>()
        };
        let machine = csv(&runs_table(&outcomes, false));
        let human = csv(&runs_table(&outcomes, true));
        let header = |first: &str, names: &[String]| {
            std::iter::once(first.to_string())
                .chain(names.iter().cloned())
                .collect::<Vec<String>>()
        };
        assert_eq!(machine[0], header("run", &keys));
        assert_eq!(human[0], header("metric", &labels));
        assert_eq!(machine.len(), 3);
        for (i, outcome) in outcomes.iter().enumerate() {
            let expected: Vec<String> = std::iter::once(outcome.report.label.clone())
                .chain(
                    keys.iter()
                        .map(|k| cells[i].get(k).cloned().unwrap_or_else(|| "-".into())),
                )
                .collect();
            assert_eq!(machine[i + 1], expected);
            assert_eq!(human[i + 1], expected);
        }
        // EMT reports figures the page table does not: the page FTL's row has dashes.
        assert!(machine[1].iter().any(|c| c == "-"));
        assert!(keys.len() > cells[0].len());
    }

    /// A line a run, its wall-clock figures to the stated decimals.
    #[test]
    fn wall_clock_lines_give_each_runs_times_and_rates() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Page, FtlKind::Block];
        s.gc_policies = vec![GcPolicy::Greedy];
        let mut outcomes: Vec<RunOutcome> = s
            .plan()
            .runs
            .iter()
            .map(|r| flashkit_sim::run(r, &small_source(), &NoProgress).expect("runs"))
            .collect();
        outcomes[0].wall = flashkit_sim::WallClock {
            replay_seconds: 1.234,
            precondition_seconds: 0.5,
            requests_per_second: 1620.6,
            host_pages_written_per_second: 1000.4,
        };
        outcomes[1].wall = flashkit_sim::WallClock {
            replay_seconds: 2.0,
            precondition_seconds: 0.0,
            requests_per_second: 1000.0,
            host_pages_written_per_second: 800.0,
        };
        assert_eq!(
            wall_clock_lines(&outcomes),
            "wall clock page/greedy: replay 1.23 s (1621 requests/s, 1000 host pages \
             written/s), precondition 0.50 s\n\
             wall clock block: replay 2.00 s (1000 requests/s, 800 host pages written/s), \
             precondition 0.00 s\n"
        );
    }

    #[test]
    fn a_failed_run_fails_alone() {
        let mut s = spec();
        s.ftls = vec![FtlKind::Page, FtlKind::Block];
        s.gc_policies = vec![GcPolicy::Greedy];
        let plan = s.plan();
        // Beyond the device: every run refuses the request, each with its own error.
        let workload = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 4096 },
            10,
            64 << 20,
        );
        let results = run(
            &plan.runs,
            &Source::Workload(workload),
            &Executor::new(2),
            |_, _| NoProgress,
            |_, _| {},
        );
        assert_eq!(results.len(), 2);
        for result in results {
            let Err(error) = result else {
                panic!("a run beyond the device finished")
            };
            let error = error.to_string();
            assert!(
                error.contains("beyond") || error.contains("capacity"),
                "{error}"
            );
        }
    }
}
