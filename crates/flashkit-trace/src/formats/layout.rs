//! Mapping a trace's address spaces onto one simulated device.
//!
//! A trace addresses one or more volumes (ASUs, LUNs, disks, files), each its own address
//! space, often far larger than what the trace touches: an MSR volume spans 12 GB and a
//! SYSTOR LUN 5 TB for a few megabytes of requests. A first pass over the trace
//! ([`TraceScan`]) records which chunks of which volume requests touch; the
//! [`AddressMap`] it builds then sends every request to one flat device address space:
//!
//! - [`AddressMapping::Compact`] (the default): the touched chunks, in (volume, address)
//!   order, are numbered 0, 1, 2, ... and a request's chunk is replaced by its number. The
//!   device needs only `touched chunks x chunk bytes`: the trace's footprint at chunk
//!   granularity.
//! - [`AddressMapping::Identity`]: volumes are laid out one after another in volume order,
//!   each as long as its highest address (rounded up to a chunk); a single volume keeps its
//!   addresses unchanged.
//!
//! Key decision: the chunk is the device's erase block (or a multiple). Compaction keeps
//! every touched block whole, so everything an FTL's behaviour depends on inside a block
//! (which pages of a logical block are written, sequential runs, a hybrid FTL's merges) is
//! exactly as in the trace; only untouched blocks between them disappear. Compaction is
//! monotonic and adjacent touched chunks stay adjacent, so a request spanning several
//! chunks (all touched, by that request) stays one contiguous request. Compacting at page
//! granularity instead would pack pages of different blocks together and change block-level
//! locality, which BAST- and FAST-style FTLs are sensitive to.

use super::{ParseReport, TraceOptions, TraceStream, open};
use crate::{Op, Request, RequestResult, TraceError};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use xxhash_rust::xxh3::Xxh3;

/// How trace addresses become device addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressMapping {
    /// Touched chunks numbered densely: the device holds the footprint.
    #[default]
    Compact,
    /// Addresses unchanged; several volumes laid out one after another.
    Identity,
}

impl fmt::Display for AddressMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressMapping::Compact => "compact",
            AddressMapping::Identity => "identity",
        })
    }
}

impl FromStr for AddressMapping {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "compact" => Ok(AddressMapping::Compact),
            "identity" => Ok(AddressMapping::Identity),
            _ => Err(format!(
                "unknown address mapping {text:?} (expected compact or identity)"
            )),
        }
    }
}

/// The first pass: which chunks of which volumes requests touch.
pub struct TraceScan {
    chunk_bytes: u64,
    /// Chunks seen, hashed with FxHash: the set is sorted before anyone sees its order.
    touched: FxHashSet<(u16, u64)>,
    /// The last chunk inserted: consecutive requests mostly touch the same chunk.
    last: Option<(u16, u64)>,
    volume_ends: BTreeMap<u16, u64>,
    requests: u64,
}

impl TraceScan {
    /// A scan in chunks of `chunk_bytes` (positive).
    pub fn new(chunk_bytes: u64) -> Self {
        assert!(chunk_bytes > 0, "chunk size must be positive");
        TraceScan {
            chunk_bytes,
            touched: FxHashSet::default(),
            last: None,
            volume_ends: BTreeMap::new(),
            requests: 0,
        }
    }

    /// Count one request. Flushes and zero-length requests touch nothing.
    pub fn add(&mut self, r: &Request) {
        self.requests += 1;
        if r.op == Op::Flush || r.size == 0 {
            return;
        }
        let end = self.volume_ends.entry(r.volume).or_insert(0);
        *end = (*end).max(r.end());
        for chunk in r.offset / self.chunk_bytes..r.end().div_ceil(self.chunk_bytes) {
            let key = (r.volume, chunk);
            if self.last != Some(key) {
                self.touched.insert(key);
                self.last = Some(key);
            }
        }
    }

    /// The address map for `mapping`.
    pub fn map(&self, mapping: AddressMapping) -> AddressMap {
        let mut chunks: Vec<(u16, u64)> = self.touched.iter().copied().collect();
        chunks.sort_unstable();
        let mut bases = Vec::new();
        let mut next = 0u64;
        let single = self.volume_ends.len() <= 1;
        for (&volume, &end) in &self.volume_ends {
            bases.push((volume, if single { 0 } else { next }));
            let span = end
                .div_ceil(self.chunk_bytes)
                .saturating_mul(self.chunk_bytes);
            next = next.saturating_add(span);
        }
        let required_bytes = match mapping {
            AddressMapping::Compact => chunks.len() as u64 * self.chunk_bytes,
            // The end of the last volume; a single volume's base is 0 either way.
            AddressMapping::Identity => next,
        };
        let dense = DenseRanks::build(&chunks);
        AddressMap {
            mapping,
            chunk_bytes: self.chunk_bytes,
            chunks,
            dense,
            bases,
            required_bytes,
            requests: self.requests,
        }
    }
}

/// Sends each request of a scanned trace to its device address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressMap {
    mapping: AddressMapping,
    chunk_bytes: u64,
    chunks: Vec<(u16, u64)>,
    /// A direct chunk-to-rank table when the trace has one volume and a moderate span.
    dense: Option<DenseRanks>,
    bases: Vec<(u16, u64)>,
    required_bytes: u64,
    requests: u64,
}

/// Rank of every chunk of a single-volume trace, indexed by chunk number: one load per
/// request instead of a binary search. Built only when the table stays small.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DenseRanks {
    volume: u16,
    /// rank + 1 by chunk number; 0 for a chunk the scan never saw.
    ranks: Vec<u32>,
}

impl DenseRanks {
    /// Chunk numbers up to this many get a table (16 MiB of it at most).
    const MAX_SPAN: u64 = 1 << 22;

    /// The table of `chunks` (sorted and distinct, as [`TraceScan::map`] gives them), or
    /// `None` if they span several volumes or too many chunk numbers. Ranks fit a `u32`:
    /// distinct chunks below `MAX_SPAN` number at most `MAX_SPAN`.
    fn build(chunks: &[(u16, u64)]) -> Option<DenseRanks> {
        let (&(volume, _), &(last_volume, max)) = (chunks.first()?, chunks.last()?);
        if volume != last_volume || max >= Self::MAX_SPAN {
            return None;
        }
        let mut ranks = vec![0u32; max as usize + 1];
        for (rank, &(_, chunk)) in chunks.iter().enumerate() {
            ranks[chunk as usize] = rank as u32 + 1;
        }
        Some(DenseRanks { volume, ranks })
    }

    #[inline]
    fn rank(&self, volume: u16, chunk: u64) -> Option<usize> {
        if volume != self.volume {
            return None;
        }
        match self.ranks.get(chunk as usize).copied() {
            Some(0) | None => None,
            Some(rank) => Some(rank as usize - 1),
        }
    }
}

impl AddressMap {
    /// The mapping.
    pub fn mapping(&self) -> AddressMapping {
        self.mapping
    }

    /// The chunk size.
    pub fn chunk_bytes(&self) -> u64 {
        self.chunk_bytes
    }

    /// Distinct chunks the trace touches.
    pub fn touched_chunks(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// Volumes with data requests, each with its base address under identity mapping.
    pub fn volumes(&self) -> &[(u16, u64)] {
        &self.bases
    }

    /// The smallest logical capacity that holds every mapped request.
    pub fn required_bytes(&self) -> u64 {
        self.required_bytes
    }

    /// Requests the scan saw.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The device address of `r`; an error if the scan never saw its chunk (the file
    /// changed between the passes). Flushes and zero-length requests pass unchanged.
    #[inline]
    pub fn apply(&self, r: Request) -> Result<Request, String> {
        if r.op == Op::Flush || r.size == 0 {
            return Ok(Request { offset: 0, ..r });
        }
        let offset = match self.mapping {
            AddressMapping::Compact => {
                let chunk = r.offset / self.chunk_bytes;
                let rank = match &self.dense {
                    Some(dense) => dense.rank(r.volume, chunk).ok_or_else(|| unseen(&r))?,
                    None => self
                        .chunks
                        .binary_search(&(r.volume, chunk))
                        .map_err(|_| unseen(&r))?,
                };
                rank as u64 * self.chunk_bytes + r.offset % self.chunk_bytes
            }
            AddressMapping::Identity => {
                let at = self
                    .bases
                    .binary_search_by_key(&r.volume, |&(v, _)| v)
                    .map_err(|_| unseen(&r))?;
                self.bases[at].1 + r.offset
            }
        };
        Ok(Request { offset, ..r })
    }
}

#[cold]
fn unseen(r: &Request) -> String {
    format!(
        "a {} of {} B at byte {} of volume {} was not in the first pass over the trace \
         (did the file change?)",
        r.op, r.size, r.offset, r.volume
    )
}

/// A trace file read once to build its address map, ready to be replayed any number of
/// times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreparedTrace {
    /// The file.
    pub path: PathBuf,
    /// What the file is called in descriptions and errors: its path, or what it holds
    /// ("standard input" for a trace saved from a pipe to a temporary file). See
    /// [`PreparedTrace::named`].
    pub name: PathBuf,
    /// How it is read.
    pub options: TraceOptions,
    /// Where its requests go.
    pub map: AddressMap,
    /// What the first pass met.
    pub report: ParseReport,
    /// The format read (`None` for an empty file).
    pub format: Option<super::Format>,
    /// xxh3-128 of the file's bytes (as stored, compressed or not).
    pub digest: u128,
}

impl PreparedTrace {
    /// Read `path` once with `options`, mapping in chunks of `chunk_bytes`.
    pub fn prepare(
        path: &Path,
        options: &TraceOptions,
        mapping: AddressMapping,
        chunk_bytes: u64,
    ) -> Result<PreparedTrace, TraceError> {
        // The first pass never needs the time order: only the set of addresses.
        let first_pass = TraceOptions {
            sort_by_time: false,
            ..options.clone()
        };
        let mut stream = open(path, &first_pass)?;
        let mut scan = TraceScan::new(chunk_bytes);
        let mut kept = 0u64;
        for request in stream.by_ref() {
            scan.add(&request?);
            kept += 1;
        }
        let other_volumes = stream.report().other_volumes;
        if let Some(volume) = options.volume
            && kept == 0
            && other_volumes > 0
        {
            // Replaying nothing would look like a run.
            return Err(TraceError::Options(format!(
                "--asu {volume}: none of the requests of {} is on volume {volume} ({other_volumes} \
                 are on others; `flashkit trace stats --volumes` lists them)",
                path.display()
            )));
        }
        // A binary trace carries the digest of the source it was made from (a text trace
        // it was converted from, a generator's spec): keep that, so that one input has one
        // digest whichever way it reaches a run. Other files are their own source.
        let digest = match stream.format() {
            Some(super::Format::Binary) => {
                crate::binary::TraceReader::open(path)?.info().source_digest
            }
            _ => file_digest(path)?,
        };
        Ok(PreparedTrace {
            path: path.to_path_buf(),
            name: path.to_path_buf(),
            options: options.clone(),
            map: scan.map(mapping),
            report: stream.report(),
            format: stream.format(),
            digest,
        })
    }

    /// The same trace, called `name` in descriptions and in the errors of its replay.
    pub fn named(mut self, name: &Path) -> PreparedTrace {
        self.name = name.to_path_buf();
        self
    }

    /// Stream the mapped requests (a second pass over the file).
    pub fn open(&self) -> Result<MappedStream, TraceError> {
        Ok(MappedStream {
            stream: open(&self.path, &self.options)
                .map_err(|e| e.shown_as(&self.path, &self.name))?,
            map: self.map.clone(),
            path: self.path.clone(),
            name: self.name.clone(),
            index: 0,
        })
    }
}

/// A trace's requests at their device addresses.
pub struct MappedStream {
    stream: TraceStream,
    map: AddressMap,
    path: PathBuf,
    name: PathBuf,
    index: u64,
}

impl MappedStream {
    /// What reading has met so far.
    pub fn report(&self) -> ParseReport {
        self.stream.report()
    }
}

impl Iterator for MappedStream {
    type Item = RequestResult;

    #[inline]
    fn next(&mut self) -> Option<RequestResult> {
        let request = match self.stream.next()? {
            Ok(request) => request,
            Err(error) => return Some(Err(error.shown_as(&self.path, &self.name))),
        };
        self.index += 1;
        Some(
            self.map
                .apply(request)
                .map_err(|message| TraceError::Format {
                    path: self.name.clone(),
                    message: format!("request {}: {message}", self.index - 1),
                }),
        )
    }
}

/// xxh3-128 of a file's bytes.
pub fn file_digest(path: &Path) -> Result<u128, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        error: source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    digest_of(file).map_err(io)
}

/// xxh3-128 of everything `reader` yields, read again when a read is interrupted.
fn digest_of(mut reader: impl std::io::Read) -> std::io::Result<u128> {
    let mut hasher = Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(hasher.digest128())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(volume: u16, offset: u64, size: u32) -> Request {
        Request {
            time_ns: 0,
            op: Op::Write,
            offset,
            size,
            volume,
        }
    }

    #[test]
    fn compaction_keeps_chunks_whole_and_requests_contiguous() {
        let mut scan = TraceScan::new(1024);
        let requests = [
            req(0, 10 * 1024 + 100, 1900), // chunks 10, 11
            req(0, 1 << 40, 512),          // chunk 2^30
            req(0, 11 * 1024, 1024),       // chunk 11 again
            req(2, 0, 512),                // volume 2, chunk 0
        ];
        for r in &requests {
            scan.add(r);
        }
        let map = scan.map(AddressMapping::Compact);
        assert_eq!(map.touched_chunks(), 4);
        assert_eq!(map.required_bytes(), 4 * 1024);
        let mapped: Vec<u64> = requests
            .iter()
            .map(|r| map.apply(*r).expect("seen").offset)
            .collect();
        assert_eq!(mapped, vec![100, 2 * 1024, 1024, 3 * 1024]);
        assert!(map.apply(req(0, 5 * 1024, 1)).is_err(), "unseen chunk");
    }

    #[test]
    fn identity_lays_volumes_out_one_after_another() {
        let mut scan = TraceScan::new(1024);
        scan.add(&req(3, 5000, 100)); // volume 3 spans 5 chunks
        scan.add(&req(1, 0, 2048)); // volume 1 spans 2 KiB
        let map = scan.map(AddressMapping::Identity);
        assert_eq!(map.mapping(), AddressMapping::Identity);
        assert_eq!(map.volumes(), &[(1, 0), (3, 2048)]);
        assert_eq!(map.required_bytes(), 2048 + 5 * 1024);
        assert_eq!(map.apply(req(3, 5000, 100)).expect("seen").offset, 7048);
        let mut single = TraceScan::new(1024);
        single.add(&req(7, 4096, 512));
        let map = single.map(AddressMapping::Identity);
        assert_eq!(map.apply(req(7, 4096, 512)).expect("seen").offset, 4096);
        assert_eq!(map.required_bytes(), 5 * 1024);
    }

    /// Each mapping's name prints and parses back; any other name is refused, naming both.
    #[test]
    fn address_mappings_print_and_parse() {
        for (name, mapping) in [
            ("compact", AddressMapping::Compact),
            ("identity", AddressMapping::Identity),
        ] {
            assert_eq!(mapping.to_string(), name);
            assert_eq!(name.parse::<AddressMapping>(), Ok(mapping));
        }
        assert_eq!(
            "Compact".parse::<AddressMapping>(),
            Err("unknown address mapping \"Compact\" (expected compact or identity)".to_string())
        );
    }

    /// Every request is counted, but flushes and zero-length requests touch no chunk and
    /// no volume, and map to offset 0 whatever their address.
    #[test]
    fn flushes_and_empty_requests_are_counted_but_touch_nothing() {
        let flush = Request {
            op: Op::Flush,
            ..req(5, 4096, 0)
        };
        let empty = req(6, 1500, 0);
        let mut scan = TraceScan::new(1024);
        for r in [req(0, 1500, 1000), flush, empty, req(0, 0, 512)] {
            scan.add(&r);
        }
        let map = scan.map(AddressMapping::Compact);
        assert_eq!(map.mapping(), AddressMapping::Compact);
        assert_eq!(map.chunk_bytes(), 1024);
        assert_eq!(map.requests(), 4);
        assert_eq!(map.touched_chunks(), 3, "chunks 0, 1 and 2 of volume 0");
        assert_eq!(map.volumes(), &[(0, 0)]);
        assert_eq!(map.required_bytes(), 3 * 1024);
        assert_eq!(map.apply(flush), Ok(Request { offset: 0, ..flush }));
        assert_eq!(map.apply(empty), Ok(Request { offset: 0, ..empty }));
        assert_eq!(map.apply(req(0, 1500, 1000)).expect("seen").offset, 1500);
    }

    /// A single volume of moderate span gets the direct table, and the table ranks chunks
    /// as the binary search over the sorted chunks does, refusing the same requests.
    #[test]
    fn the_dense_table_agrees_with_the_binary_search() {
        let mut scan = TraceScan::new(1024);
        for r in [req(0, 10 * 1024 + 100, 1900), req(0, 3 * 1024, 10)] {
            scan.add(&r);
        }
        let map = scan.map(AddressMapping::Compact);
        assert_eq!(
            map.dense,
            Some(DenseRanks {
                volume: 0,
                ranks: vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 3],
            })
        );
        let searched = AddressMap {
            dense: None,
            ..map.clone()
        };
        for (r, offset) in [
            (req(0, 3 * 1024 + 5, 1), Some(5)),
            (req(0, 10 * 1024 + 100, 1900), Some(1024 + 100)),
            (req(0, 11 * 1024, 1024), Some(2 * 1024)),
            (req(0, 5 * 1024, 1), None),
            (req(0, 12 * 1024, 1), None),
            (req(0, 1 << 40, 1), None),
            (req(1, 3 * 1024, 1), None),
        ] {
            let expected = match offset {
                Some(offset) => Ok(Request { offset, ..r }),
                None => Err(unseen(&r)),
            };
            assert_eq!(map.apply(r), expected, "{r:?}");
            assert_eq!(searched.apply(r), expected, "{r:?}");
        }
    }

    /// The table is built for one volume whose highest chunk number is below `MAX_SPAN`
    /// (2^22), and only then.
    #[test]
    fn dense_ranks_are_built_for_one_volume_of_moderate_span() {
        assert_eq!(DenseRanks::build(&[]), None);
        assert_eq!(
            DenseRanks::build(&[(2, 3), (2, 5)]),
            Some(DenseRanks {
                volume: 2,
                ranks: vec![0, 0, 0, 1, 0, 2],
            })
        );
        assert_eq!(DenseRanks::build(&[(0, 1), (1, 2)]), None, "two volumes");
        let widest = DenseRanks::build(&[(0, 0), (0, (1 << 22) - 1)]).expect("in span");
        assert_eq!(widest.ranks.len(), 1 << 22);
        assert_eq!(widest.rank(0, (1 << 22) - 1), Some(1));
        assert_eq!(DenseRanks::build(&[(0, 0), (0, 1 << 22)]), None, "too wide");
    }

    /// A chunk's rank is its place among the scanned chunks; another volume's chunk, or one
    /// the scan never saw (inside the table or past it), has none.
    #[test]
    fn dense_ranks_answer_only_for_scanned_chunks() {
        let dense = DenseRanks {
            volume: 2,
            ranks: vec![0, 0, 0, 1, 0, 2],
        };
        assert_eq!(dense.rank(2, 3), Some(0));
        assert_eq!(dense.rank(2, 5), Some(1));
        assert_eq!(dense.rank(2, 4), None);
        assert_eq!(dense.rank(2, 0), None);
        assert_eq!(dense.rank(2, 6), None);
        assert_eq!(dense.rank(2, 1 << 40), None);
        assert_eq!(dense.rank(1, 3), None);
    }

    /// An unseen request's error says what it was and where.
    #[test]
    fn an_unseen_request_is_described() {
        let map = TraceScan::new(1024).map(AddressMapping::Identity);
        assert_eq!(map.volumes(), &[]);
        assert_eq!(map.required_bytes(), 0);
        assert_eq!(
            map.apply(req(3, 5120, 1)),
            Err(
                "a write of 1 B at byte 5120 of volume 3 was not in the first pass over the \
                 trace (did the file change?)"
                    .to_string()
            )
        );
    }

    const MSR: &str = "1,hm,0,Write,10240,2048,1\n2,hm,1,Read,0,512,1\n3,hm,0,Read,10240,512,1\n";

    fn msr() -> TraceOptions {
        TraceOptions {
            format: Some(super::super::Format::Msr),
            ..TraceOptions::default()
        }
    }

    /// A prepared text trace: its map counts every request, its digest is the file's
    /// xxh3-128, and the second pass yields the requests at their compacted addresses.
    #[test]
    fn a_prepared_trace_replays_at_mapped_addresses() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, MSR).expect("write");
        let prepared =
            PreparedTrace::prepare(&path, &msr(), AddressMapping::Compact, 1024).expect("prepare");
        assert_eq!(prepared.map.requests(), 3);
        assert_eq!(prepared.map.touched_chunks(), 3);
        assert_eq!(prepared.report.requests, 3);
        assert_eq!(prepared.format, Some(super::super::Format::Msr));
        assert_eq!(prepared.digest, xxhash_rust::xxh3::xxh3_128(MSR.as_bytes()));
        assert_eq!((&prepared.path, &prepared.name), (&path, &path));
        let named = prepared.clone().named(Path::new("standard input"));
        assert_eq!(named.name, PathBuf::from("standard input"));
        assert_eq!(named.path, path);
        let mut stream = named.open().expect("open");
        let replayed: Vec<(u16, u64, u32)> = stream
            .by_ref()
            .map(|r| r.map(|r| (r.volume, r.offset, r.size)).expect("mapped"))
            .collect();
        // Sorted chunks (0, 10), (0, 11), (1, 0) take ranks 0, 1, 2.
        assert_eq!(replayed, [(0, 0, 2048), (1, 2048, 512), (0, 0, 512)]);
        assert_eq!(stream.report().requests, 3);
    }

    /// With a volume asked for, the requests on others are left out of the map; asking for
    /// a volume no request is on is refused, but an empty trace is an empty replay.
    #[test]
    fn a_volume_with_no_request_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, MSR).expect("write");
        let on = |volume| TraceOptions {
            volume: Some(volume),
            ..msr()
        };
        let one = PreparedTrace::prepare(&path, &on(1), AddressMapping::Compact, 1024)
            .expect("volume 1 has a request");
        assert_eq!(one.map.requests(), 1);
        assert_eq!(one.map.volumes(), &[(1, 0)]);
        assert_eq!(one.report.other_volumes, 2);
        let error = PreparedTrace::prepare(&path, &on(4), AddressMapping::Compact, 1024)
            .expect_err("volume 4 has none");
        assert_eq!(
            error.to_string(),
            format!(
                "--asu 4: none of the requests of {} is on volume 4 (3 are on others; \
                 `flashkit trace stats --volumes` lists them)",
                path.display()
            )
        );
        let empty = dir.path().join("empty.csv");
        std::fs::write(&empty, "").expect("write");
        let prepared = PreparedTrace::prepare(&empty, &on(4), AddressMapping::Compact, 1024)
            .expect("an empty trace");
        assert_eq!(prepared.map.requests(), 0);
        assert_eq!(prepared.report.requests, 0);
    }

    /// A binary trace's digest is the one of the source it was made from, not its own.
    #[test]
    fn a_binary_trace_keeps_its_source_digest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        let mut writer = crate::binary::TraceWriter::create(&path, 0xABCD, "test").expect("create");
        writer.push(&req(0, 4096, 512)).expect("push");
        writer.finish().expect("finish");
        let prepared = PreparedTrace::prepare(
            &path,
            &TraceOptions::default(),
            AddressMapping::Compact,
            1024,
        )
        .expect("prepare");
        assert_eq!(prepared.format, Some(super::super::Format::Binary));
        assert_eq!(prepared.digest, 0xABCD);
        assert_ne!(file_digest(&path).expect("digest"), 0xABCD);
    }

    /// A file changed between the passes: a request the first pass did not see is an error
    /// naming its index, and a bad line one naming its line, both under the trace's name.
    #[test]
    fn the_second_pass_names_what_the_first_did_not_see() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.csv");
        std::fs::write(&path, MSR).expect("write");
        let prepared = PreparedTrace::prepare(&path, &msr(), AddressMapping::Compact, 1024)
            .expect("prepare")
            .named(Path::new("standard input"));
        std::fs::write(
            &path,
            "1,hm,0,Write,10240,2048,1\n2,hm,0,Read,5120,512,1\nbad\n",
        )
        .expect("rewrite");
        let results: Vec<String> = prepared
            .open()
            .expect("open")
            .map(|r| match r {
                Ok(r) => format!("ok {}", r.offset),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(results.len(), 3, "{results:?}");
        assert_eq!(results[0], "ok 0");
        assert_eq!(
            results[1],
            "standard input: request 1: a read of 512 B at byte 5120 of volume 0 was not in \
             the first pass over the trace (did the file change?)"
        );
        assert!(
            results[2].starts_with("standard input: line 3: "),
            "{}",
            results[2]
        );
        std::fs::remove_file(&path).expect("remove");
        let error = prepared.open().err().expect("the file is gone");
        assert!(
            matches!(&error, TraceError::Io { path, .. } if path == Path::new("standard input")),
            "{error}"
        );
    }

    /// The digest is xxh3-128 of the bytes, read in several buffers for a file over 1 MiB;
    /// a missing file is an error naming it.
    #[test]
    fn a_file_digest_is_xxh3_128_of_its_bytes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big");
        let bytes: Vec<u8> = (0..(3u32 << 19)).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(
            file_digest(&path).expect("digest"),
            xxhash_rust::xxh3::xxh3_128(&bytes)
        );
        let missing = dir.path().join("missing");
        let error = file_digest(&missing).expect_err("missing");
        assert!(
            matches!(&error, TraceError::Io { path, .. } if *path == missing),
            "{error}"
        );
    }

    /// A reader that returns what it is told, one read at a time, then end of file.
    struct Scripted(std::collections::VecDeque<std::io::Result<&'static [u8]>>);

    impl std::io::Read for Scripted {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            match self.0.pop_front() {
                None => Ok(0),
                Some(Ok(bytes)) => {
                    buffer[..bytes.len()].copy_from_slice(bytes);
                    Ok(bytes.len())
                }
                Some(Err(error)) => Err(error),
            }
        }
    }

    /// An interrupted read is read again; any other error ends the digest.
    #[test]
    fn a_digest_reads_through_interruptions_only() {
        use std::io::{Error, ErrorKind};
        let interrupted = Scripted(
            [
                Ok(&b"abc"[..]),
                Err(Error::from(ErrorKind::Interrupted)),
                Ok(&b"def"[..]),
            ]
            .into(),
        );
        assert_eq!(
            digest_of(interrupted).expect("digest"),
            xxhash_rust::xxh3::xxh3_128(b"abcdef")
        );
        let failing = Scripted(
            [
                Ok(&b"abc"[..]),
                Err(Error::from(ErrorKind::InvalidData)),
                Ok(&b"def"[..]),
            ]
            .into(),
        );
        assert_eq!(
            digest_of(failing).expect_err("fails").kind(),
            ErrorKind::InvalidData
        );
    }
}
