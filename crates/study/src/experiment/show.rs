//! What `experiment --dry-run` and `results show` print of an experiment.

use std::collections::BTreeMap;

use scalebench_measure::RunResult;
use scalebench_session::error::SessionError;

use super::spec::{self, Experiment, LoadMode, Measure, PlannedRun};
use super::stats;
use super::store::Store;

/// What `experiment --dry-run` prints ([`scalebench_report::text::plan_table`]): the procedure in
/// one line, then each run with what precedes it (a load, a restore).
pub fn plan_text(exp: &Experiment, plan: &[PlannedRun]) -> String {
    let e = &exp.procedure.elastic;
    let timing = match exp.procedure.measure {
        Measure::Load => "until every record is written".to_string(),
        Measure::Elastic => format!(
            "warm-up {}, {} after a {} baseline, stable within {}, then {} more",
            exp.procedure.warmup,
            if exp.sweep.contains_key(spec::ACTION) {
                "each swept action".to_string()
            } else {
                e.action.to_string()
            },
            e.baseline,
            e.stable_timeout,
            e.after
        ),
        _ => format!(
            "warm-up {}, duration {}",
            exp.procedure.warmup, exp.procedure.duration
        ),
    };
    let heading = format!(
        "experiment {}: {} runs ({} cells x {} repetitions), measure {}, load {}, {timing}",
        exp.name,
        plan.len(),
        plan.len() / exp.repetitions as usize,
        exp.repetitions,
        exp.procedure.measure,
        exp.procedure.load,
    );
    let mut loaded: Option<&str> = None;
    let rows: Vec<scalebench_report::text::PlanRow> = plan
        .iter()
        .map(|r| {
            let before = match exp.procedure.load {
                _ if exp.procedure.measure == Measure::Load => "measured load",
                LoadMode::EachRun => "load",
                _ if loaded != Some(r.data_key.as_str()) => "load",
                LoadMode::Restore => "restore if earlier runs inserted",
                LoadMode::RestoreEach => "restore if earlier runs wrote",
                LoadMode::Once => "",
            };
            loaded = Some(&r.data_key);
            scalebench_report::text::PlanRow {
                cell: &r.cell,
                repetition: r.repetition,
                before,
            }
        })
        .collect();
    scalebench_report::text::plan_table(&heading, &rows)
}

/// What `results list` prints: each experiment of the results database with its runs by outcome.
pub fn experiments_text(store: &Store) -> Result<String, SessionError> {
    let experiments = store.experiments().map_err(SessionError::Failed)?;
    Ok(scalebench_report::text::experiments_table(&experiments))
}

/// The per-cell summary of an experiment, as a table (`results show`).
pub fn show(store: &Store, name: &str, discard_first: u32) -> Result<String, SessionError> {
    let cells = cells(store, name, discard_first)?;
    let rows: Vec<scalebench_report::text::CellRow> = cells
        .iter()
        .map(|c| scalebench_report::text::CellRow {
            stats: c,
            steps: store.elastic_means(name, &c.cell, discard_first),
            sizes: store.size_means(name, &c.cell, discard_first),
        })
        .collect();
    Ok(scalebench_report::text::cells_table(&rows))
}

pub fn cells(
    store: &Store,
    name: &str,
    discard_first: u32,
) -> Result<Vec<stats::CellStats>, SessionError> {
    if !store.has_experiment(name) {
        return Err(SessionError::Usage(format!(
            "no experiment '{name}' in the results file"
        )));
    }
    let runs = store.runs(name, true).map_err(SessionError::Failed)?;
    let mut order: Vec<String> = Vec::new();
    let mut by_cell: BTreeMap<String, CellRuns> = BTreeMap::new();
    for r in runs {
        if !order.contains(&r.cell) {
            order.push(r.cell.clone());
        }
        let entry = by_cell.entry(r.cell.clone()).or_default();
        let parsed = || {
            r.result
                .as_deref()
                .and_then(|json| serde_json::from_str::<RunResult>(json).ok())
                .map(|result| (r.repetition, result))
        };
        match r.status.as_str() {
            "ok" => entry.ok.extend(parsed()),
            "failures" => entry.flagged.extend(parsed()),
            "failed" => entry.failed += 1,
            _ => {}
        }
    }
    Ok(order
        .iter()
        .map(|c| {
            let runs = &by_cell[c];
            stats::cell_stats(c, &runs.ok, &runs.flagged, runs.failed, discard_first)
        })
        .collect())
}

/// A cell's stored runs by outcome.
#[derive(Default)]
struct CellRuns {
    ok: Vec<(u32, RunResult)>,
    /// Ran, but with failed operations above the threshold.
    flagged: Vec<(u32, RunResult)>,
    failed: usize,
}

/// How many repetitions the experiment's own file leaves out (its stored spec).
pub fn discard_first_of(store: &Store, name: &str) -> u32 {
    store
        .spec(name)
        .and_then(|json| serde_json::from_str::<Experiment>(&json).ok())
        .map_or(0, |e| e.discard_first)
}
