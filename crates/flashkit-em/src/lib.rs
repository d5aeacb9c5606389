//! flashkit-em: external-memory algorithms under the flash models of Ajwani, Beckmann, Jacob,
//! Meyer and Moruz, "On Computational Models for Flash Memory Devices" (SEA 2009).
//!
//! - [`model`]: the general flash model (cost `x + c*y` for `x` reads of `B_r` and `y`
//!   writes of `B_w`) and the unit-cost model (`x*B_r + y*B_w` items moved), as calculators
//!   that predict an algorithm's volumes from `N`, `M`, `B_r`, `B_w` and as the accounting of
//!   a measured run (section 2).
//! - [`io`]: [`io::BlockIo`], a byte address space read in blocks of `B_r` and written in
//!   blocks of `B_w`, with a counting simulator, real files (`O_DIRECT`) and, behind the
//!   `ftl` feature, any flashkit FTL on the NAND model.
//! - [`tl`]: the translation layer of section 4, which lets an algorithm read and write
//!   pages of `B_r` while the device sees only whole `B_w` writes.
//! - [`sort`]: multi-way mergesort of fixed-width records (section 3.1) with radix-sorted
//!   runs, a loser-tree merge, model-chosen fan-in and double-buffered I/O.
//! - [`pq`]: a merging-based external priority queue (section 3.2).
//! - [`btree`]: the two-level B-tree of section 3.2.
//! - [`graph`]: grid and random sparse graphs, Mehlhorn-Meyer BFS (section 3.3) and the
//!   textbook DFS of section 4.
//!
//! What this crate is not: a general external-memory library (no vectors, streams or
//! pipelining beyond what the paper's algorithms need), and it never prints.
//!
//! Key decision: every algorithm is written against [`io::BlockIo`] and its cost is read
//! off the I/O counters, so one algorithm runs unchanged on the simulator (exact volumes at
//! any size), on real files (real time) and on an FTL (flash operations and erases), and the
//! model's prediction can be set beside each.

pub mod btree;
pub mod graph;
pub mod io;
pub mod model;
pub mod pq;
pub mod probe;
pub mod record;
pub mod sort;
pub mod tl;

use std::path::PathBuf;
use thiserror::Error;

/// Why an external-memory run failed. Caller bugs (a misaligned transfer) panic instead.
#[derive(Debug, Error)]
pub enum EmError {
    /// A file operation failed.
    #[error("{op} of {path} at byte {offset}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`open`, `read`, `write`, ...).
        op: &'static str,
        /// Byte offset inside the file.
        offset: u64,
        /// The operating system's error (shown after the message by error chains).
        source: std::io::Error,
    },
    /// An input file is not what the algorithm needs.
    #[error("{path}: {detail}")]
    Input {
        /// The file.
        path: PathBuf,
        /// What is wrong with it, naming the field or record.
        detail: String,
    },
    /// Parameters that cannot work (memory too small for the block sizes, ...).
    #[error("invalid parameters: {0}")]
    Config(String),
    /// The result failed its check: always a bug.
    #[error("verification failed: {0}")]
    Verify(String),
    /// The device underneath ran out of space or failed.
    #[error("device: {0}")]
    Device(String),
}
