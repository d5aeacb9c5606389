//! The claims of Suh, Moon, Efrat, Kim, Lee, "Memory efficient and scalable address mapping
//! for flash storage devices" (JSA 2014) about memory (Fig. 15) and mapping times (Table 3,
//! Figs. 13-14), and their evidence from the rows of the VET reproduction.

use super::{Assessment, Claim, Criterion, Evidence, Origin, Paper, assess};
use serde::Serialize;

/// What one mapping scheme measured on one workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VetRow {
    /// The workload's name.
    pub workload: String,
    /// The scheme: `PMT`, `VET BIS PF`, `VET BIS PD`, `VET LIS PF`, `VET LIS PD`, `EMT`, ...
    pub scheme: String,
    /// The paper's figures for the column this workload stands for (Fig. 15: VET's and
    /// EMT's memory as % of PMT's), if it stands for one.
    pub paper_share_of_pmt: Option<(f64, f64)>,
    /// The mapping's memory, packed.
    pub packed_bytes: u64,
    /// A page mapping table's memory for the same device.
    pub pmt_bytes: u64,
    /// A hybrid mapping table's memory for the same device.
    pub hmt_bytes: u64,
    /// Mean mapping time of a write, ns.
    pub write_mean_ns: f64,
    /// Mean mapping time of a read, ns.
    pub read_mean_ns: f64,
    /// The paper's mean write and read mapping times for this scheme and column (Table 3),
    /// ns, where it publishes them.
    pub paper_times_ns: Option<(f64, f64)>,
    /// Whether the workload is one of the paper's own traces (not one shaped after it).
    pub on_paper_trace: bool,
}

fn claim(
    id: &'static str,
    (location, figure): (&'static str, Option<&'static str>),
    quote: &'static str,
    paper_value: Option<&'static str>,
    quantity: &'static str,
    criterion: Criterion,
) -> Claim {
    Claim {
        id,
        paper: Paper::Vet,
        origin: Origin::Paper,
        location,
        figure,
        quote,
        paper_value,
        quantity,
        criterion,
        shape: None,
    }
}

/// A target flashkit set itself, listed apart from the paper's claims.
fn target(
    id: &'static str,
    location: &'static str,
    quote: &'static str,
    quantity: &'static str,
    criterion: Criterion,
) -> Claim {
    Claim {
        origin: Origin::Target,
        ..claim(id, (location, None), quote, None, quantity, criterion)
    }
}

struct Rows<'a>(&'a [VetRow]);

impl Rows<'_> {
    fn find(&self, workload: &str, scheme: &str) -> Option<&VetRow> {
        self.0
            .iter()
            .find(|r| r.workload == workload && r.scheme == scheme)
    }

    fn workloads(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in self.0 {
            if !names.contains(&r.workload.as_str()) {
                names.push(&r.workload);
            }
        }
        names
    }

    /// `(workload, value of a, value of b)` at every workload that ran both schemes.
    fn pairs(&self, a: &str, b: &str, value: impl Fn(&VetRow) -> f64) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .workloads()
            .into_iter()
            .filter_map(|w| {
                let (x, y) = (self.find(w, a)?, self.find(w, b)?);
                Some((w.to_string(), value(x), value(y)))
            })
            .collect();
        Evidence::pairs_or_missing(points, || format!("no workload ran both {a} and {b}"))
    }

    /// Ours against the paper's share of PMT (%), at the workloads standing for a column.
    fn shares(&self, scheme: &str, paper: impl Fn((f64, f64)) -> f64) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .0
            .iter()
            .filter(|r| r.scheme == scheme)
            .filter_map(|r| {
                let published = paper(r.paper_share_of_pmt?);
                let ours = 100.0 * r.packed_bytes as f64 / r.pmt_bytes.max(1) as f64;
                Some((r.workload.clone(), ours, published))
            })
            .collect();
        Evidence::pairs_or_missing(points, || {
            format!("{scheme} ran on no workload standing for a column of the paper")
        })
    }

    /// Ours against a tenth of the paper's mean time (ns), at every row with a published
    /// time: ours at most that is 10x faster.
    fn speed_ups(
        &self,
        ours: impl Fn(&VetRow) -> f64,
        paper: impl Fn((f64, f64)) -> f64,
    ) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .0
            .iter()
            .filter_map(|r| {
                let published = paper(r.paper_times_ns?);
                Some((
                    format!("{}, {}", r.workload, r.scheme),
                    ours(r),
                    published / 10.0,
                ))
            })
            .collect();
        Evidence::pairs_or_missing(points, || {
            "no VET row with a time the paper publishes (Table 3) ran".into()
        })
    }

    /// Ours against the paper's share of PMT (%) on the paper's own traces only.
    fn shares_on_paper_traces(&self) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .0
            .iter()
            .filter(|r| r.on_paper_trace && (r.scheme == "VET BIS PF" || r.scheme == "EMT"))
            .filter_map(|r| {
                let (vet, emt) = r.paper_share_of_pmt?;
                let published = if r.scheme == "EMT" { emt } else { vet };
                let ours = 100.0 * r.packed_bytes as f64 / r.pmt_bytes.max(1) as f64;
                Some((format!("{}, {}", r.workload, r.scheme), ours, published))
            })
            .collect();
        Evidence::pairs_or_missing(points, || {
            "none of the paper's own traces was given (`paper_trace`); they are not among the \
             shared excerpts"
                .into()
        })
    }

    /// The extent mappings' memory against HMT's, every workload.
    fn against_hmt(&self) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .0
            .iter()
            .filter(|r| r.scheme == "VET BIS PF" || r.scheme == "EMT")
            .map(|r| {
                (
                    format!("{}, {}", r.workload, r.scheme),
                    r.packed_bytes as f64,
                    r.hmt_bytes as f64,
                )
            })
            .collect();
        Evidence::pairs_or_missing(points, || "neither VET BIS PF nor EMT ran".into())
    }
}

/// Every claim this module checks, with its evidence from `rows`.
pub fn assess_all(rows: &[VetRow]) -> Vec<Assessment> {
    let r = Rows(rows);
    let band = Criterion::RatioBandAtEvery {
        low: 0.8,
        high: 1.25,
    };
    let fig15 = ("Section 6.3.1, Fig. 15", Some("fig15.svg"));
    let memory = |row: &VetRow| row.packed_bytes as f64;
    let writes = |row: &VetRow| row.write_mean_ns;
    let reads = |row: &VetRow| row.read_mean_ns;
    vec![
        assess(
            claim(
                "vet.fig15.vet-share-of-pmt",
                fig15,
                "Specifically, when treating the workloads, VET/EMT consumed only about \
                 2.3/0.7%, 4.3/3.7%, 2.3/0.9%, and 27.9/9.5% of the total memory required by \
                 the PMT in order.",
                Some("VET: 2.3, 4.3, 2.3, 27.9% of PMT (finance, homes, wdev, wsf)"),
                "VET BIS PF's packed memory as % of PMT's, each workload standing for a \
                 column, against the paper's (within 0.8-1.25)",
                band,
            ),
            r.shares("VET BIS PF", |p| p.0),
        ),
        assess(
            claim(
                "vet.fig15.emt-share-of-pmt",
                fig15,
                "Specifically, when treating the workloads, VET/EMT consumed only about \
                 2.3/0.7%, 4.3/3.7%, 2.3/0.9%, and 27.9/9.5% of the total memory required by \
                 the PMT in order.",
                Some("EMT: 0.7, 3.7, 0.9, 9.5% of PMT (finance, homes, wdev, wsf)"),
                "EMT's packed memory as % of PMT's, each workload standing for a column, \
                 against the paper's (within 0.8-1.25)",
                band,
            ),
            r.shares("EMT", |p| p.1),
        ),
        assess(
            claim(
                "vet.fig15.below-hmt",
                fig15,
                "Nevertheless, no trace requires more memory in our schemes than in the \
                 conventional ones.",
                None,
                "packed memory of VET BIS PF and of EMT against a hybrid mapping table's \
                 (the smaller of the conventional tables), every workload",
                Criterion::BelowAtEvery,
            ),
            r.against_hmt(),
        ),
        assess(
            claim(
                "vet.fig14.emt-faster-writes",
                ("Section 6.2.2, Fig. 14", Some("fig14.svg")),
                "As you can see, EMT obtained significant gains up to an order of magnitude in \
                 terms of the average write processing times, compared to VET.",
                Some("up to 10x"),
                "mean write mapping time of EMT against VET BIS PF's, every workload (EMT's \
                 below; wall-clock, the median of --runs)",
                Criterion::BelowAtEvery,
            ),
            r.pairs("EMT", "VET BIS PF", writes),
        ),
        assess(
            claim(
                "vet.fig14.vet-faster-reads",
                ("Section 6.2.2, Fig. 14", Some("fig14.svg")),
                "On the contrary, the VET scheme slightly outperforms the EMT scheme when \
                 treating reads.",
                None,
                "mean read mapping time of VET BIS PF against EMT's, every workload (VET's \
                 below; wall-clock)",
                Criterion::BelowAtEvery,
            ),
            r.pairs("VET BIS PF", "EMT", reads),
        ),
        assess(
            claim(
                "vet.table3.bis-less-memory",
                ("Section 6.2.1, Table 3", None),
                "Across the real traces, virtual tries built by BIS typically outperformed \
                 those by LIS in terms of memory usage and processing times.",
                None,
                "packed memory of VET BIS PF against VET LIS PF, every workload (BIS's at most \
                 LIS's)",
                Criterion::AtMostFactor { factor: 1.0 },
            ),
            r.pairs("VET BIS PF", "VET LIS PF", memory),
        ),
        assess(
            claim(
                "vet.table3.bis-faster-writes",
                ("Section 6.2.1, Table 3", None),
                "Across the real traces, virtual tries built by BIS typically outperformed \
                 those by LIS in terms of memory usage and processing times.",
                None,
                "mean write mapping time of VET BIS PF against VET LIS PF, every workload \
                 (BIS's below; wall-clock)",
                Criterion::BelowAtEvery,
            ),
            r.pairs("VET BIS PF", "VET LIS PF", writes),
        ),
        assess(
            claim(
                "vet.fig13.pf-faster-writes",
                ("Section 6.2.1, Fig. 13", None),
                "... overall the PF-VET slightly reduced the average cache misses in L1 or L2, \
                 compared with the PD-VET, thus leading to a slight speedup up to around 10% on \
                 the average elapsed times on write or read requests.",
                Some("up to about 10% faster"),
                "mean write mapping time of VET BIS PF against VET BIS PD, every workload \
                 (PF's below; wall-clock)",
                Criterion::BelowAtEvery,
            ),
            r.pairs("VET BIS PF", "VET BIS PD", writes),
        ),
        assess(
            target(
                "vet.target.memory-on-the-papers-traces",
                "flashkit's target, docs/reproduction/claims.md",
                "Memory as good as or better than the paper's on its own traces.",
                "VET BIS PF's and EMT's packed memory as % of PMT's on each of the paper's own \
                 traces, against the paper's Fig. 15 share (at most it)",
                Criterion::AtMostFactor { factor: 1.0 },
            ),
            r.shares_on_paper_traces(),
        ),
        assess(
            target(
                "vet.target.writes-10x",
                "flashkit's target, docs/reproduction/claims.md",
                "Mapping calls at least 10 times faster than the paper's Pentium 4 (writes).",
                "mean write mapping time of each VET row with a published time (Table 3), \
                 against a tenth of the paper's (at most it; wall-clock, this machine)",
                Criterion::AtMostFactor { factor: 1.0 },
            ),
            r.speed_ups(writes, |t| t.0),
        ),
        assess(
            target(
                "vet.target.reads-10x",
                "flashkit's target, docs/reproduction/claims.md",
                "Mapping calls at least 10 times faster than the paper's Pentium 4 (reads).",
                "mean read mapping time of each VET row with a published time (Table 3), \
                 against a tenth of the paper's (at most it; wall-clock, this machine)",
                Criterion::AtMostFactor { factor: 1.0 },
            ),
            r.speed_ups(reads, |t| t.1),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Verdict;

    fn row(workload: &str, scheme: &str, packed: u64, write: f64, read: f64) -> VetRow {
        VetRow {
            workload: workload.into(),
            scheme: scheme.into(),
            paper_share_of_pmt: (workload == "finance").then_some((2.3, 0.7)),
            packed_bytes: packed,
            pmt_bytes: 10_000,
            hmt_bytes: 4_000,
            write_mean_ns: write,
            read_mean_ns: read,
            paper_times_ns: (workload == "finance" && scheme.starts_with("VET"))
                .then_some((10_000.0, 2_000.0)),
            on_paper_trace: false,
        }
    }

    fn as_the_paper_says() -> Vec<VetRow> {
        let mut rows = Vec::new();
        for w in ["finance", "uniform"] {
            rows.push(row(w, "VET BIS PF", 230, 500.0, 100.0));
            rows.push(row(w, "VET BIS PD", 230, 550.0, 110.0));
            rows.push(row(w, "VET LIS PF", 260, 600.0, 120.0));
            rows.push(row(w, "EMT", 70, 100.0, 130.0));
            rows.push(row(w, "PMT", 10_000, 50.0, 50.0));
        }
        rows
    }

    fn verdicts(rows: &[VetRow]) -> Vec<(&'static str, Verdict)> {
        assess_all(rows)
            .into_iter()
            .map(|a| (a.claim.id, a.verdict))
            .collect()
    }

    #[test]
    fn rows_shaped_as_the_paper_says_reproduce_every_claim() {
        for a in assess_all(&as_the_paper_says()) {
            if a.claim.origin == Origin::Paper {
                assert_eq!(a.verdict, Verdict::Holds, "{}", a.claim.id);
            }
        }
        assert_eq!(verdicts(&as_the_paper_says()).len(), 11);
    }

    #[test]
    fn targets_are_listed_apart_and_checked_from_the_rows() {
        let targets: Vec<_> = assess_all(&as_the_paper_says())
            .into_iter()
            .filter(|a| a.claim.origin == Origin::Target)
            .map(|a| (a.claim.id, a.verdict))
            .collect();
        assert_eq!(targets.len(), 3);
        // No paper trace given: the memory target cannot be checked here.
        assert!(matches!(targets[0].1, Verdict::CannotCheck(_)));
        assert_eq!(targets[1].1, Verdict::Holds, "500 ns <= 10 us / 10");
        assert_eq!(targets[2].1, Verdict::Holds, "100 ns <= 2 us / 10");
        let mut rows = as_the_paper_says();
        for r in rows.iter_mut().filter(|r| r.workload == "finance") {
            r.on_paper_trace = true;
            r.read_mean_ns = 250.0;
        }
        let v = verdicts(&rows);
        assert!(v.contains(&("vet.target.memory-on-the-papers-traces", Verdict::Holds)));
        assert!(v.contains(&("vet.target.reads-10x", Verdict::DoesNotHold)));
        assert!(v.contains(&("vet.target.writes-10x", Verdict::Holds)));
        // Memory above the paper's share on its own trace misses the target; the same on a
        // generated workload does not count.
        for r in rows.iter_mut().filter(|r| r.scheme == "EMT") {
            r.packed_bytes = 80;
        }
        let v = verdicts(&rows);
        assert!(v.contains(&(
            "vet.target.memory-on-the-papers-traces",
            Verdict::DoesNotHold
        )));
        for r in &mut rows {
            r.on_paper_trace = false;
        }
        let v = verdicts(&rows);
        assert!(matches!(v[8].1, Verdict::CannotCheck(_)), "{:?}", v[8]);
    }

    #[test]
    fn shares_are_checked_where_the_paper_has_a_column_only() {
        let mut rows = as_the_paper_says();
        // The uniform workload stands for no column: its share is not compared.
        rows.iter_mut()
            .filter(|r| r.workload == "uniform" && r.scheme == "EMT")
            .for_each(|r| r.packed_bytes = 3_000);
        let v = verdicts(&rows);
        assert!(v.contains(&("vet.fig15.emt-share-of-pmt", Verdict::Holds)));
        assert!(v.contains(&("vet.fig15.vet-share-of-pmt", Verdict::Holds)));
        rows.iter_mut()
            .filter(|r| r.workload == "finance" && r.scheme == "EMT")
            .for_each(|r| r.packed_bytes = 95);
        let v = verdicts(&rows);
        assert!(v.contains(&("vet.fig15.emt-share-of-pmt", Verdict::DoesNotHold)));
    }

    /// Each claim's evidence, point by point, worked by hand from `as_the_paper_says` with
    /// the finance rows on the paper's own trace: shares of PMT's 10,000 bytes (230 and 70
    /// bytes: 2.3% and 0.7%, as the paper's column), HMT's 4,000 bytes, the mean times, and a
    /// tenth of the published 10 and 2 us.
    #[test]
    fn every_claim_reads_its_evidence_from_the_rows() {
        let mut rows = as_the_paper_says();
        for r in rows.iter_mut().filter(|r| r.workload == "finance") {
            r.on_paper_trace = true;
        }
        let pairs = |points: &[(&str, f64, f64)]| Evidence::Pairs {
            points: points
                .iter()
                .map(|&(w, a, b)| (w.to_string(), a, b))
                .collect(),
        };
        let both = |a: f64, b: f64| pairs(&[("finance", a, b), ("uniform", a, b)]);
        let expected = vec![
            pairs(&[("finance", 2.3, 2.3)]),
            pairs(&[("finance", 0.7, 0.7)]),
            pairs(&[
                ("finance, VET BIS PF", 230.0, 4_000.0),
                ("finance, EMT", 70.0, 4_000.0),
                ("uniform, VET BIS PF", 230.0, 4_000.0),
                ("uniform, EMT", 70.0, 4_000.0),
            ]),
            both(100.0, 500.0),
            both(100.0, 130.0),
            both(230.0, 260.0),
            both(500.0, 600.0),
            both(500.0, 550.0),
            pairs(&[
                ("finance, VET BIS PF", 2.3, 2.3),
                ("finance, EMT", 0.7, 0.7),
            ]),
            pairs(&[
                ("finance, VET BIS PF", 500.0, 1_000.0),
                ("finance, VET BIS PD", 550.0, 1_000.0),
                ("finance, VET LIS PF", 600.0, 1_000.0),
            ]),
            pairs(&[
                ("finance, VET BIS PF", 100.0, 200.0),
                ("finance, VET BIS PD", 110.0, 200.0),
                ("finance, VET LIS PF", 120.0, 200.0),
            ]),
        ];
        let evidence: Vec<Evidence> = assess_all(&rows).into_iter().map(|a| a.evidence).collect();
        assert_eq!(evidence, expected);
        // Missing evidence says what did not run.
        let reasons: Vec<String> = assess_all(&[])
            .into_iter()
            .map(|a| match a.evidence {
                Evidence::Missing { reason } => reason,
                other => panic!("{}: {other:?}", a.claim.id),
            })
            .collect();
        assert_eq!(
            reasons[0],
            "VET BIS PF ran on no workload standing for a column of the paper"
        );
        assert_eq!(
            reasons[1],
            "EMT ran on no workload standing for a column of the paper"
        );
        assert_eq!(reasons[2], "neither VET BIS PF nor EMT ran");
        assert_eq!(reasons[3], "no workload ran both EMT and VET BIS PF");
        assert_eq!(reasons[7], "no workload ran both VET BIS PF and VET BIS PD");
    }

    /// A pair compares two schemes on one workload, never one workload's run with another's.
    #[test]
    fn pairs_stay_within_a_workload() {
        let mut rows = as_the_paper_says();
        for r in rows
            .iter_mut()
            .filter(|r| r.workload == "uniform" && r.scheme == "EMT")
        {
            r.write_mean_ns = 300.0;
        }
        let write_speed = assess_all(&rows)
            .into_iter()
            .nth(3)
            .expect("EMT's writes against VET's")
            .evidence;
        assert_eq!(
            write_speed,
            Evidence::Pairs {
                points: vec![
                    ("finance".into(), 100.0, 500.0),
                    ("uniform".into(), 300.0, 500.0)
                ]
            }
        );
    }

    #[test]
    fn schemes_not_run_cannot_be_checked() {
        let rows: Vec<VetRow> = as_the_paper_says()
            .into_iter()
            .filter(|r| r.scheme != "EMT")
            .collect();
        let v = verdicts(&rows);
        assert!(matches!(v[1].1, Verdict::CannotCheck(_)));
        assert!(matches!(v[3].1, Verdict::CannotCheck(_)));
        assert_eq!(v[2].1, Verdict::Holds, "VET alone is still below HMT");
    }
}
