//! The reproduction's tables: ours beside the paper's figures and claims.

use super::{Done, Experiment, FastSpec, NHB, NLB, sector_writes};
use crate::claims::Assessment;
use crate::claims::fast::PatternRun;
use crate::repro::{render_ledger, thousands};
use flashkit_core::NandPreset;
use flashkit_ftl::{Average, Counter};
use flashkit_report::Table;
use flashkit_sim::{DeviceSpec, RunReport};
use flashkit_trace::workload::fast::PatternName;
use std::fmt::Write;

/// Table II of the paper: switch operations, (BAST, FAST) per log-block count.
pub(super) const TABLE_II: [(u32, [(u64, u64); 2]); 5] = [
    (4, [(49_213, 48_529), (79_214, 78_472)]),
    (8, [(48_628, 49_212), (78_910, 78_734)]),
    (16, [(49_278, 48_628), (78_664, 78_720)]),
    (32, [(48_757, 48_628), (78_470, 78_770)]),
    (64, [(48_083, 48_693), (77_759, 78_794)]),
];

pub(super) fn find<'a>(
    done: &'a [Done],
    experiment: &Experiment,
    scheme: &str,
    log_blocks: u32,
) -> Option<&'a RunReport> {
    done.iter()
        .find(|d| {
            d.job.experiment == *experiment
                && d.job.scheme == scheme
                && (log_blocks == 0 || d.job.log_blocks == log_blocks)
        })
        .map(|d| &d.report)
}

pub(super) fn erases(report: &RunReport) -> u64 {
    report.flash.erases.total()
}

pub(super) fn seconds(report: &RunReport) -> f64 {
    report.elapsed_ns as f64 / 1e9
}

pub(super) fn counter(report: &RunReport, name: Counter) -> u64 {
    report.ftl_stats.counters.get(&name).copied().unwrap_or(0)
}

/// The whole printed report.
pub fn render(args: &FastSpec, device: &DeviceSpec, done: &[Done], notes: &[String]) -> String {
    let mut out = String::new();
    let preset = NandPreset::FAST_PAPER;
    let blocks = device.capacity_bytes / u64::from(preset.page_size_bytes * preset.pages_per_block);
    let _ = writeln!(
        out,
        "FAST paper reproduction (Lee et al., ACM TECS 6(3), 2007)\n\
         NAND: {} ({} B sectors, {} a block; read {} us, write {} us, erase {} us)\n\
         card: {} MiB logical ({blocks} data blocks), {:.0}% over-provisioning; every run \
         starts with the data blocks filled sequentially\n\
         patterns: generated at {} x Table I's write counts, seed {} (docs/reproduction/fast.md \
         gives their parameters)\n",
        preset.name,
        preset.page_size_bytes,
        preset.pages_per_block,
        preset.timing.read_ns / 1000,
        preset.timing.program_ns / 1000,
        preset.timing.erase_ns / 1000,
        device.capacity_bytes >> 20,
        device.over_provisioning * 100.0,
        args.scale,
        args.seed,
    );
    for pattern in PatternName::ALL {
        if let Some(table) = fig_10(args, done, pattern) {
            out.push_str(&table);
        }
    }
    out.push_str(&table_ii(args, done));
    out.push_str(&section_3_5(done));
    out.push_str(&super::sweep::render(args, done));
    out.push_str(&traces(done, notes, &args.traces));
    out.push_str(&render_ledger(&ledger(done)));
    out
}

fn fig_10(args: &FastSpec, done: &[Done], pattern: PatternName) -> Option<String> {
    let experiment = Experiment::Pattern(pattern);
    let first = find(done, &experiment, "bast", 0)?;
    let mut table = Table::new([
        "log blocks",
        "BAST erases",
        "FAST erases",
        "O-FAST erases",
        "FAST/BAST",
        "BAST s",
        "FAST s",
        "O-FAST s",
        "BAST util %",
        "FAST no-SW erases",
        "FAST switch erases",
    ]);
    for &n in &args.log_blocks {
        let runs = ["bast", "fast", "ofast"].map(|s| find(done, &experiment, s, n));
        let [Some(bast), Some(fast), Some(ofast)] = runs else {
            continue;
        };
        let [no_sw, switch] = ["fast-rw", "fast-switch"]
            .map(|s| find(done, &experiment, s, n).map_or("-".into(), |r| thousands(erases(r))));
        let utilisation = bast
            .ftl_stats
            .means
            .get(&Average::LogUtilisationPercent)
            .and_then(|m| m.value())
            .map_or("-".into(), |u| format!("{u:.1}"));
        table.push([
            n.to_string(),
            thousands(erases(bast)),
            thousands(erases(fast)),
            thousands(erases(ofast)),
            format!("{:.3}", erases(fast) as f64 / erases(bast).max(1) as f64),
            format!("{:.1}", seconds(bast)),
            format!("{:.1}", seconds(fast)),
            format!("{:.1}", seconds(ofast)),
            utilisation,
            no_sw,
            switch,
        ]);
    }
    Some(format!(
        "Fig. 10, pattern {} ({}): {} sector writes in {} requests (FAST no-SW: not the \
         paper's scheme, FAST without its SW log block; FAST switch: ours, a full SW block \
         switched and the page sent to the RW blocks, where the paper merges it)\n{}\n",
        pattern.letter(),
        pattern.description(),
        thousands(sector_writes(first)),
        thousands(first.trace.requests),
        table.render()
    ))
}

fn table_ii(args: &FastSpec, done: &[Done]) -> String {
    let mut table = Table::new([
        "log blocks",
        "A BAST paper",
        "A BAST ours",
        "A FAST paper",
        "A FAST ours",
        "B BAST paper",
        "B BAST ours",
        "B FAST paper",
        "B FAST ours",
    ]);
    let mut rows = 0;
    for &n in &args.log_blocks {
        let paper = TABLE_II.iter().find(|(blocks, _)| *blocks == n);
        let mut row = vec![n.to_string()];
        for (i, pattern) in [PatternName::A, PatternName::B].into_iter().enumerate() {
            let experiment = Experiment::Pattern(pattern);
            for (j, scheme) in ["bast", "fast"].into_iter().enumerate() {
                let published = paper.map(|(_, figures)| {
                    let (bast, fast) = figures[i];
                    if j == 0 { bast } else { fast }
                });
                row.push(published.map_or("-".into(), thousands));
                let ours =
                    find(done, &experiment, scheme, n).map(|r| counter(r, Counter::SwitchMerges));
                row.push(ours.map_or("-".into(), thousands));
            }
        }
        table.push(row);
        rows += 1;
    }
    if rows == 0 {
        return String::new();
    }
    format!(
        "Table II: switch operations, the paper's and ours\n{}\n",
        table.render()
    )
}

/// The paper's claims against the runs of its patterns ([`flashkit_lab::claims::fast`]).
pub fn ledger(done: &[Done]) -> Vec<Assessment> {
    let runs: Vec<PatternRun> = done
        .iter()
        .filter_map(|d| match d.job.experiment {
            Experiment::Pattern(pattern) => Some(PatternRun {
                pattern: pattern.letter().chars().next().expect("a letter"),
                scheme: d.job.scheme.to_string(),
                log_blocks: d.job.log_blocks,
                erases: erases(&d.report),
                switch_merges: counter(&d.report, Counter::SwitchMerges),
                elapsed_ns: d.report.elapsed_ns,
                log_utilisation_percent: d
                    .report
                    .ftl_stats
                    .means
                    .get(&Average::LogUtilisationPercent)
                    .and_then(|m| m.value()),
            }),
            _ => None,
        })
        .collect();
    crate::claims::fast::assess_all(&runs)
}

/// Section 3.5's predicted erases per sector write with `nhb` hot blocks and [`NLB`] log
/// blocks.
pub(super) struct Prediction {
    /// BAST: 2 per `nspb` writes while `nhb <= nlb`, up to 2 per write beyond.
    pub bast: f64,
    /// FAST's RW log blocks: `min(nhb, nspb) + nlb` per `nlb x nspb` writes.
    pub fast_rw: f64,
    /// Whether BAST's figure is the analysis' worst case (`nhb > nlb`).
    pub worst_case: bool,
}

/// What section 3.5 predicts with `nhb` hot blocks, [`NLB`] log blocks and the paper's 32
/// sectors a block; the table and `section3.5.svg` both show it.
pub(super) fn predicted(nhb: u64) -> Prediction {
    let nspb = f64::from(NandPreset::FAST_PAPER.pages_per_block);
    let nlb = f64::from(NLB);
    let hot = (nhb as f64).min(nspb);
    let worst_case = nhb as f64 > nlb;
    Prediction {
        bast: if worst_case { 2.0 } else { 2.0 / nspb },
        fast_rw: (hot + nlb) / (nlb * nspb),
        worst_case,
    }
}

fn section_3_5(done: &[Done]) -> String {
    let nspb = f64::from(NandPreset::FAST_PAPER.pages_per_block);
    let mut table = Table::new([
        "nhb",
        "writes",
        "BAST erases",
        "BAST predicted",
        "FAST-RW erases",
        "FAST-RW predicted",
        "FAST (SW+RW) erases",
        "FAST-RW/BAST",
        "predicted",
    ]);
    let mut rows = 0;
    for nhb in NHB {
        let experiment = Experiment::HotBlocks(nhb);
        let runs = ["bast", "fast-rw", "fast"].map(|s| find(done, &experiment, s, 0));
        let [Some(bast), Some(rw), Some(fast)] = runs else {
            continue;
        };
        let writes = sector_writes(bast) as f64;
        let prediction = predicted(nhb);
        let (fast_rate, bast_rate) = (prediction.fast_rw, prediction.bast);
        let bast_note = if prediction.worst_case {
            " (worst case)"
        } else {
            ""
        };
        table.push([
            nhb.to_string(),
            thousands(writes as u64),
            thousands(erases(bast)),
            format!("{}{bast_note}", thousands((bast_rate * writes) as u64)),
            thousands(erases(rw)),
            thousands((fast_rate * writes) as u64),
            thousands(erases(fast)),
            format!("{:.3}", erases(rw) as f64 / erases(bast).max(1) as f64),
            format!("{:.3}{bast_note}", fast_rate / bast_rate),
        ]);
        rows += 1;
    }
    if rows == 0 {
        return String::new();
    }
    format!(
        "Section 3.5: single-sector writes at random offsets of nhb hot blocks, nlb = {NLB} \
         (FAST-RW: {NLB} RW log blocks and no SW block, as the analysis counts; FAST: the SW \
         block on top).\nPredicted (section 3.5): BAST 2 erases per {nspb} writes while \
         nhb <= nlb, up to 2 per write beyond; FAST (min(nhb, nspb) + nlb) erases per nlb x \
         nspb writes.\n{}\n",
        table.render()
    )
}

fn traces(done: &[Done], notes: &[String], dir: &std::path::Path) -> String {
    let schemes = ["page", "block", "bast", "fast", "ofast"];
    let mut names: Vec<&str> = Vec::new();
    for d in done {
        if let Experiment::Trace(name) = &d.job.experiment
            && !names.contains(&name.as_str())
        {
            names.push(name);
        }
    }
    let mut out = String::new();
    if !names.is_empty() {
        let mut header = vec![
            "trace".to_string(),
            "requests".into(),
            "sector writes".into(),
        ];
        header.extend(schemes.iter().map(|s| format!("{s} erases")));
        header.extend(schemes.iter().map(|s| format!("{s} s")));
        let mut table = Table::new(header);
        for name in names {
            let experiment = Experiment::Trace(name.to_string());
            let runs: Vec<Option<&RunReport>> = schemes
                .iter()
                .map(|s| find(done, &experiment, s, 0))
                .collect();
            let Some(first) = runs.iter().flatten().next() else {
                continue;
            };
            let mut row = vec![
                name.to_string(),
                thousands(first.trace.requests),
                thousands(sector_writes(first)),
            ];
            row.extend(
                runs.iter()
                    .map(|r| r.map_or("-".into(), |r| thousands(erases(r)))),
            );
            row.extend(
                runs.iter()
                    .map(|r| r.map_or("-".into(), |r| format!("{:.2}", seconds(r)))),
            );
            table.push(row);
        }
        let _ = write!(
            out,
            "Real trace excerpts ({}), all five FTLs: the paper's NAND, the device sized to \
             each trace's footprint (compact mapping) with 10% over-provisioning, data blocks \
             filled first, 8 log blocks\n{}\n",
            dir.display(),
            table.render()
        );
    }
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// One row per run.
pub fn csv(done: &[Done]) -> Table {
    let mut table = Table::new([
        "experiment",
        "scheme",
        "log_blocks",
        "requests",
        "sector_writes",
        "erases",
        "elapsed_s",
        "switches",
        "partial_merges",
        "full_merges",
        "log_utilisation_percent",
        "data_blocks_per_victim",
        "lazy_merges_skipped",
        "write_amplification",
    ]);
    for d in done {
        let r = &d.report;
        let mean = |name: Average| {
            r.ftl_stats
                .means
                .get(&name)
                .and_then(|m| m.value())
                .map_or(String::new(), |v| format!("{v:.4}"))
        };
        let experiment = match &d.job.experiment {
            Experiment::Pattern(p) => format!("pattern {}", p.letter()),
            Experiment::HotBlocks(n) => format!("nhb {n}"),
            Experiment::Trace(name) => name.clone(),
            Experiment::Sweep(point) => format!("sweep {}", point.label()),
        };
        table.push([
            experiment,
            d.job.scheme.to_string(),
            d.job.log_blocks.to_string(),
            r.trace.requests.to_string(),
            sector_writes(r).to_string(),
            erases(r).to_string(),
            format!("{:.6}", seconds(r)),
            counter(r, Counter::SwitchMerges).to_string(),
            counter(r, Counter::PartialMerges).to_string(),
            counter(r, Counter::FullMerges).to_string(),
            mean(Average::LogUtilisationPercent),
            mean(Average::DataBlocksPerVictim),
            counter(r, Counter::LazyMergesSkipped).to_string(),
            r.write_amplification
                .map_or(String::new(), |w| format!("{w:.4}")),
        ]);
    }
    table
}
