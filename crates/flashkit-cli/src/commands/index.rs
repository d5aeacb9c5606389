//! `flashkit index bench`: one flash index through a benchmark ([`flashkit_lab::index`]).

use crate::args::index::IndexCommand;
use crate::commands::reproduce::{flags_in, lab_failure};
use crate::failure::{Failure, Outcome};
use crate::output::{write_csv, write_json};
use anyhow::anyhow;
use flashkit_lab::index;

/// `flashkit index`; `given` holds the options given on the command line, by clap id
/// (their field names).
pub fn run(command: IndexCommand, given: &[String]) -> Outcome {
    let IndexCommand::Bench(args) = command;
    let spec = args.spec();
    let given: Vec<&str> = given.iter().map(String::as_str).collect();
    let unused = spec.unused(&given);
    if !unused.is_empty() {
        return Err(refuse_unused(&unused));
    }
    crate::output::check_outputs(&[
        ("--json", args.json.as_deref()),
        ("--csv", args.csv.as_deref()),
    ])
    .map_err(Failure::Usage)?;
    let bench = index::run(&spec).map_err(lab_failure)?;
    print!("{}", flashkit_lab::repro::text_of(&bench.printed));
    println!(
        "wall clock: {:.2} s (simulation speed, not simulated time)",
        bench.wall_seconds
    );
    if let Some(path) = &args.json {
        let document = bench.document(args.wall_clock_in_json);
        write_json(path, &document.json)?;
    }
    if let Some(path) = &args.csv {
        write_csv(path, &bench.phases)?;
    }
    Ok(())
}

/// The usage error for options the run would not read: "--slots is an option for fatlist,
/// not --structure mutree: drop it".
fn refuse_unused(unused: &[index::Unused]) -> Failure {
    let count: usize = unused.iter().map(|u| u.fields.len()).sum();
    let problems: Vec<String> = unused
        .iter()
        .map(|u| {
            let names: Vec<String> = u.fields.iter().map(|f| format!("`{f}`")).collect();
            flashkit_lab::config::unused_options(&names, &format!("{}, not {}", u.what, u.chosen))
        })
        .collect();
    Failure::Usage(anyhow!(
        "{}: drop {}",
        flags_in(&problems.join("; ")),
        if count == 1 { "it" } else { "them" }
    ))
}
