//! Telling a trace's format from its content.
//!
//! The binary format is recognised by its signature. Otherwise the text (decompressed if the
//! file is gzip) is cut into lines, and every text format's parser is run over the first
//! [`SAMPLE_LINES`] non-blank lines with default options, however far into the file they
//! are and however long (up to the longest line a trace may hold). A format
//! matches when its parser accepts every sampled line (as a request or a counted skip). The
//! layouts differ enough that at most one matches the published files (a fio header, a
//! `maj,min` first word, 7 vs 6 vs 5 comma-separated fields, a letter vs a digit for the
//! operation); should several match, the first in [`Format::ALL`] order wins and the
//! explanation says so. When none accepts every line (a malformed line near the start), the
//! one format accepting at least 80% of the sample is chosen, so that reading reports the bad
//! line by number instead of failing with "unknown format". The verdict of every format is kept, so `--explain-format` can
//! say why each was taken or refused.

use super::fields::trim;
use super::lines::{LineError, LineReader, MAX_LINE_BYTES, open_text};
use super::{Format, Parsed, Parser, TraceOptions};
use crate::TraceError;
use crate::binary::is_binary_trace;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Non-blank lines each format is tried on.
pub const SAMPLE_LINES: usize = 50;

/// One format's verdict on the sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every sampled line parsed.
    Matched {
        /// Requests among the sampled lines.
        requests: usize,
    },
    /// A sampled line was refused.
    Refused {
        /// The first refused line's number.
        line: u64,
        /// Why.
        reason: String,
        /// Sampled lines accepted all the same.
        accepted: usize,
        /// Requests among the accepted lines.
        requests: usize,
    },
}

impl Verdict {
    /// How strongly the verdict makes its format a candidate, for comparing formats:
    /// reading requests first (a format that skips every sampled row as a command without
    /// data is no better a guess than one refusing them), then accepting the whole sample,
    /// then accepting more lines, then reading more requests.
    fn strength(&self, sampled: usize) -> (bool, bool, usize, usize) {
        match *self {
            Verdict::Matched { requests } => (requests > 0, true, sampled, requests),
            Verdict::Refused {
                accepted, requests, ..
            } => (requests > 0, false, accepted, requests),
        }
    }
}

/// The result of detection, with its reasons.
#[derive(Clone, Debug)]
pub struct Detection {
    /// The file.
    pub path: PathBuf,
    /// The format chosen; `None` for an empty file.
    pub format: Option<Format>,
    /// Whether the file is gzip-compressed.
    pub gzip: bool,
    /// Non-blank lines sampled.
    pub sampled_lines: usize,
    /// Every text format's verdict, in detection order (empty for a binary trace).
    pub verdicts: Vec<(Format, Verdict)>,
}

impl Detection {
    /// A human explanation: what was sampled, each format's verdict, the choice.
    pub fn explain(&self) -> String {
        let mut text = format!("{}:", self.path.display());
        if self.format == Some(Format::Binary) {
            text.push_str(" starts with the flashkit binary-trace signature: binary\n");
            return text;
        }
        if self.gzip {
            text.push_str(" gzip-compressed (signature 1f 8b), decompressed;");
        }
        if self.sampled_lines == 0 {
            text.push_str(" no non-blank lines: an empty trace (no requests)\n");
            return text;
        }
        text.push_str(&format!(
            " tried every text format on the first {} non-blank lines\n",
            self.sampled_lines
        ));
        for (format, verdict) in &self.verdicts {
            let line = match verdict {
                Verdict::Matched { requests } => {
                    format!("matches ({requests} requests in the sample)")
                }
                Verdict::Refused {
                    line,
                    reason,
                    accepted,
                    ..
                } => format!(
                    "refused at line {line} ({accepted} of {} lines accepted): {reason}",
                    self.sampled_lines
                ),
            };
            text.push_str(&format!("  {:<13} {line}\n", format.name()));
        }
        text.push_str(&self.choice());
        text
    }

    /// The line saying which format was chosen and why.
    fn choice(&self) -> String {
        let Some(format) = self.format else {
            return "no format matches; give --format\n".into();
        };
        let reading = self.matched(true);
        let chosen = self.verdicts.iter().find(|(f, _)| *f == format);
        if let Some((_, Verdict::Refused { accepted, .. })) = chosen {
            return format!(
                "chosen: {format}, the format accepting most of the sample ({accepted} of {} \
                 lines, at least {MOSTLY_PERCENT}%) and reading requests from it; its refused \
                 lines will be reported as errors\n",
                self.sampled_lines
            );
        }
        if reading.len() > 1 {
            return format!(
                "chosen: {format} (first of the {} formats that match and read requests, in \
                 detection order)\n",
                reading.len()
            );
        }
        format!("chosen: {format} ({})\n", format.layout())
    }

    /// The formats matching the whole sample (with requests read from it, if `reading`).
    fn matched(&self, reading: bool) -> Vec<Format> {
        self.verdicts
            .iter()
            .filter(
                |(_, v)| matches!(v, Verdict::Matched { requests } if !reading || *requests > 0),
            )
            .map(|&(f, _)| f)
            .collect()
    }
}

/// Detect the format of `path`. An error when no format matches, listing why each was
/// refused.
pub fn detect(path: &Path) -> Result<Detection, TraceError> {
    let detection = examine(path)?;
    if detection.sampled_lines > 0 && detection.format.is_none() {
        let reasons: Vec<String> = detection
            .verdicts
            .iter()
            .filter_map(|(format, verdict)| match verdict {
                Verdict::Refused { line, reason, .. } => {
                    Some(format!("{format} (line {line}: {reason})"))
                }
                Verdict::Matched { .. } => None,
            })
            .collect();
        return Err(TraceError::Format {
            path: path.to_path_buf(),
            message: format!(
                "cannot tell the trace format from the first {} non-blank lines; give --format. \
                 Refused by: {}",
                detection.sampled_lines,
                reasons.join("; ")
            ),
        });
    }
    Ok(detection)
}

/// Detection without the error for an unknown format (what `--explain-format` prints).
pub fn examine(path: &Path) -> Result<Detection, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        error: source,
    };
    crate::check_is_file(path)?;
    let mut prefix = [0u8; 8];
    let got = File::open(path)
        .and_then(|mut f| read_up_to(&mut f, &mut prefix))
        .map_err(io)?;
    let mut detection = Detection {
        path: path.to_path_buf(),
        format: None,
        gzip: super::lines::is_gzip(&prefix[..got]),
        sampled_lines: 0,
        verdicts: Vec::new(),
    };
    if is_binary_trace(&prefix[..got]) {
        detection.format = Some(Format::Binary);
        return Ok(detection);
    }
    let sample = sample_lines(path)?;
    detection.sampled_lines = sample.len();
    if sample.is_empty() {
        return Ok(detection);
    }
    for format in Format::ALL.into_iter().filter(|&f| f != Format::Binary) {
        let verdict = try_format(format, &sample);
        detection.verdicts.push((format, verdict));
    }
    detection.format = choose(&detection.verdicts, sample.len());
    Ok(detection)
}

/// Share of the sample a format must accept to be chosen when none accepts all of it.
const MOSTLY_PERCENT: usize = 80;

/// The format the sample shows: among the formats accepting all of it or at least
/// [`MOSTLY_PERCENT`] (a malformed line early in the file is then reported by its number,
/// which is more useful than "unknown format"), the strongest ([`Verdict::strength`]). Formats
/// that match the whole sample and read requests from it are chosen in [`Format::ALL`]
/// order, as the explanation says; two formats equally strong on part of the sample are
/// ambiguous, and none is chosen. Found by a mutation hunt: a Tencent trace with one bad
/// line was undetectable, or read as CloudPhysics rows of SCSI commands without data (0
/// requests, exit 0), because CloudPhysics also accepted its rows.
fn choose(verdicts: &[(Format, Verdict)], sampled: usize) -> Option<Format> {
    let mut candidates: Vec<(Format, (bool, bool, usize, usize))> = verdicts
        .iter()
        .map(|(format, verdict)| (*format, verdict.strength(sampled)))
        .filter(|&(_, (_, _, accepted, _))| accepted * 100 >= sampled * MOSTLY_PERCENT)
        .collect();
    // Stable: equally strong formats stay in detection order.
    candidates.sort_by_key(|&(_, strength)| std::cmp::Reverse(strength));
    let (first, strength) = *candidates.first()?;
    let whole = strength.1;
    let tied = candidates.get(1).is_some_and(|&(_, next)| next == strength);
    (whole || !tied).then_some(first)
}

fn try_format(format: Format, sample: &[(u64, Vec<u8>)]) -> Verdict {
    let mut parser = Parser::new(format, &TraceOptions::default())
        .expect("invariant: every format but binary has a text parser");
    let mut requests = 0;
    let mut accepted = 0;
    let mut first_refusal = None;
    for (number, line) in sample {
        match parser.parse(line) {
            Ok(Parsed::Request(_)) => {
                requests += 1;
                accepted += 1;
            }
            Ok(Parsed::Skip(_)) => accepted += 1,
            Err(error) => {
                first_refusal.get_or_insert_with(|| {
                    (*number, format!("field {}: {}", error.field, error.message))
                });
            }
        }
    }
    match first_refusal {
        None => Verdict::Matched { requests },
        Some((line, reason)) => Verdict::Refused {
            line,
            reason,
            accepted,
            requests,
        },
    }
}

/// The first [`SAMPLE_LINES`] non-blank lines of the file's text, with their line numbers.
/// Blank lines are passed over however many there are (a trace may open with thousands),
/// and a line may be as long as any line a trace may hold ([`MAX_LINE_BYTES`]): a longer
/// one is an error naming it, as reading the file would report. A read error (a gzip file
/// truncated inside the sample) ends the sample where it happened; the error is reported
/// here only when it comes before the first non-blank line, and otherwise, with its line
/// number, when the file is read.
pub(crate) fn sample_lines(path: &Path) -> Result<Vec<(u64, Vec<u8>)>, TraceError> {
    let input = open_text(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        error: source,
    })?;
    let mut lines = LineReader::new(input);
    let mut sample = Vec::new();
    while sample.len() < SAMPLE_LINES {
        let line = match lines.next_line() {
            None => break,
            Some(Ok(line)) => line,
            Some(Err(error)) => {
                let number = lines.line_number() + 1;
                return match error {
                    LineError::TooLong => Err(TraceError::Record {
                        path: path.to_path_buf(),
                        location: format!("line {number}"),
                        field: "line",
                        message: format!(
                            "longer than {MAX_LINE_BYTES} bytes: not a text trace, or a \
                             corrupt one"
                        ),
                    }),
                    LineError::Io(_) if !sample.is_empty() => Ok(sample),
                    LineError::Io(source) => Err(TraceError::Format {
                        path: path.to_path_buf(),
                        message: read_failure(number - 1, &source),
                    }),
                };
            }
        };
        if !trim(line).is_empty() {
            let line = line.to_vec();
            sample.push((lines.line_number(), line));
        }
    }
    Ok(sample)
}

/// Why reading stopped after line `after` (0: before the first line).
pub(crate) fn read_failure(after: u64, source: &std::io::Error) -> String {
    let place = if after == 0 {
        "before line 1".to_string()
    } else {
        format!("after line {after}")
    };
    if source.kind() == std::io::ErrorKind::UnexpectedEof {
        format!("{place}: the compressed stream ends early (a truncated gzip file?): {source}")
    } else {
        format!("{place}: read failed: {source}")
    }
}

fn read_up_to(file: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buffer.len() {
        match file.read(&mut buffer[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(accepted: usize, requests: usize) -> Verdict {
        Verdict::Refused {
            line: 3,
            reason: "bad".into(),
            accepted,
            requests,
        }
    }

    /// Reading requests ranks first, then accepting the whole sample, then lines
    /// accepted, then requests read.
    #[test]
    fn a_verdict_is_stronger_for_reading_requests() {
        assert_eq!(
            Verdict::Matched { requests: 0 }.strength(10),
            (false, true, 10, 0)
        );
        assert_eq!(
            Verdict::Matched { requests: 3 }.strength(10),
            (true, true, 10, 3)
        );
        assert_eq!(refused(8, 0).strength(10), (false, false, 8, 0));
        assert_eq!(refused(8, 2).strength(10), (true, false, 8, 2));
    }

    /// A format refusing part of the sample is a candidate when it accepts at least 80%
    /// of it: 8 of 10 lines, not 7.
    #[test]
    fn a_partial_match_needs_80_percent_of_the_sample() {
        assert_eq!(
            choose(&[(Format::Tencent, refused(8, 8))], 10),
            Some(Format::Tencent)
        );
        assert_eq!(choose(&[(Format::Tencent, refused(7, 7))], 10), None);
    }

    fn detection(format: Format, verdicts: Vec<(Format, Verdict)>) -> Detection {
        Detection {
            path: PathBuf::from("t.csv"),
            format: Some(format),
            gzip: false,
            sampled_lines: 10,
            verdicts,
        }
    }

    /// The choice line says why: the one format reading requests (with its layout), the
    /// first of several in detection order, or the format accepting most of the sample.
    #[test]
    fn the_choice_says_why() {
        let matched = |requests| Verdict::Matched { requests };
        let one = detection(
            Format::Msr,
            vec![(Format::Msr, matched(10)), (Format::Spc, refused(0, 0))],
        );
        assert_eq!(
            one.choice(),
            "chosen: msr (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)\n"
        );
        let two = detection(
            Format::Msr,
            vec![
                (Format::Msr, matched(10)),
                (Format::Spc, matched(10)),
                (Format::Csv, matched(0)),
            ],
        );
        assert_eq!(two.matched(true), [Format::Msr, Format::Spc]);
        assert_eq!(
            two.choice(),
            "chosen: msr (first of the 2 formats that match and read requests, in detection \
             order)\n"
        );
        let most = detection(
            Format::Tencent,
            vec![
                (Format::CloudPhysics, matched(0)),
                (Format::Tencent, refused(9, 9)),
            ],
        );
        assert_eq!(
            most.choice(),
            "chosen: tencent, the format accepting most of the sample (9 of 10 lines, at least \
             80%) and reading requests from it; its refused lines will be reported as errors\n"
        );
    }

    /// A format's verdict counts the lines it accepted, skipped ones (a header) included,
    /// and the requests among them, and names the first line it refused.
    #[test]
    fn a_verdict_counts_skipped_lines_as_accepted() {
        let sample: Vec<(u64, Vec<u8>)> = [
            "Timestamp,Response,IOType,LUN,Offset,Size",
            "1487284200.5,0.001,W,1,4096,512",
            "1487284201.5,0.001,R,1,0,512",
            "not,a,row",
        ]
        .iter()
        .enumerate()
        .map(|(i, line)| (i as u64 + 1, line.as_bytes().to_vec()))
        .collect();
        assert_eq!(
            try_format(Format::Systor, &sample),
            Verdict::Refused {
                line: 4,
                reason: "field line: 3 comma-separated fields; SYSTOR '17 rows have 6 \
                         (Timestamp,Response,IOType,LUN,Offset,Size)"
                    .into(),
                accepted: 3,
                requests: 2,
            }
        );
        assert_eq!(
            try_format(Format::Systor, &sample[..3]),
            Verdict::Matched { requests: 2 }
        );
    }
}
