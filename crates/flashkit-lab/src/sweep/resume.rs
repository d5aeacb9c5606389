//! Resuming a sweep: the results already in its directory must be of this experiment.

use flashkit_sim::SimError;
use flashkit_sim::sweep::{self as store, Cell, CellResult};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A sweep resumed into a directory that holds results: where they are and what the
/// sweep is now.
#[derive(Clone, Copy, Debug)]
pub struct Resume<'a> {
    /// The sweep file.
    pub file: &'a Path,
    /// The directory of results.
    pub out: &'a Path,
    /// Its record of what each cell ran (`cells.json`).
    pub setups: &'a Path,
}

/// Why a directory's results cannot be resumed by this sweep.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// It holds results of cells the grid no longer has.
    #[error(
        "{} holds results of {} that the grid of {} no longer has ({}); resuming would leave \
         them among this experiment's results: put their values back in the grid, {INSTEAD}",
        out.display(), count(cells.len(), "cell"), file.display(), listed(cells)
    )]
    Gone {
        /// The directory.
        out: PathBuf,
        /// The sweep file.
        file: PathBuf,
        /// The cells' ids.
        cells: Vec<String>,
    },
    /// It does not record what its results ran.
    #[error(
        "{} holds results but no cells.json saying what they ran (an older flashkit wrote \
         it), so --resume cannot check that they were made under the settings of {}: \
         {INSTEAD}",
        out.display(), file.display()
    )]
    Unrecorded {
        /// The directory.
        out: PathBuf,
        /// The sweep file.
        file: PathBuf,
    },
    /// Results were made under other settings than the file gives their cells now.
    #[error(
        "{} holds results made under other settings than {} gives now, and resuming would \
         mix the two: cell {id}{}: {why}; {INSTEAD}",
        out.display(), file.display(), others_text(*others)
    )]
    Changed {
        /// The directory.
        out: PathBuf,
        /// The sweep file.
        file: PathBuf,
        /// The first such cell.
        id: String,
        /// How many others there are.
        others: usize,
        /// What differs for the first.
        why: String,
    },
    /// The record of what the cells ran could not be read.
    #[error("{0}")]
    Store(SimError),
}

/// What to do instead of resuming.
const INSTEAD: &str = "use a new --out, or --force instead of --resume to start over";

impl Resume<'_> {
    /// Check that `recorded` (the directory's results) are of `cells`, the sweep's cells
    /// now: a cell id names only its grid values, so results of cells the grid no longer
    /// has, and results whose run (`cells.json`) differs from what the file now gives
    /// their cell, would mix two experiments. The error says what differs.
    pub fn check(&self, cells: &[Cell], recorded: &[CellResult]) -> Result<(), ResumeError> {
        let current: HashMap<&str, &Cell> = cells.iter().map(|c| (c.id.as_str(), c)).collect();
        let ids: BTreeSet<&str> = recorded.iter().map(|r| r.id.as_str()).collect();
        let gone: Vec<String> = ids
            .iter()
            .filter(|id| !current.contains_key(*id))
            .map(|id| id.to_string())
            .collect();
        if !gone.is_empty() {
            return Err(ResumeError::Gone {
                out: self.out.to_path_buf(),
                file: self.file.to_path_buf(),
                cells: gone,
            });
        }
        let Some(setups) = store::read_setups(self.setups).map_err(ResumeError::Store)? else {
            return Err(ResumeError::Unrecorded {
                out: self.out.to_path_buf(),
                file: self.file.to_path_buf(),
            });
        };
        let mut changed: Vec<(&str, String)> = Vec::new();
        for id in ids {
            let now = &current[id].setup;
            let why = match setups.get(id) {
                None => format!("{} does not say what it ran", self.setups.display()),
                Some(before) if !before.same_run(now) => {
                    let differences = before.differences(now);
                    if differences.is_empty() {
                        "its settings are the same, but what this flashkit makes of them is \
                         not (another version of flashkit ran it)"
                            .to_string()
                    } else {
                        differences.join("; ")
                    }
                }
                Some(_) => continue,
            };
            changed.push((id, why));
        }
        let Some((id, why)) = changed.first() else {
            return Ok(());
        };
        Err(ResumeError::Changed {
            out: self.out.to_path_buf(),
            file: self.file.to_path_buf(),
            id: id.to_string(),
            others: changed.len() - 1,
            why: why.clone(),
        })
    }
}

/// " (and 1 other cell)", " (and 3 other cells)", or nothing.
fn others_text(others: usize) -> String {
    match others {
        0 => String::new(),
        1 => " (and 1 other cell)".to_string(),
        n => format!(" (and {n} other cells)"),
    }
}

/// `n` things: "1 cell", "3 cells".
fn count(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// A few ids, and how many more.
fn listed(ids: &[String]) -> String {
    let shown = ids.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    match ids.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_ftl::FtlKind;
    use flashkit_sim::{DeviceSpec, RunSpec, Source};
    use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};
    use std::collections::BTreeMap;

    /// A cell `ftl=KIND` whose run has `seed`.
    fn cell(kind: &str, seed: u64) -> Cell {
        let spec = RunSpec {
            label: kind.to_string(),
            ftl: kind.parse().unwrap_or(FtlKind::Page),
            options: Default::default(),
            device: DeviceSpec::default(),
            precondition: None,
            seed,
        };
        let source = Source::Workload(WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 4096 },
            10,
            1 << 20,
        ));
        let settings = BTreeMap::from([("run.seed".to_string(), seed.to_string())]);
        crate::sweep::cell(
            BTreeMap::from([("ftl".to_string(), kind.to_string())]),
            spec,
            source,
            settings,
        )
    }

    /// Resuming `s.toml` into `out`, whose record of what its cells ran is `setups`.
    fn resume_with(setups: &Path) -> Resume<'_> {
        Resume {
            file: Path::new("s.toml"),
            out: Path::new("out"),
            setups,
        }
    }

    #[test]
    fn results_of_another_grid_or_other_settings_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setups = dir.path().join("cells.json");
        let resume = resume_with(&setups);
        let cells = [cell("page", 1), cell("fast", 1)];
        let recorded = [CellResult::failed(&cells[0], String::new())];
        let check = |cells: &[Cell], recorded: &[CellResult]| {
            resume.check(cells, recorded).err().map(|e| e.to_string())
        };
        assert_eq!(
            check(&cells[1..], &recorded).as_deref(),
            Some(
                "out holds results of 1 cell that the grid of s.toml no longer has (ftl=page); \
                 resuming would leave them among this experiment's results: put their values \
                 back in the grid, use a new --out, or --force instead of --resume to start over"
            )
        );
        assert!(matches!(
            resume.check(&cells, &recorded),
            Err(ResumeError::Unrecorded { .. })
        ));
        let write = |cells: &[Cell]| {
            let setups_of = cells
                .iter()
                .map(|c| (c.id.clone(), c.setup.clone()))
                .collect();
            store::write_setups(&setups, &setups_of).expect("write");
        };
        write(&cells);
        assert_eq!(check(&cells, &recorded), None);
        let now = [cell("page", 2), cell("fast", 1)];
        assert_eq!(
            check(&now, &recorded).as_deref(),
            Some(
                "out holds results made under other settings than s.toml gives now, and \
                 resuming would mix the two: cell ftl=page: run.seed: 1 before, 2 now; use \
                 a new --out, or --force instead of --resume to start over"
            )
        );
    }

    /// A cell whose run differs with the same settings (another flashkit), a cell the record
    /// does not name, and how many other cells changed: the first in id order is told.
    #[test]
    fn what_changed_is_told_for_the_first_cell_with_a_count_of_the_others() {
        let dir = tempfile::tempdir().expect("tempdir");
        let setups = dir.path().join("cells.json");
        let resume = resume_with(&setups);
        let before = [cell("bast", 1), cell("fast", 1), cell("page", 1)];
        let setups_of = before[1..]
            .iter()
            .map(|c| (c.id.clone(), c.setup.clone()))
            .collect();
        store::write_setups(&setups, &setups_of).expect("write");
        let recorded: Vec<CellResult> = before
            .iter()
            .map(|c| CellResult::failed(c, String::new()))
            .collect();
        let error = resume
            .check(&before, &recorded)
            .expect_err("bast unrecorded");
        assert_eq!(
            error.to_string(),
            format!(
                "out holds results made under other settings than s.toml gives now, and \
                 resuming would mix the two: cell ftl=bast: {} does not say what it ran; use a \
                 new --out, or --force instead of --resume to start over",
                setups.display()
            )
        );
        // Same settings, another run: what this flashkit makes of them changed.
        let mut page = cell("page", 1);
        page.spec.seed = 9;
        page.setup.run = crate::sweep::run_digest(&page.spec, "another input");
        let mut fast = cell("fast", 2);
        fast.setup.settings = before[1].setup.settings.clone();
        let now = [before[0].clone(), fast, page];
        let all = before
            .iter()
            .map(|c| (c.id.clone(), c.setup.clone()))
            .collect();
        store::write_setups(&setups, &all).expect("write");
        match resume.check(&now, &recorded) {
            Err(ResumeError::Changed {
                id, others, why, ..
            }) => {
                assert_eq!((id.as_str(), others), ("ftl=fast", 1));
                assert_eq!(
                    why,
                    "its settings are the same, but what this flashkit makes of them is not \
                     (another version of flashkit ran it)"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(
            resume
                .check(&now, &recorded)
                .expect_err("changed")
                .to_string()
                .contains("cell ftl=fast (and 1 other cell): its settings are the same")
        );
        let ids: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(listed(&ids), "a, b, c");
    }

    #[test]
    fn the_ids_and_counts_read_as_sentences() {
        let ids: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(listed(&ids[..2]), "a, b");
        assert_eq!(listed(&ids), "a, b, c and 2 more");
        assert_eq!(count(1, "cell"), "1 cell");
        assert_eq!(count(3, "cell"), "3 cells");
        assert_eq!(others_text(0), "");
        assert_eq!(others_text(1), " (and 1 other cell)");
        assert_eq!(others_text(4), " (and 4 other cells)");
    }
}
