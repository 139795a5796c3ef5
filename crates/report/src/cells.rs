//! Statistics per cell over its repetitions: mean, standard deviation and the 95% confidence
//! interval of the mean (Student's t, n - 1 degrees of freedom), after discarding the first k; and
//! latency percentiles from the repetitions' histograms merged (never averaged).

use std::collections::BTreeMap;

use scalebench_measure::{decode_histogram, new_histogram, quantile_us, RunResult};
pub use scalebench_stats::{summarize, Summary};

/// The rate a run is judged by: operations per second, or for a measured load records per second
/// (a batch insert carries many records).
pub fn measured_rate(p: &scalebench_measure::PhaseResult) -> f64 {
    if p.phase == scalebench_measure::Phase::Load && p.totals.records > 0 {
        p.totals.records as f64 / p.duration_s.max(1e-9)
    } else {
        p.totals.throughput_ops_s
    }
}

/// A cell's figures over its counted repetitions.
#[derive(Debug, Clone)]
pub struct CellStats {
    pub cell: String,
    pub throughput: Option<Summary>,
    /// Per operation of the measured phase: (p50, p99, p99.9) in µs from the merged histograms.
    pub latency: BTreeMap<String, (f64, f64, f64)>,
    /// Mean latency in µs over every measured operation (the knee's latency: `scalebench_stats::knee`).
    pub mean_latency_us: Option<f64>,
    /// What a record added on disk after the measured phase's steps (a load's: settled).
    pub bytes_per_record: Option<Summary>,
    /// A measured load's figure as inserted (flushed, not compacted): Lourenco's.
    pub bytes_per_record_as_inserted: Option<Summary>,
    /// The fewest and most records the database held when its counted runs began (where recorded):
    /// the data size its figures belong to.
    pub records_at_start: Option<(u64, u64)>,
    /// Repetitions whose verdict found the client saturated (their throughput is a lower bound).
    pub client_bound: usize,
    /// Runs that could not run (an error, no result).
    pub failed_runs: usize,
    /// Runs that ran but whose failed operations exceeded `procedure.max_failed_share`: counted
    /// here and in the operations below, kept out of the throughput and latency figures.
    pub flagged_runs: usize,
    /// Measured operations of the counted repetitions (flagged runs included): succeeded, failed.
    pub operations_ok: u64,
    pub operations_failed: u64,
    /// The consistency probe's reads of the counted repetitions, pooled (issue 32).
    pub consistency: Option<CellConsistency>,
    /// Fault windows (pauses) over the counted repetitions.
    pub fault_windows: usize,
}

/// The probe of a cell's repetitions, pooled. `stale` is the stale share at the first delay most
/// of the pooled reads kept: at most one read per probe write, so a proportion with an interval
/// (or why there is none); all reads pooled would count a chased write many times (their count is
/// kept for the notes). The lag and the window are the repetitions' histograms merged, over the
/// writes seen.
#[derive(Debug, Clone)]
pub struct CellConsistency {
    pub probe_writes: u64,
    pub probe_reads: u64,
    pub stale_reads: u64,
    pub stale: Result<scalebench_measure::consistency::StaleFraction, String>,
    pub followed_writes: u64,
    pub stale_writes: u64,
    /// p99 of YCSB++'s read-after-write lag and of Bermbach & Tai's staleness window (from the
    /// write's start), microseconds.
    pub lag_p99_us: Option<f64>,
    pub window_p99_us: Option<f64>,
}

fn pooled_consistency(
    measured: &[&scalebench_measure::result::PhaseResult],
) -> Option<CellConsistency> {
    let probes: Vec<_> = measured
        .iter()
        .filter_map(|p| p.consistency.as_ref())
        .collect();
    if probes.is_empty() {
        return None;
    }
    let sum = |f: fn(&scalebench_measure::consistency::ConsistencyResult) -> u64| {
        probes.iter().map(|c| f(c)).sum::<u64>()
    };
    let p99 = |of: fn(
        &scalebench_measure::consistency::ConsistencyResult,
    ) -> &Option<scalebench_measure::result::LatencySummary>| {
        let mut merged = new_histogram();
        for s in probes.iter().filter_map(|c| of(c).as_ref()) {
            if let Ok(h) = decode_histogram(&s.histogram) {
                let _ = merged.add(&h);
            }
        }
        (!merged.is_empty()).then(|| quantile_us(&merged, 0.99))
    };
    Some(CellConsistency {
        probe_writes: sum(|c| c.probe_writes),
        probe_reads: sum(|c| c.probe_reads),
        stale_reads: sum(|c| c.stale_reads),
        stale: scalebench_measure::consistency::headline(
            &crate::consistency_page::pooled_visibility(measured.iter().copied()),
        ),
        followed_writes: sum(|c| c.followed_writes),
        stale_writes: sum(|c| c.stale_writes),
        lag_p99_us: p99(|c| &c.read_after_write_lag_us),
        window_p99_us: p99(|c| &c.staleness_window_from_write_us),
    })
}

fn counted_runs(runs: &[(u32, RunResult)], discard_first: u32) -> Vec<&RunResult> {
    runs.iter()
        .filter(|(rep, _)| *rep > discard_first)
        .map(|(_, r)| r)
        .collect()
}

/// `runs`: (repetition, result) of one cell's successful runs, `flagged` those over the failure
/// threshold; the first `discard_first` repetitions are left out.
pub fn cell_stats(
    cell: &str,
    runs: &[(u32, RunResult)],
    flagged: &[(u32, RunResult)],
    failed_runs: usize,
    discard_first: u32,
) -> CellStats {
    let counted = counted_runs(runs, discard_first);
    let flagged = counted_runs(flagged, discard_first);
    let all_measured = || {
        counted
            .iter()
            .chain(flagged.iter())
            .filter_map(|r| r.phases.last())
    };
    let operations_ok = all_measured().map(|p| p.totals.ok).sum();
    let operations_failed = all_measured().map(|p| p.totals.failed).sum();
    let measured: Vec<_> = counted.iter().filter_map(|r| r.phases.last()).collect();
    let throughput = summarize(
        &measured
            .iter()
            .map(|p| measured_rate(p))
            .collect::<Vec<_>>(),
    );
    let mut merged: BTreeMap<String, scalebench_measure::LatencyHistogram> = BTreeMap::new();
    for p in &measured {
        for (op, o) in &p.operations {
            if let Some(h) = o
                .latency
                .as_ref()
                .and_then(|l| decode_histogram(&l.histogram).ok())
            {
                let _ = merged
                    .entry(op.clone())
                    .or_insert_with(new_histogram)
                    .add(&h);
            }
        }
    }
    let us = quantile_us;
    CellStats {
        cell: cell.to_string(),
        throughput,
        latency: merged
            .iter()
            .map(|(op, h)| (op.clone(), (us(h, 0.5), us(h, 0.99), us(h, 0.999))))
            .collect(),
        mean_latency_us: {
            let count: u64 = merged.values().map(|h| h.len()).sum();
            (count > 0).then(|| {
                merged
                    .values()
                    .map(|h| h.mean() * h.len() as f64)
                    .sum::<f64>()
                    / count as f64
                    / 1000.0
            })
        },
        bytes_per_record: summarize(
            &measured
                .iter()
                .filter_map(|p| p.space.as_ref().and_then(|s| s.per_record()))
                .collect::<Vec<_>>(),
        ),
        bytes_per_record_as_inserted: summarize(
            &measured
                .iter()
                .filter_map(|p| p.space.as_ref().and_then(|s| s.as_inserted_per_record()))
                .collect::<Vec<_>>(),
        ),
        records_at_start: {
            let n: Vec<u64> = measured
                .iter()
                .filter_map(|p| p.data.records_at_start)
                .collect();
            n.iter().min().zip(n.iter().max()).map(|(a, b)| (*a, *b))
        },
        client_bound: measured
            .iter()
            .filter(|p| p.bounded_by.as_ref().is_some_and(|v| v.client_bound))
            .count(),
        failed_runs,
        flagged_runs: flagged.len(),
        operations_ok,
        operations_failed,
        consistency: pooled_consistency(&measured),
        fault_windows: measured.iter().map(|p| p.faults.len()).sum(),
    }
}

/// Swaminathan's recommendation for one workload x data size x cluster size: the candidate with the
/// highest mean throughput, or a tie of every candidate whose 95% confidence interval overlaps the
/// best one's (a single run has no interval: it ties with anything within its own value).
pub fn recommend(candidates: &[(String, Summary)]) -> Option<String> {
    let best = candidates
        .iter()
        .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))?;
    let interval = |s: &Summary| {
        let h = s.ci95.unwrap_or(0.0);
        (s.mean - h, s.mean + h)
    };
    let (low, _) = interval(&best.1);
    let mut tied: Vec<&str> = candidates
        .iter()
        .filter(|c| c.0 != best.0 && interval(&c.1).1 >= low)
        .map(|c| c.0.as_str())
        .collect();
    if tied.is_empty() {
        return Some(best.0.clone());
    }
    tied.insert(0, &best.0);
    Some(format!("tie: {}", tied.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_database_or_a_tie_where_intervals_overlap() {
        let c = |name: &str, v: &[f64]| (name.to_string(), summarize(v).unwrap());
        // Far apart: the best alone.
        let clear = [c("a", &[100.0, 102.0, 98.0]), c("b", &[50.0, 51.0, 49.0])];
        assert_eq!(recommend(&clear).as_deref(), Some("a"));
        // Overlapping intervals: a tie, best first; a third far below stays out.
        let close = [
            c("a", &[100.0, 110.0, 90.0]),
            c("b", &[98.0, 108.0, 88.0]),
            c("c", &[10.0, 11.0, 9.0]),
        ];
        assert_eq!(recommend(&close).as_deref(), Some("tie: a, b"));
        assert_eq!(recommend(&[]), None);
    }
}
