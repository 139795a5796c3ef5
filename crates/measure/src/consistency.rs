//! What a consistency probe saw beside a phase (`--consistency-probe`), with each figure as the
//! work that defined it defines it (docs/consistency.md):
//! - t-visibility (Probabilistically Bounded Staleness, Bailis et al., VLDB 2012): per delay t, the
//!   probability that a read started t after a write's acknowledgement returns that write or a newer
//!   one; one scheduled read per write and delay, so each delay's reads are one trial per write;
//! - k-staleness (PBS): how many acknowledged versions behind a stale read was, relative to the
//!   probe's rewrite period (a key is rewritten every `keys / rate` seconds);
//! - the first-visibility lag (YCSB++, Patil et al., SoCC 2011): from the acknowledgement to the start
//!   of the first read that returned the write;
//! - the staleness window (Bermbach & Tai, MW4SOC 2011): from the acknowledgement to the start of the
//!   last read that still returned an older version;
//! - Terry et al.'s session guarantees read-your-writes and monotonic reads (PDIS 1994).
//!
//! The lag and the window are taken only over writes that had a stale read: a write every read saw
//! at once has neither, and a probe that saw nothing stale reports none.
//!
//! The probe (scalebench-exec's `consistency` module) feeds one [`ProbeTally`]; the result is a
//! [`ConsistencyResult`] in the phase's result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::histogram::LatencySummary;
use crate::histogram::{new_histogram, LatencyHistogram};

/// PBS's delays (ms), the default of `--probe-delays`.
pub const DEFAULT_DELAYS_MS: [f64; 9] = [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0];

/// Below this share of its planned writes, the probe fell behind its rate (said loudly).
pub const MIN_WRITES_SHARE: f64 = 0.9;

/// The probe's readers on another client than the writer's (YCSB++'s and Bermbach & Tai's readers
/// on other machines): their clock against the writer's and what they measured, on acknowledgement
/// times mapped onto their clock (so each time is known within the clocks' uncertainty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReaderClient {
    pub client: u32,
    /// Its clock minus the writer's, in microseconds, and the bound of that estimate's error.
    pub clock_offset_us: f64,
    pub clock_uncertainty_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<ConsistencyResult>,
    /// Its probe did not run: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The consistency section of a phase's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyResult {
    /// Probe writes per second asked for.
    pub probe_rate: f64,
    /// Probe keys, rewritten in turn: each one every `rewrite_period_ms` (k-staleness counts
    /// versions of that period).
    #[serde(default)]
    pub probe_keys: u64,
    #[serde(default)]
    pub rewrite_period_ms: f64,
    /// Writes the rate planned over the probe's measured time, and those acknowledged / failed.
    #[serde(default)]
    pub probe_writes_planned: u64,
    pub probe_writes: u64,
    pub probe_writes_failed: u64,
    /// Probe reads that completed (scheduled, chasing and read-your-writes reads) / failed.
    pub probe_reads: u64,
    pub probe_reads_failed: u64,
    /// Reads that returned an older version than the newest one acknowledged when the read began.
    pub stale_reads: u64,
    /// Per delay of the plan: P(a read started at that delay after the acknowledgement returns the
    /// write or a newer one), over the scheduled reads that kept their delay (one per write).
    pub t_visibility: Vec<VisibilityPoint>,
    /// Acknowledged writes whose follow-up ended (every scheduled read done or missed, the chase
    /// over); of them, those with at least one stale read (the lag and the window are theirs).
    #[serde(default)]
    pub followed_writes: u64,
    #[serde(default)]
    pub stale_writes: u64,
    /// Writes whose follow-up the end of the phase cut short (not in the lag, window or never seen).
    #[serde(default)]
    pub cut_writes: u64,
    /// YCSB++'s first-visibility lag: acknowledgement to the start of the first read returning the
    /// write, over the stale writes that were seen; `None` when no write had a stale read.
    #[serde(default)]
    pub visibility_lag_us: Option<LatencySummary>,
    /// Bermbach & Tai's staleness window: acknowledgement to the start of the last read returning an
    /// older version, over the stale writes that were seen; `None` when no write had a stale read.
    #[serde(default)]
    pub staleness_window_us: Option<LatencySummary>,
    /// Followed writes no read returned within the horizon.
    pub never_seen: u64,
    pub never_seen_fraction: f64,
    /// How long the probe chased a write before counting it never seen.
    pub horizon_ms: f64,
    /// Stale reads by how many versions behind they were (k-staleness).
    pub k_staleness: BTreeMap<u64, u64>,
    /// The writer's own connection reading right after each acknowledged write.
    pub read_your_writes: GuaranteeCount,
    /// A connection reading a key never sees an older version after a newer one.
    pub monotonic_reads: GuaranteeCount,
}

impl ConsistencyResult {
    /// The reads at the plan's first delay (one per write), if any kept it.
    pub fn first_delay(&self) -> Option<&VisibilityPoint> {
        self.t_visibility.first().filter(|p| p.samples > 0)
    }

    /// P(a read at the first delay is stale), with its 95% Wilson interval: the stale share a
    /// reader of the results means (every read pooled would count a chased write many times).
    pub fn stale_fraction(&self) -> Option<StaleFraction> {
        self.first_delay().map(StaleFraction::of)
    }

    /// A loud line when the probe wrote well below its rate: its figures then belong to a lower one.
    pub fn fell_behind(&self) -> Option<String> {
        let made = self.probe_writes + self.probe_writes_failed;
        (self.probe_writes_planned > 0
            && (made as f64) < MIN_WRITES_SHARE * self.probe_writes_planned as f64)
            .then(|| {
                format!(
                    "WARNING: the consistency probe fell behind its rate: {made} of {} planned writes ({} writes/s asked); a probe write or its read-back takes longer here than the rate allows",
                    self.probe_writes_planned, self.probe_rate
                )
            })
    }

    /// Scheduled reads that missed their delay (started after the next one), over all delays.
    pub fn missed_reads(&self) -> u64 {
        self.t_visibility.iter().map(|p| p.missed).sum()
    }
}

/// The stale share at the first delay: one read per probe write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaleFraction {
    pub delay_ms: f64,
    pub reads: u64,
    pub stale: u64,
    pub fraction: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

impl StaleFraction {
    pub fn of(p: &VisibilityPoint) -> StaleFraction {
        let stale = p.samples - p.consistent();
        let (ci_low, ci_high) = wilson(stale, p.samples);
        StaleFraction {
            delay_ms: p.delay_ms,
            reads: p.samples,
            stale,
            fraction: 1.0 - p.consistent_fraction,
            ci_low,
            ci_high,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisibilityPoint {
    pub delay_ms: f64,
    /// Scheduled reads that kept this delay (started before the next delay of the plan).
    pub samples: u64,
    pub consistent_fraction: f64,
    /// Wilson score interval at 95%.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Scheduled reads of this delay that started too late (after the next delay), failed or were
    /// cut by the phase's end: counted apart, in no fraction.
    #[serde(default)]
    pub missed: u64,
}

impl VisibilityPoint {
    /// `consistent` of `samples` reads started `delay_ms` after the acknowledgement.
    pub fn of_counts(delay_ms: f64, samples: u64, consistent: u64) -> Self {
        let (ci_low, ci_high) = wilson(consistent, samples);
        VisibilityPoint {
            delay_ms,
            samples,
            consistent_fraction: if samples == 0 {
                0.0
            } else {
                consistent as f64 / samples as f64
            },
            ci_low,
            ci_high,
            missed: 0,
        }
    }

    /// The consistent reads among the samples.
    pub fn consistent(&self) -> u64 {
        (self.consistent_fraction * self.samples as f64).round() as u64
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GuaranteeCount {
    pub checks: u64,
    pub violations: u64,
}

/// The probe's running counts, for live metrics while it runs (`--metrics-listen`).
#[derive(Debug, Default)]
pub struct LiveProbe {
    pub writes: std::sync::atomic::AtomicU64,
    pub reads: std::sync::atomic::AtomicU64,
    pub stale_reads: std::sync::atomic::AtomicU64,
}

impl LiveProbe {
    fn add(counter: &std::sync::atomic::AtomicU64) {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// How one acknowledged write's follow-up ended: the starts of its reads, from its acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FollowUp {
    /// Every read returned it (or newer): no lag, no window.
    NeverStale,
    /// Some read returned an older version: the first read returning it began `lag_ns` after the
    /// acknowledgement, the last read returning an older version `window_ns` after it.
    Stale { lag_ns: u64, window_ns: u64 },
    /// No read returned it within the horizon.
    NeverSeen,
    /// The phase's end cut the follow-up short.
    Cut,
}

/// The probe's counts as it runs.
pub struct ProbeTally {
    /// Mirrors writes, reads and stale reads as they happen, when someone watches.
    live: Option<std::sync::Arc<LiveProbe>>,
    rate: f64,
    keys: u64,
    delays_ms: Vec<f64>,
    horizon_ms: f64,
    writes_planned: u64,
    writes: u64,
    writes_failed: u64,
    reads: u64,
    reads_failed: u64,
    stale: u64,
    /// (samples, consistent, missed) per delay.
    visibility: Vec<(u64, u64, u64)>,
    lag: LatencyHistogram,
    window: LatencyHistogram,
    followed: u64,
    stale_writes: u64,
    cut: u64,
    never_seen: u64,
    k_staleness: BTreeMap<u64, u64>,
    read_your_writes: GuaranteeCount,
    monotonic_reads: GuaranteeCount,
}

impl ProbeTally {
    /// `delays_ms` ascending; `keys` rewritten in turn at `rate` writes per second.
    pub fn new(rate: f64, keys: usize, delays_ms: &[f64], horizon_ms: f64) -> Self {
        ProbeTally {
            live: None,
            rate,
            keys: keys as u64,
            delays_ms: delays_ms.to_vec(),
            horizon_ms,
            writes_planned: 0,
            writes: 0,
            writes_failed: 0,
            reads: 0,
            reads_failed: 0,
            stale: 0,
            visibility: vec![(0, 0, 0); delays_ms.len()],
            lag: new_histogram(),
            window: new_histogram(),
            followed: 0,
            stale_writes: 0,
            cut: 0,
            never_seen: 0,
            k_staleness: BTreeMap::new(),
            read_your_writes: GuaranteeCount::default(),
            monotonic_reads: GuaranteeCount::default(),
        }
    }

    /// Counts kept in `live` too, as they happen.
    pub fn with_live(mut self, live: Option<std::sync::Arc<LiveProbe>>) -> Self {
        self.live = live;
        self
    }

    /// A slot of the rate passed: a write was due (made or not).
    pub fn planned(&mut self, slots: u64) {
        self.writes_planned += slots;
    }

    pub fn write(&mut self, ok: bool) {
        if ok {
            self.writes += 1;
            if let Some(l) = &self.live {
                LiveProbe::add(&l.writes);
            }
        } else {
            self.writes_failed += 1;
        }
    }

    pub fn failed_read(&mut self) {
        self.reads_failed += 1;
    }

    /// A completed read of version `read` when `newest` was the newest acknowledged version of its
    /// key at its start.
    pub fn read(&mut self, read: u64, newest: u64) {
        self.reads += 1;
        if let Some(l) = &self.live {
            LiveProbe::add(&l.reads);
            if read < newest {
                LiveProbe::add(&l.stale_reads);
            }
        }
        if read < newest {
            self.stale += 1;
            *self.k_staleness.entry(newest - read).or_default() += 1;
        }
    }

    /// The scheduled read of delay `delay` (an index of the plan) kept its delay and returned the
    /// write (or a newer one) or not.
    pub fn scheduled(&mut self, delay: usize, returned_the_write: bool) {
        if let Some(v) = self.visibility.get_mut(delay) {
            v.0 += 1;
            v.1 += u64::from(returned_the_write);
        }
    }

    /// The scheduled read of delay `delay` started too late, failed or was cut.
    pub fn missed(&mut self, delay: usize) {
        if let Some(v) = self.visibility.get_mut(delay) {
            v.2 += 1;
        }
    }

    pub fn followed(&mut self, outcome: FollowUp) {
        match outcome {
            FollowUp::Cut => {
                self.cut += 1;
                return;
            }
            FollowUp::NeverSeen => self.never_seen += 1,
            FollowUp::NeverStale => {}
            FollowUp::Stale { lag_ns, window_ns } => {
                self.stale_writes += 1;
                let _ = self.lag.record(lag_ns.max(1));
                let _ = self.window.record(window_ns.max(1));
            }
        }
        self.followed += 1;
    }

    pub fn read_your_write(&mut self, violated: bool) {
        self.read_your_writes.checks += 1;
        self.read_your_writes.violations += u64::from(violated);
    }

    pub fn monotonic_read(&mut self, violated: bool) {
        self.monotonic_reads.checks += 1;
        self.monotonic_reads.violations += u64::from(violated);
    }

    pub fn result(&self) -> ConsistencyResult {
        ConsistencyResult {
            probe_rate: self.rate,
            probe_keys: self.keys,
            rewrite_period_ms: if self.rate > 0.0 {
                self.keys as f64 / self.rate * 1000.0
            } else {
                0.0
            },
            probe_writes_planned: self.writes_planned,
            probe_writes: self.writes,
            probe_writes_failed: self.writes_failed,
            probe_reads: self.reads,
            probe_reads_failed: self.reads_failed,
            stale_reads: self.stale,
            t_visibility: self
                .delays_ms
                .iter()
                .zip(&self.visibility)
                .map(
                    |(&delay_ms, &(samples, consistent, missed))| VisibilityPoint {
                        missed,
                        ..VisibilityPoint::of_counts(delay_ms, samples, consistent)
                    },
                )
                .collect(),
            followed_writes: self.followed,
            stale_writes: self.stale_writes,
            cut_writes: self.cut,
            visibility_lag_us: LatencySummary::from_histogram(&self.lag),
            staleness_window_us: LatencySummary::from_histogram(&self.window),
            never_seen: self.never_seen,
            never_seen_fraction: if self.followed == 0 {
                0.0
            } else {
                self.never_seen as f64 / self.followed as f64
            },
            horizon_ms: self.horizon_ms,
            k_staleness: self.k_staleness.clone(),
            read_your_writes: self.read_your_writes,
            monotonic_reads: self.monotonic_reads,
        }
    }
}

/// The Wilson score interval of a proportion at 95% (sound at 0 and n, unlike the normal one).
pub fn wilson(successes: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n = n as f64;
    let p = successes as f64 / n;
    let centre = p + z * z / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let denominator = 1.0 + z * z / n;
    (
        ((centre - spread) / denominator).max(0.0),
        ((centre + spread) / denominator).min(1.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_reads_count_by_versions_behind_and_scheduled_reads_per_delay() {
        let mut t = ProbeTally::new(10.0, 4, &DEFAULT_DELAYS_MS, 1000.0);
        t.read(5, 5);
        t.scheduled(0, true);
        t.read(3, 5); // two behind
        t.scheduled(2, false);
        t.read(4, 5); // one behind
        t.scheduled(2, false);
        t.read(5, 5); // a chasing read: a read, no delay's sample
        t.missed(8);
        let r = t.result();
        assert_eq!((r.probe_reads, r.stale_reads), (4, 2));
        assert_eq!(r.k_staleness, BTreeMap::from([(1, 1), (2, 1)]));
        let at = |d: f64| r.t_visibility.iter().find(|p| p.delay_ms == d).unwrap();
        assert_eq!((at(0.0).samples, at(0.0).consistent_fraction), (1, 1.0));
        assert_eq!((at(0.5).samples, at(0.5).consistent_fraction), (2, 0.0));
        assert_eq!((at(100.0).samples, at(100.0).missed), (0, 1));
        assert_eq!(r.missed_reads(), 1);
        // Four keys at 10 writes/s: each rewritten every 400 ms.
        assert_eq!(r.rewrite_period_ms, 400.0);
        // The stale share is the first delay's: 0 of 1, not the 2 of 4 reads pooled.
        let s = r.stale_fraction().unwrap();
        assert_eq!((s.reads, s.stale, s.fraction), (1, 0, 0.0));
    }

    #[test]
    fn lag_and_window_come_only_from_writes_that_had_a_stale_read() {
        let mut t = ProbeTally::new(10.0, 4, &[0.0], 1000.0);
        for _ in 0..5 {
            t.followed(FollowUp::NeverStale);
        }
        let r = t.result();
        assert_eq!((r.followed_writes, r.stale_writes), (5, 0));
        assert!(r.visibility_lag_us.is_none() && r.staleness_window_us.is_none());
        t.followed(FollowUp::Stale {
            lag_ns: 1_000,
            window_ns: 20_000_000,
        });
        t.followed(FollowUp::NeverSeen);
        t.followed(FollowUp::Cut);
        let r = t.result();
        assert_eq!((r.followed_writes, r.stale_writes, r.cut_writes), (7, 1, 1));
        assert_eq!(r.never_seen, 1);
        assert!((r.never_seen_fraction - 1.0 / 7.0).abs() < 1e-12);
        let lag = r.visibility_lag_us.unwrap();
        let window = r.staleness_window_us.unwrap();
        assert_eq!((lag.count, window.count), (1, 1));
        assert!((lag.max_us - 1.0).abs() < 0.01, "{lag:?}");
        assert!((window.max_us - 20_000.0).abs() < 20.0, "{window:?}");
    }

    #[test]
    fn a_probe_that_made_too_few_of_its_planned_writes_says_so() {
        let mut t = ProbeTally::new(50.0, 8, &[0.0], 1000.0);
        t.planned(200);
        for _ in 0..3 {
            t.write(true);
        }
        let line = t.result().fell_behind().unwrap();
        assert!(line.contains("3 of 200 planned"), "{line}");
        for _ in 0..190 {
            t.write(true);
        }
        assert_eq!(t.result().fell_behind(), None);
    }

    /// Known values (Newcombe 1998, table I: 81 of 263 -> 0.2553 to 0.3662) and the edges.
    #[test]
    fn wilson_intervals() {
        let (lo, hi) = wilson(81, 263);
        assert!(
            (lo - 0.2553).abs() < 5e-4 && (hi - 0.3662).abs() < 5e-4,
            "{lo} {hi}"
        );
        let (lo, hi) = wilson(10, 10);
        // All successes: the lower bound is n / (n + z^2).
        assert!(
            (hi - 1.0).abs() < 1e-9 && (lo - 10.0 / (10.0 + 1.96f64.powi(2))).abs() < 1e-3,
            "{lo}"
        );
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }
}
