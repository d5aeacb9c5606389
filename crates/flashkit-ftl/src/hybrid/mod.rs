//! Block-mapped and hybrid log-block FTLs: block mapping, BAST, FAST and O-FAST, after Lee,
//! Park, Chung, Lee, Park and Song, "A Log Buffer-Based Flash Translation Layer Using
//! Fully-Associative Sector Translation", ACM TECS 6(3), 2007 (sections 2.2 to 3.7).
//!
//! All four keep a block-level map from logical to physical blocks, pages at fixed offsets.
//! A write that can go in place does (Algorithm 1); an overwrite ("a collision") is the
//! scheme's business: the block-mapped FTL merges at once, BAST writes to the logical block's
//! dedicated log block, FAST to its SW or RW log blocks. [`HybridFtl`] is generic over the
//! scheme; the shared machinery (block map, log area, switch, partial and full merges) lives
//! in `machinery.rs` and `log.rs`, the victim policies in `victim.rs`.
//!
//! How the geometry is used: the logical space is `ceil(logical pages / pages per block)`
//! logical blocks, each with at most one data block; `N` log blocks come from the spare
//! area, and a merge needs one more free block to build the new data block in. So the
//! device must have at least `N + 1` spare blocks (the block-mapped FTL: 1); construction
//! refuses fewer with a message saying what to change. Every other spare block waits on
//! the free list. Merge copies and erases count under [`flashkit_core::Cause::Gc`].
//!
//! What this layer is not: no wear leveling (the paper leaves it out of scope, section 2.1)
//! and no power-loss recovery. Key decision: see `machinery.rs` on in-order programming.

mod bast;
mod block;
mod check;
mod fast;
mod log;
mod machinery;
mod plan;
mod victim;

pub use self::bast::Bast;
pub use self::block::BlockMapping;
pub use self::fast::Fast;
pub use self::victim::{BastVictim, Choice, LogView, RoundRobin};

use self::machinery::{Core, NewRun};
use crate::{
    Average, Counter, FtlError, FtlStats, Gauge, InvariantViolation, MappingMemory, ReadOutcome,
    check_range,
};
use flashkit_core::{BlockId, Cause, Geometry, Lpn, PageRange, StateHasher};
use flashkit_device::{FlashDevice, PageRead};
use serde::{Deserialize, Serialize};

/// Options of the log-block FTLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridConfig {
    /// Log blocks (BAST: all dedicated; FAST: one SW plus `log_blocks - 1` RW, or all RW
    /// without the SW block). Ignored by the block-mapped FTL.
    pub log_blocks: u32,
    /// FAST and O-FAST: dedicate one log block to sequential writes (the paper's FAST);
    /// `false` gives the purely fully-associative scheme of section 3.1.
    pub sw_log_block: bool,
    /// FAST and O-FAST: what an overwrite of a full SW log block's owner does (Algorithm 2,
    /// lines 16-17).
    pub full_sw: FullSw,
}

/// What FAST does when a page of the SW log block's owner arrives, at a non-zero offset,
/// while the SW block is full. The block was written in order and to the end, so the page
/// is not `last_lsn + 1` (the next in sequence would be the next block's first page).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FullSw {
    /// Algorithm 2 as published: "merge the SW log block with its corresponding data block"
    /// (lines 16-17, cases 2.2 and 2.3), the page written to the new block by the merge: a
    /// full merge, `pages_per_block` copies and two erases (the data block and the SW block).
    #[default]
    Merge,
    /// Ours: the full SW block, written in order, is switched with its data block (one erase,
    /// no copy), as a page at offset 0 would switch it (case 1), and the page goes to the RW
    /// log blocks (case 3), where it is merged later with the other pages its victim holds.
    Switch,
}

impl FullSw {
    /// Both choices.
    pub const ALL: [FullSw; 2] = [FullSw::Merge, FullSw::Switch];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            FullSw::Merge => "merge",
            FullSw::Switch => "switch",
        }
    }
}

named_enum!(FullSw, "full-SW policy");

impl Default for HybridConfig {
    /// Eight log blocks: the paper notes that "in practice, the number of log blocks is
    /// generally limited to less than 10" (section 4).
    fn default() -> Self {
        HybridConfig {
            log_blocks: 8,
            sw_log_block: true,
            full_sw: FullSw::Merge,
        }
    }
}

/// The packed size of a hybrid mapping table as the VET paper (Suh et al., JSA 2014, section
/// 6.3) counts HMT: a block-level map with one 4-byte entry per logical block, plus a
/// page-level map with one 4-byte entry per log-block page (FAST section 3.2 also uses 4-byte
/// sector-map entries). `log_blocks = 0` gives a block-mapping table. The log-block FTLs
/// report this as their `packed_bytes`, and the extent-mapping reproduction uses the same
/// function for address spaces it does not run, so both count HMT the same way.
pub fn hmt_memory(logical_pages: u64, pages_per_block: u32, log_blocks: u32) -> u64 {
    let ppb = u64::from(pages_per_block);
    4 * logical_pages.div_ceil(ppb) + 4 * u64::from(log_blocks) * ppb
}

/// [`hmt_memory`] of `geometry`'s logical space with `log_blocks` log blocks.
pub fn hybrid_mapping_bytes(geometry: &Geometry, log_blocks: u32) -> u64 {
    hmt_memory(
        u64::from(geometry.logical_pages()),
        geometry.pages_per_block(),
        log_blocks,
    )
}

/// What distinguishes the block-mapped FTL, BAST and FAST: what to do with a page that
/// cannot be written in place. Implemented by [`BlockMapping`], [`Bast`] and [`Fast`].
pub trait LogScheme {
    /// Command-line name.
    fn name(&self) -> &'static str;

    /// Write `lpn`, which collides with its data block.
    fn collide<D: FlashDevice>(
        &mut self,
        core: &mut Core<D>,
        lpn: Lpn,
        seq: u64,
    ) -> Result<(), FtlError>;

    /// Write the pages `run` of logical block `lbn` (default: page by page, in place when
    /// possible, as Algorithm 1 does).
    fn write_run<D: FlashDevice>(
        &mut self,
        core: &mut Core<D>,
        lbn: u32,
        run: NewRun,
    ) -> Result<(), FtlError> {
        for offset in run.first..run.first + run.count {
            let lpn = lbn * core.ppb + offset;
            if core.in_place(lbn, offset) {
                core.write_in_place(lpn, run.seq)?;
            } else {
                self.collide(core, Lpn(lpn), run.seq)?;
            }
        }
        Ok(())
    }

    /// Check the scheme's own invariants.
    fn check<D: FlashDevice>(&self, core: &Core<D>) -> Result<(), InvariantViolation>;

    /// Feed the scheme's own state to `hasher`.
    fn hash_state(&self, hasher: &mut StateHasher);

    /// Add the scheme's own figures.
    fn stats(&self, stats: &mut FtlStats);

    /// Heap bytes of the scheme's own state.
    fn heap_bytes(&self) -> u64;
}

/// A block-mapped or log-block FTL over device `D` with scheme `S`.
pub struct HybridFtl<D, S> {
    core: Core<D>,
    scheme: S,
    config: HybridConfig,
}

#[cfg(test)]
impl<D, S> HybridFtl<D, S> {
    /// The shared state, for tests that corrupt it.
    pub(crate) fn core_mut(&mut self) -> &mut Core<D> {
        &mut self.core
    }
}

/// The block-mapped FTL.
pub type BlockFtl<D> = HybridFtl<D, BlockMapping>;
/// BAST.
pub type BastFtl<D> = HybridFtl<D, Bast>;
/// FAST or O-FAST.
pub type FastFtl<D> = HybridFtl<D, Fast>;

/// Which log-block scheme a configuration is for (for `check_config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemeKind {
    /// The block-mapped FTL.
    Block,
    /// BAST.
    Bast,
    /// FAST.
    Fast,
    /// O-FAST.
    OFast,
}

impl SchemeKind {
    /// The most heap the scheme's FTL holds on `geometry` with `config` (its
    /// `MappingMemory::heap_bytes` never exceeds it): the shared state and the scheme's
    /// own tables (BAST's slot of each logical block; FAST's queues of log blocks at twice
    /// their length, and the data blocks of a victim, at most one a page).
    pub fn heap_estimate(self, geometry: &Geometry, config: &HybridConfig) -> u64 {
        let ppb = geometry.pages_per_block();
        let lbns = u64::from(geometry.logical_pages().div_ceil(ppb));
        let slots = match self {
            SchemeKind::Block => 0,
            _ => config.log_blocks,
        };
        let scheme = match self {
            SchemeKind::Block => 0,
            SchemeKind::Bast => lbns * 4,
            SchemeKind::Fast | SchemeKind::OFast => {
                2 * u64::from(slots) * 8 + 2 * u64::from(slots) * u64::from(ppb) * 4
            }
        };
        machinery::core_heap_estimate(geometry, slots) + scheme
    }

    fn label(self) -> &'static str {
        match self {
            SchemeKind::Block => "block-mapped",
            SchemeKind::Bast => "BAST",
            SchemeKind::Fast => "FAST",
            SchemeKind::OFast => "O-FAST",
        }
    }
}

/// Whether `scheme` can run on `geometry` with `config`: enough log blocks for the scheme,
/// and spare blocks for them plus one free block to merge into. The error says what to
/// change.
pub fn check_config(
    scheme: SchemeKind,
    geometry: &Geometry,
    config: &HybridConfig,
) -> Result<(), FtlError> {
    let name = scheme.label();
    let log_blocks = match scheme {
        SchemeKind::Block => 0,
        SchemeKind::Bast if config.log_blocks == 0 => {
            return Err(FtlError::Config(
                "BAST needs at least 1 log block (--log-blocks)".into(),
            ));
        }
        SchemeKind::Fast | SchemeKind::OFast
            if config.log_blocks < 1 + u32::from(config.sw_log_block) =>
        {
            let why = if config.sw_log_block {
                "2 log blocks (--log-blocks): one SW and at least one RW log block"
            } else {
                "1 log block (--log-blocks)"
            };
            return Err(FtlError::Config(format!("{name} needs at least {why}")));
        }
        _ => config.log_blocks,
    };
    let needed = log_blocks + 1;
    if geometry.spare_blocks() < needed {
        let what = if log_blocks == 0 {
            "one free block to merge into".to_string()
        } else {
            format!("{log_blocks} log blocks plus one free block to merge into")
        };
        return Err(FtlError::Config(format!(
            "the {name} FTL needs at least {needed} spare blocks ({what}), but the geometry \
             has {} ({} blocks for {} logical pages of {} per block): raise over-provisioning \
             or lower --log-blocks",
            geometry.spare_blocks(),
            geometry.blocks(),
            geometry.logical_pages(),
            geometry.pages_per_block()
        )));
    }
    Ok(())
}

impl<D: FlashDevice> HybridFtl<D, BlockMapping> {
    /// The block-mapped FTL over a freshly erased device.
    pub fn block(device: D) -> Result<Self, FtlError> {
        let config = HybridConfig {
            log_blocks: 0,
            ..HybridConfig::default()
        };
        check_config(SchemeKind::Block, device.geometry(), &config)?;
        Ok(HybridFtl {
            core: Core::new(device, 0)?,
            scheme: BlockMapping,
            config,
        })
    }
}

impl<D: FlashDevice> HybridFtl<D, Bast> {
    /// BAST with `config.log_blocks` log blocks over a freshly erased device.
    pub fn bast(device: D, config: HybridConfig) -> Result<Self, FtlError> {
        check_config(SchemeKind::Bast, device.geometry(), &config)?;
        let core = Core::new(device, config.log_blocks)?;
        let scheme = Bast::new(core.logical_blocks());
        Ok(HybridFtl {
            core,
            scheme,
            config,
        })
    }
}

impl<D: FlashDevice> HybridFtl<D, Fast> {
    /// FAST (or O-FAST when `lazy`) over a freshly erased device.
    pub fn fast(device: D, config: HybridConfig, lazy: bool) -> Result<Self, FtlError> {
        let kind = if lazy {
            SchemeKind::OFast
        } else {
            SchemeKind::Fast
        };
        check_config(kind, device.geometry(), &config)?;
        Ok(HybridFtl {
            core: Core::new(device, config.log_blocks)?,
            scheme: Fast::new(&config, lazy),
            config,
        })
    }
}

impl<D: FlashDevice, S: LogScheme> HybridFtl<D, S> {
    /// The configuration.
    pub fn config(&self) -> &HybridConfig {
        &self.config
    }

    /// The scheme's command-line name.
    pub fn name(&self) -> &'static str {
        self.scheme.name()
    }
}

impl<D: FlashDevice, S: LogScheme> crate::Ftl for HybridFtl<D, S> {
    fn geometry(&self) -> &Geometry {
        &self.core.geometry
    }

    fn read(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        check_range(&self.core.geometry, range)?;
        for lpn in range.iter() {
            let Some(ppn) = self.core.locate(lpn.0) else {
                sink(lpn, ReadOutcome::Unmapped);
                continue;
            };
            match self.core.device.read(ppn, Cause::Host)? {
                PageRead::Programmed(stamp) => sink(lpn, ReadOutcome::Mapped(stamp)),
                PageRead::Erased => panic!("invariant: {lpn} at {ppn} reads as erased"),
            }
        }
        Ok(())
    }

    fn write(&mut self, range: PageRange, seq: u64) -> Result<(), FtlError> {
        check_range(&self.core.geometry, range)?;
        let ppb = self.core.ppb;
        let (mut lpn, end) = (range.start.0, range.start.0 + range.count);
        while lpn < end {
            let (lbn, first) = (self.core.lbn(lpn), self.core.offset(lpn));
            let count = (ppb - first).min(end - lpn);
            let run = NewRun { first, count, seq };
            self.scheme.write_run(&mut self.core, lbn, run)?;
            lpn += count;
        }
        Ok(())
    }

    fn trim(&mut self, range: PageRange) -> Result<(), FtlError> {
        check_range(&self.core.geometry, range)?;
        self.core.trim(range);
        Ok(())
    }
}

impl<D: FlashDevice, S: LogScheme> crate::Inspect for HybridFtl<D, S> {
    fn device(&self) -> &dyn FlashDevice {
        &self.core.device
    }

    fn stats(&self) -> FtlStats {
        let c = &self.core.counters;
        let mut stats = FtlStats {
            gc_runs: c.switches + c.partial_merges + c.full_merges,
            gc_pages_moved: c.pages_copied,
            retired_blocks: c.retired,
            ..FtlStats::default()
        };
        let counters = [
            (Counter::SwitchMerges, c.switches),
            (Counter::PartialMerges, c.partial_merges),
            (Counter::FullMerges, c.full_merges),
            (Counter::MergeErases, c.data_erases + c.log_erases),
            (Counter::MergeErasesDataBlocks, c.data_erases),
            (Counter::MergeErasesLogBlocks, c.log_erases),
            (Counter::PaddingPrograms, c.padding_programs),
            (Counter::InPlaceAfterMerge, c.in_place_after_merge),
        ];
        for (name, value) in counters {
            stats.counters.insert(name, value);
        }
        if self.config.log_blocks > 0 {
            stats
                .means
                .insert(Average::LogUtilisationPercent, c.utilisation);
            let in_use = self.core.logs.slots().iter().filter(|s| s.block.is_some());
            stats
                .extra
                .insert(Gauge::LogBlocksInUse, in_use.count() as f64);
        }
        stats
            .extra
            .insert(Gauge::FreeBlocks, self.core.free.count() as f64);
        let mapped = self.core.block_map.iter().filter(|&&b| b != log::NONE);
        stats
            .extra
            .insert(Gauge::MappedBlocks, mapped.count() as f64);
        self.scheme.stats(&mut stats);
        stats
    }

    fn mapping_memory(&self) -> MappingMemory {
        MappingMemory {
            packed_bytes: hybrid_mapping_bytes(&self.core.geometry, self.config.log_blocks),
            heap_bytes: self.core.heap_bytes() + self.scheme.heap_bytes(),
        }
    }
}

impl<D: FlashDevice, S: LogScheme> crate::Verify for HybridFtl<D, S> {
    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.core.check()?;
        self.scheme.check(&self.core)
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        let core = &self.core;
        hasher.u32s(&core.block_map);
        hasher.u32s(&core.data_next);
        for &word in core.data_words() {
            hasher.u64(word);
        }
        for role in &core.roles {
            hasher.u64(role.code());
        }
        for (_, block) in core.free.sorted() {
            hasher.u32(block.0);
        }
        core.logs.hash_state(hasher);
        self.scheme.hash_state(hasher);
        for b in 0..core.geometry.blocks() {
            hasher.u32(core.device.block_status(BlockId(b)).erase_count);
        }
        hasher.counters(core.device.counters());
    }
}

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod tests;
