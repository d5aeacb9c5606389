//! `flashkit em bfs` and `flashkit em dfs`: the graph algorithms of `flashkit_lab::em::graph`
//! on the simulated device, or (`--ftl`) on an FTL sized by a dry run on the simulator.

use crate::args::em::GraphArgs;
use crate::commands::em_ftl::failure;
use crate::failure::{Failure, Outcome};
use crate::output::write_json;
use anyhow::anyhow;
use flashkit_lab::config::ConfigFile;
use flashkit_lab::em::graph::{self, GraphSpec};

/// The lab's spec of a graph run, once `--json` can be written.
fn spec(args: &GraphArgs, config: &ConfigFile) -> Result<GraphSpec, Failure> {
    crate::output::check_outputs(&[("--json", args.json.as_deref())]).map_err(Failure::Usage)?;
    Ok(GraphSpec {
        graph: args
            .graph
            .parse()
            .map_err(|e: String| Failure::Usage(anyhow!(e)))?,
        vertices: args.vertices,
        io: args.io,
        mu: args.mu,
        cache: args.cache.map(|s| s.0),
        seed: args.seed,
        params: args.params.spec(),
        ftl: crate::commands::em_ftl::spec(args.ftl, &args.ftl_device, config)?,
    })
}

/// Print the run, and save it with `--json`.
fn show<T: serde::Serialize>(args: &GraphArgs, text: String, run: &graph::GraphRun<T>) -> Outcome {
    print!("{text}");
    if let Some(path) = &args.json {
        write_json(path, run)?;
    }
    Ok(())
}

pub fn bfs(args: &GraphArgs, config: &ConfigFile) -> Outcome {
    let run = graph::bfs(&spec(args, config)?).map_err(failure)?;
    show(args, run.render(), &run)
}

pub fn dfs(args: &GraphArgs, config: &ConfigFile) -> Outcome {
    let run = graph::dfs(&spec(args, config)?).map_err(failure)?;
    show(args, run.render(), &run)
}
