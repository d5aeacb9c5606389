//! One module per subcommand.

pub mod bench;
pub mod compare;
pub mod em;
pub mod em_graph;
pub mod replay;
pub mod reproduce;
pub mod trace;

use crate::Outcome;
use flashkit_core::NandPreset;
use flashkit_core::units::format_size;
use flashkit_report::Table;

/// `flashkit presets`.
pub fn presets() -> Outcome {
    let mut table = Table::new([
        "preset",
        "page",
        "pages/block",
        "read",
        "program",
        "erase",
        "endurance",
    ]);
    for p in NandPreset::ALL {
        table.push([
            p.name.to_string(),
            format_size(u64::from(p.page_size_bytes)),
            p.pages_per_block.to_string(),
            format!("{} us", p.timing.read_ns / 1000),
            format!("{} us", p.timing.program_ns / 1000),
            format!("{} us", p.timing.erase_ns / 1000),
            p.endurance_cycles.to_string(),
        ]);
    }
    print!("{}", table.render());
    println!();
    for p in NandPreset::ALL {
        println!("{}: {}\n", p.name, p.source);
    }
    Ok(())
}
