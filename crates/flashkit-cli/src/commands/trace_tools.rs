//! `flashkit trace convert`, `trace detect` and `trace bench`, and the trace input of
//! `replay` and `compare`: any supported format, detected or named, read through
//! `flashkit_trace::formats` (docs/TRACES.md).

use crate::args::{ConvertArgs, ConvertTo, DetectArgs, TraceBenchArgs};
use crate::failure::{Failure, Outcome, sim_failure};
use crate::progress::Bar;
use anyhow::{Context, anyhow};
use flashkit_core::units::{describe_size, format_size};
use flashkit_lab::config::{self as settings, ConfigFile, TraceSection, WorkloadSection};
use flashkit_report::Table;
use flashkit_sim::{DeviceSpec, Progress, Source};
use flashkit_trace::binary::TraceWriter;
use flashkit_trace::formats::csv::{CSV_HEADER, write_csv_request};
use flashkit_trace::formats::layout::{PreparedTrace, file_digest};
use flashkit_trace::formats::{
    BlkparseEvent, ParseReport, TraceOptions, TraceStream, examine, open,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

fn runtime(error: impl Into<anyhow::Error>) -> Failure {
    Failure::Runtime(error.into())
}

/// Sort a trace error: options that do not fit the file are usage errors.
fn trace_failure(error: flashkit_trace::TraceError) -> Failure {
    match error {
        flashkit_trace::TraceError::Spec(_) | flashkit_trace::TraceError::Options(_) => {
            Failure::Usage(error.into())
        }
        other => runtime(other),
    }
}

/// Open a trace, printing the format detection to stderr if asked.
pub fn open_trace(
    path: &Path,
    options: &TraceOptions,
    flags: &TraceSection,
) -> Result<TraceStream, Failure> {
    open_named(path, path, options, flags)
}

/// [`open_trace`] for a file called `name` in messages (a trace saved from standard input
/// is [`STDIN_NAME`]); the stream's own errors name the file, for the caller to rename.
pub fn open_named(
    path: &Path,
    name: &Path,
    options: &TraceOptions,
    flags: &TraceSection,
) -> Result<TraceStream, Failure> {
    crate::output::note_input(path);
    if flags.explain_format {
        let mut examined = examine(path).map_err(|e| runtime(e.shown_as(path, name)))?;
        examined.path = name.to_path_buf();
        eprint!("{}", examined.explain());
    }
    open(path, options).map_err(|e| trace_failure(e.shown_as(path, name)))
}

/// Say on stderr what reading skipped, so nothing is dropped silently.
pub fn note_skipped(path: &Path, report: &ParseReport) {
    let skipped = report.skipped();
    if skipped.is_empty() {
        return;
    }
    let list: Vec<String> = skipped
        .iter()
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    eprintln!("note: {}: skipped {}", path.display(), list.join(", "));
    if let Some(first) = &report.first_bad_line {
        eprintln!("note: first malformed line: {first}");
    }
}

/// What a trace read from standard input (`--trace -`) is called in descriptions, reports
/// and errors.
pub const STDIN_NAME: &str = "standard input";

/// Standard input saved to a temporary file (in the system's temporary directory, `TMPDIR`):
/// a trace is read more than once (its format detected, its addresses mapped, then
/// replayed), and a pipe can be read only once. Removed when dropped, or on Ctrl-C.
pub struct Spooled {
    path: tempfile::TempPath,
    _listed: crate::interrupt::Temporary,
}

impl Spooled {
    /// Copy standard input into a temporary file.
    pub fn stdin() -> Result<Spooled, Failure> {
        use std::io::{IsTerminal, Write};
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(Failure::Usage(anyhow!(
                "--trace -: standard input is a terminal; pipe a trace in \
                 (zstdcat t.zst | flashkit replay --trace -)"
            )));
        }
        let file = tempfile::Builder::new()
            .prefix(".flashkit-stdin-")
            .tempfile()
            .context("cannot create a temporary file to hold standard input")?;
        let listed = crate::interrupt::temporary(file.path());
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file.as_file());
        let bytes = std::io::copy(&mut stdin.lock(), &mut writer)
            .and_then(|bytes| writer.flush().map(|()| bytes))
            .with_context(|| {
                format!(
                    "cannot save standard input to {} (a trace is read more than once)",
                    file.path().display()
                )
            })?;
        drop(writer);
        eprintln!(
            "note: {STDIN_NAME}: {} saved to a temporary file, to be read more than once",
            describe_size(bytes)
        );
        Ok(Spooled {
            path: file.into_temp_path(),
            _listed: listed,
        })
    }

    /// The temporary file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A trace file as given on the command line: a path, or `-` for standard input, saved to
/// a temporary file (kept while this lives) and called [`STDIN_NAME`].
pub struct TraceFile {
    given: PathBuf,
    spooled: Option<Spooled>,
}

impl TraceFile {
    /// `given`, with standard input saved first if it is `-`.
    pub fn new(given: &Path) -> Result<TraceFile, Failure> {
        let spooled = if given.as_os_str() == "-" {
            Some(Spooled::stdin()?)
        } else {
            None
        };
        Ok(TraceFile {
            given: given.to_path_buf(),
            spooled,
        })
    }

    /// The file to read.
    pub fn path(&self) -> &Path {
        self.spooled.as_ref().map_or(&self.given, Spooled::path)
    }

    /// What the file is called in messages and reports.
    pub fn name(&self) -> &Path {
        match self.spooled {
            Some(_) => Path::new(STDIN_NAME),
            None => &self.given,
        }
    }
}

/// Refuse `-` (standard input) given more than once in a list of files: it can be read once.
pub fn stdin_once(files: &[PathBuf]) -> Result<(), Failure> {
    if files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(Failure::Usage(anyhow!(
            "- (standard input) is given twice: it can be read once"
        )));
    }
    Ok(())
}

/// The input of `replay` and `compare`: the `--trace` file ([`trace_source`]; `-` reads
/// standard input, saved first, and the [`TraceFile`] must outlive the run), or else the
/// workload the options describe on the device's capacity.
pub fn source(
    trace: Option<&Path>,
    flags: &TraceSection,
    workload: &WorkloadSection,
    config: &ConfigFile,
    device: &mut DeviceSpec,
    capacity_given: bool,
) -> Result<(Source, Option<TraceFile>), Failure> {
    // Options for the other kind of input would be ignored: refuse them instead.
    let unused = match trace {
        Some(_) => workload.given(),
        None => flags.given(),
    };
    if !unused.is_empty() {
        let what = match trace {
            Some(_) => "the generated workload, which --trace replaces",
            None => "reading a --trace, and none was given",
        };
        let names: Vec<String> = unused.iter().map(|n| n.to_string()).collect();
        return Err(Failure::Usage(anyhow!(
            "{}: drop {}",
            settings::unused_options(&names, what),
            if names.len() == 1 { "it" } else { "them" }
        )));
    }
    match trace {
        Some(path) => {
            let file = TraceFile::new(path)?;
            let source = trace_source(
                file.path(),
                file.name(),
                flags,
                config,
                device,
                capacity_given,
            )?;
            Ok((source, Some(file)))
        }
        None => {
            let spec = settings::device_workload(workload, &config.workload, device.capacity_bytes)
                .map_err(Failure::usage)?;
            Ok((Source::Workload(spec), None))
        }
    }
}

/// The input of `replay` and `compare` from `--trace`: the file read once to map its
/// addresses, and the device sized to it unless the user gave a capacity. `name` is what
/// the file is called in messages and reports (its path, or [`STDIN_NAME`]).
pub fn trace_source(
    path: &Path,
    name: &Path,
    flags: &TraceSection,
    config: &ConfigFile,
    device: &mut DeviceSpec,
    capacity_given: bool,
) -> Result<Source, Failure> {
    let (options, mapping) = settings::trace_options(flags, &config.trace);
    crate::output::note_input(path);
    if flags.explain_format {
        let mut examined = examine(path).map_err(|e| runtime(e.shown_as(path, name)))?;
        examined.path = name.to_path_buf();
        eprint!("{}", examined.explain());
    }
    let block = device.block_bytes().map_err(sim_failure)?;
    let prepared = PreparedTrace::prepare(path, &options, mapping, block)
        .map_err(|e| trace_failure(e.shown_as(path, name)))?
        .named(name);
    note_skipped(name, &prepared.report);
    if prepared.report.requests == 0 && prepared.report.other_events > 0 {
        let (kept, other) = match options.blkparse_event.unwrap_or_default() {
            BlkparseEvent::Dispatch => ("D", "Q"),
            BlkparseEvent::Queue => ("Q", "D"),
        };
        eprintln!(
            "note: {}: no {kept} events, but {} events of other actions: try --blkparse-event \
             {other}",
            name.display(),
            prepared.report.other_events
        );
    }
    if !capacity_given {
        *device = device.sized_for(&prepared).map_err(sim_failure)?;
    }
    eprintln!(
        "trace: {} ({}), {} requests touching {} blocks of {} ({} address mapping); device \
         logical capacity {}",
        name.display(),
        prepared.format.map_or("empty", |f| f.name()),
        prepared.report.requests,
        prepared.map.touched_chunks(),
        format_size(prepared.map.chunk_bytes()),
        prepared.map.mapping(),
        describe_size(device.capacity_bytes),
    );
    Ok(Source::Trace(Arc::new(prepared)))
}

/// Refuse `--address-map` on a command that reads a trace's own addresses (it maps them onto
/// a device, which only a replay has).
pub fn refuse_address_map(flags: &TraceSection, command: &str) -> Result<(), Failure> {
    if flags.address_map.is_some() {
        return Err(Failure::Usage(anyhow!(
            "--address-map says how a replay lays a trace onto the device (replay, compare); \
             trace {command} reads the trace's own addresses: drop it"
        )));
    }
    Ok(())
}

/// `flashkit trace convert`.
pub fn convert(args: ConvertArgs, config: &ConfigFile) -> Outcome {
    refuse_address_map(&args.trace_options, "convert")?;
    let (options, _) = settings::trace_options(&args.trace_options, &config.trace);
    let to = args.to.unwrap_or_else(|| {
        let csv = args
            .output
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if csv {
            ConvertTo::Csv
        } else {
            ConvertTo::Binary
        }
    });
    if args.input.as_os_str() != "-" {
        crate::output::note_input(&args.input);
    }
    crate::output::check_output(&args.output).map_err(Failure::Usage)?;
    let file = TraceFile::new(&args.input)?;
    let (input, name) = (file.path(), file.name());
    let mut stream = open_named(input, name, &options, &args.trace_options)?;
    let failed = |e: flashkit_trace::TraceError| runtime(e.shown_as(input, name));
    let format = stream.format().map_or("empty", |f| f.name());
    let description = format!("converted from {} ({format})", name.display());
    let bar = Bar::new("trace convert");
    bar.start("converting", None);
    let written = match to {
        ConvertTo::Binary => {
            let digest = file_digest(input).map_err(failed)?;
            let staged = crate::output::Staged::new(&args.output)?;
            let mut writer =
                TraceWriter::create(staged.path(), digest, &description).map_err(runtime)?;
            for request in stream.by_ref() {
                writer.push(&request.map_err(failed)?).map_err(runtime)?;
            }
            let written = writer.finish().map_err(runtime)?;
            staged.commit()?;
            written
        }
        ConvertTo::Csv => write_csv(&args.output, &mut stream, &description, &failed)?,
    };
    bar.finish();
    note_skipped(name, &stream.report());
    println!(
        "wrote {written} requests of {} ({format}) to {} ({})",
        name.display(),
        args.output.display(),
        match to {
            ConvertTo::Binary => "flashkit binary",
            ConvertTo::Csv => "generic CSV",
        }
    );
    Ok(())
}

fn write_csv(
    path: &Path,
    stream: &mut TraceStream,
    description: &str,
    failed: &dyn Fn(flashkit_trace::TraceError) -> Failure,
) -> Result<u64, Failure> {
    let mut out = crate::output::create(path)?;
    let io = |e: std::io::Error| runtime(anyhow!("writing {}: {e}", path.display()));
    // One comment line, whatever the input's name holds (a newline in a file name split
    // it, and the second half read as a header).
    let description: String = description
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    writeln!(out, "# {description}").map_err(io)?;
    writeln!(out, "{CSV_HEADER}").map_err(io)?;
    let mut written = 0;
    for request in stream {
        write_csv_request(&mut out, &request.map_err(failed)?).map_err(io)?;
        written += 1;
    }
    out.finish().map_err(runtime)?;
    Ok(written)
}

/// `flashkit trace detect`: every file's explanation; exit 1 when a file with content
/// matches no format (so that a script can tell), after explaining them all.
pub fn detect(args: DetectArgs) -> Outcome {
    stdin_once(&args.files)?;
    let mut unknown = Vec::new();
    for file in &args.files {
        let trace = TraceFile::new(file)?;
        let mut detection =
            examine(trace.path()).map_err(|e| runtime(e.shown_as(trace.path(), trace.name())))?;
        detection.path = trace.name().to_path_buf();
        print!("{}", detection.explain());
        if detection.format.is_none() && detection.sampled_lines > 0 {
            unknown.push(file.display().to_string());
        }
    }
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(runtime(anyhow!(
            "no trace format matches {} (each format's reason is above)",
            unknown.join(", ")
        )))
    }
}

/// `flashkit trace bench`: read each file fully `repeat` times; report the best pass.
pub fn bench(args: TraceBenchArgs, config: &ConfigFile) -> Outcome {
    refuse_address_map(&args.trace_options, "bench")?;
    let (options, _) = settings::trace_options(&args.trace_options, &config.trace);
    let repeat = args.repeat;
    let mut table = Table::new([
        "file",
        "format",
        "file bytes",
        "requests",
        "lines/records",
        "best pass (s)",
        "requests/s",
        "lines/s",
        "MB/s (file)",
    ]);
    for file in &args.files {
        let bytes = std::fs::metadata(file)
            .with_context(|| format!("cannot read {}", file.display()))?
            .len();
        let mut best = f64::INFINITY;
        let (mut requests, mut lines, mut format) = (0, 0, String::new());
        for _ in 0..repeat {
            let started = Instant::now();
            let mut stream = open_trace(file, &options, &args.trace_options)?;
            let mut checksum = 0u64;
            let mut count = 0u64;
            for request in stream.by_ref() {
                let r = request.map_err(runtime)?;
                checksum = checksum.wrapping_add(r.offset ^ u64::from(r.size));
                count += 1;
            }
            std::hint::black_box(checksum);
            best = best.min(started.elapsed().as_secs_f64());
            requests = count;
            lines = stream.report().lines;
            format = stream.format().map_or("empty".into(), |f| f.to_string());
        }
        let rate = |n: u64| n as f64 / best.max(1e-9);
        table.push([
            file.display().to_string(),
            format,
            bytes.to_string(),
            requests.to_string(),
            lines.to_string(),
            format!("{best:.4}"),
            format!("{:.0}", rate(requests)),
            format!("{:.0}", rate(lines)),
            format!("{:.0}", rate(bytes) / 1e6),
        ]);
    }
    print!("{}", table.render());
    Ok(())
}
