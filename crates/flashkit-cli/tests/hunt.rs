//! A seeded mutation hunt for bad input: valid inputs are mutated in ways whose outcome is
//! known exactly, and every mutant is read with a deadline, panics caught.
//!
//! Binary `.fkt` traces (`hunt/binary.rs`), detected and forced: every truncation refused;
//! every header and description bit flipped refused; header fields changed with the
//! checksum recomputed refused (version, record size, zero units, unknown flag bits, record
//! count, description length, reserved bytes) or read as this file's own decoding of the
//! layout says (other units, flags 0, another digest); every record byte flipped read as that
//! decoding says (an unknown operation, reserved byte 21 or an overflow refused at its record).
//!
//! At the end a table of counts per class and format is printed with the seed; a failure
//! lists the failing mutants (the first of each kind first), enough to redo each. Seed:
//! `FLASHKIT_HUNT_SEED`; more mutants: `FLASHKIT_HUNT_SCALE`. A deeper hunt:
//! `FLASHKIT_HUNT_SCALE=20 FLASHKIT_HUNT_SEED=7 cargo test -p flashkit-cli --release --test hunt -- --nocapture`

#[path = "hunt/binary.rs"]
mod binary;
#[path = "hunt/harness.rs"]
mod harness;

use harness::Hunt;

#[test]
fn binary_trace_mutants() {
    binary::hunt(&Hunt::from_env());
}
