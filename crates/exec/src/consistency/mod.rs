//! The consistency probe (`--consistency-probe RATE`): beside a phase's workload, on connections of
//! its own, it writes new versions of a few probe keys and reads them back, and counts what
//! scalebench-measure's `consistency` module defines (PBS's t-visibility and k-staleness, YCSB++'s
//! read-after-write lag, Bermbach & Tai's staleness window, two session guarantees).
//!
//! Each probe write updates the next key in turn to its next version, the value naming the version
//! (and this probe, so a value left by an earlier run reads as older than any of this one). After
//! its acknowledgement: the writer's own connection reads it back at once (read-your-writes);
//! reader connections read it once at each delay of the plan (t-visibility); and a chaser reads it
//! until it has returned the write several times in a row for twice as long as the last stale read
//! came after the acknowledgement (the lag and the window, the window from the write's start), or
//! the horizon passes.
//!
//! Threads, not tasks: the writer and each reader connection have an OS thread and a runtime of
//! their own, so an acknowledgement is timed when its reply arrives (not when a shared runtime gets
//! round to the writer), reads of a binding that blocks its thread (SQLite) run side by side, and
//! reads due within a millisecond wait on a condition variable with a fine timer slack instead of a
//! busy loop. Every operation can go to a history file that an independent checker reads
//! (tools/history-check, docs/consistency.md).

mod follow;
mod history;
mod operations;
mod plan;
mod writer;

pub use history::{merge_histories, CLIENT_PROCESSES, MAX_HISTORY_BYTES};
pub use plan::{
    ProbeControl, ProbeError, ProbeEvent, ProbeEventSink, ProbeOutcome, ProbePlan, ProbeRole,
    DEFAULT_KEYS, DRAIN,
};

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use scalebench_binding::BindingFactory;
use scalebench_measure::consistency::ProbeTally;

use follow::{Shared, Stage};
use history::History;
use operations::Probe;
use plan::WRITER_BEGIN_TIMEOUT;

/// Runs the probe: connects, writes each key's first version, calls `ready` (the phase may start:
/// connecting a dozen sessions to a cluster can take longer than a short phase), writes from the
/// measurement start until the phase's window closes, lets the follow-ups end within [`DRAIN`],
/// and removes its keys.
pub fn run_probe<F: BindingFactory>(
    factory: &F,
    plan: &ProbePlan,
    control: &ProbeControl,
    ready: &(dyn Fn() + Sync),
) -> Result<ProbeOutcome, ProbeError> {
    let role = ProbeRole::Writer {
        tell: None,
        clock_offset_ns: 0,
    };
    run_probe_as(factory, plan, control, ready, role)
}

/// The writer's beginning, for a reader: its tag and its time base mapped onto this clock, and a
/// map of its times onto this clock. Waits for it (watching the stop).
fn writer_began(
    events: &std::sync::mpsc::Receiver<ProbeEvent>,
    control: &ProbeControl,
    clock_offset_ns: i64,
) -> Result<(String, u64, impl Fn(u64) -> Instant), ProbeError> {
    let waited = Instant::now();
    loop {
        if control.stop.is_requested() || control.ended.load(Ordering::Relaxed) {
            return Err(ProbeError::Failed(
                "the phase ended before the consistency probe's writer began".into(),
            ));
        }
        match events.recv_timeout(Duration::from_millis(50)) {
            Ok(ProbeEvent::Began {
                tag,
                base_unix_ns,
                clock_offset_ns: writer_offset_ns,
            }) => {
                // Writer's clock -> the launcher's -> this one's.
                let shift = clock_offset_ns - writer_offset_ns;
                let here = move |unix_ns: u64| (unix_ns as i128 + shift as i128).max(0) as u64;
                let (anchor, anchor_unix) = (Instant::now(), unix_now_ns());
                let at = move |writer_unix_ns: u64| {
                    let t = here(writer_unix_ns) as i128 - anchor_unix as i128;
                    if t >= 0 {
                        anchor + Duration::from_nanos(t as u64)
                    } else {
                        anchor
                            .checked_sub(Duration::from_nanos(t.unsigned_abs() as u64))
                            .unwrap_or(anchor)
                    }
                };
                return Ok((tag, base_unix_ns, at));
            }
            Ok(_) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(ProbeError::Failed(
                    "consistency probe: the writer's events ended before it began".into(),
                ))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                if waited.elapsed() > WRITER_BEGIN_TIMEOUT =>
            {
                return Err(ProbeError::Failed(format!(
                    "consistency probe: the writer (client 0) did not begin within {}",
                    humantime_secs(WRITER_BEGIN_TIMEOUT)
                )))
            }
            Err(_) => {}
        }
    }
}

fn humantime_secs(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// [`run_probe`] in a role of a run of several clients: the writer telling its events to readers
/// in other processes, or such readers.
pub fn run_probe_as<F: BindingFactory>(
    factory: &F,
    plan: &ProbePlan,
    control: &ProbeControl,
    ready: &(dyn Fn() + Sync),
    role: ProbeRole,
) -> Result<ProbeOutcome, ProbeError> {
    let (tag, base, base_unix_ns, tell, reader) = match role {
        ProbeRole::Writer {
            tell,
            clock_offset_ns,
        } => {
            let (base, base_unix_ns) = (Instant::now(), unix_now_ns());
            let tag = format!("p{:x}", probe_tag());
            if let Some(tell) = &tell {
                tell(&ProbeEvent::Began {
                    tag: tag.clone(),
                    base_unix_ns,
                    clock_offset_ns,
                });
            }
            (tag, base, base_unix_ns, tell, None)
        }
        ProbeRole::Reader {
            events,
            clock_offset_ns,
        } => {
            let (tag, base_unix_ns, at) = writer_began(&events, control, clock_offset_ns)?;
            // Times in the history on the writer's time base, mapped onto this clock.
            (
                tag,
                at(base_unix_ns),
                base_unix_ns,
                None,
                Some((events, at)),
            )
        }
    };
    let history = match &plan.history {
        Some(path) => Some(History::create(path)?),
        None => None,
    };
    let horizon_ms = plan.horizon.as_secs_f64() * 1000.0;
    let probe = Probe {
        plan,
        control,
        base,
        base_unix_ns,
        tell,
        tag,
        shared: Mutex::new(Shared {
            stage: Stage::Setup,
            tally: ProbeTally::new(plan.rate, plan.keys, &plan.delays_ms, horizon_ms)
                .with_live(plan.live.clone()),
            history,
            jobs: BinaryHeap::new(),
            next_seq: 0,
            follows: HashMap::new(),
            acks: vec![Default::default(); plan.keys.max(1)],
            seen: HashMap::new(),
            readers_connected: 0,
            failed: None,
            deferred: reader.is_some().then(Vec::new),
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|s| {
        for process in 1..=plan.readers {
            let probe = &probe;
            std::thread::Builder::new()
                .name(format!("probe-reader-{process}"))
                .spawn_scoped(s, move || probe.reader(factory, process))
                .map_err(|e| ProbeError::Failed(format!("consistency probe: {e}")))?;
        }
        match &reader {
            Some((events, at)) => probe.follow_writer(events, at, ready),
            None => probe.writer(factory, ready),
        }
        Ok::<(), ProbeError>(())
    })?;
    let mut shared = probe.shared.into_inner().unwrap_or_else(|e| e.into_inner());
    shared.count_deferred(None);
    if let Some(e) = shared.failed.take() {
        return Err(e);
    }
    let history_error = shared.history.as_mut().and_then(|h| h.finish().err());
    Ok(ProbeOutcome {
        result: shared.tally.result(),
        history_error,
    })
}

/// 64 bits that differ between probes (one per phase), from the standard library's hasher keys.
fn probe_tag() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}
