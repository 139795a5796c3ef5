//! Comparing two runs: per operation, throughput and latency percentiles, each with a significance
//! test on the runs' interval series that accounts for their autocorrelation.
//!
//! Interval samples of one run are not independent (a slow second tends to follow a slow second), so a
//! plain t-test over them overstates confidence. Each series' effective sample size is taken from its
//! lag-1 autocorrelation r as n (1 - r) / (1 + r) (the AR(1) variance inflation; negative r is treated
//! as 0), and Welch's t-test runs on those effective sizes. Several metrics are tested at once, so the
//! p-values are adjusted by Holm's step-down method (the family-wise error rate stays at alpha: with
//! six independent tests at 0.05, one false alarm would otherwise come every fourth comparison of
//! identical runs). A difference counts as significant when its adjusted p < alpha and it is at least
//! `min_change` of the baseline: smaller differences are below what a benchmark on a shared machine
//! can claim, however many samples agree on them.

use scalebench_measure::{PhaseResult, RunResult};
use scalebench_stats::{holm, series_stats, welch_p, SeriesStats};
use serde::Serialize;

/// What higher values of a metric mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricComparison {
    pub operation: String,
    /// `throughput_ops_s`, `p50_us`, `p99_us`.
    pub metric: String,
    pub better: Better,
    /// The runs' overall figures (throughput of the window; percentiles of the merged histograms).
    pub a: f64,
    pub b: f64,
    /// (b - a) / a.
    pub change: f64,
    /// Welch's test on this metric alone.
    pub p_value: f64,
    /// Holm-adjusted over all metrics of the comparison: what `significant` is decided on.
    pub p_adjusted: f64,
    pub significant: bool,
    /// Significant and worse than A.
    pub regression: bool,
    pub a_series: SeriesStats,
    pub b_series: SeriesStats,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub alpha: f64,
    pub min_change: f64,
    pub metrics: Vec<MetricComparison>,
    /// Operations only one run has.
    pub unmatched: Vec<String>,
    /// Both runs had a consistency probe: their stale fractions compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_fraction: Option<StaleComparison>,
}

/// The stale fractions of two runs' probe reads at the first delay at least half of whose reads
/// kept it in both (the headline stale share's rule, docs/consistency.md). All of a run's
/// probe reads are not independent trials (a stale write is chased and read again and again), but
/// the reads at one delay are one per probe write: the test is a two-proportion z-test on those.
/// Writes close in time can still share a cause (one pause makes several stale), so with faults the
/// p-value is approximate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StaleComparison {
    pub delay_ms: f64,
    /// Stale fractions at that delay.
    pub a: f64,
    pub b: f64,
    pub a_reads: u64,
    pub b_reads: u64,
    pub p_value: f64,
    /// p < alpha (not adjusted with the operations' metrics: it is another question).
    pub significant: bool,
}

fn compare_staleness(a: &PhaseResult, b: &PhaseResult, alpha: f64) -> Option<StaleComparison> {
    let (ca, cb) = (a.consistency.as_ref()?, b.consistency.as_ref()?);
    let (pa, pb) = ca.t_visibility.iter().find_map(|pa| {
        let pb = cb
            .t_visibility
            .iter()
            .find(|pb| pb.delay_ms == pa.delay_ms && pb.kept_by_most())?;
        pa.kept_by_most().then_some((pa, pb))
    })?;
    let (fa, fb) = (1.0 - pa.consistent_fraction, 1.0 - pb.consistent_fraction);
    let p_value = scalebench_stats::two_proportion_p(fa, pa.samples as f64, fb, pb.samples as f64);
    Some(StaleComparison {
        delay_ms: pa.delay_ms,
        a: fa,
        b: fb,
        a_reads: pa.samples,
        b_reads: pb.samples,
        p_value,
        significant: p_value < alpha,
    })
}

/// Fewer full intervals than this on either side, and the test cannot tell a change from noise
/// (with one interval its p-value is 1 whatever happened).
pub const MIN_TEST_INTERVALS: usize = 5;

impl MetricComparison {
    /// B is worse than A on this metric (significant or not).
    pub fn worse(&self) -> bool {
        match self.better {
            Better::Higher => self.b < self.a,
            Better::Lower => self.b > self.a,
        }
    }

    /// Too few full intervals on either side for the significance test to mean anything.
    pub fn untestable(&self) -> bool {
        self.a_series.n < MIN_TEST_INTERVALS || self.b_series.n < MIN_TEST_INTERVALS
    }
}

impl Comparison {
    /// The comparison as a table: a line per metric with both values, the change, p before and
    /// after Holm's adjustment and the verdict; then what only one run has, and the probe's stale
    /// reads.
    pub fn table(&self, a: &str, b: &str) -> String {
        use crate::terminal::{text_table, Align::*};
        let rows: Vec<Vec<String>> = self
            .metrics
            .iter()
            .map(|m| {
                let verdict = match (m.significant, m.regression) {
                    (true, true) => "worse (significant)",
                    (true, false) => "better (significant)",
                    _ => "no significant difference",
                };
                vec![
                    m.operation.clone(),
                    m.metric.to_string(),
                    format!("{:.1}", m.a),
                    format!("{:.1}", m.b),
                    format!("{:.1}%", m.change * 100.0),
                    format!("{:.4}", m.p_value),
                    format!("{:.4}", m.p_adjusted),
                    verdict.to_string(),
                ]
            })
            .collect();
        let mut t = format!("A = {a}\nB = {b}\n");
        t.push_str(&text_table(
            &[
                "operation",
                "metric",
                "A",
                "B",
                "change",
                "p",
                "p (Holm)",
                "verdict",
            ],
            &[Left, Left, Right, Right, Right, Right, Right, Left],
            &rows,
        ));
        for op in &self.unmatched {
            t.push_str(&format!("{op}: in one run only\n"));
        }
        if let Some(s) = &self.stale_fraction {
            t.push_str(&format!(
            "stale share at {} ms (consistency probe): A {:.2}% B {:.2}% (p = {:.4}, of {} and {} reads, at most one per probe write)  {}\n",
            s.delay_ms,
            100.0 * s.a,
            100.0 * s.b,
            s.p_value,
            s.a_reads,
            s.b_reads,
            if s.significant {
                "significant difference"
            } else {
                "no significant difference"
            }
        ));
        }
        t
    }

    /// Changes for the worse beyond `threshold` that the test could not judge (too few intervals):
    /// a gate must not pass them as "no significant difference".
    pub fn untested_beyond(&self, threshold: f64) -> Vec<&MetricComparison> {
        self.metrics
            .iter()
            .filter(|m| m.untestable() && !m.regression && m.worse() && m.change.abs() > threshold)
            .collect()
    }

    /// `compare --fail-above PCT`: one line per regression beyond `pct` percent, significant or
    /// untested (a gate cannot pass what it could not test); none: the gate passes.
    pub fn gate(&self, pct: f64) -> Vec<String> {
        let significant = self.regressions_beyond(pct / 100.0).into_iter().map(|m| {
            format!(
                "regression: {} {} {:+.1}% (Holm-adjusted p = {:.4}), beyond {pct}%",
                m.operation,
                m.metric,
                m.change * 100.0,
                m.p_adjusted
            )
        });
        let untested = self.untested_beyond(pct / 100.0).into_iter().map(|m| {
            format!(
                "regression (untested): {} {} {:+.1}%, beyond {pct}%, with only {} and {} full intervals",
                m.operation,
                m.metric,
                m.change * 100.0,
                m.a_series.n,
                m.b_series.n
            )
        });
        significant.chain(untested).collect()
    }

    /// The regressions worse than `threshold` (a share: 0.1 = 10%).
    pub fn regressions_beyond(&self, threshold: f64) -> Vec<&MetricComparison> {
        self.metrics
            .iter()
            .filter(|m| m.regression && m.change.abs() > threshold)
            .collect()
    }
}

/// The measured phase of a result: its last (the run after an automatic load).
pub fn measured_phase(r: &RunResult) -> Option<&PhaseResult> {
    r.phases.last()
}

/// Per-interval values of one operation inside the window (full intervals only).
fn interval_series(p: &PhaseResult, op: &str, metric: &str) -> Vec<f64> {
    p.intervals
        .iter()
        .filter(|i| i.start_s + p.interval_s <= p.duration_s + 1e-6)
        .filter_map(|i| {
            let Some(o) = i.operations.get(op) else {
                // Nothing completed in the interval (a stall): a rate of zero, no latency.
                return (metric == "throughput_ops_s").then_some(0.0);
            };
            match metric {
                "throughput_ops_s" => Some(o.ops_s),
                _ if o.ok == 0 => None,
                "p50_us" => Some(o.p50_us),
                // From the intended start in an open loop: what users waited.
                _ => Some(o.intended_p99_us.unwrap_or(o.p99_us)),
            }
        })
        .collect()
}

pub fn compare(a: &PhaseResult, b: &PhaseResult, alpha: f64, min_change: f64) -> Comparison {
    let mut metrics = Vec::new();
    let mut unmatched = Vec::new();
    let ops: std::collections::BTreeSet<&String> =
        a.operations.keys().chain(b.operations.keys()).collect();
    for op in ops {
        let (Some(oa), Some(ob)) = (a.operations.get(op), b.operations.get(op)) else {
            unmatched.push(op.clone());
            continue;
        };
        let lat = |o: &scalebench_measure::OpResult, p99: bool| {
            let l = o.intended_latency.as_ref().or(o.latency.as_ref());
            l.map_or(0.0, |l| if p99 { l.p99_us } else { l.p50_us })
        };
        for (metric, better, va, vb) in [
            (
                "throughput_ops_s",
                Better::Higher,
                oa.throughput_ops_s,
                ob.throughput_ops_s,
            ),
            ("p50_us", Better::Lower, lat(oa, false), lat(ob, false)),
            ("p99_us", Better::Lower, lat(oa, true), lat(ob, true)),
        ] {
            let sa = series_stats(&interval_series(a, op, metric));
            let sb = series_stats(&interval_series(b, op, metric));
            let p_value = welch_p(&sa, &sb);
            let change = if va == 0.0 { 0.0 } else { (vb - va) / va };
            metrics.push(MetricComparison {
                operation: op.clone(),
                metric: metric.into(),
                better,
                a: va,
                b: vb,
                change,
                p_value,
                p_adjusted: p_value,
                significant: false,
                regression: false,
                a_series: sa,
                b_series: sb,
            });
        }
    }
    let adjusted = holm(&metrics.iter().map(|m| m.p_value).collect::<Vec<_>>());
    for (m, p) in metrics.iter_mut().zip(adjusted) {
        m.p_adjusted = p;
        m.significant = p < alpha && m.change.abs() >= min_change;
        m.regression = m.significant && m.worse();
    }
    Comparison {
        alpha,
        min_change,
        metrics,
        unmatched,
        stale_fraction: compare_staleness(a, b, alpha),
    }
}
