//! Multilevel soft lists (sections 0.3 and 0.4 of the fat-list paper): one key per index
//! object, a soft pointer per level with a fixed run of spare pointer slots for logging its
//! new versions, levels drawn with probability p. With one level this is the simple soft
//! list of section 0.3.
//!
//! What it is not: the paper gives soft lists no value updates; here an update rewrites the
//! object out of place (its predecessors log the new location), the same rule the paper
//! applies when spare pointers run out.
//!
//! Key decision: it runs on the same engine as [`crate::nor::FatList`] with m = n = 1 and
//! per-level pointer runs, so the two are measured by the same search, allocation and
//! garbage-collection code.

use super::list::{Engine, ListConfig, ListIndex, PointerArea, forward_list_index};
use super::{BootReport, IndexError, NorIndex};
use flashkit_device::NorDevice;

/// Soft-list parameters.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct SoftListConfig {
    /// Blocks per turnstile (8).
    pub turnstile_blocks: u32,
    /// Levels (5; 1 is the simple soft list).
    pub max_levels: u32,
    /// Probability of the next level (0.25).
    pub p: f64,
    /// Pointer slots per level: the first version and its spares (2, an assumption: the
    /// paper gives no figure; at least 2, or re-pointing the head and the tail would
    /// relocate each other without end).
    pub slots_per_level: u32,
}

impl Default for SoftListConfig {
    fn default() -> Self {
        SoftListConfig {
            turnstile_blocks: 8,
            max_levels: 5,
            p: 0.25,
            slots_per_level: 2,
        }
    }
}

impl SoftListConfig {
    fn list(&self) -> ListConfig {
        ListConfig {
            turnstile_blocks: self.turnstile_blocks,
            max_levels: self.max_levels,
            p: self.p,
            slots: 1,
            key_limit: 1,
            pointers: PointerArea::PerLevel {
                slots: self.slots_per_level,
            },
        }
    }
}

/// A multilevel soft list on a NOR device.
pub struct SoftList {
    inner: ListIndex,
    cfg: SoftListConfig,
}

const NAME: &str = "softlist";

impl SoftList {
    /// Format `nor` and create an empty soft list on it.
    pub fn create(nor: NorDevice, cfg: SoftListConfig, seed: u64) -> Result<SoftList, IndexError> {
        let engine = Engine::create(nor, cfg.list(), NAME, seed)?;
        Ok(SoftList {
            inner: ListIndex::new(engine, NAME),
            cfg,
        })
    }

    /// Find a soft list on `nor` from flash alone.
    pub fn open(
        nor: NorDevice,
        cfg: SoftListConfig,
        seed: u64,
    ) -> Result<(SoftList, BootReport), IndexError> {
        let (engine, report) = Engine::open(nor, cfg.list(), NAME, seed, 1)?;
        Ok((
            SoftList {
                inner: ListIndex::new(engine, NAME),
                cfg,
            },
            report,
        ))
    }

    /// Give the device back (a power-off).
    pub fn into_device(self) -> NorDevice {
        self.inner.engine.into_device()
    }

    /// The parameters.
    pub fn config(&self) -> &SoftListConfig {
        &self.cfg
    }

    /// Algorithm 1 on level 0 from the first key, with every probe recorded: the keys the
    /// search visits, the probes it makes, and whether it found `key` (section 0.3.2).
    pub fn trace_search(
        &mut self,
        key: super::Key,
    ) -> (Vec<super::Key>, Vec<super::list::Probe>, bool) {
        self.inner.engine.trace_search(key)
    }
}

impl NorIndex for SoftList {
    forward_list_index!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nor::list::Probe;
    use flashkit_device::NorGeometry;

    /// A simple soft list (one level) of the keys 0, 10, ..., 90.
    fn simple_list() -> SoftList {
        let cfg = SoftListConfig {
            max_levels: 1,
            ..SoftListConfig::default()
        };
        let nor = NorDevice::new(NorGeometry::new(1024, 16).expect("valid geometry"));
        let mut list = SoftList::create(nor, cfg, 3).expect("create");
        for key in (0..10u32).rev() {
            list.put(key * 10, key).expect("put");
        }
        list
    }

    #[test]
    fn a_traced_search_walks_the_keys_in_order_to_the_one_it_finds() {
        let mut list = simple_list();
        let (visited, probes, found) = list.trace_search(40);
        assert!(found);
        assert_eq!(visited, [0, 10, 20, 30, 40]);
        // Each step probes until it moves; the last probe of each step is a move.
        let moves = probes
            .iter()
            .filter(|p| matches!(p, Probe::Moved(_)))
            .count();
        assert_eq!(moves, 4, "{probes:?}");
        assert_eq!(probes.last(), Some(&Probe::Moved(40)));
    }

    #[test]
    fn a_traced_search_for_a_missing_key_stops_below_it() {
        let mut list = simple_list();
        let (visited, probes, found) = list.trace_search(25);
        assert!(!found);
        assert_eq!(visited, [0, 10, 20]);
        assert!(
            probes.contains(&Probe::Over(30)),
            "the search looked past 25: {probes:?}"
        );
    }
}
