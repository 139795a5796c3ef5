//! What a consistency probe saw beside a phase (`--consistency-probe`): how stale its reads were,
//! as Probabilistically Bounded Staleness measures it (Bailis et al., VLDB 2012: t-visibility, the
//! probability that a read started t after a write's acknowledgement returns it, and k-staleness,
//! how many versions behind a stale read is), the staleness window of Bermbach & Tai (from the
//! acknowledgement to the first read that returns the write), and two session guarantees.
//!
//! The probe (scalebench-exec's `consistency` module) feeds one [`ProbeTally`]; the result is a
//! [`ConsistencyResult`] in the phase's result.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::histogram::{new_histogram, LatencyHistogram};
use crate::result::LatencySummary;

/// PBS's delays (ms), the default of `--probe-delays`.
pub const DEFAULT_DELAYS_MS: [f64; 9] = [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 100.0];

/// The consistency section of a phase's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsistencyResult {
    /// Probe writes per second asked for, and how many were acknowledged / failed.
    pub probe_rate: f64,
    pub probe_writes: u64,
    pub probe_writes_failed: u64,
    /// Probe reads that completed (scheduled, chasing and read-your-writes reads) / failed.
    pub probe_reads: u64,
    pub probe_reads_failed: u64,
    /// Reads that returned an older version than the newest one acknowledged when the read began.
    pub stale_reads: u64,
    /// P(read returns the newest acknowledged version | it started `delay_ms` after the
    /// acknowledgement); a read counts for the largest delay not after its actual start.
    pub t_visibility: Vec<VisibilityPoint>,
    /// Time from a write's acknowledgement to the start of the first read that returned it (the
    /// staleness window); `None` when no write was seen.
    pub window_us: Option<LatencySummary>,
    /// Writes no read returned within the horizon, of those acknowledged.
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisibilityPoint {
    pub delay_ms: f64,
    pub samples: u64,
    pub consistent_fraction: f64,
    /// Wilson score interval at 95%.
    pub ci_low: f64,
    pub ci_high: f64,
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
        }
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

/// The probe's counts as it runs.
pub struct ProbeTally {
    /// Mirrors writes, reads and stale reads as they happen, when someone watches.
    live: Option<std::sync::Arc<LiveProbe>>,
    rate: f64,
    delays_ms: Vec<f64>,
    horizon_ms: f64,
    writes: u64,
    writes_failed: u64,
    reads: u64,
    reads_failed: u64,
    stale: u64,
    /// (samples, consistent) per delay.
    visibility: Vec<(u64, u64)>,
    window: LatencyHistogram,
    never_seen: u64,
    k_staleness: BTreeMap<u64, u64>,
    read_your_writes: GuaranteeCount,
    monotonic_reads: GuaranteeCount,
}

impl ProbeTally {
    /// `delays_ms` ascending.
    pub fn new(rate: f64, delays_ms: &[f64], horizon_ms: f64) -> Self {
        ProbeTally {
            live: None,
            rate,
            delays_ms: delays_ms.to_vec(),
            horizon_ms,
            writes: 0,
            writes_failed: 0,
            reads: 0,
            reads_failed: 0,
            stale: 0,
            visibility: vec![(0, 0); delays_ms.len()],
            window: new_histogram(),
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

    /// A completed read of version `read` when `newest` was the newest acknowledged version at its
    /// start; `since_ack_ms` after that version's acknowledgement, if it counts for t-visibility.
    pub fn read(&mut self, read: u64, newest: u64, since_ack_ms: Option<f64>) {
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
        if let Some(t) = since_ack_ms {
            // The largest delay not after the read's start.
            if let Some(i) = self.delays_ms.iter().rposition(|d| *d <= t) {
                self.visibility[i].0 += 1;
                if read >= newest {
                    self.visibility[i].1 += 1;
                }
            }
        }
    }

    pub fn read_your_write(&mut self, violated: bool) {
        self.read_your_writes.checks += 1;
        self.read_your_writes.violations += u64::from(violated);
    }

    pub fn monotonic_read(&mut self, violated: bool) {
        self.monotonic_reads.checks += 1;
        self.monotonic_reads.violations += u64::from(violated);
    }

    /// The first read returning an acknowledged write started `window_ns` after the
    /// acknowledgement; `None`: no read returned it within the horizon.
    pub fn seen_after(&mut self, window_ns: Option<u64>) {
        match window_ns {
            Some(ns) => {
                let _ = self.window.record(ns.max(1));
            }
            None => self.never_seen += 1,
        }
    }

    pub fn result(&self) -> ConsistencyResult {
        let chased = self.window.len() + self.never_seen;
        ConsistencyResult {
            probe_rate: self.rate,
            probe_writes: self.writes,
            probe_writes_failed: self.writes_failed,
            probe_reads: self.reads,
            probe_reads_failed: self.reads_failed,
            stale_reads: self.stale,
            t_visibility: self
                .delays_ms
                .iter()
                .zip(&self.visibility)
                .map(|(&delay_ms, &(samples, consistent))| {
                    VisibilityPoint::of_counts(delay_ms, samples, consistent)
                })
                .collect(),
            window_us: LatencySummary::from_histogram(&self.window),
            never_seen: self.never_seen,
            never_seen_fraction: if chased == 0 {
                0.0
            } else {
                self.never_seen as f64 / chased as f64
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
    fn reads_count_for_the_largest_delay_not_after_their_start_and_stale_ones_by_versions_behind() {
        let mut t = ProbeTally::new(10.0, &DEFAULT_DELAYS_MS, 1000.0);
        t.read(5, 5, Some(0.03)); // delay 0, consistent
        t.read(3, 5, Some(0.7)); // delay 0.5, two behind
        t.read(4, 5, Some(0.5)); // delay 0.5, one behind
        t.read(5, 5, Some(250.0)); // delay 100
        t.read(5, 5, None); // not scheduled: counts as a read only
        let r = t.result();
        assert_eq!((r.probe_reads, r.stale_reads), (5, 2));
        assert_eq!(r.k_staleness, BTreeMap::from([(1, 1), (2, 1)]));
        let at = |d: f64| r.t_visibility.iter().find(|p| p.delay_ms == d).unwrap();
        assert_eq!((at(0.0).samples, at(0.0).consistent_fraction), (1, 1.0));
        assert_eq!((at(0.5).samples, at(0.5).consistent_fraction), (2, 0.0));
        assert_eq!(at(100.0).samples, 1);
        assert_eq!(at(1.0).samples, 0);
    }

    #[test]
    fn the_window_and_the_never_seen_share_come_from_the_chased_writes() {
        let mut t = ProbeTally::new(10.0, &[0.0], 1000.0);
        for ns in [1_000, 2_000, 3_000] {
            t.seen_after(Some(ns));
        }
        t.seen_after(None);
        let r = t.result();
        assert_eq!(r.never_seen, 1);
        assert_eq!(r.never_seen_fraction, 0.25);
        let w = r.window_us.unwrap();
        assert_eq!(w.count, 3);
        assert!((w.max_us - 3.0).abs() < 0.01, "{w:?}");
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
