//! Open-loop schedules: intended start times independent of how fast the database answers.

use rand::{Rng, SeedableRng};

use crate::plan::Arrival;

/// One slot's intended start times, in ns on the run's clock.
pub(crate) struct Schedule {
    /// Kept as f64 so rounding does not accumulate into drift.
    next_ns: f64,
    gap_ns: f64,
    arrival: Arrival,
    rng: rand::rngs::SmallRng,
}

impl Schedule {
    /// `rate` per second for this slot; slot `index` of `slots` is offset so slots interleave evenly,
    /// and all of them by `offset_ns` (a client's place among the clients of a distributed run).
    pub(crate) fn new(
        rate: f64,
        arrival: Arrival,
        (index, slots): (usize, usize),
        offset_ns: f64,
        seed: u64,
    ) -> Self {
        let gap_ns = 1e9 / rate;
        let mut s = Schedule {
            next_ns: 0.0,
            gap_ns,
            arrival,
            rng: rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5CED_u64.rotate_left(17)),
        };
        s.next_ns = offset_ns
            + match arrival {
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
