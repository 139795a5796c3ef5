//! Every run of a plan checked before the first one runs: its values, its fault's node, its
//! cluster operation.

use std::collections::BTreeMap;
use std::path::Path;

use crate::elastic::request::ScaleAction;
use scalebench_deploy::Cluster;
use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::request;

use super::deployment::PlannedDeployment;
use super::run_request::phase_request;
use super::spec::{self, Experiment, Measure, PlannedRun};

/// Every run's values (properties, rates, durations, URLs, binding option names), checked before
/// the first run: a bad one is the file's error now, not a failed run hours in.
pub(super) fn check_every_run(
    exp: &Experiment,
    base: &Path,
    plan: &[PlannedRun],
    clusters_dir: &Path,
) -> Result<(), SessionError> {
    let phases: &[Phase] = match exp.procedure.measure {
        Measure::Load => &[Phase::Load],
        Measure::Elastic => &[Phase::Run],
        Measure::Run => &[Phase::Load, Phase::Run],
    };
    let mut checked = std::collections::HashSet::new();
    for run in plan {
        for &phase in phases {
            let in_cell = |e: SessionError| {
                SessionError::Usage(format!(
                    "{}: cell {} ({}): {e}",
                    exp.name,
                    run.cell,
                    phase.name()
                ))
            };
            // The deployment's database is checked when it is up (as the runs do).
            let request =
                phase_request(exp, base, run, None, clusters_dir, phase, &[]).map_err(in_cell)?;
            // Clients on this machine have their launcher relay the probe's writer.
            let launcher_here = exp.procedure.clients.launcher == spec::ClientsLauncher::Local;
            // Swept client processes (the measured run's; the load is one process) are no part of
            // the request.
            let launch = match (phase, clients_of(run)) {
                (Phase::Run, Some(_)) => request::Processes::Clients { launcher_here },
                _ => request::Processes::One,
            };
            if !checked.insert(format!("{launch:?} {request:?}")) {
                continue;
            }
            request.check(launch, &[phase]).map_err(in_cell)?;
            scalebench_session::settings::Settings::check(&request, None, phase)
                .map_err(in_cell)?;
        }
        check_fault_node(exp, base, run)?;
        check_operation(exp, base, run)?;
    }
    Ok(())
}

/// The client processes a run's measured phase is swept to, when more than one.
pub(super) fn clients_of(run: &PlannedRun) -> Option<u32> {
    run.params.clients().filter(|n| *n > 1)
}

/// A `[fault]` names a node the run's cluster will have (ids are given at `up`, in the order
/// each engine starts its nodes).
pub(super) fn check_fault_node(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
) -> Result<(), SessionError> {
    let db = exp.databases.iter().find(|d| d.name == run.database);
    let Some(fault) = db.and_then(|db| exp.fault.as_ref()?.request_for(db, &run.configuration))
    else {
        return Ok(());
    };
    let Some(planned) = PlannedDeployment::of(exp, base, run)? else {
        return Ok(());
    };
    let deployment = planned.deployment()?;
    let ids = Cluster::node_ids_at_up(&deployment);
    if ids.contains(&fault.node) {
        return Ok(());
    }
    Err(SessionError::Usage(format!(
        "[fault]: no node {:?} in database {:?}'s deployment {} (cell {}: its nodes at up: {})",
        fault.node,
        run.database,
        deployment.name,
        run.cell,
        ids.join(", ")
    )))
}

/// An elastic run's action: the swept one, or the procedure's.
pub(super) fn action_of(exp: &Experiment, run: &PlannedRun) -> ScaleAction {
    run.params.action().unwrap_or(exp.procedure.elastic.action)
}

/// Operations swept across databases (`[sweep] action`): a cell whose database's kind does not have
/// its operation (a repair on Redis, a failover on masterless Cassandra) is left out of the plan and
/// said so, as the report's matrix leaves its entry empty; an operation no database has is refused
/// (exit 2), as a misspelt one would be.
pub(super) fn with_operations_they_have(
    exp: &Experiment,
    base: &Path,
    plan: Vec<PlannedRun>,
) -> Result<Vec<PlannedRun>, SessionError> {
    if exp.procedure.measure != Measure::Elastic || !exp.sweep.contains_key(spec::ACTION) {
        return Ok(plan);
    }
    let mut kept = Vec::with_capacity(plan.len());
    let mut left_out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut first_refusal: BTreeMap<String, SessionError> = BTreeMap::new();
    for run in plan {
        let scale_action = action_of(exp, &run);
        let action = scale_action.to_string();
        let has = match PlannedDeployment::of(exp, base, &run)? {
            Some(planned) => {
                Cluster::operations_of(&planned.deployment()?).contains(&scale_action.kind())
            }
            // A database URL: the cluster's hooks decide when it is up.
            None => true,
        };
        if has {
            kept.push(run);
            continue;
        }
        if !first_refusal.contains_key(&action) {
            let refusal = check_operation(exp, base, &run)
                .err()
                .unwrap_or_else(|| SessionError::Usage(format!("action {action}")));
            first_refusal.insert(action.clone(), refusal);
        }
        let on = left_out.entry(action).or_default();
        if !on.contains(&run.database) {
            on.push(run.database.clone());
        }
    }
    let done: std::collections::BTreeSet<String> =
        kept.iter().map(|r| action_of(exp, r).to_string()).collect();
    if let Some((_, refusal)) = first_refusal
        .into_iter()
        .find(|(action, _)| !done.contains(action))
    {
        return Err(refusal);
    }
    if !left_out.is_empty() {
        let what: Vec<String> = left_out
            .iter()
            .map(|(action, dbs)| format!("{action} on {}", dbs.join(", ")))
            .collect();
        scalebench_session::note!(
            "{}: cells left out, their database not having the operation: {}",
            exp.name,
            what.join("; ")
        );
    }
    Ok(kept)
}

/// An elastic run's operation, on a deployment that has it (and the node it names): checked on the
/// files, before any cluster is up, as `scalebench elastic` checks it on the cluster.
pub(super) fn check_operation(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
) -> Result<(), SessionError> {
    if exp.procedure.measure != Measure::Elastic {
        return Ok(());
    }
    let Some(planned) = PlannedDeployment::of(exp, base, run)? else {
        return Ok(());
    };
    let deployment = planned.deployment()?;
    let action = action_of(exp, run);
    let (op, node) = (action.kind(), action.node());
    let has = Cluster::operations_of(&deployment);
    let bad = |why: String| {
        SessionError::Usage(format!(
            "{}: cell {}: action {action}: {why}",
            exp.name, run.cell
        ))
    };
    if !has.contains(&op) {
        let names: Vec<&str> = has.iter().map(|o| o.name()).collect();
        return Err(bad(format!(
            "deployment {} ({}) has no operation '{op}'; it has: {}",
            deployment.name,
            deployment.database.name(),
            names.join(", ")
        )));
    }
    let ids = Cluster::node_ids_at_up(&deployment);
    if let Some(id) = node.filter(|id| !ids.contains(id)) {
        return Err(bad(format!(
            "deployment {} has no node '{id}' at up (nodes: {})",
            deployment.name,
            ids.join(", ")
        )));
    }
    Ok(())
}
