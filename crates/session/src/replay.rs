//! `scalebench replay CAPTURE` (issue 66): the operations a capture holds, issued against a
//! database at the times the capture gives them, divided by `--speed`, as an open loop (latency
//! from each intended start, coordinated omission corrected). A thread reads the capture (in
//! constant memory: [`scalebench_replay`]) and feeds each operation to the slot of its session
//! ([`scalebench_exec::feed`]): a session's operations run in order on one connection, a late one
//! delaying the next, which its start delay records. Key-value captures run on any binding by key;
//! what a binding cannot run is counted by command in the result (`replay.not_run`).

use std::collections::BTreeMap;
use std::sync::Arc;

use scalebench_exec::feed::{feed, Fed, Feeder};
use scalebench_exec::Phase;
use scalebench_measure::result::replay::{NotRun, ReplayFigures};
use scalebench_replay::operation::by_key;
use scalebench_replay::share::{falls_to, slot_of, Copies};
use scalebench_replay::Request;

use crate::replay_statements::StatementSlots;
use scalebench_workload::rate::{Pace, Rate};

use crate::error::SessionError;
use crate::phase::{execute_phases, ExecutedPhases};
use crate::request::RunRequest;
use crate::wiring::RunWiring;

pub use crate::replay_request::*;

/// Replays `replay` with the binding, threads and connections `args` give; refuses what does not
/// apply to a replay (it paces its own operations and ends with them).
pub fn replay(
    args: &RunRequest,
    replay: &ReplayRequest,
    wiring: RunWiring,
) -> Result<ExecutedPhases, SessionError> {
    refuse_what_does_not_apply(args)?;
    let db = args.db.as_deref();
    let (format, summary) = replay.checked(db)?;
    let first_ns = summary.first_ns.unwrap_or_default();
    let mut run = args.clone();
    // Its format as recognised: a database log's statements need none of the workload's table.
    run.replay = Some(ReplayRequest {
        format: Some(format),
        ..replay.clone()
    });
    let threads = args.threads.unwrap_or(1);
    run.threads = Some(threads);
    // The offered load, as the result and the summary say it: the mean rate of what the capture
    // has that runs here, at its speed (to the thousandth of an operation per second).
    let span_s = (summary.span_s() / replay.speed).max(1e-3);
    let runnable = ReplayRequest::runnable(format, &summary, db);
    let offered = runnable as f64 * f64::from(replay.copies) / span_s;
    let offered = ((offered * 1000.0).round() / 1000.0).clamp(0.001, 1e9);
    run.pace = Pace::Open(Rate::new(offered).map_err(SessionError::Usage)?);
    let slots = threads as usize * args.concurrency as usize;
    let statements = (summary.statements() > 0 && runs_statements(db, format))
        .then(|| StatementSlots::new(&summary, replay.copies, slots))
        .transpose()?;
    let (queues, feeder) = feed(slots);
    let queues = match &statements {
        Some(s) => queues.with_names(s.names()),
        None => queues,
    };
    let mut wiring = wiring;
    wiring.feed = Some(Arc::new(queues));
    let job = FeedJob {
        share: wiring
            .launch
            .share()
            .map_or((0, 1), |s| (s.index, s.clients)),
        replay: replay.clone(),
        first_ns,
        mean_gap_ns: (summary.span_s() * 1e9 / summary.operations.max(1) as f64) as i64,
        interval_ns: args.interval.as_nanos().max(1) as u64,
        statements,
    };
    let feeding = std::thread::Builder::new()
        .name("scalebench-replay-feed".into())
        .spawn(move || job.run(&feeder))
        .map_err(|e| SessionError::Failed(format!("cannot start the replay's reader: {e}")))?;
    let executed = execute_phases(&run, &wiring, &[Phase::Run]);
    // The slots' queues go with the wiring: a feeder still waiting on one is released.
    drop(wiring);
    let fed = feeding
        .join()
        .map_err(|_| SessionError::Failed("the replay's reader failed".into()))?;
    let mut executed = executed?;
    let figures = ReplayFigures {
        capture: replay.capture.display().to_string(),
        format: format.name().into(),
        speed: replay.speed,
        copies: replay.copies,
        read: fed.read,
        fed: fed.fed,
        not_run: fed.not_run,
        capture_span_s: summary.span_s(),
        unreadable: fed.unreadable,
        scheduled_per_interval: fed.scheduled_per_interval,
    };
    if let Some(phase) = executed
        .result
        .phases
        .iter_mut()
        .find(|p| p.phase == Phase::Run)
    {
        phase.replay = Some(figures);
    }
    // A replay lasts as long as its capture takes at its speed: no duration was set.
    executed.result.parameters.duration_s = None;
    Ok(executed)
}

/// Options that set what a replay sets itself, refused rather than ignored (one line, exit 2).
pub fn refuse_what_does_not_apply(args: &RunRequest) -> Result<(), SessionError> {
    let given = [
        (
            args.duration.is_some(),
            "--duration (a replay lasts the capture's span divided by --speed)",
        ),
        (
            args.operations.is_some(),
            "--operations (a replay runs the capture's)",
        ),
        (
            !matches!(args.pace, Pace::Inherit),
            "--target and --rate-profile (a replay keeps the capture's times)",
        ),
        (
            !args.warmup.is_zero(),
            "--warmup (a replay measures the whole capture)",
        ),
        (args.request_set.is_some(), "--request-set"),
        (args.verify_writes, "--verify-writes"),
        (args.pipeline > 1, "--pipeline"),
        (args.consistency_probe.is_some(), "--consistency-probe"),
        (!args.faults.is_empty(), "--fault"),
    ];
    match given.iter().find(|(g, _)| *g) {
        Some((_, what)) => Err(SessionError::Usage(format!(
            "{what}: does not apply to a replay"
        ))),
        None => Ok(()),
    }
}

/// The most intervals whose due operations a replay counts (a day of 20 ms intervals).
const MAX_INTERVALS_TALLIED: usize = 1 << 22;

/// What the reader did with the capture.
#[derive(Debug, Default)]
struct FedCounts {
    read: u64,
    fed: u64,
    unreadable: u64,
    not_run: BTreeMap<String, NotRun>,
    /// Operations fed by the interval they are due in.
    scheduled_per_interval: Vec<u64>,
}

/// The reader's work: the capture, from its first operation, into the slots' queues (of this
/// client's share: the sessions, else keys, that fall to client `share.0` of `share.1`).
struct FeedJob {
    share: (u32, u32),
    replay: ReplayRequest,
    first_ns: i64,
    mean_gap_ns: i64,
    /// The phase's interval: the fed operations are counted by the one they are due in.
    interval_ns: u64,
    /// Statements run as written (the database is of their kind): the names they are measured
    /// under, and each session's connection.
    statements: Option<StatementSlots>,
}

impl FeedJob {
    fn run(mut self, feeder: &Feeder) -> FedCounts {
        let mut counts = FedCounts::default();
        let Ok(capture) = scalebench_replay::open(&self.replay.capture, self.replay.format) else {
            // Read a moment ago: gone since. The phase runs what it was fed (nothing).
            return counts;
        };
        let operations = Copies::new(capture.operations, self.replay.copies, self.mean_gap_ns);
        for op in operations {
            let Ok(c) = op else {
                counts.unreadable += 1;
                continue;
            };
            let (index, clients) = self.share;
            if !falls_to(&c, index, clients) {
                continue;
            }
            counts.read += 1;
            let after_ns = ((c.at_ns - self.first_ns).max(0) as f64 / self.replay.speed) as u64;
            let fed = match (&c.request, &mut self.statements) {
                (Request::Statement { text, params }, Some(s)) => {
                    let slot = s.slot_of(&c.session);
                    (slot, s.fed(after_ns, &c.request.command(), text, params))
                }
                _ => match by_key(&c.request) {
                    Ok(k) => (
                        slot_of(&c, clients, feeder.slots()),
                        Fed {
                            at_ns: after_ns,
                            kind: k.kind,
                            append: k.append,
                            key: k.key.to_string(),
                            value_bytes: k.value_bytes.min(u64::from(u32::MAX)) as u32,
                            statement: None,
                        },
                    ),
                    Err(e) => {
                        let n = counts.not_run.entry(e.command).or_insert(NotRun {
                            count: 0,
                            why: e.why.into(),
                        });
                        n.count += 1;
                        continue;
                    }
                },
            };
            if !feeder.send(fed.0, fed.1) {
                // The phase ended (Ctrl-C, a failure): what was fed is what ran.
                break;
            }
            counts.fed += 1;
            // Intervals past the most tallied are not (the result's intervals past them are then
            // judged by latency alone).
            let interval = (after_ns / self.interval_ns) as usize;
            if interval < MAX_INTERVALS_TALLIED {
                if counts.scheduled_per_interval.len() <= interval {
                    counts.scheduled_per_interval.resize(interval + 1, 0);
                }
                counts.scheduled_per_interval[interval] += 1;
            }
        }
        counts
    }
}
