//! External mergesort end to end on the simulator: edge-case inputs, every record type,
//! every fan-in policy, multi-pass merges, and the plan's exact volume prediction.

mod common;

use common::Logged;
use flashkit_core::{SimRng, SimRngExt};
use flashkit_em::io::{BlockIo, BlockSizes, SimIo};
use flashkit_em::record::{KeyPayload, Record};
use flashkit_em::sort::{FanIn, Layout, Plan, SortOutcome, replay_plan, sort_in_simulator};
use rand::Rng;

/// Small blocks and memory so that a few thousand records make many runs and passes:
/// runs of 4 KiB, at most (32 KiB - 8 KiB) / 2 KiB = 12-way merges... with B_r = 512 B,
/// 24-way.
fn small() -> (BlockSizes, u64) {
    (BlockSizes::new(512, 2048).expect("valid"), 16 * 1024)
}

fn check<R: Record>(input: Vec<R>, fan_in: FanIn) {
    let (sizes, memory) = small();
    let (sorted, outcome) = sort_in_simulator(&input, sizes, memory, fan_in).expect("sort");
    let mut expected = input.clone();
    expected.sort_by_key(Record::key);
    assert_eq!(sorted.len(), expected.len());
    let keys = |v: &[R]| v.iter().map(Record::key).collect::<Vec<_>>();
    assert_eq!(keys(&sorted), keys(&expected));
    let predicted = outcome.plan.volumes();
    assert_eq!(outcome.total.read_bytes, predicted.read_bytes);
    assert_eq!(outcome.total.write_bytes, predicted.write_bytes);
    assert_eq!(outcome.total.read_ios, predicted.read_ios);
    assert_eq!(outcome.total.write_ios, predicted.write_ios);
}

fn random<R: Record>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = SimRng::for_stream(seed, "sort-test");
    (0..n).map(|_| R::random(&mut rng)).collect()
}

#[test]
fn random_inputs_of_every_record_type() {
    check(random::<u32>(20_000, 1), FanIn::ReadBlocks);
    check(random::<u64>(10_000, 2), FanIn::Model);
    check(random::<KeyPayload>(5_000, 3), FanIn::WriteBlocks);
}

#[test]
fn sorted_reversed_equal_and_empty_inputs() {
    let mut sorted = random::<u64>(9_000, 4);
    sorted.sort_unstable();
    check(sorted.clone(), FanIn::ReadBlocks);
    sorted.reverse();
    check(sorted, FanIn::ReadBlocks);
    check(vec![42u32; 12_345], FanIn::Model);
    check(vec![u64::MAX; 3_000], FanIn::Model);
    check(Vec::<u64>::new(), FanIn::ReadBlocks);
    check(vec![7u64], FanIn::ReadBlocks);
    // Exactly one run, and one record more than one run.
    let (sizes, memory) = small();
    let run = Plan::new(1, 8, sizes, memory, FanIn::ReadBlocks)
        .expect("valid")
        .run_records as usize;
    check(random::<u64>(run, 5), FanIn::ReadBlocks);
    check(random::<u64>(run + 1, 6), FanIn::ReadBlocks);
}

#[test]
fn multi_pass_merges_with_a_small_fan_in() {
    // 2-way merges over 40 runs: six passes, each checked.
    let input = random::<u32>(40 * 1024, 7);
    check(input, FanIn::Fixed(2));
    let input = random::<u64>(13 * 512 + 17, 8);
    check(input, FanIn::Fixed(3));
}

#[test]
fn replaying_the_plan_without_data_counts_exactly_what_the_sort_did() {
    let (sizes, memory) = small();
    let input = random::<u64>(30_000, 9);
    let (_, outcome) = sort_in_simulator(&input, sizes, memory, FanIn::Fixed(3)).expect("sort");
    let mut counting = SimIo::counting(sizes);
    let replayed =
        replay_plan(&mut counting, &outcome.plan, &Layout::packed(&outcome.plan)).expect("replay");
    assert_eq!(replayed, outcome.total);
    assert_eq!(counting.stats(), outcome.total);
}

/// The same sort on the page-mapped FTL over the NAND model with stamps: every page the FTL
/// returns is checked against the latest write, and the FTL must collect garbage because
/// the sort's areas overwrite a device barely larger than them.
#[cfg(feature = "ftl")]
#[test]
fn sorts_on_the_page_ftl_and_every_read_is_the_latest_write() {
    use flashkit_core::Geometry;
    use flashkit_device::{NandDevice, Stamps};
    use flashkit_em::io::FtlIo;
    use flashkit_em::sort::{read_records, sort, write_records};
    use flashkit_ftl::{Inspect, Verify};
    use flashkit_ftl::{PageFtl, PageFtlConfig};
    let sizes = BlockSizes::new(4096, 16384).expect("valid");
    let input = random::<u64>(60_000, 11);
    let plan = Plan::new(input.len() as u64, 8, sizes, 128 * 1024, FanIn::Fixed(3)).expect("plan");
    let layout = Layout::packed(&plan);
    let geometry = Geometry::builder()
        .page_size_bytes(4096)
        .pages_per_block(16)
        .logical_bytes(4 * plan.area_bytes())
        .over_provisioning(0.25)
        .build()
        .expect("geometry");
    let ftl = PageFtl::with_page_table(
        NandDevice::<Stamps>::new(geometry),
        PageFtlConfig::default(),
    )
    .expect("ftl");
    let mut io = FtlIo::new(ftl, sizes).expect("adapter");
    write_records(&mut io, layout.input, &input).expect("input");
    let outcome = sort::<u64, _>(&mut io, &plan, &layout).expect("sort");
    let sorted =
        read_records::<u64, _>(&mut io, layout.output, input.len() as u64).expect("output");
    let mut expected = input;
    expected.sort_unstable();
    assert_eq!(sorted, expected);
    assert_eq!(outcome.total.read_bytes, plan.volumes().read_bytes);
    assert!(
        io.ftl().stats().gc_runs > 0,
        "the sort overwrote the device: GC must run"
    );
    io.ftl().check_invariants().expect("FTL invariants");
}

/// Sort on the simulator with each merge split over `threads` parts; the output must be the
/// records in a stable order by key (payloads included), and the volumes and I/O counts
/// exactly the plan's, as for the serial merge.
fn check_parallel<R: Record + std::fmt::Debug + PartialEq>(
    input: Vec<R>,
    fan_in: FanIn,
    threads: usize,
) -> SortOutcome {
    check_keeping(input, fan_in, threads, 0)
}

/// [`check_parallel`] with up to `resident` runs kept in memory for the merge; the data-free
/// replay of the plan must count what the sort moved.
fn check_keeping<R: Record + std::fmt::Debug + PartialEq>(
    input: Vec<R>,
    fan_in: FanIn,
    threads: usize,
    resident: u64,
) -> SortOutcome {
    use flashkit_em::sort::{read_records, sort_parallel, write_records};
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let plan = Plan::new(
        input.len() as u64,
        R::BYTES as u64,
        sizes,
        256 * 1024,
        fan_in,
    )
    .expect("plan")
    .keep_resident(resident);
    let layout = Layout::packed(&plan);
    let mut io = SimIo::with_data(sizes);
    write_records(&mut io, layout.input, &input).expect("input");
    let before = io.stats();
    let outcome = sort_parallel::<R, _>(&mut io, &plan, &layout, threads).expect("sort");
    let during = io.stats() - before;
    let sorted = read_records::<R, _>(&mut io, layout.output, input.len() as u64).expect("output");
    let mut expected = input;
    expected.sort_by_key(Record::key);
    assert!(
        sorted == expected,
        "{threads} threads, {fan_in:?}: wrong order"
    );
    let predicted = plan.volumes();
    for stats in [outcome.total, during] {
        assert_eq!(
            (
                stats.read_bytes,
                stats.write_bytes,
                stats.read_ios,
                stats.write_ios
            ),
            (
                predicted.read_bytes,
                predicted.write_bytes,
                predicted.read_ios,
                predicted.write_ios
            ),
            "{threads} threads, {fan_in:?}: volumes differ from the plan"
        );
    }
    let mut counting = SimIo::counting(sizes);
    let replayed = replay_plan(&mut counting, &plan, &layout).expect("replay");
    assert_eq!(replayed, outcome.total, "{threads} threads: replay differs");
    assert_eq!(outcome.merge_parts.len(), plan.merge_passes());
    outcome
}

/// Runs kept in memory merge like runs read back, serially and split in parts (with the
/// splitters cutting the resident runs in memory), stable with equal keys; the volumes
/// shrink by exactly the runs kept. 256 KiB with 2 KiB writes: runs of 64 KiB.
#[test]
fn resident_runs_merge_like_runs_on_the_device() {
    for threads in [1, 2, 3, 4] {
        let outcome = check_keeping(random::<u64>(100_000, 50), FanIn::Model, threads, 3);
        let plan = outcome.plan;
        assert_eq!((plan.runs, plan.resident), (13, 3));
        // The merge's memory: 256 KiB less the three runs kept (64 KiB each), 64 KiB; a part
        // merging the 10 runs read back holds 3 x 10 x 512 + 2 x 2048 = 19,456 B, so three
        // parts fit.
        assert_eq!(outcome.merge_parts, [threads.min(3)]);
        let all = plan.clone().keep_resident(0).volumes();
        let kept = plan.volumes();
        // Two full runs and the last of 1696 records (13,568 B: 7 writes of 2 KiB, 27
        // reads of 512 B).
        assert_eq!(all.write_bytes - kept.write_bytes, 2 * 65536 + 7 * 2048);
        assert_eq!(all.read_bytes - kept.read_bytes, 2 * 65536 + 27 * 512);
        // Every run resident: two runs.
        let plan = check_keeping(random::<u32>(20_000, 51), FanIn::Model, threads, 3).plan;
        assert_eq!((plan.runs, plan.resident), (2, 2));
        check_keeping(vec![5u64; 60_000], FanIn::Model, threads, 2);
        let mut rng = SimRng::for_stream(52, "stable-resident");
        let input: Vec<KeyPayload> = (0..40_000u64)
            .map(|i| {
                let mut r = KeyPayload::from_key(rng.random_range(0..7u64));
                r.payload = i;
                r
            })
            .collect();
        check_keeping(input, FanIn::Model, threads, 3);
    }
}

#[test]
fn parallel_merges_give_the_serial_output_and_volumes() {
    for threads in [2, 3, 4, 7] {
        let outcome = check_parallel(
            random::<u64>(100_000, 20 + threads as u64),
            FanIn::Model,
            threads,
        );
        // 13 runs in one merge; 256 KiB holds 10 parts of 3 x 13 x 512 + 2 x 2048 B.
        assert_eq!(
            (outcome.plan.runs, outcome.merge_parts),
            (13, vec![threads])
        );
        check_parallel(random::<u32>(150_001, 30), FanIn::Fixed(4), threads);
        // Multi-pass: 2-way merges, each split (the runs of later passes carry the block
        // index the merges wrote), and so is the one-way copy of a run left alone.
        let outcome = check_parallel(random::<u64>(70_000, 31), FanIn::Fixed(2), threads);
        let passes = outcome.plan.merge_passes();
        assert_eq!((outcome.plan.runs, passes), (9, 4));
        assert_eq!(outcome.merge_parts, vec![threads; passes]);
    }
    let mut sorted = random::<u64>(90_000, 32);
    sorted.sort_unstable();
    check_parallel(sorted.clone(), FanIn::Model, 2);
    sorted.reverse();
    check_parallel(sorted, FanIn::Model, 3);
    // Equal keys give no splitter: the merge stays whole.
    assert_eq!(
        check_parallel(vec![9u64; 50_000], FanIn::Model, 2).merge_parts,
        [1]
    );
    // No run, or one: no merge pass.
    assert!(
        check_parallel(Vec::<u64>::new(), FanIn::Model, 2)
            .merge_parts
            .is_empty()
    );
    assert!(
        check_parallel(vec![1u32], FanIn::Model, 2)
            .merge_parts
            .is_empty()
    );
}

#[test]
fn parallel_merges_are_stable_with_many_equal_keys() {
    // Keys from a handful of values with distinct payloads: a splitter lands inside long
    // stretches of equal keys, and the payloads must keep their input order.
    let mut rng = SimRng::for_stream(40, "stable");
    for (distinct, threads) in [(3u64, 2), (5, 4), (1000, 3)] {
        let input: Vec<KeyPayload> = (0..60_000u64)
            .map(|i| {
                let mut r = KeyPayload::from_key(rng.random_range(0..distinct) * 77);
                r.payload = i;
                r
            })
            .collect();
        check_parallel(input, FanIn::Model, threads);
    }
}

/// A device that corrupts what the sort reads back from its scratch area: the verification
/// inside the merge must notice, whichever way the data is damaged and however the merge
/// is split. (It lives in the merge's hot loop since 2026-11-25; this pins it.)
struct Corrupting {
    inner: SimIo,
    /// Addresses at or above this are scratch (runs), below it input and output.
    scratch_from: u64,
    damage: Damage,
    done: bool,
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    /// Swap the first two records of a block: out of order (unless equal).
    SwapFirstTwo,
    /// Change a record's payload, leaving every key in order: only the checksum sees it.
    Payload,
}

impl BlockIo for Corrupting {
    fn block_sizes(&self) -> BlockSizes {
        self.inner.block_sizes()
    }
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), flashkit_em::EmError> {
        self.inner.read(offset, buf)?;
        if offset >= self.scratch_from && !self.done {
            self.done = true;
            let records: &mut [KeyPayload] = bytemuck::cast_slice_mut(buf);
            match self.damage {
                Damage::SwapFirstTwo => records.swap(0, 1),
                Damage::Payload => records[3].payload ^= 1,
            }
        }
        Ok(())
    }
    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), flashkit_em::EmError> {
        self.inner.write(offset, buf)
    }
    fn stats(&self) -> flashkit_em::io::IoStats {
        self.inner.stats()
    }
    fn describe(&self) -> String {
        "a simulator that corrupts one scratch read".into()
    }
}

#[test]
fn the_merge_notices_a_corrupted_run() {
    use flashkit_em::sort::{sort_parallel, write_records};
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let mut input = random::<KeyPayload>(40_000, 40);
    for (i, r) in input.iter_mut().enumerate() {
        r.payload = i as u64;
    }
    let plan = Plan::new(input.len() as u64, 16, sizes, 256 * 1024, FanIn::Model).expect("plan");
    assert!(plan.runs > 1, "the test needs a merge");
    let layout = Layout::packed(&plan);
    let scratch_from = layout.scratch[0].min(layout.scratch[1]);
    for damage in [Damage::SwapFirstTwo, Damage::Payload] {
        for threads in [1, 2] {
            let mut io = Corrupting {
                inner: SimIo::with_data(sizes),
                scratch_from,
                damage,
                done: false,
            };
            write_records(&mut io, layout.input, &input).expect("input");
            let error = sort_parallel::<KeyPayload, _>(&mut io, &plan, &layout, threads)
                .expect_err("a corrupted run must not sort cleanly");
            assert!(io.done, "{damage:?}: nothing was corrupted");
            assert!(
                matches!(error, flashkit_em::EmError::Verify(_)),
                "{damage:?}, {threads} threads: {error}"
            );
        }
    }
}

/// Progress: run formation and every merge pass report all the input's records, from
/// however many threads, and nothing else (the CLI's bars rely on the totals).
#[test]
fn progress_reports_every_record_once_per_phase() {
    use flashkit_core::ProgressLog;
    use flashkit_em::sort::{sort_parallel_with_progress, write_records};

    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let wide = BlockSizes::new(512, 4096).expect("valid");
    for (sizes, records, fan_in, threads, resident, names) in [
        (
            sizes,
            100_000,
            FanIn::Model,
            2,
            3,
            vec!["run formation", "merge"],
        ),
        // Three runs, 2-way: the first pass copies the third run alone in 23 parts of 320
        // or 384 records (cut at its 512 B blocks), fewer than an output block's 512, so
        // some parts start and end inside one output block.
        (
            wide,
            3 * 8192,
            FanIn::Fixed(2),
            40,
            0,
            vec!["run formation", "merge pass 1/2", "merge pass 2/2"],
        ),
        (
            sizes,
            100_000,
            FanIn::Fixed(3),
            3,
            0,
            vec![
                "run formation",
                "merge pass 1/3",
                "merge pass 2/3",
                "merge pass 3/3",
            ],
        ),
    ] {
        let input = random::<u64>(records as usize, 60);
        let plan = Plan::new(records, 8, sizes, 256 * 1024, fan_in)
            .expect("plan")
            .keep_resident(resident);
        let layout = Layout::packed(&plan);
        let mut io = SimIo::with_data(sizes);
        write_records(&mut io, layout.input, &input).expect("input");
        let log = ProgressLog::default();
        let outcome = sort_parallel_with_progress::<u64, _>(&mut io, &plan, &layout, threads, &log)
            .expect("sort");
        if threads == 40 {
            assert_eq!(outcome.merge_parts, [23, 23]);
        }
        let phases = log.phases();
        let seen: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(seen, names);
        for phase in &phases {
            assert_eq!(
                (phase.total, phase.done),
                (Some(records), records),
                "{}",
                phase.name
            );
        }
    }
}

/// The data-free replay moves exactly the blocks the sort moves, at the same addresses
/// (grouped and ordered differently): in one pass with runs kept in memory, in several
/// passes, with a last run shorter than the others.
#[test]
fn the_replay_moves_the_sorts_blocks_at_the_sorts_addresses() {
    use flashkit_em::sort::{sort, write_records};
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    for (records, fan_in, resident) in [
        (100_001u64, FanIn::Model, 3),
        (70_000, FanIn::Fixed(2), 0),
        (70_000, FanIn::Fixed(3), 0),
    ] {
        let plan = Plan::new(records, 8, sizes, 256 * 1024, fan_in)
            .expect("plan")
            .keep_resident(resident);
        // The areas apart from each other, so an address in the wrong one shows.
        let layout = Layout::packed_at(1 << 20, &plan);
        let mut io = Logged::with_data(sizes);
        write_records(&mut io, layout.input, &random::<u64>(records as usize, 60)).expect("input");
        let before = io.log.len();
        let outcome = sort::<u64, _>(&mut io, &plan, &layout).expect("sort");
        let sorted = io.blocks_since(before);
        // Replayed on the device after the sort: the replay counts its own transfers only.
        let before = io.log.len();
        let replayed = replay_plan(&mut io, &plan, &layout).expect("replay");
        assert_eq!(replayed, outcome.total);
        assert!(
            sorted == io.blocks_since(before),
            "{records} records, {fan_in:?}: the replay moved other blocks"
        );
        assert_eq!(plan.resident, resident.min(3));
    }
}

/// The merge reads each run ahead in requests of several blocks: with 13 inputs and
/// 256 KiB, 8 blocks of 512 B an input fit, read in two requests of 4 blocks in flight. So
/// each full run of 64 KiB (128 blocks) is read in 32 requests of 2 KiB, and the last
/// (1,696 records: 27 blocks) in six of 2 KiB and one of 1.5 KiB, in order; the merge's
/// memory holds two requests an input, no more.
#[test]
fn the_merge_reads_ahead_in_requests_of_several_blocks() {
    use flashkit_em::sort::{sort, write_records};
    let sizes = BlockSizes::new(512, 2048).expect("valid");
    let plan = Plan::new(100_000, 8, sizes, 256 * 1024, FanIn::Model).expect("plan");
    assert_eq!((plan.runs, plan.merge_passes()), (13, 1));
    let layout = Layout::packed(&plan);
    let mut io = Logged::with_data(sizes);
    write_records(&mut io, layout.input, &random::<u64>(100_000, 61)).expect("input");
    sort::<u64, _>(&mut io, &plan, &layout).expect("sort");
    let runs = layout.scratch[0];
    // Each run merged away was discarded whole: its area reads as never written.
    let mut area = vec![1u8; (layout.scratch[1] - runs) as usize];
    io.sim.read(runs, &mut area).expect("read");
    assert!(area.iter().all(|&b| b == 0), "a run left behind");
    let mut reads: Vec<Vec<(u64, usize)>> = vec![Vec::new(); 13];
    for &(write, offset, len) in &io.log {
        if !write && (runs..layout.scratch[1]).contains(&offset) {
            reads[((offset - runs) / 65536) as usize].push((offset - runs, len));
        }
    }
    // Two requests in flight an input: the merge starts by asking for every run's first two.
    let first: Vec<u64> = io
        .log
        .iter()
        .filter(|&&(write, offset, _)| !write && (runs..layout.scratch[1]).contains(&offset))
        .take(26)
        .map(|&(_, offset, _)| offset - runs)
        .collect();
    let expected: Vec<u64> = (0..13u64)
        .flat_map(|run| [run * 65536, run * 65536 + 2048])
        .collect();
    assert_eq!(first, expected);
    for (run, requests) in reads.iter().enumerate() {
        let base = run as u64 * 65536;
        let mut expected: Vec<(u64, usize)> = (0..32).map(|r| (base + r * 2048, 2048)).collect();
        if run == 12 {
            expected.truncate(7);
            expected[6].1 = 1536;
        }
        assert_eq!(requests, &expected, "run {run}");
    }
}
