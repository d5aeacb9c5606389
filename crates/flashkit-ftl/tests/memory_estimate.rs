//! `FtlKind::heap_estimate` and `NandDevice::heap_estimate` against the heap the models
//! really come to hold. Each scheme (every VET layout and table, both GC index kinds, the
//! log-block FTLs with two log-block counts) is driven over devices of 32 to 512 pages a
//! block to the worst case for its tables: every logical page written once, one page at a
//! time in random order (for an extent mapping, every page its own extent), then twice the
//! device in random single-page overwrites; the measured heap (device, mapping,
//! bookkeeping), sampled every 97 writes, must never exceed the estimate, and the estimate
//! must stay within three times the peak (a bound that says nothing is no estimate).

use flashkit_core::{Geometry, Lpn, PageRange, SimRng, SimRngExt};
use flashkit_device::{CountsOnly, NandDevice};
use flashkit_ftl::Inspect;
use flashkit_ftl::{
    AnyFtl, Ftl, FtlKind, FtlOptions, GcPolicy, HybridConfig, PageFtlConfig, VetConfig, VetNodes,
    VetTable,
};
use rand::Rng;
use rand::seq::SliceRandom;

fn variants() -> Vec<(String, FtlKind, FtlOptions)> {
    let mut all = vec![];
    for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit, GcPolicy::Fifo] {
        let page = PageFtlConfig {
            gc_policy: policy,
            ..PageFtlConfig::default()
        };
        for kind in [FtlKind::Page, FtlKind::Emt] {
            let options = FtlOptions {
                page,
                ..FtlOptions::default()
            };
            all.push((format!("{kind}/{policy}"), kind, options));
        }
    }
    for log_blocks in [4, 16] {
        let hybrid = HybridConfig {
            log_blocks,
            ..HybridConfig::default()
        };
        for kind in [FtlKind::Block, FtlKind::Bast, FtlKind::Fast, FtlKind::OFast] {
            let options = FtlOptions {
                hybrid,
                ..FtlOptions::default()
            };
            all.push((format!("{kind}/{log_blocks}"), kind, options));
        }
    }
    for nodes in VetNodes::ALL {
        for table in [VetTable::Cuckoo, VetTable::Swiss, VetTable::Std] {
            let vet = VetConfig {
                nodes,
                table,
                ..VetConfig::default()
            };
            let options = FtlOptions {
                vet,
                ..FtlOptions::default()
            };
            all.push((format!("vet/{nodes}/{table}"), FtlKind::Vet, options));
        }
    }
    all
}

/// The heap the run holds now: the device model, the mapping, the page FTL's bookkeeping.
fn measured(ftl: &AnyFtl<CountsOnly>) -> u64 {
    let bookkeeping = ftl
        .stats()
        .extra
        .get(&flashkit_ftl::Gauge::BookkeepingHeapBytes)
        .copied()
        .unwrap_or(0.0) as u64;
    ftl.device().heap_bytes() as u64 + ftl.mapping_memory().heap_bytes + bookkeeping
}

/// The most heap `ftl` held over the worst-case workload.
fn peak(mut ftl: AnyFtl<CountsOnly>, pages: u32, seed: u64) -> u64 {
    let mut rng = SimRng::for_stream(seed, "memory estimate");
    let mut order: Vec<u32> = (0..pages).collect();
    order.shuffle(&mut rng);
    let overwrites = (0..2 * pages)
        .map(|_| rng.random_range(0..pages))
        .collect::<Vec<_>>();
    let mut peak = 0;
    for (seq, lpn) in order.into_iter().chain(overwrites).enumerate() {
        ftl.write(PageRange::new(Lpn(lpn), 1), seq as u64 + 1)
            .expect("the workload fits");
        if seq % 97 == 0 {
            peak = peak.max(measured(&ftl));
        }
    }
    peak.max(measured(&ftl))
}

/// Whether to run the quick suite (`FLASHKIT_QUICK_TESTS=1`): the two smaller geometries
/// only, a subset of the full suite, so that whatever it catches the full suite catches
/// too. Mutation runs use it (scripts/mutants.sh); `cargo test` runs the full one.
fn quick() -> bool {
    std::env::var_os("FLASHKIT_QUICK_TESTS").is_some_and(|v| v == "1")
}

/// Checks the estimate of every variant `family` selects on each test geometry.
fn estimate_bounds_the_peak(family: fn(FtlKind) -> bool) {
    let mut failures = Vec::new();
    let mut checked = 0;
    let geometries = [(256u32, 64u32), (700, 32), (1024, 128), (160, 512)];
    let geometries = if quick() {
        &geometries[..2]
    } else {
        &geometries[..]
    };
    for &(logical_blocks, pages_per_block) in geometries {
        let geometry = Geometry::builder()
            .page_size_bytes(4096)
            .pages_per_block(pages_per_block)
            .logical_bytes(u64::from(logical_blocks * pages_per_block) * 4096)
            .over_provisioning(0.12)
            .build()
            .expect("a valid geometry");
        for (name, kind, options) in variants().into_iter().filter(|(_, kind, _)| family(*kind)) {
            checked += 1;
            let estimate = kind.heap_estimate(&geometry, &options)
                + NandDevice::<CountsOnly>::heap_estimate(&geometry);
            let device = NandDevice::<CountsOnly>::new(geometry);
            let ftl = AnyFtl::build(kind, device, &options).expect("builds");
            let peak = peak(ftl, geometry.logical_pages(), 1);
            if peak > estimate || estimate > 3 * peak {
                failures.push(format!(
                    "{name} on {logical_blocks} blocks of {pages_per_block} pages: peak {peak} B, \
                     estimate {estimate} B"
                ));
            }
        }
    }
    assert!(checked > 0, "the family names no variant");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// Three tests, not one, so that the test harness runs them on every core.

#[test]
fn the_estimate_bounds_the_heap_of_the_page_mapped_schemes() {
    estimate_bounds_the_peak(|kind| matches!(kind, FtlKind::Page | FtlKind::Emt));
}

#[test]
fn the_estimate_bounds_the_heap_of_the_block_and_log_block_schemes() {
    estimate_bounds_the_peak(|kind| {
        matches!(
            kind,
            FtlKind::Block | FtlKind::Bast | FtlKind::Fast | FtlKind::OFast
        )
    });
}

#[test]
fn the_estimate_bounds_the_heap_of_every_vet_layout() {
    estimate_bounds_the_peak(|kind| kind == FtlKind::Vet);
}
