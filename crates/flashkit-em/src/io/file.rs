//! Real files: one address space made of file segments, read and written with `O_DIRECT`
//! where the filesystem allows it, so that a measured time is the disk's and not the page
//! cache's.
//!
//! Each [`Segment`] places one file at a base address (the sort puts its input at 0, its
//! scratch runs and its output further up). A call never straddles two segments. Reads past
//! the end of a file return zeros, as a never-written block of the simulator does.
//!
//! Fallback: when the block sizes are not multiples of 4 KiB, or the filesystem refuses
//! `O_DIRECT` (tmpfs on older kernels refuses the open; some filesystems refuse the first
//! transfer with `EINVAL`), the file is reopened buffered and [`BlockIo::describe`] says so
//! and why.

use super::buffer::{AlignedBuf, DIRECT_ALIGN};
use super::{BlockIo, BlockSizes, IoStats, TwinReport, check_aligned};
use crate::EmError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One file of the address space.
#[derive(Clone, Debug)]
pub struct Segment {
    /// The file.
    pub path: PathBuf,
    /// Its first byte's address.
    pub base: u64,
    /// Create (or truncate) the file instead of opening an existing one.
    pub create: bool,
}

impl Segment {
    /// An existing file, read-write, at `base`.
    pub fn existing(path: impl Into<PathBuf>, base: u64) -> Self {
        Segment {
            path: path.into(),
            base,
            create: false,
        }
    }

    /// A new (or truncated) file at `base`.
    pub fn create(path: impl Into<PathBuf>, base: u64) -> Self {
        Segment {
            path: path.into(),
            base,
            create: true,
        }
    }
}

struct Open {
    segment: Segment,
    file: File,
    direct: bool,
}

/// Real files as a [`BlockIo`].
pub struct FileIo {
    sizes: BlockSizes,
    stats: IoStats,
    /// Sorted by base address.
    files: Vec<Open>,
    fallback: Option<String>,
    bounce: Option<AlignedBuf>,
}

fn io_error(path: &Path, op: &'static str, offset: u64, source: std::io::Error) -> EmError {
    EmError::Io {
        path: path.to_path_buf(),
        op,
        offset,
        source,
    }
}

/// Open `path` for reading and writing (created and truncated when `create`), with
/// `O_DIRECT` when `direct`.
pub(crate) fn open_path(path: &Path, create: bool, direct: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    if create {
        options.create(true).truncate(true);
    }
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options.open(path)
}

fn open_file(segment: &Segment, direct: bool) -> std::io::Result<File> {
    open_path(&segment.path, segment.create, direct)
}

impl FileIo {
    /// Open the segments; `direct` asks for `O_DIRECT` (taken where possible).
    pub fn open(sizes: BlockSizes, segments: Vec<Segment>, direct: bool) -> Result<Self, EmError> {
        let mut segments = segments;
        segments.sort_by_key(|s| s.base);
        let mut fallback = None;
        let want_direct = direct && sizes.read_bytes.is_multiple_of(DIRECT_ALIGN as u64);
        if direct && !want_direct {
            fallback = Some(format!(
                "B_r = {} B is not a multiple of {DIRECT_ALIGN} B",
                sizes.read_bytes
            ));
        }
        let mut files = Vec::with_capacity(segments.len());
        for segment in segments {
            let (file, is_direct) = match open_file(&segment, want_direct) {
                Ok(file) => (file, want_direct),
                Err(error) if want_direct && error.raw_os_error() == Some(libc::EINVAL) => {
                    fallback = Some(format!("{} refused O_DIRECT", segment.path.display()));
                    let file = open_file(&segment, false)
                        .map_err(|e| io_error(&segment.path, "open", 0, e))?;
                    (file, false)
                }
                Err(error) => return Err(io_error(&segment.path, "open", 0, error)),
            };
            files.push(Open {
                segment,
                file,
                direct: is_direct,
            });
        }
        Ok(FileIo {
            sizes,
            stats: IoStats::default(),
            files,
            fallback,
            bounce: None,
        })
    }

    /// Whether every file is open with `O_DIRECT`.
    pub fn is_direct(&self) -> bool {
        self.files.iter().all(|f| f.direct)
    }

    /// Cut (or extend) the file that starts at `base` to `len` bytes.
    pub fn set_len(&mut self, base: u64, len: u64) -> Result<(), EmError> {
        let open = self
            .files
            .iter()
            .find(|f| f.segment.base == base)
            .ok_or_else(|| EmError::Config(format!("no file segment at address {base}")))?;
        open.file
            .set_len(len)
            .map_err(|e| io_error(&open.segment.path, "truncate", len, e))
    }

    fn locate(&self, offset: u64, len: usize) -> usize {
        let index = self
            .files
            .partition_point(|f| f.segment.base <= offset)
            .checked_sub(1)
            .unwrap_or_else(|| panic!("address {offset} lies before every file segment"));
        if let Some(next) = self.files.get(index + 1) {
            assert!(
                offset + len as u64 <= next.segment.base,
                "an I/O of {len} B at {offset} straddles two file segments"
            );
        }
        index
    }

    /// Reopen file `index` without `O_DIRECT` after the filesystem refused a transfer.
    fn downgrade(&mut self, index: usize, why: &std::io::Error) -> Result<(), EmError> {
        let open = &mut self.files[index];
        let segment = Segment {
            create: false,
            ..open.segment.clone()
        };
        open.file =
            open_file(&segment, false).map_err(|e| io_error(&segment.path, "open", 0, e))?;
        open.direct = false;
        self.fallback = Some(format!(
            "{} refused an O_DIRECT transfer ({why})",
            segment.path.display()
        ));
        Ok(())
    }

    fn read_at(&mut self, index: usize, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        let open = &self.files[index];
        let local = offset - open.segment.base;
        let mut done = 0;
        while done < buf.len() {
            match open.file.read_at(&mut buf[done..], local + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if open.direct && e.raw_os_error() == Some(libc::EINVAL) && done == 0 => {
                    self.downgrade(index, &e)?;
                    return self.read_at(index, offset, buf);
                }
                Err(e) => return Err(io_error(&open.segment.path, "read", local, e)),
            }
        }
        buf[done..].fill(0);
        Ok(())
    }

    fn write_at(&mut self, index: usize, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        let open = &self.files[index];
        let local = offset - open.segment.base;
        match open.file.write_all_at(buf, local) {
            Ok(()) => Ok(()),
            Err(e) if open.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                self.downgrade(index, &e)?;
                self.write_at(index, offset, buf)
            }
            Err(e) => Err(io_error(&open.segment.path, "write", local, e)),
        }
    }

    fn needs_bounce(&self, index: usize, ptr: *const u8) -> bool {
        self.files[index].direct && !(ptr as usize).is_multiple_of(DIRECT_ALIGN)
    }

    fn bounce(&mut self, len: usize) -> AlignedBuf {
        match self.bounce.take() {
            Some(buf) if buf.len() >= len => buf,
            _ => AlignedBuf::new(len),
        }
    }
}

impl BlockIo for FileIo {
    fn block_sizes(&self) -> BlockSizes {
        self.sizes
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), EmError> {
        check_aligned("read", offset, buf.len(), self.sizes.read_bytes);
        self.stats
            .count_read(buf.len() as u64, self.sizes.read_bytes);
        let index = self.locate(offset, buf.len());
        if self.needs_bounce(index, buf.as_ptr()) {
            let mut bounce = self.bounce(buf.len());
            let result = self.read_at(index, offset, &mut bounce.bytes_mut()[..buf.len()]);
            buf.copy_from_slice(&bounce.bytes()[..buf.len()]);
            self.bounce = Some(bounce);
            return result;
        }
        self.read_at(index, offset, buf)
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> Result<(), EmError> {
        check_aligned("write", offset, buf.len(), self.sizes.write_bytes);
        self.stats
            .count_write(buf.len() as u64, self.sizes.write_bytes);
        let index = self.locate(offset, buf.len());
        if self.needs_bounce(index, buf.as_ptr()) {
            let mut bounce = self.bounce(buf.len());
            bounce.bytes_mut()[..buf.len()].copy_from_slice(buf);
            let result = self.write_at(index, offset, &bounce.bytes()[..buf.len()]);
            self.bounce = Some(bounce);
            return result;
        }
        self.write_at(index, offset, buf)
    }

    fn sync(&mut self) -> Result<(), EmError> {
        for open in &self.files {
            open.file
                .sync_data()
                .map_err(|e| io_error(&open.segment.path, "sync", 0, e))?;
        }
        Ok(())
    }

    fn stats(&self) -> IoStats {
        self.stats
    }

    fn twin(&self) -> Result<Option<Box<dyn BlockIo>>, EmError> {
        let files = self
            .files
            .iter()
            .map(|open| {
                let file = open
                    .file
                    .try_clone()
                    .map_err(|e| io_error(&open.segment.path, "duplicate", 0, e))?;
                Ok(Open {
                    segment: open.segment.clone(),
                    file,
                    direct: open.direct,
                })
            })
            .collect::<Result<Vec<_>, EmError>>()?;
        Ok(Some(Box::new(FileIo {
            sizes: self.sizes,
            stats: IoStats::default(),
            files,
            fallback: None,
            bounce: None,
        })))
    }

    fn absorb(&mut self, twin: TwinReport) {
        self.stats = self.stats + twin.stats;
        if self.fallback.is_none() && twin.description != self.describe() {
            self.fallback = Some(format!("the writing handle: {}", twin.description));
        }
    }

    fn describe(&self) -> String {
        match (&self.fallback, self.is_direct()) {
            (None, true) => "files with O_DIRECT".into(),
            (None, false) => "files through the page cache".into(),
            (Some(why), _) => format!("files through the page cache (O_DIRECT not used: {why})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_round_trip_and_short_files_read_as_zeros() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sizes = BlockSizes::new(4096, 8192).expect("valid");
        let segments = vec![
            Segment::create(dir.path().join("a"), 0),
            Segment::create(dir.path().join("b"), 1 << 20),
        ];
        let mut io = FileIo::open(sizes, segments, true).expect("open");
        let mut data = AlignedBuf::new(8192);
        data.bytes_mut()
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = i as u8);
        io.write(1 << 20, data.bytes()).expect("write");
        // An unaligned heap buffer goes through the bounce buffer.
        let mut back = vec![1u8; 4096];
        io.read((1 << 20) + 4096, &mut back).expect("read");
        assert_eq!(back, data.bytes()[4096..]);
        io.read(0, &mut back)
            .expect("read past the end of an empty file");
        assert!(back.iter().all(|&b| b == 0));
        io.set_len(1 << 20, 100).expect("truncate");
        assert_eq!(
            std::fs::metadata(dir.path().join("b")).expect("stat").len(),
            100
        );
        assert!(io.describe().starts_with("files"));
    }

    #[test]
    fn a_twin_writes_what_the_original_reads_and_its_counts_come_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sizes = BlockSizes::new(4096, 8192).expect("valid");
        let mut io = FileIo::open(sizes, vec![Segment::create(dir.path().join("t"), 0)], true)
            .expect("open");
        let mut twin = io.twin().expect("twin").expect("files have a twin");
        let mut data = AlignedBuf::new(8192);
        data.bytes_mut().fill(0xab);
        twin.write(8192, data.bytes())
            .expect("write through the twin");
        let mut back = AlignedBuf::new(4096);
        io.read(8192 + 4096, back.bytes_mut()).expect("read");
        assert!(back.bytes().iter().all(|&b| b == 0xab));
        io.absorb(TwinReport {
            stats: twin.stats(),
            description: twin.describe(),
        });
        let stats = io.stats();
        assert_eq!((stats.read_ios, stats.write_ios), (1, 1));
        assert_eq!((stats.read_bytes, stats.write_bytes), (4096, 8192));
        assert!(io.describe().starts_with("files"), "{}", io.describe());
    }
}
