//! YCSB's `SequentialGenerator`: `start, start + 1, ..., end, start, ...`, one sequence shared by all workers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// YCSB's `SequentialGenerator`: `start, start + 1, ..., end, start, ...`, one sequence shared by all workers.
#[derive(Debug, Clone)]
pub struct Sequential {
    start: u64,
    interval: u64,
    counter: Arc<AtomicU64>,
}

impl Sequential {
    /// Values `start..=end`.
    pub fn new(start: u64, end: u64) -> Self {
        Sequential {
            start,
            interval: end - start + 1,
            counter: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn next(&self) -> u64 {
        self.start + self.counter.fetch_add(1, Ordering::Relaxed) % self.interval
    }
}
