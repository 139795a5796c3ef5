//! The timeline of a running phase, for a controller that watches it while it runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// A point of a running phase's timeline: a request set (with `--request-set`) or an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Seconds after the measurement start.
    pub start_s: f64,
    pub duration_s: f64,
    pub ok: u64,
    pub failed: u64,
    /// Intervals: p99 of successful operations (from the intended start in an open loop), us.
    pub p99_us: f64,
}

/// Told each point as it joins a timeline (its index in the timeline, the point): a client of a
/// watched distributed run sends it to its launcher.
pub type PointSink = Arc<dyn Fn(u64, &TimelinePoint) + Send + Sync>;

/// The timeline of a phase as it runs (request sets as they close, or else intervals), for a
/// controller watching the run (`scalebench elastic`). A client of a watched distributed run
/// publishes its points to its launcher ([`TimelineLog::published`]), and its request sets open
/// only when the launcher says the set before is done by every client ([`SetGate`]).
#[derive(Clone, Default)]
pub struct TimelineLog {
    inner: Arc<std::sync::Mutex<(Option<Instant>, Vec<TimelinePoint>)>>,
    sink: Option<PointSink>,
    gate: Option<SetGate>,
}

impl std::fmt::Debug for TimelineLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimelineLog")
            .field("published", &self.sink.is_some())
            .field("gate", &self.gate)
            .finish()
    }
}

impl TimelineLog {
    pub fn new() -> TimelineLog {
        TimelineLog::default()
    }

    /// A timeline whose points also go to `sink`, and whose request sets (if any) open by `gate`.
    pub fn published(sink: PointSink, gate: Option<SetGate>) -> TimelineLog {
        TimelineLog {
            sink: Some(sink),
            gate,
            ..TimelineLog::default()
        }
    }

    /// The points so far.
    pub fn points(&self) -> Vec<TimelinePoint> {
        self.points_since(0)
    }

    /// The points after the first `from`: a watcher copies only what is new, and holds the lock the
    /// run's set closer also takes for as short as that.
    pub fn points_since(&self, from: usize) -> Vec<TimelinePoint> {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1.get(from..)
            .map_or_else(Vec::new, <[TimelinePoint]>::to_vec)
    }

    /// The measurement start, once the run has begun: points are placed in seconds after it.
    pub fn measurement_start(&self) -> Option<Instant> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    /// The run's measurement begins at `t0` (by the run itself, or by the launcher that merges its
    /// clients' timelines).
    pub fn begin(&self, t0: Instant) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        *g = (Some(t0), Vec::new());
    }

    pub fn push(&self, point: TimelinePoint) {
        let index = {
            let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            g.1.push(point);
            g.1.len() as u64 - 1
        };
        if let Some(sink) = &self.sink {
            sink(index, &point);
        }
    }

    /// What opens this run's request sets besides its own completions, if another does.
    pub fn gate(&self) -> Option<&SetGate> {
        self.gate.as_ref()
    }
}

/// Request sets shared by the clients of a run (Dory's R operations split over them): set k + 1
/// opens when every client has finished its share of set k, which the launcher says with
/// [`SetGate::open`]. Set 0 opens at the common start.
#[derive(Debug, Clone, Default)]
pub struct SetGate {
    inner: Arc<(AtomicU64, tokio::sync::Notify)>,
}

impl SetGate {
    /// Sets up to `set` may start.
    pub fn open(&self, set: u64) {
        self.inner.0.fetch_max(set, Ordering::SeqCst);
        self.inner.1.notify_waiters();
    }

    pub fn is_open(&self, set: u64) -> bool {
        set == 0 || self.inner.0.load(Ordering::SeqCst) >= set
    }

    /// Resolves at the next [`SetGate::open`] (enable it before checking [`SetGate::is_open`]).
    pub fn opened(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.1.notified()
    }
}
