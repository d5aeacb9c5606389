//! The GRR paper's workload (section 4.2, Table 4): files are created, then modified and
//! read, and a B+-tree indexes where each page of each file is. The tree's key is (file,
//! page offset); its value is the data address the page was last written to.
//!
//! Table 4's parameters and how they are read here:
//!
//! | Table 4 | meaning | here |
//! |---|---|---|
//! | nfc {1K, 5K, 10K} | files created | `files`: the create phase writes each file once |
//! | fmc {0, 1, 2, 4, 8} | modifications per file | `modification_coefficient`: the mixed phase issues `files x fmc` requests, so at 0/100 each file is modified fmc times on average |
//! | RWR {100/0 ... 0/100} | read/write ratio | `read_percent`: each mixed request is a read with this probability, else a modification |
//! | AWL 16K | average write length | `avg_write_bytes`: a create or a modification writes 1 to 2 x AWL / page - 1 pages, uniformly (mean AWL) |
//! | ARL 1 | average read length, pages | `read_pages`: a read looks up this many consecutive pages |
//! | WR 1,024,000 | logical pages reached by writes | `data_pages`: data addresses (the tree's values) cycle through this many pages |
//! | m, k, l, w | storage and buffer parameters | not workload: see [`crate::nand::Grr`] and [`crate::nand::BufferConfig`] |
//!
//! A modification starts at a uniformly random page of a uniformly random file, or just
//! past its end (an append), and may extend the file: pages past the end are new keys. The
//! paper's bold "typical" values did not survive in the text we have; the defaults are ours:
//! nfc 5K, fmc 4, RWR 40/60, AWL 16 KiB over 2 KiB pages.
//!
//! What it is not: a file system trace. The paper used a "random trace" it does not
//! publish; this generator draws every choice uniformly from one seed.

use flashkit_core::{SimRng, SimRngExt};
use rand::Rng;
use serde::Serialize;

/// Table 4's workload parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FileWorkload {
    /// Files created (nfc).
    pub files: u32,
    /// Modifications per file (fmc): the mixed phase issues `files x fmc` requests.
    pub modification_coefficient: f64,
    /// Share of reads among the mixed requests, percent (the RWR's first figure).
    pub read_percent: u32,
    /// Average write length in bytes (AWL).
    pub avg_write_bytes: u64,
    /// Bytes of a file page (one tree entry).
    pub data_page_bytes: u32,
    /// Pages a read looks up (ARL).
    pub read_pages: u32,
    /// Data addresses the writes cycle through (WR).
    pub data_pages: u64,
    /// Seed.
    pub seed: u64,
}

impl Default for FileWorkload {
    fn default() -> Self {
        FileWorkload {
            files: 5_000,
            modification_coefficient: 4.0,
            read_percent: 40,
            avg_write_bytes: 16 * 1024,
            data_page_bytes: 2048,
            read_pages: 1,
            data_pages: 1_024_000,
            seed: 1,
        }
    }
}

impl FileWorkload {
    /// Requests of the mixed phase.
    pub fn mixed_requests(&self) -> u64 {
        (f64::from(self.files) * self.modification_coefficient).round() as u64
    }

    /// Pages of the longest write (twice the average, less one).
    pub fn max_write_pages(&self) -> u32 {
        let avg = self
            .avg_write_bytes
            .div_ceil(u64::from(self.data_page_bytes.max(1)));
        (2 * avg).saturating_sub(1).max(1) as u32
    }

    /// Check the parameters; the field and what is wrong with it.
    pub fn validate(&self) -> Result<(), String> {
        if self.files == 0 {
            return Err("files: at least one file must be created".into());
        }
        let fmc = self.modification_coefficient;
        if !(fmc.is_finite() && fmc >= 0.0) {
            return Err(format!(
                "modification coefficient: {fmc} is not a count >= 0"
            ));
        }
        if self.read_percent > 100 {
            return Err(format!(
                "read share: {}% is more than 100%",
                self.read_percent
            ));
        }
        if self.data_page_bytes == 0 || self.avg_write_bytes == 0 {
            return Err("average write length and page size must be positive".into());
        }
        if u64::from(self.max_write_pages()) > u64::from(u32::MAX) / 4 {
            return Err(format!(
                "average write length: {} B is too long",
                self.avg_write_bytes
            ));
        }
        if self.read_pages == 0 || self.data_pages == 0 {
            return Err("read length and data pages must be positive".into());
        }
        Ok(())
    }

    /// The request stream.
    pub fn stream(&self) -> FileStream {
        FileStream {
            spec: *self,
            rng: SimRng::for_stream(self.seed, "grr/workload"),
            sizes: Vec::with_capacity(self.files as usize),
            issued: 0,
        }
    }
}

/// One file-system request, in file pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file of `pages` pages.
    Create {
        /// The file.
        file: u32,
        /// Its length.
        pages: u32,
    },
    /// Write `pages` pages from `offset` (pages past the end extend the file).
    Write {
        /// The file.
        file: u32,
        /// First page.
        offset: u32,
        /// Pages.
        pages: u32,
    },
    /// Read `pages` pages from `offset`, all inside the file.
    Read {
        /// The file.
        file: u32,
        /// First page.
        offset: u32,
        /// Pages.
        pages: u32,
    },
}

/// The phase a request belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FilePhase {
    /// Every file created once.
    Create,
    /// Reads and modifications.
    Mixed,
}

/// The stream of requests: the create phase, then the mixed phase.
pub struct FileStream {
    spec: FileWorkload,
    rng: SimRng,
    sizes: Vec<u32>,
    issued: u64,
}

impl FileStream {
    fn length(&mut self) -> u32 {
        self.rng.random_range(1..=self.spec.max_write_pages())
    }

    /// The next request and its phase, `None` after the last.
    pub fn next_op(&mut self) -> Option<(FilePhase, FileOp)> {
        if (self.sizes.len() as u32) < self.spec.files {
            let pages = self.length();
            let file = self.sizes.len() as u32;
            self.sizes.push(pages);
            return Some((FilePhase::Create, FileOp::Create { file, pages }));
        }
        if self.issued >= self.spec.mixed_requests() {
            return None;
        }
        self.issued += 1;
        let file = self.rng.random_range(0..self.spec.files);
        let size = self.sizes[file as usize];
        let read = self.rng.random_range(0..100u32) < self.spec.read_percent;
        let op = if read {
            let pages = self.spec.read_pages.min(size);
            let offset = self.rng.random_range(0..=size - pages);
            FileOp::Read {
                file,
                offset,
                pages,
            }
        } else {
            let offset = self.rng.random_range(0..=size);
            let pages = self.length();
            self.sizes[file as usize] = size.max(offset + pages);
            FileOp::Write {
                file,
                offset,
                pages,
            }
        };
        Some((FilePhase::Mixed, op))
    }
}

/// The tree key of a file page.
pub fn key(file: u32, page: u32) -> u64 {
    (u64::from(file) << 32) | u64::from(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_creates_every_file_then_mixes_at_the_ratio() {
        let spec = FileWorkload {
            files: 200,
            modification_coefficient: 50.0,
            read_percent: 30,
            ..FileWorkload::default()
        };
        let mut stream = spec.stream();
        let (mut creates, mut reads, mut writes, mut pages) = (0, 0, 0, 0u64);
        let mut sizes = vec![0u32; 200];
        while let Some((phase, op)) = stream.next_op() {
            match op {
                FileOp::Create { file, pages: n } => {
                    assert_eq!(phase, FilePhase::Create);
                    assert_eq!(file, creates);
                    sizes[file as usize] = n;
                    creates += 1;
                    pages += u64::from(n);
                }
                FileOp::Write {
                    file,
                    offset,
                    pages: n,
                } => {
                    assert!(offset <= sizes[file as usize], "no holes");
                    sizes[file as usize] = sizes[file as usize].max(offset + n);
                    writes += 1;
                }
                FileOp::Read {
                    file,
                    offset,
                    pages: n,
                } => {
                    assert!(offset + n <= sizes[file as usize], "reads stay in the file");
                    reads += 1;
                }
            }
        }
        assert_eq!(creates, 200);
        assert_eq!(reads + writes, 10_000);
        assert!(
            (2_700..3_300).contains(&reads),
            "{reads} reads of 10,000 at 30%"
        );
        let mean = pages as f64 / 200.0;
        assert!(
            (6.5..9.5).contains(&mean),
            "mean create length {mean} pages (AWL 8)"
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let spec = FileWorkload {
            files: 50,
            ..FileWorkload::default()
        };
        let collect = || {
            let mut s = spec.stream();
            std::iter::from_fn(|| s.next_op()).collect::<Vec<_>>()
        };
        assert_eq!(collect(), collect());
        assert!(
            FileWorkload {
                read_percent: 101,
                ..spec
            }
            .validate()
            .is_err()
        );
    }

    /// Each parameter the workload checks, refused by name at its bound and accepted on the
    /// right side of it.
    #[test]
    fn every_parameter_is_checked_at_its_bound() {
        let ok = FileWorkload::default();
        assert_eq!(ok.validate(), Ok(()));
        let refused = |w: FileWorkload| w.validate().expect_err("refused");
        assert_eq!(
            refused(FileWorkload { files: 0, ..ok }),
            "files: at least one file must be created"
        );
        for fmc in [-0.5, f64::NAN, f64::INFINITY] {
            let e = refused(FileWorkload {
                modification_coefficient: fmc,
                ..ok
            });
            assert!(e.starts_with("modification coefficient:"), "{e}");
        }
        let zero = FileWorkload {
            modification_coefficient: 0.0,
            read_percent: 100,
            ..ok
        };
        assert_eq!(zero.validate(), Ok(()));
        assert_eq!(
            refused(FileWorkload {
                read_percent: 101,
                ..ok
            }),
            "read share: 101% is more than 100%"
        );
        let no_size = "average write length and page size must be positive";
        assert_eq!(
            refused(FileWorkload {
                data_page_bytes: 0,
                ..ok
            }),
            no_size
        );
        assert_eq!(
            refused(FileWorkload {
                avg_write_bytes: 0,
                ..ok
            }),
            no_size
        );
        let no_reads = "read length and data pages must be positive";
        assert_eq!(
            refused(FileWorkload {
                read_pages: 0,
                ..ok
            }),
            no_reads
        );
        assert_eq!(
            refused(FileWorkload {
                data_pages: 0,
                ..ok
            }),
            no_reads
        );
        // A write of at most u32::MAX / 4 pages: 2 x AWL / page - 1.
        let longest = |avg_write_bytes| FileWorkload {
            avg_write_bytes,
            data_page_bytes: 1,
            ..ok
        };
        // 2 x AWL - 1 <= limit: the longest AWL accepted is (limit + 1) / 2.
        let limit = u64::from(u32::MAX / 4);
        let awl = limit.div_ceil(2);
        assert_eq!(longest(awl).validate(), Ok(()));
        assert_eq!(
            refused(longest(awl + 1)),
            format!("average write length: {} B is too long", awl + 1)
        );
    }

    /// Table 4's sizes in pages and requests, and the key of a file page.
    #[test]
    fn lengths_requests_and_keys_follow_the_parameters() {
        let w = FileWorkload::default();
        assert_eq!(
            w.max_write_pages(),
            15,
            "16 KiB over 2 KiB pages: 1 to 15 pages"
        );
        let odd = FileWorkload {
            avg_write_bytes: 5000,
            ..w
        };
        assert_eq!(odd.max_write_pages(), 5, "5,000 B is 3 pages rounded up");
        let one = FileWorkload {
            avg_write_bytes: 100,
            ..w
        };
        assert_eq!(one.max_write_pages(), 1);
        assert_eq!(w.mixed_requests(), 20_000);
        let fractional = FileWorkload {
            files: 3,
            modification_coefficient: 2.5,
            ..w
        };
        assert_eq!(fractional.mixed_requests(), 8, "7.5 rounds to 8");
        assert_eq!(key(0, 0), 0);
        assert_eq!(key(1, 2), (1 << 32) + 2);
        assert_eq!(key(u32::MAX, u32::MAX), u64::MAX);
    }

    /// Reads look up `read_pages` pages, fewer in a shorter file, always inside it.
    #[test]
    fn reads_are_as_long_as_asked_inside_the_file() {
        let spec = FileWorkload {
            files: 100,
            read_pages: 2,
            read_percent: 100,
            avg_write_bytes: 4096,
            ..FileWorkload::default()
        };
        let mut sizes = Vec::new();
        let mut stream = spec.stream();
        let (mut full, mut short) = (0, 0);
        while let Some((_, op)) = stream.next_op() {
            match op {
                FileOp::Create { pages, .. } => sizes.push(pages),
                FileOp::Read {
                    file,
                    offset,
                    pages,
                } => {
                    let size = sizes[file as usize];
                    assert_eq!(pages, size.min(2), "files of 1 to 3 pages");
                    assert!(offset + pages <= size);
                    if pages == 2 { full += 1 } else { short += 1 }
                }
                FileOp::Write { .. } => panic!("an all-read mix wrote"),
            }
        }
        assert!(full > 0 && short > 0, "{full} full reads, {short} short");
    }
}
