//! Workloads shaped like the FAST paper's patterns A-E (Lee et al., "A Log Buffer-Based
//! Flash Translation Layer Using Fully-Associative Sector Translation", ACM TECS 6(3), 2007,
//! Table I) and the hot-block workloads of its section 3.5 analysis, generated from a seed.
//!
//! The letters are Table I's: A and B digital cameras (A company, B company), C Linux, D
//! Symbian, E uniform random writes. Section 2.4's text around Fig. 4 letters its own three
//! workloads differently (a Symbian "pattern A", camera "patterns B and C"); we follow Table I,
//! which section 4's Fig. 10 and Table II (what `reproduce fast` reproduces) use
//! ([`super::camera`] says more).
//!
//! The paper's traces A-D came from the authors of BAST and are not public; these are
//! generators built from the paper's description of them, with every parameter written
//! here (and in docs/reproduction/fast.md), so that the shapes can be argued with:
//!
//! - **A, B (digital cameras)**: [`super::camera`]'s FAT16 camera, the one camera generator
//!   flashkit has (the `camera` workload is the same model), with the parameter sets
//!   [`CameraModel::FAST_A`] and [`CameraModel::FAST_B`] on 512-byte sectors: photos written
//!   to a FAT16 file system, each in large sequential writes, with the FAT entries of every
//!   chunk updated in both FAT copies and a directory entry per photo; when the card is full
//!   it is formatted (both FATs and the root directory rewritten) and filling starts again.
//!   A: 4-sector clusters, 32 KiB writes, 1-2 MiB photos, data area aligned to the 16 KiB
//!   erase block. B: 8-sector clusters, 64 KiB writes, 2-4 MiB photos, data area not aligned
//!   (its sequential writes straddle blocks).
//! - **C (Linux)**: 85% 4 KiB writes to 4 hot blocks of a metadata area (the first 10% of
//!   the space), at 4 KiB-aligned offsets; 15% sequential file writes of 8-64 KiB. One hot
//!   block is replaced every 400 requests.
//! - **D (Symbian)**: 90% 1-2 sector writes to 3 hot blocks, 80% of them to 4 fixed sectors
//!   of their block (repeated rewrites of the same records); 10% sequential writes of
//!   4-32 KiB. One hot block is replaced every 1,000 requests.
//! - **E**: uniform random single-sector writes over the whole space.
//!
//! Each stops after the paper's number of sector writes for its pattern (Table I), times a
//! scale factor. All requests are writes of whole 512-byte sectors.

use super::camera::{CameraModel, FatCamera};
use crate::{Op, Request, TraceError};
use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;

/// Bytes in a sector (the paper's page).
pub const SECTOR: u64 = 512;

/// One of the paper's patterns, lettered as in its Table I.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PatternName {
    /// Digital camera (A company).
    A,
    /// Digital camera (B company).
    B,
    /// Linux.
    C,
    /// Symbian.
    D,
    /// Uniform random.
    E,
}

impl PatternName {
    /// Every pattern, in the paper's order.
    pub const ALL: [PatternName; 5] = [
        PatternName::A,
        PatternName::B,
        PatternName::C,
        PatternName::D,
        PatternName::E,
    ];

    /// The letter.
    pub fn letter(self) -> &'static str {
        match self {
            PatternName::A => "A",
            PatternName::B => "B",
            PatternName::C => "C",
            PatternName::D => "D",
            PatternName::E => "E",
        }
    }

    /// Table I's description.
    pub fn description(self) -> &'static str {
        match self {
            PatternName::A => "digital camera (A company)",
            PatternName::B => "digital camera (B company)",
            PatternName::C => "Linux O/S",
            PatternName::D => "Symbian O/S",
            PatternName::E => "uniform random writes",
        }
    }

    /// Table I's number of (sector) writes.
    pub fn paper_writes(self) -> u64 {
        match self {
            PatternName::A => 2_199_200,
            PatternName::B => 3_144_800,
            PatternName::C => 398_000,
            PatternName::D => 404_900,
            PatternName::E => 150_000,
        }
    }

    /// The hot-set shape of C and D (`None` for the cameras and uniform writes).
    pub fn hot_set(self) -> Option<HotSet> {
        match self.shape() {
            Shape::HotSet(shape) => Some(shape),
            _ => None,
        }
    }

    fn shape(self) -> Shape {
        match self {
            PatternName::A => Shape::Camera(CameraModel::FAST_A),
            PatternName::B => Shape::Camera(CameraModel::FAST_B),
            PatternName::C => Shape::HotSet(HotSet {
                hot_blocks: 4,
                small_sectors: (8, 8),
                small_alignment: 8,
                hot_sectors: 0,
                hot_sector_share: 0.0,
                sequential_share: 0.15,
                sequential_sectors: (16, 128),
                drift_every: 400,
                metadata_fraction: 0.1,
                scattered_share: 0.0,
                offset_zero_share: None,
            }),
            PatternName::D => Shape::HotSet(HotSet {
                hot_blocks: 3,
                small_sectors: (1, 2),
                small_alignment: 1,
                hot_sectors: 4,
                hot_sector_share: 0.8,
                sequential_share: 0.1,
                sequential_sectors: (8, 64),
                drift_every: 1000,
                metadata_fraction: 0.1,
                scattered_share: 0.0,
                offset_zero_share: None,
            }),
            PatternName::E => Shape::Uniform,
        }
    }
}

/// Small writes to a few hot blocks that change now and then, plus sequential writes: the
/// shape of patterns C and D ([`PatternName::hot_set`]), public so that an experiment can
/// move one parameter at a time (`reproduce fast`'s sweeps of what decides Fig. 10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotSet {
    /// Hot blocks at any time, in the metadata area.
    pub hot_blocks: usize,
    /// Sectors of a small write, inclusive range.
    pub small_sectors: (u64, u64),
    /// Small writes start at a multiple of this many sectors within their block.
    pub small_alignment: u64,
    /// Fixed sectors per hot block that take `hot_sector_share` of its small writes.
    pub hot_sectors: usize,
    /// Share of a hot block's small writes that go to its fixed sectors.
    pub hot_sector_share: f64,
    /// Share of requests that are sequential writes, which continue where the last ended.
    pub sequential_share: f64,
    /// Sectors of a sequential write, inclusive range.
    pub sequential_sectors: (u64, u64),
    /// One hot block is replaced every this many requests.
    pub drift_every: u64,
    /// The metadata area (where the hot blocks are) as a share of the space.
    pub metadata_fraction: f64,
    /// Share of small writes that go to a uniformly random block of the whole space instead
    /// of a hot block (cold, scattered overwrites); 0 in patterns C and D.
    pub scattered_share: f64,
    /// Share of small writes (not to a hot block's fixed sectors) that start at offset 0 of
    /// their block; `None`: a uniformly random aligned offset, as in patterns C and D
    /// (1 in `sectors_per_block / small_alignment`).
    pub offset_zero_share: Option<f64>,
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    Camera(CameraModel),
    HotSet(HotSet),
    Uniform,
    /// Section 3.5: single-sector writes at uniformly random offsets of `n` fixed blocks.
    HotBlocks(u64),
}

/// A generated workload: the requests of one pattern until its sector budget is spent.
pub struct Generator {
    shape: Shape,
    rng: SimRng,
    sectors: u64,
    sectors_per_block: u64,
    budget: u64,
    written: u64,
    index: u64,
    /// The camera of A and B.
    camera: Option<FatCamera>,
    hot: HotState,
}

#[derive(Default)]
struct HotState {
    /// (block, its hot sectors).
    blocks: Vec<(u64, Vec<u64>)>,
    cursor: u64,
}

/// The requests of a pattern shape on a device of `capacity_bytes` in blocks of
/// `sectors_per_block`, `budget` sector writes in all; refused if the device is smaller than
/// a block or, for the cameras, too small for a FAT and a photo.
pub fn pattern(
    name: PatternName,
    capacity_bytes: u64,
    sectors_per_block: u32,
    budget: u64,
    seed: u64,
) -> Result<Generator, TraceError> {
    let label = format!("reproduce-fast/{}", name.letter());
    Generator::new(
        name.shape(),
        capacity_bytes,
        sectors_per_block,
        budget,
        SimRng::for_stream(seed, &label),
    )
}

/// A hot-set workload of `shape` (patterns C and D are two: [`PatternName::hot_set`]), its
/// random stream named by `label`; refused if the device is smaller than a block, or the
/// shape's shares are not probabilities or its ranges empty.
pub fn hot_set(
    shape: HotSet,
    capacity_bytes: u64,
    sectors_per_block: u32,
    budget: u64,
    seed: u64,
    label: &str,
) -> Result<Generator, TraceError> {
    let shares = [
        ("scattered_share", shape.scattered_share),
        ("hot_sector_share", shape.hot_sector_share),
        ("sequential_share", shape.sequential_share),
        ("offset_zero_share", shape.offset_zero_share.unwrap_or(0.0)),
    ];
    if let Some((name, share)) = shares.iter().find(|(_, s)| !(0.0..=1.0).contains(s)) {
        return Err(TraceError::Spec(format!(
            "hot-set workload: {name} {share} is not a share from 0 to 1"
        )));
    }
    let spb = u64::from(sectors_per_block);
    let (small, sequential) = (shape.small_sectors, shape.sequential_sectors);
    if shape.hot_blocks == 0
        || shape.small_alignment == 0
        || small.0 == 0
        || small.0 > small.1
        || small.1 > spb
        || sequential.0 == 0
        || sequential.0 > sequential.1
        || shape.drift_every == 0
    {
        return Err(TraceError::Spec(format!(
            "hot-set workload: {shape:?} needs hot blocks, a non-zero alignment and drift, and \
             non-empty write sizes, small ones within a block of {spb} sectors"
        )));
    }
    Generator::new(
        Shape::HotSet(shape),
        capacity_bytes,
        sectors_per_block,
        budget,
        SimRng::for_stream(seed, label),
    )
}

/// Section 3.5's workload: `budget` single-sector writes at random offsets of `hot_blocks`
/// blocks spread over the device; refused unless the device has from 1 to `hot_blocks`
/// blocks.
pub fn hot_blocks(
    hot_blocks: u64,
    capacity_bytes: u64,
    sectors_per_block: u32,
    budget: u64,
    seed: u64,
) -> Result<Generator, TraceError> {
    let rng = SimRng::for_stream(seed, &format!("reproduce-fast/nhb={hot_blocks}"));
    let blocks = capacity_bytes / SECTOR / u64::from(sectors_per_block).max(1);
    if hot_blocks == 0 || hot_blocks > blocks {
        return Err(TraceError::Spec(format!(
            "{hot_blocks} hot blocks on a device of {blocks} blocks: there must be 1 to {blocks}"
        )));
    }
    Generator::new(
        Shape::HotBlocks(hot_blocks),
        capacity_bytes,
        sectors_per_block,
        budget,
        rng,
    )
}

impl Generator {
    fn new(
        shape: Shape,
        capacity_bytes: u64,
        sectors_per_block: u32,
        budget: u64,
        rng: SimRng,
    ) -> Result<Self, TraceError> {
        let sectors = capacity_bytes / SECTOR;
        if sectors_per_block == 0 || sectors < u64::from(sectors_per_block) {
            return Err(TraceError::Spec(format!(
                "a device of {capacity_bytes} B does not hold a block of {sectors_per_block}                  {SECTOR} B sectors"
            )));
        }
        let camera = match shape {
            Shape::Camera(model) => Some(FatCamera::new(model, SECTOR, sectors)?),
            _ => None,
        };
        let mut generator = Generator {
            shape,
            rng,
            sectors,
            sectors_per_block: u64::from(sectors_per_block),
            budget,
            written: 0,
            index: 0,
            camera,
            hot: HotState::default(),
        };
        if let Shape::HotSet(hot) = shape {
            for _ in 0..hot.hot_blocks {
                let block = generator.hot_block(hot);
                generator.hot.blocks.push(block);
            }
            generator.hot.cursor = generator.data_region_start(hot);
        }
        Ok(generator)
    }

    fn data_region_start(&self, shape: HotSet) -> u64 {
        let metadata = (self.sectors as f64 * shape.metadata_fraction) as u64;
        metadata.next_multiple_of(self.sectors_per_block)
    }

    /// A random block of the metadata area and its hot sectors.
    fn hot_block(&mut self, shape: HotSet) -> (u64, Vec<u64>) {
        let blocks = (self.data_region_start(shape) / self.sectors_per_block).max(1);
        let block = self.rng.random_range(0..blocks);
        let hot = (0..shape.hot_sectors)
            .map(|_| self.rng.random_range(0..self.sectors_per_block))
            .collect();
        (block, hot)
    }

    fn hot_set_request(&mut self, shape: HotSet) -> (u64, u64) {
        if self.index > 0 && self.index.is_multiple_of(shape.drift_every) {
            let victim = self.rng.random_range(0..self.hot.blocks.len());
            self.hot.blocks[victim] = self.hot_block(shape);
        }
        if self.rng.random_bool(shape.sequential_share) {
            let (low, high) = shape.sequential_sectors;
            let len = self.rng.random_range(low..=high);
            let data_start = self.data_region_start(shape);
            if self.hot.cursor + len > self.sectors {
                self.hot.cursor = data_start;
            }
            let start = self.hot.cursor;
            self.hot.cursor += len;
            return (start, len);
        }
        let (low, high) = shape.small_sectors;
        let len = self.rng.random_range(low..=high);
        // (Random draws for the sweeps' parameters only where they are set, so that C's and
        // D's requests stay as pinned.)
        if shape.scattered_share > 0.0 && self.rng.random_bool(shape.scattered_share) {
            let block = self
                .rng
                .random_range(0..self.sectors / self.sectors_per_block);
            let offset = self.small_offset(shape).min(self.sectors_per_block - len);
            return (block * self.sectors_per_block + offset, len);
        }
        let pick = self.rng.random_range(0..self.hot.blocks.len());
        let (block, hot) = &self.hot.blocks[pick];
        let block = *block;
        let offset = if !hot.is_empty() && self.rng.random_bool(shape.hot_sector_share) {
            hot[self.rng.random_range(0..hot.len())]
        } else {
            self.small_offset(shape)
        };
        let offset = offset.min(self.sectors_per_block - len);
        (block * self.sectors_per_block + offset, len)
    }

    /// A small write's offset in its block: aligned, at 0 with `offset_zero_share` if set.
    fn small_offset(&mut self, shape: HotSet) -> u64 {
        let slots = self.sectors_per_block / shape.small_alignment;
        match shape.offset_zero_share {
            Some(share) if slots > 1 => {
                if self.rng.random_bool(share) {
                    0
                } else {
                    self.rng.random_range(1..slots) * shape.small_alignment
                }
            }
            _ => self.rng.random_range(0..slots) * shape.small_alignment,
        }
    }

    fn next_write(&mut self) -> (u64, u64) {
        match self.shape {
            Shape::Camera(_) => self
                .camera
                .as_mut()
                .expect("invariant: a camera shape has its camera")
                .next_write(&mut self.rng),
            Shape::HotSet(shape) => self.hot_set_request(shape),
            Shape::Uniform => (self.rng.random_range(0..self.sectors), 1),
            Shape::HotBlocks(n) => {
                let blocks = self.sectors / self.sectors_per_block;
                // Spread the hot blocks over the device with a fixed stride.
                let which = self.rng.random_range(0..n);
                let block = (which * (blocks / n.max(1)).max(1)) % blocks;
                let offset = self.rng.random_range(0..self.sectors_per_block);
                (block * self.sectors_per_block + offset, 1)
            }
        }
    }
}

impl Iterator for Generator {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.written >= self.budget {
            return None;
        }
        let (start, len) = self.next_write();
        let len = len
            .min(self.budget - self.written)
            .min(self.sectors - start);
        self.written += len;
        let request = Request {
            time_ns: self.index,
            op: Op::Write,
            offset: start * SECTOR,
            size: (len * SECTOR) as u32,
            volume: 0,
        };
        self.index += 1;
        Some(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPACITY: u64 = 64 << 20;

    fn sectors_of(generator: Generator) -> (u64, u64, u64) {
        let mut requests = 0;
        let mut sectors = 0;
        let mut small = 0;
        for r in generator {
            assert!(r.end() <= CAPACITY, "{r:?} beyond the device");
            assert_eq!(r.offset % SECTOR, 0);
            requests += 1;
            sectors += u64::from(r.size) / SECTOR;
            small += u64::from(r.size <= 2 * SECTOR as u32);
        }
        (requests, sectors, small)
    }

    #[test]
    fn every_pattern_writes_exactly_its_budget_within_the_device() {
        // 49,999 sectors: no pattern's writes add up to it without cutting the last one.
        for budget in [50_000, 49_999] {
            for name in PatternName::ALL {
                let (requests, sectors, _) =
                    sectors_of(pattern(name, CAPACITY, 32, budget, 1).expect("valid"));
                assert_eq!(sectors, budget, "pattern {}", name.letter());
                assert!(requests > 0);
            }
        }
    }

    /// Table I as the reproduction prints it.
    #[test]
    fn the_patterns_are_table_one() {
        let table: Vec<(&str, &str, u64)> = PatternName::ALL
            .into_iter()
            .map(|p| (p.letter(), p.description(), p.paper_writes()))
            .collect();
        assert_eq!(
            table,
            [
                ("A", "digital camera (A company)", 2_199_200),
                ("B", "digital camera (B company)", 3_144_800),
                ("C", "Linux O/S", 398_000),
                ("D", "Symbian O/S", 404_900),
                ("E", "uniform random writes", 150_000),
            ]
        );
    }

    /// Each of a hot set's conditions refuses it alone, and each bound is accepted.
    #[test]
    fn a_hot_set_is_refused_for_each_condition_alone() {
        let c = PatternName::C.hot_set().expect("C is a hot set");
        let made = |shape: HotSet| hot_set(shape, CAPACITY, 32, 10, 1, "test").is_ok();
        assert!(made(c));
        let refused = [
            ("no hot blocks", HotSet { hot_blocks: 0, ..c }),
            (
                "no alignment",
                HotSet {
                    small_alignment: 0,
                    ..c
                },
            ),
            (
                "empty small writes",
                HotSet {
                    small_sectors: (0, 4),
                    ..c
                },
            ),
            (
                "small writes low above high",
                HotSet {
                    small_sectors: (5, 4),
                    ..c
                },
            ),
            (
                "small writes past a block",
                HotSet {
                    small_sectors: (1, 33),
                    ..c
                },
            ),
            (
                "empty sequential writes",
                HotSet {
                    sequential_sectors: (0, 4),
                    ..c
                },
            ),
            (
                "sequential low above high",
                HotSet {
                    sequential_sectors: (5, 4),
                    ..c
                },
            ),
            (
                "no drift",
                HotSet {
                    drift_every: 0,
                    ..c
                },
            ),
        ];
        for (why, shape) in refused {
            assert!(!made(shape), "{why}: {shape:?}");
        }
        let bounds = [
            HotSet {
                small_sectors: (32, 32),
                ..c
            },
            HotSet {
                small_sectors: (1, 1),
                ..c
            },
            HotSet {
                sequential_sectors: (1, 1),
                ..c
            },
            HotSet {
                drift_every: 1,
                ..c
            },
        ];
        for shape in bounds {
            assert!(made(shape), "{shape:?}");
        }
    }

    /// Section 3.5's hot blocks: 1 to every block of the device.
    #[test]
    fn hot_blocks_number_from_one_to_the_devices_blocks() {
        // 64 MiB of 512-byte sectors, 32 a block: 4,096 blocks.
        assert!(hot_blocks(4_096, CAPACITY, 32, 10, 1).is_ok());
        assert!(hot_blocks(1, CAPACITY, 32, 10, 1).is_ok());
        for (n, blocks) in [(4_097, 4_096), (0, 4_096), (2_049, 2_048)] {
            let spb = (CAPACITY / SECTOR / blocks) as u32;
            let error = hot_blocks(n, CAPACITY, spb, 10, 1).err().expect("refused");
            assert_eq!(
                error.to_string(),
                format!(
                    "invalid workload: {n} hot blocks on a device of {blocks} blocks: there \
                     must be 1 to {blocks}"
                )
            );
        }
    }

    /// Sequential writes run to the device's end, the last one ending exactly there when
    /// the data area holds whole writes, and start again at the data area's start.
    #[test]
    fn sequential_writes_wrap_at_the_devices_end() {
        let c = PatternName::C.hot_set().expect("C is a hot set");
        let shape = HotSet {
            sequential_share: 1.0,
            sequential_sectors: (32, 32),
            ..c
        };
        let sectors = CAPACITY / SECTOR;
        // The metadata area: a tenth of the device, rounded up to whole blocks.
        let data_start = (sectors / 10).next_multiple_of(32);
        let per_pass = (sectors - data_start) / 32;
        let starts: Vec<u64> = hot_set(shape, CAPACITY, 32, (per_pass + 2) * 32, 1, "test")
            .expect("valid")
            .map(|r| r.offset / SECTOR)
            .collect();
        let expected: Vec<u64> = (0..per_pass)
            .chain(0..2)
            .map(|i| data_start + i * 32)
            .collect();
        assert_eq!(starts, expected);
    }

    /// A scattered small write stays inside its block, cut back from the block's end where
    /// its offset would take it past (some end exactly there).
    #[test]
    fn scattered_small_writes_stay_in_their_block() {
        let c = PatternName::C.hot_set().expect("C is a hot set");
        let shape = HotSet {
            scattered_share: 1.0,
            sequential_share: 0.0,
            small_sectors: (9, 16),
            small_alignment: 8,
            ..c
        };
        let mut at_end = 0;
        for r in hot_set(shape, CAPACITY, 32, 20_000, 1, "test").expect("valid") {
            let (offset, len) = (r.offset / SECTOR % 32, u64::from(r.size) / SECTOR);
            assert!(offset + len <= 32, "{r:?} crosses its block's end");
            at_end += u64::from(offset + len == 32);
        }
        assert!(at_end > 100, "{at_end} writes end at their block's end");
    }

    #[test]
    fn cameras_write_mostly_large_chunks_and_some_single_sectors() {
        let (requests, sectors, small) =
            sectors_of(pattern(PatternName::A, CAPACITY, 32, 200_000, 1).expect("valid"));
        assert!(
            small * 3 > requests,
            "FAT and directory updates: {small} of {requests}"
        );
        assert!(
            small * 20 < sectors,
            "but few of the sectors: {small} of {sectors}"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_requests() {
        let a: Vec<Request> = pattern(PatternName::D, CAPACITY, 32, 10_000, 7)
            .expect("valid")
            .collect();
        let b: Vec<Request> = pattern(PatternName::D, CAPACITY, 32, 10_000, 7)
            .expect("valid")
            .collect();
        let c: Vec<Request> = pattern(PatternName::D, CAPACITY, 32, 10_000, 8)
            .expect("valid")
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// A hash of a workload's requests (time, offset, size).
    fn fingerprint(requests: impl Iterator<Item = Request>) -> u64 {
        let mut hasher = flashkit_core::StateHasher::new();
        for r in requests {
            hasher.u64(r.time_ns);
            hasher.u64(r.offset);
            hasher.u32(r.size);
        }
        hasher.finish()
    }

    /// The patterns' requests are pinned: `reproduce fast` must give the same figures from
    /// version to version, and the cameras' 300,000 sector writes go through two formats of
    /// the card. The hashes were taken from the generators as they came from the CLI
    /// (`crates/flashkit-cli/src/commands/reproduce/fast/patterns.rs` at e8ae5b4).
    #[test]
    fn the_patterns_requests_are_pinned() {
        let pinned: Vec<(String, u64)> = PatternName::ALL
            .into_iter()
            .map(|name| {
                let requests = pattern(name, CAPACITY, 32, 300_000, 1).expect("valid");
                (name.letter().to_string(), fingerprint(requests))
            })
            .chain([(
                "nhb=8".to_string(),
                fingerprint(hot_blocks(8, CAPACITY, 32, 300_000, 1).expect("valid")),
            )])
            .collect();
        let expected: Vec<(String, u64)> = [
            ("A", 13011900681799050871),
            ("B", 7897513429334666557),
            ("C", 4980016719585225055),
            ("D", 12749812577312657427),
            ("E", 17929810663754363651),
            ("nhb=8", 11284509561602638648),
        ]
        .into_iter()
        .map(|(name, hash)| (name.to_string(), hash))
        .collect();
        assert_eq!(pinned, expected);
    }

    /// The sweeps' two parameters do what they say: scattered small writes leave the
    /// metadata area (where the hot blocks are) at about their share, and the offset-0 share
    /// decides how many small writes start a block; a share that is not one is refused.
    #[test]
    fn a_hot_set_moves_one_parameter_at_a_time() {
        let c = PatternName::C.hot_set().expect("C is a hot set");
        assert!(PatternName::A.hot_set().is_none());
        let metadata_end = (CAPACITY / SECTOR) / 10;
        let small = |shape: HotSet| -> Vec<Request> {
            hot_set(shape, CAPACITY, 32, 200_000, 1, "test")
                .expect("valid")
                .filter(|r| u64::from(r.size) == 8 * SECTOR)
                .collect()
        };
        let outside = |requests: &[Request]| {
            let far = requests
                .iter()
                .filter(|r| r.offset / SECTOR >= metadata_end + 32);
            far.count() as f64 / requests.len() as f64
        };
        let at_zero = |requests: &[Request]| {
            let zero = requests
                .iter()
                .filter(|r| (r.offset / SECTOR).is_multiple_of(32));
            zero.count() as f64 / requests.len() as f64
        };
        let plain = small(c);
        assert_eq!(
            outside(&plain),
            0.0,
            "C's small writes stay in its hot blocks"
        );
        assert!(
            (at_zero(&plain) - 0.25).abs() < 0.02,
            "1 in 4 aligned slots"
        );
        let scattered = small(HotSet {
            scattered_share: 0.4,
            ..c
        });
        // Scattered writes land outside the metadata area nine times in ten.
        assert!(
            (outside(&scattered) - 0.36).abs() < 0.03,
            "{}",
            outside(&scattered)
        );
        for (share, expected) in [(0.0, 0.0), (0.1, 0.1), (1.0, 1.0)] {
            let requests = small(HotSet {
                offset_zero_share: Some(share),
                ..c
            });
            let got = at_zero(&requests);
            assert!((got - expected).abs() < 0.02, "share {share}: {got}");
        }
        for bad in [
            HotSet {
                scattered_share: 1.5,
                ..c
            },
            HotSet {
                offset_zero_share: Some(-0.1),
                ..c
            },
            HotSet { hot_blocks: 0, ..c },
            HotSet {
                small_sectors: (8, 64),
                ..c
            },
        ] {
            assert!(
                hot_set(bad, CAPACITY, 32, 10, 1, "test").is_err(),
                "{bad:?}"
            );
        }
    }

    /// With an offset-0 share, a small write starts at 0 at that share and at another
    /// aligned slot otherwise; in a block of one slot, only at 0.
    #[test]
    fn small_offsets_are_aligned_slots() {
        let c = PatternName::C.hot_set().expect("C is a hot set");
        let shape = HotSet {
            offset_zero_share: Some(0.5),
            small_alignment: 8,
            ..c
        };
        let mut g = hot_set(shape, CAPACITY, 32, 1_000, 1, "test").expect("valid");
        let offsets: Vec<u64> = (0..1_000).map(|_| g.small_offset(shape)).collect();
        assert!(offsets.iter().all(|o| o % 8 == 0 && *o < 32), "{offsets:?}");
        let zeros = offsets.iter().filter(|&&o| o == 0).count();
        assert!((400..600).contains(&zeros), "{zeros} of 1,000 at 0");
        for slot in [8, 16, 24] {
            assert!(offsets.contains(&slot), "slot {slot} never drawn");
        }
        let one_slot = HotSet {
            small_alignment: 32,
            ..shape
        };
        assert!((0..100).all(|_| g.small_offset(one_slot) == 0));
    }

    #[test]
    fn hot_block_workloads_touch_exactly_their_blocks() {
        let mut blocks: Vec<u64> = hot_blocks(8, CAPACITY, 32, 5_000, 1)
            .expect("valid")
            .map(|r| r.offset / SECTOR / 32)
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        assert_eq!(blocks.len(), 8);
    }
}
