//! Operation latencies and the named NAND parts the papers use. Every preset says where its
//! figures come from; a figure that no source gives is marked as assumed.

use crate::counters::OpCounters;
use crate::geometry::GeometryBuilder;
use serde::Serialize;

/// Latency of one page read, one page program and one block erase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// Page read (array to register), nanoseconds.
    pub read_ns: u64,
    /// Page program, nanoseconds.
    pub program_ns: u64,
    /// Block erase, nanoseconds.
    pub erase_ns: u64,
}

impl Timing {
    /// The papers' serial cost model: every operation happens one after another, so elapsed
    /// time is `reads * t_read + programs * t_program + erases * t_erase`. This is how the
    /// FAST, GRR and VET papers report elapsed time, which is why it is the default.
    pub fn serial_cost_ns(&self, counters: &OpCounters) -> u64 {
        counters.reads.total() * self.read_ns
            + counters.programs.total() * self.program_ns
            + counters.erases.total() * self.erase_ns
    }
}

/// A named flash part: geometry shape, timing and endurance, with its source.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NandPreset {
    /// Name used on the command line.
    pub name: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    /// Page size in bytes.
    pub page_size_bytes: u32,
    /// Pages per erase block.
    pub pages_per_block: u32,
    /// Out-of-band bytes per page.
    pub oob_bytes: u32,
    /// Latencies.
    pub timing: Timing,
    /// Erase cycles a block survives.
    pub endurance_cycles: u32,
}

impl NandPreset {
    /// Small-block SLC NAND of the FAST paper: 512 B sectors, 32 to a block, 15 us / 200 us /
    /// 2 ms.
    pub const FAST_PAPER: NandPreset = NandPreset {
        name: "fast-paper",
        source: "Lee et al., ACM TECS 6(3) 2007 (FAST), section 1, citing Samsung 2005: 512-byte \
                 sector read 15 us, write 200 us, 32 sectors a block, block erase 2 ms, 100,000 \
                 erase cycles. The Numonyx NAND512W3A2S small-page SLC datasheet has the same \
                 figures (512+16 B page, 16 KiB block, 15 us read at 1.8 V).",
        page_size_bytes: 512,
        pages_per_block: 32,
        oob_bytes: 16,
        timing: Timing {
            read_ns: 15_000,
            program_ns: 200_000,
            erase_ns: 2_000_000,
        },
        endurance_cycles: 100_000,
    };

    /// The GRR paper's NAND: 80 us / 200 us / 1.5 ms.
    pub const GRR_PAPER: NandPreset = NandPreset {
        name: "grr-paper",
        source: "Jin, Cho, Chung, IMCOM 2014 (GRR), Table 3: page read 80 us, program 200 us, \
                 block erase 1.5 ms. The paper gives no page or block size; the geometry is that \
                 of a large-block SLC part with the same program and erase times (Numonyx \
                 NAND02G-B2D: 2048+64 B page, 64 pages a block, 100,000 cycles).",
        page_size_bytes: 2048,
        pages_per_block: 64,
        oob_bytes: 64,
        timing: Timing {
            read_ns: 80_000,
            program_ns: 200_000,
            erase_ns: 1_500_000,
        },
        endurance_cycles: 100_000,
    };

    /// A 4 KiB-page MLC part; flashkit's default for SSD-style page-mapped experiments.
    pub const MLC_4K: NandPreset = NandPreset {
        name: "mlc-4k",
        source: "Numonyx NAND16GW3D2B MLC datasheet (Rev 2, 2009): 4096+224 B page, 512 KiB \
                 block (128 pages), random access 60 us (max), page program 800 us (typ), block \
                 erase 2.5 ms (typ), 5,000 program/erase cycles.",
        page_size_bytes: 4096,
        pages_per_block: 128,
        oob_bytes: 224,
        timing: Timing {
            read_ns: 60_000,
            program_ns: 800_000,
            erase_ns: 2_500_000,
        },
        endurance_cycles: 5_000,
    };

    /// A modern large-page 3D TLC part.
    pub const MODERN_TLC: NandPreset = NandPreset {
        name: "modern-tlc",
        source: "CAES UT81NDQ512G8T 4 Tb TLC datasheet (Micron B17A die, released 11/22): \
                 16384+2208 B page, 2304 pages a block, single-plane page read 74 us (typ), \
                 effective page program 1900 us (typ), block erase 15 ms (typ). The datasheet \
                 excerpt gives no endurance; 3,000 cycles is assumed, a common TLC rating.",
        page_size_bytes: 16384,
        pages_per_block: 2304,
        oob_bytes: 2208,
        timing: Timing {
            read_ns: 74_000,
            program_ns: 1_900_000,
            erase_ns: 15_000_000,
        },
        endurance_cycles: 3_000,
    };

    /// Every preset, for listings and lookups.
    pub const ALL: [NandPreset; 4] = [
        Self::FAST_PAPER,
        Self::GRR_PAPER,
        Self::MLC_4K,
        Self::MODERN_TLC,
    ];

    /// Look a preset up by name.
    pub fn by_name(name: &str) -> Option<NandPreset> {
        Self::ALL.into_iter().find(|preset| preset.name == name)
    }

    /// A geometry builder with this part's page, block and OOB sizes; the caller sets the
    /// capacity and over-provisioning.
    pub fn geometry(&self) -> GeometryBuilder {
        GeometryBuilder::default()
            .page_size_bytes(self.page_size_bytes)
            .pages_per_block(self.pages_per_block)
            .oob_bytes(self.oob_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cause;

    #[test]
    fn presets_have_the_papers_figures() {
        let fast = NandPreset::by_name("fast-paper").expect("preset");
        assert_eq!((fast.page_size_bytes, fast.pages_per_block), (512, 32));
        assert_eq!(
            fast.timing,
            Timing {
                read_ns: 15_000,
                program_ns: 200_000,
                erase_ns: 2_000_000
            }
        );
        let grr = NandPreset::by_name("grr-paper").expect("preset");
        assert_eq!(
            grr.timing,
            Timing {
                read_ns: 80_000,
                program_ns: 200_000,
                erase_ns: 1_500_000
            }
        );
        assert_eq!(NandPreset::MODERN_TLC.page_size_bytes, 16384);
        for preset in NandPreset::ALL {
            assert!(!preset.source.is_empty());
            preset
                .geometry()
                .blocks(16)
                .build()
                .expect("preset geometry is valid");
        }
    }

    #[test]
    fn serial_cost_model_sums_every_operation() {
        let mut counters = OpCounters::default();
        counters.reads[Cause::Host] = 10;
        counters.reads[Cause::Gc] = 5;
        counters.programs[Cause::Host] = 3;
        counters.erases[Cause::WearLeveling] = 2;
        let t = NandPreset::FAST_PAPER.timing;
        assert_eq!(
            t.serial_cost_ns(&counters),
            15 * 15_000 + 3 * 200_000 + 2 * 2_000_000
        );
    }

    /// A preset's geometry builder carries its page, block and OOB sizes.
    #[test]
    fn a_presets_builder_has_its_sizes() {
        for preset in NandPreset::ALL {
            let g = preset
                .geometry()
                .blocks(8)
                .build()
                .expect("a preset's sizes are valid");
            assert_eq!(
                (g.page_size_bytes(), g.pages_per_block(), g.oob_bytes()),
                (
                    preset.page_size_bytes,
                    preset.pages_per_block,
                    preset.oob_bytes
                ),
                "{}",
                preset.name
            );
        }
    }
}
