//! Fat lists (section 0.5 of the fat-list paper): multilevel soft lists whose objects hold
//! up to m key slots, a key limit n, a validity bitmap, a min-max area and a pointer pool
//! shared by all levels. Inserts and updates log into free slots; a full object is split
//! only when it also holds more than n keys (delayed split, 0.5.2), merged with a poorly used
//! neighbour (lazy and shift merge, 0.5.3) or rewritten compacted; range queries walk level
//! 0 reading only first keys to find each next object (0.5.4).
//!
//! What it is not: a separate engine. It is the soft-list engine (`list`) configured with
//! fat objects, as the paper builds one from the other.
//!
//! Key decision: the min-max area is the bottom of the slots. A key that widens the
//! object's range is written there (others from the top down), so the area always contains
//! the object's bounds; deleting a key leaves its entry as a bound, and bounds only shrink
//! when the object is rewritten. A probe reads the area's first key to rule out backward
//! objects and the rest only when the object may lie ahead (Fig. 8).

use super::list::{Engine, ListConfig, ListIndex, PointerArea, forward_list_index};
use super::{BootReport, IndexError, NorIndex};
use flashkit_device::NorDevice;

/// Fat-list parameters; the default is the paper's (section 0.6.1).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct FatListConfig {
    /// Blocks per turnstile (8).
    pub turnstile_blocks: u32,
    /// Levels (5).
    pub max_levels: u32,
    /// Probability of the next level (0.25).
    pub p: f64,
    /// Slots per object, m (40).
    pub slots: u32,
    /// Key limit, n (20).
    pub key_limit: u32,
    /// Pointer pool entries (7, that is levels + 2; at least one per level and at least 2).
    pub pool: u32,
}

impl Default for FatListConfig {
    fn default() -> Self {
        FatListConfig {
            turnstile_blocks: 8,
            max_levels: 5,
            p: 0.25,
            slots: 40,
            key_limit: 20,
            pool: 7,
        }
    }
}

impl FatListConfig {
    /// The default with `levels` levels and a pool of `levels + 2` entries (the pool grows
    /// with the maximum level, as section 0.6.3 describes).
    pub fn with_levels(levels: u32) -> FatListConfig {
        FatListConfig {
            max_levels: levels,
            pool: levels + 2,
            ..FatListConfig::default()
        }
    }

    fn list(&self) -> ListConfig {
        ListConfig {
            turnstile_blocks: self.turnstile_blocks,
            max_levels: self.max_levels,
            p: self.p,
            slots: self.slots,
            key_limit: self.key_limit,
            pointers: PointerArea::Pool { entries: self.pool },
        }
    }
}

/// A fat list on a NOR device.
pub struct FatList {
    inner: ListIndex,
    cfg: FatListConfig,
}

const NAME: &str = "fatlist";

impl FatList {
    /// Format `nor` and create an empty fat list on it.
    pub fn create(nor: NorDevice, cfg: FatListConfig, seed: u64) -> Result<FatList, IndexError> {
        let engine = Engine::create(nor, cfg.list(), NAME, seed)?;
        Ok(FatList {
            inner: ListIndex::new(engine, NAME),
            cfg,
        })
    }

    /// Find a fat list on `nor` from flash alone (boot-up initialization).
    pub fn open(
        nor: NorDevice,
        cfg: FatListConfig,
        seed: u64,
    ) -> Result<(FatList, BootReport), IndexError> {
        let (engine, report) = Engine::open(nor, cfg.list(), NAME, seed, 1)?;
        Ok((
            FatList {
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
    pub fn config(&self) -> &FatListConfig {
        &self.cfg
    }

    /// Objects per flash block and words per object.
    pub fn object_shape(&self) -> (u32, u32) {
        (
            self.inner.engine.frames_per_block(),
            self.inner.engine.frame_words(),
        )
    }
}

impl NorIndex for FatList {
    forward_list_index!();
}
