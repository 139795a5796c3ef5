//! The phases of a run (load, run) with the steps around them: wait until the cluster is ready or
//! idle, flush and compact after a load, the space on disk (as inserted and settled), the resource
//! monitors and their verdict.

use scalebench_binding::config::is_secret_key;
use scalebench_binding::{registry, BindingFactory, FactoryVisitor};
use scalebench_deploy::Cluster;
use scalebench_exec::{execute, Observers, Phase, PhaseOutcome, Progress, StopSignal};
use scalebench_measure::definition::RunDefinition;
use scalebench_measure::hdrlog;
use scalebench_measure::intervals::RecordedIntervals;
use scalebench_measure::result::{
    DeploymentInfo, MarginalSpace, Parameters, RunResult, SpaceState, SCHEMA,
};
use scalebench_measure::EndedBy;
use scalebench_measure::{PhaseResult, Space};
use scalebench_workload::CoreWorkload;

use crate::beside::{Beside, BesidePhase, BesideRequest};
use crate::environment::{host_info, tool_info};
use crate::error::SessionError;
use crate::fault::FaultRequest;
use crate::progress::Display;
use crate::request::{RunRequest, SpaceAfterLoad};
use crate::settings::Settings;
use crate::wiring::RunWiring;

/// What [`execute_phases`] measured.
pub struct ExecutedPhases {
    pub result: RunResult,
    /// The percentiles the summary should show.
    pub percentiles: Vec<f64>,
    /// Per phase of the result, its intervals at the recorded length.
    pub recorded: Vec<RecordedIntervals>,
    /// A deployment's step after a phase (flush, wait until idle, space on disk) failed: the
    /// phases measured are kept without that space, and the run fails (exit 1) once written.
    pub after_phase_failed: Option<String>,
    /// Outputs asked for that could not be written (a history), each naming its path: the
    /// command fails (exit 1) with its figures kept.
    pub unwritten: Vec<String>,
}

impl ExecutedPhases {
    /// Says each output not written as a warning: for callers whose outcome does not fail with
    /// it (a client's part of a distributed run, a step of a study).
    pub fn warn_unwritten(&self) {
        for e in &self.unwritten {
            crate::note!("warning: {e}");
        }
    }

    /// The HDR interval logs of every phase into `dir`, at the recorded interval length whatever
    /// the result keeps.
    pub fn write_hdr_logs(&mut self, dir: &std::path::Path) -> Result<(), SessionError> {
        for (phase, recorded) in self.result.phases.iter().zip(&mut self.recorded) {
            hdrlog::write_interval_logs(phase, recorded, dir).map_err(SessionError::Failed)?;
        }
        Ok(())
    }
}

/// Runs the phases and assembles the result (marked `interrupted` after Ctrl-C); writes and prints
/// nothing.
pub fn execute_phases(
    args: &RunRequest,
    wiring: &RunWiring,
    phases: &[Phase],
) -> Result<ExecutedPhases, SessionError> {
    wiring.launch.check(args, phases)?;
    let (mut settings, definition) = this_clients_settings(args, wiring, phases)?;
    let mut phases = phases.to_vec();
    let auto_load = settings.uses_default_db() && !phases.contains(&Phase::Load);
    if auto_load {
        phases.insert(0, Phase::Load);
    }

    crate::interrupt::install_handler();
    let stop = wiring.stop_signal();
    crate::interrupt::register_stop(&stop);

    // Checked before anything runs: a fault names a running node of the deployment.
    let faults = FaultRequest::victims(&args.faults, settings.cluster.as_ref())?;
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut results = Vec::new();
    let mut recorded = Vec::new();
    let mut unwritten = Vec::new();
    let mut interrupted = false;
    let mut after_phase_failed = None;
    let phases_first = phases[0];
    let all_phases = phases.clone();
    for phase in phases {
        if let Some(c) = &settings.cluster {
            before_phase(c, phase, args.quiet)?;
        }
        let remote_monitors = match (&settings.cluster, args.no_monitor) {
            (Some(c), false) => start_remote_monitors(c)?,
            _ => Vec::new(),
        };
        let monitor = (!args.no_monitor).then(|| start_monitor(&settings));
        let mut display = Display::new(args.quiet, args.status_interval);
        let mut published = crate::metrics::Published::new(wiring.metrics.as_ref());
        // The embedded default creates its table when loading; servers need --create-schema.
        let mut create_schema =
            args.create_schema || (phase == Phase::Load && settings.binding.creates_table_on_load);
        let mut drop_schema = args.drop_schema && phase == phases_first;
        if (create_schema || drop_schema) && deployment_prepares_table(&mut settings, drop_schema)?
        {
            (create_schema, drop_schema) = (false, false);
        }
        let opened = registry::open(
            settings.phase_binding_config(phase, create_schema, drop_schema, &stop),
            PhaseRunner {
                workload: &settings.workload,
                settings: &settings,
                phase,
                note: (auto_load && phase == Phase::Load).then(|| {
                    format!(
                        // Its URL on a line of its own: within 100 columns, easy to copy.
                        "note: no --db given: a temporary SQLite database, empty at first; loading {} records first:\n  {}",
                        settings.workload.insert_count,
                        settings.db.redacted()
                    )
                }),
                stop: &stop,
                wiring,
                observers: vec![&mut display, &mut published],
                space_after_load: args.space_after_load,
                beside: BesideRequest {
                    probe: args
                        .consistency_probe
                        .as_ref()
                        .filter(|_| phase == Phase::Run),
                    faults: if phase == Phase::Run { &faults } else { &[] },
                    metrics: wiring.metrics.as_ref(),
                },
            },
        );
        let (outcome, space_before, beside) =
            match opened.map_err(SessionError::from).and_then(|r| r) {
                Ok(outcome) => outcome,
                // Stopped while connecting for a later phase: the phases before it are kept.
                Err(SessionError::Interrupted(_)) if !results.is_empty() => {
                    interrupted = true;
                    break;
                }
                Err(e) => return Err(e),
            };
        interrupted = outcome.result.ended_by == EndedBy::Interrupted;
        recorded.push(outcome.recorded);
        let mut result = outcome.result;
        unwritten.extend(beside.record_in(&mut result));
        complete_phase_result(&mut result, &settings, (monitor, remote_monitors));
        let measured = phase == Phase::Run || args.space_after_load != SpaceAfterLoad::NotMeasured;
        if let (Some(c), false, true) = (&settings.cluster, interrupted, measured) {
            // What was measured is kept whatever becomes of the steps after it.
            match after_phase(c, phase, &result, space_before.as_ref(), &settings, args) {
                Ok(space) => result.space = space,
                Err(SessionError::Interrupted(what)) => {
                    crate::note!("{what}: the phase's space on disk is not measured");
                    interrupted = true;
                }
                Err(e) => after_phase_failed = Some(e.to_string()),
            }
        }
        results.push(result);
        if interrupted || after_phase_failed.is_some() {
            break;
        }
    }
    crate::interrupt::clear_stop();

    let result = run_result(
        args,
        wiring,
        &settings,
        started_at,
        interrupted,
        results,
        definition,
    );
    // A client's share is no load of the table's own: its launcher or client 0 remembers the run's.
    if wiring.launch == crate::wiring::Launch::Alone {
        crate::known_load::remember(args, &all_phases, &result);
    }
    Ok(ExecutedPhases {
        result,
        percentiles: settings.percentiles.clone(),
        recorded,
        after_phase_failed,
        unwritten,
    })
}

/// The settings of this process's share of the run (the whole run's resolved once), and what defines
/// the run (a client records it, so that its result never merges with another run's, and its
/// rendezvous compares it); the settings' warnings said.
fn this_clients_settings(
    args: &RunRequest,
    wiring: &RunWiring,
    phases: &[Phase],
) -> Result<(Settings, RunDefinition), SessionError> {
    let last = *phases.last().expect("at least one phase");
    let whole = Settings::resolve(args, last)?;
    let share = wiring.launch.share();
    let definition = match &share {
        Some(share) => {
            let mut fields = whole.definition(last, share.clients);
            fields.extend(args.study.iter().map(|(k, v)| (k.clone(), v.clone())));
            if let Some(r) = &args.replay {
                fields.insert("replay".into(), r.definition());
            }
            RunDefinition {
                fields,
                workload: Some(whole.workload_definition()),
            }
        }
        None => Default::default(),
    };
    if let Some(rendezvous) = &wiring.rendezvous {
        rendezvous.agree_on(&definition);
    }
    let settings = whole.for_client(share, last)?;
    for w in settings.phase_warnings() {
        crate::note!("warning: {w}");
    }
    // Said where operations run (a load runs none of them).
    for line in settings
        .alternatives
        .iter()
        .filter(|_| phases.contains(&Phase::Run))
    {
        crate::note!("note: {line}");
    }
    Ok((settings, definition))
}

/// What a phase's result holds besides the executor's figures: the end of its arrivals, a load's
/// pace, a run's insert keys, the resources and what bounded them; a failure warning said.
fn complete_phase_result(
    result: &mut PhaseResult,
    settings: &Settings,
    (monitor, remote_monitors): (
        Option<scalebench_monitor::Monitor>,
        Vec<scalebench_monitor::RemoteMonitor>,
    ),
) {
    let phase = result.phase;
    let pace = settings.pace(phase);
    say_arrivals_ended(result, pace.rate_profile.as_ref());
    if phase == Phase::Load && result.open_loop {
        result.load_pace = pace.target.map(|t| scalebench_measure::LoadPace {
            target_records_s: t,
            rate_profile: pace.rate_profile.as_ref().map(|p| p.to_string()),
        });
    }
    if phase == Phase::Run && settings.workload.runs_inserts() {
        result.insert_keys = Some(settings.workload.transaction_insert_keys().into());
    }
    if let Some(m) = monitor {
        judge_resources(result, m, remote_monitors, pace.target);
    }
    if let Some(line) = failure_warning(result) {
        crate::note!("{line}");
    }
}

/// The run's result: its phases with what describes the run (tool, host, command, parameters, the
/// deployment, the client's part of a distributed run).
fn run_result(
    args: &RunRequest,
    wiring: &RunWiring,
    settings: &Settings,
    started_at: String,
    interrupted: bool,
    results: Vec<PhaseResult>,
    definition: RunDefinition,
) -> RunResult {
    RunResult {
        schema: SCHEMA.into(),
        tool: tool_info(),
        host: host_info(),
        started_at,
        command: args.command.clone(),
        parameters: parameters(settings),
        interrupted,
        phases: results,
        merged_from: Vec::new(),
        deployment: settings.cluster.as_ref().map(|c| DeploymentInfo {
            name: c.name().to_string(),
            database: c.state.deployment.database.name().to_string(),
            nodes: c.state.nodes.len(),
            file: c.state.deployment_file.display().to_string(),
            memory_limit_bytes: c.state.deployment.memory.map(|m| m.bytes()),
        }),
        client: wiring
            .launch
            .share()
            .map(|c| scalebench_measure::result::ClientPart {
                index: c.index,
                clients: c.clients,
                definition: definition.fields,
                clock: wiring.rendezvous.as_ref().and_then(|r| r.clock()),
            }),
        distributed: None,
        thresholds: None,
    }
}

/// The phase's resource series, this host's and the database hosts', and what bounded it: the
/// verdict over the measurement window only (not warm-up, not the grace period).
fn judge_resources(
    result: &mut PhaseResult,
    monitor: scalebench_monitor::Monitor,
    remote_monitors: Vec<scalebench_monitor::RemoteMonitor>,
    target: Option<f64>,
) {
    let series = monitor.finish();
    result.remote_resources = remote_monitors
        .into_iter()
        .map(scalebench_monitor::RemoteMonitor::finish)
        .collect();
    // The verdict covers the measurement window only (not warm-up, not the grace period).
    let window = |s: &scalebench_monitor::ResourceSeries| {
        let from =
            result.measurement_start_unix_ms as f64 / 1000.0 - s.start_unix_ms as f64 / 1000.0;
        Some((from, from + result.duration_s))
    };
    let local = scalebench_monitor::verdict(&series, "client", window(&series));
    let remotes: Vec<(String, scalebench_monitor::Verdict)> = result
        .remote_resources
        .iter()
        .filter_map(|r| {
            let s = r.series.as_ref()?;
            Some((
                r.host.clone(),
                scalebench_monitor::verdict(s, "client", window(s)),
            ))
        })
        .collect();
    for r in &result.remote_resources {
        if let Some(e) = &r.error {
            crate::note!("warning: no resource series from {}: {e}", r.host);
        }
    }
    let mut verdict = scalebench_monitor::combined_verdict(local, &remotes);
    bounded_by_target(&mut verdict, result, target);
    // A client named as the bound, with what an operation costs it: what more clients would buy.
    if let Some(us) = result.client_cost.and_then(|c| c.cpu_us_per_op) {
        if verdict.client_bound {
            verdict.evidence = format!(
                "{}; {us:.1} us of client CPU per operation",
                verdict.evidence
            );
        }
    }
    result.bounded_by = Some(verdict);
    result.resources = Some(series);
}

/// Starts the deployment's `[external.monitors]` commands (one per database host), from the
/// deployment file's directory.
fn start_remote_monitors(
    c: &Cluster,
) -> Result<Vec<scalebench_monitor::RemoteMonitor>, SessionError> {
    let dir = c.state.deployment_file.parent();
    c.state
        .deployment
        .external
        .monitors
        .iter()
        .map(|(host, command)| {
            scalebench_monitor::RemoteMonitor::spawn(host, command, dir).map_err(|e| {
                SessionError::Failed(format!("cannot start the monitor command of {host}: {e}"))
            })
        })
        .collect()
}

/// Watches this process (the client, with its worker threads) and every node of the deployment.
fn start_monitor(settings: &Settings) -> scalebench_monitor::Monitor {
    let mut targets = vec![scalebench_monitor::Target {
        name: "client".into(),
        pid: std::process::id(),
        parallelism: Some(settings.threads as u32),
    }];
    if let Some(c) = &settings.cluster {
        targets.extend(c.state.nodes.iter().filter_map(|n| {
            Some(scalebench_monitor::Target {
                name: n.id.clone(),
                pid: n.process?.pid,
                parallelism: None,
            })
        }));
    }
    scalebench_monitor::Monitor::start(targets, std::time::Duration::from_secs(1))
}

/// Where the deployment owns the benchmark table (Bucardo: rows replicate, DDL does not), it creates
/// or resets it on every server with the SQL the binding would run; true when it did, so the binding
/// leaves the schema alone.
fn deployment_prepares_table(settings: &mut Settings, drop: bool) -> Result<bool, SessionError> {
    let binding = settings.binding.name;
    let schema = scalebench_binding::Schema::of(&settings.workload);
    let Some(cluster) = settings.cluster.as_mut().filter(|c| c.owns_table()) else {
        return Ok(false);
    };
    let table_sql = registry::find(binding)
        .and_then(|b| b.table_sql)
        .ok_or_else(|| {
            SessionError::Usage(format!(
                "deployment {} creates the benchmark table on every server itself and needs a binding that gives its SQL (postgres), not {binding}",
                cluster.name()
            ))
        })?;
    cluster.prepare_table(&schema.table, &table_sql(&schema), drop)?;
    Ok(true)
}

/// The schema phase alone (`load --schema-only`): the workload's table and its indexes made as a
/// load makes them (dropped first with `--drop-schema`), nothing inserted; what a load from many
/// clients starts from. Returns what is in place, in words.
pub fn create_schema(args: &RunRequest) -> Result<String, SessionError> {
    if args.db.is_none() && args.deployment.is_none() {
        return Err(SessionError::Usage(
            "load --schema-only needs --db or --deployment: the default database is temporary"
                .into(),
        ));
    }
    let mut settings = Settings::resolve(args, Phase::Load)?;
    for w in &settings.warnings {
        crate::note!("warning: {w}");
    }
    crate::interrupt::install_handler();
    let stop = StopSignal::default();
    crate::interrupt::register_stop(&stop);
    let (mut create, mut drop) = (true, args.drop_schema);
    if deployment_prepares_table(&mut settings, drop)? {
        (create, drop) = (false, false);
    }
    let info = registry::open(settings.binding_config(create, drop, &stop), SchemaOnly)?;
    let w = &settings.workload;
    let indexes: Vec<&str> = w.indexes.iter().map(|i| i.name.as_str()).collect();
    let columns = match w.field_names.len() {
        1 => "1 column".to_string(),
        n => format!("{n} columns"),
    };
    let made = if !info.stores_data {
        format!("{} stores nothing: no table to make", info.name)
    } else if indexes.is_empty() || !info.secondary_indexes {
        format!("table {} ({columns}) in place", w.table)
    } else {
        format!(
            "table {} ({columns}) and its indexes {} in place",
            w.table,
            indexes.join(", ")
        )
    };
    Ok(format!("{made} on {}", settings.db.redacted()))
}

/// Opens the binding (which makes the schema it was asked for) and nothing more.
struct SchemaOnly;

impl FactoryVisitor for SchemaOnly {
    type Output = scalebench_binding::BindingInfo;

    fn visit<F: BindingFactory>(self, factory: F) -> Self::Output {
        factory.info()
    }
}

/// Load: the cluster is up and serving. Run: it is also idle (no compaction, stream, migration, lag).
/// The deployment's steps around a phase that the clients of a distributed run take together: the
/// process that holds the deployment (the launcher) takes them once, before it starts the clients
/// (ready, or idle before a run; the space before a load) and after their results merged (flush,
/// compaction, the space on disk), as one process does around its own phase.
pub struct DeploymentSteps {
    settings: Settings,
    phase: Phase,
    space_before: Option<Space>,
}

impl DeploymentSteps {
    /// The steps before `phase` of a request on a deployment (None without one).
    pub fn before(request: &RunRequest, phase: Phase) -> Result<Option<Self>, SessionError> {
        if request.deployment.is_none() {
            return Ok(None);
        }
        let settings = Settings::resolve(request, phase)?;
        let Some(c) = &settings.cluster else {
            return Ok(None);
        };
        before_phase(c, phase, request.quiet)?;
        // Before the clients set the table up: the space of the load includes the empty table's.
        let space_before = match phase {
            Phase::Load
                if request.space_after_load != SpaceAfterLoad::NotMeasured
                    && c.measures_space() =>
            {
                c.flush()?;
                Some(c.space("before load", 0, &settings.workload.table))
            }
            _ => None,
        };
        Ok(Some(DeploymentSteps {
            settings,
            phase,
            space_before,
        }))
    }

    /// The steps after the clients' merged phase: its space on disk, unless it was interrupted.
    pub fn after(
        &self,
        merged: &mut PhaseResult,
        request: &RunRequest,
    ) -> Result<(), SessionError> {
        let Some(c) = &self.settings.cluster else {
            return Ok(());
        };
        let measured =
            self.phase == Phase::Run || request.space_after_load != SpaceAfterLoad::NotMeasured;
        if measured && merged.ended_by != EndedBy::Interrupted {
            merged.space = after_phase(
                c,
                self.phase,
                merged,
                self.space_before.as_ref(),
                &self.settings,
                request,
            )?;
        }
        Ok(())
    }
}

fn before_phase(c: &Cluster, phase: Phase, quiet: bool) -> Result<(), SessionError> {
    if phase == Phase::Load {
        c.wait_ready()?;
    } else {
        if !quiet {
            crate::note!("waiting until cluster {} is idle", c.name());
        }
        c.wait_idle()?;
    }
    Ok(())
}

/// After a load: flush, wait for quiet and measure the space as inserted; then, unless
/// `--no-compact`, compact, wait for quiet and measure it settled. After a run: the space as the run
/// left it. Each load's figure is against `before`, the space before it.
fn after_phase(
    c: &Cluster,
    phase: Phase,
    result: &PhaseResult,
    before: Option<&Space>,
    settings: &Settings,
    args: &RunRequest,
) -> Result<Option<Space>, SessionError> {
    if !c.measures_space() {
        return Ok(None);
    }
    let table = &settings.workload.table;
    if phase == Phase::Run {
        // Earlier runs' inserts lie below transactioninsertstart.
        let inserted = result.operations.get("INSERT").map_or(0, |o| o.ok);
        let records = settings.workload.transaction_insert_start + inserted;
        return Ok(Some(c.space("after run", records, table)));
    }
    let records = result.totals.records;
    let measure = |state: SpaceState| {
        let mut space = c.space("after load", records, table);
        space.state = Some(state);
        space.marginal = before.map(|b| MarginalSpace::between(b, &space, records));
        space
    };
    let steps = |what: &str, done: Vec<String>| {
        if !args.quiet {
            for d in done {
                crate::note!("{what}: {d}");
            }
        }
    };
    steps("flush", c.flush()?);
    c.wait_idle()?;
    let as_inserted = measure(SpaceState::AsInserted);
    if args.space_after_load == SpaceAfterLoad::AsInserted {
        return Ok(Some(as_inserted));
    }
    steps("compact", c.compact()?);
    c.wait_idle()?;
    let mut settled = measure(SpaceState::Settled);
    settled.as_inserted = Some(Box::new(as_inserted));
    Ok(Some(settled))
}

fn parameters(s: &Settings) -> Parameters {
    Parameters {
        workload: s.workload_name.clone(),
        db: s.db.redacted(),
        binding: s.binding.name.into(),
        threads: s.threads,
        concurrency: s.concurrency,
        pipeline: (s.pipeline > 1).then_some(s.pipeline),
        target_ops_s: s.run_pace.target,
        rate_profile: s.run_pace.rate_profile.as_ref().map(|p| p.to_string()),
        arrival: (s.run_pace.target.or(s.load_pace.target)).map(|_| s.arrival.name().to_string()),
        duration_s: s.run_duration.map(|d| d.as_secs_f64()),
        warmup_s: s.warmup.as_secs_f64(),
        operation_count: s.operation_count,
        seed: s.seed,
        interval_s: s.interval.as_secs_f64(),
        op_timeout_s: s.op_timeout.map(|d| d.as_secs_f64()),
        // What scalebench reads: declared properties and this binding's options. Anything else in
        // a property file was ignored (with a warning), and is not copied into the result (a file
        // could hold anything, a password hash among it).
        properties: s
            .props
            .iter()
            .filter(|(k, _)| {
                scalebench_workload::declared::find(k).is_some()
                    || k.strip_prefix(s.binding.name)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
            .map(|(k, v)| {
                (
                    k.to_string(),
                    if is_secret_key(k) {
                        "***".to_string()
                    } else {
                        // A dictionary's digest and size, never its words (a file's content).
                        scalebench_workload::dictionary::shown_value(k, v).into_owned()
                    },
                )
            })
            .collect(),
        workload_definition: Some(s.workload_definition()),
    }
}

struct PhaseRunner<'a> {
    workload: &'a CoreWorkload,
    settings: &'a Settings,
    phase: Phase,
    /// Printed once the binding has accepted its configuration, just before the phase starts.
    note: Option<String>,
    stop: &'a StopSignal,
    wiring: &'a RunWiring,
    /// Told of the phase's progress (the display, the metrics endpoint); what runs beside the phase
    /// joins them.
    observers: Vec<&'a mut dyn Progress>,
    /// The probe and faults of a run phase.
    beside: BesideRequest<'a>,
    space_after_load: SpaceAfterLoad,
}

/// The share of an open loop's starts (%) that may be more than 1 ms late for its target to count
/// as kept. An idle 2-core VM starts 2 to 5% of a debug build's operations that late at 1,000 to
/// 5,000 ops/s (timer wake-ups); a loop that fell behind starts a fifth or more late.
const MAX_LATE_STARTS_PCT: f64 = 10.0;

/// A rate profile that ends at 0 ops/s before the window did: the rest of the window asked
/// nothing, which the result and the summary say (issue 62, low 4: it went unsaid).
fn say_arrivals_ended(
    result: &mut PhaseResult,
    profile: Option<&scalebench_workload::rate::RateProfile>,
) {
    let Some(end) = profile.and_then(|p| p.arrivals_end()) else {
        return;
    };
    let Some(schedule) = result.schedule.as_mut().filter(|_| end < result.duration_s) else {
        return;
    };
    schedule.arrivals_ended_s = Some(end);
    crate::note!(
        "warning: the rate profile ends at 0 ops/s after {end} s: it asked no operation in the last {:.1} s of the {:.1} s window",
        result.duration_s - end,
        result.duration_s
    );
}

/// Whether an open loop completed its target rate (within 5%, by its successes): then it was
/// bounded by the target it was given (`Verdict::target_kept`; exec/src/pacer.rs says why the
/// client's CPU looks busy), with the share of late starts (which the intended-start latencies carry).
fn bounded_by_target(
    verdict: &mut scalebench_monitor::Verdict,
    phase: &PhaseResult,
    target_ops_s: Option<f64>,
) {
    let Some(target) = target_ops_s.filter(|_| phase.open_loop) else {
        return;
    };
    // Failures complete on schedule too, but a database that fails its operations did not keep
    // up with the work: the target counts as kept only when its successes kept it.
    let completed = phase.window_rate();
    if phase.target_shortfall(Some(target)).is_some()
        || completed < target * (1.0 - scalebench_measure::result::MAX_TARGET_SHORTFALL)
    {
        return;
    }
    let started = phase.totals.issued.max(1) as f64;
    let late = phase
        .schedule
        .as_ref()
        .map_or(0.0, |s| s.late_operations as f64 / started * 100.0);
    let unit = if phase.load_pace.is_some() {
        "records/s"
    } else {
        "ops/s"
    };
    // A rate reached with many starts late was not a schedule kept: something fell behind (the
    // intended-start latencies show how far), so what /proc saw stays the verdict.
    if late > MAX_LATE_STARTS_PCT {
        verdict.evidence = format!(
            "{}; the target rate ({target} {unit}) was reached but not kept: {late:.1}% of starts more than 1 ms late",
            verdict.evidence
        );
        return;
    }
    *verdict = verdict.target_kept(target, completed, late, unit);
}

/// A later measurement assumes every record the load declares: with some lost, each read of a
/// missing one counts as a failure of the database (a Cassandra ring too loaded to acknowledge a
/// write in time loses them; a load ended by a duration inserted only some). Refused before anything is measured on the data. A binding that
/// stores nothing (null) has no records to lose.
pub fn require_complete_load(loaded: &RunResult) -> Result<(), SessionError> {
    let stores_data = registry::find(&loaded.parameters.binding).is_none_or(|b| b.stores_data);
    let Some(load) = loaded.phases.first().filter(|_| stores_data) else {
        return Ok(());
    };
    let t = &load.totals;
    if load.ended_by != EndedBy::Completed && !loaded.interrupted {
        return Err(SessionError::Failed(format!(
            "the load ended by {} after {} inserts, before its last record: records are missing, and every read of one would count as a failure",
            load.ended_by,
            t.ok + t.failed
        )));
    }
    if t.failed == 0 {
        return Ok(());
    }
    let classes: Vec<String> = load
        .errors
        .iter()
        .map(|(c, e)| format!("{c} {}", e.count))
        .collect();
    Err(SessionError::Failed(format!(
        "the load failed {} of {} inserts ({}): records are missing, and every read of one would count as a failure; core_workload_insertion_retry_limit retries failed inserts",
        t.failed,
        t.ok + t.failed,
        classes.join(", ")
    )))
}

/// The single run's failure warning (experiments set their own threshold).
pub fn failure_warning(p: &PhaseResult) -> Option<String> {
    p.failure_warning(scalebench_measure::result::DEFAULT_MAX_FAILED_SHARE)
}

/// A run's inserts must go to keys no earlier run of the same data wrote; if the first key of the
/// range exists, they would conflict (SQL) or silently overwrite (Cassandra, Redis).
fn warn_if_insert_range_used<F: BindingFactory>(factory: &F, w: &CoreWorkload) {
    let first = w.transaction_insert_start;
    let key = w.keys.key(first);
    if scalebench_exec::lookup::key_exists(factory, &key, std::time::Duration::from_secs(5))
        == Some(true)
    {
        crate::note!(
            "warning: record {key} (key number {first}, where this run's inserts start) already exists: an earlier run inserted there, so these inserts will conflict or overwrite; set -p transactioninsertstart=N past the keys earlier runs inserted (each result's insert_keys.end)"
        );
    }
}

impl FactoryVisitor for PhaseRunner<'_> {
    /// The phase, for a load on a cluster the space before it (the table emptied or created), and
    /// what ran beside it.
    type Output = Result<(PhaseOutcome, Option<Space>, Beside), SessionError>;

    fn visit<F: BindingFactory>(self, factory: F) -> Self::Output {
        let plan = self.settings.plan(self.phase, self.wiring);
        if let Some(note) = &self.note {
            crate::note!("{note}");
        }
        if self.phase == Phase::Run && self.workload.runs_inserts() && factory.info().stores_data {
            warn_if_insert_range_used(&factory, self.workload);
        }
        if plan.verify_writes && plan.phase == Phase::Run && self.workload.data_integrity {
            // Every write of a field stores the same value: a lost update reads back as kept.
            crate::note!(
                "warning: --verify-writes with dataintegrity=true sees only missing records and fields: each update stores what the load stored, so a lost update reads back as kept (run without dataintegrity to count lost updates)"
            );
        }
        // Measured once the binding has set the table up (dropped and created for a fresh load), so
        // what the load adds is the difference: the marginal space of its records. Flushed first,
        // as after the load: what the servers still hold in memory (a new database's catalogs, a
        // dataset emptied since its last save) is then on disk on both sides.
        let space_before = match (&self.settings.cluster, self.phase) {
            (Some(c), Phase::Load)
                if self.space_after_load != SpaceAfterLoad::NotMeasured && c.measures_space() =>
            {
                c.flush()?;
                Some(c.space("before load", 0, &self.workload.table))
            }
            _ => None,
        };
        // Started once the binding has set the table up (a run with --drop-schema recreates it).
        let beside = BesidePhase::start(
            &self.beside,
            &factory.info(),
            self.settings,
            &plan,
            self.stop,
        )?;
        let mut clock = beside.clock();
        let mut observers: Vec<&mut dyn Progress> = self
            .observers
            .into_iter()
            .map(|o| o as &mut dyn Progress)
            .collect();
        observers.push(&mut clock);
        let outcome = execute(
            factory,
            self.workload,
            &plan,
            self.stop,
            &mut Observers(observers),
        );
        let beside = beside.finish();
        Ok((outcome?, space_before, beside))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_loop_phase(ok: u64, late: u64) -> PhaseResult {
        failing_open_loop_phase(ok, 0, late)
    }

    fn failing_open_loop_phase(ok: u64, failed: u64, late: u64) -> PhaseResult {
        serde_json::from_value(serde_json::json!({
            "phase": "run", "open_loop": true, "measurement_start_unix_ms": 0, "duration_s": 10.0,
            "interval_s": 1.0, "ended_by": "duration", "clients": 1,
            "totals": { "issued": ok + failed, "ok": ok, "failed": failed, "in_flight_at_stop": 0,
                        "throughput_ops_s": ok as f64 / 10.0 },
            "operations": {}, "errors": {},
            "schedule": { "late_operations": late, "late_threshold_us": 1000.0, "start_delay": null },
            "data": { "mean_key_bytes": 23.0, "mean_record_bytes": 1000.0, "field_count": 10 },
            "warmup_operations": 0, "intervals": []
        }))
        .unwrap()
    }

    fn client_cpu() -> scalebench_monitor::Verdict {
        scalebench_monitor::Verdict::of(
            vec![scalebench_monitor::Bound {
                resource: "cpu".into(),
                process: Some("client".into()),
                what: "cpu of client".into(),
                client: true,
                evidence: "1.98 of 2 usable cores".into(),
            }],
            String::new(),
        )
    }

    /// An open loop that completed its target was bounded by the target, not by the pacer's busy
    /// CPU (issue 29, point 11); one that fell short, or a closed loop, keeps what /proc saw.
    #[test]
    fn an_open_loop_that_kept_its_target_is_bounded_by_it() {
        for late in [20, 500] {
            let mut kept = client_cpu();
            bounded_by_target(&mut kept, &open_loop_phase(10_000, late), Some(1000.0));
            assert!(!kept.client_bound && kept.resource == "target", "{kept:?}");
            assert_eq!(kept.bounded_by, "the target rate (1000 ops/s, kept)");
            assert!(kept.evidence.contains("cpu of client") && kept.evidence.contains("1.98"));
            // The bound is named once: its evidence does not repeat its name.
            assert!(!kept.evidence.contains("kept)"), "{}", kept.evidence);
        }
        // Reached, but a fifth of the starts late: not a schedule kept.
        let mut late = client_cpu();
        bounded_by_target(&mut late, &open_loop_phase(10_000, 2_080), Some(1000.0));
        assert_eq!(late.resource, "cpu", "{late:?}");
        assert!(
            late.evidence
                .contains("not kept: 20.8% of starts more than 1 ms late"),
            "{}",
            late.evidence
        );
        for (phase, target) in [
            (open_loop_phase(8_000, 0), Some(1000.0)), // 20% short of the target
            (open_loop_phase(10_000, 0), None),        // closed loop
            // On schedule, but 20% of it failed: the database did not keep up with the work.
            (failing_open_loop_phase(8_000, 2_000, 0), Some(1000.0)),
        ] {
            let mut v = client_cpu();
            bounded_by_target(&mut v, &phase, target);
            assert_eq!(v, client_cpu());
        }
    }
}
