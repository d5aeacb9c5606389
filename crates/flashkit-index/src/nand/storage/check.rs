//! The storage manager's invariants, checked with uncounted peeks.

use super::{Loc, NodeStore, Placement};
use crate::nand::page::{PageHeader, PageKind};
use flashkit_core::BlockId;
use flashkit_device::FlashDevice;

impl<P: Placement> NodeStore<P> {
    /// Check the RAM bookkeeping against itself and against flash; the first violation.
    pub fn check(&self) -> Result<(), String> {
        let ppb = self.dev.geometry().pages_per_block();
        let mut free = vec![false; self.ram.blocks.len()];
        for &b in &self.ram.free {
            if std::mem::replace(&mut free[b.index()], true) {
                return Err(format!("{b} is twice in the free list"));
            }
        }
        for (b, info) in self.ram.blocks.iter().enumerate() {
            let block = BlockId(b as u32);
            let status = self.dev.block_status(block);
            if info.in_use == free[b] {
                return Err(format!(
                    "{block}: in use {} but free-listed {}",
                    info.in_use, free[b]
                ));
            }
            if status.programmed_pages as usize != info.pages.len() {
                return Err(format!(
                    "{block}: {} pages programmed, RAM says {}",
                    status.programmed_pages,
                    info.pages.len()
                ));
            }
            self.check_block(block, info, ppb)?;
        }
        for (i, &loc) in self.ram.map.iter().enumerate() {
            if loc == Loc::NONE {
                continue;
            }
            let info = &self.ram.blocks[loc.block as usize];
            let id = crate::nand::NodeId(i as u32);
            if !info.in_use || info.pages.get(loc.page as usize) != Some(&(PageKind::Node, id)) {
                return Err(format!(
                    "{id} maps to {} page {}, which does not hold its image",
                    BlockId(loc.block),
                    loc.page
                ));
            }
        }
        self.check_sets()
    }

    fn check_block(&self, block: BlockId, info: &super::BlockInfo, ppb: u32) -> Result<(), String> {
        let data = info.pages.iter().filter(|p| p.0 == PageKind::Node).count() as u32;
        let logs = info.pages.len() as u32 - data;
        if (data, logs) != (info.data_pages, info.log_pages) {
            return Err(format!(
                "{block}: {data} data and {logs} log pages, counted {} and {}",
                info.data_pages, info.log_pages
            ));
        }
        if info.log_pages > info.log_area || info.data_pages + info.log_area > ppb {
            return Err(format!(
                "{block}: {} data pages and a log area of {} ({} used) in {ppb} pages",
                info.data_pages, info.log_area, info.log_pages
            ));
        }
        let mut live = 0;
        for (page, &(kind, node)) in info.pages.iter().enumerate() {
            let here = Loc {
                block: block.0,
                page: page as u32,
            };
            if kind == PageKind::Node && self.loc(node) == here {
                live += 1;
            }
            let ppn = self.dev.geometry().ppn(block, page as u32);
            let bytes = self
                .dev
                .peek_page(ppn)
                .bytes()
                .ok_or_else(|| format!("{block} page {page} is erased"))?;
            let (header, _) =
                PageHeader::read_page(bytes).map_err(|e| format!("{block} page {page}: {e}"))?;
            if (header.kind, header.node, header.tag) != (kind, node, info.tag) {
                return Err(format!(
                    "{block} page {page}: header {header:?}, RAM {kind:?} of {node}, tag {:?}",
                    info.tag
                ));
            }
        }
        if live != info.live {
            return Err(format!(
                "{block}: {live} live images, counted {}",
                info.live
            ));
        }
        Ok(())
    }

    fn check_sets(&self) -> Result<(), String> {
        let mut members = 0;
        for (&id, set) in &self.ram.sets {
            for &b in &set.blocks {
                let info = &self.ram.blocks[b.index()];
                if !info.in_use || info.tag.set != id {
                    return Err(format!("set {id} lists {b}, tagged {:?}", info.tag));
                }
                members += 1;
            }
        }
        let in_use = self.ram.blocks.iter().filter(|b| b.in_use).count();
        if members != in_use {
            return Err(format!("{in_use} blocks in use but {members} in sets"));
        }
        if let Some(open) = self.ram.open
            && !self.ram.sets.contains_key(&open)
        {
            return Err(format!("the open set {open} does not exist"));
        }
        Ok(())
    }
}
