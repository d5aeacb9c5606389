//! Why a config file, or the options resolved from it, could not be used.

use flashkit_ftl::{FtlError, FtlKind};
use flashkit_sim::SimError;
use flashkit_trace::TraceError;
use std::path::PathBuf;

/// Why options could not be read or resolved. Each message is whole: it includes the
/// error it wraps (which is therefore not also given as its `source`), so that a front end
/// shows it as it is. Options are named by their flags (`--read-sizes`), which are also the
/// config file's keys with `_` for `-`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {what} {}: {error}", path.display())]
    Read {
        /// What the file is ("config file", "sweep file").
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file holds a byte that is not UTF-8, which no TOML file may.
    #[error(
        "{what} {}: line {line}, column {column}: byte {byte:#04x} is not UTF-8 (TOML files \
         are UTF-8)",
        path.display()
    )]
    NotUtf8 {
        /// What the file is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The line of the byte, from 1.
        line: usize,
        /// Its column, from 1, in bytes.
        column: usize,
        /// The byte.
        byte: u8,
    },
    /// A file is not TOML, or not a config file: a syntax error, an unknown key, a value
    /// out of range (toml's message names the line, column and key).
    #[error("{what} {}: {error}", path.display())]
    Syntax {
        /// What the file is.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// Toml's error.
        error: Box<toml::de::Error>,
    },
    /// The device the options describe is refused by the simulator.
    #[error("{0}")]
    Device(SimError),
    /// An FTL cannot run on the device with these options.
    #[error("{kind}: {error}")]
    Ftl {
        /// The FTL.
        kind: FtlKind,
        /// Why not.
        error: FtlError,
    },
    /// The workload the options describe is refused by its generator.
    #[error("{0}")]
    Workload(TraceError),
    /// Options that would do nothing in this run: it would look measured with them.
    #[error("{0}")]
    Unused(String),
    /// A value, or options together, that no run can use (an unknown pattern, a size
    /// beyond 4 GiB, a span beyond the device).
    #[error("{0}")]
    Invalid(String),
    /// An error of options from a config file, with the file's lines at fault
    /// ([`ConfigFile::blame`](super::ConfigFile::blame)).
    #[error("config file {}, {}: {error}", path.display(), lines.join(" and "))]
    Blamed {
        /// The config file.
        path: PathBuf,
        /// The lines at fault: `line 2 ([workload] read_fraction = 0.7)`.
        lines: Vec<String>,
        /// The error.
        error: Box<ConfigError>,
    },
}

impl From<SimError> for ConfigError {
    fn from(error: SimError) -> Self {
        ConfigError::Device(error)
    }
}

impl From<TraceError> for ConfigError {
    fn from(error: TraceError) -> Self {
        ConfigError::Workload(error)
    }
}
