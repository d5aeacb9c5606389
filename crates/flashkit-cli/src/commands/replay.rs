//! `flashkit replay`: one trace through one FTL.

use crate::args::ReplayArgs;
use crate::failure::{Failure, Outcome, sim_failure};
use crate::progress::Bar;
use flashkit_lab::config::{self as settings, ConfigFile};
use flashkit_sim::RunSpec;

pub fn run(args: ReplayArgs, config: &ConfigFile) -> Outcome {
    settings::check_runs_blamed(
        &settings::RunFlags {
            device: &args.device,
            ftl: &args.ftl_options,
            workload: &args.workload,
            kinds: &[args.ftl],
            trace: args.trace.is_some(),
        },
        config,
    )
    .map_err(Failure::usage)?;
    let mut device = settings::device_spec(&args.device, &config.device).map_err(Failure::usage)?;
    device.resolve().map_err(sim_failure)?;
    let capacity_given = args.device.capacity.or(config.device.capacity).is_some();
    settings::check_ftl_options(
        &args.ftl_options,
        &[args.ftl],
        &format!("--ftl {}", args.ftl),
    )
    .map_err(Failure::usage)?;
    let listed = settings::listed_ftl_options(&args.ftl_options, &config.ftl);
    if !listed.is_empty() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "replay runs one FTL: give one value of {} (compare runs several)",
            listed.join(", ")
        )));
    }
    let (policies, mut options) = settings::ftl_options(&args.ftl_options, &config.ftl);
    options.page.gc_policy = policies.first().copied().unwrap_or(options.page.gc_policy);
    let label = flashkit_lab::compare::label(args.ftl, &options);
    let (source, _stdin) = super::trace_tools::source(
        args.trace.as_deref(),
        &args.trace_options,
        &args.workload,
        config,
        &mut device,
        capacity_given,
    )?;
    args.output.check_not_inputs()?;
    let spec = RunSpec {
        label,
        ftl: args.ftl,
        options,
        device,
        precondition: settings::precondition(&args.run, &config.run),
        seed: settings::seed(&args.run, &config.run),
    };
    spec.check_on(&source).map_err(sim_failure)?;
    flashkit_sim::check_memory(std::slice::from_ref(&spec), 1).map_err(sim_failure)?;
    let outcome = flashkit_sim::run(&spec, &source, &Bar::new(&spec.label)).map_err(sim_failure)?;
    super::compare::print_and_save(&[outcome], &args.output, 1, &[])
}
