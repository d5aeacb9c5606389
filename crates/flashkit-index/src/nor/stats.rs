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
