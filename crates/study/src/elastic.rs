//! `scalebench elastic`: Dory's elasticity benchmark on a local (or external) cluster.
//!
//! Per step: load the data, start the load on its own thread (Dory's request sets, or an open loop
//! at `--target` whose timeline is its intervals), measure a baseline, change the cluster's size under
//! the load, follow the cluster until the database reports no data in motion and the timeline is
//! stable again, keep measuring for `--after`, then end the run and score the transition
//! (`scalebench-elastic`). With `--steps N`, records, threads and the set size double at each step
//! (and with `double`, the cluster too, and a last stable state is measured at the final size: Dory's
//! scalability compares those stable states). `--unloaded` times the transition with no load.
//!
//! From N client processes (`--clients N`), the load is one run: Dory's R operations and T threads
//! in all, each client its share, a set's time the time until every client finished its share
//! (the launcher opens the next set for all of them, [`scalebench_distributed::timeline`]); this
//! process holds the cluster, takes the action once and judges stability on the merged timeline.

use std::time::{Duration, Instant};

use scalebench_deploy::Cluster;
use scalebench_elastic::impact::{event_figures, EventFigures};
use scalebench_elastic::service_level::{judge, RunCounts, Verdict};
use scalebench_elastic::{
    repeated, score, score_open_loop, sizes_table, Events, IntervalPoint, SetPoint, SizeRow,
    StepScores, UnloadedScores,
};
use scalebench_exec::{Phase, StopSignal, TimelineLog, TimelinePoint};
use scalebench_measure::PhaseResult;
use scalebench_measure::{quantile_us, RunResult};

use scalebench_session::error::SessionError;
use scalebench_session::phase::execute_phases;
use scalebench_session::request::{RunRequest, SpaceAfterLoad};
use scalebench_session::settings::Settings;
use scalebench_session::wiring::RunWiring;
use scalebench_workload::rate::Pace;

use scalebench_distributed::Launcher;

pub mod request;
use request::{Criterion, ElasticRequest, MotionCheck, ScaleAction};

/// The clients of an elastic run's load, when not this process alone.
pub type LoadClients<'a> = Option<&'a (dyn Launcher + Send + Sync)>;

pub use scalebench_elastic::result::{ElasticResult, ElasticStep, SCHEMA};

/// Where a step's load and run go from: this process (its wiring) and the clients it launches.
#[derive(Clone, Copy)]
struct LoadFrom<'a> {
    wiring: &'a RunWiring,
    clients: LoadClients<'a>,
}

/// Runs every step and returns what was measured (also after Ctrl-C: the steps so far).
pub fn run_elastic(args: &ElasticRequest) -> Result<ElasticResult, SessionError> {
    run_elastic_from(args, &RunWiring::default(), None)
}

/// [`run_elastic`] with the load from `clients` (processes this one launches), as one run.
pub fn run_elastic_from(
    args: &ElasticRequest,
    wiring: &RunWiring,
    clients: LoadClients,
) -> Result<ElasticResult, SessionError> {
    let from = LoadFrom { wiring, clients };
    if clients.is_some() && args.unloaded {
        return Err(SessionError::Usage(
            "--unloaded has no load to spread over --clients: give one or the other".into(),
        ));
    }
    let Some(deployment) = args.run.deployment.clone() else {
        return Err(SessionError::Usage(
            "scalebench elastic needs --deployment FILE (the cluster to scale)".into(),
        ));
    };
    // Before the cluster is opened: a rate profile given, or the workload file's.
    if let Some(p) = scalebench_session::settings::requested_rate_profile(&args.run)? {
        return Err(SessionError::Usage(format!(
            "invalid value '{p}' for '--rate-profile' (or the workload's rate profile): an elastic transition is measured against its baseline under a constant load (--target)"
        )));
    }
    let base = Settings::resolve(&args.run, Phase::Run)?;
    let first_set_size = args.run.request_set;
    if !args.unloaded && first_set_size.is_none() && base.run_pace.target.is_none() {
        return Err(SessionError::Usage(
            "scalebench elastic needs a constant load: --request-set R (Dory's timed request sets), --target OPS (an open loop) or --unloaded (none)".into(),
        ));
    }
    let load = if args.unloaded {
        Load::None
    } else if first_set_size.is_some() {
        Load::Sets(args.set_repeats as usize)
    } else {
        Load::Intervals
    };
    // Locked for the whole run: no other command brings it up or down, or changes its nodes, meanwhile.
    let mut cluster =
        scalebench_session::cluster::open_to_change(&deployment, &args.run.clusters_dir)?;
    cluster.check(args.action)?;
    let mut out = result_of(args, clients, &deployment, load, base.run_pace.target);
    let mut sizes = Vec::new();
    for step in 0..args.steps {
        // Dory's 2N step: twice the data, the threads and the set size on the (grown) cluster.
        let scale = Scale::of_step(&base, first_set_size, step);
        let loaded_already = args.no_load && step == 0;
        if !loaded_already {
            match load_records(args, from, &scale)? {
                Ended::Completed => {}
                Ended::Interrupted => out.interrupted = true,
                Ended::Incomplete(why) => out.incomplete = Some(why),
            }
            if out.interrupted || out.incomplete.is_some() {
                break;
            }
        }
        let nodes_before = running_nodes(&cluster);
        let in_flight = scale.threads * args.run.concurrency as u64;
        if let Load::None = load {
            let s = unloaded_step(args, &mut cluster, step, &scale, nodes_before)?;
            tell_step(args, &s);
            out.steps.push(s);
            continue;
        }
        let (result, controlled, incomplete) = run_under_control(
            args,
            from,
            &mut cluster,
            &scale,
            load,
            Some(args.action),
            &format!("step-{}", step + 1),
        )?;
        out.incomplete = incomplete;
        let Controlled {
            events,
            changed,
            not_stable,
            baseline_note,
        } = controlled;
        // No events: the load ended before the action, a client lost (`out.incomplete` says
        // which); nothing was changed and there is no transition to score.
        let Some(events) = events else {
            out.interrupted = result.interrupted;
            break;
        };
        let scores = step_scores(
            args,
            &scale,
            result.phases.first(),
            &events,
            nodes_before,
            &mut sizes,
        );
        out.interrupted = result.interrupted;
        let impact = result
            .phases
            .first()
            .and_then(|p| event_figures(p, &events));
        let verdict = judged(args, impact.as_ref(), result.phases.first());
        let s = ElasticStep {
            step: step + 1,
            action: args.action,
            in_flight,
            records: scale.records,
            set_size: scale.set_size,
            nodes_before,
            nodes_after: running_nodes(&cluster),
            changed_nodes: changed,
            events,
            not_stable,
            baseline_note,
            scores,
            impact,
            verdict,
            run: Some(result),
        };
        tell_step(args, &s);
        out.steps.push(s);
        if out.interrupted || out.incomplete.is_some() {
            break;
        }
    }
    // Dory's last size: after the last doubling, its own doubled load until stable.
    let all_steps =
        out.steps.len() == args.steps as usize && !out.interrupted && out.incomplete.is_none();
    if let (true, ScaleAction::Double, Load::Sets(_)) = (all_steps, args.action, load) {
        let scale = Scale::of_step(&base, first_set_size, args.steps);
        final_size(args, from, &mut cluster, &scale, load, &mut sizes, &mut out)?;
    }
    out.sizes = sizes_table(sizes);
    out.service_level_met = args.service_level.as_ref().map(|_| {
        out.steps
            .iter()
            .all(|s| s.verdict.as_ref().is_some_and(|v| v.passed))
    });
    Ok(out)
}

/// The result before its first step: what was asked.
fn result_of(
    args: &ElasticRequest,
    clients: LoadClients,
    deployment: &std::path::Path,
    load: Load,
    target: Option<f64>,
) -> ElasticResult {
    ElasticResult {
        schema: SCHEMA.into(),
        command: args.run.command.clone(),
        deployment: deployment.display().to_string(),
        set_size: args.run.request_set.filter(|_| !args.unloaded),
        set_repeats: matches!(load, Load::Sets(_)).then_some(args.set_repeats),
        unloaded: args.unloaded,
        target_ops_s: target.filter(|_| !args.unloaded),
        stable_sets: args.stable_sets,
        interrupted: false,
        clients: clients.map(|c| c.clients()),
        incomplete: None,
        steps: Vec::new(),
        service_level: args
            .service_level
            .as_ref()
            .map(|f| f.path.display().to_string()),
        service_level_met: None,
        sizes: Vec::new(),
        closing_run: None,
    }
}

/// A step with no load: the transition timed, nothing else measured.
fn unloaded_step(
    args: &ElasticRequest,
    cluster: &mut Cluster,
    step: u32,
    scale: &Scale,
    nodes_before: usize,
) -> Result<ElasticStep, SessionError> {
    let (events, changed, not_stable, scores) = transition_unloaded(args, cluster)?;
    Ok(ElasticStep {
        step: step + 1,
        action: args.action,
        in_flight: 0,
        records: scale.records,
        set_size: None,
        nodes_before,
        nodes_after: running_nodes(cluster),
        changed_nodes: changed,
        events,
        not_stable,
        baseline_note: None,
        scores: StepScores::Unloaded(scores),
        impact: None,
        verdict: None,
        run: None,
    })
}

/// The step's event against `--sla`, with the stale reads the probe counted in `run` (its
/// writer's readers and every other client's).
fn judged(
    args: &ElasticRequest,
    impact: Option<&EventFigures>,
    run: Option<&PhaseResult>,
) -> Option<Verdict> {
    let file = args.service_level.as_ref()?;
    let stale_reads = run.and_then(|p| {
        let own = p.consistency.as_ref()?.stale_reads;
        let others: u64 = p
            .consistency_readers
            .iter()
            .filter_map(|r| r.consistency.as_ref())
            .map(|c| c.stale_reads)
            .sum();
        Some(own + others)
    });
    let counts = RunCounts {
        stale_reads,
        lost_writes: run.and_then(|p| p.lost_writes.as_ref()).map(|l| l.failed()),
    };
    Some(judge(&file.level, args.action.kind(), impact, counts))
}

/// A step's scores: Dory's for request sets (and the stable state before the action as a row of
/// the size table), or the open loop's.
fn step_scores(
    args: &ElasticRequest,
    scale: &Scale,
    phase: Option<&PhaseResult>,
    events: &Events,
    nodes_before: usize,
    sizes: &mut Vec<SizeRow>,
) -> StepScores {
    let in_flight = scale.threads * args.run.concurrency as u64;
    match (scale.set_size, phase) {
        (Some(size), _) => {
            let sets = phase.map(set_points).unwrap_or_default();
            let before: Vec<f64> = sets
                .iter()
                .filter(|s| s.end_s() <= events.scale_issued_s)
                .map(|s| s.duration_s)
                .collect();
            sizes.push(SizeRow::new(
                nodes_before,
                scale.records,
                in_flight,
                size,
                &before,
            ));
            StepScores::RequestSets(
                score(
                    &repeated(&sets, args.set_repeats as usize),
                    size,
                    in_flight,
                    events,
                    args.stable_sets as usize,
                )
                .on_time_axis(args.score_time_axis),
            )
        }
        (None, p) => StepScores::OpenLoop(score_open_loop(
            &p.map(interval_points).unwrap_or_default(),
            events,
        )),
    }
}

/// Dory's last size: the cluster after the last doubling, under its own doubled load until
/// stable; its set times are the size table's last row.
fn final_size(
    args: &ElasticRequest,
    from: LoadFrom,
    cluster: &mut Cluster,
    scale: &Scale,
    load: Load,
    sizes: &mut Vec<SizeRow>,
    out: &mut ElasticResult,
) -> Result<(), SessionError> {
    scalebench_session::note!(
        "final size: {} nodes with {} records, {} threads, sets of {}",
        running_nodes(cluster),
        scale.records,
        scale.threads,
        scale.set_size.unwrap_or(0)
    );
    let loaded = load_records(args, from, scale)?;
    if let Ended::Completed = loaded {
        let (result, controlled, incomplete) =
            run_under_control(args, from, cluster, scale, load, None, "final-size")?;
        out.incomplete = incomplete;
        let sets = result.phases.first().map(set_points).unwrap_or_default();
        let times: Vec<f64> = sets.iter().map(|s| s.duration_s).collect();
        sizes.push(SizeRow::new(
            running_nodes(cluster),
            scale.records,
            scale.threads * args.run.concurrency as u64,
            scale.set_size.unwrap_or(0),
            &times,
        ));
        if let Some(note) = controlled.baseline_note {
            scalebench_session::note!("final size: {note}");
        }
        out.interrupted = result.interrupted;
        out.closing_run = Some(result);
    } else if let Ended::Incomplete(why) = loaded {
        out.incomplete = Some(why);
    } else {
        out.interrupted = true;
    }
    Ok(())
}

/// What loads the cluster during a step: request sets (points of K runs), an open loop's intervals,
/// or nothing.
#[derive(Debug, Clone, Copy)]
enum Load {
    Sets(usize),
    Intervals,
    None,
}

/// The size of one step's data and load: the first step's, doubled per step.
struct Scale {
    threads: u64,
    /// The records the step runs on, and those already loaded before it.
    records: u64,
    loaded_before: u64,
    set_size: Option<u64>,
}

impl Scale {
    fn of_step(base: &Settings, set_size: Option<u64>, step: u32) -> Scale {
        let f = 1u64 << step;
        let records = base.workload.record_count * f;
        Scale {
            threads: base.threads as u64 * f,
            records,
            loaded_before: if step == 0 { 0 } else { records / 2 },
            set_size: set_size.map(|r| r * f),
        }
    }
}

/// How a phase of several clients ended.
enum Ended {
    Completed,
    Interrupted,
    /// A client was lost: why.
    Incomplete(String),
}

/// The phase `request` asks for, from this process or its clients (merged), and whether a client
/// was lost (why). With `hdr_log`, its interval logs go there (each client's under `client-I`).
fn execute(
    request: &RunRequest,
    from: LoadFrom,
    phase: Phase,
    hdr_log: Option<&std::path::Path>,
) -> Result<(RunResult, Option<String>), SessionError> {
    let Some(clients) = from.clients else {
        let mut executed = execute_phases(request, from.wiring, &[phase])?;
        executed.warn_unwritten();
        if let (Some(dir), Phase::Run) = (hdr_log, phase) {
            executed.write_hdr_logs(dir)?;
        }
        return Ok((executed.result, None));
    };
    let wiring = RunWiring {
        client_outputs: scalebench_session::wiring::ClientOutputs {
            hdr_log: hdr_log.map(std::path::Path::to_path_buf),
            ..from.wiring.client_outputs.clone()
        },
        ..from.wiring.clone()
    };
    let outcome = clients.launch(request, &wiring, phase)?;
    let incomplete = outcome.incomplete().then(|| outcome.notes().join("; "));
    if let (Some(dir), Some(merged)) = (hdr_log, outcome.merged.phases.first()) {
        scalebench_measure::hdrlog::write_result_logs(merged, dir).map_err(SessionError::Failed)?;
    }
    Ok((outcome.merged, incomplete))
}

/// Loads the step's records (on top of those loaded before it).
fn load_records(
    args: &ElasticRequest,
    from: LoadFrom,
    scale: &Scale,
) -> Result<Ended, SessionError> {
    let mut load = phase_args(&args.run, scale, false);
    // The steps' offered rate is the measured runs'; the load inserts as fast as it can.
    load.pace = Pace::Inherit;
    // Elasticity reports request-set times, never space: no flush, compaction or wait for quiet
    // after a step's load (a JVM per Cassandra node each), only the wait for the cluster to be idle
    // that every measured step begins with.
    load.space_after_load = SpaceAfterLoad::NotMeasured;
    scalebench_session::note!("loading records {}..{}", scale.loaded_before, scale.records);
    let (r, incomplete) = execute(&load, from, Phase::Load, None)?;
    if r.interrupted {
        return Ok(Ended::Interrupted);
    }
    if let Some(why) = incomplete {
        return Ok(Ended::Incomplete(why));
    }
    scalebench_session::phase::require_complete_load(&r)?;
    Ok(Ended::Completed)
}

/// Runs the step's load on its own thread while the controller measures the baseline and (with an
/// action) scales and follows the cluster; the run ends when the controller is done. With
/// `--hdr-log DIR`, the run's interval logs go to `DIR/<name>/`. Also returns why the run is
/// incomplete (a client lost).
fn run_under_control(
    args: &ElasticRequest,
    from: LoadFrom,
    cluster: &mut Cluster,
    scale: &Scale,
    load: Load,
    action: Option<ScaleAction>,
    name: &str,
) -> Result<(RunResult, Controlled, Option<String>), SessionError> {
    let log = TimelineLog::new();
    let mut run = phase_args(&args.run, scale, true);
    run.request_set = scale.set_size;
    let hdr_log = args.hdr_log.as_ref().map(|dir| dir.join(name));
    let stop = StopSignal::new();
    let wiring = RunWiring {
        stop: Some(stop.clone()),
        timeline_log: Some(log.clone()),
        ..from.wiring.clone()
    };
    let (controlled, executed) = std::thread::scope(|scope| {
        let runner = scope.spawn(|| {
            let controlled = LoadFrom {
                wiring: &wiring,
                ..from
            };
            execute(&run, controlled, Phase::Run, hdr_log.as_deref())
        });
        let controlled = control(args, cluster, &log, load, action, &|| runner.is_finished());
        // Whatever happened, the run ends now (or has ended) and its result is kept.
        stop.finish();
        (controlled, runner.join())
    });
    let (result, incomplete) =
        executed.map_err(|_| SessionError::Failed("the load thread panicked".into()))??;
    match controlled {
        Ok(c) => Ok((result, c, incomplete)),
        // The controller saw the load end early because a client was lost: the step is kept.
        Err(_) if incomplete.is_some() => Ok((
            result,
            Controlled::before_the_action("the load ended first: a client was lost"),
            incomplete,
        )),
        // Ctrl-C before the action (the baseline): an interrupted result, not an error (the
        // baseline's run itself has no step to be kept in).
        Err(_) if result.interrupted => Ok((
            result,
            Controlled::before_the_action("interrupted before the action"),
            incomplete,
        )),
        Err(e) => Err(e),
    }
}

/// Restricted elasticity with no load: scale, then wait until the cluster is ready with no data in
/// motion (full availability).
fn transition_unloaded(
    args: &ElasticRequest,
    cluster: &mut Cluster,
) -> Result<(Events, Vec<String>, Option<String>, UnloadedScores), SessionError> {
    let t0 = Instant::now();
    let now_s = || t0.elapsed().as_secs_f64();
    let changed = scale(cluster, args.action)?;
    let mut events = Events {
        scale_issued_s: 0.0,
        scale_done_s: Some(now_s()),
        ..Default::default()
    };
    let give_up = Instant::now() + args.stable_timeout;
    let mut not_stable = None;
    while args.motion_check == MotionCheck::Db && !cluster.busy_now().is_empty() {
        if Instant::now() >= give_up {
            not_stable = Some(format!(
                "data still in motion after --stable-timeout {}",
                humantime::format_duration(args.stable_timeout)
            ));
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    if not_stable.is_none() {
        events.transfers_done_s = Some(now_s());
        events.stable_s = events.transfers_done_s;
    }
    let scores = UnloadedScores {
        full_availability_s: events.stable_s,
        ready_s: events.scale_done_s,
    };
    Ok((events, changed, not_stable, scores))
}

/// The load or run options of one step: its threads and records; a run under the controller's
/// control lasts until it ends it.
fn phase_args(base: &RunRequest, scale: &Scale, controlled: bool) -> RunRequest {
    let mut a = base.clone();
    a.threads = Some(scale.threads as u32);
    // A step's load inserts all of its records: the run's --duration or --operations bound the
    // measured run, never the load (a load cut at 1 s left records unread: not_found in the run).
    a.duration = None;
    a.operations = None;
    use scalebench_workload::declared::{INSERTCOUNT, INSERTSTART, RECORDCOUNT};
    a.set(&RECORDCOUNT, scale.records);
    if scale.loaded_before > 0 {
        a.set(&INSERTSTART, scale.loaded_before);
        a.set(&INSERTCOUNT, scale.records - scale.loaded_before);
        a.drop_schema = false;
    }
    if controlled {
        // Ended by the controller; the day is a bound that is never reached.
        a.duration = Some(Duration::from_secs(86_400));
        a.operations = None;
        a.create_schema = false;
        a.drop_schema = false;
    }
    // Dory's T threads are the whole load's: each client of several runs its share.
    a.threads_in_all = true;
    a
}

/// The cluster's size as Dory counts it: running nodes that hold data (region servers, not HBase's
/// ZooKeeper, master and gateway).
fn running_nodes(c: &Cluster) -> usize {
    c.data_nodes().len()
}

/// What the controller saw: the events (with an action), the nodes it changed, why the cluster
/// never became stable (if it did not) and whether the baseline settled.
struct Controlled {
    events: Option<Events>,
    changed: Vec<String>,
    not_stable: Option<String>,
    baseline_note: Option<String>,
}

impl Controlled {
    /// The load ended before the action, for `why`: nothing changed, no transition.
    fn before_the_action(why: &str) -> Controlled {
        Controlled {
            events: None,
            changed: Vec::new(),
            not_stable: Some(why.into()),
            baseline_note: None,
        }
    }
}

/// One point of the load criterion's timeline: K runs of a request set and their mean time, or an
/// interval and its throughput; and whether any of its requests failed.
#[derive(Debug, Clone, Copy)]
struct CriterionPoint {
    start_s: f64,
    /// When its last set or interval ended.
    end_s: f64,
    value: f64,
    failed: bool,
}

/// The point at which the timeline is stable again after an action issued at `issued_s` whose data
/// stopped moving at `done_s`: the first point, from the state at `done_s` on, where Dory's rule
/// holds (the `x` steps ending at it each below `threshold`; studies.md, section 5), every point
/// after `issued_s`, none failed. Every point is examined, not only the last at each poll.
fn stable_point(
    points: &[CriterionPoint],
    issued_s: f64,
    done_s: f64,
    x: usize,
    threshold: f64,
) -> Option<usize> {
    let first_after = points.partition_point(|p| p.start_s < issued_s);
    // The window that describes the state when the data stopped moving ends at the last point
    // finished by then; earlier windows say nothing about that moment.
    let at_done = points
        .partition_point(|p| p.end_s <= done_s)
        .saturating_sub(1);
    let from = first_after.max(at_done.saturating_sub(x));
    scalebench_elastic::stable_at(&rule_values(points), from, x, threshold)
}

/// The points' values as Dory's rule sees them: a failed point's time is no time, and breaks any
/// run of steps it is in.
fn rule_values(points: &[CriterionPoint]) -> Vec<f64> {
    points
        .iter()
        .map(|p| if p.failed { f64::INFINITY } else { p.value })
        .collect()
}

/// The criterion points of a timeline. A group of sets still running is not a point yet.
fn criterion_points(points: &[TimelinePoint], load: Load) -> Vec<CriterionPoint> {
    match load {
        Load::Sets(k) => points
            .chunks_exact(k.max(1))
            .map(|c| {
                let times: Vec<f64> = c.iter().map(|p| p.duration_s).collect();
                let last = &c[c.len() - 1];
                CriterionPoint {
                    start_s: c[0].start_s,
                    end_s: last.start_s + last.duration_s,
                    value: scalebench_stats::mean(&times),
                    failed: c.iter().any(|p| p.failed > 0),
                }
            })
            .collect(),
        _ => points
            .iter()
            .map(|p| CriterionPoint {
                start_s: p.start_s,
                end_s: p.start_s + p.duration_s,
                value: p.ok as f64 / p.duration_s.max(f64::MIN_POSITIVE),
                failed: p.failed > 0,
            })
            .collect(),
    }
}

/// When the load's measurement began, waited for (the load may end first).
fn measurement_start(log: &TimelineLog, ended: &dyn Fn() -> bool) -> Result<Instant, SessionError> {
    loop {
        if let Some(t0) = log.measurement_start() {
            return Ok(t0);
        }
        if ended() {
            return Err(SessionError::Failed(
                "the load ended before it began".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn note_baseline(baseline: &[f64], load: Load, at_s: f64) {
    scalebench_session::note!(
        "baseline: {} {}, mean {:.3}, median step {:.4} at {:.1} s",
        baseline.len(),
        match load {
            Load::Sets(k) => format!("points of {k} request sets (s)"),
            _ => "intervals (ops/s)".into(),
        },
        scalebench_stats::mean(baseline),
        scalebench_elastic::median_step(baseline),
        at_s
    );
}

/// Baseline (until stable), then with an action: scale, follow until stable, measure after.
fn control(
    args: &ElasticRequest,
    cluster: &mut Cluster,
    log: &TimelineLog,
    load: Load,
    action: Option<ScaleAction>,
    ended: &dyn Fn() -> bool,
) -> Result<Controlled, SessionError> {
    let x = args.stable_sets as usize;
    let t0 = measurement_start(log, ended)?;
    let now_s = || t0.elapsed().as_secs_f64();
    // The timeline so far, copied from the log as it grows, and its criterion points.
    let mut raw: Vec<TimelinePoint> = Vec::new();
    // The criterion points so far, and when the last set or interval ended.
    let mut pull = || {
        raw.extend(log.points_since(raw.len()));
        let last_end = raw.last().map_or(0.0, |p| p.start_s + p.duration_s);
        (criterion_points(&raw, load), last_end)
    };
    let values = |p: &[CriterionPoint]| p.iter().map(|p| p.value).collect::<Vec<f64>>();
    let threshold_of = |baseline: &[f64]| match args.criterion {
        Criterion::MedianStep => scalebench_elastic::threshold(baseline),
        Criterion::Relative(pct) => pct / 100.0 * scalebench_stats::mean(baseline),
    };
    // Dory's rule at the last point: the x steps ending there each below `threshold`, no point of
    // them failed (a cluster that fails requests fast is not stable, it is unavailable).
    let holds = |p: &[CriterionPoint], threshold: f64| {
        p.len() > x
            && scalebench_elastic::stable_at(&rule_values(p), p.len() - x - 1, x, threshold)
                == Some(p.len() - 1)
    };
    // Baseline: its duration, enough points for a median step and a stability window, and stable
    // by its own threshold (or, past --stable-timeout, as it is, with a note).
    let mut baseline_note = None;
    let baseline_deadline = Instant::now() + args.baseline + args.stable_timeout;
    loop {
        if ended() {
            return Err(SessionError::Failed(
                "the load ended during the baseline".into(),
            ));
        }
        let p = pull().0;
        if now_s() >= args.baseline.as_secs_f64() && p.len() > 2 * x {
            if holds(&p, threshold_of(&values(&p))) {
                break;
            }
            if Instant::now() >= baseline_deadline {
                baseline_note =
                    Some("the baseline was not stable within --stable-timeout".to_string());
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let baseline = values(&pull().0);
    let threshold = threshold_of(&baseline);
    note_baseline(&baseline, load, now_s());
    let Some(action) = action else {
        return Ok(Controlled {
            events: None,
            changed: Vec::new(),
            not_stable: None,
            baseline_note,
        });
    };
    let mut events = Events {
        scale_issued_s: now_s(),
        ..Default::default()
    };
    let changed = match scale(cluster, action) {
        Ok(changed) => changed,
        // Ctrl-C during the action: it ended where it was (a rolling restart between nodes, the
        // node it was at running again). The step keeps what was measured, with no end.
        Err(e) if scalebench_deploy::host::waits_interrupted() => {
            scalebench_session::note!("{action} interrupted at {:.1} s: {e}", now_s());
            return Ok(Controlled {
                events: Some(events),
                changed: Vec::new(),
                not_stable: Some(format!("interrupted during the {action}: {e}")),
                baseline_note,
            });
        }
        Err(e) => return Err(e),
    };
    events.scale_done_s = Some(now_s());
    scalebench_session::note!("{action} done at {:.1} s ({})", now_s(), changed.join(", "));

    let give_up = Instant::now() + args.stable_timeout;
    let mut not_stable = None;
    // What the database's own signals said was still in motion at the last look.
    let mut in_motion = Vec::new();
    loop {
        if ended() {
            not_stable = Some("the run ended first".to_string());
            break;
        }
        if Instant::now() >= give_up {
            let still = if events.transfers_done_s.is_none() {
                format!(" (still in motion: {})", in_motion.join("; "))
            } else {
                String::new()
            };
            not_stable = Some(format!(
                "not stable within --stable-timeout {}{still}",
                humantime::format_duration(args.stable_timeout)
            ));
            break;
        }
        if events.transfers_done_s.is_none() {
            in_motion = match args.motion_check {
                MotionCheck::None => Vec::new(),
                MotionCheck::Db => cluster.busy_now(),
            };
            if in_motion.is_empty() {
                events.transfers_done_s = Some(now_s());
                scalebench_session::note!("no data in motion at {:.1} s", now_s());
            }
        }
        if let Some(done) = events.transfers_done_s {
            let (points, _) = pull();
            if let Some(k) = stable_point(&points, events.scale_issued_s, done, x, threshold) {
                let stable = points[k].end_s.max(done);
                events.stable_s = Some(stable);
                scalebench_session::note!("stable at {stable:.1} s");
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // After: the load goes on for --after (and at least X points) to measure Av2 and Rt2.
    if let Some(stable) = events.stable_s {
        loop {
            let (points, _) = pull();
            let after = points.len() - points.partition_point(|p| p.start_s < stable);
            if ended() || (now_s() >= stable + args.after.as_secs_f64() && after >= x) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(Controlled {
        events: Some(events),
        changed,
        not_stable,
        baseline_note,
    })
}

/// Takes the action ([`Cluster::apply`]); returns the nodes it changed, and notes what it said.
fn scale(cluster: &mut Cluster, action: ScaleAction) -> Result<Vec<String>, SessionError> {
    let done = cluster.apply(action)?;
    if let Some(said) = done.said {
        scalebench_session::note!("{said}");
    }
    Ok(done.changed)
}

fn set_points(p: &PhaseResult) -> Vec<SetPoint> {
    p.request_sets
        .as_ref()
        .map(|r| {
            r.sets
                .iter()
                .map(|s| SetPoint {
                    start_s: s.start_s,
                    duration_s: s.duration_s,
                    failed: s.failed,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The intervals of an open-loop run, all operations together; p99 from the intended start over
/// the merged histograms.
fn interval_points(p: &PhaseResult) -> Vec<IntervalPoint> {
    let covered = |start: f64| (p.duration_s - start).clamp(f64::MIN_POSITIVE, p.interval_s);
    p.intervals
        .iter()
        .map(|i| {
            let mut merged = scalebench_measure::new_histogram();
            for o in i.operations.values() {
                let h = o.intended_histogram.as_ref().or(o.histogram.as_ref());
                if let Some(h) = h.and_then(|h| scalebench_measure::decode_histogram(h).ok()) {
                    let _ = merged.add(&h);
                }
            }
            IntervalPoint {
                start_s: i.start_s,
                duration_s: covered(i.start_s),
                ok: i.operations.values().map(|o| o.ok).sum(),
                failed: i.operations.values().map(|o| o.failed).sum(),
                p99_us: quantile_us(&merged, 0.99),
            }
        })
        .collect()
}

/// The step's heading as progress, then the caller's observer (which prints
/// `scalebench_report::text::step_summary`).
fn tell_step(args: &ElasticRequest, s: &ElasticStep) {
    scalebench_session::note!(
        "step {}: {} {} -> {} nodes ({}), {} in flight, {} records",
        s.step,
        s.action,
        s.nodes_before,
        s.nodes_after,
        s.changed_nodes.join(", "),
        s.in_flight,
        s.records
    );
    if let Some(observer) = &args.on_step {
        (observer.0)(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One point per second from t = 0, with these values.
    fn timeline(values: &[f64]) -> Vec<CriterionPoint> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| CriterionPoint {
                start_s: i as f64,
                end_s: i as f64 + 1.0,
                value: *v,
                failed: false,
            })
            .collect()
    }

    #[test]
    fn dory_rule_is_checked_at_every_point_from_the_moment_data_stopped_moving() {
        // Action at 2 s; steps below 0.1 from point 6 to 9 (x = 3 holds at point 8), then noisy.
        let v = [
            1.0, 1.0, 5.0, 3.0, 1.0, 2.0, 2.0, 2.05, 2.0, 2.02, 4.0, 1.0, 3.0, 3.0,
        ];
        let points = timeline(&v);
        // Data moved until 4.5 s: the first point where the rule holds is 8 (it ends at 9 s), though
        // a poll that came later would have seen a noisy last window.
        assert_eq!(stable_point(&points, 2.0, 4.5, 3, 0.1), Some(8));
        // Data moved until 11.5 s: the quiet run is over by then; nothing holds.
        assert_eq!(stable_point(&points, 2.0, 11.5, 3, 0.1), None);
        // Data moved until 9.5 s: the state then is the window ending at point 8 (finished at 9 s).
        assert_eq!(stable_point(&points, 2.0, 9.5, 3, 0.1), Some(8));
        // Only points after the action count: a quiet stretch before it does not.
        let quiet_before = timeline(&[2.0, 2.0, 2.0, 2.0, 9.0, 1.0, 5.0]);
        assert_eq!(stable_point(&quiet_before, 4.0, 4.0, 3, 0.1), None);
        // A failed point breaks the run it is in.
        let mut failing = timeline(&[1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]);
        failing[3].failed = true;
        assert_eq!(stable_point(&failing, 0.5, 0.5, 2, 0.1), Some(6));
    }
}
