//! `flashkit em probe`: this machine's disk, throughput against block size for sequential
//! and random reads and writes (Fig. 1 of Ajwani et al., SEA 2009), and the B_r and B_w the
//! paper's rule picks from it. `reproduce flashmodel` runs the same probe as its Fig. 1.

use crate::args::Size;
use crate::commands::em::failure;
use crate::output::write_json;
use crate::progress::SharedBar;
use crate::{Failure, Outcome};
use clap::Args;
use flashkit_core::units::format_size;
use flashkit_em::probe::{Access, ProbeReport, ProbeSpec, probe};
use flashkit_report::Table;
use flashkit_report::plot::{Axis, Legend, LineChart, Series};
use std::path::{Path, PathBuf};

/// The paper's rule: a random pattern "reaches optimal performance" at this fraction of the
/// sequential throughput (the paper does not say how close it took "optimal" to be).
pub const DEFAULT_FRACTION: f64 = 0.9;

/// The paper's B_r and B_w for its 64 GB HAMA SSD (section 4).
const PAPER_BR: u64 = 128 << 10;
const PAPER_BW: u64 = 16 << 20;

/// Options of `flashkit em probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Directory on the device to measure; a file of --file-size is written there and removed
    /// afterwards [default: the system's temporary directory].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Size of the probe file: larger than the caches in front of the device reads truer.
    #[arg(long, default_value = "1G", value_name = "SIZE")]
    pub file_size: Size,
    /// Smallest block size (a power of two of at least 512 B; O_DIRECT needs 4 KiB).
    #[arg(long, default_value = "4K", value_name = "SIZE")]
    pub min_block: Size,
    /// Largest block size (a power of two; the paper's Fig. 1 goes to 64 MB).
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub max_block: Size,
    /// Time budget of one measurement (a pattern at a block size), seconds.
    #[arg(long, default_value_t = 0.5, value_name = "S")]
    pub seconds: f64,
    /// Byte budget of one measurement.
    #[arg(long, default_value = "1G", value_name = "SIZE")]
    pub max_bytes: Size,
    /// The fraction of sequential throughput a random pattern must reach for its block size
    /// to count as "optimal" (the paper's rule for B_r and B_w).
    #[arg(long, default_value_t = DEFAULT_FRACTION, value_name = "F")]
    pub fraction: f64,
    /// Seed of the random offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Transfers in flight at once: this many threads issuing synchronous transfers, each
    /// with a buffer of --max-block. 1 is what the paper's algorithms issue; a modern SSD
    /// shows its parallelism only at 4 to 32.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub depth: u32,
    /// Write every measurement as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Draw the throughput against block size as SVG (the paper's Fig. 1).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

impl ProbeArgs {
    /// The probe these options ask for.
    pub fn spec(&self) -> ProbeSpec {
        ProbeSpec {
            file_bytes: self.file_size.0,
            min_block: self.min_block.0,
            max_block: self.max_block.0,
            seconds: self.seconds,
            max_bytes: self.max_bytes.0,
            seed: self.seed,
            depth: self.depth,
        }
    }
}

/// `flashkit em probe`.
pub fn run(args: &ProbeArgs) -> Outcome {
    if !(args.fraction > 0.0 && args.fraction <= 1.0) {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--fraction must be in (0, 1], got {}",
            args.fraction
        )));
    }
    crate::output::check_outputs(&[
        ("--json", args.json.as_deref()),
        ("--svg", args.svg.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let report = measure(&dir, &args.spec())?;
    print!("{}", render(&report, args.fraction));
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    if let Some(path) = &args.svg {
        let svg = chart(&report)
            .svg()
            .map_err(|e| Failure::Runtime(e.into()))?;
        crate::output::write_file(path, svg).map_err(Failure::Runtime)?;
    }
    Ok(())
}

/// Run the probe in `dir` with a progress bar.
pub fn measure(dir: &Path, spec: &ProbeSpec) -> Result<ProbeReport, Failure> {
    if !dir.is_dir() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let _file = crate::interrupt::temporary(&flashkit_em::probe::probe_file(dir));
    let bar = SharedBar::new("probe");
    probe(dir, spec, &bar).map_err(failure)
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
    out.push_str(&table.render());
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
