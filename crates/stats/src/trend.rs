//! Is a series going somewhere? The Mann-Kendall test for a monotonic trend (Mann 1945, Kendall
//! 1975; with the variance's correction for tied values, as in Gilbert, "Statistical Methods for
//! Environmental Pollution Monitoring", 1987, section 16.4) and Sen's slope (Sen 1968), the median
//! of the slopes between every pair of points: rank-based, so one outlier neither makes nor hides a
//! trend. The saturation search tests a step's intervals with it: a queue that grows through the
//! step (the offered rate above what the database serves) shows as latency rising with time.
//!
//! Assumption: the points are independent apart from the trend. Neighbouring intervals of a queue
//! near its capacity are positively correlated, which makes the test find trends too often; the
//! search therefore also asks the slope to be material (a share of the step's scale), not only
//! significant.

use statrs::distribution::{ContinuousCDF, Normal};

/// The test's figures for one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    /// Points in the series.
    pub n: usize,
    /// Mann-Kendall's S: the pairs that rise minus those that fall.
    pub s: i64,
    /// S standardised (continuity-corrected), approximately standard normal without a trend.
    pub z: f64,
    /// One-sided p-values: of a rising, and of a falling trend.
    pub p_rising: f64,
    pub p_falling: f64,
    /// Sen's slope: the median of (x_j - x_i) / (j - i) over every pair i < j, per point.
    pub slope: f64,
}

/// The trend of `series` (points equally spaced in time); `None` with fewer than 3 points, where no
/// ordering can be told from chance.
pub fn mann_kendall(series: &[f64]) -> Option<Trend> {
    let n = series.len();
    if n < 3 {
        return None;
    }
    let mut s = 0i64;
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let d = series[j] - series[i];
            s += if d > 0.0 {
                1
            } else if d < 0.0 {
                -1
            } else {
                0
            };
            slopes.push(d / (j - i) as f64);
        }
    }
    let var = variance_of_s(series);
    let z = if var <= 0.0 {
        0.0
    } else if s > 0 {
        (s - 1) as f64 / var.sqrt()
    } else if s < 0 {
        (s + 1) as f64 / var.sqrt()
    } else {
        0.0
    };
    let normal = Normal::new(0.0, 1.0).expect("the standard normal");
    Some(Trend {
        n,
        s,
        z,
        p_rising: 1.0 - normal.cdf(z),
        p_falling: normal.cdf(z),
        slope: crate::median(slopes),
    })
}

/// Var(S) = [n(n-1)(2n+5) - sum over groups of tied values t(t-1)(2t+5)] / 18.
fn variance_of_s(series: &[f64]) -> f64 {
    let n = series.len() as f64;
    let mut sorted = series.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j;
    }
    (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rising_line_is_a_trend_and_its_slope_is_sens() {
        let line: Vec<f64> = (0..10).map(|i| 5.0 + 2.0 * i as f64).collect();
        let t = mann_kendall(&line).unwrap();
        assert_eq!(t.s, 45);
        assert!(t.p_rising < 0.001, "{t:?}");
        assert!(t.p_falling > 0.999, "{t:?}");
        assert_eq!(t.slope, 2.0);
        // One wild point changes neither the verdict nor the slope much.
        let mut outlier = line.clone();
        outlier[3] = 1000.0;
        let o = mann_kendall(&outlier).unwrap();
        assert!(o.p_rising < 0.01 && (o.slope - 2.0).abs() < 0.5, "{o:?}");
    }

    #[test]
    fn known_values_of_s_and_its_variance() {
        // Gilbert's example form: n = 4 without ties, S = 4 (pairs: +,+,-,+,+,... counted below).
        let x = [1.0, 3.0, 2.0, 4.0];
        let t = mann_kendall(&x).unwrap();
        // Pairs: (1,3)+ (1,2)+ (1,4)+ (3,2)- (3,4)+ (2,4)+ = 4.
        assert_eq!(t.s, 4);
        // Var = 4*3*13/18 = 8.667; z = (4 - 1) / sqrt(8.667) = 1.019.
        assert!((t.z - 3.0 / (4.0 * 3.0 * 13.0 / 18.0_f64).sqrt()).abs() < 1e-12);
        // Ties lower the variance: three equal values of five.
        let tied = [1.0, 1.0, 1.0, 2.0, 3.0];
        let v = variance_of_s(&tied);
        assert!((v - (5.0 * 4.0 * 15.0 - 3.0 * 2.0 * 11.0) / 18.0).abs() < 1e-12);
    }

    #[test]
    fn no_trend_in_noise_or_a_constant() {
        // A fixed, trendless pattern (alternating around a level) and a constant.
        let zigzag: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 10.0 } else { 12.0 })
            .collect();
        let t = mann_kendall(&zigzag).unwrap();
        assert!(t.p_rising > 0.05 && t.p_falling > 0.05, "{t:?}");
        let flat = mann_kendall(&[3.0; 8]).unwrap();
        assert_eq!((flat.s, flat.z, flat.slope), (0, 0.0, 0.0));
        assert!(mann_kendall(&[1.0, 2.0]).is_none());
    }
}
