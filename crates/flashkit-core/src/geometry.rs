//! The shape of a NAND part: page size, pages per block, blocks, out-of-band bytes, and how
//! much of it the host sees (over-provisioning). Built once, validated once; afterwards every
//! field is known to be sane, so the hot paths do not check again.

use crate::ids::{BlockId, Ppn};
use serde::Serialize;
use thiserror::Error;

/// A validated flash geometry. Build one with [`Geometry::builder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Geometry {
    page_size_bytes: u32,
    pages_per_block: u32,
    blocks: u32,
    oob_bytes: u32,
    logical_pages: u32,
    #[serde(skip)]
    ppb_shift: Option<u32>,
}

/// Why a geometry was refused. Each variant names the field and the rule it broke.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GeometryError {
    /// Page size must be a power of two between 512 B and 1 MiB.
    #[error("page size {0} B is not a power of two between 512 B and 1 MiB")]
    PageSize(u32),
    /// Pages per block must be between 2 and 65536.
    #[error("pages per block {0} is outside 2..=65536")]
    PagesPerBlock(u32),
    /// The out-of-band area cannot be larger than the page.
    #[error("OOB size {oob} B is larger than the page ({page} B)")]
    OobSize {
        /// OOB bytes asked for.
        oob: u32,
        /// Page size.
        page: u32,
    },
    /// Over-provisioning must be a finite fraction in [0, 4].
    #[error("over-provisioning {0} is not a fraction between 0 and 4 (0.07 means 7%)")]
    OverProvisioning(f64),
    /// Capacity was given twice or not at all.
    #[error("give the capacity either as physical blocks or as logical bytes, exactly once")]
    Capacity,
    /// Logical capacity must be a whole, non-zero number of pages.
    #[error("logical capacity {bytes} B is not a non-zero multiple of the {page} B page")]
    LogicalCapacity {
        /// Bytes asked for.
        bytes: u64,
        /// Page size.
        page: u32,
    },
    /// The device must have at least two blocks.
    #[error("a device needs at least 2 blocks, got {0}")]
    TooFewBlocks(u64),
    /// Page numbers are 32-bit.
    #[error("{0} physical pages exceed the 2^32 - 2 page limit of flashkit's 32-bit page numbers")]
    TooManyPages(u64),
    /// Over-provisioning left no logical pages.
    #[error("the geometry leaves no logical pages for the host")]
    NoLogicalPages,
}

/// Builder for [`Geometry`]; every setter names its unit so that no two same-typed integers
/// travel side by side.
#[derive(Clone, Debug)]
pub struct GeometryBuilder {
    page_size_bytes: u32,
    pages_per_block: u32,
    oob_bytes: u32,
    blocks: Option<u32>,
    logical_bytes: Option<u64>,
    over_provisioning: f64,
}

impl Default for GeometryBuilder {
    fn default() -> Self {
        GeometryBuilder {
            page_size_bytes: 4096,
            pages_per_block: 128,
            oob_bytes: 128,
            blocks: None,
            logical_bytes: None,
            over_provisioning: 0.07,
        }
    }
}

impl GeometryBuilder {
    /// Page size in bytes (a power of two, 512 B to 1 MiB).
    pub fn page_size_bytes(mut self, bytes: u32) -> Self {
        self.page_size_bytes = bytes;
        self
    }

    /// Pages in an erase block.
    pub fn pages_per_block(mut self, pages: u32) -> Self {
        self.pages_per_block = pages;
        self
    }

    /// Out-of-band (spare) bytes per page.
    pub fn oob_bytes(mut self, bytes: u32) -> Self {
        self.oob_bytes = bytes;
        self
    }

    /// Physical capacity as a block count; the logical capacity follows from the
    /// over-provisioning: `logical = floor(physical / (1 + op))`.
    pub fn blocks(mut self, blocks: u32) -> Self {
        self.blocks = Some(blocks);
        self
    }

    /// Logical (host-visible) capacity in bytes; the physical block count follows from the
    /// over-provisioning: `blocks = ceil(logical * (1 + op) / pages_per_block)`.
    pub fn logical_bytes(mut self, bytes: u64) -> Self {
        self.logical_bytes = Some(bytes);
        self
    }

    /// Spare capacity as a fraction of the logical capacity (0.07 is 7%, the figure of most
    /// consumer SSDs: 256 GB sold on 256 GiB of flash).
    pub fn over_provisioning(mut self, fraction: f64) -> Self {
        self.over_provisioning = fraction;
        self
    }

    /// Validate and build.
    pub fn build(self) -> Result<Geometry, GeometryError> {
        let page = self.page_size_bytes;
        if !page.is_power_of_two() || !(512..=1 << 20).contains(&page) {
            return Err(GeometryError::PageSize(page));
        }
        let ppb = self.pages_per_block;
        if !(2..=65536).contains(&ppb) {
            return Err(GeometryError::PagesPerBlock(ppb));
        }
        if self.oob_bytes > page {
            return Err(GeometryError::OobSize {
                oob: self.oob_bytes,
                page,
            });
        }
        let op = self.over_provisioning;
        if !op.is_finite() || !(0.0..=4.0).contains(&op) {
            return Err(GeometryError::OverProvisioning(op));
        }
        let (blocks, logical_pages) = match (self.blocks, self.logical_bytes) {
            (Some(blocks), None) => {
                let physical = u64::from(blocks) * u64::from(ppb);
                // The small epsilon keeps 1.07 * n / 1.07 from rounding down to n - 1.
                let logical = (physical as f64 / (1.0 + op) + 1e-6).floor() as u64;
                (u64::from(blocks), logical)
            }
            (None, Some(bytes)) => {
                if bytes == 0 || bytes % u64::from(page) != 0 {
                    return Err(GeometryError::LogicalCapacity { bytes, page });
                }
                let logical = bytes / u64::from(page);
                let physical = (logical as f64 * (1.0 + op) - 1e-6).ceil() as u64;
                (physical.div_ceil(u64::from(ppb)), logical)
            }
            _ => return Err(GeometryError::Capacity),
        };
        if blocks < 2 {
            return Err(GeometryError::TooFewBlocks(blocks));
        }
        let physical_pages = blocks * u64::from(ppb);
        if physical_pages > u64::from(u32::MAX - 1) {
            return Err(GeometryError::TooManyPages(physical_pages));
        }
        if logical_pages == 0 {
            return Err(GeometryError::NoLogicalPages);
        }
        Ok(Geometry {
            page_size_bytes: page,
            pages_per_block: ppb,
            blocks: blocks as u32,
            oob_bytes: self.oob_bytes,
            logical_pages: logical_pages.min(physical_pages) as u32,
            ppb_shift: ppb.is_power_of_two().then(|| ppb.trailing_zeros()),
        })
    }
}

impl Geometry {
    /// Start building a geometry (defaults: 4 KiB pages, 128 pages a block, 128 B OOB, 7% OP;
    /// the capacity must be set).
    pub fn builder() -> GeometryBuilder {
        GeometryBuilder::default()
    }

    /// Page size in bytes.
    pub fn page_size_bytes(&self) -> u32 {
        self.page_size_bytes
    }

    /// Pages in an erase block.
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block
    }

    /// Physical erase blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Out-of-band bytes per page.
    pub fn oob_bytes(&self) -> u32 {
        self.oob_bytes
    }

    /// Pages the host can address.
    pub fn logical_pages(&self) -> u32 {
        self.logical_pages
    }

    /// Pages on the device.
    pub fn physical_pages(&self) -> u32 {
        self.blocks * self.pages_per_block
    }

    /// Host-visible capacity in bytes.
    pub fn logical_bytes(&self) -> u64 {
        u64::from(self.logical_pages) * u64::from(self.page_size_bytes)
    }

    /// Raw capacity in bytes (without OOB).
    pub fn physical_bytes(&self) -> u64 {
        u64::from(self.physical_pages()) * u64::from(self.page_size_bytes)
    }

    /// Bytes in an erase block (without OOB).
    pub fn block_bytes(&self) -> u64 {
        u64::from(self.pages_per_block) * u64::from(self.page_size_bytes)
    }

    /// Effective over-provisioning: `physical / logical - 1`.
    pub fn over_provisioning(&self) -> f64 {
        f64::from(self.physical_pages()) / f64::from(self.logical_pages) - 1.0
    }

    /// Blocks the device has beyond those needed to hold every logical page.
    pub fn spare_blocks(&self) -> u32 {
        self.blocks - self.logical_pages.div_ceil(self.pages_per_block)
    }

    /// The block a physical page lies in.
    #[inline(always)]
    pub fn block_of(&self, ppn: Ppn) -> BlockId {
        match self.ppb_shift {
            Some(shift) => BlockId(ppn.0 >> shift),
            None => BlockId(ppn.0 / self.pages_per_block),
        }
    }

    /// The offset of a physical page inside its block.
    #[inline(always)]
    pub fn page_offset(&self, ppn: Ppn) -> u32 {
        match self.ppb_shift {
            Some(shift) => ppn.0 & ((1 << shift) - 1),
            None => ppn.0 % self.pages_per_block,
        }
    }

    /// The physical page at `offset` in `block`.
    #[inline(always)]
    pub fn ppn(&self, block: BlockId, offset: u32) -> Ppn {
        debug_assert!(offset < self.pages_per_block);
        Ppn(block.0 * self.pages_per_block + offset)
    }

    /// The first physical page of `block`.
    #[inline(always)]
    pub fn first_ppn(&self, block: BlockId) -> Ppn {
        Ppn(block.0 * self.pages_per_block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logical_capacity_derives_blocks() {
        let g = Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(256)
            .logical_bytes(16 << 30)
            .over_provisioning(0.07)
            .build()
            .expect("valid");
        assert_eq!(g.logical_pages(), 4 << 20);
        assert_eq!(
            g.blocks(),
            ((4u64 << 20) as f64 * 1.07 / 256.0).ceil() as u32
        );
        assert!((g.over_provisioning() - 0.07).abs() < 0.001);
        assert_eq!(g.logical_bytes(), 16 << 30);
    }

    #[test]
    fn block_count_derives_logical_pages() {
        let g = Geometry::builder()
            .pages_per_block(32)
            .page_size_bytes(512)
            .blocks(107)
            .build();
        let g = g.expect("valid");
        assert_eq!(g.physical_pages(), 3424);
        assert_eq!(g.logical_pages(), 3200);
        assert_eq!(g.spare_blocks(), 7);
    }

    #[test]
    fn page_arithmetic_with_and_without_power_of_two() {
        for ppb in [64, 96] {
            let g = Geometry::builder()
                .pages_per_block(ppb)
                .blocks(10)
                .build()
                .expect("valid");
            let ppn = g.ppn(BlockId(7), 5);
            assert_eq!(g.block_of(ppn), BlockId(7));
            assert_eq!(g.page_offset(ppn), 5);
            assert_eq!(g.first_ppn(BlockId(7)), Ppn(7 * ppb));
        }
    }

    #[test]
    fn bad_geometries_are_refused_with_the_field_named() {
        let base = || Geometry::builder().blocks(64);
        assert_eq!(
            base().page_size_bytes(1000).build(),
            Err(GeometryError::PageSize(1000))
        );
        assert_eq!(
            base().pages_per_block(1).build(),
            Err(GeometryError::PagesPerBlock(1))
        );
        assert!(matches!(
            base().oob_bytes(9000).build(),
            Err(GeometryError::OobSize { .. })
        ));
        assert!(matches!(
            base().over_provisioning(f64::NAN).build(),
            Err(GeometryError::OverProvisioning(_))
        ));
        assert_eq!(
            base().logical_bytes(4096).build(),
            Err(GeometryError::Capacity)
        );
        assert_eq!(Geometry::builder().build(), Err(GeometryError::Capacity));
        assert!(matches!(
            Geometry::builder().logical_bytes(1000).build(),
            Err(GeometryError::LogicalCapacity { .. })
        ));
        assert_eq!(
            Geometry::builder().blocks(1).build(),
            Err(GeometryError::TooFewBlocks(1))
        );
        assert!(matches!(
            Geometry::builder()
                .pages_per_block(65536)
                .blocks(70000)
                .build(),
            Err(GeometryError::TooManyPages(_))
        ));
        let message = base()
            .page_size_bytes(1000)
            .build()
            .expect_err("refused")
            .to_string();
        assert!(message.contains("page size 1000"), "{message}");
    }

    fn with_blocks(page: u32, ppb: u32, blocks: u32) -> GeometryBuilder {
        Geometry::builder()
            .page_size_bytes(page)
            .pages_per_block(ppb)
            .blocks(blocks)
    }

    /// Every getter against the figures it was built from, and each limit exactly at its
    /// edge (found by mutation testing: no test built a geometry at a limit, or asked for
    /// its page size, OOB or byte sizes).
    #[test]
    fn figures_and_limits_at_their_edges() {
        let g = with_blocks(2048, 64, 10)
            .oob_bytes(64)
            .build()
            .expect("valid");
        assert_eq!((g.page_size_bytes(), g.pages_per_block()), (2048, 64));
        assert_eq!(
            (g.oob_bytes(), g.blocks(), g.physical_pages()),
            (64, 10, 640)
        );
        assert_eq!(
            (g.physical_bytes(), g.block_bytes()),
            (640 * 2048, 64 * 2048)
        );
        // The OOB area may be as large as the page, not larger.
        assert!(with_blocks(512, 4, 4).oob_bytes(512).build().is_ok());
        assert_eq!(
            with_blocks(512, 4, 4).oob_bytes(513).build(),
            Err(GeometryError::OobSize {
                oob: 513,
                page: 512
            })
        );
        // Over-provisioning from 0 to 4, finite.
        for op in [0.0, 4.0] {
            assert!(
                with_blocks(512, 4, 8).over_provisioning(op).build().is_ok(),
                "{op}"
            );
        }
        for op in [4.5, 5.0, -0.1, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(
                    with_blocks(512, 4, 8).over_provisioning(op).build(),
                    Err(GeometryError::OverProvisioning(_))
                ),
                "{op}"
            );
        }
        // Two blocks are enough; one is not.
        assert!(
            with_blocks(512, 4, 2)
                .over_provisioning(0.0)
                .build()
                .is_ok()
        );
        assert_eq!(
            with_blocks(512, 4, 1).build(),
            Err(GeometryError::TooFewBlocks(1))
        );
        // 2^32 - 2 physical pages fit the 32-bit page numbers; 2^32 - 1 do not.
        let most = with_blocks(512, 2, u32::MAX / 2)
            .build()
            .expect("2^32 - 2 pages");
        assert_eq!(most.physical_pages(), u32::MAX - 1);
        assert_eq!(
            with_blocks(512, 3, u32::MAX / 3).build(),
            Err(GeometryError::TooManyPages(u64::from(u32::MAX)))
        );
    }

    /// A logical capacity of whole blocks with no over-provisioning takes exactly those
    /// blocks (the rounding's epsilon is taken off, not added: found by mutation testing).
    #[test]
    fn whole_blocks_without_over_provisioning_are_exact() {
        for blocks in [2u64, 3, 100, 4096] {
            let g = Geometry::builder()
                .page_size_bytes(4096)
                .pages_per_block(128)
                .logical_bytes(blocks * 128 * 4096)
                .over_provisioning(0.0)
                .build()
                .expect("valid");
            assert_eq!(u64::from(g.blocks()), blocks);
        }
    }
}
