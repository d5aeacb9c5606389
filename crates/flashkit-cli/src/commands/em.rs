//! `flashkit em`: external-memory algorithms under the flash models of Ajwani et al.
//! (SEA 2009), run by `flashkit_lab::em`: model calculators, input generation, sorting real
//! files (or generated records on a simulated device or an FTL), BFS and DFS. Here: the
//! options turned into the lab's specs, and its results printed and saved.

pub use crate::args::em::EmCommand;
use crate::args::em::{GenArgs, ModelArgs, SortArgs};
use crate::commands::reproduce::lab_failure;
use crate::failure::{Failure, Outcome};
use crate::interrupt::OnInterrupt;
use crate::output::{Staged, write_json};
use crate::progress::Bar;
use anyhow::{Context, anyhow};
use flashkit_core::Progress as _;
use flashkit_lab::config::ConfigFile;
use flashkit_lab::em::{files, model};

pub fn run(command: EmCommand, config: &ConfigFile) -> Outcome {
    match command {
        EmCommand::Model(args) => predict(&args),
        EmCommand::Gen(args) => generate(&args),
        EmCommand::Sort(args) if args.records.is_some() => {
            crate::commands::em_sim::sort_records(&args, config)
        }
        EmCommand::Sort(args) => sort(&args),
        EmCommand::Bfs(args) => crate::commands::em_graph::bfs(&args, config),
        EmCommand::Dfs(args) => crate::commands::em_graph::dfs(&args, config),
        EmCommand::Probe(args) => crate::commands::em_probe::run(&args),
    }
}

fn predict(args: &ModelArgs) -> Outcome {
    let spec = model::ModelSpec {
        records: args.records,
        record: args.record,
        vertices: args.vertices,
        params: args.params.spec(),
    };
    print!("{}", model::predict(&spec).map_err(lab_failure)?.render());
    Ok(())
}

fn generate(args: &GenArgs) -> Outcome {
    let spec = files::GenSpec {
        records: args.records,
        record: args.record,
        order: args.order,
        seed: args.seed,
    };
    let bar = Bar::new("em gen");
    let staged = Staged::new(&args.output).map_err(Failure::Usage)?;
    let report = files::generate(staged.path(), &spec, &bar).map_err(lab_failure)?;
    staged.commit()?;
    bar.finish();
    print!("{}", report.render(&args.output));
    Ok(())
}

/// Refuse what sorting a file would not read: clap's `requires = "records"` is waived once
/// `--output` (which conflicts with `--records`) is present, and `--ftl`'s device and FTL
/// options require only `--ftl` (`--input F --output O --ftl page` sorted the file and
/// ignored `--ftl`); and standard input, which the sort cannot read by offset.
fn check_file_sort(args: &SortArgs) -> Outcome {
    let mut stray = flashkit_lab::config::given(&[
        (args.seed.is_some(), "--seed"),
        (args.ftl.is_some(), "--ftl"),
    ]);
    stray.extend(args.ftl_device.device.given());
    stray.extend(args.ftl_device.ftl.given());
    if !stray.is_empty() {
        let names: Vec<String> = stray.iter().map(|n| n.to_string()).collect();
        return Err(Failure::Usage(anyhow!(
            "{}: drop {}",
            flashkit_lab::config::unused_options(
                &names,
                "sorting generated records (--records), not a file (--input)"
            ),
            if names.len() == 1 { "it" } else { "them" }
        )));
    }
    if args.input.as_ref().is_some_and(|i| i.as_os_str() == "-") {
        return Err(Failure::Usage(anyhow!(
            "--input -: the sort reads its input by offset, so not from standard input; give \
             a file of raw records"
        )));
    }
    Ok(())
}

fn sort(args: &SortArgs) -> Outcome {
    check_file_sort(args)?;
    let input = args
        .input
        .clone()
        .expect("invariant: clap requires --input without --records");
    crate::output::note_input(&input);
    crate::output::check_outputs(&[
        ("--output", args.output.as_deref()),
        ("--json", args.json.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    if args.in_memory {
        let report = files::sort_in_memory(&input, args.record).map_err(lab_failure)?;
        print!("{}", report.render());
        return Ok(());
    }
    let output = args
        .output
        .as_ref()
        .expect("invariant: clap requires --output without --in-memory");
    // The sorted records appear at --output only once the sort has checked them.
    let staged = Staged::new(output).map_err(Failure::Usage)?;
    let spec = files::SortSpec {
        input,
        output: staged.path().to_path_buf(),
        tmp: args.tmp.clone(),
        record: args.record,
        io: args.mode(),
        fan_in: args.fan_in,
        resident_runs: args.resident_runs,
        direct: !args.buffered,
        threads: args.threads.map(|t| t as usize),
        params: args.params.spec(),
    };
    let bar = Bar::new("em sort");
    let report = files::sort(&spec, &OnInterrupt, &bar).map_err(lab_failure)?;
    staged.commit()?;
    bar.finish();
    print!("{}", report.render());
    if let Some(path) = &args.json {
        write_json(path, &report).context("writing the JSON report")?;
    }
    Ok(())
}
