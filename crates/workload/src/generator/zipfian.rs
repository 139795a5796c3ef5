//! YCSB's default zipfian constant.

use rand::Rng;

/// YCSB's default zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// YCSB's `ZipfianGenerator` (Gray et al., "Quickly Generating Billion-Record Synthetic Databases"):
/// item `min` is the most popular, then `min + 1`, and so on.
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    /// 1 + 0.5^theta: the bound below which the second item is returned (constant, so computed once).
    second_item_bound: f64,
    /// `alpha` when it is an integer up to rounding (100 for YCSB's 0.99): `powi` then replaces `powf`,
    /// a few multiplications instead of a libm call, with the same result to about 1e-15.
    alpha_int: Option<i32>,
    count_for_zeta: u64,
}

/// Terms [`zeta_range`] sums one by one; beyond them, its tail comes from the Euler-Maclaurin formula.
pub const EXACT_ZETA_TERMS: u64 = 10_000_000;

/// zeta(n) summed from `start` items to `n` items on top of `initial`, as YCSB's incremental `zeta`.
/// YCSB sums every term (O(n)): with `requestdistribution=latest` or a zipfian scan length over
/// 10^11 items that took hours before the first operation. Past [`EXACT_ZETA_TERMS`] terms the tail
/// sum of k^-theta is its integral plus the Euler-Maclaurin corrections (f(a) + f(b)) / 2 and
/// (f'(b) - f'(a)) / 12, whose error there is below 1e-25 of the sum.
pub fn zeta_range(start: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let exact_end = n.min(start.saturating_add(EXACT_ZETA_TERMS));
    let mut sum = initial;
    for i in start..exact_end {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    if exact_end < n {
        // Terms k = exact_end + 1 ..= n.
        let (a, b) = ((exact_end + 1) as f64, n as f64);
        let f = |x: f64| x.powf(-theta);
        let df = |x: f64| -theta * x.powf(-theta - 1.0);
        let integral = if (theta - 1.0).abs() < 1e-12 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        };
        sum += integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0;
    }
    sum
}

/// zeta(n) for `theta`, computed once per distinct (n, theta) in a process: a record of 1,000
/// zipfian columns of 100 M values each summed 10 M terms per column (about 25 min to check);
/// a file's columns, its load and its run now share each sum.
pub fn zeta(n: u64, theta: f64) -> f64 {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// Distinct sums kept; a process that needs more starts over (each sum is still right).
    const KEPT: usize = 4096;
    static SUMS: Mutex<Option<HashMap<(u64, u64), f64>>> = Mutex::new(None);
    let key = (n, theta.to_bits());
    if let Some(z) = SUMS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(&key).copied())
    {
        return z;
    }
    ZETA_SUMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let z = zeta_range(0, n, theta, 0.0);
    let mut sums = SUMS.lock().unwrap_or_else(|e| e.into_inner());
    let map = sums.get_or_insert_with(HashMap::new);
    if map.len() >= KEPT {
        map.clear();
    }
    map.insert(key, z);
    z
}

/// How many sums [`zeta`] has computed in this process (the rest came from its cache).
pub fn zeta_sums_computed() -> u64 {
    ZETA_SUMS.load(std::sync::atomic::Ordering::Relaxed)
}

static ZETA_SUMS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Zipfian {
    /// Items `min..=max` with the default constant; computes zeta(n) (O(n), done once and cloned to workers).
    pub fn new(min: u64, max: u64) -> Self {
        Self::with_constant(min, max, ZIPFIAN_CONSTANT)
    }

    pub fn with_constant(min: u64, max: u64, theta: f64) -> Self {
        let items = max - min + 1;
        Self::with_zetan(min, max, theta, zeta(items, theta))
    }

    /// With a precomputed zeta(n), as `ScrambledZipfianGenerator` does for its 10^10 items.
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64) -> Self {
        let items = max - min + 1;
        let zeta2theta = zeta_range(0, 2, theta, 0.0);
        let alpha = 1.0 / (1.0 - theta);
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian {
            items,
            base: min,
            theta,
            zeta2theta,
            alpha,
            zetan,
            eta,
            second_item_bound: 1.0 + 0.5f64.powf(theta),
            alpha_int: integral(alpha),
            count_for_zeta: items,
        }
    }

    pub fn items(&self) -> u64 {
        self.items
    }

    pub fn next<R: Rng>(&mut self, rng: &mut R) -> u64 {
        self.next_with_count(rng, self.items)
    }

    /// A value in `base..base + itemcount`; the item count may grow (as for "latest"), and zeta is then
    /// extended incrementally exactly as YCSB does (including its use of the original item count in eta).
    pub fn next_with_count<R: Rng>(&mut self, rng: &mut R, itemcount: u64) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta_range(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta))
                / (1.0 - self.zeta2theta / self.zetan);
        }
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < self.second_item_bound {
            return self.base + 1;
        }
        let x = self.eta * u - self.eta + 1.0;
        let p = match self.alpha_int {
            Some(n) => x.powi(n),
            None => x.powf(self.alpha),
        };
        self.base + (itemcount as f64 * p) as u64
    }
}

fn integral(alpha: f64) -> Option<i32> {
    let r = alpha.round();
    ((alpha - r).abs() < 1e-9 && (1.0..=1000.0).contains(&r)).then_some(r as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeta_past_the_exact_terms_matches_the_full_sum() {
        let n = EXACT_ZETA_TERMS + 3_000_000;
        let theta = ZIPFIAN_CONSTANT;
        let mut full = 0.0;
        for i in 0..n {
            full += 1.0 / ((i + 1) as f64).powf(theta);
        }
        let fast = zeta_range(0, n, theta, 0.0);
        assert!(((fast - full) / full).abs() < 1e-12, "{fast} vs {full}");
        // Incremental, as a growing key space updates it: the same sum.
        let grown = zeta_range(n / 2, n, theta, zeta_range(0, n / 2, theta, 0.0));
        assert!(((grown - full) / full).abs() < 1e-12, "{grown} vs {full}");
        // 10^11 items: in no time, and between the bounds of the integral test.
        let huge = zeta_range(0, 100_000_000_000, theta, 0.0);
        let upper = 1.0 + (1.0 - 1e11f64.powf(1.0 - theta)) / (theta - 1.0);
        assert!(huge > full && huge < upper, "{huge} (upper {upper})");
    }
    use rand::SeedableRng;

    #[test]
    fn integer_power_agrees_with_powf() {
        let alpha = 1.0 / (1.0 - ZIPFIAN_CONSTANT);
        assert_eq!(integral(alpha), Some(100));
        for i in 1..10_000 {
            let x = i as f64 / 10_000.0;
            let (a, b) = (x.powi(100), x.powf(alpha));
            assert!((a - b).abs() <= b * 1e-12, "{x}: {a} vs {b}");
        }
        assert_eq!(integral(1.0 / (1.0 - 0.5)), Some(2));
        assert_eq!(integral(1.0 / (1.0 - 0.7)), None);
    }

    #[test]
    fn stays_in_range_and_is_skewed_to_the_first_items() {
        let mut rng = crate::generator::WorkerRng::seed_from_u64(1);
        let mut z = Zipfian::new(10, 1009);
        let mut counts = vec![0u32; 1000];
        let n = 200_000;
        for _ in 0..n {
            let v = z.next(&mut rng);
            assert!((10..=1009).contains(&v));
            counts[(v - 10) as usize] += 1;
        }
        // Expected share of item 0 is 1/zeta(1000, 0.99) ~ 0.13; item 0 beats item 1 beats item 10.
        let share0 = counts[0] as f64 / n as f64;
        assert!(
            (0.11..0.15).contains(&share0),
            "share of most popular item {share0}"
        );
        assert!(counts[0] > counts[1] && counts[1] > counts[10] && counts[10] > counts[500]);
        // The top 10% of items take the bulk of the requests.
        let top: u32 = counts[..100].iter().sum();
        assert!(top as f64 / n as f64 > 0.6);
    }
}
