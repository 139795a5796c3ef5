//! A quantile's distribution-free 95% confidence interval from order statistics (David & Nagaraja,
//! "Order Statistics", 2003, section 7.1; what Lancet, Kogias et al., USENIX ATC 2019, reports for
//! its tail latencies once it has checked its samples are independent): of n independent values,
//! the number X at or below the true q-quantile is Binomial(n, q), so the values of ranks l and u
//! enclose it with probability P(l <= X < u).

use statrs::distribution::{Binomial, DiscreteCDF};

/// The ranks (1-based, of the n values sorted) of the 95% interval's ends: `lower` is the largest
/// rank l with P(X < l) <= 2.5%, `upper` the smallest u with P(X >= u) <= 2.5%. Either is `None`
/// when the n values cannot bound the quantile on that side (too few of them below, or above, it:
/// 0.99^n > 2.5%, n < 368, leaves a p99 without an upper bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankInterval {
    pub lower: Option<u64>,
    pub upper: Option<u64>,
}

pub fn quantile_ranks(n: u64, q: f64) -> RankInterval {
    if n == 0 || !(0.0..1.0).contains(&q) || q <= 0.0 {
        return RankInterval {
            lower: None,
            upper: None,
        };
    }
    let b = Binomial::new(q, n).expect("q within (0, 1)");
    // P(X <= k) for k < 0 is 0.
    let cdf = |k: i64| if k < 0 { 0.0 } else { b.cdf(k as u64) };
    // The largest l in 1..=n with P(X <= l - 1) <= 0.025.
    let lower = {
        let (mut lo, mut hi) = (0i64, n as i64); // invariant: cdf(lo - 1) <= 0.025 (lo = 0 trivially)
        while lo < hi {
            let mid = (lo + hi + 1) / 2;
            if cdf(mid - 1) <= 0.025 {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        (lo >= 1).then_some(lo as u64)
    };
    // The smallest u in 1..=n with P(X <= u - 1) >= 0.975.
    let upper = {
        let (mut lo, mut hi) = (1i64, n as i64 + 1); // n + 1: none
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cdf(mid - 1) >= 0.975 {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        (lo <= n as i64).then_some(lo as u64)
    };
    RankInterval { lower, upper }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_a_hundred_values() {
        // The classical table: for n = 100 the median's 95% interval is ranks 40 to 61.
        let r = quantile_ranks(100, 0.5);
        assert_eq!((r.lower, r.upper), (Some(40), Some(61)));
    }

    #[test]
    fn a_p99_needs_enough_values_above_it() {
        // 0.99^367 = 2.5%: with 367 values the largest is not yet a 97.5% upper bound.
        assert_eq!(quantile_ranks(360, 0.99).upper, None);
        assert_eq!(quantile_ranks(400, 0.99).upper, Some(400));
        let r = quantile_ranks(100_000, 0.99);
        let (l, u) = (r.lower.unwrap() as f64, r.upper.unwrap() as f64);
        // Normal approximation: 99,000 +- 1.96 sqrt(990) = +- 61.7.
        assert!(
            (l - (99_000.0 - 61.7)).abs() <= 2.0 && (u - (99_001.0 + 61.7)).abs() <= 2.0,
            "{r:?}"
        );
        assert_eq!(
            quantile_ranks(0, 0.99),
            RankInterval {
                lower: None,
                upper: None
            }
        );
    }
}
