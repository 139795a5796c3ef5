//! What a consistency probe saw beside a phase (`--consistency-probe`), with each figure as the
//! work that defined it defines it (docs/consistency.md):
//! - t-visibility (Probabilistically Bounded Staleness, Bailis et al., VLDB 2012): per delay t, the
//!   probability that a read started t after a write's acknowledgement returns that write or a newer
//!   one; one scheduled read per write and delay, so each delay's reads are one trial per write;
//! - k-staleness (PBS): the probability that a read returns one of the k newest versions
//!   acknowledged when it began (k = 1: the newest), over the scheduled reads ([`KStaleness`]);
//!   versions of the probe's keys, each rewritten every `keys / rate` seconds;
//! - the read-after-write lag (YCSB++, Patil et al., SoCC 2011): from the acknowledgement to the
//!   start of the first read that returned the write, over every write that was seen (about 0 for a
//!   write the first read already returned);
//! - the staleness window (Bermbach & Tai, MW4SOC 2011): from the write's start to the start of the
//!   last read that still returned an older version, over every write that was seen (0 for a write
//!   no read found stale);
//! - Terry et al.'s session guarantees read-your-writes and monotonic reads (PDIS 1994).
//!
//! Beside them, under names that say so, the lag over the writes that had a stale read only and the
//! window of those writes from the acknowledgement.
//!
//! The probe (scalebench-exec's `consistency` module) feeds one [`ProbeTally`]; the result is a
//! [`ConsistencyResult`] in the phase's result.

mod figures;
mod tally;

pub use figures::{headline, KStaleness, StaleFraction};
pub use tally::ProbeTally;

use serde::{Deserialize, Serialize};

use crate::histogram::LatencySummary;

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
    /// over); of them, those with at least one stale read.
    #[serde(default)]
    pub followed_writes: u64,
    #[serde(default)]
    pub stale_writes: u64,
    /// Writes whose follow-up the end of the phase cut short (not in the lags, windows or never
    /// seen).
    #[serde(default)]
    pub cut_writes: u64,
    /// YCSB++'s read-after-write lag: acknowledgement to the start of the first read returning the
    /// write, over every followed write a read returned; `None` when none was.
    #[serde(default)]
    pub read_after_write_lag_us: Option<LatencySummary>,
    /// The same lag over the writes that had a stale read only (before issue 61:
    /// `visibility_lag_us`).
    #[serde(default, alias = "visibility_lag_us")]
    pub stale_write_lag_us: Option<LatencySummary>,
    /// Bermbach & Tai's staleness window: the write's start to the start of the last read returning
    /// an older version, 0 for a write no read found stale, over every followed write a read
    /// returned; `None` when none was.
    #[serde(default)]
    pub staleness_window_from_write_us: Option<LatencySummary>,
    /// From the acknowledgement to the start of the last read returning an older version, over the
    /// writes that had a stale read (before issue 61: `staleness_window_us`).
    #[serde(default, alias = "staleness_window_us")]
    pub stale_write_window_from_ack_us: Option<LatencySummary>,
    /// Followed writes no read returned within the horizon.
    pub never_seen: u64,
    pub never_seen_fraction: f64,
    /// How long the probe chased a write before counting it never seen.
    pub horizon_ms: f64,
    /// PBS's k-staleness over the scheduled reads that kept their delay: for k = 1, 2, ... up to
    /// the first k every read was within, the share of reads that returned one of the k newest
    /// versions acknowledged when they began. Empty when no scheduled read kept its delay.
    #[serde(default)]
    pub pbs_k_staleness: Vec<KStaleness>,
    /// The writer's own connection reading right after each acknowledged write.
    pub read_your_writes: GuaranteeCount,
    /// A connection reading a key never sees an older version after a newer one.
    pub monotonic_reads: GuaranteeCount,
}

impl ConsistencyResult {
    /// The stale share a reader of the results means, with its 95% Wilson interval: at the first
    /// delay of the plan that at least half of its scheduled reads kept ([`headline`]); why not,
    /// when none did.
    pub fn stale_share(&self) -> Result<StaleFraction, String> {
        headline(&self.t_visibility)
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

    /// PBS's k-staleness at `k` (from 1): the share of scheduled reads within the k newest
    /// versions, that of the largest k listed at or below it (the list holds the k where the share
    /// grows); `None` without a kept scheduled read.
    pub fn within_k(&self, k: u64) -> Option<f64> {
        self.pbs_k_staleness
            .iter()
            .take_while(|p| p.k <= k)
            .last()
            .map(|p| p.fraction)
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

/// How one acknowledged write's follow-up ended, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FollowUp {
    /// A read returned the write (or a newer one): the first such read began `lag_ns` after the
    /// acknowledgement; the write took `write_ns` from its start to its acknowledgement; the last
    /// read that returned an older version began `last_stale_ns` after the acknowledgement (`None`:
    /// no read was stale).
    Seen {
        lag_ns: u64,
        write_ns: u64,
        last_stale_ns: Option<u64>,
    },
    /// No read returned it within the horizon.
    NeverSeen,
    /// The phase's end cut the follow-up short.
    Cut,
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

    /// Results written before issue 61 still read: their stale-only lag and window under the
    /// names that now say so, their k-staleness counts (another figure) dropped.
    #[test]
    fn a_result_from_before_issue_61_reads_with_its_figures_renamed() {
        let mut old =
            serde_json::to_value(ProbeTally::new(10.0, 8, &[0.0], 1000.0).result()).unwrap();
        let lag = serde_json::json!({"count": 1, "mean_us": 5.0, "stdev_us": 0.0, "min_us": 5.0,
            "max_us": 5.0, "p50_us": 5.0, "p90_us": 5.0, "p95_us": 5.0, "p99_us": 5.0,
            "p99_9_us": 5.0, "p99_99_us": 5.0, "histogram": ""});
        let o = old.as_object_mut().unwrap();
        for new in [
            "read_after_write_lag_us",
            "stale_write_lag_us",
            "staleness_window_from_write_us",
            "stale_write_window_from_ack_us",
            "pbs_k_staleness",
        ] {
            o.remove(new);
        }
        o.insert("visibility_lag_us".into(), lag.clone());
        o.insert("staleness_window_us".into(), lag);
        o.insert("k_staleness".into(), serde_json::json!({"1": 3}));
        let read: ConsistencyResult = serde_json::from_value(old).unwrap();
        assert_eq!(read.stale_write_lag_us.unwrap().p50_us, 5.0);
        assert_eq!(read.stale_write_window_from_ack_us.unwrap().p50_us, 5.0);
        assert!(read.read_after_write_lag_us.is_none());
        assert!(read.staleness_window_from_write_us.is_none());
        assert!(read.pbs_k_staleness.is_empty());
    }
}
