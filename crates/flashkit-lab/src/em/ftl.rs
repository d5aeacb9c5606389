//! An em algorithm on any flashkit FTL over the NAND model with stamps
//! ([`flashkit_em::io::FtlIo`]): the device sized to the algorithm, and the FTL's
//! flash-level figures, the input's upload apart from the algorithm's part.
//!
//! Key decision: the device is sized to the algorithm, so that garbage collection runs (the
//! interesting case) and no logical block is left for the FTL to use as extra spare space.
//! The logical capacity is the algorithm's footprint rounded up to whole erase blocks (the
//! sort's four areas, or the highest byte a dry run on the simulator wrote), unless
//! [`FtlSpec::keep_capacity`]; the over-provisioning is the device's, raised (unless
//! [`FtlSpec::keep_over_provisioning`]) to the fewest spare blocks the FTL accepts (a small
//! device at 7% has too few for GC).

use super::em_error;
use crate::repro::LabError;
use flashkit_core::units::format_size;
use flashkit_core::{BlockId, OpCounters, StateHasher, Timing};
use flashkit_device::{NandDevice, Stamps};
use flashkit_em::io::{BlockIo, BlockSizes, FtlIo, IoStats};
use flashkit_ftl::{AnyFtl, FtlKind, FtlOptions, FtlStats, Inspect, Verify};
use flashkit_report::Table;
use flashkit_sim::{DeviceRecord, DeviceSpec, EraseSpread, MetricValue};
use serde::{Deserialize, Serialize};

/// The block I/O adapter over the FTL chosen at run time.
pub type EmFtl = FtlIo<AnyFtl<Stamps>>;

/// The FTL an em algorithm runs on, and its device before the footprint is known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FtlSpec {
    /// The scheme.
    pub ftl: FtlKind,
    /// Its options (one GC policy, one VET variant).
    pub options: FtlOptions,
    /// The device: preset and geometry; its capacity and over-provisioning as below.
    pub device: DeviceSpec,
    /// Keep `device.capacity_bytes` (it must hold the footprint) instead of sizing the
    /// device to the footprint.
    pub keep_capacity: bool,
    /// Keep `device.over_provisioning` instead of raising it to the fewest spare blocks
    /// the FTL accepts.
    pub keep_over_provisioning: bool,
}

impl Default for FtlSpec {
    fn default() -> Self {
        FtlSpec {
            ftl: FtlKind::Page,
            options: FtlOptions::default(),
            device: DeviceSpec::default(),
            keep_capacity: false,
            keep_over_provisioning: false,
        }
    }
}

/// Block sizes that are not whole pages of the FTL's device ([`FtlSpec::check`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotWholePages {
    /// The block sizes.
    pub sizes: BlockSizes,
    /// The device's page size, bytes.
    pub page_bytes: u64,
    /// The device's preset.
    pub preset: String,
}

impl std::fmt::Display for NotWholePages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "B_r = {} and B_w = {} must both be multiples of the FTL's {} page (preset {}): \
             raise B_r and B_w or choose a smaller page size",
            format_size(self.sizes.read_bytes),
            format_size(self.sizes.write_bytes),
            format_size(self.page_bytes),
            self.preset
        )
    }
}

impl std::error::Error for NotWholePages {}

/// The geometry's largest over-provisioning.
const MAX_OP: f64 = 4.0;

/// Logical blocks added at most to a device too small for the FTL's spare blocks.
const MAX_EXTRA_BLOCKS: u64 = 64;

impl FtlSpec {
    /// The FTL's name in tables ("page/greedy").
    pub fn label(&self) -> String {
        crate::compare::label(self.ftl, &self.options)
    }

    /// Refuse a preset or page size the device cannot have, and block sizes that are not
    /// whole FTL pages (`FtlIo` carries a transfer as whole logical pages): what can be
    /// checked before the footprint is known.
    pub fn check(&self, sizes: BlockSizes) -> Result<(), LabError> {
        let probe = DeviceSpec {
            capacity_bytes: DeviceSpec::default().capacity_bytes,
            ..self.device.clone()
        };
        let (_, geometry, _) = probe.resolve().map_err(LabError::from_sim)?;
        let page_bytes = u64::from(geometry.page_size_bytes());
        if sizes.read_bytes.is_multiple_of(page_bytes)
            && sizes.write_bytes.is_multiple_of(page_bytes)
        {
            return Ok(());
        }
        Err(LabError::Config(Box::new(NotWholePages {
            sizes,
            page_bytes,
            preset: self.device.preset.clone(),
        })))
    }

    /// The device for an algorithm whose addresses stay below `footprint_bytes` (what it
    /// needs; `what` names it in messages).
    pub fn sized(&self, footprint_bytes: u64, what: &str) -> Result<FtlDevice, LabError> {
        let block = self.device.block_bytes().map_err(LabError::from_sim)?;
        let capacity_bytes = self.capacity_for(footprint_bytes, block, what)?;
        let spec = DeviceSpec {
            capacity_bytes,
            ..self.device.clone()
        };
        let asked_op = spec.over_provisioning;
        let spec = self.fit(spec, block)?;
        let (preset, geometry, endurance) = spec.resolve().map_err(LabError::from_sim)?;
        let label = self.label();
        self.ftl
            .check(&geometry, &self.options)
            .map_err(|e| LabError::Config(format!("{label}: {e}").into()))?;
        Ok(FtlDevice {
            kind: self.ftl,
            options: self.options,
            label,
            record: DeviceRecord {
                preset: preset.name.into(),
                geometry,
                timing: preset.timing,
                endurance_cycles: endurance,
            },
            footprint_bytes,
            capacity_given: self.keep_capacity,
            op_raised_from: (spec.over_provisioning != asked_op).then_some(asked_op),
        })
    }

    /// The logical capacity: the device's if kept and it holds the footprint, else the
    /// footprint in whole erase blocks of `block` bytes.
    fn capacity_for(&self, footprint_bytes: u64, block: u64, what: &str) -> Result<u64, LabError> {
        if !self.keep_capacity {
            return Ok(footprint_bytes.div_ceil(block).max(1) * block);
        }
        if self.device.capacity_bytes < footprint_bytes {
            return Err(LabError::spec(
                "capacity",
                format!(
                    "{} B is smaller than {what}, {footprint_bytes} B ({} erase blocks of \
                     {}): give at least that, or leave `capacity` out to size the device to it",
                    self.device.capacity_bytes,
                    footprint_bytes.div_ceil(block),
                    format_size(block)
                ),
            ));
        }
        Ok(self.device.capacity_bytes)
    }

    /// `spec` made workable for the FTL where the spec left it open: over-provisioning
    /// raised to the fewest spare blocks the FTL accepts (its own check decides) and, for a
    /// footprint so small that those would take more than the geometry's limit of 400%,
    /// logical blocks added (at most [`MAX_EXTRA_BLOCKS`]; past that the check's message
    /// says what is missing).
    fn fit(&self, spec: DeviceSpec, block_bytes: u64) -> Result<DeviceSpec, LabError> {
        if self.keep_over_provisioning {
            return Ok(spec);
        }
        let extra_blocks = if self.keep_capacity {
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
    fn fewest_spare_blocks_op(&self, spec: &DeviceSpec) -> Result<Option<f64>, LabError> {
        let accepts = |op: f64| -> Result<bool, LabError> {
            let trial = DeviceSpec {
                over_provisioning: op,
                ..spec.clone()
            };
            let (_, geometry, _) = trial.resolve().map_err(LabError::from_sim)?;
            Ok(self.ftl.check(&geometry, &self.options).is_ok())
        };
        if accepts(spec.over_provisioning)? {
            return Ok(Some(spec.over_provisioning));
        }
        if !accepts(MAX_OP)? {
            return Ok(None);
        }
        let (_, geometry, _) = spec.resolve().map_err(LabError::from_sim)?;
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

/// The FTL's device, sized.
#[derive(Clone, Debug)]
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
    /// The device it runs on.
    pub fn record(&self) -> &DeviceRecord {
        &self.record
    }

    /// The FTL's name in tables ("page/greedy").
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A fresh FTL on this device as block I/O with `sizes` (multiples of the page size,
    /// checked by [`FtlSpec::check`]).
    pub fn build(&self, sizes: BlockSizes) -> Result<EmFtl, LabError> {
        let device = NandDevice::<Stamps>::new(self.record.geometry)
            .with_endurance(self.record.endurance_cycles);
        let ftl = AnyFtl::build(self.kind, device, &self.options)
            .map_err(|e| LabError::Config(format!("{}: {e}", self.label).into()))?;
        FtlIo::new(ftl, sizes).map_err(em_error)
    }

    /// The report of a run on `io`: the upload from `start` to `mark`, the algorithm's part
    /// from `mark` to `end`, and the device at the end. Checks the FTL's invariants.
    pub fn report(
        &self,
        io: &EmFtl,
        [start, mark, end]: [&Snapshot; 3],
    ) -> Result<FtlReport, LabError> {
        io.ftl().check_invariants().map_err(|violation| {
            LabError::Run(format!("the {} FTL broke an invariant: {violation}", self.label).into())
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
    pub fn rows(&self) -> Vec<(String, String, MetricValue)> {
        use MetricValue::{Count, Missing, Real};
        let (f, s) = (&self.flash, &self.ftl_stats);
        let wa = self.write_amplification.map_or(Missing, Real);
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
            ("write_amplification", "write amplification", wa),
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
            rows.push((
                format!("ftl_{name}"),
                name.name().replace('_', " "),
                Count(*count),
            ));
        }
        for (name, mean) in &s.means {
            let value = mean.value().map_or(Missing, Real);
            rows.push((format!("ftl_{name}"), name.name().replace('_', " "), value));
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
    /// Whether the spec's capacity was kept (otherwise: the footprint in whole erase
    /// blocks).
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
    /// The flash-level figures, upload and algorithm side by side.
    pub fn table(&self) -> Table {
        let (upload, algorithm) = (self.upload.rows(), self.algorithm.rows());
        let mut table = Table::new(["FTL figures", "upload", "algorithm"]);
        for (key, label, value) in &algorithm {
            let before = upload
                .iter()
                .find(|(k, _, _)| k == key)
                .map_or(MetricValue::Missing, |(_, _, v)| v.clone());
            table.push([label.clone(), before.render(), value.render()]);
        }
        table
    }

    /// The device line, the table and the erase counts.
    pub fn render(&self) -> String {
        let e = &self.erase_spread;
        format!(
            "{}\n{}erase counts at the end: min {}, mean {:.2}, max {}; state hash {}\n",
            self.device_line(),
            self.table().render(),
            e.min,
            e.mean,
            e.max,
            self.state_hash
        )
    }

    /// The FTL, its device's geometry, and how the capacity and over-provisioning came.
    pub fn device_line(&self) -> String {
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
        let op = g.over_provisioning() * 100.0;
        let op = match self.over_provisioning_raised_from {
            Some(asked) => format!(
                "{op:.1}% over-provisioning (raised from {:.1}%: the fewest spare blocks {} \
                 accepts)",
                asked * 100.0,
                self.ftl
            ),
            None => format!("{op:.1}% over-provisioning"),
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

    /// What an FTL did between two snapshots, worked by hand: the host's pages from the
    /// bytes moved, the flash operations and statistics as differences, write amplification
    /// as programs per page written, the time as the preset's serial cost; and its rows
    /// with their keys, labels and values.
    #[test]
    fn figures_between_two_snapshots_are_their_differences() {
        use flashkit_core::ByCause;
        use flashkit_ftl::{Average, Counter, Mean};
        let cause = |host, gc, wear_leveling, metadata| ByCause {
            host,
            gc,
            wear_leveling,
            metadata,
        };
        let page = 4096;
        let before = Snapshot {
            io: IoStats {
                read_ios: 1,
                write_ios: 1,
                read_bytes: 2 * page,
                write_bytes: 3 * page,
            },
            flash: OpCounters {
                reads: cause(2, 1, 0, 0),
                programs: cause(3, 0, 0, 0),
                erases: cause(0, 0, 0, 0),
            },
            stats: FtlStats {
                gc_runs: 1,
                counters: [(Counter::FullMerges, 2)].into(),
                ..FtlStats::default()
            },
        };
        let mut mean = Mean::default();
        mean.add(3.0);
        mean.add(5.0);
        let after = Snapshot {
            io: IoStats {
                read_ios: 5,
                write_ios: 9,
                read_bytes: 10 * page,
                write_bytes: 13 * page,
            },
            flash: OpCounters {
                reads: cause(10, 5, 1, 0),
                programs: cause(13, 6, 3, 0),
                erases: cause(0, 4, 1, 0),
            },
            stats: FtlStats {
                gc_runs: 4,
                gc_pages_moved: 6,
                wear_level_runs: 1,
                counters: [(Counter::FullMerges, 7)].into(),
                means: [(Average::DataBlocksPerVictim, mean)].into(),
                ..FtlStats::default()
            },
        };
        let timing = flashkit_core::NandPreset::MLC_4K.timing;
        let f = FlashFigures::between(&before, &after, page, timing);
        let flash = OpCounters {
            reads: cause(8, 4, 1, 0),
            programs: cause(10, 6, 3, 0),
            erases: cause(0, 4, 1, 0),
        };
        assert_eq!((f.host_pages_written, f.host_pages_read), (10, 8));
        assert_eq!(f.flash, flash);
        assert_eq!(f.write_amplification, Some(1.9));
        assert_eq!(f.elapsed_ns, timing.serial_cost_ns(&flash));
        assert_eq!(
            (
                f.ftl_stats.gc_runs,
                f.ftl_stats.gc_pages_moved,
                f.ftl_stats.wear_level_runs
            ),
            (3, 6, 1)
        );
        use MetricValue::{Count, Missing, Real};
        let rows: Vec<(String, String, MetricValue)> = f.rows();
        let expected: Vec<(&str, &str, MetricValue)> = vec![
            ("host_pages_written", "host pages written", Count(10)),
            ("host_pages_read", "host pages read", Count(8)),
            ("flash_reads", "flash page reads", Count(13)),
            ("flash_reads_gc", "  by GC", Count(4)),
            ("flash_programs", "flash page programs", Count(19)),
            ("flash_programs_host", "  by host", Count(10)),
            ("flash_programs_gc", "  by GC", Count(6)),
            ("flash_programs_wl", "  by wear leveling", Count(3)),
            ("flash_erases", "block erases", Count(5)),
            ("flash_erases_gc", "  by GC", Count(4)),
            ("flash_erases_wl", "  by wear leveling", Count(1)),
            ("write_amplification", "write amplification", Real(1.9)),
            ("gc_runs", "GC runs", Count(3)),
            ("gc_pages_moved", "GC pages moved", Count(6)),
            ("wl_runs", "wear-leveling runs", Count(1)),
            (
                "elapsed_s",
                "simulated time (s)",
                Real(timing.serial_cost_ns(&flash) as f64 / 1e9),
            ),
            ("ftl_full_merges", "full merges", Count(5)),
            (
                "ftl_data_blocks_per_victim",
                "data blocks per victim",
                Real(4.0),
            ),
        ];
        let expected: Vec<(String, String, MetricValue)> = expected
            .into_iter()
            .map(|(k, l, v)| (k.to_string(), l.to_string(), v))
            .collect();
        assert_eq!(rows, expected);
        // Nothing written: no write amplification; a mean with no observation is missing.
        let idle = FlashFigures::between(&after, &after, page, timing);
        assert_eq!(idle.write_amplification, None);
        let rows = idle.rows();
        let value = |key: &str| rows.iter().find(|r| r.0 == key).map(|r| r.2.clone());
        assert_eq!(value("write_amplification"), Some(Missing));
        assert_eq!(value("ftl_data_blocks_per_victim"), Some(Missing));
        assert_eq!(value("elapsed_s"), Some(Real(0.0)));
    }

    const BLOCK: u64 = 512 << 10;

    fn spec(ftl: FtlKind) -> FtlSpec {
        FtlSpec {
            ftl,
            ..FtlSpec::default()
        }
    }

    fn geometry(ftl: FtlKind, footprint_bytes: u64) -> flashkit_core::Geometry {
        spec(ftl)
            .sized(footprint_bytes, "the footprint")
            .expect("sized")
            .record()
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

    /// The report of a fresh FTL: its device line says where the capacity and the
    /// over-provisioning came from, in each of the ways they come; its table pairs upload
    /// and algorithm by key; its text ends with the erase counts and the state hash.
    #[test]
    fn the_device_line_says_how_capacity_and_over_provisioning_came() {
        let report = |spec: &FtlSpec, footprint: u64| {
            let device = spec.sized(footprint, "the footprint").expect("sized");
            let io = device
                .build(BlockSizes::new(4096, 4096).expect("valid"))
                .expect("builds");
            let now = snapshot(&io);
            device.report(&io, [&now, &now, &now]).expect("report")
        };
        let line = |r: &FtlReport, op: String, capacity: String| {
            let g = &r.device.geometry;
            format!(
                "FTL {} on mlc-4k: 4096 B pages, {} pages a block, {} blocks ({} spare), {op}; \
                 logical capacity {} B ({capacity})",
                r.label,
                g.pages_per_block(),
                g.blocks(),
                g.spare_blocks(),
                g.logical_bytes()
            )
        };
        let op = |r: &FtlReport| r.device.geometry.over_provisioning() * 100.0;
        // 10.5 blocks: 11 whole ones, 7% raised to the page FTL's 6 spare blocks.
        let page = report(&spec(FtlKind::Page), 21 * BLOCK / 2);
        assert_eq!(
            page.device_line(),
            line(
                &page,
                format!(
                    "{:.1}% over-provisioning (raised from 7.0%: the fewest spare blocks page \
                     accepts)",
                    op(&page)
                ),
                format!(
                    "the footprint of {} B in whole erase blocks",
                    21 * BLOCK / 2
                )
            )
        );
        // One block's footprint, raised to three so that FAST's 9 spare blocks fit 400%.
        let fast = report(&spec(FtlKind::Fast), 1024);
        assert_eq!(
            fast.device_line(),
            line(
                &fast,
                format!(
                    "{:.1}% over-provisioning (raised from 7.0%: the fewest spare blocks fast \
                     accepts)",
                    op(&fast)
                ),
                "the footprint of 1024 B in 1 erase block(s), raised to the fewest whose 9 \
                 spare blocks stay within 400% over-provisioning"
                    .to_string()
            )
        );
        // Both kept.
        let kept = FtlSpec {
            device: DeviceSpec {
                capacity_bytes: 8 * BLOCK,
                over_provisioning: 1.0,
                ..DeviceSpec::default()
            },
            keep_capacity: true,
            keep_over_provisioning: true,
            ..FtlSpec::default()
        };
        let kept = report(&kept, 4 * BLOCK);
        assert_eq!(
            kept.device_line(),
            line(
                &kept,
                "100.0% over-provisioning".to_string(),
                "as given".to_string()
            )
        );
        let rows = kept.table().rows;
        assert_eq!(rows[0], ["host pages written", "0", "0"]);
        let wa = rows
            .iter()
            .find(|r| r[0] == "write amplification")
            .expect("a row");
        assert_eq!(wa[1], wa[2]);
        let e = &kept.erase_spread;
        assert!(kept.render().ends_with(&format!(
            "erase counts at the end: min {}, mean {:.2}, max {}; state hash {}\n",
            e.min, e.mean, e.max, kept.state_hash
        )));
        assert!(
            kept.render()
                .starts_with(&format!("{}\n", kept.device_line()))
        );
        assert_eq!(kept.state_hash.len(), 16);
    }

    #[test]
    fn a_capacity_or_over_provisioning_kept_is_kept_or_refused() {
        let given = |capacity: u64, op: Option<f64>| {
            let spec = FtlSpec {
                device: DeviceSpec {
                    capacity_bytes: capacity,
                    over_provisioning: op.unwrap_or(0.07),
                    ..DeviceSpec::default()
                },
                keep_capacity: true,
                keep_over_provisioning: op.is_some(),
                ..FtlSpec::default()
            };
            spec.sized(4 * BLOCK, "the footprint")
        };
        let g = given(8 * BLOCK, None).expect("fits").record().geometry;
        assert_eq!((g.logical_bytes(), g.spare_blocks()), (8 * BLOCK, 6));
        assert!(matches!(
            given(3 * BLOCK, None),
            Err(LabError::Spec {
                field: "capacity",
                ..
            })
        ));
        assert!(matches!(
            given(8 * BLOCK, Some(0.1)),
            Err(LabError::Config(_))
        ));
        let g = given(8 * BLOCK, Some(1.0)).expect("fits").record().geometry;
        assert_eq!(g.spare_blocks(), 8);
    }

    #[test]
    fn block_sizes_must_be_whole_pages() {
        let modern = FtlSpec {
            device: DeviceSpec {
                preset: "modern-tlc".into(),
                ..DeviceSpec::default()
            },
            ..FtlSpec::default()
        };
        let sizes = BlockSizes::new(4096, 16384).expect("valid");
        match modern.check(sizes) {
            Err(LabError::Config(e)) => {
                let e = e.downcast_ref::<NotWholePages>().expect("typed");
                assert_eq!((e.page_bytes, e.preset.as_str()), (16384, "modern-tlc"));
            }
            other => panic!("{other:?}"),
        }
        assert!(spec(FtlKind::Page).check(sizes).is_ok());
    }

    #[test]
    fn a_spec_reads_from_json_with_defaults() {
        let spec: FtlSpec =
            serde_json::from_str(r#"{"ftl": "fast", "device": {"preset": "mlc-4k"}}"#)
                .expect("valid");
        assert_eq!(spec.ftl, FtlKind::Fast);
        assert!(!spec.keep_capacity);
        assert_eq!(spec.label(), "fast");
        assert!(serde_json::from_str::<FtlSpec>(r#"{"capacity": 3}"#).is_err());
    }
}
