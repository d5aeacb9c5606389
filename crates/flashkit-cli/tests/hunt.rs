//! A seeded mutation hunt for bad input: valid inputs are mutated in ways whose outcome is
//! known exactly, and every mutant is read (or run) with a deadline, panics caught.
//!
//! Text traces (`hunt/text.rs`; the mutants in `hunt/text_mutants.rs`), read in-process
//! with the format detected: a window of every excerpt in `../shared/traces/` and small
//! fio v2, fio v3 and generic-CSV logs written from the seed.
//! 1. same: CRLF, a byte order mark, blank lines (70,000 first), trailing blanks, gzip, no
//!    final newline, a 70,000-byte field flashkit does not read, all at once: exactly the
//!    original's requests, the same format.
//! 2. refused: a field the parser reads made garbage (`x`, `12x4`, `-1`, `NaN`, `inf`, empty,
//!    2^64, 2^70, `1e999`, a value that overflows once scaled, near-miss spellings of the
//!    operation), deleted, or written twice: an error naming the file, `line N` and the
//!    field, after exactly the requests before it; with bad lines skipped, the original's
//!    requests but that line's, and one bad line counted.
//! 3. one value: a time, offset, size, volume, operation or unused number changed to another
//!    valid one: exactly the original's requests with that one field changed as computed here.
//! 4. duplicated: a request line twice: its request twice, all else equal.
//! 5. noise: bytes flipped, inserted, deleted: no panic or hang; an error names file and line.
//!
//! Mutants of classes 2 to 4 are also wrapped in CRLF, gzip or 70,000 blank lines at random,
//! the line numbers expected moving with them.
//!
//! Binary `.fkt` traces (`hunt/binary.rs`), detected and forced: every truncation refused;
//! every header and description bit flipped refused; header fields changed with the
//! checksum recomputed refused (version, record size, zero units, unknown flag bits, record
//! count, description length, reserved bytes) or read as this file's own decoding of the
//! layout says (other units, flags 0, another digest); every record byte flipped read as that
//! decoding says (an unknown operation, reserved byte 21 or an overflow refused at its record).
//!
//! Config and sweep files (`hunt/config.rs`, run by `hunt/cli.rs`) through the binary,
//! `flashkit --config FILE compare` and `flashkit sweep FILE --out DIR`: each key's value of
//! the wrong type, empty, or out of range; an unknown key; a key or section twice; a section
//! misspelt; the file cut; noise. Exit 0 (still valid: counted as accepted) or 2 naming the
//! file, the key's line and the key, never a panic, a hang or exit 1; a refused sweep leaves
//! no output directory, a finished one its three files only.
//!
//! At the end of each part a table of counts per class and format is printed with the seed;
//! a failure lists the failing mutants (the first of each kind first), enough to redo each.
//! Seed: `FLASHKIT_HUNT_SEED`; more mutants: `FLASHKIT_HUNT_SCALE`; more failures shown:
//! `FLASHKIT_HUNT_SHOW`. A deeper hunt:
//!
//! ```text
//! FLASHKIT_HUNT_SCALE=20 FLASHKIT_HUNT_SEED=7 cargo test -p flashkit-cli --release --test hunt -- --nocapture
//! ```

mod common;

#[path = "hunt/binary.rs"]
mod binary;
#[path = "hunt/cli.rs"]
mod cli;
#[path = "hunt/config.rs"]
mod config;
#[path = "hunt/harness.rs"]
mod harness;
#[path = "hunt/inputs.rs"]
mod inputs;
#[path = "hunt/layout.rs"]
mod layout;
#[path = "hunt/text.rs"]
mod text;
#[path = "hunt/text_mutants.rs"]
mod text_mutants;

use harness::Hunt;

#[test]
fn text_trace_mutants() {
    text::hunt(&Hunt::from_env());
}

#[test]
fn binary_trace_mutants() {
    binary::hunt(&Hunt::from_env());
}

#[test]
fn config_and_sweep_mutants() {
    config::hunt(&Hunt::from_env());
}
