//! Carrying a [`Plan`] out: run formation and merge passes with double-buffered I/O, and
//! the data-free replay of the same schedule.

use super::merge::{merge_runs, parts_for};
use super::plan::Plan;
use super::radix::radix_sort_checksummed;
use super::{Layout, SortOutcome};
use crate::EmError;
use crate::io::worker::{Pipeline, with_pipeline, with_pipelines};
use crate::io::{AlignedBuf, BlockIo, IoStats};
use crate::record::{Checksum, Record};
use flashkit_core::Progress;
use std::collections::VecDeque;
use std::time::Instant;

/// Where each run of a level lives: byte offsets and record counts; once the runs are
/// formed, the first key of every `B_r` block of each (where a parallel merge cuts them);
/// and the resident runs' records (see [`Plan::keep_resident`]), which have no place on the
/// device.
pub(super) struct Level {
    pub offsets: Vec<u64>,
    pub lengths: Vec<u64>,
    pub block_keys: Vec<Vec<u64>>,
    pub memory: Vec<Option<AlignedBuf>>,
}

pub(super) fn padded(bytes: u64, block: u64) -> u64 {
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
            Level {
                offsets,
                block_keys: vec![Vec::new(); lengths.len()],
                memory: (0..lengths.len()).map(|_| None).collect(),
                lengths,
            }
        })
        .collect()
}

/// Sort for real: see [`super::sort`]. Each merge splits into up to `threads` parts merged
/// in parallel (as many as memory allows; see `merge::parts_for`).
pub fn execute<R: Record, I: BlockIo + ?Sized>(
    io: &mut I,
    plan: &Plan,
    layout: &Layout,
    threads: usize,
    progress: &dyn Progress,
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
    let mut levels = level_layout(plan, layout);
    let start = io.stats();
    let clock = Instant::now();
    progress.start("run formation", Some(plan.records));
    let input_checksum = with_pipeline(io, |pipe| {
        form_runs::<R>(pipe, plan, layout, &mut levels[0], progress)
    })?;
    let run_formation = io.stats() - start;
    let run_seconds = clock.elapsed().as_secs_f64();
    let mut output_checksum = input_checksum;
    let mut merge_parts = Vec::with_capacity(plan.passes.len());
    // A single run (or none) has no merge pass: it was written where the output goes.
    for (pass, merges) in plan.passes.iter().enumerate() {
        let (done, rest) = levels.split_at_mut(pass + 1);
        let (from, to) = (&done[pass], &mut rest[0]);
        // The most runs a merge reads from the device (resident runs are all inputs of the
        // first pass: see `Plan::resident`).
        let widest = merges
            .iter()
            .map(|m| {
                (m.first..m.first + m.count)
                    .filter(|&r| !plan.is_resident(r))
                    .count() as u64
            })
            .max()
            .unwrap_or(1);
        let parts = parts_for(plan, widest, threads);
        let name = if plan.passes.len() == 1 {
            "merge".to_string()
        } else {
            format!("merge pass {}/{}", pass + 1, plan.passes.len())
        };
        progress.start(&name, Some(plan.records));
        let (sum, most) = with_pipelines(io, parts, |pipes| {
            let (mut sum, mut most) = (Checksum::default(), 0);
            for (index, merge) in merges.iter().enumerate() {
                let target = (to.offsets[index], to.lengths[index]);
                let merged = merge_runs::<R>(pipes, plan, from, *merge, target, progress)?;
                sum.merge(&merged.checksum);
                most = most.max(merged.parts);
                to.block_keys[index] = merged.block_keys;
            }
            Ok((sum, most))
        })?;
        output_checksum = sum;
        merge_parts.push(most);
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
        merge_parts,
    })
}

/// Read, radix-sort and write each run, reading the next run and writing the previous one
/// while sorting the current one; the plan's resident runs stay in their buffers instead.
/// Returns the input's checksum.
fn form_runs<R: Record>(
    pipe: &mut Pipeline,
    plan: &Plan,
    layout: &Layout,
    runs: &mut Level,
    progress: &dyn Progress,
) -> Result<Checksum, EmError> {
    let rb = plan.record_bytes;
    let (br, bw) = (plan.sizes.read_bytes, plan.sizes.write_bytes);
    let buffer_bytes = padded(plan.run_len(0) * rb, bw).max(bw) as usize;
    let what = "one of run formation's four buffers (a run, padded to B_w)";
    let mut free: Vec<AlignedBuf> = (0..3)
        .map(|_| AlignedBuf::try_new(buffer_bytes, what))
        .collect::<Result<_, _>>()?;
    let mut scratch = AlignedBuf::try_new(buffer_bytes, what)?;
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
    // Writes in flight, oldest first. Run i's sort overlaps run i+1's read and run i-1's
    // write; the buffer for run i+1 comes from run i-2's write, long done, so the sort never
    // waits for the write just submitted.
    let mut pending_writes: VecDeque<u64> = VecDeque::with_capacity(2);
    let mut checksum = Checksum::default();
    for i in 0..plan.runs {
        let mut current = pipe.wait(2 * i)?;
        if i + 1 < plan.runs {
            let buf = match free.pop() {
                Some(buf) => buf,
                None => pipe.wait(
                    pending_writes
                        .pop_front()
                        .expect("invariant: a write is pending"),
                )?,
            };
            read_run(pipe, i + 1, buf);
        }
        let n = plan.run_len(i) as usize;
        sort_run::<R>(&mut current, &mut scratch, i, n, &mut checksum, progress)?;
        let per_block = (br / rb) as usize;
        runs.block_keys[i as usize] = block_keys::<R>(&current.records::<R>()[..n], per_block);
        if plan.is_resident(i) {
            // Three buffers can be kept: the next read takes the buffer of a write issued
            // before the first resident run, and the sort of the last run needs only its
            // own buffer and the scratch.
            runs.memory[i as usize] = Some(current);
            continue;
        }
        let len = padded(n as u64 * rb, bw) as usize;
        pipe.write(2 * i + 1, runs.offsets[i as usize], len, current);
        pending_writes.push_back(2 * i + 1);
    }
    pipe.drain()?;
    Ok(checksum)
}

/// Radix-sort run `i`, the first `n` records of `current`, using `scratch`, adding it to
/// `checksum` and `progress`; the sorted run ends in `current` (the buffers are swapped
/// when the sort ended in the scratch). An error if the sort's order check failed.
#[inline]
fn sort_run<R: Record>(
    current: &mut AlignedBuf,
    scratch: &mut AlignedBuf,
    i: u64,
    n: usize,
    checksum: &mut Checksum,
    progress: &dyn Progress,
) -> Result<(), EmError> {
    let sorted = radix_sort_checksummed(
        &mut current.records_mut::<R>()[..n],
        &mut scratch.records_mut::<R>()[..n],
    );
    checksum.merge(&sorted.checksum);
    progress.advance(n as u64);
    if sorted.in_scratch {
        std::mem::swap(current, scratch);
    }
    // The sort checked its result's order bucket by bucket while each was in the
    // cache (a separate pass here re-read every run cold: 18 ms of each 200).
    if !sorted.in_order {
        check_sorted(&current.records::<R>()[..n], None)?;
        return Err(EmError::Verify(format!(
            "run {i} came out of run formation's sort out of key order"
        )));
    }
    Ok(())
}

/// The first key of every `per_block` records: a run's block index.
#[inline]
fn block_keys<R: Record>(records: &[R], per_block: usize) -> Vec<u64> {
    records.iter().step_by(per_block).map(Record::key).collect()
}

/// Check that `records` are in key order and not below `previous`.
pub(super) fn check_sorted<R: Record>(records: &[R], previous: Option<u64>) -> Result<(), EmError> {
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
        if plan.is_resident(i) {
            continue;
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
                if plan.is_resident(run) {
                    continue;
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_sorted_takes_equal_keys_and_refuses_a_key_below_the_last() {
        check_sorted(&[1u64, 2, 2, 3], None).expect("in order");
        check_sorted(&[5u64, 5], Some(5)).expect("not below the previous block");
        check_sorted::<u64>(&[], Some(9)).expect("nothing to check");
        let error = check_sorted(&[1u64, 3, 2], None).expect_err("out of order");
        assert_eq!(
            error.to_string(),
            "verification failed: record 2 of a sorted block has key 2 after key 3"
        );
        let error = check_sorted(&[4u64, 6], Some(5)).expect_err("below the previous block");
        assert!(
            error
                .to_string()
                .contains("record 0 of a sorted block has key 4 after key 5")
        );
    }
}
