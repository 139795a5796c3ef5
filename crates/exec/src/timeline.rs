//! The timeline of a running phase, for a controller that watches it while it runs.

use std::sync::Arc;
use std::time::Instant;

/// A point of a running phase's timeline: a request set (with `--request-set`) or an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelinePoint {
    /// Seconds after the measurement start.
    pub start_s: f64,
    pub duration_s: f64,
    pub ok: u64,
    pub failed: u64,
    /// Intervals: p99 of successful operations (from the intended start in an open loop), us.
    pub p99_us: f64,
}

/// The timeline of a phase as it runs (request sets as they close, or else intervals), for a
/// controller watching the run (`scalebench elastic`).
#[derive(Debug, Clone, Default)]
pub struct TimelineLog {
    inner: Arc<std::sync::Mutex<(Option<Instant>, Vec<TimelinePoint>)>>,
}

impl TimelineLog {
    pub fn new() -> TimelineLog {
        TimelineLog::default()
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

    pub(crate) fn begin(&self, t0: Instant) {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        *g = (Some(t0), Vec::new());
    }

    pub(crate) fn push(&self, point: TimelinePoint) {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .push(point);
    }
}
