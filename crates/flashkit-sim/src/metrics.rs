//! The run report and its flat metric list.

use crate::host::HostCounters;
use crate::latency::LatencySummary;
use crate::precondition::Precondition;
use flashkit_core::{Geometry, OpCounters, Timing};
use flashkit_ftl::{FtlKind, FtlOptions, FtlStats, MappingMemory};
use serde::Serialize;

/// Erase counts over every block of the device at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EraseSpread {
    /// Fewest erases of any block.
    pub min: u32,
    /// Mean erases per block.
    pub mean: f64,
    /// Most erases of any block.
    pub max: u32,
    /// Population standard deviation.
    pub stddev: f64,
}

impl EraseSpread {
    /// The spread of `counts`.
    pub fn of(counts: &[u32]) -> EraseSpread {
        if counts.is_empty() {
            return EraseSpread::default();
        }
        let n = counts.len() as f64;
        let mean = counts.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
        let variance = counts
            .iter()
            .map(|&c| (f64::from(c) - mean).powi(2))
            .sum::<f64>()
            / n;
        EraseSpread {
            min: counts.iter().copied().min().unwrap_or(0),
            mean,
            max: counts.iter().copied().max().unwrap_or(0),
            stddev: variance.sqrt(),
        }
    }
}

/// The device a run used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceRecord {
    /// Preset name.
    pub preset: String,
    /// Geometry.
    pub geometry: Geometry,
    /// Timing.
    pub timing: Timing,
    /// Erase cycles per block.
    pub endurance_cycles: u32,
}

/// The input a run replayed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceRecord {
    /// What it was (generator spec or file name).
    pub description: String,
    /// xxh3-128 digest of the source, hex.
    pub digest: String,
    /// Requests replayed.
    pub requests: u64,
}

/// Everything a run measured, deterministic: the same inputs give the same report byte for
/// byte. Counters cover the measured replay only (preconditioning excluded); erase spread
/// and mapping memory describe the device at the end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// flashkit version.
    pub flashkit_version: String,
    /// The run's name in tables ("page/greedy").
    pub label: String,
    /// FTL scheme.
    pub ftl: FtlKind,
    /// FTL options.
    pub options: FtlOptions,
    /// Device.
    pub device: DeviceRecord,
    /// Preconditioning, if any.
    pub precondition: Option<Precondition>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Input.
    pub trace: TraceRecord,
    /// Host-side counts.
    pub host: HostCounters,
    /// Flash operations by cause.
    pub flash: OpCounters,
    /// Flash page programs (all causes) per host page written; `None` if nothing was written.
    pub write_amplification: Option<f64>,
    /// Erase counts at the end.
    pub erase_spread: EraseSpread,
    /// Erase counts at the end as (erase count, blocks), ascending: the wear distribution.
    pub erase_histogram: Vec<(u32, u32)>,
    /// Per-request service time under the serial cost model (see [`crate::latency`]).
    pub latency: ReadWriteLatency,
    /// FTL statistics of the measured part.
    pub ftl_stats: FtlStats,
    /// Simulated elapsed time under the serial cost model, nanoseconds.
    pub elapsed_ns: u64,
    /// Mapping memory at the end.
    pub mapping_memory: MappingMemory,
    /// The heap the model (device and FTL) was estimated to need before it was built
    /// ([`crate::RunSpec::memory_estimate`]).
    pub model_memory_estimate_bytes: u64,
    /// Fingerprint of the FTL state at the end, hex.
    pub state_hash: String,
}

/// Latency of reads and of writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadWriteLatency {
    /// Read requests.
    pub read: LatencySummary,
    /// Write requests.
    pub write: LatencySummary,
}

/// Wall-clock measurement of a replay: not part of the deterministic report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct WallClock {
    /// Seconds spent replaying (preconditioning excluded).
    pub replay_seconds: f64,
    /// Seconds spent preconditioning.
    pub precondition_seconds: f64,
    /// Requests replayed per second.
    pub requests_per_second: f64,
    /// Host pages written per second.
    pub host_pages_written_per_second: f64,
}

/// One named figure of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Machine name (CSV column).
    pub key: String,
    /// Human label (table row).
    pub label: String,
    /// The value.
    pub value: MetricValue,
}

/// A metric's value.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricValue {
    /// A count.
    Count(u64),
    /// A measured quantity.
    Real(f64),
    /// Text.
    Text(String),
    /// Not applicable.
    Missing,
}

impl MetricValue {
    /// The value as text for a table or CSV cell.
    pub fn render(&self) -> String {
        match self {
            MetricValue::Count(n) => n.to_string(),
            MetricValue::Real(x) if x.abs() >= 1000.0 || *x == 0.0 => format!("{x:.1}"),
            MetricValue::Real(x) => format!("{x:.4}"),
            MetricValue::Text(t) => t.clone(),
            MetricValue::Missing => "-".into(),
        }
    }
}

/// A metric list being built, in table order.
struct MetricList(Vec<Metric>);

impl MetricList {
    fn push(&mut self, key: &str, label: &str, value: MetricValue) {
        self.0.push(Metric {
            key: key.into(),
            label: label.into(),
            value,
        });
    }
}

impl RunReport {
    /// The report as a flat list of metrics, in table order.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut list = MetricList(Vec::new());
        self.host_metrics(&mut list);
        self.flash_metrics(&mut list);
        self.wear_metrics(&mut list);
        self.time_metrics(&mut list);
        self.memory_metrics(&mut list);
        self.ftl_metrics(&mut list);
        list.push(
            "state_hash",
            "state hash",
            MetricValue::Text(self.state_hash.clone()),
        );
        list.0
    }

    /// What the host asked for.
    fn host_metrics(&self, list: &mut MetricList) {
        use MetricValue::Count;
        let h = &self.host;
        list.push("requests", "host requests", Count(self.trace.requests));
        list.push(
            "host_pages_written",
            "host pages written",
            Count(h.pages_written),
        );
        list.push("host_pages_read", "host pages read", Count(h.pages_read));
        list.push(
            "host_pages_trimmed",
            "host pages trimmed",
            Count(h.pages_trimmed),
        );
        list.push("rmw_reads", "read-modify-write reads", Count(h.rmw_reads));
        // Requests that move no data, counted and skipped: shown when a trace has them (the
        // JSON always holds them; the table and the CSV left them out).
        if h.flush_requests > 0 {
            list.push(
                "flush_requests",
                "flush requests (skipped)",
                Count(h.flush_requests),
            );
        }
        if h.zero_length_requests > 0 {
            list.push(
                "zero_length_requests",
                "zero-length requests (skipped)",
                Count(h.zero_length_requests),
            );
        }
    }

    /// Flash operations by cause, and the write amplification they give.
    fn flash_metrics(&self, list: &mut MetricList) {
        use MetricValue::{Count, Real};
        let f = &self.flash;
        list.push("flash_reads", "flash page reads", Count(f.reads.total()));
        list.push("flash_reads_gc", "  by GC", Count(f.reads.gc));
        list.push(
            "flash_programs",
            "flash page programs",
            Count(f.programs.total()),
        );
        list.push("flash_programs_host", "  by host", Count(f.programs.host));
        list.push("flash_programs_gc", "  by GC", Count(f.programs.gc));
        list.push(
            "flash_programs_wl",
            "  by wear leveling",
            Count(f.programs.wear_leveling),
        );
        list.push("flash_erases", "block erases", Count(f.erases.total()));
        list.push("flash_erases_gc", "  by GC", Count(f.erases.gc));
        list.push(
            "flash_erases_wl",
            "  by wear leveling",
            Count(f.erases.wear_leveling),
        );
        list.push(
            "write_amplification",
            "write amplification",
            self.write_amplification.map_or(MetricValue::Missing, Real),
        );
    }

    /// Garbage collection, wear leveling and the erase spread at the end.
    fn wear_metrics(&self, list: &mut MetricList) {
        use MetricValue::{Count, Real};
        let s = &self.ftl_stats;
        list.push("gc_runs", "GC runs", Count(s.gc_runs));
        list.push("gc_pages_moved", "GC pages moved", Count(s.gc_pages_moved));
        list.push("wl_runs", "wear-leveling runs", Count(s.wear_level_runs));
        list.push("retired_blocks", "retired blocks", Count(s.retired_blocks));
        list.push(
            "erase_min",
            "erase count min",
            Count(u64::from(self.erase_spread.min)),
        );
        list.push(
            "erase_mean",
            "erase count mean",
            Real(self.erase_spread.mean),
        );
        list.push(
            "erase_max",
            "erase count max",
            Count(u64::from(self.erase_spread.max)),
        );
        list.push(
            "erase_stddev",
            "erase count stddev",
            Real(self.erase_spread.stddev),
        );
    }

    /// Simulated time and request latency.
    fn time_metrics(&self, list: &mut MetricList) {
        use MetricValue::Real;
        list.push(
            "elapsed_s",
            "simulated time (s)",
            Real(self.elapsed_ns as f64 / 1e9),
        );
        let us = |ns: u64| Real(ns as f64 / 1000.0);
        let latency = &self.latency;
        list.push(
            "read_p99_us",
            "read latency p99 (us)",
            us(latency.read.p99_ns),
        );
        list.push(
            "write_mean_us",
            "write latency mean (us)",
            Real(latency.write.mean_ns / 1000.0),
        );
        list.push(
            "write_p99_us",
            "write latency p99 (us)",
            us(latency.write.p99_ns),
        );
        list.push(
            "write_max_us",
            "write latency max (us)",
            us(latency.write.max_ns),
        );
    }

    /// Mapping memory at the end and the model's estimated heap.
    fn memory_metrics(&self, list: &mut MetricList) {
        use MetricValue::Count;
        list.push(
            "mapping_packed_bytes",
            "mapping memory, packed (B)",
            Count(self.mapping_memory.packed_bytes),
        );
        list.push(
            "mapping_heap_bytes",
            "mapping memory, heap (B)",
            Count(self.mapping_memory.heap_bytes),
        );
        list.push(
            "model_memory_estimate_bytes",
            "model memory, estimated (B)",
            Count(self.model_memory_estimate_bytes),
        );
    }

    /// The FTL's own figures: extras, counters and means, each under `ftl_<name>`.
    fn ftl_metrics(&self, list: &mut MetricList) {
        use MetricValue::{Count, Real};
        let s = &self.ftl_stats;
        for (name, value) in &s.extra {
            // Whole values below 9e15 (an f64 holds every integer to 2^53) print as
            // counts; the rest (fractions, negatives, larger values) as quantities.
            let value = if value.fract() == 0.0 && (0.0..9e15).contains(value) {
                Count(*value as u64)
            } else {
                Real(*value)
            };
            list.push(
                &format!("ftl_{name}"),
                &name.name().replace('_', " "),
                value,
            );
        }
        for (name, count) in &s.counters {
            list.push(
                &format!("ftl_{name}"),
                &name.name().replace('_', " "),
                Count(*count),
            );
        }
        for (name, mean) in &s.means {
            let value = mean.value().map_or(MetricValue::Missing, Real);
            list.push(
                &format!("ftl_{name}"),
                &name.name().replace('_', " "),
                value,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erase_spread_statistics() {
        let s = EraseSpread::of(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!((s.min, s.max), (2, 9));
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert!((s.stddev - 2.0).abs() < 1e-12);
        assert_eq!(EraseSpread::of(&[]), EraseSpread::default());
    }

    /// A cell's text: counts in full; quantities of 1,000 or more (either sign) and zero to
    /// one decimal, others to four; text as given; a missing value as a dash.
    #[test]
    fn each_kind_of_value_renders_as_its_cell() {
        let cells: Vec<String> = [
            MetricValue::Count(12_345),
            MetricValue::Real(1_000.0),
            MetricValue::Real(-2_500.25),
            MetricValue::Real(999.99994),
            MetricValue::Real(0.0),
            MetricValue::Real(1.5),
            MetricValue::Real(-0.25),
            MetricValue::Text("page/greedy".into()),
            MetricValue::Missing,
        ]
        .iter()
        .map(MetricValue::render)
        .collect();
        assert_eq!(
            cells,
            [
                "12345",
                "1000.0",
                "-2500.2",
                "999.9999",
                "0.0",
                "1.5000",
                "-0.2500",
                "page/greedy",
                "-"
            ]
        );
    }
}
