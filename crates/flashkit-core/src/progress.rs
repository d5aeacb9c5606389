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

/// Progress kept as a list: each phase with its total and the units reported in it, in the
/// order they started. For tests that check what a run reports, and for a caller that wants
/// the figures rather than a bar.
#[derive(Debug, Default)]
pub struct ProgressLog(std::sync::Mutex<Vec<PhaseLog>>);

/// One phase a [`ProgressLog`] saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseLog {
    /// The phase's name.
    pub name: String,
    /// The total it announced.
    pub total: Option<u64>,
    /// The units reported done in it.
    pub done: u64,
}

impl PhaseLog {
    /// A phase of `name` that announced `total` and reported `done` units.
    pub fn new(name: &str, total: Option<u64>, done: u64) -> PhaseLog {
        PhaseLog {
            name: name.into(),
            total,
            done,
        }
    }
}

impl ProgressLog {
    /// The phases so far.
    pub fn phases(&self) -> Vec<PhaseLog> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PhaseLog>> {
        // A reporter that panicked mid-update leaves a list that is still whole.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Progress for ProgressLog {
    fn start(&self, phase: &str, total: Option<u64>) {
        self.lock().push(PhaseLog::new(phase, total, 0));
    }

    /// Units reported before any phase started go to an unnamed one.
    fn advance(&self, units: u64) {
        let mut phases = self.lock();
        if phases.is_empty() {
            phases.push(PhaseLog::new("", None, 0));
        }
        if let Some(last) = phases.last_mut() {
            last.done += units;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_keeps_each_phase_its_total_and_its_units() {
        let log = ProgressLog::default();
        log.advance(2);
        log.start("fill", Some(10));
        log.advance(4);
        log.advance(6);
        log.start("replay", None);
        log.finish();
        assert_eq!(
            log.phases(),
            [
                PhaseLog::new("", None, 2),
                PhaseLog::new("fill", Some(10), 10),
                PhaseLog::new("replay", None, 0),
            ]
        );
    }
}
