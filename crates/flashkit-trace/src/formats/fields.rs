//! Byte-level field parsing shared by the text formats: splitting a line into fields,
//! whole numbers, hexadecimal numbers and decimal numbers scaled to nanoseconds, with no
//! allocation on the success path.
//!
//! Key decision: numbers are parsed exactly, never through `f64`. A SYSTOR timestamp such as
//! `1455591804.310701000` has 19 significant digits, more than a double holds; parsing the
//! integer and fraction digits separately gives the nanosecond exactly.

use std::fmt::Write as _;

/// Why one field of a line was refused: the field's name and what is wrong with it, quoting
/// the offending text. Built only on the error path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The field at fault, as the format's documentation names it.
    pub field: &'static str,
    /// What is wrong, quoting the offending text.
    pub message: String,
}

impl FieldError {
    /// A field error with a message.
    #[cold]
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        FieldError {
            field,
            message: message.into(),
        }
    }

    /// `text` (quoted) is not what the field holds.
    #[cold]
    pub fn bad(field: &'static str, text: &[u8], expected: &str) -> Self {
        FieldError::new(field, format!("{} is not {expected}", quote(text)))
    }

    /// The line has too few fields to hold `field`.
    #[cold]
    pub fn missing(field: &'static str, found: usize, expected: &str) -> Self {
        FieldError::new(
            field,
            format!("missing: the line has {found} fields, {expected}"),
        )
    }
}

/// `text` in double quotes with non-printable and non-ASCII bytes escaped (`\xff`), cut
/// after 80 bytes: safe to print whatever the file holds.
pub fn quote(text: &[u8]) -> String {
    const LIMIT: usize = 80;
    let shown = &text[..text.len().min(LIMIT)];
    let mut out = String::with_capacity(shown.len() + 8);
    out.push('"');
    for &b in shown {
        if b == b'"' {
            out.push_str("\\\"");
        } else {
            let _ = write!(out, "{}", std::ascii::escape_default(b));
        }
    }
    out.push('"');
    if text.len() > LIMIT {
        let _ = write!(out, " (and {} more bytes)", text.len() - LIMIT);
    }
    out
}

/// Spaces and tabs around a field.
#[inline]
pub fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Split `line` at `sep` into at most `N` fields (trimmed of spaces and tabs); returns the
/// number of fields the line has (which may exceed `N`; the last stored field then ends at
/// the `N`-th separator).
#[inline]
pub fn split_sep<'a, const N: usize>(line: &'a [u8], sep: u8, out: &mut [&'a [u8]; N]) -> usize {
    let mut count = 0;
    let mut start = 0;
    for at in memchr::memchr_iter(sep, line) {
        if count < N {
            out[count] = trim(&line[start..at]);
        }
        count += 1;
        start = at + 1;
    }
    if count < N {
        out[count] = trim(&line[start..]);
    }
    count + 1
}

/// Split `line` at runs of spaces and tabs into at most `N` fields; returns how many fields
/// the line has (possibly more than `N`).
#[inline]
pub fn split_ws<'a, const N: usize>(line: &'a [u8], out: &mut [&'a [u8]; N]) -> usize {
    let mut count = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && matches!(line[i], b' ' | b'\t') {
            i += 1;
        }
        if i == len {
            break;
        }
        let start = i;
        while i < len && !matches!(line[i], b' ' | b'\t') {
            i += 1;
        }
        if count < N {
            out[count] = &line[start..i];
        }
        count += 1;
    }
    count
}

/// A whole decimal number (digits only, no sign), or `None` if the text is empty, holds
/// another character or overflows 64 bits.
#[inline]
pub fn u64_of(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    if text.len() <= 19 {
        // 19 digits cannot overflow: the fast path has no overflow checks.
        let mut value = 0u64;
        for &b in text {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            value = value * 10 + u64::from(digit);
        }
        return Some(value);
    }
    let mut value = 0u64;
    for &b in text {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// A whole number, or an error naming `field` and what it should hold.
#[inline]
pub fn number(field: &'static str, text: &[u8]) -> Result<u64, FieldError> {
    u64_of(text).ok_or_else(|| FieldError::bad(field, text, "a whole number"))
}

/// A hexadecimal number (digits and `a`-`f` in either case, optional `0x`).
pub fn hex(field: &'static str, text: &[u8]) -> Result<u64, FieldError> {
    let digits = text
        .strip_prefix(b"0x")
        .or_else(|| text.strip_prefix(b"0X"))
        .unwrap_or(text);
    let parse = || -> Option<u64> {
        if digits.is_empty() {
            return None;
        }
        let mut value = 0u64;
        for &b in digits {
            let digit = (b as char).to_digit(16)?;
            value = value.checked_mul(16)?.checked_add(u64::from(digit))?;
        }
        Some(value)
    };
    parse().ok_or_else(|| FieldError::bad(field, text, "a hexadecimal number"))
}

/// A non-negative decimal number (`12`, `12.5`, `.5`) in units of `unit_ns` nanoseconds,
/// converted to nanoseconds exactly; digits beyond the nanosecond are dropped (truncated
/// toward zero).
#[inline]
pub fn decimal_ns(field: &'static str, text: &[u8], unit_ns: u64) -> Result<u64, FieldError> {
    decimal_scaled(text, unit_ns).ok_or_else(|| {
        let digits = text.iter().filter(|b| b.is_ascii_digit()).count();
        let dots = text.iter().filter(|&&b| b == b'.').count();
        if digits > 0 && digits + dots == text.len() && dots <= 1 {
            // A number, only too large.
            FieldError::new(
                field,
                format!(
                    "{} is past the 2^64 ns (584 years) a time can hold",
                    quote(text)
                ),
            )
        } else {
            FieldError::bad(field, text, "a non-negative decimal number")
        }
    })
}

fn decimal_scaled(text: &[u8], unit: u64) -> Option<u64> {
    let (whole, fraction) = match memchr::memchr(b'.', text) {
        Some(dot) => (&text[..dot], Some(&text[dot + 1..])),
        None => (text, None),
    };
    let whole_value = if whole.is_empty() {
        // ".5" is a number, "." is not.
        if fraction.is_none_or(|f| f.is_empty()) {
            return None;
        }
        0
    } else {
        u64_of(whole)?
    };
    let mut value = whole_value.checked_mul(unit)?;
    if let Some(fraction) = fraction {
        // Up to 18 fraction digits fit a u64; the rest are checked to be digits and dropped.
        let kept = &fraction[..fraction.len().min(18)];
        if !fraction[kept.len()..].iter().all(u8::is_ascii_digit) {
            return None;
        }
        if !kept.is_empty() {
            let digits = u64_of(kept)?;
            let scale = 10u128.pow(kept.len() as u32);
            let part = u128::from(digits) * u128::from(unit) / scale;
            value = value.checked_add(u64::try_from(part).ok()?)?;
        }
    }
    Some(value)
}

/// `value * unit`, or an error saying the field's value overflows 64-bit bytes.
#[inline]
pub fn scaled(field: &'static str, value: u64, unit: u64, text: &[u8]) -> Result<u64, FieldError> {
    value.checked_mul(unit).ok_or_else(|| {
        FieldError::new(
            field,
            format!(
                "{} units of {unit} B overflow a 64-bit byte address",
                quote(text)
            ),
        )
    })
}

/// A request size in bytes that must fit the request's 32-bit size field.
#[inline]
pub fn size_u32(field: &'static str, bytes: u64, text: &[u8]) -> Result<u32, FieldError> {
    u32::try_from(bytes).map_err(|_| {
        FieldError::new(
            field,
            format!(
                "{} is {bytes} B; flashkit's requests hold at most 4 GiB - 1",
                quote(text)
            ),
        )
    })
}

/// A volume number that must fit in 16 bits.
#[inline]
pub fn volume_u16(field: &'static str, text: &[u8]) -> Result<u16, FieldError> {
    let value = number(field, text)?;
    u16::try_from(value).map_err(|_| {
        FieldError::new(
            field,
            format!(
                "{} is above 65535, the most volumes flashkit numbers",
                quote(text)
            ),
        )
    })
}

/// Checks that a request's end (offset + size) fits 64 bits.
#[inline]
pub fn check_end(offset: u64, size: u32, text: &[u8]) -> Result<(), FieldError> {
    if offset.checked_add(u64::from(size)).is_none() {
        return Err(FieldError::new(
            "offset",
            format!(
                "{} plus the size {size} B passes the end of a 64-bit address space",
                quote(text)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_exactly_and_refuse_junk() {
        assert_eq!(u64_of(b"0"), Some(0));
        assert_eq!(u64_of(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(u64_of(b"18446744073709551616"), None);
        assert_eq!(u64_of(b""), None);
        assert_eq!(u64_of(b"-1"), None);
        assert_eq!(u64_of(b"1e3"), None);
        assert_eq!(hex("op", b"2a").expect("hex"), 42);
        assert_eq!(hex("op", b"0x2A").expect("hex"), 42);
        assert!(hex("op", b"zz").is_err());
    }

    #[test]
    fn decimals_become_exact_nanoseconds() {
        let s = 1_000_000_000;
        assert_eq!(
            decimal_ns("t", b"1455591804.310701000", s).expect("ok"),
            1_455_591_804_310_701_000
        );
        assert_eq!(decimal_ns("t", b"0.0349119", s).expect("ok"), 34_911_900);
        assert_eq!(decimal_ns("t", b"0.0000000019", s).expect("ok"), 1);
        assert_eq!(decimal_ns("t", b".5", s).expect("ok"), 500_000_000);
        assert_eq!(decimal_ns("t", b"7.", s).expect("ok"), 7_000_000_000);
        assert_eq!(
            decimal_ns("t", b"938513", 1_000_000).expect("ok"),
            938_513_000_000
        );
        for bad in [&b"."[..], b"", b"1.2.3", b"-1", b"1e5", b"1.x"] {
            let error = decimal_ns("t", bad, s).expect_err("not a number").message;
            assert!(error.contains("is not a non-negative"), "{error}");
        }
        // Too large is said as such (it read "not a non-negative decimal number").
        for large in [&b"99999999999999999999"[..], b"18446744073.709551616"] {
            let error = decimal_ns("t", large, s).expect_err("overflow").message;
            assert!(error.contains("is past the 2^64 ns"), "{error}");
        }
    }

    #[test]
    fn splitting_trims_and_counts_every_field() {
        let mut f = [&b""[..]; 4];
        assert_eq!(split_sep(b"0, 657728 ,8192,R,0.01", b',', &mut f), 5);
        assert_eq!(f, [&b"0"[..], b"657728", b"8192", b"R"]);
        let mut g = [&b""[..]; 3];
        assert_eq!(split_ws(b"  8,33   4\t 1  ", &mut g), 3);
        assert_eq!(g, [&b"8,33"[..], b"4", b"1"]);
    }

    #[test]
    fn quoting_escapes_what_cannot_be_printed() {
        assert_eq!(quote(b"a\xffb\"c"), r#""a\xffb\"c""#);
        assert!(quote(&[b'x'; 100]).ends_with("(and 20 more bytes)"));
    }

    /// A quoted field shows 80 bytes whole; past that it is cut and the rest counted.
    #[test]
    fn a_quote_is_cut_after_80_bytes_only() {
        let eighty = "a".repeat(80);
        assert_eq!(quote(eighty.as_bytes()), format!("\"{eighty}\""));
        let more = format!("{eighty}bc");
        assert_eq!(
            quote(more.as_bytes()),
            format!("\"{eighty}\" (and 2 more bytes)")
        );
        assert_eq!(quote(b"a\"b\xff"), "\"a\\\"b\\xff\"");
    }
}
