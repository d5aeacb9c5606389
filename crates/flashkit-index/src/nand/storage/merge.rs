//! Merging a block whose log area is full (In-Page Logging's merge, GRR paper 2.2 and
//! 3.5.2): read the block's log pages and its live nodes' images, write the up-to-date images
//! to one fresh block of the same set (or, when the policy spreads, round robin over two),
//! erase the old block.
//!
//! What it is not: the choice of when to merge or how to lay the nodes out; the
//! [`Placement`] policy makes both (`on_log_full`, `merge_shape`), this carries them out.
//!
//! Key decision: a log flush that triggered the merge does not become a log page first; its
//! records go straight into the node's new image (`pending`), saving a program.

use super::{BlockTag, Loc, NodeStore, Overflow, PageKind, Placement};
use crate::nand::log::apply_all;
use crate::nand::node::Node;
use crate::nand::{NandIndexError, NodeId};
use flashkit_core::{BlockId, Cause};
use flashkit_device::FlashDevice;

impl<P: Placement> NodeStore<P> {
    /// Merge a block: read its log pages and its live nodes' images, write the up-to-date
    /// images to fresh blocks of the same set, erase the old block.
    pub(super) fn merge(
        &mut self,
        block: u32,
        reason: Overflow,
        pending: Option<(NodeId, &[u8])>,
    ) -> Result<(), NandIndexError> {
        let shape = self
            .policy
            .merge_shape(&self.view(block), reason, &self.store_view());
        let spread = shape.spread && self.ram.free.len() >= 2;
        if self.ram.free.is_empty() {
            return Err(NandIndexError::OutOfSpace {
                detail: format!(
                    "merging {} needs a free block; all {} are in use",
                    BlockId(block),
                    self.ram.blocks.len()
                ),
            });
        }
        self.collect_logs(block)?;
        let old = self.ram.blocks[block as usize].tag;
        let mut targets = [BlockId(u32::MAX); 2];
        targets[0] = self.take_free(BlockTag {
            base_log_pages: shape.log_pages as u16,
            ..old
        });
        if spread {
            let position = self
                .ram
                .sets
                .get(&old.set)
                .map_or(0, |s| s.blocks.len() as u16);
            targets[1] = self.take_free(BlockTag {
                position,
                base_log_pages: shape.log_pages as u16,
                ..old
            });
        }
        self.rewrite_live(block, &targets[..1 + usize::from(spread)], pending)?;
        self.dev.erase(BlockId(block), Cause::Gc)?;
        self.reset_block(BlockId(block));
        self.ram.free.push_back(BlockId(block));
        if let Some(set) = self.ram.sets.get_mut(&old.set) {
            for b in set.blocks.iter_mut() {
                if b.0 == block {
                    *b = targets[0];
                }
            }
            if spread {
                set.blocks.push(targets[1]);
            }
        }
        self.stats.merges += 1;
        match reason {
            Overflow::MergeForRoom => {
                self.stats.merges_for_room += 1;
                self.ram.since_set.merges_for_room += 1;
            }
            _ => {
                self.stats.merges_at_limit += 1;
                self.ram.since_set.merges_at_limit += 1;
            }
        }
        self.stats.spread_merges += u64::from(spread);
        Ok(())
    }

    /// Read every log page of `block` (merge reads) into `merge_logs`, one span per page.
    fn collect_logs(&mut self, block: u32) -> Result<(), NandIndexError> {
        let mut logs = std::mem::take(&mut self.merge_logs);
        let mut spans = std::mem::take(&mut self.merge_spans);
        logs.clear();
        spans.clear();
        let pages = self.ram.blocks[block as usize].pages.len() as u32;
        let mut result = Ok(());
        for page in 0..pages {
            if self.ram.blocks[block as usize].pages[page as usize].0 != PageKind::Log {
                continue;
            }
            match self.read_checked(block, page, Cause::Gc) {
                Ok((header, payload)) => {
                    let start = logs.len();
                    logs.extend_from_slice(payload);
                    spans.push((header.node, start, logs.len()));
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.merge_logs = logs;
        self.merge_spans = spans;
        result
    }

    /// Rewrite the live nodes of `block` (page order) round robin into `targets`.
    fn rewrite_live(
        &mut self,
        block: u32,
        targets: &[BlockId],
        pending: Option<(NodeId, &[u8])>,
    ) -> Result<(), NandIndexError> {
        let pages = self.ram.blocks[block as usize].pages.clone();
        let mut node = std::mem::take(&mut self.scratch);
        let mut payload = std::mem::take(&mut self.payload);
        let mut written = 0usize;
        let mut result = Ok(());
        for (page, &(kind, id)) in pages.iter().enumerate() {
            let here = Loc {
                block,
                page: page as u32,
            };
            if kind != PageKind::Node || self.loc(id) != here {
                continue;
            }
            let target = targets[written % targets.len()];
            written += 1;
            result = self.rewrite_one(here, id, &mut node, &mut payload, target, pending);
            if result.is_err() {
                break;
            }
        }
        self.scratch = node;
        self.payload = payload;
        result
    }

    fn rewrite_one(
        &mut self,
        here: Loc,
        id: NodeId,
        node: &mut Node,
        payload: &mut Vec<u8>,
        target: BlockId,
        pending: Option<(NodeId, &[u8])>,
    ) -> Result<(), NandIndexError> {
        let corrupt = |page: u32, detail: String| NandIndexError::Corrupt {
            block: BlockId(here.block),
            page,
            detail,
        };
        let (_, image) = self.read_checked(here.block, here.page, Cause::Gc)?;
        node.decode(image)
            .map_err(|d| corrupt(here.page, format!("node image: {d}")))?;
        for &(owner, start, end) in &self.merge_spans {
            if owner == id {
                apply_all(&self.merge_logs[start..end], node)
                    .map_err(|d| corrupt(here.page, format!("log of {id}: {d}")))?;
            }
        }
        if let Some((owner, records)) = pending
            && owner == id
        {
            apply_all(records, node)
                .map_err(|d| corrupt(here.page, format!("pending log of {id}: {d}")))?;
        }
        payload.clear();
        node.encode(payload);
        let page = self.program(target.0, PageKind::Node, id, payload, Cause::Gc)?;
        self.ram.blocks[here.block as usize].live -= 1;
        self.ram.blocks[target.index()].live += 1;
        self.set_loc(
            id,
            Loc {
                block: target.0,
                page,
            },
        );
        self.stats.merge_page_copies += 1;
        Ok(())
    }
}
