//! `flashkit em sort --records N`: sort generated records on a simulated device, the
//! counting simulator with data or (with `--ftl`) any FTL on the NAND model, run by
//! `flashkit_lab::em::records`.

use crate::args::em::SortArgs;
use crate::commands::em_ftl::failure;
use crate::failure::{Failure, Outcome};
use crate::output::write_json;
use crate::progress::Bar;
use anyhow::Context;
use flashkit_core::Progress as _;
use flashkit_lab::config::ConfigFile;
use flashkit_lab::em::records::{RecordSortSpec, sort_records as run};

/// Sort `--records` generated records on the simulator or the FTL.
pub fn sort_records(args: &SortArgs, config: &ConfigFile) -> Outcome {
    crate::output::check_outputs(&[("--json", args.json.as_deref())]).map_err(Failure::Usage)?;
    let spec = RecordSortSpec {
        records: args.records.expect("invariant: called only with --records"),
        record: args.record,
        seed: args.seed.unwrap_or(1),
        io: args.mode(),
        fan_in: args.fan_in,
        resident_runs: args.resident_runs,
        params: args.params.spec(),
        ftl: crate::commands::em_ftl::spec(args.ftl, &args.ftl_device, config)?,
    };
    let bar = Bar::new("em sort");
    let report = run(&spec, &bar).map_err(failure)?;
    bar.finish();
    print!("{}", report.render());
    if let Some(path) = &args.json {
        write_json(path, &report).context("writing the JSON report")?;
    }
    Ok(())
}
