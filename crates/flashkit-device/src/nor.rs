//! The NOR flash model: 2-byte words, programs that only clear bits, block erase to all ones.
//!
//! What it is: the part the fat-list paper simulates (the table in its section 0.6.1, after
//! Samsung's K8C1215 datasheet) at any size. Every word can be read on its own; a program
//! turns 1 bits into 0 bits and never the other way; an erase returns a whole block to
//! 0xFFFF and counts against the block's endurance. Time is the paper's: word reads, word
//! writes and block erases times their costs, counted by [`Cause`] so that normal operations
//! ([`Cause::Host`]) and space reclaiming ([`Cause::Gc`]) are told apart.
//!
//! What it is not: a page device. NAND's [`crate::FlashDevice`] contract is untouched; NOR
//! indexes (flashkit-index `nor/`) are written against [`NorDevice`] directly.
//!
//! Key decision: the model keeps every word (8 MiB of flash is 8 MiB of RAM) because a NOR
//! index must be found again from flash alone after a power-off, and because its reads decide
//! what the index does. Multi-word reads hand out a slice and count once per word, so a probe
//! of an index object costs one bounds check, not one call per word.

use crate::DeviceError;
use flashkit_core::{BlockId, Cause, OpCounters, StateHasher, Timing};
use serde::Serialize;
use std::fmt;
use thiserror::Error;

/// Bytes in a NOR word.
pub const WORD_BYTES: u32 = 2;

/// The value of an erased word.
pub const ERASED_WORD: u16 = 0xFFFF;

/// A word address: the index of a 2-byte word on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct WordAddr(pub u32);

impl WordAddr {
    /// As an index into word arrays.
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The address `words` further on.
    #[inline(always)]
    pub fn offset(self, words: u32) -> WordAddr {
        WordAddr(self.0 + words)
    }
}

impl fmt::Display for WordAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "word {:#x}", self.0)
    }
}

/// An impossible NOR geometry.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NorGeometryError {
    /// A block must hold at least one word.
    #[error("NOR geometry: words per block must be at least 16, got {0}")]
    BlockTooSmall(u32),
    /// A device needs at least one block.
    #[error("NOR geometry: the device needs at least one block")]
    NoBlocks,
    /// The capacity is not a whole number of blocks.
    #[error(
        "NOR geometry: capacity {capacity_bytes} B is not a whole number of {block_bytes}-byte blocks"
    )]
    NotWholeBlocks {
        /// Requested capacity.
        capacity_bytes: u64,
        /// Block size.
        block_bytes: u64,
    },
    /// More words than 32-bit addresses reach.
    #[error("NOR geometry: {0} words do not fit 32-bit word addresses")]
    TooLarge(u64),
}

/// Block size and block count of a NOR part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NorGeometry {
    words_per_block: u32,
    blocks: u32,
}

impl NorGeometry {
    /// A geometry of `blocks` blocks of `words_per_block` words.
    pub fn new(words_per_block: u32, blocks: u32) -> Result<NorGeometry, NorGeometryError> {
        if words_per_block < 16 {
            return Err(NorGeometryError::BlockTooSmall(words_per_block));
        }
        if blocks == 0 {
            return Err(NorGeometryError::NoBlocks);
        }
        let words = u64::from(words_per_block) * u64::from(blocks);
        if words >= u64::from(u32::MAX) {
            return Err(NorGeometryError::TooLarge(words));
        }
        Ok(NorGeometry {
            words_per_block,
            blocks,
        })
    }

    /// A geometry of `capacity_bytes` in blocks of `words_per_block` words.
    pub fn with_capacity(
        capacity_bytes: u64,
        words_per_block: u32,
    ) -> Result<NorGeometry, NorGeometryError> {
        let block_bytes = u64::from(words_per_block) * u64::from(WORD_BYTES);
        if block_bytes == 0 || !capacity_bytes.is_multiple_of(block_bytes) {
            return Err(NorGeometryError::NotWholeBlocks {
                capacity_bytes,
                block_bytes,
            });
        }
        let blocks = u32::try_from(capacity_bytes / block_bytes)
            .map_err(|_| NorGeometryError::TooLarge(capacity_bytes / 2))?;
        NorGeometry::new(words_per_block, blocks)
    }

    /// Words in an erase block.
    pub fn words_per_block(&self) -> u32 {
        self.words_per_block
    }

    /// Erase blocks.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// Words on the device.
    pub fn words(&self) -> u32 {
        self.words_per_block * self.blocks
    }

    /// Bytes on the device.
    pub fn bytes(&self) -> u64 {
        u64::from(self.words()) * u64::from(WORD_BYTES)
    }

    /// The first word of a block.
    #[inline(always)]
    pub fn block_start(&self, block: BlockId) -> WordAddr {
        WordAddr(block.0 * self.words_per_block)
    }

    /// The block holding a word.
    #[inline(always)]
    pub fn block_of(&self, addr: WordAddr) -> BlockId {
        BlockId(addr.0 / self.words_per_block)
    }
}

/// A named NOR part: geometry, timing (per word for reads and writes, per block for erases)
/// and endurance, with its source.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NorPreset {
    /// Name used on the command line.
    pub name: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    /// Words in an erase block.
    pub words_per_block: u32,
    /// Words on the part.
    pub capacity_words: u32,
    /// `read_ns` is a word read, `program_ns` a word write, `erase_ns` a block erase.
    pub timing: Timing,
    /// Erase cycles a block survives.
    pub endurance_cycles: u32,
}

impl NorPreset {
    /// The fat-list paper's NOR part (its table in section 0.6.1).
    pub const K8C1215: NorPreset = NorPreset {
        name: "k8c1215",
        source: "Fat-list paper (2011), table in section 0.6.1, citing the Samsung K8C1215ETM \
                 32M x16 MLC NOR datasheet (2006): 2-byte words, 1M words, 32K-word blocks, word \
                 read 110 ns, word write 80 us, block erase 0.6 s, 100K erase cycles.",
        words_per_block: 32 * 1024,
        capacity_words: 1024 * 1024,
        timing: Timing {
            read_ns: 110,
            program_ns: 80_000,
            erase_ns: 600_000_000,
        },
        endurance_cycles: 100_000,
    };

    /// Every NOR preset.
    pub const ALL: [NorPreset; 1] = [Self::K8C1215];

    /// Look a preset up by name.
    pub fn by_name(name: &str) -> Option<NorPreset> {
        Self::ALL.into_iter().find(|preset| preset.name == name)
    }

    /// The preset's own geometry.
    pub fn geometry(&self) -> NorGeometry {
        NorGeometry::new(
            self.words_per_block,
            self.capacity_words / self.words_per_block,
        )
        .expect("invariant: preset geometries are valid")
    }

    /// The preset's block size at another capacity (the paper runs 1, 2, 4 and 8 MB).
    pub fn geometry_with_capacity(
        &self,
        capacity_bytes: u64,
    ) -> Result<NorGeometry, NorGeometryError> {
        NorGeometry::with_capacity(capacity_bytes, self.words_per_block)
    }
}

/// A NOR flash device. Caller bugs (setting a bit by a program, an address past the end)
/// panic; wear-out is a modelled [`DeviceError`].
#[derive(Clone, Debug)]
pub struct NorDevice {
    geometry: NorGeometry,
    words: Vec<u16>,
    erase_counts: Vec<u32>,
    bad: Vec<bool>,
    endurance_cycles: u32,
    counters: OpCounters,
}

impl NorDevice {
    /// A fresh device, every word erased, with unlimited endurance.
    pub fn new(geometry: NorGeometry) -> NorDevice {
        NorDevice {
            geometry,
            words: vec![ERASED_WORD; geometry.words() as usize],
            erase_counts: vec![0; geometry.blocks() as usize],
            bad: vec![false; geometry.blocks() as usize],
            endurance_cycles: u32::MAX,
            counters: OpCounters::default(),
        }
    }

    /// Limit every block to `cycles` erases; the erase after the last allowed one fails with
    /// [`DeviceError::WornOut`] and the block goes bad.
    pub fn with_endurance(mut self, cycles: u32) -> NorDevice {
        self.endurance_cycles = cycles;
        self
    }

    /// The geometry.
    pub fn geometry(&self) -> &NorGeometry {
        &self.geometry
    }

    #[inline(always)]
    fn check_range(&self, addr: WordAddr, len: u32) {
        assert!(
            u64::from(addr.0) + u64::from(len) <= u64::from(self.geometry.words()),
            "{len} words at {addr} run past the device's {} words",
            self.geometry.words()
        );
    }

    /// Read one word.
    #[inline]
    pub fn read(&mut self, addr: WordAddr, cause: Cause) -> u16 {
        self.check_range(addr, 1);
        self.counters.reads[cause] += 1;
        self.words[addr.index()]
    }

    /// Read `len` consecutive words, counted as `len` word reads.
    #[inline]
    pub fn read_words(&mut self, addr: WordAddr, len: u32, cause: Cause) -> &[u16] {
        self.check_range(addr, len);
        self.counters.reads[cause] += u64::from(len);
        &self.words[addr.index()..addr.index() + len as usize]
    }

    /// Program one word: every bit that is 0 in `value` becomes 0. Writing a value whose
    /// bits are already all clear where `value` is clear (including the same value) is fine.
    ///
    /// # Panics
    /// If `value` has a 1 where the word has a 0: a program cannot set a bit (a caller bug).
    #[inline]
    pub fn program(&mut self, addr: WordAddr, value: u16, cause: Cause) -> Result<(), DeviceError> {
        self.check_range(addr, 1);
        let block = self.geometry.block_of(addr);
        if self.bad[block.index()] {
            return Err(DeviceError::BadBlock { block });
        }
        let old = self.words[addr.index()];
        if value & !old != 0 {
            set_bit_violation(addr, old, value);
        }
        self.words[addr.index()] = value;
        self.counters.programs[cause] += 1;
        Ok(())
    }

    /// Program consecutive words, counted as one word write each.
    ///
    /// # Panics
    /// As [`NorDevice::program`] for any word, or if the words cross a block boundary.
    pub fn program_words(
        &mut self,
        addr: WordAddr,
        values: &[u16],
        cause: Cause,
    ) -> Result<(), DeviceError> {
        let len = values.len() as u32;
        self.check_range(addr, len);
        if len == 0 {
            return Ok(());
        }
        let block = self.geometry.block_of(addr);
        assert_eq!(
            block,
            self.geometry.block_of(addr.offset(len - 1)),
            "a {len}-word program at {addr} crosses a block boundary"
        );
        if self.bad[block.index()] {
            return Err(DeviceError::BadBlock { block });
        }
        let target = &mut self.words[addr.index()..addr.index() + len as usize];
        for (i, (word, &value)) in target.iter_mut().zip(values).enumerate() {
            if value & !*word != 0 {
                set_bit_violation(addr.offset(i as u32), *word, value);
            }
            *word = value;
        }
        self.counters.programs[cause] += u64::from(len);
        Ok(())
    }

    /// Program an image of consecutive words as a driver would: each run of words that are
    /// not all ones ([`ERASED_WORD`]) is one [`NorDevice::program_words`], and the all-ones
    /// words between runs cost nothing (programming one leaves an erased word as it is).
    ///
    /// # Panics
    /// As [`NorDevice::program_words`] for any run.
    pub fn program_image(
        &mut self,
        addr: WordAddr,
        image: &[u16],
        cause: Cause,
    ) -> Result<(), DeviceError> {
        let mut i = 0;
        while i < image.len() {
            if image[i] == ERASED_WORD {
                i += 1;
                continue;
            }
            let run = image[i..]
                .iter()
                .position(|&w| w == ERASED_WORD)
                .unwrap_or(image.len() - i);
            self.program_words(addr.offset(i as u32), &image[i..i + run], cause)?;
            i += run;
        }
        Ok(())
    }

    /// Erase a block: every word becomes 0xFFFF.
    pub fn erase(&mut self, block: BlockId, cause: Cause) -> Result<(), DeviceError> {
        assert!(
            block.0 < self.geometry.blocks(),
            "{block} is beyond the device's {} blocks",
            self.geometry.blocks()
        );
        let b = block.index();
        if self.bad[b] {
            return Err(DeviceError::BadBlock { block });
        }
        if self.erase_counts[b] >= self.endurance_cycles {
            self.bad[b] = true;
            return Err(DeviceError::WornOut {
                block,
                erase_count: self.erase_counts[b],
            });
        }
        self.erase_counts[b] += 1;
        let start = self.geometry.block_start(block).index();
        self.words[start..start + self.geometry.words_per_block() as usize].fill(ERASED_WORD);
        self.counters.erases[cause] += 1;
        Ok(())
    }

    /// A word's value without counting a read (for invariant checkers and tests).
    #[inline]
    pub fn peek(&self, addr: WordAddr) -> u16 {
        self.words[addr.index()]
    }

    /// Words without counting reads (for invariant checkers and tests).
    pub fn peek_words(&self, addr: WordAddr, len: u32) -> &[u16] {
        self.check_range(addr, len);
        &self.words[addr.index()..addr.index() + len as usize]
    }

    /// Successful erases of a block so far.
    pub fn erase_count(&self, block: BlockId) -> u32 {
        self.erase_counts[block.index()]
    }

    /// Whether a block wore out.
    pub fn is_bad(&self, block: BlockId) -> bool {
        self.bad[block.index()]
    }

    /// Erase cycles a block survives.
    pub fn endurance_cycles(&self) -> u32 {
        self.endurance_cycles
    }

    /// Word reads, word writes and erases so far, by cause.
    pub fn counters(&self) -> &OpCounters {
        &self.counters
    }

    /// Feed the device's whole state to `hasher`: every word, each block's erase count and
    /// whether it is bad, the endurance, and the operation counters.
    pub fn hash_state(&self, hasher: &mut StateHasher) {
        let mut bytes = [0u8; 4096];
        for chunk in self.words.chunks(bytes.len() / 2) {
            for (slot, word) in bytes.chunks_exact_mut(2).zip(chunk) {
                slot.copy_from_slice(&word.to_le_bytes());
            }
            hasher.bytes(&bytes[..chunk.len() * 2]);
        }
        hasher.u32s(&self.erase_counts);
        for &bad in &self.bad {
            hasher.u32(u32::from(bad));
        }
        hasher.u32(self.endurance_cycles);
        hasher.counters(&self.counters);
    }

    /// Heap bytes the model holds.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 2 + self.erase_counts.capacity() * 4 + self.bad.capacity()
    }
}

#[cold]
#[inline(never)]
fn set_bit_violation(addr: WordAddr, old: u16, value: u16) -> ! {
    panic!(
        "NOR program at {addr} would set bits {:#06x}: the word holds {old:#06x}, the program \
         asks for {value:#06x}, and only an erase sets bits",
        value & !old
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> NorDevice {
        NorDevice::new(NorGeometry::new(64, 4).expect("valid"))
    }

    fn hash(nor: &NorDevice) -> u64 {
        let mut hasher = StateHasher::new();
        nor.hash_state(&mut hasher);
        hasher.finish()
    }

    /// Every part of the device's state reaches its state hash, each in a place of its own:
    /// the indexes' state hashes rest on it.
    #[test]
    fn every_part_of_the_state_reaches_the_state_hash() {
        let base = hash(&small());
        type Change = (&'static str, fn(&mut NorDevice));
        let changes: [Change; 8] = [
            ("a word's value", |n| n.words[70] = 0x1234),
            ("which word holds it", |n| n.words[71] = 0x1234),
            ("the last word", |n| {
                let last = n.words.len() - 1;
                n.words[last] = 0
            }),
            ("an erase count", |n| n.erase_counts[1] = 1),
            ("which block was erased", |n| n.erase_counts[2] = 1),
            ("a bad block", |n| n.bad[3] = true),
            ("the endurance", |n| n.endurance_cycles = 10),
            ("the counters", |n| n.counters.reads.gc = 1),
        ];
        let mut seen = vec![base];
        for (part, change) in changes {
            let mut nor = small();
            change(&mut nor);
            let h = hash(&nor);
            assert!(
                !seen.contains(&h),
                "{part} does not reach the state hash on its own"
            );
            seen.push(h);
        }
        assert_eq!(hash(&small()), base, "the same device, the same hash");
    }

    /// The state hash takes the words as their little-endian bytes in address order, past
    /// the 4 KiB buffer it packs them in too: a device of 7,168 words against the hash of
    /// its bytes fed at once.
    #[test]
    fn the_state_hash_takes_every_word_in_order() {
        let mut nor = NorDevice::new(NorGeometry::new(1024, 7).expect("valid"));
        for (i, word) in nor.words.iter_mut().enumerate() {
            *word = (i as u16).wrapping_mul(0x9e37);
        }
        let mut reference = StateHasher::new();
        let bytes: Vec<u8> = nor.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        reference.bytes(&bytes);
        reference.u32s(&nor.erase_counts);
        for &bad in &nor.bad {
            reference.u32(u32::from(bad));
        }
        reference.u32(nor.endurance_cycles);
        reference.counters(&nor.counters);
        assert_eq!(hash(&nor), reference.finish());
    }

    #[test]
    fn programs_clear_bits_and_erase_sets_them() {
        let mut nor = small();
        let a = WordAddr(70);
        assert_eq!(nor.read(a, Cause::Host), ERASED_WORD);
        nor.program(a, 0xF0F0, Cause::Host).expect("ok");
        nor.program(a, 0xF0F0, Cause::Host)
            .expect("same value is fine");
        nor.program(a, 0x3030, Cause::Host)
            .expect("clearing more bits is fine");
        assert_eq!(nor.read(a, Cause::Host), 0x3030);
        nor.erase(BlockId(1), Cause::Gc).expect("ok");
        assert_eq!(nor.peek(a), ERASED_WORD);
        assert_eq!(nor.erase_count(BlockId(1)), 1);
        let c = nor.counters();
        assert_eq!((c.reads.host, c.programs.host, c.erases.gc), (2, 3, 1));
    }

    #[test]
    #[should_panic(expected = "would set bits")]
    fn setting_a_bit_is_a_caller_bug() {
        let mut nor = small();
        nor.program(WordAddr(3), 0x00FF, Cause::Host).expect("ok");
        let _ = nor.program(WordAddr(3), 0x01FF, Cause::Host);
    }

    #[test]
    #[should_panic(expected = "would set bits")]
    fn multi_word_programs_check_every_word() {
        let mut nor = small();
        nor.program(WordAddr(5), 0, Cause::Host).expect("ok");
        let _ = nor.program_words(WordAddr(4), &[0, 1, 0], Cause::Host);
    }

    #[test]
    #[should_panic(expected = "crosses a block boundary")]
    fn multi_word_programs_stay_in_a_block() {
        let mut nor = small();
        let _ = nor.program_words(WordAddr(63), &[0, 0], Cause::Host);
    }

    #[test]
    #[should_panic(expected = "run past")]
    fn reads_past_the_end_are_caller_bugs() {
        let mut nor = small();
        let _ = nor.read_words(WordAddr(250), 10, Cause::Host);
    }

    #[test]
    fn slices_count_one_read_per_word() {
        let mut nor = small();
        nor.program_words(WordAddr(10), &[1, 2, 3], Cause::Host)
            .expect("ok");
        assert_eq!(
            nor.read_words(WordAddr(10), 4, Cause::Gc),
            &[1, 2, 3, 0xFFFF]
        );
        assert_eq!(nor.counters().reads.gc, 4);
        assert_eq!(nor.counters().programs.host, 3);
    }

    #[test]
    fn images_program_only_their_words_that_are_not_all_ones() {
        let mut nor = small();
        nor.program(WordAddr(12), 0x0F0F, Cause::Host).expect("ok");
        let image = [ERASED_WORD, 1, 2, ERASED_WORD, ERASED_WORD, 0x0F0F, 3];
        nor.program_image(WordAddr(7), &image, Cause::Gc)
            .expect("ok");
        assert_eq!(nor.peek_words(WordAddr(6), 9), {
            let mut words = vec![ERASED_WORD];
            words.extend(image);
            words.push(ERASED_WORD);
            words
        });
        assert_eq!(nor.counters().programs.gc, 4);
        nor.program_image(WordAddr(20), &[ERASED_WORD; 3], Cause::Gc)
            .expect("ok");
        nor.program_image(WordAddr(20), &[], Cause::Gc).expect("ok");
        assert_eq!(nor.counters().programs.gc, 4);
    }

    #[test]
    fn blocks_wear_out_after_their_endurance() {
        let mut nor = small().with_endurance(2);
        nor.erase(BlockId(0), Cause::Gc).expect("1");
        nor.erase(BlockId(0), Cause::Gc).expect("2");
        assert_eq!(
            nor.erase(BlockId(0), Cause::Gc),
            Err(DeviceError::WornOut {
                block: BlockId(0),
                erase_count: 2
            })
        );
        assert!(nor.is_bad(BlockId(0)));
        assert_eq!(
            nor.program(WordAddr(1), 0, Cause::Host),
            Err(DeviceError::BadBlock { block: BlockId(0) })
        );
        nor.program(WordAddr(64), 0, Cause::Host)
            .expect("other blocks still work");
    }

    #[test]
    fn the_paper_preset_and_sizes() {
        let p = NorPreset::by_name("k8c1215").expect("preset");
        let g = p.geometry();
        assert_eq!(
            (g.words_per_block(), g.blocks(), g.bytes()),
            (32768, 32, 2 << 20)
        );
        assert_eq!(
            (p.timing.read_ns, p.timing.program_ns, p.timing.erase_ns),
            (110, 80_000, 600_000_000)
        );
        for mb in [1u64, 2, 4, 8] {
            let g = p.geometry_with_capacity(mb << 20).expect("whole blocks");
            assert_eq!(g.blocks() as u64, mb * 16);
        }
        assert!(p.geometry_with_capacity(100_000).is_err());
        assert!(NorGeometry::new(8, 4).is_err());
        assert!(NorGeometry::new(64, 0).is_err());
    }

    #[test]
    fn time_is_words_and_erases_times_their_costs() {
        let mut nor = NorDevice::new(NorPreset::K8C1215.geometry());
        let _ = nor.read_words(WordAddr(0), 10, Cause::Host);
        nor.program(WordAddr(0), 0, Cause::Host).expect("ok");
        nor.erase(BlockId(3), Cause::Gc).expect("ok");
        let t = NorPreset::K8C1215.timing.serial_cost_ns(nor.counters());
        assert_eq!(t, 10 * 110 + 80_000 + 600_000_000);
    }

    /// Messages name words in hexadecimal, as datasheets do.
    #[test]
    fn word_addresses_display_in_hex() {
        assert_eq!(WordAddr(0x46).to_string(), "word 0x46");
        assert_eq!(WordAddr(0).to_string(), "word 0x0");
    }

    /// A capacity of 2^32 blocks of 16 words (32 bytes) is a whole number of blocks but
    /// more blocks than a `u32` counts; the error names the words it would take, its bytes
    /// over the 2 bytes of a word.
    #[test]
    fn a_capacity_past_32_bit_block_counts_is_too_large() {
        let bytes = 32u64 << 32;
        assert_eq!(
            NorGeometry::with_capacity(bytes, 16),
            Err(NorGeometryError::TooLarge(16 << 32))
        );
    }

    /// Block `b` starts at word `b * words_per_block`, and an erase clears that block's
    /// words and no neighbour's.
    #[test]
    fn an_erase_clears_exactly_its_block() {
        let mut nor = small();
        assert_eq!(nor.geometry().block_start(BlockId(0)), WordAddr(0));
        assert_eq!(nor.geometry().block_start(BlockId(3)), WordAddr(192));
        for addr in [127, 128, 191, 192] {
            nor.program(WordAddr(addr), 0, Cause::Host).expect("ok");
        }
        nor.erase(BlockId(2), Cause::Gc).expect("ok");
        let words = [127, 128, 191, 192].map(|addr| nor.peek(WordAddr(addr)));
        assert_eq!(words, [0, ERASED_WORD, ERASED_WORD, 0]);
    }

    /// A run of one word, and a run at the first word of the device, land where they are
    /// addressed.
    #[test]
    fn short_runs_and_runs_at_word_zero_are_programmed() {
        let mut nor = small();
        nor.program_words(WordAddr(5), &[0x1234], Cause::Host)
            .expect("ok");
        nor.program_words(WordAddr(0), &[0xA, 0xB], Cause::Host)
            .expect("ok");
        assert_eq!(
            nor.peek_words(WordAddr(0), 6),
            [0xA, 0xB, 0xFFFF, 0xFFFF, 0xFFFF, 0x1234]
        );
        assert_eq!(nor.counters().programs.host, 3);
    }

    /// An image whose last run reaches its end, starting at its first word or after an
    /// all-ones word, is programmed whole.
    #[test]
    fn an_image_run_that_reaches_the_end_is_programmed_whole() {
        let mut nor = small();
        nor.program_image(WordAddr(30), &[1, 2, 3], Cause::Gc)
            .expect("ok");
        nor.program_image(WordAddr(40), &[ERASED_WORD, 4, 5, 6], Cause::Gc)
            .expect("ok");
        assert_eq!(nor.peek_words(WordAddr(30), 3), [1, 2, 3]);
        assert_eq!(nor.peek_words(WordAddr(40), 4), [ERASED_WORD, 4, 5, 6]);
        assert_eq!(nor.counters().programs.gc, 6);
    }

    /// The getters against a device configured with an endurance of 2 and worn out: the
    /// erase count climbs to the endurance and stops there, and only the worn block is bad.
    #[test]
    fn erase_counts_and_bad_blocks_follow_the_wear() {
        assert_eq!(small().endurance_cycles(), u32::MAX, "unlimited by default");
        let mut nor = small().with_endurance(2);
        assert_eq!(nor.endurance_cycles(), 2);
        assert_eq!(
            (nor.erase_count(BlockId(1)), nor.is_bad(BlockId(1))),
            (0, false)
        );
        // A bounded loop: a mutant whose erases never fail must not hang the test.
        for _ in 0..2 {
            nor.erase(BlockId(1), Cause::Gc).expect("within endurance");
        }
        assert!(nor.erase(BlockId(1), Cause::Gc).is_err(), "the third erase");
        assert_eq!(nor.erase_count(BlockId(1)), nor.endurance_cycles());
        let bad: Vec<bool> = (0..4).map(|b| nor.is_bad(BlockId(b))).collect();
        assert_eq!(bad, [false, true, false, false]);
        assert_eq!(nor.erase_count(BlockId(0)), 0);
    }

    /// The heap counted allocation by allocation: every word (2 bytes), an erase count (4
    /// bytes) and a bad flag (1 byte) a block.
    #[test]
    fn heap_bytes_count_words_erase_counts_and_bad_flags() {
        let nor = small();
        let counted = nor.words.capacity() * std::mem::size_of::<u16>()
            + nor.erase_counts.capacity() * std::mem::size_of::<u32>()
            + nor.bad.capacity() * std::mem::size_of::<bool>();
        assert_eq!(nor.heap_bytes(), counted);
        assert_eq!(counted, 256 * 2 + 4 * 4 + 4);
    }
}
