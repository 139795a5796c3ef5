//! The clock of the hot path: nanoseconds since the run's common start, read from the CPU's time-stamp
//! counter through `quanta` (about half the cost of `clock_gettime` here, see docs/benchmarks.md), which
//! matters when an operation takes less than a microsecond.

use std::time::Instant;

#[derive(Clone)]
pub(crate) struct Clock {
    clock: quanta::Clock,
    raw0: u64,
    /// `start`'s distance to the moment `raw0` was read, signed (ns).
    offset_ns: i64,
}

impl Clock {
    /// A clock reading 0 at `start`.
    pub(crate) fn anchored(start: Instant) -> Self {
        let clock = quanta::Clock::new();
        let raw0 = clock.raw();
        let now = Instant::now();
        let offset_ns = if now >= start {
            (now - start).as_nanos() as i64
        } else {
            -((start - now).as_nanos() as i64)
        };
        Clock {
            clock,
            raw0,
            offset_ns,
        }
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        let elapsed = self.clock.delta_as_nanos(self.raw0, self.clock.raw()) as i64;
        (self.offset_ns + elapsed).max(0) as u64
    }
}
