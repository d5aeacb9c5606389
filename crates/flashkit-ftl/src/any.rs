//! The FTL chosen at run time: generic inside, an enum at the edge.

use crate::hybrid::{BastFtl, BlockFtl, FastFtl, HybridConfig, HybridFtl, SchemeKind};
use crate::mapping::vet::{Fold, PfNode, Sip, Swiss};
use crate::mapping::{Emt, PageTable, Pd, Pf, Vet, VetConfig, VetNodes, VetTable};
use crate::page::{PageFtl, PageFtlConfig};
use crate::{Ftl, FtlError, FtlStats, InvariantViolation, MappingMemory, ReadOutcome};
use flashkit_core::{Geometry, Lpn, PageRange, StateHasher};
use flashkit_device::{FlashDevice, NandDevice, PayloadStore};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The FTL schemes flashkit implements, by command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtlKind {
    /// Log-structured page mapping with a flat page table.
    Page,
    /// Block mapping: an overwrite copies the block.
    Block,
    /// BAST: one dedicated log block per hot block (Kim et al. 2002).
    Bast,
    /// FAST: an SW log block and fully-associative RW log blocks (Lee et al. 2007).
    Fast,
    /// O-FAST: FAST with lazy merges (Lee et al. 2007, section 3.6).
    #[serde(rename = "ofast")]
    OFast,
    /// The page FTL with the Virtual Extent Trie as its mapping (Suh et al., JSA 2014).
    Vet,
    /// The page FTL with the Extent Mapping Tree as its mapping (Suh et al., JSA 2014).
    Emt,
}

impl FtlKind {
    /// Every scheme, in report order.
    pub const ALL: [FtlKind; 7] = [
        FtlKind::Page,
        FtlKind::Block,
        FtlKind::Bast,
        FtlKind::Fast,
        FtlKind::OFast,
        FtlKind::Vet,
        FtlKind::Emt,
    ];

    /// Command-line name.
    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Block => "block",
            FtlKind::Bast => "bast",
            FtlKind::Fast => "fast",
            FtlKind::OFast => "ofast",
            FtlKind::Vet => "vet",
            FtlKind::Emt => "emt",
        }
    }

    /// Whether the scheme uses log blocks (so `--log-blocks` applies).
    pub fn uses_log_blocks(self) -> bool {
        matches!(self, FtlKind::Bast | FtlKind::Fast | FtlKind::OFast)
    }

    /// Whether this scheme can run on `geometry` with `options`, checked without building it.
    pub fn check(self, geometry: &Geometry, options: &FtlOptions) -> Result<(), FtlError> {
        let hybrid = |kind| crate::hybrid::check_config(kind, geometry, &options.hybrid);
        match self {
            FtlKind::Block => hybrid(SchemeKind::Block),
            FtlKind::Bast => hybrid(SchemeKind::Bast),
            FtlKind::Fast => hybrid(SchemeKind::Fast),
            FtlKind::OFast => hybrid(SchemeKind::OFast),
            FtlKind::Page | FtlKind::Emt => crate::page::check_config(geometry, &options.page),
            FtlKind::Vet => {
                options.vet.check(geometry.logical_pages())?;
                crate::page::check_config(geometry, &options.page)
            }
        }
    }

    /// The most heap the FTL holds on `geometry` with `options`: its mapping and its
    /// bookkeeping (the device model's is [`NandDevice::heap_estimate`]). For the page table
    /// and the log-block FTLs, whose tables the geometry sizes, a bound from their
    /// allocations; for the extent mappings, the worst case, one extent a logical page, at
    /// [`FtlKind::extent_heap_bytes`] an extent.
    pub fn heap_estimate(self, geometry: &Geometry, options: &FtlOptions) -> u64 {
        type Device = NandDevice<flashkit_device::CountsOnly>;
        let pages = u64::from(geometry.logical_pages());
        let hybrid = |scheme: SchemeKind| scheme.heap_estimate(geometry, &options.hybrid);
        match self {
            FtlKind::Page => {
                pages * 4
                    + PageFtl::<Device, PageTable>::bookkeeping_heap_estimate(
                        geometry,
                        &options.page,
                    )
            }
            FtlKind::Block => hybrid(SchemeKind::Block),
            FtlKind::Bast => hybrid(SchemeKind::Bast),
            FtlKind::Fast => hybrid(SchemeKind::Fast),
            FtlKind::OFast => hybrid(SchemeKind::OFast),
            FtlKind::Vet | FtlKind::Emt => {
                pages * self.extent_heap_bytes(&options.vet)
                    + PageFtl::<Device, Emt>::bookkeeping_heap_estimate(geometry, &options.page)
            }
        }
    }

    /// The heap an extent mapping holds per extent at its worst, for
    /// [`FtlKind::heap_estimate`]: measured on devices written one page at a time in random
    /// order (every logical page its own extent), the trie's nodes or the tree's entries and
    /// the hash table or chunks around them, with half as much again for a table between
    /// doublings (the figures in docs/DESIGN.md, "memory estimate"). 0 for other schemes.
    pub fn extent_heap_bytes(self, vet: &VetConfig) -> u64 {
        match (self, vet.nodes, vet.table) {
            (FtlKind::Vet, VetNodes::Pf, VetTable::Cuckoo) => 104,
            (FtlKind::Vet, VetNodes::Pd, VetTable::Cuckoo) => 76,
            (FtlKind::Vet, _, VetTable::Swiss | VetTable::Std) => 64,
            (FtlKind::Emt, _, _) => 28,
            _ => 0,
        }
    }

    /// Whether the scheme garbage-collects with a victim policy (so `--gc` applies).
    pub fn uses_gc_policy(self) -> bool {
        matches!(self, FtlKind::Page | FtlKind::Vet | FtlKind::Emt)
    }
}

impl fmt::Display for FtlKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FtlKind {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        FtlKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = FtlKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown FTL {text:?} (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Options of every scheme; each scheme reads its own part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FtlOptions {
    /// Page-mapped FTL options (also those of the extent-mapped page FTLs).
    pub page: PageFtlConfig,
    /// Log-block FTL options (BAST, FAST, O-FAST).
    pub hybrid: HybridConfig,
    /// Virtual Extent Trie options.
    pub vet: VetConfig,
}

/// Any FTL over a NAND device with payload store `S`.
pub enum AnyFtl<S: PayloadStore> {
    /// [`FtlKind::Page`].
    Page(PageFtl<NandDevice<S>, PageTable>),
    /// [`FtlKind::Block`].
    Block(BlockFtl<NandDevice<S>>),
    /// [`FtlKind::Bast`].
    Bast(BastFtl<NandDevice<S>>),
    /// [`FtlKind::Fast`] and [`FtlKind::OFast`].
    Fast(FastFtl<NandDevice<S>>),
    /// [`FtlKind::Vet`] with pointer-free nodes.
    VetPf(PageFtl<NandDevice<S>, Vet<Pf>>),
    /// [`FtlKind::Vet`] with pointer-dependent nodes.
    VetPd(PageFtl<NandDevice<S>, Vet<Pd>>),
    /// [`FtlKind::Vet`], pointer-free nodes in hashbrown's SwissTable with foldhash.
    VetPfSwiss(PageFtl<NandDevice<S>, Vet<Pf, Swiss<PfNode, Fold>>>),
    /// [`FtlKind::Vet`], pointer-dependent nodes in hashbrown's SwissTable with foldhash.
    VetPdSwiss(PageFtl<NandDevice<S>, Vet<Pd, Swiss<u32, Fold>>>),
    /// [`FtlKind::Vet`], pointer-free nodes in hashbrown's SwissTable with SipHash.
    VetPfStd(PageFtl<NandDevice<S>, Vet<Pf, Swiss<PfNode, Sip>>>),
    /// [`FtlKind::Vet`], pointer-dependent nodes in hashbrown's SwissTable with SipHash.
    VetPdStd(PageFtl<NandDevice<S>, Vet<Pd, Swiss<u32, Sip>>>),
    /// [`FtlKind::Emt`].
    Emt(PageFtl<NandDevice<S>, Emt>),
}

impl<S: PayloadStore> AnyFtl<S> {
    /// Build scheme `kind` over `device`.
    pub fn build(
        kind: FtlKind,
        device: NandDevice<S>,
        options: &FtlOptions,
    ) -> Result<Self, FtlError> {
        let pages = device.geometry().logical_pages();
        Ok(match kind {
            FtlKind::Page => AnyFtl::Page(PageFtl::with_page_table(device, options.page)?),
            FtlKind::Block => AnyFtl::Block(HybridFtl::block(device)?),
            FtlKind::Bast => AnyFtl::Bast(HybridFtl::bast(device, options.hybrid)?),
            FtlKind::Fast => AnyFtl::Fast(HybridFtl::fast(device, options.hybrid, false)?),
            FtlKind::OFast => AnyFtl::Fast(HybridFtl::fast(device, options.hybrid, true)?),
            FtlKind::Vet => {
                options.vet.check(pages)?;
                let (vet, page) = (&options.vet, options.page);
                match (options.vet.nodes, options.vet.table) {
                    (VetNodes::Pf, VetTable::Cuckoo) => {
                        AnyFtl::VetPf(PageFtl::new(device, Vet::with_config(pages, vet), page)?)
                    }
                    (VetNodes::Pd, VetTable::Cuckoo) => {
                        AnyFtl::VetPd(PageFtl::new(device, Vet::with_config(pages, vet), page)?)
                    }
                    (VetNodes::Pf, VetTable::Swiss) => AnyFtl::VetPfSwiss(PageFtl::new(
                        device,
                        Vet::with_config(pages, vet),
                        page,
                    )?),
                    (VetNodes::Pd, VetTable::Swiss) => AnyFtl::VetPdSwiss(PageFtl::new(
                        device,
                        Vet::with_config(pages, vet),
                        page,
                    )?),
                    (VetNodes::Pf, VetTable::Std) => {
                        AnyFtl::VetPfStd(PageFtl::new(device, Vet::with_config(pages, vet), page)?)
                    }
                    (VetNodes::Pd, VetTable::Std) => {
                        AnyFtl::VetPdStd(PageFtl::new(device, Vet::with_config(pages, vet), page)?)
                    }
                }
            }
            FtlKind::Emt => AnyFtl::Emt(PageFtl::new(device, Emt::new(pages), options.page)?),
        })
    }
}

macro_rules! dispatch {
    ($self:ident, $ftl:ident => $body:expr) => {
        match $self {
            AnyFtl::Page($ftl) => $body,
            AnyFtl::Block($ftl) => $body,
            AnyFtl::Bast($ftl) => $body,
            AnyFtl::Fast($ftl) => $body,
            AnyFtl::VetPf($ftl) => $body,
            AnyFtl::VetPd($ftl) => $body,
            AnyFtl::VetPfSwiss($ftl) => $body,
            AnyFtl::VetPdSwiss($ftl) => $body,
            AnyFtl::VetPfStd($ftl) => $body,
            AnyFtl::VetPdStd($ftl) => $body,
            AnyFtl::Emt($ftl) => $body,
        }
    };
}

/// Work done once with the concrete FTL inside an [`AnyFtl`] ([`AnyFtl::with_concrete`]): a
/// replay loop written against `F: Ftl` is then compiled for each scheme (static dispatch),
/// instead of matching on the enum's variant at every call. The match per call cost the page
/// FTL benchmark 5% of its instructions once the enum had seven variants, because `write`
/// stopped being inlined into the loop.
pub trait WithFtl {
    /// What the work returns.
    type Output;
    /// Do the work with `ftl`.
    fn run<F: crate::Simulated>(self, ftl: F) -> Self::Output;
}

impl<S: PayloadStore> AnyFtl<S> {
    /// Hand the concrete FTL to `work`.
    pub fn with_concrete<W: WithFtl>(self, work: W) -> W::Output {
        dispatch!(self, ftl => work.run(ftl))
    }
}

impl<S: PayloadStore> Ftl for AnyFtl<S> {
    fn geometry(&self) -> &Geometry {
        dispatch!(self, ftl => ftl.geometry())
    }
    fn read(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        dispatch!(self, ftl => ftl.read(range, sink))
    }
    fn read_for_merge(
        &mut self,
        range: PageRange,
        sink: &mut dyn FnMut(Lpn, ReadOutcome),
    ) -> Result<(), FtlError> {
        dispatch!(self, ftl => ftl.read_for_merge(range, sink))
    }
    #[inline]
    fn write(&mut self, range: PageRange, seq: u64) -> Result<(), FtlError> {
        dispatch!(self, ftl => ftl.write(range, seq))
    }
    fn trim(&mut self, range: PageRange) -> Result<(), FtlError> {
        dispatch!(self, ftl => ftl.trim(range))
    }
    fn flush(&mut self) -> Result<(), FtlError> {
        dispatch!(self, ftl => ftl.flush())
    }
    #[inline]
    fn prefetch(&self, range: PageRange) {
        dispatch!(self, ftl => ftl.prefetch(range))
    }
}

impl<S: PayloadStore> crate::Inspect for AnyFtl<S> {
    fn device(&self) -> &dyn FlashDevice {
        dispatch!(self, ftl => ftl.device())
    }

    fn stats(&self) -> FtlStats {
        dispatch!(self, ftl => ftl.stats())
    }

    fn mapping_memory(&self) -> MappingMemory {
        dispatch!(self, ftl => ftl.mapping_memory())
    }
}

impl<S: PayloadStore> crate::Verify for AnyFtl<S> {
    fn check_invariants(&self) -> Result<(), InvariantViolation> {
        dispatch!(self, ftl => ftl.check_invariants())
    }

    fn hash_state(&self, hasher: &mut StateHasher) {
        dispatch!(self, ftl => ftl.hash_state(hasher))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verify;
    use flashkit_device::Stamps;

    fn geometry() -> Geometry {
        Geometry::builder()
            .page_size_bytes(512)
            .pages_per_block(4)
            .blocks(40)
            .over_provisioning(0.5)
            .build()
            .expect("valid geometry")
    }

    fn build(kind: FtlKind) -> AnyFtl<Stamps> {
        AnyFtl::build(kind, NandDevice::new(geometry()), &FtlOptions::default()).expect("builds")
    }

    /// The names every report, sweep and command line keys on, both ways, and which options
    /// apply to which scheme.
    #[test]
    fn names_parse_back_and_say_which_options_apply() {
        let names: Vec<_> = FtlKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(
            names,
            ["page", "block", "bast", "fast", "ofast", "vet", "emt"]
        );
        for kind in FtlKind::ALL {
            assert_eq!(kind.to_string(), kind.name());
            assert_eq!(kind.name().parse::<FtlKind>(), Ok(kind));
        }
        let refused = "pagee".parse::<FtlKind>().expect_err("unknown");
        assert!(
            refused.contains("\"pagee\"") && refused.contains("ofast"),
            "{refused}"
        );
        let log: Vec<_> = FtlKind::ALL
            .into_iter()
            .filter(|k| k.uses_log_blocks())
            .collect();
        assert_eq!(log, [FtlKind::Bast, FtlKind::Fast, FtlKind::OFast]);
        let gc: Vec<_> = FtlKind::ALL
            .into_iter()
            .filter(|k| k.uses_gc_policy())
            .collect();
        assert_eq!(gc, [FtlKind::Page, FtlKind::Vet, FtlKind::Emt]);
    }

    /// `check` refuses what `build` refuses, for each family, without building.
    #[test]
    fn check_refuses_what_build_refuses() {
        let g = geometry();
        let too_many_logs = FtlOptions {
            hybrid: HybridConfig {
                log_blocks: g.spare_blocks() + 1,
                ..HybridConfig::default()
            },
            ..FtlOptions::default()
        };
        let high_threshold = FtlOptions {
            page: PageFtlConfig {
                gc_threshold_blocks: g.spare_blocks(),
                ..PageFtlConfig::default()
            },
            ..FtlOptions::default()
        };
        for kind in FtlKind::ALL {
            let bad = if kind.uses_log_blocks() {
                &too_many_logs
            } else {
                &high_threshold
            };
            let ok = FtlOptions::default();
            assert!(kind.check(&g, &ok).is_ok(), "{kind}");
            assert!(AnyFtl::build(kind, NandDevice::<Stamps>::new(g), &ok).is_ok());
            if kind == FtlKind::Block {
                continue; // no option of its own to get wrong
            }
            assert!(kind.check(&g, bad).is_err(), "{kind}");
            assert!(AnyFtl::build(kind, NandDevice::<Stamps>::new(g), bad).is_err());
        }
    }

    /// The extent mappings' estimate: the worst case of one extent a logical page, at the
    /// measured bytes an extent, plus the page FTL's bookkeeping.
    #[test]
    fn the_extent_mappings_estimate_is_an_extent_a_page() {
        type Device = NandDevice<flashkit_device::CountsOnly>;
        let g = geometry();
        let options = FtlOptions::default();
        let pages = u64::from(g.logical_pages());
        let bookkeeping = PageFtl::<Device, Emt>::bookkeeping_heap_estimate(&g, &options.page);
        assert_eq!(
            FtlKind::Vet.heap_estimate(&g, &options),
            pages * 104 + bookkeeping
        );
        assert_eq!(
            FtlKind::Emt.heap_estimate(&g, &options),
            pages * 28 + bookkeeping
        );
    }

    /// The enum hands every call to the FTL inside: a merge's read is a read, the state
    /// hash is the scheme's own, and a corrupted state fails the check.
    #[test]
    fn every_call_reaches_the_ftl_inside() {
        for kind in FtlKind::ALL {
            let mut ftl = build(kind);
            ftl.write(PageRange::new(Lpn(0), 6), 1).expect("write");
            let (mut read, mut merged) = (Vec::new(), Vec::new());
            let range = PageRange::new(Lpn(0), 8);
            ftl.read(range, &mut |lpn, out| read.push((lpn, out)))
                .expect("read");
            ftl.read_for_merge(range, &mut |lpn, out| merged.push((lpn, out)))
                .expect("read for merge");
            assert_eq!(read.len(), 8, "{kind}");
            assert_eq!(merged, read, "{kind}");
            ftl.flush().expect("flush");
            ftl.check_invariants().expect("healthy");
            let mut whole = StateHasher::new();
            ftl.hash_state(&mut whole);
            let mut inner = StateHasher::new();
            let inside = &ftl;
            dispatch!(inside, f => f.hash_state(&mut inner));
            assert_eq!(whole.finish(), inner.finish(), "{kind}");
            assert_ne!(whole.finish(), StateHasher::new().finish(), "{kind}");
        }
        let mut bast = build(FtlKind::Bast);
        bast.write(PageRange::new(Lpn(0), 4), 1)
            .expect("fill block 0");
        bast.write(PageRange::one(Lpn(1)), 2).expect("a log page");
        bast.check_invariants().expect("healthy");
        let AnyFtl::Bast(inner) = &mut bast else {
            unreachable!("built as BAST")
        };
        inner.core_mut().logs.corrupt_owner(0, 7);
        assert!(bast.check_invariants().is_err());
    }
}
