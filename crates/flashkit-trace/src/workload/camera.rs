//! A digital camera filling a FAT16 card with photos: flashkit's one camera generator, behind
//! both the `camera` workload ([`super::Pattern::Camera`]) and the FAST paper's patterns A and
//! B ([`CameraModel::FAST_A`], [`CameraModel::FAST_B`], run by [`super::fast`]).
//!
//! Source: Lee et al., "A Log Buffer-Based Flash Translation Layer Using Fully-Associative
//! Sector Translation", ACM TECS 6(3), 2007. Its Table I letters the five traces of its
//! evaluation: A "Workload from digital camera (A company)", B "Workload from digital camera
//! (B company)", C "Workload from Linux O/S", D "Workload from Symbian O/S", E "Uniform random
//! writes (generated synthetically)". Section 2.4's text around Fig. 4 letters the workloads
//! of that one experiment differently: "pattern A of mainly random writes generated from a
//! Symbian environment and pattern B and C, mainly of sequential writes generated from a
//! digital camera". We follow Table I: section 4, whose Fig. 10 and Table II are what
//! `reproduce fast` reproduces, uses its lettering ("pattern A and B, which are generated from
//! digital cameras", Table II's switch counts for A and B), while Fig. 4 is a separate
//! measurement of BAST alone that we do not redraw.
//!
//! The paper's traces are not public and it says no more of the cameras than that; the file
//! system, its layout and every parameter below are ours, chosen as a camera of the time would
//! write a FAT16 card (docs/reproduction/fast.md).
//!
//! Layout, in sectors (512 B for the paper's cameras; the `camera` workload's are its
//! alignment unit):
//!
//! ```text
//! | boot | FAT 1 | FAT 2 | root directory | (padding) | data area: clusters 2, 3, ... |
//!   1      f       f       16 KiB           to data_align_bytes, if any
//! ```
//!
//! where a FAT holds a two-byte entry for every cluster of the card (and the two reserved
//! ones), `f` sectors in all, and the root directory 512 entries of 32 bytes.
//!
//! What the camera writes, photo after photo: the photo's clusters, from the next free one on,
//! in writes of `chunk_bytes` (the last one shorter); after each such write, the FAT sectors
//! holding its clusters' entries, one single-sector write each, in FAT 1 and then the same
//! sectors in FAT 2; after the photo, the sector holding its directory entry. When the next
//! photo does not fit the clusters left, the card is formatted first (both FATs in one write,
//! then the whole root directory) and filled again from the first cluster.
//!
//! What it is not: a file system. There are no reads, no subdirectories, no long names, and
//! no 65,524-cluster limit: a card with more clusters than FAT16 allows would be FAT32 with
//! four-byte entries, and here keeps two-byte ones (half the FAT sectors a FAT32 camera would
//! touch per chunk).

use crate::TraceError;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Bytes of the root directory: 512 entries of 32 bytes, FAT16's usual size.
const ROOT_DIRECTORY_BYTES: u64 = 512 * 32;

/// Bytes of a directory entry.
const DIRECTORY_ENTRY_BYTES: u64 = 32;

/// Bytes of a FAT16 entry.
const FAT_ENTRY_BYTES: u64 = 2;

/// Cluster numbers start at 2: entries 0 and 1 of a FAT are reserved.
const FIRST_CLUSTER: u64 = 2;

/// The sector sizes FAT allows.
const SECTOR_SIZES: [u64; 4] = [512, 1024, 2048, 4096];

/// A camera's parameters; the sector size comes with the device it writes
/// ([`CameraModel::validate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraModel {
    /// Bytes of a cluster, the FAT's unit of allocation: a power-of-two number of sectors.
    pub cluster_bytes: u32,
    /// Bytes of a data write: a photo is written in writes of this size, its last one
    /// shorter. A multiple of the cluster.
    pub chunk_bytes: u32,
    /// The smallest photo, bytes (a multiple of the sector).
    pub file_min_bytes: u64,
    /// The largest photo, bytes (a multiple of the sector); photo sizes are drawn uniformly
    /// from the whole sectors between the two.
    pub file_max_bytes: u64,
    /// Where the data area starts: at the next multiple of this many bytes after the root
    /// directory (aligned, say to the erase block), or right after it if `None`.
    #[serde(default)]
    pub data_align_bytes: Option<u64>,
}

impl CameraModel {
    /// The FAST paper's pattern A on 512-byte sectors: 2 KiB clusters, 32 KiB writes, 1-2 MiB
    /// photos, the data area aligned to the paper's 16 KiB erase block.
    pub const FAST_A: CameraModel = CameraModel {
        cluster_bytes: 2 << 10,
        chunk_bytes: 32 << 10,
        file_min_bytes: 1 << 20,
        file_max_bytes: 2 << 20,
        data_align_bytes: Some(16 << 10),
    };

    /// The FAST paper's pattern B on 512-byte sectors: 4 KiB clusters, 64 KiB writes, 2-4 MiB
    /// photos, the data area right after the root directory (an odd sector, so that its
    /// sequential writes straddle erase blocks). Also the `camera` workload's defaults.
    pub const FAST_B: CameraModel = CameraModel {
        cluster_bytes: 4 << 10,
        chunk_bytes: 64 << 10,
        file_min_bytes: 2 << 20,
        file_max_bytes: 4 << 20,
        data_align_bytes: None,
    };

    /// Refuse a camera that cannot write a card of `span_bytes` in sectors of
    /// `sector_bytes`; the message names the parameter at fault.
    pub fn validate(&self, sector_bytes: u64, span_bytes: u64) -> Result<(), TraceError> {
        FatCamera::new(*self, sector_bytes, span_bytes / sector_bytes.max(1)).map(drop)
    }
}

/// Where a camera's file system lies on the card, in sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FatLayout {
    /// The first sector of FAT 1 (after the boot sector).
    pub fat1: u64,
    /// Sectors of one FAT.
    pub fat_sectors: u64,
    /// The first sector of the root directory.
    pub root: u64,
    /// Sectors of the root directory.
    pub root_sectors: u64,
    /// The first sector of the data area (cluster 2).
    pub data_start: u64,
    /// Clusters in the data area.
    pub clusters: u64,
    /// Sectors of a cluster.
    pub cluster_sectors: u64,
}

impl FatLayout {
    /// The FAT sector (counted from the FAT's first) that holds `cluster`'s entry, where
    /// `cluster` counts from 0 at the start of the data area.
    pub fn fat_sector_of(&self, cluster: u64, sector_bytes: u64) -> u64 {
        (cluster + FIRST_CLUSTER) * FAT_ENTRY_BYTES / sector_bytes
    }
}

/// A camera at work: the writes of the next photos, one at a time.
#[derive(Clone, Debug)]
pub(crate) struct FatCamera {
    layout: FatLayout,
    sector_bytes: u64,
    /// Clusters per data write.
    chunk_clusters: u64,
    /// Smallest and largest photo, sectors.
    file_sectors: (u64, u64),
    /// The first free cluster (from 0 at the start of the data area).
    next_cluster: u64,
    /// Photos written in all. A format does not reset it: the directory entries go on
    /// cycling through the root directory's sectors (as the FAST cameras always have).
    files: u64,
    /// Writes of the current photo not yet handed out: (first sector, sectors).
    queue: VecDeque<(u64, u64)>,
}

impl FatCamera {
    /// A freshly formatted card of `sectors` sectors of `sector_bytes`, or why `model`
    /// cannot write it.
    pub fn new(model: CameraModel, sector_bytes: u64, sectors: u64) -> Result<Self, TraceError> {
        let fail = |why: String| Err(TraceError::Spec(format!("camera {why}")));
        let s = sector_bytes;
        if !SECTOR_SIZES.contains(&s) {
            return fail(format!(
                "sector {s} B (the workload's alignment) is not a FAT sector size (512, 1024, \
                 2048 or 4096 B)"
            ));
        }
        let cluster = u64::from(model.cluster_bytes);
        if cluster == 0 || !cluster.is_multiple_of(s) || !(cluster / s).is_power_of_two() {
            return fail(format!(
                "cluster size {cluster} B is not a power-of-two number of {s} B sectors"
            ));
        }
        let chunk = u64::from(model.chunk_bytes);
        if chunk == 0 || !chunk.is_multiple_of(cluster) {
            return fail(format!(
                "chunk size {chunk} B is not a positive multiple of the {cluster} B cluster size"
            ));
        }
        for bytes in [model.file_min_bytes, model.file_max_bytes] {
            if bytes == 0 || !bytes.is_multiple_of(s) {
                return fail(format!(
                    "file size {bytes} B is not a positive multiple of the {s} B sector"
                ));
            }
        }
        if model.file_min_bytes > model.file_max_bytes {
            return fail(format!(
                "file sizes {}-{} B are an empty range (the smallest above the largest)",
                model.file_min_bytes, model.file_max_bytes
            ));
        }
        let align_sectors = match model.data_align_bytes {
            None => 1,
            Some(align) if align > 0 && align.is_multiple_of(s) => align / s,
            Some(align) => {
                return fail(format!(
                    "data alignment {align} B is not a positive multiple of the {s} B sector"
                ));
            }
        };
        let layout = Self::lay_out(sectors, s, cluster / s, align_sectors);
        let file_clusters = model.file_max_bytes.div_ceil(cluster);
        let Some(layout) = layout.filter(|layout| layout.clusters >= file_clusters) else {
            return fail(format!(
                "file size {} B does not fit the data area of a {} B card (after the FATs and \
                 root directory{}): make the span larger or the files smaller",
                model.file_max_bytes,
                sectors * s,
                if align_sectors > 1 {
                    ", aligned as asked"
                } else {
                    ""
                },
            ));
        };
        // Formatting writes both FATs in one request, whose size is a u32.
        if 2 * layout.fat_sectors * s > u64::from(u32::MAX) {
            return fail(format!(
                "cluster size {cluster} B makes {} B of FATs on this card, past the 4 GiB a \
                 request can write when the card is formatted: make the clusters larger",
                2 * layout.fat_sectors * s
            ));
        }
        Ok(FatCamera {
            layout,
            sector_bytes: s,
            chunk_clusters: chunk / cluster,
            file_sectors: (model.file_min_bytes / s, model.file_max_bytes / s),
            next_cluster: 0,
            files: 0,
            queue: VecDeque::new(),
        })
    }

    /// FAT16 on `sectors` sectors: boot sector, two FATs sized for every cluster the card
    /// could hold, the root directory, then the data area from the next multiple of
    /// `align_sectors`. `None` if nothing is left for data.
    fn lay_out(
        sectors: u64,
        sector_bytes: u64,
        cluster_sectors: u64,
        align_sectors: u64,
    ) -> Option<FatLayout> {
        let clusters_guess = sectors / cluster_sectors;
        let fat_sectors =
            ((clusters_guess + FIRST_CLUSTER) * FAT_ENTRY_BYTES).div_ceil(sector_bytes);
        let root = 1 + 2 * fat_sectors;
        let root_sectors = ROOT_DIRECTORY_BYTES / sector_bytes;
        let data_start = (root + root_sectors).checked_next_multiple_of(align_sectors)?;
        Some(FatLayout {
            fat1: 1,
            fat_sectors,
            root,
            root_sectors,
            data_start,
            clusters: sectors.checked_sub(data_start)? / cluster_sectors,
            cluster_sectors,
        })
    }

    /// Where the file system lies.
    #[cfg(test)]
    pub fn layout(&self) -> FatLayout {
        self.layout
    }

    /// The next write, as (first sector, sectors); a photo's size is drawn from `rng` when
    /// its first write is asked for.
    pub fn next_write(&mut self, rng: &mut impl Rng) -> (u64, u64) {
        if self.queue.is_empty() {
            self.queue_photo(rng);
        }
        self.queue
            .pop_front()
            .expect("invariant: a photo queues writes")
    }

    /// Queue the writes of one photo: data chunks, each followed by its FAT updates in both
    /// copies, then the directory entry. A full card is formatted first.
    fn queue_photo(&mut self, rng: &mut impl Rng) {
        let (low, high) = self.file_sectors;
        let sectors = rng.random_range(low..=high);
        let l = self.layout;
        let clusters = sectors.div_ceil(l.cluster_sectors);
        if self.next_cluster + clusters > l.clusters {
            self.queue.push_back((l.fat1, 2 * l.fat_sectors));
            self.queue.push_back((l.root, l.root_sectors));
            self.next_cluster = 0;
        }
        let mut done = 0;
        while done < clusters {
            let n = self.chunk_clusters.min(clusters - done);
            let first = self.next_cluster + done;
            self.queue.push_back((
                l.data_start + first * l.cluster_sectors,
                n * l.cluster_sectors,
            ));
            let fat_first = l.fat_sector_of(first, self.sector_bytes);
            let fat_last = l.fat_sector_of(first + n - 1, self.sector_bytes);
            for copy in [l.fat1, l.fat1 + l.fat_sectors] {
                for sector in fat_first..=fat_last {
                    self.queue.push_back((copy + sector, 1));
                }
            }
            done += n;
        }
        self.next_cluster += clusters;
        let entry_sector =
            (self.files * DIRECTORY_ENTRY_BYTES / self.sector_bytes) % l.root_sectors;
        self.queue.push_back((l.root + entry_sector, 1));
        self.files += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{SimRng, SimRngExt};

    /// 64 MiB in 512-byte sectors, the FAST paper's card.
    const CARD: u64 = 131_072;

    fn camera(model: CameraModel, sector_bytes: u64, sectors: u64) -> FatCamera {
        FatCamera::new(model, sector_bytes, sectors).expect("a valid camera")
    }

    /// What a reader of the writes saw.
    #[derive(Debug, Default)]
    struct Seen {
        photos: u64,
        formats: u64,
        full_chunks: u64,
        short_chunks: u64,
        /// Chunks whose FAT entries straddle two FAT sectors.
        two_sector_fat_updates: u64,
    }

    /// Follows `photos` photos of a camera's writes and checks each against FAT16's rules,
    /// knowing only the layout and the model: a photo's chunks start at the first free
    /// cluster and follow each other, each a whole number of clusters, full but for the
    /// last; after each, the FAT sectors holding its clusters' entries (computed here entry
    /// by entry) in FAT 1, then the same in FAT 2; then the sector of the photo's directory
    /// entry; and a format (both FATs, then the root directory) exactly when the photo
    /// would not fit the clusters left, after which the photo starts at the first cluster.
    fn follow(model: CameraModel, sector_bytes: u64, sectors: u64, photos: u64) -> Seen {
        let mut camera = camera(model, sector_bytes, sectors);
        let l = camera.layout();
        let mut rng = SimRng::for_stream(3, "camera-test");
        let mut write = || {
            let (start, len) = camera.next_write(&mut rng);
            assert!(
                len > 0 && start + len <= sectors,
                "({start}, {len}) off the card"
            );
            (start, len)
        };
        let cs = l.cluster_sectors;
        let chunk_sectors = u64::from(model.chunk_bytes) / sector_bytes;
        let mut seen = Seen::default();
        let mut next_free = 0;
        let mut pending = write();
        for files in 0..photos {
            let free_before = next_free;
            let formatted = pending == (1, 2 * l.fat_sectors);
            if formatted {
                assert_eq!(write(), (l.root, l.root_sectors), "the root directory");
                seen.formats += 1;
                next_free = 0;
                pending = write();
            }
            let mut clusters = 0;
            let directory_entry = loop {
                let (start, len) = pending;
                if start < l.data_start {
                    break pending;
                }
                let expected_first = next_free + clusters;
                let chunk = (sector_bytes, chunk_sectors);
                clusters += check_chunk(&l, chunk, pending, expected_first, &mut write, &mut seen);
                pending = write();
                if len == chunk_sectors {
                    seen.full_chunks += 1;
                } else {
                    seen.short_chunks += 1;
                    assert!(pending.0 < l.data_start, "a short chunk ends its photo");
                }
            };
            let entry = (files * 32 / sector_bytes) % l.root_sectors;
            assert_eq!(
                directory_entry,
                (l.root + entry, 1),
                "photo {files}'s entry"
            );
            let photo_sectors = clusters * cs;
            assert!(photo_sectors * sector_bytes >= model.file_min_bytes);
            assert!((photo_sectors - cs) * sector_bytes < model.file_max_bytes);
            // Formatted exactly when the photo did not fit after the previous one.
            assert_eq!(
                formatted,
                free_before + clusters > l.clusters,
                "photo {files}"
            );
            next_free += clusters;
            seen.photos += 1;
            pending = write();
        }
        seen
    }

    /// Checks the chunk `(start, len)` of a photo, whose first cluster should be
    /// `expected_first`: on a cluster, whole clusters, no more than `chunk_sectors` (in
    /// sectors of `sector_bytes`), then the FAT sectors holding its
    /// clusters' entries (computed here entry by entry) in FAT 1, then the same in FAT 2.
    /// Returns the chunk's clusters; counts in `seen` a chunk whose entries straddle two
    /// FAT sectors.
    fn check_chunk(
        l: &FatLayout,
        (sector_bytes, chunk_sectors): (u64, u64),
        (start, len): (u64, u64),
        expected_first: u64,
        write: &mut impl FnMut() -> (u64, u64),
        seen: &mut Seen,
    ) -> u64 {
        let cs = l.cluster_sectors;
        assert_eq!(
            (start - l.data_start) % cs,
            0,
            "a chunk starts on a cluster"
        );
        assert_eq!(len % cs, 0, "a chunk is whole clusters");
        assert!(len <= chunk_sectors);
        let first = (start - l.data_start) / cs;
        assert_eq!(first, expected_first, "chunks follow each other");
        let n = len / cs;
        let mut fat: Vec<u64> = (first..first + n)
            .map(|k| (k + 2) * 2 / sector_bytes)
            .collect();
        fat.dedup();
        seen.two_sector_fat_updates += u64::from(fat.len() == 2);
        for copy in [l.fat1, l.fat1 + l.fat_sectors] {
            for sector in &fat {
                assert_eq!(write(), (copy + sector, 1), "the chunk's FAT sectors");
            }
        }
        n
    }

    /// The paper's cameras on its 64 MiB card: A's FATs are (32,768 + 2) entries x 2 B = 129
    /// sectors, its root directory starts at 1 + 2 x 129 = 259 and ends at 291, and its data
    /// area starts at 320, the next 16 KiB block; (131,072 - 320) / 4 = 32,688 clusters. B's
    /// FATs are 65 sectors, its root 131 to 163, where its data area starts unaligned:
    /// (131,072 - 163) / 8 = 16,363 clusters.
    #[test]
    fn the_fast_cameras_lay_out_the_card_as_documented() {
        let a = camera(CameraModel::FAST_A, 512, CARD).layout();
        let b = camera(CameraModel::FAST_B, 512, CARD).layout();
        let expect = |fat_sectors, root, data_start, clusters, cluster_sectors| FatLayout {
            fat1: 1,
            fat_sectors,
            root,
            root_sectors: 32,
            data_start,
            clusters,
            cluster_sectors,
        };
        assert_eq!(a, expect(129, 259, 320, 32_688, 4));
        assert_eq!(b, expect(65, 131, 163, 16_363, 8));
    }

    /// Alignment moves the data area to the next multiple of `data_align_bytes` and nothing
    /// else: A unaligned starts its data at 291, right after its root directory; B aligned
    /// to 16 KiB at 192. The first write is the first chunk, there.
    #[test]
    fn the_data_area_is_aligned_only_when_asked() {
        for (model, align, data_start) in [
            (CameraModel::FAST_A, None, 291),
            (CameraModel::FAST_A, Some(16 << 10), 320),
            (CameraModel::FAST_B, None, 163),
            (CameraModel::FAST_B, Some(16 << 10), 192),
            (CameraModel::FAST_B, Some(4 << 10), 168),
        ] {
            let model = CameraModel {
                data_align_bytes: align,
                ..model
            };
            let mut camera = camera(model, 512, CARD);
            assert_eq!(camera.layout().data_start, data_start, "{model:?}");
            let mut rng = SimRng::for_stream(1, "camera-test");
            let chunk = u64::from(model.chunk_bytes) / 512;
            assert_eq!(camera.next_write(&mut rng), (data_start, chunk));
        }
    }

    /// Every write of the paper's cameras, through two formats of the card, follows FAT16's
    /// rules; so do cameras on 4 KiB sectors and with chunks that do not divide the photos.
    #[test]
    fn every_write_follows_the_file_system() {
        let on_4k = CameraModel {
            cluster_bytes: 8 << 10,
            chunk_bytes: 24 << 10,
            file_min_bytes: 100 << 12,
            file_max_bytes: 300 << 12,
            data_align_bytes: Some(64 << 10),
        };
        for (model, sector_bytes, photos) in [
            (CameraModel::FAST_A, 512, 140),
            (CameraModel::FAST_B, 512, 70),
            (on_4k, 4096, 400),
        ] {
            let seen = follow(model, sector_bytes, CARD * 512 / sector_bytes, photos);
            assert_eq!(seen.photos, photos);
            assert!(seen.formats >= 2, "{model:?}: {seen:?}");
            assert!(seen.full_chunks > 10 * seen.short_chunks, "{seen:?}");
            assert!(seen.short_chunks > 0, "{seen:?}");
            assert!(seen.two_sector_fat_updates > 0, "{seen:?}");
        }
    }

    /// A photo that exactly fills the card is written without a format; the next one
    /// formats it. On 83 sectors with one-sector clusters: a FAT of one sector (85 entries),
    /// root directory at 3-34, 48 clusters from 35; 8 KiB photos (16 clusters) in 4 KiB
    /// chunks fill it with three, the third ending at the card's last sector.
    #[test]
    fn the_card_is_formatted_when_the_next_photo_does_not_fit() {
        let model = CameraModel {
            cluster_bytes: 512,
            chunk_bytes: 4 << 10,
            file_min_bytes: 8 << 10,
            file_max_bytes: 8 << 10,
            data_align_bytes: None,
        };
        let mut camera = camera(model, 512, 83);
        let mut rng = SimRng::for_stream(1, "camera-test");
        let writes: Vec<(u64, u64)> = (0..24).map(|_| camera.next_write(&mut rng)).collect();
        let photo = |start: u64, entry: u64| {
            [
                (start, 8),
                (1, 1),
                (2, 1),
                (start + 8, 8),
                (1, 1),
                (2, 1),
                (3 + entry, 1),
            ]
        };
        let mut expected: Vec<(u64, u64)> = [photo(35, 0), photo(51, 0), photo(67, 0)].concat();
        expected.extend([(1, 2), (3, 32), (35, 8)]);
        assert_eq!(writes, expected);
    }

    /// The directory entries of photo 16 on go to the root directory's second sector (16
    /// entries of 32 B a sector), and wrap after its 32 sectors (512 entries).
    #[test]
    fn directory_entries_fill_the_root_directory_in_turn() {
        let model = CameraModel {
            cluster_bytes: 512,
            chunk_bytes: 512,
            file_min_bytes: 512,
            file_max_bytes: 512,
            data_align_bytes: None,
        };
        let mut camera = camera(model, 512, CARD);
        let root = camera.layout().root;
        let mut rng = SimRng::for_stream(1, "camera-test");
        // A photo is one chunk, its FAT sector in each copy, its entry.
        let entries: Vec<u64> = (0..4 * 530)
            .map(|_| camera.next_write(&mut rng))
            .skip(3)
            .step_by(4)
            .map(|(sector, _)| sector - root)
            .collect();
        assert_eq!(entries[..17], [[0; 16].as_slice(), &[1]].concat());
        assert_eq!(entries[511], 31);
        assert_eq!(entries[512], 0);
    }

    #[test]
    fn the_same_seed_gives_the_same_writes() {
        let writes = |seed: u64| {
            let mut camera = camera(CameraModel::FAST_A, 512, CARD);
            let mut rng = SimRng::for_stream(seed, "camera-test");
            (0..5_000)
                .map(|_| camera.next_write(&mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(writes(4), writes(4));
        assert_ne!(writes(4), writes(5));
    }

    /// Each parameter a FAT cannot have is refused, by name.
    #[test]
    fn bad_parameters_are_refused_by_name() {
        let b = CameraModel::FAST_B;
        let refused = |model: CameraModel, sector_bytes: u64, span_bytes: u64| {
            model
                .validate(sector_bytes, span_bytes)
                .err()
                .map(|e| e.to_string().replace("invalid workload: camera ", ""))
        };
        let cases = [
            (
                b,
                8192,
                "sector 8192 B (the workload's alignment) is not a FAT sector size (512, 1024, 2048 or 4096 B)",
            ),
            (
                b,
                256,
                "sector 256 B (the workload's alignment) is not a FAT sector size (512, 1024, 2048 or 4096 B)",
            ),
            (
                CameraModel {
                    cluster_bytes: 0,
                    ..b
                },
                512,
                "cluster size 0 B is not a power-of-two number of 512 B sectors",
            ),
            (
                CameraModel {
                    cluster_bytes: 1536,
                    ..b
                },
                512,
                "cluster size 1536 B is not a power-of-two number of 512 B sectors",
            ),
            (
                CameraModel {
                    cluster_bytes: 2048,
                    ..b
                },
                4096,
                "cluster size 2048 B is not a power-of-two number of 4096 B sectors",
            ),
            (
                CameraModel {
                    chunk_bytes: 0,
                    ..b
                },
                512,
                "chunk size 0 B is not a positive multiple of the 4096 B cluster size",
            ),
            (
                CameraModel {
                    chunk_bytes: 6144,
                    ..b
                },
                512,
                "chunk size 6144 B is not a positive multiple of the 4096 B cluster size",
            ),
            (
                CameraModel {
                    file_min_bytes: 0,
                    ..b
                },
                512,
                "file size 0 B is not a positive multiple of the 512 B sector",
            ),
            (
                CameraModel {
                    file_max_bytes: 1000,
                    ..b
                },
                512,
                "file size 1000 B is not a positive multiple of the 512 B sector",
            ),
            (
                CameraModel {
                    file_min_bytes: 8 << 20,
                    ..b
                },
                512,
                "file sizes 8388608-4194304 B are an empty range (the smallest above the largest)",
            ),
            (
                CameraModel {
                    data_align_bytes: Some(0),
                    ..b
                },
                512,
                "data alignment 0 B is not a positive multiple of the 512 B sector",
            ),
            (
                CameraModel {
                    data_align_bytes: Some(1000),
                    ..b
                },
                512,
                "data alignment 1000 B is not a positive multiple of the 512 B sector",
            ),
        ];
        for (model, sector_bytes, why) in cases {
            assert_eq!(
                refused(model, sector_bytes, 64 << 20).as_deref(),
                Some(why),
                "{model:?}"
            );
        }
        // B's smallest card: a boot sector, two FATs of 5 sectors (1,029 clusters and 2
        // reserved entries of 2 B), the root directory's 32 sectors and one 4 MiB photo's
        // 8,192; a sector less and the data area holds 1,023 clusters.
        let fits = |span_bytes: u64| refused(b, 512, span_bytes).is_none();
        assert!(fits((1 + 2 * 5 + 32 + 8_192) * 512));
        assert!(!fits((1 + 2 * 5 + 32 + 8_192 - 1) * 512));
        assert_eq!(
            refused(
                CameraModel {
                    data_align_bytes: Some(8 << 20),
                    ..b
                },
                512,
                8 << 20
            )
            .as_deref(),
            Some(
                "file size 4194304 B does not fit the data area of a 8388608 B card (after \
                 the FATs and root directory, aligned as asked): make the span larger or the \
                 files smaller"
            )
        );
        // The largest alignment there is leaves no card a data area (and overflows nothing).
        let huge = CameraModel {
            data_align_bytes: Some(u64::MAX - 511),
            ..b
        };
        assert!(
            refused(huge, 512, 64 << 20)
                .is_some_and(|why| why.starts_with("file size 4194304 B does not fit"))
        );
        // 1 TiB in 512 B clusters: 2^31 + 2 entries a FAT, 2^23 + 1 sectors; 8 GiB and 1 KiB
        // for the two.
        assert_eq!(
            refused(
                CameraModel {
                    cluster_bytes: 512,
                    chunk_bytes: 512,
                    ..b
                },
                512,
                1 << 40
            )
            .as_deref(),
            Some(
                "cluster size 512 B makes 8589935616 B of FATs on this card, past the 4 GiB a \
                 request can write when the card is formatted: make the clusters larger"
            )
        );
    }
}
