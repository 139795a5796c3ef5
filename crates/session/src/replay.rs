//! `scalebench replay CAPTURE` (issue 66): the operations a capture holds, issued against a
//! database at the times the capture gives them, divided by `--speed`, as an open loop (latency
//! from each intended start, coordinated omission corrected). A thread reads the capture (in
//! constant memory: [`scalebench_replay`]) and feeds each operation to the slot of its session
//! ([`scalebench_exec::feed`]): a session's operations run in order on one connection, a late one
//! delaying the next, which its start delay records. Key-value captures run on any binding by key;
//! what a binding cannot run is counted by command in the result (`replay.not_run`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use scalebench_exec::feed::{feed, Fed, Feeder};
use scalebench_exec::Phase;
use scalebench_measure::result::replay::{NotRun, ReplayFigures};
use scalebench_replay::operation::by_key;
use scalebench_replay::share::{slot_of, Copies};
use scalebench_replay::{CaptureFormat, CaptureSummary};
use scalebench_workload::rate::{Pace, Rate};

use crate::error::SessionError;
use crate::phase::{execute_phases, ExecutedPhases};
use crate::request::RunRequest;
use crate::wiring::RunWiring;

/// The most times faster than captured a replay may run.
pub const MAX_SPEED: f64 = 10_000.0;
/// The most copies of a capture (`--keys xN`).
pub const MAX_COPIES: u32 = 1000;
/// The furthest a capture's time may go back, one operation to a later one: further, its parts
/// are not in the order they began (captures joined out of order, a clock set back).
pub const MAX_STEP_BACK_S: f64 = 1.0;
/// The longest a replay may last (its capture's span over its speed): 31 days.
pub const MAX_REPLAY_SPAN_S: f64 = 31.0 * 24.0 * 3600.0;

/// What to replay, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayRequest {
    pub capture: PathBuf,
    /// Its format; recognised from its first line when not given.
    pub format: Option<CaptureFormat>,
    /// How many times faster than captured.
    pub speed: f64,
    /// Copies replayed together, each on keys and sessions of its own (`--keys xN`).
    pub copies: u32,
}

impl ReplayRequest {
    /// `speed` and `copies` within their bounds: one line naming the bad value.
    pub fn new(
        capture: PathBuf,
        format: Option<CaptureFormat>,
        speed: f64,
        copies: u32,
    ) -> Result<ReplayRequest, SessionError> {
        if !(speed.is_finite() && speed > 0.0 && speed <= MAX_SPEED) {
            return Err(SessionError::Usage(format!(
                "--speed {speed}: expected a number of times the capture's speed, above 0 and at most {MAX_SPEED}"
            )));
        }
        if !(1..=MAX_COPIES).contains(&copies) {
            return Err(SessionError::Usage(format!(
                "--keys x{copies}: expected from x1 to x{MAX_COPIES} copies of the key space"
            )));
        }
        Ok(ReplayRequest {
            capture,
            format,
            speed,
            copies,
        })
    }

    /// `--replay CAPTURE` with `--keys` and `--capture-format` at speed 1, if a capture is given;
    /// those two without one are refused (they say how to read a capture).
    pub fn given(
        capture: Option<PathBuf>,
        format: Option<CaptureFormat>,
        copies: Option<u32>,
    ) -> Result<Option<ReplayRequest>, SessionError> {
        match capture {
            Some(c) => ReplayRequest::new(c, format, 1.0, copies.unwrap_or(1)).map(Some),
            None if copies.is_some() || format.is_some() => Err(SessionError::Usage(
                "--keys and --capture-format: only with --replay CAPTURE".into(),
            )),
            None => Ok(None),
        }
    }

    /// The capture read once, before anything connects: its format and what it holds.
    pub fn check(&self) -> Result<(CaptureFormat, CaptureSummary), SessionError> {
        let capture = scalebench_replay::open(&self.capture, self.format)
            .map_err(|e| SessionError::Usage(e.to_string()))?;
        let format = capture.format;
        Ok((format, CaptureSummary::of(capture.operations)))
    }

    /// [`Self::check`], and a capture that cannot be replayed as it is refused (bad input, one
    /// line naming the file and why): a line that is no operation of its format, no operation,
    /// times going back further than [`MAX_STEP_BACK_S`] (a PostgreSQL log's statements logged as
    /// they end go back by their durations, and are not judged), a span beyond
    /// [`MAX_REPLAY_SPAN_S`] at its speed.
    pub fn checked(&self) -> Result<(CaptureFormat, CaptureSummary), SessionError> {
        let (format, summary) = self.check()?;
        self.judge(format, &summary)?;
        Ok((format, summary))
    }

    /// Why a capture of this summary cannot be replayed as it is ([`Self::checked`]), if it cannot.
    fn judge(&self, format: CaptureFormat, summary: &CaptureSummary) -> Result<(), SessionError> {
        let name = self.capture.display();
        let bad = |why: String| Err(SessionError::Usage(format!("{name}: {why}")));
        if summary.unreadable > 0 {
            return bad(format!(
                "{} line(s) are not operations of the {} format (the first: {}); `scalebench replay --check` lists them",
                summary.unreadable,
                format.name(),
                summary.first_errors.first().map_or("", String::as_str)
            ));
        }
        if summary.first_ns.is_none() {
            return bad("no operation in it".into());
        }
        if summary.by_key == 0 {
            let commands: Vec<String> = summary
                .by_command
                .iter()
                .take(5)
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            return bad(format!(
                "none of its {} operations runs by key on a binding (by command: {}); docs/replay.md lists what does",
                summary.operations,
                commands.join(", ")
            ));
        }
        let back_s = summary.max_step_back_ns as f64 / 1e9;
        if back_s > MAX_STEP_BACK_S && format != CaptureFormat::PostgresCsvlog {
            return bad(format!(
                "its times go back: operation {} (from 1, in the file's order) began {back_s:.3} s before one before it; a capture's operations are in the order they began (captures joined out of order? sort them by time)",
                summary.max_step_back_at
            ));
        }
        if summary.span_s() / self.speed > MAX_REPLAY_SPAN_S {
            return bad(format!(
                "it spans {:.0} s: at --speed {} its replay would last beyond 31 days (a time far off?)",
                summary.span_s(),
                self.speed
            ));
        }
        Ok(())
    }
}

/// `--keys xN`: `x3` or `3`, copies of the capture's key space.
pub fn parse_copies(text: &str) -> Result<u32, String> {
    let n = text.strip_prefix('x').unwrap_or(text);
    n.parse()
        .map_err(|_| "expected xN: copies of the key space, e.g. x3".into())
}

/// `--check`: the capture's summary as printed, and why it cannot be replayed as it is, if it
/// cannot (bad input).
pub fn check_text(replay: &ReplayRequest) -> Result<(String, Option<String>), SessionError> {
    let (format, summary) = replay.check()?;
    let lines = summary.lines().join("\n  ");
    let text = format!(
        "{} ({})\n  {lines}",
        replay.capture.display(),
        format.name()
    );
    let refused = replay.judge(format, &summary).err().map(|e| e.to_string());
    Ok((text, refused))
}

/// Replays `replay` with the binding, threads and connections `args` give; refuses what does not
/// apply to a replay (it paces its own operations and ends with them).
pub fn replay(
    args: &RunRequest,
    replay: &ReplayRequest,
    wiring: RunWiring,
) -> Result<ExecutedPhases, SessionError> {
    refuse_what_does_not_apply(args)?;
    let (format, summary) = replay.checked()?;
    let first_ns = summary.first_ns.unwrap_or_default();
    let mut run = args.clone();
    let threads = args.threads.unwrap_or(1);
    run.threads = Some(threads);
    // The offered load, as the result and the summary say it: the mean rate of what the capture
    // has that runs by key, at its speed (to the thousandth of an operation per second).
    let span_s = (summary.span_s() / replay.speed).max(1e-3);
    let offered = summary.by_key as f64 * f64::from(replay.copies) / span_s;
    let offered = ((offered * 1000.0).round() / 1000.0).clamp(0.001, 1e9);
    run.pace = Pace::Open(Rate::new(offered).map_err(SessionError::Usage)?);
    let slots = threads as usize * args.concurrency as usize;
    let (queues, feeder) = feed(slots);
    let mut wiring = wiring;
    wiring.feed = Some(Arc::new(queues));
    let job = FeedJob {
        replay: replay.clone(),
        first_ns,
        mean_gap_ns: (summary.span_s() * 1e9 / summary.operations.max(1) as f64) as i64,
        interval_ns: args.interval.as_nanos().max(1) as u64,
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

/// The reader's work: the capture, from its first operation, into the slots' queues.
struct FeedJob {
    replay: ReplayRequest,
    first_ns: i64,
    mean_gap_ns: i64,
    /// The phase's interval: the fed operations are counted by the one they are due in.
    interval_ns: u64,
}

impl FeedJob {
    fn run(&self, feeder: &Feeder) -> FedCounts {
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
            counts.read += 1;
            let k = match by_key(&c.request) {
                Ok(k) => k,
                Err(e) => {
                    let n = counts.not_run.entry(e.command).or_insert(NotRun {
                        count: 0,
                        why: e.why.into(),
                    });
                    n.count += 1;
                    continue;
                }
            };
            let after_ns = ((c.at_ns - self.first_ns).max(0) as f64 / self.replay.speed) as u64;
            let fed = Fed {
                at_ns: after_ns,
                kind: k.kind,
                append: k.append,
                key: k.key.to_string(),
                value_bytes: k.value_bytes.min(u64::from(u32::MAX)) as u32,
            };
            if !feeder.send(slot_of(&c, 1, feeder.slots()), fed) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_speed_or_a_number_of_copies_out_of_bounds_is_named() {
        let new = |speed, copies| ReplayRequest::new("c.txt".into(), None, speed, copies);
        assert!(new(1.0, 1).is_ok() && new(MAX_SPEED, MAX_COPIES).is_ok());
        for (speed, copies, named) in [
            (0.0, 1, "--speed 0"),
            (f64::NAN, 1, "--speed NaN"),
            (MAX_SPEED * 2.0, 1, "--speed 20000"),
            (1.0, 0, "--keys x0"),
            (1.0, MAX_COPIES + 1, "--keys x1001"),
        ] {
            let e = new(speed, copies).unwrap_err().to_string();
            assert!(e.contains(named), "{e}");
        }
        assert_eq!(parse_copies("x3"), Ok(3));
        assert_eq!(parse_copies("3"), Ok(3));
        assert!(parse_copies("three").is_err());
    }
}
