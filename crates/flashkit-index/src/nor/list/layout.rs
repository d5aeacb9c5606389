//! The on-flash layout of list objects, turnstile blocks and soft pointers.
//!
//! A block starts with one header word (0x0000 once the block holds or may hold objects;
//! 0xFFFF only for the turnstile's spare), then fixed-size frames, one object each:
//!
//! ```text
//! word 0          state: bit 15 written (0), bit 14 obsolete (0), bit 13 dummy head (0),
//!                 bit 12 dummy tail (0), bits 0-3 the object's top level
//! words 1..1+W    validity bitmap, one bit per slot, cleared when the slot is superseded
//! then m slots    4 words each: key (high, low), value (high, low); slot 0 upward is the
//!                 min-max area (keys that widened the object's range), slot m-1 downward
//!                 the other keys
//! then P entries  2 words each: soft pointer (level << 13 | turnstile, offset); the pool is
//!                 shared by all levels (fat lists) or split into fixed per-level runs
//!                 (soft lists); the last entry of a level is its current pointer
//! ```
//!
//! Every transition only clears bits, so objects are updated in place without erases.

use crate::nor::{Key, Value};
use flashkit_device::nor::ERASED_WORD;

/// Bit cleared in the state word once the object is written.
pub const WRITTEN: u16 = 1 << 15;
/// Bit cleared when the object is superseded.
pub const LIVE: u16 = 1 << 14;
/// Bit cleared in the dummy head.
pub const HEAD: u16 = 1 << 13;
/// Bit cleared in the dummy tail.
pub const TAIL: u16 = 1 << 12;
/// The level field.
pub const LEVEL_MASK: u16 = 0xF;

/// Header word of a block that is not the spare.
pub const BLOCK_IN_USE: u16 = 0x0000;
/// Words before the first frame of a block.
pub const BLOCK_HEADER_WORDS: u32 = 1;

/// Most slots an object may have (the bitmap is read into a fixed buffer of 8 words).
pub const MAX_SLOTS: u32 = 128;

/// Largest number of levels (the pointer encoding keeps 3 bits of level).
pub const MAX_LEVELS: u32 = 7;

/// Which kind of object a frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The dummy head (smaller than every key).
    Head,
    /// The dummy tail (larger than every key).
    Tail,
    /// An object holding keys.
    Data,
}

/// A decoded state word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Erased: free space.
    Free,
    /// A superseded object.
    Obsolete,
    /// A live object.
    Live { kind: Kind, level: u8 },
}

/// Decode a state word.
#[inline]
pub fn decode_state(word: u16) -> State {
    if word & WRITTEN != 0 {
        State::Free
    } else if word & LIVE == 0 {
        State::Obsolete
    } else {
        let kind = if word & HEAD == 0 {
            Kind::Head
        } else if word & TAIL == 0 {
            Kind::Tail
        } else {
            Kind::Data
        };
        State::Live {
            kind,
            level: (word & LEVEL_MASK) as u8,
        }
    }
}

/// The state word of a live object.
pub fn encode_state(kind: Kind, level: u8) -> u16 {
    let mut word = !WRITTEN & !LEVEL_MASK | u16::from(level);
    match kind {
        Kind::Head => word &= !HEAD,
        Kind::Tail => word &= !TAIL,
        Kind::Data => {}
    }
    word
}

/// A soft pointer: a turnstile and a frame offset inside each of its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ptr {
    /// Turnstile index.
    pub turnstile: u16,
    /// Frame offset inside every block of the turnstile.
    pub offset: u16,
}

/// Encode a pointer entry of `level`.
pub fn encode_ptr(level: u8, ptr: Ptr) -> [u16; 2] {
    [(u16::from(level) << 13) | ptr.turnstile, ptr.offset]
}

/// Decode a pointer entry; `None` when erased.
#[inline]
pub fn decode_ptr(words: [u16; 2]) -> Option<(u8, Ptr)> {
    if words == [ERASED_WORD, ERASED_WORD] {
        return None;
    }
    Some((
        (words[0] >> 13) as u8,
        Ptr {
            turnstile: words[0] & 0x1FFF,
            offset: words[1],
        },
    ))
}

pub(super) use crate::nor::join;

/// A key or value as two words.
#[inline]
pub fn split(value: u32) -> [u16; 2] {
    [(value >> 16) as u16, value as u16]
}

/// Where pointer entries of a level may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerArea {
    /// Any entry of the pool (fat lists).
    Pool {
        /// Entries in the pool.
        entries: u32,
    },
    /// `slots` entries reserved for each level (soft lists).
    PerLevel {
        /// Entries per level.
        slots: u32,
    },
}

/// Word offsets inside a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Slots per object (m).
    pub slots: u32,
    /// Bitmap words.
    pub bitmap_words: u32,
    /// How pointer entries are placed.
    pub ptr_run: PointerArea,
    /// Pointer entries in total.
    pub ptr_entries: u32,
    /// Words per frame.
    pub frame_words: u32,
}

impl Layout {
    /// The layout of objects with `slots` slots and the given pointer placement for
    /// `levels` levels.
    pub fn new(slots: u32, ptr_run: PointerArea, levels: u32) -> Layout {
        let bitmap_words = slots.div_ceil(16);
        let ptr_entries = match ptr_run {
            PointerArea::Pool { entries } => entries,
            PointerArea::PerLevel { slots } => slots * levels,
        };
        Layout {
            slots,
            bitmap_words,
            ptr_run,
            ptr_entries,
            frame_words: 1 + bitmap_words + 4 * slots + 2 * ptr_entries,
        }
    }

    /// First word of the bitmap.
    #[inline(always)]
    pub fn bitmap(&self) -> u32 {
        1
    }

    /// First word of slot `i`.
    #[inline(always)]
    pub fn slot(&self, i: u32) -> u32 {
        1 + self.bitmap_words + 4 * i
    }

    /// First word of pointer entry `i`.
    #[inline(always)]
    pub fn ptr(&self, i: u32) -> u32 {
        1 + self.bitmap_words + 4 * self.slots + 2 * i
    }

    /// The entries a level's pointers may use.
    #[inline]
    pub fn ptr_entries_of(&self, level: u8) -> std::ops::Range<u32> {
        match self.ptr_run {
            PointerArea::Pool { entries } => 0..entries,
            PointerArea::PerLevel { slots } => {
                let l = u32::from(level);
                l * slots..(l + 1) * slots
            }
        }
    }
}

impl Layout {
    /// The runs of entries an object of top level `level` owns: the whole pool, or one run
    /// per level.
    pub fn ptr_runs(&self, level: u8) -> Vec<std::ops::Range<u32>> {
        match self.ptr_run {
            PointerArea::Pool { entries } => std::iter::once(0..entries).collect(),
            PointerArea::PerLevel { .. } => (0..=level).map(|l| self.ptr_entries_of(l)).collect(),
        }
    }

    /// The entry holding a level's first pointer in a freshly written object.
    pub fn first_entry(&self, level: u8) -> u32 {
        match self.ptr_run {
            PointerArea::Pool { .. } => u32::from(level),
            PointerArea::PerLevel { .. } => self.ptr_entries_of(level).start,
        }
    }
}

/// An object's contents as read or about to be written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents {
    /// Live pairs, sorted by key.
    pub pairs: Vec<(Key, Value)>,
    /// The object's top level.
    pub level: u8,
    /// Current pointer of each level `0..=level`.
    pub next: Vec<Ptr>,
}

/// Encode a fresh object into `out` (`frame_words` words, erased where unused): the smallest
/// and largest keys open the min-max area, the others fill slots from the top down, and
/// each level's pointer takes the first entry of its run.
pub fn encode_object(layout: &Layout, kind: Kind, contents: &Contents, out: &mut Vec<u16>) {
    out.clear();
    out.resize(layout.frame_words as usize, ERASED_WORD);
    out[0] = encode_state(kind, contents.level);
    let pairs = &contents.pairs;
    debug_assert!(pairs.len() as u32 <= layout.slots);
    let mut put = |slot: u32, (key, value): (Key, Value)| {
        let at = layout.slot(slot) as usize;
        out[at..at + 2].copy_from_slice(&split(key));
        out[at + 2..at + 4].copy_from_slice(&split(value));
    };
    if let Some(&first) = pairs.first() {
        put(0, first);
    }
    if pairs.len() > 1 {
        put(1, pairs[pairs.len() - 1]);
    }
    for (i, &pair) in pairs
        .iter()
        .skip(1)
        .take(pairs.len().saturating_sub(2))
        .enumerate()
    {
        put(layout.slots - 1 - i as u32, pair);
    }
    for (level, &ptr) in contents.next.iter().enumerate() {
        let at = layout.ptr(layout.first_entry(level as u8)) as usize;
        out[at..at + 2].copy_from_slice(&encode_ptr(level as u8, ptr));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_default_object_is_353_bytes_plus_a_state_word_and_rounding() {
        // 40 slots of 4-byte key and value, a 40-bit bitmap, seven 2-word pointers.
        let layout = Layout::new(40, PointerArea::Pool { entries: 7 }, 5);
        assert_eq!(layout.frame_words, 1 + 3 + 160 + 14);
        assert_eq!(320 + 5 + 28, 353);
    }

    #[test]
    fn states_round_trip_and_only_clear_bits() {
        for kind in [Kind::Head, Kind::Tail, Kind::Data] {
            for level in 0..7u8 {
                let live = encode_state(kind, level);
                assert_eq!(decode_state(live), State::Live { kind, level });
                let obsolete = live & !LIVE;
                assert_eq!(decode_state(obsolete), State::Obsolete);
                assert_eq!(obsolete & !live, 0);
            }
        }
        assert_eq!(decode_state(ERASED_WORD), State::Free);
        let ptr = Ptr {
            turnstile: 8000,
            offset: 65535,
        };
        assert_eq!(decode_ptr(encode_ptr(6, ptr)), Some((6, ptr)));
    }

    #[test]
    fn encoded_objects_put_min_and_max_first() {
        let layout = Layout::new(6, PointerArea::Pool { entries: 3 }, 2);
        let contents = Contents {
            pairs: vec![(1, 10), (2, 20), (3, 30), (9, 90)],
            level: 1,
            next: vec![
                Ptr {
                    turnstile: 1,
                    offset: 2,
                },
                Ptr {
                    turnstile: 3,
                    offset: 4,
                },
            ],
        };
        let mut out = Vec::new();
        encode_object(&layout, Kind::Data, &contents, &mut out);
        let key = |slot| {
            join(
                out[layout.slot(slot) as usize],
                out[layout.slot(slot) as usize + 1],
            )
        };
        assert_eq!((key(0), key(1), key(5), key(4)), (1, 9, 2, 3));
        assert_eq!(out[layout.slot(2) as usize], ERASED_WORD);
    }
}
