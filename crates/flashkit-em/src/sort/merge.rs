//! One merge of sorted runs into one, on one thread or split by key range over several.
//!
//! A parallel merge cuts the key space at splitters chosen from the runs' block index (the
//! first key of every `B_r` block, kept while the runs were written): part `p` merges, from
//! every run, the records with keys in `[s_{p-1}, s_p)`. Where a splitter falls inside a
//! block, that block is read once, before the parts start, and handed to every part that
//! needs it; so every block of every run is still read exactly once, and the output blocks
//! where two parts meet are assembled from both parts' pieces and written once. The volumes
//! and I/O counts are those of the serial merge, only the order of the transfers differs.
//! Equal keys never straddle a splitter, so the merge stays stable (ties go to the lower run
//! within a part, as in the serial loser tree).
//!
//! What this is not: a merge whose parts are guaranteed equal. A splitter is a block's first
//! key, so a part's size is right to within one block per run, and an input of one repeated
//! key puts everything in one part (still correct, only serial).

use super::exec::{Level, check_sorted, padded};
use super::loser::LoserTree;
use super::plan::{Merge, Plan};
use crate::EmError;
use crate::io::AlignedBuf;
use crate::io::worker::Pipeline;
use crate::record::{Checksum, Record};
use flashkit_core::Progress;
use std::collections::VecDeque;

/// What a merge wrote: the checksum of its output (whose order was checked block by block)
/// and the output run's block index (the first key of every `B_r` block).
pub(super) struct Merged {
    pub checksum: Checksum,
    pub block_keys: Vec<u64>,
    /// The parts of the merge that had records to merge (1: merged whole).
    pub parts: usize,
}

/// Most `B_r` blocks an input reads ahead of the one being merged.
const MAX_DEPTH: u64 = 8;

/// How many parts a merge of `count` runs on the device may split into: at most `threads`,
/// and no more than the memory budget holds. The serial merge keeps two `B_r` buffers per
/// input and two `B_w` output buffers; a part also holds, for each input, the block a
/// splitter fell in. Resident runs need no buffers, but their memory is not the merge's.
pub(super) fn parts_for(plan: &Plan, count: u64, threads: usize) -> usize {
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let per_part = 3 * count * br + 2 * bw;
    let fit = (plan.merge_memory() / per_part).max(1);
    (threads.max(1) as u64).min(fit) as usize
}

/// How many `B_r` buffers each input of a merge keeps (the block being merged and those
/// read ahead): two, the plan's budget, or up to [`MAX_DEPTH`] while `parts` parts' buffers
/// (and, split in parts, a splitter's block per input) still fit in memory. Reading further
/// ahead keeps a part from waiting on its next block while the I/O worker writes another
/// part's output block.
pub(super) fn depth_for(plan: &Plan, count: u64, parts: usize) -> u64 {
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let per_depth = parts as u64 * count * br;
    let outputs = parts as u64 * 2 * bw;
    let fit = plan.merge_memory().saturating_sub(outputs) / per_depth.max(1);
    let splitter_blocks = u64::from(parts > 1);
    fit.saturating_sub(splitter_blocks).clamp(2, MAX_DEPTH)
}

/// The range of one run a part merges: records `lo..hi` of the run, and the blocks the
/// coordinator already read that this range touches (none for a resident run).
struct Slice {
    lo: u64,
    hi: u64,
    preloaded: Vec<(u64, AlignedBuf)>,
}

/// A part: a slice of every run, and where its output starts in the merged run.
struct Part {
    slices: Vec<Slice>,
    out_lo: u64,
    out_hi: u64,
}

/// An output block that two or more parts share: a piece from each, assembled afterwards.
struct Piece {
    block: u64,
    from: usize,
    to: usize,
    buf: AlignedBuf,
}

/// What a part produced.
struct PartOutput {
    checksum: Checksum,
    first_key: Option<u64>,
    last_key: Option<u64>,
    pieces: Vec<Piece>,
    block_keys: Vec<u64>,
}

/// Tags at or above this are the coordinator's reads of splitter blocks.
const SPLIT_TAG: u64 = 1 << 62;

/// Merge `merge.count` runs of `from` into one run at `target` (offset, records), on as many
/// parts as `pipes` has pipelines (each on its own thread when there are several).
pub(super) fn merge_runs<R: Record>(
    pipes: &mut [Pipeline],
    plan: &Plan,
    from: &Level,
    merge: Merge,
    target: (u64, u64),
    progress: &dyn Progress,
) -> Result<Merged, EmError> {
    let rb = plan.record_bytes;
    let per_block = plan.sizes.read_bytes / rb;
    let runs: Vec<usize> = (merge.first..merge.first + merge.count)
        .map(|r| r as usize)
        .collect();
    let wanted = pipes.len();
    let parts = plan_parts::<R>(&mut pipes[0], wanted, plan, from, &runs, per_block)?;
    debug_assert_eq!(parts.last().map(|p| p.out_hi), Some(target.1));
    let job = Job {
        plan,
        from,
        runs: &runs,
        target,
        parts: wanted,
        progress,
    };
    // Parts with records to merge (a splitter below every key leaves the first one empty).
    let split = parts.iter().filter(|p| p.out_hi > p.out_lo).count();
    let outputs: Vec<Result<PartOutput, EmError>> = if parts.len() == 1 {
        let part = parts.into_iter().next().expect("invariant: one part");
        vec![merge_part::<R>(&mut pipes[0], job, part)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = pipes
                .iter_mut()
                .zip(parts)
                .map(|(pipe, part)| scope.spawn(move || merge_part::<R>(pipe, job, part)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("invariant: a merge part does not panic"))
                .collect()
        })
    };
    let mut checksum = Checksum::default();
    let mut block_keys = Vec::new();
    let mut pieces = Vec::new();
    let mut last_key: Option<u64> = None;
    for output in outputs {
        let output = output?;
        if let (Some(last), Some(first)) = (last_key, output.first_key)
            && first < last
        {
            return Err(EmError::Verify(format!(
                "a merge part starts with key {first} after the previous part ended with {last}"
            )));
        }
        last_key = output.last_key.or(last_key);
        checksum.merge(&output.checksum);
        block_keys.extend(output.block_keys);
        pieces.extend(output.pieces);
    }
    write_shared_blocks::<R>(&mut pipes[0], plan, pieces, target)?;
    for pipe in pipes.iter_mut() {
        pipe.drain()?;
    }
    for &run in runs.iter().filter(|&&r| from.memory[r].is_none()) {
        pipes[0].discard(
            from.offsets[run],
            padded(from.lengths[run] * rb, plan.sizes.write_bytes),
        );
    }
    debug_assert_eq!(checksum.count, target.1);
    Ok(Merged {
        checksum,
        block_keys,
        parts: split,
    })
}

/// Split the merge into parts: splitters at quantiles of the runs' block index, each run cut
/// at the first record not below each splitter (reading the block it falls in).
fn plan_parts<R: Record>(
    pipe: &mut Pipeline,
    wanted: usize,
    plan: &Plan,
    from: &Level,
    runs: &[usize],
    per_block: u64,
) -> Result<Vec<Part>, EmError> {
    let Some(splitters) = splitters(wanted, from, runs) else {
        return Ok(whole(from, runs));
    };
    let loaded = read_cut_blocks(pipe, plan, from, runs, &splitters)?;
    let cuts = cuts::<R>(from, runs, &splitters, &loaded, per_block);
    let mut parts = parts_between(from, runs, &cuts, splitters.len() + 1);
    hand_out(&mut parts, loaded, per_block);
    Ok(parts)
}

/// The merge in one part: every run whole.
fn whole(from: &Level, runs: &[usize]) -> Vec<Part> {
    let slices: Vec<Slice> = runs
        .iter()
        .map(|&r| Slice {
            lo: 0,
            hi: from.lengths[r],
            preloaded: Vec::new(),
        })
        .collect();
    let total = slices.iter().map(|s| s.hi).sum();
    vec![Part {
        slices,
        out_lo: 0,
        out_hi: total,
    }]
}

/// The keys that cut the merge into `wanted` parts, at quantiles of the runs' block index,
/// without repeats; `None` when the merge stays whole (one part wanted, or no block
/// index). A one-way merge (a run copied to the next level) splits like any other.
fn splitters(wanted: usize, from: &Level, runs: &[usize]) -> Option<Vec<u64>> {
    let mut sample: Vec<u64> = runs
        .iter()
        .flat_map(|&r| from.block_keys[r].iter().copied())
        .collect();
    if sample.is_empty() {
        return None;
    }
    sample.sort_unstable();
    let mut splitters: Vec<u64> = (1..wanted)
        .map(|p| sample[p * sample.len() / wanted])
        .collect();
    splitters.dedup();
    (!splitters.is_empty()).then_some(splitters)
}

/// The block of run `r` a cut at splitter `s` falls in (`None`: before the first record).
fn block_of(from: &Level, r: usize, s: u64) -> Option<u64> {
    let below = from.block_keys[r].partition_point(|&k| k < s) as u64;
    below.checked_sub(1)
}

/// Read every block of a run on the device that a splitter falls in, once: `(j, block,
/// buffer)`, `j` the run's index in `runs`, in order.
fn read_cut_blocks(
    pipe: &mut Pipeline,
    plan: &Plan,
    from: &Level,
    runs: &[usize],
    splitters: &[u64],
) -> Result<Vec<(usize, u64, AlignedBuf)>, EmError> {
    let mut needed: Vec<(usize, u64)> = runs
        .iter()
        .enumerate()
        .filter(|&(_, &r)| from.memory[r].is_none())
        .flat_map(|(j, &r)| {
            splitters
                .iter()
                .filter_map(move |&s| block_of(from, r, s).map(|b| (j, b)))
        })
        .collect();
    needed.sort_unstable();
    needed.dedup();
    let br = plan.sizes.read_bytes;
    for (i, &(j, block)) in needed.iter().enumerate() {
        let offset = from.offsets[runs[j]] + block * br;
        pipe.read(
            SPLIT_TAG + i as u64,
            offset,
            br as usize,
            AlignedBuf::new(br as usize),
        );
    }
    let mut loaded: Vec<(usize, u64, AlignedBuf)> = Vec::with_capacity(needed.len());
    for (i, &(j, block)) in needed.iter().enumerate() {
        loaded.push((j, block, pipe.wait(SPLIT_TAG + i as u64)?));
    }
    Ok(loaded)
}

/// `cuts[j][p]`: the first record of run `j` in part `p + 1`, the first not below splitter
/// `p` (found in the resident run, or in the block [`read_cut_blocks`] read).
fn cuts<R: Record>(
    from: &Level,
    runs: &[usize],
    splitters: &[u64],
    loaded: &[(usize, u64, AlignedBuf)],
    per_block: u64,
) -> Vec<Vec<u64>> {
    runs.iter()
        .enumerate()
        .map(|(j, &r)| {
            splitters
                .iter()
                .map(|&s| match (&from.memory[r], block_of(from, r, s)) {
                    (Some(memory), _) => {
                        let records = &memory.records::<R>()[..from.lengths[r] as usize];
                        records.partition_point(|x| x.key() < s) as u64
                    }
                    (None, None) => 0,
                    (None, Some(block)) => {
                        let (_, _, buf) = loaded
                            .iter()
                            .find(|(lj, lb, _)| *lj == j && *lb == block)
                            .expect("invariant: every cut block was read");
                        let start = block * per_block;
                        let valid = (from.lengths[r] - start).min(per_block) as usize;
                        let records = &buf.records::<R>()[..valid];
                        start + records.partition_point(|x| x.key() < s) as u64
                    }
                })
                .collect()
        })
        .collect()
}

/// The `count` parts the cuts make, each with its place in the output.
fn parts_between(from: &Level, runs: &[usize], cuts: &[Vec<u64>], count: usize) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::with_capacity(count);
    let mut out_lo = 0;
    for p in 0..count {
        let slices: Vec<Slice> = runs
            .iter()
            .enumerate()
            .map(|(j, &r)| Slice {
                lo: if p == 0 { 0 } else { cuts[j][p - 1] },
                hi: if p == count - 1 {
                    from.lengths[r]
                } else {
                    cuts[j][p]
                },
                preloaded: Vec::new(),
            })
            .collect();
        let size: u64 = slices.iter().map(|s| s.hi - s.lo).sum();
        parts.push(Part {
            slices,
            out_lo,
            out_hi: out_lo + size,
        });
        out_lo += size;
    }
    parts
}

/// Hand every block read for a cut to each part whose slice touches it (copies for all but
/// the last). Every such block holds records (its first key is below a splitter), and every
/// record is in exactly one part, so some part uses it: no read is wasted.
fn hand_out(parts: &mut [Part], loaded: Vec<(usize, u64, AlignedBuf)>, per_block: u64) {
    let count = parts.len();
    for (j, block, buf) in loaded {
        let (start, end) = (block * per_block, (block + 1) * per_block);
        let users: Vec<usize> = (0..count)
            .filter(|&p| {
                let s = &parts[p].slices[j];
                s.lo < s.hi && s.lo < end && start < s.hi
            })
            .collect();
        for (n, &p) in users.iter().enumerate() {
            let copy = if n + 1 == users.len() {
                None
            } else {
                let mut copy = AlignedBuf::new(buf.len());
                copy.bytes_mut().copy_from_slice(buf.bytes());
                Some(copy)
            };
            match copy {
                Some(copy) => parts[p].slices[j].preloaded.push((block, copy)),
                None => {
                    parts[p].slices[j].preloaded.push((block, buf));
                    break;
                }
            }
        }
    }
}

/// One input of a part: a slice of one run, double-buffered in `B_r` blocks, or a slice of
/// a resident run, which is one block already in memory.
struct Input<'a> {
    /// The resident run's bytes (the whole run), if it is one.
    memory: Option<&'a AlignedBuf>,
    /// Tags `slots * j .. slots * (j + 1)` are this input's (`j` its index in the merge).
    tags: u64,
    /// Chunk requests in flight at most (each with its own buffer and tag).
    slots: u64,
    /// Blocks one request reads at most.
    chunk: u64,
    /// Requests made so far (their tags cycle through the slots).
    requested: u64,
    offset: u64,
    /// Record index (in the run) where the next chunk to load starts being consumed.
    at: u64,
    /// One past the last record of the slice.
    end: u64,
    next_block: u64,
    last_block: u64,
    preloaded: Vec<(u64, AlignedBuf)>,
    /// Requests in flight, oldest first: (first block, blocks, tag).
    pending: VecDeque<(u64, u64, u64)>,
    current: AlignedBuf,
    position: usize,
    available: usize,
}

impl Input<'_> {
    /// The records of the current block (of the whole run, for a resident one), of which
    /// `position..available` are still to be merged.
    #[inline(always)]
    fn records<R: Record>(&self) -> &[R] {
        match self.memory {
            Some(memory) => memory.records::<R>(),
            None => self.current.records::<R>(),
        }
    }
}

/// What every part of one merge shares: the plan, the level merged from, the runs merged
/// (indices into it), the target (offset, records), how many parts there are, and where to
/// report progress.
#[derive(Clone, Copy)]
struct Job<'a> {
    plan: &'a Plan,
    from: &'a Level,
    runs: &'a [usize],
    target: (u64, u64),
    parts: usize,
    progress: &'a dyn Progress,
}

/// Merge one part: its slice of every run, into records `out_lo..out_hi` of the target.
fn merge_part<R: Record>(
    pipe: &mut Pipeline,
    job: Job<'_>,
    part: Part,
) -> Result<PartOutput, EmError> {
    let Job {
        plan,
        runs,
        target,
        progress,
        ..
    } = job;
    let rb = plan.record_bytes;
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let per_block = br / rb;
    let k = runs.len();
    let (mut inputs, slots) = open_inputs(pipe, job, part.slices, per_block);
    let out_tag = |parity: u64| slots * k as u64 + parity;
    let mut keys = Vec::with_capacity(k);
    for input in &mut inputs {
        keys.push(advance_block::<R>(pipe, input, br, per_block)?);
    }
    let mut tree = LoserTree::new(keys);
    let per_out = bw / rb;
    let mut output = PartOutput {
        checksum: Checksum::default(),
        first_key: None,
        last_key: None,
        pieces: Vec::new(),
        block_keys: Vec::new(),
    };
    let mut out = Output::starting_at(part.out_lo, per_out, bw, target.1);
    let mut positions = vec![0usize; k];
    while let Some(w) = tree.winner() {
        // Run a batch without any end-of-block check: no input can run out within fewer
        // steps than the fewest records any live input has left in its block.
        let batch = batch_size(&inputs, &out);
        if batch > 0 {
            merge_batch::<R>(&mut tree, &mut inputs, &mut positions, &mut out, batch);
        } else {
            merge_one::<R>(pipe, &mut tree, &mut inputs[w], &mut out, br, per_block)?;
        }
        if out.filled as u64 == per_out {
            progress.advance((out.filled - out.from) as u64);
            out.flush::<R>(pipe, plan, target.0, out_tag, &mut output, false)?;
        }
    }
    if out.filled > out.from {
        progress.advance((out.filled - out.from) as u64);
        out.flush::<R>(pipe, plan, target.0, out_tag, &mut output, true)?;
    }
    pipe.drain()?;
    Ok(output)
}

/// A part's inputs, one a run, each with its first requests made (see [`Input`]), and how
/// many requests each keeps in flight (the output's tags follow the inputs' slots).
fn open_inputs<'a>(
    pipe: &mut Pipeline,
    job: Job<'a>,
    slices: Vec<Slice>,
    per_block: u64,
) -> (Vec<Input<'a>>, u64) {
    let Job {
        plan,
        from,
        runs,
        parts,
        ..
    } = job;
    let br = plan.sizes.read_bytes;
    let on_device = runs.iter().filter(|&&r| from.memory[r].is_none()).count();
    let depth = depth_for(plan, on_device as u64, parts);
    // Read ahead in requests of several consecutive blocks (two in flight an input): the
    // model still counts B_r blocks, but the disk serves one 512 KiB request faster than
    // four of 128 KiB (dd here: 1.4 against 0.96 GB/s).
    let chunk = (depth / 2).max(1);
    let slots = depth / chunk;
    let mut inputs = Vec::with_capacity(runs.len());
    for (j, (slice, &run)) in slices.into_iter().zip(runs).enumerate() {
        let memory = from.memory[run].as_ref();
        let mut input = Input {
            memory,
            tags: slots * j as u64,
            slots,
            chunk,
            requested: 0,
            offset: from.offsets[run],
            at: slice.lo,
            end: slice.hi,
            next_block: slice.lo / per_block,
            last_block: if slice.lo < slice.hi && memory.is_none() {
                slice.hi.div_ceil(per_block)
            } else {
                0
            },
            preloaded: slice.preloaded,
            pending: VecDeque::with_capacity(slots as usize),
            current: AlignedBuf::new(0),
            position: 0,
            available: 0,
        };
        if memory.is_none() {
            // An empty buffer: `request_block` allocates one of a chunk.
            for _ in 0..slots {
                request_block(pipe, &mut input, br, AlignedBuf::new(0));
            }
        }
        inputs.push(input);
    }
    (inputs, slots)
}

/// How many records the next batch moves: as many as the output block has room for, and
/// fewer than the fewest any live input has left in its block (0: step one at a time).
#[inline(always)]
fn batch_size(inputs: &[Input<'_>], out: &Output) -> usize {
    let room = out.per_out as usize - out.filled;
    let left = inputs
        .iter()
        .filter(|i| i.position < i.available)
        .map(|i| i.available - i.position)
        .min()
        .unwrap_or(0);
    room.min(left.saturating_sub(1))
}

/// Move the winner's next record to the output, moving the input to its next chunk when it
/// was its block's last.
#[inline(always)]
fn merge_one<R: Record>(
    pipe: &mut Pipeline,
    tree: &mut LoserTree,
    input: &mut Input<'_>,
    out: &mut Output,
    br: u64,
    per_block: u64,
) -> Result<(), EmError> {
    let record = input.records::<R>()[input.position];
    out.buf.records_mut::<R>()[out.filled] = record;
    out.filled += 1;
    out.account(std::slice::from_ref(&record));
    input.position += 1;
    let next = if input.position < input.available {
        Some(input.records::<R>()[input.position].key())
    } else {
        advance_block::<R>(pipe, input, br, per_block)?
    };
    tree.replace_winner(next);
    Ok(())
}

/// Move the next `batch` records to the output; the caller guarantees that every input
/// still holds more than `batch` records in its current block (or is exhausted). The
/// records are checked for order and added to the output's checksum on the way, while the
/// loser tree's chain of comparisons leaves the core idle (a separate pass over each 16 MiB
/// output block cost 13% of a sort's CPU samples).
#[inline(never)]
fn merge_batch<R: Record>(
    tree: &mut LoserTree,
    inputs: &mut [Input<'_>],
    positions: &mut [usize],
    out: &mut Output,
    batch: usize,
) {
    debug_assert_eq!(
        out.checked, out.filled,
        "records left unaccounted before a batch"
    );
    let views: Vec<&[R]> = inputs
        .iter()
        .map(|i| &i.records::<R>()[..i.available])
        .collect();
    for (p, input) in positions.iter_mut().zip(inputs.iter()) {
        *p = input.position;
    }
    let (mut previous, mut in_order) = (out.previous, true);
    let (mut add, mut xor) = (0u64, 0u64);
    let slots = &mut out.buf.records_mut::<R>()[out.filled..out.filled + batch];
    for slot in slots {
        let w = tree.winner_index();
        let (view, p) = (views[w], positions[w]);
        let record = view[p];
        *slot = record;
        positions[w] = p + 1;
        tree.replace_winner_key(view[p + 1].key());
        let key = record.key();
        in_order &= previous <= key;
        previous = key;
        let f = record.fingerprint();
        add = add.wrapping_add(f);
        xor ^= f;
    }
    drop(views);
    for (input, &p) in inputs.iter_mut().zip(positions.iter()) {
        input.position = p;
    }
    out.sum.merge(&Checksum {
        count: batch as u64,
        sum: add,
        xor,
    });
    out.in_order &= in_order;
    out.previous = previous;
    out.filled += batch;
    out.checked = out.filled;
}

/// A part's output block being filled.
struct Output {
    block: u64,
    from: usize,
    filled: usize,
    /// Records of the block (from `from`) already checked for order and added to `sum`.
    checked: usize,
    /// The part's output so far: the checksum of the records accounted for, whether they
    /// were in order, and the last one's key (0 before the first: keys are unsigned).
    sum: Checksum,
    in_order: bool,
    previous: u64,
    buf: AlignedBuf,
    spare: Option<AlignedBuf>,
    written: u64,
    per_out: u64,
    total: u64,
}

impl Output {
    /// An empty output starting at record `out_lo` of a target of `total` records, in
    /// blocks of `per_out` records (`bw` bytes); a block the part starts inside is filled
    /// from there.
    fn starting_at(out_lo: u64, per_out: u64, bw: u64, total: u64) -> Output {
        Output {
            block: out_lo / per_out,
            from: (out_lo % per_out) as usize,
            filled: (out_lo % per_out) as usize,
            checked: (out_lo % per_out) as usize,
            sum: Checksum::default(),
            in_order: true,
            previous: 0,
            buf: AlignedBuf::new(bw as usize),
            spare: Some(AlignedBuf::new(bw as usize)),
            written: 0,
            per_out,
            total,
        }
    }
    /// Check the order of records just placed at the end of the block and add them to the
    /// checksum.
    #[inline]
    fn account<R: Record>(&mut self, records: &[R]) {
        for record in records {
            self.in_order &= self.previous <= record.key();
            self.previous = record.key();
        }
        self.sum.add(records);
        self.checked += records.len();
    }

    /// Account for the block's records, then write it if the part owns all of it or keep
    /// it as a piece; start the next block.
    fn flush<R: Record>(
        &mut self,
        pipe: &mut Pipeline,
        plan: &Plan,
        base: u64,
        out_tag: impl Fn(u64) -> u64,
        output: &mut PartOutput,
        last: bool,
    ) -> Result<(), EmError> {
        let first = self.block * self.per_out;
        debug_assert_eq!(self.checked, self.filled, "records left unaccounted");
        let records = &self.buf.records::<R>()[self.from..self.filled];
        if !self.in_order {
            // Find the offending record for the message.
            check_sorted(records, output.last_key)?;
            return Err(EmError::Verify(format!(
                "merged output block {} (or an earlier one of this part) is out of key order",
                self.block
            )));
        }
        output.checksum.merge(&self.sum);
        self.sum = Checksum::default();
        if output.first_key.is_none() {
            output.first_key = records.first().map(Record::key);
        }
        output.last_key = records.last().map(Record::key).or(output.last_key);
        let per_block = (plan.sizes.read_bytes / plan.record_bytes) as usize;
        let mut at = self.from.next_multiple_of(per_block);
        while at < self.filled {
            output.block_keys.push(self.buf.records::<R>()[at].key());
            at += per_block;
        }
        let block_end = (first + self.per_out).min(self.total);
        let owned = self.from == 0 && first + self.filled as u64 == block_end;
        let bw = plan.sizes.write_bytes;
        let next = match self.spare.take() {
            _ if last => AlignedBuf::new(0),
            Some(buf) => buf,
            None if owned && self.written >= 1 => pipe.wait(out_tag((self.written + 1) % 2))?,
            None => AlignedBuf::new(bw as usize),
        };
        let full = std::mem::replace(&mut self.buf, next);
        if owned {
            pipe.write(
                out_tag(self.written % 2),
                base + self.block * bw,
                bw as usize,
                full,
            );
            self.written += 1;
        } else {
            output.pieces.push(Piece {
                block: self.block,
                from: self.from,
                to: self.filled,
                buf: full,
            });
        }
        self.block += 1;
        self.from = 0;
        self.filled = 0;
        self.checked = 0;
        Ok(())
    }
}

/// Assemble and write the output blocks the parts share.
fn write_shared_blocks<R: Record>(
    pipe: &mut Pipeline,
    plan: &Plan,
    mut pieces: Vec<Piece>,
    target: (u64, u64),
) -> Result<(), EmError> {
    let bw = plan.sizes.write_bytes;
    let per_out = bw / plan.record_bytes;
    pieces.sort_by_key(|p| (p.block, p.from));
    let mut pieces = pieces.into_iter().peekable();
    while let Some(first) = pieces.next() {
        let Piece {
            block,
            from,
            mut to,
            mut buf,
        } = first;
        assert_eq!(from, 0, "invariant: a shared block's first piece starts it");
        while let Some(next) = pieces.next_if(|p| p.block == block) {
            assert_eq!(
                next.from, to,
                "invariant: the pieces of a block are contiguous"
            );
            buf.records_mut::<R>()[next.from..next.to]
                .copy_from_slice(&next.buf.records::<R>()[next.from..next.to]);
            to = next.to;
        }
        let end = ((block + 1) * per_out).min(target.1) - block * per_out;
        assert_eq!(to as u64, end, "invariant: the pieces cover their block");
        // Each write is waited for at once, so one tag serves them all.
        pipe.write(SPLIT_TAG, target.0 + block * bw, bw as usize, buf);
        pipe.wait(SPLIT_TAG)?;
    }
    Ok(())
}

/// Ask for the input's next chunk (if any) into `buf`: a block already read, or up to
/// `chunk` consecutive blocks from the device (stopping before a block already read).
fn request_block(pipe: &mut Pipeline, input: &mut Input<'_>, br: u64, buf: AlignedBuf) {
    if input.next_block >= input.last_block {
        return;
    }
    let first = input.next_block;
    let tag = input.tags + input.requested % input.slots;
    input.requested += 1;
    if let Some(i) = input.preloaded.iter().position(|(b, _)| *b == first) {
        pipe.preset(tag, input.preloaded.swap_remove(i).1);
        input.pending.push_back((first, 1, tag));
        input.next_block += 1;
        return;
    }
    let limit = input
        .preloaded
        .iter()
        .map(|(b, _)| *b)
        .filter(|&b| b > first)
        .min()
        .unwrap_or(input.last_block)
        .min(input.last_block);
    let blocks = (limit - first).min(input.chunk);
    let len = (blocks * br) as usize;
    let buf = if buf.len() >= len {
        buf
    } else {
        AlignedBuf::new((input.chunk * br) as usize)
    };
    pipe.read(tag, input.offset + first * br, len, buf);
    input.pending.push_back((first, blocks, tag));
    input.next_block += blocks;
}

/// Move the input to its next chunk: wait for it, ask for the one after into the buffer
/// just consumed, and return the first key (`None` when the slice is exhausted). A resident
/// run's slice is one chunk, there from the start.
fn advance_block<R: Record>(
    pipe: &mut Pipeline,
    input: &mut Input<'_>,
    br: u64,
    per_block: u64,
) -> Result<Option<u64>, EmError> {
    if input.at >= input.end {
        return Ok(None);
    }
    if input.memory.is_some() {
        input.position = input.at as usize;
        input.available = input.end as usize;
        input.at = input.end;
        return Ok(Some(input.records::<R>()[input.position].key()));
    }
    let (first, blocks, tag) = input
        .pending
        .pop_front()
        .expect("invariant: the next chunk was requested");
    let start = first * per_block;
    debug_assert!(input.at >= start && input.at < start + blocks * per_block);
    let buf = pipe.wait(tag)?;
    let done = std::mem::replace(&mut input.current, buf);
    if !done.is_empty() {
        request_block(pipe, input, br, done);
    }
    input.position = (input.at - start) as usize;
    input.available = (input.end.min(start + blocks * per_block) - start) as usize;
    input.at = start + input.available as u64;
    Ok(Some(input.current.records::<R>()[input.position].key()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::BlockSizes;
    use crate::sort::FanIn;

    /// 256 KiB of memory, blocks of 512 B to read and 2 KiB to write; 100,000 u64 in 13
    /// runs, three of them kept in memory when asked (their 192 KiB leave the merge 64 KiB).
    fn plan(resident: u64) -> Plan {
        let sizes = BlockSizes::new(512, 2048).expect("valid");
        let plan = Plan::new(100_000, 8, sizes, 256 << 10, FanIn::Model)
            .expect("plan")
            .keep_resident(resident);
        assert_eq!((plan.runs, plan.resident), (13, resident));
        plan
    }

    /// A level whose runs have these block indexes (no data, none resident).
    fn level(block_keys: Vec<Vec<u64>>) -> Level {
        let n = block_keys.len();
        Level {
            offsets: vec![0; n],
            lengths: vec![0; n],
            block_keys,
            memory: (0..n).map(|_| None).collect(),
        }
    }

    #[test]
    fn splitters_are_quantiles_of_the_merged_runs_block_keys() {
        let level = level(vec![
            (0..10).map(|i| i * 10).collect(),
            (0..10).map(|i| i * 10 + 5).collect(),
            vec![1000],
        ]);
        // The first two runs' 20 keys 0, 5, ..., 95: the 5th, 10th and 15th.
        assert_eq!(splitters(4, &level, &[0, 1]), Some(vec![25, 50, 75]));
        assert_eq!(splitters(2, &level, &[0, 1]), Some(vec![50]));
        // One run alone splits too; one part wanted, or no index, does not.
        assert_eq!(splitters(2, &level, &[0]), Some(vec![50]));
        assert_eq!(splitters(1, &level, &[0, 1]), None);
        assert_eq!(
            splitters(3, &self::level(vec![vec![], vec![]]), &[0, 1]),
            None
        );
        // Repeats collapse.
        let equal = self::level(vec![vec![7; 8], vec![7; 8]]);
        assert_eq!(splitters(4, &equal, &[0, 1]), Some(vec![7]));
        // The runs merged, not the level's others.
        assert_eq!(splitters(2, &level, &[1, 2]), Some(vec![55]));
    }

    #[test]
    fn a_cut_block_goes_to_every_part_whose_slice_touches_it_the_last_one_the_original() {
        // One run, blocks of 4 records; block 2 holds records 8..12.
        let part = |lo, hi| Part {
            slices: vec![Slice {
                lo,
                hi,
                preloaded: Vec::new(),
            }],
            out_lo: lo,
            out_hi: hi,
        };
        // Ending where the block starts, inside it, empty, inside it, starting where it ends.
        let mut parts = vec![
            part(0, 8),
            part(8, 10),
            part(10, 10),
            part(10, 12),
            part(12, 20),
        ];
        let mut buf = AlignedBuf::new(512);
        buf.bytes_mut().fill(3);
        let original = buf.bytes().as_ptr() as usize;
        hand_out(&mut parts, vec![(0, 2, buf)], 4);
        let got: Vec<Vec<(u64, usize, u8)>> = parts
            .iter()
            .map(|p| {
                p.slices[0]
                    .preloaded
                    .iter()
                    .map(|(b, buf)| (*b, buf.bytes().as_ptr() as usize, buf.bytes()[511]))
                    .collect()
            })
            .collect();
        assert!(
            got[0].is_empty() && got[2].is_empty() && got[4].is_empty(),
            "{got:?}"
        );
        assert_eq!(
            (got[1].len(), got[1][0].0, got[1][0].2),
            (1, 2, 3),
            "a copy"
        );
        assert_ne!(got[1][0].1, original);
        assert_eq!(got[3], [(2, original, 3)], "the block itself");
    }

    #[test]
    fn a_merge_splits_into_as_many_parts_as_threads_and_memory_allow() {
        let all = plan(0);
        // A part of 13 inputs: 3 x 13 x 512 + 2 x 2048 = 24,064 B; 256 KiB holds 10.
        assert_eq!(parts_for(&all, 13, 7), 7);
        assert_eq!(parts_for(&all, 13, 10), 10);
        assert_eq!(parts_for(&all, 13, 11), 10);
        assert_eq!(parts_for(&all, 13, 1), 1);
        assert_eq!(parts_for(&all, 13, 0), 1);
        // Only resident runs: a part is its output's 4 KiB, 64 of them.
        assert_eq!(parts_for(&all, 0, 100), 64);
        // Not even one part fits: one anyway (the plan's own buffers are smaller).
        assert_eq!(parts_for(&all, 1000, 4), 1);
        // Three runs kept: 64 KiB for 10 inputs' parts of 19,456 B.
        assert_eq!(parts_for(&plan(3), 10, 4), 3);
    }

    #[test]
    fn each_input_reads_ahead_as_far_as_memory_allows_within_bounds() {
        let all = plan(0);
        // One part: (256 KiB - 4 KiB) / (13 x 512) = 38 blocks an input, at most 8.
        assert_eq!(depth_for(&all, 13, 1), 8);
        // Six parts: (256 KiB - 24 KiB) / (6 x 13 x 512) = 5, less a splitter's block: 4.
        assert_eq!(depth_for(&all, 13, 6), 4);
        // Five parts: (256 KiB - 20 KiB) / (5 x 13 x 512) = 7, less one: 6.
        assert_eq!(depth_for(&all, 13, 5), 6);
        // 60 inputs: 8 blocks each fit one part; split in two, 30 inputs, 8 less one.
        assert_eq!(depth_for(&all, 60, 1), 8);
        assert_eq!(depth_for(&all, 30, 2), 7);
        // Ten parts: 3 less one, and never below two (the plan's own double buffering).
        assert_eq!(depth_for(&all, 13, 10), 2);
        assert_eq!(depth_for(&all, 1000, 4), 2);
        // Nothing on the device to read.
        assert_eq!(depth_for(&all, 0, 4), MAX_DEPTH);
    }
}
