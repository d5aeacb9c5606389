//! flashkit-report: turning results into things people read.
//!
//! - [`Table`]: aligned text for a terminal (numbers right-aligned, large integers grouped in
//!   thousands) or CSV with the raw values.
//! - [`plot`]: line charts (optionally stepped, for CDFs) and bar charts as SVG, drawn with
//!   plotters: axes labelled with units, legends, markers that survive grayscale printing,
//!   log axes chosen automatically when the data spans decades.
//! - [`html`]: one self-contained HTML page (inline CSS, inline SVG, a few lines of inline
//!   script to sort tables) that opens without network access.
//! - [`png`]: the same figures as PNG, rasterised with resvg.
//!
//! What this layer is not: it knows nothing of FTLs or runs; callers hand it strings and
//! numbers. Key decision: a table holds raw cell text and only the text renderer decorates it,
//! so the CSV of a table is exactly the values, machine-readable, with nothing to strip.

pub mod html;
pub mod plot;
pub mod png;
mod table;

pub use table::Table;
