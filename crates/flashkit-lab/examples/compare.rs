//! A comparison through the library alone, with no command line: every FTL on one generated
//! workload, run side by side, each run's headline figures printed.
//!
//! ```text
//! cargo run --release -p flashkit-lab --example compare
//! ```

use flashkit_lab::Executor;
use flashkit_lab::compare::{self, CompareSpec};
use flashkit_sim::{DeviceSpec, NoProgress, Precondition, Source};
use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};

fn main() {
    let spec = CompareSpec {
        ftls: Vec::new(),
        gc_policies: Vec::new(),
        vet_variants: Vec::new(),
        options: Default::default(),
        device: DeviceSpec {
            capacity_bytes: 256 << 20,
            ..DeviceSpec::default()
        },
        precondition: Some(Precondition::default()),
        seed: 1,
    };
    let plan = spec.plan();
    let mut workload = WorkloadSpec::new(
        Pattern::HotCold {
            access_percent: 80.0,
            space_percent: 20.0,
        },
        SizeDist::Fixed { bytes: 4096 },
        100_000,
        256 << 20,
    );
    workload.read_fraction = 0.3;
    let source = Source::Workload(workload);
    let results = compare::run(
        &plan.runs,
        &source,
        &Executor::per_core(),
        |_, _| NoProgress,
        |_, spec| eprintln!("finished {}", spec.label),
    );
    println!("{:<20} {:>8} {:>10}  state hash", "run", "WA", "erases");
    for (spec, result) in plan.runs.iter().zip(results) {
        match result {
            Ok(outcome) => {
                let r = &outcome.report;
                println!(
                    "{:<20} {:>8.3} {:>10}  {}",
                    spec.label,
                    r.write_amplification.unwrap_or(f64::NAN),
                    r.flash.erases.total(),
                    r.state_hash
                );
            }
            Err(error) => println!("{:<20} failed: {error}", spec.label),
        }
    }
}
