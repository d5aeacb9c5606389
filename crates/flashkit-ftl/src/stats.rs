//! FTL statistics beyond the device counters: the figures every scheme keeps (GC and
//! wear-leveling work, retired blocks) and the scheme-specific ones, each named by a variant
//! of [`Gauge`], [`Counter`] or [`Average`] so that the set of figures a report can show is
//! closed and documented here, not spelt at each use.

use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;

/// Declares an enumeration of statistic names: each variant's text is its name in reports
/// and JSON (`ftl_<name>` among a run's metrics). Variants are listed in the order of their
/// names, which is the order maps keyed by them iterate and serialize in (a test checks it).
macro_rules! stat_names {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every name, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The name (`free_blocks`).
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
    };
}

stat_names! {
    /// A value at the moment of a snapshot, which a measurement window does not subtract.
    Gauge {
        /// Page FTL: heap bytes of its own bookkeeping (block table, reverse map, validity).
        BookkeepingHeapBytes = "bookkeeping_heap_bytes",
        /// EMT: extents in the tree.
        EmtExtents = "emt_extents",
        /// EMT: extents a write overlapped, on average.
        EmtOverlappedPerWrite = "emt_overlapped_per_write",
        /// EMT: runs merged into a neighbour by garbage-collection relocations.
        EmtRelocationMerges = "emt_relocation_merges",
        /// EMT: runs garbage collection relocated.
        EmtRelocationRuns = "emt_relocation_runs",
        /// EMT: runs a read returned, on average.
        EmtReturnedPerRead = "emt_returned_per_read",
        /// Free blocks.
        FreeBlocks = "free_blocks",
        /// Hybrid FTLs: log blocks holding pages.
        LogBlocksInUse = "log_blocks_in_use",
        /// Hybrid FTLs: logical blocks mapped to a data block.
        MappedBlocks = "mapped_blocks",
        /// Page FTL: logical pages mapped.
        MappedPages = "mapped_pages",
        /// VET: canonical extents a write generated, on average.
        VetCanonicalGeneratedPerWrite = "vet_canonical_generated_per_write",
        /// VET: canonical extents a write overlapped, on average.
        VetCanonicalOverlappedPerWrite = "vet_canonical_overlapped_per_write",
        /// VET: canonical extents a read returned, on average.
        VetCanonicalReturnedPerRead = "vet_canonical_returned_per_read",
        /// VET: extents stored.
        VetExtents = "vet_extents",
        /// VET: internal nodes.
        VetInternalNodes = "vet_internal_nodes",
        /// VET: leaves.
        VetLeaves = "vet_leaves",
        /// VET: hash-table probes a read's searches made, on average.
        VetProbesPerRead = "vet_probes_per_read",
        /// VET: runs merged into a neighbour by garbage-collection relocations.
        VetRelocationMerges = "vet_relocation_merges",
        /// VET: runs garbage collection relocated.
        VetRelocationRuns = "vet_relocation_runs",
    }
}

stat_names! {
    /// A count of events since the FTL was built, which a measurement window subtracts.
    Counter {
        /// Hybrid FTLs: full merges.
        FullMerges = "full_merges",
        /// Hybrid FTLs: pages written in place after the merge their collision caused left
        /// their block shorter (trimmed or never-written last pages).
        InPlaceAfterMerge = "in_place_after_merge",
        /// O-FAST: merges its lazy policy skipped.
        LazyMergesSkipped = "lazy_merges_skipped",
        /// Hybrid FTLs: erases merges caused.
        MergeErases = "merge_erases",
        /// Hybrid FTLs: erases of data blocks by merges.
        MergeErasesDataBlocks = "merge_erases_data_blocks",
        /// Hybrid FTLs: erases of log blocks by merges.
        MergeErasesLogBlocks = "merge_erases_log_blocks",
        /// Hybrid FTLs: pages programmed to pad a block in offset order.
        PaddingPrograms = "padding_programs",
        /// Hybrid FTLs: partial merges.
        PartialMerges = "partial_merges",
        /// Hybrid FTLs: switch merges.
        SwitchMerges = "switch_merges",
        /// FAST: log blocks chosen as victims.
        Victims = "victims",
    }
}

stat_names! {
    /// An average over events, kept as sum and count so that a window can be taken.
    Average {
        /// FAST: data blocks merged per victim log block.
        DataBlocksPerVictim = "data_blocks_per_victim",
        /// Hybrid FTLs: a log block's pages in use when it is replaced, percent.
        LogUtilisationPercent = "log_utilisation_percent",
        /// FAST: the SW log block's pages in use when it is replaced, percent.
        SwUtilisationPercent = "sw_utilisation_percent",
    }
}

/// FTL-level statistics beyond the device counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FtlStats {
    /// Garbage-collection (or merge) runs: victims reclaimed.
    pub gc_runs: u64,
    /// Valid pages copied by garbage collection.
    pub gc_pages_moved: u64,
    /// Wear-leveling relocations.
    pub wear_level_runs: u64,
    /// Valid pages copied by wear leveling.
    pub wear_level_pages_moved: u64,
    /// Blocks retired after wearing out.
    pub retired_blocks: u64,
    /// Scheme-specific gauges (free blocks, mapped pages, ...), by [`Gauge`]: values at the moment
    /// of the snapshot, which a measurement window does not subtract.
    pub extra: BTreeMap<Gauge, f64>,
    /// Scheme-specific event counts (merges by kind, erases they caused, ...), by [`Counter`]: counts
    /// since the FTL was built, which a measurement window subtracts.
    pub counters: BTreeMap<Counter, u64>,
    /// Scheme-specific averages over events (log-block utilisation at replacement, data
    /// blocks merged per victim, ...), by [`Average`], kept as sum and count so that a window can be taken.
    pub means: BTreeMap<Average, Mean>,
}

impl FtlStats {
    /// The statistics of the window since `before` (an earlier snapshot of the same FTL):
    /// counters and means cover the window; gauges keep their values now.
    pub fn since(&self, before: &FtlStats) -> FtlStats {
        let counters = self
            .counters
            .iter()
            .map(|(name, &now)| {
                let earlier = before.counters.get(name).copied().unwrap_or(0);
                (*name, now.saturating_sub(earlier))
            })
            .collect();
        let means = self
            .means
            .iter()
            .map(|(name, now)| {
                let earlier = before.means.get(name).copied().unwrap_or_default();
                (*name, now.since(&earlier))
            })
            .collect();
        FtlStats {
            gc_runs: self.gc_runs - before.gc_runs,
            gc_pages_moved: self.gc_pages_moved - before.gc_pages_moved,
            wear_level_runs: self.wear_level_runs - before.wear_level_runs,
            wear_level_pages_moved: self.wear_level_pages_moved - before.wear_level_pages_moved,
            retired_blocks: self.retired_blocks - before.retired_blocks,
            extra: self.extra.clone(),
            counters,
            means,
        }
    }
}

/// An average over events, kept as a running sum and count (so that the average over a
/// window is `(sum - sum_before) / (count - count_before)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Mean {
    /// Sum of the observed values.
    pub sum: f64,
    /// Number of observations.
    pub count: u64,
}

impl Mean {
    /// Observe one value.
    pub fn add(&mut self, value: f64) {
        self.sum += value;
        self.count += 1;
    }

    /// The average, or `None` before the first observation.
    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// The observations since an earlier snapshot.
    pub fn since(&self, before: &Mean) -> Mean {
        Mean {
            sum: self.sum - before.sum,
            count: self.count.saturating_sub(before.count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> bool {
        all.windows(2).all(|w| name(w[0]) < name(w[1]))
    }

    /// Maps keyed by the names iterate in the names' order, as maps keyed by the text did:
    /// reports and JSON list the figures alphabetically.
    #[test]
    fn names_are_declared_in_their_alphabetical_order() {
        assert!(sorted_by_name(Gauge::ALL, Gauge::name));
        assert!(sorted_by_name(Counter::ALL, Counter::name));
        assert!(sorted_by_name(Average::ALL, Average::name));
        let json = serde_json::to_string(&FtlStats {
            extra: [(Gauge::MappedPages, 2.0), (Gauge::FreeBlocks, 1.0)].into(),
            counters: [(Counter::Victims, 3)].into(),
            ..FtlStats::default()
        })
        .expect("serializable");
        assert!(
            json.contains(r#""extra":{"free_blocks":1.0,"mapped_pages":2.0}"#)
                && json.contains(r#""counters":{"victims":3}"#),
            "{json}"
        );
    }

    #[test]
    fn a_window_subtracts_counters_and_means_but_not_gauges() {
        let mut before = FtlStats {
            gc_runs: 2,
            gc_pages_moved: 10,
            wear_level_runs: 1,
            wear_level_pages_moved: 20,
            retired_blocks: 1,
            extra: [(Gauge::FreeBlocks, 9.0)].into(),
            counters: [(Counter::SwitchMerges, 4)].into(),
            ..FtlStats::default()
        };
        before
            .means
            .entry(Average::LogUtilisationPercent)
            .or_default()
            .add(50.0);
        let mut now = before.clone();
        now.gc_runs = 5;
        now.gc_pages_moved = 25;
        now.wear_level_runs = 4;
        now.wear_level_pages_moved = 50;
        now.retired_blocks = 2;
        now.extra.insert(Gauge::FreeBlocks, 3.0);
        now.counters.insert(Counter::SwitchMerges, 10);
        now.counters.insert(Counter::FullMerges, 1);
        now.means
            .entry(Average::LogUtilisationPercent)
            .or_default()
            .add(100.0);
        let window = now.since(&before);
        assert_eq!(
            (
                window.gc_runs,
                window.gc_pages_moved,
                window.wear_level_runs,
                window.wear_level_pages_moved,
                window.retired_blocks
            ),
            (3, 15, 3, 30, 1)
        );
        assert_eq!(Mean::default().value(), None, "no observation, no average");
        assert_eq!(window.extra[&Gauge::FreeBlocks], 3.0);
        assert_eq!(window.counters[&Counter::SwitchMerges], 6);
        assert_eq!(window.counters[&Counter::FullMerges], 1);
        assert_eq!(
            window.means[&Average::LogUtilisationPercent].value(),
            Some(100.0)
        );
    }
}
