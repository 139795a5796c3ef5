//! The probe's operations and its reader threads: a write timed to its acknowledgement, a read
//! with its start, and each reader's loop over the reads that fall due.

use std::cmp::Reverse;
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingFactory};
use scalebench_workload::{FailureClass, FieldSet, OpError};

use super::follow::{Job, Read, ReadDone, Shared, Stage, ACKS_KEPT, WRITER};
use super::history::HistoryOp;
use super::plan::{ProbeControl, ProbeError, ProbeEvent, ProbeEventSink, ProbePlan};

/// How often a probe operation in flight looks for a stop request.
const INTERRUPT_POLL: Duration = Duration::from_millis(20);

pub(super) struct Probe<'a> {
    pub(super) plan: &'a ProbePlan,
    pub(super) control: &'a ProbeControl,
    pub(super) base: Instant,
    /// `base` as Unix ns on this clock (the writer's: on its clock).
    pub(super) base_unix_ns: u64,
    /// Distinguishes this probe's values from those an earlier run left.
    pub(super) tag: String,
    pub(super) shared: Mutex<Shared>,
    pub(super) changed: Condvar,
    /// Readers in other processes: told every event.
    pub(super) tell: Option<ProbeEventSink>,
}

impl Probe<'_> {
    pub(super) fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    pub(super) fn unix_ns(&self, t: Instant) -> u64 {
        self.base_unix_ns + self.ns(t)
    }

    pub(super) fn tell(&self, event: &ProbeEvent) {
        if let Some(tell) = &self.tell {
            tell(event);
        }
    }

    pub(super) fn value(&self, version: u64) -> String {
        format!("{}:{version}", self.tag)
    }

    /// The version a read value names (0: absent, or written by another probe).
    pub(super) fn version(&self, value: Option<&str>) -> u64 {
        value
            .and_then(|v| v.strip_prefix(self.tag.as_str()))
            .and_then(|v| v.strip_prefix(':'))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    pub(super) fn record(&self, shared: &mut Shared, op: HistoryOp) {
        if let Some(h) = &mut shared.history {
            h.push(&op);
        }
    }

    /// Writes `version` of `key`; when acknowledged, the instants it was sent and its reply
    /// arrived.
    pub(super) async fn write<B: Binding>(
        &self,
        b: &mut B,
        key: usize,
        version: u64,
        first: bool,
    ) -> Option<(Instant, Instant)> {
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
        outcome.ok().map(|()| (invoke, complete))
    }

    /// Reads `key` as `process`: the version read (or `None` if the read failed) and its start.
    pub(super) async fn read<B: Binding>(
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

    pub(super) async fn bounded(
        &self,
        op: impl std::future::Future<Output = Result<(), OpError>>,
    ) -> Result<(), OpError> {
        // A binding that blocks its thread (SQLite) cannot be cut short by the runtime: it honours
        // the published deadline instead, as it does for the executor's calls.
        scalebench_binding::deadline::set_call_deadline(Some(
            Instant::now() + self.plan.op_timeout,
        ));
        // A Ctrl-C (or SIGTERM) ends it too: after the window, the drain and the deletes of the
        // probe keys wait for nobody then.
        let interrupted = async {
            while !self.control.interrupted() {
                tokio::time::sleep(INTERRUPT_POLL).await;
            }
        };
        let outcome = tokio::select! {
            r = tokio::time::timeout(self.plan.op_timeout, op) => r.unwrap_or_else(|_| Err(OpError::new(
                FailureClass::Timeout,
                "probe operation timed out",
            ))),
            () = interrupted => Err(OpError::new(
                FailureClass::Timeout,
                "probe operation ended by a stop request",
            )),
        };
        scalebench_binding::deadline::set_call_deadline(None);
        outcome
    }

    /// The bound below which a read scheduled at delay `i` kept it: the next delay of the plan (the
    /// last: twice itself, at least 1 ms more).
    pub(super) fn kept_before(&self, i: usize) -> Duration {
        let ms = match self.plan.delays_ms.get(i + 1) {
            Some(next) => *next,
            None => self.plan.delays_ms[i] + self.plan.delays_ms[i].max(1.0),
        };
        Duration::from_secs_f64(ms / 1000.0)
    }

    /// A reader's next job, once due, with its write's key. `None`: the reader is done.
    pub(super) fn next_job(&self) -> Option<(Job, usize)> {
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
    pub(super) fn reader_saw(
        &self,
        process: usize,
        job: &Job,
        key: usize,
        (read, started, _complete): (Option<u64>, Instant, Instant),
    ) {
        let mut shared = self.lock();
        // A scheduled read kept its delay when it began before the next one (its write still
        // followed: a read the phase's end cut is counted as a read, nothing more).
        let kept_delay = match (job.read, shared.follows.get(&job.write)) {
            (Read::Scheduled(delay), Some(f)) => {
                started.saturating_duration_since(f.ack) < self.kept_before(delay)
            }
            _ => false,
        };
        match read {
            Some(version) => shared.read(ReadDone {
                process,
                key,
                version,
                started,
                kept_delay,
            }),
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
                    let returned = read.filter(|_| kept_delay).map(|v| v >= f.version);
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
    pub(super) fn reader<F: BindingFactory>(&self, factory: &F, process: usize) {
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

    pub(super) fn runtime(&self) -> Option<tokio::runtime::Runtime> {
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

    pub(super) fn fail(&self, why: ProbeError) {
        let mut shared = self.lock();
        shared.failed.get_or_insert(why);
        shared.stage = Stage::Over;
        self.changed.notify_all();
    }

    /// Waits (watching the stop) until every reader connected: false if the probe failed or was
    /// stopped first.
    pub(super) fn await_readers(&self) -> bool {
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
}

/// Reader threads wait on a condition variable for reads due a fraction of a millisecond ahead:
/// with Linux's default timer slack (50 us) such a wait would oversleep by that much.
pub(super) fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects the calling thread only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000u64);
    }
}

pub(super) fn key_name(key: usize) -> String {
    format!("scalebench-probe-{key:05}")
}
