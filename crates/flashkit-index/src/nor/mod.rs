//! NOR-flash indexes: [`SoftList`] (multilevel soft lists, sections 0.3-0.4 of the fat-list
//! paper), [`FatList`] (section 0.5) and [`MuTree`] (the baseline of section 0.6.2), behind
//! one trait, [`NorIndex`], so that the benchmark, the reference-model tests and the CLI drive
//! them alike. [`bench`](mod@bench) holds the paper's workloads and the phase runner.
//!
//! What this module is not: a key-value store with durability guarantees under power cuts in
//! the middle of an operation. A power-off is modelled between operations (the paper's
//! boot-up initialization), not a torn write.
//!
//! Key decision: keys and values are 32-bit (two NOR words each), as the paper's object size
//! of 353 bytes implies (40 slots of key and value, a 40-bit bitmap and seven two-word
//! pointers). `u32::MAX` is reserved: it is what an erased key reads as.

pub mod bench;
mod fat_list;
mod list;
pub mod mu_tree;
mod soft_list;
mod stats;

pub use fat_list::{FatList, FatListConfig};
pub use list::{ListConfig, PointerArea, Probe};
pub use mu_tree::{MuTree, MuTreeConfig};
pub use soft_list::{SoftList, SoftListConfig};
pub use stats::{BootReport, IndexStats, ProbeStats};

use flashkit_core::StateHasher;
use flashkit_device::{DeviceError, NorDevice};
use thiserror::Error;

/// A key. Every value but `u32::MAX` (an erased key) is allowed.
pub type Key = u32;
/// A value.
pub type Value = u32;
/// The largest key an index accepts.
pub const KEY_MAX: Key = u32::MAX - 1;

/// What can go wrong in a NOR index. Caller bugs (a physics violation) panic in the device;
/// everything here is a modelled condition or bad input.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IndexError {
    /// The key is the reserved erased value.
    #[error(
        "key {key:#x} is reserved (an erased key reads as {:#x}); keys go up to {KEY_MAX:#x}",
        u32::MAX
    )]
    KeyReserved {
        /// The key.
        key: Key,
    },
    /// A parameter does not fit the structure or the flash.
    #[error("{structure} configuration: {field} {reason}")]
    Config {
        /// Which structure.
        structure: &'static str,
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The flash holds too much live data to place another object.
    #[error("{structure}: out of flash space ({detail})")]
    OutOfSpace {
        /// Which structure.
        structure: &'static str,
        /// What could not be placed.
        detail: String,
    },
    /// A modelled device failure (a worn-out block).
    #[error("device: {0}")]
    Device(#[from] DeviceError),
    /// Boot-up initialization found no index on the flash, or flash contents that break the
    /// structure's rules.
    #[error("{structure}: {detail}")]
    Corrupt {
        /// Which structure.
        structure: &'static str,
        /// What was found.
        detail: String,
    },
}

/// An ordered index of `Key -> Value` kept in NOR flash.
pub trait NorIndex {
    /// The structure's name (`fatlist`, `softlist`, `mutree`).
    fn name(&self) -> &'static str;

    /// The value of `key`.
    fn get(&mut self, key: Key) -> Result<Option<Value>, IndexError>;

    /// Insert `key` or update its value; true when the key is new.
    fn put(&mut self, key: Key, value: Value) -> Result<bool, IndexError>;

    /// Remove `key`; its value if it was present.
    fn remove(&mut self, key: Key) -> Result<Option<Value>, IndexError>;

    /// Append every pair with `lo <= key <= hi` to `out`, in key order.
    fn range(&mut self, lo: Key, hi: Key, out: &mut Vec<(Key, Value)>) -> Result<(), IndexError>;

    /// Forget everything held in RAM and find the index again from flash alone.
    fn power_cycle(&mut self) -> Result<BootReport, IndexError>;

    /// The device, for its counters.
    fn device(&self) -> &NorDevice;

    /// Structure counters and probe statistics.
    fn stats(&self) -> IndexStats;

    /// Every pair, read with uncounted peeks (for tests and checkers).
    fn contents(&self) -> Result<Vec<(Key, Value)>, String>;

    /// Check the structure's invariants with uncounted peeks; the first violation found.
    fn check_invariants(&self) -> Result<(), String>;

    /// Feed the structure's whole state to `hasher`: the flash (every word, erase counts,
    /// counters) and everything it keeps in RAM between operations. Two runs with the same
    /// inputs hash alike; the reports print it.
    fn hash_state(&self, hasher: &mut StateHasher);
}

/// The state hash of `index` as the reports print it: 16 hex digits.
pub fn state_hash(index: &dyn NorIndex) -> String {
    let mut hasher = StateHasher::new();
    index.hash_state(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// A 32-bit key or value from the two 16-bit words every NOR structure stores it in, the
/// high word first.
#[inline]
fn join(hi: u16, lo: u16) -> u32 {
    (u32::from(hi) << 16) | u32::from(lo)
}

fn check_key(key: Key) -> Result<(), IndexError> {
    if key > KEY_MAX {
        return Err(IndexError::KeyReserved { key });
    }
    Ok(())
}
