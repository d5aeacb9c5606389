//! Resolve options: command-line flags, then the config file, then built-in defaults.

use crate::args::{DeviceArgs, FtlArgs, HotSplit, RunArgs, TraceArgs, WorkloadArgs, given};
use anyhow::{Context, Result, bail};
use flashkit_ftl::{FtlKind, FtlOptions, GcPolicy, HybridConfig, PageFtlConfig, VetConfig};
use flashkit_sim::{DeviceSpec, Precondition};
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::AddressMapping;
use flashkit_trace::workload::camera::CameraModel;
use flashkit_trace::workload::{Pattern, SizeDist, WorkloadSpec};
use serde::Deserialize;
use std::path::Path;

/// The config file: one section per option group, with the flags' names.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigFile {
    pub device: DeviceArgs,
    pub ftl: FtlArgs,
    pub run: RunArgs,
    pub workload: WorkloadArgs,
    pub trace: TraceArgs,
    /// Where the options came from, to say which lines an error is about.
    #[serde(skip)]
    origin: Option<Origin>,
}

/// The text of a TOML file (`what` names it in errors): TOML is UTF-8, and a byte that is
/// not is reported at its line and column (the error said only "stream did not contain
/// valid UTF-8").
pub fn read_toml_text(path: &Path, what: &str) -> Result<String> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let at = error.utf8_error().valid_up_to();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        anyhow::anyhow!(
            "{what} {}: line {}, column {}: byte {:#04x} is not UTF-8 (TOML files are UTF-8)",
            path.display(),
            bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
            at - line_start + 1,
            bytes[at]
        )
    })
}

/// The options of a sweep file's `[base]`: `(section, key, line, "key = value")`.
pub fn base_options(text: &str) -> Vec<(String, String, usize, String)> {
    option_lines(text, Some("base"))
        .into_iter()
        .map(|o| (o.section, o.key, o.line, o.written))
        .collect()
}

/// A loaded config file: its path, its table, and each option's line.
#[derive(Debug)]
struct Origin {
    path: std::path::PathBuf,
    table: toml::Table,
    options: Vec<OptionLine>,
}

/// One option of the file: `[section] key` at `line`, as written (`key = value`).
#[derive(Debug)]
struct OptionLine {
    section: String,
    key: String,
    line: usize,
    written: String,
}

impl ConfigFile {
    pub fn load(path: Option<&Path>) -> Result<ConfigFile> {
        let Some(path) = path else {
            return Ok(ConfigFile::default());
        };
        crate::output::note_input(path);
        let text = read_toml_text(path, "config file")?;
        let mut file: ConfigFile =
            toml::from_str(&text).with_context(|| format!("config file {}", path.display()))?;
        file.origin = Some(Origin {
            path: path.to_path_buf(),
            table: toml::from_str(&text).context("invariant: the file parsed once")?,
            options: option_lines(&text, None),
        });
        Ok(file)
    }

    /// `error`, which `check` gave for this file (with the flags), with the lines of the
    /// file's options it is about: found by running `check` again without each option in
    /// turn. An option whose absence lets the check pass is at fault; failing that, one
    /// whose absence changes the error is part of it. A rule that ties two options together
    /// (`read_fraction + trim_fraction` above 1, a size and the alignment, a capacity and
    /// the page size) is only checked once flags and file are merged, where the error could
    /// name neither the file nor a line. An error no option of the file takes part in (the
    /// flags' own) is returned as it is.
    pub fn blame(
        &self,
        error: anyhow::Error,
        check: impl Fn(&ConfigFile) -> Result<()>,
    ) -> anyhow::Error {
        let Some(origin) = &self.origin else {
            return error;
        };
        let message = format!("{error:#}");
        let verdicts = origin.options.iter().filter_map(|option| {
            let without = self.without(option)?;
            let place = format!(
                "line {} ([{}] {})",
                option.line, option.section, option.written
            );
            Some((place, check(&without).err()))
        });
        let lines = at_fault(&message, verdicts);
        if lines.is_empty() {
            return error;
        }
        anyhow::anyhow!(
            "config file {}, {}: {message}",
            origin.path.display(),
            lines.join(" and ")
        )
    }

    /// This file without `option` (as if that line were deleted), or `None` if it no
    /// longer reads (it cannot: every option is optional).
    fn without(&self, option: &OptionLine) -> Option<ConfigFile> {
        let mut table = self.origin.as_ref()?.table.clone();
        if let Some(toml::Value::Table(section)) = table.get_mut(&option.section) {
            section.remove(&option.key);
        }
        toml::Value::Table(table).try_into().ok()
    }
}

/// The places at fault for an error whose text is `message`, from the check's verdict with
/// each place left out in turn: those whose absence lets the check pass; failing that, those
/// whose absence changes the error (the rule that ties options together, where removing
/// one of them gives another error); failing that, none.
pub fn at_fault(
    message: &str,
    verdicts: impl IntoIterator<Item = (String, Option<anyhow::Error>)>,
) -> Vec<String> {
    let verdicts: Vec<(String, Option<String>)> = verdicts
        .into_iter()
        .map(|(place, error)| (place, error.map(|e| format!("{e:#}"))))
        .collect();
    let passing: Vec<String> = verdicts
        .iter()
        .filter(|(_, error)| error.is_none())
        .map(|(place, _)| place.clone())
        .collect();
    if !passing.is_empty() {
        return passing;
    }
    verdicts
        .into_iter()
        .filter(|(_, error)| error.as_deref().is_some_and(|e| e != message))
        .map(|(place, _)| place)
        .collect()
}

/// Every `[section] key` of a config file with its line and text, in file order; with
/// `under`, of the sections in that table (a sweep file's `base`).
fn option_lines(text: &str, under: Option<&str>) -> Vec<OptionLine> {
    let Ok(document) = toml::de::DeTable::parse(text) else {
        return Vec::new();
    };
    let sections = match under {
        None => document.get_ref(),
        Some(name) => match document.get_ref().get(name).map(|v| v.get_ref()) {
            Some(toml::de::DeValue::Table(table)) => table,
            _ => return Vec::new(),
        },
    };
    let mut options = Vec::new();
    for (section, value) in sections.iter() {
        let toml::de::DeValue::Table(table) = value.get_ref() else {
            continue;
        };
        for (key, value) in table.iter() {
            let line = line_of(text, key.span());
            let written = text
                .get(key.span().start..value.span().end)
                .unwrap_or(key.get_ref())
                .to_string();
            options.push(OptionLine {
                section: section.get_ref().to_string(),
                key: key.get_ref().to_string(),
                line,
                written,
            });
        }
    }
    options.sort_by_key(|o| o.line);
    options
}

/// The line (from 1) of byte `span.start` of `text`.
pub fn line_of(text: &str, span: std::ops::Range<usize>) -> usize {
    let start = span.start.min(text.len());
    text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The flags a run was given, for [`check_runs`].
pub struct RunFlags<'a> {
    pub device: &'a DeviceArgs,
    pub ftl: &'a FtlArgs,
    pub workload: &'a WorkloadArgs,
    /// The FTLs to run.
    pub kinds: &'a [FtlKind],
    /// A trace replaces the workload and sizes the device (so neither is checked here).
    pub trace: bool,
}

/// What the runs need of the options, checked before anything is read or built: the device,
/// and without a trace each FTL on its geometry and the workload. Run through
/// [`ConfigFile::blame`] when it fails, to find the config file's lines at fault.
pub fn check_runs(flags: &RunFlags<'_>, file: &ConfigFile) -> Result<()> {
    let device = device_spec(flags.device, &file.device)?;
    let (_, geometry, _) = device.resolve()?;
    if flags.trace {
        return Ok(());
    }
    let (_, options) = ftl_options(flags.ftl, &file.ftl);
    for kind in flags.kinds {
        kind.check(&geometry, &options)
            .map_err(|e| anyhow::anyhow!("{kind}: {e}"))?;
    }
    device_workload(flags.workload, &file.workload, device.capacity_bytes)?.validate()?;
    Ok(())
}

/// [`workload_spec`] for a device of `capacity` bytes, whose span must fit it (found out at
/// the first request past the end otherwise, as a runtime failure).
pub fn device_workload(
    flags: &WorkloadArgs,
    file: &WorkloadArgs,
    capacity: u64,
) -> Result<WorkloadSpec> {
    let spec = workload_spec(flags, file, capacity)?;
    if spec.span_bytes > capacity {
        bail!(
            "the workload's span, {}, is larger than the device's logical capacity, {}: raise \
             --capacity or lower --span",
            flashkit_core::units::format_size(spec.span_bytes),
            flashkit_core::units::format_size(capacity)
        );
    }
    Ok(spec)
}

/// [`check_runs`], its error blamed on the config file's lines at fault.
pub fn check_runs_blamed(flags: &RunFlags<'_>, file: &ConfigFile) -> Result<()> {
    check_runs(flags, file).map_err(|error| file.blame(error, |file| check_runs(flags, file)))
}

pub fn device_spec(flags: &DeviceArgs, file: &DeviceArgs) -> Result<DeviceSpec> {
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
pub fn ftl_options(flags: &FtlArgs, file: &FtlArgs) -> (Vec<GcPolicy>, FtlOptions) {
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
    };
    let vet = vet_variants(flags, file)[0];
    (policies, FtlOptions { page, hybrid, vet })
}

/// Refuse FTL options that no FTL of the run uses (`--log-blocks` with `--ftl page` would do
/// nothing, and the run would look as if it had been measured with it). `runs` names the
/// FTLs in the message ("--ftl page").
pub fn check_ftl_options(flags: &FtlArgs, kinds: &[FtlKind], runs: &str) -> Result<()> {
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
    bail!(
        "{}: drop {}",
        text.join("; "),
        if count == 1 { "it" } else { "them" }
    )
}

/// The FTL options given (by flag name) that no FTL of `kinds` uses, grouped with the FTLs
/// they are for.
pub fn unused_ftl_options(
    flags: &FtlArgs,
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
            vec![(flags.sw_log_block.is_some(), "--sw-log-block")],
        ),
        (
            "vet",
            |kind| kind == FtlKind::Vet,
            vec![
                (!flags.vet_insert.is_empty(), "--vet-insert"),
                (!flags.vet_nodes.is_empty(), "--vet-nodes"),
                (!flags.vet_table.is_empty(), "--vet-table"),
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

/// The VET variants to run (every insertion scheme by every node layout asked for), the
/// defaults where none is given.
/// The FTL options given several values (`--gc greedy,fifo`, `vet_table = "swiss,std"`), by
/// flag name: `compare` runs every combination, and a command that runs one FTL refuses them
/// (it ran the first and dropped the others).
pub fn listed_ftl_options(flags: &FtlArgs, file: &FtlArgs) -> Vec<&'static str> {
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
    ]
    .into_iter()
    .filter(|&(values, _)| values > 1)
    .map(|(_, name)| name)
    .collect()
}

pub fn vet_variants(flags: &FtlArgs, file: &FtlArgs) -> Vec<VetConfig> {
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
    let mut variants = Vec::new();
    for &insert in &inserts {
        for &nodes in &layouts {
            for &table in &tables {
                variants.push(VetConfig {
                    insert,
                    nodes,
                    table,
                });
            }
        }
    }
    variants
}

pub use flashkit_lab::compare::label;

/// How to read traces, and how to map them onto the device.
pub fn trace_options(flags: &TraceArgs, file: &TraceArgs) -> (TraceOptions, AddressMapping) {
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

pub fn seed(flags: &RunArgs, file: &RunArgs) -> u64 {
    flags.seed.or(file.seed).unwrap_or(1)
}

/// How to precondition the drive, or `None` for a fresh one.
///
/// Flags over the file: `--precondition-overwrites` on the command line preconditions even
/// where the file says `no_precondition` (the two flags together are refused by clap).
pub fn precondition(flags: &RunArgs, file: &RunArgs) -> Option<Precondition> {
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
    flags: &WorkloadArgs,
    file: &WorkloadArgs,
    capacity: u64,
) -> Result<WorkloadSpec> {
    macro_rules! pick {
        ($field:ident) => {
            flags.$field.clone().or_else(|| file.$field.clone())
        };
    }
    let pattern_name = pick!(workload).unwrap_or_else(|| "hot-cold".into());
    let pattern = match pattern_name.as_str() {
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
        other => bail!(
            "unknown workload {other:?} (expected uniform, sequential, zipf, hot-cold, gaussian or camera)"
        ),
    };
    // An option of another pattern would be ignored; on the command line that is a mistake
    // (the file may hold defaults for several patterns, and `--workload` picks one).
    if let Some((flag, wanted)) = flags
        .pattern_options()
        .into_iter()
        .find(|&(_, pattern)| pattern != pattern_name)
    {
        let whose = if pick!(workload).is_some() {
            ""
        } else {
            " (the default)"
        };
        bail!("{flag} applies to --workload {wanted}, but the workload is {pattern_name}{whose}");
    }
    // The camera writes files in chunks and metadata, nothing else: the op mix and the
    // request sizes are not its (they were accepted and changed nothing).
    if pattern_name == "camera" {
        let ignored: Vec<String> = [
            (flags.read_fraction.is_some(), "--read-fraction"),
            (flags.trim_fraction.is_some(), "--trim-fraction"),
            (flags.size.is_some(), "--size"),
            (flags.sizes.is_some(), "--sizes"),
            (flags.read_sizes.is_some(), "--read-sizes"),
        ]
        .into_iter()
        .filter(|&(given, _)| given)
        .map(|(_, flag)| flag.to_string())
        .collect();
        if !ignored.is_empty() {
            bail!(
                "{}: the camera workload only writes (its sizes are --file-size, \
                 --chunk-size and --cluster-size), so drop {}",
                unused_options(&ignored, "the other workloads"),
                if ignored.len() == 1 { "it" } else { "them" }
            );
        }
    }
    // Read sizes with no reads would size nothing.
    if flags.read_sizes.is_some() && pick!(read_fraction).is_some_and(|f| f.0 == 0.0) {
        bail!("--read-sizes sizes reads, and the read fraction is 0: drop it");
    }
    // The command line's sizes win over the file's, whichever of --size and --sizes each
    // uses; clap keeps the two flags apart, the file is checked here.
    let (size, sizes) = if flags.size.is_some() || flags.sizes.is_some() {
        (flags.size, flags.sizes.clone())
    } else {
        if file.size.is_some() && file.sizes.is_some() {
            bail!("the config file's [workload] gives both size and sizes; keep one");
        }
        (file.size, file.sizes.clone())
    };
    let size = match (size, sizes) {
        (Some(size), _) => SizeDist::Fixed {
            bytes: to_u32("request size", size.0)?,
        },
        (None, Some(list)) => list.0,
        (None, None) => SizeDist::Choice {
            sizes: vec![(4096, 70), (16384, 20), (65536, 10)],
        },
    };
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

fn to_u32(what: &str, value: u64) -> Result<u32> {
    u32::try_from(value).map_err(|_| anyhow::anyhow!("{what} {value} B is not below 4 GiB"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Size, SizeList};

    /// `--precondition-overwrites` given on the command line used to be ignored under a
    /// file's `no_precondition`; `--no-precondition` still wins over the file's overwrites.
    #[test]
    fn preconditioning_flags_win_over_the_file() {
        let run = |text: &str| -> RunArgs { toml::from_str(text).expect("valid") };
        let fresh = run("no_precondition = true");
        let three = RunArgs {
            precondition_overwrites: Some(3.0),
            ..RunArgs::default()
        };
        let overwrites = |p: Option<Precondition>| p.map(|p| p.random_overwrites);
        assert_eq!(overwrites(precondition(&three, &fresh)), Some(3.0));
        assert_eq!(overwrites(precondition(&RunArgs::default(), &fresh)), None);
        let no = RunArgs {
            no_precondition: true,
            ..RunArgs::default()
        };
        assert_eq!(
            overwrites(precondition(&no, &run("precondition_overwrites = 2.0"))),
            None
        );
        assert_eq!(
            overwrites(precondition(
                &RunArgs::default(),
                &run("precondition_overwrites = 2.0")
            )),
            Some(2.0)
        );
        assert_eq!(
            overwrites(precondition(&RunArgs::default(), &RunArgs::default())),
            Some(Precondition::default().random_overwrites)
        );
    }

    #[test]
    fn flags_win_over_the_file_and_the_file_over_defaults() {
        let file: ConfigFile = toml::from_str(
            "[device]\ncapacity = \"2G\"\npreset = \"fast-paper\"\n[workload]\nrequests = \"10k\"\nworkload = \"zipf\"\n",
        )
        .expect("valid config");
        let flags = DeviceArgs {
            capacity: Some(Size(4 << 30)),
            ..DeviceArgs::default()
        };
        let device = device_spec(&flags, &file.device).expect("valid");
        assert_eq!(device.capacity_bytes, 4 << 30);
        assert_eq!(device.preset, "fast-paper");
        assert!((device.over_provisioning - 0.07).abs() < 1e-12);
        let w = workload_spec(&WorkloadArgs::default(), &file.workload, 1 << 30).expect("valid");
        assert_eq!(w.requests, 10_000);
        assert_eq!(w.pattern, Pattern::Zipf { theta: 0.99 });
    }

    #[test]
    fn log_block_options_resolve_from_flags_and_file() {
        let file: ConfigFile =
            toml::from_str("[ftl]\nlog_blocks = 16\nsw_log_block = \"off\"\n").expect("valid");
        let (_, options) = ftl_options(&FtlArgs::default(), &file.ftl);
        assert_eq!(options.hybrid.log_blocks, 16);
        assert!(!options.hybrid.sw_log_block);
        let flags = FtlArgs {
            log_blocks: Some(4),
            ..FtlArgs::default()
        };
        let (_, options) = ftl_options(&flags, &file.ftl);
        assert_eq!(options.hybrid.log_blocks, 4);
        let (_, options) = ftl_options(&FtlArgs::default(), &FtlArgs::default());
        assert_eq!(options.hybrid, HybridConfig::default());
    }

    #[test]
    fn trace_options_come_from_flags_and_the_trace_section() {
        let file: ConfigFile = toml::from_str(
            "[trace]\nformat = \"disksim\"\ntime_unit = \"ns\"\nsort_by_time = true\naddress_map = \"identity\"\n",
        )
        .expect("valid config");
        let flags = TraceArgs {
            asu: Some(2),
            ..TraceArgs::default()
        };
        let (options, mapping) = trace_options(&flags, &file.trace);
        assert_eq!(
            options.format,
            Some(flashkit_trace::formats::Format::DiskSim)
        );
        assert_eq!(
            options.time_unit,
            Some(flashkit_trace::formats::TimeUnit::Ns)
        );
        assert!(options.sort_by_time && !options.skip_bad_lines);
        assert_eq!(
            (options.volume, mapping),
            (Some(2), AddressMapping::Identity)
        );
        let bad = toml::from_str::<ConfigFile>("[trace]\nformat = \"nope\"\n").expect_err("bad");
        assert!(bad.to_string().contains("unknown trace format"), "{bad}");
    }

    #[test]
    fn unknown_config_keys_are_refused() {
        let error = toml::from_str::<ConfigFile>("[device]\ncapacty = \"2G\"\n").expect_err("typo");
        assert!(error.to_string().contains("capacty"), "{error}");
    }

    #[test]
    fn size_lists_and_hot_splits_parse() {
        assert_eq!(
            "4K:3, 64K:1".parse::<SizeList>().expect("valid").0,
            SizeDist::Choice {
                sizes: vec![(4096, 3), (65536, 1)]
            }
        );
        assert!("4K:x".parse::<SizeList>().is_err());
        assert_eq!(
            "90/10".parse::<HotSplit>().expect("valid"),
            HotSplit {
                access_percent: 90.0,
                space_percent: 10.0
            }
        );
        for bad in ["90", "120/10", "80:20", "-5/50"] {
            assert!(bad.parse::<HotSplit>().is_err(), "{bad}");
        }
    }

    /// A value out of range in a config file is reported at its line, naming the key: these
    /// errors came after the merge with the flags, naming neither the file's line nor the
    /// key, and some blamed a flag nobody gave (`--hot "80:20"`).
    #[test]
    fn bad_values_in_a_config_file_name_their_line_and_key() {
        for (text, line, needle) in [
            (
                "[workload]\nrequests = 5\nread_fraction = 1.5\n",
                3,
                "1.5 is not a fraction from 0 to 1",
            ),
            (
                "[workload]\nhot = \"80:20\"\n",
                2,
                "\"80:20\" is not ACCESS/SPACE percentages",
            ),
            (
                "[workload]\n\nsizes = \"4K:x\"\n",
                3,
                "item \"4K:x\": weight \"x\" is not a whole number",
            ),
            ("[workload]\nread_sizes = \"9G\"\n", 2, "is not below 4 GiB"),
            (
                "[ftl]\ngc_threshold = 0\n",
                2,
                "gc_threshold 0 is below the minimum of 2 blocks",
            ),
            // Found by an outside bad-input hunt: these were checked only after the merge
            // with the flags, and the error named neither the file nor the line.
            (
                "[device]\nop = 100\n",
                2,
                "over-provisioning 100 is not a fraction between 0 and 4",
            ),
            ("[device]\ncapacity = 0\n", 2, "0 B: a size must be above 0"),
            (
                "[device]\npage_size = \"3000\"\n",
                2,
                "page size 3000 B is not a power of two",
            ),
            (
                "[device]\npreset = \"nand\"\n",
                2,
                "unknown device preset \"nand\"",
            ),
            (
                "[device]\nendurance = 0\n",
                2,
                "0 is below the minimum of 1",
            ),
            (
                "[device]\npages_per_block = 1\n",
                2,
                "pages per block 1 is outside",
            ),
            ("[ftl]\nlog_blocks = 0\n", 2, "0 is below the minimum of 1"),
            (
                "[run]\nprecondition_overwrites = -1.0\n",
                2,
                "-1 is not a finite number",
            ),
            (
                "[workload]\nrequests = 0\n",
                2,
                "0 is below the minimum of 1",
            ),
            ("[workload]\nsize = \"0\"\n", 2, "a size must be above 0"),
            (
                "[workload]\nsizes = \"4K:1,0:1\"\n",
                2,
                "item \"0:1\": a size must be above 0",
            ),
            (
                "[workload]\nsizes = \"4K:0\"\n",
                2,
                "gives no size a positive weight",
            ),
            (
                "[workload]\ntheta = -1.0\n",
                2,
                "-1 is not a finite exponent above 0",
            ),
            (
                "[workload]\ntheta = nan\n",
                2,
                "NaN is not a finite exponent above 0",
            ),
            (
                "[workload]\ncenter = 1.5\n",
                2,
                "1.5 is not a fraction of the span",
            ),
            (
                "[workload]\nstddev = 0.0\n",
                2,
                "0 is not a fraction of the span above 0",
            ),
            ("[workload]\nspan = 0\n", 2, "a size must be above 0"),
            (
                "[workload]\nalign = \"3K\"\n",
                2,
                "3072 B is not a power of two",
            ),
            ("[workload]\nchunk_size = 0\n", 2, "a size must be above 0"),
            ("[workload]\nfile_size = 0\n", 2, "a size must be above 0"),
            (
                "[workload]\nfile_size = \"0-4M\"\n",
                2,
                "a size must be above 0",
            ),
            (
                "[workload]\nfile_size = \"4M-2M\"\n",
                2,
                "4194304-2097152 B is an empty range: MIN is above MAX",
            ),
            (
                "[workload]\nfile_size = \"2M-x\"\n",
                2,
                "is not SIZE or MIN-MAX",
            ),
            (
                "[workload]\ncluster_size = 0\n",
                2,
                "a size must be above 0",
            ),
            ("[workload]\ndata_align = 0\n", 2, "a size must be above 0"),
            (
                "[workload]\nmetadata_percent = 10.0\n",
                2,
                "unknown field `metadata_percent`",
            ),
        ] {
            let error = toml::from_str::<ConfigFile>(text)
                .expect_err(text)
                .to_string();
            assert!(
                error.contains(&format!("line {line}")) && error.contains(needle),
                "{text}: {error}"
            );
        }
        let file: ConfigFile = toml::from_str("[ftl]\ngc = \"greedy, fifo\"\n").expect("a list");
        assert_eq!(file.ftl.gc, [GcPolicy::Greedy, GcPolicy::Fifo]);
    }

    /// A rule that ties options together is checked after the merge with the flags; the
    /// file's lines at fault are found by checking again without each option (the hunt
    /// found these errors naming neither the file nor a line).
    #[test]
    fn errors_of_merged_options_name_the_file_lines_at_fault() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.toml");
        let (device, ftl, workload) = (
            DeviceArgs::default(),
            FtlArgs::default(),
            WorkloadArgs::default(),
        );
        let flags = RunFlags {
            device: &device,
            ftl: &ftl,
            workload: &workload,
            kinds: &[FtlKind::Page, FtlKind::Fast],
            trace: false,
        };
        for (text, blamed, needle) in [
            (
                "[run]\nseed = 3\n[device]\ncapacity = \"1K\"\n",
                &["line 4 ([device] capacity = \"1K\")"][..],
                "logical capacity 1024 B",
            ),
            (
                "[ftl]\nlog_blocks = 100000\n",
                &["line 2 ([ftl] log_blocks = 100000)"],
                "fast: invalid FTL configuration",
            ),
            (
                "[workload]\nread_fraction = 0.7\nrequests = 5\ntrim_fraction = 0.5\n",
                &[
                    "line 2 ([workload] read_fraction = 0.7) and line 4 ([workload] \
                     trim_fraction = 0.5)",
                ],
                "read_fraction + trim_fraction exceeds 1",
            ),
            (
                "[workload]\nsize = \"5000\"\n",
                &["line 2 ([workload] size = \"5000\")"],
                "request size 5000 B is not a positive multiple of 4096 B",
            ),
        ] {
            std::fs::write(&path, text).expect("write");
            let file = ConfigFile::load(Some(&path)).expect("reads");
            let error = format!("{:#}", check_runs_blamed(&flags, &file).expect_err(text));
            let place = format!("config file {}, {}: ", path.display(), blamed.join(" and "));
            assert!(
                error.starts_with(&place) && error.contains(needle),
                "{text}: {error}"
            );
        }
        // An error of the flags alone is not blamed on the file.
        std::fs::write(&path, "[run]\nseed = 3\n").expect("write");
        let file = ConfigFile::load(Some(&path)).expect("reads");
        let workload = WorkloadArgs {
            read_fraction: Some(crate::args::Fraction(0.9)),
            trim_fraction: Some(crate::args::Fraction(0.2)),
            ..WorkloadArgs::default()
        };
        let flags = RunFlags {
            workload: &workload,
            ..flags
        };
        let error = format!("{:#}", check_runs_blamed(&flags, &file).expect_err("flags"));
        assert_eq!(
            error,
            "invalid workload: read_fraction + trim_fraction exceeds 1"
        );
    }

    /// Found by the mutation hunt: a byte that is not UTF-8 was reported without a line.
    #[test]
    fn a_byte_that_is_not_utf8_is_reported_at_its_line_and_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.toml");
        std::fs::write(&path, b"[device]\ncapacity = \"64M\"\n# caf\xe9\n").expect("write");
        let error = format!(
            "{:#}",
            ConfigFile::load(Some(&path)).expect_err("not UTF-8")
        );
        assert!(
            error.ends_with(
                "c.toml: line 3, column 6: byte 0xe9 is not UTF-8 (TOML files are UTF-8)"
            ),
            "{error}"
        );
    }
}
