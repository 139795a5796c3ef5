//! Open-loop schedules: intended start times independent of how fast the database answers,
//! and the waiting that keeps to them.

use std::time::Duration;

use rand::{Rng, SeedableRng};

use crate::clock::Clock;
use crate::plan::Arrival;
use crate::StopSignal;

/// One slot's intended start times, in ns on the run's clock.
pub(crate) struct Schedule {
    /// Kept as f64 so rounding does not accumulate into drift.
    next_ns: f64,
    gap_ns: f64,
    arrival: Arrival,
    rng: rand::rngs::SmallRng,
}

impl Schedule {
    /// `rate` per second for this slot; slot `index` of `slots` is offset so slots interleave evenly.
    pub(crate) fn new(rate: f64, arrival: Arrival, index: usize, slots: usize, seed: u64) -> Self {
        let gap_ns = 1e9 / rate;
        let mut s = Schedule {
            next_ns: 0.0,
            gap_ns,
            arrival,
            rng: rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5CED_u64.rotate_left(17)),
        };
        s.next_ns = match arrival {
            Arrival::Constant => gap_ns * index as f64 / slots as f64,
            Arrival::Poisson => s.draw_gap(),
        };
        s
    }

    fn draw_gap(&mut self) -> f64 {
        match self.arrival {
            Arrival::Constant => self.gap_ns,
            Arrival::Poisson => {
                let u: f64 = self.rng.random();
                -(1.0 - u).ln() * self.gap_ns
            }
        }
    }

    /// The next intended start; the schedule never waits for the previous operation.
    pub(crate) fn next(&mut self) -> u64 {
        let t = self.next_ns as u64;
        self.next_ns += self.draw_gap();
        t
    }
}

/// Waits until `t_ns` precisely: coarse timer sleeps while far away (tokio's timer has 1 ms resolution),
/// then yielding and finally spinning. Returns early (false) if a stop is requested.
pub(crate) async fn wait_until(clock: &Clock, t_ns: u64, stop: &StopSignal) -> bool {
    loop {
        let now = clock.now_ns();
        if now >= t_ns {
            return true;
        }
        if stop.is_requested() {
            return false;
        }
        let remaining = t_ns - now;
        if remaining > 2_000_000 {
            let nap = (remaining - 1_000_000).min(100_000_000);
            tokio::time::sleep(Duration::from_nanos(nap)).await;
        } else if remaining > 20_000 {
            tokio::task::yield_now().await;
        } else {
            std::hint::spin_loop();
        }
    }
}
