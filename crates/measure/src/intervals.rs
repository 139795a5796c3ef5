//! A phase's interval series: recorded at full resolution into a spool file as intervals close, so
//! memory stays flat however long the run (a day-long soak run records 86,400 one-second intervals),
//! and read back at the end into at most [`MAX_RESULT_INTERVALS`] intervals for the result, neighbours
//! merged by histogram when there are more. The full resolution stays available for HDR interval logs.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::histogram::{
    add_into, decode_histogram, encode_histogram, new_histogram, quantile_us, LatencyHistogram,
};
use crate::result::{IntervalOp, IntervalResult};

/// The most intervals a phase result keeps: a run of up to 10 minutes keeps one-second intervals; a
/// longer one gets intervals of 2, 4, 8, ... times the recorded length, so a result stays at about
/// 7-15 MB whatever the duration (docs/benchmarks.md, section 3).
pub const MAX_RESULT_INTERVALS: u64 = 600;

/// One closed interval as recorded: its number from the measurement start, per operation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordedInterval {
    pub index: u64,
    pub operations: BTreeMap<String, IntervalOp>,
}

/// Where the closed intervals of a running phase go: an anonymous temporary file (gone with the
/// process, whatever way it ends); memory only when no temporary file can be written.
#[derive(Debug)]
pub struct RecordedIntervals {
    interval: Duration,
    spool: Option<BufWriter<File>>,
    /// Intervals that could not go to the file (no temporary directory, or it filled up).
    in_memory: Vec<RecordedInterval>,
}

impl RecordedIntervals {
    pub fn new(interval: Duration) -> Self {
        RecordedIntervals {
            interval,
            spool: tempfile::tempfile().ok().map(BufWriter::new),
            in_memory: Vec::new(),
        }
    }

    /// The length the intervals were recorded at.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn push(&mut self, interval: &RecordedInterval) {
        if let Some(spool) = &mut self.spool {
            let line = serde_json::to_vec(interval).expect("an interval serializes");
            let written = spool.write_all(&line).and_then(|()| spool.write_all(b"\n"));
            if written.is_ok() {
                return;
            }
            // A cut line does not parse when read back; this interval and the rest stay in memory.
            self.spool = None;
        }
        self.in_memory.push(interval.clone());
    }

    /// Calls `f` with every recorded interval, in the order they were recorded. Can be called again.
    pub fn for_each(
        &mut self,
        mut f: impl FnMut(RecordedInterval) -> Result<(), String>,
    ) -> Result<(), String> {
        if let Some(spool) = &mut self.spool {
            let io = |e: std::io::Error| format!("reading the recorded intervals back: {e}");
            spool.flush().map_err(io)?;
            let mut file = spool.get_ref().try_clone().map_err(io)?;
            file.seek(SeekFrom::Start(0)).map_err(io)?;
            for line in BufReader::new(&file).lines() {
                let line = line.map_err(io)?;
                // Only the line cut by a failed write does not parse: that interval is in memory.
                if let Ok(interval) = serde_json::from_str(&line) {
                    f(interval)?;
                }
            }
            file.seek(SeekFrom::End(0)).map_err(io)?;
        }
        for interval in &self.in_memory {
            f(interval.clone())?;
        }
        Ok(())
    }
}

/// The sum of several intervals of one operation (neighbours in time, or several clients' same
/// interval): counts add, histograms add, quantiles come from the summed histograms.
#[derive(Debug, Default)]
pub struct IntervalSum {
    ok: u64,
    failed: u64,
    failed_by_class: BTreeMap<String, u64>,
    ops_s: f64,
    histogram: Option<LatencyHistogram>,
    intended: Option<LatencyHistogram>,
}

impl IntervalSum {
    pub fn add(&mut self, o: &IntervalOp) -> Result<(), String> {
        self.ok += o.ok;
        self.failed += o.failed;
        for (class, n) in &o.failed_by_class {
            *self.failed_by_class.entry(class.clone()).or_default() += n;
        }
        self.ops_s += o.ops_s;
        for (into, from) in [
            (&mut self.histogram, &o.histogram),
            (&mut self.intended, &o.intended_histogram),
        ] {
            if let Some(encoded) = from {
                add_into(
                    into.get_or_insert_with(new_histogram),
                    &decode_histogram(encoded)?,
                );
            }
        }
        Ok(())
    }

    /// Successful operations summed so far.
    pub fn ok(&self) -> u64 {
        self.ok
    }

    /// The summed interval with rate `ops_s` (`None`: the sum of the added rates, as for clients
    /// running side by side).
    pub fn finish(self, ops_s: Option<f64>) -> IntervalOp {
        let counts = IntervalCounts {
            ok: self.ok,
            failed: self.failed,
            failed_by_class: self.failed_by_class,
            ops_s: ops_s.unwrap_or(self.ops_s),
        };
        counts.with_latency(self.histogram.as_ref(), self.intended.as_ref())
    }
}

/// What an interval of one operation counted, before its latency figures.
pub(crate) struct IntervalCounts {
    pub(crate) ok: u64,
    pub(crate) failed: u64,
    pub(crate) failed_by_class: BTreeMap<String, u64>,
    pub(crate) ops_s: f64,
}

impl IntervalCounts {
    /// The interval's figures from its counts and its histograms of successful operations
    /// (`histogram`, from the start; `intended`, from the intended start): the one derivation
    /// for an interval as measured and for a sum of intervals (neighbours coarsened, clients
    /// merged). An empty histogram is none: its quantiles 0, nothing encoded.
    pub(crate) fn with_latency(
        self,
        histogram: Option<&LatencyHistogram>,
        intended: Option<&LatencyHistogram>,
    ) -> IntervalOp {
        let histogram = histogram.filter(|h| !h.is_empty());
        let intended = intended.filter(|h| !h.is_empty());
        let q = |p: f64| histogram.map_or(0.0, |h| quantile_us(h, p));
        IntervalOp {
            ok: self.ok,
            failed: self.failed,
            ops_s: self.ops_s,
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            p99_9_us: q(0.999),
            max_us: histogram.map_or(0.0, |h| h.max() as f64 / 1000.0),
            histogram: histogram.map(encode_histogram),
            intended_p99_us: intended.map(|h| quantile_us(h, 0.99)),
            intended_histogram: intended.map(encode_histogram),
            failed_by_class: self.failed_by_class,
        }
    }
}

/// The smallest power of two that brings `slots` intervals down to at most [`MAX_RESULT_INTERVALS`].
pub fn coarsening_factor(slots: u64) -> u64 {
    let mut factor = 1;
    while slots.div_ceil(factor) > MAX_RESULT_INTERVALS {
        factor *= 2;
    }
    factor
}

/// Builds a phase's result intervals from intervals of `interval_s` numbered from the measurement
/// start, pushed in increasing order: every `factor` neighbours become one, each rate over the time
/// its interval covered of the `duration_s` window (the last one may be partial). Intervals that
/// begin at or after the window's end (completions in the grace period) are left out.
pub struct Coarsener {
    interval_s: f64,
    factor: u64,
    duration_s: f64,
    out: Vec<IntervalResult>,
    current: Option<(u64, BTreeMap<String, IntervalSum>)>,
}

impl Coarsener {
    pub fn new(interval_s: f64, factor: u64, duration_s: f64) -> Self {
        Coarsener {
            interval_s,
            factor: factor.max(1),
            duration_s,
            out: Vec::new(),
            current: None,
        }
    }

    fn length(&self) -> f64 {
        self.interval_s * self.factor as f64
    }

    /// The time interval `bucket` covered of the window.
    fn covered(&self, bucket: u64) -> f64 {
        let start = bucket as f64 * self.length();
        (self.duration_s - start).clamp(f64::MIN_POSITIVE, self.length())
    }

    pub fn push(&mut self, iv: RecordedInterval) -> Result<(), String> {
        if iv.index as f64 * self.interval_s >= self.duration_s {
            return Ok(());
        }
        let bucket = iv.index / self.factor;
        if self.factor == 1 {
            // Nothing to merge: the recorded figures as they are, the rate over the covered time.
            let covered = self.covered(bucket);
            let mut operations = iv.operations;
            for o in operations.values_mut() {
                o.ops_s = o.ok as f64 / covered;
            }
            self.out.push(IntervalResult {
                start_s: bucket as f64 * self.length(),
                operations,
            });
            return Ok(());
        }
        if self.current.as_ref().is_none_or(|(b, _)| *b != bucket) {
            self.close_current();
            self.current = Some((bucket, BTreeMap::new()));
        }
        let sums = &mut self.current.as_mut().expect("just set").1;
        for (op, o) in &iv.operations {
            sums.entry(op.clone()).or_default().add(o)?;
        }
        Ok(())
    }

    fn close_current(&mut self) {
        if let Some((bucket, sums)) = self.current.take() {
            let covered = self.covered(bucket);
            self.out.push(IntervalResult {
                start_s: bucket as f64 * self.length(),
                operations: sums
                    .into_iter()
                    .map(|(op, sum)| {
                        let rate = sum.ok() as f64 / covered;
                        (op, sum.finish(Some(rate)))
                    })
                    .collect(),
            });
        }
    }

    pub fn finish(mut self) -> Vec<IntervalResult> {
        self.close_current();
        self.out
    }
}

/// A result's intervals (of `interval_s`) merged `factor` at a time, e.g. to merge with a client
/// whose longer run kept coarser intervals.
pub fn coarsen_result_intervals(
    intervals: &[IntervalResult],
    interval_s: f64,
    factor: u64,
    duration_s: f64,
) -> Result<Vec<IntervalResult>, String> {
    let mut c = Coarsener::new(interval_s, factor, duration_s);
    for iv in intervals {
        c.push(RecordedInterval {
            index: (iv.start_s / interval_s).round() as u64,
            operations: iv.operations.clone(),
        })?;
    }
    Ok(c.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(ok: u64, latency_ns: u64) -> IntervalOp {
        let mut h = new_histogram();
        h.record_n(latency_ns, ok).unwrap();
        IntervalOp {
            ok,
            failed: 1,
            failed_by_class: BTreeMap::from([("timeout".to_string(), 1)]),
            ops_s: ok as f64,
            histogram: Some(encode_histogram(&h)),
            ..Default::default()
        }
    }

    fn recorded(n: u64) -> RecordedIntervals {
        let mut r = RecordedIntervals::new(Duration::from_secs(1));
        for i in 0..n {
            r.push(&RecordedInterval {
                index: i,
                operations: BTreeMap::from([("READ".to_string(), op(10 + i, 1000 * (i + 1)))]),
            });
        }
        r
    }

    #[test]
    fn recorded_intervals_read_back_from_the_spool_in_order_and_again() {
        let mut r = recorded(5);
        assert!(r.spool.is_some(), "a temporary file holds the intervals");
        assert!(r.in_memory.is_empty());
        for _ in 0..2 {
            let mut seen = Vec::new();
            r.for_each(|iv| {
                seen.push((iv.index, iv.operations["READ"].ok));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, (0..5).map(|i| (i, 10 + i)).collect::<Vec<_>>());
        }
        // Recording goes on after a read.
        r.push(&RecordedInterval {
            index: 5,
            operations: BTreeMap::new(),
        });
        let mut n = 0;
        r.for_each(|_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 6);
    }

    #[test]
    fn more_intervals_than_a_result_keeps_are_merged_by_histogram() {
        assert_eq!(coarsening_factor(600), 1);
        assert_eq!(coarsening_factor(601), 2);
        assert_eq!(coarsening_factor(86_400), 256);
        let mut r = recorded(5);
        // 5 intervals of 1 s, the window 4.5 s long, 2 at a time: [0,1], [2,3], [4] (half covered).
        let coarsen = |r: &mut RecordedIntervals, factor, duration_s| {
            let mut c = Coarsener::new(1.0, factor, duration_s);
            r.for_each(|iv| c.push(iv)).unwrap();
            c.finish()
        };
        let out = coarsen(&mut r, 2, 4.5);
        assert_eq!(
            out.iter().map(|iv| iv.start_s).collect::<Vec<_>>(),
            [0.0, 2.0, 4.0]
        );
        let first = &out[0].operations["READ"];
        assert_eq!((first.ok, first.failed), (21, 2));
        assert_eq!(first.failed_by_class["timeout"], 2);
        assert_eq!(first.ops_s, 10.5);
        // Quantiles from the summed histogram: 10 at 1 µs, 11 at 2 µs.
        assert!((first.p50_us - 2.0).abs() < 0.01, "{}", first.p50_us);
        assert!((first.max_us - 2.0).abs() < 0.01);
        let last = &out[2].operations["READ"];
        assert_eq!((last.ok, last.ops_s), (14, 28.0));
        // Factor 1 keeps what was recorded; an interval starting after the window is left out.
        let kept = coarsen(&mut r, 1, 4.0);
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[3].operations["READ"].ok, 13);
    }
}
