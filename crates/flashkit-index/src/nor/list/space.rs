//! Space management (section 0.4.2): the block-level policy picks a random block, the
//! object-level policy looks for free space from offset ceil(B(1 - p^x)) for a level-x
//! object, and a full block is collected by shifting its live objects to the turnstile's
//! spare block (same offsets, so every soft pointer still finds them) and erasing it into
//! the new spare.

use super::layout::{self, Contents, Kind, State, encode_object};
use super::{Engine, Frame, Handle, Move};
use crate::nor::IndexError;
use flashkit_core::Cause;
use rand::Rng;

/// Merges queued by garbage collection are bounded so that one collection cannot make a
/// single operation arbitrarily long.
const MERGE_QUEUE_MAX: usize = 256;

impl Engine {
    /// The object-level start offset for a level-`level` object.
    fn start_offset(&self, level: u8) -> u32 {
        let b = f64::from(self.frames_per_block);
        let start = (b * (1.0 - self.cfg.p.powi(i32::from(level)))).ceil() as u32;
        start.min(self.frames_per_block - 1)
    }

    /// The first free frame of `block` from `start`, circling back to the block's start.
    fn scan_free(&mut self, block: u32, start: u32) -> Option<Frame> {
        let b = self.frames_per_block;
        for i in 0..b {
            let frame = Frame {
                block,
                offset: ((start + i) % b) as u16,
            };
            if self.state(frame) == State::Free {
                return Some(frame);
            }
        }
        None
    }

    /// A random non-spare block.
    fn random_block(&mut self) -> u32 {
        let t = self.cfg.turnstile_blocks;
        let r = self.alloc_rng.random_range(0..self.turnstiles * (t - 1));
        let turnstile = r / (t - 1);
        let mut i = r % (t - 1);
        if i >= self.spare[turnstile as usize] {
            i += 1;
        }
        turnstile * t + i
    }

    /// A free frame for a level-`level` object, collecting garbage when the chosen block is
    /// full.
    pub(super) fn alloc(&mut self, level: u8) -> Result<Frame, IndexError> {
        let start = self.start_offset(level);
        let attempts = 4 * self.turnstiles * (self.cfg.turnstile_blocks - 1);
        for _ in 0..attempts {
            let block = self.random_block();
            if let Some(frame) = self.scan_free(block, start) {
                return Ok(frame);
            }
            let receiver = self.collect(block)?;
            if let Some(frame) = self.scan_free(receiver, start) {
                return Ok(frame);
            }
        }
        Err(IndexError::OutOfSpace {
            structure: self.structure,
            detail: format!(
                "no free frame for a level-{level} object after {attempts} random blocks and their collection"
            ),
        })
    }

    /// Collect `victim`: shift its live objects, compacted, to the spare block at the same
    /// offsets; erase it into the new spare. Returns the block that received the objects.
    pub(super) fn collect(&mut self, victim: u32) -> Result<u32, IndexError> {
        let before = self.cause;
        self.cause = Cause::Gc;
        let result = self.collect_inner(victim);
        self.cause = before;
        result
    }

    fn collect_inner(&mut self, victim: u32) -> Result<u32, IndexError> {
        let t = self.cfg.turnstile_blocks;
        let turnstile = victim / t;
        let receiver = turnstile * t + self.spare[turnstile as usize];
        for offset in 0..self.frames_per_block as u16 {
            let from = Frame {
                block: victim,
                offset,
            };
            if !matches!(self.state(from), State::Live { .. }) {
                continue;
            }
            let full = self.read_full(from);
            let kind = full
                .kind
                .expect("invariant: a live frame reads as an object");
            let contents = Contents {
                pairs: full.live_pairs(),
                level: full.level,
                next: full.next.to_vec(),
            };
            // A data object with fewer than n/2 keys is poorly used: its smallest key is
            // queued for a lazy merge. (The head and tail hold no key; a soft list's n/2
            // is 0.)
            let keys = contents.pairs.len() as u32;
            if keys > 0 && keys < self.cfg.key_limit / 2 && self.merge_queue.len() < MERGE_QUEUE_MAX
            {
                self.merge_queue.push(contents.pairs[0].0);
            }
            self.program_object(
                Frame {
                    block: receiver,
                    offset,
                },
                kind,
                &contents,
            )?;
            self.counts.gc_objects_moved += 1;
        }
        let header = self
            .nor
            .geometry()
            .block_start(flashkit_core::BlockId(receiver));
        self.nor.program(header, layout::BLOCK_IN_USE, Cause::Gc)?;
        self.nor.erase(flashkit_core::BlockId(victim), Cause::Gc)?;
        self.spare[turnstile as usize] = victim - turnstile * t;
        self.moves.push(Move::Block {
            from: victim,
            to: receiver,
        });
        self.counts.gc_runs += 1;
        Ok(receiver)
    }

    /// Program an encoded object into a free frame, skipping words that stay erased (a
    /// driver never spends a program cycle on an all-ones word).
    pub(super) fn program_object(
        &mut self,
        frame: Frame,
        kind: Kind,
        contents: &Contents,
    ) -> Result<(), IndexError> {
        let mut buf = std::mem::take(&mut self.buf);
        encode_object(&self.lay, kind, contents, &mut buf);
        let result = self.nor.program_image(self.addr(frame), &buf, self.cause);
        self.buf = buf;
        Ok(result?)
    }

    /// Allocate and write a new object; its handle.
    pub(super) fn write_new(
        &mut self,
        kind: Kind,
        contents: &Contents,
    ) -> Result<Handle, IndexError> {
        let frame = self.alloc(contents.level)?;
        self.program_object(frame, kind, contents)?;
        self.counts.objects_written += 1;
        Ok(self.handle(frame))
    }

    /// Mark an object obsolete.
    pub(super) fn invalidate(&mut self, handle: Handle) -> Result<(), IndexError> {
        let frame = self.resolve(handle);
        let word = self.read_word(frame, 0);
        self.nor
            .program(self.addr(frame), word & !layout::LIVE, self.cause)?;
        Ok(())
    }
}
