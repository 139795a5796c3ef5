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
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Mean, spread and effective size of one interval series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeriesStats {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// Lag-1 autocorrelation.
    pub r1: f64,
    pub n_eff: f64,
}

pub fn series_stats(v: &[f64]) -> SeriesStats {
    let n = v.len();
    let mean = if n == 0 {
        0.0
    } else {
        v.iter().sum::<f64>() / n as f64
    };
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    let sd = if n < 2 {
        0.0
    } else {
        (ss / (n - 1) as f64).sqrt()
    };
    let r1 = if n < 3 || ss == 0.0 {
        0.0
    } else {
        v.windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / ss
    };
    let r = r1.clamp(0.0, 0.99);
    SeriesStats {
        n,
        mean,
        sd,
        r1,
        n_eff: (n as f64 * (1.0 - r) / (1.0 + r)).max(2.0_f64.min(n as f64)),
    }
}

/// Two-sided p-value of Welch's t-test on effective sample sizes.
pub fn welch_p(a: &SeriesStats, b: &SeriesStats) -> f64 {
    if a.n < 2 || b.n < 2 {
        return 1.0;
    }
    let (va, vb) = (a.sd * a.sd / a.n_eff, b.sd * b.sd / b.n_eff);
    let se = (va + vb).sqrt();
    let diff = b.mean - a.mean;
    if se == 0.0 {
        return if diff == 0.0 { 1.0 } else { 0.0 };
    }
    let t = diff / se;
    let df = (va + vb).powi(2)
        / (va * va / (a.n_eff - 1.0).max(1.0) + vb * vb / (b.n_eff - 1.0).max(1.0));
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    }
}

/// Holm's step-down adjustment: the i-th smallest of m p-values is multiplied by (m - i), made
/// monotone, and capped at 1. Rejecting where the adjusted p < alpha keeps the family-wise error
/// rate at alpha.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

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
    /// Changes for the worse beyond `threshold` that the test could not judge (too few intervals):
    /// a gate must not pass them as "no significant difference".
    pub fn untested_beyond(&self, threshold: f64) -> Vec<&MetricComparison> {
        self.metrics
            .iter()
            .filter(|m| m.untestable() && !m.regression && m.worse() && m.change.abs() > threshold)
            .collect()
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autocorrelation_shrinks_the_effective_sample() {
        let white: Vec<f64> = (0..100)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let s = series_stats(&white);
        assert!(s.r1 < -0.9);
        assert_eq!(s.n_eff, 100.0, "negative correlation is not rewarded");
        // A slow drift: neighbours alike, few independent samples.
        let drift: Vec<f64> = (0..100).map(|i| (i as f64 / 10.0).sin()).collect();
        let d = series_stats(&drift);
        assert!(d.r1 > 0.9, "{}", d.r1);
        assert!(d.n_eff < 10.0, "{}", d.n_eff);
    }

    #[test]
    fn holm_adjusts_step_down() {
        // Sorted 0.01, 0.02, 0.04 of m = 3: x3, x2, x1 -> 0.03, 0.04, 0.04 (monotone).
        let adj = holm(&[0.04, 0.01, 0.02]);
        let expect = [0.04, 0.03, 0.04];
        for (a, e) in adj.iter().zip(expect) {
            assert!((a - e).abs() < 1e-12, "{adj:?}");
        }
        // 0.5 x 2 = 1.0 first; 0.9 x 1 stays at the running maximum.
        assert_eq!(holm(&[0.9, 0.5]), vec![1.0, 1.0]);
    }

    #[test]
    fn welch_matches_a_hand_computed_case() {
        // a: mean 10, sd 1, n 10; b: mean 11, sd 1, n 10 (no autocorrelation).
        let a = SeriesStats {
            n: 10,
            mean: 10.0,
            sd: 1.0,
            r1: 0.0,
            n_eff: 10.0,
        };
        let b = SeriesStats { mean: 11.0, ..a };
        // t = 1 / sqrt(0.2) = 2.236, df = 18: two-sided p = 0.0381.
        assert!(
            (welch_p(&a, &b) - 0.0381).abs() < 0.001,
            "{}",
            welch_p(&a, &b)
        );
        assert_eq!(welch_p(&a, &a), 1.0);
        // The same difference from autocorrelated series (n_eff 2.5) is not significant.
        let (a2, b2) = (
            SeriesStats { n_eff: 2.5, ..a },
            SeriesStats { n_eff: 2.5, ..b },
        );
        assert!(welch_p(&a2, &b2) > 0.1);
    }
}
