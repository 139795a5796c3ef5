//! Open-loop schedules: intended start times independent of how fast the database answers.

use rand::{Rng, SeedableRng};
use scalebench_workload::rate::RateProfile;

use crate::plan::{Arrival, RunPlan};

/// One slot's intended start times, in ns on the run's clock.
pub(crate) struct Schedule {
    /// Kept as f64 so rounding does not accumulate into drift.
    next_ns: f64,
    gap_ns: f64,
    arrival: Arrival,
    rng: rand::rngs::SmallRng,
    /// A rate that changes: the arrivals are counted instead of timed ([`Profiled`]).
    profiled: Option<Profiled>,
}

/// A slot's arrivals under a [`RateProfile`], in "arrivals due" (the profile's integral, all slots
/// together): slot `i` of `S` takes arrivals `i`, `i + S`, `i + 2S`, ... (or Poisson gaps of mean
/// `S`), each at the time the profile has that many due. The warm-up runs at the first rate.
struct Profiled {
    profile: RateProfile,
    /// The next arrival's count.
    next_u: f64,
    /// Arrivals between two of this slot's: the slots.
    slots: f64,
    warmup_s: f64,
    /// The profile's first rate, and the arrivals due during the warm-up at it (fixed: not worked
    /// out again for every arrival).
    first_rate: f64,
    in_warmup: f64,
    /// The previous arrival's time after the window opened: where the next one's search starts.
    last_s: f64,
}

impl Profiled {
    /// Seconds after the phase's start at which `u` arrivals are due; `None`: never.
    fn time_of(&mut self, u: f64) -> Option<f64> {
        // A profile that starts at 0 has no warm-up (checked with the plan).
        if u <= self.in_warmup && self.first_rate > 0.0 {
            return Some(u / self.first_rate);
        }
        let t = self.profile.time_of(u - self.in_warmup, self.last_s)?;
        self.last_s = t;
        Some(self.warmup_s + t)
    }
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
            profiled: None,
        };
        s.next_ns = offset_ns
            + match arrival {
                Arrival::Constant => gap_ns * index as f64 / slots as f64,
                Arrival::Poisson => s.draw_gap(),
            };
        s
    }

    /// Arrivals that follow `profile` (this client's rate, all its slots together) from the end of
    /// a warm-up of `warmup_s` seconds; all of them `offset` arrivals later (a client's place among
    /// the clients of a distributed run: client c of C is c / C arrivals later).
    pub(crate) fn profiled(
        profile: RateProfile,
        warmup_s: f64,
        arrival: Arrival,
        (index, slots): (usize, usize),
        offset: f64,
        seed: u64,
    ) -> Self {
        let mut s = Schedule {
            next_ns: 0.0,
            gap_ns: 0.0,
            arrival,
            rng: rand::rngs::SmallRng::seed_from_u64(seed ^ 0x5CED_u64.rotate_left(17)),
            profiled: None,
        };
        let slots = slots as f64;
        let first_rate = profile.rate_at(0.0);
        let first = offset
            + match arrival {
                Arrival::Constant => index as f64,
                Arrival::Poisson => slots * s.unit_gap(),
            };
        s.profiled = Some(Profiled {
            profile,
            next_u: first,
            slots,
            warmup_s,
            first_rate,
            in_warmup: first_rate * warmup_s,
            last_s: 0.0,
        });
        s
    }

    /// A gap of a unit-rate process: 1, or exponential with mean 1.
    fn unit_gap(&mut self) -> f64 {
        match self.arrival {
            Arrival::Constant => 1.0,
            Arrival::Poisson => {
                let u: f64 = self.rng.random();
                -(1.0 - u).ln()
            }
        }
    }

    fn draw_gap(&mut self) -> f64 {
        self.unit_gap() * self.gap_ns
    }

    /// The next intended start; the schedule never waits for the previous operation. `u64::MAX`
    /// when a profile that ends at 0 ops/s has no more arrivals for this slot.
    pub(crate) fn next(&mut self) -> u64 {
        if self.profiled.is_some() {
            let gap = self.unit_gap();
            let p = self.profiled.as_mut().expect("checked");
            let u = p.next_u;
            p.next_u += p.slots * gap;
            return match p.time_of(u) {
                Some(t) => (t * 1e9) as u64,
                None => u64::MAX,
            };
        }
        let t = self.next_ns as u64;
        self.next_ns += self.draw_gap();
        t
    }
}

/// Slot `slot`'s arrivals in an open loop (`None`: a closed loop): its share of the plan's rate
/// (or profile), each arrival carrying `per_arrival` of the rate's units (a load's batch of records).
pub(crate) fn schedule_of(
    plan: &RunPlan,
    t0_ns: u64,
    slot: usize,
    per_arrival: usize,
) -> Option<Schedule> {
    let per_arrival = per_arrival as f64;
    let rate = plan.target_ops_s? / per_arrival;
    let seed = mix_seed(plan.seed, !(slot as u64));
    Some(match &plan.rate_profile {
        Some(profile) => Schedule::profiled(
            profile.scaled(1.0 / per_arrival),
            t0_ns as f64 / 1e9,
            plan.arrival,
            (slot, plan.slots()),
            plan.arrival_offset.as_secs_f64() * rate,
            seed,
        ),
        None => Schedule::new(
            rate / plan.slots() as f64,
            plan.arrival,
            (slot, plan.slots()),
            plan.arrival_offset.as_nanos() as f64,
            seed,
        ),
    })
}

pub(crate) fn mix_seed(seed: u64, slot: u64) -> u64 {
    // splitmix64 of (seed, slot): independent streams per slot, reproducible per seed.
    let mut z = seed ^ slot.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots together follow the profile: the arrivals due by each second are what it integrates
    /// to, within one per slot.
    #[test]
    fn slots_of_a_profiled_schedule_together_follow_the_profile() {
        let profile = RateProfile::parse("ramp:from=100,to=1000,over=4s").unwrap();
        let slots = 3;
        let mut times: Vec<u64> = Vec::new();
        for i in 0..slots {
            let mut s =
                Schedule::profiled(profile.clone(), 0.5, Arrival::Constant, (i, slots), 0.0, 7);
            loop {
                let t = s.next();
                if t > 6_000_000_000 {
                    break;
                }
                times.push(t);
            }
        }
        for second in 1..=6u64 {
            let by = times
                .iter()
                .filter(|&&t| t < second * 1_000_000_000)
                .count() as f64;
            let t = second as f64;
            let due = 100.0 * 0.5 + profile.arrivals_by(t - 0.5);
            assert!(
                (by - due).abs() <= slots as f64,
                "by {t} s: {by}, due {due}"
            );
        }
        // Constant arrivals of a constant profile are those of a constant rate.
        let constant = RateProfile::parse("constant:rate=300").unwrap();
        let mut a = Schedule::profiled(constant, 1.0, Arrival::Constant, (1, 3), 0.0, 7);
        let mut b = Schedule::new(100.0, Arrival::Constant, (1, 3), 0.0, 7);
        for _ in 0..1000 {
            let (x, y) = (a.next(), b.next());
            assert!(x.abs_diff(y) <= 1, "{x} against {y}");
        }
    }

    /// Issue 63: over a k6-like sequence (up from 0 to 3,000/s over 2 s, 3,000/s for 2 s, down
    /// to 0 over 2 s) the slots' arrivals in each segment's window are the segment's integral
    /// (3,000, 6,000, 3,000): within one per slot evenly spaced, within 4 standard deviations
    /// (4 sqrt(n), the Poisson count's) with Poisson gaps.
    #[test]
    fn slots_follow_a_sequence_segment_by_segment() {
        let profile = RateProfile::parse(
            "ramp:from=0,to=3000,over=2s; hold:rate=3000,for=2s; ramp:from=3000,to=0,over=2s",
        )
        .unwrap();
        let slots = 4;
        for arrival in [Arrival::Constant, Arrival::Poisson] {
            let mut times: Vec<u64> = Vec::new();
            for i in 0..slots {
                let mut s = Schedule::profiled(profile.clone(), 0.0, arrival, (i, slots), 0.0, 11);
                // The profile ends at 0 ops/s: each slot runs out of arrivals.
                loop {
                    let t = s.next();
                    if t == u64::MAX {
                        break;
                    }
                    times.push(t);
                    assert!(times.len() < 20_000, "12,000 due");
                }
            }
            for (from, to, due) in [(0, 2, 3000.0_f64), (2, 4, 6000.0), (4, 6, 3000.0)] {
                let n = times
                    .iter()
                    .filter(|&&t| t >= from * 1_000_000_000 && t < to * 1_000_000_000)
                    .count() as f64;
                let within = match arrival {
                    Arrival::Constant => slots as f64,
                    Arrival::Poisson => 4.0 * due.sqrt(),
                };
                assert!(
                    (n - due).abs() <= within,
                    "{arrival:?} from {from} s to {to} s: {n}, {due} due"
                );
            }
            assert!(times.iter().all(|&t| t <= 6_000_000_000), "{arrival:?}");
        }
    }

    #[test]
    fn a_profile_that_ends_at_zero_runs_out_of_arrivals() {
        let profile = RateProfile::parse("ramp:from=100,to=0,over=2s").unwrap();
        let mut s = Schedule::profiled(profile, 0.0, Arrival::Poisson, (0, 1), 0.0, 1);
        let mut n = 0;
        while s.next() != u64::MAX {
            n += 1;
            assert!(n < 1000, "100 expected");
        }
        assert!((60..140).contains(&n), "{n} arrivals, 100 expected");
    }
}
