//! `scalebench experiment FILE.toml`: runs a matrix unattended, each run recorded in the results
//! database; `scalebench results`: lists, summarises and exports what is recorded.

mod checks;
mod claims;
mod clusters;
mod deployment;
mod ending;
pub mod export;
mod run_request;
mod show;
pub mod spec;
/// Statistics per cell (in `scalebench-report`, whose pages read them).
pub use scalebench_report::cells as stats;
pub mod store;
pub mod thresholds;

use checks::*;
use deployment::*;
use run_request::*;
pub use show::{cells, discard_first_of, experiments_text, plan_text, show};

use std::path::{Path, PathBuf};

use scalebench_deploy::{Cluster, Deployment};
use scalebench_exec::Phase;
use scalebench_measure::RunResult;

use crate::elastic::request::{self as elastic_request, ElasticRequest, ScaleAction};
use scalebench_session::error::SessionError;
use scalebench_session::phase::execute_phases;
use scalebench_session::request::{self, RunRequest};
use scalebench_session::settings::Settings;
use scalebench_session::wiring::RunWiring;
use spec::{Cells, Experiment, LoadMode, Measure, PlannedRun};
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
        let mut taken: Vec<String> = plan
            .iter()
            .filter_map(|r| r.params.get(key).map(spec::Swept::text))
            .collect();
        taken.sort_unstable();
        taken.dedup();
        if taken.is_empty() {
            return Err(SessionError::Usage(format!(
                "--sweep {key}={value}: the experiment sweeps no {key:?}"
            )));
        }
        if !taken.contains(value) {
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
                let value = r.params.get(key).map(spec::Swept::text);
                chosen
                    .iter()
                    .any(|(k, v)| k == key && value.as_ref() == Some(v))
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
    let deployments = deployments_of(exp, base, &plan)?;
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
    let (definitions, recorded) = recorded_runs(&store, id, exp, &plan, &request.results)?;
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
    release(&store, id, &state)?;
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

/// After the last run: the claims go (a run interrupted is free for whoever resumes it), recorded
/// or given up, and the clusters the experiment started are taken down.
fn release(store: &Store, id: i64, state: &RunnerState) -> Result<(), SessionError> {
    store.release_claims(id).map_err(SessionError::Failed)?;
    for dir in &state.clusters.started {
        if let Ok(mut c) = Cluster::open(dir) {
            c.down();
        }
    }
    Ok(())
}

/// Every deployment the plan's runs use, one look per deployment a run can have (database,
/// configuration, swept size), not per run.
fn deployments_of(
    exp: &Experiment,
    base: &Path,
    plan: &[PlannedRun],
) -> Result<Vec<Deployment>, SessionError> {
    let mut deployments = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for run in plan {
        let key = (&run.database, &run.configuration, run.params.nodes());
        if seen.insert(key) {
            if let Some(planned) = PlannedDeployment::of(exp, base, run)? {
                deployments.push(planned.deployment()?);
            }
        }
    }
    Ok(deployments)
}

/// Each run's definition (stored redacted, compared as stored) and what the results database
/// holds of it; says how many recorded runs run again under a changed definition and how many
/// are no longer in the plan.
fn recorded_runs(
    store: &Store,
    id: i64,
    exp: &Experiment,
    plan: &[PlannedRun],
    results: &Path,
) -> Result<(Vec<String>, Vec<Recorded>), SessionError> {
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
    let orphans = store.orphans(id, plan).map_err(SessionError::Failed)?;
    if orphans > 0 {
        scalebench_session::note!(
            "{orphans} recorded runs are no longer in the plan (cells or repetitions removed from the file): kept in {}, left out of statistics and exports where their cell's definition changed",
            results.display()
        );
    }
    Ok((definitions, recorded))
}

fn execute(
    request: &RunRequest,
    wiring: &RunWiring,
    phase: Phase,
) -> Result<RunResult, SessionError> {
    execute_phases(request, wiring, &[phase]).map(|e| {
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
    };
    // The runs publish their live figures where the experiment serves them.
    let wiring = RunWiring {
        metrics: metrics.clone(),
        ..RunWiring::default()
    };
    match exp.procedure.measure {
        // The load is what is measured: a fresh one every run.
        Measure::Load => {
            return execute(&request_for(Phase::Load)?, &wiring, Phase::Load).map(|r| (r, None))
        }
        Measure::Elastic => {
            let f = deployment
                .as_deref()
                .expect("checked: elastic needs deployments");
            let clients = match clients_of(run) {
                Some(n) => Some(local_clients(n, state, &exp.procedure.clients)?),
                None => None,
            };
            let outcome = elastic_run(
                exp,
                base,
                run,
                request_for(Phase::Run)?,
                &wiring,
                clients.as_ref(),
            );
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
        let loaded = execute(&request_for(Phase::Load)?, &wiring, Phase::Load)?;
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
        drop_caches(state);
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
        _ => execute(&request, &wiring, Phase::Run),
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
    state.written |= writes_data(&result);
    // The record keeps the load that preceded the run (if any) before the measured phase.
    if let Some(l) = load {
        result.phases.insert(0, l);
    }
    Ok((result, None))
}

/// Drops the page cache before a measured run (`procedure.drop_caches`), warning once where it
/// cannot (it needs root).
fn drop_caches(state: &mut RunnerState) {
    let dropped = std::process::Command::new("sync").status().is_ok()
        && std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok();
    state.caches_dropped = true;
    if !dropped && !state.drop_caches_warned {
        scalebench_session::note!(
            "warning: cannot drop the page cache here (needs root): runs start with a warm cache"
        );
        state.drop_caches_warned = true;
    }
}

/// Whether a run may have changed the loaded data: reads leave it as loaded; a mix with writes
/// (its warm-up too, a failed write may have landed) does not.
fn writes_data(result: &RunResult) -> bool {
    [
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
    })
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
    let outcome = launch.launch(request, &RunWiring::default(), Phase::Run)?;
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
    wiring: &RunWiring,
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
    let out = crate::elastic::run_elastic_from(&elastic, wiring, clients.map(|c| c as _))?;
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
