//! flashkit-index: index structures that live in flash memory itself.
//!
//! Now: [`nor`], native NOR-flash indexes after the fat-list paper (2011): soft lists
//! (section 0.3), multilevel soft lists (0.4), fat lists (0.5), and the mu-tree baseline the
//! paper compares them with (0.6.2), all on [`flashkit_device::NorDevice`]; and [`nand`], a
//! B+-tree on NAND flash over In-Page Logging and GRR storage with LRU, CFLRU and
//! clean-first-with-semi-clean buffers (Jin, Cho, Chung, IMCOM 2014).
//!
//! What this layer is not: an FTL. It depends on flashkit-core and flashkit-device only; an
//! index places its own objects on the raw part, reclaims its own space and is found again
//! after a power-off from what it wrote.
//!
//! Key decision: every index runs on an exact device model (word-exact NOR; NAND pages with
//! their bytes) and keeps in RAM only what the paper lets it keep (for the lists: where the
//! dummy head is and which block of each turnstile is the spare; for the B-tree: its buffer
//! and its node map, all rebuilt from flash at boot), so that the reads, writes and erases
//! it is charged are the ones a real implementation would pay.

#![deny(clippy::unwrap_used)]

pub mod nand;
pub mod nor;
