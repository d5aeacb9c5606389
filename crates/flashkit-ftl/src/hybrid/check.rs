//! Invariants of the shared state of the block-mapped and log-block FTLs, checked against
//! the device: block roles and the free list, data blocks and their write pointers, log
//! blocks and their pages' OOB stamps, the per-block lists of log entries, and the rule that
//! keeps in-place writes safe (every linked log entry lies below its data block's write
//! pointer, so no in-place write can overtake it).

use super::log::{Entry, NONE};
use super::machinery::{Core, Role};
use crate::{InvariantViolation, ensure_invariant};
use flashkit_core::{BlockId, Lpn, Ppn};
use flashkit_device::{FlashDevice, PageRead};

impl<D: FlashDevice> Core<D> {
    /// Check every invariant of the shared state.
    pub fn check(&self) -> Result<(), InvariantViolation> {
        self.check_roles()?;
        self.check_data_blocks()?;
        self.check_log_blocks()?;
        self.check_lists()?;
        let erases = self.device.counters().erases.total();
        let counted = self.counters.data_erases + self.counters.log_erases;
        ensure_invariant!(
            erases == counted,
            "the device counts {erases} erases, the merges {counted}"
        );
        Ok(())
    }

    fn check_roles(&self) -> Result<(), InvariantViolation> {
        let mut on_free_list = vec![false; self.roles.len()];
        for (erase_count, block) in self.free.sorted() {
            ensure_invariant!(
                !on_free_list[block.index()],
                "{block} is on the free list twice"
            );
            on_free_list[block.index()] = true;
            let actual = self.device.block_status(block).erase_count;
            ensure_invariant!(
                erase_count == actual,
                "{block} is on the free list with {erase_count} erases, but has {actual}"
            );
        }
        for (b, &role) in self.roles.iter().enumerate() {
            let block = BlockId(b as u32);
            let status = self.device.block_status(block);
            ensure_invariant!(
                (role == Role::Free) == on_free_list[b],
                "{block} is {role:?} but {} the free list",
                if on_free_list[b] { "on" } else { "not on" }
            );
            ensure_invariant!(
                status.bad == (role == Role::Retired),
                "{block} is {role:?} but the device says bad = {}",
                status.bad
            );
            match role {
                Role::Free => ensure_invariant!(
                    status.programmed_pages == 0,
                    "free {block} has {} programmed pages",
                    status.programmed_pages
                ),
                Role::Data(lbn) => ensure_invariant!(
                    self.block_map.get(lbn as usize) == Some(&block.0),
                    "{block} is the data block of lbn {lbn}, which maps elsewhere"
                ),
                Role::Log(slot) => ensure_invariant!(
                    self.logs.slots().get(slot as usize).and_then(|s| s.block) == Some(block),
                    "{block} is the log block of slot {slot}, which holds another block"
                ),
                Role::Retired => {}
            }
        }
        Ok(())
    }

    fn check_data_blocks(&self) -> Result<(), InvariantViolation> {
        for (lbn, &pbn) in self.block_map.iter().enumerate() {
            let lbn = lbn as u32;
            let next = self.data_next[lbn as usize];
            let first = lbn * self.ppb;
            if pbn == NONE {
                ensure_invariant!(next == 0, "unmapped lbn {lbn} has write pointer {next}");
            } else {
                let block = BlockId(pbn);
                ensure_invariant!(
                    self.roles[block.index()] == Role::Data(lbn),
                    "lbn {lbn} maps to {block}, which is {:?}",
                    self.roles[block.index()]
                );
                let programmed = self.device.block_status(block).programmed_pages;
                ensure_invariant!(
                    programmed == next,
                    "lbn {lbn}: write pointer {next}, but {block} has {programmed} pages programmed"
                );
            }
            for offset in 0..self.ppb {
                let lpn = first + offset;
                if !self.has_data(lpn) {
                    continue;
                }
                ensure_invariant!(
                    offset < next,
                    "lpn {lpn} has data at offset {offset}, beyond lbn {lbn}'s write pointer {next}"
                );
                self.check_stamp(Lpn(lpn), self.geometry.ppn(BlockId(pbn), offset))?;
            }
        }
        Ok(())
    }

    fn check_stamp(&self, lpn: Lpn, ppn: Ppn) -> Result<(), InvariantViolation> {
        match self.device.peek(ppn) {
            PageRead::Programmed(Some(stamp)) => ensure_invariant!(
                stamp.lpn == lpn,
                "the OOB of {ppn} names {} but the page holds {lpn}",
                stamp.lpn
            ),
            PageRead::Programmed(None) => {}
            PageRead::Erased => {
                return Err(InvariantViolation(format!(
                    "{lpn} is held by {ppn}, which is erased"
                )));
            }
        }
        Ok(())
    }

    fn check_log_blocks(&self) -> Result<(), InvariantViolation> {
        let ppb = self.ppb;
        let mut linked = 0u64;
        for (i, slot) in self.logs.slots().iter().enumerate() {
            let i = i as u32;
            let pages = i * ppb..(i + 1) * ppb;
            let Some(block) = slot.block else {
                ensure_invariant!(
                    slot.written == 0 && pages.clone().all(|p| self.logs.state(p) == Entry::Empty),
                    "unused log slot {i} has pages"
                );
                continue;
            };
            ensure_invariant!(
                self.roles[block.index()] == Role::Log(i),
                "log slot {i} holds {block}, which is {:?}",
                self.roles[block.index()]
            );
            let programmed = self.device.block_status(block).programmed_pages;
            ensure_invariant!(
                programmed == slot.written,
                "log slot {i}: {} pages written, but {block} has {programmed} programmed",
                slot.written
            );
            for page in pages {
                let offset = page - i * ppb;
                let state = self.logs.state(page);
                ensure_invariant!(
                    (state == Entry::Empty) == (offset >= slot.written),
                    "log slot {i}: page {offset} is {state:?} with {} pages written",
                    slot.written
                );
                if state == Entry::Linked {
                    linked += 1;
                    let lpn = self.logs.lpn(page);
                    self.check_stamp(Lpn(lpn), self.geometry.ppn(block, offset))?;
                }
            }
        }
        // With the lists' count checked against the same counter, every page marked
        // linked is on a list: a linked page on none would survive every list walk.
        ensure_invariant!(
            linked == self.logs.linked(),
            "{linked} log pages are marked linked but {} are counted",
            self.logs.linked()
        );
        Ok(())
    }

    /// Every linked entry is on its block's list exactly once, the lists are consistent in
    /// both directions and newest first, and every entry lies below its data block's write
    /// pointer.
    fn check_lists(&self) -> Result<(), InvariantViolation> {
        let mut listed = 0u64;
        let limit = self.logs.linked() + 1;
        for lbn in 0..self.logical_blocks() {
            let mut page = self.logs.head(lbn);
            let mut newer = NONE;
            let mut newer_seq = u64::MAX;
            while page != NONE {
                listed += 1;
                ensure_invariant!(listed <= limit, "the list of lbn {lbn} has a cycle");
                let lpn = self.logs.lpn(page);
                ensure_invariant!(
                    self.logs.state(page) == Entry::Linked && lpn / self.ppb == lbn,
                    "log page {page} on lbn {lbn}'s list is {:?} and holds lpn {lpn}",
                    self.logs.state(page)
                );
                ensure_invariant!(
                    self.logs.newer(page) == newer,
                    "log page {page}: back link {} where {newer} was expected",
                    self.logs.newer(page)
                );
                let offset = lpn % self.ppb;
                ensure_invariant!(
                    self.block_map[lbn as usize] != NONE && offset < self.data_next[lbn as usize],
                    "log copy of lpn {lpn} lies at or beyond lbn {lbn}'s write pointer {}",
                    self.data_next[lbn as usize]
                );
                let ppn = self.logs.ppn(page, &self.geometry);
                if let PageRead::Programmed(Some(stamp)) = self.device.peek(ppn) {
                    ensure_invariant!(
                        stamp.seq <= newer_seq,
                        "lbn {lbn}'s log list is not newest first at log page {page}"
                    );
                    newer_seq = stamp.seq;
                }
                newer = page;
                page = self.logs.older(page);
            }
        }
        ensure_invariant!(
            listed == self.logs.linked(),
            "{listed} log entries are on lists but {} are linked",
            self.logs.linked()
        );
        Ok(())
    }
}
