//! A small, fixed page-FTL run for instruction counts: fill a 1 GiB drive (7% spare), then
//! random single-page overwrites, page table, greedy GC; prints the device counters so a
//! change in behaviour shows.
//!
//! `valgrind --tool=callgrind target/release/examples/page_churn [WRITES]`

use flashkit_core::{Geometry, Lpn, PageRange, SimRng, SimRngExt};
use flashkit_device::{CountsOnly, NandDevice};
use flashkit_ftl::Inspect;
use flashkit_ftl::{Ftl, PageFtl, PageFtlConfig};
use rand::Rng;

fn main() {
    let writes: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(400_000);
    let geometry = Geometry::builder()
        .page_size_bytes(4096)
        .pages_per_block(128)
        .logical_bytes(1 << 30)
        .over_provisioning(0.07)
        .build()
        .expect("valid geometry");
    let device = NandDevice::<CountsOnly>::new(geometry);
    let mut ftl = PageFtl::with_page_table(device, PageFtlConfig::default()).expect("builds");
    let pages = geometry.logical_pages();
    for lpn in 0..pages {
        ftl.write(PageRange::one(Lpn(lpn)), u64::from(lpn))
            .expect("fill");
    }
    let mut rng = SimRng::for_stream(1, "page-churn");
    for seq in 0..writes {
        let lpn = rng.random_range(0..pages);
        ftl.write(PageRange::one(Lpn(lpn)), seq).expect("write");
    }
    let counters = ftl.device().counters();
    println!(
        "programs {} erases {} gc pages moved {}",
        counters.programs.total(),
        counters.erases.total(),
        ftl.stats().gc_pages_moved
    );
}
