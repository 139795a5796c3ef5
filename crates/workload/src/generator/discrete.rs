//! YCSB's `DiscreteGenerator`: picks one of several values with probability proportional to its weight.

use rand::Rng;

/// YCSB's `DiscreteGenerator`: picks one of several values with probability proportional to its weight.
#[derive(Debug, Clone)]
pub struct Discrete<T: Copy> {
    /// (value, weight / sum of weights), in insertion order as YCSB walks them.
    choices: Vec<(T, f64)>,
}

impl<T: Copy> Discrete<T> {
    /// Zero weights are dropped; the caller guarantees a positive total.
    pub fn new(weighted: &[(T, f64)]) -> Self {
        let sum: f64 = weighted.iter().map(|(_, w)| w).sum();
        let choices = weighted
            .iter()
            .filter(|(_, w)| *w > 0.0)
            .map(|&(v, w)| (v, w / sum))
            .collect();
        Discrete { choices }
    }

    pub fn next<R: Rng>(&self, rng: &mut R) -> T {
        let mut chooser: f64 = rng.random();
        for &(v, share) in &self.choices {
            if chooser < share {
                return v;
            }
            chooser -= share;
        }
        // Floating-point rounding can leave a sliver past the last share.
        self.choices.last().expect("at least one positive weight").0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn proportions_are_respected() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(17);
        let g = Discrete::new(&[('r', 0.5), ('u', 0.3), ('i', 0.0), ('s', 0.2)]);
        let n = 100_000;
        let mut counts = std::collections::HashMap::new();
        for _ in 0..n {
            *counts.entry(g.next(&mut rng)).or_insert(0) += 1;
        }
        assert!(!counts.contains_key(&'i'));
        for (c, p) in [('r', 0.5), ('u', 0.3), ('s', 0.2)] {
            let share = counts[&c] as f64 / n as f64;
            assert!((share - p).abs() < 0.01, "{c}: {share}");
        }
    }
}
