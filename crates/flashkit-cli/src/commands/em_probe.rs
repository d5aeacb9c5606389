//! `flashkit em probe`: this machine's disk, throughput against block size for sequential
//! and random reads and writes (Fig. 1 of Ajwani et al., SEA 2009), and the B_r and B_w the
//! paper's rule picks from it, measured and shown by [`flashkit_lab::probe`], which
//! `reproduce flashmodel` runs as its Fig. 1.

use crate::args::em::ProbeArgs;
use crate::commands::reproduce::lab_failure;
use crate::failure::{Failure, Outcome};
use crate::interrupt::OnInterrupt;
use crate::output::write_json;
use crate::progress::Bar;
use flashkit_em::probe::ProbeSpec;
use flashkit_lab::probe;

/// The probe these options ask for.
fn spec(args: &ProbeArgs) -> ProbeSpec {
    ProbeSpec {
        file_bytes: args.file_size.0,
        min_block: args.min_block.0,
        max_block: args.max_block.0,
        seconds: args.seconds,
        max_bytes: args.max_bytes.0,
        seed: args.seed,
        depth: args.depth,
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
    let bar = Bar::new("probe");
    let report = probe::measure(&dir, &spec(args), &OnInterrupt, &bar).map_err(lab_failure)?;
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
