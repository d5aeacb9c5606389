//! Where a TOML file's options are: their lines, for errors that name them.

use super::ConfigError;
use std::path::Path;

/// One option of a file: `[section] key` at `line`, as written (`key = value`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionLine {
    /// The section (`workload`).
    pub section: String,
    /// The key (`read_fraction`).
    pub key: String,
    /// The line, from 1.
    pub line: usize,
    /// The option as written, `key = value`.
    pub written: String,
}

/// The text of a TOML file (`what` names it in errors): TOML is UTF-8, and a byte that is
/// not is reported at its line and column (the error said only "stream did not contain
/// valid UTF-8").
pub fn read_toml_text(path: &Path, what: &'static str) -> Result<String, ConfigError> {
    let bytes = std::fs::read(path).map_err(|error| ConfigError::Read {
        what,
        path: path.to_path_buf(),
        error,
    })?;
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let at = error.utf8_error().valid_up_to();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        ConfigError::NotUtf8 {
            what,
            path: path.to_path_buf(),
            line: bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
            column: at - line_start + 1,
            byte: bytes[at],
        }
    })
}

/// The places at fault for an error whose text is `message`, from the check's verdict with
/// each place left out in turn (the error's text, or `None` if the check passed): those
/// whose absence lets the check pass; failing that, those whose absence changes the error
/// (the rule that ties options together, where removing one of them gives another error);
/// failing that, none.
pub fn at_fault(
    message: &str,
    verdicts: impl IntoIterator<Item = (String, Option<String>)>,
) -> Vec<String> {
    let verdicts: Vec<(String, Option<String>)> = verdicts.into_iter().collect();
    let passing: Vec<String> = verdicts
        .iter()
        .filter(|(_, error)| error.is_none())
        .map(|(place, _)| place.clone())
        .collect();
    if !passing.is_empty() {
        return passing;
    }
    verdicts
        .into_iter()
        .filter(|(_, error)| error.as_deref().is_some_and(|e| e != message))
        .map(|(place, _)| place)
        .collect()
}

/// Every `[section] key` of a config file with its line and text, in file order; with
/// `under`, of the sections in that table (a sweep file's `base`).
pub fn option_lines(text: &str, under: Option<&str>) -> Vec<OptionLine> {
    let Ok(document) = toml::de::DeTable::parse(text) else {
        return Vec::new();
    };
    let sections = match under {
        None => document.get_ref(),
        Some(name) => match document.get_ref().get(name).map(|v| v.get_ref()) {
            Some(toml::de::DeValue::Table(table)) => table,
            _ => return Vec::new(),
        },
    };
    let mut options = Vec::new();
    for (section, value) in sections.iter() {
        let toml::de::DeValue::Table(table) = value.get_ref() else {
            continue;
        };
        for (key, value) in table.iter() {
            let line = line_of(text, key.span());
            let written = text
                .get(key.span().start..value.span().end)
                .unwrap_or(key.get_ref())
                .to_string();
            options.push(OptionLine {
                section: section.get_ref().to_string(),
                key: key.get_ref().to_string(),
                line,
                written,
            });
        }
    }
    options.sort_by_key(|o| o.line);
    options
}

/// The line (from 1) of byte `span.start` of `text`.
pub fn line_of(text: &str, span: std::ops::Range<usize>) -> usize {
    let start = span.start.min(text.len());
    text.as_bytes()[..start]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_found_at_their_lines_in_file_order() {
        let text = "[workload]\nrequests = 5 # five\n\n[device]\ncapacity = \"1G\"\n";
        let options = option_lines(text, None);
        let found: Vec<(&str, &str, usize, &str)> = options
            .iter()
            .map(|o| (&*o.section, &*o.key, o.line, &*o.written))
            .collect();
        assert_eq!(
            found,
            [
                ("workload", "requests", 2, "requests = 5"),
                ("device", "capacity", 5, "capacity = \"1G\""),
            ]
        );
        let sweep = "name = \"x\"\n[base.ftl]\ngc = \"fifo\"\n[grid]\nftl = [\"page\"]\n";
        let base = option_lines(sweep, Some("base"));
        assert_eq!(base.len(), 1);
        assert_eq!((base[0].line, &*base[0].written), (3, "gc = \"fifo\""));
        assert!(option_lines("not = [toml", None).is_empty());
    }

    #[test]
    fn the_places_at_fault_are_those_whose_absence_passes_else_changes_the_error() {
        let verdict =
            |place: &str, error: Option<&str>| (place.to_string(), error.map(String::from));
        assert_eq!(
            at_fault(
                "bad",
                [
                    verdict("a", Some("bad")),
                    verdict("b", None),
                    verdict("c", Some("other"))
                ]
            ),
            ["b"]
        );
        assert_eq!(
            at_fault(
                "bad",
                [verdict("a", Some("bad")), verdict("c", Some("other"))]
            ),
            ["c"]
        );
        assert!(at_fault("bad", [verdict("a", Some("bad"))]).is_empty());
    }
}
