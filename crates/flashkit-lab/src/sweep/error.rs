//! Why a sweep file could not be expanded into cells, or a directory resumed.

use crate::config::ConfigError;
use flashkit_sim::SimError;
use flashkit_trace::TraceError;
use std::path::PathBuf;

/// Why a sweep file could not be read or expanded into its cells. Each message is whole
/// (the error it wraps is part of it, not also its `source`) and names the file and,
/// where it can, the lines at fault.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The file could not be read, or is not TOML, or not a sweep file.
    #[error("{0}")]
    File(ConfigError),
    /// A key or value of the file is refused where it is read: `problem` starts with its
    /// line ("line 4: grid key ftl has no values").
    #[error("sweep file {}: {problem}", path.display())]
    Invalid {
        /// The sweep file.
        path: PathBuf,
        /// What is wrong, and where.
        problem: String,
    },
    /// A cell could not be made or checked; `lines` are the file's lines at fault (the
    /// `[base]` options and grid values whose absence lets the cell build), if any are.
    #[error("sweep file {}{}: {error}", path.display(), places(lines))]
    Cell {
        /// The sweep file.
        path: PathBuf,
        /// The lines at fault: `line 7 ("device.op" in [grid] 100)`.
        lines: Vec<String>,
        /// Why the cell failed.
        error: Box<CellError>,
    },
    /// Two cells are one run: a value listed twice, or two spellings of one value.
    #[error(
        "sweep file {}: grid cells {first} and {second} are the same run (a value listed \
         twice, or two spellings of one value): drop one",
        path.display()
    )]
    SameRun {
        /// The sweep file.
        path: PathBuf,
        /// The first cell's id.
        first: String,
        /// The second cell's id.
        second: String,
    },
}

/// ", line 2 (...) and line 7 (...)", or nothing.
fn places(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!(", {}", lines.join(" and "))
    }
}

/// Why one cell of a grid could not be made or checked.
#[derive(Debug, thiserror::Error)]
pub enum CellError {
    /// The cell's options (the base with its grid values): `cell` lists its grid values
    /// (`ftl=page, workload.theta=0.5`), `problem` what is wrong with them.
    #[error("grid cell {cell}: {problem}")]
    Options {
        /// The cell's grid values.
        cell: String,
        /// What is wrong.
        problem: String,
    },
    /// A grid value that is not a setting (refused where the file is read already).
    #[error("{0}")]
    Grid(String),
    /// The device the cell's options describe.
    #[error("{0}")]
    Config(ConfigError),
    /// The simulator refused the device.
    #[error("{0}")]
    Device(SimError),
    /// The cell's trace could not be read.
    #[error("{0}")]
    Trace(TraceError),
    /// The run cannot run on its input (`id` names the cell).
    #[error("cell {id}: {error}")]
    Check {
        /// The cell's id.
        id: String,
        /// Why not.
        error: SimError,
    },
}

impl From<ConfigError> for CellError {
    fn from(error: ConfigError) -> Self {
        CellError::Config(error)
    }
}

impl From<SimError> for CellError {
    fn from(error: SimError) -> Self {
        CellError::Device(error)
    }
}

impl From<TraceError> for CellError {
    fn from(error: TraceError) -> Self {
        CellError::Trace(error)
    }
}
