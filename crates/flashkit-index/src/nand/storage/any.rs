//! The storage scheme chosen at run time: an enum over [`Ipl`] and [`Grr`] that is itself a
//! [`Placement`], for the CLI's `--structure ipl|grr` and the reproduction's mixed sweeps.
//!
//! What it is not: a third scheme. Every method forwards to the chosen policy.
//!
//! Key decision: generic inside, enum at the edge: the tree and the store stay generic over
//! `P: Placement`, so tests and library users pay no dispatch; only the CLI names this type.

use super::grr::Grr;
use super::ipl::Ipl;
use super::{BlockView, MergeShape, Overflow, Placement, SetShape, SetView, StoreView};
use serde::Serialize;

/// The placement policy chosen at run time (the CLI's `--structure ipl|grr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "scheme", rename_all = "lowercase")]
pub enum AnyPlacement {
    /// In-Page Logging.
    Ipl(Ipl),
    /// GRR.
    Grr(Grr),
}

impl AnyPlacement {
    /// The scheme and its parameters, e.g. `grr m=8 k=4 l=8`.
    pub fn describe(&self) -> String {
        match self {
            AnyPlacement::Ipl(p) => format!("ipl k={}", p.log_pages),
            AnyPlacement::Grr(p) => format!(
                "grr m={} k={} l={}{}",
                p.blocks_per_set,
                p.log_pages,
                p.log_limit,
                if p.adaptive { " adaptive" } else { "" }
            ),
        }
    }
}

impl Placement for AnyPlacement {
    fn name(&self) -> &'static str {
        match self {
            AnyPlacement::Ipl(p) => p.name(),
            AnyPlacement::Grr(p) => p.name(),
        }
    }

    fn new_set(&self, view: &StoreView) -> SetShape {
        match self {
            AnyPlacement::Ipl(p) => p.new_set(view),
            AnyPlacement::Grr(p) => p.new_set(view),
        }
    }

    fn place(&self, set: &SetView<'_>) -> Option<usize> {
        match self {
            AnyPlacement::Ipl(p) => p.place(set),
            AnyPlacement::Grr(p) => p.place(set),
        }
    }

    fn on_log_full(&self, block: &BlockView) -> Overflow {
        match self {
            AnyPlacement::Ipl(p) => p.on_log_full(block),
            AnyPlacement::Grr(p) => p.on_log_full(block),
        }
    }

    fn merge_shape(&self, block: &BlockView, reason: Overflow, view: &StoreView) -> MergeShape {
        match self {
            AnyPlacement::Ipl(p) => p.merge_shape(block, reason, view),
            AnyPlacement::Grr(p) => p.merge_shape(block, reason, view),
        }
    }
}
