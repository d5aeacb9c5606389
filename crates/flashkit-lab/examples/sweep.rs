//! A small sweep through the library alone, with no command line and no sweep file: the
//! page FTL's write amplification as over-provisioning grows, under three garbage-collection
//! policies, on one hot/cold workload; every cell on its own core, each result printed as it
//! finishes and the grid printed in its own order at the end.
//!
//! ```text
//! cargo run --release -p flashkit-lab --example sweep
//! ```

use flashkit_ftl::FtlKind;
use flashkit_ftl::GcPolicy;
use flashkit_lab::Executor;
use flashkit_lab::sweep;
use flashkit_sim::{DeviceSpec, NoProgress, RunSpec, Source};
use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};
use std::collections::BTreeMap;

fn main() {
    let capacity = 256 << 20;
    let workload = WorkloadSpec::new(
        Pattern::HotCold {
            access_percent: 80.0,
            space_percent: 20.0,
        },
        SizeDist::Fixed { bytes: 4096 },
        200_000,
        capacity * 3 / 4,
    );
    let mut cells = Vec::new();
    for op in [0.07, 0.15, 0.28] {
        for gc in [GcPolicy::Greedy, GcPolicy::CostBenefit, GcPolicy::Fifo] {
            let mut spec = RunSpec {
                label: format!("page {gc}"),
                ftl: FtlKind::Page,
                options: Default::default(),
                device: DeviceSpec {
                    capacity_bytes: capacity,
                    over_provisioning: op,
                    ..DeviceSpec::default()
                },
                precondition: None,
                seed: 1,
            };
            spec.options.page.gc_policy = gc;
            let params = BTreeMap::from([
                ("device.op".to_string(), op.to_string()),
                ("ftl.gc".to_string(), gc.to_string()),
            ]);
            cells.push(sweep::cell(
                params,
                spec,
                Source::Workload(workload.clone()),
                BTreeMap::new(),
            ));
        }
    }
    let results = sweep::run(
        &cells,
        &Executor::per_core(),
        |_, _| NoProgress,
        |worker, result| eprintln!("worker {worker} finished {}", result.id),
    );
    println!("{:<34} {:>8} {:>10}", "cell", "WA", "erases");
    for result in &results {
        match &result.error {
            None => println!(
                "{:<34} {:>8.3} {:>10}",
                result.id,
                result
                    .metrics
                    .get("write_amplification")
                    .copied()
                    .unwrap_or(f64::NAN),
                result
                    .metrics
                    .get("flash_erases")
                    .copied()
                    .unwrap_or(f64::NAN)
            ),
            Some(error) => println!("{:<34} failed: {error}", result.id),
        }
    }
}
