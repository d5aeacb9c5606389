//! `--ftl` for `flashkit em sort --records`, `em bfs` and `em dfs`: the algorithm runs on any
//! flashkit FTL over the NAND model with stamps (`flashkit_em::io::FtlIo`), and the report
//! adds the FTL's flash-level figures, the input's upload apart from the algorithm's part.
//!
//! Key decision: the device is sized to the algorithm, so that garbage collection runs (the
//! interesting case) and no logical block is left for the FTL to use as extra spare space.
//! The logical capacity is the algorithm's footprint rounded up to whole erase blocks (the
//! sort's four areas, or the highest byte a dry run on the simulator wrote), unless
//! `--capacity` is given; over-provisioning is `--op`, or without it the default raised to
//! the fewest spare blocks the FTL accepts (a small device at 7% has too few for GC).

use crate::{Failure, sim_failure};
use anyhow::anyhow;
use clap::Args;
use flashkit_core::units::format_size;
use flashkit_core::{BlockId, OpCounters, StateHasher, Timing};
use flashkit_device::{NandDevice, Stamps};
use flashkit_em::io::{BlockIo, BlockSizes, FtlIo, IoStats};
use flashkit_ftl::{AnyFtl, FtlKind, FtlOptions, FtlStats};
use flashkit_ftl::{Inspect, Verify};
use flashkit_lab::config::{self as settings, ConfigFile, DeviceSection, FtlSection};
use flashkit_report::Table;
use flashkit_sim::{DeviceRecord, DeviceSpec, EraseSpread, MetricValue};
use serde::Serialize;

/// The block I/O adapter over the FTL chosen at run time.
pub type EmFtl = FtlIo<AnyFtl<Stamps>>;

/// Device and FTL options of `--ftl`: the flags of `flashkit compare`, one FTL at a time.
#[derive(Args, Debug)]
pub struct FtlDeviceArgs {
    #[command(flatten)]
    pub device: DeviceSection,
    #[command(flatten)]
    pub ftl: FtlSection,
}

/// Help texts where `--ftl` on an em command differs from `flashkit compare`.
pub const CAPACITY_HELP: &str = "With --ftl: logical capacity of the FTL's device [default: the \
                                 algorithm's footprint in whole erase blocks]";
pub const OP_HELP: &str = "With --ftl: over-provisioning, a fraction of the logical capacity \
                           [default: 0.07, raised to the fewest spare blocks the FTL accepts]";
pub const GC_HELP: &str = "With --ftl page, vet or emt: the GC victim policy (greedy, \
                           cost-benefit, fifo) [default: greedy]";
pub const VET_INSERT_HELP: &str = "With --ftl vet: the insertion scheme (lis, bis) [default: bis]";
pub const VET_NODES_HELP: &str = "With --ftl vet: the node layout (pd, pf) [default: pf]";
pub const VET_TABLE_HELP: &str =
    "With --ftl vet: the hash table (cuckoo, swiss, std) [default: cuckoo]";

/// `--ftl` resolved, before the algorithm's footprint is known.
pub struct FtlChoice {
    kind: FtlKind,
    options: FtlOptions,
    label: String,
    device: DeviceSpec,
    capacity_given: bool,
    op_given: bool,
}

impl FtlChoice {
    /// Resolve `--ftl KIND` with the device and FTL options (flags, then the config file's
    /// `[device]` and `[ftl]`), and refuse block sizes the FTL cannot carry.
    pub fn new(
        kind: FtlKind,
        args: &FtlDeviceArgs,
        config: &ConfigFile,
        sizes: BlockSizes,
    ) -> Result<Self, Failure> {
        settings::check_ftl_options(&args.ftl, &[kind], &format!("--ftl {kind}"))
            .map_err(Failure::usage)?;
        let device = settings::device_spec(&args.device, &config.device).map_err(Failure::usage)?;
        // The preset, page size and over-provisioning checked now; the capacity once the
        // footprint is known.
        let probe = DeviceSpec {
            capacity_bytes: DeviceSpec::default().capacity_bytes,
            ..device.clone()
        };
        let (_, geometry, _) = probe.resolve().map_err(sim_failure)?;
        check_pages(sizes, u64::from(geometry.page_size_bytes()), &device.preset)?;
        let listed = settings::listed_ftl_options(&args.ftl, &config.ftl);
        if !listed.is_empty() {
            return Err(Failure::Usage(anyhow!(
                "an em command runs one FTL: give one value of {} (compare runs several)",
                listed.join(", ")
            )));
        }
        let (_, options) = settings::ftl_options(&args.ftl, &config.ftl);
        Ok(FtlChoice {
            kind,
            label: flashkit_lab::compare::label(kind, &options),
            options,
            capacity_given: args.device.capacity.or(config.device.capacity).is_some(),
            op_given: args.device.op.or(config.device.op).is_some(),
            device,
        })
    }

    /// The device for an algorithm whose addresses stay below `footprint_bytes` (what it
    /// needs; `what` names it in messages).
    pub fn sized(&self, footprint_bytes: u64, what: &str) -> Result<FtlDevice, Failure> {
        let block = self.device.block_bytes().map_err(sim_failure)?;
        let capacity_bytes = self.capacity_for(footprint_bytes, block, what)?;
        let spec = DeviceSpec {
            capacity_bytes,
            ..self.device.clone()
        };
        let asked_op = spec.over_provisioning;
        let spec = self.fit(spec, block)?;
        let (preset, geometry, endurance) = spec.resolve().map_err(sim_failure)?;
        self.kind
            .check(&geometry, &self.options)
            .map_err(|e| Failure::Usage(anyhow!("{}: {e}", self.label)))?;
        Ok(FtlDevice {
            kind: self.kind,
            options: self.options,
            label: self.label.clone(),
            record: DeviceRecord {
                preset: preset.name.into(),
                geometry,
                timing: preset.timing,
                endurance_cycles: endurance,
            },
            footprint_bytes,
            capacity_given: self.capacity_given,
            op_raised_from: (spec.over_provisioning != asked_op).then_some(asked_op),
        })
    }

    /// The logical capacity: `--capacity` if it holds the footprint, else the footprint in
    /// whole erase blocks of `block` bytes.
    fn capacity_for(&self, footprint_bytes: u64, block: u64, what: &str) -> Result<u64, Failure> {
        if !self.capacity_given {
            return Ok(footprint_bytes.div_ceil(block).max(1) * block);
        }
        if self.device.capacity_bytes < footprint_bytes {
            return Err(Failure::Usage(anyhow!(
                "--capacity {} B is smaller than {what}, {footprint_bytes} B ({} erase blocks \
                 of {}): give at least that, or leave --capacity out to size the device to it",
                self.device.capacity_bytes,
                footprint_bytes.div_ceil(block),
                format_size(block)
            )));
        }
        Ok(self.device.capacity_bytes)
    }

    /// `spec` made workable for the FTL where the user left it open: over-provisioning
    /// raised to the fewest spare blocks the FTL accepts (its own check decides) and, for a
    /// footprint so small that those would take more than the geometry's limit of 400%,
    /// logical blocks added (at most [`MAX_EXTRA_BLOCKS`]; past that the check's message
    /// says what is missing).
    fn fit(&self, spec: DeviceSpec, block_bytes: u64) -> Result<DeviceSpec, Failure> {
        if self.op_given {
            return Ok(spec);
        }
        let extra_blocks = if self.capacity_given {
            0
        } else {
            MAX_EXTRA_BLOCKS
        };
        for extra in 0..=extra_blocks {
            let trial = DeviceSpec {
                capacity_bytes: spec.capacity_bytes + extra * block_bytes,
                ..spec.clone()
            };
            if let Some(op) = self.fewest_spare_blocks_op(&trial)? {
                return Ok(DeviceSpec {
                    over_provisioning: op,
                    ..trial
                });
            }
        }
        Ok(spec)
    }

    /// The over-provisioning of `spec` if the FTL accepts it, else the smallest fraction
    /// above it that gives the FTL the spare blocks it needs, or `None` if none up to the
    /// geometry's limit does.
    fn fewest_spare_blocks_op(&self, spec: &DeviceSpec) -> Result<Option<f64>, Failure> {
        let accepts = |op: f64| -> Result<bool, Failure> {
            let trial = DeviceSpec {
                over_provisioning: op,
                ..spec.clone()
            };
            let (_, geometry, _) = trial.resolve().map_err(sim_failure)?;
            Ok(self.kind.check(&geometry, &self.options).is_ok())
        };
        if accepts(spec.over_provisioning)? {
            return Ok(Some(spec.over_provisioning));
        }
        if !accepts(MAX_OP)? {
            return Ok(None);
        }
        let (_, geometry, _) = spec.resolve().map_err(sim_failure)?;
        let logical_blocks = u64::from(geometry.logical_pages())
            .div_ceil(u64::from(geometry.pages_per_block())) as f64;
        let mut spare = u64::from(geometry.spare_blocks());
        loop {
            spare += 1;
            let op = (spare as f64 / logical_blocks).min(MAX_OP);
            if accepts(op)? {
                return Ok(Some(op));
            }
        }
    }
}

/// Refuse block sizes that are not whole FTL pages (`FtlIo` carries a transfer as whole
/// logical pages).
fn check_pages(sizes: BlockSizes, page: u64, preset: &str) -> Result<(), Failure> {
    if sizes.read_bytes.is_multiple_of(page) && sizes.write_bytes.is_multiple_of(page) {
        return Ok(());
    }
    Err(Failure::Usage(anyhow!(
        "B_r = {} and B_w = {} must both be multiples of the FTL's {} page (preset {preset}): \
         raise --br and --bw or choose a smaller --page-size",
        format_size(sizes.read_bytes),
        format_size(sizes.write_bytes),
        format_size(page)
    )))
}

/// The geometry's largest over-provisioning.
const MAX_OP: f64 = 4.0;

/// Logical blocks added at most to a device too small for the FTL's spare blocks.
const MAX_EXTRA_BLOCKS: u64 = 64;

/// The FTL's device, sized.
pub struct FtlDevice {
    kind: FtlKind,
    options: FtlOptions,
    label: String,
    record: DeviceRecord,
    footprint_bytes: u64,
    capacity_given: bool,
    op_raised_from: Option<f64>,
}

impl FtlDevice {
    /// A fresh FTL on this device as block I/O with `sizes` (multiples of the page size,
    /// checked by [`FtlChoice::new`]).
    pub fn build(&self, sizes: BlockSizes) -> Result<EmFtl, Failure> {
        let device = NandDevice::<Stamps>::new(self.record.geometry)
            .with_endurance(self.record.endurance_cycles);
        let ftl = AnyFtl::build(self.kind, device, &self.options)
            .map_err(|e| Failure::Usage(anyhow!("{}: {e}", self.label)))?;
        FtlIo::new(ftl, sizes).map_err(crate::commands::em::failure)
    }

    /// The report of a run on `io`: the upload from `start` to `mark`, the algorithm's part
    /// from `mark` to `end`, and the device at the end. Checks the FTL's invariants.
    pub fn report(
        &self,
        io: &EmFtl,
        [start, mark, end]: [&Snapshot; 3],
    ) -> Result<FtlReport, Failure> {
        io.ftl().check_invariants().map_err(|violation| {
            Failure::Runtime(anyhow!(
                "the {} FTL broke an invariant: {violation}",
                self.label
            ))
        })?;
        let g = &self.record.geometry;
        let page = u64::from(g.page_size_bytes());
        let timing = self.record.timing;
        let erase_counts: Vec<u32> = (0..g.blocks())
            .map(|b| io.ftl().device().block_status(BlockId(b)).erase_count)
            .collect();
        let mut hasher = StateHasher::new();
        io.ftl().hash_state(&mut hasher);
        Ok(FtlReport {
            label: self.label.clone(),
            ftl: self.kind,
            options: self.options,
            device: self.record.clone(),
            footprint_bytes: self.footprint_bytes,
            capacity_given: self.capacity_given,
            over_provisioning_raised_from: self.op_raised_from,
            upload: FlashFigures::between(start, mark, page, timing),
            algorithm: FlashFigures::between(mark, end, page, timing),
            erase_spread: EraseSpread::of(&erase_counts),
            state_hash: format!("{:016x}", hasher.finish()),
        })
    }
}

/// The FTL's counters at one moment.
#[derive(Clone, Debug)]
pub struct Snapshot {
    io: IoStats,
    flash: OpCounters,
    stats: FtlStats,
}

/// The counters of `io` now.
pub fn snapshot(io: &EmFtl) -> Snapshot {
    Snapshot {
        io: io.stats(),
        flash: *io.ftl().device().counters(),
        stats: io.ftl().stats(),
    }
}

/// What the FTL did between two snapshots, with the names and definitions of
/// `flashkit_sim::RunReport`.
#[derive(Clone, Debug, Serialize)]
pub struct FlashFigures {
    /// Logical pages written through the FTL (the host's writes).
    pub host_pages_written: u64,
    /// Logical pages read through the FTL.
    pub host_pages_read: u64,
    /// Flash operations by cause.
    pub flash: OpCounters,
    /// Flash page programs (all causes) per host page written; `None` if nothing was written.
    pub write_amplification: Option<f64>,
    /// FTL statistics of the part (GC runs, pages moved, merges, ...).
    pub ftl_stats: FtlStats,
    /// Simulated time under the preset's serial cost model, nanoseconds.
    pub elapsed_ns: u64,
}

impl FlashFigures {
    fn between(before: &Snapshot, after: &Snapshot, page_bytes: u64, timing: Timing) -> Self {
        let io = after.io - before.io;
        let flash = after.flash.since(&before.flash);
        let written = io.write_bytes / page_bytes;
        FlashFigures {
            host_pages_written: written,
            host_pages_read: io.read_bytes / page_bytes,
            write_amplification: (written > 0)
                .then(|| flash.programs.total() as f64 / written as f64),
            ftl_stats: after.stats.since(&before.stats),
            elapsed_ns: timing.serial_cost_ns(&flash),
            flash,
        }
    }

    /// (key, label, value) rows, with `flashkit_sim::RunReport::metrics`' keys and labels.
    fn rows(&self) -> Vec<(String, String, MetricValue)> {
        use MetricValue::{Count, Real};
        let f = &self.flash;
        let s = &self.ftl_stats;
        let mut rows: Vec<(String, String, MetricValue)> = [
            (
                "host_pages_written",
                "host pages written",
                Count(self.host_pages_written),
            ),
            (
                "host_pages_read",
                "host pages read",
                Count(self.host_pages_read),
            ),
            ("flash_reads", "flash page reads", Count(f.reads.total())),
            ("flash_reads_gc", "  by GC", Count(f.reads.gc)),
            (
                "flash_programs",
                "flash page programs",
                Count(f.programs.total()),
            ),
            ("flash_programs_host", "  by host", Count(f.programs.host)),
            ("flash_programs_gc", "  by GC", Count(f.programs.gc)),
            (
                "flash_programs_wl",
                "  by wear leveling",
                Count(f.programs.wear_leveling),
            ),
            ("flash_erases", "block erases", Count(f.erases.total())),
            ("flash_erases_gc", "  by GC", Count(f.erases.gc)),
            (
                "flash_erases_wl",
                "  by wear leveling",
                Count(f.erases.wear_leveling),
            ),
            (
                "write_amplification",
                "write amplification",
                self.write_amplification.map_or(MetricValue::Missing, Real),
            ),
            ("gc_runs", "GC runs", Count(s.gc_runs)),
            ("gc_pages_moved", "GC pages moved", Count(s.gc_pages_moved)),
            ("wl_runs", "wear-leveling runs", Count(s.wear_level_runs)),
            (
                "elapsed_s",
                "simulated time (s)",
                Real(self.elapsed_ns as f64 / 1e9),
            ),
        ]
        .into_iter()
        .map(|(key, label, value)| (key.to_string(), label.to_string(), value))
        .collect();
        for (name, count) in &s.counters {
            rows.push((format!("ftl_{name}"), name.replace('_', " "), Count(*count)));
        }
        for (name, mean) in &s.means {
            let value = mean.value().map_or(MetricValue::Missing, Real);
            rows.push((format!("ftl_{name}"), name.replace('_', " "), value));
        }
        rows
    }
}

/// The FTL part of an em run's report (and of its JSON).
#[derive(Clone, Debug, Serialize)]
pub struct FtlReport {
    /// The FTL's name in tables ("page/greedy").
    pub label: String,
    /// FTL scheme.
    pub ftl: FtlKind,
    /// FTL options.
    pub options: FtlOptions,
    /// The device.
    pub device: DeviceRecord,
    /// Bytes of address space the algorithm needed.
    pub footprint_bytes: u64,
    /// Whether `--capacity` set the logical capacity (otherwise: the footprint in whole
    /// erase blocks).
    pub capacity_given: bool,
    /// The over-provisioning asked for, where it was raised to give the FTL the spare
    /// blocks it needs.
    pub over_provisioning_raised_from: Option<f64>,
    /// Writing the input (the records, or the graph) to the fresh device.
    pub upload: FlashFigures,
    /// The algorithm's part.
    pub algorithm: FlashFigures,
    /// Erase counts at the end.
    pub erase_spread: EraseSpread,
    /// Fingerprint of the FTL's state at the end, hex.
    pub state_hash: String,
}

impl FtlReport {
    /// The device line and the table of flash-level figures, upload and algorithm side by
    /// side.
    pub fn print(&self) {
        println!("{}", self.device_line());
        let (upload, algorithm) = (self.upload.rows(), self.algorithm.rows());
        let mut table = Table::new(["FTL figures", "upload", "algorithm"]);
        for (key, label, value) in &algorithm {
            let before = upload
                .iter()
                .find(|(k, _, _)| k == key)
                .map_or(MetricValue::Missing, |(_, _, v)| v.clone());
            table.push([label.clone(), before.render(), value.render()]);
        }
        print!("{}", table.render());
        let e = &self.erase_spread;
        println!(
            "erase counts at the end: min {}, mean {:.2}, max {}; state hash {}",
            e.min, e.mean, e.max, self.state_hash
        );
    }

    fn device_line(&self) -> String {
        let g = &self.device.geometry;
        let footprint_blocks = self.footprint_bytes.div_ceil(g.block_bytes()).max(1);
        let capacity = if self.capacity_given {
            "as given".to_string()
        } else if g.logical_bytes() > footprint_blocks * g.block_bytes() {
            format!(
                "the footprint of {} B in {footprint_blocks} erase block(s), raised to the \
                 fewest whose {} spare blocks stay within 400% over-provisioning",
                self.footprint_bytes,
                g.spare_blocks()
            )
        } else {
            format!(
                "the footprint of {} B in whole erase blocks",
                self.footprint_bytes
            )
        };
        let op = match self.over_provisioning_raised_from {
            Some(asked) => format!(
                "{:.1}% over-provisioning (raised from {:.1}%: the fewest spare blocks {} \
                 accepts)",
                g.over_provisioning() * 100.0,
                asked * 100.0,
                self.ftl
            ),
            None => format!("{:.1}% over-provisioning", g.over_provisioning() * 100.0),
        };
        format!(
            "FTL {} on {}: {} B pages, {} pages a block, {} blocks ({} spare), {op}; logical \
             capacity {} B ({capacity})",
            self.label,
            self.device.preset,
            g.page_size_bytes(),
            g.pages_per_block(),
            g.blocks(),
            g.spare_blocks(),
            g.logical_bytes()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_lab::config::Size;

    const BLOCK: u64 = 512 << 10;

    fn ok<T>(result: Result<T, Failure>) -> T {
        match result {
            Ok(value) => value,
            Err(Failure::Usage(e) | Failure::Runtime(e)) => panic!("{e:#}"),
        }
    }

    fn choice(kind: FtlKind, device: DeviceSection) -> Result<FtlChoice, Failure> {
        let args = FtlDeviceArgs {
            device,
            ftl: FtlSection::default(),
        };
        let sizes = BlockSizes::new(4096, 16384).expect("valid");
        FtlChoice::new(kind, &args, &ConfigFile::default(), sizes)
    }

    fn geometry(kind: FtlKind, footprint_bytes: u64) -> flashkit_core::Geometry {
        let chosen = ok(choice(kind, DeviceSection::default()));
        ok(chosen.sized(footprint_bytes, "the footprint"))
            .record
            .geometry
    }

    #[test]
    fn the_footprint_is_rounded_up_to_blocks_with_the_fewest_spare_blocks_the_ftl_takes() {
        // 10.5 blocks: 11 logical blocks; 7% would leave 1 spare, the page FTL takes 6.
        let g = geometry(FtlKind::Page, 21 * BLOCK / 2);
        assert_eq!(g.logical_bytes(), 11 * BLOCK);
        assert_eq!(g.spare_blocks(), 6);
        // 200 blocks: 7% leaves 14 spare, enough, so the default stays.
        let g = geometry(FtlKind::Page, 200 * BLOCK);
        assert_eq!(g.logical_bytes(), 200 * BLOCK);
        assert_eq!(g.spare_blocks(), 14);
        // FAST's 8 log blocks need 9 spare: one or two logical blocks would need more than
        // 400% over-provisioning, so a tiny footprint gets three.
        let g = geometry(FtlKind::Fast, 1024);
        assert_eq!(g.logical_bytes(), 3 * BLOCK);
        assert_eq!(g.spare_blocks(), 9);
    }

    #[test]
    fn a_capacity_or_over_provisioning_given_is_kept_or_refused() {
        let given = |capacity: u64, op: Option<f64>| {
            let device = DeviceSection {
                capacity: Some(Size(capacity)),
                op,
                ..DeviceSection::default()
            };
            ok(choice(FtlKind::Page, device)).sized(4 * BLOCK, "the footprint")
        };
        let g = ok(given(8 * BLOCK, None)).record.geometry;
        assert_eq!((g.logical_bytes(), g.spare_blocks()), (8 * BLOCK, 6));
        assert!(matches!(given(3 * BLOCK, None), Err(Failure::Usage(_))));
        assert!(matches!(
            given(8 * BLOCK, Some(0.1)),
            Err(Failure::Usage(_))
        ));
        let g = ok(given(8 * BLOCK, Some(1.0))).record.geometry;
        assert_eq!(g.spare_blocks(), 8);
    }

    #[test]
    fn block_sizes_must_be_whole_pages() {
        let device = DeviceSection {
            preset: Some("modern-tlc".into()),
            ..DeviceSection::default()
        };
        assert!(matches!(
            choice(FtlKind::Page, device),
            Err(Failure::Usage(_))
        ));
    }
}
