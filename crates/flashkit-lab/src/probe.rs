//! The disk probe as an experiment (Fig. 1 of Ajwani et al., SEA 2009): run
//! [`flashkit_em::probe`] on a real directory with its file announced as a temporary, and
//! show the measurements as a table and a chart. `flashkit em probe` and the flashmodel
//! reproduction ([`crate::repro::flashmodel`]) both use it.

use crate::repro::LabError;
use crate::temporaries::Temporaries;
use flashkit_core::Progress;
use flashkit_core::units::format_size;
use flashkit_em::EmError;
use flashkit_em::probe::{Access, ProbeReport, ProbeSpec, probe, probe_file};
use flashkit_report::Table;
use flashkit_report::plot::{Axis, Legend, LineChart, Series};
use std::path::Path;

/// The paper's rule: a random pattern "reaches optimal performance" at this fraction of the
/// sequential throughput (the paper does not say how close it took "optimal" to be).
pub const DEFAULT_FRACTION: f64 = 0.9;

/// The paper's B_r and B_w for its 64 GB HAMA SSD (section 4).
const PAPER_BR: u64 = 128 << 10;
const PAPER_BW: u64 = 16 << 20;

/// Probe the disk of `dir` (an existing directory), its probe file held by `temporaries`
/// while it exists.
pub fn measure(
    dir: &Path,
    spec: &ProbeSpec,
    temporaries: &dyn Temporaries,
    progress: &dyn Progress,
) -> Result<ProbeReport, LabError> {
    let _file = temporaries.hold(&probe_file(dir));
    probe(dir, spec, progress).map_err(em_error)
}

/// An em error: bad parameters and bad input files are the spec's fault (no single field
/// owns them), the rest a failed run.
pub fn em_error(error: EmError) -> LabError {
    match error {
        EmError::Config(_) | EmError::Input { .. } => LabError::Config(error.into()),
        other => LabError::Run(other.into()),
    }
}

/// The measurements as a table, a column a pattern, and the block sizes the paper's rule
/// picks, beside the paper's.
pub fn render(report: &ProbeReport, fraction: f64) -> String {
    let mut out = String::new();
    let how = match &report.fallback {
        None => "O_DIRECT".to_string(),
        Some(why) => format!("the page cache ({why}: reads may not reach the device)"),
    };
    out.push_str(&format!(
        "Throughput against block size, MB/s (Fig. 1): a {} file in {}, through {how}, queue \
         depth {}; each figure at most {} s or {} of transfers\n",
        format_size(report.spec.file_bytes),
        report
            .path
            .parent()
            .map_or_else(|| ".".into(), |p| p.display().to_string()),
        report.spec.depth,
        report.spec.seconds,
        format_size(report.spec.max_bytes),
    ));
    out.push_str(&table(report).render());
    let knee = |access: Access| {
        report.knee(access, fraction).map_or_else(
            || format!("none up to {}", format_size(report.spec.max_block)),
            format_size,
        )
    };
    let plateau = |access: Access| {
        report
            .plateau(access)
            .map_or("-".into(), |mb| format!("{mb:.0} MB/s"))
    };
    out.push_str(&format!(
        "sequential reads settle at {}, writes at {} (the median over the larger half of the \
         block sizes); the smallest block at which the random pattern reaches {:.0}% of that, \
         at it and the next size: reads {} (B_r; the paper's SSD: {}), writes {} (B_w; the \
         paper's SSD: {})\n\n",
        plateau(Access::SequentialRead),
        plateau(Access::SequentialWrite),
        fraction * 100.0,
        knee(Access::RandomRead),
        format_size(PAPER_BR),
        knee(Access::RandomWrite),
        format_size(PAPER_BW),
    ));
    out
}

/// Throughput in MB/s, a row a block size and a column a pattern.
fn table(report: &ProbeReport) -> Table {
    let mut table = Table::new(
        std::iter::once("block".to_string())
            .chain(Access::ALL.iter().map(|a| a.name().to_string())),
    );
    for block in report.spec.block_sizes() {
        let cells = Access::ALL.iter().map(|&access| {
            report
                .mb_per_s(access, block)
                .map_or("-".into(), |mb| format!("{mb:.0}"))
        });
        table.push(std::iter::once(format_size(block)).chain(cells));
    }
    table
}

/// Fig. 1: throughput against block size, a line a pattern, log axes.
pub fn chart(report: &ProbeReport) -> LineChart {
    let series = Access::ALL
        .iter()
        .map(|&access| Series {
            name: access.name().into(),
            points: report
                .points
                .iter()
                .filter(|p| p.access == access)
                .map(|p| (p.block_bytes as f64, p.mb_per_s()))
                .collect(),
        })
        .collect();
    LineChart {
        title: if report.spec.depth == 1 {
            "Throughput against block size, this machine's disk (Fig. 1)".into()
        } else {
            format!(
                "Throughput against block size, this machine's disk, {} in flight (Fig. 1)",
                report.spec.depth
            )
        },
        x: Axis::log("block size (bytes, log scale)"),
        y: Axis::log("throughput (MB/s)"),
        series,
        step: false,
        legend: Legend::Auto,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::temporaries::Held;
    use flashkit_core::NoProgress;
    use flashkit_em::probe::ProbePoint;
    use std::path::PathBuf;
    use std::sync::Mutex;

    /// Notes what is held, and whether it existed when it was let go.
    #[derive(Default)]
    struct Recorder(std::sync::Arc<Mutex<Vec<(PathBuf, &'static str)>>>);

    struct Guard(PathBuf, std::sync::Arc<Mutex<Vec<(PathBuf, &'static str)>>>);

    impl Drop for Guard {
        fn drop(&mut self) {
            let state = if self.0.exists() { "kept" } else { "gone" };
            self.1.lock().expect("lock").push((self.0.clone(), state));
        }
    }

    impl Temporaries for Recorder {
        fn hold(&self, path: &Path) -> Held {
            self.0.lock().expect("lock").push((path.into(), "held"));
            Box::new(Guard(path.into(), self.0.clone()))
        }
    }

    #[test]
    fn the_probe_file_is_held_while_it_exists_and_shown_as_fig_1() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = ProbeSpec {
            file_bytes: 64 << 10,
            min_block: 4 << 10,
            max_block: 16 << 10,
            seconds: 0.01,
            max_bytes: 64 << 10,
            seed: 1,
            depth: 1,
        };
        let recorder = Recorder::default();
        let report = measure(dir.path(), &spec, &recorder, &NoProgress).expect("probe");
        let file = probe_file(dir.path());
        assert_eq!(
            *recorder.0.lock().expect("lock"),
            [(file.clone(), "held"), (file, "gone")],
            "held before it is made, let go once it is removed"
        );
        let text = render(&report, DEFAULT_FRACTION);
        assert!(text.starts_with("Throughput against block size"), "{text}");
        for block in ["4KiB ", "8KiB ", "16KiB "] {
            assert!(
                text.lines().any(|l| l.starts_with(block)),
                "{block}: {text}"
            );
        }
        let chart = chart(&report);
        assert_eq!(chart.series.len(), 4);
        assert!(chart.series.iter().all(|s| s.points.len() == 3));
    }

    /// A probe's report written by hand: 4 to 16 KiB, at depth 4, through the page cache;
    /// the random writes not measured at 4 KiB.
    fn made_report() -> ProbeReport {
        let figures = [
            (Access::SequentialRead, [100.0, 200.0, 200.0]),
            (Access::RandomRead, [10.0, 190.0, 200.0]),
            (Access::SequentialWrite, [50.0, 100.0, 100.0]),
            (Access::RandomWrite, [f64::NAN, 10.0, 95.0]),
        ];
        let points = figures
            .into_iter()
            .flat_map(|(access, mbs)| {
                [4u64 << 10, 8 << 10, 16 << 10]
                    .into_iter()
                    .zip(mbs)
                    .filter(|(_, mb)| !mb.is_nan())
                    .map(move |(block_bytes, mb)| ProbePoint {
                        access,
                        block_bytes,
                        transfers: 1000,
                        seconds: 1000.0 * block_bytes as f64 / (mb * 1e6),
                    })
            })
            .collect();
        ProbeReport {
            path: PathBuf::from("/d/probe"),
            spec: ProbeSpec {
                file_bytes: 64 << 10,
                min_block: 4 << 10,
                max_block: 16 << 10,
                seconds: 0.5,
                max_bytes: 1 << 20,
                seed: 1,
                depth: 4,
            },
            direct: false,
            fallback: Some("tmpfs".into()),
            fill_seconds: 0.1,
            points,
        }
    }

    /// The text says how the file was read, the table has a row a block size and a column a
    /// pattern ("-" where a figure is missing), and the block sizes the paper's rule picks
    /// are read from the plateaus and knees.
    #[test]
    fn a_report_reads_as_its_table_plateaus_and_knees() {
        let report = made_report();
        let rows: Vec<Vec<String>> = table(&report).rows;
        assert_eq!(
            rows,
            [
                ["4KiB", "100", "10", "50", "-"],
                ["8KiB", "200", "190", "100", "10"],
                ["16KiB", "200", "200", "100", "95"],
            ]
            .map(|r| r.map(String::from).to_vec())
        );
        assert_eq!(
            table(&report).header,
            [
                "block",
                "sequential read",
                "random read",
                "sequential write",
                "random write"
            ]
        );
        let text = render(&report, 0.9);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "Throughput against block size, MB/s (Fig. 1): a 64KiB file in /d, through the page \
             cache (tmpfs: reads may not reach the device), queue depth 4; each figure at most \
             0.5 s or 1MiB of transfers"
        );
        assert!(text.contains(&table(&report).render()), "{text}");
        assert!(
            text.ends_with(
                "sequential reads settle at 200 MB/s, writes at 100 MB/s (the median over the \
                 larger half of the block sizes); the smallest block at which the random pattern \
                 reaches 90% of that, at it and the next size: reads 8KiB (B_r; the paper's \
                 SSD: 128KiB), writes 16KiB (B_w; the paper's SSD: 16MiB)\n\n"
            ),
            "{text}"
        );
        // A rule no block meets; O_DIRECT; no sequential writes measured.
        let mut direct = made_report();
        direct.fallback = None;
        direct
            .points
            .retain(|p| p.access != Access::SequentialWrite);
        let text = render(&direct, 1.5);
        assert!(
            text.contains(", through O_DIRECT, queue depth 4;"),
            "{text}"
        );
        assert!(
            text.contains(
                "settle at 200 MB/s, writes at - (the median over the larger half of the block \
                 sizes); the smallest block at which the random pattern reaches 150% of that, at \
                 it and the next size: reads none up to 16KiB (B_r; the paper's SSD: 128KiB), \
                 writes none up to 16KiB (B_w;"
            ),
            "{text}"
        );
    }

    /// Fig. 1: a line a pattern through its own points, the depth in the title unless 1.
    #[test]
    fn the_chart_draws_each_patterns_points() {
        let report = made_report();
        let chart = chart(&report);
        assert_eq!(
            chart.title,
            "Throughput against block size, this machine's disk, 4 in flight (Fig. 1)"
        );
        for (series, access) in chart.series.iter().zip(Access::ALL) {
            assert_eq!(series.name, access.name());
            let expected: Vec<(f64, f64)> = report
                .points
                .iter()
                .filter(|p| p.access == access)
                .map(|p| (p.block_bytes as f64, p.mb_per_s()))
                .collect();
            assert_eq!(series.points, expected);
        }
        assert_eq!(chart.series[3].points.len(), 2);
        let mut one = made_report();
        one.spec.depth = 1;
        assert_eq!(
            super::chart(&one).title,
            "Throughput against block size, this machine's disk (Fig. 1)"
        );
    }

    #[test]
    fn a_bad_probe_is_the_specs_fault() {
        let dir = tempfile::tempdir().expect("tempdir");
        let spec = ProbeSpec {
            file_bytes: 1000,
            min_block: 4 << 10,
            max_block: 16 << 10,
            seconds: 0.01,
            max_bytes: 64 << 10,
            seed: 1,
            depth: 1,
        };
        let error = measure(
            dir.path(),
            &spec,
            &crate::temporaries::Unwatched,
            &NoProgress,
        )
        .expect_err("the file is smaller than a block");
        assert!(matches!(error, LabError::Config(_)), "{error:?}");
        // Bad input is the spec's fault too; a run that goes wrong is not.
        let input = em_error(EmError::Input {
            path: "in".into(),
            detail: "short".into(),
        });
        assert!(matches!(input, LabError::Config(_)), "{input:?}");
        for error in [
            EmError::Verify("out of order".into()),
            EmError::Device("worn".into()),
        ] {
            let sorted = em_error(error);
            assert!(matches!(sorted, LabError::Run(_)), "{sorted:?}");
        }
    }
}
