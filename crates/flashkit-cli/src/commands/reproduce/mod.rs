//! `flashkit reproduce <paper>`: rerun a paper's evaluation and print the paper's published
//! figures beside flashkit's. One subcommand per paper; each lives in its own module.

pub mod all;
pub mod fast;
pub mod fatlist;
pub mod flashmodel;
pub mod grr;
pub mod vet;

use crate::args::reproduce::Paper;
use crate::failure::{Failure, Outcome};
use anyhow::anyhow;
use flashkit_lab::repro::{Document, LEDGER_NAME, LabError, LedgerPlace, Reproduction};
use flashkit_report::plot::PlotError;
use std::path::{Path, PathBuf};

/// Run one reproduction; `given` holds the options given on the command line (clap ids), so
/// that one the run would not read is refused rather than ignored.
pub fn run(paper: Paper, given: &[String]) -> Outcome {
    // Output files are checked before the evaluation runs, not when it is over.
    let outputs = match &paper {
        Paper::Fast(a) => vec![("--json", a.json.as_deref()), ("--csv", a.csv.as_deref())],
        Paper::Fatlist(a) => vec![("--json", a.json.as_deref())],
        Paper::Grr(a) => vec![("--json", a.json.as_deref())],
        _ => Vec::new(),
    };
    crate::output::check_outputs(&outputs).map_err(Failure::Usage)?;
    // --wall-clock-in-json needs a JSON: --json or the one --out writes.
    let wall_without_json = match &paper {
        Paper::Fatlist(a) => a.wall_clock_in_json && a.json.is_none() && a.out.is_none(),
        Paper::Grr(a) => a.wall_clock_in_json && a.json.is_none() && a.out.is_none(),
        _ => false,
    };
    if wall_without_json {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--wall-clock-in-json needs a JSON to write: give --json FILE or --out DIR"
        )));
    }
    // The default directory may be missing (the excerpts are optional: the run notes it and
    // goes on); one the user named must exist.
    let traces = match &paper {
        Paper::Fast(a) => Some(&a.traces),
        Paper::Vet(a) => Some(&a.traces),
        _ => None,
    };
    if let Some(dir) = traces
        && given.iter().any(|id| id == "traces")
        && !dir.is_dir()
    {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--traces {}: no such directory",
            dir.display()
        )));
    }
    match paper {
        Paper::All(args) => all::run(&args),
        Paper::Fast(args) => fast::run(args),
        Paper::Fatlist(args) => fatlist::run(&args, given),
        Paper::Flashmodel(args) => flashmodel::run(&args),
        Paper::Grr(args) => grr::run(&args),
        Paper::Vet(args) => vet::run(args, given),
    }
}

/// The figures a `reproduce` command writes into its `--out` directory, as SVG: each saved
/// under the name of the paper's figure (`fig10.svg`), and only when it has something to
/// draw (a run narrowed by `--only` or `--quick` may leave a figure without data).
///
/// A command that fails (a full disk, an interrupted run) removes again the directory and
/// the files it created there: the figures appear all together or not at all.
pub struct Figures {
    dir: PathBuf,
    written: Vec<String>,
    undo: crate::output::Undo,
}

impl Figures {
    /// Figures (and whatever else the command writes) in `dir`, created if missing.
    pub fn create(dir: &Path) -> anyhow::Result<Figures> {
        let mut undo = crate::output::Undo::default();
        undo.create_dir_all(dir)?;
        Ok(Figures {
            dir: dir.to_path_buf(),
            written: Vec::new(),
            undo,
        })
    }

    /// The figures of an `--out DIR` option, if given: made before a command runs, so that
    /// a directory that cannot be created fails at once rather than after a long run.
    pub fn prepare(out: Option<&Path>) -> Result<Option<Figures>, Failure> {
        out.map(Figures::create)
            .transpose()
            .map_err(Failure::Runtime)
    }

    /// The path of `name` in the directory, to be written (and removed again if the command
    /// fails, unless it was there before).
    pub fn path(&mut self, name: &str) -> PathBuf {
        let path = self.dir.join(name);
        self.undo.note(&path);
        path
    }

    /// Record a file the command wrote into the directory by other means (a JSON document).
    pub fn note(&mut self, name: &str) {
        self.written.push(name.to_string());
    }

    /// Save a chart as `name`; a chart with no data is skipped, any other failure is an
    /// error naming the file.
    pub fn save(&mut self, name: &str, svg: Result<String, PlotError>) -> anyhow::Result<()> {
        match svg {
            Ok(svg) => {
                let path = self.path(name);
                crate::output::write_file(&path, svg)?;
                self.written.push(name.to_string());
                Ok(())
            }
            Err(PlotError::Empty(_)) => Ok(()),
            Err(e) => Err(anyhow!("{name}: {e}")),
        }
    }

    /// Keep what was written, and print the closing "wrote DIR/a, b, c" line.
    pub fn report(&mut self) {
        self.undo.keep();
        println!("\n{}", self.wrote_line());
    }

    /// "wrote DIR/a, b, c": what was written.
    pub fn wrote_line(&self) -> String {
        format!("wrote {}/{}", self.dir.display(), self.written.join(", "))
    }
}

/// A lab error as the CLI reports it: a spec's field at fault under the option's name
/// (`capacity` is `--capacity`, and so is a field the problem names in backquotes), exit
/// status 2 for what the user asked, 1 for a failed run.
pub fn lab_failure(error: LabError) -> Failure {
    match error {
        LabError::Spec { field, problem } => {
            Failure::Usage(anyhow!("{} {}", flag(field), flags_in(&problem)))
        }
        LabError::Unknown {
            field,
            what,
            name,
            known,
        } => Failure::Usage(anyhow!(
            "unknown {what} {name:?} in {}; expected some of: {}",
            flag(field),
            known.join(", ")
        )),
        LabError::Config(e) => Failure::Usage(anyhow!(e)),
        LabError::Run(e) => Failure::Runtime(anyhow!(e)),
    }
}

/// The option a spec's field is given with: `buffer_size` is `--buffer-size`.
fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

/// `problem` with every field it names in backquotes (`` `only` ``) as its option.
pub fn flags_in(problem: &str) -> String {
    let mut out = String::new();
    let mut rest = problem;
    while let Some(start) = rest.find('`') {
        let Some(len) = rest[start + 1..].find('`') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&flag(&rest[start + 1..start + 1 + len]));
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// Render a reproduction: its notes on stderr, its text on stdout; its first document to
/// `json`; its rows to `csv`; and into `figures`' directory every document, the claims
/// ledger as `claims.json` (after them, unless it is one of them), and every figure that
/// has something to draw, as SVG.
pub fn show(
    reproduction: &Reproduction,
    json: Option<&Path>,
    csv: Option<&Path>,
    figures: Option<&mut Figures>,
) -> Outcome {
    for note in &reproduction.notes {
        eprintln!("note: {note}");
    }
    print!("{}", reproduction.text());
    if let (Some(path), Some(document)) = (json, reproduction.documents.first()) {
        crate::output::write_json(path, &document.json)?;
    }
    if let (Some(path), Some(rows)) = (csv, &reproduction.rows) {
        crate::output::write_csv(path, rows)?;
    }
    if let Some(figures) = figures {
        for document in &reproduction.documents {
            crate::output::write_json(&figures.path(&document.name), &document.json)?;
            figures.note(&document.name);
        }
        // The ledger as claims.json, unless the reproduction lists it among its documents.
        let listed = reproduction.documents.iter().any(|d| d.name == LEDGER_NAME);
        let ledger = |figures: &mut Figures| -> Outcome {
            let ledger = Document::ledger(&reproduction.claims);
            crate::output::write_json(&figures.path(&ledger.name), &ledger.json)?;
            figures.note(&ledger.name);
            Ok(())
        };
        if !listed && reproduction.ledger_place == LedgerPlace::AfterDocuments {
            ledger(figures)?;
        }
        for figure in &reproduction.figures {
            figures.save(&figure.name, figure.chart.svg())?;
        }
        if !listed && reproduction.ledger_place == LedgerPlace::AfterFigures {
            ledger(figures)?;
        }
        figures.report();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_error_names_the_options_of_its_fields() {
        let message = |field, problem: &str| match lab_failure(LabError::spec(field, problem)) {
            Failure::Usage(e) => e.to_string(),
            Failure::Runtime(e) => panic!("not a usage error: {e}"),
        };
        assert_eq!(
            message("bfs_max_log", "16 is below `bfs_min_log` 18: no grid"),
            "--bfs-max-log 16 is below --bfs-min-log 18: no grid"
        );
        assert_eq!(
            message("readings", "is for `only` sensor, not `only` sizes"),
            "--readings is for --only sensor, not --only sizes"
        );
        assert_eq!(message("tmp", "a ` alone"), "--tmp a ` alone");
    }
}
