//! The claims ledger: every quantitative claim of a paper as data, and its verdict computed
//! from measurements.
//!
//! A [`Claim`] says where the paper makes it, quotes it, gives the paper's value, names the
//! quantity flashkit measures for it, and fixes a [`Criterion`] before any of our numbers is
//! looked at. A reproduction gathers its measurements into [`Evidence`]; [`assess`] applies
//! the criterion and gives a [`Verdict`] with the figures it rests on. Nothing here is typed
//! by hand: a verdict is what the criterion says of the evidence.
//!
//! Rules every criterion follows:
//! - **A premise that fails, fails the claim.** "BAST approaches FAST as log blocks are
//!   added" presumes BAST behind; BAST ahead throughout does not reproduce it, however the
//!   gap moves.
//! - **Missing evidence is said, not guessed.** A run that did not measure what a claim
//!   needs (a `--quick` run without 32 log blocks) gives [`Verdict::CannotCheck`] with what
//!   is missing.
//! - **Shape is a second criterion, never a loosened first.** A claim may carry a weaker
//!   `shape` criterion (the trend the paper reports, where its exact figure is not
//!   reachable); when the claim fails and the shape holds, the verdict is
//!   [`Verdict::InShape`], reported apart from the claims that hold.
//! - **Our own targets are not the paper's claims.** A target flashkit set itself
//!   ([`Origin::Target`]) is assessed the same way and listed apart.

pub mod fast;
pub mod fatlist;
pub mod flashmodel;
pub mod grr;
pub mod vet;

use serde::Serialize;
use std::fmt;

/// The papers flashkit reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Paper {
    /// Lee et al., FAST (ACM TECS 2007).
    Fast,
    /// Suh et al., VET and EMT (JSA 2014).
    Vet,
    /// Fat lists on NOR flash (2011).
    Fatlist,
    /// Jin, Cho, Chung, GRR (IMCOM 2014).
    Grr,
    /// Ajwani et al., computational models for flash (SEA 2009).
    Flashmodel,
}

impl Paper {
    /// Every paper, in the order `reproduce all` runs them.
    pub const ALL: [Paper; 5] = [
        Paper::Fast,
        Paper::Vet,
        Paper::Fatlist,
        Paper::Grr,
        Paper::Flashmodel,
    ];

    /// The name `flashkit reproduce` takes.
    pub fn name(self) -> &'static str {
        match self {
            Paper::Fast => "fast",
            Paper::Vet => "vet",
            Paper::Fatlist => "fatlist",
            Paper::Grr => "grr",
            Paper::Flashmodel => "flashmodel",
        }
    }
}

impl fmt::Display for Paper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whose claim it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The paper says it.
    Paper,
    /// A target flashkit set itself (such as a speed-up over the paper's machine); never
    /// printed as the paper's claim.
    Target,
}

/// One quantitative claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Claim {
    /// Stable identifier, `paper.topic` ("fast.e.bast-flat").
    pub id: &'static str,
    /// The paper.
    pub paper: Paper,
    /// Whose claim.
    pub origin: Origin,
    /// Where the paper makes it (section, table or figure).
    pub location: &'static str,
    /// The file the reproduction draws the claim's figure in (`fig10-E-erases.svg`), if it
    /// draws one.
    pub figure: Option<&'static str>,
    /// The sentence, quoted.
    pub quote: &'static str,
    /// The paper's value or values, where it gives any.
    pub paper_value: Option<&'static str>,
    /// What flashkit measures for it.
    pub quantity: &'static str,
    /// What must hold, fixed before our numbers were looked at.
    pub criterion: Criterion,
    /// A weaker criterion, the claim's shape, for [`Verdict::InShape`].
    pub shape: Option<Criterion>,
}

/// What must hold of the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Criterion {
    /// Pairs: the subject is below the reference at every point.
    BelowAtEvery,
    /// Pairs: the subject is at most `factor` times the reference at every point.
    AtMostFactor {
        /// The factor.
        factor: f64,
    },
    /// Pairs: the ratio subject/reference is within `[low, high]` at every point (ours
    /// against the paper's published value at each point of a table).
    RatioBandAtEvery {
        /// Lowest ratio.
        low: f64,
        /// Highest ratio.
        high: f64,
    },
    /// Pairs: subject and reference differ by at most `tolerance` of the reference at
    /// every point.
    EqualWithin {
        /// Relative tolerance.
        tolerance: f64,
    },
    /// Series: the largest value is at most `factor` times the smallest.
    Flat {
        /// The factor.
        factor: f64,
    },
    /// Series: the value at the last point is below the value at the first.
    Falls,
    /// Series: the value at the last point is above the value at the first.
    Rises,
    /// Series: each value below the one before.
    Decreasing,
    /// Series: each value above the one before.
    Increasing,
    /// Series: the smallest value is at the point named `at` (a best parameter value).
    MinimumAt {
        /// The point's name, as the evidence names it.
        at: &'static str,
    },
    /// Pairs: the subject starts above the reference (the premise) and the ratio
    /// subject/reference at the last point is nearer 1 than at the first.
    ApproachesFromAbove,
    /// A value: ours is at least `value` (the direction the paper reports, whatever its
    /// size: "GRR is faster than IPL").
    AtLeast {
        /// The bound.
        value: f64,
    },
    /// A value: ours is within `[low, high]` times the paper's.
    RatioBand {
        /// Lowest ratio ours/paper.
        low: f64,
        /// Highest ratio ours/paper.
        high: f64,
    },
}

/// What a reproduction measured for a claim.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Evidence {
    /// One value a point, `(where, value)`, in the order of the axis.
    Series {
        /// The points.
        points: Vec<(String, f64)>,
    },
    /// A subject and a reference a point, `(where, subject, reference)`, in the order of
    /// the axis.
    Pairs {
        /// The points.
        points: Vec<(String, f64, f64)>,
    },
    /// Our value and the paper's.
    Value {
        /// Ours.
        ours: f64,
        /// The paper's.
        paper: f64,
    },
    /// Not measured: why.
    Missing {
        /// What is missing.
        reason: String,
    },
}

impl Evidence {
    /// `points` as pairs, or, when there are none, missing for `reason`.
    pub fn pairs_or_missing(
        points: Vec<(String, f64, f64)>,
        reason: impl FnOnce() -> String,
    ) -> Evidence {
        if points.is_empty() {
            Evidence::Missing { reason: reason() }
        } else {
            Evidence::Pairs { points }
        }
    }

    /// `points` as a series, or, when there are none, missing for `reason`.
    pub fn series_or_missing(
        points: Vec<(String, f64)>,
        reason: impl FnOnce() -> String,
    ) -> Evidence {
        if points.is_empty() {
            Evidence::Missing { reason: reason() }
        } else {
            Evidence::Series { points }
        }
    }
}

/// A claim's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "reason", rename_all = "kebab-case")]
pub enum Verdict {
    /// The criterion holds.
    Holds,
    /// The criterion fails, its shape holds.
    InShape,
    /// The criterion fails (or its premise does).
    DoesNotHold,
    /// The evidence is not there: why.
    CannotCheck(String),
}

impl Verdict {
    /// How the verdict reads in a table.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::InShape => "in shape only",
            Verdict::DoesNotHold => "does not hold",
            Verdict::CannotCheck(_) => "cannot be checked here",
        }
    }
}

/// A claim, its evidence and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Assessment {
    /// The claim.
    #[serde(flatten)]
    pub claim: Claim,
    /// What was measured.
    pub evidence: Evidence,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The figures the verdict rests on, in words ("BAST/FAST 1.12 -> 1.03").
    pub measured: String,
}

/// What one criterion says of some evidence: whether it holds, a premise that failed, and
/// the figures it looked at.
struct Outcome {
    holds: bool,
    premise_failed: Option<String>,
    measured: String,
}

impl Outcome {
    fn plain(holds: bool, measured: String) -> Outcome {
        Outcome {
            holds,
            premise_failed: None,
            measured,
        }
    }
}

/// `claim` against `evidence`.
pub fn assess(claim: Claim, evidence: Evidence) -> Assessment {
    let (verdict, measured) = match apply(&claim.criterion, &evidence) {
        Err(reason) => (Verdict::CannotCheck(reason.clone()), reason),
        Ok(outcome) if outcome.holds => (Verdict::Holds, outcome.measured),
        Ok(outcome) => {
            let shape_holds = outcome.premise_failed.is_none()
                && claim
                    .shape
                    .is_some_and(|shape| apply(&shape, &evidence).is_ok_and(|o| o.holds));
            let measured = match outcome.premise_failed {
                Some(premise) => format!("{}; {premise}", outcome.measured),
                None => outcome.measured,
            };
            let verdict = if shape_holds {
                Verdict::InShape
            } else {
                Verdict::DoesNotHold
            };
            (verdict, measured)
        }
    };
    Assessment {
        claim,
        evidence,
        verdict,
        measured,
    }
}

/// A ratio that does not divide by zero: `a / max(b, tiny)`.
fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(f64::MIN_POSITIVE)
}

fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

fn apply(criterion: &Criterion, evidence: &Evidence) -> Result<Outcome, String> {
    let needs = |what: &str| format!("the criterion needs {what}, the evidence is {evidence:?}");
    match (criterion, evidence) {
        (_, Evidence::Missing { reason }) => Err(reason.clone()),
        (Criterion::BelowAtEvery, Evidence::Pairs { points }) => {
            every(points, |s, r| s < r, "below")
        }
        (Criterion::AtMostFactor { factor }, Evidence::Pairs { points }) => every(
            points,
            |s, r| s <= r * factor,
            &format!("at most {factor} times"),
        ),
        (Criterion::RatioBandAtEvery { low, high }, Evidence::Pairs { points }) => every(
            points,
            |s, r| (*low..=*high).contains(&ratio(s, r)),
            &format!("within {low}-{high} times"),
        ),
        (Criterion::EqualWithin { tolerance }, Evidence::Pairs { points }) => every(
            points,
            |s, r| (s - r).abs() <= tolerance * r.abs(),
            &format!("within {}%", tolerance * 100.0),
        ),
        (Criterion::Flat { factor }, Evidence::Series { points }) => flat(points, *factor),
        (Criterion::Falls | Criterion::Rises, Evidence::Series { points }) => {
            trend(points, matches!(criterion, Criterion::Rises))
        }
        (Criterion::Decreasing | Criterion::Increasing, Evidence::Series { points }) => {
            monotone(points, matches!(criterion, Criterion::Increasing))
        }
        (Criterion::MinimumAt { at }, Evidence::Series { points }) => minimum_at(points, at),
        (Criterion::AtLeast { value }, Evidence::Value { ours, paper }) => {
            Ok(at_least(*ours, *paper, *value))
        }
        (Criterion::ApproachesFromAbove, Evidence::Pairs { points }) => {
            approaches_from_above(points)
        }
        (Criterion::RatioBand { low, high }, Evidence::Value { ours, paper }) => {
            Ok(ratio_band(*ours, *paper, (*low, *high)))
        }
        (Criterion::BelowAtEvery, _)
        | (Criterion::AtMostFactor { .. }, _)
        | (Criterion::RatioBandAtEvery { .. }, _)
        | (Criterion::EqualWithin { .. }, _)
        | (Criterion::ApproachesFromAbove, _) => Err(needs("pairs")),
        (
            Criterion::Flat { .. }
            | Criterion::Falls
            | Criterion::Rises
            | Criterion::Decreasing
            | Criterion::Increasing
            | Criterion::MinimumAt { .. },
            _,
        ) => Err(needs("a series")),
        (Criterion::RatioBand { .. } | Criterion::AtLeast { .. }, _) => {
            Err(needs("a value and the paper's"))
        }
    }
}

/// [`Criterion::AtLeast`]: ours at least `value`.
fn at_least(ours: f64, paper: f64, value: f64) -> Outcome {
    Outcome::plain(
        ours >= value,
        format!(
            "ours {} (at least {} holds; the paper's {})",
            number(ours),
            number(value),
            number(paper)
        ),
    )
}

/// [`Criterion::RatioBand`]: ours within `[low, high]` times the paper's.
fn ratio_band(ours: f64, paper: f64, (low, high): (f64, f64)) -> Outcome {
    let r = ratio(ours, paper);
    Outcome::plain(
        (low..=high).contains(&r),
        format!(
            "ours {} against the paper's {}: ratio {r:.3} (band {low}-{high})",
            number(ours),
            number(paper)
        ),
    )
}

/// [`Criterion::Flat`]: the largest value at most `factor` times the smallest.
fn flat(points: &[(String, f64)], factor: f64) -> Result<Outcome, String> {
    let values: Vec<f64> = points.iter().map(|p| p.1).collect();
    let (Some(min), Some(max)) = (
        values.iter().copied().reduce(f64::min),
        values.iter().copied().reduce(f64::max),
    ) else {
        return Err("no points measured".into());
    };
    let spread = ratio(max, min);
    Ok(Outcome::plain(
        spread <= factor,
        format!(
            "from {} to {}: a factor {spread:.3} (at most {factor} holds)",
            number(min),
            number(max)
        ),
    ))
}

/// [`Criterion::Rises`] (`rising`) or [`Criterion::Falls`]: the last value against the first.
fn trend(points: &[(String, f64)], rising: bool) -> Result<Outcome, String> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Err("no points measured".into());
    };
    if points.len() < 2 {
        return Err("a trend needs two points; one was measured".into());
    }
    let holds = if rising {
        last.1 > first.1
    } else {
        last.1 < first.1
    };
    Ok(Outcome::plain(
        holds,
        format!(
            "{} at {} -> {} at {}",
            number(first.1),
            first.0,
            number(last.1),
            last.0
        ),
    ))
}

/// [`Criterion::Increasing`] (`rising`) or [`Criterion::Decreasing`]: every step, with the
/// steps that break the trend named.
fn monotone(points: &[(String, f64)], rising: bool) -> Result<Outcome, String> {
    if points.len() < 2 {
        return Err("a trend needs two points or more".into());
    }
    let broken: Vec<String> = points
        .windows(2)
        .filter(|w| {
            if rising {
                w[1].1 <= w[0].1
            } else {
                w[1].1 >= w[0].1
            }
        })
        .map(|w| {
            format!(
                "{} at {} then {} at {}",
                number(w[0].1),
                w[0].0,
                number(w[1].1),
                w[1].0
            )
        })
        .collect();
    let mut measured = series_values(points);
    if !broken.is_empty() {
        measured.push_str(&format!(
            "; not {}: {}",
            if rising { "rising" } else { "falling" },
            broken.join("; ")
        ));
    }
    Ok(Outcome::plain(broken.is_empty(), measured))
}

/// [`Criterion::MinimumAt`]: the smallest value at the point named `at`.
fn minimum_at(points: &[(String, f64)], at: &str) -> Result<Outcome, String> {
    let Some(best) = points.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Err("no points measured".into());
    };
    if !points.iter().any(|p| p.0 == at) {
        return Err(format!("{at} was not measured"));
    }
    Ok(Outcome::plain(
        best.0 == at,
        format!("smallest at {}: {}", best.0, series_values(points)),
    ))
}

/// A series in words: "3 at 1, 2 at 2".
fn series_values(points: &[(String, f64)]) -> String {
    let values: Vec<String> = points
        .iter()
        .map(|p| format!("{} at {}", number(p.1), p.0))
        .collect();
    values.join(", ")
}

/// [`Criterion::ApproachesFromAbove`]: the premise (the subject starts above the
/// reference), then the ratio at the last point nearer 1 than at the first.
fn approaches_from_above(points: &[(String, f64, f64)]) -> Result<Outcome, String> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Err("no points measured".into());
    };
    if points.len() < 2 {
        return Err("a trend needs two points; one was measured".into());
    }
    let (r0, r1) = (ratio(first.1, first.2), ratio(last.1, last.2));
    let measured = format!("ratio {r0:.3} at {} -> {r1:.3} at {}", first.0, last.0);
    if r0 <= 1.0 {
        return Ok(Outcome {
            holds: false,
            premise_failed: Some(format!(
                "the premise fails: the subject starts at or below the reference \
                 (ratio {r0:.3})"
            )),
            measured,
        });
    }
    Ok(Outcome::plain((r1 - 1.0).abs() < r0 - 1.0, measured))
}

/// A pairwise criterion at every point.
fn every(
    points: &[(String, f64, f64)],
    ok: impl Fn(f64, f64) -> bool,
    relation: &str,
) -> Result<Outcome, String> {
    if points.is_empty() {
        return Err("no points measured".into());
    }
    let failing: Vec<String> = points
        .iter()
        .filter(|p| !ok(p.1, p.2))
        .map(|p| format!("{} vs {} at {}", number(p.1), number(p.2), p.0))
        .collect();
    let measured = if failing.is_empty() && points.len() == 1 {
        format!("{relation} at the one point")
    } else if failing.is_empty() {
        format!("{relation} at all {} points", points.len())
    } else {
        format!(
            "{relation} at {} of {} points; not at: {}",
            points.len() - failing.len(),
            points.len(),
            failing.join(", ")
        )
    };
    Ok(Outcome::plain(failing.is_empty(), measured))
}

/// The commit whose ledger the outside fidelity audit left: the "before" of
/// [`audit_baseline`].
pub const AUDIT_COMMIT: &str = "39fb539";

/// Each paper's tally as the outside fidelity audit left the ledger (commit
/// [`AUDIT_COMMIT`]), recorded in docs/reproduction/claims.md ("The tally"): what
/// `reproduce all`'s page shows beside this run's tally, so that a reader sees what the
/// fidelity work changed. A record of the past, not a measurement; the run's own tally is
/// computed.
pub fn audit_baseline(paper: Paper) -> Tally {
    let tally = |holds, in_shape, does_not_hold| Tally {
        holds,
        in_shape,
        does_not_hold,
        cannot_check: 0,
    };
    match paper {
        Paper::Fast => tally(8, 0, 5),
        Paper::Vet => tally(3, 0, 5),
        Paper::Fatlist => tally(6, 0, 1),
        Paper::Grr => tally(3, 3, 5),
        Paper::Flashmodel => tally(1, 0, 4),
    }
}

/// The verdicts of many claims, counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Claims that hold.
    pub holds: usize,
    /// Claims that hold in shape only.
    pub in_shape: usize,
    /// Claims that do not hold.
    pub does_not_hold: usize,
    /// Claims that cannot be checked here.
    pub cannot_check: usize,
}

impl Tally {
    /// The tally of the paper's own claims among `assessments` (targets are left out).
    pub fn of(assessments: &[Assessment]) -> Tally {
        let mut tally = Tally::default();
        for a in assessments
            .iter()
            .filter(|a| a.claim.origin == Origin::Paper)
        {
            match a.verdict {
                Verdict::Holds => tally.holds += 1,
                Verdict::InShape => tally.in_shape += 1,
                Verdict::DoesNotHold => tally.does_not_hold += 1,
                Verdict::CannotCheck(_) => tally.cannot_check += 1,
            }
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(criterion: Criterion, shape: Option<Criterion>) -> Claim {
        Claim {
            id: "test.claim",
            paper: Paper::Fast,
            origin: Origin::Paper,
            location: "Section 4",
            figure: None,
            quote: "a quote",
            paper_value: None,
            quantity: "erases",
            criterion,
            shape,
        }
    }

    fn pairs(points: &[(f64, f64, f64)]) -> Evidence {
        Evidence::Pairs {
            points: points
                .iter()
                .map(|&(x, s, r)| (x.to_string(), s, r))
                .collect(),
        }
    }

    fn series(points: &[(f64, f64)]) -> Evidence {
        Evidence::Series {
            points: points.iter().map(|&(x, v)| (x.to_string(), v)).collect(),
        }
    }

    fn verdict(criterion: Criterion, evidence: Evidence) -> Verdict {
        assess(claim(criterion, None), evidence).verdict
    }

    #[test]
    fn pairwise_criteria_hold_only_at_every_point() {
        let below = pairs(&[(4.0, 1.0, 2.0), (8.0, 3.0, 4.0)]);
        assert_eq!(verdict(Criterion::BelowAtEvery, below), Verdict::Holds);
        let one_equal = pairs(&[(4.0, 1.0, 2.0), (8.0, 4.0, 4.0)]);
        let a = assess(claim(Criterion::BelowAtEvery, None), one_equal);
        assert_eq!(a.verdict, Verdict::DoesNotHold);
        assert!(
            a.measured
                .contains("below at 1 of 2 points; not at: 4 vs 4 at 8"),
            "{}",
            a.measured
        );
        let factor = Criterion::AtMostFactor { factor: 1.1 };
        assert_eq!(
            verdict(factor, pairs(&[(1.0, 110.0, 100.0)])),
            Verdict::Holds
        );
        assert_eq!(
            verdict(factor, pairs(&[(1.0, 111.0, 100.0)])),
            Verdict::DoesNotHold
        );
        let band = Criterion::RatioBandAtEvery {
            low: 0.8,
            high: 1.25,
        };
        assert_eq!(
            verdict(band, pairs(&[(1.0, 80.0, 100.0), (2.0, 125.0, 100.0)])),
            Verdict::Holds
        );
        assert_eq!(
            verdict(band, pairs(&[(1.0, 79.0, 100.0)])),
            Verdict::DoesNotHold
        );
        assert_eq!(
            verdict(band, pairs(&[(1.0, 126.0, 100.0)])),
            Verdict::DoesNotHold
        );
        let equal = Criterion::EqualWithin { tolerance: 0.01 };
        assert_eq!(
            verdict(equal, pairs(&[(1.0, 99.0, 100.0), (2.0, 101.0, 100.0)])),
            Verdict::Holds
        );
        assert_eq!(
            verdict(equal, pairs(&[(1.0, 98.9, 100.0)])),
            Verdict::DoesNotHold
        );
    }

    #[test]
    fn series_criteria() {
        let flat = Criterion::Flat { factor: 1.1 };
        assert_eq!(
            verdict(flat, series(&[(4.0, 100.0), (8.0, 110.0), (16.0, 105.0)])),
            Verdict::Holds
        );
        assert_eq!(
            verdict(flat, series(&[(4.0, 100.0), (8.0, 111.0)])),
            Verdict::DoesNotHold
        );
        assert_eq!(
            verdict(
                Criterion::Falls,
                series(&[(4.0, 10.0), (8.0, 12.0), (16.0, 9.0)])
            ),
            Verdict::Holds
        );
        assert_eq!(
            verdict(Criterion::Falls, series(&[(4.0, 10.0), (16.0, 10.0)])),
            Verdict::DoesNotHold
        );
        assert_eq!(
            verdict(Criterion::Rises, series(&[(4.0, 10.0), (16.0, 11.0)])),
            Verdict::Holds
        );
        assert_eq!(
            verdict(Criterion::Rises, series(&[(4.0, 10.0), (16.0, 9.0)])),
            Verdict::DoesNotHold
        );
        assert!(matches!(
            verdict(Criterion::Falls, series(&[(4.0, 10.0)])),
            Verdict::CannotCheck(_)
        ));
    }

    #[test]
    fn monotone_trends_and_best_values() {
        let steps = series(&[(1.0, 10.0), (2.0, 8.0), (4.0, 9.0), (8.0, 5.0)]);
        assert_eq!(verdict(Criterion::Falls, steps.clone()), Verdict::Holds);
        let a = assess(
            claim(Criterion::Decreasing, Some(Criterion::Falls)),
            steps.clone(),
        );
        assert_eq!(
            a.verdict,
            Verdict::InShape,
            "falls overall, not at every step"
        );
        assert!(
            a.measured.contains("not falling: 8 at 2 then 9 at 4"),
            "{}",
            a.measured
        );
        assert_eq!(
            verdict(
                Criterion::Decreasing,
                series(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)])
            ),
            Verdict::Holds
        );
        assert_eq!(
            verdict(
                Criterion::Increasing,
                series(&[(1.0, 1.0), (2.0, 2.0), (3.0, 2.0)])
            ),
            Verdict::DoesNotHold
        );
        assert_eq!(
            verdict(
                Criterion::Increasing,
                series(&[(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)])
            ),
            Verdict::Holds
        );
        assert_eq!(
            verdict(Criterion::MinimumAt { at: "8" }, steps.clone()),
            Verdict::Holds
        );
        let a = assess(claim(Criterion::MinimumAt { at: "4" }, None), steps.clone());
        assert_eq!(a.verdict, Verdict::DoesNotHold);
        assert!(a.measured.starts_with("smallest at 8"), "{}", a.measured);
        assert!(matches!(
            verdict(Criterion::MinimumAt { at: "3" }, steps),
            Verdict::CannotCheck(_)
        ));
        let faster = Criterion::AtLeast { value: 1.0 };
        assert_eq!(
            verdict(
                faster,
                Evidence::Value {
                    ours: 1.2,
                    paper: 2.14
                }
            ),
            Verdict::Holds
        );
        assert_eq!(
            verdict(
                faster,
                Evidence::Value {
                    ours: 0.99,
                    paper: 2.14
                }
            ),
            Verdict::DoesNotHold
        );
    }

    /// BAST ahead of FAST throughout does not reproduce "BAST approaches FAST", however the
    /// gap moves; BAST behind and closing in does.
    #[test]
    fn approaching_needs_its_premise() {
        let closing = pairs(&[(4.0, 150.0, 100.0), (64.0, 110.0, 100.0)]);
        assert_eq!(
            verdict(Criterion::ApproachesFromAbove, closing),
            Verdict::Holds
        );
        let overshooting = pairs(&[(4.0, 150.0, 100.0), (64.0, 40.0, 100.0)]);
        assert_eq!(
            verdict(Criterion::ApproachesFromAbove, overshooting),
            Verdict::DoesNotHold
        );
        let ahead = pairs(&[(4.0, 94.0, 100.0), (64.0, 96.0, 100.0)]);
        let a = assess(
            claim(
                Criterion::ApproachesFromAbove,
                Some(Criterion::BelowAtEvery),
            ),
            ahead,
        );
        assert_eq!(
            a.verdict,
            Verdict::DoesNotHold,
            "a failed premise is never in shape"
        );
        assert!(a.measured.contains("the premise fails"), "{}", a.measured);
        let widening = pairs(&[(4.0, 110.0, 100.0), (64.0, 150.0, 100.0)]);
        assert_eq!(
            verdict(Criterion::ApproachesFromAbove, widening),
            Verdict::DoesNotHold
        );
    }

    #[test]
    fn the_shape_criterion_gives_in_shape_only_when_the_claim_fails() {
        let c = claim(
            Criterion::RatioBand {
                low: 0.8,
                high: 1.25,
            },
            Some(Criterion::RatioBand {
                low: 0.5,
                high: 2.0,
            }),
        );
        let at = |ours: f64| assess(c.clone(), Evidence::Value { ours, paper: 100.0 }).verdict;
        assert_eq!(at(120.0), Verdict::Holds);
        assert_eq!(at(180.0), Verdict::InShape);
        assert_eq!(at(250.0), Verdict::DoesNotHold);
        assert_eq!(at(79.0), Verdict::InShape);
    }

    #[test]
    fn missing_or_mismatched_evidence_cannot_be_checked() {
        let missing = Evidence::Missing {
            reason: "needs 32 log blocks".into(),
        };
        assert_eq!(
            verdict(Criterion::Falls, missing),
            Verdict::CannotCheck("needs 32 log blocks".into())
        );
        assert!(matches!(
            verdict(Criterion::Falls, pairs(&[(1.0, 1.0, 1.0)])),
            Verdict::CannotCheck(_)
        ));
        assert!(matches!(
            verdict(Criterion::BelowAtEvery, pairs(&[])),
            Verdict::CannotCheck(_)
        ));
    }

    #[test]
    fn the_tally_counts_the_papers_claims_only() {
        let mut target = claim(Criterion::Falls, None);
        target.origin = Origin::Target;
        let assessments = vec![
            assess(
                claim(Criterion::Falls, None),
                series(&[(1.0, 2.0), (2.0, 1.0)]),
            ),
            assess(
                claim(Criterion::Falls, None),
                series(&[(1.0, 1.0), (2.0, 2.0)]),
            ),
            assess(target, series(&[(1.0, 2.0), (2.0, 1.0)])),
            assess(
                claim(Criterion::Falls, None),
                Evidence::Missing { reason: "x".into() },
            ),
            assess(
                claim(Criterion::Decreasing, Some(Criterion::Falls)),
                series(&[(1.0, 3.0), (2.0, 4.0), (3.0, 1.0)]),
            ),
            assess(
                claim(Criterion::Decreasing, Some(Criterion::Falls)),
                series(&[(1.0, 3.0), (2.0, 4.0), (3.0, 2.0)]),
            ),
        ];
        assert_eq!(
            Tally::of(&assessments),
            Tally {
                holds: 1,
                in_shape: 2,
                does_not_hold: 1,
                cannot_check: 1
            }
        );
    }

    #[test]
    fn papers_are_named_as_reproduce_takes_them() {
        let names: Vec<String> = Paper::ALL.iter().map(Paper::to_string).collect();
        assert_eq!(names, ["fast", "vet", "fatlist", "grr", "flashmodel"]);
        for paper in Paper::ALL {
            assert_eq!(paper.name(), paper.to_string());
        }
    }

    #[test]
    fn verdicts_read_in_a_table() {
        let labels: Vec<&str> = [
            Verdict::Holds,
            Verdict::InShape,
            Verdict::DoesNotHold,
            Verdict::CannotCheck("why".into()),
        ]
        .iter()
        .map(Verdict::label)
        .collect();
        assert_eq!(
            labels,
            [
                "holds",
                "in shape only",
                "does not hold",
                "cannot be checked here"
            ]
        );
    }

    #[test]
    fn numbers_read_whole_to_one_decimal_or_to_three() {
        assert_eq!(number(42.0), "42");
        assert_eq!(number(-3.0), "-3");
        assert_eq!(number(999_999_999_999_999.0), "999999999999999");
        assert_eq!(number(1e15), "1000000000000000.0");
        assert_eq!(number(123.46), "123.5");
        assert_eq!(number(-123.46), "-123.5");
        assert_eq!(number(99.5), "99.500");
        assert_eq!(number(-0.1234), "-0.123");
    }

    #[test]
    fn a_ratio_never_divides_by_zero() {
        assert_eq!(ratio(3.0, 2.0), 1.5);
        assert_eq!(ratio(1.0, 0.0), 1.0 / f64::MIN_POSITIVE);
        assert_eq!(ratio(1.0, -2.0), 1.0 / f64::MIN_POSITIVE);
        assert_eq!(ratio(0.0, 0.0), 0.0);
    }

    #[test]
    fn no_points_are_missing_evidence() {
        let missing = || Evidence::Missing {
            reason: "why".into(),
        };
        assert_eq!(
            Evidence::pairs_or_missing(vec![], || "why".into()),
            missing()
        );
        assert_eq!(
            Evidence::series_or_missing(vec![], || "why".into()),
            missing()
        );
        let pairs = vec![("4".to_string(), 1.0, 2.0)];
        assert_eq!(
            Evidence::pairs_or_missing(pairs.clone(), || unreachable!()),
            Evidence::Pairs { points: pairs }
        );
        let series = vec![("4".to_string(), 1.0)];
        assert_eq!(
            Evidence::series_or_missing(series.clone(), || unreachable!()),
            Evidence::Series { points: series }
        );
    }

    /// What each criterion says it measured, word for word: the figures a reader checks a
    /// verdict by.
    #[test]
    fn each_criterion_says_what_it_measured() {
        let measured = |c: Criterion, e: Evidence| assess(claim(c, None), e).measured;
        let one = pairs(&[(4.0, 1.0, 1.0)]);
        assert_eq!(
            measured(Criterion::BelowAtEvery, pairs(&[(4.0, 1.0, 2.0)])),
            "below at the one point"
        );
        assert_eq!(
            measured(
                Criterion::BelowAtEvery,
                pairs(&[(4.0, 1.0, 2.0), (8.0, 1.0, 2.0)])
            ),
            "below at all 2 points"
        );
        assert_eq!(
            measured(
                Criterion::AtMostFactor { factor: 1.1 },
                pairs(&[(4.0, 2.0, 1.0)])
            ),
            "at most 1.1 times at 0 of 1 points; not at: 2 vs 1 at 4"
        );
        assert_eq!(
            measured(
                Criterion::RatioBandAtEvery {
                    low: 0.8,
                    high: 1.25
                },
                one.clone()
            ),
            "within 0.8-1.25 times at the one point"
        );
        assert_eq!(
            measured(Criterion::EqualWithin { tolerance: 0.05 }, one),
            "within 5% at the one point"
        );
        assert_eq!(
            measured(
                Criterion::Flat { factor: 1.5 },
                series(&[(1.0, 2.0), (2.0, 3.0)])
            ),
            "from 2 to 3: a factor 1.500 (at most 1.5 holds)"
        );
        assert_eq!(
            measured(Criterion::Rises, series(&[(1.0, 2.0), (2.0, 3.5)])),
            "2 at 1 -> 3.500 at 2"
        );
        assert_eq!(
            measured(Criterion::Increasing, series(&[(1.0, 2.0), (2.0, 1.0)])),
            "2 at 1, 1 at 2; not rising: 2 at 1 then 1 at 2"
        );
        assert_eq!(
            measured(Criterion::Decreasing, series(&[(1.0, 2.0), (2.0, 1.0)])),
            "2 at 1, 1 at 2"
        );
        assert_eq!(
            measured(
                Criterion::AtLeast { value: 1.0 },
                Evidence::Value {
                    ours: 1.5,
                    paper: 2.0
                }
            ),
            "ours 1.500 (at least 1 holds; the paper's 2)"
        );
        assert_eq!(
            measured(
                Criterion::RatioBand {
                    low: 0.5,
                    high: 2.0
                },
                Evidence::Value {
                    ours: 150.0,
                    paper: 100.0
                }
            ),
            "ours 150 against the paper's 100: ratio 1.500 (band 0.5-2)"
        );
        assert_eq!(
            measured(
                Criterion::ApproachesFromAbove,
                pairs(&[(4.0, 150.0, 100.0), (64.0, 110.0, 100.0)])
            ),
            "ratio 1.500 at 4 -> 1.100 at 64"
        );
        assert_eq!(
            measured(
                Criterion::ApproachesFromAbove,
                pairs(&[(4.0, 90.0, 100.0), (64.0, 95.0, 100.0)])
            ),
            "ratio 0.900 at 4 -> 0.950 at 64; the premise fails: the subject starts at or \
             below the reference (ratio 0.900)"
        );
    }

    /// Each criterion at its bound, with too few points, and given evidence of the wrong
    /// kind.
    #[test]
    fn every_criterion_at_its_bounds() {
        use Criterion::*;
        let flat = Flat { factor: 2.0 };
        assert_eq!(
            verdict(flat, series(&[(1.0, 2.0), (2.0, 4.0)])),
            Verdict::Holds
        );
        let at_one = pairs(&[(4.0, 100.0, 100.0), (8.0, 100.0, 100.0)]);
        let a = assess(claim(ApproachesFromAbove, None), at_one);
        assert!(a.measured.contains("the premise fails"), "{}", a.measured);
        // As far from 1 at the end (below) as at the start (above): not nearer.
        let mirrored = pairs(&[(4.0, 150.0, 100.0), (8.0, 50.0, 100.0)]);
        assert_eq!(verdict(ApproachesFromAbove, mirrored), Verdict::DoesNotHold);
        let nearer = pairs(&[(4.0, 150.0, 100.0), (8.0, 51.0, 100.0)]);
        assert_eq!(verdict(ApproachesFromAbove, nearer), Verdict::Holds);
        assert_eq!(
            verdict(Decreasing, series(&[(1.0, 2.0), (2.0, 2.0)])),
            Verdict::DoesNotHold
        );
        let level = series(&[(1.0, 2.0), (2.0, 3.0), (4.0, 2.0)]);
        assert_eq!(verdict(Rises, level.clone()), Verdict::DoesNotHold);
        assert_eq!(verdict(Falls, level), Verdict::DoesNotHold);
        let exactly = Evidence::Value {
            ours: 1.0,
            paper: 2.0,
        };
        assert_eq!(verdict(AtLeast { value: 1.0 }, exactly), Verdict::Holds);
        let cannot = |c: Criterion, e: Evidence| match verdict(c, e) {
            Verdict::CannotCheck(why) => why,
            other => panic!("{c:?}: {other:?}"),
        };
        let one_pair = pairs(&[(4.0, 150.0, 100.0)]);
        assert_eq!(
            cannot(ApproachesFromAbove, one_pair),
            "a trend needs two points; one was measured"
        );
        assert_eq!(
            cannot(ApproachesFromAbove, pairs(&[])),
            "no points measured"
        );
        assert_eq!(
            cannot(Increasing, series(&[(1.0, 1.0)])),
            "a trend needs two points or more"
        );
        assert_eq!(
            cannot(Rises, series(&[(1.0, 1.0)])),
            "a trend needs two points; one was measured"
        );
        for c in [Flat { factor: 2.0 }, Rises, MinimumAt { at: "1" }] {
            assert_eq!(cannot(c, series(&[])), "no points measured", "{c:?}");
        }
        let value = Evidence::Value {
            ours: 1.0,
            paper: 1.0,
        };
        let mismatched = [
            (BelowAtEvery, value.clone(), "pairs"),
            (AtMostFactor { factor: 1.0 }, value.clone(), "pairs"),
            (
                RatioBandAtEvery {
                    low: 0.0,
                    high: 1.0,
                },
                value.clone(),
                "pairs",
            ),
            (EqualWithin { tolerance: 0.0 }, value.clone(), "pairs"),
            (ApproachesFromAbove, value.clone(), "pairs"),
            (Flat { factor: 1.0 }, value.clone(), "a series"),
            (Falls, value.clone(), "a series"),
            (Decreasing, value, "a series"),
            (MinimumAt { at: "1" }, pairs(&[(1.0, 1.0, 1.0)]), "a series"),
            (
                AtLeast { value: 1.0 },
                series(&[(1.0, 1.0)]),
                "a value and the paper's",
            ),
            (
                RatioBand {
                    low: 0.0,
                    high: 1.0,
                },
                pairs(&[(1.0, 1.0, 1.0)]),
                "a value and the paper's",
            ),
        ];
        for (c, e, needs) in mismatched {
            let why = cannot(c, e);
            assert!(
                why.starts_with(&format!("the criterion needs {needs}, the evidence is ")),
                "{c:?}: {why}"
            );
        }
    }

    /// The "before" tally the index page shows is the one docs/reproduction/claims.md
    /// records for the audit's commit.
    #[test]
    fn the_audit_baseline_is_the_one_the_docs_record() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/reproduction/claims.md"
        );
        let text = std::fs::read_to_string(path).expect("docs/reproduction/claims.md");
        assert!(text.contains(&format!("(commit {AUDIT_COMMIT})")));
        for (paper, row) in [
            (Paper::Fast, "| FAST |"),
            (Paper::Vet, "| VET and EMT |"),
            (Paper::Grr, "| GRR |"),
            (Paper::Fatlist, "| fat lists |"),
            (Paper::Flashmodel, "| flash models |"),
        ] {
            let line = text
                .lines()
                .find(|l| l.starts_with(row))
                .unwrap_or_else(|| panic!("no row {row}"));
            let before = line[row.len()..].split('|').next().expect("a column");
            let counts: Vec<usize> = before
                .split(" of ")
                .next()
                .expect("counts")
                .split('/')
                .map(|n| n.trim().parse().expect("a count"))
                .collect();
            let t = audit_baseline(paper);
            assert_eq!(
                counts,
                [t.holds, t.in_shape, t.does_not_hold, t.cannot_check],
                "{paper}"
            );
        }
    }

    #[test]
    fn an_assessment_serializes_with_its_claim_and_verdict() {
        let a = assess(
            claim(Criterion::Flat { factor: 1.1 }, None),
            Evidence::Missing {
                reason: "not run".into(),
            },
        );
        let json = serde_json::to_value(&a).expect("json");
        assert_eq!(json["id"], "test.claim");
        assert_eq!(json["paper"], "fast");
        assert_eq!(json["verdict"], "cannot-check");
        assert_eq!(json["reason"], "not run");
        assert_eq!(json["criterion"]["kind"], "flat");
    }
}
