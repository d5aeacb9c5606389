//! `flashkit reproduce vet`: the evaluation of Suh, Moon, Efrat, Kim and Lee, "Memory
//! efficient and scalable address mapping for flash storage devices" (JSA 2014), run by
//! [`flashkit_lab::repro::vet`]; this module refuses options that the run would not read,
//! turns the others into its spec and renders what comes back.

use super::{Figures, lab_failure, show};
use crate::args::VetReproArgs;
use crate::failure::{Failure, Outcome};
use crate::progress::Bar;
use anyhow::anyhow;
use flashkit_lab::config::unused_options;
use flashkit_lab::repro::vet::{self, Column, PaperTraceFile, VetSpec};
use flashkit_trace::formats::examine;
use flashkit_trace::formats::layout::AddressMapping;

impl VetReproArgs {
    /// The lab's spec of these options; a `--paper-trace` naming no column of the paper is
    /// a usage error that lists them.
    pub fn spec(&self) -> Result<VetSpec, Failure> {
        let options = &self.paper_trace_options;
        let paper_trace = self
            .paper_trace
            .iter()
            .map(|(name, path)| {
                let column = Column::from_name(name).ok_or_else(|| {
                    let names: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
                    Failure::Usage(anyhow!(
                        "unknown paper workload {name:?} in --paper-trace {name}={}; expected \
                         one of: {}",
                        path.display(),
                        names.join(", ")
                    ))
                })?;
                Ok(PaperTraceFile {
                    column,
                    path: path.clone(),
                })
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        let (trace_options, _) = flashkit_lab::config::trace_options(
            options,
            &flashkit_lab::config::TraceSection::default(),
        );
        Ok(VetSpec {
            quick: self.quick,
            scale: self.scale,
            traces: self.traces.clone(),
            spew_requests: self.spew_requests,
            spew_max_gib: self.spew_max_gib,
            seed: self.seed,
            runs: self.runs,
            workload: self.workload.clone(),
            scheme: self.scheme.clone(),
            paper_trace,
            trace_options,
            address_map: options.address_map.unwrap_or(AddressMapping::Identity),
        })
    }
}

/// Run the workloads and schemes asked for (all by default), print their tables beside the
/// paper's figures, and write `--out` when asked.
pub fn run(args: VetReproArgs, given: &[String]) -> Outcome {
    refuse_unread(&args, given)?;
    let spec = args.spec()?;
    for file in &spec.paper_trace {
        crate::output::note_input(&file.path);
        if args.paper_trace_options.explain_format {
            let examined = examine(&file.path).map_err(|e| Failure::Runtime(e.into()))?;
            eprint!("{}", examined.explain());
        }
    }
    let mut figures = Figures::prepare(args.out.as_deref())?;
    let bar = Bar::new("reproduce vet");
    let reproduction = vet::run(&spec, &bar).map_err(lab_failure)?;
    show(&reproduction, None, None, figures.as_mut())
}

/// Refuse options given on the command line that the run would not read: the reading
/// options without a `--paper-trace` (the excerpts have fixed ones), and Fig. 16's when
/// `--workload` or `--scheme` leaves it out.
fn refuse_unread(args: &VetReproArgs, given: &[String]) -> Outcome {
    let them = |n: usize| if n == 1 { "it" } else { "them" };
    let trace_options: Vec<String> = args
        .paper_trace_options
        .given()
        .into_iter()
        .map(String::from)
        .collect();
    if args.paper_trace.is_empty() && !trace_options.is_empty() {
        return Err(Failure::Usage(anyhow!(
            "{}, and none was given: drop {}",
            unused_options(&trace_options, "reading --paper-trace files"),
            them(trace_options.len())
        )));
    }
    if args.workload.is_empty() && args.scheme.is_empty() {
        return Ok(());
    }
    let spew: Vec<String> = ["spew_requests", "spew_max_gib"]
        .into_iter()
        .filter(|id| given.iter().any(|g| g == id))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if spew.is_empty() {
        return Ok(());
    }
    Err(Failure::Usage(anyhow!(
        "{}: drop {}",
        unused_options(&spew, "Fig. 16, which --workload and --scheme leave out"),
        them(spew.len())
    )))
}
