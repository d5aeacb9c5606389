//! `flashkit reproduce all`: every paper's evaluation in one command, each into its own
//! subdirectory of `--out` (as its own `--out` writes it), and one `index.html` showing
//! every figure drawn, paper by paper.
//!
//! The index shows the figures each paper wrote in this run: an SVG older than the run (an
//! earlier run's, in a directory used again) is left where it is but not shown.
//!
//! Each paper runs as `flashkit reproduce <paper> --out DIR/<paper>` (with `--quick` when
//! asked), a child process of this executable: the paper's own parser reads its options, a
//! failure or a crash in one paper cannot take the others down, and its printed output
//! (the tables beside the paper's figures) is passed through as it comes and kept in
//! `DIR/<paper>/output.txt` and the index. A paper that fails does not stop the others;
//! the command then ends with an error naming every paper that failed.
//!
//! The papers run one after the other, on purpose: vet's mapping times and flashmodel's disk
//! probe and sort are wall-clock measurements that another paper running beside them would
//! distort (each paper uses the cores itself where its results do not depend on timing).

use crate::{Failure, Outcome};
use anyhow::{Context, anyhow};
use clap::Args;
use flashkit_report::html::{Block, HtmlReport, Item, Section};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Instant, SystemTime};

/// Options of `flashkit reproduce all`.
#[derive(Args, Debug)]
pub struct AllArgs {
    /// Directory for every paper's output, a subdirectory each (fast/, vet/, ...), and
    /// index.html with every figure; created if missing.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Every paper's --quick smoke run instead of its full evaluation.
    #[arg(long)]
    pub quick: bool,
    /// The papers to run, comma-separated: fast, vet, grr, fatlist, flashmodel [default:
    /// all of them].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Directory for flashmodel's disk probe and real-disk sort [default: the system's
    /// temporary directory].
    #[arg(long, value_name = "DIR")]
    pub tmp: Option<PathBuf>,
}

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
        let since = SystemTime::now();
        match run_child(&words) {
            Ok((true, output)) => {
                let seconds = started.elapsed().as_secs_f64();
                println!("\n{}: done in {seconds:.1} s", paper.name);
                let file = dir.join("output.txt");
                crate::output::write_file(&file, &output).map_err(Failure::Runtime)?;
                ran.push(Ran {
                    paper,
                    seconds,
                    since,
                    output,
                });
            }
            Ok((false, _)) => failed.push(paper.name),
            Err(error) => {
                eprintln!("error: reproduce {}: {error:#}", paper.name);
                failed.push(paper.name);
            }
        }
    }
    let claims = gather_claims(&args.out, &ran)?;
    let claims_path = args.out.join("claims.json");
    crate::output::write_json(&claims_path, &claims).map_err(Failure::Runtime)?;
    println!("\nwrote {}", claims_path.display());
    let index = args.out.join("index.html");
    let page = index_page(&args.out, &ran, &claims, args.quick)?;
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

/// `flashkit reproduce WORDS` as a child process, its standard output passed through line
/// by line and kept (its standard error, progress bars and error messages, goes straight
/// to ours); whether it succeeded, and its output.
fn run_child(words: &[String]) -> anyhow::Result<(bool, String)> {
    let exe = std::env::current_exe().context("cannot find the flashkit executable")?;
    let mut command = std::process::Command::new(&exe);
    command
        .arg("reproduce")
        .args(words)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if std::io::stdout().is_terminal() {
        // The child's output comes through us to a terminal: its progress bars may too.
        command.env(crate::progress::FORCE_BARS, "1");
    }
    // Where an interrupt of this process reaches it too, from the moment it starts.
    let stdout = crate::interrupt::spawn_held(&mut command)
        .with_context(|| format!("cannot run {}", exe.display()))?;
    let mut output = String::new();
    let read = stdout.map_or(Ok(()), |stdout| {
        for line in BufReader::new(stdout).lines() {
            let line = line.context("cannot read the paper's output")?;
            println!("{line}");
            output.push_str(&line);
            output.push('\n');
        }
        anyhow::Ok(())
    });
    let Some(mut child) = crate::interrupt::take_child() else {
        // The interrupt handler took it: it waits for the child and then ends the process
        // with 130, which an error from here must not overtake.
        loop {
            std::thread::park();
        }
    };
    let status = child.wait().context("cannot wait for the paper's run")?;
    read?;
    Ok((status.success(), output))
}

/// A paper that ran: how long it took, when it started (figures older than that are an
/// earlier run's, left in the directory, and not this run's to show), and what it printed.
struct Ran<'a> {
    paper: &'a Paper,
    seconds: f64,
    since: SystemTime,
    output: String,
}

/// The SVG files in `dir` written since `since`, by name.
fn svg_files(dir: &Path, since: SystemTime) -> Result<Vec<PathBuf>, Failure> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()));
    let mut files = Vec::new();
    for entry in entries.map_err(Failure::Runtime)? {
        let path = entry
            .with_context(|| format!("cannot list {}", dir.display()))
            .map_err(Failure::Runtime)?
            .path();
        let fresh = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= since);
        if path.extension().is_some_and(|e| e == "svg") && fresh {
            files.push(path);
        }
    }
    // Natural order for the common names: fig6a before fig14a, traces-2 before traces-10.
    files.sort_by_key(|p| natural_key(&p.file_name().unwrap_or_default().to_string_lossy()));
    Ok(files)
}

/// A sort key reading runs of digits as numbers.
fn natural_key(name: &str) -> Vec<(String, u64)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in name.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                key.push((
                    std::mem::take(&mut text),
                    digits.parse().unwrap_or(u64::MAX),
                ));
                digits.clear();
            }
            text.push(c);
        }
    }
    key.push((text, digits.parse().unwrap_or(0)));
    key
}

/// The claims ledgers the papers wrote in this run (`DIR/<paper>/claims.json`), in one
/// document: each paper's tally, and every claim with its paper.
fn gather_claims(out: &Path, ran: &[Ran<'_>]) -> Result<Value, Failure> {
    let mut papers = Vec::new();
    let mut claims = Vec::new();
    for r in ran {
        let path = out.join(r.paper.name).join("claims.json");
        let fresh = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= r.since);
        if !fresh {
            papers.push(json!({ "paper": r.paper.name, "ledger": false }));
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))
            .map_err(Failure::Runtime)?;
        let document: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not the ledger this run wrote", path.display()))
            .map_err(Failure::Runtime)?;
        let ledger = document["claims"].as_array().cloned().unwrap_or_default();
        let mut tally = BTreeMap::from([
            ("holds", 0),
            ("in-shape", 0),
            ("does-not-hold", 0),
            ("cannot-check", 0),
        ]);
        for claim in ledger.iter().filter(|c| c["origin"] == "paper") {
            if let Some(count) = claim["verdict"].as_str().and_then(|v| tally.get_mut(v)) {
                *count += 1;
            }
        }
        papers.push(json!({ "paper": r.paper.name, "ledger": true, "tally": tally }));
        claims.extend(ledger);
    }
    Ok(json!({ "papers": papers, "claims": claims }))
}

/// The claims section at the top of the index: a tally per paper, then every claim with
/// its verdict and a link to the figure it is about.
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
fn index_page(out: &Path, ran: &[Ran<'_>], claims: &Value, quick: bool) -> Result<String, Failure> {
    let mut sections = Vec::new();
    let mut figure_ids = Vec::new();
    for Ran {
        paper,
        seconds,
        since,
        output,
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
        for file in svg_files(&dir, *since)? {
            let svg = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))
                .map_err(Failure::Runtime)?;
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let id = format!("{}-{name}", paper.name);
            figure_ids.push(id.clone());
            blocks.push(Block::Figure {
                caption: file.display().to_string(),
                svg,
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
    Ok(report.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_sort_in_natural_order() {
        let mut names = vec![
            "fig14a.svg",
            "fig6b.svg",
            "traces-10.svg",
            "fig6a.svg",
            "traces-2.svg",
            "fig10-A-time.svg",
        ];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(
            names,
            [
                "fig6a.svg",
                "fig6b.svg",
                "fig10-A-time.svg",
                "fig14a.svg",
                "traces-2.svg",
                "traces-10.svg"
            ]
        );
    }

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

    use super::super::{fast, fatlist, flashmodel, grr};
    use clap::Parser;

    /// A paper's options, parsed by its own parser.
    #[derive(Parser, Debug)]
    struct Command<T: Args> {
        #[command(flatten)]
        args: T,
    }

    fn parse<T: Args>(words: &[String]) -> Result<T, clap::Error> {
        Command::<T>::try_parse_from(words).map(|c| c.args)
    }

    /// The words `run` gives each paper are options its parser takes.
    #[test]
    fn every_paper_parses_its_own_quick_out_command_line() {
        let words = |name: &str| [name, "--out", "x", "--quick"].map(str::to_string).to_vec();
        assert!(parse::<fast::FastArgs>(&words("fast")).is_ok());
        assert!(parse::<crate::args::VetReproArgs>(&words("vet")).is_ok());
        assert!(parse::<grr::GrrArgs>(&words("grr")).is_ok());
        assert!(parse::<fatlist::FatlistArgs>(&words("fatlist")).is_ok());
        assert!(parse::<flashmodel::FlashmodelArgs>(&words("flashmodel")).is_ok());
    }
}
