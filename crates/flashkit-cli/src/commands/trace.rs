//! `flashkit trace gen` and `flashkit trace stats` (any format, per volume on request).

use crate::args::{GenArgs, StatsArgs};
use crate::failure::{Failure, Outcome};
use crate::output::{write_csv, write_json};
use crate::progress::Bar;
use anyhow::Context;
use flashkit_core::sub_seed;
use flashkit_core::units::format_size;
use flashkit_lab::config::{self as settings, ConfigError, ConfigFile};
use flashkit_report::Table;
use flashkit_sim::Progress;
use flashkit_trace::binary::{TraceWriter, digest};
use flashkit_trace::formats::{Format, ParseReport};
use flashkit_trace::stats::{TraceStats, TraceSummary};
use flashkit_trace::workload::Workload;
use serde::Serialize;
use std::path::PathBuf;

pub fn generate(args: GenArgs, config: &ConfigFile) -> Outcome {
    if args.capacity.is_some() && args.workload.span.is_some() {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--capacity is the address space when --span is not given, and --span is: drop one"
        )));
    }
    let check = |config: &ConfigFile| -> Result<_, ConfigError> {
        let capacity = args
            .capacity
            .or(config.device.capacity)
            .map_or(1 << 30, |s| s.0);
        let spec = settings::workload_spec(&args.workload, &config.workload, capacity)?;
        spec.validate()?;
        Ok(spec)
    };
    let spec = check(config)
        .map_err(|error| config.blame(error, |config| check(config).map(drop)))
        .map_err(Failure::usage)?;
    let seed = args.seed.or(config.run.seed).unwrap_or(1);
    // The same derivation as a replay of the generated workload, so both see one stream.
    let canonical = format!("{} seed={seed}", spec.canonical());
    let workload = Workload::new(spec.clone(), sub_seed(seed, "workload"))
        .map_err(|e| Failure::Usage(e.into()))?;
    let description = format!("generated {} workload: {canonical}", spec.pattern.name());
    let staged = crate::output::Staged::new(&args.output).map_err(Failure::Usage)?;
    let mut writer = TraceWriter::create(staged.path(), digest(canonical.as_bytes()), &description)
        .map_err(|e| Failure::Runtime(e.into()))?;
    let bar = Bar::new("trace gen");
    bar.start("writing", Some(spec.requests));
    let mut bytes = 0u64;
    for (i, request) in workload.enumerate() {
        writer
            .push(&request)
            .map_err(|e| Failure::Runtime(e.into()))?;
        bytes += u64::from(request.size);
        if (i + 1) % 65536 == 0 {
            bar.advance(65536);
        }
    }
    bar.finish();
    let records = writer.finish().map_err(|e| Failure::Runtime(e.into()))?;
    staged.commit()?;
    println!(
        "wrote {records} requests ({} addressed) of a {} workload over {} to {}",
        format_size(bytes),
        spec.pattern.name(),
        format_size(spec.span_bytes),
        args.output.display()
    );
    Ok(())
}

#[derive(Serialize)]
struct StatsDocument {
    traces: Vec<FileSummary>,
}

#[derive(Serialize)]
struct FileSummary {
    file: PathBuf,
    format: Option<Format>,
    description: String,
    parse: ParseReport,
    /// Names of the volumes by number, for formats that number them from names.
    #[serde(skip_serializing_if = "Option::is_none")]
    volume_names: Option<Vec<String>>,
    summary: TraceSummary,
}

pub fn stats(args: StatsArgs, config: &ConfigFile) -> Outcome {
    let page = u32::try_from(args.page_size.0)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| {
            Failure::Usage(anyhow::anyhow!("--page-size must be between 1 B and 4 GiB"))
        })?;
    super::trace_tools::refuse_address_map(&args.trace_options, "stats")?;
    if args.output.wall_clock_in_json {
        return Err(Failure::Usage(anyhow::anyhow!(
            "--wall-clock-in-json: trace stats times nothing (its JSON has no wall clock): \
             drop it"
        )));
    }
    let (options, _) = settings::trace_options(&args.trace_options, &config.trace);
    for file in &args.files {
        crate::output::note_input(file);
    }
    args.output.check_not_inputs()?;
    super::trace_tools::stdin_once(&args.files)?;
    let mut summaries = Vec::new();
    for given in &args.files {
        // `-`: standard input, saved to a temporary file kept until its summary is made.
        let trace = super::trace_tools::TraceFile::new(given)?;
        let (file, name) = (trace.path(), trace.name());
        let shown = |e: flashkit_trace::TraceError| e.shown_as(file, name);
        let mut stream = super::trace_tools::open_named(file, name, &options, &args.trace_options)?;
        let description = match stream.format() {
            Some(format) => format!("{format}: {}", format.layout()),
            None => "empty file".to_string(),
        };
        let mut stats = TraceStats::new(page);
        let bar = Bar::new(&name.display().to_string());
        bar.start("reading", None);
        for (i, request) in stream.by_ref().enumerate() {
            stats.add(&request.map_err(|e| Failure::Runtime(shown(e).into()))?);
            if (i + 1) % 65536 == 0 {
                bar.advance(65536);
            }
        }
        bar.finish();
        super::trace_tools::note_skipped(name, &stream.report());
        summaries.push(FileSummary {
            file: name.to_path_buf(),
            format: stream.format(),
            description,
            parse: stream.report(),
            volume_names: stream.volume_names(),
            summary: stats.summary(),
        });
    }
    let table = stats_table(&summaries);
    print!("{}", table.transposed().render());
    if args.volumes {
        for f in &summaries {
            println!("\n{} by volume:", f.file.display());
            print!("{}", volume_table(f).render());
        }
    }
    if let Some(path) = &args.output.json {
        write_json(path, &StatsDocument { traces: summaries }).context("trace stats")?;
    }
    if let Some(path) = &args.output.csv {
        write_csv(path, &table)?;
    }
    Ok(())
}

fn volume_table(f: &FileSummary) -> Table {
    let mut table = Table::new([
        "volume",
        "name",
        "requests",
        "reads",
        "read bytes",
        "writes",
        "write bytes",
        "trims",
        "trim bytes",
        "max end",
        "footprint pages",
    ]);
    for (&volume, v) in &f.summary.volumes {
        let name = f
            .volume_names
            .as_ref()
            .and_then(|names| names.get(usize::from(volume)).cloned())
            .unwrap_or_default();
        table.push([
            volume.to_string(),
            name,
            v.requests.to_string(),
            v.reads.requests.to_string(),
            v.reads.bytes.to_string(),
            v.writes.requests.to_string(),
            v.writes.bytes.to_string(),
            v.trims.requests.to_string(),
            v.trims.bytes.to_string(),
            v.max_end.to_string(),
            v.footprint_pages.to_string(),
        ]);
    }
    table
}

fn stats_table(summaries: &[FileSummary]) -> Table {
    let mut header = vec![
        "file",
        "format",
        "requests",
        "reads",
        "read bytes",
        "writes",
        "write bytes",
        "trims",
        "trim bytes",
        "flushes",
        "zero-length",
        "reads / (reads + writes)",
        "min offset",
        "max end",
        "footprint pages",
        "footprint bytes",
        "duration (s)",
        "out of order",
        "volumes",
    ]
    .into_iter()
    .map(String::from)
    .collect::<Vec<_>>();
    if let Some(first) = summaries.first() {
        for bucket in &first.summary.size_histogram {
            header.push(match bucket.upto_bytes {
                Some(upto) => format!("size <= {}", format_size(upto)),
                None => "size > 1MiB".into(),
            });
        }
    }
    let mut table = Table::new(header);
    for f in summaries {
        let s = &f.summary;
        let mut row = vec![
            f.file.display().to_string(),
            f.format.map_or("empty".to_string(), |f| f.to_string()),
            s.requests.to_string(),
            s.reads.requests.to_string(),
            s.reads.bytes.to_string(),
            s.writes.requests.to_string(),
            s.writes.bytes.to_string(),
            s.trims.requests.to_string(),
            s.trims.bytes.to_string(),
            s.flushes.requests.to_string(),
            s.zero_length.to_string(),
            format!("{:.4}", s.read_fraction),
            s.min_offset.to_string(),
            s.max_end.to_string(),
            s.footprint_pages.to_string(),
            (s.footprint_pages * u64::from(s.footprint_page_bytes)).to_string(),
            format!(
                "{:.6}",
                s.last_time_ns.saturating_sub(s.first_time_ns) as f64 / 1e9
            ),
            s.out_of_order.to_string(),
            s.volumes.len().to_string(),
        ];
        row.extend(s.size_histogram.iter().map(|b| b.requests.to_string()));
        table.push(row);
    }
    table
}
