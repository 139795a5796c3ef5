//! What one operation under load cost (the event's figures a service level is judged on), from the
//! run's intervals: the baseline before the action, the event from the action until the cluster was
//! stable again (Dory's criterion and the database's idle signals) or the run ended.
//!
//! Definitions (docs/operations.md):
//! - impact factor: the worst interval's p99 (p99.9) during the event over the baseline's p99
//!   (p99.9) of all its intervals' operations together; latencies from the intended start with an
//!   open loop (coordinated omission corrected), service times otherwise;
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
    pub baseline_p99_us: f64,
    pub baseline_p999_us: f64,
    pub worst_p99_us: f64,
    pub worst_p999_us: f64,
    /// Worst over baseline; absent without a baseline latency.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_impact: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p999_impact: Option<f64>,
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
    let mut baseline = new_histogram();
    for s in &before {
        let _ = baseline.add(&s.histogram);
    }
    let baseline_time: f64 = before.iter().map(|s| s.duration_s).sum();
    let baseline_ops_s = before.iter().map(|s| s.ok).sum::<u64>() as f64 / baseline_time;
    let during: Vec<(&Slice, f64)> = all
        .iter()
        .filter_map(|s| {
            let overlap = (s.start_s + s.duration_s).min(end) - s.start_s.max(start);
            (overlap > 1e-9).then_some((s, overlap / s.duration_s))
        })
        .collect();
    let worst = |q: f64| {
        during
            .iter()
            .filter(|(s, _)| !s.histogram.is_empty())
            .map(|(s, _)| quantile_us(&s.histogram, q))
            .fold(0.0, f64::max)
    };
    let (baseline_p99_us, baseline_p999_us) =
        (quantile_us(&baseline, 0.99), quantile_us(&baseline, 0.999));
    let (worst_p99_us, worst_p999_us) = (worst(0.99), worst(0.999));
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
        worst_p99_us,
        worst_p999_us,
        p99_impact: factor(worst_p99_us, baseline_p99_us),
        p999_impact: factor(worst_p999_us, baseline_p999_us),
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
}
