//! The `flashkit` command-line tool: the only crate that prints, and the only one that uses
//! `anyhow`. Exit codes: 0 success, 1 runtime failure (a trace that cannot be read, an FTL
//! that runs out of space), 2 usage error (bad flags, config or parameters).

// A binary has no public API to document; its help text is the documentation.
#![allow(missing_docs)]

mod args;
mod commands;
mod failure;
mod interrupt;
mod output;
mod progress;

use args::{Cli, Command, TraceCommand};
use clap::{CommandFactory, FromArgMatches};
use failure::Failure;
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => error.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let given = args::given_on_command_line(&matches);
    interrupt::install();
    interrupt::stop_quietly_on_broken_pipe();
    if cli.config.is_some()
        && let Some(why) = ignores_config(&cli.command)
    {
        return report(Failure::Usage(anyhow::anyhow!(
            "--config gives defaults to compare, replay, trace gen, trace stats, trace \
             convert, trace bench, and the em commands run on an FTL (--ftl); {why}: drop \
             --config"
        )));
    }
    if let Some(path) = &cli.config {
        output::note_input(path);
    }
    let config = match flashkit_lab::config::ConfigFile::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(error) => return report(Failure::usage(error)),
    };
    let result = match cli.command {
        Command::Compare(args) => commands::compare::run(args, &config),
        Command::Replay(args) => commands::replay::run(args, &config),
        Command::Trace(TraceCommand::Gen(args)) => commands::trace::generate(args, &config),
        Command::Trace(TraceCommand::Stats(args)) => commands::trace::stats(args, &config),
        Command::Trace(TraceCommand::Convert(args)) => {
            commands::trace_tools::convert(args, &config)
        }
        Command::Trace(TraceCommand::Detect(args)) => commands::trace_tools::detect(args),
        Command::Trace(TraceCommand::Bench(args)) => commands::trace_tools::bench(args, &config),
        Command::Bench(args) => commands::bench::run(args),
        Command::Sweep(args) => commands::sweep::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Presets => commands::presets(),
        Command::Index(command) => commands::index::run(command, &given),
        Command::Reproduce(paper) => commands::reproduce::run(paper, &given),
        Command::Em(command) => commands::em::run(command, &config),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics on a failed write, where `print!`
            // fails as every other output does (a closed pipe exits 141).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "flashkit", &mut script);
            print!("{}", String::from_utf8_lossy(&script));
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => report(failure),
    }
}

/// Why `command` would not read a `--config` file (which is global, so every subcommand
/// accepts it), or `None` if it does.
fn ignores_config(command: &Command) -> Option<&'static str> {
    use commands::em::EmCommand;
    match command {
        Command::Compare(_)
        | Command::Replay(_)
        | Command::Trace(
            TraceCommand::Gen(_)
            | TraceCommand::Stats(_)
            | TraceCommand::Convert(_)
            | TraceCommand::Bench(_),
        ) => None,
        Command::Em(EmCommand::Sort(args)) if args.ftl.is_some() => None,
        Command::Em(EmCommand::Bfs(args) | EmCommand::Dfs(args)) if args.ftl.is_some() => None,
        Command::Em(_) => Some("this em command runs without --ftl, so it reads none"),
        Command::Trace(TraceCommand::Detect(_)) => Some("trace detect reads none"),
        Command::Sweep(_) => Some("a sweep takes its defaults from the sweep file's [base] table"),
        Command::Bench(_) => Some("bench takes its options from the command line only"),
        Command::Report(_) => Some("report reads none"),
        Command::Presets => Some("presets reads none"),
        Command::Completions { .. } => Some("completions reads none"),
        Command::Index(_) => Some("index bench takes its options from the command line only"),
        Command::Reproduce(_) => {
            Some("a reproduction runs the paper's own settings, changed on its command line only")
        }
    }
}

fn report(failure: Failure) -> ExitCode {
    let (error, code) = match failure {
        Failure::Usage(error) => (error, 2),
        Failure::Runtime(error) => (error, 1),
    };
    eprintln!("error: {error:#}");
    ExitCode::from(code)
}
