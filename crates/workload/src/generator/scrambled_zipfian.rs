//! YCSB's `ScrambledZipfianGenerator`: zipfian popularity spread over the key space by hashing.

use rand::Rng;

use super::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use crate::keys::fnvhash64;

/// YCSB's `ScrambledZipfianGenerator.ITEM_COUNT`: the zipfian runs over 10^10 items so that the
/// precomputed zeta below applies whatever the record count.
pub const ITEM_COUNT: u64 = 10_000_000_000;
/// zeta(ITEM_COUNT, 0.99), precomputed by YCSB.
pub const ZETAN: f64 = 26.46902820178302;

/// Zipfian popularity, with the popular items scattered over the key space by FNV hashing.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    min: u64,
    item_count: u64,
    inner: Zipfian,
}

impl ScrambledZipfian {
    /// Items `min..=max`.
    pub fn new(min: u64, max: u64) -> Self {
        ScrambledZipfian {
            min,
            item_count: max - min + 1,
            inner: Zipfian::with_zetan(0, ITEM_COUNT, ZIPFIAN_CONSTANT, ZETAN),
        }
    }

    pub fn next<R: Rng>(&mut self, rng: &mut R) -> u64 {
        let v = self.inner.next(rng);
        self.min + (fnvhash64(v as i64) as u64) % self.item_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn skewed_but_scattered() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(3);
        let mut g = ScrambledZipfian::new(0, 999);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            let v = g.next(&mut rng);
            assert!(v < 1000);
            counts[v as usize] += 1;
        }
        let mut sorted = counts.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        // Skew: the hottest 10% of keys receive about 30% of requests (10% if uniform; scrambling
        // 10^10 zipfian items onto 1000 keys flattens the curve, as in YCSB), the hottest key about
        // 1/zeta(10^10) = 3.8% (0.1% if uniform).
        let top: u32 = sorted[..100].iter().sum();
        assert!(
            sorted[0] as f64 / n as f64 > 0.03,
            "hottest key share {}",
            sorted[0] as f64 / n as f64
        );
        assert!(
            top as f64 / n as f64 > 0.25,
            "top-10% share {}",
            top as f64 / n as f64
        );
        // Scattered: the hottest key is not simply key 0 and hot keys are not all in the first tenth.
        let hot_in_first_tenth = (0..100).filter(|&i| counts[i] >= sorted[99]).count();
        assert!(hot_in_first_tenth < 50);
        // Coverage: nearly every key is requested at least once.
        assert!(counts.iter().filter(|&&c| c > 0).count() > 950);
    }
}
