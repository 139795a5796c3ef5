//! YCSB's `AcknowledgedCounterGenerator`: insert key numbers shared by all workers, and the highest
//! number below which every insert has completed.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// YCSB's `AcknowledgedCounterGenerator`, shared by all workers: hands out insert key numbers and
/// tracks the highest number below which every insert has completed, so reads never target a key
/// whose insert is still in flight.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicU64,
    /// Highest key number n such that all of `start..=n` are acknowledged (`start - 1` initially).
    limit: AtomicU64,
    pending: Mutex<BTreeSet<u64>>,
}

impl AcknowledgedCounter {
    pub fn new(start: u64) -> Self {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            limit: AtomicU64::new(start.wrapping_sub(1)),
            pending: Mutex::new(BTreeSet::new()),
        }
    }

    /// The next key number to insert.
    pub fn next_value(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The next key number that would be handed out: every number below it was taken.
    pub fn issued(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// The highest acknowledged key number (YCSB's `lastValue`).
    pub fn last_value(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `value` as done (whatever the insert's outcome, as YCSB does in a `finally`).
    pub fn acknowledge(&self, value: u64) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.insert(value);
        let mut limit = self.limit.load(Ordering::Acquire);
        while pending.remove(&limit.wrapping_add(1)) {
            limit = limit.wrapping_add(1);
        }
        self.limit.store(limit, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_advances_only_over_contiguous_acknowledgements() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.last_value(), 99);
        let a = c.next_value();
        let b = c.next_value();
        let d = c.next_value();
        assert_eq!((a, b, d), (100, 101, 102));
        c.acknowledge(b);
        assert_eq!(c.last_value(), 99);
        c.acknowledge(a);
        assert_eq!(c.last_value(), 101);
        c.acknowledge(d);
        assert_eq!(c.last_value(), 102);
    }
}
