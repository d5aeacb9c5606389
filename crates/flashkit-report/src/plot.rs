//! Charts as SVG.
//!
//! A [`LineChart`] draws one line per [`Series`] (a stepped line for CDFs); a [`BarChart`]
//! one bar per label. Every axis carries a label with its unit; a legend names the series;
//! each series has its own colour *and* marker shape, so a chart stays readable printed in
//! grayscale. [`Scale::auto`] picks a log axis when positive data spans two decades or more.

use plotters::coord::Shift;
use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

/// Why a chart could not be drawn.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlotError {
    /// There is nothing to draw.
    #[error("chart {0:?} has no data points")]
    Empty(String),
    /// The plotting backend failed.
    #[error("chart {title:?}: {message}")]
    Backend {
        /// The chart.
        title: String,
        /// The backend's message.
        message: String,
    },
}

/// Axis scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Base-10 logarithmic (positive values only).
    Log,
}

impl Scale {
    /// Log when every value is positive and they span at least two decades.
    pub fn auto(values: impl IntoIterator<Item = f64>) -> Scale {
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            if v <= 0.0 || !v.is_finite() {
                return Scale::Linear;
            }
            min = min.min(v);
            max = max.max(v);
        }
        if min.is_finite() && max / min >= 100.0 {
            Scale::Log
        } else {
            Scale::Linear
        }
    }
}

/// An axis: its label (with the unit, e.g. "erases" or "mapping memory (bytes)") and scale.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Axis {
    /// Label, including the unit.
    pub label: String,
    /// Scale.
    pub scale: Scale,
}

impl Axis {
    /// A linear axis.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
        }
    }

    /// A log axis.
    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log,
        }
    }
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// Where the legend goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum Legend {
    /// The corner whose legend box would hide the least of the lines (their markers count
    /// most), trying first the upper right when the lines fall from left to right and the
    /// upper left when they rise.
    #[default]
    Auto,
    /// Upper left corner.
    UpperLeft,
    /// Upper right corner.
    UpperRight,
    /// Lower left corner.
    LowerLeft,
    /// Lower right corner.
    LowerRight,
}

/// A line chart.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Lines.
    pub series: Vec<Series>,
    /// Draw each series as a staircase (for CDFs) instead of straight segments with markers.
    pub step: bool,
    /// Legend placement.
    pub legend: Legend,
}

/// A bar chart.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BarChart {
    /// Title.
    pub title: String,
    /// Vertical axis (the bars' values).
    pub y: Axis,
    /// Bars: label and value.
    pub bars: Vec<(String, f64)>,
}

/// A bar chart of groups: along the horizontal axis one group per label (a workload, say),
/// and in every group one bar per series (a scheme), coloured by series and named in the
/// legend. A series may leave a group without a bar (`None`), and on a log axis a value that
/// is not positive draws none either.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GroupedBarChart {
    /// Title.
    pub title: String,
    /// Vertical axis (the bars' values); a log axis draws bars up from its lower bound.
    pub y: Axis,
    /// Group labels, left to right.
    pub groups: Vec<String>,
    /// Series, each with one value per group.
    pub series: Vec<BarSeries>,
}

/// A [`GroupedBarChart`]'s figure in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BarLayout {
    width: u32,
    height: u32,
    /// The height of the area below the axis that holds the group labels.
    label_area: u32,
    /// Whether the group labels are written upwards.
    upright: bool,
}

/// One series of a [`GroupedBarChart`]: a legend entry and a value per group.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BarSeries {
    /// Legend entry.
    pub name: String,
    /// One value per group, in the chart's group order; `None` draws no bar.
    pub values: Vec<Option<f64>>,
}

/// Figure size in pixels.
pub const SIZE: (u32, u32) = (760, 460);

/// Tableau 10, a palette chosen to stay distinguishable for most colour vision.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn backend_error(title: &str, error: impl std::fmt::Display) -> PlotError {
    PlotError::Backend {
        title: title.to_string(),
        message: error.to_string(),
    }
}

/// The range a value (y) axis draws: on a linear scale it always holds zero, so that the
/// heights of two points compare as their values do (an axis from 598 to 632 would draw a
/// 5% gap as a fivefold one); a log scale has no zero and spans the data.
fn value_range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (lo, hi) = range(values, scale);
    match scale {
        Scale::Log => (lo, hi),
        Scale::Linear => (lo.min(0.0), hi.max(0.0)),
    }
}

/// A setting (x) range, padded when degenerate, that a scale can draw; a linear one starts
/// at zero when the values are positive and spread over more than a tenth of the largest.
fn range(values: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if scale == Scale::Log {
            (1.0, 10.0)
        } else {
            (0.0, 1.0)
        };
    }
    match scale {
        Scale::Log => {
            if hi <= lo {
                (lo / 2.0, hi * 2.0)
            } else {
                (lo / 1.2, hi * 1.2)
            }
        }
        Scale::Linear => {
            // Counts and ratios read best from zero when they are all positive.
            let lo = if lo > 0.0 && lo < hi * 0.9 { 0.0 } else { lo };
            let pad = if hi > lo {
                (hi - lo) * 0.05
            } else {
                hi.abs().max(1.0) * 0.5
            };
            (lo - if lo == 0.0 { 0.0 } else { pad }, hi + pad)
        }
    }
}

/// An axis's coordinate with its ticks chosen here rather than by plotters: plotters labels
/// only powers of ten on a log axis (one or two labels over a decade or two) and may label
/// a linear one in half steps of a setting that only takes whole values. Bold points carry
/// a label and a grid line, light points a faint grid line.
struct Ticked {
    coord: Coord,
    bold: Vec<f64>,
    light: Vec<f64>,
    /// How the labels at `bold` read.
    labels: Labels,
}

/// The plotters coordinate under a [`Ticked`] axis.
enum Coord {
    Linear(RangedCoordf64),
    Log(LogCoord<f64>),
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        match &self.coord {
            Coord::Linear(c) => c.map(value, limit),
            Coord::Log(c) => c.map(value, limit),
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        match &self.coord {
            Coord::Linear(c) => c.range(),
            Coord::Log(c) => c.range(),
        }
    }
}

/// The SI multiples a linear axis's labels may be written in.
const SI: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

impl Ticked {
    /// An axis over `(lo, hi)` (as [`range`] pads it), labelled at `at` when given (the few
    /// settings a chart was run at), else at round values.
    fn new(scale: Scale, (lo, hi): (f64, f64), at: Option<Vec<f64>>) -> Ticked {
        let (bold, light) = match scale {
            Scale::Linear => linear_ticks(lo, hi),
            Scale::Log => log_ticks(lo, hi),
        };
        let bold = at.unwrap_or(bold);
        let labels = match scale {
            Scale::Linear => Labels::linear(&bold),
            Scale::Log => Labels {
                unit: None,
                decimals: None,
            },
        };
        let coord = match scale {
            Scale::Linear => Coord::Linear((lo..hi).into()),
            Scale::Log => Coord::Log((lo..hi).log_scale().into()),
        };
        Ticked {
            coord,
            bold,
            light,
            labels,
        }
    }
}

/// How an axis's labels read.
#[derive(Clone, Copy)]
struct Labels {
    /// The SI multiple every label of a linear axis is written in (`1e3` for "k"), so that
    /// one axis never reads "800" beside "1k"; `None` on a log axis, whose labels each take
    /// their own.
    unit: Option<(f64, &'static str)>,
    /// Decimals of every label of a linear axis; `None` on a log axis, or where even six do
    /// not write the labels exactly (each label then takes its own). That happens only
    /// without a multiple: in one, every label is one or more, and six decimals write it to
    /// a millionth of itself, which [`Labels::linear`] counts as exact.
    decimals: Option<usize>,
}

impl Labels {
    /// The labels of a linear axis at `bold`: all in the largest SI multiple no nonzero
    /// label is below, with as many decimals as the finest of them needs (so "100.0k,
    /// 100.5k, 101.0k", never two labels rounded to the same text).
    fn linear(bold: &[f64]) -> Labels {
        let smallest = bold
            .iter()
            .map(|v| v.abs())
            .filter(|&v| v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let unit = SI.into_iter().find(|&(multiple, _)| smallest >= multiple);
        let multiple = unit.map_or(1.0, |u| u.0);
        let exact = |decimals: usize| {
            let scale = 10f64.powi(decimals as i32);
            bold.iter().all(|v| {
                let scaled = v / multiple * scale;
                (scaled - scaled.round()).abs() <= 1e-6 * scaled.abs().max(1.0)
            })
        };
        Labels {
            unit,
            decimals: (0..=6).find(|&d| exact(d)),
        }
    }

    /// A label's text.
    fn text(self, value: f64) -> String {
        let (multiple, suffix) = self.unit.unwrap_or((1.0, ""));
        match self.decimals {
            _ if value == 0.0 => "0".into(),
            Some(decimals) => format!("{:.*}{suffix}", decimals, value / multiple),
            None => tick(value),
        }
    }
}

/// Where a settings sweep's x axis is labelled: at the values it was run at, when there are
/// 2 to 10 of them spaced at least 7% of the axis apart (so that the labels do not run
/// into each other); `None` leaves the axis to round values.
fn setting_ticks(
    values: impl Iterator<Item = f64>,
    scale: Scale,
    (lo, hi): (f64, f64),
) -> Option<Vec<f64>> {
    let mut values: Vec<f64> = values
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    // The gap between two settings as a fraction of the axis.
    let gap = |a: f64, b: f64| match scale {
        Scale::Linear => (b - a) / (hi - lo),
        Scale::Log => (b / a).ln() / (hi / lo).ln(),
    };
    let spaced = values.windows(2).all(|w| gap(w[0], w[1]) >= 0.07);
    ((2..=10).contains(&values.len()) && spaced).then_some(values)
}

/// Round ticks for a linear axis over `(lo, hi)`: labels every 1, 2 or 5 times a power of
/// ten, about eight of them, and the light grid at a fifth (a quarter for 2) of that step.
fn linear_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let raw = (hi - lo) / 8.0;
    if !(raw > 0.0 && raw.is_finite()) {
        return (vec![lo], Vec::new());
    }
    let power = 10f64.powf(raw.log10().floor());
    let (mantissa, parts) = [(1.0, 5.0), (2.0, 4.0), (5.0, 5.0), (10.0, 5.0)]
        .into_iter()
        .find(|&(m, _)| m * power >= raw)
        .unwrap_or((10.0, 5.0));
    let step = mantissa * power;
    // Multiples of a step, each computed from its index so that no error accumulates (and
    // an end that is a multiple, 0.35 for 7 x 0.05, kept though its quotient is 6.99...).
    let multiples = |step: f64| -> Vec<f64> {
        let first = (lo / step - 1e-9).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        (first..=last).map(|i| i as f64 * step).collect()
    };
    (multiples(step), multiples(step / parts))
}

/// Ticks for a log axis over `(lo, hi)`: labels at 1, 2 and 5 times the powers of ten while
/// it spans up to three and a half decades (every integer multiple when that leaves fewer than two, its
/// ends when even those do), at the powers of ten beyond (every other one or more past eight
/// decades); the light grid at every integer multiple up to six decades.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let decades = (hi / lo).log10();
    let multiples = |steps: &[f64], every: i32| -> Vec<f64> {
        let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        (first..=last)
            .filter(|e| e.rem_euclid(every) == 0)
            .flat_map(|e| steps.iter().map(move |s| s * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let every_integer = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let mut bold = if decades <= 3.5 {
        let labels = multiples(&[1.0, 2.0, 5.0], 1);
        if labels.len() >= 2 {
            labels
        } else {
            multiples(&every_integer, 1)
        }
    } else {
        multiples(&[1.0], (decades / 8.0).ceil() as i32)
    };
    if bold.len() < 2 {
        // Each end rounded inwards to two significant digits (nudged so that an end with
        // only two stays itself).
        let two_digits = |v: f64, round: fn(f64) -> f64, nudge: f64| {
            let exponent = v.log10().floor() as i32 - 1;
            let digits = round(v / 10f64.powi(exponent) + nudge);
            if exponent < 0 {
                digits / 10f64.powi(-exponent)
            } else {
                digits * 10f64.powi(exponent)
            }
        };
        bold = vec![
            two_digits(lo, f64::ceil, -1e-9),
            two_digits(hi, f64::floor, 1e-9),
        ];
    }
    let light = if decades <= 6.0 {
        multiples(&every_integer, 1)
    } else {
        multiples(&[1.0], 1)
    };
    (bold, light)
}

impl LineChart {
    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String, PlotError> {
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(PlotError::Empty(self.title.clone()));
        }
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
            root.fill(&WHITE)
                .map_err(|e| backend_error(&self.title, e))?;
            let xs = self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0));
            let ys = self
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1));
            let x = range(xs, self.x.scale);
            let y = value_range(ys, self.y.scale);
            let legend = self.legend_position(x, y);
            let at = setting_ticks(
                self.series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0)),
                self.x.scale,
                x,
            );
            self.draw(
                &root,
                Ticked::new(self.x.scale, x, at),
                Ticked::new(self.y.scale, y, None),
                legend,
            )?;
            root.present().map_err(|e| backend_error(&self.title, e))?;
        }
        Ok(out)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        x: Ticked,
        y: Ticked,
        legend: SeriesLabelPosition,
    ) -> Result<(), PlotError> {
        let (x_labels, y_labels) = (x.labels, y.labels);
        let (x_label, y_label) = (|v: &f64| x_labels.text(*v), |v: &f64| y_labels.text(*v));
        let fail = |e: &dyn std::fmt::Display| backend_error(&self.title, e);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(76)
            .build_cartesian_2d(x, y)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc(&self.x.label)
            .y_desc(&self.y.label)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| fail(&e))?;
        for (i, series) in self.series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let style = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            let points = if self.step {
                staircase(&series.points)
            } else {
                series.points.clone()
            };
            chart
                .draw_series(LineSeries::new(points, style))
                .map_err(|e| fail(&e))?
                .label(&series.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], style));
            if !self.step {
                draw_markers(&mut chart, &series.points, i, color).map_err(|e| fail(&e))?;
            }
        }
        chart
            .configure_series_labels()
            .position(legend)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| fail(&e))?;
        Ok(())
    }
}

/// The plot area of a line chart in pixels: [`SIZE`] less the margins, the caption and the
/// axes' label areas. A legend entry is about 17 px high and 7 px a character wide after
/// its 50 px sample line.
const PLOT_AREA: (f64, f64) = (660.0, 360.0);

impl LineChart {
    /// Where the legend goes, the axes spanning `x` and `y` (as [`range`] pads them).
    fn legend_position(&self, x: (f64, f64), y: (f64, f64)) -> SeriesLabelPosition {
        match self.legend_corner(x, y) {
            Legend::UpperLeft => SeriesLabelPosition::UpperLeft,
            Legend::LowerLeft => SeriesLabelPosition::LowerLeft,
            Legend::LowerRight => SeriesLabelPosition::LowerRight,
            Legend::UpperRight | Legend::Auto => SeriesLabelPosition::UpperRight,
        }
    }

    /// The corner [`Legend::Auto`] stands for: the one whose legend box covers the least of
    /// the lines, sampled along their segments (weight 1) and at their markers (weight 8),
    /// the box grown by a margin that keeps markers clear of its edge. Ties go to the
    /// corner the lines' trend leaves empty (upper left when they rise, upper right when
    /// they fall), then to the other upper corner.
    fn legend_corner(&self, x: (f64, f64), y: (f64, f64)) -> Legend {
        if self.legend != Legend::Auto {
            return self.legend;
        }
        let samples = self.line_samples(x, y);
        let legend = self.legend_box();
        let rising = self
            .series
            .iter()
            .filter(|s| s.points.len() >= 2)
            .map(|s| s.points[s.points.len() - 1].1 - s.points[0].1)
            .sum::<f64>()
            > 0.0;
        let order = if rising {
            [
                Legend::UpperLeft,
                Legend::UpperRight,
                Legend::LowerRight,
                Legend::LowerLeft,
            ]
        } else {
            [
                Legend::UpperRight,
                Legend::UpperLeft,
                Legend::LowerLeft,
                Legend::LowerRight,
            ]
        };
        // `min_by_key` keeps the first of equals: the order above breaks ties.
        order
            .into_iter()
            .min_by_key(|&corner| covered(&samples, corner, legend))
            .unwrap_or(Legend::UpperRight)
    }

    /// The legend box's width and height as fractions of the plot area, grown by a margin
    /// that keeps markers clear of its edge.
    fn legend_box(&self) -> (f64, f64) {
        let chars = self.series.iter().map(|s| s.name.chars().count()).max();
        let width = (chars.unwrap_or(0) * 7 + 60) as f64 / PLOT_AREA.0 + 0.03;
        let height = (self.series.len() * 17 + 24) as f64 / PLOT_AREA.1 + 0.05;
        (width, height)
    }

    /// The lines as weighted samples `(x, y, weight)` in the plot area's unit square (the
    /// axes spanning `x` and `y`): each marker weight 8, seven points along each segment
    /// weight 1.
    fn line_samples(&self, x: (f64, f64), y: (f64, f64)) -> Vec<(f64, f64, u32)> {
        let unit = |v: f64, (lo, hi): (f64, f64), scale: Scale| match scale {
            Scale::Linear => (v - lo) / (hi - lo),
            Scale::Log => (v.log10() - lo.log10()) / (hi.log10() - lo.log10()),
        };
        let drawable = |v: f64, scale: Scale| v.is_finite() && (scale == Scale::Linear || v > 0.0);
        let mut samples: Vec<(f64, f64, u32)> = Vec::new();
        for series in &self.series {
            let points: Vec<(f64, f64)> = if self.step {
                staircase(&series.points)
            } else {
                series.points.clone()
            };
            let placed: Vec<(f64, f64)> = points
                .iter()
                .filter(|p| drawable(p.0, self.x.scale) && drawable(p.1, self.y.scale))
                .map(|&(a, b)| (unit(a, x, self.x.scale), unit(b, y, self.y.scale)))
                .collect();
            if !self.step {
                samples.extend(placed.iter().map(|&(a, b)| (a, b, 8)));
            }
            for pair in placed.windows(2) {
                let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                samples.extend((1..8).map(|i| {
                    let t = f64::from(i) / 8.0;
                    (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, 1)
                }));
            }
        }
        samples
    }
}

/// The weight of the `samples` a legend box of `(width, height)` (fractions of the plot
/// area) covers in `corner`.
fn covered(samples: &[(f64, f64, u32)], corner: Legend, (width, height): (f64, f64)) -> u32 {
    let (left, lower) = match corner {
        Legend::UpperLeft => (true, false),
        Legend::LowerLeft => (true, true),
        Legend::LowerRight => (false, true),
        Legend::UpperRight | Legend::Auto => (false, false),
    };
    samples
        .iter()
        .filter(|&&(a, b, _)| {
            (if left { a <= width } else { a >= 1.0 - width })
                && (if lower {
                    b <= height
                } else {
                    b >= 1.0 - height
                })
        })
        .map(|s| s.2)
        .sum()
}

/// A tick label: integers without decimals, large values with SI suffixes, small ones with
/// just enough digits.
pub fn tick(value: f64) -> String {
    let abs = value.abs();
    if value == 0.0 {
        return "0".into();
    }
    for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if abs >= scale * 10.0 || (abs >= scale && (value / scale).fract() == 0.0) {
            return format!("{}{suffix}", trim(value / scale));
        }
    }
    trim(value)
}

fn trim(value: f64) -> String {
    if value.abs() < 1e-3 {
        // 1e-5 rather than "0" on a log axis of small fractions.
        let text = format!("{value:.0e}");
        return text.replace("e-0", "e-");
    }
    let text = if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Markers by series index: circle, triangle, cross, square, cycling.
fn draw_markers<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    points: &[(f64, f64)],
    index: usize,
    color: RGBColor,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = ShapeStyle {
        color: color.to_rgba(),
        filled: index.is_multiple_of(2),
        stroke_width: 2,
    };
    let points = points.iter().copied();
    match (index / PALETTE.len() + index) % 4 {
        0 => chart
            .draw_series(points.map(|p| Circle::new(p, 4, style)))
            .map(|_| ()),
        1 => chart
            .draw_series(points.map(|p| TriangleMarker::new(p, 5, style)))
            .map(|_| ()),
        2 => chart
            .draw_series(points.map(|p| Cross::new(p, 4, style)))
            .map(|_| ()),
        _ => chart
            .draw_series(
                points.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], style)),
            )
            .map(|_| ()),
    }
}

/// Points of a right-continuous staircase through `points` (x sorted).
fn staircase(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if i > 0 {
            out.push((x, points[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

impl BarChart {
    /// The chart as an SVG document: a [`GroupedBarChart`] of one unnamed series, so one
    /// colour and no legend.
    pub fn svg(&self) -> Result<String, PlotError> {
        GroupedBarChart {
            title: self.title.clone(),
            y: self.y.clone(),
            groups: self.bars.iter().map(|b| b.0.clone()).collect(),
            series: vec![BarSeries {
                name: String::new(),
                values: self.bars.iter().map(|b| Some(b.1)).collect(),
            }],
        }
        .svg()
    }
}

impl GroupedBarChart {
    /// The chart as an SVG document. The figure widens with the number of bars, and group
    /// labels too long for their group are written upwards below it.
    pub fn svg(&self) -> Result<String, PlotError> {
        let Some((base, lo, hi)) = self.value_axis().filter(|_| !self.groups.is_empty()) else {
            return Err(PlotError::Empty(self.title.clone()));
        };
        let fail = |e: &dyn std::fmt::Display| backend_error(&self.title, e);
        let layout = self.layout();
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (layout.width, layout.height))
                .into_drawing_area();
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            let y = Ticked::new(self.y.scale, (lo, hi), None);
            self.draw(&root, (base, lo), y, layout.label_area, layout.upright)?;
            root.present().map_err(|e| fail(&e))?;
        }
        Ok(out)
    }

    /// The figure's size and its group labels' area: 12 px a bar and a gap between groups
    /// beyond [`SIZE`]; labels written upwards when any is wider (at 7 px a character) than
    /// its group, in an area as tall as the longest needs.
    fn layout(&self) -> BarLayout {
        let n = self.groups.len().max(1);
        let k = self.series.len();
        let width = SIZE.0.max(160 + (n * (k + 1) * 12) as u32);
        let group_px = (width - 120) as usize / n;
        let longest = self
            .groups
            .iter()
            .map(|g| g.chars().count())
            .max()
            .unwrap_or(0);
        let upright = longest * 7 > group_px;
        let label_area = if upright { 20 + longest as u32 * 7 } else { 48 };
        BarLayout {
            width,
            height: SIZE.1 + label_area - 48,
            label_area,
            upright,
        }
    }

    /// The value axis as `(base, lo, hi)`: the bars stand on `base`, zero on a linear axis
    /// (which always shows it) and the axis's lower bound `lo` on a log one; `hi` leaves
    /// headroom for the legend (upper right, about 17 px a series in a plot about 340 px
    /// high) so that it never hides a bar. `None` when no value gets a bar.
    fn value_axis(&self) -> Option<(f64, f64, f64)> {
        let values = self.series.iter().flat_map(|s| {
            s.values
                .iter()
                .filter_map(|v| v.filter(|&v| self.drawable(v)))
        });
        values.clone().next()?;
        let (lo, hi) = value_range(values, self.y.scale);
        let named = self.series.iter().filter(|s| !s.name.is_empty()).count();
        let free = if named == 0 {
            1.0
        } else {
            1.0 - ((20 + 17 * named) as f64 / 340.0).min(0.6)
        };
        Some(match self.y.scale {
            // `value_range` holds zero on a linear axis: `lo` is at most zero.
            Scale::Linear => (0.0, lo, lo + (hi - lo) / free),
            Scale::Log => (lo, lo, lo * (hi / lo).powf(1.0 / free)),
        })
    }

    /// Whether `value` gets a bar: finite, and positive on a log axis.
    fn drawable(&self, value: f64) -> bool {
        value.is_finite() && (self.y.scale == Scale::Linear || value > 0.0)
    }

    fn draw(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        (base, bottom): (f64, f64),
        y: Ticked,
        label_area: u32,
        upright: bool,
    ) -> Result<(), PlotError> {
        let y_labels = y.labels;
        let y_label = |v: &f64| y_labels.text(*v);
        let fail = |e: &dyn std::fmt::Display| backend_error(&self.title, e);
        let n = self.groups.len();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(label_area)
            .y_label_area_size(76)
            .build_cartesian_2d(0.0..n as f64, y)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .y_desc(&self.y.label)
            .y_label_formatter(&y_label)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| fail(&e))?;
        self.draw_bars(&mut chart, base)?;
        if self.series.iter().any(|s| !s.name.is_empty()) {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 13))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| fail(&e))?;
        }
        self.draw_group_labels(root, &chart, bottom, upright)
    }

    /// The bars, standing on `base`, a series after another; a named series gets a legend
    /// entry.
    fn draw_bars(
        &self,
        chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, Ticked>>,
        base: f64,
    ) -> Result<(), PlotError> {
        let fail = |e: &dyn std::fmt::Display| backend_error(&self.title, e);
        let k = self.series.len();
        let bar = 0.8 / k as f64;
        for (s, series) in self.series.iter().enumerate() {
            let color = PALETTE[s % PALETTE.len()];
            let rectangles: Vec<_> = series
                .values
                .iter()
                .enumerate()
                .filter_map(|(g, v)| {
                    let v = v.filter(|&v| self.drawable(v))?;
                    let left = g as f64 + 0.1 + s as f64 * bar;
                    Some(Rectangle::new(
                        [(left, base), (left + bar, v)],
                        color.mix(0.9).filled(),
                    ))
                })
                .collect();
            if rectangles.is_empty() {
                continue;
            }
            let drawn = chart.draw_series(rectangles).map_err(|e| fail(&e))?;
            if !series.name.is_empty() {
                drawn.label(&series.name).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                });
            }
        }
        Ok(())
    }

    /// Group labels, centred under their groups (or written upwards, ending at the axis,
    /// which stands at `bottom`).
    fn draw_group_labels(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, Ticked>>,
        bottom: f64,
        upright: bool,
    ) -> Result<(), PlotError> {
        let fail = |e: &dyn std::fmt::Display| backend_error(&self.title, e);
        let (_, axis) = chart.backend_coord(&(0.0, bottom));
        for (g, label) in self.groups.iter().enumerate() {
            let (x, _) = chart.backend_coord(&(g as f64 + 0.5, bottom));
            let font = ("sans-serif", 13).into_font();
            let text = if upright {
                let style = font
                    .transform(FontTransform::Rotate270)
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center));
                Text::new(label.clone(), (x, axis + 8), style)
            } else {
                let style = font.color(&BLACK).pos(Pos::new(HPos::Center, VPos::Top));
                Text::new(label.clone(), (x, axis + 8), style)
            };
            root.draw(&text).map_err(|e| fail(&e))?;
        }
        Ok(())
    }
}

/// Points of the exceedance curve (1 - CDF: the fraction of samples above each value) from a
/// histogram of (value, count) pairs sorted by value; zero fractions are dropped so that the
/// curve can be drawn on a log axis.
pub fn ccdf(histogram: &[(f64, u64)]) -> Vec<(f64, f64)> {
    cdf(histogram)
        .into_iter()
        .skip(1)
        .map(|(x, f)| (x, 1.0 - f))
        .filter(|&(_, f)| f > 0.0)
        .collect()
}

/// Points of an empirical CDF from a histogram of (value, count) pairs sorted by value,
/// starting from zero at the first value so that a staircase draws the first jump too.
pub fn cdf(histogram: &[(f64, u64)]) -> Vec<(f64, f64)> {
    let total: u64 = histogram.iter().map(|h| h.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut running = 0;
    let mut points = vec![(histogram[0].0, 0.0)];
    points.extend(histogram.iter().map(|&(value, count)| {
        running += count;
        (value, running as f64 / total as f64)
    }));
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(x: Scale, y: Scale) -> LineChart {
        LineChart {
            title: "Erases against log blocks".into(),
            x: Axis {
                label: "log blocks".into(),
                scale: x,
            },
            y: Axis {
                label: "block erases".into(),
                scale: y,
            },
            series: vec![
                Series {
                    name: "BAST".into(),
                    points: vec![(4.0, 900.0), (8.0, 600.0), (64.0, 100.0)],
                },
                Series {
                    name: "FAST".into(),
                    points: vec![(4.0, 500.0), (8.0, 300.0), (64.0, 80.0)],
                },
            ],
            step: false,
            legend: Legend::Auto,
        }
    }

    /// The text of a chart's SVG document, which must parse.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid SVG");
        doc.descendants()
            .filter_map(|n| n.text())
            .map(str::to_string)
            .collect()
    }

    /// The SVG's elements, each as its tag and attributes, in document order.
    fn elements(svg: &str) -> Vec<(String, std::collections::HashMap<String, String>)> {
        let doc = roxmltree::Document::parse(svg).expect("valid SVG");
        doc.descendants()
            .filter(|n| n.is_element())
            .map(|n| {
                let attributes = n
                    .attributes()
                    .map(|a| (a.name().to_string(), a.value().to_string()))
                    .collect();
                (n.tag_name().name().to_string(), attributes)
            })
            .collect()
    }

    /// A palette colour as SVG writes it.
    fn hex(color: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", color.0, color.1, color.2)
    }

    /// The corner `Legend::Auto` picks for `chart`, on the axes its SVG would draw.
    fn auto_corner(chart: &LineChart) -> Legend {
        let points = || chart.series.iter().flat_map(|s| s.points.iter().copied());
        let x = range(points().map(|p| p.0), chart.x.scale);
        let y = value_range(points().map(|p| p.1), chart.y.scale);
        chart.legend_corner(x, y)
    }

    #[test]
    fn the_legend_goes_where_it_hides_the_least_of_the_lines() {
        // Falling lines leave the upper right empty.
        assert_eq!(
            auto_corner(&chart(Scale::Linear, Scale::Linear)),
            Legend::UpperRight
        );
        // A flat line along the top fills both upper corners, and the falling lines end in
        // the lower right: the lower left is the one left empty.
        let mut flat = chart(Scale::Linear, Scale::Linear);
        flat.series.push(Series {
            name: "block-mapped".into(),
            points: vec![(4.0, 1000.0), (8.0, 1000.0), (64.0, 1000.0)],
        });
        assert_eq!(auto_corner(&flat), Legend::LowerLeft);
        // Rising lines leave the upper left empty, unless a line passes through it.
        let mut rising = chart(Scale::Linear, Scale::Linear);
        for series in &mut rising.series {
            for point in &mut series.points {
                point.1 = 1000.0 - point.1;
            }
        }
        assert_eq!(auto_corner(&rising), Legend::UpperLeft);
        rising.series.push(Series {
            name: "page-mapped".into(),
            points: vec![(4.0, 950.0), (6.0, 900.0), (64.0, 50.0)],
        });
        let corner = auto_corner(&rising);
        assert_ne!(corner, Legend::UpperLeft);
        // A legend asked for is where it was asked.
        rising.legend = Legend::LowerLeft;
        assert_eq!(auto_corner(&rising), Legend::LowerLeft);
    }

    #[test]
    fn a_linear_value_axis_starts_at_zero() {
        // Values within 6% of each other still draw from zero, so that their heights
        // compare as the values do; the setting axis may start where its settings do.
        let near = [598.7, 600.7, 612.6, 632.4];
        let (lo, hi) = value_range(near.into_iter(), Scale::Linear);
        assert_eq!(lo, 0.0);
        assert!((632.4..700.0).contains(&hi), "{hi}");
        let (lo, _) = range(near.into_iter(), Scale::Linear);
        assert!(lo > 590.0, "{lo}");
        let mut chart = chart(Scale::Log, Scale::Linear);
        chart.series.truncate(1);
        chart.series[0].points = vec![(4.0, 632.4), (8.0, 621.1), (64.0, 612.6)];
        let labels = texts(&chart.svg().expect("a chart with points draws"));
        assert!(labels.iter().any(|t| t.trim() == "0"), "{labels:?}");
        // Negative values draw down to zero from below; a log axis has no zero.
        assert_eq!(value_range([-5.0, -4.0].into_iter(), Scale::Linear).1, 0.0);
        assert!(value_range([598.7, 632.4].into_iter(), Scale::Log).0 > 400.0);
    }

    #[test]
    fn axes_are_labelled_at_round_values_in_one_style() {
        // Linear: about eight labels a 1, 2 or 5 step apart, all in one SI multiple.
        let (bold, light) = linear_ticks(0.0, 1260.0);
        assert_eq!(bold, [0.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0]);
        assert_eq!(light.len(), 4 * 6 + 1 + 1);
        let axis = Ticked::new(Scale::Linear, (0.0, 1260.0), None);
        let labels: Vec<String> = axis.bold.iter().map(|&v| axis.labels.text(v)).collect();
        assert_eq!(labels, ["0", "200", "400", "600", "800", "1000", "1200"]);
        let axis = Ticked::new(Scale::Linear, (0.0, 6300.0), None);
        let labels: Vec<String> = axis.bold.iter().map(|&v| axis.labels.text(v)).collect();
        assert_eq!(labels, ["0", "1k", "2k", "3k", "4k", "5k", "6k"]);
        // Labels that would round to the same text get the decimals they need, all alike.
        let axis = Ticked::new(Scale::Linear, (99_900.0, 102_300.0), None);
        let labels: Vec<String> = axis.bold.iter().map(|&v| axis.labels.text(v)).collect();
        assert_eq!(labels, ["100.0k", "100.5k", "101.0k", "101.5k", "102.0k"]);
        let axis = Ticked::new(Scale::Linear, (0.0, 0.35), None);
        let labels: Vec<String> = axis.bold.iter().map(|&v| axis.labels.text(v)).collect();
        assert_eq!(labels[..3], ["0", "0.05", "0.10"]);
        let (bold, _) = linear_ticks(0.0, 0.35);
        assert_eq!(bold.len(), 8);
        assert!((bold[7] - 0.35).abs() < 1e-12, "{bold:?}");
        // Log: 1-2-5 over a decade or two, powers of ten beyond, and never fewer than two.
        assert_eq!(
            log_ticks(0.15, 36.0).0,
            [0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
        );
        assert_eq!(log_ticks(50.0, 2e7).0, [100.0, 1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(log_ticks(3.3, 9.0).0, [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert_eq!(log_ticks(1.51, 1.93).0, [1.6, 1.9]);
        assert_eq!(
            log_ticks(1.0, 1e20).0,
            [1.0, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18]
        );
        // A sweep's few settings label its x axis; many or crowded ones do not.
        let x = range([4.0, 64.0].into_iter(), Scale::Log);
        assert_eq!(
            setting_ticks([4.0, 8.0, 16.0, 32.0, 64.0, 8.0].into_iter(), Scale::Log, x),
            Some(vec![4.0, 8.0, 16.0, 32.0, 64.0])
        );
        let x = range([0.0, 100.0].into_iter(), Scale::Linear);
        assert_eq!(
            setting_ticks((0..=20).map(|i| f64::from(i) * 5.0), Scale::Linear, x),
            None
        );
        assert_eq!(
            setting_ticks([0.0, 1.0, 100.0].into_iter(), Scale::Linear, x),
            None
        );
    }

    #[test]
    fn ticks_read_well() {
        assert_eq!(tick(1000.0), "1k");
        assert_eq!(tick(250_000.0), "250k");
        assert_eq!(tick(16.0 * 1024.0 * 1024.0 * 1024.0), "17.18G");
        assert_eq!(tick(0.05), "0.05");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(0.00001), "1e-5");
        // A multiple only when the value is ten of it, or a whole number of it.
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(-2_000_000.0), "-2M");
        assert_eq!(tick(15_000.0), "15k");
        assert_eq!(tick(0.001), "0.001");
        assert_eq!(tick(0.000_99), "1e-3");
        assert_eq!(
            ccdf(&[(1.0, 5), (2.0, 3), (4.0, 2)]),
            vec![(1.0, 0.5), (2.0, 0.19999999999999996)]
        );
    }

    #[test]
    fn line_charts_are_valid_svg_with_labels_and_legend() {
        for (x, y) in [
            (Scale::Linear, Scale::Linear),
            (Scale::Log, Scale::Linear),
            (Scale::Log, Scale::Log),
        ] {
            let texts = texts(&chart(x, y).svg().expect("drawn"));
            for needle in [
                "Erases against log blocks",
                "log blocks",
                "block erases",
                "BAST",
                "FAST",
            ] {
                assert!(
                    texts.iter().any(|t| t.contains(needle)),
                    "{needle:?} missing ({x:?}, {y:?})"
                );
            }
        }
    }

    #[test]
    fn cdfs_and_bars_draw_and_empty_charts_are_refused() {
        let mut c = chart(Scale::Linear, Scale::Linear);
        c.step = true;
        c.series[0].points = cdf(&[(1.0, 5), (2.0, 3), (4.0, 2)]);
        assert_eq!(
            c.series[0].points,
            vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.8), (4.0, 1.0)]
        );
        roxmltree::Document::parse(&c.svg().expect("drawn")).expect("valid SVG");
        let bars = BarChart {
            title: "Write amplification".into(),
            y: Axis::linear("flash programs per host page"),
            bars: vec![("page/greedy".into(), 6.9), ("page/fifo".into(), 7.8)],
        };
        let svg = bars.svg().expect("drawn");
        assert!(svg.contains("page/fifo"));
        roxmltree::Document::parse(&svg).expect("valid SVG");
        c.series.iter_mut().for_each(|s| s.points.clear());
        assert_eq!(
            c.svg(),
            Err(PlotError::Empty("Erases against log blocks".into()))
        );
    }

    #[test]
    fn grouped_bars_name_groups_and_series_and_skip_what_cannot_be_drawn() {
        let mut chart = GroupedBarChart {
            title: "Mapping memory as a share of PMT".into(),
            y: Axis::log("percent of PMT"),
            groups: vec![
                "finance".into(),
                "homes".into(),
                "a trace with a long name".into(),
            ],
            series: vec![
                BarSeries {
                    name: "VET".into(),
                    values: vec![Some(8.4), Some(36.0), Some(0.08)],
                },
                BarSeries {
                    name: "paper VET".into(),
                    values: vec![Some(2.3), Some(4.3), None],
                },
                BarSeries {
                    name: "nothing to draw".into(),
                    values: vec![None, Some(0.0), None],
                },
            ],
        };
        for scale in [Scale::Log, Scale::Linear] {
            chart.y.scale = scale;
            let svg = chart.svg().expect("drawn");
            let texts = texts(&svg);
            for needle in [
                "Mapping memory as a share of PMT",
                "percent of PMT",
                "finance",
                "a trace with a long name",
                "paper VET",
            ] {
                assert!(
                    texts.iter().any(|t| t.contains(needle)),
                    "{needle:?} ({scale:?})"
                );
            }
            // A zero has no bar on a log axis, so that series has no legend entry there;
            // on a linear axis its zero bar is drawn and named.
            assert_eq!(
                texts.iter().any(|t| t.contains("nothing to draw")),
                scale == Scale::Linear
            );
            let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
            let rects = doc.descendants().filter(|n| n.has_tag_name("rect")).count();
            assert!(rects >= 5, "five bars at least: {rects}");
        }
        // A negative value stands below zero on a linear axis (the axis reaches down to it).
        chart.y.scale = Scale::Linear;
        chart.series[2].values = vec![Some(-30.0), None, None];
        let with_negative = texts(&chart.svg().expect("drawn"));
        assert!(
            with_negative.iter().any(|t| t.trim().starts_with('-')),
            "{with_negative:?}"
        );
        chart.y.scale = Scale::Log;
        chart
            .series
            .iter_mut()
            .for_each(|s| s.values = vec![None, Some(-1.0), None]);
        assert_eq!(
            chart.svg(),
            Err(PlotError::Empty("Mapping memory as a share of PMT".into()))
        );
    }

    #[test]
    fn log_scales_are_chosen_for_data_spanning_decades() {
        assert_eq!(Scale::auto([1.0, 50.0]), Scale::Linear);
        assert_eq!(Scale::auto([1.0, 500.0]), Scale::Log);
        assert_eq!(Scale::auto([0.0, 500.0]), Scale::Linear);
        // Two decades exactly is enough; the ratio decides, not the size.
        assert_eq!(Scale::auto([3.0, 300.0]), Scale::Log);
        assert_eq!(Scale::auto([20.0, 30.0]), Scale::Linear);
        assert_eq!(Scale::auto([1.0, f64::INFINITY]), Scale::Linear);
        assert_eq!(Scale::auto([]), Scale::Linear);
    }

    #[test]
    fn labels_share_a_multiple_and_decimals_or_each_take_their_own() {
        // A label far from its multiple's integers by less than a millionth of itself still
        // reads as an integer (the float error of a large product).
        let labels = Labels::linear(&[100.0, 123_456_789.000_4]);
        assert_eq!((labels.unit, labels.decimals), (None, Some(0)));
        assert_eq!(labels.text(123_456_789.000_4), "123456789");
        // Labels no six decimals write exactly: each takes its own, in the shared multiple
        // when there is one, else as a tick.
        let labels = Labels::linear(&[0.123_456_789_1, 5_000.0]);
        assert_eq!((labels.unit, labels.decimals), (None, None));
        assert_eq!(labels.text(5_000.0), "5k");
        assert_eq!(labels.text(0.123_456_789_1), "0.1235");
        assert_eq!(labels.text(0.0), "0");
        // In a multiple, every label is one or more, so six decimals write it to a
        // millionth of itself.
        let labels = Labels::linear(&[1_000.0, 1_234.567_891_23]);
        assert_eq!((labels.unit, labels.decimals), (Some((1e3, "k")), Some(6)));
        assert_eq!(labels.text(1_234.567_891_23), "1.234568k");
    }

    #[test]
    fn settings_label_their_axis_when_spaced_apart() {
        // Linear: the gaps count as fractions of the axis, 7% at least.
        let x = (94.75, 100.25);
        let linear = |v: &[f64]| setting_ticks(v.iter().copied(), Scale::Linear, x);
        assert_eq!(linear(&[95.0, 96.0, 100.0]), Some(vec![95.0, 96.0, 100.0]));
        assert_eq!(linear(&[95.0, 95.2, 100.0]), None);
        // What the axis cannot draw is left out.
        assert_eq!(linear(&[95.0, f64::NAN, 100.0]), Some(vec![95.0, 100.0]));
        // Log: the gaps count in decades as fractions of the axis's; ln(1.05) / ln(2) is
        // just over 7%.
        let log = |v: &[f64]| setting_ticks(v.iter().copied(), Scale::Log, (2.0, 4.0));
        assert_eq!(log(&[2.0, 2.1, 4.0]), Some(vec![2.0, 2.1, 4.0]));
        assert_eq!(log(&[2.0, 2.09, 4.0]), None);
        assert_eq!(log(&[0.0, 2.0, 4.0]), Some(vec![2.0, 4.0]));
        // One setting, or eleven, leave the axis to round values.
        assert_eq!(log(&[3.0]), None);
        let eleven: Vec<f64> = (0..11).map(|i| 95.0 + f64::from(i) * 0.5).collect();
        let x = (95.0, 100.0);
        assert_eq!(
            setting_ticks(eleven[..10].iter().copied(), Scale::Linear, x).map(|v| v.len()),
            Some(10)
        );
        assert_eq!(setting_ticks(eleven.into_iter(), Scale::Linear, x), None);
    }

    #[test]
    fn an_axis_without_a_span_gets_one_label() {
        assert_eq!(linear_ticks(5.0, 5.0), (vec![5.0], Vec::new()));
        assert_eq!(linear_ticks(0.0, f64::INFINITY), (vec![0.0], Vec::new()));
    }

    #[test]
    fn lines_are_sampled_at_their_markers_and_along_their_segments() {
        let mut c = chart(Scale::Linear, Scale::Linear);
        c.series = vec![Series {
            name: "a".into(),
            points: vec![(2.0, 1.0), (6.0, 9.0)],
        }];
        // Units of the plot area: x from 0 to 8, y from 1 to 9.
        let (x, y) = ((0.0, 8.0), (1.0, 9.0));
        let along = |from: (f64, f64), to: (f64, f64)| {
            (1..8).map(move |i| {
                let t = f64::from(i) / 8.0;
                (
                    from.0 + (to.0 - from.0) * t,
                    from.1 + (to.1 - from.1) * t,
                    1,
                )
            })
        };
        let mut expected = vec![(0.25, 0.0, 8), (0.75, 1.0, 8)];
        expected.extend(along((0.25, 0.0), (0.75, 1.0)));
        assert_eq!(c.line_samples(x, y), expected);
        assert_eq!(expected[2], (0.3125, 0.125, 1));
        // A staircase has no markers: its corners are sampled along, at weight 1.
        c.step = true;
        let mut expected: Vec<(f64, f64, u32)> = along((0.25, 0.0), (0.75, 0.0)).collect();
        expected.extend(along((0.75, 0.0), (0.75, 1.0)));
        assert_eq!(c.line_samples(x, y), expected);
        // A point either axis cannot draw is left out.
        c.step = false;
        c.series[0].points = vec![
            (2.0, 1.0),
            (f64::NAN, 5.0),
            (4.0, f64::INFINITY),
            (6.0, 9.0),
        ];
        let mut expected = vec![(0.25, 0.0, 8), (0.75, 1.0, 8)];
        expected.extend(along((0.25, 0.0), (0.75, 1.0)));
        assert_eq!(c.line_samples(x, y), expected);
        // On log axes, in decades; zero and negative values are left out.
        let mut c = chart(Scale::Log, Scale::Log);
        c.series = vec![Series {
            name: "a".into(),
            points: vec![
                (100.0, 10.0),
                (0.0, 50.0),
                (-1.0, 50.0),
                (50.0, 0.0),
                (1000.0, 1000.0),
            ],
        }];
        let samples = c.line_samples((10.0, 10_000.0), (1.0, 10_000.0));
        assert_eq!(samples.len(), 2 + 7);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(
            close(samples[0].0, 1.0 / 3.0) && close(samples[0].1, 0.25),
            "{samples:?}"
        );
        assert!(
            close(samples[1].0, 2.0 / 3.0) && close(samples[1].1, 0.75),
            "{samples:?}"
        );
    }

    #[test]
    fn the_legend_box_grows_with_names_and_series_and_ties_go_to_the_empty_corner() {
        let mut c = chart(Scale::Linear, Scale::Linear);
        c.series[1].name = "FAST-é".into();
        assert_eq!(c.legend_box(), (102.0 / 660.0 + 0.03, 58.0 / 360.0 + 0.05));
        c.series.clear();
        assert_eq!(c.legend_box(), (60.0 / 660.0 + 0.03, 24.0 / 360.0 + 0.05));
        // Lines in the middle of the plot area leave every corner empty: the trend decides,
        // summed over the series with two points or more.
        let corner = |lines: &[&[(f64, f64)]]| {
            let mut c = chart(Scale::Linear, Scale::Linear);
            c.series = lines
                .iter()
                .map(|points| Series {
                    name: "a".into(),
                    points: points.to_vec(),
                })
                .collect();
            c.legend_corner((0.0, 10.0), (-10.0, 10.0))
        };
        assert_eq!(corner(&[&[(4.0, 1.0), (6.0, 2.0)]]), Legend::UpperLeft);
        assert_eq!(corner(&[&[(4.0, 2.0), (6.0, 1.0)]]), Legend::UpperRight);
        assert_eq!(corner(&[&[(4.0, -1.0), (6.0, -2.0)]]), Legend::UpperRight);
        assert_eq!(corner(&[&[(4.0, -2.0), (6.0, -1.0)]]), Legend::UpperLeft);
        assert_eq!(corner(&[&[(4.0, 1.0), (6.0, 1.0)]]), Legend::UpperRight);
        assert_eq!(
            corner(&[&[(4.0, 1.0), (6.0, 3.0)], &[(4.0, 2.0), (6.0, -1.0)]]),
            Legend::UpperRight
        );
        assert_eq!(
            corner(&[&[(4.0, 1.0), (6.0, 3.0)], &[(5.0, 5.0)], &[]]),
            Legend::UpperLeft
        );
    }

    #[test]
    fn log_axes_with_few_round_values_are_labelled_at_their_ends() {
        // Exactly two integer multiples are enough.
        assert_eq!(log_ticks(2.5, 4.5).0, [3.0, 4.0]);
        // Fewer: the ends, rounded inwards to two digits, an end with two digits kept.
        assert_eq!(log_ticks(1.5, 1.9).0, [1.5, 1.9]);
        assert_eq!(log_ticks(15.0, 19.0).0, [15.0, 19.0]);
        assert_eq!(log_ticks(151.0, 199.0).0, [160.0, 190.0]);
        assert_eq!(log_ticks(0.0151, 0.0199).0, [0.016, 0.019]);
        // The light grid: every integer multiple up to six decades, powers of ten beyond.
        assert_eq!(log_ticks(2.5, 4.5).1, [3.0, 4.0]);
        assert_eq!(log_ticks(1.0, 1e6).1.len(), 6 * 9 + 1);
        assert_eq!(
            log_ticks(1.0, 1e7).1,
            [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 1e7]
        );
    }

    #[test]
    fn each_series_has_its_colour_and_marker_and_staircases_have_none() {
        let mut c = chart(Scale::Linear, Scale::Linear);
        c.series = (0..12)
            .map(|i| Series {
                name: format!("s{i}"),
                points: vec![(f64::from(i), f64::from(i))],
            })
            .collect();
        let svg = c.svg().expect("drawn");
        let all = elements(&svg);
        let lines: Vec<usize> = (0..all.len())
            .filter(|&e| {
                let (tag, a) = &all[e];
                tag == "polyline" && a["stroke-width"] == "2" && a["points"].split(' ').count() == 2
            })
            .collect();
        // A line of one point and its markers for each series (the legend's samples have
        // two points).
        assert_eq!(lines.len(), 12, "{svg}");
        for (i, &at) in lines.iter().enumerate() {
            let color = hex(PALETTE[i % 10]);
            let a = &all[at].1;
            assert_eq!(a["stroke"], color, "series {i}'s line");
            let (x, y) = a["points"].trim().split_once(',').expect("one point");
            let (x, y): (i32, i32) = (x.parse().expect("x"), y.parse().expect("y"));
            let markers: Vec<&(String, _)> = all[at + 1..]
                .iter()
                // Up to the next line, or the legend's box.
                .take_while(|(tag, a)| {
                    tag != "polyline" && a.get("opacity").is_none_or(|o| o != "0.85")
                })
                .collect();
            let fill = if i % 2 == 0 { color.as_str() } else { "none" };
            // Circle, triangle, cross, square, shifted one along every ten series.
            match (i / 10 + i) % 4 {
                0 => {
                    assert_eq!(markers.len(), 1, "series {i}");
                    let (tag, a) = markers[0];
                    assert_eq!(tag, "circle");
                    assert_eq!(
                        (a["cx"].as_str(), a["cy"].as_str()),
                        (x.to_string().as_str(), y.to_string().as_str())
                    );
                    assert_eq!(a["fill"], fill, "series {i}");
                }
                1 => {
                    assert_eq!(markers.len(), 1, "series {i}");
                    assert_eq!(markers[0].0, "polygon");
                    assert_eq!(markers[0].1["fill"], color);
                }
                2 => {
                    assert_eq!(markers.len(), 2, "series {i}");
                    assert!(
                        markers
                            .iter()
                            .all(|(tag, a)| tag == "line" && a["stroke"] == color)
                    );
                }
                _ => {
                    assert_eq!(markers.len(), 1, "series {i}");
                    let (tag, a) = markers[0];
                    assert_eq!(tag, "rect");
                    let at = |name: &str| a[name].parse::<i32>().expect("a number");
                    assert_eq!(
                        (at("x"), at("y"), at("width"), at("height")),
                        (x - 4, y - 4, 8, 8)
                    );
                    assert_eq!(a["fill"], fill, "series {i}");
                }
            }
        }
        // A staircase draws its lines without markers.
        c.step = true;
        let svg = c.svg().expect("drawn");
        assert!(
            !elements(&svg)
                .iter()
                .any(|(tag, _)| ["circle", "polygon"].contains(&tag.as_str())),
            "{svg}"
        );
        assert_eq!(
            staircase(&[(1.0, 0.5), (2.0, 0.8), (4.0, 1.0)]),
            [(1.0, 0.5), (2.0, 0.5), (2.0, 0.8), (4.0, 0.8), (4.0, 1.0)]
        );
        assert_eq!(staircase(&[(3.0, 2.0)]), [(3.0, 2.0)]);
        assert_eq!(staircase(&[]), []);
    }

    #[test]
    fn bar_figures_widen_with_their_bars_and_make_room_for_long_labels() {
        let bars = |groups: usize, series: usize, label: &str| GroupedBarChart {
            title: "t".into(),
            y: Axis::linear("v"),
            groups: vec![label.to_string(); groups],
            series: vec![
                BarSeries {
                    name: "s".into(),
                    values: vec![Some(1.0); groups],
                };
                series
            ],
        };
        let layout = |width, height, label_area, upright| BarLayout {
            width,
            height,
            label_area,
            upright,
        };
        // Three groups of three bars fit the usual size, labels across.
        let label = "a trace with a long name";
        assert_eq!(bars(3, 3, label).layout(), layout(760, 460, 48, false));
        // 41 groups of 6 bars: 160 + 41 x 7 x 12 px, a group 84 px wide, which holds 12
        // characters but not 13.
        assert_eq!(
            bars(41, 6, "twelve chars").layout(),
            layout(3604, 460, 48, false)
        );
        assert_eq!(
            bars(41, 6, "thirteen char").layout(),
            layout(3604, 460 + 20 + 91 - 48, 20 + 91, true)
        );
        // Labels upright in the usual width: 640 px over 20 groups is 32 px a group.
        assert_eq!(
            bars(20, 1, "five!").layout(),
            layout(760, 460 + 20 + 35 - 48, 55, true)
        );
        assert_eq!(bars(20, 1, "four").layout(), layout(760, 460, 48, false));
        // The figure's size is the layout's.
        let svg = bars(41, 6, "thirteen char").svg().expect("drawn");
        let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
        let root = doc.root_element();
        assert_eq!(
            (root.attribute("width"), root.attribute("height")),
            (Some("3604"), Some("523"))
        );
    }

    #[test]
    fn long_group_labels_are_written_upwards_from_below_the_axis() {
        let long = "a very long group label that must be written upwards";
        let c = GroupedBarChart {
            title: "t".into(),
            y: Axis::linear("v"),
            groups: vec!["a".into(), long.into()],
            series: vec![BarSeries {
                name: "s".into(),
                values: vec![Some(10.0), Some(30.0)],
            }],
        };
        let svg = c.svg().expect("drawn");
        let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
        let number = |n: roxmltree::Node, name: &str| {
            n.attribute(name)
                .and_then(|v| v.parse::<f64>().ok())
                .expect("a number")
        };
        let bars: Vec<roxmltree::Node> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("opacity") == Some("0.9"))
            .collect();
        assert_eq!(bars.len(), 2);
        for (bar, name) in bars.iter().zip(["a", long]) {
            let label = doc
                .descendants()
                .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(name))
                .expect("a group label");
            let (x, y) = (number(label, "x"), number(label, "y"));
            let centre = number(*bar, "x") + number(*bar, "width") / 2.0;
            let axis = number(*bar, "y") + number(*bar, "height");
            assert!(
                (x - centre).abs() <= 1.0 && (y - axis - 8.0).abs() <= 1.0,
                "{x} {y}"
            );
            assert_eq!(
                label.attribute("transform"),
                Some(format!("rotate(270, {x}, {y})").as_str())
            );
            assert_eq!(label.attribute("text-anchor"), Some("end"));
        }
    }

    #[test]
    fn the_value_axis_leaves_the_legend_room_above_the_bars() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        let mut c = GroupedBarChart {
            title: "t".into(),
            y: Axis::linear("v"),
            groups: vec!["a".into(), "b".into()],
            series: vec![
                BarSeries {
                    name: "one".into(),
                    values: vec![Some(10.0), Some(f64::NAN)],
                },
                BarSeries {
                    name: "two".into(),
                    values: vec![None, Some(40.0)],
                },
            ],
        };
        // Linear: from zero to the padded top, over the share of the plot the legend's two
        // entries leave free.
        let free = 1.0 - (20.0 + 2.0 * 17.0) / 340.0;
        let (base, lo, hi) = c.value_axis().expect("values");
        assert_eq!((base, lo), (0.0, 0.0));
        assert!(close(hi, 42.0 / free), "{hi}");
        // A negative value: the axis reaches below zero and the bars still stand on zero.
        c.series[0].values[0] = Some(-10.0);
        let (base, lo, hi) = c.value_axis().expect("values");
        assert_eq!((base, lo), (0.0, -12.5));
        assert!(close(hi, -12.5 + (42.5 + 12.5) / free), "{hi}");
        // Unnamed series have no legend, so no headroom.
        c.series.iter_mut().for_each(|s| s.name.clear());
        let (_, lo, hi) = c.value_axis().expect("values");
        assert_eq!((lo, hi), (-12.5, 42.5));
        // Log: from the padded bottom, the headroom in decades; at most 60% of the plot.
        c.y.scale = Scale::Log;
        c.series[0].values = vec![Some(2.0), Some(-1.0)];
        c.series[1].values = vec![Some(0.0), Some(200.0)];
        c.series[1].name = "two".into();
        let free = 1.0 - 37.0 / 340.0;
        let (base, lo, hi) = c.value_axis().expect("values");
        assert_eq!((base, lo), (2.0 / 1.2, 2.0 / 1.2));
        assert!(close(hi, lo * (240.0 / lo).powf(1.0 / free)), "{hi}");
        let many: Vec<BarSeries> = (0..20)
            .map(|i| BarSeries {
                name: format!("s{i}"),
                values: vec![Some(2.0), Some(200.0)],
            })
            .collect();
        c.series = many;
        let (_, lo, hi) = c.value_axis().expect("values");
        assert!(close(hi, lo * (240.0 / lo).powf(1.0 / 0.4)), "{hi}");
        // Nothing to draw.
        c.series
            .iter_mut()
            .for_each(|s| s.values = vec![Some(0.0), None]);
        assert_eq!(c.value_axis(), None);
    }

    #[test]
    fn bars_stand_side_by_side_in_their_groups_at_their_values() {
        let c = GroupedBarChart {
            title: "t".into(),
            y: Axis::linear("v"),
            groups: vec!["a".into(), "b".into()],
            series: vec![
                BarSeries {
                    name: "s".into(),
                    values: vec![Some(10.0), Some(30.0)],
                },
                BarSeries {
                    name: "u".into(),
                    values: vec![Some(20.0), Some(40.0)],
                },
            ],
        };
        let svg = c.svg().expect("drawn");
        let all = elements(&svg);
        let number = |a: &std::collections::HashMap<String, String>, name: &str| {
            a[name].parse::<f64>().expect("a number")
        };
        // (x, width, top, bottom, colour) of each bar, a series after another.
        let bars: Vec<(f64, f64, f64, f64, &str)> = all
            .iter()
            .filter(|(tag, a)| tag == "rect" && a["opacity"] == "0.9")
            .map(|(_, a)| {
                let (y, height) = (number(a, "y"), number(a, "height"));
                (
                    number(a, "x"),
                    number(a, "width"),
                    y,
                    y + height,
                    a["fill"].as_str(),
                )
            })
            .collect();
        assert_eq!(bars.len(), 4, "{svg}");
        let colors: Vec<&str> = bars.iter().map(|b| b.4).collect();
        let (first, second) = (hex(PALETTE[0]), hex(PALETTE[1]));
        assert_eq!(colors, [&first, &first, &second, &second]);
        // A group is one unit wide; its bars share 0.8 of it after a tenth's gap.
        let unit = bars[1].0 - bars[0].0;
        let origin = bars[0].0 - 0.1 * unit;
        let near = |a: f64, b: f64| (a - b).abs() <= 1.0;
        for (bar, (group, series)) in
            bars.iter()
                .zip([(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)])
        {
            assert!(
                near(bar.0, origin + (group + 0.1 + 0.4 * series) * unit),
                "{bars:?}"
            );
            assert!(near(bar.1, 0.4 * unit), "{bars:?}");
        }
        // Standing on one base, as tall as their values.
        let per_value = (bars[0].3 - bars[0].2) / 10.0;
        for (bar, value) in bars.iter().zip([10.0, 30.0, 20.0, 40.0]) {
            assert!(near(bar.3, bars[0].3), "{bars:?}");
            assert!(near(bar.3 - bar.2, value * per_value), "{bars:?}");
        }
        // Each named series has a legend entry in its colour, a 14 by 10 px swatch inside
        // the legend's box.
        let (_, frame) = all
            .iter()
            .find(|(tag, a)| tag == "rect" && a["opacity"] == "0.85")
            .expect("a legend");
        let inside = |a: &std::collections::HashMap<String, String>| {
            let (x, y) = (number(a, "x"), number(a, "y"));
            x > number(frame, "x")
                && y > number(frame, "y")
                && x + number(a, "width") < number(frame, "x") + number(frame, "width")
                && y + number(a, "height") < number(frame, "y") + number(frame, "height")
        };
        let legend: Vec<&str> = all
            .iter()
            .filter(|(tag, a)| tag == "rect" && a["width"] == "14" && a["height"] == "10")
            .inspect(|(_, a)| assert!(inside(a), "{a:?} outside {frame:?}"))
            .map(|(_, a)| a["fill"].as_str())
            .collect();
        assert_eq!(legend, [&first, &second]);
        // Group labels centred under their groups, 8 px below the axis.
        let doc = roxmltree::Document::parse(&svg).expect("valid SVG");
        for (g, name) in ["a", "b"].into_iter().enumerate() {
            let label = doc
                .descendants()
                .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(name))
                .expect("a group label");
            let at = |name: &str| label.attribute(name).and_then(|v| v.parse::<f64>().ok());
            let x = at("x").expect("x");
            assert!(near(x, origin + (g as f64 + 0.5) * unit), "{x}");
            assert!(near(at("y").expect("y"), bars[0].3 + 8.0));
        }
    }

    #[test]
    fn ranges_are_padded_as_documented() {
        let linear = |v: &[f64]| range(v.iter().copied(), Scale::Linear);
        let log = |v: &[f64]| range(v.iter().copied(), Scale::Log);
        // Positive values spread over more than a tenth of the largest start at zero, padded
        // a twentieth above only.
        assert_eq!(linear(&[10.0, 100.0]), (0.0, 105.0));
        // Values within a tenth of the largest are padded a twentieth of their spread on
        // each side; the bound itself (9 is exactly 0.9 x 10) keeps its start.
        assert_eq!(linear(&[95.0, 100.0]), (94.75, 100.25));
        assert_eq!(linear(&[9.0, 10.0]), (8.95, 10.05));
        // One value: half of it (or of one) either side; zero pads upwards only.
        assert_eq!(linear(&[5.0, 5.0]), (2.5, 7.5));
        assert_eq!(linear(&[0.0]), (0.0, 0.5));
        assert_eq!(linear(&[-0.2]), (-0.7, 0.3));
        assert_eq!(linear(&[-5.0, -4.0]), (-5.05, -3.95));
        // What cannot be drawn is left out: infinities and NaN, and on a log axis zero and
        // negative values.
        assert_eq!(
            linear(&[f64::INFINITY, 3.0, f64::NAN, 7.0]),
            linear(&[3.0, 7.0])
        );
        assert_eq!(linear(&[3.0, 7.0]), (0.0, 7.0 + 7.0 * 0.05));
        assert_eq!(log(&[2.0, 200.0]), (2.0 / 1.2, 240.0));
        assert_eq!(
            log(&[-1.0, 0.0, 2.0, 200.0, f64::INFINITY]),
            log(&[2.0, 200.0])
        );
        assert_eq!(log(&[5.0]), (2.5, 10.0));
        // Nothing drawable: a decade on a log axis, zero to one on a linear one.
        assert_eq!(log(&[0.0, -3.0]), (1.0, 10.0));
        assert_eq!(linear(&[f64::NAN]), (0.0, 1.0));
        assert_eq!(linear(&[]), (0.0, 1.0));
    }
}
