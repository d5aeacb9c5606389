//! flashkit's compact binary trace format (`.fkt`).
//!
//! A 64-byte header, an optional UTF-8 description, then fixed-width 24-byte records, all
//! little-endian (the byte diagram is in docs/DESIGN.md):
//!
//! ```text
//! header   0  magic       89 46 4B 54 0D 0A 1A 0A   ("\x89FKT\r\n\x1a\n")
//!          8  version     u16   1
//!         10  record size u16   24
//!         12  addr unit   u32   bytes per offset/size unit (1)
//!         16  time unit   u32   nanoseconds per time unit (1)
//!         20  flags       u32   bit 0: records are in time order
//!         24  records     u64   record count, written when the writer finishes
//!         32  source      16 B  xxh3-128 digest of the source (file bytes or generator spec)
//!         48  desc len    u32   bytes of description after the header
//!         52  reserved    u32   0 (refused otherwise)
//!         56  checksum    u64   xxh3-64 of bytes 0..56 and the description
//! record   0  time        u64
//!          8  offset      u64
//!         16  size        u32
//!         20  op          u8    0 read, 1 write, 2 trim, 3 flush
//!         21  reserved    u8    0 (refused otherwise)
//!         22  volume      u16
//! ```
//!
//! A writer that did not finish leaves a record count of zero; the reader compares the count
//! with the file length and refuses a truncated or unfinished file rather than replaying
//! part of it silently.

use crate::{Op, Request, TraceError};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

/// The file signature.
pub const MAGIC: [u8; 8] = [0x89, b'F', b'K', b'T', b'\r', b'\n', 0x1a, b'\n'];
/// The format version this code writes and reads.
pub const VERSION: u16 = 1;
/// Header size in bytes.
pub const HEADER_BYTES: usize = 64;
/// Record size in bytes.
pub const RECORD_BYTES: usize = 24;
const FLAG_TIME_ORDERED: u32 = 1;
const MAX_DESCRIPTION: u32 = 1 << 20;

/// What the header says about a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceInfo {
    /// Number of records.
    pub records: u64,
    /// Digest of the source the trace was made from.
    pub source_digest: u128,
    /// Free-text description (the generator spec or the source file name).
    pub description: String,
    /// Whether the records are in time order.
    pub time_ordered: bool,
    /// Bytes per address unit in the records.
    pub address_unit_bytes: u32,
    /// Nanoseconds per time unit in the records.
    pub time_unit_ns: u32,
}

/// The digest flashkit records for a source given as bytes.
pub fn digest(bytes: &[u8]) -> u128 {
    xxh3_128(bytes)
}

/// Writes a binary trace to a file.
pub struct TraceWriter {
    path: PathBuf,
    out: BufWriter<File>,
    records: u64,
    last_time: u64,
    time_ordered: bool,
    source_digest: u128,
    description: String,
}

impl TraceWriter {
    /// Create (or truncate) `path` for a trace made from a source with `source_digest`.
    pub fn create(path: &Path, source_digest: u128, description: &str) -> Result<Self, TraceError> {
        let io = |source| TraceError::Io {
            path: path.to_path_buf(),
            error: source,
        };
        if description.len() > MAX_DESCRIPTION as usize {
            return Err(TraceError::Format {
                path: path.to_path_buf(),
                message: format!("description of {} bytes is too long", description.len()),
            });
        }
        let file = File::create(path).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // Placeholder header: a zero count marks the file unfinished until `finish`.
        let placeholder = encode_header(&TraceInfo {
            records: 0,
            source_digest,
            description: description.to_string(),
            time_ordered: true,
            address_unit_bytes: 1,
            time_unit_ns: 1,
        });
        out.write_all(&placeholder).map_err(io)?;
        out.write_all(description.as_bytes()).map_err(io)?;
        Ok(TraceWriter {
            path: path.to_path_buf(),
            out,
            records: 0,
            last_time: 0,
            time_ordered: true,
            source_digest,
            description: description.to_string(),
        })
    }

    /// Append one request.
    pub fn push(&mut self, request: &Request) -> Result<(), TraceError> {
        let mut record = [0u8; RECORD_BYTES];
        record[0..8].copy_from_slice(&request.time_ns.to_le_bytes());
        record[8..16].copy_from_slice(&request.offset.to_le_bytes());
        record[16..20].copy_from_slice(&request.size.to_le_bytes());
        record[20] = request.op.code();
        record[22..24].copy_from_slice(&request.volume.to_le_bytes());
        if request.time_ns < self.last_time {
            self.time_ordered = false;
        }
        self.last_time = request.time_ns;
        self.records += 1;
        self.out
            .write_all(&record)
            .map_err(|source| TraceError::Io {
                path: self.path.clone(),
                error: source,
            })
    }

    /// Write the final header and flush. Returns the number of records.
    pub fn finish(mut self) -> Result<u64, TraceError> {
        let header = encode_header(&TraceInfo {
            records: self.records,
            source_digest: self.source_digest,
            description: std::mem::take(&mut self.description),
            time_ordered: self.time_ordered,
            address_unit_bytes: 1,
            time_unit_ns: 1,
        });
        let io = |source| TraceError::Io {
            path: self.path.clone(),
            error: source,
        };
        self.out.flush().map_err(io)?;
        let file = self.out.get_mut();
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(&header).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(self.records)
    }
}

fn encode_header(info: &TraceInfo) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..10].copy_from_slice(&VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
    h[12..16].copy_from_slice(&info.address_unit_bytes.to_le_bytes());
    h[16..20].copy_from_slice(&info.time_unit_ns.to_le_bytes());
    let flags = if info.time_ordered {
        FLAG_TIME_ORDERED
    } else {
        0
    };
    h[20..24].copy_from_slice(&flags.to_le_bytes());
    h[24..32].copy_from_slice(&info.records.to_le_bytes());
    h[32..48].copy_from_slice(&info.source_digest.to_le_bytes());
    h[48..52].copy_from_slice(&(info.description.len() as u32).to_le_bytes());
    let checksum = header_checksum(&h, info.description.as_bytes());
    h[56..64].copy_from_slice(&checksum.to_le_bytes());
    h
}

fn header_checksum(header: &[u8; HEADER_BYTES], description: &[u8]) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(&header[..56]);
    hasher.update(description);
    hasher.digest()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(bytes)
}

/// Check what a header says before its description is read (signature, version, record
/// size, units, the description's length against the limit and the file of `file_len`
/// bytes); the description's length, or what is wrong.
fn check_header_start(h: &[u8; HEADER_BYTES], file_len: u64) -> Result<u32, String> {
    if h[0..8] != MAGIC {
        return Err("not a flashkit binary trace (bad signature)".into());
    }
    let version = u16_at(h, 8);
    if version != VERSION {
        return Err(format!(
            "binary trace version {version}; this flashkit reads version {VERSION}"
        ));
    }
    let record_bytes = u16_at(h, 10);
    if usize::from(record_bytes) != RECORD_BYTES {
        return Err(format!(
            "record size {record_bytes} B; version {VERSION} uses {RECORD_BYTES} B"
        ));
    }
    let (address_unit_bytes, time_unit_ns) = (u32_at(h, 12), u32_at(h, 16));
    if address_unit_bytes == 0 || time_unit_ns == 0 {
        return Err("header declares a zero address or time unit".into());
    }
    let description_len = u32_at(h, 48);
    if description_len > MAX_DESCRIPTION {
        return Err(format!(
            "header declares a {description_len}-byte description, over the limit of \
             {MAX_DESCRIPTION} bytes"
        ));
    }
    if u64::from(description_len) > file_len - HEADER_BYTES as u64 {
        return Err(format!(
            "header declares a {description_len}-byte description the file does not hold"
        ));
    }
    Ok(description_len)
}

/// Check the rest of a header with its `description` (checksum, flags, reserved bytes, the
/// description's encoding, the record count against the file of `file_len` bytes); what it
/// says, or what is wrong.
fn check_header_end(
    h: &[u8; HEADER_BYTES],
    description: Vec<u8>,
    file_len: u64,
) -> Result<TraceInfo, String> {
    if u64_at(h, 56) != header_checksum(h, &description) {
        return Err("header checksum mismatch: the header or description is corrupt".into());
    }
    let flags = u32_at(h, 20);
    if flags & !FLAG_TIME_ORDERED != 0 {
        return Err(format!(
            "header flags {flags:#x} set bits this version does not define"
        ));
    }
    if u32_at(h, 52) != 0 {
        return Err(format!(
            "header bytes 52..56 (reserved) hold {:#x}, not 0",
            u32_at(h, 52)
        ));
    }
    let description_len = description.len() as u64;
    let description =
        String::from_utf8(description).map_err(|_| "the description is not UTF-8".to_string())?;
    let records = u64_at(h, 24);
    let body = file_len - HEADER_BYTES as u64 - description_len;
    let expected = records.checked_mul(RECORD_BYTES as u64);
    if expected != Some(body) {
        let held = body / RECORD_BYTES as u64;
        // A count of zero with a body (never empty here: zero records expect none).
        let why = if records == 0 {
            "the writer did not finish"
        } else {
            "truncated or extended"
        };
        return Err(format!(
            "header promises {records} records but the file holds {held} ({body} bytes): {why}"
        ));
    }
    Ok(TraceInfo {
        records,
        source_digest: u128::from_le_bytes(h[32..48].try_into().expect("16 bytes")),
        description,
        time_ordered: flags & FLAG_TIME_ORDERED != 0,
        address_unit_bytes: u32_at(h, 12),
        time_unit_ns: u32_at(h, 16),
    })
}

/// Whether `prefix` (the first bytes of a file) starts with the binary-trace signature.
pub fn is_binary_trace(prefix: &[u8]) -> bool {
    prefix.starts_with(&MAGIC)
}

/// Streams the requests of a binary trace file.
pub struct TraceReader {
    path: PathBuf,
    input: BufReader<File>,
    info: TraceInfo,
    /// Records decoded so far (the index of the next record to decode).
    decoded: u64,
    /// Decoded requests not yet handed out: whole records are decoded straight out of the
    /// read buffer, a buffer at a time.
    batch: Vec<Request>,
    batch_position: usize,
    /// An error found while decoding a batch, handed out after the requests before it.
    pending: Option<TraceError>,
    failed: bool,
}

const BATCH_RECORDS: usize = 4096;

impl TraceReader {
    /// Open `path` and check its header and length.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let format = |message: String| TraceError::Format {
            path: path.to_path_buf(),
            message,
        };
        let io = |source| TraceError::Io {
            path: path.to_path_buf(),
            error: source,
        };
        crate::check_is_file(path)?;
        let file = File::open(path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let mut input = BufReader::with_capacity(1 << 18, file);
        let mut h = [0u8; HEADER_BYTES];
        if file_len < HEADER_BYTES as u64 {
            return Err(format(format!(
                "{file_len} bytes is too short for a flashkit binary trace (the header alone is {HEADER_BYTES})"
            )));
        }
        input.read_exact(&mut h).map_err(io)?;
        let description_len = check_header_start(&h, file_len).map_err(format)?;
        let mut description = vec![0u8; description_len as usize];
        input.read_exact(&mut description).map_err(io)?;
        let info = check_header_end(&h, description, file_len).map_err(format)?;
        Ok(TraceReader {
            path: path.to_path_buf(),
            input,
            info,
            decoded: 0,
            batch: Vec::with_capacity(BATCH_RECORDS),
            batch_position: 0,
            pending: None,
            failed: false,
        })
    }

    /// What the header says.
    pub fn info(&self) -> &TraceInfo {
        &self.info
    }

    #[inline]
    fn decode(info: &TraceInfo, path: &Path, index: u64, r: &[u8]) -> Result<Request, TraceError> {
        // Fast path: byte and nanosecond units (what flashkit writes) need no scaling.
        if info.address_unit_bytes == 1
            && info.time_unit_ns == 1
            && r[21] == 0
            && let Some(op) = Op::from_code(r[20])
        {
            let (offset, size) = (u64_at(r, 8), u32_at(r, 16));
            if offset.checked_add(u64::from(size)).is_some() {
                let time_ns = u64_at(r, 0);
                return Ok(Request {
                    time_ns,
                    op,
                    offset,
                    size,
                    volume: u16_at(r, 22),
                });
            }
        }
        Self::decode_scaled(info, path, index, r)
    }

    #[cold]
    fn decode_scaled(
        info: &TraceInfo,
        path: &Path,
        index: u64,
        r: &[u8],
    ) -> Result<Request, TraceError> {
        let offset_in_file =
            HEADER_BYTES as u64 + info.description.len() as u64 + index * RECORD_BYTES as u64;
        let bad = |field: &'static str, message: String| TraceError::Record {
            path: path.to_path_buf(),
            location: format!("record {index} (byte {offset_in_file})"),
            field,
            message,
        };
        let op = Op::from_code(r[20])
            .ok_or_else(|| bad("op", format!("unknown operation code {}", r[20])))?;
        if r[21] != 0 {
            return Err(bad(
                "reserved",
                format!("byte 21 of the record is {}, not 0", r[21]),
            ));
        }
        let unit = u64::from(info.address_unit_bytes);
        let offset = u64_at(r, 8).checked_mul(unit).ok_or_else(|| {
            bad(
                "offset",
                format!("{} units of {unit} B overflow", u64_at(r, 8)),
            )
        })?;
        let size = u64::from(u32_at(r, 16)) * unit;
        let size =
            u32::try_from(size).map_err(|_| bad("size", format!("{size} B exceeds 4 GiB")))?;
        if offset.checked_add(u64::from(size)).is_none() {
            return Err(bad("offset", format!("{offset} + {size} overflows")));
        }
        let time = u64_at(r, 0);
        let time_ns = time
            .checked_mul(u64::from(info.time_unit_ns))
            .ok_or_else(|| {
                bad(
                    "time",
                    format!(
                        "{time} units of {} ns overflow 64-bit nanoseconds",
                        info.time_unit_ns
                    ),
                )
            })?;
        Ok(Request {
            time_ns,
            op,
            offset,
            size,
            volume: u16_at(r, 22),
        })
    }

    /// Decode the next batch: every whole record in the read buffer (or one record read
    /// across the buffer's end). Stops at the first bad record, keeping its error.
    fn refill(&mut self) {
        self.batch.clear();
        self.batch_position = 0;
        let left = self.info.records - self.decoded;
        if left == 0 {
            return;
        }
        let whole = match self.input.fill_buf() {
            Ok(buffer) => (buffer.len() / RECORD_BYTES)
                .min(left as usize)
                .min(BATCH_RECORDS),
            Err(source) => {
                self.pending = Some(TraceError::Io {
                    path: self.path.clone(),
                    error: source,
                });
                return;
            }
        };
        if whole == 0 {
            let mut record = [0u8; RECORD_BYTES];
            match self.input.read_exact(&mut record) {
                Ok(()) => self.push_decoded(&record),
                Err(source) => {
                    self.pending = Some(TraceError::Io {
                        path: self.path.clone(),
                        error: source,
                    })
                }
            }
            return;
        }
        let mut consumed = 0;
        if let Ok(bytes) = self.input.fill_buf() {
            for record in bytes[..whole * RECORD_BYTES].chunks_exact(RECORD_BYTES) {
                consumed += RECORD_BYTES;
                match Self::decode(&self.info, &self.path, self.decoded, record) {
                    Ok(request) => {
                        self.batch.push(request);
                        self.decoded += 1;
                    }
                    Err(error) => {
                        self.pending = Some(error);
                        break;
                    }
                }
            }
        }
        self.input.consume(consumed);
    }

    fn push_decoded(&mut self, record: &[u8]) {
        match Self::decode(&self.info, &self.path, self.decoded, record) {
            Ok(request) => {
                self.batch.push(request);
                self.decoded += 1;
            }
            Err(error) => self.pending = Some(error),
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(&request) = self.batch.get(self.batch_position) {
            self.batch_position += 1;
            return Some(Ok(request));
        }
        if self.failed {
            return None;
        }
        if let Some(error) = self.pending.take() {
            self.failed = true;
            return Some(Err(error));
        }
        self.refill();
        if self.batch.is_empty() {
            return self.pending.take().map(|error| {
                self.failed = true;
                Err(error)
            });
        }
        self.batch_position = 1;
        Some(Ok(self.batch[0]))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let unread = self.batch.len() - self.batch_position;
        let left = (self.info.records - self.decoded) as usize + unread;
        (0, Some(left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Pattern, SizeDist, Workload, WorkloadSpec};
    use std::fs::OpenOptions;

    fn sample() -> Vec<Request> {
        let mut spec = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 8192 },
            1000,
            1 << 30,
        );
        spec.read_fraction = 0.3;
        spec.trim_fraction = 0.1;
        spec.interarrival_ns = 1500;
        Workload::new(spec, 9).expect("valid").collect()
    }

    fn write(path: &Path, requests: &[Request]) {
        let mut writer = TraceWriter::create(path, 0xABCD, "uniform test").expect("create");
        for r in requests {
            writer.push(r).expect("push");
        }
        assert_eq!(writer.finish().expect("finish"), requests.len() as u64);
    }

    /// Reports and sweep results record this digest of their input, so it must stay the
    /// same from version to version: XXH3-128 with seed 0 (the empty input's value is the
    /// one the xxHash reference gives).
    #[test]
    fn the_digest_is_xxh3_128() {
        assert_eq!(digest(b""), 0x99aa_06d3_0147_98d8_6001_c324_468d_497f);
        assert_eq!(
            digest(b"flashkit"),
            0x30e6_a760_e7c8_df82_0f46_52e1_f4c6_0ce9
        );
        assert_ne!(digest(b"flashkit"), digest(b"flashkiT"));
    }

    /// A description of up to 1 MiB is kept; a longer one is refused when the file is
    /// created, naming its length.
    #[test]
    fn descriptions_up_to_the_limit_are_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("long.fkt");
        let longest = "d".repeat(MAX_DESCRIPTION as usize);
        let writer = TraceWriter::create(&path, 1, &longest).expect("the limit is allowed");
        assert_eq!(writer.finish().expect("finish"), 0);
        let reader = TraceReader::open(&path).expect("open");
        assert_eq!(reader.info().description.len(), MAX_DESCRIPTION as usize);
        let message = TraceWriter::create(&path, 1, &format!("{longest}d"))
            .err()
            .expect("refused")
            .to_string();
        assert!(
            message.contains(&format!("description of {} bytes", MAX_DESCRIPTION + 1)),
            "{message}"
        );
    }

    #[test]
    fn round_trip_preserves_every_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        let mut requests = sample();
        requests[5].volume = 7;
        requests[6].op = Op::Flush;
        write(&path, &requests);
        let reader = TraceReader::open(&path).expect("open");
        assert_eq!(reader.info().records, 1000);
        assert_eq!(reader.info().source_digest, 0xABCD);
        assert_eq!(reader.info().description, "uniform test");
        assert!(reader.info().time_ordered);
        let back: Vec<_> = reader.map(|r| r.expect("record")).collect();
        assert_eq!(back, requests);
    }

    #[test]
    fn an_empty_trace_is_valid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("empty.fkt");
        write(&path, &[]);
        assert_eq!(TraceReader::open(&path).expect("open").count(), 0);
    }

    #[test]
    fn truncated_unfinished_and_corrupt_files_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &sample());
        let len = std::fs::metadata(&path).expect("meta").len();
        OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open")
            .set_len(len - 10)
            .expect("truncate");
        let message = TraceReader::open(&path).err().expect("refused").to_string();
        assert!(
            message.contains("promises 1000 records") && message.contains("t.fkt"),
            "{message}"
        );

        let unfinished = dir.path().join("unfinished.fkt");
        let mut writer = TraceWriter::create(&unfinished, 1, "x").expect("create");
        writer.push(&sample()[0]).expect("push");
        drop(writer);
        let message = TraceReader::open(&unfinished)
            .err()
            .expect("refused")
            .to_string();
        assert!(message.contains("did not finish"), "{message}");

        let corrupt = dir.path().join("corrupt.fkt");
        write(&corrupt, &sample()[..3]);
        let mut bytes = std::fs::read(&corrupt).expect("read");
        bytes[33] ^= 1;
        std::fs::write(&corrupt, &bytes).expect("write");
        let message = TraceReader::open(&corrupt)
            .err()
            .expect("refused")
            .to_string();
        assert!(message.contains("checksum"), "{message}");

        let text = dir.path().join("text.csv");
        std::fs::write(&text, "0,hm,0,Read,0,4096,10\n".repeat(10)).expect("write");
        let message = TraceReader::open(&text).err().expect("refused").to_string();
        assert!(message.contains("not a flashkit binary trace"), "{message}");
    }

    #[test]
    fn a_bad_record_names_its_index_and_field() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &sample()[..10]);
        let mut bytes = std::fs::read(&path).expect("read");
        let at = HEADER_BYTES + "uniform test".len() + 4 * RECORD_BYTES + 20;
        bytes[at] = 9;
        std::fs::write(&path, &bytes).expect("write");
        let results: Vec<_> = TraceReader::open(&path).expect("open").collect();
        assert_eq!(results.len(), 5, "reading stops at the bad record");
        let message = results[4].as_ref().expect_err("bad record").to_string();
        assert!(
            message.contains("record 4")
                && message.contains("field op")
                && message.contains("code 9"),
            "{message}"
        );
    }

    /// Rewrite header bytes `at..at + value.len()` of `path` and recompute the checksum,
    /// as a writer of another version (or a careful corrupter) would.
    fn patch_header(path: &Path, at: usize, value: &[u8]) {
        let mut bytes = std::fs::read(path).expect("read");
        bytes[at..at + value.len()].copy_from_slice(value);
        let description_len = u32_at(&bytes, 48) as usize;
        let mut header = [0u8; HEADER_BYTES];
        header.copy_from_slice(&bytes[..HEADER_BYTES]);
        let description = &bytes[HEADER_BYTES..HEADER_BYTES + description_len];
        let checksum = header_checksum(&header, description);
        bytes[56..64].copy_from_slice(&checksum.to_le_bytes());
        std::fs::write(path, &bytes).expect("write");
    }

    /// Found by an outside bad-input hunt: a time unit of 2^32-1 ns (checksum valid) was
    /// accepted with every time saturated to 2^64-1 and every duration 0; the same overflow
    /// in the address unit was refused.
    #[test]
    fn a_time_that_overflows_its_unit_is_refused_not_saturated() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        // Times from 0 to 9 * 2^31 ns: the later ones overflow 2^32-1 ns units.
        let mut requests = sample()[..10].to_vec();
        for (i, r) in requests.iter_mut().enumerate() {
            r.time_ns = (i as u64) << 31;
        }
        write(&path, &requests);
        patch_header(&path, 16, &u32::MAX.to_le_bytes());
        let results: Vec<_> = TraceReader::open(&path).expect("open").collect();
        let first_late = requests
            .iter()
            .position(|r| r.time_ns.checked_mul(u64::from(u32::MAX)).is_none())
            .expect("a time that overflows");
        assert_eq!(
            results.len(),
            first_late + 1,
            "the requests before it, then the error"
        );
        let message = results[first_late]
            .as_ref()
            .expect_err("overflow")
            .to_string();
        assert!(
            message.contains("field time") && message.contains("overflow"),
            "{message}"
        );
        // A unit that does not overflow scales exactly.
        write(&path, &sample()[..10]);
        patch_header(&path, 16, &1000u32.to_le_bytes());
        let scaled: Vec<u64> = TraceReader::open(&path)
            .expect("open")
            .map(|r| r.expect("fits").time_ns)
            .collect();
        let expected: Vec<u64> = sample()[..10].iter().map(|r| r.time_ns * 1000).collect();
        assert_eq!(scaled, expected);
    }

    /// Found by the same hunt: byte 21 of a record (reserved, written 0) was never read, so
    /// a corrupt byte there passed unseen; reserved and unknown header bits are refused too.
    #[test]
    fn reserved_bytes_and_unknown_flags_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &sample()[..10]);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[HEADER_BYTES + "uniform test".len() + 3 * RECORD_BYTES + 21] = 1;
        std::fs::write(&path, &bytes).expect("write");
        let results: Vec<_> = TraceReader::open(&path).expect("open").collect();
        assert_eq!(results.len(), 4);
        let message = results[3].as_ref().expect_err("reserved").to_string();
        assert!(
            message.contains("record 3") && message.contains("field reserved"),
            "{message}"
        );
        for (at, value, needle) in [
            (52, 1u32, "reserved"),
            (20, 2, "flags 0x2"),
            (20, 1 << 31, "flags 0x8"),
        ] {
            write(&path, &sample()[..10]);
            patch_header(&path, at, &value.to_le_bytes());
            let message = TraceReader::open(&path).err().expect(needle).to_string();
            assert!(message.contains(needle), "{message}");
        }
    }

    /// A trace of `n` generated requests (the same generator as `sample`).
    fn many(n: u64) -> Vec<Request> {
        let mut spec = WorkloadSpec::new(
            Pattern::Uniform,
            SizeDist::Fixed { bytes: 8192 },
            n,
            1 << 30,
        );
        spec.read_fraction = 0.3;
        spec.interarrival_ns = 1500;
        Workload::new(spec, 11).expect("valid").collect()
    }

    /// A header with no description and no records (64 bytes) is a valid empty trace; a
    /// file one byte shorter is refused as too short, naming its length, not by a failed
    /// read.
    #[test]
    fn a_bare_header_is_an_empty_trace_and_less_is_too_short() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bare.fkt");
        let writer = TraceWriter::create(&path, 5, "").expect("create");
        assert_eq!(writer.finish().expect("finish"), 0);
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), 64);
        let reader = TraceReader::open(&path).expect("a bare header opens");
        assert_eq!(
            reader.info(),
            &TraceInfo {
                records: 0,
                source_digest: 5,
                description: String::new(),
                time_ordered: true,
                address_unit_bytes: 1,
                time_unit_ns: 1,
            }
        );
        assert_eq!(reader.count(), 0);

        let short = dir.path().join("short.fkt");
        let bytes = std::fs::read(&path).expect("read");
        std::fs::write(&short, &bytes[..63]).expect("write");
        let error = TraceReader::open(&short).err().expect("refused");
        assert!(matches!(error, TraceError::Format { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("63 bytes is too short") && message.contains("short.fkt"),
            "{message}"
        );
    }

    /// A zero address unit, or a zero time unit, is refused on its own (checksum valid).
    #[test]
    fn a_zero_address_or_time_unit_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        for at in [12, 16] {
            write(&path, &sample()[..10]);
            patch_header(&path, at, &0u32.to_le_bytes());
            let message = TraceReader::open(&path).err().expect("refused").to_string();
            assert!(
                message.contains("header declares a zero address or time unit"),
                "byte {at}: {message}"
            );
        }
    }

    /// A description length beyond what the file holds is refused as such, before any read:
    /// 100 bytes declared in a file of 76 (header and a 12-byte description).
    #[test]
    fn a_description_longer_than_the_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &[]);
        let mut bytes = std::fs::read(&path).expect("read");
        assert_eq!(bytes.len(), 76);
        bytes[48..52].copy_from_slice(&100u32.to_le_bytes());
        std::fs::write(&path, &bytes).expect("write");
        let error = TraceReader::open(&path).err().expect("refused");
        assert!(matches!(error, TraceError::Format { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("a 100-byte description the file does not hold"),
            "{message}"
        );
    }

    /// A description over the 1 MiB limit is refused even when the file holds it and the
    /// checksum covers it.
    #[test]
    fn a_description_over_the_limit_is_refused_even_when_present() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("long.fkt");
        let longest = "d".repeat(MAX_DESCRIPTION as usize);
        let writer = TraceWriter::create(&path, 1, &longest).expect("create");
        assert_eq!(writer.finish().expect("finish"), 0);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes.push(b'd');
        std::fs::write(&path, &bytes).expect("write");
        patch_header(&path, 48, &(MAX_DESCRIPTION + 1).to_le_bytes());
        let message = TraceReader::open(&path).err().expect("refused").to_string();
        assert!(
            message.contains(&format!(
                "a {}-byte description, over the limit of {MAX_DESCRIPTION} bytes",
                MAX_DESCRIPTION + 1
            )),
            "{message}"
        );
    }

    /// The length error says how many whole records the file holds and why: 1000 records
    /// less 10 bytes is 23,990 bytes, 999 whole records, truncated (not unfinished).
    #[test]
    fn a_truncated_file_reports_the_records_it_holds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &sample());
        let len = std::fs::metadata(&path).expect("meta").len();
        assert_eq!(len, 64 + 12 + 24_000);
        OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open")
            .set_len(len - 10)
            .expect("truncate");
        let message = TraceReader::open(&path).err().expect("refused").to_string();
        assert!(
            message.contains(
                "header promises 1000 records but the file holds 999 (23990 bytes): \
                 truncated or extended"
            ),
            "{message}"
        );
    }

    /// A writer given requests out of time order says so in the header, and the reader
    /// reports it.
    #[test]
    fn out_of_order_requests_are_flagged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        let mut requests = sample()[..10].to_vec();
        requests.swap(3, 4);
        write(&path, &requests);
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(u32_at(&bytes, 20), 0, "flags");
        let reader = TraceReader::open(&path).expect("open");
        assert!(!reader.info().time_ordered);
        let back: Vec<_> = reader.map(|r| r.expect("record")).collect();
        assert_eq!(back, requests);
    }

    /// A header's address unit scales offsets and sizes: 512-byte units read 8192 as
    /// 4 MiB and offset x as 512 x.
    #[test]
    fn the_address_unit_scales_offsets_and_sizes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        let requests = sample()[..10].to_vec();
        write(&path, &requests);
        patch_header(&path, 12, &512u32.to_le_bytes());
        let reader = TraceReader::open(&path).expect("open");
        assert_eq!(reader.info().address_unit_bytes, 512);
        let back: Vec<_> = reader.map(|r| r.expect("fits")).collect();
        let expected: Vec<Request> = requests
            .iter()
            .map(|r| Request {
                offset: r.offset * 512,
                size: if r.op == Op::Flush { 0 } else { 4 << 20 },
                ..*r
            })
            .collect();
        assert!(requests.iter().all(|r| r.size == 8192 || r.op == Op::Flush));
        assert_eq!(back, expected);
    }

    /// A bad record's error names its byte in the file: record 4 after a 64-byte header and
    /// a 12-byte description starts at 64 + 12 + 4 * 24 = 172.
    #[test]
    fn a_bad_record_names_its_byte() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &sample()[..10]);
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[172 + 20] = 4;
        std::fs::write(&path, &bytes).expect("write");
        let results: Vec<_> = TraceReader::open(&path).expect("open").collect();
        assert_eq!(results.len(), 5);
        let message = results[4].as_ref().expect_err("bad record").to_string();
        assert!(
            message.contains("record 4 (byte 172): field op: unknown operation code 4"),
            "{message}"
        );
    }

    /// A trace bigger than the reader's 256 KiB buffer is read whole and in order, across
    /// batches of 4096 records and the records split by the buffer's end (12,000 records
    /// are 288,000 bytes).
    #[test]
    fn a_trace_bigger_than_the_read_buffer_round_trips() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.fkt");
        let requests = many(12_000);
        write(&path, &requests);
        let back: Vec<_> = TraceReader::open(&path)
            .expect("open")
            .map(|r| r.expect("record"))
            .collect();
        assert_eq!(back.len(), requests.len());
        assert_eq!(back, requests);
    }

    /// The upper size hint is exactly the requests left, whether they are decoded or not.
    #[test]
    fn the_size_hint_bounds_the_requests_left_exactly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.fkt");
        write(&path, &many(5000));
        let mut reader = TraceReader::open(&path).expect("open");
        assert_eq!(reader.size_hint(), (0, Some(5000)));
        for left in (0..5000).rev() {
            reader.next().expect("a request").expect("valid");
            assert_eq!(reader.size_hint(), (0, Some(left)));
        }
        assert!(reader.next().is_none());
        assert_eq!(reader.size_hint(), (0, Some(0)));
    }
}
