//! What the executor tells a progress display while a phase runs: elapsed time, warm-up or
//! measuring, and the live figures (rates and percentiles of the last interval).

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use scalebench_measure::{LiveStatus, Phase};

/// What a progress display is told, about once per `interval`.
#[derive(Debug, Clone)]
pub struct ProgressState {
    pub phase: Phase,
    /// Since the global start (warm-up included).
    pub elapsed: Duration,
    pub warmup: Duration,
    pub duration: Option<Duration>,
    /// Measured operations expected (count-based stop), for a percentage.
    pub expected_ops: Option<u64>,
    pub live: LiveStatus,
}

impl ProgressState {
    pub fn in_warmup(&self) -> bool {
        self.elapsed < self.warmup
    }
}

/// Receives progress; the CLI draws a bar on a terminal or prints status lines.
pub trait Progress {
    /// The measurement window opens at `t0` (the common start plus the warm-up): told once, before
    /// the workers start, so that what is timed from it (faults, the consistency probe's writes)
    /// starts exactly there.
    fn measurement_starts(&mut self, _t0: Instant) {}
    fn update(&mut self, state: &ProgressState);
    fn finish(&mut self) {}
    /// The write check after the phase begins: `keys` to read back, within `limit`.
    fn checking_writes(&mut self, _keys: usize, _limit: Duration) {}
}

/// Every observer of a phase in one list, each told every event (as criterion's `Report` fans one
/// event out to every reporter): the display, live metrics, what runs beside the phase.
pub struct Observers<'a>(pub Vec<&'a mut dyn Progress>);

impl Progress for Observers<'_> {
    fn measurement_starts(&mut self, t0: Instant) {
        for o in &mut self.0 {
            o.measurement_starts(t0);
        }
    }

    fn update(&mut self, state: &ProgressState) {
        for o in &mut self.0 {
            o.update(state);
        }
    }

    fn finish(&mut self) {
        for o in &mut self.0 {
            o.finish();
        }
    }

    fn checking_writes(&mut self, keys: usize, limit: Duration) {
        for o in &mut self.0 {
            o.checking_writes(keys, limit);
        }
    }
}

/// When the measurement window opened, once told: what is timed from it (faults, the consistency
/// probe's writes) waits for it.
pub type MeasurementStart = Arc<OnceLock<Instant>>;

impl Progress for MeasurementStart {
    fn measurement_starts(&mut self, t0: Instant) {
        let _ = self.set(t0);
    }

    fn update(&mut self, _state: &ProgressState) {}
}

/// Shows nothing (tests, embedding).
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&mut self, _state: &ProgressState) {}
}
