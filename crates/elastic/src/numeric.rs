//! Natural cubic splines and adaptive Simpson quadrature, as Dory's method integrates its curves.
//!
//! Written here rather than taken from a crate: the maintained numeric crates either bring a whole
//! linear-algebra stack (peroxide, nalgebra-based ones) or lack natural cubic splines; these are
//! forty lines of textbook numerics, checked against closed forms in the tests.

/// The natural cubic spline through `(xs[i], ys[i])` (xs strictly increasing): second derivative 0 at
/// both ends. Outside the knots it continues the end segments' cubics.
#[derive(Debug, Clone)]
pub struct Spline {
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// Second derivatives at the knots.
    m: Vec<f64>,
}

impl Spline {
    /// `None` with fewer than two points or x values not strictly increasing.
    pub fn natural(xs: &[f64], ys: &[f64]) -> Option<Spline> {
        let n = xs.len();
        if n < 2
            || ys.len() != n
            || xs
                .windows(2)
                .any(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
        {
            return None;
        }
        let mut m = vec![0.0; n];
        if n > 2 {
            // Tridiagonal system for the inner second derivatives (Thomas algorithm).
            let h: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
            let k = n - 2;
            let (mut diag, mut rhs) = (vec![0.0; k], vec![0.0; k]);
            let mut upper = vec![0.0; k];
            for i in 0..k {
                diag[i] = 2.0 * (h[i] + h[i + 1]);
                upper[i] = h[i + 1];
                rhs[i] = 6.0 * ((ys[i + 2] - ys[i + 1]) / h[i + 1] - (ys[i + 1] - ys[i]) / h[i]);
            }
            for i in 1..k {
                let w = h[i] / diag[i - 1];
                diag[i] -= w * upper[i - 1];
                rhs[i] -= w * rhs[i - 1];
            }
            m[k] = rhs[k - 1] / diag[k - 1];
            for i in (0..k - 1).rev() {
                m[i + 1] = (rhs[i] - upper[i] * m[i + 2]) / diag[i];
            }
        }
        Some(Spline {
            xs: xs.to_vec(),
            ys: ys.to_vec(),
            m,
        })
    }

    pub fn eval(&self, x: f64) -> f64 {
        let n = self.xs.len();
        let i = match self.xs.partition_point(|&k| k <= x) {
            0 => 0,
            p if p >= n => n - 2,
            p => p - 1,
        };
        let (x0, x1) = (self.xs[i], self.xs[i + 1]);
        let h = x1 - x0;
        let (a, b) = ((x1 - x) / h, (x - x0) / h);
        a * self.ys[i]
            + b * self.ys[i + 1]
            + ((a * a * a - a) * self.m[i] + (b * b * b - b) * self.m[i + 1]) * h * h / 6.0
    }
}

/// The integral of `f` over `[a, b]` by adaptive Simpson quadrature to about `tolerance`.
pub fn integrate(f: &dyn Fn(f64) -> f64, a: f64, b: f64, tolerance: f64) -> f64 {
    // Also 0 for NaN bounds.
    if b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
        return 0.0;
    }
    let (fa, fb, fm) = (f(a), f(b), f((a + b) / 2.0));
    let whole = (b - a) / 6.0 * (fa + 4.0 * fm + fb);
    simpson(f, a, b, fa, fm, fb, whole, tolerance, 48)
}

#[allow(clippy::too_many_arguments)]
fn simpson(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    fa: f64,
    fm: f64,
    fb: f64,
    whole: f64,
    tolerance: f64,
    depth: u32,
) -> f64 {
    let m = (a + b) / 2.0;
    let (lm, rm) = ((a + m) / 2.0, (m + b) / 2.0);
    let (flm, frm) = (f(lm), f(rm));
    let left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
    let right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
    let delta = left + right - whole;
    if depth == 0 || delta.abs() <= 15.0 * tolerance {
        return left + right + delta / 15.0;
    }
    simpson(f, a, m, fa, flm, fm, left, tolerance / 2.0, depth - 1)
        + simpson(f, m, b, fm, frm, fb, right, tolerance / 2.0, depth - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simpson_matches_closed_forms() {
        let sin = |x: f64| x.sin();
        assert!((integrate(&sin, 0.0, std::f64::consts::PI, 1e-10) - 2.0).abs() < 1e-8);
        // A kink (max(0, .)) is handled by subdividing around it.
        let hinge = |x: f64| (x - 1.0).max(0.0);
        assert!((integrate(&hinge, 0.0, 3.0, 1e-10) - 2.0).abs() < 1e-7);
        assert_eq!(integrate(&sin, 1.0, 1.0, 1e-9), 0.0);
    }

    #[test]
    fn the_spline_interpolates_and_is_exact_on_lines() {
        let xs = [0.0, 1.0, 2.5, 4.0];
        let line: Vec<f64> = xs.iter().map(|x| 3.0 * x - 1.0).collect();
        let s = Spline::natural(&xs, &line).unwrap();
        for x in [0.0, 0.3, 1.7, 3.9] {
            assert!((s.eval(x) - (3.0 * x - 1.0)).abs() < 1e-12);
        }
        let ys = [1.0, 4.0, 2.0, 5.0];
        let s = Spline::natural(&xs, &ys).unwrap();
        for (x, y) in xs.iter().zip(ys) {
            assert!((s.eval(*x) - y).abs() < 1e-12);
        }
        // Natural end conditions: the curve is straight at the ends (second difference ~ 0).
        let d2 = s.eval(0.02) - 2.0 * s.eval(0.01) + s.eval(0.0);
        assert!(d2.abs() < 1e-5, "{d2}");
        assert!(Spline::natural(&[0.0, 0.0], &[1.0, 2.0]).is_none());
        // The integral of a spline through samples of x^2 on [0, 2] is close to 8/3.
        let xs: Vec<f64> = (0..=20).map(|i| i as f64 / 10.0).collect();
        let sq: Vec<f64> = xs.iter().map(|x| x * x).collect();
        let s = Spline::natural(&xs, &sq).unwrap();
        assert!((integrate(&|x| s.eval(x), 0.0, 2.0, 1e-10) - 8.0 / 3.0).abs() < 1e-3);
    }
}
