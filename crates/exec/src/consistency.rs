//! The consistency probe (`--consistency-probe RATE`): beside a phase's workload, on connections of
//! its own, it writes new versions of a few probe keys and reads them back (PBS's t-visibility,
//! Bailis et al., VLDB 2012; the staleness window of Bermbach & Tai; YCSB++'s writer/reader lag).
//!
//! Each probe write updates one key to its next version, the value naming the version (and this
//! probe, so a value left by an earlier run reads as older than any of this one). After its
//! acknowledgement: the writer's own connection reads it back at once (read-your-writes); reader
//! connections read it at each delay of the plan (t-visibility); and a chaser reads it until it
//! returns the write or the horizon passes (the staleness window). A key has one write in flight at
//! a time, so "the newest version acknowledged when the read began" is the version just written.
//! Every operation can go to a history file that an independent checker reads
//! (tools/history-check, docs/consistency.md).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingFactory};
use scalebench_measure::consistency::{ConsistencyResult, ProbeTally};
use scalebench_workload::{FailureClass, FieldSet, OpError};

/// What the probe does.
#[derive(Debug, Clone)]
pub struct ProbePlan {
    /// Probe writes per second.
    pub rate: f64,
    /// Delays after each acknowledgement at which a reader reads the key, ascending.
    pub delays_ms: Vec<f64>,
    /// How long the chaser reads a write before counting it never seen.
    pub horizon: Duration,
    /// Reader connections (the writer has its own).
    pub readers: usize,
    /// Writes start this long after the probe connects (the workload's warm-up).
    pub start_after: Duration,
    pub op_timeout: Duration,
    /// JSON Lines of every probe operation (docs/consistency.md).
    pub history: Option<PathBuf>,
    /// Running counts for live metrics, if someone watches.
    pub live: Option<std::sync::Arc<scalebench_measure::consistency::LiveProbe>>,
}

impl ProbePlan {
    /// Keys enough for `rate` writes per second when each key is busy for up to the horizon.
    fn keys(&self) -> usize {
        let busy = self.horizon.as_secs_f64() + 0.05;
        ((self.rate * busy).ceil() as usize + 2).clamp(2, 10_000)
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
    /// It could not connect, write or record (the run goes on without a consistency section).
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

/// The writer is process 0, readers 1..=readers.
const WRITER: usize = 0;

struct Probe {
    base: Instant,
    /// Distinguishes this probe's values from those an earlier run left.
    tag: String,
    timeout: Duration,
    tally: RefCell<ProbeTally>,
    history: Option<RefCell<History>>,
    /// (reader, key) -> the newest version that reader saw of that key.
    seen: RefCell<HashMap<(usize, usize), u64>>,
}

impl Probe {
    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
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

    fn record(&self, op: HistoryOp) {
        if let Some(h) = &self.history {
            h.borrow_mut().push(&op);
        }
    }

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
        let complete = Instant::now();
        self.record(HistoryOp {
            process: WRITER,
            key: name,
            f: "write",
            value: Some(version),
            invoke_ns: self.ns(invoke),
            complete_ns: outcome.is_ok().then(|| self.ns(complete)),
            ok: outcome.is_ok(),
            error: outcome.as_ref().err().map(|e| e.message.clone()),
        });
        outcome.ok().map(|()| complete)
    }

    /// Reads `key` as `process`: the version read and when the read started, or `None` if it failed.
    async fn read<B: Binding>(
        &self,
        b: &mut B,
        process: usize,
        key: usize,
    ) -> Option<(u64, Instant)> {
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
        self.record(HistoryOp {
            process,
            key: name,
            f: "read",
            value: outcome.as_ref().ok().copied(),
            invoke_ns: self.ns(invoke),
            complete_ns: outcome.is_ok().then(|| self.ns(complete)),
            ok: outcome.is_ok(),
            error: outcome.as_ref().err().map(|e| e.message.clone()),
        });
        match outcome {
            Ok(version) => {
                let mut seen = self.seen.borrow_mut();
                let newest_seen = seen.entry((process, key)).or_insert(0);
                self.tally
                    .borrow_mut()
                    .monotonic_read(version < *newest_seen);
                *newest_seen = (*newest_seen).max(version);
                Some((version, invoke))
            }
            Err(_) => {
                self.tally.borrow_mut().failed_read();
                None
            }
        }
    }

    async fn bounded(
        &self,
        op: impl std::future::Future<Output = Result<(), OpError>>,
    ) -> Result<(), OpError> {
        // A binding that blocks its thread (SQLite) cannot be cut short by the runtime: it honours
        // the published deadline instead, as it does for the executor's calls.
        scalebench_binding::deadline::set_call_deadline(Some(Instant::now() + self.timeout));
        let outcome = match tokio::time::timeout(self.timeout, op).await {
            Ok(r) => r,
            Err(_) => Err(OpError::new(
                FailureClass::Timeout,
                "probe operation timed out",
            )),
        };
        scalebench_binding::deadline::set_call_deadline(None);
        outcome
    }
}

fn key_name(key: usize) -> String {
    format!("scalebench-probe-{key:05}")
}

/// Reader connections shared by the scheduled reads and the chasers of every key.
struct Readers<B> {
    idle: RefCell<Vec<(usize, B)>>,
    free: tokio::sync::Semaphore,
}

impl<B: Binding> Readers<B> {
    async fn read(&self, probe: &Probe, key: usize) -> Option<(u64, Instant)> {
        let _permit = self.free.acquire().await.ok()?;
        let (process, mut b) = self.idle.borrow_mut().pop()?;
        let read = probe.read(&mut b, process, key).await;
        self.idle.borrow_mut().push((process, b));
        read
    }
}

/// What the probe measured, and what went wrong with its history file, if anything (the
/// measurement stands without it).
#[derive(Debug)]
pub struct ProbeOutcome {
    pub result: ConsistencyResult,
    pub history_error: Option<String>,
}

/// Runs the probe until `stop` is set, then lets the keys in flight finish (within the horizon).
/// `ready` is called once its connections are open and every key holds its first version: a phase
/// started then is measured by the probe from its first second (connecting a dozen sessions to a
/// cluster can take longer than a short phase).
pub fn run_probe<F: BindingFactory>(
    factory: &F,
    plan: &ProbePlan,
    stop: &AtomicBool,
    ready: &dyn Fn(),
) -> Result<ProbeOutcome, ProbeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("consistency probe: {e}"))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let connect = |i| async move {
            factory
                .connect(i)
                .await
                .map_err(|e| format!("consistency probe: cannot connect: {e}"))
        };
        let mut writer = connect(0).await?;
        let mut idle = Vec::new();
        for i in 1..=plan.readers {
            idle.push((i, connect(i).await?));
        }
        let readers = Rc::new(Readers {
            idle: RefCell::new(idle),
            free: tokio::sync::Semaphore::new(plan.readers),
        });
        let probe = Rc::new(Probe {
            base: Instant::now(),
            tag: format!("p{:x}", probe_tag()),
            timeout: plan.op_timeout,
            tally: RefCell::new(
                ProbeTally::new(
                    plan.rate,
                    &plan.delays_ms,
                    plan.horizon.as_secs_f64() * 1000.0,
                )
                .with_live(plan.live.clone()),
            ),
            history: match &plan.history {
                Some(path) => Some(RefCell::new(History::create(path)?)),
                None => None,
            },
            seen: RefCell::new(HashMap::new()),
        });
        // Every key at version 1 before the first measured write (not counted).
        let keys = plan.keys();
        let mut versions = vec![1u64; keys];
        // The writer writes and then reads its own write, one after the other: a rate beyond what
        // two such operations allow (timed on the first writes, before any load) could only be
        // missed, and its figures would belong to another rate.
        // The median write of the first ones after the very first (which may prepare statements or
        // warm a connection up).
        const TIMED_WRITES: usize = 32;
        let mut times = Vec::with_capacity(TIMED_WRITES);
        for key in 0..keys {
            let failed = if stop.load(Ordering::Relaxed) {
                Some(ProbeError::Failed(
                    "the phase ended before the consistency probe began".into(),
                ))
            } else {
                let started = Instant::now();
                match probe.write(&mut writer, key, 1, true).await {
                    None => Some(ProbeError::Failed(format!(
                        "consistency probe: cannot write {}",
                        key_name(key)
                    ))),
                    Some(done) => {
                        if key > 0 {
                            times.push((done - started).as_secs_f64());
                        }
                        rate_beyond_writer(plan.rate, &mut times, key + 1 == TIMED_WRITES.min(keys))
                    }
                }
            };
            if let Some(e) = failed {
                remove_keys(&probe, &mut writer, key + 1).await;
                return Err(e);
            }
        }
        ready();
        let free: Rc<RefCell<VecDeque<usize>>> = Rc::new(RefCell::new((0..keys).collect()));
        let returned = Rc::new(tokio::sync::Notify::new());
        let mut in_flight = Vec::new();
        // The warm-up, ended early by the phase's end (a phase that failed at once).
        let measuring = tokio::time::Instant::now() + plan.start_after;
        while tokio::time::Instant::now() < measuring && !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(20).min(plan.start_after)).await;
        }
        let interval = Duration::from_secs_f64(1.0 / plan.rate);
        let mut next = tokio::time::Instant::now();
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep_until(next).await;
            next += interval;
            let key = loop {
                if let Some(k) = free.borrow_mut().pop_front() {
                    break Some(k);
                }
                if stop.load(Ordering::Relaxed) {
                    break None;
                }
                let _ = tokio::time::timeout(interval, returned.notified()).await;
            };
            let Some(key) = key else { break };
            versions[key] += 1;
            let version = versions[key];
            let acked = probe.write(&mut writer, key, version, false).await;
            probe.tally.borrow_mut().write(acked.is_some());
            let Some(ack) = acked else {
                free.borrow_mut().push_back(key);
                continue;
            };
            // The readers start before the writer reads its own write, not after.
            in_flight.push(tokio::task::spawn_local(follow(
                probe.clone(),
                readers.clone(),
                plan.clone(),
                key,
                version,
                ack,
                free.clone(),
                returned.clone(),
            )));
            if let Some((read, _)) = probe.read(&mut writer, WRITER, key).await {
                let mut tally = probe.tally.borrow_mut();
                tally.read(read, version, None);
                tally.read_your_write(read < version);
            }
        }
        for task in in_flight {
            let _ = task.await;
        }
        remove_keys(&probe, &mut writer, keys).await;
        let _ = writer.cleanup().await;
        let idle: Vec<_> = readers.idle.borrow_mut().drain(..).collect();
        for (_, mut b) in idle {
            let _ = b.cleanup().await;
        }
        let history_error = probe
            .history
            .as_ref()
            .and_then(|h| h.borrow_mut().finish().err());
        let result = probe.tally.borrow().result();
        Ok(ProbeOutcome {
            result,
            history_error,
        })
    })
}

/// After the timed first writes (`last`): bad input if the rate asked for is beyond what the writer
/// can do even without its read-your-writes reads, at the writes' median time (a gross mistake, not
/// a slow moment: a group commit of 50 ms still allows 20 writes a second).
fn rate_beyond_writer(rate: f64, times: &mut [f64], last: bool) -> Option<ProbeError> {
    if !last || times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    let per_write = times[times.len() / 2];
    let most = 1.0 / per_write;
    (rate > most).then(|| {
        ProbeError::RateTooHigh(format!(
            "invalid --consistency-probe '{rate}': a probe write takes {:.2} ms on this database, so the probe can write at most about {:.0} times a second here (fewer, as its writer reads each one back)",
            per_write * 1000.0,
            most.floor()
        ))
    })
}

/// Deletes the probe's first `count` keys: the table as the probe found it, so later phases count,
/// measure and scan only the workload's records. Not in the history (the checker's operations end
/// with the probe). Each delete has the probe's timeout; a database that stopped answering is left
/// as it is after the first that times out.
async fn remove_keys<B: Binding>(probe: &Probe, writer: &mut B, count: usize) {
    for key in 0..count {
        if let Err(e) = probe.bounded(writer.delete(&key_name(key))).await {
            if matches!(e.class, FailureClass::Timeout | FailureClass::Unavailable) {
                return;
            }
        }
    }
}

/// After write `version` of `key` was acknowledged at `ack`: the scheduled reads and the chase.
#[allow(clippy::too_many_arguments)]
async fn follow<B: Binding + 'static>(
    probe: Rc<Probe>,
    readers: Rc<Readers<B>>,
    plan: ProbePlan,
    key: usize,
    version: u64,
    ack: Instant,
    free: Rc<RefCell<VecDeque<usize>>>,
    returned: Rc<tokio::sync::Notify>,
) {
    // The start of the earliest read (scheduled or chasing) that returned the write.
    let first_seen: std::cell::Cell<Option<Instant>> = std::cell::Cell::new(None);
    let saw = |read: u64, started: Instant| {
        if read >= version && first_seen.get().is_none_or(|t| started < t) {
            first_seen.set(Some(started));
        }
    };
    let scheduled = plan.delays_ms.iter().map(|&d| {
        let (probe, readers, saw) = (probe.clone(), readers.clone(), &saw);
        async move {
            let at = ack + Duration::from_secs_f64(d / 1000.0);
            if d < 1.0 {
                // The runtime's timer counts whole milliseconds: below one, the read waits by
                // yielding (a busy wait of under a millisecond per write).
                while Instant::now() < at {
                    tokio::task::yield_now().await;
                }
            } else {
                tokio::time::sleep_until(at.into()).await;
            }
            if let Some((read, started)) = readers.read(&probe, key).await {
                let since = started.saturating_duration_since(ack).as_secs_f64() * 1000.0;
                probe.tally.borrow_mut().read(read, version, Some(since));
                saw(read, started);
            }
        }
    });
    let chase = async {
        // A read every 0.1 ms at most for the first 2 ms, then about one a millisecond (the
        // timer's resolution): the window's resolution. Ends once any read has returned the write.
        while first_seen.get().is_none() && ack.elapsed() <= plan.horizon {
            let next = Instant::now() + Duration::from_micros(100);
            match readers.read(&probe, key).await {
                Some((read, started)) => {
                    probe.tally.borrow_mut().read(read, version, None);
                    saw(read, started);
                    if first_seen.get().is_some() {
                        break;
                    }
                    if ack.elapsed() < Duration::from_millis(2) {
                        while Instant::now() < next {
                            tokio::task::yield_now().await;
                        }
                    } else {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                }
                // A failed read (a refused connection fails at once): no tight loop.
                None => tokio::time::sleep(Duration::from_millis(1)).await,
            }
        }
    };
    futures::future::join(futures::future::join_all(scheduled), chase).await;
    let window = first_seen
        .get()
        .map(|t| t.saturating_duration_since(ack).as_nanos() as u64);
    probe.tally.borrow_mut().seen_after(window);
    free.borrow_mut().push_back(key);
    returned.notify_one();
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

/// The history file, written as the probe goes (a long run's history need not fit in memory) to
/// a file beside it, renamed into place when complete: never a half-written history.
struct History {
    path: PathBuf,
    partial: PathBuf,
    out: Option<std::io::BufWriter<std::fs::File>>,
    error: Option<String>,
}

impl History {
    fn create(path: &std::path::Path) -> Result<History, String> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("history");
        let partial = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let file = std::fs::File::create(&partial)
            .map_err(|e| format!("--history {}: {e}", path.display()))?;
        Ok(History {
            path: path.to_path_buf(),
            partial,
            out: Some(std::io::BufWriter::new(file)),
            error: None,
        })
    }

    fn push(&mut self, op: &HistoryOp) {
        use std::io::Write;
        if let Some(out) = &mut self.out {
            let line = serde_json::to_string(op).expect("a history line serializes");
            if let Err(e) = writeln!(out, "{line}") {
                self.error = Some(format!("--history {}: {e}", self.path.display()));
                self.out = None;
            }
        }
    }

    fn finish(&mut self) -> Result<(), String> {
        use std::io::Write;
        let written = match (self.out.take(), self.error.take()) {
            (_, Some(e)) => Err(e),
            (Some(mut out), None) => out
                .flush()
                .and_then(|()| out.get_ref().sync_all())
                .and_then(|()| std::fs::rename(&self.partial, &self.path))
                .map_err(|e| format!("--history {}: {e}", self.path.display())),
            (None, None) => Ok(()),
        };
        if written.is_err() {
            let _ = std::fs::remove_file(&self.partial);
        }
        written
    }
}

impl Drop for History {
    fn drop(&mut self) {
        // Not finished (the probe failed): no partial file left behind.
        if self.out.is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}
