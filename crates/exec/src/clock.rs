//! The clock of the hot path: nanoseconds since the run's common start, read from the CPU's time-stamp
//! counter through `quanta` (about half the cost of `clock_gettime` here, see docs/benchmarks.md), which
//! matters when an operation takes less than a microsecond.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

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

/// The instant on this machine's monotonic clock of wall-clock time `at` (now if it has passed).
pub(crate) fn instant_at(at: SystemTime) -> Instant {
    let (now_s, now_i) = (SystemTime::now(), Instant::now());
    at.duration_since(now_s)
        .map_or(now_i, |ahead| now_i + ahead)
}

/// Milliseconds from `at` to now on the wall clock, negative when `at` is still ahead.
pub(crate) fn signed_ms_since(at: SystemTime) -> f64 {
    match SystemTime::now().duration_since(at) {
        Ok(late) => late.as_secs_f64() * 1000.0,
        Err(early) => -early.duration().as_secs_f64() * 1000.0,
    }
}

pub(crate) fn unix_ms_at(t: Instant) -> u64 {
    let now_i = Instant::now();
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let at = if t >= now_i {
        now_s + (t - now_i)
    } else {
        now_s.saturating_sub(now_i - t)
    };
    at.as_millis() as u64
}

/// Waits until `instant` precisely: a timer sleep for the bulk, then spinning (the timer's
/// resolution is a millisecond, and every worker must begin at the same instant).
pub(crate) async fn wait_for(instant: Instant) {
    if let Some(bulk) = instant
        .saturating_duration_since(Instant::now())
        .checked_sub(std::time::Duration::from_millis(2))
    {
        tokio::time::sleep(bulk).await;
    }
    while Instant::now() < instant {
        std::hint::spin_loop();
    }
}
