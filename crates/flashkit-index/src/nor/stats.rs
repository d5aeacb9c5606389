//! Probe statistics (the table in section 0.6.3 of the fat-list paper) and structure counters.

use serde::Serialize;

/// What de-referencing soft pointers produced. The paper's table reports each kind per
/// pointer visited (its rows sum to probes per pointer, which is how we read them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ProbeStats {
    /// Soft pointers de-referenced.
    pub pointers_visited: u64,
    /// Memory locations probed.
    pub probes: u64,
    /// Probes that moved the search forward.
    pub successful: u64,
    /// Probes of an object that does not hook on the current level.
    pub low: u64,
    /// Probes of an object past the searched key.
    pub over: u64,
    /// Probes of an object before the current one (or the current one itself).
    pub back: u64,
    /// Probes of free space or an invalid object.
    pub null: u64,
}

impl ProbeStats {
    /// Feed every counter to `hasher`.
    pub(crate) fn hash_state(&self, hasher: &mut flashkit_core::StateHasher) {
        for n in [
            self.pointers_visited,
            self.probes,
            self.successful,
            self.low,
            self.over,
            self.back,
            self.null,
        ] {
            hasher.u64(n);
        }
    }

    /// Counts since an earlier snapshot.
    pub fn since(&self, earlier: &ProbeStats) -> ProbeStats {
        ProbeStats {
            pointers_visited: self.pointers_visited - earlier.pointers_visited,
            probes: self.probes - earlier.probes,
            successful: self.successful - earlier.successful,
            low: self.low - earlier.low,
            over: self.over - earlier.over,
            back: self.back - earlier.back,
            null: self.null - earlier.null,
        }
    }

    /// A kind's count per pointer visited (the paper's table), 0 when nothing was visited.
    pub fn per_pointer(&self, count: u64) -> f64 {
        if self.pointers_visited == 0 {
            0.0
        } else {
            count as f64 / self.pointers_visited as f64
        }
    }
}

/// Counters of structural work, by name, plus probe statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IndexStats {
    /// Soft-pointer probes (all zero for the mu-tree).
    pub probes: ProbeStats,
    /// Structure-specific counters (splits, merges, rewrites, collections, ...), in a fixed
    /// order.
    pub counters: Vec<(&'static str, u64)>,
}

impl IndexStats {
    /// A counter by name, 0 if the structure has no such counter.
    pub fn counter(&self, name: &str) -> u64 {
        self.counters
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |&(_, v)| v)
    }
}

/// What a boot-up initialization cost and found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BootReport {
    /// Word reads spent (all of them counted under `Cause::Metadata`).
    pub word_reads: u64,
    /// Objects or pages the procedure visited.
    pub steps: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(n: u64) -> ProbeStats {
        ProbeStats {
            pointers_visited: 10 * n,
            probes: 9 * n,
            successful: 8 * n,
            low: 7 * n,
            over: 6 * n,
            back: 5 * n,
            null: 4 * n,
        }
    }

    /// A window of probe counts subtracts every count.
    #[test]
    fn probe_counts_since_a_snapshot_subtract_every_count() {
        assert_eq!(stats(5).since(&stats(2)), stats(3));
    }

    /// The paper's table: a kind's count over the pointers visited, 0 before any.
    #[test]
    fn a_kind_per_pointer_is_its_count_over_the_pointers_visited() {
        let s = stats(2);
        assert_eq!(s.per_pointer(s.probes), 0.9);
        assert_eq!(s.per_pointer(s.null), 0.4);
        assert_eq!(ProbeStats::default().per_pointer(3), 0.0);
    }

    /// Every count reaches the hash, each in a place of its own.
    #[test]
    fn every_probe_count_reaches_the_hash() {
        let hash = |s: &ProbeStats| {
            let mut h = flashkit_core::StateHasher::new();
            s.hash_state(&mut h);
            h.finish()
        };
        let base = stats(1);
        let mut seen = vec![hash(&base)];
        let fields: [fn(&mut ProbeStats) -> &mut u64; 7] = [
            |s| &mut s.pointers_visited,
            |s| &mut s.probes,
            |s| &mut s.successful,
            |s| &mut s.low,
            |s| &mut s.over,
            |s| &mut s.back,
            |s| &mut s.null,
        ];
        for (i, field) in fields.iter().enumerate() {
            let mut s = base;
            *field(&mut s) += 1;
            let h = hash(&s);
            assert!(!seen.contains(&h), "count {i} does not reach the hash");
            seen.push(h);
        }
    }

    /// A counter by name; one the structure does not keep reads 0.
    #[test]
    fn a_counter_is_found_by_name() {
        let stats = IndexStats {
            probes: ProbeStats::default(),
            counters: vec![("splits", 4), ("merges", 0), ("gc_runs", 9)],
        };
        assert_eq!(stats.counter("splits"), 4);
        assert_eq!(stats.counter("gc_runs"), 9);
        assert_eq!(stats.counter("merges"), 0);
        assert_eq!(stats.counter("rewrites"), 0);
    }
}
