//! One module per subcommand.

pub mod bench;
pub mod compare;
pub mod em;
pub mod em_ftl;
pub mod em_graph;
pub mod em_probe;
pub mod em_sim;
pub mod index;
pub mod replay;
pub mod report;
pub mod reproduce;
pub mod sweep;
pub mod trace;
pub mod trace_tools;

use crate::failure::Outcome;
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
    let mut nor = Table::new([
        "NOR preset",
        "word",
        "block",
        "capacity",
        "word read",
        "word write",
        "erase",
        "endurance",
    ]);
    for p in flashkit_device::NorPreset::ALL {
        nor.push([
            p.name.to_string(),
            "2B".to_string(),
            format_size(u64::from(p.words_per_block) * 2),
            format_size(u64::from(p.capacity_words) * 2),
            format!("{} ns", p.timing.read_ns),
            format!("{} us", p.timing.program_ns / 1000),
            format!("{} ms", p.timing.erase_ns / 1_000_000),
            p.endurance_cycles.to_string(),
        ]);
    }
    print!("{}", nor.render());
    println!();
    for p in flashkit_device::NorPreset::ALL {
        println!("{}: {}\n", p.name, p.source);
    }
    Ok(())
}

/// The cores this process may use (1 when the system cannot tell).
pub use flashkit_lab::exec::cores;
