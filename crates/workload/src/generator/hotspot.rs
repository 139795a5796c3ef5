//! YCSB's `HotspotIntegerGenerator`: most requests go to a hot fraction of the range.

use rand::Rng;

use super::abs_long_mod;

/// YCSB's `HotspotIntegerGenerator`: a fraction `hot_opn_fraction` of requests goes to the first
/// `hot_set_fraction` of the range, the rest uniformly to the remainder.
#[derive(Debug, Clone, Copy)]
pub struct Hotspot {
    lower: u64,
    hot_interval: u64,
    cold_interval: u64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    /// Values `lower..=upper`; fractions are in 0..=1 (validated by the caller).
    pub fn new(lower: u64, upper: u64, hot_set_fraction: f64, hot_opn_fraction: f64) -> Self {
        let interval = upper - lower + 1;
        let hot_interval = (interval as f64 * hot_set_fraction) as u64;
        Hotspot {
            lower,
            hot_interval,
            cold_interval: interval - hot_interval,
            hot_opn_fraction,
        }
    }

    pub fn next<R: Rng>(&self, rng: &mut R) -> u64 {
        let chooser: f64 = rng.random();
        if (chooser < self.hot_opn_fraction && self.hot_interval > 0) || self.cold_interval == 0 {
            self.lower + abs_long_mod(rng, self.hot_interval)
        } else {
            self.lower + self.hot_interval + abs_long_mod(rng, self.cold_interval)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn hot_set_receives_the_hot_fraction_of_requests() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(9);
        let g = Hotspot::new(0, 999, 0.2, 0.8);
        let n = 100_000;
        let mut hot = 0;
        for _ in 0..n {
            let v = g.next(&mut rng);
            assert!(v < 1000);
            if v < 200 {
                hot += 1;
            }
        }
        let share = hot as f64 / n as f64;
        assert!((0.79..0.81).contains(&share), "hot share {share}");
    }
}
