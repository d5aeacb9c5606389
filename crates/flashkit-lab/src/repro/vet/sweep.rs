//! What drives the extent count of Fig. 15 (not in the paper).
//!
//! Our Table-1-shaped workloads (`paper::table1_workload`) need 2 to 8 times the
//! paper's share of PMT. An extent map's memory is its number of live extents, set by how many
//! separate places the writes land. The generated workloads' properties are guesses; each
//! below is moved on its own, the others as generated, over the mappings alone
//! ([`replay_mapping_only`]: the host's writes, no garbage collection):
//!
//! - **sequential share**: a share of the writes starts where the previous write ended
//!   (the paper's traces are block I/O of file systems, whose writes run on);
//! - **cold span**: the writes outside the hot region (a tenth to a fifth of them) land in
//!   this share of the cold space instead of all of it (the paper: the traces "touched only a
//!   few portions of each of the spaces");
//! - **scale**: the workload generated at a multiple of the reproduction's scale (space and
//!   requests both);
//! - **hot region**: the hot region (where 80-95% of the requests go) a fraction of its
//!   generated size, the same share of requests going there;
//! - **hot region, cold writes in 1% of the cold space**: the two properties the paper's
//!   words describe ("touched only a few portions of each of the spaces") together.
//!
//! The criterion, fixed before the runs: a point agrees with Fig. 15 for its workload when
//! VET BIS PF's and EMT's shares of PMT are each within a factor 2 of the paper's.

use super::paper::{PUBLISHED, Published, table1_workload};
use crate::repro::{Chart, Figure, LabError, line_chart};
use flashkit_core::{SimRng, SimRngExt, sub_seed};
use flashkit_ftl::{Emt, InsertScheme, Mapping, Pf, Vet};
use flashkit_report::Table;
use flashkit_report::plot::{Axis, Series};
use flashkit_sim::replay_mapping_only;
use flashkit_trace::workload::{Pattern, Workload};
use flashkit_trace::{Op, Request};
use rand::Rng;
use serde::Serialize;
use std::fmt::Write;

/// Sequential shares swept, per mille of the writes.
pub const SEQUENTIAL: [u32; 5] = [0, 250, 500, 750, 900];
/// Cold spans swept, per mille of the cold space.
pub const COLD_SPAN: [u32; 4] = [1000, 250, 50, 10];
/// Scales swept, as multiples of the reproduction's scale (capped at 1).
pub const SCALE_FACTORS: [f64; 4] = [0.25, 0.5, 1.0, 2.0];
/// Hot-region sizes swept, as fractions of each workload's own.
pub const HOT_FACTORS: [f64; 4] = [1.0, 0.25, 0.0625, 0.015625];
/// A share agrees with the paper's when within this factor of it.
pub const AGREEMENT_FACTOR: f64 = 2.0;

/// Which property a point moves.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis3 {
    /// Sequential share, per mille.
    Sequential,
    /// Cold span, per mille.
    ColdSpan,
    /// Scale, as a multiple of the reproduction's.
    Scale,
    /// The hot region's size, as a fraction of the workload's own.
    HotRegion,
    /// The same, with the cold writes in 1% of the cold space.
    HotRegionNarrowCold,
}

impl Axis3 {
    fn title(self) -> &'static str {
        match self {
            Axis3::Sequential => "sequential share: writes that start where the last one ended",
            Axis3::ColdSpan => "cold span: the share of the cold space the cold writes land in",
            Axis3::Scale => "scale: space and requests, as a multiple of this run's scale",
            Axis3::HotRegion => "hot region: its size as a fraction of the workload's own",
            Axis3::HotRegionNarrowCold => {
                "hot region as a fraction of the workload's own, the cold writes in 1% of the \
                 cold space"
            }
        }
    }

    fn file(self) -> &'static str {
        match self {
            Axis3::Sequential => "fig15-sweep-sequential.svg",
            Axis3::ColdSpan => "fig15-sweep-cold-span.svg",
            Axis3::Scale => "fig15-sweep-scale.svg",
            Axis3::HotRegion => "fig15-sweep-hot-region.svg",
            Axis3::HotRegionNarrowCold => "fig15-sweep-hot-region-narrow-cold.svg",
        }
    }

    fn x_label(self) -> &'static str {
        match self {
            Axis3::Sequential => "sequential share of the writes (%)",
            Axis3::ColdSpan => "share of the cold space written (%)",
            Axis3::Scale => "scale (fraction of the paper's trace)",
            Axis3::HotRegion | Axis3::HotRegionNarrowCold => {
                "hot region (fraction of the workload's own)"
            }
        }
    }
}

/// The sweeps, in the order they print.
const AXES: [Axis3; 5] = [
    Axis3::Sequential,
    Axis3::ColdSpan,
    Axis3::Scale,
    Axis3::HotRegion,
    Axis3::HotRegionNarrowCold,
];
/// The cold span of [`Axis3::HotRegionNarrowCold`].
const NARROW_COLD: f64 = 0.01;

/// One measured point.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRow {
    /// The paper's workload (Table 1) the point starts from.
    pub workload: &'static str,
    /// The property moved.
    pub axis: Axis3,
    /// Its value: per mille (sequential share, cold span), the scale itself, or the hot
    /// region's fraction.
    pub value: f64,
    /// VET BIS PF's packed memory as a percentage of PMT's.
    pub vet_percent_of_pmt: f64,
    /// EMT's.
    pub emt_percent_of_pmt: f64,
    /// The paper's (VET, EMT) percentages (Fig. 15).
    pub paper_percent_of_pmt: (f64, f64),
    /// Writes replayed.
    pub writes: u64,
}

impl SweepRow {
    /// Both shares within [`AGREEMENT_FACTOR`] of the paper's.
    pub fn agrees(&self) -> bool {
        let within = |ours: f64, paper: f64| {
            ours <= paper * AGREEMENT_FACTOR && ours >= paper / AGREEMENT_FACTOR
        };
        within(self.vet_percent_of_pmt, self.paper_percent_of_pmt.0)
            && within(self.emt_percent_of_pmt, self.paper_percent_of_pmt.1)
    }
}

/// A Table-1 workload's requests with one property moved: writes continuing the last one
/// with probability `sequential`, cold writes squeezed into `cold_span` of the cold space.
struct Shaped {
    inner: Workload,
    rng: SimRng,
    sequential: f64,
    cold_span: f64,
    hot_end: u64,
    span: u64,
    align: u64,
    next: u64,
}

impl Iterator for Shaped {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        let mut request = self.inner.next()?;
        let end = |r: &Request| r.offset + u64::from(r.size);
        if self.cold_span < 1.0 && request.offset >= self.hot_end {
            let cold = ((request.offset - self.hot_end) as f64 * self.cold_span) as u64;
            request.offset = self.hot_end + cold / self.align * self.align;
        }
        if request.op == Op::Write {
            if self.sequential > 0.0
                && self.rng.random_bool(self.sequential)
                && self.next + u64::from(request.size) <= self.span
            {
                request.offset = self.next;
            }
            self.next = end(&request);
        }
        if end(&request) > self.span {
            request.offset = self.span - u64::from(request.size);
        }
        Some(request)
    }
}

/// Memory shares of PMT of VET BIS PF and EMT after `published`'s workload at `scale`,
/// shaped; and the writes replayed.
fn measure(
    published: &Published,
    scale: f64,
    sequential: f64,
    cold_span: f64,
    hot_factor: f64,
    seed: u64,
) -> Result<(f64, f64, u64), LabError> {
    let mut spec = table1_workload(published, scale);
    if let Pattern::HotCold { space_percent, .. } = &mut spec.pattern {
        *space_percent *= hot_factor;
    }
    let hot_end = match spec.pattern {
        Pattern::HotCold { space_percent, .. } => {
            (spec.span_bytes as f64 * space_percent / 100.0) as u64
        }
        _ => 0,
    };
    let span = spec.span_bytes;
    let align = u64::from(spec.align_bytes);
    let pages = (span / 4096) as u32;
    let requests = || -> Result<Shaped, LabError> {
        let label = format!("vet-sweep/{}", published.name);
        Ok(Shaped {
            inner: Workload::new(spec.clone(), sub_seed(seed, &label))
                .map_err(|e| LabError::Config(e.into()))?,
            rng: SimRng::for_stream(seed, &format!("{label}/shape")),
            sequential,
            cold_span,
            hot_end,
            span,
            align,
            next: 0,
        })
    };
    let mut vet = Vet::<Pf>::new(pages, InsertScheme::Bis);
    let report = replay_mapping_only(&mut vet, requests()?.map(Ok), pages, 4096, 128)
        .map_err(LabError::from_sim)?;
    let mut emt = Emt::new(pages);
    replay_mapping_only(&mut emt, requests()?.map(Ok), pages, 4096, 128)
        .map_err(LabError::from_sim)?;
    let pmt = f64::from(pages) * 4.0;
    let percent = |bytes: u64| 100.0 * bytes as f64 / pmt;
    Ok((
        percent(vet.memory().packed_bytes),
        percent(emt.memory().packed_bytes),
        report.writes,
    ))
}

/// Every point of the three sweeps, for the paper's four workloads, around `scale`.
pub fn run(scale: f64, seed: u64) -> Result<Vec<SweepRow>, LabError> {
    let mut rows = Vec::new();
    for published in &PUBLISHED {
        let mut push = |axis, value, scale, sequential, cold, hot| -> Result<(), LabError> {
            let (vet, emt, writes) = measure(published, scale, sequential, cold, hot, seed)?;
            rows.push(SweepRow {
                workload: published.name,
                axis,
                value,
                vet_percent_of_pmt: vet,
                emt_percent_of_pmt: emt,
                paper_percent_of_pmt: published.of_pmt,
                writes,
            });
            Ok(())
        };
        for share in SEQUENTIAL {
            let value = f64::from(share);
            push(Axis3::Sequential, value, scale, value / 1000.0, 1.0, 1.0)?;
        }
        for span in COLD_SPAN {
            let value = f64::from(span);
            push(Axis3::ColdSpan, value, scale, 0.0, value / 1000.0, 1.0)?;
        }
        for factor in SCALE_FACTORS {
            let at = (scale * factor).min(1.0);
            push(Axis3::Scale, at, at, 0.0, 1.0, 1.0)?;
        }
        for factor in HOT_FACTORS {
            push(Axis3::HotRegion, factor, scale, 0.0, 1.0, factor)?;
        }
        for factor in HOT_FACTORS {
            let axis = Axis3::HotRegionNarrowCold;
            push(axis, factor, scale, 0.0, NARROW_COLD, factor)?;
        }
    }
    Ok(rows)
}

/// The printed tables, one a sweep, and a line saying where the shares agree with Fig. 15.
pub fn render(rows: &[SweepRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for axis in AXES {
        let mut table = Table::new([
            "workload",
            "value",
            "writes",
            "VET % PMT",
            "EMT % PMT",
            "paper VET / EMT",
            "within 2x of the paper's",
        ]);
        for r in rows.iter().filter(|r| r.axis == axis) {
            table.push([
                r.workload.to_string(),
                value_text(axis, r.value),
                r.writes.to_string(),
                format!("{:.2}", r.vet_percent_of_pmt),
                format!("{:.2}", r.emt_percent_of_pmt),
                format!(
                    "{} / {}",
                    r.paper_percent_of_pmt.0, r.paper_percent_of_pmt.1
                ),
                if r.agrees() { "yes" } else { "no" }.into(),
            ]);
        }
        let _ = writeln!(
            out,
            "What drives Fig. 15's memory (not in the paper): {}; the mappings alone, after \
             the writes\n{}",
            axis.title(),
            table.render()
        );
    }
    let agree: Vec<String> = rows
        .iter()
        .filter(|r| r.agrees())
        .map(|r| format!("{} at {}", r.workload, value_text(r.axis, r.value)))
        .collect();
    let _ = writeln!(
        out,
        "Within a factor 2 of Fig. 15 for both VET and EMT: {} of {} points{}\n",
        agree.len(),
        rows.len(),
        if agree.is_empty() {
            String::new()
        } else {
            format!(" ({})", agree.join(", "))
        }
    );
    out
}

fn value_text(axis: Axis3, value: f64) -> String {
    match axis {
        Axis3::Sequential => format!("{}% sequential", value / 10.0),
        Axis3::ColdSpan => format!("cold span {}%", value / 10.0),
        Axis3::Scale => format!("scale 1/{:.0}", 1.0 / value),
        Axis3::HotRegion => format!("hot region x 1/{:.0}", 1.0 / value),
        Axis3::HotRegionNarrowCold => {
            format!("hot region x 1/{:.0}, cold span 1%", 1.0 / value)
        }
    }
}

/// One chart a sweep: VET's and EMT's shares of PMT against the value, a line per workload
/// and mapping.
pub fn figures(rows: &[SweepRow]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for axis in AXES {
        let mut series = Vec::new();
        for published in &PUBLISHED {
            for (mapping, pick) in [
                (
                    "VET",
                    (|r: &SweepRow| r.vet_percent_of_pmt) as fn(&SweepRow) -> f64,
                ),
                ("EMT", |r: &SweepRow| r.emt_percent_of_pmt),
            ] {
                let points: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| r.axis == axis && r.workload == published.name)
                    .map(|r| {
                        let x = match axis {
                            Axis3::Scale | Axis3::HotRegion | Axis3::HotRegionNarrowCold => r.value,
                            _ => r.value / 10.0,
                        };
                        (x, pick(r))
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(Series {
                        name: format!("{} {mapping}", published.name),
                        points,
                    });
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let x = match axis {
            Axis3::Scale | Axis3::HotRegion | Axis3::HotRegionNarrowCold => {
                Axis::log(axis.x_label())
            }
            _ => Axis::linear(axis.x_label()),
        };
        figures.push(Figure {
            name: axis.file().into(),
            chart: Chart::Line(line_chart(
                &format!("What drives Fig. 15: {} (not in the paper)", axis.title()),
                x,
                "memory, % of PMT",
                series,
            )),
        });
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The criterion: both shares within a factor 2 of the paper's, bounds included.
    #[test]
    fn a_point_agrees_when_both_shares_are_within_a_factor_two() {
        let row = |vet, emt| SweepRow {
            workload: "wdev",
            axis: Axis3::Sequential,
            value: 0.0,
            vet_percent_of_pmt: vet,
            emt_percent_of_pmt: emt,
            paper_percent_of_pmt: (2.0, 1.0),
            writes: 1,
        };
        assert!(row(2.0, 1.0).agrees());
        assert!(row(4.0, 0.5).agrees());
        assert!(!row(4.1, 1.0).agrees());
        assert!(!row(2.0, 0.49).agrees());
    }

    /// The shaping does what it says: more sequential writes, a narrower cold span or a
    /// smaller hot region give fewer extents; the same seed gives the same figures.
    #[test]
    fn sequential_writes_and_a_narrow_cold_span_need_fewer_extents() {
        let wdev = &PUBLISHED[2];
        let scale = 1.0 / 1024.0;
        let (vet0, emt0, writes) = measure(wdev, scale, 0.0, 1.0, 1.0, 1).expect("runs");
        assert!(writes > 500, "{writes}");
        let (vet_seq, emt_seq, _) = measure(wdev, scale, 0.9, 1.0, 1.0, 1).expect("runs");
        assert!(vet_seq < vet0 && emt_seq < emt0, "{vet_seq} {emt_seq}");
        let (vet_cold, emt_cold, _) = measure(wdev, scale, 0.0, 0.01, 1.0, 1).expect("runs");
        assert!(vet_cold < vet0 && emt_cold < emt0, "{vet_cold} {emt_cold}");
        let (vet_hot, emt_hot, _) = measure(wdev, scale, 0.0, 1.0, 0.0625, 1).expect("runs");
        assert!(vet_hot < vet0 && emt_hot < emt0, "{vet_hot} {emt_hot}");
        let again = measure(wdev, scale, 0.9, 1.0, 1.0, 1).expect("runs");
        assert_eq!(again, (vet_seq, emt_seq, writes), "same seed, same result");
    }
}
