//! The consistency probe (`--consistency-probe RATE`): beside a phase's workload, on connections of
//! its own, it writes new versions of a few probe keys and reads them back, and counts what
//! scalebench-measure's `consistency` module defines (PBS's t-visibility and k-staleness, YCSB++'s
//! first-visibility lag, Bermbach & Tai's staleness window, two session guarantees).
//!
//! Each probe write updates the next key in turn to its next version, the value naming the version
//! (and this probe, so a value left by an earlier run reads as older than any of this one). After
//! its acknowledgement: the writer's own connection reads it back at once (read-your-writes);
//! reader connections read it once at each delay of the plan (t-visibility); and a chaser reads it
//! until it has returned the write several times in a row for twice as long as the last stale read
//! came after the acknowledgement (the lag and the window), or the horizon passes.
//!
//! Threads, not tasks: the writer and each reader connection have an OS thread and a runtime of
//! their own, so an acknowledgement is timed when its reply arrives (not when a shared runtime gets
//! round to the writer), reads of a binding that blocks its thread (SQLite) run side by side, and
//! reads due within a millisecond wait on a condition variable with a fine timer slack instead of a
//! busy loop. Every operation can go to a history file that an independent checker reads
//! (tools/history-check, docs/consistency.md).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingFactory};
use scalebench_measure::consistency::{ConsistencyResult, FollowUp, ProbeTally};
use scalebench_workload::{FailureClass, FieldSet, OpError};

use crate::StopSignal;

/// What the probe does.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// Probe writes per second.
    pub rate: f64,
    /// Probe keys, written in turn: each is rewritten every `keys / rate` seconds.
    pub keys: usize,
    /// Delays after each acknowledgement at which a reader reads the key, ascending.
    pub delays_ms: Vec<f64>,
    /// How long the chaser reads a write before counting it never seen.
    pub horizon: Duration,
    /// Reader connections (the writer has its own).
    pub readers: usize,
    pub op_timeout: Duration,
    /// JSON Lines of every probe operation (docs/consistency.md).
    pub history: Option<PathBuf>,
    /// Running counts for live metrics, if someone watches.
    pub live: Option<Arc<scalebench_measure::consistency::LiveProbe>>,
}

/// Probe keys by default: several, so a ring's replica sets are all probed, few enough that each
/// is rewritten often (the period k-staleness counts in).
pub const DEFAULT_KEYS: usize = 8;

/// After the phase ends, the follow-ups of the last writes may go on this long; what is not done
/// by then is cut (counted apart). Ctrl-C cuts at once.
pub const DRAIN: Duration = Duration::from_secs(1);

/// When the probe writes, and when it stops.
pub struct ProbeControl {
    /// The phase's measurement start, set once the phase knows it: the probe's writes begin then
    /// (connecting and the warm-up come before).
    pub measuring: Arc<OnceLock<Instant>>,
    /// The measurement window's length, for a phase bound by time: no write after it.
    pub duration: Option<Duration>,
    /// The phase ended: no new write; the follow-ups in flight get [`DRAIN`].
    pub ended: AtomicBool,
    /// The run's stop: a stop requested by a signal (not a planned finish) ends the probe at once.
    pub stop: StopSignal,
}

impl ProbeControl {
    pub fn new(
        measuring: Arc<OnceLock<Instant>>,
        duration: Option<Duration>,
        stop: StopSignal,
    ) -> ProbeControl {
        ProbeControl {
            measuring,
            duration,
            ended: AtomicBool::new(false),
            stop,
        }
    }

    fn interrupted(&self) -> bool {
        self.stop.is_requested() && !self.stop.is_finish()
    }

    /// No new probe write: the phase ended, was stopped, or its window closed.
    fn writes_over(&self, now: Instant) -> bool {
        self.ended.load(Ordering::Relaxed)
            || self.stop.is_requested()
            || matches!(
                (self.measuring.get(), self.duration),
                (Some(start), Some(d)) if now >= *start + d
            )
    }
}

/// One line of the history.
#[derive(serde::Serialize)]
struct HistoryOp {
    process: usize,
    key: String,
    f: &'static str,
    value: Option<u64>,
    invoke_ns: u64,
    complete_ns: Option<u64>,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Why the probe did not run.
#[derive(Debug, Clone, PartialEq)]
pub enum ProbeError {
    /// The rate asked for is more than the probe's writer can do against this database: bad input.
    RateTooHigh(String),
    /// It could not connect, write or record.
    Failed(String),
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::RateTooHigh(s) | ProbeError::Failed(s) => f.write_str(s),
        }
    }
}

impl From<String> for ProbeError {
    fn from(s: String) -> Self {
        ProbeError::Failed(s)
    }
}

/// What the probe's writer tells readers in other client processes (the probe of a run of several
/// clients: YCSB++'s and Bermbach & Tai's readers on other machines), in the order it happened.
/// Times are Unix nanoseconds on the writer's clock; each reader maps them onto its own with the
/// clocks' offsets.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeEvent {
    /// The writer's probe began: the tag its values carry, its time base, and its clock's offset
    /// against the launcher's (this clock - the launcher's, ns).
    Began {
        tag: String,
        base_unix_ns: u64,
        clock_offset_ns: i64,
    },
    /// A write acknowledged at `at_unix_ns`; `write` numbers a measured write, which readers
    /// follow (a key's first version has none).
    Acked {
        key: usize,
        version: u64,
        at_unix_ns: u64,
        write: Option<u64>,
    },
    /// The writer's last write is done.
    Ended,
}

/// Told each [`ProbeEvent`] of a writer whose readers are in other processes too.
pub type ProbeEventSink = Arc<dyn Fn(&ProbeEvent) + Send + Sync>;

/// The probe's part in a run of several clients.
pub enum ProbeRole {
    /// The writer and its readers (a run's only process, or its client 0): each event told to
    /// `tell` (if the run has other clients), with this clock's offset against the launcher's.
    Writer {
        tell: Option<ProbeEventSink>,
        clock_offset_ns: i64,
    },
    /// Readers only (another client of the run): the writer's events from `events`, this clock's
    /// offset against the launcher's mapping the writer's times onto this clock.
    Reader {
        events: std::sync::mpsc::Receiver<ProbeEvent>,
        clock_offset_ns: i64,
    },
}

/// Beyond [`DRAIN`], how long the writer keeps its keys for readers in other processes: their drain
/// begins when the writer's end reaches them, and ends 100 ms after its bound at most.
const REMOTE_DRAIN_MARGIN: Duration = Duration::from_millis(500);

/// How long a reader waits for the writer's probe to begin.
const WRITER_BEGIN_TIMEOUT: Duration = Duration::from_secs(120);

/// What the probe measured, and what went wrong with its history file, if anything (the
/// measurement stands without it).
#[derive(Debug)]
pub struct ProbeOutcome {
    pub result: ConsistencyResult,
    pub history_error: Option<String>,
}

/// The writer is process 0, readers 1..=readers.
const WRITER: usize = 0;

/// Acknowledged versions kept per key (a read begins at most the horizon after its write's).
const ACKS_KEPT: usize = 1024;

/// A chase settles once this many of its reads in a row returned the write.
const SETTLED_READS: u32 = 3;

/// What one reader does next: a scheduled read (an index of the plan's delays) or a chasing read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Read {
    Scheduled(usize),
    Chase,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Job {
    due: Instant,
    /// Ties broken in the order the jobs were made.
    seq: u64,
    write: u64,
    read: Read,
}

/// An acknowledged write being followed.
struct Follow {
    key: usize,
    version: u64,
    ack: Instant,
    scheduled_left: usize,
    chasing: bool,
    /// Starts of the first read that returned the write and of the last that returned an older one.
    first_fresh: Option<Instant>,
    last_stale: Option<Instant>,
    chase_fresh_in_a_row: u32,
}

impl Follow {
    fn saw(&mut self, read: u64, started: Instant) {
        if read >= self.version {
            if self.first_fresh.is_none_or(|t| started < t) {
                self.first_fresh = Some(started);
            }
        } else if self.last_stale.is_none_or(|t| started > t) {
            self.last_stale = Some(started);
        }
    }

    /// The chase may end: the write was returned several times in a row, for at least twice as long
    /// after the acknowledgement as the last stale read came (a replica still lagging would most
    /// likely have been read by then).
    fn settled(&self, now: Instant) -> bool {
        self.chase_fresh_in_a_row >= SETTLED_READS
            && self.last_stale.is_none_or(|stale| {
                now.saturating_duration_since(self.ack)
                    >= 2 * stale.saturating_duration_since(self.ack)
            })
    }

    fn outcome(&self) -> FollowUp {
        let since = |t: Instant| t.saturating_duration_since(self.ack).as_nanos() as u64;
        match (self.first_fresh, self.last_stale) {
            (None, _) => FollowUp::NeverSeen,
            (Some(_), None) => FollowUp::NeverStale,
            (Some(fresh), Some(stale)) => FollowUp::Stale {
                lag_ns: since(fresh),
                window_ns: since(stale),
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    /// Connecting, writing first versions.
    Setup,
    Measuring,
    /// The writer stopped; follow-ups may go on until then.
    Draining(Instant),
    Over,
}

/// Everything the writer and the readers share, under one lock.
struct Shared {
    stage: Stage,
    tally: ProbeTally,
    history: Option<History>,
    jobs: BinaryHeap<Reverse<Job>>,
    next_seq: u64,
    follows: HashMap<u64, Follow>,
    /// Each key's acknowledged versions, oldest first, with when the acknowledgement arrived (the
    /// last [`ACKS_KEPT`]): "the newest version acknowledged when a read began" from them, as the
    /// history's checker decides it.
    acks: Vec<std::collections::VecDeque<(u64, Instant)>>,
    /// (process, key) -> the newest version that process saw of that key.
    seen: HashMap<(usize, usize), u64>,
    readers_connected: usize,
    failed: Option<ProbeError>,
    /// Readers of another process than the writer's: reads counted once every acknowledgement
    /// up to their start has been relayed (the writer's acknowledgements are in order, so all of
    /// those up to the newest relayed one are known), as (process, key, version read, start).
    deferred: Option<Vec<(usize, usize, u64, Instant)>>,
}

impl Shared {
    fn push(&mut self, due: Instant, write: u64, read: Read) {
        self.next_seq += 1;
        self.jobs.push(Reverse(Job {
            due,
            seq: self.next_seq,
            write,
            read,
        }));
    }

    /// The newest version of `key` acknowledged at `instant`.
    fn newest_at(&self, key: usize, instant: Instant) -> u64 {
        self.acks[key]
            .iter()
            .rev()
            .find(|(_, ack)| *ack <= instant)
            .map_or(0, |(version, _)| *version)
    }

    /// A completed read by `process` of `key` that began at `started`: counted (stale against the
    /// newest version acknowledged then), and checked for monotonic reads; by a reader of another
    /// process, once the acknowledgements up to its start are known.
    fn read(&mut self, process: usize, key: usize, read: u64, started: Instant) {
        match &mut self.deferred {
            Some(waiting) => waiting.push((process, key, read, started)),
            None => self.count_read(process, key, read, started),
        }
    }

    /// Counts the deferred reads that began by `known` (every one with `None`).
    fn count_deferred(&mut self, known: Option<Instant>) {
        let Some(waiting) = self.deferred.take() else {
            return;
        };
        let (now, later): (Vec<_>, Vec<_>) = waiting
            .into_iter()
            .partition(|(_, _, _, started)| known.is_none_or(|k| *started <= k));
        for (process, key, read, started) in now {
            self.count_read(process, key, read, started);
        }
        self.deferred = Some(later);
    }

    fn count_read(&mut self, process: usize, key: usize, read: u64, started: Instant) {
        let newest = self.newest_at(key, started);
        self.tally.read(read, newest);
        let newest_seen = self.seen.entry((process, key)).or_insert(0);
        self.tally.monotonic_read(read < *newest_seen);
        *newest_seen = (*newest_seen).max(read);
    }

    /// Follows write `written` (`version` of `key`, acknowledged at `ack`): a read at each delay
    /// after it (but the first, when the writer's thread reads it at once) and the chaser.
    fn follow(
        &mut self,
        written: u64,
        key: usize,
        version: u64,
        ack: Instant,
        delays_ms: &[f64],
        first_read_at_once: bool,
    ) {
        self.follows.insert(
            written,
            Follow {
                key,
                version,
                ack,
                scheduled_left: delays_ms.len(),
                chasing: true,
                first_fresh: None,
                last_stale: None,
                chase_fresh_in_a_row: 0,
            },
        );
        for (i, d) in delays_ms.iter().enumerate() {
            if i == 0 && first_read_at_once {
                continue;
            }
            self.push(
                ack + Duration::from_secs_f64(d / 1000.0),
                written,
                Read::Scheduled(i),
            );
        }
        self.push(ack, written, Read::Chase);
    }

    fn finish_if_done(&mut self, write: u64) {
        if let Some(f) = self.follows.get(&write) {
            if f.scheduled_left == 0 && !f.chasing {
                let outcome = f.outcome();
                self.follows.remove(&write);
                self.tally.followed(outcome);
            }
        }
    }

    /// The phase's end cut what is left: missing scheduled reads counted missed, their writes cut.
    fn cut(&mut self) {
        for Reverse(job) in std::mem::take(&mut self.jobs) {
            if let Read::Scheduled(delay) = job.read {
                self.tally.missed(delay);
            }
        }
        for _ in self.follows.drain() {
            self.tally.followed(FollowUp::Cut);
        }
        self.stage = Stage::Over;
    }
}

struct Probe<'a> {
    plan: &'a ProbePlan,
    control: &'a ProbeControl,
    base: Instant,
    /// `base` as Unix ns on this clock (the writer's: on its clock).
    base_unix_ns: u64,
    /// Distinguishes this probe's values from those an earlier run left.
    tag: String,
    shared: Mutex<Shared>,
    changed: Condvar,
    /// Readers in other processes: told every event.
    tell: Option<ProbeEventSink>,
}

impl Probe<'_> {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    fn unix_ns(&self, t: Instant) -> u64 {
        self.base_unix_ns + self.ns(t)
    }

    fn tell(&self, event: &ProbeEvent) {
        if let Some(tell) = &self.tell {
            tell(event);
        }
    }

    fn value(&self, version: u64) -> String {
        format!("{}:{version}", self.tag)
    }

    /// The version a read value names (0: absent, or written by another probe).
    fn version(&self, value: Option<&str>) -> u64 {
        value
            .and_then(|v| v.strip_prefix(self.tag.as_str()))
            .and_then(|v| v.strip_prefix(':'))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    fn record(&self, shared: &mut Shared, op: HistoryOp) {
        if let Some(h) = &mut shared.history {
            h.push(&op);
        }
    }

    /// Writes `version` of `key`; when acknowledged, the instant the reply arrived.
    async fn write<B: Binding>(
        &self,
        b: &mut B,
        key: usize,
        version: u64,
        first: bool,
    ) -> Option<Instant> {
        let name = key_name(key);
        let values = vec![(0, self.value(version))];
        let invoke = Instant::now();
        let mut outcome = self
            .bounded(async {
                if first {
                    b.insert(&name, &values).await
                } else {
                    b.update(&name, &values).await
                }
            })
            .await;
        if first && matches!(&outcome, Err(e) if e.class == FailureClass::Conflict) {
            // Left by an earlier run: this run's first version overwrites it.
            outcome = self.bounded(b.update(&name, &values)).await;
        }
        // Taken under the lock: a reader that begins a read after it finds the acknowledgement
        // recorded when it counts that read (microseconds later than the reply at most).
        let mut shared = self.lock();
        let complete = Instant::now();
        if outcome.is_ok() {
            let acks = &mut shared.acks[key];
            if acks.len() == ACKS_KEPT {
                acks.pop_front();
            }
            acks.push_back((version, complete));
        }
        self.record(
            &mut shared,
            HistoryOp {
                process: WRITER,
                key: name,
                f: "write",
                value: Some(version),
                invoke_ns: self.ns(invoke),
                complete_ns: outcome.is_ok().then(|| self.ns(complete)),
                ok: outcome.is_ok(),
                error: outcome.as_ref().err().map(|e| e.message.clone()),
            },
        );
        outcome.ok().map(|()| complete)
    }

    /// Reads `key` as `process`: the version read (or `None` if the read failed) and its start.
    async fn read<B: Binding>(
        &self,
        b: &mut B,
        process: usize,
        key: usize,
    ) -> (Option<u64>, Instant, Instant) {
        let name = key_name(key);
        let mut fields = Vec::new();
        let invoke = Instant::now();
        let outcome = match self
            .bounded(b.read(&name, FieldSet::One(0), &mut fields))
            .await
        {
            Err(e) if e.class == FailureClass::NotFound => Ok(0),
            Err(e) => Err(e),
            Ok(()) => Ok(self.version(
                fields
                    .iter()
                    .find(|(i, _)| *i == 0)
                    .map(|(_, v)| v.as_str()),
            )),
        };
        let complete = Instant::now();
        let mut shared = self.lock();
        self.record(
            &mut shared,
            HistoryOp {
                process,
                key: name,
                f: "read",
                value: outcome.as_ref().ok().copied(),
                invoke_ns: self.ns(invoke),
                complete_ns: outcome.is_ok().then(|| self.ns(complete)),
                ok: outcome.is_ok(),
                error: outcome.as_ref().err().map(|e| e.message.clone()),
            },
        );
        (outcome.ok(), invoke, complete)
    }

    async fn bounded(
        &self,
        op: impl std::future::Future<Output = Result<(), OpError>>,
    ) -> Result<(), OpError> {
        // A binding that blocks its thread (SQLite) cannot be cut short by the runtime: it honours
        // the published deadline instead, as it does for the executor's calls.
        scalebench_binding::deadline::set_call_deadline(Some(
            Instant::now() + self.plan.op_timeout,
        ));
        let outcome = match tokio::time::timeout(self.plan.op_timeout, op).await {
            Ok(r) => r,
            Err(_) => Err(OpError::new(
                FailureClass::Timeout,
                "probe operation timed out",
            )),
        };
        scalebench_binding::deadline::set_call_deadline(None);
        outcome
    }

    /// The bound below which a read scheduled at delay `i` kept it: the next delay of the plan (the
    /// last: twice itself, at least 1 ms more).
    fn kept_before(&self, i: usize) -> Duration {
        let ms = match self.plan.delays_ms.get(i + 1) {
            Some(next) => *next,
            None => self.plan.delays_ms[i] + self.plan.delays_ms[i].max(1.0),
        };
        Duration::from_secs_f64(ms / 1000.0)
    }

    /// A reader's next job, once due, with its write's key. `None`: the reader is done.
    fn next_job(&self) -> Option<(Job, usize)> {
        let mut shared = self.lock();
        loop {
            if self.control.interrupted() {
                shared.cut();
                self.changed.notify_all();
            }
            let now = Instant::now();
            match shared.stage {
                Stage::Over => return None,
                Stage::Draining(until) if now >= until => {
                    shared.cut();
                    self.changed.notify_all();
                    return None;
                }
                Stage::Draining(_) if shared.follows.is_empty() => {
                    shared.stage = Stage::Over;
                    self.changed.notify_all();
                    return None;
                }
                _ => {}
            }
            let wait = match shared.jobs.peek() {
                Some(Reverse(job)) if job.due <= now => {
                    let Reverse(job) = shared.jobs.pop().expect("peeked");
                    let Some(f) = shared.follows.get(&job.write) else {
                        continue;
                    };
                    let key = f.key;
                    return Some((job, key));
                }
                Some(Reverse(job)) => job.due - now,
                None => Duration::from_millis(50),
            };
            // Woken by a new job or a change of stage; never asleep past a stop for long.
            shared = self
                .changed
                .wait_timeout(shared, wait.min(Duration::from_millis(50)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// What a reader's read of `job` showed.
    fn reader_saw(
        &self,
        process: usize,
        job: &Job,
        key: usize,
        (read, started, _complete): (Option<u64>, Instant, Instant),
    ) {
        let mut shared = self.lock();
        match read {
            Some(version) => shared.read(process, key, version, started),
            None => shared.tally.failed_read(),
        }
        let chase_next;
        {
            let Some(f) = shared.follows.get_mut(&job.write) else {
                // Cut while the read was in flight: counted as a read, nothing more.
                return;
            };
            if let Some(version) = read {
                f.saw(version, started);
            }
            let since = started.saturating_duration_since(f.ack);
            match job.read {
                Read::Scheduled(delay) => {
                    f.scheduled_left -= 1;
                    let kept = read.filter(|_| since < self.kept_before(delay));
                    let returned = kept.map(|v| v >= f.version);
                    chase_next = None;
                    match returned {
                        Some(returned) => shared.tally.scheduled(delay, returned),
                        None => shared.tally.missed(delay),
                    }
                }
                Read::Chase => {
                    match read {
                        Some(v) if v >= f.version => f.chase_fresh_in_a_row += 1,
                        _ => f.chase_fresh_in_a_row = 0,
                    }
                    let now = Instant::now();
                    let over = now.saturating_duration_since(f.ack) > self.plan.horizon
                        || (f.first_fresh.is_some() && f.settled(now));
                    if over {
                        f.chasing = false;
                        chase_next = None;
                    } else {
                        // A read every 0.1 ms for the first 2 ms, then one a millisecond: the
                        // resolution of the lag and the window. A failed read (a refused connection
                        // fails at once) waits a millisecond.
                        let step = if read.is_some() && since < Duration::from_millis(2) {
                            Duration::from_micros(100)
                        } else {
                            Duration::from_millis(1)
                        };
                        chase_next = Some(started + step);
                    }
                }
            }
        }
        if let Some(due) = chase_next {
            shared.push(due, job.write, Read::Chase);
            self.changed.notify_one();
        }
        shared.finish_if_done(job.write);
        if shared.follows.is_empty() {
            self.changed.notify_all();
        }
    }

    /// One reader connection's thread: reads what falls due until the probe is over.
    fn reader<F: BindingFactory>(&self, factory: &F, process: usize) {
        set_fine_timer_slack();
        let Some(runtime) = self.runtime() else {
            return;
        };
        let connected = runtime.block_on(factory.connect(process));
        let mut b = match connected {
            Ok(b) => {
                self.lock().readers_connected += 1;
                self.changed.notify_all();
                b
            }
            Err(e) => {
                self.fail(ProbeError::Failed(format!(
                    "consistency probe: cannot connect: {e}"
                )));
                return;
            }
        };
        while let Some((job, key)) = self.next_job() {
            let seen = runtime.block_on(self.read(&mut b, process, key));
            self.reader_saw(process, &job, key, seen);
        }
        let _ = runtime.block_on(b.cleanup());
    }

    fn runtime(&self) -> Option<tokio::runtime::Runtime> {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => Some(r),
            Err(e) => {
                self.fail(ProbeError::Failed(format!("consistency probe: {e}")));
                None
            }
        }
    }

    fn fail(&self, why: ProbeError) {
        let mut shared = self.lock();
        shared.failed.get_or_insert(why);
        shared.stage = Stage::Over;
        self.changed.notify_all();
    }

    /// Waits (watching the stop) until every reader connected: false if the probe failed or was
    /// stopped first.
    fn await_readers(&self) -> bool {
        let mut shared = self.lock();
        loop {
            if shared.failed.is_some() || shared.stage == Stage::Over {
                return false;
            }
            if shared.readers_connected == self.plan.readers {
                return true;
            }
            if self.control.stop.is_requested() || self.control.ended.load(Ordering::Relaxed) {
                shared.failed.get_or_insert(ProbeError::Failed(
                    "the phase ended before the consistency probe began".into(),
                ));
                shared.stage = Stage::Over;
                self.changed.notify_all();
                return false;
            }
            shared = self
                .changed
                .wait_timeout(shared, Duration::from_millis(20))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The writer's thread: first versions, the rate check, `ready`, the measured writes, then the
    /// drain (readers finish the follow-ups) and the keys removed.
    fn writer<F: BindingFactory>(&self, factory: &F, ready: &(dyn Fn() + Sync)) {
        let Some(runtime) = self.runtime() else {
            return;
        };
        let mut writer = match runtime.block_on(factory.connect(WRITER)) {
            Ok(b) => b,
            Err(e) => {
                return self.fail(ProbeError::Failed(format!(
                    "consistency probe: cannot connect: {e}"
                )))
            }
        };
        // The reads at a delay of 0 go through a connection of the writer's thread, issued as soon
        // as the acknowledgement arrives: a reader thread woken for them would start them tens of
        // microseconds late, past the next delay.
        let immediate_process = self.plan.readers + 1;
        let mut immediate = match self.plan.delays_ms.first() {
            Some(d) if *d == 0.0 => match runtime.block_on(factory.connect(immediate_process)) {
                Ok(b) => Some(b),
                Err(e) => {
                    return self.fail(ProbeError::Failed(format!(
                        "consistency probe: cannot connect: {e}"
                    )))
                }
            },
            _ => None,
        };
        let keys = self.plan.keys;
        let mut versions = vec![0u64; keys];
        let written = self.first_versions(&runtime, &mut writer, &mut versions);
        if let Err(e) = written {
            runtime.block_on(self.remove_keys(&mut writer));
            return self.fail(e);
        }
        if !self.await_readers() {
            runtime.block_on(self.remove_keys(&mut writer));
            return;
        }
        ready();
        let at_once = immediate.as_mut().map(|b| (immediate_process, b));
        self.measured_writes(&runtime, &mut writer, at_once, &mut versions);
        self.tell(&ProbeEvent::Ended);
        let ended = Instant::now();
        self.drain();
        if self.tell.is_some() {
            // Readers in other processes follow the last writes for their own drain: the keys
            // stay until they are done (a read of a removed key would count as stale).
            let until = ended + DRAIN + REMOTE_DRAIN_MARGIN;
            while Instant::now() < until && !self.control.interrupted() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if !self.control.interrupted() {
            runtime.block_on(self.remove_keys(&mut writer));
        }
        let _ = runtime.block_on(writer.cleanup());
        if let Some(mut b) = immediate {
            let _ = runtime.block_on(b.cleanup());
        }
    }

    /// The writes are over: the follow-ups in flight end within [`DRAIN`] (the readers end it; a
    /// probe whose readers are all gone ends it here).
    fn drain(&self) {
        let mut shared = self.lock();
        if matches!(shared.stage, Stage::Measuring | Stage::Setup) {
            shared.stage = Stage::Draining(Instant::now() + DRAIN);
        }
        self.changed.notify_all();
        while shared.stage != Stage::Over {
            shared = self
                .changed
                .wait_timeout(shared, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if let Stage::Draining(until) = shared.stage {
                if Instant::now() >= until + Duration::from_millis(100)
                    || self.control.interrupted()
                {
                    shared.cut();
                }
            }
        }
    }

    /// A reader process's main thread: the writer's events, relayed, as its own writer thread
    /// would publish them (each acknowledged write followed at every delay and chased), the
    /// acknowledgement times mapped onto this clock by `at`; then the drain.
    fn follow_writer(
        &self,
        events: &std::sync::mpsc::Receiver<ProbeEvent>,
        at: &dyn Fn(u64) -> Instant,
        ready: &(dyn Fn() + Sync),
    ) {
        if !self.await_readers() {
            return;
        }
        ready();
        loop {
            if self.control.interrupted() || self.lock().stage == Stage::Over {
                break;
            }
            if self.control.ended.load(Ordering::Relaxed) {
                // This client's phase ended: the writer's ends with it.
                break;
            }
            match events.recv_timeout(Duration::from_millis(50)) {
                Ok(ProbeEvent::Acked {
                    key,
                    version,
                    at_unix_ns,
                    write,
                }) if key < self.plan.keys => {
                    let ack = at(at_unix_ns);
                    let mut shared = self.lock();
                    let acks = &mut shared.acks[key];
                    if acks.len() == ACKS_KEPT {
                        acks.pop_front();
                    }
                    acks.push_back((version, ack));
                    shared.count_deferred(Some(ack));
                    let Some(written) = write else { continue };
                    if shared.stage == Stage::Setup {
                        shared.stage = Stage::Measuring;
                    }
                    shared.tally.planned(1);
                    shared.tally.write(true);
                    shared.follow(written, key, version, ack, &self.plan.delays_ms, false);
                    self.changed.notify_all();
                }
                Ok(ProbeEvent::Ended) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    break
                }
                Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            }
        }
        self.drain();
    }

    /// Every key's first version (not counted), then more writes until enough are timed: a rate
    /// beyond what the writer alone can do here is refused before anything is measured.
    fn first_versions<B: Binding>(
        &self,
        runtime: &tokio::runtime::Runtime,
        writer: &mut B,
        versions: &mut [u64],
    ) -> Result<(), ProbeError> {
        // The first write of a connection may prepare statements or warm it up: not timed.
        const TIMED_WRITES: usize = 16;
        let keys = versions.len();
        let mut times = Vec::with_capacity(TIMED_WRITES);
        for n in 0..=TIMED_WRITES.max(keys - 1) {
            if self.control.stop.is_requested() || self.control.ended.load(Ordering::Relaxed) {
                return Err(ProbeError::Failed(
                    "the phase ended before the consistency probe began".into(),
                ));
            }
            let key = n % keys;
            versions[key] += 1;
            let started = Instant::now();
            let Some(done) =
                runtime.block_on(self.write(writer, key, versions[key], versions[key] == 1))
            else {
                return Err(ProbeError::Failed(format!(
                    "consistency probe: cannot write {}",
                    key_name(key)
                )));
            };
            self.tell(&ProbeEvent::Acked {
                key,
                version: versions[key],
                at_unix_ns: self.unix_ns(done),
                write: None,
            });
            if n > 0 && times.len() < TIMED_WRITES {
                times.push((done - started).as_secs_f64());
                if times.len() == TIMED_WRITES {
                    if let Some(e) = rate_beyond_writer(self.plan.rate, &mut times) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// The measured writes, one per slot of the rate from the measurement start until the phase's
    /// window closes; slots the writer could not keep are counted as planned, not made up for.
    fn measured_writes<B: Binding>(
        &self,
        runtime: &tokio::runtime::Runtime,
        writer: &mut B,
        mut immediate: Option<(usize, &mut B)>,
        versions: &mut [u64],
    ) {
        let start = loop {
            if let Some(t) = self.control.measuring.get() {
                break *t;
            }
            if self.control.writes_over(Instant::now()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        self.lock().stage = Stage::Measuring;
        let interval = Duration::from_secs_f64(1.0 / self.plan.rate);
        let mut next = start.max(Instant::now());
        let mut written: u64 = 0;
        loop {
            // Sleeps to the slot in short steps, watching the stop.
            loop {
                let now = Instant::now();
                if self.control.writes_over(now) {
                    return;
                }
                if now >= next {
                    break;
                }
                std::thread::sleep((next - now).min(Duration::from_millis(20)));
            }
            let late = Instant::now().saturating_duration_since(next);
            let skipped = (late.as_secs_f64() / interval.as_secs_f64()).floor() as u64;
            next += interval * (skipped as u32 + 1);
            self.lock().tally.planned(skipped + 1);
            let key = (written % versions.len() as u64) as usize;
            written += 1;
            versions[key] += 1;
            let version = versions[key];
            let acked = runtime.block_on(self.write(writer, key, version, false));
            let reads_at_once = immediate.is_some();
            let publish = async {
                let mut shared = self.lock();
                shared.tally.write(acked.is_some());
                let Some(ack) = acked else { return };
                self.tell(&ProbeEvent::Acked {
                    key,
                    version,
                    at_unix_ns: self.unix_ns(ack),
                    write: Some(written),
                });
                shared.follow(
                    written,
                    key,
                    version,
                    ack,
                    &self.plan.delays_ms,
                    reads_at_once,
                );
                self.changed.notify_all();
            };
            match (acked, immediate.as_mut()) {
                (Some(ack), Some((process, b))) => {
                    // The read at 0 ms first: it is sent (or, on a binding that blocks its thread,
                    // done) before the readers are told of the write.
                    let (seen, ()) = runtime.block_on(futures::future::join(
                        self.read(&mut **b, *process, key),
                        publish,
                    ));
                    let job = Job {
                        due: ack,
                        seq: 0,
                        write: written,
                        read: Read::Scheduled(0),
                    };
                    self.reader_saw(*process, &job, key, seen);
                }
                _ => runtime.block_on(publish),
            }
            if acked.is_some() {
                // Read-your-writes: the writer's own connection, right after the readers began.
                let (read, started, _) = runtime.block_on(self.read(writer, WRITER, key));
                let mut shared = self.lock();
                match read {
                    Some(read) => {
                        shared.read(WRITER, key, read, started);
                        shared.tally.read_your_write(read < version);
                    }
                    None => shared.tally.failed_read(),
                }
            }
        }
    }

    /// Deletes the probe's keys: the table as the probe found it, so later phases count, measure
    /// and scan only the workload's records. Not in the history (the checker's operations end with
    /// the probe). A database that stopped answering keeps them after the first delete that times
    /// out; Ctrl-C ends it.
    async fn remove_keys<B: Binding>(&self, writer: &mut B) {
        for key in 0..self.plan.keys {
            if self.control.interrupted() {
                return;
            }
            if let Err(e) = self.bounded(writer.delete(&key_name(key))).await {
                if matches!(e.class, FailureClass::Timeout | FailureClass::Unavailable) {
                    return;
                }
            }
        }
    }
}

/// Reader threads wait on a condition variable for reads due a fraction of a millisecond ahead:
/// with Linux's default timer slack (50 us) such a wait would oversleep by that much.
fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects the calling thread only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000u64);
    }
}

fn key_name(key: usize) -> String {
    format!("scalebench-probe-{key:05}")
}

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

/// After the timed first writes: bad input if the rate asked for is more than twice what the
/// writer can do even without its read-your-writes reads, at the writes' median time (a gross
/// mistake, not a slow moment: a group commit of 50 ms still allows 20 writes a second, and a
/// rate a little beyond a busy machine's runs, its shortfall reported as falling behind).
fn rate_beyond_writer(rate: f64, times: &mut [f64]) -> Option<ProbeError> {
    if times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    let per_write = times[times.len() / 2];
    let most = 1.0 / per_write;
    (rate > 2.0 * most).then(|| {
        ProbeError::RateTooHigh(format!(
            "invalid --consistency-probe '{rate}': a probe write takes {:.2} ms on this database, so the probe can write at most about {:.0} times a second here (fewer, as its writer reads each one back)",
            per_write * 1000.0,
            most.floor()
        ))
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

/// The history file, written as the probe goes (a long run's history need not fit in memory) to a
/// temporary file of a random name beside it (created exclusively: nothing planted there is
/// followed), renamed into place when complete: never a half-written history, and never written
/// over something that is not a regular file (checked again before the rename).
struct History {
    path: PathBuf,
    out: Option<std::io::BufWriter<scalebench_measure::files::AtomicFile>>,
    error: Option<String>,
    written: u64,
}

/// A history larger than this is not written (10,000 probe writes a second filled 458 MB in 5 s):
/// a checker needs a whole history, so it is dropped, with a warning, rather than cut.
pub const MAX_HISTORY_BYTES: u64 = 1 << 30;

/// A process of client `i` of a run is `i * CLIENT_PROCESSES + p` in the merged history.
pub const CLIENT_PROCESSES: usize = 1000;

/// Merges the histories of a run's clients (client i's at `parts[i]`, absent if it has none) into
/// one at `out`, on the writer's time base (each reader's was written on it): a process of client
/// i is numbered `i * CLIENT_PROCESSES + p`. Written as a history is, complete or not at all.
/// Returns the operations merged.
pub fn merge_histories(
    parts: &[Option<std::path::PathBuf>],
    out: &std::path::Path,
) -> Result<u64, String> {
    use std::io::{BufRead, Write};
    let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", out.display());
    scalebench_measure::files::check_output(out).map_err(|e| fail(&e))?;
    let file = scalebench_measure::files::AtomicFile::create(out, 0o666)?;
    let mut w = std::io::BufWriter::new(file);
    let (mut ops, mut written) = (0u64, 0u64);
    for (client, part) in parts.iter().enumerate() {
        let Some(part) = part else { continue };
        let reader =
            std::fs::File::open(part).map_err(|e| format!("--history {}: {e}", part.display()))?;
        for line in std::io::BufReader::new(reader).lines() {
            let line = line.map_err(|e| format!("--history {}: {e}", part.display()))?;
            let mut op: serde_json::Value = serde_json::from_str(&line)
                .map_err(|e| format!("--history {}: {e}", part.display()))?;
            let process = op["process"].as_u64().unwrap_or(0);
            op["process"] = (process + (client * CLIENT_PROCESSES) as u64).into();
            let text = op.to_string();
            written += text.len() as u64 + 1;
            if written > MAX_HISTORY_BYTES {
                return Err(fail(&format!(
                    "more than {} MiB of merged history",
                    MAX_HISTORY_BYTES >> 20
                )));
            }
            writeln!(w, "{text}").map_err(|e| fail(&e))?;
            ops += 1;
        }
    }
    let file = w.into_inner().map_err(|e| fail(&e.error()))?;
    file.commit().map_err(|e| fail(&e))?;
    Ok(ops)
}

impl History {
    fn create(path: &std::path::Path) -> Result<History, String> {
        let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", path.display());
        scalebench_measure::files::check_output(path).map_err(|e| fail(&e))?;
        let file = scalebench_measure::files::AtomicFile::create(path, 0o666)?;
        Ok(History {
            path: path.to_path_buf(),
            out: Some(std::io::BufWriter::new(file)),
            error: None,
            written: 0,
        })
    }

    fn push(&mut self, op: &HistoryOp) {
        use std::io::Write;
        if let Some(out) = &mut self.out {
            let line = serde_json::to_string(op).expect("a history line serializes");
            self.written += line.len() as u64 + 1;
            if self.written > MAX_HISTORY_BYTES {
                self.error = Some(format!(
                    "--history {}: more than {} MiB of history (lower the probe's rate)",
                    self.path.display(),
                    MAX_HISTORY_BYTES >> 20
                ));
                self.out = None;
            } else if let Err(e) = writeln!(out, "{line}") {
                self.error = Some(format!("--history {}: {e}", self.path.display()));
                self.out = None;
            }
        }
    }

    /// Renames the complete history into place; the temporary file goes however this ends.
    fn finish(&mut self) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| format!("--history {}: {e}", self.path.display());
        match (self.out.take(), self.error.take()) {
            (_, Some(e)) => Err(e),
            (None, None) => Ok(()),
            (Some(out), None) => {
                let file = out.into_inner().map_err(|e| fail(&e.error()))?;
                file.commit().map_err(|e| fail(&e))
            }
        }
    }
}
