//! A rate an open loop can keep, checked once: the one home of its bounds and of the words every
//! error about a rate says them in (`--target`, `target`, `loadtarget`, a workload file's
//! `run.target` and `load.target`, an experiment's target, each rate of a profile).

use super::{MAX_RATE_OPS_S, MIN_RATE_OPS_S};

/// Operations (records, in a load) per second, from [`MIN_RATE_OPS_S`] to [`MAX_RATE_OPS_S`]. Made
/// only by [`Rate::new`] and [`Rate::or_zero`], so that a value of this type was checked.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Rate(f64);

impl Rate {
    /// `ops_s` if an open loop can keep it; else the bounds in words ("a rate from 0.001 to 1e9
    /// ops/s").
    pub fn new(ops_s: f64) -> Result<Rate, String> {
        if (MIN_RATE_OPS_S..=MAX_RATE_OPS_S).contains(&ops_s) {
            Ok(Rate(ops_s))
        } else {
            Err(format!(
                "a rate from {MIN_RATE_OPS_S} to {MAX_RATE_OPS_S:e} ops/s"
            ))
        }
    }

    /// A rate, or 0 for none (a closed loop, a profile's pause): None for 0.
    pub fn or_zero(ops_s: f64) -> Result<Option<Rate>, String> {
        if ops_s == 0.0 {
            return Ok(None);
        }
        Rate::new(ops_s)
            .map(Some)
            .map_err(|bounds| format!("expected 0 or {bounds}"))
    }

    /// Operations per second.
    pub fn ops_s(self) -> f64 {
        self.0
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Rate;

    /// One rule and one text for every rate: a target needs a rate, a profile's segment may pause.
    #[test]
    fn a_rate_is_checked_once_with_one_text() {
        assert_eq!(Rate::new(1e9).unwrap().ops_s(), 1e9);
        assert_eq!(Rate::new(0.001).unwrap().ops_s(), 0.001);
        for bad in [0.0, -5.0, 0.0005, 2e9, f64::NAN, f64::INFINITY] {
            assert_eq!(
                Rate::new(bad).unwrap_err(),
                "a rate from 0.001 to 1e9 ops/s",
                "{bad}"
            );
        }
        assert_eq!(Rate::or_zero(0.0), Ok(None));
        assert_eq!(Rate::or_zero(5.0), Ok(Some(Rate::new(5.0).unwrap())));
        assert_eq!(
            Rate::or_zero(-1.0).unwrap_err(),
            "expected 0 or a rate from 0.001 to 1e9 ops/s"
        );
    }
}
