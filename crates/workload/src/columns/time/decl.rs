//! The timestamp generators, as a file declares them. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

use crate::duration::{DurationText, SignedDurationText};

/// Generators of timestamps. (`columns::Generator::Time`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeGenerator {
    /// `start + key number x step`, plus up to `jitter` drawn uniformly (durations: 1s, 250ms).
    Timestamp {
        #[serde(default = "epoch_text")]
        start: String,
        #[serde(default = "one_second")]
        step: SignedDurationText,
        #[serde(default = "no_jitter")]
        jitter: DurationText,
    },
    /// The client's clock when the value is made, plus `offset` (e.g. "-5m"): not reproducible.
    Now {
        #[serde(default = "no_offset")]
        offset: SignedDurationText,
    },
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["timestamp", "now"];

impl TimeGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            TimeGenerator::Timestamp { .. } => "timestamp",
            TimeGenerator::Now { .. } => "now",
        }
    }
}

fn epoch_text() -> String {
    "2026-01-01T00:00:00Z".into()
}

fn one_second() -> SignedDurationText {
    SignedDurationText::parse("1s").expect("a duration")
}

fn no_jitter() -> DurationText {
    DurationText::parse("0s").expect("a duration")
}

fn no_offset() -> SignedDurationText {
    SignedDurationText::parse("0s").expect("a duration")
}
