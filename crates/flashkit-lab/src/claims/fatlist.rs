//! The fat-list paper's claims about its micro-benchmark (Figs. 14-15: fat lists against the
//! mu-tree on 1-8 MB of NOR flash), and their evidence from the same benchmark's phases.

use super::{Assessment, Claim, Criterion, Evidence, Origin, Paper, assess};
use serde::Serialize;

/// One structure's micro-benchmark on one flash size: simulated seconds a phase.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeRun {
    /// Flash size, MB.
    pub megabytes: u64,
    /// `fat list` or `mu-tree`.
    pub structure: String,
    /// `(phase, seconds)`: insert, update, query, delete.
    pub phases: Vec<(String, f64)>,
}

impl SizeRun {
    fn phase(&self, name: &str) -> Option<f64> {
        self.phases.iter().find(|p| p.0 == name).map(|p| p.1)
    }

    fn total(&self) -> f64 {
        self.phases.iter().map(|p| p.1).sum()
    }
}

const FAT: &str = "fat list";
const MU: &str = "mu-tree";

fn claim(
    id: &'static str,
    location: &'static str,
    figure: &'static str,
    quote: &'static str,
    quantity: &'static str,
    criterion: Criterion,
) -> Claim {
    Claim {
        id,
        paper: Paper::Fatlist,
        origin: Origin::Paper,
        location,
        figure: Some(figure),
        quote,
        paper_value: None,
        quantity,
        criterion,
        shape: None,
    }
}

struct Runs<'a>(&'a [SizeRun]);

impl Runs<'_> {
    fn sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self.0.iter().map(|r| r.megabytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    fn find(&self, megabytes: u64, structure: &str) -> Option<&SizeRun> {
        self.0
            .iter()
            .find(|r| r.megabytes == megabytes && r.structure == structure)
    }

    /// `(size, value of a, value of b)` at every size both structures ran.
    fn pairs(&self, a: &str, b: &str, value: impl Fn(&SizeRun) -> Option<f64>) -> Evidence {
        let points: Vec<(String, f64, f64)> = self
            .sizes()
            .into_iter()
            .filter_map(|mb| {
                let (x, y) = (value(self.find(mb, a)?)?, value(self.find(mb, b)?)?);
                Some((format!("{mb} MB"), x, y))
            })
            .collect();
        Evidence::pairs_or_missing(points, || {
            "Figs. 14-15 (the sizes experiment) were not run".into()
        })
    }

    /// One structure's phase time over the sizes, smallest flash first.
    fn series(&self, structure: &str, phase: &str) -> Evidence {
        let points: Vec<(String, f64)> = self
            .sizes()
            .into_iter()
            .filter_map(|mb| Some((format!("{mb} MB"), self.find(mb, structure)?.phase(phase)?)))
            .collect();
        Evidence::series_or_missing(points, || {
            "Figs. 14-15 (the sizes experiment) were not run".into()
        })
    }
}

/// Every claim this module checks, with its evidence from `runs`.
pub fn assess_all(runs: &[SizeRun]) -> Vec<Assessment> {
    let r = Runs(runs);
    let phase = |name: &'static str| move |run: &SizeRun| run.phase(name);
    let update = "In update phase, Both fat lists and \u{3bc} -tree experience garbage-collection \
                  activities. As the flash size decrease, the performance of fat lists and \
                  \u{3bc} -tree also decrease.";
    vec![
        assess(
            claim(
                "fatlist.fig14.update-phase",
                "Section 6.3, Fig. 14b",
                "fig14b.svg",
                "Therefore, fat lists outperforms \u{3bc} -tree in update phase.",
                "update-phase time of the fat list against the mu-tree, every flash size (the \
                 fat list's below)",
                Criterion::BelowAtEvery,
            ),
            r.pairs(FAT, MU, phase("update")),
        ),
        assess(
            claim(
                "fatlist.fig14.query-phase",
                "Section 6.3, Fig. 14c",
                "fig14c.svg",
                "\u{3bc} -tree outperforms fat list in query phase.",
                "query-phase time of the mu-tree against the fat list, every flash size (the \
                 mu-tree's below)",
                Criterion::BelowAtEvery,
            ),
            r.pairs(MU, FAT, phase("query")),
        ),
        assess(
            claim(
                "fatlist.fig14.delete-phase",
                "Section 6.3, Fig. 14d",
                "fig14d.svg",
                "When deleting keys, the structural modifications are less than update. \
                 However, fat lists still outperforms \u{3bc} -tree.",
                "deletion-phase time of the fat list against the mu-tree, every flash size \
                 (the fat list's below)",
                Criterion::BelowAtEvery,
            ),
            r.pairs(FAT, MU, phase("delete")),
        ),
        assess(
            claim(
                "fatlist.fig14.fat-list-slower-on-less-flash",
                "Section 6.3, Fig. 14b",
                "fig14b.svg",
                update,
                "the fat list's update-phase time from the smallest flash to the largest \
                 (falling at every step)",
                Criterion::Decreasing,
            ),
            r.series(FAT, "update"),
        ),
        assess(
            claim(
                "fatlist.fig14.mu-tree-slower-on-less-flash",
                "Section 6.3, Fig. 14b",
                "fig14b.svg",
                update,
                "the mu-tree's update-phase time from the smallest flash to the largest \
                 (falling at every step)",
                Criterion::Decreasing,
            ),
            r.series(MU, "update"),
        ),
        assess(
            claim(
                "fatlist.fig15.faster-in-total",
                "Section 6.3, Fig. 15",
                "fig15.svg",
                "Overall, this micro-benchmark shows that fat lists is much faster than \
                 \u{3bc} -tree.",
                "total time of the fat list against the mu-tree, every flash size (the fat \
                 list's below)",
                Criterion::BelowAtEvery,
            ),
            r.pairs(FAT, MU, |run| Some(run.total())),
        ),
        assess(
            Claim {
                paper_value: Some("2x"),
                ..claim(
                    "fatlist.fig15.two-times-faster",
                    "Section 6.3, Fig. 15",
                    "fig15.svg",
                    "Although \u{3bc} -tree outperforms fat list in query phase, fat lists is \
                     still two times faster than \u{3bc} -tree in the total execution time \
                     because NOR flash is fast on read.",
                    "the mu-tree's total time over the fat list's, every flash size, against \
                     the paper's 2 (within 0.8-1.25)",
                    Criterion::RatioBandAtEvery {
                        low: 0.8,
                        high: 1.25,
                    },
                )
            },
            match r.pairs(MU, FAT, |run| Some(run.total())) {
                Evidence::Pairs { points } => Evidence::Pairs {
                    points: points
                        .into_iter()
                        .map(|(at, mu, fat)| (at, mu / fat.max(f64::MIN_POSITIVE), 2.0))
                        .collect(),
                },
                other => other,
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Verdict;

    fn run(megabytes: u64, structure: &str, [i, u, q, d]: [f64; 4]) -> SizeRun {
        SizeRun {
            megabytes,
            structure: structure.into(),
            phases: vec![
                ("insert".into(), i),
                ("update".into(), u),
                ("query".into(), q),
                ("delete".into(), d),
            ],
        }
    }

    fn as_the_paper_says() -> Vec<SizeRun> {
        vec![
            run(1, FAT, [10.0, 100.0, 40.0, 5.0]),
            run(1, MU, [20.0, 260.0, 8.0, 12.0]),
            run(2, FAT, [10.0, 90.0, 40.0, 5.0]),
            run(2, MU, [20.0, 230.0, 8.0, 12.0]),
        ]
    }

    /// Each claim's evidence, point by point, from runs given largest flash first, with a
    /// 4 MB size the fat list alone ran: by size, smallest first, where both ran.
    #[test]
    fn every_claim_reads_its_evidence_from_the_runs() {
        let mut runs = as_the_paper_says();
        runs.reverse();
        runs.push(run(4, FAT, [10.0, 80.0, 40.0, 5.0]));
        let pairs = |a: (f64, f64), b: (f64, f64)| Evidence::Pairs {
            points: vec![("1 MB".into(), a.0, a.1), ("2 MB".into(), b.0, b.1)],
        };
        let series = |points: &[(&str, f64)]| Evidence::Series {
            points: points.iter().map(|&(x, v)| (x.to_string(), v)).collect(),
        };
        let expected = vec![
            pairs((100.0, 260.0), (90.0, 230.0)),
            pairs((8.0, 40.0), (8.0, 40.0)),
            pairs((5.0, 12.0), (5.0, 12.0)),
            series(&[("1 MB", 100.0), ("2 MB", 90.0), ("4 MB", 80.0)]),
            series(&[("1 MB", 260.0), ("2 MB", 230.0)]),
            pairs((155.0, 300.0), (145.0, 270.0)),
            pairs((300.0 / 155.0, 2.0), (270.0 / 145.0, 2.0)),
        ];
        let evidence: Vec<Evidence> = assess_all(&runs).into_iter().map(|a| a.evidence).collect();
        assert_eq!(evidence, expected);
        for a in assess_all(&[]) {
            assert_eq!(
                a.evidence,
                Evidence::Missing {
                    reason: "Figs. 14-15 (the sizes experiment) were not run".into()
                },
                "{}",
                a.claim.id
            );
        }
    }

    #[test]
    fn runs_shaped_as_the_paper_says_reproduce_every_claim() {
        let all = assess_all(&as_the_paper_says());
        assert_eq!(all.len(), 7);
        for a in all {
            assert_eq!(a.verdict, Verdict::Holds, "{}: {}", a.claim.id, a.measured);
        }
    }

    #[test]
    fn sixteen_times_faster_is_not_two_times_faster() {
        let mut runs = as_the_paper_says();
        runs[1] = run(1, MU, [200.0, 2600.0, 8.0, 120.0]);
        let all = assess_all(&runs);
        let of = |id: &str| {
            all.iter()
                .find(|a| a.claim.id == id)
                .expect("claim")
                .verdict
                .clone()
        };
        assert_eq!(of("fatlist.fig15.two-times-faster"), Verdict::DoesNotHold);
        assert_eq!(of("fatlist.fig15.faster-in-total"), Verdict::Holds);
        assert!(matches!(
            assess_all(&[])[0].verdict,
            Verdict::CannotCheck(_)
        ));
    }
}
