//! One bit a physical page, set while the page holds the current copy of its logical page.
//!
//! The page FTL keeps it only for mappings whose lookup is a search
//! ([`crate::mapping::MappingHints::LOOKUP_SEARCHES`]): there, garbage collection's validity test
//! (does the mapping send the page's logical page back here?) was one cold search a page of
//! every victim, invalid pages included. For the page table that test is one array read and
//! the bitmap would only add work, so it stays empty.

/// The validity bitmap (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct ValidBits {
    words: Vec<u64>,
}

impl ValidBits {
    /// Every page invalid, over `pages` physical pages; no storage unless `keep`.
    pub(crate) fn new(pages: usize, keep: bool) -> Self {
        ValidBits {
            words: if keep {
                vec![0; pages.div_ceil(64)]
            } else {
                Vec::new()
            },
        }
    }

    /// Whether `ppn` is valid.
    #[inline(always)]
    pub(crate) fn get(&self, ppn: u32) -> bool {
        self.words[(ppn / 64) as usize] >> (ppn % 64) & 1 != 0
    }

    /// Mark `first..first + count` valid.
    #[inline]
    pub(crate) fn set_run(&mut self, first: u32, count: u32) {
        let (mut at, end) = (first, first + count);
        while at < end {
            let bit = at % 64;
            let take = (64 - bit).min(end - at);
            let mask = if take == 64 {
                u64::MAX
            } else {
                ((1u64 << take) - 1) << bit
            };
            self.words[(at / 64) as usize] |= mask;
            at += take;
        }
    }

    /// Mark `ppn` invalid.
    #[inline(always)]
    pub(crate) fn clear(&mut self, ppn: u32) {
        self.words[(ppn / 64) as usize] &= !(1u64 << (ppn % 64));
    }

    /// Bytes held.
    pub(crate) fn heap_bytes(&self) -> u64 {
        (self.words.capacity() * 8) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_across_words_set_exactly_their_bits() {
        for (first, count) in [
            (0, 0),
            (0, 1),
            (3, 61),
            (3, 62),
            (60, 8),
            (63, 130),
            (64, 64),
        ] {
            let mut bits = ValidBits::new(300, true);
            bits.set_run(first, count);
            for ppn in 0..300 {
                assert_eq!(
                    bits.get(ppn),
                    (first..first + count).contains(&ppn),
                    "page {ppn} after set_run({first}, {count})"
                );
            }
            for ppn in first..first + count {
                bits.clear(ppn);
            }
            assert!((0..300).all(|ppn| !bits.get(ppn)));
        }
    }

    /// The heap figure reports print: 8 bytes a 64-page word, nothing when not kept.
    #[test]
    fn heap_bytes_are_the_words_held() {
        let kept = ValidBits::new(1000, true);
        assert_eq!(kept.heap_bytes(), (kept.words.capacity() * 8) as u64);
        assert!(kept.heap_bytes() >= 1000u64.div_ceil(64) * 8);
        assert_eq!(ValidBits::new(1000, false).heap_bytes(), 0);
    }
}
