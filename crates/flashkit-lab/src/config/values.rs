//! The option values with a syntax or a range of their own: each parses the same from a
//! flag (`FromStr`) and from the config file (`Deserialize`), and checks itself there, so
//! that a bad value is reported by clap with its flag and by toml with its line and key.
//! The `deserialize_with` helpers check the file's other ranged options the same way.

use flashkit_core::units::{parse_count, parse_size};
use serde::{Deserialize, Deserializer};
use std::str::FromStr;

/// A byte size: `4096`, `4K`, `16GiB` (in the config file, a string or an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);

impl FromStr for Size {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_size(text).map(Size)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_text(d, parse_size).map(Size)
    }
}

/// A count: `1000`, `10M`, `2.5k`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count(pub u64);

impl FromStr for Count {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        parse_count(text).map(Count)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_text(d, parse_count).map(Count)
    }
}

/// A share from 0 to 1 (`--read-fraction`, `read_fraction` in a config file), checked where
/// it is read, so that a bad one in a file is reported at its line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fraction(pub f64);

impl Fraction {
    fn new(value: f64) -> Result<Fraction, String> {
        if (0.0..=1.0).contains(&value) {
            Ok(Fraction(value))
        } else {
            Err(format!("{value} is not a fraction from 0 to 1"))
        }
    }
}

impl FromStr for Fraction {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let value = text
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not a number"))?;
        Fraction::new(value)
    }
}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Fraction::new(f64::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// A hot/cold split, `ACCESS/SPACE` percentages such as `80/20`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotSplit {
    /// Share of requests sent to the hot space, percent.
    pub access_percent: f64,
    /// Share of the span that is hot, percent.
    pub space_percent: f64,
}

impl FromStr for HotSplit {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let percent = |part: &str| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
        };
        let split = text.split_once('/').and_then(|(access, space)| {
            Some(HotSplit {
                access_percent: percent(access)?,
                space_percent: percent(space)?,
            })
        });
        split.ok_or_else(|| {
            format!("{text:?} is not ACCESS/SPACE percentages (0 to 100), like 80/20")
        })
    }
}

impl<'de> Deserialize<'de> for HotSplit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// A size or a range of sizes, `SIZE` or `MIN-MAX` such as `2M-4M` (in the config file, a
/// string or an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeRange {
    /// The smallest size, bytes.
    pub min: u64,
    /// The largest size, bytes.
    pub max: u64,
}

impl FromStr for SizeRange {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (min, max) = text.split_once('-').unwrap_or((text, text));
        let size = |part: &str| {
            parse_size(part.trim()).map_err(|why| format!("{text:?} is not SIZE or MIN-MAX: {why}"))
        };
        SizeRange::new(size(min)?, size(max)?)
    }
}

impl SizeRange {
    fn new(min: u64, max: u64) -> Result<Self, String> {
        if min == 0 {
            return Err("0 B: a size must be above 0".into());
        }
        if min > max {
            return Err(format!("{min}-{max} B is an empty range: MIN is above MAX"));
        }
        Ok(SizeRange { min, max })
    }
}

impl<'de> Deserialize<'de> for SizeRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => SizeRange::new(n, n),
            Raw::Text(t) => t.parse(),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// Weighted sizes, `SIZE[:WEIGHT],...` such as `4K:70,16K:20,64K:10` (weight 1 if left
/// out).
#[derive(Clone, Debug, PartialEq)]
pub struct SizeList(pub flashkit_trace::workload::SizeDist);

impl FromStr for SizeList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let mut sizes = Vec::new();
        for item in text.split(',') {
            let (size, weight) = item.split_once(':').unwrap_or((item, "1"));
            let bytes = parse_size(size).map_err(|why| format!("item {item:?}: {why}"))?;
            let bytes = u32::try_from(bytes)
                .map_err(|_| format!("item {item:?}: {bytes} B is not below 4 GiB"))?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("item {item:?}: weight {weight:?} is not a whole number"))?;
            if bytes == 0 {
                return Err(format!("item {item:?}: a size must be above 0 B"));
            }
            sizes.push((bytes, weight));
        }
        if sizes.iter().all(|&(_, weight)| weight == 0) {
            return Err(format!("{text:?} gives no size a positive weight"));
        }
        Ok(SizeList(flashkit_trace::workload::SizeDist::Choice {
            sizes,
        }))
    }
}

impl<'de> Deserialize<'de> for SizeList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Static wear-leveling setting: a spread threshold or `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WearSetting(pub Option<u32>);

impl FromStr for WearSetting {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text == "off" {
            return Ok(WearSetting(None));
        }
        text.parse().map(|n| WearSetting(Some(n))).map_err(|_| {
            format!("wear leveling {text:?} is neither an erase-count spread nor \"off\"")
        })
    }
}

impl<'de> Deserialize<'de> for WearSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u32),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Ok(WearSetting(Some(n))),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// A switch given as `on` or `off` (in the config file, also `true` or `false`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnOff(pub bool);

impl FromStr for OnOff {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "on" | "true" => Ok(OnOff(true)),
            "off" | "false" => Ok(OnOff(false)),
            _ => Err(format!("{text:?} is neither \"on\" nor \"off\"")),
        }
    }
}

impl<'de> Deserialize<'de> for OnOff {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Flag(flag) => Ok(OnOff(flag)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The workload patterns `--workload` names.
pub const PATTERNS: [&str; 6] = [
    "uniform",
    "sequential",
    "zipf",
    "hot-cold",
    "gaussian",
    "camera",
];

fn number_or_text<'de, D: Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Number(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Number(n) => Ok(n),
        Raw::Text(t) => parse(&t).map_err(serde::de::Error::custom),
    }
}

/// A config-file string parsed as the flag would be.
pub(super) fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    let text = String::deserialize(d)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

/// A list in a config file may also be written as a single value: `gc = "fifo"`. The value
/// is read first and then each element as a `T`, so that a wrong element gets `T`'s own error
/// ("unknown variant `chained`, expected one of ...") rather than serde's "did not match any
/// variant of untagged enum".
pub(super) fn one_or_many<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    let one = |value: toml::Value| T::deserialize(value).map_err(serde::de::Error::custom);
    match toml::Value::deserialize(d)? {
        toml::Value::Array(values) => values.into_iter().map(one).collect(),
        // "greedy,fifo", as the flag takes it.
        toml::Value::String(text) => text
            .split(',')
            .map(|item| one(toml::Value::String(item.trim().to_string())))
            .collect(),
        value => Ok(vec![one(value)?]),
    }
}

/// `gc_threshold` in a config file: 2 or more, as `--gc-threshold` (the page FTL needs a
/// block to collect into and one to spare).
pub(super) fn gc_threshold<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    match u32::deserialize(d)? {
        blocks @ 2.. => Ok(Some(blocks)),
        blocks => Err(serde::de::Error::custom(format!(
            "gc_threshold {blocks} is below the minimum of 2 blocks"
        ))),
    }
}

/// A config-file value checked where it is read, so that a bad one is reported at its line
/// with its key (by toml), rather than after the merge with the flags, where the error could
/// name neither. The rules are the ones the libraries apply to the merged value; a rule that
/// involves two options (a size and the alignment) is checked after the merge, and
/// [`ConfigFile::blame`](super::ConfigFile::blame) finds the lines then.
fn checked<'de, D, T>(
    d: D,
    check: impl FnOnce(&T) -> Result<(), String>,
) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let value = T::deserialize(d)?;
    check(&value).map_err(serde::de::Error::custom)?;
    Ok(Some(value))
}

pub(super) fn preset<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    checked(d, |name: &String| {
        if flashkit_core::NandPreset::by_name(name).is_some() {
            return Ok(());
        }
        let names: Vec<_> = flashkit_core::NandPreset::ALL
            .iter()
            .map(|p| p.name)
            .collect();
        Err(format!(
            "unknown device preset {name:?} (expected one of: {})",
            names.join(", ")
        ))
    })
}

pub(super) fn pattern<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    checked(d, |name: &String| {
        if PATTERNS.contains(&name.as_str()) {
            Ok(())
        } else {
            Err(format!(
                "unknown workload {name:?} (expected {})",
                PATTERNS.join(", ")
            ))
        }
    })
}

pub(super) fn over_provisioning<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    checked(d, |&op: &f64| {
        if op.is_finite() && (0.0..=4.0).contains(&op) {
            Ok(())
        } else {
            Err(flashkit_core::GeometryError::OverProvisioning(op).to_string())
        }
    })
}

pub(super) fn page_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| match u32::try_from(bytes) {
        Ok(page) if page.is_power_of_two() && (512..=1 << 20).contains(&page) => Ok(()),
        _ => Err(format!(
            "page size {bytes} B is not a power of two between 512 B and 1 MiB"
        )),
    })
}

pub(super) fn pages_per_block<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    checked(d, |&pages: &u32| match pages {
        2..=65536 => Ok(()),
        _ => Err(flashkit_core::GeometryError::PagesPerBlock(pages).to_string()),
    })
}

pub(super) fn at_least_one<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    checked(d, |&n: &u32| match n {
        0 => Err("0 is below the minimum of 1".into()),
        _ => Ok(()),
    })
}

pub(super) fn positive_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Count>, D::Error> {
    checked(d, |&Count(n): &Count| match n {
        0 => Err("0 is below the minimum of 1".into()),
        _ => Ok(()),
    })
}

pub(super) fn positive_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| match bytes {
        0 => Err("0 B: a size must be above 0".into()),
        _ => Ok(()),
    })
}

pub(super) fn power_of_two<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Size>, D::Error> {
    checked(d, |&Size(bytes): &Size| {
        if bytes.is_power_of_two() && bytes <= u64::from(u32::MAX) {
            Ok(())
        } else {
            Err(format!("{bytes} B is not a power of two below 4 GiB"))
        }
    })
}

/// A finite real number in `range`, described as `what` in the error.
fn real_in<'de, D: Deserializer<'de>>(
    d: D,
    range: impl std::ops::RangeBounds<f64>,
    what: &str,
) -> Result<Option<f64>, D::Error> {
    checked(d, |&x: &f64| {
        if x.is_finite() && range.contains(&x) {
            Ok(())
        } else {
            Err(format!("{x} is not {what}"))
        }
    })
}

pub(super) fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    real_in(d, 0.0.., "a finite number of 0 or more")
}

pub(super) fn theta<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use std::ops::Bound::{Excluded, Unbounded};
    real_in(d, (Excluded(0.0), Unbounded), "a finite exponent above 0")
}

pub(super) fn center<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    real_in(d, 0.0..=1.0, "a fraction of the span from 0 to 1")
}

pub(super) fn stddev<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    use std::ops::Bound::{Excluded, Included};
    real_in(
        d,
        (Excluded(0.0), Included(1.0)),
        "a fraction of the span above 0 and at most 1",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashkit_trace::workload::SizeDist;

    #[test]
    fn size_lists_and_hot_splits_parse() {
        assert_eq!(
            "4K:3, 64K:1".parse::<SizeList>().expect("valid").0,
            SizeDist::Choice {
                sizes: vec![(4096, 3), (65536, 1)]
            }
        );
        assert!("4K:x".parse::<SizeList>().is_err());
        assert_eq!(
            "90/10".parse::<HotSplit>().expect("valid"),
            HotSplit {
                access_percent: 90.0,
                space_percent: 10.0
            }
        );
        for bad in ["90", "120/10", "80:20", "-5/50"] {
            assert!(bad.parse::<HotSplit>().is_err(), "{bad}");
        }
    }
}
