//! The option groups, each a section of the config file and (with the `clap` feature) a
//! group of flags of the same names: `[device] page_size` is `--page-size`. A field's doc
//! comment is its flag's help text.
//!
//! A section that is not a table is refused with the words toml's errors have always used
//! ("expected struct DeviceArgs"), so that those messages stay as they were.

use super::values::{
    Count, Fraction, HotSplit, OnOff, Size, SizeList, SizeRange, WearSetting, at_least_one, center,
    gc_threshold, non_negative, one_or_many, over_provisioning, page_size, pages_per_block, parsed,
    pattern, positive_count, positive_size, power_of_two, preset, stddev, theta,
};
use flashkit_ftl::{FullSw, GcPolicy, InsertScheme, VetNodes, VetSearch, VetTable};
use serde::Deserialize;

/// How to read trace files (`[trace]` in the config file).
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields, expecting = "struct TraceArgs")]
pub struct TraceSection {
    /// Trace format (msr, spc, fiu, blkparse, fio-v2, fio-v3, systor, tencent, cloudphysics,
    /// disksim, csv, binary) [default: detected from the content].
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME"))]
    #[serde(deserialize_with = "parsed")]
    pub format: Option<flashkit_trace::formats::Format>,
    /// Print how the format was detected (to stderr).
    #[cfg_attr(feature = "clap", arg(long))]
    pub explain_format: bool,
    /// Keep only this volume: the SPC ASU, SYSTOR LUN, MSR disk, Tencent volume, DiskSim
    /// device (others are counted and dropped) [default: all, laid out one after another].
    #[cfg_attr(
        feature = "clap",
        arg(long, visible_alias = "volume", value_name = "N")
    )]
    pub asu: Option<u16>,
    /// Count and report malformed lines instead of stopping at the first.
    #[cfg_attr(feature = "clap", arg(long))]
    pub skip_bad_lines: bool,
    /// Replay in time order (sorts in memory, 24 B a request) instead of file order.
    #[cfg_attr(feature = "clap", arg(long))]
    pub sort_by_time: bool,
    /// Time unit of DiskSim traces [default: ms] and of the generic CSV's `time` column
    /// [default: ns]: ns, us, ms or s.
    #[cfg_attr(feature = "clap", arg(long, value_name = "UNIT"))]
    #[serde(deserialize_with = "parsed")]
    pub time_unit: Option<flashkit_trace::formats::TimeUnit>,
    /// blkparse events to replay: D (dispatched to the device) or Q (queued) [default: D].
    #[cfg_attr(feature = "clap", arg(long, value_name = "D|Q"))]
    #[serde(deserialize_with = "parsed")]
    pub blkparse_event: Option<flashkit_trace::formats::BlkparseEvent>,
    /// How trace addresses map onto the device: compact (touched blocks only, the
    /// default) or identity (addresses unchanged; volumes one after another).
    #[cfg_attr(feature = "clap", arg(long, value_name = "MAPPING"))]
    #[serde(deserialize_with = "parsed")]
    pub address_map: Option<flashkit_trace::formats::layout::AddressMapping>,
}

impl TraceSection {
    /// The options given, by flag name: each reads a trace, so without one they would do
    /// nothing, and `replay` and `compare` refuse them.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            (self.format.is_some(), "--format"),
            (self.explain_format, "--explain-format"),
            (self.asu.is_some(), "--asu"),
            (self.skip_bad_lines, "--skip-bad-lines"),
            (self.sort_by_time, "--sort-by-time"),
            (self.time_unit.is_some(), "--time-unit"),
            (self.blkparse_event.is_some(), "--blkparse-event"),
            (self.address_map.is_some(), "--address-map"),
        ])
    }
}

/// Device options (`[device]` in the config file).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields, expecting = "struct DeviceArgs")]
pub struct DeviceSection {
    /// NAND preset (fast-paper, grr-paper, mlc-4k, modern-tlc); see `flashkit presets`.
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME"))]
    #[serde(deserialize_with = "preset")]
    pub preset: Option<String>,
    /// Logical capacity [default: 1G].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "positive_size")]
    pub capacity: Option<Size>,
    /// Over-provisioning, a fraction of the logical capacity [default: 0.07].
    #[cfg_attr(feature = "clap", arg(long, value_name = "FRACTION"))]
    #[serde(deserialize_with = "over_provisioning")]
    pub op: Option<f64>,
    /// Page size, overriding the preset's.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "page_size")]
    pub page_size: Option<Size>,
    /// Pages per block, overriding the preset's.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "pages_per_block")]
    pub pages_per_block: Option<u32>,
    /// Erase cycles per block, overriding the preset's.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "at_least_one")]
    pub endurance: Option<u32>,
}

impl DeviceSection {
    /// The options given, by flag name.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            (self.preset.is_some(), "--preset"),
            (self.capacity.is_some(), "--capacity"),
            (self.op.is_some(), "--op"),
            (self.page_size.is_some(), "--page-size"),
            (self.pages_per_block.is_some(), "--pages-per-block"),
            (self.endurance.is_some(), "--endurance"),
        ])
    }
}

impl FtlSection {
    /// The options given, by flag name.
    pub fn given(&self) -> Vec<&'static str> {
        super::unused_ftl_options(self, &[])
            .into_iter()
            .flat_map(|(names, _)| names)
            .collect()
    }
}

/// FTL options (`[ftl]` in the config file).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields, expecting = "struct FtlArgs")]
pub struct FtlSection {
    /// GC victim policies (greedy, cost-benefit, fifo), comma separated; compare runs each.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "LIST")
    )]
    #[serde(deserialize_with = "one_or_many")]
    pub gc: Vec<GcPolicy>,
    /// Collect garbage while fewer blocks than this are free, 2 or more [default: 4].
    #[cfg_attr(feature = "clap", arg(long, value_name = "BLOCKS", value_parser = clap::value_parser!(u32).range(2..)))]
    #[serde(deserialize_with = "gc_threshold")]
    pub gc_threshold: Option<u32>,
    /// Static wear leveling: allowed erase-count spread, or "off" [default: 100].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SPREAD|off"))]
    pub wear_leveling: Option<WearSetting>,
    /// Log blocks of BAST, FAST and O-FAST [default: 8].
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "at_least_one")]
    pub log_blocks: Option<u32>,
    /// FAST and O-FAST: keep one log block for sequential writes ("on", the paper's FAST) or
    /// make every log block random ("off", the fully-associative scheme of its section 3.1)
    /// [default: on].
    #[cfg_attr(feature = "clap", arg(long, value_name = "on|off"))]
    pub sw_log_block: Option<OnOff>,
    /// FAST and O-FAST: an overwrite of a full SW log block's owner "merge"s the SW block
    /// with its data block, the page folded in (Algorithm 2 as published), or "switch"es it
    /// and sends the page to the RW log blocks (ours) [default: merge].
    #[cfg_attr(feature = "clap", arg(long, value_name = "merge|switch"))]
    pub full_sw: Option<FullSw>,
    /// VET insertion schemes (lis, bis), comma separated; compare runs each [default: bis].
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "LIST")
    )]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_insert: Vec<InsertScheme>,
    /// VET node layouts (pd, pf), comma separated; compare runs each [default: pf].
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "LIST")
    )]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_nodes: Vec<VetNodes>,
    /// VET hash tables (cuckoo, swiss, std), comma separated; compare runs each
    /// [default: cuckoo]. swiss is hashbrown's SwissTable with foldhash, std the same table
    /// with SipHash (what std's HashMap is).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "LIST")
    )]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_table: Vec<VetTable>,
    /// VET read searches (paper, guided), comma separated; compare runs each
    /// [default: paper]. paper is Algorithm 2 as published (a binary search on levels for
    /// every address), guided ours (the level of the last leaf first; the same answers in
    /// fewer probes).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "LIST")
    )]
    #[serde(deserialize_with = "one_or_many")]
    pub vet_search: Vec<VetSearch>,
}

/// Run options (`[run]` in the config file).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields, expecting = "struct RunArgs")]
pub struct RunSection {
    /// Seed of every random choice [default: 1].
    #[cfg_attr(feature = "clap", arg(long))]
    pub seed: Option<u64>,
    /// Measure a fresh drive instead of preconditioning it to steady state.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(rename = "no_precondition")]
    pub no_precondition: bool,
    /// Random overwrites after the sequential fill, in logical capacities [default: 1].
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "CAPACITIES", conflicts_with = "no_precondition")
    )]
    #[serde(deserialize_with = "non_negative")]
    pub precondition_overwrites: Option<f64>,
}

/// Workload options (`[workload]` in the config file).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields, expecting = "struct WorkloadArgs")]
pub struct WorkloadSection {
    /// Pattern: uniform, sequential, zipf, hot-cold, gaussian, camera [default: hot-cold].
    #[cfg_attr(feature = "clap", arg(long, value_name = "PATTERN"))]
    #[serde(deserialize_with = "pattern")]
    pub workload: Option<String>,
    /// Number of requests [default: 300k].
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    #[serde(deserialize_with = "positive_count")]
    pub requests: Option<Count>,
    /// Fixed request size.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SIZE", conflicts_with = "sizes")
    )]
    #[serde(deserialize_with = "positive_size")]
    pub size: Option<Size>,
    /// Weighted request sizes [default: 4K:70,16K:20,64K:10].
    #[cfg_attr(feature = "clap", arg(long, value_name = "LIST"))]
    pub sizes: Option<SizeList>,
    /// Weighted read sizes where reads differ from writes, e.g. 8K:50,16K:50 [default: the
    /// request sizes].
    #[cfg_attr(feature = "clap", arg(long, value_name = "LIST"))]
    pub read_sizes: Option<SizeList>,
    /// Share of reads, 0 to 1 [default: 0.3].
    #[cfg_attr(feature = "clap", arg(long, value_name = "FRACTION"))]
    pub read_fraction: Option<Fraction>,
    /// Share of trims, 0 to 1 [default: 0.01].
    #[cfg_attr(feature = "clap", arg(long, value_name = "FRACTION"))]
    pub trim_fraction: Option<Fraction>,
    /// Zipf exponent [default: 0.99].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "theta")]
    pub theta: Option<f64>,
    /// Hot/cold split as ACCESS/SPACE percentages: ACCESS% of requests go to the first
    /// SPACE% of the span, the others anywhere in it [default: 80/20].
    #[cfg_attr(feature = "clap", arg(long, value_name = "ACCESS/SPACE"))]
    pub hot: Option<HotSplit>,
    /// Gaussian centre, a fraction of the span [default: 0.5].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "center")]
    pub center: Option<f64>,
    /// Gaussian standard deviation, a fraction of the span [default: 0.1].
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(deserialize_with = "stddev")]
    pub stddev: Option<f64>,
    /// Camera (a FAT16 card, in sectors of --align): photo size, or a range drawn from
    /// uniformly, as SIZE or MIN-MAX [default: 2M-4M, the FAST paper's camera B].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE|MIN-MAX"))]
    pub file_size: Option<SizeRange>,
    /// Camera: bytes per data write, a multiple of the cluster [default: 64K].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "positive_size")]
    pub chunk_size: Option<Size>,
    /// Camera: bytes per FAT cluster, a power-of-two number of sectors [default: 4K].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "positive_size")]
    pub cluster_size: Option<Size>,
    /// Camera: start the data area at a multiple of this many bytes, e.g. the erase block
    /// [default: right after the root directory, unaligned].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "positive_size")]
    pub data_align: Option<Size>,
    /// Address space covered [default: the device's logical capacity].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "positive_size")]
    pub span: Option<Size>,
    /// Offset and size alignment [default: 4K].
    #[cfg_attr(feature = "clap", arg(long, value_name = "SIZE"))]
    #[serde(deserialize_with = "power_of_two")]
    pub align: Option<Size>,
    /// Time between requests in nanoseconds [default: 0].
    #[cfg_attr(feature = "clap", arg(long, value_name = "NS"))]
    pub interarrival_ns: Option<u64>,
}

impl WorkloadSection {
    /// The options given, by flag name: each describes a generated workload, so with a
    /// trace they would do nothing, and `replay` and `compare` refuse them.
    pub fn given(&self) -> Vec<&'static str> {
        let mut names = given(&[
            (self.workload.is_some(), "--workload"),
            (self.requests.is_some(), "--requests"),
            (self.size.is_some(), "--size"),
            (self.sizes.is_some(), "--sizes"),
            (self.read_sizes.is_some(), "--read-sizes"),
            (self.read_fraction.is_some(), "--read-fraction"),
            (self.trim_fraction.is_some(), "--trim-fraction"),
            (self.span.is_some(), "--span"),
            (self.align.is_some(), "--align"),
            (self.interarrival_ns.is_some(), "--interarrival-ns"),
        ]);
        names.extend(self.pattern_options().into_iter().map(|(name, _)| name));
        names
    }

    /// The pattern-specific options given, by flag name, with the pattern each belongs to.
    pub fn pattern_options(&self) -> Vec<(&'static str, &'static str)> {
        [
            (self.theta.is_some(), "--theta", "zipf"),
            (self.hot.is_some(), "--hot", "hot-cold"),
            (self.center.is_some(), "--center", "gaussian"),
            (self.stddev.is_some(), "--stddev", "gaussian"),
            (self.file_size.is_some(), "--file-size", "camera"),
            (self.chunk_size.is_some(), "--chunk-size", "camera"),
            (self.cluster_size.is_some(), "--cluster-size", "camera"),
            (self.data_align.is_some(), "--data-align", "camera"),
        ]
        .into_iter()
        .filter(|&(set, _, _)| set)
        .map(|(_, name, pattern)| (name, pattern))
        .collect()
    }
}
/// The names of the flags marked set, in order.
pub fn given(flags: &[(bool, &'static str)]) -> Vec<&'static str> {
    flags
        .iter()
        .filter(|&&(set, _)| set)
        .map(|&(_, name)| name)
        .collect()
}
