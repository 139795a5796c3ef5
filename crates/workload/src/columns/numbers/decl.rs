//! The number distributions' generators, as a file declares them. A new generator of this family is its variant here (with its name in
//! `NAMES`) and its arm in the family's `maker`.

use serde::{Deserialize, Serialize};

/// Generators of numbers drawn from a distribution. (`columns::Generator::Number`: a new one is its variant here, its name in
/// [`NAMES`] and its arm in its family\'s `maker`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum NumberGenerator {
    /// Uniform between min and max (both included for integers); a double column's values
    /// rounded to `decimals` when given.
    Uniform {
        min: f64,
        max: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decimals: Option<u32>,
    },
    /// YCSB's Zipfian over the integers min..=max (theta 0.99 unless given): min is the most common.
    Zipfian {
        min: i64,
        max: i64,
        #[serde(default = "zipfian_theta")]
        theta: f64,
    },
    /// YCSB's hotspot: a fraction of the values gets a fraction of the draws.
    Hotspot {
        min: i64,
        max: i64,
        #[serde(default = "hot_data")]
        hot_data_fraction: f64,
        #[serde(default = "hot_operations")]
        hot_operation_fraction: f64,
    },
    /// Exponential with this mean (non-negative).
    Exponential { mean: f64 },
    /// Normal (Gaussian).
    Normal { mean: f64, stddev: f64 },
    /// YCSB's histogram generator: bucket i (its value i x bucket_width) drawn with weight
    /// `buckets[i]`.
    Histogram {
        buckets: Vec<f64>,
        #[serde(default = "one")]
        bucket_width: i64,
    },
}

/// This family's generators, as a file names them.
pub(crate) const NAMES: &[&str] = &[
    "uniform",
    "zipfian",
    "hotspot",
    "exponential",
    "normal",
    "histogram",
];

impl NumberGenerator {
    pub fn name(&self) -> &'static str {
        match self {
            NumberGenerator::Uniform { .. } => "uniform",
            NumberGenerator::Zipfian { .. } => "zipfian",
            NumberGenerator::Hotspot { .. } => "hotspot",
            NumberGenerator::Exponential { .. } => "exponential",
            NumberGenerator::Normal { .. } => "normal",
            NumberGenerator::Histogram { .. } => "histogram",
        }
    }
}

fn hot_data() -> f64 {
    0.2
}

fn hot_operations() -> f64 {
    0.8
}

fn one() -> i64 {
    1
}

fn zipfian_theta() -> f64 {
    crate::generator::zipfian::ZIPFIAN_CONSTANT
}
