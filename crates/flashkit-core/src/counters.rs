//! Operation counters split by the reason the operation happened.

use serde::Serialize;
use std::ops::{Index, IndexMut};

/// Why a flash operation was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// On behalf of a host request (including a read-modify-write's read).
    Host,
    /// Garbage collection or a log-block merge: moving valid data to reclaim space.
    Gc,
    /// Wear leveling: moving cold data off little-worn blocks.
    WearLeveling,
    /// FTL metadata (mapping pages, checkpoints).
    Metadata,
}

impl Cause {
    /// Every cause, in report order.
    pub const ALL: [Cause; 4] = [Cause::Host, Cause::Gc, Cause::WearLeveling, Cause::Metadata];
}

/// One counter per [`Cause`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ByCause {
    /// Host requests.
    pub host: u64,
    /// Garbage collection and merges.
    pub gc: u64,
    /// Wear leveling.
    pub wear_leveling: u64,
    /// Metadata.
    pub metadata: u64,
}

impl ByCause {
    /// Sum over all causes.
    pub fn total(&self) -> u64 {
        self.host + self.gc + self.wear_leveling + self.metadata
    }

    /// Counts since an earlier snapshot.
    pub fn since(&self, earlier: &ByCause) -> ByCause {
        ByCause {
            host: self.host - earlier.host,
            gc: self.gc - earlier.gc,
            wear_leveling: self.wear_leveling - earlier.wear_leveling,
            metadata: self.metadata - earlier.metadata,
        }
    }
}

impl Index<Cause> for ByCause {
    type Output = u64;
    #[inline(always)]
    fn index(&self, cause: Cause) -> &u64 {
        match cause {
            Cause::Host => &self.host,
            Cause::Gc => &self.gc,
            Cause::WearLeveling => &self.wear_leveling,
            Cause::Metadata => &self.metadata,
        }
    }
}

impl IndexMut<Cause> for ByCause {
    #[inline(always)]
    fn index_mut(&mut self, cause: Cause) -> &mut u64 {
        match cause {
            Cause::Host => &mut self.host,
            Cause::Gc => &mut self.gc,
            Cause::WearLeveling => &mut self.wear_leveling,
            Cause::Metadata => &mut self.metadata,
        }
    }
}

/// Page reads, page programs and block erases, each split by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OpCounters {
    /// Page reads.
    pub reads: ByCause,
    /// Page programs.
    pub programs: ByCause,
    /// Block erases.
    pub erases: ByCause,
}

impl OpCounters {
    /// Counts since an earlier snapshot of the same device.
    pub fn since(&self, earlier: &OpCounters) -> OpCounters {
        OpCounters {
            reads: self.reads.since(&earlier.reads),
            programs: self.programs.since(&earlier.programs),
            erases: self.erases.since(&earlier.erases),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cause counted apart, summed, indexed and differenced (found by mutation
    /// testing: no test looked at a cause but the host's).
    #[test]
    fn causes_are_counted_apart_and_differenced() {
        let counts = |host, gc, wear_leveling, metadata| ByCause {
            host,
            gc,
            wear_leveling,
            metadata,
        };
        let later = counts(100, 70, 40, 20);
        let earlier = counts(10, 20, 30, 5);
        assert_eq!(later.total(), 230);
        assert_eq!(later.since(&earlier), counts(90, 50, 10, 15));
        for (cause, value) in [
            (Cause::Host, 100),
            (Cause::Gc, 70),
            (Cause::WearLeveling, 40),
            (Cause::Metadata, 20),
        ] {
            assert_eq!(later[cause], value, "{cause:?}");
        }
        let ops = |c: ByCause| OpCounters {
            reads: c,
            programs: counts(c.host * 2, c.gc * 2, c.wear_leveling * 2, c.metadata * 2),
            erases: counts(c.host * 3, c.gc * 3, c.wear_leveling * 3, c.metadata * 3),
        };
        assert_eq!(ops(later).since(&ops(earlier)), ops(counts(90, 50, 10, 15)));
    }
}
