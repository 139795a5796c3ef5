//! Rate profiles (issues 43 and 63): the offered rate of an open-loop phase as a function of time
//! since the measurement window opened. A sequence of segments (a constant rate or hold, a ramp, a
//! staircase, a sine), each after the one before, as k6's stages; the warm-up runs at the
//! profile's first rate, and after its last segment the profile holds its last rate.
//!
//! The executor needs the inverse of the arrivals a profile expects: the time by which `u`
//! arrivals are due. With Poisson arrivals it draws unit-rate exponential gaps in that "arrival
//! count" and maps each through the inverse (the time-rescaling of an inhomogeneous Poisson
//! process), so latency is still measured from each arrival's intended start. Across segments the
//! inverse is exact: the arrivals of the segments before, then the inverse within the segment.

mod decl;
mod keepable;
mod pace;
mod segment;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use decl::{RateProfileDecl, StageDecl};
pub use keepable::Rate;
pub use pace::Pace;
pub use segment::Segment;

/// Bounds of a rate an open loop can keep, in operations per second: the schedule spaces starts in
/// whole nanoseconds per slot, so beyond 1e9/s every start would be "now", and a vanishing rate
/// would put the next start past any run. One rule for `--target`, `target`, `loadtarget` and each
/// rate of a profile (a profile accepted 1e-300 ops/s that `--target` refused; issue 62, low 4).
pub const MIN_RATE_OPS_S: f64 = 0.001;
pub const MAX_RATE_OPS_S: f64 = 1e9;

/// Whether an open loop can keep `ops_s`: 0 (none asked) or a rate within the bounds above.
pub fn keepable_rate(ops_s: f64) -> bool {
    Rate::or_zero(ops_s).is_ok()
}

/// What separates the segments of a profile's text form.
pub const SEGMENT_SEPARATOR: char = ';';

/// The offered rate (operations per second, all slots and clients together) over the window: its
/// segments, one after another.
#[derive(Debug, Clone)]
pub struct RateProfile {
    placed: Arc<[Placed]>,
}

/// A segment where it lies in the profile.
#[derive(Debug, Clone, Copy)]
struct Placed {
    segment: Segment,
    start_s: f64,
    /// Infinite for a last segment that lasts to the end of the window.
    end_s: f64,
    /// The arrivals the segments before it ask.
    due_before: f64,
}

impl Placed {
    fn due_after(&self) -> f64 {
        if self.end_s.is_finite() {
            self.due_before + self.segment.arrivals_by(self.end_s - self.start_s)
        } else {
            f64::INFINITY
        }
    }
}

impl PartialEq for RateProfile {
    fn eq(&self, other: &Self) -> bool {
        self.segments().eq(other.segments())
    }
}

impl RateProfile {
    /// Parses one segment (`constant:rate=R[,for=D]`, `hold:rate=R,for=D`,
    /// `ramp:from=A,to=B,over=D`, `staircase:start=A,step=S,every=D,steps=N`,
    /// `sine:mean=M,amplitude=A,period=D[,for=D]`) or several separated by `;`, and checks them.
    /// An error names the segment it is about when there are several.
    pub fn parse(text: &str) -> Result<RateProfile, String> {
        let parts: Vec<&str> = text.split(SEGMENT_SEPARATOR).map(str::trim).collect();
        if parts.len() == 1 {
            return RateProfile::of(vec![Segment::parse(parts[0])?]);
        }
        let n = parts.len();
        let mut segments = Vec::with_capacity(n);
        for (i, part) in parts.iter().enumerate() {
            if part.is_empty() {
                return Err(format!(
                    "segment {} of {n} is empty: segments are separated by one ';'",
                    i + 1
                ));
            }
            let s = Segment::parse(part)
                .map_err(|e| format!("segment {} of {n} ('{part}'): {e}", i + 1))?;
            segments.push(s);
        }
        RateProfile::of(segments)
    }

    /// The profile of `segments` in that order, checked: every segment but the last has a length,
    /// and the profile asks some rate.
    pub fn of(segments: Vec<Segment>) -> Result<RateProfile, String> {
        let n = segments.len();
        if n == 0 {
            return Err("a rate profile needs at least one segment".into());
        }
        let mut placed = Vec::with_capacity(n);
        let (mut start_s, mut due_before) = (0.0, 0.0);
        for (i, segment) in segments.into_iter().enumerate() {
            let length = segment.length_s();
            if length.is_none() && i + 1 < n {
                return Err(format!(
                    "segment {} of {n} ('{segment}') lasts to the end of the window: give it for=D (how long it lasts), or put it last",
                    i + 1
                ));
            }
            let p = Placed {
                segment,
                start_s,
                end_s: length.map_or(f64::INFINITY, |l| start_s + l),
                due_before,
            };
            (start_s, due_before) = (p.end_s, p.due_after());
            placed.push(p);
        }
        if placed.iter().all(|p| p.segment.peak() <= 0.0) {
            return Err("the profile asks 0 ops/s throughout: it would send nothing".into());
        }
        Ok(RateProfile {
            placed: placed.into(),
        })
    }

    /// The segments, in order.
    pub fn segments(&self) -> impl Iterator<Item = &Segment> + '_ {
        self.placed.iter().map(|p| &p.segment)
    }

    fn last(&self) -> &Placed {
        self.placed.last().expect("a profile has a segment")
    }

    /// The rate held after the last segment (that segment's rate at its end).
    fn held_rate(&self) -> f64 {
        let last = self.last();
        last.segment.rate_at(last.end_s - last.start_s)
    }

    /// The segment that holds `t` (s after the window opened); `None` after the last one.
    fn at(&self, t: f64) -> Option<&Placed> {
        let i = self.placed.partition_point(|p| p.end_s <= t);
        self.placed.get(i)
    }

    /// When the profile's arrivals end (s after the window opened): the rate is 0 from then on
    /// (a ramp or a staircase down to 0, a last hold at 0); `None` while it asks some rate for ever.
    pub fn arrivals_end(&self) -> Option<f64> {
        let last = self.last();
        let asks_for_ever = if last.end_s.is_finite() {
            self.held_rate() > 0.0
        } else {
            last.segment.zero_from().is_none()
        };
        if asks_for_ever {
            return None;
        }
        let mut end = 0.0;
        for p in self.placed.iter().rev() {
            match p.segment.zero_from() {
                Some(0.0) => end = p.start_s,
                Some(z) => return Some(p.start_s + z),
                None => return Some(p.end_s),
            }
        }
        Some(end)
    }

    /// The rate (ops/s) at `t` seconds after the window opened (before it: the first rate).
    pub fn rate_at(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match self.at(t) {
            Some(p) => p.segment.rate_at(t - p.start_s),
            None => self.held_rate(),
        }
    }

    /// The arrivals expected from the window's opening until `t` seconds after it (`t` >= 0).
    pub fn arrivals_by(&self, t: f64) -> f64 {
        let t = t.max(0.0);
        match self.at(t) {
            Some(p) => p.due_before + p.segment.arrivals_by(t - p.start_s),
            None => {
                let last = self.last();
                last.due_after() + self.held_rate() * (t - last.end_s)
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
        // The first segment by whose end `u` are due, then the inverse within it.
        let i = self.placed.partition_point(|p| p.due_after() < u);
        let Some(p) = self.placed.get(i) else {
            let (last, held) = (self.last(), self.held_rate());
            return (held > 0.0).then(|| last.end_s + (u - last.due_after()) / held);
        };
        let length = p.end_s - p.start_s;
        let local = (from - p.start_s).max(0.0);
        match p.segment.time_of(u - p.due_before, local, length) {
            Some(t) => Some(p.start_s + t),
            // Due at the segment's end, short of it by rounding only.
            None if length.is_finite() => Some(p.end_s),
            None => None,
        }
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

    /// Where the profile's last segment ends and its last rate starts holding; infinite when the
    /// last segment lasts to the end of the window (a constant rate or a sine without `for`).
    pub fn length_s(&self) -> f64 {
        self.last().end_s
    }

    /// How the profile lies over a window of `window`: a warning when it is cut off by the
    /// window's end (the docs' `ramp ... over=90s` under a 15 s run offered a sixth of it) or ends
    /// before it and holds its last rate; none when they match, or when its last segment lasts to
    /// the end of the window (a constant rate or a sine without `for`).
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
                self.held_rate(),
                w - length
            )
        })
    }

    /// The same segments at `factor` times the rate (a client's share of a distributed run).
    pub fn scaled(&self, factor: f64) -> RateProfile {
        let segments = self.segments().map(|s| s.scaled(factor)).collect();
        RateProfile::of(segments).expect("a scaled profile keeps its lengths")
    }
}

impl fmt::Display for RateProfile {
    /// The form [`RateProfile::parse`] reads: the segments separated by `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments().enumerate() {
            if i > 0 {
                write!(f, "{SEGMENT_SEPARATOR} ")?;
            }
            write!(f, "{s}")?;
        }
        Ok(())
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
