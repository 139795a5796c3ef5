//! A threshold's verdict and a command's report of them: the data the result keeps (judged in
//! [`super`], read by the result, its page and the results database).

use serde::{Deserialize, Serialize};

/// One threshold judged on one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub threshold: String,
    /// `load` or `run`.
    pub phase: String,
    /// Absent when the phase did not measure it.
    pub measured: Option<f64>,
    /// `measured`'s unit: `us`, `ops/s`, `%` or empty (a count).
    pub unit: String,
    pub met: bool,
    /// Why it was not met or not judged, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a command's thresholds found: kept in the result, drawn on its page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdReport {
    /// The service-level file the thresholds came from, if any (besides `--threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub verdicts: Vec<Verdict>,
}

impl ThresholdReport {
    /// The verdicts not met.
    pub fn broken(&self) -> impl Iterator<Item = &Verdict> {
        self.verdicts.iter().filter(|v| !v.met)
    }
}

impl Verdict {
    /// One line: the threshold, the phase, what was measured and whether it held.
    pub fn line(&self) -> String {
        let measured = match (self.measured, &self.note) {
            (Some(v), _) if self.unit == "us" => format!("measured {} ms", trim(v / 1e3)),
            (Some(v), _) => format!("measured {} {}", trim(v), self.unit),
            (None, Some(why)) => why.clone(),
            (None, None) => "not measured".into(),
        };
        let verdict = if self.met { "met" } else { "BROKEN" };
        format!(
            "{verdict}: {} ({}: {})",
            self.threshold,
            self.phase,
            measured.trim_end()
        )
    }
}

/// A figure with three significant digits after its leading zeros (at most 6 decimals), trimmed.
fn trim(v: f64) -> String {
    let decimals = if v > 0.0 && v < 1.0 {
        (2.0 - v.log10().floor()).min(6.0) as usize
    } else {
        3
    };
    format!("{v:.decimals$}")
        .trim_end_matches('0')
        .trim_end_matches('.')
        .to_string()
}
