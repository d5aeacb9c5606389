//! flashkit-trace: block I/O requests in, from generators or files.
//!
//! A [`Request`] is what a host sends a block device: an operation, a byte offset, a byte
//! length, a timestamp and a volume. This crate produces requests from seeded workload
//! generators ([`workload`]), from flashkit's compact binary trace format ([`binary`]) and
//! from every public block-trace format ([`formats`]: MSR Cambridge, UMass/SPC, FIU,
//! blkparse, fio iologs, SYSTOR '17, Tencent CBS, CloudPhysics, DiskSim, a generic CSV;
//! detected from content, gzip read directly; docs/TRACES.md), maps a trace's address spaces
//! onto a device ([`formats::layout`]), and summarises any stream of requests ([`stats`]).
//!
//! What this layer is not: it knows nothing of pages, FTLs or devices. Byte requests become
//! page operations in the simulator's host adapter.
//!
//! Key decision: everything streams. A trace is an iterator of `Result<Request, TraceError>`;
//! no reader holds more than its buffer, so a 100 GB trace replays in the memory of a small
//! one. Errors name the file, the record (or line) and the field.

pub mod binary;
pub mod formats;
pub mod stats;
pub mod workload;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use thiserror::Error;

/// A block operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Discard (TRIM / UNMAP).
    Trim,
    /// Flush the device's volatile cache.
    Flush,
}

impl Op {
    /// Every operation, in report order.
    pub const ALL: [Op; 4] = [Op::Read, Op::Write, Op::Trim, Op::Flush];

    /// The code used in the binary format.
    pub fn code(self) -> u8 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => 3,
        }
    }

    /// The operation of a binary-format code.
    pub fn from_code(code: u8) -> Option<Op> {
        Op::ALL.get(usize::from(code)).copied()
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One host request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Issue time in nanoseconds on the trace's own clock: from the start of the trace for
    /// generated workloads and relative formats (SPC, FIU, blkparse, fio, DiskSim), since the
    /// format's epoch for absolute ones (MSR: 1601, FILETIME's; SYSTOR, Tencent: 1970).
    /// Units are converted, epochs kept; only differences between times carry meaning.
    pub time_ns: u64,
    /// The operation.
    pub op: Op,
    /// First byte addressed.
    pub offset: u64,
    /// Bytes addressed (zero for a flush).
    pub size: u32,
    /// Volume, disk or ASU the request addresses (0 when the source has one).
    pub volume: u16,
}

impl Request {
    /// One past the last byte addressed.
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.size)
    }
}

/// Why a trace could not be read, written or generated. Every variant names where.
#[derive(Debug, Error)]
pub enum TraceError {
    /// The file could not be opened, read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error: shown in the message, and not also a `source` (which would print
        /// it twice in an error chain, "x: No such file or directory: No such file or
        /// directory").
        error: std::io::Error,
    },
    /// The file is not a valid trace as a whole (bad header, truncated).
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// One record or line is malformed.
    #[error("{path}: {location}: field {field}: {message}")]
    Record {
        /// The file.
        path: PathBuf,
        /// "record 17" or "line 17".
        location: String,
        /// The field at fault.
        field: &'static str,
        /// What is wrong, quoting the offending text.
        message: String,
    },
    /// A workload specification is invalid.
    #[error("invalid workload: {0}")]
    Spec(String),
    /// A reading option does not apply to the trace's format (`--time-unit` for an MSR
    /// trace, `--blkparse-event` for anything but blkparse).
    #[error("{0}")]
    Options(String),
}

impl TraceError {
    /// The same error with `file` shown as `name` (a trace saved from standard input to a
    /// temporary file is named "standard input", not by the temporary path).
    pub fn shown_as(self, file: &std::path::Path, name: &std::path::Path) -> TraceError {
        let rename = |path: PathBuf| {
            if path == file {
                name.to_path_buf()
            } else {
                path
            }
        };
        match self {
            TraceError::Io { path, error } => TraceError::Io {
                path: rename(path),
                error,
            },
            TraceError::Format { path, message } => TraceError::Format {
                path: rename(path),
                message,
            },
            TraceError::Record {
                path,
                location,
                field,
                message,
            } => TraceError::Record {
                path: rename(path),
                location,
                field,
                message,
            },
            other => other,
        }
    }
}

/// A trace must be a file: it is read more than once (its format detected, its addresses
/// mapped, then replayed), and a pipe or device read again is empty or never ends. (A
/// gzip-compressed file is read directly.)
pub(crate) fn check_is_file(path: &std::path::Path) -> Result<(), TraceError> {
    match flashkit_core::not_a_file(path) {
        None => Ok(()),
        Some(kind) => Err(TraceError::Format {
            path: path.to_path_buf(),
            message: format!(
                "is {kind}, not a file: a trace is read more than once (to detect its \
                 format, map its addresses, replay it), so save it to a file first, or \
                 pipe it to standard input and give - in its place, which saves it to a \
                 temporary file (gzip-compressed files are read as they are)"
            ),
        }),
    }
}

/// A stream of requests, from any source.
pub type RequestResult = Result<Request, TraceError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn operations_print_their_names() {
        let shown: Vec<String> = Op::ALL.iter().map(|op| op.to_string()).collect();
        assert_eq!(shown, ["read", "write", "trim", "flush"]);
    }

    #[test]
    fn a_request_ends_one_past_its_last_byte() {
        let request = Request {
            time_ns: 0,
            op: Op::Write,
            offset: 4096,
            size: 512,
            volume: 0,
        };
        assert_eq!(request.end(), 4608);
    }

    /// Only the temporary file's name is replaced: an error about another file keeps its
    /// path, and errors without a path pass through.
    #[test]
    fn shown_as_renames_only_the_file_it_names() {
        let (file, name) = (Path::new("/tmp/x123"), Path::new("standard input"));
        let format = |path: &str| TraceError::Format {
            path: PathBuf::from(path),
            message: "bad".into(),
        };
        let path_of = |error: TraceError| match error {
            TraceError::Format { path, .. }
            | TraceError::Io { path, .. }
            | TraceError::Record { path, .. } => path,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(path_of(format("/tmp/x123").shown_as(file, name)), name);
        assert_eq!(
            path_of(format("/tmp/other").shown_as(file, name)),
            Path::new("/tmp/other")
        );
        let io = TraceError::Io {
            path: file.to_path_buf(),
            error: std::io::Error::other("x"),
        };
        assert_eq!(path_of(io.shown_as(file, name)), name);
        let record = TraceError::Record {
            path: file.to_path_buf(),
            location: "line 3".into(),
            field: "offset",
            message: "bad".into(),
        };
        assert_eq!(path_of(record.shown_as(file, name)), name);
        let options = TraceError::Options("o".into()).shown_as(file, name);
        assert!(matches!(options, TraceError::Options(text) if text == "o"));
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_not_a_trace_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
        let message = check_is_file(&fifo).expect_err("refused").to_string();
        assert!(
            message.contains("is a pipe, not a file") && message.contains("fifo"),
            "{message}"
        );
        let file = dir.path().join("t.csv");
        std::fs::write(&file, "x").expect("write");
        assert!(check_is_file(&file).is_ok());
    }
}
