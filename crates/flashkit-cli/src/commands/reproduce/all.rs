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
//! are built from the same values, not from files read back. A paper that fails, or
//! panics, does not stop the others; the command then ends with an error naming every
//! paper that failed.
//!
//! The papers run one after the other, on purpose: vet's mapping times and flashmodel's disk
//! probe and sort are wall-clock measurements that another paper running beside them would
//! distort (each paper uses the cores itself where its results do not depend on timing).

use super::{Figures, lab_failure};
use crate::args::VetReproArgs;
use crate::args::reproduce::{AllArgs, FastArgs, FatlistArgs, FlashmodelArgs, GrrArgs};
use crate::interrupt::OnInterrupt;
use crate::progress::{Bar, SharedBar};
use crate::{Failure, Outcome};
use anyhow::{Context, anyhow};
use clap::Args;
use flashkit_lab::claims::Tally;
use flashkit_lab::repro::{self as lab, Reproduction};
use flashkit_report::html::{Block, HtmlReport, Item, Section};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;

/// A paper: its subcommand's name, the paper it reproduces, and its reproduction page.
struct Paper {
    name: &'static str,
    title: &'static str,
    doc: &'static str,
}

/// The papers, in the order they run: the quick ones first.
const PAPERS: [Paper; 5] = [
    Paper {
        name: "fast",
        title: "Lee et al., a log buffer-based FTL using fully-associative sector translation \
                (BAST, FAST, O-FAST)",
        doc: "docs/reproduction/fast.md",
    },
    Paper {
        name: "vet",
        title: "Extent mapping for FTLs: the Virtual Extent Trie and the Extent Mapping Tree",
        doc: "docs/reproduction/vet.md",
    },
    Paper {
        name: "grr",
        title: "B-tree storage on NAND: In-Page Logging against GRR, clean-first buffers",
        doc: "docs/reproduction/grr.md",
    },
    Paper {
        name: "fatlist",
        title: "A native NOR-flash index: fat lists against the mu-tree",
        doc: "docs/reproduction/fatlist.md",
    },
    Paper {
        name: "flashmodel",
        title: "Ajwani et al., on computational models for flash memory devices",
        doc: "docs/reproduction/flashmodel.md",
    },
];

/// Run every paper asked for, then write the index.
pub fn run(args: &AllArgs) -> Outcome {
    for name in &args.only {
        if !PAPERS.iter().any(|p| p.name == name) {
            let names: Vec<&str> = PAPERS.iter().map(|p| p.name).collect();
            return Err(Failure::Usage(anyhow!(
                "unknown paper {name:?} in --only; expected some of: {}",
                names.join(", ")
            )));
        }
    }
    let wanted = |p: &&Paper| args.only.is_empty() || args.only.iter().any(|n| n == p.name);
    if args.tmp.is_some() && !PAPERS.iter().filter(wanted).any(|p| p.name == "flashmodel") {
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
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))
        .map_err(Failure::Runtime)?;
    let mut ran = Vec::new();
    let mut failed = Vec::new();
    for paper in PAPERS.iter().filter(wanted) {
        let dir = args.out.join(paper.name);
        let mut words = vec![
            paper.name.to_string(),
            "--out".to_string(),
            dir.display().to_string(),
        ];
        if args.quick {
            words.push("--quick".into());
        }
        if let (Some(tmp), "flashmodel") = (&args.tmp, paper.name) {
            words.extend(["--tmp".to_string(), tmp.display().to_string()]);
        }
        println!(
            "\n=== reproduce {} ({}) ===\n",
            words.join(" "),
            paper.title
        );
        let started = Instant::now();
        match run_paper(paper.name, &words, &dir) {
            Ok(Rendered {
                reproduction,
                drawn,
                output,
            }) => {
                let seconds = started.elapsed().as_secs_f64();
                println!("\n{}: done in {seconds:.1} s", paper.name);
                let file = dir.join("output.txt");
                crate::output::write_file(&file, &output).map_err(Failure::Runtime)?;
                ran.push(Ran {
                    paper,
                    seconds,
                    reproduction,
                    drawn,
                    output,
                });
            }
            Err(Failure::Usage(error) | Failure::Runtime(error)) => {
                eprintln!("error: reproduce {}: {error:#}", paper.name);
                failed.push(paper.name);
            }
        }
    }
    let claims = gather_claims(&ran);
    let claims_path = args.out.join("claims.json");
    crate::output::write_json(&claims_path, &claims).map_err(Failure::Runtime)?;
    println!("\nwrote {}", claims_path.display());
    let index = args.out.join("index.html");
    let page = index_page(&args.out, &ran, &claims, args.quick);
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
/// reproduction, the figures drawn (name and SVG), and everything it printed. A panic is
/// this paper's failure, not the command's.
fn run_paper(name: &str, words: &[String], dir: &Path) -> Result<Rendered, Failure> {
    let reproduce = || -> Result<Reproduction, Failure> {
        let mut bar = Bar::new(&format!("reproduce {name}"));
        let bar = &mut bar;
        match name {
            "fast" => lab::fast::run(&parse::<FastArgs>(words)?.spec(), bar),
            "grr" => lab::grr::run(&parse::<GrrArgs>(words)?.spec(), bar),
            "vet" => lab::vet::run(&parse::<VetReproArgs>(words)?.spec()?, bar),
            // Only --out and --quick are given: no option of an experiment left out.
            "fatlist" => lab::fatlist::run(&parse::<FatlistArgs>(words)?.spec(&[]), bar),
            "flashmodel" => {
                let args = parse::<FlashmodelArgs>(words)?;
                let probe = SharedBar::new("probe");
                lab::flashmodel::run(&args.spec(), &probe, &OnInterrupt)
            }
            other => unreachable!("{other} is not in PAPERS"),
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
    let drawn = reproduction
        .figures
        .iter()
        .filter_map(|f| Some((f.name.clone(), f.chart.svg().ok()?)))
        .collect();
    let output = format!("{}\n{}\n", reproduction.text(), figures.wrote_line());
    Ok(Rendered {
        reproduction,
        drawn,
        output,
    })
}

/// A paper's run, rendered.
struct Rendered {
    reproduction: Reproduction,
    /// The figures drawn: file name and SVG, in the order the paper lists them.
    drawn: Vec<(String, String)>,
    /// What it printed.
    output: String,
}

struct Ran<'a> {
    paper: &'a Paper,
    seconds: f64,
    reproduction: Reproduction,
    /// The figures drawn: file name and SVG, in the order the paper lists them.
    drawn: Vec<(String, String)>,
    output: String,
}

/// The claims ledgers the papers wrote in this run (`DIR/<paper>/claims.json`), in one
/// document: each paper's tally, and every claim with its paper.
/// Every paper's ledger, its tally, and every claim, as `claims.json` holds them.
fn gather_claims(ran: &[Ran<'_>]) -> Value {
    let mut papers = Vec::new();
    let mut claims = Vec::new();
    for r in ran {
        let tally = Tally::of(&r.reproduction.claims);
        papers.push(json!({
            "paper": r.paper.name,
            "ledger": true,
            "tally": {
                "holds": tally.holds,
                "in-shape": tally.in_shape,
                "does-not-hold": tally.does_not_hold,
                "cannot-check": tally.cannot_check,
            }
        }));
        claims.extend(r.reproduction.claims.iter().map(|c| json!(c)));
    }
    json!({ "papers": papers, "claims": claims })
}

fn claims_section(claims: &Value, figure_ids: &[String]) -> Section {
    let mut table = flashkit_report::Table::new([
        "paper",
        "holds",
        "in shape only",
        "does not hold",
        "cannot be checked here",
    ]);
    let none = Vec::new();
    for paper in claims["papers"].as_array().unwrap_or(&none) {
        let name = paper["paper"].as_str().unwrap_or("?");
        if paper["ledger"] == true {
            let t = &paper["tally"];
            let n = |key: &str| t[key].as_u64().unwrap_or(0).to_string();
            table.push([
                name.to_string(),
                n("holds"),
                n("in-shape"),
                n("does-not-hold"),
                n("cannot-check"),
            ]);
        } else {
            let later = "not in the ledger yet: its document gives the claims".to_string();
            table.push([name.to_string(), later, "-".into(), "-".into(), "-".into()]);
        }
    }
    let items = claims["claims"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .map(|c| {
            let text = |key: &str| c[key].as_str().unwrap_or("").to_string();
            let verdict = text("verdict").replace('-', " ");
            let whose = if c["origin"] == "target" {
                " [flashkit's own target]"
            } else {
                ""
            };
            let link = c["figure"].as_str().and_then(|file| {
                let id = format!("{}-{file}", text("paper"));
                figure_ids
                    .contains(&id)
                    .then(|| (format!("figure ({file})"), id))
            });
            Item {
                text: format!(
                    "{}: {} ({}, {}){whose}: \"{}\" Measured: {}.",
                    verdict.to_uppercase(),
                    text("id"),
                    text("paper"),
                    text("location"),
                    text("quote"),
                    text("measured")
                ),
                link,
            }
        })
        .collect();
    Section {
        heading: "The papers' claims".into(),
        blocks: vec![
            Block::Paragraph(
                "Each claim's verdict is computed from this run's measurements against a \
                 criterion fixed before our numbers were looked at (docs/reproduction/claims.md); \
                 claims.json holds every claim, its evidence and its verdict."
                    .into(),
            ),
            Block::Table(table),
            Block::Items(items),
        ],
    }
}

/// One page with every paper's figures, inline, and where each came from; the papers'
/// claims first.
fn index_page(out: &Path, ran: &[Ran<'_>], claims: &Value, quick: bool) -> String {
    let mut sections = Vec::new();
    let mut figure_ids = Vec::new();
    for Ran {
        paper,
        seconds,
        drawn,
        output,
        ..
    } in ran
    {
        let dir = out.join(paper.name);
        let mut blocks = vec![Block::Paragraph(format!(
            "flashkit reproduce {}{} --out {} ({seconds:.1} s). Its tables are below (also \
             in {}/output.txt), its figures' data in {}.json; what agrees with the paper and \
             what does not is in {}.",
            paper.name,
            if quick { " --quick" } else { "" },
            dir.display(),
            dir.display(),
            if paper.name == "flashmodel" {
                "fig1"
            } else {
                paper.name
            },
            paper.doc
        ))];
        blocks.push(Block::Preformatted {
            summary: "printed output: the tables, ours beside the paper's".into(),
            text: output.clone(),
        });
        for (name, svg) in drawn {
            let id = format!("{}-{name}", paper.name);
            figure_ids.push(id.clone());
            blocks.push(Block::Figure {
                caption: dir.join(name).display().to_string(),
                svg: svg.clone(),
                id: Some(id),
            });
        }
        sections.push(Section {
            heading: format!("{}: {}", paper.name, paper.title),
            blocks,
        });
    }
    sections.insert(0, claims_section(claims, &figure_ids));
    let report = HtmlReport {
        title: "flashkit: the papers' evaluations reproduced".into(),
        intro: vec![format!(
            "{} paper{} run{}, flashkit {}.",
            ran.len(),
            if ran.len() == 1 { "" } else { "s" },
            if quick { " (--quick smoke runs)" } else { "" },
            env!("CARGO_PKG_VERSION")
        )],
        sections,
    };
    report.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary names a paper that wrote no ledger as such, and links a claim only to
    /// a figure this run drew.
    #[test]
    fn the_claims_summary_names_papers_without_a_ledger() {
        let claims = json!({
            "papers": [
                { "paper": "fast", "ledger": true,
                  "tally": { "holds": 1, "in-shape": 0, "does-not-hold": 1, "cannot-check": 0 } },
                { "paper": "vet", "ledger": false }
            ],
            "claims": [
                { "paper": "fast", "id": "fast.a", "verdict": "holds", "origin": "paper",
                  "location": "Fig. 10", "quote": "q", "measured": "m",
                  "figure": "fig10-A-erases.svg" },
                { "paper": "fast", "id": "fast.b", "verdict": "does-not-hold", "origin": "target",
                  "location": "Section 5", "quote": "q", "measured": "m",
                  "figure": "not-drawn.svg" }
            ]
        });
        let section = claims_section(&claims, &["fast-fig10-A-erases.svg".to_string()]);
        let html = HtmlReport {
            title: "t".into(),
            intro: Vec::new(),
            sections: vec![section],
        }
        .render();
        assert!(
            html.contains("<td>fast</td><td class=\"n\">1</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td>vet</td><td>not in the ledger yet"),
            "{html}"
        );
        assert!(html.contains("HOLDS: fast.a (fast, Fig. 10)"));
        assert!(html.contains("<a href=\"#fast-fig10-A-erases.svg\">"));
        assert!(
            html.contains("DOES NOT HOLD: fast.b (fast, Section 5) [flashkit&#39;s own target]")
                || html.contains("DOES NOT HOLD: fast.b (fast, Section 5) [flashkit's own target]"),
            "{html}"
        );
        assert!(
            !html.contains("not-drawn.svg\">"),
            "no link to a figure not drawn"
        );
    }

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
