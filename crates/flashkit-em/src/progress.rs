//! How far a long run has got, reported to whoever draws it (the CLI's progress bars); the
//! library itself never prints.

/// Receives a run's phases and the units of work done in each. Several threads of one
/// parallel merge report into the same sink, so it is shared (`&self`, `Sync`).
pub trait Progress: Sync {
    /// A phase starts: `total` units (records) to do.
    fn phase(&self, name: &str, total: u64);
    /// `units` more units of the current phase are done.
    fn advance(&self, units: u64);
    /// The run is over.
    fn finish(&self) {}
}

/// Reports nowhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self, _units: u64) {}
}
