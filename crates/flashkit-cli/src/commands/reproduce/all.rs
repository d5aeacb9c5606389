//! `flashkit reproduce all`: every paper's evaluation in one command, each into its own
//! subdirectory of `--out` (as its own `--out` writes it), and one `index.html` showing
//! every figure drawn, paper by paper.
//!
//! The index shows the figures each paper drew in this run: an SVG older than the run (an
//! earlier run's, in a directory used again) is left where it is but not shown.
//!
//! Each paper runs in this process as `flashkit reproduce <paper> --out DIR/<paper>` would
//! (with `--quick` when asked): its own parser reads those options, the lab runs it, and
//! what comes back (a [`Reproduction`]) is rendered as the paper's own command renders it,
//! its printed output also kept in `DIR/<paper>/output.txt`. The index and `claims.json`
//! are built from the same values ([`flashkit_lab::repro::index`]), not from files read
//! back. A paper that fails, or
//! panics, does not stop the others; the command then ends with an error naming every
//! paper that failed.
//!
//! The papers run one after the other, on purpose: vet's mapping times and flashmodel's disk
//! probe and sort are wall-clock measurements that another paper running beside them would
//! distort (each paper uses the cores itself where its results do not depend on timing).

use super::{Figures, lab_failure};
use crate::args::VetReproArgs;
use crate::args::reproduce::{AllArgs, FastArgs, FatlistArgs, FlashmodelArgs, GrrArgs};
use crate::failure::{Failure, Outcome};
use crate::interrupt::OnInterrupt;
use crate::progress::Bar;
use anyhow::{Context, anyhow};
use clap::Args;
use flashkit_lab::claims::Paper;
use flashkit_lab::repro::index::{self, Entry};
use flashkit_lab::repro::{self as lab, Reproduction};
use std::path::Path;
use std::time::Instant;

/// The papers, in the order they run: the quick ones first.
const PAPERS: [Paper; 5] = [
    Paper::Fast,
    Paper::Vet,
    Paper::Grr,
    Paper::Fatlist,
    Paper::Flashmodel,
];

/// Run every paper asked for, then write the index.
pub fn run(args: &AllArgs) -> Outcome {
    check(args)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))
        .map_err(Failure::Runtime)?;
    let wanted = |p: &&Paper| args.only.is_empty() || args.only.iter().any(|n| n == p.name());
    let mut ran = Vec::new();
    let mut failed = Vec::new();
    for &paper in PAPERS.iter().filter(wanted) {
        let dir = args.out.join(paper.name());
        let mut words = vec![
            paper.name().to_string(),
            "--out".to_string(),
            dir.display().to_string(),
        ];
        if args.quick {
            words.push("--quick".into());
        }
        if let (Some(tmp), Paper::Flashmodel) = (&args.tmp, paper) {
            words.extend(["--tmp".to_string(), tmp.display().to_string()]);
        }
        println!(
            "\n=== reproduce {} ({}) ===\n",
            words.join(" "),
            index::title(paper)
        );
        let started = Instant::now();
        match run_paper(paper, &words, &dir) {
            Ok((reproduction, output)) => {
                let seconds = started.elapsed().as_secs_f64();
                println!("\n{paper}: done in {seconds:.1} s");
                let file = dir.join("output.txt");
                crate::output::write_file(&file, &output).map_err(Failure::Runtime)?;
                ran.push((reproduction, seconds, output));
            }
            Err(Failure::Usage(error) | Failure::Runtime(error)) => {
                eprintln!("error: reproduce {paper}: {error:#}");
                failed.push(paper.name());
            }
        }
    }
    let entries: Vec<Entry<'_>> = ran
        .iter()
        .map(|(reproduction, seconds, output)| Entry {
            reproduction,
            seconds: *seconds,
            output,
        })
        .collect();
    let claims_path = args.out.join("claims.json");
    crate::output::write_json(&claims_path, &index::claims(&entries)).map_err(Failure::Runtime)?;
    println!("\nwrote {}", claims_path.display());
    let index = args.out.join("index.html");
    let page = index::page(&args.out, &entries, args.quick);
    crate::output::write_file(&index, page).map_err(Failure::Runtime)?;
    println!("\nwrote {}", index.display());
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure::Runtime(anyhow!(
            "{} of {} papers failed: {} (their errors are above)",
            failed.len(),
            failed.len() + ran.len(),
            failed.join(", ")
        )))
    }
}

/// Refuse, before any paper runs, an unknown paper in `--only`, a `--tmp` no paper chosen
/// reads or that is not a directory, and an `--out` that is not one.
fn check(args: &AllArgs) -> Outcome {
    for name in &args.only {
        if !PAPERS.iter().any(|p| p.name() == name) {
            let names: Vec<&str> = PAPERS.iter().map(|p| p.name()).collect();
            return Err(Failure::Usage(anyhow!(
                "unknown paper {name:?} in --only; expected some of: {}",
                names.join(", ")
            )));
        }
    }
    let wanted = |p: &&Paper| args.only.is_empty() || args.only.iter().any(|n| n == p.name());
    if args.tmp.is_some()
        && !PAPERS
            .iter()
            .filter(wanted)
            .any(|&p| p == Paper::Flashmodel)
    {
        return Err(Failure::Usage(anyhow!(
            "--tmp is flashmodel's (its disk probe and real-disk sort), which --only {} \
             leaves out: drop it",
            args.only.join(",")
        )));
    }
    // Checked before four papers run, not when flashmodel, the last, refuses it.
    if let Some(tmp) = &args.tmp
        && !tmp.is_dir()
    {
        return Err(Failure::Usage(anyhow!(
            "--tmp {} is not a directory",
            tmp.display()
        )));
    }
    if args.out.exists() && !args.out.is_dir() {
        return Err(Failure::Usage(anyhow!(
            "--out {} is not a directory",
            args.out.display()
        )));
    }
    Ok(())
}

/// A paper's options parsed from `words` by its own parser, as `flashkit reproduce` would.
fn parse<T: Args>(words: &[String]) -> Result<T, Failure> {
    #[derive(clap::Parser, Debug)]
    struct Command<T: Args> {
        #[command(flatten)]
        args: T,
    }
    <Command<T> as clap::Parser>::try_parse_from(words)
        .map(|c| c.args)
        .map_err(|e| Failure::Usage(anyhow!("{e}")))
}

/// Run one paper in this process and render it into `dir` as its own command does: the
/// reproduction, and everything it printed. A panic is this paper's failure, not the
/// command's.
fn run_paper(
    paper: Paper,
    words: &[String],
    dir: &Path,
) -> Result<(Reproduction, String), Failure> {
    let reproduce = || -> Result<Reproduction, Failure> {
        let bar = Bar::new(&format!("reproduce {paper}"));
        let bar = &bar;
        match paper {
            Paper::Fast => lab::fast::run(&parse::<FastArgs>(words)?.spec(), bar),
            Paper::Grr => lab::grr::run(&parse::<GrrArgs>(words)?.spec(), bar),
            Paper::Vet => lab::vet::run(&parse::<VetReproArgs>(words)?.spec()?, bar),
            // Only --out and --quick are given: no option of an experiment left out.
            Paper::Fatlist => lab::fatlist::run(&parse::<FatlistArgs>(words)?.spec(&[]), bar),
            Paper::Flashmodel => {
                let args = parse::<FlashmodelArgs>(words)?;
                let probe = Bar::new("probe");
                lab::flashmodel::run(&args.spec(), &probe, &OnInterrupt)
            }
        }
        .map_err(lab_failure)
    };
    let reproduction =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(reproduce)).map_err(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            Failure::Runtime(anyhow!("panicked: {what}"))
        })??;
    let mut figures = Figures::create(dir).map_err(Failure::Runtime)?;
    super::show(&reproduction, None, None, Some(&mut figures))?;
    let output = format!("{}\n{}\n", reproduction.text(), figures.wrote_line());
    Ok((reproduction, output))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words `run` gives each paper are options its parser takes.
    #[test]
    fn every_paper_parses_its_own_quick_out_command_line() {
        let words = |name: &str| [name, "--out", "x", "--quick"].map(str::to_string).to_vec();
        assert!(parse::<FastArgs>(&words("fast")).is_ok());
        assert!(parse::<crate::args::VetReproArgs>(&words("vet")).is_ok());
        assert!(parse::<GrrArgs>(&words("grr")).is_ok());
        assert!(parse::<FatlistArgs>(&words("fatlist")).is_ok());
        assert!(parse::<FlashmodelArgs>(&words("flashmodel")).is_ok());
    }
}
