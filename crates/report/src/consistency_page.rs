//! The consistency a run measured beside its throughput (issue 32, docs/consistency.md): PBS's
//! t-visibility curve, one line per run or per experiment cell, and the distributions of the lag
//! and the staleness window; the pauses a fault made are bands on a run's time charts.

use scalebench_measure::consistency::VisibilityPoint;
use scalebench_measure::PhaseResult;

use crate::chart::{Chart, Scale, Series};
use crate::probe_figures;

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

/// YCSB++'s read-after-write lag and Bermbach & Tai's staleness window by percentile (HDR), over
/// the writes seen; none when no write was stale (every window 0, every lag the probe's own time
/// to its first read).
pub fn window_chart(ph: &PhaseResult, id: &str) -> Option<Chart> {
    let c = ph.consistency.as_ref()?;
    if c.stale_writes == 0 {
        return None;
    }
    let mut chart = Chart::new(
        &format!("{id}-staleness-window"),
        &format!(
            "Lag and staleness window by percentile (HDR), over the {} writes seen ({} with a stale read)",
            c.read_after_write_lag_us.as_ref().map_or(0, |l| l.count),
            c.stale_writes
        ),
        "percentile of the writes seen",
        "microseconds",
    );
    chart.x_scale = Scale::Percentile;
    for (name, summary) in [
        (
            format!(
                "{}: acknowledgement to the first read returning the write",
                probe_figures::LAG
            ),
            &c.read_after_write_lag_us,
        ),
        (
            format!(
                "{}: the write's start to the last read returning an older version",
                probe_figures::WINDOW
            ),
            &c.staleness_window_from_write_us,
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

/// The probe's figures, each with what it rests on (docs/consistency.md), the writer's and each
/// reader client's, in the summary's words; empty without a probe.
pub fn probe_table(ph: &PhaseResult) -> maud::Markup {
    let table = |c: &scalebench_measure::consistency::ConsistencyResult| {
        let rows: Vec<Vec<String>> = probe_figures::rows(c)
            .into_iter()
            .map(|(name, value)| vec![name, value])
            .collect();
        crate::html::table(&["figure", "value"], &rows)
    };
    maud::html! {
        @if let Some(c) = &ph.consistency {
            h3 { "Consistency probe" }
            (table(c))
        }
        @for r in &ph.consistency_readers {
            h3 {
                "Probe readers on client " (r.client) " (its clock "
                (format!("{:+.0} us +- {:.0} us", r.clock_offset_us, r.clock_uncertainty_us))
                " from the writer's)"
            }
            @match (&r.consistency, &r.error) {
                (Some(c), _) => (table(c)),
                (None, Some(e)) => p class="note" { "Did not run: " (e) },
                (None, None) => {},
            }
        }
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
