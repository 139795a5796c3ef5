//! Dory's request sets (studies.md, section 5): the measured operations of a closed-loop run in
//! back-to-back sets of R, each timed; a set starts only when every operation of the one before it
//! has completed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use scalebench_measure::result::{RequestSet, RequestSets};

use crate::timeline::{SetGate, TimelineLog, TimelinePoint};

/// Request sets: measured operations are numbered as they start; operation i belongs to set
/// i / size and may start only once every operation of the sets before has completed.
pub struct SetClock {
    size: u64,
    claimed: AtomicU64,
    completed: AtomicU64,
    /// Start of the set in progress, ns after `timeline.start` (0: the measurement start).
    opened_ns: AtomicU64,
    /// Failures by set (rare, so a lock is cheap).
    failed: std::sync::Mutex<std::collections::BTreeMap<u64, u64>>,
    done: std::sync::Mutex<Vec<RequestSet>>,
    opened: tokio::sync::Notify,
    /// Sets as they close, for a controller watching the run (`scalebench elastic`).
    log: Option<TimelineLog>,
}

impl SetClock {
    pub fn new(size: u64, log: Option<TimelineLog>) -> SetClock {
        SetClock {
            size,
            claimed: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            opened_ns: AtomicU64::new(0),
            failed: Default::default(),
            done: Default::default(),
            opened: tokio::sync::Notify::new(),
            log,
        }
    }

    /// Numbers the next measured operation.
    pub fn claim(&self) -> u64 {
        self.claimed.fetch_add(1, Ordering::SeqCst)
    }

    /// The set operation `i` belongs to.
    pub fn set_of(&self, i: u64) -> u64 {
        i / self.size
    }

    /// Waits until set `set` may start; false if the run ends first (`ended`: stop or deadline).
    /// With a gate (the set shared by several clients), the set starts when the gate opens it, at
    /// `now_ns`, after the set before has completed here.
    pub async fn wait_open(
        &self,
        set: u64,
        ended: impl Fn() -> bool,
        now_ns: impl Fn() -> u64,
    ) -> bool {
        let needed = set * self.size;
        let gate = self.log.as_ref().and_then(TimelineLog::gate);
        loop {
            let opened = self.opened.notified();
            tokio::pin!(opened);
            opened.as_mut().enable();
            let gate_opened = gate.map(SetGate::opened);
            tokio::pin!(gate_opened);
            if let Some(g) = gate_opened.as_mut().as_pin_mut() {
                g.enable();
            }
            let here = self.completed.load(Ordering::SeqCst) >= needed;
            match gate {
                _ if !here => {}
                None => return true,
                Some(g) if g.is_open(set) => {
                    // The first slot to see it opened marks the set's start.
                    self.opened_ns.fetch_max(now_ns(), Ordering::SeqCst);
                    return true;
                }
                Some(_) => {}
            }
            if ended() {
                return false;
            }
            // Woken by the set's last completion or the gate; the timeout re-checks stop and
            // deadline.
            let either = async {
                match gate_opened.as_mut().as_pin_mut() {
                    Some(g) => tokio::select! { _ = opened => {}, _ = g => {} },
                    None => opened.await,
                }
            };
            let _ = tokio::time::timeout(Duration::from_millis(50), either).await;
        }
    }

    /// Counts a completed operation of set `set`; the last one closes the set and opens the next.
    pub fn complete(&self, set: u64, end_ns: u64, ok: bool, t0_ns: u64) {
        if !ok {
            *self
                .failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(set)
                .or_default() += 1;
        }
        let done = self.completed.fetch_add(1, Ordering::SeqCst) + 1;
        if done == (set + 1) * self.size {
            let start = self.opened_ns.load(Ordering::SeqCst).max(t0_ns);
            let failed = self
                .failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&set)
                .unwrap_or(0);
            let closed = RequestSet {
                index: set,
                start_s: (start - t0_ns) as f64 / 1e9,
                duration_s: end_ns.saturating_sub(start) as f64 / 1e9,
                failed,
                clients_s: Vec::new(),
            };
            if let Some(log) = &self.log {
                log.push(TimelinePoint {
                    start_s: closed.start_s,
                    duration_s: closed.duration_s,
                    ok: self.size - closed.failed.min(self.size),
                    failed: closed.failed,
                    p99_us: 0.0,
                });
            }
            self.done
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(closed);
            self.opened_ns.store(end_ns, Ordering::SeqCst);
            self.opened.notify_waiters();
        }
    }

    pub fn finish(&self) -> RequestSets {
        let completed = self.completed.load(Ordering::SeqCst);
        let sets = std::mem::take(&mut *self.done.lock().unwrap_or_else(|e| e.into_inner()));
        RequestSets::new(self.size, sets, completed % self.size)
    }
}
