//! `scalebench results export`: the runs of an experiment (and its cells' statistics) as CSV or
//! JSON, one column per field, for pandas, R or a spreadsheet. Every run is a row, the discarded
//! repetitions too, marked (`discarded`), so a mean over the rows with status `ok` that are not
//! discarded is the mean `results show` prints.

use std::collections::{BTreeMap, BTreeSet};

use scalebench_measure::RunResult;

use crate::cells::CellStats;
use crate::chart::{csv_text, text_field};
use crate::stored::StoredRun;

/// The latency columns of each operation of the measured phase, in microseconds.
const LATENCY_COLUMNS: [&str; 3] = ["p50_us", "p99_us", "p99_9_us"];

/// The consistency probe's columns (docs/consistency.md), when a run had the probe beside it.
const PROBE_COLUMNS: [&str; 11] = [
    "probe_writes",
    "probe_reads",
    "stale_reads",
    "stale_delay_ms",
    "stale_fraction_pct",
    "stale_ci95_low_pct",
    "stale_ci95_high_pct",
    "read_after_write_lag_p99_us",
    "staleness_window_from_write_p99_us",
    "never_seen_writes",
    "monotonic_read_violations",
];

/// What the client spent per operation over the window (issue 65), and the cores it kept busy.
const COST_COLUMNS: [&str; 7] = [
    "client_cpu_us_per_op",
    "client_user_us_per_op",
    "client_system_us_per_op",
    "client_switches_per_op",
    "client_bytes_per_op",
    "client_segments_per_op",
    "client_cores_used",
];

/// What one stored run's result adds to its row: each operation's latencies, the probe's figures
/// and the client's cost, of the measured (last) phase.
#[derive(Default)]
struct Measured {
    latency: BTreeMap<String, [f64; 3]>,
    probe: Option<[String; PROBE_COLUMNS.len()]>,
    cost: Option<scalebench_measure::result::ClientCost>,
}

impl Measured {
    /// The cost columns' values (empty where the result has none).
    fn cost_values(&self) -> [Option<f64>; COST_COLUMNS.len()] {
        match &self.cost {
            Some(c) => [
                c.cpu_us_per_op,
                c.user_us_per_op,
                c.system_us_per_op,
                c.switches_per_op,
                c.bytes_per_op,
                c.segments_per_op,
                Some(c.cores_used),
            ],
            None => [None; COST_COLUMNS.len()],
        }
    }
}

/// The runs as CSV: cell, its parts (database, configuration, workload, one column per swept
/// parameter), repetition, `discarded` (within the first `discard_first`), the run's status and
/// figures, `OP_p50_us`, `OP_p99_us`, `OP_p99_9_us` per operation, the consistency probe's
/// figures when any run had it (`probe_writes` ... `monotonic_read_violations`), the client's
/// cost per operation (`client_cpu_us_per_op` ... `client_cores_used`), then the free
/// text (`bounded_by`, `error`). The runs must carry their result JSON (for the latencies and
/// the probe). Written by the `csv` crate; no text field is taken for a formula.
pub fn runs_csv(runs: &[StoredRun], discard_first: u32) -> String {
    let params: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.params.keys().map(String::as_str))
        .collect();
    let measured: Vec<Measured> = runs.iter().map(|r| measured(r.result.as_deref())).collect();
    let operations: BTreeSet<&str> = measured
        .iter()
        .flat_map(|m| m.latency.keys().map(String::as_str))
        .collect();
    let probed = measured.iter().any(|m| m.probe.is_some());
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
    if probed {
        header.extend(PROBE_COLUMNS.map(String::from));
    }
    header.extend(COST_COLUMNS.map(String::from));
    // Free text last: a naive split by commas still finds every column before them.
    header.extend(["bounded_by".into(), "error".into()]);
    let mut rows = vec![header.iter().map(|h| text_field(h)).collect::<Vec<_>>()];
    let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let count = |n: Option<u64>| n.map_or(String::new(), |n| n.to_string());
    for (r, m) in runs.iter().zip(&measured) {
        let mut row = vec![
            text_field(&r.cell),
            text_field(&r.database),
            text_field(&r.configuration),
            text_field(&r.workload),
        ];
        row.extend(
            params
                .iter()
                .map(|p| text_field(r.params.get(*p).map_or("", String::as_str))),
        );
        row.extend([
            r.repetition.to_string(),
            (r.repetition <= discard_first).to_string(),
            text_field(&r.status),
            number(r.throughput_ops_s),
            count(r.ok),
            count(r.failed),
            r.client_bound.to_string(),
            number(r.bytes_per_record),
            number(r.bytes_per_record_as_inserted),
        ]);
        for op in &operations {
            match m.latency.get(*op) {
                Some(values) => row.extend(values.map(|v| v.to_string())),
                None => row.extend([String::new(), String::new(), String::new()]),
            }
        }
        if probed {
            match &m.probe {
                Some(values) => row.extend(values.iter().cloned()),
                None => row.extend(PROBE_COLUMNS.map(|_| String::new())),
            }
        }
        row.extend(m.cost_values().map(number));
        row.push(text_field(r.bounded_by.as_deref().unwrap_or("")));
        row.push(text_field(r.error.as_deref().unwrap_or("")));
        rows.push(row);
    }
    csv_text(&rows)
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
            "client_cost": measured(r.result.as_deref()).cost,
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
                "stale_fraction": k.stale.as_ref().ok().map(|s| s.fraction),
                "stale_ci_low": k.stale.as_ref().ok().map(|s| s.ci_low),
                "stale_ci_high": k.stale.as_ref().ok().map(|s| s.ci_high),
                "stale_delay_ms": k.stale.as_ref().ok().map(|s| s.delay_ms),
                "stale_delay_reads": k.stale.as_ref().ok().map(|s| s.reads),
                "stale_unavailable": k.stale.as_ref().err(),
                "followed_writes": k.followed_writes, "stale_writes": k.stale_writes,
                "read_after_write_lag_p99_us": k.lag_p99_us,
                "staleness_window_from_write_p99_us": k.window_p99_us,
            })),
            "fault_windows": c.fault_windows,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
}

/// p50, p99 and p99.9 (µs) per operation and the probe's figures, of the run's measured (last)
/// phase.
fn measured(result: Option<&str>) -> Measured {
    let Some(result) = result.and_then(|json| serde_json::from_str::<RunResult>(json).ok()) else {
        return Measured::default();
    };
    let Some(phase) = result.phases.last() else {
        return Measured::default();
    };
    let latency = phase
        .operations
        .iter()
        .filter_map(|(op, o)| {
            let l = o.latency.as_ref()?;
            Some((op.clone(), [l.p50_us, l.p99_us, l.p99_9_us]))
        })
        .collect();
    let probe = phase.consistency.as_ref().map(|c| {
        let stale = c.stale_share().ok();
        let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        [
            c.probe_writes.to_string(),
            c.probe_reads.to_string(),
            c.stale_reads.to_string(),
            number(stale.map(|s| s.delay_ms)),
            number(stale.map(|s| 100.0 * s.fraction)),
            number(stale.map(|s| 100.0 * s.ci_low)),
            number(stale.map(|s| 100.0 * s.ci_high)),
            number(c.read_after_write_lag_us.as_ref().map(|l| l.p99_us)),
            number(c.staleness_window_from_write_us.as_ref().map(|l| l.p99_us)),
            c.never_seen.to_string(),
            c.monotonic_reads.violations.to_string(),
        ]
    });
    Measured {
        latency,
        probe,
        cost: phase.client_cost,
    }
}
