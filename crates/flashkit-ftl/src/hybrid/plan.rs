//! The plan of a block being built by a merge (Lee et al., TECS 2007, section 3.4: "copy the
//! up-to-date sectors from the log block and its corresponding data block to a free block"),
//! as bit masks over the block's offsets, and the bitmap helpers the merge uses.
//!
//! What it is not: it issues no flash operations; `machinery.rs` carries a plan out. Key
//! decision: masks, not a source per page. A merge then copies the data block's pages a run
//! at a time, and the runs come from a few word operations (`trailing_ones`), never from a pass
//! over every page: on the benchmark (126 pages copied per host write) that was the difference
//! between 0.6M and 1.6M host writes a second.

use super::machinery::NewRun;

/// Marks a page of a block being built as the host write being served (log pages are
/// named by their index, which stays far below).
pub const NEW: u32 = u32::MAX;

/// The plan of a block being built by a merge, as bit masks over the block's offsets: which
/// pages come from the current data block, and which from a log page or the host write
/// (those are few; `src` names the log page). A merge then copies the data block's pages a
/// run at a time, and the masks give the runs with a few word operations, never a pass
/// over every page.
#[derive(Clone, Debug)]
pub struct Plan {
    pub data: Vec<u64>,
    pub over: Vec<u64>,
    /// For offsets in `over`: the log page, or [`NEW`].
    pub src: Vec<u32>,
    pub new: Option<NewRun>,
}

impl Plan {
    pub fn new(ppb: u32) -> Self {
        let words = ppb.div_ceil(64) as usize;
        Plan {
            data: vec![0; words],
            over: vec![0; words],
            src: vec![NEW; ppb as usize],
            new: None,
        }
    }

    #[inline(always)]
    pub fn has(mask: &[u64], offset: u32) -> bool {
        mask[(offset >> 6) as usize] >> (offset & 63) & 1 == 1
    }

    #[inline(always)]
    pub fn set(mask: &mut [u64], offset: u32) {
        mask[(offset >> 6) as usize] |= 1 << (offset & 63);
    }

    pub fn is_empty(&self) -> bool {
        self.data.iter().chain(&self.over).all(|&w| w == 0)
    }

    /// One past the last page with content, or 0.
    pub fn content_end(&self) -> u32 {
        (0..self.data.len())
            .rev()
            .find_map(|k| {
                let word = self.data[k] | self.over[k];
                (word != 0).then(|| k as u32 * 64 + 64 - word.leading_zeros())
            })
            .unwrap_or(0)
    }

    /// The end of the run of pages from `offset` (below `end`) served by the data block.
    pub fn data_run(&self, mut offset: u32, end: u32) -> u32 {
        while offset < end {
            let k = (offset >> 6) as usize;
            let bit = offset & 63;
            let word = (self.data[k] & !self.over[k]) >> bit;
            let ones = word.trailing_ones().min(64 - bit);
            offset += ones;
            if ones < 64 - bit {
                break;
            }
        }
        offset.min(end)
    }

    pub fn heap_bytes(&self) -> usize {
        (self.data.capacity() + self.over.capacity()) * 8 + self.src.capacity() * 4
    }
}

/// Up to 64 bits of `bits` from bit `position`.
#[inline(always)]
fn read_word(bits: &[u64], position: u32) -> u64 {
    let (k, shift) = ((position >> 6) as usize, position & 63);
    let low = bits[k] >> shift;
    match bits.get(k + 1) {
        Some(&high) if shift != 0 => low | high << (64 - shift),
        _ => low,
    }
}

/// Copy `bits[start..start + len]` into `out`, aligned at bit 0.
pub fn extract_bits(bits: &[u64], start: u32, len: u32, out: &mut [u64]) {
    for (k, word) in out.iter_mut().enumerate() {
        let offset = k as u32 * 64;
        let width = (len - offset).min(64);
        let value = read_word(bits, start + offset);
        *word = if width == 64 {
            value
        } else {
            value & ((1u64 << width) - 1)
        };
    }
}

/// Set in `bits[start..start + len]` the bits set in `mask` (aligned at bit 0).
pub fn or_bits(bits: &mut [u64], start: u32, len: u32, mask: &[u64]) {
    for (k, &word) in mask.iter().enumerate() {
        let offset = k as u32 * 64;
        let width = (len - offset).min(64);
        let word = if width == 64 {
            word
        } else {
            word & ((1u64 << width) - 1)
        };
        let position = start + offset;
        let (i, shift) = ((position >> 6) as usize, position & 63);
        bits[i] |= word << shift;
        if shift != 0 && width > 64 - shift {
            bits[i + 1] |= word >> (64 - shift);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_windows_cross_word_boundaries() {
        let mut bits = vec![0u64; 3];
        // 140 lies past the window 60..132: masked off in its second word.
        for bit in [3u32, 63, 64, 70, 127, 130, 140] {
            bits[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
        let mut out = vec![0u64; 2];
        extract_bits(&bits, 60, 72, &mut out);
        assert_eq!(out, vec![1 << 3 | 1 << 4 | 1 << 10, 1 << 3 | 1 << 6]);
        let mut target = vec![0u64; 3];
        or_bits(&mut target, 60, 72, &out);
        assert_eq!(target, vec![1 << 63, 1 | 1 << 6 | 1 << 63, 1 << 2]);
        extract_bits(&bits, 0, 32, &mut out[..1]);
        assert_eq!(out[0], 1 << 3, "bits beyond the window are masked");
        // A mask's bits past the window's length are not set.
        let mut target = vec![0u64; 3];
        or_bits(&mut target, 60, 72, &[0, u64::MAX]);
        assert_eq!(target, vec![0, 0xff << 60, 0xf]);
    }

    #[test]
    fn plans_give_data_runs_and_the_content_end() {
        let mut plan = Plan::new(128);
        plan.data = vec![u64::MAX, 0b1111];
        Plan::set(&mut plan.over, 10);
        assert_eq!(plan.data_run(0, 128), 10);
        assert_eq!(plan.data_run(11, 128), 68);
        assert_eq!(plan.data_run(11, 40), 40);
        assert_eq!(plan.content_end(), 68);
        Plan::set(&mut plan.over, 100);
        assert_eq!(plan.content_end(), 101);
        assert!(!plan.is_empty());
        assert!(Plan::new(24).is_empty());
        assert_eq!(Plan::new(24).content_end(), 0);
    }
}
