//! The config file, its option groups, and how options resolve into the libraries' specs.
//!
//! One TOML file (`--config` to the `flashkit` binary) gives defaults to every run: a
//! section an option group ([`DeviceSection`], [`FtlSection`], [`RunSection`],
//! [`WorkloadSection`], [`TraceSection`]), with the flags' names (`page_size` for
//! `--page-size`). Each group is declared once, here: with the `clap` feature it is also
//! the group of flags (`#[command(flatten)]`), its doc comments the help text. Options
//! resolve as the flags first, then the file, then the built-in default ([`device_spec`],
//! [`ftl_options`], [`workload_spec`], [`trace_options`], [`precondition`], [`seed`]), so
//! that every front end reading one file gets the same specs and the same errors
//! ([`ConfigError`]).
//!
//! A value is checked where it is read (a bad one in the file is reported at its line); a
//! rule that ties options together is checked once flags and file are merged
//! ([`check_runs`]), and [`ConfigFile::blame`] then finds the file's lines at fault.

mod error;
mod lines;
mod resolve;
mod sections;
mod values;

pub use error::ConfigError;
pub use lines::{OptionLine, at_fault, line_of, option_lines, read_toml_text};
pub use resolve::{
    RunFlags, check_ftl_options, check_runs, check_runs_blamed, device_spec, device_workload,
    ftl_options, listed_ftl_options, precondition, seed, trace_options, unused_ftl_options,
    unused_options, vet_variants, workload_spec,
};
pub use sections::{DeviceSection, FtlSection, RunSection, TraceSection, WorkloadSection, given};
pub use values::{
    Count, Fraction, HotSplit, OnOff, PATTERNS, Size, SizeList, SizeRange, WearSetting,
};

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The config file: one section per option group, with the flags' names.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigFile {
    /// `[device]`.
    pub device: DeviceSection,
    /// `[ftl]`.
    pub ftl: FtlSection,
    /// `[run]`.
    pub run: RunSection,
    /// `[workload]`.
    pub workload: WorkloadSection,
    /// `[trace]`.
    pub trace: TraceSection,
    /// Where the options came from, to say which lines an error is about.
    #[serde(skip)]
    origin: Option<Origin>,
}

/// A loaded config file: its path, its table, and each option's line.
#[derive(Debug)]
struct Origin {
    path: PathBuf,
    table: toml::Table,
    options: Vec<OptionLine>,
}

impl ConfigFile {
    /// The config file at `path`, or the empty one (every option at its default) without.
    pub fn load(path: Option<&Path>) -> Result<ConfigFile, ConfigError> {
        let Some(path) = path else {
            return Ok(ConfigFile::default());
        };
        let text = read_toml_text(path, "config file")?;
        let syntax = |error| ConfigError::Syntax {
            what: "config file",
            path: path.to_path_buf(),
            error: Box::new(error),
        };
        let mut file: ConfigFile = toml::from_str(&text).map_err(syntax)?;
        file.origin = Some(Origin {
            path: path.to_path_buf(),
            table: toml::from_str(&text).map_err(syntax)?,
            options: option_lines(&text, None),
        });
        Ok(file)
    }

    /// `error`, which `check` gave for this file (with the flags), with the lines of the
    /// file's options it is about: found by running `check` again without each option in
    /// turn. An option whose absence lets the check pass is at fault; failing that, one
    /// whose absence changes the error is part of it. A rule that ties two options together
    /// (`read_fraction + trim_fraction` above 1, a size and the alignment, a capacity and
    /// the page size) is only checked once flags and file are merged, where the error could
    /// name neither the file nor a line. An error no option of the file takes part in (the
    /// flags' own) is returned as it is.
    pub fn blame(
        &self,
        error: ConfigError,
        check: impl Fn(&ConfigFile) -> Result<(), ConfigError>,
    ) -> ConfigError {
        let Some(origin) = &self.origin else {
            return error;
        };
        let verdicts = origin.options.iter().filter_map(|option| {
            let without = self.without(option)?;
            let place = format!(
                "line {} ([{}] {})",
                option.line, option.section, option.written
            );
            Some((place, check(&without).err().map(|e| e.to_string())))
        });
        let lines = at_fault(&error.to_string(), verdicts);
        if lines.is_empty() {
            return error;
        }
        ConfigError::Blamed {
            path: origin.path.clone(),
            lines,
            error: Box::new(error),
        }
    }

    /// This file without `option` (as if that line were deleted), or `None` if it no
    /// longer reads (it cannot: every option is optional).
    fn without(&self, option: &OptionLine) -> Option<ConfigFile> {
        let mut table = self.origin.as_ref()?.table.clone();
        if let Some(toml::Value::Table(section)) = table.get_mut(&option.section) {
            section.remove(&option.key);
        }
        toml::Value::Table(table).try_into().ok()
    }
}

#[cfg(test)]
mod tests;
