//! The sort keeps within its memory `M`: every byte it allocates on the heap is counted
//! (dhat's testing mode, this test binary's allocator), and the peak must stay below `M`
//! plus the plan's own bookkeeping. The device counts only, so it holds no data of its own.

use flashkit_em::io::{BlockSizes, SimIo};
use flashkit_em::sort::{FanIn, Layout, Plan, sort};

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

/// A serial sort of 2^20 u64 (8 MiB, 32 runs of 256 KiB) with `M` = 1 MiB, one pass of a
/// 32-way merge: run formation holds its four run buffers (exactly `M`), the merge each
/// input's read-ahead and two output blocks; nothing else grows with the input but the
/// plan's lists and the runs' block index (8 B a 4 KiB block: 16 KiB).
#[test]
fn a_sort_allocates_no_more_than_its_memory_and_its_bookkeeping() {
    let sizes = BlockSizes::new(4096, 16384).expect("valid");
    let memory = 1 << 20;
    let plan = Plan::new(1 << 20, 8, sizes, memory, FanIn::Model).expect("plan");
    assert_eq!((plan.runs, plan.merge_passes()), (32, 1));
    let layout = Layout::packed(&plan);
    let mut io = SimIo::counting(sizes);
    let profiler = dhat::Profiler::builder().testing().build();
    sort::<u64, _>(&mut io, &plan, &layout).expect("sort");
    let peak = dhat::HeapStats::get().max_bytes;
    drop(profiler);
    assert!(
        peak >= memory as usize,
        "run formation's buffers alone are M: {peak} B"
    );
    assert!(
        peak <= memory as usize + (64 << 10),
        "{peak} B at the peak, M = {memory} B"
    );
}
