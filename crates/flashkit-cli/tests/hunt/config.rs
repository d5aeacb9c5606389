//! Config-file and sweep-file mutants, and what each must do when `hunt/cli.rs` runs it: a
//! base file setting keys of every section (tiny runs), each key's value made the wrong
//! type, empty or out of range, keys and sections added, doubled, misspelt, the file cut
//! and noised.

use crate::cli;
use crate::harness::{Hunt, Tally};
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;

/// How a value must be taken: refused, or either taken or refused (its range is a matter of
/// judgement: zero over-provisioning, a Zipf exponent of 1).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Range {
    Refuse,
    Either,
}
use Range::{Either, Refuse};

/// The TOML types a key takes, which decide its wrong-type mutants.
#[derive(Clone, Copy)]
enum Type {
    /// A size or count: a string (`"64M"`) or an integer.
    SizeOrCount,
    Text,
    /// A list, or one string or value (`gc = "greedy"`).
    List,
    Float,
    Integer,
    Bool,
    /// `on`/`off` or a boolean.
    OnOff,
    /// A number or `"off"`.
    Wear,
    /// A grid dimension: an array of values.
    Grid,
}

/// Values of the wrong type for a key (as TOML).
fn wrong_types(kind: Type) -> &'static [&'static str] {
    match kind {
        Type::SizeOrCount => &["true", "1.5", "[1]", "{ a = 1 }"],
        Type::Text => &["1", "true", "[\"x\"]", "{ a = 1 }"],
        Type::List => &["1", "true", "{ a = 1 }"],
        Type::Float => &["\"0.5\"", "true", "[0.5]", "{ a = 1 }"],
        Type::Integer => &["\"4\"", "1.5", "true", "[1]", "{ a = 1 }"],
        Type::Bool => &["\"true\"", "1", "[true]", "{ a = 1 }"],
        Type::OnOff => &["1", "[true]", "{ a = 1 }"],
        Type::Wear => &["true", "1.5", "[1]", "{ a = 1 }"],
        Type::Grid => &["{ a = 1 }", "[{ a = 1 }]", "[[1]]"],
    }
}

/// One key of a base file: how it is written, its type, values out of its range, the
/// workload pattern that uses it and the FTL to run so that it is used.
struct Key {
    section: String,
    name: String,
    value: String,
    kind: Type,
    ranges: Vec<(String, Range)>,
    pattern: Option<String>,
    ftl: String,
}

/// A `--config` file that sets keys of every section, with tiny run sizes, as a table (the
/// run's size first, so that a file cut anywhere after it still runs briefly, and a device
/// cut to `endurance = 30` is not worn out by a default run of 300k requests):
/// section | key | value | type | values out of range (`!` must be refused, `?` may be
/// taken) | what uses the key (`pattern P`: the workload pattern to set; `ftl F`: the FTL
/// to run).
const CONFIG: &str = r#"
run      | no_precondition  | true           | bool  |
run      | seed             | 3              | int   | !-1; !18446744073709551616
workload | requests         | "2k"           | size  | !-1; !"x"; ?"0"
workload | workload         | "zipf"         | text  | !"nope"
workload | theta            | 0.9            | float | !-1; !nan; !inf; ?0; ?1
workload | hot              | "80/20"        | text  | !"120/10"; !"80:20"; !"-5/50" | pattern hot-cold
workload | center           | 0.5            | float | !-1; !2; !nan; !inf | pattern gaussian
workload | stddev           | 0.1            | float | !-1; !nan; !inf; ?0 | pattern gaussian
workload | sizes            | "4K:70,16K:30" | text  | !"4K:x"; !"5G"; ?"0"; ?"4K:0"
workload | read_sizes       | "4K:1"         | text  | !"4K:x"; !"5G"; ?"0"
workload | read_fraction    | 0.3            | float | !1.5; !-0.1; !nan; !inf; !1
workload | trim_fraction    | 0.01           | float | !1.5; !-0.1; !nan; !0.99
workload | span             | "32M"          | size  | !"0"; !-1; ?"1P"
workload | align            | "4K"           | size  | !"0"; !-1; ?"3"
workload | interarrival_ns  | 100            | int   | !-1
workload | file_size        | "2M-4M"        | size  | !"0"; !-1; !"4M-2M"; !"2M-"; !"1000"; !"64M" | pattern camera
workload | chunk_size       | "64K"          | size  | !"0"; !"5G"; !"6K" | pattern camera
workload | cluster_size     | "4K"           | size  | !"0"; !"5G"; !"3K"; !"12K" | pattern camera
workload | data_align       | "16K"          | size  | !"0"; !"1000"; ?"32M" | pattern camera
device   | capacity         | "64M"          | size  | !"0"; !0; !"1P"; !-1; !"4097"
device   | preset           | "mlc-4k"       | text  | !"nope"
device   | op               | 0.1            | float | !100; !-1; !nan; !inf; ?0
device   | page_size        | "4K"           | size  | !"0"; !"1P"; !"4G"; ?"3000"
device   | pages_per_block  | 64             | int   | !0; !-1; !4294967296; ?1
device   | endurance        | 3000           | int   | !0; !-1
ftl      | gc               | "greedy"       | list  | !"nope"; !["greedy", "nope"]; ?[]
ftl      | gc_threshold     | 4              | int   | !0; !1; !-1
ftl      | wear_leveling    | 100            | wear  | !"x"; !-1; ?0
ftl      | log_blocks       | 8              | int   | !0; !-1 | ftl fast
ftl      | sw_log_block     | "on"           | onoff | !"x" | ftl fast
ftl      | full_sw          | "switch"       | text  | !"nope"; !"on" | ftl fast
ftl      | vet_insert       | "bis"          | list  | !"nope" | ftl vet
ftl      | vet_nodes        | "pf"           | list  | !"nope" | ftl vet
ftl      | vet_table        | "cuckoo"       | list  | !"nope" | ftl vet
ftl      | vet_search       | "paper"        | list  | !"nope" | ftl vet
trace    | format           | "csv"          | text  | !"nope"
trace    | asu              | 0              | int   | !65536; !-1
trace    | skip_bad_lines   | true           | bool  |
trace    | sort_by_time     | false          | bool  |
trace    | time_unit        | "us"           | text  | !"nope"
trace    | blkparse_event   | "D"            | text  | !"nope"
trace    | address_map      | "compact"      | text  | !"nope"
trace    | explain_format   | false          | bool  |
"#;

/// A sweep file like examples/sweep-gc.toml, tiny: 8 cells of 2k requests on 64 MiB. A
/// sweep's name is a label, so an empty one may be taken (`""` is tried on every key).
const SWEEP: &str = r#"
              | name            | "hunt"               | text  |
              | jobs            | 1                    | int   | !0; !-1; ?2
base.device   | capacity        | "64M"                | size  | !"0"; !"1P"
base.device   | preset          | "mlc-4k"             | text  | !"nope"
base.device   | endurance       | 3000                 | int   | !0; !-1
base.run      | no_precondition | true                 | bool  |
base.workload | requests        | "2k"                 | size  | !-1
base.workload | workload        | "uniform"            | text  | !"nope"
base.workload | read_fraction   | 0.3                  | float | !1.5; !-0.1; !nan; !inf
base.ftl      | gc_threshold    | 4                    | int   | !1
grid          | ftl             | ["page"]             | grid  | !["pag"]; ![]; ![1]
grid          | seed            | [1, 2]               | grid  | ![-1]; !["x"]; ![1.5]
grid          | "ftl.gc"        | ["greedy", "fifo"]   | grid  | !["nope"]; ![1]; !["greedy,fifo"]
grid.device   | op              | [0.1, 0.2]           | grid  | ![100]; ![-1]; !["x"]; ![nan]
"#;

fn parse_type(name: &str) -> Type {
    match name {
        "size" => Type::SizeOrCount,
        "text" => Type::Text,
        "list" => Type::List,
        "float" => Type::Float,
        "int" => Type::Integer,
        "bool" => Type::Bool,
        "onoff" => Type::OnOff,
        "wear" => Type::Wear,
        "grid" => Type::Grid,
        other => panic!("invariant: no key type {other:?} in the tables"),
    }
}

/// The keys of a table above, in order.
fn parse_keys(table: &str) -> Vec<Key> {
    let mut keys = Vec::new();
    for row in table.lines().filter(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let ranges = cells[4]
            .split(';')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| match v.split_at(1) {
                ("!", value) => (value.to_string(), Refuse),
                (_, value) => (value.to_string(), Either),
            })
            .collect();
        let used = cells.get(5).copied().unwrap_or("");
        keys.push(Key {
            section: cells[0].to_string(),
            name: cells[1].to_string(),
            value: cells[2].to_string(),
            kind: parse_type(cells[3]),
            ranges,
            pattern: used.strip_prefix("pattern ").map(str::to_string),
            ftl: used.strip_prefix("ftl ").unwrap_or("page").to_string(),
        });
    }
    keys
}

/// What a run must do.
#[derive(Clone)]
pub enum Want {
    /// Exit 0.
    Valid,
    /// Exit 2 naming the file, one of `lines` (none for a missing key, which is on no
    /// line) and the key (when it can be told: a cut `[` names none).
    Refused {
        lines: Vec<usize>,
        key: Option<String>,
    },
    /// Exit 0, or exit 2 as `Refused`.
    Either {
        lines: Vec<usize>,
        key: Option<String>,
    },
    /// Exit 0, or exit 2 naming the file and a line of it.
    Noise,
    /// Any of these.
    OneOf(Vec<Want>),
}

fn refused(line: usize, key: &str) -> Want {
    Want::Refused {
        lines: vec![line],
        key: Some(word(key)),
    }
}

fn missing(key: &str) -> Want {
    Want::Refused {
        lines: Vec::new(),
        key: Some(key.to_string()),
    }
}

/// A base file rendered: its lines, and where each key and section is.
struct Doc {
    lines: Vec<String>,
    /// Every key, with the index of its line.
    keys: Vec<(Key, usize)>,
    /// Every section with a header, with the index of its header.
    sections: Vec<(String, usize)>,
}

fn render(table: &str) -> Doc {
    let mut doc = Doc {
        lines: Vec::new(),
        keys: Vec::new(),
        sections: Vec::new(),
    };
    for key in parse_keys(table) {
        let new_section = doc
            .keys
            .last()
            .is_none_or(|(k, _)| k.section != key.section);
        if new_section && !doc.lines.is_empty() {
            doc.lines.push(String::new());
        }
        if new_section && !key.section.is_empty() {
            doc.sections.push((key.section.clone(), doc.lines.len()));
            doc.lines.push(format!("[{}]", key.section));
        }
        doc.lines.push(format!("{} = {}", key.name, key.value));
        doc.keys.push((key, doc.lines.len() - 1));
    }
    doc
}

impl Doc {
    fn text(lines: &[String]) -> Vec<u8> {
        let mut text = lines.join("\n").into_bytes();
        text.push(b'\n');
        text
    }

    /// The lines with `key`'s value replaced (and the workload pattern set to the one
    /// that uses the key).
    fn with_value(&self, key: &Key, line: usize, value: &str) -> Vec<String> {
        let mut lines = self.lines.clone();
        lines[line] = format!("{} = {value}", key.name);
        if let Some(pattern) = &key.pattern {
            let (_, at) = self
                .keys
                .iter()
                .find(|(k, _)| k.name == "workload")
                .expect("a workload key");
            lines[*at] = format!("workload = \"{pattern}\"");
        }
        lines
    }
}

/// One run of the binary on a mutated file.
pub struct Case {
    pub class: &'static str,
    /// The key or section mutated, to group failures by.
    pub subject: String,
    pub what: String,
    pub text: Vec<u8>,
    pub want: Want,
    /// The FTL `compare` runs (one that uses the key mutated).
    pub ftl: String,
}

/// A key's name as messages give it (`ftl.gc`, not `"ftl.gc"`).
fn word(name: &str) -> String {
    name.trim_matches('"').to_string()
}

fn value_cases(doc: &Doc) -> Vec<Case> {
    let mut out = Vec::new();
    for (k, line) in &doc.keys {
        let (section, line) = (&k.section, *line);
        let mut values: Vec<(&'static str, &str, Range)> = wrong_types(k.kind)
            .iter()
            .map(|v| ("2 wrong type", *v, Refuse))
            .collect();
        // A sweep's name is a label: empty is a matter of taste.
        let empty = if k.name == "name" { Either } else { Refuse };
        values.push(("3 empty string", "\"\"", empty));
        values.extend(
            k.ranges
                .iter()
                .map(|(v, r)| ("4 out of range", v.as_str(), *r)),
        );
        for (class, value, range) in values {
            let want = match range {
                Refuse => refused(line + 1, &k.name),
                Either => Want::Either {
                    lines: vec![line + 1],
                    key: Some(word(&k.name)),
                },
            };
            out.push(Case {
                class,
                subject: word(&k.name),
                what: format!("[{section}] {} = {value} (line {})", k.name, line + 1),
                text: Doc::text(&doc.with_value(k, line, value)),
                want,
                ftl: k.ftl.clone(),
            });
        }
        if k.pattern.is_some() {
            out.push(Case {
                class: "1 base",
                subject: format!("workload {:?}", k.pattern),
                what: format!("the base with workload = {:?}", k.pattern),
                text: Doc::text(&doc.with_value(k, line, &k.value)),
                want: Want::Valid,
                ftl: k.ftl.clone(),
            });
        }
    }
    out
}

/// An unknown key (a misspelt one) and a key given twice, beside each key; the sections'
/// own mutants.
fn structure_cases(doc: &Doc) -> Vec<Case> {
    let mut out = Vec::new();
    for (k, line) in &doc.keys {
        let (section, line) = (&k.section, *line);
        let inserted = |text: String| {
            let mut lines = doc.lines.clone();
            lines.insert(line + 1, text);
            Doc::text(&lines)
        };
        let misspelt = format!("{}x", word(&k.name));
        out.push(Case {
            class: "5 unknown key",
            subject: word(&k.name),
            what: format!(
                "[{section}] {misspelt} = {} added at line {}",
                k.value,
                line + 2
            ),
            text: inserted(format!("{misspelt} = {}", k.value)),
            want: refused(line + 2, &misspelt),
            ftl: k.ftl.clone(),
        });
        out.push(Case {
            class: "6 key twice",
            subject: word(&k.name),
            what: format!("[{section}] {} given again at line {}", k.name, line + 2),
            text: inserted(format!("{} = {}", k.name, k.value)),
            want: refused(line + 2, &k.name),
            ftl: k.ftl.clone(),
        });
    }
    out.extend(section_cases(doc));
    out
}

/// Each section's name misspelt, and each section given again at the end.
fn section_cases(doc: &Doc) -> Vec<Case> {
    let mut out = Vec::new();
    for (section, line) in &doc.sections {
        let (section, line) = (section.as_str(), *line);
        let last = section.rsplit('.').next().unwrap_or(section);
        let misspelt = format!("{}{}", &last[..last.len() - 1], "z");
        let mut lines = doc.lines.clone();
        lines[line] = format!("[{}{misspelt}]", &section[..section.len() - last.len()]);
        out.push(Case {
            class: "7 section misspelt",
            subject: section.to_string(),
            what: format!("{} (line {})", lines[line], line + 1),
            text: Doc::text(&lines),
            // A sweep names a grid table's keys, on the lines after its header.
            want: Want::Refused {
                lines: vec![line + 1, line + 2],
                key: Some(misspelt),
            },
            ftl: "page".into(),
        });
        let mut lines = doc.lines.clone();
        lines.push(format!("[{section}]"));
        out.push(Case {
            class: "7 section twice",
            subject: section.to_string(),
            what: format!("[{section}] again at the end (line {})", lines.len()),
            want: refused(lines.len(), last),
            text: Doc::text(&lines),
            ftl: "page".into(),
        });
    }
    out
}

/// Cut at random bytes, and at random line ends (a prefix of whole lines is valid, but for
/// a sweep without a grid key).
fn truncation_cases(doc: &Doc, sweep: bool, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Case> {
    let text = Doc::text(&doc.lines);
    let mut out = Vec::new();
    for _ in 0..16 * scale {
        let at = rng.random_range(0..text.len());
        let cut = &text[..at];
        let whole = cut.iter().filter(|&&b| b == b'\n').count();
        let start = cut.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let partial = String::from_utf8_lossy(&cut[start..]).into_owned();
        out.push(Case {
            class: "8 truncated",
            subject: "truncation".into(),
            what: format!(
                "cut after byte {at} of {} (line {}: {partial:?})",
                text.len(),
                whole + 1
            ),
            text: cut.to_vec(),
            want: cut_want(doc, whole, &partial, sweep),
            ftl: "page".into(),
        });
    }
    for _ in 0..4 * scale {
        let lines = rng.random_range(0..=doc.lines.len());
        out.push(Case {
            class: "8 truncated",
            subject: "truncation".into(),
            what: format!("only the first {lines} lines"),
            text: Doc::text(&doc.lines[..lines]),
            want: prefix_want(doc, lines, sweep),
            ftl: "page".into(),
        });
    }
    out
}

/// A file cut inside line `whole + 1`, which holds `partial`: valid, or refused at that
/// line naming what is left of its key or section; for a sweep, also whatever the whole
/// lines before it, or them and the cut line taken whole, must do.
fn cut_want(doc: &Doc, whole: usize, partial: &str, sweep: bool) -> Want {
    if partial.trim().is_empty() {
        return prefix_want(doc, whole, sweep);
    }
    let name = partial.split('=').next().unwrap_or("").trim();
    let name = name.trim_matches(['[', ']', '"']);
    let key = name
        .rsplit('.')
        .next()
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    let cut = Want::Either {
        lines: vec![whole + 1],
        key,
    };
    if !sweep {
        return cut;
    }
    Want::OneOf(vec![
        cut,
        prefix_want(doc, whole, sweep),
        prefix_want(doc, whole + 1, sweep),
    ])
}

/// What the first `lines` whole lines must do: a config file of whole lines is valid; a
/// sweep needs a grid key, and a grid table that is not empty.
fn prefix_want(doc: &Doc, lines: usize, sweep: bool) -> Want {
    if !sweep {
        return Want::Valid;
    }
    let grid_keys = doc
        .keys
        .iter()
        .filter(|(k, l)| k.section.starts_with("grid") && *l < lines)
        .count();
    let last_header = doc.sections.iter().rfind(|(_, l)| *l < lines);
    let empty_table = last_header.filter(|(s, l)| {
        s.starts_with("grid.") && !doc.keys.iter().any(|(_, k)| k > l && *k < lines)
    });
    match (grid_keys, empty_table) {
        (0, _) => missing("grid"),
        (_, Some((section, l))) => refused(l + 1, section.rsplit('.').next().unwrap_or(section)),
        _ => Want::Valid,
    }
}

/// A few bytes replaced, inserted or deleted; the bytes are TOML's punctuation, blanks and
/// bytes that are not UTF-8, never letters or digits (which could make a valid but huge
/// value, a run that only looks hung).
fn noise_cases(doc: &Doc, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Case> {
    const BYTES: &[u8] = b"\"'=[]{},.#\n\t \\\x00\xff\xc3";
    let base = Doc::text(&doc.lines);
    let mut out = Vec::new();
    for _ in 0..16 * scale {
        let mut text = base.clone();
        let mut edits = Vec::new();
        for _ in 0..rng.random_range(1..=3) {
            let at = rng.random_range(0..text.len());
            let byte = *BYTES.choose(rng).expect("noise bytes");
            match rng.random_range(0..3) {
                0 => {
                    edits.push(format!("byte {at} {:?} := {byte:#04x}", text[at] as char));
                    text[at] = byte;
                }
                1 => {
                    edits.push(format!("{byte:#04x} inserted at {at}"));
                    text.insert(at, byte);
                }
                _ => {
                    edits.push(format!("byte {at} {:?} deleted", text[at] as char));
                    text.remove(at);
                }
            }
        }
        out.push(Case {
            class: "9 noise",
            subject: "noise".into(),
            what: edits.join(", then "),
            text,
            want: Want::Noise,
            ftl: "page".into(),
        });
    }
    out
}

fn cases(table: &str, sweep: bool, scale: usize, rng: &mut ChaCha8Rng) -> Vec<Case> {
    let doc = render(table);
    let mut all = vec![Case {
        class: "1 base",
        subject: "base".into(),
        what: "the base file".into(),
        text: Doc::text(&doc.lines),
        want: Want::Valid,
        ftl: "page".into(),
    }];
    all.extend(value_cases(&doc));
    all.extend(structure_cases(&doc));
    all.extend(truncation_cases(&doc, sweep, scale, rng));
    all.extend(noise_cases(&doc, scale, rng));
    all
}

pub fn hunt(hunt: &Hunt) {
    let mut tally = Tally::new("config and sweep files");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut rng = hunt.rng(3);
    let config = cases(CONFIG, false, hunt.scale, &mut rng);
    let sweep = cases(SWEEP, true, hunt.scale, &mut rng);
    let runs = config
        .iter()
        .map(|c| (c, false))
        .chain(sweep.iter().map(|c| (c, true)));
    for (serial, (case, is_sweep)) in runs.enumerate() {
        let outcome = cli::run(dir.path(), serial, case, is_sweep);
        let format = if is_sweep {
            "sweep file"
        } else {
            "config file"
        };
        tally.record(case.class, format, outcome);
    }
    tally.finish(hunt);
}
