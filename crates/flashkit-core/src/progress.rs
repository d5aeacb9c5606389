//! How far a long run has got, reported to whoever draws it (the binary's progress bars);
//! no library prints.

/// Receives a run's phases and the units of work done in each.
///
/// One trait for every long run, the simulator's trace runs and sweeps as well as the
/// external-memory sorts. Several threads of one parallel merge or sweep report into the same
/// sink, so it is shared (`&self`, `Sync`); callers report in coarse steps (tens of thousands
/// of requests, or a 16 MiB block), so a sink may take a lock.
pub trait Progress: Sync {
    /// A phase starts; `total` units of work if known. It ends the phase before it.
    fn start(&self, phase: &str, total: Option<u64>);
    /// `units` more units of the current phase are done.
    fn advance(&self, units: u64);
    /// The run is over.
    fn finish(&self) {}
}

/// Progress that goes nowhere.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _phase: &str, _total: Option<u64>) {}
    fn advance(&self, _units: u64) {}
}
