//! What one operation under load cost (the event's figures a service level is judged on), from the
//! run's intervals: the baseline before the action, the event from the action until the cluster was
//! stable again (Dory's criterion and the database's idle signals) or the run ended.
//!
//! Definitions (docs/operations.md), each a ratio of like to like so that an operation that changes
//! nothing scores about 1 whatever the event's length:
//! - impact factor: the event's p99 (p99.9) of all its intervals' operations together over the
//!   baseline's p99 (p99.9) of all its intervals' operations together (pooled against pooled);
//!   latencies from the intended start with an open loop (coordinated omission corrected), service
//!   times otherwise;
//! - worst-interval impact: the event's worst interval p99 (p99.9) over the worst the baseline is
//!   expected to show in as many intervals (the expected maximum of that many intervals drawn from
//!   the baseline's). The worst of k noisy intervals grows with k: divided by the baseline's pooled
//!   p99 it scored a no-op event 1.06 over 2 s and 1.55 over 60 s (simulated, issue 61);
//! - recovery: from the action to stability;
//! - throughput lost: the operations the event completed below the baseline's rate, integrated
//!   over its intervals (each counted for the part of it inside the event), and that as a share of
//!   the baseline's rate over the event;
//! - availability: the share of the event's intervals in which no operation failed.

use std::collections::BTreeMap;

use scalebench_measure::{
    decode_histogram, new_histogram, quantile_us, LatencyHistogram, PhaseResult,
};
use serde::{Deserialize, Serialize};

use crate::Events;

/// The figures of one event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventFigures {
    /// The event, seconds after the measurement start: from the action to stability, or to the
    /// end of the run when it never became stable (`recovered` false).
    pub start_s: f64,
    pub end_s: f64,
    pub recovered: bool,
    /// Seconds from the action to stability.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<f64>,
    /// The event's p99 (p99.9) over all its intervals' operations together, and the baseline's
    /// over spans as long as the event (their mean; over the whole baseline when it is shorter
    /// than two such spans).
    pub baseline_p99_us: f64,
    pub baseline_p999_us: f64,
    #[serde(default)]
    pub event_p99_us: f64,
    #[serde(default)]
    pub event_p999_us: f64,
    /// Event over baseline, pooled against pooled; absent without a baseline latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_impact: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p999_impact: Option<f64>,
    /// The event's worst interval p99 (p99.9).
    pub worst_p99_us: f64,
    pub worst_p999_us: f64,
    /// The worst interval p99 (p99.9) the baseline is expected to show in as many intervals as
    /// the event has ([`expected_worst`]).
    #[serde(default)]
    pub baseline_worst_p99_us: f64,
    #[serde(default)]
    pub baseline_worst_p999_us: f64,
    /// Worst interval over the baseline's expected worst of as many; absent without a baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_p99_impact: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_p999_impact: Option<f64>,
    /// Intervals of the baseline: fewer than the event's make its expected worst an underestimate
    /// (it cannot exceed the baseline's own worst), so the worst-interval impact reads high.
    #[serde(default)]
    pub baseline_intervals: usize,
    pub baseline_ops_s: f64,
    pub throughput_lost_ops: f64,
    /// Of the operations the baseline's rate would have completed during the event, percent.
    pub throughput_lost_pct: f64,
    pub completed: u64,
    pub failed: u64,
    /// Failures during the event by class (timeout, unavailable, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<String, u64>,
    /// Intervals (in part) inside the event, and the percentage of them without a failure.
    pub intervals: usize,
    pub availability_pct: f64,
    /// The run's acknowledged writes read back after it (`--verify-writes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_writes: Option<scalebench_measure::result::LostWrites>,
}

/// One interval, all its operations together.
struct Slice {
    start_s: f64,
    duration_s: f64,
    ok: u64,
    failed: u64,
    errors: BTreeMap<String, u64>,
    histogram: LatencyHistogram,
}

fn slices(p: &PhaseResult) -> Vec<Slice> {
    p.intervals
        .iter()
        .map(|i| {
            let mut histogram = new_histogram();
            let mut errors = BTreeMap::new();
            for o in i.operations.values() {
                let h = o.intended_histogram.as_ref().or(o.histogram.as_ref());
                if let Some(h) = h.and_then(|h| decode_histogram(h).ok()) {
                    let _ = histogram.add(&h);
                }
                for (class, n) in &o.failed_by_class {
                    *errors.entry(class.clone()).or_insert(0) += n;
                }
            }
            Slice {
                start_s: i.start_s,
                // The last interval may be cut short by the run's end.
                duration_s: (p.duration_s - i.start_s).clamp(f64::MIN_POSITIVE, p.interval_s),
                ok: i.operations.values().map(|o| o.ok).sum(),
                failed: i.operations.values().map(|o| o.failed).sum(),
                errors,
                histogram,
            }
        })
        .collect()
}

/// The figures of the event `events` describes in run `p`; `None` without intervals before the
/// action (no baseline to compare with).
pub fn event_figures(p: &PhaseResult, events: &Events) -> Option<EventFigures> {
    let mut f = figures(&slices(p), p.duration_s, events)?;
    f.lost_writes = p.lost_writes.clone();
    Some(f)
}

fn figures(all: &[Slice], run_s: f64, events: &Events) -> Option<EventFigures> {
    let start = events.scale_issued_s;
    let end = events
        .stable_s
        .unwrap_or(run_s)
        .max(start + f64::MIN_POSITIVE);
    let before: Vec<&Slice> = all
        .iter()
        .filter(|s| s.start_s + s.duration_s <= start + 1e-9)
        .collect();
    if before.is_empty() {
        return None;
    }
    let baseline = pooled(before.iter().copied());
    let baseline_time: f64 = before.iter().map(|s| s.duration_s).sum();
    let baseline_ops_s = before.iter().map(|s| s.ok).sum::<u64>() as f64 / baseline_time;
    let during: Vec<(&Slice, f64)> = all
        .iter()
        .filter_map(|s| {
            let overlap = (s.start_s + s.duration_s).min(end) - s.start_s.max(start);
            (overlap > 1e-9).then_some((s, overlap / s.duration_s))
        })
        .collect();
    let event = pooled(during.iter().map(|(s, _)| *s));
    let interval_quantiles = |slices: &mut dyn Iterator<Item = &Slice>, q: f64| -> Vec<f64> {
        slices
            .filter(|s| !s.histogram.is_empty())
            .map(|s| quantile_us(&s.histogram, q))
            .collect()
    };
    let event_intervals = |q: f64| interval_quantiles(&mut during.iter().map(|(s, _)| *s), q);
    let baseline_intervals = |q: f64| interval_quantiles(&mut before.iter().copied(), q);
    let worst = |q: f64| event_intervals(q).into_iter().fold(0.0, f64::max);
    let k = event_intervals(0.99).len();
    let (baseline_p99_us, baseline_p999_us) = (
        as_long_as(&before, during.len(), &baseline, 0.99),
        as_long_as(&before, during.len(), &baseline, 0.999),
    );
    let (event_p99_us, event_p999_us) = (quantile_us(&event, 0.99), quantile_us(&event, 0.999));
    let (worst_p99_us, worst_p999_us) = (worst(0.99), worst(0.999));
    let (baseline_worst_p99_us, baseline_worst_p999_us) = (
        expected_worst(&baseline_intervals(0.99), k),
        expected_worst(&baseline_intervals(0.999), k),
    );
    let factor = |worst: f64, base: f64| (base > 0.0).then(|| worst / base);
    let throughput_lost_ops: f64 = during
        .iter()
        .map(|(s, share)| {
            let rate = s.ok as f64 / s.duration_s;
            (baseline_ops_s - rate).max(0.0) * s.duration_s * share
        })
        .sum();
    let expected = baseline_ops_s * (end - start);
    let mut errors = BTreeMap::new();
    for (s, _) in &during {
        for (class, n) in &s.errors {
            *errors.entry(class.clone()).or_insert(0) += n;
        }
    }
    let clean = during.iter().filter(|(s, _)| s.failed == 0).count();
    Some(EventFigures {
        start_s: start,
        end_s: end,
        recovered: events.stable_s.is_some(),
        recovery_s: events.stable_s.map(|t| t - start),
        baseline_p99_us,
        baseline_p999_us,
        event_p99_us,
        event_p999_us,
        p99_impact: factor(event_p99_us, baseline_p99_us),
        p999_impact: factor(event_p999_us, baseline_p999_us),
        worst_p99_us,
        worst_p999_us,
        baseline_worst_p99_us,
        baseline_worst_p999_us,
        worst_p99_impact: factor(worst_p99_us, baseline_worst_p99_us),
        worst_p999_impact: factor(worst_p999_us, baseline_worst_p999_us),
        baseline_intervals: before.len(),
        baseline_ops_s,
        throughput_lost_ops,
        throughput_lost_pct: if expected > 0.0 {
            100.0 * throughput_lost_ops / expected
        } else {
            0.0
        },
        completed: during.iter().map(|(s, _)| s.ok).sum(),
        failed: during.iter().map(|(s, _)| s.failed).sum(),
        errors,
        intervals: during.len(),
        availability_pct: if during.is_empty() {
            100.0
        } else {
            100.0 * clean as f64 / during.len() as f64
        },
        lost_writes: None,
    })
}

/// The slices' operations in one histogram.
fn pooled<'a>(slices: impl Iterator<Item = &'a Slice>) -> LatencyHistogram {
    let mut all = new_histogram();
    for s in slices {
        let _ = all.add(&s.histogram);
    }
    all
}

/// The baseline's percentile `q` over spans as long as the event (`k` intervals): the mean of its
/// consecutive spans' percentiles, each over its operations together, when the baseline holds two
/// such spans at least; else over the whole baseline (`all`). A percentile of fewer operations
/// reads lower (a p99 of 400 lognormal latencies is 7% below that of 12,000): so the event's is
/// compared with the baseline's of as many.
fn as_long_as(before: &[&Slice], k: usize, all: &LatencyHistogram, q: f64) -> f64 {
    if k == 0 || before.len() < 2 * k {
        return quantile_us(all, q);
    }
    let spans: Vec<f64> = before
        .chunks_exact(k)
        .map(|span| quantile_us(&pooled(span.iter().copied()), q))
        .collect();
    spans.iter().sum::<f64>() / spans.len() as f64
}

/// The expected maximum of `k` values drawn at random (with replacement) from `values`: sorted
/// x(1) <= ... <= x(n), the maximum is x(i) with probability (i/n)^k - ((i-1)/n)^k. So the baseline's
/// worst interval is compared over as many intervals as the event had. It cannot exceed the
/// largest value: with fewer baseline intervals than `k` it underestimates the true worst of `k`.
pub fn expected_worst(values: &[f64], k: usize) -> f64 {
    if values.is_empty() || k == 0 {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let k = k as i32;
    sorted
        .iter()
        .enumerate()
        .map(|(i, x)| x * ((((i + 1) as f64) / n).powi(k) - ((i as f64) / n).powi(k)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-second intervals: (ok, failed, latency of every operation in us; recorded in ns).
    fn run(v: &[(u64, u64, u64)]) -> Vec<Slice> {
        v.iter()
            .enumerate()
            .map(|(i, &(ok, failed, us))| {
                let mut histogram = new_histogram();
                histogram.record_n(us * 1000, ok).unwrap();
                Slice {
                    start_s: i as f64,
                    duration_s: 1.0,
                    ok,
                    failed,
                    errors: if failed > 0 {
                        BTreeMap::from([("unavailable".to_string(), failed)])
                    } else {
                        BTreeMap::new()
                    },
                    histogram,
                }
            })
            .collect()
    }

    #[test]
    fn an_event_is_measured_against_its_baseline() {
        // Baseline 100 ops/s at 1 ms; the action at 3 s; two bad intervals; stable at 6 s.
        let slices = run(&[
            (100, 0, 1000),
            (100, 0, 1000),
            (100, 0, 1000),
            (40, 10, 5000),
            (70, 0, 3000),
            (100, 0, 1000),
            (100, 0, 1000),
        ]);
        let events = Events {
            scale_issued_s: 3.0,
            stable_s: Some(6.0),
            ..Default::default()
        };
        let f = figures(&slices, 7.0, &events).unwrap();
        assert!(f.recovered);
        assert_eq!(f.recovery_s, Some(3.0));
        let near = |a: f64, b: f64| (a - b).abs() / b < 0.01;
        assert!(near(f.baseline_p99_us, 1000.0), "{}", f.baseline_p99_us);
        assert!(near(f.worst_p99_us, 5000.0), "{}", f.worst_p99_us);
        assert!(near(f.p99_impact.unwrap(), 5.0));
        // 60 + 30 operations below 100 ops/s over 3 s: 30% of what the baseline would have done.
        assert!(
            near(f.throughput_lost_ops, 90.0),
            "{}",
            f.throughput_lost_ops
        );
        assert!(near(f.throughput_lost_pct, 30.0));
        assert_eq!(f.failed, 10);
        assert_eq!(f.errors["unavailable"], 10);
        assert_eq!(f.intervals, 3);
        assert!(near(f.availability_pct, 200.0 / 3.0));
    }

    #[test]
    fn an_event_that_never_recovers_lasts_until_the_run_ends() {
        let slices = run(&[(100, 0, 1000), (100, 0, 1000), (0, 50, 0), (0, 50, 0)]);
        let events = Events {
            scale_issued_s: 2.5,
            ..Default::default()
        };
        let f = figures(&slices, 4.0, &events).unwrap();
        assert!(!f.recovered);
        assert_eq!(f.recovery_s, None);
        // Half of interval 2 and all of interval 3: 150 operations lost of 150 expected.
        assert!((f.throughput_lost_ops - 150.0).abs() < 1e-6);
        assert!((f.throughput_lost_pct - 100.0).abs() < 1e-6);
        assert_eq!(f.availability_pct, 0.0);
        // Without an interval before the action there is nothing to compare with.
        let early = Events::default();
        assert!(figures(&slices, 4.0, &early).is_none());
    }

    /// Intervals of 0.5 s at 200 ops/s, every latency lognormal (median 1 ms): the same service
    /// before and during the event, as when the operation did nothing.
    fn no_op_run(seed: u64, baseline_s: f64, event_s: f64) -> (Vec<Slice>, Events) {
        use rand::{rngs::SmallRng, Rng, SeedableRng};
        let mut rng = SmallRng::seed_from_u64(seed);
        let latency = rand_distr::LogNormal::new(0.0, 0.6).unwrap();
        let (interval, per_interval) = (0.5, 100);
        let n = ((baseline_s + event_s + 2.0) / interval) as usize;
        let slices = (0..n)
            .map(|i| {
                let mut histogram = new_histogram();
                for _ in 0..per_interval {
                    let ms: f64 = rng.sample(latency);
                    histogram.record((ms * 1e6) as u64).unwrap();
                }
                Slice {
                    start_s: i as f64 * interval,
                    duration_s: interval,
                    ok: per_interval,
                    failed: 0,
                    errors: BTreeMap::new(),
                    histogram,
                }
            })
            .collect();
        let events = Events {
            scale_issued_s: baseline_s,
            stable_s: Some(baseline_s + event_s),
            ..Default::default()
        };
        (slices, events)
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    fn an_operation_that_does_nothing_scores_about_one_at_any_event_length() {
        for event_s in [2.0, 10.0, 60.0] {
            let runs: Vec<EventFigures> = (0..24)
                .map(|seed| {
                    let (slices, events) = no_op_run(seed, 60.0, event_s);
                    figures(&slices, 60.0 + event_s + 2.0, &events).unwrap()
                })
                .collect();
            let pooled = median(runs.iter().map(|f| f.p99_impact.unwrap()).collect());
            let worst = median(runs.iter().map(|f| f.worst_p99_impact.unwrap()).collect());
            // The figure this replaced: the worst of k intervals over the pooled baseline.
            let unlike = median(
                runs.iter()
                    .map(|f| f.worst_p99_us / f.baseline_p99_us)
                    .collect(),
            );
            assert!(
                (0.95..=1.05).contains(&pooled),
                "{event_s} s: pooled {pooled}"
            );
            assert!((0.9..=1.1).contains(&worst), "{event_s} s: worst {worst}");
            if event_s >= 60.0 {
                assert!(unlike > 1.3, "{event_s} s: worst over pooled {unlike}");
            }
            let p999 = median(runs.iter().map(|f| f.p999_impact.unwrap()).collect());
            assert!((0.9..=1.1).contains(&p999), "{event_s} s: p99.9 {p999}");
        }
    }

    #[test]
    fn expected_worst_of_k_draws() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(expected_worst(&v, 1), 2.5);
        // Two draws: the maximum is 4 with probability 7/16, 3 with 5/16, 2 with 3/16, 1 with 1/16.
        assert!((expected_worst(&v, 2) - (28.0 + 15.0 + 6.0 + 1.0) / 16.0).abs() < 1e-12);
        assert!((expected_worst(&v, 1000) - 4.0).abs() < 1e-9);
        assert_eq!(expected_worst(&[], 3), 0.0);
    }
}
