//! `--ftl` for `flashkit em sort --records`, `em bfs` and `em dfs`: the device and FTL
//! options resolved (flags, then the config file's `[device]` and `[ftl]`) into the lab's
//! [`FtlSpec`]; the lab sizes the device to the algorithm and runs it.

use crate::args::em::FtlDeviceArgs;
use crate::failure::Failure;
use anyhow::anyhow;
use flashkit_core::units::format_size;
use flashkit_ftl::FtlKind;
use flashkit_lab::config::{self as settings, ConfigFile};
use flashkit_lab::em::ftl::{FtlSpec, NotWholePages};
use flashkit_lab::repro::LabError;

/// `--ftl KIND` with the device and FTL options, or `None` without `--ftl`. Refuses FTL
/// options the FTL does not read, and several values of one (an em command runs one FTL).
pub fn spec(
    kind: Option<FtlKind>,
    args: &FtlDeviceArgs,
    config: &ConfigFile,
) -> Result<Option<FtlSpec>, Failure> {
    let Some(kind) = kind else {
        return Ok(None);
    };
    settings::check_ftl_options(&args.ftl, &[kind], &format!("--ftl {kind}"))
        .map_err(Failure::usage)?;
    let device = settings::device_spec(&args.device, &config.device).map_err(Failure::usage)?;
    let listed = settings::listed_ftl_options(&args.ftl, &config.ftl);
    if !listed.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "an em command runs one FTL: give one value of {} (compare runs several)",
            listed.join(", ")
        )));
    }
    let (_, options) = settings::ftl_options(&args.ftl, &config.ftl);
    Ok(Some(FtlSpec {
        ftl: kind,
        options,
        device,
        keep_capacity: args.device.capacity.or(config.device.capacity).is_some(),
        keep_over_provisioning: args.device.op.or(config.device.op).is_some(),
    }))
}

/// A lab error of an em run, block sizes that are not whole FTL pages told with the flags
/// that change them.
pub fn failure(error: LabError) -> Failure {
    if let LabError::Config(e) = &error
        && let Some(e) = e.downcast_ref::<NotWholePages>()
    {
        return Failure::Usage(anyhow!(
            "B_r = {} and B_w = {} must both be multiples of the FTL's {} page (preset {}): \
             raise --br and --bw or choose a smaller --page-size",
            format_size(e.sizes.read_bytes),
            format_size(e.sizes.write_bytes),
            format_size(e.page_bytes),
            e.preset
        ));
    }
    crate::commands::reproduce::lab_failure(error)
}
