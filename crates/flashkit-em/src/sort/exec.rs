//! Carrying a [`Plan`] out: run formation and merge passes with double-buffered I/O, and
//! the data-free replay of the same schedule.

use super::loser::LoserTree;
use super::plan::{Merge, Plan};
use super::radix::radix_sort;
use super::{Layout, SortOutcome};
use crate::EmError;
use crate::io::worker::{Pipeline, with_pipeline};
use crate::io::{AlignedBuf, BlockIo, IoStats};
use crate::record::{Checksum, Record};
use std::time::Instant;

/// Where each run of a level lives: byte offsets and record counts.
struct Level {
    offsets: Vec<u64>,
    lengths: Vec<u64>,
}

fn padded(bytes: u64, block: u64) -> u64 {
    bytes.div_ceil(block) * block
}

/// The runs of every level laid out one after another in alternating scratch areas; the
/// last level is the output.
fn level_layout(plan: &Plan, layout: &Layout) -> Vec<Level> {
    let levels = plan.levels();
    let last = levels.len() - 1;
    levels
        .into_iter()
        .enumerate()
        .map(|(index, lengths)| {
            let base = if index == last {
                layout.output
            } else {
                layout.scratch[index % 2]
            };
            let mut offsets = Vec::with_capacity(lengths.len());
            let mut at = base;
            for &len in &lengths {
                offsets.push(at);
                at += padded(len * plan.record_bytes, plan.sizes.write_bytes);
            }
            Level { offsets, lengths }
        })
        .collect()
}

/// Sort for real: see [`super::sort`].
pub fn execute<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
) -> Result<SortOutcome, EmError> {
    assert_eq!(
        plan.record_bytes,
        R::BYTES as u64,
        "plan made for another record size"
    );
    assert_eq!(
        io.block_sizes(),
        plan.sizes,
        "plan made for other block sizes"
    );
    let levels = level_layout(plan, layout);
    let start = io.stats();
    let clock = Instant::now();
    let input_checksum = with_pipeline(io, |pipe| form_runs::<R>(pipe, plan, layout, &levels[0]))?;
    let run_formation = io.stats() - start;
    let run_seconds = clock.elapsed().as_secs_f64();
    let mut output_checksum = input_checksum;
    if plan.runs > 1 {
        for (pass, merges) in plan.passes.iter().enumerate() {
            let (from, to) = (&levels[pass], &levels[pass + 1]);
            output_checksum = with_pipeline(io, |pipe| {
                let mut sum = Checksum::default();
                for (index, merge) in merges.iter().enumerate() {
                    let target = (to.offsets[index], to.lengths[index]);
                    sum.merge(&merge_runs::<R>(pipe, plan, from, *merge, target)?);
                }
                Ok(sum)
            })?;
        }
    }
    if output_checksum != input_checksum {
        return Err(EmError::Verify(format!(
            "the output holds another multiset of records than the input (input {} records, \
             checksum {:016x}; output {} records, checksum {:016x})",
            input_checksum.count, input_checksum.sum, output_checksum.count, output_checksum.sum
        )));
    }
    Ok(SortOutcome {
        plan: plan.clone(),
        run_formation,
        total: io.stats() - start,
        checksum: input_checksum,
        run_formation_seconds: run_seconds,
        total_seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Read, radix-sort and write each run, reading the next run and writing the previous one
/// while sorting the current one. Returns the input's checksum.
fn form_runs<R: Record>(
    pipe: &mut Pipeline,
    plan: &Plan,
    layout: &Layout,
    runs: &Level,
) -> Result<Checksum, EmError> {
    let rb = plan.record_bytes;
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let buffer_bytes = padded(plan.run_len(0) * rb, bw).max(bw) as usize;
    let mut free: Vec<AlignedBuf> = (0..3).map(|_| AlignedBuf::new(buffer_bytes)).collect();
    let mut scratch = AlignedBuf::new(buffer_bytes);
    let read_run = |pipe: &mut Pipeline, i: u64, buf: AlignedBuf| {
        let len = padded(plan.run_len(i) * rb, br);
        pipe.read(
            2 * i,
            layout.input + i * plan.run_records * rb,
            len as usize,
            buf,
        );
    };
    read_run(pipe, 0, free.pop().expect("invariant: three free buffers"));
    let mut pending_write: Option<u64> = None;
    let mut checksum = Checksum::default();
    for i in 0..plan.runs {
        let mut current = pipe.wait(2 * i)?;
        if i + 1 < plan.runs {
            let buf = match free.pop() {
                Some(buf) => buf,
                None => pipe.wait(pending_write.take().expect("invariant: a write is pending"))?,
            };
            read_run(pipe, i + 1, buf);
        }
        let n = plan.run_len(i) as usize;
        checksum.add(&current.records::<R>()[..n]);
        let in_scratch = radix_sort(
            &mut current.records_mut::<R>()[..n],
            &mut scratch.records_mut::<R>()[..n],
        );
        if in_scratch {
            std::mem::swap(&mut current, &mut scratch);
        }
        check_sorted(&current.records::<R>()[..n], None)?;
        if let Some(tag) = pending_write.take() {
            free.push(pipe.wait(tag)?);
        }
        let len = padded(n as u64 * rb, bw) as usize;
        pipe.write(2 * i + 1, runs.offsets[i as usize], len, current);
        pending_write = Some(2 * i + 1);
    }
    pipe.drain()?;
    Ok(checksum)
}

/// Check that `records` are in key order and not below `previous`.
fn check_sorted<R: Record>(records: &[R], previous: Option<u64>) -> Result<(), EmError> {
    let mut last = previous.unwrap_or(0);
    for (i, record) in records.iter().enumerate() {
        let key = record.key();
        if key < last {
            return Err(EmError::Verify(format!(
                "record {i} of a sorted block has key {key} after key {last}"
            )));
        }
        last = key;
    }
    Ok(())
}

/// One input of a merge: its blocks, two buffers and a read position.
struct Input {
    offset: u64,
    records: u64,
    /// Records consumed from earlier blocks.
    consumed: u64,
    /// Next block to request.
    next_block: u64,
    blocks: u64,
    current: AlignedBuf,
    position: usize,
    available: usize,
}

/// Merge `merge.count` runs of `from` into one run at `target`, double-buffering every
/// input (`B_r`) and the output (`B_w`). Returns the checksum of what was written, whose
/// order was checked block by block.
fn merge_runs<R: Record>(
    pipe: &mut Pipeline,
    plan: &Plan,
    from: &Level,
    merge: Merge,
    target: (u64, u64),
) -> Result<Checksum, EmError> {
    let rb = plan.record_bytes;
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let per_block = (br / rb) as usize;
    let k = merge.count as usize;
    let out_tag = |parity: u64| 2 * k as u64 + parity;
    let mut inputs = Vec::with_capacity(k);
    for j in 0..k {
        let run = (merge.first as usize) + j;
        let records = from.lengths[run];
        let blocks = (records * rb).div_ceil(br);
        let mut input = Input {
            offset: from.offsets[run],
            records,
            consumed: 0,
            next_block: 0,
            blocks,
            current: AlignedBuf::new(0),
            position: 0,
            available: 0,
        };
        for _ in 0..2 {
            request_block(pipe, &mut input, j, br, AlignedBuf::new(br as usize));
        }
        inputs.push(input);
    }
    let mut keys = Vec::with_capacity(k);
    for (j, input) in inputs.iter_mut().enumerate() {
        keys.push(advance_block::<R>(pipe, input, j, br, per_block)?);
    }
    let mut tree = LoserTree::new(keys);
    let out_records = (bw / rb) as usize;
    let mut out = AlignedBuf::new(bw as usize);
    let mut spare = Some(AlignedBuf::new(bw as usize));
    let mut filled = 0usize;
    let mut written_blocks = 0u64;
    let mut checksum = Checksum::default();
    let mut last_key = None;
    while let Some(w) = tree.winner() {
        let input = &mut inputs[w];
        let record = input.current.records::<R>()[input.position];
        out.records_mut::<R>()[filled] = record;
        filled += 1;
        input.position += 1;
        let next = if input.position < input.available {
            Some(input.current.records::<R>()[input.position].key())
        } else {
            advance_block::<R>(pipe, input, w, br, per_block)?
        };
        tree.replace_winner(next);
        if filled == out_records {
            account::<R>(&out, filled, &mut checksum, &mut last_key)?;
            let full = std::mem::replace(&mut out, AlignedBuf::new(0));
            let offset = target.0 + written_blocks * bw;
            pipe.write(out_tag(written_blocks % 2), offset, bw as usize, full);
            written_blocks += 1;
            out = take_spare(
                pipe,
                &mut spare,
                out_tag(written_blocks % 2),
                written_blocks,
            )?;
            filled = 0;
        }
    }
    if filled > 0 {
        account::<R>(&out, filled, &mut checksum, &mut last_key)?;
        pipe.write(
            out_tag(written_blocks % 2),
            target.0 + written_blocks * bw,
            bw as usize,
            out,
        );
    }
    pipe.drain()?;
    for j in 0..k {
        let run = merge.first as usize + j;
        pipe.discard(from.offsets[run], padded(from.lengths[run] * rb, bw));
    }
    debug_assert_eq!(checksum.count, target.1);
    Ok(checksum)
}

/// The output buffer for the next block: the spare one, or the one written two blocks ago.
fn take_spare(
    pipe: &mut Pipeline,
    spare: &mut Option<AlignedBuf>,
    tag: u64,
    written_blocks: u64,
) -> Result<AlignedBuf, EmError> {
    match spare.take() {
        Some(buf) => Ok(buf),
        None => {
            debug_assert!(written_blocks >= 2);
            pipe.wait(tag)
        }
    }
}

/// Check a full (or final) output block's order, continuing from the previous block, and
/// add it to the checksum before it is written.
fn account<R: Record>(
    out: &AlignedBuf,
    filled: usize,
    checksum: &mut Checksum,
    last_key: &mut Option<u64>,
) -> Result<(), EmError> {
    let records = &out.records::<R>()[..filled];
    check_sorted(records, *last_key)?;
    checksum.add(records);
    *last_key = records.last().map(Record::key);
    Ok(())
}

/// Ask for the input's next block (if any) into `buf`.
fn request_block(pipe: &mut Pipeline, input: &mut Input, j: usize, br: u64, buf: AlignedBuf) {
    if input.next_block < input.blocks {
        let tag = 2 * j as u64 + input.next_block % 2;
        pipe.read(tag, input.offset + input.next_block * br, br as usize, buf);
        input.next_block += 1;
    }
}

/// Move the input to its next block: wait for it, prefetch the one after into the buffer
/// just consumed, and return the first key (`None` when the run is exhausted).
fn advance_block<R: Record>(
    pipe: &mut Pipeline,
    input: &mut Input,
    j: usize,
    br: u64,
    per_block: usize,
) -> Result<Option<u64>, EmError> {
    input.consumed += input.available as u64;
    let remaining = input.records - input.consumed;
    if remaining == 0 {
        return Ok(None);
    }
    let block = input.consumed / per_block as u64;
    let buf = pipe.wait(2 * j as u64 + block % 2)?;
    let done = std::mem::replace(&mut input.current, buf);
    if !done.is_empty() {
        request_block(pipe, input, j, br, done);
    }
    input.position = 0;
    input.available = remaining.min(per_block as u64) as usize;
    Ok(Some(input.current.records::<R>()[0].key()))
}

/// Issue exactly the transfers [`execute`] would, without data or computation. The order of
/// a merge's reads differs (round robin instead of data-driven) but not their number, size
/// or addresses, so the counters end exactly where a real sort's would.
pub fn replay<I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
) -> Result<IoStats, EmError> {
    let start = io.stats();
    let levels = level_layout(plan, layout);
    let rb = plan.record_bytes;
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let mut buf = AlignedBuf::new(bw.max(br) as usize);
    for i in 0..plan.runs {
        let len = plan.run_len(i) * rb;
        for b in 0..len.div_ceil(br) {
            io.read(
                layout.input + i * plan.run_records * rb + b * br,
                &mut buf.bytes_mut()[..br as usize],
            )?;
        }
        for b in 0..len.div_ceil(bw) {
            io.write(
                levels[0].offsets[i as usize] + b * bw,
                &buf.bytes()[..bw as usize],
            )?;
        }
    }
    for (pass, merges) in plan.passes.iter().enumerate() {
        let (from, to) = (&levels[pass], &levels[pass + 1]);
        for (index, merge) in merges.iter().enumerate() {
            for run in merge.first..merge.first + merge.count {
                let run = run as usize;
                for b in 0..(from.lengths[run] * rb).div_ceil(br) {
                    io.read(
                        from.offsets[run] + b * br,
                        &mut buf.bytes_mut()[..br as usize],
                    )?;
                }
            }
            for b in 0..(to.lengths[index] * rb).div_ceil(bw) {
                io.write(to.offsets[index] + b * bw, &buf.bytes()[..bw as usize])?;
            }
        }
    }
    Ok(io.stats() - start)
}
