//! One segment of a rate profile: a constant rate (a hold), a ramp, a staircase or a sine, each
//! with its own length, its time counted from the segment's start.

use std::f64::consts::TAU;
use std::fmt;
use std::time::Duration;

use super::Rate;

/// A shape of the offered rate (operations per second) over `[0, length]` of its own time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Segment {
    /// `rate`, for `hold` (to the end of the window when none).
    Constant { rate: f64, hold: Option<Duration> },
    /// From `from` to `to` linearly over `over`.
    Ramp { from: f64, to: f64, over: Duration },
    /// `start`, then `step` more every `every`, for `steps` steps in all.
    Staircase {
        start: f64,
        step: f64,
        every: Duration,
        steps: u32,
    },
    /// `mean + amplitude * sin(2 pi t / period)`, for `lasting` (to the end when none).
    Sine {
        mean: f64,
        amplitude: f64,
        period: Duration,
        lasting: Option<Duration>,
    },
}

/// The kinds a segment may be, with the fields each takes (`hold` is `constant` with `for`).
const KINDS: &str = "constant, hold, ramp, staircase or sine";
/// The kinds' names, as a segment's text starts (`ramp:...`): what the JSON Schema lists.
pub(super) const KIND_NAMES: [&str; 5] = ["constant", "hold", "ramp", "staircase", "sine"];

impl Segment {
    /// Parses `constant:rate=R[,for=D]` (`hold:rate=R,for=D`), `ramp:from=A,to=B,over=D`,
    /// `staircase:start=A,step=S,every=D,steps=N` or `sine:mean=M,amplitude=A,period=D[,for=D]`
    /// (durations as `30s`, `2m`, `500ms`), and checks it.
    pub fn parse(text: &str) -> Result<Segment, String> {
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
            "constant" => &["rate", "for"],
            "hold" => &["rate", "for"],
            "ramp" => &["from", "to", "over"],
            "staircase" => &["start", "step", "every", "steps"],
            "sine" => &["mean", "amplitude", "period", "for"],
            _ => {
                return Err(format!(
                    "'{kind}': expected {KINDS} (e.g. ramp:from=100,to=1000,over=60s)"
                ))
            }
        };
        if let Some((k, _)) = fields.iter().find(|(k, _)| !names.contains(k)) {
            return Err(format!(
                "{kind} has no '{k}': it takes {}",
                names.join(", ")
            ));
        }
        let given = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let get = |name: &str| -> Result<&str, String> {
            given(name)
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
        let optional_duration = |name: &str| given(name).map(|_| duration(name)).transpose();
        let segment = match kind {
            "constant" | "hold" => Segment::Constant {
                rate: number("rate")?,
                hold: if kind == "hold" {
                    Some(duration("for")?)
                } else {
                    optional_duration("for")?
                },
            },
            "ramp" => Segment::Ramp {
                from: number("from")?,
                to: number("to")?,
                over: duration("over")?,
            },
            "staircase" => Segment::Staircase {
                start: number("start")?,
                step: number("step")?,
                every: duration("every")?,
                steps: {
                    let v = get("steps")?;
                    v.parse::<u32>()
                        .map_err(|_| format!("steps={v}: expected a whole number"))?
                },
            },
            _ => Segment::Sine {
                mean: number("mean")?,
                amplitude: number("amplitude")?,
                period: duration("period")?,
                lasting: optional_duration("for")?,
            },
        };
        segment.check()?;
        Ok(segment)
    }

    /// Never a negative rate or more than 1e9 ops/s, and a length where one is given.
    pub fn check(&self) -> Result<(), String> {
        let in_range = |name: &str, r: f64| {
            Rate::or_zero(r)
                .map(|_| ())
                .map_err(|e| format!("{name} = {r}: {e}"))
        };
        let long = |name: &str, d: Duration| {
            if d.is_zero() {
                Err(format!("{name} = 0: a profile's segment needs a length"))
            } else {
                Ok(())
            }
        };
        match *self {
            Segment::Constant { rate, hold } => {
                in_range("rate", rate)?;
                hold.map_or(Ok(()), |d| long("for", d))?;
            }
            Segment::Ramp { from, to, over } => {
                in_range("from", from)?;
                in_range("to", to)?;
                long("over", over)?;
            }
            Segment::Staircase {
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
            Segment::Sine {
                mean,
                amplitude,
                period,
                lasting,
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
                lasting.map_or(Ok(()), |d| long("for", d))?;
            }
        }
        Ok(())
    }

    /// The segment's length in seconds; `None` when it lasts to the end of the window (a constant
    /// rate without `for`, a sine without `for`).
    pub fn length_s(&self) -> Option<f64> {
        match *self {
            Segment::Constant { hold, .. } => hold.map(|d| d.as_secs_f64()),
            Segment::Ramp { over, .. } => Some(over.as_secs_f64()),
            Segment::Staircase { every, steps, .. } => Some(every.as_secs_f64() * f64::from(steps)),
            Segment::Sine { lasting, .. } => lasting.map(|d| d.as_secs_f64()),
        }
    }

    /// The highest rate the segment asks (0: it asks nothing).
    pub fn peak(&self) -> f64 {
        match *self {
            Segment::Constant { rate, .. } => rate,
            Segment::Ramp { from, to, .. } => from.max(to),
            Segment::Staircase {
                start, step, steps, ..
            } => start.max(start + step * f64::from(steps - 1)),
            Segment::Sine {
                mean, amplitude, ..
            } => mean + amplitude,
        }
    }

    /// Where in the segment its rate falls to 0 for the rest of it (a ramp or a staircase down to
    /// 0, a constant 0); `None` when it ends asking some rate.
    pub fn zero_from(&self) -> Option<f64> {
        match *self {
            Segment::Constant { rate, .. } if rate <= 0.0 => Some(0.0),
            Segment::Ramp { to, over, .. } if to <= 0.0 => Some(over.as_secs_f64()),
            Segment::Staircase {
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

    /// The rate (ops/s) at `t` seconds after the segment's start (a ramp or a staircase holds
    /// its last rate after its length).
    pub fn rate_at(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match *self {
            Segment::Constant { rate, .. } => rate,
            Segment::Ramp { from, to, over } => {
                let over = over.as_secs_f64();
                if t >= over {
                    to
                } else {
                    from + (to - from) * t / over
                }
            }
            Segment::Staircase {
                start,
                step,
                every,
                steps,
            } => {
                let k = (t / every.as_secs_f64()).floor().min(f64::from(steps - 1));
                start + step * k
            }
            Segment::Sine {
                mean,
                amplitude,
                period,
                ..
            } => (mean + amplitude * (TAU * t / period.as_secs_f64()).sin()).max(0.0),
        }
    }

    /// The arrivals the segment asks from its start until `t` seconds after it: the integral of
    /// [`Segment::rate_at`].
    pub fn arrivals_by(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match *self {
            Segment::Constant { rate, .. } => rate * t,
            Segment::Ramp { from, to, over } => {
                let over = over.as_secs_f64();
                let ramp = t.min(over);
                from * ramp + (to - from) * ramp * ramp / (2.0 * over) + to * (t - over).max(0.0)
            }
            Segment::Staircase {
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
            Segment::Sine {
                mean,
                amplitude,
                period,
                ..
            } => {
                let p = period.as_secs_f64();
                mean * t + amplitude * p / TAU * (1.0 - (TAU * t / p).cos())
            }
        }
    }

    /// The time after the segment's start by which it has asked `u` arrivals, searched from
    /// `from` (at or before the answer); `None` when it does not reach them by `end` s.
    pub fn time_of(&self, u: f64, from: f64, end: f64) -> Option<f64> {
        if u <= 0.0 {
            return Some(0.0);
        }
        match *self {
            Segment::Constant { rate, .. } => {
                return (rate > 0.0 && u / rate <= end).then(|| u / rate);
            }
            // The root of from t + (to - from) t^2 / (2 over) = u, in the form that stays exact
            // where the rate nears 0 (the end of a ramp down, the start of one up from 0): a
            // search there is ill-conditioned (1e-9 of the arrivals is 1 ms of a ramp to 0).
            Segment::Ramp { from, to, over } if u <= self.arrivals_by(over.as_secs_f64()) => {
                let a = (to - from) / (2.0 * over.as_secs_f64());
                let root = (from * from + 4.0 * a * u).max(0.0).sqrt();
                let t = (2.0 * u / (from + root)).min(over.as_secs_f64());
                return (t <= end).then_some(t);
            }
            // Piecewise constant: the step by whose end `u` are due (found by bisection over the
            // steps), then the part of it; exact, so an arrival due at a window's end is not
            // moved inside it by a search's tolerance.
            Segment::Staircase {
                start,
                step,
                every,
                steps,
            } if u <= self.arrivals_by(every.as_secs_f64() * f64::from(steps)) => {
                let every = every.as_secs_f64();
                let due_by_step = |k: u32| self.arrivals_by(every * f64::from(k));
                // The first k in 1..=steps with due_by_step(k) >= u (none are due by 0): step
                // k - 1 holds it, and asks some rate (a step at 0 adds none).
                let (mut lo, mut hi) = (0u32, steps);
                while lo + 1 < hi {
                    let mid = lo + (hi - lo) / 2;
                    if due_by_step(mid) >= u {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                let k = hi - 1;
                let rate = start + step * f64::from(k);
                let t = every * f64::from(k) + (u - due_by_step(k)) / rate;
                return (t <= end).then_some(t);
            }
            _ => {}
        }
        // Bracket [lo, hi], then Newton steps kept inside it (bisection where a step leaves it):
        // arrivals_by is increasing, its slope the rate.
        let mut lo = from.clamp(0.0, end);
        if self.arrivals_by(lo) >= u {
            lo = 0.0;
        }
        let mut width = 1e-3;
        let mut hi = (lo + width).min(end);
        while self.arrivals_by(hi) < u {
            if hi >= end || hi > 1e12 {
                return None;
            }
            lo = hi;
            width *= 2.0;
            hi = (lo + width).min(end);
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

    /// The same shape at `factor` times the rate.
    pub fn scaled(&self, factor: f64) -> Segment {
        match *self {
            Segment::Constant { rate, hold } => Segment::Constant {
                rate: rate * factor,
                hold,
            },
            Segment::Ramp { from, to, over } => Segment::Ramp {
                from: from * factor,
                to: to * factor,
                over,
            },
            Segment::Staircase {
                start,
                step,
                every,
                steps,
            } => Segment::Staircase {
                start: start * factor,
                step: step * factor,
                every,
                steps,
            },
            Segment::Sine {
                mean,
                amplitude,
                period,
                lasting,
            } => Segment::Sine {
                mean: mean * factor,
                amplitude: amplitude * factor,
                period,
                lasting,
            },
        }
    }
}

/// A duration as one token (`2500ms`, not humantime's `2s 500ms`), as [`Segment::parse`] reads it.
pub(crate) fn duration_text(d: Duration) -> String {
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
}

impl fmt::Display for Segment {
    /// The form [`Segment::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = duration_text;
        let lasting = |l: Option<Duration>| l.map_or(String::new(), |l| format!(",for={}", d(l)));
        match *self {
            Segment::Constant { rate, hold } => write!(f, "constant:rate={rate}{}", lasting(hold)),
            Segment::Ramp { from, to, over } => {
                write!(f, "ramp:from={from},to={to},over={}", d(over))
            }
            Segment::Staircase {
                start,
                step,
                every,
                steps,
            } => write!(
                f,
                "staircase:start={start},step={step},every={},steps={steps}",
                d(every)
            ),
            Segment::Sine {
                mean,
                amplitude,
                period,
                lasting: l,
            } => write!(
                f,
                "sine:mean={mean},amplitude={amplitude},period={}{}",
                d(period),
                lasting(l)
            ),
        }
    }
}
