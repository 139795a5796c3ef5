//! The statistics every part of scalebench uses, in one place: mean, sample standard deviation and
//! median; a mean's 95% confidence interval (Student's t, n - 1 degrees of freedom), for experiment
//! cells over their repetitions; and, for comparing two runs, each interval series' effective sample
//! size (lag-1 autocorrelation), Welch's t-test on those sizes and Holm's step-down adjustment; and
//! the knee of a thread-count series (Wegert's calibration rule); a series' trend
//! ([`trend::mann_kendall`]); a quantile's order-statistics interval ([`quantile::quantile_ranks`]).

pub mod quantile;
pub mod trend;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The arithmetic mean (0 for no values).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Sample standard deviation (0 for fewer than two values).
pub fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Wegert's thread calibration (studies.md, section 2: "the largest thread count where doubling still
/// raises throughput more than latency"), over points (throughput, mean latency) of doubling thread
/// counts: the index of the first point whose next one raised throughput by no larger factor than
/// latency; None while every doubling still paid. The latency is the mean: in a closed loop Little's
/// law ties it to throughput (N threads = throughput x mean latency), so the rule compares two views
/// of one measurement (doubling pays while mean latency grows by less than the square root of 2); a
/// percentile moves with the shape of the tail instead. The saturation search and the report use it.
pub fn knee(points: &[(f64, f64)]) -> Option<usize> {
    points.windows(2).position(|w| {
        let throughput = w[1].0 / w[0].0.max(1e-9);
        let latency = w[1].1 / w[0].1.max(1e-9);
        throughput <= latency
    })
}

/// The median (0 for no values).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A sample's figures: what experiment cells show for their repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for a single value.
    pub sd: f64,
    /// Half-width of the 95% confidence interval of the mean; None for a single value.
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
}

/// Student's t quantile `p` with `df` degrees of freedom (`df` > 0).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .expect("degrees of freedom > 0")
        .inverse_cdf(p)
}

/// The sample's figures, with the 95% confidence interval of its mean; `None` for no values.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let sd = sd(values);
    let ci95 = (n > 1).then(|| t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt());
    Some(Summary {
        n,
        mean: mean(values),
        sd,
        ci95,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Mean, spread and effective size of one interval series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SeriesStats {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    /// Lag-1 autocorrelation.
    pub r1: f64,
    pub n_eff: f64,
}

pub fn series_stats(v: &[f64]) -> SeriesStats {
    let n = v.len();
    let mean = if n == 0 {
        0.0
    } else {
        v.iter().sum::<f64>() / n as f64
    };
    let ss: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
    let sd = if n < 2 {
        0.0
    } else {
        (ss / (n - 1) as f64).sqrt()
    };
    let r1 = if n < 3 || ss == 0.0 {
        0.0
    } else {
        v.windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / ss
    };
    let r = r1.clamp(0.0, 0.99);
    SeriesStats {
        n,
        mean,
        sd,
        r1,
        n_eff: (n as f64 * (1.0 - r) / (1.0 + r)).max(2.0_f64.min(n as f64)),
    }
}

/// Two-sided p-value of Welch's t-test on effective sample sizes.
pub fn welch_p(a: &SeriesStats, b: &SeriesStats) -> f64 {
    if a.n < 2 || b.n < 2 {
        return 1.0;
    }
    let (va, vb) = (a.sd * a.sd / a.n_eff, b.sd * b.sd / b.n_eff);
    let se = (va + vb).sqrt();
    let diff = b.mean - a.mean;
    if se == 0.0 {
        return if diff == 0.0 { 1.0 } else { 0.0 };
    }
    let t = diff / se;
    let df = (va + vb).powi(2)
        / (va * va / (a.n_eff - 1.0).max(1.0) + vb * vb / (b.n_eff - 1.0).max(1.0));
    match StudentsT::new(0.0, 1.0, df.max(1.0)) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    }
}

/// Two-sided p-value of the difference between two proportions `p_a` and `p_b` observed over `n_a`
/// and `n_b` independent trials (the pooled two-proportion z-test). 1 when either side has no trial
/// or neither shows any success or any failure (nothing to tell apart).
pub fn two_proportion_p(p_a: f64, n_a: f64, p_b: f64, n_b: f64) -> f64 {
    if n_a <= 0.0 || n_b <= 0.0 {
        return 1.0;
    }
    let pooled = (p_a * n_a + p_b * n_b) / (n_a + n_b);
    let se = (pooled * (1.0 - pooled) * (1.0 / n_a + 1.0 / n_b)).sqrt();
    if se == 0.0 {
        return 1.0;
    }
    let z = (p_b - p_a) / se;
    match Normal::new(0.0, 1.0) {
        Ok(n) => (2.0 * (1.0 - n.cdf(z.abs()))).min(1.0),
        Err(_) => 1.0,
    }
}

/// Holm's step-down adjustment: the i-th smallest of m p-values is multiplied by (m - i), made
/// monotone, and capped at 1. Rejecting where the adjusted p < alpha keeps the family-wise error
/// rate at alpha.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_knee_is_the_last_doubling_that_paid() {
        // 1 -> 2 threads: x1.9 throughput, x1.05 latency: pays; 2 -> 4: x1.1 throughput, x1.8 latency.
        let points = [
            (1000.0, 1000.0),
            (1900.0, 1050.0),
            (2090.0, 1890.0),
            (2100.0, 3700.0),
        ];
        assert_eq!(knee(&points), Some(1));
        assert_eq!(knee(&points[..2]), None);
        assert_eq!(knee(&[]), None);
    }

    use super::*;

    #[test]
    fn autocorrelation_shrinks_the_effective_sample() {
        let white: Vec<f64> = (0..100)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        let s = series_stats(&white);
        assert!(s.r1 < -0.9);
        assert_eq!(s.n_eff, 100.0, "negative correlation is not rewarded");
        // A slow drift: neighbours alike, few independent samples.
        let drift: Vec<f64> = (0..100).map(|i| (i as f64 / 10.0).sin()).collect();
        let d = series_stats(&drift);
        assert!(d.r1 > 0.9, "{}", d.r1);
        assert!(d.n_eff < 10.0, "{}", d.n_eff);
    }

    #[test]
    fn holm_adjusts_step_down() {
        // Sorted 0.01, 0.02, 0.04 of m = 3: x3, x2, x1 -> 0.03, 0.04, 0.04 (monotone).
        let adj = holm(&[0.04, 0.01, 0.02]);
        let expect = [0.04, 0.03, 0.04];
        for (a, e) in adj.iter().zip(expect) {
            assert!((a - e).abs() < 1e-12, "{adj:?}");
        }
        // 0.5 x 2 = 1.0 first; 0.9 x 1 stays at the running maximum.
        assert_eq!(holm(&[0.9, 0.5]), vec![1.0, 1.0]);
    }

    #[test]
    fn welch_matches_a_hand_computed_case() {
        // a: mean 10, sd 1, n 10; b: mean 11, sd 1, n 10 (no autocorrelation).
        let a = SeriesStats {
            n: 10,
            mean: 10.0,
            sd: 1.0,
            r1: 0.0,
            n_eff: 10.0,
        };
        let b = SeriesStats { mean: 11.0, ..a };
        // t = 1 / sqrt(0.2) = 2.236, df = 18: two-sided p = 0.0381.
        assert!(
            (welch_p(&a, &b) - 0.0381).abs() < 0.001,
            "{}",
            welch_p(&a, &b)
        );
        assert_eq!(welch_p(&a, &a), 1.0);
        // The same difference from autocorrelated series (n_eff 2.5) is not significant.
        let (a2, b2) = (
            SeriesStats { n_eff: 2.5, ..a },
            SeriesStats { n_eff: 2.5, ..b },
        );
        assert!(welch_p(&a2, &b2) > 0.1);
    }

    #[test]
    fn two_proportions_match_a_hand_computed_case() {
        // 10 of 100 against 20 of 100: pooled 0.15, se = sqrt(0.15 * 0.85 * 0.02) = 0.050498,
        // z = 1.9803, p = 2 (1 - Phi(1.9803)) = 0.0477.
        let p = two_proportion_p(0.1, 100.0, 0.2, 100.0);
        assert!((p - 0.0477).abs() < 5e-4, "{p}");
        assert_eq!(two_proportion_p(0.0, 500.0, 0.0, 500.0), 1.0);
        assert_eq!(two_proportion_p(0.3, 0.0, 0.1, 10.0), 1.0);
        assert!(two_proportion_p(0.0, 300.0, 0.06, 300.0) < 0.001);
    }

    #[test]
    fn matches_hand_computed_values() {
        // mean 5, sample variance ((-3)^2 + (-1)^2 + 1^2 + 3^2) / 3 = 20/3, sd 2.5820;
        // t(0.975, 3) = 3.18245, ci = 3.18245 * 2.5820 / 2 = 4.1085.
        let s = summarize(&[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (4, 5.0, 2.0, 8.0));
        assert!((s.sd - 2.581_989).abs() < 1e-5, "{}", s.sd);
        assert!((s.ci95.unwrap() - 4.108_5).abs() < 1e-3, "{:?}", s.ci95);
        // Two values: t(0.975, 1) = 12.7062; sd = 0.7071; ci = 12.7062 * 0.7071 / 1.4142 = 6.3531.
        let two = summarize(&[10.0, 11.0]).unwrap();
        assert!((two.ci95.unwrap() - 6.353_1).abs() < 1e-3);
        let one = summarize(&[3.0]).unwrap();
        assert_eq!((one.sd, one.ci95), (0.0, None));
        assert!(summarize(&[]).is_none());
    }
}
