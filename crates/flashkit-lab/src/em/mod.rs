//! External-memory algorithms under the flash models of Ajwani et al. (SEA 2009) as
//! experiments: the model's predictions ([`model`]), sorting real files ([`files`]),
//! sorting generated records on the simulator or an FTL ([`records`]), BFS and DFS on a
//! generated graph ([`graph`]), and the FTL under any of them ([`ftl`]). The disk probe is
//! [`crate::probe`].
//!
//! Each experiment takes a spec (a serde value with every field defaulted, as a front end
//! or a config file gives it) and returns a structured result: what the run measured, the
//! tables it prints as ([`flashkit_report::Table`]), its text ([`model::ModelReport::render`]
//! and the like) and its JSON document (the result's `Serialize`). Errors name the spec's
//! field at fault ([`LabError::Spec`]); progress goes to a [`flashkit_core::Progress`]
//! and a real disk's temporary files to a [`crate::temporaries::Temporaries`].

pub mod files;
pub mod ftl;
pub mod graph;
pub mod model;
pub mod records;

use crate::repro::LabError;
use flashkit_em::io::BlockSizes;
use flashkit_em::model::FlashModel;
use flashkit_em::record::RecordKind;
use serde::{Deserialize, Serialize};

pub use crate::probe::em_error;

/// Memory and block sizes, the flash model every em experiment runs under.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelParams {
    /// Internal memory `M`, bytes.
    pub memory: u64,
    /// Read block size `B_r`, bytes.
    pub br: u64,
    /// Write block size `B_w`, bytes.
    pub bw: u64,
    /// The general model's write penalty `c` (at least 1).
    pub c: f64,
}

impl Default for ModelParams {
    /// The paper's SSD: M = 512 MiB, B_r = 128 KiB, B_w = 16 MiB, c = 1.
    fn default() -> Self {
        ModelParams {
            memory: 512 << 20,
            br: 128 << 10,
            bw: 16 << 20,
            c: 1.0,
        }
    }
}

impl ModelParams {
    /// The model, or why these parameters make none.
    pub fn model(&self) -> Result<FlashModel, LabError> {
        let sizes = BlockSizes::new(self.br, self.bw).map_err(em_error)?;
        FlashModel::new(self.memory, sizes, self.c).map_err(em_error)
    }
}

/// Bytes in GB (10^9 B), as the paper's tables print volumes: two decimals from 1 GB up,
/// three significant digits below, so that a small run's volumes do not all read 0.00.
pub fn gb(bytes: u64) -> String {
    let value = bytes as f64 / 1e9;
    if bytes == 0 || value >= 1.0 {
        return format!("{value:.2}");
    }
    let decimals = 2 + (-value.log10().floor()) as usize;
    format!("{value:.decimals$}")
}

/// Mebibytes with two decimals (simulated volumes are small).
pub fn mib(bytes: u64) -> String {
    format!("{:.2}", bytes as f64 / f64::from(1 << 20))
}

/// The bytes of `records` records of `kind`, or a spec error on `records` past 2^64.
pub fn records_bytes(records: u64, kind: RecordKind) -> Result<u64, LabError> {
    records.checked_mul(kind.bytes()).ok_or_else(|| {
        LabError::spec(
            "records",
            format!(
                "{records} of {} B each are more than 2^64 bytes",
                kind.bytes()
            ),
        )
    })
}

/// Serde for flashkit-em's enums, which serialize but do not deserialize: a spec reads
/// them under the names their reports write (and the command line's as aliases).
pub(crate) mod kinds {
    use flashkit_em::record::RecordKind;
    use flashkit_em::sort::FanIn;
    use flashkit_em::sort::files::{InputOrder, IoMode};
    use serde::{Deserialize, Serialize};

    /// [`RecordKind`]: `u32`, `u64`, `key-payload` (or `kv16`).
    #[derive(Serialize, Deserialize)]
    #[serde(remote = "RecordKind", rename_all = "kebab-case")]
    pub enum RecordKindDef {
        U32,
        U64,
        #[serde(alias = "kv16")]
        KeyPayload,
    }

    /// [`IoMode`]: `flash`, `read-blocks` (or `br`), `write-blocks` (or `bw`), `tl`.
    #[derive(Serialize, Deserialize)]
    #[serde(remote = "IoMode", rename_all = "kebab-case")]
    pub enum IoModeDef {
        Flash,
        #[serde(alias = "br")]
        ReadBlocks,
        #[serde(alias = "bw")]
        WriteBlocks,
        Tl,
    }

    /// [`FanIn`]: `read-blocks`, `write-blocks`, `model`, or `{ fixed = N }`.
    #[derive(Serialize, Deserialize)]
    #[serde(remote = "FanIn", rename_all = "kebab-case")]
    pub enum FanInDef {
        ReadBlocks,
        WriteBlocks,
        Model,
        Fixed(u64),
    }

    /// [`InputOrder`]: `random`, `sorted`, `reversed`, `equal`.
    #[derive(Serialize, Deserialize)]
    #[serde(remote = "InputOrder", rename_all = "kebab-case")]
    pub enum InputOrderDef {
        Random,
        Sorted,
        Reversed,
        Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small run's volumes read 0.00 GB, every one of them.
    #[test]
    fn small_volumes_keep_three_significant_digits() {
        let cases = [
            (0, "0.00"),
            (520_000, "0.000520"),
            (15_872, "0.0000159"),
            (50_000_000, "0.0500"),
            (994_000_000, "0.994"),
            (999_500_000, "1.000"),
            (1_000_000_000, "1.00"),
            (1_234_567_890, "1.23"),
            (548_000_000_000, "548.00"),
        ];
        for (bytes, shown) in cases {
            assert_eq!(gb(bytes), shown, "{bytes} B");
        }
    }

    #[test]
    fn bad_parameters_and_record_counts_are_the_specs_fault() {
        let bad = ModelParams {
            br: 3000,
            ..ModelParams::default()
        };
        assert!(matches!(bad.model(), Err(LabError::Config(_))));
        assert!(matches!(
            records_bytes(1 << 62, RecordKind::U32),
            Err(LabError::Spec {
                field: "records",
                ..
            })
        ));
        assert_eq!(records_bytes(10, RecordKind::KeyPayload).ok(), Some(160));
    }
}
