//! A duration as a workload file writes it (`"30s"`, `"1m30s"`, `"500ms"`): read into its value
//! when the file is read, written back as it was written, and described in the JSON Schema by
//! its shape (numbers each followed by a unit), so an editor flags `duration = "30"` or
//! `duration = 30` before the checker does.

use std::fmt;
use std::time::Duration;

use schemars::{json_schema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration's text and its value; two are equal when their text is (the serde form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationText {
    text: String,
    value: Duration,
}

/// The shape of a duration humantime reads: `0`, or numbers (a fraction allowed) each followed
/// by a unit, spaces between them allowed. The units are humantime's (its error names them).
const PATTERN: &str = r"^\s*(?:0|(?:[0-9]+(?:\.[0-9]+)?\s*[a-zA-Zµ]+\s*)+)\s*$";

impl DurationText {
    /// Reads `text` as humantime does: `30s`, `1m30s`, `500ms`, `2h`.
    pub fn parse(text: &str) -> Result<DurationText, String> {
        let value = humantime::parse_duration(text)
            .map_err(|e| format!("'{text}' is not a duration: {e}"))?;
        Ok(DurationText {
            text: text.to_string(),
            value,
        })
    }

    pub fn value(&self) -> Duration {
        self.value
    }

    /// The text as the file wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for DurationText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for DurationText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        DurationText::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for DurationText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration: numbers each followed by a unit (ms, s, m, h; humantime's \
                            units), e.g. 30s, 1m30s, 500ms.",
            "type": "string",
            "pattern": PATTERN,
            "examples": ["30s", "1m30s", "500ms"],
        })
    }
}

/// A duration that may be negative (`"-5m"`: a time generator's offset or step back in time), in
/// milliseconds: its text and its value, read when the file is read, written back as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedDurationText {
    text: String,
    millis: i64,
}

impl SignedDurationText {
    /// Reads `text` as [`DurationText::parse`] does, after an optional `-`.
    pub fn parse(text: &str) -> Result<SignedDurationText, String> {
        let (negative, body) = match text.trim_start().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let magnitude = DurationText::parse(body)
            .map_err(|_| format!("'{text}' is not a duration (e.g. 1s, 250ms, -5m)"))?
            .value();
        let ms =
            i64::try_from(magnitude.as_millis()).map_err(|_| format!("'{text}' is too long"))?;
        Ok(SignedDurationText {
            text: text.to_string(),
            millis: if negative { -ms } else { ms },
        })
    }

    /// Milliseconds, negative for a duration back in time.
    pub fn millis(&self) -> i64 {
        self.millis
    }

    /// The text as the file wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl Serialize for SignedDurationText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for SignedDurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        SignedDurationText::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for SignedDurationText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SignedDuration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A duration, negative with a leading '-': numbers each followed by a \
                            unit (ms, s, m, h), e.g. 1s, 250ms, -5m.",
            "type": "string",
            "pattern": SIGNED_PATTERN,
            "examples": ["1s", "250ms", "-5m"],
        })
    }
}

/// [`PATTERN`] after an optional minus sign.
const SIGNED_PATTERN: &str = r"^\s*-?(?:0|(?:[0-9]+(?:\.[0-9]+)?\s*[a-zA-Zµ]+\s*)+)\s*$";

#[cfg(test)]
mod tests {
    use super::*;

    /// A signed duration reads what a duration reads, after an optional minus, and keeps its text;
    /// the minus alone, a bare number, and a sign inside are refused naming the text.
    #[test]
    fn a_signed_duration_is_read_in_milliseconds() {
        for (text, ms) in [
            ("1s", 1000),
            ("-5m", -300_000),
            ("250ms", 250),
            ("0", 0),
            ("-1h 30m", -5_400_000),
        ] {
            let d = SignedDurationText::parse(text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((d.millis(), d.as_str()), (ms, text));
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("{text:?}"));
        }
        for bad in ["-", "30", "--5s", "5-s", ""] {
            let e = SignedDurationText::parse(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
        // The schema's pattern: the unsigned one with an optional '-' after the leading spaces.
        assert_eq!(SIGNED_PATTERN.replacen("-?", "", 1), PATTERN);
    }

    /// What humantime reads is read, and written back as the file wrote it; what it refuses
    /// is refused naming the text (the schema's pattern is checked against the shipped files by
    /// the cli's schema test).
    #[test]
    fn a_duration_is_read_and_its_text_kept() {
        for ok in [
            "30s", "1m30s", "500ms", "1.5s", "2h 5min", " 10 s ", "0", "1µs",
        ] {
            let d = DurationText::parse(ok).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(serde_json::to_string(&d).unwrap(), format!("{ok:?}"));
        }
        assert_eq!(DurationText::parse("1m30s").unwrap().value().as_secs(), 90);
        for bad in ["30", "s", "", "1.s", "-5s"] {
            assert!(DurationText::parse(bad).is_err(), "{bad}");
        }
        let e = serde_json::from_str::<DurationText>("\"soon\"").unwrap_err();
        assert!(e.to_string().contains("'soon' is not a duration"), "{e}");
    }
}
