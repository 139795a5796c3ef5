//! What the executor tells a progress display while a phase runs: elapsed time, warm-up or
//! measuring, and the live figures (rates and percentiles of the last interval).

use std::time::Duration;

use scalebench_measure::LiveStatus;

/// What a progress display is told, about once per `interval`.
#[derive(Debug, Clone)]
pub struct ProgressState {
    pub phase: &'static str,
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
    fn update(&mut self, state: &ProgressState);
    fn finish(&mut self) {}
}

/// Shows nothing (tests, embedding).
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&mut self, _state: &ProgressState) {}
}
