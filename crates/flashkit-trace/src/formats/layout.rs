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
            AddressMapping::Identity if single => {
                self.volume_ends.values().next().map_or(0, |&end| {
                    end.div_ceil(self.chunk_bytes)
                        .saturating_mul(self.chunk_bytes)
                })
            }
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

    fn build(chunks: &[(u16, u64)]) -> Option<DenseRanks> {
        let (&(volume, _), &(last_volume, max)) = (chunks.first()?, chunks.last()?);
        if volume != last_volume || max >= Self::MAX_SPAN || chunks.len() >= u32::MAX as usize {
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
    use std::io::Read;
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        error: source,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Xxh3::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
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
        assert_eq!(map.volumes(), &[(1, 0), (3, 2048)]);
        assert_eq!(map.required_bytes(), 2048 + 5 * 1024);
        assert_eq!(map.apply(req(3, 5000, 100)).expect("seen").offset, 7048);
        let mut single = TraceScan::new(1024);
        single.add(&req(7, 4096, 512));
        let map = single.map(AddressMapping::Identity);
        assert_eq!(map.apply(req(7, 4096, 512)).expect("seen").offset, 4096);
        assert_eq!(map.required_bytes(), 5 * 1024);
    }
}
