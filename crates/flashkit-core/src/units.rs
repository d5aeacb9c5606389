//! Human sizes: parse `4K`, `16GiB`, `1.5M`, `10M` (for counts) and print them back.
//! Binary multiples (K = 1024) for sizes, decimal for counts, as storage tools do.

/// Parse a byte size such as `512`, `4K`, `4KiB`, `16G`, `1.5GiB`. K/M/G/T are binary.
pub fn parse_size(text: &str) -> Result<u64, String> {
    parse_scaled(text, 1024, &["B"]).map_err(|why| format!("invalid size {text:?}: {why}"))
}

/// Parse a count such as `1000`, `10M`, `2.5k`. K/M/G are decimal.
pub fn parse_count(text: &str) -> Result<u64, String> {
    parse_scaled(text, 1000, &[]).map_err(|why| format!("invalid count {text:?}: {why}"))
}

fn parse_scaled(text: &str, base: u64, unit_suffixes: &[&str]) -> Result<u64, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("empty".into());
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(trimmed.len());
    let (number, written_suffix) = trimmed.split_at(split);
    let number: String = number.chars().filter(|&c| c != '_').collect();
    let mut suffix = written_suffix.trim().to_ascii_uppercase();
    for unit in unit_suffixes {
        if let Some(rest) = suffix.strip_suffix(unit) {
            suffix = rest.to_string();
            break;
        }
    }
    if base == 1024 && suffix.len() == 2 && suffix.ends_with('I') {
        suffix.pop();
    }
    let exponent = match suffix.as_str() {
        "" => 0,
        "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        "P" => 5,
        _ => return Err(format!("unknown suffix {:?}", written_suffix.trim())),
    };
    let scale = u128::from(base.checked_pow(exponent).ok_or("too large")?);
    // Exact decimal arithmetic: `2.01k` is 2010, however 2.01 rounds in binary.
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err("not a number".into());
    }
    let digits = |text: &str| -> Result<u128, String> {
        if text.is_empty() {
            return Ok(0);
        }
        text.parse::<u128>().map_err(|_| "too large".to_string())
    };
    let fraction = fraction.trim_end_matches('0');
    // A bound that keeps the arithmetic below in u128 (10^20 times a binary P is about
    // 10^35); a whole multiple can need more places (2^-21 P has 21), but no one writes one.
    if fraction.len() > 20 {
        return Err("more than 20 decimal places".into());
    }
    let places = 10u128.pow(fraction.len() as u32);
    let fraction_scaled = digits(fraction)? * scale;
    if !fraction_scaled.is_multiple_of(places) {
        return Err("not a whole number of units".into());
    }
    digits(whole)?
        .checked_mul(scale)
        .and_then(|value| value.checked_add(fraction_scaled / places))
        .and_then(|value| u64::try_from(value).ok())
        .ok_or_else(|| "too large".into())
}

/// Print a byte size with a binary suffix, exact when possible (`4KiB`, `16GiB`, `1536B`).
pub fn format_size(bytes: u64) -> String {
    const SUFFIXES: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes;
    let mut index = 0;
    while value >= 1024 && value.is_multiple_of(1024) && index + 1 < SUFFIXES.len() {
        value /= 1024;
        index += 1;
    }
    format!("{value}{}", SUFFIXES[index])
}

/// [`format_size`], followed by the size to three significant digits in the largest unit
/// it reaches when the exact form has five digits or more (`13257216KiB (12.6GiB)`), so
/// that a size nobody chose reads at a glance.
pub fn describe_size(bytes: u64) -> String {
    let exact = format_size(bytes);
    if exact.bytes().take_while(u8::is_ascii_digit).count() < 5 {
        return exact;
    }
    format!("{exact} ({})", approximate_size(bytes))
}

/// A byte size to three significant digits in the largest binary unit it reaches
/// (`12.6GiB`, `218MiB`, `1536B`), for a size that is itself an estimate.
pub fn approximate_size(bytes: u64) -> String {
    const SUFFIXES: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut index = 0;
    while value >= 1024.0 && index + 1 < SUFFIXES.len() {
        value /= 1024.0;
        index += 1;
    }
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    if index == 0 {
        return format!("{bytes}B");
    }
    format!("{value:.decimals$}{}", SUFFIXES[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_sizes_are_described_in_their_largest_unit_too() {
        assert_eq!(describe_size(4096), "4KiB");
        assert_eq!(describe_size(222_720 << 10), "222720KiB (218MiB)");
        assert_eq!(describe_size(13_257_216 << 10), "13257216KiB (12.6GiB)");
        assert_eq!(
            describe_size(78_932_104_704 << 10),
            "78932104704KiB (73.5TiB)"
        );
        assert_eq!(describe_size(1536), "1536B");
        assert_eq!(describe_size(12_345), "12345B (12.1KiB)");
        assert_eq!(approximate_size(1536), "1.50KiB");
        assert_eq!(approximate_size(1023), "1023B");
        assert_eq!(approximate_size(100_247_158_218), "93.4GiB");
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(parse_size("2kb"), Ok(2048));
        assert!(parse_size("").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999P").is_err());
    }

    #[test]
    fn counts_parse_with_decimal_suffixes() {
        assert_eq!(parse_count("10M"), Ok(10_000_000));
        assert_eq!(parse_count("2.5k"), Ok(2500));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("1.0001k").is_err());
    }

    /// Decimals are exact: 2.01 is not a whole number in binary floating point, so 2.01k
    /// used to be refused as "not a whole number of units", and 16384.0P saturated.
    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(parse_count("2.01k"), Ok(2010));
        assert_eq!(parse_count("1.001k"), Ok(1001));
        assert_eq!(parse_count("8.03k"), Ok(8030));
        assert_eq!(parse_count("0.000123M"), Ok(123));
        assert_eq!(parse_count(".5k"), Ok(500));
        assert_eq!(parse_count("3."), Ok(3));
        assert_eq!(parse_count("1.500000000000000000000000000k"), Ok(1500));
        assert_eq!(parse_size("0.5K"), Ok(512));
        assert_eq!(parse_size("1.125KiB"), Ok(1152));
        assert_eq!(parse_size("0.0009765625M"), Ok(1024));
        assert_eq!(
            parse_size("16383.99P"),
            Err("invalid size \"16383.99P\": not a whole number of units".into())
        );
        for too_large in [
            "16384.0P",
            "16384P",
            "18446744073709551616",
            "99999999999999999999999999999999999999999",
        ] {
            assert!(
                parse_size(too_large).is_err_and(|why| why.ends_with("too large")),
                "{too_large}"
            );
        }
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        for bad in [".", "1.2.3", "1..2"] {
            assert!(parse_count(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_count("1.0000000000000000000001k"),
            Err("invalid count \"1.0000000000000000000001k\": more than 20 decimal places".into())
        );
    }

    #[test]
    fn unknown_suffixes_are_quoted_as_written() {
        assert_eq!(
            parse_count("1e6"),
            Err("invalid count \"1e6\": unknown suffix \"e6\"".into())
        );
        assert_eq!(
            parse_size("0x4000000"),
            Err("invalid size \"0x4000000\": unknown suffix \"x4000000\"".into())
        );
    }

    #[test]
    fn sizes_print_exactly() {
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(16 << 30), "16GiB");
        assert_eq!(format_size(1536), "1536B");
    }

    /// Edges found by mutation testing: the suffixes one by one, the `i` of a binary suffix
    /// only after a letter of a size, the limit on decimal places, the largest unit.
    #[test]
    fn every_suffix_and_the_edges_of_the_units() {
        for (text, bytes) in [("1K", 1u64 << 10), ("1M", 1 << 20), ("1G", 1 << 30)] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("1P"), Ok(1 << 50));
        assert_eq!(parse_count("1T"), Ok(1_000_000_000_000));
        assert!(parse_size("4I").is_err(), "an i alone is no suffix");
        assert!(parse_size("4IB").is_err());
        assert!(
            parse_count("4KI").is_err(),
            "counts have no binary suffixes"
        );
        // 2^-20 P, written with its 20 decimal places, is whole; 21 places are refused.
        assert_eq!(
            parse_size("1.00000095367431640625P"),
            Ok((1 << 50) + (1 << 30))
        );
        let refused = parse_size("1.000000476837158203125P").expect_err("21 places");
        assert!(refused.contains("more than 20 decimal places"), "{refused}");
        assert_eq!(format_size(1 << 60), "1024PiB");
        assert_eq!(format_size(u64::MAX), format!("{}B", u64::MAX));
        assert_eq!(approximate_size(u64::MAX), "16384PiB");
        assert_eq!(approximate_size(1 << 60), "1024PiB");
    }
}
