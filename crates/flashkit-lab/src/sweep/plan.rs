//! A sweep file expanded into its cells, each checked before anything runs.

use super::cell::{Combo, TraceCache, cell};
use super::error::{CellError, SweepError};
use super::file::{Grid, SweepFile, combinations, grid_of};
use crate::config::{ConfigError, at_fault, option_lines, read_toml_text};
use flashkit_sim::Source;
use flashkit_sim::sweep::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A sweep file expanded: its name and workers, if it gives them, and its cells in grid
/// order, each a run that can run on its input.
#[derive(Debug)]
pub struct SweepPlan {
    /// The file's `name`.
    pub name: Option<String>,
    /// The file's `jobs`.
    pub jobs: Option<usize>,
    /// The cells, in the grid's order.
    pub cells: Vec<Cell>,
}

/// Read the sweep file at `path` and expand its grid into cells: every combination of the
/// grid's values is one cell, the base config with those options set. Its traces (paths
/// relative to the file) are read once each. Every error names the file and, where it
/// can, its lines at fault.
pub fn plan(path: &Path) -> Result<SweepPlan, SweepError> {
    let text = read_toml_text(path, "sweep file").map_err(SweepError::File)?;
    let file: SweepFile = toml::from_str(&text).map_err(|error| {
        SweepError::File(ConfigError::Syntax {
            what: "sweep file",
            path: path.to_path_buf(),
            error: Box::new(error),
        })
    })?;
    let grid = grid_of(&text, &file).map_err(|problem| SweepError::Invalid {
        path: path.to_path_buf(),
        problem,
    })?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut traces = TraceCache::new();
    let checked = |file: &SweepFile, combo: &Combo, traces: &mut TraceCache| {
        let c = cell(file, &dir, combo, traces)?;
        c.spec
            .check_on(&c.source)
            .map_err(|error| CellError::Check {
                id: c.id.clone(),
                error,
            })?;
        Ok::<_, CellError>(c)
    };
    let mut cells = Vec::new();
    for combo in combinations(&grid) {
        match checked(&file, &combo, &mut traces) {
            Ok(c) => cells.push(c),
            Err(error) => {
                let place = Place {
                    text: &text,
                    file: &file,
                    grid: &grid,
                };
                let lines = place.blame(&combo, &error, |file, combo| {
                    checked(file, combo, &mut traces).map(drop)
                });
                return Err(SweepError::Cell {
                    path: path.to_path_buf(),
                    lines,
                    error: Box::new(error),
                });
            }
        }
    }
    refuse_same_runs(path, &cells)?;
    Ok(SweepPlan {
        name: file.name,
        jobs: file.jobs,
        cells,
    })
}

/// Two cells that are one run would run twice and be drawn as two points (or, with one
/// id, recorded twice): a value listed twice, two spellings of a value (`64M`, `64MiB`).
fn refuse_same_runs(path: &Path, cells: &[Cell]) -> Result<(), SweepError> {
    let mut runs: HashMap<String, &str> = HashMap::new();
    for c in cells {
        let input = match &c.source {
            Source::Workload(spec) => format!("{spec:?}"),
            Source::Binary(path) => path.display().to_string(),
            // The trace cache hands cells with one file, options and block size one trace.
            Source::Trace(prepared) => format!("{:p}", Arc::as_ptr(prepared)),
        };
        if let Some(first) = runs.insert(format!("{:?} {input}", c.spec), &c.id) {
            return Err(SweepError::SameRun {
                path: path.to_path_buf(),
                first: first.to_string(),
                second: c.id.clone(),
            });
        }
    }
    Ok(())
}

/// A sweep file read, to find the lines a cell's error is about.
struct Place<'a> {
    text: &'a str,
    file: &'a SweepFile,
    grid: &'a Grid,
}

impl Place<'_> {
    /// The lines of the sweep file that `error`, of the cell made of `combo`, is about:
    /// each `[base]` option and each grid value of the cell is left out in turn, and those
    /// whose absence lets the cell build and check are at fault (failing that, those whose
    /// absence changes the error). A cell's error named the cell but not the line.
    fn blame(
        &self,
        combo: &Combo,
        error: &CellError,
        mut check: impl FnMut(&SweepFile, &Combo) -> Result<(), CellError>,
    ) -> Vec<String> {
        let mut verdicts: Vec<(String, Option<String>)> = Vec::new();
        for option in option_lines(self.text, Some("base")) {
            let mut without = self.file.clone();
            if let Some(toml::Value::Table(options)) = without.base.get_mut(&option.section) {
                options.remove(&option.key);
            }
            let place = format!(
                "line {} ([base.{}] {})",
                option.line, option.section, option.written
            );
            verdicts.push((place, check(&without, combo).err().map(|e| e.to_string())));
        }
        for dimension in self.grid {
            let Some(value) = combo.get(&dimension.name) else {
                continue;
            };
            let line = dimension
                .values
                .iter()
                .find(|(v, _)| v == value)
                .map_or(dimension.line, |&(_, line)| line);
            let mut without = combo.clone();
            without.remove(&dimension.name);
            let place = format!("line {line} ({} {})", dimension.spelt, value);
            let verdict = check(self.file, &without).err().map(|e| e.to_string());
            verdicts.push((place, verdict));
        }
        at_fault(&error.to_string(), verdicts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The plan of the sweep file `text`, written into a temporary directory.
    fn plan_of(text: &str) -> Result<SweepPlan, SweepError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).expect("write");
        plan(&path).map_err(|error| {
            // The messages name the file by its path; these tests by its name.
            let text = error
                .to_string()
                .replace(&path.display().to_string(), "s.toml");
            SweepError::Invalid {
                path: PathBuf::from("s.toml"),
                problem: text,
            }
        })
    }

    fn message(text: &str) -> String {
        let SweepError::Invalid { problem, .. } = plan_of(text).expect_err(text) else {
            unreachable!("plan_of gives Invalid")
        };
        problem
    }

    const BASE: &str = "[base.device]\ncapacity = \"64M\"\n[base.workload]\nrequests = 100\n";

    #[test]
    fn every_combination_of_the_grid_is_a_cell_in_key_order() {
        let text = format!(
            "name = \"n\"\njobs = 3\n{BASE}[grid]\nftl = [\"page\", \"fast\"]\n\
             [grid.device]\nop = [0.07, 0.25]\n"
        );
        let plan = plan_of(&text).expect("valid");
        assert_eq!((plan.name.as_deref(), plan.jobs), (Some("n"), Some(3)));
        let ids: Vec<&str> = plan.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "device.op=0.07;ftl=page",
                "device.op=0.07;ftl=fast",
                "device.op=0.25;ftl=page",
                "device.op=0.25;ftl=fast",
            ]
        );
        let cell = &plan.cells[2];
        assert_eq!(cell.spec.ftl, flashkit_ftl::FtlKind::Page);
        assert_eq!(cell.spec.device.over_provisioning, 0.25);
        assert_eq!(cell.spec.device.capacity_bytes, 64 << 20);
        assert_eq!(cell.setup.settings["workload.requests"], "100");
        assert_eq!(cell.setup.settings["device.op"], "0.25");
    }

    #[test]
    fn a_bad_key_or_value_is_refused_at_its_line() {
        assert_eq!(
            message("[grid]\nftl = [\"page\"]\n\"device.op\" = [100]\n"),
            "sweep file s.toml: line 3: grid key device.op: over-provisioning 100 is not a \
             fraction between 0 and 4 (0.07 means 7%)"
        );
        assert_eq!(
            message("[grid]\nseed = [1]\n\"run.seed\" = [2]\n"),
            "sweep file s.toml: line 2 (seed in [grid]) and line 3 (\"run.seed\" in [grid]) \
             both set run.seed (a grid seed is run.seed): keep one"
        );
        assert_eq!(
            message("[base.device]\ncapacty = 1\n[grid]\nftl = [\"page\"]\n"),
            "sweep file s.toml: line 2: base.device.capacty: unknown field `capacty`, expected \
             one of `preset`, `capacity`, `op`, `page_size`, `pages_per_block`, `endurance`"
        );
        assert!(message("[grid]\n").contains("[grid] has no keys"));
    }

    #[test]
    fn a_cell_that_cannot_be_made_names_the_lines_at_fault() {
        let text = format!("{BASE}[grid]\nftl = [\"page\"]\n\"workload.theta\" = [0.5]\n");
        assert_eq!(
            message(&text),
            "sweep file s.toml, line 7 (\"workload.theta\" in [grid] 0.5): grid cell ftl=page, \
             workload.theta=0.5: --theta applies to --workload zipf, but the workload is \
             hot-cold (the default)"
        );
        let text = format!("{BASE}[grid]\nftl = [\"page\"]\n\"ftl.gc\" = [\"greedy,fifo\"]\n");
        assert!(message(&text).contains("ftl.gc has several values, and a cell runs one FTL"));
        let text = "[base.workload]\nread_fraction = 0.7\ntrim_fraction = 0.5\n[grid]\n\
                    ftl = [\"page\"]\n";
        assert_eq!(
            message(text),
            "sweep file s.toml, line 2 ([base.workload] read_fraction = 0.7) and line 3 \
             ([base.workload] trim_fraction = 0.5): cell ftl=page: invalid workload: \
             read_fraction + trim_fraction exceeds 1"
        );
    }

    #[test]
    fn two_spellings_of_one_value_are_one_run() {
        let text =
            format!("{BASE}[grid]\nftl = [\"page\"]\n\"device.capacity\" = [\"64M\", \"64MiB\"]\n");
        let problem = message(&text);
        assert!(
            problem.contains(
                "grid cells device.capacity=64M;ftl=page and device.capacity=64MiB;ftl=page \
                 are the same run"
            ),
            "{problem}"
        );
    }

    /// Every refusal of the sweep file's grid and base names its line and what is wrong.
    #[test]
    fn each_problem_of_the_grid_and_base_is_named_at_its_line() {
        for (text, expected) in [
            (
                "jobs = 0\n[grid]\nftl = [\"page\"]\n",
                "jobs is 0; a sweep needs at least one worker",
            ),
            (
                "[grid]\nftl = [\"page\"]\n[grid.device]\n",
                "line 3: [grid.device] has no keys",
            ),
            (
                "[grid]\nftl = [\"page\"]\n[grid.\"a.b\"]\n",
                "line 3: [grid.\"a.b\"] has no keys",
            ),
            (
                "[grid]\nftl = [\"page\"]\n[grid.\"\"]\n",
                "line 3: [grid.\"\"] has no keys",
            ),
            ("[grid]\nftl = []\n", "line 2: grid key ftl has no values"),
            (
                "[grid]\n\"run.seed\" = [2]\nseed = [1]\n",
                "line 2 (\"run.seed\" in [grid]) and line 3 (seed in [grid]) both set run.seed \
                 (a grid seed is run.seed): keep one",
            ),
            (
                "[grid]\n\"device.op\" = [0.1]\n[grid.device]\nop = [0.2]\n",
                "line 2 (\"device.op\" in [grid]) and line 4 (op in [grid.device]) both set \
                 device.op: keep one",
            ),
            ("[grid]\nftl = [\"pagee\"]\n", "line 2: grid ftl: "),
            (
                "[grid]\nseed = [1, -1]\n",
                "line 2: grid seed -1 is not a non-negative integer",
            ),
            (
                "[grid]\ntrace = [3]\n",
                "line 2: grid trace 3 is neither \"builtin\" nor a file name (a string)",
            ),
            (
                "[grid]\nbogus = [1]\n",
                "line 2: grid key \"bogus\" is neither ftl, trace, seed nor section.option",
            ),
            (
                "[grid]\n\"device.nosuch\" = [1]\n",
                "line 2: grid key device.nosuch: unknown field `nosuch`",
            ),
            // The file's own reading refuses a base or grid that is no table.
            (
                "base = 3\n[grid]\nftl = [\"page\"]\n",
                "line 1, column 8\n  |\n1 | base = 3\n  |        ^\ninvalid type: integer `3`, \
                 expected a map",
            ),
            (
                "[base]\ndevice = 3\n[grid]\nftl = [\"page\"]\n",
                "line 2: base.device: invalid type: integer `3`, expected struct DeviceArgs",
            ),
            (
                "[base.nosuch]\n[grid]\nftl = [\"page\"]\n",
                "line 1: base.nosuch: unknown field `nosuch`",
            ),
            (
                "[base.workload]\n\"a.b\" = 1\n[grid]\nftl = [\"page\"]\n",
                "line 2: base.workload.\"a.b\": unknown field `a.b`",
            ),
            ("grid = 3\n", "line 1, column 8"),
            ("[grid]\n", "[grid] has no keys: a sweep needs at least one"),
        ] {
            let problem = match plan_of(text) {
                Err(SweepError::Invalid { problem, .. }) => problem,
                other => panic!("{text}: {other:?}"),
            };
            assert!(problem.contains(expected), "{text}: {problem}");
        }
    }

    /// A grid value may be one value rather than a list; a value that is not a string is a
    /// parameter as TOML writes it, a string without its quotes; a nested table's keys are
    /// its section's options; one worker is enough.
    #[test]
    fn grid_values_are_parameters_as_written() {
        let text = format!(
            "jobs = 1\n{BASE}[grid]\nftl = \"page\"\nseed = [0, 7]\n[grid.device]\nop = 0.25\n\
             capacity = \"64M\"\n"
        );
        let plan = plan_of(&text).expect("valid");
        assert_eq!(plan.jobs, Some(1));
        let ids: Vec<&str> = plan.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "device.capacity=64M;device.op=0.25;ftl=page;seed=0",
                "device.capacity=64M;device.op=0.25;ftl=page;seed=7",
            ]
        );
        assert_eq!(plan.cells[1].spec.seed, 7);
        assert_eq!(plan.cells[0].spec.seed, 0);
    }

    /// A cell records the settings it is made of as the file spells them: the base's and the
    /// grid's options by `section.option`, its FTL, trace and seed.
    #[test]
    fn a_cell_records_the_settings_it_is_made_of() {
        let text = format!("{BASE}[grid]\nftl = [\"fast\"]\nseed = [3]\n\"device.op\" = [0.25]\n");
        let plan = plan_of(&text).expect("valid");
        let settings = &plan.cells[0].setup.settings;
        let expected: BTreeMap<String, String> = [
            ("device.capacity", "\"64M\""),
            ("device.op", "0.25"),
            ("workload.requests", "100"),
            ("ftl", "fast"),
            ("trace", "builtin"),
            ("seed", "3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(*settings, expected);
        let spec = &plan.cells[0].spec;
        assert_eq!((spec.ftl, spec.seed), (flashkit_ftl::FtlKind::Fast, 3));
        assert_eq!(spec.label, "fast");
    }

    /// A grid option that would do nothing in its cell is refused naming its grid key and
    /// what it is for: a trace option over the built-in workload, a workload option over a
    /// trace, an FTL option the cell's FTL does not read.
    #[test]
    fn grid_options_a_cell_would_not_read_are_refused_by_grid_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("t.csv"), "0,h,0,Write,0,4096,1\n").expect("write");
        let problem = |text: &str| {
            let path = dir.path().join("s.toml");
            std::fs::write(&path, text).expect("write");
            plan(&path).expect_err(text).to_string()
        };
        let builtin = problem("[grid]\nftl = [\"page\"]\n\"trace.asu\" = [1, 2]\n");
        assert!(
            builtin.contains(
                "grid cell ftl=page, trace.asu=1: trace.asu is an option for reading a trace, \
                 and the cell runs the built-in workload"
            ),
            "{builtin}"
        );
        let traced = problem(
            "[base.trace]\nformat = \"msr\"\n[grid]\ntrace = [\"t.csv\"]\n\
             \"workload.requests\" = [5]\n\"workload.span\" = [4096]\n",
        );
        assert!(
            traced.contains(
                "workload.requests, workload.span are options for the built-in workload, and \
                 the cell replays a trace"
            ),
            "{traced}"
        );
        let ftl = problem("[grid]\nftl = [\"page\"]\n\"ftl.log_blocks\" = [4]\n");
        assert!(
            ftl.contains("ftl.log_blocks is an option for ")
                && ftl.contains(", and the cell runs page"),
            "{ftl}"
        );
        let listed = problem("[base.ftl]\ngc = \"greedy,fifo\"\n[grid]\nftl = [\"page\"]\n");
        assert!(
            listed.contains(
                "ftl.gc has several values, and a cell runs one FTL: make them grid values"
            ),
            "{listed}"
        );
        let listed = problem(
            "[base.ftl]\ngc = \"greedy,fifo\"\nvet_nodes = [\"pd\", \"pf\"]\n[grid]\nftl = [\"vet\"]\n",
        );
        assert!(
            listed.contains("ftl.gc, ftl.vet_nodes have several values"),
            "{listed}"
        );
    }

    /// A cell's FTL runs the one GC policy its options give.
    #[test]
    fn a_cell_runs_the_gc_policy_it_is_given() {
        let text = format!("{BASE}[grid]\nftl = [\"page\"]\n\"ftl.gc\" = [\"fifo\", \"greedy\"]\n");
        let plan = plan_of(&text).expect("valid");
        let policies: Vec<_> = plan
            .cells
            .iter()
            .map(|c| c.spec.options.page.gc_policy)
            .collect();
        assert_eq!(
            policies,
            [flashkit_ftl::GcPolicy::Fifo, flashkit_ftl::GcPolicy::Greedy]
        );
    }

    /// A trace is read once for the cells that read it alike, the device sized to it unless
    /// the cell gives a capacity; its content is part of what the cell records.
    #[test]
    fn a_trace_is_read_once_and_sizes_the_device_unless_a_capacity_is_given() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut trace = String::new();
        for i in 0..64u64 {
            trace.push_str(&format!(
                "{},h,0,Write,{},4096,1\n",
                1000 + i,
                i * 4096 * 97
            ));
        }
        std::fs::write(dir.path().join("t.csv"), trace).expect("write");
        let path = dir.path().join("s.toml");
        std::fs::write(
            &path,
            "[base.trace]\nformat = \"msr\"\n[grid]\nftl = [\"page\", \"fast\"]\n\
             trace = [\"t.csv\"]\n\"device.capacity\" = [\"1G\", \"2G\"]\n",
        )
        .expect("write");
        let swept = plan(&path).expect("valid");
        let prepared: Vec<&Arc<flashkit_trace::formats::layout::PreparedTrace>> = swept
            .cells
            .iter()
            .map(|c| match &c.source {
                Source::Trace(t) => t,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(prepared.len(), 4);
        assert!(
            prepared.iter().all(|t| Arc::ptr_eq(t, prepared[0])),
            "read once"
        );
        let capacities: Vec<u64> = swept
            .cells
            .iter()
            .map(|c| c.spec.device.capacity_bytes)
            .collect();
        assert_eq!(capacities[..2], [1 << 30, 1 << 30]);
        assert!(capacities.contains(&(2 << 30)));
        let digest = format!("{:032x}", prepared[0].digest);
        assert!(
            swept
                .cells
                .iter()
                .all(|c| c.setup.settings["trace content"] == digest)
        );
        // Two spellings of one file are one input, so one run.
        std::fs::write(
            &path,
            "[base.trace]\nformat = \"msr\"\n[grid]\nftl = [\"page\"]\n\
             trace = [\"t.csv\", \"./t.csv\"]\n",
        )
        .expect("write");
        assert!(matches!(plan(&path), Err(SweepError::SameRun { .. })));
        // Without a capacity, the device is sized to the trace.
        std::fs::write(
            &path,
            "[base.trace]\nformat = \"msr\"\n[grid]\nftl = [\"page\"]\ntrace = [\"t.csv\"]\n",
        )
        .expect("write");
        let sized = &plan(&path).expect("valid").cells[0];
        let Source::Trace(t) = &sized.source else {
            unreachable!()
        };
        let expected = flashkit_sim::DeviceSpec::default()
            .sized_for(t)
            .expect("sized");
        assert_eq!(sized.spec.device, expected);
    }
}
