//! Rate profiles (issue 43): the offered rate of an open-loop phase as a function of time since the
//! measurement window opened. A constant rate, a ramp, a staircase or a sine; the warm-up runs at
//! the profile's first rate, and after its last segment the profile holds its last rate.
//!
//! The executor needs the inverse of the arrivals a profile expects: the time by which `u`
//! arrivals are due. With Poisson arrivals it draws unit-rate exponential gaps in that "arrival
//! count" and maps each through the inverse (the time-rescaling of an inhomogeneous Poisson
//! process), so latency is still measured from each arrival's intended start.

use std::f64::consts::TAU;
use std::fmt;
use std::time::Duration;

/// The offered rate (operations per second, all slots and clients together) over the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateProfile {
    Constant {
        rate: f64,
    },
    /// From `from` to `to` linearly over `over`, then `to`.
    Ramp {
        from: f64,
        to: f64,
        over: Duration,
    },
    /// `start`, then `step` more every `every`, for `steps` steps in all (the last one held).
    Staircase {
        start: f64,
        step: f64,
        every: Duration,
        steps: u32,
    },
    /// `mean + amplitude * sin(2 pi t / period)`.
    Sine {
        mean: f64,
        amplitude: f64,
        period: Duration,
    },
}

/// Bounds of a rate an open loop can keep, in operations per second: the schedule spaces starts in
/// whole nanoseconds per slot, so beyond 1e9/s every start would be "now", and a vanishing rate
/// would put the next start past any run. One rule for `--target`, `target`, `loadtarget` and each
/// rate of a profile (a profile accepted 1e-300 ops/s that `--target` refused; issue 62, low 4).
pub const MIN_RATE_OPS_S: f64 = 0.001;
pub const MAX_RATE_OPS_S: f64 = 1e9;

/// Whether an open loop can keep `ops_s`: 0 (none asked) or a rate within the bounds above.
pub fn keepable_rate(ops_s: f64) -> bool {
    ops_s == 0.0 || (MIN_RATE_OPS_S..=MAX_RATE_OPS_S).contains(&ops_s)
}

impl RateProfile {
    /// Parses `constant:rate=R`, `ramp:from=A,to=B,over=D`, `staircase:start=A,step=S,every=D,steps=N`
    /// or `sine:mean=M,amplitude=A,period=D` (durations as `30s`, `2m`, `500ms`), and checks it.
    pub fn parse(text: &str) -> Result<RateProfile, String> {
        let text = text.trim();
        let (kind, args) = text.split_once(':').unwrap_or((text, ""));
        let mut fields: Vec<(&str, &str)> = Vec::new();
        for part in args.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}': expected NAME=VALUE"))?;
            if fields.iter().any(|(seen, _)| *seen == k.trim()) {
                return Err(format!("'{}' given twice", k.trim()));
            }
            fields.push((k.trim(), v.trim()));
        }
        let names: &[&str] = match kind {
            "constant" => &["rate"],
            "ramp" => &["from", "to", "over"],
            "staircase" => &["start", "step", "every", "steps"],
            "sine" => &["mean", "amplitude", "period"],
            _ => {
                return Err(format!(
                    "'{kind}': expected constant, ramp, staircase or sine (e.g. ramp:from=100,to=1000,over=60s)"
                ))
            }
        };
        if let Some((k, _)) = fields.iter().find(|(k, _)| !names.contains(k)) {
            return Err(format!(
                "{kind} has no '{k}': it takes {}",
                names.join(", ")
            ));
        }
        let get = |name: &str| -> Result<&str, String> {
            fields
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| format!("{kind} needs {name}= (it takes {})", names.join(", ")))
        };
        let number = |name: &str| -> Result<f64, String> {
            let v = get(name)?;
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{name}={v}: expected a number"))
        };
        let duration = |name: &str| -> Result<Duration, String> {
            let v = get(name)?;
            humantime::parse_duration(v)
                .map_err(|_| format!("{name}={v}: expected a duration such as 30s, 2m or 500ms"))
        };
        let profile = match kind {
            "constant" => RateProfile::Constant {
                rate: number("rate")?,
            },
            "ramp" => RateProfile::Ramp {
                from: number("from")?,
                to: number("to")?,
                over: duration("over")?,
            },
            "staircase" => RateProfile::Staircase {
                start: number("start")?,
                step: number("step")?,
                every: duration("every")?,
                steps: {
                    let v = get("steps")?;
                    v.parse::<u32>()
                        .map_err(|_| format!("steps={v}: expected a whole number"))?
                },
            },
            _ => RateProfile::Sine {
                mean: number("mean")?,
                amplitude: number("amplitude")?,
                period: duration("period")?,
            },
        };
        profile.check()?;
        Ok(profile)
    }

    /// A profile that never asks a negative rate or more than 1e9 ops/s, asks some rate at its
    /// start, and whose segments have a length.
    pub fn check(&self) -> Result<(), String> {
        let in_range = |name: &str, r: f64| {
            if !keepable_rate(r) {
                Err(format!(
                    "{name} = {r}: expected 0 or a rate from {MIN_RATE_OPS_S} to {MAX_RATE_OPS_S:e} ops/s"
                ))
            } else {
                Ok(())
            }
        };
        let long = |name: &str, d: Duration| {
            if d.is_zero() {
                Err(format!("{name} = 0: a profile's segment needs a length"))
            } else {
                Ok(())
            }
        };
        match *self {
            RateProfile::Constant { rate } => in_range("rate", rate)?,
            RateProfile::Ramp { from, to, over } => {
                in_range("from", from)?;
                in_range("to", to)?;
                long("over", over)?;
            }
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } => {
                if steps == 0 {
                    return Err("steps = 0: a staircase has at least one step".into());
                }
                in_range("start", start)?;
                let last = start + step * f64::from(steps - 1);
                if last < 0.0 {
                    return Err(format!(
                        "start {start} with step {step} goes negative ({last} ops/s at step {steps})"
                    ));
                }
                in_range("the last step", last)?;
                long("every", every)?;
            }
            RateProfile::Sine {
                mean,
                amplitude,
                period,
            } => {
                if amplitude < 0.0 {
                    return Err(format!("amplitude = {amplitude}: a size, not negative"));
                }
                if amplitude > mean {
                    return Err(format!(
                        "amplitude {amplitude} above mean {mean}: the rate would go negative"
                    ));
                }
                in_range("mean + amplitude", mean + amplitude)?;
                long("period", period)?;
            }
        }
        if self.rate_at(0.0) <= 0.0 {
            return Err("the profile starts at 0 ops/s: the warm-up would send nothing".into());
        }
        Ok(())
    }

    /// When the profile's arrivals end (s after the window opened): the rate is 0 from then on
    /// (a ramp or a staircase down to 0); `None` while it asks some rate for ever.
    pub fn arrivals_end(&self) -> Option<f64> {
        match *self {
            RateProfile::Ramp { to: 0.0, over, .. } => Some(over.as_secs_f64()),
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } if start + step * f64::from(steps - 1) <= 0.0 => {
                Some(every.as_secs_f64() * f64::from(steps - 1))
            }
            _ => None,
        }
    }

    /// The rate (ops/s) at `t` seconds after the window opened (before it: the first rate).
    pub fn rate_at(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match *self {
            RateProfile::Constant { rate } => rate,
            RateProfile::Ramp { from, to, over } => {
                let over = over.as_secs_f64();
                if t >= over {
                    to
                } else {
                    from + (to - from) * t / over
                }
            }
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } => {
                let k = (t / every.as_secs_f64()).floor().min(f64::from(steps - 1));
                start + step * k
            }
            RateProfile::Sine {
                mean,
                amplitude,
                period,
            } => (mean + amplitude * (TAU * t / period.as_secs_f64()).sin()).max(0.0),
        }
    }

    /// The arrivals expected from the window's opening until `t` seconds after it (`t` >= 0).
    pub fn arrivals_by(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match *self {
            RateProfile::Constant { rate } => rate * t,
            RateProfile::Ramp { from, to, over } => {
                let over = over.as_secs_f64();
                let ramp = t.min(over);
                from * ramp + (to - from) * ramp * ramp / (2.0 * over) + to * (t - over).max(0.0)
            }
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } => {
                let every = every.as_secs_f64();
                let last = f64::from(steps - 1);
                let full = (t / every).floor().min(last);
                // Steps 0..full complete, then the part of step `full` (held after the last).
                let done = start * full + step * full * (full - 1.0) / 2.0;
                done * every + (start + step * full) * (t - full * every)
            }
            RateProfile::Sine {
                mean,
                amplitude,
                period,
            } => {
                let p = period.as_secs_f64();
                mean * t + amplitude * p / TAU * (1.0 - (TAU * t / p).cos())
            }
        }
    }

    /// The time (s after the window opened) by which `u` arrivals are expected; `None` when the
    /// profile never reaches them (it ends at 0 ops/s). `from` is a time known to be at or before
    /// the answer (the previous arrival's), where the search starts.
    pub fn time_of(&self, u: f64, from: f64) -> Option<f64> {
        if u <= 0.0 {
            return Some(0.0);
        }
        if let RateProfile::Constant { rate } = *self {
            return Some(u / rate);
        }
        // Bracket [lo, hi], then Newton steps kept inside it (bisection where a step leaves it):
        // arrivals_by is increasing, its slope the rate.
        let mut lo = from.max(0.0);
        if self.arrivals_by(lo) >= u {
            lo = 0.0;
        }
        let mut width = 1e-3;
        let mut hi = lo + width;
        while self.arrivals_by(hi) < u {
            // Past the profile's end the rate holds: none left to come when it holds at 0.
            if hi > 1e12 || (hi > self.length_s() && self.rate_at(hi) <= 0.0) {
                return None;
            }
            lo = hi;
            width *= 2.0;
            hi = lo + width;
        }
        let mut t = lo;
        for _ in 0..100 {
            let f = self.arrivals_by(t) - u;
            if f.abs() < 1e-9 * u.max(1.0) || hi - lo < 1e-10 {
                break;
            }
            if f < 0.0 {
                lo = t;
            } else {
                hi = t;
            }
            let r = self.rate_at(t);
            let newton = t - f / r;
            t = if r > 0.0 && newton > lo && newton < hi {
                newton
            } else {
                (lo + hi) / 2.0
            };
        }
        Some(t)
    }

    /// The mean rate over a window of `d` (the offered rate a run's figures are compared with).
    pub fn mean_over(&self, d: Duration) -> f64 {
        let t = d.as_secs_f64();
        if t > 0.0 {
            self.arrivals_by(t) / t
        } else {
            self.rate_at(0.0)
        }
    }

    /// Where the profile's last segment starts holding (0 for a constant rate).
    pub fn length_s(&self) -> f64 {
        match *self {
            RateProfile::Constant { .. } => 0.0,
            RateProfile::Ramp { over, .. } => over.as_secs_f64(),
            RateProfile::Staircase { every, steps, .. } => every.as_secs_f64() * f64::from(steps),
            // A sine never holds: its periods repeat.
            RateProfile::Sine { .. } => f64::INFINITY,
        }
    }

    /// How the profile lies over a window of `window`: a warning when it is cut off by the
    /// window's end (the docs' `ramp ... over=90s` under a 15 s run offered a sixth of it) or ends
    /// before it and holds its last rate; none when they match, or for a sine (its periods repeat).
    pub fn fit(&self, window: Duration) -> Option<String> {
        let (length, w) = (self.length_s(), window.as_secs_f64());
        if !length.is_finite() || length <= 0.0 || (length - w).abs() < 1e-3 {
            return None;
        }
        Some(if length > w {
            format!(
                "the rate profile {self} lasts {length} s, longer than the {w} s window: it is cut off there (mean over the window {:.1} ops/s); leave --duration out to run it whole",
                self.mean_over(window)
            )
        } else {
            format!(
                "the rate profile {self} ends after {length} s and holds its last rate ({} ops/s) for the remaining {:.1} s of the {w} s window",
                self.rate_at(length),
                w - length
            )
        })
    }

    /// The same shape at `factor` times the rate (a client's share of a distributed run).
    pub fn scaled(&self, factor: f64) -> RateProfile {
        match *self {
            RateProfile::Constant { rate } => RateProfile::Constant {
                rate: rate * factor,
            },
            RateProfile::Ramp { from, to, over } => RateProfile::Ramp {
                from: from * factor,
                to: to * factor,
                over,
            },
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } => RateProfile::Staircase {
                start: start * factor,
                step: step * factor,
                every,
                steps,
            },
            RateProfile::Sine {
                mean,
                amplitude,
                period,
            } => RateProfile::Sine {
                mean: mean * factor,
                amplitude: amplitude * factor,
                period,
            },
        }
    }
}

impl fmt::Display for RateProfile {
    /// The form [`RateProfile::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One token per duration (`2500ms`, not humantime's `2s 500ms`).
        let d = |d: Duration| {
            let ms = d.as_millis();
            if Duration::from_millis(ms as u64) != d {
                humantime::format_duration(d).to_string()
            } else if ms.is_multiple_of(60_000) {
                format!("{}m", ms / 60_000)
            } else if ms.is_multiple_of(1000) {
                format!("{}s", ms / 1000)
            } else {
                format!("{ms}ms")
            }
        };
        match *self {
            RateProfile::Constant { rate } => write!(f, "constant:rate={rate}"),
            RateProfile::Ramp { from, to, over } => {
                write!(f, "ramp:from={from},to={to},over={}", d(over))
            }
            RateProfile::Staircase {
                start,
                step,
                every,
                steps,
            } => write!(
                f,
                "staircase:start={start},step={step},every={},steps={steps}",
                d(every)
            ),
            RateProfile::Sine {
                mean,
                amplitude,
                period,
            } => write!(
                f,
                "sine:mean={mean},amplitude={amplitude},period={}",
                d(period)
            ),
        }
    }
}

/// As its text form: a request carries it to a distributed run's clients, a result records it.
impl serde::Serialize for RateProfile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for RateProfile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        RateProfile::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 63: a profile cut off by the window, or ending before it, is said so with the mean
    /// the window offers (the docs' 90 s ramp from 100 to 1,000 under 15 s: 175 ops/s).
    #[test]
    fn a_profile_that_does_not_fit_its_window_says_so() {
        let ramp = RateProfile::parse("ramp:from=100,to=1000,over=90s").unwrap();
        let cut = ramp.fit(Duration::from_secs(15)).unwrap();
        assert!(
            cut.contains("lasts 90 s, longer than the 15 s window")
                && cut.contains("mean over the window 175.0 ops/s"),
            "{cut}"
        );
        let held = ramp.fit(Duration::from_secs(100)).unwrap();
        assert!(
            held.contains("holds its last rate (1000 ops/s) for the remaining 10.0 s"),
            "{held}"
        );
        assert_eq!(ramp.fit(Duration::from_secs(90)), None);
        let sine = RateProfile::parse("sine:mean=100,amplitude=50,period=10s").unwrap();
        assert_eq!(sine.fit(Duration::from_secs(15)), None);
        let constant = RateProfile::parse("constant:rate=10").unwrap();
        assert_eq!(constant.fit(Duration::from_secs(15)), None);
    }

    /// Issue 62, low 4: a profile's rates pass the rule `--target` passes, no other.
    #[test]
    fn a_profile_asks_only_rates_a_target_may_be() {
        for r in ["1e-300", "0.0005", "2e9"] {
            assert!(!keepable_rate(r.parse().unwrap()), "{r}");
            let e = RateProfile::parse(&format!("constant:rate={r}")).unwrap_err();
            assert!(e.contains("0.001 to 1e9"), "{r}: {e}");
            let e = RateProfile::parse(&format!("ramp:from=100,to={r},over=10s")).unwrap_err();
            assert!(e.contains("to = "), "{r}: {e}");
        }
        for r in ["0.001", "1e9"] {
            assert!(keepable_rate(r.parse().unwrap()), "{r}");
            RateProfile::parse(&format!("constant:rate={r}")).unwrap();
        }
        RateProfile::parse("ramp:from=100,to=0,over=10s").unwrap();
    }

    #[test]
    fn a_profile_down_to_0_says_when_its_arrivals_end() {
        let end = |p: &str| RateProfile::parse(p).unwrap().arrivals_end();
        assert_eq!(end("ramp:from=100,to=0,over=10s"), Some(10.0));
        assert_eq!(
            end("staircase:start=300,step=-100,every=5s,steps=4"),
            Some(15.0)
        );
        assert_eq!(end("staircase:start=300,step=-100,every=5s,steps=3"), None);
        assert_eq!(end("sine:mean=10,amplitude=10,period=4s"), None);
        assert_eq!(end("constant:rate=5"), None);
        // Past its end the profile asks no arrival: the schedule's time_of agrees.
        let p = RateProfile::parse("ramp:from=100,to=0,over=10s").unwrap();
        assert_eq!(p.time_of(p.arrivals_by(10.0) + 1.0, 0.0), None);
    }

    fn all() -> Vec<RateProfile> {
        [
            "constant:rate=250",
            "ramp:from=100,to=1000,over=10s",
            "ramp:from=1000,to=0,over=4s",
            "staircase:start=100,step=200,every=2s,steps=4",
            "staircase:start=500,step=-100,every=1s,steps=5",
            "sine:mean=500,amplitude=500,period=3s",
            "sine:mean=400,amplitude=100,period=750ms",
            "staircase:start=250,step=100,every=2500ms,steps=4",
            "ramp:from=1,to=2,over=2m",
        ]
        .iter()
        .map(|t| RateProfile::parse(t).unwrap())
        .collect()
    }

    /// The arrivals expected by t are the integral of the rate: checked by summing small steps.
    #[test]
    fn arrivals_by_is_the_integral_of_the_rate() {
        for p in all() {
            let dt = 1e-4;
            let mut sum = 0.0;
            for i in 0..200_000 {
                let t = i as f64 * dt;
                sum += p.rate_at(t + dt / 2.0) * dt;
                if i % 10_000 == 9_999 {
                    let expected = p.arrivals_by(t + dt);
                    assert!(
                        (sum - expected).abs() <= 1e-3 * expected.max(1.0) + 1.0,
                        "{p}: at {:.1} s {sum} summed, {expected} by the formula",
                        t + dt
                    );
                }
            }
        }
    }

    #[test]
    fn time_of_inverts_arrivals_by() {
        for p in all() {
            let mut from = 0.0;
            for k in 1..2000 {
                let u = k as f64 * 3.7;
                match p.time_of(u, from) {
                    Some(t) => {
                        assert!(t >= from, "{p}: {u} at {t}, before {from}");
                        let back = p.arrivals_by(t);
                        assert!((back - u).abs() < 1e-6 * u, "{p}: {u} -> {t} -> {back}");
                        from = t;
                    }
                    None => {
                        // Only a profile that ends at 0 ops/s runs out of arrivals.
                        assert_eq!(p.rate_at(1e9), 0.0, "{p}: {u} never due");
                        assert!(u >= p.arrivals_by(1e6) - 1e-6, "{p}: {u}");
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn the_text_form_reads_back() {
        for p in all() {
            assert_eq!(RateProfile::parse(&p.to_string()).unwrap(), p, "{p}");
        }
        let half = RateProfile::parse("ramp:from=100,to=1000,over=10s")
            .unwrap()
            .scaled(0.5);
        assert_eq!(half.rate_at(0.0), 50.0);
        assert_eq!(half.rate_at(20.0), 500.0);
    }

    #[test]
    fn bad_profiles_name_what_is_wrong() {
        for (text, says) in [
            ("wave:mean=1", "'wave': expected constant, ramp"),
            ("ramp:from=100,to=1000", "ramp needs over="),
            ("ramp:from=100,to=1000,over=10s,by=2", "ramp has no 'by'"),
            ("ramp:from=100,from=200,to=1,over=1s", "'from' given twice"),
            ("ramp:from=-5,to=1000,over=10s", "from = -5"),
            ("ramp:from=0,to=1000,over=10s", "starts at 0 ops/s"),
            ("ramp:from=10,to=1000,over=0s", "over = 0"),
            (
                "ramp:from=ten,to=1000,over=1s",
                "from=ten: expected a number",
            ),
            (
                "ramp:from=NaN,to=1000,over=1s",
                "from=NaN: expected a number",
            ),
            (
                "ramp:from=10,to=1000,over=soon",
                "over=soon: expected a duration",
            ),
            ("sine:mean=100,amplitude=200,period=1s", "would go negative"),
            ("sine:mean=100,amplitude=-2,period=1s", "amplitude = -2"),
            (
                "staircase:start=100,step=-50,every=1s,steps=4",
                "goes negative",
            ),
            ("staircase:start=100,step=5,every=1s,steps=0", "steps = 0"),
            ("staircase:start=100,step=5,every=1s,steps=2.5", "steps=2.5"),
            ("constant:rate=2e9", "rate = 2000000000"),
            ("constant", "constant needs rate="),
            ("ramp:from", "'from': expected NAME=VALUE"),
        ] {
            let e = RateProfile::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
            assert!(!e.contains('\n'), "{text}: one line: {e}");
        }
    }
}
