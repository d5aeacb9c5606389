//! A paper's reproduction through the library alone, with no command line: the GRR paper's
//! evaluation (Jin, Cho, Chung, IMCOM 2014) at a fifth of its size, its tables printed, its
//! claims ledger summed up, and its figures written as SVG into a directory.
//!
//! ```text
//! cargo run --release -p flashkit-lab --example reproduce_grr [-- OUT_DIR]
//! ```

use flashkit_lab::claims::Tally;
use flashkit_lab::repro::grr::{self, GrrSpec};
use flashkit_report::plot::PlotError;
use flashkit_sim::NoProgress;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let spec = GrrSpec {
        quick: true,
        ..GrrSpec::default()
    };
    let reproduction = match grr::run(&spec, &NoProgress) {
        Ok(r) => r,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", reproduction.text());
    let tally = Tally::of(&reproduction.claims);
    println!(
        "{} runs; of the paper's {} claims {} hold, {} in shape only, {} do not hold",
        reproduction.runs,
        reproduction.claims.len(),
        tally.holds,
        tally.in_shape,
        tally.does_not_hold
    );
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        return ExitCode::SUCCESS;
    };
    if let Err(error) = std::fs::create_dir_all(&dir) {
        eprintln!("error: cannot create {}: {error}", dir.display());
        return ExitCode::FAILURE;
    }
    for figure in &reproduction.figures {
        let path = dir.join(&figure.name);
        let written = match figure.chart.svg() {
            Ok(svg) => std::fs::write(&path, svg).map_err(|e| e.to_string()),
            Err(PlotError::Empty(_)) => continue,
            Err(e) => Err(e.to_string()),
        };
        match written {
            Ok(()) => println!("wrote {}", path.display()),
            Err(error) => {
                eprintln!("error: {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
