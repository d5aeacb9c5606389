//! The page FTL's invariant checks (`Verify::check_invariants`): block states against the free
//! list and the frontiers, valid counts against the reverse map, every valid page against the
//! mapping and its OOB stamp. Kept apart from the FTL's hot paths so that `mod.rs` reads as
//! the algorithm.

use super::*;

impl<D: FlashDevice, M: Mapping> PageFtl<D, M> {
    /// Block kinds, free list, frontiers and valid counts against the device and the bits.
    pub(super) fn check_blocks(&self) -> Result<(), InvariantViolation> {
        let ppb = self.geometry.pages_per_block();
        let mut on_free_list = vec![false; self.geometry.blocks() as usize];
        for &block in &self.free {
            ensure_invariant!(
                !on_free_list[block.index()],
                "{block} is on the free list twice"
            );
            on_free_list[block.index()] = true;
        }
        // Each frontier writes into an active block of its own, at most full.
        let frontiers = [("host", self.host), ("gc", self.gc), ("wear", self.wear)];
        for (name, frontier) in frontiers {
            let Some(block) = frontier.block else {
                continue;
            };
            ensure_invariant!(
                self.blocks.kind(block) == BlockKind::Active && frontier.next <= ppb,
                "the {name} frontier is at page {} of {block}, which is {:?}",
                frontier.next,
                self.blocks.kind(block)
            );
            ensure_invariant!(
                frontiers
                    .iter()
                    .filter(|(_, f)| f.block == Some(block))
                    .count()
                    == 1,
                "{block} is the frontier of more than one writer"
            );
        }
        for b in 0..self.geometry.blocks() {
            let block = BlockId(b);
            let kind = self.blocks.kind(block);
            let status = self.device.block_status(block);
            ensure_invariant!(
                (kind == BlockKind::Free) == on_free_list[block.index()],
                "{block} is {kind:?} but {} the free list",
                if on_free_list[block.index()] {
                    "on"
                } else {
                    "not on"
                }
            );
            ensure_invariant!(
                status.erase_count == self.blocks.erase_count(block),
                "{block}: the FTL counts {} erases, the device {}",
                self.blocks.erase_count(block),
                status.erase_count
            );
            let expected_programmed = match kind {
                BlockKind::Free | BlockKind::Retired => 0,
                BlockKind::Sealed | BlockKind::Victim => ppb,
                BlockKind::Active => self.frontier_of(block).ok_or_else(|| {
                    InvariantViolation(format!("{block} is active but no frontier owns it"))
                })?,
            };
            ensure_invariant!(
                status.programmed_pages == expected_programmed
                    && status.bad == (kind == BlockKind::Retired),
                "{block} is {kind:?} but the device has {} pages programmed (bad: {})",
                status.programmed_pages,
                status.bad
            );
            let first = self.geometry.first_ppn(block).0;
            let derived = (first..first + ppb)
                .filter(|&p| self.is_valid_by_mapping(Ppn(p)))
                .count() as u32;
            if M::LOOKUP_SEARCHES {
                for p in first..first + ppb {
                    let by_mapping = self.is_valid_by_mapping(Ppn(p));
                    ensure_invariant!(
                        self.valid.get(p) == by_mapping,
                        "{}: the validity bitmap says {}, the mapping says {by_mapping}",
                        Ppn(p),
                        self.valid.get(p)
                    );
                }
            }
            ensure_invariant!(
                derived == self.blocks.valid(block),
                "{block}: {} valid pages counted, but {derived} pages are valid by the reverse map",
                self.blocks.valid(block)
            );
        }
        Ok(())
    }

    fn frontier_of(&self, block: BlockId) -> Option<u32> {
        [self.host, self.gc, self.wear]
            .into_iter()
            .find(|f| f.block == Some(block))
            .map(|f| f.next)
    }

    /// Every mapped logical page against the reverse map, the device and its OOB area, and
    /// the count of mapped pages.
    pub(super) fn check_pages(&self) -> Result<(), InvariantViolation> {
        let mut mapped = 0u64;
        let mut failure = None;
        let everything = PageRange::new(Lpn(0), self.geometry.logical_pages());
        self.mapping.translate(everything, &mut |run| {
            let Some(first) = run.ppn else { return };
            for i in 0..run.len {
                mapped += 1;
                if failure.is_none() {
                    failure = self
                        .check_mapped(Lpn(run.lpn.0 + i), Ppn(first.0 + i))
                        .err();
                }
            }
        });
        if let Some(violation) = failure {
            return Err(violation);
        }
        ensure_invariant!(
            mapped == self.mapping.mapped_pages(),
            "{mapped} logical pages are mapped but the mapping counts {}",
            self.mapping.mapped_pages()
        );
        Ok(())
    }

    fn check_mapped(&self, lpn: Lpn, ppn: Ppn) -> Result<(), InvariantViolation> {
        ensure_invariant!(
            ppn.0 < self.geometry.physical_pages(),
            "{lpn} maps to {ppn}, beyond the device"
        );
        let reverse = self.reverse[ppn.index()];
        ensure_invariant!(
            reverse == lpn.0,
            "{lpn} maps to {ppn}, whose reverse map names lpn {reverse}"
        );
        let kind = self.blocks.kind(self.geometry.block_of(ppn));
        ensure_invariant!(
            matches!(kind, BlockKind::Sealed | BlockKind::Active),
            "{lpn} maps to {ppn} in a {kind:?} block"
        );
        match self.device.peek(ppn) {
            PageRead::Programmed(Some(stamp)) => ensure_invariant!(
                stamp.lpn == lpn,
                "the OOB of {ppn} names {} but the page holds {lpn}",
                stamp.lpn
            ),
            PageRead::Programmed(None) => {}
            PageRead::Erased => {
                return Err(InvariantViolation(format!(
                    "{lpn} maps to {ppn}, which is erased"
                )));
            }
        }
        Ok(())
    }
}
