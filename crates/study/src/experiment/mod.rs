//! `scalebench experiment FILE.toml`: runs a matrix unattended, each run recorded in the results
//! database; `scalebench results`: lists, summarises and exports what is recorded.

mod claims;
mod clusters;
pub mod export;
pub mod spec;
/// Statistics per cell (in `scalebench-report`, whose pages read them).
pub use scalebench_report::cells as stats;
pub mod store;
pub mod thresholds;

use std::collections::BTreeMap;

use std::path::{Path, PathBuf};

use scalebench_deploy::{Cluster, Deployment};
use scalebench_exec::Phase;
use scalebench_measure::RunResult;

use crate::elastic::request::{self as elastic_request, ElasticRequest, ScaleAction};
use scalebench_session::error::SessionError;
use scalebench_session::phase::execute_phases;
use scalebench_session::request::{self, RunRequest, SpaceAfterLoad};
use scalebench_session::settings::Settings;
use spec::{
    value_text, Cells, Configuration, Experiment, LoadMode, Measure, PlannedRun, CLUSTER_SIZE,
    DATA_SIZE,
};
use store::{now, ElasticOutcome, ElasticRecord, Recorded, Store};

/// What the runner keeps between runs: the cluster it runs against and the data loaded into it.
#[derive(Default)]
struct RunnerState {
    /// The clusters it deployed and holds.
    clusters: clusters::Held,
    /// The data key of what is loaded (procedure once/restore).
    loaded: Option<String>,
    /// Where the next run's inserts start: past every key earlier runs on the loaded data inserted
    /// (None: right after the loaded records, YCSB's default).
    next_insert: Option<u64>,
    /// The records the loaded data had, and what it holds now (after earlier runs' inserts and
    /// deletes): the data size each run is recorded with.
    loaded_records: u64,
    records: u64,
    /// A run since the load or the last restore issued writes (updates, inserts, deletes): the data
    /// is no longer as loaded.
    written: bool,
    drop_caches_warned: bool,
    caches_dropped: bool,
    /// How to start client processes, for runs with `clients` above 1.
    client_program: Option<scalebench_distributed::local::ClientProgram>,
}

/// An experiment to run: its spec (read and checked), where its relative files are, and where its
/// results and clusters go.
pub struct ExperimentRequest {
    pub experiment: Experiment,
    /// Which cells of its matrix run (all, or each value once).
    pub cells: Cells,
    /// Only the cells of these databases (by name); every database when empty.
    pub only_databases: Vec<String>,
    /// Only the cells of these configurations (by name); every configuration when empty.
    pub only_configurations: Vec<String>,
    /// Only the cells whose swept value of KEY is one of those given for it (`--sweep KEY=VALUE`).
    pub only_swept: Vec<(String, String)>,
    /// The directory the spec's deployment and workload files are relative to.
    pub base: PathBuf,
    /// The spec's file as the results store names it.
    pub source: String,
    /// The results store (SQLite); runs recorded there already are skipped (resume).
    pub results: PathBuf,
    pub clusters_dir: PathBuf,
    /// Serve every run's live figures, labelled with its cell, at this address.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// What started it (passwords redacted), recorded with every run.
    pub command: Vec<String>,
    /// How to start client processes (the `scalebench` binary's `client-process`): runs that sweep
    /// `clients` above 1 need it.
    pub client_program: Option<scalebench_distributed::local::ClientProgram>,
    /// `--threshold` and `--sla FILE`'s `[run]` thresholds, judged on every run with the file's own.
    pub thresholds: thresholds::CellThresholds,
}

/// What [`run_experiment`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExperimentOutcome {
    pub done: usize,
    pub failed: usize,
    /// Recorded already (resume).
    pub skipped: usize,
    /// Claimed by another live experiment process on the same results database: left to it.
    pub claimed_elsewhere: usize,
    /// Ctrl-C ended it: the same request resumes it.
    pub interrupted: bool,
    /// Runs done whose events missed `[procedure.elastic] service_level` (exit code 4).
    pub missed_service_level: usize,
    /// Runs done that broke a threshold (exit code 4).
    pub broke_thresholds: usize,
}

/// Checks every deployment file, every configuration's change of it and every run's values before
/// anything starts; returns the plan.
pub fn check_experiment(request: &ExperimentRequest) -> Result<Vec<PlannedRun>, SessionError> {
    let (exp, base) = (&request.experiment, &request.base);
    // The results database is written in place: only ever a regular file, never through a link.
    scalebench_measure::files::check_output(&request.results)
        .map_err(|e| SessionError::Usage(format!("--results: {e}")))?;
    for d in &exp.databases {
        if let Some(f) = &d.deployment {
            let deployment = Deployment::from_file(&base.join(f))?;
            for c in exp
                .configurations
                .iter()
                .filter(|c| c.databases.is_empty() || c.databases.contains(&d.name))
            {
                let c = Experiment::with_database_settings(d, c);
                Experiment::derived_deployment(&deployment, &c)
                    .map_err(|e| SessionError::Usage(format!("database {:?}: {e}", d.name)))?;
            }
        }
    }
    service_level(exp, base)?;
    let plan = request
        .cells
        .select(with_operations_they_have(exp, base, exp.plan())?);
    let plan = of_rows(
        exp,
        &request.only_databases,
        &request.only_configurations,
        plan,
    )?;
    let plan = of_swept_values(&request.only_swept, plan)?;
    check_every_run(exp, base, &plan, &request.clusters_dir)?;
    Ok(plan)
}

/// The runs of `plan` on the databases and in the configurations named (all when none is), each
/// name checked against the file's.
fn of_rows(
    exp: &Experiment,
    databases: &[String],
    configurations: &[String],
    plan: Vec<PlannedRun>,
) -> Result<Vec<PlannedRun>, SessionError> {
    let known_databases: Vec<&str> = exp.databases.iter().map(|d| d.name.as_str()).collect();
    // A database no configuration names runs in "default" (the plan's name for it).
    let mut known_configurations: Vec<&str> =
        exp.configurations.iter().map(|c| c.name.as_str()).collect();
    for r in &plan {
        if !known_configurations.contains(&r.configuration.as_str()) {
            known_configurations.push(r.configuration.as_str());
        }
    }
    for (option, names, known) in [
        ("--database", databases, &known_databases),
        ("--configuration", configurations, &known_configurations),
    ] {
        if let Some(unknown) = names.iter().find(|n| !known.contains(&n.as_str())) {
            return Err(SessionError::Usage(format!(
                "{option} {unknown:?}: the experiment has no such {} (it has {})",
                &option[2..],
                known.join(", ")
            )));
        }
    }
    let chosen = |names: &[String], name: &String| names.is_empty() || names.contains(name);
    let plan: Vec<PlannedRun> = plan
        .into_iter()
        .filter(|r| chosen(databases, &r.database) && chosen(configurations, &r.configuration))
        .collect();
    if plan.is_empty() && !(databases.is_empty() && configurations.is_empty()) {
        return Err(SessionError::Usage(
            "--database and --configuration leave no cell of the experiment to run (a configuration applies to some databases only)".into(),
        ));
    }
    Ok(plan)
}

/// The runs of `plan` whose swept values are among those `chosen` names for each key (all when
/// none is): a row of a sweep again, or a miniature without its costliest value. A key the sweep
/// lacks, or a value it never takes, is refused naming what it has.
fn of_swept_values(
    chosen: &[(String, String)],
    plan: Vec<PlannedRun>,
) -> Result<Vec<PlannedRun>, SessionError> {
    for (key, value) in chosen {
        let mut taken: Vec<&str> = plan
            .iter()
            .filter_map(|r| r.params.get(key).map(String::as_str))
            .collect();
        taken.sort_unstable();
        taken.dedup();
        if taken.is_empty() {
            return Err(SessionError::Usage(format!(
                "--sweep {key}={value}: the experiment sweeps no {key:?}"
            )));
        }
        if !taken.contains(&value.as_str()) {
            return Err(SessionError::Usage(format!(
                "--sweep {key}={value}: {key} takes {} in this experiment",
                taken.join(", ")
            )));
        }
    }
    Ok(plan
        .into_iter()
        .filter(|r| {
            chosen.iter().all(|(key, _)| {
                let value = r.params.get(key);
                chosen.iter().any(|(k, v)| k == key && value == Some(v))
            })
        })
        .collect())
}

/// Runs every planned run not recorded yet, each recorded in the results store as it ends (a
/// failed run too, with its error); stops the clusters it started. Ctrl-C ends it after what is
/// running.
pub fn run_experiment(request: &ExperimentRequest) -> Result<ExperimentOutcome, SessionError> {
    let plan = check_experiment(request)?;
    let (exp, base, clusters_dir) = (&request.experiment, &request.base, &request.clusters_dir);
    // Before anything is recorded or deployed: the clusters locked, and one someone else runs never
    // taken over.
    let mut deployments = Vec::new();
    // One look per deployment a run can have (database, configuration, swept size), not per run.
    let mut seen = std::collections::BTreeSet::new();
    for run in &plan {
        let key = (
            &run.database,
            &run.configuration,
            run.params.get(CLUSTER_SIZE),
        );
        if seen.insert(key) {
            if let Some(planned) = PlannedDeployment::of(exp, base, run)? {
                deployments.push(planned.deployment()?);
            }
        }
    }
    let mut state = RunnerState {
        client_program: request.client_program.clone(),
        ..RunnerState::default()
    };
    state.clusters.lock_all(&deployments, clusters_dir)?;
    clusters::refuse_clusters_of_others(&exp.name, &deployments, clusters_dir)?;
    let command = &request.command;
    let mut store = Store::open(&request.results).map_err(SessionError::Failed)?;
    // Stored without passwords (database URLs, secret properties).
    let spec_json = serde_json::to_value(exp)
        .map(|v| scalebench_session::environment::redacted_json(&v).to_string())
        .unwrap_or_default();
    let id = store
        .experiment(&exp.name, &request.source, &spec_json)
        .map_err(SessionError::Failed)?;
    let metrics = request
        .metrics_listen
        .map(scalebench_session::metrics::serve_while)
        .transpose()?;
    // From here a Ctrl-C stops the experiment after what is running (deploys and restores included).
    scalebench_session::interrupt::install_handler();
    let total = plan.len();
    let mut interrupted = false;
    let (mut done, mut failed, mut skipped, mut missed, mut elsewhere) = (0, 0, 0, 0, 0);
    let mut broke = 0;
    let judged = request
        .thresholds
        .clone()
        .with_procedure(&exp.procedure.thresholds);
    // Stored redacted, compared as stored.
    let definitions: Vec<String> = plan
        .iter()
        .map(|r| scalebench_session::environment::redacted_json(&exp.run_definition(r)).to_string())
        .collect();
    let recorded: Vec<Recorded> = plan
        .iter()
        .zip(&definitions)
        .map(|(r, d)| store.recorded(id, r, d))
        .collect();
    let redefined = recorded
        .iter()
        .filter(|r| **r == Recorded::OtherDefinition)
        .count();
    if redefined > 0 {
        scalebench_session::note!(
            "{redefined} recorded runs were measured under another definition of their cell (the file changed): they run again and replace the old ones"
        );
    }
    let orphans = store.orphans(id, &plan).map_err(SessionError::Failed)?;
    if orphans > 0 {
        scalebench_session::note!(
            "{orphans} recorded runs are no longer in the plan (cells or repetitions removed from the file): kept in {}, left out of statistics and exports where their cell's definition changed",
            request.results.display()
        );
    }
    for (i, run) in plan.iter().enumerate() {
        let definition = &definitions[i];
        if recorded[i] == Recorded::Done {
            skipped += 1;
            continue;
        }
        if scalebench_session::interrupt::interrupt_requested() {
            interrupted = true;
            break;
        }
        // Another process on the same results database may be measuring it, or have done so.
        match store
            .claim(id, run, definition)
            .map_err(SessionError::Failed)?
        {
            claims::Claim::Mine => {}
            claims::Claim::DoneElsewhere => {
                skipped += 1;
                continue;
            }
            claims::Claim::HeldBy(who) => {
                scalebench_session::note!(
                    "[{}/{total}] {} #{}: being measured by another experiment process ({who}): left to it",
                    i + 1,
                    run.cell,
                    run.repetition
                );
                elsewhere += 1;
                continue;
            }
        }
        scalebench_session::note!("[{}/{total}] {} #{}", i + 1, run.cell, run.repetition);
        if let Some(m) = &metrics {
            m.server()
                .set_cell(Some(format!("{} #{}", run.cell, run.repetition)));
        }
        let started_at = now();
        let publisher = metrics.as_ref().map(|m| m.publisher());
        let outcome = one_run(
            exp,
            base,
            run,
            &mut state,
            clusters_dir,
            command,
            &publisher,
        )
        .map(|(mut r, elastic)| {
            if judged.judge(&mut r) {
                scalebench_session::note!("  threshold broken");
                broke += 1;
            }
            (r, elastic)
        });
        match &outcome {
            Ok((r, elastic)) => {
                store
                    .record(
                        id,
                        (run, definition),
                        &started_at,
                        Ok(r),
                        elastic.as_ref(),
                        exp.procedure.max_failed_share,
                    )
                    .map_err(SessionError::Failed)?;
                if r.interrupted {
                    interrupted = true;
                    break;
                }
                done += 1;
                if elastic
                    .as_ref()
                    .is_some_and(ElasticOutcome::missed_service_level)
                {
                    scalebench_session::note!("  service level missed");
                    missed += 1;
                }
            }
            // Stopped before it measured anything: not a failure of the run, which runs on resume.
            Err(_) if scalebench_session::interrupt::interrupt_requested() => {
                interrupted = true;
                break;
            }
            Err(e) => {
                scalebench_session::note!("  failed: {e}");
                store
                    .record(
                        id,
                        (run, definition),
                        &started_at,
                        Err(&e.to_string()),
                        None,
                        exp.procedure.max_failed_share,
                    )
                    .map_err(SessionError::Failed)?;
                failed += 1;
            }
        }
    }
    // Recorded or given up: the claims go (a run interrupted is free for whoever resumes it).
    store.release_claims(id).map_err(SessionError::Failed)?;
    for dir in &state.clusters.started {
        if let Ok(mut c) = Cluster::open(dir) {
            c.down();
        }
    }
    Ok(ExperimentOutcome {
        done,
        failed,
        skipped,
        claimed_elsewhere: elsewhere,
        interrupted,
        missed_service_level: missed,
        broke_thresholds: broke,
    })
}

/// The deployment a run uses, as planned (nothing written): the database's file, and, when the
/// configuration or a swept cluster size changes it, the derived deployment with the name of the
/// file it is written to.
struct PlannedDeployment {
    file: PathBuf,
    derived: Option<(Deployment, String)>,
}

impl PlannedDeployment {
    fn of(exp: &Experiment, base: &Path, run: &PlannedRun) -> Result<Option<Self>, SessionError> {
        let db = exp
            .databases
            .iter()
            .find(|d| d.name == run.database)
            .expect("planned");
        let Some(file) = &db.deployment else {
            return Ok(None);
        };
        let file = base.join(file);
        let config = exp
            .configurations
            .iter()
            .find(|c| c.name == run.configuration)
            .cloned()
            .unwrap_or_else(|| Configuration {
                name: "default".into(), // the implicit default configuration
                ..Default::default()
            });
        // Configurations that only set properties run on the same cluster (the database's own
        // settings apply to all of them).
        let own_deployment = !config.server.is_empty() || !config.deployment.is_empty();
        let mut config = Experiment::with_database_settings(db, &config);
        // A swept cluster size is one more deployment key.
        let size = run.params.get(CLUSTER_SIZE);
        if let Some(n) = size {
            let n: i64 = n.parse().expect("checked: a node count");
            config
                .deployment
                .insert(CLUSTER_SIZE.into(), toml::Value::Integer(n));
        }
        if config.server.is_empty() && config.deployment.is_empty() {
            return Ok(Some(PlannedDeployment {
                file,
                derived: None,
            }));
        }
        let d = Experiment::derived_deployment(&Deployment::from_file(&file)?, &config)
            .map_err(SessionError::Usage)?;
        let name = format!(
            "{}{}{}.toml",
            d.name,
            if own_deployment {
                format!("-{}", config.name)
            } else {
                String::new()
            },
            size.map_or(String::new(), |n| format!("-{n}-nodes"))
        );
        Ok(Some(PlannedDeployment {
            file,
            derived: Some((d, name)),
        }))
    }

    /// The deployment as the cluster will run it.
    fn deployment(&self) -> Result<Deployment, SessionError> {
        match &self.derived {
            Some((d, _)) => Ok(d.clone()),
            None => Ok(Deployment::from_file(&self.file)?),
        }
    }
}

/// The deployment file a run uses: the database's, with the configuration's server settings merged
/// (written beside the clusters when there are any).
fn deployment_for(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
    clusters_dir: &Path,
) -> Result<Option<PathBuf>, SessionError> {
    let Some(planned) = PlannedDeployment::of(exp, base, run)? else {
        return Ok(None);
    };
    let Some((d, name)) = planned.derived else {
        return Ok(Some(planned.file));
    };
    let derived = clusters_dir.join("deployments").join(name);
    std::fs::create_dir_all(derived.parent().unwrap())
        .map_err(|e| SessionError::Failed(e.to_string()))?;
    let text = toml::to_string(&d).map_err(|e| SessionError::Failed(e.to_string()))?;
    // An external deployment's URL may carry a password.
    scalebench_session::files::write_private(&derived, &text)?;
    Ok(Some(derived))
}

fn props(
    map: &BTreeMap<String, toml::Value>,
) -> impl Iterator<Item = scalebench_workload::Assignment> + '_ {
    map.iter()
        .map(|(k, v)| scalebench_workload::Assignment::new(k, value_text(v)))
}

/// The request of a run's load or measured run: the workload and configuration's properties, the
/// swept values, the procedure's options. `command` is what started the experiment.
fn phase_request(
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
        r.target = None;
        r.rate_profile = None;
    }
    for (k, v) in &run.params {
        let bad =
            |e: String| SessionError::Usage(format!("invalid value '{v}' for sweep {k}: {e}"));
        match k.as_str() {
            CLUSTER_SIZE => {} // the deployment's, see deployment_for
            spec::ACTION => {} // the elastic run's, see elastic_run
            // A data size: its properties.
            DATA_SIZE => {
                let size = exp
                    .data_sizes
                    .iter()
                    .find(|d| &d.name == v)
                    .ok_or_else(|| bad("no such [[data]] entry".into()))?;
                r.properties.extend(props(&size.properties));
            }
            // The number of client processes of the measured run, see one_run.
            "clients" => {
                request::parse_clients(v).map_err(bad)?;
            }
            "threads" => r.threads = Some(request::parse_threads(v).map_err(bad)?),
            "concurrency" => r.concurrency = request::parse_concurrency(v).map_err(bad)?,
            // An offered rate throttles the measured run, not the load.
            "target" if phase == Phase::Load => {}
            "target" => r.target = Some(request::parse_rate(v).map_err(bad)?),
            _ => {
                r.property(k, v);
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
            r.consistency_probe = match exp.procedure.consistency_probe {
                Some(rate) => {
                    let mut probe = request::ProbeRequest::new(rate)?;
                    if let Some(delays) = &exp.procedure.probe_delays {
                        probe.delays_ms = request::ProbeDelays::new(delays.clone())
                            .map_err(|why| SessionError::Usage(why.into()))?
                            .into_ms();
                    }
                    if let Some(keys) = exp.procedure.probe_keys {
                        probe.keys = keys;
                    }
                    Some(probe)
                }
                None => None,
            };
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

/// Every run's values (properties, rates, durations, URLs, binding option names), checked before
/// the first run: a bad one is the file's error now, not a failed run hours in.
fn check_every_run(
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
            let mut request =
                phase_request(exp, base, run, None, clusters_dir, phase, &[]).map_err(in_cell)?;
            // Clients on this machine have their launcher relay the probe's writer.
            request.launcher_here = exp.procedure.clients.launcher == spec::ClientsLauncher::Local;
            // Swept client processes (the measured run's; the load is one process) are no part of
            // the request.
            let launch = match (phase, clients_of(run)) {
                (Phase::Run, Some(_)) => request::Launch::Clients,
                _ => request::Launch::OneProcess,
            };
            if !checked.insert(format!("{launch:?} {request:?}")) {
                continue;
            }
            request.check(launch, &[phase]).map_err(in_cell)?;
            scalebench_session::settings::Settings::check(&request, phase).map_err(in_cell)?;
        }
        check_fault_node(exp, base, run)?;
        check_operation(exp, base, run)?;
    }
    Ok(())
}

/// The client processes a run's measured phase is swept to, when more than one.
fn clients_of(run: &PlannedRun) -> Option<u32> {
    match run.params.get("clients").map(|n| n.parse::<u32>()) {
        Some(Ok(n)) if n > 1 => Some(n),
        _ => None,
    }
}

/// A `[fault]` names a node the run's cluster will have (ids are given at `up`, in the order
/// each engine starts its nodes).
fn check_fault_node(exp: &Experiment, base: &Path, run: &PlannedRun) -> Result<(), SessionError> {
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
fn action_of(exp: &Experiment, run: &PlannedRun) -> ScaleAction {
    run.params
        .get(spec::ACTION)
        .and_then(|a| elastic_request::parse_action(a).ok())
        .unwrap_or(exp.procedure.elastic.action)
}

/// Operations swept across databases (`[sweep] action`): a cell whose database's kind does not have
/// its operation (a repair on Redis, a failover on masterless Cassandra) is left out of the plan and
/// said so, as the report's matrix leaves its entry empty; an operation no database has is refused
/// (exit 2), as a misspelt one would be.
fn with_operations_they_have(
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
fn check_operation(exp: &Experiment, base: &Path, run: &PlannedRun) -> Result<(), SessionError> {
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

fn execute(request: &RunRequest, phase: Phase) -> Result<RunResult, SessionError> {
    execute_phases(request, &[phase]).map(|e| {
        e.warn_unwritten();
        e.result
    })
}

fn one_run(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
    state: &mut RunnerState,
    clusters_dir: &Path,
    command: &[String],
    metrics: &Option<scalebench_session::metrics::Publisher>,
) -> Result<(RunResult, Option<ElasticOutcome>), SessionError> {
    let deployment = deployment_for(exp, base, run, clusters_dir)?;
    if let Some(f) = &deployment {
        if clusters::ensure_cluster(f, &exp.name, &mut state.clusters, clusters_dir)? {
            state.loaded = None;
        }
    }
    let request_for = |phase| {
        phase_request(
            exp,
            base,
            run,
            deployment.as_deref(),
            clusters_dir,
            phase,
            command,
        )
        .map(|mut r| {
            r.metrics = metrics.clone();
            r
        })
    };
    match exp.procedure.measure {
        // The load is what is measured: a fresh one every run.
        Measure::Load => {
            return execute(&request_for(Phase::Load)?, Phase::Load).map(|r| (r, None))
        }
        Measure::Elastic => {
            let f = deployment
                .as_deref()
                .expect("checked: elastic needs deployments");
            let clients = match clients_of(run) {
                Some(n) => Some(local_clients(n, state, &exp.procedure.clients)?),
                None => None,
            };
            let outcome = elastic_run(exp, base, run, request_for(Phase::Run)?, clients.as_ref());
            // The cluster has changed size: the next run starts from a fresh deployment.
            if let Ok(mut c) =
                Cluster::open(&Cluster::dir_for(clusters_dir, &Deployment::from_file(f)?))
            {
                c.down();
            }
            state.clusters.deployed = None;
            state.loaded = None;
            return outcome;
        }
        Measure::Run => {}
    }
    let mode = exp.procedure.load;
    let mut load = None;
    if mode == LoadMode::EachRun || state.loaded.as_deref() != Some(run.data_key.as_str()) {
        let loaded = execute(&request_for(Phase::Load)?, Phase::Load)?;
        if loaded.interrupted {
            return Ok((loaded, None));
        }
        scalebench_session::phase::require_complete_load(&loaded)?;
        if matches!(mode, LoadMode::Restore | LoadMode::RestoreEach) {
            let f = deployment.as_deref().expect("restore needs a deployment");
            let mut c = Cluster::open(&Cluster::dir_for(clusters_dir, &Deployment::from_file(f)?))?;
            c.snapshot("experiment")?;
        }
        state.loaded = Some(run.data_key.clone());
        state.next_insert = None;
        state.loaded_records = loaded.phases.first().map_or(0, |p| p.totals.records);
        state.records = state.loaded_records;
        state.written = false;
        load = loaded.phases.into_iter().next();
    } else if (mode == LoadMode::RestoreEach && state.written)
        || (mode == LoadMode::Restore && state.next_insert.is_some())
    {
        // Wegert restored the data before the runs that insert (studies.md, study 2: "restore data
        // before runs that insert"): a run starts on the loaded records, never on a set grown by
        // earlier inserts. Reads and updates leave the record set as loaded, so only a run after
        // inserts needs the copy back (a run that inserts first, on unchanged data, does not).
        let f = deployment.as_deref().expect("restore needs a deployment");
        let mut c = Cluster::open(&Cluster::dir_for(clusters_dir, &Deployment::from_file(f)?))?;
        scalebench_session::note!(
            "  restoring the loaded data ({})",
            if mode == LoadMode::RestoreEach {
                "before every measured run"
            } else {
                "earlier runs inserted"
            }
        );
        c.restore("experiment")?;
        // The snapshot predates every run's inserts.
        state.next_insert = None;
        state.records = state.loaded_records;
        state.written = false;
    }
    if exp.procedure.drop_caches && !(exp.procedure.drop_caches_once && state.caches_dropped) {
        let dropped = std::process::Command::new("sync").status().is_ok()
            && std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok();
        state.caches_dropped = true;
        if !dropped && !state.drop_caches_warned {
            scalebench_session::note!("warning: cannot drop the page cache here (needs root): runs start with a warm cache");
            state.drop_caches_warned = true;
        }
    }
    let mut request = request_for(Phase::Run)?;
    if let Some(start) = state.next_insert {
        // The data is kept between runs (load = "once"): each run inserts into keys of its own.
        request.set(
            &scalebench_workload::declared::TRANSACTIONINSERTSTART,
            start,
        );
    }
    let run_result = match clients_of(run) {
        Some(n) => run_clients(&request, n, state, &exp.procedure.clients),
        _ => execute(&request, Phase::Run),
    };
    if run_result.is_err() {
        // How far a failed run's inserts got is unknown: load afresh before the next run.
        state.loaded = None;
    }
    let mut result = run_result?;
    if let Some(keys) = result.phases.last().and_then(|p| p.insert_keys) {
        state.next_insert = Some(keys.end);
    }
    if let Some(p) = result.phases.last_mut() {
        p.data.records_at_start = Some(state.records);
        let ok = |op: &str| p.operations.get(op).map_or(0, |o| o.ok);
        state.records = (state.records + ok("INSERT")).saturating_sub(ok("DELETE"));
    }
    // Reads leave the data as loaded; a mix with writes (its warm-up too, a failed write may have
    // landed) does not.
    let writes = [
        "updateproportion",
        "insertproportion",
        "readmodifywriteproportion",
        "deleteproportion",
    ]
    .iter()
    .any(|k| {
        result
            .parameters
            .properties
            .get(*k)
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|p| p > 0.0)
    });
    state.written |= writes;
    // The record keeps the load that preceded the run (if any) before the measured phase.
    if let Some(l) = load {
        result.phases.insert(0, l);
    }
    Ok((result, None))
}

/// A prefix of the rendezvous holds one run: this one's from the clock (a resumed experiment never
/// meets an earlier attempt's clients).
fn run_stamp() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// `clients` client processes on this machine, as `[procedure.clients]` places them.
fn local_clients(
    clients: u32,
    state: &RunnerState,
    how: &spec::ClientsProcedure,
) -> Result<scalebench_distributed::local::LocalLaunch, SessionError> {
    let program = state.client_program.clone().ok_or_else(|| {
        SessionError::Failed(
            "this program cannot start client processes: sweep.clients needs the scalebench binary"
                .into(),
        )
    })?;
    Ok(scalebench_distributed::local::LocalLaunch {
        program,
        clients,
        start_timeout: request::parse_duration(request::DEFAULT_START_TIMEOUT)
            .expect("a valid default"),
        cpus: how.cpus.clone(),
    })
}

/// The measured run as `clients` client processes (is the client the bottleneck? a column of the
/// results), started as `[procedure.clients]` says: on this machine, or over ssh meeting in etcd
/// under a prefix of this run's own. One merged result, or a failed run when a client left none.
fn run_clients(
    request: &RunRequest,
    clients: u32,
    state: &RunnerState,
    how: &spec::ClientsProcedure,
) -> Result<RunResult, SessionError> {
    use scalebench_distributed::{etcd, ssh, Launcher};
    let start_timeout =
        request::parse_duration(request::DEFAULT_START_TIMEOUT).expect("a valid default");
    let launch: Box<dyn Launcher> = match how.launcher {
        spec::ClientsLauncher::Local => Box::new(local_clients(clients, state, how)?),
        spec::ClientsLauncher::Ssh => {
            let url = etcd::RendezvousUrl::parse(how.rendezvous.as_deref().unwrap_or_default())?;
            let ssh = ssh::SshLaunch {
                hosts: how.hosts.clone(),
                clients,
                ssh_command: how
                    .ssh_command
                    .clone()
                    .unwrap_or_else(|| ssh::DEFAULT_SSH_COMMAND.into()),
                remote_program: how
                    .remote_program
                    .clone()
                    .unwrap_or_else(|| "scalebench".into()),
                rendezvous: url,
                start_timeout,
            };
            Box::new(ssh.for_run(&format!("run-{}", run_stamp())))
        }
        spec::ClientsLauncher::Srun => {
            let srun = scalebench_distributed::srun::SrunLaunch {
                clients,
                srun_command: how
                    .srun_command
                    .clone()
                    .unwrap_or_else(|| scalebench_distributed::srun::DEFAULT_SRUN_COMMAND.into()),
                program: how
                    .remote_program
                    .clone()
                    .unwrap_or_else(|| "scalebench".into()),
                rendezvous: etcd::RendezvousUrl::parse(
                    how.rendezvous.as_deref().unwrap_or_default(),
                )?,
                start_timeout,
            };
            Box::new(srun.for_run(&format!("run-{}", run_stamp())))
        }
    };
    let outcome = launch.launch(request, Phase::Run)?;
    if let Some(d) = outcome
        .merged
        .distributed
        .as_ref()
        .filter(|d| !d.missing.is_empty())
    {
        let missing: Vec<String> = d
            .missing
            .iter()
            .map(|m| format!("client {} ({})", m.index, m.reason))
            .collect();
        return Err(SessionError::Failed(format!(
            "{} of {clients} clients left no result: {}",
            d.missing.len(),
            missing.join(", ")
        )));
    }
    Ok(outcome.merged)
}

/// `[procedure.elastic] service_level`, read (relative to the experiment file) and checked: bad
/// input before anything starts.
fn service_level(
    exp: &Experiment,
    base: &Path,
) -> Result<Option<elastic_request::ServiceLevelFile>, SessionError> {
    let Some(file) = &exp.procedure.elastic.service_level else {
        return Ok(None);
    };
    let path = base.join(file);
    elastic_request::parse_service_level(&path.to_string_lossy())
        .map(Some)
        .map_err(|e| SessionError::Usage(format!("procedure.elastic.service_level: {e}")))
}

/// `scalebench elastic` with the run's options and `[procedure.elastic]`: every step's transition
/// (its events and scores) and the table of stable sizes (Dory's mean and deviation of request-set
/// times per size, and the scalability between sizes where everything doubled) go beside the
/// record, whose run is the first step's run under load.
fn elastic_run(
    exp: &Experiment,
    base: &Path,
    planned: &PlannedRun,
    mut run: RunRequest,
    clients: Option<&scalebench_distributed::local::LocalLaunch>,
) -> Result<(RunResult, Option<ElasticOutcome>), SessionError> {
    let e = &exp.procedure.elastic;
    let action = action_of(exp, planned);
    run.create_schema = true;
    // Every operation's acknowledged writes are verified after it, as `scalebench elastic` does
    // (by each client, of the keys it alone wrote). Dory's doubling keeps none: his procedure
    // measured performance only, and the record would cost its request sets time.
    run.verify_writes = action != ScaleAction::Double;
    if let Some(why) = Settings::unverifiable_writes(&run)?.filter(|_| run.verify_writes) {
        // An experiment has no --no-verify-writes: the cell runs unverified, and says why.
        scalebench_session::note!("note: {why}: this cell's writes are not verified");
        run.verify_writes = false;
    }
    let mut elastic = ElasticRequest::new(run);
    elastic.action = action;
    elastic.service_level = service_level(exp, base)?;
    elastic.baseline = e.baseline.0;
    elastic.after = e.after.0;
    elastic.stable_sets = e.stable_sets;
    elastic.stable_timeout = e.stable_timeout.0;
    elastic.set_repeats = e.set_repeats;
    elastic.score_time_axis = e.score_time_axis;
    elastic.steps = e.steps;
    let out = crate::elastic::run_elastic_from(&elastic, clients.map(|c| c as _))?;
    if let Some(why) = &out.incomplete {
        return Err(SessionError::Failed(why.clone()));
    }
    if out.interrupted || out.steps.len() < e.steps as usize {
        return Err(SessionError::Failed(format!(
            "interrupted after {} of {} steps",
            out.steps.len(),
            e.steps
        )));
    }
    let mut first_run = None;
    let mut transitions = Vec::new();
    for step in out.steps {
        let (stabilisation_s, elasticity) = match &step.scores {
            scalebench_elastic::StepScores::RequestSets(s) => (s.stabilisation_s, s.elasticity),
            scalebench_elastic::StepScores::OpenLoop(s) => (s.stabilisation_s, None),
            scalebench_elastic::StepScores::Unloaded(s) => (s.full_availability_s, None),
        };
        let Some(run) = step.run else {
            return Err(SessionError::Usage(
                "an experiment's runs are measured under load: leave --unloaded to scalebench elastic"
                    .into(),
            ));
        };
        first_run.get_or_insert(run);
        transitions.push(ElasticRecord {
            step: step.step,
            action: action.to_string(),
            verdict: step
                .verdict
                .as_ref()
                .and_then(|v| serde_json::to_string(v).ok()),
            nodes_before: step.nodes_before,
            nodes_after: step.nodes_after,
            stabilisation_s,
            elasticity,
            events: serde_json::to_string(&step.events).unwrap_or_default(),
            scores: serde_json::to_string(&step.scores).unwrap_or_default(),
        });
    }
    let run = first_run.ok_or_else(|| SessionError::Failed("no step was measured".into()))?;
    Ok((
        run,
        Some(ElasticOutcome {
            transitions,
            sizes: out.sizes,
        }),
    ))
}

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
