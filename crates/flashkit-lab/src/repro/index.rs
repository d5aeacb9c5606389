//! The index of several papers' reproductions, as `reproduce all` writes it: one HTML page
//! with every paper's printed output and figures inline, and the papers' claims first (a
//! table of claims held, in shape only, not held and not checkable per paper, then each
//! claim linked to the figure it is about); and the claims document (`claims.json`): each
//! paper's tally and every claim with its verdict.
//!
//! Both are built from the [`Reproduction`]s themselves, not from files read back, so any
//! front end that ran the papers writes the same page.

use super::Reproduction;
use crate::claims::{AUDIT_COMMIT, Paper, Tally, audit_baseline};
use flashkit_report::html::{Block, HtmlReport, Item, Section};
use serde_json::{Value, json};
use std::path::Path;

/// A paper's reproduction, as the index shows it.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// What the paper's run returned.
    pub reproduction: &'a Reproduction,
    /// Wall-clock seconds the paper took, its files written.
    pub seconds: f64,
    /// What the front end printed for it (the tables, and the files written).
    pub output: &'a str,
}

/// The title of a paper's section: the paper and what it compares.
pub fn title(paper: Paper) -> &'static str {
    match paper {
        Paper::Fast => {
            "Lee et al., a log buffer-based FTL using fully-associative sector translation \
             (BAST, FAST, O-FAST)"
        }
        Paper::Vet => {
            "Extent mapping for FTLs: the Virtual Extent Trie and the Extent Mapping Tree"
        }
        Paper::Grr => "B-tree storage on NAND: In-Page Logging against GRR, clean-first buffers",
        Paper::Fatlist => "A native NOR-flash index: fat lists against the mu-tree",
        Paper::Flashmodel => "Ajwani et al., on computational models for flash memory devices",
    }
}

/// The paper's reproduction page, relative to the repository: what agrees with the paper and
/// what does not.
pub fn document(paper: Paper) -> String {
    format!("docs/reproduction/{}.md", paper.name())
}

/// The claims document (`claims.json`): every paper's ledger, its tally, and every claim.
pub fn claims(entries: &[Entry<'_>]) -> Value {
    let mut papers = Vec::new();
    let mut claims = Vec::new();
    for e in entries {
        let r = e.reproduction;
        let counts = |tally: Tally| {
            json!({
                "holds": tally.holds,
                "in-shape": tally.in_shape,
                "does-not-hold": tally.does_not_hold,
                "cannot-check": tally.cannot_check,
            })
        };
        papers.push(json!({
            "paper": r.paper.name(),
            "ledger": true,
            "tally": counts(Tally::of(&r.claims)),
            "audit_commit": AUDIT_COMMIT,
            "tally_before": counts(audit_baseline(r.paper)),
        }));
        claims.extend(r.claims.iter().map(|c| json!(c)));
    }
    json!({ "papers": papers, "claims": claims })
}

/// The summary of a claims document: a table of verdicts a paper, then every claim, linked
/// to its figure when it is among `figure_ids`.
fn claims_section(claims: &Value, figure_ids: &[String]) -> Section {
    let mut table = flashkit_report::Table::new([
        "paper",
        "holds",
        "in shape only",
        "does not hold",
        "cannot be checked here",
        "before the fidelity work: holds / in shape / does not / cannot",
    ]);
    let none = Vec::new();
    for paper in claims["papers"].as_array().unwrap_or(&none) {
        let name = paper["paper"].as_str().unwrap_or("?");
        if paper["ledger"] == true {
            let count = |tally: &Value, key: &str| tally[key].as_u64().unwrap_or(0).to_string();
            let t = &paper["tally"];
            let n = |key: &str| count(t, key);
            let before = &paper["tally_before"];
            let before = if before.is_object() {
                ["holds", "in-shape", "does-not-hold", "cannot-check"]
                    .map(|key| count(before, key))
                    .join(" / ")
            } else {
                "-".into()
            };
            table.push([
                name.to_string(),
                n("holds"),
                n("in-shape"),
                n("does-not-hold"),
                n("cannot-check"),
                before,
            ]);
        } else {
            let later = "not in the ledger yet: its document gives the claims".to_string();
            let dash = || "-".to_string();
            table.push([name.to_string(), later, dash(), dash(), dash(), dash()]);
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
            Block::Paragraph(format!(
                "Each claim's verdict is computed from this run's measurements against a \
                     criterion fixed before our numbers were looked at \
                     (docs/reproduction/claims.md); claims.json holds every claim, its \
                     evidence and its verdict. The last column is each paper's tally as the \
                     outside fidelity audit left the ledger (commit {AUDIT_COMMIT}, recorded \
                     in docs/reproduction/claims.md), before the work that built the papers' \
                     systems as published; a paper's claim count may have grown since."
            )),
            Block::Table(table),
            Block::Items(items),
        ],
    }
}

/// The index page: the papers' claims first, then every paper's command, printed output and
/// figures (inline, each captioned with its file under `out/<paper>/`), in `entries`' order.
/// `quick` says the papers ran as `--quick` smoke runs.
pub fn page(out: &Path, entries: &[Entry<'_>], quick: bool) -> String {
    let mut sections = Vec::new();
    let mut figure_ids = Vec::new();
    for &Entry {
        reproduction,
        seconds,
        output,
    } in entries
    {
        let name = reproduction.paper.name();
        let dir = out.join(name);
        let mut blocks = vec![Block::Paragraph(format!(
            "flashkit reproduce {name}{} --out {} ({seconds:.1} s). Its tables are below (also \
             in {}/output.txt), its figures' data in {}.json; what agrees with the paper and \
             what does not is in {}.",
            if quick { " --quick" } else { "" },
            dir.display(),
            dir.display(),
            if reproduction.paper == Paper::Flashmodel {
                "fig1"
            } else {
                name
            },
            document(reproduction.paper)
        ))];
        blocks.push(Block::Preformatted {
            summary: "printed output: the tables, ours beside the paper's".into(),
            text: output.to_string(),
        });
        // The figures with something to draw: those the paper's own command saves.
        for figure in &reproduction.figures {
            let Ok(svg) = figure.chart.svg() else {
                continue;
            };
            let id = format!("{name}-{}", figure.name);
            figure_ids.push(id.clone());
            blocks.push(Block::Figure {
                caption: dir.join(&figure.name).display().to_string(),
                svg,
                id: Some(id),
            });
        }
        sections.push(Section {
            heading: format!("{name}: {}", title(reproduction.paper)),
            blocks,
        });
    }
    sections.insert(0, claims_section(&claims(entries), &figure_ids));
    let report = HtmlReport {
        title: "flashkit: the papers' evaluations reproduced".into(),
        intro: vec![format!(
            "{} paper{} run{}, flashkit {}.",
            entries.len(),
            if entries.len() == 1 { "" } else { "s" },
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
    use crate::claims::{Claim, Criterion, Evidence, Origin, assess};
    use crate::repro::{Chart, Figure, LedgerPlace};
    use flashkit_report::plot::{Axis, BarChart};

    fn claim(id: &'static str, origin: Origin, figure: Option<&'static str>) -> Claim {
        Claim {
            id,
            paper: Paper::Grr,
            origin,
            location: "Fig. 6",
            figure,
            quote: "it falls",
            paper_value: None,
            quantity: "time",
            criterion: Criterion::Falls,
            shape: None,
        }
    }

    fn bars(values: &[f64]) -> Chart {
        Chart::Bars(BarChart {
            title: "t".into(),
            y: Axis::linear("y"),
            bars: values.iter().map(|&v| (format!("{v}"), v)).collect(),
        })
    }

    /// The page of one paper's reproduction: its tally (the paper's own claims only) in the
    /// summary and in the claims document, its claims linked to the figures drawn, its
    /// figures inline under their files, a figure with nothing to draw left out.
    #[test]
    fn the_index_of_a_reproduction_tallies_links_and_inlines() {
        let falls = Evidence::Series {
            points: vec![("a".into(), 2.0), ("b".into(), 1.0)],
        };
        let rises = Evidence::Series {
            points: vec![("a".into(), 1.0), ("b".into(), 2.0)],
        };
        let missing = Evidence::Missing {
            reason: "not run".into(),
        };
        let reproduction = Reproduction {
            paper: Paper::Grr,
            printed: Vec::new(),
            claims: vec![
                assess(claim("grr.a", Origin::Paper, Some("fig6a.svg")), falls),
                assess(
                    claim("grr.b", Origin::Paper, Some("fig6b.svg")),
                    rises.clone(),
                ),
                assess(claim("grr.c", Origin::Paper, None), missing),
                assess(claim("grr.target", Origin::Target, None), rises),
            ],
            figures: vec![
                Figure {
                    name: "fig6a.svg".into(),
                    chart: bars(&[1.0, 2.0]),
                },
                Figure {
                    name: "fig6b.svg".into(),
                    chart: bars(&[]),
                },
            ],
            documents: Vec::new(),
            rows: None,
            notes: Vec::new(),
            ledger_place: LedgerPlace::default(),
            runs: 0,
            wall_seconds: 0.0,
        };
        let entries = [Entry {
            reproduction: &reproduction,
            seconds: 1.5,
            output: "the tables <here>",
        }];
        let doc = claims(&entries);
        assert_eq!(
            doc["papers"],
            json!([{ "paper": "grr", "ledger": true,
                "tally": { "holds": 1, "in-shape": 0, "does-not-hold": 1, "cannot-check": 1 },
                "audit_commit": "39fb539",
                "tally_before": { "holds": 3, "in-shape": 3, "does-not-hold": 5, "cannot-check": 0 } }])
        );
        assert_eq!(doc["claims"].as_array().map(Vec::len), Some(4));

        let html = page(Path::new("out"), &entries, true);
        assert!(html.contains("1 paper run (--quick smoke runs)"), "{html}");
        let row = "<td>grr</td><td class=\"n\">1</td><td class=\"n\">0</td>\
                   <td class=\"n\">1</td><td class=\"n\">1</td><td>3 / 3 / 5 / 0</td>";
        assert!(html.contains(row), "{html}");
        assert!(html.contains("outside fidelity audit left the ledger (commit 39fb539"));
        assert!(html.contains(
            "flashkit reproduce grr --quick --out out/grr (1.5 s). Its tables are below (also \
             in out/grr/output.txt), its figures' data in grr.json"
        ));
        assert!(html.contains("docs/reproduction/grr.md"));
        assert!(html.contains("the tables &lt;here&gt;"));
        assert!(html.contains("<figure id=\"grr-fig6a.svg\">"));
        assert!(html.contains("<a href=\"#grr-fig6a.svg\">"));
        assert!(html.contains("out/grr/fig6a.svg"));
        // fig6b has nothing to draw: neither inline nor linked.
        assert!(!html.contains("grr-fig6b.svg"), "{html}");
        assert!(html.contains(&format!("<h2>grr: {}</h2>", title(Paper::Grr))));
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
}
