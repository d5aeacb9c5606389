//! Options resolved into the libraries' specs: the flags first, then the config file, then
//! the built-in default; and the checks of options that would do nothing.

use super::sections::{
    DeviceSection, FtlSection, RunSection, TraceSection, WorkloadSection, given,
};
use super::values::HotSplit;
use super::{ConfigError, ConfigFile};
use flashkit_ftl::{FtlKind, FtlOptions, GcPolicy, HybridConfig, PageFtlConfig, VetConfig};
use flashkit_sim::{DeviceSpec, Precondition};
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::AddressMapping;
use flashkit_trace::workload::camera::CameraModel;
use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};

/// The flags a run was given, for [`check_runs`].
pub struct RunFlags<'a> {
    /// The device flags.
    pub device: &'a DeviceSection,
    /// The FTL flags.
    pub ftl: &'a FtlSection,
    /// The workload flags.
    pub workload: &'a WorkloadSection,
    /// The FTLs to run.
    pub kinds: &'a [FtlKind],
    /// A trace replaces the workload and sizes the device (so neither is checked here).
    pub trace: bool,
}

/// What the runs need of the options, checked before anything is read or built: the device,
/// and without a trace each FTL on its geometry and the workload. Run through
/// [`ConfigFile::blame`] when it fails, to find the config file's lines at fault.
pub fn check_runs(flags: &RunFlags<'_>, file: &ConfigFile) -> Result<(), ConfigError> {
    let device = device_spec(flags.device, &file.device)?;
    let (_, geometry, _) = device.resolve()?;
    if flags.trace {
        return Ok(());
    }
    let (_, options) = ftl_options(flags.ftl, &file.ftl);
    for kind in flags.kinds {
        kind.check(&geometry, &options)
            .map_err(|error| ConfigError::Ftl { kind: *kind, error })?;
    }
    device_workload(flags.workload, &file.workload, device.capacity_bytes)?.validate()?;
    Ok(())
}

/// [`workload_spec`] for a device of `capacity` bytes, whose span must fit it (found out at
/// the first request past the end otherwise, as a runtime failure).
pub fn device_workload(
    flags: &WorkloadSection,
    file: &WorkloadSection,
    capacity: u64,
) -> Result<WorkloadSpec, ConfigError> {
    let spec = workload_spec(flags, file, capacity)?;
    if spec.span_bytes > capacity {
        return Err(ConfigError::Invalid(format!(
            "the workload's span, {}, is larger than the device's logical capacity, {}: raise \
             --capacity or lower --span",
            flashkit_core::units::format_size(spec.span_bytes),
            flashkit_core::units::format_size(capacity)
        )));
    }
    Ok(spec)
}

/// [`check_runs`], its error blamed on the config file's lines at fault.
pub fn check_runs_blamed(flags: &RunFlags<'_>, file: &ConfigFile) -> Result<(), ConfigError> {
    check_runs(flags, file).map_err(|error| file.blame(error, |file| check_runs(flags, file)))
}

/// The device: flags over file over [`DeviceSpec::default`].
pub fn device_spec(flags: &DeviceSection, file: &DeviceSection) -> Result<DeviceSpec, ConfigError> {
    let base = DeviceSpec::default();
    let page_size = flags.page_size.or(file.page_size);
    Ok(DeviceSpec {
        preset: flags
            .preset
            .clone()
            .or_else(|| file.preset.clone())
            .unwrap_or(base.preset),
        capacity_bytes: flags
            .capacity
            .or(file.capacity)
            .map_or(base.capacity_bytes, |s| s.0),
        over_provisioning: flags.op.or(file.op).unwrap_or(base.over_provisioning),
        page_size_bytes: page_size.map(|s| to_u32("page size", s.0)).transpose()?,
        pages_per_block: flags.pages_per_block.or(file.pages_per_block),
        endurance_cycles: flags.endurance.or(file.endurance),
    })
}

/// The GC policies to run, and the options shared by every run.
pub fn ftl_options(flags: &FtlSection, file: &FtlSection) -> (Vec<GcPolicy>, FtlOptions) {
    let base = PageFtlConfig::default();
    let policies = if !flags.gc.is_empty() {
        flags.gc.clone()
    } else {
        file.gc.clone()
    };
    let page = PageFtlConfig {
        gc_policy: policies.first().copied().unwrap_or(base.gc_policy),
        gc_threshold_blocks: flags
            .gc_threshold
            .or(file.gc_threshold)
            .unwrap_or(base.gc_threshold_blocks),
        wear_leveling_spread: flags
            .wear_leveling
            .or(file.wear_leveling)
            .map_or(base.wear_leveling_spread, |w| w.0),
    };
    let base = HybridConfig::default();
    let hybrid = HybridConfig {
        log_blocks: flags
            .log_blocks
            .or(file.log_blocks)
            .unwrap_or(base.log_blocks),
        sw_log_block: flags
            .sw_log_block
            .or(file.sw_log_block)
            .map_or(base.sw_log_block, |s| s.0),
        full_sw: flags.full_sw.or(file.full_sw).unwrap_or(base.full_sw),
    };
    let vet = vet_variants(flags, file)[0];
    (policies, FtlOptions { page, hybrid, vet })
}

/// Refuse FTL options that no FTL of the run uses (`--log-blocks` with `--ftl page` would do
/// nothing, and the run would look as if it had been measured with it). `runs` names the
/// FTLs in the message ("--ftl page").
pub fn check_ftl_options(
    flags: &FtlSection,
    kinds: &[FtlKind],
    runs: &str,
) -> Result<(), ConfigError> {
    let unused = unused_ftl_options(flags, kinds);
    if unused.is_empty() {
        return Ok(());
    }
    let count: usize = unused.iter().map(|(names, _)| names.len()).sum();
    let text: Vec<String> = unused
        .iter()
        .map(|(names, ftls)| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            unused_options(&names, &format!("{ftls}, which {runs} does not run"))
        })
        .collect();
    Err(ConfigError::Unused(format!(
        "{}: drop {}",
        text.join("; "),
        if count == 1 { "it" } else { "them" }
    )))
}

/// The FTL options given (by flag name) that no FTL of `kinds` uses, grouped with the FTLs
/// they are for.
pub fn unused_ftl_options(
    flags: &FtlSection,
    kinds: &[FtlKind],
) -> Vec<(Vec<&'static str>, &'static str)> {
    /// The FTLs a group of options is for, which kinds those are, and the options (set?, flag).
    type Group = (&'static str, fn(FtlKind) -> bool, Vec<(bool, &'static str)>);
    let groups: [Group; 4] = [
        (
            "page, vet and emt",
            FtlKind::uses_gc_policy,
            vec![
                (!flags.gc.is_empty(), "--gc"),
                (flags.gc_threshold.is_some(), "--gc-threshold"),
                (flags.wear_leveling.is_some(), "--wear-leveling"),
            ],
        ),
        (
            "bast, fast and ofast",
            FtlKind::uses_log_blocks,
            vec![(flags.log_blocks.is_some(), "--log-blocks")],
        ),
        (
            "fast and ofast",
            |kind| matches!(kind, FtlKind::Fast | FtlKind::OFast),
            vec![
                (flags.sw_log_block.is_some(), "--sw-log-block"),
                (flags.full_sw.is_some(), "--full-sw"),
            ],
        ),
        (
            "vet",
            |kind| kind == FtlKind::Vet,
            vec![
                (!flags.vet_insert.is_empty(), "--vet-insert"),
                (!flags.vet_nodes.is_empty(), "--vet-nodes"),
                (!flags.vet_table.is_empty(), "--vet-table"),
                (!flags.vet_search.is_empty(), "--vet-search"),
            ],
        ),
    ];
    groups
        .into_iter()
        .filter(|(_, applies, _)| !kinds.iter().copied().any(applies))
        .map(|(ftls, _, options)| (given(&options), ftls))
        .filter(|(names, _)| !names.is_empty())
        .collect()
}

/// The FTL options given several values (`--gc greedy,fifo`, `vet_table = "swiss,std"`), by
/// flag name: `compare` runs every combination, and a command that runs one FTL refuses them
/// (it ran the first and dropped the others).
pub fn listed_ftl_options(flags: &FtlSection, file: &FtlSection) -> Vec<&'static str> {
    let count = |a: usize, b: usize| if a == 0 { b } else { a };
    [
        (count(flags.gc.len(), file.gc.len()), "--gc"),
        (
            count(flags.vet_insert.len(), file.vet_insert.len()),
            "--vet-insert",
        ),
        (
            count(flags.vet_nodes.len(), file.vet_nodes.len()),
            "--vet-nodes",
        ),
        (
            count(flags.vet_table.len(), file.vet_table.len()),
            "--vet-table",
        ),
        (
            count(flags.vet_search.len(), file.vet_search.len()),
            "--vet-search",
        ),
    ]
    .into_iter()
    .filter(|&(values, _)| values > 1)
    .map(|(_, name)| name)
    .collect()
}

/// The VET variants to run (every insertion scheme by every node layout, table and search
/// asked for), the defaults where none is given.
pub fn vet_variants(flags: &FtlSection, file: &FtlSection) -> Vec<VetConfig> {
    fn pick<T: Clone>(a: &[T], b: &[T]) -> Vec<T> {
        if a.is_empty() { b.to_vec() } else { a.to_vec() }
    }
    let mut inserts = pick(&flags.vet_insert, &file.vet_insert);
    let mut layouts = pick(&flags.vet_nodes, &file.vet_nodes);
    let mut tables = pick(&flags.vet_table, &file.vet_table);
    if inserts.is_empty() {
        inserts.push(VetConfig::default().insert);
    }
    if layouts.is_empty() {
        layouts.push(VetConfig::default().nodes);
    }
    if tables.is_empty() {
        tables.push(VetConfig::default().table);
    }
    let mut searches = pick(&flags.vet_search, &file.vet_search);
    if searches.is_empty() {
        searches.push(VetConfig::default().search);
    }
    let mut variants = Vec::new();
    for &insert in &inserts {
        for &nodes in &layouts {
            for &table in &tables {
                for &search in &searches {
                    variants.push(VetConfig {
                        insert,
                        nodes,
                        table,
                        search,
                    });
                }
            }
        }
    }
    variants
}

/// How to read traces, and how to map them onto the device.
pub fn trace_options(flags: &TraceSection, file: &TraceSection) -> (TraceOptions, AddressMapping) {
    let options = TraceOptions {
        format: flags.format.or(file.format),
        blkparse_event: flags.blkparse_event.or(file.blkparse_event),
        time_unit: flags.time_unit.or(file.time_unit),
        skip_bad_lines: flags.skip_bad_lines || file.skip_bad_lines,
        sort_by_time: flags.sort_by_time || file.sort_by_time,
        volume: flags.asu.or(file.asu),
    };
    let mapping = flags.address_map.or(file.address_map).unwrap_or_default();
    (options, mapping)
}

/// The seed of the runs: flags over file over 1.
pub fn seed(flags: &RunSection, file: &RunSection) -> u64 {
    flags.seed.or(file.seed).unwrap_or(1)
}

/// How to precondition the drive, or `None` for a fresh one.
///
/// Flags over the file: `--precondition-overwrites` on the command line preconditions even
/// where the file says `no_precondition` (the two flags together are refused by clap).
pub fn precondition(flags: &RunSection, file: &RunSection) -> Option<Precondition> {
    let overwrites = match flags.precondition_overwrites {
        _ if flags.no_precondition => return None,
        Some(overwrites) => overwrites,
        None if file.no_precondition => return None,
        None => file
            .precondition_overwrites
            .unwrap_or(Precondition::default().random_overwrites),
    };
    Some(Precondition {
        random_overwrites: overwrites,
        ..Precondition::default()
    })
}

/// The workload: flags over file over the built-in workload (hot/cold 80/20, mixed 4-64 KiB
/// requests, 30% reads, 1% trims, 300k requests over the whole device).
pub fn workload_spec(
    flags: &WorkloadSection,
    file: &WorkloadSection,
    capacity: u64,
) -> Result<WorkloadSpec, ConfigError> {
    macro_rules! pick {
        ($field:ident) => {
            flags.$field.clone().or_else(|| file.$field.clone())
        };
    }
    let pattern_name = pick!(workload).unwrap_or_else(|| "hot-cold".into());
    let pattern = pattern(flags, file, &pattern_name)?;
    check_pattern_flags(flags, &pattern_name, pick!(workload).is_some())?;
    // Read sizes with no reads would size nothing.
    if flags.read_sizes.is_some() && pick!(read_fraction).is_some_and(|f| f.0 == 0.0) {
        return Err(ConfigError::Unused(
            "--read-sizes sizes reads, and the read fraction is 0: drop it".into(),
        ));
    }
    let size = request_sizes(flags, file)?;
    let read_size = pick!(read_sizes).map(|list| list.0);
    Ok(WorkloadSpec {
        pattern,
        size,
        read_size,
        requests: pick!(requests).map_or(300_000, |c| c.0),
        span_bytes: pick!(span).map_or(capacity, |s| s.0),
        read_fraction: pick!(read_fraction).map_or(0.3, |f| f.0),
        trim_fraction: pick!(trim_fraction).map_or(0.01, |f| f.0),
        align_bytes: to_u32("alignment", pick!(align).map_or(4096, |s| s.0))?,
        interarrival_ns: pick!(interarrival_ns).unwrap_or(0),
    })
}

/// The pattern named `name`, with its own options: flags over file over its defaults.
fn pattern(
    flags: &WorkloadSection,
    file: &WorkloadSection,
    name: &str,
) -> Result<Pattern, ConfigError> {
    macro_rules! pick {
        ($field:ident) => {
            flags.$field.or(file.$field)
        };
    }
    Ok(match name {
        "uniform" => Pattern::Uniform,
        "sequential" => Pattern::Sequential,
        "zipf" => Pattern::Zipf {
            theta: pick!(theta).unwrap_or(0.99),
        },
        "hot-cold" => {
            let hot = pick!(hot).unwrap_or(HotSplit {
                access_percent: 80.0,
                space_percent: 20.0,
            });
            Pattern::HotCold {
                access_percent: hot.access_percent,
                space_percent: hot.space_percent,
            }
        }
        "gaussian" => Pattern::Gaussian {
            center: pick!(center).unwrap_or(0.5),
            stddev: pick!(stddev).unwrap_or(0.1),
        },
        // The FAST paper's camera B is the default (its 4 KiB clusters fit the default
        // 4 KiB alignment, which is the camera's sector; A's 2 KiB clusters would not).
        "camera" => {
            let base = CameraModel::FAST_B;
            let files = pick!(file_size);
            Pattern::Camera(CameraModel {
                cluster_bytes: pick!(cluster_size)
                    .map_or(Ok(base.cluster_bytes), |s| to_u32("cluster size", s.0))?,
                chunk_bytes: pick!(chunk_size)
                    .map_or(Ok(base.chunk_bytes), |s| to_u32("chunk size", s.0))?,
                file_min_bytes: files.map_or(base.file_min_bytes, |f| f.min),
                file_max_bytes: files.map_or(base.file_max_bytes, |f| f.max),
                data_align_bytes: pick!(data_align).map(|s| s.0).or(base.data_align_bytes),
            })
        }
        other => {
            return Err(ConfigError::Invalid(format!(
                "unknown workload {other:?} (expected uniform, sequential, zipf, hot-cold, \
                 gaussian or camera)"
            )));
        }
    })
}

/// Refuse the flags the workload `pattern` (`named`, or the default) would ignore: an option
/// of another pattern, and the camera's op mix and request sizes. The file may hold
/// defaults for several patterns (`--workload` picks one), so only the flags are checked.
fn check_pattern_flags(
    flags: &WorkloadSection,
    pattern: &str,
    named: bool,
) -> Result<(), ConfigError> {
    if let Some((flag, wanted)) = flags
        .pattern_options()
        .into_iter()
        .find(|&(_, of)| of != pattern)
    {
        let whose = if named { "" } else { " (the default)" };
        return Err(ConfigError::Unused(format!(
            "{flag} applies to --workload {wanted}, but the workload is {pattern}{whose}"
        )));
    }
    if pattern != "camera" {
        return Ok(());
    }
    // The camera writes files in chunks and metadata, nothing else: the op mix and the
    // request sizes are not its (they were accepted and changed nothing).
    let ignored: Vec<String> = given(&[
        (flags.read_fraction.is_some(), "--read-fraction"),
        (flags.trim_fraction.is_some(), "--trim-fraction"),
        (flags.size.is_some(), "--size"),
        (flags.sizes.is_some(), "--sizes"),
        (flags.read_sizes.is_some(), "--read-sizes"),
    ])
    .into_iter()
    .map(String::from)
    .collect();
    if ignored.is_empty() {
        return Ok(());
    }
    Err(ConfigError::Unused(format!(
        "{}: the camera workload only writes (its sizes are --file-size, --chunk-size and \
         --cluster-size), so drop {}",
        unused_options(&ignored, "the other workloads"),
        if ignored.len() == 1 { "it" } else { "them" }
    )))
}

/// The request sizes: the command line's win over the file's, whichever of `--size` and
/// `--sizes` each uses (clap keeps the two flags apart; the file is checked here).
fn request_sizes(flags: &WorkloadSection, file: &WorkloadSection) -> Result<SizeDist, ConfigError> {
    let (size, sizes) = if flags.size.is_some() || flags.sizes.is_some() {
        (flags.size, flags.sizes.clone())
    } else {
        if file.size.is_some() && file.sizes.is_some() {
            return Err(ConfigError::Invalid(
                "the config file's [workload] gives both size and sizes; keep one".into(),
            ));
        }
        (file.size, file.sizes.clone())
    };
    Ok(match (size, sizes) {
        (Some(size), _) => SizeDist::Fixed {
            bytes: to_u32("request size", size.0)?,
        },
        (None, Some(list)) => list.0,
        (None, None) => SizeDist::Choice {
            sizes: vec![(4096, 70), (16384, 20), (65536, 10)],
        },
    })
}

/// "NAME is an option for WHAT" (or "NAMES are options ..."): how an option that would do
/// nothing is refused, on the command line and in a sweep's grid.
pub fn unused_options(names: &[String], what: &str) -> String {
    let verb = if names.len() == 1 {
        "is an option"
    } else {
        "are options"
    };
    format!("{} {verb} for {what}", names.join(", "))
}

fn to_u32(what: &str, value: u64) -> Result<u32, ConfigError> {
    u32::try_from(value)
        .map_err(|_| ConfigError::Invalid(format!("{what} {value} B is not below 4 GiB")))
}
