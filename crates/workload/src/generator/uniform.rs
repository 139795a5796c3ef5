//! YCSB's `UniformLongGenerator`: every value of `lb..=ub` equally likely.

use rand::Rng;

/// YCSB's `UniformLongGenerator`: every value of `lb..=ub` equally likely.
#[derive(Debug, Clone, Copy)]
pub struct Uniform {
    lb: u64,
    ub: u64,
}

impl Uniform {
    pub fn new(lb: u64, ub: u64) -> Self {
        Uniform { lb, ub }
    }

    pub fn next<R: Rng>(&self, rng: &mut R) -> u64 {
        rng.random_range(self.lb..=self.ub)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn covers_the_range_evenly() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(5);
        let g = Uniform::new(100, 199);
        let mut counts = [0u32; 100];
        for _ in 0..100_000 {
            let v = g.next(&mut rng);
            assert!((100..=199).contains(&v));
            counts[(v - 100) as usize] += 1;
        }
        // Each value expects 1000; a fair generator stays well within +-20%.
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }
}
