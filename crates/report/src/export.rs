//! `scalebench results export`: the runs of an experiment (and its cells' statistics) as CSV or
//! JSON, one column per field, for pandas, R or a spreadsheet. Every run is a row, the discarded
//! repetitions too, marked (`discarded`), so a mean over the rows with status `ok` that are not
//! discarded is the mean `results show` prints.

use std::collections::{BTreeMap, BTreeSet};

use scalebench_measure::RunResult;

use crate::cells::CellStats;
use crate::stored::StoredRun;

/// The latency columns of each operation of the measured phase, in microseconds.
const LATENCY_COLUMNS: [&str; 3] = ["p50_us", "p99_us", "p99_9_us"];

/// The runs as CSV: cell, its parts (database, configuration, workload, one column per swept
/// parameter), repetition, `discarded` (within the first `discard_first`), the run's status and
/// figures, `OP_p50_us`, `OP_p99_us`, `OP_p99_9_us` per operation, then the free text
/// (`bounded_by`, `error`). The runs must carry their result JSON (for the latencies).
pub fn runs_csv(runs: &[StoredRun], discard_first: u32) -> String {
    let params: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.params.keys().map(String::as_str))
        .collect();
    let latencies: Vec<BTreeMap<String, [f64; 3]>> = runs
        .iter()
        .map(|r| measured_latency(r.result.as_deref()))
        .collect();
    let operations: BTreeSet<&str> = latencies
        .iter()
        .flat_map(|l| l.keys().map(String::as_str))
        .collect();
    let mut header: Vec<String> = ["cell", "database", "configuration", "workload"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    header.extend(params.iter().map(|p| p.to_string()));
    header.extend(
        [
            "repetition",
            "discarded",
            "status",
            "throughput_ops_s",
            "ok",
            "failed",
            "client_bound",
            "bytes_per_record",
            "bytes_per_record_as_inserted",
        ]
        .map(String::from),
    );
    for op in &operations {
        header.extend(LATENCY_COLUMNS.map(|c| format!("{op}_{c}")));
    }
    // Free text last: a naive split by commas still finds every column before them.
    header.extend(["bounded_by".into(), "error".into()]);
    let mut out = header.join(",") + "\n";
    let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let count = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
    for (r, latency) in runs.iter().zip(&latencies) {
        let mut row = vec![
            field(&r.cell),
            field(&r.database),
            field(&r.configuration),
            field(&r.workload),
        ];
        row.extend(
            params
                .iter()
                .map(|p| field(r.params.get(*p).map_or("", String::as_str))),
        );
        row.extend([
            r.repetition.to_string(),
            (r.repetition <= discard_first).to_string(),
            r.status.clone(),
            number(r.throughput_ops_s),
            count(r.ok),
            count(r.failed),
            r.client_bound.to_string(),
            number(r.bytes_per_record),
            number(r.bytes_per_record_as_inserted),
        ]);
        for op in &operations {
            match latency.get(*op) {
                Some(values) => row.extend(values.map(|v| v.to_string())),
                None => row.extend([String::new(), String::new(), String::new()]),
            }
        }
        row.push(field(r.bounded_by.as_deref().unwrap_or("")));
        row.push(field(r.error.as_deref().unwrap_or("")));
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

/// The runs and cell statistics of experiment `name` as JSON.
pub fn runs_json(
    name: &str,
    discard_first: u32,
    runs: &[StoredRun],
    cells: &[CellStats],
) -> String {
    let json = serde_json::json!({
        "experiment": name,
        "discard_first": discard_first,
        "runs": runs.iter().map(|r| serde_json::json!({
            "cell": r.cell, "database": r.database, "configuration": r.configuration,
            "workload": r.workload, "params": r.params,
            "repetition": r.repetition, "discarded": r.repetition <= discard_first,
            "status": r.status, "throughput_ops_s": r.throughput_ops_s, "ok": r.ok, "failed": r.failed,
            "bounded_by": r.bounded_by,
            "client_bound": r.client_bound, "bytes_per_record": r.bytes_per_record,
            "bytes_per_record_as_inserted": r.bytes_per_record_as_inserted,
            "error": r.error,
        })).collect::<Vec<_>>(),
        "cells": cells.iter().map(|c| serde_json::json!({
            "cell": c.cell,
            "n": c.throughput.as_ref().map(|s| s.n),
            "throughput_mean": c.throughput.as_ref().map(|s| s.mean),
            // A standard deviation of one value is undefined, not 0.
            "throughput_sd": c.throughput.as_ref().filter(|s| s.n > 1).map(|s| s.sd),
            "throughput_ci95": c.throughput.as_ref().and_then(|s| s.ci95),
            "latency_us": c.latency.iter().map(|(op, (p50, p99, p999))| (op.clone(), serde_json::json!({"p50": p50, "p99": p99, "p99_9": p999}))).collect::<BTreeMap<_, _>>(),
            "bytes_per_record": c.bytes_per_record.as_ref().map(|s| s.mean),
            "bytes_per_record_as_inserted": c.bytes_per_record_as_inserted.as_ref().map(|s| s.mean),
            "client_bound_runs": c.client_bound,
            "failed_runs": c.failed_runs,
            "flagged_runs": c.flagged_runs,
            "operations_ok": c.operations_ok,
            "operations_failed": c.operations_failed,
            "consistency": c.consistency.as_ref().map(|k| serde_json::json!({
                "probe_writes": k.probe_writes,
                "probe_reads": k.probe_reads, "stale_reads": k.stale_reads,
                "stale_fraction": k.stale.map(|s| s.fraction),
                "stale_ci_low": k.stale.map(|s| s.ci_low),
                "stale_ci_high": k.stale.map(|s| s.ci_high),
                "first_delay_ms": k.stale.map(|s| s.delay_ms),
                "first_delay_reads": k.stale.map(|s| s.reads),
                "followed_writes": k.followed_writes, "stale_writes": k.stale_writes,
                "lag_p99_us": k.lag_p99_us, "window_p99_us": k.window_p99_us,
            })),
            "fault_windows": c.fault_windows,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
}

/// p50, p99 and p99.9 (µs) per operation of the run's measured (last) phase.
fn measured_latency(result: Option<&str>) -> BTreeMap<String, [f64; 3]> {
    let Some(result) = result.and_then(|json| serde_json::from_str::<RunResult>(json).ok()) else {
        return BTreeMap::new();
    };
    let Some(phase) = result.phases.last() else {
        return BTreeMap::new();
    };
    phase
        .operations
        .iter()
        .filter_map(|(op, o)| {
            let l = o.latency.as_ref()?;
            Some((op.clone(), [l.p50_us, l.p99_us, l.p99_9_us]))
        })
        .collect()
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn field(s: &str) -> String {
    crate::chart::csv_field(s)
}
