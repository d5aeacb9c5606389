//! The GRR paper's claims (Jin, Cho, Chung, "A Group Round Robin Based B-tree Index Storage
//! Scheme for Flash Memory Devices", IMCOM 2014), and their evidence from the runs of its
//! Figs. 6-8.

use super::{Assessment, Claim, Criterion, Evidence, Origin, Paper, assess};
use serde::Serialize;

/// A published value is reproduced when ours is within this band of it (ours / paper's).
const BAND: (f64, f64) = (0.8, 1.25);

/// What the GRR reproduction measured. Times are total simulated seconds; an empty list or
/// `None` is an experiment that did not run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GrrMeasurements {
    /// Fig. 6's baseline: IPL (one log page a block) with an LRU buffer.
    pub ipl_lru_seconds: Option<f64>,
    /// Fig. 6, k varied with m = 8: GRR with a log area of k pages (l = k) and the
    /// clean-first buffer with a semi-clean state, `(k, seconds)`.
    pub seconds_by_k: Vec<(u32, f64)>,
    /// Fig. 6, m varied with k = 4 (growing to l = 8), same buffer, `(m, seconds)`.
    pub seconds_by_m: Vec<(u32, f64)>,
    /// Fig. 7's baseline: IPL's hit ratio with an LRU buffer.
    pub ipl_lru_hit_ratio: Option<f64>,
    /// Fig. 7, k varied with m = 8 (l = 8), GRR with the semi-clean buffer, `(k, hit ratio)`.
    pub hit_ratio_by_k: Vec<(u32, f64)>,
    /// Fig. 7, m varied with k = 4, `(m, hit ratio)`.
    pub hit_ratio_by_m: Vec<(u32, f64)>,
    /// Fig. 8: `(read percent, IPL + LRU seconds, GRR + semi-clean seconds)`, from the most
    /// reads to the fewest.
    pub by_read_percent: Vec<(u32, f64, f64)>,
}

/// A claim of the paper: where it is made and the file its figure is drawn in, then the rest.
fn claim(
    id: &'static str,
    (location, figure): (&'static str, Option<&'static str>),
    quote: &'static str,
    paper_value: Option<&'static str>,
    quantity: &'static str,
    criterion: Criterion,
    shape: Option<Criterion>,
) -> Claim {
    Claim {
        id,
        paper: Paper::Grr,
        origin: Origin::Paper,
        location,
        figure,
        quote,
        paper_value,
        quantity,
        criterion,
        shape,
    }
}

fn missing(what: &str) -> Evidence {
    Evidence::Missing {
        reason: format!("{what} was not run"),
    }
}

fn series(points: &[(u32, f64)], name: &str, what: &str) -> Evidence {
    if points.is_empty() {
        return missing(what);
    }
    Evidence::Series {
        points: points
            .iter()
            .map(|&(x, v)| (format!("{name} = {x}"), v))
            .collect(),
    }
}

fn value(ours: Option<f64>, paper: f64, what: &str) -> Evidence {
    match ours {
        Some(ours) => Evidence::Value { ours, paper },
        None => missing(what),
    }
}

/// Every claim of the paper this module checks, with its evidence from `m`.
pub fn assess_all(m: &GrrMeasurements) -> Vec<Assessment> {
    let faster = Some(Criterion::AtLeast { value: 1.0 });
    let band = Criterion::RatioBand {
        low: BAND.0,
        high: BAND.1,
    };
    // IPL's time over GRR's: GRR's speed-up.
    let best_speedup = m.ipl_lru_seconds.and_then(|ipl| {
        m.seconds_by_k
            .iter()
            .chain(&m.seconds_by_m)
            .map(|&(_, s)| ipl / s)
            .reduce(f64::max)
    });
    let best_hit_gain = m.ipl_lru_hit_ratio.and_then(|ipl| {
        m.hit_ratio_by_k
            .iter()
            .chain(&m.hit_ratio_by_m)
            .map(|&(_, h)| h / ipl)
            .reduce(f64::max)
    });
    let write_only = m
        .by_read_percent
        .iter()
        .find(|r| r.0 == 0)
        .map(|&(_, ipl, grr)| ipl / grr);
    let rw = |keep: &dyn Fn(u32) -> bool, what: &str| {
        let points: Vec<(String, f64, f64)> = m
            .by_read_percent
            .iter()
            .filter(|r| keep(r.0))
            .map(|&(read, ipl, grr)| (format!("R/W {read}/{}", 100 - read), grr, ipl))
            .collect();
        if points.is_empty() {
            missing(what)
        } else {
            Evidence::Pairs { points }
        }
    };
    let gap = if m.by_read_percent.len() < 2 {
        missing("Fig. 8")
    } else {
        Evidence::Series {
            points: m
                .by_read_percent
                .iter()
                .map(|&(read, ipl, grr)| (format!("R/W {read}/{}", 100 - read), ipl / grr))
                .collect(),
        }
    };
    let hit_pairs = match m.ipl_lru_hit_ratio {
        None => missing("Fig. 7"),
        Some(ipl) => Evidence::Pairs {
            points: m
                .hit_ratio_by_k
                .iter()
                .map(|&(k, h)| (format!("k = {k}"), ipl, h))
                .chain(
                    m.hit_ratio_by_m
                        .iter()
                        .map(|&(mm, h)| (format!("m = {mm}"), ipl, h)),
                )
                .collect(),
        },
    };
    vec![
        assess(
            claim(
                "grr.fig6.best-at-k-4",
                ("Section 4.3, Fig. 6", Some("fig6a.svg")),
                "In the case of increasing the values of k, GRR shows the best performance when \
                 k is 4, since the bigger k, the heavier the merge work.",
                Some("fastest at k = 4 of 1, 2, 4, 8 (m = 8)"),
                "total time of GRR with log areas of k = 1, 2, 4, 8 pages, m = 8",
                Criterion::MinimumAt { at: "k = 4" },
                None,
            ),
            series(&m.seconds_by_k, "k", "Fig. 6's k axis"),
        ),
        assess(
            claim(
                "grr.fig6.faster-as-m-grows",
                ("Section 4.3, Fig. 6", Some("fig6b.svg")),
                "Whereas, for the case of increasing the values of m, the performance grows as m \
                 increases.",
                None,
                "total time of GRR with m = 2, 4, 8, 16 blocks a set, k = 4 (falling at every \
                 step; in shape: lower at 16 than at 2)",
                Criterion::Decreasing,
                Some(Criterion::Falls),
            ),
            series(&m.seconds_by_m, "m", "Fig. 6's m axis"),
        ),
        assess(
            claim(
                "grr.random-speedup",
                ("Section 5 (and the abstract)", Some("fig6a.svg")),
                "... and improves the performance at best by 1.67X under a random workload.",
                Some("1.67x"),
                "the best speed-up of GRR (any fixed m, k of Fig. 6) over IPL with LRU (within \
                 0.8-1.25 of the paper's; in shape: GRR faster)",
                band,
                faster,
            ),
            value(best_speedup, 1.67, "Fig. 6"),
        ),
        assess(
            claim(
                "grr.fig7.hit-ratio-gain",
                ("Section 5", Some("fig7a.svg")),
                "In detail, when compared with the IPL, GRR increases the buffer hit ratio at \
                 most by 1.60X.",
                Some("1.60x"),
                "the best hit ratio of GRR with the semi-clean buffer over IPL's with LRU \
                 (within 0.8-1.25 of the paper's; in shape: GRR's higher)",
                band,
                Some(Criterion::AtLeast { value: 1.0 + 1e-9 }),
            ),
            value(best_hit_gain, 1.60, "Fig. 7"),
        ),
        assess(
            claim(
                "grr.fig7.hit-ratio-always-above",
                ("Section 4.4, Fig. 7", Some("fig7a.svg")),
                "However, GRR always perform better than IPL.",
                None,
                "hit ratio of IPL with LRU against GRR's at every k and m of Fig. 7 (IPL's \
                 below)",
                Criterion::BelowAtEvery,
                None,
            ),
            hit_pairs,
        ),
        assess(
            claim(
                "grr.fig7.hit-ratio-falls-with-k",
                ("Section 4.4, Fig. 7", Some("fig7a.svg")),
                "Since increasing the values of k or m, will decrease the number of clean pages \
                 or clean part of semi-clean pages, and just lower the buffer hit ratio.",
                None,
                "GRR's hit ratio at k = 1, 2, 4, 8 (m = 8): lower at the largest k than at the \
                 smallest",
                Criterion::Falls,
                None,
            ),
            series(&m.hit_ratio_by_k, "k", "Fig. 7's k axis"),
        ),
        assess(
            claim(
                "grr.fig7.hit-ratio-falls-with-m",
                ("Section 4.4, Fig. 7", Some("fig7a.svg")),
                "Since increasing the values of k or m, will decrease the number of clean pages \
                 or clean part of semi-clean pages, and just lower the buffer hit ratio.",
                None,
                "GRR's hit ratio at m = 2, 4, 8, 16 (k = 4): lower at the largest m than at the \
                 smallest",
                Criterion::Falls,
                None,
            ),
            series(&m.hit_ratio_by_m, "m", "Fig. 7's m axis"),
        ),
        assess(
            claim(
                "grr.fig8.alike-under-reads",
                ("Section 4.5, Fig. 8", Some("fig8a.svg")),
                "Under a heavy-read workload, GRR and IPL have the same effects, since the most \
                 of the cached pages are clean pages.",
                None,
                "total time of GRR and IPL at R/W 100/0 (within 10%)",
                Criterion::EqualWithin { tolerance: 0.10 },
                None,
            ),
            rw(&|read| read == 100, "Fig. 8's 100/0"),
        ),
        assess(
            claim(
                "grr.fig8.gap-grows-with-writes",
                ("Section 4.5, Fig. 8", Some("fig8b.svg")),
                "However, the performance gaps between them increase as the write ratio \
                 increases.",
                None,
                "IPL's time over GRR's from R/W 100/0 to 0/100 (rising at every step; in shape: \
                 higher at 0/100 than at 100/0)",
                Criterion::Increasing,
                Some(Criterion::Rises),
            ),
            gap,
        ),
        assess(
            claim(
                "grr.fig8.clearly-ahead-above-60",
                ("Section 4.5, Fig. 8", Some("fig8a.svg")),
                "GRR clearly outperforms IPL when the write ratio is larger than 60%.",
                None,
                "total time of GRR against IPL's at write ratios above 60% (R/W 20/80, 0/100): \
                 at most 0.9 times IPL's",
                Criterion::AtMostFactor { factor: 0.9 },
                None,
            ),
            rw(&|read| read < 40, "Fig. 8's write-heavy ratios"),
        ),
        assess(
            claim(
                "grr.fig8.write-only-speedup",
                ("Section 4.5, Fig. 8", Some("fig8b.svg")),
                "Under a ratio of 0/100, the effect of GRR is large, and the access performance \
                 of it is improved by 2.14X compared to IPL.",
                Some("2.14x"),
                "IPL's time (LRU) over GRR's (semi-clean buffer) at R/W 0/100 (within 0.8-1.25 \
                 of the paper's; in shape: GRR faster)",
                band,
                faster,
            ),
            value(write_only, 2.14, "Fig. 8's 0/100"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Verdict;

    /// Measurements shaped as the paper describes them.
    fn as_the_paper_says() -> GrrMeasurements {
        GrrMeasurements {
            ipl_lru_seconds: Some(100.0),
            seconds_by_k: vec![(1, 80.0), (2, 70.0), (4, 60.0), (8, 65.0)],
            seconds_by_m: vec![(2, 90.0), (4, 80.0), (8, 70.0), (16, 62.0)],
            ipl_lru_hit_ratio: Some(0.5),
            hit_ratio_by_k: vec![(1, 0.8), (2, 0.7), (4, 0.6), (8, 0.55)],
            hit_ratio_by_m: vec![(2, 0.78), (4, 0.7), (8, 0.6), (16, 0.52)],
            by_read_percent: vec![
                (100, 10.0, 10.2),
                (80, 30.0, 25.0),
                (60, 50.0, 38.0),
                (40, 70.0, 45.0),
                (20, 90.0, 50.0),
                (0, 110.0, 52.0),
            ],
        }
    }

    fn verdict(m: &GrrMeasurements, id: &str) -> Verdict {
        assess_all(m)
            .into_iter()
            .find(|a| a.claim.id == id)
            .unwrap_or_else(|| panic!("no claim {id}"))
            .verdict
    }

    /// Each claim's evidence, point by point, from `as_the_paper_says`, and what each says
    /// when its experiment did not run.
    #[test]
    fn every_claim_reads_its_evidence_from_the_measurements() {
        let m = as_the_paper_says();
        let series = |name: &str, points: &[(u32, f64)]| Evidence::Series {
            points: points
                .iter()
                .map(|&(x, v)| (format!("{name} = {x}"), v))
                .collect(),
        };
        let pairs = |points: &[(&str, f64, f64)]| Evidence::Pairs {
            points: points
                .iter()
                .map(|&(x, a, b)| (x.to_string(), a, b))
                .collect(),
        };
        let hits: Vec<(String, f64, f64)> = m
            .hit_ratio_by_k
            .iter()
            .map(|&(k, h)| (format!("k = {k}"), 0.5, h))
            .chain(
                m.hit_ratio_by_m
                    .iter()
                    .map(|&(mm, h)| (format!("m = {mm}"), 0.5, h)),
            )
            .collect();
        let expected = vec![
            series("k", &m.seconds_by_k),
            series("m", &m.seconds_by_m),
            Evidence::Value {
                ours: 100.0 / 60.0,
                paper: 1.67,
            },
            Evidence::Value {
                ours: 0.8 / 0.5,
                paper: 1.60,
            },
            Evidence::Pairs { points: hits },
            series("k", &m.hit_ratio_by_k),
            series("m", &m.hit_ratio_by_m),
            pairs(&[("R/W 100/0", 10.2, 10.0)]),
            Evidence::Series {
                points: vec![
                    ("R/W 100/0".into(), 10.0 / 10.2),
                    ("R/W 80/20".into(), 30.0 / 25.0),
                    ("R/W 60/40".into(), 50.0 / 38.0),
                    ("R/W 40/60".into(), 70.0 / 45.0),
                    ("R/W 20/80".into(), 90.0 / 50.0),
                    ("R/W 0/100".into(), 110.0 / 52.0),
                ],
            },
            pairs(&[("R/W 20/80", 50.0, 90.0), ("R/W 0/100", 52.0, 110.0)]),
            Evidence::Value {
                ours: 110.0 / 52.0,
                paper: 2.14,
            },
        ];
        let evidence: Vec<Evidence> = assess_all(&m).into_iter().map(|a| a.evidence).collect();
        assert_eq!(evidence, expected);
        let reasons = |m: &GrrMeasurements| -> Vec<String> {
            assess_all(m)
                .into_iter()
                .filter_map(|a| match a.evidence {
                    Evidence::Missing { reason } => Some(reason),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            reasons(&GrrMeasurements::default()),
            [
                "Fig. 6's k axis was not run",
                "Fig. 6's m axis was not run",
                "Fig. 6 was not run",
                "Fig. 7 was not run",
                "Fig. 7 was not run",
                "Fig. 7's k axis was not run",
                "Fig. 7's m axis was not run",
                "Fig. 8's 100/0 was not run",
                "Fig. 8 was not run",
                "Fig. 8's write-heavy ratios was not run",
                "Fig. 8's 0/100 was not run",
            ]
        );
        // Baselines without the runs to compare them with, and one ratio of Fig. 8.
        let baselines_only = GrrMeasurements {
            ipl_lru_seconds: Some(100.0),
            ipl_lru_hit_ratio: Some(0.5),
            by_read_percent: vec![(40, 70.0, 45.0)],
            ..GrrMeasurements::default()
        };
        // The same but one: with IPL's hit ratio measured, the always-above claim has a list
        // of pairs, empty, not a missing reason (its verdict: no points measured).
        let mut expected = reasons(&GrrMeasurements::default());
        expected.remove(4);
        assert_eq!(reasons(&baselines_only), expected);
    }

    #[test]
    fn measurements_shaped_as_the_paper_says_reproduce_every_claim() {
        let m = as_the_paper_says();
        for a in assess_all(&m) {
            assert_eq!(a.verdict, Verdict::Holds, "{}: {}", a.claim.id, a.measured);
        }
        assert_eq!(assess_all(&m).len(), 11);
    }

    #[test]
    fn published_factors_hold_in_a_band_and_in_shape_beyond_it() {
        let mut m = as_the_paper_says();
        // 100 / 40 = 2.5x against the paper's 1.67x: beyond the band, GRR still faster.
        m.seconds_by_m[3].1 = 40.0;
        assert_eq!(verdict(&m, "grr.random-speedup"), Verdict::InShape);
        m.ipl_lru_hit_ratio = Some(0.9);
        assert_eq!(verdict(&m, "grr.fig7.hit-ratio-gain"), Verdict::DoesNotHold);
        assert_eq!(
            verdict(&m, "grr.fig7.hit-ratio-always-above"),
            Verdict::DoesNotHold
        );
    }

    #[test]
    fn a_best_k_elsewhere_and_a_flat_gap_do_not_hold() {
        let mut m = as_the_paper_says();
        m.seconds_by_k[3].1 = 50.0;
        assert_eq!(verdict(&m, "grr.fig6.best-at-k-4"), Verdict::DoesNotHold);
        // IPL over GRR: 1.8 at 20/80; 110 / 60 = 1.83 at 0/100 still rises.
        m.by_read_percent[5].2 = 60.0;
        assert_eq!(
            verdict(&m, "grr.fig8.gap-grows-with-writes"),
            Verdict::Holds
        );
        // 110 / 62 = 1.77: the gap shrinks at the last step, and is larger than at 100/0.
        m.by_read_percent[5].2 = 62.0;
        assert_eq!(
            verdict(&m, "grr.fig8.gap-grows-with-writes"),
            Verdict::InShape
        );
    }

    /// Two read ratios are enough to see the gap between them change.
    #[test]
    fn a_gap_is_read_from_two_ratios() {
        let m = GrrMeasurements {
            by_read_percent: vec![(100, 10.0, 10.0), (0, 110.0, 55.0)],
            ..GrrMeasurements::default()
        };
        let gap = assess_all(&m)
            .into_iter()
            .find(|a| a.claim.id == "grr.fig8.gap-grows-with-writes")
            .expect("claim")
            .evidence;
        assert_eq!(
            gap,
            Evidence::Series {
                points: vec![("R/W 100/0".into(), 1.0), ("R/W 0/100".into(), 2.0)]
            }
        );
    }

    #[test]
    fn experiments_not_run_cannot_be_checked() {
        let m = GrrMeasurements {
            by_read_percent: vec![(0, 100.0, 20.0)],
            ..GrrMeasurements::default()
        };
        assert!(matches!(
            verdict(&m, "grr.fig6.best-at-k-4"),
            Verdict::CannotCheck(_)
        ));
        assert!(matches!(
            verdict(&m, "grr.fig8.gap-grows-with-writes"),
            Verdict::CannotCheck(_)
        ));
        assert_eq!(verdict(&m, "grr.fig8.write-only-speedup"), Verdict::InShape);
    }
}
