//! YCSB's `ExponentialGenerator`: `percentile` percent of values fall below `range`.

use rand::Rng;

/// YCSB's `ExponentialGenerator`: `percentile` percent of values fall below `range`.
#[derive(Debug, Clone, Copy)]
pub struct Exponential {
    gamma: f64,
}

impl Exponential {
    pub fn new(percentile: f64, range: f64) -> Self {
        Exponential {
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    pub fn next<R: Rng>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.random();
        (-u.ln() / self.gamma) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn percentile_of_values_falls_below_range() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(11);
        let g = Exponential::new(95.0, 1000.0);
        let n = 100_000;
        let below = (0..n).filter(|_| g.next(&mut rng) < 1000).count();
        let share = below as f64 / n as f64;
        assert!((0.94..0.96).contains(&share), "share below range {share}");
    }
}
