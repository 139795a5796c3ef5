//! The probe's writer thread (first versions, the rate check, the measured writes, the drain, the
//! keys removed) and a reader client's main thread following the writer's relayed events.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use scalebench_binding::{Binding, BindingFactory};
use scalebench_workload::FailureClass;

use super::follow::{Job, Read, ReadDone, Stage, ACKS_KEPT, WRITER};
use super::operations::{key_name, Probe};
use super::plan::{ProbeError, ProbeEvent, DRAIN, REMOTE_DRAIN_MARGIN};

impl Probe<'_> {
    /// The writer's thread: first versions, the rate check, `ready`, the measured writes, then the
    /// drain (readers finish the follow-ups) and the keys removed.
    pub(super) fn writer<F: BindingFactory>(&self, factory: &F, ready: &(dyn Fn() + Sync)) {
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
    pub(super) fn drain(&self) {
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
    pub(super) fn follow_writer(
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
                    started_unix_ns,
                    at_unix_ns,
                    write,
                }) if key < self.plan.keys => {
                    let ack = at(at_unix_ns);
                    let started = started_unix_ns.map_or(ack, at);
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
                    let times = (started, ack);
                    shared.follow(written, key, version, times, &self.plan.delays_ms, false);
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
    pub(super) fn first_versions<B: Binding>(
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
            let Some((_, done)) =
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
                started_unix_ns: None,
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
    pub(super) fn measured_writes<B: Binding>(
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
                let Some((sent, ack)) = acked else { return };
                self.tell(&ProbeEvent::Acked {
                    key,
                    version,
                    started_unix_ns: Some(self.unix_ns(sent)),
                    at_unix_ns: self.unix_ns(ack),
                    write: Some(written),
                });
                shared.follow(
                    written,
                    key,
                    version,
                    (sent, ack),
                    &self.plan.delays_ms,
                    reads_at_once,
                );
                self.changed.notify_all();
            };
            match (acked, immediate.as_mut()) {
                (Some((_, ack)), Some((process, b))) => {
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
                        shared.read(ReadDone {
                            process: WRITER,
                            key,
                            version: read,
                            started,
                            kept_delay: false,
                        });
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
    pub(super) async fn remove_keys<B: Binding>(&self, writer: &mut B) {
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

/// After the timed first writes: bad input if the rate asked for is more than twice what the
/// writer can do even without its read-your-writes reads, at the writes' median time (a gross
/// mistake, not a slow moment: a group commit of 50 ms still allows 20 writes a second, and a
/// rate a little beyond a busy machine's runs, its shortfall reported as falling behind).
pub(super) fn rate_beyond_writer(rate: f64, times: &mut [f64]) -> Option<ProbeError> {
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
