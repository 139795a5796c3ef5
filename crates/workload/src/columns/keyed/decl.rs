//! The generators of a value fixed by the record's key number, or near it. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// Generators of a value fixed by, or near, the record's key number. (`columns::Generator::Keyed`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum KeyedGenerator {
    /// `start + (key number mod modulo) x step`: a record's value is fixed by its key.
    Sequence {
        #[serde(default)]
        start: i64,
        #[serde(default = "one")]
        step: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        modulo: Option<u64>,
    },
    /// A recent key number (YCSB's "latest" skew, for a column that refers to another record):
    /// the record's own key number minus a Zipfian distance in 0..window (0 the most likely),
    /// never below 0.
    Latest {
        #[serde(default = "latest_window")]
        window: u64,
        #[serde(default = "zipfian_theta")]
        theta: f64,
    },
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &["sequence", "latest"];

impl KeyedGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            KeyedGenerator::Sequence { .. } => "sequence",
            KeyedGenerator::Latest { .. } => "latest",
        }
    }
}

fn latest_window() -> u64 {
    1000
}

fn one() -> i64 {
    1
}

fn zipfian_theta() -> f64 {
    crate::generator::zipfian::ZIPFIAN_CONSTANT
}
