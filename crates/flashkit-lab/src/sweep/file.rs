//! The sweep file: its `[base]` (a config file's sections) and its `[grid]`, each key and
//! value checked where it is read, so that an error names its line.

use crate::config::{ConfigFile, line_of};
use flashkit_ftl::FtlKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A sweep file as read: its name, its workers, the base config and the grid.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SweepFile {
    pub(super) name: Option<String>,
    #[serde(default, deserialize_with = "workers")]
    pub(super) jobs: Option<usize>,
    #[serde(default)]
    pub(super) base: toml::Table,
    grid: toml::Table,
}

/// `jobs` in a sweep file: at least one worker, refused at its line.
fn workers<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    match usize::deserialize(d)? {
        0 => Err(serde::de::Error::custom(
            "jobs is 0; a sweep needs at least one worker",
        )),
        jobs => Ok(Some(jobs)),
    }
}

/// One grid dimension: its name (the cell parameter), how and where the file gives it, and
/// its values, each with its line.
pub(super) struct Dimension {
    pub(super) name: String,
    /// How the file spells it: `"device.op" in [grid]`, `op in [grid.device]`.
    pub(super) spelt: String,
    pub(super) line: usize,
    pub(super) values: Vec<(toml::Value, usize)>,
}

/// Grid dimensions in key order.
pub(super) type Grid = Vec<Dimension>;

/// A key as it would be written in its table: quoted if it holds a dot.
fn key_text(key: &str) -> String {
    if key.contains('.') || key.is_empty() {
        format!("{key:?}")
    } else {
        key.to_string()
    }
}

/// A parsed value without its spans.
fn plain(value: &Spanned<DeValue<'_>>) -> Result<toml::Value, String> {
    toml::Value::deserialize(toml::de::ValueDeserializer::from(value.clone()))
        .map_err(|e| e.message().to_string())
}

/// The setting a grid key names: a grid `seed` is `run.seed`.
fn setting(name: &str) -> &str {
    if name == "seed" { "run.seed" } else { name }
}

/// The grid's dimensions, from the parsed `table` under `[grid]` (`path` the tables between),
/// each checked against the options it sets. A setting given twice (`"device.op"` beside
/// `[grid.device] op`, `seed` beside `run.seed`) is refused naming both.
fn flatten(text: &str, path: &[String], table: &DeTable<'_>, out: &mut Grid) -> Result<(), String> {
    let here = path
        .iter()
        .map(|p| format!(".{}", key_text(p)))
        .collect::<String>();
    for (key, value) in table.iter() {
        let line = line_of(text, key.span());
        let mut inner = path.to_vec();
        inner.push(key.get_ref().to_string());
        let name = inner.join(".");
        let spelt = format!("{} in [grid{here}]", key_text(key.get_ref()));
        let values = match value.get_ref() {
            DeValue::Table(table) if table.is_empty() => {
                return Err(format!(
                    "line {line}: [grid{here}.{}] has no keys",
                    key_text(key.get_ref())
                ));
            }
            DeValue::Table(table) => {
                flatten(text, &inner, table, out)?;
                continue;
            }
            DeValue::Array(values) if values.is_empty() => {
                return Err(format!("line {line}: grid key {name} has no values"));
            }
            DeValue::Array(values) => values
                .iter()
                .map(|v| Ok((plain(v)?, line_of(text, v.span()))))
                .collect::<Result<Vec<_>, String>>()?,
            _ => vec![(plain(value)?, line_of(text, value.span()))],
        };
        if let Some(first) = out.iter().find(|d| setting(&d.name) == setting(&name)) {
            let (a, b) = if first.line <= line {
                ((&first.spelt, first.line), (&spelt, line))
            } else {
                ((&spelt, line), (&first.spelt, first.line))
            };
            let alias = if first.name == name {
                String::new()
            } else {
                " (a grid seed is run.seed)".to_string()
            };
            return Err(format!(
                "line {} ({}) and line {} ({}) both set {}{alias}: keep one",
                a.1,
                a.0,
                b.1,
                b.0,
                setting(&name)
            ));
        }
        let dimension = Dimension {
            name,
            spelt,
            line,
            values,
        };
        check_dimension(&dimension)?;
        out.push(dimension);
    }
    Ok(())
}

/// Refuse a grid key that is no setting, or a value its setting cannot take, naming the
/// line: otherwise the error would come later, naming a cell.
fn check_dimension(dimension: &Dimension) -> Result<(), String> {
    let name = &dimension.name;
    for (value, line) in &dimension.values {
        match name.as_str() {
            "ftl" => {
                value_text(value)
                    .parse::<FtlKind>()
                    .map_err(|e| format!("line {line}: grid ftl: {e}"))?;
            }
            "seed" => {
                seed_of(value).map_err(|e| format!("line {line}: {e}"))?;
            }
            "trace" => {
                if !value.is_str() {
                    return Err(format!(
                        "line {line}: grid trace {value} is neither \"builtin\" nor a file name \
                         (a string)"
                    ));
                }
            }
            dotted => {
                let Some((section, option)) = dotted.split_once('.') else {
                    return Err(format!(
                        "line {}: grid key {dotted:?} is neither ftl, trace, seed nor \
                         section.option",
                        dimension.line
                    ));
                };
                check_option(section, Some((option, value)))
                    .map_err(|e| format!("line {line}: grid key {dotted}: {e}"))?;
            }
        }
    }
    Ok(())
}

/// Whether a config file with `option = value` in `[section]` (or an empty `[section]`)
/// would be read: the error of the option alone, so that it can be given its line.
fn check_option(section: &str, option: Option<(&str, &toml::Value)>) -> Result<(), String> {
    let mut options = toml::Table::new();
    if let Some((option, value)) = option {
        options.insert(option.to_string(), value.clone());
    }
    let mut file = toml::Table::new();
    file.insert(section.to_string(), toml::Value::Table(options));
    toml::Value::Table(file)
        .try_into::<ConfigFile>()
        .map(drop)
        .map_err(|e| e.message().to_string())
}

/// Refuse a `[base]` section or option that a config file could not hold, naming its line.
fn check_base(text: &str, base: &Spanned<DeValue<'_>>) -> Result<(), String> {
    let DeValue::Table(sections) = base.get_ref() else {
        return Err(format!(
            "line {}: base is not a table of sections",
            line_of(text, base.span())
        ));
    };
    for (section, options) in sections.iter() {
        let line = line_of(text, section.span());
        let name = key_text(section.get_ref());
        let DeValue::Table(options) = options.get_ref() else {
            let value = plain(options)?;
            let mut file = toml::Table::new();
            file.insert(section.get_ref().to_string(), value);
            let e = toml::Value::Table(file)
                .try_into::<ConfigFile>()
                .err()
                .map_or_else(|| "not a table".to_string(), |e| e.message().to_string());
            return Err(format!("line {line}: base.{name}: {e}"));
        };
        check_option(section.get_ref(), None)
            .map_err(|e| format!("line {line}: base.{name}: {e}"))?;
        for (option, value) in options.iter() {
            let line = line_of(text, option.span());
            let value = plain(value)?;
            check_option(section.get_ref(), Some((option.get_ref(), &value))).map_err(|e| {
                format!(
                    "line {line}: base.{name}.{}: {e}",
                    key_text(option.get_ref())
                )
            })?;
        }
    }
    Ok(())
}

/// A grid seed: a non-negative integer.
pub(super) fn seed_of(value: &toml::Value) -> Result<u64, String> {
    value
        .as_integer()
        .and_then(|s| u64::try_from(s).ok())
        .ok_or_else(|| format!("grid seed {value} is not a non-negative integer"))
}

/// A grid value as a cell parameter: a string without its quotes.
pub(super) fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every combination of the grid's values, as parameter maps.
pub(super) fn combinations(grid: &Grid) -> Vec<BTreeMap<String, toml::Value>> {
    let mut cells = vec![BTreeMap::new()];
    for dimension in grid {
        let mut next = Vec::with_capacity(cells.len() * dimension.values.len());
        for cell in &cells {
            for (value, _) in &dimension.values {
                let mut extended = cell.clone();
                extended.insert(dimension.name.clone(), value.clone());
                next.push(extended);
            }
        }
        cells = next;
    }
    cells
}

/// The grid of a sweep file, its `[base]` checked too: every error about a key or a value
/// names its line.
pub(super) fn grid_of(text: &str, file: &SweepFile) -> Result<Grid, String> {
    let doc = DeTable::parse(text).map_err(|e| e.to_string())?;
    let doc = doc.get_ref();
    let section = |name: &str| doc.iter().find(|(key, _)| key.get_ref() == name);
    if let Some((_, base)) = section("base") {
        check_base(text, base)?;
    }
    let mut grid = Grid::new();
    if let Some((key, table)) = section("grid") {
        let DeValue::Table(table) = table.get_ref() else {
            return Err(format!(
                "line {}: grid is not a table",
                line_of(text, key.span())
            ));
        };
        flatten(text, &[], table, &mut grid)?;
    }
    // An empty grid would make one cell with an empty id, which nothing could name.
    if file.grid.is_empty() || grid.is_empty() {
        return Err(
            "[grid] has no keys: a sweep needs at least one (for a single run, one value, such \
             as ftl = [\"page\"])"
                .to_string(),
        );
    }
    Ok(grid)
}
