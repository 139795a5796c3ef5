//! Pass/fail thresholds on a run's figures (`--threshold 'read.p99<10ms'`, or a service-level
//! file's `[run]` list), as k6 users gate CI on `p(99)<10`: each is judged against every measured
//! phase, and a broken one makes the command exit 4.
//!
//! A threshold is `[OPERATION.]FIGURE COMPARISON VALUE[UNIT]`:
//! - FIGURE: a latency (`p50`, `p90`, `p95`, `p99`, `p99.9`, `p99.99`, `max`, `mean`; VALUE in
//!   `us`, `ms` (the default) or `s`), `throughput` (successful operations per second), `errors`
//!   (failed operations; `%` makes it their share of the completed ones);
//! - OPERATION: a YCSB operation (`read`, `update`, `insert`, `scan`, `read-modify-write`,
//!   `delete`, `batch-insert`), any case; without one, every operation of the phase together
//!   (latencies merged by histogram);
//! - COMPARISON: `<`, `<=`, `>`, `>=`.
//!
//! Latencies are the headline figures: on an open loop the time from each operation's intended
//! start (coordinated omission corrected), else the service time. A figure the phase did not
//! measure (no READ in it, no successful operation) breaks its threshold: nothing was shown to
//! meet it.

use std::fmt;
use std::str::FromStr;

use crate::histogram::{decode_histogram, LatencyHistogram, LatencySummary};
use crate::result::{OpResult, PhaseResult};
pub use verdict::{ThresholdReport, Verdict};

/// The operations a threshold may name, as the result names them.
const OPERATIONS: [&str; 7] = [
    "READ",
    "UPDATE",
    "INSERT",
    "SCAN",
    "READ-MODIFY-WRITE",
    "DELETE",
    "BATCH-INSERT",
];

/// What a threshold bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// A latency quantile (0.5 .. 0.9999), microseconds.
    Quantile(f64),
    MaxLatency,
    MeanLatency,
    Throughput,
    Errors,
    ErrorPercent,
}

impl Figure {
    /// The unit of the figure's bound and measure.
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Quantile(_) | Figure::MaxLatency | Figure::MeanLatency => "us",
            Figure::Throughput => "ops/s",
            Figure::Errors => "",
            Figure::ErrorPercent => "%",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    Below,
    AtMost,
    Above,
    AtLeast,
}

impl Comparison {
    fn holds(self, measured: f64, bound: f64) -> bool {
        match self {
            Comparison::Below => measured < bound,
            Comparison::AtMost => measured <= bound,
            Comparison::Above => measured > bound,
            Comparison::AtLeast => measured >= bound,
        }
    }
}

/// One threshold as written, and what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// As the user wrote it (the verdict quotes it).
    pub text: String,
    /// `None`: every operation of the phase together.
    pub operation: Option<String>,
    pub figure: Figure,
    pub comparison: Comparison,
    /// In the figure's own unit: microseconds, operations per second, a count or a percent.
    pub bound: f64,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Threshold {
    type Err = String;

    fn from_str(text: &str) -> Result<Threshold, String> {
        let bad = |why: &str| format!("threshold '{text}': {why}");
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let at = compact
            .find(['<', '>'])
            .ok_or_else(|| bad("no comparison (<, <=, > or >=)"))?;
        let (subject, rest) = compact.split_at(at);
        let (comparison, value) = match rest.as_bytes() {
            [b'<', b'=', ..] => (Comparison::AtMost, &rest[2..]),
            [b'>', b'=', ..] => (Comparison::AtLeast, &rest[2..]),
            [b'<', ..] => (Comparison::Below, &rest[1..]),
            _ => (Comparison::Above, &rest[1..]),
        };
        let lower = subject.to_ascii_lowercase();
        let (operation, figure_name) = split_operation(&lower).map_err(|why| bad(&why))?;
        let figure = figure_of(figure_name).ok_or_else(|| {
            bad(&format!(
                "unknown figure '{figure_name}' (p50, p90, p95, p99, p99.9, p99.99, max, mean, \
                 throughput, errors)"
            ))
        })?;
        let (figure, bound) = bound_of(figure, value).map_err(|why| bad(&why))?;
        Ok(Threshold {
            text: text.trim().to_string(),
            operation,
            figure,
            comparison,
            bound,
        })
    }
}

/// `read.p99` -> (Some("READ"), "p99"); `p99.9` -> (None, "p99.9"): a prefix is an operation
/// only if it names one, since a quantile holds a dot too.
fn split_operation(subject: &str) -> Result<(Option<String>, &str), String> {
    if let Some((prefix, figure)) = subject.split_once('.') {
        let upper = prefix.to_ascii_uppercase();
        if OPERATIONS.contains(&upper.as_str()) {
            return Ok((Some(upper), figure));
        }
        if !prefix.starts_with('p') || prefix[1..].parse::<u32>().is_err() {
            return Err(format!(
                "unknown operation '{prefix}' (one of {})",
                OPERATIONS.join(", ").to_ascii_lowercase()
            ));
        }
    }
    Ok((None, subject))
}

fn figure_of(name: &str) -> Option<Figure> {
    Some(match name {
        "max" => Figure::MaxLatency,
        "mean" | "avg" => Figure::MeanLatency,
        "throughput" | "ops" => Figure::Throughput,
        "errors" => Figure::Errors,
        _ => {
            let q: f64 = name.strip_prefix('p')?.parse().ok()?;
            if !(q > 0.0 && q < 100.0) {
                return None;
            }
            // 99.9 / 100 is 0.9990000000000001: the quantile as written, to 10 decimals.
            Figure::Quantile((q / 100.0 * 1e10).round() / 1e10)
        }
    })
}

/// The bound in the figure's unit; `errors` with `%` becomes [`Figure::ErrorPercent`].
fn bound_of(figure: Figure, value: &str) -> Result<(Figure, f64), String> {
    let number_end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(number_end);
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("'{value}' is not a number of at least 0"))?;
    let latency = matches!(
        figure,
        Figure::Quantile(_) | Figure::MaxLatency | Figure::MeanLatency
    );
    match (figure, unit) {
        (_, "us") if latency => Ok((figure, n)),
        (_, "" | "ms") if latency => Ok((figure, n * 1e3)),
        (_, "s") if latency => Ok((figure, n * 1e6)),
        (Figure::Throughput, "" | "/s" | "ops/s") => Ok((figure, n)),
        (Figure::Errors, "") => Ok((figure, n)),
        (Figure::Errors, "%") if n <= 100.0 => Ok((Figure::ErrorPercent, n)),
        _ => Err(format!("unit '{unit}' does not fit this figure")),
    }
}

/// The report of `thresholds` judged on `phases`, naming the service-level file they came from.
pub fn report(
    thresholds: &[Threshold],
    file: Option<String>,
    phases: &[PhaseResult],
) -> ThresholdReport {
    ThresholdReport {
        file,
        verdicts: judge(thresholds, phases),
    }
}

/// Every threshold judged on every phase of `phases`.
pub fn judge(thresholds: &[Threshold], phases: &[PhaseResult]) -> Vec<Verdict> {
    phases
        .iter()
        .flat_map(|p| thresholds.iter().map(move |t| judge_one(t, p)))
        .collect()
}

fn judge_one(t: &Threshold, phase: &PhaseResult) -> Verdict {
    let measured = measure(t, phase);
    let (measured, note) = match measured {
        Ok(v) => (Some(v), None),
        Err(why) => (None, Some(why)),
    };
    Verdict {
        threshold: t.text.clone(),
        phase: phase.phase.to_string(),
        met: measured.is_some_and(|v| t.comparison.holds(v, t.bound)),
        measured,
        unit: t.figure.unit().into(),
        note,
    }
}

/// The figure `t` bounds, as `phase` measured it.
fn measure(t: &Threshold, phase: &PhaseResult) -> Result<f64, String> {
    let ops: Vec<(&String, &OpResult)> = match &t.operation {
        Some(name) => {
            let op = phase
                .operations
                .get_key_value(name)
                .ok_or_else(|| format!("no {name} operation in the {} phase", phase.phase))?;
            vec![op]
        }
        None => phase.operations.iter().collect(),
    };
    let ok: u64 = ops.iter().map(|(_, o)| o.ok).sum();
    let failed: u64 = ops.iter().map(|(_, o)| o.failed_total()).sum();
    match t.figure {
        Figure::Throughput => Ok(match &t.operation {
            Some(_) => ops.iter().map(|(_, o)| o.throughput_ops_s).sum(),
            None => phase.totals.throughput_ops_s,
        }),
        Figure::Errors => Ok(failed as f64),
        Figure::ErrorPercent if ok + failed == 0 => Err("no operation completed".into()),
        Figure::ErrorPercent => Ok(100.0 * failed as f64 / (ok + failed) as f64),
        latency => {
            let merged = headline_latency(&ops)?;
            Ok(match latency {
                Figure::MaxLatency => merged.max() as f64 / 1e3,
                Figure::MeanLatency => merged.mean() / 1e3,
                Figure::Quantile(q) => merged.value_at_quantile(q) as f64 / 1e3,
                _ => unreachable!("the other figures are matched above"),
            })
        }
    }
}

/// The operations' headline latencies (intended-start on an open loop) merged by histogram.
fn headline_latency(ops: &[(&String, &OpResult)]) -> Result<LatencyHistogram, String> {
    let mut merged: Option<LatencyHistogram> = None;
    for (name, op) in ops {
        let summary: Option<&LatencySummary> = op.intended_latency.as_ref().or(op.latency.as_ref());
        let Some(summary) = summary else { continue };
        let h = decode_histogram(&summary.histogram).map_err(|e| format!("{name}: {e}"))?;
        match &mut merged {
            Some(m) => crate::histogram::add_into(m, &h),
            None => merged = Some(h),
        }
    }
    merged
        .filter(|h| !h.is_empty())
        .ok_or_else(|| "no successful operation to take a latency from".into())
}

pub mod verdict;

#[cfg(test)]
mod tests;
