//! `scalebench elastic`: Dory's elasticity benchmark on a local (or external) cluster.
//!
//! Per step: load the data, start the load on its own thread (Dory's request sets, or an open loop
//! at `--target` whose timeline is its intervals), measure a baseline, change the cluster's size under
//! the load, follow the cluster until the database reports no data in motion and the timeline is
//! stable again, keep measuring for `--after`, then end the run and score the transition
//! (`scalebench-elastic`). With `--steps N`, records and threads double at each step (and with
//! `double`, the cluster too).

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use scalebench_deploy::Cluster;
use scalebench_elastic::{score, score_open_loop, Events, IntervalPoint, SetPoint, StepScores};
use scalebench_exec::{Phase, TimelineLog, TimelinePoint};
use scalebench_measure::PhaseResult;
use scalebench_measure::RunResult;
use serde::Serialize;

use crate::args::{ClusterTarget, Criterion, ElasticArgs, PhaseArgs, Probe, ScaleAction};
use crate::error::CliError;
use crate::phase::{execute_phases, finish_current_phase};
use crate::settings::Settings;

pub const SCHEMA: &str = "scalebench-elastic/1";

#[derive(Debug, Serialize)]
pub struct ElasticResult {
    pub schema: String,
    pub command: Vec<String>,
    pub deployment: String,
    /// Operations per request set (R), with request sets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_size: Option<u64>,
    /// The offered rate, with an open loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_ops_s: Option<f64>,
    /// Sets in a row that must be stable (X).
    pub stable_sets: u32,
    /// Ctrl-C ended it: the steps are those measured until then.
    pub interrupted: bool,
    pub steps: Vec<ElasticStep>,
}

#[derive(Debug, Serialize)]
pub struct ElasticStep {
    pub step: u32,
    pub action: ScaleAction,
    /// Requests in flight: threads x concurrency (T).
    pub in_flight: u64,
    pub records: u64,
    pub nodes_before: usize,
    pub nodes_after: usize,
    /// Nodes added, removed or crashed.
    pub changed_nodes: Vec<String>,
    pub events: Events,
    /// Why the transition has no stability time, when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_stable: Option<String>,
    /// When the baseline did not settle before the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_note: Option<String>,
    pub scores: StepScores,
    /// The run under load, with its request-set timeline (`phases[0].request_sets`).
    pub run: RunResult,
}

pub fn elastic_command(args: &ElasticArgs, argv: &[OsString]) -> Result<ExitCode, CliError> {
    let out = run_elastic(args, argv)?;
    if let Some(path) = &args.phase.output {
        crate::output::write_json(path, &out)?;
    }
    Ok(if out.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs every step and returns what was measured (also after Ctrl-C: the steps so far).
pub fn run_elastic(args: &ElasticArgs, argv: &[OsString]) -> Result<ElasticResult, CliError> {
    let Some(deployment) = args.phase.deployment.clone() else {
        return Err(CliError::Usage(
            "scalebench elastic needs --deployment FILE (the cluster to scale)".into(),
        ));
    };
    let base = Settings::resolve(&args.phase, Phase::Run)?;
    let set_size = args.phase.request_set;
    if set_size.is_none() && base.target.is_none() {
        return Err(CliError::Usage(
            "scalebench elastic needs a constant load: --request-set R (Dory's timed request sets) or --target OPS (an open loop)".into(),
        ));
    }
    let x = args.stable_sets as usize;
    let target = ClusterTarget {
        deployment: deployment.clone(),
        clusters: args.phase.clusters.clone(),
    };
    let mut cluster = crate::cluster::open(&target)?;
    let mut out = ElasticResult {
        schema: SCHEMA.into(),
        command: crate::environment::redacted_command(argv),
        deployment: deployment.display().to_string(),
        set_size,
        target_ops_s: base.target,
        stable_sets: args.stable_sets,
        interrupted: false,
        steps: Vec::new(),
    };
    let mut records = base.workload.record_count;
    let mut threads = base.threads as u64;
    for step in 0..args.steps {
        if step > 0 {
            // Twice the data and twice the load on the (grown) cluster.
            threads *= 2;
        }
        let loaded_before = if step == 0 { 0 } else { records };
        if step > 0 {
            records *= 2;
        }
        if !(args.no_load && step == 0) {
            let load = phase_args(&args.phase, threads, records, loaded_before, None);
            eprintln!(
                "step {}: loading records {loaded_before}..{records}",
                step + 1
            );
            let (r, _) = execute_phases(&load, &[Phase::Load], argv)?;
            if r.interrupted {
                out.interrupted = true;
                break;
            }
        }
        let log = TimelineLog::new();
        let run = phase_args(&args.phase, threads, records, 0, Some(log.clone()));
        let run_argv = argv.to_vec();
        let runner = std::thread::spawn(move || execute_phases(&run, &[Phase::Run], &run_argv));
        let nodes_before = running_nodes(&cluster);
        let controlled = control(args, &mut cluster, &log, set_size.is_some(), &runner);
        // Whatever happened, the run ends now (or has ended) and its result is kept.
        finish_current_phase();
        let (result, _) = runner
            .join()
            .map_err(|_| CliError::Failed("the load thread panicked".into()))??;
        let Controlled {
            events,
            changed,
            not_stable,
            baseline_note,
        } = controlled?;
        let in_flight = threads * args.phase.concurrency as u64;
        let phase = result.phases.first();
        let scores = match (set_size, phase) {
            (Some(size), _) => StepScores::RequestSets(score(
                &phase.map(set_points).unwrap_or_default(),
                size,
                in_flight,
                &events,
                x,
            )),
            (None, p) => StepScores::OpenLoop(score_open_loop(
                &p.map(interval_points).unwrap_or_default(),
                &events,
            )),
        };
        out.interrupted = result.interrupted;
        let s = ElasticStep {
            step: step + 1,
            action: args.action,
            in_flight,
            records,
            nodes_before,
            nodes_after: running_nodes(&cluster),
            changed_nodes: changed,
            events,
            not_stable,
            baseline_note,
            scores,
            run: result,
        };
        print_step(&s);
        out.steps.push(s);
        if out.interrupted {
            break;
        }
    }
    Ok(out)
}

/// The load or run options of one step: its threads and records; a run lasts until ended.
fn phase_args(
    base: &PhaseArgs,
    threads: u64,
    records: u64,
    insert_start: u64,
    log: Option<TimelineLog>,
) -> PhaseArgs {
    let mut a = base.clone();
    a.threads = Some(threads as u32);
    a.properties.push(format!("recordcount={records}"));
    if insert_start > 0 {
        a.properties.push(format!("insertstart={insert_start}"));
        a.properties
            .push(format!("insertcount={}", records - insert_start));
        a.drop_schema = false;
    }
    if log.is_some() {
        // Ended by the controller; the day is a bound that is never reached.
        a.duration = Some(Duration::from_secs(86_400));
        a.operations = None;
        a.create_schema = false;
        a.drop_schema = false;
    }
    a.timeline_log = log;
    a.output = None;
    a
}

fn running_nodes(c: &Cluster) -> usize {
    c.state
        .nodes
        .iter()
        .filter(|n| n.process.is_none() || n.is_running())
        .count()
}

/// What the controller saw: the events, the nodes it changed, why the cluster never became stable
/// (if it did not) and whether the baseline settled.
struct Controlled {
    events: Events,
    changed: Vec<String>,
    not_stable: Option<String>,
    baseline_note: Option<String>,
}

/// The value a point contributes to the load criterion: a request set's time, or an interval's
/// throughput.
fn value(p: &TimelinePoint, sets: bool) -> f64 {
    if sets {
        p.duration_s
    } else {
        p.ok as f64 / p.duration_s.max(f64::MIN_POSITIVE)
    }
}

/// Baseline (until stable), scale, follow until stable, measure after.
fn control(
    args: &ElasticArgs,
    cluster: &mut Cluster,
    log: &TimelineLog,
    sets: bool,
    runner: &std::thread::JoinHandle<Result<(RunResult, Vec<f64>), CliError>>,
) -> Result<Controlled, CliError> {
    let x = args.stable_sets as usize;
    let ended = || runner.is_finished();
    let t0 = loop {
        if let Some(t0) = log.measurement_start() {
            break t0;
        }
        if ended() {
            return Err(CliError::Failed("the load ended before it began".into()));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let now_s = || t0.elapsed().as_secs_f64();
    // The timeline so far, copied from the log as it grows, and each point's value.
    let mut points: Vec<TimelinePoint> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    let pull = |points: &mut Vec<TimelinePoint>, values: &mut Vec<f64>| {
        let new = log.points_since(points.len());
        values.extend(new.iter().map(|p| value(p, sets)));
        points.extend(new);
    };
    let threshold_of = |baseline: &[f64]| match args.criterion {
        Criterion::MedianStep => scalebench_elastic::threshold(baseline),
        Criterion::Relative(pct) => pct / 100.0 * scalebench_elastic::mean(baseline),
    };
    // The last x steps of `v` each below `threshold`.
    let holds = |v: &[f64], threshold: f64| {
        v.len() > x
            && v[v.len() - x - 1..]
                .windows(2)
                .all(|w| (w[1] - w[0]).abs() < threshold)
    };
    // Baseline: its duration, enough points for a median step and a stability window, and stable
    // by its own threshold (or, past --stable-timeout, as it is, with a note).
    let mut baseline_note = None;
    let baseline_deadline = Instant::now() + args.baseline + args.stable_timeout;
    loop {
        if ended() {
            return Err(CliError::Failed(
                "the load ended during the baseline".into(),
            ));
        }
        pull(&mut points, &mut values);
        if now_s() >= args.baseline.as_secs_f64() && values.len() > 2 * x {
            if holds(&values, threshold_of(&values)) {
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
    pull(&mut points, &mut values);
    let baseline = values.clone();
    let threshold = threshold_of(&baseline);
    eprintln!(
        "baseline: {} {}, mean {:.3}, median step {:.4}; {:?} at {:.1} s",
        baseline.len(),
        if sets {
            "request sets (s)"
        } else {
            "intervals (ops/s)"
        },
        scalebench_elastic::mean(&baseline),
        scalebench_elastic::median_step(&baseline),
        args.action,
        now_s()
    );
    let mut events = Events {
        scale_issued_s: now_s(),
        ..Default::default()
    };
    let changed = scale(cluster, args.action)?;
    events.scale_done_s = Some(now_s());
    eprintln!(
        "{:?} done at {:.1} s ({})",
        args.action,
        now_s(),
        changed.join(", ")
    );

    let give_up = Instant::now() + args.stable_timeout;
    let mut not_stable = None;
    loop {
        if ended() {
            not_stable = Some("the run ended first".to_string());
            break;
        }
        if Instant::now() >= give_up {
            not_stable = Some(format!(
                "not stable within --stable-timeout {}",
                humantime::format_duration(args.stable_timeout)
            ));
            break;
        }
        if events.transfers_done_s.is_none()
            && (args.probe == Probe::None || cluster.busy_now().is_empty())
        {
            events.transfers_done_s = Some(now_s());
            eprintln!("no data in motion at {:.1} s", now_s());
        }
        if let Some(done) = events.transfers_done_s {
            // The load criterion over the last X points, all of them after the scale command.
            pull(&mut points, &mut values);
            let first_after = points.partition_point(|p| p.start_s < events.scale_issued_s);
            if holds(&values[first_after..], threshold) {
                let last_end = points.last().map_or(0.0, |p| p.start_s + p.duration_s);
                events.stable_s = Some(last_end.max(done));
                eprintln!("stable at {:.1} s", last_end.max(done));
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // After: the load goes on for --after (and at least X sets) to measure Av2 and Rt2.
    if let Some(stable) = events.stable_s {
        while !ended()
            && (now_s() < stable + args.after.as_secs_f64()
                || points.len() - points.partition_point(|p| p.start_s < stable) < x)
        {
            pull(&mut points, &mut values);
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(Controlled {
        events,
        changed,
        not_stable,
        baseline_note,
    })
}

fn scale(cluster: &mut Cluster, action: ScaleAction) -> Result<Vec<String>, CliError> {
    let mut changed = Vec::new();
    match action {
        ScaleAction::Add(k) => {
            for _ in 0..k {
                changed.push(cluster.add_node()?);
            }
        }
        ScaleAction::Double => {
            for _ in 0..running_nodes(cluster) {
                changed.push(cluster.add_node()?);
            }
        }
        ScaleAction::Remove(k) => {
            for _ in 0..k {
                changed.push(cluster.remove_node(None)?);
            }
        }
        ScaleAction::Crash(k) => {
            let victims: Vec<String> = cluster
                .state
                .nodes
                .iter()
                .rev()
                .filter(|n| n.is_running())
                .take(k as usize)
                .map(|n| n.id.clone())
                .collect();
            for id in victims {
                cluster.stop_node(&id, true)?;
                changed.push(id);
            }
        }
    }
    Ok(changed)
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
                p99_us: merged.value_at_quantile(0.99) as f64 / 1000.0,
            }
        })
        .collect()
}

fn print_step(s: &ElasticStep) {
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let e = &s.events;
    eprintln!(
        "step {}: {:?} {} -> {} nodes ({}), {} in flight, {} records",
        s.step,
        s.action,
        s.nodes_before,
        s.nodes_after,
        s.changed_nodes.join(", "),
        s.in_flight,
        s.records
    );
    println!(
        "step {}: scale issued {:.1} s, done {} s, transfers done {} s, stable {} s{}",
        s.step,
        e.scale_issued_s,
        f(e.scale_done_s),
        f(e.transfers_done_s),
        f(e.stable_s),
        s.not_stable
            .as_ref()
            .map_or(String::new(), |w| format!(" ({w})"))
    );
    match &s.scores {
        StepScores::RequestSets(sc) => {
            println!(
                "  stabilisation {} s = data transfer {} s + additional {} s; Av {:.4} -> {} s, Rt {:.6} -> {} s",
                f(sc.stabilisation_s),
                f(sc.data_transfer_s),
                f(sc.additional_s),
                sc.av_before_s,
                f(sc.av_after_s),
                sc.rt_before_s,
                sc.rt_after_s.map_or("-".into(), |v| format!("{v:.6}")),
            );
            println!(
                "  elasticity {} (A {}, B {}), scalability {}, failed in transition {} ({:.3}%), full availability after {} s",
                f(sc.elasticity),
                f(sc.area_above_ramp),
                f(sc.sd_band_area),
                f(sc.scalability),
                sc.failed_in_transition,
                sc.failed_share * 100.0,
                f(sc.full_availability_s)
            );
        }
        StepScores::OpenLoop(sc) => {
            println!(
                "  stabilisation {} s = data transfer {} s + additional {} s; throughput {:.0} -> {} ops/s, {} operations lost",
                f(sc.stabilisation_s),
                f(sc.data_transfer_s),
                f(sc.additional_s),
                sc.throughput_before_ops_s,
                f(sc.throughput_after_ops_s),
                f(sc.throughput_lost_ops),
            );
            println!(
                "  p99 {:.0} us before, {:.0} us at worst during, {} us after; failed in transition {} ({:.3}%), full availability after {} s",
                sc.p99_before_us,
                sc.p99_transition_max_us,
                f(sc.p99_after_us),
                sc.failed_in_transition,
                sc.failed_share * 100.0,
                f(sc.full_availability_s)
            );
        }
    }
}
