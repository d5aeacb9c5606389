//! What runs: the mappings compared, and the workloads they run on (generated after Table
//! 1, the public trace excerpts, the paper's own traces).

use super::paper::{PUBLISHED, Published, table1_workload};
use super::{PaperTrace, VetSpec};
use crate::repro::LabError;
use flashkit_core::units::{describe_size, format_size};
use flashkit_ftl::{FtlKind, InsertScheme, VetConfig, VetNodes, VetSearch, VetTable};
use flashkit_sim::{DeviceSpec, Source};
use flashkit_trace::formats::TraceOptions;
use flashkit_trace::formats::layout::{AddressMapping, PreparedTrace};
use std::path::Path;
use std::sync::Arc;

/// One mapping of the comparison.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scheme {
    pub(super) label: &'static str,
    pub(super) kind: FtlKind,
    pub(super) vet: VetConfig,
}

impl Scheme {
    /// VET BIS PF over one of our hash tables, searched as published: a row of Table 4.
    pub(super) fn in_table4(&self) -> bool {
        self.kind == FtlKind::Vet
            && (self.vet.insert, self.vet.nodes) == (InsertScheme::Bis, VetNodes::Pf)
            && self.vet.search == VetSearch::Paper
    }

    /// Run only on the workloads standing for a column of the paper, unless the spec's
    /// `scheme` names it: the other hash tables of Table 4, which the paper compared on its
    /// traces only, and our guided search, measured beside Algorithm 2 as published.
    pub(super) fn paper_columns_only(&self) -> bool {
        (self.in_table4() && self.vet.table != VetTable::Cuckoo)
            || self.vet.search != VetSearch::Paper
    }
}

const fn scheme(
    label: &'static str,
    kind: FtlKind,
    insert: InsertScheme,
    nodes: VetNodes,
    table: VetTable,
) -> Scheme {
    Scheme {
        label,
        kind,
        vet: VetConfig {
            insert,
            nodes,
            table,
            search: VetSearch::Paper,
        },
    }
}

/// The schemes, in the tables' order. "VET ..." without a table named is over the default
/// cuckoo table, and searched as Algorithm 2 is published; "guided" is our search.
pub(super) const SCHEMES: [Scheme; 9] = {
    use InsertScheme::{Bis, Lis};
    use VetNodes::{Pd, Pf};
    use VetTable::{Cuckoo, Std, Swiss};
    [
        scheme("PMT", FtlKind::Page, Bis, Pf, Cuckoo),
        scheme("VET BIS PF", FtlKind::Vet, Bis, Pf, Cuckoo),
        scheme("VET BIS PD", FtlKind::Vet, Bis, Pd, Cuckoo),
        scheme("VET LIS PF", FtlKind::Vet, Lis, Pf, Cuckoo),
        scheme("VET LIS PD", FtlKind::Vet, Lis, Pd, Cuckoo),
        scheme("EMT", FtlKind::Emt, Bis, Pf, Cuckoo),
        scheme("VET BIS PF swiss", FtlKind::Vet, Bis, Pf, Swiss),
        scheme("VET BIS PF std", FtlKind::Vet, Bis, Pf, Std),
        Scheme {
            label: "VET BIS PF guided",
            kind: FtlKind::Vet,
            vet: VetConfig {
                insert: Bis,
                nodes: Pf,
                table: Cuckoo,
                search: VetSearch::Guided,
            },
        },
    ]
};

/// Traces' address spaces above this are compacted to their footprint (a modelled device
/// holds 8 bytes of bookkeeping per page).
const IDENTITY_LIMIT_BYTES: u64 = 64 << 30;

/// The largest logical space one of the paper's own traces is replayed over: 8 bytes of device
/// bookkeeping and 4 of page table a 4 KiB page make 12 GiB at 4 TiB. The paper's own spaces
/// are 32 to 644 GB.
const PAPER_TRACE_LIMIT_BYTES: u64 = 4 << 40;

/// The public trace excerpts used, relative to the traces directory.
const TRACES: [&str; 8] = [
    "msr/hm_0.sample1000.csv",
    "msr/rsrch_0.sample1000.csv",
    "spc/WebSearch1.first24783.derived.spc.gz",
    "fiu/cheetah.cs.fiu.edu-110108-113008.2.first9998.blkparse.gz",
    "systor/systor17-traces-sample.csv",
    "tencent/cloud_storage-sample.csv.gz",
    "cloudphysics/cloudPhysicsIO.csv.gz",
    "disksim/tpcc-small.trace",
];

/// One workload of the run: a generated one, a trace excerpt or one of the paper's own
/// traces.
pub(super) struct Input {
    /// The row name in the tables.
    pub(super) name: String,
    /// The paper's column it stands for, if any.
    pub(super) paper: Option<&'static str>,
    pub(super) device: DeviceSpec,
    pub(super) source: Source,
}

/// Every workload names a generated workload or a trace excerpt, and every scheme one of
/// [`SCHEMES`]; the schemes to run, in the tables' order.
pub(super) fn check_names(spec: &VetSpec) -> Result<Vec<Scheme>, LabError> {
    let schemes = chosen_schemes(&spec.scheme)?;
    let known: Vec<String> = PUBLISHED
        .iter()
        .map(|p| p.name.to_string())
        .chain(TRACES.iter().map(|t| trace_name(Path::new(t))))
        .collect();
    if let Some(name) = spec.workload.iter().find(|name| !known.contains(name)) {
        return Err(LabError::Unknown {
            field: "workload",
            what: "workload",
            name: name.clone(),
            known,
        });
    }
    Ok(schemes)
}

/// The schemes `names` names (all of them when it names none), in the tables' order,
/// case aside.
fn chosen_schemes(names: &[String]) -> Result<Vec<Scheme>, LabError> {
    let names_scheme = |name: &String, label: &str| label.eq_ignore_ascii_case(name.trim());
    if let Some(unknown) = names
        .iter()
        .find(|n| !SCHEMES.iter().any(|s| names_scheme(n, s.label)))
    {
        return Err(LabError::Unknown {
            field: "scheme",
            what: "scheme",
            name: unknown.clone(),
            known: SCHEMES.iter().map(|s| s.label.to_string()).collect(),
        });
    }
    Ok(SCHEMES
        .iter()
        .filter(|s| names.is_empty() || names.iter().any(|n| names_scheme(n, s.label)))
        .copied()
        .collect())
}

/// The workloads of a run, in the tables' order: the generated ones `spec.workload` asks
/// for, the paper's own traces, then the trace excerpts (one under `quick`); with the
/// paper's traces as read. An excerpt missing from `spec.traces` is skipped with a note.
pub(super) fn gather(
    spec: &VetSpec,
    scale: f64,
    notes: &mut Vec<String>,
) -> Result<(Vec<Input>, Vec<PaperTrace>), LabError> {
    let wanted = |name: &str| spec.workload.is_empty() || spec.workload.iter().any(|w| w == name);
    let mut inputs: Vec<Input> = PUBLISHED
        .iter()
        .filter(|p| wanted(p.name))
        .map(|published| {
            let workload = table1_workload(published, scale);
            Input {
                name: published.name.into(),
                paper: Some(published.name),
                device: DeviceSpec {
                    capacity_bytes: workload.span_bytes,
                    ..DeviceSpec::default()
                },
                source: Source::Workload(workload),
            }
        })
        .collect();
    let mut paper_traces = Vec::new();
    for (published, path) in paper_trace_files(spec)? {
        let (input, trace) = paper_trace(published, path, spec, notes)?;
        inputs.push(input);
        paper_traces.push(trace);
    }
    let excerpts = if spec.quick { 1 } else { TRACES.len() };
    for relative in TRACES.iter().take(excerpts) {
        if !wanted(&trace_name(Path::new(relative))) {
            continue;
        }
        let path = spec.traces.join(relative);
        if !path.exists() {
            notes.push(format!(
                "{} is missing; skipped (traces names the directory of the excerpts)",
                path.display()
            ));
            continue;
        }
        inputs.push(trace_excerpt(&path)?);
    }
    Ok((inputs, paper_traces))
}

/// The paper's own traces with the figures of the columns they stand for; a column named
/// twice is refused before any file is read.
fn paper_trace_files(spec: &VetSpec) -> Result<Vec<(&'static Published, &Path)>, LabError> {
    let mut chosen: Vec<(&'static Published, &Path)> = Vec::new();
    for file in &spec.paper_trace {
        let name = file.column.name();
        if chosen.iter().any(|(p, _)| p.name == name) {
            return Err(LabError::spec(
                "paper_trace",
                format!(
                    "names {name} twice; give one file a workload (concatenate a trace \
                     published in parts, docs/reproduction/vet.md says how)"
                ),
            ));
        }
        let published = super::paper::published(name).expect("invariant: a column is published");
        chosen.push((published, &file.path));
    }
    Ok(chosen)
}

/// One of the paper's own traces, read once with `spec.trace_options` and its addresses
/// mapped by `spec.address_map`, on a device sized to it: the workload and its record.
fn paper_trace(
    published: &'static Published,
    path: &Path,
    spec: &VetSpec,
    notes: &mut Vec<String>,
) -> Result<(Input, PaperTrace), LabError> {
    let (prepared, device) = read_trace(path, &spec.trace_options, spec.address_map, notes)?;
    let mapping = prepared.map.mapping();
    if device.capacity_bytes > PAPER_TRACE_LIMIT_BYTES {
        return Err(LabError::spec(
            "address_map",
            format!(
                "{mapping}: the addresses of {} span {}, above the {} a modelled device may \
                 have here; map them compact (the shares of PMT then count only the blocks \
                 the trace touches) or read one volume of the trace",
                path.display(),
                format_size(device.capacity_bytes),
                format_size(PAPER_TRACE_LIMIT_BYTES),
            ),
        ));
    }
    let workload = format!("{} trace ({mapping})", published.name);
    let trace = PaperTrace {
        name: published.name.to_string(),
        workload: workload.clone(),
        path: path.display().to_string(),
        format: prepared.format.map_or("empty", |f| f.name()).to_string(),
        requests: prepared.report.requests,
        address_map: mapping.to_string(),
        logical_bytes: device.capacity_bytes,
        digest: format!("{:032x}", prepared.digest),
    };
    let input = Input {
        name: workload,
        paper: Some(published.name),
        device,
        source: Source::Trace(Arc::new(prepared)),
    };
    Ok((input, trace))
}

/// A trace file read once to map its addresses, and a device of the default geometry
/// sized to it; what a reader should know about the reading goes into `notes`.
fn read_trace(
    path: &Path,
    options: &TraceOptions,
    mapping: AddressMapping,
    notes: &mut Vec<String>,
) -> Result<(PreparedTrace, DeviceSpec), LabError> {
    let base = DeviceSpec::default();
    let block = base.block_bytes().map_err(LabError::from_sim)?;
    let prepared = PreparedTrace::prepare(path, options, mapping, block)
        .map_err(LabError::from_trace)?
        .named(path);
    let report = &prepared.report;
    let skipped = report.skipped();
    if !skipped.is_empty() {
        let list: Vec<String> = skipped
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        notes.push(format!("{}: skipped {}", path.display(), list.join(", ")));
        if let Some(first) = &report.first_bad_line {
            notes.push(format!("first malformed line: {first}"));
        }
    }
    if report.requests == 0 && report.other_events > 0 {
        notes.push(format!(
            "{}: no requests, but {} events of other actions (blkparse_event chooses which \
             become requests)",
            path.display(),
            report.other_events
        ));
    }
    let device = base.sized_for(&prepared).map_err(LabError::from_sim)?;
    notes.push(format!(
        "trace: {} ({}), {} requests touching {} blocks of {} ({} address mapping); device \
         logical capacity {}",
        path.display(),
        prepared.format.map_or("empty", |f| f.name()),
        report.requests,
        prepared.map.touched_chunks(),
        format_size(prepared.map.chunk_bytes()),
        mapping,
        describe_size(device.capacity_bytes),
    ));
    Ok((prepared, device))
}

/// A trace excerpt with its own address space (compacted above [`IDENTITY_LIMIT_BYTES`]),
/// read with the default options.
fn trace_excerpt(path: &Path) -> Result<Input, LabError> {
    let base = DeviceSpec::default();
    let block = base.block_bytes().map_err(LabError::from_sim)?;
    let prepare = |mapping| {
        PreparedTrace::prepare(path, &TraceOptions::default(), mapping, block)
            .map_err(|e| LabError::Run(e.into()))
    };
    let mut prepared = prepare(AddressMapping::Identity)?;
    if prepared.map.required_bytes() > IDENTITY_LIMIT_BYTES {
        prepared = prepare(AddressMapping::Compact)?;
    }
    let device = base.sized_for(&prepared).map_err(LabError::from_sim)?;
    Ok(Input {
        name: format!("{} ({})", trace_name(path), prepared.map.mapping()),
        paper: None,
        device,
        source: Source::Trace(Arc::new(prepared)),
    })
}

/// A trace excerpt's short name: its file name up to the first dot (`hm_0`).
fn trace_name(path: &Path) -> String {
    path.file_name()
        .map(|n| {
            n.to_string_lossy()
                .split('.')
                .next()
                .unwrap_or("trace")
                .to_string()
        })
        .unwrap_or_else(|| "trace".into())
}
