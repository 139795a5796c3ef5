//! Exact decimals of a `decimal` column (`NUMERIC(p, s)`): values travel as text with exactly
//! `scale` digits after the point; arithmetic (a read-modify-write's `add`) and the CQL binding's
//! unscaled integer work on the value in units of 10^-scale, as an `i128` (38 digits fit).
//! Written here rather than taken from a big-decimal crate: this is all the arithmetic needed.

/// The most digits a decimal column holds (PostgreSQL, MySQL and Cassandra take at least this).
pub const MAX_PRECISION: u32 = 38;

/// `text` (`-12.5`, `3`, `0.125`) in units of 10^-`scale`; `None` when it is not a decimal
/// number or has more digits after the point than `scale` that are not zeros.
pub fn parse_units(text: &str, scale: u32) -> Option<i128> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && fraction.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (kept, dropped) = fraction.split_at(fraction.len().min(scale as usize));
    if dropped.bytes().any(|b| b != b'0') {
        return None;
    }
    let mut units: i128 = 0;
    for b in whole.bytes().chain(kept.bytes()) {
        units = units.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    for _ in kept.len()..scale as usize {
        units = units.checked_mul(10)?;
    }
    Some(if negative { -units } else { units })
}

/// `units` of 10^-`scale` as text with exactly `scale` digits after the point.
pub fn format_units(units: i128, scale: u32) -> String {
    let digits = units.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    let sign = if units < 0 { "-" } else { "" };
    if scale == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

/// Whether `units` of 10^-`scale` fit a column of `precision` digits.
pub fn fits(units: i128, precision: u32) -> bool {
    units.unsigned_abs() < 10u128.pow(precision)
}

/// `v` rounded to `scale` digits after the point, as text (a generator's value).
pub fn format_f64(v: f64, scale: u32) -> String {
    format!("{v:.s$}", s = scale as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_and_format_exactly() {
        for (text, scale, units, back) in [
            ("12.5", 2, 1250, "12.50"),
            ("-0.07", 2, -7, "-0.07"),
            ("3", 0, 3, "3"),
            ("0", 3, 0, "0.000"),
            (".5", 1, 5, "0.5"),
            ("+1.10", 1, 11, "1.1"),
            (
                "12345678901234567890123456789012345.678",
                3,
                12_345_678_901_234_567_890_123_456_789_012_345_678,
                "12345678901234567890123456789012345.678",
            ),
        ] {
            assert_eq!(parse_units(text, scale), Some(units), "{text}");
            assert_eq!(format_units(units, scale), back);
        }
        for bad in ["", "-", "1.2.3", "1e5", "abc", "1.234"] {
            assert_eq!(parse_units(bad, 2), None, "{bad}");
        }
        assert!(fits(99_999, 5) && !fits(100_000, 5) && fits(-99_999, 5));
        assert_eq!(format_f64(2.0 / 3.0, 4), "0.6667");
    }
}
