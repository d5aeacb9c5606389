//! `flashkit trace gen` and `flashkit trace stats`.

use crate::args::{GenArgs, StatsArgs};
use crate::output::{write_csv, write_json};
use crate::progress::Bar;
use crate::settings::{self, ConfigFile};
use crate::{Failure, Outcome};
use anyhow::Context;
use flashkit_core::sub_seed;
use flashkit_core::units::format_size;
use flashkit_report::Table;
use flashkit_sim::Progress;
use flashkit_trace::binary::{TraceReader, TraceWriter, digest};
use flashkit_trace::stats::{TraceStats, TraceSummary};
use flashkit_trace::workload::Workload;
use serde::Serialize;
use std::path::PathBuf;

pub fn generate(args: GenArgs, config: &ConfigFile) -> Outcome {
    let capacity = args
        .capacity
        .or(config.device.capacity)
        .map_or(1 << 30, |s| s.0);
    let spec = settings::workload_spec(&args.workload, &config.workload, capacity)
        .map_err(Failure::Usage)?;
    let seed = args.seed.or(config.run.seed).unwrap_or(1);
    // The same derivation as a replay of the generated workload, so both see one stream.
    let canonical = format!("{} seed={seed}", spec.canonical());
    let workload = Workload::new(spec.clone(), sub_seed(seed, "workload"))
        .map_err(|e| Failure::Usage(e.into()))?;
    let description = format!("generated {} workload: {canonical}", spec.pattern.name());
    let mut writer = TraceWriter::create(&args.output, digest(canonical.as_bytes()), &description)
        .map_err(|e| Failure::Runtime(e.into()))?;
    let mut bar = Bar::new("trace gen");
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
    description: String,
    summary: TraceSummary,
}

pub fn stats(args: StatsArgs) -> Outcome {
    let page = u32::try_from(args.page_size.0)
        .ok()
        .filter(|&p| p > 0)
        .ok_or_else(|| {
            Failure::Usage(anyhow::anyhow!("--page-size must be between 1 B and 4 GiB"))
        })?;
    let mut summaries = Vec::new();
    for file in &args.files {
        let reader = TraceReader::open(file).map_err(|e| Failure::Runtime(e.into()))?;
        let description = reader.info().description.clone();
        let mut stats = TraceStats::new(page);
        let mut bar = Bar::new(&file.display().to_string());
        bar.start("reading", Some(reader.info().records));
        for (i, request) in reader.enumerate() {
            stats.add(&request.map_err(|e| Failure::Runtime(e.into()))?);
            if (i + 1) % 65536 == 0 {
                bar.advance(65536);
            }
        }
        bar.finish();
        summaries.push(FileSummary {
            file: file.clone(),
            description,
            summary: stats.summary(),
        });
    }
    let table = stats_table(&summaries);
    print!("{}", table.transposed().render());
    if let Some(path) = &args.output.json {
        write_json(path, &StatsDocument { traces: summaries }).context("trace stats")?;
    } else if let Some(path) = &args.output.csv {
        write_csv(path, &table)?;
    }
    if let (Some(_), Some(path)) = (&args.output.json, &args.output.csv) {
        write_csv(path, &table)?;
    }
    Ok(())
}

fn stats_table(summaries: &[FileSummary]) -> Table {
    let mut header = vec![
        "file",
        "requests",
        "reads",
        "read bytes",
        "writes",
        "write bytes",
        "trims",
        "trim bytes",
        "flushes",
        "zero-length",
        "read fraction",
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
            format!("{:.6}", (s.last_time_ns - s.first_time_ns) as f64 / 1e9),
            s.out_of_order.to_string(),
            s.volumes.len().to_string(),
        ];
        row.extend(s.size_histogram.iter().map(|b| b.requests.to_string()));
        table.push(row);
    }
    table
}
