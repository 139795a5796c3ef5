//! `scalebench results export`: the experiment's runs read from the results database, rendered by
//! `scalebench_report::export` (CSV or JSON).

use super::store::Store;
use super::{cells, SessionError};

/// The runs of experiment `name` as CSV ([`scalebench_report::export::runs_csv`]).
pub fn export_csv(store: &Store, name: &str, discard_first: u32) -> Result<String, SessionError> {
    cells(store, name, discard_first)?; // names an unknown experiment
    let runs = store.runs(name, true).map_err(SessionError::Failed)?;
    Ok(scalebench_report::export::runs_csv(&runs, discard_first))
}

/// The runs and cell statistics of experiment `name` as JSON (`results export` without `--csv`).
pub fn export_json(store: &Store, name: &str, discard_first: u32) -> Result<String, SessionError> {
    let cells = cells(store, name, discard_first)?;
    let runs = store.runs(name, false).map_err(SessionError::Failed)?;
    Ok(scalebench_report::export::runs_json(
        name,
        discard_first,
        &runs,
        &cells,
    ))
}
