//! The aggregator: merges workers' interval batches into totals and an interval series.
//! Runs on the coordinating thread, off the hot path.

use std::collections::BTreeMap;
use std::time::Duration;

use scalebench_workload::{FailureClass, Measured, MeasuredNames};

use crate::histogram::{add_into, new_histogram, quantile_us, LatencyHistogram};
use crate::intervals::{
    coarsening_factor, Coarsener, IntervalCounts, RecordedInterval, RecordedIntervals,
};
use crate::recorder::{IntervalBatch, OpHistograms};
use crate::result::{
    Beside, DataSizes, ErrorSummary, IntervalOp, PhaseResult, RecordedOp, RecordedPhase,
    RecordedSchedule, Recording, Series, MAX_ERROR_SAMPLES,
};

#[derive(Debug, Clone)]
struct OpTotals {
    ok: LatencyHistogram,
    intended: Option<LatencyHistogram>,
    failed: [Option<LatencyHistogram>; FailureClass::COUNT],
    failed_by_class: [u64; FailureClass::COUNT],
}

impl OpTotals {
    fn from_first(h: &OpHistograms) -> Self {
        OpTotals {
            ok: new_histogram(),
            intended: h.intended.as_ref().map(|_| new_histogram()),
            failed: Default::default(),
            failed_by_class: [0; FailureClass::COUNT],
        }
    }

    fn add(&mut self, h: &OpHistograms) {
        add_into(&mut self.ok, &h.ok);
        if let (Some(into), Some(from)) = (&mut self.intended, &h.intended) {
            add_into(into, from);
        }
        for (into, from) in self.failed.iter_mut().zip(&h.failed) {
            if let Some(from) = from {
                add_into(into.get_or_insert_with(new_histogram), from);
            }
        }
        for (a, b) in self.failed_by_class.iter_mut().zip(h.failed_by_class) {
            *a += b;
        }
    }

    fn failed_total(&self) -> u64 {
        self.failed_by_class.iter().sum()
    }

    /// Failed-operation latency over all classes.
    fn failed_all(&self) -> LatencyHistogram {
        let mut all = new_histogram();
        for h in self.failed.iter().flatten() {
            add_into(&mut all, h);
        }
        all
    }

    /// What the operation recorded (its issued and late successes are counted apart).
    fn recorded(mut self) -> RecordedOp {
        let failed_latency = Some(self.failed_all());
        let classes = FailureClass::ALL
            .iter()
            .map(|c| (c.index(), c.name().to_string()));
        RecordedOp {
            issued: 0,
            ok: self.ok.len(),
            ok_after_window: 0,
            failed: classes
                .clone()
                .filter(|(i, _)| self.failed_by_class[*i] > 0)
                .map(|(i, name)| (name, self.failed_by_class[i]))
                .collect(),
            failed_latency_by_class: classes
                .filter_map(|(i, name)| Some((name, self.failed[i].take()?)))
                .collect(),
            latency: self.ok,
            intended: self.intended,
            failed_latency,
        }
    }
}

/// What the progress display shows.
#[derive(Debug, Clone, Default)]
pub struct LiveStatus {
    pub ok: u64,
    pub failed: u64,
    pub warmup_ops: u64,
    /// Successful operations per second over the last complete interval.
    pub current_ops_s: f64,
    /// p99 of the last complete interval, all operations, µs.
    pub current_p99_us: f64,
    /// Measured operations in flight (as the workers last reported).
    pub in_flight: u64,
    /// Per operation (READ, UPDATE, ...): counts so far and the last complete interval.
    pub operations: BTreeMap<String, LiveOperation>,
}

/// The quantiles live figures give from the intended start: p50, p90, p99, p99.9.
pub const LIVE_QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// One operation's live figures.
#[derive(Debug, Clone, Default)]
pub struct LiveOperation {
    pub ok: u64,
    /// Open loop: latency from the intended start at [`LIVE_QUANTILES`] in the last complete
    /// interval, µs.
    pub intended_us: Option<[f64; 4]>,
    pub failed_by_class: BTreeMap<String, u64>,
    /// The last complete interval (rate, service-time quantiles, intended p99 in an open loop).
    pub last_interval: Option<IntervalOp>,
}

/// Facts about the phase that execution knows and measurement does not.
#[derive(Debug, Clone)]
pub struct PhaseMeta {
    pub phase: crate::Phase,
    pub measurement_start_unix_ms: u64,
    pub duration: Duration,
    pub ended_by: crate::result::EndedBy,
    pub data: DataSizes,
}

/// Merges workers' batches. Totals keep full histograms; an interval keeps full histograms only until
/// every worker has moved past it, then it is frozen into its summary and compressed histograms and
/// written to the recorded intervals' spool file, so memory stays flat however long the run.
pub struct Aggregator {
    interval: Duration,
    /// The name each measured slot is reported under.
    names: MeasuredNames,
    open_loop: bool,
    totals: BTreeMap<Measured, OpTotals>,
    /// Intervals some worker may still report into.
    pending: BTreeMap<u64, BTreeMap<Measured, OpTotals>>,
    recorded: RecordedIntervals,
    /// Intervals closed since a watcher last took them, all operations together.
    closed: Vec<ClosedInterval>,
    /// Per worker: every interval below this index is complete.
    passed: Vec<u64>,
    errors: BTreeMap<FailureClass, ErrorSummary>,
    start_delay: Option<LatencyHistogram>,
    late: u64,
    issued: [u64; Measured::COUNT],
    ok_after_window: [u64; Measured::COUNT],
    records: u64,
    retries: u64,
    warmup_ops: u64,
    warmup_backlog_dropped: u64,
    /// Rate and p99 (all operations) of the newest frozen interval, for the live display.
    latest: (f64, f64),
    /// The newest complete interval (live metrics).
    latest_interval: Option<BTreeMap<String, IntervalOp>>,
    /// The interval after the last one closed.
    next_index: u64,
    /// Per worker: operations in flight at its last batch.
    in_flight: Vec<u64>,
}

impl Aggregator {
    /// The names a workload file's operations are measured under (without, only the kinds').
    pub fn with_names(mut self, names: MeasuredNames) -> Self {
        self.names = names;
        self
    }

    /// `workers`: how many recorders report (one per worker thread).
    pub fn new(interval: Duration, open_loop: bool, workers: usize) -> Self {
        Aggregator {
            interval,
            names: MeasuredNames::default(),
            open_loop,
            totals: BTreeMap::new(),
            pending: BTreeMap::new(),
            recorded: RecordedIntervals::new(interval),
            closed: Vec::new(),
            passed: vec![0; workers.max(1)],
            errors: BTreeMap::new(),
            start_delay: open_loop.then(new_histogram),
            late: 0,
            issued: [0; Measured::COUNT],
            ok_after_window: [0; Measured::COUNT],
            records: 0,
            retries: 0,
            warmup_ops: 0,
            warmup_backlog_dropped: 0,
            latest: (0.0, 0.0),
            latest_interval: None,
            next_index: 0,
            in_flight: vec![0; workers.max(1)],
        }
    }

    pub fn add(&mut self, batch: IntervalBatch) {
        let slot = self.pending.entry(batch.index).or_default();
        for (kind, h) in &batch.ops {
            self.totals
                .entry(*kind)
                .or_insert_with(|| OpTotals::from_first(h))
                .add(h);
            slot.entry(*kind)
                .or_insert_with(|| OpTotals::from_first(h))
                .add(h);
            for class in FailureClass::ALL {
                let n = h.failed_by_class[class.index()];
                if n > 0 {
                    self.errors.entry(class).or_default().count += n;
                }
            }
        }
        for e in batch.new_errors {
            let summary = self.errors.entry(e.class).or_default();
            if summary.samples.len() < MAX_ERROR_SAMPLES && !summary.samples.contains(&e.message) {
                summary.samples.push(e.message);
            }
        }
        if let (Some(into), Some(from)) = (&mut self.start_delay, &batch.start_delay) {
            add_into(into, from);
        }
        self.late += batch.late;
        for (a, b) in self.ok_after_window.iter_mut().zip(batch.ok_after_window) {
            *a += b;
        }
        if let Some(issued) = batch.issued {
            for (a, b) in self.issued.iter_mut().zip(issued) {
                *a += b;
            }
        }
        self.records += batch.records;
        self.retries += batch.retries;
        self.warmup_ops += batch.warmup_ops;
        self.warmup_backlog_dropped += batch.warmup_backlog_dropped;

        if let Some(n) = self.in_flight.get_mut(batch.worker) {
            *n = batch.in_flight;
        }
        // A worker ships interval i when it has moved past it; its final batch closes everything.
        if let Some(p) = self.passed.get_mut(batch.worker) {
            *p = if batch.issued.is_some() {
                u64::MAX
            } else {
                (*p).max(batch.index + 1)
            };
        }
        let complete_below = self.passed.iter().copied().min().unwrap_or(0);
        // Once every worker has sent its last batch, what is still pending closes as it is: the
        // last of it ended with the phase, part of an interval, and is no current rate.
        let ended = complete_below == u64::MAX;
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() >= complete_below {
                break;
            }
            let (index, ops) = entry.remove_entry();
            let partial = ended && self.pending.is_empty();
            self.freeze(index, ops, !partial);
        }
    }

    /// Closes the intervals before `index` in which nothing completed (a stalled database, a hung
    /// connection): they are intervals of no operations, not missing ones.
    fn close_empty_before(&mut self, index: u64) {
        while self.next_index < index {
            self.closed.push(ClosedInterval {
                index: self.next_index,
                ok: 0,
                failed: 0,
                p99_us: 0.0,
            });
            self.recorded.push(&RecordedInterval {
                index: self.next_index,
                operations: BTreeMap::new(),
            });
            self.next_index += 1;
        }
    }

    /// Closes interval `index`; `current` makes it what the progress display shows.
    fn freeze(&mut self, index: u64, ops: BTreeMap<Measured, OpTotals>, current: bool) {
        self.close_empty_before(index);
        self.next_index = self.next_index.max(index + 1);
        let secs = self.interval.as_secs_f64();
        let mut all = new_histogram();
        for t in ops.values() {
            add_into(&mut all, &t.ok);
        }
        if current {
            self.latest = (all.len() as f64 / secs, quantile_us(&all, 0.99));
        }
        // From the intended start in an open loop (coordinated omission corrected).
        let mut intended = new_histogram();
        for t in ops.values() {
            if let Some(h) = &t.intended {
                add_into(&mut intended, h);
            }
        }
        let p99 = if intended.is_empty() { &all } else { &intended };
        self.closed.push(ClosedInterval {
            index,
            ok: all.len(),
            failed: ops.values().map(OpTotals::failed_total).sum(),
            p99_us: quantile_us(p99, 0.99),
        });
        let frozen = RecordedInterval {
            index,
            operations: ops
                .iter()
                .map(|(k, t)| (self.names.name(*k).to_string(), interval_op(t, secs)))
                .collect(),
        };
        self.recorded.push(&frozen);
        if current {
            self.latest_interval = Some(frozen.operations);
        }
    }

    /// The intervals closed since the last call, all operations together, in the order they closed.
    pub fn take_closed_intervals(&mut self) -> Vec<ClosedInterval> {
        std::mem::take(&mut self.closed)
    }

    pub fn live(&self) -> LiveStatus {
        let last = self.latest_interval.as_ref();
        let operations = self
            .totals
            .iter()
            .map(|(kind, t)| {
                let last_op = last.and_then(|ops| ops.get(self.names.name(*kind)));
                // Open loop: the quantiles from the intended start, from the interval's histogram.
                let intended = last_op
                    .and_then(|o| o.intended_histogram.as_deref())
                    .and_then(|h| crate::decode_histogram(h).ok())
                    .map(|h| LIVE_QUANTILES.map(|q| quantile_us(&h, q)));
                let live = LiveOperation {
                    intended_us: intended,
                    ok: t.ok.len(),
                    failed_by_class: FailureClass::ALL
                        .iter()
                        .filter(|c| t.failed_by_class[c.index()] > 0)
                        .map(|c| (c.name().to_string(), t.failed_by_class[c.index()]))
                        .collect(),
                    last_interval: last_op.map(|o| IntervalOp {
                        // The figures, not the encoded histograms.
                        histogram: None,
                        intended_histogram: None,
                        ..o.clone()
                    }),
                };
                (self.names.name(*kind).to_string(), live)
            })
            .collect();
        LiveStatus {
            ok: self.totals.values().map(|t| t.ok.len()).sum(),
            failed: self.totals.values().map(OpTotals::failed_total).sum(),
            warmup_ops: self.warmup_ops,
            current_ops_s: self.latest.0,
            current_p99_us: self.latest.1,
            in_flight: self.in_flight.iter().sum(),
            operations,
        }
    }

    /// What the phase recorded, by operation name: the totals' histograms move into it.
    fn recording(&mut self) -> Recording {
        let mut operations = BTreeMap::new();
        let mut in_flight_at_stop = 0u64;
        for kind in (0..Measured::COUNT).map(Measured::from_index) {
            let issued = self.issued[kind.index()];
            let t = self.totals.remove(&kind);
            if issued == 0 && t.is_none() {
                continue;
            }
            let mut op = match t {
                Some(t) => t.recorded(),
                None => RecordedOp::empty(),
            };
            op.issued = issued;
            op.ok_after_window = self.ok_after_window[kind.index()].min(op.ok);
            let failed: u64 = op.failed.values().sum();
            in_flight_at_stop += issued.saturating_sub(op.ok + failed);
            operations.insert(self.names.name(kind).to_string(), op);
        }
        Recording {
            operations,
            in_flight_at_stop,
            records: self.records,
            retries: self.retries,
            warmup_operations: self.warmup_ops,
            errors: std::mem::take(&mut self.errors)
                .into_iter()
                .map(|(c, s)| (c.name().to_string(), s))
                .collect(),
            schedule: self.start_delay.take().map(|h| RecordedSchedule {
                late_operations: self.late,
                late_threshold_us: 1000.0,
                warmup_backlog_dropped: self.warmup_backlog_dropped,
                start_delay: Some(h),
                arrivals_ended_s: None,
            }),
        }
    }

    /// The phase's result, its intervals read back from the spool (merged by histogram beyond
    /// [`crate::intervals::MAX_RESULT_INTERVALS`]), and the intervals at their recorded length.
    pub fn finish(mut self, meta: PhaseMeta) -> Result<(PhaseResult, RecordedIntervals), String> {
        for (index, ops) in std::mem::take(&mut self.pending) {
            self.freeze(index, ops, false);
        }
        let recording = self.recording();
        let interval_s = self.interval.as_secs_f64();
        let duration_s = meta.duration.as_secs_f64();
        let slots = (duration_s / interval_s).ceil() as u64;
        // Nothing completed at the end of the window either: those intervals are empty too.
        self.close_empty_before(slots);
        let factor = coarsening_factor(slots);
        let mut coarsener = Coarsener::new(interval_s, factor, duration_s);
        self.recorded.for_each(|iv| coarsener.push(iv))?;
        let intervals = coarsener.finish();

        let recorded = RecordedPhase {
            phase: meta.phase,
            open_loop: self.open_loop,
            measurement_start_unix_ms: meta.measurement_start_unix_ms,
            duration_s,
            ended_by: meta.ended_by,
            clients: 1,
            data: meta.data,
            recording,
            series: Series {
                interval_s: interval_s * factor as f64,
                recorded_interval_s: (factor > 1).then_some(interval_s),
                intervals,
            },
        };
        let result = PhaseResult::assemble(recorded, Beside::default());
        Ok((result, self.recorded))
    }
}

/// One closed interval of a running phase, all operations together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClosedInterval {
    /// Interval number from the measurement start.
    pub index: u64,
    pub ok: u64,
    pub failed: u64,
    /// p99 of successful operations, from the intended start in an open loop, microseconds.
    pub p99_us: f64,
}

fn interval_op(t: &OpTotals, covered_s: f64) -> IntervalOp {
    let counts = IntervalCounts {
        ok: t.ok.len(),
        failed: t.failed_total(),
        failed_by_class: FailureClass::ALL
            .iter()
            .filter(|c| t.failed_by_class[c.index()] > 0)
            .map(|c| (c.name().to_string(), t.failed_by_class[c.index()]))
            .collect(),
        ops_s: t.ok.len() as f64 / covered_s,
    };
    counts.with_latency(Some(&t.ok), t.intended.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::EndedBy;
    use crate::Recorder;
    use scalebench_workload::{OpError, OpKind};

    /// A recorder of worker 0 at 1 s intervals, and where its batches go.
    fn recorder() -> (Recorder, std::sync::mpsc::Receiver<IntervalBatch>) {
        let (tx, rx) = std::sync::mpsc::channel();
        (Recorder::new(0, 0, Duration::from_secs(1), false, tx), rx)
    }

    /// What `r` recorded, finished and aggregated at its 1 s intervals.
    fn aggregated(r: Recorder, rx: &std::sync::mpsc::Receiver<IntervalBatch>) -> Aggregator {
        r.finish();
        let mut agg = Aggregator::new(Duration::from_secs(1), false, 1);
        for b in rx.try_iter() {
            agg.add(b);
        }
        agg
    }

    /// The phase's result: its window `duration` long, ended by `ended_by`.
    fn result_of(
        agg: Aggregator,
        phase: crate::Phase,
        duration: Duration,
        ended_by: EndedBy,
    ) -> PhaseResult {
        let meta = PhaseMeta {
            phase,
            measurement_start_unix_ms: 0,
            duration,
            ended_by,
            data: DataSizes::default(),
        };
        agg.finish(meta).unwrap().0
    }

    #[test]
    fn every_operation_is_accounted_and_failures_stay_out_of_success_latency() {
        let (mut r, rx) = recorder();
        let ms = |n: u64| n * 1_000_000;
        for i in 0..10 {
            r.issue(OpKind::Read);
            r.record(OpKind::Read, ms(i), ms(i), ms(i + 1), Ok(()));
        }
        let err = OpError::new(FailureClass::Timeout, "deadline");
        r.issue(OpKind::Read);
        r.record(OpKind::Read, ms(1500), ms(1500), ms(1900), Err(&err));
        r.issue(OpKind::Update); // still in flight at the end
        let agg = aggregated(r, &rx);
        let res = result_of(
            agg,
            crate::Phase::Run,
            Duration::from_secs(2),
            EndedBy::Duration,
        );
        let read = &res.operations["READ"];
        assert_eq!((read.issued, read.ok, read.failed["timeout"]), (11, 10, 1));
        assert_eq!(read.latency.as_ref().unwrap().max_us.round(), 1000.0);
        assert!(read.failed_latency.as_ref().unwrap().min_us >= 399_000.0);
        assert_eq!(read.failed_latency_by_class["timeout"].count, 1);
        assert!(!read.failed_latency_by_class.contains_key("not_found"));
        assert_eq!(res.totals.in_flight_at_stop, 1);
        assert_eq!(
            res.totals.issued,
            res.totals.ok + res.totals.failed + res.totals.in_flight_at_stop
        );
        assert_eq!(res.totals.throughput_ops_s, 5.0);
        assert_eq!(res.errors["timeout"].samples, vec!["deadline".to_string()]);
        assert_eq!(res.intervals.len(), 2);
        assert_eq!(res.intervals[0].operations["READ"].ok, 10);
        assert_eq!(res.intervals[1].operations["READ"].failed, 1);
    }

    /// The status line shows the last complete interval: the partial one the phase ended in (one
    /// operation in its first 100 ms) is no current rate of "1 ops/s".
    #[test]
    fn the_current_rate_is_never_the_partial_interval_at_the_end() {
        let (mut r, rx) = recorder();
        let ms = |n: u64| n * 1_000_000;
        for i in 0..100 {
            r.issue(OpKind::Read);
            r.record(OpKind::Read, ms(i * 10), ms(i * 10), ms(i * 10 + 1), Ok(()));
        }
        r.issue(OpKind::Read);
        r.record(OpKind::Read, ms(1100), ms(1100), ms(1101), Ok(()));
        let agg = aggregated(r, &rx);
        let live = agg.live();
        assert_eq!(live.ok, 101);
        assert_eq!(live.current_ops_s, 100.0);
    }

    /// A stall (nothing completes for a while) is intervals of zero operations in the series, also
    /// at the end of the window, never a gap the charts and stability checks would skip over.
    #[test]
    fn intervals_without_completions_are_empty_not_missing() {
        let (mut r, rx) = recorder();
        let ms = |n: u64| n * 1_000_000;
        for at in [100, 3100] {
            r.issue(OpKind::Read);
            r.record(OpKind::Read, ms(at), ms(at), ms(at + 1), Ok(()));
        }
        let mut agg = aggregated(r, &rx);
        let closed: Vec<(u64, u64)> = agg
            .take_closed_intervals()
            .iter()
            .map(|c| (c.index, c.ok))
            .collect();
        assert_eq!(closed[..3], [(0, 1), (1, 0), (2, 0)]);
        let res = result_of(
            agg,
            crate::Phase::Run,
            Duration::from_secs(6),
            EndedBy::Duration,
        );
        let series: Vec<(f64, u64)> = res
            .intervals
            .iter()
            .map(|i| (i.start_s, i.operations.get("READ").map_or(0, |o| o.ok)))
            .collect();
        assert_eq!(
            series,
            [(0.0, 1), (1.0, 0), (2.0, 0), (3.0, 1), (4.0, 0), (5.0, 0)]
        );
        assert!(res.intervals[1].operations.is_empty());
    }

    /// A phase without measurable duration (everything done within the clock's resolution) is written
    /// with rate 0: JSON has no infinity, and the tool must read its own files back.
    #[test]
    fn a_phase_without_duration_has_a_finite_rate_and_reads_back() {
        let (mut r, rx) = recorder();
        r.issue(OpKind::Insert);
        r.record(OpKind::Insert, 0, 0, 0, Ok(()));
        let agg = aggregated(r, &rx);
        let res = result_of(agg, crate::Phase::Load, Duration::ZERO, EndedBy::Completed);
        assert_eq!(res.totals.throughput_ops_s, 0.0);
        assert_eq!(res.operations["INSERT"].throughput_ops_s, 0.0);
        let text = serde_json::to_string(&res).unwrap();
        let back: PhaseResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back.totals.ok, 1);
    }
}
