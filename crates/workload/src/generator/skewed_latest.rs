//! YCSB's `SkewedLatestGenerator`: the most recently inserted records are the most requested.

use rand::Rng;

use super::Zipfian;

/// YCSB's `SkewedLatestGenerator`: zipfian popularity counted back from the newest acknowledged insert,
/// so recently inserted records are the most requested.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    /// `last`: the newest key when the run begins (YCSB: `basis.lastValue()`).
    pub fn new(last: u64) -> Self {
        // YCSB: new ZipfianGenerator(basis.lastValue()), i.e. items 0..lastValue-1.
        let last = last.max(1);
        SkewedLatest {
            zipfian: Zipfian::new(0, last - 1),
        }
    }

    /// A key at most `max` (the newest acknowledged insert), counted back from it.
    pub fn next<R: Rng>(&mut self, rng: &mut R, max: u64) -> u64 {
        max.saturating_sub(self.zipfian.next_with_count(rng, max.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::AcknowledgedCounter;
    use rand::SeedableRng;

    #[test]
    fn favours_the_newest_keys_and_follows_new_inserts() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(13);
        let basis = AcknowledgedCounter::new(1000); // records 0..999 loaded
        let mut g = SkewedLatest::new(basis.last_value());
        let n = 50_000;
        let newest_tenth = (0..n)
            .filter(|_| g.next(&mut rng, basis.last_value()) >= 900)
            .count();
        assert!(
            newest_tenth as f64 / n as f64 > 0.6,
            "share of newest 10%: {newest_tenth}"
        );
        // After 100 more inserts are acknowledged, the new keys become the most requested.
        for _ in 0..100 {
            let k = basis.next_value();
            basis.acknowledge(k);
        }
        assert_eq!(basis.last_value(), 1099);
        let mut max_seen = 0;
        let fresh = (0..n)
            .filter(|_| {
                let v = g.next(&mut rng, basis.last_value());
                max_seen = max_seen.max(v);
                v >= 1000
            })
            .count();
        assert!(max_seen <= 1099);
        assert!(
            fresh as f64 / n as f64 > 0.5,
            "share of keys inserted during the run: {fresh}"
        );
    }
}
