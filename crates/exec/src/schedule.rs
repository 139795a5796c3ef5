//! Open-loop schedules: intended start times independent of how fast the database answers,
//! and the waiting that keeps to them.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

use crate::plan::Arrival;
use crate::StopSignal;

/// One slot's intended start times.
pub(crate) struct Schedule {
    next: Instant,
    gap_s: f64,
    arrival: Arrival,
    rng: rand::rngs::SmallRng,
}

impl Schedule {
    /// `rate` per second for this slot; slot `index` of `slots` is offset so slots interleave evenly.
    pub(crate) fn new(start: Instant, rate: f64, arrival: Arrival, index: usize, slots: usize, seed: u64) -> Self {
        let gap_s = 1.0 / rate;
        let offset = match arrival {
            Arrival::Constant => gap_s * index as f64 / slots as f64,
            Arrival::Poisson => 0.0,
        };
        let mut s = Schedule {
            next: start + Duration::from_secs_f64(offset),
            gap_s,
            arrival,
            rng: rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5CED_u64.rotate_left(17)),
        };
        if arrival == Arrival::Poisson {
            s.next = start + s.draw_gap();
        }
        s
    }

    fn draw_gap(&mut self) -> Duration {
        match self.arrival {
            Arrival::Constant => Duration::from_secs_f64(self.gap_s),
            Arrival::Poisson => {
                let u: f64 = self.rng.random();
                Duration::from_secs_f64(-(1.0 - u).ln() * self.gap_s)
            }
        }
    }

    /// The next intended start; the schedule never waits for the previous operation.
    pub(crate) fn next(&mut self) -> Instant {
        let t = self.next;
        let gap = self.draw_gap();
        self.next += gap;
        t
    }
}

/// Waits until `t` precisely: coarse timer sleeps while far away (tokio's timer has 1 ms resolution),
/// then yielding and finally spinning. Returns early (false) if a stop is requested.
pub(crate) async fn wait_until(t: Instant, stop: &StopSignal) -> bool {
    loop {
        let now = Instant::now();
        if now >= t {
            return true;
        }
        if stop.is_requested() {
            return false;
        }
        let remaining = t - now;
        if remaining > Duration::from_millis(2) {
            let nap = (remaining - Duration::from_millis(1)).min(Duration::from_millis(100));
            tokio::time::sleep(nap).await;
        } else if remaining > Duration::from_micros(20) {
            tokio::task::yield_now().await;
        } else {
            std::hint::spin_loop();
        }
    }
}
