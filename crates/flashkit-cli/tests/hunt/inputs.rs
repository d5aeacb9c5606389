//! The texts the trace hunt mutates: a window of every excerpt in `../shared/traces/` (read
//! from there, never copied into the repository), and small fio v2, fio v3 and generic-CSV
//! logs written here from the seed (no excerpts of those exist).

use flashkit_trace::formats::Format;
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Lines of an excerpt the hunt keeps: enough for every kind of line, small enough that a
/// few thousand mutants read in seconds.
const WINDOW_LINES: usize = 400;

/// Lines of blkparse's closing summary block appended to its window.
const SUMMARY_LINES: usize = 120;

/// One text to mutate.
pub struct Input {
    /// Where it comes from: the excerpt's path under `shared/traces`, or "synthetic ...".
    pub name: String,
    /// The format detection must find.
    pub format: Format,
    pub text: Vec<u8>,
}

pub fn shared_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ))
}

/// Every excerpt in the shared folder, or none (with a message; a failure under CI=true)
/// when the folder is not there.
pub fn shared() -> Vec<Input> {
    let dir = shared_dir();
    if !dir.is_dir() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI: the shared trace excerpts {} are missing",
            dir.display()
        );
        eprintln!(
            "skipping the shared-trace part of the hunt: {} is not here",
            dir.display()
        );
        return Vec::new();
    }
    let mut inputs = Vec::new();
    for folder in sorted_entries(&dir).into_iter().filter(|p| p.is_dir()) {
        let name = folder_name(&folder);
        let Some(format) = folder_format(&name) else {
            eprintln!(
                "hunt: no model of the traces in {}: not mutated",
                folder.display()
            );
            continue;
        };
        for file in sorted_entries(&folder).into_iter().filter(|p| p.is_file()) {
            let relative = format!("{name}/{}", folder_name(&file));
            inputs.push(Input {
                text: window(format, &read_text(&file)),
                name: relative,
                format,
            });
        }
    }
    inputs
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("the shared traces folder lists")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    entries
}

fn folder_name(path: &Path) -> String {
    path.file_name()
        .expect("a named entry")
        .to_string_lossy()
        .into_owned()
}

/// The format of each folder's excerpts (the README's table).
fn folder_format(folder: &str) -> Option<Format> {
    Some(match folder {
        "msr" => Format::Msr,
        "spc" => Format::Spc,
        "fiu" => Format::Fiu,
        "blkparse" => Format::Blkparse,
        "systor" => Format::Systor,
        "tencent" => Format::Tencent,
        "cloudphysics" => Format::CloudPhysics,
        "disksim" => Format::DiskSim,
        _ => return None,
    })
}

/// A file's text, decompressed if it is gzip (by signature, as flashkit reads it).
fn read_text(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).expect("an excerpt reads");
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes;
    }
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&bytes[..])
        .read_to_end(&mut text)
        .expect("an excerpt decompresses");
    text
}

/// The first [`WINDOW_LINES`] lines, and for blkparse the summary block that ends the
/// file, each line ending in a newline.
fn window(format: Format, text: &[u8]) -> Vec<u8> {
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .collect();
    let mut kept: Vec<&[u8]> = lines.iter().take(WINDOW_LINES).copied().collect();
    if format == Format::Blkparse {
        let summary = lines.iter().skip(WINDOW_LINES).position(|l| {
            let first = l.split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty());
            first.is_some_and(|w| w.starts_with(b"CPU") || w == b"Total")
        });
        if let Some(at) = summary {
            let from = WINDOW_LINES + at;
            kept.extend(lines[from..].iter().take(SUMMARY_LINES));
        }
    }
    while kept.last().is_some_and(|l| l.is_empty()) {
        kept.pop();
    }
    let mut out = Vec::new();
    for line in kept {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

/// The logs written here: fio v2 and v3 iologs and two generic CSVs.
pub fn synthetic(rng: &mut ChaCha8Rng) -> Vec<Input> {
    vec![
        Input {
            name: "synthetic fio v2 iolog".into(),
            format: Format::FioV2,
            text: fio_v2(rng).into_bytes(),
        },
        Input {
            name: "synthetic fio v3 iolog".into(),
            format: Format::FioV3,
            text: fio_v3(rng).into_bytes(),
        },
        Input {
            name: "synthetic generic CSV (sectors, us)".into(),
            format: Format::Csv,
            text: csv_with_units(rng).into_bytes(),
        },
        Input {
            name: "synthetic generic CSV (bytes)".into(),
            format: Format::Csv,
            text: csv_plain(rng).into_bytes(),
        },
    ]
}

const IO_LINES: usize = 60;

fn io_action(rng: &mut ChaCha8Rng) -> &'static str {
    ["read", "write", "write", "trim", "sync", "datasync"]
        .choose(rng)
        .copied()
        .expect("a non-empty list")
}

fn io_numbers(action: &str, rng: &mut ChaCha8Rng) -> (u64, u64) {
    if action.ends_with("sync") {
        return (0, 0);
    }
    let length = [512u64, 4096, 8192, 65536]
        .choose(rng)
        .copied()
        .unwrap_or(4096);
    (rng.random_range(0..100_000u64) * 512, length)
}

/// `fio --write_iolog` before 3.31: two files, waits between requests.
fn fio_v2(rng: &mut ChaCha8Rng) -> String {
    let files = ["/dev/sdb", "/dev/sdc"];
    let mut text = String::from("fio version 2 iolog\n");
    for file in files {
        text.push_str(&format!("{file} add\n{file} open\n"));
    }
    for _ in 0..IO_LINES {
        let file = files.choose(rng).copied().unwrap_or(files[0]);
        if rng.random_bool(0.15) {
            text.push_str(&format!("{file} wait {} 0\n", rng.random_range(1..5000)));
            continue;
        }
        let action = io_action(rng);
        let (offset, length) = io_numbers(action, rng);
        text.push_str(&format!("{file} {action} {offset} {length}\n"));
    }
    for file in files {
        text.push_str(&format!("{file} close\n"));
    }
    text
}

/// `fio --write_iolog` 3.31 and later: a microsecond timestamp on every line.
fn fio_v3(rng: &mut ChaCha8Rng) -> String {
    let file = "/tmp/fio.data";
    let mut text = format!("fio version 3 iolog\n0 {file} add\n3 {file} open\n");
    let mut us = 10u64;
    for _ in 0..IO_LINES {
        us += rng.random_range(0..400);
        let action = io_action(rng);
        let (offset, length) = io_numbers(action, rng);
        text.push_str(&format!("{us} {file} {action} {offset} {length}\n"));
    }
    text.push_str(&format!("{} {file} close\n", us + 1));
    text
}

/// Columns in an unusual order, with units, a volume and an ignored column.
fn csv_with_units(rng: &mut ChaCha8Rng) -> String {
    let mut text = String::from(
        "# written by the flashkit hunt\ntime_us,op,offset_sectors,size,volume,_note\n",
    );
    let mut tenths = 0u64;
    for i in 0..IO_LINES {
        tenths += rng.random_range(0..100);
        let op = ["read", "write", "trim", "r", "W", "discard"]
            .choose(rng)
            .copied()
            .unwrap_or("read");
        let size = [512u64, 4096, 16384].choose(rng).copied().unwrap_or(512);
        text.push_str(&format!(
            "{}.{},{op},{},{size},{},note {i}\n",
            tenths / 10,
            tenths % 10,
            rng.random_range(0..1_000_000u64),
            rng.random_range(0..4u16)
        ));
        if i % 20 == 19 {
            text.push_str("# a comment between rows\n");
        }
    }
    text
}

/// The three required columns only, in bytes.
fn csv_plain(rng: &mut ChaCha8Rng) -> String {
    let mut text = String::from("op,offset,size\n");
    for _ in 0..IO_LINES {
        let op = ["read", "write", "trim"]
            .choose(rng)
            .copied()
            .unwrap_or("read");
        text.push_str(&format!(
            "{op},{},{}\n",
            rng.random_range(0..1u64 << 40),
            rng.random_range(0..1u32 << 20)
        ));
    }
    text
}
