//! The probe's running counts, turned into a [`ConsistencyResult`] when it ends.

use std::collections::BTreeMap;

use super::{ConsistencyResult, FollowUp, GuaranteeCount, KStaleness, LiveProbe, VisibilityPoint};
use crate::histogram::{new_histogram, LatencyHistogram, LatencySummary};

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
    /// Scheduled reads that kept their delay, by versions behind the newest acknowledged when they
    /// began (0: the newest): PBS's k-staleness.
    behind: BTreeMap<u64, u64>,
    /// Over every seen write: YCSB++'s lag, Bermbach & Tai's window.
    lag: LatencyHistogram,
    window_from_write: LatencyHistogram,
    /// Over the writes with a stale read: the lag, and the window from the acknowledgement.
    stale_lag: LatencyHistogram,
    stale_window_from_ack: LatencyHistogram,
    followed: u64,
    stale_writes: u64,
    cut: u64,
    never_seen: u64,
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
            behind: BTreeMap::new(),
            lag: new_histogram(),
            window_from_write: new_histogram(),
            stale_lag: new_histogram(),
            stale_window_from_ack: new_histogram(),
            followed: 0,
            stale_writes: 0,
            cut: 0,
            never_seen: 0,
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
        }
    }

    /// A scheduled read that kept its delay returned version `read` when `newest` was the newest
    /// acknowledged version of its key at its start: PBS's k-staleness counts it.
    pub fn scheduled_read(&mut self, read: u64, newest: u64) {
        *self.behind.entry(newest.saturating_sub(read)).or_default() += 1;
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
            FollowUp::Seen {
                lag_ns,
                write_ns,
                last_stale_ns,
            } => {
                let _ = self.lag.record(lag_ns);
                // Bermbach & Tai: from the write's start to its last stale read; none: 0.
                let _ = self
                    .window_from_write
                    .record(last_stale_ns.map_or(0, |s| write_ns + s));
                if let Some(stale) = last_stale_ns {
                    self.stale_writes += 1;
                    let _ = self.stale_lag.record(lag_ns);
                    let _ = self.stale_window_from_ack.record(stale);
                }
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
            read_after_write_lag_us: LatencySummary::from_histogram(&self.lag),
            stale_write_lag_us: LatencySummary::from_histogram(&self.stale_lag),
            staleness_window_from_write_us: LatencySummary::from_histogram(&self.window_from_write),
            stale_write_window_from_ack_us: LatencySummary::from_histogram(
                &self.stale_window_from_ack,
            ),
            never_seen: self.never_seen,
            never_seen_fraction: if self.followed == 0 {
                0.0
            } else {
                self.never_seen as f64 / self.followed as f64
            },
            horizon_ms: self.horizon_ms,
            pbs_k_staleness: KStaleness::curve(&self.behind),
            read_your_writes: self.read_your_writes,
            monotonic_reads: self.monotonic_reads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consistency::DEFAULT_DELAYS_MS;

    #[test]
    fn stale_reads_count_all_reads_and_k_staleness_only_the_scheduled_ones() {
        let mut t = ProbeTally::new(10.0, 4, &DEFAULT_DELAYS_MS, 1000.0);
        t.read(5, 5);
        t.scheduled_read(5, 5);
        t.scheduled(0, true);
        t.read(3, 5); // two behind
        t.scheduled_read(3, 5);
        t.scheduled(2, false);
        t.read(4, 5); // one behind
        t.scheduled_read(4, 5);
        t.scheduled(2, false);
        t.read(2, 5); // a chasing read three behind: a stale read, not in k-staleness
        t.missed(8);
        let r = t.result();
        assert_eq!((r.probe_reads, r.stale_reads), (4, 3));
        let ks: Vec<(u64, u64, u64)> = r
            .pbs_k_staleness
            .iter()
            .map(|p| (p.k, p.within, p.reads))
            .collect();
        assert_eq!(ks, [(1, 1, 3), (2, 2, 3), (3, 3, 3)]);
        assert_eq!(r.within_k(1), Some(1.0 / 3.0));
        assert_eq!(r.within_k(7), Some(1.0));
        let at = |d: f64| r.t_visibility.iter().find(|p| p.delay_ms == d).unwrap();
        assert_eq!((at(0.0).samples, at(0.0).consistent_fraction), (1, 1.0));
        assert_eq!((at(0.5).samples, at(0.5).consistent_fraction), (2, 0.0));
        assert_eq!((at(100.0).samples, at(100.0).missed), (0, 1));
        assert_eq!(r.missed_reads(), 1);
        // Four keys at 10 writes/s: each rewritten every 400 ms.
        assert_eq!(r.rewrite_period_ms, 400.0);
        // The stale share is the first delay's: 0 of 1, not the 3 of 4 reads pooled.
        let s = r.stale_share().unwrap();
        assert_eq!((s.reads, s.stale, s.fraction), (1, 0, 0.0));
    }

    /// Synthetic timelines with the truth known, in ns: YCSB++'s lag over every write, Bermbach &
    /// Tai's window from the write's start, and the stale-only figures beside them.
    #[test]
    fn lags_and_windows_of_known_timelines() {
        let mut t = ProbeTally::new(10.0, 4, &[0.0], 1000.0);
        // Four writes taking 2 ms each, that every read saw: the first read 5 us after the
        // acknowledgement.
        for _ in 0..4 {
            t.followed(FollowUp::Seen {
                lag_ns: 5_000,
                write_ns: 2_000_000,
                last_stale_ns: None,
            });
        }
        let r = t.result();
        assert_eq!((r.followed_writes, r.stale_writes), (4, 0));
        let lag = r.read_after_write_lag_us.unwrap();
        let window = r.staleness_window_from_write_us.unwrap();
        assert_eq!((lag.count, window.count), (4, 4));
        assert!((lag.max_us - 5.0).abs() < 0.01, "{lag:?}");
        // No stale read: a window of exactly 0.
        assert_eq!((window.min_us, window.max_us), (0.0, 0.0));
        assert!(r.stale_write_lag_us.is_none() && r.stale_write_window_from_ack_us.is_none());

        // A fifth write seen 3 ms after its acknowledgement, its last stale read 2.5 ms after it:
        // a window of 4.5 ms from the write's start, 2.5 ms from the acknowledgement.
        t.followed(FollowUp::Seen {
            lag_ns: 3_000_000,
            write_ns: 2_000_000,
            last_stale_ns: Some(2_500_000),
        });
        t.followed(FollowUp::NeverSeen);
        t.followed(FollowUp::Cut);
        let r = t.result();
        assert_eq!((r.followed_writes, r.stale_writes, r.cut_writes), (6, 1, 1));
        assert_eq!(r.never_seen, 1);
        assert!((r.never_seen_fraction - 1.0 / 6.0).abs() < 1e-12);
        let lag = r.read_after_write_lag_us.unwrap();
        let window = r.staleness_window_from_write_us.unwrap();
        // Over the five seen writes: the median lag is a fresh write's 5 us, the stale write's
        // 3 ms the largest.
        assert_eq!((lag.count, window.count), (5, 5));
        assert!((lag.p50_us - 5.0).abs() < 0.01, "{lag:?}");
        assert!((lag.max_us - 3_000.0).abs() < 3.0, "{lag:?}");
        assert_eq!(window.p50_us, 0.0);
        assert!((window.max_us - 4_500.0).abs() < 5.0, "{window:?}");
        let stale_lag = r.stale_write_lag_us.unwrap();
        let stale_window = r.stale_write_window_from_ack_us.unwrap();
        assert_eq!((stale_lag.count, stale_window.count), (1, 1));
        assert!((stale_lag.p50_us - 3_000.0).abs() < 3.0, "{stale_lag:?}");
        assert!(
            (stale_window.p50_us - 2_500.0).abs() < 3.0,
            "{stale_window:?}"
        );
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
}
