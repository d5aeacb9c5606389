//! `flashkit report`: results in, one self-contained HTML page and figures out.
//!
//! Input: a sweep directory (or its `results.jsonl`), or the JSON that `compare` and `replay`
//! write with `--json`. What the report shows is [`flashkit_lab::report`]'s; this command
//! checks its outputs and writes them.

use crate::args::ReportArgs;
use crate::failure::{Failure, Outcome, sim_failure};
use anyhow::anyhow;
use flashkit_lab::report::{Figure, Report, ReportError, Results};
use std::path::Path;

pub fn run(args: ReportArgs) -> Outcome {
    if args.html.is_none() && args.svg.is_none() && args.png.is_none() {
        return Err(Failure::Usage(anyhow!(
            "say what to write: --html FILE, --svg DIR and/or --png DIR"
        )));
    }
    let results = Results::load(&args.results).map_err(report_failure)?;
    for file in &results.files {
        crate::output::note_input(file);
    }
    for note in &results.notes {
        eprintln!("note: {note}");
    }
    crate::output::check_outputs(&[("--html", args.html.as_deref())]).map_err(Failure::Usage)?;
    // The figure directories too, before anything is drawn: `--html P --svg P` wrote the
    // figures into a directory P and then failed to write the page.
    for (flag, dir) in [
        ("--svg", args.svg.as_deref()),
        ("--png", args.png.as_deref()),
    ] {
        let Some(dir) = dir else { continue };
        if dir.exists() && !dir.is_dir() {
            return Err(Failure::Usage(anyhow!(
                "{flag} {}: a file is there; give a directory for the figures",
                dir.display()
            )));
        }
        if let Some(html) = &args.html
            && crate::output::same_output(html, dir)
        {
            return Err(Failure::Usage(anyhow!(
                "--html and {flag} both name {}: the page is a file and the figures go in a \
                 directory; give each its own path",
                dir.display()
            )));
        }
    }
    let report = Report::of(&results, args.title.as_deref()).map_err(report_failure)?;
    if let Some(dir) = &args.svg {
        write_figures(dir, &report.figures, "svg", |f| {
            Ok(f.svg.clone().into_bytes())
        })?;
    }
    if let Some(dir) = &args.png {
        write_figures(dir, &report.figures, "png", |f| {
            flashkit_report::png::svg_to_png(&f.svg, 2.0).map_err(|e| anyhow!("{}: {e}", f.stem))
        })?;
    }
    if let Some(path) = &args.html {
        crate::output::write_file(path, report.html())?;
        println!(
            "wrote {} ({} runs{}, {} figures)",
            path.display(),
            report.runs,
            if report.failed > 0 {
                format!(", {} of them failed", report.failed)
            } else {
                String::new()
            },
            report.figures.len()
        );
    }
    Ok(())
}

/// A report error as the CLI reports it: results it cannot read as such are the user's
/// mistake (exit 2), a file it cannot read a failed run (exit 1).
fn report_failure(error: ReportError) -> Failure {
    match error {
        ReportError::NotResults(_) => Failure::Usage(error.into()),
        ReportError::Sweep(error) => sim_failure(error),
        ReportError::Read { .. } | ReportError::Empty(_) => Failure::Runtime(error.into()),
    }
}

fn write_figures(
    dir: &Path,
    figures: &[Figure],
    extension: &str,
    encode: impl Fn(&Figure) -> anyhow::Result<Vec<u8>>,
) -> Outcome {
    // All the figures or none of them: a full disk left an empty directory, or some of the
    // figures.
    let mut undo = crate::output::Undo::default();
    undo.create_dir_all(dir)?;
    for (i, figure) in figures.iter().enumerate() {
        let path = dir.join(figure.file_name(i, extension));
        let bytes = encode(figure)?;
        undo.note(&path);
        crate::output::write_file(&path, bytes)?;
    }
    undo.keep();
    println!(
        "wrote {} {extension} figures to {}",
        figures.len(),
        dir.display()
    );
    Ok(())
}
