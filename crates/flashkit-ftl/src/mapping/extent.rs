//! Extents with physical runs, canonical extents and their binary keys: the vocabulary the
//! Virtual Extent Trie and the Extent Mapping Tree share (Suh et al., JSA 2014, sections 2
//! and 3).
//!
//! The paper's extent `<s, l>` leaves the physical address out ("for convenience"); a real
//! FTL cannot. Here an extent maps logical `[start, start + len)` to physical
//! `[ppn, ppn + len)`: a write of `len` pages lands on one physical run (the page FTL splits a
//! request where allocation crosses a block), and a garbage-collection move of part of an
//! extent splits it.

use flashkit_core::Ppn;

/// Logical `[start, start + len)` stored at physical `[ppn, ppn + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Extent {
    /// First logical page.
    pub start: u32,
    /// Pages (at least one).
    pub len: u32,
    /// First physical page.
    pub ppn: u32,
}

impl Extent {
    /// One past the last logical page.
    #[inline(always)]
    pub fn end(self) -> u32 {
        self.start + self.len
    }

    /// The physical page of logical page `lpn`, which the extent must contain.
    #[inline(always)]
    pub fn ppn_of(self, lpn: u32) -> Ppn {
        debug_assert!(self.contains(lpn), "{lpn} outside {self:?}");
        Ppn(self.ppn + (lpn - self.start))
    }

    /// Whether logical page `lpn` is in the extent.
    #[inline(always)]
    pub fn contains(self, lpn: u32) -> bool {
        lpn.wrapping_sub(self.start) < self.len
    }

    /// The part of the extent inside logical `[from, to)`, if any (physical run kept).
    #[inline]
    pub fn clip(self, from: u32, to: u32) -> Option<Extent> {
        let start = self.start.max(from);
        let end = self.end().min(to);
        (start < end).then(|| Extent {
            start,
            len: end - start,
            ppn: self.ppn + (start - self.start),
        })
    }
}

/// A canonical extent (Definition 1): `2^level` pages starting at a multiple of `2^level`.
/// As a binary string it is the start address with its `level` low bits turned into
/// don't-care bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Canonical {
    /// First logical page (a multiple of `2^level`).
    pub start: u32,
    /// Number of trailing don't-care bits: the extent holds `2^level` pages.
    pub level: u32,
}

impl Canonical {
    /// The canonical extent of `level` that contains logical page `lpn`.
    #[inline(always)]
    pub fn containing(lpn: u32, level: u32) -> Canonical {
        let mask = (1u64 << level) - 1;
        Canonical {
            start: (u64::from(lpn) & !mask) as u32,
            level,
        }
    }

    /// Pages covered (never zero).
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> u64 {
        1u64 << self.level
    }

    /// One past the last page (as u64: the root of a 2^32-page universe ends at 2^32).
    #[inline(always)]
    pub fn end(self) -> u64 {
        u64::from(self.start) + self.len()
    }

    /// The hash key: the start address shifted left once with a marker bit below it, so that
    /// the lowest set bit says how many don't-care bits follow. `2 * start + 2^level` is
    /// unique for every (start, level) and fits 32 bits while `start + 2^level <= 2^31`.
    #[inline(always)]
    pub fn key(self) -> u32 {
        ((u64::from(self.start) << 1) | (1u64 << self.level)) as u32
    }

    /// The canonical extent a key stands for.
    pub fn from_key(key: u32) -> Canonical {
        let level = key.trailing_zeros();
        Canonical {
            start: ((u64::from(key) - (1u64 << level)) >> 1) as u32,
            level,
        }
    }

    /// The binary string of the paper's figures over a `bits`-bit address space: the start
    /// address with `level` trailing don't-care bits written `*`.
    pub fn to_binary(self, bits: u32) -> String {
        (0..bits)
            .rev()
            .map(|bit| {
                if bit < self.level {
                    '*'
                } else if self.start >> bit & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect()
    }
}

/// The canonical decomposition of logical `[start, end)`: the maximal aligned power-of-two
/// pieces, in address order (the leaves a virtual trie keeps for the extent). At most two per
/// level (Lemma 5.4).
#[inline]
pub fn canonical_pieces(start: u32, end: u32) -> impl Iterator<Item = Canonical> {
    let (mut at, end) = (u64::from(start), u64::from(end));
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let align = if at == 0 { 63 } else { at.trailing_zeros() };
        let fit = 63 - (end - at).leading_zeros();
        let level = align.min(fit);
        let piece = Canonical {
            start: at as u32,
            level,
        };
        at += 1u64 << level;
        Some(piece)
    })
}

/// Address bits of a universe of `pages` logical pages: the smallest `w` with `2^w >= pages`.
pub fn universe_bits(pages: u32) -> u32 {
    if pages <= 1 {
        0
    } else {
        32 - (pages - 1).leading_zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(start: u32, end: u32) -> Vec<(u32, u32)> {
        canonical_pieces(start, end)
            .map(|c| (c.start, c.level))
            .collect()
    }

    #[test]
    fn decomposition_takes_maximal_aligned_pieces() {
        assert_eq!(pieces(0, 8), vec![(0, 3)]);
        assert_eq!(pieces(3, 9), vec![(3, 0), (4, 2), (8, 0)]);
        assert_eq!(pieces(200, 216), vec![(200, 3), (208, 3)]);
        assert_eq!(pieces(5, 5), vec![]);
    }

    #[test]
    fn keys_are_unique_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for level in 0..=6 {
            for start in (0..64u32).step_by(1 << level) {
                let c = Canonical { start, level };
                assert!(seen.insert(c.key()), "{c:?}");
                assert_eq!(Canonical::from_key(c.key()), c);
            }
        }
        let top = Canonical {
            start: 0,
            level: 31,
        };
        assert_eq!(Canonical::from_key(top.key()), top);
    }

    #[test]
    fn binary_strings_match_the_paper() {
        // <8, 4> over 8 bits is 000010** (section 2.2).
        assert_eq!(Canonical { start: 8, level: 2 }.to_binary(8), "000010**");
    }

    #[test]
    fn universe_bits_cover_the_pages() {
        assert_eq!(universe_bits(1), 0);
        assert_eq!(universe_bits(2), 1);
        assert_eq!(universe_bits(256), 8);
        assert_eq!(universe_bits(257), 9);
    }
}
