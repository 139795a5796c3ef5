//! The consistency a run measured beside its throughput (issue 32, docs/consistency.md): PBS's
//! t-visibility curve, one line per run or per experiment cell, and the distribution of the
//! staleness window; the pauses a fault made are bands on a run's time charts.

use scalebench_measure::consistency::VisibilityPoint;
use scalebench_measure::PhaseResult;

use crate::chart::{Chart, Scale, Series};

/// A delay of 0 ms on the curve's logarithmic axis (which has no 0): drawn at this many ms.
pub const ZERO_DELAY_AT_MS: f64 = 0.01;

/// t-visibility: P(a read started t ms after the acknowledgement returns the write), one series per
/// (name, points), with each delay's reads, its 95% interval and the reads that missed it as
/// columns. The x axis is logarithmic as in PBS's plots; a delay of 0 is drawn at 0.01 ms (and
/// stays 0 in the data).
pub fn visibility_chart(id: &str, lines: &[(String, Vec<VisibilityPoint>)]) -> Option<Chart> {
    let mut chart = Chart::new(
        &format!("{id}-t-visibility"),
        "t-visibility: reads that return the newest acknowledged write",
        "ms after the acknowledgement",
        "% consistent reads",
    );
    chart.x_scale = Scale::Log10;
    chart.log_zero_at = Some(ZERO_DELAY_AT_MS);
    chart.series = lines
        .iter()
        .map(|(name, points)| {
            let points: Vec<_> = points.iter().filter(|p| p.samples > 0).collect();
            let column = |name: &str, f: &dyn Fn(&VisibilityPoint) -> f64| {
                (name.to_string(), points.iter().map(|p| f(p)).collect())
            };
            Series {
                columns: vec![
                    column("reads", &|p| p.samples as f64),
                    column("95% CI low (%)", &|p| 100.0 * p.ci_low),
                    column("95% CI high (%)", &|p| 100.0 * p.ci_high),
                    column("reads that missed the delay", &|p| p.missed as f64),
                ],
                ..Series::new(
                    name.clone(),
                    points
                        .iter()
                        .map(|p| (p.delay_ms, 100.0 * p.consistent_fraction))
                        .collect(),
                )
            }
        })
        .collect();
    (!chart.is_empty()).then_some(chart)
}

/// Several runs' t-visibility pooled per delay: each read one sample (the fraction weighted by the
/// samples), the interval recomputed from the pooled counts.
pub fn pooled_visibility<'a>(
    phases: impl Iterator<Item = &'a PhaseResult>,
) -> Vec<VisibilityPoint> {
    let mut by_delay: std::collections::BTreeMap<u64, (f64, u64, u64, u64)> = Default::default();
    for p in phases.filter_map(|p| p.consistency.as_ref()) {
        for v in &p.t_visibility {
            let e = by_delay
                .entry(v.delay_ms.to_bits())
                .or_insert((v.delay_ms, 0, 0, 0));
            e.1 += v.samples;
            e.2 += v.consistent();
            e.3 += v.missed;
        }
    }
    let mut points: Vec<VisibilityPoint> = by_delay
        .into_values()
        .map(|(delay_ms, samples, consistent, missed)| VisibilityPoint {
            missed,
            ..VisibilityPoint::of_counts(delay_ms, samples, consistent)
        })
        .collect();
    points.sort_by(|a, b| a.delay_ms.total_cmp(&b.delay_ms));
    points
}

/// YCSB++'s first-visibility lag and Bermbach & Tai's staleness window by percentile (HDR), over
/// the writes that had a stale read; none when nothing was stale.
pub fn window_chart(ph: &PhaseResult, id: &str) -> Option<Chart> {
    let c = ph.consistency.as_ref()?;
    let mut chart = Chart::new(
        &format!("{id}-staleness-window"),
        &format!(
            "Lag and staleness window by percentile (HDR), over the {} writes that had a stale read",
            c.stale_writes
        ),
        "percentile of those writes",
        "microseconds after the acknowledgement",
    );
    chart.x_scale = Scale::Percentile;
    chart.y_scale = Scale::Log10;
    for (name, summary) in [
        (
            "first-visibility lag (first read returning the write)",
            &c.visibility_lag_us,
        ),
        (
            "staleness window (last read returning an older version)",
            &c.staleness_window_us,
        ),
    ] {
        if let Some(h) = summary.as_ref().and_then(|s| s.decode().ok()) {
            chart
                .series
                .push(Series::new(name, crate::chart::percentile_points(&h)));
        }
    }
    (!chart.is_empty()).then_some(chart)
}

/// The probe's figures, each with what it rests on (docs/consistency.md); empty without a probe.
pub fn probe_table(ph: &PhaseResult) -> maud::Markup {
    let Some(c) = &ph.consistency else {
        return maud::Markup::default();
    };
    let pct = |n: u64, of: u64| {
        if of == 0 {
            "-".to_string()
        } else {
            format!("{:.2}%", 100.0 * n as f64 / of as f64)
        }
    };
    let us = |s: &Option<scalebench_measure::result::LatencySummary>| {
        s.as_ref().map_or("none (no stale read)".to_string(), |s| {
            format!(
                "p50 {:.0} us, p99 {:.0} us, max {:.0} us",
                s.p50_us, s.p99_us, s.max_us
            )
        })
    };
    let rows = vec![
        vec![
            "probe writes".to_string(),
            format!(
                "{} of {} planned ({} writes/s over {} keys, each rewritten every {:.0} ms), {} failed",
                c.probe_writes,
                c.probe_writes_planned,
                c.probe_rate,
                c.probe_keys,
                c.rewrite_period_ms,
                c.probe_writes_failed
            ),
        ],
        vec![
            "stale at the first delay".into(),
            c.stale_fraction().map_or("no read kept the first delay".into(), |s| {
                format!(
                    "{:.2}% ({} of {} reads at {} ms, one per write; 95% CI {:.2}-{:.2}%)",
                    100.0 * s.fraction,
                    s.stale,
                    s.reads,
                    s.delay_ms,
                    100.0 * s.ci_low,
                    100.0 * s.ci_high
                )
            }),
        ],
        vec![
            "stale reads, all".into(),
            format!(
                "{} of {} ({}), chasing reads included; {} failed; {} scheduled reads missed their delay",
                c.stale_reads,
                c.probe_reads,
                pct(c.stale_reads, c.probe_reads),
                c.probe_reads_failed,
                c.missed_reads()
            ),
        ],
        vec![
            "k-staleness (versions behind: reads)".into(),
            if c.k_staleness.is_empty() {
                "none".into()
            } else {
                c.k_staleness
                    .iter()
                    .map(|(k, n)| format!("{k}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ],
        vec![
            "writes with a stale read".into(),
            format!(
                "{} of {} followed ({} cut by the end)",
                c.stale_writes, c.followed_writes, c.cut_writes
            ),
        ],
        vec!["first-visibility lag (YCSB++)".into(), us(&c.visibility_lag_us)],
        vec![
            "staleness window (Bermbach & Tai)".into(),
            us(&c.staleness_window_us),
        ],
        vec![
            format!("never seen within {} ms", c.horizon_ms),
            format!(
                "{} ({:.2}%)",
                c.never_seen,
                100.0 * c.never_seen_fraction
            ),
        ],
        vec![
            "read-your-writes violated".into(),
            format!(
                "{} of {}",
                c.read_your_writes.violations, c.read_your_writes.checks
            ),
        ],
        vec![
            "monotonic reads violated".into(),
            format!(
                "{} of {}",
                c.monotonic_reads.violations, c.monotonic_reads.checks
            ),
        ],
    ];
    maud::html! {
        h3 { "Consistency probe" }
        (crate::html::table(&["figure", "value"], &rows))
    }
}

/// The pauses of `ph`'s faults, as bands of its time charts.
pub fn fault_bands(ph: &PhaseResult) -> Vec<(f64, f64, String)> {
    ph.faults
        .iter()
        .map(|f| (f.start_s, f.end_s, format!("{} {}d", f.node, f.kind)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(delay_ms: f64, samples: u64, consistent_fraction: f64) -> VisibilityPoint {
        VisibilityPoint {
            delay_ms,
            samples,
            consistent_fraction,
            ci_low: 0.0,
            ci_high: 1.0,
            missed: 0,
        }
    }

    #[test]
    fn runs_pool_per_delay_weighted_by_their_samples() {
        let phase = |points: Vec<VisibilityPoint>| {
            let mut p: PhaseResult = serde_json::from_value(serde_json::json!({
                "phase": "run", "open_loop": false, "measurement_start_unix_ms": 0,
                "duration_s": 1.0, "interval_s": 1.0, "ended_by": "duration", "clients": 1,
                "totals": { "issued": 0, "ok": 0, "failed": 0, "in_flight_at_stop": 0,
                            "throughput_ops_s": 0.0 },
                "operations": {}, "errors": {}, "schedule": null,
                "data": { "mean_key_bytes": 0.0, "mean_record_bytes": 0.0, "field_count": 0 },
                "warmup_operations": 0, "intervals": []
            }))
            .unwrap();
            let mut c =
                scalebench_measure::consistency::ProbeTally::new(10.0, 8, &[], 1000.0).result();
            c.t_visibility = points;
            p.consistency = Some(c);
            p
        };
        let a = phase(vec![point(0.0, 100, 0.5), point(10.0, 100, 1.0)]);
        let b = phase(vec![point(0.0, 300, 0.9), point(10.0, 0, 0.0)]);
        let pooled = pooled_visibility([&a, &b].into_iter());
        assert_eq!(pooled.len(), 2);
        assert_eq!(
            (pooled[0].samples, pooled[0].consistent_fraction),
            (400, 0.8)
        );
        assert_eq!(
            (pooled[1].samples, pooled[1].consistent_fraction),
            (100, 1.0)
        );
        assert!(pooled[0].ci_low < 0.8 && pooled[0].ci_high > 0.8);
        let chart = visibility_chart("x", &[("cell".into(), pooled)]).unwrap();
        // 0 ms stays 0 in the data: the page draws it at 0.01 ms on the log axis (issue 44).
        assert_eq!(chart.series[0].points, [(0.0, 80.0), (10.0, 100.0)]);
        assert_eq!(chart.log_zero_at, Some(ZERO_DELAY_AT_MS));
        // The reads and the interval are columns of the CSV, not words in a label.
        let csv = chart.csv();
        let mut lines = csv.lines();
        assert_eq!(
            lines.next(),
            Some("series,ms after the acknowledgement,% consistent reads,reads,95% CI low (%),95% CI high (%),reads that missed the delay")
        );
        let first: Vec<&str> = lines.next().unwrap().split(',').collect();
        assert_eq!(&first[..4], ["cell", "0", "80", "400"]);
        let (low, high): (f64, f64) = (first[4].parse().unwrap(), first[5].parse().unwrap());
        assert!(low < 80.0 && high > 80.0, "{csv}");
    }
}
