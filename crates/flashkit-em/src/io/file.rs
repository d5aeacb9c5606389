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
use std::sync::Arc;

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

/// How a [`FileIo`] reaches its files: the system's calls, or (in tests) calls that refuse
/// `O_DIRECT` as some filesystems do, get interrupted, or return short.
trait Syscalls: Send + Sync {
    /// Open `segment`'s file, with `O_DIRECT` when `direct`.
    fn open(&self, segment: &Segment, direct: bool) -> std::io::Result<File>;
    /// `pread` into `buf` at `offset` of `file` (opened with `O_DIRECT` when `direct`).
    fn read_at(
        &self,
        file: &File,
        direct: bool,
        buf: &mut [u8],
        offset: u64,
    ) -> std::io::Result<usize>;
    /// `pwrite` all of `buf` at `offset` of `file` (opened with `O_DIRECT` when `direct`).
    fn write_all_at(
        &self,
        file: &File,
        direct: bool,
        buf: &[u8],
        offset: u64,
    ) -> std::io::Result<()>;
    /// `fdatasync` `file`.
    fn sync_data(&self, file: &File) -> std::io::Result<()>;
}

/// The operating system's calls.
struct System;

impl Syscalls for System {
    fn open(&self, segment: &Segment, direct: bool) -> std::io::Result<File> {
        open_path(&segment.path, segment.create, direct)
    }
    fn read_at(&self, file: &File, _: bool, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        file.read_at(buf, offset)
    }
    fn write_all_at(&self, file: &File, _: bool, buf: &[u8], offset: u64) -> std::io::Result<()> {
        file.write_all_at(buf, offset)
    }
    fn sync_data(&self, file: &File) -> std::io::Result<()> {
        file.sync_data()
    }
}

/// Real files as a [`BlockIo`].
pub struct FileIo {
    sizes: BlockSizes,
    stats: IoStats,
    /// Sorted by base address.
    files: Vec<Open>,
    fallback: Option<String>,
    bounce: Option<AlignedBuf>,
    sys: Arc<dyn Syscalls>,
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

impl FileIo {
    /// Open the segments; `direct` asks for `O_DIRECT` (taken where possible).
    pub fn open(sizes: BlockSizes, segments: Vec<Segment>, direct: bool) -> Result<Self, EmError> {
        Self::open_with(sizes, segments, direct, Arc::new(System))
    }

    fn open_with(
        sizes: BlockSizes,
        segments: Vec<Segment>,
        direct: bool,
        sys: Arc<dyn Syscalls>,
    ) -> Result<Self, EmError> {
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
            let (file, is_direct) = match sys.open(&segment, want_direct) {
                Ok(file) => (file, want_direct),
                Err(error) if want_direct && error.raw_os_error() == Some(libc::EINVAL) => {
                    fallback = Some(format!("{} refused O_DIRECT", segment.path.display()));
                    let file = sys
                        .open(&segment, false)
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
            sys,
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
        open.file = self
            .sys
            .open(&segment, false)
            .map_err(|e| io_error(&segment.path, "open", 0, e))?;
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
            let at = local + done as u64;
            match self
                .sys
                .read_at(&open.file, open.direct, &mut buf[done..], at)
            {
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
        match self.sys.write_all_at(&open.file, open.direct, buf, local) {
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
            self.sys
                .sync_data(&open.file)
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
            sys: Arc::clone(&self.sys),
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
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// What a call of [`Fake`] does instead of the system's.
    #[derive(Clone, Copy, Debug)]
    enum Fault {
        /// Refuse with `EINVAL`, as a filesystem without `O_DIRECT` does.
        Einval,
        /// Refuse with `EIO`.
        Eio,
        /// A signal arrived first (`EINTR`).
        Interrupted,
        /// Read at most this many bytes.
        Short(usize),
    }

    impl Fault {
        fn error(self) -> std::io::Error {
            match self {
                Fault::Einval => std::io::Error::from_raw_os_error(libc::EINVAL),
                Fault::Eio => std::io::Error::from_raw_os_error(libc::EIO),
                Fault::Interrupted => std::io::ErrorKind::Interrupted.into(),
                Fault::Short(_) => unreachable!("a short transfer is not an error"),
            }
        }
    }

    /// One call that reached [`Fake`]: what, with `O_DIRECT` or not, where, how much, and
    /// the address of the buffer it was given.
    #[derive(Clone, Debug, PartialEq)]
    struct Call {
        op: &'static str,
        direct: bool,
        offset: u64,
        len: usize,
        ptr: usize,
    }

    /// Real files, always opened buffered (so the tests run on any filesystem), behind calls
    /// that keep `O_DIRECT`'s rules (a buffer, length and offset aligned to 4 KiB, or
    /// `EINVAL`), log every call, and fail as told: the next opens and transfers take their
    /// faults from the front of `opens` and `transfers` (`None`: no fault).
    #[derive(Default)]
    struct Fake {
        opens: Mutex<VecDeque<Option<Fault>>>,
        transfers: Mutex<VecDeque<Option<Fault>>>,
        log: Mutex<Vec<Call>>,
    }

    impl Fake {
        fn new(opens: &[Option<Fault>], transfers: &[Option<Fault>]) -> Arc<Fake> {
            Arc::new(Fake {
                opens: Mutex::new(opens.iter().copied().collect()),
                transfers: Mutex::new(transfers.iter().copied().collect()),
                log: Mutex::default(),
            })
        }

        fn record(&self, op: &'static str, direct: bool, offset: u64, len: usize, ptr: usize) {
            let call = Call {
                op,
                direct,
                offset,
                len,
                ptr,
            };
            self.log.lock().expect("log").push(call);
        }

        fn calls(&self, op: &str) -> Vec<Call> {
            let log = self.log.lock().expect("log");
            log.iter().filter(|c| c.op == op).cloned().collect()
        }

        /// The fault of the next transfer, with `O_DIRECT`'s alignment rules first.
        fn transfer_fault(
            &self,
            direct: bool,
            ptr: usize,
            len: usize,
            offset: u64,
        ) -> Option<Fault> {
            let align = DIRECT_ALIGN;
            let fault = self.transfers.lock().expect("faults").pop_front().flatten();
            let misaligned = !(ptr.is_multiple_of(align)
                && len.is_multiple_of(align)
                && offset.is_multiple_of(align as u64));
            if direct && misaligned {
                return Some(Fault::Einval);
            }
            fault
        }
    }

    impl Syscalls for Fake {
        fn open(&self, segment: &Segment, direct: bool) -> std::io::Result<File> {
            self.record("open", direct, segment.base, 0, 0);
            match self.opens.lock().expect("faults").pop_front().flatten() {
                Some(fault) => Err(fault.error()),
                None => open_path(&segment.path, segment.create, false),
            }
        }
        fn read_at(
            &self,
            file: &File,
            direct: bool,
            buf: &mut [u8],
            offset: u64,
        ) -> std::io::Result<usize> {
            let ptr = buf.as_ptr() as usize;
            self.record("read", direct, offset, buf.len(), ptr);
            match self.transfer_fault(direct, ptr, buf.len(), offset) {
                Some(Fault::Short(n)) => file.read_at(&mut buf[..n], offset),
                Some(fault) => Err(fault.error()),
                None => file.read_at(buf, offset),
            }
        }
        fn write_all_at(
            &self,
            file: &File,
            direct: bool,
            buf: &[u8],
            offset: u64,
        ) -> std::io::Result<()> {
            let ptr = buf.as_ptr() as usize;
            self.record("write", direct, offset, buf.len(), ptr);
            match self.transfer_fault(direct, ptr, buf.len(), offset) {
                Some(Fault::Short(_)) | None => file.write_all_at(buf, offset),
                Some(fault) => Err(fault.error()),
            }
        }
        fn sync_data(&self, file: &File) -> std::io::Result<()> {
            self.record("sync", false, 0, 0, 0);
            match self.transfers.lock().expect("faults").pop_front().flatten() {
                Some(fault) => Err(fault.error()),
                None => file.sync_data(),
            }
        }
    }

    /// A [`FileIo`] over `names` (created, 1 MiB apart) in `dir` through `fake`.
    fn fake_io(
        dir: &Path,
        names: &[&str],
        read_bytes: u64,
        direct: bool,
        fake: &Arc<Fake>,
    ) -> Result<FileIo, EmError> {
        let sizes = BlockSizes::new(read_bytes, 8192).expect("valid");
        let segments = names
            .iter()
            .zip(0..)
            .map(|(name, i)| Segment::create(dir.join(name), i << 20))
            .collect();
        FileIo::open_with(
            sizes,
            segments,
            direct,
            Arc::clone(fake) as Arc<dyn Syscalls>,
        )
    }

    /// 8 KiB of a pattern, in an aligned buffer.
    fn pattern() -> AlignedBuf {
        let mut data = AlignedBuf::new(8192);
        data.bytes_mut()
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (i % 251) as u8);
        data
    }

    #[test]
    fn o_direct_is_taken_only_where_asked_for_and_aligned() {
        let dir = tempfile::tempdir().expect("temp dir");
        let directs =
            |fake: &Fake| -> Vec<bool> { fake.calls("open").iter().map(|c| c.direct).collect() };
        let fake = Fake::new(&[], &[]);
        let io = fake_io(dir.path(), &["a", "b"], 4096, false, &fake).expect("open");
        assert_eq!(directs(&fake), [false, false]);
        assert!(!io.is_direct());
        assert_eq!(io.describe(), "files through the page cache");
        let fake = Fake::new(&[], &[]);
        let io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        assert_eq!(directs(&fake), [true, true]);
        assert!(io.is_direct());
        assert_eq!(io.describe(), "files with O_DIRECT");
        let fake = Fake::new(&[], &[]);
        let io = fake_io(dir.path(), &["a"], 512, true, &fake).expect("open");
        assert_eq!(directs(&fake), [false]);
        assert!(!io.is_direct());
        assert_eq!(
            io.describe(),
            "files through the page cache (O_DIRECT not used: B_r = 512 B is not a multiple of 4096 B)"
        );
    }

    #[test]
    fn an_open_refused_with_einval_falls_back_and_any_other_refusal_fails() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fake = Fake::new(&[Some(Fault::Einval)], &[]);
        let io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        let opens: Vec<(u64, bool)> = fake
            .calls("open")
            .iter()
            .map(|c| (c.offset, c.direct))
            .collect();
        assert_eq!(opens, [(0, true), (0, false), (1 << 20, true)]);
        assert!(!io.is_direct());
        let a = dir.path().join("a");
        assert_eq!(
            io.describe(),
            format!(
                "files through the page cache (O_DIRECT not used: {} refused O_DIRECT)",
                a.display()
            )
        );
        // EIO with O_DIRECT, EINVAL without it, and EINVAL again on the buffered reopen fail.
        for (faults, direct) in [
            (&[Some(Fault::Eio)][..], true),
            (&[Some(Fault::Einval)][..], false),
            (&[Some(Fault::Einval), Some(Fault::Einval)][..], true),
        ] {
            let fake = Fake::new(faults, &[]);
            let error = fake_io(dir.path(), &["a"], 4096, direct, &fake)
                .err()
                .expect("the open fails");
            assert!(
                matches!(&error, EmError::Io { path, op: "open", offset: 0, .. } if *path == a),
                "{error}"
            );
        }
    }

    #[test]
    fn a_transfer_refused_with_einval_reopens_the_file_buffered_and_keeps_its_data() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = pattern();
        // A read refused: the file reopened without truncation, the read done buffered.
        let fake = Fake::new(&[], &[None, Some(Fault::Einval)]);
        let mut io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        io.write(1 << 20, data.bytes()).expect("write");
        let mut back = AlignedBuf::new(4096);
        io.read((1 << 20) + 4096, back.bytes_mut())
            .expect("read after the fallback");
        assert!(back.bytes() == &data.bytes()[4096..]);
        let opens: Vec<(u64, bool)> = fake
            .calls("open")
            .iter()
            .map(|c| (c.offset, c.direct))
            .collect();
        assert_eq!(opens, [(0, true), (1 << 20, true), (1 << 20, false)]);
        let reads: Vec<bool> = fake.calls("read").iter().map(|c| c.direct).collect();
        assert_eq!(reads, [true, false]);
        assert!(!io.is_direct());
        let b = dir.path().join("b");
        let refused = format!(
            "files through the page cache (O_DIRECT not used: {} refused an O_DIRECT transfer (Invalid argument (os error 22)))",
            b.display()
        );
        assert_eq!(io.describe(), refused);
        // The other file keeps O_DIRECT.
        io.read(0, back.bytes_mut()).expect("read");
        assert!(fake.calls("read")[2].direct);
        // A write refused: the same, and the write done buffered.
        let fake = Fake::new(&[], &[Some(Fault::Einval)]);
        let mut io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        io.write(1 << 20, data.bytes())
            .expect("write after the fallback");
        let writes: Vec<bool> = fake.calls("write").iter().map(|c| c.direct).collect();
        assert_eq!(writes, [true, false]);
        assert_eq!(io.describe(), refused);
        io.read((1 << 20) + 4096, back.bytes_mut()).expect("read");
        assert!(back.bytes() == &data.bytes()[4096..]);
    }

    #[test]
    fn a_transfer_error_other_than_a_first_einval_with_o_direct_fails() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = dir.path().join("a");
        let failed = |error: EmError, op: &str, at: u64| {
            assert!(
                matches!(&error, EmError::Io { path, op: o, offset, .. } if *path == a && *o == op && *offset == at),
                "{error}"
            );
        };
        let data = pattern();
        let mut back = AlignedBuf::new(8192);
        for (direct, faults) in [(true, [Some(Fault::Eio)]), (false, [Some(Fault::Einval)])] {
            let fake = Fake::new(&[], &faults);
            let mut io = fake_io(dir.path(), &["a"], 4096, direct, &fake).expect("open");
            failed(
                io.read(4096, back.bytes_mut()).expect_err("refused"),
                "read",
                4096,
            );
            let fake = Fake::new(&[], &faults);
            let mut io = fake_io(dir.path(), &["a"], 4096, direct, &fake).expect("open");
            failed(
                io.write(8192, data.bytes()).expect_err("refused"),
                "write",
                8192,
            );
        }
        // EINVAL after part of a read came in is an error, not a refusal of O_DIRECT.
        let fake = Fake::new(&[], &[None, Some(Fault::Short(4096)), Some(Fault::Einval)]);
        let mut io = fake_io(dir.path(), &["a"], 4096, true, &fake).expect("open");
        io.write(0, data.bytes()).expect("write");
        failed(
            io.read(0, back.bytes_mut()).expect_err("refused"),
            "read",
            0,
        );
        assert!(io.is_direct());
    }

    #[test]
    fn interrupted_and_short_reads_go_on_until_the_buffer_is_full() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = pattern();
        let faults = [
            None,
            Some(Fault::Interrupted),
            Some(Fault::Short(1000)),
            Some(Fault::Interrupted),
        ];
        let fake = Fake::new(&[], &faults);
        let mut io = fake_io(dir.path(), &["a"], 4096, false, &fake).expect("open");
        io.write(0, data.bytes()).expect("write");
        let mut back = AlignedBuf::new(8192);
        io.read(0, back.bytes_mut()).expect("read");
        assert!(back.bytes() == data.bytes());
        let reads: Vec<(u64, usize)> = fake
            .calls("read")
            .iter()
            .map(|c| (c.offset, c.len))
            .collect();
        assert_eq!(reads, [(0, 8192), (0, 8192), (1000, 7192), (1000, 7192)]);
        // A file shorter than the read: the rest reads as zeros, after one read that finds
        // the end.
        io.set_len(0, 5000).expect("truncate");
        io.read(0, back.bytes_mut()).expect("read");
        assert!(back.bytes()[..5000] == data.bytes()[..5000]);
        assert!(back.bytes()[5000..].iter().all(|&b| b == 0));
        assert_eq!(fake.calls("read").len(), 4 + 2);
    }

    #[test]
    fn only_o_direct_transfers_of_unaligned_buffers_are_bounced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = pattern();
        for direct in [true, false] {
            let fake = Fake::new(&[], &[]);
            let mut io = fake_io(dir.path(), &["a"], 4096, direct, &fake).expect("open");
            // An aligned buffer goes as it is; an unaligned one through the bounce buffer
            // with O_DIRECT only, a small one first, then one larger than the bounce buffer.
            io.write(0, data.bytes()).expect("write");
            let mut unaligned = vec![0u8; 8192 + 1];
            io.read(4096, &mut unaligned[1..4097]).expect("read");
            assert!(unaligned[1..4097] == data.bytes()[4096..]);
            unaligned[1..].copy_from_slice(data.bytes());
            io.write(0, &unaligned[1..]).expect("write");
            let mut back = vec![0u8; 8192 + 1];
            io.read(0, &mut back[1..]).expect("read");
            assert!(back[1..] == *data.bytes());
            let calls = fake.log.lock().expect("log").clone();
            let caller = [
                data.bytes().as_ptr() as usize,
                unaligned[1..].as_ptr() as usize,
                unaligned[1..].as_ptr() as usize,
                back[1..].as_ptr() as usize,
            ];
            let given: Vec<usize> = calls[1..].iter().map(|c| c.ptr).collect();
            assert_eq!(given[0], caller[0], "an aligned buffer is never copied");
            for (g, c) in given[1..].iter().zip(&caller[1..]) {
                assert_eq!(g == c, !direct, "bounced exactly when O_DIRECT");
                assert!(!direct || g.is_multiple_of(DIRECT_ALIGN));
            }
            assert_eq!(io.is_direct(), direct, "no fallback taken");
        }
    }

    #[test]
    fn the_bounce_buffer_is_allocated_once_and_reused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fake = Fake::new(&[], &[]);
        let mut io = fake_io(dir.path(), &["a"], 4096, true, &fake).expect("open");
        let mut unaligned = vec![0u8; 8192 + 1];
        io.read(0, &mut unaligned[1..]).expect("read");
        io.read(4096, &mut unaligned[1..4097]).expect("read");
        io.write(0, &unaligned[1..]).expect("write");
        let given: Vec<usize> = fake.log.lock().expect("log")[1..]
            .iter()
            .map(|c| c.ptr)
            .collect();
        assert!(given.iter().all(|&p| p == given[0]), "{given:?}");
    }

    #[test]
    fn a_sync_reaches_every_file_and_a_refusal_names_its_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fake = Fake::new(&[], &[]);
        let mut io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        io.sync().expect("sync");
        assert_eq!(fake.calls("sync").len(), 2);
        let fake = Fake::new(&[], &[None, Some(Fault::Eio)]);
        let mut io = fake_io(dir.path(), &["a", "b"], 4096, true, &fake).expect("open");
        let error = io.sync().expect_err("the second file's sync refused");
        let b = dir.path().join("b");
        assert!(
            matches!(&error, EmError::Io { path, op: "sync", .. } if *path == b),
            "{error}"
        );
    }

    #[test]
    fn a_twin_that_fell_back_is_named_by_the_handle_that_absorbs_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        // The twin's first write refused with EINVAL: the twin reopens its file buffered.
        let fake = Fake::new(&[], &[Some(Fault::Einval)]);
        let mut io = fake_io(dir.path(), &["a"], 4096, true, &fake).expect("open");
        let mut twin = io.twin().expect("twin").expect("files have a twin");
        twin.write(0, pattern().bytes())
            .expect("write after the fallback");
        let fell_back = twin.describe();
        assert!(
            fell_back.contains("refused an O_DIRECT transfer"),
            "{fell_back}"
        );
        let report = |twin: &dyn BlockIo| TwinReport {
            stats: twin.stats(),
            description: twin.describe(),
        };
        io.absorb(report(&*twin));
        assert_eq!(
            io.describe(),
            format!(
                "files through the page cache (O_DIRECT not used: the writing handle: {fell_back})"
            )
        );
        // A twin that describes itself as its handle does adds nothing; a handle that fell
        // back itself keeps its own reason.
        let fake = Fake::new(&[], &[]);
        let mut io = fake_io(dir.path(), &["a"], 4096, true, &fake).expect("open");
        let twin = io.twin().expect("twin").expect("files have a twin");
        io.absorb(report(&*twin));
        assert_eq!(io.describe(), "files with O_DIRECT");
        let fake = Fake::new(&[], &[]);
        let mut io = fake_io(dir.path(), &["a"], 512, true, &fake).expect("open");
        let own = io.describe();
        io.absorb(TwinReport {
            stats: IoStats::default(),
            description: "another story".into(),
        });
        assert_eq!(io.describe(), own);
    }

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
