//! flashkit-index: index structures that live in flash memory itself.
//!
//! Now: [`nor`], native NOR-flash indexes after the fat-list paper (2011): soft lists
//! (section 0.3), multilevel soft lists (0.4), fat lists (0.5), and the mu-tree baseline the
//! paper compares them with (0.6.2), all on [`flashkit_device::NorDevice`]. Later, `nand/`
//! will hold B-trees over In-Page Logging and GRR storage (the GRR paper).
//!
//! What this layer is not: an FTL. It depends on flashkit-core and flashkit-device only; an
//! index places its own objects on the raw part, reclaims its own space and is found again
//! after a power-off from what it wrote.
//!
//! Key decision: every index runs on the word-exact device model and keeps in RAM only what
//! the paper lets it keep (for the lists: where the dummy head is and which block of each
//! turnstile is the spare, both rebuilt from flash at boot), so that the word reads, word
//! writes and erases it is charged are the ones a real implementation would pay.

#![deny(clippy::unwrap_used)]

pub mod nor;
