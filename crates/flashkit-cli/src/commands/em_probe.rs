//! `flashkit em probe`: this machine's disk, throughput against block size for sequential
//! and random reads and writes (Fig. 1 of Ajwani et al., SEA 2009), and the B_r and B_w the
//! paper's rule picks from it, measured and shown by [`flashkit_lab::probe`], which
//! `reproduce flashmodel` runs as its Fig. 1.

use crate::commands::reproduce::lab_failure;
use crate::interrupt::OnInterrupt;
use crate::output::write_json;
use crate::progress::SharedBar;
use crate::{Failure, Outcome};
use clap::Args;
use flashkit_em::probe::ProbeSpec;
use flashkit_lab::config::Size;
use flashkit_lab::probe::{self, DEFAULT_FRACTION};
use std::path::PathBuf;

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
    if !dir.is_dir() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "{} is not a directory",
            dir.display()
        )));
    }
    let bar = SharedBar::new("probe");
    let report = probe::measure(&dir, &args.spec(), &OnInterrupt, &bar).map_err(lab_failure)?;
    print!("{}", probe::render(&report, args.fraction));
    if let Some(path) = &args.json {
        write_json(path, &report)?;
    }
    if let Some(path) = &args.svg {
        let svg = probe::chart(&report)
            .svg()
            .map_err(|e| Failure::Runtime(e.into()))?;
        crate::output::write_file(path, svg).map_err(Failure::Runtime)?;
    }
    Ok(())
}
