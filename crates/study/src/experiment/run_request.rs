//! The request of a run's load or measured run, from the experiment file and the run's swept values.

use std::collections::BTreeMap;
use std::path::Path;

use scalebench_exec::Phase;
use scalebench_session::error::SessionError;
use scalebench_session::request::{RunRequest, SpaceAfterLoad};
use scalebench_workload::rate::Pace;

use super::spec::{value_text, Experiment, Measure, PlannedRun, SweepAxis};

pub(super) fn props(
    map: &BTreeMap<String, toml::Value>,
) -> impl Iterator<Item = scalebench_workload::Assignment> + '_ {
    map.iter()
        .map(|(k, v)| scalebench_workload::Assignment::new(k, value_text(v)))
}

/// The request of a run's load or measured run: the workload and configuration's properties, the
/// swept values, the procedure's options. `command` is what started the experiment.
pub(super) fn phase_request(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
    deployment: Option<&Path>,
    clusters_dir: &Path,
    phase: Phase,
    command: &[String],
) -> Result<RunRequest, SessionError> {
    let w = exp
        .workloads
        .iter()
        .find(|w| w.name == run.workload)
        .expect("planned");
    let no_properties = BTreeMap::new();
    let config_props = exp
        .configurations
        .iter()
        .find(|c| c.name == run.configuration)
        .map_or(&no_properties, |c| &c.properties);
    let db = exp
        .databases
        .iter()
        .find(|d| d.name == run.database)
        .expect("planned");
    let workload = if scalebench_workload::builtin::builtin_workload(&w.workload).is_some() {
        w.workload.clone()
    } else {
        base.join(&w.workload).display().to_string()
    };
    let mut r = RunRequest::new(&workload);
    r.quiet = true;
    r.command = command.to_vec();
    r.clusters_dir = clusters_dir.to_path_buf();
    match (deployment, &db.db) {
        (Some(f), _) => r.deployment = Some(f.to_path_buf()),
        (None, Some(url)) => r.db = Some(url.clone()),
        (None, None) => {}
    }
    r.properties.extend(
        props(&w.properties)
            .chain(props(&db.properties))
            .chain(props(config_props)),
    );
    exp.procedure
        .options
        .apply(&mut r)
        .map_err(SessionError::Usage)?;
    if phase == Phase::Load {
        // The procedure's offered rate is the measured run's; a load is paced only by its
        // workload's own (a workload file's load.target, load.rate_profile).
        r.pace = Pace::Inherit;
    }
    for (_, swept) in run.params.iter() {
        match swept.axis() {
            // The deployment's, see deployment_for; the elastic run's, see elastic_run; the
            // number of client processes of the measured run, see one_run.
            SweepAxis::Nodes(_) | SweepAxis::Action(_) | SweepAxis::Clients(_) => {}
            // A data size: its properties.
            SweepAxis::DataSize(name) => {
                let size = exp
                    .data_sizes
                    .iter()
                    .find(|d| &d.name == name)
                    .ok_or_else(|| {
                        SessionError::Usage(format!(
                            "invalid value '{name}' for sweep data: no such [[data]] entry"
                        ))
                    })?;
                r.properties.extend(props(&size.properties));
            }
            SweepAxis::Threads(n) => r.threads = Some(*n),
            SweepAxis::Concurrency(n) => r.concurrency = *n,
            // An offered rate throttles the measured run, not the load.
            SweepAxis::Target(_) if phase == Phase::Load => {}
            SweepAxis::Target(pace) => r.pace = pace.clone(),
            SweepAxis::Property(key, value) => {
                r.property(key, value);
            }
        }
    }
    r.request_set = exp.procedure.request_set;
    r.request_set_threads = exp.procedure.request_set_threads;
    if phase == Phase::Run {
        r.warmup = exp.procedure.warmup.0;
        // A run given an operation count (swept, or a workload's, configuration's or data size's
        // property) is bounded by it: its throughput is the operations over the time to execute
        // them, as Swaminathan measured (studies.md, section 3); else by the procedure's duration.
        let counted = r
            .properties
            .iter()
            .any(|p| p.key == scalebench_workload::declared::OPERATIONCOUNT.name);
        r.duration = (!counted).then_some(exp.procedure.duration.0);
        if exp.procedure.measure == Measure::Run {
            r.consistency_probe = exp.procedure.probe.clone();
            r.faults = exp
                .fault
                .iter()
                .filter_map(|f| f.request_for(db, &run.configuration))
                .collect();
        }
    } else {
        r.create_schema = true;
        r.drop_schema = true;
        r.space_after_load = if exp.procedure.compact {
            SpaceAfterLoad::Settled
        } else {
            SpaceAfterLoad::AsInserted
        };
    }
    Ok(r)
}
