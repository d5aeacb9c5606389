//! A real device's throughput against block size: Fig. 1 of Ajwani et al. (SEA 2009), and
//! the way section 4 chose its block sizes from it: "the smallest block sizes where the disk
//! reaches optimal performance for random reads and random writes are 128 KB and 16 MB
//! respectively, see Figure 1, and consequently we set B_r and B_w to these values".
//!
//! [`probe`] writes a file of [`ProbeSpec::file_bytes`] in a directory (so that reads find
//! data rather than a sparse hole), then for every block size from
//! [`ProbeSpec::min_block`] to [`ProbeSpec::max_block`] (powers of two) and each of the four
//! [`Access`] patterns transfers blocks of that size, aligned to it, for a time and byte
//! budget, with `O_DIRECT` where the filesystem allows it (the page cache would otherwise
//! answer the reads). Random offsets come from a seeded generator; the times are wall-clock
//! and so differ from run to run, as any device measurement does.
//!
//! [`ProbeReport::knee`] is the paper's rule: the smallest block size at which a random
//! pattern reaches a fraction (0.9 by default in the CLI) of the throughput the sequential
//! pattern of the same operation settles at.

use crate::EmError;
use crate::io::{AlignedBuf, DIRECT_ALIGN, open_path};
use flashkit_core::Progress;
use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;
use serde::Serialize;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// How the blocks of one measurement are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Consecutive blocks from the start of the file, wrapping.
    SequentialRead,
    /// Blocks at uniformly random aligned offsets.
    RandomRead,
    /// Consecutive blocks from the start of the file, wrapping.
    SequentialWrite,
    /// Blocks at uniformly random aligned offsets.
    RandomWrite,
}

impl Access {
    /// The four patterns, in the order of the paper's legend.
    pub const ALL: [Access; 4] = [
        Access::SequentialRead,
        Access::RandomRead,
        Access::SequentialWrite,
        Access::RandomWrite,
    ];

    /// The pattern's name in tables and legends.
    pub fn name(self) -> &'static str {
        match self {
            Access::SequentialRead => "sequential read",
            Access::RandomRead => "random read",
            Access::SequentialWrite => "sequential write",
            Access::RandomWrite => "random write",
        }
    }

    /// Whether it writes.
    pub fn writes(self) -> bool {
        matches!(self, Access::SequentialWrite | Access::RandomWrite)
    }

    /// Whether its offsets are random.
    pub fn random(self) -> bool {
        matches!(self, Access::RandomRead | Access::RandomWrite)
    }

    /// The sequential pattern of the same operation.
    pub fn sequential(self) -> Access {
        if self.writes() {
            Access::SequentialWrite
        } else {
            Access::SequentialRead
        }
    }
}

/// What to measure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProbeSpec {
    /// Size of the file the blocks are read from and written to. Larger than any cache in
    /// front of the device, ideally; at least `max_block`.
    pub file_bytes: u64,
    /// Smallest block size, a power of two of at least 512 B (`O_DIRECT` needs the
    /// filesystem's block alignment, 4 KiB on most).
    pub min_block: u64,
    /// Largest block size, a power of two.
    pub max_block: u64,
    /// Time budget of one measurement (one pattern at one block size), seconds.
    pub seconds: f64,
    /// Byte budget of one measurement: it stops at whichever budget is spent first, after
    /// at least [`MIN_TRANSFERS`] transfers.
    pub max_bytes: u64,
    /// Seed of the random offsets.
    pub seed: u64,
    /// Transfers in flight at once (queue depth): this many threads, each with its own
    /// buffer of `max_block` bytes, issuing synchronous transfers; 1 is what the paper's
    /// algorithms issue, more is what a modern SSD needs to show its parallelism.
    pub depth: u32,
}

/// The fewest transfers a measurement makes, whatever its budgets.
pub const MIN_TRANSFERS: u64 = 4;

impl ProbeSpec {
    /// The block sizes measured: the powers of two from `min_block` to `max_block`.
    pub fn block_sizes(&self) -> Vec<u64> {
        std::iter::successors(Some(self.min_block), |b| b.checked_mul(2))
            .take_while(|&b| b <= self.max_block)
            .collect()
    }

    /// Refuse a spec that cannot be measured.
    pub fn check(&self) -> Result<(), EmError> {
        let power = |b: u64| b.is_power_of_two();
        if !power(self.min_block) || !power(self.max_block) || self.min_block < 512 {
            return Err(EmError::Config(format!(
                "block sizes must be powers of two of at least 512 B, got {} to {}",
                self.min_block, self.max_block
            )));
        }
        if self.min_block > self.max_block {
            return Err(EmError::Config(format!(
                "the smallest block size ({} B) is larger than the largest ({} B)",
                self.min_block, self.max_block
            )));
        }
        if self.file_bytes < self.max_block || !self.file_bytes.is_multiple_of(self.max_block) {
            return Err(EmError::Config(format!(
                "the file ({} B) must be a multiple of the largest block size ({} B)",
                self.file_bytes, self.max_block
            )));
        }
        if self.depth == 0 || self.depth > 256 {
            return Err(EmError::Config(format!(
                "the queue depth must be 1 to 256, got {}",
                self.depth
            )));
        }
        if !(self.seconds > 0.0 && self.seconds.is_finite()) || self.max_bytes == 0 {
            return Err(EmError::Config(format!(
                "a measurement needs a positive time and byte budget, got {} s and {} B",
                self.seconds, self.max_bytes
            )));
        }
        Ok(())
    }
}

/// One measurement: a pattern at a block size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProbePoint {
    /// The pattern.
    pub access: Access,
    /// Bytes a transfer.
    pub block_bytes: u64,
    /// Transfers made.
    pub transfers: u64,
    /// Wall-clock seconds they took.
    pub seconds: f64,
}

impl ProbePoint {
    /// Throughput in MB/s (10^6 bytes a second, as drives are rated).
    pub fn mb_per_s(&self) -> f64 {
        (self.transfers * self.block_bytes) as f64 / self.seconds.max(1e-9) / 1e6
    }
}

/// Every measurement of a probe, and how the file was accessed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProbeReport {
    /// The file measured (removed afterwards).
    pub path: PathBuf,
    /// What was asked.
    pub spec: ProbeSpec,
    /// Whether the file was open with `O_DIRECT`; when not, reads may have come from the page
    /// cache and the figures describe the cache more than the device.
    pub direct: bool,
    /// Why `O_DIRECT` was not used, when it was not.
    pub fallback: Option<String>,
    /// Seconds spent writing the file before the measurements.
    pub fill_seconds: f64,
    /// One point a pattern and block size, patterns in [`Access::ALL`] order, block sizes
    /// ascending within each.
    pub points: Vec<ProbePoint>,
}

impl ProbeReport {
    /// The throughput of `access` at `block_bytes`, if measured.
    pub fn mb_per_s(&self, access: Access, block_bytes: u64) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.access == access && p.block_bytes == block_bytes)
            .map(ProbePoint::mb_per_s)
    }

    /// The throughput `access` settles at: the median of its figures over the larger half of
    /// the block sizes (a median, so that one disturbed measurement does not move it).
    pub fn plateau(&self, access: Access) -> Option<f64> {
        let mut figures: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.access == access)
            .map(ProbePoint::mb_per_s)
            .collect();
        let mut larger = figures.split_off(figures.len() / 2);
        larger.sort_by(f64::total_cmp);
        (!larger.is_empty()).then(|| larger[larger.len() / 2])
    }

    /// The paper's block-size rule: the smallest block size at which the random pattern
    /// `access` reaches `fraction` of the [`plateau`](Self::plateau) of the sequential
    /// pattern of the same operation, and still does at the next block size (so that one
    /// lucky measurement does not decide); `None` when no block size measured does.
    pub fn knee(&self, access: Access, fraction: f64) -> Option<u64> {
        let target = fraction * self.plateau(access.sequential())?;
        let random: Vec<&ProbePoint> = self.points.iter().filter(|p| p.access == access).collect();
        (0..random.len())
            .find(|&i| {
                random[i..random.len().min(i + 2)]
                    .iter()
                    .all(|p| p.mb_per_s() >= target)
            })
            .map(|i| random[i].block_bytes)
    }
}

/// Create (or truncate) the probe file, with `O_DIRECT` when `direct`.
fn open(path: &Path, direct: bool) -> std::io::Result<File> {
    open_path(path, true, direct)
}

/// Measure the device under `dir` as `spec` asks (see the module's documentation). The file
/// is created in `dir` and removed afterwards, also on error. `progress` counts
/// measurements (one phase for the fill in bytes, one for the measurements).
pub fn probe(
    dir: &Path,
    spec: &ProbeSpec,
    progress: &dyn Progress,
) -> Result<ProbeReport, EmError> {
    spec.check()?;
    let path = probe_file(dir);
    let _remove = RemoveOnDrop(&path);
    let mut file = ProbeFile::open(dir, &path, spec)?;
    let mut workers = probe_workers(spec)?;
    let fill_seconds = file.fill(dir, &path, spec, workers[0].1.bytes(), progress)?;
    let points = measure_all(&file.file, &path, spec, &mut workers, progress)?;
    progress.finish();
    Ok(ProbeReport {
        path: path.clone(),
        spec: spec.clone(),
        direct: file.fallback.is_none(),
        fallback: file.fallback,
        fill_seconds,
        points,
    })
}

/// The error of an `op` on the probe file at `path` at `offset`, for `map_err`.
fn io_error(path: &Path, op: &'static str, offset: u64) -> impl FnOnce(std::io::Error) -> EmError {
    let path = path.to_path_buf();
    move |source: std::io::Error| EmError::Io {
        path,
        op,
        offset,
        source,
    }
}

/// The probe file, and why it is not open with `O_DIRECT` when it is not.
struct ProbeFile {
    file: File,
    fallback: Option<String>,
}

impl ProbeFile {
    /// Create the file at `path` in `dir`: with `O_DIRECT`, unless the filesystem refuses it
    /// (tmpfs on older kernels refuses the open, some filesystems the first transfer) or the
    /// blocks are not aligned for it.
    fn open(dir: &Path, path: &Path, spec: &ProbeSpec) -> Result<ProbeFile, EmError> {
        Self::open_with(dir, path, spec, open)
    }

    /// [`ProbeFile::open`] with `open` creating the file (`direct` asking for `O_DIRECT`),
    /// so that tests can refuse it as a filesystem would.
    fn open_with(
        dir: &Path,
        path: &Path,
        spec: &ProbeSpec,
        mut open: impl FnMut(&Path, bool) -> std::io::Result<File>,
    ) -> Result<ProbeFile, EmError> {
        let mut fallback = (!spec.min_block.is_multiple_of(DIRECT_ALIGN as u64)).then(|| {
            format!(
                "blocks of {} B are not a multiple of {DIRECT_ALIGN} B",
                spec.min_block
            )
        });
        let file = match open(path, fallback.is_none()) {
            Ok(file) => file,
            Err(e) if fallback.is_none() && e.raw_os_error() == Some(libc::EINVAL) => {
                fallback = Some(format!("{} refused O_DIRECT", dir.display()));
                open(path, false).map_err(io_error(path, "open", 0))?
            }
            Err(e) => return Err(io_error(path, "open", 0)(e)),
        };
        Ok(ProbeFile { file, fallback })
    }

    /// Fill the file with `block` over and over, so that reads find data written to the
    /// device (reopening it without `O_DIRECT` if the first transfer is refused); the
    /// seconds it took.
    fn fill(
        &mut self,
        dir: &Path,
        path: &Path,
        spec: &ProbeSpec,
        block: &[u8],
        progress: &dyn Progress,
    ) -> Result<f64, EmError> {
        self.fill_with(
            dir,
            path,
            spec,
            block,
            progress,
            open,
            |file, block, offset| file.write_all_at(block, offset),
        )
    }

    /// [`ProbeFile::fill`] with `open` reopening the file and `write_at` writing a block, so
    /// that tests can refuse a transfer as a filesystem would.
    #[allow(clippy::too_many_arguments)]
    fn fill_with(
        &mut self,
        dir: &Path,
        path: &Path,
        spec: &ProbeSpec,
        block: &[u8],
        progress: &dyn Progress,
        mut open: impl FnMut(&Path, bool) -> std::io::Result<File>,
        mut write_at: impl FnMut(&File, &[u8], u64) -> std::io::Result<()>,
    ) -> Result<f64, EmError> {
        progress.start("writing the probe file", Some(spec.file_bytes));
        let started = Instant::now();
        let mut offset = 0;
        while offset < spec.file_bytes {
            let result = write_at(&self.file, block, offset);
            if let Err(e) = result {
                if self.fallback.is_none() && offset == 0 && e.raw_os_error() == Some(libc::EINVAL)
                {
                    self.fallback = Some(format!("{} refused an O_DIRECT transfer", dir.display()));
                    self.file = open(path, false).map_err(io_error(path, "open", 0))?;
                    continue;
                }
                return Err(io_error(path, "write", offset)(e));
            }
            offset += spec.max_block;
            progress.advance(spec.max_block);
        }
        self.file.sync_all().map_err(io_error(path, "sync", 0))?;
        Ok(started.elapsed().as_secs_f64())
    }
}

/// A generator and a buffer a worker, kept from one measurement to the next; the buffers
/// hold a pattern, not zeros, which some devices and filesystems store for free.
fn probe_workers(spec: &ProbeSpec) -> Result<Vec<(SimRng, AlignedBuf)>, EmError> {
    (0..spec.depth)
        .map(|w| {
            let mut buffer =
                AlignedBuf::try_new(spec.max_block as usize, "a probe worker's block")?;
            for (i, byte) in buffer.bytes_mut().iter_mut().enumerate() {
                *byte = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()[7];
            }
            let rng = SimRng::for_stream(spec.seed, &format!("device-probe-{w}"));
            Ok((rng, buffer))
        })
        .collect()
}

/// Every measurement: each pattern in [`Access::ALL`] order, at each block size ascending.
fn measure_all(
    file: &File,
    path: &Path,
    spec: &ProbeSpec,
    workers: &mut [(SimRng, AlignedBuf)],
    progress: &dyn Progress,
) -> Result<Vec<ProbePoint>, EmError> {
    let sizes = spec.block_sizes();
    progress.start("measuring", Some((sizes.len() * Access::ALL.len()) as u64));
    let mut points = Vec::with_capacity(sizes.len() * Access::ALL.len());
    for access in Access::ALL {
        for &block in &sizes {
            let (transfers, started) = measure(file, path, spec, access, block, workers)?;
            if access.writes() {
                // What the writes left in a volatile cache counts: the paper's device had
                // no say in when its blocks reached flash either.
                file.sync_data().map_err(io_error(path, "sync", 0))?;
            }
            points.push(ProbePoint {
                access,
                block_bytes: block,
                transfers,
                seconds: started.elapsed().as_secs_f64(),
            });
            progress.advance(1);
        }
    }
    Ok(points)
}

/// One measurement: `access` at `block` by every worker (one thread each, synchronous
/// transfers) until the budgets are spent. Workers take numbered tickets, so a sequential
/// pattern stays one stream however many are in flight. The transfers made, and when the
/// measurement started.
fn measure(
    file: &File,
    path: &Path,
    spec: &ProbeSpec,
    access: Access,
    block: u64,
    workers: &mut [(SimRng, AlignedBuf)],
) -> Result<(u64, Instant), EmError> {
    let blocks = spec.file_bytes / block;
    let (tickets, done) = (&AtomicU64::new(0), &AtomicU64::new(0));
    let started = Instant::now();
    let spent = &|ticket: u64| {
        ticket >= MIN_TRANSFERS
            && (ticket * block >= spec.max_bytes || started.elapsed().as_secs_f64() >= spec.seconds)
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|(rng, buffer)| {
                scope.spawn(move || -> Result<(), EmError> {
                    let data = &mut buffer.bytes_mut()[..block as usize];
                    loop {
                        let ticket = tickets.fetch_add(1, Ordering::Relaxed);
                        if spent(ticket) {
                            return Ok(());
                        }
                        let offset = if access.random() {
                            rng.random_range(0..blocks) * block
                        } else {
                            (ticket % blocks) * block
                        };
                        let (op, result) = if access.writes() {
                            ("write", file.write_all_at(data, offset))
                        } else {
                            ("read", file.read_exact_at(data, offset))
                        };
                        result.map_err(|source| EmError::Io {
                            path: path.to_path_buf(),
                            op,
                            offset,
                            source,
                        })?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        handles.into_iter().try_for_each(|handle| {
            handle
                .join()
                .unwrap_or_else(|_| Err(EmError::Device("a probe worker panicked".into())))
        })
    })?;
    Ok((done.load(Ordering::Relaxed), started))
}

/// The file [`probe`] measures in `dir` (one per process), removed when it returns; a
/// caller that can be interrupted removes it itself then.
pub fn probe_file(dir: &Path) -> PathBuf {
    dir.join(format!("flashkit-probe-{}.tmp", std::process::id()))
}

/// Removes the probe file however [`probe`] returns.
struct RemoveOnDrop<'a>(&'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_core::{NoProgress, PhaseLog, ProgressLog};

    fn spec() -> ProbeSpec {
        ProbeSpec {
            file_bytes: 1 << 20,
            min_block: 4096,
            max_block: 64 << 10,
            seconds: 0.005,
            max_bytes: 256 << 10,
            seed: 7,
            depth: 1,
        }
    }

    #[test]
    fn every_pattern_is_measured_at_every_block_size_and_the_file_is_removed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let progress = ProgressLog::default();
        let report = probe(dir.path(), &spec(), &progress).expect("probe");
        assert_eq!(report.points.len(), 4 * 5);
        // Each phase announced with its total, and advanced to it.
        assert_eq!(
            progress.phases(),
            [
                PhaseLog::new("writing the probe file", Some(1 << 20), 1 << 20),
                PhaseLog::new("measuring", Some(20), 20),
            ]
        );
        for access in Access::ALL {
            let sizes: Vec<u64> = report
                .points
                .iter()
                .filter(|p| p.access == access)
                .map(|p| p.block_bytes)
                .collect();
            assert_eq!(sizes, [4096, 8192, 16384, 32768, 65536], "{access:?}");
        }
        for point in &report.points {
            assert!(point.transfers >= MIN_TRANSFERS, "{point:?}");
            assert!(
                point.transfers * point.block_bytes
                    <= (256 << 10) + point.block_bytes * MIN_TRANSFERS
            );
            assert!(point.mb_per_s() > 0.0, "{point:?}");
        }
        assert!(!report.path.exists(), "the probe file is left behind");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            0,
            "the directory is not left as found"
        );
    }

    /// Blocks smaller than `O_DIRECT`'s alignment go through the page cache, and the report
    /// says why (so that nobody takes cached reads for the device's).
    #[test]
    fn blocks_too_small_for_o_direct_go_through_the_cache_and_say_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let spec = ProbeSpec {
            min_block: 512,
            max_block: 8192,
            ..spec()
        };
        let report = probe(dir.path(), &spec, &NoProgress).expect("probe");
        assert!(!report.direct);
        let why = report.fallback.expect("a reason");
        assert!(why.contains("512 B") && why.contains("4096"), "{why}");
        assert_eq!(report.points.len(), 4 * 5);
    }

    #[test]
    fn several_transfers_in_flight_share_the_budgets() {
        let dir = tempfile::tempdir().expect("temp dir");
        let spec = ProbeSpec {
            depth: 4,
            seconds: 10.0,
            ..spec()
        };
        let report = probe(dir.path(), &spec, &NoProgress).expect("probe");
        for point in &report.points {
            // The byte budget stops all four: 256 KiB, whatever the block size.
            assert_eq!(
                point.transfers,
                (256 << 10) / point.block_bytes,
                "{point:?}"
            );
        }
    }

    #[test]
    fn the_knee_is_the_smallest_block_size_reaching_the_sequential_best() {
        let point = |access, block_bytes, mb: f64| ProbePoint {
            access,
            block_bytes,
            transfers: 1,
            seconds: block_bytes as f64 / (mb * 1e6),
        };
        let report = ProbeReport {
            path: PathBuf::new(),
            spec: spec(),
            direct: true,
            fallback: None,
            fill_seconds: 0.0,
            points: vec![
                point(Access::SequentialWrite, 4096, 500.0),
                point(Access::SequentialWrite, 8192, 900.0),
                point(Access::SequentialWrite, 16384, 1000.0),
                point(Access::SequentialWrite, 32768, 3000.0),
                point(Access::SequentialWrite, 65536, 1000.0),
                point(Access::RandomWrite, 4096, 100.0),
                point(Access::RandomWrite, 8192, 950.0),
                point(Access::RandomWrite, 16384, 850.0),
                point(Access::RandomWrite, 32768, 950.0),
                point(Access::RandomWrite, 65536, 990.0),
                point(Access::SequentialRead, 4096, 800.0),
                point(Access::SequentialRead, 8192, 800.0),
                point(Access::RandomRead, 4096, 100.0),
                point(Access::RandomRead, 8192, 100.0),
            ],
        };
        // The plateau is the median of the larger half: 1000, not the 3000 spike.
        assert!((report.plateau(Access::SequentialWrite).expect("measured") - 1000.0).abs() < 1e-6);
        // 8 KiB reaches 90% once, but 16 KiB falls back below: the knee is 32 KiB.
        assert_eq!(report.knee(Access::RandomWrite, 0.9), Some(32768));
        assert_eq!(report.knee(Access::RandomWrite, 0.8), Some(8192));
        assert_eq!(report.knee(Access::RandomRead, 0.9), None);
        // A figure is found by pattern and block size both.
        let figure = |access, block| report.mb_per_s(access, block).expect("measured");
        assert!((figure(Access::RandomWrite, 16384) - 850.0).abs() < 1e-9);
        assert!((figure(Access::SequentialWrite, 16384) - 1000.0).abs() < 1e-9);
        assert!((figure(Access::RandomWrite, 8192) - 950.0).abs() < 1e-9);
        assert_eq!(report.mb_per_s(Access::RandomRead, 65536), None);
        // Throughput in 10^6 bytes a second, over at least a nanosecond.
        let point = ProbePoint {
            access: Access::RandomRead,
            block_bytes: 4096,
            transfers: 250,
            seconds: 0.5,
        };
        assert!((point.mb_per_s() - 2.048).abs() < 1e-12);
        let instant = ProbePoint {
            seconds: 0.0,
            ..point
        };
        assert!((instant.mb_per_s() - 1.024e9).abs() < 1e-3);
    }

    #[test]
    fn specs_that_cannot_be_measured_are_refused() {
        for (field, bad) in [
            (
                "min_block",
                ProbeSpec {
                    min_block: 3000,
                    ..spec()
                },
            ),
            (
                "min_block",
                ProbeSpec {
                    min_block: 256,
                    ..spec()
                },
            ),
            (
                "order",
                ProbeSpec {
                    min_block: 1 << 17,
                    ..spec()
                },
            ),
            (
                "file",
                ProbeSpec {
                    file_bytes: (1 << 20) + 4096,
                    ..spec()
                },
            ),
            (
                "file",
                ProbeSpec {
                    file_bytes: 32 << 10,
                    ..spec()
                },
            ),
            (
                "budget",
                ProbeSpec {
                    seconds: 0.0,
                    ..spec()
                },
            ),
            (
                "budget",
                ProbeSpec {
                    max_bytes: 0,
                    ..spec()
                },
            ),
        ] {
            assert!(
                matches!(bad.check(), Err(EmError::Config(_))),
                "{field}: {bad:?}"
            );
        }
        assert!(spec().check().is_ok());
        // At the bounds: one block size, a file of one largest block, 1 and 256 in flight.
        for good in [
            ProbeSpec {
                min_block: 64 << 10,
                ..spec()
            },
            ProbeSpec {
                file_bytes: 64 << 10,
                ..spec()
            },
            ProbeSpec {
                depth: 256,
                ..spec()
            },
            ProbeSpec {
                min_block: 512,
                ..spec()
            },
        ] {
            assert!(good.check().is_ok(), "{good:?}");
        }
        for bad in [
            ProbeSpec { depth: 0, ..spec() },
            ProbeSpec {
                depth: 257,
                ..spec()
            },
            ProbeSpec {
                max_block: 3 << 14,
                file_bytes: 3 << 16,
                ..spec()
            },
            ProbeSpec {
                seconds: f64::INFINITY,
                ..spec()
            },
            ProbeSpec {
                seconds: f64::NAN,
                ..spec()
            },
        ] {
            assert!(matches!(bad.check(), Err(EmError::Config(_))), "{bad:?}");
        }
        assert_eq!(
            ProbeSpec {
                min_block: 64 << 10,
                ..spec()
            }
            .block_sizes(),
            [64 << 10]
        );
        assert_eq!(spec().block_sizes(), [4096, 8192, 16384, 32768, 65536]);
    }

    #[test]
    fn the_file_is_filled_to_its_size_in_largest_blocks() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = probe_file(dir.path());
        let spec = spec();
        let mut file = ProbeFile::open(dir.path(), &path, &spec).expect("open");
        let block = AlignedBuf::new(spec.max_block as usize);
        file.fill(dir.path(), &path, &spec, block.bytes(), &NoProgress)
            .expect("fill");
        let length = std::fs::metadata(&path).expect("metadata").len();
        assert_eq!(length, spec.file_bytes);
    }

    /// An opener that refuses its first call with `errno`, then opens as asked; the calls'
    /// `direct` flags.
    fn refusing_open(
        errno: i32,
        calls: &std::cell::RefCell<Vec<bool>>,
    ) -> impl FnMut(&Path, bool) -> std::io::Result<File> + '_ {
        move |path, direct| {
            calls.borrow_mut().push(direct);
            if calls.borrow().len() == 1 {
                return Err(std::io::Error::from_raw_os_error(errno));
            }
            open(path, direct)
        }
    }

    #[test]
    fn a_filesystem_refusing_o_direct_at_open_falls_back_and_other_errors_do_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = probe_file(dir.path());
        let calls = std::cell::RefCell::new(Vec::new());
        let file = ProbeFile::open_with(
            dir.path(),
            &path,
            &spec(),
            refusing_open(libc::EINVAL, &calls),
        )
        .expect("falls back");
        assert_eq!(
            file.fallback,
            Some(format!("{} refused O_DIRECT", dir.path().display()))
        );
        assert_eq!(*calls.borrow(), [true, false]);

        // Any other error is the open's error, not retried.
        let calls = std::cell::RefCell::new(Vec::new());
        let refused = ProbeFile::open_with(
            dir.path(),
            &path,
            &spec(),
            refusing_open(libc::EACCES, &calls),
        );
        assert!(
            matches!(&refused, Err(EmError::Io { op: "open", offset: 0, source, .. })
                if source.raw_os_error() == Some(libc::EACCES)),
            "{:?}",
            refused.err()
        );
        assert_eq!(*calls.borrow(), [true]);

        // Blocks not aligned for O_DIRECT: the file opens without it, and EINVAL then is an
        // error like any other.
        let unaligned = ProbeSpec {
            min_block: 1000,
            ..spec()
        };
        let calls = std::cell::RefCell::new(Vec::new());
        let refused = ProbeFile::open_with(
            dir.path(),
            &path,
            &unaligned,
            refusing_open(libc::EINVAL, &calls),
        );
        assert!(matches!(refused, Err(EmError::Io { op: "open", .. })));
        assert_eq!(*calls.borrow(), [false]);
    }

    #[test]
    fn a_filesystem_refusing_the_first_o_direct_transfer_falls_back_and_later_ones_fail() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = probe_file(dir.path());
        let spec = spec();
        let block = AlignedBuf::new(spec.max_block as usize);
        // The first write refused with `errno` when at `refuse_at`; the offsets written and
        // the reopenings' `direct` flags.
        let fill = |fallback: Option<String>, errno: i32, refuse_at: u64| {
            let mut file = ProbeFile {
                file: open(&path, false).expect("open"),
                fallback,
            };
            let reopened = std::cell::RefCell::new(Vec::new());
            let mut writes = Vec::new();
            let result = file.fill_with(
                dir.path(),
                &path,
                &spec,
                block.bytes(),
                &NoProgress,
                |path, direct| {
                    reopened.borrow_mut().push(direct);
                    open(path, direct)
                },
                |file, block, offset| {
                    writes.push(offset);
                    if offset == refuse_at && writes.iter().filter(|&&o| o == offset).count() == 1 {
                        return Err(std::io::Error::from_raw_os_error(errno));
                    }
                    file.write_all_at(block, offset)
                },
            );
            (result.map(|_| file.fallback), reopened.into_inner(), writes)
        };
        let step = spec.max_block;
        let all: Vec<u64> = (0..spec.file_bytes / step).map(|i| i * step).collect();

        // EINVAL on the first transfer: reopened without O_DIRECT, and the write done again.
        let (fallback, reopened, writes) = fill(None, libc::EINVAL, 0);
        assert_eq!(
            fallback.expect("falls back"),
            Some(format!(
                "{} refused an O_DIRECT transfer",
                dir.path().display()
            ))
        );
        assert_eq!(reopened, [false]);
        assert_eq!(writes, [&[0][..], &all].concat());
        assert_eq!(
            std::fs::metadata(&path).expect("metadata").len(),
            spec.file_bytes
        );

        // EINVAL past the first transfer, another error on the first, or EINVAL once O_DIRECT
        // is already off: the write's error, at its offset, with nothing reopened.
        for (fallback, errno, at) in [
            (None, libc::EINVAL, step),
            (None, libc::EIO, 0),
            (Some("off already".to_string()), libc::EINVAL, 0),
        ] {
            let (result, reopened, _) = fill(fallback, errno, at);
            assert!(
                matches!(&result, Err(EmError::Io { op: "write", offset, source, .. })
                    if *offset == at && source.raw_os_error() == Some(errno)),
                "{errno} at {at}: {result:?}"
            );
            assert!(reopened.is_empty());
        }
    }

    #[test]
    fn a_plateau_is_the_median_of_the_larger_half() {
        let point = |block_bytes, mb: f64| ProbePoint {
            access: Access::SequentialRead,
            block_bytes,
            transfers: 1,
            seconds: block_bytes as f64 / (mb * 1e6),
        };
        let report = |points| ProbeReport {
            path: PathBuf::new(),
            spec: spec(),
            direct: true,
            fallback: None,
            fill_seconds: 0.0,
            points,
        };
        // Four sizes: the larger two, 30 and 40, whose median (the upper one) is 40.
        let four = report(vec![
            point(4096, 10.0),
            point(8192, 20.0),
            point(16384, 40.0),
            point(32768, 30.0),
        ]);
        let plateau = four.plateau(Access::SequentialRead).expect("measured");
        assert!((plateau - 40.0).abs() < 1e-9, "{plateau}");
        assert_eq!(four.plateau(Access::RandomRead), None);
        let one = report(vec![point(4096, 10.0)]);
        let plateau = one.plateau(Access::SequentialRead).expect("measured");
        assert!((plateau - 10.0).abs() < 1e-9, "{plateau}");
    }

    #[test]
    fn the_patterns_name_their_operation_and_offsets() {
        let table: Vec<(&str, bool, bool, Access)> = Access::ALL
            .iter()
            .map(|&a| (a.name(), a.writes(), a.random(), a.sequential()))
            .collect();
        assert_eq!(
            table,
            [
                ("sequential read", false, false, Access::SequentialRead),
                ("random read", false, true, Access::SequentialRead),
                ("sequential write", true, false, Access::SequentialWrite),
                ("random write", true, true, Access::SequentialWrite),
            ]
        );
    }
}
